"""Each command's one-line summary, declared once.

``nxsock --help`` lists these without importing a command; each command's own
``--help`` opens with the same line (:func:`summarized`).  Click-free.
"""

from __future__ import annotations

import inspect
import typing as t

__all__ = ["SUMMARIES", "summarized"]

#: Subcommand name → its summary, in the order ``nxsock --help`` lists them.
SUMMARIES = {
    "paths": "Where Nx will put its sockets and binding cache, and why.",
    "check-root": "Judge the shared container /tmp/.nx for the current user.",
    "provision": "Set up /tmp/.nx for everyone (root) or your own Nx tree (you).",
    "cache": "Where the binding cache is, what it holds, whether it is fresh; prune it.",
    "reset": "Remove this user's dead Nx runtime state, and nothing else.",
    "doctor": "Audit every level Nx depends on, with the command that fixes each problem.",
    "schema": "Print the JSON Schema of a --json document, or list them.",
}

F = t.TypeVar("F", bound=t.Callable[..., t.Any])


def summarized(name: str) -> t.Callable[[F], F]:
    """Open the decorated command's docstring (its ``--help``) with the summary of *name*."""

    def apply(function: F) -> F:
        details = inspect.cleandoc(function.__doc__ or "")
        function.__doc__ = f"{SUMMARIES[name]}\n\n{details}" if details else SUMMARIES[name]
        return function

    return apply
