"""``doctor --explain`` answered from this machine's own audit, as root: what the remedies of a stored capture
become on a real host (the captures themselves are read in ``tests/pure/test_explain.py``)."""

from __future__ import annotations

import json

from click.testing import CliRunner
from pure.test_explain import CAPTURES, EXPECTED

from nxsock.app import cli


def test_the_json_keeps_its_keys_and_adds_every_message(runner: CliRunner) -> None:
    _, text = CAPTURES["24.0.6/socket-dir-shared--client.txt"]
    document = json.loads(runner.invoke(cli, ["doctor", "--json", "--explain", text]).stdout)
    assert {"schema_version", "status", "findings", "matched", "errno", "path", "cause", "remedy"} <= document.keys()
    assert document["schema_version"] == 1 and document["matched"] == "daemon-graph-failed"
    assert [m["matched"] for m in document["messages"]] == [
        m[0] for m in EXPECTED["24.0.6/socket-dir-shared--client.txt"]
    ]
    assert all(m["remedy"] for m in document["messages"])
    assert document["remedy"] == document["messages"][0]["remedy"]
