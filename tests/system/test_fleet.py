"""The admin's fleet: ``doctor --all-users`` against each user's own ``doctor``, and the metrics through node_exporter.

One machine state with five users in five states — healthy, demoted (root
owns their ``sockets``), hijacked (another user planted their level),
stale (a dead daemon's socket), and another user's link where their level
belongs — plus that other user, built as root in a private mount namespace
with a bound copy of ``/etc/passwd``.  Root's ``--all-users`` must give each
user exactly the verdict that user's own ``doctor --json`` gives, change
nothing, and never resolve a path through the link from root's own process.
The metrics are then served by Debian's real ``prometheus-node-exporter``
(textfile collector, 127.0.0.1 in a private network namespace), read back
over HTTP and passed through ``promtool check metrics``.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import typing as t
from pathlib import Path

import harness
import pytest
from documents import checked

#: Its fixture builds the fleet once a process (about 3 s of CPU): under pytest-xdist the module runs on one
#: worker, not once on each.
pytestmark = pytest.mark.xdist_group("fleet")

REPO = Path(__file__).resolve().parents[2]
BASE = harness._UID_BASE + 10
HEALTHY, DEMOTED, HIJACKED, STALE, LINKED, PEER = (BASE + i for i in range(1, 7))
USERS = {
    HEALTHY: "fleet-healthy",
    DEMOTED: "fleet-demoted",
    HIJACKED: "fleet-hijacked",
    STALE: "fleet-stale",
    LINKED: "fleet-linked",
    PEER: "fleet-peer",
}
IDLE, STRANGER = BASE + 7, BASE + 8  # an account with no state under /tmp/.nx; a uid with neither
RUN_DIR = "0123456789abcdef0123"  # a per-run directory name as Nx hashes one


def _state() -> str:
    """Shell, as root: the five users' states under a root-provisioned /tmp/.nx, and their passwd entries."""
    passwd = "; ".join(
        f"echo '{name}:x:{uid}:{uid}::/home/{name}:/bin/sh' >> /tmp/.passwd"
        for uid, name in {**USERS, IDLE: "fleet-idle"}.items()
    )
    homes = "; ".join(f"install -d -m 0755 -o {uid} -g {uid} /home/{name}" for uid, name in USERS.items())
    return f"""
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs -o mode=0755 tmpfs /home
cp /etc/passwd /tmp/.passwd; {passwd}; mount --bind /tmp/.passwd /etc/passwd
{homes}
install -d -m 1777 -o root -g root /tmp/.nx
install -d -m 0700 -o {HEALTHY} -g {HEALTHY} /tmp/.nx/{HEALTHY} /tmp/.nx/{HEALTHY}/sockets \\
  /tmp/.nx/{HEALTHY}/native-cache
install -d -m 0700 -o {DEMOTED} -g {DEMOTED} /tmp/.nx/{DEMOTED}
install -d -m 0700 -o root -g root /tmp/.nx/{DEMOTED}/sockets
install -d -m 0700 -o {PEER} -g {PEER} /tmp/.nx/{HIJACKED} /tmp/.nx/{PEER} /tmp/.nx/{PEER}/sockets
install -d -m 0700 -o {STALE} -g {STALE} /tmp/.nx/{STALE} /tmp/.nx/{STALE}/sockets /tmp/.nx/{STALE}/sockets/{RUN_DIR}
python3 -c "import socket; socket.socket(socket.AF_UNIX).bind('/tmp/.nx/{STALE}/sockets/{RUN_DIR}/d.sock')"
chown {STALE}:{STALE} /tmp/.nx/{STALE}/sockets/{RUN_DIR}/d.sock; chmod 0600 /tmp/.nx/{STALE}/sockets/{RUN_DIR}/d.sock
touch -d '-10 min' /tmp/.nx/{STALE}/sockets/{RUN_DIR}
install -d -m 0755 -o {PEER} -g {PEER} /tmp/peer-target /tmp/peer-target/sockets /tmp/peer-target/native-cache
ln -s /tmp/peer-target /tmp/.nx/{LINKED}; chown -h {PEER}:{PEER} /tmp/.nx/{LINKED}
cd /
"""


def _nxsock(python: str, pythonpath: str) -> str:
    """``nxsock`` as root with a small clean environment (the one each user's own run gets, but for HOME)."""
    q = shlex.quote
    return (f"env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 PYTHONPATH={q(pythonpath)} "
            f"PYTHONDONTWRITEBYTECODE=1 {q(python)} -m nxsock")


