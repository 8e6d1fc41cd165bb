"""The options every predicting command shares, and the resolution they describe."""

from __future__ import annotations

import os
import typing as t

import click

from ..environment import fresh_environment, fresh_machine, host_environment
from ..fsview import FsView, LiveView, MemoryView
from ..resolver import Resolution, resolve

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


def build_resolution(
    *,
    workspace: str | None,
    platform: str | None,
    uid: int | None,
    home: str | None,
    tmpdir: str | None,
    username: str | None,
    nx_version: str | None,
    layout: str | None,
) -> tuple[Resolution, FsView]:
    """Snapshot the host (or a fresh *platform* machine) and resolve over it."""
    view: FsView
    if platform is not None:
        env = fresh_environment(
            platform, uid=uid, username=username, home=home, tmpdir=tmpdir, workspace=workspace, nx_version=nx_version
        )
        view = fresh_machine(env) if platform != "win32" else MemoryView({})
    else:
        view = LiveView()
        root = None
        if workspace is not None:
            try:
                root = os.path.realpath(workspace, strict=True)
            except (OSError, ValueError) as exc:
                raise click.BadParameter(f"{workspace!r} cannot be resolved ({exc.__class__.__name__}).", param_hint="--workspace") from None
            if not os.path.isdir(root):
                raise click.BadParameter(f"{workspace!r} is not a directory.", param_hint="--workspace")
        env = host_environment(view, workspace=root, nx_version=nx_version, home=home, tmpdir=tmpdir, uid=uid)
    return resolve(env, view, layout_override=layout), view


def wants_json(json_flag: bool, output_format: str | None) -> bool:
    return json_flag or output_format == "json"

