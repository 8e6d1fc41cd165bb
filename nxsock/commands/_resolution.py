"""The options every predicting command shares, and the resolution they describe."""

from __future__ import annotations

import typing as t

import click

from .. import snapshot
from ..fsview import FsView
from ..resolver import Resolution

__all__ = ["PLATFORMS", "build_resolution", "resolution_options", "wants_json"]

F = t.TypeVar("F", bound=t.Callable[..., t.Any])

PLATFORMS = ("linux", "darwin", "win32")


def resolution_options(command: F) -> F:
    """Attach ``--workspace``, ``--platform`` and the options that stand in for a host."""
    for decorator in reversed(
        [
            click.option("--workspace", "workspace", metavar="DIR", help="The workspace to resolve for (default: found from the current directory, as Nx finds it)."),
            click.option("--platform", type=click.Choice(PLATFORMS), help="Compute a fresh machine of this kind instead of reading this one."),
            click.option("--uid", type=click.IntRange(0, 2**32 - 2), help="Resolve as this uid (default: yours; 501 on darwin, 1000 on linux with --platform)."),
            click.option("--home", metavar="DIR", help="Use this HOME."),
            click.option("--tmpdir", metavar="DIR", help="Use this TMPDIR (TEMP on win32)."),
            click.option("--username", metavar="NAME", help="The account name (--platform: names the home and, on win32, the temp dir)."),
            click.option("--nx-version", "nx_version", metavar="V", help="Resolve for this Nx version instead of the installed one (preview an upgrade)."),
            click.option("--layout", type=click.Choice(("current", "legacy")), help="Force a layout generation instead of the installed version's."),
        ]
    ):
        command = decorator(command)
    return command


def build_resolution(**options: t.Any) -> tuple[Resolution, FsView]:
    """:func:`nxsock.snapshot.build_resolution`, with a bad ``--workspace`` as a usage error."""
    try:
        return snapshot.build_resolution(**options)
    except snapshot.WorkspaceError as exc:
        raise click.BadParameter(str(exc), param_hint="--workspace") from None


def wants_json(json_flag: bool, output_format: str | None) -> bool:
    return json_flag or output_format == "json"

