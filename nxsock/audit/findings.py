"""What doctor's checks return: a finding with its severity, path, sentence and vetted remedy, and the context every
check reads."""

from __future__ import annotations

import typing as t

from ..core.fsview import Entry, FsView
from ..core.guards import Refusal
from ..core.remedy import Remedy, Step, Withheld
from ..core.resolver import Resolution
from ..core.severity import SEVERITIES, Severity, SeverityLook
from ..core.wording import Advice, RemedyContext, describe, inside_advice, remedy_for

if t.TYPE_CHECKING:
    from ..act.cleanup import ResetItem
    from .binding_cache import Loadability, Verdict
    from .binding_presence import BindingPresence

__all__ = [
    "SANDBOX_MARKERS",
    "SEVERITIES",
    "Context",
    "Finding",
    "Severity",
    "SeverityLook",
    "advised_finding",
    "mode_text",
    "offer_remedy",
    "refusal_finding",
]


SANDBOX_MARKERS = (
    "SANDBOX_RUNTIME",
    "GEMINI_SANDBOX",
    "CODEX_SANDBOX",
    "CODEX_SANDBOX_NETWORK_DISABLED",
    "CURSOR_SANDBOX",
)


class Finding(t.NamedTuple):
    """What a check found: its id, severity, path and sentence, and its vetted advice (never rendered text: the
    output renders the command from the advice's steps)."""

    id: str
    severity: Severity
    path: str | None
    message: str
    advice: Advice | None = None  # the vetted remedy and what it changes, or only why there is none
    detail: tuple[str, ...] = ()  # text read from disk (a marker's reason, a log's lines), shown as quoted lines

    @property
    def hint(self) -> str | None:
        """What the remedy changes, or why there is none."""
        return self.advice.hint if self.advice is not None else None

    @property
    def steps(self) -> tuple[Step, ...]:
        """The vetted steps ``--fix`` applies (empty when there is no command)."""
        return self.advice.steps if self.advice is not None else ()


class Context(t.NamedTuple):
    resolution: Resolution
    view: FsView
    remedies: RemedyContext
    cache_verdict: Verdict | None
    cache_leftovers: int  # entries cache prune would remove
    dead_state: t.Sequence[ResetItem]  # what a dry reset would remove
    legacy_state: t.Sequence[ResetItem]
    sockets: t.Sequence[tuple[str, Entry, str | None]] = ()  # each *.sock found, and its probe (sockets only)
    sandbox: str | None = None  # the sandbox format the user named (--sandbox), if any
    cache_room: int | None = None  # bytes free where the binding cache is copied to, where known
    cache_binding_size: int | None = None  # the size of the binding Nx copies there
    unix_sockets: str | None = None  # the errno name when this process may not even create a unix socket (a policy)
    loadability: Loadability | None = None  # whether the mounts let Nx load its binding; None where not judged
    binding_presence: BindingPresence | None = (
        None  # whether the binding this host needs is installed; None where not judged
    )


def refusal_finding(
    check: str, refusal: Refusal, severity: Severity, ctx: Context, purpose: str = "sockets"
) -> Finding:
    advice = inside_advice(refusal, ctx.resolution.user_namespace_sandbox)
    if advice is not None:
        return Finding(check, severity, refusal.dir, describe(refusal, purpose), Advice(None, advice))
    return Finding(check, severity, refusal.dir, describe(refusal, purpose), remedy_for(refusal, ctx.remedies, purpose))


def advised_finding(
    check: str, severity: Severity, path: str | None, message: str, advice: Advice, detail: tuple[str, ...] = ()
) -> Finding:
    return Finding(check, severity, path, message, advice, detail)


def offer_remedy(
    ctx: Context, steps: t.Sequence[Step], changes: str, *alternatives: Remedy | Withheld | None
) -> Advice:
    """A remedy built here, through the one policy."""
    return ctx.remedies.offer(Remedy(tuple(steps), changes), *alternatives)


def mode_text(entry: Entry) -> str:
    return format(entry.mode, "04o")
