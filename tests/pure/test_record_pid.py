"""A pid is stopped only when it comes from a record no other user could write: its levels, and the record itself."""
from __future__ import annotations

import pytest
from conftest import PEER, USER, environment, machine, mine

import nxsock.core.wording as wording
from nxsock.core.fsview import Entry
from nxsock.core.remedy import Remedy, StopProcess, Withheld, vet
from nxsock.core.resolver import resolve

DATA = "/home/ada/acme/.nx/workspace-data"
RECORD = f"{DATA}/d/server-process.json"


def _verdict(record: Entry) -> Remedy | Withheld:
    view = machine({"/home/ada/acme/.nx": mine(0o755), DATA: mine(0o755), f"{DATA}/d": mine(0o755), RECORD: record})
    policy = wording.context_for(resolve(environment(), view), view).policy
    return vet(Remedy((StopProcess(pid=4242, owner=USER),), "x"), policy)


def test_a_record_of_your_own_names_the_pid_to_stop() -> None:
    assert isinstance(_verdict(Entry("file", USER, USER, 0o644)), Remedy)


@pytest.mark.parametrize(("record", "why"), [
    (Entry("file", USER, USER, 0o666), "writable by other users"),  # any user could write another pid into it
    (Entry("file", PEER, PEER, 0o644), f"belongs to uid {PEER}"),
    (Entry("link", USER, USER, 0o777), "not a regular file"),
])
def test_a_record_another_user_could_write_stops_nothing(record: Entry, why: str) -> None:
    verdict = _verdict(record)
    assert isinstance(verdict, Withheld) and why in verdict.reason, verdict
