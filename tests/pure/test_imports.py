"""What the hot paths load: ``paths --json`` and completion must stay light (see click's test_imports)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from documents import parsed, schema_name

HEAVY = {"rich", "platformdirs", "subprocess", "importlib.metadata", "hashlib", "asyncio", "pygments", "markdown_it"}

PROBE = """
import sys, json
from nxsock.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
sys.stderr.write("\\n@@" + json.dumps(sorted(sys.modules)))
"""


def loaded(*args: str, env: dict[str, str] | None = None) -> set[str]:
    proc = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, env=env)
    if schema_name(args) is not None:
        parsed(proc.stdout, args)  # the light path prints the same checked document
    return set(json.loads(proc.stderr.rsplit("@@", 1)[1]))


def test_paths_json_loads_nothing_heavy() -> None:
    modules = loaded("paths", "--json", "--platform", "linux")
    assert not {m for m in modules if m.split(".")[0] in HEAVY or m in HEAVY}
    assert "nxsock.output.render" not in modules


def test_paths_json_neither_validates_nor_loads_a_schema() -> None:
    """The schemas are published for consumers and checked by the tests; nxsock never reads them to answer."""
    for form in (["paths", "--json"], ["paths", "--json", "--platform", "darwin"]):
        modules = loaded(*form)
        assert "nxsock.output.schemas" not in modules and "jsonschema" not in {m.split(".")[0] for m in modules}, form
        assert "importlib.resources" not in modules, form


def test_paths_json_does_not_even_load_click() -> None:
    """The invocation CI runs on every job is served by the resolver alone, with whichever host options."""
    forms = (["paths", "--json"], ["paths", "--format", "json"], ["paths", "--json", "--workspace", "."],
             ["paths", "--format=json", "--platform", "darwin", "--uid=501", "--nx-version", "23.3.2"])
    for form in forms:
        modules = loaded(*form)
        assert "click" not in modules, form
        assert not {m for m in modules if m.split(".")[0] in HEAVY}


def test_a_prediction_with_no_refusal_loads_no_remedy_code() -> None:
    """The remedy policy and its sentences are made for the first refusal; a fresh Mac has none.

    (A fresh Linux machine has one: inside a user-namespace sandbox, 24.0.5's client would refuse ``/``.)
    """
    clean = loaded("paths", "--json", "--platform", "darwin")
    assert not {"nxsock.core.remedy", "nxsock.core.wording"} & clean
    # Where Nx refuses something (NX_SOCKET_DIR=/tmp, the OS temp root itself), they come to give its remedy.
    refused = loaded("paths", "--json", env=dict(os.environ, NX_SOCKET_DIR="/tmp"))
    assert {"nxsock.core.remedy", "nxsock.core.wording"} <= refused


def test_completion_loads_no_command_beyond_click() -> None:
    env = dict(os.environ, _NXSOCK_COMPLETE="bash_complete", COMP_WORDS="nxsock ch", COMP_CWORD="1")
    modules = loaded(env=env)
    assert not {m for m in modules if m.split(".")[0] in HEAVY}
    assert "nxsock.commands.paths" not in modules and "nxsock.core.resolver" not in modules
    assert "nxsock.commands.options" not in modules  # the fast path's parser is only for a paths command line


def test_help_loads_no_command_and_no_fast_path() -> None:
    modules = loaded("--help")
    assert not {m for m in modules if m.startswith("nxsock.commands.") and m != "nxsock.commands.summaries"}, modules
    assert not {m for m in modules if m.startswith("nxsock.core")} and "rich" not in modules


def test_human_output_is_what_loads_rich() -> None:
    assert "rich" in loaded("paths", "--platform", "linux")
