"""The remedy verbs are one closed vocabulary: each a type with its shell text, its JSON and its vetting, and one
row in ``--fix``'s table (docs/remedy-policy.md)."""

from __future__ import annotations

import typing as t

from nxsock.audit.repair import FIX, NEEDS_ROOT, _why_not
from nxsock.core.remedy import (
    ALLOWLIST_FORMATS,
    STEP_TYPES,
    Export,
    NxsockCommand,
    Remedy,
    RunNxsock,
    Step,
    Verb,
    render,
    step_json,
)
from nxsock.core.sandbox_daemon import CLEAR_MARKER


def test_every_verb_type_has_its_row_in_the_fix_table() -> None:
    """A new verb type without a row would be a step ``--fix`` can neither apply nor explain."""
    assert set(FIX) == set(STEP_TYPES) == set(t.get_args(Step))


def test_each_verb_type_is_named_once_in_the_json_vocabulary_in_its_order() -> None:
    assert [kind.verb for kind in STEP_TYPES] == list(t.get_args(Verb))


def test_every_verb_type_owns_its_text_fields_and_vetting() -> None:
    for kind in STEP_TYPES:
        assert all(callable(getattr(kind, name, None)) for name in ("text", "fields", "vet")), kind
        assert kind.__dataclass_params__.frozen, kind  # type: ignore[attr-defined]


def test_the_allowlist_commands_are_the_allowlist_formats() -> None:
    assert [c.allowlist for c in NxsockCommand if c.allowlist] == list(ALLOWLIST_FORMATS)
    assert NxsockCommand.paths_format("bwrap") is NxsockCommand.PATHS_BWRAP


def test_the_marker_command_sandboxes_are_told_is_the_one_a_remedy_runs() -> None:
    assert render(Remedy((RunNxsock(NxsockCommand.RESET_DAEMON_MARKER),), "")) == CLEAR_MARKER


def test_fix_runs_in_process_only_the_nxsock_commands_that_act_by_descriptor() -> None:
    """Every other nxsock command (a root-only install, an allowlist that only prints) is left to the user."""
    applied = {c for c in NxsockCommand if _why_not([RunNxsock(c)]) is None}
    assert {c.value for c in applied} == {"reset", "reset --force", "reset --legacy", "reset --daemon-marker",
                                          "cache prune", "provision"}
    assert _why_not([RunNxsock(NxsockCommand.PATHS_TEXT)]) == NEEDS_ROOT


def test_a_step_carries_every_json_key_whatever_its_verb() -> None:
    keys = list(step_json(Export("NX_DAEMON", "false")))
    assert keys == ["verb", "path", "variable", "value", "owner", "group", "mode", "pid", "needs_root"]
    assert step_json(Export("NX_DAEMON", "false"))["value"] == "false"

