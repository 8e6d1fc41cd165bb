"""A value read from disk is checked by its grammar before it is part of a path; the policy knows the shared container.

Issue 21, findings 1 and 2: a ``version`` of ``../..`` made the binding-cache
directory ``/tmp/.nx`` (and ``doctor`` offered ``chmod 0700`` of it); one of
``../../../../etc/nologin/x`` made ``--fix`` create ``/etc/nologin``.
"""
from __future__ import annotations

import json
import typing as t

import pytest
from conftest import PEER, USER, environment, machine
from hypothesis import given
from hypothesis import strategies as st

from nxsock.act import acting
from nxsock.act.outcomes import Refused
from nxsock.audit.checks_levels import check_environment
from nxsock.audit.findings import Context
from nxsock.core._pathname import basename, dirname, join
from nxsock.core.fsview import Entry
from nxsock.core.host import host_environment
from nxsock.core.releases import is_version
from nxsock.core.remedy import Chmod, Chown, Create, Remedy, Remove, RemoveTree, Step, Withheld, vet
from nxsock.core.resolver import resolve
from nxsock.core.wording import context_for
from nxsock.output.paths_json import fix_line

WS = "/home/ada/acme"
PROVISIONED = {"/tmp/.nx": Entry("dir", 0, 0, 0o1777)}


class TestTheVersionGrammar:
    @pytest.mark.parametrize(
        "text",
        [
            "24.0.6",
            "23.1.1",
            "0.0.0",
            "v24.0.6",
            "=24.0.6",
            "25.0.0-beta.1",
            "1.2.3-rc.0+build.7",
            "1.2.3-x-y",
            "24.0.6+sha.0a1b",
        ],
    )
    def test_a_version_npm_accepts_is_one(self, text: str) -> None:
        assert is_version(text)

    @pytest.mark.parametrize(
        "text",
        [
            "../..",
            "..",
            ".",
            "",
            "24.0.6/../..",
            "24.0.6/x",
            "/etc",
            "24.0.6\n",
            " 24.0.6",
            "24.0.6 ",
            "01.2.3",
            "1.2",
            "1.2.3-01",
            "1.2.3-",
            "1.2.3+",
            "1.2.3+..",
            "24.0.6\\..",
            "24.0.6\x1b[2J",
            "24.0.6\0",
            "v",
            "1.2.3-" + "a" * 300,
            "1" * 20 + ".0.0",
        ],
    )
    def test_anything_else_is_not(self, text: str) -> None:
        assert not is_version(text)

    @given(st.text(max_size=40))
    def test_a_version_is_always_one_plain_name(self, text: str) -> None:
        """Whatever passes is a single path component: joined to a directory, it is a direct child of it."""
        if is_version(text):
            assert dirname(join("/tmp/.nx/1000/native-cache", text)) == "/tmp/.nx/1000/native-cache"
            assert basename(join("/tmp/.nx/1000/native-cache", text)) == text


def _checkout(version: str) -> dict[str, object]:
    manifest = f"{WS}/node_modules/nx/package.json"
    return {
        "extra": {
            f"{WS}/node_modules/nx": Entry("dir", PEER, PEER, 0o755),
            manifest: Entry("file", PEER, PEER, 0o644),
            **PROVISIONED,
        },
        "files": {manifest: json.dumps({"name": "nx", "version": version})},
    }


