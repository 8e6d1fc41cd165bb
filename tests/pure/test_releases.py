"""The release table, and what each release's rules change in a prediction (docs/behaviour.md#release-differences)."""
from __future__ import annotations

import json
import typing as t

import pytest
from click.testing import CliRunner
from conftest import PEER, STICKY, USER, environment, machine, mine
from documents import parsed

from nxsock.cli import cli
from nxsock.core.fsview import Entry, UserNamespaceView
from nxsock.core.releases import BASELINE, CHANGES, KNOWN_RELEASES, NEWEST_KNOWN, ReleaseRules, rules_for
from nxsock.core.resolver import client_socket_refusal, resolve


class TestTheTable:
    def test_every_change_names_a_known_release_and_a_rule(self) -> None:
        """A change keyed by a release nxsock does not know, or a rule the rules do not have, is a typo."""
        for change in CHANGES:
            assert change.release in KNOWN_RELEASES
            assert change.rule in ReleaseRules._fields and change.rule in BASELINE

    def test_changes_are_listed_oldest_first(self) -> None:
        order = [KNOWN_RELEASES.index(c.release) for c in CHANGES]
        assert order == sorted(order)

    @pytest.mark.parametrize(
        ("version", "release", "assumed"),
        [
            ("23.1.1", "23.1.1", False),
            ("22.7.0", "23.1.1", False),  # older still is the legacy layout
            ("23.2.5", "23.2.1", False),  # between two known releases: the older one's rules
            ("24.0.4", "24.0.2", False),
            ("24.0.6-beta.1", "24.0.6", False),
            ("24.1.0", NEWEST_KNOWN, True),
            ("25.0.0", NEWEST_KNOWN, True),
            (None, NEWEST_KNOWN, True),
            ("not a version", NEWEST_KNOWN, True),
        ],
    )
    def test_a_version_gets_the_rules_of_the_nearest_known_release(
        self, version: str | None, release: str, assumed: bool
    ) -> None:
        rules = rules_for(version)
        assert (rules.release, rules.assumed) == (release, assumed)

    @pytest.mark.parametrize(
        ("rule", "first"),
        [
            ("current_layout", "23.1.2"),
            ("tmpdir_enoent_fails", "23.1.2"),
            ("native_sockets", "24.0.0"),
            ("console_socket", "24.0.0"),
            ("readiness_socket", "24.0.0"),
            ("walk_tier_ancestry", "24.0.5"),
            ("walk_configured_ancestry", "24.0.5"),
            ("walk_cache_dir_ancestry", "24.0.5"),
            ("client_socket_check", "24.0.5"),
            ("cache_dlopen_falls_back", "24.0.5"),
            ("untrusted_data_dir_refused", "24.0.6"),
        ],
    )
    def test_a_rule_holds_from_the_release_that_introduced_it(self, rule: str, first: str) -> None:
        """Each yes/no rule switches on at one release; TMPDIR's ENOENT is the one that switches off again."""
        held = [r for r in KNOWN_RELEASES if getattr(rules_for(r), rule)]
        assert held[0] == first
        if rule == "tmpdir_enoent_fails":
            assert held == [r for r in KNOWN_RELEASES if r.startswith("23.") and r != "23.1.1"]
        else:
            assert held == list(KNOWN_RELEASES[KNOWN_RELEASES.index(first):])

    def test_budget_units_follow_the_implementation(self) -> None:
        """JavaScript's length counts UTF-16 units; the crate counts UTF-8 bytes."""
        assert {r: rules_for(r).budget_units for r in ("23.3.2", "24.0.0")} == {"23.3.2": "utf-16", "24.0.0": "utf-8"}
        assert [rules_for(r).shared_data_home_test for r in ("23.1.3", "23.2.0", "24.0.5", "24.0.6")] == [
            None, "same-path", "same-path", "at-or-under"]


def _walkable(extra: t.Mapping[str, Entry]) -> t.Any:
    return machine({"/tmp/.nx": Entry("dir", PEER, PEER, 0o1777), **extra})


