"""The ``nxsock`` entry point.

:func:`main` hands the command line to the click application in
:mod:`nxsock.app` — except ``nxsock paths --json`` with any of its host
options, which CI runs on every job: those command lines are parsed from the
same option declarations (:mod:`nxsock.commands.options`) and answered by the
same code without loading click.  Either way an unexpected error is one line and exit 70.
"""

from __future__ import annotations

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


def main(argv: t.Sequence[str] | None = None) -> t.NoReturn:
    """Run nxsock; an unexpected error is a short message and exit 70, never a bare traceback."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        words = _split_debug(args)[1]
        host = None
        if words[:1] == ["paths"] and "_NXSOCK_COMPLETE" not in os.environ:  # --help and completion load no more
            from .commands.options import parse_paths_json

            host = parse_paths_json(words)
        if host is not None:
            code = _paths_json(host)
            if code >= 0:
                sys.exit(code)
        from .app import run

        sys.exit(run(args))
    except SystemExit:
        raise
    except KeyboardInterrupt as exc:
        # Ctrl-C is not "a problem found" (1): 130, as a shell reports a command SIGINT ended.
        sys.stderr.write(("" if exc.args == ("echoed",) else "\n") + "nxsock: interrupted\n")
        sys.exit(exitcodes.INTERRUPTED)
    except BrokenPipeError:
        # A reader that stopped early (``| head``) is not an error of ours.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(exitcodes.OK)
    except Exception as exc:
        if _split_debug(args)[0]:
            import traceback

            traceback.print_exc()
        message = str(exc).splitlines()[0] if str(exc) else ""
        sys.stderr.write(f"nxsock: internal error: {type(exc).__name__}: {message}\n")
        sys.stderr.write("nxsock: this is a bug; run with --debug for the traceback and report it.\n")
        sys.exit(exitcodes.SOFTWARE)
    sys.exit(exitcodes.OK)  # pragma: no cover - click exits itself


def __getattr__(name: str) -> t.Any:
    """``nxsock.cli.cli``, the click group, loaded on first use."""
    if name == "cli":
        from .app import cli

        return cli
    raise AttributeError(name)
