"""What Nx's directory guards would do, predicted without doing it.

Nx establishes each level with a guard that may create it, tighten it to
``0700`` or refuse it.  The functions here run the same rules against a
:class:`Simulation` — a copy-on-write layer over a read-only
:class:`~nxsock.core.fsview.FsView` — so a later guard sees what an earlier one
would have created, and every would-be change is recorded as an
:class:`Action`.  Nothing here touches the real filesystem.
"""

import errno as _errno
import typing as t

from ._pathname import basename, dirname, join, resolve
from .fsview import Entry, FsView, errno_name
from .mounts import Mount, MountReader

__all__ = [
    "MAX_LINKS",
    "Action",
    "Refusal",
    "Simulation",
    "canonical_dir",
    "establish_private_dir",
    "establish_shared_root",
    "judge_shared_root",
    "make_parents",
    "sandbox_real_dir",
    "walk_ancestry",
]

#: The kernel's own limit on symlinks followed in one lookup.
MAX_LINKS = 40

S_ISVTX = 0o1000


#: Why a guard refuses a directory (docs/behaviour.md#refusal-kinds).
RefusalKind = t.Literal[
    "foreign-ancestor",
    "foreign-owner",
    "foreign-shared-container",
    "not-a-directory",
    "not-created",
    "not-inspectable",
    "not-private",
    "not-tightenable",
    "peer-writable-not-sticky",
]


class Refusal(t.NamedTuple):
    """Why a guard said no to a directory: a kind (see docs/behaviour.md#refusal-kinds) and its facts."""

    kind: RefusalKind
    dir: str
    uid: int | None = None
    mode: int | None = None
    errno: str | None = None
    symlink: bool | None = None


class Action(t.NamedTuple):
    """A change Nx would make: ``create`` a directory or ``tighten`` its mode."""

    verb: str
    path: str
    mode: int



