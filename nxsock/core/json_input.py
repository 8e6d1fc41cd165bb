"""JSON written by someone else — the daemon's ``server-process.json``, a package's ``package.json`` — read safely.

Any user who can write such a file can make it hostile: nested a hundred
thousand levels deep (which exhausts a recursive parser's stack), as long as
memory allows, or holding a lone surrogate escape (``"\\ud800"``), which is
valid JSON but no string a path or a terminal can carry.  :func:`parse_json`
bounds the size and the depth before the parser runs, and hands back strings
as Node would see them once it writes them out: every lone surrogate is
U+FFFD.  Every failure is a :class:`JsonInputError` with one sentence.
"""

from __future__ import annotations

import itertools
import json
import re
import typing as t

__all__ = ["MAX_DEPTH", "MAX_TEXT", "JsonInputError", "parse_json"]

#: The deepest nesting accepted; Nx's own files are two levels deep.
MAX_DEPTH = 64
#: The most text parsed (the readers stop at this much anyway).
MAX_TEXT = 1 << 20

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_BRACKETS = {ord(c): None for c in map(chr, range(0x80)) if c not in "[]{}"}


class JsonInputError(ValueError):
    """The text is not JSON nxsock will read; the message says why in a few words."""


def _depth(text: str) -> int:
    """The deepest nesting of arrays and objects, counted outside strings, in linear time."""
    brackets = _STRING.sub("", text).translate(_BRACKETS)
    steps = (1 if c in "[{" else -1 for c in brackets if c in "[]{}")
    return max(itertools.accumulate(steps), default=0)


def _clean(value: t.Any) -> t.Any:
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_clean(v) for v in value]
    if isinstance(value, dict):
        return {_clean(k): _clean(v) for k, v in value.items()}
    return value


def parse_json(text: str) -> t.Any:
    """The value *text* holds, bounded in size and depth, every lone surrogate replaced by U+FFFD.

    >>> parse_json('{"socketPath": "/tmp/\\\\ud800/d.sock"}')
    {'socketPath': '/tmp/\ufffd/d.sock'}
    >>> parse_json("[" * 100 + "]" * 100)
    Traceback (most recent call last):
    ...
    nxsock.core.json_input.JsonInputError: is nested deeper than 64 levels
    """
    if len(text) > MAX_TEXT:
        raise JsonInputError(f"is larger than {MAX_TEXT} characters")
    if _depth(text) > MAX_DEPTH:
        raise JsonInputError(f"is nested deeper than {MAX_DEPTH} levels")
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # a number of 5,000 digits is a ValueError too
        raise JsonInputError("is not valid JSON") from None
    return _clean(value)
