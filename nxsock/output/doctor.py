"""``doctor`` as it was asked: the audit (``audit/session.py``), here or as another user, shown as the request says.

The command hands over one :class:`~nxsock.audit.request.DoctorRequest`;
this module picks the audit it asks for — this user's, another user's in a
supervised child (``audit/as_user.py``), every user's (the fleet), or
``--fix`` (``output/fixing.py``) — and shows it: the text report, the JSON
document, ``--report``'s Markdown, GitHub annotations or OpenMetrics.  It
returns the exit code.
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
    from ..audit.fleet import FleetVerdict, UserAudit, UserVerdict
    from ..audit.request import DoctorRequest
    from ..audit.session import Audited

__all__ = ["audit_as_user", "run"]


def run(request: DoctorRequest) -> int:
    """The audit *request* asks for, shown; its exit code (77 where it needs root and this is not root)."""
    euid = os.geteuid()
    if request.list_checks:
        return _list_checks()
    if request.all_users:
        if euid != 0:
            return _needs_root(request, "--all-users", "--all-users")
        return _audit_all(request)
    if request.output == "openmetrics":
        if request.user is not None and request.user != euid and euid != 0:
            return _needs_root(request, "--user", f"--user {request.user}")
        return _audit_metrics(request)
    if request.user is not None and request.user != euid:
        if euid != 0:
            return _needs_root(request, "--user", f"--user {request.user}")
        return audit_as_user(request)
    if request.fix is not None:
        from .fixing import fix

        return fix(request)
    return _audit_and_show(request)


def _needs_root(request: DoctorRequest, option: str, again: str) -> int:
    click.echo(wording.doctor_needs_root(option, request.program, again), err=True)
    return exitcodes.NOPERM


def _list_checks() -> int:
    """``--list-checks``: each finding id with what it judges."""
    from ..audit.doctor import FINDING_DESCRIPTIONS, FINDING_IDS

    ids = sorted({i for ids in FINDING_IDS.values() for i in ids})
    width = max(map(len, ids))
    click.echo("\n".join(f"{i:<{width}}  {FINDING_DESCRIPTIONS.get(i, '')}".rstrip() for i in ids))
    return exitcodes.OK


def _audit_and_show(request: DoctorRequest, *, pasted_by_root: bool = False) -> int:
    """This user's audit (or, in a child that became another user, that user's), shown; 1 on an error."""
    from ..audit.session import audit

    resolution, view = build_resolution(request.host)
    audited = audit(resolution, view, sandbox=request.sandbox, only=request.only, strict=request.strict,
                    text=request.explain, pasted_by_root=pasted_by_root, nxsock_for_root=request.program)
    _show(audited, request)
    return exitcodes.PROBLEM if audited.status == "error" else exitcodes.OK


def _show(audited: Audited, request: DoctorRequest) -> None:
    """One audit as *request* asks: the JSON document, ``--report``'s Markdown, annotations, or the text report."""
    resolution, results, status = audited.resolution, audited.results, audited.status
    withheld = resolution.environment.withheld
    if request.output == "json":
        from .emit import write_json
        from .paths_json import binding_json, daemon_json, withhold_values
        from .report import doctor_document

        write_json(withhold_values(doctor_document(results, status, audited.explanation, audited.answers,
                                                   daemon_json(resolution), binding_json(resolution, audited.view)),
                                   withheld))
    elif request.output == "report":
        from .report import Masks, doctor_markdown, masks_for, report_facts, report_paths

        masks = masks_for(resolution, os.environ, audited.view)
        if not request.redact:  # the home and the name shown; secrets and what a refused .env drew never
            masks = Masks((), (), masks.withheld)
        sys.stdout.write(doctor_markdown(results, status, report_facts(resolution, audited.view, request.sandbox),
                                         report_paths(resolution), masks))
    elif request.output == "github":
        from .report import github_annotations

        sys.stdout.write(github_annotations(results, withheld, notes=request.strict))
    else:
        from .render import render_doctor

        render_doctor(results, status, audited.explanation, audited.answers, verbose=request.verbose)


def audit_as_user(request: DoctorRequest) -> int:
    """``--user`` as root: the audit in a child that has become that user (:func:`nxsock.audit.as_user.audit_as`).

    With ``--json`` the child's document comes back through a pipe and is
    printed only once the child has exited by itself, so stdout always holds
    exactly one document; a stopped, killed or silent child is reported.
    """
    from ..audit.as_user import audit_as

    assert request.user is not None
    capture = request.output == "json"
    outcome = audit_as(request.user, lambda: _as_child(lambda: _audit_and_show(request, pasted_by_root=True)),
                       capture=capture)
    if outcome.failure is not None:
        message = f"{outcome.failure_message(request.user)}."
        click.echo(f"nxsock doctor: {message}", err=True)
        if capture:
            from .emit import write_json
            from .report import doctor_error_document

            write_json(doctor_error_document(message))
        return exitcodes.PROBLEM
    if capture:
        sys.stdout.buffer.write(outcome.output)
        sys.stdout.flush()
    return outcome.code


