"""``nxsock paths``: where Nx will put its sockets and binding cache right now, and why."""

from __future__ import annotations

import sys

import click

from ._resolution import build_resolution, resolution_options, wants_json


@click.command("paths")
@resolution_options
@click.option("--json", "json_flag", is_flag=True, help="Print one JSON document (schema_version 1); the same as --format json.")
@click.option("--format", "output_format", type=click.Choice(("text", "json")), help="Output format (default: text).")
def paths(json_flag: bool, output_format: str | None, **options: object) -> None:
    """Show where Nx will put each socket and its native binding cache, which tier it used and why.

    Predicts without changing anything: directories Nx would create or tighten
    are listed as such.  Exits 78 when Nx would refuse the configured
    NX_SOCKET_DIR (or, Nx 24, the workspace data directory), 73 when it could
    establish no socket directory at all.
    """
    from ..report import paths_exit_code, print_paths_json

    resolution, _ = build_resolution(**options)
    if wants_json(json_flag, output_format):
        sys.exit(print_paths_json(resolution, sys.stdout))
    from ..render import render_paths

    render_paths(resolution)
    sys.exit(paths_exit_code(resolution))
