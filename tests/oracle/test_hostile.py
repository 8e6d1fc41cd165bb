"""Hostile neighbours against the real Nx: links, a peer's ``.env``, slow and huge files, a stopped child, floods.

The attacks and their snapshots are ``tests/system/test_hostile.py``'s; these are the cells whose state holds a
real Nx install (its ``node_modules/nx``), so they run in the oracle tier.

Rerun: ``NXSOCK_TEST_UID_BASE=<base> python -m pytest tests/oracle/test_hostile.py -s`` (``-s`` prints the counts).
"""
from __future__ import annotations

import shlex
import subprocess
import textwrap
import typing as t

import pytest
from documents import SchemaMismatch, parsed
from harness import (
    as_user_prefix,
    env_words,
    install_nx,
    stage_nxsock,
)
from system.test_hostile import COUNTS, HEX20, HOME, OLD, STALE, P, U, _legacy_shapes

WS = f"{HOME}/ws"
PEER_WS = f"/home/u{P}/ws"
SOCKS = f"/tmp/.nx/{U}/sockets"
TIME_LIMIT = 30  # seconds; a command past it has hung (a loaded 2-core machine takes a few)
EXIT_CODES = {0, 1, 2, 73, 77, 78}


class Command(t.NamedTuple):
    args: tuple[str, ...]
    as_root: bool = False
    env: t.Mapping[str, str | None] = {}
    stdin: str | None = None


def user(*args: str, **env: str | None) -> Command:
    return Command(args, False, env)


def root(*args: str, **env: str | None) -> Command:
    return Command(args, True, env)


class Cell(t.NamedTuple):
    command: Command
    rc: int
    elapsed_ms: int
    stdout: str
    stderr: str
    before: str
    after: str


def _snapshot(roots: t.Sequence[str]) -> str:
    where = " ".join(shlex.quote(r) for r in roots)
    return (
        f"find {where} -xdev -printf '%y %U %G %m %i %s %T@ %l %p\\n' 2>/dev/null | sort; "
        f"find {where} -xdev -type f -exec sha256sum {{}} + 2>/dev/null | sort"
    )


