"""Every command that reads a workspace takes ``--workspace``; every option does what it says; bad values are one line.

Also the sentences a person reads: counts in the right number, no refusal
said twice, no heading over nothing, findings that state what was observed.
"""
from __future__ import annotations

import typing as t

from documents import parsed
from harness import USER, run_as_user

HOME = f"/home/u{USER}"
WS = f"{HOME}/ws"
D = f"{WS}/.nx/workspace-data/d"
WORKSPACE = f"""
install -d -o {USER} -g {USER} {WS} {WS}/node_modules/nx {WS}/.nx {WS}/.nx/workspace-data {D}
echo '{{}}' > {WS}/nx.json
echo '{{"version": "24.0.6"}}' > {WS}/node_modules/nx/package.json
printf 'first line\\nsecond line\\n' > {D}/disabled
chown -R {USER}:{USER} {WS}/.nx
"""


class TestWorkspaceIsUsed:

    def _run(self, *args: str) -> dict[str, t.Any]:
        """From a directory outside any workspace, with --workspace naming it."""
        result = run_as_user(WORKSPACE, [*args, "--workspace", WS], cwd=HOME)
        document = parsed(result.stdout, result.args)
        return document

    def test_doctor_audits_the_named_workspace(self) -> None:
        document = self._run("doctor", "--json")
        environment = next(f for f in document["findings"] if f["id"] == "environment")
        assert f"workspace {WS} (found by --workspace)" in environment["message"]
        marker = next(f for f in document["findings"] if f["id"] == "daemon-disabled")
        assert marker["path"] == f"{D}/disabled" and marker["detail"] == ["first line", "second line"]

    def test_reset_clears_the_named_workspaces_marker(self) -> None:
        result = run_as_user(WORKSPACE, ["reset", "--json", "--daemon-marker", "--workspace", WS], cwd=HOME,
                             post=f"test -e {D}/disabled && echo still-there || echo gone")
        document = parsed(result.stdout, "reset")
        assert document["marker_reason"] == "first line\nsecond line" and result.post.strip() == "gone"

    def test_cache_path_is_the_named_workspaces_version(self) -> None:
        assert self._run("cache", "path", "--json")["dir"] == f"/tmp/.nx/{USER}/native-cache/24.0.6"

    def test_the_reading_cache_commands_take_the_host_options_doctor_takes(self) -> None:
        # Nx 23.1.1 keeps its cache under TMPDIR: --tmpdir and --nx-version are both seen, the workspace's 24.0.6 is
        # not.
        legacy = self._run("cache", "path", "--json", "--nx-version", "23.1.1", "--tmpdir", "/var/tmp")
        assert legacy["dir"].startswith("/var/tmp/nx-native-file-cache-"), legacy
        listing = self._run("cache", "list", "--json", "--nx-version", "23.1.1", "--tmpdir", "/var/tmp")
        assert listing["dir"] == legacy["dir"]

    def test_doctor_nx_version_audits_for_that_release(self) -> None:
        document = self._run("doctor", "--json", "--nx-version", "23.3.2")
        assert any(f["message"] == "Nx 23.3.2, current layout (ts)." for f in document["findings"])


class TestTmpfilesCheck:
    ISOLATED = "mount -t tmpfs tmpfs /etc/tmpfiles.d"

    def test_check_alone_exits_1_while_the_drop_in_is_missing(self) -> None:
        run = run_as_user(self.ISOLATED, ["provision", "--tmpfiles", "--check"], uid=0,
                          post="ls /etc/tmpfiles.d | wc -l")
        assert run.returncode == 1 and "would write" in run.stdout and run.post.strip() == "0"

    def test_check_alone_exits_0_once_it_is_installed(self) -> None:
        from nxsock.act.tmpfiles import drop_in_text

        quoted = drop_in_text().replace("'", "'\\''")
        run = run_as_user(f"{self.ISOLATED}; printf '%s' '{quoted}' > /etc/tmpfiles.d/nxsock.conf",
                          ["provision", "--tmpfiles", "--check", "--json"], uid=0)
        assert run.returncode == 0 and parsed(run.stdout, "provision-tmpfiles")["changed"] is False
