"""Real users, real mount namespaces and the real Nx, for tests that need them.

A scenario is a shell fragment run as root in a private mount namespace with
fresh tmpfs ``/tmp`` and ``/home``; then, as an unprivileged uid, nxsock
(first) and the real Nx (second) answer for the same state.  Nx comes from
npm, installed on first use into a cache other uids can read; nxsock runs
from a staged copy they can read too, with an interpreter they can execute.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import importlib.util
import json
import os
import shlex
import shutil
import subprocess
import sys
import threading
import typing as t
from pathlib import Path

import platformdirs
from documents import checked, parsed, schema_name

REPO = Path(__file__).resolve().parent.parent
ORACLE_SCRIPT = REPO / "tests" / "oracle" / "resolve.js"
CLIENT_SCRIPT = REPO / "tests" / "oracle" / "client.js"

# Test uids: NXSOCK_TEST_UID_BASE moves them, so that runs side by side (in parallel checkouts) never share
# a uid that one run's ``pkill -u`` or planted processes could reach in another; each pytest-xdist worker
# takes its own hundred above it (``tests/conftest.py`` sets the variable before this module is imported).
_UID_BASE = int(os.environ.get("NXSOCK_TEST_UID_BASE", "4100"))
USER = _UID_BASE + 1  # the unprivileged user every scenario runs as
PEER = _UID_BASE + 2  # another local user, the one who plants things
THIRD = _UID_BASE + 3  # a third user, owner of what nobody else may touch
NX_VERSIONS = {
    "native": "24.0.6",
    "ts": "23.3.2",
    "legacy": "23.1.1",
}  # one release per generation, for the other suites


def in_xdist_worker() -> bool:
    """Whether this process is one of pytest-xdist's workers: work shared by many tests is then done per test (or
    per ``xdist_group``), never prefetched for tests that other workers run."""
    return bool(os.environ.get("PYTEST_XDIST_WORKER"))


@functools.cache
def missing_privileges() -> str | None:
    """Why real-user tests cannot run here, or ``None`` when they can (probed once a process)."""
    if sys.platform != "linux":
        return "needs Linux mount namespaces"
    if os.geteuid() != 0:
        return "needs root to switch uids and mount tmpfs"
    for tool in ("unshare", "setpriv", "mount"):
        if shutil.which(tool) is None:
            return f"needs {tool}"
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True)
    if probe.returncode != 0:
        return "unshare -m is not permitted here"
    return None


@functools.cache
def missing_readable_python() -> str | None:
    try:
        _readable_python()
    except RuntimeError as exc:
        return str(exc)
    return None


@functools.cache
def missing_node() -> str | None:
    for tool in ("node", "npm"):
        if shutil.which(tool) is None:
            return f"needs {tool} to install and run the real Nx"
    return None


#: Shell: wait, for ten seconds at most, until the file named next exists — a helper process's word that it is
#: ready (a socket listening, a file mapped), never a fixed delay.
WAIT_FOR = "_w() { for _ in $(seq 6000); do [ -e \"$1\" ] && return 0; sleep 0.01; done; return 1; }; _w"
#: Python statements, one line, for a helper started in the background (``… &``) by a scenario's shell: return once
#: that shell has ended. A listener that must outlive nxsock's run ends with its scenario, never after a fixed time
#: that a loaded machine can outlast (and that every run would wait out).
WHILE_PARENT_LIVES = "p = os.getppid(); [time.sleep(0.01) for _ in iter(lambda: os.getppid() == p, False)]"

#: A private mount and pid namespace whose processes all end with its first one.
PRIVATE_NAMESPACES = ("unshare", "-m", "-p", "-f", "--mount-proc", "--kill-child", "--propagation", "private")

# The scenarios mount fresh tmpfs on these: nothing the test uid runs may live beneath them.
HIDDEN_IN_SCENARIOS = ("/tmp", "/home")


def _hidden_in_scenarios(path: Path) -> bool:
    return any(path == Path(top) or Path(top) in path.parents for top in HIDDEN_IN_SCENARIOS)


def cache_dir() -> Path:
    """Where Nx installs and staged copies live: readable by the scenario's uid, outside a 0700 home and outside
    the ``/tmp`` and ``/home`` that every scenario replaces."""
    configured = os.environ.get("NXSOCK_TEST_CACHE")
    path = Path(configured).resolve() if configured else platformdirs.site_cache_path("nxsock-tests")
    if _hidden_in_scenarios(path):
        raise RuntimeError(f"NXSOCK_TEST_CACHE={path} lies under /tmp or /home, which every scenario replaces")
    path.mkdir(parents=True, exist_ok=True, mode=0o755)
    path.chmod(0o755)
    return path


class _Lock:
    def __init__(self, path: Path) -> None:
        self._path = path

    def __enter__(self) -> None:
        self._fd = os.open(self._path, os.O_CREAT | os.O_RDWR, 0o644)
        fcntl.flock(self._fd, fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)


def install_nx(version: str) -> Path:
    """``npm install nx@version`` once into the cache; the folder holding its ``node_modules``."""
    target = cache_dir() / f"nx-{version}"
    marker = target / ".installed"
    with _Lock(cache_dir() / ".lock"):
        if not marker.exists():
            shutil.rmtree(target, ignore_errors=True)
            target.mkdir(mode=0o755)
            (target / "package.json").write_text('{"private": true}\n')
            result = subprocess.run(
                ["npm", "install", "--no-audit", "--no-fund", "--ignore-scripts", "--no-save", f"nx@{version}"],
                cwd=target,
                capture_output=True,
                text=True,
                timeout=600,
            )
            if result.returncode != 0:
                raise RuntimeError(f"npm install nx@{version} failed:\n{result.stderr[-2000:]}")
            marker.write_text(version)
        elif any(
            os.lstat(path).st_uid != 0
            for path in (target / "node_modules", target / "node_modules" / "nx" / "package.json")
        ):
            # The install is root's, and every scenario trusts it as such; a test (or a person) that handed it to a
            # test uid would make later trust judgements wrong, so it is handed back before use.
            subprocess.run(["chown", "-R", "-h", "0:0", str(target)], check=True)
    return target


def pack_nx_binding(triple: str, version: str) -> Path:
    """``npm pack @nx/nx-<triple>@version`` once into the cache (the platform package as npm fetches it); its tarball.

    What a test installs a binding from without the network after its first run: a package of another C library
    (``linux-x64-musl``) to stand for a wrong one, or this host's own to restore the one a test removed."""
    target = cache_dir() / "nx-bindings" / f"nx-nx-{triple}-{version}.tgz"
    with _Lock(cache_dir() / ".lock"):
        if not target.exists():
            target.parent.mkdir(mode=0o755, exist_ok=True)
            staging = target.parent / f".{os.getpid()}"
            shutil.rmtree(staging, ignore_errors=True)
            staging.mkdir()
            result = subprocess.run(
                ["npm", "pack", "--silent", "--pack-destination", str(staging), f"@nx/nx-{triple}@{version}"],
                cwd=staging,
                capture_output=True,
                text=True,
                timeout=600,
            )
            packed = list(staging.glob("*.tgz"))
            if result.returncode != 0 or len(packed) != 1:
                shutil.rmtree(staging, ignore_errors=True)
                raise RuntimeError(f"npm pack @nx/nx-{triple}@{version} failed:\n{result.stderr[-2000:]}")
            packed[0].chmod(0o644)
            packed[0].replace(target)
            shutil.rmtree(staging, ignore_errors=True)
    return target


