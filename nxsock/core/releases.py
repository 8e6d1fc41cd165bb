"""Every Nx release nxsock knows, and each rule that changed between them (docs/behaviour.md#release-differences).

The rules Nx follows for its sockets and binding cache changed patch by
patch, not only between generations.  They live here, once, as data: a
baseline (the legacy layout of Nx ≤ 23.1.1) and the :data:`CHANGES` each
later release introduced, read from the released packages themselves
(``dist/src/daemon/*.js``, ``dist/src/utils/*.js``, the strings of the
native binding) and checked against each release's own resolver by the
conformance suite.  :func:`rules_for` folds them into the frozen
:class:`ReleaseRules` the resolver reads; nothing else tests a version.

>>> rules_for("24.0.2").walk_tier_ancestry, rules_for("24.0.5").walk_tier_ancestry
(False, True)
>>> rules_for("23.2.1").release, rules_for("23.2.1").generation
('23.2.1', 'ts')
>>> newer = rules_for("25.1.0")
>>> newer.release, newer.assumed
('24.0.6', True)
"""

# No ``from __future__ import annotations`` here: typing compiles each string annotation of a NamedTuple
# field when the class is made, and this module is imported by every ``paths --json``.
import functools
import re
import typing as t

__all__ = [
    "BASELINE",
    "CHANGES",
    "KNOWN_RELEASES",
    "NEWEST_KNOWN",
    "Change",
    "ReleaseRules",
    "is_version",
    "parse_version",
    "rules_for",
    "rules_of_generation",
]

#: The releases measured, oldest first.  A new one is added here, with its changes below.
KNOWN_RELEASES = (
    "23.1.1",
    "23.1.2",
    "23.1.3",
    "23.2.0",
    "23.2.1",
    "23.3.0",
    "23.3.1",
    "23.3.2",
    "24.0.0",
    "24.0.2",
    "24.0.5",
    "24.0.6",
)
NEWEST_KNOWN = KNOWN_RELEASES[-1]


#: The code a release resolves with: "legacy" (≤ 23.1.1), "ts" (23.1.2–23.3, TypeScript), "native" (24.x, the crate).
Generation = t.Literal["legacy", "ts", "native"]


class ReleaseRules(t.NamedTuple):
    """What one release does, rule by rule: the baseline with every change up to it applied."""

    release: str  # the known release whose rules these are
    assumed: bool  # the version is unknown or newer than any known: the nearest known release's rules
    generation: Generation
    # -- where sockets go
    current_layout: bool  # /tmp/.nx with its guards and the workspace fallback; else os.tmpdir()
    native_sockets: bool  # sockets placed by the native crate (24.x), not the TypeScript daemon code
    tmpdir_enoent_fails: bool  # a $TMPDIR naming a missing directory makes every socket resolution throw
    walk_tier_ancestry: bool  # /tmp (tier 1) and $HOME (tier 2) are walked from / before use
    walk_configured_ancestry: bool  # a configured socket dir's parents are walked and judged, not mkdir -p'd
    walk_cache_dir_ancestry: bool  # NX_NATIVE_FILE_CACHE_DIRECTORY's parents are walked and judged
    console_socket: bool  # the Nx Console socket is placed beside the others
    readiness_socket: bool  # a task's readiness socket fp<pid>-ready-<n>.sock, the longest forked name
    budget_units: t.Literal["utf-16", "utf-8"]  # JavaScript's length, or the crate's bytes
    too_long_reported: bool  # an over-long path is reported (tooLong) rather than thrown when it is built
    empty_data_dir_unset: bool  # the socket code counts an empty NX_WORKSPACE_DATA_DIRECTORY as unset
    empty_home_uses_passwd: bool  # an empty $HOME falls back to the passwd entry (else: no home)
    # -- the daemon's client
    client_socket_check: bool  # connectToDaemonSocket: refuse a recorded socket in an unsafe directory
    sandboxed_error_spares_marker: (
        bool  # with a sandbox marker set, an internal daemon error disables it for that run only
    )
    sandbox_disables_daemon: (
        bool  # DaemonClient.enabled(): an agent sandbox's variable turns the daemon off (unless NX_DAEMON=true)
    )
    # -- the data directories
    untrusted_data_dir_refused: bool  # UntrustedDataDirectoryError for NX_WORKSPACE_DATA_DIRECTORY / NX_CACHE_DIRECTORY
    shared_data_home_test: str | None  # "same-path" | "at-or-under": when ~/.nx is too close to /tmp for shared data
    # -- the binding cache
    cache_key_hashes_binding: (
        bool  # entries named <version>-<H12(binding)>-<file> in per-version dirs; else <version>-<file>
    )
    cache_freshness_by_mtime: bool  # fresh needs mtime ≥ the source's as well as equal size
    cache_entry_trust_checked: bool  # an entry not a regular file of yours without group/other write is re-copied
    cache_dlopen_falls_back: bool  # an entry that fails to load (ERR_DLOPEN_FAILED: a noexec mount) is loaded in place
    socket_mode: (
        int | None
    )  # the daemon socket's mode Nx leaves (plugin and task sockets keep the umask's); None: the umask's


