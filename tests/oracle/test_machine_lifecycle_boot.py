"""A booted tmpfiles.d rule that hands /tmp/.nx to one user, applied by the real systemd-tmpfiles, for 24.0.6 and
23.3.2.

The state is built for real in a private mount namespace: a scratch
``/etc/tmpfiles.d`` (a tmpfs over it) holding ``nx.conf`` with
``d /tmp/.nx 0755 <peer> <peer> -``, "booted" by the real
``systemd-tmpfiles --create --prefix=/tmp/.nx`` (every tmpfiles.d file of the
machine is read, in systemd's own precedence; only /tmp/.nx is acted on).  The
real Nx, run as another user, is demoted to ~/.nx as nxsock predicts; doctor
names the file and line; its remedy, pasted as root, installs a drop-in that
systemd-tmpfiles itself then obeys over ``nx.conf`` ("Duplicate line for path")
at the next boot (the container removed and the tool run again), and the real
Nx uses /tmp/.nx/<uid>/sockets.
"""
from __future__ import annotations

import json
import shlex

import pytest
from documents import parsed
from harness import PEER, USER, as_user_prefix, install_nx, oracle_command, run_as_user, stage_nxsock

WS = f"/home/u{USER}/ws"
BOOT = "systemd-tmpfiles --create --prefix=/tmp/.nx 2>&1"


def _nxsock(args: str, user: bool = True) -> str:
    python, pythonpath = stage_nxsock()
    prefix = as_user_prefix(USER) + " " if user else ""
    return (
        f"{prefix}PYTHONPATH={shlex.quote(pythonpath)} PYTHONDONTWRITEBYTECODE=1 {shlex.quote(python)} -m nxsock {args}"
    )


@pytest.mark.tool("systemd-tmpfiles")
@pytest.mark.parametrize("release", ["24.0.6", "23.3.2"])
def test_a_boot_rule_that_hands_the_container_to_one_user_is_named_and_the_drop_in_wins_at_the_next_boot(
    release: str,
) -> None:
    nx = install_nx(release)
    generation = "native" if release.startswith("24") else "ts"
    setup = (
        "mount -t tmpfs -o mode=0755 tmpfs /etc/tmpfiles.d; "
        "if [ -d /run/tmpfiles.d ]; then mount -t tmpfs -o mode=0755 tmpfs /run/tmpfiles.d; fi; "
        f"echo 'd /tmp/.nx 0755 {PEER} {PEER} -' > /etc/tmpfiles.d/nx.conf; {BOOT}; "
        f"install -d -o {USER} {WS}/node_modules; echo '{{}}' > {WS}/nx.json; "
        f"ln -s {nx}/node_modules/nx {WS}/node_modules/nx; chown -R {USER} {WS}"
    )
    oracle = oracle_command(generation)
    post = (
        f"echo '@@STAT'; stat -c '%u %a' /tmp/.nx; echo '@@PATHS'; cd {WS} && {_nxsock('paths --json')}; "
        f"echo '@@NX'; cd {WS} && {oracle}; "
        f"echo '@@PASTE'; {_nxsock('provision --tmpfiles --install', user=False)}; echo \"RC $?\"; "
        f"echo '@@BOOT'; rm -rf /tmp/.nx; {BOOT}; stat -c '%u %g %a' /tmp/.nx; "
        f"echo '@@NX2'; cd {WS} && {oracle}; echo '@@DOCTOR2'; cd {WS} && "
        f"{_nxsock('doctor --json --only boot-persistence')}"
    )
    run = run_as_user(
        setup, ["doctor", "--json", "--only", "boot-persistence", "--only", "container"], cwd=WS, post=post
    )
    parts = dict(part.split("\n", 1) for part in run.post.split("@@")[1:])
    assert parts["STAT"].split() == [str(PEER), "755"]  # the real systemd-tmpfiles made it the peer's
    findings = parsed(run.stdout, "doctor")["findings"]
    boot = [f for f in findings if f["id"] == "boot-persistence"]
    assert len(boot) == 1 and boot[0]["severity"] == "warn", findings
    assert boot[0]["message"].startswith("/etc/tmpfiles.d/nx.conf:1 makes /tmp/.nx at boot"), boot
    assert boot[0]["remedy"] == "sudo nxsock provision --tmpfiles --install"  # what the scenario pasted, as root
    predicted = parsed(parts["PATHS"], "paths")
    assert predicted["socket_root"]["root"] == f"/home/u{USER}/.nx/sockets"  # demoted, as predicted
    assert json.loads(parts["NX"])["sockets"]["daemon"]["dir"].startswith(f"/home/u{USER}/.nx/sockets")  # and by Nx
    assert "00-nxsock.conf" in parts["PASTE"] and "RC 0" in parts["PASTE"], parts["PASTE"]
    booted = parts["BOOT"].splitlines()
    assert any('Duplicate line for path "/tmp/.nx"' in line and "nx.conf" in line for line in booted), booted
    assert booted[-1].split() == ["0", "0", "1777"]  # systemd-tmpfiles obeys nxsock's drop-in over nx.conf
    assert json.loads(parts["NX2"])["sockets"]["daemon"]["dir"].startswith(f"/tmp/.nx/{USER}/sockets/")
    after = parsed(parts["DOCTOR2"], "doctor")["findings"]
    assert [f["severity"] for f in after] in (["ok"], ["info"]), after
