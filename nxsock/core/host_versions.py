"""The versions a bug report needs beyond Python's: Node's (the one Nx runs on) and the OS release.

Read only for ``doctor --report``, never on the fast path: asking Node spawns it.  Each answer is checked
against its grammar before it is shown, so neither a planted ``node`` nor ``/etc/os-release`` can put more than
a short line of text into a report (and the report escapes that line as it escapes every name from disk).
"""

from __future__ import annotations

import os
import re
import stat
import subprocess

__all__ = ["node_version", "os_release"]

_NODE_VERSION = re.compile(r"v\d{1,4}\.\d{1,4}\.\d{1,4}(?:-[0-9A-Za-z.]{1,40})?")
_OS_RELEASE_LINE = re.compile(r"PRETTY_NAME=(?P<q>[\"']?)(?P<value>[^\"'\n]{1,120})(?P=q)\s*")
#: Where the OS release is described, in the order systemd's os-release(5) reads them.
OS_RELEASE_FILES = ("/etc/os-release", "/usr/lib/os-release")


def node_version(timeout: float = 5.0) -> str | None:
    """``node --version`` as the workspace's ``PATH`` finds it (``v20.11.1``), or ``None``: no node, no answer in
    *timeout* seconds, or an answer that is not a version."""
    try:
        run = subprocess.run(["node", "--version"], capture_output=True, stdin=subprocess.DEVNULL, timeout=timeout,
                             check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    answer = run.stdout[:64].decode("ascii", "replace").strip()
    return answer if run.returncode == 0 and _NODE_VERSION.fullmatch(answer) else None


def os_release(files: tuple[str, ...] = OS_RELEASE_FILES) -> str | None:
    """The OS release's ``PRETTY_NAME`` (``Debian GNU/Linux 12 (bookworm)``), or ``None`` where none is readable."""
    for path in files:
        try:  # a FIFO or a device planted there must not hang the report: open without blocking, read a bounded size
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
        except OSError:
            continue
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                continue
            text = os.read(fd, 16384).decode("utf-8", "replace")
        except OSError:
            continue
        finally:
            os.close(fd)
        for line in text.splitlines():
            match = _OS_RELEASE_LINE.fullmatch(line)
            if match:
                return match["value"]
        return None  # the first readable file decides, as os-release(5) says
    return None
