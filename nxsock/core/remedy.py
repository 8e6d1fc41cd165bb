"""Remedies as values: the steps that fix a finding, the one policy they pass, one way to shell text.

The policy is docs/remedy-policy.md.

A :class:`Remedy` is what a later ``doctor --fix`` would apply and what a
user pastes today: a few :class:`Step` values (a verb from a closed
vocabulary, a path, an owner or mode, whether root is needed) and one
sentence of what it changes.  Every remedy nxsock shows goes through
:func:`vet` — the policy — and, if it passes, through :func:`render`; one
that fails is replaced by a :class:`Withheld` saying why no safe command
exists.  Nothing here changes the filesystem: the policy only looks, through
a read-only :class:`~nxsock.core.fsview.FsView`.

>>> render(Remedy((Step("remove-tree", "/tmp/.nx/1000", needs_root=True),), "removes it"))
'sudo rm -rf -- /tmp/.nx/1000'
>>> print(shell_quote("/tmp/caf\\u0085"))
$'/tmp/caf\\xc2\\x85'
"""

from __future__ import annotations

import errno
import typing as t

from ._pathname import dirname, join, normalize
from .fsview import Entry, FsView
from .layout import CONTAINER

__all__ = [
    "ALLOWLIST_FORMATS",
    "CONFIGURED_VARIABLES",
    "NXSOCK_ARGUMENTS",
    "NX_ARGUMENTS",
    "Policy",
    "Remedy",
    "Step",
    "Verb",
    "Withheld",
    "check",
    "render",
    "shell_quote",
    "step_json",
    "suggestion_problem",
    "vet",
]

#: The closed vocabulary of what a step does.
Verb = t.Literal[
    "remove",  # unlink one entry that is not a directory (a link goes as a link)
    "remove-tree",  # a directory and everything in it
    "create",  # a directory; with an owner, as root
    "chown",  # hand an entry to an owner, never following a link
    "chmod",  # set a mode
    "unset",  # a variable, in this shell
    "export",  # a variable, in this shell
    "edit-env-file",  # delete the lines of a .env file that set a variable
    "stop-process",  # signal a process to stop
    "run-nxsock",  # an nxsock command that acts by descriptor, or only prints (a sandbox's allowlist)
    "run-nx",  # an Nx command
    "install-package",  # a package-manager command that restores a package (variable: the manager); never applied by nxsock
]

FILESYSTEM_VERBS = frozenset({"remove", "remove-tree", "create", "chown", "chmod"})

#: The directories a user configures; none of them, nor an ancestor, is ever removed, moved or re-owned.
CONFIGURED_VARIABLES = (
    "NX_SOCKET_DIR",
    "NX_DAEMON_SOCKET_DIR",
    "NX_NATIVE_FILE_CACHE_DIRECTORY",
    "NX_WORKSPACE_DATA_DIRECTORY",
    "NX_PROJECT_GRAPH_CACHE_DIRECTORY",
)
#: Variables a remedy may unset or export (a directory for the first ones, ``true`` for the last).
_EXPORTABLE_DIRS = ("NX_SOCKET_DIR", "NX_NATIVE_FILE_CACHE_DIRECTORY", "NX_WORKSPACE_DATA_DIRECTORY", "NX_CACHE_DIRECTORY")
#: The flags a remedy may export, each with the values nxsock suggests (NX_DAEMON=true: where only it turns the daemon on).
_EXPORTABLE_FLAGS = {"NX_SKIP_NATIVE_FILE_CACHE": ("true",), "NX_DAEMON": ("false", "true"), "NX_ISOLATE_PLUGINS": ("false",),
                     "NX_PLUGIN_NO_TIMEOUTS": ("true",)}
