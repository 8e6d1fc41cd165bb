"""The man page, the completions and the README keep up with the command line."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import click
import pytest

from nxsock.app import cli

REPO = Path(__file__).resolve().parent.parent
MAN = REPO / "man" / "nxsock.1"


def _commands() -> list[tuple[str, click.Command]]:
    """Every command and subcommand, with its full name (``cache prune``)."""
    ctx = click.Context(cli)
    found: list[tuple[str, click.Command]] = []
    for name in cli.list_commands(ctx):
        command = cli.get_command(ctx, name)
        assert command is not None
        found.append((name, command))
        if isinstance(command, click.Group):
            found += [(f"{name} {sub}", command.commands[sub]) for sub in command.commands]
    return found


def test_every_command_and_option_is_in_the_man_page() -> None:
    text = MAN.read_text().replace("\\-", "-")
    for name, command in _commands():
        assert re.search(rf'^\.BR? "?{name}\b', text, re.MULTILINE), name
        for option in (opt for p in command.params for opt in p.opts if opt.startswith("--")):
            assert option in text, f"{name} {option}"
    for option in (opt for p in cli.params for opt in p.opts if opt.startswith("--")):
        assert option in text, option


@pytest.mark.skipif(shutil.which("groff") is None, reason="needs groff to lint the man page")
def test_the_man_page_lints_clean_under_groff() -> None:
    result = subprocess.run(["groff", "-ww", "-z", "-man", str(MAN)], capture_output=True, text=True)
    assert result.returncode == 0 and result.stderr == ""


def test_the_readme_names_the_benchmark_and_the_test_command() -> None:
    readme = (REPO / "README.md").read_text()
    assert "benchmarks/startup.py" in readme and (REPO / "benchmarks" / "startup.py").exists()
    assert TEST_COMMAND in readme and MAIN_COMMAND in readme
    assert TEST_COMMAND in (REPO / ".ci" / "run").read_text()


#: The README's two commands: each makes its own fresh virtual environment, so nothing preinstalled stands in.
MAIN_COMMAND = "python3 -m venv .venv && .venv/bin/python -m pip install . && .venv/bin/nxsock doctor"
TEST_COMMAND = "python3 -m venv --clear .venv && .venv/bin/python -m pip install '.[test]' && .venv/bin/python -m pytest"


def test_ci_runs_the_lowest_declared_dependencies_on_the_oldest_python() -> None:
    """CI's second run takes the lowest versions pyproject declares, on Python 3.10, in a venv of its own."""
    ci = (REPO / ".ci" / "run").read_text()
    assert "--resolution lowest-direct" in ci and "(3, 10)" in ci and ".venv-lowest/bin/python -m pytest" in ci
    assert 'requires-python = ">=3.10"' in (REPO / "pyproject.toml").read_text()


def test_the_version_is_the_released_one() -> None:
    """``nxsock --version``, pyproject and the newest dated CHANGELOG heading name one version, Unreleased above it."""
    match = re.search(r'^version = "([^"]+)"$', (REPO / "pyproject.toml").read_text(), re.M)
    assert match is not None
    version = match.group(1)
    shown = subprocess.run([sys.executable, "-m", "nxsock", "--version"], capture_output=True, text=True)
    assert shown.stdout == f"nxsock {version}\n"
    headings = re.findall(r"^## \[([^]]+)\](?: - (\d{4}-\d{2}-\d{2}))?$", (REPO / "CHANGELOG.md").read_text(), re.M)
    assert headings[0] == ("Unreleased", "") and headings[1][0] == version and headings[1][1], headings[:2]


