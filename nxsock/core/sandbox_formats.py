"""Every sandbox format ``paths --format`` prints, one row each, with every fact of that format on its row.

A row says how the sandbox shows the filesystem (a user namespace, bind
mounts), the ``TMPDIR`` it sets, what it is called in a sentence, how it
carries ``NX_DAEMON=false``, whether a remedy may name it, and the function
that spells the allowlist in its syntax.  The plan itself is computed once,
over the sandbox's own view, by :mod:`nxsock.audit.allowlists`; a format only
spells it.  ``paths --format``'s choice, the remedy policy's list of
``nxsock paths --format`` commands and doctor's user-namespace check read
:data:`FORMATS`.  Adding a format is one row here plus its test.

>>> FORMATS["bwrap"].kind("darwin"), FORMATS["srt"].kind("darwin"), FORMATS["srt"].kind("linux")
((True, True), (False, False), (True, True))
"""

# No ``from __future__ import annotations``: the rows are built at import.
import json
import typing as t

from .sandbox_daemon import RUN_INSIDE_VARIABLE

__all__ = ["FORMATS", "Allowed", "SandboxFormat", "Where"]

#: On which platforms a property of a sandbox holds.
Where = t.Literal["never", "linux", "always"]


class Allowed(t.NamedTuple):
    """What a format spells: the plan's entries (real paths, or Nx-style spellings with *portable*) and the rest."""

    write: tuple[str, ...]  # directories to make writable
    sockets: tuple[str, ...]  # directories Nx binds and dials sockets in
    portable: bool  # the entries are ``/tmp/.nx``, ``~/.nx`` and ``./…`` spellings, expanded where pasted
    platform: str
    socket_root: str  # where Nx settled ("" where nowhere)
    native_cache: str  # the binding cache directory ("" where bypassed)
    daemon_off: bool  # Nx's client cannot use its daemon there: the format carries NX_DAEMON=false where it can


#: A format's spelling: the text to paste, and what the format cannot say (for stderr).
Spell = t.Callable[[Allowed], tuple[str, list[str]]]


def _holds(where: Where, platform: str) -> bool:
    return where == "always" or (where == "linux" and platform == "linux")


class SandboxFormat(t.NamedTuple):
    """One ``paths --format`` value, and everything nxsock knows about the sandbox it is for."""

    name: str
    spell: Spell
    called: str | None = None  # the sandbox's name in a sentence; None: entries for any sandbox (text, env)
    user_namespace: Where = "never"  # owners other than the user show as uid 65534 (bubblewrap)
    binds: Where = "never"  # entries must exist (bind mounts), else they are path rules that may name what Nx creates
    tmpdir: str | None = None  # the TMPDIR the sandbox sets for what it runs (on Linux)
    daemon_off: str | None = None  # how its configuration carries NX_DAEMON=false; None: it cannot
    in_remedies: bool = True  # a remedy may print ``nxsock paths --format NAME``: core/remedy.py's NxsockCommand has it

    def kind(self, platform: str) -> tuple[bool, bool]:
        """``(user namespace, bind mounts)`` on *platform*."""
        return _holds(self.user_namespace, platform), _holds(self.binds, platform)

    @property
    def is_sandbox(self) -> bool:
        """A sandbox of its own, not entries for any (``doctor --sandbox`` names these)."""
        return self.called is not None


def _quote(path: str) -> str:
    from .remedy import shell_quote  # imported when spelled: the remedy policy is not needed to list the formats

    return shell_quote(path)


def _word(path: str, portable: bool, *, tilde: bool = False) -> str:
    """An entry as one shell word.  A portable entry of the workspace is spelled ``"$PWD"``, one of the home
    ``"$HOME"`` (flatpak reads ``~/`` itself, with *tilde*): bwrap and docker take neither a relative path nor
    a ``~``, and the shell expands these where the line is pasted, in the workspace."""
    if portable and path == ".":
        return '"$PWD"'
    if portable and path.startswith("./"):
        return '"$PWD"/' + _quote(path[2:])
    if portable and path.startswith("~/") and not tilde:
        return '"$HOME"/' + _quote(path[2:])
    if portable and path.startswith("~/"):
        return "~/" + _quote(path[2:])
    return _quote(path)


