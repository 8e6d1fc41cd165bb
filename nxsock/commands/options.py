"""The options that stand in for the host, declared once: click builds them, the fast path parses them.

``nxsock paths --json`` runs on every CI job, so it is answered without loading
click — for any spelling of its options, not only the bare one.  Both ways of
reading the command line come from :data:`HOST_OPTIONS`, so they cannot drift.
It imports nothing heavier than the value it fills, :class:`~nxsock.core.host_overrides.HostOverrides`.
"""

# No ``from __future__ import annotations`` here: typing compiles each string annotation of a NamedTuple
# field when the class is made, and this module is imported by every ``paths --json``.
import typing as t

from ..core.host_overrides import LAYOUTS, PLATFORMS, UID_MAX, HostOverrides
from ..core.releases import is_version

__all__ = ["HOST_OPTIONS", "HostOption", "parse_paths_json"]

class HostOption(t.NamedTuple):
    """One option: its flag, the :class:`HostOverrides` field it fills, and what values it takes."""

    flag: str
    field: str
    help: str
    metavar: str | None = None
    choices: tuple[str, ...] = ()  # a closed set of values, or any text when empty
    is_uid: bool = False  # a whole number from 0 to UID_MAX
    is_version: bool = False  # a version by semver's grammar, as Nx's package.json gives it


HOST_OPTIONS: tuple[HostOption, ...] = (
    HostOption(
        "--workspace",
        "workspace",
        "The workspace to resolve for (default: found from the current directory, as Nx finds it).",
        "DIR",
    ),
    HostOption(
        "--platform", "platform", "Compute a fresh machine of this kind instead of reading this one.", choices=PLATFORMS
    ),
    HostOption(
        "--uid",
        "uid",
        "Resolve as this uid (default: yours; 501 on darwin, 1000 on linux with --platform).",
        is_uid=True,
    ),
    HostOption("--home", "home", "Use this HOME.", "DIR"),
    HostOption("--tmpdir", "tmpdir", "Use this TMPDIR (TEMP on win32).", "DIR"),
    HostOption(
        "--username", "username", "The account name (--platform: names the home and, on win32, the temp dir).", "NAME"
    ),
    HostOption(
        "--nx-version",
        "nx_version",
        "Resolve for this Nx version instead of the installed one (preview an upgrade).",
        "VERSION",
        is_version=True,
    ),
    HostOption("--layout", "layout", "Force a layout generation instead of the installed version's.", choices=LAYOUTS),
)

_BY_FLAG = {option.flag: option for option in HOST_OPTIONS}


def _value(option: HostOption, text: str) -> str | int | None:
    """*text* as *option* takes it, or ``None`` where click must be the one to say what is wrong."""
    if option.is_uid:
        if not text.isascii() or not text.isdigit() or int(text) > UID_MAX:
            return None
        return int(text)
    if option.choices and text not in option.choices:
        return None
    if option.is_version and not is_version(text):
        return None
    return text


def parse_paths_json(args: t.Sequence[str]) -> HostOverrides | None:
    """The host overrides of a ``paths`` command line that asks for JSON, or ``None`` to leave it to click.

    Only lines click would accept and answer with the JSON document are taken: anything else — help, another
    format, an unknown or repeated option, a value click would refuse or read differently — goes to click,
    which gives the same answer or the proper usage error.

    >>> overrides = parse_paths_json(["paths", "--json", "--workspace", "/w", "--uid=7"])
    >>> overrides._asdict()  # doctest: +NORMALIZE_WHITESPACE
    {'workspace': '/w', 'platform': None, 'uid': 7, 'home': None, 'tmpdir': None, 'username': None,
     'nx_version': None, 'layout': None}
    >>> parse_paths_json(["paths", "--workspace", "/w"]) is None  # the human report needs click and rich
    True
    """
    if not args or args[0] != "paths":
        return None
    values: dict[str, str | int] = {}
    wants_json = False
    rest = list(args[1:])
    while rest:
        word = rest.pop(0)
        flag, has_value, inline = word.partition("=")
        if flag == "--json" and not has_value:
            wants_json = True
            continue
        if flag == "--format":
            text = inline if has_value else (rest.pop(0) if rest else None)
            if text != "json":
                return None
            wants_json = True
            continue
        option = _BY_FLAG.get(flag)
        if option is None or option.field in values:
            return None
        text = inline if has_value else (rest.pop(0) if rest else None)
        if text is None or (not has_value and text.startswith("-")):
            return None
        value = _value(option, text)
        if value is None:
            return None
        values[option.field] = value
    if not wants_json:
        return None
    return HostOverrides(**values)  # type: ignore[arg-type]  # fields and values checked above
