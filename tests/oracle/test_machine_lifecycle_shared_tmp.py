"""Two pid namespaces sharing one /tmp and one checkout path, built for real with the real Nx 24.0.6 and 23.3.2.

Namespace A (``unshare -p -f --mount-proc``) runs the real daemon as the user;
namespace B, a sibling that cannot see A's pids, shares A's ``/tmp`` and the
workspace at the same path — two containers with a host ``/tmp`` bound in.
From B: doctor warns that the socket root is shared beyond this pid namespace
(a socket there answers from a process with no pid here, ``SO_PEERCRED``), with
what works; ``reset`` keeps A's record and per-run directory (before: the record
was removed, its pid being unknown in B) and says why; nothing is removed;
and the real Nx in B, with doctor's printed command pasted (a per-container ``NX_SOCKET_DIR``), works.
"""
from __future__ import annotations

import shlex
import subprocess

import pytest
from documents import parsed
from harness import USER, WAIT_FOR, as_user_prefix, install_nx, stage_nxsock

WS = f"/home/u{USER}/ws"
RECORD = f"{WS}/.nx/workspace-data/d/server-process.json"


def _scenario(release: str) -> str:
    nx = install_nx(release)
    python, pythonpath = stage_nxsock()
    user = as_user_prefix(USER, {"NX_DAEMON": "true"})
    nxsock = (
        f"{as_user_prefix(USER)} PYTHONPATH={shlex.quote(pythonpath)} PYTHONDONTWRITEBYTECODE=1 "
        f"{shlex.quote(python)} -m nxsock"
    )
    side_a = f"cd {WS} && {user} timeout 120 node node_modules/nx/dist/bin/nx.js daemon --start >/dev/null 2>&1; " \
             "touch /home/ctl/a-ready; read _ < /home/ctl/a-stop"
    side_b = (f"cd {WS}; echo '<<<DOCTOR'; {nxsock} doctor --json --only shared-tmp | tee /home/ctl/doctor.json; "
              f"echo '<<<TREE'; find /tmp/.nx {WS}/.nx -printf '%p\\n' | sort; "
              f"echo '<<<RESET'; {nxsock} reset --json --force; "
              f"echo '<<<TREE2'; find /tmp/.nx {WS}/.nx -printf '%p\\n' | sort; "
              "REMEDY=$(python3 -c 'import json,sys; print(json.load(sys.stdin)[\"findings\"][0][\"remedy\"])' "
              "< /home/ctl/doctor.json); "
              f"echo \"<<<NX $REMEDY\"; {as_user_prefix(USER)} sh -c \"$REMEDY; "
              "node node_modules/nx/dist/bin/nx.js show projects\" >/dev/null 2>&1; echo \"NX-RC $?\"")
    return f"""
set -e
mount -t tmpfs -o mode=1777 tmpfs /tmp; mount -t tmpfs -o mode=0755 tmpfs /home
install -d -o {USER} /home/u{USER} {WS} {WS}/node_modules; install -d -m 0700 /home/ctl; mkfifo /home/ctl/a-stop
echo '{{}}' > {WS}/nx.json; echo '{{"name":"ws"}}' > {WS}/package.json
ln -s {nx}/node_modules/nx {WS}/node_modules/nx; chown -R {USER} {WS}
set +e
unshare -p -f --mount-proc --kill-child bash -c {shlex.quote(side_a)} &
{WAIT_FOR} /home/ctl/a-ready
unshare -p -f --mount-proc --kill-child bash -c {shlex.quote(side_b)}
echo stop > /home/ctl/a-stop; wait
echo '<<<END'
"""


@pytest.mark.parametrize("release", ["24.0.6", "23.3.2"])
def test_a_tmp_shared_with_another_pid_namespace_is_named_and_nothing_of_the_other_daemon_is_removed(
    release: str,
) -> None:
    proc = subprocess.run(["unshare", "-m", "--propagation", "private", "bash", "-c", _scenario(release)],
                          cwd="/", capture_output=True, stdin=subprocess.DEVNULL, timeout=300, text=True)
    sections = {
        s.split("\n", 1)[0].split(" ")[0]: s.split("\n", 1)[1] if "\n" in s else ""
        for s in proc.stdout.split("<<<")[1:]
    }
    assert "DOCTOR" in sections, proc.stdout + proc.stderr
    (finding,) = parsed(sections["DOCTOR"], "doctor")["findings"]
    assert finding["id"] == "shared-tmp" and finding["severity"] == "warn", finding
    assert "pid namespace nxsock cannot see" in finding["message"] and "--tmpfs /tmp" in finding["hint"]
    assert (finding["remedy"] or "").startswith("export NX_SOCKET_DIR=") and "NX_DAEMON=false is not enough" in finding[
        "hint"
    ]
    theirs = [p for p in sections["TREE"].splitlines() if p == RECORD or p.endswith("/d.sock")]
    assert len(theirs) == 2 and set(theirs) <= set(sections["TREE2"].splitlines()), sections  # nothing of A's removed
    reset = parsed(sections["RESET"], "reset")
    # At most an empty plugin directory of this workspace's (no socket in it; Nx makes it again), never A's daemon's.
    assert all(i["what"] == "plugin directory" and i["reason"] == "it holds no socket" for i in reset["removed"]), reset
    kept = [i for i in reset["kept"] if i["path"] == RECORD]
    assert kept and "another container" in kept[0]["reason"], reset["kept"]
    assert "NX-RC 0" in sections["NX"], sections["NX"]
