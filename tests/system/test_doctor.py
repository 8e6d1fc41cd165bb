"""doctor on real states: every finding from a real state, every remedy applied and then gone."""
from __future__ import annotations

import json
import shlex
import typing as t

import pytest
from documents import parsed
from harness import (
    PEER,
    USER,
    WAIT_FOR,
    WHILE_PARENT_LIVES,
    as_user_prefix,
    run_as_user,
    stage_nxsock,
)

WS = f"/home/u{USER}/ws"
MAKE_WS = f"install -d -o {USER} {WS}; echo '{{}}' > {WS}/nx.json; chown {USER} {WS}/nx.json"
DROP_IN = "mount -t tmpfs tmpfs /etc/tmpfiles.d; printf 'd /tmp/.nx 1777 root root -\\n' > /etc/tmpfiles.d/nxsock.conf"
STALE = (
    "stale() { python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' \"$1\"; chown "
    + str(USER)
    + " \"$1\"; chmod 0600 \"$1\"; }"
)


def doctor(
    setup: str = "", *args: str, env: dict[str, str] | None = None, uid: int = USER
) -> tuple[dict[str, t.Any], t.Any]:
    """``doctor --json`` as *uid* in the workspace after *setup*; the tree must be exactly as it was."""
    result = run_as_user(f"{MAKE_WS}; {STALE}; {setup}", ["doctor", "--json", *args], env=env, uid=uid, cwd=WS)
    assert result.tree_before == result.tree_after, "doctor changed the filesystem"
    assert "Traceback" not in result.stderr, result.stderr
    return parsed(result.stdout, "doctor"), result


def problems(document: dict[str, t.Any]) -> list[tuple[str, str]]:
    return [(f["id"], f["severity"]) for f in document["findings"] if f["severity"] in ("warn", "error")]


def finding(document: dict[str, t.Any], check: str) -> dict[str, t.Any]:
    return next(f for f in document["findings"] if f["id"] == check and f["severity"] in ("warn", "error"))


