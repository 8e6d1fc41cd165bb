"""``nxsock check-root``: the shared-root verdict on ``/tmp/.nx`` (or PATH) for the current user."""

from __future__ import annotations

import sys

import click

from ..core.layout import CONTAINER
from .completion import complete_directories
from .summaries import summarized


@click.command("check-root")
@click.argument("path", default=CONTAINER, required=False, shell_complete=complete_directories)
@click.option("--json", "json_flag", is_flag=True, help="Print one JSON document (schema_version 1).")
@summarized("check-root")
def check_root(path: str, json_flag: bool) -> None:
    """Says whether PATH (default /tmp/.nx) is a safe shared container for you, and the exact fix when not.
    A missing container is safe: Nx creates it, owned by you, 1777.  Nothing
    is created or changed.  Exits 0 when safe, 1 when not.
    """
    from ..output.check_root import CheckRootRequest, run

    sys.exit(run(CheckRootRequest(path, json_flag)))
