"""Whether Nx's client uses its daemon at all, and every cause that keeps it off, as the release in hand decides.

Nx's ``DaemonClient.enabled()`` (``daemon/client/client.js``) turns the
daemon off for any of these, each named here by a closed vocabulary
(:data:`REASONS`):

- ``version-mismatch``: the Nx run is not the Nx installed in the workspace
  (``isNxVersionMismatch()``: no installed ``nx`` found counts too);
- ``ci``, ``docker``, ``sandbox``: ``isCI()``, a container (``/.dockerenv``
  exists, or ``/proc/self/cgroup`` names docker) and — 23.1.1 to 23.1.3
  only — an agent sandbox's variable, each unless ``NX_DAEMON`` is exactly
  ``true``;
- ``disabled-marker``: ``<workspace-data>/d/disabled`` exists;
- ``no-nx-json``: the workspace root has no ``nx.json``;
- ``NX_DAEMON`` and ``useDaemonProcess``: ``NX_DAEMON`` exactly ``false``
  against an ``nx.json`` ``useDaemonProcess`` that is unset, ``true`` or
  ``false``; ``useDaemonProcess: false`` with ``NX_DAEMON`` unset or ``false``;
- ``wasm``: the WebAssembly binding is loaded (``NAPI_RS_FORCE_WASI``).

The strings are Nx's, exactly: ``NX_DAEMON=TRUE`` or ``=1`` overrides
nothing (and turns nothing off), ``CI=false`` beats every other CI variable,
any other non-empty ``CI`` is CI, and ``nx.json`` is read as JSON with
comments and trailing commas, a file Nx cannot parse counting as no setting.
How each release decides is in ``docs/daemon-verdict.md``.

:func:`gather` reads the facts from an :class:`~nxsock.core.environment.Environment`
and a view; :func:`decide` is pure.  Both return frozen values.
"""

# No ``from __future__ import annotations`` here: typing compiles each string annotation of a NamedTuple
# field when the class is made, and this module is imported by every ``paths --json``.
import re
import typing as t

from ._pathname import join
from .environment import Environment
from .fsview import Entry, FsView
from .json_input import JsonInputError, parse_json
from .releases import ReleaseRules

__all__ = [
    "CI_SET_VARIABLES",
    "CI_TRUE_VARIABLES",
    "OVERRIDDEN_BY_NX_DAEMON_TRUE",
    "REASONS",
    "SANDBOX_VARIABLES",
    "DaemonFacts",
    "DaemonSwitch",
    "JsoncError",
    "ci_variable",
    "decide",
    "docker_evidence",
    "gather",
    "judge",
    "parse_jsonc",
    "reason_sentence",
]

#: Every cause that turns the daemon off, in the order they are reported.
REASONS = (
    "NX_DAEMON",
    "useDaemonProcess",
    "ci",
    "docker",
    "sandbox",
    "disabled-marker",
    "no-nx-json",
    "version-mismatch",
    "wasm",
)
#: The causes ``NX_DAEMON=true`` (exactly) overrides: every other one keeps the daemon off whatever it says.
OVERRIDDEN_BY_NX_DAEMON_TRUE = frozenset({"NX_DAEMON", "useDaemonProcess", "ci", "docker", "sandbox"})

#: ``isCI()`` (``utils/is-ci.js``): these count when exactly ``true`` ...
CI_TRUE_VARIABLES = ("TF_BUILD", "GITHUB_ACTIONS", "BUILDKITE", "CIRCLECI", "CIRRUS_CI", "TRAVIS")
#: ... these when set to anything non-empty (and ``CI`` itself when non-empty and not exactly ``false``).
CI_SET_VARIABLES = (
    "bamboo.buildKey", "bamboo_buildKey", "CODEBUILD_BUILD_ID", "GITLAB_CI", "HEROKU_TEST_RUN_ID", "BUILD_ID",
    "BUILD_NUMBER", "BUILD_BUILDID", "TEAMCITY_VERSION", "JENKINS_URL", "HUDSON_URL",
)
#: ``isSandbox()`` (``utils/is-sandbox.js``): any of these non-empty.
SANDBOX_VARIABLES = (
    "SANDBOX_RUNTIME",
    "GEMINI_SANDBOX",
    "CODEX_SANDBOX",
    "CODEX_SANDBOX_NETWORK_DISABLED",
    "CURSOR_SANDBOX",
)

#: ``nx.json``'s ``useDaemonProcess`` as Nx compares it: absent (or no readable file), ``true``, ``false``, or
#: anything else (``"false"``, ``null``, ``0``), which matches none of Nx's comparisons.
Setting = t.Literal["unset", "true", "false", "other"]


