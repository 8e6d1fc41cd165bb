"""Where ``--format openmetrics`` goes: stdout, or a file written whole for node_exporter's textfile collector."""

from __future__ import annotations

import sys

import click

from .. import exitcodes

__all__ = ["nxsock_version", "publish_metrics"]


def nxsock_version() -> str:
    """nxsock's version from its package metadata; ``unknown`` for a copy without it (a source tree on PYTHONPATH)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("nxsock")
    except PackageNotFoundError:
        return "unknown"


def publish_metrics(text: str, output_file: str | None) -> int:
    """The metrics on stdout, or in *output_file* whole; 73 (one line on stderr) where it cannot be written."""
    if output_file is None:
        sys.stdout.write(text)
        return exitcodes.OK
    from ..act.textfile import publish_text

    problem = publish_text(output_file, text)
    if problem is not None:
        click.echo(f"nxsock: --output: {problem}", err=True)
        return exitcodes.CANTCREAT
    return exitcodes.OK
