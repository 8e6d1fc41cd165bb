"""The options every predicting command shares, as click options, and the resolution they describe."""

from __future__ import annotations

import functools
import typing as t

import click

from .. import snapshot
from ..fsview import FsView
from ..host_overrides import UID_MAX, HostOverrides
from ..resolver import Resolution
from .options import HOST_OPTIONS, HostOption

__all__ = ["build_resolution", "resolution_options", "wants_json"]

F = t.TypeVar("F", bound=t.Callable[..., t.Any])


def _click_option(option: HostOption) -> t.Callable[[F], F]:
    if option.choices:
        return click.option(option.flag, option.field, type=click.Choice(option.choices), help=option.help)
    if option.is_uid:
        return click.option(option.flag, option.field, type=click.IntRange(0, UID_MAX), metavar="UID", help=option.help)
    return click.option(option.flag, option.field, metavar=option.metavar, help=option.help)


def resolution_options(command: F) -> F:
    """Attach the host options of :data:`~nxsock.commands.options.HOST_OPTIONS`; the command receives them as
    one ``host`` :class:`~nxsock.commands.options.HostOverrides`."""

    @functools.wraps(command)
    def with_host(*args: t.Any, **kwargs: t.Any) -> t.Any:
        host = HostOverrides(**{option.field: kwargs.pop(option.field) for option in HOST_OPTIONS})
        return command(*args, host=host, **kwargs)

    decorated: t.Any = with_host
    for option in reversed(HOST_OPTIONS):
        decorated = _click_option(option)(decorated)
    return t.cast(F, decorated)


def build_resolution(host: HostOverrides) -> tuple[Resolution, FsView]:
    """:func:`nxsock.snapshot.build_resolution`, with a bad ``--workspace`` as a usage error."""
    try:
        return snapshot.build_resolution(host)
    except snapshot.WorkspaceError as exc:
        raise click.BadParameter(str(exc), param_hint="--workspace") from None


def wants_json(json_flag: bool, output_format: str | None) -> bool:
    return json_flag or output_format == "json"
