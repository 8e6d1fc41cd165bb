"""Whether Nx's client will dial its daemon, here and inside an unprivileged user-namespace sandbox.

From Nx 24.0.5 the client judges a recorded daemon socket before dialling
it: every level above the socket's directory must be the user's or root's,
and the directory itself the user's and private (docs/behaviour.md#release-differences).  Inside
bubblewrap, srt or ``codex sandbox`` only the caller's uid is mapped, so ``/``
shows as uid 65534 and the client refuses every socket, whatever the
sandbox allows (docs/behaviour.md#user-namespace-sandboxes).  What works there is a daemonless run,
``NX_DAEMON=false``; a run that tries the daemon may leave the
``disabled`` marker, which turns the daemon off outside the sandbox too.

Pure: reads a view, returns values; the sentences nxsock prints about it
are here too, next to the rule they explain.
"""

# No ``from __future__ import annotations`` here: typing compiles each string annotation of a NamedTuple
# field when the class is made, and this module is imported by every ``paths --json``.
import typing as t

from ._pathname import dirname, join
from .fsview import OVERFLOW_UID, Entry, FsView, UserNamespaceView, errno_name
from .guards import Refusal, Simulation, walk_ancestry
from .releases import rules_for

if t.TYPE_CHECKING:
    from .remedy import Remedy

__all__ = [
    "CLEAR_MARKER",
    "INSIDE_HINT",
    "RUN_INSIDE",
    "SandboxDaemon",
    "client_checks_socket_ancestry",
    "client_refusal",
    "inside_advice",
    "inside_user_namespace",
    "judge_sandbox",
    "marker_warning",
    "run_inside_remedy",
    "sandbox_statement",
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


#: Advice for a refusal of a level that shows as 65534 only because nxsock runs inside such a sandbox.
INSIDE_HINT = ("Inside this sandbox every owner but you, root included, shows as uid 65534, so no directory outside your own "
               "passes and no NX_SOCKET_DIR helps; Nx uses the workspace fallback there, which the sandbox must let it write "
               "(outside, `nxsock paths --format FORMAT` prints the entries).")


#: Advice for a level the sandbox mounts read-only.
READ_ONLY_HINT = ("This sandbox mounts it read-only, and no variable set inside changes that; allow it in the sandbox's "
                  "configuration (outside, `nxsock paths --format FORMAT` prints the entries).")


def inside_advice(refusal: Refusal, verdict: SandboxDaemon | None) -> str | None:
    """Advice in place of a remedy for a refusal that is only the sandbox's doing, while nxsock runs inside one.

    A level shown as 65534, or a read-only bind: no ``NX_SOCKET_DIR`` or
    ``chown`` typed inside fixes either.
    """
    if verdict is None or not verdict.inside:
        return None
    if refusal.uid == OVERFLOW_UID:
        return INSIDE_HINT
    if refusal.errno == "EROFS":
        return READ_ONLY_HINT
    return None


def _owner(refusal: Refusal) -> str:
    return f"belongs to uid {refusal.uid}" if refusal.uid is not None else f"is refused ({refusal.kind})"


def sandbox_statement(verdict: SandboxDaemon, nx_version: str | None, sandbox: str | None = None) -> str:
    """One sentence: Nx cannot use its daemon in that sandbox, and why."""
    release = f"Nx {nx_version}" if nx_version else "Nx (24.0.5 or later assumed)"
    where = "in this sandbox" if verdict.inside else (f"inside {sandbox}" if sandbox else "inside bubblewrap, srt or codex sandbox")
    why = ""
    if verdict.refusal is not None:
        why = f": {verdict.refusal.dir} {_owner(verdict.refusal)} there (every owner but you, root included, shows as 65534)"
    return (f"{release} cannot use its daemon {where}. From 24.0.5 its client refuses a daemon socket unless "
            f"every level above it is yours or root's{why}, so it refuses every socket, whatever the sandbox allows; "
            "NX_SOCKET_DIR does not change that.")


def marker_warning(verdict: SandboxDaemon) -> str:
    """What a run inside that tries the daemon costs, and how to clear it outside."""
    return (f"Run Nx there with {RUN_INSIDE}. A run that tries the daemon waits about a minute per attempt, "
            f"then may write {verdict.marker}, which turns the daemon off outside the sandbox too; "
            f"clear it outside with `{CLEAR_MARKER}` (or `nx reset`).")
