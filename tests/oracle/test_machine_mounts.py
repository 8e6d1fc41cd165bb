"""Filesystems that cannot hold sockets or keep modes, a read-only ``/tmp``, and workspaces Nx cannot write: proven with
the real Nx.

Each state is built for real in a private mount and pid namespace, for a user
of its own (``tests/oracle/test_remedies_real.py``'s driver): exFAT through
FUSE on a loop file (``mkfs.exfat``, ``mount.exfat-fuse -o uid=…``; this
kernel has no vfat) as the workspace and the home, as the home alone (open
modes, and ``umask=077``), and as ``NX_SOCKET_DIR``; a ``/tmp`` remounted
read-only; a workspace ``0555``, bind-mounted read-only, or another uid's.  In
each, on Nx 24.0.6 and 23.3.2: the real Nx fails (or degrades) as nxsock
predicts, nxsock's remedy is pasted as a user pastes it, and then the real
daemon starts where ``paths`` predicts and a real client is answered by it.
"""

from __future__ import annotations

import json
import shlex

import pytest
from harness import PEER, USER

from oracle.test_remedies_real import State, _no_daemon, _socket, check_proof, prove

HOME = f"/home/u{USER}"
WS = f"{HOME}/ws"
XDG = f"/tmp/xdg-{USER}"
PEER_CONTAINER = f"install -d -m 0755 -o {PEER} /tmp/.nx"


def exfat(point: str, options: str = "") -> str:
    """Shell, as root: an exFAT filesystem through FUSE at *point*, owned by the user (the loop device goes with it)."""
    image = f"/home/.img-{point.strip('/').replace('/', '-')}"
    return (
        f"truncate -s 16M {image} && mkfs.exfat {image} >/dev/null && L=$(losetup -f --show {image}) && "
        f"{{ mkdir -p {point}; mount.exfat-fuse -o nonempty,uid={USER},gid={USER}{options} $L "
        f"{point} >/dev/null; R=$?; "
        "losetup -d $L; [ $R = 0 ]; }"
    )  # detached while in use: the kernel frees it when the mount goes


def workspace_at(ws: str) -> str:
    """Shell, as root: a workspace at *ws* on a filesystem without links, Nx bound in (exFAT has no symlinks)."""
    q = shlex.quote(ws)
    return (f"mkdir -p {q}/node_modules && echo '{{}}' > {q}/nx.json && echo '{{\"name\":\"w\",\"private\":true}}' > "
            f"{q}/package.json && mount --bind $NX/node_modules {q}/node_modules")


def _degraded_to_workspace(before: dict[str, object]) -> bool:
    return "/.nx/workspace-data/d/" in _socket(before)  # type: ignore[arg-type]


#: What a peer's /tmp/.nx leaves warned about after any fix (the container is theirs; the binding loads in place).
PEERS = ("container", "native-cache")

