"""The man page, the completions and the README keep up with the command line."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest

from nxsock.app import cli

REPO = Path(__file__).resolve().parents[2]
MAN = REPO / "man" / "nxsock.1"


def _commands() -> list[tuple[str, click.Command]]:
    """Every command and subcommand, with its full name (``cache prune``)."""
    ctx = click.Context(cli)
    found: list[tuple[str, click.Command]] = []
    for name in cli.list_commands(ctx):
        command = cli.get_command(ctx, name)
        assert command is not None
        found.append((name, command))
        if isinstance(command, click.Group):
            found += [(f"{name} {sub}", command.commands[sub]) for sub in command.commands]
    return found


def test_every_command_and_option_is_in_the_man_page() -> None:
    text = MAN.read_text().replace("\\-", "-")
    for name, command in _commands():
        assert re.search(rf'^\.BR? "?{name}\b', text, re.MULTILINE), name
        for option in (opt for p in command.params for opt in p.opts if opt.startswith("--")):
            assert option in text, f"{name} {option}"
    for option in (opt for p in cli.params for opt in p.opts if opt.startswith("--")):
        assert option in text, option


def test_the_readme_names_the_benchmark_and_the_test_command() -> None:
    readme = (REPO / "README.md").read_text()
    assert "benchmarks/startup.py" in readme and (REPO / "benchmarks" / "startup.py").exists()
    assert TEST_COMMAND in readme and MAIN_COMMAND in readme
    assert TEST_COMMAND in (REPO / ".ci" / "run").read_text()


#: The README's two commands: each makes its own fresh virtual environment, so nothing preinstalled stands in.
MAIN_COMMAND = "python3 -m venv .venv && .venv/bin/python -m pip install . && .venv/bin/nxsock doctor"


TEST_COMMAND = (
    "python3 -m venv --clear .venv && .venv/bin/python -m pip install '.[test]' && .venv/bin/python -m pytest -n auto"
)


def test_ci_runs_the_lowest_declared_dependencies_on_the_oldest_python() -> None:
    """CI's second run takes the lowest versions pyproject declares, on Python 3.10, in a venv of its own."""
    ci = (REPO / ".ci" / "run").read_text()
    assert (
        "--resolution lowest-direct" in ci
        and "(3, 10)" in ci
        and ".venv-lowest/bin/python -m pytest -n auto -m \"not oracle\"" in ci
    )
    assert 'requires-python = ">=3.10"' in (REPO / "pyproject.toml").read_text()


def test_the_version_is_the_released_one() -> None:
    """``nxsock --version``, pyproject and the newest dated CHANGELOG heading name one version, Unreleased above it."""
    match = re.search(r'^version = "([^"]+)"$', (REPO / "pyproject.toml").read_text(), re.M)
    assert match is not None
    version = match.group(1)
    shown = subprocess.run([sys.executable, "-m", "nxsock", "--version"], capture_output=True, text=True)
    assert shown.stdout == f"nxsock {version}\n"
    headings = re.findall(r"^## \[([^]]+)\](?: - (\d{4}-\d{2}-\d{2}))?$", (REPO / "CHANGELOG.md").read_text(), re.M)
    assert headings[0] == ("Unreleased", "") and headings[1][0] == version and headings[1][1], headings[:2]
    footer = MAN.read_text().split("\n", 1)[0]
    assert f'"nxsock {version}"' in footer, footer


COMPLETIONS = [
    ("nxsock ch", ["check-root"]),
    ("nxsock paths --pl", ["--platform"]),
    ("nxsock paths --platform d", ["darwin"]),
    ("nxsock doctor --st", ["--strict"]),
    ("nxsock doctor --only co", ["configuration", "container"]),
    ("nxsock cache pr", ["prune"]),
    ("nxsock schema cache-l", ["cache-list"]),
    ("nxsock doctor --format g", ["github"]),
    ("nxsock doctor --no-r", ["--no-redact"]),
]


def _nxsock_on_path(tmp_path: Path) -> dict[str, str]:
    """A clean environment whose PATH finds an ``nxsock`` that runs the copy under test."""
    shim = tmp_path / "bin" / "nxsock"
    shim.parent.mkdir()
    shim.write_text(f"#!/bin/sh\nexec {sys.executable} -m nxsock \"$@\"\n")
    shim.chmod(0o755)
    return {"PATH": f"{shim.parent}:/usr/bin:/bin", "HOME": str(tmp_path), "TERM": "xterm", "LANG": "C.UTF-8"}


@pytest.mark.tool("bash")
@pytest.mark.parametrize(("words", "expected"), COMPLETIONS)
def test_real_bash_completion(tmp_path: Path, words: str, expected: list[str]) -> None:
    """The committed bash script, sourced into bash, completes commands, options, choices and check ids."""
    script = (
        f"source {REPO / 'completions' / 'nxsock.bash'}; COMP_WORDS=({words}); COMP_CWORD={len(words.split()) - 1}; "
        "_nxsock_completion nxsock; printf '%s\\n' \"${COMPREPLY[@]}\""
    )
    env = _nxsock_on_path(tmp_path)
    result = subprocess.run(["bash", "--norc", "--noprofile", "-c", script], capture_output=True, text=True, env=env)
    assert set(expected) <= set(result.stdout.split()), (result.stdout, result.stderr)


