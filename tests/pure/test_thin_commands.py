"""The commands are thin: each turns its options into one value and hands it on, in a few lines.

A click command's body holds no audit, no rendering and no acting: the
options become one request (``DoctorRequest``, ``ResetRequest``, …) and one
call in the layer below runs it (``output/doctor.py``, ``output/reset.py``, …).
A command that grows its own logic again fails here, pointing at its lines.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

COMMANDS = Path(__file__).resolve().parents[2] / "nxsock" / "commands"
#: The most lines a command's body may run to, its docstring aside: an import, a check or two, one call.
MOST_LINES = 6


def _is_command(node: ast.FunctionDef) -> bool:
    """Decorated ``@click.command(…)``, ``@click.group(…)`` or ``@<group>.command(…)``."""
    for decorator in node.decorator_list:
        call = decorator.func if isinstance(decorator, ast.Call) else decorator
        if isinstance(call, ast.Attribute) and call.attr in ("command", "group"):
            return True
    return False


def _commands() -> list[tuple[str, ast.FunctionDef]]:
    found = []
    for path in sorted(COMMANDS.glob("*.py")):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef) and _is_command(node):
                found.append((f"{path.stem}.{node.name}", node))
    return found


COMMAND_FUNCTIONS = _commands()


def test_every_command_is_found() -> None:
    """The reading finds the commands the group lists, so the checks below run over something."""
    names = {name for name, _ in COMMAND_FUNCTIONS}
    assert {"doctor.doctor", "paths.paths", "reset.reset", "provision.provision", "cache.cache_prune",
            "check_root.check_root", "schema.schema"} <= names


@pytest.mark.parametrize(("name", "node"), COMMAND_FUNCTIONS, ids=[n for n, _ in COMMAND_FUNCTIONS])
def test_a_command_body_is_a_few_lines(name: str, node: ast.FunctionDef) -> None:
    body = node.body[1:] if ast.get_docstring(node) else node.body
    if not body:
        return
    lines = (body[-1].end_lineno or body[-1].lineno) - body[0].lineno + 1
    assert lines <= MOST_LINES, f"{name} runs {lines} lines (line {body[0].lineno}): build a request, hand it on"


@pytest.mark.parametrize(("name", "node"), COMMAND_FUNCTIONS, ids=[n for n, _ in COMMAND_FUNCTIONS])
def test_a_command_makes_at_most_one_call_that_does_the_work(name: str, node: ast.FunctionDef) -> None:
    """Besides ``sys.exit`` and a usage error, the body calls one function: the one it hands the request to."""
    body = node.body[1:] if ast.get_docstring(node) else node.body
    calls = set()
    for statement in body:
        for call in (n for n in ast.walk(statement) if isinstance(n, ast.Call)):
            callee = ast.unparse(call.func)
            if callee not in ("sys.exit", "click.UsageError", "wants_json") and not callee.lower().endswith("request"):
                calls.add(callee)
    assert len(calls) <= 1, f"{name} calls {sorted(calls)}: it should hand one value to one function"


def test_doctor_hands_on_one_frozen_request() -> None:
    """``doctor``'s options arrive as one immutable value, not as parameters threaded through the audit."""
    from nxsock.audit.request import DoctorRequest
    from nxsock.core.host_overrides import HostOverrides

    request = DoctorRequest(HostOverrides(), "nxsock", verbose=True)
    with pytest.raises(AttributeError):
        request.verbose = False  # type: ignore[misc]
    import inspect

    from nxsock.output.doctor import run

    assert list(inspect.signature(run).parameters) == ["request"]
