"""What a public report must not carry: secret-shaped strings, and values a refused ``.env`` drew from your environment.

Two pure functions, used by every text ``doctor --report`` and ``doctor
--format github`` print and (:func:`withhold` only) by ``paths --json``:

- :func:`redact` replaces what looks like a credential — GitHub tokens
  (``ghp_…``, ``gho_…``, ``ghu_…``, ``ghs_…``, ``ghr_…``, ``github_pat_…``), AWS
  access key ids (``AKIA…``) and secret keys, npm tokens (``npm_…``), Slack
  tokens (``xox…-``), JWT-like strings (``eyJ….eyJ….``), the credentials of
  a URL (``scheme://user:pass@``) and a value after a name that says it is a
  secret (``password=``, ``token:``, ``_authToken=``, ``"password": "…"``: a quoted value whole) — by :data:`REDACTED`;
- :func:`withhold` shows each value a ``.env`` another user controls expanded
  from your environment (``${GITHUB_TOKEN}``) as it is written in the file.
"""

from __future__ import annotations

import re
import typing as t

from .terminal import printable

__all__ = ["REDACTED", "redact", "withhold"]

#: What a secret is shown as.
REDACTED = "<redacted>"

# A token's own characters: a match never starts or ends inside a longer word of them; a ``_`` before a prefix
# (``/tmp/ci_ghp_…``, ``token_npm_…``) is a separator, as in a name built from the token, not part of the token.
_B = r"(?<![A-Za-z0-9])"
_E = r"(?![A-Za-z0-9_])"
_SHAPES = re.compile(
    "|".join(
        (
            rf"{_B}gh[pousr]_[A-Za-z0-9_]{{16,}}",  # GitHub: personal, OAuth, user-to-server, server-to-server, refresh
            rf"{_B}github_pat_[A-Za-z0-9_]{{16,}}",  # GitHub fine-grained personal access token
            rf"{_B}(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|APKA)[A-Z0-9]{{16}}{_E}",  # AWS key ids
            rf"{_B}npm_[A-Za-z0-9]{{16,}}{_E}",  # npm
            rf"{_B}xox[abposr]-[A-Za-z0-9-]{{8,}}",  # Slack bot, user, app-level, refresh tokens
            rf"{_B}xapp-[A-Za-z0-9-]{{8,}}",
            # a JWT: header.payload.signature
            r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*",
            # An AWS secret access key: 40 characters of base64 holding upper, lower case and a digit, standing alone.
            r"(?<![A-Za-z0-9/+=])(?=[A-Za-z0-9/+]{0,39}[A-Z])(?=[A-Za-z0-9/+]{0,39}[a-z])(?=[A-Za-z0-9/+]{0,39}[0-9])"
            r"[A-Za-z0-9+][A-Za-z0-9/+]{39}(?![A-Za-z0-9/+=])",
        )
    )
)
#: The credentials of a URL, ``scheme://user:password@`` (the user part may be empty): both are hidden.
_URL_CREDENTIALS = re.compile(r"(?<![A-Za-z+.-])([A-Za-z][A-Za-z0-9+.-]*://)[^\s/@:'\"`]*:[^\s/@'\"`]*@")
#: A value after a name that says it is a secret: ``aws_secret_access_key=…``, ``password: …``, ``token=…``.
_NAMED = re.compile(
    r"(?i)(?<![A-Za-z0-9])((?:aws_?)?secret(?:_?access)?_?key|password|api_?key|auth_?token|access_?token|"
    r"client_?secret|_authToken|token|secret)(['\"]?\s*[=:]\s*)(?!['\"]?<redacted>)('[^'\n]+'|\"[^\"\n]+\"|[^\s'\"`,;]+)"
)


def _quoted_like(value: str) -> str:
    """:data:`REDACTED` in the quotes *value* stood in, if any (``"hunter2"`` -> ``"<redacted>"``)."""
    return f"{value[0]}{REDACTED}{value[0]}" if value[0] in "'\"" else REDACTED


def redact(text: str) -> str:
    """*text* with every secret-shaped string replaced by :data:`REDACTED`.

    Pure and idempotent: ``redact(redact(x)) == redact(x)``; text holding no
    secret shape is returned unchanged.

    >>> redact("git clone https://x-access-token:ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/o/r")
    'git clone https://<redacted>@github.com/o/r'
    >>> redact("NX_SOCKET_DIR=/tmp/npm_aBcDeFgHiJkLmNoPqRsTuVwXyZ012345")
    'NX_SOCKET_DIR=/tmp/<redacted>'
    """
    if not text:
        return text
    text = _URL_CREDENTIALS.sub(lambda m: f"{m.group(1)}{REDACTED}@", text)
    text = _NAMED.sub(lambda m: f"{m.group(1)}{m.group(2)}{_quoted_like(m.group(3))}", text)
    return _SHAPES.sub(REDACTED, text)


def withhold(text: str, pairs: t.Sequence[tuple[str, str]]) -> str:
    r"""*text* with each ``(expanded, written)`` pair's expanded text shown as written, the longest first.

    A finding may quote a value as Python shows it (``NAME='a\nb'``) or with
    the terminal's escapes (``a\x0ab``): each of those spellings of the
    expanded text is shown as written too, so a secret holding a newline, a
    tab, a backslash or a control character is hidden like any other.

    >>> withhold("/tmp/leak-s3cr3t/d.sock", [("s3cr3t", "${TOKEN}")])
    '/tmp/leak-${TOKEN}/d.sock'
    >>> withhold("NX_SOCKET_DIR='/tmp/k-line1\\nline2'", [("line1\nline2", "${KEY}")])
    "NX_SOCKET_DIR='/tmp/k-${KEY}'"
    """
    spellings: dict[str, str] = {}
    for expanded, written in pairs:
        if expanded:
            for form in (expanded, repr(expanded)[1:-1], printable(expanded)):
                spellings.setdefault(form, written)
    for form in sorted(spellings, key=len, reverse=True):
        text = text.replace(form, spellings[form])
    return text