class TestStates:

    def test_a_fresh_machine_is_quiet(self) -> None:
        document, result = doctor()
        assert problems(document) == [] and result.returncode == 0 and document["status"] == "ok"

    def test_a_root_provisioned_container_draws_only_the_boot_warning_and_none_with_the_drop_in(self) -> None:
        document, _ = doctor("install -d -m 1777 /tmp/.nx")
        assert problems(document) == [("boot-persistence", "warn")]
        assert finding(document, "boot-persistence")["remedy"] == "sudo nxsock provision --tmpfiles --install"
        fixed, _ = doctor(f"install -d -m 1777 /tmp/.nx; {DROP_IN}")
        assert problems(fixed) == []

    def test_a_peer_container_is_reported_and_its_remedy_clears_it(self) -> None:
        document, result = doctor(f"install -d -m 1777 -o {PEER} /tmp/.nx; {DROP_IN}")
        refused = finding(document, "container")
        assert refused["severity"] == "warn" and result.returncode == 0  # Nx still works, demoted
        assert [f["severity"] for f in document["findings"] if f["id"] == "container"] == [
            "warn"
        ]  # and nothing says "ok"
        assert ("outcome", "warn") in problems(document)
        remedy = refused["remedy"].replace("sudo ", "")
        fixed, _ = doctor(f"install -d -m 1777 -o {PEER} /tmp/.nx; {DROP_IN}; {remedy}")
        assert problems(fixed) == []

    def test_a_planted_private_level_is_removed_by_its_remedy_never_chowned(self) -> None:
        setup = f"install -d -m 1777 /tmp/.nx; {DROP_IN}; install -d -m 0700 -o {PEER} /tmp/.nx/{USER}"
        document, _ = doctor(setup)
        planted = finding(document, "private-levels")
        assert planted["remedy"] == f"sudo rm -rf -- /tmp/.nx/{USER}" and "chown" not in planted["remedy"]
        fixed, _ = doctor(f"{setup}; {planted['remedy'].replace('sudo ', '')}")
        assert problems(fixed) == []

    def test_an_open_private_level_will_be_tightened(self) -> None:
        document, _ = doctor(f"install -d -m 1777 /tmp/.nx; {DROP_IN}; install -d -m 0755 -o {USER} /tmp/.nx/{USER}")
        assert finding(document, "private-levels")["remedy"] == f"chmod 0700 -- /tmp/.nx/{USER}"

    def test_a_refused_nx_socket_dir_is_an_error_until_unset(self) -> None:
        document, result = doctor(env={"NX_SOCKET_DIR": "/tmp"})
        assert result.returncode == 1 and finding(document, "configuration")["remedy"] == "unset NX_SOCKET_DIR"
        assert problems(doctor()[0]) == []

    def test_a_configured_dir_nx_drops_for_the_workspace_is_an_error(self) -> None:
        document, _ = doctor(f"install -d -m 0755 -o {PEER} /tmp/peer", env={"NX_SOCKET_DIR": "/tmp/peer/s"})
        assert finding(document, "configuration")["severity"] == "error"

    def test_an_over_long_path_proposes_a_short_socket_dir_that_works(self) -> None:
        deep = f"{WS}/" + "d" * 70
        setup = f"install -d -m 1777 -o {PEER} /tmp/.nx; install -d -o {USER} {deep}; echo '{{}}' > {deep}/nx.json"
        setup += f"; install -d -m 0700 -o {USER} /tmp/xdg-{USER}"
        xdg = {"HOME": "", "XDG_RUNTIME_DIR": f"/tmp/xdg-{USER}"}
        result = run_as_user(f"{MAKE_WS}; {setup}", ["doctor", "--json"], env=xdg, cwd=deep)
        document = parsed(result.stdout, "doctor")
        too_long = finding(document, "path-budget")
        # never /tmp/nx-<uid>, which anyone may create first: a directory under one only the user owns
        assert result.returncode == 1 and too_long["remedy"] == f"export NX_SOCKET_DIR=/tmp/xdg-{USER}/nx"
        fixed = run_as_user(
            f"{MAKE_WS}; {setup}", ["doctor", "--json"], env={**xdg, "NX_SOCKET_DIR": f"/tmp/xdg-{USER}/nx"}, cwd=deep
        )
        assert not [f for f in parsed(fixed.stdout, "doctor")["findings"] if f["id"] == "path-budget"]

    def test_a_missing_tmpdir_fails_nx_23_until_created(self) -> None:
        nx_pkg = (
            f"install -d -o {USER} {WS}/node_modules/nx; echo '{{\"version\": \"23.3.2\"}}' > "
            f"{WS}/node_modules/nx/package.json"
        )
        document, result = doctor(nx_pkg, env={"TMPDIR": "/tmp/claude"})
        assert result.returncode == 1 and finding(document, "tmpdir")["remedy"] == "mkdir -m 0700 -- /tmp/claude"
        fixed, _ = doctor(f"{nx_pkg}; install -d -m 0700 -o {USER} /tmp/claude", env={"TMPDIR": "/tmp/claude"})
        assert not [p for p in problems(fixed) if p[0] == "tmpdir"]

    def test_stale_sockets_and_dead_directories_are_leftovers_that_reset_removes(self) -> None:
        run_dir = f"/tmp/.nx/{USER}/sockets/0123456789abcdef0123"
        setup = (f"install -d -m 1777 -o {USER} /tmp/.nx; install -d -m 0700 -o {USER} /tmp/.nx/{USER} "
                 f"/tmp/.nx/{USER}/sockets {run_dir}; stale {run_dir}/d.sock; touch -d 2000-01-01 {run_dir}")
        document, _ = doctor(setup)
        assert finding(document, "sockets")["message"].startswith("ECONNREFUSED")
        assert finding(document, "leftovers")["remedy"] == "nxsock reset"
        python, pylib = stage_nxsock()
        reset = f"{as_user_prefix()} PYTHONPATH={pylib} {python} -m nxsock reset >/dev/null"
        fixed, _ = doctor(f"{setup}; cd {WS} && {reset}; cd /")
        assert problems(fixed) == []

    def test_eacces_from_a_mode_gets_chmod_advice_and_the_advice_works(self) -> None:
        run_dir = f"/tmp/.nx/{USER}/sockets/0123456789abcdef0123"
        python, _ = stage_nxsock()
        listen = (
            f"{as_user_prefix()} {python} -c \"import os,socket,time; s=socket.socket(socket.AF_UNIX); "
            f"s.bind('{run_dir}/d.sock'); s.listen(); open('/tmp/.up', 'w').close(); "
            f"{WHILE_PARENT_LIVES}\" & {WAIT_FOR} /tmp/.up"
        )
        setup = (
            f"install -d -m 1777 -o {USER} /tmp/.nx; install -d -m 0700 -o {USER} /tmp/.nx/{USER} "
            f"/tmp/.nx/{USER}/sockets "
            f"{run_dir}; {listen}; chmod 0000 {run_dir}/d.sock"
        )
        document, _ = doctor(setup)
        refused = finding(document, "sockets")
        assert "EACCES" in refused["message"] and "chmod" in refused["remedy"]
        fixed, _ = doctor(f"{setup}; {as_user_prefix()} sh -c {shlex.quote(refused['remedy'])}")
        assert any(f["id"] == "sockets" and f["severity"] == "ok" for f in fixed["findings"])
        owner = [f for f in fixed["findings"] if f["id"] == "socket-owner"]
        assert owner and "listens on" in owner[0]["message"] and "another workspace" in owner[0]["message"]

    def test_the_disabled_marker_is_reported_with_its_reason_until_removed(self) -> None:
        d = f"{WS}/.nx/workspace-data/d"
        setup = (
            f"install -d -m 0700 -o {USER} {d}; echo 'inotify_add_watch failed' > {d}/disabled; "
            f"echo 'Error: listen EACCES: permission denied {d}/d.sock' > {d}/daemon-error.log; chown -R {USER} {d}; "
            f"install -d {WS}/node_modules/nx; echo '{{\"version\": \"24.0.6\"}}' > {WS}/node_modules/nx/package.json"
        )
        # Nx installed and NX_DAEMON=true (this host may be a container): the marker is all that keeps the daemon off.
        on = {"NX_DAEMON": "true"}
        document, _ = doctor(setup, env=on)
        marker = finding(document, "daemon-disabled")
        assert marker["detail"] == ["inotify_add_watch failed"] and marker["remedy"] == f"rm -- {d}/disabled"
        log = next(f for f in document["findings"] if f["id"] == "daemon-error")
        assert "refused by a permission or policy" in log["message"]
        fixed, _ = doctor(f"{setup}; rm {d}/disabled", env=on)
        assert not [p for p in problems(fixed) if p[0] == "daemon-disabled"]

    def test_a_dead_daemon_record_is_reported(self) -> None:
        d = f"{WS}/.nx/workspace-data/d"
        record = json.dumps(
            {
                "processId": 999999,
                "socketPath": f"/tmp/.nx/{USER}/sockets/0123456789abcdef0123/d.sock",
                "nxVersion": "24.0.6",
            }
        )
        document, _ = doctor(
            f"install -d -m 0700 -o {USER} {d}; echo {shlex.quote(record)} > "
            f"{d}/server-process.json; chown -R {USER} {d}"
        )
        messages = [f["message"] for f in document["findings"] if f["id"] == "daemon-record"]
        assert any("not running" in m for m in messages) and any("does not answer (ENOENT)" in m for m in messages)

    def test_legacy_leftovers_are_reported_until_reset_legacy(self) -> None:
        setup = f"install -d -m 0755 -o {USER} /tmp/nx-native-file-cache-abc1234"
        document, _ = doctor(setup)
        assert finding(document, "leftovers")["remedy"] == "nxsock reset --legacy"
        fixed, _ = doctor(f"{setup}; rmdir /tmp/nx-native-file-cache-abc1234")
        assert problems(fixed) == []

    def test_outside_a_sandbox_it_says_where_nx_would_go_inside_one(self) -> None:
        document, _ = doctor()
        note = next(f for f in document["findings"] if f["id"] == "user-namespace")
        assert f"{WS}/.nx/workspace-data/d (workspace)" in note["message"]

    def test_as_root_user_audits_as_that_user(self) -> None:
        document, _ = doctor(f"install -d -m 1777 -o {PEER} /tmp/.nx; {DROP_IN}", "--user", str(USER), uid=0)
        assert f"uid {USER}," in document["findings"][0]["message"]
        assert finding(document, "container")["severity"] == "warn"

    def test_strict_fails_on_warnings_and_only_selects(self) -> None:
        _, result = doctor("install -d -m 1777 /tmp/.nx", "--strict")
        assert result.returncode == 1
        document, _ = doctor("install -d -m 1777 /tmp/.nx", "--only", "container")
        assert {f["id"] for f in document["findings"]} == {"container"}

    def test_explain_names_the_cause_and_runs_the_checks_on_that_path(self) -> None:
        run_dir = f"/tmp/.nx/{USER}/sockets/0123456789abcdef0123"
        setup = (f"install -d -m 1777 -o {USER} /tmp/.nx; install -d -m 0700 -o {USER} /tmp/.nx/{USER} "
                 f"/tmp/.nx/{USER}/sockets {run_dir}; stale {run_dir}/d.sock; touch -d 2000-01-01 {run_dir}")
        message = f"Error: connect ECONNREFUSED {run_dir}/d.sock"
        document, _ = doctor(setup, "--explain", message)
        assert (document["matched"], document["errno"], document["path"]) == (
            "socket-errno",
            "ECONNREFUSED",
            f"{run_dir}/d.sock",
        )
        assert document["remedy"] == "nxsock reset" and document["findings"]

    def test_human_output_reads_without_colour(self) -> None:
        result = run_as_user(
            f"{MAKE_WS}; install -d -m 1777 -o {PEER} /tmp/.nx", ["doctor"], env={"NO_COLOR": "1"}, cwd=WS
        )
        assert (
            result.stdout.startswith("⚠ Nx works here, with ")
            and "fix:  sudo chown -h root:root -- /tmp/.nx" in result.stdout
        )
        assert result.stdout.count("sudo chown") == 1, result.stdout  # each remedy once
        assert "\x1b[" not in result.stdout and result.stdout.strip().splitlines()[-1].startswith("⚠ 0 errors")


