"""The workspace's ``.env`` files, read as the ``dotenv`` and ``dotenv-expand`` packages Nx uses read them.

Linear in what a file holds and bounded in what it may build: a ``.env`` is
input another user may have written.
"""

import re
import typing as t

from ._pathname import join
from .environment import Variable
from .fsview import FsView

__all__ = ["DOTENV_FILES", "load_dotenv_variables", "parse_dotenv"]

#: The files Nx loads from the workspace root, first match wins among them.
DOTENV_FILES = (".local.env", ".env.local", ".env")

#: The most of a ``.env`` file read; the rest is ignored (a real one is a few hundred bytes).
DOTENV_LIMIT = 1 << 20
#: The longest value ``${VAR}`` expansion may build; beyond it the value is kept unexpanded.
EXPANSION_LIMIT = 1 << 16

# dotenv's own line pattern, but for the leading blank: horizontal only.  Its ``^\s*`` under MULTILINE
# spans newlines, so every line start rescanned every blank line after it — quadratic in a file of
# blank lines.  Each key still matches at its own line's start, so what is parsed is the same.
_DOTENV_LINE = r"""^[^\S\n]*(?:export\s+)?([\w.-]+)(?:\s*=\s*?|:\s+?)(\s*'(?:\\'|[^'])*'|\s*"(?:\\"|[^"])*"|\s*`(?:\\`|[^`])*`|[^#\r\n]+)?\s*(?:\#.*)?$"""


def parse_dotenv(text: str) -> dict[str, str]:
    """Parse a ``.env`` file as the ``dotenv`` package Nx uses does (first definition of a key wins later).

    Linear in the text, whatever it holds; at most :data:`DOTENV_LIMIT` characters are read.
    """
    parsed: dict[str, str] = {}
    # Compiled on first use (``re`` caches it): most workspaces have no ``.env``, and paths --json runs on every job.
    for match in re.finditer(_DOTENV_LINE, text[:DOTENV_LIMIT].replace("\r\n", "\n").replace("\r", "\n"), re.MULTILINE):
        key, raw = match.group(1), (match.group(2) or "").strip()
        quote = raw[:1]
        if len(raw) >= 2 and quote in "'\"`" and raw.endswith(quote):
            raw = raw[1:-1]
        if quote == '"':
            raw = raw.replace("\\n", "\n").replace("\\r", "\r")
        parsed[key] = raw
    return parsed


def _expand(value: str, lookup: t.Mapping[str, str], environ: t.Container[str] = (), drawn: list[str] | None = None) -> str:
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
    """The variables (the *wanted* ones, else all) Nx's root ``.env`` files add: the environment wins, then the first file to set a key.

    Only what is returned is expanded, each expansion bounded, so a file of
    many keys referring to one long value costs no more than its few wanted keys.
    An expanded value keeps the text as written and the names it drew from
    *environ* (:attr:`Variable.written`, :attr:`Variable.expanded_from`).
    """
    found: dict[str, Variable] = {}
    for name in DOTENV_FILES:
        path = join(workspace_root, name)
        text = view.read_text(path, DOTENV_LIMIT, follow=True)  # Node's readFileSync follows a link; the trust rule judges it
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
