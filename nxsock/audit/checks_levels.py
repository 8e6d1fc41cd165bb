"""doctor's checks of the environment and of the chain of levels Nx establishes: variables, the container, your levels,
the outcome, configuration, path budget."""

from __future__ import annotations

import typing as t

from ..core import wording
from ..core._pathname import dirname, join
from ..core._pathname import resolve as resolve_path
from ..core.environment import RELEVANT_VARIABLES
from ..core.fsview import Entry, UserNamespaceView, errno_name
from ..core.guards import Refusal
from ..core.layout import BUDGET, CONTAINER
from ..core.mounts import Mount, filesystem_name
from ..core.remedy import Chmod, Chown, Export, NxsockCommand, Remedy, RunNxsock
from ..core.resolver import resolve
from ..core.sandbox_daemon import inside_user_namespace, run_inside_remedy
from ..core.wording import (
    PROVISION_COMMAND,
    Advice,
    configuration_fix,
    describe,
    describe_invalid,
    marker_warning,
    remedy_for,
    remedy_for_invalid,
    sandbox_statement,
    socket_export,
    umask_cause,
)
from .findings import (
    SANDBOX_MARKERS,
    Context,
    Finding,
    Severity,
    advised_finding,
    mode_text,
    offer_remedy,
    refusal_finding,
)


def quoted_value(text: str, limit: int = 60) -> str:
    """A value read from disk as one short line, quoted: controls, C1 and format characters shown as escapes."""
    from ..core.terminal import printable

    return '"' + printable(text[:limit]) + '"' + ("…" if len(text) > limit else "")


__all__ = [
    "check_configuration",
    "check_container",
    "check_environment",
    "check_filesystems",
    "check_levels",
    "check_outcome",
    "check_path_budget",
    "check_tmpdir",
    "check_user_namespace",
    "check_workspace_writable",
    "mount_advice",
]


def check_environment(ctx: Context) -> list[Finding]:
    env = ctx.resolution.environment
    res = ctx.resolution
    def shown(name: str) -> str:
        value = env.get(name)
        return "unset" if value is None else repr(value) if not value or value != value.strip() else value

    found = [
        Finding("environment", "info", None, wording.ENVIRONMENT.format(
            platform=env.platform, uid=env.uid, home=shown("HOME"), tmpdir=shown("TMPDIR"),
            workspace=env.workspace_root, found_by=env.workspace_source)),
    ]
    if env.nx_version_rejected is not None:
        text, where = env.nx_version_rejected
        found.append(Finding("environment", "warn", None if where == "--nx-version" else where,
                             wording.VERSION_NOT_A_VERSION.format(text=quoted_value(text), where=where,
                                                                  release=res.rules.release),
                             advice=Advice(None, wording.VERSION_NOT_A_VERSION_HINT)))
    elif env.nx_version is None:
        found.append(
            Finding(
                "environment",
                "info",
                env.workspace_root,
                wording.NO_NX_INSTALLED.format(release=res.rules.release),
                advice=Advice(None, wording.NO_NX_INSTALLED_HINT),
            )
        )
    else:
        assumed = res.rules.release if res.layout_assumed else None
        found.append(Finding("environment", "info", None,
                             wording.nx_installed(env.nx_version, res.layout, res.generation, assumed)))
    for name in RELEVANT_VARIABLES:
        var = env.variables.get(name)
        if var is not None and name.startswith("NX_"):
            found.append(Finding("environment", "info", None,
                                 wording.VARIABLE_SET.format(name=name, value=repr(var.value), source=var.source)))
    markers = [m for m in SANDBOX_MARKERS if env.get(m)]
    if markers:
        found.append(Finding("environment", "info", None, wording.sandbox_markers_set(markers)))
    return found


