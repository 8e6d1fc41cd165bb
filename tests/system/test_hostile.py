"""Hostile neighbours and hostile input: nothing followed, nothing lost, nothing injected, nothing hangs.

Every attack is built as root in a fresh mount namespace (tmpfs ``/tmp``,
``/home`` and ``/srv``), by or for the attacker :data:`PEER`; then each
command of the attack runs — as the victim :data:`USER` or as root — between
two snapshots of the attacked trees (type, owner, mode, inode, size, mtime and
link target of every entry, and the SHA-256 of every file).  Per cell: the
attacked trees are unchanged byte for byte, the command returns within
:data:`TIME_LIMIT` seconds with an exit code from the documented table, and
no traceback is printed.  The races flip a level with ``renameat2``
``RENAME_EXCHANGE`` while the victim's command runs in a loop.

Rerun: ``NXSOCK_TEST_UID_BASE=<base> python -m pytest tests/system/test_hostile.py tests/oracle/test_hostile.py -s``
(``-s`` prints the counts).
"""
from __future__ import annotations

import shlex
import subprocess
import textwrap

from harness import (
    PEER,
    USER,
    WAIT_FOR,
    as_user_prefix,
    stage_nxsock,
)

U, P = USER, PEER
HOME = f"/home/u{U}"
HEX20 = "0123456789abcdef0123"
STALE = "stale() { python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' \"$1\"; }"
OLD = "touch -h -d 2000-01-01"
COUNTS = {"attacks": 0, "cells": 0, "violations": 0}
LEGACY_SHAPES = (
    "install -d -o {u} {d}/{hex}; stale {d}/{hex}/d.sock; chown -R {u} {d}/{hex}; {old} {d}/{hex}; "
    "install -d -o {u} {d}/nx-native-file-cache-abc1234; echo keep > {d}/nx-native-file-cache-abc1234/keep; chown -R "
    "{u} {d}/nx-native-file-cache-abc1234; "
    "stale {d}/plugin1.sock; chown {u} {d}/plugin1.sock"
)


def _legacy_shapes(directory: str, owner: int | str = U) -> str:
    return LEGACY_SHAPES.format(u=owner, d=directory, hex=HEX20, old=OLD)


EXCHANGER = textwrap.dedent("""
    import ctypes, os, signal, sys, time
    libc = ctypes.CDLL(None, use_errno=True)
    a, b, seconds = sys.argv[1].encode(), sys.argv[2].encode(), float(sys.argv[3])
    flips = 0
    def report(*_):
        print("flips", flips, flush=True)
        sys.exit(0)
    signal.signal(signal.SIGTERM, report)
    end = time.time() + seconds
    open("/tmp/.exchanger-up", "w").close()  # the race is on: the victim starts now
    while time.time() < end:
        if libc.renameat2(-100, a, -100, b, 2) == 0:  # AT_FDCWD, RENAME_EXCHANGE
            flips += 1
    report()
""")
RACE_RUNS = 1000
PROVISION_RACE_RUNS = 5000  # the window on the old code is a few microseconds: thousands of runs find it


def _race(setup: str, driver: str, a: str, b: str) -> dict[str, int]:
    """Run *driver* as the victim while the attacker exchanges *a* and *b*; the driver's and the exchanger's counts."""
    python, pylib = stage_nxsock()
    exchanger = f"{as_user_prefix(P)} {shlex.quote(python)} -c {shlex.quote(EXCHANGER)} {a} {b} 120 > /tmp/flips.out &"
    body = f"PYTHONPATH={shlex.quote(pylib)} {shlex.quote(python)} -c {shlex.quote(textwrap.dedent(driver))}"
    script = "\n".join([
        "mount -t tmpfs -o mode=1777 tmpfs /tmp; mount -t tmpfs -o mode=0755 tmpfs /home",
        STALE, f"install -d -o {U} -g {U} {HOME}", setup, exchanger, f"{WAIT_FOR} /tmp/.exchanger-up",
        f"cd {HOME}; {as_user_prefix(U)} {body}",
        "kill $(jobs -p); wait; cat /tmp/flips.out",
    ])
    proc = subprocess.run(
        ["unshare", "-m", "--propagation", "private", "bash", "-c", script], cwd="/", capture_output=True, timeout=300
    )
    words = proc.stdout.decode().split()
    counts = {
        words[i]: int(words[i + 1])
        for i in range(len(words) - 1)
        if words[i] in ("violations", "runs", "flips", "refused")
    }
    assert {"violations", "flips", "runs"} <= counts.keys(), proc.stdout.decode() + proc.stderr.decode()
    return counts


class TestParentSwaps:
    """Finding 9: on a /tmp without the sticky bit, a level exchanged for a link mid-run is never followed."""

    def test_provision_as_a_user_never_acts_through_an_exchanged_container(self) -> None:
        target = f"{HOME}/target"
        driver = f"""
            import os, shutil, stat
            from nxsock.core.fsview import LiveView
            from nxsock.act.provisioning import provision_for_user
            def state():
                st = os.lstat("{target}")
                return stat.S_IMODE(st.st_mode), sorted(os.listdir("{target}"))
            before = state()
            bad = refused = 0
            for _ in range({PROVISION_RACE_RUNS}):
                report = provision_for_user(LiveView(), os.getuid(), os.getgid(), dry_run=False)
                refused += report.refusal is not None
                if state() != before:
                    bad += 1
                    for name in os.listdir("{target}"):
                        shutil.rmtree("{target}/" + name, ignore_errors=True)
                    os.chmod("{target}", before[0])
            print("violations", bad, "runs", {PROVISION_RACE_RUNS}, "refused", refused)
        """
        setup = (f"chmod 0777 /tmp; install -d -m 1777 /tmp/.nx; install -d -m 0755 -o {U} {target}; "
                 f"ln -s {target} /tmp/.nx-link; chown -h {P} /tmp/.nx-link")
        counts = _race(setup, driver, "/tmp/.nx", "/tmp/.nx-link")
        print(f"provision race: {counts}")
        COUNTS["violations"] += counts["violations"]
        assert counts["violations"] == 0 and counts["flips"] > 1000

    def test_reset_legacy_never_acts_through_an_exchanged_temp_dir(self) -> None:
        work = f"{HOME}/work"
        driver = f"""
            import os
            from nxsock.act.cleanup import reset
            from nxsock.core.host_overrides import HostOverrides
            from nxsock.core.snapshot import build_resolution
            def state():
                return sorted(os.listdir("{work}"))
            before = state()
            bad = 0
            for _ in range({RACE_RUNS}):
                resolution, _ = build_resolution(HostOverrides(workspace="{HOME}", tmpdir="/tmp/t"))
                reset(resolution, dry_run=False, force=True, legacy=True)
                if state() != before:
                    bad += 1
                    break  # what was removed is gone; one is enough
            print("violations", bad, "runs", {RACE_RUNS})
        """
        setup = (f"chmod 0777 /tmp; install -d -o {U} /tmp/t {work}; {_legacy_shapes(work)}; "
                 f"ln -s {work} /tmp/t-link; chown -h {P} /tmp/t-link")
        counts = _race(setup, driver, "/tmp/t", "/tmp/t-link")
        print(f"reset race: {counts}")
        COUNTS["violations"] += counts["violations"]
        assert counts["violations"] == 0 and counts["flips"] > 1000
