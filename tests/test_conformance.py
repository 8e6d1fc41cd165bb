"""nxsock agrees with the real Nx, state by state.

Each scenario builds a filesystem state in a private mount namespace; an
unprivileged user runs ``nxsock paths --json`` first, then Nx's own resolver,
on the same state.  Their answers must agree on the socket directory and tier
of every kind, demotion, the refused configured directory, the invalid
reason, the too-long flags, the native-cache directory and the exit code —
and ``paths`` must leave the tree exactly as it found it.
"""

from __future__ import annotations

import re
import typing as t

import pytest
from harness import (
    PEER,
    USER,
    Outcome,
    Scenario,
    missing_node,
    missing_privileges,
    missing_readable_python,
    run_scenario,
)

pytestmark = [
    pytest.mark.oracle,
    pytest.mark.skipif(missing_privileges() is not None, reason=str(missing_privileges())),
    pytest.mark.skipif(missing_node() is not None, reason=str(missing_node())),
    pytest.mark.skipif(missing_readable_python() is not None, reason=str(missing_readable_python())),
]

U, P = USER, PEER
HOME = f"/home/u{U}"
LONG = "x" * 83  # /tmp/ + 83 = 88 characters; + /d.sock = 95

SCENARIOS = [
    Scenario("fresh machine"),
    Scenario("root-provisioned container", "install -d -m 1777 -o root -g root /tmp/.nx"),
    Scenario("container owned by the user, as after a first run", f"install -d -m 1777 -o {U} -g {U} /tmp/.nx"),
    Scenario("container owned by a peer demotes to home", f"install -d -m 1777 -o {P} -g {P} /tmp/.nx"),
    Scenario("peer container and no HOME falls back to the workspace", f"install -d -m 1777 -o {P} /tmp/.nx", {"HOME": None}),
    Scenario("peer container and an empty HOME", f"install -d -m 1777 -o {P} /tmp/.nx", {"HOME": ""}),
    Scenario("peer container and a relative HOME", f"install -d -m 1777 -o {P} /tmp/.nx", {"HOME": "rel/home"}),
    Scenario("HOME=/tmp is never a second tier", f"install -d -m 1777 -o {P} /tmp/.nx", {"HOME": "/tmp"}),
    Scenario("HOME that does not exist yet", f"install -d -m 1777 -o {P} /tmp/.nx", {"HOME": "/tmp/new-home"}),
    Scenario("container is a symlink planted by a peer", f"mkdir /tmp/elsewhere; chown {P} /tmp/elsewhere; ln -s /tmp/elsewhere /tmp/.nx; chown -h {P} /tmp/.nx"),
    Scenario("container is a FIFO", "mkfifo -m 666 /tmp/.nx"),
    Scenario("container is a regular file", "echo precious > /tmp/.nx"),
    Scenario("container 0777 without the sticky bit", "install -d -m 0777 -o root /tmp/.nx"),
    Scenario("container 0755 owned by root", "install -d -m 0755 -o root /tmp/.nx"),
    Scenario("per-user directory planted by a peer", f"install -d -m 1777 /tmp/.nx; install -d -m 0700 -o {P} /tmp/.nx/{U}"),
    Scenario("per-user directory 0755 is tightened", f"install -d -m 1777 /tmp/.nx; install -d -m 0755 -o {U} /tmp/.nx/{U}"),
    Scenario("per-user directory is a file", f"install -d -m 1777 /tmp/.nx; echo x > /tmp/.nx/{U}; chown {U} /tmp/.nx/{U}"),
    Scenario("sockets directory is the user's own symlink", f"install -d -m 1777 /tmp/.nx; install -d -m 0700 -o {U} /tmp/.nx/{U} /tmp/real; ln -s /tmp/real /tmp/.nx/{U}/sockets; chown -h {U} /tmp/.nx/{U}/sockets"),
    Scenario("plugin leaf planted: only plugins fall back", f"install -d -m 1777 /tmp/.nx; install -d -m 0700 -o {U} /tmp/.nx/{U} /tmp/.nx/{U}/sockets; install -d -m 0700 -o {P} /tmp/.nx/{U}/sockets/b011ea26", cwd=None),
    Scenario("home .nx owned by a peer with a peer container", f"install -d -m 1777 -o {P} /tmp/.nx; install -d -m 0700 -o {P} {HOME}/.nx"),
    Scenario("HOME beneath a peer's directory", f"install -d -m 1777 -o {P} /tmp/.nx; install -d -m 0755 -o {P} /home/peer; install -d -o {U} /home/peer/u", {"HOME": "/home/peer/u"}),
    Scenario("HOME beneath a world-writable directory", f"install -d -m 1777 -o {P} /tmp/.nx; install -d -m 0777 /home/ww; install -d -o {U} /home/ww/u", {"HOME": "/home/ww/u"}),
    Scenario("HOME beneath a sticky world-writable directory", f"install -d -m 1777 -o {P} /tmp/.nx; install -d -m 1777 /home/st; install -d -o {U} /home/st/u", {"HOME": "/home/st/u"}),
    Scenario("/tmp itself 0777 without sticky", "chmod 0777 /tmp"),
    Scenario("/tmp owned by a peer", f"chown {P} /tmp"),
    Scenario("read-only /tmp demotes to home", after="mount -o remount,ro /tmp"),
    Scenario("read-only /tmp with an existing 0755 per-user directory", f"install -d -m 1777 /tmp/.nx; install -d -m 0755 -o {U} /tmp/.nx/{U}", after="mount -o remount,ro /tmp"),
    Scenario("mode 0700 container owned by root", "install -d -m 0700 -o root /tmp/.nx"),
    Scenario("NX_SOCKET_DIR empty counts as unset", env={"NX_SOCKET_DIR": ""}),
    Scenario("NX_SOCKET_DIR relative to the current directory", env={"NX_SOCKET_DIR": "socks"}),
    Scenario("NX_SOCKET_DIR with a trailing slash", env={"NX_SOCKET_DIR": "/tmp/mysock/"}),
    Scenario("NX_SOCKET_DIR with ..", env={"NX_SOCKET_DIR": "/tmp/a/../b/c"}),
    Scenario("NX_SOCKET_DIR aliasing /tmp through a symlink", "ln -s /tmp /tmp/alias", {"NX_SOCKET_DIR": "/tmp/alias"}),
    Scenario("NX_SOCKET_DIR is /tmp", env={"NX_SOCKET_DIR": "/tmp"}),
    Scenario("NX_SOCKET_DIR is the absent container", env={"NX_SOCKET_DIR": "/tmp/.nx"}),
    Scenario("NX_SOCKET_DIR is the provisioned container", "install -d -m 1777 /tmp/.nx", {"NX_SOCKET_DIR": "/tmp/.nx/"}),
    Scenario("NX_SOCKET_DIR is the per-user root", env={"NX_SOCKET_DIR": f"/tmp/.nx/{U}"}),
    Scenario("NX_SOCKET_DIR is ~/.nx/sockets", env={"NX_SOCKET_DIR": f"{HOME}/.nx/sockets"}),
    Scenario("NX_SOCKET_DIR is the native cache root", env={"NX_SOCKET_DIR": f"/tmp/.nx/{U}/native-cache"}),
    Scenario("NX_SOCKET_DIR nested beneath the container is fine", env={"NX_SOCKET_DIR": f"/tmp/.nx/{U}/sockets/mine"}),
    Scenario("NX_SOCKET_DIR under a peer's directory is refused", f"install -d -m 0755 -o {P} /tmp/peer", {"NX_SOCKET_DIR": "/tmp/peer/socks"}),
    Scenario("NX_SOCKET_DIR squatted by a peer", f"install -d -m 0700 -o {P} /tmp/squat", {"NX_SOCKET_DIR": "/tmp/squat"}),
    Scenario("NX_DAEMON_SOCKET_DIR alone", env={"NX_DAEMON_SOCKET_DIR": "/tmp/daemon-socks"}),
    Scenario("NX_SOCKET_DIR wins over NX_DAEMON_SOCKET_DIR", env={"NX_SOCKET_DIR": "/tmp/first", "NX_DAEMON_SOCKET_DIR": "/tmp/second"}),
    Scenario("NX_SOCKET_DIR set only in .env", "printf 'NX_SOCKET_DIR=/tmp/from-dotenv\\n' > /tmp/ws/.env", {}),
    Scenario("the environment wins over .env", "printf 'NX_SOCKET_DIR=/tmp/from-dotenv\\n' > /tmp/ws/.env", {"NX_SOCKET_DIR": "/tmp/from-env"}),
    Scenario("95-character configured socket path fits", env={"NX_SOCKET_DIR": "/tmp/" + LONG}),
    Scenario("96-character configured socket path is too long", env={"NX_SOCKET_DIR": "/tmp/" + LONG + "y"}),
    Scenario("95 characters in the workspace fallback", f"install -d -m 1777 -o {P} /tmp/.nx", {"HOME": None}, workspace="/tmp/" + "w" * 62),
    Scenario("96 characters in the workspace fallback", f"install -d -m 1777 -o {P} /tmp/.nx", {"HOME": None}, workspace="/tmp/" + "w" * 63),
    Scenario("a long home makes plugin and console paths too long", f"install -d -m 1777 -o {P} /tmp/.nx; install -d -o {U} /home/" + "h" * 60, {"HOME": "/home/" + "h" * 60}),
    Scenario("unicode workspace path", workspace="/tmp/wörk-späce-ÜNÏ"),
    Scenario("mixed-case workspace path", workspace="/tmp/My-Workspace"),
    Scenario("workspace fallback with a unicode path", f"install -d -m 1777 -o {P} /tmp/.nx", {"HOME": None}, workspace="/tmp/" + "ü" * 30),
    Scenario("NX_WORKSPACE_DATA_DIRECTORY relative, in the fallback", f"install -d -m 1777 -o {P} /tmp/.nx", {"HOME": None, "NX_WORKSPACE_DATA_DIRECTORY": "data"}),
    Scenario("workspace fallback refused too", f"install -d -m 1777 -o {P} /tmp/.nx; install -d -m 0755 -o {P} /tmp/ws/.nx", {"HOME": None}),
    Scenario("native cache planted by a peer", f"install -d -m 1777 /tmp/.nx; install -d -m 0700 -o {U} /tmp/.nx/{U}; install -d -m 0700 -o {P} /tmp/.nx/{U}/native-cache"),
    Scenario("NX_NATIVE_FILE_CACHE_DIRECTORY configured", env={"NX_NATIVE_FILE_CACHE_DIRECTORY": "/tmp/bincache/nested"}),
    Scenario("NX_SKIP_NATIVE_FILE_CACHE=true", env={"NX_SKIP_NATIVE_FILE_CACHE": "true"}),
    Scenario("TMPDIR names a missing directory", env={"TMPDIR": "/tmp/claude"}),
    Scenario("TMPDIR missing and no HOME", "install -d -m 1777 /tmp/.nx", {"TMPDIR": "/tmp/claude", "HOME": None}),
    Scenario("subdirectory of the workspace finds the root by nx.json", f"install -d -o {USER} /tmp/ws/apps/one", cwd="/tmp/ws/apps/one"),
    Scenario("sockets directory is a FIFO", f"install -d -m 1777 /tmp/.nx; install -d -m 0700 -o {U} /tmp/.nx/{U}; mkfifo /tmp/.nx/{U}/sockets; chown {U} /tmp/.nx/{U}/sockets"),
    Scenario("sockets directory 0750 is tightened", f"install -d -m 1777 /tmp/.nx; install -d -m 0700 -o {U} /tmp/.nx/{U}; install -d -m 0750 -o {U} /tmp/.nx/{U}/sockets"),
    Scenario("home sockets planted by a peer", f"install -d -m 1777 -o {P} /tmp/.nx; install -d -m 0700 -o {U} {HOME}/.nx; install -d -m 0700 -o {P} {HOME}/.nx/sockets"),
    Scenario("HOME with a trailing slash", f"install -d -m 1777 -o {P} /tmp/.nx", {"HOME": HOME + "/"}),
    Scenario("HOME through a symlink of root's", f"install -d -m 1777 -o {P} /tmp/.nx; ln -s {HOME} /home/alias", {"HOME": "/home/alias"}),
    Scenario("HOME through a symlink of a peer's", f"install -d -m 1777 -o {P} /tmp/.nx; ln -s {HOME} /home/alias; chown -h {P} /home/alias", {"HOME": "/home/alias"}),
    Scenario("configured directory exists 0755 and is tightened", f"install -d -m 0755 -o {U} /tmp/mine", {"NX_SOCKET_DIR": "/tmp/mine"}),
    Scenario("configured directory is a FIFO", f"mkfifo /tmp/fifo; chown {U} /tmp/fifo", {"NX_SOCKET_DIR": "/tmp/fifo"}),
    Scenario("configured directory through the user's own symlink", f"install -d -m 0700 -o {U} /tmp/real; ln -s /tmp/real /tmp/link; chown -h {U} /tmp/link", {"NX_SOCKET_DIR": "/tmp/link/socks"}),
    Scenario("configured directory on a read-only mount", f"install -d -m 0755 -o {U} /tmp/ro", {"NX_SOCKET_DIR": "/tmp/ro/socks"}, after="mount --bind -o ro /tmp/ro /tmp/ro"),
    Scenario("configured directory aliasing the container through a symlink", "install -d -m 1777 /tmp/.nx; ln -s /tmp/.nx /tmp/nxalias", {"NX_SOCKET_DIR": "/tmp/nxalias"}),
    Scenario("configured directory aliasing HOME/.nx through ..", env={"NX_SOCKET_DIR": f"{HOME}/x/../.nx"}),
    Scenario("TMPDIR is the configured directory", f"install -d -m 0700 -o {U} /tmp/mytmp", {"TMPDIR": "/tmp/mytmp", "NX_SOCKET_DIR": "/tmp/mytmp"}),
    Scenario("TMPDIR with a trailing slash is still the temp root", f"install -d -m 0700 -o {U} /tmp/mytmp", {"TMPDIR": "/tmp/mytmp/", "NX_SOCKET_DIR": "/tmp/mytmp"}),
    Scenario("TMP (not TMPDIR) names the temp root", f"install -d -m 0700 -o {U} /tmp/mytmp", {"TMP": "/tmp/mytmp", "NX_SOCKET_DIR": "/tmp/mytmp"}),
    Scenario(".env expands ${HOME}", "printf 'export NX_SOCKET_DIR=${HOME}/socks\\n' > /tmp/ws/.env"),
    Scenario(".local.env wins over .env", "printf 'NX_SOCKET_DIR=/tmp/local\\n' > /tmp/ws/.local.env; printf 'NX_SOCKET_DIR=/tmp/plain\\n' > /tmp/ws/.env"),
    Scenario("quoted .env value with a comment", "printf 'NX_SOCKET_DIR=\"/tmp/quoted dir\" # a comment\\n' > /tmp/ws/.env"),
    Scenario("NX_WORKSPACE_ROOT_PATH names the workspace", f"install -d -o {USER} /tmp/other", {"NX_WORKSPACE_ROOT_PATH": "/tmp/ws"}, cwd="/tmp/other"),
    Scenario("outermost node_modules/nx wins without nx.json", f"rm /tmp/ws/nx.json; install -d -o {USER} /tmp/ws/pkg/node_modules/nx; echo '{{\"version\":\"24.0.6\"}}' > /tmp/ws/pkg/node_modules/nx/package.json; chown -R {USER} /tmp/ws/pkg", cwd="/tmp/ws/pkg"),
    Scenario("a directory named nx is not a marker", f"install -d -o {USER} /tmp/ws/sub/nx", cwd="/tmp/ws/sub"),
    Scenario("lerna workspace keeps data under node_modules/.cache", f"rm /tmp/ws/nx.json; echo '{{}}' > /tmp/ws/lerna.json; install -d -m 1777 -o {P} /tmp/.nx", {"HOME": None}),
    Scenario("workspace name that is not UTF-8", workspace="/tmp/caf\udce9-ws"),
    Scenario("non-UTF-8 workspace in the fallback", f"install -d -m 1777 -o {P} /tmp/.nx", {"HOME": None}, workspace="/tmp/caf\udce9-ws"),
    Scenario("per-user directory is a symlink owned by the user", f"install -d -m 1777 /tmp/.nx; install -d -m 0700 -o {U} /tmp/mine; ln -s /tmp/mine /tmp/.nx/{U}; chown -h {U} /tmp/.nx/{U}"),
    Scenario("root-owned container 1777 with a peer's per-user directory for another uid", f"install -d -m 1777 /tmp/.nx; install -d -m 0700 -o {P} /tmp/.nx/{P}"),
    Scenario("HOME beneath a level the user cannot search", f"install -d -m 1777 -o {P} /tmp/.nx; install -d -m 0700 /home/locked; install -d -o {U} /home/locked/u", {"HOME": "/home/locked/u"}),
    Scenario("NX_SOCKET_DIR beneath a level the user cannot search", "install -d -m 0700 /tmp/locked", {"NX_SOCKET_DIR": "/tmp/locked/socks"}),
    Scenario("legacy defaults", generations=("legacy",)),
    Scenario("legacy with TMPDIR", f"install -d -m 0700 -o {USER} /tmp/mytmp", {"TMPDIR": "/tmp/mytmp"}, generations=("legacy",)),
    Scenario("legacy with an empty NX_SOCKET_DIR", env={"NX_SOCKET_DIR": ""}, generations=("legacy",)),
    Scenario("legacy with NX_SOCKET_DIR", env={"NX_SOCKET_DIR": "/tmp/legacy-socks"}, generations=("legacy",)),
    Scenario("legacy with a missing TMPDIR", env={"TMPDIR": "/tmp/gone"}, generations=("legacy",)),
    Scenario("legacy 96-character workspace fallback", env={"TMPDIR": "/tmp/gone"}, workspace="/tmp/" + "w" * 63, generations=("legacy",)),
]

