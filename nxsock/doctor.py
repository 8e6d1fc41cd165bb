"""``doctor``: every level Nx depends on, audited, each problem with the command that fixes it.

Each check is a function of one :class:`Context` (the resolution, the view,
and what was found on disk) returning :class:`Finding` values with a stable
id.  Checks only read: sockets are probed with a bounded connect, files are
opened non-blocking, nothing is created, changed or removed.
"""

from __future__ import annotations

import re
import typing as t

from ._pathname import dirname, join
from .environment import RELEVANT_VARIABLES
from .fsview import OVERFLOW_UID, Entry, FsView, UserNamespaceView
from .guards import Refusal
from .layout import BUDGET, CONTAINER, per_run_leaf
from .remedy import Remedy, Step, Withheld
from .resolver import Resolution, resolve
from .sandbox_daemon import (
    RUN_INSIDE,
    inside_advice,
    inside_user_namespace,
    marker_warning,
    sandbox_statement,
)
from .terminal import counted

if t.TYPE_CHECKING:
    from .binding_cache import Verdict
    from .cleanup import ResetItem

from .wording import (
    PROVISION_COMMAND,
    Advice,
    RemedyContext,
    configuration_fix,
    describe,
    describe_invalid,
    format_mode,
    remedy_for,
    remedy_for_invalid,
    socket_export,
)

__all__ = ["CHECKS", "Context", "Finding", "run_checks"]

SANDBOX_MARKERS = ("SANDBOX_RUNTIME", "GEMINI_SANDBOX", "CODEX_SANDBOX", "CODEX_SANDBOX_NETWORK_DISABLED", "CURSOR_SANDBOX")
TMPFILES_DIRS = ("/etc/tmpfiles.d", "/run/tmpfiles.d", "/usr/local/lib/tmpfiles.d", "/usr/lib/tmpfiles.d")


#: How much a finding matters, in rising order.
Severity = t.Literal["ok", "info", "warn", "error"]


class Finding(t.NamedTuple):
    id: str
    severity: Severity
    path: str | None
    message: str
    remedy: str | None = None
    hint: str | None = None
    detail: tuple[str, ...] = ()  # text read from disk (a marker's reason, a log's lines), shown as quoted lines
    steps: tuple[Step, ...] = ()  # the remedy as values (what ``remedy`` renders)


class Context(t.NamedTuple):
    resolution: Resolution
    view: FsView
    remedies: RemedyContext
    cache_verdict: Verdict | None
    cache_leftovers: int  # entries cache prune would remove
    dead_state: t.Sequence[ResetItem]  # what a dry reset would remove
    legacy_state: t.Sequence[ResetItem]
    sockets: t.Sequence[tuple[str, Entry, str | None]] = ()  # each *.sock found, and its probe (sockets only)
    sandbox: str | None = None  # the sandbox format the user named (--sandbox), if any
    cache_room: int | None = None  # bytes free where the binding cache is copied to, where known
    cache_binding_size: int | None = None  # the size of the binding Nx copies there
    unix_sockets: str | None = None  # the errno name when this process may not even create a unix socket (a policy)


def _refusal_finding(check: str, refusal: Refusal, severity: Severity, ctx: Context, purpose: str = "sockets") -> Finding:
    advice = inside_advice(refusal, ctx.resolution.user_namespace_sandbox)
    if advice is not None:
        return Finding(check, severity, refusal.dir, describe(refusal, purpose), None, advice)
    remedy = remedy_for(refusal, ctx.remedies, purpose)
    return Finding(check, severity, refusal.dir, describe(refusal, purpose), remedy.command, remedy.hint, steps=remedy.steps)


def _advised(check: str, severity: Severity, path: str | None, message: str, advice: Advice, detail: tuple[str, ...] = ()) -> Finding:
    return Finding(check, severity, path, message, advice.command, advice.hint, detail, advice.steps)


def _offer(ctx: Context, steps: t.Sequence[Step], changes: str, *alternatives: Remedy | Withheld | None) -> Advice:
    """A remedy built here, through the one policy."""
    return ctx.remedies.offer(Remedy(tuple(steps), changes), *alternatives)


def _mode(entry: Entry) -> str:
    return format(entry.mode, "04o")


# -- environment ------------------------------------------------------------------


def check_environment(ctx: Context) -> list[Finding]:
    env = ctx.resolution.environment
    res = ctx.resolution
    def shown(name: str) -> str:
        value = env.get(name)
        return "unset" if value is None else repr(value) if not value or value != value.strip() else value

    found = [
        Finding("environment", "info", None, f"platform {env.platform}, uid {env.uid}, HOME {shown('HOME')}, "
                f"TMPDIR {shown('TMPDIR')}, workspace {env.workspace_root} (found by {env.workspace_source})"),
    ]
    if env.nx_version is None:
        found.append(Finding("environment", "info", env.workspace_root,
                             f"No Nx is installed in this workspace; predicted as Nx {res.rules.release}, the newest release nxsock knows.",
                             hint="Run nxsock in the workspace (or pass --workspace DIR), or pass --nx-version V to audit for that release."))
    else:
        assumed = f"; newer than any release nxsock knows, predicted as Nx {res.rules.release}" if res.layout_assumed else ""
        found.append(Finding("environment", "info", None, f"Nx {env.nx_version}, {res.layout} layout ({res.generation}){assumed}."))
    for name in RELEVANT_VARIABLES:
        var = env.variables.get(name)
        if var is not None and name.startswith("NX_"):
            found.append(Finding("environment", "info", None, f"{name}={var.value!r} (from {var.source})"))
    markers = [m for m in SANDBOX_MARKERS if env.get(m)]
    if markers:
        found.append(Finding("environment", "info", None, f"Sandbox markers set: {', '.join(markers)}."))
    return found


def check_unix_sockets(ctx: Context) -> list[Finding]:
    """A policy (seccomp in srt and codex, Seatbelt) that refuses unix sockets outright: no directory helps."""
    if ctx.unix_sockets is None:
        return []
    from .explain import sandbox_remedy

    env = ctx.resolution.environment
    advice = ctx.remedies.offer(sandbox_remedy({m: v for m in SANDBOX_MARKERS if (v := env.get(m))}, env.platform, ctx.sandbox))
    return [_advised("unix-sockets", "error", None,
                     f"This process may not create unix sockets ({ctx.unix_sockets}): a sandbox's policy refuses them, "
                     "so Nx's daemon and plugin workers cannot listen anywhere.", advice)]