def check_user_namespace(ctx: Context) -> list[Finding]:
    """Inside bwrap/srt/codex every foreign owner is uid 65534: where Nx really goes, and whether its client can use the
    daemon."""
    from ..core.sandbox_formats import FORMATS

    res = ctx.resolution
    env = res.environment
    verdict = res.user_namespace_sandbox
    mapping = inside_user_namespace(ctx.view)
    named = ctx.sandbox
    row = FORMATS.get(named or "")
    name = row.called if row is not None else named
    found = []
    if mapping is not None:
        found.append(
            Finding(
                "user-namespace",
                "info",
                None,
                wording.IN_USER_NAMESPACE.format(mapping=mapping, root=res.socket_root.root, tier=res.socket_root.tier),
                advice=Advice(None, wording.IN_USER_NAMESPACE_HINT),
            )
        )
    elif env.platform != "linux" or env.uid == 0:
        return []
    elif row is not None and not row.kind(env.platform)[0]:
        return [
            Finding(
                "user-namespace",
                "info",
                None,
                wording.SANDBOX_KEEPS_OWNERS.format(name=name),
                advice=Advice(None, wording.PATHS_FORMAT_PRINTS.format(format=named)),
            )
        ]
    else:
        sandboxed = resolve(env, UserNamespaceView(ctx.view, env.uid, env.gid))
        root = sandboxed.socket_root
        inside = wording.inside_sandbox(name if named else None)
        formats = named or "bwrap|srt|claude|codex-profile"
        if not root.tier:  # no directory to allow: the sandbox fails as the host does
            found.append(
                Finding(
                    "user-namespace",
                    "info",
                    None,
                    wording.sandbox_fails_too(inside, env.nx_version),
                    advice=Advice(None, wording.SANDBOX_FIX_FIRST),
                )
            )
            return found
        found.append(
            Finding(
                "user-namespace",
                "info",
                None,
                wording.sandbox_resolves(inside, env.nx_version, root.root, root.tier),
                advice=Advice(None, wording.sandbox_allow(res.workspace_data.dir, formats,
                                                          verdict is None or verdict.usable)),
            )
        )
    if verdict is not None and not verdict.usable:
        carried = "" if verdict.inside else wording.sandbox_carries_no_daemon(named)
        statement = sandbox_statement(verdict, env.nx_version, name if named else None)
        hint = marker_warning(verdict) + carried
        if verdict.inside:
            found.append(
                advised_finding("sandbox-daemon", "warn", None, statement, ctx.remedies.offer(run_inside_remedy(hint)))
            )
        elif named:
            advice = offer_remedy(ctx, [RunNxsock(NxsockCommand.paths_format(named))], hint)
            found.append(advised_finding("sandbox-daemon", "warn", None, statement, advice))
        else:
            found.append(Finding("sandbox-daemon", "info", None, statement, Advice(None, hint)))
    return found


def check_tmpdir(ctx: Context) -> list[Finding]:
    res = ctx.resolution
    failure = res.socket_root.failure
    if (
        res.rules.tmpdir_enoent_fails
        and failure is not None
        and failure.kind == "not-inspectable"
        and failure.errno == "ENOENT"
    ):
        return [
            advised_finding(
                "tmpdir",
                "error",
                failure.dir,
                wording.TMPDIR_MISSING.format(directory=failure.dir),
                remedy_for(failure, ctx.remedies),
            )
        ]
    return _foreign_tmpdir(ctx)


def _foreign_tmpdir(ctx: Context) -> list[Finding]:
    """A temporary directory (``os.tmpdir()``: ``TMPDIR``, ``TMP``, ``TEMP``) at or beneath another user's link or
    directory: what goes into it goes where that user says."""
    res = ctx.resolution
    env = res.environment
    name = next((n for n in ("TMPDIR", "TMP", "TEMP") if env.nonempty(n)), None)
    if name is None or env.platform == "win32":
        return []
    path = resolve_path(env.node_tmpdir(), env.cwd)
    level, entry = _first_foreign_level(ctx, path, env.uid)
    if level is None or entry is None:
        return []
    kept = [
        what
        for what, there in ((wording.NX_SOCKETS, res.socket_root.root), (wording.BINDING_CACHE, res.native_cache.dir))
        if there is not None and (there == path or there.startswith(path + "/"))
    ]
    advice = ctx.remedies.offer(configuration_fix(ctx.remedies, name, "temporary directory"))
    hint = wording.foreign_tmpdir_hint(level, entry.uid, advice.hint)
    message = wording.foreign_tmpdir(name, path, level, entry.kind == "link", entry.uid, kept)
    return [advised_finding("tmpdir", "warn", path, message, advice._replace(hint=hint))]


