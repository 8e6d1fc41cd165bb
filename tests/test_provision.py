"""provision as root and as a user, on real states in private namespaces."""

from __future__ import annotations

import json
import shlex
import shutil
import typing as t

import pytest
from documents import parsed
from harness import (
    PEER,
    SNAPSHOT,
    USER,
    missing_node,
    missing_privileges,
    missing_readable_python,
    oracle_command,
    run_as_user,
)

from nxsock.act.tmpfiles import drop_in_text

pytestmark = [
    pytest.mark.skipif(missing_privileges() is not None, reason=str(missing_privileges())),
    pytest.mark.skipif(missing_readable_python() is not None, reason=str(missing_readable_python())),
]

STAT = "stat -c '%F %u:%g %a %i' /tmp/.nx"


def lines(tree: str, under: str) -> list[str]:
    return [line for line in tree.splitlines() if line.endswith(under) or f"{under}/" in line]


def doc(run: t.Any) -> dict[str, t.Any]:
    return parsed(run.stdout, run.args)


class TestAsRoot:
    def test_an_absent_container_is_created_root_owned_sticky_and_a_second_run_changes_nothing(self) -> None:
        run = run_as_user("", ["provision", "--json"], uid=0, post=f"{STAT}; /usr/bin/env python3 -c '' ; " + "true")
        assert run.returncode == 0 and doc(run)["changed"] is True
        assert run.post.startswith("directory 0:0 1777")
        again = run_as_user("install -d -m 1777 -o root -g root /tmp/.nx", ["provision", "--json"], uid=0)
        assert (again.returncode, doc(again)["changed"], doc(again)["steps"]) == (0, False, [])
        assert again.tree_before == again.tree_after

    def test_a_users_container_is_handed_to_root_and_what_is_beneath_is_untouched(self) -> None:
        setup = f"install -d -m 1777 -o {USER} -g {USER} /tmp/.nx; install -d -m 0700 -o {USER} /tmp/.nx/{USER}; install -d -m 0755 -o {PEER} /tmp/.nx/{PEER}"
        run = run_as_user(setup, ["provision", "--json"], uid=0, post=STAT)
        assert run.returncode == 0 and [s["verb"] for s in doc(run)["steps"]] == ["chown"]
        assert run.post.startswith("directory 0:0 1777")
        for uid in (USER, PEER):
            assert lines(run.tree_before, f"/tmp/.nx/{uid}") == lines(run.tree_after, f"/tmp/.nx/{uid}")

    def test_a_root_container_without_sticky_is_made_1777(self) -> None:
        run = run_as_user("install -d -m 0755 /tmp/.nx", ["provision", "--json"], uid=0, post=STAT)
        assert [s["verb"] for s in doc(run)["steps"]] == ["chmod"] and run.post.startswith("directory 0:0 1777")

    @pytest.mark.parametrize(
        ("setup", "symlink"),
        [
            (f"install -d -m 0700 -o {PEER} /tmp/precious; ln -s /tmp/precious /tmp/.nx", True),
            ("mkfifo -m 0666 /tmp/.nx", False),
            ("echo data > /tmp/.nx", False),
        ],
        ids=["symlink", "fifo", "file"],
    )
    def test_anything_but_a_directory_is_refused_never_followed_nor_removed(self, setup: str, symlink: bool) -> None:
        run = run_as_user(setup, ["provision", "--json"], uid=0)
        refusal = doc(run)["refusal"]
        assert run.returncode == 1 and refusal["kind"] == "not-a-directory" and refusal["symlink"] is symlink
        assert refusal["remedy"] and run.tree_before == run.tree_after

    def test_dry_run_says_would_and_changes_nothing(self) -> None:
        run = run_as_user(f"install -d -m 0777 -o {USER} /tmp/.nx", ["provision", "--dry-run"], uid=0)
        assert run.returncode == 0 and "would hand to root:root /tmp/.nx" in run.stdout and "would chmod" in run.stdout
        assert run.tree_before == run.tree_after

    def test_check_exits_1_only_when_something_would_change(self) -> None:
        assert run_as_user("", ["provision", "--check"], uid=0).returncode == 1
        done = run_as_user("install -d -m 1777 /tmp/.nx", ["provision", "--check"], uid=0)
        assert done.returncode == 0 and done.tree_before == done.tree_after

    def test_a_read_only_tmp_cannot_be_provisioned(self) -> None:
        run = run_as_user("mount -o remount,ro /tmp", ["provision", "--json"], uid=0)
        assert run.returncode == 73 and doc(run)["refusal"]["errno"] == "EROFS"


