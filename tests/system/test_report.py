"""``doctor --report`` (Markdown to paste) and ``doctor --format github`` (workflow commands), on a real hostile state.

The state is built as root in a private mount namespace and the command run
as an unprivileged uid: a user called ``ada`` whose name is also part of a
workspace path outside the home, a workspace directory whose name holds a
backtick, a pipe, a percent sign, a newline with a Markdown heading after
it and a terminal escape, and a ``disabled`` marker whose recorded reason
tries to close a code fence, start a heading and open HTML.  The Markdown is
read back with a real CommonMark parser (markdown-it-py).
"""
from __future__ import annotations

import json
import shlex
import typing as t

import pytest
from harness import USER, run_as_user
from pure.test_report import _tokens

from nxsock.output.report import Masks

#: Its module fixture builds the states once: under pytest-xdist the module runs on one worker.
pytestmark = pytest.mark.xdist_group("report")


NAME = "ada"
HOME = "/home/ada"


#: A workspace outside the home whose path holds the user name and every character that could break Markdown.
WS = "/tmp/ada-work/we`ir|d%25 ``x\n## planted heading\x1b[31m"


REASON = "```\n# planted\n<script>alert(1)</script> | a | b |\x1b]0;title\x07\n~~~"
#: NX_DAEMON=true and Nx installed: the marker is all that keeps the daemon off, even on a host that is a container.
ENV = {"HOME": HOME, "USER": NAME, "LOGNAME": NAME, "NX_DAEMON": "true"}


def _setup() -> str:
    ws, d = shlex.quote(WS), shlex.quote(f"{WS}/.nx/workspace-data/d")
    return (f"install -d -o {USER} -g {USER} {HOME}; install -d -o {USER} -g {USER} /tmp/ada-work {ws}; "
            f"echo '{{}}' > {ws}/nx.json; install -d -o {USER} {ws}/.nx {ws}/.nx/workspace-data; install -d -m 0700 -o {USER} {d}; "
            f"printf %s {shlex.quote(REASON)} > {d}/disabled; install -d {ws}/node_modules/nx; "
            f"echo '{{\"version\": \"24.0.6\"}}' > {ws}/node_modules/nx/package.json; chown -R {USER}:{USER} {ws}")


def _doctor(*args: str) -> t.Any:
    result = run_as_user(_setup(), ["doctor", *args], env=ENV, cwd=WS)
    assert "Traceback" not in result.stderr, result.stderr
    assert result.tree_before == result.tree_after
    return result


@pytest.fixture(scope="module")
def runs() -> dict[str, t.Any]:
    return {"json": _doctor("--json"), "report": _doctor("--report"), "raw": _doctor("--report", "--no-redact"),
            "github": _doctor("--format", "github")}




class TestReport:

    def test_the_report_masks_the_home_and_the_user_name_everywhere(self, runs: dict[str, t.Any]) -> None:
        """Not one ``ada`` is left — in the home, in a path outside it, in the environment line; --no-redact keeps them."""
        report = runs["report"].stdout
        assert NAME not in report and HOME not in report, [line for line in report.splitlines() if NAME in line]
        assert "/tmp/<user>-work/" in report and "HOME \\~," in report  # in text, Markdown's own characters are backslashed
        raw = runs["raw"].stdout
        assert "/tmp/ada-work" in raw and f"HOME {HOME}," in raw and "<user>" not in raw

    def test_the_report_is_markdown_no_name_from_disk_can_break(self, runs: dict[str, t.Any]) -> None:
        """Parsed by CommonMark: only the report's own headings, no HTML, the fences it opened, the names shown escaped."""
        report = runs["report"].stdout
        tokens = _tokens(report)
        headings = [tokens[i + 1].content for i, tok in enumerate(tokens) if tok.type == "heading_open"]
        own = ("nxsock doctor report", "Findings", "Other checks", "Resolved paths", "✗ error: ", "⚠ warning: ")
        assert headings and all(h.startswith(own) for h in headings), headings
        assert not [tok for tok in tokens if tok.type in ("html_block", "html_inline")]
        assert {tok.info for tok in tokens if tok.type == "fence"} <= {"sh", "text"}
        recorded = next(tok.content for tok in tokens if tok.type == "fence" and tok.info == "text")
        assert "<script>alert(1)</script> | a | b |\\x1b]0;title\\x07" in recorded and recorded.splitlines()[0] == "```"
        codes = [tok.content for tok in tokens if tok.type == "code_inline"]
        assert any("we`ir|d%25 ``x\\x0a## planted heading\\x1b[31m" in code for code in codes), codes
        assert not any(ch in report for ch in "\x1b\x07\r")
        findings = json.loads(runs["json"].stdout)["findings"]
        problems = [f for f in findings if f["severity"] in ("warn", "error")]
        others = [f for f in findings if f["severity"] in ("ok", "info")]
        assert len(headings) == 3 + bool(others) + len(problems), headings
        assert any(f["id"] == "daemon-disabled" for f in problems)

    def test_every_finding_is_in_the_report_with_its_fix(self, runs: dict[str, t.Any]) -> None:
        findings = json.loads(runs["json"].stdout)["findings"]
        fences = [tok.content.strip() for tok in _tokens(runs["report"].stdout) if tok.type == "fence" and tok.info == "sh"]
        masks = Masks((HOME,), (NAME,))
        for finding in findings:
            if finding["severity"] in ("warn", "error") and finding["remedy"]:
                assert masks.apply(finding["remedy"]).replace("\n", "\\x0a") in fences, finding["remedy"]
        assert runs["report"].returncode == runs["json"].returncode

    def test_github_annotations_are_one_per_finding_escaped_and_the_exit_code_unchanged(self, runs: dict[str, t.Any]) -> None:
        """One workflow command per finding that is not ok, of its level; no planted newline splits one."""
        findings = json.loads(runs["json"].stdout)["findings"]
        lines = runs["github"].stdout.splitlines()
        expected = [{"error": "error", "warn": "warning", "info": "notice"}[f["severity"]] for f in findings if f["severity"] != "ok"]
        assert [line.split(" ", 1)[0][2:] for line in lines] == expected, lines
        assert all(line.startswith("::") and " title=nxsock doctor%3A " in line for line in lines)
        assert "\r" not in runs["github"].stdout and "\x1b" not in runs["github"].stdout
        assert any("we`ir|d%2525 ``x\\x0a## planted heading\\x1b[31m" in line for line in lines)
        assert runs["github"].returncode == runs["json"].returncode
