"""Run argv as root in a new user namespace mapped 1:1 onto the parent's first 65,536 ids (root writes the maps).

``unshare --map-users`` needs newuidmap, which this machine lacks; as root, the parent may write any mapping.
A state runs in one to get limits of its own (``user.max_inotify_watches``), as a container's user namespace has.
"""

from __future__ import annotations

import ctypes
import os
import sys

CLONE_NEWUSER = 0x10000000


def main() -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    unshared_r, unshared_w = os.pipe()
    mapped_r, mapped_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        if libc.unshare(CLONE_NEWUSER) != 0:
            print(f"userns: unshare: {os.strerror(ctypes.get_errno())}", file=sys.stderr)
            os._exit(1)
        os.write(unshared_w, b"x")
        os.read(mapped_r, 1)
        os.setgid(0)
        os.setuid(0)
        os.execvp(sys.argv[1], sys.argv[1:])
    os.read(unshared_r, 1)
    for name, text in (("uid_map", "0 0 65536\n"), ("setgroups", "allow\n"), ("gid_map", "0 0 65536\n")):
        with open(f"/proc/{pid}/{name}", "w") as f:
            f.write(text)
    os.write(mapped_w, b"x")
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main())
