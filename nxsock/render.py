"""Human output: the one module that imports rich, and only when text is drawn.

Every line has a word as well as a symbol, so it reads without colour;
``NO_COLOR`` is honoured by rich itself.  Paths are shown escaped, so a name
with a newline or a terminal escape in it cannot forge output.
"""

from __future__ import annotations

import typing as t

from rich.console import Console
from rich.table import Table
from rich.text import Text

from .report import paths_document
from .resolver import Resolution

__all__ = ["render_check_root", "render_paths", "safe"]

TIER_WHY = {
    "configured": "NX_SOCKET_DIR (or NX_DAEMON_SOCKET_DIR) is set and accepted",
    "shared": "the preferred root under the shared container /tmp/.nx",
    "home": "demoted to the home directory: the shared container could not be used",
    "workspace": "the workspace fallback: no usual socket directory could be used",
    "temp": "the OS temp directory (legacy layout, or Windows named pipes)",
}

GENERATION = {
    "legacy": "legacy layout (Nx ≤ 23.1.1)",
    "ts": "current layout, TypeScript generation (Nx 23.1.2–23.3)",
    "native": "current layout, native generation (Nx 24)",
}


def safe(text: str | None) -> str:
    """*text* with control characters and undecodable bytes shown as escapes."""
    if text is None:
        return "-"
    out = []
    for ch in text:
        code = ord(ch)
        if code < 0x20 or code == 0x7F or 0xDC80 <= code <= 0xDCFF or 0x80 <= code < 0xA0:
            out.append(f"\\x{code & 0xFF:02x}")
        else:
            out.append(ch)
    return "".join(out)


def _console(stderr: bool = False) -> Console:
    return Console(stderr=stderr, highlight=False, soft_wrap=True)


def _refusal_lines(console: Console, refusal: t.Mapping[str, t.Any], indent: str = "  ") -> None:
    console.print(Text(f"{indent}✗ refused  ", style="red") + Text(safe(refusal["message"])))
    if refusal.get("remedy"):
        console.print(Text(f"{indent}    fix:  ", style="bold") + Text(safe(refusal["remedy"]), style="cyan"))
    if refusal.get("hint"):
        console.print(Text(f"{indent}    note: " + safe(refusal["hint"]), style="dim"))


