"""How a ``sudo`` line names nxsock, so that root runs the same program the user ran.

``sudo`` searches its own ``secure_path``, not the user's ``PATH``: an nxsock
installed in a virtual environment, by pipx or in ``~/.local/bin`` is
"command not found" as ``sudo nxsock …``.  How this process was started is a
fact of the process, not of the remedy: the command layer asks
:func:`nxsock_for_root` once, from ``sys.argv[0]``, and hands the answer on as
data (:attr:`nxsock.core.remedy.Policy.nxsock_for_root`), so the renderer
reads no process state and a test pins the name.
"""

from __future__ import annotations

import os
import shutil
import typing as t

from .remedy import shell_quote

__all__ = ["SECURE_PATH", "nxsock_for_root"]

#: The ``secure_path`` Debian's, Ubuntu's and Fedora's sudoers give root (``/etc/sudoers`` is readable only by root).
SECURE_PATH = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin", "/snap/bin")


def nxsock_for_root(argv0: str, cwd: str | None, secure_path: t.Sequence[str] = SECURE_PATH) -> str:
    """The word a pasted ``sudo`` line runs nxsock by: ``nxsock``, or the running script's absolute path, quoted.

    The running ``nxsock`` script (a venv's, pipx's) is named by its absolute
    path unless root's path finds that same file — and only when no other user
    could replace it before root runs the line: the script, every level above
    it and every link on the way must be root's or this user's, writable by no
    one else (the trust rule); a venv in a shared directory gets the plain name.  Anything else — ``python -m
    nxsock``, an embedding — gets the plain ``nxsock``: under ``sudo`` the
    interpreter need not find the package it found here (``PYTHONPATH``, the
    working directory and the user's site directory are the user's, not
    root's), so a line naming it could fail where the plain name is at least
    the user's to adapt.

    >>> nxsock_for_root("/usr/lib/python3/dist-packages/nxsock/__main__.py", "/")
    'nxsock'
    """
    if os.path.basename(argv0) != "nxsock" or (cwd is None and not os.path.isabs(argv0)):
        return "nxsock"
    script = os.path.normpath(os.path.join(cwd or "/", argv0))
    if "`" in script or "\u2014" in script:  # prose quotes a command in `…` or ends it at " — ": it must hold whole
        return "nxsock"
    if not os.path.isfile(script) or not os.access(script, os.X_OK):
        return "nxsock"
    from .trust import judge_path  # the printed path is resolved again by root: no one else may hold a level of it

    if judge_path(script, os.geteuid()) is not None:
        return "nxsock"
    found = shutil.which("nxsock", path=os.pathsep.join(secure_path))
    if found is not None and os.path.realpath(found) == os.path.realpath(script):
        return "nxsock"
    return shell_quote(script)
