"""doctor's checks of the environment and of the chain of levels Nx establishes: variables, the container, your levels,
the outcome, configuration, path budget."""

from __future__ import annotations

import typing as t

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
        Finding("environment", "info", None, f"platform {env.platform}, uid {env.uid}, HOME {shown('HOME')}, "
                f"TMPDIR {shown('TMPDIR')}, workspace {env.workspace_root} (found by {env.workspace_source})"),
    ]
    if env.nx_version_rejected is not None:
        text, where = env.nx_version_rejected
        found.append(Finding("environment", "warn", None if where == "--nx-version" else where,
                             f"The version {quoted_value(text)} in {where} "
                             f"is not a version: nxsock names nothing after it and predicts Nx {res.rules.release}.",
                             advice=Advice(
                                 None,
                                 "Reinstall Nx (npm ci); a package.json you did not write may be hostile.",
                             )))
    elif env.nx_version is None:
        found.append(
            Finding(
                "environment",
                "info",
                env.workspace_root,
                f"No Nx is installed in this workspace; predicted as Nx {res.rules.release}, the "
                "newest release nxsock knows.",
                advice=Advice(
                    None,
                    "Run nxsock in the workspace (or pass --workspace DIR), or pass --nx-version VERSION "
                    "to audit for that release.",
                ),
            )
        )
    else:
        assumed = (
            f"; newer than any release nxsock knows, predicted as Nx {res.rules.release}" if res.layout_assumed else ""
        )
        found.append(
            Finding(
                "environment", "info", None, f"Nx {env.nx_version}, {res.layout} layout ({res.generation}){assumed}."
            )
        )
    for name in RELEVANT_VARIABLES:
        var = env.variables.get(name)
        if var is not None and name.startswith("NX_"):
            found.append(Finding("environment", "info", None, f"{name}={var.value!r} (from {var.source})"))
    markers = [m for m in SANDBOX_MARKERS if env.get(m)]
    if markers:
        found.append(Finding("environment", "info", None, f"Sandbox markers set: {', '.join(markers)}."))
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
                f"Running in a user namespace (uid_map: {mapping}): other owners, root included, show as 65534. "
                f"Nx resolves to {res.socket_root.root} ({res.socket_root.tier}).",
                advice=Advice(
                    None,
                    "An allowlist of only /tmp/.nx and ~/.nx does nothing here unless Nx resolves there.",
                ),
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
                f"{name} keeps owners as they are here: Nx resolves as it does outside.",
                advice=Advice(None, f"`nxsock paths --format {named}` prints what it must allow."),
            )
        ]
    else:
        sandboxed = resolve(env, UserNamespaceView(ctx.view, env.uid, env.gid))
        root = sandboxed.socket_root
        inside = f"Inside {name}" if named else "Inside an unprivileged sandbox (bubblewrap, srt, codex)"
        formats = named or "bwrap|srt|claude|codex-profile"
        if not root.tier:  # no directory to allow: the sandbox fails as the host does
            found.append(
                Finding(
                    "user-namespace",
                    "info",
                    None,
                    f"{inside} Nx {env.nx_version or ''} fails as well: it finds no socket directory to use.".replace(
                        "  ", " "
                    ),
                    advice=Advice(None, "Fix the error reported above first; no sandbox allowlist helps before that."),
                )
            )
            return found
        found.append(
            Finding(
                "user-namespace",
                "info",
                None,
                f"{inside} Nx {env.nx_version or ''} would resolve to {root.root} ({root.tier}).".replace("  ", " "),
                advice=Advice(
                    None,
                    f"Allow that directory and the workspace data directory {res.workspace_data.dir} in the sandbox; "
                    f"`nxsock paths --format {formats}` prints the entries."
                    + (
                    ""
                    if verdict is None or verdict.usable
                    else " That lets Nx run there, but without its daemon, which no allowlist makes "
                    "usable (see sandbox-daemon)."
                    ),
                ),
            )
        )
    if verdict is not None and not verdict.usable:
        carried = (
            ""
            if verdict.inside
            else (
                f" `nxsock paths --format {named}` carries it."
                if named
                else " `nxsock paths --format bwrap|claude|codex-profile` carries it; for srt, start it with it."
            )
        )
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
                f"TMPDIR names {failure.dir}, which does not exist; Nx 23.1.2–23.3 fails every "
                "socket path with ENOENT.",
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
    what = "a link" if entry.kind == "link" else "a directory"
    where = f"{path}," if level == path else f"{path}, beneath {level},"
    kept = [
        what
        for what, there in (("Nx's sockets", res.socket_root.root), ("its binding cache", res.native_cache.dir))
        if there is not None and (there == path or there.startswith(path + "/"))
    ]
    goes = " and ".join(kept) if kept else "Node's temporary files"
    advice = ctx.remedies.offer(configuration_fix(ctx.remedies, name, "temporary directory"))
    hint = " ".join(
        filter(None, [f"{level} is uid {entry.uid}'s: nxsock removes nothing of another user's.", advice.hint])
    )
    return [advised_finding("tmpdir", "warn", path, f"{name} names {where} {what} owned by uid {entry.uid}: "
                            f"{goes} go there, where that user chooses.", advice._replace(hint=hint))]


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
    return advised_finding(check, severity, refusal.dir, f"{describe(refusal)} {sentence}.", advice)


