"""Every sentence nxsock says about a refusal, and the remedy that fixes it.

Wording is decided here and nowhere else.  A remedy is built as a value
(:class:`~nxsock.core.remedy.Remedy`), passed through the one policy
(:func:`~nxsock.core.remedy.vet`) and rendered by the one function
(:func:`~nxsock.core.remedy.render`); what the user sees is an :class:`Advice` —
the command to paste (``None`` where no safe command exists) and the sentence
of what it changes, or why there is no command.

The sentences of the ``paths``, ``check-root`` and ``provision`` screens are in
:mod:`nxsock.core.wording_paths`, a stdlib-only module this one re-exports:
human ``paths`` loads them on its fast path, without the remedy policy imported
here.  One namespace still decides every sentence.
"""

from __future__ import annotations

import typing as t
from dataclasses import replace

from ._pathname import dirname, join
from .fsview import OVERFLOW_UID, Entry, FsView
from .guards import Refusal
from .layout import CONTAINER, short_hash
from .remedy import (
    CONFIGURED_VARIABLES,
    Chmod,
    Chown,
    Create,
    EditEnvFile,
    Export,
    Policy,
    Remedy,
    Remove,
    RemoveTree,
    Step,
    Umask,
    Unset,
    Withheld,
    nx_level_root,
    render,
    shell_quote,
    suggestion_problem,
    vet,
)
from .sandbox_daemon import CLEAR_MARKER, RUN_INSIDE, SandboxDaemon
from .terminal import counted, format_mode
from .wording_paths import *  # noqa: F403  (the paths screens' sentences: one namespace, loaded without the policy)
from .wording_paths import __all__ as _PATHS_NAMES

if t.TYPE_CHECKING:
    from .environment import Environment
    from .resolver import Resolution

__all__ = [
    "AFTER_FIX",
    "DAEMON_BACK",
    "DAEMON_MESSAGE_CAUSES",
    "DAEMON_SEEN_HERE",
    "INOTIFY_NO_COMMAND",
    "INSIDE_HINT",
    "MARKER_WITH_CAUSE",
    "NO_SOCKETS_HERE",
    "NO_SOCKETS_ON",
    "NO_SOCKETS_UNSET",
    "OS_ERROR_13_NO_PATH",
    "OS_ERROR_13_UNWRITABLE",
    "PLUGINS_IN_PROCESS",
    "PLUGIN_NO_TIMEOUTS",
    "PROVISION_COMMAND",
    "READ_ONLY_CACHE_TOO",
    "READ_ONLY_HINT",
    "READ_ONLY_NO_COMMAND",
    "SHARED_SOCKET_DIR",
    "SHARED_SOCKET_DIR_RECORD",
    "SHARED_SOCKET_DIR_UNSET",
    "VERSION_CHANGED",
    "WINDOWS_NOT_JUDGED",
    "Advice",
    "RemedyContext",
    "cache_leftovers_found",
    "configuration_fix",
    "context_for",
    "counted",
    "dead_state_found",
    "describe",
    "describe_invalid",
    "doctor_summary",
    "fix_interrupted",
    "glob_warning",
    "inside_advice",
    "legacy_leftovers_found",
    "marker_warning",
    "pending_warning",
    "plain_context",
    "problems_after_fix",
    "remedy_for",
    "remedy_for_invalid",
    "sandbox_daemon_warnings",
    "sandbox_statement",
    "shell_quote",
    "socket_export",
    "tmpdir_warning",
    "umask_cause",
    "umask_note",
    "umask_remedy",
    "verdict_sentence",
    "version_changed_note",
]
__all__ += _PATHS_NAMES

#: The command that makes ``/tmp/.nx`` a shared, root-owned, sticky container.
PROVISION_COMMAND = f"sudo install -d -m 1777 -o root -g root {CONTAINER}"

PROVISION = Remedy(
    (Create(CONTAINER, owner=0, group=0, mode=0o1777, needs_root=True),),
    "Creates /tmp/.nx for every user: root's, mode 1777, so no user can take it over.",
)


class Advice(t.NamedTuple):
    """What a finding or an answer advises: the vetted remedy, or ``None`` where no safe command exists; and the
    sentence of what it changes, or why there is none.

    It carries values, not text: the line to paste is rendered from the vetted
    steps (:func:`~nxsock.core.remedy.render`) where it is shown.
    """

    remedy: Remedy | None  # vetted: ``sudo`` exactly where needed; never empty
    hint: str | None
    nxsock_for_root: str = "nxsock"  # how a ``sudo`` step names nxsock (:attr:`Policy.nxsock_for_root`)

    @property
    def steps(self) -> tuple[Step, ...]:
        """The vetted steps ``--fix`` applies (empty when there is no command)."""
        return self.remedy.steps if self.remedy is not None else ()

    @property
    def command(self) -> str | None:
        """The one line to paste, rendered from the vetted remedy; ``None`` where there is none."""
        return render(self.remedy, self.nxsock_for_root) if self.remedy is not None else None


class RemedyContext:
    """Who the remedies are for, the policy they must pass, and the directories one may suggest."""

    def __init__(self, policy: Policy, resolution: Resolution | None = None) -> None:
        self.policy = policy
        self.resolution = resolution
        self._socket_dir: list[str | None] = []
        self._data_dir: list[str | None] = []

    @property
    def uid(self) -> int:
        return self.policy.uid

    @property
    def gid(self) -> int:
        return self.policy.gid

    @property
    def socket_dir_suggestion(self) -> str | None:
        """A short ``NX_SOCKET_DIR`` only the user can own, that Nx accepts and every socket fits."""
        if not self._socket_dir:
            self._socket_dir.append(_suggest(self, "NX_SOCKET_DIR", ("nx", ".nxs")))
        return self._socket_dir[0]

    @property
    def data_dir_suggestion(self) -> str | None:
        """An ``NX_WORKSPACE_DATA_DIRECTORY`` of the user's own under which Nx can establish its daemon directory."""
        if not self._data_dir:
            ws = self.resolution.environment.workspace_root if self.resolution else self.policy.workspace_root
            name = "nx-data-" + short_hash([ws], 8)
            self._data_dir.append(_suggest(self, "NX_WORKSPACE_DATA_DIRECTORY", (name, f".cache/{name}")))
        return self._data_dir[0]

    def source_of(self, variable: str) -> str:
        if self.resolution is None:
            return "environment"
        var = self.resolution.environment.variables.get(variable)
        return "environment" if var is None else var.source

    def offer(self, remedy: Remedy | Withheld, *alternatives: Remedy | Withheld | None) -> Advice:
        """*remedy* vetted and rendered, with each alternative that passes too; or why there is no command.

        Where the remedy itself is withheld, the first alternative that passes
        becomes the command and the reason stays in the sentence.
        """
        verdict = vet(remedy, self.policy) if isinstance(remedy, Remedy) else remedy
        passed = [
            v for v in (vet(a, self.policy) for a in alternatives if isinstance(a, Remedy)) if isinstance(v, Remedy)
        ]
        program = self.policy.nxsock_for_root
        if isinstance(verdict, Withheld):
            if not passed:
                unsafe = [a.reason for a in alternatives if isinstance(a, Withheld)]
                return Advice(None, " ".join(dict.fromkeys([verdict.reason, *unsafe])))
            first, rest = passed[0], passed[1:]
            return Advice(first, f"{verdict.reason} {first.changes}" + _or(rest, program), program)
        return Advice(verdict, verdict.changes + _or(passed, program), program)


def _or(alternatives: list[Remedy], nxsock_for_root: str) -> str:
    return "".join(f" Or: {render(a, nxsock_for_root)} — {a.changes}" for a in alternatives)


def _suggest(ctx: RemedyContext, variable: str, names: tuple[str, str]) -> str | None:
    """The first candidate (under ``$XDG_RUNTIME_DIR``, else the home) that passes every rule, tried by resolving with
    it."""
    from .environment import Variable, home_directory
    from .resolver import resolve

    res = ctx.resolution
    if res is None:
        return None
    env = res.environment
    candidates = []
    runtime = env.nonempty("XDG_RUNTIME_DIR")
    if runtime and runtime.startswith("/"):
        candidates.append(join(runtime, names[0]))
    home = home_directory(env, passwd_fallback=res.rules.empty_home_uses_passwd)
    if home:
        candidates.append(join(home, names[1]))
    for candidate in candidates:
        if suggestion_problem(ctx.policy, candidate) is not None:
            continue
        variables = dict(env.variables)
        variables[variable] = Variable(candidate, "suggestion")
        trial = resolve(env._replace(variables=variables), ctx.policy.view)
        if variable == "NX_SOCKET_DIR":
            if trial.socket_root.tier == "configured" and not any(p.too_long for p in trial.sockets.values()) \
                    and trial.socket_root.listen_fails is None:
                return candidate
        elif trial.socket_root.tier is not None and not trial.workspace_data.refused:
            return candidate
    return None


def context_for(resolution: Resolution, view: FsView, *, pasted_by_root: bool = False,
                nxsock_for_root: str = "nxsock") -> RemedyContext:
    """The remedy context for *resolution* over *view*: the user, Nx's levels, the configured directories.

    *nxsock_for_root* is how a ``sudo`` line names nxsock (:func:`nxsock.core.program.nxsock_for_root`).
    """
    from ._pathname import resolve as resolve_path
    from .environment import home_directory
    from .guards import canonical_dir

    env = resolution.environment
    home = home_directory(env, passwd_fallback=resolution.rules.empty_home_uses_passwd)
    configured = []
    for name in CONFIGURED_VARIABLES:
        value = env.nonempty(name)
        if value is None:
            continue
        base = env.workspace_root if name in ("NX_WORKSPACE_DATA_DIRECTORY", "NX_PROJECT_GRAPH_CACHE_DIRECTORY",
                                             "NX_CACHE_DIRECTORY") else env.cwd
        directory = resolve_path(value, base)
        configured.append((name, directory, canonical_dir(view, directory)))
    data = resolution.workspace_data
    policy = Policy(
        view=view,
        uid=env.uid,
        gid=env.gid,
        home_nx=join(home, ".nx") if home else None,
        data_dir=resolve_path(data.dir, env.workspace_root),
        data_dir_configured=data.source != "default" and data.source != "lerna workspace",
        workspace_root=env.workspace_root,
        configured=tuple(configured),
        pasted_by_root=pasted_by_root,
        steered=env.steered,
        temp_dir=_temp_dir(env),
        nxsock_for_root=nxsock_for_root,
    )
    return RemedyContext(policy, resolution)


def _temp_dir(env: Environment) -> str | None:
    """The directory ``$TMPDIR`` (``$TMP``, ``$TEMP``) names, absolute; ``None`` when none is set or on Windows."""
    from ._pathname import resolve as resolve_path

    if env.platform == "win32" or not any(env.nonempty(name) for name in ("TMPDIR", "TMP", "TEMP")):
        return None
    return resolve_path(env.node_tmpdir(), env.cwd)


def plain_context(view: FsView, uid: int, gid: int, home: str | None = None) -> RemedyContext:
    """A context without a resolution (nothing configured): for a container judged on its own."""
    policy = Policy(view, uid, gid, join(home, ".nx") if home and home.startswith("/") else None,
                    "/nonexistent/.nx/workspace-data", False, "/nonexistent")
    return RemedyContext(policy)


# -- sentences -------------------------------------------------------------------------


def _owner(uid: int | None) -> str:
    return "root" if uid == 0 else f"uid {uid}"


_PURPOSE = {"sockets": "keep sockets in it", "cache": "keep its binding cache in it",
            "container": "share it between users"}


