"""Human output: the one module that imports rich, and only when text is drawn.

Every line has a word as well as a symbol, so it reads without colour;
``NO_COLOR`` is honoured by rich itself.  Paths are shown escaped, so a name
with a newline or a terminal escape in it cannot forge output.
"""

from __future__ import annotations

import typing as t

from rich.console import Console
from rich.text import Text

from ..core import wording_paths as said
from ..core.layout import CONTAINER
from ..core.resolver import Resolution
from ..core.severity import SEVERITIES
from ..core.terminal import counted, printable, printable_lines
from ..core.wording_paths import GENERATION, PROVISION_PAST, PROVISION_WOULD, TIER_WHY
from .paths_json import fix_line, paths_document

if t.TYPE_CHECKING:
    from ..act.tmpfiles import TmpfilesChange
    from ..audit.binding_cache import CacheListing, Verdict
    from ..audit.explain import Answer, Explanation
    from ..audit.findings import Finding
    from ..audit.fleet import FleetVerdict

__all__ = ["render_check_root", "render_paths"]

def _console(stderr: bool = False) -> Console:
    # Nothing handed to the console is parsed as markup or emoji codes, and nothing is wrapped:
    # a long line runs on (the terminal folds it for the eye, a copy gets it whole), so a path or a
    # remedy is never cut by a newline, whatever the width or COLUMNS say.
    return Console(stderr=stderr, highlight=False, soft_wrap=True, markup=False, emoji=False)


def _prose(console: Console, head: Text | str, body: str, *, indent: int, style: str = "") -> None:
    """Print *head* and the sentence *body* wrapped at word boundaries on a terminal (a path or a command is never
    cut); one line in a pipe."""
    head = head if isinstance(head, Text) else Text(head, style=style)
    for line in _wrapped(head, body, console.width if console.is_terminal else None, indent=indent, style=style):
        console.print(line)


def _columns(header: t.Sequence[str], rows: t.Sequence[t.Sequence[Text | str]], gap: int = 2) -> list[Text]:
    """A table as lines: each column as wide as its widest cell, no cell ever folded, no trailing blanks."""
    cells = [[c if isinstance(c, Text) else Text(c) for c in row] for row in [list(header), *rows]]
    widths = [max(row[i].cell_len for row in cells) for i in range(len(header))]
    lines = []
    for number, row in enumerate(cells):
        line = Text(style="bold" if number == 0 else "")
        for i, cell in enumerate(row):
            line.append_text(cell)
            if i < len(row) - 1:
                line.append(" " * (widths[i] - cell.cell_len + gap))
        line.rstrip()
        lines.append(line)
    return lines


class _Refusals:
    """Prints each refusal once in full; a refusal met again is named in one line, not repeated."""

    def __init__(self, console: Console) -> None:
        self._console = console
        self._seen: set[tuple[str, str | None]] = set()

    def show(self, refusal: t.Mapping[str, t.Any], indent: str = "  ", *, name_repeat: bool = False) -> None:
        """The refusal in full the first time; again only as a pointer when *name_repeat*, else not at all."""
        key = (refusal["message"], refusal.get("remedy"))
        if key in self._seen:
            if name_repeat and refusal.get("dir"):
                self._console.print(
                    Text(f"{indent}✗ refused  ", style="red") + Text(f"{printable(refusal['dir'])} (shown above)")
                )
            return
        self._seen.add(key)
        _refusal_lines(self._console, refusal, indent)


def _refusal_lines(console: Console, refusal: t.Mapping[str, t.Any], indent: str = "  ") -> None:
    _prose(console, Text(f"{indent}✗ refused  ", style="red"), printable(refusal["message"]), indent=len(indent) + 11)
    if refusal.get("remedy"):
        console.print(Text(f"{indent}    fix:  ", style="bold") + Text(printable(refusal["remedy"]), style="cyan"))
    if refusal.get("hint"):
        _prose(console, f"{indent}    note: ", printable(refusal["hint"]), indent=len(indent) + 10, style="dim")


