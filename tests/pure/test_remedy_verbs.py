"""The remedy verbs are one closed vocabulary: each a type with its shell text, its JSON and its vetting, and one
row in ``--fix``'s table (docs/remedy-policy.md)."""

from __future__ import annotations

import subprocess
import typing as t

from conftest import environment, machine
from hypothesis import given, settings
from hypothesis import strategies as st

import nxsock.core.wording as wording
from nxsock.audit.repair import FIX, NEEDS_ROOT, SHELL, _why_not
from nxsock.core.remedy import (
    ALLOWLIST_FORMATS,
    STEP_TYPES,
    Export,
    NxsockCommand,
    Policy,
    Problem,
    Remedy,
    RunNxsock,
    Step,
    Umask,
    Verb,
    render,
    step_json,
    vet_step,
)
from nxsock.core.resolver import resolve
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



def _policy(steered: str | None = None) -> Policy:
    view = machine({})
    return wording.context_for(resolve(environment(), view), view).policy._replace(steered=steered)


class TestUmask:
    """``umask``: the shell's file-creation mask, shell configuration like ``export`` — printed for the user, never
    applied by ``--fix`` (no program sets its parent shell's mask)."""

    @settings(max_examples=200, deadline=None)
    @given(mask=st.integers(0, 0o777))
    def test_only_a_mask_that_leaves_the_owner_every_bit_and_keeps_others_from_writing_passes(self, mask: int) -> None:
        """A mask taking any of the owner's bits (0277, 0077 | 0o100, …) would leave Nx's directories unusable; one
        without the group's and others' write bits (0000, 0002, …) would widen what the user creates."""
        verdict = vet_step(Umask(mask), _policy())
        assert (verdict == Umask(mask)) == (mask & 0o700 == 0 and mask & 0o022 == 0o022), (oct(mask), verdict)
        if isinstance(verdict, Problem):
            owner = f"a umask of {mask:04o} takes bits from the owner" in verdict.reason
            widened = f"a umask of {mask:04o} lets the group or others write" in verdict.reason
            assert owner == bool(mask & 0o700) and widened == (not mask & 0o700), verdict.reason

    @settings(max_examples=50, deadline=None)
    @given(mask=st.integers(0, 0o77).map(lambda m: m | 0o022))
    def test_its_text_pasted_in_a_shell_sets_exactly_that_mask(self, mask: int) -> None:
        """The line, run by sh from a shell whose mask is 0277, leaves the mask the step names (and no sudo)."""
        text = render(Remedy((Umask(mask),), ""))
        assert text == f"umask {mask:04o}"
        out = subprocess.run(["sh", "-c", f"umask 0277 && {text} && umask"], capture_output=True, text=True, check=True)
        assert int(out.stdout.strip(), 8) == mask

    def test_its_json_carries_the_mask_as_the_mode_and_nothing_else(self) -> None:
        step = step_json(Umask(0o22))
        assert {k: v for k, v in step.items() if v not in (None, False)} == {"verb": "umask", "mode": "0022"}

    def test_the_fix_plan_leaves_it_to_the_user_as_shell_configuration(self) -> None:
        assert _why_not([Umask(0o22)]) == SHELL == _why_not([Export("NX_DAEMON", "false")])

    def test_it_is_kept_where_another_users_file_steers_the_levels(self) -> None:
        """A change to your own shell touches nothing another user chose (docs/remedy-policy.md)."""
        assert vet_step(Umask(0o77), _policy(steered="x")) == Umask(0o77)
        assert not Umask.needs_root
