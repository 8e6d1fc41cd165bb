"""The resolver's rules, over in-memory machines: no root, no disk, every branch."""

from __future__ import annotations

from conftest import PEER, STICKY, USER, environment, machine, mine

from nxsock.core.fsview import Entry, MemoryView, UserNamespaceView
from nxsock.core.guards import Action, Refusal
from nxsock.core.layout import plugin_leaf
from nxsock.core.releases import KNOWN_RELEASES, NEWEST_KNOWN, rules_for
from nxsock.core.resolver import resolve


class TestTiers:
    def test_a_fresh_machine_uses_the_shared_container_and_creates_it_sticky(self) -> None:
        """With nothing in /tmp, Nx creates /tmp/.nx 1777 and the user's levels 0700 beneath it."""
        result = resolve(environment(), machine())
        assert result.socket_root.tier == "shared"
        assert result.socket_root.root == "/tmp/.nx/1000/sockets"
        assert result.actions[0] == Action("create", "/tmp/.nx", 0o1777)
        assert Action("create", "/tmp/.nx/1000", 0o700) in result.actions
        assert result.native_cache.dir == "/tmp/.nx/1000/native-cache/24.0.6"

    def test_a_peer_container_demotes_to_home_and_names_the_preferred_root(self) -> None:
        """A container another user owns is refused; the home tier records what it was demoted from."""
        result = resolve(environment(), machine({"/tmp/.nx": Entry("dir", PEER, PEER, 0o1777)}))
        assert result.socket_root.tier == "home"
        assert result.socket_root.root == "/home/ada/.nx/sockets"
        assert result.socket_root.demoted_from == "/tmp/.nx/1000/sockets"
        assert result.socket_root.refusals == (Refusal("foreign-shared-container", "/tmp/.nx", uid=PEER),)

    def test_without_a_home_the_workspace_is_the_last_resort(self) -> None:
        """No HOME and no passwd home leaves only the workspace data directory, with no leaf beneath it."""
        env = environment({"HOME": None}, passwd_home=None)
        result = resolve(env, machine({"/tmp/.nx": Entry("dir", PEER, PEER, 0o1777)}))
        assert result.socket_root.tier == "workspace"
        assert result.sockets["plugin"].dir == "/home/ada/acme/.nx/workspace-data/d"
        assert result.sockets["daemon"].path == "/home/ada/acme/.nx/workspace-data/d/d.sock"

    def test_home_equal_to_tmp_is_never_offered_as_a_tier(self) -> None:
        """HOME=/tmp would make ~/.nx the container itself; the tier is skipped rather than damage it."""
        env = environment({"HOME": "/tmp"})
        result = resolve(env, machine({"/tmp/.nx": Entry("dir", PEER, PEER, 0o1777)}))
        assert result.socket_root.tier == "workspace"
        assert all(a.path != "/tmp/.nx" or a.verb != "tighten" for a in result.actions)

    def test_an_empty_home_means_no_home_for_23_but_the_passwd_home_for_24(self) -> None:
        """Node's homedir() returns an empty HOME as is; the Nx 24 crate falls back to passwd."""
        view = machine({"/tmp/.nx": Entry("dir", PEER, PEER, 0o1777)})
        assert resolve(environment({"HOME": ""}), view).socket_root.tier == "home"
        assert resolve(environment({"HOME": ""}, nx_version="23.3.2"), view).socket_root.tier == "workspace"

    def test_nx_24_walks_the_ancestry_of_home_and_23_does_not(self) -> None:
        """A HOME beneath a peer's directory is refused by Nx 24's ancestry walk only."""
        view = machine(
            {
                "/tmp/.nx": Entry("dir", PEER, PEER, 0o1777),
                "/srv": Entry("dir", PEER, PEER, 0o755),
                "/srv/ada": mine(0o755),
            }
        )
        env24 = environment({"HOME": "/srv/ada"})
        assert resolve(env24, view).socket_root.refusals[-1] == Refusal("foreign-ancestor", "/srv", uid=PEER)
        assert resolve(env24._replace(nx_version="23.3.2"), view).socket_root.tier == "home"

    def test_a_leaf_refusal_sends_only_that_kind_to_the_workspace(self) -> None:
        """A planted plugin directory moves plugins to the fallback; the daemon and console stay shared."""
        leaf = "/tmp/.nx/1000/sockets/" + plugin_leaf("/home/ada/acme")
        view = machine({"/tmp/.nx": STICKY, "/tmp/.nx/1000": mine(), "/tmp/.nx/1000/sockets": mine(),
                        leaf: Entry("dir", PEER, PEER, 0o700)})
        result = resolve(environment(), view)
        assert result.sockets["plugin"].tier == "workspace"
        assert result.sockets["plugin"].attempted_dir == leaf
        assert result.sockets["plugin"].refusals == (Refusal("foreign-owner", leaf, uid=PEER),)
        assert result.sockets["daemon"].tier == "shared"
        assert result.sockets["console"].tier == "shared"

    def test_a_group_readable_level_is_tightened_not_refused(self) -> None:
        """Nx re-locks a 0755 directory of yours to 0700; the prediction says so."""
        view = machine({"/tmp/.nx": STICKY, "/tmp/.nx/1000": mine(0o755)})
        result = resolve(environment(), view)
        assert result.socket_root.tier == "shared"
        assert Action("tighten", "/tmp/.nx/1000", 0o700) in result.actions

    def test_a_read_only_level_that_needs_tightening_is_refused(self) -> None:
        """A mode that cannot be changed is refused as not tightenable, with the mode it has."""
        view = machine({"/tmp/.nx": STICKY, "/tmp/.nx/1000": mine(0o755)}, read_only_roots=["/tmp"])
        result = resolve(environment(), view)
        assert Refusal("not-tightenable", "/tmp/.nx/1000", mode=0o755) in result.socket_root.refusals

    def test_a_symlinked_container_is_refused_as_a_symlink(self) -> None:
        view = machine(
            {"/tmp/x": Entry("dir", PEER, PEER, 0o777), "/tmp/.nx": Entry("link", PEER, PEER, 0o777)},
            links={"/tmp/.nx": "/tmp/x"},
        )
        refusal = resolve(environment(), view).socket_root.refusals[0]
        assert (refusal.kind, refusal.symlink, refusal.uid) == ("not-a-directory", True, PEER)

    def test_nothing_establishable_is_a_failure_with_its_refusal(self) -> None:
        """When the workspace fallback is refused too, every kind fails and the refusal is kept."""
        view = machine(
            {"/tmp/.nx": Entry("dir", PEER, PEER, 0o1777), "/home/ada/acme/.nx": Entry("dir", PEER, PEER, 0o755)}
        )
        result = resolve(environment({"HOME": None}, passwd_home=None), view)
        assert result.socket_root.tier is None
        assert result.socket_root.failure is not None
        assert result.socket_root.failure.kind == "not-created"
        assert all(p.failure is not None for p in result.sockets.values())