class TestPerReleasePredictions:
    """The same state, predicted release by release."""

    @pytest.mark.parametrize(
        ("release", "tier"),
        [("23.3.2", "home"), ("24.0.0", "home"), ("24.0.2", "home"), ("24.0.5", "workspace"), ("24.0.6", "workspace")],
    )
    def test_a_home_beneath_a_peers_directory(self, release: str, tier: str) -> None:
        state = _walkable({"/home/peer": Entry("dir", PEER, PEER, 0o755), "/home/peer/u": mine(0o755)})
        assert resolve(environment({"HOME": "/home/peer/u"}, nx_version=release), state).socket_root.tier == tier

    @pytest.mark.parametrize(("release", "tier"), [("24.0.2", "shared"), ("24.0.5", "home")])
    def test_a_world_writable_tmp_without_sticky(self, release: str, tier: str) -> None:
        state = machine({"/tmp": Entry("dir", 0, 0, 0o777)})
        assert resolve(environment(nx_version=release), state).socket_root.tier == tier

    @pytest.mark.parametrize(("release", "tier"), [("24.0.2", "configured"), ("24.0.5", "workspace")])
    def test_a_socket_dir_under_a_world_writable_parent(self, release: str, tier: str) -> None:
        state = machine({"/srv/ww": Entry("dir", 0, 0, 0o777)})
        env = environment({"NX_SOCKET_DIR": "/srv/ww/socks"}, nx_version=release)
        assert resolve(env, state).socket_root.tier == tier

    @pytest.mark.parametrize(("release", "used"), [("24.0.2", True), ("24.0.5", False)])
    def test_a_cache_dir_under_a_world_writable_parent(self, release: str, used: bool) -> None:
        state = machine({"/srv/ww": Entry("dir", 0, 0, 0o777)})
        env = environment({"NX_NATIVE_FILE_CACHE_DIRECTORY": "/srv/ww/bincache"}, nx_version=release)
        assert (resolve(env, state).native_cache.bypass_reason is None) == used

    def test_a_relative_socket_dir_lands_in_the_workspace_root_for_the_daemon_only(self) -> None:
        """The daemon runs in the workspace root; the caller's tasks and plugins resolve it where they run."""
        env = environment({"NX_SOCKET_DIR": "socks"}, cwd="/home/ada/acme/apps/one")
        result = resolve(env, machine({"/home/ada/acme/apps": mine(0o755), "/home/ada/acme/apps/one": mine(0o755)}))
        assert result.sockets["daemon"].path == "/home/ada/acme/socks/d.sock"
        assert result.sockets["forked"].dir == "/home/ada/acme/apps/one/socks"
        assert result.sockets["plugin"].dir == "/home/ada/acme/apps/one/socks"

    def test_the_legacy_layout_hashes_workspace_version_and_user_into_its_cache_name(self) -> None:
        result = resolve(environment(nx_version="23.1.1"), machine())
        assert result.native_cache.dir == result.native_cache.root == "/tmp/nx-native-file-cache-" + _legacy_hash()


def _legacy_hash() -> str:
    from nxsock.core.layout import short_hash

    return short_hash(["/home/ada/acme", "23.1.1", "ada"], 7)


class TestTheClientsCheck:
    """connectToDaemonSocket (Nx ≥ 24.0.5) judges the recorded socket's directory before dialling."""

    SOCKET = "/tmp/.nx/1000/sockets/0123456789abcdef0123/d.sock"

    def _state(self, leaf_mode: int = 0o700, container: Entry = STICKY) -> t.Any:
        return machine({
            "/tmp/.nx": container, "/tmp/.nx/1000": mine(), "/tmp/.nx/1000/sockets": mine(),
            "/tmp/.nx/1000/sockets/0123456789abcdef0123": mine(leaf_mode),
        })

    def test_an_owner_only_directory_under_safe_levels_is_dialled(self) -> None:
        assert client_socket_refusal(self._state(), USER, self.SOCKET) is None

    def test_a_directory_open_to_others_is_refused_even_if_group_only(self) -> None:
        refusal = client_socket_refusal(self._state(0o750), USER, self.SOCKET)
        assert refusal is not None and (refusal.kind, refusal.mode) == ("not-private", 0o750)

    def test_a_peer_owned_level_above_is_refused(self) -> None:
        refusal = client_socket_refusal(self._state(container=Entry("dir", PEER, PEER, 0o1777)), USER, self.SOCKET)
        assert refusal is not None and (refusal.kind, refusal.dir, refusal.uid) == (
            "foreign-ancestor",
            "/tmp/.nx",
            PEER,
        )

    def test_inside_a_user_namespace_the_root_itself_is_foreign(self) -> None:
        """Every foreign owner shows as 65534 there, / included: the client refuses any socket.

        See docs/behaviour.md#user-namespace-sandboxes.
        """
        view = UserNamespaceView(self._state(), USER, USER)
        refusal = client_socket_refusal(view, USER, self.SOCKET)
        assert refusal is not None and (refusal.kind, refusal.dir) == ("foreign-ancestor", "/")

    def test_the_record_carries_the_verdict_for_this_release_only(self) -> None:
        record = json.dumps({"processId": 1, "socketPath": self.SOCKET, "nxVersion": "24.0.5"})
        state = machine(
            {"/tmp/.nx": STICKY, "/tmp/.nx/1000": mine(), "/tmp/.nx/1000/sockets": mine(),
             "/tmp/.nx/1000/sockets/0123456789abcdef0123": mine(0o755)},
            files={"/home/ada/acme/.nx/workspace-data/d/server-process.json": record},
        )
        verdicts = {}
        for release in ("24.0.2", "24.0.5"):
            found = resolve(environment(nx_version=release), state).daemon_record
            assert found is not None
            verdicts[release] = (found.client_checks_socket, found.client_will_connect)
        assert verdicts == {"24.0.2": (False, True), "24.0.5": (True, False)}


