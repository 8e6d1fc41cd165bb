"""Every command across hostile and ordinary states: nothing lost, nothing widened, no traceback, no hang.

Each state is built as root in a fresh mount namespace; then every command
variant runs in it, in turn, as an unprivileged uid (and ``provision`` and
``doctor --user`` also as root), each between two snapshots of ``/tmp`` and
``/home`` (type, owner, mode, inode, size, link target of every entry).

Per cell: a read-only command leaves the tree identical; a mutating one
changes only entries the user owns (their own Nx state) and never anything
under a ``precious`` directory; no traceback; done within the time limit; an
exit code from the table; ``--json`` is exactly one valid document.
"""
from __future__ import annotations

import json
import shlex
import typing as t
from pathlib import Path

import pytest
from documents import SchemaMismatch, parsed
from harness import (
    PEER,
    USER,
    as_user_prefix,
    env_words,
    install_nx,
    stage_nxsock,
    stage_oracle,
)

U, P = USER, PEER
HOME = f"/home/u{U}"
WS = f"{HOME}/ws"
SOCKS = f"/tmp/.nx/{U}/sockets"
RUN = f"{SOCKS}/0123456789abcdef0123"
EXIT_CODES = {0, 1, 2, 73, 77, 78}
TIME_LIMIT = 20
COMMAND_SERVER = Path(__file__).with_name("command_server.py")


# (label, arguments, mutates, as root, stdin)
COMMANDS: list[tuple[str, list[str], bool, bool, str | None]] = [
    ("paths --json", ["paths", "--json"], False, False, None),
    ("paths", ["paths"], False, False, None),
    ("paths --platform darwin --json", ["paths", "--platform", "darwin", "--json"], False, False, None),
    ("paths --platform win32", ["paths", "--platform", "win32"], False, False, None),
    ("paths --nx-version 23.3.2 --json", ["paths", "--nx-version", "23.3.2", "--json"], False, False, None),
    ("check-root --json", ["check-root", "--json"], False, False, None),
    ("check-root", ["check-root"], False, False, None),
    ("doctor --json", ["doctor", "--json"], False, False, None),
    ("doctor", ["doctor"], False, False, None),
    ("doctor --explain - --json", ["doctor", "--explain", "-", "--json"], False, False, f"connect EACCES {RUN}/d.sock"),
    ("cache path --json", ["cache", "path", "--json"], False, False, None),
    ("cache list --json", ["cache", "list", "--json"], False, False, None),
    ("cache verify --json", ["cache", "verify", "--json"], False, False, None),
    ("cache prune --dry-run --json", ["cache", "prune", "--dry-run", "--json"], False, False, None),
    ("reset --dry-run --legacy --json", ["reset", "--dry-run", "--legacy", "--json"], False, False, None),
    ("provision --dry-run --json", ["provision", "--dry-run", "--json"], False, False, None),
    ("provision --check", ["provision", "--check"], False, False, None),
    ("doctor --user (root) --json", ["doctor", "--user", str(U), "--json"], False, True, None),
    (
        "reset --force --legacy --daemon-marker --json",
        ["reset", "--force", "--legacy", "--daemon-marker", "--json"],
        True,
        False,
        None,
    ),
    ("cache prune --json", ["cache", "prune", "--json"], True, False, None),
    ("provision --json", ["provision", "--json"], True, False, None),
    ("provision --json (root)", ["provision", "--json"], True, True, None),
]


