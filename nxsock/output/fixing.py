"""``doctor --fix``: the plan shown, one question, each remedy applied by nxsock's own code, the re-audit.

The plan and its applying are the audit's (``audit/repair.py``, acting only
through ``act/``); this module holds the conversation around them and the
``doctor --fix --json`` document.  Ctrl-C exits 130 and still ends with the
document.
"""

from __future__ import annotations

import os
import sys
import typing as t

import click

from .. import exitcodes
from ..core import wording
from .resolution import build_resolution

if t.TYPE_CHECKING:
    from ..audit.repair import Applied, Plan
    from ..audit.request import DoctorRequest
    from ..audit.session import Audited

__all__ = ["STOP_AT_VARIABLE", "fix"]

#: Tests only: the point of ``doctor --fix`` at which the process stops itself (``SIGSTOP``), so that a test can
#: signal it there — at a known moment however fast the machine, an event and never a delay.
STOP_AT_VARIABLE = "NXSOCK_TEST_STOP_AT"


def _stop_for_tests(point: str) -> None:
    if os.environ.get(STOP_AT_VARIABLE) == point:
        import signal

        os.kill(os.getpid(), signal.SIGSTOP)


class _Document:
    """The ``--fix --json`` document, written once, from what the run has reached; nothing without ``--json``."""

    def __init__(self, request: DoctorRequest) -> None:
        self.wanted = request.output == "json"
        self.dry_run = request.fix == "dry-run"

    def write(self, plan: Plan, status: str | None, *, confirmed: bool = False, interrupted: bool = False,
              applied: t.Sequence[Applied] = (), after: t.Sequence[tuple[str, t.Any]] | None = None) -> None:
        if not self.wanted:
            return
        from .emit import write_json
        from .report import fix_document

        write_json(fix_document(plan, dry_run=self.dry_run and not confirmed, confirmed=confirmed,
                                interrupted=interrupted, applied=applied, after=after, status=status))


def _audit(request: DoctorRequest, *, first: bool = False) -> Audited:
    from ..audit.session import audit

    resolution, view = build_resolution(request.host)
    if first:
        _stop_for_tests("first-audit")
    return audit(resolution, view, sandbox=request.sandbox, only=request.only, strict=request.strict,
                 nxsock_for_root=request.program)


def fix(request: DoctorRequest) -> int:
    """``--fix``: exits as the audit afterwards, and 1 too while it still finds a problem a remedy was for;
    2 without a terminal to ask on unless ``--yes``; 130 on Ctrl-C."""
    from ..act.interruption import Interrupted, between_entries
    from ..audit.repair import apply_plan, make_plan, still_found, unreached, verdicts
    from ..core.fsview import LiveView
    from ..core.wording import context_for

    document = _Document(request)
    dry_run = request.fix == "dry-run"
    plan = make_plan(())
    status: str | None = None  # no audit has finished yet
    try:  # a Ctrl-C before anything is applied (the first audit, the question) still ends with the document
        before = _audit(request, first=True)
        status = before.status
        plan = make_plan(before.findings)
        audit_code = exitcodes.PROBLEM if status == "error" else exitcodes.OK
        if not document.wanted:
            from .render import render_fix_plan

            render_fix_plan(plan, dry_run=dry_run)
        if dry_run or not plan.apply:
            document.write(plan, status)
            return audit_code
        if request.fix != "yes":
            answer = _ask(plan, document.wanted)
            if answer is not True:
                document.write(plan, status)
                return exitcodes.USAGE if answer is None else audit_code
    except (KeyboardInterrupt, click.exceptions.Abort):  # click's question turns Ctrl-C into Abort
        document.write(plan, status, interrupted=True)
        click.echo(wording.FIX_INTERRUPTED, err=True)
        return exitcodes.INTERRUPTED
    # The policy is asked again over the disk as it is at the moment of each step, not as the audit saw it.
    policy = context_for(before.resolution, LiveView()).policy
    applied: list[Applied] = []
    interrupted = False
    try:
        with between_entries() as stop:
            apply_plan(plan, policy, before.resolution, stop.check, applied)
            interrupted = stop.requested
    except Interrupted:
        interrupted = True
    after: Audited | None = None
    if not interrupted:
        try:  # a Ctrl-C during the audit afterwards still says what was applied
            after = _audit(request)
        except KeyboardInterrupt:
            interrupted = True
    if interrupted or after is None:
        applied += unreached(plan, applied)
        document.write(plan, status, confirmed=True, interrupted=True, applied=applied)
        if not document.wanted:
            from .render import render_fix_outcome

            render_fix_outcome(applied, None, status, interrupted=True)
        click.echo("nxsock: interrupted", err=True)
        return exitcodes.INTERRUPTED
    judged = verdicts(applied, plan, after.findings)
    document.write(plan, after.status, confirmed=True, applied=judged, after=after.results)
    if not document.wanted:
        from .render import render_fix_outcome

        render_fix_outcome(judged, after.results, after.status, interrupted=False)
    # The exit follows the re-audit: 1 while it finds an error, or any problem a remedy of the plan was for.
    return exitcodes.PROBLEM if after.status == "error" or still_found(judged, after.findings) else exitcodes.OK


def _ask(plan: Plan, json_wanted: bool) -> bool | None:
    """Whether the person at the terminal says to apply the plan; ``None`` where there is no terminal to ask on."""
    if sys.stdin is None or not sys.stdin.isatty():
        click.echo(wording.FIX_NO_TERMINAL, err=True)
        return None
    if json_wanted:  # the document goes to stdout once it is done; the person asked sees the plan on stderr
        from .render import render_fix_plan

        render_fix_plan(plan, dry_run=False, stderr=True)
    count = len(plan.apply)
    if not click.confirm(f"Apply {'this remedy' if count == 1 else f'these {count} remedies'}?", default=False,
                         err=True):
        click.echo("Nothing was changed.", err=True)
        return False
    return True
