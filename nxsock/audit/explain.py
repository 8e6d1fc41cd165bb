"""``doctor --explain``: recognise every message Nx printed, and answer each with a cause and a command — or why none is
safe.

The patterns are learnt from what the real releases print (the corpus under
``tests/corpus``, captured from real failure states) and kept to the few words
that tell one message from another; nothing of Nx's sentences is reproduced.
Recognition is pure: :func:`explain` reads text and returns values.  Which
remedy fits — the one this machine's state shows, or the message's general
one — is decided by :func:`answer_all` from the doctor's findings.
"""

from __future__ import annotations

import re
import typing as t

from ..core import wording
from ..core._pathname import dirname
from ..core.fsview import Entry
from ..core.mounts import filesystem_name
from ..core.remedy import (
    Create,
    Export,
    NxCommand,
    NxsockCommand,
    Remedy,
    Remove,
    RemoveTree,
    RunNx,
    RunNxsock,
    Step,
    StopProcess,
    Unset,
    Withheld,
    render,
    shell_quote,
)
from ..core.wording import (
    DAEMON_BACK,
    DAEMON_MESSAGE_CAUSES,
    DAEMON_SEEN_HERE,
    INOTIFY_NO_COMMAND,
    MARKER_WITH_CAUSE,
    NO_SOCKETS_HERE,
    NO_SOCKETS_ON,
    NO_SOCKETS_UNSET,
    OS_ERROR_13_NO_PATH,
    PLUGIN_NO_TIMEOUTS,
    PLUGINS_IN_PROCESS,
    READ_ONLY_CACHE_TOO,
    READ_ONLY_NO_COMMAND,
    SHARED_SOCKET_DIR,
    SHARED_SOCKET_DIR_RECORD,
    SHARED_SOCKET_DIR_UNSET,
    WINDOWS_NOT_JUDGED,
    Advice,
    RemedyContext,
    socket_export,
    umask_remedy,
    version_changed_note,
)

__all__ = [
    "MAX_MESSAGES",
    "MAX_TEXT",
    "NO_SAFE_COMMAND",
    "WRAPPERS",
    "Answer",
    "Explanation",
    "Kind",
    "Message",
    "answer",
    "answer_all",
    "explain",
    "general_advice",
    "general_remedy",
    "related",
    "sandbox_format",
    "sandbox_remedy",
]


class Message(t.NamedTuple):
    """One message recognised in the text, where it was, and what it names."""

    matched: str  # which kind of message
    errno: str | None  # the errno name exactly as Nx printed it, or the one its words mean ("os error 13": EACCES)
    path: str | None  # the path the message names, without the punctuation around it
    cause: str
    checks: tuple[str, ...]  # the doctor checks that can see its cause
    start: int
    end: int
    detail: str | None = None  # a reason or variable the message names (InvalidSocketDirConfigured's reason, …)


class Explanation(t.NamedTuple):
    matched: str | None = None  # the first recognised message: the doctor document's top-level keys
    errno: str | None = None
    path: str | None = None
    cause: str | None = None
    checks: tuple[str, ...] = ()  # the doctor checks that answer every message
    messages: tuple[Message, ...] = ()  # every recognised message, in the order printed
    truncated: bool = False  # the text was longer than MAX_TEXT; only its start was read
    left_off: int = 0  # messages recognised beyond the first MAX_MESSAGES, counted but not answered


#: What is read of a paste: Nx's output runs to kilobytes, and a longer text is answered in seconds, not read whole.
MAX_TEXT = 1 << 20
#: The most messages answered: a real paste holds a few dozen; the rest of a longer one are counted, not answered.
MAX_MESSAGES = 200
#: How an answer with no command begins: the reason follows.
NO_SAFE_COMMAND = wording.NO_SAFE_COMMAND


#: A path as Nx prints it: no spaces, and none of the punctuation that closes the sentence around it.
_PATH = r"(?P<path>/\S+?)(?=['\"`]?\)?[.,;:]?(?:\s|$))"
_ERRNO = r"(?P<errno>E[A-Z0-9]{2,})"
#: A Windows path or named pipe as Node prints it on Windows (``C:\\Users\\…``, ``\\\\.\\pipe\\…``): read, not judged
#: here.
_WIN_PATH = (
    r"(?P<winpath>\\\\[.?]\\pipe\\[^\s'\"`]{1,4096}?|[A-Za-z]:\\[^\s'\"`]{0,4096}?)(?=['\"`]?\)?[.,;:]?(?:\s|$))"
)
_SOCKET_CHECKS = (
    "unix-sockets",
    "sockets",
    "socket-owner",
    "levels",
    "container",
    "outcome",
    "configuration",
    "daemon",
)
#: What a wrapper message (one that carries another) checks on this machine before it borrows the carried message's
#: answer.
_WRAPPED = ("user-namespace", "unix-sockets", "configuration", "path-budget", "workspace-data", "sockets")

#: The checks that see why Nx's binding does not load: the package for this host missing, a noexec mount, a cut-short
#: copy.
_BINDING_CHECKS = ("binding", "native-cache")
#: The messages of a binding that did not load: on this machine the finding that shows why is their cause.
_NO_PLATFORM_BINDING = ("Nx could not load the native binding for this platform: its package is missing (optional "
                        "dependencies skipped, a node_modules from another host), or it does not load here.")
_BINDING_KINDS = frozenset(("native-binding-broken", "binding-module-missing", "missing-platform-dependency",
                            "binding-map-failed", "binding-dlopen-failed"))
#: The file Node could not map, as its dlopen error names it (``Error: <path>: failed to map segment from shared
#: object``); anchored on ``Error: `` so that a text of slashes is not tried at every one of them.
_MAPPED_PATH = r"(?P<path>/[^\s:'\"`]{1,4096}\.node)"


WRAPPERS = frozenset(
    ("daemon-start-failed", "daemon-unreachable", "daemon-graph-failed", "plugins-failed", "socket-denied")
)

