"""check-root on real states, as a real unprivileged user, changing nothing."""

from __future__ import annotations

import pytest
from documents import parsed
from harness import PEER, USER, run_as_user

CASES = [
    ("absent", "", 0, "absent", None),
    ("root-provisioned", "install -d -m 1777 -o root -g root /tmp/.nx", 0, "ok", None),
    ("first user's own", f"install -d -m 1777 -o {USER} /tmp/.nx", 0, "ok", None),
    ("a peer's", f"install -d -m 1777 -o {PEER} /tmp/.nx", 1, "refused", "foreign-shared-container"),
    ("0777 without sticky", "install -d -m 0777 /tmp/.nx", 1, "refused", "peer-writable-not-sticky"),
    ("0755 root's", "install -d -m 0755 /tmp/.nx", 0, "ok", None),
    ("a symlink", f"mkdir /tmp/t; ln -s /tmp/t /tmp/.nx; chown -h {PEER} /tmp/.nx", 1, "refused", "not-a-directory"),
    ("a FIFO", "mkfifo -m 666 /tmp/.nx", 1, "refused", "not-a-directory"),
    ("a file", "echo x > /tmp/.nx", 1, "refused", "not-a-directory"),
    ("/tmp not writable and absent", "chmod 0755 /tmp", 1, "refused", "not-created"),
]


@pytest.mark.parametrize(("name", "setup", "code", "state", "kind"), CASES, ids=[c[0] for c in CASES])
def test_check_root_verdicts_on_real_states(name: str, setup: str, code: int, state: str, kind: str | None) -> None:
    """The verdict, the refusal kind and the exit code; the tree is left exactly as it was."""
    run = run_as_user(setup, ["check-root", "--json"])
    doc = parsed(run.stdout, "check-root")
    assert (run.returncode, doc["state"], doc["safe"]) == (code, state, code == 0), run.stderr
    assert (doc["refusal"] or {}).get("kind") == kind
    if kind is not None:
        assert doc["refusal"]["remedy"]
    assert run.tree_before == run.tree_after


def test_the_peer_containers_remedy_works_and_check_root_then_passes() -> None:
    """The printed remedy, run as root, makes the same container pass."""
    refused = run_as_user(f"install -d -m 1777 -o {PEER} /tmp/.nx", ["check-root", "--json"])
    remedy = parsed(refused.stdout, "check-root")["refusal"]["remedy"]
    assert remedy == "sudo chown -h root:root -- /tmp/.nx && test ! -L /tmp/.nx && sudo chmod 1777 -- /tmp/.nx"
    fixed = run_as_user(
        f"install -d -m 1777 -o {PEER} /tmp/.nx; {remedy.replace('sudo ', '')}", ["check-root", "--json"]
    )
    assert fixed.returncode == 0 and parsed(fixed.stdout, "check-root")["state"] == "ok"


def test_human_check_root_reads_without_colour() -> None:
    run = run_as_user(f"install -d -m 1777 -o {PEER} /tmp/.nx", ["check-root"], env={"NO_COLOR": "1"})
    assert run.returncode == 1 and "✗ unsafe" in run.stdout and "\x1b[" not in run.stdout
    assert (
        "fix:  sudo chown -h root:root -- /tmp/.nx && test ! -L /tmp/.nx && sudo chmod 1777 -- /tmp/.nx" in run.stdout
    )