def check_user_namespace(ctx: Context) -> list[Finding]:
    """Inside bwrap/srt/codex every foreign owner is uid 65534: where Nx really goes, and whether its client can use the daemon."""
    from .allowlists import SANDBOX_NAMES, sandbox_kind

    res = ctx.resolution
    env = res.environment
    verdict = res.user_namespace_sandbox
    mapping = inside_user_namespace(ctx.view)
    named = ctx.sandbox
    name = SANDBOX_NAMES.get(named or "", named)
    found = []
    if mapping is not None:
        found.append(Finding("user-namespace", "info", None,
                             f"Running in a user namespace (uid_map: {mapping}): other owners, root included, show as 65534. "
                             f"Nx resolves to {res.socket_root.root} ({res.socket_root.tier}).",
                             hint="An allowlist of only /tmp/.nx and ~/.nx does nothing here unless Nx resolves there."))
    elif env.platform != "linux" or env.uid == 0:
        return []
    elif named is not None and not sandbox_kind(named, env.platform)[0]:
        return [Finding("user-namespace", "info", None, f"{name} keeps owners as they are here: Nx resolves as it does outside.",
                        hint=f"`nxsock paths --format {named}` prints what it must allow.")]
    else:
        sandboxed = resolve(env, UserNamespaceView(ctx.view, env.uid, env.gid))
        root = sandboxed.socket_root
        where = f"{root.root} ({root.tier})" if root.tier else "nowhere: Nx would fail"
        inside = f"Inside {name}" if named else "Inside an unprivileged sandbox (bubblewrap, srt, codex)"
        formats = named or "bwrap|srt|claude|codex-profile"
        found.append(Finding("user-namespace", "info", None,
                             f"{inside} Nx {env.nx_version or ''} would resolve to {where}.".replace("  ", " "),
                             hint=f"Allow that directory and the workspace data directory {res.workspace_data.dir} in the sandbox; "
                                  f"`nxsock paths --format {formats}` prints the entries."
                                  + ("" if verdict is None or verdict.usable else
                                     " That lets Nx run there, but without its daemon, which no allowlist makes usable (see sandbox-daemon).")))
    if verdict is not None and not verdict.usable:
        severity: Severity
        if verdict.inside:
            remedy, severity = f"export {RUN_INSIDE}", "warn"
        elif named:
            remedy, severity = f"nxsock paths --format {named}", "warn"
        else:
            remedy, severity = None, "info"
        carried = "" if verdict.inside else (f" `nxsock paths --format {named}` carries it." if named else
                                              " `nxsock paths --format bwrap|claude|codex-profile` carries it; for srt, start it with it.")
        found.append(Finding("sandbox-daemon", severity, None, sandbox_statement(verdict, env.nx_version, name if named else None),
                             remedy, marker_warning(verdict) + carried))
    return found


def check_tmpdir(ctx: Context) -> list[Finding]:
    res = ctx.resolution
    failure = res.socket_root.failure
    if res.rules.tmpdir_enoent_fails and failure is not None and failure.kind == "not-inspectable" and failure.errno == "ENOENT":
        return [_advised("tmpdir", "error", failure.dir,
                         f"TMPDIR names {failure.dir}, which does not exist; Nx 23.1.2–23.3 fails every socket path with ENOENT.",
                         remedy_for(failure, ctx.remedies))]
    return []


# -- the chain of levels -------------------------------------------------------------

def _level_of(refusal: Refusal) -> str:
    """Which finding a refusal is: the container itself, a level above the tiers, or a private level."""
    if refusal.dir == CONTAINER:
        return "container"
    if refusal.kind in ("foreign-ancestor", "peer-writable-not-sticky"):
        return "ancestry"
    return "private-levels"


def check_levels(ctx: Context) -> list[Finding]:
    """Every refusal met on the way, at the level it was met, severe when Nx ends up with nothing."""
    res = ctx.resolution
    severity: Severity = "warn" if res.socket_root.tier is not None else "error"
    found = []
    for refusal in res.socket_root.refusals:
        if refusal == res.socket_root.failure or refusal.dir == CONTAINER:
            continue  # the failure is the outcome's; the container's own refusal is the container check's
        found.append(_refusal_finding(_level_of(refusal), refusal, severity, ctx))
    for placement in res.sockets.values():
        for refusal in placement.refusals:
            found.append(_refusal_finding("private-levels", refusal, "warn", ctx))
    for action in res.actions:
        if action.verb == "tighten":
            advice = _offer(ctx, [Step("chmod", action.path, mode=0o700)], f"Restricts {action.path} to you now, as Nx would.")
            if advice.command is None:
                advice = Advice(None, "Nx tightens it to 0700 itself on its next run; nxsock does not change a configured directory.")
            found.append(_advised("private-levels", "warn", action.path,
                                  f"{action.path} is open to other users; Nx will tighten it to 0700 on its next run.", advice))
    return found


def check_container(ctx: Context) -> list[Finding]:
    entry = ctx.view.lstat(CONTAINER)
    res = ctx.resolution
    env = res.environment
    refused = [r for r in res.socket_root.refusals if r.dir == CONTAINER]
    if refused:
        return [_refusal_finding("container", refused[0], "warn" if res.socket_root.tier else "error", ctx)]
    if isinstance(entry, int):
        return [Finding("container", "ok", CONTAINER, "/tmp/.nx does not exist yet; Nx will create it, owned by you, 1777.",
                        hint=f"On a shared machine provision it for everyone: {PROVISION_COMMAND}")]
    if not entry.is_dir:
        return []  # not reached by Nx's chain (a configured directory is in use)
    if entry.uid == 0 and entry.mode == 0o1777:
        return [Finding("container", "ok", CONTAINER, "/tmp/.nx is provisioned for sharing: root:root-owned, 1777.")]
    if entry.uid == env.uid and env.uid != 0:
        advice = _offer(ctx, [Step("chown", CONTAINER, owner=0, group=0, needs_root=True), Step("chmod", CONTAINER, mode=0o1777, needs_root=True)],
                        "Hands /tmp/.nx to root, 1777, so every user can keep a private directory in it.")
        return [_advised("container", "info", CONTAINER,
                         "/tmp/.nx is yours (the first user to run Nx made it): normal on a single-user machine, "
                         "but every other user will be demoted to ~/.nx.", advice)]
    return [Finding("container", "ok", CONTAINER, f"/tmp/.nx passes the shared-root guard for you (owner uid {entry.uid}, mode {_mode(entry)}).")]


