"""Which workspace Nx runs in, and which Nx it is: the root markers and the installed package."""

from ._pathname import join
from .fsview import FsView
from .json_input import JsonInputError, parse_json
from .releases import is_version

__all__ = ["checked_version", "find_workspace_root", "read_nx_version"]


def _is_file(view: FsView, path: str) -> bool:
    entry = view.stat(path)
    return not isinstance(entry, int) and entry.kind == "file"


def find_workspace_root(view: FsView, cwd: str, configured: str | None) -> tuple[str, str]:
    """The workspace root as Nx finds it, and why: a marker, the outermost ``node_modules/nx``, or the cwd."""
    if configured:
        return configured, "NX_WORKSPACE_ROOT_PATH"
    candidate, source = cwd, "current directory"
    directory = cwd
    while True:
        parent = directory.rstrip("/").rsplit("/", 1)[0] or "/"
        if parent == directory:
            return candidate, source
        for marker in ("nx.json", "nx", "nx.bat"):
            if _is_file(view, join(directory, marker)):
                return directory, marker
        if _is_file(view, join(directory, "node_modules", "nx", "package.json")):
            candidate, source = directory, "node_modules/nx"
        directory = parent


def read_nx_version(view: FsView, workspace_root: str) -> str | None:
    """The ``version`` of ``<workspace>/node_modules/nx/package.json``, or ``None``."""
    text = view.read_text(join(workspace_root, "node_modules", "nx", "package.json"))
    if isinstance(text, int):
        return None
    try:
        version = parse_json(text).get("version")
    except (JsonInputError, AttributeError):
        return None
    return version if isinstance(version, str) and version else None


def checked_version(version: str | None, where: str) -> tuple[str | None, tuple[str, str] | None]:
    """``(version, None)`` for a version by semver's grammar, ``(None, (the text, where))`` for anything else.

    Nx names a directory after the version (``native-cache/<version>``); a
    ``package.json`` is written by whoever wrote the checkout, so ``../..`` is
    refused here, once, and nothing downstream ever builds a path from it.
    """
    if version is None or is_version(version):
        return version, None
    return None, (version, where)
