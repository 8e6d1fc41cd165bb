"""``nxsock doctor``: audit every level Nx depends on; print the command that fixes each problem."""

from __future__ import annotations

import os
import sys
import typing as t

import click

from .. import exitcodes
from ..core.host_overrides import HostOverrides
from ._resolution import BadValuePointing, build_resolution, nxsock_for_root, reading_host_options, uid_value
from .summaries import summarized

#: The sandboxes ``--sandbox`` names: the ``paths --format`` values that are sandboxes.
SANDBOX_FORMATS = ("bwrap", "srt", "claude", "codex", "codex-profile", "flatpak", "docker", "seatbelt")
#: What ``--format`` prints: people's text, the JSON document, or GitHub Actions workflow commands.
OUTPUT_FORMATS = ("text", "json", "github", "openmetrics")

if t.TYPE_CHECKING:
    from ..audit.explain import Answer, Explanation
    from ..audit.findings import Context, Finding
    from ..audit.fleet import FleetVerdict, UserAudit, UserVerdict



def _complete_check_ids(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    """``--only`` completes the finding ids, as ``--list-checks`` lists them."""
    from ..audit.doctor import FINDING_IDS

    return sorted({i for ids in FINDING_IDS.values() for i in ids if i.startswith(incomplete)})


@click.command("doctor")
@reading_host_options
@click.option("--json", "json_flag", is_flag=True, help="Print one JSON document (schema_version 1).")
@click.option("--strict", is_flag=True, help="Exit 1 on warnings too.")
@click.option("-v", "--verbose", is_flag=True, help="Show the notes and what is fine too, not only the problems.")
@click.option("--list-checks", is_flag=True, help="List the finding ids, each with what it judges, and exit.")
@click.option("--only", "only", multiple=True, metavar="ID", shell_complete=_complete_check_ids,
              help="Run only the checks producing this finding id (repeatable).")
@click.option("--user", "user", callback=uid_value, metavar="UID", help="As root: audit as that user would see it.")
@click.option("--explain", "explain_text", metavar="TEXT", help="Explain a message Nx printed (- reads stdin), with the fix for this machine.")
@click.option("--sandbox", "sandbox", type=click.Choice(SANDBOX_FORMATS), metavar="FORMAT",
              help="Judge for this sandbox as well (bwrap, srt, claude, codex, codex-profile, flatpak, docker, seatbelt).")
@click.option("--format", "output_format", type=click.Choice(OUTPUT_FORMATS),
              help="text (the default), json (as --json), github: a GitHub Actions annotation per problem (notes too "
                   "with --strict), or "
                   "openmetrics: the verdict as Prometheus metrics (node_exporter's textfile collector).")
@click.option("--output", "output_file", metavar="FILE",
              help="With --format openmetrics: write the metrics to FILE whole (a temporary file renamed over it).")
@click.option("--all-users", "all_users", is_flag=True,
              help="As root: audit every user with state under /tmp/.nx (and those --users names), "
                   "each as that user sees it.")
@click.option("--users", "users_spec", metavar="UIDS",
              help="With --all-users: these uids too (1000,1002); a range (1000-1999) adds its passwd accounts.")
@click.option("--per-user-metrics", is_flag=True, help="With --format openmetrics: series by uid too (never by name).")
@click.option("--report", is_flag=True, help="Print a Markdown report to paste into an issue, home and user name masked.")
@click.option("--no-redact", is_flag=True, help="With --report: show the home directory and user name as they are.")
@click.option("--fix", is_flag=True, help="Show the plan, ask once, apply each remedy that needs no root, audit again.")
@click.option("--yes", is_flag=True, help="With --fix: apply without asking (for scripts).")
@click.option("--dry-run", is_flag=True, help="With --fix: print the plan only; change nothing.")
@summarized("doctor")
def doctor(json_flag: bool, strict: bool, verbose: bool, list_checks: bool, only: tuple[str, ...], user: int | None,
           explain_text: str | None, sandbox: str | None, output_format: str | None, report: bool, no_redact: bool,
           fix: bool, yes: bool, dry_run: bool, output_file: str | None, all_users: bool, users_spec: str | None,
           per_user_metrics: bool, host: HostOverrides) -> None:
    """The shared container, your levels, the sockets, the daemon and the binding cache.

    Each finding has a stable id, a severity (ok, info, warn, error), the path
    it is about, one sentence and, where a command fixes it, that command.
    Read-only: nothing is created, changed or removed, except with --fix,
    which applies the remedies that need no root through nxsock's own
    descriptor-based code (never the shell text), lists the rest for you, and
    audits again.  Exits 0 when there is no error (warnings allowed, unless
    --strict), 1 otherwise; --fix exits as the audit afterwards, and 1 too
    while it still finds a problem a remedy was for; 2 without a terminal
    to ask on unless --yes; 130 on Ctrl-C.

    As root, --all-users audits each user with state under /tmp/.nx as that
    user sees it (as --user does), one line per user; it never acts and never
    follows another user's link.  --format openmetrics --output FILE writes
    the verdict for node_exporter's textfile collector; 73 when FILE cannot
    be written.
    """
    from ..audit.doctor import FINDING_DESCRIPTIONS, FINDING_IDS

    json_flag = json_flag or output_format == "json"
    _check_combinations(json_flag, output_format, report, no_redact, fix, yes, dry_run, user, explain_text, list_checks, host)
    _check_fleet_combinations(json_flag, output_format, output_file, all_users, users_spec, per_user_metrics, user, fix,
                              report, explain_text)
    if list_checks:
        ids = sorted({i for ids in FINDING_IDS.values() for i in ids})
        width = max(map(len, ids))
        click.echo("\n".join(f"{i:<{width}}  {FINDING_DESCRIPTIONS.get(i, '')}".rstrip() for i in ids))
        sys.exit(exitcodes.OK)
    known = {i for ids in FINDING_IDS.values() for i in ids}
    unknown = [i for i in only if i not in known]
    if unknown:
        raise BadValuePointing(f"unknown check id {unknown[0]!r}; nxsock doctor --list-checks lists them", param_hint="--only")
    text = None
    if explain_text is not None:
        from ..audit.explain import MAX_TEXT

        text = _read_stdin(MAX_TEXT + 1) if explain_text == "-" else explain_text  # never more than is read
    if all_users:
        if os.geteuid() != 0:
            click.echo(f"nxsock doctor: --all-users needs root: sudo {nxsock_for_root()} doctor --all-users", err=True)
            sys.exit(exitcodes.NOPERM)
        sys.exit(_audit_all(users_spec, json_flag, strict, only, host, sandbox, output_format, output_file,
                            per_user_metrics))
    if output_format == "openmetrics":
        if user is not None and user != os.geteuid() and os.geteuid() != 0:
            click.echo(f"nxsock doctor: --user needs root: sudo {nxsock_for_root()} doctor --user {user}", err=True)
            sys.exit(exitcodes.NOPERM)
        sys.exit(_audit_metrics(user, strict, only, host, sandbox, output_file, per_user_metrics))
    if user is not None and user != os.geteuid():
        if os.geteuid() != 0:
            click.echo(f"nxsock doctor: --user needs root: sudo {nxsock_for_root()} doctor --user {user}", err=True)
            sys.exit(exitcodes.NOPERM)
        sys.exit(_audit_as(user, json_flag, strict, only, text, host, sandbox, output_format, report, no_redact))
    if fix:
        sys.exit(_fix(json_flag, strict, only, host, sandbox, yes=yes, dry_run=dry_run))
    sys.exit(_audit(json_flag, strict, only, text, host, sandbox, output_format=output_format, report=report, no_redact=no_redact))


def _check_combinations(json_flag: bool, output_format: str | None, report: bool, no_redact: bool, fix: bool, yes: bool,
                        dry_run: bool, user: int | None, explain_text: str | None, list_checks: bool, host: HostOverrides) -> None:
    """The options that do not go together, each as a usage error (exit 2)."""
    if (yes or dry_run) and not fix:
        raise click.UsageError("--yes and --dry-run go with --fix.")
    if no_redact and not report:
        raise click.UsageError("--no-redact goes with --report.")
    if report and (json_flag or output_format not in (None, "text")):
        raise click.UsageError("--report prints Markdown; it does not go with --json or --format.")
    if output_format == "github" and json_flag:
        raise click.UsageError("--format github and --json are exclusive.")
    if fix:
        others = [name for name, given in (("--report", report), ("--format github", output_format == "github"),
                                           ("--explain", explain_text is not None), ("--user", user is not None),
                                           ("--list-checks", list_checks), ("--home", host.home is not None),
                                           ("--tmpdir", host.tmpdir is not None), ("--nx-version", host.nx_version is not None))
                  if given]
        if others:
            raise click.UsageError(f"--fix acts on this host as it is, for you; it does not go with {others[0]}.")


def _check_fleet_combinations(json_flag: bool, output_format: str | None, output_file: str | None, all_users: bool,
                              users_spec: str | None, per_user_metrics: bool, user: int | None, fix: bool, report: bool,
                              explain_text: str | None) -> None:
    """The fleet's options that do not go together, each as a usage error (exit 2)."""
    metrics = output_format == "openmetrics"
    if metrics and json_flag:
        raise click.UsageError("--format openmetrics and --json are exclusive.")
    if (output_file is not None or per_user_metrics) and not metrics:
        raise click.UsageError("--output and --per-user-metrics go with --format openmetrics.")
    if metrics and (fix or report or explain_text is not None):
        raise click.UsageError("--format openmetrics reports the audit; "
                               "it does not go with --fix, --report or --explain.")
    if users_spec is not None and not all_users:
        raise click.UsageError("--users goes with --all-users.")
    if all_users:
        others = [name for name, given in (("--user", user is not None), ("--fix", fix), ("--report", report),
                                           ("--explain", explain_text is not None),
                                           ("--format github", output_format == "github")) if given]
        if others:
            raise click.UsageError(f"--all-users audits every user, read-only; it does not go with {others[0]}.")
    if users_spec is not None:
        from ..audit.fleet import parse_users

        try:
            parse_users(users_spec)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--users") from None


#: How long ``--explain -`` waits for its input to end when it is not a terminal: a pipe nothing closes must not hang the doctor.
STDIN_DEADLINE = 10.0


def _read_stdin(limit: int, deadline: float = STDIN_DEADLINE) -> str:
    """At most *limit* bytes of stdin, as Nx wrote them (UTF-8; any other byte kept, and later shown, as an escape).

    A terminal is read until the user ends the paste (Ctrl-D).  Anything else
    — a pipe, a FIFO, a file — is read for at most *deadline* seconds: what
    arrived by then is explained (saying so), and nothing at all is a one-line
    error, never a hang.
    """
    import select
    import time

    if sys.stdin is None:  # closed (``<&-``): nothing can arrive
        click.echo("nxsock doctor: --explain -: stdin is closed; pipe or paste what Nx printed.", err=True)
        sys.exit(exitcodes.USAGE)
    stream = getattr(sys.stdin, "buffer", sys.stdin)
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):  # no descriptor (a test runner's stdin): read what it holds
        data = stream.read(limit)
        return data.decode("utf-8", "surrogateescape") if isinstance(data, bytes) else str(data)
    interactive = os.isatty(fd)
    if interactive:
        click.echo("Paste what Nx printed, then press Ctrl-D on a line of its own:", err=True)
    chunks: list[bytes] = []
    size, ended = 0, False
    until = time.monotonic() + deadline
    try:
        while size < limit:
            if not interactive:
                left = until - time.monotonic()
                if left <= 0 or not select.select([fd], [], [], left)[0]:
                    break
            chunk = os.read(fd, min(1 << 16, limit - size))
            if not chunk:
                ended = True
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        click.echo(f"nxsock doctor: --explain -: cannot read stdin ({os.strerror(exc.errno or 0)}).", err=True)
        sys.exit(exitcodes.USAGE)
    if not ended and size < limit:
        if not size:
            click.echo(f"nxsock doctor: --explain -: nothing arrived on stdin within {deadline:g} s; pipe or paste what Nx printed.",
                       err=True)
            sys.exit(exitcodes.USAGE)
        click.echo(f"nxsock doctor: stdin did not end within {deadline:g} s; explaining the {size} bytes that arrived.", err=True)
    return b"".join(chunks).decode("utf-8", "surrogateescape")


