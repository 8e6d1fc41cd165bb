"""The release table, and what each release's rules change in a prediction (docs/behaviour.md#release-differences)."""
from __future__ import annotations

import typing as t

import pytest
from documents import parsed


class TestTwoCheckouts:
    """Nx 23.3.2 in one checkout, 24.0.6 in another, one user, one cache: each entry is its checkout's."""

    @staticmethod
    def _run(args: list[str], cwd: str, post: str = "") -> t.Any:
        from harness import USER as REAL_USER
        from harness import as_user_prefix, install_nx, run_as_user

        home = f"/home/u{REAL_USER}"
        setup = []
        for name, version in (("old", "23.3.2"), ("new", "24.0.6")):
            nx = install_nx(version)
            ws = f"{home}/{name}"
            setup.append(
                f"install -d -o {REAL_USER} {ws}/node_modules; echo '{{}}' > {ws}/nx.json; "
                f"ln -s {nx}/node_modules/nx {ws}/node_modules/nx; chown -R {REAL_USER} {ws}; "
                f"(cd {ws} && {as_user_prefix()} node -e \"require('nx/src/native')\")"
            )
        # An entry of the old checkout's previous release, as an upgrade in place leaves it.
        old_hash_entry = f"/tmp/.nx/{REAL_USER}/native-cache/23.3.2"
        setup.append(
            f"f=$(ls {old_hash_entry}); install -d -m 0700 -o {REAL_USER} /tmp/.nx/{REAL_USER}/native-cache/23.3.1; "
            f"cp -p {old_hash_entry}/$f /tmp/.nx/{REAL_USER}/native-cache/23.3.1/$(echo $f | sed "
            "'s/^23.3.2-/23.3.1-/'); "
            f"chown -R {REAL_USER} /tmp/.nx/{REAL_USER}/native-cache"
        )
        return run_as_user("; ".join(setup), args, cwd=f"{home}/{cwd}", post=post)

    def test_prune_in_one_keeps_the_others_current_entry(self) -> None:
        """Only the old checkout's previous release goes; the other checkout's 24.0.6 entry stays."""
        result = self._run(["cache", "prune", "--json"], "old", post="find /tmp/.nx -name '*.node' | sort")
        doc = parsed(result.stdout, "cache-prune")
        removed = [r["path"] for r in doc["removed"]]
        assert len(removed) == 1 and "/23.3.1/23.3.1-" in removed[0], doc
        kept = result.post.split()
        assert any("/24.0.6/24.0.6-" in p for p in kept) and any("/23.3.2/23.3.2-" in p for p in kept), kept

    @pytest.mark.parametrize("checkout", ["old", "new"])
    def test_doctor_does_not_call_the_other_checkouts_entry_a_leftover(self, checkout: str) -> None:
        doc = parsed(self._run(["doctor", "--json"], checkout).stdout, "doctor")
        leftovers = [
            f["message"] for f in doc["findings"] if f["id"] == "leftovers" and "binding cache" in f["message"]
        ]
        # The old checkout has its own previous release to prune; the new one has nothing of its own.
        assert leftovers == (
            ["1 binding cache entry of other versions, interrupted or untrusted."] if checkout == "old" else []
        )


class TestSocketModes:
    """Only the daemon's socket is chmodded 0600 after listen (from 23.1.2); other sockets keep the umask's mode."""

    @pytest.mark.parametrize(("release", "warned"), [("24.0.6", True), ("23.1.1", False)])
    def test_a_widened_daemon_socket_is_flagged_and_a_plugin_socket_is_not(self, release: str, warned: bool) -> None:
        from harness import USER as REAL_USER
        from harness import WAIT_FOR, WHILE_PARENT_LIVES, install_nx, run_as_user

        from nxsock.core.layout import plugin_leaf

        ws = f"/home/u{REAL_USER}/ws"
        nx = install_nx(release)
        bind = (
            "/usr/bin/python3 -c 'import os,pathlib,socket,sys,time; "
            "s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); "
            f"s.listen(); pathlib.Path(sys.argv[1] + sys.argv[2]).touch(); {WHILE_PARENT_LIVES}'"
        )
        if release == "23.1.1":
            daemon_dir, plugin_dir = "/tmp/0123456789abcdef0123", "/tmp"
            plugin = f"{plugin_dir}/plugin1-1-abcdef01.sock"
        else:
            sockets = f"/tmp/.nx/{REAL_USER}/sockets"
            daemon_dir, plugin_dir = f"{sockets}/0123456789abcdef0123", f"{sockets}/{plugin_leaf(ws)}"
            plugin = f"{plugin_dir}/p1-1-abcdef01.sock"
        setup = (
            f"install -d -o {REAL_USER} {ws}/node_modules; echo '{{}}' > {ws}/nx.json; "
            f"ln -s {nx}/node_modules/nx {ws}/node_modules/nx; chown -R {REAL_USER} {ws}; "
            + (
                ""
                if release == "23.1.1"
                else f"install -d -m 1777 /tmp/.nx; install -d -m 0700 -o {REAL_USER} /tmp/.nx/{REAL_USER} "
                     f"{sockets} {plugin_dir}; "
            )
            + f"install -d -m 0700 -o {REAL_USER} {daemon_dir}; "
            f"setpriv --reuid={REAL_USER} --regid={REAL_USER} --clear-groups {bind} {daemon_dir}/d.sock .up & "
            f"setpriv --reuid={REAL_USER} --regid={REAL_USER} --clear-groups {bind} {plugin} .up & {WAIT_FOR} "
            f"{daemon_dir}/d.sock.up && {WAIT_FOR} {plugin}.up; "
            f"chmod 0666 {daemon_dir}/d.sock; chmod 0755 {plugin}"
        )
        run = run_as_user(setup, ["doctor", "--json", "--only", "sockets"], cwd=ws)
        assert run.stdout, run.stderr[-1500:]
        doc = parsed(run.stdout, "doctor")
        flagged = [f["path"] for f in doc["findings"] if "makes its daemon socket" in f["message"]]
        assert flagged == ([f"{daemon_dir}/d.sock"] if warned else []), doc["findings"]