_ERRNO_CAUSES = {
    "EACCES": "a mode or owner refuses the socket or a directory above it — or a security policy does",
    "EPERM": "a sandbox or policy (seccomp, macOS Seatbelt) forbids unix sockets",
    "ENOENT": "the socket does not exist: the daemon is not running there",
    "ECONNREFUSED": "nothing listens on the socket: it is stale",
    "EADDRINUSE": "a socket file is already at that path (a stale one, or another daemon's)",
    "EROFS": "the directory is on a read-only mount (a sandbox's bind)",
    "ENOTSUP": NO_SOCKETS_HERE,
    "EOPNOTSUPP": NO_SOCKETS_HERE,
}
_FS_CAUSES = {
    "EACCES": "a directory or file Nx writes belongs to another user (root, after `sudo nx`) or its mode refuses you",
    "ENOENT": "a directory Nx needs does not exist (a TMPDIR that names a missing directory, typically)",
    "ENOSPC": "the disk is full",
    "EROFS": "a read-only mount (a sandbox's bind)",
}



# -- remedies --------------------------------------------------------------------------------
#
# A pasted text is anyone's: a path in it is a claim, never trusted.  Every remedy below is a
# value (:class:`~nxsock.core.remedy.Remedy`) that the caller passes through the one policy
# (``RemedyContext.offer``), which checks it against this machine as it is now: a path the
# paste names is acted on only when it is one of this user's Nx levels, exists, and has no
# link or foreign level on the way; ``sudo`` only where the user cannot do it.  Where no safe
# command exists the answer says why, and what to run to find out more.


class Answer(t.NamedTuple):
    """A recognised message with the command that fixes it (or why there is none), and whether this machine showed the
    cause."""

    message: Message
    advice: Advice  # the vetted remedy (``None``: no safe command; the hint says why); the output renders it
    source: str  # "this machine" (a doctor finding shows the cause) | "general" (the message's own remedy)
    finding: str | None  # the id of the finding whose remedy it is

    @property
    def hint(self) -> str | None:
        return self.advice.hint

    @property
    def steps(self) -> tuple[Step, ...]:
        """The vetted steps: a whole remedy is built from them."""
        return self.advice.steps

    def with_hint(self, hint: str | None, message: Message | None = None) -> Answer:
        """This answer with another sentence (and, given, another message): the same remedy."""
        return self._replace(message=message or self.message, advice=self.advice._replace(hint=hint))


def sandbox_format(env: t.Mapping[str, str], platform: str) -> str | None:
    """The ``nxsock paths --format`` that fits the sandbox these variables and this platform show, if any."""
    if env.get("SANDBOX_RUNTIME"):
        return "claude" if env.get("CLAUDECODE") else "srt"
    if env.get("CODEX_SANDBOX") or env.get("CODEX_SANDBOX_NETWORK_DISABLED"):
        return "codex"
    if platform == "darwin":
        return "seatbelt"
    if env.get("FLATPAK_ID"):
        return "flatpak"
    return None


def _allowlist(fmt: str) -> Step:
    return RunNxsock(NxsockCommand.paths_format(fmt))


def sandbox_remedy(env: t.Mapping[str, str], platform: str, named: str | None = None) -> Remedy:
    """The sandbox's allowlist, in the format the user named (``doctor --sandbox``) or its variables show."""
    fmt = named or sandbox_format(env, platform)
    unknown = [name for name in ("GEMINI_SANDBOX", "CURSOR_SANDBOX") if env.get(name)]
    if fmt is not None:
        return Remedy((_allowlist(fmt),), wording.sandbox_allows(fmt))
    named = f" ({', '.join(unknown)} is set)" if unknown else ""
    return Remedy((_allowlist("text"),), wording.sandbox_or_policy_allows(named))


def _plain(path: str) -> bool:
    """A path spelt with no ``.``/``..`` component, no doubled slash and no control character: what it names is what it
    says."""
    parts = path.split("/")[1:]
    return all(p not in ("", ".", "..") for p in parts) and path.isprintable()


def _doctor_instead(what: str) -> Withheld:
    return Withheld(wording.doctor_instead(what))


def _pasted(path: str, step: t.Callable[[str], Step], changes: str) -> Remedy | Withheld:
    """A step on a path the paste names: offered only when its spelling says plainly what it names; the policy does the
    rest."""
    if not _plain(path):
        return Withheld(wording.path_not_plain(shell_quote(path)))
    return Remedy((step(path),), changes)


def _owner_now(ctx: RemedyContext, path: str) -> int | None:
    """Who owns *path* on this machine now (not following a last link), or ``None`` where nothing is there."""
    entry = ctx.policy.view.lstat(path) if _plain(path) else None
    return entry.uid if isinstance(entry, Entry) else None


def _unset(*variables: str, changes: str) -> Remedy:
    return Remedy(tuple(Unset(variable=v) for v in variables), changes)


def general_remedy(
    message: Message, env: t.Mapping[str, str], platform: str, ctx: RemedyContext, sandbox: str | None = None
) -> tuple[Remedy | Withheld, ...]:
    """The message's own remedies, best first, for a machine that does not (or no longer) shows its cause.

    Each is a value for ``ctx.offer``: the first that passes the policy on this
    machine is the command; a path taken from the text is only ever a claim
    the policy checks against what is really there.  Each kind's builder sits
    beside its pattern, in its row of ``_KINDS``.
    """
    return _REMEDIES.get(message.matched, _level_unknown)(message, _Ask(env, platform, ctx, sandbox))


def _windows(path: str) -> bool:
    return re.match(r"^(?:[A-Za-z]:\\|\\\\)", path) is not None


def _from_windows(message: Message) -> Remedies:
    """A Windows path or pipe: only a daemon that is not running is judged from here; the rest shows only there."""
    path = message.path or ""
    if message.errno == "ENOENT" and path.startswith("\\\\"):  # nothing serves that pipe: no daemon runs
        return (
            Remedy((RunNx(NxCommand.DAEMON_START),), wording.PIPE_NOT_SERVED),
        )
    return (Withheld(WINDOWS_NOT_JUDGED.format(path=shell_quote(path), errno=message.errno or "the error")),)