class TestAVersionThatIsNoneIsAFinding:
    @pytest.mark.parametrize("version", ["../..", "../../../../etc/nologin/x", "24.0.6\x1b]0;owned\x07", "x" * 500])
    def test_the_snapshot_keeps_it_out_of_every_path_and_doctor_says_it_in_one_escaped_line(self, version: str) -> None:
        parts = _checkout(version)
        view = machine(parts["extra"], files=parts["files"])  # type: ignore[arg-type]
        env = host_environment(view, environ={"HOME": "/home/ada"}, cwd=WS, uid=0)
        assert env.nx_version is None and env.nx_version_rejected == (version, f"{WS}/node_modules/nx/package.json")
        resolution = resolve(env, view)
        assert resolution.native_cache.dir == "/tmp/.nx/0/native-cache/24.0.6"  # the newest release's, as for no Nx
        assert all(a.path.startswith("/tmp/.nx/0") for a in resolution.actions), resolution.actions
        ctx = Context(resolution, view, context_for(resolution, view), None, 0, (), ())
        said = [f for f in check_environment(ctx) if "is not a version" in f.message]
        assert len(said) == 1 and said[0].severity == "warn" and fix_line(said[0].advice) is None
        assert "\n" not in said[0].message and "\x1b" not in said[0].message and len(said[0].message) < 220

    def test_nx_version_is_checked_the_same_way(self) -> None:
        env = host_environment(machine(), environ={"HOME": "/home/ada"}, cwd=WS, uid=USER, nx_version="../..")
        assert env.nx_version is None and env.nx_version_rejected == ("../..", "--nx-version")

    def test_the_resolver_looks_again_where_the_name_becomes_a_path(self) -> None:
        """An environment built around the snapshot (a caller's ``_replace``) still names nothing after ``../..``."""
        view = machine(PROVISIONED)
        resolution = resolve(environment(uid=0, nx_version="../.."), view)
        assert resolution.native_cache.dir == "/tmp/.nx/0/native-cache/24.0.6"
        assert "/tmp/.nx" not in [a.path for a in resolution.actions]


def _policy(uid: int = USER, **variables: str):  # type: ignore[no-untyped-def]
    view = machine(
        {
            **PROVISIONED,
            "/tmp/.nx/1000": Entry("dir", USER, USER, 0o700),
            "/home/ada/.ssh": Entry("dir", USER, USER, 0o700),
            "/etc": Entry("dir", 0, 0, 0o755),
            "/etc/x.sock": Entry("socket", USER, USER, 0o600),
            "/tmp/x.sock": Entry("socket", USER, USER, 0o600),
        }
    )
    env = environment({"HOME": "/home/ada", **variables}, uid=uid, gid=uid)
    return context_for(resolve(env, view), view).policy


def _shown(step: Step, uid: int = USER, **variables: str) -> bool:
    return isinstance(vet(Remedy((step,), "x"), _policy(uid, **variables)), Remedy)


class TestThePolicyKnowsTheSharedContainer:
    @pytest.mark.parametrize("uid", [0, USER])
    @pytest.mark.parametrize("mode", [0o700, 0o755, 0o777, 0o1700, 0o0])
    def test_no_mode_but_1777(self, uid: int, mode: int) -> None:
        assert not _shown(Chmod("/tmp/.nx", mode=mode), uid)
        assert _shown(Chmod("/tmp/.nx", mode=0o1777), uid)

    @pytest.mark.parametrize("owner", [(USER, USER), (0, USER), (PEER, 0)])
    def test_no_owner_but_root(self, owner: tuple[int, int]) -> None:
        assert not _shown(Chown("/tmp/.nx", owner=owner[0], group=owner[1]), 0)
        assert _shown(Chown("/tmp/.nx", owner=0, group=0), 0)

    def test_the_temp_dirs_container_is_the_same_container(self) -> None:
        """``$TMPDIR/.nx`` is what a legacy Nx or another spelling calls the container: no 0700 there either."""
        assert not _shown(Chmod("/tmp/.nx", mode=0o700), 0, TMPDIR="/tmp/")
        assert not isinstance(vet(Remedy((RemoveTree("/tmp/.nx"),), "x"), _policy(0)), Remedy)

    def test_the_acting_code_refuses_it_too_before_touching_anything(self, monkeypatch: pytest.MonkeyPatch) -> None:
        def reached(*args: object, **kwargs: object) -> t.NoReturn:
            raise AssertionError(f"the acting code went to the disk: {args}")

        monkeypatch.setattr(
            acting, "_on_the_entry", reached
        )  # a regression fails here, never on the machine's /tmp/.nx
        monkeypatch.setattr(acting, "_parent_of", reached)
        assert isinstance(acting.change_mode("/tmp/.nx", 0o700, 0), Refused)
        assert isinstance(acting.change_owner("/tmp/.nx", USER, USER, 0), Refused)
        assert isinstance(acting.create_directory("/tmp/.nx", 0o700, 0), Refused)
        assert isinstance(acting.create_directory("/tmp/.nx", None, 0), Refused)