CASES = [pytest.param(s, g, id=f"{g}: {s.name}") for s in SCENARIOS for g in s.generations]

HEX20 = re.compile(r"^[0-9a-f]{20}$")


def _parent(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[0] or "/"


def _expected_exit(oracle: dict[str, t.Any]) -> int:
    code = 0
    for result in oracle["sockets"].values():
        if result.get("invalidReason") or result.get("name") == "InvalidSocketDirConfigured":
            return 78
        if "error" in result:
            code = 73
    return code


def disagreements(outcome: Outcome, generation: str) -> list[str]:
    """Every way nxsock's answer differs from Nx's for one state."""
    doc, nx = outcome.nxsock, outcome.oracle
    if doc is None:
        return [f"nxsock printed no JSON document (exit {outcome.nxsock_rc}): {outcome.nxsock_stderr[-600:]}"]
    if nx is None:
        return [f"Nx printed nothing: {outcome.raw[-600:]}"]
    problems: list[str] = []
    root = doc["socket_root"]
    for kind, theirs in nx["sockets"].items():
        ours = doc["sockets"][kind]
        said = f"{kind}: Nx {theirs} / nxsock {ours}"
        reason = theirs.get("invalidReason") or (theirs.get("reason") if theirs.get("name") == "InvalidSocketDirConfigured" else None)
        if reason:
            if (root["invalid"] or {}).get("reason") != reason:
                problems.append(f"{kind}: Nx refuses the configured dir ({reason}); nxsock says {root['invalid']}")
            continue
        if "error" in theirs:
            if ours["failure"] is None:
                problems.append(f"{kind}: Nx fails ({theirs['error']}); nxsock places it: {ours}")
            continue
        if ours["tier"] is None:
            problems.append(f"{kind}: nxsock finds no directory; {said}")
            continue
        their_dir = theirs["dir"]
        if ours["dir"] is None:
            if _parent(their_dir) != ours["root"] or not HEX20.match(their_dir.rsplit("/", 1)[-1]):
                problems.append(f"{kind}: per-run directory not under nxsock's root; {said}")
        elif ours["dir"] != their_dir:
            problems.append(f"{kind}: directory differs; {said}")
        if bool(theirs.get("usedWorkspaceFallback")) != (ours["tier"] == "workspace") and generation != "legacy":
            problems.append(f"{kind}: workspace fallback differs; {said}")
        if generation == "native" and theirs.get("demotedFrom") != root["demoted_from"] and ours["tier"] == "home":
            problems.append(f"{kind}: demotion differs; {said}")
        if generation != "legacy" and (theirs.get("refusedConfiguredDir") or None) != root["refused_configured_dir"]:
            problems.append(f"{kind}: refused configured dir differs; {said}")
        if bool(theirs.get("tooLong")) != ours["too_long"]:
            problems.append(f"{kind}: too-long flag differs; {said}")
        if kind == "console" and ours["path"] != theirs["path"]:
            problems.append(f"console: path differs; {said}")
    if generation != "native" and doc["sockets"]["console"]["placed"]:
        problems.append("console: this Nx does not place the console socket, nxsock says it does")
    cache = doc["native_cache"]
    ours_cache = cache["dir"] if cache["bypass_reason"] is None else None
    if nx.get("native_cache_error") is None and ours_cache != nx["native_cache"]:
        problems.append(f"native cache: Nx {nx['native_cache']!r} / nxsock {ours_cache!r} ({cache['bypass_reason']})")
    if outcome.nxsock_rc != _expected_exit(nx):
        problems.append(f"exit code: nxsock {outcome.nxsock_rc}, expected {_expected_exit(nx)} from Nx's answer")
    return problems


@pytest.mark.parametrize(("scenario", "generation"), CASES)
def test_paths_agrees_with_nx_and_changes_nothing(scenario: Scenario, generation: str) -> None:
    """nxsock predicts what Nx then does, without creating or tightening anything itself."""
    outcome = run_scenario(scenario, generation)
    assert outcome.tree_before == outcome.tree_after, "nxsock paths changed the filesystem"
    assert "Traceback" not in outcome.nxsock_stderr
    assert "Traceback" not in outcome.text_stderr and outcome.text_rc == outcome.nxsock_rc
    assert disagreements(outcome, generation) == []


def test_enough_states_are_covered() -> None:
    """The suite builds at least 25 distinct states, as the contract promises."""
    assert len({s.name for s in SCENARIOS}) >= 25
