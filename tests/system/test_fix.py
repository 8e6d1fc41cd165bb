"""``doctor --fix``: the plan, the one question, each step applied by descriptor and refused when the disk changed.

The acting functions are tried on real directories with entries of another
real uid (as root, ``lchown``); the command is run as an unprivileged uid in a
private mount namespace (fresh ``/tmp`` and ``/home``), the whole tree
compared before and after.  The race between plan and apply is a real one:
``--fix`` waits at its question on a pseudo-terminal while the peer uid plants
a link or its own directory where the plan creates one; the answer then says
yes.  The real Nx working after ``--fix`` is proven in
``tests/oracle/test_remedies_real.py``.
"""
from __future__ import annotations

import json
import os
import shlex
import socket
import stat
import subprocess
import sys
import typing as t
from pathlib import Path

import pytest
from documents import parsed
from harness import (
    PEER,
    USER,
    changed_outside,
    default_signals,
    run_as_user,
    stage_nxsock,
)

from nxsock.act import acting
from nxsock.act.outcomes import Acted, Done, Refused

HOME = f"/home/u{USER}"
WS = f"{HOME}/ws"
MAKE_WS = f"install -d -o {USER} {WS}; echo '{{}}' > {WS}/nx.json; chown {USER} {WS}/nx.json"
D = f"{WS}/.nx/workspace-data/d"
MARKER = (
    f"install -d -o {USER} {WS}/.nx {WS}/.nx/workspace-data; install -d -m 0700 -o {USER} {D}; echo 'Daemon was "
    f"disabled' > {D}/disabled; chown {USER} {D}/disabled"
)


def said(outcome: Acted) -> str:
    """Why an act was refused or failed; nothing for one that was done."""
    return "" if isinstance(outcome, Done) else outcome.reason


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "nxsock", *args], capture_output=True, text=True, stdin=subprocess.DEVNULL
    )


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """A directory with a file in it, which no step may touch."""
    directory = tmp_path / "victim"
    directory.mkdir(mode=0o755)
    (directory / "x").write_text("precious")
    (directory / "sub").mkdir()
    return directory


def _peer_link(link: Path, target: Path) -> None:
    link.symlink_to(target)
    os.lchown(link, PEER, PEER)