def _audit_as(uid: int, json_flag: bool, strict: bool, only: tuple[str, ...], text: str | None, host: HostOverrides,
              sandbox: str | None = None, output_format: str | None = None, report: bool = False, no_redact: bool = False) -> int:
    """Run the audit in a child that has become *uid* (:func:`nxsock.audit.as_user.run_as`); a stopped or killed
    child is reported.

    With ``--json`` the child's document comes back through a pipe and is
    printed only once the child has exited by itself, so stdout always holds
    exactly one document.
    """
    from ..audit.as_user import run_as

    def work() -> int:
        return _as_child(lambda: _audit(json_flag, strict, only, text, host, sandbox, pasted_by_root=True,
                                        output_format=output_format, report=report, no_redact=no_redact))

    outcome = run_as(uid, work, capture=json_flag)
    failure = outcome.failure
    if failure is None and json_flag and not outcome.output:  # stdout holds exactly one document, this one if no other
        failure = f"ended with exit {outcome.code} and no report"
    if failure is not None:
        message = f"the audit as uid {uid} {failure}; it was ended and nothing it found is reported."
        click.echo(f"nxsock doctor: {message}", err=True)
        if json_flag:
            from ..output.emit import write_json
            from ..output.report import doctor_error_document

            write_json(doctor_error_document(message))
        return exitcodes.PROBLEM
    if json_flag:
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


