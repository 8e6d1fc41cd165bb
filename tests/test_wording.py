"""Every refusal kind has a sentence and an exact, pasteable remedy."""

from __future__ import annotations

import shlex
import subprocess

import pytest

from nxsock.guards import Refusal
from nxsock.wording import PROVISION_COMMAND, RemedyContext, describe, remedy_for, remedy_for_invalid, shell_quote

CTX = RemedyContext(1000, 1000, "/run/user/1000/nx")

KINDS = [
    Refusal("not-created", "/tmp/.nx", errno="EACCES"),
    Refusal("not-created", "/srv/a/b", errno="ENOENT"),
    Refusal("not-created", "/srv/a", errno="EROFS"),
    Refusal("not-created", "/srv/a", errno="EACCES"),
    Refusal("not-inspectable", "/srv/a", errno="EACCES"),
    Refusal("not-inspectable", "/tmp/claude", errno="ENOENT"),
    Refusal("not-a-directory", "/tmp/.nx", uid=1001, symlink=True),
    Refusal("not-a-directory", "/tmp/.nx/1000", uid=1000, symlink=False),
    Refusal("foreign-owner", "/tmp/.nx/1000", uid=1001),
    Refusal("foreign-shared-container", "/tmp/.nx", uid=1001),
    Refusal("foreign-ancestor", "/srv", uid=1001),
    Refusal("not-tightenable", "/tmp/.nx/1000", mode=0o755),
    Refusal("peer-writable-not-sticky", "/tmp/.nx", mode=0o777),
    Refusal("peer-writable-not-sticky", "/tmp", mode=0o777),
]


@pytest.mark.parametrize("refusal", KINDS, ids=lambda r: f"{r.kind}-{r.dir}-{r.errno or r.uid or r.mode}")
def test_every_refusal_has_a_sentence_and_a_remedy_that_parses(refusal: Refusal) -> None:
    """The sentence names the directory; the remedy is one line a POSIX shell accepts as it is."""
    assert refusal.dir in describe(refusal)
    remedy = remedy_for(refusal, CTX)
    assert remedy.command is not None and "\n" not in remedy.command
    assert subprocess.run(["sh", "-n", "-c", remedy.command]).returncode == 0


def test_the_shared_root_remedies_are_the_documented_commands() -> None:
    assert PROVISION_COMMAND == "sudo install -d -m 1777 -o root -g root /tmp/.nx"
    peer = remedy_for(Refusal("foreign-shared-container", "/tmp/.nx", uid=1001), CTX)
    assert peer.command == "sudo chown root:root /tmp/.nx && sudo chmod 1777 /tmp/.nx"


def test_a_squatted_directory_is_removed_never_chowned_to_its_victim() -> None:
    remedy = remedy_for(Refusal("foreign-owner", "/tmp/.nx/1000", uid=1001), CTX)
    assert remedy.command is not None and "chown" not in remedy.command and remedy.command.startswith("sudo rm")


def test_quoting_survives_a_quote_and_a_space() -> None:
    assert shell_quote("/home/o'brien/.nx") == "'/home/o'\\''brien/.nx'"
    assert shlex.split(shell_quote("/a b/c'd")) == ["/a b/c'd"]


def test_a_variable_set_in_a_dotenv_file_is_removed_from_that_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The remedy for a refused NX_SOCKET_DIR edits the file that set it, and only that line."""
    dotenv = tmp_path / ".env"
    dotenv.write_text("A=1\nexport NX_SOCKET_DIR=/tmp\nB=2\n")
    remedy = remedy_for_invalid("NX_SOCKET_DIR", str(dotenv), "/tmp")
    assert remedy.command is not None
    subprocess.run(["sh", "-c", remedy.command], check=True)
    assert dotenv.read_text() == "A=1\nB=2\n"
    assert remedy_for_invalid("NX_SOCKET_DIR", "environment", "/tmp").command == "unset NX_SOCKET_DIR"
