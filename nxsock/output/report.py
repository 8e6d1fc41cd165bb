"""The JSON documents nxsock prints besides ``paths --json``, and the ``--report`` Markdown and GitHub lines.

Keys are a contract (docs/behaviour.md#json-documents): ``schema_version`` 1, only ever added to, each
documented key always present (``null`` where it does not apply), modes as
four octal digits, errnos by name, paths as strings Node would print.
"""

from __future__ import annotations

import os
import re
import typing as t

from ..core.fsview import FsView
from ..core.guards import Refusal
from ..core.layout import CONTAINER
from ..core.remedy import step_json
from ..core.resolver import Resolution
from ..core.severity import SEVERITIES

if t.TYPE_CHECKING:
    from ..act.cleanup import ResetItem
    from ..act.provisioning import ProvisionReport
    from ..act.removal import Removal
    from ..act.tmpfiles import TmpfilesChange
    from ..audit.binding_cache import CacheListing, Verdict
    from ..audit.explain import Answer, Explanation
    from ..audit.findings import Finding
    from ..audit.fleet import FleetVerdict

from ..core import wording
from ..core.terminal import format_mode
from ..core.wording import (
    PROVISION_COMMAND,
    RemedyContext,
)
from .emit import SCHEMA_VERSION, Json
from .emit import node_path as _p
from .paths_json import fix_line, refusal_json, steps_json

__all__ = [
    "all_users_document",
    "cache_list_document",
    "cache_path_document",
    "cache_prune_document",
    "cache_verify_document",
    "check_root_document",
    "doctor_document",
    "doctor_markdown",
    "fix_document",
    "github_annotations",
    "masks_for",
    "md_code",
    "md_text",
    "provision_document",
    "report_facts",
    "report_paths",
    "reset_document",
]


def check_root_document(path: str, state: str, refusal: Refusal | None, ctx: RemedyContext) -> Json:
    """The ``check-root --json`` document: ``absent`` and ``ok`` are safe, ``refused`` is not."""
    return {
        "schema_version": SCHEMA_VERSION,
        "path": _p(path),
        "safe": refusal is None,
        "state": state,
        "refusal": None if refusal is None else refusal_json(refusal, ctx, purpose="container"),
        "provision_command": PROVISION_COMMAND if path == CONTAINER else None,
    }


def provision_document(report: ProvisionReport, ctx: RemedyContext | None = None) -> Json:
    """The ``provision --json`` document: each step, done or planned, and whether anything changed."""
    if ctx is None:
        from ..core.fsview import LiveView
        from ..core.wording import plain_context

        ctx = plain_context(LiveView(), os.geteuid(), os.getegid(), os.environ.get("HOME"))
    refusal = None if report.refusal is None else refusal_json(report.refusal, ctx)
    return {
        "schema_version": SCHEMA_VERSION,
        "as_root": report.as_root,
        "dry_run": report.dry_run,
        "changed": report.changed,
        "failed": refusal is not None,
        "msg": _provision_message(report, refusal),
        "steps": [
            {"verb": s.verb, "path": _p(s.path), "mode": format_mode(s.mode), "done": not report.dry_run}
            for s in report.steps
        ],
        "refusal": refusal,
    }


def _provision_message(report: ProvisionReport, refusal: Json | None) -> str:
    """One line for a configuration manager's log (Ansible's ``msg``): what was done, would be, or what refused it."""
    if refusal is not None:
        return str(refusal["message"]) + (f" Fix: {refusal['remedy']}" if refusal.get("remedy") else "")
    if not report.steps:
        if report.as_root:
            return wording.provisioned_nothing_to_change(CONTAINER)
        return wording.LEVELS_IN_PLACE
    done = ", ".join(f"{s.verb} {s.path} {format_mode(s.mode)}" for s in report.steps)
    return f"Would {done}." if report.dry_run else f"Done: {done}."


def reset_document(
    items: t.Sequence[ResetItem], marker_reason: str | None, *, dry_run: bool, interrupted: bool
) -> Json:
    """The ``reset --json`` document: each entry removed, kept or failed, the space freed, whether Ctrl-C stopped it."""
    return {
        "schema_version": SCHEMA_VERSION,
        "dry_run": dry_run,
        "interrupted": interrupted,
        "marker_reason": marker_reason,
        "removed": [
            {"path": i.path, "what": i.what, "reason": i.reason, "freed": i.freed}
            for i in items
            if i.outcome == "removed"
        ],
        "kept": [
            {"path": i.path, "what": i.what, "reason": i.reason, "count": i.entries}
            for i in items
            if i.outcome == "kept"
        ],
        "failed": [{"path": i.path, "what": i.what, "reason": i.reason} for i in items if i.outcome == "failed"],
        "refused": [{"path": i.path, "what": i.what, "reason": i.reason} for i in items if i.outcome == "refused"],
        "freed": sum(i.freed for i in items if i.outcome == "removed"),
    }


