"""Read-only views of a filesystem, the only way the resolver sees one.

The resolver never calls :mod:`os` itself: it asks a view.  The live tree is
one view; a fresh machine of another platform (for ``--platform``) and the
tree as a user-namespace sandbox shows it (every foreign owner as the
overflow uid) are others.  Views never change anything.
"""

import errno
import os
import stat
import typing as t

__all__ = [
    "OVERFLOW_UID",
    "Entry",
    "FsView",
    "LiveView",
    "MemoryView",
    "UserNamespaceView",
    "connect_probe",
]

#: What an unmapped owner looks like inside a user namespace.
OVERFLOW_UID = 65534



def errno_name(code: int | None, unknown: str | None = None) -> str:
    """``EACCES`` for 13: errnos are shown and reported by name (*unknown*, else ``E<n>``, for one without)."""
    name = errno.errorcode.get(code or 0)
    return name if name else (unknown or f"E{code}")

#: What a directory entry is.
EntryKind = t.Literal["dir", "link", "file", "fifo", "socket", "other"]


class Entry(t.NamedTuple):
    """One inode as ``lstat`` reports it: its type, owner and permission bits."""

    kind: EntryKind
    uid: int
    gid: int
    mode: int  # permission bits with setuid/setgid/sticky, no type bits
    size: int = 0
    mtime: float = 0.0
    atime: float = 0.0

    @property
    def is_dir(self) -> bool:
        return self.kind == "dir"

    @property
    def is_link(self) -> bool:
        return self.kind == "link"


def _kind(st_mode: int) -> EntryKind:
    if stat.S_ISDIR(st_mode):
        return "dir"
    if stat.S_ISLNK(st_mode):
        return "link"
    if stat.S_ISREG(st_mode):
        return "file"
    if stat.S_ISFIFO(st_mode):
        return "fifo"
    if stat.S_ISSOCK(st_mode):
        return "socket"
    return "other"


def entry_from_stat(st: os.stat_result) -> Entry:
    """The :class:`Entry` for an ``os.stat_result``."""
    return Entry(
        _kind(st.st_mode), st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode), st.st_size, st.st_mtime, st.st_atime
    )


class FsView(t.Protocol):
    """What the resolver may ask of a filesystem.

    Failures come back as errno numbers rather than exceptions, so that a
    refused state is a value all the way up.
    """

    def lstat(self, path: str) -> Entry | int:
        """The entry at *path* without following a final symlink, or an errno."""

    def stat(self, path: str) -> Entry | int:
        """The entry at *path* following symlinks, or an errno."""

    def readlink(self, path: str) -> str | int:
        """The target of the symlink at *path*, or an errno."""

    def realpath(self, path: str) -> str | int:
        """*path* with every symlink resolved (it must exist), or an errno."""

    def read_only(self, path: str) -> bool:
        """Whether the filesystem holding the existing directory *path* is read-only."""

    def read_text(self, path: str, limit: int = 1 << 20, *, follow: bool = False) -> str | int:
        """The start of a regular file's text, or an errno (never opens a FIFO).

        A final symlink is not followed unless *follow*: only for a file Nx itself reads through one (a ``.env``).
        """

    def pid_alive(self, pid: int) -> bool | None:
        """Whether a process exists, or ``None`` where the view cannot tell."""

    def probe_socket(self, path: str) -> str | None:
        """Connect to a unix socket briefly: ``"answers"``, an errno name (``ECONNREFUSED``: stale), or ``None``."""

    def listdir(self, path: str) -> list[str] | int:
        """The names in a directory (not following a final symlink), or an errno."""

    def mapped_paths(self) -> frozenset[str] | None:
        """Files some process of ours has mapped (a loaded binding), or ``None`` where the view cannot tell."""