class TestActingRefusesWhatChangedSinceTheAudit:
    def test_a_level_swapped_for_a_peers_link_is_refused_not_followed(self, tmp_path: Path, victim: Path) -> None:
        """remove, remove-tree, chmod and the .env edit walk the parent by the trust rule: a peer's link there stops
        them."""
        level = tmp_path / "level"
        _peer_link(level, victim)
        assert isinstance(acting.remove_file(str(level / "x"), 0), Refused)
        assert isinstance(acting.remove_tree(str(level / "sub"), 0), Refused)
        assert isinstance(acting.change_mode(str(level / "sub"), 0o700, 0), Refused)
        assert isinstance(acting.delete_env_lines(str(level / "x"), "NX_SOCKET_DIR", 0), Refused)
        assert isinstance(acting.create_directory(str(level / "new"), 0o700, 0), Refused)
        assert (victim / "x").read_text() == "precious" and (victim / "sub").is_dir()
        assert stat.S_IMODE(os.stat(victim / "sub").st_mode) == 0o755 and not (victim / "new").exists()

    def test_a_level_swapped_for_a_peers_directory_is_refused(self, tmp_path: Path) -> None:
        """A level of another uid could be swapped again under the act: nothing beneath it is touched."""
        level = tmp_path / "level"
        level.mkdir()
        (level / "d").mkdir()
        (level / "d" / "disabled").write_text("x")
        os.chown(level, PEER, PEER)
        assert "belongs to uid" in said(acting.remove_file(str(level / "d" / "disabled"), 0))
        assert (level / "d" / "disabled").exists()

    def test_the_entry_itself_swapped_for_a_peers_link_or_entry_is_refused(self, tmp_path: Path, victim: Path) -> None:
        """The entry is examined by lstat and fstat at the moment of acting: a link or another owner is refused."""
        _peer_link(tmp_path / "sockets", victim)
        assert "symlink" in said(acting.change_mode(str(tmp_path / "sockets"), 0o700, 0))
        assert "symlink" in said(acting.change_owner(str(tmp_path / "sockets"), 0, 0, 0))
        assert stat.S_IMODE(os.stat(victim).st_mode) == 0o755
        theirs = tmp_path / "disabled"
        theirs.write_text("theirs")
        os.chown(theirs, PEER, PEER)
        assert "belongs to uid" in said(acting.remove_file(str(theirs), 0))
        assert "belongs to uid" in said(acting.delete_env_lines(str(theirs), "NX_SOCKET_DIR", 0))
        planted = tmp_path / "tree"
        planted.mkdir()
        os.chown(planted, PEER, PEER)
        assert not isinstance(acting.remove_tree(str(planted), 0), Done) and planted.is_dir()

    def test_a_name_squatted_before_the_create_is_refused_and_left_as_it_is(self, tmp_path: Path, victim: Path) -> None:
        """mkdir finds a link or a directory of the peer: refused, never chmodded, never followed."""
        _peer_link(tmp_path / "claude", victim)
        assert "exists now (a symlink of uid" in said(acting.create_directory(str(tmp_path / "claude"), 0o700, 0))
        squat = tmp_path / "mine"
        squat.mkdir()
        squat.chmod(0o777)
        os.chown(squat, PEER, PEER)
        assert "a directory of uid" in said(acting.create_directory(str(squat), 0o700, 0))
        assert stat.S_IMODE(os.stat(victim).st_mode) == 0o755 and stat.S_IMODE(os.lstat(squat).st_mode) == 0o777

    def test_done_steps_do_exactly_what_they_say(self, tmp_path: Path) -> None:
        """A socket is re-moded through its O_PATH descriptor; a directory is created at its mode; a file goes."""
        path = tmp_path / "d.sock"
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(path))
        try:
            os.chmod(path, 0o666)
            assert isinstance(acting.change_mode(str(path), 0o600, 0), Done)
            assert stat.S_IMODE(os.lstat(path).st_mode) == 0o600
        finally:
            server.close()
        assert isinstance(acting.create_directory(str(tmp_path / "new"), 0o700, 0), Done)
        assert stat.S_IMODE(os.stat(tmp_path / "new").st_mode) == 0o700
        assert isinstance(acting.remove_file(str(path), 0), Done) and not path.exists()
        assert isinstance(acting.remove_file(str(path), 0), Done)  # already gone is what the step wanted

    def test_the_env_edit_deletes_only_the_lines_that_set_the_variable_and_keeps_the_rest_byte_for_byte(
        self, tmp_path: Path
    ) -> None:
        """As the printed sed line would: every line setting it (export, spaces), nothing else; the mode kept."""
        env = tmp_path / ".env"
        text = (
            b"A=1\nNX_SOCKET_DIR=/tmp\n  export NX_SOCKET_DIR = /x\nNX_SOCKET_DIRX=keep\n# "
            b"NX_SOCKET_DIR=comment\n\xff=raw\r\nlast"
        )
        env.write_bytes(text)
        env.chmod(0o640)
        inode = env.stat().st_ino
        assert isinstance(acting.delete_env_lines(str(env), "NX_SOCKET_DIR", 0), Done)
        assert env.read_bytes() == b"A=1\nNX_SOCKET_DIRX=keep\n# NX_SOCKET_DIR=comment\n\xff=raw\r\nlast"
        assert stat.S_IMODE(env.stat().st_mode) == 0o640 and env.stat().st_ino != inode
        assert [p.name for p in tmp_path.iterdir()] == [".env"]  # no temporary file left
        assert "no line" in said(acting.delete_env_lines(str(env), "NX_SOCKET_DIR", 0))


def fix(setup: str, *args: str, env: dict[str, str] | None = None, post: str = "") -> t.Any:
    result = run_as_user(f"{MAKE_WS}; {setup}", ["doctor", "--fix", *args], env=env, cwd=WS, post=post)
    assert "Traceback" not in result.stderr, result.stderr
    return result