class DaemonFacts(t.NamedTuple):
    """What Nx's client looks at, read once: each is the evidence a reason's sentence names."""

    nx_daemon: str | None  # NX_DAEMON as set (None: unset)
    nx_daemon_source: str | None  # where it came from: environment, or a .env path
    ci: str | None  # the variable that makes isCI() true, e.g. "CI" or "GITHUB_ACTIONS"
    docker: str | None  # "/.dockerenv" or "/proc/self/cgroup", whichever told a container
    sandbox: str | None  # the agent sandbox's variable, e.g. "SANDBOX_RUNTIME"
    marker: str  # <workspace-data>/d/disabled
    marker_present: bool
    nx_json: str  # <workspace>/nx.json
    nx_json_present: bool
    use_daemon_process: Setting
    nx_json_problem: str | None  # why Nx reads no setting from an nx.json that exists (unparsable, its extends)
    installed_version: str | None  # the Nx installed in the workspace, as Nx resolves it
    running_version: str | None  # the Nx that runs: the installed one unless --nx-version names another
    wasm: bool  # NAPI_RS_FORCE_WASI with the WebAssembly binding installed


class DaemonSwitch(t.NamedTuple):
    """The verdict: on or off, and every cause that turns it off (empty when on)."""

    enabled: bool
    reasons: tuple[str, ...]
    release: str  # the release whose rules decided
    sandbox_rule: bool  # this release's client turns the daemon off inside an agent sandbox
    facts: DaemonFacts


# -- nx.json, read as Nx reads it -----------------------------------------------------------------------------


class JsoncError(ValueError):
    """Text Nx's ``parseJson`` would refuse."""


#: A string (perhaps unterminated), a line comment, a block comment, or an unclosed one.
_JSONC_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"?|//[^\n]*|/\*.*?\*/|/\*', re.DOTALL)
#: A string, or a comma that only white space separates from the } or ] that closes its container.
_TRAILING_COMMA = re.compile(r'"(?:[^"\\]|\\.)*"?|,(?=\s*[}\]])', re.DOTALL)


def _uncomment(match: "re.Match[str]") -> str:
    token = match.group()
    if token[0] == '"':
        return token
    if token == "/*":
        raise JsoncError("has an unterminated comment")
    return "" if token[1] == "/" else " "


def _strip_jsonc(text: str) -> str:
    """*text* without comments and trailing commas, as ``jsonc-parser`` (``allowTrailingComma``) reads it; linear,
    by regular expressions rather than a loop per character."""
    if "/" in text:
        text = _JSONC_TOKEN.sub(_uncomment, text)
    return _TRAILING_COMMA.sub(_untrail, text)


def _untrail(match: "re.Match[str]") -> str:
    """A trailing comma dropped, but only after a value: ``[,]`` and ``{,}`` stay errors, as they are to
    jsonc-parser."""
    token = match.group()
    if token[0] == '"':
        return token
    text, i = match.string, match.start() - 1
    while i >= 0 and text[i] in " \t\r\n":  # each gap of white space is walked once, before its one comma
        i -= 1
    return token if i < 0 or text[i] in "{[," else " "


def parse_jsonc(text: str) -> t.Any:
    """The value of a JSON-with-comments text (``nx.json``), bounded as :func:`~nxsock.core.json_input.parse_json` is.

    >>> parse_jsonc('// the workspace\\n{ /* on */ "useDaemonProcess": false, }')
    {'useDaemonProcess': False}
    >>> parse_jsonc('{"a": "// not a comment",}')
    {'a': '// not a comment'}
    """
    try:
        return parse_json(text)
    except JsonInputError:
        pass
    try:
        return parse_json(_strip_jsonc(text))
    except JsonInputError as exc:
        raise JsoncError(str(exc)) from None


def _read_json_file(view: FsView, path: str) -> t.Any:
    text = view.read_text(path, follow=True)  # readFileSync follows a link
    if isinstance(text, int):
        raise JsoncError("cannot be read")
    return parse_jsonc(text)


def _setting(value: object) -> Setting:
    if value is True:
        return "true"
    if value is False:
        return "false"
    return "other"


def _is_file(view: FsView, path: str) -> bool:
    entry = view.stat(path)
    return isinstance(entry, Entry) and entry.kind == "file"


def _ancestors(directory: str) -> t.Iterator[str]:
    while True:
        yield directory
        parent = directory.rstrip("/").rsplit("/", 1)[0] or "/"
        if parent == directory:
            return
        directory = parent


def _require_paths(root: str) -> tuple[str, str]:
    """``getNxRequirePaths(root)``: the ``.nx/installation`` of the workspace first, then the workspace."""
    return join(root, ".nx", "installation"), root


