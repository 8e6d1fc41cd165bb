"""The guards that act: create one level, re-mode it through a descriptor, read the mode back.

These are the only functions in nxsock that change a directory.  The parent
is reached from ``/`` one descriptor at a time and every level of it judged by
:mod:`nxsock.trust`'s rule (never opened by path, so a level swapped for a link
is refused, not followed); the final component is reached relative to the
parent's descriptor and opened
``O_NOFOLLOW | O_NONBLOCK``, so a symlink planted there is refused, never
followed, and a FIFO never blocks; every check after that is ``fstat`` on the
same descriptor, so the path cannot be swapped between check and change.
Each function returns the refusal it met (or ``None``) and the changes made.
"""

from __future__ import annotations

import errno as _errno
import os
import stat
import typing as t

from ._pathname import basename, dirname
from .fsview import errno_name
from .guards import Action, Refusal
from .trust import UntrustedPath, open_trusted_directory

__all__ = ["Outcome", "ensure_private_dir", "ensure_shared_root"]

_OPEN_LEAF = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


class Outcome(t.NamedTuple):
    refusal: Refusal | None
    changes: tuple[Action, ...]


def _open_parent(path: str) -> int | Refusal:
    """The parent's descriptor, walked from ``/`` by descriptor and judged by the trust rule on the way."""
    parent = dirname(path)
    try:
        return open_trusted_directory(parent, os.geteuid())
    except UntrustedPath as exc:
        return exc.refusal
    except OSError as e:
        return Refusal("not-inspectable", parent, errno=errno_name(e.errno or _errno.EIO))


def _open_leaf(parent_fd: int, name: str, path: str) -> int | Refusal:
    """The leaf's descriptor, or why it is not a directory we may open."""
    try:
        return os.open(name, _OPEN_LEAF, dir_fd=parent_fd)
    except OSError as e:
        try:
            st = os.lstat(name, dir_fd=parent_fd)
        except OSError:
            return Refusal("not-inspectable", path, errno=errno_name(e.errno or _errno.EIO))
        if not stat.S_ISDIR(st.st_mode):
            return Refusal("not-a-directory", path, uid=st.st_uid, symlink=stat.S_ISLNK(st.st_mode))
        return Refusal("not-inspectable", path, errno=errno_name(e.errno or _errno.EIO))


def _mkdir(parent_fd: int, name: str, mode: int, path: str) -> bool | Refusal:
    """Create one level; ``True`` when it was created now, ``False`` when it existed."""
    try:
        os.mkdir(name, mode, dir_fd=parent_fd)
        return True
    except FileExistsError:
        return False
    except OSError as e:
        return Refusal("not-created", path, errno=errno_name(e.errno or _errno.EIO))


def _fchmod_and_verify(fd: int, mode: int) -> int:
    """Re-mode through *fd* and return the mode that stuck (a mount may ignore it)."""
    try:
        os.fchmod(fd, mode)
    except OSError:
        pass
    return stat.S_IMODE(os.fstat(fd).st_mode)


def ensure_private_dir(path: str) -> Outcome:
    """Nx's private-directory guard, done: ``0700``, a real directory, yours, nothing for group or other."""
    parent = _open_parent(path)
    if isinstance(parent, Refusal):
        return Outcome(parent, ())
    try:
        created = _mkdir(parent, basename(path), 0o700, path)
        if isinstance(created, Refusal):
            return Outcome(created, ())
        changes: list[Action] = [Action("create", path, 0o700)] if created else []
        fd = _open_leaf(parent, basename(path), path)
        if isinstance(fd, Refusal):
            return Outcome(fd, tuple(changes))
        try:
            st = os.fstat(fd)
            if not stat.S_ISDIR(st.st_mode):
                return Outcome(Refusal("not-a-directory", path, uid=st.st_uid, symlink=False), tuple(changes))
            if st.st_uid != os.geteuid():
                return Outcome(Refusal("foreign-owner", path, uid=st.st_uid), tuple(changes))
            mode = stat.S_IMODE(st.st_mode)
            if mode & 0o077:
                after = _fchmod_and_verify(fd, 0o700)
                if after & 0o077:
                    return Outcome(Refusal("not-tightenable", path, mode=after), tuple(changes))
                if not created:
                    changes.append(Action("tighten", path, 0o700))
            return Outcome(None, tuple(changes))
        finally:
            os.close(fd)
    finally:
        os.close(parent)


def ensure_shared_root(path: str, *, owner: tuple[int, int] | None = None) -> Outcome:
    """Nx's shared-root guard, done: create ``1777`` if absent; an existing container is only judged.

    With *owner* (``provision`` as root, for ``/tmp/.nx`` alone), an existing
    directory is also handed to that owner and set ``1777`` — through its
    descriptor, and only after it is confirmed a real directory.
    """
    parent = _open_parent(path)
    if isinstance(parent, Refusal):
        return Outcome(parent, ())
    try:
        created = _mkdir(parent, basename(path), 0o1777, path)
        if isinstance(created, Refusal):
            return Outcome(created, ())
        changes: list[Action] = []
        fd = _open_leaf(parent, basename(path), path)
        if isinstance(fd, Refusal):
            return Outcome(fd, ())
        try:
            st = os.fstat(fd)
            if not stat.S_ISDIR(st.st_mode):
                return Outcome(Refusal("not-a-directory", path, uid=st.st_uid, symlink=False), ())
            if created:
                _fchmod_and_verify(fd, 0o1777)  # the sticky bit does not survive mkdir everywhere
                changes.append(Action("create", path, 0o1777))
            elif owner is not None:
                if (st.st_uid, st.st_gid) != owner:
                    os.fchown(fd, *owner)
                    changes.append(Action("chown", path, stat.S_IMODE(st.st_mode)))
                if stat.S_IMODE(st.st_mode) != 0o1777:
                    _fchmod_and_verify(fd, 0o1777)
                    changes.append(Action("chmod", path, 0o1777))
            st = os.fstat(fd)
            mode = stat.S_IMODE(st.st_mode)
            if st.st_uid not in (os.geteuid(), 0):
                return Outcome(Refusal("foreign-shared-container", path, uid=st.st_uid), tuple(changes))
            if mode & 0o022 and not mode & 0o1000:
                return Outcome(Refusal("peer-writable-not-sticky", path, mode=mode), tuple(changes))
            return Outcome(None, tuple(changes))
        finally:
            os.close(fd)
    finally:
        os.close(parent)
