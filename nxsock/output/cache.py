"""``cache path|list|verify|prune`` as they were asked: the binding cache judged (``audit/binding_cache.py``),
pruned (``act/pruning.py``), and shown."""

from __future__ import annotations

import os
import typing as t

import click

from .. import exitcodes
from .resolution import build_resolution

if t.TYPE_CHECKING:
    from ..audit.binding_cache import CacheListing
    from ..core.fsview import FsView
    from ..core.host_overrides import HostOverrides
    from ..core.resolver import Resolution

__all__ = ["CacheRequest", "list_entries", "path", "prune", "verify"]


class CacheRequest(t.NamedTuple):
    """Every option of the ``cache`` subcommands (each reads those it takes)."""

    host: HostOverrides
    json: bool = False
    dry_run: bool = False  # prune
    unused_for: float | None = None  # prune: seconds
    force: bool = False  # prune: entries on a network filesystem too


def _listing(host: HostOverrides) -> tuple[Resolution, FsView, CacheListing]:
    from ..audit.binding_cache import find_binding, host_triple, list_cache

    resolution, view = build_resolution(host)
    binding = find_binding(resolution.environment, view, host_triple(), resolution.rules)
    return resolution, view, list_cache(resolution, view, binding)


def path(request: CacheRequest) -> int:
    """The cache directory for this workspace, or why Nx would load the binding in place."""
    from .emit import write_json
    from .report import cache_path_document

    resolution, _ = build_resolution(request.host)
    native = resolution.native_cache
    directory = native.dir if native.bypass_reason is None else None
    if request.json:
        write_json(cache_path_document(directory, native.bypass_reason))
    elif directory:
        from ..core.terminal import printable

        click.echo(printable(directory))
    else:
        from .render import render_error

        render_error("cache", f"Nx loads the binding in place: {native.bypass_reason}.")
    return exitcodes.OK


def list_entries(request: CacheRequest) -> int:
    """Every entry, and what prune would reclaim."""
    from ..audit.binding_cache import prune_plan, trusted_version

    resolution, _, listing = _listing(request.host)
    plan = prune_plan(listing, trusted_version(resolution, os.geteuid()), os.geteuid())
    if request.json:
        from .emit import write_json
        from .report import cache_list_document

        write_json(cache_list_document(listing, plan))
    else:
        from .render import render_cache_listing

        render_cache_listing(listing, plan)
    return exitcodes.OK


def verify(request: CacheRequest) -> int:
    """The installed version's entry judged; 1 when it is stale, untrusted or missing."""
    from ..audit.binding_cache import entry_removal
    from ..audit.binding_cache import verify as judge
    from ..core.wording import context_for

    resolution, view, listing = _listing(request.host)
    remedies = context_for(resolution, view)
    verdict = judge(listing, lambda path: remedies.offer(entry_removal(path)),
                    resolution.rules, resolution.environment.nx_version)
    code = exitcodes.PROBLEM if verdict.state in ("stale", "untrusted", "missing") else exitcodes.OK
    if request.json:
        from .emit import write_json
        from .report import cache_verify_document

        write_json(cache_verify_document(verdict, listing))
    else:
        from .render import render_verdict

        render_verdict(verdict)
    return code


def prune(request: CacheRequest) -> int:
    """What Nx no longer loads removed (or, dry, listed); 1 when something could not be, 130 on Ctrl-C."""
    import time

    from ..act.pruning import prune_cache
    from ..audit.binding_cache import Unused, prune_plan, prune_refusal, trusted_version

    resolution, _, listing = _listing(request.host)
    uid = os.geteuid()
    unused = None if request.unused_for is None else Unused(request.unused_for, time.time())
    plan = prune_plan(listing, trusted_version(resolution, uid), uid, unused)
    tidy = listing.dir if not resolution.native_cache.configured and resolution.rules.current_layout else None
    results, interrupted, kept = prune_cache([(entry.path, why) for entry, why in plan], uid, dry_run=request.dry_run,
                                             refused=prune_refusal(resolution, uid), tidy=tidy,
                                             keep=resolution.environment.nx_version, force=request.force)
    failed = any(r.outcome != "removed" for r, _ in results)
    if request.json:
        from .emit import write_json
        from .report import cache_prune_document

        write_json(cache_prune_document(results, dry_run=request.dry_run, interrupted=interrupted, kept=kept,
                                        unused_for=request.unused_for,
                                        judged_by=listing.judged_by if unused else None))
    else:
        from .render import render_removals, render_unused_basis

        if unused is not None:
            render_unused_basis(listing)
        render_removals([(r.path, r.outcome, why if r.outcome == "removed" else r.reason, r.freed)
                         for r, why in [*results, *kept]], request.dry_run, interrupted=interrupted)
    if interrupted:
        click.echo("nxsock: interrupted", err=True)
        return exitcodes.INTERRUPTED
    return exitcodes.PROBLEM if failed else exitcodes.OK
