"""``reset``: this user's dead Nx runtime state, found and removed by descriptor.

Dead means: a per-run directory (20 hex digits) whose sockets no longer
answer, or that holds none; a socket nothing listens on (``ECONNREFUSED``);
this workspace's plugin and console directories when nothing listens in them.
A directory modified in the last minute may belong to a daemon that is just
starting and is kept unless forced.  Nothing another uid owns is touched, no
link is followed (a link is removed as a link), and a socket is probed through
its directory's descriptor, never re-resolved by path.
"""

from __future__ import annotations

import os
import re
import stat
import time
import typing as t

from ..core._pathname import join
from ..core.environment import Environment, Variable
from ..core.fsview import connect_probe
from ..core.layout import console_leaf, plugin_leaf
from ..core.liveness import process_liveness
from ..core.mounts import Mount, mount_of, parse_mountinfo
from ..core.resolver import Resolution
from ..core.trust import describe_distrust, steering_refusal
from .removal import UntrustedPath, open_directory, remove_entry

__all__ = ["FLOOD_LIMIT", "ResetItem", "reset"]

HEX20 = re.compile(r"^[0-9a-f]{20}$")
HEX8 = re.compile(r"^[0-9a-f]{8}$")
GRACE = 60.0  # seconds a young per-run directory is presumed to belong to a starting daemon
#: Entries of other users listed one by one per directory; the rest are counted in one item.
FLOOD_LIMIT = 10


class ResetItem(t.NamedTuple):
    path: str
    what: str  # "per-run directory", "plugin directory", "stale socket", "daemon marker", "legacy …"
    outcome: t.Literal["removed", "kept", "failed", "refused"]  # refused: a directory the trust rule would not act in
    reason: str | None
    freed: int
    entries: int = 1  # entries this item stands for (a summary of other users' entries counts them all)


def _probe(dir_fd: int, name: str) -> str:
    """Probe the socket *name* in *dir_fd* through the descriptor, so the path cannot be swapped under it."""
    return connect_probe(f"/proc/self/fd/{dir_fd}/{name}")