def _codex_environment() -> str:
    """codex sets a variable for what it runs through its shell environment policy (``codex sandbox`` too)."""
    name, value = RUN_INSIDE_VARIABLE
    return f"\n[shell_environment_policy]\nset = {{ {name} = {json.dumps(value)} }}\n"


def _both_tmp_spellings(paths: t.Iterable[str]) -> list[str]:
    """Seatbelt matches the resolved path, and Nx spells it /tmp: rules for both, where a path is under /tmp."""
    out = []
    for path in paths:
        out.append(path)
        if path.startswith("/private/tmp/"):
            out.append(path[len("/private"):])
        elif path.startswith("/tmp/"):
            out.append("/private" + path)
    return list(dict.fromkeys(out))


# -- the spellings, one per format -----------------------------------------------------------


def _text(a: Allowed) -> tuple[str, list[str]]:
    lines = [f"write\t{p}" for p in a.write] + [f"unix-sockets\t{p}" for p in a.sockets]
    return "\n".join(lines) + "\n", []


def _env(a: Allowed) -> tuple[str, list[str]]:
    lines = [f"export NXSOCK_SOCKET_ROOT={_quote(a.socket_root)}",
             f"export NXSOCK_NATIVE_CACHE={_quote(a.native_cache)}",
             f"export NXSOCK_WRITE={_quote(':'.join(a.write))}"]
    return "\n".join(lines) + "\n", []


def _srt_network(a: Allowed, fmt: str, notes: list[str]) -> dict[str, t.Any]:
    network: dict[str, t.Any] = {"allowedDomains": [], "deniedDomains": []}
    if a.platform == "linux":
        network["allowAllUnixSockets"] = True
        notes.append(
            f"{fmt} on Linux cannot allow unix sockets by path (seccomp cannot filter paths): this allows all of them."
        )
    else:
        network["allowUnixSockets"] = list(a.sockets)
    return network


def _srt(a: Allowed) -> tuple[str, list[str]]:
    notes: list[str] = []
    network = _srt_network(a, "srt", notes)
    settings = {"network": network, "filesystem": {"denyRead": [], "allowWrite": list(a.write), "denyWrite": []}}
    return json.dumps(settings, indent=2) + "\n", notes


def _claude(a: Allowed) -> tuple[str, list[str]]:
    notes: list[str] = []
    network = _srt_network(a, "claude", notes)
    settings: dict[str, t.Any] = {
        "sandbox": {"enabled": True, "filesystem": {"allowWrite": list(a.write)}, "network": network}
    }
    if a.daemon_off:
        name, value = RUN_INSIDE_VARIABLE
        settings["env"] = {name: value}
    return json.dumps(settings, indent=2) + "\n", notes


def _codex(a: Allowed) -> tuple[str, list[str]]:
    notes = [
        "codex's sandbox_workspace_write table has no unix-socket rule: it needs network_access = true for sockets."
    ]
    roots = ", ".join(json.dumps(p) for p in a.write)
    text = (
        'sandbox_mode = "workspace-write"\n\n[sandbox_workspace_write]\nwritable_roots = '
        f'[{roots}]\nnetwork_access = true\n'
    )
    return text + (_codex_environment() if a.daemon_off else ""), notes