def _audit(json_flag: bool, strict: bool, only: tuple[str, ...], text: str | None, host: HostOverrides,
           sandbox: str | None = None, *, pasted_by_root: bool = False, output_format: str | None = None,
           report: bool = False, no_redact: bool = False) -> int:
    from ..audit.doctor import gather, run_checks, status_of

    resolution, view = build_resolution(host)
    context = gather(resolution, view, sandbox, pasted_by_root=pasted_by_root, nxsock_for_root=nxsock_for_root())
    results = run_checks(context, only)  # every check (or those asked for), explained or not
    explanation: Explanation | None = None
    answers: list[Answer] = []
    if text is not None:
        explanation, answers = _explain(text, results, context)
        if explanation.messages:  # the findings that bear on what was pasted; unrecognised text keeps them all
            from ..audit.doctor import FINDING_IDS

            ids = {i for check in explanation.checks for i in FINDING_IDS.get(check, (check,))}
            chosen = [r for r in results if r[1].id in ids]
            paths = [m.path for m in explanation.messages if m.path]
            related = [r for r in chosen if not paths or r[1].path is None or any(_related(r[1].path, p) for p in paths)]
            results = related or chosen
    findings = [f for _, f in results]
    status = status_of(findings, strict)
    if json_flag:
        from ..output.emit import write_json
        from ..output.paths_json import binding_json, daemon_json, withhold_values
        from ..output.report import doctor_document

        write_json(withhold_values(doctor_document(results, status, explanation, answers, daemon_json(resolution),
                                                   binding_json(resolution, view)),
                                   resolution.environment.withheld))
    elif report:
        from ..output.report import Masks, doctor_markdown, masks_for, report_facts, report_paths

        masks = masks_for(resolution, os.environ, view)
        if no_redact:  # the home and the name shown; secrets and what a refused .env drew from the environment never
            masks = Masks((), (), masks.withheld)
        sys.stdout.write(doctor_markdown(results, status, report_facts(resolution, view, sandbox), report_paths(resolution), masks))
    elif output_format == "github":
        from ..output.report import github_annotations

        sys.stdout.write(github_annotations(results, resolution.environment.withheld, notes=strict))
    else:
        from ..output.render import render_doctor

        # --verbose only changes what the text report shows: read from the command's context here, where it is drawn
        # (for --user too, whose child audits in this process's image), rather than threaded through every audit.
        render_doctor(results, status, explanation, answers, verbose=click.get_current_context().params.get("verbose", False))
    return exitcodes.PROBLEM if status == "error" else exitcodes.OK


