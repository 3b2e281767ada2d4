"""``mlaudit tensorboard LOGDIR``: audit a TensorBoard log directory."""

from __future__ import annotations

from pathlib import Path

import typer

from ._common import (
    CONFIG,
    DRY_RUN,
    FAIL_ON,
    FORMAT,
    NO_WRITE,
    NOTIFY,
    OUT,
    VERBOSE,
    FailOn,
    Format,
    run_pipeline,
)


def register(app: typer.Typer) -> None:
    @app.command("tensorboard")
    def tensorboard_cmd(
        logdir: Path = typer.Argument(..., help="TensorBoard log directory (searched recursively)."),
        fmt: Format = FORMAT, out: Path = OUT, fail_on: FailOn = FAIL_ON, config: Path = CONFIG,
        dry_run: bool = DRY_RUN, no_write: bool = NO_WRITE, verbose: bool = VERBOSE,
        notify: list[str] = NOTIFY,
    ) -> None:
        """Audit a TensorBoard log directory; write the verdict as a text summary in its own event file."""
        from mlaudit_core.plugins import get_plugin

        plugin = get_plugin("tensorboard")
        wb = None if no_write else (lambda run, rep: plugin.write_back(run, rep, dry_run=dry_run))
        run_pipeline(lambda: plugin.load(str(logdir)), fmt=fmt, out=out, fail_on=fail_on, config=config,
                     write_back=wb, verbose=verbose, what=f"log directory {logdir}",
                     notify=notify, dry_run=dry_run)
