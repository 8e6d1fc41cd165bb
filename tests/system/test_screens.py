"""What a person reads, on a real terminal: tmux panes 80 and 200 columns wide, and a pipe.

Each command runs as the test uid in a private mount namespace over one
fixed state, once in each place.  The pipe's text is kept as golden text
(``tests/golden/<command>.txt``), the 80-column screen too
(``<command>.80.screen``): what the terminal folds for the eye, a copy gets
whole, because nxsock never breaks a line itself.  Names planted with
terminal escapes and rich markup are shown escaped, never obeyed.
Regenerate the golden files with ``NXSOCK_UPDATE_GOLDEN=1``.
"""

from __future__ import annotations

import os
import platform
import shlex
import subprocess
import typing as t
from pathlib import Path

import pytest
from harness import USER, as_user_prefix, stage_nxsock

pytestmark = [
    pytest.mark.tool("tmux"),
]

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
HOME = f"/home/u{USER}"
# Not under HOME: the socket and cache names hash the workspace's path, and the golden text must not depend
# on which test uids a run was given (NXSOCK_TEST_UID_BASE).
WS = "/home/ws"
BINDING_DIR = f"{WS}/node_modules/@nx/nx-linux-x64-gnu"
OLD = "202001010000"  # a per-run directory's mtime: long dead, past reset's minute of grace

#: One state for every screen: Nx 24.0.6 installed with a binding, its cache entry fresh, an old version's entry,
#: two dead per-run directories, a disabled marker with a two-line reason, and the daemon's last error.
STATE = f"""
mount -t tmpfs tmpfs /etc/tmpfiles.d
install -d -o {USER} -g {USER} {WS} {WS}/node_modules/nx {BINDING_DIR}
echo '{{}}' > {WS}/nx.json
echo '{{"name": "nx", "version": "24.0.6"}}' > {WS}/node_modules/nx/package.json
head -c 4096 /dev/zero > {BINDING_DIR}/nx.linux-x64-gnu.node
touch -t 202401010000 {BINDING_DIR}/nx.linux-x64-gnu.node
install -d -m 1777 -o {USER} -g {USER} /tmp/.nx
install -d -m 0700 -o {USER} -g {USER} /tmp/.nx/{USER} /tmp/.nx/{USER}/sockets /tmp/.nx/{USER}/native-cache \
    /tmp/.nx/{USER}/native-cache/24.0.6 /tmp/.nx/{USER}/native-cache/23.3.2
install -d -m 0700 -o {USER} -g {USER} /tmp/.nx/{USER}/sockets/0123456789abcdef0123 \\
    /tmp/.nx/{USER}/sockets/fedcba9876543210fedc
touch -t {OLD} /tmp/.nx/{USER}/sockets/0123456789abcdef0123 /tmp/.nx/{USER}/sockets/fedcba9876543210fedc
install -d -o {USER} -g {USER} {WS}/.nx {WS}/.nx/workspace-data {WS}/.nx/workspace-data/d
printf '%s\\n' 'Daemon process terminated and closed the connection' \\
    'Please rerun the command, which will restart the daemon.' \
    > {WS}/.nx/workspace-data/d/disabled
printf '%s\\n' 'Error: listen EADDRINUSE: address already in use {WS}/d.sock' '' 'Messages from the log:' \\
    '[NX Daemon Server] - Started' '' '' 'More information: {WS}/.nx/workspace-data/d/daemon.log' \
    > {WS}/.nx/workspace-data/d/daemon-error.log
chown -R {USER}:{USER} {WS}/.nx
"""

#: The same entry names every run: the cache key hashes the binding's path, which the state fixes.
ENTRIES = f"""
cd /tmp/.nx/{USER}/native-cache
key=$(python3 -c 'import hashlib,sys; print(hashlib.sha256(sys.argv[1].encode()).hexdigest()[:12])' \
      {BINDING_DIR}/nx.linux-x64-gnu.node)
install -m 0644 -o {USER} -g {USER} {BINDING_DIR}/nx.linux-x64-gnu.node 24.0.6/24.0.6-$key-nx.linux-x64-gnu.node
head -c 2048 /dev/zero > 23.3.2/23.3.2-$key-nx.linux-x64-gnu.node
chown {USER}:{USER} 23.3.2/23.3.2-$key-nx.linux-x64-gnu.node
touch -t 202501010000 24.0.6/24.0.6-$key-nx.linux-x64-gnu.node
"""

