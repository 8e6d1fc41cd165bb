"""The explicit snapshot of everything the resolver depends on besides the filesystem.

Nx reads its process environment, its workspace's ``.env`` files, the account
it runs as and the Nx package installed in the workspace.  An
:class:`Environment` holds all of that as plain values, each variable with
where it came from, so the resolver can be pure and so another machine
(``--platform``) is just another snapshot.
"""

import os
import typing as t

from ._pathname import is_absolute, normalize, resolve
from .fsview import FsView
from .host_overrides import Platform

__all__ = [
    "RELEVANT_VARIABLES",
    "Environment",
    "Variable",
    "dirname_of",
    "home_directory",
    "host_environment",
]

#: Variables nxsock reads, reports and lets ``.env`` files set.
RELEVANT_VARIABLES = (
    "NX_SOCKET_DIR",
    "NX_DAEMON_SOCKET_DIR",
    "NX_NATIVE_FILE_CACHE_DIRECTORY",
    "NX_SKIP_NATIVE_FILE_CACHE",
    "NX_DAEMON",
    "NX_WORKSPACE_DATA_DIRECTORY",
    "NX_PROJECT_GRAPH_CACHE_DIRECTORY",
    "NX_CACHE_DIRECTORY",
    "NX_ALLOW_INSECURE_DIRECTORIES",
    "NX_ISOLATE_PLUGINS",
    "NX_WORKSPACE_ROOT_PATH",
    "HOME",
    "TMPDIR",
    "TMP",
    "TEMP",
    "XDG_RUNTIME_DIR",
    "SANDBOX_RUNTIME",
    "GEMINI_SANDBOX",
    "CODEX_SANDBOX",
    "CODEX_SANDBOX_NETWORK_DISABLED",
    "CURSOR_SANDBOX",
)

class Variable(t.NamedTuple):
    """A variable's value and where it came from: ``environment``, an option, or a ``.env`` path."""

    value: str
    source: str


class Environment(t.NamedTuple):
    """Who, where and with what settings Nx would run."""

    platform: Platform
    uid: int
    gid: int
    groups: tuple[int, ...]
    username: str | None  # the passwd name, None without an entry
    passwd_home: str | None  # the passwd home directory, None without an entry
    cwd: str
    workspace_root: str
    workspace_source: str
    nx_version: str | None
    nx_version_source: str | None  # "installed" | "--nx-version" | None
    variables: t.Mapping[str, Variable]
    umask: int = 0o022
    simulated: bool = False  # a fresh machine of another platform, not this host

    def get(self, name: str) -> str | None:
        """A variable's value, or ``None`` when unset."""
        var = self.variables.get(name)
        return None if var is None else var.value

    def nonempty(self, name: str) -> str | None:
        """A variable's value, with an empty value counted as unset (as Nx does)."""
        return self.get(name) or None

    def node_tmpdir(self) -> str:
        """``os.tmpdir()`` as Node computes it: ``$TMPDIR``, ``$TMP``, ``$TEMP``, else ``/tmp``."""
        if self.platform == "win32":
            value = self.nonempty("TEMP") or self.nonempty("TMP") or "C:\\Windows\\Temp"
            return value.rstrip("\\") if len(value) > 3 else value
        value = self.nonempty("TMPDIR") or self.nonempty("TMP") or self.nonempty("TEMP") or "/tmp"
        return value[:-1] if len(value) > 1 and value.endswith("/") else value

    def rust_tmpdir(self) -> str:
        """``std::env::temp_dir()`` as the Nx 24 crate sees it: ``$TMPDIR``, else ``/tmp``."""
        return resolve(self.nonempty("TMPDIR") or "/tmp", self.cwd)


def _passwd(uid: int) -> tuple[str | None, str | None, int | None]:
    """The account's name, home and group from its passwd entry, or ``None`` each without one."""
    try:
        import pwd
    except ImportError:  # pragma: no cover - Windows
        return None, None, None
    try:
        entry = pwd.getpwuid(uid)
    except (KeyError, OverflowError):
        return None, None, None
    return entry.pw_name, entry.pw_dir, entry.pw_gid


def _umask() -> int:
    """The process umask, read from ``/proc`` where possible (setting it to read it is a race)."""
    try:
        fd = os.open("/proc/self/status", os.O_RDONLY)
        try:
            status = os.read(fd, 4096)
        finally:
            os.close(fd)
        for line in status.splitlines():
            if line.startswith(b"Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o022


def host_environment(
    view: FsView,
    *,
    environ: t.Mapping[str, str] | None = None,
    cwd: str | None = None,
    workspace: str | None = None,
    nx_version: str | None = None,
    home: str | None = None,
    tmpdir: str | None = None,
    uid: int | None = None,
    username: str | None = None,
) -> Environment:
    """Snapshot this process: its ids, cwd, variables (with the workspace's ``.env`` files) and Nx version."""
    from .dotenv import load_dotenv_variables
    from .workspace import find_workspace_root, read_nx_version

    environ = dict(os.environ if environ is None else environ)
    if cwd is None:
        try:
            cwd = os.getcwd()
        except OSError:
            cwd = environ.get("PWD") or "/"
    passwd_name, passwd_home, passwd_gid = _passwd(os.getuid() if uid is None else uid)
    if uid is None or uid == os.getuid():
        uid, gid, groups = os.getuid(), os.getgid(), tuple(os.getgroups())
    else:  # another user's view of this host: their primary group only
        gid, groups = (uid if passwd_gid is None else passwd_gid), ()
    variables = {k: Variable(v, "environment") for k, v in environ.items() if k in RELEVANT_VARIABLES}
    for name, value in (("HOME", home), ("TMPDIR", tmpdir)):
        if value is not None:
            variables[name] = Variable(value, f"--{name.lower()}")
    if workspace is not None:
        root, source = workspace, "--workspace"
    else:
        root, source = find_workspace_root(view, cwd, environ.get("NX_WORKSPACE_ROOT_PATH"))
    plain = {k: v.value for k, v in variables.items()}
    for key, var in load_dotenv_variables(view, root, {**environ, **plain}, RELEVANT_VARIABLES).items():
        variables[key] = var
    installed = read_nx_version(view, root)
    return Environment(
        platform="darwin" if os.uname().sysname == "Darwin" else "linux",
        uid=uid,
        gid=gid,
        groups=groups,
        username=username if username is not None else passwd_name,
        passwd_home=passwd_home,
        cwd=cwd,
        workspace_root=root,
        workspace_source=source,
        nx_version=nx_version or installed,
        nx_version_source="--nx-version" if nx_version else ("installed" if installed else None),
        variables=variables,
        umask=_umask(),
    )


def dirname_of(path: str) -> str:
    """The directory holding *path* (``/`` for a top-level name)."""
    return path.rstrip("/").rsplit("/", 1)[0] or "/"


def home_directory(env: Environment, generation: str = "native", *, passwd_fallback: bool | None = None) -> str | None:
    """The home Nx would use for ``~/.nx``, or ``None``: it must be absolute.

    Node's ``os.homedir()`` (23.x) takes ``$HOME`` when set at all — an empty
    one means no home; the Nx 24 crate falls back to the passwd entry when
    ``$HOME`` is empty (*passwd_fallback*, the release table's rule; else
    told from the generation).
    """
    raw = env.get("HOME")
    if passwd_fallback if passwd_fallback is not None else generation == "native":
        home = raw or env.passwd_home
    else:
        home = raw if raw is not None else env.passwd_home
    if not home or not is_absolute(home):
        return None
    return normalize(home)

