"""provision as root and as a user, on real states in private namespaces."""
from __future__ import annotations

import json
import typing as t

from documents import parsed
from harness import (
    PEER,
    SNAPSHOT,
    USER,
    oracle_command,
    run_as_user,
)


def doc(run: t.Any) -> dict[str, t.Any]:
    return parsed(run.stdout, run.args)


class TestAsUser:
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
        run = run_as_user(
            f"install -d -m 1777 /tmp/.nx; install -d -m 0755 -o {PEER} /tmp/.nx/{USER}", ["provision", "--json"]
        )
        assert run.returncode == 77 and doc(run)["refusal"]["kind"] == "foreign-owner"
        assert run.tree_before == run.tree_after

    def test_dry_run_as_a_user_changes_nothing(self) -> None:
        run = run_as_user("", ["provision", "--dry-run", "--json"])
        assert doc(run)["dry_run"] is True and len(doc(run)["steps"]) == 4
        assert run.tree_before == run.tree_after
