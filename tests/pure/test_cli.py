"""The command line contract: JSON keys, exit codes, streams, and honest unbuilt commands."""
from __future__ import annotations

import os
import subprocess
import sys
import typing as t

import pytest
from click.testing import CliRunner
from documents import parsed

from nxsock.app import cli

SOCKET_KEYS = {"placed", "tier", "root", "dir", "path", "pattern", "length", "too_long", "budget_left",
               "windows_max_username", "attempted_dir", "refusals", "failure"}
TOP_KEYS = {"schema_version", "platform", "uid", "workspace_root", "nx_version", "layout", "socket_root", "sockets",
            "native_cache", "workspace_data", "allowlist"}


def paths_json(runner: CliRunner, *args: str, env: t.Mapping[str, str] | None = None) -> tuple[dict[str, t.Any], int]:
    result = runner.invoke(cli, ["paths", "--json", *args], env=env)
    return parsed(result.stdout, "paths"), result.exit_code


@pytest.mark.parametrize("platform", ["linux", "darwin", "win32"])
def test_every_documented_key_is_present_on_every_platform(runner: CliRunner, platform: str) -> None:
    doc, code = paths_json(runner, "--platform", platform, "--nx-version", "24.0.6")
    assert code == 0
    assert TOP_KEYS <= doc.keys() and doc["schema_version"] == 1
    assert {"tier", "root", "demoted_from", "refused_configured_dir", "invalid", "refusals"} <= doc[
        "socket_root"
    ].keys()
    for kind in ("daemon", "forked", "plugin", "console"):
        assert SOCKET_KEYS <= doc["sockets"][kind].keys()
    assert {"recorded", "alive"} <= doc["sockets"]["daemon"].keys()
    assert "id_budget" in doc["sockets"]["plugin"]
    assert {"dir", "bypass_reason"} <= doc["native_cache"].keys()
    assert {"dir", "daemon_dir"} <= doc["workspace_data"].keys()
    assert {"write", "unix_sockets"} <= doc["allowlist"].keys()


def test_format_json_is_the_same_as_json(runner: CliRunner) -> None:
    args = ["paths", "--platform", "linux", "--nx-version", "24.0.6"]
    assert runner.invoke(cli, [*args, "--json"]).stdout == runner.invoke(cli, [*args, "--format", "json"]).stdout


def test_darwin_resolves_under_tmp_and_allowlists_private_tmp(runner: CliRunner) -> None:
    doc, _ = paths_json(runner, "--platform", "darwin", "--nx-version", "24.0.6")
    assert doc["uid"] == 501
    assert doc["socket_root"]["root"] == "/tmp/.nx/501/sockets"
    assert doc["allowlist"]["write"] == ["/private/tmp/.nx/501/sockets", "/private/tmp/.nx/501/native-cache/24.0.6"]


def test_win32_reports_pipe_names_and_no_uid(runner: CliRunner) -> None:
    doc, _ = paths_json(runner, "--platform", "win32", "--username", "ada", "--nx-version", "24.0.6")
    assert doc["uid"] is None
    assert doc["sockets"]["console"]["path"].startswith("\\\\.\\pipe\\nx\\C:\\Users\\ada\\AppData\\Local\\Temp\\")
    assert doc["native_cache"]["dir"] == "C:\\Users\\ada\\AppData\\Local\\Temp\\.nx\\native-cache\\24.0.6"


def test_a_refused_nx_socket_dir_exits_78_and_still_prints(runner: CliRunner, tmp_path: t.Any) -> None:
    doc, code = paths_json(runner, "--workspace", str(tmp_path), env={"NX_SOCKET_DIR": "/tmp"})
    assert code == 78
    assert doc["socket_root"]["invalid"]["reason"] == "shared-with-other-users"
    assert doc["socket_root"]["tier"] is None and doc["socket_root"]["root"] is None
    assert doc["socket_root"]["invalid"]["remedy"] == "unset NX_SOCKET_DIR"


def test_human_output_goes_to_stdout_and_names_the_tier(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["paths", "--platform", "linux", "--nx-version", "24.0.6"], env={"NO_COLOR": "1"})
    assert result.exit_code == 0
    assert "Socket root: /tmp/.nx/1000/sockets  [shared]" in result.stdout
    assert "\x1b[" not in result.stdout
    assert result.stderr == ""


def test_an_unknown_option_is_a_usage_error(runner: CliRunner) -> None:
    assert runner.invoke(cli, ["paths", "--no-such-option"]).exit_code == 2
    assert runner.invoke(cli, ["paths", "--platform", "plan9"]).exit_code == 2


def test_a_missing_workspace_is_a_usage_error_not_a_traceback(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["paths", "--workspace", "/no/such/dir"])
    assert result.exit_code == 2 and "Traceback" not in result.output


def test_help_lists_every_subcommand(runner: CliRunner) -> None:
    out = runner.invoke(cli, ["--help"]).stdout
    for name in ("paths", "check-root", "provision", "cache", "reset", "doctor", "schema"):
        assert f"  {name} " in out


