"""The ``paths --json`` document: every resolver value, each refusal with its vetted remedy, and its exit code.

This is the document CI runs on every job, so it is served without click
(:mod:`nxsock.cli`) and, for a prediction with no refusal, without the remedy
code either: the remedy context is made for the first refusal that needs one.
"""

from __future__ import annotations

import typing as t

from .. import exitcodes
from ..core.environment import Variable
from ..core.fsview import OVERFLOW_UID, FsView
from ..core.guards import Refusal
from ..core.layout import node_string
from ..core.mounts import LevelMount
from ..core.resolver import Resolution, SocketPlacement
from ..core.sandbox_daemon import (
    CLEAR_MARKER,
    RUN_INSIDE,
    SandboxDaemon,
    run_inside_remedy,
)
from ..core.terminal import format_mode
from .emit import SCHEMA_VERSION, Json, write_json
from .emit import node_path as _p

if t.TYPE_CHECKING:
    from ..core.wording import Advice, RemedyContext

__all__ = [
    "binding_json",
    "daemon_json",
    "fix_line",
    "paths_document",
    "paths_exit_code",
    "print_paths_json",
    "refusal_json",
    "remedy_context",
    "steps_json",
    "withheld_reason",
    "withhold_values",
]


def remedy_context(resolution: Resolution, view: FsView | None = None) -> RemedyContext:
    """Who the remedies are for and the policy they pass, over *view* (this host, or the simulated machine)."""
    from ..core.wording import context_for

    if view is None:
        view = _view_for(resolution)
    return context_for(resolution, view)


def _view_for(resolution: Resolution) -> FsView:
    """The view a resolution was made over, when the caller did not keep it."""
    from ..core.fresh_machine import fresh_machine
    from ..core.fsview import LiveView, MemoryView

    env = resolution.environment
    if not env.simulated:
        return LiveView()
    return MemoryView({}) if env.platform == "win32" else fresh_machine(env)


def fix_line(advice: Advice | None) -> str | None:
    """The line *advice* pastes, rendered from its vetted steps where it is shown; ``None`` where there is none."""
    if advice is None or advice.remedy is None:
        return None
    from ..core.remedy import render

    return render(advice.remedy, advice.nxsock_for_root)


def steps_json(advice: Advice | None) -> list[Json] | None:
    """*advice*'s vetted steps as the documents carry them (``remedy_steps``); ``None`` where there is no command."""
    if advice is None or advice.remedy is None:
        return None
    from ..core.remedy import step_json

    return [step_json(s) for s in advice.remedy.steps]


def refusal_json(
    refusal: Refusal, ctx: RemedyContext, sandbox: SandboxDaemon | None = None, purpose: str = "sockets"
) -> Json:
    """A refusal as every document shows it: what failed, the sentence, and the vetted remedy."""
    from ..core.wording import Advice, describe, inside_advice, remedy_for

    remedy = remedy_for(refusal, ctx, purpose)
    inside = inside_advice(refusal, sandbox)
    if inside is not None:  # inside bwrap/srt/codex: no command typed there fixes it
        remedy = Advice(None, inside)
    return {
        "kind": refusal.kind,
        "dir": _p(refusal.dir),
        "uid": refusal.uid,
        "mode": format_mode(refusal.mode),
        "errno": refusal.errno,
        "symlink": refusal.symlink,
        "message": describe(refusal, purpose),
        "remedy": fix_line(remedy),
        "hint": remedy.hint,
        "remedy_steps": steps_json(remedy),
    }


def _socket_json(placement: SocketPlacement, resolution: Resolution, ctx: t.Callable[[], RemedyContext]) -> Json:
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
        "refusals": [refusal_json(r, ctx(), sandbox) for r in placement.refusals],
        "failure": None if placement.failure is None else refusal_json(placement.failure, ctx(), sandbox),
    }
    if placement.kind == "daemon":
        record = resolution.daemon_record
        doc["recorded"] = record is not None and record.socket_path is not None and record.problem is None
        doc["alive"] = None if record is None else record.alive
        doc["answers"] = None if record is None or record.connect is None else record.connect == "answers"
        # Nx ≥ 24.0.5's client dials only a socket whose directory and ancestry it trusts.
        doc["client_will_connect"] = None if placement.root is None else placement.client_refusal is None
        doc["client_refusal"] = (
            None if placement.client_refusal is None else refusal_json(placement.client_refusal, ctx())
        )
    if placement.kind == "plugin":
        doc["id_budget"] = placement.id_budget
    return doc


def _rules_json(resolution: Resolution) -> Json:
    """The release table's rules this prediction followed (``nxsock.core.releases``), modes as octal strings."""
    rules = resolution.rules._asdict()
    rules.pop("release")
    rules.pop("assumed")
    rules["socket_mode"] = format_mode(rules["socket_mode"])
    return rules


