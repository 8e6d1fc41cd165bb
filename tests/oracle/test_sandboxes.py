"""Proof in real sandboxes with the real daemon and the real client, configured only with nxsock's output.

For bubblewrap, srt and ``codex sandbox``, each × Nx 24.0.6, 24.0.5, 24.0.2 and
23.3.2, each × a fresh ``/tmp`` (the user's own ``nxsock provision`` only) and
a root-provisioned ``/tmp/.nx``; as an unprivileged uid, in private mount and
pid namespaces:

- where Nx can use its daemon there (24.0.2, 23.3.2): given only what
  ``nxsock paths --format …`` printed (and the one step its stderr names),
  ``nx daemon --start`` then ``NX_DAEMON=true nx show projects`` inside the
  sandbox is answered by the daemon (``daemon.log``: ``[Messenger] Received
  message``), and no ``disabled`` marker is left;
- where it cannot (24.0.5 and later: the client refuses every socket, ``/``
  being uid 65534 inside), nxsock said so on stderr, and the command it names
  (``NX_DAEMON=false``, carried by the configuration where the format can)
  works in that same sandbox and leaves no marker.  Once per sandbox the real
  daemon and client are run there too, bounded: the daemon listens and
  answers a plain connect, the client is never answered, and ``nxsock
  doctor`` inside says the client refuses it;
- each with a negative control: the sandbox's defaults alone fail.
"""
from __future__ import annotations

import fcntl
import shlex
import shutil
import subprocess
import time
import typing as t

import pytest
from documents import parsed
from harness import (
    PRIVATE_NAMESPACES,
    REPO,
    USER,
    as_user_prefix,
    cache_dir,
    install_nx,
    stage_nxsock,
)

from nxsock.core.releases import rules_for

pytestmark = [
    pytest.mark.tool("bwrap"),
]
SRT_VERSION = "0.0.83"
CODEX_VERSION = "0.171.0"
RELEASES = ("24.0.6", "24.0.5", "24.0.2", "23.3.2")
CONTAINERS = ("fresh", "root-provisioned")
HOME = f"/home/u{USER}"
WS = f"{HOME}/ws"
DATA_D = f"{WS}/.nx/workspace-data/d"
BWRAP = "bwrap --ro-bind / / --dev /dev --proc /proc --unshare-user --die-with-parent"


# Nx's daemon would otherwise fetch nx@latest from the registry for its editor and agent prompts.
QUIET = {"NX_USE_LOCAL": "true", "NX_NO_CLOUD": "true", "NX_TUI": "false"}


#: How long a client that refuses its listening daemon is watched not being answered (it would poll for 60 s).
CLIENT_BOUND = 8


NX = "node node_modules/nx/dist/bin/nx.js"
PID = f"sed -n 's/.*\"processId\": *\\([0-9]*\\).*/\\1/p' {DATA_D}/server-process.json 2>/dev/null"
RECEIVED = f"grep -c 'Received message' {DATA_D}/daemon.log 2>/dev/null"


# ``node watch.js BOUND command…``, inside a sandbox: the command to its end; SIGKILLed (status 137, as ``timeout -s
# KILL`` gives) at BOUND seconds, a hang guard, or as soon as its poll for a daemon can no longer be answered: the
# daemon server it spawned (seen alive) has exited and no daemon server is left, so the minute it would still poll
# for a socket changes nothing of what it shows.  Where /proc cannot be read, only the bound ends it.
WATCH = r"""'use strict';
const fs = require('fs'), os = require('os'), { spawn } = require('child_process');
const [bound, command, ...args] = process.argv.slice(2);
const child = spawn(command, args, { stdio: 'inherit' });
child.on('error', (e) => { console.log(`@@ENDED not started: ${e.code}`); process.exit(127); });
const servers = () => {
  const found = new Map();
  for (const pid of fs.readdirSync('/proc').filter((name) => /^[0-9]+$/.test(name))) {
    try {
      if (!fs.readFileSync(`/proc/${pid}/cmdline`).includes('daemon/server/start')) continue;
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
      const [state, parent] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (state !== 'Z' && state !== 'X') found.set(Number(pid), Number(parent));
    } catch (e) { /* exited meanwhile */ }
  }
  return found;
};
const spawned = new Set();
const end = (why) => { console.log(`@@ENDED ${why}`); child.kill('SIGKILL'); };
const guard = setTimeout(() => end('at the bound'), Number(bound) * 1000);
const poll = setInterval(() => {
  let live;
  try { live = servers(); } catch (e) { clearInterval(poll); return; }
  for (const [pid, parent] of live) if (parent === child.pid) spawned.add(pid);
  if (spawned.size > 0 && live.size === 0) { clearInterval(poll); end('its daemon server exited, none is left'); }
}, 10);
child.on('exit', (code, signal) => {
  clearTimeout(guard); clearInterval(poll);
  process.exit(code !== null ? code : 128 + os.constants.signals[signal]);
});
"""

