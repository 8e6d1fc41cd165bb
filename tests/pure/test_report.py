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

import re
import typing as t

import pytest
from markdown_it import MarkdownIt

from nxsock.audit.findings import Finding
from nxsock.core.remedy import Chmod, Chown, NxCommand, NxsockCommand, Remedy, RunNx, RunNxsock
from nxsock.core.wording import Advice
from nxsock.output.report import Masks, doctor_markdown, github_annotations, masks_for, md_code, md_text


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

    def test_a_healthy_run_annotates_nothing_and_strict_adds_the_notes(self) -> None:
        """Issue 25: a ``::notice`` on every healthy CI job is noise; only problems annotate, notes with --strict."""
        results = [("g", Finding("daemon-enabled", "info", None, "The daemon is off: CI.")),
                   ("g", Finding("sockets", "warn", "/x", "stale"))]
        assert github_annotations(results[:1]) == ""
        assert [line[:9] for line in github_annotations(results).splitlines()] == ["::warning"]
        assert [line[:9] for line in github_annotations(results, notes=True).splitlines()] == ["::notice ", "::warning"]

    def test_a_report_gives_each_command_once(self) -> None:
        """Issue 25: a peer's /tmp/.nx printed the same ``sudo chown`` for the container, the outcome and the cache."""
        fix = Advice(Remedy((Chown("/tmp/.nx", owner=0, group=0, needs_root=True),
                             Chmod("/tmp/.nx", mode=0o1777, needs_root=True)), ""), None)
        results = [
            ("g", Finding(i, "warn", "/tmp/.nx", f"{i} is demoted", fix))
            for i in ("container", "outcome", "native-cache")
        ]
        report = doctor_markdown(results, "warn", [], [])
        assert report.count("sudo chown") == 1 and report.count("Fix: the same command as above.") == 2

    def test_a_report_folds_what_is_fine_and_keeps_the_problems_open(self) -> None:
        results = [
            ("g", Finding("outcome", "ok", None, "fine")),
            ("g", Finding("sockets", "warn", "/x", "stale", Advice(Remedy((RunNxsock(NxsockCommand.RESET),), ""), None))
             ),
        ]
        report = doctor_markdown(results, "warn", [], [("Workspace", "/w", "")])
        problems, folded = report.split("<details><summary>Other checks (1)</summary>")
        assert "stale" in problems and "nxsock reset" in problems and "fine" in folded
        assert "<details><summary>Resolved paths</summary>" in folded and folded.count("</details>") == 2

    def test_ok_findings_make_no_annotation_and_a_masked_report_says_so(self) -> None:
        assert github_annotations([("g", Finding("outcome", "ok", "/x", "fine"))]) == ""
        report = doctor_markdown(
            [("g", Finding("outcome", "ok", "/home/bo/x", "fine in /home/bo/x and /tmp/bo-w, bo"))],
            "ok",
            [],
            [],
            Masks(("/home/bo",), ("bo",)),
        )
        assert "/home/bo" not in report and "in \\~/x and /tmp/\\<user\\>-w, bo" in report and "--no-redact" in report

    def test_a_report_printed_in_an_actions_log_holds_no_workflow_command(self) -> None:
        # The runner trims a line's leading blanks and reads "::" there as a workflow command.
        planted = ("::error title=x::planted", "  ::add-mask::secret", "\t::stop-commands::t", " ##[error]planted",
                   "foo ##[stop-commands]tok")
        finding = Finding(
            "daemon-disabled", "warn", "/w/.nx/workspace-data/d/disabled", "m",
            Advice(Remedy((RunNx(NxCommand.RESET),), ""), None), detail=planted
        )
        report = doctor_markdown([("g", finding)], "warn", [], [])
        assert [line for line in report.splitlines() if line.lstrip().startswith("::") or "##[" in line] == []
        # and a path shown in a code span, which Markdown shows verbatim
        spanned = doctor_markdown([("g", finding._replace(path="/w/##[add-mask]x/d"))], "warn", [], [])
        assert "##[" not in spanned and "##\\x5badd-mask]x" in spanned
        blocks = [tok.content for tok in _tokens(report) if tok.type == "fence"]
        assert "\\x3a:error title=x::planted\n" in blocks[0] and "  \\x3a:add-mask::secret\n" in blocks[0]


