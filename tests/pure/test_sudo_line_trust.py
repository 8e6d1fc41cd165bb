"""The ``sudo`` line names a script root will run: never one another user could replace before the paste."""
from __future__ import annotations

import shlex
from pathlib import Path

from nxsock.core import program


def _script(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    script = directory / "nxsock"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    return script


def test_a_script_in_a_directory_others_can_write_gets_the_plain_name(tmp_path: Path) -> None:
    """A venv under a 0777 directory: anyone could swap ``bin/nxsock`` for a script root would then run."""
    shared = tmp_path / "shared"
    script = _script(shared / "venv" / "bin")
    shared.chmod(0o777)
    assert program.nxsock_for_root(str(script), "/", secure_path=()) == "nxsock"
    shared.chmod(0o1777)  # sticky: only the venv's owner (you) may replace it
    assert program.nxsock_for_root(str(script), "/", secure_path=()) == shlex.quote(str(script))


def test_a_script_others_can_write_gets_the_plain_name(tmp_path: Path) -> None:
    script = _script(tmp_path / "venv" / "bin")
    script.chmod(0o777)
    assert program.nxsock_for_root(str(script), "/", secure_path=()) == "nxsock"


def test_a_link_into_a_directory_others_can_write_gets_the_plain_name(tmp_path: Path) -> None:
    """The printed path is resolved again by root: a level reached through a link counts as one of its own."""
    shared = tmp_path / "shared"
    _script(shared / "venv" / "bin")
    shared.chmod(0o777)
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "venv").symlink_to(shared / "venv")
    assert program.nxsock_for_root(str(tmp_path / "mine" / "venv" / "bin" / "nxsock"), "/", secure_path=()) == "nxsock"
