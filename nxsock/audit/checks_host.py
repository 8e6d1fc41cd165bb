"""doctor's checks of the workspace's own directories (one another user made), the binding cache, the leftovers reset
would remove, and whether /tmp/.nx survives a reboot (tmpfiles.d)."""

from __future__ import annotations

import re

from ..act.tmpfiles import (
    CREATING_TYPES,
    DROP_IN,
    EARLY_DROP_IN,
    MARKER,
    TMPFILES_DIRS,
    TmpfilesLine,
    container_lines,
    drop_in_for,
    tmpfiles_lines,
)
from ..core import wording
from ..core._pathname import dirname, join
from ..core.fsview import Entry, FsView
from ..core.layout import CONTAINER
from ..core.remedy import (
    Chmod,
    Chown,
    Export,
    InstallPackage,
    NxsockCommand,
    PackageManager,
    Remedy,
    RemoveTree,
    RunNxsock,
    Step,
)
from ..core.wording import Advice, configuration_fix, socket_export
from .binding_cache import entry_removal
from .checks_sockets import reset_remedy
from .findings import Context, Finding, Severity, advised_finding, mode_text, offer_remedy, refusal_finding

__all__ = [
    "GOOD_TMPFILES_LINE",
    "TMPFILES_DIRS",
    "TmpfilesLine",
    "check_binding",
    "check_boot_persistence",
    "check_cache_directory",
    "check_leftovers",
    "check_native_cache",
    "check_shared_tmp",
    "check_workspace_data",
    "container_boot_rule",
]




def check_workspace_data(ctx: Context) -> list[Finding]:
    """Nx's directories in the workspace made by another user (``sudo nx``): Nx cannot write its caches or daemon
    files."""
    data = ctx.resolution.workspace_data
    env = ctx.resolution.environment
    dot_nx = dirname(data.dir)
    levels = (
        [dot_nx, data.dir, join(dot_nx, "cache"), data.daemon_dir]
        if data.source == "default"
        else [data.dir, data.daemon_dir]
    )
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
        return [
            Finding(
                "workspace-data",
                "error",
                foreign[0][0],
                wording.WORKSPACE_DATA_BEHIND_LINK.format(directory=foreign[0][0], uid=foreign[0][1], link=links[0]),
                Advice(None, wording.WORKSPACE_DATA_LINK_NO_COMMAND),
            )
        ]
    first, owner = foreign[0]
    whose = wording.owner_word(owner)
    if data.source != "default" and first == data.dir:
        name = data.source.split(" ", 1)[0]
        advice = ctx.remedies.offer(configuration_fix(ctx.remedies, name, "workspace data directory"))
        return [
            advised_finding(
                "workspace-data",
                "error",
                first,
                wording.CONFIGURED_DATA_DIR_FOREIGN.format(directory=first, source=data.source, owner=whose),
                advice,
            )
        ]
    removed = [d for d, _ in foreign if d != dot_nx or data.source != "default"]
    removed = [d for d in removed if not any(d.startswith(r + "/") for r in removed)]
    steps: list[Step] = [RemoveTree(d, needs_root=True) for d in removed]
    dot_nx_owner = next((u for d, u in foreign if d == dot_nx), None) if data.source == "default" else None
    if dot_nx_owner == 0:  # root's, from `sudo nx` in your own workspace; another user's is never handed to you
        steps.append(Chown(dot_nx, owner=env.uid, group=env.gid, needs_root=True))
    elif dot_nx_owner is not None:
        return [
            Finding(
                "workspace-data",
                "error",
                dot_nx,
                wording.DOT_NX_FOREIGN.format(directory=dot_nx, uid=dot_nx_owner),
                Advice(None, wording.DOT_NX_FOREIGN_NO_COMMAND),
            )
        ]
    advice = offer_remedy(ctx, steps, wording.WORKSPACE_DATA_RESET.format(dot_nx=dot_nx))
    return [advised_finding("workspace-data", "error", first,
                            wording.WORKSPACE_DATA_FOREIGN.format(directory=first, owner=whose), advice)]


