"""Inside a private mount and pid namespace, as root: the real Nx before, the printed remedy applied, the real Nx after.

Run by ``tests/oracle/test_remedies_real.py`` once the failure state is built.  It
prints one JSON document: what Nx did in the failure state, what ``doctor``
said and which remedy it printed, how each part of that remedy ran (as root
where it says ``sudo``, as the user otherwise), where ``paths`` then predicts
the socket root, where the real daemon then put its socket, whether a real
client command was answered by it, and what ``doctor`` says afterwards.

With ``branches`` (``hand``, ``fix``, ``fix_root``), the failure state is built
and the real Nx fails in it once; each way of applying the remedy then starts
from that same state (its trees restored from a snapshot, its own processes
kept), and the document holds each branch's part under ``branches``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
import typing as t

# The configuration comes on the command line; imported (pytest's doctest collection), it is empty.
CONFIG: dict[str, t.Any] = json.loads(sys.argv[1]) if __name__ == "__main__" else {}
UID: int = CONFIG.get("uid", -1)
WS: str = CONFIG.get("workspace", "/")
NX_BIN = os.path.join(CONFIG.get("nx", "/"), "node_modules", ".bin", "nx")
PYTHON: str = CONFIG.get("python", sys.executable)
PYLIB: str = CONFIG.get("pylib", "")
TIMEOUT = 90


def user_env(overrides: t.Mapping[str, str | None]) -> dict[str, str]:
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": f"/home/u{UID}", "LANG": "C.UTF-8"}
    for key, value in overrides.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def as_user(argv: list[str], env: dict[str, str], cwd: str = WS, timeout: int = TIMEOUT,
            until_doomed: bool = False) -> dict[str, t.Any]:
    command = [
        "setpriv",
        f"--reuid={UID}",
        f"--regid={UID}",
        "--clear-groups",
        "env",
        "-i",
        *[f"{k}={v}" for k, v in env.items()],
        *argv,
    ]
    return run(command, cwd, timeout, until_doomed)


#: What a client's output ends with when the driver ended it: its poll for a daemon could not succeed any more.
ORPHANED_POLL = "<ended: the daemon server it started has exited and no daemon is left to answer its poll>"


def run(command: list[str], cwd: str, timeout: int = TIMEOUT, until_doomed: bool = False) -> dict[str, t.Any]:
    """*command* to its end (or *timeout*, a hang guard); with *until_doomed*, a client of the daemon is ended
    as soon as its poll can no longer be answered (:func:`doomed`), instead of polling out its minute."""
    started = time.monotonic()
    proc = subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    spawned: set[int] = set()
    note = b""
    while True:
        try:
            stdout, stderr = proc.communicate(timeout=0.01 if until_doomed else timeout)
            rc = proc.returncode
            break
        except subprocess.TimeoutExpired:
            pass
        if time.monotonic() - started >= timeout:
            note = b"\n<timeout>"
        elif until_doomed and doomed(proc.pid, spawned):
            note = b"\n" + ORPHANED_POLL.encode()
        else:
            continue
        proc.kill()
        stdout, stderr = proc.communicate()
        rc, stderr = -1, stderr + note
        break
    out = (stdout + stderr).decode("utf-8", "replace")
    return {
        "rc": rc,
        "out": out[-4000:],
        "stdout": stdout.decode("utf-8", "replace"),
        "seconds": round(time.monotonic() - started, 1),
    }


#: Every document nxsock printed, with its command line, for the test to check against its schema.
DOCUMENTS: list[tuple[list[str], t.Any]] = []


def daemon_servers() -> dict[int, int]:
    """Every live Nx daemon server in this pid namespace: pid -> parent pid (a zombie has exited: not live)."""
    found = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                if b"daemon/server/start" not in f.read():
                    continue  # a zombie's is empty
            with open(f"/proc/{name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] not in (b"Z", b"X"):
            found[int(name)] = int(fields[1])
    return found


def doomed(client: int, spawned: set[int]) -> bool:
    """Whether the Nx client *client* polls for a daemon that can never answer: the server it spawned (seen
    alive, its pids gathered in *spawned*) has exited and no daemon server at all is left in this namespace.

    The client spawns its server once and then only polls (a minute at 10 ms) for a socket that nobody will
    listen on any more: what it shows at the end of that minute is already certain.  A server never seen
    alive decides nothing: the hang guard ends such a client, as before.
    """
    servers = daemon_servers()
    spawned.update(pid for pid, parent in servers.items() if parent == client)
    return bool(spawned) and not servers


def nxsock(args: list[str], env: dict[str, str]) -> dict[str, t.Any]:
    result = as_user([PYTHON, "-m", "nxsock", *args], {**env, "PYTHONPATH": PYLIB, "PYTHONDONTWRITEBYTECODE": "1"})
    if "--json" in args:
        try:
            result["json"] = json.loads(result["stdout"])
        except ValueError:
            result["json"] = None
        DOCUMENTS.append((args, result["json"]))
    return result


def _slim(result: dict[str, t.Any]) -> dict[str, t.Any]:
    return {k: v for k, v in result.items() if k != "stdout"}


def received(daemon_dir: str) -> int:
    try:
        with open(os.path.join(daemon_dir, "daemon.log"), encoding="utf-8", errors="replace") as log:
            return log.read().count("[Messenger] Received message")
    except OSError:
        return 0


def record(daemon_dir: str) -> dict[str, t.Any] | None:
    try:
        with open(os.path.join(daemon_dir, "server-process.json"), encoding="utf-8") as f:
            value = json.load(f)
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def stop_daemons(env: dict[str, str], daemon_dir: str, hard: bool = False) -> list[int]:
    """Every Nx daemon in this pid namespace, by pid (the namespace holds nothing else of anyone's).

    The recorded one is stopped as Nx stops it (so it removes its socket); with
    *hard*, or for what is left, SIGKILL — a ``kill -9`` leaves its record and socket behind.
    """
    if not hard:
        as_user([NX_BIN, "daemon", "--stop"], env, timeout=30)
    stopped = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                cmdline = f.read()
        except OSError:
            continue
        if not hard and os.stat(f"/proc/{name}").st_uid != UID:
            continue  # the state's own daemons (root's, left by sudo nx) stay until the remedy
        if b"daemon/server/start" in cmdline or b"plugin-worker" in cmdline:
            try:
                os.kill(int(name), signal.SIGKILL)
                stopped.append(int(name))
            except OSError:
                pass
    gone(stopped)
    return stopped


def gone(pids: list[int], guard: float = 30) -> None:
    """Until every process of *pids* has exited and, where it is this init's child, been reaped: a zombie still
    holds its pid, and nxsock would take a dead daemon's record for a live one.  *guard* only bounds a hang."""
    deadline = time.monotonic() + guard
    while True:
        reap()
        if not [pid for pid in pids if _alive(pid)] or time.monotonic() > deadline:
            return
        time.sleep(0.005)  # a poll of the exits, not a delay: the loop ends the moment they are gone


def _alive(pid: int) -> bool:
    """Whether *pid* still holds its pid: running, or a zombie that this init has still to reap."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return False
    return fields[0] not in (b"Z", b"X") or int(fields[1]) == os.getpid()


def reap() -> None:
    """This driver is the namespace's init: the daemons it outlives are its children to reap (else they linger as
    zombies)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def nx_run(env: dict[str, str], daemon_dir: str, timeout: int = TIMEOUT) -> dict[str, t.Any]:
    """``nx daemon --start``, then a client command with the daemon required: did the daemon answer it?"""
    before = received(daemon_dir)
    start = as_user([NX_BIN, "daemon", "--start"], env, timeout=timeout, until_doomed=True)
    show = as_user([NX_BIN, "show", "projects"], {**env, "NX_DAEMON": "true"}, timeout=timeout, until_doomed=True)
    return {
        "start": _slim(start),
        "show": _slim(show),
        "record": record(daemon_dir),
        "answered": received(daemon_dir) - before,
    }