class TestMoreStates:

    def test_a_home_beneath_a_peers_directory_is_an_ancestry_finding(self) -> None:
        setup = (
            f"install -d -m 1777 -o {PEER} /tmp/.nx; install -d -m 0755 -o {PEER} /home/peer; install "
            f"-d -o {USER} /home/peer/u"
        )
        document, _ = doctor(setup, env={"HOME": "/home/peer/u"})
        ancestry = finding(document, "ancestry")
        # nothing under the peer's directory is suggested: they could swap it
        assert (
            "/home/peer" in ancestry["message"]
            and ancestry["remedy"] is None
            and "passes every rule" in ancestry["hint"]
        )
        xdg = f"/tmp/xdg-{USER}"
        document, _ = doctor(
            f"{setup}; install -d -m 0700 -o {USER} {xdg}", env={"HOME": "/home/peer/u", "XDG_RUNTIME_DIR": xdg}
        )
        assert finding(document, "ancestry")["remedy"] == f"export NX_SOCKET_DIR={xdg}/nx"

    def test_a_fifo_or_a_peers_file_where_a_socket_belongs_never_blocks(self) -> None:
        run_dir = f"/tmp/.nx/{USER}/sockets/0123456789abcdef0123"
        setup = (
            f"install -d -m 1777 -o {USER} /tmp/.nx; install -d -m 0700 -o {USER} /tmp/.nx/{USER} "
            f"/tmp/.nx/{USER}/sockets {run_dir}; "
            f"mkfifo {run_dir}/d.sock; chown {USER} {run_dir}/d.sock; stale {run_dir}/fp1-1.sock; chown "
            f"{PEER} {run_dir}/fp1-1.sock"
        )
        document, _ = doctor(setup)
        messages = [f["message"] for f in document["findings"] if f["id"] == "sockets"]
        assert any("is a fifo, not a socket" in m for m in messages)
        assert any(f"belongs to uid {PEER}" in m for m in messages)

    def test_a_daemon_of_another_nx_version_is_reported(self) -> None:
        d = f"{WS}/.nx/workspace-data/d"
        record = json.dumps({"processId": 1, "socketPath": f"{d}/d.sock", "nxVersion": "23.3.2"})
        nx_pkg = (
            f"install -d -o {USER} {WS}/node_modules/nx; echo '{{\"version\": \"24.0.6\"}}' > "
            f"{WS}/node_modules/nx/package.json"
        )
        document, _ = doctor(
            f"{nx_pkg}; install -d -m 0700 -o {USER} {d}; echo {shlex.quote(record)} > "
            f"{d}/server-process.json; chown -R {USER} {d}"
        )
        assert any("runs Nx 23.3.2; 24.0.6 is installed" in f["message"] for f in document["findings"])

    def test_an_untrusted_workspace_data_directory_is_a_configuration_error_for_nx_24(self) -> None:
        document, result = doctor(
            f"install -d -m 0777 -o {PEER} /tmp/peerdata", env={"NX_WORKSPACE_DATA_DIRECTORY": "/tmp/peerdata"}
        )
        assert finding(document, "configuration")["severity"] == "error" and result.returncode == 1

    def test_explain_reads_stdin(self) -> None:
        python, pylib = stage_nxsock()
        post = (f"cd {WS}; echo 'Attempted to open socket that exceeds the maximum socket length.' | "
                f"{as_user_prefix()} PYTHONPATH={pylib} {python} -m nxsock doctor --explain - --json")
        result = run_as_user(MAKE_WS, ["--version"], post=post)
        assert parsed(result.post, "doctor")["matched"] == "path-too-long"

    def test_inside_a_user_namespace_it_says_so_and_where_nx_goes(self) -> None:
        """As a sandbox maps only the caller: root shows as 65534, and Nx 24 takes the workspace fallback."""
        python, pylib = stage_nxsock()
        post = (f"cd {WS}; {as_user_prefix()} unshare -U --map-current-user env PYTHONPATH={pylib} "
                f"{python} -m nxsock doctor --json --only user-namespace --only outcome")
        result = run_as_user(f"{MAKE_WS}; install -d -m 1777 /tmp/.nx", ["--version"], post=post)
        findings = parsed(result.post, "doctor")["findings"]
        inside = next(f for f in findings if f["id"] == "user-namespace")
        assert (
            "Running in a user namespace" in inside["message"]
            and f"{WS}/.nx/workspace-data/d (workspace)" in inside["message"]
        )
        assert next(f for f in findings if f["id"] == "outcome")["severity"] == "warn"


