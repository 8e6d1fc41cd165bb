"""The guard that fails a system or oracle test leaving this process's test uids in the machine's /tmp/.nx (issue #20)
sees what such a leak leaves, and nothing of other uids: were it blind, a leak would come back silently."""
from __future__ import annotations

import os
from pathlib import Path

from conftest import machine_nx_of


def _names(uids: range, top: Path) -> set[str]:
    return {name for name, _, _ in machine_nx_of(uids, top)}


def test_it_sees_the_directory_and_each_entry_owned_by_or_named_for_one_of_the_uids(tmp_path: Path) -> None:
    me, top = os.getuid(), tmp_path / ".nx"
    assert machine_nx_of(range(me, me + 1), top) == frozenset()  # nothing there: nothing to blame
    (top / str(me) / "native-cache").mkdir(parents=True)
    (top / "4242").mkdir()
    assert _names(range(me, me + 1), top) == {".", str(me), "4242"}  # all of it is owned by me
    assert _names(range(4242, 4243), top) == ({".", str(me), "4242"} if me == 4242 else {"4242"})  # named for 4242


def test_another_processs_uids_are_not_ours(tmp_path: Path) -> None:
    (tmp_path / ".nx" / "7301").mkdir(parents=True)
    assert machine_nx_of(range(os.getuid() + 24000, os.getuid() + 24100), tmp_path / ".nx") == frozenset()


def test_a_link_or_file_in_the_directorys_place_is_looked_at_never_listed(tmp_path: Path) -> None:
    me = os.getuid()
    (tmp_path / "real" / str(me)).mkdir(parents=True)
    (tmp_path / ".nx").symlink_to(tmp_path / "real")
    (tmp_path / "file").write_text("")
    assert _names(range(me, me + 1), tmp_path / ".nx") == {"."}
    assert _names(range(me, me + 1), tmp_path / "file") == {"."}
