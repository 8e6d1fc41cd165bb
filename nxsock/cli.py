"""The ``nxsock`` entry point.

:func:`main` hands the command line to the click application in
:mod:`nxsock.app` — except ``nxsock paths --json`` with any of its host
options, which CI runs on every job: those command lines are parsed from the
same option declarations (:mod:`nxsock.commands.options`) and answered by the
same code without loading click.  Either way an unexpected error is one line and exit 70.

The standard streams are nxsock's to check, not the interpreter's: a closed
descriptor 0, 1 or 2 is given ``/dev/null`` before anything is opened (so no
file nxsock opens can land on it); a closed standard output is exit 74 at
once, for every command; a standard output that refuses a write (``/dev/full``:
ENOSPC, or EIO) is exit 74 once the command is done, flushed here and not by
the interpreter at exit (which would print a traceback-like warning and exit
120).  A command that needs stdin finds ``sys.stdin`` is ``None`` when it was
closed, and says so as a usage error.
"""

from __future__ import annotations

import io
import os
import sys
import typing as t

from . import exitcodes

if t.TYPE_CHECKING:
    from .core.host_overrides import HostOverrides

__all__ = ["main"]  # and ``cli``, the click group, on first use


def _paths_json(host: HostOverrides) -> int:
    """The JSON document for *host*, or -1 where click must word a usage error (a bad ``--workspace``)."""
    from .core.snapshot import WorkspaceError, build_resolution
    from .output.paths_json import print_paths_json

    try:
        resolution, view = build_resolution(host)
    except WorkspaceError:
        return -1
    return print_paths_json(resolution, sys.stdout, view)


def _split_debug(args: t.Sequence[str]) -> tuple[bool, list[str]]:
    """Whether the group's own ``--debug`` stands before the subcommand, and the words from the subcommand on."""
    words = list(args)
    debug = False
    while words and words[0] == "--debug":
        debug = True
        words.pop(0)
    return debug, words


def _fill(fd: int, flags: int) -> bool:
    """Put ``/dev/null`` on *fd* if it is closed; whether it was."""
    try:
        os.fstat(fd)
        return False
    except OSError:
        null = os.open(os.devnull, flags)
        if null != fd:
            os.dup2(null, fd)
            os.close(null)
        return True


class _StandardOutput(io.RawIOBase):
    """Descriptor 1, whose failed write is :class:`~nxsock.exitcodes.OutputFailed` (a reader gone stays
    ``BrokenPipeError``)."""

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return 1

    def isatty(self) -> bool:
        return os.isatty(1)

    def write(self, data: t.Any) -> int | None:
        try:
            return os.write(1, data)
        except BlockingIOError:
            return None  # a non-blocking descriptor that is full for now: the buffer says so, as for any file
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise exitcodes.OutputFailed(exc.errno or 0) from None


def _guard_streams() -> bool:
    """Closed standard descriptors given ``/dev/null``, standard output made to fail as :class:`OutputFailed`;
    whether standard output was closed."""
    stdin_closed = _fill(0, os.O_RDONLY)
    stdout_closed = _fill(1, os.O_WRONLY)
    if _fill(2, os.O_WRONLY) or sys.stderr is None:
        sys.stderr = open(2, "w", closefd=False)  # the process's stderr, never closed
    if stdin_closed:
        sys.stdin = None  # as Python itself leaves it: a command that needs stdin checks
    out = sys.stdout
    if stdout_closed or out is None:
        return True
    if out is sys.__stdout__ and isinstance(out, io.TextIOWrapper) and out.fileno() == 1:
        out.flush()
        sys.stdout = io.TextIOWrapper(io.BufferedWriter(_StandardOutput()), encoding=out.encoding, errors=out.errors,
                                      line_buffering=out.line_buffering, write_through=out.write_through)
    return False


def _output_failed(exc: exitcodes.OutputFailed) -> int:
    """One line for a standard output that refused a write; the interpreter's own flush at exit made harmless."""
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)  # what is still buffered goes nowhere, quietly
    os.close(null)
    _say(f"nxsock: {exc}")
    return exitcodes.IOERR


def _say(line: str) -> None:
    """A line on stderr, if stderr takes it."""
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        pass


def _exit_code(exc: SystemExit) -> int:
    if exc.code is None or isinstance(exc.code, int):
        return exc.code or 0
    _say(str(exc.code))
    return exitcodes.PROBLEM


def main(argv: t.Sequence[str] | None = None) -> t.NoReturn:
    """Run nxsock; an unexpected error is a short message and exit 70, never a bare traceback."""
    args = list(sys.argv[1:] if argv is None else argv)
    if _guard_streams():
        _say("nxsock: standard output is closed; nothing was done.")
        sys.exit(exitcodes.IOERR)
    code = _run(args)
    try:
        if sys.stdout is not None:
            sys.stdout.flush()  # here, not at the interpreter's exit, where a failure could only be exit 120
    except exitcodes.OutputFailed as exc:
        code = _output_failed(exc)
    except BrokenPipeError:
        code = _reader_gone()
    sys.exit(code)


def _reader_gone() -> int:
    # A reader that stopped early (``| head``) is not an error of ours.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return exitcodes.OK


def _run(args: list[str]) -> int:
    """The command's exit code, whatever it raised."""
    try:
        words = _split_debug(args)[1]
        host = None
        if words[:1] == ["paths"] and "_NXSOCK_COMPLETE" not in os.environ:  # --help and completion load no more
            from .commands.options import parse_paths_json

            host = parse_paths_json(words)
        if host is not None:
            code = _paths_json(host)
            if code >= 0:
                return code
        from .app import run

        return run(args)
    except SystemExit as exc:
        return _exit_code(exc)
    except KeyboardInterrupt as exc:
        # Ctrl-C is not "a problem found" (1): 130, as a shell reports a command SIGINT ended.
        _say(("" if exc.args == ("echoed",) else "\n") + "nxsock: interrupted")
        return exitcodes.INTERRUPTED
    except exitcodes.OutputFailed as exc:
        return _output_failed(exc)
    except BrokenPipeError:
        return _reader_gone()
    except Exception as exc:
        if _split_debug(args)[0]:
            import traceback

            traceback.print_exc()
        message = str(exc).splitlines()[0] if str(exc) else ""
        _say(f"nxsock: internal error: {type(exc).__name__}: {message}")
        _say("nxsock: this is a bug; run with --debug for the traceback and report it.")
        return exitcodes.SOFTWARE


def __getattr__(name: str) -> t.Any:
    """``nxsock.cli.cli``, the click group, loaded on first use."""
    if name == "cli":
        from .app import cli

        return cli
    raise AttributeError(name)