def check_outcome(ctx: Context) -> list[Finding]:
    root = ctx.resolution.socket_root
    if root.invalid is not None:
        return []  # the configuration check says it
    if root.tier is None:
        failure = root.failure
        advice = remedy_for(failure, ctx.remedies) if failure else Advice(None, "No refusal was recorded to fix.")
        return [_advised("outcome", "error", failure.dir if failure else None,
                         "Nx cannot establish any socket directory: every command that needs the daemon or plugins fails.", advice)]
    first = remedy_for(root.refusals[0], ctx.remedies) if root.refusals else Advice(None, None)
    if first.command is not None:
        first = first._replace(hint=f"The fix of the first refusal above, {root.refusals[0].dir}: {first.hint or ''}".rstrip(": "))
    if root.tier == "home":
        return [_advised("outcome", "warn", root.root, f"Nx is demoted to {root.root}: the shared container could not be used.",
                         first if first.command or first.hint else Advice(None, "Nx works from there; nothing needs fixing."))]
    if root.tier == "workspace":
        note = "A sandbox allowlist for /tmp/.nx or ~/.nx does not cover this directory."
        return [_advised("outcome", "warn", root.root,
                         f"Nx falls back to {root.root}, inside the workspace: its paths grow with the checkout's depth.",
                         first._replace(hint=" ".join(x for x in (first.hint, note) if x)))]
    return [Finding("outcome", "ok", root.root, f"Nx uses {root.root} ({root.tier}).")]


def check_configuration(ctx: Context) -> list[Finding]:
    root = ctx.resolution.socket_root
    data = ctx.resolution.workspace_data
    found = []
    if root.invalid is not None:
        inv = root.invalid
        found.append(_advised("configuration", "error", inv.dir, describe_invalid(inv.reason, inv.dir, inv.variable),
                              remedy_for_invalid(inv.variable, ctx.remedies)))
    if root.refused_configured_dir is not None:
        name = root.configured[0] if root.configured else "NX_SOCKET_DIR"
        advice = ctx.remedies.offer(configuration_fix(ctx.remedies, name, "socket directory"), socket_export(ctx.remedies))
        found.append(_advised("configuration", "error", root.refused_configured_dir,
                              f"{name}={root.refused_configured_dir} is refused, so Nx drops it for the workspace fallback.", advice))
    if ctx.resolution.generation == "legacy" and root.tier == "configured" and root.root is not None and root.configured:
        entry = ctx.view.stat(root.root)  # legacy Nx checks nothing: it listens there or its daemon and workers die
        uid = ctx.resolution.environment.uid
        if isinstance(entry, Entry) and not (entry.mode & (0o200 if entry.uid == uid else 0o002)):
            name = root.configured[0]
            advice = ctx.remedies.offer(configuration_fix(ctx.remedies, name, "socket directory"), socket_export(ctx.remedies))
            found.append(_advised("configuration", "error", root.root,
                                  f"{name}={root.root} is not writable by you (owner uid {entry.uid}, mode {_mode(entry)}): "
                                  "this Nx cannot listen there, so its daemon and plugin workers fail (EACCES).", advice))
    if data.untrusted_reason is not None:
        name = data.source.split(" ", 1)[0]
        advice = ctx.remedies.offer(configuration_fix(ctx.remedies, name, "workspace data directory"))
        found.append(_advised("configuration", "error" if data.refused else "warn", data.dir,
                              f"The workspace data directory is not safe: {data.untrusted_reason}.", advice))
    return found


def check_workspace_data(ctx: Context) -> list[Finding]:
    """Nx's directories in the workspace made by another user (``sudo nx``): Nx cannot write its caches or daemon files."""
    data = ctx.resolution.workspace_data
    env = ctx.resolution.environment
    dot_nx = dirname(data.dir)
    levels = [dot_nx, data.dir, join(dot_nx, "cache"), data.daemon_dir] if data.source == "default" else [data.dir, data.daemon_dir]
    foreign, links = [], []
    for directory in levels:
        entry = ctx.view.lstat(directory)
        if not isinstance(entry, Entry):
            continue
        if entry.is_link:
            links.append(directory)
        if entry.uid != env.uid and not (entry.is_dir and entry.mode & 0o002):
            foreign.append((directory, entry.uid))
    if not foreign:
        return []
    if links:  # a command here could act on what a link points at
        return [Finding("workspace-data", "error", foreign[0][0],
                        f"{foreign[0][0]} belongs to uid {foreign[0][1]}, and {links[0]} is a link on the way to it.", None,
                        "No safe command: rm, chown or chmod could act on what the link points at. Look at it; "
                        "remove the link itself (not its target) if you did not make it.")]
    first, owner = foreign[0]
    whose = "root" if owner == 0 else f"uid {owner}"
    if data.source != "default" and first == data.dir:
        name = data.source.split(" ", 1)[0]
        advice = ctx.remedies.offer(configuration_fix(ctx.remedies, name, "workspace data directory"))
        return [_advised("workspace-data", "error", first, f"{first} ({data.source}) belongs to {whose}; Nx cannot write there.", advice)]
    removed = [d for d, _ in foreign if d != dot_nx or data.source != "default"]
    removed = [d for d in removed if not any(d.startswith(r + "/") for r in removed)]
    steps = [Step("remove-tree", d, needs_root=True) for d in removed]
    dot_nx_owner = next((u for d, u in foreign if d == dot_nx), None) if data.source == "default" else None
    if dot_nx_owner == 0:  # root's, from `sudo nx` in your own workspace; another user's is never handed to you
        steps.append(Step("chown", dot_nx, owner=env.uid, group=env.gid, needs_root=True))
    elif dot_nx_owner is not None:
        return [Finding("workspace-data", "error", dot_nx, f"{dot_nx} belongs to uid {dot_nx_owner}, not to you or root.", None,
                        "No safe command: another user's directory is never handed to you. Look at what it holds, "
                        "then move it aside as root.")]
    advice = _offer(ctx, steps,
                    "Left by running Nx as another user (`sudo nx`): Nx's caches are removed and rebuilt, as after `nx reset`; "
                    f"{dot_nx} itself, which may hold files you commit, is handed back to you rather than removed.")
    return [_advised("workspace-data", "error", first,
                     f"{first} belongs to {whose}, so Nx cannot write its caches or daemon files there "
                     "(EACCES, \"os error 13\").", advice)]


def check_path_budget(ctx: Context) -> list[Finding]:
    found = []
    for kind, placement in ctx.resolution.sockets.items():
        if placement.too_long:
            found.append(Finding("path-budget", "error", placement.pattern,
                                 f"The {kind} socket path is {placement.length} characters, over Nx's limit of {BUDGET}."))
    if found:
        advice = ctx.remedies.offer(socket_export(ctx.remedies))
        if advice.command is None:
            advice = Advice(None, "No shorter directory that passes every rule was found; choose one you own. " + (advice.hint or ""))
        found = [f._replace(remedy=advice.command, hint=advice.hint, steps=advice.steps) for f in found]
    return found


# -- sockets and the daemon ----------------------------------------------------------


def _socket_dirs(res: Resolution, view: FsView) -> list[str]:
    dirs = []
    for placement in res.sockets.values():
        if placement.root is None:
            continue
        if placement.dir is not None:
            dirs.append(placement.dir)
        else:  # per-run directories: every one under the root
            names = view.listdir(placement.root)
            if not isinstance(names, int):
                dirs += [join(placement.root, n) for n in names if re.fullmatch(r"[0-9a-f]{20}", n)]
    return list(dict.fromkeys(dirs))