def _user_verdict(strict: bool, only: tuple[str, ...], host: HostOverrides, sandbox: str | None, *,
                  pasted_by_root: bool) -> UserVerdict:
    """One audit, as ``doctor --json`` makes it, with what a fleet watches beside it."""
    from ..audit.doctor import gather, run_checks, status_of
    from ..audit.fleet import verdict_of
    from ..output.paths_json import daemon_json, withhold_values
    from ..output.report import doctor_document

    resolution, view = build_resolution(host)
    context = gather(resolution, view, sandbox, pasted_by_root=pasted_by_root)
    results = run_checks(context, only)
    status = status_of([f for _, f in results], strict)
    document = withhold_values(doctor_document(results, status, None, (), daemon_json(resolution)),
                               resolution.environment.withheld)
    return verdict_of(context, results, status, exitcodes.PROBLEM if status == "error" else exitcodes.OK, document)


def _audit_user(audit: UserAudit, strict: bool, only: tuple[str, ...], host: HostOverrides,
                sandbox: str | None) -> UserAudit:
    """*audit*'s user judged as that user sees it: here for oneself, else in a child that has become that user."""
    from ..audit.as_user import run_as
    from ..audit.fleet import verdict_from_json, verdict_json
    from ..core.json_input import MAX_TEXT, JsonInputError, parse_json
    from ..output.emit import dumps

    if audit.uid == os.geteuid():
        return audit._replace(verdict=_user_verdict(strict, only, host, sandbox, pasted_by_root=False))

    def work() -> int:
        def send() -> int:
            verdict = _user_verdict(strict, only, host, sandbox, pasted_by_root=True)
            data = dumps(verdict_json(verdict)).encode("utf-8")
            while data:  # to the pipe itself, whatever object sys.stdout is (a test runner's buffer)
                data = data[os.write(1, data):]
            return exitcodes.OK

        return _as_child(send)

    outcome = run_as(audit.uid, work, capture=True, output_limit=MAX_TEXT)
    if outcome.failure is not None:
        return audit._replace(failure=f"the audit as uid {audit.uid} {outcome.failure}; "
                                      "it was ended and nothing it found is reported")
    try:
        verdict = verdict_from_json(parse_json(outcome.output.decode("utf-8", "replace")))
    except JsonInputError:
        verdict = None
    if verdict is None or verdict.uid != audit.uid:
        return audit._replace(failure=f"the audit as uid {audit.uid} ended ({outcome.code}) without a verdict")
    return audit._replace(verdict=verdict)


