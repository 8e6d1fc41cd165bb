"""The shared-/tmp collision made deterministic (nrwl/nx#34233): two pid namespaces, one /tmp, one checkout path, one
pid.

Each side is a container of its own: a private pid namespace
(``unshare -p -f --mount-proc``) and mount namespace with its own ``/home``
holding its own checkout at the same path; the ``/tmp`` above is shared. As
root in each namespace, ``/proc/sys/kernel/ns_last_pid`` is set to 4999 just
before the real ``nx run p:hold`` is started on a terminal (``script``), so
that Nx's main process is pid 5000 on both sides. Nx (24.0.6 and 23.3.2 alike)
names the per-run directory ``sha256(workspace path + pid)[:20]`` and the task
socket ``fp<pid>-0.sock`` in it, and unlinks a socket already there before it
listens: B silently takes A's socket, with or without the daemon
(``NX_DAEMON=false`` does not help: these are the task sockets, not the
daemon's), and takes it away from A when it ends.

From B, doctor warns ``shared-tmp`` first; its printed command is pasted as a
user pastes it, and B's next run, pid 5000 again, lands in its own directory
while A's socket is untouched; ``reset --force`` and ``doctor --fix --yes`` in
B remove nothing of A's.
"""
from __future__ import annotations

import json
import shlex
import subprocess

import pytest
from documents import parsed
from harness import USER, as_user_prefix, install_nx, stage_nxsock

WS = f"/home/u{USER}/ws"
CTL = "/mnt/ctl"
#: the one per-run directory both sides compute: sha256(lower(workspace path) + "5000")[:20], under
#: /tmp/.nx/<uid>/sockets
PIN = 5000
#: waits up to 2 minutes for a path (the real Nx under load can take seconds to start a task)
WAIT = "_w() { for _ in $(seq 6000); do [ -e \"$1\" ] && return 0; sleep 0.02; done; echo \"TIMEOUT $1\"; return 1; }"
#: (inode, pid-namespace inode of the listener) of every fp*.sock under /tmp/.nx, seen from the namespace that runs it
PEERS_PY = r"""
import glob, os, socket, struct
for path in sorted(glob.glob('/tmp/.nx/*/sockets/*/fp*.sock')):
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(path)
        pid = struct.unpack('3i', s.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))[0]
        ns = os.readlink(f'/proc/{pid}/ns/pid') if pid else 'unseen'
    except OSError as exc:
        ns = f'dead {exc.errno}'
    finally:
        s.close()
    print(path, os.lstat(path).st_ino, ns)
"""
PEERS = f"python3 {CTL}/peers.py"


def _side(nx: str, nxsock: str, tag: str, runs: str) -> str:
    """One container: its own /home and checkout at WS, then *runs* (shell using ``run_pinned``)."""
    project = {"name": "p", "targets": {"hold": {"command": f'touch {CTL}/$NXTAG.started; read x < {CTL}/$NXTAG.go'}}}
    return f"""
{WAIT}
mount -t tmpfs -o mode=0755 tmpfs /home
install -d -o {USER} /home/u{USER} {WS} {WS}/node_modules {WS}/p
echo '{{"analytics":false}}' > {WS}/nx.json; echo '{{"name":"ws"}}' > {WS}/package.json
echo {shlex.quote(json.dumps(project))} > {WS}/p/project.json
ln -s {nx}/node_modules/nx {WS}/node_modules/nx; chown -R {USER} /home/u{USER}
cd {WS}
echo "{tag} $(readlink /proc/self/ns/pid)" >> {CTL}/ns
# Nx's main process is pid {PIN} here: root sets ns_last_pid, the next fork is Nx (setpriv and env exec into node).
run_pinned() {{  # run_pinned TAG [WHAT THE USER PASTES FIRST]
  mkfifo {CTL}/$1.go; chmod 0666 {CTL}/$1.go
  printf '%s\\n' "${{2:-:}}" 'exec node node_modules/nx/dist/bin/nx.js run p:hold' > {CTL}/$1.sh
  script -qec "echo {PIN - 1} > /proc/sys/kernel/ns_last_pid; {as_user_prefix(USER)} NXTAG=$1 NX_TUI=false \
NX_RUN_COMMANDS_DIRECTLY=false sh {CTL}/$1.sh; echo NX-RC \\$?" /dev/null > {CTL}/$1.out 2>&1 &
  _w {CTL}/$1.started
}}
release() {{ echo go > {CTL}/$1.go; }}
nxsock() {{ {nxsock} "$@"; }}
{runs}
"""


