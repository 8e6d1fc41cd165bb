"""What a sandbox must allow for Nx, computed over the sandbox's own view, in each sandbox's syntax.

An allowlist of ``/tmp/.nx`` and ``~/.nx`` can be useless: inside an
unprivileged user namespace every foreign owner, root included, is uid 65534,
so Nx 24 refuses both default tiers and Nx 23 keeps ``/tmp/.nx`` only when
the user owns it (docs/behaviour.md#user-namespace-sandboxes).  So the plan resolves over that view, with the
sandbox refusing writes directly in ``/``, ``/tmp`` and ``$HOME`` (entries are
never those), and allows the narrowest existing directories Nx then writes.
"""

from __future__ import annotations

import json
import typing as t

from ..core._pathname import dirname, join
from ..core.environment import Environment, home_directory
from ..core.fsview import Entry, FsView, UserNamespaceView
from ..core.guards import sandbox_real_dir
from ..core.resolver import Resolution, resolve
from ..core.sandbox_daemon import RUN_INSIDE, RUN_INSIDE_VARIABLE, SandboxDaemon, marker_warning, sandbox_statement
from ..core.wording import shell_quote

__all__ = ["FORMATS", "SANDBOX_TMPDIR", "SandboxPlan", "plan_for", "render", "sandbox_kind"]

#: The sandbox formats ``paths --format`` prints.
FORMATS = ("text", "env", "srt", "claude", "codex", "codex-profile", "seatbelt", "bwrap", "docker", "flatpak")


def sandbox_kind(fmt: str, platform: str) -> tuple[bool, bool]:
    """``(user namespace, bind mounts)`` for a format on a platform.

    bubblewrap and flatpak run in a user namespace and bind existing
    directories; docker binds without remapping owners; srt, Claude Code and
    codex use bubblewrap on Linux and Seatbelt's path rules on macOS, where a
    rule may name a directory Nx has yet to create.
    """
    if fmt in ("bwrap", "flatpak"):
        return True, True
    if fmt == "docker":
        return False, True
    if fmt in ("srt", "claude", "codex", "codex-profile"):
        return platform == "linux", platform == "linux"
    return False, False
GLOB = set("*?[]{}")


class SandboxPlan(t.NamedTuple):
    resolution: Resolution  # where Nx goes inside the sandbox
    write: tuple[str, ...]  # existing directories to make writable, real paths
    sockets: tuple[str, ...]  # directories Nx binds and dials sockets in
    pending: tuple[str, ...]  # directories Nx needs whose only existing ancestor may not be allowed
    flagged: tuple[str, ...]  # entries with glob characters some sandboxes read as patterns
    daemon: SandboxDaemon | None = None  # a user-namespace sandbox: whether Nx's client can use its daemon there


def _forbidden(env: Environment) -> set[str]:
    home = home_directory(env, "native")
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


#: What each user-namespace format's sandbox is called in a sentence.
SANDBOX_NAMES = {"bwrap": "bubblewrap", "flatpak": "flatpak", "srt": "srt", "claude": "Claude Code's sandbox (srt)",
                 "codex": "codex sandbox", "codex-profile": "codex sandbox"}
#: Where each format carries NX_DAEMON=false, or how to set it where the format cannot.
ENV_CARRIED = {
    "bwrap": "These arguments set it: --setenv NX_DAEMON false.",
    "flatpak": "These arguments set it: --env=NX_DAEMON=false.",
    "claude": 'These settings set it for every command: "env": {"NX_DAEMON": "false"}.',
    "srt": "srt's settings file cannot set a variable, and srt passes its own environment on: "
           "start it as `NX_DAEMON=false srt --settings FILE -- COMMAND`.",
    "codex": 'This configuration sets it for what codex runs: [shell_environment_policy] set = { NX_DAEMON = "false" }.',
    "codex-profile": 'This profile sets it for what codex runs: [shell_environment_policy] set = { NX_DAEMON = "false" }.',
}

#: The TMPDIR a sandbox sets for what it runs (srt, and Claude Code on it, use /tmp/claude).
SANDBOX_TMPDIR = {"srt": "/tmp/claude", "claude": "/tmp/claude"}


