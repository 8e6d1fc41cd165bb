"""``doctor --fix``'s ``.env`` edit as the red team attacked it: a full filesystem, a file of another group and
with a hard link, an interrupt at the critical moment.  Nothing is lost, nothing widened, no copy left.

Each runs the command as an unprivileged uid in a private mount namespace; the interrupt is delivered by
``strace`` on the edit's first ``fsync`` (an event in the process itself, never a timed guess).
"""
from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import signal
import stat
import subprocess
import typing as t
from pathlib import Path

import pytest
from harness import PEER, USER, as_user_prefix, default_signals, run_as_user, stage_nxsock

from nxsock.act import acting
from nxsock.act.outcomes import Done, Refused

HOME = f"/home/u{USER}"
WS = f"{HOME}/ws"
MAKE_WS = f"install -d -o {USER} {WS}; echo '{{}}' > {WS}/nx.json; chown {USER} {WS}/nx.json"
#: A .env whose NX_SOCKET_DIR names /tmp (a shared directory Nx refuses), in the size the red team used.
FILLER = "".join(f"# line {n:05d} of notes nobody may lose, padded to a fixed width.......\n" for n in range(700))
TEXT = ("A=1\nNX_SOCKET_DIR=/tmp\n" + FILLER)[: 48_828 - 5] + "\nB=2\n"
EDITED = TEXT.replace("NX_SOCKET_DIR=/tmp\n", "", 1)


def _write_env(path: str, owner: str, mode: str) -> str:
    """Shell, as root: the .env written from this module's TEXT, given to *owner* with *mode*."""
    return (f"printf %s {shlex.quote(TEXT)} > {path}; chown {owner} {path}; chmod {mode} {path}")


def _state(path: str) -> str:
    """Shell: the file's owner, group, mode, inode, links and digest, and every name beside it."""
    return f"stat -c '%u:%g %a %i %h' {path}; sha256sum < {path}; ls -a {os.path.dirname(path)}"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _env_outcome(stdout: str) -> dict[str, t.Any]:
    document = json.loads(stdout)
    edits = [o for o in document["outcomes"] if o["remedy"].startswith("sed -i")]
    assert len(edits) == 1, document["outcomes"]
    return t.cast(dict[str, t.Any], edits[0])


class TestAFullFilesystem:
    def test_a_full_disk_is_a_one_line_failure_and_the_file_is_intact(self) -> None:
        """Found by the red team: a short write was ignored; 48,828 bytes became 12,288, "fixed", exit 0.

        The workspace is a 256 KiB tmpfs filled but for three pages: the first write of the new file is short.
        """
        assert len(TEXT) == 48_828
        setup = (
            f"install -d -o {USER} {WS}; mount -t tmpfs -o size=256k,mode=0755 tmpfs {WS}; chown {USER} {WS}; "
            f"echo '{{}}' > {WS}/nx.json; chown {USER} {WS}/nx.json; {_write_env(f'{WS}/.env', str(USER), '0644')}; "
            f"dd if=/dev/zero of={WS}/.fill bs=4096 2>/dev/null || true; truncate -s -12288 {WS}/.fill; sync"
        )
        before = run_as_user(setup, ["doctor", "--json"], cwd=WS, post=_state(f"{WS}/.env"))
        assert before.post.splitlines()[1].split()[0] == _digest(TEXT), before.post
        result = run_as_user(setup, ["doctor", "--fix", "--yes", "--json"], cwd=WS, post=_state(f"{WS}/.env"))
        assert "Traceback" not in result.stderr, result.stderr
        outcome = _env_outcome(result.stdout)
        assert outcome["outcome"] == "failed" and "ENOSPC" in outcome["reason"] and "\n" not in outcome["reason"], (
            outcome
        )
        assert result.post == before.post, (
            before.post,
            result.post,
        )  # the same bytes, inode, owner, mode; no copy beside it
        assert "nxsock-" not in result.post


