"""The metrics text, the fleet's values and the new options, without root: what promtool and the collector expect.

The real node_exporter and promtool read it in ``tests/system/test_fleet.py``; here the text is held to the
rules they apply, over generated verdicts: every family has ``# HELP`` and ``# TYPE gauge`` before its
samples, names carry the ``nxsock_`` prefix and no ``_total``, no sample has a timestamp, label values are
closed vocabularies (never a path or a user name), a state set has exactly one series at 1, and the text ends
in ``# EOF``.
"""

from __future__ import annotations

import json
import os
import re
import stat
import typing as t
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from nxsock.app import cli
from nxsock.audit.doctor import FINDING_IDS
from nxsock.audit.fleet import (
    CONTAINER_STATES,
    SEVERITIES,
    FleetVerdict,
    UserAudit,
    UserVerdict,
    parse_users,
    verdict_from_json,
    verdict_json,
)
from nxsock.output.openmetrics import metrics_text

IDS = sorted({i for ids in FINDING_IDS.values() for i in ids})
NAME = re.compile(r"^nxsock_[a-z][a-z0-9_]*$")
SAMPLE = re.compile(r'^(nxsock_[a-z0-9_]+)(\{(?:[a-z_]+="(?:[^"\\\n]|\\.)*",?)*\})? (-?[0-9.e+]+)$')
LABEL = re.compile(r'([a-z_]+)="((?:[^"\\]|\\.)*)"')


def verdict(uid: int = 1000, **fields: t.Any) -> UserVerdict:
    values: dict[str, t.Any] = {
        "uid": uid,
        "status": "warn",
        "exit_code": 0,
        "findings": (("container", "ok"), ("boot-persistence", "warn")),
        "socket_tier": "shared",
        "demoted": False,
        "stale_entries": 0,
        "stale_bytes": 0,
        "legacy_entries": 0,
        "cache_entries": 1,
        "cache_bytes": 4096,
        "cache_reclaimable_bytes": 0,
        "nx_version": "24.0.6",
        "nx_version_source": "installed",
        "document": {"status": "warn", "findings": []},
    }
    values.update(fields)
    return UserVerdict(**values)


user_verdicts = st.builds(
    verdict,
    uid=st.integers(0, 2**32 - 2),
    status=st.sampled_from(["ok", "warn", "error"]),
    findings=st.lists(st.tuples(st.sampled_from([*IDS, "not-an-id"]), st.sampled_from(SEVERITIES)), max_size=8).map(
        tuple
    ),
    socket_tier=st.sampled_from(["shared", "home", "workspace", "configured", None]),
    demoted=st.booleans(),
    stale_entries=st.integers(0, 10**6),
    cache_bytes=st.integers(0, 2**40),
)
audits = st.builds(
    UserAudit,
    uid=st.integers(0, 2**32 - 2),
    name=st.text(min_size=1, max_size=12),  # anything a passwd may hold: never shown in the metrics
    reasons=st.just(("named",)),
    verdict=st.one_of(st.none(), user_verdicts),
    failure=st.just("the audit as uid 7 did not finish within 15 s"),
)
fleets = st.builds(
    FleetVerdict,
    checked_at=st.floats(0, 4e9),
    duration=st.floats(0, 1e3),
    container=st.sampled_from(CONTAINER_STATES),
    users=st.lists(audits, max_size=5).map(tuple),
    nxsock_version=st.sampled_from(["0.2.0", "unknown"]),
    all_users=st.booleans(),
)


def families(text: str) -> dict[str, list[tuple[dict[str, str], float]]]:
    """Each family's samples, after checking the text's shape line by line (raises AssertionError where it breaks)."""
    lines = text.split("\n")
    assert lines[-2:] == ["# EOF", ""]
    found: dict[str, list[tuple[dict[str, str], float]]] = {}
    current = None
    for index, line in enumerate(lines[:-2]):
        if line.startswith("# HELP "):
            name = line.split(" ", 3)[2]
            assert NAME.match(name) and not name.endswith("_total") and name not in found, name
            assert lines[index + 1] == f"# TYPE {name} gauge"
            current = name
            found[name] = []
        elif line.startswith("# TYPE "):
            assert line.split(" ")[2] == current
        else:
            match = SAMPLE.match(line)
            assert match, line
            assert match[1] == current, line  # samples follow their own family's HELP and TYPE
            found[current].append((dict(LABEL.findall(match[2] or "")), float(match[3])))
    return found


