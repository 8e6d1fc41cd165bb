"""Whether the binding this host needs is installed: ``@nx/nx-<triple>`` (or a local ``nx.<triple>.node``).

Nx's ``native/index.js`` picks the file from the platform, the architecture
and the C library Node reports (glibc or musl).  When neither the local file
nor the package is there, its ``require`` throws, ``native-bindings.js``
exports nothing, and every command fails with ``TypeError: WorkspaceContext is
not a constructor``.  This module says what it needs, what is there instead
(another platform's package, as from a ``node_modules`` copied from another
host; the gnu package on musl), and what the lockfile lists.  Reading only:
nxsock never runs a package manager.
"""

from __future__ import annotations

import typing as t

from ..core._pathname import basename, join
from ..core.environment import Environment
from ..core.fsview import Entry, FsView

__all__ = ["LOCKFILES", "BindingPresence", "binding_presence"]

#: Lockfile → the package manager that wrote it, in the order a workspace is judged by.
LOCKFILES = (("pnpm-lock.yaml", "pnpm"), ("yarn.lock", "yarn"), ("bun.lock", "bun"), ("bun.lockb", "bun"),
             ("package-lock.json", "npm"), ("npm-shrinkwrap.json", "npm"))


class BindingPresence(t.NamedTuple):
    state: t.Literal["ok", "missing", "no-nx", "unknown-platform"]
    triple: str | None  # linux-x64-gnu, …, as this host needs it
    package: str | None  # @nx/nx-<triple>
    others: tuple[str, ...]  # @nx/nx-* packages installed instead (another platform's)
    lockfile: str | None  # the lockfile the package manager is judged by
    manager: str  # npm, pnpm, yarn (yarn-berry) or bun
    locked: bool | None  # whether the lockfile names the package; None without a readable lockfile
    nx_dir: str | None  # node_modules/nx, resolved


def _package_dirs(view: FsView, nx_dir: str) -> list[str]:
    """Each ``node_modules/@nx`` Node's lookup from node_modules/nx would search, nearest first."""
    found, level = [], nx_dir
    while True:
        if basename(level) != "node_modules":
            found.append(join(level, "node_modules", "@nx"))
        parent = level.rsplit("/", 1)[0] or "/"
        if parent == level:
            return found
        level = parent


def _manager(view: FsView, root: str) -> tuple[str | None, str, bool | None, str | None]:
    """(lockfile, manager, whether it is readable, its text)."""
    for name, manager in LOCKFILES:
        path = join(root, name)
        entry = view.lstat(path)
        if not isinstance(entry, Entry) or entry.kind != "file":
            continue
        text = view.read_text(path, 64 << 20) if not name.endswith(".lockb") else -1
        if manager == "yarn" and isinstance(text, str) and "__metadata:" in text:
            manager = "yarn-berry"
        return name, manager, isinstance(text, str), text if isinstance(text, str) else None
    return None, "npm", None, None


def binding_presence(env: Environment, view: FsView, triple: str | None, found: bool) -> BindingPresence:
    """What the binding lookup finds for this host; *found*: whether :func:`find_binding` found the file."""
    root = env.workspace_root
    nx_dir = view.realpath(join(root, "node_modules", "nx"))
    lockfile, manager, readable, text = _manager(view, root)
    package = None if triple is None else f"@nx/nx-{triple}"
    if isinstance(nx_dir, int) or not isinstance(view.stat(join(nx_dir, "package.json")), Entry):
        return BindingPresence("no-nx", triple, package, (), lockfile, manager, None, None)
    if triple is None:
        return BindingPresence("unknown-platform", None, None, (), lockfile, manager, None, nx_dir)
    locked = None if not readable or text is None else package in text if package else None
    if found:
        return BindingPresence("ok", triple, package, (), lockfile, manager, locked, nx_dir)
    others: list[str] = []
    for directory in _package_dirs(view, nx_dir):
        names = view.listdir(directory)
        if isinstance(names, int):
            continue
        for name in sorted(names):
            if name.startswith("nx-") and name != f"nx-{triple}" and f"@nx/{name}" not in others:
                others.append(f"@nx/{name}")
    return BindingPresence("missing", triple, package, tuple(others), lockfile, manager, locked, nx_dir)