class Simulation:
    """A filesystem view plus the directories Nx would create or re-mode on it.

    *uid* and *groups* are whose permissions apply; *umask* shapes the modes
    of directories created without an explicit re-mode.
    """

    def __init__(self, view: FsView, uid: int, gid: int, groups: t.Iterable[int] = (), umask: int = 0o022) -> None:
        self.view = view
        self.uid = uid
        self.gid = gid
        self.groups = frozenset(groups) | {gid}
        self.umask = umask
        self._planned: dict[str, Entry] = {}  # keyed by _key(): the parent as the kernel resolves it
        self._parents: dict[str, str] = {}
        self.actions: list[Action] = []
        self.mounts = MountReader(view.read_text)

    def mount_of(self, path: str) -> Mount | None:
        """The mount *path* (existing or planned) lies on, as the view's mount table shows it; ``None`` without one."""
        return self.mounts.of(self._key(path))

    def _key(self, path: str) -> str:
        """*path* with its parent canonical, so one directory has one key however it is spelled.

        Walked without recursion, up to the first parent already known and back down: a path of
        thousands of levels (a hostile ``.env`` can name one) is no deeper a stack than any other.
        """
        pending: list[str] = []
        top = path
        while True:
            parent = dirname(top)
            if parent == top:
                key = top
                break
            known = self._parents.get(parent)
            if known is not None:
                key = join(known, basename(top))
                break
            pending.append(top)
            top = parent
        for child in reversed(pending):  # *key* is the key of child's parent
            if key in self._planned:
                real = key
            else:
                resolved = self.view.realpath(key)
                real = resolved if isinstance(resolved, str) else key
            self._parents[dirname(child)] = real
            key = join(real, basename(child))
        return key

    def lstat(self, path: str) -> Entry | int:
        if self._planned:
            planned = self._planned.get(self._key(path))
            if planned is not None:
                return planned
        return self.view.lstat(path)

    def stat(self, path: str) -> Entry | int:
        if self._planned:
            planned = self._planned.get(self._key(path))
            if planned is not None:
                return planned
        return self.view.stat(path)

    def _may(self, entry: Entry, bits: int) -> bool:
        """Whether the simulated user has *bits* (of ``rwx`` = 4, 2, 1) on *entry*."""
        if self.uid == 0:
            return True
        if entry.uid == self.uid:
            shift = 6
        elif entry.gid in self.groups:
            shift = 3
        else:
            shift = 0
        return (entry.mode >> shift) & bits == bits

    def _read_only(self, path: str) -> bool:
        if self._key(path) in self._planned:
            return False
        mount = self.mount_of(path)
        return self.view.read_only(path) or (mount is not None and mount.read_only)

    def _modeless(self, path: str) -> bool:
        """Whether *path* lies on a filesystem that keeps no mode of its own (vfat, exFAT, NTFS, 9p, CIFS)."""
        mount = self.mount_of(path)
        return mount is not None and not mount.keeps_modes

    def mkdir(self, path: str, mode: int) -> int | None:
        """Predict ``mkdir(path, mode)``: ``None`` on success, else the errno."""
        existing = self.lstat(path)
        if isinstance(existing, Entry):
            return _errno.EEXIST
        if existing != _errno.ENOENT:
            return existing
        parent = dirname(path)
        holder = self.stat(parent)
        if isinstance(holder, int):
            return holder
        if not holder.is_dir:
            return _errno.ENOTDIR
        if not self._may(holder, 1):
            return _errno.EACCES
        if self._read_only(parent):
            return _errno.EROFS
        if not self._may(holder, 2):
            return _errno.EACCES
        made = mode & ~self.umask & 0o7777
        owner, group = self.uid, self.gid
        if self._modeless(parent):  # every directory there shows the mount's one owner and mode, whatever mkdir asked
            made, owner, group = holder.mode & 0o777, holder.uid, holder.gid
        self._planned[self._key(path)] = Entry("dir", owner, group, made)
        self.actions.append(Action("create", path, made))
        return None

    def chmod_real_directory(self, path: str, mode: int) -> bool:
        """Predict Nx's ``O_NOFOLLOW`` open + ``fstat`` + ``fchmod``; whether the mode lands."""
        entry = self.lstat(path)
        if isinstance(entry, int) or not entry.is_dir:
            return False
        if self.uid != 0 and (entry.uid != self.uid or not self._may(entry, 4)):
            return False  # the open needs read permission, fchmod needs ownership
        if self._read_only(path):
            return False
        if self._modeless(path):
            return entry.mode == mode  # chmod succeeds and changes nothing: the mode read back is the old one
        self._planned[self._key(path)] = entry._replace(mode=mode)
        created = self.actions and self.actions[-1].path == path and self.actions[-1].verb == "create"
        if created:  # the re-mode of a directory just created is part of creating it
            self.actions[-1] = Action("create", path, mode)
        else:
            self.actions.append(Action("tighten", path, mode))
        return True


def _not_a_directory(path: str, entry: Entry) -> Refusal:
    return Refusal("not-a-directory", path, uid=entry.uid, symlink=entry.is_link)


def judge_shared_root(sim: Simulation, path: str) -> Refusal | None:
    """The shared-root guard without creating anything: owner root or you, sticky if shared."""
    entry = sim.lstat(path)
    if isinstance(entry, int):
        return Refusal("not-inspectable", path, errno=errno_name(entry))
    if not entry.is_dir:
        return _not_a_directory(path, entry)
    if entry.uid not in (sim.uid, 0):
        return Refusal("foreign-shared-container", path, uid=entry.uid)
    if entry.mode & 0o022 and not entry.mode & S_ISVTX:
        return Refusal("peer-writable-not-sticky", path, mode=entry.mode)
    return None


def establish_shared_root(sim: Simulation, path: str) -> Refusal | None:
    """Create the shared container ``1777`` if absent, then judge it; an existing one is never changed."""
    failure = sim.mkdir(path, 0o1777)
    if failure is None:
        sim.chmod_real_directory(path, 0o1777)
    elif failure != _errno.EEXIST:
        return Refusal("not-created", path, errno=errno_name(failure))
    return judge_shared_root(sim, path)


def establish_private_dir(sim: Simulation, path: str) -> Refusal | None:
    """Create *path* ``0700`` (one level), require a real directory of yours, tighten group/other bits."""
    failure = sim.mkdir(path, 0o700)
    if failure is not None and failure != _errno.EEXIST:
        return Refusal("not-created", path, errno=errno_name(failure))
    entry = sim.lstat(path)
    if isinstance(entry, int):
        return Refusal("not-inspectable", path, errno=errno_name(entry))
    if not entry.is_dir:
        return _not_a_directory(path, entry)
    if entry.uid != sim.uid:
        return Refusal("foreign-owner", path, uid=entry.uid)
    if entry.mode & 0o077 and not sim.chmod_real_directory(path, 0o700):
        return Refusal("not-tightenable", path, mode=entry.mode)
    return None


