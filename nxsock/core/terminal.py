"""How text read from disk or the environment is shown to a person: the one escaping rule.

A name planted in ``/tmp`` — an entry in a squatted cache, a ``socketPath``
written into ``server-process.json``, the reason in a ``disabled`` marker, a
variable from ``.env`` — can hold terminal escapes (a window title, an OSC 8
link, a cursor move), bidirectional overrides that reorder what is seen, or
bytes that are not UTF-8.  Every such name reaches human output through
:func:`printable`, which shows each of those characters as a visible escape,
and the renderer never parses it as markup.  JSON is not shown here: it keeps
the data (as Node would print it) and escapes control characters itself.

Stdlib only, so that commands may use it for a line on stderr without loading
rich, and cheap to import on the ``paths --json`` path.
"""

from __future__ import annotations

__all__ = ["counted", "format_mode", "printable", "printable_lines"]

#: Unicode categories that are shown escaped: controls (C0, DEL, C1), format characters (bidi
#: overrides, zero-width joiners, the BOM), line and paragraph separators, surrogates.
_ESCAPED_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})


def _escape(ch: str) -> str:
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that is not UTF-8, carried by surrogateescape
        return f"\\x{code - 0xDC00:02x}"
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}"


def printable(text: str | None) -> str:
    r"""*text* with every character that could forge or garble a terminal shown as an escape.

    ``None`` is shown as ``-``.  Printable characters, spaces and backslashes
    pass as they are, so an ordinary path can be copied from the screen.

    >>> printable("/tmp/.nx/1000/sockets")
    '/tmp/.nx/1000/sockets'
    >>> printable("a\x1b]0;owned\x07b")
    'a\\x1b]0;owned\\x07b'
    >>> printable("caf\udce9 \u202e\x85")
    'caf\\xe9 \\u202e\\x85'
    """
    if text is None:
        return "-"
    if text.isprintable():  # False for every character escaped below
        return text
    import unicodedata  # only for text that needs escaping: the common case stays a plain check

    return "".join(_escape(ch) if unicodedata.category(ch) in _ESCAPED_CATEGORIES else ch for ch in text)


def printable_lines(text: str) -> list[str]:
    r"""A multi-line text (a marker's reason, a log line) as its lines, each escaped, blank ends dropped.

    >>> printable_lines("Daemon failed\nEACCES \x1b[2J\n\n")
    ['Daemon failed', 'EACCES \\x1b[2J']
    """
    lines = text.replace("\r\n", "\n").split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    while lines and not lines[0].strip():
        lines.pop(0)
    return [printable(line.rstrip()) for line in lines]


def format_mode(mode: int | None) -> str | None:
    """Four octal digits, as ``chmod`` and ``ls`` users write them: ``1777``, ``0755``."""
    return None if mode is None else format(mode & 0o7777, "04o")


def counted(n: int, singular: str, plural: str | None = None) -> str:
    """*n* with the noun in the right number: ``1 entry``, ``2 entries``, ``0 errors``.

    >>> counted(1, "entry", "entries"), counted(3, "warning")
    ('1 entry', '3 warnings')
    """
    return f"{n} {singular if n == 1 else (plural or singular + 's')}"
