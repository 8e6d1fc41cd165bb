"""Every JSON document nxsock prints in this suite is read here, and checked against its published schema.

The schemas ship with nxsock (``nxsock/output/schemas``, ``nxsock schema NAME``) and
allow keys they do not name, since keys are only ever added.  Here they are
checked *closed*: an object whose keys a schema lists may carry no other key,
so a key nxsock prints but its schema does not describe fails the test that
produced it, as does a missing required key, a wrong type or a value outside
its enumeration.
"""

from __future__ import annotations

import copy
import functools
import itertools
import json
import typing as t

from click.testing import CliRunner, Result
from jsonschema import Draft202012Validator

from nxsock.output import schemas

__all__ = ["Runner", "SchemaMismatch", "checked", "closed", "parsed", "schema_name"]

Document = dict[str, t.Any]


class SchemaMismatch(AssertionError):
    """A document that does not match its published schema."""


def closed(schema: t.Any) -> t.Any:
    """*schema* with ``additionalProperties: false`` on every object schema that lists its properties."""
    schema = copy.deepcopy(schema)

    def close(node: t.Any) -> None:
        if isinstance(node, dict):
            if "properties" in node and "additionalProperties" not in node:
                node["additionalProperties"] = False
            for value in node.values():
                close(value)
        elif isinstance(node, list):
            for value in node:
                close(value)

    close(schema)
    return schema


@functools.cache
def _validator(name: str) -> Draft202012Validator:
    return Draft202012Validator(closed(schemas.load(name)))


def checked(document: t.Any, name: str) -> Document:
    """*document*, after checking it against the schema *name*; :class:`SchemaMismatch` says where it differs."""
    errors = sorted(_validator(name).iter_errors(document), key=lambda e: list(e.absolute_path))
    if errors:
        lines = [f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}"[:400] for e in errors[:10]]
        raise SchemaMismatch(f"the document does not match the {name!r} schema:\n  " + "\n  ".join(lines))
    if name == "doctor":  # a remedy is a value the policy vetted: the command shown is its steps, rendered
        findings = document.get("findings") or []
        bare = [f["id"] for f in findings if f["remedy"] is not None and not f["remedy_steps"]]
        if bare:
            raise SchemaMismatch(f"findings with a remedy but no remedy_steps (a string the policy never saw): {bare}")
        silent = [
            f["id"] for f in findings if f["severity"] in ("warn", "error") and f["remedy"] is None and not f["hint"]
        ]
        if silent:  # every warning and error has a remedy, or says why it has none
            raise SchemaMismatch(f"warnings or errors with neither a remedy nor a reason why none: {silent}")
    return t.cast(Document, document)


def parsed(text: str, name: str | t.Sequence[str]) -> Document:
    """nxsock's ``--json`` output *text*, parsed and checked against the schema *name* (or the one for the argv
    *name*)."""
    if not isinstance(name, str):
        found = schema_name(name)
        assert found is not None, f"no JSON document is printed by nxsock {' '.join(name)}"
        name = found
    return checked(json.loads(text), name)


def schema_name(args: t.Sequence[str]) -> str | None:
    """The schema of the document ``nxsock ARGS`` prints, or ``None`` where it prints none.

    >>> schema_name(["cache", "prune", "--json"]), schema_name(["paths", "--format=json"]), schema_name(["doctor"])
    ('cache-prune', 'paths', None)
    >>> schema_name(["doctor", "--fix", "--dry-run", "--json"])
    'doctor-fix'
    """
    words = [w for w in args if w != "--debug"]
    wants_json = "--json" in words or "--format=json" in words or any(
        a == "--format" and b == "json" for a, b in itertools.pairwise(words)
    )
    if not words or not wants_json:
        return None
    command = words[0]
    if command == "cache":
        sub = next((w for w in words[1:] if not w.startswith("-")), "")
        return f"cache-{sub}"
    if command == "provision" and "--tmpfiles" in words:
        return "provision-tmpfiles"
    if command == "doctor" and "--fix" in words:
        return "doctor-fix"
    if command == "doctor" and "--all-users" in words:
        return "doctor-all-users"
    return command


class Runner(CliRunner):
    """Click's test runner, checking the document of every ``--json`` command line it runs against its schema."""

    def invoke(self, cli: t.Any, args: t.Any = None, *rest: t.Any, **options: t.Any) -> Result:
        result = super().invoke(cli, args, *rest, **options)
        name = (
            schema_name(list(args))
            if isinstance(args, (list, tuple)) and getattr(cli, "name", None) == "nxsock"
            else None
        )
        if name is not None and result.stdout.strip():
            parsed(result.stdout, name)
        return result
