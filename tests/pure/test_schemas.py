"""The published JSON Schemas: valid, complete, shipped in the wheel, printed as shipped, and able to fail."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import typing as t
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from documents import SchemaMismatch, checked, parsed, schema_name
from jsonschema import Draft202012Validator

from nxsock.app import cli
from nxsock.output import schemas

REPO = Path(__file__).resolve().parents[2]
SHIPPED = Path(schemas.__file__).parent
#: Where the schemas sit inside the wheel: the loader's package, as a path.
IN_WHEEL = schemas.__name__.replace(".", "/")
NAMES = schemas.names()

#: A command line printing each schema's document, run in-process over a simulated machine.
PLATFORM = ["--platform", "linux", "--nx-version", "24.0.6"]


def _properties(node: t.Any, where: str = "") -> t.Iterator[tuple[str, dict[str, t.Any]]]:
    """Every property schema anywhere in *node*, with a path naming it."""
    if isinstance(node, dict):
        for key, value in node.get("properties", {}).items():
            yield f"{where}.{key}", value
        for key, value in node.items():
            if key != "properties" and isinstance(value, (dict, list)):
                yield from _properties(value, f"{where}/{key}")
            elif key == "properties":
                for name, sub in value.items():
                    yield from _properties(sub, f"{where}.{name}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _properties(value, f"{where}[{index}]")


@pytest.fixture(scope="module")
def document() -> dict[str, t.Any]:
    """A real ``paths --json`` document, with refusals and a sandbox verdict in it."""
    result = CliRunner().invoke(cli, ["paths", "--json", *PLATFORM])
    return parsed(result.stdout, "paths")


class TestTheSchemas:
    def test_the_shipped_files_are_the_names_listed(self) -> None:
        """One file per document, each named NAME.schema.json, and nothing else beside the loader."""
        files = sorted(p.name for p in SHIPPED.iterdir() if p.name != "__init__.py" and p.name != "__pycache__")
        assert files == sorted(f"{name}.schema.json" for name in NAMES)
        assert set(NAMES) == {"paths", "check-root", "doctor", "doctor-all-users", "doctor-fix", "reset",
                              "cache-path", "cache-list", "cache-verify",
                              "cache-prune", "provision", "provision-tmpfiles"}

    @pytest.mark.parametrize("name", NAMES)
    def test_each_schema_is_a_valid_draft_2020_12_schema(self, name: str) -> None:
        schema = schemas.load(name)
        Draft202012Validator.check_schema(schema)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert schema["$id"] == f"https://nxsock.invalid/schema/v1/{name}.schema.json"
        assert schema["properties"]["schema_version"] == {
            "description": schema["properties"]["schema_version"]["description"],
            "const": 1,
        }
        assert schema["required"][0] == "schema_version" and schema["type"] == "object"

    @pytest.mark.parametrize("name", NAMES)
    def test_every_key_has_a_type_and_a_meaning_and_unknown_keys_are_allowed(self, name: str) -> None:
        """Keys are only ever added: no published object forbids other keys; each key it names says what it is."""
        schema = schemas.load(name)
        for where, prop in _properties(schema):
            assert prop.get("description", "").strip(), f"{name}{where} has no description"
            assert {"type", "$ref", "anyOf", "const"} & prop.keys(), f"{name}{where} has no type"
        assert '"additionalProperties": false' not in schemas.schema_text(name)

    @pytest.mark.parametrize("name", NAMES)
    def test_every_required_key_is_described(self, name: str) -> None:
        def walk(node: t.Any) -> t.Iterator[dict[str, t.Any]]:
            if isinstance(node, dict):
                yield node
                for value in node.values():
                    yield from walk(value)
            elif isinstance(node, list):
                for value in node:
                    yield from walk(value)

        for node in walk(schemas.load(name)):
            if "properties" in node:
                assert set(node.get("required", ())) <= node["properties"].keys(), node.get("description")

    def test_the_shared_definitions_are_the_same_in_every_schema(self) -> None:
        """A refusal and a remedy step read the same whichever document carries them."""
        for definition in ("refusal", "remedy_step"):
            found = {
                name: schemas.load(name)["$defs"][definition]
                for name in NAMES
                if definition in schemas.load(name).get("$defs", {})
            }
            assert len(found) >= 2 and all(value == next(iter(found.values())) for value in found.values()), definition

    def test_the_rules_and_the_step_verbs_are_those_of_the_code(self) -> None:
        """The release table's rules and the remedy verbs are described one for one: none missing, none invented."""
        from nxsock.core.releases import ReleaseRules
        from nxsock.core.remedy import Remove, Verb, step_json

        paths = schemas.load("paths")
        assert list(paths["properties"]["rules"]["properties"]) == [
            f for f in ReleaseRules._fields if f not in ("release", "assumed")
        ]
        step = paths["$defs"]["remedy_step"]
        assert step["properties"]["verb"]["enum"] == list(t.get_args(Verb))
        assert list(step["properties"]) == list(step_json(Remove("/x")))

    def test_each_closed_vocabulary_is_the_codes_own(self) -> None:
        """Where the code declares the values a key takes (a ``Literal``), the schema enumerates exactly those."""
        from nxsock.act.tmpfiles import TmpfilesChange
        from nxsock.audit.binding_cache import Verdict
        from nxsock.audit.findings import Severity
        from nxsock.core.guards import RefusalKind
        from nxsock.core.host_overrides import Layout, Platform
        from nxsock.core.releases import Generation, ReleaseRules
        from nxsock.core.resolver import InvalidReason, Tier

        def enum(name: str, *path: str) -> list[t.Any]:
            node: t.Any = schemas.load(name)
            for step in path:
                node = node[int(step)] if isinstance(node, list) else node[step]
            return [v for v in node["enum"] if v is not None]

        paths = ("paths", "properties")
        pairs = [
            (enum("paths", "$defs", "refusal", "properties", "kind"), RefusalKind),
            (enum(*paths, "platform"), Platform),
            (enum(*paths, "layout"), Layout),
            (enum(*paths, "generation"), Generation),
            (enum(*paths, "rules", "properties", "generation"), Generation),
            (enum(*paths, "rules", "properties", "budget_units"), t.get_type_hints(ReleaseRules)["budget_units"]),
            (enum(*paths, "socket_root", "properties", "tier"), Tier),
            (enum(*paths, "sockets", "properties", "daemon", "properties", "tier"), Tier),
            (enum(*paths, "socket_root", "properties", "invalid", "anyOf", "0", "properties", "reason"), InvalidReason),
            (enum("doctor", "properties", "findings", "items", "properties", "severity"), Severity),
            (enum("cache-verify", "properties", "state"), t.get_type_hints(Verdict)["state"]),
            (
                enum("provision-tmpfiles", "properties", "steps", "items", "properties", "verb"),
                t.get_type_hints(TmpfilesChange)["verb"],
            ),
        ]
        for found, literal in pairs:
            assert found == list(t.get_args(literal)), literal

    def test_loading_is_by_name_never_by_path(self) -> None:
        for name in ("../pyproject", "paths.schema.json", "", "__init__"):
            with pytest.raises(schemas.UnknownSchema):
                schemas.schema_text(name)


