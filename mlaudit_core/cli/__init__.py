"""The ``mlaudit`` command line (typer).

Each command group lives in its own ``cmd_*.py`` module exposing
``register(app)``; modules import tracker SDKs only inside the command that
needs them, so ``mlaudit --help`` imports none.

Exit codes: 0 audit done (no finding at or above ``--fail-on``); 1 findings at or
above ``--fail-on``; 2 bad input or usage (one line on stderr, nothing written
back); 3 internal error.
"""

from __future__ import annotations

import importlib
import pkgutil

import typer

app = typer.Typer(
    name="mlaudit",
    help="Evidence-backed diagnosis of ML training runs, written back into the tracker.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        from .. import __version__

        typer.echo(f"mlaudit {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(version: bool = typer.Option(False, "--version", help="Print the version and exit.",
                                       callback=_version, is_eager=True)) -> None:
    """Evidence-backed diagnosis of ML training runs, written back into the tracker."""


def _register_all() -> None:
    for mod in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if mod.name.startswith("cmd_"):
            importlib.import_module(f"{__name__}.{mod.name}").register(app)


_register_all()


def main() -> None:
    """Console-script entry point.

    Usage errors (unknown option, bad choice, missing argument) are one line on stderr,
    ``<command>: <problem> (see '<command> --help')``, exit 2, instead of click's boxed
    multi-line message; everything else is click's standalone behaviour.
    """
    import sys

    try:  # typer >= 0.29 vendors click as typer._click; older typer uses click itself
        from typer._click import exceptions as click
    except ImportError:  # pragma: no cover - older typer
        from click import exceptions as click

    try:
        code = app(standalone_mode=False)
    except click.NoArgsIsHelpError as exc:  # bare group: its help, as before
        exc.show()
        sys.exit(exc.exit_code)
    except click.UsageError as exc:
        cmd = exc.ctx.command_path if exc.ctx is not None else "mlaudit"
        msg = " ".join(exc.format_message().split())
        sys.stderr.write(f"{cmd}: {msg} (see '{cmd} --help')\n")
        sys.exit(2)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except (click.Exit, typer.Exit) as exc:
        sys.exit(exc.exit_code)
    except click.Abort:
        sys.stderr.write("Aborted!\n")
        sys.exit(1)
    sys.exit(code if isinstance(code, int) else 0)
