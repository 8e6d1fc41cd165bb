"""``nxsock paths``: where Nx will put its sockets and binding cache right now, and why."""

from __future__ import annotations

import sys

import click

from ..core.host_overrides import HostOverrides
from ..core.sandbox_formats import FORMATS
from ._resolution import resolution_options, wants_json
from .summaries import summarized


@click.command("paths")
@resolution_options
@click.option(
    "--json", "json_flag", is_flag=True, help="Print one JSON document (schema_version 1); the same as --format json."
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(("json", *FORMATS)),
    help="json: the document; the others: ready-to-paste entries for that sandbox (default: the human report).",
)
@click.option(
    "--portable", is_flag=True, help="With a sandbox format: Nx-style /tmp/.nx, ~/.nx and ./ spellings fit to commit."
)
@summarized("paths")
def paths(json_flag: bool, output_format: str | None, portable: bool, host: HostOverrides) -> None:
    """Lists each socket and the binding cache with the tier Nx chose for it.

    Predicts without changing anything: directories Nx would create or tighten
    are listed as such.  A sandbox --format prints what that sandbox must
    allow, computed over the sandbox's own view of the filesystem (inside a
    Linux user namespace every other owner, root included, is uid 65534).
    Exits 78 when Nx would refuse the configured NX_SOCKET_DIR (or, Nx 24, the
    workspace data directory), 73 when it could
    establish no socket directory at all.

    \b
    Terms: a tier is where Nx settled (configured, shared /tmp/.nx/<uid>,
    home ~/.nx, workspace); demoted, a tier refused and the next one used;
    <H20(workspace+pid)>, a directory named by hashing the workspace and the
    daemon's pid; 49/95, a path's length against Nx's limit.  man nxsock, TERMS.
    """
    from ..output.paths import PathsRequest, run

    if portable and (output_format is None or wants_json(json_flag, output_format)):
        raise click.UsageError("--portable goes with a sandbox --format (srt, bwrap, …), not with the report or JSON.")
    sys.exit(run(PathsRequest(host, "json" if wants_json(json_flag, output_format) else output_format, portable)))