def render_paths(resolution: Resolution) -> None:
    """Each artifact, its path, its tier and why; refusals with their remedies; what Nx would create."""
    doc = paths_document(resolution)
    out = _console()
    refusals = _Refusals(out)
    env = resolution.environment
    version = env.nx_version or ("not given (--nx-version)" if env.simulated else "not installed")
    if env.nx_version_rejected is not None:  # quoted as JSON: one line, whatever the file holds
        version = said.version_rejected(env.nx_version_rejected[0][:60], env.nx_version_rejected[1])
    assumed = ""
    if resolution.layout_assumed:
        newer = said.newer_than_known(printable(env.nx_version)) if env.nx_version else said.NO_VERSION_KNOWN
        assumed = said.predicted_as(resolution.rules.release, newer)
    out.print(Text(f"Nx {printable(version)}: {GENERATION[resolution.generation]}{assumed}", style="bold"))
    how = "from" if env.simulated else "found by"
    where = f"workspace {printable(env.workspace_root)} ({how} {printable(env.workspace_source)})"
    who = "" if env.platform == "win32" else f", uid {env.uid}"
    out.print(
        Text(f"{where}, platform {env.platform}{who}" + (said.FRESH_MACHINE if env.simulated else ""))
    )
    for name, var in sorted(env.variables.items()):
        if name.startswith("NX_"):
            out.print(Text(f"  {printable(name)}={printable(var.value)}  (from {printable(var.source)})", style="dim"))
    daemon = doc["daemon"]
    if daemon["enabled"] is not None:
        out.print(
            Text(
                "Daemon: on"
                if daemon["enabled"]
                else said.paths_daemon_off(", ".join(daemon["reasons"])),
                style="" if daemon["enabled"] else "yellow",
            )
        )
    out.print()

    root = doc["socket_root"]
    if root["invalid"]:
        invalid = root["invalid"]
        out.print(Text(said.SOCKET_ROOT_REFUSED, style="bold red"))
        refusals.show(
            {"message": invalid["message"], "remedy": invalid["remedy"], "hint": invalid["hint"], "dir": invalid["dir"]}
        )
    elif root["tier"] is None:
        out.print(Text(said.SOCKET_ROOT_NONE, style="bold red"))
    else:
        out.print(
            Text("Socket root: ", style="bold")
            + Text(printable(root["root"]))
            + Text(f"  [{root['tier']}]", style="green")
        )
        out.print(Text(f"  why: {TIER_WHY[root['tier']]}", style="dim"))
        if root["demoted_from"]:
            out.print(Text(f"  demoted from {printable(root['demoted_from'])}", style="yellow"))
        if root["refused_configured_dir"]:
            out.print(Text(f"  NX_SOCKET_DIR {printable(root['refused_configured_dir'])} was refused", style="yellow"))
    for refusal in root["refusals"]:
        refusals.show(refusal)
    if root["failure"]:
        refusals.show(root["failure"])
    out.print()

    rows: list[list[Text | str]] = []
    for kind, sock in doc["sockets"].items():
        if not sock["placed"]:
            rows.append([kind, "-", "", Text(said.NOT_PLACED, style="dim")])
        elif sock["tier"] is None:
            rows.append([kind, "-", "", Text("no directory", style="red")])
        else:
            status = Text(f"{sock['length']}/95" + (" too long" if sock["too_long"] else ""),
                          style="red" if sock["too_long"] else "")
            rows.append([kind, sock["tier"], status, printable(sock["path"] or sock["pattern"])])
    # The path last: a long one runs on at the end of its line, never pushing a column after it.
    for line in _columns(("socket", "tier", "length", "path"), rows):
        out.print(line)
    if any(sock["tier"] is not None for sock in doc["sockets"].values()):
        out.print(Text(said.LENGTHS_COUNT, style="dim"))
        if resolution.rules.readiness_socket:
            out.print(Text(said.READINESS_SOCKET, style="dim"))
    id_budget = doc["sockets"]["plugin"].get("id_budget")
    if id_budget is not None and doc["sockets"]["plugin"]["tier"] is not None:
        if id_budget > 0:
            out.print(Text(said.plugin_id_budget(counted(id_budget, 'character')), style="dim"))
        else:
            out.print(Text(said.no_plugin_id_fits(95 - id_budget), style="red"))
    for kind, sock in doc["sockets"].items():
        if sock["windows_max_username"] is not None:
            fits = counted(sock["windows_max_username"], "character")
            out.print(Text(said.windows_user_name(kind, fits), style="dim"))
        for refusal in sock["refusals"]:
            out.print(Text(said.leaf_refused(kind)))
            refusals.show(refusal, "    ")
        if sock["failure"]:
            refusals.show(sock["failure"], "    ")
    record = doc["daemon_record"]
    if record:
        state = {True: "alive", False: "not running", None: "unknown"}[record["alive"]]
        if record["problem"]:
            named = f": {printable(record['socket_path'])}" if record["socket_path"] else ""
            out.print(
                Text(
                    f"Daemon record: {printable(record['file'])} {printable(record['problem'])}{named}", style="yellow"
                )
            )
        else:
            answer = {"answers": "answers", "ECONNREFUSED": said.RECORD_STALE}.get(
                record["connect"], record["connect"] or "not probed"
            )
            out.print(Text(said.daemon_record(record['pid'], state, printable(record['socket_path']), answer)))
            if record["client_refusal"]:
                out.print(Text(said.client_refuses_record(printable(version)), style="yellow"))
                refusals.show(record["client_refusal"], "    ")
    refused = doc["sockets"]["daemon"].get("client_refusal")
    inside = (doc.get("user_namespace_sandbox") or {}).get("inside")
    if refused and not record and not inside:  # no daemon yet: where it would bind (a sandbox says it itself)
        out.print(
            Text(said.client_will_not_dial(resolution.rules.release), style="yellow")
            + Text(printable(refused["message"]))
        )
        out.print(Text(said.CLIENT_RUNS_WITHOUT, style="dim"))
    out.print()

    cache = doc["native_cache"]
    if cache["dir"]:
        out.print(Text("Native binding cache: ", style="bold") + Text(printable(cache["dir"])))
    else:
        out.print(
            Text("Native binding cache: ", style="bold")
            + Text(said.cache_bypassed(printable(cache['bypass_reason'])), style="yellow")
        )
    for refusal in cache["refusals"]:
        refusals.show(refusal, name_repeat=True)
    data = doc["workspace_data"]
    out.print(Text("Workspace data: ", style="bold") + Text(f"{printable(data['dir'])} ({data['source']})"))
    if data["untrusted_reason"]:
        word = "refused" if data["refused"] else "allowed by NX_ALLOW_INSECURE_DIRECTORIES"
        out.print(
            Text(
                f"  untrusted ({word}): {printable(data['untrusted_reason'])}",
                style="red" if data["refused"] else "yellow",
            )
        )
    task_cache = doc.get("cache_directory")
    if task_cache:
        out.print(
            Text("Task cache: ", style="bold")
            + Text(f"{printable(task_cache['dir'])} ({printable(task_cache['source'])})")
        )
        if task_cache["untrusted_reason"]:
            word = said.TASK_CACHE_STOPS_NX if task_cache["refused"] else "allowed by NX_ALLOW_INSECURE_DIRECTORIES"
            out.print(Text(f"  untrusted ({word}): {printable(task_cache['untrusted_reason'])}",
                           style="red" if task_cache["refused"] else "yellow"))
    if doc["actions"]:
        out.print(Text("Nx would:", style="bold"))
        for action in doc["actions"]:
            out.print(Text(f"  {action['verb']} {printable(action['path'])} ({action['mode']})"))
    allow = doc["allowlist"]
    if allow["write"] or allow["unix_sockets"]:
        out.print(Text(said.SANDBOX_MUST_ALLOW, style="bold"))
        if allow["write"]:
            out.print(Text("  writes in " + ", ".join(printable(p) for p in allow["write"])))
        if allow["unix_sockets"]:
            out.print(Text("  unix sockets in " + ", ".join(printable(p) for p in allow["unix_sockets"])))
    sandbox = doc["user_namespace_sandbox"]
    if sandbox and not sandbox["daemon_usable"]:
        _prose(out, Text(said.IN_USERNS_SANDBOX, style="bold yellow"), printable(sandbox["message"]), indent=2)
        out.print(Text("  inside:  ", style="bold") + Text(f"{printable(sandbox['run_inside'])} nx …", style="cyan"))
        _prose(out, "  note: ", printable(sandbox["marker_warning"]), indent=8, style="dim")