def _resolve_file(view: FsView, specifier: str, root: str) -> str | None:
    """``require.resolve(specifier, {paths})`` for a file, as far as nxsock follows Node: the exact file, then
    ``.json``; a relative or absolute specifier from each path, a package one through every ``node_modules`` above
    it."""
    for base in _require_paths(root):
        if specifier.startswith(("./", "../", "/")) or specifier in (".", ".."):
            candidates = [specifier if specifier.startswith("/") else join(base, specifier)]
        else:
            candidates = [join(d, "node_modules", specifier) for d in _ancestors(base)]
        for candidate in candidates:
            for path in (candidate, candidate + ".json"):
                if _is_file(view, path):
                    return path
    return None


def _nx_json_setting(view: FsView, root: str, path: str) -> tuple[Setting, str | None]:
    """``this.nxJson?.useDaemonProcess`` as the client reads it: ``readNxJson()``, with its ``extends``, or
    nothing at all (any error) — and why nothing, for the sentence."""
    try:
        own = _read_json_file(view, path)
    except JsoncError as exc:
        return "unset", f"{path} {exc}, so Nx reads no settings from it"
    if not isinstance(own, dict):
        return "unset", None
    merged = own
    if own.get("extends"):
        specifier = own["extends"]
        base_path = _resolve_file(view, specifier, root) if isinstance(specifier, str) else None
        if base_path is None:
            return "unset", f"{path} extends {specifier!r}, which Nx cannot resolve, so it reads no settings from it"
        try:
            base = _read_json_file(view, base_path)
        except JsoncError as exc:
            return "unset", f"{path} extends {base_path}, which {exc}, so Nx reads no settings from it"
        merged = {**base, **own} if isinstance(base, dict) else own
    if "useDaemonProcess" not in merged:
        return "unset", None
    return _setting(merged["useDaemonProcess"]), None


# -- the environment and the host ------------------------------------------------------------------------------


def ci_variable(get: t.Callable[[str], str | None]) -> str | None:
    """The variable that makes Nx's ``isCI()`` true, or ``None``: ``CI=false`` (exactly) beats every other.

    >>> env = {"CI": "false", "GITHUB_ACTIONS": "true"}.get
    >>> ci_variable(env), ci_variable({"CI": "0"}.get), ci_variable({"GITHUB_ACTIONS": "TRUE"}.get)
    (None, 'CI', None)
    """
    if get("CI") == "false":
        return None
    if get("CI"):
        return "CI"
    for name in CI_TRUE_VARIABLES:
        if get(name) == "true":
            return name
    for name in CI_SET_VARIABLES:
        if get(name):
            return name
    return None


def docker_evidence(view: FsView) -> str | None:
    """What makes Nx's ``isDocker()`` true: ``/.dockerenv`` exists (any kind, a link followed), else
    ``/proc/self/cgroup`` holds ``docker``; ``None`` for neither."""
    if isinstance(view.stat("/.dockerenv"), Entry):
        return "/.dockerenv"
    cgroup = view.read_text("/proc/self/cgroup")
    if isinstance(cgroup, str) and "docker" in cgroup:
        return "/proc/self/cgroup"
    return None


def _installed_version(env: Environment, view: FsView) -> str | None:
    """``getInstalledNxVersion()``: ``nx/package.json`` resolved from the workspace's ``.nx/installation``, then
    from the workspace, through every ``node_modules`` above each."""
    if env.nx_version_source == "installed":
        return env.nx_version
    for base in _require_paths(env.workspace_root):
        for directory in _ancestors(base):
            text = view.read_text(join(directory, "node_modules", "nx", "package.json"))
            if isinstance(text, int):
                continue
            try:
                version = parse_json(text).get("version")
            except (JsonInputError, AttributeError):
                return None  # Nx's readJsonFile throws there, and counts no installed version
            return version if isinstance(version, str) else None
    return None


def _running_version(env: Environment) -> str | None:
    """The Nx that runs: the installed one, as the string Nx compares — even one nxsock refuses to build a path from
    (``env.nx_version_rejected``), which the same ``package.json`` gives both sides, so it is no mismatch."""
    if env.nx_version is None and env.nx_version_rejected is not None:
        return env.nx_version_rejected[0]
    return env.nx_version


