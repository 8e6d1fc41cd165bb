"""The one way a document leaves nxsock: ``schema_version``, strings as Node prints them, one JSON emitter.

Every ``--json`` document is a plain dict built by :mod:`nxsock.output.report` or
:mod:`nxsock.output.paths_json` and written by :func:`write_json`.  No click or rich:
the ``paths --json`` fast path writes through it too.
"""

from __future__ import annotations

import json
import sys
import typing as t

from ..core.layout import node_string

__all__ = ["SCHEMA_VERSION", "Json", "dumps", "node_path", "write_json"]

#: The version every document carries; keys are only ever added (docs/behaviour.md#json-documents).
SCHEMA_VERSION = 1

Json = dict[str, t.Any]


def _printable(value: t.Any) -> t.Any:
    """Every string as Node would print it: a byte that is not UTF-8 becomes U+FFFD."""
    if isinstance(value, str):
        return node_string(value)
    if isinstance(value, dict):
        return {k: _printable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_printable(v) for v in value]
    return value


def write_json(document: Json, stream: t.TextIO | None = None) -> None:
    """Write *document* as the one JSON document of a command's stdout: indented on a terminal, compact in a pipe."""
    out = sys.stdout if stream is None else stream
    out.write(dumps(document, indent=out.isatty()) + "\n")


def dumps(document: Json, *, indent: bool = False) -> str:
    """One JSON document, UTF-8 as it is: indented for a person, compact for a pipe (the C encoder)."""
    document = _printable(document)
    if indent:
        return json.dumps(document, indent=2, ensure_ascii=False)
    return json.dumps(document, ensure_ascii=False, separators=(",", ":"))


def node_path(path: str | None) -> str | None:
    """A path as Node would print it (a byte that is not UTF-8 becomes U+FFFD), ``None`` kept."""
    return None if path is None else node_string(path)
