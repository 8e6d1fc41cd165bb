"""Capture what the real Nx prints in real failure states: the corpus ``doctor --explain`` is tested on.

Run as root, from the checkout, with the interpreter the tests use (it needs
nxsock's test dependencies: ``pip install -e '.[test]'``)::

    python3 tests/corpus/capture.py                      # every release, state and command
    python3 tests/corpus/capture.py --release 24.0.7     # a new release, the same states
    python3 tests/corpus/capture.py --state foreign-socket --command client

Each run builds one state in a private mount and pid namespace (fresh tmpfs
``/tmp`` and ``/home``, a tiny workspace with one project and a
``nx:run-commands`` target), then runs one Nx command as an unprivileged test
uid and stores its stdout and stderr together, verbatim, in
``<release>/<state>--<command>.txt``.  ``<release>/manifest.json`` holds the recipe of
each file: release, state, its setup (shell, as root), the environment, the
command and its exit code.  The pid namespace ends every daemon the run
started.  ``expected.json`` names the messages each capture holds, as
reviewed: ``--expect`` rewrites it from what ``doctor --explain`` recognises
now, for a reviewer to read in the diff against the captures; re-capturing
never touches it.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import os
import re
import shlex
import subprocess
import sys
import typing as t
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

try:
    import harness
except ImportError as exc:  # run with an interpreter that lacks the test dependencies
    sys.exit(f"capture: {exc}; run it with the interpreter nxsock's tests use (pip install -e '.[test]')")

RELEASES = ("24.0.6", "24.0.2", "23.3.2", "23.1.1")
#: The release a state swaps in under a running Nx ($NXSOCK_OTHER_NX in its setup): another install of the cache.
OTHER_RELEASE = "24.0.5"
U = harness.USER
P = harness.PEER
HOME = f"/home/u{U}"
WS = f"{HOME}/ws"
DATA = f"{WS}/.nx/workspace-data"
LONG_DIR = "/tmp/" + "l" * 60 + "/" + "m" * 30  # an accepted NX_SOCKET_DIR whose sockets are over 95 characters

#: The workspace's own Nx, the one ``npx nx`` finds in its ``node_modules/.bin``, run without npm's wrapper: the same
#: Nx process printing the same text, and 0.45 CPU-s less a call (npm's own start; hundreds of calls a run, issue 20).
#: The stored captures were made with ``npx nx``; nxsock's remedies that say ``npx nx`` are still applied as printed.
NX = "node_modules/.bin/nx"

COMMANDS = {
    "daemon-start": f"{NX} daemon --start",
    "client": f"NX_DAEMON=true {NX} show projects",
    "run": f"{NX} run pkg:hello",
    "daemon-status": f"{NX} daemon",
    "run-verbose": f"{NX} run pkg:hello --verbose",
    # What a user pastes after a daemon died: Nx's output, the error log it names, then whether the daemon is back.
    "client-log": f"out=$(NX_DAEMON=true {NX} show projects 2>&1); printf '%s\\n' \"$out\"; "
                  "log=$(printf '%s\\n' \"$out\" | sed -n 's/^Log file with the error: //p'); "
                  f"if [ -n \"$log\" ]; then cat -- \"$log\"; echo; fi; NX_DAEMON=true {NX} daemon",
    # `nx watch` left running while the Nx installed under it changes and the daemon is restarted by the new one:
    # the watch registered (the daemon's log says so), node_modules/nx swapped for the other release (~/other-nx), the
    # daemon stopped and started by it; the watch, reconnecting, meets the new daemon's record and exits: its output.
    "watch-version": f"log=.nx/workspace-data/d/daemon.log; NX_DAEMON=true {NX} daemon --start >/dev/null 2>&1; "
                     f"NX_DAEMON=true {NX} watch --all -- echo changed >\"$HOME/watch.out\" 2>&1 & watch=$!; "
                     "until grep -q 'File watcher registered' \"$log\" 2>/dev/null; do sleep 0.1; done; "
                     "ln -sfn \"$(readlink \"$HOME/other-nx\")\" node_modules; "
                     f"NX_DAEMON=true {NX} daemon --stop >/dev/null 2>&1; "
                     f"NX_DAEMON=true {NX} daemon --start >/dev/null 2>&1; "
                     "wait $watch; rc=$?; cat \"$HOME/watch.out\"; exit $rc",
}
#: Commands that are a user's whole sequence: run as written, never wrapped.
SEQUENCES = frozenset({"client-log", "watch-version"})

#: A daemon started by the user in the state's setup (the pid namespace ends it). ``nx daemon --start`` returns once the
#: daemon answers, which is all the state needs.
START_DAEMON = f"as_user {NX} daemon --start >/dev/null 2>&1"
#: A local plugin that ends the daemon (SIGKILL, as the OOM killer does) the first time it is asked for nodes there.
#: Its socket goes first: the kernel may close the listener after the client's connection, and a client reconnecting
#: in between reaches a dying daemon (ECONNRESET, another message); without the file it waits and reports the death.
DAEMON_KILLER = """const fs = require('fs');
const once = '/tmp/daemon-killed-once';
const underDaemon = () => {
  try { return fs.readFileSync(`/proc/${process.ppid}/cmdline`, 'utf8').includes('server/start.js'); }
  catch { return false; } };
