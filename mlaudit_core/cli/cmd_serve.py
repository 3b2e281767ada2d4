"""``mlaudit serve <receiver>``: the command group of the webhook receivers.

Tracker modules add their subcommand to :data:`serve_app` (e.g. ``cmd_wandb``
adds ``mlaudit serve wandb-webhook``); this module only registers the group.
"""

from __future__ import annotations

import typer

serve_app = typer.Typer(name="serve", no_args_is_help=True,
                        help="Run a receiver that audits runs when a tracker calls it.")


def register(app: typer.Typer) -> None:
    app.add_typer(serve_app, name="serve")