def describe(refusal: Refusal, purpose: str = "sockets") -> str:
    """One sentence saying what is wrong with the directory, for what Nx wanted it (*purpose*: sockets, cache, or
    container: the shared root ``check-root`` judges)."""
    d, mode = refusal.dir, format_mode(refusal.mode)
    kind = refusal.kind
    if kind == "not-created":
        return f"{d} cannot be created ({refusal.errno})."
    if kind == "not-inspectable":
        return f"{d} cannot be examined ({refusal.errno})."
    if kind == "not-a-directory":
        if refusal.symlink:
            return f"{d} is a symlink where Nx expects a real directory; Nx never follows it."
        return f"{d} exists but is not a directory."
    if kind == "foreign-owner":
        return (
            f"{d} belongs to {_owner(refusal.uid)}, not to you, so Nx will not "
            f"{_PURPOSE.get(purpose, _PURPOSE['sockets'])}."
        )
    if kind == "foreign-shared-container":
        return (
            f"{d} belongs to {_owner(refusal.uid)}, so it could swap your private directory beneath it; Nx only "
            "trusts root or you here."
        )
    if kind == "foreign-ancestor":
        return (
            f"{d} lies above the directory and belongs to {_owner(refusal.uid)}, who could replace what is beneath it."
        )
    if kind == "not-tightenable":
        return f"{d} is open to other users (mode {mode}) and cannot be restricted to 0700."
    if kind == "peer-writable-not-sticky":
        return (
            f"{d} is writable by other users without the sticky bit (mode {mode}), so they could "
            "replace directories in it."
        )
    if kind == "not-private":
        return f"{d} is open to other users (mode {mode}); Nx's client dials only a socket in an owner-only directory."
    return f"{d} was refused ({kind})."


# -- remedies for refusals ---------------------------------------------------------------


def _configured_variable(ctx: RemedyContext, directory: str, purpose: str) -> str | None:
    """The variable whose directory *directory* is, or lies above (a refusal met on its chain)."""
    wanted = ("NX_NATIVE_FILE_CACHE_DIRECTORY",) if purpose == "cache" else ("NX_SOCKET_DIR", "NX_DAEMON_SOCKET_DIR")
    for variable, path, real in ctx.policy.configured:
        if variable not in wanted:
            continue
        for candidate in (path, real):
            if candidate == directory or candidate.startswith(directory.rstrip("/") + "/"):
                return variable
    return None


def socket_export(ctx: RemedyContext) -> Remedy | Withheld:
    suggestion = ctx.socket_dir_suggestion
    if suggestion is None:
        return Withheld(
            "No directory only you can own (under $XDG_RUNTIME_DIR or your home) passes every rule to "
            "suggest as NX_SOCKET_DIR."
        )
    return Remedy(
        (Export(variable="NX_SOCKET_DIR", value=suggestion),),
        f"Keeps Nx's sockets in {suggestion}, a directory only you can own (add it to your "
        "shell's profile to keep it).",
    )


def _lines_of(lines: t.Sequence[tuple[int, int]], path: str) -> str:
    """``line 2 of PATH``, ``lines 2–3 of PATH``, ``lines 2, 5 and 7–8 of PATH``."""
    spans = [str(a) if a == b else f"{a}–{b}" for a, b in lines]
    if not spans:
        return path
    word = "line" if len(lines) == 1 and lines[0][0] == lines[0][1] else "lines"
    listed = spans[0] if len(spans) == 1 else f"{', '.join(spans[:-1])} and {spans[-1]}"
    return f"{word} {listed} of {path}"


def _env_file_fix(ctx: RemedyContext, variable: str, path: str, what: str) -> Remedy | Withheld:
    """Delete *variable*'s assignments from the ``.env`` file *path*, with the ``sed`` that makes exactly the edit
    ``--fix`` makes (:func:`nxsock.core.dotenv.remove_assignments`), or why there is no such command."""
    from .dotenv import DOTENV_LIMIT, remove_assignments

    text = ctx.policy.view.read_text(path)
    step = EditEnvFile(path, variable=variable)
    if isinstance(
        text, int
    ):  # not a file nxsock can read: the policy says why (a link, another user's), or sed cannot either
        return Remedy(
            (step,),
            f"{variable} is set in {path}; this deletes the lines there that set it, so Nx uses its default {what}.",
        )
    entry = ctx.policy.view.lstat(path)
    if not isinstance(entry, int) and entry.size > DOTENV_LIMIT:  # what sed would do past what was read is unknown
        return Withheld(
            f"No safe command: {variable} is set in {path}, which is larger than the {DOTENV_LIMIT} bytes nxsock "
            f"reads and edits; remove it there yourself, so Nx uses its default {what}."
        )
    edit = remove_assignments(text, variable)
    where = _lines_of(edit.lines, path)
    if edit.text is None:
        return Withheld(f"No safe command: {variable} is set in {where}, which nxsock does not edit: {edit.reason}; "
                        f"remove it there yourself, so Nx uses its default {what}.")
    if edit.sed is None:
        return Withheld(
            f"No safe command: {variable} is set in {where}, and no sed command deletes exactly that: {edit.no_sed}; "
            f"delete it in an editor, so Nx uses its default {what}."
        )
    return Remedy(
        (replace(step, lines=edit.sed or None),),
        f"{variable} is set in {where}; this deletes "
        f"{'that assignment' if len(edit.lines) == 1 else 'those assignments'} "
        f"and nothing else, so Nx uses its default {what}.",
    )


def configuration_fix(ctx: RemedyContext, variable: str, what: str) -> Remedy | Withheld:
    """Unset *variable* where it was set: in this shell, or by deleting its assignments from the ``.env`` file that set
    it."""
    source = ctx.source_of(variable)
    if source.startswith("/"):
        return _env_file_fix(ctx, variable, source, what)
    return Remedy(
        (Unset(variable=variable),),
        f"Unsets {variable} in this shell, so Nx uses its default {what}; remove it too wherever "
        "your profile or CI sets it.",
    )


def _what(purpose: str) -> str:
    return "binding cache" if purpose == "cache" else "socket directory"


def _build(refusal: Refusal, ctx: RemedyContext, purpose: str) -> tuple[Remedy | Withheld, Remedy | Withheld | None]:
    """The remedy for *refusal* and an alternative, before the policy sees them."""
    d = refusal.dir
    kind = refusal.kind
    variable = _configured_variable(ctx, d, purpose)
    if variable is not None:
        fix = configuration_fix(ctx, variable, _what(purpose))
        return fix, (socket_export(ctx) if purpose == "sockets" else None)
    elsewhere = socket_export(ctx) if purpose == "sockets" else None
    if kind == "not-created":
        if d == CONTAINER:
            return PROVISION, None
        if refusal.errno == "ENOENT":
            return Remedy((Create(dirname(d)),), f"Creates {dirname(d)}, the missing level above it."), elsewhere
        if refusal.errno in ("EACCES", "EPERM"):
            umask = umask_cause(ctx, d)  # a directory elsewhere would be made unwritable too: no alternative
            return (umask, None) if umask is not None else (_unwritable(ctx, d, purpose), elsewhere)
        return Withheld(
            f"Creating {d} failed with {refusal.errno}"
            + (
                f"; {dirname(d)} is on a read-only filesystem (a sandbox's bind mount, typically)."
                if refusal.errno == "EROFS"
                else "."
            )
        ), elsewhere
    if kind == "not-inspectable":
        if refusal.errno == "ENOENT":
            return (
                Remedy(
                    (Create(d, mode=0o700),),
                    f"Creates {d}, yours and private, which TMPDIR names; or unset TMPDIR, or upgrade to Nx "
                    "24, which does not need it.",
                ),
                None,
            )
        return Withheld(f"A level above {d} cannot be searched by you ({refusal.errno})."), elsewhere
    if kind == "not-a-directory":
        remove = Remove(d)
        if d == CONTAINER:
            return Remedy(
                (remove, *PROVISION.steps),
                "Removes what stands at /tmp/.nx (a link goes as a link; what it points at is untouched) and creates "
                "the shared container: root's, 1777.",
            ), None
        from .remedy import nx_level_root

        if nx_level_root(ctx.policy, d) is None:
            return Withheld(
                f"No safe command: {d} is not one of Nx's own directories; nxsock suggests no change to it."
            ), None
        what = "the link itself, never what it points at" if refusal.symlink else "the file"
        return Remedy(
            (remove,),
            f"Removes {what}; Nx then creates the directory it needs. If you did not make it, treat it as hostile.",
        ), elsewhere
    if kind == "foreign-owner":
        if refusal.uid == 0:
            why = f"Removes {d}, left by running Nx as root (sudo); Nx recreates it, yours, on its next run."
        else:
            why = (
                f"Removes {d}, which {_owner(refusal.uid)} made first; it is removed, never handed to you, "
                "and Nx recreates it, yours."
            )
        return Remedy((RemoveTree(d, needs_root=True),), why), elsewhere
    if kind == "foreign-shared-container":
        return Remedy(
            (Chown(d, owner=0, group=0, needs_root=True), Chmod(d, mode=0o1777, needs_root=True)),
            f"Hands {d} to root and makes it 1777, shared and sticky; every user's directory "
            "beneath it stays as it is.",
        ), None
    if kind == "foreign-ancestor":
        return Withheld(f"{d} is not Nx's; nxsock changes nothing there ({_owner(refusal.uid)} owns it)."), elsewhere
    if kind in ("not-tightenable", "not-private"):
        return Remedy(
            (Chmod(d, mode=0o700),), f"Restricts {d} to you; if the mode does not stick, the filesystem ignores modes."
        ), elsewhere
    if kind == "peer-writable-not-sticky":
        if d == CONTAINER:
            return Remedy(
                (Chmod(d, mode=0o1777, needs_root=True),),
                f"Makes {d} 1777: sticky, so users cannot replace each other's directories.",
            ), None
        return Withheld(
            f"{d} is not Nx's; nxsock changes nothing there. Whoever runs the machine can make it sticky (chmod +t)."
        ), elsewhere
    return Withheld(f"{d} was refused ({kind})."), elsewhere


def _unwritable(ctx: RemedyContext, level: str, purpose: str) -> Remedy | Withheld:
    """*level* cannot be created: name the real blocker above it, and fix only what is Nx's."""
    view = ctx.policy.view
    blocker = dirname(level)
    while isinstance(view.lstat(blocker), int) and dirname(blocker) != blocker:
        blocker = dirname(blocker)
    entry = view.lstat(blocker)
    facts = f" (owner {_owner(entry.uid)}, mode {format_mode(entry.mode)})" if isinstance(entry, Entry) else ""
    from .remedy import nx_level_root

    if (
        isinstance(entry, Entry)
        and entry.uid != ctx.uid
        and nx_level_root(ctx.policy, blocker) not in (None, CONTAINER)
    ):
        top = blocker
        while (
            dirname(top) != top
            and nx_level_root(ctx.policy, dirname(top)) is not None
            and _foreign(view, dirname(top), ctx.uid)
        ):
            top = dirname(top)
        return Remedy(
            (RemoveTree(top, needs_root=True),),
            f"You may not write in {blocker}{facts}: it was left by running Nx as {_owner(entry.uid)}; this removes "
            f"{top} and Nx recreates it, yours.",
        )
    data = ctx.data_dir_suggestion if purpose == "sockets" else None
    reason = f"You may not write in {blocker}{facts}, so Nx cannot create {level}."
    if data is not None:
        return Remedy(
            (Export(variable="NX_WORKSPACE_DATA_DIRECTORY", value=data),),
            f"{reason} This keeps Nx's workspace data (its daemon's files and the workspace fallback) "
            f"in {data}, which is yours.",
        )
    if purpose == "container":  # check-root judges a shared root: Nx's workspace data has nothing to do with it
        return Withheld(f"{reason} {blocker} is not Nx's, and nxsock changes nothing there.")
    return Withheld(
        f"{reason} {blocker} is not Nx's; make it writable for uid {ctx.uid}, or set NX_WORKSPACE_DATA_DIRECTORY "
        "to a directory of yours."
    )


def _foreign(view: FsView, path: str, uid: int) -> bool:
    entry = view.lstat(path)
    return isinstance(entry, Entry) and entry.is_dir and entry.uid != uid


def remedy_for(refusal: Refusal, ctx: RemedyContext, purpose: str = "sockets") -> Advice:
    """The command that fixes *refusal* for the user in *ctx*, vetted by the policy, or why there is none."""
    remedy, alternative = _build(refusal, ctx, purpose)
    return ctx.offer(remedy, alternative)


