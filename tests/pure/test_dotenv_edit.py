"""The ``.env`` edit, as dotenv reads the file: only the assignment meant goes, every other byte stays, and the
printed ``sed`` makes exactly the same edit as ``--fix`` — or no command is printed and the finding says why."""

from __future__ import annotations

import os
import shlex
import subprocess
import typing as t
from pathlib import Path

import pytest
from conftest import USER, environment, machine, mine

from nxsock.act import acting
from nxsock.act.outcomes import Done
from nxsock.core.dotenv import assignments, parse_dotenv, remove_assignments, remove_assignments_from_bytes
from nxsock.core.environment import Variable
from nxsock.core.fsview import Entry
from nxsock.core.remedy import EditEnvFile, Remedy, render
from nxsock.core.resolver import resolve
from nxsock.core.wording import context_for, remedy_for_invalid

V = "NX_SOCKET_DIR"

#: (the file, what is left of it once NX_SOCKET_DIR is gone), each as bytes.
EDITS: list[tuple[bytes, bytes]] = [
    (b"A=1\nNX_SOCKET_DIR=/tmp\nB=2\n", b"A=1\nB=2\n"),
    (b"A=1\r\nNX_SOCKET_DIR=/tmp\r\nB=2\r\n", b"A=1\r\nB=2\r\n"),  # CRLF: the CR goes with its line
    (b"A=1\rNX_SOCKET_DIR=/tmp\rB=2\r", b"A=1\rB=2\r"),  # CR only: three lines to dotenv, not one
    (b"A=1\r\nNX_SOCKET_DIR=/tmp\rB=2\n", b"A=1\r\nB=2\n"),  # mixed
    (b'X="one\nNX_SOCKET_DIR=/tmp\ntwo"\nB=2\n', None),  # inside X's quoted value: not an assignment, nothing to edit
    (b'NX_SOCKET_DIR="/a\n/b"\nB=2\n', b"B=2\n"),  # its own multi-line value goes whole
    (b"NX_SOCKET_DIR: /tmp\nB=2\n", b"B=2\n"),  # dotenv's NAME: value form
    (b"  export NX_SOCKET_DIR = /x  # why\nB=2", b"B=2"),
    (
        b"# NX_SOCKET_DIR=/tmp\nNX_SOCKET_DIRX=keep\nNX_SOCKET_DIR=/tmp\n",
        b"# NX_SOCKET_DIR=/tmp\nNX_SOCKET_DIRX=keep\n",
    ),
    (b"NX_SOCKET_DIR=/tmp\n\n# about B\nB=2\n", b"\n# about B\nB=2\n"),  # the comment the match runs on into stays
    (b"\xef\xbb\xbfNX_SOCKET_DIR=/tmp\nA=1\n", b"\xef\xbb\xbfA=1\n"),  # a byte-order mark stays
    (
        b"\xff\xfe=raw\nNX_SOCKET_DIR=/t\xe9mp\nC=\xc3\xa9\x80\n",
        b"\xff\xfe=raw\nC=\xc3\xa9\x80\n",
    ),  # bytes not UTF-8, kept
    (b"A=1\nNX_SOCKET_DIR=/tmp", b"A=1\n"),
    (b"NX_SOCKET_DIR=/a\nB=2\nNX_SOCKET_DIR=/b\n", b"B=2\n"),  # every assignment: the last one is what dotenv keeps
    # an ideographic space is blank to dotenv, to sed only in UTF-8
    (b"\xe3\x80\x80NX_SOCKET_DIR=/tmp\nB=2\n", b"B=2\n"),
]