def cache_path_document(directory: str | None, bypass_reason: str | None) -> Json:
    """The ``cache path --json`` document: the directory, or ``null`` and why Nx loads the binding in place."""
    return {"schema_version": SCHEMA_VERSION, "dir": directory, "bypass_reason": bypass_reason}


def cache_list_document(listing: CacheListing, plan: t.Sequence[tuple[t.Any, str]] = ()) -> Json:
    """The ``cache list --json`` document: every entry with the binding it belongs to and its state; the total, and
    what ``cache prune`` would reclaim (*plan*)."""
    return {
        "schema_version": SCHEMA_VERSION,
        "dir": listing.dir,
        "bypass_reason": listing.bypass_reason,
        "binding": None if listing.binding is None else listing.binding.path,
        "entries": [
            {"path": e.path, "version": e.version, "binding": e.binding, "size": e.size, "trusted": e.trusted,
             "fresh": e.fresh, "in_use": e.in_use, "partial": e.partial, "copied": e.mtime,
             "last_loaded": e.atime if listing.access_times else None}
            for e in listing.entries
        ],
        "total_size": listing.total_size,
        "access_times": listing.access_times,
        "reclaimable": {"entries": len(plan), "size": sum(entry.size for entry, _ in plan)},
    }


def cache_verify_document(verdict: Verdict, listing: CacheListing) -> Json:
    """The ``cache verify --json`` document: the installed version's entry, its state and the fix."""
    return {
        "schema_version": SCHEMA_VERSION,
        "state": verdict.state,
        "entry": verdict.entry,
        "message": verdict.message,
        "remedy": fix_line(verdict.advice),
        "binding": None if listing.binding is None else listing.binding.path,
    }


def cache_prune_document(results: t.Sequence[tuple[Removal, str]], *, dry_run: bool, interrupted: bool,
                         unused_for: float | None = None, judged_by: str | None = None,
                         kept: t.Sequence[tuple[Removal, str]] = ()) -> Json:
    """The ``cache prune --json`` document: what was removed and why, what could not be, the space freed."""
    removed = [(r, why) for r, why in results if r.outcome == "removed"]
    return {
        "schema_version": SCHEMA_VERSION,
        "dry_run": dry_run,
        "interrupted": interrupted,
        "unused_for": unused_for,
        "judged_by": judged_by,
        "removed": [{"path": r.path, "reason": why, "freed": r.freed} for r, why in removed],
        "failed": [{"path": r.path, "reason": r.reason} for r, _ in results if r.outcome != "removed"],
        "kept": [{"path": r.path, "reason": r.reason} for r, _ in kept],
        "freed": sum(r.freed for r, _ in removed),
    }


def doctor_document(results: t.Sequence[tuple[str, Finding]], status: str, explanation: Explanation | None = None,
                    answers: t.Sequence[Answer] = (), daemon: Json | None = None, binding: Json | None = None) -> Json:
    """The ``doctor --json`` document: the status and every finding; with ``--explain``, what was recognised; *daemon*:
    whether Nx uses its daemon, and with it *binding*: the binding verdict (both as ``paths --json`` has them)."""
    document: Json = {
        "schema_version": SCHEMA_VERSION,
        "status": status,
        "findings": [
            {"id": f.id, "group": group, "severity": f.severity, "path": f.path, "message": f.message,
             "remedy": fix_line(f.advice), "hint": f.hint, "detail": list(f.detail),
             "remedy_steps": steps_json(f.advice)}
            for group, f in results
        ],
    }
    if daemon is not None:
        document["daemon"] = daemon
        document["binding"] = binding
    if explanation is not None:  # the first message's keys as before; then every message, each with its remedy
        first = answers[0] if answers else None
        document.update(matched=explanation.matched, errno=explanation.errno, path=explanation.path,
                        cause=explanation.cause, remedy=fix_line(first.advice) if first else None,
                        remedy_source=first.source if first else None, hint=first.hint if first else None,
                        recognised=bool(answers), messages=[_answer_json(a) for a in answers],
                        truncated=explanation.truncated, messages_left_off=explanation.left_off)
    return document


