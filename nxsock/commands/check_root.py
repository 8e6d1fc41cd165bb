"""``nxsock check-root``: the shared-root verdict on ``/tmp/.nx`` (or PATH) for the current user."""

from __future__ import annotations

import os
import sys
import typing as t

import click

from .. import exitcodes
from ..core.layout import CONTAINER
from .completion import complete_directories
from .summaries import summarized

if t.TYPE_CHECKING:
    from ..core.fsview import FsView
    from ..core.wording import RemedyContext


@click.command("check-root")
@click.argument("path", default=CONTAINER, required=False, shell_complete=complete_directories)
@click.option("--json", "json_flag", is_flag=True, help="Print one JSON document (schema_version 1).")
@summarized("check-root")
def check_root(path: str, json_flag: bool) -> None:
    """Says whether PATH (default /tmp/.nx) is a safe shared container for you, and the exact fix when not.
    A missing container is safe: Nx creates it, owned by you, 1777.  Nothing
    is created or changed.  Exits 0 when safe, 1 when not.
    """
    from ..core._pathname import resolve
    from ..core.fsview import LiveView
    from ..core.guards import Simulation, establish_shared_root
    from ..output.emit import write_json
    from ..output.report import check_root_document

    try:
        cwd = os.getcwd()
    except OSError:
        cwd = "/"
    target = resolve(path, cwd)
    view = LiveView()
    existing = view.lstat(target)
    sim = Simulation(view, os.getuid(), os.getgid(), os.getgroups())
    refusal = establish_shared_root(sim, target)
    state = "refused" if refusal else ("absent" if isinstance(existing, int) else "ok")
    ctx = _remedy_context(view)
    document = check_root_document(target, state, refusal, ctx)
    if json_flag:
        write_json(document)
    else:
        from ..output.render import render_check_root

        render_check_root(document)
    sys.exit(exitcodes.OK if refusal is None else exitcodes.PROBLEM)


def _remedy_context(view: FsView) -> RemedyContext:
    """The remedies' context for this user and workspace; without a workspace to read, the user alone."""
    from ..core.snapshot import build_resolution
    from ..core.wording import context_for, plain_context

    try:
        resolution, _ = build_resolution()
    except Exception:  # a workspace that cannot be read must not cost the verdict
        return plain_context(view, os.getuid(), os.getgid(), os.environ.get("HOME"))
    return context_for(resolution, view)