def paths_document(resolution: Resolution, view: FsView | None = None) -> Json:
    """The ``paths --json`` document."""
    env = resolution.environment
    made: list[RemedyContext] = []

    def ctx() -> RemedyContext:
        """The remedy context, made for the first refusal: a prediction with none loads no remedy code."""
        if not made:
            made.append(remedy_context(resolution, view))
        return made[0]

    root = resolution.socket_root
    invalid = None
    if root.invalid is not None:
        from ..core.wording import describe_invalid, remedy_for_invalid

        remedy = remedy_for_invalid(root.invalid.variable, ctx())
        invalid = {
            "reason": root.invalid.reason,
            "dir": _p(root.invalid.dir),
            "variable": root.invalid.variable,
            "source": root.invalid.source,
            "message": describe_invalid(root.invalid.reason, root.invalid.dir, root.invalid.variable),
            "remedy": fix_line(remedy),
            "hint": remedy.hint,
            "remedy_steps": steps_json(remedy),
        }
    cache = resolution.native_cache
    data = resolution.workspace_data
    record = resolution.daemon_record
    sandbox = resolution.user_namespace_sandbox
    document: Json = {
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
        "variables": {
            k: {"value": node_string(v.value), "source": _p(v.source), "withheld": withheld_reason(v, env.withheld)}
            for k, v in sorted(env.variables.items())
        },
        "socket_root": {
            "tier": root.tier,
            "root": _p(root.root),
            "demoted_from": _p(root.demoted_from),
            "refused_configured_dir": _p(root.refused_configured_dir),
            "invalid": invalid,
            "refusals": [refusal_json(r, ctx(), sandbox) for r in root.refusals],
            "failure": None if root.failure is None else refusal_json(root.failure, ctx(), sandbox),
            "listen_fails": root.listen_fails,
        },
        "sockets": {kind: _socket_json(p, resolution, ctx) for kind, p in resolution.sockets.items()},
        "native_cache": {
            # README: ``null`` when Nx loads the binding in place, whatever directory it had considered.
            "dir": None if cache.bypass_reason is not None else _p(cache.dir),
            "bypass_reason": cache.bypass_reason,
            "configured": cache.configured,
            "refusals": [refusal_json(r, ctx(), sandbox, "cache") for r in cache.refusals],
        },
        "workspace_data": {
            "dir": _p(data.dir),
            "daemon_dir": _p(data.daemon_dir),
            "source": data.source,
            "untrusted_reason": data.untrusted_reason,
            "refused": data.refused,
            "socket_dir": _p(data.socket_dir),
        },
        "cache_directory": _cache_directory_json(resolution),
        "container": None
        if resolution.container is None
        else {**resolution.container._asdict(), "markers": list(resolution.container.markers)},
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
            "client_refusal": None
            if record.client_refusal is None
            else _client_refusal_json(record.client_refusal, ctx(), sandbox),
        },
        "user_namespace_sandbox": _sandbox_json(resolution, ctx),
        "daemon": daemon_json(resolution),
        "binding": binding_json(resolution, view),
        "actions": [{"verb": a.verb, "path": _p(a.path), "mode": format_mode(a.mode)} for a in resolution.actions],
        "allowlist": {
            "write": [_p(p) for p in resolution.allowlist.write],
            "unix_sockets": [_p(p) for p in resolution.allowlist.unix_sockets],
        },
        "mounts": [mount_json(m) for m in resolution.mounts],
    }
    return withhold_values(document, env.withheld) if env.withheld else document


def mount_json(level: LevelMount) -> Json:
    """The mount under one level, with what that filesystem can do for Nx."""
    mount = level.mount
    return {
        "level": level.level,
        "path": _p(level.path),
        "mount_point": _p(mount.mount_point),
        "fs_type": mount.fs_type,
        "source": node_string(mount.source),
        "bind_root": None if not mount.bind else node_string(mount.root),
        "read_only": mount.read_only,
        "noexec": mount.noexec,
        "network": mount.network,
        "holds_sockets": mount.holds_sockets,
        "keeps_modes": mount.keeps_modes,
    }


def _cache_directory_json(resolution: Resolution) -> Json | None:
    """The configured task cache and whether the release stops on it, or ``None`` where none is configured."""
    cache = resolution.cache_directory
    if cache is None:
        return None
    return {
        "dir": _p(cache.dir),
        "source": cache.source,
        "untrusted_reason": cache.untrusted_reason,
        "refused": cache.refused,
    }


def withheld_reason(variable: Variable, withheld: t.Sequence[tuple[str, str]]) -> str | None:
    """Why *variable* is shown as written in its ``.env`` rather than as Nx expands it, or ``None`` when it is not."""
    if variable.written is None or not any(written == variable.written for _, written in withheld):
        return None
    return (f"shown as written in {variable.source}, a file the trust rule refuses: Nx expands it with "
            f"{', '.join(variable.expanded_from)} from your environment, and no report shows that value")


