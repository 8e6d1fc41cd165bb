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


def test_the_umask_is_read_where_proc_shows_none() -> None:
    """Where ``/proc/self/status`` has no ``Umask:`` line (no /proc mounted, a kernel before 4.7, gVisor) the umask is
    the process's own, not a guess of 0022: a real mount namespace with an empty /proc, a real umask of 0277, and
    ``Permission denied (os error 13)`` gets ``umask 0077`` as it does with /proc.

    nxsock runs from the staged copy (outside ``/tmp``): a checkout under ``/tmp`` is hidden by the fresh ``/tmp``."""
    import shlex
    import subprocess

    from harness import stage_nxsock

    python, pythonpath = stage_nxsock()
    text = " NX   Permission denied (os error 13)"
    nxsock = (f"PYTHONPATH={shlex.quote(pythonpath)} {shlex.quote(python)} -m nxsock doctor --nx-version 24.0.6 --json "
              f"--explain {shlex.quote(text)}")
    remedies = []
    for hide in ("true", "mount -t tmpfs -o mode=0555 none /proc"):
        script = f"set -e; mount -t tmpfs -o mode=1777 none /tmp; mkdir /tmp/ws; echo '{{}}' > /tmp/ws/nx.json; " \
                 f"cd /tmp/ws; {hide}; umask 0277; {nxsock}"
        proc = subprocess.run(["unshare", "-m", "--propagation", "private", "bash", "-c", script], cwd="/",
                              capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60)
        assert "Traceback" not in proc.stderr and proc.stdout, (proc.returncode, proc.stderr)
        remedies.append(json.loads(proc.stdout)["messages"][0]["remedy"])
    assert remedies == ["umask 0077", "umask 0077"], remedies


def test_a_peers_link_on_the_path_hides_no_umask_and_is_never_looked_through() -> None:
    """A peer's link at /tmp/.nx/<uid> to a directory of the user's holding 0500 ``sockets``: the levels listed for
    ``Permission denied (os error 13)`` under a real umask of 0277 are not read through the link (so nothing beneath
    it is named), and the umask, the cause, is still answered."""
    from harness import PEER, USER, run_as_user

    home, text = f"/home/u{USER}", " NX   Permission denied (os error 13)"
    keep = f"{home}/keep"
    setup = (f"install -d -o {USER} {home}/ws; echo '{{}}' > {home}/ws/nx.json; install -d -m 1777 /tmp/.nx; "
             f"install -d -m 0500 -o {USER} {keep} {keep}/sockets {keep}/sockets/aa {keep}/native-cache; "
             f"ln -s {keep} /tmp/.nx/{USER}; chown -h {PEER} /tmp/.nx/{USER}; umask 0277")
    run = run_as_user(setup, ["doctor", "--nx-version", "24.0.6", "--json", "--explain", text], cwd=f"{home}/ws")
    [message] = json.loads(run.stdout)["messages"]
    assert (message["remedy"] or "").startswith("umask 0077"), message
    assert f"/tmp/.nx/{USER}/" not in (message["remedy"] or "") + (message["hint"] or ""), message
    assert run.tree_before == run.tree_after