def apply(remedy: str, env: dict[str, str]) -> tuple[list[dict[str, t.Any]], dict[str, str]]:
    """Each ``&&`` part of *remedy*: as root where it says sudo, as the user otherwise; exports and unsets kept."""
    log = []
    env = dict(env)
    for part in remedy.split(" && "):
        as_root = part.startswith("sudo ")
        body = part[len("sudo "):] if as_root else part
        if body.startswith("export "):
            name, _, value = body[len("export "):].partition("=")
            expanded = subprocess.run(["bash", "-c", f"printf %s {value}"], capture_output=True).stdout
            env[name] = os.fsdecode(expanded)
            log.append({"part": part, "rc": 0, "as": "shell"})
            continue
        if body.startswith("unset "):
            for name in body.split()[1:]:
                env.pop(name, None)
            log.append({"part": part, "rc": 0, "as": "shell"})
            continue
        if body.startswith("nxsock "):
            body = f"{PYTHON} -m nxsock {body[len('nxsock '):]}"
            env_run = {**env, "PYTHONPATH": PYLIB}
        elif body.startswith("nx "):
            body = f"{NX_BIN} {body[len('nx '):]}"
            env_run = env
        else:
            env_run = env
        if as_root:
            result = run(["bash", "-c", body], WS)
        else:
            result = as_user(["bash", "-c", body], env_run)
        log.append({"part": part, "as": "root" if as_root else "user", **_slim(result)})
        if result["rc"] != 0:
            break
    return log, env


