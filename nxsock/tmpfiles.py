"""The systemd-tmpfiles drop-in that recreates ``/tmp/.nx`` at boot and exempts it from ageing.

A tmpfs ``/tmp`` is empty after a reboot, and ``systemd-tmpfiles-clean`` ages
what is left: without the drop-in, the first user to run Nx after a reboot
owns the container and every other user is demoted.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import typing as t

from .layout import CONTAINER
from .wording import PROVISION_COMMAND

__all__ = ["DROP_IN", "MARKER", "TmpfilesChange", "drop_in_text", "install", "uninstall"]

#: Where ``--tmpfiles --install`` writes, and what ``--uninstall`` removes.
DROP_IN = "/etc/tmpfiles.d/nxsock.conf"
#: The first line of a drop-in nxsock wrote; a file without it is never touched.
MARKER = "# Written by nxsock provision --tmpfiles --install."
LINE = f"d {CONTAINER} 1777 root root -"


class TmpfilesChange(t.NamedTuple):
    verb: str  # "write" | "remove" | "apply" | "none" | "refuse"
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


def install(*, dry_run: bool, path: str = DROP_IN) -> list[TmpfilesChange]:
    """Write the drop-in (atomically, ``0644``) unless it is already there; refuse to overwrite another's file."""
    text = drop_in_text()
    try:
        with open(path, encoding="utf-8") as existing:
            current = existing.read()
    except FileNotFoundError:
        current = None
    except OSError as exc:
        return [TmpfilesChange("refuse", path, f"cannot be read ({exc.strerror})")]
    if current == text:
        return [TmpfilesChange("none", path, "already installed")]
    if current is not None and not current.startswith(MARKER):
        return [TmpfilesChange("refuse", path, "exists and was not written by nxsock; it is left as it is")]
    if dry_run:
        return [TmpfilesChange("write", path, "would write the drop-in")]
    partial = f"{path}.nxsock-{os.getpid()}"
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    try:
        os.write(fd, text.encode("utf-8"))
        os.fchmod(fd, 0o644)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(partial, path)
    return [TmpfilesChange("write", path, "wrote the drop-in")]


def apply(path: str = DROP_IN) -> TmpfilesChange | None:
    """Let systemd-tmpfiles create what the drop-in says, where it is installed; ``None`` where it is not."""
    tool = shutil.which("systemd-tmpfiles")
    if tool is None:
        return None
    result = subprocess.run([tool, "--create", path], capture_output=True, text=True, check=False)
    detail = "applied with systemd-tmpfiles --create" if result.returncode == 0 else result.stderr.strip()[:200]
    return TmpfilesChange("apply" if result.returncode == 0 else "refuse", path, detail)


def uninstall(*, dry_run: bool, path: str = DROP_IN) -> list[TmpfilesChange]:
    """Remove the drop-in nxsock installed; a file without nxsock's marker is never removed."""
    try:
        with open(path, encoding="utf-8") as existing:
            current = existing.read()
    except FileNotFoundError:
        return [TmpfilesChange("none", path, "not installed")]
    except OSError as exc:
        return [TmpfilesChange("refuse", path, f"cannot be read ({exc.strerror})")]
    if not current.startswith(MARKER):
        return [TmpfilesChange("refuse", path, "was not written by nxsock; it is left as it is")]
    if not dry_run:
        os.unlink(path)
    return [TmpfilesChange("remove", path, "would remove the drop-in" if dry_run else "removed the drop-in")]
