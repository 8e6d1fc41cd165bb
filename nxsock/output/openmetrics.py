"""The machine's verdict as Prometheus metrics, for node_exporter's textfile collector.

One text in the part of the exposition formats that the Prometheus text
format (0.0.4, what the textfile collector and ``promtool check metrics``
parse) and OpenMetrics 1.0 share: gauges only, each family with ``# HELP``
and ``# TYPE``, no sample timestamps (the collector refuses them), ending in
``# EOF``.  Names follow Prometheus's conventions: the ``nxsock_`` prefix,
base units in the name (``_bytes``, ``_seconds``), no ``_total`` (nothing
here is a counter), an ``_info`` family for versions.  Label values are
bounded: closed vocabularies (states, statuses, finding ids, severities),
versions that passed npm's grammar, and uids only when asked
(``--per-user-metrics``); never a path or a user name.

>>> from nxsock.audit.fleet import FleetVerdict
>>> text = metrics_text(FleetVerdict(1.5, 0.25, "ok", (), "0.2.0", True))
>>> print(text.splitlines()[0]); text.endswith("# EOF\\n")
# HELP nxsock_build_info nxsock's version.
True
"""

from __future__ import annotations

import typing as t

from ..audit.fleet import CONTAINER_STATES, SEVERITIES, USER_STATUSES, FleetVerdict

if t.TYPE_CHECKING:
    from ..act.provisioning import ProvisionReport
    from ..act.tmpfiles import TmpfilesChange

__all__ = ["CONTENT_TYPE", "DROP_IN_STATES", "metrics_text", "provision_metrics_text"]

#: What an HTTP server would serve this text as (the textfile collector reads the file itself).
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

#: The tmpfiles drop-in, as ``provision --tmpfiles --check`` finds it.
DROP_IN_STATES = ("installed", "missing", "refused", "unavailable")
_DROP_IN_STATE = {"none": "installed", "write": "missing", "refuse": "refused", "fail": "unavailable"}

Labels = t.Mapping[str, str]


