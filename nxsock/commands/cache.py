"""``nxsock cache``: where the native binding cache is, what it holds, whether it is fresh; prune it."""

from __future__ import annotations

import os
import sys
import typing as t

import click

from .. import exitcodes
from ..core.host_overrides import HostOverrides
from ._resolution import build_resolution, reading_host_options, workspace_option
from .summaries import summarized

if t.TYPE_CHECKING:
    from ..audit.binding_cache import CacheListing
    from ..core.fsview import FsView
    from ..core.resolver import Resolution


def _listing(host: HostOverrides) -> tuple[Resolution, FsView, CacheListing]:
    from ..audit.binding_cache import find_binding, host_triple, list_cache

    resolution, view = build_resolution(host)
    binding = find_binding(resolution.environment, view, host_triple(), resolution.rules)
    return resolution, view, list_cache(resolution, view, binding)


@click.group("cache")
@summarized("cache")
def cache() -> None:
    """Nx copies its native binding into this cache before loading it; each subcommand has its own --help."""


@cache.command("path", short_help="The cache directory, or why Nx loads the binding in place.")
@reading_host_options
@click.option("--json", "json_flag", is_flag=True, help="Print one JSON document (schema_version 1).")
def cache_path(json_flag: bool, host: HostOverrides) -> None:
    """The cache directory for this workspace, or why Nx would load the binding in place."""
    from ..output.emit import write_json
    from ..output.report import cache_path_document

    resolution, _ = build_resolution(host)
    native = resolution.native_cache
    directory = native.dir if native.bypass_reason is None else None
    if json_flag:
        write_json(cache_path_document(directory, native.bypass_reason))
    elif directory:
        from ..core.terminal import printable

        click.echo(printable(directory))
    else:
        from ..output.render import render_error

        render_error("cache", f"Nx loads the binding in place: {native.bypass_reason}.")
    sys.exit(exitcodes.OK)


@cache.command("list", short_help="Every entry, with its binding, size and state.")
@reading_host_options
@click.option("--json", "json_flag", is_flag=True, help="Print one JSON document (schema_version 1).")
def cache_list(json_flag: bool, host: HostOverrides) -> None:
    """Every entry, by version: the binding it belongs to, size, state; the total and what prune would reclaim."""
    from ..audit.binding_cache import prune_plan, trusted_version

    resolution, _, listing = _listing(host)
    plan = prune_plan(listing, trusted_version(resolution, os.geteuid()), os.geteuid())
    if json_flag:
        from ..output.emit import write_json
        from ..output.report import cache_list_document

        write_json(cache_list_document(listing, plan))
    else:
        from ..output.render import render_cache_listing

        render_cache_listing(listing, plan)
    sys.exit(exitcodes.OK)


def _duration(ctx: click.Context, param: click.Parameter, value: str | None) -> float | None:
    """``30d``, ``12h``, ``2w``, ``90m``, ``45s``, or several together (``1d12h``), in seconds."""
    from ..audit.binding_cache import parse_duration

    if value is None:
        return None
    seconds = parse_duration(value)
    if seconds is None:
        raise click.BadParameter(f"{value!r} is not a duration: a number and a unit, s m h d or w (as 30d or 12h)")
    return seconds


@cache.command("verify", short_help="Exit 1 when this version's entry is not fresh.")
@reading_host_options
@click.option("--json", "json_flag", is_flag=True, help="Print one JSON document (schema_version 1).")
def cache_verify(json_flag: bool, host: HostOverrides) -> None:
    """Exit 1 when the installed version's entry is stale (size and mtime), untrusted or missing."""
    from ..audit.binding_cache import entry_removal, verify
    from ..core.wording import context_for

    resolution, view, listing = _listing(host)
    remedies = context_for(resolution, view)
    verdict = verify(listing, lambda path: remedies.offer(entry_removal(path)).command,
                     resolution.rules, resolution.environment.nx_version)
    code = exitcodes.PROBLEM if verdict.state in ("stale", "untrusted", "missing") else exitcodes.OK
    if json_flag:
        from ..output.emit import write_json
        from ..output.report import cache_verify_document

        write_json(cache_verify_document(verdict, listing))
    else:
        from ..output.render import render_verdict

        render_verdict(verdict)
    sys.exit(code)


@cache.command("prune", short_help="Remove what Nx no longer loads; keep the fresh entry.")
@workspace_option
@click.option("--dry-run", is_flag=True, help="Say what would be removed; remove nothing.")
@click.option("--unused-for", "unused_for", callback=_duration, metavar="DURATION",
              help="Also remove entries of yours not loaded for DURATION (30d, 12h…), another checkout's included.")
@click.option("--force", is_flag=True, help="Also remove entries on a network filesystem, which Nx on another host may load.")
@click.option("--json", "json_flag", is_flag=True, help="Print one JSON document (schema_version 1).")
def cache_prune(dry_run: bool, unused_for: float | None, force: bool, json_flag: bool, host: HostOverrides) -> None:
    """Remove other versions' entries, interrupted copies and untrusted entries of yours; keep the fresh one.

    A trusted entry keyed by another checkout's binding stays, since that
    checkout's Nx may still load it; --unused-for DURATION removes it too when
    nothing has loaded it for that long (judged by access time where the
    mount records it, else by when it was copied; the output says which).
    Entries in use by a running process and entries of other users are kept,
    and so is every entry on a network filesystem (NFS, CIFS, sshfs…), which
    Nx on another host may have loaded unseen from here, unless --force.
    Removal goes through directory descriptors and never follows a link.
    Ctrl-C stops between entries and reports what was removed (exit 130).
    """
    import time

    from ..act.pruning import prune_cache
    from ..audit.binding_cache import Unused, prune_plan, prune_refusal, trusted_version

    resolution, _, listing = _listing(host)
    uid = os.geteuid()
    unused = None if unused_for is None else Unused(unused_for, time.time())
    plan = prune_plan(listing, trusted_version(resolution, uid), uid, unused)
    tidy = listing.dir if not resolution.native_cache.configured and resolution.rules.current_layout else None
    results, interrupted, kept = prune_cache([(entry.path, why) for entry, why in plan], uid, dry_run=dry_run,
                                             refused=prune_refusal(resolution, uid), tidy=tidy,
                                             keep=resolution.environment.nx_version, force=force)
    failed = any(r.outcome != "removed" for r, _ in results)
    if json_flag:
        from ..output.emit import write_json
        from ..output.report import cache_prune_document

        write_json(cache_prune_document(results, dry_run=dry_run, interrupted=interrupted, kept=kept,
                                        unused_for=unused_for, judged_by=listing.judged_by if unused else None))
    else:
        from ..output.render import render_removals, render_unused_basis

        if unused is not None:
            render_unused_basis(listing)
        render_removals([(r.path, r.outcome, why if r.outcome == "removed" else r.reason, r.freed)
                         for r, why in [*results, *kept]],
                        dry_run, interrupted=interrupted)
    if interrupted:
        click.echo("nxsock: interrupted", err=True)
        sys.exit(exitcodes.INTERRUPTED)
    sys.exit(exitcodes.PROBLEM if failed else exitcodes.OK)