def _answer_json(item: Answer) -> Json:
    m = item.message
    return {"matched": m.matched, "errno": m.errno, "path": m.path, "cause": m.cause, "remedy": fix_line(item.advice),
            "remedy_source": item.source, "hint": item.hint, "finding": item.finding}


def tmpfiles_document(path: str, content: str) -> Json:
    """The ``provision --tmpfiles --json`` document: where the drop-in goes and what it says."""
    return {"schema_version": SCHEMA_VERSION, "path": path, "content": content}


def tmpfiles_steps_document(steps: t.Sequence[TmpfilesChange], *, dry_run: bool, changed: bool) -> Json:
    """The ``provision --tmpfiles --install/--uninstall/--check --json`` document: each step and its verb."""
    failed = any(s.verb in ("refuse", "fail") for s in steps)
    shown = [s for s in steps if s.verb in ("refuse", "fail")] if failed else list(steps)
    return {
        "schema_version": SCHEMA_VERSION,
        "dry_run": dry_run,
        "changed": changed,
        "failed": failed,
        "msg": "; ".join(f"{s.path}: {s.detail}" for s in shown) or "nothing to do",
        "steps": [{"verb": s.verb, "path": s.path, "detail": s.detail} for s in steps],
    }


def doctor_error_document(message: str) -> Json:
    """The ``doctor --json`` document when the audit itself could not be made (``--user``'s child failed)."""
    return {"schema_version": SCHEMA_VERSION, "status": "error", "findings": [], "error": message}


def all_users_document(fleet: FleetVerdict) -> Json:
    """The ``doctor --all-users --json`` document: the container, and each user's audit as their ``doctor --json``."""
    import datetime

    users = []
    for audit in fleet.users:
        v = audit.verdict
        users.append({
            "uid": audit.uid, "name": audit.name, "reasons": list(audit.reasons), "status": audit.status,
            "error": audit.failure, "exit_code": None if v is None else v.exit_code,
            "socket_tier": None if v is None else v.socket_tier, "demoted": None if v is None else v.demoted,
            "stale_entries": None if v is None else v.stale_entries,
            "stale_bytes": None if v is None else v.stale_bytes,
            "legacy_entries": None if v is None else v.legacy_entries,
            "cache_entries": None if v is None else v.cache_entries,
            "cache_bytes": None if v is None else v.cache_bytes,
            "cache_reclaimable_bytes": None if v is None else v.cache_reclaimable_bytes,
            "nx_version": None if v is None else v.nx_version,
            "nx_version_source": None if v is None else v.nx_version_source,
            "doctor": None if v is None else v.document,
        })
    return {
        "schema_version": SCHEMA_VERSION,
        "status": fleet.status,
        "checked_at": datetime.datetime.fromtimestamp(fleet.checked_at, datetime.timezone.utc)
        .isoformat(timespec="seconds"),
        "duration": round(fleet.duration, 3),
        "nxsock_version": fleet.nxsock_version,
        "container": {"path": CONTAINER, "state": fleet.container},
        "users": users,
    }


# -- doctor --fix -------------------------------------------------------------------------


def _finding_json(finding: t.Any, group: str | None = None) -> Json:
    document: Json = {"id": finding.id, "severity": finding.severity, "path": finding.path, "message": finding.message,
                      "hint": finding.hint}
    if group is not None:
        document["group"] = group
    return document


def _plan_item_json(item: t.Any) -> Json:
    return {
        "remedy": item.command,
        "remedy_steps": [step_json(s) for s in item.steps],
        "changes": item.changes,
        "findings": [_finding_json(f) for f in item.findings],
        "applied_by_nxsock": item.applies,
        "why_not": item.why,
    }