class TestOwnerGroupModeAndLinks:
    def test_a_file_of_another_group_the_user_is_not_in_is_refused_and_left_as_it_was(self) -> None:
        """Found by the red team: USER:PEER 0640 became USER:USER — the peer's group lost its read."""
        setup = f"{MAKE_WS}; {_write_env(f'{WS}/.env', f'{USER}:{PEER}', '0640')}"
        result = run_as_user(setup, ["doctor", "--fix", "--yes", "--json"], cwd=WS, post=_state(f"{WS}/.env"))
        outcome = _env_outcome(result.stdout)
        assert outcome["outcome"] == "refused" and f"group {PEER}" in outcome["reason"], outcome
        assert result.tree_before == result.tree_after
        assert result.post.splitlines()[0].startswith(f"{USER}:{PEER} 640 ") and _digest(TEXT) in result.post

    def test_a_group_that_may_do_only_what_others_may_is_the_users_own_after_the_edit(self) -> None:
        """USER:PEER 0600: the group changes no one's access, so the edit is made; the mode stays, the group is
        USER's."""
        setup = f"{MAKE_WS}; {_write_env(f'{WS}/.env', f'{USER}:{PEER}', '0600')}"
        result = run_as_user(setup, ["doctor", "--fix", "--yes", "--json"], cwd=WS, post=_state(f"{WS}/.env"))
        assert _env_outcome(result.stdout)["outcome"] == "fixed"
        assert result.post.splitlines()[0].startswith(f"{USER}:{USER} 600 ") and _digest(EDITED) in result.post

    def test_a_file_with_a_hard_link_is_refused_and_both_names_keep_the_one_file(self) -> None:
        """Found by the red team: the rewrite broke the link (the other name kept the old text)."""
        setup = f"{MAKE_WS}; {_write_env(f'{WS}/.env', str(USER), '0600')}; ln {WS}/.env {WS}/env.saved"
        result = run_as_user(setup, ["doctor", "--fix", "--yes", "--json"], cwd=WS, post=_state(f"{WS}/.env"))
        outcome = _env_outcome(result.stdout)
        assert outcome["outcome"] == "refused" and "2 hard links" in outcome["reason"], outcome
        assert result.tree_before == result.tree_after
        assert result.post.splitlines()[0].endswith(" 2") and _digest(TEXT) in result.post

    def test_the_group_and_mode_are_kept_where_the_writer_may_give_them(self, tmp_path: Path) -> None:
        """Root's own .env, group PEER, 0640, set-group-id directory aside: the new file is root:PEER 0640, only the
        line gone."""
        env = tmp_path / ".env"
        env.write_text(TEXT)
        os.chown(env, 0, PEER)
        env.chmod(0o640)
        assert isinstance(acting.delete_env_lines(str(env), "NX_SOCKET_DIR", 0), Done)
        st = env.stat()
        assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode), st.st_nlink) == (0, PEER, 0o640, 1)
        assert env.read_text() == EDITED and [p.name for p in tmp_path.iterdir()] == [".env"]


@pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace to interrupt at the critical moment")
class TestAnInterrupt:
    # SIGINT was already deferred by --fix's own handler (between_entries); a kill or a closed terminal was not.
    @pytest.mark.parametrize("signal_name", ["SIGTERM", "SIGHUP"])
    def test_an_interrupt_while_the_new_file_is_written_leaves_no_copy(self, signal_name: str) -> None:
        """Found by the red team: an interrupt between create and rename left ..env.nxsock-PID, a copy of the secrets.

        strace delivers the signal as the edit syncs the new file (its first fsync): after it, the .env is the
        old file or the complete new one, and no other name holds its text.
        """
        python, pythonpath = stage_nxsock()
        command = (f"strace -f -qq -o /dev/null -e trace=fsync -e inject=fsync:signal={signal_name}:when=1 "
                   f"{as_user_prefix(USER)} PYTHONPATH={shlex.quote(pythonpath)} PYTHONDONTWRITEBYTECODE=1 "
                   f"{shlex.quote(python)} -m nxsock doctor --fix --yes --json")
        script = f"""
set -e
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs -o mode=0755 tmpfs /home
install -d -o {USER} -g {USER} {HOME}
{MAKE_WS}; {_write_env(f'{WS}/.env', f'{USER}:{USER}', '0600')}
set +e
cd {WS}
{command} >/dev/null 2>&1; echo "rc $?"
{_state(f'{WS}/.env')}
"""
        proc = subprocess.run(["unshare", "-m", "--propagation", "private", "bash", "-c", script], cwd="/",
                              capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60,
                              preexec_fn=default_signals)
        rc, owner, digest, *names = proc.stdout.split("\n")
        assert rc == f"rc {128 + getattr(signal, signal_name)}", (
            proc.stdout
        )  # it took effect (after the section), not ignored
        assert names == [".", "..", ".env", "nx.json", ""], proc.stdout
        assert digest.split()[0] in (_digest(TEXT), _digest(EDITED)), proc.stdout
        assert owner.startswith(f"{USER}:{USER} 600 ")


@pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace to interrupt at the critical moment")
def test_the_tmpfiles_drop_in_is_written_by_the_same_writer_and_a_kill_leaves_no_partial_file(tmp_path: Path) -> None:
    """``provision --tmpfiles --install``'s drop-in: a SIGTERM as it is synced leaves no ``nxsock.conf.nxsock-PID``."""
    import sys

    drop_in = tmp_path / "tmpfiles.d" / "nxsock.conf"
    drop_in.parent.mkdir()
    code = f"from nxsock.act.tmpfiles import install; print(install(dry_run=False, path={str(drop_in)!r}))"
    proc = subprocess.run(
        [
            "strace",
            "-f",
            "-qq",
            "-o",
            "/dev/null",
            "-e",
            "trace=fsync",
            "-e",
            "inject=fsync:signal=SIGTERM:when=1",
            sys.executable,
            "-c",
            code,
        ],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
        preexec_fn=default_signals,
    )
    assert proc.returncode in (-signal.SIGTERM, 128 + signal.SIGTERM), (
        proc.stdout,
        proc.stderr,
    )  # strace ends as its tracee did
    assert [p.name for p in drop_in.parent.iterdir()] == ["nxsock.conf"]
    assert drop_in.read_text().startswith("# Written by nxsock") and stat.S_IMODE(drop_in.stat().st_mode) == 0o644


def _acl(*entries: tuple[int, int, int]) -> bytes:
    """A POSIX ACL as the kernel stores it in ``system.posix_acl_*`` (tag, permissions, id)."""
    import struct

    return struct.pack("<I", 2) + b"".join(struct.pack("<HHI", tag, perm, ident) for tag, perm, ident in entries)


class TestAccessControlLists:
    NOBODY = 0xFFFFFFFF

    def test_a_directory_default_acl_that_would_let_a_peer_read_the_new_file_is_refused(self, tmp_path: Path) -> None:
        """A .env of 0640 with no ACL, in a directory whose default ACL names PEER: the new file would let PEER read
        it."""
        env = tmp_path / ".env"
        env.write_text(TEXT)
        env.chmod(0o640)
        try:  # user::rw- user:PEER:r-- group::r-- mask::r-- other::---
            os.setxattr(
                tmp_path,
                "system.posix_acl_default",
                _acl(
                    (1, 6, self.NOBODY),
                    (2, 4, PEER),
                    (4, 4, self.NOBODY),
                    (0x10, 4, self.NOBODY),
                    (0x20, 0, self.NOBODY),
                ),
            )
        except OSError as exc:
            pytest.skip(f"no POSIX ACLs here ({exc.strerror})")
        problem = acting.delete_env_lines(str(env), "NX_SOCKET_DIR", 0)
        assert isinstance(problem, Refused) and "access control list" in problem.reason, problem
        assert env.read_text() == TEXT and os.listxattr(env) == [] and [p.name for p in tmp_path.iterdir()] == [".env"]

    def test_a_file_that_carries_an_acl_is_refused_rather_than_rewritten_without_it(self, tmp_path: Path) -> None:
        env = tmp_path / ".env"
        env.write_text(TEXT)
        try:
            os.setxattr(
                env,
                "system.posix_acl_access",
                _acl(
                    (1, 6, self.NOBODY),
                    (2, 4, PEER),
                    (4, 0, self.NOBODY),
                    (0x10, 4, self.NOBODY),
                    (0x20, 0, self.NOBODY),
                ),
            )
        except OSError as exc:
            pytest.skip(f"no POSIX ACLs here ({exc.strerror})")
        problem = acting.delete_env_lines(str(env), "NX_SOCKET_DIR", 0)
        assert isinstance(problem, Refused) and "system.posix_acl_access" in problem.reason, problem
        assert env.read_text() == TEXT