#: What GitHub gives a meaning outside code, as its renderer finds it in text: mentions, references, emoji, math.
GITHUB_MEANING = r"(?<![A-Za-z0-9`])@[A-Za-z0-9]|#[0-9]|(?i:\bgh-[0-9])|:[a-z0-9_+-]+:|\$"


class TestGitHubMeaning:
    """Finding 10: attacker text in ``--report`` keeps no mention, reference, emoji or math (links, images and HTML
    were neutralised before)."""

    @pytest.mark.parametrize(
        "name",
        [
            "@octocat",
            "cc @org/team",
            "fixes #123",
            "GH-123",
            "gh-9",
            "nrwl/nx#1",
            ":tada: :+1:",
            "$x^2$",
            "$$\\sum$$",
            "a $ b $ c",
            "/w/node_modules/@nx/nx-linux-x64-gnu",
            "@@GH-1 #1#2",
            "`@x`",
            "\\@x",
            "price $5 at 12:30:45",
        ],
    )
    def test_text_keeps_no_github_meaning_and_shows_the_same_characters(self, name: str) -> None:
        import re

        from nxsock.core.terminal import printable

        tokens = _tokens(md_text(name))
        texts = [tok.content for tok in tokens if tok.type == "text"]
        assert not [t for t in texts if re.search(GITHUB_MEANING, t.replace("$", ""))], (md_text(name), texts)
        assert "$" not in md_text(name)  # a dollar is ``&#36;``, which no parser takes for a delimiter of math
        shown = "".join(tok.content for tok in tokens if tok.type in ("text", "code_inline"))
        assert shown == printable(name), md_text(name)
        assert not [tok for tok in tokens if tok.type in ("html_inline", "link_open", "image")]

    @pytest.mark.parametrize("name", ["@octocat", "#123", "GH-1", ":tada:", "$x$", "$$"])
    def test_a_code_span_holds_them_as_code(self, name: str) -> None:
        """GitHub reads nothing inside code; a code span's neighbours are the report's own words."""
        tokens = _tokens(f"Path: {md_code(name)} (x)")
        assert [tok.content for tok in tokens if tok.type == "code_inline"] == [name]
        assert not [tok.content for tok in tokens if tok.type == "text" and re.search(GITHUB_MEANING, tok.content)]


class TestMasks:
    """Finding 7: a mask hides the user, never a name Nx gives its own files."""

    @pytest.mark.parametrize("name", ["nx", "node", "sockets", "d"])
    def test_nx_s_own_names_are_never_masked(self, name: str) -> None:
        own = (
            "/tmp/.nx/1001/sockets/92e40815/nx-console.sock /tmp/.nx/1001/sockets/e2615158/d.sock "
            "/w/node_modules/@nx/nx-linux-x64-gnu/nx.linux-x64-gnu.node 24.0.6-008320a42b4e-nx.linux-x64-gnu.node "
            "/w/nx.json nx reset /w/.nx/workspace-data/d/daemon.log, nothing recreates /tmp/.nx: (/tmp/.nx). /w/x.node."
        )
        assert Masks((), (name,)).apply(own) == own

    @pytest.mark.parametrize("name", ["nx", "node", "ada", "a"])
    def test_the_users_name_is_masked_as_a_whole_part_of_a_path(self, name: str) -> None:
        masks = Masks((f"/home/{name}",), (name,))
        assert masks.apply(f"/tmp/{name}-work/{name}_x/{name}.bak") == "/tmp/<user>-work/<user>_x/<user>.bak"
        assert (
            masks.apply(f"by {name}, /tmp/{name}x/x{name}") == f"by {name}, /tmp/{name}x/x{name}"
        )  # prose and parts of words kept
        assert (
            masks.apply(f"/home/{name}/ws and /x/home/{name}-y /home/{name}2")
            == f"~/ws and /x/home/<user>-y /home/{name}2"
        )

    def test_root_stays_root_and_a_shared_home_is_not_a_home(self) -> None:
        from nxsock.core.environment import Environment, Variable

        env = Environment(
            "linux", 0, 0, (), "root", "/root", "/w", "/w", "cwd", None, None, {"HOME": Variable("/tmp", "environment")}
        )
        from types import SimpleNamespace

        masks = masks_for(t.cast(t.Any, SimpleNamespace(environment=env)), {"USER": "root", "HOME": "/tmp"})
        assert masks.apply("sudo chown -h root:root -- /tmp/.nx") == "sudo chown -h root:root -- /tmp/.nx"