class TestRemedyPolicyLive:
    """Remedies printed on real hostile states: pasted as written, they touch nothing outside Nx's own levels."""


    def test_a_peers_socket_in_your_own_directory_is_removed_without_sudo(self) -> None:
        """Your own non-sticky directory: ``rm`` works, so the remedy is ``rm``, not ``sudo rm``."""
        sock_dir = f"/home/u{USER}/s"
        setup = (f"install -d -m 0700 -o {USER} {sock_dir}; stale {sock_dir}/d.sock; chown {PEER} {sock_dir}/d.sock")
        document, _ = doctor(setup, env={"NX_SOCKET_DIR": sock_dir})
        foreign = finding(document, "sockets")
        assert foreign["remedy"] == f"rm -- {sock_dir}/d.sock"
        fixed, _ = doctor(
            f"{setup}; {as_user_prefix()} sh -c {shlex.quote(foreign['remedy'])}", env={"NX_SOCKET_DIR": sock_dir}
        )
        assert not [p for p in problems(fixed) if p[0] == "sockets"]

    def test_root_auditing_an_attackers_workspace_prints_nothing_that_acts_through_its_links(self) -> None:
        """The workspace's owner links a directory to root's files and points NX_* at it in ``.env``.

        Root's ``doctor --user <owner>`` prints remedies; every one of them,
        pasted as root, leaves root's directory exactly as it was.
        """
        ws = "/home/attacker/ws"
        precious = "/home/rootetc"
        setup = (
            f"install -d -m 0755 {precious} {precious}/keep {precious}/systemd; echo secret > {precious}/file; "
            f"install -d -m 0755 -o {PEER} /home/attacker {ws}; echo '{{}}' > {ws}/nx.json; ln "
            f"-s {precious} {ws}/link; "
            f"printf 'NX_SOCKET_DIR={ws}/link/keep\\nNX_NATIVE_FILE_CACHE_DIRECTORY={ws}/link/file\\n"
            f"NX_WORKSPACE_DATA_DIRECTORY={ws}/link/systemd/system/x.d\\n' > {ws}/.env; chown -h -R {PEER} {ws}; "
            f"install -d -m 1777 -o {PEER} /tmp/.nx"
        )
        python, pylib = stage_nxsock()
        snapshot = f"find {precious} -printf '%y %U %m %p\\n' | sort"
        audit = (
            f"cd {ws} && PYTHONPATH={pylib} {python} -m nxsock doctor --json --user {PEER} > "
            "/tmp/audit.json || true; cd /"
        )
        paste = (
            f"{python} -c \"import json; [print(f['remedy']) for f in "
            "json.load(open('/tmp/audit.json'))['findings'] if f['remedy']]\" "
            "> /tmp/remedies.txt; "
            f"cd {ws}; while read -r line; do bash -c \"${{line//sudo /}}\" >/dev/null 2>&1 || true; done "
            "< /tmp/remedies.txt; cd /"
        )
        post = f"{snapshot}; echo '@@@'; cat /tmp/remedies.txt; echo '@@@'; cat /tmp/audit.json"
        result = run_as_user(
            f"{setup}; {snapshot} > /tmp/before.txt; {audit}; {paste}",
            ["--help"],
            uid=0,
            post=f"cat /tmp/before.txt; echo '@@@'; {post}",
        )
        assert result.post.count("@@@\n") == 3, (result.post, result.stderr[-2000:])
        before, after, remedies, audited = result.post.split("@@@\n")
        parsed(audited, "doctor")
        assert before == after, (before, after, remedies)
        assert remedies.strip(), "root's audit printed no remedy at all"
        assert f"{ws}/link" not in remedies.replace(f"{ws}/.env", ""), remedies
        # the owner's .env is theirs to change: root is told why, not handed a command that acts for them
        assert "rm -rf" not in remedies and "install -d" not in remedies and "sed -i" not in remedies, remedies