def _as(uid: int, python: str, pythonpath: str) -> str:
    q = shlex.quote
    return (
        f"setpriv --reuid={uid} --regid={uid} --clear-groups env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin "
        f"HOME=/home/{USERS[uid]} LANG=C.UTF-8 PYTHONPATH={q(pythonpath)} PYTHONDONTWRITEBYTECODE=1 "
        f"{q(python)} -m nxsock"
    )


def _sections(text: str) -> dict[str, str]:
    found = {}
    for chunk in text.split("<<<")[1:]:
        name, _, body = chunk.partition("\n")
        found[name.strip()] = body
    return found


def _run(script: str, timeout: float = 240) -> dict[str, str]:
    """*script* as root in private mount, pid and network namespaces (everything it starts ends with it)."""
    marked = 'mark() { rc=$?; printf \'<<<%s\\n%s\\n\' "$1" "$rc"; }\n' + script
    proc = subprocess.run(
        [
            "unshare",
            "-m",
            "-p",
            "-f",
            "-n",
            "--mount-proc",
            "--kill-child",
            "--propagation",
            "private",
            "bash",
            "-c",
            marked,
        ],
        capture_output=True,
        stdin=subprocess.DEVNULL,
        timeout=timeout,
        cwd="/",
    )
    found = _sections(proc.stdout.decode("utf-8", "replace"))
    found["stderr"] = proc.stderr.decode("utf-8", "replace")
    return found


@pytest.fixture(scope="session")  # built once a worker (each worker has its own uids)
def fleet() -> dict[str, str]:
    return _build_fleet()


def _build_fleet() -> dict[str, str]:
    """The state built once: root's --all-users (JSON, text, metrics, under strace), each user's own doctor --json."""
    python, pythonpath = harness.stage_nxsock()
    root = _nxsock(python, pythonpath)
    own = "\n".join(
        f"echo '<<<OWN {uid}'; {_as(uid, python, pythonpath)} doctor --json; mark 'OWNRC {uid}'" for uid in USERS
    )
    script = f"""{_state()}
set +e
echo '<<<TREE'; {harness.SNAPSHOT}
echo '<<<JSON'; {root} doctor --all-users --json; mark JSONRC
echo '<<<TEXT'; {root} doctor --all-users; mark TEXTRC
echo '<<<METRICS'; {root} doctor --all-users --format openmetrics --per-user-metrics; mark METRICSRC
strace -f -qq -o /tmp/.trace -e trace=%file,%desc {root} doctor --all-users >/dev/null 2>&1
echo '<<<ROOTPID'; grep -m1 execve /tmp/.trace | cut -d' ' -f1
echo '<<<TRACE'; grep -v '= -1' /tmp/.trace | grep -E '/tmp/(\\.nx/{LINKED}/|peer-target)'
echo '<<<TREE2'; {harness.SNAPSHOT} | grep -v '/tmp/.trace'
{own}
echo '<<<END'
"""
    return _run(script)


def _document(fleet: dict[str, str]) -> dict[str, t.Any]:
    document = checked(json.loads(fleet["JSON"]), "doctor-all-users")
    for user in document["users"]:
        if user["doctor"] is not None:
            checked(user["doctor"], "doctor")
    return document


def _user(fleet: dict[str, str], uid: int) -> dict[str, t.Any]:
    return next(u for u in _document(fleet)["users"] if u["uid"] == uid)


def _verdict(document: dict[str, t.Any]) -> list[tuple[t.Any, ...]]:
    """A doctor document's verdict: each finding's id, group, severity, path, message and remedy."""
    return [(f["id"], f["group"], f["severity"], f["path"], f["message"], f["remedy"]) for f in document["findings"]]


