"""The sandbox formats' text: narrow entries, the rules each sandbox needs, limits on stderr."""
from __future__ import annotations

import json
import shlex

import pytest
from click.testing import CliRunner
from conftest import STICKY, environment, machine, mine

from nxsock.app import cli
from nxsock.audit.allowlists import plan_for, render, sandbox_kind


def fmt(name: str, *extra: str) -> tuple[str, str]:
    result = CliRunner().invoke(
        cli, ["paths", "--platform", "darwin", "--nx-version", "24.0.6", "--format", name, *extra]
    )
    assert result.exit_code == 0, result.output
    return result.stdout, result.stderr


def test_seatbelt_has_file_write_and_both_unix_socket_rules_for_both_tmp_spellings() -> None:
    text, _ = fmt("seatbelt")
    for spelling in ("/private/tmp/.nx", "/tmp/.nx"):
        assert f'(allow file-write* (subpath "{spelling}"))' in text
        assert f'(allow network-bind (local unix-socket (subpath "{spelling}/501/sockets")))' in text
        assert f'(allow network-outbound (remote unix-socket (subpath "{spelling}/501/sockets")))' in text


def test_srt_on_macos_names_socket_paths_and_on_linux_must_allow_all() -> None:
    mac, _ = fmt("srt")
    assert json.loads(mac)["network"]["allowUnixSockets"] == ["/private/tmp/.nx/501/sockets"]
    linux = CliRunner().invoke(cli, ["paths", "--platform", "linux", "--nx-version", "24.0.6", "--format", "srt"])
    assert json.loads(linux.stdout)["network"]["allowAllUnixSockets"] is True
    assert "allows all of them" in linux.stderr


def test_claude_settings_are_a_sandbox_block() -> None:
    text, _ = fmt("claude")
    block = json.loads(text)["sandbox"]
    assert block["enabled"] is True
    assert block["filesystem"]["allowWrite"] == ["/private/tmp/.nx", "/Users/user/workspace/.nx/workspace-data"]
    assert "env" not in json.loads(text)  # Seatbelt keeps owners: the daemon works on macOS


def test_codex_table_needs_network_access_for_sockets_and_says_so() -> None:
    text, warnings = fmt("codex")
    assert 'writable_roots = ["/private/tmp/.nx", "/Users/user/workspace/.nx/workspace-data"]' in text
    assert "network_access = true" in text
    assert "network_access" in warnings


def test_portable_spellings_are_nx_style_and_cover_both_tmp_spellings_on_macos() -> None:
    text, _ = fmt("srt", "--portable")
    assert json.loads(text)["filesystem"]["allowWrite"] == ["/tmp/.nx", "/private/tmp/.nx", "./.nx/workspace-data"]


def test_entries_are_never_root_tmp_or_home_and_bind_sources_exist() -> None:
    """On a fresh Linux machine Nx 24 in a user namespace falls back to the workspace: that is what is bound."""
    env = environment()
    plan = plan_for(env, machine(), user_namespace=True, binds=True)
    assert plan.write == ("/home/ada/acme",)
    for forbidden in ("/", "/tmp", "/home/ada"):
        assert forbidden not in plan.write
    text, _ = render("bwrap", plan, env)
    assert shlex.split(text) == ["--bind", "/home/ada/acme", "/home/ada/acme", "--setenv", "NX_DAEMON", "false"]


def test_a_provisioned_users_container_keeps_nx_23_in_tmp_inside_a_sandbox() -> None:
    """Nx 23 keeps /tmp/.nx in a user namespace only when the user owns it.

    See docs/behaviour.md#user-namespace-sandboxes.
    """
    levels = {
        "/tmp/.nx": mine(0o1777),
        "/tmp/.nx/1000": mine(),
        "/tmp/.nx/1000/sockets": mine(),
        "/tmp/.nx/1000/native-cache": mine(),
    }
    plan = plan_for(environment(nx_version="23.3.2"), machine(levels), user_namespace=True, binds=True)
    assert "/tmp/.nx/1000/sockets" in plan.write
    # The daemon's own files go to <workspace-data>/d whatever socket root it chose: its nearest existing level.
    assert "/home/ada/acme" in plan.write
    root_owned = dict(levels, **{"/tmp/.nx": STICKY})
    plan = plan_for(environment(nx_version="23.3.2"), machine(root_owned), user_namespace=True, binds=True)
    assert plan.write == ("/home/ada/acme",)


