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

from ..core import wording
from ..core.daemon_switch import OVERRIDDEN_BY_NX_DAEMON_TRUE, DaemonSwitch, reason_sentence
from ..core.remedy import Export, NxsockCommand, Remedy, RunNxsock, Step
from ..core.wording import Advice
from .findings import Context, Finding, advised_finding

__all__ = ["DAEMON_ONLY_FINDINGS", "check_daemon_enabled", "off_sentence", "when_daemon_runs"]

#: The findings that matter only to a running daemon: no warning where Nx keeps its daemon off.
DAEMON_ONLY_FINDINGS = frozenset(
    {"daemon-record", "sandbox-daemon"}
)  # not daemon-disabled: the marker outlasts the rest

_BY_HAND = wording.DAEMON_BY_HAND
_SHORT = wording.DAEMON_OVERRIDDEN


def _reasons_text(verdict: DaemonSwitch) -> str:
    return "; ".join(reason_sentence(r, verdict) for r in verdict.reasons)


def off_sentence(verdict: DaemonSwitch) -> str:
    """Why the daemon is off here, in one sentence naming each cause."""
    return wording.daemon_off(verdict.release, _reasons_text(verdict))


def _unread(verdict: DaemonSwitch) -> str:
    """A sentence where nx.json exists but Nx reads no setting from it (unparsable, an unresolvable extends)."""
    return wording.nx_json_unread(verdict.facts.nx_json_problem)


def check_daemon_enabled(ctx: Context) -> list[Finding]:
    """``daemon-enabled``: on or off, why, and how to change it."""
    verdict = ctx.resolution.daemon
    if verdict is None:
        return []
    if verdict.enabled:
        advice = ctx.remedies.offer(Remedy((Export(variable="NX_DAEMON", value="false"),),
                                           wording.DAEMON_OFF_FOR_SHELL))
        message = wording.DAEMON_ON.format(release=verdict.release) + _unread(verdict)
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
        hint = wording.daemon_on_by_hand(words)
        return [Finding("daemon-enabled", "info", path, off_sentence(verdict) + _unread(verdict), Advice(None, hint))]
    changes = wording.daemon_on_changes("disabled-marker" in verdict.reasons, [_SHORT[r] for r in overridable], words)
    advice = ctx.remedies.offer(Remedy(tuple(steps), changes))
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
        return finding._replace(message=wording.marker_not_alone(finding.message, why))
    if finding.id not in DAEMON_ONLY_FINDINGS:
        return finding
    if verdict.facts.nx_daemon == "false" and _already_daemonless(finding):
        finding = finding._replace(advice=Advice(None, wording.DAEMONLESS_ALREADY))
    if finding.severity != "warn":
        return finding
    return finding._replace(
        severity="info", message=wording.only_for_a_daemon(finding.message, off_sentence(verdict))
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
