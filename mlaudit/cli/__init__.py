"""The ``mlaudit`` command line (typer).

Each built-in command group lives in its own ``cmd_*.py`` module exposing
``register(app)``; those name no tracker. Tracker commands (``mlaudit mlflow RUN``,
``watch wandb``, ``batch clearml``, ``serve wandb-webhook``...) come from the installed
plugins: each tracker plugin's ``cli`` member and each ``mlaudit.commands`` entry point
is a ``register(app)`` too (:func:`mlaudit_core.plugins.command_registrars`,
docs/extending.md). Modules import tracker SDKs only inside the command that needs
them, so ``mlaudit --help`` imports none.

The command tree is built on first use of :data:`app` (a module attribute resolved lazily),
so importing this module costs only typer, and ``mlaudit --version`` (handled by
:func:`main` before the tree is built) imports neither the command modules, nor the
plugins, nor ``mlaudit_core``'s analysis modules (``benchmarks/cli_import_time.py``).

Exit codes: 0 audit done (no finding at or above ``--fail-on``); 1 findings at or
above ``--fail-on``; 2 bad input or usage (one line on stderr, nothing written
back); 3 internal error.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

import typer

_app = typer.Typer(
    name="mlaudit",
    help="Evidence-backed diagnosis of ML training runs, written back into the tracker.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _dist_version() -> str:
    """The installed distribution's version, the string of ``mlaudit_core.__version__`` (read
    here without importing the ``mlaudit_core`` package root, which loads the analysis)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("mlaudit")
    except PackageNotFoundError:  # a source tree that was never installed
        return "0+unknown"


def _version(value: bool) -> None:
    if value:
        from mlaudit_core import __version__

        typer.echo(f"mlaudit {__version__}")
        raise typer.Exit(0)


@_app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", help="Print the version and exit.", callback=_version, is_eager=True
    ),
) -> None:
    """Evidence-backed diagnosis of ML training runs, written back into the tracker."""


def _register_all() -> None:
    import warnings

    from mlaudit_core.plugins import command_registrars

    for mod in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if mod.name.startswith("cmd_"):
            importlib.import_module(f"{__name__}.{mod.name}").register(_app)
    for name, register in command_registrars():
        try:
            register(_app)
        except Exception as exc:  # noqa: BLE001 - a broken plugin never breaks the host
            warnings.warn(f"plugin {name!r}: its commands failed to register: {exc}", stacklevel=2)


def _plain_help(typer_app: typer.Typer) -> None:
    """Help texts shown as written, in every command (plugins' included).

    typer's default rich markup mode (a) keeps the single line breaks of a docstring's first
    paragraph in a group's command list, so a wrapped docstring would print as ragged half-lines
    under ``mlaudit --help`` / ``watch --help`` / ``serve --help``; and (b) reads ``[...]`` as
    rich markup, so ``pip install 'mlaudit[mcp]'`` would print as ``pip install 'mlaudit'``.
    Here each command's summary becomes its first paragraph on one
    line, and brackets in help texts are escaped. No command uses rich markup in its help.
    """
    import inspect

    try:
        from rich.markup import escape
    except ImportError:  # pragma: no cover - typer without rich prints help as plain text

        def escape(text: str) -> str:
            return text

    for info in typer_app.registered_commands:
        doc = info.help if info.help is not None else inspect.getdoc(info.callback) or ""
        if info.short_help is None:
            first = doc.split("\n\n")[0]
            if "\n" in first or "[" in first:
                info.short_help = escape(" ".join(first.split()))
        if "[" in doc:
            info.help = escape(doc)
    for group in typer_app.registered_groups:
        if group.typer_instance is not None:
            _plain_help(group.typer_instance)


_built = False


def _full_app() -> typer.Typer:
    """The application with every built-in and plugin command registered (built once)."""
    global _built
    if not _built:
        _built = True
        _register_all()
        _plain_help(_app)
    return _app


def __getattr__(name: str) -> Any:
    if name == "app":
        return _full_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def entry_point_names() -> list[str]:
    """``group:name=value`` of every installed ``mlaudit.trackers`` and ``mlaudit.commands`` entry
    point (what :func:`_register_all` registers commands from), sorted."""
    from importlib.metadata import entry_points

    return sorted(
        f"{group}:{ep.name}={ep.value}"
        for group in ("mlaudit.trackers", "mlaudit.commands")
        for ep in entry_points(group=group)
    )


def help_rows() -> list[list]:
    """``[name, help text, help panel or None, deprecated]`` of every visible top-level command
    of the built tree, in the order ``mlaudit --help`` lists them (:mod:`._help_manifest`)."""
    group = typer.main.get_command(_full_app())
    rows = []
    for name in group.list_commands(None):  # type: ignore[attr-defined]
        cmd = group.get_command(None, name)  # type: ignore[attr-defined]
        if cmd is None or cmd.hidden:
            continue
        panel = getattr(cmd, "rich_help_panel", None)
        rows.append(
            [
                name,
                cmd.short_help or cmd.help or "",
                panel if isinstance(panel, str) else None,
                bool(cmd.deprecated),
            ]
        )
    return rows


