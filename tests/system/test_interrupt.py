"""Ctrl-C, pressed on a real terminal: exit 130, and what was already done is said.

A tmux pane runs the command as the test uid in a private mount namespace;
``send-keys C-c`` delivers SIGINT to its foreground process group, exactly as
a person's Ctrl-C does.  ``reset`` and ``cache prune`` finish the entry at
hand, stop, and report every removal they made, in words and in JSON, and the
report matches what is left on disk.
"""

from __future__ import annotations

import shlex
import subprocess
import typing as t

import pytest
from documents import parsed
from harness import USER, as_user_prefix, stage_nxsock

from nxsock.output.render import REMOVAL_LINES

pytestmark = [
    pytest.mark.tool("tmux"),
]

HOME = f"/home/u{USER}"
WS = f"{HOME}/ws"
SOCKETS = f"/tmp/.nx/{USER}/sockets"
COUNT = 30000  # dead per-run directories: enough that a Ctrl-C lands while reset is removing them

MANY_DEAD = f"""
install -d -o {USER} -g {USER} {WS}; echo '{{}}' > {WS}/nx.json
install -d -m 1777 /tmp/.nx; install -d -m 0700 -o {USER} -g {USER} /tmp/.nx/{USER} {SOCKETS}
python3 - <<'PY'
import os
for n in range({COUNT}):
    path = "{SOCKETS}/%020x" % n
    os.mkdir(path, 0o700)
    os.chown(path, {USER}, {USER})
    os.utime(path, (1e9, 1e9))
PY
"""


class Stopped(t.NamedTuple):
    code: int
    output: str  # the pane (human) or the redirected stdout (--json)
    left: int  # per-run directories still there afterwards


def interrupt(
    setup: str, args: t.Sequence[str], *, when: str, json_out: bool = False, count_in: str = SOCKETS
) -> Stopped:
    """Run ``nxsock ARGS`` in a pane after *setup*; press Ctrl-C once the shell test *when* holds."""
    python, pythonpath = stage_nxsock()
    command = (f"{as_user_prefix(USER, {'TERM': 'xterm-256color'})} PYTHONPATH={shlex.quote(pythonpath)} "
               f"PYTHONDONTWRITEBYTECODE=1 {shlex.quote(python)} -m nxsock {' '.join(map(shlex.quote, args))}")
    redirect = " > /tmp/.json" if json_out else ""
    pane = f"cd {WS}; {command}{redirect}; echo $? > /tmp/.rc; sleep 60"
    tmux = "tmux -S /tmp/.tmux -f /tmp/.tmux.conf"
    script = f"""set -e
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs -o mode=0755 tmpfs /home
install -d -o {USER} -g {USER} {HOME}
echo 'set -g history-limit {COUNT * 2}' > /tmp/.tmux.conf
{setup}
{tmux} new-session -d -x 200 -y 100 {shlex.quote(f"bash -c {shlex.quote(pane)}")}
for i in $(seq 6000); do {when} && break; sleep 0.01; done
# Held where it is found (SIGSTOP), Ctrl-C typed and seen pending, then let go: the interrupt lands midway whatever
# the machine's speed, not after the work has raced to its end.
pid=$(pgrep -u {USER} -f -- '-m nxsock' | head -n 1 || true)
[ -n "$pid" ] && kill -STOP "$pid"
{tmux} send-keys -t 0 C-c
for i in $(seq 500); do
  [ -z "$pid" ] && break; grep -qE '^ShdPnd:[[:space:]]*[0-9a-f]*[2367abef]$' /proc/$pid/status && break; sleep 0.01
done
[ -n "$pid" ] && kill -CONT "$pid"
for i in $(seq 600); do [ -s /tmp/.rc ] && break; sleep 0.05; done
echo "<<<RC $(cat /tmp/.rc)"
echo "<<<LEFT $(find {count_in} -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)"
echo '<<<OUT'; if [ -e /tmp/.json ]; then cat /tmp/.json; else {tmux} capture-pane -p -J -S - -E - -t 0; fi
{tmux} kill-server
"""
    proc = subprocess.run(["unshare", "-m", "--propagation", "private", "bash", "-c", script], cwd="/",
                          capture_output=True, stdin=subprocess.DEVNULL, timeout=120)
    text = proc.stdout.decode("utf-8", "replace")
    sections = {s.split("\n", 1)[0].split(" ")[0]: s for s in text.split("<<<")[1:]}
    assert "RC" in sections, (text, proc.stderr.decode(errors="replace"))
    return Stopped(int(sections["RC"].split()[1]), sections.get("OUT", "").split("\n", 1)[-1],
                   int(sections["LEFT"].split()[1]))


