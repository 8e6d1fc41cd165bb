"""Remedies as values: one type per verb, the one policy they pass, one way to shell text.

The policy is docs/remedy-policy.md.

A :class:`Remedy` is what ``doctor --fix`` applies and what a user pastes:
a few steps and one sentence of what they change.  A step is a value of one
of the verb types below (:data:`Step`), each a frozen dataclass that owns
its shell text (``text``), its JSON fields (``fields``) and its vetting
(``vet``): :class:`Remove`, :class:`RemoveTree`, :class:`Create`,
:class:`Chown`, :class:`Chmod`, :class:`Unset`, :class:`Export`, :class:`Umask`,
:class:`EditEnvFile`, :class:`StopProcess`, :class:`RunNxsock`,
:class:`RunNx`, :class:`InstallPackage`.  nxsock's own commands, Nx's and
the package managers are enums (:class:`NxsockCommand`, :class:`NxCommand`,
:class:`PackageManager`), never strings to split again.

Every remedy nxsock shows goes through :func:`vet` — the policy — and, if it
passes, through :func:`render`; one that fails is replaced by a
:class:`Withheld` saying why no safe command exists.  Nothing here changes
the filesystem: the policy only looks, through a read-only
:class:`~nxsock.core.fsview.FsView`.  How ``doctor --fix`` applies each verb,
and who runs it, is one table: :data:`nxsock.audit.repair.FIX`.

>>> render(Remedy((RemoveTree("/tmp/.nx/1000", needs_root=True),), "removes it"))
'sudo rm -rf -- /tmp/.nx/1000'
>>> render(Remedy((RunNxsock(NxsockCommand.RESET_FORCE),), "removes it"))
'nxsock reset --force'
>>> print(shell_quote("/tmp/caf\\u0085"))
$'/tmp/caf\\xc2\\x85'
"""

from __future__ import annotations

import enum
import errno
import typing as t
from dataclasses import dataclass, field, replace

from ._pathname import dirname, join, normalize
from .fsview import Entry, FsView
from .layout import CONTAINER

__all__ = [
    "ALLOWLIST_FORMATS",
    "CONFIGURED_VARIABLES",
    "STEP_TYPES",
    "Chmod",
    "Chown",
    "Create",
    "EditEnvFile",
    "Export",
    "InstallPackage",
    "NxCommand",
    "NxsockCommand",
    "PackageManager",
    "Policy",
    "Problem",
    "Remedy",
    "Remove",
    "RemoveTree",
    "RunNx",
    "RunNxsock",
    "Step",
    "StopProcess",
    "Umask",
    "Unset",
    "Verb",
    "Withheld",
    "assert_never",
    "check",
    "render",
    "shell_quote",
    "step_json",
    "suggestion_problem",
    "vet",
    "vet_step",
]

#: The names of the verbs as the JSON documents carry them (``remedy_steps[].verb``), one per step type.
Verb = t.Literal[
    "remove",  # unlink one entry that is not a directory (a link goes as a link)
    "remove-tree",  # a directory and everything in it
    "create",  # a directory; with an owner, as root
    "chown",  # hand an entry to an owner, never following a link
    "chmod",  # set a mode
    "unset",  # a variable, in this shell
    "export",  # a variable, in this shell
    "umask",  # this shell's file-creation mask: only one that leaves the owner every bit
    "edit-env-file",  # delete the lines of a .env file that set a variable
    "stop-process",  # signal a process to stop
    "run-nxsock",  # an nxsock command that acts by descriptor, or only prints (a sandbox's allowlist)
    "run-nx",  # an Nx command
    "install-package",  # a package-manager command that restores a package; never applied by nxsock
]

#: The directories a user configures; none of them, nor an ancestor, is ever removed, moved or re-owned.
CONFIGURED_VARIABLES = (
    "NX_SOCKET_DIR",
    "NX_DAEMON_SOCKET_DIR",
    "NX_NATIVE_FILE_CACHE_DIRECTORY",
    "NX_WORKSPACE_DATA_DIRECTORY",
    "NX_PROJECT_GRAPH_CACHE_DIRECTORY",
    "NX_CACHE_DIRECTORY",
)
#: Variables a remedy may unset or export (a directory for the first ones, ``true`` for the last).
_EXPORTABLE_DIRS = ("NX_SOCKET_DIR", "NX_NATIVE_FILE_CACHE_DIRECTORY", "NX_WORKSPACE_DATA_DIRECTORY",
                    "NX_CACHE_DIRECTORY")
#: The flags a remedy may export, each with the values nxsock suggests (NX_DAEMON=true: where only it turns the
#: daemon on).
_EXPORTABLE_FLAGS = {"NX_SKIP_NATIVE_FILE_CACHE": ("true",), "NX_DAEMON": ("false", "true"),
                     "NX_ISOLATE_PLUGINS": ("false",), "NX_PLUGIN_NO_TIMEOUTS": ("true",)}
_UNSETTABLE = (*CONFIGURED_VARIABLES, "TMPDIR", "TMP", "TEMP", "NX_SKIP_NATIVE_FILE_CACHE")