def check_cache_directory(ctx: Context) -> list[Finding]:
    """A configured task cache the release refuses at start-up: Nx 24.0.6 stops every command before it does
    anything."""
    cache = ctx.resolution.cache_directory
    if cache is None or cache.untrusted_reason is None:
        return []
    release = ctx.resolution.rules.release
    if not cache.refused:
        return [
            Finding(
                "cache-directory",
                "warn",
                cache.dir,
                wording.TASK_CACHE_ALLOWED.format(directory=cache.dir, source=cache.source,
                                                  reason=cache.untrusted_reason, release=release),
                Advice(None, wording.TASK_CACHE_ALLOWED_HINT),
            )
        ]
    message = wording.TASK_CACHE_REFUSED.format(directory=cache.dir, source=cache.source,
                                                reason=cache.untrusted_reason, release=release)
    if cache.variable is None:
        return [
            Finding(
                "cache-directory",
                "error",
                cache.dir,
                message,
                Advice(None, wording.TASK_CACHE_IN_NX_JSON),
            )
        ]
    advice = ctx.remedies.offer(configuration_fix(ctx.remedies, cache.variable, "task cache"))
    return [advised_finding("cache-directory", "error", cache.dir, message, advice)]


def _foreign_listeners(ctx: Context, root: str) -> list[str]:
    """Sockets in the per-run directories of *root* whose listener lives in a pid namespace invisible from here."""
    from ..core.containers import peer_outside

    found: list[str] = []
    names = ctx.view.listdir(root)
    for name in sorted(names) if isinstance(names, list) else []:
        leaf = join(root, name)
        entry = ctx.view.lstat(leaf)
        if not isinstance(entry, Entry) or not entry.is_dir or entry.is_link or len(name) != 20:
            continue
        inner = ctx.view.listdir(leaf)
        for sock in sorted(inner)[:8] if isinstance(inner, list) else []:
            if sock.endswith(".sock") and peer_outside(join(leaf, sock)):
                found.append(join(leaf, sock))
        if len(found) >= 3:
            break
    return found


def check_shared_tmp(ctx: Context) -> list[Finding]:
    """A socket root shared beyond this pid namespace: daemons of two containers with one checkout path collide.

    Nx names a daemon's per-run directory after the workspace path and the
    daemon's pid, and pids repeat across pid namespaces. Seen two ways: the
    socket root lies on a mount bound into this container, or a socket in it
    answers from a process this pid namespace has no number for.
    """
    verdict = ctx.resolution.container
    root = ctx.resolution.socket_root
    if verdict is None or root.root is None or root.tier == "configured":
        return []
    listeners = _foreign_listeners(ctx, root.root)
    if not verdict.shared_socket_root and not listeners:
        return []
    seen = [verdict.shared_reason] if verdict.shared_reason else []
    if listeners:
        seen.append(wording.FOREIGN_LISTENER.format(socket=listeners[0]))
    message = wording.shared_socket_root(seen)
    # Not NX_DAEMON=false: the task sockets (fp<pid>-<n>.sock) of `nx run` collide with the daemon off too
    # (tests/oracle/test_machine_lifecycle_collision.py).
    advice = ctx.remedies.offer(socket_export(ctx.remedies))
    advice = advice._replace(hint=wording.shared_tmp_hint(advice.hint))
    return [Finding("shared-tmp", "warn", root.root, message, advice)]


