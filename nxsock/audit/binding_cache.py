"""The native binding cache: which binding Nx loads, what the cache holds, what is stale.

See docs/behaviour.md#binding-cache.

Nx copies ``nx.<platform>.node`` into ``<cache>/<version>-<H12(binding)>-<file>``
before loading it, where the hash is of the binding's path as Node resolves it
(symlinks followed).  An entry is *trusted* when it is a regular file of yours
with no group/other write, *fresh* when trusted, as large as the binding and
not older than it.  Copies cut short are named ``<key>-<random><file>``.
Reading only: :mod:`nxsock.act.pruning` is what removes entries.
"""

from __future__ import annotations

import errno
import os
import re
import typing as t

from ..core import wording
from ..core._pathname import basename, join
from ..core.environment import Environment
from ..core.fsview import Entry, FsView
from ..core.layout import short_hash
from ..core.mounts import mount_of
from ..core.releases import ReleaseRules, rules_for
from ..core.remedy import Remedy, Remove
from ..core.resolver import Resolution
from ..core.terminal import counted
from ..core.wording import BINDING_IN_PLACE, Advice
from .binding_presence import Loadability, host_triple, loadability, locate_binding, platform_triple

__all__ = [
    "Binding",
    "CacheEntry",
    "CacheListing",
    "Loadability",
    "Unused",
    "find_binding",
    "host_triple",
    "list_cache",
    "loadability",
    "parse_duration",
    "platform_triple",
    "prune_refusal",
    "reclaimable",
    "trusted_version",
]

_ENTRY = re.compile(r"^(?P<version>.+?)-(?P<hash>[0-9a-f]{12})-(?P<rest>.+\.node)$")
# Nx ≤ 23.1.1: ``<version>-<file>`` (and ``<version>-<Math.random()><file>`` mid-copy) in one flat directory.
_LEGACY_ENTRY = re.compile(r"^(?P<version>.+?)-(?P<rest>(?:[0-9][0-9.e+-]*)?nx\..+\.node)$")
_PARTIAL = re.compile(r"^[0-9][0-9.e+-]*(?P<file>nx\..+\.node)$")


class Binding(t.NamedTuple):
    """The installed binding Nx would load, and the cache entry it maps to."""

    path: str  # resolved, as Node resolves it
    file_name: str
    size: int
    mtime: float
    entry_name: str | None  # None when the Nx version is unknown


class CacheEntry(t.NamedTuple):
    path: str
    version: str
    key_hash: str
    file_name: str
    binding: str | None  # the installed binding it was copied from, when the key matches
    size: int
    uid: int
    trusted: bool
    fresh: bool | None  # None when it belongs to no binding installed here
    in_use: bool | None
    partial: bool
    mtime: float = 0.0  # when it was copied
    atime: float = 0.0  # when it was last loaded, where the mount records it


class CacheListing(t.NamedTuple):
    dir: str | None  # the directory listed: the cache root (version directories) or a configured directory
    bypass_reason: str | None
    binding: Binding | None
    entries: tuple[CacheEntry, ...]
    problem: str | None  # why the directory could not be listed
    access_times: bool | None = None  # whether the cache's mount records when an entry is loaded; None: unknown

    @property
    def total_size(self) -> int:
        return sum(entry.size for entry in self.entries)

    @property
    def judged_by(self) -> t.Literal["atime", "mtime"]:
        """What "unused" is judged by: the time an entry was last loaded where the mount records it, else its copy
        time."""
        return "atime" if self.access_times else "mtime"

    def last_used(self, entry: CacheEntry) -> float:
        return entry.atime if self.access_times else entry.mtime


def entry_name(version: str, binding_path: str, file_name: str, rules: ReleaseRules) -> str:
    """The cache entry a binding is copied to: keyed by the binding's resolved path from 23.1.2, by version alone
    before."""
    if rules.cache_key_hashes_binding:
        return f"{version}-{short_hash([binding_path], 12)}-{file_name}"
    return f"{version}-{file_name}"


def find_binding(
    env: Environment, view: FsView, triple: str | None, rules: ReleaseRules | None = None
) -> Binding | None:
    """The binding Nx loads: a local build beside its loader first, else ``@nx/nx-<triple>`` as Node resolves it."""
    rules = rules or rules_for(env.nx_version)
    located = locate_binding(env, view, triple)
    if located is None or triple is None:
        return None
    path, entry = located
    file_name = f"nx.{triple}.node"
    name = None if env.nx_version is None else entry_name(env.nx_version, path, file_name, rules)
    return Binding(path, file_name, entry.size, entry.mtime, name)