class TestACreateIsVettedLikeEveryStep:
    @pytest.mark.parametrize(
        "path", ["/etc/nologin", "/home/ada/.ssh/authorized_keys", "/root/x", "/usr/local/x", "/srv/x"]
    )
    @pytest.mark.parametrize("uid", [0, USER])
    def test_never_outside_nx_s_levels(self, path: str, uid: int) -> None:
        for step in (Create(path), Create(path, mode=0o700)):
            verdict = vet(Remedy((step,), "x"), _policy(uid))
            assert isinstance(verdict, Withheld) and "not one of Nx's own directories" in verdict.reason, verdict

    def test_nx_s_own_levels_may_be_created(self) -> None:
        assert _shown(Create("/tmp/.nx/1000/native-cache"))
        assert _shown(Create(f"{WS}/.nx/workspace-data"))

    def test_only_the_missing_temp_dir_this_shell_names_and_never_a_system_path(self) -> None:
        assert _shown(Create("/tmp/missing", mode=0o700), USER, TMPDIR="/tmp/missing")
        assert not _shown(Create("/tmp/other", mode=0o700), USER, TMPDIR="/tmp/missing")
        assert not _shown(Create("/etc/nologin"), 0, TMPDIR="/etc/nologin")
        assert not _shown(Create("/var/tmp"), 0, TMPDIR="/var/tmp")


class TestTheDaemonsRecordNamesNoPlace:
    """``server-process.json`` is written by whoever can write ``<workspace-data>/d``: its fields are data, not
    places."""

    D = f"{WS}/.nx/workspace-data/d"

    def _resolved(self, record: dict[str, object], uid: int = USER, **variables: str):  # type: ignore[no-untyped-def]
        view = machine(
            {
                **PROVISIONED,
                f"{WS}/.nx": Entry("dir", USER, USER, 0o755),
                f"{WS}/.nx/workspace-data": Entry("dir", USER, USER, 0o755),
                self.D: Entry("dir", USER, USER, 0o700),
                "/etc": Entry("dir", 0, 0, 0o755),
                "/etc/x.sock": Entry("socket", PEER, PEER, 0o600),
                f"{self.D}/server-process.json": Entry("file", USER, USER, 0o644),
            },
            files={f"{self.D}/server-process.json": json.dumps(record)},
        )
        return resolve(environment({"HOME": "/home/ada", **variables}, uid=uid, gid=uid), view), view

    @pytest.mark.parametrize("socket_path", ["/tmp/.nx/1000/sockets/../../../../etc/x.sock", "/etc/x", "/etc//x.sock"])
    def test_a_socket_path_that_climbs_or_names_no_socket_is_the_records_problem(self, socket_path: str) -> None:
        resolution, _ = self._resolved({"processId": 2, "socketPath": socket_path, "nxVersion": "24.0.6"})
        record = resolution.daemon_record
        assert record is not None and record.problem is not None and record.socket_path == socket_path
        assert resolution.sockets["daemon"].path != socket_path and record.connect is None

    def test_a_recorded_socket_outside_the_socket_root_is_not_surveyed(self) -> None:
        from nxsock.audit.checks_sockets import survey_sockets

        resolution, view = self._resolved({"processId": 2, "socketPath": "/etc/x.sock"}, NX_SOCKET_DIR="/etc")
        assert [path for path, _, _ in survey_sockets(resolution, view) if path.startswith("/etc")] == []

    def test_a_system_directory_is_never_a_configured_one_whose_sockets_are_nx_s(self) -> None:
        assert not _shown(Remove("/etc/x.sock"), USER, NX_SOCKET_DIR="/etc")
        assert not _shown(Remove("/tmp/x.sock"), USER, NX_SOCKET_DIR="/tmp")

    def test_a_recorded_version_that_is_none_is_not_known(self) -> None:
        resolution, _ = self._resolved({"processId": 2, "socketPath": f"{self.D}/d.sock", "nxVersion": "../..\n"})
        assert resolution.daemon_record is not None and resolution.daemon_record.nx_version is None