COMMANDS = {
    "paths": ["paths"],
    "doctor": ["doctor"],
    "cache-list": ["cache", "list"],
    "reset": ["reset", "--daemon-marker"],
}


class Views(t.NamedTuple):
    pipe: str
    screens: dict[int, str]  # width → the pane as shown
    joined: dict[int, str]  # width → the pane with the terminal's own folds joined (what a copy gets)
    codes: dict[str, int]  # "pipe" / "80" / "200" → exit code


def _nxsock(args: t.Sequence[str], env: t.Mapping[str, str] | None = None) -> str:
    python, pythonpath = stage_nxsock()
    return (f"{as_user_prefix(USER, {'TERM': 'xterm-256color', **(env or {})})} PYTHONPATH={shlex.quote(pythonpath)} "
            f"PYTHONDONTWRITEBYTECODE=1 {shlex.quote(python)} -m nxsock {' '.join(map(shlex.quote, args))}")


def show(setup: str, args: t.Sequence[str], widths: t.Sequence[int] = (80, 200),
         env: t.Mapping[str, str] | None = None) -> Views:
    """Run ``nxsock ARGS`` after *setup* (fresh each time) in a pipe and in a tmux pane of each width."""
    command = _nxsock(args, env)
    q = shlex.quote
    runs = [f"""
{setup}
cd {WS}
{command} 2>&1 | cat > /tmp/.out; echo "${{PIPESTATUS[0]}}" > /tmp/.rc
echo '<<<PIPE'; cat /tmp/.out; echo '<<<RC pipe' $(cat /tmp/.rc)
"""]
    for width in widths:
        pane = f"cd {WS}; {command}; echo $? > /tmp/.rc-{width}; sleep 60"
        tmux = f"tmux -S /tmp/.tmux-{width} -f /dev/null"
        runs.append(f"""
{setup}
{tmux} new-session -d -x {width} -y 150 {q(pane)}
for i in $(seq 400); do [ -s /tmp/.rc-{width} ] && break; sleep 0.05; done
echo '<<<SCREEN {width}'; {tmux} capture-pane -p -S - -E - -t 0
echo '<<<JOINED {width}'; {tmux} capture-pane -p -J -S - -E - -t 0
echo '<<<RC {width}' $(cat /tmp/.rc-{width})
{tmux} kill-server
""")
    sections: list[str] = []
    for body in runs:  # each view in its own namespace: the state is built anew, as a reset changes it
        script = f"set -e\nmount -t tmpfs -o mode=1777 tmpfs /tmp\nmount -t tmpfs -o mode=0755 tmpfs /home\n" \
                 f"install -d -o {USER} -g {USER} {HOME}\n{body}"
        proc = subprocess.run(["unshare", "-m", "--propagation", "private", "bash", "-c", script], cwd="/",
                              capture_output=True, stdin=subprocess.DEVNULL, timeout=90)
        assert proc.returncode == 0, proc.stderr.decode(errors="replace")
        sections += proc.stdout.decode("utf-8", "replace").split("<<<")[1:]
    pipe, screens, joined, codes = "", {}, {}, {}
    for section in sections:
        head, _, body = section.partition("\n")
        kind, _, name = head.partition(" ")
        if kind == "PIPE":
            pipe = body
        elif kind == "SCREEN":
            screens[int(name)] = _trim(body)
        elif kind == "JOINED":
            joined[int(name)] = _trim(body)
        elif kind == "RC":
            where, code = name.split()
            codes[where] = int(code)
    return Views(pipe, screens, joined, codes)


def _trim(screen: str) -> str:
    """The pane without trailing blanks on each line and without the empty rows below the output."""
    return "\n".join(line.rstrip() for line in screen.rstrip("\n").splitlines()).rstrip("\n") + "\n"


def _templated(text: str) -> str:
    return text.replace(str(USER), "<uid>")


def _golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("NXSOCK_UPDATE_GOLDEN"):
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(_templated(text))
    assert _templated(text) == path.read_text(), f"{name} differs from the golden text"


