"""``--explain``'s kinds as one table: each row a pattern with its cause, checks and remedy builder; and the kinds
added with it (Windows pastes, the default directory demoted under ``--verbose``, the shared socket directory's
wording)."""
from __future__ import annotations

import typing as t

import pytest
from conftest import environment, machine

from nxsock.audit.explain import _KINDS, _REMEDIES, WRAPPERS, Kind, Message, explain, general_advice, general_remedy
from nxsock.core.remedy import Remedy, Withheld
from nxsock.core.resolver import resolve
from nxsock.core.wording import SHARED_SOCKET_DIR_UNSET, Advice, RemedyContext, context_for


def remedies() -> RemedyContext:
    """Ada (uid 1000) in /home/ada/acme, as tests/pure/test_explain.py builds her."""
    view = machine({}, {})
    return context_for(resolve(environment({}), view), view)


def general() -> t.Callable[[Message], Advice]:
    ctx = remedies()
    return lambda message: general_advice(message, {}, "linux", ctx)


class TestOneRowPerKind:

    def test_every_row_of_a_kind_shares_its_remedy_builder_and_checks(self) -> None:
        by_name: dict[str, list[Kind]] = {}
        for kind in _KINDS:
            by_name.setdefault(kind.name, []).append(kind)
        for name, rows in by_name.items():
            assert len({id(row.remedy) for row in rows}) == 1, name
            assert len({row.checks for row in rows}) == 1, name
        assert set(_REMEDIES) == set(by_name) and WRAPPERS <= set(by_name)

    @pytest.mark.parametrize("name", sorted({kind.name for kind in _KINDS}))
    def test_every_kinds_builder_answers_with_values_the_policy_vets(self, name: str) -> None:
        """A kind's builder, given a bare message of its kind, returns remedies or reasons: never text, never
        nothing."""
        for errno, path in ((None, None), ("EACCES", "/home/ada/acme/.nx/workspace-data/d"), ("ENOENT", "/tmp/x")):
            message = Message(name, errno, path, "", (), 0, 0)
            answers = general_remedy(message, {}, "linux", remedies())
            assert answers and all(isinstance(a, (Remedy, Withheld)) for a in answers)

    def test_a_row_is_all_it_takes(self) -> None:
        """The table is the only place a kind is declared: what explain() reports is a row's name, cause and checks."""
        [message] = explain("Nx version changed. Please restart your command.").messages
        row = next(k for k in _KINDS if k.name == message.matched)
        assert (message.cause, message.checks) == (row.cause, row.checks)


#: What Nx prints on Windows: its daemon's socket is a named pipe, its paths drive letters.
WINDOWS = {
    "pipe-enoent": "Error: connect ENOENT \\\\.\\pipe\\nx\\C:\\Users\\ada\\acme\\.nx\\workspace-data\\d\\d.sock\n",
    "pipe-eacces": "Error: connect EACCES \\\\.\\pipe\\nx\\C:\\Users\\ada\\acme\\d.sock. "
                   "Continuing without the daemon.\n",
    "mkdir-eperm": "Error: EPERM: operation not permitted, mkdir 'C:\\Users\\ada\\acme\\.nx\\workspace-data'\n",
}


class TestWindowsPastes:

    @pytest.mark.parametrize(
        ("case", "kind", "errno", "path"),
        [
            (
                "pipe-enoent",
                "socket-errno",
                "ENOENT",
                "\\\\.\\pipe\\nx\\C:\\Users\\ada\\acme\\.nx\\workspace-data\\d\\d.sock",
            ),
            ("pipe-eacces", "socket-errno", "EACCES", "\\\\.\\pipe\\nx\\C:\\Users\\ada\\acme\\d.sock"),
            ("mkdir-eperm", "fs-errno", "EPERM", "C:\\Users\\ada\\acme\\.nx\\workspace-data"),
        ],
    )
    def test_the_path_or_pipe_is_read_as_nx_printed_it(self, case: str, kind: str, errno: str, path: str) -> None:
        [message] = explain(WINDOWS[case]).messages
        assert (message.matched, message.errno, message.path) == (kind, errno, path)

    def test_a_pipe_nothing_serves_gets_the_daemon_started_which_needs_no_judging_here(self) -> None:
        [message] = explain(WINDOWS["pipe-enoent"]).messages
        assert general()(message).command == "nx daemon --start"

    @pytest.mark.parametrize("case", ["pipe-eacces", "mkdir-eperm"])
    def test_a_refusal_there_gets_no_command_here_and_says_why(self, case: str) -> None:
        [message] = explain(WINDOWS[case]).messages
        advice = general()(message)
        assert advice.command is None
        hint = advice.hint or ""
        assert hint.startswith("No safe command from this machine") and message.path in hint and "Windows" in hint
        assert "sudo" not in hint and "rm " not in hint  # nothing about this machine's files


