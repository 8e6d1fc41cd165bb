"""The guards that act: create one level, re-mode it through a descriptor, read the mode back.

These are the only functions in nxsock that change a directory.  The parent
is reached from ``/`` one descriptor at a time and every level of it judged by
:mod:`nxsock.core.trust`'s rule (never opened by path, so a level swapped for a link
is refused, not followed); the final component is reached relative to the
parent's descriptor and opened
``O_NOFOLLOW | O_NONBLOCK``, so a symlink planted there is refused, never
followed, and a FIFO never blocks; every check after that is ``fstat`` on the
same descriptor, so the path cannot be swapped between check and change.
The provisioning functions return the refusal they met (or ``None``) and the changes made; the ones
``doctor --fix`` applies return :data:`~nxsock.act.outcomes.Acted`: done, refused or failed, with why.
"""

from __future__ import annotations

import errno as _errno
import os
import stat
import typing as t

from ..core._pathname import basename, dirname, normalize
from ..core.fsview import errno_name
from ..core.guards import Action, Refusal
from ..core.layout import CONTAINER
from ..core.trust import UntrustedPath, open_trusted_directory
from .outcomes import DONE, Acted, Done, Failed, Refused

__all__ = [
    "Outcome",
    "change_mode",
    "change_owner",
    "create_directory",
    "delete_env_lines",
    "ensure_private_dir",
    "ensure_shared_root",
    "remove_file",
    "remove_tree",
]

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


# -- the steps ``doctor --fix`` applies ------------------------------------------------
#
# Each function acts on one vetted :class:`~nxsock.core.remedy.Step` and returns ``None`` when it was done, or the
# sentence saying why it was refused or failed.  The parent is walked from ``/`` by the trust rule (a level
# swapped for another user's link or directory since the audit is refused, never followed); the entry itself is
# examined relative to the parent's descriptor and only acted on once ``fstat`` confirms it is still what the
# audit saw: the kind the step expects, owned by the acting uid.

_OPEN_ENTRY = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_O_PATH = getattr(os, "O_PATH", 0)
#: The most of a ``.env`` file rewritten; a larger one is refused (nxsock reads at most this much of it too).
ENV_FILE_LIMIT = 1 << 20


def _who(uid: int) -> str:
    return "root" if uid == 0 else f"uid {uid}"


def _parent_of(path: str, uid: int) -> int | Refused | Failed:
    """The descriptor of *path*'s directory, judged by the trust rule on the way down, or why not."""
    try:
        return open_trusted_directory(dirname(path), uid)
    except UntrustedPath as exc:
        from ..core.trust import describe_distrust

        return Refused(describe_distrust(exc.refusal))
    except OSError as exc:
        return Failed(f"{dirname(path)} cannot be reached ({errno_name(exc.errno or _errno.EIO)})")


def _os_error(path: str, exc: OSError) -> Failed:
    return Failed(f"{path}: {errno_name(exc.errno or _errno.EIO)}")


def remove_file(path: str, uid: int) -> Acted:
    """Unlink one entry that is not a directory (a link as a link), when *uid* owns it."""
    parent = _parent_of(path, uid)
    if not isinstance(parent, int):
        return parent
    name = basename(path)
    try:
        st = os.lstat(name, dir_fd=parent)
        if stat.S_ISDIR(st.st_mode):
            return Refused(f"{path} is now a directory")
        if st.st_uid != uid:
            return Refused(f"{path} belongs to {_who(st.st_uid)}; nxsock removes only what is yours")
        os.unlink(name, dir_fd=parent)
        return DONE
    except FileNotFoundError:
        return DONE  # already gone: what the step wanted
    except OSError as exc:
        return _os_error(path, exc)
    finally:
        os.close(parent)


def remove_tree(path: str, uid: int) -> Acted:
    """Remove a directory and everything in it, all of it *uid*'s, by descriptor
    (:func:`nxsock.act.removal.remove_entry`)."""
    from .removal import remove_entry

    parent = _parent_of(path, uid)
    if not isinstance(parent, int):
        return parent
    try:
        try:
            st = os.lstat(basename(path), dir_fd=parent)
        except FileNotFoundError:
            return DONE
        if not stat.S_ISDIR(st.st_mode):
            return Refused(f"{path} is no longer a directory")
        removal = remove_entry(parent, basename(path), path, uid, dry_run=False)
        return DONE if removal.outcome == "removed" else Failed(f"{removal.outcome}: {removal.reason}")
    except OSError as exc:
        return _os_error(path, exc)
    finally:
        os.close(parent)