def survey_sockets(res: Resolution, view: FsView) -> list[tuple[str, Entry, str | None]]:
    """Every ``*.sock`` in the directories Nx would use, probed once (a bounded connect) when it is a socket."""
    found = []
    for directory in _socket_dirs(res, view):
        names = view.listdir(directory)
        if isinstance(names, int):
            continue
        for name in sorted(names):
            if not name.endswith(".sock"):
                continue
            path = join(directory, name)
            entry = view.lstat(path)
            if isinstance(entry, Entry):
                probe = view.probe_socket(path) if entry.kind == "socket" and entry.uid == res.environment.uid else None
                found.append((path, entry, probe))
    return found


def _permits(view: FsView, path: str, uid: int) -> bool:
    """Whether modes and owners let *uid* connect: write on the socket, search on every directory above."""
    entry = view.lstat(path)
    if isinstance(entry, int):
        return False
    if entry.uid == uid and not entry.mode & 0o200:
        return False
    level = dirname(path)
    while True:
        above = view.stat(level)
        if isinstance(above, int) or (above.uid == uid and not above.mode & 0o100):
            return False
        if level == "/":
            return True
        level = dirname(level)


def check_sockets(ctx: Context) -> list[Finding]:
    view = ctx.view
    uid = ctx.resolution.environment.uid
    found = []
    for directory in _socket_dirs(ctx.resolution, view):  # a per-run directory another user made: connects fail EACCES
        level = view.lstat(directory)
        if isinstance(level, Entry) and level.uid != uid and re.fullmatch(r"[0-9a-f]{20}", directory.rsplit("/", 1)[-1]):
            advice = _offer(ctx, [Step("remove-tree", directory, needs_root=True)],
                            f"Removes that directory of uid {level.uid}; it is never handed to you.")
            found.append(_advised("sockets", "error", directory,
                                  f"{directory} belongs to uid {level.uid}: connecting to the daemon socket in it fails (EACCES).", advice))
    for path, entry, result in ctx.sockets:
        if entry.kind != "socket":
            advice = _offer(ctx, [Step("remove", path)], f"Removes the {entry.kind} where Nx binds a socket; Nx binds a fresh one.")
            found.append(_advised("sockets", "warn", path, f"{path} is a {entry.kind}, not a socket.", advice))
            continue
        if entry.uid != uid:
            advice = _offer(ctx, [Step("remove", path)], f"Removes the socket of uid {entry.uid}, so your Nx binds its own there.")
            found.append(_advised("sockets", "error", path, f"{path} belongs to uid {entry.uid}: dialling it reaches another user's process.", advice))
            continue
        # Only the daemon's socket is chmodded after listen (from 23.1.2); plugin and task sockets keep the umask's
        # mode, guarded by their owner-only directory.
        made = ctx.resolution.rules.socket_mode if path.endswith("/d.sock") else None
        if made is not None and entry.mode & 0o077 & ~made:
            advice = _offer(ctx, [Step("chmod", path, mode=made)], "Restricts the socket to you, as Nx makes it.")
            found.append(_advised("sockets", "warn", path, f"{path} has mode {_mode(entry)}; Nx {ctx.resolution.rules.release} "
                                  f"makes its daemon socket {made:04o}.", advice))
        found.append(_probe_finding(view, path, result, uid, ctx.remedies, _young(ctx)))
    return found


def _young(ctx: Context) -> bool:
    """Whether a reset would keep a dead directory for its grace minute: the fix then needs ``--force``."""
    return any(i.outcome == "kept" and (i.reason or "").startswith("modified less than a minute ago") for i in ctx.dead_state)


def _reset(young: bool) -> Remedy:
    if young:
        return Remedy((Step("run-nxsock", value="reset --force"),),
                      "Removes your dead Nx runtime state, including what changed in the last minute (reset keeps that unless forced).")
    return Remedy((Step("run-nxsock", value="reset"),), "Removes your dead Nx runtime state: stale sockets, dead directories, a dead daemon's record.")


def _probe_finding(view: FsView, path: str, result: str | None, uid: int, remedies: RemedyContext | None = None,
                   young: bool = False) -> Finding:
    if remedies is None:
        from .wording import plain_context

        remedies = plain_context(view, uid, uid)
    if result == "answers":
        return Finding("sockets", "ok", path, f"{path} answers.")
    if result == "ECONNREFUSED":
        return _advised("sockets", "warn", path, f"ECONNREFUSED: nothing listens on {path}; it is stale.", remedies.offer(_reset(young)))
    if result == "EACCES":
        if _permits(view, path, uid):
            return Finding("sockets", "error", path,
                           f"EACCES connecting to {path} although its modes and owners allow it: a security policy "
                           "(SELinux, AppArmor, Landlock) refuses; chmod would not help.",
                           hint="No command: allow unix-socket connects for Nx in that policy or sandbox.")
        steps = []
        sock = view.lstat(path)
        holder = view.lstat(dirname(path))
        if isinstance(sock, Entry) and not sock.mode & 0o200:
            steps.append(Step("chmod", path, mode=sock.mode | 0o200))
        if isinstance(holder, Entry) and holder.uid == uid and not holder.mode & 0o100:
            steps.append(Step("chmod", dirname(path), mode=holder.mode | 0o100))
        advice = remedies.offer(Remedy(tuple(steps), "Gives you back write on the socket and search on its directory.")) if steps else Advice(
            None, "A level further up refuses you; nxsock changes only Nx's own levels.")
        return _advised("sockets", "error", path, f"EACCES connecting to {path}: a mode or owner on it or a directory above refuses you.", advice)
    if result == "EPERM":
        return Finding("sockets", "error", path, f"EPERM connecting to {path}: a sandbox policy (seccomp, Seatbelt) forbids unix sockets.",
                       hint="No command: allow unix sockets in the sandbox's settings (srt: allowAllUnixSockets).")
    if result == "EROFS":
        return Finding("sockets", "error", path, f"EROFS at {path}: a read-only mount, typically a sandbox's bind.",
                       hint="No command: make the socket directory writable in the sandbox.")
    return Finding("sockets", "info", path, f"{path}: {result or 'not probed'}.")


