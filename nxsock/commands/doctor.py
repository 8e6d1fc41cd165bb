"""``nxsock doctor``: audit every level Nx depends on; print the command that fixes each problem.

The command turns its options into one :class:`~nxsock.audit.request.DoctorRequest`
and hands it to :func:`nxsock.output.doctor.run`, which audits and shows.
"""

from __future__ import annotations

import sys
import typing as t

import click

from ..core.host_overrides import HostOverrides
from ..core.sandbox_formats import FORMATS
from ._resolution import BadValuePointing, nxsock_for_root, reading_host_options, uid_value
from .summaries import summarized

if t.TYPE_CHECKING:
    from ..audit.request import DoctorRequest, Output

#: The sandboxes ``--sandbox`` names: the ``paths --format`` values that are sandboxes, in the table's order.
SANDBOX_FORMATS = tuple(name for name, row in FORMATS.items() if row.is_sandbox)
#: What ``--format`` prints: people's text, the JSON document, GitHub Actions workflow commands, or metrics.
_OUTPUTS: dict[str, Output] = {"text": "text", "json": "json", "github": "github", "openmetrics": "openmetrics"}
OUTPUT_FORMATS = tuple(_OUTPUTS)


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
@click.option(
    "--explain",
    "explain_text",
    metavar="TEXT",
    help="Explain a message Nx printed (- reads stdin), with the fix for this machine.",
)
@click.option(
    "--sandbox",
    "sandbox",
    type=click.Choice(SANDBOX_FORMATS),
    metavar="FORMAT",
    help=f"Judge for this sandbox as well ({', '.join(SANDBOX_FORMATS)}).",
)
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
@click.option(
    "--report", is_flag=True, help="Print a Markdown report to paste into an issue, home and user name masked."
)
@click.option("--no-redact", is_flag=True, help="With --report: show the home directory and user name as they are.")
@click.option("--fix", is_flag=True, help="Show the plan, ask once, apply each remedy that needs no root, audit again.")
@click.option("--yes", is_flag=True, help="With --fix: apply without asking (for scripts).")
@click.option("--dry-run", is_flag=True, help="With --fix: print the plan only; change nothing.")
@summarized("doctor")
def doctor(host: HostOverrides, **options: t.Any) -> None:
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
    from ..output.doctor import run

    sys.exit(run(_request(host, **options)))


def _request(host: HostOverrides, *, json_flag: bool, strict: bool, verbose: bool, list_checks: bool,
             only: tuple[str, ...], user: int | None, explain_text: str | None, sandbox: str | None,
             output_format: str | None, output_file: str | None, all_users: bool, users_spec: str | None,
             per_user_metrics: bool, report: bool, no_redact: bool, fix: bool, yes: bool,
             dry_run: bool) -> DoctorRequest:
    """The options, checked against each other and the checks there are, as one request (usage errors exit 2)."""
    from ..audit.doctor import FINDING_IDS
    from ..audit.request import DoctorRequest

    json_flag = json_flag or output_format == "json"
    _check_combinations(json_flag, output_format, report, no_redact, fix, yes, dry_run, user, explain_text, list_checks,
                        host)
    _check_fleet_combinations(json_flag, output_format, output_file, all_users, users_spec, per_user_metrics, user, fix,
                              report, explain_text)
    if list_checks:
        return DoctorRequest(host, nxsock_for_root(), list_checks=True)
    unknown = [i for i in only if i not in {i for ids in FINDING_IDS.values() for i in ids}]
    if unknown:
        raise BadValuePointing(f"unknown check id {unknown[0]!r}; nxsock doctor --list-checks lists them",
                               param_hint="--only")
    text = None
    if explain_text is not None:
        from ..audit.explain import MAX_TEXT
        from ._stdin import read_stdin

        text = read_stdin(MAX_TEXT + 1) if explain_text == "-" else explain_text  # never more than is read
    output: Output = "json" if json_flag else "report" if report else _OUTPUTS[output_format or "text"]
    return DoctorRequest(host, nxsock_for_root(), output=output, strict=strict, verbose=verbose, only=tuple(only),
                         sandbox=sandbox, explain=text, user=user, redact=not no_redact,
                         fix="dry-run" if dry_run else "yes" if yes else "ask" if fix else None, all_users=all_users,
                         users=users_spec, output_file=output_file, per_user_metrics=per_user_metrics)


def _check_combinations(
    json_flag: bool,
    output_format: str | None,
    report: bool,
    no_redact: bool,
    fix: bool,
    yes: bool,
    dry_run: bool,
    user: int | None,
    explain_text: str | None,
    list_checks: bool,
    host: HostOverrides,
) -> None:
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
        others = [
            name
            for name, given in (
                ("--report", report),
                ("--format github", output_format == "github"),
                ("--explain", explain_text is not None),
                ("--user", user is not None),
                ("--list-checks", list_checks),
                ("--home", host.home is not None),
                ("--tmpdir", host.tmpdir is not None),
                ("--nx-version", host.nx_version is not None),
            )
            if given
        ]
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
