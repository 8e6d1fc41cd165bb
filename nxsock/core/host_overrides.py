"""What the command line says in place of this host: one frozen value, from the options to the snapshot.

A pure value module (typing only), so the click-free fast path and the
snapshot both take it without loading anything else.
"""

# No ``from __future__ import annotations`` here: typing compiles each string annotation of a NamedTuple
# field when the class is made, and this module is imported by every ``paths --json``.
import typing as t

__all__ = ["LAYOUTS", "PLATFORMS", "UID_MAX", "HostOverrides", "Layout", "Platform"]

Platform = t.Literal["linux", "darwin", "win32"]
Layout = t.Literal["current", "legacy"]

PLATFORMS: tuple[Platform, ...] = ("linux", "darwin", "win32")
LAYOUTS: tuple[Layout, ...] = ("current", "legacy")
UID_MAX = 2**32 - 2  # (uid_t)-1 is "no uid"


class HostOverrides(t.NamedTuple):
    """What the command line says in place of this host; ``None`` everywhere means: read the host."""

    workspace: str | None = None
    platform: Platform | None = None
    uid: int | None = None
    home: str | None = None
    tmpdir: str | None = None
    username: str | None = None
    nx_version: str | None = None
    layout: Layout | None = None
