"""Root's side of a conformance batch: every state of one release, in this private mount namespace.

usage: unshare -m --propagation private python batch_driver.py <spec.json>   (as root; see ``batch.py``)

Servers start once, as the states' uid, from ``/``: nxsock's (``nxsock_server.py``, a child forked per
run) and the release's resolver (``resolve.js --serve``). The native binding of the later releases reads HOME
once and keeps it for the life of its process (a HOME changed or removed since is not seen): for them the spec
names what the binding keeps (``node_server_keeps``), the states are taken grouped by those variables' values,
and the resolver is started afresh for each group. For each state: fresh tmpfs ``/tmp`` and
``/home`` are mounted and the state is built (shell, as root); the tree is recorded; nxsock's ``paths
--json`` (and ``paths``, when asked) answers; the tree is recorded again; the release's resolver answers;
both tmpfs are unmounted. The servers wait in ``/`` between requests, so nothing of one state's filesystem
outlives it. One JSON line per state on stdout.

Standard library only: it runs under the interpreter staged for the test uid, and imports nothing once the
first tmpfs hides ``/tmp``.
"""

import json
import os
import select
import signal
import stat
import subprocess
import sys
import time

TYPES = {stat.S_IFDIR: "d", stat.S_IFREG: "f", stat.S_IFLNK: "l", stat.S_IFIFO: "p", stat.S_IFSOCK: "s",
         stat.S_IFCHR: "c", stat.S_IFBLK: "b"}
HANG_GUARD = 120.0  # seconds one answer may take before its server is called hung (a guard, not a pace)


def _line(path: bytes, info: os.stat_result) -> str:
    """One entry as ``find -printf '%y %U %G %m %i %s %l %p'`` prints it."""
    kind = TYPES.get(stat.S_IFMT(info.st_mode), "U")
    target = os.readlink(path) if kind == "l" else b""
    fields = f"{kind} {info.st_uid} {info.st_gid} {stat.S_IMODE(info.st_mode):o} {info.st_ino} {info.st_size} "
    return fields + (target + b" " + path).decode("utf-8", "surrogateescape") + "\n"


def _walk(path: bytes, device: int, lines: list[str]) -> None:
    try:
        info = os.lstat(path)
    except OSError:
        return
    lines.append(_line(path, info))
    if not stat.S_ISDIR(info.st_mode) or info.st_dev != device:
        return  # -xdev: a mount point is listed, not entered
    try:
        names = os.listdir(path)
    except OSError:
        return
    for name in names:
        child = path + b"/" + name
        if b"/node_modules/" not in child:  # -path '*/node_modules/*' -prune: the link is listed, not what it holds
            _walk(child, device, lines)


def snapshot() -> str:
    """Every entry of ``/tmp`` and ``/home`` (type, owner, group, mode, inode, size, link target, path), sorted:
    what ``harness.SNAPSHOT``'s ``find`` lists, without starting a process."""
    lines: list[str] = []
    for top in (b"/tmp", b"/home"):
        try:
            device = os.lstat(top).st_dev
        except OSError:
            continue
        _walk(top, device, lines)
    return "".join(sorted(lines))


class Server:
    """One long-running process as the test uid: a request line in, an answer line out (on *answer_fd*)."""

    def __init__(self, argv: list[str], name: str) -> None:
        self.argv, self.name = argv, name
        self.proc: subprocess.Popen[bytes] | None = None
        self.pending = b""

    def _start(self) -> None:
        # The answers come on the child's descriptor 3; its own stdout goes to our stderr, for whoever debugs.
        self.proc = subprocess.Popen(["bash", "-c", 'exec "$@" 3>&1 1>&2', "-", *self.argv], cwd="/",
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, start_new_session=True)
        self.pending = b""

    def stop(self) -> None:
        if self.proc is None:
            return
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self.proc = None

    def _fail(self, why: str) -> dict:
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()
            self.proc = None  # a fresh one for the next state
        return {"failure": f"{self.name}: {why}"}

    def ask(self, request: dict) -> dict:
        """The answer to *request*; ``{"failure": …}`` when the server died or hung (it is restarted next time)."""
        if self.proc is None:
            self._start()
        assert self.proc is not None and self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self.proc.stdin.write(json.dumps(request).encode() + b"\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            return self._fail("exited before the request")
        deadline = time.monotonic() + HANG_GUARD
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.pending:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return self._fail(f"no answer in {HANG_GUARD:.0f} s")
            data = os.read(fd, 65536)
            if not data:
                return self._fail(f"exited (status {self.proc.wait()}) without answering")
            self.pending += data
        line, self.pending = self.pending.split(b"\n", 1)
        return json.loads(line)


MOUNT = """mount -t tmpfs -o mode=1777 tmpfs /tmp || exit 1
mount -t tmpfs -o mode=0755 tmpfs /home || exit 1
"""
UNMOUNT = "umount -R /tmp 2>/dev/null || umount -l /tmp; umount -R /home 2>/dev/null || umount -l /home"


def run_state(state: dict, nxsock: Server, nx: Server) -> dict:
    """Build one state on fresh tmpfs, ask both sides, tear it down; what each said."""
    built = subprocess.run(["bash", "-c", MOUNT + "(\nset -e\n" + state["setup"] + "\n)"], cwd="/",
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    result: dict = {"setup_failed": built.returncode != 0,
                    "setup_output": built.stdout.decode("utf-8", "surrogateescape")}
    try:
        result["tree_before"] = snapshot()
        result["nxsock"] = nxsock.ask({"cwd": state["cwd"], "env": state["nxsock_env"], "args": ["paths", "--json"]})
        if state["text"]:  # the human output: its stderr and exit code
            result["text"] = nxsock.ask({"cwd": state["cwd"], "env": state["nxsock_env"], "args": ["paths"],
                                         "stdout": "null"})
        result["tree_after"] = snapshot()
        result["oracle"] = nx.ask({"cwd": state["cwd"], "env": state["node_env"]})
    finally:
        subprocess.run(["bash", "-c", UNMOUNT], cwd="/", stdin=subprocess.DEVNULL)
    return result


def main(spec_path: str) -> None:
    with open(spec_path, encoding="utf-8") as file:
        spec = json.load(file)
    os.chdir("/")
    nxsock = Server(spec["nxsock_server"], "nxsock's server")
    nx = Server(spec["node_server"], "Nx's resolver")
    states = spec["states"]

    def kept(index: int) -> str:  # what the resolver's process keeps from the first state it answers
        return json.dumps([states[index]["node_env"].get(name) for name in spec["node_server_keeps"]])

    previous = None
    try:
        for index in sorted(range(len(states)), key=kept):  # stable: in order within a group
            if previous is not None and kept(index) != previous:
                nx.stop()  # a fresh resolver for the next group (started on its first request)
            previous = kept(index)
            result = run_state(states[index], nxsock, nx)
            result["index"] = index
            sys.stdout.write(json.dumps(result) + "\n")
            sys.stdout.flush()
    finally:
        nxsock.stop()
        nx.stop()


if __name__ == "__main__":
    main(sys.argv[1])
