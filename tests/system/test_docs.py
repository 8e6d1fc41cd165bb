"""The man page, the completions and the README keep up with the command line."""
from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from pure.test_docs import COMPLETIONS, MAN, REPO, _nxsock_on_path


@pytest.mark.tool("groff")
def test_the_man_page_lints_clean_under_groff() -> None:
    result = subprocess.run(["groff", "-ww", "-z", "-man", str(MAN)], capture_output=True, text=True)
    assert result.returncode == 0 and result.stderr == ""


@pytest.mark.tool("mandoc")
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






@pytest.mark.tool("fish")
@pytest.mark.parametrize(("words", "expected"), COMPLETIONS)
def test_real_fish_completion(tmp_path: Path, words: str, expected: list[str]) -> None:
    """The committed fish script, sourced into fish, completes through fish's own engine (``complete -C``)."""
    script = f"source {REPO / 'completions' / 'nxsock.fish'}; complete -C {shlex.quote(words)}"
    env = _nxsock_on_path(tmp_path)
    result = subprocess.run(["fish", "--no-config", "-c", script], capture_output=True, text=True, env=env)
    offered = {line.split("\t")[0] for line in result.stdout.splitlines()}
    assert set(expected) <= offered, (result.stdout, result.stderr)


@pytest.mark.tool("zsh", "tmux")
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
        subprocess.run(
            [
                *tmux,
                "send-keys",
                "-t",
                "t",
                f"fpath=({functions} $fpath); autoload -U compinit; compinit -u -D",
                "Enter",
            ],
            check=True,
        )
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