def attack(
    setup: str, commands: t.Sequence[Command], attacked: t.Sequence[str], *, cwd: str = WS, before: str = ""
) -> list[Cell]:
    """Build *setup* as root in a fresh namespace, run each command in turn; the cells, with *attacked* snapshotted
    around each."""
    nx = install_nx("24.0.6")
    python, pylib = stage_nxsock()
    lines = [
        "mount -t tmpfs -o mode=1777 tmpfs /tmp; mount -t tmpfs -o mode=0755 tmpfs /home; mount -t "
        "tmpfs -o mode=0755 tmpfs /srv",
        "mount -t tmpfs tmpfs /mnt; mount -t tmpfs -o mode=0755 tmpfs /etc/tmpfiles.d",
        STALE,
        f"install -d -o {U} -g {U} {HOME} {WS} {WS}/node_modules; echo '{{}}' > {WS}/nx.json; ln -s "
        f"{nx}/node_modules/nx {WS}/node_modules/nx; chown -R -h {U}:{U} {WS}",
        f"install -d -o {P} -g {P} /home/u{P} {PEER_WS} {PEER_WS}/node_modules; echo '{{}}' > {PEER_WS}/nx.json; ln -s "
        f"{nx}/node_modules/nx {PEER_WS}/node_modules/nx; chown -R -h {P}:{P} {PEER_WS}",
        setup,
        before,
        f"cd {shlex.quote(cwd)}",
    ]
    snapshot = _snapshot(attacked)
    for i, command in enumerate(commands):
        prefix = (
            "env -i "
            f"{env_words(command.env, HOME if not command.as_root else '/root', uid=0 if command.as_root else U)}"
            if command.as_root
            else as_user_prefix(U, command.env)
        )
        run = (
            f"{prefix} PYTHONPATH={shlex.quote(pylib)} PYTHONDONTWRITEBYTECODE=1 {shlex.quote(python)} -m nxsock "
            f"{' '.join(map(shlex.quote, command.args))}"
        )
        feed = f"printf '%s' {shlex.quote(command.stdin)} |" if command.stdin else "</dev/null"
        lines += [
            f"echo '<<<TREE {i}'; {snapshot}",
            f"echo '<<<OUT {i}'; s=$(date +%s%N); {feed} timeout -s KILL {TIME_LIMIT} {run} "
            f"2>/mnt/err.{i}; rc=$?; e=$(date +%s%N)",
            f"echo '<<<RC {i} '$rc' '$(( (e - s) / 1000000 ))",
            f"echo '<<<AFTER {i}'; {snapshot}",
        ]
    lines += [f"echo '<<<ERR {i}'; cat /mnt/err.{i}" for i in range(len(commands))]
    lines.append("kill $(jobs -p) 2>/dev/null; wait")
    proc = subprocess.run(["unshare", "-m", "--propagation", "private", "bash", "-c", "\n".join(lines)], cwd="/",
                          capture_output=True, timeout=60 + len(commands) * (TIME_LIMIT + 5))
    sections: dict[tuple[str, int], str] = {}
    for chunk in proc.stdout.decode("utf-8", "replace").split("<<<")[1:]:
        head, _, body = chunk.partition("\n")
        kind, _, rest = head.partition(" ")
        sections[(kind, int(rest.split()[0]))] = body if kind != "RC" else rest
    cells = []
    for i, command in enumerate(commands):
        rc, elapsed = (int(x) for x in sections.get(("RC", i), f"{i} -1 0").split()[1:3])
        cells.append(Cell(command, rc, elapsed, sections.get(("OUT", i), ""), sections.get(("ERR", i), ""),
                          sections.get(("TREE", i), ""), sections.get(("AFTER", i), "")))
    return cells


def violations(cells: t.Sequence[Cell]) -> list[str]:
    """Every broken promise: a changed attacked tree, a hang, an undocumented exit code, a traceback, broken JSON."""
    found = []
    for cell in cells:
        where = f"[{'root' if cell.command.as_root else 'user'} {' '.join(cell.command.args)}]"
        if cell.before != cell.after:
            changed = sorted(set(cell.before.splitlines()) ^ set(cell.after.splitlines()))[:6]
            found.append(f"{where} changed the attacked tree: {changed}")
        if cell.rc == 137 or cell.elapsed_ms > TIME_LIMIT * 1000:
            found.append(f"{where} hung: killed after {TIME_LIMIT}s")
        elif cell.rc not in EXIT_CODES:
            found.append(f"{where} exit {cell.rc}: {cell.stderr.strip()[-300:]}")
        if "Traceback" in cell.stderr + cell.stdout:
            found.append(f"{where} traceback: {cell.stderr.strip()[-300:]}")
        if "--json" in cell.command.args and cell.rc in EXIT_CODES:
            try:
                parsed(cell.stdout, cell.command.args)
            except ValueError:
                found.append(f"{where} not one JSON document: {cell.stdout[:200]!r}")
            except SchemaMismatch as mismatch:
                found.append(f"{where} {mismatch}")
    COUNTS["attacks"] += 1
    COUNTS["cells"] += len(cells)
    COUNTS["violations"] += len(found)
    return found


def document(cell: Cell) -> t.Any:
    return parsed(cell.stdout, cell.command.args)






RESETS = (
    user("reset", "--legacy", "--force", "--daemon-marker", "--json"),
    user("reset", "--legacy", "--force", "--daemon-marker"),
)