def choose(document: dict[str, t.Any], wanted: str) -> dict[str, t.Any] | None:
    for finding in document["findings"]:
        if finding["severity"] in ("warn", "error") and finding["id"] == wanted and finding["remedy"]:
            return t.cast(dict[str, t.Any], finding)
    return None


def main() -> None:
    env = user_env(CONFIG["env"])
    out: dict[str, t.Any] = {}
    paths_before = nxsock(["paths", "--json"], env)
    daemon_dir = (paths_before.get("json") or {}).get("workspace_data", {}).get(
        "daemon_dir"
    ) or f"{WS}/.nx/workspace-data/d"
    # A failing Nx polls a minute for its daemon: it is ended once its server has exited (nothing can answer
    # then; every state here ends so, or by itself, in a few seconds).  The time limit is only a hang guard: a
    # fixed cap (15 s once) cut a slow but working Nx short on a loaded machine and misjudged the state.
    out["before"] = nx_run(env, daemon_dir)
    out["before"]["paths_rc"] = paths_before["rc"]
    out["stopped_before"] = stop_daemons(env, daemon_dir, hard=bool(CONFIG.get("kill9")))
    if CONFIG.get("between"):
        out["between"] = run(["bash", "-c", CONFIG["between"]], "/")
    doctor = nxsock(["doctor", "--json"], env)
    out["doctor"] = doctor.get("json")
    out["doctor_rc"] = doctor["rc"]
    one = "fix_root" if CONFIG.get("fix_root") else "fix" if CONFIG.get("fix") else "hand"
    branches: list[str] = CONFIG.get("branches") or [one]
    if "branches" not in CONFIG:  # one way, as test_machine_mounts.py asks: its document as it always was
        print(json.dumps({**out, **BRANCHES[branches[0]](env, daemon_dir, out["doctor"]), "documents": DOCUMENTS}))
        return
    # Several ways of applying the remedy to the one failure state: the state as the failure left it (files and
    # directories of /tmp, /home and /etc/tmpfiles.d; the state's own processes, which no branch before the
    # last may end) is kept, and each branch after the first starts from it again.
    snapshot = None
    if len(branches) > 1:
        # the user's stragglers (23.x's `npm view nx@latest`, which writes npm's cache under $HOME) end first: a
        # snapshot taken while they write is one no later branch finds again (a temporary file of npm's, copied,
        # then removed by it after the restore, once made a branch "not start from the failure state")
        out["stragglers_ended"] = end_processes_but({pid for pid in live_processes() if _owner(pid) != UID})
        snapshot = take_snapshot()
    kept = live_processes()
    out["state_processes"] = {pid: _cmdline(pid) for pid in sorted(kept)}
    # the state's own: another uid's (a daemon root started); the user's stragglers (23.x's `npm view nx@latest`) may
    # end
    own = {pid for pid in kept if _owner(pid) not in (UID, None)}
    results: dict[str, t.Any] = {}
    for number, branch in enumerate(branches):
        restored: dict[str, t.Any] = {}
        if number:
            restored["ended"] = end_processes_but(kept)
            restored["restored"] = restore_snapshot(t.cast(Snapshot, snapshot))
            restored["state_processes_lost"] = sorted(own - live_processes())
            restored["differs"] = differences(t.cast(Snapshot, snapshot))
        last = number == len(branches) - 1
        results[branch] = {**BRANCHES[branch](env, daemon_dir, out["doctor"], last=last), **restored}
    print(json.dumps({**out, "branches": results, "documents": DOCUMENTS}))