MARKED = "# Written by nxsock provision --tmpfiles --install."


@pytest.mark.parametrize(
    ("name", "text", "verdict"),
    [
        ("nxsock.conf", f"{MARKED}\\nd /tmp/.nx 1777 root root -\\n", "ok"),
        ("nxsock.conf", f"{MARKED}\\nd /tmp/.nx 0755 {USER} {USER} -\\n", "install"),
        ("nxsock.conf", f"{MARKED}\\nd /tmp/.nx 1777 root root 10d\\n", "install"),
        ("nxsock.conf", f"{MARKED}\\nD /tmp/.nx 1777 root root -\\n", "install"),
        ("0-site.conf", "d /tmp/.nx 1777 root root 1h\\n", "hand-edit"),  # read before any name nxsock could use
        ("nxsock.conf", "d /tmp/.nx 1777 nobody root -\\n", "install"),  # not nxsock's: install writes 00-nxsock.conf
    ],
    ids=["good", "the-users", "aged", "emptied-at-boot", "another-file-aged", "nobody-owned"],  # no uid in an id
)
class TestBootPersistence:
    """The tmpfiles.d line for /tmp/.nx is judged by type, mode, owner and age; ``d /tmp/.nx 1777 root root -`` is the
    good one."""


    def test_the_line_is_judged_and_its_fix_fits_the_file(self, name: str, text: str, verdict: str) -> None:
        setup = (
            f"install -d -m 1777 /tmp/.nx; mount -t tmpfs tmpfs /etc/tmpfiles.d; printf '{text}' "
            f"> /etc/tmpfiles.d/{name}"
        )
        document, _ = doctor(setup)
        boot = [f for f in document["findings"] if f["id"] == "boot-persistence"]
        assert len(boot) == 1, boot
        if verdict == "ok":  # a note rather than ok where systemd does not run to apply it
            assert boot[0]["severity"] in ("ok", "info") and "recreates /tmp/.nx at boot" in boot[0]["message"]
            return
        assert boot[0]["severity"] == "warn" and f"/etc/tmpfiles.d/{name}:" in boot[0]["message"]
        if verdict == "install":
            assert boot[0]["remedy"] == "sudo nxsock provision --tmpfiles --install"
        else:
            assert boot[0]["remedy"] is None and "d /tmp/.nx 1777 root root -" in boot[0]["hint"]