def _fleet(users: t.Sequence[UserAudit], started: float, started_monotonic: float, all_users: bool) -> FleetVerdict:
    import time

    from ..audit.fleet import FleetVerdict, container_state
    from ._metrics import nxsock_version

    return FleetVerdict(started, time.monotonic() - started_monotonic, container_state(), tuple(users),
                        nxsock_version(), all_users)


def _audit_metrics(user: int | None, strict: bool, only: tuple[str, ...], host: HostOverrides, sandbox: str | None,
                   output_file: str | None, per_user: bool) -> int:
    """``--format openmetrics``: this user's audit (or, as root, ``--user``'s) as metrics; exits as the audit does."""
    import pwd
    import time

    from ..audit.fleet import UserAudit
    from ..output.openmetrics import metrics_text
    from ._metrics import publish_metrics

    started, clock = time.time(), time.monotonic()
    uid = os.geteuid() if user is None else user
    try:
        name: str | None = pwd.getpwuid(uid).pw_name
    except KeyError:
        name = None
    audited = _audit_user(UserAudit(uid, name, ("asked",)), strict, only, host, sandbox)
    if audited.failure is not None:
        click.echo(f"nxsock doctor: {audited.failure}.", err=True)
    code = publish_metrics(metrics_text(_fleet([audited], started, clock, False), per_user=per_user), output_file)
    if code != exitcodes.OK:
        return code
    return audited.verdict.exit_code if audited.verdict is not None else exitcodes.PROBLEM


