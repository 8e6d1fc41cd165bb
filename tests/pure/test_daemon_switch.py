"""The daemon verdict: Nx's ``DaemonClient.enabled()`` as each release decides, over in-memory machines.

The real client of every release, cell by cell, is in ``tests/oracle/test_daemon_switch.py``;
these pin the rule's corners (the exact strings, nx.json read with comments,
the release that stopped counting sandboxes) and what ``paths`` and ``doctor`` say.
"""
from __future__ import annotations

import typing as t

import pytest
from conftest import USER, environment, machine, mine

from nxsock.audit.doctor import gather, run_checks
from nxsock.core.daemon_switch import REASONS, JsoncError, ci_variable, decide, docker_evidence, parse_jsonc
from nxsock.core.daemon_switch import gather as gather_facts
from nxsock.core.environment import Variable
from nxsock.core.fsview import Entry
from nxsock.core.releases import KNOWN_RELEASES, rules_for
from nxsock.core.resolver import resolve
from nxsock.output.paths_json import fix_line, paths_document

WS = "/home/ada/acme"
DAEMON_DIR = f"{WS}/.nx/workspace-data/d"
FILE = Entry("file", USER, USER, 0o644)
ROOT_FILE = Entry("file", 0, 0, 0o755)


def verdict(variables: t.Mapping[str, str] = {}, *, version: str = "24.0.6", nx_json: str | None = "{}",
            extra: t.Mapping[str, Entry] = {}, files: t.Mapping[str, str] = {}, links: t.Mapping[str, str] = {},
            **fields: t.Any) -> tuple[bool, tuple[str, ...]]:
    entries = dict(extra)
    all_files = dict(files)
    if nx_json is not None:
        all_files[f"{WS}/nx.json"] = nx_json
    for path in all_files:
        entries.setdefault(path, FILE)
    view = machine(entries, links, files=all_files)
    if nx_json is None and f"{WS}/nx.json" not in extra:
        view._entries.pop(f"{WS}/nx.json")  # the fixture's machine always has one
    env = environment(variables, nx_version=version, **fields)
    found = decide(gather_facts(env, view, DAEMON_DIR), rules_for(version))
    return found.enabled, found.reasons


class TestStrings:
    """Nx compares exact strings: only NX_DAEMON=true overrides, CI=false beats every other CI variable."""

    @pytest.mark.parametrize(("variables", "found"), [
        ({}, None), ({"CI": "true"}, "CI"), ({"CI": "0"}, "CI"), ({"CI": ""}, None),
        ({"CI": "false", "GITHUB_ACTIONS": "true"}, None), ({"CI": "FALSE"}, "CI"),
        ({"GITHUB_ACTIONS": "true"}, "GITHUB_ACTIONS"), ({"GITHUB_ACTIONS": "1"}, None),
        ({"BUILD_ID": "42"}, "BUILD_ID"), ({"JENKINS_URL": "http://ci"}, "JENKINS_URL"), ({"BUILD_ID": ""}, None),
    ])
    def test_is_ci(self, variables: dict[str, str], found: str | None) -> None:
        assert ci_variable(variables.get) == found

    @pytest.mark.parametrize(("value", "on"), [("true", True), ("TRUE", False), ("1", False), ("yes", False)])
    def test_only_exactly_true_overrides_ci(self, value: str, on: bool) -> None:
        assert verdict({"CI": "true", "NX_DAEMON": value}) == ((True, ()) if on else (False, ("ci",)))

    @pytest.mark.parametrize("value", ["TRUE", "1", "0", "", "no"])
    def test_nx_daemon_other_than_false_turns_nothing_off(self, value: str) -> None:
        assert verdict({"NX_DAEMON": value}) == (True, ())
        assert verdict({"NX_DAEMON": value}, nx_json='{"useDaemonProcess": false}') == (True, ())

    def test_nx_daemon_false(self) -> None:
        assert verdict({"NX_DAEMON": "false"}) == (False, ("NX_DAEMON",))
        assert verdict({"NX_DAEMON": "false"}, nx_json='{"useDaemonProcess": true}') == (False, ("NX_DAEMON",))
        assert verdict({"NX_DAEMON": "false"}, nx_json='{"useDaemonProcess": false}') == (
            False,
            ("NX_DAEMON", "useDaemonProcess"),
        )
        # A setting Nx compares with none of true, false or undefined: NX_DAEMON=false does not count either.
        assert verdict({"NX_DAEMON": "false"}, nx_json='{"useDaemonProcess": "false"}') == (True, ())
        assert verdict({"NX_DAEMON": "false"}, nx_json='{"useDaemonProcess": null}') == (True, ())