def _first_foreign_level(ctx: Context, path: str, uid: int) -> tuple[str | None, Entry | None]:
    """The highest level of *path* (``/`` excluded) that is neither *uid*'s nor root's, with its entry."""
    parts = [p for p in path.split("/") if p]
    for depth in range(1, len(parts) + 1):
        level = "/" + "/".join(parts[:depth])
        entry = ctx.view.lstat(level)
        if isinstance(entry, int):
            return None, None
        if entry.uid not in (uid, 0) and entry.kind in ("link", "dir"):
            return level, entry
        if entry.kind != "dir":
            return None, None  # a link of yours or root's, or not a directory: the resolver's own checks speak of it
    return None, None


def _level_of(refusal: Refusal) -> str:
    """Which finding a refusal is: the container itself, a level above the tiers, or a private level."""
    if refusal.dir == CONTAINER:
        return "container"
    if refusal.kind in ("foreign-ancestor", "peer-writable-not-sticky"):
        return "ancestry"
    return "private-levels"


def _level_finding(check: str, refusal: Refusal, severity: Severity, ctx: Context) -> Finding:
    """A refusal as a finding; where the filesystem itself refuses the level, it is named and the sockets go
    elsewhere."""
    found = mount_advice(ctx, refusal)
    if found is None:
        return refusal_finding(check, refusal, severity, ctx)
    sentence, advice = found
    return advised_finding(check, severity, refusal.dir, wording.refused_on_filesystem(describe(refusal), sentence),
                           advice)


def _first_fix(ctx: Context, refusal: Refusal) -> Advice:
    """The fix of a refusal: the filesystem's remedy where the filesystem refuses, else the level's own."""
    found = mount_advice(ctx, refusal)
    if found is None:
        return remedy_for(refusal, ctx.remedies)
    sentence, advice = found
    return advice._replace(hint=wording.reason_then(sentence + ".", advice.hint))


def check_levels(ctx: Context) -> list[Finding]:
    """Every refusal met on the way, at the level it was met, severe when Nx ends up with nothing."""
    res = ctx.resolution
    severity: Severity = "warn" if res.socket_root.tier is not None else "error"
    found = []
    for refusal in res.socket_root.refusals:
        if refusal == res.socket_root.failure or refusal.dir == CONTAINER:
            continue  # the failure is the outcome's; the container's own refusal is the container check's
        found.append(_level_finding(_level_of(refusal), refusal, severity, ctx))
    for placement in res.sockets.values():
        for refusal in placement.refusals:
            found.append(_level_finding("private-levels", refusal, "warn", ctx))
    for action in res.actions:
        if action.verb == "tighten":
            advice = offer_remedy(ctx, [Chmod(action.path, mode=0o700)], wording.TIGHTEN_NOW.format(path=action.path))
            if advice.remedy is None:
                advice = Advice(None, wording.NX_TIGHTENS_ITSELF)
            found.append(
                advised_finding(
                    "private-levels",
                    "warn",
                    action.path,
                    wording.OPEN_LEVEL.format(path=action.path),
                    advice,
                )
            )
    return found


