"""The ``nxsock`` click application: a lazy group over thin command modules.

Subcommands are imported only when invoked, so shell completion and
``--help`` load neither rich nor any command they do not run.
"""

from __future__ import annotations

import click

from .commands.summaries import SUMMARIES

__all__ = ["cli", "run"]

def load_command(name: str) -> click.Command | None:
    """The subcommand *name*, imported now and only now; ``None`` for a name that is none.

    Each import is written out, so what the group reaches is plain to read and to tools.
    """
    if name == "paths":
        from .commands.paths import paths

        return paths
    if name == "check-root":
        from .commands.check_root import check_root

        return check_root
    if name == "provision":
        from .commands.provision import provision

        return provision
    if name == "cache":
        from .commands.cache import cache

        return cache
    if name == "reset":
        from .commands.reset import reset

        return reset
    if name == "doctor":
        from .commands.doctor import doctor

        return doctor
    if name == "schema":
        from .commands.schema import schema

        return schema
    return None


class LazyGroup(click.Group):
    """A group whose subcommands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(SUMMARIES)  # the order --help lists them

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return load_command(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # Listing help from the table keeps ``--help`` from importing every command.
        with formatter.section("Commands"):
            formatter.write_dl(list(SUMMARIES.items()))


@click.group(cls=LazyGroup, name="nxsock", context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(
    package_name="nxsock", prog_name="nxsock", message="%(prog)s %(version)s", help="Show the version and exit."
)
@click.option("--debug", is_flag=True, help="Show the traceback of an internal error.")
def cli(debug: bool) -> None:  # read by nxsock.cli.main before click runs
    """Find out where Nx puts its sockets and native binding cache, why, and what to type when it fails.

    Exit codes: 0 fine, 1 a problem found, 2 usage, 70 internal error,
    73 no socket directory can be established, 74 standard output closed
    or refusing a write, 77 root needed, 78 configuration Nx refuses,
    130 Ctrl-C.
    """


def run(args: list[str]) -> int:
    """Run the group on *args*; return the exit code.

    Click's standalone mode would turn Ctrl-C into "Aborted!" and exit 1, the
    code for "a problem found"; here it stays a ``KeyboardInterrupt`` for
    :func:`nxsock.cli.main` to end with 130.  Usage errors are shown as click
    shows them (exit 2).
    """
    try:
        result = cli.main(args=args, prog_name="nxsock", standalone_mode=False)
    except click.exceptions.Abort:
        raise KeyboardInterrupt(ECHOED) from None
    except click.BadParameter as exc:
        # A bad value is one line that names the command, the option and what is wrong with it.
        command = exc.ctx.command_path if exc.ctx is not None else "nxsock"
        from .core.terminal import printable

        hint = exc.param_hint or (exc.param.opts[0] if exc.param is not None and exc.param.opts else "a value")
        if not isinstance(hint, str):
            hint = " / ".join(hint)
        from .commands._resolution import BadValuePointing

        where = "" if isinstance(exc, BadValuePointing) else f" (see {command} --help)"  # one pointer, not two
        line = f"{command}: invalid {hint}: {exc.message.rstrip('.')}{where}"
        click.echo(printable(line), err=True)  # the value may carry a terminal escape
        return exc.exit_code
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    return result if isinstance(result, int) else 0


#: The ``KeyboardInterrupt`` argument saying click already ended the terminal's ``^C`` line.
ECHOED = "echoed"