#: For each schema, a read-only command line printing its document (``reset`` and ``provision`` only dry).
ONE_OF_EACH = {
    "paths": ["paths", "--json"],
    "check-root": ["check-root", "--json", "/nonexistent/.nx"],
    "doctor": ["doctor", "--json"],
    "doctor-fix": ["doctor", "--fix", "--dry-run", "--json"],
    "doctor-all-users": ["doctor", "--all-users", "--json"],
    "reset": ["reset", "--json", "--dry-run"],
    "cache-path": ["cache", "path", "--json"],
    "cache-list": ["cache", "list", "--json"],
    "cache-verify": ["cache", "verify", "--json"],
    "cache-prune": ["cache", "prune", "--json", "--dry-run"],
    "provision": ["provision", "--json", "--dry-run"],
    "provision-tmpfiles": ["provision", "--tmpfiles", "--json"],
}


@pytest.mark.parametrize("name", NAMES)
def test_a_real_document_of_each_schema_matches_it(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every schema is met by a document this suite produces, whatever else runs: here, in a fresh workspace."""
    if name == "doctor-all-users" and os.geteuid() != 0:
        pytest.skip("doctor --all-users needs root")
    (tmp_path / "nx.json").write_text("{}")
    monkeypatch.chdir(tmp_path)
    args = ONE_OF_EACH[name]
    assert schema_name(args) == name
    result = CliRunner().invoke(cli, args)
    assert result.exit_code in (0, 1), (result.exit_code, result.output[-500:])
    document = parsed(result.stdout, name)
    assert document["schema_version"] == 1


#: Each function of the output layer that builds a document, and the schema its document must match.
BUILDERS = {
    "paths_document": "paths",
    "check_root_document": "check-root",
    "doctor_document": "doctor",
    "doctor_error_document": "doctor",
    "all_users_document": "doctor-all-users",
    "fix_document": "doctor-fix",
    "reset_document": "reset",
    "cache_path_document": "cache-path",
    "cache_list_document": "cache-list",
    "cache_verify_document": "cache-verify",
    "cache_prune_document": "cache-prune",
    "provision_document": "provision",
    "tmpfiles_document": "provision-tmpfiles",
    "tmpfiles_steps_document": "provision-tmpfiles",
}


def test_every_document_the_output_layer_builds_has_a_schema() -> None:
    """A new document (a new ``*_document`` in the output layer) fails here until a schema is published for it."""
    import inspect

    from nxsock.output import paths_json, report

    built = {name for module in (report, paths_json) for name, value in vars(module).items()
             if name.endswith("_document") and inspect.isfunction(value) and value.__module__ == module.__name__}
    assert built == BUILDERS.keys()
    assert set(BUILDERS.values()) == set(NAMES)


def test_the_documents_no_test_run_reaches_match_too() -> None:
    """The audit ended as another user's child, and a drop-in change: built directly, checked all the same."""
    from nxsock.act.tmpfiles import TmpfilesChange
    from nxsock.output import report

    checked(report.doctor_error_document("the audit as uid 7 did not finish within 15 s"), "doctor")
    changes = [
        TmpfilesChange("refuse", "/etc/tmpfiles.d", "is not trusted"),
        TmpfilesChange("fail", "/x", "no such directory"),
    ]
    checked(report.tmpfiles_steps_document(changes, dry_run=True, changed=False), "provision-tmpfiles")


class TestTheValidatorFails:
    """The suite's check is not a rubber stamp: a document that breaks its schema is refused."""

    @pytest.mark.parametrize(
        ("change", "complaint"),
        [
            (lambda d: d.pop("socket_root"), "'socket_root' is a required property"),
            (lambda d: d["sockets"]["daemon"].pop("length"), "'length' is a required property"),
            (lambda d: d.update(schema_version=2), "1 was expected"),
            (lambda d: d.update(uid="1000"), "is not of type"),
            (lambda d: d["socket_root"].update(tier="elsewhere"), "is not one of"),
            (lambda d: d["actions"].append({"verb": "create", "path": "/x", "mode": "755"}), "does not match"),
            (lambda d: d["native_cache"].update(undescribed=True), "'undescribed' was unexpected"),
        ],
        ids=["missing key", "missing nested key", "schema_version", "wrong type", "outside the enumeration",
             "mode not four octal digits", "undescribed key"],
    )
    def test_a_wrong_document_fails(self, document: dict[str, t.Any], change: t.Callable[[dict[str, t.Any]], object],
                                    complaint: str) -> None:
        wrong = copy.deepcopy(document)
        change(wrong)
        with pytest.raises(SchemaMismatch, match=complaint):
            checked(wrong, "paths")

    def test_the_published_schema_itself_accepts_a_key_added_later(self, document: dict[str, t.Any]) -> None:
        """Consumers validating with the shipped schema keep working when a release adds a key."""
        later = {**copy.deepcopy(document), "added_in_a_later_release": [1, 2]}
        later["native_cache"]["also_added"] = None
        assert not list(Draft202012Validator(schemas.load("paths")).iter_errors(later))
        with pytest.raises(SchemaMismatch, match="added_in_a_later_release"):
            checked(later, "paths")

    def test_the_runner_checks_what_it_is_never_asked_to_parse(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """The suite's runner validates a ``--json`` command's output even where the test only compares text."""
        from documents import Runner

        import nxsock.output.paths_json

        real = nxsock.output.paths_json.paths_document
        monkeypatch.setattr(
            nxsock.output.paths_json, "paths_document", lambda *a, **k: {**real(*a, **k), "uid": "not a number"}
        )
        with pytest.raises(SchemaMismatch, match="uid"):
            Runner().invoke(cli, ["paths", "--json", *PLATFORM])

    def test_each_command_line_names_its_schema(self) -> None:
        assert [
            schema_name(a)
            for a in (
                ["paths", "--json"],
                ["--debug", "paths", "--format", "json"],
                ["check-root", "/x", "--json"],
                ["cache", "verify", "--json"],
                ["provision", "--tmpfiles", "--install", "--json"],
                ["provision", "--dry-run", "--json"],
                ["paths", "--format", "srt"],
                ["reset"],
            )
        ] == ["paths", "paths", "check-root", "cache-verify", "provision-tmpfiles", "provision", None, None]
        assert all(schema_name([*name.split("-", 1), "--json"] if name.startswith("cache-") else [name, "--json"])
                   in (name, "provision") for name in NAMES)


class TestTheCommand:
    """``nxsock schema NAME`` prints the shipped file byte for byte; the names are listed; a wrong name is usage."""

    @pytest.mark.parametrize("name", NAMES)
    def test_it_prints_exactly_the_shipped_file(self, name: str) -> None:
        shown = subprocess.run(
            [sys.executable, "-m", "nxsock", "schema", name],
            capture_output=True,
            env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"},
        )  # an ASCII locale: the bytes are still UTF-8
        assert shown.returncode == 0 and shown.stderr == b""
        assert shown.stdout == (SHIPPED / f"{name}.schema.json").read_bytes()
        assert json.loads(shown.stdout) == schemas.load(name)

    @pytest.mark.parametrize("args", [["schema"], ["schema", "--list"]])
    def test_it_lists_the_names(self, args: list[str]) -> None:
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 0 and result.stdout.splitlines() == list(NAMES)

    @pytest.mark.parametrize("name", ["nope", "../paths", "paths.schema.json"])
    def test_an_unknown_name_is_one_line_and_usage(self, name: str) -> None:
        shown = subprocess.run([sys.executable, "-m", "nxsock", "schema", name], capture_output=True, text=True)
        assert shown.returncode == 2 and shown.stdout == ""
        assert len(shown.stderr.splitlines()) == 1 and "nxsock schema" in shown.stderr and "paths" in shown.stderr

    def test_a_name_with_list_is_usage(self) -> None:
        result = CliRunner().invoke(cli, ["schema", "--list", "paths"])
        assert result.exit_code == 2 and result.stdout == ""

    def test_names_complete(self) -> None:
        env = {"_NXSOCK_COMPLETE": "bash_complete", "COMP_WORDS": "nxsock schema cache-", "COMP_CWORD": "2"}
        shown = subprocess.run(
            [sys.executable, "-m", "nxsock"], capture_output=True, text=True, env={"PATH": "/usr/bin:/bin", **env}
        )
        assert [line.split(",", 1)[1] for line in shown.stdout.splitlines()] == [
            n for n in NAMES if n.startswith("cache-")
        ]


def test_the_wheel_ships_every_schema(tmp_path: Path) -> None:
    """``pip wheel`` of the checkout holds each schema where importlib.resources finds it, byte for byte."""
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(tmp_path), str(REPO)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert built.returncode == 0, built.stderr[-2000:]
    (wheel,) = tmp_path.glob("nxsock-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        for name in NAMES:
            assert archive.read(f"{IN_WHEEL}/{name}.schema.json") == (SHIPPED / f"{name}.schema.json").read_bytes()
        assert f"{IN_WHEEL}/__init__.py" in archive.namelist()
