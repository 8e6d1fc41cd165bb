"""doctor's checks of the sockets and the daemon: a policy refusing unix sockets, what listens where (read from /proc),
stale or foreign sockets, the daemon's record and the client's dial."""

from __future__ import annotations

import re

from ..core import wording
from ..core._pathname import dirname, join
from ..core.fsview import OVERFLOW_UID, Entry, FsView
from ..core.guards import Refusal
from ..core.layout import per_run_leaf
from ..core.remedy import (
    Chmod,
    NxCommand,
    NxsockCommand,
    Remedy,
    Remove,
    RemoveTree,
    RunNx,
    RunNxsock,
    Step,
    StopProcess,
)
from ..core.resolver import Resolution
from ..core.sandbox_daemon import run_inside_remedy
from ..core.terminal import format_mode
from ..core.wording import Advice, RemedyContext, describe, marker_warning, remedy_for
from .findings import SANDBOX_MARKERS, Context, Finding, Severity, advised_finding, mode_text, offer_remedy

__all__ = [
    "check_daemon",
    "check_root_leftovers",
    "check_socket_owner",
    "check_sockets",
    "check_unix_sockets",
    "reset_remedy",
    "survey_sockets",
]


def check_unix_sockets(ctx: Context) -> list[Finding]:
    """A policy (seccomp in srt and codex, Seatbelt) that refuses unix sockets outright: no directory helps."""
    if ctx.unix_sockets is None:
        return []
    from .explain import sandbox_remedy

    env = ctx.resolution.environment
    advice = ctx.remedies.offer(
        sandbox_remedy({m: v for m in SANDBOX_MARKERS if (v := env.get(m))}, env.platform, ctx.sandbox)
    )
    return [advised_finding("unix-sockets", "error", None, wording.NO_UNIX_SOCKETS.format(errno=ctx.unix_sockets),
                            advice)]


def _socket_dirs(res: Resolution, view: FsView) -> list[str]:
    dirs = []
    for placement in res.sockets.values():
        if placement.root is None:
            continue
        if placement.dir is not None:
            # The daemon's directory may come from its record: surveyed only where Nx would place it, beneath the root.
            if _beneath(placement.dir, placement.root):
                dirs.append(placement.dir)
        else:  # per-run directories: every one under the root
            names = view.listdir(placement.root)
            if not isinstance(names, int):
                dirs += [join(placement.root, n) for n in names if re.fullmatch(r"[0-9a-f]{20}", n)]
    return list(dict.fromkeys(dirs))


def _beneath(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip("/") + "/")


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
        if (
            isinstance(level, Entry)
            and level.uid != uid
            and re.fullmatch(r"[0-9a-f]{20}", directory.rsplit("/", 1)[-1])
        ):
            advice = offer_remedy(ctx, [RemoveTree(directory, needs_root=True)],
                                  wording.FOREIGN_RUN_DIRECTORY_REMOVAL.format(uid=level.uid))
            found.append(
                advised_finding(
                    "sockets",
                    "error",
                    directory,
                    wording.FOREIGN_RUN_DIRECTORY.format(directory=directory, uid=level.uid),
                    advice,
                )
            )
    for path, entry, result in ctx.sockets:
        if entry.kind != "socket":
            advice = offer_remedy(ctx, [Remove(path)], wording.NOT_A_SOCKET_REMOVAL.format(kind=entry.kind))
            message = wording.NOT_A_SOCKET.format(path=path, kind=entry.kind)
            found.append(advised_finding("sockets", "warn", path, message, advice))
            continue
        if entry.uid != uid:
            advice = offer_remedy(ctx, [Remove(path)], wording.FOREIGN_SOCKET_REMOVAL.format(uid=entry.uid))
            found.append(
                advised_finding(
                    "sockets",
                    "error",
                    path,
                    wording.FOREIGN_SOCKET.format(path=path, uid=entry.uid),
                    advice,
                )
            )
            continue
        # Only the daemon's socket is chmodded after listen (from 23.1.2); plugin and task sockets keep the umask's
        # mode, guarded by their owner-only directory.
        made = ctx.resolution.rules.socket_mode if path.endswith("/d.sock") else None
        if made is not None and entry.mode & 0o077 & ~made:
            advice = offer_remedy(ctx, [Chmod(path, mode=made)], wording.SOCKET_MODE_FIX)
            found.append(
                advised_finding(
                    "sockets",
                    "warn",
                    path,
                    wording.SOCKET_MODE.format(path=path, mode=mode_text(entry), release=ctx.resolution.rules.release,
                                               made=format(made, "04o")),
                    advice,
                )
            )
        found.append(_probe_finding(view, path, result, uid, ctx.remedies, _young(ctx)))
    return found


