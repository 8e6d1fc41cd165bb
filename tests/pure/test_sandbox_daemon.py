"""Nx ≥ 24.0.5's client and user-namespace sandboxes: the rule, the verdict, and what doctor and paths say.

The real daemon and client in the real sandboxes are in ``test_sandboxes.py``;
these pin the rule on in-memory machines and, as a real unprivileged user in a
real user namespace (``unshare -U``), what doctor says there.
"""
from __future__ import annotations

import typing as t

import pytest
from click.testing import CliRunner
from conftest import STICKY, USER, environment, machine, mine
from documents import parsed

from nxsock.app import cli
from nxsock.audit.doctor import gather, run_checks
from nxsock.core.fsview import Entry
from nxsock.core.resolver import resolve
from nxsock.core.sandbox_daemon import client_checks_socket_ancestry, client_refusal, judge_sandbox
from nxsock.output.paths_json import fix_line

OVERFLOW = Entry("dir", 65534, 65534, 0o755)


@pytest.mark.parametrize(
    ("version", "checks"),
    [("23.1.1", False), ("23.3.2", False), ("24.0.0", False), ("24.0.2", False), ("24.0.5", True), ("24.0.6", True),
     ("24.0.5-beta.1", True), ("25.1.0", True), (None, True)],
)
def test_the_client_judges_the_recorded_socket_from_24_0_5(version: str | None, checks: bool) -> None:
    """The one predicate: 24.0.5 added the check to the client; an unknown version is taken as the newest."""
    assert client_checks_socket_ancestry(version) is checks


class TestVerdict:
    """Over the sandbox's view the walk meets / as uid 65534 before anything a sandbox can allow."""

    def test_outside_the_sandbox_view_refuses_at_the_root(self) -> None:
        verdict = judge_sandbox(machine(), USER, USER, "24.0.6", "/home/ada/acme/.nx/workspace-data/d")
        assert not verdict.inside and not verdict.usable
        assert verdict.refusal is not None and (verdict.refusal.dir, verdict.refusal.uid) == ("/", 65534)
        assert verdict.marker == "/home/ada/acme/.nx/workspace-data/d/disabled"

    def test_releases_without_the_check_are_usable(self) -> None:
        assert judge_sandbox(machine(), USER, USER, "24.0.2", "/home/ada/acme/.nx/workspace-data/d").usable

    def test_inside_it_reads_the_live_view_and_knows_it_is_inside(self) -> None:
        inside = machine(
            {"/": OVERFLOW, "/tmp": Entry("dir", 65534, 65534, 0o1777)},
            files={"/proc/self/uid_map": f"{USER} {USER} 1\n"},
        )
        verdict = judge_sandbox(inside, USER, USER, "24.0.6", "/home/ada/acme/.nx/workspace-data/d")
        assert verdict.inside and not verdict.usable

    def test_the_client_wants_a_private_directory_of_yours_below_safe_levels(self) -> None:
        base = {"/home/ada/acme/.nx": mine(0o755), "/home/ada/acme/.nx/workspace-data": mine(0o755)}
        ok = machine({**base, "/home/ada/acme/.nx/workspace-data/d": mine()})
        assert client_refusal(ok, USER, USER, "/home/ada/acme/.nx/workspace-data/d/d.sock") is None
        open_dir = machine({**base, "/home/ada/acme/.nx/workspace-data/d": mine(0o755)})
        assert client_refusal(open_dir, USER, USER, "/home/ada/acme/.nx/workspace-data/d/d.sock").kind == "not-private"  # type: ignore[union-attr]
        peer = machine({"/tmp/.nx": STICKY, "/tmp/.nx/1000": Entry("dir", 1001, 1001, 0o777)})
        refusal = client_refusal(peer, USER, USER, "/tmp/.nx/1000/sockets/x/d.sock")
        assert refusal is not None and refusal.dir == "/tmp/.nx/1000" and refusal.uid == 1001


def _doctor_inside(**fields: t.Any) -> list[t.Any]:
    view = machine({"/": OVERFLOW, "/tmp": Entry("dir", 65534, 65534, 0o1777), "/home": OVERFLOW},
                   files={"/proc/self/uid_map": f"{USER} {USER} 1\n"})
    env = environment(**fields)
    return [f for _, f in run_checks(gather(resolve(env, view), view))]


