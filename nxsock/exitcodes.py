"""nxsock's exit codes: one table for every command, after ``sysexits.h`` (docs/behaviour.md#exit-codes)."""

from __future__ import annotations

__all__ = [
    "CANTCREAT",
    "CONFIG",
    "INTERRUPTED",
    "IOERR",
    "NOPERM",
    "OK",
    "PROBLEM",
    "SOFTWARE",
    "USAGE",
    "OutputFailed",
]

#: Done; safe; no problem found.
OK = 0
#: A check found a problem.
PROBLEM = 1
#: The command line was wrong (click's own code).
USAGE = 2
#: An internal error: a bug in nxsock.
SOFTWARE = 70
#: Nx could not establish any socket directory, or ``provision`` could not create.
CANTCREAT = 73
#: Standard output is closed, or refused a write (a full disk, ``/dev/full``, EIO); what was written is incomplete.
IOERR = 74
#: A privilege is missing (root).
NOPERM = 77
#: Configuration Nx refuses.
CONFIG = 78
#: Stopped by Ctrl-C (128 + SIGINT, as shells report it); what was done before is reported.
INTERRUPTED = 130


class OutputFailed(Exception):
    """Standard output refused a write (ENOSPC, EIO, …): the entry point ends with :data:`IOERR`.

    Not an :class:`OSError`, so no handler of a file's errors takes it for one; a reader gone (EPIPE) stays
    :class:`BrokenPipeError`.
    """

    def __init__(self, errno: int) -> None:
        super().__init__(errno)
        self.errno = errno

    def __str__(self) -> str:
        import errno as errnos
        import os

        name = errnos.errorcode.get(self.errno, "EIO")
        return f"cannot write to standard output ({name}: {os.strerror(self.errno).lower()}); nothing more was written."
