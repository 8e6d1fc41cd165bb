"""Whether the binding this host needs is installed: ``@nx/nx-<triple>`` (or a local ``nx.<triple>.node``).

Nx's ``native/index.js`` picks the file from the platform, the architecture
and the C library Node reports (glibc or musl).  When neither the local file
nor the package is there, its ``require`` throws, ``native-bindings.js``
exports nothing, and every command fails with ``TypeError: WorkspaceContext is
not a constructor``.  This module says what it needs, what is there instead
(another platform's package, as from a ``node_modules`` copied from another
host; the gnu package on musl), what the lockfile lists, and whether the mounts
let Nx load it (``noexec``).  Reading only: nxsock never runs a package manager.

It is light on purpose: ``paths --json``, run on every CI job, carries this
verdict, so it loads nothing beyond the resolver's own modules (the mount
table's parser only when it is read) and reads a lockfile whole only for a
binding that is missing.
"""

from __future__ import annotations

import os
import typing as t

from ..core._pathname import basename, dirname, join
from ..core.environment import Environment
from ..core.fsview import Entry, FsView
from ..core.releases import ReleaseRules

if t.TYPE_CHECKING:
    from ..core.mounts import Mount
    from ..core.resolver import Resolution

__all__ = ["LOCKFILES", "BindingPresence", "BindingVerdict", "Loadability", "binding_presence", "binding_verdict",
           "host_triple", "loadability", "locate_binding", "platform_triple", "real_level"]

#: How much of a yarn.lock is read to tell yarn 2+ (its ``__metadata:`` block comes first) from yarn 1.
_YARN_HEAD = 4096

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


def _manager(view: FsView, root: str) -> tuple[str | None, str]:
    """(lockfile, manager): the first lockfile there is, and the package manager that wrote it."""
    for name, manager in LOCKFILES:
        path = join(root, name)
        entry = view.lstat(path)
        if not isinstance(entry, Entry) or entry.kind != "file":
            continue
        if manager == "yarn":
            head = view.read_text(path, _YARN_HEAD)
            if isinstance(head, str) and "__metadata:" in head:
                manager = "yarn-berry"
        return name, manager
    return None, "npm"


def _locked(view: FsView, root: str, lockfile: str | None, package: str) -> bool | None:
    """Whether the lockfile names *package*; ``None`` without a lockfile whose text can be read."""
    if lockfile is None or lockfile.endswith(".lockb"):
        return None
    text = view.read_text(join(root, lockfile), 64 << 20)
    return package in text if isinstance(text, str) else None


def binding_presence(env: Environment, view: FsView, triple: str | None, found: bool) -> BindingPresence:
    """What the binding lookup finds for this host; *found*: whether :func:`locate_binding` found the file.

    The lockfile is read whole only when the package is missing: whether it
    lists the package says how the tree was made, and nothing else needs it.
    """
    root = env.workspace_root
    nx_dir = view.realpath(join(root, "node_modules", "nx"))
    lockfile, manager = _manager(view, root)
    package = None if triple is None else f"@nx/nx-{triple}"
    if isinstance(nx_dir, int) or not isinstance(view.stat(join(nx_dir, "package.json")), Entry):
        return BindingPresence("no-nx", triple, package, (), lockfile, manager, None, None)
    if triple is None or package is None:
        return BindingPresence("unknown-platform", None, None, (), lockfile, manager, None, nx_dir)
    if found:
        return BindingPresence("ok", triple, package, (), lockfile, manager, None, nx_dir)
    locked = _locked(view, root, lockfile, package)
    others: list[str] = []
    for directory in _package_dirs(view, nx_dir):
        names = view.listdir(directory)
        if isinstance(names, int):
            continue
        for name in sorted(names):
            if name.startswith("nx-") and name != f"nx-{triple}" and f"@nx/{name}" not in others:
                others.append(f"@nx/{name}")
    return BindingPresence("missing", triple, package, tuple(others), lockfile, manager, locked, nx_dir)


def platform_triple(platform: str, machine: str, musl: bool) -> str | None:
    """``linux-x64-gnu``, ``darwin-arm64``, ``win32-x64-msvc``…: the suffix of Nx's binding package."""
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64", "armv7l": "arm"}.get(machine.lower())
    if arch is None:
        return None
    if platform == "linux":
        return "linux-arm-gnueabihf" if arch == "arm" else f"linux-{arch}-{'musl' if musl else 'gnu'}"
    if platform == "darwin":
        return f"darwin-{arch}" if arch != "arm" else None
    if platform == "win32":
        return f"win32-{arch}-msvc" if arch != "arm" else None
    return None


def host_triple() -> str | None:
    """This machine's triple; musl is told from the C library the interpreter runs on."""
    try:
        musl = not os.confstr("CS_GNU_LIBC_VERSION")
    except (ValueError, OSError):
        musl = True
    platform = "darwin" if os.uname().sysname == "Darwin" else "linux"
    return platform_triple(platform, os.uname().machine, musl)