@pytest.mark.tool("strace")
class TestAllUsers:
    """``doctor --all-users`` is each user's own ``doctor``, for every user with state, and changes nothing."""

    def test_every_user_with_state_is_audited_and_no_other(self, fleet: dict[str, str]) -> None:
        document = _document(fleet)
        assert fleet["JSONRC"].strip() == "0", fleet["stderr"][
            -2000:
        ]  # warnings only: each user falls back to the home
        assert [u["uid"] for u in document["users"]] == sorted(USERS)
        assert document["container"] == {"path": "/tmp/.nx", "state": "ok"}
        assert document["status"] == "warn"
        assert "named" in _user(fleet, HIJACKED)["reasons"] and "owns an entry" in _user(fleet, PEER)["reasons"]
        assert all(u["error"] is None and u["name"] == USERS[u["uid"]] for u in document["users"])

    def test_each_users_verdict_is_that_users_own_doctor(self, fleet: dict[str, str]) -> None:
        """Status, exit code, and every finding — id, group, severity, path and sentence — as the user's own run.

        The remedies are root's to paste (as under ``--user``): one differs only where the user's own is a ``sudo``
        command through a level the user could swap before root pastes it.  (One test for all six users: the state
        is built once, on one worker.)
        """
        differences = {}
        for uid, name in USERS.items():
            own = checked(json.loads(fleet[f"OWN {uid}"]), "doctor")
            user = _user(fleet, uid)
            mine, theirs = _verdict(user["doctor"]), _verdict(own)
            remedies = [(m[5], o[5]) for m, o in zip(mine, theirs, strict=False) if m[5] != o[5]]
            if (user["status"], user["exit_code"], user["doctor"]["daemon"], [v[:5] for v in mine]) != (
                    own["status"], int(fleet[f"OWNRC {uid}"]), own["daemon"], [v[:5] for v in theirs]):
                differences[name] = (user["doctor"], own)
            elif not all(o.startswith("sudo ") for _, o in remedies):
                differences[name] = remedies
        assert differences == {}

    def test_the_states_are_told_apart(self, fleet: dict[str, str]) -> None:
        """Healthy in tier 1; demoted to the home; hijacked and linked refused; the stale socket counted."""
        healthy, demoted, hijacked = _user(fleet, HEALTHY), _user(fleet, DEMOTED), _user(fleet, HIJACKED)
        stale, linked = _user(fleet, STALE), _user(fleet, LINKED)
        assert (healthy["socket_tier"], healthy["demoted"], healthy["stale_entries"]) == ("shared", False, 0)
        assert (demoted["socket_tier"], demoted["demoted"]) == ("home", True)
        assert hijacked["demoted"] and linked["demoted"]
        problems = {
            u["uid"]: {(f["id"], f["severity"], f["path"]) for f in u["doctor"]["findings"]}
            for u in (hijacked, linked, demoted)
        }
        assert ("private-levels", "warn", f"/tmp/.nx/{HIJACKED}") in problems[HIJACKED]
        assert ("private-levels", "warn", f"/tmp/.nx/{LINKED}") in problems[LINKED]
        assert ("private-levels", "warn", f"/tmp/.nx/{DEMOTED}/sockets") in problems[DEMOTED]
        assert linked["stale_entries"] == 0  # nothing beneath another user's link is counted as the user's
        assert stale["stale_entries"] >= 1 and stale["socket_tier"] == "shared"
        assert any(f["id"] == "sockets" and f["severity"] == "warn" for f in stale["doctor"]["findings"])

    def test_nothing_changes(self, fleet: dict[str, str]) -> None:
        assert harness.changed_outside(fleet["TREE"], fleet["TREE2"], ()) == []

    def test_root_never_resolves_a_path_through_another_users_link(self, fleet: dict[str, str]) -> None:
        """Root's own process lists /tmp/.nx by descriptor: no call of it names a path beneath the link or its target.

        The audit as the linked user runs with that user's permissions only; what it may read there, the user can.
        """
        root_pid = fleet["ROOTPID"].strip()
        assert root_pid.isdigit()
        by_root = [line for line in fleet["TRACE"].splitlines() if line.split(" ", 1)[0] == root_pid]
        assert by_root == []

    def test_one_line_per_user(self, fleet: dict[str, str]) -> None:
        lines = fleet["TEXT"].splitlines()
        assert lines[0] == "/tmp/.nx: ok"
        for uid, name in USERS.items():
            (line,) = [x for x in lines if f"uid {uid} ({name})" in x]
            assert line.split()[0] == _user(fleet, uid)["status"]
        assert lines[-1].startswith(f"{len(USERS)} users: ")

    def test_the_metrics_count_the_same_users(self, fleet: dict[str, str]) -> None:
        """The metrics agree with the document: users by status, demoted users, stale entries; uids only as asked."""
        document = _document(fleet)
        samples = _samples(fleet["METRICS"])
        for status in ("ok", "warn", "error", "failed"):
            assert samples[("nxsock_users", (("status", status),))] == sum(
                u["status"] == status for u in document["users"]
            )
        assert samples[("nxsock_users_demoted", ())] == sum(bool(u["demoted"]) for u in document["users"])
        assert samples[("nxsock_stale_entries", ())] == sum(u["stale_entries"] for u in document["users"])
        assert samples[("nxsock_container_state", (("state", "ok"),))] == 1
        assert samples[("nxsock_user_status", (("uid", str(HIJACKED)), ("status", "warn")))] == 1
        assert not any(name in fleet["METRICS"] for name in USERS.values())
        assert "/tmp/" not in "".join(line for line in fleet["METRICS"].splitlines() if not line.startswith("#"))


