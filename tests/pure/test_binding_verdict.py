"""The binding verdict ``paths --json`` and ``doctor --json`` carry, and ``--explain`` on Node's dlopen errors.

The verdict is pinned on in-memory machines (a binding installed, missing, on a
``noexec`` mount, as each release loads it); the real Nx in those states is in
``tests/oracle/test_binding_missing.py`` and ``tests/oracle/test_binding_noexec.py``.
Node's texts below are what ``node`` 20 printed for the real
``nx.linux-x64-gnu.node`` of 24.0.6 required from a ``noexec`` tmpfs ``/tmp``
(its cached copy) and from a ``node_modules`` bind-mounted ``noexec``.  The
real Nx does not print them itself: it falls back to its WebAssembly binding,
which lacks ``WorkspaceContext`` (``tests/corpus/*/binding-*``); a tool that
requires the binding, or a stack a user pastes from one, does.
"""
from __future__ import annotations

import json
import subprocess
import sys
import typing as t

import pytest
from conftest import USER, environment, machine

from nxsock.audit.binding_presence import binding_verdict
from nxsock.audit.doctor import FINDING_IDS
from nxsock.audit.explain import answer_all, explain, general_advice
from nxsock.audit.findings import Finding
from nxsock.core.fsview import Entry, MemoryView
from nxsock.core.remedy import Export, Remedy
from nxsock.core.resolver import resolve
from nxsock.core.wording import Advice, context_for
from nxsock.output.paths_json import binding_json, fix_line, paths_document

WS = "/home/ada/acme"
NM = f"{WS}/node_modules"
GNU = "linux-x64-gnu"
BINDING = f"{NM}/@nx/nx-{GNU}/nx.{GNU}.node"

_STACK = """
    at Module._extensions..node (node:internal/modules/cjs/loader:1661:18)
    at Module.load (node:internal/modules/cjs/loader:1266:32)
    at Module._load (node:internal/modules/cjs/loader:1091:12)
    at Module.require (node:internal/modules/cjs/loader:1289:19)
    at require (node:internal/modules/helpers:182:18)
    at [eval]:1:1
    at runScriptInThisContext (node:internal/vm:209:10)
    at node:internal/process/execution:118:14
    at [eval]-wrapper:6:24
    at runScript (node:internal/process/execution:101:62) {
  code: 'ERR_DLOPEN_FAILED'
}

Node.js v20.20.2
"""
_HEAD = """node:internal/modules/cjs/loader:1661
  return process.dlopen(module, path.toNamespacedPath(filename));
                 ^

"""
CACHE_COPY = "/tmp/.nx/14001/native-cache/24.0.6-abcdef012345-nx.linux-x64-gnu.node"
IN_PLACE = "/var/cache/nxsock-tests/nx-24.0.6/node_modules/@nx/nx-linux-x64-gnu/nx.linux-x64-gnu.node"
#: Node's own error for the binding's cached copy on a noexec /tmp …
NOEXEC_CACHE_TEXT = f"{_HEAD}Error: {CACHE_COPY}: failed to map segment from shared object{_STACK}"
#: … and for the binding itself, in a node_modules mounted noexec.
NOEXEC_NODE_MODULES_TEXT = f"{_HEAD}Error: {IN_PLACE}: failed to map segment from shared object{_STACK}"


def _file(size: int = 1000) -> Entry:
    return Entry("file", USER, USER, 0o644, size=size)


def _dir() -> Entry:
    return Entry("dir", USER, USER, 0o755)


def _mountinfo(*noexec: str) -> str:
    lines = ["1 0 0:1 / / rw,relatime - ext4 /dev/vda rw"]
    lines += [f"{i} 1 0:{i} / {point} rw,nosuid,nodev,noexec - tmpfs tmpfs rw" for i, point in enumerate(noexec, 2)]
    return "\n".join(lines) + "\n"


def _machine(*packages: str, noexec: tuple[str, ...] = (), lockfile: tuple[str, str] | None = None) -> MemoryView:
    extra = {f"{NM}": _dir(), f"{NM}/nx": _dir(), f"{NM}/nx/package.json": _file(), f"{NM}/@nx": _dir()}
    for triple in packages:
        extra[f"{NM}/@nx/nx-{triple}"] = _dir()
        extra[f"{NM}/@nx/nx-{triple}/nx.{triple}.node"] = _file()
    files = {"/proc/self/mountinfo": _mountinfo(*noexec)}
    if lockfile:
        files[f"{WS}/{lockfile[0]}"] = lockfile[1]
        extra[f"{WS}/{lockfile[0]}"] = _file()
    extra["/proc/self/mountinfo"] = _file()
    return machine(extra, files=files)


def _verdict(view: MemoryView, version: str = "24.0.6", **variables: str) -> t.Any:
    resolution = resolve(environment(variables, nx_version=version), view)
    return binding_json(resolution, view)