class TestConfiguredDirectory:
    def test_an_empty_value_counts_as_unset(self) -> None:
        assert resolve(environment({"NX_SOCKET_DIR": ""}), machine()).socket_root.tier == "shared"

    def test_an_empty_value_counts_as_set_in_the_legacy_layout(self) -> None:
        """Nx ≤ 23.1.1 used ``??``: an empty NX_SOCKET_DIR fails mkdir and lands in the workspace."""
        result = resolve(environment({"NX_SOCKET_DIR": ""}, nx_version="23.1.1"), machine())
        assert result.sockets["daemon"].tier == "workspace"

    def test_a_relative_value_is_made_absolute_and_normalised(self) -> None:
        result = resolve(environment({"NX_SOCKET_DIR": "./a/../socks/"}), machine())
        assert result.socket_root.root == "/home/ada/acme/socks"
        assert result.sockets["daemon"].path == "/home/ada/acme/socks/d.sock"

    def test_the_three_refusal_reasons(self) -> None:
        """/tmp is shared, a private TMPDIR is the OS temp root, and Nx's own roots are Nx-managed."""
        view = machine({"/home/ada/tmp": mine()})
        reason = lambda env: resolve(env, view).socket_root.invalid.reason  # type: ignore[union-attr]
        assert reason(environment({"NX_SOCKET_DIR": "/tmp"})) == "shared-with-other-users"
        assert reason(environment({"NX_SOCKET_DIR": "/home/ada/tmp", "TMPDIR": "/home/ada/tmp"})) == "os-temp-root"
        assert reason(environment({"NX_SOCKET_DIR": "/home/ada/.nx/sockets"})) == "nx-managed"

    def test_an_alias_through_a_symlink_is_refused_like_the_real_path(self) -> None:
        view = machine(
            {"/var": Entry("dir", 0, 0, 0o755), "/var/t": Entry("link", 0, 0, 0o777)}, links={"/var/t": "/tmp"}
        )
        assert (
            resolve(environment({"NX_SOCKET_DIR": "/var/t"}), view).socket_root.invalid.reason
            == "shared-with-other-users"
        )  # type: ignore[union-attr]

    def test_a_refused_configured_directory_falls_back_and_is_named(self) -> None:
        view = machine({"/srv": Entry("dir", PEER, PEER, 0o755)})
        root = resolve(environment({"NX_SOCKET_DIR": "/srv/socks"}), view).socket_root
        assert (root.tier, root.refused_configured_dir) == ("workspace", "/srv/socks")
        assert root.refusals[0] == Refusal("foreign-ancestor", "/srv", uid=PEER)

    def test_nx_socket_dir_wins_over_the_daemon_variable(self) -> None:
        env = environment({"NX_SOCKET_DIR": "/home/ada/a", "NX_DAEMON_SOCKET_DIR": "/home/ada/b"})
        assert resolve(env, machine()).socket_root.root == "/home/ada/a"