def render_check_root(document: t.Mapping[str, t.Any]) -> None:
    """The verdict on the shared container, for you, in one line, with the refusal's fix or the provisioning command.

    It judges the container alone, not whether Nx works: Nx falls back to ``~/.nx`` past an unsafe one, which is
    what ``doctor`` judges; the line says so, so that the two never read as disagreeing.
    """
    out = _console()
    path = printable(document["path"])
    if document["state"] == "absent":
        out.print(
            Text("✓ safe  ", style="green")
            + Text(said.container_absent(path))
        )
        if document["provision_command"]:
            out.print(Text(said.provision_for_everyone(document['provision_command']), style="dim"))
    elif document["safe"]:
        out.print(
            Text("✓ safe  ", style="green")
            + Text(said.container_safe(path))
        )
    else:
        out.print(
            Text("✗ unsafe", style="red")
            + Text(said.container_unsafe(path))
        )
        _refusal_lines(out, document["refusal"])


PAST = PROVISION_PAST
FUTURE = PROVISION_WOULD


def render_provision(document: t.Mapping[str, t.Any]) -> None:
    """Each step in past or conditional tense, then the verdict, or the refusal with its command."""
    out = _console()
    words = FUTURE if document["dry_run"] else PAST
    for step in document["steps"]:
        mode = f" ({step['mode']})" if step["verb"] in ("create", "tighten", "chmod") else ""
        out.print(Text(f"  {words[step['verb']]} {printable(step['path'])}{mode}"))
    if document["refusal"]:
        out.print(Text("✗ refused", style="red"))
        _refusal_lines(out, document["refusal"])
        return
    who = said.PROVISIONED_FOR_EVERYONE if document["as_root"] else said.PROVISIONED_FOR_YOU
    if not document["changed"]:
        out.print(Text("✓ already provisioned ", style="green") + Text(said.already_provisioned(who)))
    elif document["dry_run"]:
        out.print(Text("… dry run: ", style="yellow") + Text("nothing was changed."))
    else:
        out.print(Text("✓ provisioned ", style="green") + Text(who + "."))


def render_tmpfiles(changes: t.Sequence[TmpfilesChange], dry_run: bool = False) -> None:
    """Each change to the drop-in, then what a dry run or ``--check`` means."""
    out = _console()
    for change in changes:
        style = "red" if change.verb == "refuse" else ""
        out.print(Text(f"  {printable(change.path)}: {printable(change.detail)}", style=style))
    if dry_run:
        out.print(Text("… dry run: ", style="yellow") + Text("nothing was changed."))


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"  # pragma: no cover - the loop always returns