_SAMPLE = re.compile(r"^([a-z_:][a-z0-9_:]*)(?:\{(.*)\})? (\S+)$")
_LABEL = re.compile(r'([a-z_][a-z0-9_]*)="((?:[^"\\]|\\.)*)"')


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    found = {}
    for line in text.splitlines():
        match = _SAMPLE.match(line)
        if match and not line.startswith("#"):
            found[(match[1], tuple(_LABEL.findall(match[2] or "")))] = float(match[3])
    return found


@pytest.mark.tool("prometheus-node-exporter", "promtool", "ip", "curl")
def test_node_exporter_serves_the_metrics_and_promtool_passes_them() -> None:
    """Debian's node_exporter, textfile collector only, on 127.0.0.1 in a private network namespace.

    Both files nxsock writes (``doctor --all-users`` and ``provision --check``) lie in one directory; the
    scrape has no textfile error, carries nxsock's families, and ``promtool check metrics`` passes the scrape
    and each file.
    """
    python, pythonpath = harness.stage_nxsock()
    root = _nxsock(python, pythonpath)
    dir_ = "/tmp/textfile"
    script = f"""{_state()}
set +e
ip link set lo up
install -d -m 0755 {dir_}
{root} doctor --all-users --format openmetrics --output {dir_}/nxsock.prom; mark DOCTORRC
{root} provision --check --format openmetrics --output {dir_}/nxsock-provision.prom; mark PROVISIONRC
echo '<<<FILE'; cat {dir_}/nxsock.prom
echo '<<<MODE'; stat -c '%a %U' {dir_}/nxsock.prom; ls -a {dir_}
prometheus-node-exporter --web.listen-address=127.0.0.1:9100 --collector.disable-defaults --collector.textfile \\
  --collector.textfile.directory={dir_} >/tmp/.exporter.log 2>&1 &
for _ in $(seq 1000); do curl -fsS -o /tmp/.scrape http://127.0.0.1:9100/metrics 2>/dev/null && break; sleep 0.01; done
echo '<<<SCRAPE'; cat /tmp/.scrape
echo '<<<PROMTOOL'; promtool check metrics < /tmp/.scrape 2>&1; mark PROMTOOLRC
echo '<<<PROMTOOLFILES'; for f in {dir_}/*.prom; do promtool check metrics < $f 2>&1; echo "rc=$? $f"; done
echo '<<<LOG'; cat /tmp/.exporter.log
echo '<<<END'
"""
    out = _run(script)
    scrape = out.get("SCRAPE", "")
    samples = _samples(scrape)
    assert samples.get(("node_textfile_scrape_error", ())) == 0.0, out.get("LOG", "") + out["stderr"][-2000:]
    assert out["DOCTORRC"].strip() == "0" and out["PROVISIONRC"].strip() == "0", out["stderr"][-2000:]
    assert out["MODE"].splitlines()[0] == "644 root"
    assert sorted(out["MODE"].split()[2:]) == [".", "..", "nxsock-provision.prom", "nxsock.prom"]  # no temporary left
    assert samples[("nxsock_users", (("status", "warn"),))] == 6
    assert samples[("nxsock_users_demoted", ())] == 3
    assert samples[("nxsock_container_state", (("state", "ok"),))] == 1
    assert samples[("nxsock_provision_pending_steps", ())] == 0
    assert samples[("nxsock_findings", (("id", "private-levels"), ("severity", "warn")))] == 3
    assert ("nxsock_build_info", (("version", "unknown"),)) in samples  # the staged copy has no package metadata
    assert out["PROMTOOLRC"].strip() == "0" and out["PROMTOOL"].strip() == "", out["PROMTOOL"]
    assert [line.split()[0] for line in out["PROMTOOLFILES"].splitlines()] == ["rc=0", "rc=0"], out["PROMTOOLFILES"]


