"""Proof by the real Nx: in each failure state the printed remedy, applied, makes the real daemon start and answer.

For every state below, on Nx 24.0.6 and 23.3.2, in a private mount and pid
namespace (fresh ``/tmp`` and ``/home``; ``--kill-child`` ends every daemon):

1. the real Nx fails or degrades (``nx daemon --start``, then
   ``NX_DAEMON=true nx show projects``);
2. ``nxsock doctor --json`` reports the state and prints a remedy, which is
   applied as it is written — each ``sudo`` part as root, the rest as the user;
3. ``nxsock paths --json`` predicts the socket root, the real daemon then
   starts there (its ``server-process.json`` names a socket under that root),
   a real client command is answered by it (``[Messenger] Received message``
   in ``daemon.log``), and ``doctor`` reports no warning or error any more.

Each state is built, and the real Nx fails in it, once per release: from that
one failure state (the driver restores it between them) the remedy is applied
by hand as printed and, in a second branch, by ``doctor --fix --yes`` (or, where
only root can help, ``--fix`` is shown to apply none of it); each test reads its
branch of the one proof (all of a state and release run on one xdist worker).

Several states are another user's doing (a peer's container, a planted
private level, a peer's link, a peer's socket, a daemon and directories root
left behind by ``sudo nx``).  Run: ``pytest tests/oracle/test_remedies_real.py``.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import typing as t
from pathlib import Path

import pytest
from documents import checked, schema_name
from harness import PEER, PRIVATE_NAMESPACES, USER, install_nx, stage_nxsock, stage_oracle

DRIVER = Path(__file__).resolve().parents[1] / "remedy_driver.py"
HOME = f"/home/u{USER}"
WS = f"{HOME}/ws"
XDG = f"/tmp/xdg-{USER}"
DEEP = f"{HOME}/" + "d" * 70


class State(t.NamedTuple):
    name: str
    setup: str  # shell, as root, after the workspace exists ($U, $PEER, $WS, $NX are set)
    finding: str  # the doctor finding whose remedy is applied
    remedy: t.Callable[[str], bool]  # what that remedy must look like
    failed: t.Callable[[dict[str, t.Any]], bool]  # how the real Nx failed or degraded before
    tier: str  # where the daemon's socket must be afterwards
    env: t.Mapping[str, str | None] = {}
    versions: tuple[str, ...] = ("24.0.6", "23.3.2")
    workspace: str = WS
    allowed_after: tuple[str, ...] = ()  # finding ids a state may keep after the fix (none by default)


def _socket(before: dict[str, t.Any]) -> str:
    return str((before.get("record") or {}).get("socketPath") or "")


def _no_daemon(before: dict[str, t.Any]) -> bool:
    return before["start"]["rc"] != 0 or before["answered"] == 0


STATES = [
    State(
        "peer-container",
        "install -d -m 1777 -o $PEER /tmp/.nx",
        "container",
        lambda r: r.startswith("sudo chown -h root:root -- /tmp/.nx"),
        lambda b: not _socket(b).startswith("/tmp/.nx/"),
        "shared",
    ),
    State(
        "planted-private-level",
        f"install -d -m 1777 /tmp/.nx; install -d -m 0700 -o $PEER /tmp/.nx/{USER}",
        "private-levels",
        lambda r: r == f"sudo rm -rf -- /tmp/.nx/{USER}",
        lambda b: not _socket(b).startswith("/tmp/.nx/"),
        "shared",
    ),
    State(
        "peer-link-at-container",
        "install -d -m 0755 -o $PEER /home/peer; ln -s /home/peer /tmp/.nx; chown -h $PEER /tmp/.nx",
        "container",
        lambda r: r == "sudo rm -- /tmp/.nx && sudo install -d -m 1777 -o root -g root /tmp/.nx",
        lambda b: not _socket(b).startswith("/tmp/.nx/"),
        "shared",
    ),
    State(
        "configured-root-owned-dir",
        "install -d -m 0755 /home/srv-data",
        "configuration",
        lambda r: r == "unset NX_SOCKET_DIR",
        lambda b: not _socket(b).startswith("/tmp/.nx/"),
        "shared",
        env={"NX_SOCKET_DIR": "/home/srv-data"},
    ),
    State(
        "configured-os-temp",
        "",
        "configuration",
        lambda r: r == "unset NX_SOCKET_DIR",
        _no_daemon,
        "shared",
        env={"NX_SOCKET_DIR": "/tmp"},
    ),
    State(
        "configured-in-dotenv",
        f"printf 'A=1\\nNX_SOCKET_DIR=/tmp\\n' > {WS}/.env; chown $U {WS}/.env",
        "configuration",
        lambda r: r.startswith("sed -i -e ") and r.endswith(f"-- {WS}/.env"),
        _no_daemon,
        "shared",
    ),
    State(
        "cache-dir-is-tmp",
        "",
        "native-cache",
        lambda r: r == "unset NX_NATIVE_FILE_CACHE_DIRECTORY",
        lambda b: True,
        "shared",
        env={"NX_NATIVE_FILE_CACHE_DIRECTORY": "/tmp"},
    ),
    State(
        "root-daemon-left-by-sudo-nx",
        "cd $WS && env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root $NX/node_modules/.bin/nx daemon "
        "--start >/dev/null 2>&1; cd /",
        "daemon-record",
        lambda r: r.startswith("sudo kill -- ") and r.endswith(f"&& sudo rm -rf -- {WS}/.nx"),
        _no_daemon,
        "shared",
    ),
    State(
        "root-made-daemon-directory",
        f"install -d -m 0700 {WS}/.nx/workspace-data/d",
        "daemon-record",
        lambda r: r == f"sudo rm -rf -- {WS}/.nx",
        _no_daemon,
        "shared",
    ),
    State(
        "disabled-marker",
        f"install -d -o $U {WS}/.nx {WS}/.nx/workspace-data; install -d -m 0700 -o $U {WS}/.nx/workspace-data/d; "
        f"echo 'Daemon was disabled' > {WS}/.nx/workspace-data/d/disabled; chown $U {WS}/.nx/workspace-data/d/disabled",
        "daemon-disabled",
        lambda r: r == f"rm -- {WS}/.nx/workspace-data/d/disabled",
        _no_daemon,
        "shared",
    ),
    State(
        "unwritable-workspace-foreign-container-no-home",
        f"install -d -m 1777 -o $PEER /tmp/.nx; install -d -m 0700 -o $U {XDG}; chown root {WS}; chmod 0755 {WS}",
        "outcome",
        lambda r: r.startswith(f"export NX_WORKSPACE_DATA_DIRECTORY={XDG}/"),
        _no_daemon,
        "workspace",
        env={"HOME": None, "XDG_RUNTIME_DIR": XDG},
        allowed_after=("container", "outcome", "native-cache"),
    ),
    State(
        "over-long-path",
        f"install -d -m 1777 -o $PEER /tmp/.nx; install -d -m 0700 -o $U {XDG}",
        "path-budget",
        lambda r: r == f"export NX_SOCKET_DIR={XDG}/nx",
        _no_daemon,
        "configured",
        env={"HOME": "", "XDG_RUNTIME_DIR": XDG},
        workspace=DEEP,
        allowed_after=("container", "native-cache"),
    ),
    State(
        "no-room-for-the-binding-copy",
        "mount -o remount,size=4m /tmp",
        "native-cache",
        lambda r: r == "export NX_SKIP_NATIVE_FILE_CACHE=true",
        lambda b: "ENOSPC" in b["start"]["out"] + b["show"]["out"],
        "shared",
    ),
    State(
        "home-beneath-a-peers-directory",
        "install -d -m 1777 -o $PEER /tmp/.nx; install -d -m 0755 -o $PEER /home/peer; install -d -o $U "
        f"/home/peer/u {XDG}; chmod 0700 {XDG}",
        "ancestry",
        lambda r: r == f"export NX_SOCKET_DIR={XDG}/nx",
        lambda b: not _socket(b).startswith("/home/peer/"),
        "configured",
        env={"HOME": "/home/peer/u", "XDG_RUNTIME_DIR": XDG},
        versions=("24.0.6",),
        allowed_after=("container", "native-cache"),
    ),
]

#: A state where the dead daemon's record outlives it: the driver kills the daemon it started with SIGKILL.
STALE = State("stale-record-after-kill-9", "", "daemon-record", lambda r: r == "nxsock reset --force",
              lambda b: b["answered"] > 0, "shared")


def prove(state: State, version: str, **extra: t.Any) -> dict[str, t.Any]:
    """The state built, the real Nx before, and one way of applying the remedy (by hand; ``fix``; ``fix_root``)."""
    # NX_DAEMON=true: these states are about the real daemon, which Nx (and so doctor) keeps off in a container.
    nx = install_nx(version)
    python, pylib = stage_nxsock()
    ws = state.workspace
    config = {
        "uid": USER,
        "workspace": ws,
        "nx": str(nx),
        "python": python,
        "pylib": pylib,
        "env": {"NX_DAEMON": "true", **state.env},
        "finding": state.finding,
        "kill9": state is STALE,
        "allowed": list(state.allowed_after),
        **extra,
    }
    q = shlex.quote
    script = f"""