def _listeners(view: FsView) -> dict[str, list[int]] | None:
    """Socket path → pids listening on it (Linux: /proc/net/unix and /proc/<pid>/fd); None where unknowable."""
    table = view.read_text("/proc/net/unix", 8 << 20)
    if isinstance(table, int):
        return None
    inodes: dict[str, str] = {}
    for line in table.splitlines()[1:]:
        fields = line.split()
        if len(fields) >= 8 and fields[5] == "01":  # TCP_LISTEN-like state for stream sockets
            inodes[fields[6]] = fields[7]
    owners: dict[str, list[int]] = {}
    procs = view.listdir("/proc")
    if isinstance(procs, int):
        return None
    for pid in (p for p in procs if p.isdigit()):
        fds = view.listdir(f"/proc/{pid}/fd")
        if isinstance(fds, int):
            continue
        for fd in fds:
            target = view.readlink(f"/proc/{pid}/fd/{fd}")
            if isinstance(target, str) and target.startswith("socket:["):
                path = inodes.get(target[8:-1])
                if path is not None:
                    owners.setdefault(path, []).append(int(pid))
    return owners


def check_socket_owner(ctx: Context) -> list[Finding]:
    """Whose daemon is it: the process listening on each answering socket, flagged when it is not ours."""
    res = ctx.resolution
    view = ctx.view
    record = res.daemon_record
    answering = [path for path, _, result in ctx.sockets if result == "answers"]
    if not answering:
        return []
    owners = _listeners(view)
    found = []
    for path in answering:
        pids = (owners or {}).get(path, [])
        if not pids:
            found.append(Finding("socket-owner", "info", path, f"Cannot tell who listens on {path} (another user's "
                                 "process, or another network namespace); not guessing."))
            continue
        pid = pids[0]
        cwd = view.readlink(f"/proc/{pid}/cwd")
        cmdline = view.read_text(f"/proc/{pid}/cmdline")
        command = " ".join(cmdline.split("\0")).strip()[:120] if isinstance(cmdline, str) else "?"
        where = cwd if isinstance(cwd, str) else "?"
        ws = res.environment.workspace_root
        serves_other = isinstance(cwd, str) and not (cwd == ws or cwd.startswith(ws.rstrip("/") + "/"))
        not_recorded = path.endswith("/d.sock") and record is not None and record.pid is not None and record.pid != pid
        severity: Severity = "warn" if serves_other or not_recorded else "ok"
        why = (" — it serves another workspace" if serves_other else "") + (" — not the recorded daemon" if not_recorded else "")
        found.append(Finding("socket-owner", severity, path, f"pid {pid} listens on {path}: {command} (in {where}){why}.",
                             None, "Give each checkout its own NX_SOCKET_DIR (or none)." if severity == "warn" else None))
    return found


def _foreign_daemons(ctx: Context) -> list[tuple[int, int]]:
    """``(pid, uid)`` of Nx daemons of another uid serving this workspace: found by the socket name, which hashes the pid."""
    view = ctx.view
    env = ctx.resolution.environment
    table = view.read_text("/proc/net/unix", 8 << 20)
    procs = view.listdir("/proc")
    if isinstance(table, int) or isinstance(procs, int):
        return []
    found = []
    for name in procs:
        if not name.isdigit():
            continue
        cmdline = view.read_text(f"/proc/{name}/cmdline", 4096)
        if isinstance(cmdline, int) or "daemon/server/start" not in cmdline:
            continue
        status = view.read_text(f"/proc/{name}/status", 8192)
        owner = re.search(r"^Uid:\s+(\d+)", status, re.M) if isinstance(status, str) else None
        if owner is None or int(owner.group(1)) == env.uid:
            continue
        if f"/{per_run_leaf(env.workspace_root, name)}/d.sock" in table:
            found.append((int(name), int(owner.group(1))))
    return found


def _foreign_workspace_levels(ctx: Context) -> list[str]:
    """The levels of the workspace's own Nx tree (``.nx``, ``workspace-data``, ``d``) that exist and are not yours."""
    data = ctx.resolution.workspace_data
    ws = ctx.resolution.environment.workspace_root
    levels = [data.daemon_dir]
    if data.source in ("default", "lerna workspace"):
        levels = [join(ws, ".nx"), data.dir, data.daemon_dir] if data.source == "default" else [data.dir, data.daemon_dir]
    uid = ctx.resolution.environment.uid
    daemon_dir = ctx.view.lstat(data.daemon_dir)
    if isinstance(daemon_dir, Entry) and daemon_dir.uid == uid:
        return []  # the daemon's directory is yours: Nx writes its files there whoever made the levels above
    found = []
    for level in levels:
        entry = ctx.view.lstat(level)
        if isinstance(entry, Entry) and entry.uid != uid:
            found.append(level)
    return found


def check_root_leftovers(ctx: Context) -> list[Finding]:
    """What ``sudo nx`` leaves: a daemon of root's serving this workspace, and root's levels where Nx writes the daemon's files."""
    daemons = _foreign_daemons(ctx)
    foreign = _foreign_workspace_levels(ctx)
    if not daemons and not foreign:
        return []
    view = ctx.view
    # root's daemon is a leftover of sudo nx and is stopped; another user's is theirs to stop, never killed for you
    steps = [Step("stop-process", pid=pid, owner=uid, needs_root=True) for pid, uid in daemons if uid == 0]
    said = []
    if daemons:
        said.append("; ".join(f"pid {pid}, a daemon of {'root' if uid == 0 else f'uid {uid}'}, serves this workspace" for pid, uid in daemons))
    if foreign:
        top = foreign[0]
        entry = view.lstat(top)
        owner = entry.uid if isinstance(entry, Entry) else None
        steps.append(Step("remove-tree", top, needs_root=True))
        said.append(f"{top} belongs to {'root' if owner == 0 else f'uid {owner}'} (mode {format_mode(entry.mode) if isinstance(entry, Entry) else '?'}), "
                    "so your Nx cannot write its daemon's log and record there (EACCES)")
    owners = {uid for _, uid in daemons} | {e.uid for e in (view.lstat(level) for level in foreign) if isinstance(e, Entry)}
    prefix = "Left by running Nx as root (sudo nx): " if owners == {0} else "Another user's Nx serves or owns this workspace: "
    message = prefix + "; ".join(said) + "."
    changes = ("Stops root's daemon and removes its files; " if steps and steps[0].verb == "stop-process" else "Removes them; ") + \
        "your Nx recreates its own on the next command."
    others = [f"pid {pid} is uid {uid}'s: ask them to stop it (nx daemon --stop)" for pid, uid in daemons if uid != 0]
    advice = _offer(ctx, steps, changes) if steps else Advice(None, "No command: " + "; ".join(others) + ".")
    if others and advice.command is not None:
        advice = advice._replace(hint=f"{advice.hint} Another user's daemon is theirs to stop: " + "; ".join(others) + ".")
    path = foreign[0] if foreign else ctx.resolution.workspace_data.daemon_dir
    return [_advised("daemon-record", "error", path, message, advice)]