def stage_oracle(script: Path = ORACLE_SCRIPT) -> Path:
    """A script of the tests (an oracle, a driver), copied where a scenario can reach it: the checkout may be
    under /tmp, which a scenario's fresh tmpfs hides, or in a home the scenario's uid cannot enter."""
    source = script.read_bytes()
    target = cache_dir() / f"{script.stem}-{hashlib.sha256(source).hexdigest()[:16]}{script.suffix}"
    if not target.exists():
        partial = target.with_suffix(f".{os.getpid()}.tmp")
        partial.write_bytes(source)
        partial.chmod(0o644)
        partial.replace(target)
    return target


def _readable_python() -> str:
    """The interpreter running the tests, as a path every uid can execute inside a scenario.

    pytest's interpreter may sit under a 0700 home (pyenv's under /root) or under the ``/tmp`` a scenario
    replaces (a checkout's ``.venv``); the test uid must run the same Python, so where the real interpreter is
    out of its reach, a copy of its installation is staged in the cache.
    """
    real = Path(sys.executable).resolve()
    if _world_reachable(real) and not _hidden_in_scenarios(real):
        return str(real)
    try:
        return _stage_interpreter()
    except OSError as exc:
        raise RuntimeError(
            f"needs a python3 that the test uid can run: staging {sys.base_prefix} failed ({exc})"
        ) from exc