PRECIOUS = (
    f"install -d -m 0755 -o {P} /home/precious; echo keep > /home/precious/file; "
    f"install -d -m 0755 -o {U} {HOME}/precious; echo keep > {HOME}/precious/file; chown {U} {HOME}/precious/file"
)
STALE = (
    "stale() { python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' \"$1\"; chown "
    + str(U)
    + " \"$1\"; }"
)
NOT_UTF8 = "$'\\xff\\xfe'"
STATES: list[tuple[str, str, dict[str, str | None]]] = [
    ("fresh", "", {}),
    ("root-provisioned container", "install -d -m 1777 /tmp/.nx", {}),
    ("the user's own container", f"install -d -m 1777 -o {U} /tmp/.nx", {}),
    ("a peer's container", f"install -d -m 1777 -o {P} /tmp/.nx", {}),
    ("peer container, no HOME", f"install -d -m 1777 -o {P} /tmp/.nx", {"HOME": None}),
    ("HOME empty", f"install -d -m 1777 -o {P} /tmp/.nx", {"HOME": ""}),
    ("HOME relative", f"install -d -m 1777 -o {P} /tmp/.nx", {"HOME": "relative"}),
    ("HOME=/tmp", f"install -d -m 1777 -o {P} /tmp/.nx", {"HOME": "/tmp"}),
    ("HOME missing", f"install -d -m 1777 -o {P} /tmp/.nx", {"HOME": "/tmp/no-such-home"}),
    ("container: link to a peer's precious directory", f"ln -s /home/precious /tmp/.nx; chown -h {P} /tmp/.nx", {}),
    ("container: link to the user's precious directory", f"ln -s {HOME}/precious /tmp/.nx; chown -h {P} /tmp/.nx", {}),
    ("container: FIFO", "mkfifo -m 0666 /tmp/.nx", {}),
    ("container: regular file", "echo data > /tmp/.nx", {}),
    ("container: a socket", "stale /tmp/.nx; chown 0 /tmp/.nx", {}),
    ("container 0777 root", "install -d -m 0777 /tmp/.nx", {}),
    ("container 0000 root", "install -d -m 0000 /tmp/.nx", {}),
    ("container 0700 root", "install -d -m 0700 /tmp/.nx", {}),
    (
        "per-user directory planted by a peer",
        f"install -d -m 1777 /tmp/.nx; install -d -m 0777 -o {P} /tmp/.nx/{U}",
        {},
    ),
    ("per-user directory 0755", f"install -d -m 1777 /tmp/.nx; install -d -m 0755 -o {U} /tmp/.nx/{U}", {}),
    ("per-user directory is a file", f"install -d -m 1777 /tmp/.nx; echo x > /tmp/.nx/{U}; chown {U} /tmp/.nx/{U}", {}),
    (
        "per-user directory: a peer's link to the user's precious",
        f"install -d -m 1777 /tmp/.nx; ln -s {HOME}/precious /tmp/.nx/{U}; chown -h {P} /tmp/.nx/{U}",
        {},
    ),
    (
        "sockets: the user's link to precious",
        f"install -d -m 1777 /tmp/.nx; install -d -m 0700 -o {U} /tmp/.nx/{U}; ln -s {HOME}/precious "
        f"{SOCKS}; chown -h {U} {SOCKS}",
        {},
    ),
    (
        "sockets: FIFO",
        f"install -d -m 1777 /tmp/.nx; install -d -m 0700 -o {U} /tmp/.nx/{U}; mkfifo {SOCKS}; chown {U} {SOCKS}",
        {},
    ),
    (
        "sockets: unreadable 0000",
        f"install -d -m 1777 /tmp/.nx; install -d -m 0700 -o {U} /tmp/.nx/{U}; install -d -m 0000 -o {U} {SOCKS}",
        {},
    ),
    (
        "native cache planted by a peer",
        f"install -d -m 1777 /tmp/.nx; install -d -m 0700 -o {U} /tmp/.nx/{U}; install -d -m 0777 -o {P} "
        f"/tmp/.nx/{U}/native-cache",
        {},
    ),
    (
        "native cache: link to precious",
        f"install -d -m 1777 /tmp/.nx; install -d -m 0700 -o {U} /tmp/.nx/{U}; ln -s {HOME}/precious "
        f"/tmp/.nx/{U}/native-cache; chown -h {U} /tmp/.nx/{U}/native-cache",
        {},
    ),
    (
        "dead per-run directory with a link to precious inside",
        f"install -d -m 1777 /tmp/.nx; install -d -m 0700 -o {U} /tmp/.nx/{U} {SOCKS} {RUN}; stale {RUN}/d.sock; ln -s "
        f"{HOME}/precious/file {RUN}/fp1-1.sock; chown -h {U} {RUN}/fp1-1.sock; touch -h -d 2000-01-01 {RUN}",
        {},
    ),
    (
        "a peer's per-run directory among the user's",
        f"install -d -m 1777 /tmp/.nx; install -d -m 0700 -o {U} /tmp/.nx/{U} {SOCKS}; install -d -m 0777 -o {P} "
        f"{RUN}; touch -d 2000-01-01 {RUN}",
        {},
    ),
    (
        "HOME beneath a peer's directory",
        f"install -d -m 1777 -o {P} /tmp/.nx; install -d -m 0755 -o {P} /home/peer; install -d -o {U} /home/peer/u",
        {"HOME": "/home/peer/u"},
    ),
    (
        "HOME beneath a world-writable directory",
        f"install -d -m 1777 -o {P} /tmp/.nx; install -d -m 0777 /home/ww; install -d -o {U} /home/ww/u",
        {"HOME": "/home/ww/u"},
    ),
    ("/tmp 0777 without sticky", "chmod 0777 /tmp", {}),
    ("/tmp owned by a peer", f"chown {P} /tmp", {}),
    ("/tmp read-only", "install -d -m 1777 /tmp/.nx; mount -o remount,ro /tmp", {}),
    ("NX_SOCKET_DIR=/tmp", "", {"NX_SOCKET_DIR": "/tmp"}),
    ("NX_SOCKET_DIR relative with ..", "", {"NX_SOCKET_DIR": "../x/../socks/"}),
    ("NX_SOCKET_DIR through a symlink alias of /tmp", "ln -s /tmp /tmp/alias", {"NX_SOCKET_DIR": "/tmp/alias"}),
    ("NX_SOCKET_DIR with a newline and an escape", "", {"NX_SOCKET_DIR": "/tmp/a\nb\x1b[31m"}),
    ("NX_SOCKET_DIR of 5,000 characters", "", {"NX_SOCKET_DIR": "/tmp/" + "x" * 5000}),
    ("NX_SOCKET_DIR with glob characters and ~", "", {"NX_SOCKET_DIR": "~/nx*[?]{a}"}),
    ("NX_SOCKET_DIR under an unreadable level", "install -d -m 0700 /tmp/locked", {"NX_SOCKET_DIR": "/tmp/locked/s"}),
    ("a workspace name that is not UTF-8", f"mv {WS} {HOME}/{NOT_UTF8}; ln -s {HOME}/{NOT_UTF8} {WS}", {}),
    (
        "a very long workspace path",
        f"D={HOME}/$(printf 'w%.0s' $(seq 200))/$(printf 'v%.0s' $(seq 200)); install -d -o {U} $D; cp -a {WS}/. $D/; "
        f"rm -rf {WS}; ln -s $D {WS}",
        {},
    ),
    (".env is a FIFO", f"mkfifo {WS}/.env; chown {U} {WS}/.env", {}),
    (
        ".env with binary garbage",
        f"head -c 4096 /dev/urandom > {WS}/.env; printf '\\nNX_SOCKET_DIR=/tmp/from-env\\n' >> "
        f"{WS}/.env; chown {U} {WS}/.env",
        {},
    ),
    (
        "package.json of nx is a FIFO",
        f"rm {WS}/node_modules/nx; install -d -o {U} {WS}/node_modules/nx; mkfifo {WS}/node_modules/nx/package.json",
        {},
    ),
    (
        "daemon files are FIFOs and links",
        f"install -d -m 0700 -o {U} {WS}/.nx/workspace-data/d; mkfifo {WS}/.nx/workspace-data/d/server-process.json; "
        f"ln -s {HOME}/precious/file {WS}/.nx/workspace-data/d/disabled; chown -R -h {U} {WS}/.nx",
        {},
    ),
    (
        "legacy leftovers among a peer's and links",
        f"install -d -o {U} /tmp/0123456789abcdef0123; stale /tmp/0123456789abcdef0123/d.sock; touch -d 2000-01-01 "
        "/tmp/0123456789abcdef0123; "
        f"install -d -m 0777 -o {P} /tmp/aaaaaaaaaaaaaaaaaaaa; ln -s {HOME}/precious /tmp/bbbbbbbbbbbbbbbbbbbb; chown "
        f"-h {P} /tmp/bbbbbbbbbbbbbbbbbbbb; "
        f"ln -s {HOME}/precious /tmp/nx-native-file-cache-1234567; chown -h {U} /tmp/nx-native-file-cache-1234567",
        {},
    ),
    ("TMPDIR names a missing directory", "", {"TMPDIR": "/tmp/claude"}),
    ("TMPDIR is a FIFO", "mkfifo -m 0666 /tmp/fifo-tmp", {"TMPDIR": "/tmp/fifo-tmp"}),
]