class NxsockCommand(enum.Enum):
    """The nxsock command lines a remedy may name: each acts by descriptor, or only prints."""

    RESET = "reset"
    RESET_FORCE = "reset --force"
    RESET_LEGACY = "reset --legacy"
    RESET_DAEMON_MARKER = "reset --daemon-marker"
    CACHE_PRUNE = "cache prune"
    PROVISION = "provision"
    PROVISION_TMPFILES = "provision --tmpfiles --install"
    # ``nxsock paths --format``: a sandbox's allowlist, printed (read-only: it changes nothing)
    PATHS_TEXT = "paths --format text"
    PATHS_SRT = "paths --format srt"
    PATHS_CLAUDE = "paths --format claude"
    PATHS_CODEX = "paths --format codex"
    PATHS_CODEX_PROFILE = "paths --format codex-profile"
    PATHS_SEATBELT = "paths --format seatbelt"
    PATHS_BWRAP = "paths --format bwrap"
    PATHS_DOCKER = "paths --format docker"
    PATHS_FLATPAK = "paths --format flatpak"

    @property
    def allowlist(self) -> str | None:
        """The sandbox format this command prints an allowlist in, or ``None`` for a command that acts."""
        return self.value.removeprefix("paths --format ") if self.value.startswith("paths --format ") else None

    @classmethod
    def paths_format(cls, name: str) -> NxsockCommand:
        """``nxsock paths --format <name>``; ``ValueError`` for a format nxsock does not write."""
        return cls(f"paths --format {name}")


#: The ``nxsock paths --format`` values that write a sandbox's allowlist (read-only: they print, they change nothing).
ALLOWLIST_FORMATS = tuple(fmt for fmt in (c.allowlist for c in NxsockCommand) if fmt is not None)


class NxCommand(enum.Enum):
    """The Nx command lines a remedy may name."""

    DAEMON_STOP = "daemon --stop"
    DAEMON_START = "daemon --start"
    RESET = "reset"


class PackageManager(enum.Enum):
    """The package managers an :class:`InstallPackage` names, each with the command that restores an optional
    dependency: npm installs the one package (``--no-save``: package.json and the lockfile stay as they are);
    pnpm, yarn 1 and bun reinstall the tree, optional dependencies included."""

    NPM = "npm"
    PNPM = "pnpm"
    YARN = "yarn"
    BUN = "bun"

    def command(self, spec: str) -> str:
        if self is PackageManager.NPM:
            return f"npm install --no-save {shell_quote(spec)}"
        return f"{self.value} install --force"


#: The only packages an :class:`InstallPackage` installs: Nx's platform bindings, at an exact version.
_BINDING_SPEC = r"@nx/nx-[a-z0-9]+(?:-[a-z0-9]+)*@[0-9]+\.[0-9]+\.[0-9]+(?:-[0-9A-Za-z.]+)?"

#: Levels of the system itself: never removed, moved, re-owned or re-moded, nor is anything above them.
SYSTEM_PATHS = frozenset(
    "/ /bin /boot /dev /etc /home /lib /lib32 /lib64 /libx32 /media /mnt /opt /proc /root /run /run/user /sbin /srv "
    "/sys /tmp /usr /usr/bin /usr/lib /usr/local /usr/sbin /usr/share /var /var/lib /var/tmp /var/log /private "
    "/private/tmp /private/var /Users /System /Library /Applications /nix /snap".split()
)

_S_ISVTX = 0o1000


def assert_never(value: t.NoReturn) -> t.NoReturn:
    """``typing.assert_never`` (Python 3.11) for 3.10: a ladder over a closed vocabulary that missed a member."""
    raise AssertionError(f"unhandled value: {value!r}")


class Problem(t.NamedTuple):
    """Why the policy refuses one step (a clause, without ``No safe command:``)."""

    reason: str


class Policy(t.NamedTuple):
    """What the policy must know about the user, the workspace and the machine the remedy is for."""

    view: FsView
    uid: int
    gid: int
    home_nx: str | None  # ~/.nx, or None without a usable home
    data_dir: str  # <workspace-data>
    data_dir_configured: bool
    workspace_root: str
    configured: tuple[tuple[str, str, str], ...] = ()  # (variable, absolute directory, its canonical form)
    pasted_by_root: bool = False  # root's ``doctor --user``: root pastes it, the audited uid may be hostile
    #: Why nothing may be changed: a variable nxsock reads is set in a file the trust rule refuses (another user's
    #: ``.env``), so every level, record and pid is that user's choice (``Environment.steered``).  Only a change to
    #: your own shell or ``.env`` file (its own rule judges whose it is) and ``nxsock paths --format`` are still shown.
    steered: str | None = None
    #: The directory ``$TMPDIR`` (``$TMP``, ``$TEMP``) names, absolute, when one is set: the one directory outside
    #: Nx's levels a remedy may create (Nx 23 needs it to exist), and whose ``.nx`` is kept as shared as ``/tmp/.nx``.
    temp_dir: str | None = None
    #: How a ``sudo`` line names nxsock, resolved once by the command layer (:mod:`nxsock.core.program`).
    nxsock_for_root: str = "nxsock"

    @property
    def daemon_dir(self) -> str:
        return join(self.data_dir, "d")

    @property
    def user_root(self) -> str:
        return join(CONTAINER, str(self.uid))


# -- shell text ----------------------------------------------------------------------

_SAFE_CHARACTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_@%+=:,./-")


def _needs_escape(ch: str) -> bool:
    """Bytes a terminal would not show as themselves: controls, C1, format characters, undecodable bytes."""
    code = ord(ch)
    if 0xD800 <= code <= 0xDFFF:
        return True
    return not ch.isprintable() and ch != " "