# What an interpreter needs at run time: not its site-packages (nxsock and its dependencies are staged apart),
# nor its own test suite and GUI kits.  Its bytecode comes along: the test uid cannot write any, and
# compiling the standard library at every start would slow each of the suite's thousands of runs.
_INTERPRETER_SKIP = shutil.ignore_patterns("site-packages", "test", "tests", "idlelib", "tkinter", "turtledemo",
                                           "ensurepip", "*.a", "pkgconfig", "config-*")


def _stage_interpreter() -> str:
    """A copy of this interpreter's installation in the cache, behind a wrapper that finds its libpython."""
    prefix = Path(sys.base_prefix).resolve()
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    key = hashlib.sha256(f"{prefix}\0{sys.version}\0with-bytecode".encode()).hexdigest()[:16]
    target = cache_dir() / f"python-{version}-{key}"
    wrapper = target / "python"
    with _Lock(cache_dir() / ".lock-python"):  # not ".lock": staging nxsock asks for the interpreter while holding that
        if not (target / ".staged").exists():
            shutil.rmtree(target, ignore_errors=True)
            (target / "bin").mkdir(parents=True)
            shutil.copy2(Path(sys.executable).resolve(), target / "bin" / f"python{version}")
            shutil.copytree(prefix / "lib", target / "lib", ignore=_INTERPRETER_SKIP, symlinks=True)
            # A shared libpython is found through the build's RUNPATH, which points into the unreachable prefix;
            # LD_LIBRARY_PATH takes precedence over RUNPATH.  The prefix itself is found from the binary's place.
            wrapper.write_text(f'#!/bin/sh\nLD_LIBRARY_PATH={shlex.quote(str(target / "lib"))} '
                               f'exec {shlex.quote(str(target / "bin" / f"python{version}"))} "$@"\n')
            for root, _dirs, files in os.walk(target):
                os.chmod(root, 0o755)
                for name in files:
                    path = os.path.join(root, name)
                    if not os.path.islink(path):
                        os.chmod(path, 0o755 if os.access(path, os.X_OK) else 0o644)
            wrapper.chmod(0o755)
            (target / ".staged").write_text("ok")
    return str(wrapper)


def _world_reachable(path: Path) -> bool:
    real = path.resolve()
    for level in [*reversed(real.parents), real]:
        try:
            mode = level.stat().st_mode
        except OSError:
            return False
        if level != real and not mode & 0o001:
            return False
    return bool(real.stat().st_mode & 0o005)


def stage_nxsock() -> tuple[str, str]:
    """A copy of nxsock and its dependencies other uids can import: ``(python, PYTHONPATH)``."""
    import nxsock  # the copy under test: installed or the checkout, whichever pytest imports

    sources = [Path(nxsock.__file__).resolve().parent]
    for module in ("click", "rich", "platformdirs", "markdown_it", "mdurl", "pygments"):
        spec = importlib.util.find_spec(module)
        if spec is not None and spec.submodule_search_locations:
            sources.append(Path(next(iter(spec.submodule_search_locations))))
    digest = hashlib.sha256()
    for source in sources:
        for file in sorted(source.rglob("*.py")):
            digest.update(str(file).encode())
            digest.update(file.read_bytes())
    target = cache_dir() / f"pylib-{digest.hexdigest()[:16]}"
    python = _readable_python()
    with _Lock(cache_dir() / ".lock"):
        if not (target / ".staged").exists():
            shutil.rmtree(target, ignore_errors=True)
            for source in sources:
                shutil.copytree(source, target / source.name, ignore=shutil.ignore_patterns("__pycache__"))
            # Bytecode for the interpreter the test uid runs, so hundreds of runs do not each compile it.
            subprocess.run([python, "-m", "compileall", "-q", str(target)], check=False, capture_output=True)
            for root, _dirs, files in os.walk(target):
                os.chmod(root, 0o755)
                for name in files:
                    os.chmod(os.path.join(root, name), 0o644)
            (target / ".staged").write_text("ok")
    return python, str(target)


class Scenario(t.NamedTuple):
    """One filesystem state and environment to resolve in."""

    name: str
    setup: str = ""  # shell, as root, after the workspace exists
    env: t.Mapping[str, str | None] = {}  # the user's environment; None unsets HOME
    workspace: str = "/tmp/ws"
    cwd: str | None = None  # defaults to the workspace
    generations: tuple[str, ...] = ("legacy", "ts", "native")
    after: str = ""  # shell, as root, right before the runs (remounts)
    daemon_decides: bool = False  # the daemon socket's place is the real daemon's to show, not a client's resolver


