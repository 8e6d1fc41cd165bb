"""The JSON documents nxsock prints, built from resolver values with the stdlib alone.

Keys are a contract (SPEC §5): ``schema_version`` 1, only ever added to, each
documented key always present (``null`` where it does not apply), modes as
four octal digits, errnos by name, paths as strings Node would print.
"""

from __future__ import annotations

import json
import os
import sys
import typing as t

from . import exitcodes
from .fsview import OVERFLOW_UID, FsView
from .guards import Refusal
from .layout import CONTAINER, node_string
from .remedy import Step, step_json
from .resolver import Resolution, SocketPlacement
from .sandbox_daemon import (
    CLEAR_MARKER,
    RUN_INSIDE,
    SandboxDaemon,
    inside_advice,
    marker_warning,
    sandbox_statement,
)

if t.TYPE_CHECKING:
    from .binding_cache import CacheListing, Verdict
    from .cleanup import ResetItem
    from .explain import Answer, Explanation
    from .findings import Finding
    from .provisioning import ProvisionReport
    from .removal import Removal
    from .tmpfiles import TmpfilesChange

from .wording import (
    PROVISION_COMMAND,
    RemedyContext,
    context_for,
    describe,
    describe_invalid,
    format_mode,
    remedy_for,
    remedy_for_invalid,
)

__all__ = [
    "SCHEMA_VERSION",
    "cache_list_document",
    "cache_path_document",
    "cache_prune_document",
    "cache_verify_document",
    "check_root_document",
    "doctor_document",
    "dumps",
    "paths_document",
    "paths_exit_code",
    "print_paths_json",
    "provision_document",
    "remedy_context",
    "reset_document",
]

SCHEMA_VERSION = 1

Json = dict[str, t.Any]


def _p(path: str | None) -> str | None:
    return None if path is None else node_string(path)


def remedy_context(resolution: Resolution, view: FsView | None = None) -> RemedyContext:
    """Who the remedies are for and the policy they pass, over *view* (this host, or the simulated machine)."""
    if view is None:
        view = _view_for(resolution)
    return context_for(resolution, view)


def _view_for(resolution: Resolution) -> FsView:
    """The view a resolution was made over, when the caller did not keep it."""
    from .fresh_machine import fresh_machine
    from .fsview import LiveView, MemoryView

    env = resolution.environment
    if not env.simulated:
        return LiveView()
    return MemoryView({}) if env.platform == "win32" else fresh_machine(env)


def refusal_json(refusal: Refusal, ctx: RemedyContext, sandbox: SandboxDaemon | None = None, purpose: str = "sockets") -> Json:
    remedy = remedy_for(refusal, ctx, purpose)
    advice = inside_advice(refusal, sandbox)
    if advice is not None:  # inside bwrap/srt/codex: no command typed there fixes it
        remedy = remedy._replace(command=None, hint=advice, steps=())
    return {
        "kind": refusal.kind,
        "dir": _p(refusal.dir),
        "uid": refusal.uid,
        "mode": format_mode(refusal.mode),
        "errno": refusal.errno,
        "symlink": refusal.symlink,
        "message": describe(refusal, purpose),
        "remedy": remedy.command,
        "hint": remedy.hint,
        "remedy_steps": [step_json(s) for s in remedy.steps] if remedy.command else None,
    }


def _socket_json(placement: SocketPlacement, resolution: Resolution, ctx: RemedyContext) -> Json:
    sandbox = resolution.user_namespace_sandbox
    doc: Json = {
        "placed": placement.placed,
        "tier": placement.tier,
        "root": _p(placement.root),
        "dir": _p(placement.dir),
        "path": _p(placement.path),
        "pattern": _p(placement.pattern),
        "length": placement.length,
        "too_long": placement.too_long,
        "budget_left": placement.budget_left,
        "windows_max_username": placement.windows_max_username,
        "attempted_dir": _p(placement.attempted_dir),
        "refusals": [refusal_json(r, ctx, sandbox) for r in placement.refusals],
        "failure": None if placement.failure is None else refusal_json(placement.failure, ctx, sandbox),
    }
    if placement.kind == "daemon":
        record = resolution.daemon_record
        doc["recorded"] = record is not None and record.socket_path is not None
        doc["alive"] = None if record is None else record.alive
        doc["answers"] = None if record is None or record.connect is None else record.connect == "answers"
        # Nx ≥ 24.0.5's client dials only a socket whose directory and ancestry it trusts.
        doc["client_will_connect"] = None if placement.root is None else placement.client_refusal is None
        doc["client_refusal"] = None if placement.client_refusal is None else refusal_json(placement.client_refusal, ctx)
    if placement.kind == "plugin":
        doc["id_budget"] = placement.id_budget
    return doc