def shell_quote(text: str) -> str:
    """Quote *text* for bash, zsh or ksh so that it names exactly its bytes; plain paths stay bare.

    Anything a terminal would not show as itself — a control or C1
    character, a format character, a byte that is not UTF-8 (held as a
    surrogate escape) — is written as its bytes in ``$'\\xHH'``, so what is
    displayed is what is pasted, and nothing in the text can end the quoting.

    >>> shell_quote("/tmp/.nx")
    '/tmp/.nx'
    >>> print(shell_quote("/home/o'brien/.nx"))
    '/home/o'\\''brien/.nx'
    >>> print(shell_quote("/tmp/caf\\udce9"))
    $'/tmp/caf\\xe9'
    """
    if text and _SAFE_CHARACTERS.issuperset(text):
        return text
    if any(_needs_escape(ch) for ch in text):
        return "$'" + "".join(_ansi_c(ch) for ch in text) + "'"
    return "'" + text.replace("'", "'\\''") + "'"


def _ansi_c(ch: str) -> str:
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"
    if ch in "\\'":
        return "\\" + ch
    if _needs_escape(ch):
        return "".join(f"\\x{byte:02x}" for byte in ch.encode("utf-8", "surrogatepass"))
    return ch


# -- the verbs --------------------------------------------------------------------------

_D = t.TypeVar("_D", bound="_OnDisk")


def _owner_word(uid: int | None) -> str:
    return "root" if uid == 0 else str(uid)


def _mode_word(mode: int | None) -> str | None:
    return None if mode is None else format(mode & 0o7777, "04o")


@dataclass(frozen=True)
class _OnDisk:
    """A step that changes one entry on the disk, one of Nx's own levels: the vetting they share.

    What differs by verb is a hook each type fills in: which of Nx's levels it may touch (``ON_CONTAINER``,
    ``ON_WORKSPACE_NX``), what it may do to the shared container (:meth:`_container_problem`) and what the entry
    and its parent must be, which decides whether it needs root (:meth:`_on_disk`).
    """

    path: str
    needs_root: bool = field(default=False, kw_only=True)

    #: May act on ``/tmp/.nx`` itself (every user's container).
    ON_CONTAINER: t.ClassVar[bool] = True
    #: May act on ``<ws>/.nx`` or ``<ws>/.nx/workspace-data`` (created, or root's leftovers removed).
    ON_WORKSPACE_NX: t.ClassVar[bool] = True
    #: Shown even when another user's file steers where Nx's levels are (:attr:`Policy.steered`).
    kept_when_steered: t.ClassVar[bool] = False

    def _container_problem(self) -> str | None:
        """Why this step may not act on the shared container, which only ever becomes root's and stays ``1777``."""
        return None

    def _place_problem(self, policy: Policy) -> str | None:
        """Why the path is no place this step may act on: not Nx's, a configured directory, a system path."""
        path = self.path
        if not path.startswith("/") or normalize(path) != path or "\0" in path:
            return f"{path!r} is not a plain absolute path"
        # Every verb that changes the disk, a plain ``mkdir`` too: a created directory is a place someone chose.
        if path in _shared_containers(policy):
            container = self._container_problem()
            if container is not None:
                return container
        if isinstance(self, Create) and self.owner is None and _creates_temp_dir(policy, path):
            return _system_conflict(policy, path)
        in_configured = _nx_file_in_configured(policy, path)
        if not (_is_nx_level(policy, path, self) or (isinstance(self, Remove) and in_configured)):
            return f"{path} is not one of Nx's own directories; nxsock changes nothing else"
        conflict = _configured_conflict(policy, path) if not in_configured else None
        return conflict or _system_conflict(policy, path)

    def _on_disk(self, policy: Policy, entry: Entry | int, parent: Entry | int,
                 earlier: t.Sequence[Step]) -> str | bool:
        """Why the entry or its parent refuses this step, or whether it needs root (least privilege)."""
        raise NotImplementedError

    def vet(self: _D, policy: Policy, earlier: t.Sequence[Step] = ()) -> _D | Problem:
        """This step with ``sudo`` exactly where needed, or why the policy refuses it."""
        problem = self._place_problem(policy)
        if problem is not None:
            return Problem(problem)
        path = self.path
        gone = any(isinstance(s, (Remove, RemoveTree)) and _beneath(path, s.path) for s in earlier)
        entry: Entry | int = errno.ENOENT if gone else policy.view.lstat(path)  # once an earlier step removed it
        parent = policy.view.lstat(dirname(path))
        creating = isinstance(self, Create)
        if not creating:
            through = _walk_levels(policy, path, False)
            if through is not None:
                return Problem(through)
        verdict = self._on_disk(policy, entry, parent, earlier)
        if isinstance(verdict, str):
            return Problem(verdict)
        through = _walk_levels(policy, path, creating)
        if through is not None:
            return Problem(through)
        return replace(self, needs_root=verdict and policy.uid != 0)


@dataclass(frozen=True)
class _OnExisting(_OnDisk):
    """A step on an entry that is there: it must exist, beneath a parent nxsock can examine."""

    def _on_disk(self, policy: Policy, entry: Entry | int, parent: Entry | int,
                 earlier: t.Sequence[Step]) -> str | bool:
        if isinstance(entry, int):
            return f"{self.path} does not exist"
        if not isinstance(parent, Entry):
            return f"{dirname(self.path)} cannot be examined"
        return self._on_entry(policy, entry, parent, earlier)

    def _on_entry(self, policy: Policy, entry: Entry, parent: Entry, earlier: t.Sequence[Step]) -> str | bool:
        raise NotImplementedError