class LiveView:
    """The real filesystem of this machine, as the calling process sees it.

    Realpaths are remembered: a view answers for one moment, and the resolver
    asks for the same few many times.
    """

    def __init__(self) -> None:
        self._realpaths: dict[str, str | int] = {}

    def lstat(self, path: str) -> Entry | int:
        try:
            return entry_from_stat(os.lstat(path))
        except OSError as e:
            return e.errno or errno.EIO
        except ValueError:  # an embedded NUL
            return errno.EINVAL

    def stat(self, path: str) -> Entry | int:
        try:
            return entry_from_stat(os.stat(path))
        except OSError as e:
            return e.errno or errno.EIO
        except ValueError:
            return errno.EINVAL

    def readlink(self, path: str) -> str | int:
        try:
            return os.readlink(path)
        except OSError as e:
            return e.errno or errno.EIO
        except ValueError:
            return errno.EINVAL

    def realpath(self, path: str) -> str | int:
        known = self._realpaths.get(path)
        if known is not None:
            return known
        try:
            real: str | int = os.path.realpath(path, strict=True)
        except OSError as e:
            real = e.errno or errno.EIO
        except ValueError:
            real = errno.EINVAL
        self._realpaths[path] = real
        return real

    def read_only(self, path: str) -> bool:
        try:
            return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
        except (OSError, ValueError):
            return False

    def read_text(self, path: str, limit: int = 1 << 20, *, follow: bool = False) -> str | int:
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | (0 if follow else getattr(os, "O_NOFOLLOW", 0))
        try:
            fd = os.open(path, flags)
        except OSError as e:
            return e.errno or errno.EIO
        except ValueError:
            return errno.EINVAL
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return errno.EINVAL
            return os.read(fd, limit).decode("utf-8", "replace")
        except OSError as e:
            return e.errno or errno.EIO
        finally:
            os.close(fd)

    def pid_alive(self, pid: int) -> bool | None:
        from .liveness import process_liveness  # a zombie is dead: kill(pid, 0) alone counts it alive

        state = process_liveness(pid)
        return None if state == "unknown" else state == "alive"

    def probe_socket(self, path: str) -> str | None:
        entry = self.lstat(path)
        if isinstance(entry, int):
            return errno_name(entry)
        if entry.kind != "socket":
            return "ENOTSOCK"
        return connect_probe(path)

    def listdir(self, path: str) -> list[str] | int:
        flags = (
            os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        )
        try:
            fd = os.open(path, flags)
        except OSError as e:
            return e.errno or errno.EIO
        except ValueError:
            return errno.EINVAL
        try:
            return os.listdir(fd)
        except OSError as e:
            return e.errno or errno.EIO
        finally:
            os.close(fd)

    def mapped_paths(self) -> frozenset[str] | None:
        paths: set[str] = set()
        try:
            pids = [name for name in os.listdir("/proc") if name.isdigit()]
        except OSError:
            return None
        for pid in pids:
            try:
                with open(f"/proc/{pid}/maps", "rb") as maps:
                    for line in maps:
                        parts = line.split(maxsplit=5)
                        if len(parts) == 6 and parts[5].startswith(b"/"):
                            paths.add(os.fsdecode(parts[5].rstrip(b"\n").removesuffix(b" (deleted)")))
            except OSError:
                continue  # another user's process, or gone
        return frozenset(paths)


def connect_probe(path: str, timeout: float = 0.5) -> str:
    """Connect to the unix socket at *path* once: ``"answers"``, or the errno name (``ECONNREFUSED``: stale).

    Bounded by *timeout*: a listener that never accepts must not hang the caller.
    """
    import socket  # loaded only when a socket is actually probed

    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(timeout)
    try:
        probe.connect(path)
    except TimeoutError:
        return "ETIMEDOUT"
    except OSError as e:
        return errno_name(e.errno, "EIO")
    finally:
        probe.close()
    return "answers"