class TestTheLineModel:
    @pytest.mark.parametrize(("before", "after"), EDITS)
    def test_only_the_assignment_goes_and_every_other_byte_stays(self, before: bytes, after: bytes | None) -> None:
        """As dotenv reads lines (CRLF, CR, LF; quoted multi-line values; NAME: value; export): the variable's own
        lines."""
        edited = remove_assignments_from_bytes(before, V)
        if after is None:
            assert isinstance(edited, str) and "no assignment" in edited
            return
        assert edited == after
        text = before.decode("utf-8", "surrogateescape")
        left = parse_dotenv(edited.decode("utf-8", "surrogateescape"))
        assert V not in left and left == {k: v for k, v in parse_dotenv(text).items() if k != V}

    def test_the_lines_named_are_the_lines_dotenv_counts(self) -> None:
        edit = remove_assignments("A=1\rB=2\r\nNX_SOCKET_DIR='x\ny'\nC=3\n", V)
        assert edit.lines == ((3, 4),)
        assert [(a.key, a.first_line, a.last_line) for a in assignments("A=1\rB=2\r\nNX_SOCKET_DIR='x\ny'\nC=3\n")] == [
            ("A", 1, 1), ("B", 2, 2), (V, 3, 4), ("C", 5, 5)]

    def test_a_byte_order_mark_does_not_hide_the_first_key(self) -> None:
        """dotenv (JavaScript's \\s) reads a key after a BOM; so does nxsock."""
        assert parse_dotenv("\ufeffNX_SOCKET_DIR=/tmp\n") == {V: "/tmp"}

    def test_an_edit_that_would_change_how_the_rest_reads_is_not_made(self) -> None:
        """Deleting the line (its quote keeps X's open quote from closing) would make X 'a\\nB=2': the file is left,
        and why is said."""
        text = "X='a\nNX_SOCKET_DIR=it's\nB=2'\n"
        assert parse_dotenv(text) == {"X": "'a", V: "it's", "B": "2'"}
        edit = remove_assignments(text, V)
        assert edit.text is None and "change how dotenv reads the rest" in (edit.reason or "")

    def test_a_unicode_line_separator_is_not_modelled_and_not_edited(self) -> None:
        assert remove_assignments("A=1\u2028NX_SOCKET_DIR=/tmp\n", V).text is None


def _fix(tmp_path: Path, data: bytes) -> bytes:
    """What ``--fix``'s acting code writes for *data* (as this uid, on a file of its own)."""
    env = tmp_path / "fix" / ".env"
    env.parent.mkdir(exist_ok=True)
    env.write_bytes(data)
    problem = acting.delete_env_lines(str(env), V, os.geteuid())
    assert isinstance(problem, Done), problem
    return env.read_bytes()


class TestThePrintedSed:
    @pytest.mark.parametrize(("before", "after"), [e for e in EDITS if e[1] is not None])
    def test_the_printed_sed_makes_exactly_the_edit_fix_makes_or_none_is_printed(
        self, tmp_path: Path, before: bytes, after: bytes
    ) -> None:
        """Run the printed command on the same bytes: the file is what --fix writes, byte for byte."""
        edit = remove_assignments(before.decode("utf-8", "surrogateescape"), V)
        fixed = _fix(tmp_path, before)
        assert fixed == after
        if edit.sed is None:
            assert edit.no_sed  # and the finding says why (TestTheFinding)
            return
        for locale in ("C", "C.UTF-8"):  # whichever locale it is pasted in
            pasted = tmp_path / locale / ".env"
            pasted.parent.mkdir()
            pasted.write_bytes(before)
            command = render(Remedy((EditEnvFile(str(pasted), variable=V, lines=edit.sed or None),), ""))
            assert command.startswith("sed -i -e ")
            subprocess.run(["bash", "-c", command], check=True, env={**os.environ, "LC_ALL": locale})
            assert pasted.read_bytes() == fixed, (locale, command)

    def test_a_cr_only_file_gets_no_command_and_a_bom_file_neither(self) -> None:
        assert remove_assignments("A=1\rNX_SOCKET_DIR=/tmp\r", V).sed is None
        assert "carriage return" in (remove_assignments("A=1\rNX_SOCKET_DIR=/tmp\r", V).no_sed or "")
        assert "byte-order mark" in (remove_assignments("\ufeffNX_SOCKET_DIR=/tmp\n", V).no_sed or "")

    def test_lines_the_pattern_would_get_wrong_are_named_by_number(self) -> None:
        """A line inside another value is not deleted; a value over two lines goes whole."""
        assert remove_assignments('X="a\nNX_SOCKET_DIR=/tmp\nb"\nNX_SOCKET_DIR=/c\n', V).sed == "4d"
        assert remove_assignments('NX_SOCKET_DIR="/a\n/b"\nB=2\n', V).sed == "1,2d"
        assert remove_assignments("A=1\nNX_SOCKET_DIR=/tmp\n", V).sed == ""  # the pattern: still right if lines move


def _finding(tmp_path: Path, text: bytes, size: int | None = None) -> t.Any:
    dotenv = tmp_path / ".env"
    dotenv.write_bytes(text)
    env = environment()
    env = env._replace(variables={**env.variables, V: Variable("/tmp", str(dotenv))})
    view = machine(
        {str(dotenv): Entry("file", USER, USER, 0o644, len(text) if size is None else size), str(tmp_path): mine()},
        files={str(dotenv): text.decode("utf-8", "replace")},
    )
    return remedy_for_invalid(V, context_for(resolve(env, view), view))


