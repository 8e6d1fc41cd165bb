"""``doctor --explain`` proven on the real Nx: each corpus state rebuilt, the same Nx command run, the remedy
``--explain`` gives applied, Nx run again (the stored captures are read by ``tests/pure/test_explain.py``)."""
from __future__ import annotations

import concurrent.futures
import json
import os
import sys
import typing as t
from pathlib import Path

import pytest

from nxsock.audit.explain import WRAPPERS, explain

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
sys.path.insert(0, str(CORPUS))
import capture  # noqa: E402

CAPTURES = {entry["file"]: (entry, text) for entry, text in capture.corpus()}
EXPECTED: dict[str, list[list[str | None]]] = json.loads((CORPUS / "expected.json").read_text())
WITH_MESSAGES = sorted(f for f, messages in EXPECTED.items() if messages)
from harness import in_xdist_worker  # noqa: E402

PREFERENCE = ("run", "client", "daemon-status", "daemon-start", "client-log")


#: Captures a test of their own proves, more closely and in less time: the generic proof would wait out Nx's own
#: 66 s for a daemon that cannot start, twice, to show only that a message with no command is still printed.
#: A watch never ends by itself, so the generic rerun cannot judge one: its own test waits for the watch to register.
PROVEN_ELSEWHERE = frozenset({"24.0.6/inotify-limit--client-log.txt", "24.0.6/version-changed--watch-version.txt"})


def _proof_captures() -> list[str]:
    """One capture per release and state (the quickest command that shows its messages); every one with
    NXSOCK_CORPUS_PROOF=all."""
    if os.environ.get("NXSOCK_CORPUS_PROOF") == "all":
        return WITH_MESSAGES
    chosen: dict[tuple[str, str], str] = {}
    for file in (f for f in WITH_MESSAGES if f not in PROVEN_ELSEWHERE):
        entry, _ = CAPTURES[file]
        key = (entry["release"], entry["state"])
        if key not in chosen or PREFERENCE.index(entry["command_id"]) < PREFERENCE.index(
            CAPTURES[chosen[key]][0]["command_id"]
        ):
            chosen[key] = file
    return sorted(chosen.values())


STATES = {state.name: state for state in capture.STATES}


def _prove(file: str) -> tuple[dict[str, t.Any], dict[str, t.Any] | None]:
    """After Nx ran, and (for a standing cause, not a one-time event such as a kill) on the state as built."""
    entry, stored = CAPTURES[file]
    state = STATES[entry["state"]]
    fresh = (capture.prove(entry["release"], state, entry["command_id"], text=capture.retarget(stored, entry["uid"]))
             if state.standing else None)  # the stored text names the capture's uids: retargeted
    if not state.reprint:  # Nx would take minutes to print it again: the stored capture, pasted, is the proof
        assert fresh is not None
        return fresh, None
    return capture.prove(entry["release"], state, entry["command_id"]), fresh


@pytest.fixture(scope="module")
def proofs(request: pytest.FixtureRequest) -> t.Iterator[dict[str, concurrent.futures.Future[t.Any]]]:
    """The selected proofs, run four at a time (each in its own namespaces), awaited by the test that needs one.

    Under pytest-xdist every worker collects every test but runs only some: each proof is then started by the
    test that needs it, and the workers run them side by side.
    """
    wanted = [item.callspec.params["file"] for item in request.session.items
              if getattr(item, "module", None) is sys.modules[__name__] and item.name.startswith("test_the_remedy")
              and hasattr(item, "callspec")]
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        if in_xdist_worker():
            yield _OnDemand(pool)
        else:
            yield {file: pool.submit(_prove, file) for file in dict.fromkeys(wanted)}


class _OnDemand(dict[str, "concurrent.futures.Future[t.Any]"]):
    """A proof started when a test first asks for it."""

    def __init__(self, pool: concurrent.futures.ThreadPoolExecutor) -> None:
        super().__init__()
        self._pool = pool

    def __missing__(self, file: str) -> concurrent.futures.Future[t.Any]:
        self[file] = self._pool.submit(_prove, file)
        return self[file]