def render_cache_listing(listing: CacheListing, plan: t.Sequence[tuple[t.Any, str]] = ()) -> None:
    """Entries grouped by version, each with its state in words; the total, and what ``prune`` would reclaim
    (*plan*)."""
    from ..core import wording  # the sentences; loaded by doctor, not by paths' report

    out = _console()
    if listing.bypass_reason:
        out.print(Text(wording.BINDING_IN_PLACE.format(reason=printable(listing.bypass_reason)), style="yellow"))
    if listing.dir:
        out.print(Text("Cache: ", style="bold") + Text(printable(listing.dir)))
    if listing.binding:
        _prose(out, "Installed binding: ", printable(listing.binding.path), indent=2)
    if listing.problem:
        out.print(Text(f"  {printable(listing.problem)}", style="red"))
    if not listing.entries:
        if listing.dir:
            out.print(Text("  (empty)", style="dim"))
        return
    rows = []
    for entry in listing.entries:
        words = ["interrupted copy" if entry.partial else None,
                 None if entry.trusted else "untrusted",
                 {True: "fresh", False: "stale", None: "other binding"}[entry.fresh] if not entry.partial else None,
                 "in use" if entry.in_use else None]
        rows.append([printable(entry.version), _size(entry.size), ", ".join(w for w in words if w),
                     printable(entry.path.rsplit("/", 1)[-1])])
    for line in _columns(("version", "size", "state", "entry"), rows):
        out.print(line)
    reclaim = (len(plan), _size(sum(entry.size for entry, _ in plan))) if plan else None
    out.print(Text(wording.cache_total(len(listing.entries), _size(listing.total_size), reclaim), style="dim"))


def render_unused_basis(listing: CacheListing) -> None:
    """What ``--unused-for`` judged by: load (access) times where the mount records them, else copy times."""
    from ..core import wording

    _console().print(Text(wording.unused_basis(bool(listing.access_times)), style="dim"))


def render_verdict(verdict: Verdict) -> None:
    out = _console()
    good = verdict.state in ("fresh", "bypassed")
    mark = Text("✓ " + verdict.state + "  ", style="green") if good else Text("✗ " + verdict.state + "  ", style="red")
    out.print(mark + Text(printable(verdict.message)))
    fix = fix_line(verdict.advice)
    if fix:
        out.print(Text("    fix:  ", style="bold") + Text(printable(fix), style="cyan"))


#: Lines shown per outcome before the rest are only counted: a flood of entries is a summary, not a flood.
REMOVAL_LINES = 20


def render_removals(rows: t.Sequence[tuple[str, str, str | None, int]], dry_run: bool, *,
                    marker_reason: str | None = None, interrupted: bool = False) -> None:
    """The marker's reason as lines, one line per entry (at most :data:`REMOVAL_LINES` per outcome, the rest
    counted), then a summary: counts, space freed, and an interruption."""
    from ..core import wording

    out = _console()
    if marker_reason is not None:
        reason = printable_lines(marker_reason) or ["(no reason given)"]
        out.print(Text(wording.MARKER_REASON))
        for line in reason:
            out.print(Text(f"  | {line}", style="dim"))
    verb = "would remove" if dry_run else "removed"
    freed = 0
    shown: dict[str, int] = {}
    for path, outcome, why, size in rows:
        if outcome == "removed":
            freed += size
        shown[outcome] = shown.get(outcome, 0) + 1
        if shown[outcome] > REMOVAL_LINES:
            continue
        if outcome == "removed":
            _prose(out, f"  {verb} ", f"{printable(path)}  ({printable(why)}, {_size(size)})", indent=4)
        elif outcome == "failed":
            failed_line = wording.COULD_NOT_REMOVE.format(path=printable(path), why=printable(why))
            out.print(Text("  " + failed_line, style="red"))
        else:
            out.print(Text(f"  {outcome} {printable(path)}: {printable(why)}", style="yellow"))  # kept or refused
    for outcome, count in shown.items():
        if count > REMOVAL_LINES:
            word = verb if outcome == "removed" else wording.COULD_NOT_BE_REMOVED if outcome == "failed" else outcome
            out.print(Text("  " + wording.more_not_listed(count - REMOVAL_LINES, word), style="dim"))
    removed = sum(1 for _, outcome, _, _ in rows if outcome == "removed")
    failed = sum(1 for _, outcome, _, _ in rows if outcome == "failed")
    summary = wording.removal_summary(dry_run, removed, _size(freed), failed, interrupted)
    out.print(Text(summary, style="bold yellow" if interrupted else "bold"))


class _Ticker:
    """A spinner with a count on stderr, for walks over thousands of directories."""

    def __init__(self, label: str) -> None:
        from rich.progress import Progress, SpinnerColumn, TextColumn

        self._progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}: {task.completed} examined"),
            console=Console(stderr=True, markup=False, emoji=False, highlight=False),
            transient=True,
        )
        self._task = self._progress.add_task(printable(label), total=None)
        self._progress.start()

    def tick(self) -> None:
        self._progress.advance(self._task)

    def stop(self) -> None:
        self._progress.stop()


def progress_ticker(label: str) -> _Ticker:
    return _Ticker(label)


#: severity → (mark, word, style), from the one declaration (core/severity.py).
MARKS = {name: (look.mark, look.word, look.style) for name, look in SEVERITIES.items()}