class _Walker:
    def __init__(self, uid: int, *, dry_run: bool, force: bool, now: float, tick: t.Callable[[], None],
                 items: list[ResetItem] | None = None) -> None:
        self.uid = uid
        self.dry_run = dry_run
        self.force = force
        self.now = now
        self.tick = tick
        self.items: list[ResetItem] = [] if items is None else items
        self.mounts: tuple[Mount, ...] | None = None  # the mount table, read once when a verdict needs it

    def _remove(self, fd: int, name: str, path: str, what: str, reason: str) -> None:
        removal = remove_entry(fd, name, path, self.uid, dry_run=self.dry_run)
        outcome_reason = reason if removal.outcome == "removed" else removal.reason
        self.items.append(ResetItem(path, what, removal.outcome, outcome_reason, removal.freed))

    def _sockets_in(self, fd: int, name: str) -> list[str] | None:
        """The probe results for the sockets directly in *name*, or ``None`` when it cannot be opened safely."""
        try:
            inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
        except OSError:
            return None
        try:
            results = []
            for child in os.listdir(inner):
                try:
                    if stat.S_ISSOCK(os.lstat(child, dir_fd=inner).st_mode):
                        results.append(_probe(inner, child))
                except OSError:
                    continue
            return results
        finally:
            os.close(inner)

    def dead_directory(self, fd: int, name: str, path: str, what: str, st: os.stat_result) -> None:
        """Remove a directory when no socket in it answers and it is not a minute young (unless forced)."""
        probes = self._sockets_in(fd, name)
        if probes is None:
            self.items.append(ResetItem(path, what, "kept", "could not be opened without following a link", 0))
        elif any(p in ("answers", "ETIMEDOUT", "EAGAIN") for p in probes):
            self.items.append(ResetItem(path, what, "kept", "a socket in it answers: it is live", 0))
        elif not self.force and self.now - st.st_mtime < GRACE:
            self.items.append(ResetItem(path, what, "kept", "modified less than a minute ago (use --force)", 0))
        elif probes and not self.force and (remote := self.network_mount(path)) is not None:
            self.items.append(ResetItem(path, what, "kept", _remote_reason(remote, "its sockets"), 0))
        else:
            self._remove(fd, name, path, what, "no socket in it answers" if probes else "it holds no socket")

    def stale_sockets(self, fd: int, directory: str) -> None:
        """Unlink the sockets directly in *fd* that nothing listens on."""
        for name in sorted(os.listdir(fd)):
            self.tick()
            try:
                st = os.lstat(name, dir_fd=fd)
            except OSError:
                continue
            if stat.S_ISSOCK(st.st_mode) and st.st_uid == self.uid and _probe(fd, name) == "ECONNREFUSED":
                remote = None if self.force else self.network_mount(directory)
                if remote is not None:
                    self.items.append(
                        ResetItem(join(directory, name), "stale socket", "kept", _remote_reason(remote, "it"), 0)
                    )
                    continue
                self._remove(fd, name, join(directory, name), "stale socket", "nothing listens on it")

    def _walk(self, fd: int) -> t.Iterator[tuple[str, os.stat_result]]:
        """Each entry of the directory *fd*, ``lstat``-ed relative to it, with a progress tick."""
        for name in sorted(os.listdir(fd)):
            self.tick()
            try:
                yield name, os.lstat(name, dir_fd=fd)
            except OSError:
                continue

    def socket_root(self, root: str, own_leaves: t.Mapping[str, str], sources: t.Sequence[str] = ()) -> None:
        """A socket root: per-run directories of any workspace, this workspace's leaves, stale sockets elsewhere."""
        fd = self._open(root, sources)
        if fd is None:
            return
        foreign = _Foreign(root)
        try:
            for name, st in self._walk(fd):
                path = join(root, name)
                if st.st_uid != self.uid:
                    foreign.add(path, st.st_uid, self.items)
                elif stat.S_ISDIR(st.st_mode) and HEX20.match(name):
                    self.dead_directory(fd, name, path, "per-run directory", st)
                elif stat.S_ISDIR(st.st_mode) and name in own_leaves:
                    self.dead_directory(fd, name, path, own_leaves[name], st)
                elif stat.S_ISDIR(st.st_mode) and HEX8.match(name):
                    inner = self._open_child(fd, name)
                    if inner is not None:
                        try:
                            self.stale_sockets(inner, path)
                        finally:
                            os.close(inner)
                elif stat.S_ISSOCK(st.st_mode) and _probe(fd, name) == "ECONNREFUSED":
                    self._remove(fd, name, path, "stale socket", "nothing listens on it")
        finally:
            os.close(fd)
        foreign.summarize(self.items)

    def sockets_only(self, directory: str, sources: t.Sequence[str] = ()) -> None:
        fd = self._open(directory, sources)
        if fd is not None:
            try:
                self.stale_sockets(fd, directory)
            finally:
                os.close(fd)

    def legacy(self, tmp: str, sources: t.Sequence[str] = ()) -> None:
        """Leftovers of Nx ≤ 23.1.1 in the OS temp dir: only the shapes Nx made, and only yours."""
        fd = self._open(tmp, sources)
        if fd is None:
            return
        try:
            for name, st in self._walk(fd):
                if st.st_uid != self.uid:
                    continue
                path = join(tmp, name)
                if stat.S_ISDIR(st.st_mode) and HEX20.match(name):
                    if self._holds_only_sockets(fd, name):
                        self.dead_directory(fd, name, path, "legacy per-run directory", st)
                elif stat.S_ISDIR(st.st_mode) and name.startswith("nx-native-file-cache-"):
                    self._remove(fd, name, path, "legacy binding cache", "the legacy layout's cache")
                elif stat.S_ISSOCK(st.st_mode) and name.startswith("plugin") and name.endswith(".sock"):
                    if _probe(fd, name) == "ECONNREFUSED":
                        self._remove(fd, name, path, "legacy plugin socket", "nothing listens on it")
        finally:
            os.close(fd)

    def daemon_marker(self, daemon_dir: str, sources: t.Sequence[str] = ()) -> str | None:
        """Remove the ``disabled`` marker, a regular file; return the reason it held (read without following a link)."""
        fd = self._open(daemon_dir, sources)
        if fd is None:
            return None
        try:
            path = join(daemon_dir, "disabled")
            try:
                marker = os.open("disabled", os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=fd)
            except OSError:
                return None
            try:
                st = os.fstat(marker)
                if not stat.S_ISREG(st.st_mode):
                    self.items.append(
                        ResetItem(path, "daemon marker", "kept", "not a regular file, so not Nx's marker", 0)
                    )
                    return None
                reason = os.read(marker, 4096).decode("utf-8", "surrogateescape").strip()
            finally:
                os.close(marker)
            self._remove(fd, "disabled", path, "daemon marker", "--daemon-marker")
            return reason or "(empty)"
        finally:
            os.close(fd)

    def dead_record(self, daemon_dir: str, sources: t.Sequence[str] = ()) -> None:
        """Remove ``server-process.json`` when the daemon it names is gone: otherwise doctor's warning never clears.

        Read through the directory's descriptor without following a link; kept
        when its pid lives (or cannot be told), or it cannot be read as a record.
        """
        fd = self._open(daemon_dir, sources)
        if fd is None:
            return
        name = "server-process.json"
        path = join(daemon_dir, name)
        try:
            try:
                record = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=fd)
            except OSError:
                return
            try:
                if not stat.S_ISREG(os.fstat(record).st_mode):
                    return
                text = os.read(record, 1 << 16)
            finally:
                os.close(record)
            match = re.search(rb'"processId"\s*:\s*(\d{1,10})\b', text)
            if match is None:
                return
            pid = int(match.group(1))
            state = process_liveness(pid)
            if state in ("alive", "unknown"):
                return  # alive (perhaps another user's), or unknowable: kept
            if state == "zombie":
                self._remove(fd, name, path, "daemon record", f"the daemon it names (pid {pid}) is a zombie: it exited "
                             "and its parent has not reaped it, so nothing serves its socket")
                return
            socket = _recorded_socket(text)
            if socket is not None and connect_probe(socket) in ("answers", "ETIMEDOUT", "EAGAIN"):
                self.items.append(
                    ResetItem(
                        path,
                        "daemon record",
                        "kept",
                        f"pid {pid} is not in this pid namespace, but "
                        f"its socket {socket} answers: the daemon runs in another container or on "
                        "the host, sharing this directory; stop it there (nx daemon --stop)",
                        0,
                    )
                )
                return
            remote = None if self.force else self.network_mount(daemon_dir)
            if remote is not None:
                self.items.append(ResetItem(path, "daemon record", "kept", _remote_reason(remote, f"pid {pid}"), 0))
                return
            self._remove(fd, name, path, "daemon record", f"the daemon it names (pid {pid}) is not running")
        finally:
            os.close(fd)

    def network_mount(self, path: str) -> Mount | None:
        """The network filesystem *path* lies on, where a process of another host may use it unseen; else ``None``."""
        if self.mounts is None:
            try:
                with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as table:
                    self.mounts = parse_mountinfo(table.read(1 << 22))
            except OSError:
                self.mounts = ()
        mount = mount_of(self.mounts, os.path.realpath(path))
        return mount if mount is not None and mount.network else None

    def _holds_only_sockets(self, fd: int, name: str) -> bool:
        inner = self._open_child(fd, name)
        if inner is None:
            return False
        try:
            return all(stat.S_ISSOCK(os.lstat(c, dir_fd=inner).st_mode) for c in os.listdir(inner))
        except OSError:
            return False
        finally:
            os.close(inner)

    def _open(self, directory: str, sources: t.Sequence[str] = ()) -> int | None:
        """The directory's descriptor when the trust rule lets nxsock act in it; a refusal is reported."""
        steered = steering_refusal(sources, self.uid)
        if steered is not None:
            source, refusal = steered
            self._refuse(directory, f"not acted on: it is set in {source}, and {describe_distrust(refusal)}")
            return None
        try:
            return open_directory(directory, self.uid)
        except UntrustedPath as exc:
            if not os.path.lexists(directory):  # nothing there to clean: nothing to report either
                return None
            self._refuse(directory, f"not acted on: {describe_distrust(exc.refusal)}")
            return None
        except OSError:
            return None  # not there (or not reachable): nothing of Nx's to clean

    def _refuse(self, directory: str, why: str) -> None:
        """Report a refused directory once, however many steps would have acted in it."""
        if not any(i.outcome == "refused" and i.path == directory for i in self.items):
            self.items.append(ResetItem(directory, "directory", "refused", why, 0))

    @staticmethod
    def _open_child(fd: int, name: str) -> int | None:
        try:
            return os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
        except OSError:
            return None


