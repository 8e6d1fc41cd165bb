"""The one rule for trusting a path before acting on it, walked through descriptors.

A path that came from the environment or from a file — ``$TMPDIR``,
``NX_SOCKET_DIR``, ``NX_NATIVE_FILE_CACHE_DIRECTORY``,
``NX_WORKSPACE_DATA_DIRECTORY``, a home, a workspace — is acted on (something
removed, moved or re-moded in it) only when it passes the walk OpenSSH's
``safe_path`` makes, from ``/`` down:

- every level is owned by the acting uid or by root;
- no level is writable by other users unless it is sticky (group write on a
  level of one's own is the owner's grant, as in Nx's own ancestry walk);
- a symlink is followed only when the acting uid or root owns it — it sits in
  a level already judged, so nobody else could have put it there — at most
  :data:`~nxsock.core.guards.MAX_LINKS` times.

Each level is opened ``O_NOFOLLOW | O_DIRECTORY`` relative to its parent's
descriptor and judged by ``fstat`` on that descriptor, so nothing can be
swapped between the judgement and the act: the caller acts relative to the
descriptor it gets back.  Where a value came from a file (a workspace's
``.env``), the file is judged by the same rule first: as root in a workspace
another user owns, nothing that workspace steers passes.
"""

from __future__ import annotations

import errno as _errno
import os
import stat
import typing as t

from ._pathname import join
from .fsview import errno_name
from .guards import MAX_LINKS, Refusal

if t.TYPE_CHECKING:
    from .environment import Variable

__all__ = [
    "UntrustedPath", "describe_distrust", "judge_path", "judge_source", "open_trusted_directory", "steering_reason",
    "steering_refusal",
]

_DIR_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_DIRECTORY", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
_STICKY = 0o1000


class UntrustedPath(OSError):
    """A path the rule refuses to act through; :attr:`refusal` says which level and why."""

    def __init__(self, refusal: Refusal) -> None:
        super().__init__(_errno.EPERM, describe_distrust(refusal))
        self.refusal = refusal


def describe_distrust(refusal: Refusal) -> str:
    """One sentence: which level of the path failed the rule, and how."""
    owner = "root" if refusal.uid == 0 else f"uid {refusal.uid}"
    if refusal.kind == "foreign-ancestor":
        return f"{refusal.dir} belongs to {owner}, who could replace what lies beneath it"
    if refusal.kind == "peer-writable-not-sticky":
        return f"{refusal.dir} is writable by other users without the sticky bit (mode {refusal.mode or 0:04o})"
    if refusal.kind == "not-a-directory" and refusal.symlink:
        return f"{refusal.dir} is a link owned by {owner}; only links of root or yours are followed"
    if refusal.kind == "not-a-directory":
        return f"{refusal.dir} is not a directory"
    return f"{refusal.dir} cannot be examined ({refusal.errno})"


def _judge_level(st: os.stat_result, path: str, uid: int) -> Refusal | None:
    """Owner root or *uid*; not writable by others unless sticky."""
    if st.st_uid not in (uid, 0):
        return Refusal("foreign-ancestor", path, uid=st.st_uid)
    mode = stat.S_IMODE(st.st_mode)
    peer_write = 0o002 if st.st_uid == uid else 0o022
    if mode & peer_write and not mode & _STICKY:
        return Refusal("peer-writable-not-sticky", path, mode=mode)
    return None


def _untrusted(refusal: Refusal) -> UntrustedPath:
    return UntrustedPath(refusal)


def _components(path: str) -> list[str]:
    return [part for part in path.split("/") if part]