def fix_document(plan: t.Any, *, dry_run: bool, confirmed: bool, interrupted: bool, applied: t.Sequence[t.Any],
                 after: t.Sequence[tuple[str, t.Any]] | None, status: str | None) -> Json:
    """The ``doctor --fix --json`` document: the plan, each remedy's outcome by step, and the re-audit.

    ``plan`` lists what nxsock applies, ``for_you`` what it leaves to the
    user (``why_not``: root, the shell's environment, Nx itself),
    ``without_command`` the problems no safe command fixes; ``outcomes`` has
    one entry per applied remedy (``fixed``, ``not-fixed``, ``refused``,
    ``failed``, ``not-run``; after a Ctrl-C, which skips the re-audit,
    ``done`` or ``interrupted`` for the one it stopped in); ``findings`` is the re-audit (``null`` when there was none)
    and ``status`` its status (the first audit's when nothing was applied; ``None`` when a Ctrl-C came before
    the first audit had finished).
    """
    return {
        "schema_version": SCHEMA_VERSION,
        "dry_run": dry_run,
        "confirmed": confirmed,
        "interrupted": interrupted,
        "plan": [_plan_item_json(i) for i in plan.apply],
        "for_you": [_plan_item_json(i) for i in plan.for_you],
        "without_command": [_finding_json(f) for f in plan.without_command],
        "outcomes": [
            {
                "remedy": a.item.command,
                "outcome": a.outcome,
                "reason": a.reason,
                "findings": [_finding_json(f) for f in a.item.findings],
                "steps": [{**step_json(r.step), "outcome": r.outcome, "reason": r.reason} for r in a.steps],
            }
            for a in applied
        ],
        "status": status,
        "findings": None if after is None else doctor_document(after, status or "ok")["findings"],
    }


# -- doctor --report: Markdown to paste ------------------------------------------------------


class Masks(t.NamedTuple):
    """What ``--report`` hides: homes (shown ``~``, another's ``~<user>``) and user names (``<user>``) unless
    ``--no-redact``; secret-shaped strings and what a refused ``.env`` drew from the environment, always.

    *homes* are ``(path, shown as)`` pairs, or plain paths (shown ``~``).  A
    home is masked only where it is a whole path (not ``/x/home/ada``, not
    ``/home/adam``), a name only as a whole part of a path or a piece of one
    between ``-``, ``_`` or ``.`` (``/tmp/ada-work``), never inside a name Nx
    gives its own files (``.nx``, ``nx-console.sock``, ``….node``,
    ``node_modules``): a user called ``nx`` or ``node`` leaves those intact.
    """

    homes: tuple[str | tuple[str, str], ...]
    names: tuple[str, ...]
    withheld: tuple[tuple[str, str], ...] = ()

    def apply(self, text: str) -> str:
        from ..core.redaction import redact, withhold

        text = redact(withhold(text, self.withheld))
        pairs = {}
        for home in self.homes:
            path, shown = (home, "~") if isinstance(home, str) else home
            path = path.rstrip("/")
            if path and path not in pairs:
                pairs[path] = shown
        for path in sorted(pairs, key=len, reverse=True):
            text = re.sub(
                rf"(?<![^\s'\"`=:(\[,;]){re.escape(path)}(?![^/\s'\"`:;,)\]])", pairs[path].replace("\\", "\\\\"), text
            )
        for name in sorted(set(self.names), key=len, reverse=True):
            text = _mask_name(text, name)
        return text


#: A run of text holding a ``/``: a path, as far as masking names goes.
_PATH_TOKEN = re.compile(r"[^\s'\"`]*/[^\s'\"`]*")
#: What ends a name inside a part of a path as prose shows it.
_NAME_END = re.compile(r"([:;,()\[\]=<>!?])")
#: The names Nx gives its own files and directories, and its commands: never masked, whoever the user is.
_NX_OWN = re.compile(
    r"\.?nx|nx\.(?:json|bat)|nx-console\.sock|d|d\.sock|(?:fp|p|plugin)[^/]*\.sock|[^/]*\.node|node_modules|@nx|"
    r"nx-(?:linux|darwin|win32|freebsd|android)-[a-z0-9-]+|nx-native-file-cache-[0-9a-f]+|native-cache|"
    r"(?:nx-)?workspace-data|daemon(?:-error)?\.log|server-process\.json|disabled|sockets|\.cache|"
    r"\.(?:local\.)?env(?:\.local)?|package\.json|lerna\.json|nxsock|npx|node"
)