def list_cache(resolution: Resolution, view: FsView, binding: Binding | None) -> CacheListing:
    """Every entry of this user's cache, by version, with trust, freshness, use and interrupted copies."""
    cache = resolution.native_cache
    shown = cache.root
    flat = cache.configured or not resolution.rules.current_layout  # entries directly in it, no version directories
    holders = [shown] if flat and shown else []
    problem = None
    if cache.refusals and shown is not None:  # Nx loads nothing from it; a peer's link there is never followed
        return CacheListing(shown, cache.bypass_reason, binding, (), wording.CACHE_REFUSED_NOT_LISTED, None)
    if not flat and shown is not None:
        names = view.listdir(shown)
        if isinstance(names, int):  # ENOENT is an empty cache: nothing was loaded yet
            problem = None if names == errno.ENOENT else wording.cannot_be_listed(os.strerror(names))
            names = []
        holders = [join(shown, name) for name in sorted(names) if _is_dir(view, join(shown, name))]
    mapped = view.mapped_paths()
    entries: list[CacheEntry] = []
    uid = resolution.environment.uid
    rules = resolution.rules
    for holder in holders:
        names = view.listdir(holder)
        if isinstance(names, int):
            if holder == shown and names != errno.ENOENT:
                problem = wording.cannot_be_listed(os.strerror(names))
            continue
        for name in sorted(names):
            entry = _entry(view, join(holder, name), name, uid, binding, mapped, rules)
            if entry is not None:
                entries.append(entry)
    return CacheListing(
        shown, cache.bypass_reason, binding, tuple(entries), problem, _records_access_times(view, shown)
    )


def _records_access_times(view: FsView, directory: str | None) -> bool | None:
    """Whether the mount *directory* lies on updates access times (``relatime`` does, at least daily); None: unknown."""
    from ..core.mounts import parse_mountinfo

    if directory is None:
        return None
    table = view.read_text("/proc/self/mountinfo")
    real = view.realpath(directory)
    if isinstance(table, int):
        return None
    mount = mount_of(parse_mountinfo(table), real if isinstance(real, str) else directory)
    return None if mount is None else mount.records_access_times


def _is_dir(view: FsView, path: str) -> bool:
    entry = view.lstat(path)
    return isinstance(entry, Entry) and entry.is_dir


def _entry(
    view: FsView,
    path: str,
    name: str,
    uid: int,
    binding: Binding | None,
    mapped: frozenset[str] | None,
    rules: ReleaseRules,
) -> CacheEntry | None:
    match = _ENTRY.match(name) if rules.cache_key_hashes_binding else _LEGACY_ENTRY.match(name)
    if match is None:
        return None
    stats = view.lstat(path)
    if isinstance(stats, int):
        return None
    rest = match["rest"]
    partial = _PARTIAL.match(rest)
    file_name = partial["file"] if partial else rest
    key_hash = match["hash"] if rules.cache_key_hashes_binding else ""
    trusted = stats.kind == "file" and stats.uid == uid and not stats.mode & 0o022
    # The legacy directory is this workspace's alone (its name hashes the workspace): every entry in it is ours.
    ours = not rules.cache_key_hashes_binding or (binding is not None and key_hash == short_hash([binding.path], 12))
    belongs = binding is not None and ours and file_name == binding.file_name
    fresh = None
    if belongs and binding is not None and not partial:
        fresh = trusted and stats.size == binding.size
        if rules.cache_freshness_by_mtime:
            fresh = fresh and stats.mtime >= binding.mtime
    return CacheEntry(
        path=path,
        version=match["version"],
        key_hash=key_hash,
        file_name=file_name,
        binding=binding.path if belongs and binding is not None else None,
        size=stats.size,
        uid=stats.uid,
        trusted=trusted,
        fresh=fresh,
        in_use=None if mapped is None else path in mapped,
        partial=partial is not None,
        mtime=stats.mtime,
        atime=stats.atime,
    )


class Verdict(t.NamedTuple):
    """``cache verify``: the installed version's entry and what is wrong with it, if anything."""

    state: t.Literal["fresh", "stale", "untrusted", "missing", "bypassed", "no-binding"]
    entry: str | None
    message: str
    advice: Advice | None  # the vetted removal of the entry, or why there is none; ``None`` where nothing is wrong


def entry_removal(path: str) -> Remedy:
    """The remedy for a cache entry that must go: Nx copies a fresh one on its next run."""
    return Remedy((Remove(path),), wording.CACHE_ENTRY_REMOVAL)


def verify(listing: CacheListing, removal: t.Callable[[str], Advice], rules: ReleaseRules,
           version: str | None) -> Verdict:
    """Fresh, or stale (size *and* mtime), untrusted or missing — each with the fix.

    *removal* gives the vetted advice that removes an entry (its remedy
    ``None`` where no safe one exists): remedies are made in one place.
    *rules* and *version*: the installed release's, to say what it does with
    an entry it may not trust (the release table's ``cache_entry_trust_checked``).
    """
    binding = listing.binding
    if listing.bypass_reason is not None:
        return Verdict("bypassed", None, BINDING_IN_PLACE.format(reason=listing.bypass_reason), None)
    if binding is None or binding.entry_name is None or listing.dir is None:
        return Verdict("no-binding", None, wording.CACHE_NO_BINDING, None)
    match = next((e for e in listing.entries if basename(e.path) == binding.entry_name), None)
    if match is None:
        return Verdict("missing", None, wording.cache_entry_missing(binding.entry_name), None)
    fix = removal(match.path)
    if not match.trusted:
        release = None if rules.cache_entry_trust_checked else version or rules.release
        return Verdict("untrusted", match.path, wording.cache_entry_untrusted(match.path, release), fix)
    if not match.fresh:
        return Verdict(
            "stale",
            match.path,
            wording.cache_entry_stale(match.path, binding.path),
            fix,
        )
    return Verdict("fresh", match.path, wording.cache_entry_fresh(match.path, binding.path), None)


