"""Whether a process a record names can still serve: alive, a zombie, gone, or not knowable from here.

``kill(pid, 0)`` succeeds on a zombie — a daemon killed under a pid 1 that does
not reap (a container without ``--init``) — although nothing listens any more,
so the process state is read from ``/proc/<pid>/stat`` too.  A pid that is
not in this pid namespace is "gone" from here even when its daemon lives on
in another container: callers that would remove something on that verdict ask
the socket as well (:mod:`nxsock.act.cleanup`).
"""

from __future__ import annotations

import os
import typing as t

__all__ = ["Liveness", "process_liveness", "state_of_stat_line"]

#: ``alive``: a process that runs or sleeps; ``zombie``: exited, not yet reaped (``Z``) or being reaped (``X``);
#: ``gone``: no such pid here; ``unknown``: the kernel would not say.
Liveness = t.Literal["alive", "zombie", "gone", "unknown"]


def state_of_stat_line(line: str) -> str | None:
    """The one-letter state of a ``/proc/<pid>/stat`` line, read after the last ``)`` (a name may hold one).

    >>> state_of_stat_line("42 (node (x)) Z 1 42 42 0 -1")
    'Z'
    >>> state_of_stat_line("garbage") is None
    True
    """
    _, paren, rest = line.rpartition(")")
    fields = rest.split()
    return fields[0] if paren and fields else None


def process_liveness(pid: int, proc: str = "/proc") -> Liveness:
    """What the process *pid* is, as this pid namespace sees it."""
    if pid <= 0:
        return "gone"
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return "gone"
    except PermissionError:
        pass  # it exists; another user's
    except (OSError, OverflowError):
        return "unknown"
    try:
        with open(f"{proc}/{pid}/stat", encoding="utf-8", errors="replace") as stat_file:
            state = state_of_stat_line(stat_file.read(4096))
    except FileNotFoundError:
        return "gone"  # exited and reaped between the two looks
    except OSError:
        return "alive"
    return "zombie" if state in ("Z", "X", "x") else "alive"