def check_container(ctx: Context) -> list[Finding]:
    entry = ctx.view.lstat(CONTAINER)
    res = ctx.resolution
    env = res.environment
    refused = [r for r in res.socket_root.refusals if r.dir == CONTAINER]
    if refused:
        return [_level_finding("container", refused[0], "warn" if res.socket_root.tier else "error", ctx)]
    if isinstance(entry, int):
        return [
            Finding(
                "container",
                "ok",
                CONTAINER,
                wording.CONTAINER_NOT_YET,
                advice=Advice(None, wording.PROVISION_FOR_EVERYONE.format(command=PROVISION_COMMAND)),
            )
        ]
    if not entry.is_dir:
        return []  # not reached by Nx's chain (a configured directory is in use)
    if entry.uid == 0 and entry.mode == 0o1777:
        return [Finding("container", "ok", CONTAINER, wording.CONTAINER_PROVISIONED)]
    if entry.uid == env.uid and env.uid != 0:
        advice = offer_remedy(
            ctx,
            [Chown(CONTAINER, owner=0, group=0, needs_root=True), Chmod(CONTAINER, mode=0o1777, needs_root=True)],
            wording.CONTAINER_HAND_TO_ROOT,
        )
        from .checks_host import container_boot_rule  # a boot rule, not the first run, may have made it

        rule = container_boot_rule(ctx.view)
        return [advised_finding("container", "info", CONTAINER,
                                wording.container_yours(None if rule is None else rule.where), advice)]
    return [
        Finding(
            "container",
            "ok",
            CONTAINER,
            wording.CONTAINER_PASSES.format(uid=entry.uid, mode=mode_text(entry)),
        )
    ]


def check_outcome(ctx: Context) -> list[Finding]:
    root = ctx.resolution.socket_root
    if root.invalid is not None or root.listen_fails is not None:
        return []  # the configuration check, or the filesystem check, says it
    if root.tier is None:
        failure = root.failure
        advice = _first_fix(ctx, failure) if failure else Advice(None, wording.NO_REFUSAL_RECORDED)
        return [
            advised_finding(
                "outcome",
                "error",
                failure.dir if failure else None,
                wording.NO_SOCKET_DIRECTORY,
                advice,
            )
        ]
    first = _first_fix(ctx, root.refusals[0]) if root.refusals else Advice(None, None)
    if first.remedy is not None:
        first = first._replace(hint=wording.first_refusal_fix(root.refusals[0].dir, first.hint))
    if root.tier == "home":
        return [
            advised_finding(
                "outcome",
                "warn",
                root.root,
                wording.DEMOTED_HOME.format(root=root.root),
                first if first.remedy is not None or first.hint else Advice(None, wording.NOTHING_NEEDS_FIXING),
            )
        ]
    if root.tier == "workspace":
        note = wording.ALLOWLIST_MISSES_WORKSPACE
        return [
            advised_finding(
                "outcome",
                "warn",
                root.root,
                wording.DEMOTED_WORKSPACE.format(root=root.root),
                first._replace(hint=" ".join(x for x in (first.hint, note) if x)),
            )
        ]
    return [Finding("outcome", "ok", root.root, wording.OUTCOME.format(root=root.root, tier=root.tier))]


def check_configuration(ctx: Context) -> list[Finding]:
    root = ctx.resolution.socket_root
    data = ctx.resolution.workspace_data
    found = []
    if root.invalid is not None:
        inv = root.invalid
        found.append(
            advised_finding(
                "configuration",
                "error",
                inv.dir,
                describe_invalid(inv.reason, inv.dir, inv.variable),
                remedy_for_invalid(inv.variable, ctx.remedies),
            )
        )
    if root.refused_configured_dir is not None:
        name = root.configured[0] if root.configured else "NX_SOCKET_DIR"
        advice = _configured_socket_dir_advice(ctx, name)
        found.append(
            advised_finding(
                "configuration",
                "error",
                root.refused_configured_dir,
                wording.CONFIGURED_REFUSED.format(name=name, directory=root.refused_configured_dir),
                advice,
            )
        )
    if (
        not ctx.resolution.rules.current_layout
        and root.tier == "configured"
        and root.root is not None
        and root.configured
    ):
        entry = ctx.view.stat(root.root)  # legacy Nx checks nothing: it listens there or its daemon and workers die
        uid = ctx.resolution.environment.uid
        if isinstance(entry, Entry) and not (entry.mode & (0o200 if entry.uid == uid else 0o002)):
            name = root.configured[0]
            advice = _configured_socket_dir_advice(ctx, name)
            found.append(
                advised_finding(
                    "configuration",
                    "error",
                    root.root,
                    wording.NOT_WRITABLE_LEGACY.format(name=name, directory=root.root, uid=entry.uid,
                                                       mode=mode_text(entry)),
                    advice,
                )
            )
    if data.untrusted_reason is not None:
        name = data.source.split(" ", 1)[0]
        advice = ctx.remedies.offer(configuration_fix(ctx.remedies, name, "workspace data directory"))
        found.append(advised_finding("configuration", "error" if data.refused else "warn", data.dir,
                                     wording.DATA_DIR_UNSAFE.format(reason=data.untrusted_reason), advice))
    return found


