"""``doctor --fix``'s plan, read from in-memory machines: what it would apply, in which order, and what it leaves to
you (the acting is ``tests/system/test_fix.py``'s, the real Nx after it ``tests/oracle/test_remedies_real.py``'s)."""
from __future__ import annotations

import subprocess
import sys
import typing as t

import pytest

from nxsock.audit.findings import Finding
from nxsock.audit.repair import NEEDS_ROOT, SHELL, Applied, make_plan, verdicts
from nxsock.core.remedy import Chmod, NxsockCommand, Remedy, Remove, RunNxsock, Step, Unset
from nxsock.core.wording import Advice


def advised(*steps: Step) -> Advice:
    """Advice that runs *steps* (taken as vetted: these machines are made up)."""
    return Advice(Remedy(steps, ""), None)


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "nxsock", *args], capture_output=True, text=True, stdin=subprocess.DEVNULL
    )


class TestPlan:
    def test_only_remedies_nxsock_can_do_itself_without_root_are_applied_and_the_rest_is_listed_with_why(self) -> None:
        """A sudo remedy and a shell line go to the user with the reason; a file removal is applied; one remedy once."""
        remove = Finding(
            "daemon-disabled",
            "warn",
            "/w/d/disabled",
            "disabled",
            advised(Remove("/w/d/disabled")),
        )
        again = remove._replace(id="other", message="same fix")
        root = Finding("container", "warn", "/tmp/.nx", "peer's", advised(Remove("/tmp/.nx", needs_root=True)))
        shell = Finding("configuration", "error", "/tmp", "bad", advised(Unset(variable="NX_SOCKET_DIR")))
        fine = Finding("outcome", "ok", "/x", "fine")
        bare = Finding("sockets", "error", "/s", "policy refuses", Advice(None, "No command: …"))
        plan = make_plan([remove, root, shell, again, fine, bare])
        assert [i.command for i in plan.apply] == ["rm -- /w/d/disabled"]
        assert [f.id for f in plan.apply[0].findings] == ["daemon-disabled", "other"]
        assert [(i.command, i.why) for i in plan.for_you] == [
            ("sudo rm -- /tmp/.nx", NEEDS_ROOT),
            ("unset NX_SOCKET_DIR", SHELL),
        ]
        assert plan.without_command == (bare,)

    def test_a_remedy_whose_finding_is_still_there_after_the_re_audit_is_not_fixed(self) -> None:
        """The re-audit decides: the same id and path (without a path, the same remedy) still a problem is not fixed."""
        gone = Finding(
            "daemon-disabled",
            "warn",
            "/w/d/disabled",
            "disabled",
            advised(Remove("/w/d/disabled")),
        )
        stays = Finding("leftovers", "warn", None, "3 dead socket directories of yours.",
                        advised(RunNxsock(NxsockCommand.RESET)))
        plan = make_plan([gone, stays])
        done = [Applied(item, (), "done") for item in plan.apply]
        judged = verdicts(done, plan, [stays._replace(message="1 dead socket directory of yours.")])
        assert [(j.item.command, j.outcome) for j in judged] == [
            ("rm -- /w/d/disabled", "fixed"),
            ("nxsock reset", "not-fixed"),
        ]
        assert "still finds" in (judged[1].reason or "")


class TestUsage:
    @pytest.mark.parametrize(
        "args",
        [
            ["--yes"],
            ["--dry-run"],
            ["--no-redact"],
            ["--report", "--json"],
            ["--report", "--format", "github"],
            ["--format", "github", "--json"],
            ["--fix", "--report"],
            ["--fix", "--format", "github"],
            ["--fix", "--nx-version", "24.0.6"],
            ["--fix", "--explain", "EACCES"],
            ["--fix", "--user", "0"],
            ["--fix", "--home", "/"],
        ],
    )
    def test_options_that_do_not_go_together_are_a_usage_error(self, args: list[str]) -> None:
        result = run("doctor", *args)
        assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
        assert result.stdout == ""


class TestALongPlanIsSummarised:
    """3,000 dead per-run directories, each with a FIFO where Nx binds a socket and a daemon socket left ``0755``: the
    plan interleaves a ``chmod`` and an ``rm`` per directory; the human plan is each kind once, with its count."""

    @staticmethod
    def plan() -> t.Any:
        findings = []
        for n in range(3000):
            run = f"/tmp/.nx/1000/sockets/{n:020x}"
            findings.append(
                Finding(
                    "sockets",
                    "warn",
                    f"{run}/d.sock",
                    f"{run}/d.sock has mode 0755.",
                    advised(Chmod(f"{run}/d.sock", mode=0o600)),
                )
            )
            findings.append(
                Finding(
                    "sockets",
                    "warn",
                    f"{run}/p.sock",
                    f"{run}/p.sock is a fifo, not a socket.",
                    advised(Remove(f"{run}/p.sock")),
                )
            )
        return make_plan(findings)

    def test_the_human_plan_is_a_few_lines_that_count_each_kind(self, capsys: pytest.CaptureFixture[str]) -> None:
        from nxsock.output.render import render_fix_plan

        plan = self.plan()
        assert len(plan.apply) == 6000
        render_fix_plan(plan, dry_run=True)
        out = capsys.readouterr().out
        assert len(out.splitlines()) <= 10, out[:3000]
        assert "1, 3, … 5999. chmod 0600 -- /tmp/.nx/1000/sockets/<each of 3,000>/d.sock" in out, out
        assert "2, 4, … 6000. rm -- /tmp/.nx/1000/sockets/<each of 3,000>/p.sock" in out, out
        assert "(and 2,999 more)" in out and "--json" in out

    def test_the_outcome_counts_each_kind_and_says_why_once(self, capsys: pytest.CaptureFixture[str]) -> None:
        from nxsock.audit.repair import StepResult
        from nxsock.output.render import render_fix_outcome

        plan = self.plan()
        applied = [
            Applied(
                item,
                (StepResult(item.steps[0], "done"),),
                "done" if n % 2 else "failed",
                None if n % 2 else f"reason {n}",
            )
            for n, item in enumerate(plan.apply)
        ]
        render_fix_outcome(applied, [], "ok", interrupted=False)
        out = capsys.readouterr().out
        assert len(out.splitlines()) <= 10, out[:3000]
        assert "reason 0 (the first of 3,000 reasons; --json has each)" in out, out