class TestDefaultDirectoryDemoted:
    """24.0.6 under --verbose: "Nx could not use the default socket directory …. Using … instead. <why>."."""

    TEXT = ("Nx could not use the default socket directory /tmp/.nx/1000/sockets. Using /home/ada/.nx/sockets/1f4e39f3/"
            "p21-0-a0475ca9.sock instead. /tmp/.nx could not be created ({errno}).\n")

    def test_a_read_only_tmp_gets_a_socket_directory_of_your_own_never_install_d(self) -> None:
        [message] = explain(self.TEXT.format(errno="EROFS")).messages
        assert (message.matched, message.errno, message.path) == (
            "default-dir-demoted",
            "EROFS",
            "/tmp/.nx/1000/sockets",
        )
        assert "read-only" in message.cause
        advice = general()(message)
        assert (advice.command or "").startswith("export NX_SOCKET_DIR=") and "install" not in (advice.command or "")

    def test_another_refusal_is_left_to_the_machine(self) -> None:
        [message] = explain(self.TEXT.format(errno="EACCES")).messages
        assert general()(message).command is None

    def test_without_a_reason_it_is_still_read(self) -> None:
        text = "Nx could not use the default socket directory /tmp/.nx/1000/sockets. Using /home/ada/x.sock instead.\n"
        [message] = explain(text).messages
        assert (message.matched, message.errno) == ("default-dir-demoted", None) and message.cause


class TestSharedSocketDirectoryWording:
    """The note matches the command it is shown with: only ``unset`` shown, nothing is said to be stopped."""

    TEXT = ("The Nx Daemon for '/home/ada/acme' received a message from a different workspace ('/home/ada/other') "
            "and refused to process it.")

    def test_the_unset_alone_says_nothing_is_stopped_or_removed(self) -> None:
        [message] = explain(self.TEXT).messages
        advice = general()(message)
        assert advice.command == "unset NX_SOCKET_DIR && unset NX_DAEMON_SOCKET_DIR"
        assert advice.hint == SHARED_SOCKET_DIR_UNSET.format(other="/home/ada/acme")
        assert "stopped" not in (advice.hint or "") and "removed" not in (advice.hint or "")

    def test_every_alternative_says_only_what_its_own_steps_do(self) -> None:
        [message] = explain(self.TEXT).messages
        answers = t.cast(tuple[Remedy, ...], general_remedy(message, {}, "linux", remedies()))
        for remedy in answers:
            verbs = {step.verb for step in remedy.steps}
            assert ("is stopped" in remedy.changes) == ("stop-process" in verbs)
            assert ("removed" in remedy.changes) == ("remove" in verbs)


class TestRealCapturesOfTheDaemonsMessages:
    """The captures tests/oracle/test_explain.py proves, read here: each message its kind, each answer what fits it."""

    @staticmethod
    def text(file: str) -> str:
        from pathlib import Path

        return (Path(__file__).resolve().parents[1] / "corpus" / file).read_text()

    def test_the_native_watchers_limit_is_the_inotify_limit_with_both_sysctl_lines(self) -> None:
        messages = explain(self.text("24.0.6/inotify-limit--client-log.txt")).messages
        [limit] = [m for m in messages if m.matched == "inotify-limit"]
        assert limit.errno == "ENOSPC"
        hint = general()(limit).hint or ""
        assert "sudo sysctl fs.inotify.max_user_watches=" in hint and "sysctl user.max_inotify_watches=" in hint

    @pytest.mark.parametrize(("file", "kind", "command"), [
        ("24.0.6/plugin-host-busy--run.txt", "plugin-worker-timeout", "export NX_PLUGIN_NO_TIMEOUTS=true"),
        ("24.0.6/plugin-worker-hangs--run.txt", "plugin-worker-never-listened", "export NX_ISOLATE_PLUGINS=false"),
    ])
    def test_each_plugin_worker_message_gets_the_variable_that_helps_it(
        self, file: str, kind: str, command: str
    ) -> None:
        messages = [m for m in explain(self.text(file)).messages if m.matched == kind]
        assert messages and {general()(m).command for m in messages} == {command}

    def test_a_read_only_tmp_under_verbose_is_read_and_never_gets_install_d(self) -> None:
        messages = explain(self.text("24.0.6/tmp-read-only--run-verbose.txt")).messages
        assert messages and {(m.matched, m.errno) for m in messages} == {("default-dir-demoted", "EROFS")}
        assert all("install" not in (general()(m).command or "") for m in messages)


class TestVersionChangedNote:
    """Nx's "Nx version changed" names no version: the note names what this machine shows, and what to run again."""

    def test_each_case_names_the_installed_version_and_the_daemons(self) -> None:
        from nxsock.core.wording import VERSION_CHANGED, version_changed_note

        assert version_changed_note(None, "24.0.5") == VERSION_CHANGED  # nothing installed to name
        same = version_changed_note("24.0.5", "24.0.5")
        assert "already runs it" in same and "ran another version" in same and "runs Nx 24.0.5" in same
        other = version_changed_note("24.0.6", "24.0.5")
        assert "daemon runs Nx 24.0.5" in other and "runs Nx 24.0.6" in other and "another version" not in other
        assert "no daemon runs" in version_changed_note("24.0.6", None)
