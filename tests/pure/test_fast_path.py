"""``paths --json`` answered without click says exactly what click would have said."""

from __future__ import annotations

import subprocess
import sys
import typing as t

import click
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nxsock.commands.options import HOST_OPTIONS, parse_paths_json
from nxsock.commands.paths import paths
from nxsock.core.host_overrides import HostOverrides

WORDS = [
    "--json", "--format", "--format=json", "--format=bwrap", "json", "text", "--workspace", "--workspace=/tmp",
    "/tmp", "--platform", "linux", "darwin", "win32", "solaris", "--platform=darwin", "--uid", "7", "007", "-1",
    "+3", "4294967294", "4294967295", "--uid=12", "--home", "/home/x", "--tmpdir", "--username", "ada",
    "--nx-version", "24.0.6", "--layout", "legacy", "current", "--layout=legacy", "--portable", "--help", "-h",
    "--", "", "--home=", "--unknown", "--debug",
]


def clicks_reading(args: t.Sequence[str]) -> dict[str, t.Any] | None:
    """The parameters click parses from ``paths ARGS``, or ``None`` where it refuses them."""
    try:
        with paths.make_context("paths", list(args), resilient_parsing=False) as ctx:
            return dict(ctx.params)
    except (click.exceptions.Exit, click.UsageError, click.exceptions.Abort):
        return None


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(WORDS), max_size=7))
def test_the_fast_path_takes_only_what_click_reads_the_same_way(words: list[str]) -> None:
    """Whatever the fast path accepts, click accepts too, with the same overrides, and asks for JSON."""
    host = parse_paths_json(["paths", *words])
    if host is None:
        return
    params = clicks_reading(words)
    assert params is not None, words
    assert params["json_flag"] or params["output_format"] == "json"
    assert host == HostOverrides(**{option.field: params[option.field] for option in HOST_OPTIONS})


def test_every_host_option_is_served_without_click() -> None:
    """Each option's every spelling, together, is one fast-path command line."""
    host = parse_paths_json(["paths", "--workspace", "/w", "--platform=darwin", "--uid", "501", "--home=/Users/a",
                             "--tmpdir", "/t", "--username", "a", "--nx-version=24.0.2", "--layout", "current",
                             "--format=json"])
    assert host == HostOverrides("/w", "darwin", 501, "/Users/a", "/t", "a", "24.0.2", "current")


@pytest.mark.parametrize(
    "args",
    [
        ["paths", "--json"],
        ["paths", "--format", "json", "--platform", "linux", "--uid", "1000"],
        ["paths", "--json", "--platform", "darwin", "--nx-version", "23.3.2"],
        ["paths", "--json", "--platform", "win32", "--username", "ada"],
        ["paths", "--json", "--platform", "linux", "--layout", "legacy", "--tmpdir", "/var/tmp"],
        ["--debug", "paths", "--json", "--platform", "linux"],
    ],
)
def test_the_fast_path_prints_what_click_prints(args: list[str], runner: t.Any) -> None:
    """Byte for byte and exit code for exit code, the document is the same whichever path serves it."""
    from nxsock.app import cli

    fast = subprocess.run([sys.executable, "-m", "nxsock", *args], capture_output=True)
    slow = runner.invoke(cli, args)
    assert fast.stdout.decode() == slow.stdout and fast.returncode == slow.exit_code


def test_a_bad_workspace_is_still_clicks_usage_error(tmp_path: t.Any) -> None:
    """The fast path leaves the wording of a usage error to click: exit 2, the option named."""
    missing = str(tmp_path / "missing")
    result = subprocess.run([sys.executable, "-m", "nxsock", "paths", "--json", "--workspace", missing],
                            capture_output=True, text=True)
    assert result.returncode == 2 and "--workspace" in result.stderr and result.stdout == ""