def _judge_ancestor(sim: Simulation, path: str, entry: Entry) -> Refusal | None:
    ours = entry.uid == sim.uid
    if not ours and entry.uid != 0:
        return Refusal("foreign-ancestor", path, uid=entry.uid)
    peer_write = 0o002 if ours else 0o022
    if entry.mode & peer_write and not entry.mode & S_ISVTX:
        return Refusal("peer-writable-not-sticky", path, mode=entry.mode)
    return None


def walk_ancestry(sim: Simulation, path: str, create: bool) -> Refusal | None:
    """Judge every level of *path* from ``/`` down, as OpenSSH's ``safe_path`` does.

    Each level must be owned by you or root and not writable by others unless
    sticky.  A symlink is followed only when it is yours or root's, at most
    :data:`MAX_LINKS` times.  With *create*, missing levels would be made
    ``0755`` and judged like the rest.
    """
    judged = "/"
    root = sim.lstat(judged)
    if isinstance(root, int):
        return Refusal("not-inspectable", judged, errno=errno_name(root))
    refusal = _judge_ancestor(sim, judged, root)
    if refusal:
        return refusal
    pending = [p for p in resolve(path, "/").split("/") if p]
    links = 0
    while pending:
        name = pending.pop(0)
        if name == ".":
            continue
        if name == "..":
            judged = dirname(judged)
            continue
        step = join(judged, name)
        if create:
            failure = sim.mkdir(step, 0o755)
            if failure is not None and failure != _errno.EEXIST:
                return Refusal("not-created", step, errno=errno_name(failure))
        entry = sim.lstat(step)
        if isinstance(entry, int):
            return Refusal("not-inspectable", step, errno=errno_name(entry))
        if entry.is_dir:
            refusal = _judge_ancestor(sim, step, entry)
            if refusal:
                return refusal
            judged = step
            continue
        links += 1
        if not entry.is_link or entry.uid not in (sim.uid, 0) or links > MAX_LINKS:
            return _not_a_directory(step, entry)
        target = sim.view.readlink(step)
        if isinstance(target, int):
            return Refusal("not-inspectable", step, errno=errno_name(target))
        if target.startswith("/"):
            judged = "/"
        pending[:0] = [p for p in target.split("/") if p]
    return None


def make_parents(sim: Simulation, path: str) -> tuple[str, int] | None:
    """Predict ``mkdir -p path`` (Node's recursive mkdir): ``None``, or the level and errno that fail."""
    missing: list[str] = []
    probe = path
    while True:
        entry = sim.stat(probe)
        if isinstance(entry, Entry):
            if not entry.is_dir:
                return (probe, _errno.EEXIST if probe == path else _errno.ENOTDIR)
            break
        if entry != _errno.ENOENT:
            return (probe, entry)
        parent = dirname(probe)
        if parent == probe:
            return (probe, entry)
        missing.append(probe)
        probe = parent
    for level in reversed(missing):
        failure = sim.mkdir(level, 0o777)
        if failure is not None and failure != _errno.EEXIST:
            return (level, failure)
    return None


def sandbox_real_dir(view: FsView, platform: str, path: str) -> str:
    """The directory a sandbox must name for *path*: canonical, and on darwin ``/tmp`` spelled ``/private/tmp``."""
    real = canonical_dir(view, path)
    if platform == "darwin" and (real == "/tmp" or real.startswith("/tmp/")):
        real = "/private" + real
    return real


def canonical_dir(view: FsView, path: str) -> str:
    """The spelling Nx compares directories by: the realpath of the longest existing ancestor, the rest appended.

    Only a missing level walks up; any other error keeps the normalised
    spelling.
    """
    resolved = resolve(path, "/")
    missing: list[str] = []
    candidate = resolved
    while True:
        real = view.realpath(candidate)
        if isinstance(real, str):
            return join(real, *missing) if missing else real
        if real != _errno.ENOENT:
            return resolved
        parent = dirname(candidate)
        if parent == candidate:
            return resolved
        missing.insert(0, basename(candidate))
        candidate = parent