def _label_value(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _number(value: float) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    return repr(float(value))


class _Families:
    """Gauge families in the order first declared, each with its help and samples."""

    def __init__(self) -> None:
        self._lines: list[str] = []

    def gauge(self, name: str, help_text: str, samples: t.Iterable[tuple[Labels, float]]) -> None:
        self._lines.append(f"# HELP {name} {help_text.replace(chr(92), chr(92) * 2).replace(chr(10), chr(92) + 'n')}")
        self._lines.append(f"# TYPE {name} gauge")
        for labels, value in samples:
            shown = ",".join(f'{key}="{_label_value(text)}"' for key, text in labels.items())
            self._lines.append(f"{name}{{{shown}}} {_number(value)}" if shown else f"{name} {_number(value)}")

    def state_set(self, name: str, help_text: str, label: str, states: t.Iterable[str], current: str) -> None:
        """One series per state, 1 for the current one and 0 for the others: an alert can name the state it fears."""
        self.gauge(name, help_text, (({label: state}, int(state == current)) for state in states))

    def text(self) -> str:
        return "\n".join([*self._lines, "# EOF", ""])


def _common(families: _Families, version: str, checked_at: float, duration: float, container: str) -> None:
    families.gauge("nxsock_build_info", "nxsock's version.", [({"version": version}, 1)])
    families.gauge(
        "nxsock_last_check_timestamp_seconds",
        "When the check was made, in seconds since the epoch.",
        [({}, round(checked_at, 3))],
    )
    families.gauge("nxsock_check_duration_seconds", "How long the check took.", [({}, round(duration, 3))])
    families.state_set(
        "nxsock_container_state",
        "/tmp/.nx as root's provisioning judges it: ok only for a root-owned, "
        "sticky directory every user may create a level in.",
        "state",
        CONTAINER_STATES,
        container,
    )


def _finding_ids() -> list[str]:
    from ..audit.doctor import FINDING_IDS

    return sorted({i for ids in FINDING_IDS.values() for i in ids})


def metrics_text(fleet: FleetVerdict, *, per_user: bool = False) -> str:
    """The doctor's verdict for one user, or ``--all-users``' for each, as metrics; *per_user*: series by uid too."""
    families = _Families()
    _common(families, fleet.nxsock_version, fleet.checked_at, fleet.duration, fleet.container)
    verdicts = [u.verdict for u in fleet.users if u.verdict is not None]
    versions = sorted({(v.nx_version, v.nx_version_source) for v in verdicts})
    families.gauge(
        "nxsock_nx_info",
        "The Nx release whose rules the audit followed, and whether it is the installed one "
        "(installed, --nx-version) or assumed.",
        [({"version": v, "source": s}, 1) for v, s in versions],
    )
    families.state_set(
        "nxsock_status",
        "The worst status of the audit: ok, warn, error, or failed where an audit could not be made.",
        "status",
        USER_STATUSES,
        fleet.status,
    )
    families.gauge(
        "nxsock_users",
        "Users audited, by the status of their audit.",
        [({"status": s}, sum(1 for u in fleet.users if u.status == s)) for s in USER_STATUSES],
    )
    families.gauge(
        "nxsock_users_demoted",
        "Users whose sockets Nx puts in the home's or the workspace's fallback instead of /tmp/.nx/<uid>/sockets.",
        [({}, sum(1 for v in verdicts if v.demoted))],
    )
    ids = _finding_ids()
    known = set(ids)
    counts: dict[tuple[str, str], int] = {}
    for v in verdicts:
        for finding_id, severity in v.findings:
            key = (finding_id if finding_id in known else "other", severity)
            counts[key] = counts.get(key, 0) + 1
    families.gauge(
        "nxsock_findings",
        "Findings of the audit (over every user audited), by id and severity.",
        [({"id": i, "severity": s}, counts.get((i, s), 0)) for i in ids for s in SEVERITIES],
    )
    families.gauge(
        "nxsock_stale_entries",
        "Dead per-run directories, stale sockets and daemon markers nxsock reset would remove.",
        [({}, sum(v.stale_entries for v in verdicts))],
    )
    families.gauge("nxsock_stale_bytes", "The space those take.", [({}, sum(v.stale_bytes for v in verdicts))])
    families.gauge(
        "nxsock_legacy_entries",
        "Leftovers of Nx's legacy layout that nxsock reset --legacy would remove.",
        [({}, sum(v.legacy_entries for v in verdicts))],
    )
    families.gauge(
        "nxsock_binding_cache_entries",
        "Entries of the native binding cache.",
        [({}, sum(v.cache_entries for v in verdicts))],
    )
    families.gauge(
        "nxsock_binding_cache_bytes",
        "The size of the native binding cache.",
        [({}, sum(v.cache_bytes for v in verdicts))],
    )
    families.gauge(
        "nxsock_binding_cache_reclaimable_bytes",
        "What nxsock cache prune would free.",
        [({}, sum(v.cache_reclaimable_bytes for v in verdicts))],
    )
    if per_user:
        families.gauge(
            "nxsock_user_status",
            "Each user's audit, by uid (asked for with --per-user-metrics).",
            [({"uid": str(u.uid), "status": s}, int(u.status == s)) for u in fleet.users for s in USER_STATUSES],
        )
        families.gauge(
            "nxsock_user_demoted",
            "Whether each user's sockets were demoted, by uid.",
            [({"uid": str(u.uid)}, int(u.verdict.demoted)) for u in fleet.users if u.verdict is not None],
        )
    return families.text()


def provision_metrics_text(report: ProvisionReport, drop_in: TmpfilesChange | None, *, checked_at: float) -> str:
    """``provision --check``'s verdict as metrics: what provisioning would change, what refuses it, the drop-in.

    Every family is ``nxsock_provision_…``, none of ``doctor``'s: the two
    files can lie in one textfile directory (the collector refuses a series
    two files both hold).
    """
    families = _Families()
    families.gauge(
        "nxsock_provision_last_check_timestamp_seconds",
        "When provision --check ran, in seconds since the epoch.",
        [({}, round(checked_at, 3))],
    )
    families.gauge(
        "nxsock_provision_pending_steps",
        "Steps nxsock provision would take now (0: provisioned).",
        [({}, len(report.steps))],
    )
    families.gauge(
        "nxsock_provision_refused",
        "Whether provisioning is refused (something other than a directory stands there, or /tmp is unsafe).",
        [({}, int(report.refusal is not None))],
    )
    if drop_in is not None:
        families.state_set(
            "nxsock_provision_drop_in_state",
            "The systemd-tmpfiles drop-in that recreates /tmp/.nx at boot.",
            "state",
            DROP_IN_STATES,
            _DROP_IN_STATE.get(drop_in.verb, "refused"),
        )
    return families.text()
