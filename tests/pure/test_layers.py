"""The layers hold: nothing imports upward, the core knows no terminal, and only the act layer changes the disk.

In the spirit of click's ``tests/test_imports.py``, but over the source: every
import in every module of the package (those inside functions too) is read
with :mod:`ast` and checked against the order of the layers, top to bottom::

    cli, app, __main__  →  commands/  →  output/  →  act/  →  audit/  →  core/  →  exitcodes

A module may import its own layer and any layer below it, never one above.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "nxsock"

#: Layer of each top-level name of the package, highest first.
ORDER = ["entry", "commands", "output", "audit", "act", "core", "base"]
LAYER_OF = {"cli": "entry", "app": "entry", "__main__": "entry", "__init__": "base", "exitcodes": "base",
            "commands": "commands", "output": "output", "act": "act", "audit": "audit", "core": "core"}
#: System calls that change the filesystem: only the act layer makes them.
CHANGES_THE_DISK = {"unlink", "rmdir", "remove", "removedirs", "rename", "replace", "renames", "mkdir", "makedirs",
                    "chmod", "fchmod", "lchmod", "chown", "fchown", "lchown", "symlink", "link", "truncate",
                    "ftruncate", "rmtree", "utime"}


def modules() -> list[tuple[str, Path]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        found.append((".".join(parts), path))
    return found


def layer(module: str) -> str:
    return LAYER_OF[module.split(".")[0]]


def imports(module: str, path: Path) -> list[tuple[str, int]]:
    """Every module this one imports, absolute (``nxsock.core.resolver`` → ``core.resolver``), with its line."""
    tree = ast.parse(path.read_text())
    package = module.split(".")[:-1]  # "core.resolver" and "core.__init__" alike: the package "core"
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)] if node.level > 1 else package
                target = ".".join([*base, *([node.module] if node.module else [])])
                if not node.module:  # from . import a, b: each a module of that package, or a name
                    found += [(f"{target}.{alias.name}".lstrip("."), node.lineno) for alias in node.names]
                    continue
                found.append((target, node.lineno))
            elif node.module and node.module.split(".")[0] in ("nxsock", "click", "rich"):
                found.append((node.module.removeprefix("nxsock."), node.lineno))
        elif isinstance(node, ast.Import):
            found += [(alias.name.removeprefix("nxsock."), node.lineno) for alias in node.names
                      if alias.name.split(".")[0] in ("nxsock", "click", "rich")]
    return found


MODULES = modules()


@pytest.mark.parametrize(("module", "path"), MODULES, ids=[m for m, _ in MODULES])
def test_no_module_imports_a_layer_above_its_own(module: str, path: Path) -> None:
    """An arrow runs down the layers or stays within one; one running back up fails here."""
    mine = ORDER.index(layer(module))
    upward = [f"{target} (line {line})" for target, line in imports(module, path)
              if target.split(".")[0] in LAYER_OF and ORDER.index(layer(target)) < mine]
    assert not upward, f"{module} ({layer(module)}) imports upward: {upward}"


@pytest.mark.parametrize(("module", "path"), [(m, p) for m, p in MODULES if layer(m) in ("core", "audit", "act")],
                         ids=[m for m, _ in MODULES if layer(m) in ("core", "audit", "act")])
def test_below_the_output_layer_nothing_knows_click_or_rich(module: str, path: Path) -> None:
    """The core, the audit and the acting code return values; the terminal is the output layer's and the commands'."""
    known = [target for target, _ in imports(module, path) if target.split(".")[0] in ("click", "rich")]
    assert not known, f"{module} imports {known}"


def test_only_the_output_layer_imports_rich() -> None:
    """One rendering layer alone draws: a command that formats its own output fails here."""
    drawing = sorted({m for m, p in MODULES for target, _ in imports(m, p)
                      if target.split(".")[0] == "rich" and layer(m) != "output"})
    assert not drawing


@pytest.mark.parametrize(("module", "path"), [(m, p) for m, p in MODULES if layer(m) != "act"],
                         ids=[m for m, _ in MODULES if layer(m) != "act"])
def test_only_the_act_layer_changes_the_disk(module: str, path: Path) -> None:
    """Every call that creates, removes, renames or re-modes a file is in ``nxsock/act/``."""
    calls = [f"{node.func.value.id}.{node.func.attr} (line {node.lineno})"  # type: ignore[attr-defined]
             for node in ast.walk(ast.parse(path.read_text()))
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
             and isinstance(node.func.value, ast.Name) and node.func.value.id in ("os", "shutil")
             and node.func.attr in CHANGES_THE_DISK]
    assert not calls, f"{module} changes the disk: {calls}"


def test_every_layer_is_a_folder_with_a_docstring() -> None:
    """``ls nxsock/`` shows the layers; each says in a sentence what it holds."""
    for folder in ("core", "audit", "act", "output", "commands"):
        init = PACKAGE / folder / "__init__.py"
        assert init.exists() and ast.get_docstring(ast.parse(init.read_text())), folder