class TestTheVerdict:

    def test_the_binding_installed_is_present_and_loaded_from_its_cache(self) -> None:
        verdict = _verdict(_machine(GNU))
        assert verdict["state"] == "ok" and verdict["present"] is True and verdict["loadable"] is True
        assert verdict["package"] == f"@nx/nx-{GNU}" and verdict["file"] == f"nx.{GNU}.node"
        assert verdict["path"] == BINDING and verdict["loads_from"] == "cache" and verdict["noexec"] == "ok"
        assert verdict["instead"] == [] and verdict["locked"] is None

    def test_a_missing_binding_is_not_loadable_and_names_what_is_there_instead_and_the_lockfile(self) -> None:
        lock = ("package-lock.json", '{"packages": {"node_modules/@nx/nx-linux-x64-gnu": {}}}')
        verdict = _verdict(_machine("linux-x64-musl", "darwin-arm64", lockfile=lock))
        assert verdict["state"] == "missing" and verdict["present"] is False and verdict["loadable"] is False
        assert verdict["instead"] == ["@nx/nx-darwin-arm64", "@nx/nx-linux-x64-musl"]
        assert (
            verdict["lockfile"] == "package-lock.json"
            and verdict["package_manager"] == "npm"
            and verdict["locked"] is True
        )
        assert verdict["path"] is None and verdict["loads_from"] is None and verdict["noexec"] is None

    def test_no_nx_installed_says_so_and_judges_nothing(self) -> None:
        verdict = _verdict(machine())
        assert verdict["state"] == "no-nx" and verdict["present"] is None and verdict["loadable"] is None

    @pytest.mark.parametrize(("release", "noexec", "loads_from", "loadable"), [
        ("24.0.2", "cache-noexec", "cache", False),  # its loader does not fall back: every command fails
        ("23.3.2", "cache-noexec", "cache", False),
        ("24.0.6", "cache-noexec-falls-back", "in-place", True),  # it catches ERR_DLOPEN_FAILED and loads in place
    ])
    def test_a_noexec_cache_is_judged_as_the_release_loads(self, release: str, noexec: str, loads_from: str,
                                                           loadable: bool) -> None:
        verdict = _verdict(_machine(GNU, noexec=("/tmp",)), release)
        assert (verdict["noexec"], verdict["loads_from"], verdict["loadable"]) == (noexec, loads_from, loadable)
        assert verdict["noexec_cache_mount"] == "/tmp" and verdict["noexec_binding_mount"] is None

    def test_node_modules_noexec_too_fails_even_the_release_that_falls_back(self) -> None:
        verdict = _verdict(_machine(GNU, noexec=("/tmp", NM)), "24.0.6")
        assert (
            verdict["noexec"] == "binding-noexec"
            and verdict["loadable"] is False
            and verdict["loads_from"] == "in-place"
        )
        assert verdict["noexec_binding_mount"] == NM

    def test_a_skipped_cache_loads_in_place_and_only_the_bindings_mount_counts(self) -> None:
        verdict = _verdict(_machine(GNU, noexec=("/tmp",)), "24.0.2", NX_SKIP_NATIVE_FILE_CACHE="true")
        assert verdict["loads_from"] == "in-place" and verdict["loadable"] is True and verdict["noexec"] == "ok"

    def test_yarn_berry_is_told_from_the_head_of_its_lockfile_without_reading_it_whole(self) -> None:
        lock = ("yarn.lock", "# generated\n__metadata:\n  version: 8\n" + "x" * 10_000)
        assert _verdict(_machine(GNU, lockfile=lock))["package_manager"] == "yarn-berry"

    def test_a_simulated_machine_has_no_verdict_and_the_key_is_still_there(self) -> None:
        env = environment(simulated=True)
        document = paths_document(resolve(env, machine()), machine())
        assert "binding" in document and document["binding"] is None

    def test_the_verdict_value_matches_its_json(self) -> None:
        view = _machine(GNU, noexec=("/tmp",))
        resolution = resolve(environment(nx_version="24.0.2"), view)
        verdict = binding_verdict(resolution, view, GNU)
        assert verdict.loads is not None and verdict.loads.cache_mount == "/tmp" and verdict.loadable is False


def _loaded_in(cwd: str, *args: str) -> tuple[set[str], str]:
    probe = (
        "import sys, json\nfrom nxsock.cli import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
        "sys.stderr.write('\\n@@' + json.dumps(sorted(sys.modules)))"
    )
    proc = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True, cwd=cwd)
    return set(json.loads(proc.stderr.rsplit("@@", 1)[1])), proc.stdout


def test_paths_json_in_a_workspace_with_nx_loads_only_the_light_binding_module(tmp_path: t.Any) -> None:
    """The verdict costs paths --json one small audit module and the mount table's parser: no remedy code, no
    hashlib."""
    (tmp_path / "nx.json").write_text("{}")
    package = tmp_path / "node_modules" / "@nx" / f"nx-{GNU}"
    package.mkdir(parents=True)
    (package / f"nx.{GNU}.node").write_bytes(b"\0")
    (tmp_path / "node_modules" / "nx").mkdir()
    (tmp_path / "node_modules" / "nx" / "package.json").write_text('{"version": "24.0.6"}')
    modules, out = _loaded_in(str(tmp_path), "paths", "--json")
    assert json.loads(out)["binding"]["state"] == "ok"
    assert {m for m in modules if m.startswith("nxsock.audit")} == {"nxsock.audit", "nxsock.audit.binding_presence"}
    assert not {"nxsock.core.remedy", "nxsock.core.wording", "hashlib", "click", "rich"} & modules


