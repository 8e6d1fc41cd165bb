"""Every sentence nxsock says about a refusal, and the exact command that fixes it.

Wording is decided here and nowhere else, and every path that goes into a
command is quoted by :func:`shell_quote`.  A remedy is a line that can be
pasted as it is (``sudo`` where root is needed); where only advice fits, the
command is ``None`` and the advice is the hint.
"""

import typing as t

from ._pathname import dirname
from .guards import Refusal
from .layout import CONTAINER

__all__ = [
    "PROVISION_COMMAND",
    "Remedy",
    "RemedyContext",
    "describe",
    "describe_invalid",
    "format_mode",
    "remedy_for",
    "remedy_for_invalid",
    "shell_quote",
]

#: The command that makes ``/tmp/.nx`` a shared, root-owned, sticky container.
PROVISION_COMMAND = f"sudo install -d -m 1777 -o root -g root {CONTAINER}"

_SAFE_CHARACTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_@%+=:,./-")


def shell_quote(text: str) -> str:
    """Quote *text* for a shell; plain paths stay bare.

    A byte that is not UTF-8 (held as a surrogate) or a control character is
    written ``$'\\xff'``, so the command still names the exact path.

    >>> shell_quote("/tmp/.nx")
    '/tmp/.nx'
    >>> print(shell_quote("/home/o'brien/.nx"))
    '/home/o'\\''brien/.nx'
    >>> print(shell_quote("/tmp/caf\\udce9"))
    $'/tmp/caf\\xe9'
    """
    if text and _SAFE_CHARACTERS.issuperset(text):
        return text
    if any(0xDC80 <= ord(ch) <= 0xDCFF or ord(ch) < 0x20 or ord(ch) == 0x7F for ch in text):
        return "$'" + "".join(_ansi_c(ch) for ch in text) + "'"
    return "'" + text.replace("'", "'\\''") + "'"


def _ansi_c(ch: str) -> str:
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"
    if code < 0x20 or code == 0x7F:
        return {"\n": "\\n", "\t": "\\t"}.get(ch, f"\\x{code:02x}")
    if ch in "\\'":
        return "\\" + ch
    return ch


def format_mode(mode: int | None) -> str | None:
    """Four octal digits, as ``chmod`` and ``ls`` users write them: ``1777``, ``0755``."""
    return None if mode is None else format(mode & 0o7777, "04o")


class Remedy(t.NamedTuple):
    command: str | None
    hint: str | None


class RemedyContext(t.NamedTuple):
    """What a remedy needs to know about the user it is for."""

    uid: int
    gid: int
    socket_dir_suggestion: str  # a directory to offer as NX_SOCKET_DIR


def _owner(uid: int | None) -> str:
    return "root" if uid == 0 else f"uid {uid}"


def describe(refusal: Refusal) -> str:
    """One sentence saying what is wrong with the directory."""
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
        return f"{d} belongs to {_owner(refusal.uid)}, not to you, so Nx will not keep sockets in it."
    if kind == "foreign-shared-container":
        return f"{d} belongs to {_owner(refusal.uid)}, so it could swap your private directory beneath it; Nx only trusts root or you here."
    if kind == "foreign-ancestor":
        return f"{d} lies above the directory and belongs to {_owner(refusal.uid)}, who could replace what is beneath it."
    if kind == "not-tightenable":
        return f"{d} is open to other users (mode {mode}) and cannot be restricted to 0700."
    if kind == "peer-writable-not-sticky":
        return f"{d} is writable by other users without the sticky bit (mode {mode}), so they could replace directories in it."
    if kind == "not-private":
        return f"{d} is open to other users (mode {mode}); Nx's client dials only a socket in an owner-only directory."
    return f"{d} was refused ({kind})."


def _export(ctx: RemedyContext) -> str:
    return f"export NX_SOCKET_DIR={shell_quote(ctx.socket_dir_suggestion)}"