const record = `${process.cwd()}/.nx/workspace-data/d/server-process.json`;
module.exports = { name: 'killer', createNodesV2: ['**/project.json', async () => {
  if (underDaemon() && !fs.existsSync(once)) {
    fs.writeFileSync(once, '');
    try { fs.unlinkSync(JSON.parse(fs.readFileSync(record, 'utf8')).socketPath); } catch {}
    process.kill(process.ppid, 'SIGKILL');
    await new Promise(() => {});
  }
  return [];
}] };
"""
DAEMON_SOCKET = f"$(sed -n 's/.*\"socketPath\": *\"\\([^\"]*\\)\".*/\\1/p' {DATA}/d/server-process.json)"


def _copied_nx(left_out: str) -> str:
    """Setup: the workspace's node_modules made a real, whole copy of the installed tree, the user's, ``@nx/<left_out>``
    left out, and a package.json that names nx: a tree the package manager's own command can complete.

    (Node resolves a link to its target, so a linked nx would still find the shared install's binding.)
    """
    nm = f"{WS}/node_modules"
    return (f"src=$(readlink -f {nm}); rm {nm}; cp -a \"$src\" {nm}; rm -rf {nm}/@nx/{left_out}; "
            f"echo '{{\"name\": \"ws\", \"private\": true, \"devDependencies\": {{\"nx\": \"'\"$NX_VERSION\"'\"}}}}' "
            f"> {WS}/package.json; chown -R -h {U}:{U} {nm} {WS}/package.json")


def _unpacked_binding(triple: str) -> str:
    """Setup: ``@nx/nx-<triple>`` at the release's version unpacked where npm installs it, from the tarball ``npm pack``
    fetched once into the test cache (:func:`harness.pack_nx_binding`, called by :func:`_workspace` before the state is
    built: inside it, a checkout or interpreter under /tmp is hidden), so a capture needs no network after its first."""
    target = f"{WS}/node_modules/@nx/nx-{triple}"
    return (f"install -d -o {U} -g {U} {target}; "
            f"tar -xzf \"$NXSOCK_BINDINGS/nx-nx-{triple}-$NX_VERSION.tgz\" --strip-components=1 -C {target}; "
            f"chown -R {U}:{U} {target}")


_BINDING_TARBALL = re.compile(r"\$NXSOCK_BINDINGS/nx-nx-([a-z0-9-]+)-\$NX_VERSION\.tgz")


class State(t.NamedTuple):
    """One failure state: how it is built, in what environment, and which Nx commands show it."""

    name: str
    about: str
    setup: str = ""  # shell, as root, after the workspace exists; ``as_user CMD`` runs CMD as the user
    env: t.Mapping[str, str] = {}
    commands: tuple[str, ...] = ("daemon-start", "client", "run")
    wrap: str = ""  # a prefix for the Nx command, run as the user: a sandbox
    tmp_size: str = ""  # the size of the /tmp tmpfs, when the state is a full disk
    timeout: int = 120
    #: ``False``: the cause is a one-time event (a kill), proven only on the state Nx left, not rebuilt before Nx runs.
    standing: bool = True
    #: A limit on inotify watches per user: the state runs in a user namespace of its own (mapped 1:1) whose
    #: ``user.max_inotify_watches`` is set to it, as a container's can be.
    inotify_watches: int = 0
    #: ``False``: Nx takes minutes to print the message here, so the proof pastes the stored capture into the state as
    #: built (the rerun is then Nx's first run, with the remedy) and does not run Nx to print it again.
    reprint: bool = True
    #: The releases the state is captured for (none: every one); a swap to OTHER_RELEASE means something only above it.
    releases: tuple[str, ...] = ()
    #: What building the state needs beyond the corpus's own (``@pytest.mark.tool`` names, tests/conftest.py).
    tools: tuple[str, ...] = ()


STATES: tuple[State, ...] = (
    State("fresh", "a fresh machine: nothing wrong (the control)"),
    State("daemon-stopped", "no daemon is running", commands=("daemon-status",)),
    State(
        "foreign-socket",
        "the running daemon's socket file belongs to another user (connect EACCES)",
        f"{START_DAEMON}; chown {P}:{P} {DAEMON_SOCKET}",
        commands=("client", "run"),
    ),
    State(
        "foreign-socket-dir",
        "the running daemon's socket directory belongs to another user (connect EACCES)",
        f"{START_DAEMON}; chown {P}:{P} \"$(dirname {DAEMON_SOCKET})\"",
        commands=("client", "run"),
    ),
    State("foreign-container", "/tmp/.nx belongs to another user", f"install -d -m 1777 -o {P} -g {P} /tmp/.nx"),
    State("container-0777", "/tmp/.nx is root's, 0777 without the sticky bit", "install -d -m 0777 /tmp/.nx"),
    State(
        "socket-dir-shared", "NX_SOCKET_DIR names /tmp itself (shared-with-other-users)", env={"NX_SOCKET_DIR": "/tmp"}
    ),
    State(
        "socket-dir-os-temp",
        "NX_SOCKET_DIR names the user's private TMPDIR (os-temp-root)",
        f"install -d -m 0700 -o {U} -g {U} {HOME}/tmp",
        env={"TMPDIR": f"{HOME}/tmp", "NX_SOCKET_DIR": f"{HOME}/tmp"},
    ),
    State(
        "socket-dir-nx-managed",
        "NX_SOCKET_DIR names ~/.nx, which Nx manages (nx-managed)",
        env={"NX_SOCKET_DIR": f"{HOME}/.nx"},
    ),
    State(
        "socket-dir-foreign",
        "NX_SOCKET_DIR names a directory another user owns: refused, the workspace fallback",
        f"install -d -m 0700 -o {P} -g {P} /tmp/peer-sockets",
        env={"NX_SOCKET_DIR": "/tmp/peer-sockets"},
    ),
    State(
        "socket-path-too-long",
        "NX_SOCKET_DIR is accepted but every socket in it is over 95 characters",
        f"install -d -m 0700 -o {U} -g {U} /tmp/{'l' * 60} {LONG_DIR}",
        env={"NX_SOCKET_DIR": LONG_DIR},
    ),
    State(
        "untrusted-data-dir",
        "NX_WORKSPACE_DATA_DIRECTORY=/tmp, which other users can replace",
        env={"NX_WORKSPACE_DATA_DIRECTORY": "/tmp"},
    ),
    State(
        "root-workspace-data",
        "the workspace data directory was made by `sudo nx`: root's, 0755",
        f"install -d -m 0755 -o 0 -g 0 {WS}/.nx {DATA}",
    ),
    State(
        "root-daemon-dir",
        "the daemon's directory in the workspace data was made by `sudo nx`",
        f"install -d -m 0755 -o {U} -g {U} {WS}/.nx {DATA}; install -d -m 0755 -o 0 -g 0 {DATA}/d",
    ),
    State("tmpdir-missing", "TMPDIR names a directory that does not exist", env={"TMPDIR": f"{HOME}/gone"}),
    State(
        "sandbox-no-unix-sockets",
        "a seccomp policy refuses unix sockets with EPERM, as srt does without allowAllUnixSockets",
        wrap="nounix",
    ),
    State(
        "sandbox-user-namespace",
        "an unprivileged user namespace (as bwrap, srt and codex make): other owners show as 65534",
        "install -d -m 1777 /tmp/.nx",
        wrap="unshare -U --map-current-user",
        commands=("client", "run"),
        timeout=400,
    ),
    State(
        "binding-cache-full", "a 1 MiB /tmp: the native binding cannot be copied into its cache (ENOSPC)", tmp_size="1m"
    ),
    State(
        "binding-missing",
        "a real copy of nx without this host's binding package (optional dependencies skipped)",
        _copied_nx("nx-linux-x64-gnu"),
        commands=("run",),
    ),
    State(
        "binding-musl-only",
        "a real copy of nx holding only the musl binding package, as from an Alpine install",
        f"{_copied_nx('nx-linux-x64-gnu')}; {_unpacked_binding('linux-x64-musl')}",
        commands=("run",),
    ),
    State(
        "binding-cache-noexec",
        "/tmp mounted noexec: the binding's cached copy cannot be mapped (ERR_DLOPEN_FAILED)",
        "mount -o remount,noexec /tmp",
        commands=("run",),
    ),
    State(
        "binding-cache-readonly",
        "the binding cache's version directory is the user's but read-only (EACCES)",
        f"install -d -m 1777 /tmp/.nx; install -d -m 0700 -o {U} -g {U} /tmp/.nx/{U} /tmp/.nx/{U}/native-cache; "
        f"install -d -m 0500 -o {U} -g {U} /tmp/.nx/{U}/native-cache/\"$NX_VERSION\"",
    ),
    State(
        "daemon-killed",
        "the daemon is killed (SIGKILL) while it computes the graph for a client: a local plugin ends it once",
        f"install -d -o {U} -g {U} {WS}/tools; printf %s {shlex.quote(DAEMON_KILLER)} > {WS}/tools/killer.js; "
        f"echo '{{\"plugins\": [\"./tools/killer.js\"]}}' > {WS}/nx.json; chown -R {U}:{U} {WS}/tools {WS}/nx.json",
        commands=("client-log",),
        standing=False,
        timeout=200,
    ),
    State(
        "socket-dir-two-workspaces",
        "two workspaces of the user share one NX_SOCKET_DIR: the other's daemon, started "
        "second, took the socket this workspace's daemon had recorded",
        f"install -d -m 0700 -o {U} -g {U} /tmp/shared-sockets {HOME}/other; cp {WS}/nx.json "
        f"{WS}/package.json {HOME}/other/; "
        f"as_user env NX_DAEMON=true {NX} daemon --start >/dev/null 2>&1; "
        f"ln -s \"$(readlink {WS}/node_modules)\" {HOME}/other/node_modules; chown -R -h {U}:{U} {HOME}/other; "
        f"as_user bash -c 'cd {HOME}/other && NX_DAEMON=true {NX} daemon --start' >/dev/null 2>&1",
        env={"NX_SOCKET_DIR": "/tmp/shared-sockets"},
        commands=("client",),
    ),
)

#: A Node preload (``NODE_OPTIONS=--require``) for plugin workers only: nothing else of Nx runs it.
_IN_WORKER = "if ((process.argv[1] || '').endsWith('plugin-worker.js')) {{ {body} }}\n"
#: The Nx command blocks its own event loop (a long synchronous step, as Nx's own walk of a large workspace can be)
#: right after it starts its first plugin worker, until that worker has exited (it gives up after 30 s unconnected) —
#: or for 40 s if it never does (NX_PLUGIN_NO_TIMEOUTS=true): longer than the worker's own limit either way.
HOST_BUSY = """if (!(process.argv[1] || '').endsWith('plugin-worker.js')) {
  const cp = require('child_process'); const fs = require('fs'); const spawn = cp.spawn; let blocked = false;
  const gone = (pid) => { try { return fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1][0] === 'Z'; }
    catch { return true; } };
  cp.spawn = function (...args) {
    const child = spawn.apply(this, args);
    if (!blocked && (args[1] || []).some((a) => String(a).endsWith('plugin-worker.js'))) {
      blocked = true;
      const cell = new Int32Array(new SharedArrayBuffer(4));
      for (let i = 0; i < 400 && !gone(child.pid); i++) Atomics.wait(cell, 0, 0, 100);
    }
    return child;
  };
}
"""
#: A plugin worker whose start hangs (a stalled preload): it neither listens nor reaches its own timeout.
WORKER_HANGS = _IN_WORKER.format(body="Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 600000);")


def _preload(name: str, code: str) -> str:
    """Setup: *code* written where NODE_OPTIONS's ``--require`` finds it, the user's."""
    return (f"install -d -o {U} -g {U} {HOME}/preload; printf %s {shlex.quote(code)} > {HOME}/preload/{name}.js; "
            f"chown -R {U}:{U} {HOME}/preload")


STATES += (
    State("plugin-host-busy", "the Nx command is busy (a long synchronous step) just after it starts a plugin worker, "
          "until the worker gives up waiting to be connected to (30 s), or for 40 s",
          _preload("busy", HOST_BUSY), env={"NODE_OPTIONS": f"--require {HOME}/preload/busy.js"},
          commands=("run",), standing=False, timeout=240),
    State("plugin-worker-hangs", "every plugin worker hangs before it listens (a stalled preload): Nx polls its "
          "socket 10,000 times, then gives up",
          _preload("hang", WORKER_HANGS), env={"NODE_OPTIONS": f"--require {HOME}/preload/hang.js"},
          commands=("run",), timeout=400, reprint=False),
    State("workspace-read-only", "the workspace is bind-mounted read-only (a sandbox's read-only bind)",
          f"mount --bind {WS} {WS}; mount -o remount,bind,ro {WS}", commands=("run",)),
    State("tmp-read-only", "/tmp is mounted read-only (a read-only container root): /tmp/.nx cannot be created",
          "mount -o remount,ro /tmp", commands=("run-verbose",)),
    State("inotify-limit", "a container (a user namespace of its own) whose inotify limit is 2 watches per user: the "
          "daemon's file watcher cannot watch the workspace", commands=("client-log",), inotify_watches=2),
    State("version-changed", "`nx watch` runs while node_modules/nx is replaced by another release, whose client "
          "restarts the daemon: the watch, reconnecting, finds the daemon's record names another version",
          f"ln -s \"$NXSOCK_OTHER_NX\" {HOME}/other-nx; chown -h {U}:{U} {HOME}/other-nx",
          commands=("watch-version",), standing=False, releases=("24.0.6",)),
    State("umask-0277", "the user's umask is 0277: the .nx Nx creates in the workspace is 0500, so nothing goes "
          "inside it", "umask 0277", commands=("run",)),
    State("socket-dir-no-sockets", "NX_SOCKET_DIR on a filesystem that cannot hold sockets, as WSL's /mnt/c (drvfs): "
          "a FUSE passthrough whose mknod of a socket answers EOPNOTSUPP, as drvfs does (nosockets.py)",
          "mount -t tmpfs -o mode=0755 tmpfs /mnt; install -d /mnt/.c /mnt/c; $NXSOCK_NOSOCKETS /mnt/.c /mnt/c & "
          "for i in $(seq 300); do mountpoint -q /mnt/c && break; sleep 0.1; done; "
          f"install -d -m 0700 -o {U} -g {U} /mnt/c/nx-sockets",
          env={"NX_SOCKET_DIR": "/mnt/c/nx-sockets"}, tools=("fusepy", "/dev/fuse"), releases=("24.0.6",)),
)


@functools.cache
def nounix_helper() -> Path:
    """``nounix.c`` compiled once into the shared test cache, where the test uid can run it."""
    source = (HERE / "nounix.c").read_bytes()
    target = harness.cache_dir() / f"nounix-{hashlib.sha256(source).hexdigest()[:12]}"
    if not target.exists():
        partial = target.with_suffix(".partial")
        subprocess.run(["cc", "-O2", "-o", str(partial), str(HERE / "nounix.c")], check=True)
        partial.chmod(0o755)
        partial.replace(target)
    return target


@functools.cache
def nosockets_fs() -> str:
    """The command (as root) that serves ``nosockets.py``: it and fusepy's one module staged together into the shared
    test cache, run by the interpreter the tests stage (the checkout may lie under the /tmp a state replaces)."""
    import fuse  # fusepy (the [test] extra): importing it finds the machine's libfuse 2

    sources = [HERE / "nosockets.py", Path(fuse.__file__)]
    digest = hashlib.sha256(b"".join(source.read_bytes() for source in sources)).hexdigest()[:12]
    target = harness.cache_dir() / f"nosockets-{digest}"
    if not target.exists():
        partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
        partial.mkdir(mode=0o755)
        for source in sources:
            (partial / source.name).write_bytes(source.read_bytes())
        try:
            partial.replace(target)
        except OSError:  # another run staged it first
            import shutil

            shutil.rmtree(partial)
    python, _ = harness.stage_nxsock()
    return f"env PYTHONPATH={target} PYTHONDONTWRITEBYTECODE=1 {python} {target / 'nosockets.py'}"


@functools.cache
def nx_folder(release: str) -> Path:
    """The release installed once into the shared test cache (its lock is taken once per release, not per run)."""
    return harness.install_nx(release)


def _workspace(release: str, state: State) -> str:
    nx = nx_folder(release)
    bindings = harness.cache_dir() / "nx-bindings"
    for triple in _BINDING_TARBALL.findall(state.setup):  # fetched here, outside the state's fresh /tmp
        bindings = harness.pack_nx_binding(triple, release).parent
    other = nx_folder(OTHER_RELEASE) if "$NXSOCK_OTHER_NX" in state.setup else nx  # the release swapped in
    nosockets = nosockets_fs() if "$NXSOCK_NOSOCKETS" in state.setup else ""  # a filesystem that refuses sockets
    q = shlex.quote
    env = {"NPM_CONFIG_UPDATE_NOTIFIER": "false", **state.env}
    size = f",size={state.tmp_size}" if state.tmp_size else ""
    project = json.dumps(
        {"name": "pkg", "targets": {"hello": {"executor": "nx:run-commands", "options": {"command": "echo hello"}}}}
    )
    return f"""
