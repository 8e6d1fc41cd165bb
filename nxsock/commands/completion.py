"""What the shells complete for an option's value, where click's own choices do not say it.  Light: TAB loads it."""

from __future__ import annotations

import click
from click.shell_completion import CompletionItem

__all__ = ["complete_directories"]


def complete_directories(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """Let the shell complete directory names (bash ``compgen -d``, zsh ``_path_files -/``, fish
    ``__fish_complete_directories``)."""
    return [CompletionItem(incomplete, type="dir")]