class Change(t.NamedTuple):
    """One rule as a release changed it: the field of :class:`ReleaseRules`, its new value, and the evidence."""

    release: str
    rule: str
    value: object
    evidence: str


#: Nx ≤ 23.1.1: the os.tmpdir() layout, created at the umask, nothing judged.
BASELINE: dict[str, object] = {
    "generation": "legacy",
    "current_layout": False,
    "native_sockets": False,
    "tmpdir_enoent_fails": False,
    "walk_tier_ancestry": False,
    "walk_configured_ancestry": False,
    "walk_cache_dir_ancestry": False,
    "console_socket": False,
    "readiness_socket": False,
    "budget_units": "utf-16",
    "too_long_reported": False,
    "empty_data_dir_unset": False,
    "empty_home_uses_passwd": False,
    "client_socket_check": False,
    "sandboxed_error_spares_marker": False,
    "sandbox_disables_daemon": True,
    "untrusted_data_dir_refused": False,
    "shared_data_home_test": None,
    "cache_key_hashes_binding": False,
    "cache_freshness_by_mtime": False,
    "cache_entry_trust_checked": False,
    "cache_dlopen_falls_back": False,
    "socket_mode": None,
}

#: Each rule keyed by the release that introduced it, oldest first.
CHANGES: tuple[Change, ...] = (
    Change("23.1.2", "generation", "ts", "daemon/tmp-dir.js: /tmp/.nx tiers, utils/owned-private-dir.js appears"),
    Change(
        "23.1.2", "current_layout", True, "daemon/tmp-dir.js: shared root, per-user root, home tier, workspace fallback"
    ),
    Change(
        "23.1.2",
        "tmpdir_enoent_fails",
        True,
        "daemon/tmp-dir.js compares against the realpath of os.tmpdir(), which throws",
    ),
    Change("23.1.2", "cache_key_hashes_binding", True, "native/index.js: cacheKey = version + H12(binding path)"),
    Change("23.1.2", "cache_freshness_by_mtime", True, "native/index.js: isFresh needs size and mtime"),
    Change("23.1.2", "socket_mode", 0o600, "daemon/server: chmod of the socket after listen"),
    Change(
        "23.2.0",
        "sandboxed_error_spares_marker",
        True,
        "project-graph.js: disableDaemonForThisProcess when isSandbox()",
    ),
    Change("23.2.0", "sandbox_disables_daemon", False, "daemon/client/client.js: enabled() no longer asks isSandbox()"),
    Change(
        "23.2.0",
        "shared_data_home_test",
        "same-path",
        "utils/cache-directory.js: homeDirIsDistinctFromSharedTmp, same path only",
    ),
    Change("24.0.0", "generation", "native", "the socket paths come from the binding (resolveDaemonSocketPath)"),
    Change("24.0.0", "native_sockets", True, "the socket paths come from the binding"),
    Change("24.0.0", "tmpdir_enoent_fails", False, "the crate reads $TMPDIR without resolving it"),
    Change("24.0.0", "console_socket", True, "resolveNxConsoleSocketPath"),
    Change("24.0.0", "readiness_socket", True, "fp<pid>-ready-<n>.sock beside the forked-task socket"),
    Change("24.0.0", "budget_units", "utf-8", "the crate measures paths in bytes"),
    Change("24.0.0", "too_long_reported", True, "SocketDirDetails.tooLong"),
    Change("24.0.0", "empty_data_dir_unset", True, "the crate treats an empty variable as unset"),
    Change("24.0.0", "empty_home_uses_passwd", True, "the crate's home lookup falls back to the passwd entry"),
    Change(
        "24.0.5", "walk_tier_ancestry", True, "binding: ensure_safe_ancestry, 'sits above the configured directory'"
    ),
    Change("24.0.5", "walk_configured_ancestry", True, "binding: ensure_safe_ancestry for NX_SOCKET_DIR"),
    Change(
        "24.0.5",
        "walk_cache_dir_ancestry",
        True,
        "native/native-file-cache-location.js: ensureSafeAncestry(dirname(dir))",
    ),
    Change("24.0.5", "client_socket_check", True, "daemon/socket-utils.js: connectToDaemonSocket"),
    Change(
        "24.0.5",
        "cache_dlopen_falls_back",
        True,
        "native/index.js: loadFromCache catches ERR_DLOPEN_FAILED, not only EACCES/EPERM",
    ),
    Change("24.0.6", "untrusted_data_dir_refused", True, "utils/cache-directory.js: UntrustedDataDirectoryError"),
    Change(
        "24.0.6",
        "shared_data_home_test",
        "at-or-under",
        "utils/nx-tmp-dir.js: homeDirIsDistinctFromSharedTmp, at or under /tmp",
    ),
    Change("24.0.6", "cache_entry_trust_checked", True, "native/index.js: isTrustedCacheEntry"),
)