class TestDoctorInside:
    """Inside the sandbox doctor says the daemon cannot be used and never offers a directory that cannot work there."""

    def test_it_names_no_daemon_as_what_works_and_the_marker_with_what_clears_it_outside(self) -> None:
        findings = _doctor_inside()
        daemon = next(f for f in findings if f.id == "sandbox-daemon")
        assert daemon.severity == "warn" and fix_line(daemon.advice) == "export NX_DAEMON=false"
        assert "uid 65534" in daemon.message and "nxsock reset --daemon-marker" in (daemon.hint or "")
        assert "/home/ada/acme/.nx/workspace-data/d/disabled" in (daemon.hint or "")

    def test_no_remedy_inside_points_nx_socket_dir_anywhere(self) -> None:
        for finding in _doctor_inside():
            assert "NX_SOCKET_DIR" not in (fix_line(finding.advice) or ""), finding
            assert finding.severity not in ("warn", "error") or fix_line(finding.advice) or finding.hint, finding

    def test_before_24_0_5_there_is_nothing_to_say_about_the_daemon(self) -> None:
        assert not any(f.id == "sandbox-daemon" for f in _doctor_inside(nx_version="24.0.2"))


class TestDoctorOutside:
    """Outside, doctor says what a sandbox would do to Nx: for 24.0.5+ that no allowlist brings the daemon back."""

    def _findings(self, version: str, sandbox: str | None = None) -> list[t.Any]:
        view = machine()
        return [f for _, f in run_checks(gather(resolve(environment(nx_version=version), view), view, sandbox))]

    def test_the_note_no_longer_implies_an_allowlist_restores_the_daemon(self) -> None:
        findings = self._findings("24.0.6")
        note = next(f for f in findings if f.id == "user-namespace")
        assert "without its daemon, which no allowlist makes usable" in (note.hint or "")
        daemon = next(f for f in findings if f.id == "sandbox-daemon")
        assert daemon.severity == "info" and "NX_DAEMON=false" in (daemon.hint or "")
        older = self._findings("24.0.2")
        assert not any(f.id == "sandbox-daemon" for f in older)
        assert "without its daemon" not in (next(f for f in older if f.id == "user-namespace").hint or "")

    def test_a_named_sandbox_is_a_warning_whose_fix_prints_its_configuration(self) -> None:
        daemon = next(f for f in self._findings("24.0.6", "srt") if f.id == "sandbox-daemon")
        assert (
            daemon.severity == "warn"
            and fix_line(daemon.advice) == "nxsock paths --format srt"
            and "inside srt" in daemon.message
        )
        assert not any(f.id == "sandbox-daemon" for f in self._findings("24.0.6", "docker"))


class TestPathsDocument:
    def test_json_says_it_for_linux_and_nothing_elsewhere(self) -> None:
        run = CliRunner().invoke(cli, ["paths", "--platform", "linux", "--nx-version", "24.0.6", "--json"])
        sandbox = parsed(run.stdout, "paths")["user_namespace_sandbox"]
        assert sandbox["daemon_usable"] is False and sandbox["run_inside"] == "NX_DAEMON=false"
        assert sandbox["clear_marker"] == "nxsock reset --daemon-marker" and sandbox["refusal"]["uid"] == 65534
        assert (
            sandbox["refusal"]["remedy"] == "export NX_DAEMON=false" and "cannot use its daemon" in sandbox["message"]
        )
        older = CliRunner().invoke(cli, ["paths", "--platform", "linux", "--nx-version", "24.0.2", "--json"])
        assert parsed(older.stdout, "paths")["user_namespace_sandbox"]["daemon_usable"] is True
        mac = CliRunner().invoke(cli, ["paths", "--platform", "darwin", "--nx-version", "24.0.6", "--json"])
        assert parsed(mac.stdout, "paths")["user_namespace_sandbox"] is None

    def test_the_human_report_says_it(self) -> None:
        run = CliRunner().invoke(cli, ["paths", "--platform", "linux", "--nx-version", "24.0.6"])
        assert "In a user-namespace sandbox:" in run.stdout and "NX_DAEMON=false nx" in run.stdout