@dataclass(frozen=True)
class Remove(_OnExisting):
    """Unlink one entry that is not a directory (a link goes as a link): ``rm --``."""

    verb: t.ClassVar[Verb] = "remove"

    def text(self, nxsock_for_root: str) -> str:
        return f"rm -- {shell_quote(self.path)}"

    def fields(self) -> dict[str, t.Any]:
        return {"path": self.path}

    def _on_entry(self, policy: Policy, entry: Entry, parent: Entry, earlier: t.Sequence[Step]) -> str | bool:
        if entry.is_dir:
            return f"{self.path} is a directory"
        return not _can_unlink(policy, parent, entry)


@dataclass(frozen=True)
class RemoveTree(_OnExisting):
    """A directory and everything in it: ``rm -rf --``."""

    verb: t.ClassVar[Verb] = "remove-tree"
    ON_CONTAINER: t.ClassVar[bool] = False

    def text(self, nxsock_for_root: str) -> str:
        return f"rm -rf -- {shell_quote(self.path)}"

    def fields(self) -> dict[str, t.Any]:
        return {"path": self.path}

    def _container_problem(self) -> str | None:
        return f"{self.path} is the container every user shares: it holds every user's levels"

    def _on_entry(self, policy: Policy, entry: Entry, parent: Entry, earlier: t.Sequence[Step]) -> str | bool:
        return not _can_unlink(policy, parent, entry) or entry.uid != policy.uid


@dataclass(frozen=True)
class Create(_OnDisk):
    """A directory: ``mkdir -p`` without a mode, ``mkdir -m`` of one level, ``install -d`` with an owner (as root)."""

    verb: t.ClassVar[Verb] = "create"
    mode: int | None = None
    owner: int | None = None
    group: int | None = None

    def text(self, nxsock_for_root: str) -> str:
        q, mode = shell_quote(self.path), _mode_word(self.mode)
        if self.owner is not None:
            return f"install -d -m {mode} -o {_owner_word(self.owner)} -g {_owner_word(self.group)} {q}"
        if mode is not None:
            return f"mkdir -m {mode} -- {q}"
        return f"mkdir -p -- {q}"

    def fields(self) -> dict[str, t.Any]:
        return {"path": self.path, "owner": self.owner, "group": self.group, "mode": _mode_word(self.mode)}

    def _container_problem(self) -> str | None:
        if self.mode != 0o1777 or self.owner not in (None, 0) or self.group not in (None, 0):
            return f"{self.path} is the container every user shares: it is created 1777, for root or as Nx makes it"
        return None

    def _on_disk(self, policy: Policy, entry: Entry | int, parent: Entry | int,
                 earlier: t.Sequence[Step]) -> str | bool:
        path, owned = self.path, self.owner is not None
        if isinstance(entry, Entry):
            return f"{path} already exists"
        if not isinstance(parent, Entry):
            if self.mode is not None:  # mkdir of one level: its parent must exist
                return f"{dirname(path)} does not exist"
        elif not parent.is_dir:
            return f"{dirname(path)} is not a directory"
        elif not _may(parent, policy.uid, 3):
            if not owned:
                return f"you may not create entries in {dirname(path)}"
            return True
        return owned and self.owner != policy.uid


@dataclass(frozen=True)
class Chown(_OnExisting):
    """Hand an entry to an owner, never following a link: ``chown -h``."""

    verb: t.ClassVar[Verb] = "chown"
    ON_WORKSPACE_NX: t.ClassVar[bool] = False
    owner: int
    group: int

    def text(self, nxsock_for_root: str) -> str:
        return f"chown -h {_owner_word(self.owner)}:{_owner_word(self.group)} -- {shell_quote(self.path)}"

    def fields(self) -> dict[str, t.Any]:
        return {"path": self.path, "owner": self.owner, "group": self.group}

    def _container_problem(self) -> str | None:
        if (self.owner, self.group) != (0, 0):
            return f"{self.path} is the container every user shares: it is handed to root alone"
        return None

    def _on_entry(self, policy: Policy, entry: Entry, parent: Entry, earlier: t.Sequence[Step]) -> str | bool:
        if entry.is_link:
            return f"{self.path} is a symlink; changing it would change what it points at"
        return (self.owner, self.group) != (policy.uid, policy.gid) or entry.uid != policy.uid


@dataclass(frozen=True)
class Chmod(_OnExisting):
    """Set a mode, of whoever owns the entry by then (an earlier step may have handed it over): ``chmod``."""

    verb: t.ClassVar[Verb] = "chmod"
    ON_WORKSPACE_NX: t.ClassVar[bool] = False
    mode: int

    def text(self, nxsock_for_root: str) -> str:
        return f"chmod {_mode_word(self.mode)} -- {shell_quote(self.path)}"

    def fields(self) -> dict[str, t.Any]:
        return {"path": self.path, "mode": _mode_word(self.mode)}

    def _container_problem(self) -> str | None:
        if self.mode != 0o1777:
            return f"{self.path} is the container every user shares: its mode stays 1777"
        return None

    def _on_entry(self, policy: Policy, entry: Entry, parent: Entry, earlier: t.Sequence[Step]) -> str | bool:
        path = self.path
        if entry.is_link:
            return f"{path} is a symlink; changing it would change what it points at"
        handed_to = [s.owner for s in earlier if isinstance(s, Chown) and s.path == path]
        if entry.uid not in (0, policy.uid) and not handed_to:
            return f"{path} belongs to {_who(entry.uid)}, who could replace it before the command runs"
        return (handed_to[-1] if handed_to else entry.uid) != policy.uid