class Outcome(t.NamedTuple):
    nxsock: dict[str, t.Any] | None
    nxsock_rc: int
    nxsock_stderr: str
    oracle: dict[str, t.Any] | None
    text_rc: int  # the human output's exit code, run on the same state
    text_stderr: str
    tree_before: str
    tree_after: str
    raw: str


SNAPSHOT = (
    "find /tmp /home -xdev -path '*/node_modules/*' -prune -o -printf '%y %U %G %m %i %s %l %p\\n' 2>/dev/null | sort"
)


def _workspace_setup(scenario: Scenario, nx: Path, home_default: str) -> str:
    """Shell, as root: the user's home, the workspace with Nx linked in, then the scenario's own setup."""
    q, ws = shlex.quote, scenario.workspace
    return f"""mkdir -p {q(home_default)} && chown {USER}:{USER} {q(home_default)}
mkdir -p {q(ws)}/node_modules
echo '{{}}' > {q(ws)}/nx.json
ln -s {q(str(nx / 'node_modules' / 'nx'))} {q(ws)}/node_modules/nx
chown -R {USER}:{USER} {q(ws)}
{scenario.setup}
{scenario.after}"""


def run_scenario(scenario: Scenario, generation: str, extra_args: t.Sequence[str] = ()) -> Outcome:
    """Build the state in a fresh namespace; run nxsock then Nx as :data:`USER`; return both answers."""
    nx = install_nx(NX_VERSIONS[generation])
    python, pythonpath = stage_nxsock()
    ws = scenario.workspace
    home_default = f"/home/u{USER}"
    as_user = as_user_prefix(USER, scenario.env)
    nxsock_cmd = (
        f"{as_user} PYTHONPATH={shlex.quote(pythonpath)} PYTHONDONTWRITEBYTECODE=1 "
        f"{shlex.quote(python)} -m nxsock paths --json {' '.join(map(shlex.quote, extra_args))}"
    )
    text_cmd = nxsock_cmd.replace(" paths --json", " paths")
    oracle_cmd = f"{as_user} node {shlex.quote(str(stage_oracle()))} {shlex.quote(str(nx))} {generation}"
    q = shlex.quote
    script = f"""
set -e
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs -o mode=0755 tmpfs /home
{_workspace_setup(scenario, nx, home_default)}
set +e
cd {q(scenario.cwd or ws)}
echo '<<<TREE'; {SNAPSHOT}
echo '<<<NXSOCK'; {nxsock_cmd} 2>/dev/fd/3; echo "<<<RC $?"
echo '<<<TEXT'; {text_cmd} 2>&1 >/dev/null; echo "<<<TEXTRC $?"
echo '<<<TREE'; {SNAPSHOT}
echo '<<<ORACLE'; {oracle_cmd} 2>/dev/null
echo '<<<END'
"""
    proc = subprocess.run(
        ["unshare", "-m", "--propagation", "private", "bash", "-c", f"exec 3>&2; {script}"],
        cwd="/",  # never a working directory inside the /tmp or /home that the scenario replaces
        capture_output=True,
        timeout=120,
    )
    out = proc.stdout.decode("utf-8", "replace")
    sections = out.split("<<<")
    trees = [s[len("TREE\n") :] for s in sections if s.startswith("TREE\n")]
    nxsock_text = next((s[len("NXSOCK\n") :] for s in sections if s.startswith("NXSOCK\n")), "")
    rc_text = next((s for s in sections if s.startswith("RC ")), "RC -1")
    oracle_text = next((s[len("ORACLE\n") :] for s in sections if s.startswith("ORACLE\n")), "")
    text_stderr = next((s[len("TEXT\n") :] for s in sections if s.startswith("TEXT\n")), "")
    text_rc = next((s for s in sections if s.startswith("TEXTRC ")), "TEXTRC -1")
    return Outcome(
        nxsock=_document_or_none(nxsock_text, "paths"),
        nxsock_rc=int(rc_text.split()[1]),
        nxsock_stderr=proc.stderr.decode("utf-8", "replace"),
        oracle=_json_or_none(oracle_text),
        text_rc=int(text_rc.split()[1]),
        text_stderr=text_stderr,
        tree_before=trees[0] if trees else "",
        tree_after=trees[1] if len(trees) > 1 else "",
        raw=out + proc.stderr.decode("utf-8", "replace"),
    )


