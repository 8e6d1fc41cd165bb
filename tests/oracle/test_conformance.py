"""nxsock agrees with the real Nx, state by state, for every Nx release it knows.

Each scenario builds a filesystem state on fresh tmpfs ``/tmp`` and ``/home``
in a private mount namespace; an unprivileged user runs ``nxsock paths
--json`` first, then that release's own resolver, on the same state.  Their
answers must agree on the socket directory and tier of every kind, demotion,
the refused configured directory, the invalid reason, the too-long flags, the
native-cache directory, the workspace data directory's refusal and the exit
code — and ``paths`` must leave the tree exactly as it found it.

Every release of :data:`nxsock.core.releases.KNOWN_RELEASES` runs every state its
generation has, one namespace per release (states batched, two releases at a
time; one nxsock process and one node process (one per HOME for Nx ≥ 24)
answer every state of a release: ``oracle/batch.py``).  ``NXSOCK_RELEASES=24.0.5,24.0.6`` narrows the run; ``python
tests/oracle/conformance.py --release X`` reruns the resolver states for one
release, a new one included, and prints the table (the real daemon's checks
run here only).
"""
from __future__ import annotations

import concurrent.futures
import os
import re
import typing as t

import pytest
from harness import (
    PEER,
    USER,
    DaemonProbe,
    Outcome,
    Scenario,
    in_xdist_worker,
    run_daemon_probe,
)

from nxsock.core.releases import KNOWN_RELEASES, rules_for
from oracle.batch import run_release_batch