class TestLinks:
    """A link or a level of another user anywhere on a path nxsock acts in is never acted through."""

    def test_reset_legacy_never_follows_a_peers_link_at_tmpdir(self) -> None:
        """Finding 1: srt's TMPDIR=/tmp/claude, planted by the attacker as a link to the victim's ~/work."""
        setup = (f"install -d -o {U} {HOME}/work; {_legacy_shapes(HOME + '/work')}; "
                 f"ln -s {HOME}/work /tmp/claude; chown -h {P} /tmp/claude")
        cells = attack(setup, [c._replace(env={"TMPDIR": "/tmp/claude"}) for c in RESETS], [f"{HOME}/work"])
        assert violations(cells) == []
        refused = document(cells[0])["refused"]
        assert [r["path"] for r in refused] == ["/tmp/claude"] and cells[0].rc == 1

    @pytest.mark.parametrize(
        ("setup", "env", "attacked"),
        [
            pytest.param(
                f"install -d -m 0755 -o {P} /tmp/p; install -d -o {U} /tmp/p/t; " + _legacy_shapes("/tmp/p/t"),
                {"TMPDIR": "/tmp/p/t"},
                ["/tmp/p"],
                id="temp dir beneath a level the attacker owns",
            ),
            pytest.param(
                f"install -d -m 0777 /tmp/ww; install -d -o {U} /tmp/ww/t; " + _legacy_shapes("/tmp/ww/t"),
                {"TMPDIR": "/tmp/ww/t"},
                ["/tmp/ww"],
                id="temp dir beneath a world-writable non-sticky level",
            ),
            pytest.param(
                f"install -d -o {U} {HOME}/work; {_legacy_shapes(HOME + '/work')}; ln -s {HOME} /tmp/p-link; "
                f"chown -h {P} /tmp/p-link",
                {"TMPDIR": "/tmp/p-link/work"},
                [HOME],
                id="temp dir through the attacker's link one level up",
            ),
            pytest.param(
                f"install -d -m 0700 -o {U} {HOME}/socks; stale {HOME}/socks/keep.sock; chown -R {U} {HOME}/socks; "
                f"ln -s {HOME}/socks /tmp/socks; chown -h {P} /tmp/socks",
                {"NX_SOCKET_DIR": "/tmp/socks"},
                [HOME],
                id="NX_SOCKET_DIR as the attacker's link",
            ),
            pytest.param(
                f"install -d -m 0700 -o {U} {HOME}/.nx {HOME}/.nx/sockets {HOME}/.nx/sockets/{HEX20}; "
                f"stale {HOME}/.nx/sockets/{HEX20}/d.sock; chown -R {U} {HOME}/.nx; {OLD} {HOME}/.nx/sockets/{HEX20}; "
                f"ln -s {HOME} /tmp/h; chown -h {P} /tmp/h",
                {"HOME": "/tmp/h"},
                [HOME],
                id="HOME as the attacker's link",
            ),
            pytest.param(
                f"install -d -m 0700 -o {U} {HOME}/data {HOME}/data/d; echo why > {HOME}/data/d/disabled; "
                f"stale {HOME}/data/d/x.sock; chown -R {U} {HOME}/data; ln -s {HOME}/data "
                f"/tmp/data; chown -h {P} /tmp/data",
                {"NX_WORKSPACE_DATA_DIRECTORY": "/tmp/data"},
                [HOME],
                id="NX_WORKSPACE_DATA_DIRECTORY as the attacker's link",
            ),
            pytest.param(
                f"install -d -m 0700 -o {U} {HOME}/cache; touch "
                f"{HOME}/cache/23.0.0-0123456789ab-nx.linux-x64-gnu.node; "
                f"chown -R {U} {HOME}/cache; ln -s {HOME}/cache /tmp/cache; chown -h {P} /tmp/cache",
                {"NX_NATIVE_FILE_CACHE_DIRECTORY": "/tmp/cache"},
                [HOME],
                id="NX_NATIVE_FILE_CACHE_DIRECTORY as the attacker's link",
            ),
            pytest.param(
                f"install -d -m 0700 -o {U} {HOME}/c {HOME}/c/{U} {HOME}/c/{U}/sockets {HOME}/c/{U}/sockets/{HEX20} "
                f"{HOME}/c/{U}/native-cache {HOME}/c/{U}/native-cache/23.0.0; touch "
                f"{HOME}/c/{U}/native-cache/23.0.0/23.0.0-0123456789ab-nx.linux-x64-gnu.node; "
                f"chown -R {U} {HOME}/c; {OLD} {HOME}/c/{U}/sockets/{HEX20}; ln -s {HOME}/c "
                f"/tmp/.nx; chown -h {P} /tmp/.nx",
                {},
                [HOME],
                id="the shared container as the attacker's link",
            ),
            pytest.param(
                f"install -d -m 1777 -o {P} /tmp/.nx; install -d -m 0700 -o {U} /tmp/.nx/{U} {SOCKS} {SOCKS}/{HEX20}; "
                f"stale {SOCKS}/{HEX20}/d.sock; chown -R {U} /tmp/.nx/{U}; {OLD} {SOCKS}/{HEX20}",
                {},
                ["/tmp/.nx"],
                id="the shared container owned by the attacker",
            ),
            pytest.param(
                f"install -d -m 1777 /tmp/.nx; install -d -m 0700 -o {U} {HOME}/u {HOME}/u/sockets "
                f"{HOME}/u/sockets/{HEX20}; "
                f"chown -R {U} {HOME}/u; {OLD} {HOME}/u/sockets/{HEX20}; ln -s {HOME}/u /tmp/.nx/{U}; "
                f"chown -h {P} /tmp/.nx/{U}",
                {},
                [HOME],
                id="the per-user level as the attacker's link",
            ),
            pytest.param(
                f"install -d -m 1777 /tmp/.nx; install -d -m 0700 -o {U} /tmp/.nx/{U} {SOCKS} {HOME}/keep; "
                f"echo k > {HOME}/keep/k; "
                f"chown -R {U} {HOME}/keep; ln -s {HOME}/keep {SOCKS}/{HEX20}; chown -h {U} {SOCKS}/{HEX20}",
                {},
                [HOME],
                id="a per-run directory as a link",
            ),
        ],
    )
    def test_no_link_or_foreign_level_is_acted_through(
        self, setup: str, env: dict[str, str], attacked: list[str]
    ) -> None:
        commands = [c._replace(env=env) for c in RESETS] + [user("cache", "prune", "--json", **env)]
        assert violations(attack(setup, commands, attacked)) == []