#: A binding cache entry's name: ``<version>-<H12>-nx.<triple>.node`` (or ``<version>-nx.<triple>.node`` up to 23.1.1).
_CACHE_ENTRY = re.compile(r"/[^/]+-(?:[0-9a-f]{12}-)?nx\.[a-z0-9-]+\.node$")


def _dlopen_remedy(message: Message) -> tuple[Remedy | Withheld, ...]:
    """A binding Node could not load, where this machine shows no cause: only a cached copy's is one Nx can skip.

    A noexec cache is escaped by loading in place; a binding in node_modules
    that does not map has nothing to fall back to, and skipping the cache
    cannot help it.
    """
    path = message.path
    if message.matched == "binding-map-failed" and path is not None and _CACHE_ENTRY.search(path) \
            and "/node_modules/" not in path:
        return (
            Remedy((Export(variable="NX_SKIP_NATIVE_FILE_CACHE", value="true"),), wording.CACHED_COPY_NOEXEC),
        )
    if message.matched == "binding-map-failed" and path is not None:
        return (Withheld(wording.binding_on_noexec(shell_quote(path))),)
    return (_doctor_instead(wording.WHICH_BINDING_FAILED),)




# -- the kinds: one row each, its pattern beside its cause, checks and remedy ------------------


class _Ask(t.NamedTuple):
    """What a kind's remedy builder may consult: the pasting user's environment, platform and machine (the policy)."""

    env: t.Mapping[str, str]
    platform: str
    ctx: RemedyContext
    sandbox: str | None  # the sandbox format the user named (``doctor --sandbox``)

    @property
    def export(self) -> Remedy | Withheld:
        return socket_export(self.ctx)

    @property
    def allowlist(self) -> Remedy:
        return sandbox_remedy(self.env, self.platform, self.sandbox)


Remedies = tuple[Remedy | Withheld, ...]
Builder = t.Callable[[Message, _Ask], Remedies]


def _socket_errno(message: Message, ask: _Ask) -> Remedies:
    errno_name, path = message.errno, message.path
    if path is not None and _windows(path):
        return _from_windows(message)
    if errno_name in ("EPERM", "EROFS"):
        return (ask.allowlist,)
    if errno_name in ("ECONNREFUSED", "EADDRINUSE"):
        return (Remedy((RunNxsock(NxsockCommand.RESET),), wording.RESET_DEAD_SOCKETS),)
    if errno_name == "ENOENT":
        return (Remedy((RunNx(NxCommand.DAEMON_START),), wording.DAEMON_NOT_THERE),)
    if errno_name == "EACCES" and path is not None:
        if _owner_now(ask.ctx, path) == ask.ctx.uid:  # the socket is yours: modes permit it, so a policy refuses
            return (ask.allowlist,)
        remove = _pasted(path, lambda p: Remove(p, needs_root=True), wording.REMOVE_PEER_SOCKET)
        return (remove, ask.export)
    if errno_name in ("ENOTSUP", "EOPNOTSUPP"):  # the filesystem, not a mode
        return _no_sockets_here(message, ask)
    return (_doctor_instead(wording.socket_errno_causes(errno_name)),)


def _no_sockets_here(message: Message, ask: _Ask) -> Remedies:
    """A filesystem that cannot hold sockets (WSL's /mnt/c): Nx's sockets moved to one that can.

    Where the refused socket lies in the ``NX_SOCKET_DIR`` this shell sets, the setting is the cause, fixed where it
    was made: unset, Nx keeps its sockets in its own directories; or (first, where a ``.env`` file sets it) a
    directory of your own elsewhere.  The
    filesystem is named as this machine's mount table shows it.
    """
    ctx, path = ask.ctx, message.path or ""
    directory = dirname(path)
    # Set in this shell: unset there (a value from a .env file would come back; exported, a directory wins over it).
    configured = any(variable in ("NX_SOCKET_DIR", "NX_DAEMON_SOCKET_DIR") and directory in (given, real)
                     and ctx.source_of(variable) == "environment" for variable, given, real in ctx.policy.configured)
    mounts = ctx.resolution.mounts if ctx.resolution is not None else ()
    mount = next((m.mount for m in mounts if m.level == "socket-root" and m.path == directory), None)
    where = NO_SOCKETS_ON.format(path=shell_quote(directory), fs=filesystem_name(mount)) if mount is not None else ""
    export = ask.export
    if not configured:
        if isinstance(export, Remedy) and where:
            export = export._replace(changes=f"{where} {export.changes}")
        return (export,)
    unset = _unset("NX_SOCKET_DIR", "NX_DAEMON_SOCKET_DIR", changes=f"{where} {NO_SOCKETS_UNSET}".strip())
    return (unset, export)


def _refused_socket_dir(message: Message, ask: _Ask) -> Remedies:
    return (_unset("NX_SOCKET_DIR", "NX_DAEMON_SOCKET_DIR", changes=wording.OWN_SOCKET_DIRECTORIES),
            ask.export)


def _untrusted_data_dir(message: Message, ask: _Ask) -> Remedies:
    variables = (("NX_CACHE_DIRECTORY",) if message.detail and "cache" in message.detail
                 else ("NX_WORKSPACE_DATA_DIRECTORY", "NX_PROJECT_GRAPH_CACHE_DIRECTORY"))
    return (_unset(*variables, changes=wording.KEPT_IN_WORKSPACE),)


def _native_cache_copy(message: Message, ask: _Ask) -> Remedies:
    why = wording.CACHE_DISK_FULL if message.errno in ("ENOSPC", "EDQUOT") else wording.CACHE_VERIFY_NAMES
    return (Remedy((Export(variable="NX_SKIP_NATIVE_FILE_CACHE", value="true"),), wording.binding_in_place_then(why)),)


def _native_binding_broken(message: Message, ask: _Ask) -> Remedies:
    return (Remedy((Export(variable="NX_SKIP_NATIVE_FILE_CACHE", value="true"),), wording.BINDING_CUT_SHORT),)


def _binding_missing(message: Message, ask: _Ask) -> Remedies:
    return (_doctor_instead(wording.WHICH_PACKAGE_MISSING),)


