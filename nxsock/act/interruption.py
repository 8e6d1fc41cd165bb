"""Ctrl-C while nxsock removes things: finish the entry at hand, stop, and say what was done.

:func:`between_entries` holds ``SIGINT`` off while it is active: a Ctrl-C
only marks the walk as asked to stop, and the walk calls
:meth:`StopRequest.check` between entries, which raises :class:`Interrupted`
there.  No entry is left half-examined, and the command can still report
every removal made before it stopped.  Outside such a walk a Ctrl-C is an
ordinary ``KeyboardInterrupt``, which the entry point turns into exit 130.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import typing as t

__all__ = ["HELD_SIGNALS", "Interrupted", "StopRequest", "between_entries", "signals_held"]

#: What :func:`signals_held` defers: a Ctrl-C, a ``kill``, a closed terminal, a Ctrl-\\.  (``SIGKILL`` cannot be.)
HELD_SIGNALS = frozenset({signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT})


class Interrupted(KeyboardInterrupt):
    """Raised between entries once a Ctrl-C asked the walk to stop."""


class StopRequest:
    """Whether a Ctrl-C came while the walk was busy with an entry."""

    def __init__(self) -> None:
        self.requested = False

    def check(self) -> None:
        if self.requested:
            raise Interrupted()


@contextlib.contextmanager
def between_entries() -> t.Iterator[StopRequest]:
    """Defer Ctrl-C to the next :meth:`StopRequest.check`; restore the previous handler afterwards."""
    request = StopRequest()
    if threading.current_thread() is not threading.main_thread():  # only the main thread gets signals
        yield request
        return

    def ask_to_stop(signum: int, frame: object) -> None:
        request.requested = True

    previous = signal.signal(signal.SIGINT, ask_to_stop)
    try:
        yield request
    finally:
        signal.signal(signal.SIGINT, previous)


@contextlib.contextmanager
def signals_held() -> t.Iterator[None]:
    """Hold :data:`HELD_SIGNALS` off for a section that must be finished or undone, never left half-done.

    The signals are blocked, not handled: one that comes meanwhile stays
    pending and takes its ordinary effect (``KeyboardInterrupt``, the end of
    the process) the moment the section is over, so what the section made is
    complete or removed by then.  A section should be short and bounded.
    """
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, HELD_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