_INVALID = {
    "shared-with-other-users": "{dir} is shared with other users; Nx locks its socket directory to one user, and until "
                               "then others could reach the daemon's sockets.",
    "os-temp-root": "{dir} is the OS temp directory itself; Nx deletes its socket directory recursively when the "
                    "daemon stops, which would take everything else in it.",
    "nx-managed": "{dir} is a directory Nx manages itself and creates socket directories beneath.",
}


def describe_invalid(reason: str, directory: str, variable: str) -> str:
    """The sentence for a configured socket directory Nx refuses outright."""
    return f"{variable}: " + _INVALID.get(reason, "{dir} is refused.").format(dir=directory)


def remedy_for_invalid(variable: str, ctx: RemedyContext) -> Advice:
    """Unset the variable where it was set (this shell, or the ``.env`` file's lines), or a directory of one's own
    instead."""
    return ctx.offer(configuration_fix(ctx, variable, "socket directory"), socket_export(ctx))


# -- doctor --explain: the daemon's messages users paste most ------------------------------------
#
# Each cause is what the message means on any machine; the answer adds what this machine shows.

#: Why each daemon message was printed, by the kind ``doctor --explain`` recognises it as.
DAEMON_MESSAGE_CAUSES = {
    "daemon-terminated": (
        "The daemon ended while it served a request (killed by a signal, the out-of-memory killer, or a crash): the "
        "client wrote this to the daemon's error log and, unless in a sandbox, disabled the daemon until `nx reset`."
    ),
    "plugin-worker-timeout": (
        "A plugin worker listened, but its host (the daemon or the Nx command) did not connect within the time limit: "
        "the host was paused or blocked (a debugger's breakpoint, Ctrl-Z, a long synchronous step on a loaded machine) "
        "or ended before it connected. A plugin that loads slowly does not cause it: loading "
        "starts after the connection."
    ),
    "plugin-worker-never-listened": (
        "A plugin worker was started but never listened on its socket while Nx polled it, nor exited: its start hangs "
        "(a slow or stalled plugin module, a machine too loaded to start it)."
    ),
    "workspace-mismatch": (
        "Two workspaces share one socket directory (NX_SOCKET_DIR or NX_DAEMON_SOCKET_DIR set to the same place): "
        "the client of one reached the daemon of the other, which refused it."
    ),
    "version-changed": (
        "The Nx installed in node_modules changed under a running Nx (an install or upgrade while `nx watch` or the "
        "daemon ran): the running one stops rather than mix two versions."
    ),
    "read-only-fs": (
        "Nx's native code was refused a write by a read-only filesystem (EROFS): a read-only workspace, /tmp or "
        "home (a sandbox's read-only bind, a read-only container root)."
    ),
    "inotify-limit": (
        "The kernel's limit on inotify watches per user is reached (ENOSPC): the daemon's file watcher cannot watch "
        "the workspace, so Nx disables the daemon until `nx reset`."
    ),
}
#: Each plugin-worker message's remedy: the one variable that helps it, and what it gives up.
PLUGIN_NO_TIMEOUTS = (
    "Plugin workers and their host then wait for each other without a time limit; a worker whose host "
    "died then stays until it is stopped."
)
PLUGINS_IN_PROCESS = (
    "Nx then loads plugins in its own process, with no worker to start: a plugin that crashes takes the "
    "command (or daemon) with it."
)
#: The shared socket directory's remedy, and what the other workspace needs.
SHARED_SOCKET_DIR = (
    "Nx then gives each workspace its own socket directory; this workspace's daemon, whose socket the "
    "other's replaced, is stopped and its record removed, so the next command starts one of its own. "
    "The other workspace ({other}) keeps its daemon: unset the same variables in its shell too, or the "
    "next daemon started there takes the shared socket again."
)
#: The same, where this workspace's daemon is gone but its record stays: only the record is removed.
SHARED_SOCKET_DIR_RECORD = ("Nx then gives each workspace its own socket directory; the record of this workspace's "
                            "daemon, whose socket the other's replaced, is removed, so the next command starts one of "
                            "its own. The other workspace ({other}) keeps its daemon: unset the same variables in its "
                            "shell too, or the next daemon started there takes the shared socket again.")
#: The same, where only the variables are unset (no record of this workspace's daemon to act on).
SHARED_SOCKET_DIR_UNSET = (
    "Nx then gives each workspace its own socket directory, and the next command here uses a "
    "daemon of its own. The other workspace ({other}) keeps its daemon: unset the same variables "
    "in its shell too, or the next daemon started there takes the shared socket again."
)
#: A changed Nx's remedy.
VERSION_CHANGED = ("Stops the daemon of the old version; run your command again and Nx starts the installed one "
                   "(`npx nx --version` shows it).")


def version_changed_note(installed: str | None, daemon: str | None) -> str:
    """A changed Nx's remedy, with the versions this machine shows: the one installed in the workspace and the one
    the running daemon's record names (Nx's message names neither)."""
    if installed is None:
        return VERSION_CHANGED
    rerun = f"run your command again from the workspace (`npx nx …`), which runs Nx {installed}"
    if daemon is None:
        return f"The workspace has Nx {installed} installed and no daemon runs: the stop is harmless; {rerun}."
    if daemon == installed:
        return (f"The workspace has Nx {installed} installed and the daemon already runs it (its record says "
                f"{daemon}): the command that printed the message ran another version. The stop is harmless; {rerun}.")
    return (f"The workspace has Nx {installed} installed but the daemon runs Nx {daemon} (its record): the stop ends "
            f"it; {rerun} and starts its daemon.")


#: A read-only workspace's remedy also moves the task cache, which defaults to the workspace's .nx/cache.
READ_ONLY_CACHE_TOO = ("The task cache goes beside it (NX_CACHE_DIRECTORY): it defaults to the workspace's .nx/cache, "
                       "on the same read-only filesystem.")
#: Why a read-only filesystem has no command from the text alone.
READ_ONLY_NO_COMMAND = ("which filesystem is read-only shows only on the machine; never create /tmp/.nx on a read-only "
                        "/tmp: point NX_SOCKET_DIR (sockets) and NX_WORKSPACE_DATA_DIRECTORY (state) at directories "
                        "of your own on a writable filesystem")
#: Why "Permission denied (os error 13)" with no path has no command from the text alone.
OS_ERROR_13_NO_PATH = ("the message names no path (most often `sudo nx` left .nx/workspace-data owned by root, or a "
                       "umask such as 0277 left the directories Nx made unwritable)")
#: Why a level of Nx's own that its owner cannot write has no command: it holds entries, and nxsock neither re-modes
#: the workspace's .nx nor removes what is in it.
OS_ERROR_13_UNWRITABLE = ("No safe command: {path} is yours and Nx's, left {mode} (you cannot write in it), but it "
                          "holds entries, and nxsock neither re-modes the workspace's .nx nor removes what is in it; "
                          "`chmod u+w` it yourself.")


def umask_note(umask: int | None, kept: int | None, repaired: t.Sequence[tuple[str, int]],
               removed: t.Sequence[str]) -> str:
    """What the cause of ``Permission denied (os error 13)`` is on this machine, and what the remedy changes: the
    shell's *umask* (set back to *kept*), and Nx's own levels left unwritable (*repaired* re-moded, *removed*)."""
    parts = []
    if umask is not None and kept is not None:
        bits = [word for bit, word in ((0o400, "read"), (0o200, "write"), (0o100, "search")) if umask & bit]
        listed = bits[0] if len(bits) == 1 else f"{', '.join(bits[:-1])} and {bits[-1]}"
        parts.append(f"Your shell's umask is {umask:04o}: it takes the owner's {listed} "
                     f"{'bit' if len(bits) == 1 else 'bits'} from every directory Nx creates (they are made "
                     f"{0o777 & ~umask:04o}), so Nx cannot write in its own directories. `umask {kept:04o}` gives the "
                     "owner every bit and keeps the group's and others' as you set them (add it to your shell's "
                     "profile to keep it).")
    if repaired:
        names = [f"{shell_quote(path)} ({format_mode(mode)})" for path, mode in repaired]
        parts.append(f"Left unwritable to you, and given back their owner's bits: {', '.join(names)}.")
    if removed:
        names = [shell_quote(path) for path in removed]
        parts.append(f"Left unwritable to you and empty, removed (Nx makes {'it' if len(names) == 1 else 'them'} "
                     f"again): {', '.join(names)}.")
    parts.append("Then run the Nx command again.")
    return " ".join(parts)


#: The most entries of one socket or cache directory looked at for a level left unwritable.
_MAX_LISTED = 256


def _nx_levels(ctx: RemedyContext) -> list[str]:
    """Nx's own directories of this user that Nx creates, top first: ``/tmp/.nx/<uid>`` and ``~/.nx`` with their
    sockets (and the hashed directories in them) and binding cache, and the workspace's levels down to the daemon's
    directory (``<ws>/.nx/workspace-data/d``)."""
    policy, view = ctx.policy, ctx.policy.view

    def with_children(directory: str) -> list[str]:
        names = view.listdir(directory)
        return [directory, *(join(directory, n) for n in sorted(names)[:_MAX_LISTED])] if isinstance(names, list) \
            else [directory]

    levels = [policy.user_root, *with_children(join(policy.user_root, "sockets")),
              *with_children(join(policy.user_root, "native-cache"))]
    if policy.home_nx is not None:
        levels += [policy.home_nx, *with_children(join(policy.home_nx, "sockets"))]
    top = nx_level_root(policy, policy.daemon_dir) or policy.daemon_dir
    rest = policy.daemon_dir[len(top):].strip("/")
    levels.append(top)
    for part in rest.split("/") if rest else ():
        levels.append(join(levels[-1], part))
    return levels


def umask_cause(ctx: RemedyContext, level: str) -> Remedy | Withheld | None:
    """:func:`umask_remedy` where it is why *level* cannot be created: the umask takes an owner's bit, or the level
    above it that exists is one of Nx's own of yours its owner cannot write."""
    view = ctx.policy.view
    blocker = dirname(level)
    while isinstance(view.lstat(blocker), int) and dirname(blocker) != blocker:
        blocker = dirname(blocker)
    entry = view.lstat(blocker)
    umask = ctx.resolution.environment.umask if ctx.resolution is not None else 0
    left = (isinstance(entry, Entry) and entry.is_dir and not entry.is_link and entry.uid == ctx.uid
            and entry.mode & 0o700 != 0o700 and blocker in _nx_levels(ctx))
    return umask_remedy(ctx) if left or (umask & 0o700 and not ctx.policy.pasted_by_root) else None


def umask_remedy(ctx: RemedyContext) -> Remedy | Withheld | None:
    """The shell's umask set back (when it takes an owner's bit) and every level of Nx's own left unwritable to its
    owner (yours: 0500 under a umask of 0277) repaired — re-moded, or, in the workspace's .nx where nxsock only
    removes, removed when empty; ``None`` where this machine shows neither.

    The umask is nxsock's own, which is the shell's that runs it — unless root pastes it (``doctor --user``).
    """
    policy, view = ctx.policy, ctx.policy.view
    umask = ctx.resolution.environment.umask if ctx.resolution is not None and not policy.pasted_by_root else None
    steps: list[Step] = []
    kept = None
    if umask is not None and umask & 0o700:
        kept = umask & 0o077 | 0o022  # the owner's bits back; the group and others never gain a write bit
        steps.append(Umask(kept))
    else:
        umask = None
    repaired: list[tuple[str, int]] = []
    removed: list[str] = []
    cut: list[str] = []  # no real directory, or another user's: nothing beneath is read as Nx's (never via a link)
    for level in _nx_levels(ctx):
        if any(level.startswith(c + "/") for c in cut):
            continue
        entry = view.lstat(level)
        if not isinstance(entry, Entry) or not entry.is_dir or entry.is_link or entry.uid not in (0, policy.uid):
            cut.append(level)
            continue
        if entry.uid != policy.uid or entry.mode & 0o700 == 0o700 or any(level.startswith(r + "/") for r in removed):
            continue
        if level.startswith(policy.daemon_dir + "/") or level == policy.daemon_dir \
                or nx_level_root(policy, level) != nx_level_root(policy, policy.daemon_dir):
            steps.append(Chmod(level, mode=entry.mode | 0o700))
            repaired.append((level, entry.mode))
        elif view.listdir(level) == []:  # the workspace's .nx, workspace-data: nxsock removes them, never re-modes
            steps.append(RemoveTree(level))
            removed.append(level)
        else:
            return Withheld(OS_ERROR_13_UNWRITABLE.format(path=shell_quote(level), mode=f"{entry.mode & 0o7777:04o}"))
    if not steps:
        return None
    return Remedy(tuple(steps), umask_note(umask, kept, repaired, removed))