class TestFixAsAUser:

    def test_without_a_terminal_and_without_yes_nothing_is_changed_and_it_says_how(self) -> None:
        result = fix(MARKER)
        assert result.returncode == 2 and "--yes" in result.stderr and "no terminal" in result.stderr
        assert result.tree_before == result.tree_after

    def test_dry_run_prints_the_plan_and_changes_nothing(self) -> None:
        result = fix(MARKER, "--dry-run", "--json")
        document = json.loads(result.stdout)
        assert result.tree_before == result.tree_after
        assert document["schema_version"] == 1 and document["dry_run"] and document["outcomes"] == []
        assert [i["remedy"] for i in document["plan"]] == [f"rm -- {D}/disabled"]
        assert document["plan"][0]["remedy_steps"][0]["verb"] == "remove" and document["findings"] is None
        human = fix(MARKER, "--dry-run")
        assert (
            f"rm -- {D}/disabled" in human.stdout
            and "dry run" in human.stdout
            and human.tree_before == human.tree_after
        )

    def test_yes_applies_the_plan_re_audits_and_changes_nothing_else(self) -> None:
        """The marker goes, by nxsock's own code; the re-audit no longer finds it; exit 0; nothing else changed."""
        result = fix(MARKER, "--yes", "--json")
        document = json.loads(result.stdout)
        assert result.returncode == 0, (result.stdout, result.stderr)
        assert [(o["remedy"], o["outcome"]) for o in document["outcomes"]] == [(f"rm -- {D}/disabled", "fixed")]
        assert document["status"] == "ok" and all(f["id"] != "daemon-disabled" for f in document["findings"])
        assert changed_outside(result.tree_before, result.tree_after, [f"{D}/disabled"]) == []
        assert f"{D}/disabled" in result.tree_before and f"{D}/disabled" not in result.tree_after

    def test_a_dotenv_is_edited_and_a_dead_state_reset_in_one_run(self) -> None:
        """The .env line goes (the others stay), and nxsock's own reset removes a dead per-run directory."""
        dead = f"/tmp/.nx/{USER}/sockets/0123456789abcdef0123"
        setup = (
            f"printf 'A=1\\nNX_SOCKET_DIR=/tmp\\nB=2\\n' > {WS}/.env; chown {USER} {WS}/.env; "
            f"install -d -m 1777 /tmp/.nx; install -d -m 0700 -o {USER} /tmp/.nx/{USER} "
            f"/tmp/.nx/{USER}/sockets {dead}; "
            f"touch -d '2 hours ago' {dead}"
        )
        result = fix(setup, "--yes", "--json", post=f"cat {WS}/.env")
        document = json.loads(result.stdout)
        outcomes = {o["remedy"]: o["outcome"] for o in document["outcomes"]}
        assert any(r.startswith("sed -i") and r.endswith(f"{WS}/.env") for r in outcomes), outcomes
        assert set(outcomes.values()) == {"fixed"}, document["outcomes"]
        assert result.post == "A=1\nB=2\n"
        assert dead in result.tree_before and dead not in result.tree_after

    def test_cache_prune_runs_in_process_by_the_pruning_code(self) -> None:
        """An untrusted cache entry of the user's: --fix runs nxsock's own prune; only the entry and its empty directory
        go."""
        cache = f"/tmp/.nx/{USER}/native-cache"
        entry = f"{cache}/23.3.2/23.3.2-0123456789ab-nx.linux-x64-gnu.node"
        setup = (
            f"install -d -m 1777 /tmp/.nx; install -d -m 0700 -o {USER} /tmp/.nx/{USER} /tmp/.nx/{USER}/sockets "
            f"{cache} {cache}/23.3.2; "
            f"echo old > {entry}; chmod 0666 {entry}; chown -R {USER} /tmp/.nx/{USER}"
        )
        result = fix(setup, "--yes", "--json")
        document = json.loads(result.stdout)
        assert [(o["remedy"], o["outcome"]) for o in document["outcomes"]] == [("nxsock cache prune", "fixed")], (
            document["outcomes"]
        )
        assert changed_outside(result.tree_before, result.tree_after, [f"{cache}/23.3.2"]) == []
        assert entry in result.tree_before and f"{cache}/23.3.2" not in result.tree_after

    def test_what_needs_root_is_listed_and_nothing_of_it_is_run(self) -> None:
        """A peer's container: the sudo line is for the user, with the reason; the tree is exactly as it was."""
        result = fix(f"install -d -m 1777 -o {PEER} /tmp/.nx", "--yes", "--json")
        document = json.loads(result.stdout)
        assert document["plan"] == [] and document["outcomes"] == []
        listed = [i for i in document["for_you"] if i["remedy"].startswith("sudo chown -h root:root -- /tmp/.nx")]
        assert listed and "needs root" in listed[0]["why_not"]
        assert result.tree_before == result.tree_after
        human = fix(f"install -d -m 1777 -o {PEER} /tmp/.nx", "--yes")
        assert (
            "For you to run" in human.stdout
            and "sudo chown" in human.stdout
            and "Nothing for nxsock to apply" in human.stdout
        )