def _audit_all(users_spec: str | None, json_flag: bool, strict: bool, only: tuple[str, ...], host: HostOverrides,
               sandbox: str | None, output_format: str | None, output_file: str | None, per_user: bool) -> int:
    """``--all-users``: each user with state (and those named), one after another, each as that user sees it."""
    import time

    from ..audit.fleet import parse_users, users_to_audit

    started, clock = time.time(), time.monotonic()
    selection = parse_users(users_spec) if users_spec is not None else None
    audited = [_audit_user(audit, strict, only, host, sandbox) for audit in users_to_audit(selection)]
    fleet = _fleet(audited, started, clock, True)
    code = exitcodes.OK if fleet.status in ("ok", "warn") else exitcodes.PROBLEM
    if output_format == "openmetrics":
        from ..output.openmetrics import metrics_text
        from ._metrics import publish_metrics

        written = publish_metrics(metrics_text(fleet, per_user=per_user), output_file)
        return written if written != exitcodes.OK else code
    if json_flag:
        from ..output.emit import write_json
        from ..output.report import all_users_document

        write_json(all_users_document(fleet))
    else:
        from ..output.render import render_all_users

        render_all_users(fleet)
    return code


def _explain(text: str, results: t.Sequence[tuple[str, Finding]], context: Context) -> tuple[Explanation, list[Answer]]:
    """Every message recognised in *text*, each answered from these findings or with its general remedy."""
    from ..audit.doctor import FINDING_IDS
    from ..audit.explain import answer_all, explain, general_advice
    from ..audit.findings import SANDBOX_MARKERS

    explanation = explain(text)
    env = context.resolution.environment
    hints = {name: value for name in (*SANDBOX_MARKERS, "CLAUDECODE", "FLATPAK_ID", "HOME")
             if (value := env.get(name) or os.environ.get(name))}
    findings = [f for _, f in results]
    answers = answer_all(explanation.messages, findings, FINDING_IDS,  # every general remedy through the policy, on this machine
                         lambda m: general_advice(m, hints, env.platform, context.remedies, context.sandbox),
                         context.remedies.offer)
    return explanation, answers


def _related(a: str, b: str) -> bool:
    """Whether two paths are the same, or one lies beneath the other's directory."""
    a, b = a.rstrip("/"), b.rstrip("/")
    base = b.rsplit("/", 1)[0] if b.endswith(".sock") else b
    return a == b or a.startswith(base + "/") or base.startswith(a + "/") or a == base


#: Tests only: the point of ``doctor --fix`` at which the process stops itself (``SIGSTOP``), so that a test can
#: signal it there — at a known moment however fast the machine, an event and never a delay.
STOP_AT_VARIABLE = "NXSOCK_TEST_STOP_AT"


def _stop_for_tests(point: str) -> None:
    if os.environ.get(STOP_AT_VARIABLE) == point:
        import signal

        os.kill(os.getpid(), signal.SIGSTOP)


