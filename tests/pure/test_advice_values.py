"""A finding, an answer and a cache verdict carry their vetted advice, never rendered text: the line to paste is
rendered from the advice's steps where it is shown (issue 26)."""

from __future__ import annotations

import typing as t

import pytest

from nxsock.audit.binding_cache import Verdict
from nxsock.audit.explain import Answer
from nxsock.audit.findings import Finding
from nxsock.audit.repair import PlanItem, make_plan
from nxsock.core.remedy import NxsockCommand, Remedy, RunNxsock, Unset, step_json
from nxsock.core.wording import Advice
from nxsock.output.paths_json import fix_line
from nxsock.output.report import doctor_document


@pytest.mark.parametrize("value", [Finding, Answer, Verdict, PlanItem])
def test_no_value_carries_a_rendered_command(value: type[t.NamedTuple]) -> None:
    """No ``remedy``/``command`` field (a string); the advice is the one field, typed as the vetted value."""
    assert not {"remedy", "command", "steps", "hint"} & set(value._fields), value._fields
    # Advice and Finding are imported only for the type checker there
    hints = t.get_type_hints(value, localns={"Advice": Advice, "Finding": Finding})
    assert hints["advice"] in (Advice, Advice | None), hints["advice"]


def test_advice_holds_the_vetted_remedy_and_no_text() -> None:
    assert t.get_type_hints(Advice) == {"remedy": Remedy | None, "hint": str | None, "nxsock_for_root": str}


def test_the_document_renders_the_command_from_the_steps_with_the_policy_s_nxsock() -> None:
    """The JSON's ``remedy`` is the rendering of the advice's steps, ``sudo`` naming nxsock as the policy does."""
    advice = Advice(Remedy((RunNxsock(NxsockCommand.PROVISION_TMPFILES, needs_root=True),), "keeps it"), "keeps it",
                    "'/opt/my venv/bin/nxsock'")
    bare = Advice(None, "No command: why.")
    document = doctor_document([("g", Finding("boot-persistence", "warn", "/tmp/.nx", "m", advice)),
                                ("g", Finding("container", "error", "/tmp/.nx", "m", bare)),
                                ("g", Finding("outcome", "ok", None, "fine"))], "error")
    made, without, fine = document["findings"]
    assert made["remedy"] == "sudo '/opt/my venv/bin/nxsock' provision --tmpfiles --install" == fix_line(advice)
    assert made["remedy_steps"] == [step_json(s) for s in advice.steps] and made["hint"] == "keeps it"
    assert (without["remedy"], without["remedy_steps"], without["hint"]) == (None, None, "No command: why.")
    assert (fine["remedy"], fine["remedy_steps"], fine["hint"]) == (None, None, None)


def test_fix_plans_one_item_per_distinct_remedy_and_applies_the_advice_s_own_steps() -> None:
    unset = Advice(Remedy((Unset(variable="NX_SOCKET_DIR"),), "unsets it"), "unsets it")
    reset = Advice(Remedy((RunNxsock(NxsockCommand.RESET),), "resets"), "resets")
    plan = make_plan([Finding("configuration", "error", None, "a", unset), Finding("outcome", "warn", None, "b", unset),
                      Finding("leftovers", "warn", None, "c", reset)])
    items = [*plan.apply, *plan.for_you]
    assert sorted(i.command for i in items) == ["nxsock reset", "unset NX_SOCKET_DIR"]
    assert {i.command: len(i.findings) for i in items} == {"nxsock reset": 1, "unset NX_SOCKET_DIR": 2}
    assert all(i.steps is i.advice.steps or i.steps == i.advice.steps for i in items)