def test_check_root_on_a_missing_path_is_safe(runner: CliRunner, tmp_path: t.Any) -> None:
    result = runner.invoke(cli, ["check-root", "--json", str(tmp_path / "absent")])
    doc = parsed(result.stdout, "check-root")
    assert (result.exit_code, doc["safe"], doc["state"], doc["refusal"]) == (0, True, "absent", None)


def test_check_root_refuses_a_symlink_and_removes_nothing_that_is_not_nx(runner: CliRunner, tmp_path: t.Any) -> None:
    """A link at a path that is not Nx's own (``check-root /lib``): refused, and no rm — the reason instead."""
    link = tmp_path / "link"
    link.symlink_to(tmp_path)
    result = runner.invoke(cli, ["check-root", "--json", str(link)])
    doc = parsed(result.stdout, "check-root")
    assert result.exit_code == 1 and doc["state"] == "refused"
    assert doc["refusal"]["kind"] == "not-a-directory" and doc["refusal"]["symlink"] is True
    assert doc["refusal"]["remedy"] is None and "not one of Nx's own directories" in doc["refusal"]["hint"]
    assert link.is_symlink()  # judged, not touched


def test_an_internal_error_is_exit_70_with_one_line_and_no_traceback() -> None:
    """A bug inside a command prints a short message; --debug shows the traceback."""
    code = (
        "import nxsock.core.resolver as r; r.resolve = lambda *a, **k: 1/0; from nxsock.cli import main; main({args})"
    )
    quiet = subprocess.run(
        [sys.executable, "-c", code.format(args="['paths', '--json']")], capture_output=True, text=True
    )
    assert quiet.returncode == 70
    assert "internal error: ZeroDivisionError" in quiet.stderr and "Traceback" not in quiet.stderr
    loud = subprocess.run(
        [sys.executable, "-c", code.format(args="['--debug', 'paths', '--json']")], capture_output=True, text=True
    )
    assert loud.returncode == 70 and "Traceback" in loud.stderr


def test_python_dash_m_runs_the_cli() -> None:
    result = subprocess.run([sys.executable, "-m", "nxsock", "--version"], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.startswith("nxsock ")


def test_a_broken_pipe_is_not_an_error() -> None:
    proc = subprocess.run(
        f"{sys.executable} -m nxsock paths --platform linux | head -c 1", shell=True, capture_output=True, text=True
    )
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr


def test_hostile_variable_values_are_reported_not_raised(runner: CliRunner, tmp_path: t.Any) -> None:
    """Newlines, control characters, very long and undecodable values come back as data."""
    for value in ("/tmp/a\nb", "\x1b[31mred", "x" * 5000, "/tmp/caf\udce9", "~/nx", "../../.."):
        result = runner.invoke(cli, ["paths", "--json", "--workspace", str(tmp_path)], env={"NX_SOCKET_DIR": value})
        assert result.exit_code in (0, 73, 78), (value, result.output)
        parsed(result.stdout, "paths")


def test_home_unset_is_handled(tmp_path: t.Any) -> None:
    env = {k: v for k, v in os.environ.items() if k != "HOME"}
    proc = subprocess.run(
        [sys.executable, "-m", "nxsock", "paths", "--json", "--workspace", str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
    )
    assert proc.returncode in (0, 73) and parsed(proc.stdout, "paths")["schema_version"] == 1


@pytest.mark.parametrize("variables", [{}, {"NX_SOCKET_DIR": "/tmp"}, {"NX_SOCKET_DIR": "relative/socks"}])
@pytest.mark.parametrize("form", [["paths", "--json"], ["paths", "--format", "json"], ["paths", "--format=json"]])
def test_the_click_free_paths_json_answers_exactly_as_the_click_command(
    runner: CliRunner, tmp_path: t.Any, monkeypatch: pytest.MonkeyPatch, form: list[str], variables: dict[str, str]
) -> None:
    """``nxsock paths --json`` skips click for speed; its bytes and exit code are the click command's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NX_")} | variables
    fast = subprocess.run(
        [sys.executable, "-m", "nxsock", *form], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    monkeypatch.chdir(tmp_path)
    slow = runner.invoke(cli, ["paths", "--json"], env=variables)
    assert fast.stdout == slow.stdout
    assert fast.returncode == slow.exit_code


def test_a_fifo_where_a_dotenv_file_belongs_never_blocks(tmp_path: t.Any) -> None:
    os.mkfifo(tmp_path / ".env")
    (tmp_path / "nx.json").write_text("{}")
    proc = subprocess.run(
        [sys.executable, "-m", "nxsock", "paths", "--json"], cwd=tmp_path, capture_output=True, text=True, timeout=20
    )
    assert proc.returncode == 0 and parsed(proc.stdout, "paths")["workspace_root"] == str(tmp_path)


def test_username_on_the_host_feeds_the_legacy_cache_hash(runner: CliRunner, tmp_path: t.Any) -> None:
    args = ["paths", "--json", "--workspace", str(tmp_path), "--nx-version", "23.1.1"]
    one = parsed(runner.invoke(cli, [*args, "--username", "ada"]).stdout, "paths")["native_cache"]["dir"]
    two = parsed(runner.invoke(cli, [*args, "--username", "bob"]).stdout, "paths")["native_cache"]["dir"]
    assert one != two and one.rsplit("-", 1)[0] == two.rsplit("-", 1)[0]