def render_doctor(results: t.Sequence[tuple[str, Finding]], status: str, explanation: Explanation | None = None,
                  answers: t.Sequence[Answer] = (), *, verbose: bool = False) -> None:
    """The answer first, then the other problems, each remedy once; the notes and what is fine with *verbose*.

    The first lines say whether Nx works here and, when it does not, what fails first and the command that fixes
    it (with every other finding that command fixes); the other problems follow, those one command fixes grouped
    under it.  A healthy machine's report is its verdict and one line saying what ``-v`` adds.  Prose wraps at
    word boundaries on a terminal; a path or a command is never cut by nxsock's own newline (the terminal folds a
    long one for the eye, a copy gets it whole).
    """
    from ..core import wording  # the sentences; loaded by doctor, not by paths' report

    out = _console()
    width = out.width if out.is_terminal else None
    if explanation is not None:
        _render_explanation(out, explanation, answers, bool(results))
    problems = [(g, f) for g, f in results if f.severity == "error"] + [
        (g, f) for g, f in results if f.severity == "warn"
    ]
    first_fix = fix_line(problems[0][1].advice) if problems else None
    lead = [f for _, f in problems if f is problems[0][1] or (first_fix and fix_line(f.advice) == first_fix)]
    for line in _verdict(results, lead, width):
        out.print(line)
    shown = [(g, f) for g, f in (results if verbose else problems) if not any(f is x for x in lead)]
    if not verbose:
        shown = [(g, f) for g, f in results if any(f is x for _, x in shown)]  # back in report order
    if shown:
        out.print()
        _render_groups(out, shown, width)
    counts = {severity: sum(1 for _, f in results if f.severity == severity) for severity in MARKS}
    hidden = not verbose and any(f.severity not in ("error", "warn") for _, f in results)
    summary = wording.doctor_summary(counts, more_with_verbose=hidden)
    out.print()
    for line in _wrapped(Text(SEVERITIES[status].mark + " ", style=MARKS[status][2] + " bold"),
                         summary, width, indent=2, style=MARKS[status][2] + " bold"):
        out.print(line)


def _mark(severity: str) -> Text:
    """A severity's mark, bold in its colour, as a verdict line starts."""
    look = SEVERITIES[severity]
    return Text(look.mark + " ", style=look.style + " bold")


def _verdict(results: t.Sequence[tuple[str, Finding]], lead: t.Sequence[Finding], width: int | None) -> list[Text]:
    """Whether Nx works here; when something is wrong, the first problem, every other one its command fixes, the
    command once and its notes."""
    from ..core import wording  # the sentences; loaded by doctor, not by paths' report

    if not lead:
        outcome = next((f for _, f in results if f.id == "outcome" and f.severity == "ok"), None)
        text = wording.verdict_sentence("ok", None if outcome is None else printable(outcome.message))
        return _wrapped(_mark("ok"), text, width, indent=2)
    first = lead[0]
    warnings = sum(1 for _, f in results if f.severity == "warn")
    severity = "error" if first.severity == "error" else "warn"
    text = wording.verdict_sentence(severity, printable(first.message), warnings)
    lines = _wrapped(_mark(severity), text, width, indent=2, tail=Text(f"  [{first.id}]", style="dim"))
    lines += [Text(f"  | {printable(line)}", style="dim") for line in getattr(first, "detail", ())]
    for other in lead[1:]:
        lines += _wrapped(Text("  and: ", style="bold"), printable(other.message), width, indent=7,
                          tail=Text(f"  [{other.id}]", style="dim"))
    fix = fix_line(first.advice)
    if fix:
        lines.append(Text("  fix:  ", style="bold") + Text(printable(fix), style="cyan"))
    for hint in dict.fromkeys(f.hint for f in lead if f.hint):
        lines += _wrapped(Text("  note: ", style="dim"), printable(hint), width, indent=8, style="dim")
    return lines


def _render_groups(out: Console, results: t.Sequence[tuple[str, Finding]], width: int | None) -> None:
    """The findings under their group's heading; findings one command fixes are listed together, the fix once."""
    group = None
    for name, members in _by_remedy(results):
        if name != group:
            if group is not None:
                out.print()
            out.print(Text(name, style="bold underline"))
            group = name
        for finding in members:
            symbol, word, style = MARKS[finding.severity]
            for line in _wrapped(
                Text(f"  {symbol} {word:5} ", style=style),
                printable(finding.message),
                width,
                indent=10,
                tail=Text(f"  [{finding.id}]", style="dim"),
            ):
                out.print(line)
            for line in getattr(finding, "detail", ()):
                out.print(Text(f"        | {printable(line)}", style="dim"))
        fix = fix_line(members[0].advice)
        if fix:
            label = "      fix:  " if len(members) == 1 else f"      fix ({counted(len(members), 'finding')}):  "
            out.print(Text(label, style="bold") + Text(printable(fix), style="cyan"))
        for hint in dict.fromkeys(f.hint for f in members if f.hint):
            for line in _wrapped(Text("      note: ", style="dim"), printable(hint), width, indent=12, style="dim"):
                out.print(line)


