"""Whether Nx's client will dial its daemon, here and inside an unprivileged user-namespace sandbox.

From Nx 24.0.5 the client judges a recorded daemon socket before dialling
it: every level above the socket's directory must be the user's or root's,
and the directory itself the user's and private (docs/behaviour.md#release-differences).  Inside
bubblewrap, srt or ``codex sandbox`` only the caller's uid is mapped, so ``/``
shows as uid 65534 and the client refuses every socket, whatever the
sandbox allows (docs/behaviour.md#user-namespace-sandboxes).  What works there is a daemonless run,
``NX_DAEMON=false``; a run that tries the daemon may leave the
``disabled`` marker, which turns the daemon off outside the sandbox too.

Pure: reads a view, returns values.  The sentences nxsock prints about it
are in core/wording.py, with every other sentence.
"""

# No ``from __future__ import annotations`` here: typing compiles each string annotation of a NamedTuple
# field when the class is made, and this module is imported by every ``paths --json``.
import typing as t

from ._pathname import dirname, join
from .fsview import Entry, FsView, UserNamespaceView, errno_name
from .guards import Refusal, Simulation, walk_ancestry
from .releases import rules_for

if t.TYPE_CHECKING:
    from .remedy import Remedy

__all__ = [
    "CLEAR_MARKER",
    "RUN_INSIDE",
    "SandboxDaemon",
    "client_checks_socket_ancestry",
    "client_refusal",
    "inside_user_namespace",
    "judge_sandbox",
    "run_inside_remedy",
]

#: What a command run inside such a sandbox needs: no daemon.
RUN_INSIDE = "NX_DAEMON=false"
RUN_INSIDE_VARIABLE = ("NX_DAEMON", "false")
#: What clears the marker a run inside may leave, run outside the sandbox (``nx reset`` clears it too).
CLEAR_MARKER = "nxsock reset --daemon-marker"


def run_inside_remedy(changes: str) -> "Remedy":
    """``export NX_DAEMON=false`` as a remedy value, for the policy to vet wherever a sandbox's daemon is unusable."""
    from .remedy import Export, Remedy

    name, value = RUN_INSIDE_VARIABLE
    return Remedy((Export(variable=name, value=value),), changes)


def client_checks_socket_ancestry(nx_version: str | None) -> bool:
    """Whether this release's client judges the recorded socket before dialling it: Nx 24.0.5 and later.

    Read from the release table (``nxsock.core.releases``); an unknown version is
    taken as the newest, as the layout is.

    >>> client_checks_socket_ancestry("24.0.2"), client_checks_socket_ancestry("24.0.5")
    (False, True)
    >>> client_checks_socket_ancestry("23.3.2"), client_checks_socket_ancestry(None)
    (False, True)
    """
    return rules_for(nx_version).client_socket_check


def inside_user_namespace(view: FsView) -> str | None:
    """The uid map, when this process runs in a user namespace that maps less than everything; else ``None``."""
    text = view.read_text("/proc/self/uid_map")
    if isinstance(text, int):
        return None
    mapping = " ".join(text.split())
    return None if mapping in ("", "0 0 4294967295") else mapping


def client_refusal(view: FsView, uid: int, gid: int, socket_path: str) -> Refusal | None:
    """What Nx's client (24.0.5 and later) says of *socket_path* before dialling: ``None`` where it dials.

    The levels above the socket's directory must pass the ancestry walk; the
    directory itself must be a real directory of the user's with no group or
    other bits.
    """
    directory = dirname(socket_path)
    refusal = walk_ancestry(Simulation(view, uid, gid), dirname(directory), create=False)
    if refusal is not None:
        return refusal
    entry = view.lstat(directory)
    if isinstance(entry, int):
        return Refusal("not-inspectable", directory, errno=errno_name(entry))
    if not isinstance(entry, Entry) or not entry.is_dir:
        return Refusal("not-a-directory", directory, symlink=entry.is_link)
    if entry.uid != uid:
        return Refusal("foreign-owner", directory, uid=entry.uid)
    if entry.mode & 0o077:
        return Refusal("not-private", directory, mode=entry.mode)
    return None


class SandboxDaemon(t.NamedTuple):
    """Whether Nx's daemon can serve a client inside a user-namespace sandbox (Linux)."""

    inside: bool  # nxsock itself runs inside one now
    client_checks: bool  # this release's client judges the socket before dialling
    usable: bool
    refusal: Refusal | None  # why the client refuses every socket there
    marker: str  # <workspace-data>/d/disabled, which a run inside may leave


def judge_sandbox(view: FsView, uid: int, gid: int, nx_version: str | None, daemon_dir: str) -> SandboxDaemon:
    """Judge the daemon socket the way the client would, over the sandbox's view.

    Inside a sandbox that view is the live one; outside it is the host's with
    every foreign owner shown as 65534.  The socket is taken in the workspace
    fallback, where Nx 24 puts it there; the walk from ``/`` decides anyway.
    """
    inside = inside_user_namespace(view) is not None
    sandbox_view = view if inside else UserNamespaceView(view, uid, gid)
    checks = client_checks_socket_ancestry(nx_version)
    refusal = None
    if checks:
        refusal = walk_ancestry(Simulation(sandbox_view, uid, gid), daemon_dir, create=False)
        if refusal is not None and refusal.kind == "not-inspectable" and refusal.errno == "ENOENT":
            refusal = None  # every level above the missing one passed: the daemon makes the rest its own
    return SandboxDaemon(inside, checks, refusal is None, refusal, join(daemon_dir, "disabled"))