def open_trusted_directory(path: str, uid: int) -> int:
    """A descriptor for the directory *path*, every level of it judged by the rule.

    Raises :class:`UntrustedPath` for a level the rule refuses, and the plain
    :class:`OSError` (``ENOENT``, ``EACCES``…) for one that cannot be reached
    at all, so callers can tell "not there" from "not to be trusted".
    """
    if not path.startswith("/") or "\0" in path:
        raise _untrusted(Refusal("not-inspectable", path, errno="EINVAL"))
    root = os.open("/", _DIR_FLAGS)
    stack: list[tuple[int, str]] = [(root, "/")]
    try:
        refusal = _judge_level(os.fstat(root), "/", uid)
        if refusal is not None:
            raise _untrusted(refusal)
        pending = _components(path)
        links = 0
        while pending:
            name = pending.pop(0)
            if name in ("", "."):
                continue
            if name == "..":
                if len(stack) > 1:
                    os.close(stack.pop()[0])
                continue
            parent_fd, parent_path = stack[-1]
            here = join(parent_path, name)
            st = os.lstat(name, dir_fd=parent_fd)
            if stat.S_ISLNK(st.st_mode):
                links += 1
                if st.st_uid not in (uid, 0) or links > MAX_LINKS:
                    raise _untrusted(Refusal("not-a-directory", here, uid=st.st_uid, symlink=True))
                target = os.readlink(name, dir_fd=parent_fd)
                if target.startswith("/"):
                    while len(stack) > 1:
                        os.close(stack.pop()[0])
                pending[:0] = _components(target)
                continue
            if not stat.S_ISDIR(st.st_mode):
                raise NotADirectoryError(_errno.ENOTDIR, "not a directory", here)
            try:
                child = os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
            except OSError as exc:
                if exc.errno in (_errno.ELOOP, _errno.ENOTDIR):  # swapped since the lstat
                    raise _untrusted(Refusal("not-a-directory", here, uid=st.st_uid, symlink=True)) from None
                raise
            stack.append((child, here))
            refusal = _judge_level(os.fstat(child), here, uid)
            if refusal is not None:
                raise _untrusted(refusal)
        return stack.pop()[0]
    finally:
        for fd, _ in stack:
            os.close(fd)


def judge_path(path: str, uid: int) -> Refusal | None:
    """The rule's verdict on *path* — a directory, or a file whose directory is judged and which is itself judged.

    A missing path is no verdict (``None``): nothing there steers anything.
    """
    if not path.startswith("/") or "\0" in path:
        return Refusal("not-inspectable", path, errno="EINVAL")
    parent, _, name = path.rstrip("/").rpartition("/")
    try:
        fd = open_trusted_directory(parent or "/", uid)
    except UntrustedPath as exc:
        return exc.refusal
    except FileNotFoundError:
        return None
    except OSError as exc:
        return Refusal("not-inspectable", parent or "/", errno=errno_name(exc.errno or _errno.EIO))
    try:
        if not name:
            return None
        try:
            st = os.lstat(name, dir_fd=fd)
        except FileNotFoundError:
            return None
        except OSError as exc:
            return Refusal("not-inspectable", path, errno=errno_name(exc.errno or _errno.EIO))
        if stat.S_ISLNK(st.st_mode):
            if st.st_uid not in (uid, 0):
                return Refusal("not-a-directory", path, uid=st.st_uid, symlink=True)
            try:
                real = os.path.realpath(path, strict=True)
            except OSError:
                return None
            return None if real == path else judge_path(real, uid)
        return _judge_level(st, path, uid)
    finally:
        os.close(fd)


def judge_source(source: str, uid: int) -> Refusal | None:
    """Whether a value's source may steer an act: the environment and options always; a file when it passes the rule."""
    if not source.startswith("/"):
        return None  # "environment", "--tmpdir", "passwd": the caller's own choice
    return judge_path(source, uid)


def steering_reason(variables: t.Mapping[str, Variable], names: t.Iterable[str], uid: int) -> str | None:
    """Why the variables *names* may not steer an act: the first file among their sources the rule refuses,
    the variables it sets and how it fails (``NX_SOCKET_DIR is set in /w/.env, and /w belongs to …``); else ``None``."""
    present = [n for n in names if n in variables]
    steered = steering_refusal(dict.fromkeys(variables[n].source for n in present), uid)  # each file judged once
    if steered is None:
        return None
    source, refusal = steered
    setting = [n for n in present if variables[n].source == source]
    return (
        f"{', '.join(setting)} {'is' if len(setting) == 1 else 'are'} set in {source}, and {describe_distrust(refusal)}"
    )


def steering_refusal(sources: t.Iterable[str], uid: int) -> tuple[str, Refusal] | None:
    """The first source of *sources* the rule refuses, and why; ``None`` when all may steer."""
    for source in sources:
        refusal = judge_source(source, uid)
        if refusal is not None:
            return source, refusal
    return None
