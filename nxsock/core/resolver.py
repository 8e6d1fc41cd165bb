"""Where Nx will put its sockets and native-binding cache, and why (docs/behaviour.md#socket-root-resolution).

:func:`resolve` is the one question every command asks.  It is pure: it reads
an :class:`~nxsock.core.environment.Environment` and a read-only
:class:`~nxsock.core.fsview.FsView`, predicts each guard Nx would run in the order
Nx runs them, and returns frozen values — never printing, never changing the
filesystem.  What Nx *would* create or tighten comes back as actions.
"""

import errno as _errno
import typing as t

from . import layout
from ._pathname import basename, dirname, is_absolute, join, normalize
from ._pathname import resolve as resolve_path
from .containers import ContainerVerdict, judge_container
from .daemon_switch import DaemonSwitch
from .daemon_switch import judge as _judge_daemon
from .environment import Environment, Variable, home_directory
from .fsview import Entry, FsView, errno_name
from .guards import (
    Action,
    Refusal,
    Simulation,
    canonical_dir,
    establish_private_dir,
    establish_shared_root,
    make_parents,
    sandbox_real_dir,
    walk_ancestry,
)
from .host_overrides import Layout
from .json_input import JsonInputError, parse_json
from .mounts import LevelMount, listen_errno
from .releases import NEWEST_KNOWN, Generation, ReleaseRules, is_version, rules_for, rules_of_generation
from .sandbox_daemon import SandboxDaemon, client_refusal, judge_sandbox

__all__ = [
    "Allowlist",
    "CacheDirectory",
    "DaemonRecord",
    "InvalidConfiguration",
    "NativeCache",
    "Resolution",
    "SocketKind",
    "SocketPlacement",
    "SocketRoot",
    "WorkspaceData",
    "client_socket_refusal",
    "resolve",
    "rules_in_force",
]

PER_RUN = "<H20(workspace+pid)>"


class SocketKind(t.NamedTuple):
    """One kind of socket Nx makes, and every fact the resolver needs of it
    (docs/behaviour.md#socket-root-resolution)."""

    name: str
    longest: t.Callable[
        [ReleaseRules], str
    ]  # the longest file name Nx gives it: what its length budget is measured with
    pattern: t.Callable[[ReleaseRules], str]  # its file name, the unknown parts named
    leaf: (
        t.Callable[[str], str] | None
    )  # its own directory under the root, named from the workspace; None: the per-run one
    exact: bool = True  # its path is known once its directory is (else a pid or an id no one knows yet is in the name)
    beside: str | None = None  # made by the process of that kind, in the same directory
    from_workspace: bool = (
        False  # the process making it runs in the workspace root (a relative directory resolves there)
    )
    requires: str | None = (
        None  # the release rule (a ReleaseRules field) without which this release makes no such socket
    )
    id_budget: bool = (
        False  # its name holds an id the user's configuration chooses: say how many characters it may take
    )


#: Every kind of socket, in the order they are reported.  Adding one is a row here plus its test.
SOCKET_KIND_TABLE: tuple[SocketKind, ...] = (
    SocketKind("daemon", lambda r: "d.sock", lambda r: "d.sock", None, from_workspace=True),
    SocketKind(
        "forked",
        lambda r: layout.LONGEST_READY_NAME if r.readiness_socket else f"fp{layout.LONGEST_FORKED_ID}.sock",
        lambda r: "fp<id>.sock",
        None,
        exact=False,
        beside="daemon",
    ),
    SocketKind(
        "plugin",
        lambda r: f"{'p' if r.current_layout else 'plugin'}{layout.LONGEST_PLUGIN_ID}.sock",
        lambda r: "p<id>.sock" if r.current_layout else "plugin<id>.sock",
        layout.plugin_leaf,
        exact=False,
        id_budget=True,
    ),
    SocketKind(
        "console",
        lambda r: "nx-console.sock",
        lambda r: "nx-console.sock",
        layout.console_leaf,
        requires="console_socket",
    ),
)
#: Socket kinds in the order they are reported.
SOCKET_KINDS = tuple(kind.name for kind in SOCKET_KIND_TABLE)


#: Where a socket directory came from, in the order Nx tries them.
Tier = t.Literal["configured", "shared", "home", "workspace", "temp"]
#: Why Nx refuses a configured socket directory outright.
InvalidReason = t.Literal["shared-with-other-users", "os-temp-root", "nx-managed"]


class InvalidConfiguration(t.NamedTuple):
    """A configured socket directory Nx refuses outright (``InvalidSocketDirConfigured``)."""

    reason: InvalidReason
    dir: str
    variable: str
    source: str


class SocketRoot(t.NamedTuple):
    """The root the tier chain settled on, and every refusal met on the way."""

    tier: Tier | None = None
    root: str | None = None
    demoted_from: str | None = None
    refused_configured_dir: str | None = None
    invalid: InvalidConfiguration | None = None
    refusals: tuple[Refusal, ...] = ()
    failure: Refusal | None = None  # nowhere left to fall: Nx fails the command
    configured: tuple[str, Variable] | None = None  # the variable that set it
    listen_fails: str | None = None  # the errno Nx's listen meets there: the root's filesystem holds no unix sockets


