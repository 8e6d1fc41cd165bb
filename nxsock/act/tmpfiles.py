"""The systemd-tmpfiles drop-in that recreates ``/tmp/.nx`` at boot and exempts it from ageing.

A tmpfs ``/tmp`` is empty after a reboot, and ``systemd-tmpfiles-clean`` ages
what is left: without the drop-in, the first user to run Nx after a reboot
owns the container and every other user is demoted.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import subprocess
import typing as t

from ..core.fsview import FsView, errno_name
from ..core.layout import CONTAINER
from ..core.trust import UntrustedPath, describe_distrust, open_trusted_directory
from ..core.wording import PROVISION_COMMAND
from .writing import write_whole_file

__all__ = [
    "APPLY_TIMEOUT",
    "CREATING_TYPES",
    "DROP_IN",
    "EARLY_DROP_IN",
    "MARKER",
    "TMPFILES_DIRS",
    "TmpfilesChange",
    "TmpfilesLine",
    "apply",
    "container_lines",
    "drop_in_for",
    "drop_in_text",
    "install",
    "tmpfiles_lines",
    "uninstall",
]

#: Where ``--tmpfiles --install`` writes, and what ``--uninstall`` removes.
DROP_IN = "/etc/tmpfiles.d/nxsock.conf"
#: The first line of a drop-in nxsock wrote; a file without it is never touched.
MARKER = "# Written by nxsock provision --tmpfiles --install."
LINE = f"d {CONTAINER} 1777 root root -"


#: Where ``--install`` writes instead when another file's line for /tmp/.nx would be read first: systemd-tmpfiles
#: obeys the first line for a path, and reads its files in the order of their names.
EARLY_DROP_IN = "/etc/tmpfiles.d/00-nxsock.conf"
#: systemd-tmpfiles' directories, most important first: a file in an earlier one masks a same-named file in a later one.
TMPFILES_DIRS = ("/etc/tmpfiles.d", "/run/tmpfiles.d", "/usr/local/lib/tmpfiles.d", "/usr/lib/tmpfiles.d")
#: The line types that create or take over the path they name; for one path the first such line is obeyed and the
#: later ones are ignored ("Duplicate line for path").  The others (``x``, ``z``, ``r``, ``e``…) apply beside it.
CREATING_TYPES = frozenset("fFwdDvqQpLcbC")


class TmpfilesLine(t.NamedTuple):
    """One line of a ``tmpfiles.d`` file: the file, its line number, and its whitespace-separated fields."""

    file: str
    number: int
    fields: tuple[str, ...]

    @property
    def type(self) -> str:
        """The line type without its ``!``, ``-``, ``=``, ``^``, ``+`` or ``?`` modifiers."""
        return self.fields[0].rstrip("!-=^+?~")[:1]

    @property
    def path(self) -> str:
        return self.fields[1].rstrip("/") or "/" if len(self.fields) > 1 else ""

    def field(self, index: int) -> str:
        """Mode (2), user (3), group (4) or age (5), ``-`` where the line leaves it out."""
        return self.fields[index] if len(self.fields) > index else "-"

    @property
    def where(self) -> str:
        return f"{self.file}:{self.number}"


def tmpfiles_lines(view: FsView) -> list[TmpfilesLine]:
    """Every rule line of every ``tmpfiles.d`` file in systemd-tmpfiles' order.

    Files are read in the order of their names, whatever directory holds
    them; a name in an earlier directory of :data:`TMPFILES_DIRS` masks the
    same name in a later one, and a file linked to ``/dev/null`` (or empty)
    masks it with nothing.
    """
    chosen: dict[str, str] = {}
    for directory in TMPFILES_DIRS:
        names = view.listdir(directory)
        if isinstance(names, int):
            continue
        for name in names:
            if name.endswith(".conf") and name not in chosen:
                chosen[name] = f"{directory}/{name}"
    lines = []
    for name in sorted(chosen):
        text = view.read_text(chosen[name], 1 << 20, follow=True)  # /dev/null is no regular file: masked
        if isinstance(text, str):
            for number, line in enumerate(text.splitlines(), 1):
                fields = tuple(line.split())
                if len(fields) >= 2 and not fields[0].startswith("#"):
                    lines.append(TmpfilesLine(chosen[name], number, fields))
    return lines


def container_lines(lines: t.Sequence[TmpfilesLine]) -> list[TmpfilesLine]:
    """The lines systemd-tmpfiles obeys for /tmp/.nx and below: per path, the first creating line and every other
    one."""
    obeyed, created = [], set()
    for line in lines:
        if line.path != CONTAINER and not line.path.startswith(CONTAINER + "/"):
            continue
        if line.type in CREATING_TYPES:
            if line.path in created:
                continue  # "Duplicate line for path …, ignoring."
            created.add(line.path)
        obeyed.append(line)
    return obeyed


def drop_in_for(lines: t.Sequence[TmpfilesLine], ours: t.Callable[[str], bool] = lambda path: True) -> str | None:
    """Where ``--install`` must write so its line for /tmp/.nx is the one obeyed; ``None`` where no name of nxsock's
    sorts before the file whose line is obeyed today.  *ours* tells whether a drop-in file carries nxsock's marker."""
    first = next((line for line in lines if line.path == CONTAINER and line.type in CREATING_TYPES), None)
    if first is None:
        return DROP_IN
    if first.file in (DROP_IN, EARLY_DROP_IN) and ours(first.file):
        return first.file
    name = first.file.rpartition("/")[2]
    for candidate in (DROP_IN, EARLY_DROP_IN):
        if candidate.rpartition("/")[2] < name:
            return candidate
    return None