def gather(env: Environment, view: FsView, daemon_dir: str) -> DaemonFacts:
    """Read what the client looks at, over *view* (this host, or a simulated machine); *daemon_dir* is
    ``<workspace-data>/d``."""
    get = env.get
    nx_daemon = env.variables.get("NX_DAEMON")
    marker = join(daemon_dir, "disabled")
    nx_json = join(env.workspace_root, "nx.json")
    present = isinstance(view.stat(nx_json), Entry)  # existsSync: any kind, a link followed
    setting, problem = _nx_json_setting(view, env.workspace_root, nx_json) if present else ("unset", None)
    sandbox = next((name for name in SANDBOX_VARIABLES if get(name)), None)
    wasm = bool(get("NAPI_RS_FORCE_WASI")) and any(
        isinstance(view.stat(join(directory, "node_modules", "@nx", "nx-wasm32-wasi", "package.json")), Entry)
        for base in _require_paths(env.workspace_root) for directory in _ancestors(base)
    )
    return DaemonFacts(
        nx_daemon=None if nx_daemon is None else nx_daemon.value,
        nx_daemon_source=None if nx_daemon is None else nx_daemon.source,
        ci=ci_variable(get),
        docker=docker_evidence(view),
        sandbox=sandbox,
        marker=marker,
        marker_present=isinstance(view.stat(marker), Entry),  # statSync: any kind, a link followed
        nx_json=nx_json,
        nx_json_present=present,
        use_daemon_process=setting,
        nx_json_problem=problem,
        installed_version=_installed_version(env, view),
        running_version=_running_version(env),
        wasm=wasm,
    )


# -- the decision ------------------------------------------------------------------------------------------------


def decide(facts: DaemonFacts, rules: ReleaseRules) -> DaemonSwitch:
    """``DaemonClient.enabled()`` of *rules*' release over *facts*, with every cause that turns it off.

    >>> from nxsock.core.releases import rules_for
    >>> facts = DaemonFacts("TRUE", "environment", "CI", None, None, "/d/disabled", False, "/w/nx.json", True,
    ...                     "unset", None, "24.0.6", "24.0.6", False)
    >>> decide(facts, rules_for("24.0.6"))[:2]
    (False, ('ci',))
    >>> decide(facts._replace(nx_daemon="true"), rules_for("24.0.6"))[:2]
    (True, ())
    """
    env, option = facts.nx_daemon, facts.use_daemon_process
    found: set[str] = set()
    if facts.installed_version is None or facts.installed_version != facts.running_version:
        found.add("version-mismatch")
    if env != "true":
        if facts.ci:
            found.add("ci")
        if facts.docker:
            found.add("docker")
        if facts.sandbox and rules.sandbox_disables_daemon:
            found.add("sandbox")
    if facts.marker_present:
        found.add("disabled-marker")
    if not facts.nx_json_present:
        found.add("no-nx-json")
    if env == "false" and option in ("unset", "true", "false"):
        found.add("NX_DAEMON")
    if option == "false" and env in (None, "false"):
        found.add("useDaemonProcess")
    if facts.wasm:
        found.add("wasm")
    reasons = tuple(r for r in REASONS if r in found)
    return DaemonSwitch(not reasons, reasons, rules.release, rules.sandbox_disables_daemon, facts)


def judge(env: Environment, view: FsView, rules: ReleaseRules, daemon_dir: str) -> DaemonSwitch:
    """:func:`gather`, then :func:`decide`."""
    return decide(gather(env, view, daemon_dir), rules)


# -- the words ---------------------------------------------------------------------------------------------------


def reason_sentence(reason: str, verdict: DaemonSwitch) -> str:
    """One clause: why *reason* turns the daemon off here, naming its evidence."""
    f = verdict.facts
    if reason == "NX_DAEMON":
        return f"NX_DAEMON=false is set (from {f.nx_daemon_source})"
    if reason == "useDaemonProcess":
        return f"{f.nx_json} sets useDaemonProcess to false" + ("" if f.nx_daemon is None else
                                                                " (NX_DAEMON=false agrees)")
    if reason == "ci":
        return f"{f.ci} says this is CI, where Nx keeps its daemon off"
    if reason == "docker":
        what = "exists" if f.docker == "/.dockerenv" else "names docker"
        return f"{f.docker} {what}: a container, where Nx keeps its daemon off"
    if reason == "sandbox":
        return (
            f"{f.sandbox} is set: an agent sandbox, where Nx {verdict.release} keeps its daemon off (23.1.1–23.1.3 do)"
        )
    if reason == "disabled-marker":
        return (
            f"{f.marker} exists: a run that could not use the daemon left it, and it keeps the daemon off until removed"
        )
    if reason == "no-nx-json":
        return f"{f.nx_json} does not exist, and Nx runs no daemon without it"
    if reason == "version-mismatch":
        if f.installed_version is None:
            return (
                "no Nx is installed in the workspace (node_modules/nx), so the Nx that runs "
                "matches no installed version"
            )
        return f"Nx {f.running_version} runs but {f.installed_version} is installed in the workspace"
    if reason == "wasm":
        return "NAPI_RS_FORCE_WASI loads the WebAssembly binding, where file watching, and so the daemon, does not work"
    raise ValueError(reason)
