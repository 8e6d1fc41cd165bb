"""reset's liveness on a network filesystem (an NFS mount under ~/.nx, from a mount-table fixture) and for a zombie.

No machine here can serve NFS, so the mount table is a fixture (the walker's
``mounts``); the directories, sockets and processes are real: a per-run
directory whose socket nothing listens on, a record naming a real zombie.
"""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
import typing as t
from pathlib import Path

import pytest

from nxsock.act.cleanup import _Walker
from nxsock.core.liveness import process_liveness
from nxsock.core.mounts import parse_mountinfo


@pytest.fixture
def short_dir() -> t.Iterator[Path]:
    """A directory with a short path: a unix socket's path must fit in 107 bytes, pytest's short_dir may not."""
    path = Path(tempfile.mkdtemp(prefix="nxml-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _walker(force: bool = False) -> _Walker:
    return _Walker(os.getuid(), dry_run=False, force=force, now=2e9, tick=lambda: None)


def _stale_run_dir(root: Path) -> Path:
    """A per-run directory holding a socket nothing listens on (bound, then closed)."""
    leaf = root / "0123456789abcdef0123"
    leaf.mkdir(parents=True)
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(leaf / "d.sock"))
    server.close()
    return leaf


def _nfs_at(path: Path) -> t.Any:
    return parse_mountinfo(
        f"1 0 8:1 / / rw - ext4 /dev/sda1 rw\n2 1 0:50 /export/ada {path} rw - nfs4 srv:/export rw\n"
    )


def test_on_nfs_a_socket_nothing_answers_here_is_kept_with_why_and_force_removes_it(short_dir: Path) -> None:
    """A daemon on another host may listen there: ECONNREFUSED from here proves nothing; --force still removes."""
    leaf = _stale_run_dir(short_dir / "sockets")
    walker = _walker()
    walker.mounts = _nfs_at(short_dir)
    fd = os.open(short_dir / "sockets", os.O_RDONLY | os.O_DIRECTORY)
    try:
        walker.dead_directory(fd, leaf.name, str(leaf), "per-run directory", os.lstat(leaf))
        (item,) = walker.items
        assert item.outcome == "kept" and "nfs4 (srv:/export)" in item.reason and "--force" in item.reason
        assert leaf.exists()
        forced = _walker(force=True)
        forced.mounts = walker.mounts
        forced.dead_directory(fd, leaf.name, str(leaf), "per-run directory", os.lstat(leaf))
        assert forced.items[0].outcome == "removed" and not leaf.exists()
    finally:
        os.close(fd)


def test_on_a_local_filesystem_the_same_directory_is_removed(short_dir: Path) -> None:
    leaf = _stale_run_dir(short_dir / "sockets")
    walker = _walker()
    walker.mounts = parse_mountinfo("1 0 8:1 / / rw - ext4 /dev/sda1 rw\n")
    fd = os.open(short_dir / "sockets", os.O_RDONLY | os.O_DIRECTORY)
    try:
        walker.dead_directory(fd, leaf.name, str(leaf), "per-run directory", os.lstat(leaf))
    finally:
        os.close(fd)
    assert walker.items[0].outcome == "removed" and not leaf.exists()


def test_a_record_of_a_zombie_is_removed_and_one_of_an_unseen_pid_on_nfs_is_kept(short_dir: Path) -> None:
    """kill(pid, 0) succeeds on a zombie; the process state says it is dead."""
    child = subprocess.Popen(["true"])
    os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # exited, not reaped: a zombie
    try:
        assert process_liveness(child.pid) == "zombie"
        daemon_dir = short_dir / "d"
        daemon_dir.mkdir()
        record = daemon_dir / "server-process.json"
        record.write_text(json.dumps({"processId": child.pid, "socketPath": str(short_dir / "x" / "d.sock")}))
        walker = _walker()
        walker.dead_record(str(daemon_dir))
        assert walker.items[0].outcome == "removed" and "zombie" in walker.items[0].reason and not record.exists()
    finally:
        child.wait()
    record.write_text(json.dumps({"processId": 2**22 + 7, "socketPath": str(short_dir / "x" / "d.sock")}))
    walker = _walker()
    walker.mounts = _nfs_at(short_dir)
    walker.dead_record(str(daemon_dir))
    assert walker.items[0].outcome == "kept" and "network filesystem" in walker.items[0].reason and record.exists()


def _cache_entries(root: Path) -> list[tuple[str, str]]:
    """Two planned cache entries (another version's binding, an interrupted copy), real files in a real directory."""
    cache = root / "native-cache" / "23.3.2"
    cache.mkdir(parents=True)
    (cache / "23.3.2-0123456789ab-nx.linux-x64-gnu.node").write_bytes(b"\0" * 4096)
    (cache / "23.3.2-0123456789ab-nx.linux-x64-gnu.node.tmp-42").write_bytes(b"\0" * 100)
    return [(str(cache / "23.3.2-0123456789ab-nx.linux-x64-gnu.node"), "version 23.3.2, not the installed 24.0.6"),
            (str(cache / "23.3.2-0123456789ab-nx.linux-x64-gnu.node.tmp-42"), "an interrupted copy")]


def test_cache_prune_on_nfs_keeps_what_another_host_may_load_says_why_and_force_removes_it(short_dir: Path) -> None:
    """No process here maps the entry, but Nx on another host may: kept with the mount and `--force`; forced,
    removed."""
    from documents import checked

    from nxsock.act.pruning import prune_cache
    from nxsock.output.report import cache_prune_document

    plan = _cache_entries(short_dir)
    pruned = prune_cache(plan, os.getuid(), dry_run=False, mounts=_nfs_at(short_dir))
    assert pruned.results == [] and [r.outcome for r, _ in pruned.kept] == ["kept", "kept"], pruned
    reason = pruned.kept[0][0].reason or ""
    assert "nfs4 (srv:/export)" in reason and "another host" in reason and "nxsock cache prune --force" in reason
    assert all(Path(p).exists() for p, _ in plan)  # nothing removed, the directory not tidied either
    document = checked(cache_prune_document(pruned.results, dry_run=False, interrupted=False, kept=pruned.kept),
                       "cache-prune")
    assert [k["path"] for k in document["kept"]] == [p for p, _ in plan] and document["failed"] == []
    forced = prune_cache(plan, os.getuid(), dry_run=False, force=True, mounts=_nfs_at(short_dir))
    assert [r.outcome for r, _ in forced.results] == ["removed", "removed"] and not forced.kept
    assert not any(Path(p).exists() for p, _ in plan)


def test_cache_prune_on_a_local_filesystem_removes_the_same_entries(short_dir: Path) -> None:
    from nxsock.act.pruning import prune_cache

    plan = _cache_entries(short_dir)
    pruned = prune_cache(
        plan, os.getuid(), dry_run=False, mounts=parse_mountinfo("1 0 8:1 / / rw - ext4 /dev/sda1 rw\n")
    )
    assert [r.outcome for r, _ in pruned.results] == ["removed", "removed"] and not pruned.kept
    assert not any(Path(p).exists() for p, _ in plan)