def _mask_name(text: str, name: str) -> str:
    """*name* as ``<user>`` in every path of *text*: a whole part, or a piece of one between non-alphanumerics."""
    if not name.strip():
        return text
    piece = re.compile(rf"(?<![A-Za-z0-9]){re.escape(name)}(?![A-Za-z0-9])")

    def word(text: str) -> str:  # a sentence's full stop after a name is not part of it
        return text if _NX_OWN.fullmatch(text) or _NX_OWN.fullmatch(text.rstrip(".")) else piece.sub("<user>", text)

    def part(text: str) -> str:  # a part of a path, split where punctuation ends a name: "/tmp/.nx:", "(/tmp/.nx)"
        return "".join(word(w) if i % 2 == 0 else w for i, w in enumerate(_NAME_END.split(text)))

    def path(token: str) -> str:
        parts = token.split("/")
        kept = _system_prefix(parts)
        return "/".join(w if i < kept else part(w) for i, w in enumerate(parts))

    return _PATH_TOKEN.sub(lambda m: path(m.group(0)), text)


#: The system's own directories at the top of an absolute path: no one's name, whoever is called ``tmp`` or ``home``.
_SYSTEM_TOP = frozenset({"tmp", "home", "var", "etc", "usr", "run", "dev", "opt", "srv", "mnt", "media", "proc", "sys",
                         "bin", "sbin", "lib", "lib64", "boot", "root", "nix", "snap", "Users", "private"})
#: Their children that are the system's too: ``/var/tmp``, ``/dev/shm``, ``/run/user``, ``/usr/local``…
_SYSTEM_SECOND = frozenset({("var", "tmp"), ("var", "lib"), ("var", "run"), ("dev", "shm"), ("run", "user"),
                            ("usr", "local"), ("usr", "lib"), ("private", "tmp"), ("private", "var")})


def _system_prefix(parts: list[str]) -> int:
    """How many leading parts of a path split at ``/`` are the system's own (``/tmp``, ``/var/tmp``): never masked."""
    rooted = len(parts) > 1 and (
        parts[0] == "" or _NAME_END.fullmatch(parts[0][-1]) is not None
    )  # "/tmp", "X=/tmp", "(/tmp"
    names = [_NAME_END.split(w, 1)[0] for w in parts[1:3]]  # "/var/tmp," and "/tmp)" end where prose ends them
    if not rooted or names[0] not in _SYSTEM_TOP:
        return 1 if rooted else 0
    return 3 if len(names) > 1 and (names[0], names[1]) in _SYSTEM_SECOND else 2


NO_MASKS = Masks((), ())

#: Homes that are no one's in particular: masking them would turn ``/tmp/.nx`` into ``~/.nx``.
_SHARED_HOMES = frozenset({"/", "/tmp", "/var/tmp", "/dev/shm", CONTAINER})


def masks_for(resolution: Resolution, environ: t.Mapping[str, str], view: FsView | None = None) -> Masks:
    """The homes and user names to mask, and the text a refused ``.env`` drew from the environment.

    The audited user's ``$HOME`` and passwd home, each also by its real path
    (a home reached through a link is shown by the kernel as its target);
    its passwd name and *environ*'s ``USER``/``LOGNAME`` where they are that
    user's (not ``USER=root`` under root's ``doctor --user``); under
    ``sudo``, the invoking user's name and passwd home (``SUDO_USER``,
    ``SUDO_UID``), shown ``~<user>``.  ``root`` is never masked: it is no
    secret, and masking it would turn ``root:root`` into ``<user>:<user>``.
    """
    from ..core.host import account

    env = resolution.environment
    simulated = env.simulated
    homes: list[tuple[str, str]] = []
    names: list[str] = []

    def add_home(path: str | None, shown: str) -> None:
        if not path or not path.startswith("/"):
            return
        forms = [path.rstrip("/") or "/"]
        real = (
            os.path.realpath(path)
            if view is None and not simulated
            else (path if view is None else view.realpath(path))
        )
        if isinstance(real, str):
            forms.append(real.rstrip("/") or "/")
        homes.extend((form, shown) for form in forms if form not in _SHARED_HOMES)

    for home in (env.get("HOME"), env.passwd_home, environ.get("HOME")):
        add_home(home, "~")
    names.append(env.username or "")
    for variable in ("USER", "LOGNAME"):
        name = environ.get(variable)
        if name and not simulated:
            entry = account(name)
            if (entry is None and env.username is None) or (entry is not None and entry[2] == env.uid):
                names.append(name)
    sudo_user, sudo_uid = environ.get("SUDO_USER"), environ.get("SUDO_UID")
    if (sudo_user or sudo_uid) and not simulated:
        entry = account(int(sudo_uid)) if sudo_uid and sudo_uid.isdigit() else None
        entry = entry or (account(sudo_user) if sudo_user else None)
        if entry is not None:
            names.append(entry[0])
            add_home(entry[1], "~<user>")
        if sudo_user and (entry is None or sudo_user == entry[0]):
            names.append(sudo_user)
    names = [n for n in dict.fromkeys(names) if n and n.strip() and n != "root"]
    return Masks(tuple(homes), tuple(names), env.withheld)