def reset(
    resolution: Resolution,
    *,
    dry_run: bool,
    force: bool = False,
    daemon_marker: bool = False,
    legacy: bool = False,
    tick: t.Callable[[], None] = lambda: None,
    items: list[ResetItem] | None = None,
) -> tuple[list[ResetItem], str | None]:
    """Find and remove this user's dead state; return what happened to each item, and the marker's reason.

    *tick* is called between entries (it may raise to stop the walk there);
    *items*, when given, receives each item as it happens, so a caller whose
    walk was stopped still knows what was removed.
    """
    env = resolution.environment
    walker = _Walker(env.uid, dry_run=dry_run, force=force, now=time.time(), tick=tick, items=items)
    ws = env.workspace_root
    own = {plugin_leaf(ws): "plugin directory", console_leaf(ws): "console directory"}
    walker.socket_root(join("/tmp/.nx", str(env.uid), "sockets"), own)
    home_var = env.variables.get("HOME")
    home = env.get("HOME") or env.passwd_home
    if home and home.startswith("/"):
        walker.socket_root(join(home, ".nx", "sockets"), own, _sources(home_var))
    socket_root = resolution.socket_root
    if socket_root.tier == "configured" and socket_root.root:
        walker.sockets_only(socket_root.root, _sources(socket_root.configured[1] if socket_root.configured else None))
    data_sources = _sources(
        *(env.variables.get(n) for n in ("NX_WORKSPACE_DATA_DIRECTORY", "NX_PROJECT_GRAPH_CACHE_DIRECTORY"))
    )
    walker.sockets_only(resolution.workspace_data.daemon_dir, data_sources)
    walker.dead_record(resolution.workspace_data.daemon_dir, data_sources)
    marker_reason = None
    if daemon_marker:
        marker_reason = walker.daemon_marker(resolution.workspace_data.daemon_dir, data_sources)
    if legacy:
        # The temp dir as spelled: a link in it is followed only when root's or yours, never resolved by realpath.
        tmp = env.node_tmpdir()
        walker.legacy(tmp if tmp.startswith("/") else f"{env.cwd}/{tmp}", _temp_sources(env))
    return walker.items, marker_reason