class SocketPlacement(t.NamedTuple):
    """One kind of socket: where it goes, how long its path gets, what it was refused.  Built by keyword: a kind
    Nx does not place, or places nowhere, leaves the rest unset."""

    kind: str
    placed: bool  # False where this Nx version does not put that socket here
    tier: str | None = None
    root: str | None = None
    dir: str | None = None  # exact, or None when it hashes a pid no one knows yet
    path: str | None = None  # exact, or None
    pattern: str | None = None  # the path with the unknown parts named
    length: int | None = None  # for the longest name Nx gives this kind
    too_long: bool | None = None
    budget_left: int | None = None
    id_budget: int | None = None  # characters left for a plugin's id
    windows_max_username: int | None = None
    attempted_dir: str | None = None  # a leaf refused, sending this kind to the workspace
    refusals: tuple[Refusal, ...] = ()
    failure: Refusal | None = None
    client_refusal: Refusal | None = None  # the daemon's: why this release's client would not dial it there


class DaemonRecord(t.NamedTuple):
    """What ``server-process.json`` says about the running daemon, and whether this release's client will use it."""

    file: str
    pid: int | None = None
    socket_path: str | None = None
    nx_version: str | None = None
    alive: bool | None = None
    connect: str | None = None  # "answers", or the errno a connect met (ECONNREFUSED: stale), or None
    problem: str | None = None  # why it could not be read, or None
    client_checks_socket: bool = False  # this release's client judges the socket's directory before dialling
    client_will_connect: bool | None = None  # None: no socket recorded
    client_refusal: Refusal | None = None  # why the client will not dial it


class NativeCache(t.NamedTuple):
    """The binding cache directory, or why Nx would load the binding in place."""

    dir: str | None
    bypass_reason: str | None
    refusals: tuple[Refusal, ...]
    configured: bool
    root: str | None = None  # where entries live: the directory of version directories, or the configured one


class WorkspaceData(t.NamedTuple):
    """Where the daemon keeps its files (``<dir>/d``), and the socket code's own idea of it."""

    dir: str
    daemon_dir: str  # server-process.json, daemon.log, the disabled marker
    source: str
    untrusted_reason: str | None
    refused: bool  # Nx 24.0.6 stops on it (unless NX_ALLOW_INSECURE_DIRECTORIES=true)
    socket_dir: str = ""  # the sockets' last resort: the crate counts an empty variable as unset, the JS does not


class CacheDirectory(t.NamedTuple):
    """Nx's task cache, where configured (``NX_CACHE_DIRECTORY`` or nx.json's ``cacheDirectory``), as the release judges
    it.

    Nx 24.0.6 judges it when ``nx/src/utils/cache-directory.js`` is imported —
    by every command — and stops with ``UntrustedDataDirectoryError`` when
    someone other than the user, root or the workspace's owner could replace it.
    """

    dir: str
    source: str  # "NX_CACHE_DIRECTORY (environment)", "nx.json cacheDirectory", …
    variable: str | None  # the variable that set it, or None for nx.json
    untrusted_reason: str | None  # why the release would refuse it; None where it is trusted or not judged
    refused: bool  # the release stops every command on it (NX_ALLOW_INSECURE_DIRECTORIES is not "true")


class Allowlist(t.NamedTuple):
    """What a sandbox must allow for Nx to work here, as real paths."""

    write: tuple[str, ...]
    unix_sockets: tuple[str, ...]


class Resolution(t.NamedTuple):
    environment: Environment
    layout: Layout
    generation: Generation
    layout_assumed: bool  # the Nx version is unknown or newer than any known: the newest known release's rules
    socket_root: SocketRoot
    sockets: t.Mapping[str, SocketPlacement]
    native_cache: NativeCache
    workspace_data: WorkspaceData
    daemon_record: DaemonRecord | None
    actions: tuple[Action, ...]
    allowlist: Allowlist
    rules: ReleaseRules  # the release table's rules this prediction followed
    user_namespace_sandbox: SandboxDaemon | None = (
        None  # Linux: whether the daemon serves a client inside bwrap/srt/codex
    )
    daemon: DaemonSwitch | None = (
        None  # whether Nx's client uses its daemon at all, and why not (core/daemon_switch.py)
    )
    mounts: tuple[LevelMount, ...] = ()  # the mount under each level judged, where the view shows a mount table
    cache_directory: CacheDirectory | None = None  # a configured task cache, judged as the release judges it
    container: ContainerVerdict | None = (
        None  # Linux: the container nxsock runs in, and whether the socket root is shared
    )


class _Roots(t.NamedTuple):
    """Nx's fixed directories for one user."""

    container: str
    user: str
    sockets: str
    native_cache: str
    home_nx: str | None


def _roots(env: Environment, rules: ReleaseRules) -> _Roots:
    user = join(layout.CONTAINER, str(env.uid))
    home = home_directory(env, passwd_fallback=rules.empty_home_uses_passwd)
    return _Roots(
        layout.CONTAINER, user, join(user, "sockets"), join(user, "native-cache"), join(home, ".nx") if home else None
    )


def rules_in_force(env: Environment, layout_override: str | None = None) -> ReleaseRules:
    """The release table's rules for the installed (or named) Nx, or for a forced layout."""
    rules = rules_for(env.nx_version)
    if layout_override == "legacy" and rules.current_layout:
        return rules_of_generation("legacy")
    if layout_override == "current" and not rules.current_layout:
        return rules_for(NEWEST_KNOWN)._replace(assumed=False)
    return rules


