"""Each closed vocabulary is declared once, as a table, and every reader derives from it."""

from __future__ import annotations

import typing as t

from nxsock.audit.doctor import CHECKS, FINDING_DESCRIPTIONS, FINDING_IDS, TABLE
from nxsock.core.severity import SEVERITIES, Severity


def test_every_severity_has_its_one_row_in_rising_order() -> None:
    assert tuple(SEVERITIES) == t.get_args(Severity)
    assert [look.rank for look in SEVERITIES.values()] == sorted(look.rank for look in SEVERITIES.values())
    assert len({look.mark for look in SEVERITIES.values()}) == len(SEVERITIES)


def test_doctor_checks_are_one_table_and_the_old_views_derive_from_it() -> None:
    keys = [check.key for check in TABLE]
    assert len(keys) == len(set(keys)) and list(CHECKS) == keys == list(FINDING_IDS)
    ids = [i for check in TABLE for i in check.findings]
    assert len(ids) == len(set(ids)), "a finding id belongs to one check"
    assert set(FINDING_DESCRIPTIONS) == set(ids) and all(FINDING_DESCRIPTIONS.values())


def test_every_sandbox_format_is_one_row_that_every_reader_takes_its_facts_from() -> None:
    from nxsock.audit import allowlists
    from nxsock.commands.doctor import doctor
    from nxsock.commands.paths import paths
    from nxsock.core.remedy import ALLOWLIST_FORMATS, NxsockCommand
    from nxsock.core.sandbox_formats import FORMATS

    choice = next(p for p in paths.params if p.name == "output_format")
    assert tuple(choice.type.choices) == ("json", *FORMATS)  # type: ignore[attr-defined]
    sandbox = next(p for p in doctor.params if p.name == "sandbox")  # doctor --sandbox: the rows that are sandboxes
    assert tuple(sandbox.type.choices) == tuple(n for n, r in FORMATS.items() if r.is_sandbox)  # type: ignore[attr-defined]
    assert set(FORMATS) - set(sandbox.type.choices) == {"text", "env"}  # type: ignore[attr-defined]
    assert allowlists.FORMATS == tuple(FORMATS)
    assert {c.allowlist for c in NxsockCommand if c.allowlist} <= set(FORMATS)
    for name, row in FORMATS.items():
        assert row.name == name
        assert (name in ALLOWLIST_FORMATS) == row.in_remedies, f"{name}: NxsockCommand.PATHS_… and the row disagree"
        assert allowlists.sandbox_kind(name, "linux") == row.kind("linux")
        assert allowlists.SANDBOX_TMPDIR.get(name) == row.tmpdir
        if row.daemon_off is not None:
            assert row.kind("linux")[0], f"{name}: only a user-namespace sandbox is told to carry NX_DAEMON=false"


def test_every_socket_kind_is_one_row_and_every_layout_reports_each() -> None:
    from nxsock.core.fresh_machine import fresh_environment
    from nxsock.core.fsview import MemoryView
    from nxsock.core.releases import ReleaseRules
    from nxsock.core.resolver import SOCKET_KIND_TABLE, SOCKET_KINDS, resolve

    assert SOCKET_KINDS == tuple(kind.name for kind in SOCKET_KIND_TABLE) == ("daemon", "forked", "plugin", "console")
    for kind in SOCKET_KIND_TABLE:
        assert kind.requires is None or kind.requires in ReleaseRules._fields
        assert kind.beside is None or kind.beside in SOCKET_KINDS[: SOCKET_KINDS.index(kind.name)]
    for platform in ("linux", "darwin", "win32"):
        for version in ("23.1.1", "23.3.2", "24.0.6"):
            sockets = resolve(fresh_environment(platform, nx_version=version), MemoryView({})).sockets
            assert tuple(sockets) == SOCKET_KINDS, (platform, version)
            assert sockets["console"].placed == (version == "24.0.6"), (platform, version)