def _fs_errno(message: Message, ask: _Ask) -> Remedies:
    path, errno_name, ctx = message.path, message.errno, ask.ctx
    if path is None:
        return _level_unknown(message, ask)
    if _windows(path):
        return _from_windows(message)
    data = re.match(r"^(.*/\.nx/workspace-data)(?:/|$)", path)
    if errno_name == "EACCES" and data is not None:
        if _owner_now(ctx, data.group(1)) == ctx.uid:
            return (
                _doctor_instead(wording.yours_now(shell_quote(data.group(1)))),
            )
        return (_pasted(data.group(1), lambda p: RemoveTree(p, needs_root=True), wording.DATA_DIR_OF_ANOTHER),)
    if errno_name == "ENOENT":
        missing = path if message.detail in ("lstat", "stat", "scandir", "opendir") else dirname(path)
        tmpdir = ctx.resolution.environment.nonempty("TMPDIR") if ctx.resolution else None
        if tmpdir is None or missing.rstrip("/") != tmpdir.rstrip("/"):  # only a TMPDIR this shell names is created
            return (_doctor_instead(wording.missing_unnamed(shell_quote(missing))),)
        return (_pasted(missing, Create, wording.CREATES_TMPDIR), _unset("TMPDIR", changes=wording.TMP_AS_TEMP))
    return (_doctor_instead(wording.errno_on_path_causes(errno_name, shell_quote(path))),)


def _os_permission_denied(message: Message, ask: _Ask) -> Remedies:
    """The native layer's EACCES, with no path: where this machine shows the cause — a umask that takes the owner's
    bits, Nx's own levels of yours left unwritable by one — its whole remedy; else why the text alone has none."""
    found = umask_remedy(ask.ctx)
    return (found,) if found is not None else (_doctor_instead(OS_ERROR_13_NO_PATH),)


def _daemon_disabled(message: Message, ask: _Ask) -> Remedies:
    return (Remedy((RunNx(NxCommand.RESET),), wording.NX_RESET_MARKER),)


def _daemon_not_running(message: Message, ask: _Ask) -> Remedies:
    return (Remedy((RunNx(NxCommand.DAEMON_START),), wording.STARTS_DAEMON),)


def _socket_refused(message: Message, ask: _Ask) -> Remedies:
    return (ask.allowlist,)


def _level_unknown(message: Message, ask: _Ask) -> Remedies:
    return (_doctor_instead(wording.NO_LEVEL_SAID),)


def _which_level(message: Message, ask: _Ask) -> Remedies:
    return (_doctor_instead(wording.LEVEL_ON_MACHINE),)


def _fallback(message: Message, ask: _Ask) -> Remedies:
    if message.detail != "/":
        return _which_level(message, ask)
    return (Remedy((Export(variable="NX_ISOLATE_PLUGINS", value="false"),),
                   wording.plugins_not_isolated(render(ask.allowlist))),)


def _default_dir_demoted(message: Message, ask: _Ask) -> Remedies:
    if message.errno == "EROFS":  # /tmp itself is read-only: never create /tmp/.nx there; a directory of your own
        return (ask.export,)
    return _which_level(message, ask)


def _daemon_terminated(message: Message, ask: _Ask) -> Remedies:
    return (Remedy((RunNxsock(NxsockCommand.RESET_DAEMON_MARKER), RunNx(NxCommand.DAEMON_START)),
                   DAEMON_BACK),)


def _plugin_worker_timeout(message: Message, ask: _Ask) -> Remedies:
    return (Remedy((Export(variable="NX_PLUGIN_NO_TIMEOUTS", value="true"),), PLUGIN_NO_TIMEOUTS),)


def _plugin_worker_never_listened(message: Message, ask: _Ask) -> Remedies:
    return (Remedy((Export(variable="NX_ISOLATE_PLUGINS", value="false"),), PLUGINS_IN_PROCESS),)


def _workspace_mismatch(message: Message, ask: _Ask) -> Remedies:
    """The daemon that refused is the other workspace's; the one pasting sent it."""
    other = shell_quote(message.path or "the other workspace")
    steps: list[Step] = [Unset(variable="NX_SOCKET_DIR"), Unset(variable="NX_DAEMON_SOCKET_DIR")]
    record = ask.ctx.resolution.daemon_record if ask.ctx.resolution else None
    stopped = False
    if record is not None and record.problem is None:  # this workspace's record names the socket the other took
        if record.pid is not None and record.alive:
            steps.append(StopProcess(pid=record.pid, owner=ask.ctx.uid))  # your own daemon: no sudo
            stopped = True
        steps.append(Remove(record.file))
    unset = _unset("NX_SOCKET_DIR", "NX_DAEMON_SOCKET_DIR", changes=SHARED_SOCKET_DIR_UNSET.format(other=other))
    if len(steps) == 2:  # no record of this workspace's daemon to act on: the unset is all there is, said as such
        return (unset,)
    whole = SHARED_SOCKET_DIR if stopped else SHARED_SOCKET_DIR_RECORD
    return (Remedy(tuple(steps), whole.format(other=other)), unset)


def _version_changed(message: Message, ask: _Ask) -> Remedies:
    """Nx's message names neither version: this machine shows the installed one and the running daemon's."""
    resolution = ask.ctx.resolution
    env = resolution.environment if resolution else None
    installed = env.nx_version if env is not None and env.nx_version_source == "installed" else None
    record = resolution.daemon_record if resolution else None
    daemon = record.nx_version if record is not None and record.problem is None and record.alive else None
    return (Remedy((RunNx(NxCommand.DAEMON_STOP),), version_changed_note(installed, daemon)),)


def _read_only_fs(message: Message, ask: _Ask) -> Remedies:
    return (_doctor_instead(READ_ONLY_NO_COMMAND),)


def _inotify_limit(message: Message, ask: _Ask) -> Remedies:
    return (Withheld(INOTIFY_NO_COMMAND),)


def _dlopen(message: Message, ask: _Ask) -> Remedies:
    return _dlopen_remedy(message)


