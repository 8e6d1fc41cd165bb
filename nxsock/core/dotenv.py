"""The workspace's ``.env`` files, read as the ``dotenv`` and ``dotenv-expand`` packages Nx uses read them.

Linear in what a file holds and bounded in what it may build: a ``.env`` is
input another user may have written.
"""

import bisect
import re
import typing as t

from ._pathname import join
from .environment import Variable
from .fsview import FsView

__all__ = [
    "DOTENV_FILES",
    "Assignment",
    "EnvFileEdit",
    "assignments",
    "load_dotenv_variables",
    "parse_dotenv",
    "remove_assignments",
    "remove_assignments_from_bytes",
]

#: The files Nx loads from the workspace root, first match wins among them.
DOTENV_FILES = (".local.env", ".env.local", ".env")

#: The most of a ``.env`` file read; the rest is ignored (a real one is a few hundred bytes).
DOTENV_LIMIT = 1 << 20
#: The most assignments of one variable a ``.env`` edit removes; a file with more is left as it is.
ASSIGNMENTS_LIMIT = 1000
#: The longest value ``${VAR}`` expansion may build; beyond it the value is kept unexpanded.
EXPANSION_LIMIT = 1 << 16

# dotenv's own line pattern, but for the leading blank: horizontal only.  Its ``^\s*`` under MULTILINE
# spans newlines, so every line start rescanned every blank line after it — quadratic in a file of
# blank lines.  Each key still matches at its own line's start, so what is parsed is the same.
# ``\s`` and ``\w`` are JavaScript's: its ``\s`` holds U+FEFF (a byte-order mark before the first key is
# blank to dotenv) and not U+001C–U+001F or U+0085, and its ``\w`` is ASCII.
_JS_BLANK = "\t\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_S = f"[\n{_JS_BLANK}]"
_DOTENV_LINE = (
    rf"^[{_JS_BLANK}]*(?:export{_S}+)?(?P<key>[A-Za-z0-9_.-]+)(?P<sep>{_S}*={_S}*?|:{_S}+?)"
    rf"""(?P<value>{_S}*'(?:\\'|[^'])*'|{_S}*"(?:\\"|[^"])*"|{_S}*`(?:\\`|[^`])*`|[^#\r\n]+)?{_S}*(?:\#.*)?$"""
)
#: Line ends JavaScript's ``^``, ``$`` and ``.`` know and Python's do not: a file holding one is not edited.
_JS_ONLY_LINE_ENDS = ("\u2028", "\u2029")
_BOM = "\ufeff"


class Assignment(t.NamedTuple):
    """One assignment dotenv reads, and the lines of the file that are its own."""

    key: str
    raw: str  # the value as written (quotes and all), blanks around it stripped
    start: int  # where its first line starts, in the text as given (a byte-order mark before it is not its own)
    end: int  # past the line end that closes its last line (or the end of the text)
    first_line: int  # 1-based, counting line ends as dotenv does (CRLF, CR, LF)
    last_line: int


def _unify(text: str) -> tuple[str, list[int]]:
    """*text* with CRLF and CR made LF, as dotenv does first, and where each CRLF's LF is in the unified text."""
    shifts = [m.start() - k for k, m in enumerate(re.finditer("\r\n", text))]
    return text.replace("\r\n", "\n").replace("\r", "\n"), shifts


def _scan(text: str, variable: str | None) -> tuple[list[tuple[str, str]], list[Assignment]]:
    """Every (key, raw value) dotenv reads in *text*, in order, and the :class:`Assignment` of each of *variable*'s
    (of every key's when *variable* is ``None``).  Spans and lines are worked out only for those: linear, and
    cheap in a file of a hundred thousand other keys."""
    unified, shifts = _unify(text)

    def original(n: int) -> int:
        return n + bisect.bisect_left(shifts, n) if shifts else n

    pairs: list[tuple[str, str]] = []
    found: list[Assignment] = []
    line, counted = 1, 0
    for match in re.finditer(_DOTENV_LINE, unified, re.MULTILINE):
        key, value = match.group("key", "value")
        raw = (value or "").strip()
        pairs.append((key, raw))
        if variable is not None and (key != variable or len(found) > ASSIGNMENTS_LIMIT):
            continue
        start = match.start()
        if start == 0 and unified.startswith(_BOM):
            start = 1
        last = (match.end("value") if value is not None else match.end("sep")) - 1
        newline = unified.find("\n", max(last, start))
        end = len(unified) if newline < 0 else newline + 1
        line += unified.count("\n", counted, start)
        counted = start
        found.append(
            Assignment(
                key, raw, original(start), original(end), line, line + unified.count("\n", start, max(end - 1, start))
            )
        )
    return pairs, found