def _rules_json(resolution: Resolution) -> Json:
    """The release table's rules this prediction followed (``nxsock.releases``), modes as octal strings."""
    rules = resolution.rules._asdict()
    rules.pop("release")
    rules.pop("assumed")
    rules["socket_mode"] = format_mode(rules["socket_mode"])
    return rules


def paths_document(resolution: Resolution, view: FsView | None = None) -> Json:
    """The ``paths --json`` document."""
    env = resolution.environment
    ctx = remedy_context(resolution, view)
    root = resolution.socket_root
    invalid = None
    if root.invalid is not None:
        remedy = remedy_for_invalid(root.invalid.variable, ctx)
        invalid = {
            "reason": root.invalid.reason,
            "dir": _p(root.invalid.dir),
            "variable": root.invalid.variable,
            "source": root.invalid.source,
            "message": describe_invalid(root.invalid.reason, root.invalid.dir, root.invalid.variable),
            "remedy": remedy.command,
            "hint": remedy.hint,
            "remedy_steps": [step_json(s) for s in remedy.steps] if remedy.command else None,
        }
    cache = resolution.native_cache
    data = resolution.workspace_data
    record = resolution.daemon_record
    sandbox = resolution.user_namespace_sandbox
    return {
        "schema_version": SCHEMA_VERSION,
        "platform": env.platform,
        "uid": None if env.platform == "win32" else env.uid,
        "workspace_root": _p(env.workspace_root),
        "workspace_source": env.workspace_source,
        "nx_version": env.nx_version,
        "nx_version_source": env.nx_version_source,
        "layout": resolution.layout,
        "generation": resolution.generation,
        "layout_assumed": resolution.layout_assumed,
        "rules_release": resolution.rules.release,
        "rules": _rules_json(resolution),
        "variables": {k: {"value": node_string(v.value), "source": _p(v.source)} for k, v in sorted(env.variables.items())},
        "socket_root": {
            "tier": root.tier,
            "root": _p(root.root),
            "demoted_from": _p(root.demoted_from),
            "refused_configured_dir": _p(root.refused_configured_dir),
            "invalid": invalid,
            "refusals": [refusal_json(r, ctx, sandbox) for r in root.refusals],
            "failure": None if root.failure is None else refusal_json(root.failure, ctx, sandbox),
        },
        "sockets": {kind: _socket_json(p, resolution, ctx) for kind, p in resolution.sockets.items()},
        "native_cache": {
            # README: ``null`` when Nx loads the binding in place, whatever directory it had considered.
            "dir": None if cache.bypass_reason is not None else _p(cache.dir),
            "bypass_reason": cache.bypass_reason,
            "configured": cache.configured,
            "refusals": [refusal_json(r, ctx, sandbox, "cache") for r in cache.refusals],
        },
        "workspace_data": {
            "dir": _p(data.dir),
            "daemon_dir": _p(data.daemon_dir),
            "source": data.source,
            "untrusted_reason": data.untrusted_reason,
            "refused": data.refused,
            "socket_dir": _p(data.socket_dir),
        },
        "daemon_record": None
        if record is None
        else {
            "file": _p(record.file),
            "pid": record.pid,
            "socket_path": _p(record.socket_path),
            "nx_version": record.nx_version,
            "alive": record.alive,
            "connect": record.connect,
            "problem": record.problem,
            "client_checks_socket": record.client_checks_socket,
            "client_will_connect": record.client_will_connect,
            "client_refusal": None if record.client_refusal is None else _client_refusal_json(record.client_refusal, ctx, sandbox),
        },
        "user_namespace_sandbox": _sandbox_json(resolution, ctx),
        "actions": [{"verb": a.verb, "path": _p(a.path), "mode": format_mode(a.mode)} for a in resolution.actions],
        "allowlist": {
            "write": [_p(p) for p in resolution.allowlist.write],
            "unix_sockets": [_p(p) for p in resolution.allowlist.unix_sockets],
        },
    }


def _client_refusal_json(refusal: Refusal, ctx: RemedyContext, sandbox: SandboxDaemon | None) -> Json:
    """A refusal by Nx's client; a level shown as 65534 by a sandbox is answered with a daemonless run, never a directory."""
    doc = refusal_json(refusal, ctx, sandbox)
    if refusal.uid == OVERFLOW_UID and sandbox is not None and not sandbox.usable:
        name, _, value = RUN_INSIDE.partition("=")
        doc.update(remedy=f"export {RUN_INSIDE}", hint=marker_warning(sandbox),
                   remedy_steps=[step_json(Step("export", variable=name, value=value))])
    return doc