def withhold_values(value: t.Any, withheld: t.Sequence[tuple[str, str]]) -> t.Any:
    """*value* (a document or any part of it) with every string's withheld text shown as written."""
    from ..core.redaction import withhold

    if isinstance(value, str):
        return withhold(value, withheld)
    if isinstance(value, dict):
        return {k: withhold_values(v, withheld) for k, v in value.items()}
    if isinstance(value, list):
        return [withhold_values(v, withheld) for v in value]
    return value


def daemon_json(resolution: Resolution) -> Json:
    """Whether Nx's client uses its daemon, as the release in hand decides, and every cause that keeps it off."""
    verdict = resolution.daemon
    if verdict is None:  # a Resolution made by hand, not by resolve()
        return {"enabled": None, "reasons": []}
    return {"enabled": verdict.enabled, "reasons": list(verdict.reasons)}


def binding_json(resolution: Resolution, view: FsView | None = None) -> Json | None:
    """The binding this host needs: which package and file, whether it is there, what is there instead, and whether
    the mounts let the release in hand load it (``noexec``); ``null`` for a simulated machine, whose packages are not
    here."""
    if resolution.environment.simulated:
        return None
    from ..audit.binding_presence import binding_verdict, host_triple

    verdict = binding_verdict(resolution, view if view is not None else _view_for(resolution), host_triple())
    presence, loads = verdict.presence, verdict.loads
    return {
        "state": presence.state,
        "triple": presence.triple,
        "package": presence.package,
        "file": None if presence.triple is None else f"nx.{presence.triple}.node",
        "present": None if presence.state in ("no-nx", "unknown-platform") else presence.state == "ok",
        "path": _p(verdict.path),
        "instead": list(presence.others),
        "lockfile": presence.lockfile,
        "package_manager": presence.manager,
        "locked": presence.locked,
        "loads_from": verdict.loads_from,
        "loadable": verdict.loadable,
        "noexec": None if loads is None else loads.state,
        "noexec_cache_mount": None if loads is None else _p(loads.cache_mount),
        "noexec_binding_mount": None if loads is None else _p(loads.binding_mount),
    }


def _client_refusal_json(refusal: Refusal, ctx: RemedyContext, sandbox: SandboxDaemon | None) -> Json:
    """A refusal by Nx's client; a level shown as 65534 by a sandbox is answered with a daemonless run, never a
    directory."""
    from ..core.wording import marker_warning

    doc = refusal_json(refusal, ctx, sandbox)
    if refusal.uid == OVERFLOW_UID and sandbox is not None and not sandbox.usable:
        advice = ctx.offer(run_inside_remedy(marker_warning(sandbox)))
        doc.update(remedy=fix_line(advice), hint=advice.hint, remedy_steps=steps_json(advice))
    return doc


def _sandbox_json(resolution: Resolution, ctx: t.Callable[[], RemedyContext]) -> Json | None:
    """Whether the daemon can serve a client inside bubblewrap, srt or codex (Linux), and what works there."""
    verdict = resolution.user_namespace_sandbox
    if verdict is None:
        return None
    version = resolution.environment.nx_version
    statement = warning = None
    if not verdict.usable:  # a refusal: its remedy has loaded the wording already
        from ..core.wording import marker_warning, sandbox_statement

        statement, warning = sandbox_statement(verdict, version), marker_warning(verdict)
    return {
        "inside": verdict.inside,
        "client_checks_socket_ancestry": verdict.client_checks,
        "daemon_usable": verdict.usable,
        "refusal": None if verdict.refusal is None else _client_refusal_json(verdict.refusal, ctx(), verdict),
        "message": statement,
        "run_inside": None if verdict.usable else RUN_INSIDE,
        "marker": _p(verdict.marker),
        "marker_warning": warning,
        "clear_marker": None if verdict.usable else CLEAR_MARKER,
    }


def print_paths_json(resolution: Resolution, stream: t.TextIO, view: FsView | None = None) -> int:
    """Write the ``paths --json`` document to *stream*; return the exit code it calls for."""
    write_json(paths_document(resolution, view), stream)
    return paths_exit_code(resolution)


def paths_exit_code(resolution: Resolution) -> int:
    """78 for configuration Nx refuses, 73 when no socket directory can be established (or none Nx can listen in), else
    0."""
    cache = resolution.cache_directory
    if (
        resolution.socket_root.invalid is not None
        or resolution.workspace_data.refused
        or (cache is not None and cache.refused)
    ):
        return exitcodes.CONFIG
    if resolution.socket_root.failure is not None or resolution.socket_root.listen_fails is not None or any(
        p.failure is not None for p in resolution.sockets.values()
    ):
        return exitcodes.CANTCREAT
    return exitcodes.OK