set -e
mount -t tmpfs -o mode=1777{size} tmpfs /tmp
mount -t tmpfs -o mode=0755 tmpfs /home
install -d -o {U} -g {U} {HOME} {WS} {WS}/pkg
echo '{{}}' > {WS}/nx.json
echo '{{"name": "ws", "private": true}}' > {WS}/package.json
echo {q(project)} > {WS}/pkg/project.json
ln -s {q(str(nx / "node_modules"))} {WS}/node_modules
chown -R -h {U}:{U} {WS}
NX_VERSION={q(release)}
NXSOCK_BINDINGS={q(str(bindings))}
NXSOCK_OTHER_NX={q(str(other / "node_modules"))}
NXSOCK_NOSOCKETS={q(nosockets)}
as_user() {{ ( cd {WS} && {harness.as_user_prefix(U, env)} "$@" ); }}
cd {WS}
"""


def nx_command(state: State, command: str) -> str:
    """The Nx command line as the user types it, with the state's sandbox in front."""
    if command in SEQUENCES:
        return COMMANDS[command]
    words = COMMANDS[command].split()
    assignments = [w for w in words if "=" in w and not w.startswith("-")]
    rest = [w for w in words if w not in assignments]
    wrap = str(nounix_helper()) if state.wrap == "nounix" else state.wrap
    return " ".join([*assignments, "exec", *([wrap] if wrap else []), *rest])


