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
    from ..core.wording import Advice
    from .binding_cache import Loadability

__all__ = ["CHECKS", "FINDING_DESCRIPTIONS", "FINDING_IDS", "TABLE", "Check", "gather", "run_checks", "status_of"]


class Check(t.NamedTuple):
    """One of doctor's checks: its key, the report group it prints under, the function, and each finding id it
    can produce with what that id judges (for ``--list-checks`` and ``--only``)."""

    key: str
    group: str
    run: t.Callable[[Context], list[Finding]]
    findings: t.Mapping[str, str]


#: Every check, once.  The order is the order of the report.
TABLE: tuple[Check, ...] = (
    Check(
        "environment",
        "Environment",
        check_environment,
        {"environment": "the Nx version, layout and platform nxsock judges for"},
    ),
    Check(
        "user-namespace",
        "Environment",
        when_daemon_runs(check_user_namespace),
        {
            "user-namespace": "where Nx puts its sockets inside a user-namespace sandbox (bwrap, srt, codex)",
            "sandbox-daemon": "whether Nx's client can use its daemon inside a user-namespace sandbox",
        },
    ),
    Check(
        "tmpdir",
        "Environment",
        check_tmpdir,
        {"tmpdir": "TMPDIR (TMP, TEMP): set, present, and a directory Nx can use"},
    ),
    Check(
        "unix-sockets",
        "Environment",
        check_unix_sockets,
        {"unix-sockets": "whether a policy (seccomp, a sandbox) refuses unix sockets here"},
    ),
    Check(
        "container",
        "Shared container",
        check_container,
        {"container": "the shared /tmp/.nx: root's or yours, mode 1777, a real directory"},
    ),
    Check(
        "levels",
        "Levels",
        check_levels,
        {
            "ancestry": "every directory above a level Nx uses: none another user could swap",
            "private-levels": "your own levels (per-user, sockets, native cache): yours, 0700, not links",
        },
    ),
    Check("outcome", "Outcome", check_outcome, {"outcome": "where Nx puts the sockets now, and why there"}),
    Check(
        "configuration",
        "Outcome",
        check_configuration,
        {"configuration": "NX_SOCKET_DIR and the other variables Nx reads: what Nx does with them"},
    ),
    Check(
        "workspace-data",
        "Outcome",
        check_workspace_data,
        {"workspace-data": "the workspace data directory (.nx/workspace-data): Nx can write it and trusts it"},
    ),
    Check(
        "cache-directory",
        "Outcome",
        check_cache_directory,
        {
            "cache-directory": "a configured task cache (NX_CACHE_DIRECTORY, nx.json cacheDirectory): "
                               "Nx trusts it at start-up"
        },
    ),
    Check(
        "shared-tmp",
        "Sockets",
        check_shared_tmp,
        {"shared-tmp": "the socket root shared beyond this pid namespace (containers sharing /tmp)"},
    ),
    Check(
        "path-budget",
        "Outcome",
        check_path_budget,
        {"path-budget": "each socket path within Nx's limit of 95 characters"},
    ),
    Check(
        "filesystem",
        "Outcome",
        check_filesystems,
        {"filesystem": "the filesystem under the socket directory: it can hold unix sockets and keep 0700"},
    ),
    Check(
        "workspace-writable",
        "Outcome",
        check_workspace_writable,
        {"workspace-writable": "whether Nx can create its workspace data directory (.nx/workspace-data/d)"},
    ),
    Check("sockets", "Sockets", check_sockets, {"sockets": "the socket files: who listens, their mode, dead ones"}),
    Check(
        "socket-owner",
        "Sockets",
        check_socket_owner,
        {"socket-owner": "a socket another user owns where yours should be"},
    ),
    Check(
        "daemon-enabled",
        "Daemon",
        check_daemon_enabled,
        {"daemon-enabled": "whether Nx starts its daemon here, and why not"},
    ),
    Check(
        "daemon",
        "Daemon",
        when_daemon_runs(check_daemon),
        {
            "daemon-record": "the daemon's record: its pid alive, its version, whether the client dials it",
            "daemon-disabled": "the marker Nx writes when it turned the daemon off, and its reason",
            "daemon-error": "the daemon's last error in its log",
        },
    ),
    Check(
        "binding",
        "Binding",
        check_binding,
        {"binding": "the native binding this platform needs: installed and loadable"},
    ),
    Check(
        "native-cache",
        "Native cache",
        check_native_cache,
        {"native-cache": "the binding cache: its directory trusted, the copy fresh"},
    ),
    Check(
        "leftovers",
        "Leftovers",
        check_leftovers,
        {"leftovers": "what reset or cache prune would remove: dead sockets, old cache entries"},
    ),
    Check(
        "boot-persistence",
        "Boot",
        check_boot_persistence,
        {"boot-persistence": "whether /tmp/.nx survives a reboot (a tmpfiles.d rule)"},
    ),
)

#: Views of :data:`TABLE` for its readers: key → (group, check); key → its finding ids; finding id → what it judges.
CHECKS: dict[str, tuple[str, t.Callable[[Context], list[Finding]]]] = {c.key: (c.group, c.run) for c in TABLE}
FINDING_IDS: dict[str, tuple[str, ...]] = {c.key: tuple(c.findings) for c in TABLE}
FINDING_DESCRIPTIONS: dict[str, str] = {i: text for c in TABLE for i, text in c.findings.items()}


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

    def removal(path: str) -> Advice:
        return remedies.offer(entry_removal(path))

    triple = host_triple()
    binding = find_binding(env, view, triple, resolution.rules)
    presence = None if env.simulated else binding_presence(env, view, triple, binding is not None)
    listing = list_cache(resolution, view, binding)
    verdict = verify(listing, removal, resolution.rules, env.nx_version) if env.nx_version is not None else None
    leftovers = len(prune_plan(listing, env.nx_version, env.uid))
    dead, _ = reset(resolution, dry_run=True)
    legacy_all, _ = reset(resolution, dry_run=True, legacy=True)
    legacy = [i for i in legacy_all if i.what.startswith("legacy")]
    sockets = survey_sockets(resolution, view)
    room = _free_bytes(resolution.native_cache.dir) if not env.simulated and resolution.native_cache.dir else None
    size = binding.size if binding is not None else None
    unix = _unix_socket_refusal() if not env.simulated else None
    loads = None if env.simulated else _loadability(resolution, view, binding.path if binding is not None else None)
    return Context(
        resolution,
        view,
        remedies,
        verdict,
        leftovers,
        dead,
        legacy,
        sockets,
        sandbox,
        room,
        size,
        unix,
        loads,
        presence,
    )


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
    """Bytes an unprivileged user may still write on the filesystem holding *directory* (or its nearest existing
    level)."""
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