def other_checkout(entry: CacheEntry, listing: CacheListing) -> bool:
    """An entry keyed by another binding path: another checkout's copy, which that checkout's Nx still loads."""
    return bool(entry.key_hash) and listing.binding is not None and entry.binding is None


class Unused(t.NamedTuple):
    """``cache prune --unused-for``: entries not loaded for *seconds* before *now* go too, whoever's checkout keyed
    them."""

    seconds: float
    now: float


def prune_plan(listing: CacheListing, installed_version: str | None, uid: int,
               unused: Unused | None = None) -> list[tuple[CacheEntry, str]]:
    """What ``cache prune`` removes, and why: other versions, interrupted copies, untrusted entries of yours.

    A trusted entry keyed by another binding path is another checkout's, which
    that checkout's Nx still loads whatever release it runs: it is not debris
    and stays — unless *unused* says how long an entry may go unloaded (the
    checkout may be long deleted; if not, its Nx copies the entry again).  The
    installed binding's fresh entry always stays.  An untrusted entry goes
    whoever's key it carries.  An entry in use, or whose use cannot be told, stays.
    """
    plan = []
    for entry in listing.entries:
        if entry.uid != uid:
            continue  # never another user's
        if entry.in_use:
            continue
        if entry.partial:
            plan.append((entry, "an interrupted copy"))
        elif not entry.trusted:
            plan.append((entry, "untrusted"))
        elif (
            unused is not None
            and entry.in_use is False
            and not _installed(listing, entry)
            and _unused(listing, entry, unused)
        ):
            plan.append((entry, _unused_reason(listing, entry, unused)))
        elif other_checkout(entry, listing):
            continue
        elif installed_version is not None and entry.version != installed_version:
            plan.append((entry, wording.prune_other_version(entry.version, installed_version)))
    return plan


def _installed(listing: CacheListing, entry: CacheEntry) -> bool:
    """The entry the installed binding loads now, fresh: it stays, however long ago it was loaded."""
    binding = listing.binding
    return bool(entry.fresh) and binding is not None and basename(entry.path) == binding.entry_name


def _unused(listing: CacheListing, entry: CacheEntry, unused: Unused) -> bool:
    return unused.now - listing.last_used(entry) >= unused.seconds


def _unused_reason(listing: CacheListing, entry: CacheEntry, unused: Unused) -> str:
    age = _duration(unused.now - listing.last_used(entry))
    if listing.access_times:
        return wording.prune_not_loaded(age)
    return wording.prune_copied_ago(age)


def _duration(seconds: float) -> str:
    """A span in its largest whole unit: ``40 days``, ``3 hours``."""
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size:
            count = int(seconds // size)
            return counted(count, unit)
    return f"{max(0, int(seconds))} seconds"


def parse_duration(text: str) -> float | None:
    """``30d``, ``12h``, ``2w``, ``90m``, ``45s`` (or several, as ``1d12h``) in seconds; ``None`` when it is not one."""
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
    parts = re.findall(r"(\d{1,9})([smhdw])", text)
    if not text or "".join(f"{n}{u}" for n, u in parts) != text:
        return None
    return float(sum(int(n) * units[u] for n, u in parts))


def reclaimable(plan: t.Sequence[tuple[CacheEntry, str]]) -> int:
    """The bytes a prune plan frees."""
    return sum(entry.size for entry, _ in plan)


def trusted_version(resolution: Resolution, uid: int) -> str | None:
    """The installed version, when the package.json it was read from may steer an act (else only debris is pruned)."""
    from ..core.trust import judge_path

    env = resolution.environment
    if env.nx_version_source != "installed":
        return env.nx_version
    manifest = f"{env.workspace_root}/node_modules/nx/package.json"
    return None if judge_path(manifest, uid) is not None else env.nx_version


def prune_refusal(resolution: Resolution, uid: int) -> str | None:
    """Why a configured cache directory may not be pruned: it is set in a file the trust rule refuses; else ``None``."""
    from ..core.trust import steering_reason

    if not resolution.native_cache.configured:
        return None
    reason = steering_reason(resolution.environment.variables, ["NX_NATIVE_FILE_CACHE_DIRECTORY"], uid)
    return None if reason is None else f"not acted on: {reason}"
