"""doctor's checks of the workspace's own directories (one another user made), the binding cache, the leftovers reset
would remove, and whether /tmp/.nx survives a reboot (tmpfiles.d)."""

from __future__ import annotations

import re
import typing as t

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
from ..core.terminal import counted
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
                f"{foreign[0][0]} belongs to uid {foreign[0][1]}, and {links[0]} is a link on the way to it.",
                Advice(
                    None,
                    "No safe command: rm, chown or chmod could act on what the link points at. Look at it; "
                    "remove the link itself (not its target) if you did not make it.",
                ),
            )
        ]
    first, owner = foreign[0]
    whose = "root" if owner == 0 else f"uid {owner}"
    if data.source != "default" and first == data.dir:
        name = data.source.split(" ", 1)[0]
        advice = ctx.remedies.offer(configuration_fix(ctx.remedies, name, "workspace data directory"))
        return [
            advised_finding(
                "workspace-data",
                "error",
                first,
                f"{first} ({data.source}) belongs to {whose}; Nx cannot write there.",
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
                f"{dot_nx} belongs to uid {dot_nx_owner}, not to you or root.",
                Advice(
                    None,
                    "No safe command: another user's directory is never handed to you. Look at what it holds, "
                    "then move it aside as root.",
                ),
            )
        ]
    advice = offer_remedy(
        ctx,
        steps,
        "Left by running Nx as another user (`sudo nx`): Nx's caches are removed and rebuilt, as after `nx reset`; "
        f"{dot_nx} itself, which may hold files you commit, is handed back to you rather than removed.",
    )
    return [advised_finding("workspace-data", "error", first,
                     f"{first} belongs to {whose}, so Nx cannot write its caches or daemon files there "
                     "(EACCES, \"os error 13\").", advice)]


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
                f"The task cache {cache.dir} ({cache.source}) is not safe: {cache.untrusted_reason}. Nx {release} "
                "uses it only because NX_ALLOW_INSECURE_DIRECTORIES=true; another user could plant task outputs "
                "there that Nx restores.",
                Advice(None, "Point it at a directory only you can write, then unset NX_ALLOW_INSECURE_DIRECTORIES."),
            )
        ]
    message = (f"The task cache {cache.dir} ({cache.source}) is not safe: {cache.untrusted_reason}. Nx {release} stops "
               "every command with UntrustedDataDirectoryError before it runs anything.")
    if cache.variable is None:
        return [
            Finding(
                "cache-directory",
                "error",
                cache.dir,
                message,
                Advice(
                    None,
                    "No command: nxsock does not edit nx.json. Change cacheDirectory there to a directory only you, "
                    "root or the workspace's owner can write (a path inside the workspace is trusted like it), "
                    "or remove it to use Nx's default.",
                ),
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
        seen.append(f"{listeners[0]} answers from a process in a pid namespace nxsock cannot see from here "
                    "(another container, or the host)")
    message = ("Nx's socket root is shared beyond this pid namespace: " + "; and ".join(seen) + ". Pids repeat across "
               "pid namespaces and Nx names its per-run directory after the workspace path and the pid, so two "
               "containers with the same checkout path take each other's sockets: the second unlinks the first's "
               "task socket fp<pid>-0.sock and listens in its place (or fails with listen EADDRINUSE).")
    # Not NX_DAEMON=false: the task sockets (fp<pid>-<n>.sock) of `nx run` collide with the daemon off too
    # (tests/oracle/test_machine_lifecycle_collision.py).
    advice = ctx.remedies.offer(socket_export(ctx.remedies))
    hint = ((advice.hint + " ") if advice.hint else "") + (
        "What works: a private /tmp per container (docker run --tmpfs /tmp; an emptyDir volume at /tmp in "
        "Kubernetes) or a per-container NX_SOCKET_DIR. NX_DAEMON=false is not enough: it spares the daemon's "
        "socket, not the sockets of Nx's tasks.")
    return [Finding("shared-tmp", "warn", root.root, message, advice._replace(hint=hint))]


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
            Finding("native-cache", "info", cache.root, f"Nx loads the binding in place: {cache.bypass_reason}.")
        )
    for refusal in cache.refusals:
        refused = refusal_finding("native-cache", refusal, "warn", ctx, "cache")
        found.append(refused._replace(message="Nx loads the binding in place, uncached: " + refused.message))
    level = ctx.view.lstat(cache.dir) if cache.dir and cache.bypass_reason is None and not cache.refusals else None
    if (
        cache.dir
        and isinstance(level, Entry)
        and level.is_dir
        and level.uid == ctx.resolution.environment.uid
        and level.mode & 0o700 != 0o700
    ):
        advice = offer_remedy(
            ctx, [Chmod(cache.dir, mode=0o700)], "Gives you back write access to your own cache directory."
        )
        found.append(
            advised_finding(
                "native-cache",
                "warn",
                cache.dir,
                f"{cache.dir} is yours but mode {mode_text(level)}: Nx cannot copy its binding into it (EACCES) "
                "and loads it in place.",
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
        skip = Remedy((Export(variable="NX_SKIP_NATIVE_FILE_CACHE", value="true"),),
                      "Nx then loads its binding in place and stops trying to copy it.")
        prune = (
            Remedy((RunNxsock(NxsockCommand.CACHE_PRUNE),), "Frees what other versions and interrupted copies hold.")
            if ctx.cache_leftovers
            else None
        )
        found.append(
            advised_finding(
                "native-cache",
                "warn",
                cache.dir,
                f"Only {ctx.cache_room} bytes are free where Nx copies its binding ({cache.dir}); "
                f"the copy needs {binding}, "
                "so it fails with ENOSPC on every run and Nx loads the binding in place.",
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


#: What Nx prints when its binding does not load: ``native-bindings.js`` catches the failure and exports nothing.
NOT_A_CONSTRUCTOR = "every Nx command then fails with \"TypeError: WorkspaceContext is not a constructor\""


def _loadability_finding(ctx: Context) -> Finding | None:
    """A binding cache or a binding on a ``noexec`` mount, judged as the release in hand loads it."""
    loads = ctx.loadability
    if loads is None or loads.state == "ok":
        return None
    cache, release = ctx.resolution.native_cache, ctx.resolution.rules.release
    if loads.state == "cache-noexec":
        message = (
            f"{cache.dir} lies on {loads.cache_mount}, mounted noexec: Nx {release} copies its binding there but "
            f"cannot load the copy (ERR_DLOPEN_FAILED, \"failed to map segment from shared object\"), and "
            f"{NOT_A_CONSTRUCTOR}."
        )
        if loads.binding_mount is None:
            skip = Remedy((Export(variable="NX_SKIP_NATIVE_FILE_CACHE", value="true"),),
                          "Nx then loads its binding in place, from node_modules, whose mount allows it.")
            return advised_finding("native-cache", "error", cache.dir, message, ctx.remedies.offer(skip))
        return Finding(
            "native-cache",
            "error",
            cache.dir,
            message,
            Advice(
                None,
                f"No safe command: node_modules is on {loads.binding_mount}, mounted noexec too, so loading in place "
                "fails as well. Point NX_NATIVE_FILE_CACHE_DIRECTORY at a directory of your own on a filesystem "
                "mounted exec, or remount one of them with exec (as root).",
            ),
        )
    if loads.state == "binding-noexec":
        how = "it does not cache it here" if cache.bypass_reason is not None else "its cached copy cannot load either"
        hint = ("No safe command: nxsock does not remount filesystems or reinstall packages. Install node_modules on a "
                f"filesystem mounted exec, or remount {loads.binding_mount} with exec (as root)")
        if cache.bypass_reason is not None and "NX_SKIP_NATIVE_FILE_CACHE" in cache.bypass_reason:
            hint += "; or unset NX_SKIP_NATIVE_FILE_CACHE, so Nx loads its copy from a cache mounted exec"
        return Finding("native-cache", "error", cache.dir or loads.binding_mount,
                       f"Nx's binding lies on {loads.binding_mount}, mounted noexec, and Nx loads it in place ({how}): "
                       f"{NOT_A_CONSTRUCTOR}.", Advice(None, hint + "."))
    return Finding(
        "native-cache",
        "info",
        cache.dir,
        f"{cache.dir} lies on {loads.cache_mount}, mounted noexec: Nx {release} cannot load its copy there and "
        "loads the binding in place, from node_modules, instead.",
        advice=Advice(None, "`export NX_SKIP_NATIVE_FILE_CACHE=true` spares it the copy it cannot use."),
    )


def check_leftovers(ctx: Context) -> list[Finding]:
    found = []
    dead = [i for i in ctx.dead_state if i.outcome == "removed" and i.what != "daemon record"]
    if dead:
        found.append(advised_finding("leftovers", "warn", None, wording.dead_state_found(len(dead)),
                              ctx.remedies.offer(reset_remedy(False))))
    if ctx.cache_leftovers:
        prune = Remedy(
            (RunNxsock(NxsockCommand.CACHE_PRUNE),),
            "Removes other versions' entries, interrupted copies and untrusted entries of yours.",
        )
        found.append(advised_finding("leftovers", "warn", ctx.resolution.native_cache.root,
                              wording.cache_leftovers_found(ctx.cache_leftovers),
                              ctx.remedies.offer(prune)))
    # For Nx ≤ 23.1.1 the temp-directory layout is the current one, not a leftover.
    legacy = [i for i in ctx.legacy_state if i.outcome == "removed"] if ctx.resolution.rules.current_layout else []
    if legacy:
        clean = Remedy(
            (RunNxsock(NxsockCommand.RESET_LEGACY),),
            "Removes your leftovers of Nx ≤ 23.1.1 from the temp directory, by descriptor.",
        )
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


def _judge_other_line(line: TmpfilesLine) -> str | None:
    """What a line beside the obeyed one does to /tmp/.nx or a level below it, or ``None`` when it does no harm."""
    kind, below = line.type, line.path != CONTAINER
    mode, user, group, age = (line.field(i) for i in (2, 3, 4, 5))
    if kind in ("x", "X"):
        return None  # an exclusion from cleaning: what keeps the users' directories
    if kind in ("r", "R"):
        return f"it removes {line.path} at boot"
    if age not in ("-", "") and kind in CREATING_TYPES | {"e"}:
        return f"its age {age} lets systemd-tmpfiles age out {line.path} and what Nx keeps in it"
    if kind in ("z", "Z") and not below:
        if mode.lstrip("~:") not in ("-", "1777") or user not in ("-", "root", "0") or group not in ("-", "root", "0"):
            return f"it sets {line.path} to {mode} {user}:{group} at every boot, not root:root 1777"
        return None
    if below and kind in CREATING_TYPES | {"z", "Z"}:
        segment = line.path[len(CONTAINER) + 1:].split("/", 1)[0]
        if kind in ("d", "v", "q", "z", "Z") and mode.lstrip("~:") in ("0700", "700", "-") and user in ("-", segment):
            return None  # the user's own private level, as Nx would make it
        return (f"it makes {line.path} {mode} {user}:{group} at boot: a level Nx makes and guards itself "
                "(private to its user, 0700), which it then refuses")
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
    when = "" if systemd else " (systemd does not run here: it applies when the host boots with systemd)"
    if first is not None:
        problem = _judge_tmpfiles(first.fields)
        if problem is None:
            applied = (
                "" if systemd else "; systemd does not run here, so it applies only when the host boots with systemd"
            )
            found.append(
                Finding(
                    "boot-persistence",
                    "ok" if systemd else "info",
                    CONTAINER,
                    f"The tmpfiles.d rule `{' '.join(first.fields)}` in {first.file} recreates "
                    f"/tmp/.nx at boot{applied}.",
                )
            )
        else:
            message = (
                f"{first.where} makes /tmp/.nx at boot (`{' '.join(first.fields)}`), but {problem}: every user but "
                f"its owner is demoted to ~/.nx or refused, again at every boot{when}."
            )
            def marked(path: str) -> bool:
                text = view.read_text(path, 4096)
                return isinstance(text, str) and text.startswith(MARKER)

            ours = first.file in (DROP_IN, EARLY_DROP_IN) and marked(first.file)
            winning = drop_in_for(obeyed, marked)
            if ours or winning is not None:
                target = first.file if ours else winning
                changes = (f"Rewrites nxsock's own drop-in with the line `{GOOD_TMPFILES_LINE}`" if ours else
                           f"Installs {target} with the line `{GOOD_TMPFILES_LINE}`; systemd-tmpfiles reads it before "
                           f"{first.file} and obeys the first line for a path, so this one wins")
                install = Remedy((RunNxsock(NxsockCommand.PROVISION_TMPFILES, needs_root=True),),
                                 changes + ", and applies it now (root:root 1777).")
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
                        Advice(
                            None,
                            f"No command: {first.file} is read before any drop-in nxsock could write, and nxsock "
                            f"does not edit another package's file. Change line {first.number} there to "
                            f"`{GOOD_TMPFILES_LINE}`.",
                        ),
                    )
                )
    for line in obeyed:
        if line is first:
            continue
        problem = _judge_other_line(line)
        if problem is not None:
            found.append(Finding("boot-persistence", "warn", line.path,
                                 f"{line.where} (`{' '.join(line.fields)}`): {problem}{when}.", Advice(
                                     None,
                                     f"No command: nxsock does not edit tmpfiles.d files. Delete line {line.number} of "
                                     f"{line.file}, or make it `x {line.path}` to keep it from ageing.",
                                 )))
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
        f"Installs a drop-in with `{GOOD_TMPFILES_LINE}`, which recreates /tmp/.nx at boot and exempts it from ageing; "
        "`nxsock provision --tmpfiles` prints it."))
    consequence = (
        "nothing recreates /tmp/.nx: after a reboot the first user to run Nx owns it and every other user is demoted."
    )
    if tmpfs:
        return [
            advised_finding(
                "boot-persistence",
                "warn",
                CONTAINER,
                f"/tmp is a tmpfs, emptied at every boot, and {consequence}",
                install,
            )
        ]
    if not clearing:
        return []
    where, rule = f"{clearing[0].file}:{clearing[0].number}", " ".join(clearing[0].fields)
    more = f" (and {counted(len(clearing) - 1, 'more rule')})" if len(clearing) > 1 else ""
    if systemd:
        return [
            advised_finding(
                "boot-persistence",
                "warn",
                CONTAINER,
                f"systemd runs here and the tmpfiles.d rule `{rule}` in {where}{more} clears or "
                f"ages /tmp, and {consequence}",
                install,
            )
        ]
    return [
        Finding(
            "boot-persistence",
            "info",
            CONTAINER,
            f"The tmpfiles.d rule `{rule}` in {where}{more} would clear or age /tmp, but systemd does not run here "
            "(no /run/systemd/system), so nothing applies it now.",
            advice=Advice(
                None,
                f"If this host boots with systemd, `{install.command}` keeps /tmp/.nx across it."
                if install.command
                else None,
            ),
        )
    ]


def _host_words(triple: str) -> str:
    """``linux-x64-musl`` → ``linux, x64, musl``: the platform, architecture and C library the binding is built for."""
    parts = triple.split("-")
    libc = {"gnu": "glibc", "musl": "musl", "gnueabihf": "glibc (armhf)", "msvc": "MSVC"}
    return ", ".join([*parts[:2], *(libc.get(p, p) for p in parts[2:])])


def _instead_words(triple: str, others: t.Sequence[str]) -> str:
    """What the other ``@nx/nx-*`` packages installed say about how the tree was made."""
    names = ", ".join(others[:5]) + (f" and {len(others) - 5} more" if len(others) > 5 else "")
    here = triple.split("-")
    foreign = [o.removeprefix("@nx/nx-") for o in others]
    if any(f.split("-")[:2] == here[:2] for f in foreign):
        other_libc = "glibc" if here[-1] == "musl" else "musl"
        return (f" Installed instead: {names}, the {other_libc} build, which does not load here "
                "(a node_modules installed on another distribution, or one that resolved the wrong C library).")
    if any(f.startswith("win32-") for f in foreign) and here[0] == "linux":
        return (
            f" Installed instead: {names}: this node_modules was installed from Windows (a checkout shared with WSL)."
        )
    return (
        f" Installed instead: {names}: this node_modules was installed on another host (copied, or a mounted volume)."
    )


def check_binding(ctx: Context) -> list[Finding]:
    """The binding this host needs (``@nx/nx-<triple>``), missing: Nx cannot load any binding, and every command
    fails."""
    presence = ctx.binding_presence
    if presence is None or presence.state != "missing" or presence.triple is None or presence.package is None:
        return []
    triple, package = presence.triple, presence.package
    message = (f"Nx needs {package} on this host ({_host_words(triple)}), and neither it nor nx.{triple}.node beside "
               f"node_modules/nx is installed: {NOT_A_CONSTRUCTOR}.")
    if presence.others:
        message += _instead_words(triple, presence.others)
    lockfile = presence.lockfile
    if lockfile is not None and presence.locked and presence.others:
        message += f" {lockfile} lists it: an install on this host restores it."
    elif lockfile is not None and presence.locked:
        message += (
            f" {lockfile} lists it: the install skipped optional dependencies (--omit=optional, "
            "--no-optional, --ignore-optional)."
        )
    elif lockfile is not None and presence.locked is False:
        message += (
            f" {lockfile} does not list it: it was written on a host that resolved only its own platform's package."
        )
    version = ctx.resolution.environment.nx_version
    if version is None:
        return [
            Finding(
                "binding",
                "error",
                presence.nx_dir,
                message,
                Advice(
                    None,
                    f"No command: the installed Nx version is unknown. Install {package} at the "
                    "version of node_modules/nx.",
                ),
            )
        ]
    if presence.manager == "yarn-berry":
        return [
            Finding(
                "binding",
                "error",
                presence.nx_dir,
                message,
                Advice(
                    None,
                    "No command: yarn 2+ installs only the architectures its supportedArchitectures names. Add this "
                    "host's to .yarnrc.yml, remove node_modules, and run `yarn install`; or `yarn add "
                    f"-D {package}@{version}`.",
                ),
            )
        ]
    what = (
        "Installs the one package, leaving package.json and the lockfile as they are"
        if presence.manager == "npm"
        else f"Reinstalls node_modules from {lockfile}, optional dependencies included"
    )
    advice = offer_remedy(ctx, [InstallPackage(PackageManager(presence.manager), f"{package}@{version}")],
                          f"{what}; nxsock never runs a package manager itself.")
    return [advised_finding("binding", "error", presence.nx_dir, message, advice)]