def check_path_budget(ctx: Context) -> list[Finding]:
    found = []
    for kind, placement in ctx.resolution.sockets.items():
        if placement.too_long:
            found.append(
                Finding(
                    "path-budget",
                    "error",
                    placement.pattern,
                    wording.SOCKET_PATH_TOO_LONG.format(kind=kind, length=placement.length, budget=BUDGET),
                )
            )
    if found:
        advice = ctx.remedies.offer(socket_export(ctx.remedies))
        if advice.remedy is None:
            advice = Advice(None, wording.no_shorter_directory(advice.hint))
        found = [f._replace(advice=advice) for f in found]
    return found


def _mount_under(ctx: Context, path: str) -> Mount | None:
    """The mount *path* (or its nearest existing level) lies on, as this view's mount table shows it."""
    from ..core.guards import canonical_dir
    from ..core.mounts import MountReader

    for level in ctx.resolution.mounts:
        if level.path == path:
            return level.mount
    return MountReader(ctx.view.read_text).of(canonical_dir(ctx.view, path))


def mount_refusal(ctx: Context, refusal: Refusal) -> tuple[str, Mount] | None:
    """Why the filesystem itself refuses *refusal*'s level — it keeps no mode, or it is read-only — with that mount."""
    mount = _mount_under(ctx, refusal.dir)
    if mount is None:
        return None
    if refusal.kind in ("not-tightenable", "peer-writable-not-sticky") and not mount.keeps_modes:
        return wording.FILESYSTEM_KEEPS_NO_MODE, mount
    if refusal.kind == "not-created" and (refusal.errno == "EROFS" or mount.read_only):
        return wording.FILESYSTEM_READ_ONLY, mount
    return None


def _sockets_elsewhere(ctx: Context, why: str) -> Advice:
    """Nx's sockets moved to a directory of the user's own on a local, writable filesystem, or why nxsock has none."""
    advice = ctx.remedies.offer(socket_export(ctx.remedies))
    if advice.remedy is None:
        return Advice(None, wording.sockets_elsewhere_none(why))
    return advice._replace(hint=wording.reason_then(why, advice.hint))


def mount_advice(ctx: Context, refusal: Refusal) -> tuple[str, Advice] | None:
    """The sentence and remedy for a level its filesystem refuses: no chmod or install that cannot work there."""
    found = mount_refusal(ctx, refusal)
    if found is None:
        return None
    why, mount = found
    sentence = wording.LEVEL_ON_FILESYSTEM.format(directory=refusal.dir, filesystem=filesystem_name(mount), why=why)
    return sentence, _sockets_elsewhere(ctx, wording.FILESYSTEM_UNCHANGED)


