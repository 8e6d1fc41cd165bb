"""``nxsock reset``: remove this user's dead Nx runtime state, and nothing else."""

from __future__ import annotations

import sys

import click

from .. import exitcodes


@click.command("reset")
@click.option("--dry-run", is_flag=True, help="Say what would be removed; remove nothing.")
@click.option("--force", is_flag=True, help="Also remove dead per-run directories modified in the last minute.")
@click.option("--daemon-marker", is_flag=True, help="Also remove the daemon's 'disabled' marker, printing its reason first.")
@click.option("--legacy", is_flag=True, help="Also remove leftovers of Nx <= 23.1.1 in the OS temp dir that are yours.")
@click.option("--json", "json_flag", is_flag=True, help="Print one JSON document (schema_version 1).")
def reset(dry_run: bool, force: bool, daemon_marker: bool, legacy: bool, json_flag: bool) -> None:
    """Remove per-run socket directories nothing answers in, stale sockets, and this workspace's dead leaves.

    Never a live daemon's directory, never another user's entry, never through
    a link (a link inside the tree is removed as a link).  Exits 1 when
    something it reports could not be removed.
    """
    from ..cleanup import reset as run_reset
    from ..snapshot import build_resolution

    resolution, _ = build_resolution()
    progress = None
    if not json_flag and sys.stderr.isatty():
        from ..render import progress_ticker

        progress = progress_ticker("examining Nx runtime state")
    items, marker = run_reset(
        resolution, dry_run=dry_run, force=force, daemon_marker=daemon_marker, legacy=legacy,
        tick=progress.tick if progress else (lambda: None),
    )
    if progress:
        progress.stop()
    failed = any(i.outcome == "failed" for i in items)
    if json_flag:
        from ..report import dumps

        document = {
            "schema_version": 1,
            "dry_run": dry_run,
            "marker_reason": marker,
            "removed": [{"path": i.path, "what": i.what, "reason": i.reason, "freed": i.freed} for i in items if i.outcome == "removed"],
            "kept": [{"path": i.path, "what": i.what, "reason": i.reason} for i in items if i.outcome == "kept"],
            "failed": [{"path": i.path, "what": i.what, "reason": i.reason} for i in items if i.outcome == "failed"],
            "freed": sum(i.freed for i in items if i.outcome == "removed"),
        }
        sys.stdout.write(dumps(document, indent=sys.stdout.isatty()) + "\n")
    else:
        from ..render import render_removals

        if marker is not None:
            click.echo(f"The daemon was disabled because: {marker}")
        render_removals([(i.path, i.outcome, i.reason if i.outcome != "removed" else f"{i.what}: {i.reason}", i.freed) for i in items], dry_run)
    sys.exit(exitcodes.PROBLEM if failed else exitcodes.OK)