def _sandbox_json(resolution: Resolution, ctx: RemedyContext) -> Json | None:
    """Whether the daemon can serve a client inside bubblewrap, srt or codex (Linux), and what works there."""
    verdict = resolution.user_namespace_sandbox
    if verdict is None:
        return None
    version = resolution.environment.nx_version
    return {
        "inside": verdict.inside,
        "client_checks_socket_ancestry": verdict.client_checks,
        "daemon_usable": verdict.usable,
        "refusal": None if verdict.refusal is None else _client_refusal_json(verdict.refusal, ctx, verdict),
        "message": None if verdict.usable else sandbox_statement(verdict, version),
        "run_inside": None if verdict.usable else RUN_INSIDE,
        "marker": _p(verdict.marker),
        "marker_warning": None if verdict.usable else marker_warning(verdict),
        "clear_marker": None if verdict.usable else CLEAR_MARKER,
    }


def print_paths_json(resolution: Resolution, stream: t.TextIO, view: FsView | None = None) -> int:
    """Write the ``paths --json`` document to *stream*; return the exit code it calls for."""
    write_json(paths_document(resolution, view), stream)
    return paths_exit_code(resolution)


def paths_exit_code(resolution: Resolution) -> int:
    """78 for configuration Nx refuses, 73 when no socket directory can be established, else 0."""
    if resolution.socket_root.invalid is not None or resolution.workspace_data.refused:
        return exitcodes.CONFIG
    if resolution.socket_root.failure is not None or any(
        p.failure is not None for p in resolution.sockets.values()
    ):
        return exitcodes.CANTCREAT
    return exitcodes.OK


def check_root_document(path: str, state: str, refusal: Refusal | None, ctx: RemedyContext) -> Json:
    """The ``check-root --json`` document: ``absent`` and ``ok`` are safe, ``refused`` is not."""
    return {
        "schema_version": SCHEMA_VERSION,
        "path": _p(path),
        "safe": refusal is None,
        "state": state,
        "refusal": None if refusal is None else refusal_json(refusal, ctx),
        "provision_command": PROVISION_COMMAND if path == CONTAINER else None,
    }


def provision_document(report: ProvisionReport, ctx: RemedyContext | None = None) -> Json:
    """The ``provision --json`` document: each step, done or planned, and whether anything changed."""
    if ctx is None:
        from .fsview import LiveView
        from .wording import plain_context

        ctx = plain_context(LiveView(), os.geteuid(), os.getegid(), os.environ.get("HOME"))
    return {
        "schema_version": SCHEMA_VERSION,
        "as_root": report.as_root,
        "dry_run": report.dry_run,
        "changed": report.changed,
        "steps": [
            {"verb": s.verb, "path": _p(s.path), "mode": format_mode(s.mode), "done": not report.dry_run}
            for s in report.steps
        ],
        "refusal": None if report.refusal is None else refusal_json(report.refusal, ctx),
    }


def reset_document(items: t.Sequence[ResetItem], marker_reason: str | None, *, dry_run: bool, interrupted: bool) -> Json:
    """The ``reset --json`` document: each entry removed, kept or failed, the space freed, whether Ctrl-C stopped it."""
    return {
        "schema_version": SCHEMA_VERSION,
        "dry_run": dry_run,
        "interrupted": interrupted,
        "marker_reason": marker_reason,
        "removed": [{"path": i.path, "what": i.what, "reason": i.reason, "freed": i.freed} for i in items if i.outcome == "removed"],
        "kept": [{"path": i.path, "what": i.what, "reason": i.reason, "count": i.entries} for i in items if i.outcome == "kept"],
        "failed": [{"path": i.path, "what": i.what, "reason": i.reason} for i in items if i.outcome == "failed"],
        "refused": [{"path": i.path, "what": i.what, "reason": i.reason} for i in items if i.outcome == "refused"],
        "freed": sum(i.freed for i in items if i.outcome == "removed"),
    }


def cache_path_document(directory: str | None, bypass_reason: str | None) -> Json:
    """The ``cache path --json`` document: the directory, or ``null`` and why Nx loads the binding in place."""
    return {"schema_version": SCHEMA_VERSION, "dir": directory, "bypass_reason": bypass_reason}


def cache_list_document(listing: CacheListing) -> Json:
    """The ``cache list --json`` document: every entry with the binding it belongs to and its state."""
    return {
        "schema_version": SCHEMA_VERSION,
        "dir": listing.dir,
        "bypass_reason": listing.bypass_reason,
        "binding": None if listing.binding is None else listing.binding.path,
        "entries": [
            {"path": e.path, "version": e.version, "binding": e.binding, "size": e.size, "trusted": e.trusted,
             "fresh": e.fresh, "in_use": e.in_use, "partial": e.partial}
            for e in listing.entries
        ],
    }


