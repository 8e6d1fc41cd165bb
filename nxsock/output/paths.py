"""``paths`` as it was asked, through click: the human report, the JSON document, or a sandbox's entries.

(``paths --json`` alone is answered before click loads, by :mod:`nxsock.cli` and
:mod:`nxsock.output.paths_json`; this module is for every other form.)
"""

from __future__ import annotations

import sys
import typing as t

import click

from .resolution import build_resolution

if t.TYPE_CHECKING:
    from ..core.host_overrides import HostOverrides

__all__ = ["PathsRequest", "run"]


class PathsRequest(t.NamedTuple):
    """Every option of ``paths``."""

    host: HostOverrides
    format: str | None = None  # None: the human report; json; or a sandbox format (srt, bwrap, env, …)
    portable: bool = False  # a sandbox format's Nx-style spellings, fit to commit


def run(request: PathsRequest) -> int:
    """The prediction, shown; 78 where Nx would refuse its configuration, 73 where no socket directory can be."""
    from .paths_json import paths_exit_code, print_paths_json

    resolution, view = build_resolution(request.host)
    if request.format == "json":
        return print_paths_json(resolution, sys.stdout, view)
    if request.format is not None:
        from ..audit.allowlists import plan_for, render
        from ..core.sandbox_formats import FORMATS
        from ..core.terminal import printable

        env = resolution.environment
        row = FORMATS[request.format]  # every fact of the format is on its row
        user_namespace, binds = row.kind(env.platform)
        tmpdir = row.tmpdir if env.platform == "linux" else None
        plan = plan_for(env, view, user_namespace=user_namespace, binds=binds, tmpdir=tmpdir)
        text, warnings = render(request.format, plan, resolution.environment, portable=request.portable)
        for warning in warnings:
            click.echo(f"nxsock paths: {printable(warning)}", err=True)
        sys.stdout.write(text)
        return paths_exit_code(plan.resolution)
    from .render import render_paths

    render_paths(resolution)
    return paths_exit_code(resolution)