def check_daemon(ctx: Context) -> list[Finding]:
    res = ctx.resolution
    view = ctx.view
    found = check_root_leftovers(ctx)
    record = res.daemon_record
    if record is not None and not found:
        if record.problem:
            advice = _offer(ctx, [Step("remove", record.file)], "Removes the unreadable record; the daemon writes a new one when it starts.")
            found.append(_advised("daemon-record", "warn", record.file, f"The daemon's record {record.problem}.", advice))
        else:
            if record.alive is False:
                found.append(_advised("daemon-record", "warn", record.file, f"The recorded daemon (pid {record.pid}) is not running.",
                                      ctx.remedies.offer(_reset(_young(ctx)))))
            if record.nx_version and res.environment.nx_version and record.nx_version != res.environment.nx_version:
                stop = Remedy((Step("run-nx", value="daemon --stop"),), "Stops the old daemon; Nx starts one of the installed version on the next command.")
                found.append(_advised("daemon-record", "warn", record.file, f"The daemon runs Nx {record.nx_version}; "
                                      f"{res.environment.nx_version} is installed. Nx restarts it on the next command.", ctx.remedies.offer(stop)))
            if record.connect not in (None, "answers"):
                found.append(_advised("daemon-record", "warn", record.socket_path,
                                      f"The recorded socket {record.socket_path} does not answer ({record.connect}).",
                                      ctx.remedies.offer(_reset(_young(ctx)))))
            elif record.connect == "answers" and record.client_refusal is not None:
                found.append(_client_refuses(ctx, record.pid, record.socket_path, record.client_refusal))
            if not found:
                found.append(Finding("daemon-record", "ok", record.socket_path, f"The daemon (pid {record.pid}) is running and answers."))
    marker = join(res.workspace_data.daemon_dir, "disabled")
    reason = view.read_text(marker, 4096)
    if isinstance(reason, str):
        lines = _text_lines(reason, 12)
        advice = _offer(ctx, [Step("remove", marker)], "Removes the marker, so Nx starts its daemon again.",
                        Remedy((Step("run-nx", value="reset"),), "Nx's own reset, which also clears its caches."))
        found.append(_advised("daemon-disabled", "warn", marker,
                              "The daemon is disabled until `nx reset`; the reason it recorded:" if lines
                              else "The daemon is disabled until `nx reset` (the marker gives no reason).", advice, lines))
    log = join(res.workspace_data.daemon_dir, "daemon-error.log")
    text = view.read_text(log, 1 << 16)
    if isinstance(text, str) and text.strip():
        error, context = _daemon_error(text)
        found.append(Finding("daemon-error", "info", log, f"Last daemon error ({_classify(text)}): {error}",
                             hint=f"The whole error is in {log}.", detail=context))
    return found


def _client_refuses(ctx: Context, pid: int | None, socket: str | None, refusal: Refusal) -> Finding:
    """The daemon answers a plain connect, but Nx's own client (24.0.5 and later) will not dial it from here."""
    res = ctx.resolution
    verdict = res.user_namespace_sandbox
    message = (f"The daemon (pid {pid}) answers a plain connect, but Nx {res.environment.nx_version or ''}'s client refuses "
               f"its socket: {describe(refusal)}").replace("  ", " ")
    if verdict is not None and verdict.inside and not verdict.usable and refusal.uid == OVERFLOW_UID:
        return Finding("daemon-record", "warn", socket, message, f"export {RUN_INSIDE}", marker_warning(verdict))
    remedy = remedy_for(refusal, ctx.remedies)
    return Finding("daemon-record", "warn", socket, message, remedy.command, remedy.hint)


def _text_lines(text: str, limit: int) -> tuple[str, ...]:
    """The non-blank lines of a text from disk, at most *limit* (the last ones), each at most 300 characters."""
    lines = [line.rstrip()[:300] for line in text.replace("\r\n", "\n").split("\n") if line.strip()]
    return tuple(lines[-limit:])


def _daemon_error(text: str) -> tuple[str, tuple[str, ...]]:
    """The error Nx recorded (its first line) and the last lines it quoted from the daemon's log.

    Nx writes the error, then "Messages from the log:" with the log's tail,
    then "More information: <daemon.log>" — so the last line is never the error.
    """
    head, _, quoted = text.partition("Messages from the log:")
    lines = _text_lines(head, 1000)
    error = lines[0] if lines else "(no message)"
    context = [line for line in _text_lines(quoted or "\n".join(lines[1:]), 1000) if not line.startswith("More information:")]
    return error, tuple(context[-5:])


def _classify(text: str) -> str:
    for pattern, label in ((r"EACCES|EPERM", "refused by a permission or policy"), (r"EADDRINUSE", "socket already in use"),
                           (r"maximum socket length", "socket path too long"), (r"ENOENT", "missing directory"),
                           (r"inotify", "out of inotify watches")):
        if re.search(pattern, text):
            return label
    return "other"


# -- cache, leftovers, boot -------------------------------------------------------------


def check_native_cache(ctx: Context) -> list[Finding]:
    cache = ctx.resolution.native_cache
    verdict = ctx.cache_verdict
    severity_for: dict[str, Severity] = {"fresh": "ok", "stale": "warn", "untrusted": "warn", "missing": "info", "bypassed": "info", "no-binding": "info"}
    found = []
    if cache.bypass_reason is not None and not cache.refusals:
        found.append(Finding("native-cache", "info", cache.root, f"Nx loads the binding in place: {cache.bypass_reason}."))
    for refusal in cache.refusals:
        refused = _refusal_finding("native-cache", refusal, "warn", ctx, "cache")
        found.append(refused._replace(message="Nx loads the binding in place, uncached: " + refused.message))
    level = ctx.view.lstat(cache.dir) if cache.dir and cache.bypass_reason is None and not cache.refusals else None
    if cache.dir and isinstance(level, Entry) and level.is_dir and level.uid == ctx.resolution.environment.uid and level.mode & 0o700 != 0o700:
        advice = _offer(ctx, [Step("chmod", cache.dir, mode=0o700)], "Gives you back write access to your own cache directory.")
        found.append(_advised("native-cache", "warn", cache.dir,
                              f"{cache.dir} is yours but mode {_mode(level)}: Nx cannot copy its binding into it (EACCES) "
                              "and loads it in place.", advice))
    if verdict is None or verdict.state in ("bypassed",):
        return found
    binding = ctx.cache_binding_size
    if verdict.state == "missing" and ctx.cache_room is not None and binding is not None and ctx.cache_room < binding:
        skip = Remedy((Step("export", variable="NX_SKIP_NATIVE_FILE_CACHE", value="true"),),
                      "Nx then loads its binding in place and stops trying to copy it.")
        prune = Remedy((Step("run-nxsock", value="cache prune"),), "Frees what other versions and interrupted copies hold.") if ctx.cache_leftovers else None
        found.append(_advised("native-cache", "warn", cache.dir,
                              f"Only {ctx.cache_room} bytes are free where Nx copies its binding ({cache.dir}); the copy needs {binding}, "
                              "so it fails with ENOSPC on every run and Nx loads the binding in place.", ctx.remedies.offer(skip, prune)))
        return found
    severity = severity_for.get(verdict.state, "info")
    if severity in ("warn", "error") and verdict.entry:
        advice = _offer(ctx, [Step("remove", verdict.entry)], "Removes the entry; Nx copies a fresh one on its next run.")
        found.append(_advised("native-cache", severity, verdict.entry, verdict.message, advice))
    else:
        found.append(Finding("native-cache", severity, verdict.entry or cache.dir, verdict.message))
    return found