def _marked(view: FsView, path: str) -> bool:
    """Whether the file at *path* is a drop-in nxsock wrote (it starts with :data:`MARKER`)."""
    text = view.read_text(path, 4096)
    return isinstance(text, str) and text.startswith(MARKER)


class TmpfilesChange(t.NamedTuple):
    verb: t.Literal["write", "remove", "apply", "none", "refuse", "fail"]  # refuse: exit 1; fail (could not write): 73
    path: str
    detail: str


def drop_in_text() -> str:
    """The drop-in, with the equivalent one-liners for images and by hand as comments."""
    return "\n".join(
        [
            MARKER,
            f"# Creates Nx's shared socket container {CONTAINER} at boot, owned by root and",
            "# sticky, and exempts it from /tmp ageing (the '-' age field).",
            f"# In an image:  RUN install -d -m 1777 -o root -g root {CONTAINER}",
            f"# By hand:      {PROVISION_COMMAND}",
            LINE,
            "",
        ]
    )


#: How long ``systemd-tmpfiles --create`` may take before it is killed and reported.
APPLY_TIMEOUT = 20.0

_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


class _Place(t.NamedTuple):
    dir_fd: int
    name: str


def _open_place(path: str) -> _Place | TmpfilesChange:
    """The drop-in directory's descriptor (walked by the trust rule) and the file's name, or why not."""
    directory, _, name = path.rpartition("/")
    try:
        return _Place(open_trusted_directory(directory or "/", os.geteuid()), name)
    except UntrustedPath as exc:
        return TmpfilesChange("refuse", directory, f"is not trusted: {describe_distrust(exc.refusal)}")
    except FileNotFoundError:
        return TmpfilesChange("fail", directory, "does not exist: this system has no systemd-tmpfiles configuration; "
                              f"provision at boot or in the image instead ({PROVISION_COMMAND})")
    except OSError as exc:
        return TmpfilesChange("fail", directory, f"cannot be opened ({errno_name(exc.errno or 0)})")


