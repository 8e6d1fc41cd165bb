"""The command line contract: JSON keys, exit codes, streams, and honest unbuilt commands."""
from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner
from documents import parsed

from nxsock.app import cli


def test_a_recorded_daemon_socket_is_probed_alive_or_stale(runner: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    """A listening socket answers; one nobody listens on is stale (ECONNREFUSED); neither blocks."""
    import socket
    import tempfile

    with tempfile.TemporaryDirectory(prefix="nxs") as ws:
        record_dir = os.path.join(ws, ".nx", "workspace-data", "d")
        os.makedirs(record_dir)
        sock_path = os.path.join(ws, "d.sock")
        server = socket.socket(socket.AF_UNIX)
        server.bind(sock_path)
        server.listen(1)
        with open(os.path.join(record_dir, "server-process.json"), "w") as f:
            json.dump({"processId": os.getpid(), "socketPath": sock_path, "nxVersion": "24.0.6"}, f)
        monkeypatch.chdir(ws)
        live = parsed(runner.invoke(cli, ["paths", "--json"]).stdout, "paths")
        server.close()  # the file stays; nothing listens
        stale = parsed(runner.invoke(cli, ["paths", "--json"]).stdout, "paths")
    assert (live["daemon_record"]["connect"], live["daemon_record"]["alive"]) == ("answers", True)
    assert (live["sockets"]["daemon"]["path"], live["sockets"]["daemon"]["answers"]) == (sock_path, True)
    assert stale["daemon_record"]["connect"] == "ECONNREFUSED" and stale["sockets"]["daemon"]["answers"] is False
