"""The acting guards change only a real directory of one's own, through its descriptor."""
from __future__ import annotations

import os
import stat
import typing as t

from harness import PEER, USER

from nxsock.act.acting import ensure_private_dir, ensure_shared_root


def mode_of(path: t.Any) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_a_directory_of_another_uid_is_refused_unchanged(tmp_path: t.Any) -> None:
    target = tmp_path / "p"
    target.mkdir(mode=0o755)
    target.chmod(0o755)
    os.chown(target, PEER, PEER)
    outcome = ensure_private_dir(str(target))
    assert outcome.refusal is not None and (outcome.refusal.kind, outcome.refusal.uid) == ("foreign-owner", PEER)
    assert mode_of(target) == 0o755 and os.lstat(target).st_uid == PEER


def test_provisioning_hands_a_users_container_to_root_and_leaves_what_is_inside(tmp_path: t.Any) -> None:
    target = tmp_path / ".nx"
    target.mkdir()
    inner = target / str(USER)
    inner.mkdir(mode=0o700)
    os.chown(target, USER, USER)
    os.chown(inner, USER, USER)
    target.chmod(0o1777)
    outcome = ensure_shared_root(str(target), owner=(0, 0))
    assert outcome.refusal is None and [c.verb for c in outcome.changes] == ["chown"]
    assert (os.lstat(target).st_uid, mode_of(target)) == (0, 0o1777)
    assert (os.lstat(inner).st_uid, mode_of(inner)) == (USER, 0o700)