class TestBudget:
    def test_95_characters_fit_and_96_do_not(self) -> None:
        fits = resolve(environment({"NX_SOCKET_DIR": "/home/ada/" + "x" * 78}), machine())
        over = resolve(environment({"NX_SOCKET_DIR": "/home/ada/" + "x" * 79}), machine())
        assert (fits.sockets["daemon"].length, fits.sockets["daemon"].too_long) == (95, False)
        assert (over.sockets["daemon"].length, over.sockets["daemon"].too_long) == (96, True)

    def test_the_readiness_socket_binds_the_forked_budget_in_nx_24(self) -> None:
        """fp<pid>-ready-<n>.sock is 6 characters longer than the task socket 23.x uses."""
        native = resolve(environment(), machine()).sockets["forked"].length
        ts = resolve(environment(nx_version="23.3.2"), machine()).sockets["forked"].length
        assert native is not None and ts is not None and native - ts == 6

    def test_windows_reports_the_longest_user_name_that_fits(self) -> None:
        """Under the default temp dir: 39 for the daemon, 33 for plugins, 29 for tasks, 23 with readiness."""
        from nxsock.core.fresh_machine import fresh_environment

        sockets = resolve(fresh_environment("win32", nx_version="24.0.6"), MemoryView({})).sockets
        assert sockets["daemon"].windows_max_username == 39
        assert sockets["plugin"].windows_max_username == 33
        assert sockets["forked"].windows_max_username == 23
        legacy_ts = resolve(fresh_environment("win32", nx_version="23.3.2"), MemoryView({})).sockets
        assert legacy_ts["forked"].windows_max_username == 29
        assert sockets["daemon"].pattern is not None and sockets["daemon"].pattern.startswith(
            "\\\\.\\pipe\\nx\\C:\\Users\\user\\"
        )


class TestGenerations:
    def test_23_throws_on_a_missing_tmpdir_and_24_does_not(self) -> None:
        env = environment({"TMPDIR": "/tmp/claude"})
        assert resolve(env._replace(nx_version="23.3.2"), machine()).socket_root.failure == Refusal(
            "not-inspectable", "/tmp/claude", errno="ENOENT"
        )
        assert resolve(env, machine()).socket_root.tier == "shared"

    def test_only_nx_24_places_the_console_socket(self) -> None:
        assert resolve(environment(), machine()).sockets["console"].placed
        assert not resolve(environment(nx_version="23.3.2"), machine()).sockets["console"].placed

    def test_the_legacy_layout_lives_in_the_os_temp_dir(self) -> None:
        result = resolve(environment(nx_version="23.1.1"), machine())
        assert result.layout == "legacy"
        assert result.sockets["plugin"].dir == "/tmp"
        assert result.sockets["plugin"].pattern == "/tmp/plugin<id>.sock"
        assert result.native_cache.dir is not None and result.native_cache.dir.startswith("/tmp/nx-native-file-cache-")

    def test_no_installed_version_assumes_the_newest_known_release_and_says_so(self) -> None:
        """No Nx found: predicted as the newest release nxsock knows, its cache directory named for it."""
        result = resolve(environment(nx_version=None, nx_version_source=None), machine())
        assert (result.layout, result.layout_assumed, result.rules.release) == ("current", True, NEWEST_KNOWN)
        assert result.native_cache.dir == f"/tmp/.nx/{USER}/native-cache/{NEWEST_KNOWN}"
        assert result.native_cache.bypass_reason is None

    def test_a_release_newer_than_any_known_follows_the_newest_and_says_so(self) -> None:
        result = resolve(environment(nx_version="24.1.0"), machine())
        assert (result.layout_assumed, result.rules.release) == (True, NEWEST_KNOWN)
        assert result.native_cache.dir == f"/tmp/.nx/{USER}/native-cache/24.1.0"

    def test_a_known_release_is_not_assumed(self) -> None:
        for version in KNOWN_RELEASES:
            result = resolve(environment(nx_version=version), machine())
            assert (result.layout_assumed, result.rules.release) == (False, version)