def _codex_profile(a: Allowed) -> tuple[str, list[str]]:
    notes = ["codex forbids unix sockets unless the profile enables network access: this profile enables it."]
    lines = [
        'default_permissions = "nx"',
        "",
        "[permissions.nx]",
        'extends = ":workspace"',
        "",
        "[permissions.nx.filesystem]",
    ]
    lines += [f"{json.dumps(p)} = \"write\"" for p in a.write]
    lines += ["", "[permissions.nx.network]", "enabled = true", ""]
    return "\n".join(lines) + (_codex_environment() if a.daemon_off else ""), notes


def _seatbelt(a: Allowed) -> tuple[str, list[str]]:
    rules = ["(version 1)"]
    rules += [f'(allow file-write* (subpath "{p}"))' for p in _both_tmp_spellings(a.write)]
    rules += [f'(allow network-bind (local unix-socket (subpath "{p}")))' for p in _both_tmp_spellings(a.sockets)]
    rules += [f'(allow network-outbound (remote unix-socket (subpath "{p}")))' for p in _both_tmp_spellings(a.sockets)]
    return "\n".join(rules) + "\n", []


def _bwrap(a: Allowed) -> tuple[str, list[str]]:
    args = [f"--bind {_word(p, a.portable)} {_word(p, a.portable)}" for p in a.write]
    name, value = RUN_INSIDE_VARIABLE
    args += [f"--setenv {name} {value}"] if a.daemon_off else []
    return " ".join(args) + "\n", []


def _docker(a: Allowed) -> tuple[str, list[str]]:
    if a.portable:
        return " ".join(f"-v {_word(p, True)}:{_word(p, True)}" for p in a.write) + "\n", []
    return " ".join(f"-v {_quote(p + ':' + p)}" for p in a.write) + "\n", []


def _flatpak(a: Allowed) -> tuple[str, list[str]]:
    args = [f"--filesystem={_word(p, a.portable, tilde=True)}" for p in a.write]
    name, value = RUN_INSIDE_VARIABLE
    args += [f"--env={name}={value}"] if a.daemon_off else []
    return " ".join(args) + "\n", []


_CODEX_CARRIES = '[shell_environment_policy] set = { NX_DAEMON = "false" }.'

#: Every format, in the order ``paths --format`` lists them.
FORMATS: dict[str, SandboxFormat] = {
    f.name: f
    for f in (
        SandboxFormat("text", _text),
        SandboxFormat("env", _env, in_remedies=False),
        SandboxFormat(
            "srt",
            _srt,
            "srt",
            user_namespace="linux",
            binds="linux",
            tmpdir="/tmp/claude",
            daemon_off="srt's settings file cannot set a variable, and srt passes its own environment on: "
            "start it as `NX_DAEMON=false srt --settings FILE -- COMMAND`.",
        ),
        SandboxFormat(
            "claude",
            _claude,
            "Claude Code's sandbox (srt)",
            user_namespace="linux",
            binds="linux",
            tmpdir="/tmp/claude",
            daemon_off='These settings set it for every command: "env": {"NX_DAEMON": "false"}.',
        ),
        SandboxFormat(
            "codex",
            _codex,
            "codex sandbox",
            user_namespace="linux",
            binds="linux",
            daemon_off="This configuration sets it for what codex runs: " + _CODEX_CARRIES,
        ),
        SandboxFormat(
            "codex-profile",
            _codex_profile,
            "codex sandbox",
            user_namespace="linux",
            binds="linux",
            daemon_off="This profile sets it for what codex runs: " + _CODEX_CARRIES,
        ),
        SandboxFormat("seatbelt", _seatbelt, "seatbelt"),
        SandboxFormat(
            "bwrap",
            _bwrap,
            "bubblewrap",
            user_namespace="always",
            binds="always",
            daemon_off="These arguments set it: --setenv NX_DAEMON false.",
        ),
        SandboxFormat("docker", _docker, "docker", binds="always"),
        SandboxFormat(
            "flatpak",
            _flatpak,
            "flatpak",
            user_namespace="always",
            binds="always",
            daemon_off="These arguments set it: --env=NX_DAEMON=false.",
        ),
    )
}