class TestExplainOnNodesDlopenError:

    def test_both_texts_are_one_message_each_with_the_file_node_named(self) -> None:
        for text, path in ((NOEXEC_CACHE_TEXT, CACHE_COPY), (NOEXEC_NODE_MODULES_TEXT, IN_PLACE)):
            messages = explain(text).messages
            assert [(m.matched, m.path) for m in messages] == [("binding-map-failed", path)]

    def test_err_dlopen_failed_alone_is_recognised_and_sent_to_doctor(self) -> None:
        (message,) = explain("Error: /x/nx.node: invalid ELF header\n  code: 'ERR_DLOPEN_FAILED'\n").messages
        assert message.matched == "binding-dlopen-failed"
        ctx = context_for(resolve(environment(), machine()), machine())
        advice = general_advice(message, {}, "linux", ctx)
        assert advice.command is None and (advice.hint or "").startswith("No safe command")

    def test_with_nothing_seen_here_only_a_cached_copy_is_answered_by_skipping_the_cache(self) -> None:
        ctx = context_for(resolve(environment(), machine()), machine())
        (cached,) = explain(NOEXEC_CACHE_TEXT).messages
        (in_place,) = explain(NOEXEC_NODE_MODULES_TEXT).messages
        assert general_advice(cached, {}, "linux", ctx).command == "export NX_SKIP_NATIVE_FILE_CACHE=true"
        advice = general_advice(in_place, {}, "linux", ctx)
        assert advice.command is None and "NX_SKIP_NATIVE_FILE_CACHE" not in (advice.hint or "")
        assert (advice.hint or "").startswith("No safe command") and "noexec" in (advice.hint or "")

    CACHE = "/tmp/.nx/14001/native-cache"
    NOEXEC_CACHE = Finding(
        "native-cache",
        "error",
        CACHE,
        f"{CACHE} lies on /tmp, mounted noexec: Nx 24.0.2 copies its binding there but cannot load the copy.",
        Advice(Remedy((Export(variable="NX_SKIP_NATIVE_FILE_CACHE", value="true"),), ""),
               "Nx then loads its binding in place."),
    )
    NOEXEC_BINDING = Finding(
        "native-cache",
        "error",
        CACHE,
        f"Nx's binding lies on {NM}, mounted noexec, and Nx loads it in place (its cached copy cannot load either).",
        Advice(None, "No safe command: nxsock does not remount filesystems or reinstall packages."),
    )

    @pytest.mark.parametrize(("finding", "remedy", "says"), [
        (NOEXEC_CACHE, "export NX_SKIP_NATIVE_FILE_CACHE=true", "lies on /tmp, mounted noexec"),
        (NOEXEC_BINDING, None, "Nx's binding lies on"),
    ], ids=["noexec-cache", "noexec-node-modules"])
    def test_the_cause_named_is_the_one_the_audit_sees_here(
        self, finding: Finding, remedy: str | None, says: str
    ) -> None:
        """The cached copy's text, or Nx's own, is answered by the finding that shows why here, the cache's or
        node_modules'."""
        ctx = context_for(resolve(environment(), machine()), machine())
        for text in (NOEXEC_CACHE_TEXT, "TypeError: WorkspaceContext is not a constructor"):
            messages = explain(text).messages
            (answer,) = answer_all(messages, [finding], FINDING_IDS, lambda m: general_advice(m, {}, "linux", ctx))
            assert answer.source == "this machine" and fix_line(answer.advice) == remedy, text
            assert answer.message.cause.startswith("On this machine: ") and says in answer.message.cause

    def test_a_binding_in_place_on_noexec_is_never_answered_by_skipping_the_cache(self) -> None:
        """Whatever the audit saw of the cache, skipping it cannot help a binding that does not map in node_modules."""
        ctx = context_for(resolve(environment(), machine()), machine())
        for findings in ([], [self.NOEXEC_CACHE], [self.NOEXEC_BINDING]):
            (answer,) = answer_all(explain(NOEXEC_NODE_MODULES_TEXT).messages, findings, FINDING_IDS,
                                   lambda m: general_advice(m, {}, "linux", ctx))
            assert fix_line(answer.advice) is None and "noexec" in (answer.hint or ""), findings


@pytest.mark.parametrize(
    "text",
    [
        "/" * (1 << 20),
        "Error: /" * (1 << 17),
        "Error: /" + "a" * (1 << 20),
        ("Error: /a.node: failed to map segment from shared object\n" + "x" * 300 + "\n") * 4000,
        "ERR_DLOPEN_FAILED " * (1 << 16),
    ],
)
def test_the_dlopen_patterns_read_a_hostile_text_in_linear_time(text: str) -> None:
    """A paste of slashes once made the path pattern start at every one and run 4096 characters from each."""
    import time

    started = time.process_time()
    explain(text)
    assert time.process_time() - started < 10
