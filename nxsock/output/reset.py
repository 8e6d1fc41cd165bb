"""``reset`` as it was asked: this user's dead Nx runtime state removed (``act/cleanup.py``), and the outcome shown."""

from __future__ import annotations

import sys
import typing as t

import click

from .. import exitcodes
from .resolution import build_resolution

if t.TYPE_CHECKING:
    from ..core.host_overrides import HostOverrides

__all__ = ["ResetRequest", "run"]


class ResetRequest(t.NamedTuple):
    """Every option of ``reset``."""

    host: HostOverrides
    dry_run: bool = False
    force: bool = False  # per-run directories modified in the last minute too
    daemon_marker: bool = False
    legacy: bool = False
    json: bool = False


def run(request: ResetRequest) -> int:
    """Remove (or, dry, list) what is dead; 1 when something could not be removed, 130 on Ctrl-C."""
    from ..act.cleanup import ResetItem, reset
    from ..act.interruption import Interrupted, between_entries

    resolution, _ = build_resolution(request.host)
    progress = None
    if not request.json and sys.stderr.isatty():
        from .render import progress_ticker

        progress = progress_ticker("examining Nx runtime state")
    items: list[ResetItem] = []
    marker = None
    interrupted = False
    try:
        with between_entries() as stop:
            def tick() -> None:
                if progress:
                    progress.tick()
                stop.check()

            _, marker = reset(resolution, dry_run=request.dry_run, force=request.force,
                              daemon_marker=request.daemon_marker, legacy=request.legacy, tick=tick, items=items)
        interrupted = stop.requested
    except Interrupted:
        interrupted = True
    finally:
        if progress:
            progress.stop()
    failed = any(i.outcome in ("failed", "refused") for i in items)
    if request.json:
        from .emit import write_json
        from .report import reset_document

        write_json(reset_document(items, marker, dry_run=request.dry_run, interrupted=interrupted))
    else:
        from .render import render_removals

        shown = sorted(items, key=lambda i: i.entries == 1)  # summaries of floods first: never cut from the listing
        rows = [(i.path, i.outcome, i.reason if i.outcome != "removed" else f"{i.what}: {i.reason}", i.freed)
                for i in shown]
        render_removals(rows, request.dry_run, marker_reason=marker, interrupted=interrupted)
    if interrupted:
        click.echo("nxsock: interrupted", err=True)
        return exitcodes.INTERRUPTED
    return exitcodes.PROBLEM if failed else exitcodes.OK