def check_native_cache(ctx: Context) -> list[Finding]:
    cache = ctx.resolution.native_cache
    verdict = ctx.cache_verdict
    severity_for: dict[str, Severity] = {
        "fresh": "ok",
        "stale": "warn",
        "untrusted": "warn",
        "missing": "info",
        "bypassed": "info",
        "no-binding": "info",
    }
    found = []
    if cache.bypass_reason is not None and not cache.refusals:
        found.append(
            Finding("native-cache", "info", cache.root, wording.BINDING_IN_PLACE.format(reason=cache.bypass_reason))
        )
    for refusal in cache.refusals:
        refused = refusal_finding("native-cache", refusal, "warn", ctx, "cache")
        found.append(refused._replace(message=wording.BINDING_UNCACHED + refused.message))
    level = ctx.view.lstat(cache.dir) if cache.dir and cache.bypass_reason is None and not cache.refusals else None
    if (
        cache.dir
        and isinstance(level, Entry)
        and level.is_dir
        and level.uid == ctx.resolution.environment.uid
        and level.mode & 0o700 != 0o700
    ):
        advice = offer_remedy(ctx, [Chmod(cache.dir, mode=0o700)], wording.CACHE_DIR_MODE_FIX)
        found.append(
            advised_finding(
                "native-cache",
                "warn",
                cache.dir,
                wording.CACHE_DIR_NOT_WRITABLE.format(directory=cache.dir, mode=mode_text(level)),
                advice,
            )
        )
    loadable = _loadability_finding(ctx)
    if loadable is not None:
        found.append(loadable)
        if loadable.severity == "error":
            return found  # what else the cache holds does not matter while no binding loads
    if verdict is None or verdict.state in ("bypassed",):
        return found
    binding = ctx.cache_binding_size
    if verdict.state == "missing" and ctx.cache_room is not None and binding is not None and ctx.cache_room < binding:
        skip = Remedy((Export(variable="NX_SKIP_NATIVE_FILE_CACHE", value="true"),), wording.SKIP_CACHE_STOPS_COPYING)
        prune = (
            Remedy((RunNxsock(NxsockCommand.CACHE_PRUNE),), wording.PRUNE_FREES)
            if ctx.cache_leftovers
            else None
        )
        found.append(
            advised_finding(
                "native-cache",
                "warn",
                cache.dir,
                wording.CACHE_NO_ROOM.format(room=ctx.cache_room, directory=cache.dir, needed=binding),
                ctx.remedies.offer(skip, prune),
            )
        )
        return found
    severity = severity_for.get(verdict.state, "info")
    if severity in ("warn", "error") and verdict.entry:
        advice = ctx.remedies.offer(entry_removal(verdict.entry))
        found.append(advised_finding("native-cache", severity, verdict.entry, verdict.message, advice))
    else:
        found.append(Finding("native-cache", severity, verdict.entry or cache.dir, verdict.message))
    return found


def _loadability_finding(ctx: Context) -> Finding | None:
    """A binding cache or a binding on a ``noexec`` mount, judged as the release in hand loads it."""
    loads = ctx.loadability
    if loads is None or loads.state == "ok":
        return None
    cache, release = ctx.resolution.native_cache, ctx.resolution.rules.release
    if loads.state == "cache-noexec":
        message = wording.CACHE_NOEXEC.format(directory=cache.dir, mount=loads.cache_mount, release=release)
        if loads.binding_mount is None:
            skip = Remedy((Export(variable="NX_SKIP_NATIVE_FILE_CACHE", value="true"),),
                          wording.SKIP_CACHE_LOADS_IN_PLACE)
            return advised_finding("native-cache", "error", cache.dir, message, ctx.remedies.offer(skip))
        return Finding(
            "native-cache",
            "error",
            cache.dir,
            message,
            Advice(None, wording.BOTH_NOEXEC_NO_COMMAND.format(mount=loads.binding_mount)),
        )
    if loads.state == "binding-noexec":
        skipping = cache.bypass_reason is not None and "NX_SKIP_NATIVE_FILE_CACHE" in cache.bypass_reason
        return Finding("native-cache", "error", cache.dir or loads.binding_mount,
                       wording.binding_noexec(loads.binding_mount, cached=cache.bypass_reason is None),
                       Advice(None, wording.binding_noexec_no_command(loads.binding_mount, skipping)))
    return Finding(
        "native-cache",
        "info",
        cache.dir,
        wording.CACHE_NOEXEC_IN_PLACE.format(directory=cache.dir, mount=loads.cache_mount, release=release),
        advice=Advice(None, wording.SKIP_CACHE_SPARES_THE_COPY),
    )