def _recorded_socket(text: bytes) -> str | None:
    """The ``socketPath`` of a daemon record when it is a plain absolute path to a socket, else ``None``."""
    match = re.search(rb'"socketPath"\s*:\s*"(/[^"\\\x00-\x1f]{1,4000}\.sock)"', text)
    if match is None or b"/../" in match.group(1) or b"/./" in match.group(1):
        return None
    return match.group(1).decode("utf-8", "surrogateescape")


def _remote_reason(mount: Mount, what: str) -> str:
    """Why something that looks dead from here is kept on a network filesystem, and how to remove it anyway."""
    return (f"it lies on {mount.fs_type} ({mount.source}), a network filesystem: a daemon on another host can "
            f"use {what} although no process here does; stop Nx there, or remove it with `nxsock reset --force`")


def _sources(*variables: Variable | None) -> tuple[str, ...]:
    """Where each set variable came from (``environment``, an option, or a ``.env`` path)."""
    return tuple(v.source for v in variables if v is not None)


def _temp_sources(env: Environment) -> tuple[str, ...]:
    """The source of the variable ``os.tmpdir()`` took its value from, if any."""
    for name in ("TMPDIR", "TMP", "TEMP"):
        if env.nonempty(name):
            return _sources(env.variables.get(name))
    return ()


class _Foreign:
    """Other users' entries in one directory: the first few one by one, the rest in one summary item."""

    def __init__(self, directory: str) -> None:
        self.directory = directory
        self.count = 0
        self.owners: set[int] = set()

    def add(self, path: str, uid: int, items: list[ResetItem]) -> None:
        self.count += 1
        if self.count <= FLOOD_LIMIT:
            items.append(ResetItem(path, "entry", "kept", f"owned by uid {uid}, not you", 0))
        else:
            self.owners.add(uid)

    def summarize(self, items: list[ResetItem]) -> None:
        rest = self.count - FLOOD_LIMIT
        if rest > 0:
            owners = ", ".join(f"uid {u}" for u in sorted(self.owners)[:5]) + (", …" if len(self.owners) > 5 else "")
            why = f"{rest} entries owned by other users ({owners}), not you, beyond the {FLOOD_LIMIT} listed"
            items.append(ResetItem(self.directory, "entries of other users", "kept", why, 0, rest))