#: Ctrl-C once reset has removed some, but far from all, of the dead directories.
MIDWAY = f"[ $(stat -c %h {SOCKETS}) -lt {COUNT + 2 - 200} ]"  # a directory's links count its subdirectories: O(1)


def test_an_interrupted_reset_reports_in_json_exactly_what_it_removed() -> None:
    stopped = interrupt(MANY_DEAD, ["reset", "--json"], when=MIDWAY, json_out=True)
    assert stopped.code == 130, stopped
    document = parsed(stopped.output, "reset")
    assert document["interrupted"] is True
    assert 0 < len(document["removed"]) < COUNT and stopped.left > 0
    assert len(document["removed"]) + stopped.left == COUNT  # every removal reported, none claimed that was not made


def test_an_interrupted_reset_says_so_in_words_and_exits_130() -> None:
    stopped = interrupt(MANY_DEAD, ["reset"], when=MIDWAY)
    assert stopped.code == 130, stopped
    assert "Aborted!" not in stopped.output and "nxsock: interrupted" in stopped.output
    summary = next(line for line in stopped.output.splitlines() if line.startswith("Interrupted: removed "))
    removed = int(summary.split()[2])
    assert removed + stopped.left == COUNT and stopped.left > 0, (summary, stopped.left)
    listed = stopped.output.count(f"  removed {SOCKETS}/")  # a flood is listed up to REMOVAL_LINES, the rest counted
    assert listed == min(removed, REMOVAL_LINES)
    assert removed <= REMOVAL_LINES or f"… and {removed - REMOVAL_LINES} more removed," in stopped.output


def test_ctrl_c_anywhere_else_is_130_not_click_aborted() -> None:
    """``doctor --explain -`` waits on stdin; Ctrl-C there is exit 130 with one line, not "Aborted!" and 1."""
    setup = f"install -d -o {USER} -g {USER} {WS}; echo '{{}}' > {WS}/nx.json"
    # once it is waiting for the paste: its prompt is on the pane
    waiting = "tmux -S /tmp/.tmux capture-pane -p -t 0 | grep -q 'Paste what Nx printed'"
    stopped = interrupt(setup, ["doctor", "--explain", "-"], when=waiting)
    assert stopped.code == 130, stopped
    assert "nxsock: interrupted" in stopped.output and "Aborted!" not in stopped.output
    assert "Traceback" not in stopped.output


CACHE = f"/tmp/.nx/{USER}/native-cache"
#: Many old-version cache entries of this user's, for prune to remove.
MANY_OLD_ENTRIES = f"""
install -d -o {USER} -g {USER} {WS} {WS}/node_modules/nx; echo '{{}}' > {WS}/nx.json
echo '{{"version": "24.0.6"}}' > {WS}/node_modules/nx/package.json
install -d -m 1777 /tmp/.nx; install -d -m 0700 -o {USER} -g {USER} /tmp/.nx/{USER} {CACHE} {CACHE}/23.3.2
python3 - <<'PY'
import os
for n in range({COUNT}):
    path = "{CACHE}/23.3.2/23.3.2-%012x-nx.linux-x64-gnu.node" % n
    os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o644))
    os.chown(path, {USER}, {USER})
PY
"""
PRUNE_MIDWAY = f"[ $(ls {CACHE}/23.3.2 | wc -l) -lt {COUNT - 200} ]"


def test_an_interrupted_prune_reports_what_it_removed() -> None:
    """Many old-version cache entries: Ctrl-C midway, and the JSON lists exactly the entries gone from disk."""
    stopped = interrupt(MANY_OLD_ENTRIES, ["cache", "prune", "--json"], when=PRUNE_MIDWAY, json_out=True,
                        count_in=f"{CACHE}/23.3.2")
    assert stopped.code == 130, stopped
    document = parsed(stopped.output, "cache-prune")
    assert document["interrupted"] is True and 0 < len(document["removed"]) < COUNT
    assert len(document["removed"]) + stopped.left == COUNT


def test_an_interrupted_prune_says_so_in_words_and_exits_130() -> None:
    """The human report of the same: the count removed matches the disk, the flood is listed up to its limit."""
    stopped = interrupt(MANY_OLD_ENTRIES, ["cache", "prune"], when=PRUNE_MIDWAY, count_in=f"{CACHE}/23.3.2")
    assert stopped.code == 130, stopped
    assert "Aborted!" not in stopped.output and "nxsock: interrupted" in stopped.output
    summary = next(line for line in stopped.output.splitlines() if line.startswith("Interrupted: removed "))
    removed = int(summary.split()[2])
    assert removed + stopped.left == COUNT and stopped.left > 0, (summary, stopped.left)
    assert stopped.output.count(f"  removed {CACHE}/23.3.2/") == min(removed, REMOVAL_LINES)
