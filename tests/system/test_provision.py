"""provision as root and as a user, on real states in private namespaces."""
from __future__ import annotations

import shlex
import typing as t

import pytest
from documents import parsed
from harness import (
    PEER,
    USER,
    run_as_user,
)

from nxsock.act.tmpfiles import drop_in_text

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
        setup = (
            f"install -d -m 1777 -o {USER} -g {USER} /tmp/.nx; install -d -m 0700 -o {USER} /tmp/.nx/{USER}; install "
            f"-d -m 0755 -o {PEER} /tmp/.nx/{PEER}"
        )
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


class TestTmpfiles:
    ISOLATED = "mount -t tmpfs tmpfs /etc/tmpfiles.d"

    @pytest.mark.tool("systemd-tmpfiles")
    def test_the_printed_drop_in_makes_systemd_tmpfiles_create_the_container(self) -> None:
        """What --tmpfiles prints is a drop-in systemd-tmpfiles accepts, creating root:root 1777."""
        printed = run_as_user("", ["provision", "--tmpfiles"], uid=0).stdout
        assert printed == drop_in_text() and "d /tmp/.nx 1777 root root -" in printed.splitlines()
        quoted = shlex.quote(printed)
        run = run_as_user(
            f"{self.ISOLATED}; printf '%s' {quoted} > /etc/tmpfiles.d/nxsock.conf; systemd-tmpfiles --create "
            "/etc/tmpfiles.d/nxsock.conf",
            ["check-root", "--json"],
            post=STAT,
        )
        assert run.post.startswith("directory 0:0 1777") and doc(run)["state"] == "ok"

    def test_install_writes_applies_is_idempotent_and_uninstall_removes_only_its_own(self) -> None:
        run = run_as_user(
            self.ISOLATED,
            ["provision", "--tmpfiles", "--install", "--json"],
            uid=0,
            post=f"{STAT}; head -1 /etc/tmpfiles.d/nxsock.conf; stat -c '%a %u' /etc/tmpfiles.d/nxsock.conf",
        )
        assert run.returncode == 0 and doc(run)["changed"] is True
        assert "directory 0:0 1777" in run.post and "# Written by nxsock" in run.post and "644 0" in run.post
        uninstall = run_as_user(
            f"{self.ISOLATED}; printf 'd /srv 0755 root root -\\n' > /etc/tmpfiles.d/nxsock.conf",
            ["provision", "--tmpfiles", "--uninstall"],
            uid=0,
            post="cat /etc/tmpfiles.d/nxsock.conf",
        )
        assert uninstall.returncode == 1 and "d /srv" in uninstall.post

    def test_install_needs_root(self) -> None:
        run = run_as_user("", ["provision", "--tmpfiles", "--install"])
        assert run.returncode == 77 and "sudo nxsock provision --tmpfiles --install" in run.stderr
