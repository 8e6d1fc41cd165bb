"""``doctor``: every level Nx depends on, audited, each problem with the command that fixes it.

Each check is a function of one :class:`Context` (the resolution, the view,
and what was found on disk) returning :class:`Finding` values with a stable
id.  Checks only read: sockets are probed with a bounded connect, files are
opened non-blocking, nothing is created, changed or removed."""

from __future__ import annotations

import typing as t

from ..core._pathname import dirname
from ..core.fsview import FsView
from ..core.resolver import Resolution
from .checks_daemon import check_daemon_enabled, when_daemon_runs
from .checks_host import (
    check_binding,
    check_boot_persistence,
    check_cache_directory,
    check_leftovers,
    check_native_cache,
    check_shared_tmp,
    check_workspace_data,
)
from .checks_levels import (
    check_configuration,
    check_container,
    check_environment,
    check_filesystems,
    check_levels,
    check_outcome,
    check_path_budget,
    check_tmpdir,
    check_user_namespace,
    check_workspace_writable,
)
from .checks_sockets import check_daemon, check_socket_owner, check_sockets, check_unix_sockets, survey_sockets
from .findings import Context, Finding

if t.TYPE_CHECKING:
    from .binding_cache import Loadability

__all__ = ["CHECKS", "FINDING_DESCRIPTIONS", "FINDING_IDS", "gather", "run_checks", "status_of"]


#: id → (group, check).  The order is the order of the report.
CHECKS: dict[str, tuple[str, t.Callable[[Context], list[Finding]]]] = {
    "environment": ("Environment", check_environment),
    "user-namespace": ("Environment", when_daemon_runs(check_user_namespace)),
    "tmpdir": ("Environment", check_tmpdir),
    "unix-sockets": ("Environment", check_unix_sockets),
    "container": ("Shared container", check_container),
    "levels": ("Levels", check_levels),
    "outcome": ("Outcome", check_outcome),
    "configuration": ("Outcome", check_configuration),
    "workspace-data": ("Outcome", check_workspace_data),
    "cache-directory": ("Outcome", check_cache_directory),
    "shared-tmp": ("Sockets", check_shared_tmp),
    "path-budget": ("Outcome", check_path_budget),
    "filesystem": ("Outcome", check_filesystems),
    "workspace-writable": ("Outcome", check_workspace_writable),
    "sockets": ("Sockets", check_sockets),
    "socket-owner": ("Sockets", check_socket_owner),
    "daemon-enabled": ("Daemon", check_daemon_enabled),
    "daemon": ("Daemon", when_daemon_runs(check_daemon)),
    "binding": ("Binding", check_binding),
    "native-cache": ("Native cache", check_native_cache),
    "leftovers": ("Leftovers", check_leftovers),
    "boot-persistence": ("Boot", check_boot_persistence),
}


#: Finding ids each check can produce, for --list-checks and --only.
FINDING_IDS = {
    "environment": ("environment",), "user-namespace": ("user-namespace", "sandbox-daemon"), "tmpdir": ("tmpdir",),
    "unix-sockets": ("unix-sockets",), "workspace-data": ("workspace-data",),
    "container": ("container",), "levels": ("ancestry", "private-levels"), "outcome": ("outcome",),
    "configuration": ("configuration",), "path-budget": ("path-budget",), "sockets": ("sockets",),
    "socket-owner": ("socket-owner",), "daemon-enabled": ("daemon-enabled",), "daemon": ("daemon-record", "daemon-disabled", "daemon-error"),
    "binding": ("binding",), "native-cache": ("native-cache",), "leftovers": ("leftovers",), "boot-persistence": ("boot-persistence",),
    "filesystem": ("filesystem",), "workspace-writable": ("workspace-writable",),
    "cache-directory": ("cache-directory",),
    "shared-tmp": ("shared-tmp",),
}


#: What each finding id judges, one line each, for ``--list-checks``.
FINDING_DESCRIPTIONS = {
    "environment": "the Nx version, layout and platform nxsock judges for",
    "user-namespace": "where Nx puts its sockets inside a user-namespace sandbox (bwrap, srt, codex)",
    "sandbox-daemon": "whether Nx's client can use its daemon inside a user-namespace sandbox",
    "tmpdir": "TMPDIR (TMP, TEMP): set, present, and a directory Nx can use",
    "unix-sockets": "whether a policy (seccomp, a sandbox) refuses unix sockets here",
    "workspace-data": "the workspace data directory (.nx/workspace-data): Nx can write it and trusts it",
    "container": "the shared /tmp/.nx: root's or yours, mode 1777, a real directory",
    "ancestry": "every directory above a level Nx uses: none another user could swap",
    "private-levels": "your own levels (per-user, sockets, native cache): yours, 0700, not links",
    "outcome": "where Nx puts the sockets now, and why there",
    "configuration": "NX_SOCKET_DIR and the other variables Nx reads: what Nx does with them",
    "path-budget": "each socket path within Nx's limit of 95 characters",
    "sockets": "the socket files: who listens, their mode, dead ones",
    "socket-owner": "a socket another user owns where yours should be",
    "daemon-enabled": "whether Nx starts its daemon here, and why not",
    "daemon-record": "the daemon's record: its pid alive, its version, whether the client dials it",
    "daemon-disabled": "the marker Nx writes when it turned the daemon off, and its reason",
    "daemon-error": "the daemon's last error in its log",
    "binding": "the native binding this platform needs: installed and loadable",
    "filesystem": "the filesystem under the socket directory: it can hold unix sockets and keep 0700",
    "workspace-writable": "whether Nx can create its workspace data directory (.nx/workspace-data/d)",
    "native-cache": "the binding cache: its directory trusted, the copy fresh",
    "leftovers": "what reset or cache prune would remove: dead sockets, old cache entries",
    "boot-persistence": "whether /tmp/.nx survives a reboot (a tmpfiles.d rule)",
    "cache-directory": "a configured task cache (NX_CACHE_DIRECTORY, nx.json cacheDirectory): Nx trusts it at start-up",
    "shared-tmp": "the socket root shared beyond this pid namespace (containers sharing /tmp)",
}


