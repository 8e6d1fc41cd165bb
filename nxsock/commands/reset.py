"""``nxsock reset``: remove this user's dead Nx runtime state, and nothing else."""

from __future__ import annotations

import sys

import click

from .. import exitcodes
from ..core.host_overrides import HostOverrides
from ..output.resolution import build_resolution
from ._resolution import workspace_option
from .summaries import summarized


@click.command("reset")
@workspace_option
@click.option("--dry-run", is_flag=True, help="Say what would be removed; remove nothing.")
@click.option("--force", is_flag=True, help="Also remove dead per-run directories modified in the last minute.")
@click.option("--daemon-marker", is_flag=True, help="Also remove the daemon's 'disabled' marker, printing its reason first.")
@click.option("--legacy", is_flag=True, help="Also remove leftovers of Nx <= 23.1.1 in the OS temp dir that are yours.")
@click.option("--json", "json_flag", is_flag=True, help="Print one JSON document (schema_version 1).")
@summarized("reset")
def reset(dry_run: bool, force: bool, daemon_marker: bool, legacy: bool, json_flag: bool, host: HostOverrides) -> None:
    """Per-run socket directories nothing answers in, stale sockets, and this workspace's dead leaves.

    Never a live daemon's directory, never another user's entry, never through
    a link (a link inside the tree is removed as a link), and nowhere a
    link, a level of another user or a workspace's file of another user
    steers.  Ctrl-C stops between entries and reports what was removed
    (exit 130).  Exits 1 when something it reports could not be removed or a
    directory was refused.
    """
    from ..act.cleanup import ResetItem
    from ..act.cleanup import reset as run_reset
    from ..act.interruption import Interrupted, between_entries

    resolution, _ = build_resolution(host)
    progress = None
    if not json_flag and sys.stderr.isatty():
        from ..output.render import progress_ticker

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

            _, marker = run_reset(resolution, dry_run=dry_run, force=force, daemon_marker=daemon_marker, legacy=legacy,
                                  tick=tick, items=items)
        interrupted = stop.requested
    except Interrupted:
        interrupted = True
    finally:
        if progress:
            progress.stop()
    failed = any(i.outcome in ("failed", "refused") for i in items)
    if json_flag:
        from ..output.emit import write_json
        from ..output.report import reset_document

        write_json(reset_document(items, marker, dry_run=dry_run, interrupted=interrupted))
    else:
        from ..output.render import render_removals

        shown = sorted(items, key=lambda i: i.entries == 1)  # summaries of floods first: never cut from the listing
        rows = [(i.path, i.outcome, i.reason if i.outcome != "removed" else f"{i.what}: {i.reason}", i.freed) for i in shown]
        render_removals(rows, dry_run, marker_reason=marker, interrupted=interrupted)
    if interrupted:
        click.echo("nxsock: interrupted", err=True)
        sys.exit(exitcodes.INTERRUPTED)
    sys.exit(exitcodes.PROBLEM if failed else exitcodes.OK)