def dead_runs(count: int) -> str:
    """*count* dead per-run directories of the user's, each holding a daemon socket nothing listens on, left ``0755``
    (a umask Nx did not tighten), all two hours old: doctor finds a chmod and a reset for each."""
    sockets = f"/tmp/.nx/{USER}/sockets"
    make = (
        "import os, socket\n"
        f"for n in range({count}):\n"
        f"    d = '{sockets}/%020x' % n; os.mkdir(d, 0o700); s = socket.socket(socket.AF_UNIX); s.bind(d "
        "+ '/d.sock'); s.close()\n"
        "    os.chmod(d + '/d.sock', 0o755)\n"
    )
    return (f"install -d -m 1777 /tmp/.nx; install -d -m 0700 -o {USER} /tmp/.nx/{USER} {sockets}; "
            f"python3 -c {shlex.quote(make)}; chown -R {USER}:{USER} /tmp/.nx/{USER}; "
            f"find {sockets} -mindepth 1 -exec touch -h -d '2 hours ago' {{}} +")


class TestAStepAnEarlierRemedyDidIsDone:
    """The plan chmods one dead directory's socket, runs ``reset`` (which removes every dead directory), then chmods
    the sockets of the others: those steps have nothing left to act on, which is what they wanted."""

    def test_three_dead_directories_are_fixed_and_the_exit_follows_the_clean_re_audit(self) -> None:
        result = fix(dead_runs(3), "--yes", "--json")
        document = json.loads(result.stdout)
        outcomes = [(o["remedy"], o["outcome"]) for o in document["outcomes"]]
        assert [r for r, _ in outcomes][1] == "nxsock reset" and len(outcomes) == 4, outcomes
        assert {o for _, o in outcomes} == {"fixed"}, document["outcomes"]
        later = document["outcomes"][2:]
        assert all(o["steps"][0]["outcome"] == "done" and "already done" in o["steps"][0]["reason"] for o in later), (
            later
        )
        assert not [
            f
            for f in document["findings"]
            if f["id"] in ("sockets", "leftovers") and f["severity"] in ("warn", "error")
        ]
        assert result.returncode == 0, (document["outcomes"], result.stderr)
        assert f"/tmp/.nx/{USER}/sockets/" not in result.tree_after

    def test_three_thousand_dead_directories_make_a_plan_of_a_few_lines_that_says_how_many(self) -> None:
        result = fix(dead_runs(3000), "--yes")
        lines = result.stdout.splitlines()
        assert result.returncode == 0, (result.stdout[-3000:], result.stderr)
        assert len(lines) <= 30, "\n".join(lines[:60])
        assert "3000 dead socket directories" in result.stdout and "<each of 3,000>/d.sock" in result.stdout, (
            result.stdout
        )
        assert "--json" in result.stdout  # where each is listed
        listed = json.loads(fix(dead_runs(3000), "--dry-run", "--json").stdout)
        assert len(listed["plan"]) == 3001


#: The peer's workspace, whose .env names a directory of the user's: what Nx would call its own levels there.
PEER_WS = "/tmp/peerws"