_UNSETTABLE = (*CONFIGURED_VARIABLES, "NX_CACHE_DIRECTORY", "TMPDIR", "TMP", "TEMP", "NX_SKIP_NATIVE_FILE_CACHE")
#: The ``nxsock paths --format`` values that write a sandbox's allowlist (read-only: they print, they change nothing).
ALLOWLIST_FORMATS = ("text", "srt", "claude", "codex", "codex-profile", "seatbelt", "bwrap", "docker", "flatpak")
#: The nxsock and Nx command lines a remedy may name.
NXSOCK_ARGUMENTS = frozenset(
    {"reset", "reset --force", "reset --legacy", "reset --daemon-marker", "cache prune", "provision", "provision --tmpfiles --install",
     *(f"paths --format {name}" for name in ALLOWLIST_FORMATS)}
)
NX_ARGUMENTS = frozenset({"daemon --stop", "daemon --start", "reset"})
#: The package managers an ``install-package`` step names, and the command each restores an optional dependency with:
#: npm installs the one package (``--no-save``: package.json and the lockfile stay as they are); pnpm, yarn 1 and bun
#: reinstall the tree, optional dependencies included.
INSTALL_COMMANDS = {"npm": "npm install --no-save {spec}", "pnpm": "pnpm install --force", "yarn": "yarn install --force",
                    "bun": "bun install --force"}
#: The only packages an ``install-package`` step installs: Nx's platform bindings, at an exact version.
_BINDING_SPEC = r"@nx/nx-[a-z0-9]+(?:-[a-z0-9]+)*@[0-9]+\.[0-9]+\.[0-9]+(?:-[0-9A-Za-z.]+)?"

#: Levels of the system itself: never removed, moved, re-owned or re-moded, nor is anything above them.
SYSTEM_PATHS = frozenset(
    "/ /bin /boot /dev /etc /home /lib /lib32 /lib64 /libx32 /media /mnt /opt /proc /root /run /run/user /sbin /srv "
    "/sys /tmp /usr /usr/bin /usr/lib /usr/local /usr/sbin /usr/share /var /var/lib /var/tmp /var/log /private "
    "/private/tmp /private/var /Users /System /Library /Applications /nix /snap".split()
)

_S_ISVTX = 0o1000


class Step(t.NamedTuple):
    """One thing a remedy does.  Only the fields its verb uses are set."""

    verb: Verb
    path: str | None = None  # the entry acted on; for edit-env-file the file
    variable: str | None = None  # unset, export, edit-env-file
    value: str | None = None  # export's value; the arguments of run-nxsock and run-nx; edit-env-file's lines as sed reads them
    owner: int | None = None  # create, chown: the uid it will belong to
    group: int | None = None  # create, chown: the gid
    mode: int | None = None  # create, chmod
    pid: int | None = None  # stop-process
    needs_root: bool = False


class Remedy(t.NamedTuple):
    """Steps run in order, each only if the one before succeeded, and the one sentence of what they change."""

    steps: tuple[Step, ...]
    changes: str


class Withheld(t.NamedTuple):
    """No safe command: why, and the remedy that was refused (never shown)."""

    reason: str
    refused: Remedy | None = None


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


def _owner_word(uid: int | None) -> str:
    return "root" if uid == 0 else str(uid)


def _env_edit_script(step: Step) -> str:
    """The ``sed`` script of an ``edit-env-file`` step: the line numbers its value names, else the pattern of a line
    that sets the variable (:func:`nxsock.core.dotenv.sed_pattern`); which one does exactly ``--fix``'s edit was
    decided where the step was made, over the file's text."""
    import re

    from .dotenv import sed_pattern

    if step.value is not None and re.fullmatch(r"[1-9][0-9]*(,[1-9][0-9]*)?d(;[1-9][0-9]*(,[1-9][0-9]*)?d)*", step.value):
        return step.value
    return f"/{sed_pattern(step.variable or '')}/d"


