"""Removing this user's dead state, and only that: by descriptor, never through a link.

Directories are opened one component at a time with ``O_NOFOLLOW`` (a link
is followed only when root or the user owns it, as the kernel's own trusted
paths would be), entries are examined with ``lstat`` relative to their
directory's descriptor, and removed with ``unlinkat``/``rmdir`` relative to it.
A link is removed as a link; what it points at is never touched; an entry
another uid owns is never removed.
"""

from __future__ import annotations

import os
import stat
import typing as t

from ..core.fsview import errno_name
from ..core.trust import UntrustedPath, open_trusted_directory

__all__ = ["MAX_DEPTH", "Removal", "UntrustedPath", "open_directory", "remove_empty_dirs", "remove_entry"]

_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
#: How deep a tree ``remove_entry`` descends; anything deeper is kept, never a crash.
MAX_DEPTH = 128


class Removal(t.NamedTuple):
    """What happened to one entry: ``removed``, ``kept`` (with why), or ``failed`` (with the errno)."""

    path: str
    outcome: t.Literal["removed", "kept", "failed"]
    reason: str | None
    freed: int  # bytes of storage released


def open_directory(path: str, uid: int) -> int:
    """A descriptor for *path*, every level judged by :mod:`nxsock.core.trust`'s rule on the way down.

    Raises :class:`~nxsock.core.trust.UntrustedPath` where the rule refuses a level,
    and the plain :class:`OSError` where a level cannot be reached.
    """
    return open_trusted_directory(path, uid)


def _footprint(st: os.stat_result) -> int:
    return getattr(st, "st_blocks", 0) * 512 or st.st_size


def remove_entry(dir_fd: int, name: str, path: str, uid: int, *, dry_run: bool, depth: int = 0) -> Removal:
    """Remove *name* in the directory *dir_fd* if *uid* owns it; a directory with everything in it that *uid* owns."""
    try:
        st = os.lstat(name, dir_fd=dir_fd)
    except OSError as exc:
        return Removal(path, "failed", errno_name(exc.errno, "EIO"), 0)
    if st.st_uid != uid:
        return Removal(path, "kept", f"owned by uid {st.st_uid}, not you", 0)
    if not stat.S_ISDIR(st.st_mode):
        if not dry_run:
            try:
                os.unlink(name, dir_fd=dir_fd)  # a link goes as a link
            except OSError as exc:
                return Removal(path, "failed", errno_name(exc.errno, "EIO"), 0)
        return Removal(path, "removed", None, _footprint(st))
    if depth >= MAX_DEPTH:
        return Removal(path, "kept", f"nested deeper than {MAX_DEPTH} levels", 0)
    try:
        fd = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        return Removal(path, "failed", errno_name(exc.errno, "EIO"), 0)
    freed = _footprint(st)
    try:
        if os.fstat(fd).st_uid != uid:  # swapped since the lstat
            return Removal(path, "kept", "changed while it was examined", 0)
        for child in os.listdir(fd):
            inner = remove_entry(fd, child, f"{path}/{child}", uid, dry_run=dry_run, depth=depth + 1)
            if inner.outcome != "removed":
                return Removal(path, inner.outcome, f"{inner.path}: {inner.reason}", freed)
            freed += inner.freed
    finally:
        os.close(fd)
    if not dry_run:
        try:
            os.rmdir(name, dir_fd=dir_fd)
        except OSError as exc:
            return Removal(path, "failed", errno_name(exc.errno, "EIO"), freed)
    return Removal(path, "removed", None, freed)


def remove_empty_dirs(root: str, keep: str | None, uid: int) -> None:
    """rmdir each directory of *uid*'s left empty in *root*, but *keep* (the cache's installed version)."""
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