def _kinds(text: str) -> set[str]:
    return {m.matched for m in explain(text).messages}


#: Captures whose remedy is known not to work yet, each with why: the proof runs and must still fail (strict).
UNPROVEN: dict[str, str] = {}


def _marks(file: str) -> list[pytest.MarkDecorator]:
    """A capture's marks: strict xfail while its remedy is unproven, and what building its state needs."""
    tools = STATES[CAPTURES[file][0]["state"]].tools
    return ([pytest.mark.xfail(strict=True, reason=UNPROVEN[file])] if file in UNPROVEN else []) + (
        [pytest.mark.tool(*tools)] if tools else [])


@pytest.mark.parametrize("file", [pytest.param(f, marks=_marks(f)) for f in _proof_captures()])
def test_the_remedy_given_for_each_message_makes_the_same_nx_command_stop_printing_it(
    file: str, proofs: dict[str, concurrent.futures.Future[t.Any]]
) -> None:
    """In the state that produced it: recognised again; every message answered; remedies applied; Nx quiet and exit 0.

    Twice: as Nx left the state (what the user pastes from), and on the state
    as built, before Nx ran, with the stored capture pasted (a rerun that is
    Nx's first, so the remedy is what makes the difference).
    """
    after_run, fresh = proofs[file].result(timeout=1800)
    expected = {m[0] for m in EXPECTED[file]}
    for proof in (p for p in (after_run, fresh) if p is not None):
        assert "error" not in proof, proof.get("error")
        document = proof["doctor"]
        assert document is not None, proof["doctor_raw"]
        assert _kinds(proof["before"]) - WRAPPERS == expected - WRAPPERS, proof["before"][-3000:]  # recognised again
        assert [m["matched"] for m in document["messages"]] == [m.matched for m in explain(proof["before"]).messages]
        assert all(m["remedy_source"] in ("this machine", "general") for m in document["messages"])
        # a message gets a command, or (where the policy finds none safe) none and the reason: never neither
        withheld = {m["matched"] for m in document["messages"] if m["remedy"] is None}
        assert all(m["remedy"] or (m["hint"] or "").startswith("No safe command") for m in document["messages"]), (
            document["messages"]
        )
        assert not _kinds(proof["after"]) & (expected - withheld), proof["after"][-3000:]
        if not withheld & expected:
            assert proof["after_rc"] == 0, proof["after"][-3000:]
    for step in fresh["applied"] if fresh is not None else ():
        assert step["rc"] in (0, None), step


class TestUnrecognisedTextOnRealStates:

    @pytest.mark.parametrize(("setup", "env", "code"), [
        ("install -d -m 1777 -o {peer} /tmp/.nx", {}, 0),  # warnings
        ("install -d -m 0777 -o {peer} /tmp/peerdata", {"NX_WORKSPACE_DATA_DIRECTORY": "/tmp/peerdata"}, 1),  # an error
    ], ids=["warnings", "error"])
    def test_every_check_runs_and_the_exit_code_is_plain_doctors(
        self, setup: str, env: dict[str, str], code: int
    ) -> None:
        from harness import PEER, USER, run_as_user

        ws = f"/home/u{USER}/ws"
        state = f"install -d -o {USER} {ws}; echo '{{}}' > {ws}/nx.json; " + setup.format(peer=PEER)
        plain = run_as_user(state, ["doctor", "--json"], env=env, cwd=ws)
        explained = run_as_user(state, ["doctor", "--json", "--explain", "hello world"], env=env, cwd=ws)
        document = json.loads(explained.stdout)
        assert document["recognised"] is False
        assert [f["id"] for f in document["findings"]] == [f["id"] for f in json.loads(plain.stdout)["findings"]]
        assert any(f["severity"] in ("warn", "error") for f in document["findings"])
        assert explained.returncode == plain.returncode == code


