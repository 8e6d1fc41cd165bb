"""What a sandbox must allow for Nx, computed over the sandbox's own view, in each sandbox's syntax.

An allowlist of ``/tmp/.nx`` and ``~/.nx`` can be useless: inside an
unprivileged user namespace every foreign owner, root included, is uid 65534,
so Nx 24 refuses both default tiers and Nx 23 keeps ``/tmp/.nx`` only when
the user owns it (docs/behaviour.md#user-namespace-sandboxes).  So the plan resolves over that view, with the
sandbox refusing writes directly in ``/``, ``/tmp`` and ``$HOME`` (entries are
never those), and allows the narrowest existing directories Nx then writes.
"""

from __future__ import annotations

import typing as t

from ..core import wording
from ..core._pathname import dirname, join
from ..core.environment import Environment, home_directory
from ..core.fsview import Entry, FsView, UserNamespaceView
from ..core.guards import sandbox_real_dir
from ..core.releases import ReleaseRules
from ..core.resolver import Resolution, resolve, rules_in_force
from ..core.sandbox_daemon import SandboxDaemon
from ..core.sandbox_formats import FORMATS as FORMAT_TABLE
from ..core.sandbox_formats import Allowed

__all__ = ["FORMATS", "SANDBOX_TMPDIR", "SandboxPlan", "plan_for", "render", "sandbox_kind"]

#: The sandbox formats ``paths --format`` prints: the names of the one table, core/sandbox_formats.py.
FORMATS = tuple(FORMAT_TABLE)


def sandbox_kind(fmt: str, platform: str) -> tuple[bool, bool]:
    """``(user namespace, bind mounts)`` for a format on a platform (the format's row says which)."""
    return FORMAT_TABLE[fmt].kind(platform)


GLOB = set("*?[]{}")


class SandboxPlan(t.NamedTuple):
    resolution: Resolution  # where Nx goes inside the sandbox
    write: tuple[str, ...]  # existing directories to make writable, real paths
    sockets: tuple[str, ...]  # directories Nx binds and dials sockets in
    pending: tuple[str, ...]  # directories Nx needs whose only existing ancestor may not be allowed
    flagged: tuple[str, ...]  # entries with glob characters some sandboxes read as patterns
    daemon: SandboxDaemon | None = None  # a user-namespace sandbox: whether Nx's client can use its daemon there


def _forbidden(env: Environment, rules: ReleaseRules) -> set[str]:
    home = home_directory(env, passwd_fallback=rules.empty_home_uses_passwd)
    found = {"/", "/tmp", "/private/tmp"}
    if home:
        found.add(home)
    return found


def _deepest_existing(view: FsView, path: str) -> str:
    while True:
        entry = view.stat(path)
        if isinstance(entry, Entry) and entry.is_dir:
            return path
        parent = dirname(path)
        if parent == path:
            return path
        path = parent


def _narrowest(paths: t.Iterable[str]) -> tuple[str, ...]:
    """Drop an entry that lies beneath another; keep the order first seen."""
    unique = list(dict.fromkeys(paths))
    return tuple(p for p in unique if not any(p != q and p.startswith(q.rstrip("/") + "/") for q in unique))


#: What each sandbox is called in a sentence, and the TMPDIR a sandbox sets for what it runs: views of the table.
SANDBOX_NAMES = {name: f.called for name, f in FORMAT_TABLE.items() if f.called is not None}
SANDBOX_TMPDIR = {name: f.tmpdir for name, f in FORMAT_TABLE.items() if f.tmpdir is not None}