ROOT_THINGS = (
    f"install -d -m 0755 /srv/t; {_legacy_shapes('/srv/t', 0)}; "
    "install -d -m 0700 /srv/s; stale /srv/s/root.sock; "
    "install -d -m 0700 /srv/c; echo binding > /srv/c/23.0.0-0123456789ab-nx.linux-x64-gnu.node; "
    "install -d -m 0755 /srv/w /srv/w/d /srv/w/d/disabled; echo x > /srv/w/d/disabled/keep; stale /srv/w/d/root.sock; "
    f"install -d -m 0700 /srv/w/d/{HEX20}; {OLD} /srv/w/d/{HEX20}"
)
HOSTILE_ENV_FILES = {
    "TMPDIR": "TMPDIR=/srv/t",
    "NX_SOCKET_DIR": "NX_SOCKET_DIR=/srv/s",
    "NX_NATIVE_FILE_CACHE_DIRECTORY": "NX_NATIVE_FILE_CACHE_DIRECTORY=/srv/c",
    "NX_WORKSPACE_DATA_DIRECTORY": "NX_WORKSPACE_DATA_DIRECTORY=/srv/w",
}
ROOT_ACTS = (
    root("reset", "--legacy", "--force", "--daemon-marker", "--json"),
    root("reset", "--legacy", "--force", "--daemon-marker"),
    root("cache", "prune", "--json"),
    root("cache", "prune"),
)


