"""One verdict across commands: ``paths``, ``check-root`` and ``doctor`` each judge one thing, and their exit codes for
each state are the table in the man page and the README (EXIT STATUS BY STATE).

- ``paths`` judges whether Nx can establish a socket directory at all (73) and whether its configuration is one Nx
  refuses (78);
- ``check-root`` judges the shared container ``/tmp/.nx`` for you (1 when Nx will not keep your sockets there);
- ``doctor`` judges whether Nx works for you (1 on an error; on a warning too with ``--strict``).

Each state is built for real, as another uid, in a private mount namespace.
"""

from __future__ import annotations

import re
import typing as t
from pathlib import Path

import pytest
from harness import PEER, USER, run_as_user

HOME = f"/home/u{USER}"
WS = f"{HOME}/ws"
MAKE_WS = f"install -d -o {USER} -g {USER} {WS}; echo '{{}}' > {WS}/nx.json; chown {USER} {WS}/nx.json"
REPO = Path(__file__).resolve().parents[2]


class State(t.NamedTuple):
    setup: str
    env: t.Mapping[str, str]
    codes: tuple[int, int, int, int]  # paths --json, check-root, doctor, doctor --strict


#: The states of the table, by the name the man page and the README give them.
STATES = {
    "container absent": State(MAKE_WS, {}, (0, 0, 0, 0)),
    "provisioned, no boot rule": State(f"{MAKE_WS}; install -d -m 1777 /tmp/.nx", {}, (0, 0, 0, 1)),
    "container a peer's": State(f"{MAKE_WS}; install -d -m 1777 -o {PEER} /tmp/.nx", {}, (0, 1, 0, 1)),
    "NX_SOCKET_DIR refused": State(f"{MAKE_WS}; install -d -m 1777 /tmp/.nx", {"NX_SOCKET_DIR": "/tmp"}, (78, 0, 1, 1)),
    "no socket directory": State(f"{MAKE_WS}; install -d -m 1777 -o {PEER} /tmp/.nx; chown root {WS}; chmod 0555 {WS}",
                                 {"HOME": "/nonexistent-home"}, (73, 1, 1, 1)),
}


def _codes(state: State) -> tuple[int, ...]:
    runs = [run_as_user(state.setup, args, env=dict(state.env), cwd=WS)
            for args in (["paths", "--json"], ["check-root"], ["doctor"], ["doctor", "--strict"])]
    for run in runs:
        assert "Traceback" not in run.stderr, run.stderr
    return tuple(run.returncode for run in runs)


@pytest.mark.parametrize("name", list(STATES))
def test_each_command_exits_as_the_table_says(name: str) -> None:
    assert _codes(STATES[name]) == STATES[name].codes


@pytest.mark.parametrize("document", ["man/nxsock.1", "README.md"])
def test_the_documents_carry_the_same_table(document: str) -> None:
    """The table the tests hold is the one users read: each state's row, its four codes in order."""
    text = (REPO / document).read_text().replace("\\-", "-").replace("\\(aq", "'")
    for name, state in STATES.items():
        row = re.search(rf"^\|? ?{re.escape(name)} ?\|(.*)$|^{re.escape(name)}\t(.*)$", text, re.M)
        assert row is not None, name
        assert [int(c) for c in re.findall(r"\d+", row[1] or row[2])] == list(state.codes), (name, row[0])