def remedy_for(refusal: Refusal, ctx: RemedyContext) -> Remedy:
    """The command that fixes *refusal* for the user in *ctx*, or advice where no command fits."""
    d, q = refusal.dir, shell_quote(refusal.dir)
    kind = refusal.kind
    elsewhere = f"Or keep sockets elsewhere: {_export(ctx)}"
    if kind == "not-created":
        if d == CONTAINER:
            return Remedy(PROVISION_COMMAND, "Only root can create the shared container when /tmp refuses you.")
        if refusal.errno == "ENOENT":
            return Remedy(f"mkdir -p -- {shell_quote(dirname(d))}", "A level above it does not exist.")
        if refusal.errno == "EROFS":
            return Remedy(_export(ctx), f"{dirname(d)} is on a read-only filesystem (a sandbox's bind mount, typically).")
        if refusal.errno in ("EACCES", "EPERM"):
            return Remedy(
                f"sudo install -d -m 0700 -o {ctx.uid} -g {ctx.gid} -- {q}",
                f"You may not write in {dirname(d)}. {elsewhere}",
            )
        return Remedy(_export(ctx), f"Creating it failed with {refusal.errno}.")
    if kind == "not-inspectable":
        if refusal.errno == "ENOENT":
            return Remedy(f"mkdir -p -- {q}", "Or unset the variable that names it (TMPDIR), or upgrade to Nx 24, which does not need it.")
        return Remedy(_export(ctx), f"A level above {d} cannot be searched by you ({refusal.errno}).")
    if kind == "not-a-directory":
        sudo = "" if refusal.uid == ctx.uid else "sudo "
        then = f" && {PROVISION_COMMAND}" if d == CONTAINER else ""
        if refusal.symlink:
            return Remedy(f"{sudo}rm -- {q}{then}", "This removes the link itself, never what it points at. If you did not make it, treat it as hostile.")
        return Remedy(f"{sudo}mv -- {q} {shell_quote(d + '.moved-aside')}{then}", "This moves it aside rather than deleting it; look at it before removing it.")
    if kind == "foreign-owner":
        return Remedy(f"sudo rm -rf -- {q}", f"Another user made it first; it is removed, never handed to you. {elsewhere}")
    if kind == "foreign-shared-container":
        return Remedy(
            f"sudo chown root:root {q} && sudo chmod 1777 {q}",
            "Your own directory beneath it stays as it is.",
        )
    if kind == "foreign-ancestor":
        return Remedy(_export(ctx), f"{d} belongs to {_owner(refusal.uid)}; choose a directory where you or root own every level.")
    if kind in ("not-tightenable", "not-private"):
        return Remedy(f"chmod 0700 -- {q}", f"If the mode does not stick, the filesystem ignores modes. {elsewhere}")
    if kind == "peer-writable-not-sticky":
        if d == CONTAINER:
            return Remedy(PROVISION_COMMAND, None)
        return Remedy(f"sudo chmod +t -- {q}", "The sticky bit stops users replacing each other's entries.")
    return Remedy(None, None)


_INVALID = {
    "shared-with-other-users": "{dir} is shared with other users; Nx locks its socket directory to one user, and until then others could reach the daemon's sockets.",
    "os-temp-root": "{dir} is the OS temp directory itself; Nx deletes its socket directory recursively when the daemon stops, which would take everything else in it.",
    "nx-managed": "{dir} is a directory Nx manages itself and creates socket directories beneath.",
}


def describe_invalid(reason: str, directory: str, variable: str) -> str:
    """The sentence for a configured socket directory Nx refuses outright."""
    return f"{variable}: " + _INVALID.get(reason, "{dir} is refused.").format(dir=directory)


def remedy_for_invalid(variable: str, source: str, directory: str) -> Remedy:
    """Unset the variable where it was set; a directory nested beneath is fine."""
    hint = f"A directory nested beneath it is fine, e.g. {variable}={shell_quote(directory.rstrip('/') + '/nx')}."
    if source not in ("environment",) and not source.startswith("--"):
        pattern = rf"/^[[:space:]]*\(export[[:space:]]\+\)\?{variable}[[:space:]]*=/d"
        return Remedy(f"sed -i -e {shell_quote(pattern)} -- {shell_quote(source)}", f"It is set in {source}. {hint}")
    return Remedy(f"unset {variable}", hint)
