"""Subcommands listed for completeness that are not built yet: each says so plainly."""

from __future__ import annotations

import sys

import click

#: sysexits' EX_UNAVAILABLE: the command exists but cannot serve yet.
UNAVAILABLE = 69


def _unbuilt(name: str, purpose: str) -> click.Command:
    @click.command(name, context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
    def command() -> None:
        click.echo(f"nxsock {name}: not built yet in this version. It will {purpose}.", err=True)
        sys.exit(UNAVAILABLE)

    command.help = f"Not built yet: it will {purpose}."
    return command


doctor = _unbuilt("doctor", "audit every level Nx depends on and print the command that fixes each problem")
