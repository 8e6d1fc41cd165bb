"""The published JSON Schemas of nxsock's ``--json`` documents, shipped as data files beside this module.

One schema (draft 2020-12) per document, named for the command line that prints it:
``paths`` for ``paths --json``, ``cache-list`` for ``cache list --json``,
``provision-tmpfiles`` for ``provision --tmpfiles --json``.  Each pins
``schema_version`` 1, names every key nxsock prints with its type and meaning,
and lists the keys always present; keys are only ever added, so the schemas
allow keys they do not name.  Read with :mod:`importlib.resources` (a wheel,
a zip or a checkout alike) and never validated at run time: nxsock only prints
them (``nxsock schema NAME``); the test suite validates every document against them.

>>> names()[:3]
('cache-list', 'cache-path', 'cache-prune')
>>> '"$id": "https://nxsock.invalid/schema/v1/paths.schema.json"' in schema_text("paths")
True
"""

from __future__ import annotations

import json
import typing as t
from importlib import resources

__all__ = ["SUFFIX", "UnknownSchema", "load", "names", "print_schema", "schema_text"]

#: Each schema's file name is its name and this suffix.
SUFFIX = ".schema.json"


class UnknownSchema(LookupError):
    """No schema of that name is shipped."""


def names() -> tuple[str, ...]:
    """Every shipped schema's name, sorted."""
    return tuple(
        sorted(
            entry.name[: -len(SUFFIX)] for entry in resources.files(__name__).iterdir() if entry.name.endswith(SUFFIX)
        )
    )


def schema_text(name: str) -> str:
    """The schema *name* exactly as shipped; :class:`UnknownSchema` when there is none."""
    if name not in names():  # never a path: a name such as ``../x`` is just unknown
        raise UnknownSchema(name)
    return (resources.files(__name__) / f"{name}{SUFFIX}").read_text(encoding="utf-8")


def load(name: str) -> dict[str, t.Any]:
    """The schema *name* as a JSON object."""
    schema: dict[str, t.Any] = json.loads(schema_text(name))
    return schema


def print_schema(name: str | None) -> int:
    """``nxsock schema``: the schema *name* on stdout byte for byte as shipped, or the names one a line; exit 0."""
    import sys

    from ... import exitcodes

    if name is None:
        sys.stdout.write("".join(f"{known}\n" for known in names()))
        return exitcodes.OK
    sys.stdout.flush()
    sys.stdout.buffer.write(schema_text(name).encode("utf-8"))  # as shipped, whatever the locale's encoding
    sys.stdout.buffer.flush()
    return exitcodes.OK
