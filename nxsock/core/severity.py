"""How much a finding matters: each severity declared once, with how every output shows it.

Loaded by the human report as well as the checks, so it imports nothing.
"""

import typing as t

__all__ = ["SEVERITIES", "Severity", "SeverityLook"]

#: How much a finding matters, in rising order.
Severity = t.Literal["ok", "info", "warn", "error"]


class SeverityLook(t.NamedTuple):
    """How one severity is shown, wherever it is: its rank, mark, word, noun, style and GitHub level."""

    rank: int  # rising: the worst of several findings is the highest
    mark: str  # the symbol before it
    word: str  # the short word in a finding's line (``✗ error``, ``⚠ warn``)
    noun: str  # what one such finding is called in a sentence or a count (an error, a warning, a note)
    style: str  # its colour (a rich style name; only output/render.py reads it as one)
    github: str | None  # the GitHub Actions workflow command it becomes, or None: not annotated


#: Every severity, once; :data:`Severity` names the same keys (tests/pure/test_vocabularies.py holds them equal).
SEVERITIES: dict[str, SeverityLook] = {
    "ok": SeverityLook(0, "✓", "ok", "ok", "green", None),
    "info": SeverityLook(1, "ℹ", "info", "note", "blue", "notice"),
    "warn": SeverityLook(2, "⚠", "warn", "warning", "yellow", "warning"),
    "error": SeverityLook(3, "✗", "error", "error", "red", "error"),
}

