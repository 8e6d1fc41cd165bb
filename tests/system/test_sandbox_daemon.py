"""Nx ≥ 24.0.5's client and user-namespace sandboxes: the rule, the verdict, and what doctor and paths say.

The real daemon and client in the real sandboxes are in ``test_sandboxes.py``;
these pin the rule on in-memory machines and, as a real unprivileged user in a
real user namespace (``unshare -U``), what doctor says there.
"""
from __future__ import annotations

import json

from documents import parsed
from harness import USER as LIVE_USER
from harness import as_user_prefix, run_as_user, stage_nxsock


class TestLiveUserNamespace:
    """A real listener on the recorded socket, a real user namespace: doctor judges with the client's rule."""


    def test_an_answering_daemon_is_reported_refused_by_the_client_inside(self) -> None:
        python, pylib = stage_nxsock()
        ws = f"/home/u{LIVE_USER}/ws"
        d = f"{ws}/.nx/workspace-data/d"
        record = json.dumps({"processId": 1, "socketPath": f"{d}/d.sock", "nxVersion": "24.0.6"})
        setup = (
            f"install -d -o {LIVE_USER} {ws} {ws}/node_modules/nx {ws}/.nx {ws}/.nx/workspace-data; install -d -m "
            f"0700 -o {LIVE_USER} {d}; "
            f"echo '{{}}' > {ws}/nx.json; echo '{{\"version\": \"24.0.6\"}}' > {ws}/node_modules/nx/package.json; "
            f"echo '{record}' > {d}/server-process.json; chown -R {LIVE_USER} {ws}"
        )
        listen = ("import socket,sys,time; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(); "
                  "open(sys.argv[1]+'.up','w').close(); time.sleep(30)")
        post = (
            f"cd {ws}; {as_user_prefix()} {python} -c \"{listen}\" {d}/d.sock & listener=$!; "
            f"for i in $(seq 6000); do [ -e {d}/d.sock.up ] && break; sleep 0.01; done; "
            # NX_DAEMON=true: Nx would use its daemon here even if this host is a container
            f"{as_user_prefix()} unshare -U --map-current-user env PYTHONPATH={pylib} NX_DAEMON=true {python} "
            "-m nxsock doctor --json "
            f"--only daemon-record --only sandbox-daemon; kill $listener"
        )
        result = run_as_user(setup, ["--version"], post=post)
        findings = parsed(result.post, "doctor")["findings"]
        record_finding = next(f for f in findings if f["id"] == "daemon-record")
        assert "answers a plain connect, but Nx 24.0.6's client refuses" in record_finding["message"], findings
        assert record_finding["remedy"] == "export NX_DAEMON=false"
        assert not any("is running and answers" in f["message"] for f in findings)
        assert next(f for f in findings if f["id"] == "sandbox-daemon")["severity"] == "warn"
