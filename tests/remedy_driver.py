"""Inside a private mount and pid namespace, as root: the real Nx before, the printed remedy applied, the real Nx after.

Run by ``tests/oracle/test_remedies_real.py`` once the failure state is built.  It
prints one JSON document: what Nx did in the failure state, what ``doctor``
said and which remedy it printed, how each part of that remedy ran (as root
where it says ``sudo``, as the user otherwise), where ``paths`` then predicts
the socket root, where the real daemon then put its socket, whether a real
client command was answered by it, and what ``doctor`` says afterwards.
"""

from __future__ import annotations

import json
import os
import signal
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


def as_user(argv: list[str], env: dict[str, str], cwd: str = WS, timeout: int = TIMEOUT) -> dict[str, t.Any]:
    command = ["setpriv", f"--reuid={UID}", f"--regid={UID}", "--clear-groups", "env", "-i", *[f"{k}={v}" for k, v in env.items()], *argv]
    return run(command, cwd, timeout)


def run(command: list[str], cwd: str, timeout: int = TIMEOUT) -> dict[str, t.Any]:
    started = time.monotonic()
    try:
        proc = subprocess.run(command, cwd=cwd, capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL)
        rc, stdout, stderr = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as exc:
        rc, stdout, stderr = -1, exc.stdout or b"", (exc.stderr or b"") + b"\n<timeout>"
    out = (stdout + stderr).decode("utf-8", "replace")
    return {"rc": rc, "out": out[-4000:], "stdout": stdout.decode("utf-8", "replace"), "seconds": round(time.monotonic() - started, 1)}


#: Every document nxsock printed, with its command line, for the test to check against its schema.
DOCUMENTS: list[tuple[list[str], t.Any]] = []


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
    time.sleep(0.3)
    reap()
    return stopped


def reap() -> None:
    """This driver is the namespace's init: the daemons it outlives are its children to reap (else they linger as zombies)."""
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
    start = as_user([NX_BIN, "daemon", "--start"], env, timeout=timeout)
    show = as_user([NX_BIN, "show", "projects"], {**env, "NX_DAEMON": "true"}, timeout=timeout)
    return {"start": _slim(start), "show": _slim(show), "record": record(daemon_dir), "answered": received(daemon_dir) - before}


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
    daemon_dir = (paths_before.get("json") or {}).get("workspace_data", {}).get("daemon_dir") or f"{WS}/.nx/workspace-data/d"
    out["before"] = nx_run(env, daemon_dir, timeout=15)  # a failing Nx polls for a minute: 15 s tells enough
    out["before"]["paths_rc"] = paths_before["rc"]
    out["stopped_before"] = stop_daemons(env, daemon_dir, hard=bool(CONFIG.get("kill9")))
    if CONFIG.get("between"):
        out["between"] = run(["bash", "-c", CONFIG["between"]], "/")
    doctor = nxsock(["doctor", "--json"], env)
    out["doctor"] = doctor.get("json")
    out["doctor_rc"] = doctor["rc"]
    if CONFIG.get("fix"):
        fix_rounds(out, env, daemon_dir)
        return
    finding = choose(out["doctor"] or {"findings": []}, CONFIG["finding"])
    out["finding"] = finding
    if finding is None:
        print(json.dumps({**out, "documents": DOCUMENTS}))
        return
    out["applied"], env = apply(finding["remedy"], env)
    # then as a user would: follow doctor until it is quiet (what the failure itself left, such as Nx's
    # disabled marker, has its own finding), a few rounds at most
    out["followed"] = []
    for _ in range(3):
        again = (nxsock(["doctor", "--json"], env).get("json") or {"findings": []})["findings"]
        pending = [f for f in again if f["severity"] in ("warn", "error") and f["remedy"] and f["id"] not in CONFIG["allowed"]]
        if not pending:
            break
        log, env = apply(pending[0]["remedy"], env)
        out["followed"].append({"finding": pending[0], "applied": log})
    out["env_after"] = env
    paths = nxsock(["paths", "--json"], env)
    out["paths"] = paths.get("json")
    out["paths_rc"] = paths["rc"]
    daemon_dir = (out["paths"] or {}).get("workspace_data", {}).get("daemon_dir") or daemon_dir
    out["after"] = nx_run(env, daemon_dir)
    after = nxsock(["doctor", "--json"], env)
    out["doctor_after"] = after.get("json")
    out["doctor_after_rc"] = after["rc"]
    out["stopped_after"] = stop_daemons(env, daemon_dir, hard=True)  # everything: the namespace ends with it
    print(json.dumps({**out, "documents": DOCUMENTS}))


#: The ``why_not`` of a remedy that changes the shell's environment: the one kind the driver runs, as a shell would.
SHELL_WORDS = "changes your shell's environment"


def fix_rounds(out: dict[str, t.Any], env: dict[str, str], daemon_dir: str) -> None:
    """``doctor --fix --yes --json`` as the user; the shell lines it leaves to the user applied as a shell would
    (never a sudo line), then ``--fix`` again in the new environment, a few rounds at most; then the real Nx."""
    out["fix_rounds"] = []
    for _ in range(3):
        fix = nxsock(["doctor", "--fix", "--yes", "--json"], env)
        shell = [item for item in (fix.get("json") or {}).get("for_you", []) if SHELL_WORDS in (item["why_not"] or "")]
        round_ = {"rc": fix["rc"], "document": fix.get("json"), "out": fix["out"][-2000:], "shell": []}
        out["fix_rounds"].append(round_)
        if not shell or CONFIG.get("fix_root"):
            break
        for item in shell:
            log, env = apply(item["remedy"], env)
            round_["shell"] += log
    out["env_after"] = env
    if CONFIG.get("fix_root"):  # a state only root can fix: --fix must leave it as it is
        out["stopped_after"] = stop_daemons(env, daemon_dir, hard=True)
        print(json.dumps({**out, "documents": DOCUMENTS}))
        return
    paths = nxsock(["paths", "--json"], env)
    out["paths"] = paths.get("json")
    out["paths_rc"] = paths["rc"]
    daemon_dir = (out["paths"] or {}).get("workspace_data", {}).get("daemon_dir") or daemon_dir
    out["after"] = nx_run(env, daemon_dir)
    after = nxsock(["doctor", "--json"], env)
    out["doctor_after"] = after.get("json")
    out["doctor_after_rc"] = after["rc"]
    out["stopped_after"] = stop_daemons(env, daemon_dir, hard=True)
    print(json.dumps({**out, "documents": DOCUMENTS}))


if __name__ == "__main__":
    main()