def plan_for(
    env: Environment, base: FsView, *, user_namespace: bool, binds: bool, tmpdir: str | None = None
) -> SandboxPlan:
    """Resolve as the sandbox shows the filesystem, then allow the narrowest directories Nx writes.

    With *binds* an entry must exist, so it is the deepest existing directory
    Nx writes in, and the sandbox is taken to refuse writes directly in ``/``,
    ``/tmp`` and ``$HOME``; with path rules an entry may name what Nx creates.
    """
    forbidden = _forbidden(env)
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
    if tmpdir is not None and resolution.generation == "ts" and isinstance(base.stat(tmpdir), int):
        pending.append(tmpdir)
    write_entries = _narrowest(write)
    socket_dirs = _narrowest(
        real for real in (sandbox_real_dir(view, env.platform, _deepest_existing(view, s) if binds else s) for s in sockets)
        if real not in forbidden
    )
    flagged = tuple(p for p in write_entries if GLOB & set(p))
    daemon = resolution.user_namespace_sandbox if user_namespace and env.platform == "linux" else None
    return SandboxPlan(resolution, write_entries, socket_dirs, tuple(dict.fromkeys(pending)), flagged, daemon)


def _portable(env: Environment, path: str) -> list[str]:
    """Nx-style spellings fit to commit: ``/tmp/.nx``, ``~/.nx``, ``./…`` for the workspace; both /tmp spellings on macOS."""
    home = home_directory(env, "native")
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
    write = list(dict.fromkeys(p for path in plan.write for p in _portable(env, path)))
    sockets = list(dict.fromkeys(p for path in plan.sockets for p in _portable(env, path)))
    return write, sockets


