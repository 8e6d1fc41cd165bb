"""``doctor --explain``: recognise what Nx printed, and answer with the cause and the fix for this machine."""

from __future__ import annotations

import re
import typing as t

__all__ = ["Explanation", "explain"]


class Explanation(t.NamedTuple):
    matched: str | None  # which message was recognised
    errno: str | None
    path: str | None  # the path the message names, if any
    cause: str | None
    checks: tuple[str, ...]  # the doctor checks that answer it


_PATTERNS: list[tuple[str, re.Pattern[str], str, tuple[str, ...]]] = [
    # Node spells these "connect ENOENT /p" and "listen EACCES: permission denied /p".
    ("socket-errno", re.compile(r"\b(?:connect|listen)\s+(EACCES|EPERM|ENOENT|ECONNREFUSED|EADDRINUSE|EROFS)(?::[^/\n]*)?\s+(/\S+)"),
     "", ("sockets", "socket-owner", "levels", "outcome", "daemon")),
    ("path-too-long", re.compile(r"exceeds the maximum socket length"),
     "A socket path is over Nx's 95-character limit.", ("path-budget", "outcome", "configuration")),
    ("invalid-shared", re.compile(r"(?:configured Nx socket directory (\S+) )?is shared with the other users"),
     "NX_SOCKET_DIR names a directory other users can reach; Nx refuses it.", ("configuration",)),
    ("invalid-os-temp", re.compile(r"(?:configured Nx socket directory (\S+) )?is the operating system temp directory"),
     "NX_SOCKET_DIR names the OS temp directory itself; Nx refuses it.", ("configuration",)),
    ("invalid-nx-managed", re.compile(r"(?:configured Nx socket directory (\S+) )?is a directory Nx keeps its own runtime state in"),
     "NX_SOCKET_DIR names a directory Nx manages itself; Nx refuses it.", ("configuration",)),
    ("configured-refused", re.compile(r"could not use the configured socket directory (\S+?):"),
     "NX_SOCKET_DIR was refused, so Nx fell back to the workspace.", ("configuration", "levels", "outcome")),
    ("no-socket-directory", re.compile(r"could not establish a socket directory"),
     "No socket directory could be established, the workspace fallback included.", ("levels", "outcome")),
    ("fallback", re.compile(r"fell back to (\S+?)\.?(?:\s|$)"),
     "Nx could not use its usual socket directories and fell back to the workspace.", ("levels", "outcome", "container")),
    ("native-cache-copy", re.compile(r"Failed to copy native module to cache[^(]*(?:\((E[A-Z]+)\))?"),
     "Nx could not copy its binding into the cache and loads it in place.", ("native-cache", "levels")),
    ("daemon-disabled", re.compile(r"Daemon is going to be disabled|daemon is disabled|Daemon was not able to compute", re.I),
     "The daemon was disabled by a marker that stays until `nx reset`.", ("daemon",)),
    ("exit-78", re.compile(r"(?:exit(?:ed)? (?:with )?code|status)\s*78\b", re.I),
     "Exit 78: the daemon could not bind its socket (EACCES/EPERM); Nx does not write the disabled marker for it.",
     ("sockets", "levels", "outcome")),
]

_ERRNO_CAUSES = {
    "EACCES": "a mode or owner refuses the socket or a directory above it — or a security policy does",
    "EPERM": "a sandbox or policy (seccomp, macOS Seatbelt) forbids unix sockets",
    "ENOENT": "the socket does not exist: the daemon is not running there",
    "ECONNREFUSED": "nothing listens on the socket: it is stale",
    "EADDRINUSE": "a socket file is already at that path (a stale one, or another daemon's)",
    "EROFS": "the directory is on a read-only mount (a sandbox's bind)",
}


def explain(text: str) -> Explanation:
    """The first recognised message in *text*, its errno and path, its cause and the checks that answer it."""
    for name, pattern, cause, checks in _PATTERNS:
        match = pattern.search(text)
        if match is None:
            continue
        if name == "socket-errno":
            errno_name, path = match.group(1), match.group(2).rstrip(".,:;'\"")
            return Explanation(name, errno_name, path, f"{errno_name}: {_ERRNO_CAUSES[errno_name]}.", checks)
        groups = [g for g in match.groups() if g]
        errno_name = next((g for g in groups if g.startswith("E") and g.isupper()), None)
        path = next((g.rstrip(".,:;") for g in groups if g.startswith("/")), None)
        return Explanation(name, errno_name, path, cause, checks)
    return Explanation(None, None, None, None, ())