def resolve(env: Environment, view: FsView, *, layout_override: str | None = None) -> Resolution:
    """Predict what Nx would do now for *env* over *view*."""
    rules = rules_in_force(env, layout_override)
    sim = Simulation(view, env.uid, env.gid, env.groups, env.umask)
    data = _workspace_data(env, view, rules)
    # The release in hand decides, whatever layout --layout forces.
    switch = _judge_daemon(env, view, rules_for(env.nx_version), data.daemon_dir)
    posix = env.platform != "win32"  # Windows: named pipes, nothing guarded, no record or mount judged
    native_cache = _native_cache(env, sim, rules)
    where: _Layout
    if not posix:
        where = _WindowsPipes(env, rules)
    elif rules.current_layout:
        where = _CurrentLayout(env, sim, rules, data)
    else:
        where = _LegacyLayout(env, sim, rules, data)
    root, sockets = _place_sockets(rules, where)
    record = _daemon_record(view, data.daemon_dir, env.uid, rules) if posix else None
    mounts = _level_mounts(env, sim, root, data, native_cache) if posix else ()
    under_root = next((m.mount for m in mounts if m.level == "socket-root"), None)
    if under_root is not None and not under_root.holds_sockets:
        root = root._replace(listen_fails=listen_errno(under_root))
    daemon = sockets["daemon"]
    if record is not None and record.socket_path and record.problem is None:
        daemon = daemon._replace(
            path=record.socket_path, dir=dirname(record.socket_path), client_refusal=record.client_refusal
        )
    elif posix and rules.client_socket_check and daemon.root is not None:
        daemon = daemon._replace(client_refusal=_predicted_client_refusal(env, view, daemon))
    sockets["daemon"] = daemon
    linux = env.platform == "linux"
    return Resolution(
        environment=env,
        layout="current" if rules.current_layout else "legacy",
        generation=rules.generation,
        layout_assumed=rules.assumed,
        socket_root=root,
        sockets=sockets,
        native_cache=native_cache,
        workspace_data=data,
        daemon_record=record,
        actions=tuple(sim.actions),
        allowlist=_allowlist(env, view, sockets, native_cache) if posix else Allowlist((), ()),
        rules=rules,
        user_namespace_sandbox=judge_sandbox(view, env.uid, env.gid, env.nx_version, data.daemon_dir)
        if linux
        else None,
        daemon=switch,
        mounts=mounts,
        cache_directory=_cache_directory(env, view, rules) if posix else None,
        container=judge_container(view, env.get, root.root) if linux else None,
    )


def _level_mounts(env: Environment, sim: Simulation, root: SocketRoot, data: WorkspaceData,
                  cache: NativeCache) -> tuple[LevelMount, ...]:
    """The mount under each level Nx uses or was refused, by real path: none where the view shows no mount table."""
    levels: list[tuple[str, str | None]] = [("socket-root", root.root)]
    if root.configured is not None:
        levels.append(("configured-socket-dir", resolve_path(root.configured[1].value, env.cwd)))
    for refusal in root.refusals:
        levels.append(("refused-level", refusal.dir))
    levels += [("workspace", env.workspace_root), ("workspace-data", data.daemon_dir), ("native-cache", cache.dir)]
    found: list[LevelMount] = []
    seen: set[tuple[str, str]] = set()
    for level, path in levels:
        if path is None or not is_absolute(path) or (level, path) in seen:
            continue
        seen.add((level, path))
        real = canonical_dir(sim.view, path)
        mount = sim.mounts.of(real)
        if mount is None:
            return ()
        found.append(LevelMount(level, real, mount))
    return tuple(found)


# -- the workspace data directory -------------------------------------------------


def _workspace_data(env: Environment, view: FsView, rules: ReleaseRules) -> WorkspaceData:
    """The JS's data directory (``??``: an empty value is set); the crate's, for sockets, where they differ."""
    js = _data_dir(env, view, rules, empty_is_unset=False)
    if not rules.empty_data_dir_unset:
        return js._replace(socket_dir=js.daemon_dir)
    crate = _data_dir(env, view, rules, empty_is_unset=True)
    return js._replace(socket_dir=crate.daemon_dir)


def _data_dir(env: Environment, view: FsView, rules: ReleaseRules, *, empty_is_unset: bool) -> WorkspaceData:
    root = env.workspace_root
    configured: tuple[str, Variable] | None = None
    for name in ("NX_WORKSPACE_DATA_DIRECTORY", "NX_PROJECT_GRAPH_CACHE_DIRECTORY"):
        var = env.variables.get(name)
        if var is not None and (var.value or not empty_is_unset):
            configured = (name, var)
            break
    untrusted = None
    win = env.platform == "win32"
    joined: t.Callable[..., str] = join
    if win:  # loaded only for a win32 preview: this runs on every ``paths --json``
        import ntpath

        joined = ntpath.join
    if configured is not None:
        name, var = configured
        # Nx's absolutePath(): kept when absolute, else joined to the root (an empty value is the root itself).
        if win:
            directory = ntpath.normpath(ntpath.join(root, var.value))
        else:
            directory = var.value if is_absolute(var.value) else join(root, var.value)
        source = f"{name} ({var.source})"
        if rules.untrusted_data_dir_refused and not win:
            untrusted = _untrusted_reason(env, view, directory, root)
    elif _exists(view, joined(root, "lerna.json")) and not _exists(view, joined(root, "nx.json")):
        directory, source = joined(root, "node_modules", ".cache", "nx-workspace-data"), "lerna workspace"
    else:
        directory, source = joined(root, ".nx", "workspace-data"), "default"
    sep = "\\" if win else "/"
    refused = untrusted is not None and env.get("NX_ALLOW_INSECURE_DIRECTORIES") != "true"
    return WorkspaceData(directory, directory.rstrip(sep) + sep + "d", source, untrusted, refused)


