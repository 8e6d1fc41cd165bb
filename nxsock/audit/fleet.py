"""The machine's verdict for an admin: the shared container, and each user's audit reduced to what a fleet watches.

``doctor --format openmetrics`` and ``doctor --all-users`` report values of
this module: :class:`UserVerdict` (one user's status, findings by id and
severity, whether the sockets were demoted, the stale state, the binding
cache), :func:`container_state` (``/tmp/.nx`` as root's provisioning judges
it, the same for every user) and :class:`FleetVerdict` (all of it, with the
time of the check).  Who is audited is decided here too: each uid named by an
entry of ``/tmp/.nx`` or owning one — listed through a descriptor opened
``O_NOFOLLOW``, never through a link — and those ``--users`` names.  Nothing
here changes the disk or follows another user's link.
"""

from __future__ import annotations

import os
import re
import stat
import typing as t

from ..core import wording
from ..core.layout import CONTAINER
from ..core.releases import is_version
from .findings import Finding, Severity

if t.TYPE_CHECKING:
    from .findings import Context

__all__ = [
    "CONTAINER_STATES",
    "SEVERITIES",
    "USER_STATUSES",
    "ContainerState",
    "FleetVerdict",
    "UserAudit",
    "UserSelection",
    "UserVerdict",
    "container_state",
    "parse_users",
    "users_to_audit",
    "verdict_from_json",
    "verdict_json",
    "verdict_of",
]

#: ``/tmp/.nx`` as root's provisioning judges it: only ``ok`` lets every user have tier 1.
ContainerState = t.Literal[
    "ok", "absent", "symlink", "not-a-directory", "user-owned", "not-sticky", "not-shared", "not-inspectable"
]
CONTAINER_STATES: tuple[ContainerState, ...] = t.get_args(ContainerState)
SEVERITIES: tuple[Severity, ...] = t.get_args(Severity)
#: One user's audit: its worst severity, or ``failed`` where the audit could not be made (the child was ended).
UserStatus = t.Literal["ok", "warn", "error", "failed"]
USER_STATUSES: tuple[UserStatus, ...] = t.get_args(UserStatus)

#: The most uids one ``--users`` range may name: each is one audit, run one after another.
MAX_RANGE = 1 << 16
UID_MAX = 2**32 - 2
_UID = re.compile(r"(?:0|[1-9][0-9]{0,9})")


def container_state(path: str = CONTAINER) -> ContainerState:
    """``/tmp/.nx`` by ``lstat``: a real ``root`` directory, others-writable and sticky, is the only ``ok``."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return "absent"
    except OSError:
        return "not-inspectable"
    if stat.S_ISLNK(st.st_mode):
        return "symlink"
    if not stat.S_ISDIR(st.st_mode):
        return "not-a-directory"
    if st.st_uid != 0:
        return "user-owned"
    mode = stat.S_IMODE(st.st_mode)
    if mode & 0o022 and not mode & 0o1000:
        return "not-sticky"
    if mode & 0o003 != 0o003:  # others cannot create their own level beneath it: every user but root is demoted
        return "not-shared"
    return "ok"


class UserVerdict(t.NamedTuple):
    """One user's audit, as ``doctor`` ran it for that user, reduced to what a fleet watches."""

    uid: int
    status: str  # ok, warn or error (warnings are errors with --strict)
    exit_code: int
    findings: tuple[tuple[str, str], ...]  # (id, severity) of each finding, in report order
    socket_tier: str | None  # configured, shared, home, workspace, temp; None where Nx finds none
    demoted: bool  # the sockets are not where they belong: the home's or the workspace's fallback
    stale_entries: int  # what ``nxsock reset`` would remove (dead per-run directories, stale sockets, the marker)
    stale_bytes: int
    legacy_entries: int  # leftovers of the legacy layout ``reset --legacy`` would remove
    cache_entries: int  # entries of this user's binding cache
    cache_bytes: int
    cache_reclaimable_bytes: int  # what ``cache prune`` would free
    nx_version: str  # the release whose rules the prediction followed
    nx_version_source: str  # installed, --nx-version, or assumed (none installed, or newer than any known)
    document: dict[str, t.Any]  # the ``doctor --json`` document of the same audit


