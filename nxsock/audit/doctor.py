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
from ..core.wording import FINDING_JUDGES
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


def _judges(*finding_ids: str) -> dict[str, str]:
    """What each finding id judges, worded in ``core/wording.py``."""
    return {finding_id: FINDING_JUDGES[finding_id] for finding_id in finding_ids}


#: Every check, once.  The order is the order of the report.
TABLE: tuple[Check, ...] = (
    Check(
        "environment",
        "Environment",
        check_environment,
        _judges("environment"),
    ),
    Check(
        "user-namespace",
        "Environment",
        when_daemon_runs(check_user_namespace),
        _judges("user-namespace", "sandbox-daemon"),
    ),
    Check(
        "tmpdir",
        "Environment",
        check_tmpdir,
        _judges("tmpdir"),
    ),
    Check(
        "unix-sockets",
        "Environment",
        check_unix_sockets,
        _judges("unix-sockets"),
    ),
    Check(
        "container",
        "Shared container",
        check_container,
        _judges("container"),
    ),
    Check(
        "levels",
        "Levels",
        check_levels,
        _judges("ancestry", "private-levels"),
    ),
    Check("outcome", "Outcome", check_outcome, _judges("outcome")),
    Check(
        "configuration",
        "Outcome",
        check_configuration,
        _judges("configuration"),
    ),
    Check(
        "workspace-data",
        "Outcome",
        check_workspace_data,
        _judges("workspace-data"),
    ),
    Check(
        "cache-directory",
        "Outcome",
        check_cache_directory,
        _judges("cache-directory"),
    ),
    Check(
        "shared-tmp",
        "Sockets",
        check_shared_tmp,
        _judges("shared-tmp"),
    ),
    Check(
        "path-budget",
        "Outcome",
        check_path_budget,
        _judges("path-budget"),
    ),
    Check(
        "filesystem",
        "Outcome",
        check_filesystems,
        _judges("filesystem"),
    ),
    Check(
        "workspace-writable",
        "Outcome",
        check_workspace_writable,
        _judges("workspace-writable"),
    ),
    Check("sockets", "Sockets", check_sockets, _judges("sockets")),
    Check(
        "socket-owner",
        "Sockets",
        check_socket_owner,
        _judges("socket-owner"),
    ),
    Check(
        "daemon-enabled",
        "Daemon",
        check_daemon_enabled,
        _judges("daemon-enabled"),
    ),
    Check(
        "daemon",
        "Daemon",
        when_daemon_runs(check_daemon),
        _judges("daemon-record", "daemon-disabled", "daemon-error"),
    ),
    Check(
        "binding",
        "Binding",
        check_binding,
        _judges("binding"),
    ),
    Check(
        "native-cache",
        "Native cache",
        check_native_cache,
        _judges("native-cache"),
    ),
    Check(
        "leftovers",
        "Leftovers",
        check_leftovers,
        _judges("leftovers"),
    ),
    Check(
        "boot-persistence",
        "Boot",
        check_boot_persistence,
        _judges("boot-persistence"),
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