#: A version as npm's ``semver.valid`` accepts it (a leading ``v`` or ``=`` as its loose form does): three numbers
#: without leading zeros, then ``-pre.release`` and ``+build`` identifiers of ``[0-9A-Za-z-]``.  Nothing else —
#: no ``/``, no ``..``, no space, no control character — so a version is always one plain name.
_NUMBER = r"(?:0|[1-9][0-9]{0,15})"
_PRE = r"(?:0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)"
_SEMVER = re.compile(
    rf"[v=]?{_NUMBER}\.{_NUMBER}\.{_NUMBER}(?:-{_PRE}(?:\.{_PRE})*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?"
)
_SEMVER_MAX_LENGTH = 256  # semver's MAX_LENGTH


def is_version(text: str) -> bool:
    """Whether *text* is a version by semver's grammar — and so a single, plain path component.

    Nx names its binding-cache directory after the ``version`` of the
    installed ``package.json``; whoever wrote that file chose the string.

    >>> is_version("24.0.6"), is_version("v23.3.2-beta.1+build.7")
    (True, True)
    >>> is_version("../.."), is_version("24.0.6/../../x"), is_version("01.2.3"), is_version(" 24.0.6")
    (False, False, False, False)
    """
    return len(text) <= _SEMVER_MAX_LENGTH and _SEMVER.fullmatch(text) is not None


def parse_version(version: str) -> tuple[int, int, int] | None:
    """``(major, minor, patch)`` of a version string, or ``None``; a pre-release counts as its release."""
    match = re.match(r"^\s*v?(\d{1,9})\.(\d{1,9})\.(\d{1,9})(?!\d)", version)  # a 5,000-digit part is no version
    return None if match is None else (int(match[1]), int(match[2]), int(match[3]))


_KNOWN = tuple((parse_version(v) or (0, 0, 0), v) for v in KNOWN_RELEASES)


@functools.cache
def _fold(release: str) -> dict[str, object]:
    """The rules of a known release: the baseline with every change up to it.  Folded on first use, not at
    import: ``paths --json`` asks for one release on every run."""
    target = parse_version(release) or (0, 0, 0)
    values = dict(BASELINE)
    for change in CHANGES:
        if (parse_version(change.release) or (0, 0, 0)) <= target:
            values[change.rule] = change.value
    return values


def _release_for(version: str | None) -> tuple[str, bool]:
    """The known release whose rules apply to *version*, and whether that is an assumption."""
    parsed = None if version is None else parse_version(version)
    if parsed is None or parsed > _KNOWN[-1][0]:
        return NEWEST_KNOWN, True
    nearest = _KNOWN[0][1]
    for known, name in _KNOWN:
        if known <= parsed:
            nearest = name
    # Older than the oldest known is still the legacy layout; between two known releases is the older one's.
    return nearest, False


def rules_for(version: str | None) -> ReleaseRules:
    """The rules of the release *version* names; an unknown or newer one is predicted as the newest known."""
    release, assumed = _release_for(version)
    return ReleaseRules(release=release, assumed=assumed, **_fold(release))  # type: ignore[arg-type]


def rules_of_generation(generation: str) -> ReleaseRules:
    """The newest known release of a generation, for ``--layout``."""
    newest = [r for r in KNOWN_RELEASES if _fold(r)["generation"] == generation]
    return rules_for(newest[-1])