def _nx_json_cache_directory(view: FsView, root: str) -> str | None:
    """nx.json's ``cacheDirectory`` (or the default task runner's), as Nx reads it; ``None`` when unset or
    unreadable."""
    text = view.read_text(join(root, "nx.json"), 1 << 20, follow=True)
    if not isinstance(text, str) or "cacheDirectory" not in text:
        return None
    try:
        data = parse_json(text)
    except JsonInputError:
        return None  # Nx swallows a malformed nx.json here too
    if not isinstance(data, dict):
        return None
    value = data.get("cacheDirectory")
    if value is None:
        runner = data.get("tasksRunnerOptions")
        default = runner.get("default") if isinstance(runner, dict) else None
        options = default.get("options") if isinstance(default, dict) else None
        value = options.get("cacheDirectory") if isinstance(options, dict) else None
    return value if isinstance(value, str) and value else None


def _cache_directory(env: Environment, view: FsView, rules: ReleaseRules) -> CacheDirectory | None:
    """The configured task cache: an ``NX_CACHE_DIRECTORY`` that is not empty wins over nx.json, as in Nx."""
    root = env.workspace_root
    var = env.variables.get("NX_CACHE_DIRECTORY")
    if var is not None and var.value:
        value, source, variable = var.value, f"NX_CACHE_DIRECTORY ({var.source})", "NX_CACHE_DIRECTORY"
    else:
        configured = _nx_json_cache_directory(view, root)
        if configured is None:
            return None
        value, source, variable = configured, "nx.json cacheDirectory", None
    directory = value if is_absolute(value) else join(root, value)
    untrusted = _untrusted_reason(env, view, directory, root) if rules.untrusted_data_dir_refused else None
    refused = untrusted is not None and env.get("NX_ALLOW_INSECURE_DIRECTORIES") != "true"
    return CacheDirectory(normalize(directory), source, variable, untrusted, refused)


def _exists(view: FsView, path: str) -> bool:
    return not isinstance(view.stat(path), int)


def _untrusted_reason(env: Environment, view: FsView, directory: str, root: str) -> str | None:
    """Why Nx 24 would refuse a configured data directory someone else could replace, or ``None``."""
    trusted = {env.uid, 0}
    owner = view.stat(root)
    if isinstance(owner, Entry):
        trusted.add(owner.uid)
    for leaf, stop in (
        (resolve_path(directory, env.cwd), resolve_path(root, env.cwd)),
        (canonical_dir(view, directory), canonical_dir(view, root)),
    ):
        if leaf == stop or leaf.startswith(stop.rstrip("/") + "/"):
            continue
        level = leaf
        while level != stop:
            entry = view.lstat(level)
            if isinstance(entry, Entry):
                if entry.uid not in trusted:
                    return f"{level} is owned by uid {entry.uid}"
                if entry.is_dir and entry.mode & 0o002:
                    if level == leaf:
                        return f"{level} is writable by other users"
                    if not entry.mode & 0o1000:
                        return f"{level} is writable by other users and not sticky"
            if dirname(level) == level:
                break
            level = dirname(level)
    return None


# -- the native binding cache ------------------------------------------------------


def legacy_cache_name(env: Environment, version: str) -> str:
    """Nx ≤ 23.1.1's cache directory name: it hashes the workspace, the version and the account name, if any."""
    parts = [env.workspace_root, version] + ([env.username] if env.username else [])
    return "nx-native-file-cache-" + layout.short_hash(parts, 7)


def _cache_version(env: Environment, rules: ReleaseRules) -> str:
    """The version the cache directory is named after: the installed one when it is a version, else the release's.

    The snapshot already refuses a ``version`` that is not one
    (``Environment.nx_version_rejected``); this is the second look, where the
    name becomes a path.
    """
    version = env.nx_version
    return version if version is not None and is_version(version) else rules.release


SKIP_CACHE = "NX_SKIP_NATIVE_FILE_CACHE=true"


def _native_cache(env: Environment, sim: Simulation, rules: ReleaseRules) -> NativeCache:
    """The binding cache, worked out once for every layout: skipped, configured, or the layout's default.

    The layouts differ only in the default directory (the legacy one flat in
    the OS temp dir, the current one a version directory under the user's
    level) and in what is judged: nothing in the legacy layout or on Windows.
    """
    version = _cache_version(env, rules)
    configured = env.nonempty("NX_NATIVE_FILE_CACHE_DIRECTORY")
    skip = env.get("NX_SKIP_NATIVE_FILE_CACHE") == "true"
    if env.platform == "win32":
        return _windows_native_cache(env, rules, version, configured, skip)
    directory = resolve_path(configured, env.cwd) if configured is not None else None
    legacy = not rules.current_layout  # one flat directory of ``<version>-<file>`` entries, created at the umask
    if skip:
        root = directory if directory is not None or legacy else _roots(env, rules).native_cache
        return NativeCache(None, SKIP_CACHE, (), directory is not None, root)
    if directory is not None:
        refusal = None if legacy else _establish_configured(sim, directory, rules.walk_cache_dir_ancestry)
        if refusal:
            reason = "the configured NX_NATIVE_FILE_CACHE_DIRECTORY was refused"
            return NativeCache(directory, reason, (refusal,), True, directory)
        return NativeCache(directory, None, (), True, directory)
    if legacy:
        directory = join(resolve_path(env.node_tmpdir(), env.cwd), legacy_cache_name(env, version))
        return NativeCache(directory, None, (), False, directory)
    roots = _roots(env, rules)
    version_dir = join(roots.native_cache, version)
    if (
        dirname(version_dir) != roots.native_cache or basename(version_dir) != version
    ):  # never reached: is_version holds
        return NativeCache(None, "the version is not a plain name", (), False, roots.native_cache)
    refusal = establish_shared_root(sim, roots.container)
    for level in (roots.user, roots.native_cache, version_dir):
        refusal = refusal or establish_private_dir(sim, level)
    if refusal:
        return NativeCache(None, "a level of the cache directory was refused", (refusal,), False, roots.native_cache)
    return NativeCache(version_dir, None, (), False, roots.native_cache)


