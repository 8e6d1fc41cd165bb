"""Sentences are built in ``core/wording.py``, nowhere else: the modules cleaned of them stay clean (issue 26)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

NXSOCK = Path(__file__).resolve().parents[2] / "nxsock"
#: The modules whose every sentence ``core/wording.py`` now builds.
CLEAN = (
    "audit/checks_host.py", "audit/checks_sockets.py", "audit/checks_levels.py", "audit/checks_daemon.py",
    "audit/fleet.py", "output/fixing.py", "output/doctor.py", "audit/repair.py",
    "audit/binding_cache.py", "output/report.py", "output/render.py", "audit/doctor.py",
)
#: Text they read or match, not say: what Nx writes in its log, a reset's reason, the tmpfiles.d line they compare,
#: the pattern that keeps a quoted command whole when prose wraps.
READ_NOT_SAID = {
    "Messages from the log:", "modified less than a minute ago", "d /tmp/.nx 1777 root root -",
    "`[^`]*`|(?<=Or: )[^—`]*?(?= — )",
}


def sentences(source: str) -> list[str]:
    """Every string literal (an f-string's literal parts joined) of four words or more that is not a docstring."""
    tree = ast.parse(source)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)
    }
    inside_f = {id(part) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for part in node.values}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            text = " ".join(p.value for p in node.values if isinstance(p, ast.Constant) and isinstance(p.value, str))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings | inside_f:
            text = node.value
        else:
            continue
        if len(text.split()) >= 4:
            found.append(text)
    return found


@pytest.mark.parametrize("module", CLEAN)
def test_a_cleaned_module_builds_no_sentence(module: str) -> None:
    assert [s for s in sentences((NXSOCK / module).read_text()) if s not in READ_NOT_SAID] == [], module


def test_the_test_sees_a_sentence_where_there_is_one() -> None:
    code = 'def f(p):\n    """Doc string of some words."""\n    return f"{p} is not a socket, Nx says."\n'
    assert sentences(code) == [" is not a socket, Nx says."]
    assert sentences('X = "the marker gives no reason"\nY = "daemon/server/start"\n') == ["the marker gives no reason"]


#: ``audit/explain.py``'s table: each kind's pattern and cause sentences stay beside its remedy builder (issue 26).
EXPLAIN_TABLE = ("_KINDS", "_ERRNO_CAUSES", "_FS_CAUSES", "_NO_PLATFORM_BINDING")


def test_explain_says_nothing_outside_its_table_of_kinds() -> None:
    """Its remedy builders take every sentence from ``core/wording.py``; only the table's rows keep their own."""
    tree = ast.parse((NXSOCK / "audit/explain.py").read_text())
    kept = [node for node in tree.body if not _assigns(node, EXPLAIN_TABLE)]
    assert len(kept) < len(tree.body)  # the table was found
    tree.body = kept
    assert sentences(ast.unparse(tree)) == []


def _assigns(node: ast.stmt, names: tuple[str, ...]) -> bool:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
    return any(isinstance(target, ast.Name) and target.id in names for target in targets)
