"""Publishing a whole text file for another program to read: the metrics node_exporter's textfile collector scrapes.

The collector may read the file at any moment, so it must never see half of
it: the text is written by :func:`nxsock.act.writing.write_whole_file`
(unnamed until complete, synced, renamed over the old name).  The directory
is reached by the trust rule (:func:`nxsock.core.trust.open_trusted_directory`:
every level the writer's or root's, links followed only when theirs), and
only a regular file, or nothing, is replaced.
"""

from __future__ import annotations

import errno
import os
import stat

from ..core._pathname import resolve
from ..core.fsview import errno_name
from ..core.trust import UntrustedPath, describe_distrust, open_trusted_directory
from .writing import write_whole_file

__all__ = ["publish_text"]


def publish_text(path: str, text: str, mode: int = 0o644) -> str | None:
    """Replace *path* (absolute, or relative to the working directory) by *text* whole; ``None``, or why not.

    Written ``0644``, owned by the writer: what the collector (another user)
    reads.  A directory, a link, a FIFO or a device at *path* is left as it is.
    """
    absolute = resolve(path, os.getcwd())
    directory, _, name = absolute.rpartition("/")
    if not name:
        return f"{path} names no file"
    try:
        dir_fd = open_trusted_directory(directory or "/", os.geteuid())
    except UntrustedPath as exc:
        return f"{directory} is not trusted: {describe_distrust(exc.refusal)}"
    except OSError as exc:
        return f"{directory or '/'} cannot be opened ({errno_name(exc.errno or errno.EIO)})"
    try:
        try:
            existing = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            existing = None
        except OSError as exc:
            return f"{absolute} cannot be inspected ({errno_name(exc.errno or errno.EIO)})"
        if existing is not None and not stat.S_ISREG(existing.st_mode):
            return f"{absolute} is not a regular file (a link, a directory, a FIFO or a device); it is left as it is"

        def unchanged() -> str | None:
            """The name still holds what was judged: the same file, or still nothing."""
            try:
                now = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            except FileNotFoundError:
                return None if existing is None else "was removed meanwhile; it is left as it is"
            except OSError as exc:
                return f"cannot be inspected ({errno_name(exc.errno or errno.EIO)})"
            if existing is None or (now.st_dev, now.st_ino) != (existing.st_dev, existing.st_ino):
                return "was replaced meanwhile; it is left as it is"
            return None

        problem = write_whole_file(dir_fd, name, text.encode("utf-8"), mode, unchanged=unchanged)
        return None if problem is None else f"{absolute} {problem.reason}"
    finally:
        os.close(dir_fd)