def _windows_native_cache(env: Environment, rules: ReleaseRules, version: str, configured: str | None,
                          skip: bool) -> NativeCache:
    """Windows' spelling of the same choice, with ``ntpath`` and nothing judged (a preview: no disk is read)."""
    import ntpath

    tmp = env.node_tmpdir()
    if skip:
        return NativeCache(None, SKIP_CACHE, (), False)
    if configured:
        return NativeCache(ntpath.normpath(ntpath.join(env.cwd, configured)), None, (), True)
    if not rules.current_layout:
        return NativeCache(ntpath.join(tmp, legacy_cache_name(env, version)), None, (), False)
    native = ntpath.join(tmp, ".nx", "native-cache")
    return NativeCache(ntpath.join(native, version), None, (), False, native)


# -- sockets, current layout (POSIX) ----------------------------------------------


def _configured_socket_dir(env: Environment, rules: ReleaseRules) -> tuple[str, Variable] | None:
    """``NX_SOCKET_DIR``, else ``NX_DAEMON_SOCKET_DIR``; empty counts as unset outside the legacy layout."""
    for name in ("NX_SOCKET_DIR", "NX_DAEMON_SOCKET_DIR"):
        var = env.variables.get(name)
        if var is not None and (var.value or not rules.current_layout):
            return name, var
    return None


def _os_tmpdir(env: Environment, view: FsView, rules: ReleaseRules) -> str | int:
    """The OS temp dir as this release compares it: the crate's resolved spelling, or ``tmp``'s realpath."""
    if not rules.tmpdir_enoent_fails:
        return env.rust_tmpdir()
    return view.realpath(resolve_path(env.node_tmpdir(), env.cwd))


def _peer_writable(sim: Simulation, path: str) -> bool:
    """Judged on the simulated state: the binding cache may have created the container a moment earlier."""
    entry = sim.stat(path)
    return isinstance(entry, Entry) and bool(entry.mode & 0o022)


def _invalid_reason(sim: Simulation, directory: str, tmp: str, roots: _Roots) -> InvalidReason | None:
    view = sim.view
    unusable: list[tuple[str, InvalidReason]] = [
        (tmp, "shared-with-other-users" if _peer_writable(sim, tmp) else "os-temp-root"),
        (roots.container, "shared-with-other-users" if _peer_writable(sim, roots.container) else "nx-managed"),
        (roots.user, "nx-managed"),
        (roots.sockets, "nx-managed"),
    ]
    if roots.home_nx:
        unusable += [(roots.home_nx, "nx-managed"), (join(roots.home_nx, "sockets"), "nx-managed")]
    unusable.append((roots.native_cache, "nx-managed"))
    canonical = canonical_dir(view, directory)
    for candidate, reason in unusable:
        if canonical_dir(view, candidate) == canonical:
            return reason
    return None


def _home_tier_is_distinct(view: FsView, home_nx: str, tmp: str, roots: _Roots) -> bool:
    home = canonical_dir(view, home_nx)
    shared = (tmp, roots.container, roots.user, roots.sockets, roots.native_cache)
    return all(canonical_dir(view, d) != home for d in shared)


def _establish_configured(sim: Simulation, directory: str, walk_parents: bool) -> Refusal | None:
    """A configured directory: its parents (walked and judged from 24.0.5; before, ``mkdir -p``), then the private
    guard."""
    refusal: Refusal | None
    if walk_parents:
        refusal = walk_ancestry(sim, dirname(directory), create=True)
    else:
        failed = make_parents(sim, dirname(directory))
        refusal = None if failed is None else Refusal("not-created", failed[0], errno=errno_name(failed[1]))
    return refusal or establish_private_dir(sim, directory)


def _establish_workspace_dir(sim: Simulation, daemon_dir: str) -> Refusal | None:
    failed = make_parents(sim, dirname(daemon_dir))
    if failed is not None:
        return Refusal("not-created", daemon_dir, errno=errno_name(failed[1]))
    return establish_private_dir(sim, daemon_dir)