def _fix(json_flag: bool, strict: bool, only: tuple[str, ...], host: HostOverrides, sandbox: str | None, *, yes: bool,
         dry_run: bool) -> int:
    """``--fix``: the plan, one question, each remedy applied by nxsock's own code, the re-audit; Ctrl-C exits 130."""
    from ..act.interruption import Interrupted, between_entries
    from ..audit.doctor import gather, run_checks, status_of
    from ..audit.repair import Applied, apply_plan, make_plan, still_found, unreached, verdicts
    from ..core.fsview import LiveView
    from ..core.wording import context_for
    from ..output.emit import write_json
    from ..output.report import fix_document

    plan = make_plan(())
    status: str | None = None  # no audit has finished yet
    try:  # a Ctrl-C before anything is applied (the first audit, the question) still ends with the document
        resolution, view = build_resolution(host)
        _stop_for_tests("first-audit")
        program = nxsock_for_root()
        results = run_checks(gather(resolution, view, sandbox, nxsock_for_root=program), only)
        status = status_of([f for _, f in results], strict)
        plan = make_plan(f for _, f in results)
        audit_code = exitcodes.PROBLEM if status == "error" else exitcodes.OK
        if not json_flag:
            from ..output.render import render_fix_plan

            render_fix_plan(plan, dry_run=dry_run)
        if dry_run or not plan.apply:
            if json_flag:
                write_json(fix_document(plan, dry_run=dry_run, confirmed=False, interrupted=False, applied=(), after=None, status=status))
            return audit_code
        if not yes:
            if sys.stdin is None or not sys.stdin.isatty():
                click.echo("nxsock doctor: --fix asks before it changes anything and there is no terminal to ask on; "
                           "pass --yes to apply without asking, or --dry-run to see the plan.", err=True)
                if json_flag:
                    write_json(fix_document(plan, dry_run=False, confirmed=False, interrupted=False, applied=(), after=None, status=status))
                return exitcodes.USAGE
            if json_flag:  # the document goes to stdout once it is done; the person asked sees the plan on stderr
                from ..output.render import render_fix_plan

                render_fix_plan(plan, dry_run=False, stderr=True)
            if not click.confirm(f"Apply {'this remedy' if len(plan.apply) == 1 else f'these {len(plan.apply)} remedies'}?",
                                 default=False, err=True):
                click.echo("Nothing was changed.", err=True)
                if json_flag:
                    write_json(fix_document(plan, dry_run=False, confirmed=False, interrupted=False, applied=(), after=None, status=status))
                return audit_code
    except (KeyboardInterrupt, click.exceptions.Abort):  # click's question turns Ctrl-C into Abort
        if json_flag:
            write_json(fix_document(plan, dry_run=dry_run, confirmed=False, interrupted=True, applied=(), after=None, status=status))
        click.echo("\nnxsock: interrupted; nothing was changed.", err=True)
        return exitcodes.INTERRUPTED
    # The policy is asked again over the disk as it is at the moment of each step, not as the audit saw it.
    policy = context_for(resolution, LiveView()).policy
    applied: list[Applied] = []
    interrupted = False
    try:
        with between_entries() as stop:
            apply_plan(plan, policy, resolution, stop.check, applied)
            interrupted = stop.requested
    except Interrupted:
        interrupted = True
    after: list[tuple[str, t.Any]] = []
    if not interrupted:
        try:  # a Ctrl-C during the audit afterwards still says what was applied
            after_resolution, after_view = build_resolution(host)
            after = run_checks(gather(after_resolution, after_view, sandbox, nxsock_for_root=program), only)
        except KeyboardInterrupt:
            interrupted = True
    if interrupted:
        applied += unreached(plan, applied)
        if json_flag:
            write_json(fix_document(plan, dry_run=False, confirmed=True, interrupted=True, applied=applied, after=None, status=status))
        else:
            from ..output.render import render_fix_outcome

            render_fix_outcome(applied, None, status, interrupted=True)
        click.echo("nxsock: interrupted", err=True)
        return exitcodes.INTERRUPTED
    judged = verdicts(applied, plan, [f for _, f in after])
    after_status = status_of([f for _, f in after], strict)
    if json_flag:
        write_json(fix_document(plan, dry_run=False, confirmed=True, interrupted=False, applied=judged, after=after, status=after_status))
    else:
        from ..output.render import render_fix_outcome

        render_fix_outcome(judged, after, after_status, interrupted=False)
    # The exit follows the re-audit: 1 while it finds an error, or any problem a remedy of the plan was for.
    return exitcodes.PROBLEM if after_status == "error" or still_found(judged, [f for _, f in after]) else exitcodes.OK