def render_paths(resolution: Resolution) -> None:
    """Each artifact, its path, its tier and why; refusals with their remedies; what Nx would create."""
    doc = paths_document(resolution)
    out = _console()
    env = resolution.environment
    version = env.nx_version or "not installed"
    assumed = "; assumed: no Nx found in the workspace" if resolution.layout_assumed else ""
    out.print(Text(f"Nx {safe(version)}: {GENERATION[resolution.generation]}{assumed}", style="bold"))
    where = f"workspace {safe(env.workspace_root)} (found by {env.workspace_source})"
    who = "" if env.platform == "win32" else f", uid {env.uid}"
    out.print(Text(f"{where}, platform {env.platform}{who}" + (" — a fresh machine, not this host" if env.simulated else "")))
    for name, var in sorted(env.variables.items()):
        if name.startswith("NX_"):
            out.print(Text(f"  {name}={safe(var.value)}  (from {safe(var.source)})", style="dim"))
    out.print()

    root = doc["socket_root"]
    if root["invalid"]:
        invalid = root["invalid"]
        out.print(Text("Socket root: refused configuration", style="bold red"))
        _refusal_lines(out, {"message": invalid["message"], "remedy": invalid["remedy"], "hint": invalid["hint"]})
    elif root["tier"] is None:
        out.print(Text("Socket root: none — Nx cannot establish any socket directory", style="bold red"))
    else:
        out.print(Text("Socket root: ", style="bold") + Text(safe(root["root"])) + Text(f"  [{root['tier']}]", style="green"))
        out.print(Text(f"  why: {TIER_WHY[root['tier']]}", style="dim"))
        if root["demoted_from"]:
            out.print(Text(f"  demoted from {safe(root['demoted_from'])}", style="yellow"))
        if root["refused_configured_dir"]:
            out.print(Text(f"  NX_SOCKET_DIR {safe(root['refused_configured_dir'])} was refused", style="yellow"))
    for refusal in root["refusals"]:
        _refusal_lines(out, refusal)
    out.print()

    table = Table(box=None, pad_edge=False, show_edge=False)
    for column in ("socket", "tier", "path", "length"):
        table.add_column(column, overflow="fold")
    for kind, sock in doc["sockets"].items():
        if not sock["placed"]:
            table.add_row(kind, "-", Text("not placed by this Nx version", style="dim"), "")
            continue
        if sock["tier"] is None:
            table.add_row(kind, "-", Text("no directory", style="red"), "")
            continue
        path = sock["path"] or sock["pattern"]
        length = f"{sock['length']}/95"
        status = Text(length + (" too long" if sock["too_long"] else f" ({sock['budget_left']} left)"))
        status.stylize("red" if sock["too_long"] else "")
        table.add_row(kind, sock["tier"], safe(path), status)
    out.print(table)
    out.print(Text("  lengths are for the longest name Nx gives: a 7-digit pid, a 1-digit counter"
                   + (", the readiness socket fp<pid>-ready-<n>.sock" if resolution.generation == "native" else ""), style="dim"))
    if doc["sockets"]["plugin"].get("id_budget") is not None:
        out.print(Text(f"  a plugin id may take {doc['sockets']['plugin']['id_budget']} characters", style="dim"))
    for kind, sock in doc["sockets"].items():
        if sock["windows_max_username"] is not None:
            out.print(Text(f"  {kind}: fits a Windows user name of up to {sock['windows_max_username']} characters under the default temp dir", style="dim"))
        for refusal in sock["refusals"]:
            out.print(Text(f"  {kind}: its leaf was refused; it falls back to the workspace"))
            _refusal_lines(out, refusal, "    ")
        if sock["failure"] and sock["failure"] is not root.get("failure"):
            _refusal_lines(out, sock["failure"], "    ")
    if root["failure"]:
        _refusal_lines(out, root["failure"])
    record = doc["daemon_record"]
    if record:
        state = {True: "alive", False: "not running", None: "unknown"}[record["alive"]]
        if record["problem"]:
            out.print(Text(f"Daemon record: {safe(record['file'])} {record['problem']}", style="yellow"))
        else:
            answer = {"answers": "answers", "ECONNREFUSED": "stale: nothing listens (ECONNREFUSED)"}.get(
                record["connect"], record["connect"] or "not probed"
            )
            out.print(Text(f"Daemon record: pid {record['pid']} ({state}), socket {safe(record['socket_path'])} — {answer}"))
            if record["client_refusal"]:
                out.print(Text(f"  but Nx {safe(version)}'s client refuses to dial it:", style="yellow"))
                _refusal_lines(out, record["client_refusal"], "    ")
    out.print()

    cache = doc["native_cache"]
    if cache["dir"] and not cache["bypass_reason"]:
        out.print(Text("Native binding cache: ", style="bold") + Text(safe(cache["dir"])))
    else:
        out.print(Text("Native binding cache: ", style="bold") + Text(f"bypassed — Nx loads the binding in place ({cache['bypass_reason']})", style="yellow"))
    for refusal in cache["refusals"]:
        _refusal_lines(out, refusal)
    data = doc["workspace_data"]
    out.print(Text("Workspace data: ", style="bold") + Text(f"{safe(data['dir'])} ({data['source']})"))
    if data["untrusted_reason"]:
        word = "refused" if data["refused"] else "allowed by NX_ALLOW_INSECURE_DIRECTORIES"
        out.print(Text(f"  untrusted ({word}): {safe(data['untrusted_reason'])}", style="red" if data["refused"] else "yellow"))
    if doc["actions"]:
        out.print(Text("Nx would:", style="bold"))
        for action in doc["actions"]:
            out.print(Text(f"  {action['verb']} {safe(action['path'])} ({action['mode']})"))
    allow = doc["allowlist"]
    if allow["write"]:
        out.print(Text("A sandbox must allow: ", style="bold") + Text("write " + ", ".join(safe(p) for p in allow["write"])))
        out.print(Text("  and unix sockets in " + ", ".join(safe(p) for p in allow["unix_sockets"])))
    sandbox = doc["user_namespace_sandbox"]
    if sandbox and not sandbox["daemon_usable"]:
        out.print(Text("In a user-namespace sandbox: ", style="bold yellow") + Text(safe(sandbox["message"])))
        out.print(Text("  inside:  ", style="bold") + Text(f"{sandbox['run_inside']} nx …", style="cyan"))
        out.print(Text("  note: " + safe(sandbox["marker_warning"]), style="dim"))