def _establish_root(env: Environment, sim: Simulation, rules: ReleaseRules, data: WorkspaceData) -> SocketRoot:
    """Run the configured directory or the tier chain once, as every socket kind does first."""
    view = sim.view
    roots = _roots(env, rules)
    configured = _configured_socket_dir(env, rules)
    home_nx = roots.home_nx
    tmp = _os_tmpdir(env, view, rules)
    if isinstance(tmp, int):
        # 23.1.2–23.3 look the OS temp dir up before choosing anything, and throw.
        failure = Refusal("not-inspectable", resolve_path(env.node_tmpdir(), env.cwd), errno=errno_name(tmp))
        return SocketRoot(refusals=(failure,), failure=failure, configured=configured)

    if configured is not None:
        name, var = configured
        directory = resolve_path(var.value, env.cwd)
        reason = _invalid_reason(sim, directory, tmp, roots)
        if reason is not None:
            invalid = InvalidConfiguration(reason, directory, name, var.source)
            return SocketRoot(invalid=invalid, configured=configured)
        refusal = _establish_configured(sim, directory, rules.walk_configured_ancestry)
        if refusal is None:
            return SocketRoot(tier="configured", root=directory, configured=configured)
        fallback = _establish_workspace_dir(sim, data.socket_dir)
        return SocketRoot(
            tier=None if fallback else "workspace",
            root=None if fallback else data.socket_dir,
            refused_configured_dir=directory,
            refusals=(refusal,) + ((fallback,) if fallback else ()),
            failure=fallback,
            configured=configured,
        )

    refusals: list[Refusal] = []
    tiers: list[tuple[Tier, str, t.Callable[[], Refusal | None]]] = []

    def shared_tier() -> Refusal | None:
        refusal = walk_ancestry(sim, "/tmp", create=False) if rules.walk_tier_ancestry else None
        refusal = refusal or establish_shared_root(sim, roots.container)
        for level in (roots.user, roots.sockets):
            refusal = refusal or establish_private_dir(sim, level)
        return refusal

    tiers.append(("shared", roots.sockets, shared_tier))
    if home_nx is not None and _home_tier_is_distinct(view, home_nx, tmp, roots):

        def home_tier() -> Refusal | None:
            refusal = walk_ancestry(sim, dirname(home_nx), create=True) if rules.walk_tier_ancestry else None
            for level in (home_nx, join(home_nx, "sockets")):
                refusal = refusal or establish_private_dir(sim, level)
            return refusal

        tiers.append(("home", join(home_nx, "sockets"), home_tier))

    for index, (tier, root, establish) in enumerate(tiers):
        refusal = establish()
        if refusal is None:
            demoted = tiers[0][1] if index else None
            return SocketRoot(tier=tier, root=root, demoted_from=demoted, refusals=tuple(refusals))
        refusals.append(refusal)
    fallback = _establish_workspace_dir(sim, data.socket_dir)
    if fallback:
        return SocketRoot(refusals=(*tuple(refusals), fallback), failure=fallback)
    return SocketRoot(tier="workspace", root=data.socket_dir, refusals=tuple(refusals))


class _Spot(t.NamedTuple):
    """Where one kind of socket lands: *dir* is None when it is the per-run directory under *root*."""

    tier: Tier
    root: str
    dir: str | None
    attempted_dir: str | None = None
    refusals: tuple[Refusal, ...] = ()


class _Spelling(t.NamedTuple):
    """How a platform spells a socket's path: POSIX paths, or Windows' named pipes (``\\\\.\\pipe\\nx\\…``)."""

    sep: str = "/"
    prefix: str = ""
    user: str | None = None  # Windows: the account name, whose length the pipe's budget leaves room for


_POSIX = _Spelling()


def _placement(kind: SocketKind, spot: _Spot, rules: ReleaseRules, spelling: _Spelling = _POSIX) -> SocketPlacement:
    """A kind's placement at *spot*: its exact path where no pid or id is in it, its length for the longest name."""
    sep, prefix, user = spelling
    name = kind.pattern(rules)
    if spot.dir is None:
        measured_dir, pattern_dir = spot.root + sep + "x" * 20, spot.root + sep + PER_RUN
    else:
        measured_dir = pattern_dir = spot.dir
    length = layout.path_length(measured_dir + sep + kind.longest(rules), rules.budget_units)
    id_budget = None
    if kind.id_budget:
        id_budget = layout.BUDGET - layout.path_length(
            measured_dir + sep + name.replace("<id>", ""), rules.budget_units
        )
    exact = None if spot.dir is None or not kind.exact else prefix + spot.dir + sep + name
    return SocketPlacement(
        kind=kind.name,
        placed=True,
        tier=spot.tier,
        root=spot.root,
        dir=spot.dir,
        path=exact,
        pattern=prefix + pattern_dir + sep + name,
        length=length,
        too_long=length > layout.BUDGET,
        budget_left=layout.BUDGET - length,
        id_budget=id_budget,
        windows_max_username=None if user is None else layout.BUDGET - length + len(user),
        attempted_dir=spot.attempted_dir,
        refusals=spot.refusals,
    )


class _Layout(t.Protocol):
    """What differs between the layouts: where each kind lands, given those placed before it, and the root."""

    def place(self, kind: SocketKind, placed: t.Mapping[str, SocketPlacement]) -> SocketPlacement: ...

    def socket_root(self) -> SocketRoot: ...


def _place_sockets(rules: ReleaseRules, where: _Layout) -> tuple[SocketRoot, dict[str, SocketPlacement]]:
    """The one loop over the socket kinds: a kind this release does not make is not placed; *where* places the rest."""
    sockets: dict[str, SocketPlacement] = {}
    for kind in SOCKET_KIND_TABLE:
        if kind.requires is not None and not getattr(rules, kind.requires):
            sockets[kind.name] = SocketPlacement(kind=kind.name, placed=False)
        else:
            sockets[kind.name] = where.place(kind, sockets)
    return where.socket_root(), sockets