def _script(setup: str, env: t.Mapping[str, str | None], teardown: str = "") -> tuple[str, str]:
    """The state, then every command in turn between snapshots, each in its own process.

    Each runs as ``python -m nxsock`` would, as the user (or root) in the state's environment and working
    directory, but forked from a process of that same user, environment and directory that imported nxsock
    once (``command_server.py``): the imports a fresh interpreter pays at every one of the matrix's thousand
    runs are paid twice a state.
    """
    nx = install_nx("24.0.6")
    python, pylib = stage_nxsock()
    words = env_words(env, HOME)
    server = stage_oracle(COMMAND_SERVER)
    commands = [{"args": args, "stdin": stdin, "out": f"/mnt/out.{i}", "err": f"/mnt/err.{i}"}
                for i, (_, args, _, _, stdin) in enumerate(COMMANDS)]
    config = shlex.quote(json.dumps({"commands": commands, "limit": TIME_LIMIT}))
    user = f"{as_user_prefix(U, env)} PYTHONPATH={pylib} {python}"
    root = f"env -i {words} PYTHONPATH={pylib} {python}"
    lines = [
        "mount -t tmpfs -o mode=1777 tmpfs /tmp; mount -t tmpfs -o mode=0755 tmpfs /home; mount -t tmpfs tmpfs /mnt",
        f"mount -t tmpfs tmpfs /etc/tmpfiles.d; {STALE}",
        f"install -d -o {U} -g {U} {HOME} {WS}/node_modules; echo '{{}}' > {WS}/nx.json; ln -s {nx}/node_modules/nx "
        f"{WS}/node_modules/nx; chown -R {U} {WS}",
        PRECIOUS,
        setup,
        f"cd {WS} 2>/dev/null || cd {HOME}",
        f"printf '%s' {config} > /mnt/commands.json; chmod 0644 /mnt/commands.json",
        f"mkfifo -m 0600 /mnt/ask-user /mnt/told-user /mnt/ask-root /mnt/told-root; chown {U} "
        "/mnt/ask-user /mnt/told-user",
        f"{user} {server} /mnt/commands.json /mnt/ask-user /mnt/told-user </dev/null >/dev/null "
        "2>/mnt/server-user.err &",
        f"{root} {server} /mnt/commands.json /mnt/ask-root /mnt/told-root </dev/null >/dev/null "
        "2>/mnt/server-root.err &",
        "exec 4>/mnt/ask-user 5</mnt/told-user 6>/mnt/ask-root 7</mnt/told-root",
    ]
    snapshot = (
        "find /tmp /home -xdev -path '*/node_modules/*' -prune -o -printf '%y %U %G %m %i %s %l "
        "%p\\n' 2>/dev/null | sort"
    )
    for i, (_, _, _, as_root, _) in enumerate(COMMANDS):
        ask, told = (6, 7) if as_root else (4, 5)
        lines += [
            f"echo '<<<TREE {i}'; {snapshot}",
            f"echo {i} >&{ask}; read -r rc ms <&{told} || {{ rc=-1; ms=0; cat /mnt/server-*.err >&2; }}",
            f"echo '<<<OUT {i}'; cat /mnt/out.{i} 2>/dev/null",
            f"echo '<<<RC {i} '$rc' '$ms",
        ]
    lines.append(f"echo '<<<TREE {len(COMMANDS)}'; {snapshot}")
    lines.append("exec 4>&- 5<&- 6>&- 7<&-; wait")
    lines += [f"echo '<<<ERR {i}'; cat /mnt/err.{i}" for i in range(len(COMMANDS))]
    lines.append(teardown)
    return "\n".join(lines), user


