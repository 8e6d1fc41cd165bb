"""A zombie daemon under a pid 1 that does not reap (a container without ``--init``): dead, and ``doctor --fix`` fixes
it.

The state is built for real: a private pid and mount namespace whose pid 1
waits only for its own child (as a shell ``exec``-ed into a container's entry
point does), the real Nx 24.0.6 daemon started there as another uid, then
killed — it stays a zombie (``Z`` in ``/proc/<pid>/stat``), so ``kill(pid, 0)``
still succeeds.  doctor must call it not running, ``doctor --fix`` must remove
its record and per-run directory (before: "not fixed", and a ``reset`` that
removed nothing), and the real Nx must then serve a client from a new daemon.
"""
from __future__ import annotations

import shlex
import subprocess

import pytest
from documents import parsed
from harness import USER, as_user_prefix, install_nx, stage_nxsock

WS = f"/home/u{USER}/ws"
RECORD = f"{WS}/.nx/workspace-data/d/server-process.json"
#: pid 1 of the namespace: waits for the scenario only, never for the orphans reparented to it.
NON_REAPING_INIT = "import subprocess, sys; sys.exit(subprocess.Popen(['bash', '-c', sys.argv[1]]).wait())"


def _scenario(release: str) -> str:
    nx = install_nx(release)
    python, pythonpath = stage_nxsock()
    user = as_user_prefix(USER, {"NX_DAEMON": "true"})
    nxsock = f"{user} PYTHONPATH={shlex.quote(pythonpath)} PYTHONDONTWRITEBYTECODE=1 {shlex.quote(python)} -m nxsock"
    pid_of = f"python3 -c 'import json; print(json.load(open(\"{RECORD}\"))[\"processId\"])'"
    return f"""
mount -t tmpfs -o mode=1777 tmpfs /tmp; mount -t tmpfs -o mode=0755 tmpfs /home
install -d -o {USER} /home/u{USER} {WS} {WS}/node_modules
echo '{{}}' > {WS}/nx.json; echo '{{"name":"ws"}}' > {WS}/package.json
ln -s {nx}/node_modules/nx {WS}/node_modules/nx; chown -R {USER} {WS}
cd {WS}
{user} timeout 120 node node_modules/nx/dist/bin/nx.js daemon --start >/dev/null 2>&1
PID=$({pid_of})
kill -9 "$PID"
for _ in $(seq 2000); do grep -q ') Z' /proc/$PID/stat && break; sleep 0.01; done
echo "<<<STAT $(cut -d')' -f2 /proc/$PID/stat | cut -d' ' -f2)"
echo '<<<BEFORE'; {nxsock} doctor --json --only daemon-record
echo '<<<FIX'; {nxsock} doctor --fix --yes --only daemon-record 2>&1; echo "<<<FIXRC $?"
echo '<<<AFTER'; {nxsock} doctor --json --only daemon-record
echo '<<<NX'; {user} timeout 120 node node_modules/nx/dist/bin/nx.js show projects >/dev/null 2>&1; echo "NX-RC $?"
echo "NEW $({pid_of}) OLD $PID"; grep -c 'Received message' {WS}/.nx/workspace-data/d/daemon.log
echo '<<<END'
"""


@pytest.mark.parametrize("release", ["24.0.6", "23.3.2"])
def test_a_zombie_daemon_is_dead_and_doctor_fix_clears_it_and_nx_serves_again(release: str) -> None:
    proc = subprocess.run(
        ["unshare", "-m", "-p", "-f", "--mount-proc", "--propagation", "private", "--kill-child",
         "python3", "-c", NON_REAPING_INIT, _scenario(release)],
        cwd="/", capture_output=True, stdin=subprocess.DEVNULL, timeout=300, text=True,
    )
    out = proc.stdout
    sections = {s.split("\n", 1)[0].split(" ")[0]: s for s in out.split("<<<")[1:]}
    assert sections["STAT"].split()[1] == "Z", out  # the daemon is a zombie: kill(pid, 0) still succeeds
    before = parsed(sections["BEFORE"].split("\n", 1)[1], "doctor")["findings"]
    assert any(f["message"].startswith("The recorded daemon") and "is not running" in f["message"] for f in before), (
        before
    )
    assert "not fixed" not in sections["FIX"] and sections["FIXRC"].split()[1] == "0", sections["FIX"]
    after = parsed(sections["AFTER"].split("\n", 1)[1], "doctor")["findings"]
    assert not [f for f in after if f["severity"] in ("warn", "error")], after
    nx = sections["NX"]
    assert "NX-RC 0" in nx, out
    new, old = nx.split("NEW ", 1)[1].split()[0], nx.split("OLD ", 1)[1].split()[0]
    assert new != old and int(nx.strip().splitlines()[-1]) >= 1, nx  # a new daemon answered the real client