class _CurrentLayout:
    """Nx ≥ 23.1.2 on POSIX: the root once, then each kind's leaf under it; a leaf refusal sends that kind alone to
    the workspace.

    The daemon runs in the workspace root: a relative configured directory is
    resolved there for its socket, and against the caller's directory for the rest.
    """

    def __init__(self, env: Environment, sim: Simulation, rules: ReleaseRules, data: WorkspaceData) -> None:
        self.sim, self.rules, self.data, self.ws = sim, rules, data, env.workspace_root
        self.root = _establish_root(env, sim, rules, data)
        self.workspace_root = self.root
        configured = _configured_socket_dir(env, rules)
        if configured is not None and not is_absolute(configured[1].value) and env.cwd != self.ws:
            self.workspace_root = _establish_root(env._replace(cwd=self.ws), sim, rules, data)
        self.fallback: list[Refusal | None] = []  # the workspace directory, established at most once
        self.spots: dict[str, _Spot] = {}

    def socket_root(self) -> SocketRoot:
        return self.root

    def place(self, kind: SocketKind, placed: t.Mapping[str, SocketPlacement]) -> SocketPlacement:
        root, rules = self.root, self.rules
        kind_root = self.workspace_root if kind.from_workspace else root
        if kind_root.tier is None or kind_root.root is None or root.tier is None or root.root is None:
            failure = kind_root.failure if kind_root.tier is None else root.failure
            return SocketPlacement(kind=kind.name, placed=True, failure=failure)
        if kind.beside is not None:  # beside the socket of the process that makes it
            if self.workspace_root is not root:
                return _placement(kind, _Spot(root.tier, root.root, root.root), rules)
            if kind.beside in self.spots:
                return _placement(kind, self.spots[kind.beside], rules)
            return placed[kind.beside]._replace(kind=kind.name)
        if kind_root.tier in ("configured", "workspace"):
            spot = _Spot(kind_root.tier, kind_root.root, kind_root.root)
        else:
            leaf = join(root.root, PER_RUN if kind.leaf is None else kind.leaf(self.ws))
            refusal = establish_private_dir(self.sim, leaf)
            if refusal is None:
                spot = _Spot(root.tier, root.root, None if kind.leaf is None else leaf)
            else:
                if not self.fallback:
                    self.fallback.append(_establish_workspace_dir(self.sim, self.data.socket_dir))
                if self.fallback[0] is not None:
                    return SocketPlacement(kind=kind.name, placed=True, attempted_dir=leaf, refusals=(refusal,),
                                           failure=self.fallback[0])
                spot = _Spot("workspace", self.data.socket_dir, self.data.socket_dir, leaf, (refusal,))
        self.spots[kind.name] = spot
        return _placement(kind, spot, rules)


class _LegacyLayout:
    """Nx ≤ 23.1.1: ``os.tmpdir()``-based, created at the umask, nothing checked; a failure falls to the workspace.

    The daemon runs in the workspace root, so a relative directory lands there for its socket.
    """

    def __init__(self, env: Environment, sim: Simulation, rules: ReleaseRules, data: WorkspaceData) -> None:
        self.env, self.sim, self.rules, self.data = env, sim, rules, data
        self.configured = _configured_socket_dir(env, rules)
        self.spots: dict[str, _Spot] = {}

    def socket_root(self) -> SocketRoot:
        daemon = self.spots["daemon"]
        return SocketRoot(tier=daemon.tier, root=daemon.root, configured=self.configured)

    def place(self, kind: SocketKind, placed: t.Mapping[str, SocketPlacement]) -> SocketPlacement:
        env, sim, configured, ws = self.env, self.sim, self.configured, self.env.workspace_root
        cwd = ws if kind.from_workspace else env.cwd
        if kind.beside is not None and (configured is None or is_absolute(configured[1].value) or cwd == ws):
            return _placement(kind, self.spots[kind.beside], self.rules)  # unless a relative directory lands elsewhere
        tmp = sim.view.realpath(resolve_path(env.node_tmpdir(), cwd))
        tier: Tier
        if configured is not None:
            tier, directory = "configured", configured[1].value
        elif isinstance(tmp, int):
            tier, directory = "workspace", ""
        else:
            tier = "temp"
            directory = join(tmp, layout.per_run_leaf(ws, PER_RUN)) if kind.leaf is None else tmp
        # ``mkdirSync(dir, {recursive: true})``; an empty value throws ENOENT.
        if not directory or make_parents(sim, resolve_path(directory, cwd)) is not None:
            tier, directory = "workspace", self.data.socket_dir
        directory = resolve_path(directory, cwd)
        if kind.leaf is None and tier == "temp":
            spot = _Spot(tier, dirname(directory), None)
        else:
            spot = _Spot(tier, directory, directory)
        self.spots[kind.name] = spot
        return _placement(kind, spot, self.rules)


class _WindowsPipes:
    """Windows: named pipes, one tier, the OS temp dir; nothing to guard and nothing to allowlist."""

    def __init__(self, env: Environment, rules: ReleaseRules) -> None:
        import ntpath

        self.rules, self.ws = rules, env.workspace_root
        self.spelling = _Spelling("\\", layout.PIPE_PREFIX, env.username or "")
        tmp = env.node_tmpdir()
        configured = _configured_socket_dir(env, rules)
        nx_dir = ntpath.join(tmp, ".nx")
        invalid = None
        tier: Tier
        root_dir, tier = tmp, "temp"
        if configured is not None:
            name, var = configured
            root_dir, tier = ntpath.normpath(ntpath.join(env.cwd, var.value)), "configured"
            unusable: list[tuple[str, InvalidReason]] = [
                (tmp, "os-temp-root"), (nx_dir, "nx-managed"), (ntpath.join(nx_dir, "native-cache"), "nx-managed")
            ]
            for candidate, reason in unusable:
                if ntpath.normcase(ntpath.normpath(candidate)) == ntpath.normcase(root_dir):
                    invalid = InvalidConfiguration(reason, root_dir, name, var.source)
                    break
        self.tier, self.dir, self.invalid = tier, root_dir, invalid
        self.root = SocketRoot(tier=None if invalid else tier, root=None if invalid else root_dir, invalid=invalid,
                               configured=configured)

    def socket_root(self) -> SocketRoot:
        return self.root

    def place(self, kind: SocketKind, placed: t.Mapping[str, SocketPlacement]) -> SocketPlacement:
        import ntpath

        if self.invalid is not None:
            return SocketPlacement(kind=kind.name, placed=True)
        tier, root_dir = self.tier, self.dir
        if tier == "configured" or (kind.leaf is not None and not self.rules.current_layout):
            spot = _Spot(
                tier, root_dir, root_dir
            )  # the legacy layout has no leaves: plugin<id>.sock in the temp dir itself
        elif kind.leaf is None:
            spot = _Spot(tier, root_dir, None)
        else:
            spot = _Spot(tier, root_dir, ntpath.join(root_dir, kind.leaf(self.ws)))
        return _placement(kind, spot, self.rules, self.spelling)