@pytest.mark.skipif(platform.machine() != "x86_64", reason="the fixed state plants the linux-x64-gnu binding")
@pytest.mark.skipif(len(str(USER)) != 4, reason="the golden lengths are for a four-digit test uid")
@pytest.mark.parametrize("name", list(COMMANDS))
def test_the_same_text_at_80_and_200_columns_and_in_a_pipe(name: str) -> None:
    """No path or command is cut by nxsock: joined, each pane is the pipe's text (the golden text) with its prose
    wrapped at word boundaries on a terminal — the same words in the same order — and only a word longer than the
    room left (a path, a command, a table's path column) runs past the edge for the terminal to fold."""
    # NX_DAEMON=true: the daemon's verdict is the state's (its disabled marker), not whether the host is a container.
    views = show(STATE + ENTRIES, COMMANDS[name], env={"NX_DAEMON": "true"})
    assert len(set(views.codes.values())) == 1, views.codes
    _golden(f"{name}.txt", views.pipe)
    _golden(f"{name}.80.screen", views.screens[80])
    for width in (80, 200):
        assert all(len(line) <= width for line in views.screens[width].splitlines())
        assert views.joined[width].split() == views.pipe.split(), (
            f"the {width}-column pane has other words than the pipe"
        )
        for line in views.joined[width].splitlines():  # past the edge only for a word that cannot fit a line
            indent = len(line) - len(line.lstrip())
            assert (
                len(line) <= width
                or max(map(len, line.split())) > width - indent - 12
                or line.lstrip().startswith(("fix", "inside", "socket ", "daemon ", "forked ", "plugin ", "console "))
            ), line


def test_a_path_longer_than_the_terminal_is_folded_by_the_terminal_and_copied_whole() -> None:
    """At 80 columns a 90-character socket path wraps on screen, and the copied text has it on one line."""
    configured = "/tmp/" + "deep-directory-name-" * 4 + "nx"
    setup = f"install -d -o {USER} -g {USER} {WS}; echo '{{}}' > {WS}/nx.json"
    views = show(setup, ["paths"], widths=(80,), env={"NX_SOCKET_DIR": configured})
    console = next(line for line in views.pipe.splitlines() if line.startswith("console"))
    assert len(console) > 80 and f"{configured}/nx-console.sock" in console
    assert console in views.joined[80].splitlines()
    assert console not in views.screens[80].splitlines()  # the terminal folded it for the eye


# -- hostile names on a real pty ---------------------------------------------------------------

ESC_NAME = "24.0.6-aaaaaaaaaaaa-nx.\x1b]0;OWNED\x07\x1b]8;;http:evil\x07click\x1b]8;;\x07\x9b31m.node"
MARKUP_NAME = "24.0.6-bbbbbbbbbbbb-[bold red]x[link=http:evil]y.node"
RECORD = ('{"processId": 1, "socketPath": "/tmp/[link=http:evil]x[/link]/[bold]d.sock\\u001b[2J", '
          '"nxVersion": "24.0.6\\u001b]0;T\\u0007"}')
PLANTED = f"""
install -d -m 1777 /tmp/.nx
install -d -m 0700 -o {USER} -g {USER} /tmp/.nx/{USER} /tmp/.nx/{USER}/native-cache /tmp/.nx/{USER}/native-cache/24.0.6
touch /tmp/.nx/{USER}/native-cache/24.0.6/{shlex.quote(ESC_NAME)} \\
    /tmp/.nx/{USER}/native-cache/24.0.6/{shlex.quote(MARKUP_NAME)}
chown {USER}:{USER} /tmp/.nx/{USER}/native-cache/24.0.6/*
install -d -o {USER} -g {USER} {WS} {WS}/.nx {WS}/.nx/workspace-data {WS}/.nx/workspace-data/d {WS}/node_modules/nx
echo '{{}}' > {WS}/nx.json
echo '{{"version": "24.0.6"}}' > {WS}/node_modules/nx/package.json
printf 'reason one\\n\\033]0;TITLE\\007 two \\205 \\033[2J\\n' > {WS}/.nx/workspace-data/d/disabled
printf '%s' {shlex.quote(RECORD)} > {WS}/.nx/workspace-data/d/server-process.json
chown -R {USER}:{USER} {WS}/.nx
"""