def _step_text(step: Step, nxsock_for_root: str) -> str:
    q = shell_quote(step.path) if step.path is not None else ""
    mode = None if step.mode is None else format(step.mode & 0o7777, "04o")
    verb = step.verb
    if verb == "remove":
        text = f"rm -- {q}"
    elif verb == "remove-tree":
        text = f"rm -rf -- {q}"
    elif verb == "create":
        if step.owner is not None:
            text = f"install -d -m {mode} -o {_owner_word(step.owner)} -g {_owner_word(step.group)} {q}"
        elif mode is not None:
            text = f"mkdir -m {mode} -- {q}"
        else:
            text = f"mkdir -p -- {q}"
    elif verb == "chown":
        text = f"chown -h {_owner_word(step.owner)}:{_owner_word(step.group)} -- {q}"
    elif verb == "chmod":
        text = f"chmod {mode} -- {q}"
    elif verb == "unset":
        text = f"unset {step.variable}"
    elif verb == "export":
        text = f"export {step.variable}={shell_quote(step.value or '')}"
    elif verb == "edit-env-file":
        text = f"sed -i -e {shell_quote(_env_edit_script(step))} -- {q}"
    elif verb == "stop-process":
        text = f"kill -- {step.pid}"
    elif verb == "run-nxsock":  # root's path may not hold the nxsock the user runs
        text = f"{nxsock_for_root if step.needs_root else 'nxsock'} {step.value}"
    elif verb == "install-package":
        text = INSTALL_COMMANDS.get(step.variable or "", "false").format(spec=shell_quote(step.value or ""))
    else:  # run-nx
        text = f"nx {step.value}"
    return ("sudo " if step.needs_root else "") + text


def render(remedy: Remedy, nxsock_for_root: str = "nxsock") -> str:
    """The one line a user pastes: each step's command, ``sudo`` where it needs root, joined by ``&&``.

    *nxsock_for_root* is how a ``sudo`` step names nxsock (:func:`nxsock.core.program.nxsock_for_root`).

    A ``chmod`` of an entry an earlier step handed to root is guarded by
    ``test ! -L``: whoever owned it before could have left a link there.
    """
    parts = []
    chowned: set[str] = set()
    for step in remedy.steps:
        text = _step_text(step, nxsock_for_root)
        if step.verb == "chmod" and step.path in chowned:
            text = f"test ! -L {shell_quote(step.path or '')} && {text}"
        if step.verb == "chown" and step.path is not None:
            chowned.add(step.path)
        parts.append(text)
    return " && ".join(parts)


def step_json(step: Step) -> dict[str, t.Any]:
    """A step as the JSON documents carry it (``remedy_steps``): what a ``doctor --fix`` would apply."""
    return {
        "verb": step.verb,
        "path": step.path,
        "variable": step.variable,
        "value": step.value,
        "owner": step.owner,
        "group": step.group,
        "mode": None if step.mode is None else format(step.mode & 0o7777, "04o"),
        "pid": step.pid,
        "needs_root": step.needs_root,
    }


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


def _is_nx_level(policy: Policy, path: str, verb: str) -> bool:
    """Whether *verb* may act on *path*: Nx's own levels only, each with the verbs that fit it."""
    if path == CONTAINER:
        # every user's container: created, handed to root or given its mode; removed only when it is no directory
        return verb in ("create", "chown", "chmod", "remove")
    if _beneath(path, policy.user_root) or (policy.home_nx and _beneath(path, policy.home_nx)):
        return True
    if _beneath(path, policy.daemon_dir):
        return True
    # <ws>/.nx and <ws>/.nx/workspace-data: created, or removed (root's leftovers of ``sudo nx``), never re-owned
    return nx_level_root(policy, path) is not None and verb in ("remove", "remove-tree", "create")


def _shared_containers(policy: Policy) -> frozenset[str]:
    """The shared container under each spelling a step could name: ``/tmp/.nx``, its real path, the temp dir's ``.nx``."""
    names = {CONTAINER, "/private/tmp/.nx", _canonical(policy.view, CONTAINER)}
    if policy.temp_dir is not None:
        names |= {join(policy.temp_dir, ".nx"), _canonical(policy.view, join(policy.temp_dir, ".nx"))}
    return frozenset(names)


def _container_problem(policy: Policy, step: Step) -> str | None:
    """The shared container is every user's: it only ever becomes root's or stays, and is never anything but ``1777``."""
    path = step.path or ""
    if path not in _shared_containers(policy):
        return None
    if step.verb == "chmod" and step.mode != 0o1777:
        return f"{path} is the container every user shares: its mode stays 1777"
    if step.verb == "chown" and (step.owner, step.group) != (0, 0):
        return f"{path} is the container every user shares: it is handed to root alone"
    if step.verb == "create" and (step.mode != 0o1777 or step.owner not in (None, 0) or step.group not in (None, 0)):
        return f"{path} is the container every user shares: it is created 1777, for root or as Nx makes it"
    if step.verb == "remove-tree":
        return f"{path} is the container every user shares: it holds every user's levels"
    return None


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
                return f"{path} {which} the directory {variable} names; a configured directory is fixed in the configuration"
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
    """Why the record itself could name a pid of another user's choice, or ``None``: a link, another's, or writable by others."""
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


