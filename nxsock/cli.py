"""The ``nxsock`` entry point.

:func:`main` hands the command line to the click application in
:mod:`nxsock.app` — except ``nxsock paths --json`` itself, which CI runs on
every job: that exact invocation is answered by the same code without
loading click.  Either way an unexpected error is one line and exit 70.
"""

from __future__ import annotations

import os
import sys
import typing as t

from . import exitcodes

__all__ = ["main"]  # and ``cli``, the click group, on first use

#: The argument lists served without click: the plain ``paths --json`` forms.
PATHS_JSON = (["paths", "--json"], ["paths", "--format", "json"], ["paths", "--format=json"])


def _paths_json() -> int:
    from .report import print_paths_json
    from .snapshot import build_resolution

    resolution, _ = build_resolution()
    return print_paths_json(resolution, sys.stdout)


def _wants_debug(args: t.Sequence[str]) -> bool:
    """``--debug`` among the group's own options, before the subcommand."""
    for arg in args:
        if arg == "--debug":
            return True
        if not arg.startswith("-"):
            return False
    return False


def main(argv: t.Sequence[str] | None = None) -> t.NoReturn:
    """Run nxsock; an unexpected error is a short message and exit 70, never a bare traceback."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        if args in PATHS_JSON and "_NXSOCK_COMPLETE" not in os.environ:
            sys.exit(_paths_json())
        from .app import cli

        cli.main(args=args, prog_name="nxsock", standalone_mode=True)
    except SystemExit:
        raise
    except BrokenPipeError:
        # A reader that stopped early (``| head``) is not an error of ours.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(exitcodes.OK)
    except Exception as exc:
        if _wants_debug(args):
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
