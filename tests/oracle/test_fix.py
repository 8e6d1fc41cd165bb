"""``doctor --fix`` racing a peer that plants a link or a directory where the plan creates one, with the real Nx
installed in the workspace (the pseudo-terminal session is ``tests/system/test_fix.py``'s)."""
from __future__ import annotations

import shlex

import pytest
from harness import (
    PEER,
    USER,
    changed_outside,
    install_nx,
)
from system.test_fix import HOME, WS, _pty_run


@pytest.mark.parametrize("attack", ["link", "directory"])
class TestPeerBetweenPlanAndApply:
    """Nx 23.3.2 with ``TMPDIR=/tmp/claude`` missing: the plan creates it ``0700``; the peer makes it first."""


    def test_a_name_the_peer_takes_after_the_plan_is_refused_and_nothing_outside_is_touched(self, attack: str) -> None:
        nx = install_nx("23.3.2")
        victim = f"{HOME}/victim"
        plant = (f"ln -s {victim} /tmp/claude" if attack == "link" else "mkdir -m 0777 /tmp/claude")
        peer = f"setpriv --reuid={PEER} --regid={PEER} --clear-groups bash -c {shlex.quote(plant)}"
        setup = (f"install -d -m 0700 -o {USER} -g {USER} {victim} {victim}/inner; echo precious > {victim}/file; "
                 f"chown {USER} {victim}/file; install -d -o {USER} {WS}/node_modules; "
                 f"ln -s {shlex.quote(str(nx / 'node_modules' / 'nx'))} {WS}/node_modules/nx")
        ran, before, after = _pty_run(setup, [], attack=peer, env=["TMPDIR=/tmp/claude"])
        assert ran["answered"], ran["out"]
        assert "mkdir -m 0700 -- /tmp/claude" in ran["out"]  # the plan had it
        # the policy, asked again at the moment of the step, sees it (the acting code would too: TestActingRefuses…)
        assert "✗ refused" in ran["out"] and "/tmp/claude already exists" in ran["out"], ran["out"]
        assert ran["rc"] == 1, ran["out"]
        # only the peer's own entry is new; the victim's tree, and the peer's directory, are as they were
        assert changed_outside(before, after, []) == ["added /tmp/claude"], changed_outside(before, after, [])
        kind = "l" if attack == "link" else "d"
        planted = [line for line in after.splitlines() if line.endswith(" /tmp/claude")]
        assert planted and planted[0].split()[0] == kind and planted[0].split()[1] == str(PEER)
        if attack == "directory":
            assert planted[0].split()[3] == "777"  # never tightened, never handed over
        # and the audit after the steps sees what the peer did: TMPDIR now names the peer's link or directory
        what = "a link" if attack == "link" else "a directory"
        assert f"TMPDIR names /tmp/claude, {what} owned by uid {PEER}" in ran["out"], ran["out"]


