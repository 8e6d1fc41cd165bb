"""``cache prune`` carried out: each planned entry removed through its directory's descriptor, never a link.

The plan is the audit's (:func:`nxsock.audit.binding_cache.prune_plan`); this module
only acts on it, one entry at a time, stopping cleanly between entries on Ctrl-C.
"""

from __future__ import annotations

import os
import typing as t

from ..core.mounts import Mount, mount_of, parse_mountinfo
from .interruption import Interrupted, between_entries
from .removal import Removal, open_directory, remove_empty_dirs, remove_entry

__all__ = ["Pruned", "prune_cache", "remote_reason"]


class Pruned(t.NamedTuple):
    """What a prune did: each planned entry's removal with the plan's reason, and whether Ctrl-C cut it short."""

    results: list[tuple[Removal, str]]
    interrupted: bool
    kept: tuple[tuple[Removal, str], ...] = ()  # left on a network filesystem, with why and how to force it


def prune_cache(
    plan: t.Sequence[tuple[str, str]],
    uid: int,
    *,
    dry_run: bool,
    refused: str | None = None,
    tidy: str | None = None,
    keep: str | None = None,
    force: bool = False,
    mounts: t.Sequence[Mount] | None = None,
) -> Pruned:
    """Remove each planned entry (its path, and why) of *uid*'s (none where *refused* says why not); then rmdir the
    empty directories of *tidy* but *keep*, unless interrupted or a dry run.

    An entry on a network filesystem is kept unless *force*: Nx on another
    host may have it loaded, and no process here shows it (*mounts*: the
    mount table, read from ``/proc/self/mountinfo`` when not given).
    """
    results: list[tuple[Removal, str]] = []
    kept: list[tuple[Removal, str]] = []
    interrupted = False
    table = mounts
    try:
        with between_entries() as stop:
            for path, why in plan:
                stop.check()
                holder, name = path.rsplit("/", 1)
                if refused is not None:
                    results.append((Removal(path, "failed", refused, 0), why))
                    continue
                if not force:
                    table = _mount_table() if table is None else table
                    remote = mount_of(table, os.path.realpath(path))
                    if remote is not None and remote.network:
                        kept.append((Removal(path, "kept", remote_reason(remote), 0), why))
                        continue
                try:
                    fd = open_directory(holder, uid)
                except OSError as exc:
                    results.append((Removal(path, "failed", exc.strerror, 0), why))
                    continue
                try:
                    results.append((remove_entry(fd, name, path, uid, dry_run=dry_run), why))
                finally:
                    os.close(fd)
            interrupted = stop.requested
            if not dry_run and not interrupted and refused is None and tidy and not kept:
                remove_empty_dirs(tidy, keep, uid)
    except Interrupted:
        interrupted = True
    return Pruned(results, interrupted, tuple(kept))


def remote_reason(mount: Mount) -> str:
    """Why a cache entry that no process here loads is kept on a network filesystem, and how to remove it anyway."""
    return (f"it lies on {mount.fs_type} ({mount.source}), a network filesystem: Nx on another host may have it "
            "loaded although no process here does; stop Nx there, or remove it with `nxsock cache prune --force`")


def _mount_table() -> tuple[Mount, ...]:
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as table:
            return parse_mountinfo(table.read(1 << 22))
    except OSError:
        return ()
