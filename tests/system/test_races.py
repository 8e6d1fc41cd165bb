"""Races: a peer flips a path between a directory and a symlink while provision and reset run.

The peer loops in its own process; the command under test runs in-process
thousands of times (the same functions the CLI calls).  After every run the
link's target is checked: no chmod, chown or deletion may ever land through it.
"""

from __future__ import annotations

import shlex
import textwrap

from documents import parsed
from harness import (
    PEER,
    THIRD,
    USER,
    WAIT_FOR,
    as_user_prefix,
    run_as_user,
    stage_nxsock,
)

ITERATIONS = 1500
#: A scenario of a thousand runs, as a hang guard only: on a loaded machine the loop takes minutes, not one.
LOOP_GUARD = 900

FLIPPER = textwrap.dedent("""
    import os, signal, sys, time
    path, target, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
    UP = "/tmp/.flipper-up"
    end = time.time() + seconds
    flips = 0
    def report(*_):
        print("flips", flips, flush=True)
        sys.exit(0)
    signal.signal(signal.SIGTERM, report)
    open(UP, "w").close()  # the race is on: the victim starts now
    while time.time() < end:
        for make in (lambda: os.mkdir(path, 0o777), lambda: os.symlink(target, path)):
            try:
                make()
                flips += 1
            except OSError:
                pass
            try:
                os.rmdir(path)
            except OSError:
                try:
                    os.unlink(path)
                except OSError:
                    pass
    report()
""")


def _driver(body: str) -> str:
    python, pylib = stage_nxsock()
    return f"PYTHONPATH={shlex.quote(pylib)} {shlex.quote(python)} -c {shlex.quote(textwrap.dedent(body))}"


def _check_documents(text: str, args: list[str], count: int) -> None:
    """Every document a race driver printed, one a line, checked against its published schema."""
    lines = text.splitlines()
    assert len(lines) == count, f"{len(lines)} documents for {count} runs"
    for line in lines:
        parsed(line, args)


def _flipper(path: str, target: str, seconds: int) -> str:
    python, _ = stage_nxsock()
    return (
        f"{as_user_prefix(PEER)} {shlex.quote(python)} -c {shlex.quote(FLIPPER)} {path} {target} "
        f"{seconds} > /tmp/flips.out &"
    )


def test_provision_as_root_never_changes_a_links_target() -> None:
    """A peer flips /tmp/.nx between its own directory and a link to a precious one; root provisions."""
    driver = _driver(f"""
        import os, stat
        from nxsock.core.fsview import LiveView
        from nxsock.act.provisioning import provision_for_everyone
        def precious():
            st = os.lstat("/home/precious")
            return (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode))
        before = precious()
        bad = provisioned = 0
        for _ in range({ITERATIONS}):
            report = provision_for_everyone(LiveView(), dry_run=False)
            provisioned += report.refusal is None and bool(report.steps)
            if precious() != before or not os.path.exists("/home/precious/keep"):
                bad += 1
            try:  # hand the path back to the race: as root, remove what is there without following it
                st = os.lstat("/tmp/.nx")
                os.rmdir("/tmp/.nx") if stat.S_ISDIR(st.st_mode) else os.unlink("/tmp/.nx")
            except OSError:
                pass
        print("violations", bad, "provisioned", provisioned)
    """)
    setup = (
        f"install -d -m 0700 -o {THIRD} /home/precious; touch /home/precious/keep; "
        f"{_flipper('/tmp/.nx', '/home/precious', 60)} {WAIT_FOR} /tmp/.flipper-up"
    )
    result = run_as_user(
        setup,
        ["--help"],
        timeout=LOOP_GUARD,
        post=f"{driver}; pkill -u {PEER} python3; wait; cat /tmp/flips.out; stat -c '%u %a' /home/precious",
    )
    words = result.post.split()
    print(" ".join(words[:6]))  # the figures, for the record (pytest -s)
    assert words[words.index("violations") + 1] == "0", result.post
    assert int(words[words.index("provisioned") + 1]) > 0  # the race was really run, both ways
    assert int(words[words.index("flips") + 1]) > 1000
    assert result.post.strip().endswith(f"{THIRD} 700")