#: A path or pipe from a Windows paste: read and named, but not judged from another machine.
WINDOWS_NOT_JUDGED = ("No safe command from this machine: {path} is a Windows path or named pipe, and what refused it "
                      "({errno}) shows only on that Windows machine; nxsock judges modes, owners and sandboxes only "
                      "where it runs.")
#: The inotify limit: nxsock changes no kernel setting; the line root runs.
INOTIFY_NO_COMMAND = (
    "No safe command from nxsock: the limit is the kernel's, and only root raises it: "
    "`sudo sysctl fs.inotify.max_user_watches=524288` (and the same line in /etc/sysctl.d/ to keep it "
    "after a reboot); in a container with a user namespace of its own, the limit may be that "
    "namespace's: `sysctl user.max_inotify_watches=524288` as its root. Then `nx reset` clears the "
    "disabled marker."
)
#: A socket on a filesystem that cannot hold one.
NO_SOCKETS_HERE = "the filesystem cannot hold unix sockets (a Windows drive under WSL, a FUSE or network mount)"
#: Where this machine's mount table shows the refused socket's directory.
NO_SOCKETS_ON = "{path} is on {fs}, which refused the socket."
#: What unsetting an NX_SOCKET_DIR on such a filesystem changes.
NO_SOCKETS_UNSET = ("Nx then keeps its sockets in its own directories (under /tmp/.nx, else ~/.nx), off the filesystem "
                    "that cannot hold them; add the unset to your shell's profile if it sets the variable.")
#: What the dead daemon's remedy changes: the marker the client wrote goes, and a daemon is started now.
DAEMON_BACK = ("Removes the disabled marker the client wrote when its daemon died, then starts a daemon now; "
               "Nx also starts one on its next command. The record and socket of the dead one are replaced.")
#: The disabled marker's remedy made whole: its cause's remedy (what it changes), then the marker removed.
MARKER_WITH_CAUSE = (
    "Fixes what disabled the daemon (the {cause} message: {changes}), then removes the disabled marker, "
    "which would keep the daemon off after the cause is gone."
)
#: How a dead daemon's answer names what this machine shows of it.
DAEMON_SEEN_HERE = "On this machine: {what}"


# -- a user-namespace sandbox and Nx's daemon ---------------------------------------------------------


#: Advice for a refusal of a level that shows as 65534 only because nxsock runs inside such a sandbox.
INSIDE_HINT = (
    "Inside this sandbox every owner but you, root included, shows as uid 65534, so no directory outside your own "
    "passes and no NX_SOCKET_DIR helps; Nx uses the workspace fallback there, which the sandbox must let it write "
    "(outside, `nxsock paths --format FORMAT` prints the entries)."
)


#: Advice for a level the sandbox mounts read-only.
READ_ONLY_HINT = (
    "This sandbox mounts it read-only, and no variable set inside changes that; allow it in the sandbox's "
    "configuration (outside, `nxsock paths --format FORMAT` prints the entries)."
)


def inside_advice(refusal: Refusal, verdict: SandboxDaemon | None) -> str | None:
    """Advice in place of a remedy for a refusal that is only the sandbox's doing, while nxsock runs inside one.

    A level shown as 65534, or a read-only bind: no ``NX_SOCKET_DIR`` or
    ``chown`` typed inside fixes either.
    """
    if verdict is None or not verdict.inside:
        return None
    if refusal.uid == OVERFLOW_UID:
        return INSIDE_HINT
    if refusal.errno == "EROFS":
        return READ_ONLY_HINT
    return None


def _sandbox_owner(refusal: Refusal) -> str:
    return f"belongs to uid {refusal.uid}" if refusal.uid is not None else f"is refused ({refusal.kind})"


def sandbox_statement(verdict: SandboxDaemon, nx_version: str | None, sandbox: str | None = None) -> str:
    """One sentence: Nx cannot use its daemon in that sandbox, and why."""
    release = f"Nx {nx_version}" if nx_version else "Nx (24.0.5 or later assumed)"
    where = (
        "in this sandbox"
        if verdict.inside
        else (f"inside {sandbox}" if sandbox else "inside bubblewrap, srt or codex sandbox")
    )
    why = ""
    if verdict.refusal is not None:
        why = (
            f": {verdict.refusal.dir} {_sandbox_owner(verdict.refusal)} there (every owner but you, root "
            "included, shows as 65534)"
        )
    return (f"{release} cannot use its daemon {where}. From 24.0.5 its client refuses a daemon socket unless "
            f"every level above it is yours or root's{why}, so it refuses every socket, whatever the sandbox allows; "
            "NX_SOCKET_DIR does not change that.")


def marker_warning(verdict: SandboxDaemon) -> str:
    """What a run inside that tries the daemon costs, and how to clear it outside."""
    return (f"Run Nx there with {RUN_INSIDE}. A run that tries the daemon waits about a minute per attempt, "
            f"then may write {verdict.marker}, which turns the daemon off outside the sandbox too; "
            f"clear it outside with `{CLEAR_MARKER}` (or `nx reset`).")


def sandbox_daemon_warnings(verdict: SandboxDaemon, nx_version: str | None, sandbox: str | None = None,
                            carried: str | None = None) -> list[str]:
    """What ``paths --format`` says where Nx's client cannot use its daemon in the sandbox: why, what a run that
    tries costs, and how the format carries NX_DAEMON=false (*carried*).  Without *sandbox*, the entries are for
    any sandbox, and the sentences say they hold for one that runs Nx in a user namespace."""
    if sandbox is None:
        return [
            "If the sandbox runs Nx in a user namespace: " + sandbox_statement(verdict, nx_version),
            marker_warning(verdict),
        ]
    return [sandbox_statement(verdict, nx_version, sandbox), marker_warning(verdict),
            carried or f"Set {RUN_INSIDE} for the commands run inside it."]


# -- what a sandbox's allowlist cannot say ----------------------------------------------------------


def glob_warning(path: str) -> str:
    return f"{path} contains glob characters, which some sandboxes read as a pattern and drop or widen."


def tmpdir_warning(fmt: str, path: str) -> str:
    return (f"{fmt} sets TMPDIR={path}, which Nx 23.1.2–23.3 needs to exist: run `mkdir -p {path}` "
            "before starting the sandbox, or upgrade to Nx 24.")


def pending_warning(path: str) -> str:
    return f"{path} must exist before the sandbox starts; run `nxsock provision` or create it first."


# -- what doctor found, counted -------------------------------------------------------------------


def dead_state_found(count: int) -> str:
    return f"{counted(count, 'dead socket directory', 'dead socket directories')} or stale sockets of yours."


def cache_leftovers_found(count: int) -> str:
    return (
        f"{counted(count, 'binding cache entry', 'binding cache entries')} of other versions, interrupted or untrusted."
    )


def legacy_leftovers_found(count: int) -> str:
    return f"{counted(count, 'leftover')} of the legacy layout (Nx ≤ 23.1.1) in the temp directory."


def doctor_summary(counts: t.Mapping[str, int], *, more_with_verbose: bool) -> str:
    """doctor's last line: the findings counted by severity, and what ``-v`` adds where it hides some."""
    from .severity import SEVERITIES  # doctor's alone: paths --json words refusals without it

    summary = ", ".join([*(counted(counts[s], SEVERITIES[s].noun) for s in ("error", "warn", "info")),
                         f"{counts['ok']} fine"]) + "."
    return summary + (" nxsock doctor -v shows the notes and what is fine." if more_with_verbose else "")


def verdict_sentence(severity: str, message: str | None, warnings: int = 0) -> str:
    """doctor's first line: whether Nx works here, with the first problem's *message* (already printable)."""
    if severity == "error":
        return f"Nx fails here: {message}"
    if severity == "warn":
        return f"Nx works here, with {counted(warnings, 'warning')}: {message}"
    return "Nx works here." + (f" {message}" if message is not None else "")


def fix_interrupted(done: int) -> str:
    return (f"Interrupted: {counted(done, 'remedy', 'remedies')} applied before Ctrl-C; the rest was not run, "
            "and nothing was audited again.")


def problems_after_fix(count: int) -> str:
    return f"The audit now finds {counted(count, 'problem')}:"


#: ``doctor --fix``'s last line, by the status of the audit run after it.
AFTER_FIX = {"ok": "The audit finds no problem now.", "warn": "Warnings remain.", "error": "Problems remain."}


# -- the workspace's own directories, the binding cache, the leftovers, boot (audit/checks_host.py) ----------------


def owner_word(uid: int | None) -> str:
    """``root``, or ``uid N``: who owns an entry, in a sentence."""
    return _owner(uid)


WORKSPACE_DATA_BEHIND_LINK = "{directory} belongs to uid {uid}, and {link} is a link on the way to it."
WORKSPACE_DATA_LINK_NO_COMMAND = (
    "No safe command: rm, chown or chmod could act on what the link points at. Look at it; "
    "remove the link itself (not its target) if you did not make it."
)
CONFIGURED_DATA_DIR_FOREIGN = "{directory} ({source}) belongs to {owner}; Nx cannot write there."
DOT_NX_FOREIGN = "{directory} belongs to uid {uid}, not to you or root."
DOT_NX_FOREIGN_NO_COMMAND = (
    "No safe command: another user's directory is never handed to you. Look at what it holds, "
    "then move it aside as root."
)
WORKSPACE_DATA_RESET = (
    "Left by running Nx as another user (`sudo nx`): Nx's caches are removed and rebuilt, as after `nx reset`; "
    "{dot_nx} itself, which may hold files you commit, is handed back to you rather than removed."
)
WORKSPACE_DATA_FOREIGN = (
    "{directory} belongs to {owner}, so Nx cannot write its caches or daemon files there (EACCES, \"os error 13\")."
)

TASK_CACHE_ALLOWED = (
    "The task cache {directory} ({source}) is not safe: {reason}. Nx {release} "
    "uses it only because NX_ALLOW_INSECURE_DIRECTORIES=true; another user could plant task outputs "
    "there that Nx restores."
)
TASK_CACHE_ALLOWED_HINT = "Point it at a directory only you can write, then unset NX_ALLOW_INSECURE_DIRECTORIES."
TASK_CACHE_REFUSED = (
    "The task cache {directory} ({source}) is not safe: {reason}. Nx {release} stops "
    "every command with UntrustedDataDirectoryError before it runs anything."
)
TASK_CACHE_IN_NX_JSON = (
    "No command: nxsock does not edit nx.json. Change cacheDirectory there to a directory only you, "
    "root or the workspace's owner can write (a path inside the workspace is trusted like it), "
    "or remove it to use Nx's default."
)

FOREIGN_LISTENER = (
    "{socket} answers from a process in a pid namespace nxsock cannot see from here (another container, or the host)"
)


def shared_socket_root(seen: t.Sequence[str]) -> str:
    """Why a socket root shared beyond this pid namespace matters: *seen* are how it was seen to be shared."""
    return ("Nx's socket root is shared beyond this pid namespace: " + "; and ".join(seen) + ". Pids repeat across "
            "pid namespaces and Nx names its per-run directory after the workspace path and the pid, so two "
            "containers with the same checkout path take each other's sockets: the second unlinks the first's "
            "task socket fp<pid>-0.sock and listens in its place (or fails with listen EADDRINUSE).")


def shared_tmp_hint(changes: str | None) -> str:
    """What the ``NX_SOCKET_DIR`` remedy changes (*changes*), then what works for containers sharing a /tmp."""
    return ((changes + " ") if changes else "") + (
        "What works: a private /tmp per container (docker run --tmpfs /tmp; an emptyDir volume at /tmp in "
        "Kubernetes) or a per-container NX_SOCKET_DIR. NX_DAEMON=false is not enough: it spares the daemon's "
        "socket, not the sockets of Nx's tasks.")