def check_leftovers(ctx: Context) -> list[Finding]:
    found = []
    dead = [i for i in ctx.dead_state if i.outcome == "removed" and i.what != "daemon record"]
    if dead:
        found.append(_advised("leftovers", "warn", None, f"{len(dead)} dead socket director{'y' if len(dead) == 1 else 'ies'} or stale sockets of yours.",
                              ctx.remedies.offer(_reset(False))))
    if ctx.cache_leftovers:
        prune = Remedy((Step("run-nxsock", value="cache prune"),), "Removes other versions' entries, interrupted copies and untrusted entries of yours.")
        found.append(_advised("leftovers", "warn", ctx.resolution.native_cache.root,
                              f"{ctx.cache_leftovers} binding cache entr{'y' if ctx.cache_leftovers == 1 else 'ies'} of other versions, interrupted or untrusted.",
                              ctx.remedies.offer(prune)))
    # For Nx ≤ 23.1.1 the temp-directory layout is the current one, not a leftover.
    legacy = [i for i in ctx.legacy_state if i.outcome == "removed"] if ctx.resolution.rules.current_layout else []
    if legacy:
        clean = Remedy((Step("run-nxsock", value="reset --legacy"),), "Removes your leftovers of Nx ≤ 23.1.1 from the temp directory, by descriptor.")
        found.append(_advised("leftovers", "warn", None, f"{len(legacy)} leftover{'s' if len(legacy) != 1 else ''} of the legacy layout (Nx ≤ 23.1.1) in the temp directory.",
                              ctx.remedies.offer(clean)))
    return found


class TmpfilesLine(t.NamedTuple):
    file: str
    number: int
    fields: tuple[str, ...]


def _tmpfiles_lines(view: FsView) -> list[TmpfilesLine]:
    """Every line of every ``tmpfiles.d`` file, in systemd's order: by file name, a name in an earlier directory masking later ones."""
    chosen: dict[str, str] = {}
    for directory in TMPFILES_DIRS:
        names = view.listdir(directory)
        if isinstance(names, int):
            continue
        for name in sorted(names):
            if name.endswith(".conf") and name not in chosen:
                chosen[name] = join(directory, name)
    lines = []
    for name in sorted(chosen):
        text = view.read_text(chosen[name])
        if isinstance(text, str):
            for number, line in enumerate(text.splitlines(), 1):
                fields = tuple(line.split())
                if fields and not fields[0].startswith("#"):
                    lines.append(TmpfilesLine(chosen[name], number, fields))
    return lines


def _systemd_runs(view: FsView) -> bool:
    """Whether systemd is the running init, as ``sd_booted()`` tells: ``/run/systemd/system`` is a directory."""
    entry = view.lstat("/run/systemd/system")
    return isinstance(entry, Entry) and entry.is_dir


GOOD_TMPFILES_LINE = "d /tmp/.nx 1777 root root -"


def _judge_tmpfiles(fields: tuple[str, ...]) -> str | None:
    """What is wrong with a tmpfiles.d line for /tmp/.nx, or ``None`` for the good one (``d /tmp/.nx 1777 root root -``)."""
    kind = fields[0]
    values = (list(fields[2:6]) + ["-"] * 4)[:4]
    mode, user, group, age = values
    if kind.rstrip("!") not in ("d", "D", "v", "q", "Q"):
        return f"its type {kind} does not create a directory"
    if kind.rstrip("!") in ("D", "Q"):
        return f"its type {kind} empties /tmp/.nx at every boot-time removal"
    if kind.endswith("!"):
        return "it applies only at boot"
    if mode.lstrip("~") != "1777":
        return f"its mode is {mode}, not 1777 (shared and sticky)"
    if user not in ("root", "0") or group not in ("root", "0"):
        return f"it hands /tmp/.nx to {user}:{group}, not root:root, at every boot"
    if age not in ("-", ""):
        return f"its age {age} lets systemd-tmpfiles age out the users' directories"
    return None


def check_boot_persistence(ctx: Context) -> list[Finding]:
    """A root-provisioned container on a /tmp that is emptied at boot or aged, with no (good) rule that recreates it.

    What is said is what was seen: whether /tmp is a tmpfs, which tmpfiles.d
    rules would clear or age it (file and line), whether the rule for
    /tmp/.nx is the good one (type, mode, owner, age), and whether systemd
    runs here to apply them.
    """
    view = ctx.view
    entry = view.lstat(CONTAINER)
    if isinstance(entry, int) or not entry.is_dir or entry.uid != 0:
        return []
    lines = _tmpfiles_lines(view)
    systemd = _systemd_runs(view)
    ours = [line for line in lines if len(line.fields) >= 2 and line.fields[1].rstrip("/") == CONTAINER]
    if ours:
        first = ours[0]  # systemd-tmpfiles obeys the first line for a path and ignores the rest
        problem = _judge_tmpfiles(first.fields)
        if problem is None:
            applied = "" if systemd else "; systemd does not run here, so it applies only when the host boots with systemd"
            return [Finding("boot-persistence", "ok" if systemd else "info", CONTAINER,
                            f"The tmpfiles.d rule `{' '.join(first.fields)}` in {first.file} recreates /tmp/.nx at boot{applied}.")]
        where = f"{first.file}:{first.number}"
        message = f"{where} sets up /tmp/.nx at boot, but {problem}."
        from .tmpfiles import DROP_IN, MARKER

        ours_file = view.read_text(first.file, 4096)
        if first.file == DROP_IN and isinstance(ours_file, str) and ours_file.startswith(MARKER):
            rewrite = Remedy((Step("run-nxsock", value="provision --tmpfiles --install", needs_root=True),),
                             f"Rewrites nxsock's own drop-in with the line `{GOOD_TMPFILES_LINE}`.")
            return [_advised("boot-persistence", "warn", CONTAINER, message, ctx.remedies.offer(rewrite))]
        return [Finding("boot-persistence", "warn", CONTAINER, message, None,
                        f"No command: nxsock does not edit another package's tmpfiles.d file. Change line {first.number} of "
                        f"{first.file} to `{GOOD_TMPFILES_LINE}`.")]
    mounts = view.read_text("/proc/self/mountinfo")
    tmpfs = isinstance(mounts, str) and any(
        len(f := line.split()) > 8 and f[4] == "/tmp" and "tmpfs" in line.split(" - ", 1)[-1][:10] for line in mounts.splitlines()
    )
    clearing = [line for line in lines
                if re.match(r"^[Dq]\s+/tmp/?\s", " ".join(line.fields) + " ")
                or re.match(r"^[dvq]\s+/tmp/?\s+\S+\s+\S+\s+\S+\s+\d", " ".join(line.fields))]
    install = ctx.remedies.offer(Remedy(
        (Step("run-nxsock", value="provision --tmpfiles --install", needs_root=True),),
        f"Installs a drop-in with `{GOOD_TMPFILES_LINE}`, which recreates /tmp/.nx at boot and exempts it from ageing; "
        "`nxsock provision --tmpfiles` prints it."))
    consequence = "nothing recreates /tmp/.nx: after a reboot the first user to run Nx owns it and every other user is demoted."
    if tmpfs:
        return [_advised("boot-persistence", "warn", CONTAINER, f"/tmp is a tmpfs, emptied at every boot, and {consequence}", install)]
    if not clearing:
        return []
    where, rule = f"{clearing[0].file}:{clearing[0].number}", " ".join(clearing[0].fields)
    more = f" (and {counted(len(clearing) - 1, 'more rule')})" if len(clearing) > 1 else ""
    if systemd:
        return [_advised("boot-persistence", "warn", CONTAINER,
                         f"systemd runs here and the tmpfiles.d rule `{rule}` in {where}{more} clears or ages /tmp, and {consequence}",
                         install)]
    return [Finding("boot-persistence", "info", CONTAINER,
                    f"The tmpfiles.d rule `{rule}` in {where}{more} would clear or age /tmp, but systemd does not run here "
                    "(no /run/systemd/system), so nothing applies it now.",
                    hint="If this host boots with systemd, `sudo nxsock provision --tmpfiles --install` keeps /tmp/.nx across it.")]