def _entries(tree: str) -> dict[str, tuple[str, ...]]:
    found = {}
    for line in tree.splitlines():
        fields = line.split(" ", 7)
        if len(fields) == 8:
            found[fields[7]] = tuple(fields[:7])
    return found


def _violations_of_mutation(before: str, after: str, as_root: bool) -> list[str]:
    """A mutating command may change only the user's own entries (root: /tmp/.nx itself), never anything precious."""
    old, new = _entries(before), _entries(after)
    problems = []
    for path in sorted(old.keys() | new.keys()):
        a, b = old.get(path), new.get(path)
        if a == b:
            continue
        if a and b and a[0] == "d" and a[:5] == b[:5] and a[6] == b[6]:
            continue  # a directory whose size moved with its entries
        if "precious" in path:
            problems.append(f"precious {path} changed: {a} -> {b}")
        elif as_root:
            if path != "/tmp/.nx" or (b is not None and b[:4] != ("d", "0", "0", "1777")):
                problems.append(f"root changed {path}: {a} -> {b}")
        elif (a and a[1] != str(U)) or (b and b[1] != str(U) and path != "/tmp/.nx"):
            problems.append(f"{path} is not the user's: {a} -> {b}")
    return problems


def run_matrix_state(setup: str, env: t.Mapping[str, str | None], teardown: str = "") -> tuple[list[str], int]:
    """Run every command in one state; return the violations and the number of cells run."""
    import subprocess

    script, _ = _script(setup, env, teardown)
    proc = subprocess.run(
        ["unshare", "-m", "--propagation", "private", "bash", "-c", script], cwd="/", capture_output=True, timeout=600
    )
    text = proc.stdout.decode("utf-8", "replace")
    sections: dict[tuple[str, int], str] = {}
    for chunk in text.split("<<<")[1:]:
        head, _, body = chunk.partition("\n")
        kind, _, rest = head.partition(" ")
        index = int(rest.split()[0]) if rest.split() else -1
        sections[(kind, index)] = body if kind != "RC" else rest
    violations = []
    for i, (label, args, mutates, as_root, _) in enumerate(COMMANDS):
        rc_fields = sections.get(("RC", i), f"{i} -1 0").split()
        rc, elapsed = int(rc_fields[1]), int(rc_fields[2])
        out, err = sections.get(("OUT", i), ""), sections.get(("ERR", i), "")
        before, after = sections.get(("TREE", i), ""), sections.get(("TREE", i + 1), "")
        where = f"[{label}]"
        if rc == 124:
            violations.append(f"{where} hung: killed after {TIME_LIMIT}s")
        elif rc not in EXIT_CODES:
            violations.append(f"{where} exit {rc}: {err.strip()[-300:]}")
        if "Traceback" in err or "Traceback" in out:
            violations.append(f"{where} traceback: {err.strip()[-300:]}")
        if "--json" in args or "--tmpfiles" in args:
            if "--json" in args:
                try:
                    parsed(out, args)
                except ValueError:
                    violations.append(f"{where} not one JSON document: {out[:200]!r}")
                except SchemaMismatch as mismatch:
                    violations.append(f"{where} {mismatch}")
        if not mutates and before != after:
            changed = sorted(set(before.splitlines()) ^ set(after.splitlines()))[:4]
            violations.append(f"{where} read-only command changed the tree: {changed}")
        if mutates:
            violations += [f"{where} {v}" for v in _violations_of_mutation(before, after, as_root)]
        if elapsed > TIME_LIMIT * 1000:
            violations.append(f"{where} took {elapsed} ms")
    violations += _disagreements({label: int(sections.get(("RC", i), f"{i} -1 0").split()[1])
                                  for i, (label, *_) in enumerate(COMMANDS)})
    return violations, len(COMMANDS)


