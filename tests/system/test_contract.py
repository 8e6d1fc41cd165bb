"""The JSON contract, one test per documented key: docs/json.md's "JSON contract" section, key by key.

Every key docs/json.md documents must be in the document every time, ``null``
where it does not apply (docs/behaviour.md#json-documents).  Each document is taken from a real run as
the test uid in a private mount namespace, over a state where the key's
objects exist (a refusal, a daemon record, entries removed and kept), so that
a key inside a list is checked on real elements, never on an empty list.
"""

from __future__ import annotations

import hashlib
import re
import typing as t
from pathlib import Path

import pytest
from documents import parsed
from harness import PEER, USER, run_as_user

#: Its module fixture builds the states once: under pytest-xdist the module runs on one worker.
pytestmark = pytest.mark.xdist_group("contract")



README = (
    Path(__file__).resolve().parents[2] / "docs" / "json.md"
).read_text()  # the JSON contract, moved from the README
HOME = f"/home/u{USER}"
WS = f"{HOME}/ws"
D = f"{WS}/.nx/workspace-data/d"
BINDING_DIR = f"{WS}/node_modules/@nx/nx-linux-x64-gnu"

WORKSPACE = f"""
install -d -o {USER} -g {USER} {WS} {WS}/node_modules/nx {BINDING_DIR} {WS}/.nx {WS}/.nx/workspace-data {D}
echo '{{}}' > {WS}/nx.json
echo '{{"version": "24.0.6"}}' > {WS}/node_modules/nx/package.json
head -c 4096 /dev/zero > {BINDING_DIR}/nx.linux-x64-gnu.node
"""
#: Entries for reset (removed: a dead per-run directory and the marker; kept: a peer's entry), a daemon record,
#: cache entries for list and prune (this checkout's old version's, removed: keyed by this binding's path).
STATE = (
    WORKSPACE
    + f"""
install -d -m 1777 /tmp/.nx
install -d -m 0700 -o {USER} -g {USER} /tmp/.nx/{USER} /tmp/.nx/{USER}/sockets /tmp/.nx/{USER}/native-cache \
    /tmp/.nx/{USER}/native-cache/24.0.6 /tmp/.nx/{USER}/native-cache/23.3.2
install -d -m 0700 -o {USER} /tmp/.nx/{USER}/sockets/0123456789abcdef0123
install -d -m 0700 -o {PEER} /tmp/.nx/{USER}/sockets/fedcba9876543210fedc
touch -t 202001010000 /tmp/.nx/{USER}/sockets/*
key=$(python3 -c 'import hashlib,sys; print(hashlib.sha256(sys.argv[1].encode()).hexdigest()[:12])' \
      {BINDING_DIR}/nx.linux-x64-gnu.node)
head -c 100 /dev/zero > /tmp/.nx/{USER}/native-cache/23.3.2/23.3.2-$key-nx.linux-x64-gnu.node
chown -R {USER}:{USER} /tmp/.nx/{USER}/native-cache
echo 'went away' > {D}/disabled
echo '{{"processId": 999999, "socketPath": "/tmp/.nx/{USER}/sockets/0123456789abcdef0123/d.sock", \
"nxVersion": "24.0.6"}}' \
    > {D}/server-process.json
chown -R {USER}:{USER} {WS}/.nx
"""
)
PEER_CONTAINER = WORKSPACE + f"install -d -m 1777 -o {PEER} /tmp/.nx; chown -R {USER}:{USER} {WS}/.nx"


def _run(setup: str, *args: str, env: dict[str, str] | None = None) -> dict[str, t.Any]:
    result = run_as_user(setup, list(args), env=env, cwd=WS)
    assert result.returncode in (0, 1, 73, 78), (result.returncode, result.stderr)
    return parsed(result.stdout, list(args))


@pytest.fixture(scope="module")
def documents() -> dict[str, dict[str, t.Any]]:
    """One real document of each kind (the JSON is the same whatever the terminal: it goes to a pipe here)."""
    return {
        "paths": _run(STATE, "paths", "--json"),
        "paths-refused": _run(PEER_CONTAINER, "paths", "--json"),
        "paths-invalid": _run(WORKSPACE, "paths", "--json", env={"NX_SOCKET_DIR": "/tmp"}),
        "check-root": _run(PEER_CONTAINER, "check-root", "--json"),
        "doctor": _run(STATE, "doctor", "--json"),
        "doctor-explain": _run(STATE, "doctor", "--json", "--explain", "connect EACCES /tmp/.nx/1/sockets/x/d.sock"),
        "reset": _run(STATE, "reset", "--json", "--daemon-marker"),
        "cache-path": _run(STATE, "cache", "path", "--json"),
        "cache-list": _run(STATE, "cache", "list", "--json"),
        "cache-verify": _run(STATE, "cache", "verify", "--json"),
        "cache-prune": _run(STATE, "cache", "prune", "--json"),
        "provision": _run("", "provision", "--json", "--dry-run"),
    }


