"""``provision`` as it was asked: ``/tmp/.nx`` set up (``act/provisioning.py``) or the tmpfiles.d drop-in
written (``act/tmpfiles.py``), and what was done shown."""

from __future__ import annotations

import os
import sys
import typing as t

import click

from .. import exitcodes

if t.TYPE_CHECKING:
    from types import ModuleType

    from ..act.provisioning import ProvisionReport
    from ..act.tmpfiles import TmpfilesChange

__all__ = ["ProvisionRequest", "run"]


class ProvisionRequest(t.NamedTuple):
    """Every option of ``provision``, checked against each other."""

    program: str  # how a sudo line names nxsock
    dry_run: bool = False
    check: bool = False  # as --dry-run, and 1 when anything would change
    json: bool = False
    tmpfiles: bool = False
    install: bool = False
    uninstall: bool = False
    metrics: bool = False  # --check --format openmetrics
    output_file: str | None = None


def run(request: ProvisionRequest) -> int:
    """Provision (or the drop-in); 1 when refused (or, with --check, when anything would change), 77 for root."""
    if request.metrics:
        return _check_metrics(request.output_file)
    from .emit import write_json
    from .report import tmpfiles_document, tmpfiles_steps_document

    dry = request.dry_run or request.check
    root = os.geteuid() == 0
    if request.tmpfiles:
        from ..act import tmpfiles as drop_in
        from .render import render_tmpfiles

        if not (request.install or request.uninstall or request.check):
            if request.json:
                write_json(tmpfiles_document(drop_in.DROP_IN, drop_in.drop_in_text()))
            else:
                sys.stdout.write(drop_in.drop_in_text())
            return exitcodes.OK
        install = request.install or not request.uninstall  # --check alone: would --install change anything?
        if not root and not dry:
            again = "--install" if install else "--uninstall"
            click.echo(f"nxsock provision: writing /etc/tmpfiles.d needs root: "
                       f"sudo {request.program} provision --tmpfiles {again}", err=True)
            return exitcodes.NOPERM
        changes = drop_in.install(dry_run=dry) if install else drop_in.uninstall(dry_run=dry)
        if install and not dry and changes[0].verb in ("write", "none"):
            changes += _apply_and_judge(drop_in)
        refused = any(c.verb == "refuse" for c in changes)
        changed = any(c.verb in ("write", "remove") for c in changes)
        code = exitcodes.PROBLEM if refused or (request.check and changed) else exitcodes.OK
        if any(c.verb == "fail" for c in changes):
            code = exitcodes.CANTCREAT
        if request.json:
            write_json(tmpfiles_steps_document(changes, dry_run=dry, changed=changed))
        else:
            render_tmpfiles(changes, dry_run=dry)
        return code

    from ..act.provisioning import provision_for_everyone, provision_for_user
    from ..core.fsview import LiveView
    from .report import provision_document

    view = LiveView()
    if root:
        report = provision_for_everyone(view, dry_run=dry)
    else:
        report = provision_for_user(view, os.geteuid(), os.getegid(), dry_run=dry)
    code = report.exit_code
    if code == exitcodes.OK and request.check and report.changed:
        code = exitcodes.PROBLEM
    from .check_root import remedy_context

    document = provision_document(report, remedy_context(view))
    if request.json:
        write_json(document)
    else:
        from .render import render_provision

        render_provision(document)
    return code


def _check_metrics(output_file: str | None) -> int:
    """``provision --check --format openmetrics``: what provisioning would change, and the drop-in, as metrics.

    Exits as ``--check`` does: 1 when anything would change or is refused.
    """
    import time

    from ..act import tmpfiles as drop_in
    from ..act.provisioning import provision_for_everyone, provision_for_user
    from ..core.fsview import LiveView
    from .openmetrics import provision_metrics_text
    from .publish import publish_metrics

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
    from .report import provision_document

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
