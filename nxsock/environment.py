"""The explicit snapshot of everything the resolver depends on besides the filesystem.

Nx reads its process environment, its workspace's ``.env`` files, the account
it runs as and the Nx package installed in the workspace.  An
:class:`Environment` holds all of that as plain values, each variable with
where it came from, so the resolver can be pure and so another machine
(``--platform``) is just another snapshot.
"""

import os
import re
import typing as t

from ._pathname import is_absolute, join, normalize, resolve
from .fsview import Entry, FsView, MemoryView
from .json_input import JsonInputError, parse_json

__all__ = [
    "RELEVANT_VARIABLES",
    "Environment",
    "Variable",
    "find_workspace_root",
    "parse_dotenv",
    "read_nx_version",
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

#: The files Nx loads from the workspace root, first match wins among them.
DOTENV_FILES = (".local.env", ".env.local", ".env")


class Variable(t.NamedTuple):
    """A variable's value and where it came from: ``environment``, an option, or a ``.env`` path."""

    value: str
    source: str


class Environment(t.NamedTuple):
    """Who, where and with what settings Nx would run."""

    platform: str  # "linux" | "darwin" | "win32"
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


#: The most of a ``.env`` file read; the rest is ignored (a real one is a few hundred bytes).
DOTENV_LIMIT = 1 << 20
#: The longest value ``${VAR}`` expansion may build; beyond it the value is kept unexpanded.
EXPANSION_LIMIT = 1 << 16

# dotenv's own line pattern, but for the leading blank: horizontal only.  Its ``^\s*`` under MULTILINE
# spans newlines, so every line start rescanned every blank line after it — quadratic in a file of
# blank lines.  Each key still matches at its own line's start, so what is parsed is the same.
_DOTENV_LINE = re.compile(
    r"""^[^\S\n]*(?:export\s+)?([\w.-]+)(?:\s*=\s*?|:\s+?)(\s*'(?:\\'|[^'])*'|\s*"(?:\\"|[^"])*"|\s*`(?:\\`|[^`])*`|[^#\r\n]+)?\s*(?:\#.*)?$""",
    re.MULTILINE,
)


def parse_dotenv(text: str) -> dict[str, str]:
    """Parse a ``.env`` file as the ``dotenv`` package Nx uses does (first definition of a key wins later).

    Linear in the text, whatever it holds; at most :data:`DOTENV_LIMIT` characters are read.
    """
    parsed: dict[str, str] = {}
    for match in _DOTENV_LINE.finditer(text[:DOTENV_LIMIT].replace("\r\n", "\n").replace("\r", "\n")):
        key, raw = match.group(1), (match.group(2) or "").strip()
        quote = raw[:1]
        if len(raw) >= 2 and quote in "'\"`" and raw.endswith(quote):
            raw = raw[1:-1]
        if quote == '"':
            raw = raw.replace("\\n", "\n").replace("\\r", "\r")
        parsed[key] = raw
    return parsed


def _expand(value: str, lookup: t.Mapping[str, str]) -> str:
    """``${VAR}``, ``$VAR``, ``${VAR:-default}`` and ``${VAR:+alt}`` as ``dotenv-expand`` reads them."""
    expansion = re.compile(r"(?<!\\)\$\{([^{}]+)\}|(?<!\\)\$([A-Za-z_][A-Za-z0-9_]*)")
    for _ in range(64):  # self-reference stops, as it does there
        if len(value) > EXPANSION_LIMIT:  # a value built to exhaust memory: no real path is this long
            break
        match = expansion.search(value)
        if match is None:
            break
        expression = match.group(1) or match.group(2)
        op = re.search(r":\+|\+|:-|-", expression)
        if op:
            key, default = expression[: op.start()], expression[op.end() :]
        else:
            key, default = expression, ""
        if op and op.group() in (":+", "+"):
            replacement = default if lookup.get(key) else ""
        else:
            replacement = lookup.get(key) or default
        value = value[: match.start()] + replacement + value[match.end() :]
    return value.replace("\\$", "$")


def load_dotenv_variables(
    view: FsView, workspace_root: str, environ: t.Mapping[str, str], wanted: t.Container[str] | None = None
) -> dict[str, Variable]:
    """The variables (the *wanted* ones, else all) Nx's root ``.env`` files add: the environment wins, then the first file to set a key.

    Only what is returned is expanded, each expansion bounded, so a file of
    many keys referring to one long value costs no more than its few wanted keys.
    """
    found: dict[str, Variable] = {}
    for name in DOTENV_FILES:
        path = join(workspace_root, name)
        text = view.read_text(path, DOTENV_LIMIT)
        if isinstance(text, int):
            continue
        for key, value in parse_dotenv(text).items():
            if key not in found:
                found[key] = Variable(value, path)
    lookup = {k: v.value for k, v in found.items()}
    lookup.update(environ)
    return {
        key: Variable(_expand(var.value, lookup), var.source)
        for key, var in found.items()
        if not environ.get(key) and (wanted is None or key in wanted)
    }


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


def fresh_environment(
    platform: str,
    *,
    uid: int | None = None,
    username: str | None = None,
    home: str | None = None,
    tmpdir: str | None = None,
    workspace: str | None = None,
    nx_version: str | None = None,
) -> Environment:
    """A new user on a fresh machine of *platform*, for ``--platform``: nothing is read from this host.

    Each value says where it came from: the option that gave it, or the
    platform's default for a new user (macOS gives every user a ``$TMPDIR``
    of its own under ``/var/folders``; Windows one under the profile).
    """
    default = f"the {platform} default for a new user"
    home_source = "--home" if home is not None else default
    tmp_source = "--tmpdir" if tmpdir is not None else default
    workspace_source = "--workspace" if workspace is not None else f"{default} (~/workspace)"
    if platform == "win32":
        import ntpath

        username = username or "user"
        home = ntpath.normpath(home or f"C:\\Users\\{username}")
        tmpdir = ntpath.normpath(tmpdir or f"{home}\\AppData\\Local\\Temp")
        workspace = ntpath.normpath(workspace or f"{home}\\workspace")
        uid = 0 if uid is None else uid
        variables = {"TEMP": Variable(tmpdir, tmp_source), "TMP": Variable(tmpdir, tmp_source)}
    else:
        uid = (501 if platform == "darwin" else 1000) if uid is None else uid
        username = username or "user"
        home = home or (f"/Users/{username}" if platform == "darwin" else f"/home/{username}")
        workspace = workspace or join(home, "workspace")
        variables = {}
        if tmpdir is None and platform == "darwin":
            tmpdir = DARWIN_USER_TMPDIR  # launchd sets it for every login; the name varies, not its length
        if tmpdir is not None:
            variables["TMPDIR"] = Variable(tmpdir, tmp_source)
    variables["HOME"] = Variable(home, home_source)
    return Environment(
        platform=platform,
        uid=uid,
        gid=20 if platform == "darwin" else uid,
        groups=(),
        username=username,
        passwd_home=home,
        cwd=workspace,
        workspace_root=workspace,
        workspace_source=workspace_source,
        nx_version=nx_version,
        nx_version_source="--nx-version" if nx_version else None,
        variables=variables,
        simulated=True,
    )


def fresh_machine(env: Environment) -> MemoryView:
    """A new POSIX machine for *env*: root-owned ``/``, a ``1777`` temp dir, the user's home and workspace.

    On darwin ``/tmp`` is a root-owned symlink to ``/private/tmp``.
    """
    root_dir = Entry("dir", 0, 0, 0o755)
    entries = {"/": root_dir, "/private": root_dir} if env.platform == "darwin" else {"/": root_dir}
    entries["/private/tmp" if env.platform == "darwin" else "/tmp"] = Entry("dir", 0, 0, 0o1777)
    links = {"/tmp": "private/tmp", "/var": "private/var"} if env.platform == "darwin" else {}
    mine = Entry("dir", env.uid, env.gid, 0o750 if env.platform == "darwin" else 0o755)
    places = [(env.get("HOME"), mine), (env.workspace_root, mine)]
    tmpdir = env.get("TMPDIR")
    if env.platform == "darwin" and tmpdir and normalize(tmpdir).startswith("/var/folders/"):
        # The per-user temp dir: /private/var/folders/<xx>/<name>/T, the user's own, 0700.
        real = "/private" + normalize(tmpdir)
        entries[dirname_of(real)] = Entry("dir", env.uid, env.gid, 0o755)
        places.append((real, Entry("dir", env.uid, env.gid, 0o700)))
    for path, entry in places:
        if not path or not path.startswith("/"):
            continue
        parts = [p for p in normalize(path).split("/") if p]
        for depth in range(1, len(parts)):
            entries.setdefault("/" + "/".join(parts[:depth]), root_dir)
        entries.setdefault("/" + "/".join(parts), entry)
    return MemoryView(entries, links)


#: What launchd sets ``$TMPDIR`` to for a user on macOS (``confstr(_CS_DARWIN_USER_TEMP_DIR)``): one example,
#: as long as every real one (two characters, then thirty), so budgets come out right.
DARWIN_USER_TMPDIR = "/var/folders/zz/zyxvpxvq6csfxvn_n0000000000000/T/"


def dirname_of(path: str) -> str:
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

