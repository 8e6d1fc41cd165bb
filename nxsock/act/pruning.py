"""``cache prune`` carried out: each planned entry removed through its directory's descriptor, never a link.

The plan is the audit's (:func:`nxsock.audit.binding_cache.prune_plan`); this module
only acts on it, one entry at a time, stopping cleanly between entries on Ctrl-C.
"""

from __future__ import annotations

import os
import typing as t

from .interruption import Interrupted, between_entries
from .removal import Removal, open_directory, remove_empty_dirs, remove_entry

__all__ = ["Pruned", "prune_cache"]


class Pruned(t.NamedTuple):
    """What a prune did: each planned entry's removal with the plan's reason, and whether Ctrl-C cut it short."""

    results: list[tuple[Removal, str]]
    interrupted: bool


def prune_cache(
    plan: t.Sequence[tuple[str, str]],
    uid: int,
    *,
    dry_run: bool,
    refused: str | None = None,
    tidy: str | None = None,
    keep: str | None = None,
) -> Pruned:
    """Remove each planned entry (its path, and why) of *uid*'s (none where *refused* says why not); then rmdir the empty
    directories of *tidy* but *keep*, unless interrupted or a dry run."""
    results: list[tuple[Removal, str]] = []
    interrupted = False
    try:
        with between_entries() as stop:
            for path, why in plan:
                stop.check()
                holder, name = path.rsplit("/", 1)
                if refused is not None:
                    results.append((Removal(path, "failed", refused, 0), why))
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
            if not dry_run and not interrupted and refused is None and tidy:
                remove_empty_dirs(tidy, keep, uid)
    except Interrupted:
        interrupted = True
    return Pruned(results, interrupted)