def state_script(release: str, state: State, command: str, then: str = "") -> str:
    """The whole run as root: the state, the Nx command as the user between markers, then *then*."""
    return f"""{_workspace(release, state)}
{state.setup}
set +e
echo '<<<NX'
as_user timeout -k 5 {state.timeout} bash -c {shlex.quote(nx_command(state, command))} </dev/null 2>&1
echo "<<<RC $?"
{then}
"""


def _user_namespace(state: State) -> list[str]:
    """The argv prefix that runs the state in a user namespace with its inotify limit, or none."""
    if not state.inotify_watches:
        return []
    limit = f"echo {state.inotify_watches} > /proc/sys/user/max_inotify_watches && exec \"$@\""
    return [sys.executable, str(HERE / "userns.py"), "sh", "-c", limit, "sh"]


def run_in_namespace(script: str, timeout: float, prefix: t.Sequence[str] = ()) -> str:
    """*script* as root in a fresh mount and pid namespace; everything it started ends with it."""
    proc = subprocess.run(
        [*prefix, "unshare", "-m", "-p", "-f", "--mount-proc", "--kill-child", "--propagation", "private",
         "bash", "-c", script],
        capture_output=True,
        stdin=subprocess.DEVNULL,
        timeout=timeout,
    )
    return proc.stdout.decode("utf-8", "surrogateescape") + proc.stderr.decode("utf-8", "surrogateescape")


