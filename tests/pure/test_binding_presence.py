"""The binding this host needs: which ``@nx/nx-<triple>`` Nx loads, what is there instead, what the lockfile lists.

Pinned on in-memory node_modules layouts (an install that skipped optional
dependencies, a tree copied from macOS, the gnu package on musl, a tree
installed from Windows under WSL); the real Nx failing and the remedy making
it work are in ``tests/oracle/test_binding_missing.py``.
"""
from __future__ import annotations

import typing as t

import pytest
from conftest import USER, environment, machine

from nxsock.audit import binding_cache
from nxsock.audit.binding_presence import binding_presence
from nxsock.audit.doctor import CHECKS, FINDING_IDS, gather, run_checks
from nxsock.audit.explain import answer_all, explain, general_advice
from nxsock.audit.repair import INSTALLS, make_plan
from nxsock.core.fsview import Entry, MemoryView
from nxsock.core.remedy import InstallPackage, PackageManager, Remedy, render
from nxsock.core.resolver import resolve
from nxsock.core.wording import context_for
from nxsock.output.paths_json import fix_line

WS = "/home/ada/acme"
NM = f"{WS}/node_modules"


def _file() -> Entry:
    return Entry("file", USER, USER, 0o644, size=1000)


def _dir() -> Entry:
    return Entry("dir", USER, USER, 0o755)


def _tree(*packages: str, lockfile: tuple[str, str] | None = None) -> MemoryView:
    """A workspace with node_modules/nx and the ``@nx/nx-*`` *packages*, each with its binding file."""
    extra = {f"{NM}/nx": _dir(), f"{NM}/nx/package.json": _file(), f"{NM}/@nx": _dir()}
    for triple in packages:
        extra[f"{NM}/@nx/nx-{triple}"] = _dir()
        extra[f"{NM}/@nx/nx-{triple}/nx.{triple}.node"] = _file()
    files = {f"{WS}/{lockfile[0]}": lockfile[1]} if lockfile else {}
    for path in files:
        extra[path] = _file()
    return machine(extra, files=files)


def _findings(view: MemoryView, triple: str, monkeypatch: pytest.MonkeyPatch, **fields: t.Any) -> list[t.Any]:
    monkeypatch.setattr(binding_cache, "host_triple", lambda: triple)
    return [f for _, f in run_checks(gather(resolve(environment(**fields), view), view), ("binding",))]


def test_the_binding_for_this_host_installed_is_no_finding(monkeypatch: pytest.MonkeyPatch) -> None:
    view = _tree("linux-x64-gnu")
    assert binding_presence(environment(), view, "linux-x64-gnu", True).state == "ok"
    assert _findings(view, "linux-x64-gnu", monkeypatch) == []


def test_no_nx_installed_is_not_a_missing_binding(monkeypatch: pytest.MonkeyPatch) -> None:
    assert binding_presence(environment(), machine(), "linux-x64-gnu", False).state == "no-nx"
    assert _findings(machine(), "linux-x64-gnu", monkeypatch) == []


def test_optional_dependencies_skipped_is_an_error_with_the_npm_command(monkeypatch: pytest.MonkeyPatch) -> None:
    view = _tree(lockfile=("package-lock.json", '"node_modules/@nx/nx-linux-x64-gnu": {"optional": true}'))
    (finding,) = _findings(view, "linux-x64-gnu", monkeypatch)
    assert finding.id == "binding" and finding.severity == "error"
    assert "@nx/nx-linux-x64-gnu" in finding.message and "WorkspaceContext is not a constructor" in finding.message
    assert "package-lock.json lists it" in finding.message and "skipped optional dependencies" in finding.message
    assert fix_line(finding.advice) == "npm install --no-save @nx/nx-linux-x64-gnu@24.0.6"
    assert [s.verb for s in finding.steps] == ["install-package"]


def test_a_tree_copied_from_macos_names_what_is_there_instead(monkeypatch: pytest.MonkeyPatch) -> None:
    view = _tree("darwin-arm64")
    presence = binding_presence(environment(), view, "linux-x64-gnu", False)
    assert (presence.state, presence.others, presence.lockfile, presence.manager) == (
        "missing",
        ("@nx/nx-darwin-arm64",),
        None,
        "npm",
    )
    (finding,) = _findings(view, "linux-x64-gnu", monkeypatch)
    assert "@nx/nx-darwin-arm64" in finding.message and "another host" in finding.message


def test_the_gnu_package_on_musl_is_named_as_the_wrong_c_library(monkeypatch: pytest.MonkeyPatch) -> None:
    view = _tree("linux-x64-gnu", lockfile=("pnpm-lock.yaml", "/@nx/nx-linux-x64-gnu@24.0.6:\n"))
    (finding,) = _findings(view, "linux-x64-musl", monkeypatch)
    assert "@nx/nx-linux-x64-musl" in finding.message and "musl" in finding.message
    assert "the glibc build" in finding.message and "pnpm-lock.yaml does not list it" in finding.message
    assert fix_line(finding.advice) == "pnpm install --force"


def test_a_windows_tree_under_wsl_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    (finding,) = _findings(_tree("win32-x64-msvc", lockfile=("bun.lock", "")), "linux-x64-gnu", monkeypatch)
    assert "installed from Windows" in finding.message and fix_line(finding.advice) == "bun install --force"


def test_yarn_berry_gets_words_not_a_command_that_would_not_restore_it(monkeypatch: pytest.MonkeyPatch) -> None:
    (finding,) = _findings(_tree(lockfile=("yarn.lock", "__metadata:\n  version: 8\n")), "linux-x64-gnu", monkeypatch)
    assert fix_line(finding.advice) is None and "supportedArchitectures" in (finding.hint or "")
    (classic,) = _findings(_tree(lockfile=("yarn.lock", "# yarn lockfile v1\n")), "linux-x64-gnu", monkeypatch)
    assert fix_line(classic.advice) == "yarn install --force"