# Run inside a sandbox as the user.  Each prints @@ lines the test reads.
DAEMON_SCRIPT = f"""cd {WS}
NX_DAEMON=true node {HOME}/watch.js ${{BOUND:-60}} {NX} daemon --start >/dev/null 2>&1; echo "@@START $?"
echo "@@BEFORE $({RECEIVED})"
NX_DAEMON=true node {HOME}/watch.js ${{BOUND:-60}} {NX} show projects 2>&1; echo "@@SHOW $?"
echo "@@AFTER $({RECEIVED})"
[ -e {DATA_D}/disabled ] && echo "@@MARKER"
pid=$({PID}); [ -n "$pid" ] && kill "$pid"
true
"""


NO_DAEMON_SCRIPT = f"""cd {WS}
echo "@@NX_DAEMON=$NX_DAEMON"
start=$(date +%s)
timeout -s KILL 60 {NX} show projects 2>&1; echo "@@SHOW $?"
echo "@@SECONDS $(( $(date +%s) - start ))"
[ -e {DATA_D}/disabled ] && echo "@@MARKER"
true
"""
RAW_CONNECT = (
    "const fs=require('fs'),net=require('net');let n=0;const go=()=>{let "
    "p;try{p=JSON.parse(fs.readFileSync(process.argv[1]))"
    ".socketPath}catch(e){return retry('NORECORD')}net.connect(p).on('connect',()=>{console.log('@@RAW-CONNECT ok');"
    "process.exit(0)}).on('error',e=>retry(e.code))};const "
    "retry=(c)=>{if(++n>(+process.env.RETRIES||100)){console.log('@@RAW-CONNECT '+c);"
    "process.exit(1)}setTimeout(go,100)};go();"
)
# The client's window is counted from the moment its daemon listens (a plain connect answered), not from its
# start: however slowly the daemon comes up, the client is then left CLIENT_BOUND seconds to be answered, and is
# SIGKILLed (137) if still waiting.  The wait for the daemon is an event with a generous guard.
REFUSED_SCRIPT = f"""cd {WS}
NX_DAEMON=true {NX} show projects >/dev/null 2>&1 &
client=$!
RETRIES=1200 node -e {shlex.quote(RAW_CONNECT)} {DATA_D}/server-process.json
sleep {CLIENT_BOUND}; kill -KILL $client 2>/dev/null; wait $client; echo "@@SHOW $?"
echo "@@RECEIVED $({RECEIVED})"
echo "@@DOCTOR $(NX_DAEMON=true $NXSOCK doctor --json --only daemon-record --only sandbox-daemon)"
pid=$({PID}); [ -n "$pid" ] && kill "$pid"
true
"""