def assignments(text: str) -> list[Assignment]:
    """Every assignment dotenv reads in *text*, in order, with the span of its own lines in *text*.

    A line inside another key's quoted value is part of that value, not an
    assignment; ``NAME: value`` is one; the blank lines and comment lines a
    match runs on into are not the assignment's own, only the rest of its last line.
    """
    return _scan(text, None)[1]


def parse_dotenv(text: str) -> dict[str, str]:
    """Parse a ``.env`` file as the ``dotenv`` package Nx uses does (a later definition of a key wins).

    Linear in the text, whatever it holds; at most :data:`DOTENV_LIMIT` characters are read.
    """
    parsed: dict[str, str] = {}
    # Compiled on first use (``re`` caches it): most workspaces have no ``.env``, and paths --json runs on every job.
    for match in re.finditer(_DOTENV_LINE, text[:DOTENV_LIMIT].replace("\r\n", "\n").replace("\r", "\n"), re.MULTILINE):
        key, raw = match.group("key"), (match.group("value") or "").strip()
        quote = raw[:1]
        if len(raw) >= 2 and quote in "'\"`" and raw.endswith(quote):
            raw = raw[1:-1]
        if quote == '"':
            raw = raw.replace("\\n", "\n").replace("\\r", "\r")
        parsed[key] = raw
    return parsed


class EnvFileEdit(t.NamedTuple):
    """A ``.env`` file without the assignments of one variable, and the ``sed`` script that makes the same edit.

    *text* is ``None`` when the edit cannot be made safely (the reason says
    why); *sed* is ``None`` when no ``sed -i -e SCRIPT`` makes exactly this edit
    (*no_sed* says why), and ``""`` when the usual pattern script does.
    """

    text: str | None
    lines: tuple[tuple[int, int], ...]  # the (first, last) line of each assignment removed, as dotenv counts lines
    reason: str | None = None
    sed: str | None = None
    no_sed: str | None = None


def remove_assignments(text: str, variable: str) -> EnvFileEdit:
    """*text* without every assignment of *variable* (each of its own lines, nothing else), or why not.

    The edit is made only when the rest reads the same afterwards: the other
    assignments, in order, with the same values.  Deleting an assignment can
    change what follows it (an unclosed quote earlier may now reach further);
    such a file is not edited.
    """
    if any(end in text for end in _JS_ONLY_LINE_ENDS):
        return EnvFileEdit(
            None, (), "it holds a Unicode line or paragraph separator (U+2028, U+2029), which nxsock does not model"
        )
    every, mine = _scan(text, variable)
    if not mine:
        return EnvFileEdit(None, (), f"no assignment in it sets {variable}")
    if len(mine) > ASSIGNMENTS_LIMIT:  # no real file does; a file built to be slow to edit is not edited
        return EnvFileEdit(None, (), f"it sets {variable} more than {ASSIGNMENTS_LIMIT} times, more than nxsock edits")
    pieces, at = [], 0
    for each in mine:
        pieces.append(text[at : each.start])
        at = each.end
    pieces.append(text[at:])
    edited = "".join(pieces)
    lines = tuple((a.first_line, a.last_line) for a in mine)
    if _scan(edited, "")[0] != [pair for pair in every if pair[0] != variable]:
        return EnvFileEdit(None, lines, f"removing {variable} would change how dotenv reads the rest of it")
    sed, no_sed = _sed_for(text, variable, edited, mine)
    return EnvFileEdit(edited, lines, None, sed, no_sed)


def remove_assignments_from_bytes(data: bytes, variable: str) -> bytes | str:
    """:func:`remove_assignments` on a file's bytes: the new bytes (every byte not removed kept as it was), or why
    not."""
    edit = remove_assignments(data.decode("utf-8", "surrogateescape"), variable)
    if edit.text is None:
        return edit.reason or "it cannot be edited"
    return edit.text.encode("utf-8", "surrogateescape")


# -- the ``sed`` that makes the same edit ------------------------------------------------------------------------
#
# ``sed`` reads a line as what ends in LF; ``[[:space:]]`` is ASCII in the C locale and more in a UTF-8 one
# (glibc's ``iswspace``).  A script is offered only when, run on these very lines, it deletes exactly what the
# edit deletes under every reading of ``[[:space:]]``.

_SED_SPACE_C = "[ \t\n\v\f\r]"
_SED_SPACE_WIDE = "[ \t\n\v\f\r\x1c-\x1f\x85\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]"


def sed_pattern(variable: str) -> str:
    """The BRE of a line that sets *variable*: ``NAME=``, ``export NAME =``, ``NAME: value``."""
    return rf"^[[:space:]]*\(export[[:space:]]\+\)\?{variable}\([[:space:]]*=\|:[[:space:]]\|:$\)"