U, P = USER, PEER
HOME = f"/home/u{U}"
LONG = "x" * 83  # /tmp/ + 83 = 88 characters; + /d.sock = 95
SCENARIOS = [
    Scenario("fresh machine"),
    Scenario("root-provisioned container", "install -d -m 1777 -o root -g root /tmp/.nx"),
    Scenario("container owned by the user, as after a first run", f"install -d -m 1777 -o {U} -g {U} /tmp/.nx"),
    Scenario("container owned by a peer demotes to home", f"install -d -m 1777 -o {P} -g {P} /tmp/.nx"),
    Scenario(
        "peer container and no HOME falls back to the workspace", f"install -d -m 1777 -o {P} /tmp/.nx", {"HOME": None}
    ),
    Scenario("peer container and an empty HOME", f"install -d -m 1777 -o {P} /tmp/.nx", {"HOME": ""}),
    Scenario("peer container and a relative HOME", f"install -d -m 1777 -o {P} /tmp/.nx", {"HOME": "rel/home"}),
    Scenario("HOME=/tmp is never a second tier", f"install -d -m 1777 -o {P} /tmp/.nx", {"HOME": "/tmp"}),
    Scenario("HOME that does not exist yet", f"install -d -m 1777 -o {P} /tmp/.nx", {"HOME": "/tmp/new-home"}),
    Scenario(
        "container is a symlink planted by a peer",
        f"mkdir /tmp/elsewhere; chown {P} /tmp/elsewhere; ln -s /tmp/elsewhere /tmp/.nx; chown -h {P} /tmp/.nx",
    ),
    Scenario("container is a FIFO", "mkfifo -m 666 /tmp/.nx"),
    Scenario("container is a regular file", "echo precious > /tmp/.nx"),
    Scenario("container 0777 without the sticky bit", "install -d -m 0777 -o root /tmp/.nx"),
    Scenario("container 0755 owned by root", "install -d -m 0755 -o root /tmp/.nx"),
    Scenario(
        "per-user directory planted by a peer", f"install -d -m 1777 /tmp/.nx; install -d -m 0700 -o {P} /tmp/.nx/{U}"
    ),
    Scenario(
        "per-user directory 0755 is tightened", f"install -d -m 1777 /tmp/.nx; install -d -m 0755 -o {U} /tmp/.nx/{U}"
    ),
    Scenario(
        "per-user directory is a file", f"install -d -m 1777 /tmp/.nx; echo x > /tmp/.nx/{U}; chown {U} /tmp/.nx/{U}"
    ),
    Scenario(
        "sockets directory is the user's own symlink",
        f"install -d -m 1777 /tmp/.nx; install -d -m 0700 -o {U} /tmp/.nx/{U} /tmp/real; ln -s /tmp/real "
        f"/tmp/.nx/{U}/sockets; chown -h {U} /tmp/.nx/{U}/sockets",
    ),
    Scenario(
        "plugin leaf planted: only plugins fall back",
        f"install -d -m 1777 /tmp/.nx; install -d -m 0700 -o {U} /tmp/.nx/{U} /tmp/.nx/{U}/sockets; install -d -m 0700 "
        f"-o {P} /tmp/.nx/{U}/sockets/b011ea26",
        cwd=None,
    ),
    Scenario(
        "home .nx owned by a peer with a peer container",
        f"install -d -m 1777 -o {P} /tmp/.nx; install -d -m 0700 -o {P} {HOME}/.nx",
    ),
    Scenario(
        "HOME beneath a peer's directory",
        f"install -d -m 1777 -o {P} /tmp/.nx; install -d -m 0755 -o {P} /home/peer; install -d -o {U} /home/peer/u",
        {"HOME": "/home/peer/u"},
    ),
    Scenario(
        "HOME beneath a world-writable directory",
        f"install -d -m 1777 -o {P} /tmp/.nx; install -d -m 0777 /home/ww; install -d -o {U} /home/ww/u",
        {"HOME": "/home/ww/u"},
    ),
    Scenario(
        "HOME beneath a sticky world-writable directory",
        f"install -d -m 1777 -o {P} /tmp/.nx; install -d -m 1777 /home/st; install -d -o {U} /home/st/u",
        {"HOME": "/home/st/u"},
    ),
    Scenario("/tmp itself 0777 without sticky", "chmod 0777 /tmp"),
    Scenario("/tmp owned by a peer", f"chown {P} /tmp"),
    Scenario("read-only /tmp demotes to home", after="mount -o remount,ro /tmp"),
    Scenario(
        "read-only /tmp with an existing 0755 per-user directory",
        f"install -d -m 1777 /tmp/.nx; install -d -m 0755 -o {U} /tmp/.nx/{U}",
        after="mount -o remount,ro /tmp",
    ),
    Scenario("mode 0700 container owned by root", "install -d -m 0700 -o root /tmp/.nx"),
    Scenario("NX_SOCKET_DIR empty counts as unset", env={"NX_SOCKET_DIR": ""}),
    Scenario("NX_SOCKET_DIR relative to the current directory", env={"NX_SOCKET_DIR": "socks"}),
    Scenario("NX_SOCKET_DIR with a trailing slash", env={"NX_SOCKET_DIR": "/tmp/mysock/"}),
    Scenario("NX_SOCKET_DIR with ..", env={"NX_SOCKET_DIR": "/tmp/a/../b/c"}),
    Scenario("NX_SOCKET_DIR aliasing /tmp through a symlink", "ln -s /tmp /tmp/alias", {"NX_SOCKET_DIR": "/tmp/alias"}),
    Scenario("NX_SOCKET_DIR is /tmp", env={"NX_SOCKET_DIR": "/tmp"}),
    Scenario("NX_SOCKET_DIR is the absent container", env={"NX_SOCKET_DIR": "/tmp/.nx"}),
    Scenario(
        "NX_SOCKET_DIR is the provisioned container", "install -d -m 1777 /tmp/.nx", {"NX_SOCKET_DIR": "/tmp/.nx/"}
    ),
    Scenario("NX_SOCKET_DIR is the per-user root", env={"NX_SOCKET_DIR": f"/tmp/.nx/{U}"}),
    Scenario("NX_SOCKET_DIR is ~/.nx/sockets", env={"NX_SOCKET_DIR": f"{HOME}/.nx/sockets"}),
    Scenario("NX_SOCKET_DIR is the native cache root", env={"NX_SOCKET_DIR": f"/tmp/.nx/{U}/native-cache"}),
    Scenario("NX_SOCKET_DIR nested beneath the container is fine", env={"NX_SOCKET_DIR": f"/tmp/.nx/{U}/sockets/mine"}),
    Scenario(
        "NX_SOCKET_DIR under a peer's directory is refused",
        f"install -d -m 0755 -o {P} /tmp/peer",
        {"NX_SOCKET_DIR": "/tmp/peer/socks"},
    ),
    Scenario(
        "NX_SOCKET_DIR squatted by a peer", f"install -d -m 0700 -o {P} /tmp/squat", {"NX_SOCKET_DIR": "/tmp/squat"}
    ),
    Scenario("NX_DAEMON_SOCKET_DIR alone", env={"NX_DAEMON_SOCKET_DIR": "/tmp/daemon-socks"}),
    Scenario(
        "NX_SOCKET_DIR wins over NX_DAEMON_SOCKET_DIR",
        env={"NX_SOCKET_DIR": "/tmp/first", "NX_DAEMON_SOCKET_DIR": "/tmp/second"},
    ),
    Scenario("NX_SOCKET_DIR set only in .env", "printf 'NX_SOCKET_DIR=/tmp/from-dotenv\\n' > /tmp/ws/.env", {}),
    Scenario(
        "the environment wins over .env",
        "printf 'NX_SOCKET_DIR=/tmp/from-dotenv\\n' > /tmp/ws/.env",
        {"NX_SOCKET_DIR": "/tmp/from-env"},
    ),
    Scenario("95-character configured socket path fits", env={"NX_SOCKET_DIR": "/tmp/" + LONG}),
    Scenario("96-character configured socket path is too long", env={"NX_SOCKET_DIR": "/tmp/" + LONG + "y"}),
    Scenario(
        "95 characters in the workspace fallback",
        f"install -d -m 1777 -o {P} /tmp/.nx",
        {"HOME": None},
        workspace="/tmp/" + "w" * 62,
    ),
    Scenario(
        "96 characters in the workspace fallback",
        f"install -d -m 1777 -o {P} /tmp/.nx",
        {"HOME": None},
        workspace="/tmp/" + "w" * 63,
    ),
    Scenario(
        "a long home makes plugin and console paths too long",
        f"install -d -m 1777 -o {P} /tmp/.nx; install -d -o {U} /home/" + "h" * 60,
        {"HOME": "/home/" + "h" * 60},
    ),
    Scenario("unicode workspace path", workspace="/tmp/wörk-späce-ÜNÏ"),
    Scenario("mixed-case workspace path", workspace="/tmp/My-Workspace"),
    Scenario(
        "workspace fallback with a unicode path",
        f"install -d -m 1777 -o {P} /tmp/.nx",
        {"HOME": None},
        workspace="/tmp/" + "ü" * 30,
    ),
    Scenario(
        "NX_WORKSPACE_DATA_DIRECTORY relative, in the fallback",
        f"install -d -m 1777 -o {P} /tmp/.nx",
        {"HOME": None, "NX_WORKSPACE_DATA_DIRECTORY": "data"},
    ),
    Scenario(
        "workspace fallback refused too",
        f"install -d -m 1777 -o {P} /tmp/.nx; install -d -m 0755 -o {P} /tmp/ws/.nx",
        {"HOME": None},
    ),
    Scenario(
        "native cache planted by a peer",
        f"install -d -m 1777 /tmp/.nx; install -d -m 0700 -o {U} /tmp/.nx/{U}; install -d -m 0700 -o {P} "
        f"/tmp/.nx/{U}/native-cache",
    ),
    Scenario(
        "NX_NATIVE_FILE_CACHE_DIRECTORY configured", env={"NX_NATIVE_FILE_CACHE_DIRECTORY": "/tmp/bincache/nested"}
    ),
    Scenario("NX_SKIP_NATIVE_FILE_CACHE=true", env={"NX_SKIP_NATIVE_FILE_CACHE": "true"}),
    Scenario("TMPDIR names a missing directory", env={"TMPDIR": "/tmp/claude"}),
    Scenario("TMPDIR missing and no HOME", "install -d -m 1777 /tmp/.nx", {"TMPDIR": "/tmp/claude", "HOME": None}),
    Scenario(
        "subdirectory of the workspace finds the root by nx.json",
        f"install -d -o {USER} /tmp/ws/apps/one",
        cwd="/tmp/ws/apps/one",
    ),
    Scenario(
        "sockets directory is a FIFO",
        f"install -d -m 1777 /tmp/.nx; install -d -m 0700 -o {U} /tmp/.nx/{U}; mkfifo /tmp/.nx/{U}/sockets; chown "
        f"{U} /tmp/.nx/{U}/sockets",
    ),
    Scenario(
        "sockets directory 0750 is tightened",
        f"install -d -m 1777 /tmp/.nx; install -d -m 0700 -o {U} /tmp/.nx/{U}; install -d -m 0750 -o "
        f"{U} /tmp/.nx/{U}/sockets",
    ),
    Scenario(
        "home sockets planted by a peer",
        f"install -d -m 1777 -o {P} /tmp/.nx; install -d -m 0700 -o {U} {HOME}/.nx; install -d -m 0700 "
        f"-o {P} {HOME}/.nx/sockets",
    ),
    Scenario("HOME with a trailing slash", f"install -d -m 1777 -o {P} /tmp/.nx", {"HOME": HOME + "/"}),
    Scenario(
        "HOME through a symlink of root's",
        f"install -d -m 1777 -o {P} /tmp/.nx; ln -s {HOME} /home/alias",
        {"HOME": "/home/alias"},
    ),
    Scenario(
        "HOME through a symlink of a peer's",
        f"install -d -m 1777 -o {P} /tmp/.nx; ln -s {HOME} /home/alias; chown -h {P} /home/alias",
        {"HOME": "/home/alias"},
    ),
    Scenario(
        "configured directory exists 0755 and is tightened",
        f"install -d -m 0755 -o {U} /tmp/mine",
        {"NX_SOCKET_DIR": "/tmp/mine"},
    ),
    Scenario(
        "configured directory is a FIFO", f"mkfifo /tmp/fifo; chown {U} /tmp/fifo", {"NX_SOCKET_DIR": "/tmp/fifo"}
    ),
    Scenario(
        "configured directory through the user's own symlink",
        f"install -d -m 0700 -o {U} /tmp/real; ln -s /tmp/real /tmp/link; chown -h {U} /tmp/link",
        {"NX_SOCKET_DIR": "/tmp/link/socks"},
    ),
    Scenario(
        "configured directory on a read-only mount",
        f"install -d -m 0755 -o {U} /tmp/ro",
        {"NX_SOCKET_DIR": "/tmp/ro/socks"},
        after="mount --bind -o ro /tmp/ro /tmp/ro",
    ),
    Scenario(
        "configured directory aliasing the container through a symlink",
        "install -d -m 1777 /tmp/.nx; ln -s /tmp/.nx /tmp/nxalias",
        {"NX_SOCKET_DIR": "/tmp/nxalias"},
    ),
    Scenario("configured directory aliasing HOME/.nx through ..", env={"NX_SOCKET_DIR": f"{HOME}/x/../.nx"}),
    Scenario(
        "TMPDIR is the configured directory",
        f"install -d -m 0700 -o {U} /tmp/mytmp",
        {"TMPDIR": "/tmp/mytmp", "NX_SOCKET_DIR": "/tmp/mytmp"},
    ),
    Scenario(
        "TMPDIR with a trailing slash is still the temp root",
        f"install -d -m 0700 -o {U} /tmp/mytmp",
        {"TMPDIR": "/tmp/mytmp/", "NX_SOCKET_DIR": "/tmp/mytmp"},
    ),
    Scenario(
        "TMP (not TMPDIR) names the temp root",
        f"install -d -m 0700 -o {U} /tmp/mytmp",
        {"TMP": "/tmp/mytmp", "NX_SOCKET_DIR": "/tmp/mytmp"},
    ),
    Scenario(".env expands ${HOME}", "printf 'export NX_SOCKET_DIR=${HOME}/socks\\n' > /tmp/ws/.env"),
    Scenario(
        ".local.env wins over .env",
        "printf 'NX_SOCKET_DIR=/tmp/local\\n' > /tmp/ws/.local.env; printf "
        "'NX_SOCKET_DIR=/tmp/plain\\n' > /tmp/ws/.env",
    ),
    Scenario(
        "quoted .env value with a comment", "printf 'NX_SOCKET_DIR=\"/tmp/quoted dir\" # a comment\\n' > /tmp/ws/.env"
    ),
    Scenario(
        "NX_WORKSPACE_ROOT_PATH names the workspace",
        f"install -d -o {USER} /tmp/other",
        {"NX_WORKSPACE_ROOT_PATH": "/tmp/ws"},
        cwd="/tmp/other",
    ),
    Scenario(
        "outermost node_modules/nx wins without nx.json",
        f"rm /tmp/ws/nx.json; install -d -o {USER} /tmp/ws/pkg/node_modules/nx; echo '{{\"version\":\"24.0.6\"}}' > "
        f"/tmp/ws/pkg/node_modules/nx/package.json; chown -R {USER} /tmp/ws/pkg",
        cwd="/tmp/ws/pkg",
    ),
    Scenario("a directory named nx is not a marker", f"install -d -o {USER} /tmp/ws/sub/nx", cwd="/tmp/ws/sub"),
    Scenario(
        "lerna workspace keeps data under node_modules/.cache",
        f"rm /tmp/ws/nx.json; echo '{{}}' > /tmp/ws/lerna.json; install -d -m 1777 -o {P} /tmp/.nx",
        {"HOME": None},
    ),
    Scenario("workspace name that is not UTF-8", workspace="/tmp/caf\udce9-ws"),
    Scenario(
        "non-UTF-8 workspace in the fallback",
        f"install -d -m 1777 -o {P} /tmp/.nx",
        {"HOME": None},
        workspace="/tmp/caf\udce9-ws",
    ),
    Scenario(
        "per-user directory is a symlink owned by the user",
        f"install -d -m 1777 /tmp/.nx; install -d -m 0700 -o {U} /tmp/mine; ln -s /tmp/mine /tmp/.nx/{U}; "
        f"chown -h {U} /tmp/.nx/{U}",
    ),
    Scenario(
        "root-owned container 1777 with a peer's per-user directory for another uid",
        f"install -d -m 1777 /tmp/.nx; install -d -m 0700 -o {P} /tmp/.nx/{P}",
    ),
    Scenario(
        "HOME beneath a level the user cannot search",
        f"install -d -m 1777 -o {P} /tmp/.nx; install -d -m 0700 /home/locked; install -d -o {U} /home/locked/u",
        {"HOME": "/home/locked/u"},
    ),
    Scenario(
        "NX_SOCKET_DIR beneath a level the user cannot search",
        "install -d -m 0700 /tmp/locked",
        {"NX_SOCKET_DIR": "/tmp/locked/socks"},
    ),
    Scenario(
        "NX_SOCKET_DIR under a world-writable parent", "install -d -m 0777 /tmp/ww", {"NX_SOCKET_DIR": "/tmp/ww/socks"}
    ),
    Scenario(
        "NX_SOCKET_DIR under a sticky world-writable parent",
        "install -d -m 1777 /tmp/st",
        {"NX_SOCKET_DIR": "/tmp/st/socks"},
    ),
    Scenario(
        "NX_SOCKET_DIR under a peer's existing private directory",
        f"install -d -m 0755 -o {P} /tmp/peer; install -d -m 0700 -o {U} /tmp/peer/socks",
        {"NX_SOCKET_DIR": "/tmp/peer/socks"},
    ),
    Scenario(
        "NX_SOCKET_DIR relative, typed from a subdirectory",
        f"install -d -o {U} /tmp/ws/apps/one",
        {"NX_SOCKET_DIR": "socks"},
        cwd="/tmp/ws/apps/one",
        daemon_decides=True,
    ),
    Scenario(
        "/tmp 0777 without sticky and a root-provisioned container", "chmod 0777 /tmp; install -d -m 1777 /tmp/.nx"
    ),
    Scenario("/tmp 0777 without sticky and no HOME", "chmod 0777 /tmp", {"HOME": None}),
    Scenario(
        "HOME beneath a world-writable directory, container provisioned",
        f"install -d -m 1777 /tmp/.nx; install -d -m 0700 -o {P} /tmp/.nx/{U}; install -d -m 0777 /home/ww; "
        f"install -d -o {U} /home/ww/u",
        {"HOME": "/home/ww/u"},
    ),
    Scenario(
        "HOME under /tmp with a peer container",
        f"install -d -m 1777 -o {P} /tmp/.nx; install -d -o {U} /tmp/home-u",
        {"HOME": "/tmp/home-u"},
    ),
    Scenario(
        "NX_NATIVE_FILE_CACHE_DIRECTORY under a world-writable directory",
        "install -d -m 0777 /tmp/ww",
        {"NX_NATIVE_FILE_CACHE_DIRECTORY": "/tmp/ww/bincache"},
    ),
    Scenario(
        "NX_NATIVE_FILE_CACHE_DIRECTORY under a peer's directory",
        f"install -d -m 0755 -o {P} /tmp/peer; install -d -m 0700 -o {U} /tmp/peer/bincache",
        {"NX_NATIVE_FILE_CACHE_DIRECTORY": "/tmp/peer/bincache"},
    ),
    Scenario("NX_NATIVE_FILE_CACHE_DIRECTORY relative", env={"NX_NATIVE_FILE_CACHE_DIRECTORY": "bincache"}),
    Scenario(
        "NX_WORKSPACE_DATA_DIRECTORY in a world-writable directory",
        "install -d -m 0777 /tmp/shared",
        {"NX_WORKSPACE_DATA_DIRECTORY": "/tmp/shared/data"},
    ),
    Scenario(
        "NX_WORKSPACE_DATA_DIRECTORY owned by a peer",
        f"install -d -m 0755 -o {P} /tmp/peerdata",
        {"NX_WORKSPACE_DATA_DIRECTORY": "/tmp/peerdata"},
    ),
    Scenario(
        "NX_WORKSPACE_DATA_DIRECTORY untrusted but allowed",
        "install -d -m 0777 /tmp/shared",
        {"NX_WORKSPACE_DATA_DIRECTORY": "/tmp/shared/data", "NX_ALLOW_INSECURE_DIRECTORIES": "true"},
    ),
    Scenario(
        "NX_WORKSPACE_DATA_DIRECTORY of the user's own",
        f"install -d -m 0755 -o {U} /tmp/mydata",
        {"NX_WORKSPACE_DATA_DIRECTORY": "/tmp/mydata"},
    ),
    Scenario("NX_WORKSPACE_DATA_DIRECTORY empty", env={"NX_WORKSPACE_DATA_DIRECTORY": ""}),
    Scenario("TMPDIR missing with NX_SOCKET_DIR set", env={"TMPDIR": "/tmp/claude", "NX_SOCKET_DIR": "/tmp/mine"}),
    Scenario("TMPDIR names a file", "echo x > /tmp/afile", {"TMPDIR": "/tmp/afile"}),
    Scenario(
        "the workspace fallback too long in bytes, not in UTF-16 units",
        f"install -d -m 1777 -o {P} /tmp/.nx",
        {"HOME": None},
        workspace="/tmp/" + "ü" * 40,
    ),
    Scenario(
        "plugin and console paths too long in bytes only",
        f"install -d -m 1777 -o {P} /tmp/.nx; install -d -o {U} /home/" + "é" * 35,
        {"HOME": "/home/" + "é" * 35},
    ),
    Scenario("legacy defaults", generations=("legacy",)),
    Scenario(
        "legacy with TMPDIR",
        f"install -d -m 0700 -o {USER} /tmp/mytmp",
        {"TMPDIR": "/tmp/mytmp"},
        generations=("legacy",),
    ),
    Scenario("legacy with an empty NX_SOCKET_DIR", env={"NX_SOCKET_DIR": ""}, generations=("legacy",)),
    Scenario("legacy with NX_SOCKET_DIR", env={"NX_SOCKET_DIR": "/tmp/legacy-socks"}, generations=("legacy",)),
    Scenario("legacy with a missing TMPDIR", env={"TMPDIR": "/tmp/gone"}, generations=("legacy",)),
    Scenario(
        "legacy 96-character workspace fallback",
        env={"TMPDIR": "/tmp/gone"},
        workspace="/tmp/" + "w" * 63,
        generations=("legacy",),
    ),
    Scenario(
        "legacy with NX_NATIVE_FILE_CACHE_DIRECTORY",
        env={"NX_NATIVE_FILE_CACHE_DIRECTORY": "/tmp/legacy-bincache"},
        generations=("legacy",),
    ),
    Scenario(
        "legacy with a relative NX_SOCKET_DIR from a subdirectory",
        f"install -d -o {U} /tmp/ws/apps/one",
        {"NX_SOCKET_DIR": "socks"},
        cwd="/tmp/ws/apps/one",
        generations=("legacy",),
        daemon_decides=True,
    ),
]