class TestReleaseRules:
    """Rules that changed inside a generation are read from the release table, patch by patch."""

    def test_24_0_2_uses_a_home_beneath_a_world_writable_directory(self) -> None:
        state = machine({"/tmp/.nx": Entry("dir", PEER, PEER, 0o1777), "/home/ww": Entry("dir", 0, 0, 0o777),
                         "/home/ww/u": mine(0o755)})
        home = {"HOME": "/home/ww/u"}
        old = resolve(environment(home, nx_version="24.0.2"), state)
        new = resolve(environment(home, nx_version="24.0.5"), state)
        assert old.socket_root.tier == "home" and new.socket_root.tier == "workspace"

    def test_only_24_0_6_refuses_an_untrusted_workspace_data_directory(self) -> None:
        state = machine({"/tmp/shared": Entry("dir", 0, 0, 0o777)})
        data = {"NX_WORKSPACE_DATA_DIRECTORY": "/tmp/shared/data"}
        refused = {
            v: resolve(environment(data, nx_version=v), state).workspace_data.refused for v in ("24.0.5", "24.0.6")
        }
        assert refused == {"24.0.5": False, "24.0.6": True}

    def test_the_client_check_arrives_with_24_0_5(self) -> None:
        assert [rules_for(v).client_socket_check for v in ("23.3.2", "24.0.2", "24.0.5", "24.0.6")] == [
            False,
            False,
            True,
            True,
        ]


class TestViews:
    def test_inside_a_user_namespace_nx_24_refuses_both_default_tiers(self) -> None:
        """Every foreign owner shows as 65534, so the walk from / refuses /tmp and HOME alike.

        See docs/behaviour.md#user-namespace-sandboxes.
        """
        view = UserNamespaceView(machine({"/tmp/.nx": STICKY}), USER, USER)
        result = resolve(environment(), view)
        assert result.socket_root.tier == "workspace"
        assert [r.kind for r in result.socket_root.refusals] == ["foreign-ancestor", "foreign-ancestor"]

    def test_inside_a_user_namespace_nx_23_keeps_a_container_the_user_owns(self) -> None:
        view = UserNamespaceView(machine({"/tmp/.nx": mine(0o1777)}), USER, USER)
        assert resolve(environment(nx_version="23.3.2"), view).socket_root.tier == "shared"
        root_owned = UserNamespaceView(machine({"/tmp/.nx": STICKY}), USER, USER)
        assert resolve(environment(nx_version="23.3.2"), root_owned).socket_root.tier == "home"

    def test_a_darwin_machine_allowlists_the_private_tmp_spelling(self) -> None:
        from nxsock.core.fresh_machine import fresh_environment, fresh_machine

        env = fresh_environment("darwin", nx_version="24.0.6")
        result = resolve(env, fresh_machine(env))
        assert result.socket_root.root == "/tmp/.nx/501/sockets"
        assert result.allowlist.unix_sockets == ("/private/tmp/.nx/501/sockets",)


class TestDaemonRecord:
    def test_a_recorded_daemon_socket_is_reported_with_its_liveness(self) -> None:
        record = (
            '{"processId": 4321, "socketPath": '
            '"/tmp/.nx/1000/sockets/0123456789abcdef0123/d.sock", "nxVersion": "24.0.6"}'
        )
        view = machine(files={"/home/ada/acme/.nx/workspace-data/d/server-process.json": record})
        result = resolve(environment(), view)
        assert result.daemon_record is not None and result.daemon_record.pid == 4321
        assert result.sockets["daemon"].path == "/tmp/.nx/1000/sockets/0123456789abcdef0123/d.sock"

    def test_a_broken_record_is_a_finding_not_an_exception(self) -> None:
        view = machine(files={"/home/ada/acme/.nx/workspace-data/d/server-process.json": "{not json"})
        record = resolve(environment(), view).daemon_record
        assert record is not None and record.problem == "is not valid JSON"