def render_check_root(document: t.Mapping[str, t.Any]) -> None:
    """The verdict in one line, with the refusal's fix, or the provisioning command for shared machines."""
    out = _console()
    path = safe(document["path"])
    if document["state"] == "absent":
        out.print(Text("✓ safe  ", style="green") + Text(f"{path} does not exist yet; Nx will create it, owned by you, mode 1777."))
        if document["provision_command"]:
            out.print(Text(f"  On a shared machine, provision it for everyone: {document['provision_command']}", style="dim"))
    elif document["safe"]:
        out.print(Text("✓ safe  ", style="green") + Text(f"{path} is a safe shared container for you."))
    else:
        out.print(Text("✗ unsafe", style="red"))
        _refusal_lines(out, document["refusal"])



PAST = {"create": "created", "tighten": "tightened", "chown": "handed to root:root", "chmod": "set to 1777"}
FUTURE = {"create": "would create", "tighten": "would tighten", "chown": "would hand to root:root", "chmod": "would chmod"}


def render_provision(document: t.Mapping[str, t.Any]) -> None:
    """Each step in past or conditional tense, then the verdict, or the refusal with its command."""
    out = _console()
    words = FUTURE if document["dry_run"] else PAST
    for step in document["steps"]:
        mode = f" ({step['mode']})" if step["verb"] in ("create", "tighten", "chmod") else ""
        out.print(Text(f"  {words[step['verb']]} {safe(step['path'])}{mode}"))
    if document["refusal"]:
        out.print(Text("✗ refused", style="red"))
        _refusal_lines(out, document["refusal"])
        return
    who = "for every user (root:root, 1777)" if document["as_root"] else "for you (0700 levels under /tmp/.nx)"
    if not document["changed"]:
        out.print(Text("✓ already provisioned ", style="green") + Text(who + "; nothing to do."))
    elif document["dry_run"]:
        out.print(Text("… dry run: ", style="yellow") + Text("nothing was changed."))
    else:
        out.print(Text("✓ provisioned ", style="green") + Text(who + "."))


def render_tmpfiles(changes: t.Sequence[t.Any]) -> None:
    out = _console()
    for change in changes:
        style = "red" if change.verb == "refuse" else ""
        out.print(Text(f"  {safe(change.path)}: {change.detail}", style=style))


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n} B"


def render_cache_listing(listing: t.Any) -> None:
    """Entries grouped by version, each with its state in words."""
    out = _console()
    if listing.bypass_reason:
        out.print(Text(f"Nx loads the binding in place: {listing.bypass_reason}.", style="yellow"))
    out.print(Text("Cache: ", style="bold") + Text(safe(listing.dir)))
    if listing.binding:
        out.print(Text(f"Installed binding: {safe(listing.binding.path)}"))
    if listing.problem:
        out.print(Text(f"  {listing.problem}", style="red"))
    if not listing.entries:
        out.print(Text("  (empty)", style="dim"))
        return
    table = Table(box=None, pad_edge=False, show_edge=False)
    for column in ("version", "entry", "size", "state"):
        table.add_column(column, overflow="fold")
    for entry in listing.entries:
        words = ["interrupted copy" if entry.partial else None,
                 None if entry.trusted else "untrusted",
                 {True: "fresh", False: "stale", None: "other binding"}[entry.fresh] if not entry.partial else None,
                 "in use" if entry.in_use else None]
        table.add_row(entry.version, safe(entry.path.rsplit("/", 1)[-1]), _size(entry.size), ", ".join(w for w in words if w))
    out.print(table)