class TestNxJson:
    def test_read_with_comments_and_trailing_commas(self) -> None:
        text = '// workspace\n{\n  /* off */ "useDaemonProcess": false, // here\n  "x": "/* kept */ // kept",\n}\n'
        assert parse_jsonc(text) == {"useDaemonProcess": False, "x": "/* kept */ // kept"}
        assert verdict(nx_json=text) == (False, ("useDaemonProcess",))
        assert verdict({"NX_DAEMON": "true"}, nx_json=text) == (True, ())

    @pytest.mark.parametrize("text", ["[,]", "{,}", '{"a": [1,,]}', '{"a": 1 /* never closed', "{'a': 1}"])
    def test_only_a_trailing_comma_after_a_value_is_forgiven(self, text: str) -> None:
        with pytest.raises(JsoncError):
            parse_jsonc(text)
        assert parse_jsonc('{"a": [1, 2 , ], "b": {"c": 1 ,\n},\n}') == {"a": [1, 2], "b": {"c": 1}}

    def test_unparsable_is_no_setting(self) -> None:
        assert verdict(nx_json='{"useDaemonProcess": false') == (True, ())
        assert verdict(nx_json="/* never closed {") == (True, ())

    def test_hostile_nx_json_is_no_setting_and_costs_little(self) -> None:
        import time

        for text in ("[" * 100_000 + "]" * 100_000, '{"useDaemonProcess": false, "x": "\\', "/*" * 300_000,
                     "//\n" * 300_000 + "{,}"):
            started = time.monotonic()
            assert verdict(nx_json=text) == (True, ()), text[:40]
            assert time.monotonic() - started < 20, text[:40]  # a hang guard: linear is milliseconds, quadratic hours

    def test_absent(self) -> None:
        assert verdict(nx_json=None) == (False, ("no-nx-json",))

    def test_a_directory_named_nx_json_is_there_with_no_settings(self) -> None:
        assert verdict(nx_json=None, extra={f"{WS}/nx.json": mine()}) == (True, ())

    def test_extends(self) -> None:
        base = {f"{WS}/base.json": '{"useDaemonProcess": false}'}
        assert verdict(nx_json='{"extends": "./base.json"}', files=base) == (False, ("useDaemonProcess",))
        assert verdict(nx_json='{"extends": "./base.json", "useDaemonProcess": true}', files=base) == (True, ())
        package = {f"{WS}/node_modules/@acme/nx-config/nx.json": '{"useDaemonProcess": false}'}
        assert verdict(nx_json='{"extends": "@acme/nx-config/nx.json"}', files=package) == (
            False,
            ("useDaemonProcess",),
        )
        # readNxJson throws on a base it cannot resolve, and the client keeps no nx.json at all
        assert verdict(nx_json='{"extends": "./nowhere.json", "useDaemonProcess": false}') == (True, ())