class TestAPeersDotenvSteersNothing:
    """Found by the red team: another user's .env made --fix remove the user's own files (and, as root, root's)."""


    @pytest.mark.parametrize(("variable", "planted"), [
        ("NX_WORKSPACE_DATA_DIRECTORY", "notes/d/disabled"),  # the daemon's marker, where the .env says the data lives
        ("NX_WORKSPACE_DATA_DIRECTORY", "notes/d/server-process.json"),  # an unreadable daemon record
        ("NX_SOCKET_DIR", "notes/music.sock"),  # a *.sock file in the configured socket directory
    ])
    @pytest.mark.parametrize("as_root", [False, True], ids=["as-the-user", "as-root"])
    def test_nothing_a_peers_dotenv_names_is_removed(self, variable: str, planted: str, as_root: bool) -> None:
        owner = 0 if as_root else USER
        home = "/home/root" if as_root else HOME  # within what the snapshot compares
        target = f"{home}/{planted}"
        setup = (
            f"install -d -o {owner} {home}; install -d -m 0700 -o {owner} {home}/notes {home}/notes/d; "
            f"echo precious > {target}; chown {owner} {target}; "
            f"install -d -m 0755 -o {PEER} {PEER_WS}; echo '{{}}' > {PEER_WS}/nx.json; "
            f"echo '{variable}={home}/notes' > {PEER_WS}/.env; chown {PEER} {PEER_WS}/nx.json {PEER_WS}/.env; "
            f"install -d {PEER_WS}/node_modules/nx; echo '{{\"version\": \"24.0.6\"}}' > "
            f"{PEER_WS}/node_modules/nx/package.json"
        )
        # Nx installed and NX_DAEMON=true: the daemon is on, so its record's problem is a warning, on any host.
        result = run_as_user(
            f"{MAKE_WS}; {setup}",
            ["doctor", "--fix", "--yes", "--json"],
            env={"HOME": home, "NX_DAEMON": "true"},
            uid=owner,
            cwd=PEER_WS,
        )
        assert "Traceback" not in result.stderr, result.stderr
        assert target in result.tree_after, (result.stdout, result.stderr)
        assert changed_outside(result.tree_before, result.tree_after, []) == [], result.stdout
        document = json.loads(result.stdout)
        # The audit offers no command that acts, so nothing is planned, and the problem is listed without one,
        # its reason naming the peer's file (were a step planned, the step itself would be refused: apply_plan).
        assert document["plan"] == [] and document["outcomes"] == [], document
        withheld = [f for f in document["without_command"] if f"{PEER_WS}/.env" in (f["hint"] or "")]
        assert withheld, document["without_command"]

    @pytest.mark.parametrize("as_root", [False, True], ids=["as-the-user", "as-root"])
    def test_the_audit_itself_offers_no_command_and_names_the_file(self, as_root: bool) -> None:
        # Plain doctor, not only --fix: a remedy shown is pasted, so it must not act where the peer's .env points.
        owner = 0 if as_root else USER
        home = "/home/root" if as_root else HOME
        setup = (
            f"install -d -o {owner} {home}; install -d -m 0700 -o {owner} {home}/notes {home}/notes/d; "
            f"echo planted > {home}/notes/d/disabled; chown {owner} {home}/notes/d/disabled; "
            f"install -d -m 0755 -o {PEER} {PEER_WS}; echo '{{}}' > {PEER_WS}/nx.json; "
            f"echo 'NX_WORKSPACE_DATA_DIRECTORY={home}/notes' > {PEER_WS}/.env; chown {PEER} "
            f"{PEER_WS}/nx.json {PEER_WS}/.env"
        )
        result = run_as_user(f"{MAKE_WS}; {setup}", ["doctor", "--json"], env={"HOME": home}, uid=owner, cwd=PEER_WS)
        assert "Traceback" not in result.stderr, result.stderr
        findings = json.loads(result.stdout)["findings"]
        disabled = [f for f in findings if f["id"] == "daemon-disabled"]
        assert disabled and disabled[0]["remedy"] is None, findings
        assert f"{PEER_WS}/.env" in disabled[0]["hint"] and disabled[0]["hint"].startswith("No safe command"), disabled
        assert [f["remedy"] for f in findings if f["remedy"] is not None] == [], findings


def test_a_dotenv_linked_to_a_peers_file_is_read_as_nx_reads_it_and_steers_nothing() -> None:
    """Found by the red team: a .env link was skipped, so the audit saw neither the variable Nx reads nor its source."""
    setup = (f"install -d -o {USER} {HOME}; install -d -m 0700 -o {USER} {HOME}/notes {HOME}/notes/d; "
             f"echo planted > {HOME}/notes/d/disabled; chown {USER} {HOME}/notes/d/disabled; "
             f"echo 'NX_WORKSPACE_DATA_DIRECTORY={HOME}/notes' > /tmp/peerenv; chown {PEER} /tmp/peerenv; "
             f"ln -s /tmp/peerenv {WS}/.env; chown -h {USER} {WS}/.env")
    result = run_as_user(f"{MAKE_WS}; {setup}", ["doctor", "--json"], env={"HOME": HOME}, cwd=WS)
    assert "Traceback" not in result.stderr, result.stderr
    findings = json.loads(result.stdout)["findings"]
    disabled = [f for f in findings if f["id"] == "daemon-disabled"]
    assert disabled and disabled[0]["path"] == f"{HOME}/notes/d/disabled", findings  # read through the link, as Nx does
    assert disabled[0]["remedy"] is None and f"{WS}/.env" in disabled[0]["hint"], disabled


def _run_in_peers_workspace(setup: str, args: list[str], as_root: bool) -> t.Any:
    """``nxsock ARGS`` as the user (or root) with the peer's workspace as the current directory; its JSON document."""
    home = "/home/root" if as_root else HOME
    result = run_as_user(f"install -d -o {0 if as_root else USER} {home}; {setup}", args,
                         env={"HOME": home}, uid=0 if as_root else USER, cwd=PEER_WS)
    assert "Traceback" not in result.stderr, result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize("as_root", [False, True], ids=["as-the-user", "as-root"])