def plan_for(
    env: Environment, base: FsView, *, user_namespace: bool, binds: bool, tmpdir: str | None = None
) -> SandboxPlan:
    """Resolve as the sandbox shows the filesystem, then allow the narrowest directories Nx writes.

    With *binds* an entry must exist, so it is the deepest existing directory
    Nx writes in, and the sandbox is taken to refuse writes directly in ``/``,
    ``/tmp`` and ``$HOME``; with path rules an entry may name what Nx creates.
    """
    forbidden = _forbidden(env, rules_in_force(env))
    view = UserNamespaceView(
        base, env.uid, env.gid, frozen=forbidden if binds else (), remap=user_namespace and env.platform == "linux"
    )
    resolution = resolve(env, view)
    needed: list[str] = []
    for action in resolution.actions:
        needed.append(dirname(action.path) if action.verb == "create" and binds else action.path)
    sockets = []
    for placement in resolution.sockets.values():
        if placement.placed and placement.root is not None:
            where = placement.dir or placement.root
            needed.append(where)
            sockets.append(placement.root)
    cache = resolution.native_cache
    if cache.dir is not None and cache.bypass_reason is None:
        needed.append(cache.dir)
    # The workspace data directory: the project graph and file map, and in <workspace-data>/d the daemon's
    # own files (daemon.log, server-process.json) whatever socket root it chose
    # (docs/behaviour.md#user-namespace-sandboxes).
    needed.append(resolution.workspace_data.dir)
    write, pending = [], []
    for directory in needed:
        existing = _deepest_existing(view, directory) if binds else directory
        if existing in forbidden:
            pending.append(directory)
        else:
            write.append(sandbox_real_dir(view, env.platform, existing))
    # Nx 23.1.2–23.3 look the OS temp dir up first and fail when the sandbox's TMPDIR does not exist.
    if tmpdir is not None and resolution.rules.tmpdir_enoent_fails and isinstance(base.stat(tmpdir), int):
        pending.append(tmpdir)
    write_entries = _narrowest(write)
    socket_dirs = _narrowest(
        real
        for real in (sandbox_real_dir(view, env.platform, _deepest_existing(view, s) if binds else s) for s in sockets)
        if real not in forbidden
    )
    flagged = tuple(p for p in write_entries if GLOB & set(p))
    daemon = resolution.user_namespace_sandbox if user_namespace and env.platform == "linux" else None
    return SandboxPlan(resolution, write_entries, socket_dirs, tuple(dict.fromkeys(pending)), flagged, daemon)


def _portable(env: Environment, rules: ReleaseRules, path: str) -> list[str]:
    """Nx-style spellings fit to commit: ``/tmp/.nx``, ``~/.nx``, ``./…`` for the workspace; both /tmp spellings on
    macOS."""
    home = home_directory(env, passwd_fallback=rules.empty_home_uses_passwd)
    spellings = []
    for tmp in ("/private/tmp/.nx", "/tmp/.nx"):
        if path == tmp or path.startswith(tmp + "/"):
            spellings = ["/tmp/.nx", "/private/tmp/.nx"] if env.platform == "darwin" else ["/tmp/.nx"]
            break
    else:
        if home and (path == join(home, ".nx") or path.startswith(join(home, ".nx") + "/")):
            spellings = ["~/.nx"]
        elif path == env.workspace_root or path.startswith(env.workspace_root.rstrip("/") + "/"):
            rest = path[len(env.workspace_root):].lstrip("/")
            spellings = ["./" + rest if rest else "."]
        else:
            spellings = [path]
    return spellings


def _entries(plan: SandboxPlan, env: Environment, portable: bool) -> tuple[list[str], list[str]]:
    if not portable:
        return list(plan.write), list(plan.sockets)
    rules = plan.resolution.rules
    write = list(dict.fromkeys(p for path in plan.write for p in _portable(env, rules, path)))
    sockets = list(dict.fromkeys(p for path in plan.sockets for p in _portable(env, rules, path)))
    return write, sockets


def render(fmt: str, plan: SandboxPlan, env: Environment, *, portable: bool = False) -> tuple[str, list[str]]:
    """The text to paste for *fmt*, and the warnings about its limits (for stderr)."""
    row = FORMAT_TABLE[fmt]
    write, sockets = _entries(plan, env, portable)
    warnings = [wording.glob_warning(p) for p in plan.flagged]
    warnings += [
        wording.tmpdir_warning(fmt, p) if p == row.tmpdir else wording.pending_warning(p) for p in plan.pending
    ]
    daemon = plan.daemon if plan.daemon is not None and not plan.daemon.usable else None
    if daemon is not None:
        warnings += wording.sandbox_daemon_warnings(daemon, env.nx_version, row.called, row.daemon_off)
    generic = plan.resolution.user_namespace_sandbox
    if (
        not row.is_sandbox and generic is not None and not generic.usable
    ):  # entries for any sandbox: say it for those it hits
        warnings += wording.sandbox_daemon_warnings(generic, env.nx_version)
    resolution = plan.resolution
    allowed = Allowed(tuple(write), tuple(sockets), portable, env.platform, resolution.socket_root.root or "",
                      resolution.native_cache.dir or "", daemon is not None)
    text, notes = row.spell(allowed)
    return text, warnings + notes
