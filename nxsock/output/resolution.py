"""The resolution a command line asks for, with a bad ``--workspace`` as the usage error click shows.

The commands build it for what they predict or act on; the doctor builds it
again in a child that has become another user, where the same error must read
the same.
"""

from __future__ import annotations

import typing as t

import click

from ..core import snapshot

if t.TYPE_CHECKING:
    from ..core.fsview import FsView
    from ..core.host_overrides import HostOverrides
    from ..core.resolver import Resolution

__all__ = ["build_resolution"]


def build_resolution(host: HostOverrides) -> tuple[Resolution, FsView]:
    """:func:`nxsock.core.snapshot.build_resolution`, with a bad ``--workspace`` as a usage error."""
    try:
        return snapshot.build_resolution(host)
    except snapshot.WorkspaceError as exc:
        raise click.BadParameter(str(exc), param_hint="--workspace") from None