class TestHost:
    def test_docker_is_dockerenv_of_any_kind_else_cgroup(self) -> None:
        assert verdict(extra={"/.dockerenv": ROOT_FILE}) == (False, ("docker",))
        assert verdict(extra={"/.dockerenv": mine()}) == (False, ("docker",))
        assert verdict({"NX_DAEMON": "true"}, extra={"/.dockerenv": ROOT_FILE}) == (True, ())
        assert verdict(files={"/proc/self/cgroup": "0::/docker/abc\n"}) == (False, ("docker",))
        assert verdict(files={"/proc/self/cgroup": "0::/\n"}) == (True, ())
        # statSync follows a link: one to nothing is no /.dockerenv
        assert verdict(links={"/.dockerenv": "/nowhere"}) == (True, ())
        view = machine({"/.dockerenv": ROOT_FILE})
        assert docker_evidence(view) == "/.dockerenv"

    def test_the_disabled_marker(self) -> None:
        marker = f"{DAEMON_DIR}/disabled"
        assert verdict(files={marker: "reason"}) == (False, ("disabled-marker",))
        assert verdict({"NX_DAEMON": "true"}, files={marker: "reason"}) == (False, ("disabled-marker",))
        assert verdict(links={marker: "/nowhere"}) == (True, ())

    def test_version_mismatch(self) -> None:
        assert verdict(nx_version_source="--nx-version") == (False, ("version-mismatch",))  # nothing installed
        installed = {f"{WS}/node_modules/nx/package.json": '{"version": "24.0.6"}'}
        assert verdict(files=installed, nx_version_source="--nx-version") == (True, ())
        assert verdict(version="24.0.5", files=installed, nx_version_source="--nx-version") == (
            False,
            ("version-mismatch",),
        )
        hoisted = {"/home/ada/node_modules/nx/package.json": '{"version": "24.0.6"}'}
        assert verdict(files=hoisted, nx_version_source="--nx-version") == (True, ())

    def test_wasm(self) -> None:
        wasi = {f"{WS}/node_modules/@nx/nx-wasm32-wasi/package.json": "{}"}
        assert verdict({"NAPI_RS_FORCE_WASI": "1"}, files=wasi) == (False, ("wasm",))
        assert verdict({"NAPI_RS_FORCE_WASI": "1"}) == (True, ())


class TestReleases:
    @pytest.mark.parametrize("release", KNOWN_RELEASES)
    def test_sandboxes_count_in_23_1_1_to_23_1_3_only(self, release: str) -> None:
        old = release in ("23.1.1", "23.1.2", "23.1.3")
        for name in (
            "SANDBOX_RUNTIME",
            "GEMINI_SANDBOX",
            "CODEX_SANDBOX",
            "CODEX_SANDBOX_NETWORK_DISABLED",
            "CURSOR_SANDBOX",
        ):
            assert verdict({name: "1"}, version=release) == ((False, ("sandbox",)) if old else (True, ()))
            assert verdict({name: "1", "NX_DAEMON": "true"}, version=release) == (True, ())
        assert verdict({"SANDBOX_RUNTIME": ""}, version=release) == (True, ())

    def test_every_cause_is_listed_in_the_vocabulary_order(self) -> None:
        enabled, reasons = verdict(
            {"NX_DAEMON": "false", "CI": "1", "SANDBOX_RUNTIME": "1", "NAPI_RS_FORCE_WASI": "1"},
            version="23.1.2",
            nx_json=None,
            extra={"/.dockerenv": ROOT_FILE},
            files={f"{DAEMON_DIR}/disabled": "x", f"{WS}/node_modules/@nx/nx-wasm32-wasi/package.json": "{}"},
            nx_version_source="--nx-version",
        )
        assert not enabled and reasons == ("NX_DAEMON", "ci", "docker", "sandbox", "disabled-marker", "no-nx-json",
                                           "version-mismatch", "wasm")
        assert set(reasons) <= set(REASONS)


def _doctor(variables: t.Mapping[str, str] = {}, extra: t.Mapping[str, Entry] = {}, files: t.Mapping[str, str] = {},
            sandbox: str | None = None) -> list[t.Any]:
    view = machine(extra, files=files)
    for path in files:
        view._entries.setdefault(path, FILE)
    env = environment(variables)
    return [f for _, f in run_checks(gather(resolve(env, view), view, sandbox))]