def _young(ctx: Context) -> bool:
    """Whether a reset would keep a dead directory for its grace minute: the fix then needs ``--force``."""
    return any(
        i.outcome == "kept" and (i.reason or "").startswith("modified less than a minute ago") for i in ctx.dead_state
    )


def reset_remedy(young: bool) -> Remedy:
    if young:
        return Remedy((RunNxsock(NxsockCommand.RESET_FORCE),), wording.RESET_FORCE_REMOVES)
    return Remedy((RunNxsock(NxsockCommand.RESET),), wording.RESET_REMOVES)


def _probe_finding(view: FsView, path: str, result: str | None, uid: int, remedies: RemedyContext | None = None,
                   young: bool = False) -> Finding:
    if remedies is None:
        from ..core.wording import plain_context

        remedies = plain_context(view, uid, uid)
    if result == "answers":
        return Finding("sockets", "ok", path, wording.SOCKET_ANSWERS.format(path=path))
    if result == "ECONNREFUSED":
        return advised_finding(
            "sockets",
            "warn",
            path,
            wording.SOCKET_STALE.format(path=path),
            remedies.offer(reset_remedy(young)),
        )
    if result == "EACCES":
        if _permits(view, path, uid):
            return Finding("sockets", "error", path, wording.SOCKET_POLICY_REFUSES.format(path=path),
                           advice=Advice(None, wording.SOCKET_POLICY_NO_COMMAND))
        steps = []
        sock = view.lstat(path)
        holder = view.lstat(dirname(path))
        if isinstance(sock, Entry) and not sock.mode & 0o200:
            steps.append(Chmod(path, mode=sock.mode | 0o200))
        if isinstance(holder, Entry) and holder.uid == uid and not holder.mode & 0o100:
            steps.append(Chmod(dirname(path), mode=holder.mode | 0o100))
        advice = (
            remedies.offer(Remedy(tuple(steps), wording.SOCKET_ACCESS_FIX))
            if steps
            else Advice(None, wording.SOCKET_LEVEL_ABOVE)
        )
        return advised_finding(
            "sockets",
            "error",
            path,
            wording.SOCKET_MODE_REFUSES.format(path=path),
            advice,
        )
    if result == "EPERM":
        return Finding(
            "sockets",
            "error",
            path,
            wording.SOCKET_SANDBOX_FORBIDS.format(path=path),
            advice=Advice(None, wording.SOCKET_SANDBOX_NO_COMMAND),
        )
    if result == "EROFS":
        return Finding("sockets", "error", path, wording.SOCKET_READ_ONLY.format(path=path),
                       advice=Advice(None, wording.SOCKET_READ_ONLY_NO_COMMAND))
    return Finding("sockets", "info", path, wording.SOCKET_PROBED.format(path=path, result=result or "not probed"))


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
            found.append(Finding("socket-owner", "info", path, wording.LISTENER_UNKNOWN.format(path=path)))
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
        found.append(
            Finding(
                "socket-owner",
                severity,
                path,
                wording.listener(pid, path, command, where, serves_other, not_recorded),
                Advice(None, wording.LISTENER_ELSEWHERE_HINT if severity == "warn" else None),
            )
        )
    return found


def _foreign_daemons(ctx: Context) -> list[tuple[int, int]]:
    """``(pid, uid)`` of Nx daemons of another uid serving this workspace: found by the socket name, which hashes the
    pid."""
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
        levels = (
            [join(ws, ".nx"), data.dir, data.daemon_dir] if data.source == "default" else [data.dir, data.daemon_dir]
        )
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
    """What ``sudo nx`` leaves: a daemon of root's serving this workspace, and root's levels where Nx writes the
    daemon's files."""
    daemons = _foreign_daemons(ctx)
    foreign = _foreign_workspace_levels(ctx)
    if not daemons and not foreign:
        return []
    view = ctx.view
    # root's daemon is a leftover of sudo nx and is stopped; another user's is theirs to stop, never killed for you
    steps: list[Step] = [StopProcess(pid=pid, owner=uid, needs_root=True) for pid, uid in daemons if uid == 0]
    said = []
    if daemons:
        said.append("; ".join(wording.foreign_daemon(pid, uid) for pid, uid in daemons))
    if foreign:
        top = foreign[0]
        entry = view.lstat(top)
        owner = entry.uid if isinstance(entry, Entry) else None
        steps.append(RemoveTree(top, needs_root=True))
        mode = format_mode(entry.mode) if isinstance(entry, Entry) else "?"
        said.append(wording.foreign_daemon_level(top, owner, mode))
    owners = {uid for _, uid in daemons} | {
        e.uid for e in (view.lstat(level) for level in foreign) if isinstance(e, Entry)
    }
    message = wording.root_leftovers(owners == {0}, said)
    changes = wording.root_leftovers_removal(bool(steps) and steps[0].verb == "stop-process")
    others = [wording.others_daemon(pid, uid) for pid, uid in daemons if uid != 0]
    advice = offer_remedy(ctx, steps, changes) if steps else Advice(None, wording.others_daemons_no_command(others))
    if others and advice.remedy is not None:
        advice = advice._replace(hint=wording.others_daemons_also(advice.hint, others))
    path = foreign[0] if foreign else ctx.resolution.workspace_data.daemon_dir
    return [advised_finding("daemon-record", "error", path, message, advice)]


