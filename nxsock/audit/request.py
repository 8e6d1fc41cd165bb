"""What ``doctor`` was asked: one frozen value, built by the command from its options and handed on whole.

The command checks the options against each other and reads ``--explain -``'s
text; everything after it (the audit, the audit as another user, the fleet,
``--fix``, the document or screen) reads this value and nothing of click.
"""

from __future__ import annotations

import typing as t

from ..core.host_overrides import HostOverrides

__all__ = ["DoctorRequest", "FixMode", "Output"]

#: How the verdict is shown: people's text, the JSON document, ``--report``'s Markdown, GitHub Actions
#: annotations, or OpenMetrics.
Output = t.Literal["text", "json", "report", "github", "openmetrics"]
#: ``--fix``: ask once before applying, apply without asking (``--yes``), or print the plan only (``--dry-run``).
FixMode = t.Literal["ask", "yes", "dry-run"]


class DoctorRequest(t.NamedTuple):
    """Every option of ``doctor``, checked, as the audit and the output read them."""

    host: HostOverrides
    program: str  # how a sudo line names nxsock, asked of how this process was started
    output: Output = "text"
    strict: bool = False
    verbose: bool = False  # the text report shows the notes and what is fine too
    only: tuple[str, ...] = ()  # finding ids; every check when empty
    sandbox: str | None = None
    explain: str | None = None  # the text pasted (``--explain -`` already read), never more than explain reads
    user: int | None = None  # ``--user``: the uid to audit as
    redact: bool = True  # ``--report`` masks the home and the user name (``--no-redact``: not)
    fix: FixMode | None = None
    list_checks: bool = False
    all_users: bool = False
    users: str | None = None  # ``--users``, checked by the command (``audit.fleet.parse_users``)
    output_file: str | None = None  # ``--output`` of the metrics
    per_user_metrics: bool = False