BINDING_IN_PLACE = "Nx loads the binding in place: {reason}."
BINDING_UNCACHED = "Nx loads the binding in place, uncached: "
CACHE_DIR_MODE_FIX = "Gives you back write access to your own cache directory."
CACHE_DIR_NOT_WRITABLE = (
    "{directory} is yours but mode {mode}: Nx cannot copy its binding into it (EACCES) and loads it in place."
)
SKIP_CACHE_STOPS_COPYING = "Nx then loads its binding in place and stops trying to copy it."
PRUNE_FREES = "Frees what other versions and interrupted copies hold."
CACHE_NO_ROOM = (
    "Only {room} bytes are free where Nx copies its binding ({directory}); the copy needs {needed}, "
    "so it fails with ENOSPC on every run and Nx loads the binding in place."
)

#: What Nx prints when its binding does not load: ``native-bindings.js`` catches the failure and exports nothing.
NOT_A_CONSTRUCTOR = "every Nx command then fails with \"TypeError: WorkspaceContext is not a constructor\""
CACHE_NOEXEC = (
    "{directory} lies on {mount}, mounted noexec: Nx {release} copies its binding there but "
    "cannot load the copy (ERR_DLOPEN_FAILED, \"failed to map segment from shared object\"), and "
    + NOT_A_CONSTRUCTOR + "."
)
SKIP_CACHE_LOADS_IN_PLACE = "Nx then loads its binding in place, from node_modules, whose mount allows it."
BOTH_NOEXEC_NO_COMMAND = (
    "No safe command: node_modules is on {mount}, mounted noexec too, so loading in place "
    "fails as well. Point NX_NATIVE_FILE_CACHE_DIRECTORY at a directory of your own on a filesystem "
    "mounted exec, or remount one of them with exec (as root)."
)


def binding_noexec(mount: str | None, cached: bool) -> str:
    """Nx's binding on a noexec mount, loaded in place (*cached*: a cached copy exists, and cannot load either)."""
    how = "its cached copy cannot load either" if cached else "it does not cache it here"
    return f"Nx's binding lies on {mount}, mounted noexec, and Nx loads it in place ({how}): {NOT_A_CONSTRUCTOR}."


def binding_noexec_no_command(mount: str | None, skipping: bool) -> str:
    """Why no command fixes a binding on a noexec mount; *skipping*: ``NX_SKIP_NATIVE_FILE_CACHE`` is why Nx does
    not use its cache."""
    hint = ("No safe command: nxsock does not remount filesystems or reinstall packages. Install node_modules on a "
            f"filesystem mounted exec, or remount {mount} with exec (as root)")
    if skipping:
        hint += "; or unset NX_SKIP_NATIVE_FILE_CACHE, so Nx loads its copy from a cache mounted exec"
    return hint + "."


CACHE_NOEXEC_IN_PLACE = (
    "{directory} lies on {mount}, mounted noexec: Nx {release} cannot load its copy there and "
    "loads the binding in place, from node_modules, instead."
)
SKIP_CACHE_SPARES_THE_COPY = "`export NX_SKIP_NATIVE_FILE_CACHE=true` spares it the copy it cannot use."

PRUNE_REMOVES = "Removes other versions' entries, interrupted copies and untrusted entries of yours."
RESET_LEGACY_REMOVES = "Removes your leftovers of Nx ≤ 23.1.1 from the temp directory, by descriptor."

# Why a tmpfiles.d line for /tmp/.nx (or a level below it) harms it: completes "…, but {problem}".
TMPFILES_NOT_A_DIRECTORY = "its type {kind} does not create a directory"
TMPFILES_EMPTIES = "its type {kind} empties /tmp/.nx at every boot-time removal"
TMPFILES_BOOT_ONLY = "it applies only at boot"
TMPFILES_MODE = "its mode is {mode}, not 1777 (shared and sticky)"
TMPFILES_OWNER = "it hands /tmp/.nx to {user}:{group}, not root:root, at every boot"
TMPFILES_AGE = "its age {age} lets systemd-tmpfiles age out the users' directories"
TMPFILES_REMOVES = "it removes {path} at boot"
TMPFILES_AGES_LEVEL = "its age {age} lets systemd-tmpfiles age out {path} and what Nx keeps in it"
TMPFILES_SETS_CONTAINER = "it sets {path} to {mode} {user}:{group} at every boot, not root:root 1777"
TMPFILES_MAKES_LEVEL = (
    "it makes {path} {mode} {user}:{group} at boot: a level Nx makes and guards itself "
    "(private to its user, 0700), which it then refuses"
)


def boot_rule_applies(systemd: bool) -> str:
    """When a tmpfiles.d rule applies, appended to what it does: nothing where systemd runs."""
    return "" if systemd else " (systemd does not run here: it applies when the host boots with systemd)"


def boot_rule_good(fields: str, file: str, systemd: bool) -> str:
    applied = "" if systemd else "; systemd does not run here, so it applies only when the host boots with systemd"
    return f"The tmpfiles.d rule `{fields}` in {file} recreates /tmp/.nx at boot{applied}."


BOOT_RULE_BAD = (
    "{where} makes /tmp/.nx at boot (`{fields}`), but {problem}: every user but "
    "its owner is demoted to ~/.nx or refused, again at every boot{when}."
)


def tmpfiles_install_changes(good_line: str, ours: bool, target: str | None, file: str) -> str:
    """What ``nxsock provision --tmpfiles --install`` changes: nxsock's own drop-in rewritten (*ours*), or *target*
    installed to win over *file*."""
    changes = (f"Rewrites nxsock's own drop-in with the line `{good_line}`" if ours else
               f"Installs {target} with the line `{good_line}`; systemd-tmpfiles reads it before "
               f"{file} and obeys the first line for a path, so this one wins")
    return changes + ", and applies it now (root:root 1777)."


BOOT_RULE_FIRST_NO_COMMAND = (
    "No command: {file} is read before any drop-in nxsock could write, and nxsock "
    "does not edit another package's file. Change line {number} there to `{good_line}`."
)
BOOT_RULE_OTHER = "{where} (`{fields}`): {problem}{when}."
BOOT_RULE_OTHER_NO_COMMAND = (
    "No command: nxsock does not edit tmpfiles.d files. Delete line {number} of "
    "{file}, or make it `x {path}` to keep it from ageing."
)
TMPFILES_DROP_IN_INSTALLS = (
    "Installs a drop-in with `{good_line}`, which recreates /tmp/.nx at boot and exempts it from ageing; "
    "`nxsock provision --tmpfiles` prints it."
)
_NOTHING_RECREATES = (
    "nothing recreates /tmp/.nx: after a reboot the first user to run Nx owns it and every other user is demoted."
)
TMP_IS_TMPFS = "/tmp is a tmpfs, emptied at every boot, and " + _NOTHING_RECREATES


def tmp_cleared_by_rule(rule: str, where: str, more: int) -> str:
    """systemd runs and a tmpfiles.d rule clears or ages /tmp (*more*: how many other rules do too)."""
    return (f"systemd runs here and the tmpfiles.d rule `{rule}` in {where}{_more_rules(more)} clears or "
            f"ages /tmp, and {_NOTHING_RECREATES}")


def tmp_rule_not_applied(rule: str, where: str, more: int) -> str:
    """A tmpfiles.d rule would clear or age /tmp, but systemd does not run to apply it."""
    return (f"The tmpfiles.d rule `{rule}` in {where}{_more_rules(more)} would clear or age /tmp, but systemd does not "
            "run here (no /run/systemd/system), so nothing applies it now.")


def _more_rules(more: int) -> str:
    return f" (and {counted(more, 'more rule')})" if more else ""


BOOT_WITH_SYSTEMD = "If this host boots with systemd, `{command}` keeps /tmp/.nx across it."


def host_words(triple: str) -> str:
    """``linux-x64-musl`` → ``linux, x64, musl``: the platform, architecture and C library the binding is built for."""
    parts = triple.split("-")
    libc = {"gnu": "glibc", "musl": "musl", "gnueabihf": "glibc (armhf)", "msvc": "MSVC"}
    return ", ".join([*parts[:2], *(libc.get(p, p) for p in parts[2:])])


def installed_instead(triple: str, others: t.Sequence[str]) -> str:
    """What the other ``@nx/nx-*`` packages installed say about how the tree was made."""
    names = ", ".join(others[:5]) + (f" and {len(others) - 5} more" if len(others) > 5 else "")
    here = triple.split("-")
    foreign = [o.removeprefix("@nx/nx-") for o in others]
    if any(f.split("-")[:2] == here[:2] for f in foreign):
        other_libc = "glibc" if here[-1] == "musl" else "musl"
        return (f" Installed instead: {names}, the {other_libc} build, which does not load here "
                "(a node_modules installed on another distribution, or one that resolved the wrong C library).")
    if any(f.startswith("win32-") for f in foreign) and here[0] == "linux":
        return (
            f" Installed instead: {names}: this node_modules was installed from Windows (a checkout shared with WSL)."
        )
    return (
        f" Installed instead: {names}: this node_modules was installed on another host (copied, or a mounted volume)."
    )


BINDING_MISSING = (
    "Nx needs {package} on this host ({host}), and neither it nor nx.{triple}.node beside "
    "node_modules/nx is installed: " + NOT_A_CONSTRUCTOR + "."
)
LOCKFILE_RESTORES = " {lockfile} lists it: an install on this host restores it."
LOCKFILE_SKIPPED_OPTIONAL = (
    " {lockfile} lists it: the install skipped optional dependencies (--omit=optional, "
    "--no-optional, --ignore-optional)."
)
LOCKFILE_LACKS_IT = (
    " {lockfile} does not list it: it was written on a host that resolved only its own platform's package."
)
BINDING_VERSION_UNKNOWN = (
    "No command: the installed Nx version is unknown. Install {package} at the version of node_modules/nx."
)
BINDING_YARN_BERRY = (
    "No command: yarn 2+ installs only the architectures its supportedArchitectures names. Add this "
    "host's to .yarnrc.yml, remove node_modules, and run `yarn install`; or `yarn add "
    "-D {package}@{version}`."
)


def binding_install_changes(npm: bool, lockfile: str | None) -> str:
    """What the package manager's install changes: the one package (npm), or node_modules from *lockfile*."""
    what = (
        "Installs the one package, leaving package.json and the lockfile as they are"
        if npm
        else f"Reinstalls node_modules from {lockfile}, optional dependencies included"
    )
    return f"{what}; nxsock never runs a package manager itself."


# -- the screens of doctor, --explain, --fix, cache and reset (output/render.py) -------------------------------------
# render.py keeps the layout (labels, columns, marks, colours, escaping); the sentences are these.  Those of
# ``paths``, ``check-root`` and ``provision`` are in ``core/wording_paths.py``, re-exported here.


def cache_total(entries: int, size: str, reclaim: tuple[int, str] | None) -> str:
    """``cache list``'s last line: the entries and their *size*; what ``prune`` would reclaim (*reclaim*: how many
    entries, and their size), or that it would reclaim nothing."""
    total = f"{counted(entries, 'entry', 'entries')}, {size} in all"
    if reclaim is not None:
        total += f"; `nxsock cache prune` would reclaim {reclaim[1]} ({counted(reclaim[0], 'entry', 'entries')})"
    else:
        total += (
            "; `nxsock cache prune` would reclaim nothing (`--unused-for 30d` also takes other checkouts' old entries)"
        )
    return total + "."


def unused_basis(access_times: bool) -> str:
    """What ``--unused-for`` judged by: load (access) times where the mount records them, else copy times."""
    if access_times:
        return "Unused is judged by when each entry was last loaded (its access time, kept to within a day)."
    return ("Unused is judged by when each entry was copied: this mount records no access times, so an entry "
            "still loaded may go (its checkout's Nx copies it again).")


MARKER_REASON = "The daemon had been disabled; the reason it recorded:"
COULD_NOT_REMOVE = "could not remove {path}: {why}"