def test_doctor_fix_never_runs_the_package_manager(monkeypatch: pytest.MonkeyPatch) -> None:
    (finding,) = _findings(_tree(), "linux-x64-gnu", monkeypatch)
    plan = make_plan([finding])
    assert plan.apply == () and [item.why for item in plan.for_you] == [INSTALLS]


def test_the_policy_names_only_a_known_manager_and_an_nx_binding_at_an_exact_version() -> None:
    view = _tree()
    ctx = context_for(resolve(environment(), view), view)
    good = ctx.offer(Remedy((InstallPackage(PackageManager("npm"), "@nx/nx-linux-x64-gnu@24.0.6"),), "x"))
    assert good.command == "npm install --no-save @nx/nx-linux-x64-gnu@24.0.6"
    for value in ["left-pad@1.0.0", "@nx/nx-linux-x64-gnu@latest", "@nx/nx-linux-x64-gnu@24.0.6; rm -rf ~", ""]:
        refused = ctx.offer(Remedy((InstallPackage(PackageManager.NPM, value),), "x"))
        assert refused.command is None, value
    with pytest.raises(ValueError):  # a manager nxsock does not know (npx) is no value of the type at all
        PackageManager("npx")


def test_a_workspace_beneath_another_users_level_gets_no_install_command() -> None:
    view = machine({f"{WS}/package.json": _file(), "/home/ada/acme": Entry("dir", 1001, 1001, 0o755)})
    ctx = context_for(resolve(environment(), view), view)
    verdict = ctx.offer(Remedy((InstallPackage(PackageManager("npm"), "@nx/nx-linux-x64-gnu@24.0.6"),), "x"))
    assert verdict.command is None and "package manager would run code beneath another user's level" in (
        verdict.hint or ""
    )


def test_the_check_is_registered_with_its_group() -> None:
    assert CHECKS["binding"][0] == "Binding" and FINDING_IDS["binding"] == ("binding",)
    assert (
        render(Remedy((InstallPackage(PackageManager("pnpm"), "@nx/nx-linux-x64-gnu@24.0.6"),), ""))
        == "pnpm install --force"
    )


@pytest.mark.parametrize(
    ("text", "matched"),
    [
        (
            "TypeError: WorkspaceContext is not a constructor\n    at setupWorkspaceContext (x.js:49:11)",
            "native-binding-broken",
        ),
        (
            " NX   Missing Platform Dependency\n\nThe Nx CLI could not find or load the native binary",
            "missing-platform-dependency",
        ),
        ("Error: Cannot find module '@nx/nx-linux-x64-gnu'\nRequire stack:", "binding-module-missing"),
        (
            "Error: Cannot find native binding. npm has a bug related to optional dependencies",
            "missing-platform-dependency",
        ),
    ],
)
def test_explain_names_the_missing_binding_seen_here_and_never_skips_the_cache_for_it(
        text: str, matched: str, monkeypatch: pytest.MonkeyPatch) -> None:
    view = _tree("darwin-arm64")
    monkeypatch.setattr(binding_cache, "host_triple", lambda: "linux-x64-gnu")
    context = gather(resolve(environment(), view), view)
    findings = [f for _, f in run_checks(context)]
    messages = explain(text).messages
    assert [m.matched for m in messages] == [matched]
    (answer,) = answer_all(messages, findings, FINDING_IDS, lambda m: general_advice(m, {}, "linux", context.remedies))
    assert answer.source == "this machine" and answer.finding == "binding"
    assert fix_line(answer.advice) == "npm install --no-save @nx/nx-linux-x64-gnu@24.0.6"
    assert answer.message.cause.startswith("On this machine: Nx needs @nx/nx-linux-x64-gnu")
    assert "cut-short" not in answer.message.cause
    if (
        matched != "native-binding-broken"
    ):  # with nothing seen here, a missing package is never answered by skipping the cache
        general = general_advice(messages[0], {}, "linux", context_for(resolve(environment(), machine()), machine()))
        assert general.command is None and "NX_SKIP_NATIVE_FILE_CACHE" not in (general.command or "")


def test_a_flood_of_other_packages_is_named_five_and_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    (finding,) = _findings(_tree(*(f"p{i}" for i in range(7))), "linux-x64-gnu", monkeypatch)
    assert "@nx/nx-p4 and 2 more" in finding.message and "@nx/nx-p5" not in finding.message


def test_explain_names_a_noexec_cache_seen_here_as_the_cause_of_workspace_context() -> None:
    from nxsock.audit.findings import Finding
    from nxsock.core.remedy import Export
    from nxsock.core.wording import Advice

    noexec = Finding(
        "native-cache",
        "error",
        "/tmp/.nx/1000/native-cache",
        "/tmp/.nx/1000/native-cache lies on /tmp, mounted noexec: Nx 24.0.2 copies its binding "
        "there but cannot load it.",
        Advice(Remedy((Export(variable="NX_SKIP_NATIVE_FILE_CACHE", value="true"),), ""),
               "Nx then loads its binding in place."),
    )
    messages = explain("TypeError: WorkspaceContext is not a constructor").messages
    ctx = context_for(resolve(environment(), machine()), machine())
    (answer,) = answer_all(messages, [noexec], FINDING_IDS, lambda m: general_advice(m, {}, "linux", ctx))
    assert answer.finding == "native-cache" and fix_line(answer.advice) == "export NX_SKIP_NATIVE_FILE_CACHE=true"
    assert answer.message.cause.startswith("On this machine: ") and "mounted noexec" in answer.message.cause