def check_leftovers(ctx: Context) -> list[Finding]:
    found = []
    dead = [i for i in ctx.dead_state if i.outcome == "removed" and i.what != "daemon record"]
    if dead:
        found.append(advised_finding("leftovers", "warn", None, wording.dead_state_found(len(dead)),
                              ctx.remedies.offer(reset_remedy(False))))
    if ctx.cache_leftovers:
        prune = Remedy((RunNxsock(NxsockCommand.CACHE_PRUNE),), wording.PRUNE_REMOVES)
        found.append(advised_finding("leftovers", "warn", ctx.resolution.native_cache.root,
                              wording.cache_leftovers_found(ctx.cache_leftovers),
                              ctx.remedies.offer(prune)))
    # For Nx ≤ 23.1.1 the temp-directory layout is the current one, not a leftover.
    legacy = [i for i in ctx.legacy_state if i.outcome == "removed"] if ctx.resolution.rules.current_layout else []
    if legacy:
        clean = Remedy((RunNxsock(NxsockCommand.RESET_LEGACY),), wording.RESET_LEGACY_REMOVES)
        found.append(advised_finding("leftovers", "warn", None, wording.legacy_leftovers_found(len(legacy)),
                              ctx.remedies.offer(clean)))
    return found


def _systemd_runs(view: FsView) -> bool:
    """Whether systemd is the running init, as ``sd_booted()`` tells: ``/run/systemd/system`` is a directory."""
    entry = view.lstat("/run/systemd/system")
    return isinstance(entry, Entry) and entry.is_dir


GOOD_TMPFILES_LINE = "d /tmp/.nx 1777 root root -"


def _judge_tmpfiles(fields: tuple[str, ...]) -> str | None:
    """What is wrong with a tmpfiles.d line for /tmp/.nx, or ``None`` for the good one (``d /tmp/.nx 1777 root root
    -``)."""
    kind = fields[0]
    values = (list(fields[2:6]) + ["-"] * 4)[:4]
    mode, user, group, age = values
    if kind.rstrip("!") not in ("d", "D", "v", "q", "Q"):
        return wording.TMPFILES_NOT_A_DIRECTORY.format(kind=kind)
    if kind.rstrip("!") in ("D", "Q"):
        return wording.TMPFILES_EMPTIES.format(kind=kind)
    if kind.endswith("!"):
        return wording.TMPFILES_BOOT_ONLY
    if mode.lstrip("~") != "1777":
        return wording.TMPFILES_MODE.format(mode=mode)
    if user not in ("root", "0") or group not in ("root", "0"):
        return wording.TMPFILES_OWNER.format(user=user, group=group)
    if age not in ("-", ""):
        return wording.TMPFILES_AGE.format(age=age)
    return None


def _judge_other_line(line: TmpfilesLine) -> str | None:
    """What a line beside the obeyed one does to /tmp/.nx or a level below it, or ``None`` when it does no harm."""
    kind, below = line.type, line.path != CONTAINER
    mode, user, group, age = (line.field(i) for i in (2, 3, 4, 5))
    if kind in ("x", "X"):
        return None  # an exclusion from cleaning: what keeps the users' directories
    if kind in ("r", "R"):
        return wording.TMPFILES_REMOVES.format(path=line.path)
    if age not in ("-", "") and kind in CREATING_TYPES | {"e"}:
        return wording.TMPFILES_AGES_LEVEL.format(age=age, path=line.path)
    if kind in ("z", "Z") and not below:
        if mode.lstrip("~:") not in ("-", "1777") or user not in ("-", "root", "0") or group not in ("-", "root", "0"):
            return wording.TMPFILES_SETS_CONTAINER.format(path=line.path, mode=mode, user=user, group=group)
        return None
    if below and kind in CREATING_TYPES | {"z", "Z"}:
        segment = line.path[len(CONTAINER) + 1:].split("/", 1)[0]
        if kind in ("d", "v", "q", "z", "Z") and mode.lstrip("~:") in ("0700", "700", "-") and user in ("-", segment):
            return None  # the user's own private level, as Nx would make it
        return wording.TMPFILES_MAKES_LEVEL.format(path=line.path, mode=mode, user=user, group=group)
    return None