def test_paths_obeys_the_same_rule_as_doctor(as_root: bool) -> None:
    """Found by the red team: paths printed ``mkdir -m 0700 -- /tmp/missingtmp`` for a TMPDIR a peer's .env set."""
    setup = (
        f"install -d -m 0755 -o {PEER} {PEER_WS} {PEER_WS}/node_modules {PEER_WS}/node_modules/nx; "
        f"echo '{{}}' > {PEER_WS}/nx.json; echo '{{\"version\": \"23.3.2\"}}' > "
        f"{PEER_WS}/node_modules/nx/package.json; "
        f"echo 'TMPDIR=/tmp/missingtmp' > {PEER_WS}/.env; chown -R {PEER} {PEER_WS}"
    )
    document = _run_in_peers_workspace(setup, ["paths", "--json"], as_root)
    refusals = [document["socket_root"]["failure"], *document["socket_root"]["refusals"]]
    refusals += [p["failure"] for p in document["sockets"].values()]
    shown = [r for r in refusals if r is not None]
    assert shown, document  # the missing TMPDIR is refused, as Nx 23.3.2 would
    assert all(r["remedy"] is None and f"{PEER_WS}/.env" in (r["hint"] or "") for r in shown), shown


class TestAPeersWorkspaceRunsNothingOfTheirs:
    """Found by the red team: in a workspace another user owns (no .env at all), doctor offered ``nx reset``, which
    runs that user's node_modules/nx — as root, root pasting it — and ``kill`` of the pid their record names."""


    @pytest.mark.parametrize("as_root", [False, True], ids=["as-the-user", "as-root"])
    def test_no_nx_command_and_no_kill_is_offered_there(self, as_root: bool) -> None:
        d = f"{PEER_WS}/.nx/workspace-data/d"
        setup = (
            f"install -d -m 0755 -o {PEER} {PEER_WS} {PEER_WS}/.nx {PEER_WS}/.nx/workspace-data {PEER_WS}/node_modules "
            f"{PEER_WS}/node_modules/nx; echo '{{}}' > {PEER_WS}/nx.json; "
            f"echo '{{\"version\": \"24.0.6\"}}' > {PEER_WS}/node_modules/nx/package.json; "
            f"install -d -m 0777 -o {PEER} {d}; echo planted > {d}/disabled; "
            f"printf '{{\"processId\": 1234, \"socketPath\": \"{d}/d.sock\"}}' > {d}/server-process.json; "
            f"chown -R {PEER} {PEER_WS}"
        )
        findings = _run_in_peers_workspace(setup, ["doctor", "--json"], as_root)["findings"]
        steps = [s for f in findings for s in f["remedy_steps"] or []]
        assert not [s for s in steps if s["verb"] in ("run-nx", "stop-process")], steps
        assert not [f for f in findings if f["remedy"] and ("nx reset" in f["remedy"] or "kill" in f["remedy"])], (
            findings
        )


PTY_DRIVER = r"""
import json, os, pty, select, signal, subprocess, sys, time
argv, attack = json.loads(sys.argv[1]), sys.argv[2]
# With a directory: Ctrl-C once nxsock has removed its first entry there, typed while nxsock is stopped, so that it
# lands mid-removal on any machine, however fast (an event, never a delay).
watched = sys.argv[3] if len(sys.argv) > 3 else None
def entries():
    with os.scandir(watched) as it:
        return sum(1 for _ in it)
pid, fd = pty.fork()
if pid == 0:
    os.execvp(argv[0], argv)
seen, answered, deadline, full, left_at_stop = b"", False, time.monotonic() + 60, None, None
while time.monotonic() < deadline:
    ready, _, _ = select.select([fd], [], [], 0 if answered and watched and left_at_stop is None else 0.2)
    if ready:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    if not answered and b"[y/N]" in seen:
        subprocess.run(["bash", "-c", attack], check=True)  # the peer, while --fix waits for the answer
        full = entries() if watched else None
        os.write(fd, b"y\n")
        answered = True
    elif answered and watched and left_at_stop is None and entries() < full:
        os.kill(pid, signal.SIGSTOP)
        left_at_stop = entries()
        os.write(fd, b"\x03")  # pending while it is stopped: delivered the moment it runs again
        os.kill(pid, signal.SIGCONT)
_, status = os.waitpid(pid, 0)
print(json.dumps({"rc": os.waitstatus_to_exitcode(status), "out": seen.decode("utf-8", "replace"), "answered": answered,
                  "left_at_interrupt": left_at_stop}))
"""