class MemoryView:
    """A filesystem held in a dict: a fresh machine of another platform, or a test fixture.

    *entries* maps absolute paths to :class:`Entry`; *links* maps symlink paths
    to their targets.  Intermediate symlinks are followed like the kernel does.
    """

    def __init__(
        self,
        entries: t.Mapping[str, Entry],
        links: t.Mapping[str, str] | None = None,
        read_only_roots: t.Iterable[str] = (),
        files: t.Mapping[str, str] | None = None,
        sep: str = "/",
    ) -> None:
        self._entries = dict(entries)
        self._links = dict(links or {})
        self._read_only = tuple(read_only_roots)
        self._files = dict(files or {})
        self._sep = sep

    def _resolve_parent(self, path: str, depth: int = 0) -> str | int:
        """*path* with every symlink but the last component's resolved."""
        if depth > 40:
            return errno.ELOOP
        sep = self._sep
        parts = [p for p in path.split(sep) if p]
        if sep == "\\":  # a drive-letter path: keep the drive as the root
            resolved = parts.pop(0) if parts else ""
        else:
            resolved = ""
        for i, name in enumerate(parts[:-1]):
            candidate = resolved + sep + name
            if candidate in self._links:
                target = self._links[candidate]
                rest = sep.join(parts[i + 1 :])
                base = target if target.startswith(sep) else resolved + sep + target
                return self._resolve_parent(base + sep + rest, depth + 1)
            entry = self._entries.get(candidate)
            if entry is None:
                return errno.ENOENT
            if not entry.is_dir:
                return errno.ENOTDIR
            resolved = candidate
        return resolved + sep + parts[-1] if parts else (resolved or sep)

    def lstat(self, path: str) -> Entry | int:
        resolved = self._resolve_parent(path)
        if isinstance(resolved, int):
            return resolved
        if resolved in self._links:
            return Entry("link", self._link_owner(resolved), 0, 0o777)
        return self._entries.get(resolved, errno.ENOENT)

    def _link_owner(self, path: str) -> int:
        entry = self._entries.get(path)
        return entry.uid if entry is not None else 0

    def stat(self, path: str) -> Entry | int:
        real = self.realpath(path)
        return real if isinstance(real, int) else self.lstat(real)

    def readlink(self, path: str) -> str | int:
        resolved = self._resolve_parent(path)
        if isinstance(resolved, int):
            return resolved
        return self._links.get(resolved, errno.EINVAL)

    def realpath(self, path: str) -> str | int:
        resolved = self._resolve_parent(path)
        for _ in range(40):
            if isinstance(resolved, int):
                return resolved
            if resolved not in self._links:
                return resolved if resolved in self._entries or resolved in self._files else errno.ENOENT
            target = self._links[resolved]
            parent = resolved.rsplit(self._sep, 1)[0]
            resolved = self._resolve_parent(
                target if target.startswith(self._sep) else parent + self._sep + target
            )
        return errno.ELOOP

    def read_only(self, path: str) -> bool:
        return any(path == r or path.startswith(r.rstrip(self._sep) + self._sep) for r in self._read_only)

    def read_text(self, path: str, limit: int = 1 << 20, *, follow: bool = False) -> str | int:
        if follow:
            real = self.realpath(path)
            path = real if isinstance(real, str) else path
        text = self._files.get(path)
        return errno.ENOENT if text is None else text[:limit]

    def pid_alive(self, pid: int) -> bool | None:
        return None

    def probe_socket(self, path: str) -> str | None:
        return None

    def listdir(self, path: str) -> list[str] | int:
        entry = self.lstat(path)
        if isinstance(entry, int):
            return entry
        if not entry.is_dir:
            return errno.ENOTDIR
        prefix = path.rstrip(self._sep) + self._sep
        names = {p[len(prefix):] for p in [*self._entries, *self._links, *self._files] if p.startswith(prefix)}
        return sorted(n for n in names if n and self._sep not in n)

    def mapped_paths(self) -> frozenset[str] | None:
        return None


class UserNamespaceView:
    """*base* as a process in an unprivileged user namespace sees it.

    Only *uid* (and *gid*) are mapped; every other owner, root included,
    appears as :data:`OVERFLOW_UID` (unless *remap* is false: a sandbox that
    keeps owners, such as macOS Seatbelt).  When *writable* is given,
    everything outside those roots is read-only, as a sandbox's bind mounts
    make it; the directories in *frozen* are read-only themselves (nothing
    may be created directly in them) while what lies beneath may be writable.
    """

    def __init__(
        self,
        base: FsView,
        uid: int,
        gid: int,
        writable: t.Iterable[str] | None = None,
        *,
        frozen: t.Iterable[str] = (),
        remap: bool = True,
    ) -> None:
        self._base = base
        self._uid = uid
        self._gid = gid
        self._writable = None if writable is None else tuple(writable)
        self._frozen = frozenset(frozen)
        self._remap = remap

    def _map(self, entry: Entry | int) -> Entry | int:
        if isinstance(entry, int) or not self._remap:
            return entry
        return entry._replace(
            uid=entry.uid if entry.uid == self._uid else OVERFLOW_UID,
            gid=entry.gid if entry.gid == self._gid else OVERFLOW_UID,
        )

    def lstat(self, path: str) -> Entry | int:
        return self._map(self._base.lstat(path))

    def stat(self, path: str) -> Entry | int:
        return self._map(self._base.stat(path))

    def readlink(self, path: str) -> str | int:
        return self._base.readlink(path)

    def realpath(self, path: str) -> str | int:
        return self._base.realpath(path)

    def read_only(self, path: str) -> bool:
        if path in self._frozen:
            return True
        if self._writable is not None and not any(
            path == root or path.startswith(root.rstrip("/") + "/") for root in self._writable
        ):
            return True
        return self._base.read_only(path)

    def read_text(self, path: str, limit: int = 1 << 20, *, follow: bool = False) -> str | int:
        return self._base.read_text(path, limit, follow=follow)

    def pid_alive(self, pid: int) -> bool | None:
        return self._base.pid_alive(pid)

    def probe_socket(self, path: str) -> str | None:
        return self._base.probe_socket(path)

    def listdir(self, path: str) -> list[str] | int:
        return self._base.listdir(path)

    def mapped_paths(self) -> frozenset[str] | None:
        return self._base.mapped_paths()