class TestWorkspaceDataFinding:

    def test_a_link_on_the_way_to_another_users_data_gets_no_command(self) -> None:
        """Root's link where .nx belongs: rm, chown or chmod could act on its target, so no command is printed."""
        from harness import USER, run_as_user

        ws = f"/home/u{USER}/ws"
        setup = (
            f"install -d -o {USER} {ws}; echo '{{}}' > {ws}/nx.json; install -d -m 0755 /tmp/target/workspace-data; "
            f"ln -s /tmp/target {ws}/.nx"
        )
        document = json.loads(run_as_user(setup, ["doctor", "--json", "--only", "workspace-data"], cwd=ws).stdout)
        [found] = document["findings"]
        assert found["severity"] == "error" and found["remedy"] is None and "link" in found["message"]

    def test_sudo_nx_leftovers_in_a_root_owned_dot_nx_get_no_command_and_say_why(self) -> None:
        """Root's ``<ws>/.nx`` (``sudo nx``): the policy neither re-owns nor removes it, so no command is printed — and
        why not is."""
        from harness import USER, run_as_user

        ws = f"/home/u{USER}/ws"
        setup = (
            f"install -d -o {USER} {ws}; echo '{{}}' > {ws}/nx.json; install -d -m 0755 "
            f"{ws}/.nx {ws}/.nx/workspace-data"
        )
        result = run_as_user(setup, ["doctor", "--json", "--only", "workspace-data"], cwd=ws)
        [found] = json.loads(result.stdout)["findings"]
        assert found["severity"] == "error" and found["path"] == f"{ws}/.nx"
        assert found["remedy"] is None and found["remedy_steps"] is None
        assert found["hint"].startswith("No safe command") and f"{ws}/.nx" in found["hint"]
        assert "sudo" not in result.stdout  # not in the hint either: nothing to paste

    def test_sudo_nx_leftovers_under_your_own_dot_nx_are_removed_as_root(self) -> None:
        """Only ``workspace-data`` is root's: it is Nx's own state, removed (and rebuilt by Nx); Nx then writes there
        again."""
        from harness import USER, run_as_user

        ws = f"/home/u{USER}/ws"
        setup = (
            f"install -d -o {USER} {ws}; echo '{{}}' > {ws}/nx.json; install -d -m 0755 -o {USER} -g {USER} {ws}/.nx; "
            f"install -d -m 0755 {ws}/.nx/workspace-data"
        )
        [found] = json.loads(run_as_user(setup, ["doctor", "--json", "--only", "workspace-data"], cwd=ws).stdout)[
            "findings"
        ]
        assert found["remedy"] == f"sudo rm -rf -- {ws}/.nx/workspace-data"
        fixed = run_as_user(
            f"{setup}; {found['remedy'].replace('sudo ', '')}", ["doctor", "--json", "--only", "workspace-data"], cwd=ws
        )
        assert json.loads(fixed.stdout)["findings"] == []


@pytest.mark.parametrize("file", ["24.0.6/socket-dir-shared--client.txt", "23.3.2/socket-path-too-long--client.txt"])
def test_the_disabled_markers_command_alone_fixes_its_cause_and_clears_the_marker(file: str) -> None:
    """Only the command given for "Nx Daemon is going to be disabled …" is run: Nx is then quiet, the daemon on again.

    Before, it was the marker's removal alone (the cause printed it again) or the cause's alone (the marker kept
    the daemon off).
    """
    entry, stored = CAPTURES[file]
    state = STATES[entry["state"]]
    proof = capture.prove(entry["release"], state, entry["command_id"], text=capture.retarget(stored, entry["uid"]),
                          only="daemon-disabled")
    assert "error" not in proof, proof.get("error")
    [applied] = proof["applied"]
    assert applied["remedy"].endswith("&& nxsock reset --daemon-marker"), applied
    assert not _kinds(proof["after"]), proof["after"][-3000:]
    assert proof["after_rc"] == 0, proof["after"][-3000:]
    assert (proof["marker_after"], proof["daemon_after"]) == (False, True)  # the client used a daemon again


