"""The trust rule, on real directories: which levels it walks through, which it refuses, and why."""
from __future__ import annotations

import os
import typing as t

import pytest
from harness import PEER, USER

from nxsock.act.removal import MAX_DEPTH as REMOVAL_DEPTH
from nxsock.act.removal import remove_entry
from nxsock.core.trust import UntrustedPath, judge_path, judge_source, open_trusted_directory


def _kind(path: str, uid: int) -> str | None:
    try:
        os.close(open_trusted_directory(path, uid))
    except UntrustedPath as exc:
        return exc.refusal.kind
    return None


@pytest.fixture
def tree(tmp_path: t.Any) -> t.Any:
    """``tmp_path`` made root's and 0755, so only what a test plants beneath it decides."""
    os.chmod(tmp_path, 0o755)
    return tmp_path


class TestTheRule:
    def test_levels_of_root_and_the_user_pass(self, tree: t.Any) -> None:
        (tree / "mine").mkdir()
        os.chown(tree / "mine", USER, USER)
        assert _kind(str(tree / "mine"), USER) is None

    def test_a_level_of_another_user_is_refused_as_a_foreign_ancestor(self, tree: t.Any) -> None:
        (tree / "theirs" / "mine").mkdir(parents=True)
        os.chown(tree / "theirs", PEER, PEER)
        os.chown(tree / "theirs" / "mine", USER, USER)
        assert _kind(str(tree / "theirs" / "mine"), USER) == "foreign-ancestor"

    def test_a_world_writable_level_needs_the_sticky_bit(self, tree: t.Any) -> None:
        (tree / "open" / "mine").mkdir(parents=True)
        os.chown(tree / "open" / "mine", USER, USER)
        os.chmod(tree / "open", 0o777)
        assert _kind(str(tree / "open" / "mine"), USER) == "peer-writable-not-sticky"
        os.chmod(tree / "open", 0o1777)
        assert _kind(str(tree / "open" / "mine"), USER) is None

    def test_group_write_is_the_owners_grant_only_on_the_owners_own_level(self, tree: t.Any) -> None:
        (tree / "g").mkdir()
        os.chown(tree / "g", USER, USER)
        os.chmod(tree / "g", 0o775)
        assert _kind(str(tree / "g"), USER) is None
        os.chown(tree / "g", 0, 0)
        assert _kind(str(tree / "g"), USER) == "peer-writable-not-sticky"

    def test_links_are_followed_only_when_root_or_the_user_owns_them(self, tree: t.Any) -> None:
        (tree / "real").mkdir()
        os.chown(tree / "real", USER, USER)
        os.symlink("real", tree / "link")
        assert _kind(str(tree / "link"), USER) is None  # root's link
        os.chown(tree / "link", USER, USER, follow_symlinks=False)
        assert _kind(str(tree / "link"), USER) is None  # the user's own
        os.chown(tree / "link", PEER, PEER, follow_symlinks=False)
        assert _kind(str(tree / "link"), USER) == "not-a-directory"
        assert _kind(str(tree / "link" / "."), USER) == "not-a-directory"  # a link mid-path too

    def test_dot_dot_after_a_link_climbs_from_where_the_link_led(self, tree: t.Any) -> None:
        (tree / "a" / "b").mkdir(parents=True)
        (tree / "c").mkdir()
        os.symlink(str(tree / "a" / "b"), tree / "c" / "to-b")
        fd = open_trusted_directory(str(tree / "c" / "to-b" / ".."), USER)
        try:
            assert os.fstat(fd).st_ino == os.lstat(tree / "a").st_ino
        finally:
            os.close(fd)

    def test_a_missing_level_is_not_found_rather_than_distrusted(self, tree: t.Any) -> None:
        with pytest.raises(FileNotFoundError):
            open_trusted_directory(str(tree / "nothing"), USER)
        assert judge_path(str(tree / "nothing" / ".env"), USER) is None

    def test_a_file_another_user_owns_may_not_steer_the_environment_may(self, tree: t.Any) -> None:
        env_file = tree / ".env"
        env_file.write_text("TMPDIR=/srv\n")
        os.chown(env_file, PEER, PEER)
        refusal = judge_source(str(env_file), 0)
        assert refusal is not None and (refusal.kind, refusal.uid) == ("foreign-ancestor", PEER)
        assert judge_source("environment", 0) is None and judge_source("--tmpdir", 0) is None
        os.chown(env_file, 0, 0)
        assert judge_source(str(env_file), 0) is None

    def test_removal_stops_at_its_depth_bound_without_a_crash(self, tree: t.Any) -> None:
        deep = tree / "deep"
        deep.mkdir()
        fd = os.open(deep, os.O_RDONLY)
        for _ in range(REMOVAL_DEPTH + 5):
            os.mkdir("d", dir_fd=fd)
            inner = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
        os.close(fd)
        parent = os.open(tree, os.O_RDONLY)
        try:
            removal = remove_entry(parent, "deep", str(deep), 0, dry_run=True)
        finally:
            os.close(parent)
        assert removal.outcome == "kept" and "deeper than" in (removal.reason or "")