@pytest.mark.parametrize("attack", ["link", "directory"])
class TestPeerSwapsALevelBetweenPlanAndApply:
    """The workspace is the user's, shared with a group the peer is in (``0770``: the user's grant, which the trust
    rule and the policy accept).  The plan removes the daemon's ``disabled`` marker; while ``--fix`` waits at its
    question the peer moves ``<ws>/.nx`` aside and puts a link to another tree of the user's, or a ``.nx`` of its
    own holding a marker of its own, in its place."""


    def test_a_level_swapped_after_the_plan_is_refused_and_nothing_is_removed_anywhere(self, attack: str) -> None:
        victim = f"{HOME}/victim"
        precious = f"{victim}/workspace-data/d/disabled"
        setup = (
            f"{MARKER}; chgrp {USER} {WS}; chmod 0770 {WS}; "
            f"install -d -o {USER} -g {USER} {victim} {victim}/workspace-data; install -d -m 0700 -o {USER} -g {USER} "
            f"{victim}/workspace-data/d; "
            f"echo precious > {precious}; chown {USER} {precious}"
        )
        if attack == "link":
            plant = f"mv {WS}/.nx {WS}/.nx-moved && ln -s {victim} {WS}/.nx"
        else:
            plant = (
                f"mv {WS}/.nx {WS}/.nx-moved && mkdir -p {WS}/.nx/workspace-data/d && echo theirs > "
                f"{WS}/.nx/workspace-data/d/disabled"
            )
        peer = f"setpriv --reuid={PEER} --regid={PEER} --groups={USER} bash -c {shlex.quote(plant)}"
        ran, before, after = _pty_run(setup, [], attack=peer)
        out = ran["out"]
        assert ran["answered"] and f"rm -- {D}/disabled" in out, out  # the plan had it, and asked
        assert "✗ refused" in out and ran["rc"] == 1, out
        assert (
            f" {precious}" in after and f" {WS}/.nx-moved/workspace-data/d/disabled" in after
        )  # the user's two markers
        if attack == "directory":
            theirs = [line for line in after.splitlines() if line.endswith(f" {D}/disabled")]
            assert theirs and theirs[0].split()[1] == str(PEER)  # and the peer's, untouched
        moved = {
            p.replace(f"{WS}/.nx-moved", f"{WS}/.nx") for p in (line.rsplit(" ", 1)[-1] for line in after.splitlines())
        }
        assert all(line.rsplit(" ", 1)[-1] in moved for line in before.splitlines() if f"{WS}/.nx/" in line), (
            "something was removed"
        )
        unchanged = [line for line in before.splitlines() if victim in line]
        assert unchanged and all(line in after.splitlines() for line in unchanged), "the other tree changed"


#: The user, alone with a plain environment: what each --fix run below starts from.
_AS_USER = ("setpriv", f"--reuid={USER}", f"--regid={USER}", "--clear-groups", "env", "-i",
            "PATH=/usr/local/bin:/usr/bin:/bin", f"HOME={HOME}", "LANG=C.UTF-8")


def _pty_run(setup: str, fix_args: t.Sequence[str], attack: str = "true", interrupt_in: str | None = None,
             env: t.Sequence[str] = ()) -> tuple[dict[str, t.Any], str, str]:
    """``doctor --fix`` as the user on a pseudo-terminal after *setup*; *attack* runs at the question, then "y"."""
    python, pylib = stage_nxsock()
    argv = [
        *_AS_USER,
        *env,
        f"PYTHONPATH={pylib}",
        "PYTHONDONTWRITEBYTECODE=1",
        "TERM=dumb",
        python,
        "-m",
        "nxsock",
        "doctor",
        "--fix",
        *fix_args,
    ]
    snapshot = (
        "find /tmp /home -xdev -path '*/node_modules/*' -prune -o -printf '%y %U %G %m %i %s %l "
        "%p\\n' 2>/dev/null | sort"
    )
    extra = "" if interrupt_in is None else f" {shlex.quote(interrupt_in)}"
    return _driven(setup, f"{shlex.quote(python)} -c {shlex.quote(PTY_DRIVER)} {shlex.quote(json.dumps(argv))} "
                          f"{shlex.quote(attack)}{extra}", snapshot)


def _driven(setup: str, driver: str, snapshot: str) -> tuple[dict[str, t.Any], str, str]:
    """*driver* (a command printing one JSON line last) in the workspace after *setup*, in a private namespace with
    fresh ``/tmp`` and ``/home``; what it printed, and the tree before and after."""
    script = f"""
set -e
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs -o mode=0755 tmpfs /home
install -d -o {USER} -g {USER} {HOME}
{MAKE_WS}
{setup}
cd {WS}
echo '<<<TREE'; {snapshot}
echo '<<<RUN'; {driver}
echo '<<<TREE'; {snapshot}
"""
    proc = subprocess.run(["unshare", "-m", "--propagation", "private", "bash", "-c", script], cwd="/",
                          capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL,
                          preexec_fn=default_signals)
    sections = proc.stdout.split("<<<")
    trees = [s[len("TREE\n"):] for s in sections if s.startswith("TREE\n")]
    assert len(trees) == 2, (proc.stdout[-3000:], proc.stderr[-3000:])
    ran = json.loads(next(s for s in sections if s.startswith("RUN\n"))[len("RUN\n"):].strip().splitlines()[-1])
    return ran, trees[0], trees[1]


