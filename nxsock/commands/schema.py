"""``nxsock schema``: print the published JSON Schema of a ``--json`` document, or list them."""

from __future__ import annotations

import sys

import click

from ..output import schemas
from .summaries import summarized


@click.command("schema")
@click.argument("name", required=False, type=click.Choice(schemas.names()), metavar="[NAME]")
@click.option("--list", "list_flag", is_flag=True, help="List the schemas' names, one a line (the same as no NAME).")
@summarized("schema")
def schema(name: str | None, list_flag: bool) -> None:
    """NAME names the command line that prints the document: paths,
    check-root, doctor, doctor-fix (doctor --fix), reset, cache-path,
    cache-list, cache-verify, cache-prune, provision, provision-tmpfiles.
    The schema (draft 2020-12)
    is printed byte for byte as nxsock ships it; without NAME, or with
    --list, the names are listed.  Every key nxsock prints is described;
    keys are only ever added, so the schemas allow keys they do not name.
    """
    if name is not None and list_flag:
        raise click.UsageError("--list takes no NAME.")
    sys.exit(schemas.print_schema(name))