_STEERED = "{}; nothing another user's file steers is acted on (ask that user, or work in a checkout of your own)"


@dataclass(frozen=True)
class Unset:
    """Unset a variable nxsock reads, in this shell."""

    verb: t.ClassVar[Verb] = "unset"
    needs_root: t.ClassVar[bool] = False
    kept_when_steered: t.ClassVar[bool] = True
    variable: str

    def text(self, nxsock_for_root: str) -> str:
        return f"unset {self.variable}"

    def fields(self) -> dict[str, t.Any]:
        return {"variable": self.variable}

    def vet(self, policy: Policy, earlier: t.Sequence[Step] = ()) -> Unset | Problem:
        if self.variable not in _UNSETTABLE:
            return Problem(f"{self.variable} is not a variable nxsock reads")
        return self


@dataclass(frozen=True)
class Export:
    """Export a variable, in this shell: a directory only the user can own, or a flag at a value nxsock suggests."""

    verb: t.ClassVar[Verb] = "export"
    needs_root: t.ClassVar[bool] = False
    kept_when_steered: t.ClassVar[bool] = True
    variable: str
    value: str

    def text(self, nxsock_for_root: str) -> str:
        return f"export {self.variable}={shell_quote(self.value)}"

    def fields(self) -> dict[str, t.Any]:
        return {"variable": self.variable, "value": self.value}

    def vet(self, policy: Policy, earlier: t.Sequence[Step] = ()) -> Export | Problem:
        if self.variable in _EXPORTABLE_FLAGS:
            if self.value in _EXPORTABLE_FLAGS[self.variable]:
                return self
            return Problem(f"{self.variable}={self.value!r} is not a setting nxsock suggests")
        if self.variable not in _EXPORTABLE_DIRS:
            return Problem(f"{self.variable} is not a variable nxsock suggests")
        problem = suggestion_problem(policy, self.value)
        return self if problem is None else Problem(problem)


@dataclass(frozen=True)
class Umask:
    """Set this shell's file-creation mask (``umask 0077``): shell configuration, like :class:`Export`.

    Only a mask that leaves the owner every bit is suggested: one that takes
    the owner's write bit (``0277``) leaves every directory Nx creates
    unwritable to its own user, and the native layer then fails with
    ``Permission denied (os error 13)``.  Nor one that lets the group or
    others write what the user creates: nothing is widened (``0700`` becomes
    ``0022``, never ``0000``); the group's and others' other bits are kept.
    """

    verb: t.ClassVar[Verb] = "umask"
    needs_root: t.ClassVar[bool] = False
    kept_when_steered: t.ClassVar[bool] = True
    mask: int

    def text(self, nxsock_for_root: str) -> str:
        return f"umask {_mode_word(self.mask)}"

    def fields(self) -> dict[str, t.Any]:
        return {"mode": _mode_word(self.mask)}

    def vet(self, policy: Policy, earlier: t.Sequence[Step] = ()) -> Umask | Problem:
        if not 0 <= self.mask <= 0o777:
            return Problem(f"{self.mask:o} is not a file-creation mask")
        if self.mask & 0o700:
            return Problem(f"a umask of {_mode_word(self.mask)} takes bits from the owner of every directory Nx "
                           "creates; nxsock suggests only a mask that leaves them")
        if self.mask & 0o022 != 0o022:
            return Problem(f"a umask of {_mode_word(self.mask)} lets the group or others write what you create; "
                           "nxsock suggests only a mask that keeps them out")
        return self


@dataclass(frozen=True)
class EditEnvFile:
    """Delete the lines of a ``.env`` file that set a variable: ``sed -i``.

    *lines* is the ``sed`` script's line numbers (``3d;7,8d``) where they were decided over the file's text, so
    the command does exactly ``--fix``'s edit (:func:`nxsock.core.dotenv.remove_assignments`); without them, the
    pattern of a line that sets the variable (:func:`nxsock.core.dotenv.sed_pattern`).
    """

    verb: t.ClassVar[Verb] = "edit-env-file"
    needs_root: t.ClassVar[bool] = False
    kept_when_steered: t.ClassVar[bool] = True
    path: str
    variable: str
    lines: str | None = None

    def _script(self) -> str:
        import re

        from .dotenv import sed_pattern

        if self.lines is not None and re.fullmatch(r"[1-9][0-9]*(,[1-9][0-9]*)?d(;[1-9][0-9]*(,[1-9][0-9]*)?d)*",
                                                   self.lines):
            return self.lines
        return f"/{sed_pattern(self.variable)}/d"

    def text(self, nxsock_for_root: str) -> str:
        return f"sed -i -e {shell_quote(self._script())} -- {shell_quote(self.path)}"

    def fields(self) -> dict[str, t.Any]:
        return {"path": self.path, "variable": self.variable, "value": self.lines}

    def vet(self, policy: Policy, earlier: t.Sequence[Step] = ()) -> EditEnvFile | Problem:
        path = self.path
        if self.variable not in _UNSETTABLE or not path.startswith("/"):
            return Problem("not a .env file and variable nxsock reads")
        entry = policy.view.lstat(path)
        if isinstance(entry, int) or entry.kind != "file":
            return Problem(f"{path} is not a regular file")
        if entry.uid != policy.uid or policy.pasted_by_root:
            return Problem(f"{path} belongs to {_who(entry.uid)}: only its owner should edit it")
        through = _walk_levels(policy, path, False)
        return self if through is None else Problem(through)