#: Reads the ``sysctl`` line out of the inotify-limit message's hint in ``doctor --explain --json`` on stdin.
SYSCTL_LINE_OF_HINT = (
    'import json, re, sys; [m] = [m for m in json.load(sys.stdin)["messages"] if m["matched"] == "inotify-limit"]; '
    'print(re.search(r"`(sysctl user[.]max_inotify_watches=[0-9]+)`", m["hint"]).group(1))'
)


def test_the_inotify_limits_line_run_as_root_then_nx_reset_brings_the_daemon_back() -> None:
    """The limit has no command nxsock runs (a kernel setting): the line its reason gives, run as the container's root,
    then ``nx reset``: the same client then uses a daemon, and none of the messages comes back.

    The state is a user namespace of its own whose ``user.max_inotify_watches`` is 2 (tests/corpus/capture.py); the
    stored capture is pasted, so Nx's own 66 s wait for a daemon that cannot start is not run again.
    """
    import re
    import shlex

    import harness

    entry, stored = CAPTURES["24.0.6/inotify-limit--client-log.txt"]
    state = STATES[entry["state"]]
    python, pythonpath = harness.stage_nxsock()
    q = shlex.quote
    text = capture.retarget(stored, entry["uid"])
    script = f"""{capture._workspace(entry["release"], state)}
{state.setup}
set +e
echo '<<<DOCTOR'
printf %s {q(text)} | as_user env PYTHONPATH={q(pythonpath)} PYTHONDONTWRITEBYTECODE=1 {q(python)} -m nxsock \\
  doctor --explain - --json
echo '<<<LINE'
line=$(printf %s {q(text)} | as_user env PYTHONPATH={q(pythonpath)} {q(python)} -m nxsock doctor --explain - --json \\
  | {q(python)} -c {q(SYSCTL_LINE_OF_HINT)})
echo "$line"
echo '<<<ROOT'
$line
echo '<<<RESET'
as_user npx nx reset 2>&1
echo '<<<AGAIN'
as_user env NX_DAEMON=true npx nx show projects 2>&1
as_user env NX_DAEMON=true npx nx daemon 2>&1
echo '<<<END'
"""
    out = capture.run_in_namespace(script, 400, capture._user_namespace(state))
    document = json.loads(capture.section(out, "DOCTOR"))
    inotify = [m for m in document["messages"] if m["matched"] == "inotify-limit"]
    assert inotify and all(
        m["remedy"] is None and "sudo sysctl fs.inotify.max_user_watches=" in m["hint"] for m in inotify
    )
    assert re.fullmatch(r"sysctl user\.max_inotify_watches=\d+\n", capture.section(out, "LINE")), out[-3000:]
    assert "= 524288" in capture.section(out, "ROOT"), out[-3000:]
    again = capture.section(out, "AGAIN")
    assert not _kinds(again), again  # no inotify limit, no disabled marker, no daemon that failed
    assert re.search(r"Daemon is (?:currently )?running", again) and "pkg" in again, again