def more_not_listed(count: int, what: str) -> str:
    return f"… and {count} more {what}, not listed (--json lists them)"


def removal_summary(dry_run: bool, removed: int, freed: str, failed: int, interrupted: bool) -> str:
    """``reset``'s and ``cache prune``'s last line: what was (or would be) removed, the space *freed*, what could not
    be, and an interruption."""
    summary = f"{'Would remove' if dry_run else 'Removed'} {counted(removed, 'entry', 'entries')}, {freed}"
    if failed:
        summary += f"; {counted(failed, 'entry', 'entries')} could not be removed"
    if interrupted:
        return f"Interrupted: {summary[0].lower()}{summary[1:]}; the rest was not examined."
    return summary + "."


EXPLAIN_TRUNCATED = "The text is longer than nxsock reads; only its first mebibyte was read."
EXPLAIN_UNRECOGNISED = "Not a message nxsock recognises; running every check."
EXPLAIN_FIX_GENERAL = "fix (general; this machine does not show the cause):  "
EXPLAIN_SAME_FIX = "the same as above"
EXPLAIN_NO_FIX = "none"
EXPLAIN_NOTHING_HERE = "No check on this machine bears on these messages now; each fix above is the message's own."


def messages_left_off(count: int) -> str:
    return f"… and {count} more messages, counted but not answered."


def no_user_state(container: str) -> str:
    return f"No user has state under {container}."


def fleet_more(count: int) -> str:
    """How many more problems a user's line does not name."""
    return f" (+{count} more)" if count else ""


def fleet_counts(users: int, counts: t.Mapping[str, int]) -> str:
    return f"{users} users: " + ", ".join(f"{n} {s}" for s, n in counts.items() if n)


def and_more(count: int) -> str:
    """`` (and N more)`` after the one of many named; nothing for none."""
    return f" (and {count:,} more)" if count else ""


def first_recorded_line(message: str, lines: t.Sequence[str]) -> str:
    """A message that introduces its quoted lines, with the first of them (and how many more)."""
    return f"{message} \u201c{lines[0].strip()}\u201d" + (
        f" (and {counted(len(lines) - 1, 'more line')})" if len(lines) > 1 else ""
    )


def more_of_this_kind(command: str, count: int) -> str:
    return f"{command} (and {count:,} more of this kind)"


def fix_applies(dry_run: bool, count: int) -> str:
    word = "would apply" if dry_run else "applies"
    return f"nxsock {word} {counted(count, 'remedy', 'remedies')} itself, in this order, by descriptor:"


FIX_NOTHING_TO_APPLY = "Nothing for nxsock to apply itself."
FIX_FOR_YOU = "For you to run (nxsock does not run these):"
FIX_NO_SAFE_COMMAND = "No safe command (doctor says why):"
FIX_LISTED_IN_JSON = "Each remedy and finding is listed by nxsock doctor --fix --dry-run --json."
DRY_RUN_CHANGED_NOTHING = "nothing was changed."


def more_shown_elsewhere(count: int, where: str = "") -> str:
    """``… and N more.``, or ``… and N more (where).``"""
    return f"… and {count:,} more" + (f" ({where})" if where else "") + "."


def reasons_counted(distinct: bool, reasons: int, items: int) -> str:
    """How the one reason shown stands for the run's: the first of several different ones, or shared by some."""
    if distinct:
        return f" (the first of {reasons:,} reasons; --json has each)"
    return f" ({reasons:,} of {items:,})" if reasons < items else ""



# -- the sockets, who listens, the daemon's record, marker and log (audit/checks_sockets.py) -------------------------

NO_UNIX_SOCKETS = (
    "This process may not create unix sockets ({errno}): a sandbox's policy refuses them, "
    "so Nx's daemon and plugin workers cannot listen anywhere."
)
FOREIGN_RUN_DIRECTORY_REMOVAL = "Removes that directory of uid {uid}; it is never handed to you."
FOREIGN_RUN_DIRECTORY = "{directory} belongs to uid {uid}: connecting to the daemon socket in it fails (EACCES)."
NOT_A_SOCKET_REMOVAL = "Removes the {kind} where Nx binds a socket; Nx binds a fresh one."
NOT_A_SOCKET = "{path} is a {kind}, not a socket."
FOREIGN_SOCKET_REMOVAL = "Removes the socket of uid {uid}, so your Nx binds its own there."
FOREIGN_SOCKET = "{path} belongs to uid {uid}: dialling it reaches another user's process."
SOCKET_MODE_FIX = "Restricts the socket to you, as Nx makes it."
SOCKET_MODE = "{path} has mode {mode}; Nx {release} makes its daemon socket {made}."
RESET_FORCE_REMOVES = (
    "Removes your dead Nx runtime state, including what changed in the last minute (reset "
    "keeps that unless forced)."
)
RESET_REMOVES = "Removes your dead Nx runtime state: stale sockets, dead directories, a dead daemon's record."
SOCKET_ANSWERS = "{path} answers."
SOCKET_STALE = "ECONNREFUSED: nothing listens on {path}; it is stale."
SOCKET_POLICY_REFUSES = (
    "EACCES connecting to {path} although its modes and owners allow it: a security policy "
    "(SELinux, AppArmor, Landlock) refuses; chmod would not help."
)
SOCKET_POLICY_NO_COMMAND = "No command: allow unix-socket connects for Nx in that policy or sandbox."
SOCKET_ACCESS_FIX = "Gives you back write on the socket and search on its directory."
SOCKET_LEVEL_ABOVE = "A level further up refuses you; nxsock changes only Nx's own levels."
SOCKET_MODE_REFUSES = "EACCES connecting to {path}: a mode or owner on it or a directory above refuses you."
SOCKET_SANDBOX_FORBIDS = "EPERM connecting to {path}: a sandbox policy (seccomp, Seatbelt) forbids unix sockets."
SOCKET_SANDBOX_NO_COMMAND = "No command: allow unix sockets in the sandbox's settings (srt: allowAllUnixSockets)."
SOCKET_READ_ONLY = "EROFS at {path}: a read-only mount, typically a sandbox's bind."
SOCKET_READ_ONLY_NO_COMMAND = "No command: make the socket directory writable in the sandbox."
SOCKET_PROBED = "{path}: {result}."
LISTENER_UNKNOWN = (
    "Cannot tell who listens on {path} (another user's process, or another network namespace); not guessing."
)


def listener(pid: int, path: str, command: str, where: str, serves_other: bool, not_recorded: bool) -> str:
    """Who listens on a socket: its pid, command and working directory, and whether it is not this workspace's or
    not the recorded daemon."""
    why = (" — it serves another workspace" if serves_other else "") + (
        " — not the recorded daemon" if not_recorded else ""
    )
    return f"pid {pid} listens on {path}: {command} (in {where}){why}."


LISTENER_ELSEWHERE_HINT = "Give each checkout its own NX_SOCKET_DIR (or none)."


def foreign_daemon(pid: int, uid: int) -> str:
    return f"pid {pid}, a daemon of {_owner(uid)}, serves this workspace"


def foreign_daemon_level(level: str, uid: int | None, mode: str | None) -> str:
    return (f"{level} belongs to {_owner(uid)} (mode {mode}), "
            "so your Nx cannot write its daemon's log and record there (EACCES)")


def root_leftovers(only_root: bool, said: t.Sequence[str]) -> str:
    """What ``sudo nx`` (or another user's Nx) left in this workspace: *said*, each thing seen."""
    prefix = (
        "Left by running Nx as root (sudo nx): "
        if only_root
        else "Another user's Nx serves or owns this workspace: "
    )
    return prefix + "; ".join(said) + "."


def root_leftovers_removal(stops: bool) -> str:
    return ("Stops root's daemon and removes its files; " if stops else "Removes them; ") + (
        "your Nx recreates its own on the next command.")


def others_daemon(pid: int, uid: int) -> str:
    return f"pid {pid} is uid {uid}'s: ask them to stop it (nx daemon --stop)"


def others_daemons_no_command(others: t.Sequence[str]) -> str:
    return "No command: " + "; ".join(others) + "."


def others_daemons_also(changes: str | None, others: t.Sequence[str]) -> str:
    return f"{changes} Another user's daemon is theirs to stop: " + "; ".join(others) + "."


RECORD_UNREADABLE_REMOVAL = "Removes the unreadable record; the daemon writes a new one when it starts."
RECORD_PROBLEM = "The daemon's record {problem}."
RECORD_NOT_RUNNING = "The recorded daemon (pid {pid}) is not running."
DAEMON_STOP_RESTARTS = "Stops the old daemon; Nx starts one of the installed version on the next command."
RECORD_OTHER_VERSION = (
    "The daemon runs Nx {running}; {installed} is installed. Nx restarts it on the next command."
)
RECORD_SOCKET_SILENT = "The recorded socket {socket} does not answer ({result})."
RECORD_ANSWERS = "The daemon (pid {pid}) is running and answers."
MARKER_REMOVAL = "Removes the marker, so Nx starts its daemon again."
NX_RESET_CLEARS = "Nx's own reset, which also clears its caches."


def daemon_disabled(has_reason: bool) -> str:
    return ("The daemon is disabled until `nx reset`; the reason it recorded:" if has_reason
            else "The daemon is disabled until `nx reset` (the marker gives no reason).")


LAST_DAEMON_ERROR = "Last daemon error ({kind}): {error}"
#: What a daemon's recorded error is, by what it names.
DAEMON_ERROR_KINDS = {"refused": "refused by a permission or policy", "in-use": "socket already in use",
                      "too-long": "socket path too long", "missing": "missing directory",
                      "inotify": "out of inotify watches", "other": "other"}
WHOLE_ERROR_IN = "The whole error is in {log}."


def client_refuses(pid: int | None, version: str | None, why: str) -> str:
    """The daemon answers a plain connect, but this release's client refuses its socket (*why*)."""
    return (
        f"The daemon (pid {pid}) answers a plain connect, but Nx {version or ''}'s client refuses "
        f"its socket: {why}"
    ).replace("  ", " ")



# -- the environment, the user namespace, TMPDIR (audit/checks_levels.py) --------------------------------------------

ENVIRONMENT = (
    "platform {platform}, uid {uid}, HOME {home}, TMPDIR {tmpdir}, workspace {workspace} (found by {found_by})"
)
VERSION_NOT_A_VERSION = (
    "The version {text} in {where} "
    "is not a version: nxsock names nothing after it and predicts Nx {release}."
)
VERSION_NOT_A_VERSION_HINT = "Reinstall Nx (npm ci); a package.json you did not write may be hostile."
NO_NX_INSTALLED = "No Nx is installed in this workspace; predicted as Nx {release}, the newest release nxsock knows."
NO_NX_INSTALLED_HINT = (
    "Run nxsock in the workspace (or pass --workspace DIR), or pass --nx-version VERSION to audit for that release."
)


def nx_installed(version: str, layout: str, generation: str, assumed_release: str | None) -> str:
    """The installed Nx, its layout and generation; *assumed_release*: what it is predicted as, where it is newer
    than any release nxsock knows."""
    assumed = (
        f"; newer than any release nxsock knows, predicted as Nx {assumed_release}" if assumed_release else ""
    )
    return f"Nx {version}, {layout} layout ({generation}){assumed}."


VARIABLE_SET = "{name}={value} (from {source})"


def sandbox_markers_set(markers: t.Sequence[str]) -> str:
    return f"Sandbox markers set: {', '.join(markers)}."


IN_USER_NAMESPACE = (
    "Running in a user namespace (uid_map: {mapping}): other owners, root included, show as 65534. "
    "Nx resolves to {root} ({tier})."
)
IN_USER_NAMESPACE_HINT = "An allowlist of only /tmp/.nx and ~/.nx does nothing here unless Nx resolves there."
SANDBOX_KEEPS_OWNERS = "{name} keeps owners as they are here: Nx resolves as it does outside."
PATHS_FORMAT_PRINTS = "`nxsock paths --format {format}` prints what it must allow."


def inside_sandbox(name: str | None) -> str:
    """How a sentence about the sandbox *name* (or any unprivileged one) begins."""
    return f"Inside {name}" if name else "Inside an unprivileged sandbox (bubblewrap, srt, codex)"