@dataclass(frozen=True)
class StopProcess:
    """Signal a process to stop: ``kill``.  The pid and its *owner* come from the daemon's record."""

    verb: t.ClassVar[Verb] = "stop-process"
    kept_when_steered: t.ClassVar[bool] = False
    pid: int
    owner: int
    needs_root: bool = False

    def text(self, nxsock_for_root: str) -> str:
        return f"kill -- {self.pid}"

    def fields(self) -> dict[str, t.Any]:
        return {"owner": self.owner, "pid": self.pid}

    def vet(self, policy: Policy, earlier: t.Sequence[Step] = ()) -> StopProcess | Problem:
        if self.pid <= 1:
            return Problem("no process to stop")
        # The pid was read from the daemon's record: whoever could write that record chose the process signalled.
        record_file = join(policy.daemon_dir, "server-process.json")
        record = _walk_levels(policy, record_file, True) or _record_problem(policy, record_file)
        if record is not None:
            return Problem(f"the pid comes from a record beneath another user's level: {record}")
        return replace(self, needs_root=self.owner != policy.uid and policy.uid != 0)


@dataclass(frozen=True)
class RunNxsock:
    """An nxsock command: it acts by descriptor, or only prints (a sandbox's allowlist)."""

    verb: t.ClassVar[Verb] = "run-nxsock"
    command: NxsockCommand
    needs_root: bool = False

    @property
    def kept_when_steered(self) -> bool:
        return self.command.allowlist is not None

    def text(self, nxsock_for_root: str) -> str:  # root's path may not hold the nxsock the user runs
        return f"{nxsock_for_root if self.needs_root else 'nxsock'} {self.command.value}"

    def fields(self) -> dict[str, t.Any]:
        return {"value": self.command.value}

    def vet(self, policy: Policy, earlier: t.Sequence[Step] = ()) -> RunNxsock | Problem:
        return self


@dataclass(frozen=True)
class RunNx:
    """An Nx command, run from the workspace's own ``node_modules/nx``."""

    verb: t.ClassVar[Verb] = "run-nx"
    needs_root: t.ClassVar[bool] = False
    kept_when_steered: t.ClassVar[bool] = False
    command: NxCommand

    def text(self, nxsock_for_root: str) -> str:
        return f"nx {self.command.value}"

    def fields(self) -> dict[str, t.Any]:
        return {"value": self.command.value}

    def vet(self, policy: Policy, earlier: t.Sequence[Step] = ()) -> RunNx | Problem:
        # nx runs the workspace's own node_modules/nx: whoever could write a level of it chooses the code run.
        code = _walk_levels(policy, join(policy.workspace_root, "node_modules", "nx", "package.json"), True)
        return self if code is None else Problem(f"nx would run code beneath another user's level: {code}")


@dataclass(frozen=True)
class InstallPackage:
    """A package-manager command that restores Nx's platform binding (*spec*: ``@nx/nx-<triple>@<version>``)."""

    verb: t.ClassVar[Verb] = "install-package"
    needs_root: t.ClassVar[bool] = False
    kept_when_steered: t.ClassVar[bool] = False
    manager: PackageManager
    spec: str

    def text(self, nxsock_for_root: str) -> str:
        return self.manager.command(self.spec)

    def fields(self) -> dict[str, t.Any]:
        return {"variable": self.manager.value, "value": self.spec}

    def vet(self, policy: Policy, earlier: t.Sequence[Step] = ()) -> InstallPackage | Problem:
        import re

        if not re.fullmatch(_BINDING_SPEC, self.spec):
            return Problem("not a package manager and Nx binding nxsock suggests")
        # The package manager runs the workspace's install scripts: whoever could write a level of it chooses the code.
        code = _walk_levels(policy, join(policy.workspace_root, "package.json"), True)
        if code is not None:
            return Problem(f"the package manager would run code beneath another user's level: {code}")
        return self


#: One thing a remedy does: a value of one verb type.
Step = (Remove | RemoveTree | Create | Chown | Chmod | Unset | Export | Umask | EditEnvFile | StopProcess | RunNxsock
        | RunNx | InstallPackage)
#: Every verb type, in the order of :data:`Verb`.
STEP_TYPES: tuple[type[Step], ...] = t.get_args(Step)


class Remedy(t.NamedTuple):
    """Steps run in order, each only if the one before succeeded, and the one sentence of what they change."""

    steps: tuple[Step, ...]
    changes: str


class Withheld(t.NamedTuple):
    """No safe command: why, and the remedy that was refused (never shown)."""

    reason: str
    refused: Remedy | None = None


def render(remedy: Remedy, nxsock_for_root: str = "nxsock") -> str:
    """The one line a user pastes: each step's command, ``sudo`` where it needs root, joined by ``&&``.

    *nxsock_for_root* is how a ``sudo`` step names nxsock (:func:`nxsock.core.program.nxsock_for_root`).

    A ``chmod`` of an entry an earlier step handed to root is guarded by
    ``test ! -L``: whoever owned it before could have left a link there.
    """
    parts = []
    chowned: set[str] = set()
    for step in remedy.steps:
        text = ("sudo " if step.needs_root else "") + step.text(nxsock_for_root)
        if isinstance(step, Chmod) and step.path in chowned:
            text = f"test ! -L {shell_quote(step.path)} && {text}"
        if isinstance(step, Chown):
            chowned.add(step.path)
        parts.append(text)
    return " && ".join(parts)


_JSON_KEYS = ("verb", "path", "variable", "value", "owner", "group", "mode", "pid", "needs_root")