class TestHostileDotenvAsRoot:
    """Finding 2: root in a workspace another user owns acts on nothing that workspace's files steer."""

    @pytest.mark.parametrize("variable", sorted(HOSTILE_ENV_FILES))
    @pytest.mark.parametrize("file", [".env", ".local.env", ".env.local"])
    def test_root_never_acts_where_an_attackers_env_file_points(self, variable: str, file: str) -> None:
        setup = (
            f"{ROOT_THINGS}; echo {shlex.quote(HOSTILE_ENV_FILES[variable])} > {PEER_WS}/{file}; "
            f"chown {P} {PEER_WS}/{file}"
        )
        cells = attack(setup, ROOT_ACTS, ["/srv"], cwd=PEER_WS)
        assert violations(cells) == []

    def test_an_attackers_env_file_in_roots_own_workspace_is_refused_too(self) -> None:
        """A .env root does not own, even in a directory root does, steers nothing."""
        setup = (
            f"{ROOT_THINGS}; install -d -m 0755 /srv/rootws; echo '{{}}' > /srv/rootws/nx.json; "
            f"printf '%s\\n' {' '.join(shlex.quote(v) for v in HOSTILE_ENV_FILES.values())} > /srv/rootws/.env; "
            f"chown {P} /srv/rootws/.env"
        )
        cells = attack(setup, ROOT_ACTS, ["/srv/t", "/srv/s", "/srv/c", "/srv/w"], cwd="/srv/rootws")
        assert violations(cells) == []

    def test_roots_own_env_file_is_still_obeyed(self) -> None:
        """The rule refuses what others steer, not configuration: root's own .env is honoured."""
        setup = (
            "install -d -m 0755 /srv/rootws; echo '{}' > /srv/rootws/nx.json; echo "
            "NX_SOCKET_DIR=/srv/s > /srv/rootws/.env; "
            "install -d -m 0700 /srv/s; stale /srv/s/root.sock"
        )
        cells = attack(setup, [root("reset", "--json")], ["/home"], cwd="/srv/rootws")
        assert [r["path"] for r in document(cells[0])["removed"]] == ["/srv/s/root.sock"]


SLOW_ENV_COMMANDS = (
    user("paths", "--json"),
    user("paths"),
    user("doctor", "--json"),
    user("doctor"),
    user("reset", "--dry-run", "--json"),
    user("cache", "list", "--json"),
    user("check-root", "--json"),
    root("doctor", "--user", str(U), "--json"),
)
DOTENV_SHAPES = {
    "60 kB of newlines": "'\\n%.0s' $(seq 60000)",
    "60 kB of blank lines with spaces": "' \\t\\n%.0s' $(seq 20000)",
    "60 kB of carriage returns": "'\\r%.0s' $(seq 60000)",
}


