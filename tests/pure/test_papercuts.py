"""The small things a person trips over first: values refused in words, one pointer per error, whole lines."""
from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from nxsock.app import cli, run
from nxsock.audit.doctor import FINDING_DESCRIPTIONS, FINDING_IDS
from nxsock.audit.findings import Finding
from nxsock.commands.options import parse_paths_json
from nxsock.core import program, remedy
from nxsock.core.remedy import NxsockCommand, Remedy, RunNxsock
from nxsock.output import render
from nxsock.output.paths_json import fix_line


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "nxsock", *args], capture_output=True, text=True, stdin=subprocess.DEVNULL
    )


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
def test_a_uid_that_is_not_one_says_what_a_uid_is(
    command: str, flag: str, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--uid abc`` said "'abc' is not a valid integer range"."""
    assert run([command, flag, value]) == 2
    assert capsys.readouterr().err == (
        f"nxsock {command}: invalid {flag}: {value!r} is not a uid: a whole number from 0 to "
        f"4294967294 (see nxsock {command} --help)\n"
    )


def test_an_unknown_check_id_points_once_at_the_list(capsys: pytest.CaptureFixture[str]) -> None:
    """``--only nope`` said "see --list-checks (see nxsock doctor --help)": two pointers, one inside the other."""
    assert run(["doctor", "--only", "nope"]) == 2
    assert (
        capsys.readouterr().err
        == "nxsock doctor: invalid --only: unknown check id 'nope'; nxsock doctor --list-checks lists them\n"
    )


def test_a_value_that_merely_mentions_nxsock_keeps_its_pointer(capsys: pytest.CaptureFixture[str]) -> None:
    """Whether the help pointer is left out is decided by the error's type, not by the words of a value."""
    assert run(["paths", "--uid", "nxsock x"]) == 2
    assert capsys.readouterr().err.endswith("(see nxsock paths --help)\n")


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
    assert "..." not in commands and {"list", "path", "prune", "verify"} <= {
        w.split()[0] for w in commands.split("\n") if w.strip()
    }


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


def _script(where: Path) -> Path:
    where.mkdir(parents=True, exist_ok=True)
    script = where / "nxsock"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    return script


class TestNxsockForRoot:
    """A ``sudo`` line names nxsock by a path root can run: the running script's, unless root's path finds it."""

    def test_a_venv_script_is_named_by_its_absolute_path_quoted(self, tmp_path: Path) -> None:
        script = _script(tmp_path / "my venv" / "bin")
        assert program.nxsock_for_root(str(script), "/", secure_path=(str(tmp_path / "empty"),)) == shlex.quote(
            str(script)
        )

    def test_a_relative_argv0_is_made_absolute_against_the_working_directory(self, tmp_path: Path) -> None:
        script = _script(tmp_path / ".venv" / "bin")
        assert program.nxsock_for_root(".venv/bin/nxsock", str(tmp_path), secure_path=()) == str(script)

    def test_the_same_program_on_root_s_path_is_named_plainly(self, tmp_path: Path) -> None:
        script = _script(tmp_path / "venv" / "bin")
        (tmp_path / "usr-local-bin").mkdir()
        (tmp_path / "usr-local-bin" / "nxsock").symlink_to(script)
        assert program.nxsock_for_root(str(script), "/", secure_path=(str(tmp_path / "usr-local-bin"),)) == "nxsock"

    def test_another_nxsock_on_root_s_path_does_not_stand_in_for_this_one(self, tmp_path: Path) -> None:
        script = _script(tmp_path / "venv" / "bin")
        other = _script(tmp_path / "usr-local-bin")
        assert program.nxsock_for_root(str(script), "/", secure_path=(str(other.parent),)) == str(script)

    @pytest.mark.parametrize("argv0", ["/home/ada/src/nxsock/nxsock/__main__.py", "/usr/bin/pytest", "", "nxsock"])
    def test_anything_but_the_script_gets_the_plain_name(self, argv0: str, tmp_path: Path) -> None:
        """``python -m nxsock`` under sudo may not find the package (PYTHONPATH, the working directory, a user site)."""
        assert program.nxsock_for_root(argv0, str(tmp_path), secure_path=()) == "nxsock"

    def test_the_renderer_takes_the_name_as_data_for_sudo_steps_only(self) -> None:
        provision = Remedy((RunNxsock(NxsockCommand.PROVISION_TMPFILES, needs_root=True),), "")
        reset = Remedy((RunNxsock(NxsockCommand.RESET),), "")
        assert remedy.render(provision) == "sudo nxsock provision --tmpfiles --install"
        assert (
            remedy.render(provision, "'/opt/my venv/bin/nxsock'")
            == "sudo '/opt/my venv/bin/nxsock' provision --tmpfiles --install"
        )
        assert remedy.render(reset, "'/opt/my venv/bin/nxsock'") == "nxsock reset"

    def test_the_line_root_is_given_runs_this_nxsock(self) -> None:
        """The line for this checkout's own console script starts this nxsock (root runs it the same way)."""
        script = Path(sys.executable).parent / "nxsock"
        if not script.is_file():
            pytest.skip(
                f"no nxsock script beside {sys.executable}: nxsock is not installed in this interpreter's environment"
            )
        line = program.nxsock_for_root(str(script), "/", secure_path=())
        assert line == shlex.quote(str(script))
        version = subprocess.run([*shlex.split(line), "--version"], capture_output=True, text=True, timeout=60)
        assert version.returncode == 0 and version.stdout.startswith("nxsock ")


def test_a_message_that_introduces_quoted_lines_carries_the_first_of_them() -> None:
    """The ``--fix`` plan showed "…the reason it recorded:" and then nothing."""
    with_reason = Finding(
        "daemon-disabled",
        "warn",
        "/w/.nx/d/disabled",
        "The daemon is disabled; the reason it recorded:",
        detail=("", "Daemon process terminated\x1b[31m", "second"),
    )
    assert (
        render._one_line(with_reason)
        == "The daemon is disabled; the reason it recorded: \u201cDaemon process "
           "terminated\\x1b[31m\u201d (and 1 more line)"
    )
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
    result = CliRunner().invoke(
        cli,
        [
            "paths",
            "--platform",
            "linux",
            "--nx-version",
            "24.0.6",
            "--workspace",
            str(tmp_path),
            "--format",
            fmt,
            "--portable",
        ],
    )
    assert result.exit_code == 0, result.output
    assert expected in result.stdout and "./" not in result.stdout and " . " not in result.stdout


class TestSudoRemediesNameTheProgramGiven:
    """The name the command layer resolved reaches every ``sudo nxsock`` a finding prints, and nothing else."""

    def _boot(self, systemd: bool, program_word: str) -> Finding:
        from conftest import environment, machine

        from nxsock.audit.checks_host import check_boot_persistence
        from nxsock.audit.findings import Context
        from nxsock.core.fsview import Entry
        from nxsock.core.resolver import resolve
        from nxsock.core.wording import context_for

        dirs = {"/usr/lib/tmpfiles.d": Entry("dir", 0, 0, 0o755), "/tmp/.nx": Entry("dir", 0, 0, 0o1777)}
        if systemd:
            dirs["/run/systemd/system"] = Entry("dir", 0, 0, 0o755)
        files = {"/usr/lib/tmpfiles.d/tmp.conf": "q /tmp 1777 root root 10d\n",
                 "/proc/self/mountinfo": "36 25 8:1 / / rw - ext4 /dev/sda1 rw\n"}
        view = machine(dirs, files=files)
        resolution = resolve(environment(), view)
        ctx = Context(resolution, view, context_for(resolution, view, nxsock_for_root=program_word), None, 0, (), ())
        [finding] = check_boot_persistence(ctx)
        return finding

    def test_the_remedy_names_it(self) -> None:
        assert fix_line(self._boot(True, "'/opt/my venv/bin/nxsock'").advice) == \
            "sudo '/opt/my venv/bin/nxsock' provision --tmpfiles --install"

    def test_a_hint_that_quotes_the_command_names_it_too(self) -> None:
        hint = self._boot(False, "/opt/venv/bin/nxsock").hint or ""
        assert "`sudo /opt/venv/bin/nxsock provision --tmpfiles --install`" in hint and "`sudo nxsock" not in hint

    def test_by_default_the_plain_name(self) -> None:
        assert fix_line(self._boot(True, "nxsock").advice) == "sudo nxsock provision --tmpfiles --install"


def test_check_root_of_a_path_it_cannot_create_does_not_advise_nx_s_workspace_data() -> None:
    """``check-root /nope`` as a user said "or set NX_WORKSPACE_DATA_DIRECTORY", unrelated to the path checked."""
    from conftest import machine

    from nxsock.core.fsview import Entry
    from nxsock.core.guards import Refusal
    from nxsock.core.wording import plain_context
    from nxsock.output.report import check_root_document

    view = machine({"/": Entry("dir", 0, 0, 0o755)})
    ctx = plain_context(view, 1000, 1000, "/home/ada")
    document = check_root_document("/nope", "refused", Refusal("not-created", "/nope", errno="EACCES"), ctx)
    refusal = document["refusal"]
    assert refusal["remedy"] is None and "NX_WORKSPACE_DATA_DIRECTORY" not in refusal["hint"]
    assert "NX_SOCKET_DIR" not in refusal["hint"]
    assert (
        refusal["hint"] == "You may not write in / (owner root, mode 0755), so Nx cannot create /nope. / is not Nx's, "
        "and nxsock changes nothing there."
    )


def test_a_sandbox_that_fails_as_the_host_does_is_not_told_to_allow_nowhere() -> None:
    """``NX_SOCKET_DIR=/tmp`` made doctor say Nx "would resolve to nowhere" and then "Allow that directory…"."""
    from conftest import STICKY, environment, machine

    from nxsock.audit.checks_levels import check_user_namespace
    from nxsock.audit.findings import Context
    from nxsock.core.resolver import resolve
    from nxsock.core.wording import context_for

    view = machine({"/tmp/.nx": STICKY})
    resolution = resolve(environment({"NX_SOCKET_DIR": "/tmp"}), view)
    assert resolution.socket_root.tier is None  # Nx itself refuses /tmp as its socket directory
    ctx = Context(resolution, view, context_for(resolution, view), None, 0, (), ())
    [finding] = [f for f in check_user_namespace(ctx) if f.id == "user-namespace"]
    assert "nowhere" not in finding.message and "fails as well" in finding.message
    assert "Allow" not in (finding.hint or "") and "paths --format" not in (finding.hint or "")