def _scenario(release: str) -> str:
    nx = str(install_nx(release))
    python, pythonpath = stage_nxsock()
    nxsock = (
        f"{as_user_prefix(USER)} PYTHONPATH={shlex.quote(pythonpath)} PYTHONDONTWRITEBYTECODE=1 "
        f"{shlex.quote(python)} -m nxsock"
    )
    side_a = _side(nx, nxsock, "A", f"""
run_pinned A1; {PEERS} > {CTL}/A1.peers; touch {CTL}/A1.up
_w {CTL}/A1.done; release A1; wait
run_pinned A2; {PEERS} > {CTL}/A2.peers; touch {CTL}/A2.up
_w {CTL}/A2.done; release A2; wait
""")
    side_b = _side(nx, nxsock, "B", f"""
echo '<<<DOCTOR'; nxsock doctor --json --only shared-tmp
run_pinned B1 'export NX_DAEMON=false'
echo '<<<TAKEN'; {PEERS}
release B1; wait; echo '<<<AFTER-B1'; {PEERS}
touch {CTL}/A1.done; _w {CTL}/A2.up
echo '<<<DOCTOR2'; nxsock doctor --json --only shared-tmp > {CTL}/doctor2.json; cat {CTL}/doctor2.json
REMEDY=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["findings"][0]["remedy"])' < {CTL}/doctor2.json)
echo "<<<REMEDY $REMEDY"
run_pinned B2 "$REMEDY"
echo '<<<SEPARATE'; {PEERS}; find /tmp/.nx /home -name 'fp*.sock' -printf 'FOUND %p\\n' | sort
release B2; wait
echo '<<<RESET'; nxsock reset --json --force
echo '<<<FIX'; nxsock doctor --fix --yes >/dev/null 2>&1; echo "FIX-RC $?"
echo '<<<LAST'; {PEERS}
touch {CTL}/A2.done
""")
    return f"""
mount -t tmpfs -o mode=1777 tmpfs /tmp; mount -t tmpfs -o mode=0755 tmpfs /mnt; install -d -m 0777 {CTL}
echo {shlex.quote(PEERS_PY)} > {CTL}/peers.py
{WAIT}
unshare -m -p -f --mount-proc --kill-child bash -c {shlex.quote(side_a)} &
_w {CTL}/A1.up
unshare -m -p -f --mount-proc --kill-child bash -c {shlex.quote(side_b)}
touch {CTL}/A1.done {CTL}/A2.done; wait
echo '<<<NS'; cat {CTL}/ns
for f in A1 A2 B1 B2; do echo "<<<OUT-$f"; tr -d '\\r' < {CTL}/$f.out | grep -a 'NX-RC\\|Successfully'; done
echo '<<<PEERS-A1'; cat {CTL}/A1.peers; echo '<<<PEERS-A2'; cat {CTL}/A2.peers
echo '<<<END'
"""


def _peers(text: str) -> dict[str, tuple[int, str]]:
    return {
        p: (int(i), ns) for p, i, ns in (line.split(" ", 2) for line in text.splitlines() if line.startswith("/tmp/"))
    }


@pytest.mark.parametrize("release", ["24.0.6", "23.3.2"])
def test_same_pid_same_checkout_shared_tmp_collides_and_the_printed_remedy_separates_them(release: str) -> None:
    proc = subprocess.run(["unshare", "-m", "--propagation", "private", "bash", "-c", _scenario(release)],
                          cwd="/", capture_output=True, stdin=subprocess.DEVNULL, timeout=600, text=True)
    sections = {s.split("\n", 1)[0].split(" ")[0]: s.split("\n", 1)[1] if "\n" in s else s
                for s in proc.stdout.split("<<<")[1:]}
    assert "END" in sections and "TIMEOUT" not in proc.stdout, proc.stdout + proc.stderr
    ns = dict(line.split(" ", 1) for line in sections["NS"].splitlines())
    # A's own run: one fp socket, pid 5000, answered from A's namespace.
    (a1_path, (a1_ino, a1_ns)), = _peers(sections["PEERS-A1"]).items()
    assert a1_path.endswith(f"/fp{PIN}-0.sock") and a1_ns == ns["A"], sections["PEERS-A1"]
    # doctor in B, before B runs Nx, warns of the shared root: A's socket answers from a pid namespace it cannot see.
    (finding,) = parsed(sections["DOCTOR"], "doctor")["findings"]
    assert finding["id"] == "shared-tmp" and finding["severity"] == "warn", finding
    assert "pid namespace nxsock cannot see" in finding["message"], finding
    assert "NX_DAEMON" not in (finding["remedy"] or "") and "NX_DAEMON=false is not enough" in finding["hint"], finding
    # The collision, with the daemon off: B's pid-5000 run unlinks A's socket and listens at the same path.
    taken = _peers(sections["TAKEN"])
    assert list(taken) == [a1_path] and taken[a1_path][0] != a1_ino and taken[a1_path][1] == ns["B"], sections["TAKEN"]
    assert not _peers(sections["AFTER-B1"]), sections["AFTER-B1"]  # and B's exit removed it: A has lost its socket
    # A's second run, pid 5000 again; doctor in B again warns, and its command is pasted before B's next pid-5000 run.
    (a2_path, (a2_ino, a2_ns)), = _peers(sections["PEERS-A2"]).items()
    assert a2_path == a1_path and a2_ns == ns["A"]
    remedy = proc.stdout.split("<<<REMEDY ", 1)[1].split("\n", 1)[0]
    assert "NX_SOCKET_DIR" in remedy and "NX_DAEMON" not in remedy, remedy
    separate = sections["SEPARATE"]
    assert _peers(separate) == {a2_path: (a2_ino, "unseen")}, separate  # A's socket untouched, no pid in B
    b2 = [
        line for line in separate.splitlines() if line.startswith("FOUND /home/") and line.endswith(f"/fp{PIN}-0.sock")
    ]
    assert b2, separate  # B's own socket, pid 5000 too, in its own NX_SOCKET_DIR
    # reset --force and doctor --fix --yes in B remove nothing of A's.
    reset = parsed(sections["RESET"], "reset")
    assert not any(a2_path.startswith(i["path"]) or i["path"].startswith(a2_path) for i in reset["removed"]), reset
    kept = [i for i in reset["kept"] if a2_path.startswith(i["path"])]
    assert kept and "answers" in kept[0]["reason"], reset["kept"]  # kept, and says why
    assert _peers(sections["LAST"]) == {a2_path: (a2_ino, "unseen")}, sections["LAST"]
    for run in ("A1", "B1", "A2", "B2"):
        assert "NX-RC 0" in sections[f"OUT-{run}"], (run, sections[f"OUT-{run}"])
