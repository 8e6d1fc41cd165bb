"""A filesystem that cannot hold unix sockets, as WSL's drvfs (``/mnt/c``) cannot: a FUSE passthrough of a directory
whose ``mknod`` of a socket answers ``EOPNOTSUPP``.

A unix socket's ``bind()`` asks the filesystem for the socket's node (its ``mknod``); drvfs has no such node to
give, and the kernel answers ``EOPNOTSUPP`` (95, which Linux also calls ``ENOTSUP``), which Node prints as ``listen
ENOTSUP: operation not supported on socket <path>``.  No filesystem this machine's kernel mounts does that (tmpfs
and bindfs hold sockets, exFAT over FUSE gives EIO, the others EPERM), so this one is purpose-built: everything
else passes through to the directory beneath it unchanged, and only that one refusal is drvfs's.  The kernel, the
real Nx daemon and client, and the socket calls are real; only the filesystem's answer is made to be drvfs's.

Run as root (fusepy over the machine's libfuse 2)::

    python3 nosockets.py BACKING_DIR MOUNT_POINT

It stays in the foreground until the mount is gone.  What a user creates through it is theirs (the caller's uid
and gid, as a kernel filesystem would make it).
"""

from __future__ import annotations

import errno
import os
import stat
import sys
import typing as t

from fuse import FUSE, FuseOSError, Operations, fuse_get_context  # fusepy

_STAT_KEYS = ("st_atime", "st_ctime", "st_gid", "st_mode", "st_mtime", "st_nlink", "st_size", "st_uid")


class NoSockets(Operations):  # type: ignore[misc]
    """A passthrough of *root* in which no socket can be made."""

    def __init__(self, root: str) -> None:
        self.root = root

    def _p(self, path: str) -> str:
        return os.path.join(self.root, path.lstrip("/"))

    def _own(self, path: str) -> None:
        """What the caller made is the caller's (the server runs as root)."""
        uid, gid, _pid = fuse_get_context()
        os.lchown(self._p(path), uid, gid)

    def getattr(self, path: str, fh: t.Any = None) -> dict[str, t.Any]:
        st = os.lstat(self._p(path))
        return {key: getattr(st, key) for key in _STAT_KEYS}

    def readdir(self, path: str, fh: t.Any) -> list[str]:
        return [".", "..", *os.listdir(self._p(path))]

    def readlink(self, path: str) -> str:
        return os.readlink(self._p(path))

    def mknod(self, path: str, mode: int, dev: int) -> None:
        if stat.S_ISSOCK(mode):  # drvfs's answer: this filesystem has no node for a socket
            raise FuseOSError(errno.EOPNOTSUPP)
        os.mknod(self._p(path), mode, dev)
        self._own(path)

    def mkdir(self, path: str, mode: int) -> None:
        os.mkdir(self._p(path), mode)
        self._own(path)

    def create(self, path: str, mode: int, fi: t.Any = None) -> int:
        fd = os.open(self._p(path), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
        self._own(path)
        return fd

    def symlink(self, target: str, source: str) -> None:
        os.symlink(source, self._p(target))
        self._own(target)

    def rmdir(self, path: str) -> None:
        os.rmdir(self._p(path))

    def unlink(self, path: str) -> None:
        os.unlink(self._p(path))

    def rename(self, old: str, new: str) -> None:
        os.rename(self._p(old), self._p(new))

    def chmod(self, path: str, mode: int) -> None:
        os.chmod(self._p(path), mode)

    def chown(self, path: str, uid: int, gid: int) -> None:
        os.lchown(self._p(path), uid, gid)

    def truncate(self, path: str, length: int, fh: t.Any = None) -> None:
        os.truncate(self._p(path), length)

    def utimens(self, path: str, times: t.Any = None) -> None:
        os.utime(self._p(path), times, follow_symlinks=False)

    def open(self, path: str, flags: int) -> int:
        return os.open(self._p(path), flags)

    def read(self, path: str, size: int, offset: int, fh: int) -> bytes:
        return os.pread(fh, size, offset)

    def write(self, path: str, data: bytes, offset: int, fh: int) -> int:
        return os.pwrite(fh, data, offset)

    def flush(self, path: str, fh: int) -> None:
        return None

    def fsync(self, path: str, datasync: int, fh: int) -> None:
        os.fsync(fh)

    def release(self, path: str, fh: int) -> None:
        os.close(fh)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: nosockets.py BACKING_DIR MOUNT_POINT")
    # default_permissions: the kernel checks modes and owners as for any filesystem; allow_other: every user's.
    FUSE(NoSockets(sys.argv[1]), sys.argv[2], foreground=True, allow_other=True, default_permissions=True,
         fsname="nosockets")
