"""The read-only commands answer any variable value and path with a document and an exit code from the table."""
from __future__ import annotations

import json
import typing as t

from click.testing import CliRunner
from documents import parsed
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nxsock.app import cli

EXIT_CODES = {0, 1, 2, 73, 77, 78}
pieces = st.sampled_from(
    [
        "/",
        "..",
        ".",
        "~",
        "/tmp",
        "/tmp/.nx",
        "\n",
        "\t",
        "\x1b[31m",
        "\x00",
        "\udcff",
        "é",
        "*",
        "?",
        "[",
        "{",
        " ",
        "x" * 300,
    ]
)
values = st.one_of(
    st.text(min_size=0, max_size=40),
    st.lists(pieces, max_size=8).map("".join),
    st.just("x" * 5000),
    st.just("/tmp/" + "y" * 5000),
)
names = st.sampled_from(
    [
        "NX_SOCKET_DIR",
        "NX_DAEMON_SOCKET_DIR",
        "HOME",
        "TMPDIR",
        "NX_WORKSPACE_DATA_DIRECTORY",
        "NX_NATIVE_FILE_CACHE_DIRECTORY",
        "NX_WORKSPACE_ROOT_PATH",
        "NX_SKIP_NATIVE_FILE_CACHE",
        "XDG_RUNTIME_DIR",
    ]
)
environments = st.dictionaries(names, values, max_size=4)


def _clean(env: dict[str, str]) -> dict[str, str | None]:
    # A NUL cannot be in a real environment: the kernel would cut the value there.
    return {k: v.split("\x00")[0] for k, v in env.items()}


def _check(result: t.Any, schema: str) -> dict[str, t.Any]:
    assert result.exit_code in EXIT_CODES, (result.exit_code, result.output[-500:], result.exception)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    document = parsed(result.stdout, schema)
    assert document["schema_version"] == 1
    return document


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(environments)
def test_paths_json_answers_any_environment(env: dict[str, str]) -> None:
    document = _check(CliRunner().invoke(cli, ["paths", "--json"], env=_clean(env)), "paths")
    assert json.loads(json.dumps(document)) == document


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values)
def test_check_root_answers_any_path(path: str) -> None:
    path = path.split("\x00")[0] or "."
    # After ``--``, as a script passes a path that may begin with a dash (``-0`` is an option otherwise).
    _check(CliRunner().invoke(cli, ["check-root", "--json", "--", path]), "check-root")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values, environments)
def test_paths_answers_any_workspace_option(workspace: str, env: dict[str, str]) -> None:
    workspace = workspace.split("\x00")[0]
    result = CliRunner().invoke(cli, ["paths", "--json", "--workspace", workspace or "."], env=_clean(env))
    if result.exit_code == 2:
        assert "Traceback" not in result.output  # a usage error for an unusable --workspace
        return
    _check(result, "paths")


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values)
def test_doctor_explain_answers_any_text(text: str) -> None:
    document = _check(
        CliRunner().invoke(cli, ["doctor", "--json", "--only", "outcome", "--explain", text.replace("\x00", "")]),
        "doctor",
    )
    assert "matched" in document
