"""``--explain -``: what Nx printed, read from stdin as the doctor's option value, never a hang."""

from __future__ import annotations

import os
import sys

import click

from .. import exitcodes

__all__ = ["STDIN_DEADLINE", "read_stdin"]

#: How long ``--explain -`` waits for its input to end when it is not a terminal: a pipe nothing closes must not
#: hang the doctor.
STDIN_DEADLINE = 10.0


def read_stdin(limit: int, deadline: float = STDIN_DEADLINE) -> str:
    """At most *limit* bytes of stdin, as Nx wrote them (UTF-8; any other byte kept, and later shown, as an escape).

    A terminal is read until the user ends the paste (Ctrl-D).  Anything else
    — a pipe, a FIFO, a file — is read for at most *deadline* seconds: what
    arrived by then is explained (saying so), and nothing at all is a one-line
    error, never a hang.
    """
    import select
    import time

    if sys.stdin is None:  # closed (``<&-``): nothing can arrive
        click.echo("nxsock doctor: --explain -: stdin is closed; pipe or paste what Nx printed.", err=True)
        sys.exit(exitcodes.USAGE)
    stream = getattr(sys.stdin, "buffer", sys.stdin)
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):  # no descriptor (a test runner's stdin): read what it holds
        data = stream.read(limit)
        return data.decode("utf-8", "surrogateescape") if isinstance(data, bytes) else str(data)
    interactive = os.isatty(fd)
    if interactive:
        click.echo("Paste what Nx printed, then press Ctrl-D on a line of its own:", err=True)
    chunks: list[bytes] = []
    size, ended = 0, False
    until = time.monotonic() + deadline
    try:
        while size < limit:
            if not interactive:
                left = until - time.monotonic()
                if left <= 0 or not select.select([fd], [], [], left)[0]:
                    break
            chunk = os.read(fd, min(1 << 16, limit - size))
            if not chunk:
                ended = True
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        click.echo(f"nxsock doctor: --explain -: cannot read stdin ({os.strerror(exc.errno or 0)}).", err=True)
        sys.exit(exitcodes.USAGE)
    if not ended and size < limit:
        if not size:
            click.echo(f"nxsock doctor: --explain -: nothing arrived on stdin within {deadline:g} s; "
                       "pipe or paste what Nx printed.", err=True)
            sys.exit(exitcodes.USAGE)
        click.echo(f"nxsock doctor: stdin did not end within {deadline:g} s; "
                   f"explaining the {size} bytes that arrived.", err=True)
    return b"".join(chunks).decode("utf-8", "surrogateescape")
