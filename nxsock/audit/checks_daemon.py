"""Whether Nx uses its daemon here at all (``daemon-enabled``), and what the daemon's other findings are worth when it
does not.

Nx's client turns its daemon off in CI, in containers, for ``NX_DAEMON=false``
and more (:mod:`nxsock.core.daemon_switch`).  Where it is off, a finding that
matters only to a running daemon — a stale record, a socket the client would
refuse, a sandbox where the daemon cannot serve — is no warning: it is kept,
as information, with the sentence of why.  And nothing advises
``NX_DAEMON=false`` where it is already so.
"""

from __future__ import annotations

import typing as t

from ..core.daemon_switch import OVERRIDDEN_BY_NX_DAEMON_TRUE, DaemonSwitch, reason_sentence
from ..core.remedy import Export, NxsockCommand, Remedy, RunNxsock, Step
from ..core.wording import Advice
from .findings import Context, Finding, advised_finding

__all__ = ["DAEMON_ONLY_FINDINGS", "check_daemon_enabled", "off_sentence", "when_daemon_runs"]

#: The findings that matter only to a running daemon: no warning where Nx keeps its daemon off.
DAEMON_ONLY_FINDINGS = frozenset(
    {"daemon-record", "sandbox-daemon"}
)  # not daemon-disabled: the marker outlasts the rest

#: What to do, in words, for a cause no variable overrides.
_BY_HAND = {
    "no-nx-json": "create nx.json at the workspace root (`nx init` does)",
    "version-mismatch": "run the Nx installed in the workspace (`npx nx`), or install the one you run",
    "wasm": "unset NAPI_RS_FORCE_WASI, so Nx loads its native binding",
}


#: Each overridable cause, as the remedy's sentence names it.
_SHORT = {"NX_DAEMON": "NX_DAEMON=false", "useDaemonProcess": "useDaemonProcess: false", "ci": "CI",
          "docker": "the container", "sandbox": "the agent sandbox"}


def _reasons_text(verdict: DaemonSwitch) -> str:
    return "; ".join(reason_sentence(r, verdict) for r in verdict.reasons)


def off_sentence(verdict: DaemonSwitch) -> str:
    """Why the daemon is off here, in one sentence naming each cause."""
    return f"Nx {verdict.release} keeps its daemon off here: {_reasons_text(verdict)}."


def _unread(verdict: DaemonSwitch) -> str:
    """A sentence where nx.json exists but Nx reads no setting from it (unparsable, an unresolvable extends)."""
    problem = verdict.facts.nx_json_problem
    return "" if problem is None else f" Its useDaemonProcess counts as unset: {problem}."


def check_daemon_enabled(ctx: Context) -> list[Finding]:
    """``daemon-enabled``: on or off, why, and how to change it."""
    verdict = ctx.resolution.daemon
    if verdict is None:
        return []
    if verdict.enabled:
        advice = ctx.remedies.offer(Remedy((Export(variable="NX_DAEMON", value="false"),),
                                           "Turns the daemon off for the Nx you run from this shell."))
        message = (f"Nx {verdict.release} uses its daemon here: no CI variable, container, NX_DAEMON=false, "
                   "useDaemonProcess: false or disabled marker turns it off." + _unread(verdict))
        return [advised_finding("daemon-enabled", "info", None, message, advice)]
    steps: list[Step] = []
    words = [_BY_HAND[r] for r in verdict.reasons if r in _BY_HAND]
    if "disabled-marker" in verdict.reasons:
        steps.append(RunNxsock(NxsockCommand.RESET_DAEMON_MARKER))
    overridable = [r for r in verdict.reasons if r in OVERRIDDEN_BY_NX_DAEMON_TRUE]
    if overridable:
        steps.append(Export(variable="NX_DAEMON", value="true"))
    path = verdict.facts.marker if "disabled-marker" in verdict.reasons else None
    if not steps:
        hint = "To turn it on: " + "; ".join(words) + "."
        return [Finding("daemon-enabled", "info", path, off_sentence(verdict) + _unread(verdict), Advice(None, hint))]
    changes = []
    if "disabled-marker" in verdict.reasons:
        changes.append("Removes the disabled marker")
    if overridable:
        changes.append("NX_DAEMON=true (exactly) turns the daemon on for the Nx you run from this shell, "
                       "over " + ", ".join(_SHORT[r] for r in overridable))
    if words:
        changes.append("it stays off until you also " + "; ".join(words))
    advice = ctx.remedies.offer(Remedy(tuple(steps), "; ".join(changes) + "."))
    return [advised_finding("daemon-enabled", "info", path, off_sentence(verdict) + _unread(verdict), advice)]


def _already_daemonless(finding: Finding) -> bool:
    """Whether the finding advises NX_DAEMON=false."""
    return Export("NX_DAEMON", "false") in finding.steps or (
        "NX_DAEMON=false" in (finding.hint or ""))


def _settle(finding: Finding, verdict: DaemonSwitch) -> Finding:
    """*finding* as it matters where Nx keeps its daemon off: information, saying why; no NX_DAEMON=false advice
    where it is already so."""
    if finding.id == "daemon-disabled":  # still a warning: the marker outlasts what else keeps the daemon off now
        others = [r for r in verdict.reasons if r != "disabled-marker"]
        if not others:
            return finding
        why = "; ".join(reason_sentence(r, verdict) for r in others)
        return finding._replace(message=f"{finding.message} Removing it alone does not turn the daemon on here: {why}.")
    if finding.id not in DAEMON_ONLY_FINDINGS:
        return finding
    if verdict.facts.nx_daemon == "false" and _already_daemonless(finding):
        finding = finding._replace(advice=Advice(
            None,
            "NX_DAEMON=false is already set here, so Nx runs without its daemon; a sandbox started from this "
            "environment inherits it.",
        ))
    if finding.severity != "warn":
        return finding
    return finding._replace(
        severity="info", message=f"{finding.message} It matters only to a running daemon: {off_sentence(verdict)}"
    )


def when_daemon_runs(check: t.Callable[[Context], list[Finding]]) -> t.Callable[[Context], list[Finding]]:
    """*check*, its daemon-only warnings downgraded to information where Nx keeps its daemon off."""

    def settled(ctx: Context) -> list[Finding]:
        found = check(ctx)
        verdict = ctx.resolution.daemon
        if verdict is None or verdict.enabled:
            return found
        return [_settle(f, verdict) for f in found]

    settled.__name__ = check.__name__
    settled.__doc__ = check.__doc__
    return settled