# -- the daemon's record -------------------------------------------------------------


def client_socket_refusal(view: FsView, uid: int, socket_path: str, *, gid: int = -1) -> Refusal | None:
    """Why a client of Nx ≥ 24.0.5 refuses to dial *socket_path* (``connectToDaemonSocket``), or ``None``.

    Every level above the socket's directory must pass the ancestry walk, and
    the directory itself must be a real directory of yours with no group or
    other bits at all; nothing is created or tightened.  A refusal reaches the
    client as ``ENOENT``, which its poll reads as "not up yet".  The rule
    itself is :func:`nxsock.core.sandbox_daemon.client_refusal`.
    """
    return client_refusal(view, uid, gid, socket_path)


def _predicted_client_refusal(env: Environment, view: FsView, daemon: SocketPlacement) -> Refusal | None:
    """Where no daemon runs yet: would the client refuse the directory the daemon is predicted to bind in?

    The daemon makes that directory itself, owner-only (the resolver already
    judged it can), so only the levels above it decide: missing ones would be
    the user's own when the daemon creates them.
    """
    assert daemon.root is not None
    directory = daemon.dir or join(daemon.root, "x" * 20)
    sim = Simulation(view, env.uid, env.gid, env.groups, env.umask)
    return walk_ancestry(sim, dirname(directory), create=True)


def _daemon_record(view: FsView, daemon_dir: str, uid: int, rules: ReleaseRules) -> DaemonRecord | None:
    """``server-process.json``, when there is one: the recorded socket, whether its pid lives and it answers."""
    path = join(daemon_dir, "server-process.json")
    text = view.read_text(path)
    if isinstance(text, int):
        if text == _errno.ENOENT or text == _errno.ENOTDIR:
            return None
        return DaemonRecord(
            file=path, problem=f"could not be read ({errno_name(text)})", client_checks_socket=rules.client_socket_check
        )
    try:
        data = parse_json(text)
    except JsonInputError as exc:
        return DaemonRecord(file=path, problem=str(exc), client_checks_socket=rules.client_socket_check)
    if not isinstance(data, dict):
        return DaemonRecord(file=path, problem="is not a JSON object", client_checks_socket=rules.client_socket_check)
    pid = data.get("processId")
    pid = pid if isinstance(pid, int) and not isinstance(pid, bool) else None
    socket_path = data.get("socketPath")
    socket_path = socket_path if isinstance(socket_path, str) and is_absolute(socket_path) else None
    if socket_path is not None and (
        normalize(socket_path) != socket_path or "\0" in socket_path or not socket_path.endswith(".sock")
    ):
        # Whoever wrote the record chose it: a path that climbs (``..``) or names no socket is not Nx's.  It is
        # reported as the record's problem; nothing is probed, surveyed or offered from it.
        return DaemonRecord(
            file=path,
            pid=pid,
            socket_path=socket_path,
            problem="names a socketPath that is not a plain path to a socket",
            client_checks_socket=rules.client_socket_check,
        )
    version = data.get("nxVersion")
    version = version if isinstance(version, str) and is_version(version) else None  # a version, or not known
    alive = view.pid_alive(pid) if pid is not None else None
    connect = view.probe_socket(socket_path) if socket_path is not None else None
    refusal = None
    if socket_path is not None and rules.client_socket_check:
        refusal = client_socket_refusal(view, uid, socket_path)
    return DaemonRecord(
        file=path,
        pid=pid,
        socket_path=socket_path,
        nx_version=version,
        alive=alive,
        connect=connect,
        client_checks_socket=rules.client_socket_check,
        client_will_connect=None if socket_path is None else refusal is None,
        client_refusal=refusal,
    )


# -- what a sandbox must allow ------------------------------------------------------


def _allowlist(
    env: Environment, view: FsView, sockets: t.Mapping[str, SocketPlacement], cache: NativeCache
) -> Allowlist:
    """Each socket root Nx settled on (its leaves are created beneath it) and the cache directory."""
    socket_dirs: list[str] = []
    for placement in sockets.values():
        if placement.placed and placement.root is not None:
            real = sandbox_real_dir(view, env.platform, placement.root)
            if real not in socket_dirs:
                socket_dirs.append(real)
    write = list(socket_dirs)
    if cache.dir is not None and sandbox_real_dir(view, env.platform, cache.dir) not in write:
        write.append(sandbox_real_dir(view, env.platform, cache.dir))
    return Allowlist(tuple(write), tuple(socket_dirs))