def render_verdict(verdict: t.Any) -> None:
    out = _console()
    good = verdict.state in ("fresh", "bypassed")
    mark = Text("✓ " + verdict.state + "  ", style="green") if good else Text("✗ " + verdict.state + "  ", style="red")
    out.print(mark + Text(safe(verdict.message)))
    if verdict.remedy:
        out.print(Text("    fix:  ", style="bold") + Text(safe(verdict.remedy), style="cyan"))


def render_removals(rows: t.Sequence[tuple[str, str, str | None, int]], dry_run: bool) -> None:
    """One line per entry, then a summary with the space freed."""
    out = _console()
    verb = "would remove" if dry_run else "removed"
    freed = 0
    for path, outcome, why, size in rows:
        if outcome == "removed":
            freed += size
            out.print(Text(f"  {verb} {safe(path)}  ({why}, {_size(size)})"))
        else:
            out.print(Text(f"  kept {safe(path)}: {safe(why)}", style="yellow"))
    removed = sum(1 for _, outcome, _, _ in rows if outcome == "removed")
    out.print(Text(f"{'Would remove' if dry_run else 'Removed'} {removed} entries, {_size(freed)}.", style="bold"))


class _Ticker:
    """A spinner with a count on stderr, for walks over thousands of directories."""

    def __init__(self, label: str) -> None:
        from rich.progress import Progress, SpinnerColumn, TextColumn

        self._progress = Progress(SpinnerColumn(), TextColumn("{task.description}: {task.completed} entries"),
                                  console=Console(stderr=True), transient=True)
        self._task = self._progress.add_task(label, total=None)
        self._progress.start()

    def tick(self) -> None:
        self._progress.advance(self._task)

    def stop(self) -> None:
        self._progress.stop()


def progress_ticker(label: str) -> _Ticker:
    return _Ticker(label)


MARKS = {"ok": ("✓", "ok", "green"), "info": ("ℹ", "info", "blue"), "warn": ("⚠", "warn", "yellow"), "error": ("✗", "error", "red")}


def render_doctor(results: t.Sequence[tuple[str, t.Any]], status: str, explanation: t.Any = None) -> None:
    """Grouped findings, one line each with a symbol and a word, remedies indented, then a summary."""
    out = _console()
    if explanation is not None:
        if explanation.matched is None:
            out.print(Text("Not a message nxsock recognises; running every check.", style="yellow"))
        else:
            out.print(Text("Recognised: ", style="bold") + Text(explanation.matched) + Text(f" — {safe(explanation.cause)}"))
            if explanation.path:
                out.print(Text(f"  about {safe(explanation.path)}", style="dim"))
        out.print()
    group = None
    counts = {"ok": 0, "info": 0, "warn": 0, "error": 0}
    for name, finding in results:
        if name != group:
            if group is not None:
                out.print()
            out.print(Text(name, style="bold underline"))
            group = name
        symbol, word, style = MARKS[finding.severity]
        counts[finding.severity] += 1
        out.print(Text(f"  {symbol} {word:5} ", style=style) + Text(safe(finding.message)) + Text(f"  [{finding.id}]", style="dim"))
        if finding.remedy:
            out.print(Text("      fix:  ", style="bold") + Text(safe(finding.remedy), style="cyan"))
        if finding.hint:
            out.print(Text("      note: " + safe(finding.hint), style="dim"))
    out.print()
    summary = f"{counts['error']} errors, {counts['warn']} warnings, {counts['info']} notes, {counts['ok']} fine."
    out.print(Text({"ok": "✓ ", "warn": "⚠ ", "error": "✗ "}[status] + summary, style=MARKS[status][2] + " bold"))