STATES = [
    State(
        "exfat-workspace-and-home",
        f"{PEER_CONTAINER}; install -d -m 0700 -o {USER} {XDG}; {exfat('/home/ex')}; "
        f"mkdir /home/ex/home; {workspace_at('/home/ex/ws')}",
        "outcome",
        lambda r: r == f"export NX_SOCKET_DIR={XDG}/nx",
        _no_daemon,
        "configured",
        env={"HOME": "/home/ex/home", "XDG_RUNTIME_DIR": XDG},
        workspace="/home/ex/ws",
        allowed_after=PEERS,
    ),
    State(
        "exfat-home-private-mode",
        f"{PEER_CONTAINER}; install -d -m 0700 -o {USER} {XDG}; {exfat('/home/exh', ',umask=077')}; "
        "mkdir /home/exh/home",
        "filesystem",
        lambda r: r == f"export NX_SOCKET_DIR={XDG}/nx",
        _no_daemon,
        "configured",
        env={"HOME": "/home/exh/home", "XDG_RUNTIME_DIR": XDG},
        allowed_after=PEERS,
    ),
    # 23.3.2 refuses ~/.nx as not tightenable; 24.0.6 meets the open mount point first, walking the home's ancestry.
    *(
        State(
            "exfat-home-open-mode",
            f"{PEER_CONTAINER}; install -d -m 0700 -o {USER} {XDG}; {exfat('/home/exh')}; mkdir /home/exh/home",
            finding,
            lambda r: r == f"export NX_SOCKET_DIR={XDG}/nx",
            _degraded_to_workspace,
            "configured",
            env={"HOME": "/home/exh/home", "XDG_RUNTIME_DIR": XDG},
            versions=(version,),
            allowed_after=PEERS,
        )
        for finding, version in (("private-levels", "23.3.2"), ("ancestry", "24.0.6"))
    ),
    State(
        "exfat-socket-dir",
        exfat("/home/exs", ",umask=077"),
        "filesystem",
        lambda r: r == "unset NX_SOCKET_DIR",
        _no_daemon,
        "shared",
        env={"NX_SOCKET_DIR": "/home/exs/socks"},
    ),
    State(
        "read-only-tmp",
        "mount -o remount,ro /tmp",
        "outcome",
        lambda r: "install" not in r and r.startswith("export NX_SOCKET_DIR="),
        lambda b: _socket(b).startswith(f"{HOME}/.nx/"),
        "configured",
        allowed_after=("native-cache", "boot-persistence"),
    ),
    State(
        "unwritable-workspace",
        f"chmod 0555 {WS}",
        "workspace-writable",
        lambda r: r.startswith("export NX_WORKSPACE_DATA_DIRECTORY="),
        _no_daemon,
        "shared",
    ),
    State(
        "read-only-workspace",
        f"mount --bind {WS} {WS} && mount -o remount,bind,ro {WS}",
        "workspace-writable",
        lambda r: r.startswith("export NX_WORKSPACE_DATA_DIRECTORY="),
        _no_daemon,
        "shared",
    ),
    State(
        "workspace-of-another-uid",
        f"chown {PEER} {WS}",
        "workspace-writable",
        lambda r: r.startswith("export NX_WORKSPACE_DATA_DIRECTORY="),
        _no_daemon,
        "shared",
    ),
    # A configured workspace data directory another uid's, bound in read-only (a container's volume): the configuration
    # is fixed in the configuration, a directory of the user's own on a writable filesystem.
    State(
        "read-only-workspace-data-directory",
        f"install -d -o {PEER} /home/data && mount --bind /home/data /home/data && mount -o remount,bind,ro /home/data",
        "workspace-writable",
        lambda r: r.startswith("export NX_WORKSPACE_DATA_DIRECTORY=") and "/home/data" not in r,
        _no_daemon,
        "shared",
        env={"NX_WORKSPACE_DATA_DIRECTORY": "/home/data"},
    ),
    # The workspace's .nx another user's (not root's: never handed to you, never removed): the workspace cannot hold
    # Nx's data for you, and the data goes elsewhere.
    State(
        "dot-nx-of-another-uid",
        f"install -d -m 0755 -o {PEER} {WS}/.nx",
        "workspace-writable",
        lambda r: r.startswith("export NX_WORKSPACE_DATA_DIRECTORY="),
        _no_daemon,
        "shared",
        allowed_after=("workspace-data",),
    ),
]

CASES = [pytest.param(s, v, id=f"{s.name}-{v}") for s in STATES for v in s.versions]


@pytest.mark.tool("mkfs.exfat")
@pytest.mark.tool("mount.exfat-fuse")
@pytest.mark.parametrize(("state", "version"), CASES)
def test_the_filesystem_fails_nx_as_predicted_and_the_remedy_makes_the_real_daemon_answer(
    state: State, version: str
) -> None:
    """Failing (or degraded) before, as paths predicts; the remedy pasted; the real daemon then starts and answers."""
    proof = prove(state, version)
    check_proof(state, proof)
    finding = proof["finding"]
    assert finding["severity"] in ("warn", "error"), finding
    if state.name.startswith("exfat"):
        assert "fuseblk" in finding["message"] + (finding["hint"] or ""), finding  # the filesystem is named


ODD = f"{HOME}/my wörk's space"


@pytest.mark.parametrize("version", ["24.0.6", "23.3.2"])
def test_a_workspace_path_with_spaces_accents_and_an_apostrophe_is_no_finding_and_nx_works(version: str) -> None:
    """Nx copes with such a path: doctor finds nothing to say about the workspace data, and the real daemon answers."""
    state = State(
        "odd-workspace-name", "", "workspace-writable", lambda r: False, lambda b: False, "shared", workspace=ODD
    )
    proof = prove(state, version)
    assert proof["finding"] is None, proof["finding"]
    before = proof["before"]
    assert before["start"]["rc"] == 0 and before["answered"] > 0, json.dumps(before)[:2000]
    assert _socket(before).startswith(f"/tmp/.nx/{USER}/sockets/")
