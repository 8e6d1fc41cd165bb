"""An audit run as another user: root forks a child that becomes that user, and bounds it in time.

``doctor --user UID`` and ``doctor --all-users`` judge each user as that user
sees the machine: with that uid, its passwd group and home, and no
supplementary groups.  The child has the audited user's ids, so that user may
signal it: a stop is seen at once (``WUNTRACED``) and the child killed, as is
one still running after :data:`CHILD_DEADLINE` seconds.  What the child writes
to its standard output comes back through a pipe and is handed on only once
the child has exited by itself, so a stopped or killed audit leaves nothing
half written.
"""

from __future__ import annotations

import os
import select
import signal
import sys
import time
import typing as t

from .. import exitcodes

__all__ = ["CHILD_DEADLINE", "Supervised", "audit_as", "drop_to", "run_as", "send"]

#: How long root waits for the audit it forked as another user; that user can stop or slow the child.
CHILD_DEADLINE = 15.0


class Supervised(t.NamedTuple):
    """How the child ended: its exit code and what it wrote (when captured), or why it was ended, reporting nothing."""

    code: int
    output: bytes
    failure: str | None  # "was stopped by SIGSTOP (…)", "did not finish within 15 s", "was killed by SIGKILL"

    def failure_message(self, uid: int) -> str:
        """What a person is told of a failed audit as *uid*: that it was ended and none of it is reported."""
        return f"the audit as uid {uid} {self.failure}; it was ended and nothing it found is reported"


def drop_to(uid: int) -> None:
    """Become *uid* (with its passwd group and home) in this process: a child forked for the audit."""
    import pwd

    try:
        entry = pwd.getpwuid(uid)
        gid, home = entry.pw_gid, entry.pw_dir
    except KeyError:
        gid, home = uid, None
    os.setgroups([])
    os.setgid(gid)
    os.setuid(uid)
    if home:
        os.environ["HOME"] = home
    else:
        os.environ.pop("HOME", None)


def run_as(
    uid: int,
    work: t.Callable[[], int],
    *,
    capture: bool,
    deadline: float = CHILD_DEADLINE,
    output_limit: int = 16 << 20,
) -> Supervised:
    """Run *work* in a child that has become *uid*; its exit code, and its standard output when *capture*.

    *work* returns the child's exit code; an exception it lets out ends the
    child with :data:`~nxsock.exitcodes.SOFTWARE` (it never returns into the
    parent's code).  Captured output past *output_limit* bytes ends the child
    as a failure: a document that large is not an audit.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    read_end, write_end = os.pipe() if capture else (-1, -1)
    pid = os.fork()
    if pid == 0:  # the audit runs with that user's own permissions
        code = exitcodes.SOFTWARE
        try:
            if capture:
                os.close(read_end)
                os.dup2(write_end, 1)
                os.close(write_end)
            drop_to(uid)
            code = work()
            sys.stdout.flush()
        except exitcodes.OutputFailed:  # its standard output refused a write: the audit said so in its one line
            code = exitcodes.IOERR
        except BaseException as exc:  # a child must never return into the parent's code, nor end without a word
            try:  # nothing imported here: an import may be what failed (a stdlib the audited user cannot read)
                os.write(2, f"nxsock: the audit as uid {uid} failed: {exc!r:.300}\n".encode("utf-8", "replace"))
            except BaseException:
                pass
        os._exit(code)
    if capture:
        os.close(write_end)
    chunks: list[bytes] = []
    size = 0
    until = time.monotonic() + deadline
    failure = None
    status = 0
    open_pipe = capture
    while True:
        done, status = os.waitpid(pid, os.WNOHANG | os.WUNTRACED)
        if done and os.WIFSTOPPED(status):
            failure = f"was stopped by {signal.Signals(os.WSTOPSIG(status)).name} (the audited user can signal it)"
        elif done:
            break
        elif time.monotonic() > until:
            failure = f"did not finish within {deadline:g} s"
        elif size > output_limit:
            failure = f"wrote more than {output_limit} bytes"
        if failure is not None:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            break
        if open_pipe:
            ready, _, _ = select.select([read_end], [], [], 0.05)
            if ready:
                chunk = os.read(read_end, 1 << 16)
                if chunk:
                    chunks.append(chunk)
                    size += len(chunk)
                else:
                    open_pipe = False  # the child closed its end; it is about to exit
        else:
            time.sleep(0.02)
    if capture:
        while failure is None and size <= output_limit:
            chunk = os.read(read_end, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        os.close(read_end)
        if failure is None and size > output_limit:
            failure = f"wrote more than {output_limit} bytes"
    if failure is None and os.WIFSIGNALED(status):
        failure = f"was killed by {signal.Signals(os.WTERMSIG(status)).name}"
    if failure is not None:
        return Supervised(exitcodes.PROBLEM, b"", failure)
    return Supervised(os.waitstatus_to_exitcode(status), b"".join(chunks), None)


def audit_as(uid: int, work: t.Callable[[], int], *, capture: bool, output_limit: int = 16 << 20) -> Supervised:
    """:func:`run_as` for an audit: when its output is captured, a child that exits by itself having written
    nothing is a failure too (the caller prints exactly one document, and this child sent none)."""
    outcome = run_as(uid, work, capture=capture, output_limit=output_limit)
    if outcome.failure is None and capture and not outcome.output:
        return Supervised(exitcodes.PROBLEM, b"", f"ended with exit {outcome.code} and no report")
    return outcome


def send(data: bytes) -> None:
    """The child's side of a captured audit: *data* to descriptor 1, the pipe itself, whatever object
    ``sys.stdout`` is (a test runner's buffer)."""
    while data:
        data = data[os.write(1, data):]