def _filesystem_problem(policy: Policy, step: Step, earlier: t.Sequence[Step]) -> tuple[str | None, bool]:
    """Why *step* may not be shown, or ``None``; and whether it needs root (least privilege)."""
    path = step.path
    if path is None or not path.startswith("/") or normalize(path) != path or "\0" in path:
        return f"{path!r} is not a plain absolute path", step.needs_root
    verb = step.verb
    creates_owned = verb == "create" and step.owner is not None
    # Every verb that changes the disk, a plain ``mkdir`` too: a created directory is a place someone chose.
    container = _container_problem(policy, step)
    if container is not None:
        return container, step.needs_root
    if verb == "create" and not creates_owned and _creates_temp_dir(policy, path):
        conflict = _system_conflict(policy, path)
        if conflict:
            return conflict, step.needs_root
    else:
        if not (_is_nx_level(policy, path, verb) or (verb == "remove" and _nx_file_in_configured(policy, path))):
            return f"{path} is not one of Nx's own directories; nxsock changes nothing else", step.needs_root
        conflict = _configured_conflict(policy, path) if not _nx_file_in_configured(policy, path) else None
        conflict = conflict or _system_conflict(policy, path)
        if conflict:
            return conflict, step.needs_root
    view = policy.view
    gone = any(s.verb in ("remove", "remove-tree") and s.path is not None and _beneath(path, s.path) for s in earlier)
    entry: Entry | int = errno.ENOENT if gone else view.lstat(path)  # once an earlier step removed it
    parent = view.lstat(dirname(path))
    if verb != "create":
        through = _walk_levels(policy, path, False)
        if through is not None:
            return through, step.needs_root
    if verb == "create":
        if isinstance(entry, Entry):
            return f"{path} already exists", step.needs_root
        needs_root = creates_owned and step.owner != policy.uid
        if not isinstance(parent, Entry):
            if step.mode is not None:  # mkdir of one level: its parent must exist
                return f"{dirname(path)} does not exist", step.needs_root
        elif not parent.is_dir:
            return f"{dirname(path)} is not a directory", step.needs_root
        elif not _may(parent, policy.uid, 3):
            if not creates_owned:
                return f"you may not create entries in {dirname(path)}", step.needs_root
            needs_root = True
    else:
        if isinstance(entry, int):
            return f"{path} does not exist", step.needs_root
        if not isinstance(parent, Entry):
            return f"{dirname(path)} cannot be examined", step.needs_root
        if verb == "remove" and entry.is_dir:
            return f"{path} is a directory", step.needs_root
        if verb in ("chown", "chmod") and entry.is_link:
            return f"{path} is a symlink; changing it would change what it points at", step.needs_root
        if verb in ("remove", "remove-tree"):
            needs_root = not _can_unlink(policy, parent, entry) or (verb == "remove-tree" and entry.uid != policy.uid)
        elif verb == "chown":
            needs_root = (step.owner, step.group) != (policy.uid, policy.gid) or entry.uid != policy.uid
        else:  # chmod: of whoever owns it by then (an earlier step may have handed it over)
            handed_to = [s.owner for s in earlier if s.verb == "chown" and s.path == path]
            handed = bool(handed_to)
            needs_root = (handed_to[-1] if handed else entry.uid) != policy.uid
            if entry.uid not in (0, policy.uid) and not handed:
                return f"{path} belongs to {_who(entry.uid)}, who could replace it before the command runs", step.needs_root
    needs_root = needs_root and policy.uid != 0
    return _walk_levels(policy, path, verb == "create"), needs_root


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