def check_daemon(ctx: Context) -> list[Finding]:
    res = ctx.resolution
    view = ctx.view
    found = check_root_leftovers(ctx)
    record = res.daemon_record
    if record is not None and not found:
        if record.problem:
            advice = offer_remedy(ctx, [Remove(record.file)], wording.RECORD_UNREADABLE_REMOVAL)
            found.append(advised_finding("daemon-record", "warn", record.file,
                                         wording.RECORD_PROBLEM.format(problem=record.problem), advice))
        else:
            if record.alive is False:
                found.append(
                    advised_finding(
                        "daemon-record",
                        "warn",
                        record.file,
                        wording.RECORD_NOT_RUNNING.format(pid=record.pid),
                        ctx.remedies.offer(reset_remedy(_young(ctx))),
                    )
                )
            if record.nx_version and res.environment.nx_version and record.nx_version != res.environment.nx_version:
                stop = Remedy((RunNx(NxCommand.DAEMON_STOP),), wording.DAEMON_STOP_RESTARTS)
                found.append(
                    advised_finding(
                        "daemon-record",
                        "warn",
                        record.file,
                        wording.RECORD_OTHER_VERSION.format(running=record.nx_version,
                                                            installed=res.environment.nx_version),
                        ctx.remedies.offer(stop),
                    )
                )
            if record.connect not in (None, "answers"):
                found.append(advised_finding("daemon-record", "warn", record.socket_path,
                                      wording.RECORD_SOCKET_SILENT.format(socket=record.socket_path,
                                                                          result=record.connect),
                                      ctx.remedies.offer(reset_remedy(_young(ctx)))))
            elif record.connect == "answers" and record.client_refusal is not None:
                found.append(_client_refuses(ctx, record.pid, record.socket_path, record.client_refusal))
            if not found:
                found.append(
                    Finding(
                        "daemon-record",
                        "ok",
                        record.socket_path,
                        wording.RECORD_ANSWERS.format(pid=record.pid),
                    )
                )
    marker = join(res.workspace_data.daemon_dir, "disabled")
    reason = view.read_text(marker, 4096)
    if isinstance(reason, str):
        lines = _text_lines(reason, 12)
        advice = offer_remedy(ctx, [Remove(marker)], wording.MARKER_REMOVAL,
                              Remedy((RunNx(NxCommand.RESET),), wording.NX_RESET_CLEARS))
        found.append(
            advised_finding(
                "daemon-disabled",
                "warn",
                marker,
                wording.daemon_disabled(bool(lines)),
                advice,
                lines,
            )
        )
    log = join(res.workspace_data.daemon_dir, "daemon-error.log")
    text = view.read_text(log, 1 << 16)
    if isinstance(text, str) and text.strip():
        error, context = _daemon_error(text)
        found.append(Finding("daemon-error", "info", log,
                             wording.LAST_DAEMON_ERROR.format(kind=_classify(text), error=error),
                             advice=Advice(None, wording.WHOLE_ERROR_IN.format(log=log)), detail=context))
    return found


def _client_refuses(ctx: Context, pid: int | None, socket: str | None, refusal: Refusal) -> Finding:
    """The daemon answers a plain connect, but Nx's own client (24.0.5 and later) will not dial it from here."""
    res = ctx.resolution
    verdict = res.user_namespace_sandbox
    message = wording.client_refuses(pid, res.environment.nx_version, describe(refusal))
    if verdict is not None and verdict.inside and not verdict.usable and refusal.uid == OVERFLOW_UID:
        advice = ctx.remedies.offer(run_inside_remedy(marker_warning(verdict)))
        return advised_finding("daemon-record", "warn", socket, message, advice)
    return advised_finding("daemon-record", "warn", socket, message, remedy_for(refusal, ctx.remedies))


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
    context = [
        line for line in _text_lines(quoted or "\n".join(lines[1:]), 1000) if not line.startswith("More information:")
    ]
    return error, tuple(context[-5:])


def _classify(text: str) -> str:
    for pattern, kind in (
        (r"EACCES|EPERM", "refused"),
        (r"EADDRINUSE", "in-use"),
        (r"maximum socket length", "too-long"),
        (r"ENOENT", "missing"),
        (r"inotify", "inotify"),
    ):
        if re.search(pattern, text):
            return wording.DAEMON_ERROR_KINDS[kind]
    return wording.DAEMON_ERROR_KINDS["other"]