def _first_fix(ctx: Context, refusal: Refusal) -> Advice:
    """The fix of a refusal: the filesystem's remedy where the filesystem refuses, else the level's own."""
    found = mount_advice(ctx, refusal)
    if found is None:
        return remedy_for(refusal, ctx.remedies)
    sentence, advice = found
    return advice._replace(hint=f"{sentence}. {advice.hint or ''}".strip())


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
            advice = offer_remedy(
                ctx, [Chmod(action.path, mode=0o700)], f"Restricts {action.path} to you now, as Nx would."
            )
            if advice.remedy is None:
                advice = Advice(
                    None,
                    "Nx tightens it to 0700 itself on its next run; nxsock does not change a configured directory.",
                )
            found.append(
                advised_finding(
                    "private-levels",
                    "warn",
                    action.path,
                    f"{action.path} is open to other users; Nx will tighten it to 0700 on its next run.",
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
                "/tmp/.nx does not exist yet; Nx will create it, owned by you, 1777.",
                advice=Advice(None, f"On a shared machine provision it for everyone: {PROVISION_COMMAND}"),
            )
        ]
    if not entry.is_dir:
        return []  # not reached by Nx's chain (a configured directory is in use)
    if entry.uid == 0 and entry.mode == 0o1777:
        return [Finding("container", "ok", CONTAINER, "/tmp/.nx is provisioned for sharing: root:root-owned, 1777.")]
    if entry.uid == env.uid and env.uid != 0:
        advice = offer_remedy(
            ctx,
            [Chown(CONTAINER, owner=0, group=0, needs_root=True), Chmod(CONTAINER, mode=0o1777, needs_root=True)],
            "Hands /tmp/.nx to root, 1777, so every user can keep a private directory in it.",
        )
        from .checks_host import container_boot_rule  # a boot rule, not the first run, may have made it

        rule = container_boot_rule(ctx.view)
        made = (
            "the first user to run Nx made it"
            if rule is None
            else f"the tmpfiles.d rule at {rule.where} makes it at boot"
        )
        return [advised_finding("container", "info", CONTAINER,
                         f"/tmp/.nx is yours ({made}): normal on a single-user machine, "
                         "but every other user will be demoted to ~/.nx.", advice)]
    return [
        Finding(
            "container",
            "ok",
            CONTAINER,
            f"/tmp/.nx passes the shared-root guard for you (owner uid {entry.uid}, mode {mode_text(entry)}).",
        )
    ]


def check_outcome(ctx: Context) -> list[Finding]:
    root = ctx.resolution.socket_root
    if root.invalid is not None or root.listen_fails is not None:
        return []  # the configuration check, or the filesystem check, says it
    if root.tier is None:
        failure = root.failure
        advice = _first_fix(ctx, failure) if failure else Advice(None, "No refusal was recorded to fix.")
        return [
            advised_finding(
                "outcome",
                "error",
                failure.dir if failure else None,
                "Nx cannot establish any socket directory: every command that needs the daemon or plugins fails.",
                advice,
            )
        ]
    first = _first_fix(ctx, root.refusals[0]) if root.refusals else Advice(None, None)
    if first.remedy is not None:
        first = first._replace(
            hint=f"The fix of the first refusal above, {root.refusals[0].dir}: {first.hint or ''}".rstrip(": ")
        )
    if root.tier == "home":
        return [
            advised_finding(
                "outcome",
                "warn",
                root.root,
                f"Nx is demoted to {root.root}: the shared container could not be used.",
                first if first.remedy is not None or first.hint
                else Advice(None, "Nx works from there; nothing needs fixing."),
            )
        ]
    if root.tier == "workspace":
        note = "A sandbox allowlist for /tmp/.nx or ~/.nx does not cover this directory."
        return [
            advised_finding(
                "outcome",
                "warn",
                root.root,
                f"Nx falls back to {root.root}, inside the workspace: its paths grow with the checkout's depth.",
                first._replace(hint=" ".join(x for x in (first.hint, note) if x)),
            )
        ]
    return [Finding("outcome", "ok", root.root, f"Nx uses {root.root} ({root.tier}).")]


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
        advice = ctx.remedies.offer(
            configuration_fix(ctx.remedies, name, "socket directory"), socket_export(ctx.remedies)
        )
        found.append(
            advised_finding(
                "configuration",
                "error",
                root.refused_configured_dir,
                f"{name}={root.refused_configured_dir} is refused, so Nx drops it for the workspace fallback.",
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
            advice = ctx.remedies.offer(
                configuration_fix(ctx.remedies, name, "socket directory"), socket_export(ctx.remedies)
            )
            found.append(
                advised_finding(
                    "configuration",
                    "error",
                    root.root,
                    f"{name}={root.root} is not writable by you (owner uid {entry.uid}, mode {mode_text(entry)}): "
                    "this Nx cannot listen there, so its daemon and plugin workers fail (EACCES).",
                    advice,
                )
            )
    if data.untrusted_reason is not None:
        name = data.source.split(" ", 1)[0]
        advice = ctx.remedies.offer(configuration_fix(ctx.remedies, name, "workspace data directory"))
        found.append(advised_finding("configuration", "error" if data.refused else "warn", data.dir,
                              f"The workspace data directory is not safe: {data.untrusted_reason}.", advice))
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
                    f"The {kind} socket path is {placement.length} characters, over Nx's limit of {BUDGET}.",
                )
            )
    if found:
        advice = ctx.remedies.offer(socket_export(ctx.remedies))
        if advice.remedy is None:
            advice = Advice(
                None,
                "No shorter directory that passes every rule was found; choose one you own. " + (advice.hint or ""),
            )
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
        return "keeps no mode of its own (chmod is silently ignored)", mount
    if refusal.kind == "not-created" and (refusal.errno == "EROFS" or mount.read_only):
        return "is mounted read-only", mount
    return None


