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


@pytest.mark.parametrize("json_flag", [False, True], ids=["text", "json"])
@pytest.mark.parametrize("redirect", [">/dev/full", ">&-"])
def test_root_auditing_as_a_user_on_a_standard_output_that_fails_is_exit_74_and_one_line(
    json_flag: bool, redirect: str
) -> None:
    """``doctor --user``'s audit runs in a child of that user's ids: its failed write is the child's 74, said once."""
    import shlex
    import subprocess

    from harness import USER, stage_nxsock

    python, pylib = stage_nxsock()
    command = (f"env -i PATH=/usr/bin:/bin HOME=/root PYTHONPATH={shlex.quote(pylib)} {shlex.quote(python)} -m nxsock "
               f"doctor --user {USER}{' --json' if json_flag else ''} {redirect}")
    script = (f"mount -t tmpfs -o mode=1777 tmpfs /tmp; mount -t tmpfs -o mode=0755 tmpfs /home; "
              f"install -d -o {USER} -g {USER} /home/u{USER}; cd /home/u{USER}; {command}")
    result = subprocess.run(
        ["unshare", "-m", "--propagation", "private", "bash", "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        cwd="/",
    )
    assert result.returncode == 74, (result.returncode, result.stderr)
    assert len(result.stderr.splitlines()) == 1 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.startswith(
        "nxsock: standard output is closed" if redirect == ">&-" else "nxsock: cannot write to standard output (ENOSPC"
    )