def section(output: str, name: str) -> str:
    """The text printed between ``<<<NAME`` and the next marker."""
    start = output.find(f"<<<{name}\n")
    if start < 0:
        return ""
    start += len(name) + 4
    end = output.find("<<<", start)
    return output[start:] if end < 0 else output[start:end]


def capture(release: str, state: State, command: str) -> tuple[str, int]:
    """What Nx printed (stdout and stderr together) and its exit code."""
    out = run_in_namespace(state_script(release, state, command), state.timeout + 120, _user_namespace(state))
    text = section(out, "NX")
    rc_line = next((line for line in out.splitlines() if line.startswith("<<<RC ")), "<<<RC -1")
    return text, int(rc_line.split()[1])


#: The proof's nxsock wrapper first, so a remedy can call it; the workspace's own nx, so ``nx reset`` runs the installed
#: release.
USER_PATH = f"/home/.bin:{WS}/node_modules/.bin:/usr/local/bin:/usr/bin:/bin"


def retarget(text: str, uid: int) -> str:
    """*text*, captured as test uid *uid* (its peer *uid* + 1), as Nx prints it for this run's uids.

    The test uids move with ``NXSOCK_TEST_UID_BASE``; what Nx prints names
    the user's levels (``/tmp/.nx/<uid>``), home and the uids it saw, and
    nothing else of the uid — so a capture pasted into a state built for
    other uids is rewritten in exactly those places, and only there.
    """
    mapping = {str(uid): str(U), str(uid + 1): str(P)}
    if uid == U:
        return text
    return re.sub(
        rf"(?<=/home/u)(?:{uid}|{uid + 1})\b|(?<=/tmp/\.nx/)(?:{uid}|{uid + 1})\b"
        rf"|(?<![\w/.-])(?:{uid}|{uid + 1})\b(?![\w/.-])",
        lambda m: mapping[m.group(0)],
        text,
    )