class Kind(t.NamedTuple):
    """One kind of message: how it is told from others, what it means, which checks see its cause, what fixes it."""

    name: str
    pattern: re.Pattern[str]
    #: What it means; for an errno message, its cause per errno (the rest: "the system refused it").
    cause: str | t.Mapping[str, str]
    checks: tuple[str, ...]  # the doctor checks that can see its cause on this machine
    remedy: Builder  # its own remedies, best first, for a machine that does not show its cause
    errno: str | None = None  # the errno its words mean, where Nx prints the OS's words ("os error 13": EACCES)


def _kind(name: str, pattern: str, cause: str | t.Mapping[str, str], checks: tuple[str, ...], remedy: Builder,
          errno: str | None = None, flags: int = 0) -> Kind:
    return Kind(name, re.compile(pattern, flags), cause, checks, remedy, errno)


_DAEMON_LIFE = DAEMON_MESSAGE_CAUSES
_FS_CHECKS = ("workspace-data", "tmpdir", "configuration", "daemon", "native-cache")
_READ_ONLY_CHECKS = ("workspace-writable", "workspace-data", "levels", "outcome", "native-cache")

# Order matters only where two patterns match the same text: the first wins.  Every run that could go on is
# bounded ({0,200}, {1,4096}): a paste is another program's output and may be built to make an unbounded run
# backtrack across the whole text, message after message.
_KINDS: tuple[Kind, ...] = (
    # Node spells socket errors "connect EACCES /p" and "listen EPERM: operation not permitted /p" …
    _kind(
        "socket-errno",
        rf"\b(?:connect|listen)\s+{_ERRNO}(?::[^/\\\n]{{0,200}})?\s+(?:{_PATH}|{_WIN_PATH})",
        _ERRNO_CAUSES,
        _SOCKET_CHECKS,
        _socket_errno,
    ),
    # … and, where only the end of a crash is shown, as the error object's fields.
    _kind(
        "socket-errno",
        r"code: '(?P<errno>E[A-Z]+)',\s+errno: -?\d+,\s+syscall: '(?:connect|listen)',\s+"
        r"address: '(?P<path>/[^'\n]{1,4096})'",
        _ERRNO_CAUSES,
        _SOCKET_CHECKS,
        _socket_errno,
    ),
    _kind(
        "path-too-long",
        r"exceeds the maximum socket length",
        "A socket path is over Nx's 95-character limit.",
        ("path-budget", "outcome", "configuration"),
        lambda m, ask: (ask.export,),
    ),
    _kind(
        "invalid-shared",
        rf"socket directory {_PATH} is shared with the other users",
        "NX_SOCKET_DIR names a directory other users can reach; Nx refuses it.",
        ("configuration",),
        _refused_socket_dir,
    ),
    _kind(
        "invalid-os-temp",
        rf"socket directory {_PATH} is the operating system temp directory",
        "NX_SOCKET_DIR names the OS temp directory itself; Nx refuses it.",
        ("configuration",),
        _refused_socket_dir,
    ),
    _kind(
        "invalid-nx-managed",
        rf"socket directory {_PATH} is a directory Nx keeps its own",
        "NX_SOCKET_DIR names a directory Nx manages itself; Nx refuses it.",
        ("configuration",),
        _refused_socket_dir,
    ),
    _kind(
        "configured-refused",
        rf"could not use the configured socket directory {_PATH}:[^\n]*(?:\n\s*Falling back to \S+)?",
        "NX_SOCKET_DIR was refused, so Nx fell back to the workspace.",
        ("configuration", "levels", "outcome"),
        _refused_socket_dir,
    ),
    _kind(
        "no-socket-directory",
        r"could not establish a socket directory",
        "No socket directory could be established, the workspace fallback included.",
        ("levels", "outcome", "container"),
        _which_level,
    ),
    _kind(
        "fallback",
        rf"(?:fell back to|so it used) {_PATH}(?:\.\s+(?P<detail>/\S*) belongs to another user)?",
        "Nx could not use its usual socket directories and fell back to another.",
        ("levels", "outcome", "container"),
        _fallback,
    ),
    # 24.0.6 under --verbose: the default directory demoted, and why ("/tmp/.nx could not be created (EROFS)").
    _kind(
        "default-dir-demoted",
        rf"could not use the default socket directory {_PATH}\.\s+Using \S{{1,4096}} instead\."
        r"(?:[ \t]+\S{1,4096} could not be created \((?P<errno>E[A-Z0-9]{2,})\))?",
        {
            "": "Nx could not use its default socket directory, so it uses another: it works "
                "(--verbose shows this note)",
            "EROFS": "/tmp is read-only: Nx cannot create /tmp/.nx there, so it keeps its sockets in your home instead "
            "(it works; --verbose shows this note)",
        },
        ("levels", "outcome", "container"),
        _default_dir_demoted,
    ),
    _kind(
        "untrusted-data-dir",
        rf"configured Nx (?P<detail>[a-z ]{{1,40}}?) directory {_PATH} is not safe to use",
        "A configured data or cache directory could be replaced by another user; Nx 24.0.6 refuses it.",
        ("configuration",),
        _untrusted_data_dir,
    ),
    _kind(
        "native-cache-copy",
        r"Failed to copy native module to cache[^(\n]*(?:\((?P<errno>E[A-Z0-9]+)\))?",
        "Nx could not copy its binding into the cache and loads it in place.",
        ("native-cache", "levels"),
        _native_cache_copy,
    ),
    _kind(
        "native-binding-broken",
        r"TypeError: (?:\(0 , )?(?:native_1\.\w+\)?|WorkspaceContext) is not a (?:function|constructor)",
        "Nx's native binding did not load, so its loader exported nothing: the package for this platform is missing "
        "(an install that skipped optional dependencies, a node_modules from another host), the binding or its "
        "cached copy lies on a noexec mount, or the copy in the binding cache was cut short (a full disk).",
        _BINDING_CHECKS,
        _native_binding_broken,
    ),
    _kind(
        "binding-module-missing",
        r"Cannot find module '(?P<detail>@nx/nx-[a-z0-9-]{1,60})'",
        "Nx's binding package for a platform is not installed (an install that skipped optional dependencies, or a "
        "node_modules installed on another host).",
        _BINDING_CHECKS,
        _binding_missing,
    ),
    _kind(
        "missing-platform-dependency",
        r"Missing Platform Dependency",
        _NO_PLATFORM_BINDING,
        _BINDING_CHECKS,
        _binding_missing,
    ),
    _kind(
        "missing-platform-dependency",
        r"Cannot find native binding\.",
        _NO_PLATFORM_BINDING,
        _BINDING_CHECKS,
        _binding_missing,
    ),
    # Node's own dlopen error, as a program that requires the binding prints it: a noexec mount refuses the mapping …
    _kind(
        "binding-map-failed",
        rf"Error: {_MAPPED_PATH}: failed to map segment from shared object"
        r"(?:(?:\n[^\n]{0,300}){0,15}?\n\s*code: 'ERR_DLOPEN_FAILED')?",
        "Node could not map Nx's binding into memory: the file lies on a mount with noexec (a hardened /tmp holding "
        "the binding cache, or a node_modules mounted noexec).",
        _BINDING_CHECKS,
        _dlopen,
    ),
    # … and its code, which any binding that does not load carries (noexec, another platform's file, a cut-short copy).
    _kind(
        "binding-dlopen-failed",
        r"\bERR_DLOPEN_FAILED\b",
        "Node could not load a native binding (dlopen): its mount is noexec, it was built for another platform or C "
        "library, or it is a cut-short copy.",
        _BINDING_CHECKS,
        _dlopen,
    ),
    _kind(
        "fs-errno",
        rf"\b{_ERRNO}: [a-z ]{{1,60}}, (?P<detail>[a-z]{{1,20}}) '(?:(?P<path>/[^'\n]{{1,4096}})|{_WIN_PATH})'",
        _FS_CAUSES,
        _FS_CHECKS,
        _fs_errno,
    ),
    _kind(
        "os-permission-denied",
        r"Permission denied \(os error 13\)",
        "Nx's native code was refused access to a file (EACCES), typically in a directory another user (root, after "
        "`sudo nx`) made, or one a umask left unwritable.",
        ("workspace-data", "configuration", "daemon", "native-cache", "levels"),
        _os_permission_denied,
        errno="EACCES",
    ),
    _kind(
        "daemon-disabled",
        r"Daemon is going to be disabled",
        "Nx wrote the daemon's disabled marker: the daemon stays off until `nx reset`.",
        ("user-namespace", "daemon"),
        _daemon_disabled,
    ),
    _kind(
        "daemon-not-running",
        r"Daemon is not running\b",
        "No Nx daemon runs for this workspace.",
        ("daemon",),
        _daemon_not_running,
    ),
    _kind(
        "exit-78",
        r"(?:exit(?:ed)? (?:with )?code|status)\s*78\b",
        "Exit 78: a daemon or plugin worker could not bind its socket (EACCES/EPERM); Nx does not write the disabled "
        "marker for it.",
        ("unix-sockets", "sockets", "levels", "outcome"),
        _socket_refused,
        flags=re.I,
    ),
    # What Nx says around the messages above: the answer is the one of the message it carries (see WRAPPERS).
    _kind(
        "daemon-start-failed",
        r"start or connect to the Nx Daemon",
        "The daemon did not start or answer; the lines that follow (from its log) say why.",
        _WRAPPED,
        _level_unknown,
    ),
    _kind(
        "daemon-unreachable",
        r"Unable to connect to the daemon process",
        "The client lost its daemon; the lines that follow (from its log) say why.",
        _WRAPPED,
        _level_unknown,
    ),
    _kind(
        "daemon-graph-failed",
        r"not able to compute the project graph",
        "The daemon failed internally; its error log (named below it) says why.",
        _WRAPPED,
        _level_unknown,
    ),
    _kind(
        "plugins-failed",
        r"Failed to load \d+ (?:default )?Nx plugin",
        "Nx's plugin workers did not start; each line beneath names why.",
        _WRAPPED,
        _level_unknown,
    ),
    _kind(
        "plugin-worker-exited",
        r"Plugin worker for \S+ exited with code \d+ before the connection",
        "A plugin worker ended before Nx could connect to its socket: it could not listen (a sandbox, typically).",
        ("unix-sockets", "configuration", "sockets", "levels", "outcome", "daemon"),
        _socket_refused,
    ),
    _kind(
        "socket-denied",
        r"denied permission to use its unix socket",
        "Nx was refused its unix socket (EACCES or EPERM): a policy or another user's directory.",
        _WRAPPED,
        _level_unknown,
    ),
    # The daemon's own life: the messages users paste most, each answered whole (see _WHOLE).
    _kind(
        "daemon-terminated",
        r"Daemon process terminated and closed the connection",
        _DAEMON_LIFE["daemon-terminated"],
        ("daemon",),
        _daemon_terminated,
    ),
    _kind(
        "plugin-worker-timeout",
        r"plugin worker for (?P<detail>\S{1,400}) is exiting as it was not connected",
        _DAEMON_LIFE["plugin-worker-timeout"],
        (),
        _plugin_worker_timeout,
        flags=re.I,
    ),
    _kind(
        "plugin-worker-never-listened",
        r"Failed to start plugin worker for plugin (?P<detail>\S{1,400})",
        _DAEMON_LIFE["plugin-worker-never-listened"],
        (),
        _plugin_worker_never_listened,
    ),
    _kind(
        "workspace-mismatch",
        r"Daemon for '(?P<path>/[^'\n]{0,4096})'\s{1,8}received a message"
        r"\s{1,8}from a different workspace\s{1,8}\('(?P<detail>[^'\n]{1,4096})'\)",
        _DAEMON_LIFE["workspace-mismatch"],
        ("configuration",),
        _workspace_mismatch,
    ),
    _kind(
        "version-changed",
        r"Nx version changed\. Please restart",
        _DAEMON_LIFE["version-changed"],
        ("daemon",),
        _version_changed,
    ),
    _kind(
        "read-only-fs",
        r"Read-only file system \(os error 30\)",
        _DAEMON_LIFE["read-only-fs"],
        _READ_ONLY_CHECKS,
        _read_only_fs,
        errno="EROFS",
    ),
    _kind(
        "inotify-limit",
        r"System limit for number of file watchers",
        _DAEMON_LIFE["inotify-limit"],
        (),
        _inotify_limit,
        errno="ENOSPC",
    ),
    _kind(
        "inotify-limit", r"amount of inotify watches", _DAEMON_LIFE["inotify-limit"], (), _inotify_limit, errno="ENOSPC"
    ),
    # The daemon's native watcher (24.x), as `nx daemon` shows it from the log: "OS file watch limit reached".
    _kind(
        "inotify-limit",
        r"OS file watch limit reached",
        _DAEMON_LIFE["inotify-limit"],
        (),
        _inotify_limit,
        errno="ENOSPC",
    ),
)