_MARKDOWN_SPECIAL = frozenset("\\`*_[]<>|&~")


#: What GitHub gives a meaning in text outside code: a mention (``@x``), a reference (``#1``, ``owner/repo#1``,
#: ``GH-1``), an emoji (``:x:``).  Each run of them is shown as a code span, where GitHub reads none of them.
_GITHUB_MEANING = re.compile(r"(?:@(?=[A-Za-z0-9])|#(?=[0-9])|(?<![A-Za-z0-9])(?i:gh-)(?=[0-9])"
                             r"|:(?=[A-Za-z0-9_+-]+:))+")


def md_text(text: str | None) -> str:
    r"""*text* as Markdown that shows exactly it: terminal-unsafe characters escaped, Markdown punctuation backslashed,
    and nothing GitHub would read as a mention, a reference, an emoji or math.

    A ``$`` is the character reference ``&#36;`` (which no parser takes for a
    delimiter of math); ``@``, ``#``, ``GH-`` and ``:`` where GitHub would link or
    draw them are each a code span, which GitHub leaves alone and which
    copies as the same characters.

    >>> md_text("a|b <user> `x`\n# h")
    'a\\|b \\<user\\> \\`x\\`\\\\x0a# h'
    >>> md_text("@ada fixed #12 :tada: for $5")
    '`@`ada fixed `#`12 `:`tada: for &#36;5'
    """
    from ..core.terminal import printable

    def escaped(part: str) -> str:
        return "".join("\\" + ch if ch in _MARKDOWN_SPECIAL else "&#36;" if ch == "$" else ch for ch in part)

    shown, out, at = printable(text), [], 0
    for match in _GITHUB_MEANING.finditer(shown):
        out += [escaped(shown[at : match.start()]), f"`{match.group(0)}`"]
        at = match.end()
    out.append(escaped(shown[at:]))
    return "".join(out)