def prove(
    release: str, state: State, command: str, text: str | None = None, only: str | None = None
) -> dict[str, t.Any]:
    """In a fresh copy of the state: Nx, ``doctor --explain`` on its output, the remedies applied, Nx again
    (``prove.py``).

    With *text* (what Nx printed in this state, from another run) the doctor
    reads the state before Nx ran in it, and the rerun is Nx's first run.
    """
    python, pythonpath = harness.stage_nxsock()
    q = shlex.quote
    env = {"NPM_CONFIG_UPDATE_NOTIFIER": "false", **state.env, "PATH": USER_PATH}
    spec = {
        "as_user": harness.as_user_prefix(U, env),
        "workspace": WS,
        "timeout": state.timeout,
        "nx": nx_command(state, command),
        "nx_unwrapped": nx_command(state._replace(wrap=""), command),
        "wrap": str(nounix_helper()) if state.wrap == "nounix" else state.wrap,
        "nxsock": "/home/.bin/nxsock",
        "mode": "after-run" if text is None else "fresh",
        "text": text,
        "only": only,  # apply only the command given for messages of this kind
    }
    wrapper = f"#!/bin/sh\nPYTHONPATH={q(pythonpath)} PYTHONDONTWRITEBYTECODE=1 exec {q(python)} -m nxsock \"$@\"\n"
    script = f"""{_workspace(release, state)}
{state.setup}
install -d -m 0755 /home/.bin && printf %s {q(wrapper)} > /home/.bin/nxsock && chmod 0755 /home/.bin/nxsock
set +e
echo '<<<PROOF'
{q(python)} {q(str(harness.stage_oracle(HERE / "prove.py")))} {q(json.dumps(spec))}
echo '<<<END'
"""
    out = run_in_namespace(script, 2 * state.timeout + 240, _user_namespace(state))
    try:
        return t.cast(dict[str, t.Any], json.loads(section(out, "PROOF")))
    except ValueError:
        return {"error": out[-4000:]}