#: Each kind's remedy builder (rows of one kind share it: a test holds them to that).
_REMEDIES: dict[str, Builder] = {kind.name: kind.remedy for kind in _KINDS}
#: Kinds whose errno Nx does not print as a token: the native layer's words for it.
_ERRNO_OF = {kind.name: kind.errno for kind in _KINDS if kind.errno is not None}


def explain(text: str) -> Explanation:
    """Every recognised message in *text*, in order; the first one's errno, path and cause on top."""
    truncated = len(text) > MAX_TEXT
    text = text[:MAX_TEXT]
    found: list[Message] = []
    for kind in _KINDS:
        for match in kind.pattern.finditer(text):
            groups = match.groupdict()
            errno_name = kind.errno or groups.get("errno")  # the native layer prints the OS's words: what they mean
            detail = groups.get("detail")
            own = (
                ("outcome",) if kind.name == "fallback" and detail == "/" else kind.checks
            )  # only a user namespace shows / as foreign
            found.append(Message(kind.name, errno_name, groups.get("path") or groups.get("winpath"),
                                 _cause(kind, groups.get("errno")), own, match.start(), match.end(), detail))
    found.sort(key=lambda m: m.start)  # stable: at one position the pattern listed first wins
    messages: list[Message] = []
    claimed = 0  # where the text claimed so far ends: a message starting inside it is one already found
    for message in found:
        if message.start >= claimed:
            messages.append(message)
            claimed = message.end
    if not messages:
        return Explanation(truncated=truncated)
    left_off = max(0, len(messages) - MAX_MESSAGES)
    messages = messages[:MAX_MESSAGES]
    first = messages[0]
    checks = tuple(dict.fromkeys(c for m in messages for c in m.checks))
    return Explanation(
        matched=first.matched,
        errno=first.errno,
        path=first.path,
        cause=first.cause,
        checks=checks,
        messages=tuple(messages),
        truncated=truncated,
        left_off=left_off,
    )