def _by_remedy(results: t.Sequence[tuple[str, Finding]]) -> list[tuple[str, list[Finding]]]:
    """*results* in report order, a finding whose remedy an earlier one gave moved up beside it (whatever its group:
    a peer's /tmp/.nx is the container's, the outcome's and the cache's problem, and one command)."""
    groups: list[tuple[str, list[Finding]]] = []
    placed: dict[str, list[Finding]] = {}
    for name, finding in results:
        key = fix_line(finding.advice) or None
        if key is not None and key in placed:
            placed[key].append(finding)
            continue
        members = [finding]
        groups.append((name, members))
        if key is not None:
            placed[key] = members
    return groups


def _wrapped(head: Text, body: str, width: int | None, *, indent: int, style: str = "",
             tail: Text | None = None) -> list[Text]:
    """*head* then *body* (and *tail*), wrapped at word boundaries to *width* with a hanging *indent*; one line
    when *width* is ``None`` (not a terminal: a pipe or a file gets each finding on one line, for grep).

    A word longer than the line (a path, a command) is never broken: it stands on a line of its own, which the
    terminal folds for the eye and a copy gets whole.
    """
    if width is None or head.cell_len + len(body) + (tail.cell_len if tail else 0) <= width:
        line = head + Text(body, style=style)
        return [line + tail if tail else line]
    import re
    import textwrap

    # A command quoted in prose (`…`, or "Or: <command> — why") is one word to the wrapper: a copy gets it whole.
    glued = re.sub(r"`[^`]*`|(?<=Or: )[^—`]*?(?= — )", lambda m: m[0].replace(" ", "\0"), body)
    opening = len(glued.split(" ", 1)[0])
    if head.cell_len + opening > width >= indent + opening:  # a path that fits a line of its own starts one
        head_alone = head.copy()
        head_alone.rstrip()
        return [head_alone, *_wrapped(Text(" " * indent), body, width, indent=indent, style=style, tail=tail)]
    first, *more = [line.replace("\0", " ") for line in textwrap.wrap(
        glued, width=max(indent + 20, width), initial_indent=" " * head.cell_len, subsequent_indent=" " * indent,
        break_long_words=False, break_on_hyphens=False)] or [""]
    lines = [head + Text(first[head.cell_len:], style=style)] + [Text(line, style=style) for line in more]
    if tail is not None and lines[-1].cell_len + tail.cell_len <= width:
        lines[-1] = lines[-1] + tail
    elif tail is not None:
        lines.append(Text(" " * (indent - 2)) + tail)
    return lines


def _render_explanation(out: Console, explanation: Explanation, answers: t.Sequence[Answer], any_results: bool) -> None:
    """What ``--explain`` recognised, message by message, before the verdict on the machine."""
    from ..core import wording

    if explanation.truncated:
        out.print(Text(wording.EXPLAIN_TRUNCATED, style="yellow"))
    if not answers:
        out.print(Text(wording.EXPLAIN_UNRECOGNISED, style="yellow"))
    fixes_shown: set[str] = set()
    for item in answers:  # every message recognised, in the order Nx printed them
        message = item.message
        out.print(
            Text("Recognised: ", style="bold")
            + Text(printable(message.matched))
            + Text(f" — {printable(message.cause)}")
        )
        if message.path:
            out.print(Text(f"  about {printable(message.path)}", style="dim"))
        label = "fix:  " if item.source == "this machine" else wording.EXPLAIN_FIX_GENERAL
        fix = fix_line(item.advice)
        if fix is not None and fix in fixes_shown:  # each remedy once
            out.print(Text(f"  {label}", style="bold") + Text(wording.EXPLAIN_SAME_FIX, style="dim"))
        elif fix is not None:
            fixes_shown.add(fix)
            out.print(Text(f"  {label}", style="bold") + Text(printable(fix), style="cyan"))
        else:  # no safe command: the note says why
            out.print(Text(f"  {label}", style="bold") + Text(wording.EXPLAIN_NO_FIX, style="yellow"))
        if item.hint:
            out.print(Text("  note: " + printable(item.hint), style="dim"))
    if explanation.left_off:
        out.print(Text(wording.messages_left_off(explanation.left_off), style="yellow"))
    if answers and not any_results:
        out.print(Text(wording.EXPLAIN_NOTHING_HERE, style="dim"))
    out.print()