def verdict_of(
    ctx: Context, results: t.Sequence[tuple[str, Finding]], status: str, exit_code: int, document: dict[str, t.Any]
) -> UserVerdict:
    """The fleet's view of one audit: *results* and *ctx* as ``doctor`` gathered them for this user."""
    from .binding_cache import list_cache, prune_plan

    resolution = ctx.resolution
    env = resolution.environment
    tier = resolution.socket_root.tier
    # A cache Nx refuses (a level another user owns, or a link) is not listed: nothing is read through it.
    listing = None if resolution.native_cache.refusals else list_cache(resolution, ctx.view, None)
    plan = prune_plan(listing, env.nx_version, env.uid) if listing is not None else []
    installed = env.nx_version is not None and not resolution.rules.assumed
    removable = [i for i in ctx.dead_state if i.outcome == "removed"]  # what a reset would remove, as doctor counts it
    return UserVerdict(
        uid=env.uid,
        status=status,
        exit_code=exit_code,
        findings=tuple((f.id, f.severity) for _, f in results),
        socket_tier=tier,
        demoted=tier in ("home", "workspace"),
        stale_entries=sum(i.entries for i in removable),
        stale_bytes=sum(i.freed for i in removable),
        legacy_entries=sum(i.entries for i in ctx.legacy_state if i.outcome == "removed"),
        cache_entries=len(listing.entries) if listing is not None else 0,
        cache_bytes=listing.total_size if listing is not None else 0,
        cache_reclaimable_bytes=sum(entry.size for entry, _ in plan),
        nx_version=env.nx_version if installed and env.nx_version else resolution.rules.release,
        nx_version_source=(env.nx_version_source or "installed") if installed else "assumed",
        document=document,
    )


def verdict_json(verdict: UserVerdict) -> dict[str, t.Any]:
    """*verdict* as JSON, to cross the pipe from the audited user's child to root."""
    return {**verdict._asdict(), "findings": [list(pair) for pair in verdict.findings]}


def verdict_from_json(value: t.Any) -> UserVerdict | None:
    """What a child sent back, checked field by field (it ran as the audited user); ``None`` for anything else."""
    if not isinstance(value, dict) or set(value) != set(UserVerdict._fields):
        return None
    ints = (
        "uid",
        "exit_code",
        "stale_entries",
        "stale_bytes",
        "legacy_entries",
        "cache_entries",
        "cache_bytes",
        "cache_reclaimable_bytes",
    )
    if not all(isinstance(value[k], int) and not isinstance(value[k], bool) and value[k] >= 0 for k in ints):
        return None
    findings = value["findings"]
    if not isinstance(findings, list) or not all(
        isinstance(f, list) and len(f) == 2 and all(isinstance(x, str) for x in f) and f[1] in SEVERITIES
        for f in findings
    ):
        return None
    if value["status"] not in ("ok", "warn", "error") or not isinstance(value["demoted"], bool):
        return None
    if not isinstance(value["document"], dict) or value["nx_version_source"] not in (
        "installed",
        "--nx-version",
        "assumed",
    ):
        return None
    if not isinstance(value["nx_version"], str) or not is_version(
        value["nx_version"]
    ):  # a metric label: npm's grammar only
        return None
    if value["socket_tier"] is not None and value["socket_tier"] not in (
        "configured",
        "shared",
        "home",
        "workspace",
        "temp",
    ):
        return None
    return UserVerdict(**{**value, "findings": tuple((f[0], f[1]) for f in findings)})


class UserSelection(t.NamedTuple):
    """``--users``: uids audited whatever they have, and ranges of which only accounts and users with state are."""

    uids: tuple[int, ...]
    ranges: tuple[tuple[int, int], ...]