def create_directory(path: str, mode: int | None, uid: int, owner: tuple[int, int] | None = None) -> Acted:
    """Create *path*: one level at *mode* (set through its descriptor and read back), or with no mode every
    missing level as ``mkdir -p`` does; an entry found there (someone made it since the audit) is refused."""
    if normalize(path) in _SHARED_CONTAINERS and (
        mode is None or _container_refusal(path, mode=mode, owner=owner or (0, 0))
    ):
        return Refused(f"{path} is the container every user shares; it is created 1777, for root or as Nx makes it")
    if mode is None:
        missing = []
        level = path
        while dirname(level) != level and not os.path.lexists(level):
            missing.append(level)
            level = dirname(level)
        for each in reversed(missing):
            made = create_directory(each, 0o777 & ~_umask(), uid)
            if not isinstance(made, Done):
                return made
        return DONE
    parent = _parent_of(path, uid)
    if not isinstance(parent, int):
        return parent
    name = basename(path)
    try:
        try:
            os.mkdir(name, 0o700, dir_fd=parent)
        except FileExistsError:
            st = os.lstat(name, dir_fd=parent)
            kind = (
                "a symlink" if stat.S_ISLNK(st.st_mode) else "a directory" if stat.S_ISDIR(st.st_mode) else "an entry"
            )
            return Refused(f"{path} exists now ({kind} of {_who(st.st_uid)}), so it was not created")
        fd = os.open(name, _OPEN_ENTRY | getattr(os, "O_DIRECTORY", 0), dir_fd=parent)
        try:
            st = os.fstat(fd)
            if st.st_uid != uid:
                return Refused(f"{path} belongs to {_who(st.st_uid)}")
            if owner is not None and (st.st_uid, st.st_gid) != owner:
                os.fchown(fd, *owner)
            if _fchmod_and_verify(fd, mode) != mode & 0o7777:
                return Failed(
                    f"{path} was created, but its mode does not stay {mode & 0o7777:04o} (a mount that ignores modes)"
                )
            return DONE
        finally:
            os.close(fd)
    except OSError as exc:
        return _os_error(path, exc)
    finally:
        os.close(parent)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _open_same(parent: int, name: str, path: str, uid: int) -> tuple[int, os.stat_result, bool] | Refused | Failed:
    """*name* opened without following a link, confirmed by ``fstat`` to be the entry ``lstat`` saw and *uid*'s.

    Returns the descriptor, its stat, and whether it is an ``O_PATH`` descriptor (a socket cannot be opened
    for reading; its descriptor then only names the inode, and the change goes through ``/proc/self/fd``).
    """
    try:
        st = os.lstat(name, dir_fd=parent)
    except OSError as exc:
        return _os_error(path, exc)
    if stat.S_ISLNK(st.st_mode):
        return Refused(f"{path} is now a symlink; changing it would change what it points at")
    if st.st_uid != uid:
        return Refused(f"{path} now belongs to {_who(st.st_uid)}")
    by_path = stat.S_ISSOCK(st.st_mode) and bool(_O_PATH)
    flags = (_O_PATH | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)) if by_path else _OPEN_ENTRY
    try:
        fd = os.open(name, flags, dir_fd=parent)
    except OSError as exc:
        return _os_error(path, exc)
    seen = os.fstat(fd)
    if (seen.st_dev, seen.st_ino) != (st.st_dev, st.st_ino) or seen.st_uid != uid:
        os.close(fd)
        return Refused(f"{path} was replaced while it was examined")
    return fd, seen, by_path


def _on_the_entry(path: str, uid: int, act: t.Callable[[int, bool], Acted]) -> Acted:
    """Run *act* on a descriptor of the very entry *path* names (its parent walked by the trust rule, the entry
    re-checked by :func:`_open_same`), with whether it must go through ``/proc/self/fd``; every descriptor closed."""
    parent = _parent_of(path, uid)
    if not isinstance(parent, int):
        return parent
    try:
        opened = _open_same(parent, basename(path), path, uid)
        if not isinstance(opened, tuple):
            return opened
        fd, _, by_path = opened
        try:
            return act(fd, by_path)
        except OSError as exc:
            return _os_error(path, exc)
        finally:
            os.close(fd)
    finally:
        os.close(parent)


#: The shared container under each spelling: whatever a plan says, it only ever becomes ``1777`` and root's.
_SHARED_CONTAINERS = frozenset({CONTAINER, "/private/tmp/.nx"})