def container_boot_rule(view: FsView) -> TmpfilesLine | None:
    """The tmpfiles.d line systemd-tmpfiles obeys for /tmp/.nx itself, or ``None``: what made it at boot."""
    return next((line for line in container_lines(tmpfiles_lines(view))
                 if line.path == CONTAINER and line.type in CREATING_TYPES), None)


def _judge_boot_rules(ctx: Context, systemd: bool) -> list[Finding] | None:
    """Every obeyed tmpfiles.d line for /tmp/.nx and below, judged; ``None`` where no line names them."""
    view = ctx.view
    obeyed = container_lines(tmpfiles_lines(view))
    if not obeyed:
        return None
    first = next((line for line in obeyed if line.path == CONTAINER and line.type in CREATING_TYPES), None)
    found = []
    when = wording.boot_rule_applies(systemd)
    if first is not None:
        problem = _judge_tmpfiles(first.fields)
        if problem is None:
            found.append(
                Finding(
                    "boot-persistence",
                    "ok" if systemd else "info",
                    CONTAINER,
                    wording.boot_rule_good(" ".join(first.fields), first.file, systemd),
                )
            )
        else:
            message = wording.BOOT_RULE_BAD.format(where=first.where, fields=" ".join(first.fields), problem=problem,
                                                   when=when)
            def marked(path: str) -> bool:
                text = view.read_text(path, 4096)
                return isinstance(text, str) and text.startswith(MARKER)

            ours = first.file in (DROP_IN, EARLY_DROP_IN) and marked(first.file)
            winning = drop_in_for(obeyed, marked)
            if ours or winning is not None:
                target = first.file if ours else winning
                install = Remedy((RunNxsock(NxsockCommand.PROVISION_TMPFILES, needs_root=True),),
                                 wording.tmpfiles_install_changes(GOOD_TMPFILES_LINE, ours, target, first.file))
                found.append(
                    advised_finding("boot-persistence", "warn", CONTAINER, message, ctx.remedies.offer(install))
                )
            else:
                found.append(
                    Finding(
                        "boot-persistence",
                        "warn",
                        CONTAINER,
                        message,
                        Advice(None, wording.BOOT_RULE_FIRST_NO_COMMAND.format(
                            file=first.file, number=first.number, good_line=GOOD_TMPFILES_LINE)),
                    )
                )
    for line in obeyed:
        if line is first:
            continue
        problem = _judge_other_line(line)
        if problem is not None:
            found.append(Finding(
                "boot-persistence", "warn", line.path,
                wording.BOOT_RULE_OTHER.format(where=line.where, fields=" ".join(line.fields), problem=problem,
                                               when=when),
                Advice(None, wording.BOOT_RULE_OTHER_NO_COMMAND.format(number=line.number, file=line.file,
                                                                       path=line.path))))
    return found