def _scenario_body(scenario: Scenario, nx: Path, python: str, pythonpath: str, text: bool) -> str:
    """One state, built on fresh tmpfs ``/tmp`` and ``/home``, then nxsock and Nx on it, then torn down."""
    q = shlex.quote
    ws = scenario.workspace
    home_default = f"/home/u{USER}"
    as_user = as_user_prefix(USER, scenario.env)
    nxsock_cmd = f"{as_user} PYTHONPATH={q(pythonpath)} PYTHONDONTWRITEBYTECODE=1 {q(python)} -m nxsock paths --json"
    text_cmd = nxsock_cmd.replace(" paths --json", " paths")
    oracle_cmd = f"{as_user} node {q(str(stage_oracle()))} {q(str(nx))}"
    text_run = f"""echo '<<<TEXT'; {text_cmd} 2>&1 >/dev/null; echo "<<<TEXTRC $?"
""" if text else ""
    return f"""
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs -o mode=0755 tmpfs /home
(
set -e
{_workspace_setup(scenario, nx, home_default)}
) </dev/null >&3 2>&3
[ $? = 0 ] || echo '<<<SETUPFAILED'
(
cd {q(scenario.cwd or ws)}
echo '<<<TREE'; {SNAPSHOT}
echo '<<<NXSOCK'; {nxsock_cmd} 2>&3; echo "<<<RC $?"
{text_run}echo '<<<TREE'; {SNAPSHOT}
echo '<<<ORACLE'; {oracle_cmd} 2>/dev/null
echo '<<<END'
) </dev/null
umount -R /tmp 2>/dev/null || umount -l /tmp
umount -R /home 2>/dev/null || umount -l /home
"""


def run_release_batch(
    release: str, scenarios: t.Sequence[Scenario], *, text: bool | None = None, timeout: float = 1500
) -> list[Outcome]:
    """Every state of *scenarios* against one release, in one private mount namespace: one Outcome each, in order.

    Each state gets its own fresh tmpfs ``/tmp`` and ``/home``; nothing carries over from one to the next.
    """
    nx = install_nx(release)
    python, pythonpath = stage_nxsock()
    if text is None:  # the human output too, once per generation: its exit code must match the JSON's
        text = release in NX_VERSIONS.values()
    parts = ["exec 3>&2"]
    for index, scenario in enumerate(scenarios):
        parts.append(f"echo '<<<SCENARIO {index}'; echo '<<<SCENARIO {index}' >&3")
        parts.append(_scenario_body(scenario, nx, python, pythonpath, text))
    # Too long for one argument: the script goes in a file only root reads, removed afterwards.
    script = cache_dir() / f"batch-{release}-{os.getpid()}-{threading.get_ident()}.sh"
    script.write_bytes("\n".join(parts).encode("utf-8", "surrogateescape"))
    script.chmod(0o600)
    try:
        proc = subprocess.run(
            ["unshare", "-m", "--propagation", "private", "bash", str(script)],
            capture_output=True,
            stdin=subprocess.DEVNULL,
            timeout=timeout,
        )
    finally:
        script.unlink(missing_ok=True)
    out = proc.stdout.decode("utf-8", "replace").split("<<<SCENARIO ")
    err = proc.stderr.decode("utf-8", "replace").split("<<<SCENARIO ")
    by_index = {int(chunk.split("\n", 1)[0]): chunk for chunk in out[1:]}
    errors = {int(chunk.split("\n", 1)[0]): chunk for chunk in err[1:]}
    outcomes = []
    for index in range(len(scenarios)):
        chunk = by_index.get(index, "")
        outcomes.append(_parse_outcome(chunk, errors.get(index, ""), text))
    return outcomes


def _parse_outcome(out: str, stderr: str, text: bool) -> Outcome:
    sections = out.split("<<<")
    trees = [s[len("TREE\n") :] for s in sections if s.startswith("TREE\n")]
    nxsock_text = next((s[len("NXSOCK\n") :] for s in sections if s.startswith("NXSOCK\n")), "")
    rc_text = next((s for s in sections if s.startswith("RC ")), "RC -1")
    oracle_text = next((s[len("ORACLE\n") :] for s in sections if s.startswith("ORACLE\n")), "")
    text_stderr = next((s[len("TEXT\n") :] for s in sections if s.startswith("TEXT\n")), "")
    text_rc = next(
        (s for s in sections if s.startswith("TEXTRC ")), f"TEXTRC {rc_text.split()[1]}" if not text else "TEXTRC -1"
    )
    if "<<<SETUPFAILED" in out:
        stderr = "the state could not be built:\n" + stderr
    return Outcome(
        nxsock=_document_or_none(nxsock_text, "paths"),
        nxsock_rc=int(rc_text.split()[1]),
        nxsock_stderr=stderr,
        oracle=_json_or_none(oracle_text),
        text_rc=int(text_rc.split()[1]),
        text_stderr=text_stderr,
        tree_before=trees[0] if trees else "",
        tree_after=trees[1] if len(trees) > 1 else "",
        raw=out + stderr,
    )


