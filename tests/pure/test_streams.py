"""Closed and full standard streams: a documented exit and one line, for every command, never exit 70 or 120.

Each command runs as a child of ``bash`` with the descriptor really closed
(``<&-``, ``>&-``) or standard output on ``/dev/full`` (every write ENOSPC),
next to the same command run plainly.  Standard output closed or refusing a
write is exit 74 (``EX_IOERR``); stdin closed is a usage error (2) only for a
command that reads it, and changes nothing for the others.
"""
from __future__ import annotations

import os
import shlex
import subprocess
import sys
import typing as t
from pathlib import Path

import click
import pytest

from nxsock import exitcodes
from nxsock.app import cli, load_command

#: Its module fixture runs every command every way (about 7 s of CPU): under pytest-xdist the module runs on one
#: worker, not once on each.
pytestmark = pytest.mark.xdist_group("streams")

#: One invocation of every command in the CLI (and the group's own options), none of which changes anything.
INVOCATIONS = {
    "nxsock --help": ["--help"],
    "nxsock --version": ["--version"],
    "paths": ["paths"],
    "paths --json": ["paths", "--json"],  # the click-free fast path
    "check-root": ["check-root", "--json"],
    "provision": ["provision", "--dry-run"],
    "cache path": ["cache", "path"],
    "cache list": ["cache", "list"],
    "cache verify": ["cache", "verify"],
    "cache prune": ["cache", "prune", "--dry-run"],
    "reset": ["reset", "--dry-run"],
    "doctor": ["doctor"],
    "doctor --json": ["doctor", "--json"],
    "doctor --explain -": ["doctor", "--explain", "-"],
    "doctor --fix": ["doctor", "--fix", "--dry-run", "--json"],
    "schema": ["schema"],
    "schema NAME": ["schema", "doctor"],
}
#: The invocations that read stdin: closing it is their usage error.
READS_STDIN = {"doctor --explain -"}
#: What they read when it is open.
STDIN = {"doctor --explain -": "<<<'Daemon process terminated and closed the connection'"}


def leaf_commands(group: click.Group, prefix: str = "") -> set[str]:
    names = set()
    for name in group.list_commands(click.Context(group)):
        command = load_command(name) if group is cli else group.get_command(click.Context(group), name)
        assert command is not None, name
        full = f"{prefix}{name}"
        names |= leaf_commands(command, f"{full} ") if isinstance(command, click.Group) else {full}
    return names


def run(
    words: t.Sequence[str], redirect: str, where: Path, stdin: str = "</dev/null"
) -> subprocess.CompletedProcess[str]:
    (where / "home").mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("NX_")}
    env.update(HOME=str(where / "home"), NO_COLOR="1", PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    command = f"{shlex.quote(sys.executable)} -m nxsock {' '.join(map(shlex.quote, words))} {stdin} {redirect}"
    return subprocess.run(["bash", "-c", command], capture_output=True, text=True, cwd=where, env=env, timeout=60)


def one_line(stderr: str) -> str:
    lines = stderr.splitlines()
    assert "Traceback" not in stderr and "internal error" not in stderr and "Exception ignored" not in stderr, stderr
    assert len(lines) == 1, stderr
    return lines[0]


#: The ways each invocation is run: plainly, and with each stream closed or full.
WAYS = {"plain": "", "stdout closed": ">&-", "stdout full": ">/dev/full", "stdin closed": "<&-"}


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], subprocess.CompletedProcess[str]]:
    """Every invocation run every way, two at a time (each in a directory of its own).

    A command added to the CLI without an invocation here fails every test of this class, not silently the contract.
    """
    from concurrent.futures import ThreadPoolExecutor

    tried = {
        words[0] if words[0] != "cache" else " ".join(words[:2])
        for words in INVOCATIONS.values()
        if not words[0].startswith("-")
    }
    assert leaf_commands(cli) <= tried, leaf_commands(cli) - tried

    keys = [(name, way) for name in INVOCATIONS for way in WAYS]
    # made here, one after another: mktemp is not thread-safe (two threads creating the base directory at once,
    # the first time a worker asks for one, fail with FileExistsError)
    places = {key: tmp_path_factory.mktemp("streams") for key in keys}

    def one(key: tuple[str, str]) -> subprocess.CompletedProcess[str]:
        name, way = key
        return run(INVOCATIONS[name], WAYS[way], places[key], STDIN.get(name, "</dev/null"))

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(keys, pool.map(one, keys), strict=True))


@pytest.mark.parametrize("name", list(INVOCATIONS))
class TestStandardStreams:

    def test_standard_output_closed_is_exit_74_and_one_line(self, name: str, ran: t.Any) -> None:
        """Nothing is run: nobody would read what it says it did."""
        result = ran[name, "stdout closed"]
        assert result.returncode == 74, (result.returncode, result.stderr)
        assert one_line(result.stderr) == "nxsock: standard output is closed; nothing was done."

    def test_standard_output_full_is_exit_74_and_one_line(self, name: str, ran: t.Any) -> None:
        plain, result = ran[name, "plain"], ran[name, "stdout full"]
        assert plain.stdout, "the command prints something, which /dev/full refuses"
        assert result.returncode == 74, (result.returncode, result.stderr)
        plain_lines = plain.stderr.splitlines()
        lines = result.stderr.splitlines()
        assert lines[:len(plain_lines)] == plain_lines, result.stderr
        assert one_line("\n".join(lines[len(plain_lines) :])).startswith(
            "nxsock: cannot write to standard output (ENOSPC: "
        )



def test_stdin_closed_is_a_usage_error_where_stdin_is_read_and_changes_nothing_elsewhere(ran: t.Any) -> None:
    for name in INVOCATIONS:
        result = ran[name, "stdin closed"]
        assert "Traceback" not in result.stderr and result.returncode != 70, (name, result.stderr)
        if name in READS_STDIN:
            assert result.returncode == 2, (name, result.returncode, result.stderr)
            assert "stdin is closed" in one_line(result.stderr)
        else:
            assert result.returncode == ran[name, "plain"].returncode, (name, result.stderr)


def test_fix_with_stdin_closed_and_a_plan_to_apply_is_the_documented_usage_error(tmp_path: Path) -> None:
    """``--fix`` asks before it changes anything; with stdin closed there is no one to ask: exit 2, one line."""
    workspace = tmp_path / "ws"
    marker = workspace / ".nx" / "workspace-data" / "d" / "disabled"
    marker.parent.mkdir(parents=True)
    marker.parent.chmod(0o700)
    (workspace / "nx.json").write_text("{}")
    marker.write_text("Daemon was disabled")
    plan = run(["doctor", "--fix", "--dry-run"], "", workspace)
    assert f"rm -- {marker}" in plan.stdout, plan.stdout  # there is something to ask about
    result = run(["doctor", "--fix"], "<&-", workspace)
    assert result.returncode == exitcodes.USAGE, (result.returncode, result.stderr)
    assert "no terminal to ask on" in one_line(result.stderr)
    assert marker.exists()