def md_code(text: str | None) -> str:
    """*text* as an inline code span no backtick in it can close early; newlines and control bytes shown escaped.

    >>> md_code("a`b")
    '``a`b``'
    >>> md_code("`x")
    '`` `x ``'
    """
    import re

    from ..core.terminal import printable

    shown = _no_workflow_command(printable(text))
    longest = max((len(run) for run in re.findall(r"`+", shown)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if shown.startswith(("`", " ")) or shown.endswith(("`", " ")) or not shown else ""
    return f"{fence}{pad}{shown}{pad}{fence}"


def _md_block(lines: t.Sequence[str], info: str = "") -> list[str]:
    r"""A fenced code block longer than any backtick run inside it, every line shown escaped.

    A report printed in a GitHub Actions log is read line by line, and a line from disk must not become a
    workflow command there: a ``::`` it would begin with shows its first colon as ``\x3a``, and an older
    ``##[`` anywhere in it shows its bracket as ``\x5b`` (:func:`_no_workflow_command`).

    >>> _md_block(["  ::error::planted", "a::b", "x ##[error]planted"], "text")
    ['```text', '  \\x3a:error::planted', 'a::b', 'x ##\\x5berror]planted', '```']
    """
    import re

    from ..core.terminal import printable

    shown = [_no_workflow_command(printable(line)) for line in lines]
    longest = max((len(run) for line in shown for run in re.findall(r"`{3,}|~{3,}", line)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}{info}", *shown, fence]


def _no_workflow_command(line: str) -> str:
    """*line* with what would make it a GitHub Actions workflow command escaped: ``::`` at its start (after
    blanks, as the runner trims them) and the older ``##[`` anywhere in it (the runner looks for it anywhere)."""
    line = line.replace("##[", "##\\x5b")
    body = line.lstrip()
    if body.startswith("::"):
        return line[: len(line) - len(body)] + "\\x3a" + body[1:]
    return line


_SEVERITY_WORD = {name: f"{look.mark} {look.noun}" for name, look in SEVERITIES.items()}


def report_facts(resolution: Resolution, view: FsView, sandbox: str | None = None) -> list[tuple[str, str, bool]]:
    """The report's header facts as ``(label, value, is_code)``: versions, platform, sandbox."""
    import platform as host_platform
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as package_version

    from ..audit.findings import SANDBOX_MARKERS
    from ..core.sandbox_daemon import inside_user_namespace

    try:
        ours = package_version("nxsock")
    except PackageNotFoundError:  # run from a checkout that was never installed
        ours = wording.NXSOCK_NOT_INSTALLED
    env = resolution.environment
    version = env.nx_version or "not installed"
    how = f" ({env.nx_version_source})" if env.nx_version_source else ""
    assumed = wording.predicted_with_rules(resolution.rules.release) if resolution.layout_assumed else ""
    sandboxes = []
    mapping = inside_user_namespace(view) if not env.simulated else None
    if mapping is not None:
        sandboxes.append(wording.user_namespace_fact(mapping))
    markers = [m for m in SANDBOX_MARKERS if env.get(m)]
    if markers:
        sandboxes.append("markers " + ", ".join(markers))
    if sandbox:
        sandboxes.append(f"judged for {sandbox} (--sandbox)")
    return [
        ("nxsock", ours, True),
        (
            "Nx",
            wording.nx_fact(f"{version}{how}", resolution.layout, resolution.generation, resolution.rules.release,
                            assumed),
            False,
        ),
        ("Platform", f"{env.platform}, {host_platform.platform()}, Python {host_platform.python_version()}", False),
        *_toolchain_facts(env.simulated),
        ("Sandbox", "; ".join(sandboxes) if sandboxes else "none detected", False),
    ]


def _toolchain_facts(simulated: bool) -> list[tuple[str, str, bool]]:
    """Node's version and the OS release, what Nx's maintainers ask for first; not for a simulated machine."""
    if simulated:
        return []
    from ..core.host_versions import node_version, os_release

    return [
        ("Node", node_version() or wording.NODE_NOT_FOUND, False),
        ("OS", os_release() or "unknown (no os-release)", False),
    ]


def report_paths(resolution: Resolution) -> list[tuple[str, str | None, str]]:
    """The resolved paths as ``(label, path, note)``."""
    env = resolution.environment
    root = resolution.socket_root
    rows: list[tuple[str, str | None, str]] = [
        ("Workspace", env.workspace_root, f"found by {env.workspace_source}"),
        ("Socket root", root.root, root.tier or wording.NO_SOCKET_ROOT),
    ]
    if root.demoted_from:
        rows.append(("Demoted from", root.demoted_from, ""))
    for kind, placement in resolution.sockets.items():
        if placement.placed and placement.tier is not None:
            length = f"{placement.length}/{95} characters" + (", too long" if placement.too_long else "")
            rows.append((f"{kind.capitalize()} socket", placement.path or placement.pattern, length))
    cache = resolution.native_cache
    rows.append(
        (
            "Binding cache",
            None if cache.bypass_reason else cache.dir,
            f"bypassed: {cache.bypass_reason}" if cache.bypass_reason else "",
        )
    )
    data = resolution.workspace_data
    rows.append(("Workspace data", data.dir, data.source))
    rows.append(("Daemon directory", data.daemon_dir, ""))
    return rows


def doctor_markdown(results: t.Sequence[tuple[str, t.Any]], status: str, facts: t.Sequence[tuple[str, str, bool]],
                    paths: t.Sequence[tuple[str, str | None, str]], masks: Masks = NO_MASKS) -> str:
    """``doctor --report``: Markdown to paste into an issue or a chat, every name from disk escaped, *masks* applied."""
    m = masks.apply
    counts = {s: sum(1 for _, f in results if f.severity == s) for s in ("error", "warn", "info", "ok")}
    out = [wording.REPORT_HEADING, ""]
    for label, value, code in facts:
        out.append(f"- **{label}:** " + (md_code(m(value)) if code else md_text(m(value))))
    out.append(wording.report_status(status, counts['error'], counts['warn'], counts['info'], counts['ok']))
    out += ["", "### Findings", ""]
    problems = [(g, f) for g, f in results if f.severity in ("error", "warn")]
    if not problems:
        out += [wording.REPORT_NO_PROBLEMS, ""]
    fixes_given: set[str] = set()  # each command once: a finding whose fix an earlier one gave points back at it
    for _, finding in problems:
        out += [f"#### {_SEVERITY_WORD[finding.severity]}: {md_code(finding.id)}", "", md_text(m(finding.message)), ""]
        if finding.path:
            out += [f"Path: {md_code(m(finding.path))}", ""]
        detail = list(getattr(finding, "detail", ()))
        if detail:
            out += ["What it recorded:", "", *_md_block([m(line) for line in detail], "text"), ""]
        fix = fix_line(finding.advice)
        if fix and fix in fixes_given:
            out += [wording.REPORT_SAME_FIX, ""]
        elif fix:
            fixes_given.add(fix)
            out += ["Fix:", "", *_md_block([m(fix)], "sh"), ""]
        if finding.hint:
            out += [f"Note: {md_text(m(finding.hint))}", ""]
    rest = [(g, f) for g, f in results if f.severity not in ("error", "warn")]
    if rest:  # folded: a reader wants the problems; the rest is one click away
        out += [wording.report_other_checks(len(rest)), ""]
        for _, finding in rest:
            line = f"- {_SEVERITY_WORD[finding.severity]} {md_code(finding.id)}: {md_text(m(finding.message))}"
            fix = fix_line(finding.advice)
            if fix:
                line += f" Fix: {md_code(m(fix))}"
            if finding.hint:
                line += f" Note: {md_text(m(finding.hint))}"
            out.append(line)
        out += ["", "</details>", ""]
    out += ["<details><summary>Resolved paths</summary>", ""]
    for label, path, note in paths:
        shown = md_code(m(path)) if path else "none"
        out.append(f"- **{label}:** {shown}" + (f" ({md_text(m(note))})" if note else ""))
    out += ["", "</details>", ""]
    if masks.homes or masks.names:
        out += [wording.REPORT_MASKED_HOME, ""]
    if masks.withheld:
        out += [wording.REPORT_WITHHELD, ""]
    text = "\n".join(out)
    if "<redacted>" in text or "\\<redacted\\>" in text:
        text += wording.REPORT_REDACTED
    return text


# -- doctor --format github: workflow commands -------------------------------------------------

_GITHUB_LEVEL = {name: look.github for name, look in SEVERITIES.items() if look.github is not None}


def _github_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _github_property(text: str) -> str:
    return _github_data(text).replace(":", "%3A").replace(",", "%2C")


def github_annotations(results: t.Sequence[tuple[str, t.Any]], withheld: t.Sequence[tuple[str, str]] = (),
                       *, notes: bool = False) -> str:
    r"""One GitHub Actions workflow command per problem: ``::error``, ``::warning``; ``::notice`` for the notes only
    with *notes* (``--strict``, where a run that fails wants everything it judged beside the failure).

    A healthy run annotates nothing: a notice on every job is noise that hides the one that matters.

    The title names the finding; the message carries the sentence, then the
    fix and the note on lines of their own.  ``%``, CR and LF are escaped as
    the runner reads them (``%25``, ``%0D``, ``%0A``), and ``:`` and ``,`` in
    the title too; names from disk are shown escaped first, so one cannot
    start a workflow command of its own.  What a refused ``.env`` drew from
    the environment is shown as written (*withheld*), and secret-shaped
    strings as ``<redacted>`` (:mod:`nxsock.core.redaction`): a log is public.

    >>> from nxsock.audit.findings import Finding
    >>> from nxsock.core.remedy import NxsockCommand, Remedy, RunNxsock
    >>> from nxsock.core.wording import Advice
    >>> reset = Advice(Remedy((RunNxsock(NxsockCommand.RESET),), "Removes them."), None)
    >>> print(github_annotations([("g", Finding("sockets", "warn", "/x", "50% stale\nx", reset))]), end="")
    ::warning title=nxsock doctor%3A sockets::50%25 stale\x0ax%0Afix: nxsock reset
    """
    from ..core.redaction import redact, withhold
    from ..core.terminal import printable

    def shown(text: str) -> str:
        return printable(redact(withhold(text, withheld)))

    lines = []
    for _, finding in results:
        level = _GITHUB_LEVEL.get(finding.severity)
        if level is None or (level == "notice" and not notes):
            continue
        parts = [shown(finding.message)]
        fix = fix_line(finding.advice)
        if fix:
            parts.append("fix: " + shown(fix))
        if finding.hint:
            parts.append("note: " + shown(finding.hint))
        title = _github_property(f"nxsock doctor: {shown(finding.id)}")
        lines.append(f"::{level} title={title}::{_github_data(chr(10).join(parts))}")
    return "\n".join(lines) + ("\n" if lines else "")
