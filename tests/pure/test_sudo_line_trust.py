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


def test_a_path_prose_cannot_quote_whole_gets_the_plain_name(tmp_path: Path) -> None:
    """A hint quotes the line in backticks, which the terminal wrapper keeps on one line: a backtick in the path
    ended the quote early, and the copied line broke in two (``sudo '…/nxsock'`` alone, then ``provision …``)."""
    from rich.text import Text

    from nxsock.output.render import _wrapped

    script = _script(tmp_path / "a` b c" / "bin")
    word = program.nxsock_for_root(str(script), "/", secure_path=())
    hint = f"If this host boots with systemd, `sudo {word} provision --tmpfiles --install` keeps /tmp/.nx across it."
    lines = [line.plain for line in _wrapped(Text("  note: "), hint, 40, indent=8)]
    assert any(f"`sudo {word} provision --tmpfiles --install`" in line for line in lines), lines