class TestTheText:
    @given(fleets, st.booleans())
    def test_every_family_has_help_and_type_and_no_sample_has_a_timestamp(
        self, fleet: FleetVerdict, per_user: bool
    ) -> None:
        families(metrics_text(fleet, per_user=per_user))

    @given(fleets, st.booleans())
    def test_label_values_are_closed_vocabularies_never_a_path_or_a_name(
        self, fleet: FleetVerdict, per_user: bool
    ) -> None:
        allowed = {
            "state": set(CONTAINER_STATES),
            "status": {"ok", "warn", "error", "failed"},
            "severity": set(SEVERITIES),
            "id": {*IDS, "other"},
            "source": {"installed", "--nx-version", "assumed"},
        }
        for name, samples in families(metrics_text(fleet, per_user=per_user)).items():
            for labels, _ in samples:
                for key, value in labels.items():
                    if key in allowed:
                        assert value in allowed[key], (name, key, value)
                    elif key == "uid":
                        assert per_user and value.isdigit()
                    else:
                        assert key == "version" and "/" not in value and " " not in value, (name, key, value)

    @given(fleets)
    def test_each_state_set_has_exactly_one_state(self, fleet: FleetVerdict) -> None:
        found = families(metrics_text(fleet))
        for name in ("nxsock_container_state", "nxsock_status"):
            assert sorted(value for _, value in found[name]) == [0.0] * (len(found[name]) - 1) + [1.0]

    @given(fleets)
    def test_the_counts_add_up(self, fleet: FleetVerdict) -> None:
        """Users by status sum to the users audited; findings of known ids and the rest sum to every finding."""
        found = families(metrics_text(fleet))
        assert sum(value for _, value in found["nxsock_users"]) == len(fleet.users)
        verdicts = [u.verdict for u in fleet.users if u.verdict is not None]
        assert sum(value for _, value in found["nxsock_findings"]) == sum(
            1 for v in verdicts for finding_id, _ in v.findings if finding_id in IDS
        )
        assert found["nxsock_users_demoted"] == [({}, float(sum(v.demoted for v in verdicts)))]

    def test_a_sample(self) -> None:
        """The lines an alert rule would use, as written."""
        fleet = FleetVerdict(
            1765000000.5,
            0.25,
            "user-owned",
            (UserAudit(1000, "ada", ("named",), verdict(demoted=True)),),
            "0.2.0",
            True,
        )
        text = metrics_text(fleet)
        for line in (
            'nxsock_container_state{state="user-owned"} 1',
            'nxsock_users{status="warn"} 1',
            "nxsock_users_demoted 1",
            'nxsock_findings{id="boot-persistence",severity="warn"} 1',
            'nxsock_build_info{version="0.2.0"} 1',
            'nxsock_nx_info{version="24.0.6",source="installed"} 1',
            "nxsock_last_check_timestamp_seconds 1765000000.5",
            "nxsock_binding_cache_bytes 4096",
        ):
            assert line in text.splitlines(), line
        assert "ada" not in text


class TestTheChildsVerdict:
    """What a child audited as another user sends back is checked field by field before root uses it."""

    def test_a_verdict_survives_the_pipe(self) -> None:
        one = verdict()
        assert verdict_from_json(json.loads(json.dumps(verdict_json(one)))) == one

    @pytest.mark.parametrize(
        "change",
        [
            {"uid": True},
            {"stale_bytes": -1},
            {"findings": [["container", "fatal"]]},
            {"status": "failed"},
            {"nx_version": '24.0.6"} 1\nnxsock_users_demoted 99'},
            {"nx_version": "../x"},
            {"nx_version_source": "me"},
            {"socket_tier": "/tmp"},
            {"extra": 1},
            {"demoted": 1},
        ],
        ids=str,
    )
    def test_anything_else_is_no_verdict(self, change: dict[str, t.Any]) -> None:
        assert verdict_from_json({**verdict_json(verdict()), **change}) is None