def _light_help_app() -> typer.Typer | None:
    """The root command with placeholder commands named and described as the built tree's
    (:mod:`._help_manifest`), for ``mlaudit --help``; None when the installed entry points
    differ from the manifest's (a plugin added or removed: build the tree)."""
    from ._help_manifest import COMMANDS, ENTRY_POINTS

    if not COMMANDS or entry_point_names() != ENTRY_POINTS:
        return None
    light = typer.Typer(
        name=_app.info.name,
        help=_app.info.help,
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    light.callback()(_root)
    for name, text, panel, deprecated in COMMANDS:
        light.command(
            name, help=text, short_help=text, rich_help_panel=panel, deprecated=deprecated
        )(_placeholder)
    return light


def _placeholder() -> None:
    """Never run: the light help app only prints the command list."""


def _usage_context(exc):
    """The context of the command whose arguments failed to parse.

    click's option parser raises some usage errors (``Option '-f' requires an argument.``)
    without a context; the innermost ``ctx`` of the traceback is then the subcommand's.
    """
    if exc.ctx is not None:
        return exc.ctx
    found = None
    tb = exc.__traceback__
    while tb is not None:
        ctx = tb.tb_frame.f_locals.get("ctx")
        if ctx is not None and hasattr(ctx, "command_path"):
            found = ctx
        tb = tb.tb_next
    return found


def _internal_error(exc: BaseException) -> None:
    """One line ``mlaudit: internal error: <Type>: <first line>`` on stderr, exit 3; the
    traceback too with ``MLAUDIT_DEBUG=1``."""
    import os
    import sys
    import traceback

    from mlaudit_core.redact import redact_text

    if os.environ.get("MLAUDIT_DEBUG"):
        traceback.print_exception(exc)
    lines = str(exc).strip().splitlines()
    first = f": {lines[0]}" if lines else ""
    sys.stderr.write(redact_text(f"mlaudit: internal error: {type(exc).__name__}{first}") + "\n")
    sys.exit(3)


def _route_path(argv: list[str]) -> list[str]:
    """``mlaudit PATH ...`` is ``mlaudit audit PATH ...``: a first argument that is no command
    name and no option, and exists on disk (a broken link too) or looks like a path (has ``/``
    or a ``.``), is a PATH to audit. A command name always wins (write ``./mlflow`` for a
    folder so named)."""
    import os

    if not argv or argv[0].startswith("-"):
        return argv
    try:
        names = set(typer.main.get_command(_full_app()).commands)  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - never let routing break the CLI
        return argv
    first = argv[0]
    if first in names:
        return argv
    if os.path.lexists(first) or "/" in first or os.sep in first or "." in first:
        return ["audit", *argv]
    return argv


def _no_such_path_either(msg: str, argv: list[str], ctx) -> str:
    """click's ``No such command 'out'.`` for a first argument that is neither a command nor
    anything on disk: ``mlaudit PATH`` (the Use section's first line) with a mistyped or missing
    path lands there, so the line also says that no file or folder of that name exists (in the
    current folder), unless click already suggests a command (``Did you mean 'mlflow'?``)."""
    import os

    if (
        (ctx is None or ctx.parent is None)
        and argv
        and msg.startswith("No such command")
        and "Did you mean" not in msg
        and not os.path.lexists(argv[0])
    ):
        return f"{msg.rstrip('.')}, and no file or folder {argv[0]!r} in {os.getcwd()} to audit."
    return msg


def main() -> None:
    """Console-script entry point.

    Usage errors (unknown option, bad choice, missing argument) are one line on stderr,
    ``<command>: <problem> (see '<command> --help')``, exit 2, instead of click's boxed
    multi-line message. ``typer.Exit(n)`` exits ``n``; ``typer.Abort`` prints ``Aborted!``
    and exits 1; Ctrl-C exits 130 without a traceback. Any other exception is a bug: one
    line ``mlaudit: internal error: <Type>: <first line of the message>`` on stderr and
    exit 3 (``MLAUDIT_DEBUG=1`` adds the traceback).
    """
    import sys

    if sys.argv[1:] == ["--version"]:  # before the command tree and mlaudit_core load
        sys.stdout.write(f"mlaudit {_dist_version()}\n")
        sys.exit(0)
    if sys.argv[1:] in (["--help"], ["-h"]):  # the command list without building the tree
        light = _light_help_app()
        if light is not None:
            typer.main.get_command(light)(args=sys.argv[1:])  # prints the help, exits 0
    from mlaudit_core.sdk_private import typer_click_exceptions

    # the click typer runs on (typer >= 0.26 vendors it); without it, typer's public base class
    click = typer_click_exceptions()
    no_args_help = getattr(click, "NoArgsIsHelpError", ())  # click >= 8.2
    usage_error = getattr(click, "UsageError", ())
    click_error = getattr(click, "ClickException", None) or getattr(typer, "TyperException", ())
    # typer >= 0.27.2 defines Exit/Abort in typer.exceptions; click's own where it has them
    exits = tuple({typer.Exit, getattr(click, "Exit", typer.Exit)})
    aborts = tuple({typer.Abort, getattr(click, "Abort", typer.Abort)})
    try:
        code = _full_app()(args=_route_path(sys.argv[1:]), standalone_mode=False)
    except no_args_help as exc:  # bare group: its help, as before
        exc.show()
        sys.exit(exc.exit_code)
    except usage_error as exc:
        ctx = _usage_context(exc)
        cmd = ctx.command_path if ctx is not None else "mlaudit"
        msg = _no_such_path_either(" ".join(exc.format_message().split()), sys.argv[1:], ctx)
        sys.stderr.write(f"{cmd}: {msg} (see '{cmd} --help')\n")
        sys.exit(2)
    except click_error as exc:
        if hasattr(exc, "show"):
            exc.show()
        else:
            sys.stderr.write(f"Error: {exc.format_message()}\n")
        sys.exit(exc.exit_code)
    except exits as exc:
        sys.exit(exc.exit_code)
    except aborts:
        sys.stderr.write("Aborted!\n")
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as exc:  # noqa: BLE001 - a bug: one line and the documented exit code
        _internal_error(exc)
    sys.exit(code if isinstance(code, int) else 0)
