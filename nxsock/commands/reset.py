"""``nxsock reset``: remove this user's dead Nx runtime state, and nothing else."""

from __future__ import annotations

import sys

import click

from ..core.host_overrides import HostOverrides
from ._resolution import workspace_option
from .summaries import summarized


@click.command("reset")
@workspace_option
@click.option("--dry-run", is_flag=True, help="Say what would be removed; remove nothing.")
@click.option("--force", is_flag=True, help="Also remove dead per-run directories modified in the last minute.")
@click.option(
    "--daemon-marker", is_flag=True, help="Also remove the daemon's 'disabled' marker, printing its reason first."
)
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
    from ..output.reset import ResetRequest, run

    sys.exit(run(ResetRequest(host, dry_run, force, daemon_marker, legacy, json_flag)))
