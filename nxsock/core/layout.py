"""Names, hashes, budgets and generations of Nx's socket and cache layout (docs/behaviour.md#current-layout).

Pure functions of strings: nothing here looks at a filesystem.

>>> short_hash(["/workspace/one"], 8)
'a030d115'
>>> generation_of("23.1.1"), generation_of("23.3.2"), generation_of("24.0.6")
('legacy', 'ts', 'native')
"""

from __future__ import annotations

import typing as t

try:  # the bare builtin module loads faster than hashlib's OpenSSL
    from _sha256 import sha256 as _sha256  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - other builds
    from hashlib import sha256 as _sha256

__all__ = [
    "BUDGET",
    "CONTAINER",
    "GENERATIONS",
    "generation_of",
    "node_string",
    "path_length",
    "short_hash",
]

#: Nx refuses any socket path longer than this (before a Windows pipe prefix).
BUDGET = 95
#: The shared container on POSIX: the literal path, never ``$TMPDIR``.
CONTAINER = "/tmp/.nx"
PIPE_PREFIX = "\\\\.\\pipe\\nx\\"

#: ``legacy`` (≤ 23.1.1, temp-dir based), ``ts`` (23.1.2–23.3, TypeScript) and
#: ``native`` (24.x, the Rust crate).
GENERATIONS = ("legacy", "ts", "native")

#: The longest ids Nx produces, for lengths of sockets whose name carries one:
#: a 7-digit pid, a one-digit counter and (plugins) 8 hex digits.
LONGEST_PID = "1234567"
LONGEST_FORKED_ID = f"{LONGEST_PID}-1"
LONGEST_READY_NAME = f"fp{LONGEST_PID}-ready-1.sock"
LONGEST_PLUGIN_ID = f"{LONGEST_PID}-1-abcdef01"


def node_string(path: str) -> str:
    """*path* as Node sees it: bytes that are not UTF-8 become U+FFFD."""
    try:
        path.encode("utf-8")
        return path
    except UnicodeEncodeError:
        return path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def short_hash(parts: t.Iterable[str], length: int) -> str:
    """The first *length* hex digits of SHA-256 over the parts' UTF-8, concatenated."""
    digest = _sha256()
    for part in parts:
        digest.update(node_string(part).encode("utf-8"))
    return str(digest.hexdigest())[:length]


def per_run_leaf(workspace_root: str, pid: int | str) -> str:
    """The daemon's per-run directory name: it hashes the pid, so only the daemon's record knows it."""
    return short_hash([workspace_root.lower(), str(pid)], 20)


def plugin_leaf(workspace_root: str) -> str:
    return short_hash([workspace_root.lower()], 8)


def console_leaf(workspace_root: str) -> str:
    return short_hash([workspace_root.lower(), "nx-console"], 8)


def path_length(path: str, units: str) -> int:
    """A path's length as Nx measures it against the budget, in *units* (the release table's ``budget_units``).

    The Nx 24 crate counts UTF-8 bytes (``utf-8``, or the generation name
    ``native``); the TypeScript generations count UTF-16 code units, as
    JavaScript's ``length`` does.  Either way the path is the one Node sees,
    with undecodable bytes as U+FFFD.

    >>> path_length("/tmp/ü", "utf-8"), path_length("/tmp/ü", "utf-16")
    (7, 6)
    """
    text = node_string(path)
    if units in ("utf-8", "native"):
        return len(text.encode("utf-8"))
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def version_tuple(version: str) -> tuple[int, int, int] | None:
    """``(major, minor, patch)`` of a version string, or ``None``."""
    from .releases import parse_version

    return parse_version(version)


def generation_of(version: str | None) -> str:
    """Which layout a version uses, from the release table; an unknown or unparsable one is taken as the newest.

    A pre-release counts as its release (``24.0.0-beta.1`` is ``native``).
    """
    from .releases import rules_for

    return rules_for(version).generation