def hand_branch(env: dict[str, str], daemon_dir: str, doctor: dict[str, t.Any] | None,
                last: bool = True) -> dict[str, t.Any]:
    """The remedy doctor printed for the state's finding, applied as written; doctor followed; the real Nx after."""
    out: dict[str, t.Any] = {}
    finding = choose(doctor or {"findings": []}, CONFIG["finding"])
    out["finding"] = finding
    if finding is None:
        return out
    out["applied"], env = apply(finding["remedy"], env)
    # then as a user would: follow doctor until it is quiet (what the failure itself left, such as Nx's
    # disabled marker, has its own finding), a few rounds at most
    out["followed"] = []
    for _ in range(3):
        again = (nxsock(["doctor", "--json"], env).get("json") or {"findings": []})["findings"]
        pending = [
            f for f in again if f["severity"] in ("warn", "error") and f["remedy"] and f["id"] not in CONFIG["allowed"]
        ]
        if not pending:
            break
        log, env = apply(pending[0]["remedy"], env)
        out["followed"].append({"finding": pending[0], "applied": log})
    out["env_after"] = env
    after(out, env, daemon_dir, last)
    return out


def after(out: dict[str, t.Any], env: dict[str, str], daemon_dir: str, last: bool) -> None:
    """Where paths predicts the socket root now, the real Nx then, doctor then; the branch's daemons ended."""
    paths = nxsock(["paths", "--json"], env)
    out["paths"] = paths.get("json")
    out["paths_rc"] = paths["rc"]
    daemon_dir = (out["paths"] or {}).get("workspace_data", {}).get("daemon_dir") or daemon_dir
    out["after"] = nx_run(env, daemon_dir)
    doctor_after = nxsock(["doctor", "--json"], env)
    out["doctor_after"] = doctor_after.get("json")
    out["doctor_after_rc"] = doctor_after["rc"]
    out["stopped_after"] = stop_daemons(env, daemon_dir, hard=True) if last else []  # the namespace ends with it


#: The trees a state is built in (fresh tmpfs mounts of the namespace), which a branch after the first finds again.
SNAPSHOT_TREES = ("/tmp", "/home", "/etc/tmpfiles.d")


class Snapshot(t.NamedTuple):
    store: str  # a copy of each tree (``cp -a``: modes, owners, links, socket nodes, times) by its number
    seen: dict[str, tuple[int, int]]  # each entry's (inode, ctime) when the copy was made


def _walk(tree: str) -> t.Iterator[tuple[str, os.stat_result]]:
    """Each entry beneath *tree*, parents first, never through a link or past a mount inside it."""
    device = os.lstat(tree).st_dev
    pending = [tree]
    while pending:
        directory = pending.pop()
        try:
            names = sorted(os.listdir(directory))
        except FileNotFoundError:
            continue  # removed by the caller meanwhile
        for name in names:
            path = os.path.join(directory, name)
            try:
                status = os.lstat(path)
            except FileNotFoundError:
                continue
            yield path, status
            if stat.S_ISDIR(status.st_mode) and status.st_dev == device:
                pending.append(path)


def take_snapshot() -> Snapshot:
    """The state's trees copied to a tmpfs of its own, detached from the tree once open (the mount table the branches
    see, and nxsock reads, is the state's) and reached through this process's descriptor."""
    subprocess.run(["mount", "-t", "tmpfs", "-o", "mode=0700", "tmpfs", "/media"], check=True)
    fd = os.open("/media", os.O_RDONLY | os.O_DIRECTORY)
    subprocess.run(["umount", "-l", "/media"], check=True)
    store = f"/proc/{os.getpid()}/fd/{fd}"
    seen = {}
    for number, tree in enumerate(SNAPSHOT_TREES):
        seen.update({path: (status.st_ino, status.st_ctime_ns) for path, status in _walk(tree)})
        subprocess.run(["cp", "-a", "--", f"{tree}/.", f"{store}/{number}"], check=True)
    return Snapshot(store, seen)


def restore_snapshot(snapshot: Snapshot) -> list[str]:
    """Each tree as the snapshot found it: an entry a branch did not touch (same inode, same ctime) is left as it is
    (a live daemon's socket stays bound, an open file stays open); the rest is removed and copied back, and each
    directory takes its snapshot's owner, mode and times again.  Returns what was put back."""
    restored: list[str] = []
    for number, tree in enumerate(SNAPSHOT_TREES):
        copy = f"{snapshot.store}/{number}"
        present = set()
        for path, status in _walk(tree):
            if not os.path.lexists(path):
                continue  # beneath a directory removed just now
            known = snapshot.seen.get(path)
            if known == (status.st_ino, status.st_ctime_ns) or (known and known[0] == status.st_ino
                                                                  and stat.S_ISDIR(status.st_mode)):
                present.add(path)
                continue
            if stat.S_ISDIR(status.st_mode):
                shutil.rmtree(path)
            else:
                os.unlink(path)
        for path in sorted(p for p in snapshot.seen if p.startswith(tree + "/")):
            if path in present or os.path.lexists(path):
                continue  # untouched, or copied back with its parent
            subprocess.run(["cp", "-a", "--", copy + path[len(tree):], path], check=True)
            restored.append(path)
        directories = sorted((p for p in present if os.path.isdir(p) and not os.path.islink(p)), reverse=True)
        for path in [*directories, tree]:  # the deepest first: a parent's times once its entries are back
            original = os.lstat(copy + path[len(tree):])
            os.chown(path, original.st_uid, original.st_gid)
            os.chmod(path, stat.S_IMODE(original.st_mode))
            os.utime(path, ns=(original.st_atime_ns, original.st_mtime_ns))
    return restored