set -e
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs -o mode=0755 tmpfs /home
mount -t tmpfs tmpfs /etc/tmpfiles.d
printf 'd /tmp/.nx 1777 root root -\\n' > /etc/tmpfiles.d/nxsock.conf
U={USER}; PEER={PEER}; WS={q(ws)}; NX={q(str(nx))}
install -d -o $U -g $U {HOME} {q(ws)} {q(ws)}/node_modules
echo '{{}}' > {q(ws)}/nx.json; echo '{{"name":"w","private":true}}' > {q(ws)}/package.json
ln -s {q(str(nx / 'node_modules' / 'nx'))} {q(ws)}/node_modules/nx
chown -R $U:$U {q(ws)}
{state.setup}
cd /
exec {q(python)} {q(str(stage_oracle(DRIVER)))} {q(json.dumps(config))}
"""
    proc = subprocess.run(
        [*PRIVATE_NAMESPACES, "bash", "-c", script],
        capture_output=True, timeout=300 * len(extra.get("branches") or [None]), stdin=subprocess.DEVNULL,
    )
    text = proc.stdout.decode("utf-8", "replace")
    try:
        out = t.cast(dict[str, t.Any], json.loads(text.strip().splitlines()[-1]))
    except (ValueError, IndexError):
        raise AssertionError(
            f"the driver printed no document (rc {proc.returncode}):\n{text[-3000:]}\n{proc.stderr.decode()[-3000:]}"
        ) from None
    for args, document in out.pop("documents"):
        assert document is not None, f"nxsock {' '.join(args)} printed no JSON document"
        checked(document, schema_name(args) or "")
    return out


def branches_of(state: State, version: str) -> list[str]:
    """The ways of applying the remedy proven for *state* on *version*: ``--fix`` first (it leaves what root's state
    holds, such as a daemon root started, as it is), by hand last (its ``sudo kill`` ends that daemon)."""
    fix = ["fix_root"] if _needs_root(state) and version == "24.0.6" else [] if _needs_root(state) else ["fix"]
    return [*fix, "hand"]


#: Each (state, release) proven once per process: built, the real Nx failing in it once, then every way of applying
#: its remedy from that same failure state (the driver restores it between them) — what a test of it reads.
_PROOFS: dict[tuple[str, str], dict[str, t.Any] | Exception] = {}


def proof_of(state: State, version: str, branch: str) -> dict[str, t.Any]:
    """The failure state's proof (what Nx did before, doctor's document) with *branch*'s own (the remedy applied, the
    real Nx after); the state was built and Nx failed in it once for all branches."""
    key = (state.name, version)
    if key not in _PROOFS:
        try:
            _PROOFS[key] = prove(state, version, branches=branches_of(state, version))
        except Exception as exc:  # every test of the state fails with it, none builds the state again
            _PROOFS[key] = exc
    proof = _PROOFS[key]
    if isinstance(proof, Exception):
        raise AssertionError(f"the proof of {state.name} on {version} failed: {proof}") from proof
    shared = {k: v for k, v in proof.items() if k != "branches"}
    own = proof["branches"][branch]
    assert not own.get("state_processes_lost"), f"the state's own processes ended before {branch}: {own}"
    assert not own.get("differs"), f"{branch} did not start from the failure state: {own['differs'][:20]}"
    return {**shared, **own}


#: Findings the failure itself may leave, which doctor then reports with their own remedy.
FOLLOW_UPS = ("daemon-disabled", "leftovers", "sockets", "daemon-record")


def _problems(document: dict[str, t.Any] | None, allowed: t.Collection[str]) -> list[tuple[str, str, str]]:
    return [(f["id"], f["severity"], f["message"]) for f in (document or {"findings": []})["findings"]
            if f["severity"] in ("warn", "error") and f["id"] not in allowed]


def check_proof(state: State, proof: dict[str, t.Any]) -> None:
    before = proof["before"]
    assert state.failed(before), f"the real Nx did not fail or degrade before: {json.dumps(before)[:2000]}"
    finding = proof["finding"]
    assert finding is not None, f"doctor printed no remedy for {state.finding}: {json.dumps(proof['doctor'])[:3000]}"
    remedy = finding["remedy"]
    assert state.remedy(remedy), f"unexpected remedy {remedy!r}"
    applied = proof["applied"] + [part for step in proof["followed"] for part in step["applied"]]
    assert applied and all(part["rc"] == 0 for part in applied), applied
    for step in proof["followed"]:  # what the failure left behind (Nx's own disabled marker): doctor's next remedies
        assert step["finding"]["id"] in FOLLOW_UPS, step["finding"]
    assert all(part["as"] == ("root" if part["part"].startswith("sudo ") else part["as"]) for part in applied)
    paths = proof["paths"]
    assert paths is not None and proof["paths_rc"] == 0, proof.get("paths_rc")
    root = paths["socket_root"]
    assert root["tier"] == state.tier, root
    after = proof["after"]
    assert after["start"]["rc"] == 0, after["start"]
    socket = str((after["record"] or {}).get("socketPath"))
    predicted = str(root["root"]).rstrip("/") + "/"
    assert socket.startswith(predicted), (socket, predicted)  # the daemon is where paths said it would be
    assert after["show"]["rc"] == 0 and after["answered"] > 0, after["show"]
    assert _problems(proof["doctor_after"], state.allowed_after) == [], _problems(
        proof["doctor_after"], state.allowed_after
    )
    # doctor is quiet about the daemon's socket root, whatever else a state keeps
    near = [
        f
        for f in proof["doctor_after"]["findings"]
        if f["severity"] in ("warn", "error") and str(f["path"] or "").startswith(predicted)
    ]
    assert near == [], near


def _group(state: State, version: str) -> pytest.MarkDecorator:
    """Every test of one (state, release) on one xdist worker: the state is built and Nx fails in it once there."""
    return pytest.mark.xdist_group(f"remedies-{state.name}-{version}")


CASES = [pytest.param(s, v, id=f"{s.name}-{v}", marks=_group(s, v)) for s in [*STATES, STALE] for v in s.versions]


@pytest.mark.parametrize(("state", "version"), CASES)
def test_the_printed_remedy_makes_the_real_daemon_start_and_answer(state: State, version: str) -> None:
    """Failing before; the remedy applied as printed; then the real daemon starts where paths predicts and answers."""
    proof = proof_of(state, version, "hand")
    check_proof(state, proof)
    if state is STALE:  # reset itself removed the dead daemon's record, not only its directories
        assert "server-process.json" in proof["applied"][0]["out"], proof["applied"]


# -- doctor --fix on the same states ---------------------------------------------------------------


def _needs_root(state: State) -> bool:
    """Whether the state's own remedy is root's: ``--fix`` must list it and run nothing of it."""
    return "sudo " in STATE_REMEDIES[state.name]


#: Each state's remedy as the hand-applied proof above pins it (its first word tells root's from the user's).
STATE_REMEDIES = {
    "peer-container": "sudo chown", "planted-private-level": "sudo rm", "peer-link-at-container": "sudo rm",
    "configured-root-owned-dir": "unset", "configured-os-temp": "unset", "configured-in-dotenv": "sed",
    "cache-dir-is-tmp": "unset", "root-daemon-left-by-sudo-nx": "sudo kill", "root-made-daemon-directory": "sudo rm",
    "disabled-marker": "rm", "unwritable-workspace-foreign-container-no-home": "export", "over-long-path": "export",
    "no-room-for-the-binding-copy": "export", "home-beneath-a-peers-directory": "export", STALE.name: "nxsock reset",
}


def check_fix(state: State, proof: dict[str, t.Any]) -> None:
    """``--fix --yes`` as the user (and the shell lines it lists, as a shell would run them): the real Nx works
    after."""
    assert state.failed(proof["before"]), (
        f"the real Nx did not fail or degrade before: {json.dumps(proof['before'])[:2000]}"
    )
    rounds = proof["fix_rounds"]
    assert rounds and all(r["document"] is not None for r in rounds), [r["out"] for r in rounds]
    first = rounds[0]["document"]
    wanted = [i for i in first["plan"] + first["for_you"] if any(f["id"] == state.finding for f in i["findings"])]
    assert wanted, f"--fix has no remedy for {state.finding}: {json.dumps(first)[:3000]}"
    for round_ in rounds:
        document = round_["document"]
        assert document["schema_version"] == 1 and document["confirmed"] in (True, False)
        assert all(o["outcome"] == "fixed" for o in document["outcomes"]), document["outcomes"]
        assert all(not s["needs_root"] for i in document["plan"] for s in i["remedy_steps"]), document["plan"]
        assert all(not part["part"].startswith("sudo ") for part in round_["shell"]), round_["shell"]
    applied_by_fix = [o["remedy"] for r in rounds for o in r["document"]["outcomes"]]
    by_shell = [part["part"] for r in rounds for part in r["shell"]]
    if STATE_REMEDIES[state.name] in ("unset", "export"):
        assert by_shell and all(p.split()[0] in ("unset", "export") for p in by_shell), by_shell
    else:  # a file, a directory, nxsock's own reset: --fix itself applied it
        assert any(r.startswith(STATE_REMEDIES[state.name]) for r in applied_by_fix), (applied_by_fix, first)
    paths = proof["paths"]
    assert paths is not None and proof["paths_rc"] == 0, proof.get("paths_rc")
    root = paths["socket_root"]
    assert root["tier"] == state.tier, root
    after = proof["after"]
    assert after["start"]["rc"] == 0, after["start"]
    socket = str((after["record"] or {}).get("socketPath"))
    predicted = str(root["root"]).rstrip("/") + "/"
    assert socket.startswith(predicted), (socket, predicted)
    assert after["show"]["rc"] == 0 and after["answered"] > 0, after["show"]
    assert _problems(proof["doctor_after"], state.allowed_after) == [], _problems(
        proof["doctor_after"], state.allowed_after
    )


FIX_CASES = [pytest.param(s, v, id=f"{s.name}-{v}", marks=_group(s, v))
             for s in [*STATES, STALE] if not _needs_root(s) for v in s.versions]
ROOT_CASES = [pytest.param(s, id=s.name, marks=_group(s, "24.0.6")) for s in STATES if _needs_root(s)]


@pytest.mark.parametrize(("state", "version"), FIX_CASES)
def test_doctor_fix_makes_the_real_daemon_start_and_answer(state: State, version: str) -> None:
    """Failing before; ``doctor --fix --yes`` as the user (and the shell lines it leaves to the user); then the real
    daemon starts where paths predicts and answers a real client, and doctor is quiet."""
    check_fix(state, proof_of(state, version, "fix"))


@pytest.mark.parametrize("state", ROOT_CASES)
def test_doctor_fix_lists_what_needs_root_and_runs_none_of_it(state: State) -> None:
    """Where only root can help, ``--fix`` lists the sudo command with the reason and applies nothing of it."""
    proof = proof_of(state, "24.0.6", "fix_root")
    document = proof["fix_rounds"][0]["document"]
    assert document is not None, proof["fix_rounds"][0]["out"]
    listed = [i for i in document["for_you"] if any(f["id"] == state.finding for f in i["findings"])]
    assert listed and listed[0]["remedy"].startswith(STATE_REMEDIES[state.name]), document["for_you"]
    assert "needs root" in listed[0]["why_not"] and not listed[0]["applied_by_nxsock"]
    assert all(listed[0]["remedy"] != o["remedy"] for o in document["outcomes"])
    assert all(not s["needs_root"] for i in document["plan"] for s in i["remedy_steps"])
