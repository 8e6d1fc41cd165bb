"""The explicit snapshot of everything the resolver depends on besides the filesystem.

Nx reads its process environment, its workspace's ``.env`` files, the account
it runs as and the Nx package installed in the workspace.  An
:class:`Environment` holds all of that as plain values, each variable with
where it came from, so the resolver can be pure and so another machine
(``--platform``) is just another snapshot.
"""

import typing as t

from ._pathname import is_absolute, normalize, resolve
from .host_overrides import Platform

__all__ = [
    "DAEMON_SWITCH_VARIABLES",
    "RELEVANT_VARIABLES",
    "Environment",
    "Variable",
    "dirname_of",
    "home_directory",
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

#: Variables Nx's client reads only to decide whether its daemon is on (``nxsock.core.daemon_switch``): the CI
#: markers of ``isCI()`` and the binding loader's ``NAPI_RS_FORCE_WASI``.  Reported and read from ``.env`` files like
#: the others, but no place Nx puts anything depends on them, so the trust rule does not judge them.
DAEMON_SWITCH_VARIABLES = (
    "CI",
    "TF_BUILD",
    "GITHUB_ACTIONS",
    "BUILDKITE",
    "CIRCLECI",
    "CIRRUS_CI",
    "TRAVIS",
    "bamboo.buildKey",
    "bamboo_buildKey",
    "CODEBUILD_BUILD_ID",
    "GITLAB_CI",
    "HEROKU_TEST_RUN_ID",
    "BUILD_ID",
    "BUILD_NUMBER",
    "BUILD_BUILDID",
    "TEAMCITY_VERSION",
    "JENKINS_URL",
    "HUDSON_URL",
    "NAPI_RS_FORCE_WASI",
)


class Variable(t.NamedTuple):
    """A variable's value and where it came from: ``environment``, an option, or a ``.env`` path."""

    value: str
    source: str
    #: The value as written in the ``.env`` file, when ``${VAR}`` expansion changed it; else ``None``.
    written: str | None = None
    #: The variables of the environment (not of a file) the expansion drew on, by name.
    expanded_from: tuple[str, ...] = ()


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
    #: Why nothing may be acted on for this uid: a variable nxsock reads is set in a file the trust rule refuses
    #: (another user's ``.env``), so Nx's levels are where that user says; judged when the snapshot is taken.
    steered: str | None = None
    #: ``(expanded, written)`` text no public report may show expanded: what a ``.env`` the trust rule refuses drew
    #: from this process's environment (``${GITHUB_TOKEN}``), each to be shown as written
    #: (:func:`~nxsock.core.redaction.withhold`).
    withheld: tuple[tuple[str, str], ...] = ()
    #: A ``version`` that is not a version by semver's grammar, and where it was read (``--nx-version`` or the
    #: ``package.json``): kept to be reported, escaped, never used — ``nx_version`` is then ``None``.
    nx_version_rejected: tuple[str, str] | None = None

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


def dirname_of(path: str) -> str:
    """The directory holding *path* (``/`` for a top-level name)."""
    return path.rstrip("/").rsplit("/", 1)[0] or "/"


def home_directory(env: Environment, *, passwd_fallback: bool) -> str | None:
    """The home Nx would use for ``~/.nx``, or ``None``: it must be absolute.

    Node's ``os.homedir()`` (23.x) takes ``$HOME`` when set at all — an empty
    one means no home; the Nx 24 crate falls back to the passwd entry when
    ``$HOME`` is empty.  *passwd_fallback* is the release table's
    ``empty_home_uses_passwd``, never guessed here.
    """
    raw = env.get("HOME")
    if passwd_fallback:
        home = raw or env.passwd_home
    else:
        home = raw if raw is not None else env.passwd_home
    if not home or not is_absolute(home):
        return None
    return normalize(home)