def selected_releases() -> tuple[str, ...]:
    """Every known release, or those ``NXSOCK_RELEASES`` names (comma-separated; unknown ones too)."""
    named = [r.strip() for r in os.environ.get("NXSOCK_RELEASES", "").split(",") if r.strip()]
    return tuple(named) or KNOWN_RELEASES


def states_for(release: str) -> list[Scenario]:
    """The states a release's generation has (the legacy layout has its own few)."""
    generation = rules_for(release).generation
    return [s for s in SCENARIOS if generation in s.generations]


CASES = [pytest.param(s, r, id=f"{r}: {s.name}", marks=pytest.mark.xdist_group(f"nx-{r}"))
         for r in selected_releases() for s in states_for(r)]
HEX20 = re.compile(r"^[0-9a-f]{20}$")


def _parent(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[0] or "/"


def _untrusted_data(oracle: dict[str, t.Any]) -> bool:
    error = oracle.get("workspace_data_error") or {}
    return error.get("name") == "UntrustedDataDirectoryError"


def _expected_exit(oracle: dict[str, t.Any]) -> int:
    code = 0
    if _untrusted_data(oracle):
        return 78
    for result in oracle["sockets"].values():
        if result.get("invalidReason") or result.get("name") == "InvalidSocketDirConfigured":
            return 78
        if "error" in result:
            code = 73
    return code


def disagreements(outcome: Outcome, generation: str, scenario: Scenario | None = None) -> list[str]:
    """Every way nxsock's answer differs from Nx's for one state."""
    doc, nx = outcome.nxsock, outcome.oracle
    if doc is None:
        return [f"nxsock printed no JSON document (exit {outcome.nxsock_rc}): {outcome.nxsock_stderr[-600:]}"]
    if nx is None:
        return [f"Nx printed nothing: {outcome.raw[-600:]}"]
    problems: list[str] = []
    root = doc["socket_root"]
    for kind, theirs in nx["sockets"].items():
        if kind == "daemon" and scenario is not None and scenario.daemon_decides:
            continue  # a client's resolver is not where the daemon binds: the real daemon test judges it
        ours = doc["sockets"][kind]
        said = f"{kind}: Nx {theirs} / nxsock {ours}"
        reason = theirs.get("invalidReason") or (
            theirs.get("reason") if theirs.get("name") == "InvalidSocketDirConfigured" else None
        )
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
        if generation == "legacy" and theirs.get("path"):
            their_dir = _parent(theirs["path"])  # the legacy code hands back the variable's spelling as the dir
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
    theirs_cache = nx["native_cache"]
    if isinstance(theirs_cache, str) and not theirs_cache.startswith("/") and scenario is not None:
        # The legacy code hands back the variable's spelling; the copy lands relative to the caller's directory.
        theirs_cache = os.path.normpath(os.path.join(scenario.cwd or scenario.workspace, theirs_cache))
    if nx.get("native_cache_error") is None and ours_cache != theirs_cache:
        problems.append(f"native cache: Nx {theirs_cache!r} / nxsock {ours_cache!r} ({cache['bypass_reason']})")
    data = doc["workspace_data"]
    if _untrusted_data(nx) != data["refused"]:
        problems.append(
            f"workspace data: Nx {nx.get('workspace_data_error') or 'uses it'} / nxsock refused={data['refused']} "
            f"({data['untrusted_reason']})"
        )
    elif nx.get("workspace_data") is not None and nx["workspace_data"] != data["dir"]:
        problems.append(f"workspace data: Nx {nx['workspace_data']!r} / nxsock {data['dir']!r}")
    if outcome.nxsock_rc != _expected_exit(nx):
        problems.append(f"exit code: nxsock {outcome.nxsock_rc}, expected {_expected_exit(nx)} from Nx's answer")
    return problems


_JOBS = max(1, int(os.environ.get("NXSOCK_CONFORMANCE_JOBS", "2")))
_POOL: concurrent.futures.ThreadPoolExecutor | None = None
_BATCHES: dict[str, concurrent.futures.Future[list[Outcome]]] = {}
_PROBES: dict[str, concurrent.futures.Future[DaemonProbe]] = {}


def _pool() -> concurrent.futures.ThreadPoolExecutor:
    global _POOL
    if _POOL is None:
        _POOL = concurrent.futures.ThreadPoolExecutor(max_workers=_JOBS)
    return _POOL


def _outcome(release: str, scenario: Scenario) -> Outcome:
    """This state's outcome for this release.

    Run alone, the first call starts every selected release's batch (``_JOBS`` at a time); under pytest-xdist
    each release is one ``xdist_group``, so its worker starts only the batch it needs and the workers run the
    releases side by side.
    """
    if not _BATCHES and not in_xdist_worker():
        for name in selected_releases():
            _BATCHES[name] = _pool().submit(run_release_batch, name, states_for(name))
    if release not in _BATCHES:
        _BATCHES[release] = _pool().submit(run_release_batch, release, states_for(release))
        if in_xdist_worker() and release in _PROBES_WANTED and release not in _PROBES:
            # The group's daemon tests run on this worker next: their daemon starts now, beside the batch (it
            # mostly waits on the daemon, the batch mostly computes), rather than after it.
            _PROBES[release] = _pool().submit(run_daemon_probe, release)
    return _BATCHES[release].result()[states_for(release).index(scenario)]


_PROBES_WANTED: set[str] = set()


@pytest.fixture(autouse=True, scope="module")
def _wanted_probes(request: pytest.FixtureRequest) -> None:
    """The releases whose daemon tests are selected in this run (``-k`` or a node id may leave some out)."""
    _PROBES_WANTED.update(item.callspec.params["release"] for item in request.session.items
                          if getattr(item, "cls", None) is TestTheRealDaemon and hasattr(item, "callspec"))


@pytest.mark.parametrize(("scenario", "release"), CASES)
def test_paths_agrees_with_nx_and_changes_nothing(scenario: Scenario, release: str) -> None:
    """nxsock predicts what this release of Nx then does, without creating or tightening anything itself."""
    outcome = _outcome(release, scenario)
    assert outcome.tree_before == outcome.tree_after, "nxsock paths changed the filesystem"
    assert "Traceback" not in outcome.nxsock_stderr
    assert "Traceback" not in outcome.text_stderr and outcome.text_rc == outcome.nxsock_rc
    assert disagreements(outcome, rules_for(release).generation, scenario) == []


def _probe(release: str) -> DaemonProbe:
    """The real daemon of *release*, started once per run (all releases ``_JOBS`` at a time, or one per group)."""
    if not _PROBES and not in_xdist_worker():
        for name in selected_releases():
            _PROBES[name] = _pool().submit(run_daemon_probe, name)
    if release not in _PROBES:
        _PROBES[release] = _pool().submit(run_daemon_probe, release)
    return _PROBES[release].result()


@pytest.mark.parametrize(
    "release", [pytest.param(r, marks=pytest.mark.xdist_group(f"nx-{r}")) for r in selected_releases()]
)
class TestTheRealDaemon:
    """Where only the daemon shows the answer: started from a subdirectory with ``NX_SOCKET_DIR=socks``."""

    def test_a_relative_socket_dir_binds_where_nxsock_predicted(self, release: str) -> None:
        """The daemon runs in the workspace root: the relative directory lands there, whatever the caller's
        directory."""
        probe = _probe(release)
        assert probe.record is not None, probe.raw[-1500:]
        assert probe.predicted is not None
        predicted = probe.predicted["sockets"]["daemon"]
        assert probe.record["socketPath"] == "/tmp/ws/socks/d.sock"
        assert predicted["path"] == probe.record["socketPath"] or predicted["dir"] == _parent(
            probe.record["socketPath"]
        )

    def test_the_record_says_whether_this_release_s_client_will_dial_it(self, release: str) -> None:
        """``daemon_record.client_will_connect`` is what the real client's dial then does, state by state."""
        probe = _probe(release)
        assert len(probe.states) == 3, probe.raw[-1500:]
        for name, doc, client, _ in probe.states:
            assert doc is not None and client is not None, (name, probe.raw[-1500:])
            record = doc["daemon_record"]
            assert record["client_checks_socket"] == client["checked"], name
            assert record["client_will_connect"] == client["connected"], (name, record, client)
            if not client["connected"]:
                assert record["client_refusal"]["dir"] in client["message"], (name, record, client)
        assert [c["connected"] for _, _, c, _ in probe.states] == (
            [True, False, False] if rules_for(release).client_socket_check else [True, True, True])

    def test_doctor_says_why_the_client_will_not_use_the_daemon(self, release: str) -> None:
        """A warning naming the refused level exactly where the real client refuses; none where it dials."""
        probe = _probe(release)
        for name, doc, client, doctor in probe.states:
            assert doctor is not None and client is not None and doc is not None, (name, probe.raw[-1500:])
            said = [f for f in doctor["findings"] if "client refuses its socket" in f["message"]]
            if client["connected"]:
                assert said == [], (name, said)
            else:
                refused = doc["daemon_record"]["client_refusal"]["dir"]
                assert len(said) == 1 and said[0]["severity"] == "warn", (name, doctor["findings"])
                assert refused in said[0]["message"], said

    def test_the_cache_after_a_real_run_is_listed_and_verified(self, release: str) -> None:
        """``cache path`` names the directory Nx copied its binding to; ``list`` shows the entry, ``verify`` calls it
        fresh."""
        probe = _probe(release)
        assert probe.cache_list is not None and probe.verify is not None, probe.raw[-1500:]
        paths = [e["path"] for e in probe.cache_list["entries"]]
        assert len(paths) == 1 and paths[0].startswith(probe.cache_path.rstrip("/") + "/"), (probe.cache_path, paths)
        assert probe.cache_list["entries"][0]["binding"] == probe.cache_list["binding"]
        assert (probe.verify["state"], probe.verify_rc) == ("fresh", 0), probe.verify

    def test_doctor_judges_the_socket_by_the_mode_this_release_makes(self, release: str) -> None:
        """Nx ≤ 23.1.1 leaves its socket at the umask's mode; later releases chmod it 0600. Neither is a finding."""
        probe = _probe(release)
        assert probe.doctor is not None, probe.raw[-1500:]
        findings = probe.doctor["findings"]
        assert not [f for f in findings if "makes its" in f["message"]], findings
        assert not [f for f in findings if f["id"] == "leftovers" and f["severity"] != "ok"], findings


def test_enough_states_are_covered() -> None:
    """The suite builds at least 25 distinct states, as the contract promises."""
    assert len({s.name for s in SCENARIOS}) >= 25


def test_every_known_release_is_checked() -> None:
    """Each release of the table runs the suite, each with the states of its generation."""
    assert set(KNOWN_RELEASES) <= {p.values[1] for p in CASES} or os.environ.get("NXSOCK_RELEASES")
    assert all(states_for(r) for r in KNOWN_RELEASES)
