"""The man page, the completions and the README keep up with the command line."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest

from nxsock.app import COMMANDS, cli

REPO = Path(__file__).resolve().parent.parent
MAN = REPO / "man" / "nxsock.1"


def _commands() -> list[tuple[str, click.Command]]:
    """Every command and subcommand, with its full name (``cache prune``)."""
    ctx = click.Context(cli)
    found: list[tuple[str, click.Command]] = []
    for name in COMMANDS:
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


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_scripts_match_the_click_definition(shell: str) -> None:
    """Regenerating a completion script gives the committed file; drift fails here."""
    generated = subprocess.run(
        [sys.executable, "-c", "from nxsock.cli import main; main()"],
        env={"_NXSOCK_COMPLETE": f"{shell}_source", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
    ).stdout
    assert generated == (REPO / "completions" / f"nxsock.{shell}").read_text()


def test_the_readme_names_the_benchmark_and_the_test_command() -> None:
    readme = (REPO / "README.md").read_text()
    assert "benchmarks/startup.py" in readme and (REPO / "benchmarks" / "startup.py").exists()
    assert "python3 -m pip install '.[test]' && python3 -m pytest" in readme
    assert "python3 -m pip install '.[test]' && python3 -m pytest" in (REPO / ".ci" / "run").read_text()


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


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@pytest.mark.parametrize(
    ("words", "expected"),
    [("nxsock ch", "check-root"), ("nxsock paths --pl", "--platform"), ("nxsock paths --platform d", "darwin"),
     ("nxsock doctor --st", "--strict"), ("nxsock cache pr", "prune")],
)
def test_real_bash_completion(tmp_path: Path, words: str, expected: str) -> None:
    """The committed bash script, sourced into bash, completes commands, options and choices through nxsock."""
    shim = tmp_path / "nxsock"
    shim.write_text(f"#!/bin/sh\nexec {sys.executable} -m nxsock \"$@\"\n")
    shim.chmod(0o755)
    script = (
        f"source {REPO / 'completions' / 'nxsock.bash'}; COMP_WORDS=({words}); COMP_CWORD={len(words.split()) - 1}; "
        "_nxsock_completion nxsock; printf '%s\\n' \"${COMPREPLY[@]}\""
    )
    env = {"PATH": f"{tmp_path}:/usr/bin:/bin", "HOME": str(tmp_path)}
    result = subprocess.run(["bash", "--norc", "--noprofile", "-c", script], capture_output=True, text=True, env=env)
    assert expected in result.stdout.split(), (result.stdout, result.stderr)
