"""The versions a bug report needs beyond Python's: Node's (the one Nx runs on) and the OS release.

Read only for ``doctor --report``, never on the fast path: asking Node spawns it.  Each answer is checked
against its grammar before it is shown, so neither a planted ``node`` nor ``/etc/os-release`` can put more than
a short line of text into a report (and the report escapes that line as it escapes every name from disk).
"""

from __future__ import annotations

import contextlib
import os
import re
import select
import shutil
import signal
import stat
import subprocess
import time

__all__ = ["node_version", "os_release"]

_NODE_VERSION = re.compile(r"v\d{1,4}\.\d{1,4}\.\d{1,4}(?:-[0-9A-Za-z.]{1,40})?")
_OS_RELEASE_LINE = re.compile(r"PRETTY_NAME=(?P<q>[\"']?)(?P<value>[^\"'\n]{1,120})(?P=q)\s*")
#: The most of node's answer read: a version is a few bytes.
_MAX_ANSWER = 64
#: Where the OS release is described, in the order systemd's os-release(5) reads them.
OS_RELEASE_FILES = ("/etc/os-release", "/usr/lib/os-release")


def node_version(timeout: float = 5.0) -> str | None:
    """``node --version`` as the ``PATH`` finds it (``v20.11.1``), or ``None``: no node, no answer in *timeout*
    seconds, or an answer that is not a version.

    Only a ``node`` that no other user could have placed is run: ``PATH``'s relative entries (an empty one is the
    working directory — a peer's workspace, when root runs ``doctor --user`` there) are skipped, and the file
    found must pass the trust rule (itself and every level above it root's or yours, writable by no one else).
    Of its answer at most :data:`_MAX_ANSWER` bytes are read: a ``node`` that floods its output fills nothing.
    """
    from .trust import judge_path

    search = os.pathsep.join(d for d in os.environ.get("PATH", os.defpath).split(os.pathsep) if d.startswith("/"))
    found = shutil.which("node", path=search) if search else None
    if found is None:
        return None
    real = os.path.realpath(found)  # the file judged is the file run: nothing resolves it again between
    if judge_path(real, os.geteuid()) is not None:
        return None
    try:
        child = subprocess.Popen(["node", "--version"], executable=real, stdout=subprocess.PIPE,
                                 stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    except (OSError, subprocess.SubprocessError):
        return None
    assert child.stdout is not None
    answer = b""
    deadline = time.monotonic() + timeout
    try:
        while len(answer) <= _MAX_ANSWER and (left := deadline - time.monotonic()) > 0:
            if not select.select([child.stdout], [], [], left)[0]:
                break
            chunk = os.read(child.stdout.fileno(), _MAX_ANSWER + 1 - len(answer))
            if not chunk:
                break
            answer += chunk
        try:  # a flood is no version: it is not waited for
            code = None if len(answer) > _MAX_ANSWER else child.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            code = None
    finally:
        if child.poll() is None:
            with contextlib.suppress(OSError):
                os.killpg(child.pid, signal.SIGKILL)
            child.wait()
        child.stdout.close()
    text = answer[:_MAX_ANSWER].decode("ascii", "replace").strip()
    return text if code == 0 and len(answer) <= _MAX_ANSWER and _NODE_VERSION.fullmatch(text) else None


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