def render(fmt: str, plan: SandboxPlan, env: Environment, *, portable: bool = False) -> tuple[str, list[str]]:
    """The text to paste for *fmt*, and the warnings about its limits (for stderr)."""
    write, sockets = _entries(plan, env, portable)
    warnings = [f"{p} contains glob characters, which some sandboxes read as a pattern and drop or widen." for p in plan.flagged]
    for path in plan.pending:
        if path == SANDBOX_TMPDIR.get(fmt):
            warnings.append(f"{fmt} sets TMPDIR={path}, which Nx 23.1.2–23.3 needs to exist: run `mkdir -p {path}` "
                            "before starting the sandbox, or upgrade to Nx 24.")
        else:
            warnings.append(f"{path} must exist before the sandbox starts; run `nxsock provision` or create it first.")
    daemon = plan.daemon if plan.daemon is not None and not plan.daemon.usable else None
    if daemon is not None:
        warnings.append(sandbox_statement(daemon, env.nx_version, SANDBOX_NAMES.get(fmt)))
        warnings.append(marker_warning(daemon))
        warnings.append(ENV_CARRIED.get(fmt, f"Set {RUN_INSIDE} for the commands run inside it."))
    generic = plan.resolution.user_namespace_sandbox
    if fmt in ("text", "env") and generic is not None and not generic.usable:  # entries for any sandbox: say it for those it hits
        warnings.append("If the sandbox runs Nx in a user namespace: " + sandbox_statement(generic, env.nx_version))
        warnings.append(marker_warning(generic))
    name, value = RUN_INSIDE_VARIABLE
    linux = env.platform == "linux"
    if fmt == "text":
        lines = [f"write\t{p}" for p in write] + [f"unix-sockets\t{p}" for p in sockets]
        return "\n".join(lines) + "\n", warnings
    if fmt == "env":
        root = plan.resolution.socket_root.root or ""
        lines = [f"export NXSOCK_SOCKET_ROOT={shell_quote(root)}",
                 f"export NXSOCK_NATIVE_CACHE={shell_quote(plan.resolution.native_cache.dir or '')}",
                 f"export NXSOCK_WRITE={shell_quote(':'.join(write))}"]
        return "\n".join(lines) + "\n", warnings
    if fmt in ("srt", "claude"):
        network: dict[str, t.Any] = {"allowedDomains": [], "deniedDomains": []}
        if linux:
            network["allowAllUnixSockets"] = True
            warnings.append(f"{fmt} on Linux cannot allow unix sockets by path (seccomp cannot filter paths): this allows all of them.")
        else:
            network["allowUnixSockets"] = sockets
        filesystem = {"denyRead": [], "allowWrite": write, "denyWrite": []}
        settings: dict[str, t.Any] = {"network": network, "filesystem": filesystem}
        if fmt == "claude":
            settings = {"sandbox": {"enabled": True, "filesystem": {"allowWrite": write}, "network": network}}
            if daemon is not None:
                settings["env"] = {name: value}
        return json.dumps(settings, indent=2) + "\n", warnings
    if fmt == "codex":
        warnings.append("codex's sandbox_workspace_write table has no unix-socket rule: it needs network_access = true for sockets.")
        roots = ", ".join(json.dumps(p) for p in write)
        text = f'sandbox_mode = "workspace-write"\n\n[sandbox_workspace_write]\nwritable_roots = [{roots}]\nnetwork_access = true\n'
        return text + (_codex_environment() if daemon is not None else ""), warnings
    if fmt == "codex-profile":
        warnings.append("codex forbids unix sockets unless the profile enables network access: this profile enables it.")
        lines = ['default_permissions = "nx"', "", "[permissions.nx]", 'extends = ":workspace"', "", "[permissions.nx.filesystem]"]
        lines += [f"{json.dumps(p)} = \"write\"" for p in write]
        lines += ["", "[permissions.nx.network]", "enabled = true", ""]
        return "\n".join(lines) + (_codex_environment() if daemon is not None else ""), warnings
    if fmt == "seatbelt":
        both = _both_tmp_spellings
        rules = ["(version 1)"]
        rules += [f'(allow file-write* (subpath "{p}"))' for p in both(write)]
        rules += [f'(allow network-bind (local unix-socket (subpath "{p}")))' for p in both(sockets)]
        rules += [f'(allow network-outbound (remote unix-socket (subpath "{p}")))' for p in both(sockets)]
        return "\n".join(rules) + "\n", warnings
    if fmt == "bwrap":
        args = [f"--bind {_word(p, portable)} {_word(p, portable)}" for p in write]
        args += [f"--setenv {name} {value}"] if daemon is not None else []
        return " ".join(args) + "\n", warnings
    if fmt == "docker":
        if portable:
            return " ".join(f"-v {_word(p, portable)}:{_word(p, portable)}" for p in write) + "\n", warnings
        return " ".join(f"-v {shell_quote(p + ':' + p)}" for p in write) + "\n", warnings
    if fmt == "flatpak":
        args = [f"--filesystem={_word(p, portable, tilde=True)}" for p in write]
        args += [f"--env={name}={value}"] if daemon is not None else []
        return " ".join(args) + "\n", warnings
    raise ValueError(fmt)


def _word(path: str, portable: bool, *, tilde: bool = False) -> str:
    """An entry as one shell word.  A portable entry of the workspace is spelled ``"$PWD"``, one of the home
    ``"$HOME"`` (flatpak reads ``~/`` itself, with *tilde*): bwrap and docker take neither a relative path nor
    a ``~``, and the shell expands these where the line is pasted, in the workspace."""
    if portable and path == ".":
        return '"$PWD"'
    if portable and path.startswith("./"):
        return '"$PWD"/' + shell_quote(path[2:])
    if portable and path.startswith("~/") and not tilde:
        return '"$HOME"/' + shell_quote(path[2:])
    if portable and path.startswith("~/"):
        return "~/" + shell_quote(path[2:])
    return shell_quote(path)


def _codex_environment() -> str:
    """codex sets a variable for what it runs through its shell environment policy (``codex sandbox`` too)."""
    name, value = RUN_INSIDE_VARIABLE
    return f"\n[shell_environment_policy]\nset = {{ {name} = {json.dumps(value)} }}\n"


def _both_tmp_spellings(paths: t.Iterable[str]) -> list[str]:
    """Seatbelt matches the resolved path, and Nx spells it /tmp: rules for both, where a path is under /tmp."""
    out = []
    for path in paths:
        out.append(path)
        if path.startswith("/private/tmp/"):
            out.append(path[len("/private"):])
        elif path.startswith("/tmp/"):
            out.append("/private" + path)
    return list(dict.fromkeys(out))
