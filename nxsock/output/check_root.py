"""``check-root`` as it was asked: the shared-root verdict on a directory for the current user, shown."""

from __future__ import annotations

import os
import typing as t

from .. import exitcodes

if t.TYPE_CHECKING:
    from ..core.fsview import FsView
    from ..core.wording import RemedyContext

__all__ = ["CheckRootRequest", "remedy_context", "run"]


class CheckRootRequest(t.NamedTuple):
    """Every option of ``check-root``."""

    path: str  # as typed: resolved against the working directory here
    json: bool = False


def run(request: CheckRootRequest) -> int:
    """Judge the directory as Nx's shared root; 0 when safe (or absent: Nx creates it), 1 when not."""
    from ..core._pathname import resolve
    from ..core.fsview import LiveView
    from ..core.guards import Simulation, establish_shared_root
    from .emit import write_json
    from .report import check_root_document

    try:
        cwd = os.getcwd()
    except OSError:
        cwd = "/"
    target = resolve(request.path, cwd)
    view = LiveView()
    existing = view.lstat(target)
    sim = Simulation(view, os.getuid(), os.getgid(), os.getgroups())
    refusal = establish_shared_root(sim, target)
    state = "refused" if refusal else ("absent" if isinstance(existing, int) else "ok")
    document = check_root_document(target, state, refusal, remedy_context(view))
    if request.json:
        write_json(document)
    else:
        from .render import render_check_root

        render_check_root(document)
    return exitcodes.OK if refusal is None else exitcodes.PROBLEM


def remedy_context(view: FsView) -> RemedyContext:
    """The remedies' context for this user and workspace; without a workspace to read, the user alone."""
    from ..core.snapshot import build_resolution
    from ..core.wording import context_for, plain_context

    try:
        resolution, _ = build_resolution()
    except Exception:  # a workspace that cannot be read must not cost the verdict
        return plain_context(view, os.getuid(), os.getgid(), os.environ.get("HOME"))
    return context_for(resolution, view)
