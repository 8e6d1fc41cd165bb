"""The report's Node and OS lines: each answer checked against its grammar, nothing else shown, nothing hangs."""
from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from nxsock.core.host_versions import node_version, os_release


def test_node_version_is_what_node_on_path_says() -> None:
    node = shutil.which("node")
    expected = subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip() if node else None
    assert node_version() == expected


@pytest.mark.parametrize(("output", "shown"), [("v20.11.1", "v20.11.1"), ("v22.0.0-nightly.1", "v22.0.0-nightly.1"),
                                               ("v20.1.1\n\x1b]0;owned\x07", None), ("::error::x", None), ("", None)])
def test_a_node_that_answers_something_else_shows_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           output: str, shown: str | None) -> None:
    fake = tmp_path / "node"
    fake.write_text(f"#!/bin/sh\nprintf '%s\\n' '{output}'\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert node_version() == shown


def test_a_node_that_never_answers_is_given_up_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "node"
    fake.write_text("#!/bin/sh\nexec sleep 600\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert node_version(timeout=0.2) is None


@pytest.mark.parametrize(("text", "name"), [
    ('NAME=Alpine\nPRETTY_NAME="Alpine Linux v3.20"\n', "Alpine Linux v3.20"),
    ("PRETTY_NAME='Ubuntu 24.04 LTS'\n", "Ubuntu 24.04 LTS"),
    ("PRETTY_NAME=Fedora\n", "Fedora"),
    ('PRETTY_NAME="x\x1b[31m"\n', "x\x1b[31m"),  # shown through the report's escaping, as every name from disk
    ("NAME=nothing-pretty\n", None),
])
def test_os_release_is_its_pretty_name(tmp_path: Path, text: str, name: str | None) -> None:
    path = tmp_path / "os-release"
    path.write_text(text)
    assert os_release((str(path),)) == name


def test_a_fifo_or_a_missing_file_is_skipped_without_hanging(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    real = tmp_path / "real"
    real.write_text("PRETTY_NAME=Real\n")
    assert os_release((str(tmp_path / "missing"), str(fifo), str(real))) == "Real"


def _planted_node(directory: Path, marker: Path, body: str = "printf 'v20.11.1\\n'") -> None:
    directory.mkdir(parents=True, exist_ok=True)
    fake = directory / "node"
    fake.write_text(f"#!/bin/sh\n: > '{marker}'\n{body}\n")
    fake.chmod(0o755)


def test_a_relative_path_entry_never_runs_the_working_directory_s_node(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """An empty PATH entry is the working directory: root's ``doctor --user --report`` in a peer's workspace ran its
    node."""
    marker = tmp_path / "ran"
    _planted_node(tmp_path / "peer-workspace", marker)
    monkeypatch.chdir(tmp_path / "peer-workspace")
    (tmp_path / "empty").mkdir()
    for path in (f":{tmp_path / 'empty'}", f"{tmp_path / 'empty'}:.", "node_modules/../"):
        monkeypatch.setenv("PATH", path)
        assert node_version() is None
        assert not marker.exists(), path


def test_a_node_in_a_directory_others_can_write_is_not_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another user could have put that node there (or swap it): it is not run, as a level of Nx's is not trusted."""
    marker = tmp_path / "ran"
    shared = tmp_path / "shared-bin"
    _planted_node(shared, marker)
    shared.chmod(0o777)
    monkeypatch.setenv("PATH", str(shared))
    assert node_version() is None
    assert not marker.exists()
    shared.chmod(0o1777)  # sticky: only the node's owner (you) may replace it
    assert node_version() == "v20.11.1"


def test_a_node_that_floods_its_output_is_not_read_to_the_end(tmp_path: Path) -> None:
    """Its answer is read to 64 bytes and the node stopped, not buffered whole until the timeout (2.4 GiB in 3 s
    before).

    Run under a 512 MiB address-space limit: buffering the flood fails with MemoryError, reading 64 bytes does not.
    """
    _planted_node(tmp_path / "bin", tmp_path / "ran", f"exec {shutil.which('yes')} v20.11.1")
    probe = ("import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (512 << 20, 512 << 20)); "
             "from nxsock.core.host_versions import node_version; print(node_version(timeout=60))")
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=600,  # a hang guard
                         env={**os.environ, "PATH": str(tmp_path / "bin")})
    assert (run.returncode, run.stdout) == (0, "None\n"), run.stderr[-2000:]
