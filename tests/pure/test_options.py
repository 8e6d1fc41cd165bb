"""Every command that reads a workspace takes ``--workspace``; every option does what it says; bad values are one line.

Also the sentences a person reads: counts in the right number, no refusal
said twice, no heading over nothing, findings that state what was observed.
"""
from __future__ import annotations

import os
import subprocess
import sys
import typing as t

import pytest
from click.testing import CliRunner
from conftest import STICKY, environment, machine
from harness import PEER

from nxsock.app import cli
from nxsock.audit.checks_host import check_boot_persistence
from nxsock.audit.checks_sockets import check_daemon
from nxsock.audit.findings import Context
from nxsock.core.fsview import Entry
from nxsock.core.resolver import resolve
from nxsock.core.terminal import counted, printable, printable_lines
from nxsock.core.wording import plain_context
from nxsock.output.paths_json import fix_line

#: Each command that reads a workspace, with --json.
WORKSPACE_COMMANDS = [
    ["paths", "--json"], ["doctor", "--json"], ["reset", "--json", "--dry-run"], ["cache", "path", "--json"],
    ["cache", "list", "--json"], ["cache", "verify", "--json"], ["cache", "prune", "--json", "--dry-run"],
]


def nxsock(*args: str, env: t.Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The real entry point in a child process (click's CliRunner skips it)."""
    return subprocess.run([sys.executable, "-m", "nxsock", *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "NO_COLOR": "1", **(env or {})}, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("args", WORKSPACE_COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_every_command_that_reads_a_workspace_takes_workspace(args: list[str]) -> None:
    import click

    command = cli.get_command(click.Context(cli), args[0])
    assert command is not None
    if args[0] == "cache":
        command = command.commands[args[1]]  # type: ignore[attr-defined]
    assert any("--workspace" in p.opts for p in command.params), args
    reads_only = args[0] == "doctor" or args[:2] in (["cache", "path"], ["cache", "list"], ["cache", "verify"])
    if reads_only:  # the commands that only read take the options that stand in for this host's HOME, TMPDIR, Nx
        assert {"--home", "--tmpdir", "--nx-version"} <= {o for p in command.params for o in p.opts}, args


@pytest.mark.parametrize("args", WORKSPACE_COMMANDS, ids=lambda a: " ".join(a[:2]))
@pytest.mark.parametrize("value", ["/no/such/dir", "/etc/hostname", "bad\x1b]0;x\x07name"])
def test_a_bad_workspace_is_one_clean_line_and_exit_2(args: list[str], value: str) -> None:
    result = nxsock(*args, "--workspace", value)
    assert result.returncode == 2 and result.stdout == ""
    assert len(result.stderr.splitlines()) == 1, result.stderr
    line = result.stderr
    assert "invalid --workspace" in line and "Error" not in line and "FileNotFoundError" not in line
    assert "\x1b" not in line and "\x07" not in line
    assert ("no such file or directory" in line) or ("not a directory" in line)


def test_the_no_nx_hint_names_options_doctor_has() -> None:
    """The hint once said "pass --nx-version to doctor's paths"; it names options doctor itself takes."""
    from nxsock.audit.checks_levels import check_environment

    env = environment(nx_version=None)
    ctx = Context(
        resolve(env, machine()), machine(), plain_context(machine(), 1000, 1000, "/home/ada"), None, 0, (), ()
    )
    hint = next(f.hint for f in check_environment(ctx) if f.hint)
    assert hint is not None and "doctor's paths" not in hint
    import click

    doctor = cli.get_command(click.Context(cli), "doctor")
    assert doctor is not None
    options = {o for p in doctor.params for o in p.opts}
    assert "--workspace" in hint and "--nx-version" in hint and {"--workspace", "--nx-version"} <= options


def test_counts_take_the_right_number() -> None:
    assert [counted(n, "entry", "entries") for n in (0, 1, 2)] == ["0 entries", "1 entry", "2 entries"]


def test_printable_escapes_every_class_that_could_forge_output() -> None:
    assert printable("\x1b]8;;http://x\x07link\x1b]8;;\x07") == "\\x1b]8;;http://x\\x07link\\x1b]8;;\\x07"
    assert printable("a\nb\tc\x7f\x85\x9b") == "a\\x0ab\\x09c\\x7f\\x85\\x9b"
    assert printable("\u202eevil\u200b\u2028") == "\\u202eevil\\u200b\\u2028"
    assert printable("/tmp/caf\udce9") == "/tmp/caf\\xe9"
    assert printable("/home/o'brien/[bold]x[/bold] \\n é 日本") == "/home/o'brien/[bold]x[/bold] \\n é 日本"
    assert printable_lines("one\r\ntwo\x1b[2J\n\n") == ["one", "two\\x1b[2J"]


def test_a_refusal_met_five_times_is_printed_once(runner: CliRunner) -> None:
    """With no directory at all, the workspace fallback's refusal is the root's failure and every socket's."""
    peer = {"/tmp/.nx": Entry("dir", PEER, PEER, 0o1777), "/home/ada/.nx": Entry("dir", PEER, PEER, 0o700),
            "/home/ada/acme/.nx": Entry("dir", 1000, 1000, 0o755),
            "/home/ada/acme/.nx/workspace-data": Entry("dir", 1000, 1000, 0o755),
            "/home/ada/acme/.nx/workspace-data/d": Entry("dir", PEER, PEER, 0o700)}
    from nxsock.output import render

    resolution = resolve(environment(), machine(peer))
    assert resolution.socket_root.tier is None
    out = _captured(lambda: render.render_paths(resolution))
    fallback = "/home/ada/acme/.nx/workspace-data/d belongs to uid"
    assert out.count(fallback) == 1, out
    fixes = [line.strip() for line in out.splitlines() if line.strip().startswith("fix:")]
    assert len(fixes) == len(set(fixes)), out  # the refusal's remedy, whatever the policy makes it, once
    assert "lengths count" not in out  # no budget notes under a table of sockets that have no directory


def test_no_heading_is_printed_over_nothing() -> None:
    from nxsock.output import render

    resolution = resolve(environment(), machine({"/tmp/.nx": STICKY}))
    out = _captured(lambda: render.render_paths(resolution._replace(actions=())))
    assert "Nx would:" not in out
    lines = out.splitlines()
    for heading in ("A sandbox must allow:", "Nx would:"):
        if heading in lines:
            assert lines[lines.index(heading) + 1].startswith("  "), heading
    assert not any(line.rstrip().endswith(" in") for line in lines)


def test_a_plugin_path_over_budget_says_no_id_fits() -> None:
    from nxsock.output import render

    deep = "/home/ada/" + "d" * 70
    env = environment(workspace_root=deep, cwd=deep)
    resolution = resolve(env, machine({deep: Entry("dir", 1000, 1000, 0o755)}),)
    resolution = resolution._replace(sockets={**resolution.sockets,
                                              "plugin": resolution.sockets["plugin"]._replace(id_budget=-53)})
    out = _captured(lambda: render.render_paths(resolution))
    assert "-53" not in out and "no plugin id fits: without one the plugin socket's path is already 148 of 95" in out


def test_the_disabled_reason_is_shown_as_lines() -> None:
    view = machine(files={"/home/ada/acme/.nx/workspace-data/d/disabled": "Daemon failed\nsecond \x1b[2J line\n"})
    resolution = resolve(environment(), view)
    ctx = Context(resolution, view, plain_context(machine(), 1000, 1000, "/home/ada"), None, 0, (), ())
    marker = next(f for f in check_daemon(ctx) if f.id == "daemon-disabled")
    assert "\n" not in marker.message and marker.detail == ("Daemon failed", "second \x1b[2J line")
    from nxsock.output import render

    out = _captured(lambda: render.render_doctor([("Daemon", marker)], "warn"))
    assert "| Daemon failed" in out and "| second \\x1b[2J line" in out and "\\x0a" not in out


def test_the_last_daemon_error_is_the_error_not_the_more_information_line() -> None:
    log = ("Error: Daemon process terminated and closed the connection\n\nMessages from the log:\n"
           "[NX Daemon Server] - EACCES: permission denied, open '/x'\n\n\nMore information: /ws/.nx/d/daemon.log\n")
    view = machine(files={"/home/ada/acme/.nx/workspace-data/d/daemon-error.log": log})
    ctx = Context(
        resolve(environment(), view), view, plain_context(machine(), 1000, 1000, "/home/ada"), None, 0, (), ()
    )
    error = next(f for f in check_daemon(ctx) if f.id == "daemon-error")
    assert error.message == ("Last daemon error (refused by a permission or policy): "
                             "Error: Daemon process terminated and closed the connection")
    assert error.detail == ("[NX Daemon Server] - EACCES: permission denied, open '/x'",)


ROOT_CONTAINER = {"/tmp/.nx": Entry("dir", 0, 0, 0o1777)}
EXT4_TMP = "36 25 8:1 / / rw - ext4 /dev/sda1 rw\n"
AGEING = {"/usr/lib/tmpfiles.d/tmp.conf": "# ageing\nq /tmp 1777 root root 10d\n", "/proc/self/mountinfo": EXT4_TMP}


def _boot(extra: t.Mapping[str, Entry], files: t.Mapping[str, str]) -> list[t.Any]:
    dirs = {"/usr/lib/tmpfiles.d": Entry("dir", 0, 0, 0o755), **ROOT_CONTAINER, **extra}
    view = machine(dirs, files=files)
    ctx = Context(
        resolve(environment(), view), view, plain_context(machine(), 1000, 1000, "/home/ada"), None, 0, (), ()
    )
    return check_boot_persistence(ctx)


def test_without_systemd_an_ageing_rule_is_named_not_claimed_to_run() -> None:
    [finding] = _boot({}, AGEING)
    assert finding.severity == "info"
    assert "`q /tmp 1777 root root 10d` in /usr/lib/tmpfiles.d/tmp.conf" in finding.message
    assert (
        "systemd does not run here" in finding.message
        and "is cleared or aged by systemd-tmpfiles" not in finding.message
    )


def test_with_systemd_running_the_same_rule_is_a_warning_that_says_so() -> None:
    [finding] = _boot({"/run/systemd/system": Entry("dir", 0, 0, 0o755)}, AGEING)
    assert finding.severity == "warn" and finding.message.startswith(
        "systemd runs here and the tmpfiles.d rule `q /tmp"
    )
    assert fix_line(finding.advice) == "sudo nxsock provision --tmpfiles --install"


def test_a_tmpfs_tmp_is_said_to_be_a_tmpfs() -> None:
    [finding] = _boot({}, {"/proc/self/mountinfo": "40 25 0:35 / /tmp rw - tmpfs tmpfs rw\n"})
    assert finding.severity == "warn" and finding.message.startswith("/tmp is a tmpfs, emptied at every boot")


def _captured(draw: t.Callable[[], None]) -> str:
    """What a renderer prints to a pipe."""
    import contextlib
    import io

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        draw()
    return buffer.getvalue()


@pytest.mark.parametrize("args", [["paths", "--portable"], ["paths", "--json", "--portable"]])
def test_portable_without_a_sandbox_format_is_a_usage_error_not_ignored(runner: CliRunner, args: list[str]) -> None:
    result = runner.invoke(cli, [*args, "--platform", "linux"])
    assert result.exit_code == 2 and "--portable goes with a sandbox --format" in result.stderr


@pytest.mark.parametrize("args", [["paths", "--platform", "plan9\x1b]0;x\x07"], ["paths", "--uid", "-1"],
                                  ["doctor", "--only", "nope\x1b[2J"]])
def test_any_bad_value_is_one_escaped_line(args: list[str]) -> None:
    result = nxsock(*args)
    assert result.returncode == 2 and len(result.stderr.splitlines()) == 1, result.stderr
    assert result.stderr.startswith(f"nxsock {args[0]}: invalid {args[1]}: ") and "\x1b" not in result.stderr
    pointer = "nxsock doctor --list-checks lists them" if args[1] == "--only" else f"(see nxsock {args[0]} --help)"
    assert result.stderr.rstrip().endswith(pointer)


@pytest.mark.parametrize(("planted", "what"), [
    ({"/tmp/claude": Entry("link", 1002, 1002, 0o777)}, "a link owned by uid"),
    ({"/tmp/claude": Entry("dir", 1002, 1002, 0o777)}, "a directory owned by uid"),
])
def test_a_tmpdir_another_user_owns_is_a_warning_with_the_configuration_fix(
    planted: dict[str, Entry], what: str
) -> None:
    """Found by the red team: after a peer's /tmp/claude race, the re-audit said nothing although TMPDIR names it."""
    from nxsock.audit.checks_levels import check_tmpdir
    from nxsock.core.wording import context_for

    view = machine(planted)
    resolution = resolve(environment({"TMPDIR": "/tmp/claude"}), view)
    ctx = Context(resolution, view, context_for(resolution, view), None, 0, (), ())
    [finding] = check_tmpdir(ctx)
    assert finding.severity == "warn" and finding.path == "/tmp/claude" and f"{what} 1002" in finding.message
    assert fix_line(finding.advice) == "unset TMPDIR" and "/tmp/claude is uid 1002's" in (finding.hint or "")
    assert "Node's temporary files go there" in finding.message  # 24.0.6 keeps nothing of its own there


def test_a_tmp_beneath_another_users_directory_is_named_by_that_level() -> None:
    from nxsock.audit.checks_levels import check_tmpdir
    from nxsock.core.wording import context_for

    view = machine({"/tmp/shared": Entry("dir", 1002, 1002, 0o755), "/tmp/shared/me": Entry("dir", 1000, 1000, 0o700)})
    resolution = resolve(environment({"TMP": "/tmp/shared/me/"}), view)
    [finding] = check_tmpdir(Context(resolution, view, context_for(resolution, view), None, 0, (), ()))
    assert finding.message.startswith("TMP names /tmp/shared/me, beneath /tmp/shared, a directory owned by uid 1002")
    assert fix_line(finding.advice) == "unset TMP"


@pytest.mark.parametrize("whose", ["yours", "root's"])
def test_a_tmpdir_of_yours_or_roots_is_no_finding(whose: str) -> None:
    from nxsock.audit.checks_levels import check_tmpdir
    from nxsock.core.wording import context_for

    owner = environment().uid if whose == "yours" else 0
    view = machine({"/tmp/claude": Entry("dir", owner, owner, 0o700)})
    resolution = resolve(environment({"TMPDIR": "/tmp/claude"}), view)
    assert check_tmpdir(Context(resolution, view, context_for(resolution, view), None, 0, (), ())) == []


def test_a_healthy_doctor_is_its_verdict_and_a_summary_and_a_broken_one_leads_with_its_error() -> None:
    """Issue 25: a person needs about three lines; the first error and its fix come first, each fix once."""
    from nxsock.audit.findings import Finding
    from nxsock.core.remedy import Chown, Remedy, Unset
    from nxsock.core.wording import Advice
    from nxsock.output import render

    healthy = [("Environment", Finding("environment", "info", None, "Nx 24.0.6, current layout (native).")),
               ("Outcome", Finding("outcome", "ok", None, "Nx uses /tmp/.nx/1000/sockets (shared).")),
               ("Daemon", Finding("daemon-enabled", "info", None, "The daemon is on."))]
    out = _captured(lambda: render.render_doctor(healthy, "ok")).splitlines()
    assert out[0] == "✓ Nx works here. Nx uses /tmp/.nx/1000/sockets (shared)." and len(out) <= 6, out
    fix = Advice(Remedy((Chown("/tmp/.nx", owner=0, group=0, needs_root=True),), ""), None)
    unset = Advice(Remedy((Unset(variable="NX_SOCKET_DIR"),), ""), None)
    broken = [
        *healthy,
        ("Outcome", Finding("configuration", "error", None, "NX_SOCKET_DIR is refused.", unset)),
        *[
            (g, Finding(i, "warn", "/tmp/.nx", f"{i}: a peer's /tmp/.nx", fix))
            for g, i in (("Shared container", "container"), ("Native cache", "native-cache"))
        ],
    ]
    out = _captured(lambda: render.render_doctor(broken, "error")).splitlines()
    assert out[0].startswith("✗ Nx fails here: NX_SOCKET_DIR is refused.") and "fix:  unset NX_SOCKET_DIR" in out[1], (
        out
    )
    # the two findings it fixes, under one command
    assert sum("sudo chown -h root:root -- /tmp/.nx" in line for line in out) == 1, out