def sandbox_fails_too(inside: str, version: str | None) -> str:
    return f"{inside} Nx {version or ''} fails as well: it finds no socket directory to use.".replace("  ", " ")


SANDBOX_FIX_FIRST = "Fix the error reported above first; no sandbox allowlist helps before that."


def sandbox_resolves(inside: str, version: str | None, root: str | None, tier: str | None) -> str:
    return f"{inside} Nx {version or ''} would resolve to {root} ({tier}).".replace("  ", " ")


def sandbox_allow(data_dir: str, formats: str, daemon_usable: bool) -> str:
    """What the sandbox must allow, and what ``paths --format`` prints; where its daemon is not usable, that no
    allowlist changes that."""
    return (
        f"Allow that directory and the workspace data directory {data_dir} in the sandbox; "
        f"`nxsock paths --format {formats}` prints the entries."
        + (
            ""
            if daemon_usable
            else " That lets Nx run there, but without its daemon, which no allowlist makes "
            "usable (see sandbox-daemon)."
        )
    )


def sandbox_carries_no_daemon(named: str | None) -> str:
    """Which ``paths --format`` carries ``NX_DAEMON=false`` into the sandbox (*named*, or the formats that can)."""
    if named:
        return f" `nxsock paths --format {named}` carries it."
    return " `nxsock paths --format bwrap|claude|codex-profile` carries it; for srt, start it with it."


TMPDIR_MISSING = "TMPDIR names {directory}, which does not exist; Nx 23.1.2–23.3 fails every socket path with ENOENT."


def foreign_tmpdir(name: str, path: str, level: str, link: bool, uid: int, kept: t.Sequence[str]) -> str:
    """A temporary directory at or beneath another user's link or directory (*level*), and what of Nx's goes there
    (*kept*: Nx's sockets, its binding cache; else Node's temporary files)."""
    what = "a link" if link else "a directory"
    where = f"{path}," if level == path else f"{path}, beneath {level},"
    goes = " and ".join(kept) if kept else "Node's temporary files"
    return f"{name} names {where} {what} owned by uid {uid}: {goes} go there, where that user chooses."


#: What of Nx's a temporary directory holds, in a sentence.
NX_SOCKETS, BINDING_CACHE = "Nx's sockets", "its binding cache"


def foreign_tmpdir_hint(level: str, uid: int, changes: str | None) -> str:
    return " ".join(filter(None, [f"{level} is uid {uid}'s: nxsock removes nothing of another user's.", changes]))



# -- private levels, the container, the outcome (audit/checks_levels.py) ---------------------------------------------

TIGHTEN_NOW = "Restricts {path} to you now, as Nx would."
NX_TIGHTENS_ITSELF = "Nx tightens it to 0700 itself on its next run; nxsock does not change a configured directory."
OPEN_LEVEL = "{path} is open to other users; Nx will tighten it to 0700 on its next run."
CONTAINER_NOT_YET = "/tmp/.nx does not exist yet; Nx will create it, owned by you, 1777."
PROVISION_FOR_EVERYONE = "On a shared machine provision it for everyone: {command}"
CONTAINER_PROVISIONED = "/tmp/.nx is provisioned for sharing: root:root-owned, 1777."
CONTAINER_HAND_TO_ROOT = "Hands /tmp/.nx to root, 1777, so every user can keep a private directory in it."


def container_yours(boot_rule: str | None) -> str:
    """/tmp/.nx is the user's: made by the first run of Nx, or by the tmpfiles.d rule at *boot_rule*."""
    made = (
        "the first user to run Nx made it"
        if boot_rule is None
        else f"the tmpfiles.d rule at {boot_rule} makes it at boot"
    )
    return (f"/tmp/.nx is yours ({made}): normal on a single-user machine, "
            "but every other user will be demoted to ~/.nx.")


CONTAINER_PASSES = "/tmp/.nx passes the shared-root guard for you (owner uid {uid}, mode {mode})."
NO_REFUSAL_RECORDED = "No refusal was recorded to fix."
NO_SOCKET_DIRECTORY = "Nx cannot establish any socket directory: every command that needs the daemon or plugins fails."


def first_refusal_fix(directory: str, changes: str | None) -> str:
    return f"The fix of the first refusal above, {directory}: {changes or ''}".rstrip(": ")


DEMOTED_HOME = "Nx is demoted to {root}: the shared container could not be used."
NOTHING_NEEDS_FIXING = "Nx works from there; nothing needs fixing."
ALLOWLIST_MISSES_WORKSPACE = "A sandbox allowlist for /tmp/.nx or ~/.nx does not cover this directory."
DEMOTED_WORKSPACE = "Nx falls back to {root}, inside the workspace: its paths grow with the checkout's depth."
OUTCOME = "Nx uses {root} ({tier})."
CONFIGURED_REFUSED = "{name}={directory} is refused, so Nx drops it for the workspace fallback."

NOT_WRITABLE_LEGACY = (
    "{name}={directory} is not writable by you (owner uid {uid}, mode {mode}): "
    "this Nx cannot listen there, so its daemon and plugin workers fail (EACCES)."
)
DATA_DIR_UNSAFE = "The workspace data directory is not safe: {reason}."
SOCKET_PATH_TOO_LONG = "The {kind} socket path is {length} characters, over Nx's limit of {budget}."


def no_shorter_directory(why: str | None) -> str:
    return "No shorter directory that passes every rule was found; choose one you own. " + (why or "")


# -- the filesystem under the levels, a workspace Nx cannot write (audit/checks_levels.py) ---------------------------

FILESYSTEM_KEEPS_NO_MODE = "keeps no mode of its own (chmod is silently ignored)"
FILESYSTEM_READ_ONLY = "is mounted read-only"


def sockets_elsewhere_none(why: str) -> str:
    return (f"{why} No directory of your own on a local, writable filesystem was found to suggest: set "
            "NX_SOCKET_DIR to one (for example under $XDG_RUNTIME_DIR).")


def reason_then(why: str, changes: str | None) -> str:
    """Why, then what the remedy changes."""
    return f"{why} {changes or ''}".strip()


LEVEL_ON_FILESYSTEM = "{directory} is on {filesystem}, which {why}"
FILESYSTEM_UNCHANGED = "No command changes that filesystem; the sockets go elsewhere."
A_FILESYSTEM = "a filesystem"
SOCKET_FILE_RETURNS = (
    "Removing the file Nx leaves named like its socket does not help: Nx makes it again on every run; "
    "the sockets must go to a local filesystem."
)
NO_UNIX_SOCKETS_THERE = (
    "Nx would put its sockets in {root} ({tier}), on {filesystem}, which cannot hold unix "
    "sockets: its listen fails ({errno}), so its daemon and plugin workers fail."
)
BLOCKER_READ_ONLY = "{blocker} is on {filesystem}, mounted read-only"
BLOCKER_FOREIGN = "{blocker} belongs to uid {uid} (mode {mode})"
BLOCKER_NOT_WRITABLE = "{blocker} is yours but not writable (mode {mode})"
BLOCKER_UMASK = "{blocker} would be made {made} under your umask {umask}"
BLOCKER_UNINSPECTABLE = "{blocker} cannot be inspected"
DATA_DIR_NOT_CREATED = (
    "Nx cannot create {level} ({errno}): {cause}. Every Nx command writes its workspace data there "
    "({directory}, from {source}), so it fails with {errno}."
)
DATA_DIR_ELSEWHERE = (
    "Keeps Nx's workspace data (its caches and the daemon's files) in {directory}, a directory of your own "
    "on a writable filesystem (add it to your shell's profile, or the workspace's .env, to keep it)."
)
NO_DATA_DIR_SUGGESTION = (
    "No directory of your own on a writable filesystem was found to suggest: set NX_WORKSPACE_DATA_DIRECTORY to one."
)



# -- whether Nx uses its daemon here (audit/checks_daemon.py) --------------------------------------------------------

#: What to do, in words, for a cause of the daemon being off that no variable overrides.
DAEMON_BY_HAND = {
    "no-nx-json": "create nx.json at the workspace root (`nx init` does)",
    "version-mismatch": "run the Nx installed in the workspace (`npx nx`), or install the one you run",
    "wasm": "unset NAPI_RS_FORCE_WASI, so Nx loads its native binding",
}
#: Each cause ``NX_DAEMON=true`` overrides, as the remedy's sentence names it.
DAEMON_OVERRIDDEN = {"NX_DAEMON": "NX_DAEMON=false", "useDaemonProcess": "useDaemonProcess: false", "ci": "CI",
                     "docker": "the container", "sandbox": "the agent sandbox"}


def daemon_off(release: str, reasons: str) -> str:
    """Why the daemon is off here, in one sentence naming each cause (*reasons*, already worded)."""
    return f"Nx {release} keeps its daemon off here: {reasons}."


def nx_json_unread(problem: str | None) -> str:
    """A sentence where nx.json exists but Nx reads no setting from it; nothing where it reads it."""
    return "" if problem is None else f" Its useDaemonProcess counts as unset: {problem}."


DAEMON_OFF_FOR_SHELL = "Turns the daemon off for the Nx you run from this shell."
DAEMON_ON = (
    "Nx {release} uses its daemon here: no CI variable, container, NX_DAEMON=false, "
    "useDaemonProcess: false or disabled marker turns it off."
)


def daemon_on_by_hand(words: t.Sequence[str]) -> str:
    return "To turn it on: " + "; ".join(words) + "."


def daemon_on_changes(marker: bool, overridden: t.Sequence[str], by_hand: t.Sequence[str]) -> str:
    """What turning the daemon on changes: the marker removed, ``NX_DAEMON=true`` over the *overridden* causes, and
    what stays for the user to do (*by_hand*)."""
    changes = []
    if marker:
        changes.append("Removes the disabled marker")
    if overridden:
        changes.append("NX_DAEMON=true (exactly) turns the daemon on for the Nx you run from this shell, "
                       "over " + ", ".join(overridden))
    if by_hand:
        changes.append("it stays off until you also " + "; ".join(by_hand))
    return "; ".join(changes) + "."


def marker_not_alone(message: str, why: str) -> str:
    return f"{message} Removing it alone does not turn the daemon on here: {why}."


DAEMONLESS_ALREADY = (
    "NX_DAEMON=false is already set here, so Nx runs without its daemon; a sandbox started from this "
    "environment inherits it."
)


def only_for_a_daemon(message: str, off: str) -> str:
    return f"{message} It matters only to a running daemon: {off}"


def refused_on_filesystem(description: str, filesystem: str) -> str:
    """A refusal's sentence, then the filesystem that makes it (*filesystem*: where the level lies, and why)."""
    return f"{description} {filesystem}."


# -- doctor --users, --fix's questions, a sweep as root (audit/fleet.py, output/fixing.py, output/doctor.py) ----------


def not_a_uid_range(part: str) -> str:
    return f"{part!r} is not a uid or a range of uids (1000, 1000-1999)"


def uid_too_high(part: str, uid_max: int) -> str:
    return f"{part!r}: a uid is at most {uid_max}"


def uid_range_empty(part: str) -> str:
    return f"{part!r}: the range is empty"


def uid_range_too_long(part: str, max_range: int) -> str:
    return f"{part!r}: a range names at most {max_range} uids"


FIX_INTERRUPTED = "\nnxsock: interrupted; nothing was changed."
FIX_NO_TERMINAL = (
    "nxsock doctor: --fix asks before it changes anything and there is no terminal to ask on; "
    "pass --yes to apply without asking, or --dry-run to see the plan."
)


def doctor_needs_root(option: str, program: str, again: str) -> str:
    return f"nxsock doctor: {option} needs root: sudo {program} doctor {again}"


def audit_without_verdict(uid: int, code: object) -> str:
    return f"the audit as uid {uid} ended ({code}) without a verdict"