class TestSlowDotenv:
    """Finding 3: parsing .env is linear, so no .env makes a command hang."""

    @pytest.mark.parametrize("shape", sorted(DOTENV_SHAPES))
    def test_every_command_returns_promptly_whatever_the_env_file_holds(self, shape: str) -> None:
        # Nothing but blank lines (a key anywhere lets one match swallow them all); the other files are still read.
        setup = (
            f"printf {DOTENV_SHAPES[shape]} > {WS}/.env; printf 'NX_SOCKET_DIR=/tmp/from-env\\n' > {WS}/.local.env; "
            f"chown {U} {WS}/.env {WS}/.local.env"
        )
        cells = attack(setup, SLOW_ENV_COMMANDS, [WS])
        assert violations(cells) == []
        assert document(cells[0])["variables"]["NX_SOCKET_DIR"] == {
            "value": "/tmp/from-env",
            "source": f"{WS}/.local.env",
            "withheld": None,
        }

    def test_a_megabyte_of_any_shape_parses_in_well_under_two_seconds_of_cpu(self) -> None:
        """Shapes that defeat backtracking patterns, each 1 MiB (the most read), in a subprocess with a deadline.

        CPU time, the best of three, so a loaded machine's waiting is not counted; the old pattern
        needed minutes for 8,000 newlines, so a megabyte of them never finishes there.
        """
        probe = textwrap.dedent("""
            import time
            from nxsock.core.dotenv import parse_dotenv
            n = 1 << 20
            shapes = ["\\n" * n, " \\t\\n" * (n // 3), "\\r" * n, "a" + "\\n" * n, "export\\n" * (n // 7),
                      "a='" + "x" * n, 'a="' + "x\\n" * (n // 2), "a='" + "\\\\'" * (n // 2), "a='\\n" * (n // 4),
                      "a='\\"`\\n" * (n // 6), "a:" + " " * n, ("a=" + " " * 100 + "\\n") * (n // 103),
                      "a=b\\n" * (n // 4)]
            worst = 0.0
            for text in shapes:
                runs = []
                for _ in range(3):
                    start = time.process_time()
                    parse_dotenv(text)
                    runs.append(time.process_time() - start)
                worst = max(worst, min(runs))
            print(len(shapes), worst)
        """)
        python, pylib = stage_nxsock()
        result = subprocess.run([python, "-c", probe], capture_output=True, text=True, timeout=120,
                                env={"PYTHONPATH": pylib, "PATH": "/usr/bin:/bin"})
        assert result.returncode == 0, result.stderr
        count, worst = result.stdout.split()
        print(f"dotenv: {count} shapes of 1 MiB, the slowest {float(worst):.2f} s of CPU")
        assert float(worst) < 1.5


STOPPER = textwrap.dedent("""
    import os, signal, sys, time
    sig, me = getattr(signal, sys.argv[1]), str(os.getuid())
    end = time.time() + 12
    others = set()  # processes that are not an nxsock doctor: never read again
    ready = sys.argv[2]  # created after the first whole scan of /proc: the doctor starts only then
    while time.time() < end:
        for pid in os.listdir("/proc"):
            if not pid.isdigit() or pid in others or int(pid) == os.getpid():
                continue
            try:
                cmdline = open(f"/proc/{pid}/cmdline", "rb").read()
                if b"nxsock" not in cmdline or b"doctor" not in cmdline:
                    others.add(pid)
                    continue
                status = open(f"/proc/{pid}/status").read()
            except OSError:
                continue
            uids = next((line.split()[1:] for line in status.splitlines() if line.startswith("Uid:")), [])
            if uids[:1] == [me]:  # root's child, once it has become this user: this user may signal it
                try:
                    os.kill(int(pid), sig)
                    end = min(end, time.time() + 1)  # one child is enough; leave nothing running for long
                except OSError:
                    pass
        if ready:
            open(ready, "w").close()
            ready = ""
""")


class TestStoppedChild:
    """Finding 4: the user root audits cannot hang root: the child is bounded, killed, and reported."""

    @pytest.mark.parametrize("signal_name", ["SIGSTOP", "SIGKILL"])
    @pytest.mark.parametrize("json_flag", [True, False])
    def test_doctor_user_returns_with_a_clear_error_when_its_child_is_signalled(
        self, signal_name: str, json_flag: bool
    ) -> None:
        python, _ = stage_nxsock()
        # Started, and then waited for until it has scanned /proc once: a loaded machine starts Python slowly.
        stopper = (
            f"{as_user_prefix(U)} {shlex.quote(python)} -c {shlex.quote(STOPPER)} {signal_name} /tmp/.stopper-ready "
            ">/dev/null 2>&1 & for i in $(seq 400); do [ -e /tmp/.stopper-ready ] && break; sleep 0.05; done"
        )
        args = ("doctor", "--user", str(U), *(("--json",) if json_flag else ()))
        cells = attack("", [root(*args)], [WS], before=stopper)
        assert violations(cells) == []
        cell = cells[0]
        assert cell.rc == 1 and f"the audit as uid {U} was" in cell.stderr, cell
        if json_flag:
            assert document(cell)["status"] == "error" and document(cell)["error"]