def _sockets_elsewhere(ctx: Context, why: str) -> Advice:
    """Nx's sockets moved to a directory of the user's own on a local, writable filesystem, or why nxsock has none."""
    advice = ctx.remedies.offer(socket_export(ctx.remedies))
    if advice.remedy is None:
        return Advice(
            None,
            f"{why} No directory of your own on a local, writable filesystem was found to suggest: set "
            "NX_SOCKET_DIR to one (for example under $XDG_RUNTIME_DIR).",
        )
    return advice._replace(hint=f"{why} {advice.hint or ''}".strip())


def mount_advice(ctx: Context, refusal: Refusal) -> tuple[str, Advice] | None:
    """The sentence and remedy for a level its filesystem refuses: no chmod or install that cannot work there."""
    found = mount_refusal(ctx, refusal)
    if found is None:
        return None
    why, mount = found
    sentence = f"{refusal.dir} is on {filesystem_name(mount)}, which {why}"
    return sentence, _sockets_elsewhere(ctx, "No command changes that filesystem; the sockets go elsewhere.")


def check_filesystems(ctx: Context) -> list[Finding]:
    """The filesystem under the socket directory Nx settles on: one that cannot hold unix sockets fails every listen."""
    res = ctx.resolution
    root = res.socket_root
    if root.listen_fails is None or root.root is None:
        return []
    mount = _mount_under(ctx, root.root)
    where = filesystem_name(mount) if mount is not None else "a filesystem"
    configured = root.configured[0] if root.tier == "configured" and root.configured else None
    why = ("Removing the file Nx leaves named like its socket does not help: Nx makes it again on every run; "
           "the sockets must go to a local filesystem.")
    advice = _sockets_elsewhere(ctx, why)
    if configured is not None:
        fix = ctx.remedies.offer(
            configuration_fix(ctx.remedies, configured, "socket directory"), socket_export(ctx.remedies)
        )
        advice = fix._replace(hint=f"{why} {fix.hint or ''}".strip())
    return [
        advised_finding(
            "filesystem",
            "error",
            root.root,
            f"Nx would put its sockets in {root.root} ({root.tier}), on {where}, which cannot hold unix "
            f"sockets: its listen fails ({root.listen_fails}), so its daemon and plugin workers fail.",
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
    if errno_text == "EROFS" or (mount is not None and mount.read_only):
        cause = f"{blocker} is on {filesystem_name(mount) if mount else 'a filesystem'}, mounted read-only"
    elif isinstance(entry, Entry) and entry.uid != env.uid:
        cause = f"{blocker} belongs to uid {entry.uid} (mode {mode_text(entry)})"
    elif isinstance(entry, Entry):
        cause = f"{blocker} is yours but not writable (mode {mode_text(entry)})"
    else:
        cause = f"{blocker} cannot be inspected"
    message = (f"Nx cannot create {level} ({errno_text}): {cause}. Every Nx command writes its workspace data there "
               f"({data.dir}, from {data.source}), so it fails with {errno_text}.")
    return [advised_finding("workspace-writable", "error", level, message, _data_elsewhere(ctx, sim))]


def _data_elsewhere(ctx: Context, sim: t.Any) -> Advice:
    """An ``NX_WORKSPACE_DATA_DIRECTORY`` of the user's own that Nx can create, proven by the same simulation."""
    from ..core.guards import make_parents

    suggestion = ctx.remedies.data_dir_suggestion
    if suggestion is not None and make_parents(sim, join(suggestion, "d")) is None:
        return ctx.remedies.offer(Remedy(
            (Export(variable="NX_WORKSPACE_DATA_DIRECTORY", value=suggestion),),
            f"Keeps Nx's workspace data (its caches and the daemon's files) in {suggestion}, a directory of your own "
            "on a writable filesystem (add it to your shell's profile, or the workspace's .env, to keep it)."))
    return Advice(
        None,
        "No directory of your own on a writable filesystem was found to suggest: set "
        "NX_WORKSPACE_DATA_DIRECTORY to one.",
    )
