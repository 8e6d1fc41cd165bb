"""Write a whole file or none of it: the new text in an unnamed file beside the old, renamed over it complete.

:func:`write_whole_file` is the one way nxsock replaces a file (a ``.env``
without a line, the tmpfiles drop-in).  The new file is made in the same
directory with ``O_TMPFILE``, so it has no name while it is written; its
owner, group and mode are set before any byte is, so no byte is ever readable
by more than the file it replaces allowed; every byte is written (a short
write goes on, a full disk is a failure) and synced before the file gets a
name.  It is linked in and renamed over the old name only while the check the
caller gives still passes, and that part runs with ``SIGINT``, ``SIGTERM``,
``SIGHUP`` and ``SIGQUIT`` held (:func:`~nxsock.act.interruption.signals_held`):
an interrupt takes effect once the old file or the complete new one is in
place, never with a copy left beside it.  Where ``O_TMPFILE`` is unsupported
the new file is created under a temporary name instead, inside the same held
section, and removed on every failure.
"""

from __future__ import annotations

import errno
import os
import stat
import typing as t

from ..core.fsview import errno_name
from .interruption import signals_held

__all__ = ["WriteProblem", "extended_attributes", "temporary_name", "write_whole_file"]

_O_TMPFILE = getattr(os, "O_TMPFILE", 0)
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
#: What ``open(O_TMPFILE)`` fails with where the kernel or the filesystem has no unnamed files.
_NO_TMPFILE = frozenset({errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL})
_EXPLAINED = {
    errno.ENOSPC: "the filesystem is full",
    errno.EDQUOT: "the disk quota is used up",
    errno.EROFS: "a read-only filesystem",
}


class WriteProblem(t.NamedTuple):
    """Why the file was not replaced; it is as it was.  *refused*: nxsock chose not to (else the system failed it)."""

    refused: bool
    reason: str


def temporary_name(name: str) -> str:
    """The name the new file has for the instant between its link and its rename (or while written, without
    ``O_TMPFILE``)."""
    return f".{name}.nxsock-{os.getpid()}"


def _failure(exc: OSError) -> WriteProblem:
    code = exc.errno or errno.EIO
    why = _EXPLAINED.get(code)
    return WriteProblem(
        False, f"cannot be written ({errno_name(code)}{': ' + why if why else ''}); it is left as it was"
    )


def _write_all(fd: int, data: bytes) -> None:
    """Every byte of *data*, however many calls it takes; a write that makes no progress is a full disk."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        view = view[written:]


def write_whole_file(
    dir_fd: int,
    name: str,
    data: bytes,
    mode: int,
    *,
    owner: tuple[int, int] | None = None,
    unchanged: t.Callable[[], str | None] | None = None,
) -> WriteProblem | None:
    """Put exactly *data* at *name* in the directory *dir_fd*, with *mode* (and *owner*: uid, gid), or change nothing.

    *unchanged* is asked last, right before the rename: why the old file may
    no longer be replaced (someone swapped or wrote it meanwhile), a phrase
    that follows its name, or ``None``.  A :class:`WriteProblem`'s reason
    follows the file's name too.  Returns ``None`` once the new file is in place and synced.
    """
    with signals_held():
        named: str | None = None
        try:
            try:
                fd = (
                    os.open(".", _O_TMPFILE | os.O_WRONLY | getattr(os, "O_CLOEXEC", 0), 0o600, dir_fd=dir_fd)
                    if _O_TMPFILE
                    else -1
                )
            except OSError as exc:
                if exc.errno not in _NO_TMPFILE:
                    raise
                fd = -1
            if fd < 0:
                fd = os.open(temporary_name(name), _CREATE, 0o600, dir_fd=dir_fd)
                named = temporary_name(name)  # only once it is ours: a name found taken is never unlinked
            try:
                problem = _fill(fd, data, mode, owner)
                if problem is not None:
                    return problem
                why = unchanged() if unchanged is not None else None
                if why is not None:
                    return WriteProblem(True, why)
                if named is None:
                    os.link(f"/proc/self/fd/{fd}", temporary_name(name), dst_dir_fd=dir_fd, follow_symlinks=True)
                    named = temporary_name(name)
            finally:
                os.close(fd)
            os.rename(named, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            named = None
            try:
                os.fsync(dir_fd)  # the rename itself survives a crash
            except OSError:
                pass
            return None
        except OSError as exc:
            return _failure(exc)
        finally:
            if named is not None:
                try:
                    os.unlink(named, dir_fd=dir_fd)
                except OSError:
                    pass


def extended_attributes(fd: int) -> list[str]:
    """The extended attributes of the file at *fd* beyond its security label (none where the system has none)."""
    try:
        return sorted(x for x in os.listxattr(fd) if not x.startswith("security."))
    except (OSError, AttributeError):
        return []


def _fill(fd: int, data: bytes, mode: int, owner: tuple[int, int] | None) -> WriteProblem | None:
    """Owner and group first (a chown clears set-id bits), then the mode, read back; then the data, synced.

    A new file that is born with an access control list (its directory's
    default one) is refused: the file it replaces carried none (the caller
    refuses one that does), and the list may give others what the mode does not.

    A group the writer may not give is kept only where it matters: where the
    mode gives the group exactly what it gives others, the writer's own group
    takes its place and no one may do more or less than before.
    """
    if owner is not None:
        st = os.fstat(fd)
        if (st.st_uid, st.st_gid) != owner:
            try:
                os.fchown(fd, *owner)
            except PermissionError:
                if st.st_uid == owner[0] and (mode >> 3) & 0o7 == mode & 0o7:
                    pass  # the group may do what everyone may: which group it is changes no one's access
                else:
                    return WriteProblem(
                        True,
                        f"cannot keep its group {owner[1]}, which uid {os.geteuid()} is not a member of "
                        f"and which may do more or less than others (mode {mode & 0o7777:04o}); it is left as it was",
                    )
    inherited = extended_attributes(fd)
    if inherited:
        return WriteProblem(
            True,
            f"would be replaced by a file carrying {', '.join(inherited)} from its directory (a default "
            "access control list, typically), which may let others read it; it is left as it was",
        )
    os.fchmod(fd, mode)
    kept = stat.S_IMODE(os.fstat(fd).st_mode)
    if kept != mode & 0o7777:
        return WriteProblem(
            True, f"its mode {mode & 0o7777:04o} cannot be kept (the filesystem gives {kept:04o}); it is left as it was"
        )
    _write_all(fd, data)
    os.fsync(fd)
    return None