def test_every_exit_code_is_documented_in_the_man_page_the_readme_and_help() -> None:
    """Each code of ``nxsock/exitcodes.py`` has its entry under EXIT STATUS, a row in the README's table and a word in
    ``nxsock --help`` — 74 (standard output closed or refusing a write) as much as the others."""
    from nxsock import exitcodes

    codes = sorted({v for k, v in vars(exitcodes).items() if k.isupper() and isinstance(v, int)})
    assert 74 in codes
    man = MAN.read_text().split(".SH EXIT STATUS", 1)[1].split(".SH ", 1)[0]
    readme = (REPO / "README.md").read_text().split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    helped = " ".join(cli.help.split()) if cli.help else ""
    for code in codes:
        assert f".TP\n.B {code}\n" in man, code
        assert f"\n| {code} | " in readme, code
        assert f" {code} " in helped or helped.endswith(f" {code}"), code


#: A citation of a section of the project's own docs: ``docs/behaviour.md#socket-root-resolution``.
_CITATION = re.compile(r"docs/([A-Za-z0-9_.-]+\.md)(?:#([A-Za-z0-9_-]+))?")
#: Folders that are not the project's own text.
_NOT_OURS = {
    ".git",
    ".venv",
    "node_modules",
    "__pycache__",
    ".mypy_cache",
    ".pytest_cache",
    ".hypothesis",
    "build",
    "dist",
}


def _text_files() -> list[Path]:
    """Every text file of the repository (a checkout or an unpacked sdist), the tools' caches left out."""
    found = []
    for top, folders, files in os.walk(REPO):
        folders[:] = [
            f for f in folders if f not in _NOT_OURS and not f.startswith(".venv") and not f.endswith(".egg-info")
        ]
        found += [Path(top, name) for name in files if not name.endswith((".pyc", ".png", ".gz"))]
    return found


def _anchors(doc: Path) -> set[str]:
    """The sections a Markdown file can be linked to by: explicit ``<a id>`` names and GitHub's heading slugs."""
    text = doc.read_text()
    anchors = set(re.findall(r'<a id="([^"]+)"></a>', text))
    for heading in re.findall(r"^#{1,6} (.+)$", text, re.MULTILINE):
        anchors.add(re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-"))
    return anchors


def test_no_file_cites_a_brief_outside_the_repository() -> None:
    """The docs stand alone: nothing cites the briefs the project was started from, only ``docs/``."""
    brief = "SPEC " + "\u00a7"
    citing = [str(p.relative_to(REPO)) for p in _text_files() if brief in p.read_text(errors="replace")]
    assert citing == []


def test_every_cited_docs_section_exists() -> None:
    """Each ``docs/<file>.md#<section>`` cited in the code, the schemas, the README or the man page is there."""
    cited: dict[tuple[str, str | None], str] = {}
    sources = [p for p in _text_files() if p.suffix in (".py", ".json", ".md", ".1", ".bash", ".zsh", ".fish")]
    for source in sources:
        text = source.read_text(errors="replace").replace("\\-", "-")  # roff escapes its hyphens
        for match in _CITATION.finditer(text):
            cited.setdefault((match[1], match[2]), str(source.relative_to(REPO)))
    assert ("behaviour.md", "socket-root-resolution") in cited and ("remedy-policy.md", None) in cited
    missing = []
    for (name, anchor), where in sorted(cited.items(), key=str):
        doc = REPO / "docs" / name
        if not doc.is_file() or (anchor is not None and anchor not in _anchors(doc)):
            missing.append(f"{where}: docs/{name}" + (f"#{anchor}" if anchor else ""))
    assert missing == []


def test_links_between_the_docs_lead_somewhere() -> None:
    """A link inside ``docs/`` — to a section of the same page or of another page there — names a real section."""
    broken = []
    for doc in sorted((REPO / "docs").glob("*.md")):
        for target, anchor in re.findall(r"\]\(([A-Za-z0-9_.-]*\.md)?(?:#([A-Za-z0-9_-]+))?\)", doc.read_text()):
            linked = doc.parent / target if target else doc
            if not linked.is_file() or (anchor and anchor not in _anchors(linked)):
                broken.append(f"{doc.name} -> {target}#{anchor}")
    assert broken == []


#: The golden text each README example is, by the command it shows (``tests/system/test_screens.py`` makes them
#: from real runs on a real terminal and in a pipe).
README_EXAMPLES = {"nxsock paths": "paths", "nxsock doctor": "doctor", "nxsock cache list": "cache-list",
                   "nxsock reset --daemon-marker": "reset"}


def test_every_readme_example_is_what_the_command_prints() -> None:
    """Issue 25: the README's examples are tested — each ``$ nxsock …`` block is the golden text of that command, run
    for real over the golden state (uid 1000 shown for the test uid)."""
    readme = (REPO / "README.md").read_text()
    blocks = re.findall(r"```console\n\$ (nxsock[^\n]*)\n(.*?)\n```", readme, re.S)
    assert len(blocks) >= 2, blocks
    for command, shown in blocks:
        assert command in README_EXAMPLES, f"{command}: no golden text proves this example"
        golden = (REPO / "tests" / "golden" / f"{README_EXAMPLES[command]}.txt").read_text().rstrip("\n")
        assert shown == golden.replace("<uid>", "1000"), f"README's `{command}` is not what it prints"
