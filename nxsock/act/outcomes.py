"""What one act on the disk came to: done, refused (the disk was not as the plan found it), or failed.

The acting functions (:mod:`nxsock.act.acting`) return these values; ``doctor --fix``
(:mod:`nxsock.audit.repair`) reports them as each step's outcome and reason.
"""

from __future__ import annotations

import typing as t
from dataclasses import dataclass

__all__ = ["DONE", "Acted", "Done", "Failed", "Refused"]


@dataclass(frozen=True)
class Done:
    """The change was made, or was already there (what the step wanted)."""


@dataclass(frozen=True)
class Refused:
    """Not attempted: what the disk shows now is not what the step may act on (a link, another user's entry)."""

    reason: str


@dataclass(frozen=True)
class Failed:
    """Attempted, and the system said no, or the change did not hold."""

    reason: str


DONE = Done()

#: The outcome of one act.
Acted: t.TypeAlias = Done | Refused | Failed