def _cause(kind: Kind, errno_name: str | None) -> str:
    """The kind's cause; for an errno message, the cause of the errno it names."""
    if isinstance(kind.cause, str):
        return kind.cause
    if errno_name is None:
        return kind.cause.get("", "")
    return f"{errno_name}: {kind.cause.get(errno_name, kind.cause.get('', wording.SYSTEM_REFUSED_IT))}."


def general_advice(
    message: Message, env: t.Mapping[str, str], platform: str, ctx: RemedyContext, sandbox: str | None = None
) -> Advice:
    """The message's general remedy through the policy: the first that passes, or why none does."""
    first, *alternatives = general_remedy(message, env, platform, ctx, sandbox)
    return ctx.offer(first, *alternatives)


def related(finding_path: str | None, path: str | None) -> bool:
    """Whether a finding is about the message's path: the same, beneath its directory, or a level above it."""
    if finding_path is None or path is None:
        return True
    a, b = finding_path.rstrip("/"), path.rstrip("/")
    base = dirname(b) if b.endswith(".sock") else b
    if a == b or a.startswith(base + "/") or base.startswith(a + "/") or a == base:
        return True
    # A daemon's run directory hashes its pid: the one in the text and the one running now are siblings, the same daemon
    # socket.
    run_a, run_b = _RUN_DIRECTORY.match(a), _RUN_DIRECTORY.match(b)
    return run_a is not None and run_b is not None and run_a.group(1) == run_b.group(1)


_RUN_DIRECTORY = re.compile(r"^(/.+)/[0-9a-f]{20}(?:/d\.sock)?$")


class _Finding(t.Protocol):
    @property
    def id(self) -> str: ...
    @property
    def severity(self) -> str: ...
    @property
    def path(self) -> str | None: ...
    @property
    def advice(self) -> Advice | None: ...
    @property
    def hint(self) -> str | None: ...
    @property
    def message(self) -> str: ...


def answer_all(
    messages: t.Sequence[Message],
    findings: t.Sequence[_Finding],
    finding_ids: t.Mapping[str, t.Sequence[str]],
    general: t.Callable[[Message], Advice],
    offer: t.Callable[[Remedy], Advice] | None = None,
) -> list[Answer]:
    """Every message answered, in order; one that only carries another (a wrapper) gets the remedy of the one it
    carries.

    With *offer* (the policy on this machine), the disabled marker's message gets its cause's remedy with the
    marker's removal after it: the cause alone leaves the daemon off, the marker alone brings the cause back.
    """
    own = [_own(m, findings, finding_ids, general(m)) for m in messages]
    answers = []
    whole = next((a for a in own if a.message.matched in _MARKER_CAUSES), None)
    for index, message in enumerate(messages):
        mine = own[index]
        if whole is not None and message.matched in _CONSEQUENCES:
            # The marker and the absent daemon are what the cause left: its whole remedy (or why none) clears both.
            borrowed = wording.as_for_cause(whole.message.matched)
            mine = whole.with_hint(f"{whole.hint} ({borrowed})" if whole.advice.remedy is None
                                   else f"{borrowed} {whole.hint or ''}".strip(), message)
        if message.matched in WRAPPERS and mine.source == "general":
            causes = [a for a in own[index + 1:] + own[:index][::-1]
                      if a.message.matched not in WRAPPERS and a.message.matched != "daemon-disabled"]
            if causes:
                carried = causes[0]
                borrowed = wording.as_for_carried(carried.message.matched)
                hint = (
                    f"{carried.hint} ({borrowed})"
                    if carried.advice.remedy is None  # the reason there is no command still comes first
                    else f"{borrowed} {carried.hint or ''}".strip()
                )
                mine = carried.with_hint(hint, message)
        elif offer is not None and message.matched == "daemon-disabled":
            mine = _with_marker_cleared(mine, own, offer)
        elif offer is not None and message.matched == "read-only-fs":
            mine = _with_cache_moved(mine, offer)
        answers.append(mine)
    return answers