@pytest.mark.parametrize(
    ("args", "shown"),
    [
        (["cache", "list"], ["\\x1b]0;OWNED\\x07\\x1b]8;;http:evil\\x07click", "[bold red]x[link=http:evil]y"]),
        (["paths"], ["/tmp/[link=http:evil]x[/link]/[bold]d.sock\\x1b[2J"]),
        (["doctor"], ["\\x1b]0;TITLE\\x07 two \ufffd \\x1b[2J"]),  # doctor reads text as Node would: U+FFFD
        (["reset", "--daemon-marker"], ["\\x1b]0;TITLE\\x07 two \\x85 \\x1b[2J"]),
    ],
    ids=["cache-list", "paths", "doctor", "reset-marker"],
)
def test_planted_escapes_and_markup_are_shown_escaped_never_obeyed(args: list[str], shown: list[str]) -> None:
    """On a pty: no OSC (title, link) reaches the terminal, markup is shown as typed, and the name is visible."""
    views = show(PLANTED, args, widths=(200,))
    assert views.codes["200"] < 70 and views.codes["pipe"] < 70, views
    for text in shown:
        assert text in views.joined[200], views.joined[200]
        assert text in views.pipe
    assert "\x1b" not in views.pipe and "\x9b" not in views.pipe and "\x07" not in views.pipe
    assert "OWNED" not in _window_title(PLANTED, args)


#: The installed version, as the workspace's package.json says it, holding a title OSC and markup: not a version, so
#: prune removes nothing of another release by it, and paths says it, escaped.
VERSION_PLANTED = f"""
install -d -m 1777 /tmp/.nx
install -d -m 0700 -o {USER} -g {USER} /tmp/.nx/{USER} /tmp/.nx/{USER}/native-cache /tmp/.nx/{USER}/native-cache/23.3.2
touch /tmp/.nx/{USER}/native-cache/23.3.2/23.3.2-aaaaaaaaaaaa-nx.linux-x64-gnu.node
chown {USER}:{USER} /tmp/.nx/{USER}/native-cache/23.3.2/*
install -d -o {USER} -g {USER} {WS} {WS}/node_modules/nx
echo '{{}}' > {WS}/nx.json
printf '%s' '{{"version": "24.0.6\\u001b]0;OWNED\\u0007[bold]v"}}' > {WS}/node_modules/nx/package.json
"""


def test_a_planted_version_is_shown_escaped_and_decides_nothing() -> None:
    """Finding 6's ``cache prune`` case, and issue 21's: a ``version`` that is not a version (here escapes and markup)
    decides nothing — ``cache prune`` keeps the other release's entry — and where it is said it is shown escaped."""
    views = show(VERSION_PLANTED, ["cache", "prune", "--dry-run"], widths=(200,))
    assert views.codes["200"] < 70 and views.codes["pipe"] < 70, views
    assert "Would remove 0 entries" in views.pipe, views.pipe
    assert "\x1b" not in views.pipe and "\x07" not in views.pipe
    said = show(VERSION_PLANTED, ["paths"], widths=(200,))
    assert "\\x1b]0;OWNED\\x07[bold]v" in said.pipe and "is not a version" in said.pipe, said.pipe
    assert "\x1b" not in said.pipe and "\x07" not in said.pipe
    assert "OWNED" not in _window_title(VERSION_PLANTED, ["paths"])


def _window_title(setup: str, args: t.Sequence[str]) -> str:
    """The pane's title after the run: an obeyed OSC 0 would have set it."""
    command = _nxsock(args)
    pane = f"cd {WS}; {command}; echo $? > /tmp/.rc; sleep 60"
    tmux = "tmux -S /tmp/.tmux-title -f /dev/null"
    script = f"""set -e
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs -o mode=0755 tmpfs /home
install -d -o {USER} -g {USER} {HOME}
{setup}
{tmux} new-session -d -x 200 -y 50 {shlex.quote(pane)}
for i in $(seq 400); do [ -s /tmp/.rc ] && break; sleep 0.05; done
{tmux} display-message -p -t 0 '#{{pane_title}}'
{tmux} kill-server
"""
    proc = subprocess.run(["unshare", "-m", "--propagation", "private", "bash", "-c", script], cwd="/",
                          capture_output=True, stdin=subprocess.DEVNULL, timeout=90)
    return proc.stdout.decode("utf-8", "replace")


def test_a_socket_dir_with_markup_brackets_is_shown_as_typed() -> None:
    """``NX_SOCKET_DIR=/tmp/[/x]/d.sock`` was a MarkupError; it is a path like any other."""
    setup = f"install -d -o {USER} -g {USER} {WS}; echo '{{}}' > {WS}/nx.json"
    views = show(setup, ["paths"], widths=(80,), env={"NX_SOCKET_DIR": "/tmp/[/x]/d.sock"})
    assert views.codes == {"pipe": 0, "80": 0}, views
    assert "Socket root: /tmp/[/x]/d.sock  [configured]" in views.pipe
    assert "/tmp/[/x]/d.sock/p<id>.sock" in views.joined[80]
