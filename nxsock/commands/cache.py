"""``nxsock cache``: where the native binding cache is, what it holds, whether it is fresh; prune it."""

from __future__ import annotations

import os
import sys
import typing as t

import click

from .. import exitcodes


def _listing() -> t.Any:
    from ..binding_cache import find_binding, host_triple, list_cache
    from ..snapshot import build_resolution

    resolution, view = build_resolution()
    binding = find_binding(resolution.environment, view, host_triple())
    return resolution, view, list_cache(resolution, view, binding)


def _write(document: dict[str, t.Any]) -> None:
    from ..report import dumps

    sys.stdout.write(dumps(document, indent=sys.stdout.isatty()) + "\n")


@click.group("cache")
def cache() -> None:
    """Inspect, verify and prune the native binding cache Nx loads its binding from."""


@cache.command("path")
@click.option("--json", "json_flag", is_flag=True, help="Print one JSON document (schema_version 1).")
def cache_path(json_flag: bool) -> None:
    """The cache directory for this workspace, or why Nx would load the binding in place."""
    from ..snapshot import build_resolution

    resolution, _ = build_resolution()
    native = resolution.native_cache
    directory = native.dir if native.bypass_reason is None else None
    if json_flag:
        _write({"schema_version": 1, "dir": directory, "bypass_reason": native.bypass_reason})
    elif directory:
        click.echo(directory)
    else:
        click.echo(f"nxsock cache: Nx loads the binding in place: {native.bypass_reason}.", err=True)
    sys.exit(exitcodes.OK)


def _entry_json(entry: t.Any) -> dict[str, t.Any]:
    return {
        "path": entry.path,
        "version": entry.version,
        "binding": entry.binding,
        "size": entry.size,
        "trusted": entry.trusted,
        "fresh": entry.fresh,
        "in_use": entry.in_use,
        "partial": entry.partial,
    }


@cache.command("list")
@click.option("--json", "json_flag", is_flag=True, help="Print one JSON document (schema_version 1).")
def cache_list(json_flag: bool) -> None:
    """Every entry, by version: the binding it belongs to, size, trusted, fresh, in use, interrupted."""
    _, _, listing = _listing()
    if json_flag:
        _write({
            "schema_version": 1,
            "dir": listing.dir,
            "bypass_reason": listing.bypass_reason,
            "binding": None if listing.binding is None else listing.binding.path,
            "entries": [_entry_json(e) for e in listing.entries],
        })
    else:
        from ..render import render_cache_listing

        render_cache_listing(listing)
    sys.exit(exitcodes.OK)


@cache.command("verify")
@click.option("--json", "json_flag", is_flag=True, help="Print one JSON document (schema_version 1).")
def cache_verify(json_flag: bool) -> None:
    """Exit 1 when the installed version's entry is stale (size and mtime), untrusted or missing."""
    from ..binding_cache import verify
    from ..wording import shell_quote

    _, _, listing = _listing()
    verdict = verify(listing, shell_quote)
    code = exitcodes.PROBLEM if verdict.state in ("stale", "untrusted", "missing") else exitcodes.OK
    if json_flag:
        _write({"schema_version": 1, "state": verdict.state, "entry": verdict.entry, "message": verdict.message,
                "remedy": verdict.remedy, "binding": None if listing.binding is None else listing.binding.path})
    else:
        from ..render import render_verdict

        render_verdict(verdict)
    sys.exit(code)


@cache.command("prune")
@click.option("--dry-run", is_flag=True, help="Say what would be removed; remove nothing.")
@click.option("--json", "json_flag", is_flag=True, help="Print one JSON document (schema_version 1).")
def cache_prune(dry_run: bool, json_flag: bool) -> None:
    """Remove other versions' entries, interrupted copies and untrusted entries of yours; keep the fresh one.

    Entries in use by a running process and entries of other users are kept.
    Removal goes through directory descriptors and never follows a link.
    """
    from ..binding_cache import prune_plan
    from ..removal import Removal, open_directory, remove_entry

    resolution, _, listing = _listing()
    uid = os.geteuid()
    plan = prune_plan(listing, resolution.environment.nx_version, uid)
    results: list[tuple[Removal, str]] = []
    for entry, why in plan:
        holder, name = entry.path.rsplit("/", 1)
        try:
            fd = open_directory(holder, uid)
        except OSError as exc:
            results.append((Removal(entry.path, "failed", exc.strerror, 0), why))
            continue
        try:
            results.append((remove_entry(fd, name, entry.path, uid, dry_run=dry_run), why))
        finally:
            os.close(fd)
    if not dry_run and listing.dir and not resolution.native_cache.configured:
        _remove_empty_version_dirs(listing.dir, resolution.environment.nx_version, uid)
    failed = any(r.outcome != "removed" for r, _ in results)
    if json_flag:
        _write({
            "schema_version": 1,
            "dry_run": dry_run,
            "removed": [{"path": r.path, "reason": why, "freed": r.freed} for r, why in results if r.outcome == "removed"],
            "failed": [{"path": r.path, "reason": r.reason} for r, _ in results if r.outcome != "removed"],
            "freed": sum(r.freed for r, _ in results if r.outcome == "removed"),
        })
    else:
        from ..render import render_removals

        render_removals([(r.path, r.outcome, why if r.outcome == "removed" else r.reason, r.freed) for r, why in results], dry_run)
    sys.exit(exitcodes.PROBLEM if failed else exitcodes.OK)


def _remove_empty_version_dirs(root: str, keep: str | None, uid: int) -> None:
    """rmdir each version directory of yours left empty, but the installed version's."""
    from ..removal import open_directory

    try:
        fd = open_directory(root, uid)
    except OSError:
        return
    try:
        for name in os.listdir(fd):
            if name == keep:
                continue
            try:
                if os.lstat(name, dir_fd=fd).st_uid == uid:
                    os.rmdir(name, dir_fd=fd)  # fails, harmlessly, unless empty
            except OSError:
                continue
    finally:
        os.close(fd)
