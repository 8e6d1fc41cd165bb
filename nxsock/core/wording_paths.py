"""The sentences of the ``paths``, ``check-root`` and ``provision`` screens: part of ``core/wording.py``.

``core/wording.py`` re-exports every name here, so wording stays decided in one namespace; they live in this
stdlib-only module because human ``paths`` loads them on its fast path, where importing ``core/wording.py`` (and
the remedy policy it imports) would cost tens of milliseconds for a prediction that refuses nothing.
"""

from __future__ import annotations

__all__ = [
    "CLIENT_RUNS_WITHOUT",
    "FRESH_MACHINE",
    "GENERATION",
    "IN_USERNS_SANDBOX",
    "LENGTHS_COUNT",
    "NOT_PLACED",
    "NO_VERSION_KNOWN",
    "PROVISIONED_FOR_EVERYONE",
    "PROVISIONED_FOR_YOU",
    "PROVISION_PAST",
    "PROVISION_WOULD",
    "READINESS_SOCKET",
    "RECORD_STALE",
    "SANDBOX_MUST_ALLOW",
    "SOCKET_ROOT_NONE",
    "SOCKET_ROOT_REFUSED",
    "TASK_CACHE_STOPS_NX",
    "TIER_WHY",
    "already_provisioned",
    "cache_bypassed",
    "client_refuses_record",
    "client_will_not_dial",
    "container_absent",
    "container_safe",
    "container_unsafe",
    "daemon_record",
    "leaf_refused",
    "newer_than_known",
    "no_plugin_id_fits",
    "paths_daemon_off",
    "plugin_id_budget",
    "predicted_as",
    "provision_for_everyone",
    "version_rejected",
    "windows_user_name",
]

# -- paths --------------------------------------------------------------------------------------------------------
#: Why the socket root is where it is, by its tier.
TIER_WHY = {
    "configured": "NX_SOCKET_DIR (or NX_DAEMON_SOCKET_DIR) is set and accepted",
    "shared": "the preferred root under the shared container /tmp/.nx",
    "home": "demoted to the home directory: the shared container could not be used",
    "workspace": "the workspace fallback: no usual socket directory could be used",
    "temp": "the OS temp directory (legacy layout, or Windows named pipes)",
}
#: The code a release runs, for people.
GENERATION = {
    "legacy": "legacy layout (Nx ≤ 23.1.1)",
    "ts": "current layout, TypeScript generation (Nx 23.1.2–23.3)",
    "native": "current layout, native generation (Nx 24)",
}
NO_VERSION_KNOWN = "no version known"
FRESH_MACHINE = " — a fresh machine, not this host"
SOCKET_ROOT_REFUSED = "Socket root: refused configuration"
SOCKET_ROOT_NONE = "Socket root: none — Nx cannot establish any socket directory"
NOT_PLACED = "not placed by this Nx version"
LENGTHS_COUNT = "  lengths count the longest names Nx gives: a 7-digit pid, a 1-digit counter"
READINESS_SOCKET = "  and the readiness socket fp<pid>-ready-<n>.sock"
RECORD_STALE = "stale: nothing listens (ECONNREFUSED)"
CLIENT_RUNS_WITHOUT = (
    "  it reads the refusal as ENOENT, waits for the daemon, then runs without it; run Nx with NX_DAEMON=false here"
)
TASK_CACHE_STOPS_NX = "Nx stops every command"
SANDBOX_MUST_ALLOW = "A sandbox must allow:"
IN_USERNS_SANDBOX = "In a user-namespace sandbox: "


def version_rejected(text: str, source: str) -> str:
    """*text*: what the file holds, quoted as JSON so that it stays one line; *source*: the file."""
    return f'unknown: "{text}" in {source} is not a version'


def newer_than_known(version: str) -> str:
    return f"{version} is newer than any it knows"


def predicted_as(release: str, newer: str) -> str:
    return f"; predicted as Nx {release}, the newest release nxsock knows ({newer})"


def paths_daemon_off(reasons: str) -> str:
    return "Daemon: off (" + reasons + "): `nxsock doctor` says why"


def plugin_id_budget(characters: str) -> str:
    return f"  a plugin id may take {characters}"


def no_plugin_id_fits(length: int) -> str:
    return f"  no plugin id fits: without one the plugin socket's path is already {length} of 95 characters"


def windows_user_name(kind: str, characters: str) -> str:
    return f"  {kind}: fits a Windows user name of up to {characters} under the default temp dir"


def leaf_refused(kind: str) -> str:
    return f"  {kind}: its leaf was refused; it falls back to the workspace"


def daemon_record(pid: object, state: str, socket: str, answer: str) -> str:
    return f"Daemon record: pid {pid} ({state}), socket {socket} — {answer}"


def client_refuses_record(version: str) -> str:
    return f"  but Nx {version}'s client refuses to dial it:"


def client_will_not_dial(release: str) -> str:
    return f"Nx {release}'s client will not dial the daemon socket there: "


def cache_bypassed(reason: str) -> str:
    return f"bypassed — Nx loads the binding in place ({reason})"


# -- check-root ---------------------------------------------------------------------------------------------------
def container_absent(path: str) -> str:
    return f"{path} does not exist yet; Nx will create it, owned by you, mode 1777."


def provision_for_everyone(command: str) -> str:
    return f"  On a shared machine, provision it for everyone: {command}"


def container_safe(path: str) -> str:
    return f"{path} is a safe shared container for you: Nx keeps your sockets there."


def container_unsafe(path: str) -> str:
    return (
        f"  {path} is no shared container Nx trusts for you: it keeps your sockets "
        "elsewhere (nxsock doctor says whether Nx works)."
    )


# -- provision ----------------------------------------------------------------------------------------------------
#: Each step, done and (dry run) to be done.
PROVISION_PAST = {"create": "created", "tighten": "tightened", "chown": "handed to root:root", "chmod": "set to 1777"}
PROVISION_WOULD = {
    "create": "would create",
    "tighten": "would tighten",
    "chown": "would hand to root:root",
    "chmod": "would chmod",
}
PROVISIONED_FOR_EVERYONE = "for every user (root:root, 1777)"
PROVISIONED_FOR_YOU = "for you (0700 levels under /tmp/.nx)"


def already_provisioned(who: str) -> str:
    return who + "; nothing to do."