class TestTheFinding:
    def test_a_cr_only_file_shows_no_command_and_says_why(self, tmp_path: Path) -> None:
        advice = _finding(tmp_path, b"A=1\rNX_SOCKET_DIR=/tmp\rB=2\r")
        assert advice.command is None or not advice.command.startswith("sed"), advice
        assert f"line 2 of {tmp_path}/.env" in (advice.hint or "") and "carriage return" in (advice.hint or "")

    def test_a_name_colon_value_line_is_removed_by_the_printed_command(self, tmp_path: Path) -> None:
        advice = _finding(tmp_path, b"A=1\nNX_SOCKET_DIR: /tmp\n")
        assert advice.command is not None and advice.command.startswith("sed -i -e "), advice
        subprocess.run(["bash", "-c", advice.command], check=True)
        assert (tmp_path / ".env").read_bytes() == b"A=1\n"

    def test_a_file_larger_than_nxsock_reads_gets_no_command(self, tmp_path: Path) -> None:
        """What sed would do past the first MiB is unknown, and --fix refuses such a file too."""
        advice = _finding(tmp_path, b"NX_SOCKET_DIR=/tmp\n", size=(1 << 20) + 1)
        assert not (advice.command or "").startswith("sed") and "larger than" in (advice.hint or "")

    def test_an_assignment_over_lines_is_named_by_its_lines(self, tmp_path: Path) -> None:
        advice = _finding(tmp_path, b'X="a\nNX_SOCKET_DIR=/x\nb"\nNX_SOCKET_DIR="/tmp\n"\n')
        assert f"lines 4\u20135 of {tmp_path}/.env" in (advice.hint or "") and shlex.quote("4,5d") in (
            advice.command or ""
        )


def test_a_file_built_to_be_slow_to_edit_is_not_edited() -> None:
    """More than a thousand assignments of the variable: left as it is, and said; far fewer are edited."""
    assert "more than 1000 times" in (remove_assignments("NX_SOCKET_DIR=/tmp\n" * 1001, V).reason or "")
    assert remove_assignments("NX_SOCKET_DIR=/tmp\n" * 1000, V).text == ""


class TestTheWriter:
    """``nxsock.act.writing.write_whole_file``, which the .env edit and the tmpfiles drop-in use."""

    def test_short_writes_go_on_until_every_byte_is_written(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        from nxsock.act import writing

        real = os.write
        monkeypatch.setattr(
            writing.os, "write", lambda fd, data: real(fd, bytes(data[:7]))
        )  # a write of at most 7 bytes
        data = bytes(range(256)) * 40
        fd = os.open(tmp_path, os.O_RDONLY)
        try:
            assert writing.write_whole_file(fd, "f", data, 0o640) is None
        finally:
            os.close(fd)
        assert (tmp_path / "f").read_bytes() == data and oct((tmp_path / "f").stat().st_mode & 0o777) == "0o640"

    def test_a_write_that_makes_no_progress_is_a_full_disk_and_the_old_file_stays(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        from nxsock.act import writing

        (tmp_path / "f").write_bytes(b"old")
        monkeypatch.setattr(writing.os, "write", lambda fd, data: 0)
        fd = os.open(tmp_path, os.O_RDONLY)
        try:
            problem = writing.write_whole_file(fd, "f", b"new text", 0o600)
        finally:
            os.close(fd)
        assert (
            problem is not None
            and not problem.refused
            and "ENOSPC" in problem.reason
            and "left as it was" in problem.reason
        )
        assert (tmp_path / "f").read_bytes() == b"old" and [p.name for p in tmp_path.iterdir()] == ["f"]

    @pytest.mark.parametrize("unnamed", [True, False])
    def test_without_unnamed_files_a_temporary_name_is_used_and_never_left(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, unnamed: bool
    ) -> None:
        """A filesystem without O_TMPFILE: the same result, and a check that fails at the end leaves no name behind."""
        from nxsock.act import writing

        if not unnamed:
            monkeypatch.setattr(writing, "_O_TMPFILE", 0)
        (tmp_path / "f").write_bytes(b"old")
        fd = os.open(tmp_path, os.O_RDONLY)
        try:
            assert writing.write_whole_file(fd, "f", b"x", 0o600, unchanged=lambda: "was changed") == (
                True,
                "was changed",
            )
            assert [p.name for p in tmp_path.iterdir()] == ["f"] and (tmp_path / "f").read_bytes() == b"old"
            assert writing.write_whole_file(fd, "f", b"new", 0o600) is None
        finally:
            os.close(fd)
        assert [p.name for p in tmp_path.iterdir()] == ["f"] and (tmp_path / "f").read_bytes() == b"new"