def _as_child(audit: t.Callable[[], int]) -> int:
    """The child's side of an audit as another user: a bad value found as that user is shown as click shows it."""
    try:
        return audit()
    except click.ClickException as exc:  # a bad value, found as that user
        exc.show()
        return exc.exit_code
    except exitcodes.OutputFailed as exc:  # the standard output it shares refused a write
        click.echo(f"nxsock: {exc}", err=True)
        return exitcodes.IOERR


# -- the fleet: --all-users, and --format openmetrics ------------------------------------------


def _user_verdict(request: DoctorRequest, *, pasted_by_root: bool) -> UserVerdict:
    """One audit, as ``doctor --json`` makes it, with what a fleet watches beside it."""
    from ..audit.fleet import verdict_of
    from ..audit.session import audit
    from .paths_json import daemon_json, withhold_values
    from .report import doctor_document

    resolution, view = build_resolution(request.host)
    audited = audit(resolution, view, sandbox=request.sandbox, only=request.only, strict=request.strict,
                    pasted_by_root=pasted_by_root)
    document = withhold_values(doctor_document(audited.results, audited.status, None, (), daemon_json(resolution)),
                               resolution.environment.withheld)
    code = exitcodes.PROBLEM if audited.status == "error" else exitcodes.OK
    return verdict_of(audited.context, audited.results, audited.status, code, document)


def _audit_user(audit: UserAudit, request: DoctorRequest) -> UserAudit:
    """*audit*'s user judged as that user sees it: here for oneself, else in a child that has become that user."""
    from ..audit.as_user import run_as, send
    from ..audit.fleet import verdict_from_json, verdict_json
    from ..core.json_input import MAX_TEXT, JsonInputError, parse_json
    from .emit import dumps

    if audit.uid == os.geteuid():
        return audit._replace(verdict=_user_verdict(request, pasted_by_root=False))

    def verdict_to_parent() -> int:
        send(dumps(verdict_json(_user_verdict(request, pasted_by_root=True))).encode("utf-8"))
        return exitcodes.OK

    outcome = run_as(audit.uid, lambda: _as_child(verdict_to_parent), capture=True, output_limit=MAX_TEXT)
    if outcome.failure is not None:
        return audit._replace(failure=outcome.failure_message(audit.uid))
    try:
        verdict = verdict_from_json(parse_json(outcome.output.decode("utf-8", "replace")))
    except JsonInputError:
        verdict = None
    if verdict is None or verdict.uid != audit.uid:
        return audit._replace(failure=wording.audit_without_verdict(audit.uid, outcome.code))
    return audit._replace(verdict=verdict)


def _fleet(users: t.Sequence[UserAudit], started: float, started_monotonic: float, all_users: bool) -> FleetVerdict:
    import time

    from ..audit.fleet import FleetVerdict, container_state
    from .publish import nxsock_version

    return FleetVerdict(started, time.monotonic() - started_monotonic, container_state(), tuple(users),
                        nxsock_version(), all_users)


def _audit_metrics(request: DoctorRequest) -> int:
    """``--format openmetrics``: this user's audit (or, as root, ``--user``'s) as metrics; exits as the audit does."""
    import pwd
    import time

    from ..audit.fleet import UserAudit
    from .openmetrics import metrics_text
    from .publish import publish_metrics

    started, clock = time.time(), time.monotonic()
    uid = os.geteuid() if request.user is None else request.user
    try:
        name: str | None = pwd.getpwuid(uid).pw_name
    except KeyError:
        name = None
    audited = _audit_user(UserAudit(uid, name, ("asked",)), request)
    if audited.failure is not None:
        click.echo(f"nxsock doctor: {audited.failure}.", err=True)
    fleet = _fleet([audited], started, clock, False)
    code = publish_metrics(metrics_text(fleet, per_user=request.per_user_metrics), request.output_file)
    if code != exitcodes.OK:
        return code
    return audited.verdict.exit_code if audited.verdict is not None else exitcodes.PROBLEM


def _audit_all(request: DoctorRequest) -> int:
    """``--all-users``: each user with state (and those named), one after another, each as that user sees it."""
    import time

    from ..audit.fleet import parse_users, users_to_audit

    started, clock = time.time(), time.monotonic()
    selection = parse_users(request.users) if request.users is not None else None
    audited = [_audit_user(audit, request) for audit in users_to_audit(selection)]
    fleet = _fleet(audited, started, clock, True)
    code = exitcodes.OK if fleet.status in ("ok", "warn") else exitcodes.PROBLEM
    if request.output == "openmetrics":
        from .openmetrics import metrics_text
        from .publish import publish_metrics

        written = publish_metrics(metrics_text(fleet, per_user=request.per_user_metrics), request.output_file)
        return written if written != exitcodes.OK else code
    if request.output == "json":
        from .emit import write_json
        from .report import all_users_document

        write_json(all_users_document(fleet))
    else:
        from .render import render_all_users

        render_all_users(fleet)
    return code
