"""The small things a person trips over first: values refused in words, one pointer per error, whole lines."""
from __future__ import annotations

import os
import shlex
import subprocess
import sys
import typing as t
from pathlib import Path

import pytest
from click.testing import CliRunner

from nxsock.app import cli
from nxsock.audit.doctor import FINDING_DESCRIPTIONS, FINDING_IDS
from nxsock.audit.findings import Finding
from nxsock.commands.options import parse_paths_json
from nxsock.core import program
from nxsock.output import render


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "nxsock", *args], capture_output=True, text=True, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
@pytest.mark.parametrize("version", ["banana", "24", "../..", "24.0.6/x", " 24.0.6"])
def test_an_nx_version_that_is_not_one_is_a_usage_error(json_flag: list[str], version: str) -> None:
    """``--nx-version banana`` used to pass as "newer than any release nxsock knows", exit 0."""
    run = _run("paths", *json_flag, "--nx-version", version)
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr == f"nxsock paths: invalid --nx-version: {version!r} is not an Nx version: major.minor.patch, " \
                         "such as 24.0.6 (see nxsock paths --help)\n"


def test_the_fast_path_leaves_a_bad_version_to_click_and_takes_a_good_one() -> None:
    assert parse_paths_json(["paths", "--json", "--nx-version", "banana"]) is None
    overrides = parse_paths_json(["paths", "--json", "--nx-version", "24.0.6"])
    assert overrides is not None and overrides.nx_version == "24.0.6"


@pytest.mark.parametrize(("command", "flag"), [("paths", "--uid"), ("doctor", "--user")])
@pytest.mark.parametrize("value", ["abc", "-1", "4294967295", "١٢"])
def test_a_uid_that_is_not_one_says_what_a_uid_is(command: str, flag: str, value: str) -> None:
    result = CliRunner().invoke(cli, [command, flag, value])
    assert result.exit_code == 2
    assert f"invalid {flag}: {value!r} is not a uid: a whole number from 0 to 4294967294" in result.stderr
    assert "integer range" not in result.stderr


def test_an_unknown_check_id_points_once_at_the_list() -> None:
    result = CliRunner().invoke(cli, ["doctor", "--only", "nope"])
    assert result.exit_code == 2
    assert result.stderr == "nxsock doctor: invalid --only: unknown check id 'nope'; nxsock doctor --list-checks lists them\n"


def test_list_checks_describes_every_id_in_one_line_each() -> None:
    ids = sorted({i for ids in FINDING_IDS.values() for i in ids})
    assert set(FINDING_DESCRIPTIONS) == set(ids)
    result = CliRunner().invoke(cli, ["doctor", "--list-checks"])
    lines = result.stdout.splitlines()
    assert result.exit_code == 0 and [line.split()[0] for line in lines] == ids
    assert all(FINDING_DESCRIPTIONS[line.split()[0]] in line for line in lines)


def test_cache_help_summaries_are_whole() -> None:
    result = CliRunner().invoke(cli, ["cache", "--help"], terminal_width=80)
    commands = result.stdout.split("Commands:", 1)[1]
    assert "..." not in commands and {"list", "path", "prune", "verify"} <= {w.split()[0] for w in commands.split("\n") if w.strip()}


@pytest.mark.parametrize("words", [["paths", "--workspace", ""], ["doctor", "--home", ""], ["check-root", ""]])
def test_directory_options_complete_directories(words: list[str]) -> None:
    """bash, zsh and fish are told to complete directory names (``type=dir``), not nothing."""
    from click.shell_completion import ShellComplete

    completion = ShellComplete(cli, {}, "nxsock", "_NXSOCK_COMPLETE")
    items = completion.get_completions(words[:-1], words[-1])
    assert [item.type for item in items] == ["dir"]


def test_the_man_page_names_the_version_option_s_value() -> None:
    man = (Path(__file__).resolve().parents[2] / "man" / "nxsock.1").read_text()
    assert '.BI \\-\\-nx\\-version " version"' in man


class TestRootProgram:
    """A ``sudo`` remedy names an nxsock root's path finds, or the running one by its absolute path."""

    @pytest.fixture(autouse=True)
    def _fresh(self) -> t.Iterator[None]:
        program.root_program.cache_clear()
        yield
        program.root_program.cache_clear()

    def test_one_on_root_s_path_is_named_plainly(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        found = tmp_path / "nxsock"
        found.write_text("#!/bin/sh\n")
        found.chmod(0o755)
        monkeypatch.setattr(program, "SECURE_PATH", (str(tmp_path),))
        assert program.root_program() == "nxsock"

    def test_a_venv_script_is_named_by_its_absolute_path(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        venv = tmp_path / "my venv" / "bin"
        venv.mkdir(parents=True)
        script = venv / "nxsock"
        script.write_text("#!/bin/sh\n")
        script.chmod(0o755)
        monkeypatch.setattr(program, "SECURE_PATH", (str(tmp_path / "empty"),))
        monkeypatch.setattr(sys, "argv", [str(script)])
        assert program.root_program() == shlex.quote(str(script))

    def test_python_m_is_named_by_its_interpreter(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(program, "SECURE_PATH", (str(tmp_path),))
        monkeypatch.setattr(sys, "argv", ["/somewhere/nxsock/__main__.py"])
        assert program.root_program() == f"{shlex.quote(sys.executable)} -m nxsock"

    def test_the_line_root_is_given_runs(self) -> None:
        """What ``doctor --user`` tells a non-root user to run under sudo starts this nxsock (here, as root or not)."""
        run = _run("doctor", "--user", str(os.geteuid() + 1)) if os.geteuid() != 0 else None
        line = program.root_program()
        if run is not None:
            assert run.returncode == 77 and f"sudo {line} doctor --user {os.geteuid() + 1}" in run.stderr
        version = subprocess.run([*shlex.split(line), "--version"], capture_output=True, text=True)
        assert version.returncode == 0 and version.stdout.startswith("nxsock ")


def test_a_message_that_introduces_quoted_lines_carries_the_first_of_them() -> None:
    """The ``--fix`` plan showed "…the reason it recorded:" and then nothing."""
    with_reason = Finding("daemon-disabled", "warn", "/w/.nx/d/disabled", "The daemon is disabled; the reason it recorded:",
                          detail=("", "Daemon process terminated\x1b[31m", "second"))
    assert render._one_line(with_reason) == \
        "The daemon is disabled; the reason it recorded: \u201cDaemon process terminated\\x1b[31m\u201d (and 1 more line)"
    bare = with_reason._replace(detail=())
    assert render._one_line(bare) == "The daemon is disabled; the reason it recorded."


@pytest.mark.parametrize(("fmt", "expected"), [
    ("bwrap", '--bind "$PWD" "$PWD"'),
    ("docker", '-v "$PWD":"$PWD"'),
    ("flatpak", '--filesystem="$PWD"'),
])
def test_portable_shell_entries_are_spelled_for_the_shell(tmp_path: Path, fmt: str, expected: str) -> None:
    """bwrap rejects ``./`` destinations ("Can't mkdir parents for ./.nx/workspace-data"); docker a relative one."""
    (tmp_path / "nx.json").write_text("{}")
    result = CliRunner().invoke(cli, ["paths", "--platform", "linux", "--nx-version", "24.0.6", "--workspace", str(tmp_path),
                                      "--format", fmt, "--portable"])
    assert result.exit_code == 0, result.output
    assert expected in result.stdout and "./" not in result.stdout and " . " not in result.stdout