def _step_problem(policy: Policy, step: Step, earlier: t.Sequence[Step]) -> tuple[str | None, Step]:
    verb = step.verb
    if policy.steered is not None and verb not in ("export", "unset", "edit-env-file") and not (
        verb == "run-nxsock" and (step.value or "").startswith("paths --format ")
    ):
        return f"{policy.steered}; nothing another user's file steers is acted on (ask that user, or work in a checkout of your own)", step
    if verb in FILESYSTEM_VERBS:
        problem, needs_root = _filesystem_problem(policy, step, earlier)
        return problem, step._replace(needs_root=needs_root)
    if verb == "unset":
        if step.variable not in _UNSETTABLE:
            return f"{step.variable} is not a variable nxsock reads", step
        return None, step._replace(needs_root=False)
    if verb == "export":
        if step.variable in _EXPORTABLE_FLAGS:
            ok = step.value in _EXPORTABLE_FLAGS[step.variable]
            return (None if ok else f"{step.variable}={step.value!r} is not a setting nxsock suggests"), step._replace(needs_root=False)
        if step.variable not in _EXPORTABLE_DIRS or step.value is None:
            return f"{step.variable} is not a variable nxsock suggests", step
        return suggestion_problem(policy, step.value), step._replace(needs_root=False)
    if verb == "edit-env-file":
        path = step.path or ""
        if step.variable not in _UNSETTABLE or not path.startswith("/"):
            return "not a .env file and variable nxsock reads", step
        entry = policy.view.lstat(path)
        if isinstance(entry, int) or entry.kind != "file":
            return f"{path} is not a regular file", step
        if entry.uid != policy.uid or policy.pasted_by_root:
            return f"{path} belongs to {_who(entry.uid)}: only its owner should edit it", step
        return _walk_levels(policy, path, False), step._replace(needs_root=False)
    if verb == "stop-process":
        if step.pid is None or step.pid <= 1:
            return "no process to stop", step
        # The pid was read from the daemon's record: whoever could write that record chose the process signalled.
        record_file = join(policy.daemon_dir, "server-process.json")
        record = _walk_levels(policy, record_file, True) or _record_problem(policy, record_file)
        if record is not None:
            return f"the pid comes from a record beneath another user's level: {record}", step
        return None, step._replace(needs_root=step.owner != policy.uid and policy.uid != 0)
    if verb == "run-nxsock":
        if step.value not in NXSOCK_ARGUMENTS:
            return f"nxsock {step.value} is not a command nxsock suggests", step
        return None, step
    if verb == "run-nx":
        if step.value not in NX_ARGUMENTS:
            return f"nx {step.value} is not a command nxsock suggests", step
        # nx runs the workspace's own node_modules/nx: whoever could write a level of it chooses the code run.
        code = _walk_levels(policy, join(policy.workspace_root, "node_modules", "nx", "package.json"), True)
        if code is not None:
            return f"nx would run code beneath another user's level: {code}", step
        return None, step._replace(needs_root=False)
    if verb == "install-package":
        import re

        if step.variable not in INSTALL_COMMANDS or not re.fullmatch(_BINDING_SPEC, step.value or ""):
            return "not a package manager and Nx binding nxsock suggests", step
        # The package manager runs the workspace's install scripts: whoever could write a level of it chooses the code run.
        code = _walk_levels(policy, join(policy.workspace_root, "package.json"), True)
        if code is not None:
            return f"the package manager would run code beneath another user's level: {code}", step
        return None, step._replace(needs_root=False)
    return f"unknown verb {verb!r}", step


def vet(remedy: Remedy, policy: Policy) -> Remedy | Withheld:
    """The policy, in one place: *remedy* with ``sudo`` exactly where needed, or why no safe command exists."""
    if not remedy.steps:
        return Withheld(remedy.changes or "nothing to run", remedy)
    steps: list[Step] = []
    for step in remedy.steps:
        problem, corrected = _step_problem(policy, step, steps)
        if problem is not None:
            return Withheld(f"No safe command: {problem}.", remedy)
        steps.append(corrected)
    return Remedy(tuple(steps), remedy.changes)


def check(remedy: Remedy, policy: Policy) -> str | None:
    """Why a remedy that is about to be shown breaks the policy, or ``None`` (what the property tests assert)."""
    verdict = vet(remedy, policy)
    if isinstance(verdict, Withheld):
        return verdict.reason
    if verdict.steps != remedy.steps:
        return "its sudo does not match what the steps need"
    return None