def check_filesystems(ctx: Context) -> list[Finding]:
    """The filesystem under the socket directory Nx settles on: one that cannot hold unix sockets fails every listen."""
    res = ctx.resolution
    root = res.socket_root
    if root.listen_fails is None or root.root is None:
        return []
    mount = _mount_under(ctx, root.root)
    where = filesystem_name(mount) if mount is not None else wording.A_FILESYSTEM
    configured = root.configured[0] if root.tier == "configured" and root.configured else None
    why = wording.SOCKET_FILE_RETURNS
    advice = _sockets_elsewhere(ctx, why)
    if configured is not None:
        fix = ctx.remedies.offer(
            configuration_fix(ctx.remedies, configured, "socket directory"), socket_export(ctx.remedies)
        )
        advice = fix._replace(hint=wording.reason_then(why, fix.hint))
    return [
        advised_finding(
            "filesystem",
            "error",
            root.root,
            wording.NO_UNIX_SOCKETS_THERE.format(root=root.root, tier=root.tier, filesystem=where,
                                                 errno=root.listen_fails),
            advice,
        )
    ]


def check_workspace_writable(ctx: Context) -> list[Finding]:
    """Whether Nx can create its workspace data directory (its caches, the daemon's files) at all: an unwritable or
    read-only workspace, another uid's, or a read-only configured directory fails every command with EACCES/EROFS."""
    from ..core.guards import Simulation, make_parents

    res = ctx.resolution
    env = res.environment
    if env.platform == "win32" or env.uid == 0:
        return []
    data = res.workspace_data
    if env.workspace_source == "current directory" and data.source == "default":
        return []  # no workspace here (doctor run from / or a home): no Nx command writes in this directory
    sim = Simulation(ctx.view, env.uid, env.gid, env.groups, env.umask)
    failed = make_parents(sim, data.daemon_dir)
    if failed is None:
        return []
    level, code = failed
    errno_text = errno_name(code)
    if errno_text == "EEXIST":
        return []
    blocker = dirname(level)
    entry = ctx.view.stat(blocker)
    mount = _mount_under(ctx, blocker)
    yours = False  # the level is the user's own: a umask, not an owner, may be what refuses
    if errno_text == "EROFS" or (mount is not None and mount.read_only):
        cause = wording.BLOCKER_READ_ONLY.format(blocker=blocker,
                                                 filesystem=filesystem_name(mount) if mount else wording.A_FILESYSTEM)
    elif isinstance(entry, Entry) and entry.uid != env.uid:
        cause = wording.BLOCKER_FOREIGN.format(blocker=blocker, uid=entry.uid, mode=mode_text(entry))
    elif isinstance(entry, Entry):
        cause = wording.BLOCKER_NOT_WRITABLE.format(blocker=blocker, mode=mode_text(entry))
        yours = True
    elif env.umask & 0o700:
        cause = wording.BLOCKER_UMASK.format(blocker=blocker, made=format(0o777 & ~env.umask, "04o"),
                                             umask=format(env.umask, "04o"))
        yours = True
    else:
        cause = wording.BLOCKER_UNINSPECTABLE.format(blocker=blocker)
    message = wording.DATA_DIR_NOT_CREATED.format(level=level, errno=errno_text, cause=cause, directory=data.dir,
                                                  source=data.source)
    umask = umask_cause(ctx.remedies, level) if yours else None
    advice = ctx.remedies.offer(umask) if umask is not None else _data_elsewhere(ctx, sim)
    return [advised_finding("workspace-writable", "error", level, message, advice)]


def _data_elsewhere(ctx: Context, sim: t.Any) -> Advice:
    """An ``NX_WORKSPACE_DATA_DIRECTORY`` of the user's own that Nx can create, proven by the same simulation."""
    from ..core.guards import make_parents

    suggestion = ctx.remedies.data_dir_suggestion
    if suggestion is not None and make_parents(sim, join(suggestion, "d")) is None:
        return ctx.remedies.offer(Remedy(
            (Export(variable="NX_WORKSPACE_DATA_DIRECTORY", value=suggestion),),
            wording.DATA_DIR_ELSEWHERE.format(directory=suggestion)))
    return Advice(None, wording.NO_DATA_DIR_SUGGESTION)


def _configured_socket_dir_advice(ctx: Context, name: str) -> Advice:
    """A configured socket directory Nx cannot use: the setting changed where it was made, else a directory of yours."""
    return ctx.remedies.offer(configuration_fix(ctx.remedies, name, "socket directory"), socket_export(ctx.remedies))