SOCKET = ["tier", "root", "dir", "path", "pattern", "length", "too_long", "budget_left", "windows_max_username",
          "attempted_dir", "refusals", "failure", "placed"]
REFUSAL = ["kind", "dir", "uid", "mode", "errno", "symlink", "message", "remedy", "hint"]

#: (document, dotted key path): ``a.b`` a key of an object, ``a[].b`` a key of every element of a (non-empty) list.
DOCUMENTED: list[tuple[str, str]] = [
    *[
        ("paths", k)
        for k in [
            "schema_version",
            "platform",
            "uid",
            "workspace_root",
            "workspace_source",
            "nx_version",
            "nx_version_source",
            "layout",
            "generation",
            "layout_assumed",
            "variables",
        ]
    ],
    *[
        ("paths", f"socket_root.{k}")
        for k in ["tier", "root", "demoted_from", "refused_configured_dir", "invalid", "refusals", "failure"]
    ],
    *[
        ("paths-invalid", f"socket_root.invalid.{k}")
        for k in ["reason", "dir", "variable", "source", "message", "remedy", "hint"]
    ],
    *[("paths-refused", f"socket_root.refusals[].{k}") for k in REFUSAL],
    *[("paths", f"sockets.{kind}.{k}") for kind in ("daemon", "forked", "plugin", "console") for k in SOCKET],
    *[("paths", f"sockets.daemon.{k}") for k in ["recorded", "alive", "answers"]],
    ("paths", "sockets.plugin.id_budget"),
    *[("paths", f"native_cache.{k}") for k in ["dir", "bypass_reason", "configured", "refusals"]],
    *[("paths", f"workspace_data.{k}") for k in ["dir", "daemon_dir", "source", "untrusted_reason", "refused"]],
    *[
        ("paths", f"daemon_record.{k}")
        for k in ["file", "pid", "socket_path", "nx_version", "alive", "connect", "problem", "client_refusal"]
    ],
    *[
        ("paths", f"user_namespace_sandbox.{k}")
        for k in [
            "inside",
            "client_checks_socket_ancestry",
            "daemon_usable",
            "refusal",
            "message",
            "run_inside",
            "marker",
            "marker_warning",
            "clear_marker",
        ]
    ],
    *[("paths", f"actions[].{k}") for k in ["verb", "path", "mode"]],
    *[("paths", f"allowlist.{k}") for k in ["write", "unix_sockets"]],
    *[("check-root", k) for k in ["schema_version", "path", "safe", "state", "refusal", "provision_command"]],
    *[("doctor", k) for k in ["schema_version", "status", "findings"]],
    *[
        ("doctor", f"findings[].{k}")
        for k in ["id", "group", "severity", "path", "message", "remedy", "hint", "detail"]
    ],
    *[
        ("doctor-explain", k)
        for k in [
            "matched",
            "errno",
            "path",
            "cause",
            "remedy",
            "remedy_source",
            "hint",
            "recognised",
            "messages",
            "truncated",
            "messages_left_off",
        ]
    ],
    *[
        ("doctor-explain", f"messages[].{k}")
        for k in ["matched", "errno", "path", "cause", "remedy", "remedy_source", "hint", "finding"]
    ],
    *[
        ("reset", k)
        for k in ["schema_version", "dry_run", "interrupted", "marker_reason", "removed", "kept", "failed", "freed"]
    ],
    *[("reset", f"removed[].{k}") for k in ["path", "what", "reason", "freed"]],
    *[("reset", f"kept[].{k}") for k in ["path", "what", "reason"]],
    *[("cache-path", k) for k in ["schema_version", "dir", "bypass_reason"]],
    *[("cache-list", k) for k in ["schema_version", "dir", "bypass_reason", "binding", "entries"]],
    *[
        ("cache-list", f"entries[].{k}")
        for k in ["path", "version", "binding", "size", "trusted", "fresh", "in_use", "partial"]
    ],
    *[("cache-verify", k) for k in ["schema_version", "state", "entry", "message", "remedy"]],
    *[("cache-prune", k) for k in ["schema_version", "dry_run", "interrupted", "removed", "failed", "kept", "freed"]],
    *[("cache-prune", f"removed[].{k}") for k in ["path", "reason", "freed"]],
    *[("provision", k) for k in ["schema_version", "as_root", "dry_run", "changed", "steps", "refusal"]],
    *[("provision", f"steps[].{k}") for k in ["verb", "path", "mode", "done"]],
]


