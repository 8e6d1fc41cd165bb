"""The acting guards change only a real directory of one's own, through its descriptor."""
from __future__ import annotations

import os
import stat
import typing as t

from nxsock.act.acting import ensure_private_dir, ensure_shared_root
from nxsock.core.guards import Action


def mode_of(path: t.Any) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_a_missing_private_dir_is_created_0700(tmp_path: t.Any) -> None:
    target = tmp_path / "p"
    outcome = ensure_private_dir(str(target))
    assert outcome == (None, (Action("create", str(target), 0o700),))
    assert mode_of(target) == 0o700


def test_an_open_private_dir_is_tightened_and_the_mode_read_back(tmp_path: t.Any) -> None:
    target = tmp_path / "p"
    target.mkdir(mode=0o755)
    target.chmod(0o755)
    outcome = ensure_private_dir(str(target))
    assert outcome == (None, (Action("tighten", str(target), 0o700),))
    assert mode_of(target) == 0o700


def test_a_planted_symlink_is_refused_and_its_target_untouched(tmp_path: t.Any) -> None:
    precious = tmp_path / "precious"
    precious.mkdir(mode=0o755)
    precious.chmod(0o755)
    link = tmp_path / "p"
    link.symlink_to(precious)
    outcome = ensure_private_dir(str(link))
    assert outcome.refusal is not None and outcome.refusal.kind == "not-a-directory" and outcome.refusal.symlink
    assert mode_of(precious) == 0o755 and link.is_symlink()


def test_a_fifo_never_blocks_and_is_refused(tmp_path: t.Any) -> None:
    fifo = tmp_path / "p"
    os.mkfifo(fifo)
    outcome = ensure_private_dir(str(fifo))
    assert outcome.refusal is not None and outcome.refusal.kind == "not-a-directory"
    assert outcome.refusal.symlink is False


def test_a_new_shared_root_is_sticky_and_world_writable(tmp_path: t.Any) -> None:
    target = tmp_path / ".nx"
    assert ensure_shared_root(str(target)) == (None, (Action("create", str(target), 0o1777),))
    assert mode_of(target) == 0o1777


def test_an_existing_shared_root_is_judged_never_changed(tmp_path: t.Any) -> None:
    target = tmp_path / ".nx"
    target.mkdir()
    target.chmod(0o777)
    outcome = ensure_shared_root(str(target))
    assert outcome.refusal is not None and outcome.refusal.kind == "peer-writable-not-sticky"
    assert outcome.changes == () and mode_of(target) == 0o777