MANY_DEAD = (
    f"install -d -m 1777 /tmp/.nx; install -d -m 0700 -o {USER} /tmp/.nx/{USER} /tmp/.nx/{USER}/sockets; "
    f"python3 -c 'import os; [os.mkdir(\"/tmp/.nx/{USER}/sockets/%020x\" % n, 0o700) for n in range(20000)]'; "
    f"chown -R {USER}:{USER} /tmp/.nx/{USER}; find /tmp/.nx/{USER}/sockets -mindepth 1 -exec "
    "touch -d '2 hours ago' {} +"
)


class TestCtrlC:

    def test_ctrl_c_mid_fix_exits_130_and_says_what_was_done(self) -> None:
        """The marker went first; Ctrl-C stops nxsock's reset between entries; it says so and exits 130."""
        ran, before, after = _pty_run(f"{MARKER}; {MANY_DEAD}", [], interrupt_in=f"/tmp/.nx/{USER}/sockets")
        assert ran["left_at_interrupt"] is not None and 0 < ran["left_at_interrupt"] < 20000, ran["left_at_interrupt"]
        out = ran["out"]
        assert ran["answered"] and ran["rc"] == 130, out[-3000:]
        assert "✓ done      rm -- " in out and "… stopped   nxsock reset" in out, out[-3000:]
        assert "Interrupted: 1 remedy applied before Ctrl-C" in out and "nxsock: interrupted" in out
        left = sum(1 for line in after.splitlines() if f"/tmp/.nx/{USER}/sockets/" in line)
        assert f"{D}/disabled" in before and f"{D}/disabled" not in after
        assert 0 < left < 20000, left  # stopped part of the way: some removed, the rest kept whole


STOP_DRIVER = r"""
import json, os, signal, subprocess, sys
# nxsock stops itself (SIGSTOP) at the point the test names; Ctrl-C's signal is sent while it is stopped and
# delivered the moment it runs again: the interruption lands there on any machine, however fast (an event, never a
# delay).
proc = subprocess.Popen(json.loads(sys.argv[1]), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                        stdin=subprocess.DEVNULL)
_, status = os.waitpid(proc.pid, os.WUNTRACED)
stopped = os.WIFSTOPPED(status)
if stopped:
    os.kill(proc.pid, signal.SIGINT)
    os.kill(proc.pid, signal.SIGCONT)
out, err = proc.communicate(timeout=60)
print(json.dumps({"stopped": stopped, "rc": proc.returncode, "out": out.decode("utf-8", "replace"),
                  "err": err.decode("utf-8", "replace")}))
"""


def _stopped_run(setup: str, fix_args: t.Sequence[str], point: str) -> tuple[dict[str, t.Any], str, str]:
    """``doctor --fix`` as the user after *setup*, stopped at *point* and sent SIGINT there; the tree around it."""
    python, pylib = stage_nxsock()
    argv = [
        *_AS_USER,
        f"NXSOCK_TEST_STOP_AT={point}",
        f"PYTHONPATH={pylib}",
        "PYTHONDONTWRITEBYTECODE=1",
        python,
        "-m",
        "nxsock",
        "doctor",
        "--fix",
        *fix_args,
    ]
    snapshot = "find /tmp /home -xdev -printf '%y %U %G %m %i %s %l %p\\n' 2>/dev/null | sort"
    return _driven(
        setup, f"{shlex.quote(python)} -c {shlex.quote(STOP_DRIVER)} {shlex.quote(json.dumps(argv))}", snapshot
    )


class TestCtrlCBeforeAnythingIsApplied:

    def test_ctrl_c_during_the_first_audit_exits_130_with_a_valid_document_and_nothing_applied(self) -> None:
        """Stopped inside the first audit and sent SIGINT there: one document, interrupted, no plan, no outcome."""
        ran, before, after = _stopped_run(MARKER, ["--yes", "--json"], "first-audit")
        assert ran["stopped"], ran
        assert ran["rc"] == 130 and "Traceback" not in ran["err"], ran
        document = parsed(ran["out"], ["doctor", "--fix", "--json"])
        assert document["interrupted"] is True and document["confirmed"] is False
        assert document["outcomes"] == [] and document["findings"] is None and document["status"] is None
        assert "nxsock: interrupted" in ran["err"]
        assert before == after and f"{D}/disabled" in after  # nothing applied