def _manifest(tree: str, shown_as: str) -> dict[str, tuple[t.Any, ...]]:
    """Each entry's kind, mode, owner, size, link target and (but a directory's, which Nx's reads may touch) times."""
    found = {}
    for path, status in _walk(tree):
        target = os.readlink(path) if stat.S_ISLNK(status.st_mode) else None
        times = None if stat.S_ISDIR(status.st_mode) else status.st_mtime_ns
        size = None if stat.S_ISDIR(status.st_mode) else status.st_size
        found[shown_as + path[len(tree):]] = (status.st_mode, status.st_uid, status.st_gid, size, target, times)
    return found


def differences(snapshot: Snapshot) -> list[str]:
    """What a restored tree holds otherwise than the snapshot: none, or a branch did not start from the state."""
    found = []
    for number, tree in enumerate(SNAPSHOT_TREES):
        now, then = _manifest(tree, tree), _manifest(f"{snapshot.store}/{number}", tree)
        found += [f"{path}: {then.get(path)} -> {now.get(path)}" for path in sorted(set(now) | set(then))
                  if now.get(path) != then.get(path)]
    return found


def live_processes() -> set[int]:
    """Every running process of this pid namespace but this driver (its init); an exited one (reaped here, or a
    zombie of another parent) is none."""
    reap()
    running = set()
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                if f.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X"):
                    running.add(int(name))
        except (OSError, IndexError):
            continue
    return running


def _owner(pid: int) -> int | None:
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return None


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode("utf-8", "replace")[:300]
    except OSError:
        return ""


def end_processes_but(kept: set[int]) -> list[int]:
    """SIGKILL every process of this namespace a branch left (its daemons, their workers), never the state's own."""
    ended = []
    for pid in sorted(live_processes() - kept):
        try:
            os.kill(pid, signal.SIGKILL)
            ended.append(pid)
        except OSError:
            pass
    gone(ended)
    return ended


#: The ``why_not`` of a remedy that changes the shell's environment: the one kind the driver runs, as a shell would.
SHELL_WORDS = "changes your shell's environment"


def fix_branch(env: dict[str, str], daemon_dir: str, doctor: t.Any = None, last: bool = True,
               root: bool = False) -> dict[str, t.Any]:
    """``doctor --fix --yes --json`` as the user; the shell lines it leaves to the user applied as a shell would
    (never a sudo line), then ``--fix`` again in the new environment, a few rounds at most; then the real Nx.
    With *root* (a state only root can fix), one round: ``--fix`` must leave the state as it is."""
    out: dict[str, t.Any] = {"fix_rounds": []}
    for _ in range(3):
        fix = nxsock(["doctor", "--fix", "--yes", "--json"], env)
        shell = [item for item in (fix.get("json") or {}).get("for_you", []) if SHELL_WORDS in (item["why_not"] or "")]
        round_ = {"rc": fix["rc"], "document": fix.get("json"), "out": fix["out"][-2000:], "shell": []}
        out["fix_rounds"].append(round_)
        if not shell or root:
            break
        for item in shell:
            log, env = apply(item["remedy"], env)
            round_["shell"] += log
    out["env_after"] = env
    if root:
        out["stopped_after"] = stop_daemons(env, daemon_dir, hard=True) if last else []
        return out
    after(out, env, daemon_dir, last)
    return out


def fix_root_branch(env: dict[str, str], daemon_dir: str, doctor: t.Any = None,
                    last: bool = True) -> dict[str, t.Any]:
    return fix_branch(env, daemon_dir, doctor, last, root=True)


#: Each way of applying the remedy, by the name the test asks for it.
BRANCHES: dict[str, t.Callable[..., dict[str, t.Any]]] = {
    "hand": hand_branch, "fix": fix_branch, "fix_root": fix_root_branch,
}


if __name__ == "__main__":
    main()