DEEP = "python3 -c 'import sys; open(sys.argv[1], \"w\").write(\"[\" * 100000 + \"]\" * 100000)'"
JSON_COMMANDS = (
    user("paths", "--json"),
    user("paths"),
    user("doctor", "--json"),
    user("doctor"),
    user("cache", "list", "--json"),
    user("cache", "list"),
    user("cache", "verify", "--json"),
    user("cache", "prune", "--dry-run", "--json"),
    user("reset", "--dry-run", "--json"),
    user("reset", "--dry-run"),
    user("check-root", "--json"),
    root("doctor", "--user", str(U), "--json"),
)
DAEMON_DIR = f"{WS}/.nx/workspace-data/d"
OWN_NX = f"rm {WS}/node_modules/nx; install -d -o {U} {WS}/node_modules/nx"
HOSTILE_JSON = {
    "server-process.json nested 100,000 deep": (
        f"install -d -o {U} {WS}/.nx {WS}/.nx/workspace-data {DAEMON_DIR}; {DEEP} {DAEMON_DIR}/server-process.json"
    ),
    "package.json nested 100,000 deep": f"{OWN_NX}; {DEEP} {WS}/node_modules/nx/package.json",
    "socketPath with a lone surrogate": f"install -d -o {U} {WS}/.nx {WS}/.nx/workspace-data {DAEMON_DIR}; "
    "echo '{\"processId\": 1, \"socketPath\": \"/tmp/\\ud800/d.sock\", \"nxVersion\": \"\\udfff\"}' > "
    f"{DAEMON_DIR}/server-process.json",
    "version with a lone surrogate": (
        f"{OWN_NX}; echo '{{\"version\": \"24.0.6\\ud800\"}}' > {WS}/node_modules/nx/package.json"
    ),
    "a 5,000-digit processId": (
        f"install -d -o {U} {WS}/.nx {WS}/.nx/workspace-data {DAEMON_DIR}; "
        f"echo \"{{\\\"processId\\\": $(printf '9%.0s' $(seq 5000))}}\" > {DAEMON_DIR}/server-process.json"
    ),
}


class TestHostileJson:
    """Finding 5: JSON written by someone else is read bounded: no crash, no hang, whatever it holds."""

    @pytest.mark.parametrize("shape", sorted(HOSTILE_JSON))
    def test_no_command_crashes_on_hostile_json(self, shape: str) -> None:
        cells = attack(f"{HOSTILE_JSON[shape]}; chown -R {U} {WS}", JSON_COMMANDS, [WS])
        assert violations(cells) == []

    def test_markup_in_a_recorded_socket_path_crashes_none_of_the_acting_commands(self) -> None:
        """A path like /tmp/[/x]/d.sock is data to reset, cache and doctor --user (paths' table is the output
        layer's)."""
        setup = (
            f"install -d -o {U} {WS}/.nx {WS}/.nx/workspace-data {DAEMON_DIR}; "
            "echo '{\"processId\": 1, \"socketPath\": \"/tmp/[/x]/d.sock\"}' > "
            f"{DAEMON_DIR}/server-process.json; chown -R {U} {WS}"
        )
        commands = [
            user("reset"),
            user("reset", "--dry-run", "--json"),
            user("cache", "list"),
            user("cache", "prune", "--dry-run"),
            user("doctor"),
            root("doctor", "--user", str(U)),
            user("provision", "--dry-run"),
        ]
        cells = attack(setup, commands, [WS], cwd=WS)
        assert violations(cells) == []


INSTALL = root("provision", "--tmpfiles", "--install", "--json")