def render_all_users(fleet: FleetVerdict) -> None:
    """``doctor --all-users``: the container, then one line per user: status, uid and name, tier, worst finding."""
    from ..core import wording

    out = _console()
    out.print(Text(f"{CONTAINER}: {fleet.container}", style="bold"))
    if not fleet.users:
        out.print(Text(wording.no_user_state(CONTAINER), style="dim"))
    rank = {name: look.rank for name, look in SEVERITIES.items()}
    styles = {**{name: look.style for name, look in SEVERITIES.items()}, "failed": SEVERITIES["error"].style}
    for audit in fleet.users:
        who = f"uid {audit.uid}" + (f" ({printable(audit.name)})" if audit.name else "")
        line = Text(f"{audit.status:<6}  ", style=styles[audit.status]) + Text(who)
        verdict = audit.verdict
        if verdict is None:
            line += Text(f"  {printable(audit.failure or '')}")
        else:
            line += Text(f"  sockets: {verdict.socket_tier or 'none'}{' (demoted)' if verdict.demoted else ''}")
            findings = [f for f in verdict.document.get("findings", []) if f.get("severity") in ("warn", "error")]
            if findings:
                worst = max(findings, key=lambda f: rank.get(f.get("severity"), 0))
                more = wording.fleet_more(len(findings) - 1)
                line += Text(f"  {worst.get('id')}: {printable(str(worst.get('message', '')))}{more}")
        out.print(line)
    counts = {s: sum(1 for a in fleet.users if a.status == s) for s in ("ok", "warn", "error", "failed")}
    out.print(Text(wording.fleet_counts(len(fleet.users), counts), style="dim"))


def render_error(command: str, message: str) -> None:
    """One line on stderr for a command that could not do what it was asked, the names in it escaped."""
    _console(stderr=True).print(Text(f"nxsock {command}: {printable(message)}"))


# -- doctor --fix ------------------------------------------------------------------------


def _for(findings: t.Sequence[t.Any]) -> Text:
    """The findings a remedy is for: their ids and one message (of many, a pathless one: it counts what it is about)."""
    from ..core import wording

    ids = ", ".join(dict.fromkeys(printable(f.id) for f in findings))
    shown = next((f for f in findings if f.path is None), findings[0]) if len(findings) > 1 else findings[0]
    return Text(f"for {ids}: {_one_line(shown)}{wording.and_more(len(findings) - 1)}", style="dim")


def _one_line(finding: t.Any) -> str:
    """A finding's message on one line: a message that introduces its quoted lines ("the reason it recorded:")
    carries the first of them, never a colon with nothing after it."""
    message = printable(finding.message)
    if not message.endswith(":"):
        return message
    lines = [line for line in printable_lines("\n".join(finding.detail)) if line.strip()] if finding.detail else []
    if not lines:
        return message[:-1] + "."
    from ..core import wording

    return wording.first_recorded_line(message, lines)


#: More remedies of one shape in a row than this are one line with their count; ``--json`` lists each.
RUN_SHOWN = 5
#: The most findings of the re-audit, or problems without a command, listed one by one.
FINDINGS_SHOWN = 20


def _shape(item: t.Any) -> tuple[t.Any, ...] | None:
    """What a one-step remedy does, less the path it does it to; ``None`` for a remedy of other steps."""
    from ..core.remedy import step_json

    fields = step_json(item.steps[0]) if len(item.steps) == 1 else {}
    if not fields.get("path"):
        return None
    return tuple(value for key, value in fields.items() if key != "path")


class _Run(t.NamedTuple):
    numbers: str  # the numbers of its items in the plan, from 1: "4", "3–3001", "3, 5, … 6001"
    items: tuple[t.Any, ...]
    command: str  # the one item's command, or the kind's with the count where the path was


def _runs(items: t.Sequence[t.Any], also: t.Callable[[t.Any], t.Any] = lambda entry: None) -> list[_Run]:
    """The items in order, the remedies of one kind — one step, one verb, mode, owner, value (and *also*), on the
    entries of one directory or on one name in sibling directories — as one :class:`_Run` where there are more
    than :data:`RUN_SHOWN` of them, shown where the first of them stands."""
    from ..core import wording
    from ..core._pathname import basename, dirname

    plain = [_plan_item(entry) for entry in items]
    keys: list[tuple[tuple[t.Any, ...], tuple[t.Any, ...]] | None] = []
    for entry, item in zip(items, plain, strict=True):
        shape = _shape(item)
        path = item.steps[0].path if shape is not None else ""
        keys.append(None if shape is None else ((shape, also(entry), "entries", dirname(path)),
                                                (shape, also(entry), "names", basename(path), dirname(dirname(path)))))
    counts: dict[tuple[t.Any, ...], int] = {}
    for pair in keys:
        for each_key in pair or ():
            counts[each_key] = counts.get(each_key, 0) + 1
    chosen = [
        None if pair is None else max(pair, key=lambda k: counts[k]) for pair in keys
    ]  # the larger kind, entries on a tie
    members: dict[tuple[t.Any, ...], list[int]] = {}
    for n, key in enumerate(chosen):
        if key is not None and counts[key] > RUN_SHOWN:
            members.setdefault(key, []).append(n)
    found: list[_Run] = []
    for n, key in enumerate(chosen):
        group = members.get(key) if key is not None else None
        if group is None or len(group) <= RUN_SHOWN:
            found.append(_Run(str(n + 1), (items[n],), plain[n].command))
            continue
        if group[0] != n:
            continue  # shown with the first of its kind
        assert key is not None
        path = plain[n].steps[0].path or ""
        where = dirname(path) if key[2] == "entries" else dirname(dirname(path))
        each = f"{where}/<each of {len(group):,}>" + ("" if key[2] == "entries" else f"/{basename(path)}")
        command = plain[n].command
        contiguous = group[-1] - group[0] == len(group) - 1
        numbers = (
            f"{group[0] + 1}–{group[-1] + 1}" if contiguous else f"{group[0] + 1}, {group[1] + 1}, … {group[-1] + 1}"
        )
        found.append(_Run(numbers, tuple(items[i] for i in group), command.replace(path, each) if path in command else
                          wording.more_of_this_kind(command, len(group) - 1)))
    return found