def parse_users(spec: str) -> UserSelection:
    """``1000,1002-1010``: uids, and inclusive ranges of at most :data:`MAX_RANGE` uids; ``ValueError`` says why not."""
    uids: list[int] = []
    ranges: list[tuple[int, int]] = []
    for part in spec.split(","):
        part = part.strip()
        low, dash, high = part.partition("-")
        if not _UID.fullmatch(low) or (dash and not _UID.fullmatch(high)):
            raise ValueError(wording.not_a_uid_range(part))
        first, last = int(low), int(high) if dash else int(low)
        if last > UID_MAX:
            raise ValueError(wording.uid_too_high(part, UID_MAX))
        if last < first:
            raise ValueError(wording.uid_range_empty(part))
        if last - first + 1 > MAX_RANGE:
            raise ValueError(wording.uid_range_too_long(part, MAX_RANGE))
        if dash:
            ranges.append((first, last))
        else:
            uids.append(first)
    return UserSelection(tuple(uids), tuple(ranges))


def _state_owners(path: str = CONTAINER) -> dict[int, set[str]]:
    """Each uid an entry of *path* is named after or owned by, with why; never through a link, never blocking."""
    found: dict[int, set[str]] = {}
    try:
        st = os.lstat(path)
    except OSError:
        return found
    if stat.S_ISDIR(st.st_mode) and st.st_uid != 0:
        found.setdefault(st.st_uid, set()).add("owns /tmp/.nx")
    flags = (
        os.O_RDONLY
        | os.O_DIRECTORY
        | getattr(os, "O_NOFOLLOW", 0)
        | getattr(os, "O_NONBLOCK", 0)
        | getattr(os, "O_CLOEXEC", 0)
    )
    try:
        fd = os.open(path, flags)
    except OSError:
        return found
    try:
        for name in os.listdir(fd):
            if _UID.fullmatch(name) and int(name) <= UID_MAX:
                found.setdefault(int(name), set()).add("named")
            try:
                entry = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except OSError:  # gone since the listing, or not inspectable: its name has said what it can
                continue
            if entry.st_uid != 0:  # root's entries are provisioning's (or sudo's, named 0 then)
                found.setdefault(entry.st_uid, set()).add("owns an entry")
    finally:
        os.close(fd)
    return found


class UserAudit(t.NamedTuple):
    """One user to audit, why (``named``, ``owns an entry``, ``owns /tmp/.nx``, ``asked``), and the outcome."""

    uid: int
    name: str | None  # the passwd name, shown to people and in JSON, never a metric label
    reasons: tuple[str, ...]
    verdict: UserVerdict | None = None
    failure: str | None = None  # why the audit could not be made

    @property
    def status(self) -> UserStatus:
        if self.verdict is None:
            return "failed"
        return t.cast(UserStatus, self.verdict.status)


def users_to_audit(selection: UserSelection | None, path: str = CONTAINER) -> list[UserAudit]:
    """Every user with state under *path*, and those *selection* names (a range: its accounts and users with state)."""
    import pwd

    reasons = _state_owners(path)
    wanted: dict[int, set[str]] = {uid: set(why) for uid, why in reasons.items()}
    if selection is not None:
        for uid in selection.uids:
            wanted.setdefault(uid, set()).add("asked")
        if selection.ranges:
            accounts = {entry.pw_uid for entry in pwd.getpwall()}
            for first, last in selection.ranges:
                for uid in accounts | set(reasons):
                    if first <= uid <= last:
                        wanted.setdefault(uid, set()).add("asked")
    audits = []
    for uid in sorted(wanted):
        try:
            name: str | None = pwd.getpwuid(uid).pw_name
        except KeyError:
            name = None
        audits.append(UserAudit(uid, name, tuple(sorted(wanted[uid]))))
    return audits


class FleetVerdict(t.NamedTuple):
    """The machine's verdict: the container, each user audited, when, how long it took, and nxsock's version."""

    checked_at: float  # seconds since the epoch
    duration: float  # seconds
    container: ContainerState
    users: tuple[UserAudit, ...]
    nxsock_version: str
    all_users: bool  # --all-users: the users are a census; otherwise one audit, of the user running (or --user)

    @property
    def status(self) -> UserStatus:
        """The worst status of any user (``failed`` counts as an error where nothing else is worse)."""
        order = {"ok": 0, "warn": 1, "failed": 2, "error": 3}
        worst = max((order[u.status] for u in self.users), default=0)
        return t.cast(UserStatus, next(s for s, rank in order.items() if rank == worst))