def run_checks(ctx: Context, only: t.Collection[str] = ()) -> list[tuple[str, Finding]]:
    """Every check (or those whose finding ids are in *only*), as ``(group, finding)`` in report order."""
    results = []
    for name, (group, check) in CHECKS.items():
        if only and not set(FINDING_IDS[name]) & set(only):
            continue
        for finding in check(ctx):
            if not only or finding.id in only:
                results.append((group, finding))
    return results


def status_of(findings: t.Iterable[Finding], strict: bool) -> str:
    severities = {f.severity for f in findings}
    if "error" in severities:
        return "error"
    if "warn" in severities:
        return "error" if strict else "warn"
    return "ok"


def gather(resolution: Resolution, view: FsView, sandbox: str | None = None, *, pasted_by_root: bool = False,
           nxsock_for_root: str = "nxsock") -> Context:
    """Everything the checks read besides the resolution: the cache's state and what a reset would remove.

    *pasted_by_root*: root audits for another uid (``doctor --user``) and will
    paste the remedies, so none may rest on a level that uid could swap.
    *nxsock_for_root*: how a ``sudo`` remedy names nxsock (:mod:`nxsock.core.program`).
    """
    from ..act.cleanup import reset
    from ..core.wording import context_for
    from .binding_cache import entry_removal, find_binding, host_triple, list_cache, prune_plan, verify
    from .binding_presence import binding_presence
    env = resolution.environment
    remedies = context_for(resolution, view, pasted_by_root=pasted_by_root, nxsock_for_root=nxsock_for_root)

    def remove_command(path: str) -> str | None:
        return remedies.offer(entry_removal(path)).command

    triple = host_triple()
    binding = find_binding(env, view, triple, resolution.rules)
    presence = None if env.simulated else binding_presence(env, view, triple, binding is not None)
    listing = list_cache(resolution, view, binding)
    verdict = verify(listing, remove_command, resolution.rules, env.nx_version) if env.nx_version is not None else None
    leftovers = len(prune_plan(listing, env.nx_version, env.uid))
    dead, _ = reset(resolution, dry_run=True)
    legacy_all, _ = reset(resolution, dry_run=True, legacy=True)
    legacy = [i for i in legacy_all if i.what.startswith("legacy")]
    sockets = survey_sockets(resolution, view)
    room = _free_bytes(resolution.native_cache.dir) if not env.simulated and resolution.native_cache.dir else None
    size = binding.size if binding is not None else None
    unix = _unix_socket_refusal() if not env.simulated else None
    loads = None if env.simulated else _loadability(resolution, view, binding.path if binding is not None else None)
    return Context(resolution, view, remedies, verdict, leftovers, dead, legacy, sockets, sandbox, room, size, unix, loads, presence)


def _loadability(resolution: Resolution, view: FsView, binding: str | None) -> Loadability | None:
    """Whether this machine's mounts let Nx load its binding (``noexec``), judged from the mount table."""
    from ..core.mounts import parse_mountinfo
    from .binding_cache import loadability
    from .binding_presence import real_level

    table = view.read_text("/proc/self/mountinfo")
    if isinstance(table, int):
        return None
    cache = resolution.native_cache
    return loadability(resolution.rules, real_level(view, cache.dir), cache.bypass_reason is not None,
                       real_level(view, binding), parse_mountinfo(table))


def _free_bytes(directory: str) -> int | None:
    """Bytes an unprivileged user may still write on the filesystem holding *directory* (or its nearest existing level)."""
    import os

    level = directory
    while True:
        try:
            stats = os.statvfs(level)
            return stats.f_bavail * stats.f_frsize
        except FileNotFoundError:
            if dirname(level) == level:
                return None
            level = dirname(level)
        except (OSError, ValueError):
            return None


def _unix_socket_refusal() -> str | None:
    """The errno name when creating an (unbound) unix socket fails here; nothing is bound or left behind."""
    import errno
    import socket

    if not hasattr(socket, "AF_UNIX"):
        return None
    try:
        socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).close()
    except OSError as exc:
        return errno.errorcode.get(exc.errno or 0, "EPERM")
    return None
