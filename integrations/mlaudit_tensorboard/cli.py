"""The TensorBoard plugin's commands (registered by :func:`register`, the plugin's ``cli``
member; ``docs/extending.md``): ``mlaudit tensorboard LOGDIR`` audits a log directory;
``mlaudit watch tensorboard LOGDIR --live`` follows one while it is written. Importing this
module imports no SDK."""

from __future__ import annotations

from pathlib import Path

import typer

from mlaudit.cli import cmd_watch as W
from mlaudit.cli.api import (
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
    fail,
    run_pipeline,
    settings_or_fail,
    setup_logging,
    with_notify,
)


def register(app: typer.Typer) -> None:
    W.watch_app.command("tensorboard")(watch_tensorboard)

    @app.command("tensorboard")
    def tensorboard_cmd(
        logdir: Path = typer.Argument(
            ..., help="TensorBoard log directory (searched recursively)."
        ),
        fmt: Format = FORMAT,
        out: Path = OUT,
        fail_on: FailOn = FAIL_ON,
        config: Path = CONFIG,
        dry_run: bool = DRY_RUN,
        no_write: bool = NO_WRITE,
        verbose: bool = VERBOSE,
        notify: list[str] = NOTIFY,
    ) -> None:
        """Audit a TensorBoard log directory; write the verdict as a text summary in its own event file."""
        from mlaudit_core.plugins import get_plugin

        plugin = get_plugin("tensorboard")
        wb = None if no_write else (lambda run, rep: plugin.write_back(run, rep, dry_run=dry_run))
        run_pipeline(
            lambda: plugin.load(str(logdir)),
            fmt=fmt,
            out=out,
            fail_on=fail_on,
            config=config,
            write_back=wb,
            verbose=verbose,
            what=f"log directory {logdir}",
            notify=notify,
            dry_run=dry_run,
        )


def watch_tensorboard(
    logdir: list[Path] = typer.Argument(
        ..., help="TensorBoard log directory of one run; repeat for several."
    ),
    live: bool = typer.Option(
        False,
        "--live",
        help="Follow the runs while they are written "
        "(required: a TensorBoard run has no 'finished' state to watch for).",
    ),
    poll_interval: float = W.POLL_INTERVAL,
    state: Path = W.STATE,
    once: bool = W.ONCE,
    config: Path = CONFIG,
    notify: list[str] = NOTIFY,
    stop_on: str = W.STOP_ON,
    stall_floor: float = W.STALL_FLOOR,
    cooldown: float = W.COOLDOWN,
) -> None:
    """Follow TensorBoard log directories live: each poll reads the event files from the byte
    where the last one stopped; alerts go to --notify and LOGDIR/mlaudit/live.json."""

    if not live:
        fail("watch tensorboard needs --live (TensorBoard runs have no end state to watch for)")
    for d in logdir:
        if not d.is_dir():
            fail(f"{d}: not a directory (give a TensorBoard log directory)")
    live_cfg = W.live_options(True, poll_interval, stop_on, stall_floor, cooldown)
    settings = with_notify(settings_or_fail(config), notify or [])
    setup_logging()
    from mlaudit_tensorboard.live import TensorBoardLiveSource

    source = TensorBoardLiveSource(list(logdir))
    scope = "tensorboard-live " + ",".join(sorted(str(p) for p in source.logdirs))
    W.run_live_watch(
        source, scope, "tensorboard", state=state, settings=settings, live_cfg=live_cfg, once=once
    )