def locate_binding(env: Environment, view: FsView, triple: str | None) -> tuple[str, Entry] | None:
    """The binding file Nx loads, resolved as Node resolves it, with its stat; ``None`` where there is none.

    A local build beside Nx's loader comes first, then ``@nx/nx-<triple>`` in each
    ``node_modules`` Node searches from ``node_modules/nx``'s real path.
    """
    if triple is None:
        return None
    package_dir = view.realpath(join(env.workspace_root, "node_modules", "nx"))
    if isinstance(package_dir, int):
        return None
    file_name = f"nx.{triple}.node"
    candidates = [join(package_dir, "src", "native", file_name), join(package_dir, "dist", "src", "native", file_name)]
    level = package_dir
    while True:
        if basename(level) != "node_modules":
            candidates.append(join(level, "node_modules", "@nx", f"nx-{triple}", file_name))
        parent = level.rsplit("/", 1)[0] or "/"
        if parent == level:
            break
        level = parent
    for candidate in candidates:
        entry = view.stat(candidate)
        if not isinstance(entry, Entry) or entry.kind != "file":
            continue
        real = view.realpath(candidate)
        return (real if isinstance(real, str) else candidate), entry
    return None


class Loadability(t.NamedTuple):
    """Whether Nx can load its binding here, as its mounts allow (``noexec`` refuses every shared object on them).

    *state*: ``ok``; ``cache-noexec`` (the copy fails to load and this release
    does not fall back: every command fails); ``cache-noexec-falls-back`` (it
    loads the binding in place instead); ``binding-noexec`` (Nx loads the
    binding in place, and its own mount refuses it too).
    """

    state: t.Literal["ok", "cache-noexec", "cache-noexec-falls-back", "binding-noexec"]
    cache_mount: str | None  # the mount point of a noexec mount the cache lies on
    binding_mount: str | None  # the mount point of a noexec mount the binding lies on


def loadability(rules: ReleaseRules, cache_dir: str | None, bypassed: bool, binding: str | None,
                mounts: t.Sequence[Mount]) -> Loadability:
    """Where Nx loads its binding from (its copy in *cache_dir*, else in place) and whether that mount allows it.

    *cache_dir* and *binding*: real paths, or the nearest level of them that exists.
    """
    from ..core.mounts import mount_of

    def noexec_mount(path: str | None) -> str | None:
        mount = None if path is None else mount_of(mounts, path)
        return mount.mount_point if mount is not None and mount.noexec else None

    cache_mount = None if bypassed else noexec_mount(cache_dir)
    binding_mount = noexec_mount(binding)
    in_place = bypassed or cache_dir is None or (cache_mount is not None and rules.cache_dlopen_falls_back)
    if cache_mount is not None and not rules.cache_dlopen_falls_back:
        return Loadability("cache-noexec", cache_mount, binding_mount)
    if in_place and binding_mount is not None:
        return Loadability("binding-noexec", cache_mount, binding_mount)
    if cache_mount is not None:
        return Loadability("cache-noexec-falls-back", cache_mount, binding_mount)
    return Loadability("ok", None, binding_mount)


def real_level(view: FsView, path: str | None) -> str | None:
    """*path* resolved, or its nearest level that exists, resolved (a cache directory Nx has yet to create)."""
    if path is None:
        return None
    level = path
    while True:
        real = view.realpath(level)
        if isinstance(real, str):
            return real if level == path else real.rstrip("/") + path[len(level):]
        if dirname(level) == level:
            return None
        level = dirname(level)


class BindingVerdict(t.NamedTuple):
    """What ``paths --json`` and ``doctor --json`` say of the binding: the one this host needs, there, and loadable."""

    presence: BindingPresence
    path: str | None  # the binding file Nx loads, resolved; None where none is installed
    loads: Loadability | None  # None where nothing is installed to load, or the mount table cannot be read
    loads_from: t.Literal["cache", "in-place"] | None  # None where nothing is installed to load

    @property
    def loadable(self) -> bool | None:
        """Whether Nx loads a binding here: ``False`` when it is missing or a ``noexec`` mount refuses it."""
        if self.presence.state == "missing":
            return False
        if self.path is None or self.loads is None:
            return None
        return self.loads.state not in ("cache-noexec", "binding-noexec")


def binding_verdict(resolution: Resolution, view: FsView, triple: str | None) -> BindingVerdict:
    """The binding this host needs, whether it is installed, and whether the mounts let the release in hand load it."""
    env = resolution.environment
    located = locate_binding(env, view, triple)
    presence = binding_presence(env, view, triple, located is not None)
    if located is None:
        return BindingVerdict(presence, None, None, None)
    path = located[0]
    cache = resolution.native_cache
    bypassed = cache.bypass_reason is not None or cache.dir is None
    loads = None
    table = view.read_text("/proc/self/mountinfo")
    if isinstance(table, str):
        from ..core.mounts import parse_mountinfo

        loads = loadability(resolution.rules, real_level(view, cache.dir), bypassed, real_level(view, path),
                            parse_mountinfo(table))
    in_place = bypassed or (loads is not None and loads.state in ("cache-noexec-falls-back", "binding-noexec"))
    return BindingVerdict(presence, path, loads, "in-place" if in_place else "cache")
