"""``nxsock provision``: set up ``/tmp/.nx`` for everyone (as root) or your own Nx tree (as you)."""

from __future__ import annotations

import sys
import typing as t

import click

from .summaries import summarized

if t.TYPE_CHECKING:
    from ..output.provision import ProvisionRequest


@click.command("provision")
@click.option(
    "--dry-run", is_flag=True, help="Say what would be done (\"would create\", \"would chmod\"); change nothing."
)
@click.option(
    "--check",
    is_flag=True,
    help="Like --dry-run, and exit 1 when anything would change (for image builds); with --tmpfiles: whether "
         "the drop-in is installed.",
)
@click.option("--json", "json_flag", is_flag=True, help="Print one JSON document (schema_version 1) with each step.")
@click.option("--tmpfiles", is_flag=True, help="Print the systemd-tmpfiles drop-in that recreates /tmp/.nx at boot.")
@click.option(
    "--install", is_flag=True, help="With --tmpfiles: write the drop-in to /etc/tmpfiles.d/ and apply it (root)."
)
@click.option("--uninstall", is_flag=True, help="With --tmpfiles: remove the drop-in nxsock installed (root).")
@click.option("--format", "output_format", type=click.Choice(("text", "json", "openmetrics")),
              help="text (the default), json (as --json), or with --check openmetrics: "
                   "the verdict as Prometheus metrics.")
@click.option("--output", "output_file", metavar="FILE",
              help="With --format openmetrics: write the metrics to FILE whole (a temporary file renamed over it).")
@summarized("provision")
def provision(**options: t.Any) -> None:
    """As root: a real root:root 1777 directory.  As a user: your own tree beneath it.

    As root a container a user created first is handed to root; the users'
    directories beneath it stay exactly as they are.  A symlink, FIFO or file
    at /tmp/.nx is refused with its remedy, never followed or removed.  As a
    regular user, your levels are created 0700 as Nx would; where only root can
    help, nxsock exits 77 and prints the sudo command.
    """
    from ..output.provision import run

    sys.exit(run(_request(**options)))


def _request(*, dry_run: bool, check: bool, json_flag: bool, tmpfiles: bool, install: bool, uninstall: bool,
             output_format: str | None, output_file: str | None) -> ProvisionRequest:
    """The options, checked against each other, as one request (usage errors exit 2)."""
    from ..output.provision import ProvisionRequest
    from ._resolution import nxsock_for_root

    if (install or uninstall) and not tmpfiles:
        raise click.UsageError("--install and --uninstall go with --tmpfiles.")
    if install and uninstall:
        raise click.UsageError("--install and --uninstall are exclusive.")
    json_flag = json_flag or output_format == "json"
    if output_format == "openmetrics":
        if json_flag:
            raise click.UsageError("--format openmetrics and --json are exclusive.")
        if not check or tmpfiles:
            raise click.UsageError("--format openmetrics goes with --check alone (it reports; it changes nothing).")
    elif output_file is not None:
        raise click.UsageError("--output goes with --format openmetrics.")
    return ProvisionRequest(nxsock_for_root(), dry_run, check, json_flag, tmpfiles, install, uninstall,
                            output_format == "openmetrics", output_file)