@pytest.mark.skipif(shutil.which("mandoc") is None, reason="needs mandoc (Debian package mandoc) to lint the man page")
def test_the_man_page_lints_clean_under_mandoc() -> None:
    result = subprocess.run(["mandoc", "-Tlint", str(MAN)], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout == "" and result.stderr == ""


def test_man_finds_the_installed_page() -> None:
    """A pip install puts the page in <prefix>/share/man/man1, where man looks when <prefix>/bin is on PATH."""
    import os
    import sysconfig

    installed = os.path.join(sysconfig.get_path("data"), "share", "man", "man1", "nxsock.1")
    if shutil.which("man") is None or not os.path.exists(installed):
        pytest.skip("needs man, and nxsock installed with its data files")
    path = os.path.join(sysconfig.get_path("data"), "bin") + os.pathsep + os.environ.get("PATH", "")
    found = subprocess.run(["man", "-w", "nxsock"], capture_output=True, text=True, env={**os.environ, "PATH": path})
    assert found.stdout.strip() == installed


COMPLETIONS = [
    ("nxsock ch", ["check-root"]),
    ("nxsock paths --pl", ["--platform"]),
    ("nxsock paths --platform d", ["darwin"]),
    ("nxsock doctor --st", ["--strict"]),
    ("nxsock doctor --only co", ["configuration", "container"]),
    ("nxsock cache pr", ["prune"]),
    ("nxsock schema cache-l", ["cache-list"]),
    ("nxsock doctor --format g", ["github"]),
    ("nxsock doctor --no-r", ["--no-redact"]),
]


def _nxsock_on_path(tmp_path: Path) -> dict[str, str]:
    """A clean environment whose PATH finds an ``nxsock`` that runs the copy under test."""
    shim = tmp_path / "bin" / "nxsock"
    shim.parent.mkdir()
    shim.write_text(f"#!/bin/sh\nexec {sys.executable} -m nxsock \"$@\"\n")
    shim.chmod(0o755)
    return {"PATH": f"{shim.parent}:/usr/bin:/bin", "HOME": str(tmp_path), "TERM": "xterm", "LANG": "C.UTF-8"}


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@pytest.mark.parametrize(("words", "expected"), COMPLETIONS)
def test_real_bash_completion(tmp_path: Path, words: str, expected: list[str]) -> None:
    """The committed bash script, sourced into bash, completes commands, options, choices and check ids."""
    script = (
        f"source {REPO / 'completions' / 'nxsock.bash'}; COMP_WORDS=({words}); COMP_CWORD={len(words.split()) - 1}; "
        "_nxsock_completion nxsock; printf '%s\\n' \"${COMPREPLY[@]}\""
    )
    env = _nxsock_on_path(tmp_path)
    result = subprocess.run(["bash", "--norc", "--noprofile", "-c", script], capture_output=True, text=True, env=env)
    assert set(expected) <= set(result.stdout.split()), (result.stdout, result.stderr)


@pytest.mark.skipif(shutil.which("fish") is None, reason="needs fish (Debian package fish)")
@pytest.mark.parametrize(("words", "expected"), COMPLETIONS)
def test_real_fish_completion(tmp_path: Path, words: str, expected: list[str]) -> None:
    """The committed fish script, sourced into fish, completes through fish's own engine (``complete -C``)."""
    script = f"source {REPO / 'completions' / 'nxsock.fish'}; complete -C {shlex.quote(words)}"
    env = _nxsock_on_path(tmp_path)
    result = subprocess.run(["fish", "--no-config", "-c", script], capture_output=True, text=True, env=env)
    offered = {line.split("\t")[0] for line in result.stdout.splitlines()}
    assert set(expected) <= offered, (result.stdout, result.stderr)


@pytest.mark.skipif(shutil.which("zsh") is None or shutil.which("tmux") is None,
                    reason="needs zsh and tmux (Debian packages zsh, tmux)")
@pytest.mark.parametrize(("words", "expected"), COMPLETIONS)
def test_real_zsh_completion(tmp_path: Path, words: str, expected: list[str]) -> None:
    """The committed zsh function, autoloaded by compinit in an interactive zsh on a real pty, completes at TAB."""
    functions = tmp_path / "functions"
    functions.mkdir()
    shutil.copy(REPO / "completions" / "nxsock.zsh", functions / "_nxsock")
    env = _nxsock_on_path(tmp_path)
    socket = f"nxsock-test-{os.getpid()}-{tmp_path.name}"
    tmux = ["tmux", "-L", socket]
    shell = "env -i " + " ".join(shlex.quote(f"{k}={v}") for k, v in env.items()) + " zsh -f"
    subprocess.run([*tmux, "new-session", "-d", "-s", "t", "-x", "200", "-y", "40", shell], check=True)
    try:
        subprocess.run([*tmux, "send-keys", "-t", "t", f"fpath=({functions} $fpath); autoload -U compinit; compinit -u -D",
                        "Enter"], check=True)
        subprocess.run([*tmux, "send-keys", "-t", "t", words, "Tab"], check=True)
        screen, deadline, listed = "", time.monotonic() + 15, False
        while time.monotonic() < deadline:
            time.sleep(0.3)
            screen = subprocess.run([*tmux, "capture-pane", "-p", "-t", "t"], capture_output=True, text=True).stdout
            if all(word in screen for word in expected):
                break
            if not listed and time.monotonic() > deadline - 13:
                # An ambiguous word gets its common prefix at the first TAB and the list at the second.
                subprocess.run([*tmux, "send-keys", "-t", "t", "Tab"], check=True)
                listed = True
        assert all(word in screen for word in expected), screen
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)


