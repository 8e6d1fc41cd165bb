"""``nxsock cache``: where the native binding cache is, what it holds, whether it is fresh; prune it."""

from __future__ import annotations

import sys

import click

from ..core.host_overrides import HostOverrides
from ._resolution import reading_host_options, workspace_option
from .summaries import summarized


@click.group("cache")
@summarized("cache")
def cache() -> None:
    """Nx copies its native binding into this cache before loading it; each subcommand has its own --help."""


@cache.command("path", short_help="The cache directory, or why Nx loads the binding in place.")
@reading_host_options
@click.option("--json", "json_flag", is_flag=True, help="Print one JSON document (schema_version 1).")
def cache_path(json_flag: bool, host: HostOverrides) -> None:
    """The cache directory for this workspace, or why Nx would load the binding in place."""
    from ..output.cache import CacheRequest, path

    sys.exit(path(CacheRequest(host, json_flag)))


@cache.command("list", short_help="Every entry, with its binding, size and state.")
@reading_host_options
@click.option("--json", "json_flag", is_flag=True, help="Print one JSON document (schema_version 1).")
def cache_list(json_flag: bool, host: HostOverrides) -> None:
    """Every entry, by version: the binding it belongs to, size, state; the total and what prune would reclaim."""
    from ..output.cache import CacheRequest, list_entries

    sys.exit(list_entries(CacheRequest(host, json_flag)))


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
    from ..output.cache import CacheRequest, verify

    sys.exit(verify(CacheRequest(host, json_flag)))


@cache.command("prune", short_help="Remove what Nx no longer loads; keep the fresh entry.")
@workspace_option
@click.option("--dry-run", is_flag=True, help="Say what would be removed; remove nothing.")
@click.option("--unused-for", "unused_for", callback=_duration, metavar="DURATION",
              help="Also remove entries of yours not loaded for DURATION (30d, 12h…), another checkout's included.")
@click.option(
    "--force", is_flag=True, help="Also remove entries on a network filesystem, which Nx on another host may load."
)
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
    from ..output.cache import CacheRequest, prune

    sys.exit(prune(CacheRequest(host, json_flag, dry_run, unused_for, force)))