def _sed_lines(text: str) -> list[str]:
    """The lines ``sed`` reads, each with its LF (the last one without, when the text does not end in one)."""
    pieces = text.split("\n")
    return [p + "\n" for p in pieces[:-1]] + ([pieces[-1]] if pieces[-1] else [])


def _sed_by_pattern(lines: list[str], variable: str, space: str) -> str:
    pattern = re.compile(rf"^{space}*(?:export{space}+)?{re.escape(variable)}(?:{space}*=|:{space}|:$)")
    return "".join(line for line in lines if not pattern.match(line.removesuffix("\n")))


def _sed_for(text: str, variable: str, edited: str, mine: list[Assignment]) -> tuple[str | None, str | None]:
    """The ``sed`` script (``""`` for :func:`sed_pattern`, else line numbers) that turns *text* into *edited*, or why
    none does."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", variable):
        return None, f"{variable} is not a name a sed pattern can hold as it is"
    lines = _sed_lines(text)
    if all(_sed_by_pattern(lines, variable, space) == edited for space in (_SED_SPACE_C, _SED_SPACE_WIDE)):
        return "", None
    numbers: list[tuple[int, int]] = []
    first, counted = 1, 0
    for each in mine:  # counted on from the one before: linear however many there are
        first += text.count("\n", counted, each.start)
        counted = each.start
        last = first + text.count("\n", each.start, max(each.end - 1, each.start))
        if numbers and numbers[-1][1] + 1 >= first:
            numbers[-1] = (numbers[-1][0], last)
        else:
            numbers.append((first, last))
    gone = {n for first, last in numbers for n in range(first, last + 1)}
    if "".join(line for n, line in enumerate(lines, 1) if n not in gone) == edited:
        return ";".join(f"{a}d" if a == b else f"{a},{b}d" for a, b in numbers), None
    if re.search("\r(?!\n)", text):
        return None, "its lines end in a lone carriage return (CR), which sed does not read as a line end"
    if text.startswith(_BOM) and mine[0].start == 1:
        return None, "it starts with a byte-order mark, which sed would delete with the first line"
    return None, "no sed command deletes exactly those lines"


def _expand(
    value: str, lookup: t.Mapping[str, str], environ: t.Container[str] = (), drawn: list[str] | None = None
) -> str:
    """``${VAR}``, ``$VAR``, ``${VAR:-default}`` and ``${VAR:+alt}`` as ``dotenv-expand`` reads them.

    Each name whose value came from *environ* (not from a file) is appended to *drawn*.
    """
    expansion = re.compile(r"(?<!\\)\$\{([^{}]+)\}|(?<!\\)\$([A-Za-z_][A-Za-z0-9_]*)")
    for _ in range(64):  # self-reference stops, as it does there
        if len(value) > EXPANSION_LIMIT:  # a value built to exhaust memory: no real path is this long
            break
        match = expansion.search(value)
        if match is None:
            break
        expression = match.group(1) or match.group(2)
        op = re.search(r":\+|\+|:-|-", expression)
        if op:
            key, default = expression[: op.start()], expression[op.end() :]
        else:
            key, default = expression, ""
        if op and op.group() in (":+", "+"):
            replacement = default if lookup.get(key) else ""
        else:
            replacement = lookup.get(key) or default
            if drawn is not None and key in environ and lookup.get(key) and key not in drawn:
                drawn.append(key)
        value = value[: match.start()] + replacement + value[match.end() :]
    return value.replace("\\$", "$")


def load_dotenv_variables(
    view: FsView, workspace_root: str, environ: t.Mapping[str, str], wanted: t.Container[str] | None = None
) -> dict[str, Variable]:
    """The variables (the *wanted* ones, else all) Nx's root ``.env`` files add: the environment wins, then the first
    file to set a key.

    Only what is returned is expanded, each expansion bounded, so a file of
    many keys referring to one long value costs no more than its few wanted keys.
    An expanded value keeps the text as written and the names it drew from
    *environ* (:attr:`Variable.written`, :attr:`Variable.expanded_from`).
    """
    found: dict[str, Variable] = {}
    for name in DOTENV_FILES:
        path = join(workspace_root, name)
        text = view.read_text(
            path, DOTENV_LIMIT, follow=True
        )  # Node's readFileSync follows a link; the trust rule judges it
        if isinstance(text, int):
            continue
        for key, value in parse_dotenv(text).items():
            if key not in found:
                found[key] = Variable(value, path)
    lookup = {k: v.value for k, v in found.items()}
    lookup.update(environ)
    loaded = {}
    for key, var in found.items():
        if environ.get(key) or (wanted is not None and key not in wanted):
            continue
        drawn: list[str] = []
        value = _expand(var.value, lookup, environ, drawn)
        loaded[key] = Variable(value, var.source, var.value, tuple(drawn)) if value != var.value else var
    return loaded
