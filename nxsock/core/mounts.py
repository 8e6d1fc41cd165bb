"""The mount table, as values: which filesystem holds a path, and what that filesystem can do for Nx.

Pure: :func:`parse_mountinfo` reads the text of ``/proc/self/mountinfo`` (the
caller asks a view for it), :func:`mount_of` finds the mount a path lies on.
Nothing here touches the disk or binds a test socket: what a filesystem can
hold is judged from its type, as the kernel and FUSE drivers are known to
behave (docs/machine.md).

>>> table = parse_mountinfo("1 0 0:1 / / rw - ext4 /dev/vda rw\\n"
...                         "2 1 0:2 / /tmp rw,nosuid,noexec - tmpfs tmpfs rw\\n")
>>> mount_of(table, "/tmp/.nx/1000").noexec
True
>>> mount_of(table, "/tmpfoo").mount_point
'/'
"""

from __future__ import annotations

import typing as t

__all__ = [
    "MOUNTINFO",
    "NETWORK_TYPES",
    "NO_SOCKET_TYPES",
    "NO_UNIX_MODE_TYPES",
    "LevelMount",
    "Mount",
    "MountReader",
    "filesystem_name",
    "listen_errno",
    "mount_of",
    "parse_mountinfo",
]

#: Where the kernel lists the mounts this process sees (its own mount namespace's).
MOUNTINFO = "/proc/self/mountinfo"

#: Filesystems whose files another host may hold open: a process there is invisible from here.
NETWORK_TYPES = frozenset({
    "nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "fuse.sshfs", "afs", "ceph", "glusterfs", "fuse.glusterfs",
    "lustre", "gpfs", "beegfs", "fuse.rclone", "davfs", "fuse.davfs2", "virtiofs", "fuse.s3fs",
})

#: Filesystems where ``bind()`` of a unix socket fails (vfat's EPERM, FUSE's EIO, WSL's ENOTSUP).
NO_SOCKET_TYPES = frozenset({
    "vfat", "msdos", "exfat", "fuse.exfat", "fuseblk", "ntfs", "ntfs3", "fuse.ntfs-3g", "9p", "drvfs",
    "cifs", "smb3", "smbfs", "fuse.sshfs", "fuse.rclone", "davfs", "fuse.davfs2", "fuse.s3fs", "iso9660", "udf",
})

#: Filesystems that keep no owner or mode of their own: ``chmod`` is silently ignored, so nothing is ever 0700.
NO_UNIX_MODE_TYPES = frozenset({
    "vfat", "msdos", "exfat", "fuse.exfat", "fuseblk", "ntfs", "fuse.ntfs-3g", "drvfs", "9p", "cifs", "smb3",
    "smbfs", "iso9660", "udf",
})


class Mount(t.NamedTuple):
    """One line of the mount table: where, what, and the flags that matter to Nx."""

    mount_point: str
    fs_type: str  # with its FUSE subtype, as ``fuse.sshfs``
    source: str  # the device or server (``host:/export``), ``none`` when the table gives none
    root: str  # the part of the source filesystem mounted here: not ``/`` for a bind mount
    options: frozenset[str]  # the per-mount and the superblock options together

    @property
    def read_only(self) -> bool:
        return "ro" in self.options

    @property
    def noexec(self) -> bool:
        return "noexec" in self.options

    @property
    def network(self) -> bool:
        return self.fs_type in NETWORK_TYPES

    @property
    def holds_sockets(self) -> bool:
        return self.fs_type not in NO_SOCKET_TYPES

    @property
    def keeps_modes(self) -> bool:
        return self.fs_type not in NO_UNIX_MODE_TYPES

    @property
    def records_access_times(self) -> bool:
        """Whether loading a file updates its access time here (``relatime``: at least once a day); not ``noatime``, not
        read-only."""
        return "noatime" not in self.options and not self.read_only

    @property
    def bind(self) -> bool:
        """A bind mount of part of a filesystem (a container's volume, a sandbox's view)."""
        return self.root != "/"


class LevelMount(t.NamedTuple):
    """The mount under one level Nx uses: which level (``socket-root``, ``workspace-data``, …), its real path, its
    mount."""

    level: str
    path: str
    mount: Mount


def _unescape(field: str) -> str:
    r"""mountinfo writes space, tab, newline and backslash as ``\040``, ``\011``, ``\012`` and ``\134``."""
    if "\\" not in field:
        return field
    out, i = [], 0
    while i < len(field):
        if field[i] == "\\" and i + 4 <= len(field) and field[i + 1 : i + 4].isdigit():
            out.append(chr(int(field[i + 1 : i + 4], 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def parse_mountinfo(text: str) -> tuple[Mount, ...]:
    """Every well-formed line of ``/proc/self/mountinfo``, in the kernel's order (a later mount shadows)."""
    mounts = []
    for line in text.splitlines():
        head, sep, tail = line.partition(" - ")
        fields, rest = head.split(), tail.split()
        if not sep or len(fields) < 6 or len(rest) < 2:
            continue
        options = frozenset(fields[5].split(",")) | frozenset(rest[2].split(",") if len(rest) > 2 else ())
        mounts.append(Mount(_unescape(fields[4]), rest[0], _unescape(rest[1]), _unescape(fields[3]), options))
    return tuple(mounts)


def mount_of(mounts: t.Sequence[Mount], path: str) -> Mount | None:
    """The mount *path* (absolute, already resolved) lies on: the longest mount point above it, the latest if
    stacked."""
    best: Mount | None = None
    for mount in mounts:
        point = mount.mount_point.rstrip("/") or "/"
        if point == "/" or path == point or path.startswith(point + "/"):
            if best is None or len(point) >= len(best.mount_point.rstrip("/") or "/"):
                best = mount
    return best


def listen_errno(mount: Mount) -> str:
    """The errno ``bind()`` of a unix socket meets on *mount*: FUSE answers ``EIO`` (seen with exfat-fuse, which
    leaves a regular file named like the socket), kernel vfat/exFAT/NTFS ``EPERM``, WSL's 9p/drvfs and the rest
    ``EOPNOTSUPP``."""
    if mount.fs_type == "fuseblk" or mount.fs_type.startswith("fuse"):
        return "EIO"
    if mount.fs_type in ("vfat", "msdos", "exfat", "ntfs", "ntfs3", "iso9660", "udf"):
        return "EPERM"
    return "EOPNOTSUPP"


def filesystem_name(mount: Mount) -> str:
    """*mount* as a sentence names it: its type, what it mounts, and where (``fuseblk (/dev/loop0) at /mnt/usb``)."""
    source = "" if mount.source in ("", "none") else f" ({mount.source})"
    return f"{mount.fs_type}{source} at {mount.mount_point}"


class MountReader:
    """The mount table of a view, read once, on the first question: a view with none (a simulated machine) has none.

    *read* is the view's ``read_text``; nothing is read unless a level is asked about.
    """

    def __init__(self, read: t.Callable[[str], str | int]) -> None:
        self._read = read
        self._table: tuple[Mount, ...] | None = None

    @property
    def table(self) -> tuple[Mount, ...]:
        if self._table is None:
            text = self._read(MOUNTINFO)
            self._table = parse_mountinfo(text) if isinstance(text, str) else ()
        return self._table

    def of(self, real_path: str) -> Mount | None:
        """The mount the resolved *real_path* lies on, or ``None`` where the view shows no mount table."""
        return mount_of(self.table, real_path) if self.table else None