def recipe(release: str, state: State, command: str, rc: int) -> dict[str, t.Any]:
    return {
        "release": release,
        "state": state.name,
        "about": state.about,
        "setup": state.setup.replace("$NX_VERSION", release),
        "env": dict(state.env),
        "tmp_size": state.tmp_size or None,
        "sandbox": state.wrap or None,
        "command": COMMANDS[command],
        "command_id": command,
        "uid": U,
        "workspace": WS,
        "exit_code": rc,
        "file": f"{release}/{state.name}--{command}.txt",
    }


def corpus() -> list[tuple[dict[str, t.Any], str]]:
    """Every stored capture: its recipe and the text Nx printed."""
    found = []
    for manifest in sorted(HERE.glob("*/manifest.json")):
        for entry in json.loads(manifest.read_text())["captures"]:
            found.append((entry, (HERE / entry["file"]).read_bytes().decode("utf-8", "surrogateescape")))
    return found


def write_expected() -> None:
    sys.path.insert(0, str(HERE.parent.parent))
    from nxsock.audit.explain import explain

    expected = {
        entry["file"]: [[m.matched, m.errno, m.path] for m in explain(text).messages] for entry, text in corpus()
    }
    (HERE / "expected.json").write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n")


def main(argv: t.Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--release", action="append", help="an Nx release (repeatable; default: the corpus releases)")
    parser.add_argument("--state", action="append", help="a state name (repeatable; default: all)")
    parser.add_argument("--command", action="append", choices=sorted(COMMANDS), help="an Nx command (repeatable)")
    parser.add_argument(
        "--expect", action="store_true", help="rewrite expected.json from what nxsock recognises now, and stop"
    )
    args = parser.parse_args(argv)
    if args.expect:
        write_expected()
        return 0
    missing = harness.missing_privileges() or harness.missing_node()
    if missing:
        print(f"capture: {missing}", file=sys.stderr)
        return 77
    states = [s for s in STATES if not args.state or s.name in args.state]
    for release in args.release or RELEASES:
        manifest_file = HERE / release / "manifest.json"
        manifest = (
            json.loads(manifest_file.read_text()) if manifest_file.exists() else {"schema_version": 1, "captures": []}
        )
        by_file = {c["file"]: c for c in manifest["captures"]}
        for state in (s for s in states if not s.releases or release in s.releases):
            for command in state.commands:
                if args.command and command not in args.command:
                    continue
                text, rc = capture(release, state, command)
                entry = recipe(release, state, command, rc)
                target = HERE / entry["file"]
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(text.encode("utf-8", "surrogateescape"))
                by_file[entry["file"]] = entry
                print(f"{entry['file']}: exit {rc}, {len(text.splitlines())} lines", flush=True)
                manifest["captures"] = sorted(by_file.values(), key=lambda c: c["file"])
                manifest_file.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
