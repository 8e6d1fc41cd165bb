"""``nxsock provision``: set up ``/tmp/.nx`` for everyone (as root) or your own Nx tree (as you)."""

from __future__ import annotations

import os
import sys
import typing as t

import click

from .. import exitcodes
from .summaries import summarized

if t.TYPE_CHECKING:
    from types import ModuleType

    from ..act.provisioning import ProvisionReport
    from ..act.tmpfiles import TmpfilesChange


@click.command("provision")
@click.option("--dry-run", is_flag=True, help="Say what would be done (\"would create\", \"would chmod\"); change nothing.")
@click.option("--check", is_flag=True, help="Like --dry-run, and exit 1 when anything would change (for image builds); with --tmpfiles: whether the drop-in is installed.")
@click.option("--json", "json_flag", is_flag=True, help="Print one JSON document (schema_version 1) with each step.")
@click.option("--tmpfiles", is_flag=True, help="Print the systemd-tmpfiles drop-in that recreates /tmp/.nx at boot.")
@click.option("--install", is_flag=True, help="With --tmpfiles: write the drop-in to /etc/tmpfiles.d/ and apply it (root).")
@click.option("--uninstall", is_flag=True, help="With --tmpfiles: remove the drop-in nxsock installed (root).")
@click.option("--format", "output_format", type=click.Choice(("text", "json", "openmetrics")),
              help="text (the default), json (as --json), or with --check openmetrics: "
                   "the verdict as Prometheus metrics.")
@click.option("--output", "output_file", metavar="FILE",
              help="With --format openmetrics: write the metrics to FILE whole (a temporary file renamed over it).")
@summarized("provision")
def provision(dry_run: bool, check: bool, json_flag: bool, tmpfiles: bool, install: bool, uninstall: bool,
              output_format: str | None, output_file: str | None) -> None:
    """As root: a real root:root 1777 directory.  As a user: your own tree beneath it.

    As root a container a user created first is handed to root; the users'
    directories beneath it stay exactly as they are.  A symlink, FIFO or file
    at /tmp/.nx is refused with its remedy, never followed or removed.  As a
    regular user, your levels are created 0700 as Nx would; where only root can
    help, nxsock exits 77 and prints the sudo command.
    """
    from ..output.emit import write_json
    from ..output.report import tmpfiles_document, tmpfiles_steps_document

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
        sys.exit(_check_metrics(output_file))
    if output_file is not None:
        raise click.UsageError("--output goes with --format openmetrics.")
    dry = dry_run or check
    root = os.geteuid() == 0
    if tmpfiles:
        from ..act import tmpfiles as drop_in
        from ..output.render import render_tmpfiles

        if not (install or uninstall or check):
            if json_flag:
                write_json(tmpfiles_document(drop_in.DROP_IN, drop_in.drop_in_text()))
            else:
                sys.stdout.write(drop_in.drop_in_text())
            sys.exit(exitcodes.OK)
        if not (install or uninstall):  # --check alone: would --install change anything?
            install = True
        if not root and not dry:
            from ._resolution import nxsock_for_root

            click.echo(f"nxsock provision: writing /etc/tmpfiles.d needs root: sudo {nxsock_for_root()} provision --tmpfiles "
                       + ("--install" if install else "--uninstall"), err=True)
            sys.exit(exitcodes.NOPERM)
        changes = drop_in.install(dry_run=dry) if install else drop_in.uninstall(dry_run=dry)
        if install and not dry and changes[0].verb in ("write", "none"):
            changes += _apply_and_judge(drop_in)
        refused = any(c.verb == "refuse" for c in changes)
        changed = any(c.verb in ("write", "remove") for c in changes)
        code = exitcodes.PROBLEM if refused or (check and changed) else exitcodes.OK
        if any(c.verb == "fail" for c in changes):
            code = exitcodes.CANTCREAT
        if json_flag:
            write_json(tmpfiles_steps_document(changes, dry_run=dry, changed=changed))
        else:
            render_tmpfiles(changes, dry_run=dry)
        sys.exit(code)

    from ..act.provisioning import provision_for_everyone, provision_for_user
    from ..core.fsview import LiveView
    from ..output.report import provision_document

    view = LiveView()
    if root:
        report = provision_for_everyone(view, dry_run=dry)
    else:
        report = provision_for_user(view, os.geteuid(), os.getegid(), dry_run=dry)
    code = report.exit_code
    if code == exitcodes.OK and check and report.changed:
        code = exitcodes.PROBLEM
    from .check_root import _remedy_context

    document = provision_document(report, _remedy_context(view))
    if json_flag:
        write_json(document)
    else:
        from ..output.render import render_provision

        render_provision(document)
    sys.exit(code)


def _check_metrics(output_file: str | None) -> int:
    """``provision --check --format openmetrics``: what provisioning would change, and the drop-in, as metrics.

    Exits as ``--check`` does: 1 when anything would change or is refused.
    """
    import time

    from ..act import tmpfiles as drop_in
    from ..act.provisioning import provision_for_everyone, provision_for_user
    from ..core.fsview import LiveView
    from ..output.openmetrics import provision_metrics_text
    from ..output.publish import publish_metrics

    started = time.time()
    view = LiveView()
    if os.geteuid() == 0:
        report = provision_for_everyone(view, dry_run=True)
    else:
        report = provision_for_user(view, os.geteuid(), os.getegid(), dry_run=True)
    text = provision_metrics_text(report, drop_in.install(dry_run=True)[0], checked_at=started)
    written = publish_metrics(text, output_file)
    if written != exitcodes.OK:
        return written
    return exitcodes.PROBLEM if report.refusal is not None or report.changed else exitcodes.OK


def _apply_and_judge(drop_in: ModuleType) -> list[TmpfilesChange]:
    """Apply the drop-in now and judge the container after: success only for a real root:root 1777 directory.

    systemd-tmpfiles exits 0 where a symlink stands at the container, so its
    status is not the verdict; nxsock's own provisioning, through descriptors,
    is.  Nothing is handed to the tool when something already stands there that
    is not a directory.
    """
    from ..act.provisioning import provision_for_everyone
    from ..core.fsview import LiveView
    from ..core.layout import CONTAINER
    from ..output.report import provision_document

    def refused(report: ProvisionReport) -> list[TmpfilesChange]:
        refusal = provision_document(report)["refusal"]
        detail = refusal["message"] + (f" Fix: {refusal['remedy']}" if refusal.get("remedy") else "")
        return [drop_in.TmpfilesChange("refuse", CONTAINER, detail)]

    before = provision_for_everyone(LiveView(), dry_run=True)
    if before.refusal is not None:
        return refused(before)
    changes: list[TmpfilesChange] = []
    applied = drop_in.apply()
    if applied is not None:
        changes.append(applied)
    after = provision_for_everyone(LiveView(), dry_run=False)  # judges, and finishes what the tool did not
    if after.refusal is not None:
        changes += refused(after)
    return changes