def _container_refusal(path: str, mode: int | None = None, owner: tuple[int, int] | None = None) -> Refused | None:
    """The last word on the shared container, after the policy's: no mode but ``1777``, no owner but root."""
    if normalize(path) not in _SHARED_CONTAINERS:
        return None
    if mode is not None and mode & 0o7777 != 0o1777:
        return Refused(f"{path} is the container every user shares; its mode stays 1777")
    if owner is not None and owner != (0, 0):
        return Refused(f"{path} is the container every user shares; it belongs to root or stays as it is")
    return None


def change_mode(path: str, mode: int, uid: int) -> Acted:
    """Set *path*'s mode through a descriptor of the very entry (never through a link) and read it back."""
    refused = _container_refusal(path, mode=mode)
    if refused is not None:
        return refused

    def chmod(fd: int, by_path: bool) -> Acted:
        if by_path:
            os.chmod(f"/proc/self/fd/{fd}", mode)
        else:
            os.fchmod(fd, mode)
        after = stat.S_IMODE(os.fstat(fd).st_mode)
        return (
            DONE if after == mode & 0o7777 else Failed(f"{path} keeps mode {after:04o}: the filesystem ignores modes")
        )

    return _on_the_entry(path, uid, chmod)


def change_owner(path: str, owner: int, group: int, uid: int) -> Acted:
    """Hand *path* to *owner*:*group* through a descriptor of the very entry, never following a link."""
    refused = _container_refusal(path, owner=(owner, group))
    if refused is not None:
        return refused

    def chown(fd: int, by_path: bool) -> Acted:
        if by_path:
            os.chown(f"/proc/self/fd/{fd}", owner, group)
        else:
            os.fchown(fd, owner, group)
        return DONE

    return _on_the_entry(path, uid, chown)


def delete_env_lines(path: str, variable: str, uid: int) -> Acted:
    """Delete the assignments of *variable* from the ``.env`` file *path*, each of its own lines and nothing else.

    The file is read through a descriptor (``O_NOFOLLOW | O_NONBLOCK``, a
    regular file of *uid*'s with one link), edited as dotenv reads it
    (:func:`nxsock.core.dotenv.remove_assignments`: every other byte kept),
    and replaced whole by :func:`nxsock.act.writing.write_whole_file` with its
    owner, group and mode — only while its name still holds the file that was
    read, unwritten since.  A file that cannot be edited so is left as it is.
    """
    from ..core.dotenv import remove_assignments_from_bytes
    from .writing import extended_attributes, write_whole_file

    parent = _parent_of(path, uid)
    if not isinstance(parent, int):
        return parent
    name = basename(path)
    try:
        opened = _open_same(parent, name, path, uid)
        if not isinstance(opened, tuple):
            return opened
        fd, st, _ = opened
        try:
            if not stat.S_ISREG(st.st_mode):
                return Refused(f"{path} is not a regular file")
            if st.st_size > ENV_FILE_LIMIT:
                return Refused(f"{path} is larger than {ENV_FILE_LIMIT} bytes")
            if st.st_nlink != 1:
                return Refused(f"{path} has {st.st_nlink} hard links; a new file in its place would leave the "
                               "others as they are, so it is left as it was (edit it in place yourself)")
            kept = extended_attributes(fd)
            if kept:
                return Refused(f"{path} carries extended attributes ({', '.join(kept)}: an access control list, "
                               "typically), which a new file in its place would not; it is left as it was")
            chunks = []
            while True:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    break
                chunks.append(chunk)
            edited = remove_assignments_from_bytes(b"".join(chunks), variable)
            if isinstance(edited, str):
                if edited.startswith("no assignment"):
                    return Failed(f"no line of {path} sets {variable} any more")
                return Refused(f"{path} is left as it was: {edited}")

            def unchanged() -> str | None:
                now, seen = os.lstat(name, dir_fd=parent), os.fstat(fd)
                if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
                    return "was replaced while it was edited; it is left as it is"
                if (seen.st_size, seen.st_mtime_ns, seen.st_ctime_ns, seen.st_nlink) != (
                    st.st_size,
                    st.st_mtime_ns,
                    st.st_ctime_ns,
                    1,
                ):
                    return "was changed while it was edited; it is left as it is"
                return None

            problem = write_whole_file(
                parent, name, edited, stat.S_IMODE(st.st_mode), owner=(st.st_uid, st.st_gid), unchanged=unchanged
            )
        finally:
            os.close(fd)
        if problem is None:
            return DONE
        return (Refused if problem.refused else Failed)(f"{path} {problem.reason}")
    except OSError as exc:
        return _os_error(path, exc)
    finally:
        os.close(parent)