def test_nx_watch_told_the_nx_version_changed_runs_again_on_the_installed_nx_and_outlives_a_daemon_restart() -> None:
    """``nx watch`` (24.0.6) running while node_modules/nx becomes 24.0.5, whose client restarts the daemon, prints
    "Nx version changed" and exits: for real, here.  ``doctor --explain`` names the installed version and the running
    daemon's; its command is run as the user, then ``nx watch`` again on the installed Nx: it registers, and the same
    daemon restart that ended the first watch no longer does (it reconnects, prints nothing, keeps running).

    Every wait is on an event: the daemon's log (where Nx's clients log too) saying a watcher registered or
    reconnected, the first watch's exit.
    """
    import re
    import shlex

    import harness

    entry, _ = CAPTURES["24.0.6/version-changed--watch-version.txt"]
    state = STATES[entry["state"]]
    python, pythonpath = harness.stage_nxsock()
    q = shlex.quote
    nxsock = f"env PYTHONPATH={q(pythonpath)} PYTHONDONTWRITEBYTECODE=1 {q(python)} -m nxsock"
    log = f"{capture.DATA}/d/daemon.log"
    # until the log has more lines with $1 than $2; at most 120 s (Nx's own 60 s for a daemon to answer, twice)
    more = (f"#!/bin/sh\nn=0; until [ \"$(grep -c -F -e \"$1\" {log} 2>/dev/null)\" -gt \"$2\" ]; do "
            "sleep 0.1; n=$((n + 1)); [ $n -lt 1200 ] || exit 1; done\n")
    registered = f"grep -c -F 'File watcher registered' {log}"
    reconnected = f"grep -c -F '[FileWatcher] Reconnected successfully' {log}"
    watch = ("NX_DAEMON=true npx nx watch --all -- echo changed >/home/.proof/watch.out 2>&1 & "
             "echo $! >/home/.proof/watch.pid")
    as_user = f"as_user env PATH={q(capture.USER_PATH)} bash -c"
    script = f"""{capture._workspace(entry["release"], state)}
{state.setup}
set +e
install -d -m 0777 /home/.proof
printf %s {q(more)} >/home/.proof/more && chmod 0755 /home/.proof/more
echo '<<<NX'
as_user timeout -k 5 {state.timeout} bash -c {q(capture.nx_command(state, entry["command_id"]))} </dev/null \
  >/home/.proof/before.txt 2>&1
echo "rc $?"
cat /home/.proof/before.txt
echo '<<<DOCTOR'
as_user {nxsock} doctor --explain - --json </home/.proof/before.txt
echo '<<<APPLIED'
remedy=$(as_user {nxsock} doctor --explain - --json </home/.proof/before.txt | {q(python)} -c 'import json, sys
print(*(m["remedy"] for m in json.load(sys.stdin)["messages"] if m["matched"] == "version-changed"))')
{as_user} "$remedy" 2>&1
echo "rc $?"
echo '<<<WATCH'
before=$({registered} 2>/dev/null || echo 0)
{as_user} {q(watch)} </dev/null
as_user /home/.proof/more 'File watcher registered' "$before"; echo "registered $?"
echo '<<<RESTART'
before=$({reconnected})
{as_user} 'npx nx daemon --stop && npx nx daemon --start' </dev/null 2>&1
as_user /home/.proof/more '[FileWatcher] Reconnected successfully' "$before"; echo "reconnected $?"
kill -0 "$(cat /home/.proof/watch.pid)" && echo "watch alive"
echo '<<<WATCHED'
cat /home/.proof/watch.out
echo '<<<END'
"""
    out = capture.run_in_namespace(script, 500)
    printed = capture.section(out, "NX")
    assert printed.startswith("rc 1\n") and _kinds(printed) == {"version-changed"}, out[-3000:]
    [message] = json.loads(capture.section(out, "DOCTOR"))["messages"]
    assert message["matched"] == "version-changed" and message["remedy"] == "nx daemon --stop", message
    # this machine's versions: 24.0.5 installed, and the daemon its client restarted already runs it
    assert "Nx 24.0.5 installed and the daemon already runs it" in message["hint"], message
    assert "which runs Nx 24.0.5" in message["hint"] and "`npx nx" in message["hint"], message
    assert capture.section(out, "APPLIED").endswith("rc 0\n"), out[-3000:]
    assert "registered 0" in capture.section(out, "WATCH"), out[-3000:]
    restart = capture.section(out, "RESTART")
    assert "reconnected 0" in restart and "watch alive" in restart, out[-3000:]
    watched = capture.section(out, "WATCHED")
    assert not _kinds(watched) and not re.search(r"version changed|restart your", watched, re.I), watched