def _document_or_none(text: str, schema: str) -> dict[str, t.Any] | None:
    """An nxsock document, checked against its published schema *schema*; ``None`` when nxsock printed none."""
    value = _json_or_none(text)
    return None if value is None else checked(value, schema)


def _json_or_none(text: str) -> dict[str, t.Any] | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


class UserRun(t.NamedTuple):
    stdout: str
    stderr: str
    returncode: int
    tree_before: str
    tree_after: str
    post: str  # what the *post* shell printed, run as root afterwards in the same namespace
    args: tuple[str, ...] = ()  # nxsock's command line


def env_words(overrides: t.Mapping[str, str | None] | None = None, home: str | None = None, uid: int = USER) -> str:
    """``KEY=value …`` for ``env -i``: a small clean environment, *overrides* applied (``None`` unsets)."""
    variables: dict[str, str] = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": home or f"/home/u{uid}",
        "LANG": "C.UTF-8",
    }
    for key, value in (overrides or {}).items():
        if value is None:
            variables.pop(key, None)
        else:
            variables[key] = value
    return " ".join(shlex.quote(f"{k}={v}") for k, v in variables.items())


def as_user_prefix(uid: int = USER, env: t.Mapping[str, str | None] | None = None) -> str:
    """``setpriv … env -i …``: run what follows as *uid* with a small clean environment."""
    return f"setpriv --reuid={uid} --regid={uid} --clear-groups env -i {env_words(env, uid=uid)}"


def oracle_command(generation: str = "native", uid: int = USER) -> str:
    """Nx's own resolver for the current directory's workspace, as *uid*."""
    nx = install_nx(NX_VERSIONS[generation])
    return f"{as_user_prefix(uid)} node {shlex.quote(str(stage_oracle()))} {shlex.quote(str(nx))} {generation}"


def default_signals() -> None:
    """``preexec_fn``: the signals a test delivers at their default action, whatever the runner ignored.

    A suite started in the background (``cmd &``) or under ``nohup`` inherits SIGINT or SIGHUP ignored, and
    an ignored signal stays ignored across ``exec``: a test that proves what Ctrl-C or a hang-up does must
    not depend on how pytest was started.
    """
    import signal

    for number in (signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGTERM):
        signal.signal(number, signal.SIG_DFL)


def run_as_user(
    setup: str,
    args: t.Sequence[str],
    env: t.Mapping[str, str] | None = None,
    uid: int = USER,
    post: str = "",
    cwd: str | None = None,
    timeout: float = 60,
) -> UserRun:
    """``nxsock ARGS`` as *uid* in a fresh namespace after *setup* (as root); the tree around it.

    *timeout* only guards against a hang: a scenario that loops a thousand times gives itself more.
    """
    python, pythonpath = stage_nxsock()
    command = (
        f"{as_user_prefix(uid, env)} PYTHONPATH={shlex.quote(pythonpath)} "
        f"PYTHONDONTWRITEBYTECODE=1 {shlex.quote(python)} -m nxsock {' '.join(map(shlex.quote, args))}"
    )
    script = f"""
set -e
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs -o mode=0755 tmpfs /home
install -d -o {uid} -g {uid} /home/u{uid}
{setup}
set +e
cd {shlex.quote(cwd or f"/home/u{uid}")}
echo '<<<TREE'; {SNAPSHOT}
echo '<<<OUT'; {command} 2>/dev/fd/3; echo "<<<RC $?"
echo '<<<TREE'; {SNAPSHOT}
echo '<<<POST'; {post or "true"}
"""
    proc = subprocess.run(
        ["unshare", "-m", "--propagation", "private", "bash", "-c", f"exec 3>&2; {script}"],
        cwd="/",  # never a working directory inside the /tmp or /home that the scenario replaces
        capture_output=True,
        stdin=subprocess.DEVNULL,
        timeout=timeout,
    )
    sections = proc.stdout.decode("utf-8", "replace").split("<<<")
    trees = [x[len("TREE\n") :] for x in sections if x.startswith("TREE\n")]
    out = next((x[len("OUT\n") :] for x in sections if x.startswith("OUT\n")), "")
    rc = next((x for x in sections if x.startswith("RC ")), "RC -1")
    post_out = next((x[len("POST\n") :] for x in sections if x.startswith("POST\n")), "")
    before, after = ([*trees, "", ""])[:2]
    if schema_name(args) is not None and out.strip():
        parsed(out, args)  # every document a test produces matches its published schema, parsed by the test or not
    return UserRun(
        out, proc.stderr.decode("utf-8", "replace"), int(rc.split()[1]), before, after, post_out, tuple(args)
    )