@pytest.mark.tool("systemd-analyze")
def test_the_systemd_units_verify() -> None:
    """``systemd-analyze verify`` accepts the service and the timer, with nxsock where the units expect it."""
    units = REPO / "contrib" / "systemd"
    script = f"""set -e
mount -t tmpfs tmpfs /usr/local/bin
printf '#!/bin/sh\\n' > /usr/local/bin/nxsock; chmod 0755 /usr/local/bin/nxsock
echo '<<<VERIFY'
systemd-analyze verify --man=no {units}/nxsock-metrics.service {units}/nxsock-metrics.timer 2>&1; mark RC
"""
    out = _run(script)
    assert out.get("RC", "").strip() == "0", out
    assert out["VERIFY"].strip() == "", out["VERIFY"]


#: Run as a user: stop (SIGSTOP) the first process of this uid whose command line is an nxsock doctor — root's
#: child once it has become this user — then exit; the file named next is created after the first scan of /proc.
STOPPER = """
import os, signal, sys, time
me, ready, end = str(os.getuid()), sys.argv[1], time.time() + 20
while time.time() < end:
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            cmdline = open(f"/proc/{pid}/cmdline", "rb").read()
            status = open(f"/proc/{pid}/status").read()
        except OSError:
            continue
        uids = next((line.split()[1:] for line in status.splitlines() if line.startswith("Uid:")), [])
        if b"nxsock" in cmdline and b"doctor" in cmdline and uids[:1] == [me]:
            os.kill(int(pid), signal.SIGSTOP)
            sys.exit(0)
    if ready and not os.path.exists(ready):
        open(ready, "w").close()
"""


def test_a_user_who_stops_their_audit_is_reported_and_the_others_are_audited() -> None:
    """The stale user stops root's child audit: that user is ``failed`` with the reason, every other user is judged,
    stdout holds one document, and the exit is 1."""
    python, pythonpath = harness.stage_nxsock()
    root = _nxsock(python, pythonpath)
    q = shlex.quote
    stopper = (
        f"setpriv --reuid={STALE} --regid={STALE} --clear-groups {q(python)} -c {q(STOPPER)} /tmp/.stopper-ready "
        f">/dev/null 2>&1 & for _ in $(seq 1000); do [ -e /tmp/.stopper-ready ] && break; sleep 0.01; done"
    )
    out = _run(f"""{_state()}
set +e
{stopper}
echo '<<<JSON'; {root} doctor --all-users --json; mark RC
echo '<<<END'
""")
    assert out["RC"].strip() == "1", out["stderr"][-2000:]
    document = checked(json.loads(out["JSON"]), "doctor-all-users")
    by_uid = {u["uid"]: u for u in document["users"]}
    assert by_uid[STALE]["status"] == "failed" and by_uid[STALE]["doctor"] is None
    assert f"the audit as uid {STALE} was stopped by SIGSTOP" in by_uid[STALE]["error"]
    assert all(u["status"] == "warn" and u["error"] is None for uid, u in by_uid.items() if uid != STALE)
    assert document["status"] == "failed"


def test_users_adds_uids_and_the_accounts_of_a_range_and_user_gives_one_users_metrics() -> None:
    """``--users`` audits a uid named even without state or account, and a range's passwd accounts; ``--user UID
    --format openmetrics`` is that one user's audit as metrics."""
    python, pythonpath = harness.stage_nxsock()
    root = _nxsock(python, pythonpath)
    out = _run(f"""{_state()}
set +e
echo '<<<JSON'; {root} doctor --all-users --users {STRANGER},{BASE + 7}-{BASE + 9} --json; mark RC
echo '<<<ONE'; {root} doctor --user {HIJACKED} --format openmetrics; mark ONERC
echo '<<<END'
""")
    assert out["RC"].strip() == "0", out["stderr"][-2000:]
    by_uid = {u["uid"]: u for u in checked(json.loads(out["JSON"]), "doctor-all-users")["users"]}
    assert sorted(by_uid) == sorted([*USERS, IDLE, STRANGER])  # BASE + 9: in the range, but no account and no state
    assert by_uid[IDLE]["reasons"] == ["asked"] and by_uid[IDLE]["name"] == "fleet-idle"
    assert by_uid[STRANGER]["reasons"] == ["asked"] and by_uid[STRANGER]["name"] is None
    assert by_uid[IDLE]["socket_tier"] == "shared" and by_uid[IDLE]["status"] == "warn"
    samples = _samples(out["ONE"])
    assert out["ONERC"].strip() == "0"
    assert samples[("nxsock_users", (("status", "warn"),))] == 1 and samples[("nxsock_users_demoted", ())] == 1
    assert samples[("nxsock_findings", (("id", "private-levels"), ("severity", "warn")))] == 1
