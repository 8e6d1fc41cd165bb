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

import typing as t

import pytest
from markdown_it import MarkdownIt

from nxsock.audit.findings import Finding
from nxsock.output.report import Masks, doctor_markdown, github_annotations, md_code, md_text


def _tokens(text: str) -> list[t.Any]:
    flat = []
    for token in MarkdownIt("commonmark").parse(text):
        flat.append(token)
        flat += token.children or []
    return flat


class TestEscaping:
    @pytest.mark.parametrize("name", ["a`b", "``", "` x `", "|", "a\nb", "\x1b[2J", "<b>", "*x*", "[l](u)", "", " "])
    def test_a_code_span_shows_exactly_the_name_escaped(self, name: str) -> None:
        tokens = _tokens(f"x {md_code(name)} y")
        codes = [tok.content for tok in tokens if tok.type == "code_inline"]
        from nxsock.core.terminal import printable

        assert len(codes) == 1 and codes[0].strip() == printable(name).strip()

    @pytest.mark.parametrize("name", ["a`b", "*x* _y_", "<b>x</b>", "a|b", "[l](u)", "&amp;", "~~s~~", "a\nb\x1b"])
    def test_text_shows_exactly_the_name_escaped_and_nothing_else(self, name: str) -> None:
        from nxsock.core.terminal import printable

        tokens = _tokens(md_text(name))
        assert [tok.type for tok in tokens] == ["paragraph_open", "inline", "text", "paragraph_close"], tokens
        assert tokens[2].content == printable(name)

    def test_a_property_in_a_workflow_command_escapes_colon_and_comma(self) -> None:
        text = github_annotations([("g", Finding("a:b,c", "error", None, "m%\r\n"))])
        assert text == "::error title=nxsock doctor%3A a%3Ab%2Cc::m%25\\x0d\\x0a\n"

    def test_ok_findings_make_no_annotation_and_a_masked_report_says_so(self) -> None:
        assert github_annotations([("g", Finding("outcome", "ok", "/x", "fine"))]) == ""
        report = doctor_markdown([("g", Finding("outcome", "ok", "/home/bo/x", "fine in /home/bo/x, bo"))], "ok", [], [],
                                 Masks(("/home/bo",), ("bo",)))
        assert "/home/bo" not in report and "in \\~/x, \\<user\\>" in report and "--no-redact" in report

    def test_a_report_printed_in_an_actions_log_holds_no_workflow_command(self) -> None:
        # The runner trims a line's leading blanks and reads "::" there as a workflow command.
        planted = ("::error title=x::planted", "  ::add-mask::secret", "\t::stop-commands::t", " ##[error]planted",
                   "foo ##[stop-commands]tok")
        finding = Finding("daemon-disabled", "warn", "/w/.nx/workspace-data/d/disabled", "m", "nx reset", detail=planted)
        report = doctor_markdown([("g", finding)], "warn", [], [])
        assert [line for line in report.splitlines() if line.lstrip().startswith("::") or "##[" in line] == []
        # and a path shown in a code span, which Markdown shows verbatim
        spanned = doctor_markdown([("g", finding._replace(path="/w/##[add-mask]x/d"))], "warn", [], [])
        assert "##[" not in spanned and "##\\x5badd-mask]x" in spanned
        blocks = [tok.content for tok in _tokens(report) if tok.type == "fence"]
        assert "\\x3a:error title=x::planted\n" in blocks[0] and "  \\x3a:add-mask::secret\n" in blocks[0]