def _entries(tree: str) -> dict[str, tuple[str, ...]]:
    """path -> (type, uid, gid, mode, inode, link target); a directory's size is left out, it moves with its entries."""
    found = {}
    for line in tree.splitlines():
        fields = line.split(" ", 7)
        if len(fields) == 8:
            kind, uid, gid, mode, inode, size, target, path = fields
            found[path] = (kind, uid, gid, mode, inode, target) + (() if kind == "d" else (size,))
    return found


def changed_outside(before: str, after: str, removed: t.Iterable[str]) -> list[str]:
    """Every difference between two snapshots that is not the removal of *removed* (and what they held)."""
    allowed = tuple(removed)
    old, new = _entries(before), _entries(after)
    problems = [f"added {p}" for p in new.keys() - old.keys()]
    problems += [f"changed {p}" for p in old.keys() & new.keys() if old[p] != new[p]]
    problems += [
        f"removed {p}" for p in old.keys() - new.keys() if not any(p == r or p.startswith(r + "/") for r in allowed)
    ]
    return sorted(problems)


class DaemonProbe(t.NamedTuple):
    """A real daemon started from a subdirectory with a relative ``NX_SOCKET_DIR``, then judged by the real client."""

    predicted: dict[str, t.Any] | None  # nxsock paths --json before the daemon started
    record: dict[str, t.Any] | None  # the daemon's server-process.json
    states: list[
        tuple[str, dict[str, t.Any] | None, dict[str, t.Any] | None, dict[str, t.Any] | None]
    ]  # (state, paths, dial, doctor)
    cache_path: str
    cache_list: dict[str, t.Any] | None
    verify: dict[str, t.Any] | None
    verify_rc: int
    doctor: dict[str, t.Any] | None
    raw: str


#: Changes made to the running daemon's directories, one state each, before nxsock and the client judge it.
#: The socket directory sits inside the workspace, so the daemon's watcher would see its plugin workers' sockets
#: come and go (and each state's chmod) and recompute the graph; each new worker re-locks the directory to 0700.
#: The workspace's ``.nxignore`` names the directory, so the watcher leaves it alone and a state holds while it is
#: judged (on a loaded machine the recomputing never settled: five retries per state, then the time limit). A
#: state is still judged only when the modes it set held from before nxsock ran until after the client dialled
#: (retried otherwise), and the daemon is first left to go quiet.
CLIENT_STATES = (
    ("as the daemon left it", "true"),
    ("socket directory widened to 0755", "chmod 0755 /tmp/ws/socks"),
    ("workspace root made 0777 without sticky", "chmod 0700 /tmp/ws/socks; chmod 0777 /tmp/ws"),
)