class TestTmpfilesEdges:
    """Finding 8: the drop-in is written only to a regular file in a trusted directory; success means a real
    container."""

    def test_a_symlink_at_the_container_is_never_reported_as_success(self) -> None:
        setup = (
            f"install -d -m 0700 -o {P} /home/precious; echo keep > /home/precious/file; ln -s /home/precious "
            f"/tmp/.nx; chown -h {P} /tmp/.nx"
        )
        cells = attack(setup, [INSTALL, root("provision", "--tmpfiles", "--install")], ["/home/precious", "/tmp"])
        assert violations(cells) == []
        assert cells[0].rc == 1 and any(
            s["verb"] == "refuse" and s["path"] == "/tmp/.nx" for s in document(cells[0])["steps"]
        )

    @pytest.mark.parametrize(
        ("case", "setup"),
        [
            (
                "missing",
                "cp -a /etc /mnt/etc; umount /etc/tmpfiles.d 2>/dev/null; rm -rf /mnt/etc/tmpfiles.d; "
                "mount --bind /mnt/etc /etc",
            ),
            ("read-only", "mount -o remount,ro /etc/tmpfiles.d"),
        ],
    )
    def test_an_unwritable_drop_in_directory_is_a_clean_error_exit_73(self, case: str, setup: str) -> None:
        cells = attack(setup, [INSTALL, root("provision", "--tmpfiles", "--install")], ["/tmp"])
        assert violations(cells) == []
        assert [c.rc for c in cells] == [73, 73], case
        assert document(cells[0])["steps"][0]["verb"] == "fail"

    @pytest.mark.parametrize("what", ["a FIFO", "a link to a file of another user"])
    def test_a_fifo_or_link_at_the_drop_in_path_never_blocks_and_is_left_alone(self, what: str) -> None:
        plant = (
            "mkfifo /etc/tmpfiles.d/nxsock.conf"
            if what == "a FIFO"
            else f"install -d -o {P} /home/precious; echo '# Written by nxsock provision --tmpfiles "
                 "--install.' > /home/precious/file; "
            f"chown {P} /home/precious/file; ln -s /home/precious/file /etc/tmpfiles.d/nxsock.conf"
        )
        commands = [
            INSTALL,
            root("provision", "--tmpfiles", "--uninstall", "--json"),
            root("provision", "--tmpfiles", "--install", "--dry-run"),
        ]
        cells = attack(plant, commands, ["/etc/tmpfiles.d", "/home", "/tmp"])
        assert violations(cells) == []
        assert all(c.rc == 1 for c in cells), [c.rc for c in cells]


FLOOD = textwrap.dedent("""
    import os, sys
    root, owner, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    for i in range(n):
        path = f"{root}/e{i:06d}"
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
        os.chown(path, owner, owner)
""")


class TestFloods:
    """Finding 11: 100,000 planted entries cost seconds at most and a summary, not a line each."""

    def test_reset_stays_fast_and_summarises_a_flood_of_other_users_entries(self) -> None:
        setup = (
            f"install -d -m 1777 /tmp/.nx; install -d -m 0700 -o {U} /tmp/.nx/{U} {SOCKS}; "
            f"python3 -c {shlex.quote(FLOOD)} {SOCKS} {P} 100000; stale {SOCKS}/dead.sock; chown {U} {SOCKS}/dead.sock"
        )
        commands = [user("reset"), user("reset", "--json"), user("reset", "--dry-run")]
        cells = attack(setup, commands, ["/home"])
        assert violations(cells) == []
        human, machine = cells[0], cells[1]
        print(
            f"flood: reset {human.elapsed_ms} ms, reset --json {machine.elapsed_ms} ms, "
            f"{len(human.stdout.splitlines())} lines"
        )
        # A hang guard, not a speed test: the flood costs about a second; a line a entry (quadratic) would be minutes.
        assert human.elapsed_ms < 30_000 and machine.elapsed_ms < 30_000
        assert len(human.stdout.splitlines()) < 50 and "99990 entries owned by other users" in human.stdout
        kept = document(machine)["kept"]
        assert len(kept) <= 11 and sum(k["count"] for k in kept) == 100000
