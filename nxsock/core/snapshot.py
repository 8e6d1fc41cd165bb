"""This host (or a fresh machine of another platform) as the resolver sees it: snapshot, then resolve.

Click-free, so that the one invocation CI runs on every job, ``nxsock paths
--json``, can be served without loading the command-line framework.
"""

from __future__ import annotations

import os

from .fresh_machine import fresh_environment, fresh_machine
from .fsview import FsView, LiveView, MemoryView
from .host import host_environment
from .host_overrides import HostOverrides
from .resolver import Resolution, resolve

__all__ = ["WorkspaceError", "build_resolution"]


class WorkspaceError(ValueError):
    """``--workspace`` names nothing that can be resolved to a directory."""


#: The host as it is: no option stands in for any part of it.
AS_IT_IS = HostOverrides()


def build_resolution(host: HostOverrides = AS_IT_IS) -> tuple[Resolution, FsView]:
    """Snapshot the host (or a fresh ``host.platform`` machine), with *host*'s overrides, and resolve over it."""
    workspace, platform, uid, home, tmpdir, username, nx_version, layout = host
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
            from .terminal import printable  # only on this path: `paths --json` start-up stays as it was

            try:
                root = os.path.realpath(workspace, strict=True)
            except OSError as exc:
                reason = (exc.strerror or "cannot be resolved").lower()
                raise WorkspaceError(f"{printable(workspace)}: {reason}") from None
            except ValueError:  # a NUL byte
                raise WorkspaceError(f"{printable(workspace)}: not a path") from None
            if not os.path.isdir(root):
                raise WorkspaceError(f"{printable(workspace)}: not a directory")
        env = host_environment(
            view, workspace=root, nx_version=nx_version, home=home, tmpdir=tmpdir, uid=uid, username=username
        )
    return resolve(env, view, layout_override=layout), view