#: Of the command ``doctor --explain --json`` on stdin gives the os-error-13 message, the steps argv[1] names
#: ("umask": its ``umask`` step, "levels": every other, or "both"), as the user pastes them.
STEPS_OF_THE_OS_ERROR_13_COMMAND = """import json, sys
[m] = [m for m in json.load(sys.stdin)["messages"] if m["matched"] == "os-permission-denied"]
want = sys.argv[1]
print(" && ".join(p for p in m["remedy"].split(" && ")
                  if want == "both" or p.startswith("umask ") == (want == "umask")))"""


@pytest.mark.parametrize("half", ["umask", "levels", "both"])
def test_under_a_umask_of_0277_both_halves_of_the_command_are_needed(half: str) -> None:
    """Nx 24.0.6 run under a umask of 0277 prints ``Permission denied (os error 13)`` and leaves its levels 0500;
    ``doctor --explain``'s command sets the umask back *and* repairs them. Pasted in that shell, only the whole command
    lets the same Nx command run: the umask alone leaves the 0500 levels Nx cannot write in, the repairs alone leave a
    umask under which Nx makes them 0500 again. Plain ``doctor`` gives each of its findings there that same command.
    """
    import re
    import shlex

    import harness

    entry, _ = CAPTURES["24.0.6/umask-0277--run.txt"]
    state = STATES[entry["state"]]
    python, pythonpath = harness.stage_nxsock()
    q = shlex.quote
    nx = capture.nx_command(state, entry["command_id"])
    script = f"""{capture._workspace(entry["release"], state)}
{state.setup}
set +e
install -d -m 0777 /home/.proof
echo '<<<NX'
as_user timeout -k 5 {state.timeout} bash -c {q(nx)} </dev/null >/home/.proof/before.txt 2>&1
echo "rc $?"
cat /home/.proof/before.txt
echo '<<<DOCTOR'
as_user env PYTHONPATH={q(pythonpath)} PYTHONDONTWRITEBYTECODE=1 {q(python)} -m nxsock doctor --explain - --json \\
  </home/.proof/before.txt >/home/.proof/doctor.json
cat /home/.proof/doctor.json
echo '<<<FINDINGS'
as_user env PYTHONPATH={q(pythonpath)} PYTHONDONTWRITEBYTECODE=1 {q(python)} -m nxsock doctor --json
echo '<<<PASTED'
{q(python)} -c {q(STEPS_OF_THE_OS_ERROR_13_COMMAND)} {half} </home/.proof/doctor.json >/home/.proof/pasted
cat /home/.proof/pasted
echo '<<<AGAIN'
as_user timeout -k 5 {state.timeout} bash -c "$(cat /home/.proof/pasted) || exit 99; {nx}" </dev/null 2>&1
echo "rc $?"
echo '<<<END'
"""
    out = capture.run_in_namespace(script, 2 * state.timeout + 60)
    printed = capture.section(out, "NX")
    assert printed.startswith("rc 1\n") and _kinds(printed) == {"os-permission-denied"}, out[-3000:]
    [message] = json.loads(capture.section(out, "DOCTOR"))["messages"]
    assert re.fullmatch(rf"umask 0077 && chmod 0700 -- /tmp/\.nx/{harness.USER} && rm -rf -- {capture.WS}/\.nx",
                        message["remedy"]), message
    # plain doctor, each of its warnings and errors: the same whole command (or none), never a part of it
    findings = [f for f in json.loads(capture.section(out, "FINDINGS"))["findings"]
                if f["severity"] in ("warn", "error")]
    assert findings and {f["remedy"] for f in findings} <= {message["remedy"], None}, findings
    assert any(f["id"] == "private-levels" and f["remedy"] == message["remedy"] for f in findings), findings
    pasted = capture.section(out, "PASTED").strip()
    assert pasted and pasted.startswith("umask 0077") == (half != "levels"), out[-3000:]
    again = capture.section(out, "AGAIN")
    if half == "both":
        assert again.endswith("rc 0\n") and not _kinds(again) and "Successfully ran target hello" in again, again
    else:
        assert again.endswith("rc 1\n") and _kinds(again) == {"os-permission-denied"}, again