def check_boot_persistence(ctx: Context) -> list[Finding]:
    """Every tmpfiles.d rule for /tmp/.nx and below, judged; else a root-provisioned container on a /tmp emptied at
    boot.

    What is said is what was seen: the rules systemd-tmpfiles obeys (its
    precedence: files by name, /etc over /run over /usr/lib, the first line
    for a path), whether /tmp is a tmpfs, which rules would clear or age it
    (file and line), and whether systemd runs here to apply them.
    """
    view = ctx.view
    systemd = _systemd_runs(view)
    judged = _judge_boot_rules(ctx, systemd)
    if judged is not None:
        return judged
    entry = view.lstat(CONTAINER)
    if isinstance(entry, int) or not entry.is_dir or entry.uid != 0:
        return []
    lines = tmpfiles_lines(view)
    mounts = view.read_text("/proc/self/mountinfo")
    tmpfs = isinstance(mounts, str) and any(
        len(f := line.split()) > 8 and f[4] == "/tmp" and "tmpfs" in line.split(" - ", 1)[-1][:10]
        for line in mounts.splitlines()
    )
    clearing = [line for line in lines
                if re.match(r"^[Dq]\s+/tmp/?\s", " ".join(line.fields) + " ")
                or re.match(r"^[dvq]\s+/tmp/?\s+\S+\s+\S+\s+\S+\s+\d", " ".join(line.fields))]
    install = ctx.remedies.offer(Remedy(
        (RunNxsock(NxsockCommand.PROVISION_TMPFILES, needs_root=True),),
        wording.TMPFILES_DROP_IN_INSTALLS.format(good_line=GOOD_TMPFILES_LINE)))
    if tmpfs:
        return [
            advised_finding(
                "boot-persistence",
                "warn",
                CONTAINER,
                wording.TMP_IS_TMPFS,
                install,
            )
        ]
    if not clearing:
        return []
    where, rule = f"{clearing[0].file}:{clearing[0].number}", " ".join(clearing[0].fields)
    more = len(clearing) - 1
    if systemd:
        return [
            advised_finding(
                "boot-persistence",
                "warn",
                CONTAINER,
                wording.tmp_cleared_by_rule(rule, where, more),
                install,
            )
        ]
    return [
        Finding(
            "boot-persistence",
            "info",
            CONTAINER,
            wording.tmp_rule_not_applied(rule, where, more),
            advice=Advice(None, wording.BOOT_WITH_SYSTEMD.format(command=install.command) if install.command else None),
        )
    ]


def check_binding(ctx: Context) -> list[Finding]:
    """The binding this host needs (``@nx/nx-<triple>``), missing: Nx cannot load any binding, and every command
    fails."""
    presence = ctx.binding_presence
    if presence is None or presence.state != "missing" or presence.triple is None or presence.package is None:
        return []
    triple, package = presence.triple, presence.package
    message = wording.BINDING_MISSING.format(package=package, host=wording.host_words(triple), triple=triple)
    if presence.others:
        message += wording.installed_instead(triple, presence.others)
    lockfile = presence.lockfile
    if lockfile is not None and presence.locked and presence.others:
        message += wording.LOCKFILE_RESTORES.format(lockfile=lockfile)
    elif lockfile is not None and presence.locked:
        message += wording.LOCKFILE_SKIPPED_OPTIONAL.format(lockfile=lockfile)
    elif lockfile is not None and presence.locked is False:
        message += wording.LOCKFILE_LACKS_IT.format(lockfile=lockfile)
    version = ctx.resolution.environment.nx_version
    if version is None:
        return [
            Finding(
                "binding",
                "error",
                presence.nx_dir,
                message,
                Advice(None, wording.BINDING_VERSION_UNKNOWN.format(package=package)),
            )
        ]
    if presence.manager == "yarn-berry":
        return [
            Finding(
                "binding",
                "error",
                presence.nx_dir,
                message,
                Advice(None, wording.BINDING_YARN_BERRY.format(package=package, version=version)),
            )
        ]
    advice = offer_remedy(ctx, [InstallPackage(PackageManager(presence.manager), f"{package}@{version}")],
                          wording.binding_install_changes(presence.manager == "npm", lockfile))
    return [advised_finding("binding", "error", presence.nx_dir, message, advice)]