# -- doctor --fix: why a remedy is the user's to run, and what became of each step (audit/repair.py) ---------------
LEFT_NEEDS_ROOT = "needs root: nxsock never runs sudo; run it yourself"
LEFT_SHELL = (
    "changes your shell's environment, which no program can do for its parent; run it in your shell (and your profile)"
)
LEFT_RUNS_NX = "runs Nx; run it yourself"
LEFT_INSTALLS = (
    "runs a package manager, which nxsock never does (it fetches and runs the packages' code); run it yourself"
)
LEFT_SIGNALS = "signals a process; run it yourself"
LEFT_ADVICE = "advice, not a remedy nxsock applies"
#: A step done without acting (``{command}``: the earlier remedy that removed what it acts on).
ALREADY_DONE = "already done: an earlier remedy, {command}, removed what this one acts on"
NEEDS_ROOT_NOW = "it needs root now"
EARLIER_STEP_FAILED = "an earlier step of this remedy did not succeed"
STEP_INTERRUPTED = "stopped by Ctrl-C during this step; what it removed stays removed"
REMEDY_INTERRUPTED = "stopped by Ctrl-C during it"


def not_applied(command: str) -> str:
    return f"nxsock does not apply {command!r} itself"


def still_finds(message: str) -> str:
    return f"the audit still finds: {message}"


# -- the binding cache: its listing, each entry's verdict, what prune removes (audit/binding_cache.py) ---------------
CACHE_REFUSED_NOT_LISTED = "not listed: Nx refuses this directory (nxsock paths says why)"
CACHE_ENTRY_REMOVAL = "Removes the entry; Nx copies a fresh one on its next run."
CACHE_NO_BINDING = "No installed Nx binding was found in this workspace to verify."


def cannot_be_listed(reason: str) -> str:
    return f"cannot be listed ({reason})"


def cache_entry_missing(entry_name: str) -> str:
    return f"No cache entry {entry_name} yet; Nx copies it on its next run."


def cache_entry_untrusted(path: str, loaded_by: str | None) -> str:
    """*loaded_by*: the release that loads the entry as it is; ``None`` where Nx re-copies an entry it may not trust."""
    if loaded_by is None:
        consequence = " Nx re-copies it before loading it."
    else:
        consequence = f" Nx {loaded_by} loads it as it is: whoever can write it chooses the code Nx runs."
    return f"{path} is not a regular file of yours without group/other write.{consequence}"


def cache_entry_stale(path: str, binding: str) -> str:
    return f"{path} differs from {binding} (size or age); Nx would load an old copy."


def cache_entry_fresh(path: str, binding: str) -> str:
    return f"{path} is trusted and matches {binding}."


def prune_other_version(version: object, installed: str) -> str:
    return f"version {version}, not the installed {installed}"


def prune_not_loaded(age: str) -> str:
    return f"not loaded for {age}"


def prune_copied_ago(age: str) -> str:
    return f"copied {age} ago (this mount records no load times)"


# -- provision's log line, doctor --report's facts, paths and Markdown (output/report.py) --------------------------
LEVELS_IN_PLACE = "Your levels are in place; nothing to change."
NXSOCK_NOT_INSTALLED = "unknown (not installed as a package)"
NODE_NOT_FOUND = "not found on PATH"
NO_SOCKET_ROOT = "none: Nx cannot establish one"
REPORT_HEADING = "## nxsock doctor report"
REPORT_NO_PROBLEMS = "No errors or warnings."
REPORT_SAME_FIX = "Fix: the same command as above."
REPORT_MASKED_HOME = (
    "The home directory is shown as `~` and the user name as `<user>`; `nxsock doctor --report --no-redact` shows them."
)
REPORT_WITHHELD = (
    "A value set in a `.env` file another user could have written is shown as written there: Nx expands its "
    "`${…}` with your environment, and this report does not show what that gives."
)
REPORT_REDACTED = "\nWhat looked like a credential (a token, a key, a password in a URL) is shown as `<redacted>`.\n"


def provisioned_nothing_to_change(root: str) -> str:
    return f"{root} is provisioned; nothing to change."


def predicted_with_rules(release: str) -> str:
    return f"; predicted with the rules of {release}"


def user_namespace_fact(mapping: str) -> str:
    return f"inside a user namespace (uid_map {mapping})"


def nx_fact(version: str, layout: str, generation: str, release: str, assumed: str) -> str:
    """doctor --report's Nx line: *version* with where it was read, then *assumed* (``predicted_with_rules`` or "")."""
    return f"{version}, {layout} layout, {generation} generation, rules of {release}{assumed}"


def report_status(status: str, errors: int, warnings: int, notes: int, fine: int) -> str:
    return f"- **Status:** {status} ({errors} errors, {warnings} warnings, {notes} notes, {fine} fine)"


def report_other_checks(count: int) -> str:
    return f"<details><summary>Other checks ({count})</summary>"


# -- the removal and doctor screens' remaining words (output/render.py) -------------------------------------------
COULD_NOT_BE_REMOVED = "could not be removed"
DOCTOR_LISTS_EACH = "nxsock doctor lists each"


# -- doctor --explain: what each kind's remedy changes, or why there is none (audit/explain.py's builders) ----------
# The kinds' patterns and causes stay in explain.py's table, each beside its remedy builder; these are the builders'.
NO_SAFE_COMMAND = "No safe command"
PIPE_NOT_SERVED = "Nothing serves that pipe: the daemon is not running there; Nx starts one on the next command too."
CACHED_COPY_NOEXEC = "The cached copy lies on a noexec mount: Nx then loads its binding in place, from node_modules."
WHICH_BINDING_FAILED = (
    "which binding Node could not load, and why (noexec, another platform, a cut-short copy), shows only on the machine"
)
RESET_DEAD_SOCKETS = "Removes your dead sockets and socket directories; a live daemon's are kept."
DAEMON_NOT_THERE = "The daemon is not running there; Nx starts one on the next command too."
REMOVE_PEER_SOCKET = (
    "Removes the socket another user left where yours belongs (a daemon of `sudo nx`), never a directory; "
    "your Nx binds its own."
)
OWN_SOCKET_DIRECTORIES = "Nx then uses its own socket directories."
KEPT_IN_WORKSPACE = "Nx then keeps it in the workspace; or name a directory only you own."
CACHE_DISK_FULL = "The disk (or quota) holding the cache is full; free space to cache again."
CACHE_VERIFY_NAMES = "`nxsock cache verify` names the cache level that refuses, with its fix."
BINDING_CUT_SHORT = (
    "Nx then loads its binding in place; free space where the cache is, and `nxsock reset --legacy` "
    "removes cut-short copies."
)
WHICH_PACKAGE_MISSING = (
    "which package this host needs, and the package manager that restores it, show only on "
    "the machine (NX_SKIP_NATIVE_FILE_CACHE cannot help: there is no binding to load)"
)
DATA_DIR_OF_ANOTHER = (
    "Another user (root, after `sudo nx`) made it: Nx's own state, rebuilt on the next run, as after `nx reset`."
)
CREATES_TMPDIR = "Creates the directory TMPDIR names."
TMP_AS_TEMP = "Nx then uses /tmp as its temp directory."
NX_RESET_MARKER = "Removes the disabled marker (and clears Nx's caches); the daemon runs again on the next command."
STARTS_DAEMON = "Starts the daemon for this workspace."
NO_LEVEL_SAID = "the message does not say which level refuses"
LEVEL_ON_MACHINE = "which level refused shows only on the machine"
SYSTEM_REFUSED_IT = "the system refused it"


def sandbox_allows(fmt: str) -> str:
    return (
        f"A sandbox ({fmt}) refuses unix sockets: allow them under the directories this prints. "
        "Or run Nx there with NX_DAEMON=false."
    )


def sandbox_or_policy_allows(named: str) -> str:
    """*named*: `` (GEMINI_SANDBOX is set)`` where a sandbox's variable shows, else ""."""
    return (
        f"A sandbox or policy{named} refuses unix sockets: allow them under the directories this prints; "
        "--format srt, claude, codex, seatbelt, bwrap or docker writes them in that sandbox's own settings. "
        "Or run Nx there with NX_DAEMON=false."
    )


def doctor_instead(what: str) -> str:
    return (
        f"{NO_SAFE_COMMAND} from the text alone: {what}. Run `nxsock doctor` where Nx printed it, as the user "
        "who saw it: it names the level that refuses, with the command that fixes it."
    )


def path_not_plain(quoted: str) -> str:
    return (
        f"{NO_SAFE_COMMAND}: the path in the text, {quoted}, does not say plainly what it names "
        "(a `.`, `..`, doubled slash or control character); nxsock acts on no such path."
    )


def binding_on_noexec(quoted: str) -> str:
    return (
        f"{NO_SAFE_COMMAND}: {quoted} lies on a noexec mount, and skipping the cache cannot help a binding "
        "loaded in place: install node_modules on a filesystem mounted exec, or remount it with exec "
        "(as root); nxsock does not remount filesystems"
    )


def socket_errno_causes(errno_name: str | None) -> str:
    return f"{errno_name} on a socket has more than one cause"


def binding_in_place_then(why: str) -> str:
    return f"Nx then loads its binding in place, without the warning. {why}"


def yours_now(quoted: str) -> str:
    return f"{quoted} is yours now, so what refused is elsewhere or gone"


def missing_unnamed(quoted: str) -> str:
    return f"{quoted} is missing, and no setting here names it"


def errno_on_path_causes(errno_name: str | None, quoted: str) -> str:
    return f"{errno_name} on {quoted} has more than one cause"


def plugins_not_isolated(allowlist: str) -> str:
    return (
        "Only a sandbox's user namespace shows / as another user's: Nx 24 then always falls back to the "
        "workspace for its plugin workers' sockets, and works. Without plugin workers it needs no socket "
        f"there; or allow that directory in the sandbox: {allowlist}"
    )


def as_for_cause(kind: str) -> str:
    return f"As for the {kind} message that caused it."


def as_for_carried(kind: str) -> str:
    return f"As for the {kind} message it carries."


# -- what each of doctor's findings judges: --list-checks, --only (audit/doctor.py's TABLE names the ids) ------------
FINDING_JUDGES = {
    "environment": "the Nx version, layout and platform nxsock judges for",
    "user-namespace": "where Nx puts its sockets inside a user-namespace sandbox (bwrap, srt, codex)",
    "sandbox-daemon": "whether Nx's client can use its daemon inside a user-namespace sandbox",
    "tmpdir": "TMPDIR (TMP, TEMP): set, present, and a directory Nx can use",
    "unix-sockets": "whether a policy (seccomp, a sandbox) refuses unix sockets here",
    "container": "the shared /tmp/.nx: root's or yours, mode 1777, a real directory",
    "ancestry": "every directory above a level Nx uses: none another user could swap",
    "private-levels": "your own levels (per-user, sockets, native cache): yours, 0700, not links",
    "outcome": "where Nx puts the sockets now, and why there",
    "configuration": "NX_SOCKET_DIR and the other variables Nx reads: what Nx does with them",
    "workspace-data": "the workspace data directory (.nx/workspace-data): Nx can write it and trusts it",
    "cache-directory": "a configured task cache (NX_CACHE_DIRECTORY, nx.json cacheDirectory): Nx trusts it at start-up",
    "shared-tmp": "the socket root shared beyond this pid namespace (containers sharing /tmp)",
    "path-budget": "each socket path within Nx's limit of 95 characters",
    "filesystem": "the filesystem under the socket directory: it can hold unix sockets and keep 0700",
    "workspace-writable": "whether Nx can create its workspace data directory (.nx/workspace-data/d)",
    "sockets": "the socket files: who listens, their mode, dead ones",
    "socket-owner": "a socket another user owns where yours should be",
    "daemon-enabled": "whether Nx starts its daemon here, and why not",
    "daemon-record": "the daemon's record: its pid alive, its version, whether the client dials it",
    "daemon-disabled": "the marker Nx writes when it turned the daemon off, and its reason",
    "daemon-error": "the daemon's last error in its log",
    "binding": "the native binding this platform needs: installed and loadable",
    "native-cache": "the binding cache: its directory trusted, the copy fresh",
    "leftovers": "what reset or cache prune would remove: dead sockets, old cache entries",
    "boot-persistence": "whether /tmp/.nx survives a reboot (a tmpfiles.d rule)",
}
