"""``mlaudit watch <tracker>``: the command group of the polling watchers.

Tracker modules add their subcommand to :data:`watch_app` (e.g. ``cmd_wandb``
adds ``mlaudit watch wandb``); this module only registers the group.
"""

from __future__ import annotations

import typer

watch_app = typer.Typer(name="watch", no_args_is_help=True,
                        help="Watch a tracker and audit runs as they end (polling).")


def register(app: typer.Typer) -> None:
    app.add_typer(watch_app, name="watch")