def test_glob_characters_in_an_entry_are_flagged_on_stderr() -> None:
    env = environment({"NX_SOCKET_DIR": "/home/ada/sock[1]"})
    plan = plan_for(env, machine({"/home/ada/sock[1]": mine()}), user_namespace=False, binds=False)
    _, warnings = render("srt", plan, env)
    assert any("glob characters" in w for w in warnings)


def test_sandbox_kinds() -> None:
    assert sandbox_kind("bwrap", "linux") == (True, True)
    assert sandbox_kind("srt", "darwin") == (False, False)
    assert sandbox_kind("seatbelt", "darwin") == (False, False)


def test_codex_profile_extends_workspace_writes_the_entries_and_enables_network() -> None:
    result = CliRunner().invoke(
        cli, ["paths", "--platform", "linux", "--nx-version", "24.0.6", "--format", "codex-profile"]
    )
    assert result.exit_code == 0
    text = result.stdout
    assert 'default_permissions = "nx"' in text and 'extends = ":workspace"' in text
    assert '"/home/user/workspace" = "write"' in text and "[permissions.nx.network]\nenabled = true" in text
    assert "unix sockets" in result.stderr


def linux(name: str, version: str) -> tuple[str, str]:
    result = CliRunner().invoke(cli, ["paths", "--platform", "linux", "--nx-version", version, "--format", name])
    assert result.exit_code == 0, result.output
    return result.stdout, result.stderr


class TestDaemonInUserNamespaceSandboxes:
    """Nx ≥ 24.0.5's client refuses every daemon socket in bwrap, srt and codex: each format says so and carries
    NX_DAEMON=false where it can."""

    def test_every_user_namespace_format_says_the_daemon_cannot_be_used_and_how_to_clear_the_marker(self) -> None:
        for name in ("bwrap", "srt", "claude", "codex", "codex-profile", "flatpak"):
            _, stderr = linux(name, "24.0.6")
            assert "cannot use its daemon" in stderr and "uid 65534" in stderr, name
            assert "NX_DAEMON=false" in stderr and "nxsock reset --daemon-marker" in stderr, name
            assert "/home/user/workspace/.nx/workspace-data/d/disabled" in stderr, name

    def test_releases_before_24_0_5_and_sandboxes_that_keep_owners_say_nothing_of_it(self) -> None:
        for version in ("24.0.2", "23.3.2"):
            for name in ("bwrap", "srt", "codex-profile"):
                text, stderr = linux(name, version)
                assert "cannot use its daemon" not in stderr and "NX_DAEMON" not in text, (name, version)
        text, stderr = linux("docker", "24.0.6")  # docker keeps owners: the daemon works there
        assert "cannot use its daemon" not in stderr and "NX_DAEMON" not in text
        text, stderr = fmt("seatbelt")
        assert "cannot use its daemon" not in stderr and "NX_DAEMON" not in text

    def test_the_generic_formats_say_it_for_user_namespace_sandboxes_without_changing_their_entries(self) -> None:
        for name in ("text", "env"):
            text, stderr = linux(name, "24.0.6")
            assert "If the sandbox runs Nx in a user namespace" in stderr and "NX_DAEMON=false" in stderr, name
            assert "NX_DAEMON" not in text, name

    def test_bwrap_and_flatpak_arguments_set_the_variable(self) -> None:
        assert shlex.split(linux("bwrap", "24.0.6")[0])[-3:] == ["--setenv", "NX_DAEMON", "false"]
        assert shlex.split(linux("flatpak", "24.0.6")[0])[-1] == "--env=NX_DAEMON=false"

    def test_claude_settings_set_it_and_srt_says_to_start_with_it(self) -> None:
        assert json.loads(linux("claude", "24.0.6")[0])["env"] == {"NX_DAEMON": "false"}
        text, stderr = linux("srt", "24.0.6")
        assert "env" not in json.loads(text)  # srt's settings have no such key: it would be ignored
        assert "`NX_DAEMON=false srt --settings FILE -- COMMAND`" in stderr

    def test_codex_configurations_set_it_through_the_shell_environment_policy(self) -> None:
        tomllib = pytest.importorskip("tomllib")  # Python 3.11+
        for name in ("codex", "codex-profile"):
            text, _ = linux(name, "24.0.6")
            assert tomllib.loads(text)["shell_environment_policy"] == {"set": {"NX_DAEMON": "false"}}, name
