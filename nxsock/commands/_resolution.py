"""The host options as click options, for each command the subset that makes sense.

Every command that reads a workspace takes ``--workspace``; the predicting
ones take the host options that still describe what they read (``paths``
all of them, ``doctor`` those that describe this host).  Each option is
declared once, in :data:`~nxsock.commands.options.HOST_OPTIONS`, so its
name, help and checks are the same on every command.
"""

from __future__ import annotations

import functools
import typing as t

import click

from ..core.host_overrides import UID_MAX, HostOverrides
from ..core.releases import is_version
from .completion import complete_directories
from .options import HOST_OPTIONS, HostOption

__all__ = ["BadValuePointing", "host_options", "nxsock_for_root", "resolution_options", "uid_value", "wants_json",
           "workspace_option"]

F = t.TypeVar("F", bound=t.Callable[..., t.Any])


class BadValuePointing(click.BadParameter):
    """A bad value whose message already names where to look (``nxsock doctor --list-checks``): shown without the
    usual ``(see … --help)``, so a person is sent one place, not two."""


def uid_value(ctx: click.Context, param: click.Parameter, value: str | None) -> int | None:
    """A uid: a whole number from 0 to :data:`UID_MAX`, said in those words when it is not (an option callback)."""
    if value is None:
        return None
    if not value.isascii() or not value.isdigit() or int(value) > UID_MAX:
        raise click.BadParameter(f"{value!r} is not a uid: a whole number from 0 to {UID_MAX}", ctx, param)
    return int(value)


def _nx_version_value(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """An Nx version by semver's grammar (``24.0.6``), as the release table reads it (an option callback)."""
    if value is not None and not is_version(value):
        raise click.BadParameter(f"{value!r} is not an Nx version: major.minor.patch, such as 24.0.6", ctx, param)
    return value


def _click_option(option: HostOption) -> t.Callable[[F], F]:
    if option.choices:
        return click.option(option.flag, option.field, type=click.Choice(option.choices), help=option.help)
    if option.is_uid:
        return click.option(option.flag, option.field, callback=uid_value, metavar="UID", help=option.help)
    if option.is_version:
        return click.option(
            option.flag, option.field, callback=_nx_version_value, metavar=option.metavar, help=option.help
        )
    if option.metavar == "DIR":
        return click.option(
            option.flag, option.field, metavar="DIR", shell_complete=complete_directories, help=option.help
        )
    return click.option(option.flag, option.field, metavar=option.metavar, help=option.help)


def host_options(*fields: str) -> t.Callable[[F], F]:
    """Attach the host options for *fields* (in :data:`HOST_OPTIONS` order); the command receives them as one
    ``host`` :class:`~nxsock.commands.options.HostOverrides`, the fields it does not take left ``None``."""
    chosen = [option for option in HOST_OPTIONS if option.field in fields]
    assert len(chosen) == len(fields), f"unknown host option in {fields}"

    def attach(command: F) -> F:
        @functools.wraps(command)
        def with_host(*args: t.Any, **kwargs: t.Any) -> t.Any:
            host = HostOverrides(**{option.field: kwargs.pop(option.field) for option in chosen})
            return command(*args, host=host, **kwargs)

        decorated: t.Any = with_host
        for option in reversed(chosen):
            decorated = _click_option(option)(decorated)
        return t.cast(F, decorated)

    return attach


def resolution_options(command: F) -> F:
    """Every host option: ``paths`` computes any machine."""
    return host_options(*(option.field for option in HOST_OPTIONS))(command)


def reading_host_options(command: F) -> F:
    """The host options of the commands that only read (``doctor``, ``cache path|list|verify``): the workspace, and
    the ``HOME``, ``TMPDIR`` and Nx version to look with."""
    return host_options("workspace", "home", "tmpdir", "nx_version")(command)


def workspace_option(command: F) -> F:
    """Only ``--workspace``: for the commands that act on this host as it is."""
    return host_options("workspace")(command)


def nxsock_for_root() -> str:
    """How a ``sudo`` line this run prints names nxsock: asked of how this process was started, here and only here,
    and handed on as data (:func:`nxsock.core.program.nxsock_for_root`)."""
    import os
    import sys

    from ..core.program import nxsock_for_root as name_for_root

    try:
        cwd: str | None = os.getcwd()
    except OSError:  # a working directory removed under us: only an absolute argv[0] still names a file
        cwd = None
    return name_for_root(sys.argv[0] if sys.argv else "", cwd)


def wants_json(json_flag: bool, output_format: str | None) -> bool:
    return json_flag or output_format == "json"