def cache_verify_document(verdict: Verdict, listing: CacheListing) -> Json:
    """The ``cache verify --json`` document: the installed version's entry, its state and the fix."""
    return {
        "schema_version": SCHEMA_VERSION,
        "state": verdict.state,
        "entry": verdict.entry,
        "message": verdict.message,
        "remedy": verdict.remedy,
        "binding": None if listing.binding is None else listing.binding.path,
    }


def cache_prune_document(results: t.Sequence[tuple[Removal, str]], *, dry_run: bool, interrupted: bool) -> Json:
    """The ``cache prune --json`` document: what was removed and why, what could not be, the space freed."""
    removed = [(r, why) for r, why in results if r.outcome == "removed"]
    return {
        "schema_version": SCHEMA_VERSION,
        "dry_run": dry_run,
        "interrupted": interrupted,
        "removed": [{"path": r.path, "reason": why, "freed": r.freed} for r, why in removed],
        "failed": [{"path": r.path, "reason": r.reason} for r, _ in results if r.outcome != "removed"],
        "freed": sum(r.freed for r, _ in removed),
    }


def doctor_document(results: t.Sequence[tuple[str, Finding]], status: str, explanation: Explanation | None = None,
                    answers: t.Sequence[Answer] = ()) -> Json:
    """The ``doctor --json`` document: the status and every finding; with ``--explain``, what was recognised."""
    document: Json = {
        "schema_version": SCHEMA_VERSION,
        "status": status,
        "findings": [
            {"id": f.id, "group": group, "severity": f.severity, "path": f.path, "message": f.message,
             "remedy": f.remedy, "hint": f.hint, "detail": list(getattr(f, "detail", ())),
             "remedy_steps": [step_json(s) for s in getattr(f, "steps", ())] if f.remedy else None}
            for group, f in results
        ],
    }
    if explanation is not None:  # the first message's keys as before; then every message, each with its remedy
        first = answers[0] if answers else None
        document.update(matched=explanation.matched, errno=explanation.errno, path=explanation.path,
                        cause=explanation.cause, remedy=first.remedy if first else None,
                        remedy_source=first.source if first else None, hint=first.hint if first else None,
                        recognised=bool(answers), messages=[_answer_json(a) for a in answers],
                        truncated=explanation.truncated, messages_left_off=explanation.left_off)
    return document


def _answer_json(item: Answer) -> Json:
    m = item.message
    return {"matched": m.matched, "errno": m.errno, "path": m.path, "cause": m.cause, "remedy": item.remedy,
            "remedy_source": item.source, "hint": item.hint, "finding": item.finding}


def _printable(value: t.Any) -> t.Any:
    """Every string as Node would print it: a byte that is not UTF-8 becomes U+FFFD."""
    if isinstance(value, str):
        return node_string(value)
    if isinstance(value, dict):
        return {k: _printable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_printable(v) for v in value]
    return value


def write_json(document: Json, stream: t.TextIO | None = None) -> None:
    """Write *document* as the one JSON document of a command's stdout: indented on a terminal, compact in a pipe."""
    out = sys.stdout if stream is None else stream
    out.write(dumps(document, indent=out.isatty()) + "\n")


def tmpfiles_document(path: str, content: str) -> Json:
    """The ``provision --tmpfiles --json`` document: where the drop-in goes and what it says."""
    return {"schema_version": SCHEMA_VERSION, "path": path, "content": content}


def tmpfiles_steps_document(steps: t.Sequence[TmpfilesChange], *, dry_run: bool, changed: bool) -> Json:
    """The ``provision --tmpfiles --install/--uninstall/--check --json`` document: each step and its verb."""
    return {
        "schema_version": SCHEMA_VERSION,
        "dry_run": dry_run,
        "changed": changed,
        "steps": [{"verb": s.verb, "path": s.path, "detail": s.detail} for s in steps],
    }


def doctor_error_document(message: str) -> Json:
    """The ``doctor --json`` document when the audit itself could not be made (``--user``'s child failed)."""
    return {"schema_version": SCHEMA_VERSION, "status": "error", "findings": [], "error": message}


def dumps(document: Json, *, indent: bool = False) -> str:
    """One JSON document, UTF-8 as it is: indented for a person, compact for a pipe (the C encoder)."""
    document = _printable(document)
    if indent:
        return json.dumps(document, indent=2, ensure_ascii=False)
    return json.dumps(document, ensure_ascii=False, separators=(",", ":"))