def _plan_item(entry: t.Any) -> t.Any:
    """The plan item of a plan item or of what became of one."""
    return getattr(entry, "item", entry)


def render_fix_plan(plan: t.Any, *, dry_run: bool, stderr: bool = False) -> None:
    """The plan: what nxsock applies, in order; what it leaves to you and why; what has no safe command.

    A long run of remedies of one shape (a ``chmod`` of the socket in each of
    3,000 directories) is one line with the count; ``--json`` lists each.
    """
    from ..core import wording

    out = _console(stderr)
    summarised = False
    if plan.apply:
        out.print(Text(wording.fix_applies(dry_run, len(plan.apply)), style="bold"))
        for run in _runs(plan.apply):
            out.print(Text(f"  {run.numbers}. ") + Text(printable(run.command), style="cyan"))
            out.print(Text("     ") + _for([f for item in run.items for f in item.findings]))
            summarised = summarised or len(run.items) > 1
    else:
        out.print(Text(wording.FIX_NOTHING_TO_APPLY, style="bold"))
    if plan.for_you:
        out.print(Text(wording.FIX_FOR_YOU, style="bold"))
        for run in _runs(plan.for_you, lambda item: item.why):
            out.print(Text("  ") + Text(printable(run.command), style="cyan"))
            out.print(
                Text(f"     {printable(run.items[0].why)}; ", style="dim")
                + _for([f for item in run.items for f in item.findings])
            )
            summarised = summarised or len(run.items) > 1
    if plan.without_command:
        out.print(Text(wording.FIX_NO_SAFE_COMMAND, style="bold"))
        for finding in plan.without_command[:FINDINGS_SHOWN]:
            out.print(Text(f"  {printable(finding.id)}: {_one_line(finding)}", style="dim"))
        if len(plan.without_command) > FINDINGS_SHOWN:
            more = len(plan.without_command) - FINDINGS_SHOWN
            out.print(Text("  " + wording.more_shown_elsewhere(more), style="dim"))
            summarised = True
    if summarised:
        out.print(Text(wording.FIX_LISTED_IN_JSON, style="dim"))
    if dry_run:
        out.print(Text("… dry run: ", style="yellow") + Text(wording.DRY_RUN_CHANGED_NOTHING))


_FIX_MARKS = {"fixed": ("✓ fixed    ", "green"), "not-fixed": ("✗ not fixed", "red"), "refused": ("✗ refused  ", "red"),
              "failed": ("✗ failed   ", "red"), "not-run": ("- not run  ", "yellow"), "done": ("✓ done     ", "green"),
              "interrupted": ("… stopped  ", "yellow")}


def render_fix_outcome(applied: t.Sequence[t.Any], after: t.Sequence[tuple[str, t.Any]] | None, status: str, *,
                       interrupted: bool) -> None:
    """Each remedy's outcome (with the reason where it was not fixed), then what the re-audit still finds;
    a long run of one shape and one outcome is one line with its count, as in the plan."""
    from ..core import wording  # the sentences; loaded by doctor, not by paths' report

    out = _console()
    for run in _runs(applied, lambda entry: entry.outcome):
        entry = run.items[0]
        mark, style = _FIX_MARKS.get(entry.outcome, (entry.outcome, ""))
        out.print(Text(f"  {mark} ", style=style) + Text(printable(run.command)))
        reasons = [e.reason for e in run.items if e.reason]
        if reasons:
            count = wording.reasons_counted(len(set(reasons)) > 1, len(reasons), len(run.items))
            out.print(Text(f"      {printable(reasons[0])}{count}", style="dim"))
    if interrupted:
        done = sum(1 for e in applied if e.outcome == "done")
        out.print(Text(wording.fix_interrupted(done), style="bold yellow"))
        return
    problems = [f for _, f in (after or ()) if f.severity in ("warn", "error")]
    if problems:
        out.print(Text(wording.problems_after_fix(len(problems)), style="bold"))
        for finding in problems[:FINDINGS_SHOWN]:
            symbol, word, style = MARKS[finding.severity]
            out.print(
                Text(f"  {symbol} {word:5} ", style=style)
                + Text(printable(finding.message))
                + Text(f"  [{finding.id}]", style="dim")
            )
            fix = fix_line(finding.advice)
            if fix:
                out.print(Text("      fix:  ", style="bold") + Text(printable(fix), style="cyan"))
        if len(problems) > FINDINGS_SHOWN:
            more = len(problems) - FINDINGS_SHOWN
            out.print(Text("  " + wording.more_shown_elsewhere(more, wording.DOCTOR_LISTS_EACH), style="dim"))
    summary = SEVERITIES[status].mark + " " + wording.AFTER_FIX[status]
    out.print(Text(summary, style=MARKS[status][2] + " bold"))