def _own(message: Message, findings: t.Sequence[_Finding], finding_ids: t.Mapping[str, t.Sequence[str]],
         general: Advice) -> Answer:
    """One message's own answer: whole, or found on this machine by its own builder, or from the findings."""
    if message.matched in _WHOLE:
        return _whole(message, findings, general)
    if message.matched in _FOUND_BY_ITS_BUILDER and general.remedy is not None:
        return Answer(message, general, "this machine", None)
    return answer(message, findings, finding_ids, general)


def _with_marker_cleared(marker: Answer, own: t.Sequence[Answer], offer: t.Callable[[Remedy], Advice]) -> Answer:
    """The marker's answer made whole: the first cause in the paste with a command, then the marker removed."""
    causes = [  # a whole remedy is complete as it is: it already says what becomes of the marker
        a for a in own if a.message.matched not in WRAPPERS and a.message.matched not in _CONSEQUENCES
        and a.message.matched not in _WHOLE and a.steps
    ]
    if not causes:
        return marker
    cause = causes[0]
    if RunNxsock(NxsockCommand.RESET_DAEMON_MARKER) in cause.steps:
        return cause._replace(message=marker.message)
    advice = offer(Remedy((*cause.steps, RunNxsock(NxsockCommand.RESET_DAEMON_MARKER)),
                          MARKER_WITH_CAUSE.format(cause=cause.message.matched, changes=cause.hint or "")))
    if advice.remedy is None:
        return marker
    return Answer(marker.message, advice, cause.source, cause.finding)


def _with_cache_moved(answer: Answer, offer: t.Callable[[Remedy], Advice]) -> Answer:
    """A read-only workspace's data moved elsewhere, its task cache too: it defaults to the workspace's .nx/cache."""
    data = next((s.value for s in answer.steps if isinstance(s, Export) and s.variable == "NX_WORKSPACE_DATA_DIRECTORY"
                 and s.value), None)
    if data is None or any(isinstance(s, Export) and s.variable == "NX_CACHE_DIRECTORY" for s in answer.steps):
        return answer
    advice = offer(Remedy((*answer.steps, Export(variable="NX_CACHE_DIRECTORY", value=f"{data.rstrip('/')}/cache")),
                          f"{answer.hint or ''} {READ_ONLY_CACHE_TOO}".strip()))
    if advice.remedy is None:
        return answer
    return answer._replace(advice=advice)


def answer(
    message: Message,
    findings: t.Sequence[_Finding],
    finding_ids: t.Mapping[str, t.Sequence[str]],
    general: Advice,
) -> Answer:
    """This machine's remedy where a finding of the message's checks shows its cause; else the general one.

    An error with no safe command (its hint says why) still shows the cause:
    its reason is the answer, not a general command that would not fix it.  A
    warning with none (Nx works around it) leaves the message its own remedy.
    """
    ids = {i for check in message.checks for i in finding_ids.get(check, (check,))}
    candidates = [f for f in findings if f.id in ids and f.severity in ("warn", "error")
                  and ((f.advice is not None and f.advice.remedy is not None) or (f.severity == "error" and f.hint))]
    if message.path is not None:
        candidates = [f for f in candidates if related(f.path, message.path)]
    # Of those: an error before a warning; then the finding about exactly that path; then one with a command; then
    # the report's order.
    if candidates:
        exact = message.path.rstrip("/") if message.path else None
        best = min(
            candidates, key=lambda f: (f.severity != "error", (f.path or "").rstrip("/") != exact, _no_command(f))
        )
        advice = best.advice or Advice(None, None)
        if advice.remedy is None and not (advice.hint or "").startswith(NO_SAFE_COMMAND):
            advice = advice._replace(hint=f"{NO_SAFE_COMMAND}: {advice.hint}")
        if message.matched in _BINDING_KINDS:  # why the binding does not load here, as the audit sees it
            message = message._replace(cause=f"On this machine: {best.message}")
        return Answer(message, advice, "this machine", best.id)
    return Answer(message, general, "general", None)


def _no_command(finding: _Finding) -> bool:
    return finding.advice is None or finding.advice.remedy is None


#: Messages whose command is always their own whole remedy: a finding here fixes only a part (the record, the marker),
#: so the findings of these ids only name the cause on this machine.
_WHOLE = {"daemon-terminated": ("daemon-error", "daemon-disabled", "daemon-record")}
#: Messages whose builder gives a command only where this machine shows their cause (os error 13: the umask and the
#: levels it left unwritable): that command, whole, comes before a finding's, which sees only a part of the cause.
_FOUND_BY_ITS_BUILDER = frozenset(("os-permission-denied",))
#: What a whole-remedied message leaves behind, answered in the same paste with its remedy.
_CONSEQUENCES = frozenset(("daemon-disabled", "daemon-not-running"))
#: The causes of a disabled marker whose own answer also clears it (or says how), so the marker's message takes it.
_MARKER_CAUSES = frozenset(("daemon-terminated", "inotify-limit"))


def _whole(message: Message, findings: t.Sequence[_Finding], general: Advice) -> Answer:
    """The message's whole remedy, its cause completed with what this machine's findings show of it."""
    ids = _WHOLE[message.matched]
    seen = sorted((f for f in findings if f.id in ids and f.severity != "ok"), key=lambda f: ids.index(f.id))
    if not seen:
        return Answer(message, general, "general", None)
    # A finding that goes on to quote lines ("…; the reason it recorded:") is named without its colon clause.
    here = DAEMON_SEEN_HERE.format(what=" ".join((f.message.rsplit(";", 1)[0] if f.message.endswith(":") else f.message)
                                                 .rstrip(".") + "." for f in seen))
    return Answer(message._replace(cause=f"{message.cause} {here}"), general, "this machine", seen[0].id)