def _read_existing(place: _Place, path: str) -> str | TmpfilesChange | None:
    """The file's text, ``None`` when absent; never through a link, never blocking on a FIFO."""
    try:
        fd = os.open(place.name, _READ_FLAGS, dir_fd=place.dir_fd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return TmpfilesChange("refuse", path, "is a symbolic link; it is left as it is")
        return TmpfilesChange("refuse", path, f"cannot be read ({errno_name(exc.errno or 0)})")
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return TmpfilesChange(
                "refuse", path, "is not a regular file (a FIFO, a device or a directory); it is left as it is"
            )
        return os.read(fd, 1 << 16).decode("utf-8", "replace")
    except OSError as exc:
        return TmpfilesChange("refuse", path, f"cannot be read ({errno_name(exc.errno or 0)})")
    finally:
        os.close(fd)


def install(*, dry_run: bool, path: str | None = None) -> list[TmpfilesChange]:
    """Write the drop-in (atomically, ``0644``) unless it is already there; refuse to overwrite another's file.

    Without *path*, the drop-in goes where its line is the one systemd-tmpfiles
    obeys: ``nxsock.conf``, or ``00-nxsock.conf`` when another file's line for
    /tmp/.nx would otherwise be read first; where no such name exists, it is
    refused with the file and line to change.

    Everything happens relative to the drop-in directory's descriptor: the
    existing file is read ``O_NOFOLLOW | O_NONBLOCK`` and type-checked by
    ``fstat``, the new one written whole beside it and renamed over it
    (:func:`nxsock.act.writing.write_whole_file`).
    """
    if path is None:
        from ..core.fsview import LiveView

        view = LiveView()
        obeyed = container_lines(tmpfiles_lines(view))
        winning = drop_in_for(obeyed, lambda file: _marked(view, file))
        if winning is None:
            first = next(line for line in obeyed if line.path == CONTAINER and line.type in CREATING_TYPES)
            return [
                TmpfilesChange(
                    "refuse",
                    first.file,
                    f"line {first.number} (`{' '.join(first.fields)}`) is read before "
                    "any drop-in nxsock could write, and systemd-tmpfiles obeys the first line for a path: "
                    f"change that line to `{LINE}` (nxsock does not edit another package's file)",
                )
            ]
        path = winning
    place = _open_place(path)
    if isinstance(place, TmpfilesChange):
        return [place]
    try:
        current = _read_existing(place, path)
        if isinstance(current, TmpfilesChange):
            return [current]
        text = drop_in_text()
        if current == text:
            return [TmpfilesChange("none", path, "already installed")]
        if current is not None and not current.startswith(MARKER):
            return [TmpfilesChange("refuse", path, "exists and was not written by nxsock; it is left as it is")]
        if dry_run:
            return [TmpfilesChange("write", path, "would write the drop-in")]
        problem = write_whole_file(place.dir_fd, place.name, text.encode("utf-8"), 0o644)
        if problem is not None:
            return [TmpfilesChange("refuse" if problem.refused else "fail", path, problem.reason)]
        return [TmpfilesChange("write", path, "wrote the drop-in")]
    finally:
        os.close(place.dir_fd)


def apply(path: str | None = None, timeout: float = APPLY_TIMEOUT) -> TmpfilesChange | None:
    """Let systemd-tmpfiles create what the drop-in says, where it is installed; ``None`` where it is not.

    Bounded in time: a tool that does not finish within *timeout* is killed and reported.
    Its exit status is not the verdict — it exits 0 with a symlink at the
    container — the caller judges the container afterwards.
    """
    tool = shutil.which("systemd-tmpfiles")
    if tool is None:
        return None
    if path is None:
        path = EARLY_DROP_IN if os.path.lexists(EARLY_DROP_IN) else DROP_IN
    try:
        result = subprocess.run([tool, "--create", path], capture_output=True, text=True, check=False,
                                stdin=subprocess.DEVNULL, timeout=timeout)
    except subprocess.TimeoutExpired:
        return TmpfilesChange(
            "refuse", path, f"systemd-tmpfiles --create did not finish within {timeout:g} s and was stopped"
        )
    except OSError as exc:
        return TmpfilesChange("refuse", path, f"systemd-tmpfiles could not be run ({errno_name(exc.errno or 0)})")
    detail = "applied with systemd-tmpfiles --create" if result.returncode == 0 else result.stderr.strip()[:200]
    return TmpfilesChange("apply" if result.returncode == 0 else "refuse", path, detail)


def uninstall(*, dry_run: bool, path: str | None = None) -> list[TmpfilesChange]:
    """Remove the drop-in nxsock installed (both names it may have used); a file without nxsock's marker is never
    removed."""
    if path is None:
        early = _uninstall_one(dry_run=dry_run, path=EARLY_DROP_IN)
        changes = [c for c in early if c.verb != "none"] + _uninstall_one(dry_run=dry_run, path=DROP_IN)
        if len(changes) > 1:
            changes = [c for c in changes if c.verb != "none"]
        return changes
    return _uninstall_one(dry_run=dry_run, path=path)


def _uninstall_one(*, dry_run: bool, path: str) -> list[TmpfilesChange]:
    """Remove one drop-in of nxsock's at *path*."""
    place = _open_place(path)
    if isinstance(place, TmpfilesChange):
        return [TmpfilesChange("none", path, "not installed")] if place.verb == "fail" else [place]
    try:
        current = _read_existing(place, path)
        if isinstance(current, TmpfilesChange):
            return [current]
        if current is None:
            return [TmpfilesChange("none", path, "not installed")]
        if not current.startswith(MARKER):
            return [TmpfilesChange("refuse", path, "was not written by nxsock; it is left as it is")]
        if not dry_run:
            try:
                os.unlink(place.name, dir_fd=place.dir_fd)
            except OSError as exc:
                return [TmpfilesChange("fail", path, f"cannot be removed ({errno_name(exc.errno or 0)})")]
        return [TmpfilesChange("remove", path, "would remove the drop-in" if dry_run else "removed the drop-in")]
    finally:
        os.close(place.dir_fd)
