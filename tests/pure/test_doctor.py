"""doctor on real states: every finding from a real state, every remedy applied and then gone."""
from __future__ import annotations

import pytest

from nxsock.audit.explain import explain
from nxsock.output.paths_json import fix_line


@pytest.mark.parametrize(
    ("message", "matched", "errno"),
    [
        ("Error: listen EACCES: permission denied /tmp/.nx/1000/sockets/x/d.sock", "socket-errno", "EACCES"),
        (
            "Error: listen EADDRINUSE: address already in use /tmp/.nx/1000/sockets/x/d.sock",
            "socket-errno",
            "EADDRINUSE",
        ),
        ("connect EPERM /tmp/.nx/1000/sockets/abc/d.sock", "socket-errno", "EPERM"),
        ("Attempted to open socket that exceeds the maximum socket length.", "path-too-long", None),
        (
            "The configured Nx socket directory /tmp is shared with the other users on this machine.",
            "invalid-shared",
            None,
        ),
        (
            "The configured Nx socket directory /home/a/tmp is the operating system temp directory.",
            "invalid-os-temp",
            None,
        ),
        (
            "The configured Nx socket directory /tmp/.nx is a directory Nx keeps its own runtime state in.",
            "invalid-nx-managed",
            None,
        ),
        ("Nx could not establish a socket directory: /x could not be created (EACCES).", "no-socket-directory", None),
        (
            "Nx could not use any of its usual socket directories and fell back to /w/.nx/workspace-data/d.",
            "fallback",
            None,
        ),
        (
            "Warning: Failed to copy native module to cache after 3 attempts (EACCES). Loading in place.",
            "native-cache-copy",
            "EACCES",
        ),
        ('Nx Daemon is going to be disabled until you run "nx reset".', "daemon-disabled", None),
        ("Process exited with code 78", "exit-78", None),
        ("something unrelated", None, None),
    ],
)
def test_explain_recognises_nx_messages(message: str, matched: str | None, errno: str | None) -> None:
    """Nx's socket messages, as Nx prints them, are recognised; anything else is not guessed at."""
    result = explain(message)
    assert (result.matched, result.errno) == (matched, errno)
    if matched == "socket-errno":
        assert result.path == "/tmp/.nx/1000/sockets/x/d.sock" or result.path == "/tmp/.nx/1000/sockets/abc/d.sock"


def test_eacces_with_permitting_modes_is_a_policy_not_a_chmod() -> None:
    """SELinux, AppArmor and Landlock refuse with EACCES too: when modes allow the connect, chmod is wrong advice."""
    from conftest import USER as ADA
    from conftest import machine, mine

    from nxsock.audit.checks_sockets import _probe_finding
    from nxsock.core.fsview import Entry

    view = machine(
        {
            "/tmp/.nx": Entry("dir", 0, 0, 0o1777),
            "/tmp/.nx/1000": mine(),
            "/tmp/.nx/1000/sockets": mine(),
            "/tmp/.nx/1000/sockets/d": mine(),
            "/tmp/.nx/1000/sockets/d/d.sock": Entry("socket", ADA, ADA, 0o600),
        }
    )
    policy = _probe_finding(view, "/tmp/.nx/1000/sockets/d/d.sock", "EACCES", ADA)
    assert fix_line(policy.advice) is None and "security policy" in policy.message
    locked = machine({"/tmp/.nx/1000/sockets/d/d.sock": Entry("socket", ADA, ADA, 0o000)})
    mode = _probe_finding(locked, "/tmp/.nx/1000/sockets/d/d.sock", "EACCES", ADA)
    assert fix_line(mode.advice) is not None and fix_line(mode.advice).startswith("chmod")