def _install_tool(package: str, version: str, command: str) -> str | None:
    """An npm sandbox tool installed once into the readable cache; its path, or None where npm fails.

    Installed under a lock and marked done only when whole: side-by-side workers never run a half-made install.
    """
    target = cache_dir() / f"{command}-{version}"
    binary = target / "node_modules" / ".bin" / command
    marker = target / ".installed"
    with open(cache_dir() / f".lock-{command}", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not marker.exists():
            target.mkdir(mode=0o755, exist_ok=True)
            (target / "package.json").write_text('{"private": true}\n')
            result = subprocess.run(
                ["npm", "install", "--no-audit", "--no-fund", f"{package}@{version}"],
                cwd=target, capture_output=True, timeout=600, check=False,
            )
            if result.returncode != 0:
                return None
            subprocess.run(["chmod", "-R", "o+rX", str(target)], check=False)
            marker.write_text(version)
    return str(binary)


class Sandbox(t.NamedTuple):
    format: str  # the paths --format that configures it
    run: t.Callable[[str, str, str], str]  # (config file, env words, script) -> command, as the user
    defaults: t.Callable[[str], str]  # (script) -> the same with the sandbox's defaults alone
    prepare: t.Callable[[str], str] = lambda config: ":"  # shell, before run: bwrap's arguments into "$@"


def _sandbox(name: str) -> Sandbox:
    if name == "bwrap":
        # The printed arguments are shell words (quoted where a path needs it): the shell splits them.
        return Sandbox(
            "bwrap",
            lambda config, env, script: f"env {env} {BWRAP} \"$@\" --chdir {WS} sh {script}",
            lambda script: f"{BWRAP} --chdir {WS} sh {script}",
            lambda config: f'eval "set -- $(cat {config})"',
        )
    if name == "srt":
        if shutil.which("socat") is None or shutil.which("rg") is None:
            pytest.skip("srt needs socat and ripgrep (Debian packages socat, ripgrep) on Linux")
        srt = _install_tool("@anthropic-ai/sandbox-runtime", SRT_VERSION, "srt")
        if srt is None:
            pytest.skip("npm could not install @anthropic-ai/sandbox-runtime")
        return Sandbox("srt", lambda config, env, script: f"env {env} {srt} --settings {config} -- sh {script}",
                       lambda script: f"{srt} -- sh {script}")
    codex = _install_tool("@openai/codex", CODEX_VERSION, "codex")
    if codex is None:
        pytest.skip("npm could not install @openai/codex")
    return Sandbox(
        "codex-profile",
        lambda config, env, script: (
            f"env {env} CODEX_HOME={HOME}/with timeout -s KILL 90 {codex} sandbox -P nx -C {WS} -- sh {script}"
        ),
        lambda script: (
            f"CODEX_HOME={HOME}/without timeout -s KILL 90 {codex} sandbox -P :workspace -C {WS} -- sh {script}"
        ),
    )


class Cell(t.NamedTuple):
    advice: str  # what nxsock paths --format printed on stderr
    config: str  # and on stdout
    without: str  # the script's output under the sandbox's defaults alone
    with_config: str  # under nxsock's configuration
    refused: str  # the bounded real daemon + client run, where asked
    marker_after: bool  # the disabled marker, looked for as root after everything
    raw: str


def _run_cell(name: str, version: str, container: str, refused_run: bool = False) -> Cell:
    sandbox = _sandbox(name)
    nx = install_nx(version)
    python, pylib = stage_nxsock()
    nxsock = f"env PYTHONPATH={pylib} PYTHONDONTWRITEBYTECODE=1 {python} -m nxsock"
    quiet = " ".join(f"{k}={v}" for k, v in QUIET.items())
    user = f"{as_user_prefix()} {quiet} NXSOCK={shlex.quote(nxsock)}"
    usable = not rules_for(version).client_socket_check  # the release table, not a list of versions: 24.0.5 on
    script = DAEMON_SCRIPT if usable else NO_DAEMON_SCRIPT
    config = f"{HOME}/with/config.toml" if sandbox.format == "codex-profile" else f"{HOME}/nxsock.config"
    files = {"run.sh": script, "refused.sh": REFUSED_SCRIPT, "watch.js": WATCH}
    q = shlex.quote
    writes = "; ".join(f"printf %s {q(body)} > {HOME}/{file}" for file, body in files.items())
    root_provision = f"{nxsock} provision >/dev/null; " if container == "root-provisioned" else ""
    # The negative control of 24.0.5 and later is run with NX_DAEMON=false set by hand: what is tested there is what the
    # sandbox allows, not whether the configuration carries the variable.
    negative_env = "BOUND=15" if usable else "NX_DAEMON=false"
    outside = f"""
set -e
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs -o mode=0755 tmpfs /home
install -d -o {USER} -g {USER} {HOME} {HOME}/with {HOME}/without {WS} {WS}/node_modules {WS}/packages/a
echo '{{}}' > {WS}/nx.json
echo '{{"name": "ws", "private": true, "workspaces": ["packages/*"]}}' > {WS}/package.json
echo '{{"name": "a", "version": "0.0.0"}}' > {WS}/packages/a/package.json
ln -s {nx}/node_modules/nx {WS}/node_modules/nx
{writes}
chown -R {USER}:{USER} {HOME}
{root_provision}
cd {WS}
{user} {nxsock} provision >/dev/null
set +e
echo '@@WITHOUT'; {user} {negative_env} {sandbox.defaults(f'{HOME}/run.sh')} 2>&1
rm -rf {WS}/.nx
{user} {nxsock} paths --format {sandbox.format} > {config} 2> {HOME}/advice
echo '@@CONFIG'; cat {config}; echo '@@ADVICE'; cat {HOME}/advice
# Follow the advice nxsock printed: a directory to create, and (srt) the variable to start the sandbox with.
grep -o 'mkdir -p [^`]*' {HOME}/advice | while read -r cmd; do {user} sh -c "$cmd"; done
prefix=$(grep -o '`NX_DAEMON=false srt' {HOME}/advice >/dev/null && echo NX_DAEMON=false)
{sandbox.prepare(config)}
echo '@@WITH'; {user} {sandbox.run(config, '$prefix', f'{HOME}/run.sh')} 2>&1
echo '@@REFUSED'
{user if refused_run else ': '} {sandbox.run(config, '$prefix', f'{HOME}/refused.sh') if refused_run else ''} \\
  2>&1
echo '@@END'; [ -e {DATA_D}/disabled ] && echo '@@MARKER-AFTER'
true
"""
    proc = subprocess.run(
        [*PRIVATE_NAMESPACES, "bash", "-c", outside],
        capture_output=True,
        stdin=subprocess.DEVNULL,
        timeout=400,
    )
    out = proc.stdout.decode("utf-8", "replace")
    raw = out + proc.stderr.decode("utf-8", "replace")

    def section(start: str, end: str) -> str:
        return out.split(f"@@{start}\n", 1)[-1].split(f"@@{end}", 1)[0] if f"@@{start}\n" in out else ""

    return Cell(section("ADVICE", "WITH"), section("CONFIG", "ADVICE"), section("WITHOUT", "CONFIG"),
                section("WITH", "REFUSED"), section("REFUSED", "END"), "@@MARKER-AFTER" in out, raw)


def _value(text: str, key: str) -> str | None:
    for line in text.splitlines():
        if line.startswith(f"@@{key} ") or line == f"@@{key}":
            return line[len(key) + 3:]
    return None


def _lists_project(text: str) -> bool:
    """``nx show projects`` printed the workspace's one project."""
    return any(line.strip() == "a" for line in text.splitlines())


def _answered(text: str) -> bool:
    """``daemon --start`` succeeded and the client's request reached the daemon's log."""
    before, after = _value(text, "BEFORE"), _value(text, "AFTER")
    return (_value(text, "START") == "0" and _value(text, "SHOW") == "0"
            and (before or "0").isdigit() and (after or "").isdigit() and int(after or 0) > int(before or 0))


def _assert_cell(name: str, version: str, cell: Cell) -> None:
    where = (name, version, cell.advice, cell.config)
    if not rules_for(version).client_socket_check:
        assert "cannot use its daemon" not in cell.advice, where
        assert _answered(cell.with_config), (where, cell.with_config, cell.raw[-3000:])
        assert _lists_project(cell.with_config), (where, cell.with_config)
        assert _value(cell.with_config, "MARKER") is None and not cell.marker_after, where
        assert not _answered(cell.without), (where, cell.without)
        return
    # Nx itself cannot: nxsock says so, names what works and what clears the marker, and that works here.
    assert "cannot use its daemon" in cell.advice and "uid 65534" in cell.advice, where
    assert "NX_DAEMON=false" in cell.advice and "nxsock reset --daemon-marker" in cell.advice, where
    assert f"{DATA_D}/disabled" in cell.advice, where
    assert _value(cell.with_config, "NX_DAEMON=false") is not None, (
        where,
        cell.with_config,
    )  # carried, or started with it
    assert _value(cell.with_config, "SHOW") == "0" and _lists_project(cell.with_config), (where, cell.with_config)
    assert int(_value(cell.with_config, "SECONDS") or 99) < 30, cell.with_config
    assert "denied permission to use its unix socket" not in cell.with_config, cell.with_config
    assert _value(cell.with_config, "MARKER") is None and not cell.marker_after, where
    failed = _value(cell.without, "SHOW") != "0" or not _lists_project(cell.without)
    assert failed or "denied permission to use its unix socket" in cell.without, (where, cell.without)


def _assert_refused(cell: Cell) -> None:
    """The negative nxsock's words rest on: the daemon listens and answers a plain connect; Nx's client is never
    answered."""
    refused = cell.refused
    assert _value(refused, "SHOW") == "137", refused  # still waiting when the bound ended it
    assert _value(refused, "RAW-CONNECT") == "ok", refused
    assert _value(refused, "RECEIVED") == "0", refused
    doctor = parsed(_value(refused, "DOCTOR") or "{}", "doctor")
    record = next(f for f in doctor["findings"] if f["id"] == "daemon-record")
    assert "client refuses its socket" in record["message"] and record["remedy"] == "export NX_DAEMON=false", doctor
    assert next(f for f in doctor["findings"] if f["id"] == "sandbox-daemon")["severity"] == "warn", doctor


@pytest.mark.parametrize("container", CONTAINERS)
@pytest.mark.parametrize("version", RELEASES)
@pytest.mark.parametrize("name", ["bwrap", "srt", "codex"])
def test_the_real_client_is_answered_or_nxsock_says_why_not_and_what_works(
    name: str, version: str, container: str
) -> None:
    """Configured only with nxsock's output: the daemon answers the client, or (24.0.5+) NX_DAEMON=false works as said.

    Once per sandbox and release whose client checks its socket (24.0.5 and 24.0.6, fresh) the real daemon and
    client are run there as well, bounded: that is what nxsock's words for 24.0.5 and later rest on, and what
    ``doctor`` inside must call refused.
    """
    started = time.monotonic()
    refused_run = rules_for(version).client_socket_check and container == "fresh"
    cell = _run_cell(name, version, container, refused_run)
    _assert_cell(name, version, cell)
    if refused_run:
        _assert_refused(cell)
    assert time.monotonic() - started < 150


def test_the_proofs_use_the_real_nx_not_a_stand_in() -> None:
    assert not (REPO / "tests" / "oracle" / "listen.js").exists()