def run_daemon_probe(release: str, timeout: float = 480) -> DaemonProbe:
    """Start *release*'s real daemon from ``/tmp/ws/apps/one`` with ``NX_SOCKET_DIR=socks``; ask nxsock and the
    client."""
    nx = install_nx(release)
    python, pythonpath = stage_nxsock()
    q = shlex.quote
    env = {"NX_SOCKET_DIR": "socks", "NX_DAEMON": "true", "NX_NO_CLOUD": "true", "NX_TUI": "false"}
    as_user = as_user_prefix(USER, env)
    nxsock = f"{as_user} PYTHONPATH={q(pythonpath)} PYTHONDONTWRITEBYTECODE=1 {q(python)} -m nxsock"
    client = f"{as_user} node {q(str(stage_oracle(CLIENT_SCRIPT)))} {q(str(nx))}"
    modes = "stat -c %a /tmp/ws /tmp/ws/socks | tr '\\n' ' '"
    states = "\n".join(
        f"""for attempt in 1 2 3 4 5; do
  {change}; held=$({modes})
  judged=$(echo '<<<STATE {name}'
    echo '<<<NXSOCK'; {nxsock} paths --json 2>&3
    echo '<<<CLIENT'; {client} "$SOCKET" 2>&3
    echo '<<<STATEDOCTOR'; {nxsock} doctor --json --only daemon-record 2>&3)
  [ "$held" = "$({modes})" ] && break
  echo "state '{name}': Nx changed the modes ($held) while it was judged; again" >&3; sleep 1
done
printf '%s\n' "$judged"
"""
        for name, change in CLIENT_STATES
    )
    script = f"""
exec 3>&2
set -e
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs -o mode=0755 tmpfs /home
install -d -o {USER} -g {USER} /home/u{USER}
mkdir -p /tmp/ws/node_modules /tmp/ws/apps/one
echo '{{}}' > /tmp/ws/nx.json
echo socks > /tmp/ws/.nxignore
echo '{{"name": "ws", "private": true}}' > /tmp/ws/package.json
ln -s {q(str(nx / 'node_modules' / 'nx'))} /tmp/ws/node_modules/nx
chown -R {USER}:{USER} /tmp/ws
cd /tmp/ws/apps/one
set +e
echo '<<<PREDICT'; {nxsock} paths --json 2>&3
echo '<<<START'; timeout 90 {as_user} node /tmp/ws/node_modules/nx/dist/bin/nx.js daemon --start </dev/null >&3 2>&3
echo '<<<RECORD'; cat /tmp/ws/.nx/workspace-data/d/server-process.json
SOCKET=$(node -e 'try{{process.stdout.write(require(process.argv[1]).socketPath)}}catch(e){{}}' \
  /tmp/ws/.nx/workspace-data/d/server-process.json)
echo '<<<CACHEPATH'; {nxsock} cache path 2>&3
echo '<<<CACHELIST'; {nxsock} cache list --json 2>&3
echo '<<<VERIFY'; {nxsock} cache verify --json 2>&3; echo "<<<VERIFYRC $?"
# Let the daemon finish its graph (a real client request waits for it), then go quiet: no plugin worker's
# socket left and the log still for a second. Only then is the whole audit taken: a worker that had just
# exited would otherwise leave a socket that no longer answers, a leftover of that instant.
timeout 60 {as_user} node /tmp/ws/node_modules/nx/dist/bin/nx.js show projects </dev/null >/dev/null 2>&3
log=/tmp/ws/.nx/workspace-data/d/daemon.log
for wait in $(seq 30); do
  size=$(stat -c %s "$log" 2>/dev/null); sleep 1
  [ -z "$(ls /tmp/ws/socks | grep -v '^d.sock$')" ] && [ "$size" = "$(stat -c %s "$log" 2>/dev/null)" ] && break
done
echo '<<<DOCTOR'; {nxsock} doctor --json 2>&3
{states}
echo '<<<END'
"""
    path = cache_dir() / f"daemon-{release}-{os.getpid()}-{threading.get_ident()}.sh"
    path.write_text(script)
    path.chmod(0o600)
    try:
        proc = subprocess.run(
            [*PRIVATE_NAMESPACES, "bash", str(path)],
            capture_output=True,
            stdin=subprocess.DEVNULL,
            timeout=timeout,
        )
    finally:
        path.unlink(missing_ok=True)
    out = proc.stdout.decode("utf-8", "replace")

    def section(name: str, text: str = out) -> str:
        marker = f"<<<{name}\n"
        return text.split(marker, 1)[1].split("<<<", 1)[0] if marker in text else ""

    judged = []
    for chunk in out.split("<<<STATE ")[1:]:
        name = chunk.split("\n", 1)[0]
        judged.append((
            name,
            _document_or_none(section("NXSOCK", chunk), "paths"),
            _json_or_none(section("CLIENT", chunk)),
            _document_or_none(section("STATEDOCTOR", chunk), "doctor"),
        ))
    rc = next((s for s in out.split("<<<") if s.startswith("VERIFYRC ")), "VERIFYRC -1")
    return DaemonProbe(
        predicted=_document_or_none(section("PREDICT"), "paths"),
        record=_json_or_none(section("RECORD")),
        states=judged,
        cache_path=section("CACHEPATH").strip(),
        cache_list=_document_or_none(section("CACHELIST"), "cache-list"),
        verify=_document_or_none(section("VERIFY"), "cache-verify"),
        verify_rc=int(rc.split()[1]),
        doctor=_document_or_none(section("DOCTOR"), "doctor"),
        raw=out + proc.stderr.decode("utf-8", "replace"),
    )