#: id → (group, check).  The order is the order of the report.
CHECKS: dict[str, tuple[str, t.Callable[[Context], list[Finding]]]] = {
    "environment": ("Environment", check_environment),
    "user-namespace": ("Environment", check_user_namespace),
    "tmpdir": ("Environment", check_tmpdir),
    "unix-sockets": ("Environment", check_unix_sockets),
    "container": ("Shared container", check_container),
    "levels": ("Levels", check_levels),
    "outcome": ("Outcome", check_outcome),
    "configuration": ("Outcome", check_configuration),
    "workspace-data": ("Outcome", check_workspace_data),
    "path-budget": ("Outcome", check_path_budget),
    "sockets": ("Sockets", check_sockets),
    "socket-owner": ("Sockets", check_socket_owner),
    "daemon": ("Daemon", check_daemon),
    "native-cache": ("Native cache", check_native_cache),
    "leftovers": ("Leftovers", check_leftovers),
    "boot-persistence": ("Boot", check_boot_persistence),
}

#: Finding ids each check can produce, for --list-checks and --only.
FINDING_IDS = {
    "environment": ("environment",), "user-namespace": ("user-namespace", "sandbox-daemon"), "tmpdir": ("tmpdir",),
    "unix-sockets": ("unix-sockets",), "workspace-data": ("workspace-data",),
    "container": ("container",), "levels": ("ancestry", "private-levels"), "outcome": ("outcome",),
    "configuration": ("configuration",), "path-budget": ("path-budget",), "sockets": ("sockets",),
    "socket-owner": ("socket-owner",), "daemon": ("daemon-record", "daemon-disabled", "daemon-error"),
    "native-cache": ("native-cache",), "leftovers": ("leftovers",), "boot-persistence": ("boot-persistence",),
}


def run_checks(ctx: Context, only: t.Collection[str] = ()) -> list[tuple[str, Finding]]:
    """Every check (or those whose finding ids are in *only*), as ``(group, finding)`` in report order."""
    results = []
    for name, (group, check) in CHECKS.items():
        if only and not set(FINDING_IDS[name]) & set(only):
            continue
        for finding in check(ctx):
            if not only or finding.id in only:
                results.append((group, finding))
    return results


def status_of(findings: t.Iterable[Finding], strict: bool) -> str:
    severities = {f.severity for f in findings}
    if "error" in severities:
        return "error"
    if "warn" in severities:
        return "error" if strict else "warn"
    return "ok"



def gather(resolution: Resolution, view: FsView, sandbox: str | None = None, *, pasted_by_root: bool = False) -> Context:
    """Everything the checks read besides the resolution: the cache's state and what a reset would remove.

    *pasted_by_root*: root audits for another uid (``doctor --user``) and will
    paste the remedies, so none may rest on a level that uid could swap.
    """
    from .binding_cache import find_binding, host_triple, list_cache, prune_plan, verify
    from .cleanup import reset
    from .wording import context_for

    env = resolution.environment
    remedies = context_for(resolution, view, pasted_by_root=pasted_by_root)

    def remove_command(path: str) -> str | None:
        return remedies.offer(Remedy((Step("remove", path),), "Removes the entry; Nx copies a fresh one.")).command

    binding = find_binding(env, view, host_triple(), resolution.rules)
    listing = list_cache(resolution, view, binding)
    verdict = verify(listing, remove_command) if env.nx_version is not None else None
    leftovers = len(prune_plan(listing, env.nx_version, env.uid))
    dead, _ = reset(resolution, dry_run=True)
    legacy_all, _ = reset(resolution, dry_run=True, legacy=True)
    legacy = [i for i in legacy_all if i.what.startswith("legacy")]
    sockets = survey_sockets(resolution, view)
    room = _free_bytes(resolution.native_cache.dir) if not env.simulated and resolution.native_cache.dir else None
    size = binding.size if binding is not None else None
    unix = _unix_socket_refusal() if not env.simulated else None
    return Context(resolution, view, remedies, verdict, leftovers, dead, legacy, sockets, sandbox, room, size, unix)


def _free_bytes(directory: str) -> int | None:
    """Bytes an unprivileged user may still write on the filesystem holding *directory* (or its nearest existing level)."""
    import os

    level = directory
    while True:
        try:
            stats = os.statvfs(level)
            return stats.f_bavail * stats.f_frsize
        except FileNotFoundError:
            if dirname(level) == level:
                return None
            level = dirname(level)
        except (OSError, ValueError):
            return None


def _unix_socket_refusal() -> str | None:
    """The errno name when creating an (unbound) unix socket fails here; nothing is bound or left behind."""
    import errno
    import socket

    if not hasattr(socket, "AF_UNIX"):
        return None
    try:
        socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).close()
    except OSError as exc:
        return errno.errorcode.get(exc.errno or 0, "EPERM")
    return None