class TestAsUser:
    @pytest.mark.skipif(missing_node() is not None, reason=str(missing_node()))
    def test_the_users_tree_is_made_as_nx_makes_it_and_nx_then_changes_no_level(self) -> None:
        """After provision, the real Nx uses /tmp/.nx/<uid>/sockets and leaves every provisioned level as it is."""
        ws = f"install -d -o {USER} /home/u{USER}/ws; echo '{{}}' > /home/u{USER}/ws/nx.json"
        post = f"echo '@@NX'; cd /home/u{USER}/ws && {oracle_command()}; echo '@@NXTREE'; {SNAPSHOT}"
        run = run_as_user(ws, ["provision", "--json"], post=post)
        assert run.returncode == 0
        assert [(s["verb"], s["path"], s["mode"]) for s in doc(run)["steps"]] == [
            ("create", "/tmp/.nx", "1777"),
            ("create", f"/tmp/.nx/{USER}", "0700"),
            ("create", f"/tmp/.nx/{USER}/sockets", "0700"),
            ("create", f"/tmp/.nx/{USER}/native-cache", "0700"),
        ]
        nx = json.loads(run.post.split("@@NX\n")[1].split("@@NXTREE")[0])
        assert nx["sockets"]["daemon"]["dir"].startswith(f"/tmp/.nx/{USER}/sockets/")
        after_nx = run.post.split("@@NXTREE\n")[1]
        levels = ["/tmp/.nx", f"/tmp/.nx/{USER}", f"/tmp/.nx/{USER}/sockets", f"/tmp/.nx/{USER}/native-cache"]
        for level in levels:  # type, owner, group, mode and inode; a directory's size grows with its entries
            mine = [line.split()[:5] for line in run.tree_after.splitlines() if line.endswith(" " + level)]
            theirs = [line.split()[:5] for line in after_nx.splitlines() if line.endswith(" " + level)]
            assert mine == theirs and mine, level

    def test_under_a_root_container_only_the_users_levels_are_made(self) -> None:
        run = run_as_user("install -d -m 1777 /tmp/.nx", ["provision", "--json"])
        assert run.returncode == 0 and doc(run)["steps"][0]["path"] == f"/tmp/.nx/{USER}"

    def test_a_peers_container_needs_root_exit_77_with_the_sudo_command(self) -> None:
        run = run_as_user(f"install -d -m 1777 -o {PEER} /tmp/.nx", ["provision"])
        assert run.returncode == 77
        assert "sudo chown -h root:root -- /tmp/.nx && test ! -L /tmp/.nx && sudo chmod 1777 -- /tmp/.nx" in run.stdout
        assert run.tree_before == run.tree_after

    def test_a_planted_per_user_directory_needs_root(self) -> None:
        run = run_as_user(f"install -d -m 1777 /tmp/.nx; install -d -m 0755 -o {PEER} /tmp/.nx/{USER}", ["provision", "--json"])
        assert run.returncode == 77 and doc(run)["refusal"]["kind"] == "foreign-owner"
        assert run.tree_before == run.tree_after

    def test_dry_run_as_a_user_changes_nothing(self) -> None:
        run = run_as_user("", ["provision", "--dry-run", "--json"])
        assert doc(run)["dry_run"] is True and len(doc(run)["steps"]) == 4
        assert run.tree_before == run.tree_after


class TestTmpfiles:
    ISOLATED = "mount -t tmpfs tmpfs /etc/tmpfiles.d"

    @pytest.mark.skipif(shutil.which("systemd-tmpfiles") is None, reason="needs systemd-tmpfiles")
    def test_the_printed_drop_in_makes_systemd_tmpfiles_create_the_container(self) -> None:
        """What --tmpfiles prints is a drop-in systemd-tmpfiles accepts, creating root:root 1777."""
        printed = run_as_user("", ["provision", "--tmpfiles"], uid=0).stdout
        assert printed == drop_in_text() and "d /tmp/.nx 1777 root root -" in printed.splitlines()
        quoted = shlex.quote(printed)
        run = run_as_user(
            f"{self.ISOLATED}; printf '%s' {quoted} > /etc/tmpfiles.d/nxsock.conf; systemd-tmpfiles --create /etc/tmpfiles.d/nxsock.conf",
            ["check-root", "--json"], post=STAT,
        )
        assert run.post.startswith("directory 0:0 1777") and doc(run)["state"] == "ok"

    def test_install_writes_applies_is_idempotent_and_uninstall_removes_only_its_own(self) -> None:
        run = run_as_user(self.ISOLATED, ["provision", "--tmpfiles", "--install", "--json"], uid=0,
                          post=f"{STAT}; head -1 /etc/tmpfiles.d/nxsock.conf; stat -c '%a %u' /etc/tmpfiles.d/nxsock.conf")
        assert run.returncode == 0 and doc(run)["changed"] is True
        assert "directory 0:0 1777" in run.post and "# Written by nxsock" in run.post and "644 0" in run.post
        uninstall = run_as_user(f"{self.ISOLATED}; printf 'd /srv 0755 root root -\\n' > /etc/tmpfiles.d/nxsock.conf",
                                ["provision", "--tmpfiles", "--uninstall"], uid=0, post="cat /etc/tmpfiles.d/nxsock.conf")
        assert uninstall.returncode == 1 and "d /srv" in uninstall.post

    def test_install_needs_root(self) -> None:
        run = run_as_user("", ["provision", "--tmpfiles", "--install"])
        assert run.returncode == 77 and "sudo nxsock provision --tmpfiles --install" in run.stderr
