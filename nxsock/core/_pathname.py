"""Path spelling as Node's ``path`` module does it on POSIX, without touching the disk.

``os.path`` keeps a leading ``//`` and never resolves against a chosen
directory; Nx's paths are spelled by ``path.resolve``/``path.join``, so nxsock
spells them the same way.
"""

from __future__ import annotations

__all__ = ["basename", "dirname", "is_absolute", "join", "normalize", "resolve"]


def normalize(path: str) -> str:
    """Fold ``.``, ``..``, repeated and trailing slashes lexically (``path.normalize``)."""
    absolute = path.startswith("/")
    parts: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if parts and parts[-1] != "..":
                parts.pop()
            elif not absolute:
                parts.append(part)
            continue
        parts.append(part)
    body = "/".join(parts)
    if absolute:
        return "/" + body
    return body or "."


def is_absolute(path: str) -> bool:
    return path.startswith("/")


def resolve(path: str, cwd: str) -> str:
    """*path* made absolute against *cwd* and normalised (``path.resolve``)."""
    return normalize(path if is_absolute(path) else cwd + "/" + path)


def join(*parts: str) -> str:
    """Join and normalise (``path.join``)."""
    return normalize("/".join(p for p in parts if p))


def dirname(path: str) -> str:
    """The parent of a normalised absolute path; ``/`` is its own parent."""
    head = path.rstrip("/").rsplit("/", 1)[0]
    return head or "/"


def basename(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]