def _disagreements(codes: t.Mapping[str, int]) -> list[str]:
    """One verdict across commands (the man page's EXIT STATUS BY STATE): where ``paths`` says Nx can establish no
    socket directory (73) or refuses its configuration (78), ``doctor`` says Nx fails (1), in text and JSON alike."""
    if codes["paths --json"] in (73, 78) and (codes["doctor --json"], codes["doctor"]) != (1, 1):
        return [f"paths exits {codes['paths --json']} but doctor {codes['doctor --json']} (text {codes['doctor']})"]
    return []


@pytest.mark.parametrize(("setup", "env"), [pytest.param(s, e, id=n) for n, s, e in STATES])
def test_every_command_keeps_its_promises_in_this_state(setup: str, env: dict[str, str | None]) -> None:
    violations, cells = run_matrix_state(setup, env)
    assert cells == len(COMMANDS)
    assert violations == []


@pytest.mark.tool("bindfs", "/dev/fuse")
@pytest.mark.parametrize("where", [f"/tmp/.nx/{U}", SOCKS], ids=["per-user-root", "configured"])
def test_every_command_keeps_its_promises_on_a_mount_that_ignores_modes(where: str) -> None:
    """bindfs forcing 0777: a chmod to 0700 never sticks, so Nx must refuse the level as not tightenable."""
    setup = (
        f"install -d -m 1777 /tmp/.nx; install -d -m 0700 -o {U} /tmp/.nx/{U}; install -d -m 0700 -o {U} "
        f"{where} /tmp/bf-source; "
        f"bindfs -o allow_other -p 0777 -u {U} /tmp/bf-source {where}"
    )
    violations, _ = run_matrix_state(setup, {}, teardown=f"fusermount -u {where} || umount -l {where}")
    assert violations == []


def test_the_matrix_is_at_least_forty_states() -> None:
    assert len(STATES) >= 40