def step_json(step: Step) -> dict[str, t.Any]:
    """A step as the JSON documents carry it (``remedy_steps``): every key, ``null`` where its verb has none."""
    return {**dict.fromkeys(_JSON_KEYS), **step.fields(), "verb": step.verb, "needs_root": step.needs_root}


# -- the policy ------------------------------------------------------------------------


def _beneath(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip("/") + "/")


def _levels(path: str) -> list[str]:
    """``/a/b/c`` → ``["/", "/a", "/a/b"]``: every level above *path*."""
    levels = ["/"]
    parts = [p for p in path.split("/") if p]
    for depth in range(1, len(parts)):
        levels.append("/" + "/".join(parts[:depth]))
    return levels if path != "/" else []


def _workspace_top(policy: Policy) -> str:
    """The top of Nx's own levels in the workspace: ``<ws>/.nx`` by default, else ``<workspace-data>/d``."""
    if policy.data_dir_configured:
        return policy.daemon_dir
    default_nx = join(policy.workspace_root, ".nx")
    return default_nx if _beneath(policy.data_dir, default_nx) else policy.data_dir


def nx_level_root(policy: Policy, path: str) -> str | None:
    """The top of the Nx-owned tree *path* lies in (``/tmp/.nx``, ``~/.nx``, the workspace's ``.nx``), or ``None``."""
    if path == CONTAINER or _beneath(path, policy.user_root):
        return CONTAINER
    if policy.home_nx and _beneath(path, policy.home_nx):
        return policy.home_nx
    top = _workspace_top(policy)
    if _beneath(path, top) and (_beneath(path, policy.daemon_dir) or _beneath(policy.data_dir, path)):
        return top
    return None


def _is_nx_level(policy: Policy, path: str, step: _OnDisk) -> bool:
    """Whether *step* may act on *path*: Nx's own levels only, each with the verbs that fit it."""
    if path == CONTAINER:
        # every user's container: created, handed to root or given its mode; removed only when it is no directory
        return step.ON_CONTAINER
    if _beneath(path, policy.user_root) or (policy.home_nx and _beneath(path, policy.home_nx)):
        return True
    if _beneath(path, policy.daemon_dir):
        return True
    # <ws>/.nx and <ws>/.nx/workspace-data: created, or removed (root's leftovers of ``sudo nx``), never re-owned
    return nx_level_root(policy, path) is not None and step.ON_WORKSPACE_NX


def _shared_containers(policy: Policy) -> frozenset[str]:
    """The shared container under each spelling a step could name: ``/tmp/.nx``, its real path, the temp dir's
    ``.nx``."""
    names = {CONTAINER, "/private/tmp/.nx", _canonical(policy.view, CONTAINER)}
    if policy.temp_dir is not None:
        names |= {join(policy.temp_dir, ".nx"), _canonical(policy.view, join(policy.temp_dir, ".nx"))}
    return frozenset(names)


#: Where a missing temp directory may be created (the one ``create`` outside Nx's levels): temp trees and the home.
_TEMP_TREES = ("/tmp", "/var/tmp", "/private/tmp", "/private/var/folders")


def _creates_temp_dir(policy: Policy, path: str) -> bool:
    """A ``create`` of exactly the temp directory this shell names, in a temp tree or the home, never a system path."""
    if policy.temp_dir is None or path != policy.temp_dir:
        return False
    trees = [*_TEMP_TREES, *([dirname(policy.home_nx)] if policy.home_nx else [])]
    return any(path != tree and _beneath(path, tree) for tree in trees if tree not in ("/",))


def _nx_file_in_configured(policy: Policy, path: str) -> bool:
    """A socket or cache entry Nx wrote directly in a configured directory: Nx's own file, not the directory."""
    parent = dirname(path)
    name = path.rsplit("/", 1)[-1]
    if parent in SYSTEM_PATHS:  # ``NX_SOCKET_DIR=/tmp`` or ``/etc``: Nx refuses it, and what lies there is not Nx's
        return False
    for variable, directory, real in policy.configured:
        if parent not in (directory, real):
            continue
        if variable in ("NX_SOCKET_DIR", "NX_DAEMON_SOCKET_DIR") and name.endswith(".sock"):
            return True
        if variable == "NX_NATIVE_FILE_CACHE_DIRECTORY" and name.endswith(".node"):
            return True
    return False


def _configured_conflict(policy: Policy, path: str) -> str | None:
    canonical = _canonical(policy.view, path)
    for variable, directory, real in policy.configured:
        for candidate in (directory, real):
            if _beneath(candidate, path) or _beneath(candidate, canonical):
                which = "is" if candidate == path or candidate == canonical else "lies above"
                return (
                    f"{path} {which} the directory {variable} names; a configured directory is "
                    "fixed in the configuration"
                )
    return None


def _canonical(view: FsView, path: str) -> str:
    from .guards import canonical_dir

    return canonical_dir(view, path)


def _system_conflict(policy: Policy, path: str) -> str | None:
    for system in SYSTEM_PATHS:
        if _beneath(system, path):
            return f"{path} is {'a system directory' if system == path else 'above the system directory ' + system}"
    home = dirname(policy.home_nx) if policy.home_nx else None
    if home and _beneath(home, path):
        return f"{path} is {'the home directory' if home == path else 'above the home directory ' + home}"
    return None


def _may(entry: Entry, uid: int, bits: int) -> bool:
    if uid == 0:
        return True
    shift = 6 if entry.uid == uid else 0
    return (entry.mode >> shift) & bits == bits