def test_reset_legacy_never_deletes_through_a_peers_link() -> None:
    """A peer flips a 20-hex name in /tmp between a directory and a link into the user's own files."""
    driver = _driver(f"""
        import os
        from nxsock.act.cleanup import reset
        from nxsock.core.host_overrides import HostOverrides
        from nxsock.core.snapshot import build_resolution
        bad = 0
        for _ in range({ITERATIONS}):
            resolution, _ = build_resolution(HostOverrides(workspace="/home/u{USER}"))
            reset(resolution, dry_run=False, force=True, legacy=True)
            if sorted(os.listdir("/home/u{USER}/precious")) != ["d.sock", "keep"]:
                bad += 1
        print("violations", bad)
    """)
    precious = f"/home/u{USER}/precious"
    setup = (
        f"install -d -m 0755 -o {USER} {precious}; touch {precious}/keep; "
        f"python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind(\"{precious}/d.sock\")'; "
        f"chown -R {USER} {precious}; "
        f"{_flipper('/tmp/0123456789abcdef0123', precious, 90)} {WAIT_FOR} /tmp/.flipper-up"
    )
    result = run_as_user(
        setup,
        ["--help"],
        timeout=LOOP_GUARD,
        post=f"{as_user_prefix()} {driver}; pkill -u {PEER} python3; wait; cat /tmp/flips.out",
    )
    words = result.post.split()
    print(" ".join(words[:6]))  # the figures, for the record (pytest -s)
    assert words[words.index("violations") + 1] == "0", result.post
    assert int(words[words.index("flips") + 1]) > 1000


def test_cache_prune_never_deletes_through_a_peers_link() -> None:
    """A peer flips a shared configured cache directory into a link to the user's own entry-named files."""
    precious = f"/home/u{USER}/precious"
    driver = _driver(f"""
        import os
        from click.testing import CliRunner
        from nxsock.app import cli
        runner = CliRunner()
        bad = errors = 0
        documents = open("/tmp/race-documents", "w")
        for _ in range({ITERATIONS}):
            result = runner.invoke(cli, ["cache", "prune", "--json"],
                                   env={{"NX_NATIVE_FILE_CACHE_DIRECTORY": "/tmp/shared-cache"}})
            documents.write(result.stdout)
            errors += result.exit_code not in (0, 1)
            if sorted(os.listdir("{precious}")) != ["23.0.0-0123456789ab-nx.linux-x64-gnu.node",
                                                    "24.0.6-0123456789ab-0.5nx.linux-x64-gnu.node"]:
                bad += 1
        print("violations", bad, "errors", errors)
    """)
    setup = (
        f"install -d -m 0755 -o {USER} {precious}; "
        f"touch {precious}/23.0.0-0123456789ab-nx.linux-x64-gnu.node "
        f"{precious}/24.0.6-0123456789ab-0.5nx.linux-x64-gnu.node; "
        f"chown -R {USER} {precious}; {_flipper('/tmp/shared-cache', precious, 120)} {WAIT_FOR} /tmp/.flipper-up"
    )
    post = f"cd /home/u{USER}; {as_user_prefix()} {driver}; pkill -u {PEER} python3; wait; cat /tmp/flips.out"
    result = run_as_user(
        setup, ["--help"], timeout=LOOP_GUARD, post=f"{post}; echo @@DOCUMENTS; cat /tmp/race-documents"
    )
    figures, documents = result.post.split("@@DOCUMENTS\n", 1)
    _check_documents(documents, ["cache", "prune", "--json"], ITERATIONS)
    result = result._replace(post=figures)
    words = result.post.split()
    print(" ".join(words[:6]))
    assert words[words.index("violations") + 1] == "0" and words[words.index("errors") + 1] == "0", result.post
    assert int(words[words.index("flips") + 1]) > 1000


def test_doctor_never_blocks_or_changes_anything_while_the_container_flips() -> None:
    """doctor reads /tmp/.nx while a peer flips it between a directory and a link to a FIFO-holding directory."""
    driver = _driver("""
        import os, time
        from click.testing import CliRunner
        from nxsock.app import cli
        runner = CliRunner()
        slow = errors = 0
        documents = open("/tmp/race-documents", "w")
        for _ in range(1000):
            start = time.monotonic()
            result = runner.invoke(cli, ["doctor", "--json", "--only", "container", "--only", "ancestry",
                                         "--only", "outcome"])
            documents.write(result.stdout)
            slow += time.monotonic() - start > 30  # blocked on the FIFO, not merely slow on a loaded machine
            errors += result.exit_code not in (0, 1)
        print("violations", slow + errors)
    """)
    setup = (f"install -d -m 0700 -o {THIRD} /home/precious; mkfifo /home/precious/fifo; "
             f"{_flipper('/tmp/.nx', '/home/precious', 120)} {WAIT_FOR} /tmp/.flipper-up")
    post = (
        f"cd /home/u{USER}; {as_user_prefix()} {driver}; pkill -u {PEER} python3; wait; cat /tmp/flips.out; stat "
        "-c '%u %a' /home/precious"
    )
    result = run_as_user(
        setup, ["--help"], timeout=LOOP_GUARD, post=f"{post}; echo @@DOCUMENTS; cat /tmp/race-documents"
    )
    figures, documents = result.post.split("@@DOCUMENTS\n", 1)
    _check_documents(documents, ["doctor", "--json"], 1000)
    result = result._replace(post=figures)
    words = result.post.split()
    print(" ".join(words[:4]))
    assert words[words.index("violations") + 1] == "0", result.post
    assert int(words[words.index("flips") + 1]) > 1000 and result.post.strip().endswith(f"{THIRD} 700")
