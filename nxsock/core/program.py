"""How a remedy run with ``sudo`` names nxsock, so that root finds the same program.

``sudo`` searches its own ``secure_path``, not the user's ``PATH``: an nxsock
installed in a virtual environment or ``~/.local/bin`` is "command not found"
as ``sudo nxsock …``.  Where root's path finds no nxsock, the remedy names the
running one by its absolute path (``python -m nxsock`` by its interpreter's).
"""

from __future__ import annotations

import functools
import os
import shutil
import sys

__all__ = ["SECURE_PATH", "root_program"]

#: The ``secure_path`` Debian's, Ubuntu's and Fedora's sudoers give root (``/etc/sudoers`` is readable only by root).
SECURE_PATH = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin", "/snap/bin")


def _quoted(text: str) -> str:
    from .remedy import shell_quote  # imported late: remedy.py renders with this module

    return shell_quote(text)


@functools.lru_cache(maxsize=1)
def root_program() -> str:
    """``nxsock`` where root's path finds one; else the running nxsock's absolute path, shell-quoted.

    Asked only when a ``sudo`` line is printed, so the common commands stat nothing for it.
    """
    if shutil.which("nxsock", path=os.pathsep.join(SECURE_PATH)) is not None:
        return "nxsock"
    script = os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    if os.path.basename(script) == "nxsock" and os.access(script, os.X_OK):
        return _quoted(script)
    return f"{_quoted(sys.executable)} -m nxsock" if sys.executable else "nxsock"