class TestPathsAndDoctor:
    def test_paths_json_carries_the_verdict(self) -> None:
        view = machine({"/.dockerenv": ROOT_FILE})
        doc = paths_document(resolve(environment({"CI": "true"}), view), view)
        assert doc["daemon"] == {"enabled": False, "reasons": ["ci", "docker"]}
        view = machine()
        assert paths_document(resolve(environment(), view), view)["daemon"] == {"enabled": True, "reasons": []}

    def test_doctor_says_on(self) -> None:
        finding = next(f for f in _doctor() if f.id == "daemon-enabled")
        assert finding.severity == "info" and "uses its daemon" in finding.message
        assert fix_line(finding.advice) == "export NX_DAEMON=false"

    def test_doctor_says_when_nx_reads_no_setting_from_nx_json(self) -> None:
        view = machine(files={f"{WS}/nx.json": '{"useDaemonProcess": false'})
        found = [f for _, f in run_checks(gather(resolve(environment(), view), view))]
        finding = next(f for f in found if f.id == "daemon-enabled")
        assert "uses its daemon" in finding.message and "is not valid JSON, so Nx reads no settings" in finding.message

    def test_doctor_says_off_why_and_how(self) -> None:
        finding = next(f for f in _doctor({"CI": "true"}, {"/.dockerenv": ROOT_FILE}) if f.id == "daemon-enabled")
        assert (
            finding.severity == "info"
            and "CI says this is CI" in finding.message
            and "/.dockerenv exists" in finding.message
        )
        assert fix_line(finding.advice) == "export NX_DAEMON=true" and finding.steps

    def test_doctor_off_for_a_cause_no_variable_overrides(self) -> None:
        marker = f"{DAEMON_DIR}/disabled"
        finding = next(f for f in _doctor({"CI": "true"}, files={marker: "failed"}) if f.id == "daemon-enabled")
        assert fix_line(finding.advice) == "nxsock reset --daemon-marker && export NX_DAEMON=true", finding
        marker_finding = next(f for f in _doctor({"CI": "true"}, files={marker: "failed"}) if f.id == "daemon-disabled")
        assert (
            marker_finding.severity == "warn"
            and "Removing it alone does not turn the daemon on" in marker_finding.message
        )
        alone = next(f for f in _doctor(files={marker: "failed"}) if f.id == "daemon-disabled")
        assert alone.severity == "warn"

    def test_a_named_sandbox_is_no_warning_where_the_daemon_is_off_and_nx_daemon_false_is_not_advised_again(
        self,
    ) -> None:
        on = next(f for f in _doctor(sandbox="srt") if f.id == "sandbox-daemon")
        assert on.severity == "warn"
        off = next(f for f in _doctor({"NX_DAEMON": "false"}, sandbox="srt") if f.id == "sandbox-daemon")
        assert off.severity == "info" and "matters only to a running daemon" in off.message
        assert fix_line(off.advice) is None and "Run Nx there with NX_DAEMON=false" not in (off.hint or "")
        assert "NX_DAEMON=false is already set" in (off.hint or "")
        # off for another reason: a note, and the advice stays (the sandbox does not inherit a container)
        docker = next(f for f in _doctor({"CI": "true"}, sandbox="srt") if f.id == "sandbox-daemon")
        assert docker.severity == "info" and fix_line(docker.advice) == "nxsock paths --format srt"

    def test_a_stale_record_is_a_note_where_the_daemon_is_off(self) -> None:
        record = {
            f"{DAEMON_DIR}/server-process.json": '{"processId": 999999, "socketPath": '
                                                 '"/tmp/x/d.sock", "nxVersion": "24.0.2"}'
        }
        dirs = {f"{WS}/.nx": mine(), f"{WS}/.nx/workspace-data": mine(), DAEMON_DIR: mine()}
        on = [f for f in _doctor(extra=dirs, files=record) if f.id == "daemon-record"]
        off = [f for f in _doctor({"NX_DAEMON": "false"}, extra=dirs, files=record) if f.id == "daemon-record"]
        assert on and any(f.severity == "warn" for f in on)
        assert (
            off
            and all(f.severity != "warn" for f in off)
            and all("matters only to a running daemon" in f.message for f in off)
        )

    def test_the_source_of_nx_daemon_is_named(self) -> None:
        env = environment()._replace(variables={"HOME": Variable("/home/ada", "environment"),
                                                "NX_DAEMON": Variable("false", f"{WS}/.env")})
        view = machine()
        found = resolve(env, view).daemon
        assert found is not None and found.facts.nx_daemon_source == f"{WS}/.env"
