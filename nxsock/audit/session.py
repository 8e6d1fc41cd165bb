"""One ``doctor`` audit as a value: the checks run, the paste explained, and the findings that bear on it.

The output layer shows an :class:`Audited` as text, JSON, Markdown or
annotations; ``--fix`` plans from its findings and audits again; the fleet
makes a verdict of it.  Nothing here prints.
"""

from __future__ import annotations

import os
import typing as t

from .doctor import FINDING_IDS, gather, run_checks, status_of
from .explain import Answer, Explanation, answer_all, explain, general_advice, related
from .findings import SANDBOX_MARKERS, Context, Finding

if t.TYPE_CHECKING:
    from ..core.fsview import FsView
    from ..core.resolver import Resolution

__all__ = ["Audited", "audit", "bearing_on"]

Results = t.Sequence[tuple[str, Finding]]


class Audited(t.NamedTuple):
    """An audit: what it read, each ``(group, finding)`` in report order, its status, and the paste's answers."""

    resolution: Resolution
    view: FsView
    context: Context
    results: list[tuple[str, Finding]]
    status: str
    explanation: Explanation | None = None
    answers: tuple[Answer, ...] = ()

    @property
    def findings(self) -> list[Finding]:
        return [f for _, f in self.results]


def audit(resolution: Resolution, view: FsView, *, sandbox: str | None = None, only: t.Collection[str] = (),
          strict: bool = False, text: str | None = None, pasted_by_root: bool = False,
          nxsock_for_root: str = "nxsock") -> Audited:
    """Every check (or those producing an id in *only*); with *text*, its messages answered and the findings kept
    to those that bear on it."""
    context = gather(resolution, view, sandbox, pasted_by_root=pasted_by_root, nxsock_for_root=nxsock_for_root)
    results = run_checks(context, only)  # every check (or those asked for), explained or not
    explanation: Explanation | None = None
    answers: tuple[Answer, ...] = ()
    if text is not None:
        explanation, answers = _explain(text, results, context)
        results = bearing_on(explanation, results)
    return Audited(resolution, view, context, results, status_of([f for _, f in results], strict), explanation, answers)


def bearing_on(explanation: Explanation, results: Results) -> list[tuple[str, Finding]]:
    """The findings of the checks that see the pasted messages' causes, about the paths they name where any is.

    Text with no message recognised keeps every finding; so does a selection that would leave none.
    """
    if not explanation.messages:
        return list(results)
    ids = {i for check in explanation.checks for i in FINDING_IDS.get(check, (check,))}
    chosen = [r for r in results if r[1].id in ids]
    paths = [m.path for m in explanation.messages if m.path]
    near = [r for r in chosen if not paths or any(related(r[1].path, p) for p in paths)]
    return near or chosen


def _explain(text: str, results: Results, context: Context) -> tuple[Explanation, tuple[Answer, ...]]:
    """Every message recognised in *text*, each answered from these findings or with its general remedy."""
    explanation = explain(text)
    env = context.resolution.environment
    hints = {name: value for name in (*SANDBOX_MARKERS, "CLAUDECODE", "FLATPAK_ID", "HOME")
             if (value := env.get(name) or os.environ.get(name))}
    findings = [f for _, f in results]
    answers = answer_all(explanation.messages, findings, FINDING_IDS,  # every general remedy through the policy, here
                         lambda m: general_advice(m, hints, env.platform, context.remedies, context.sandbox),
                         context.remedies.offer)
    return explanation, tuple(answers)