class TestUsers:
    def test_uids_and_ranges(self) -> None:
        assert parse_users("1000, 1002-1010,0") == ((1000, 0), ((1002, 1010),))

    @pytest.mark.parametrize("spec", ["", "x", "-1", "1000-", "01", "10-9", "0-65536", "4294967295", "1,,2", "1e3"])
    def test_anything_else_is_refused(self, spec: str) -> None:
        with pytest.raises(ValueError):
            parse_users(spec)


class TestTheOptions:
    @pytest.mark.parametrize(
        "args",
        [
            ["doctor", "--output", "x.prom"],
            ["doctor", "--per-user-metrics"],
            ["doctor", "--users", "1000"],
            ["doctor", "--format", "openmetrics", "--json"],
            ["doctor", "--all-users", "--fix"],
            ["doctor", "--all-users", "--user", "0"],
            ["doctor", "--format", "openmetrics", "--report"],
            ["doctor", "--all-users", "--users", "1000-"],
            ["provision", "--format", "openmetrics"],
            ["provision", "--output", "x.prom"],
            ["provision", "--check", "--tmpfiles", "--format", "openmetrics"],
        ],
        ids=" ".join,
    )
    def test_what_does_not_go_together_is_usage(self, args: list[str]) -> None:
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 2, result.output

    @pytest.mark.skipif(os.geteuid() == 0, reason="as root --all-users runs")
    def test_all_users_needs_root(self) -> None:
        result = CliRunner().invoke(cli, ["doctor", "--all-users"])
        assert result.exit_code == 77 and "sudo nxsock doctor --all-users" in result.stderr


class TestTheCommand:
    """``doctor --format openmetrics`` over this machine, in a fresh workspace: one user, the file written whole."""

    @pytest.fixture(autouse=True)
    def workspace(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
        (tmp_path / "ws").mkdir()
        (tmp_path / "ws" / "nx.json").write_text("{}")
        monkeypatch.chdir(tmp_path / "ws")
        return tmp_path

    def test_stdout(self) -> None:
        result = CliRunner().invoke(cli, ["doctor", "--format", "openmetrics"])
        assert result.exit_code in (0, 1), result.output
        found = families(result.stdout)
        assert sum(value for _, value in found["nxsock_users"]) == 1

    def test_output_is_written_whole_and_readable_by_the_collector(self, workspace: Path) -> None:
        target = workspace / "textfile" / "nxsock.prom"
        target.parent.mkdir()
        target.write_text("old")
        result = CliRunner().invoke(cli, ["doctor", "--format", "openmetrics", "--output", str(target)])
        assert result.exit_code in (0, 1) and result.stdout == ""
        families(target.read_text())
        assert stat.S_IMODE(target.stat().st_mode) == 0o644
        assert sorted(p.name for p in target.parent.iterdir()) == ["nxsock.prom"]

    @pytest.mark.parametrize("shape", ["missing directory", "directory", "symlink"])
    def test_what_cannot_be_written_is_73_in_one_line_and_left_as_it_is(self, workspace: Path, shape: str) -> None:
        target = workspace / "nxsock.prom"
        if shape == "missing directory":
            target = workspace / "absent" / "nxsock.prom"
        elif shape == "directory":
            target.mkdir()
        else:
            (workspace / "elsewhere").write_text("kept")
            target.symlink_to(workspace / "elsewhere")
        result = CliRunner().invoke(cli, ["doctor", "--format", "openmetrics", "--output", str(target)])
        assert result.exit_code == 73 and len(result.stderr.splitlines()) == 1, result.output
        if shape == "symlink":
            assert target.is_symlink() and (workspace / "elsewhere").read_text() == "kept"

    def test_provision_check_as_metrics(self, workspace: Path) -> None:
        target = workspace / "provision.prom"
        result = CliRunner().invoke(cli, ["provision", "--check", "--format", "openmetrics", "--output", str(target)])
        assert result.exit_code in (0, 1), result.output
        found = families(target.read_text())
        assert set(found) >= {
            "nxsock_provision_pending_steps",
            "nxsock_provision_refused",
            "nxsock_provision_drop_in_state",
        }
        assert all(name.startswith("nxsock_provision_") for name in found)  # beside doctor's file, no series twice