class TestPreviews:
    """``--platform``: every input says where it came from; no Nx version means the newest known release."""

    def _doc(self, *args: str) -> dict[str, t.Any]:
        result = CliRunner().invoke(cli, ["paths", "--json", *args])
        return parsed(result.output, "paths")

    def test_without_workspace_the_workspace_is_the_platform_default(self) -> None:
        doc = self._doc("--platform", "linux")
        assert doc["workspace_source"] != "--workspace"
        assert self._doc("--platform", "linux", "--workspace", "/srv/w")["workspace_source"] == "--workspace"
        human = CliRunner().invoke(cli, ["paths", "--platform", "linux"]).output
        assert "--workspace" not in human

    def test_without_nx_version_the_newest_known_release_is_assumed_and_said(self) -> None:
        doc = self._doc("--platform", "linux")
        assert (doc["layout_assumed"], doc["rules_release"]) == (True, NEWEST_KNOWN)
        assert doc["native_cache"]["bypass_reason"] is None
        assert doc["native_cache"]["dir"] == f"/tmp/.nx/1000/native-cache/{NEWEST_KNOWN}"
        human = CliRunner().invoke(cli, ["paths", "--platform", "linux"]).output
        assert f"predicted as Nx {NEWEST_KNOWN}" in human and "unknown" not in human

    def test_darwin_legacy_uses_the_per_user_tmpdir(self) -> None:
        """On macOS os.tmpdir() is the user's own $TMPDIR under /var/folders, resolved to /private/var/folders."""
        doc = self._doc("--platform", "darwin", "--nx-version", "23.1.1")
        assert doc["socket_root"]["root"].startswith("/private/var/folders/") and doc["socket_root"]["root"].endswith(
            "/T"
        )
        assert doc["native_cache"]["dir"].startswith("/var/folders/")
        assert not [p for p in doc["allowlist"]["write"] if p.startswith("/private/tmp")]

    @pytest.mark.parametrize("version", ["23.1.1", "23.3.2", "24.0.6"])
    def test_win32_paths_use_one_separator(self, version: str) -> None:
        doc = self._doc("--platform", "win32", "--nx-version", version, "--workspace", "C:/Users/ada/work")
        texts = [
            doc["workspace_root"],
            doc["workspace_data"]["dir"],
            doc["workspace_data"]["daemon_dir"],
            doc["native_cache"]["dir"],
        ]
        texts += [s["pattern"] for s in doc["sockets"].values() if s["pattern"]]
        assert not [p for p in texts if "/" in p], texts


class TestTheClientsVerdictOnAPrediction:
    """With no daemon yet, ``sockets.daemon.client_will_connect`` says whether the client would dial where it binds."""

    def test_inside_a_user_namespace_24_0_5_cannot_use_its_daemon_anywhere(self) -> None:
        view = UserNamespaceView(machine({"/tmp/.nx": STICKY}), USER, USER)
        for release, refused in (("24.0.2", False), ("24.0.5", True), ("24.0.6", True)):
            daemon = resolve(environment(nx_version=release), view).sockets["daemon"]
            assert (daemon.client_refusal is not None) == refused, release
            if refused:
                assert daemon.client_refusal is not None and daemon.client_refusal.dir == "/"

    def test_on_an_ordinary_machine_the_client_dials_where_the_daemon_binds(self) -> None:
        daemon = resolve(environment(), machine()).sockets["daemon"]
        assert daemon.root is not None and daemon.client_refusal is None


def test_a_version_with_a_5000_digit_part_is_no_version_not_a_crash() -> None:
    """Found by the red team: a planted package.json version of 5,000 nines made every command exit 70."""
    from nxsock.core.releases import parse_version

    assert parse_version("9" * 5000 + ".0.0") is None and parse_version("24.0.6-beta.1") == (24, 0, 6)
    rules = rules_for("9" * 5000 + ".0.0")
    assert rules.release == NEWEST_KNOWN and rules.assumed


def test_a_path_of_thousands_of_levels_is_resolved_not_a_recursion_error() -> None:
    """Found by the red team: ``--tmpdir /a/a/…`` (or a .env naming such a directory) overflowed the planner's stack."""
    result = CliRunner().invoke(cli, ["paths", "--json", "--platform", "linux", "--layout", "legacy",
                                      "--tmpdir", "/a" * 3000])
    assert result.exit_code in (0, 73), result.output
    assert parsed(result.stdout, "paths")["schema_version"] == 1