def _values(document: t.Any, path: str) -> list[t.Any]:
    """Every object the key path's last key must be in; a list on the way must have elements."""
    holders = [document]
    *parents, _ = path.split(".")
    for part in parents:
        listed = part.endswith("[]")
        name = part[:-2] if listed else part
        next_holders = []
        for holder in holders:
            assert isinstance(holder, dict) and name in holder, f"{name!r} missing on the way to {path}"
            value = holder[name]
            if listed:
                assert isinstance(value, list) and value, f"{name} is empty: the state must give it elements"
                next_holders += value
            else:
                assert isinstance(value, dict), f"{name} is {value!r}, not an object"
                next_holders.append(value)
        holders = next_holders
    return holders


@pytest.mark.parametrize(("document", "key"), DOCUMENTED, ids=[f"{d}:{k}" for d, k in DOCUMENTED])
def test_every_documented_key_is_present(documents: dict[str, dict[str, t.Any]], document: str, key: str) -> None:
    leaf = key.rsplit(".", 1)[-1]
    for holder in _values(documents[document], key):
        assert leaf in holder, f"{document}: {key} is missing"


@pytest.mark.parametrize(("document", "key"), DOCUMENTED, ids=[f"{d}:{k}" for d, k in DOCUMENTED])
def test_every_tested_key_is_documented(document: str, key: str) -> None:
    """docs/json.md names each key this suite pins, so the two cannot drift apart."""
    section = README.split("## The JSON contract", 1)[1].split("\n## ", 1)[0]
    assert re.search(rf"`{re.escape(key.rsplit('.', 1)[-1])}`|\b{re.escape(key.rsplit('.', 1)[-1])}\b", section), key


def test_every_document_is_schema_version_1(documents: dict[str, dict[str, t.Any]]) -> None:
    assert {name: doc["schema_version"] for name, doc in documents.items()} == dict.fromkeys(documents, 1)


def test_modes_are_four_octal_digits_and_errnos_names(documents: dict[str, dict[str, t.Any]]) -> None:
    refusal = documents["paths-refused"]["socket_root"]["refusals"][0]
    assert refusal["uid"] == PEER and refusal["kind"] == "foreign-shared-container"
    assert all(re.fullmatch(r"[0-7]{4}", a["mode"]) for a in documents["paths"]["actions"])
    assert documents["paths"]["daemon_record"]["connect"] == "ENOENT"


def test_the_cache_dir_is_null_when_nx_loads_the_binding_in_place() -> None:
    """docs/json.md: ``native_cache.dir`` is ``null`` when Nx loads in place, even when a refused directory was
    configured."""
    document = _run(WORKSPACE, "paths", "--json", env={"NX_NATIVE_FILE_CACHE_DIRECTORY": "/tmp"})
    assert document["native_cache"]["bypass_reason"] is not None
    assert document["native_cache"]["dir"] is None
    cache = _run(WORKSPACE, "cache", "path", "--json", env={"NX_NATIVE_FILE_CACHE_DIRECTORY": "/tmp"})
    assert cache["dir"] is None and cache["bypass_reason"] == document["native_cache"]["bypass_reason"]


def test_reset_and_prune_report_what_they_removed(documents: dict[str, dict[str, t.Any]]) -> None:
    reset = documents["reset"]
    assert reset["interrupted"] is False and reset["marker_reason"] == "went away"
    # a dead daemon's record goes too: its pid is gone, and doctor's warning about it would never clear
    assert {r["what"] for r in reset["removed"]} == {"per-run directory", "daemon marker", "daemon record"}
    assert [k["path"] for k in reset["kept"]] == [f"/tmp/.nx/{USER}/sockets/fedcba9876543210fedc"]
    prune = documents["cache-prune"]
    key = hashlib.sha256(f"{BINDING_DIR}/nx.linux-x64-gnu.node".encode()).hexdigest()[:12]
    assert [r["path"].rsplit("/", 1)[1] for r in prune["removed"]] == [f"23.3.2-{key}-nx.linux-x64-gnu.node"]
    assert prune["freed"] == sum(r["freed"] for r in prune["removed"]) > 0