def _can_unlink(policy: Policy, parent: Entry, entry: Entry) -> bool:
    uid = policy.uid
    if not _may(parent, uid, 3):
        return False
    return not parent.mode & _S_ISVTX or uid in (entry.uid, parent.uid)


def _who(uid: int) -> str:
    return "root" if uid == 0 else f"uid {uid}"


def _walk_levels(policy: Policy, path: str, creating: bool) -> str | None:
    """Every level above *path*: no link inside Nx's tree, nothing another user could swap before the paste.

    Levels may be root's, or the user's own when the user is the one who
    pastes; under root's ``doctor --user`` only root's, since the audited
    user could swap their own levels between the audit and the paste.
    """
    view = policy.view
    top = nx_level_root(policy, path)
    trusted = {0} if policy.pasted_by_root else {0, policy.uid}
    for level in _levels(path):
        entry = view.lstat(level)
        if isinstance(entry, int):
            return None if creating else f"{level} does not exist"
        if entry.is_link:
            if top is not None and _beneath(level, top):
                return f"{level} is a symlink: the command would act through it"
            if entry.uid not in trusted:
                return f"{level} is a symlink of {_who(entry.uid)}, who could point it anywhere"
            # What lies beneath is where the link leads: the levels there count as this path's own.
            real = view.realpath(level)
            if isinstance(real, int):
                return None if creating else f"{level} leads nowhere"
            beyond = _walk_levels(policy, join(real, "-"), creating) if real != "/" else None
            if beyond is not None:
                return beyond
            continue
        if not entry.is_dir:
            return f"{level} is not a directory"
        if entry.uid not in trusted:
            return f"{level} belongs to {_who(entry.uid)}, who could swap what lies beneath it before the command runs"
        peers = 0o002 if entry.uid == policy.uid and entry.uid != 0 else 0o022
        if entry.mode & peers and not entry.mode & _S_ISVTX:
            return f"{level} is writable by other users without the sticky bit, so they could swap what lies beneath it"
    return None


def _record_problem(policy: Policy, record_file: str) -> str | None:
    """Why the record itself could name a pid of another user's choice, or ``None``: a link, another's, or writable by
    others."""
    entry = policy.view.lstat(record_file)
    if isinstance(entry, int):
        return None
    trusted = {0} if policy.pasted_by_root else {0, policy.uid}
    if entry.is_link or entry.kind != "file":
        return f"{record_file} is not a regular file"
    if entry.uid not in trusted:
        return f"{record_file} belongs to {_who(entry.uid)}"
    if entry.mode & (0o002 if entry.uid == policy.uid and entry.uid != 0 else 0o022):
        return f"{record_file} is writable by other users"
    return None


def suggestion_problem(policy: Policy, directory: str) -> str | None:
    """Why *directory* may not be suggested as a place of the user's own, or ``None``.

    Every existing level must be root's or the user's, with no link and
    nothing writable by others without the sticky bit; the deepest existing
    level must be the user's own — so no one else can create the missing
    rest first (``/tmp/nx-1000`` is refused: anyone may make it) — and an
    existing directory must be the user's, open to no one else.
    """
    if not directory.startswith("/") or normalize(directory) != directory:
        return f"{directory!r} is not a plain absolute path"
    if _beneath(directory, CONTAINER):
        return f"{directory} lies in Nx's shared container"
    view = policy.view
    deepest: Entry | None = None
    for level in [*_levels(directory), directory]:
        entry = view.lstat(level)
        if isinstance(entry, int):
            break
        if entry.is_link:
            return f"{level} is a symlink"
        if not entry.is_dir:
            return f"{level} is not a directory"
        if entry.uid not in (0, policy.uid):
            return f"{level} belongs to {_who(entry.uid)}"
        if entry.mode & (0o002 if entry.uid == policy.uid else 0o022) and not entry.mode & _S_ISVTX:
            return f"{level} is writable by other users without the sticky bit"
        deepest = entry
        if level == directory and (entry.uid != policy.uid or entry.mode & 0o077):
            return f"{directory} exists and is not private to you"
    if deepest is None or deepest.uid != policy.uid:
        return f"someone else could create {directory} before you: its nearest existing level is not yours"
    return None


def vet_step(step: Step, policy: Policy, earlier: t.Sequence[Step] = ()) -> Step | Problem:
    """One step under the policy, after *earlier* (already vetted): with ``sudo`` exactly where needed, or why not."""
    if policy.steered is not None and not step.kept_when_steered:
        return Problem(_STEERED.format(policy.steered))
    return step.vet(policy, earlier)


def vet(remedy: Remedy, policy: Policy) -> Remedy | Withheld:
    """The policy, in one place: *remedy* with ``sudo`` exactly where needed, or why no safe command exists."""
    if not remedy.steps:
        return Withheld(remedy.changes or "nothing to run", remedy)
    steps: list[Step] = []
    for step in remedy.steps:
        verdict = vet_step(step, policy, steps)
        if isinstance(verdict, Problem):
            return Withheld(f"No safe command: {verdict.reason}.", remedy)
        steps.append(verdict)
    return Remedy(tuple(steps), remedy.changes)


def check(remedy: Remedy, policy: Policy) -> str | None:
    """Why a remedy that is about to be shown breaks the policy, or ``None`` (what the property tests assert)."""
    verdict = vet(remedy, policy)
    if isinstance(verdict, Withheld):
        return verdict.reason
    if verdict.steps != remedy.steps:
        return "its sudo does not match what the steps need"
    return None
