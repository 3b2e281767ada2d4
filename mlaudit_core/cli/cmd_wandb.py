"""``mlaudit wandb``, ``mlaudit serve wandb-webhook`` and ``mlaudit watch wandb``."""

from __future__ import annotations

import os
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

NO_PANEL = typer.Option(False, "--no-panel", help="Do not log the HTML report panel (it needs resuming "
                                                  "the run, which flips its state and re-fires "
                                                  "run-state automations).")


def register(app: typer.Typer) -> None:
    from .cmd_serve import serve_app
    from .cmd_watch import watch_app

    @app.command("wandb")
    def wandb_cmd(
        ref: str = typer.Argument(None, metavar="ENTITY/PROJECT/RUN_ID",
                                  help="The run (or its URL). Not needed with --offline."),
        offline: Path = typer.Option(None, "--offline", metavar="RUN_DIR",
                                     help="Read an offline run directory (run-<id>.wandb + files/) "
                                          "instead of the W&B server; nothing is written back."),
        no_panel: bool = NO_PANEL,
        timeout: int = typer.Option(30, "--timeout", help="Seconds per W&B API request."),
        fmt: Format = FORMAT, out: Path = OUT, fail_on: FailOn = FAIL_ON, config: Path = CONFIG,
        dry_run: bool = DRY_RUN, no_write: bool = NO_WRITE, verbose: bool = VERBOSE,
        notify: list[str] = NOTIFY,
    ) -> None:
        """Audit a W&B run; write tags, mlaudit/ summary keys, a notes section, report files and
        a report panel back. Credentials: WANDB_API_KEY / WANDB_BASE_URL / ~/.netrc."""
        from ..plugins import get_plugin
        from ._common import fail

        if offline is None and not ref:
            fail("give ENTITY/PROJECT/RUN_ID, or --offline RUN_DIR")
        plugin = get_plugin("wandb", timeout=timeout)
        if offline is not None:
            load, what = (lambda: plugin.load(str(offline), offline=True)), f"offline W&B run {offline}"
        else:
            load, what = (lambda: plugin.load(ref)), f"W&B run {ref}"
        wb = None if no_write else (lambda run, rep: plugin.write_back(run, rep, dry_run=dry_run,
                                                                        panel=not no_panel))
        run_pipeline(load, fmt=fmt, out=out, fail_on=fail_on, config=config, write_back=wb,
                     verbose=verbose, what=what, notify=notify, dry_run=dry_run)

    @serve_app.command("wandb-webhook")
    def serve_wandb(
        host: str = typer.Option("127.0.0.1", "--host", help="Interface to listen on."),
        port: int = typer.Option(8787, "--port", min=1, max=65535, help="TCP port."),
        queue_db: Path = typer.Option(Path("mlaudit-wandb-queue.sqlite"), "--queue-db",
                                      help="SQLite file persisting the queue (survives restarts)."),
        max_queue: int = typer.Option(1000, "--max-queue", min=1, help="Pending runs before 503."),
        max_attempts: int = typer.Option(5, "--max-attempts", min=1, help="Tries per run before giving up."),
        no_panel: bool = NO_PANEL, config: Path = CONFIG,
    ) -> None:
        """Receive W&B Automations webhooks (run finished/failed) and audit each run.

        The shared secret (the webhook's access token, sent as Authorization: Bearer) is read
        from MLAUDIT_WANDB_WEBHOOK_SECRET; it is never printed.
        """
        import uvicorn
        from mlaudit_wandb.triage import SECRET_ENV, RunQueue, Worker, judge, make_app

        from ..plugins import get_plugin
        from ._common import fail, settings_or_fail

        secret = os.environ.get(SECRET_ENV, "")
        if not secret:
            fail(f"set {SECRET_ENV} to the webhook's access token (W&B sends it as a Bearer token)")
        settings = settings_or_fail(config)
        plugin = get_plugin("wandb")
        import socket
        import sqlite3

        try:  # bind check first: an unusable host/port is one line, before any file is made
            with socket.create_server((host, port)):
                pass
        except OSError as exc:
            fail(f"--host {host} --port {port}: cannot listen ({exc.strerror or exc})")
        try:
            queue = RunQueue(queue_db, max_size=max_queue)
        except (sqlite3.Error, OSError) as exc:
            fail(f"--queue-db {queue_db}: not a usable queue database ({exc})")
        worker = Worker(queue, lambda ref: judge(plugin, ref, settings=settings, panel=not no_panel,
                                                 log=typer.echo),
                        max_attempts=max_attempts, log=typer.echo)
        worker.start()
        typer.echo(f"mlaudit: W&B webhook receiver on http://{host}:{port}/webhook "
                   f"({queue.depth()} runs pending in {queue_db})")
        try:
            uvicorn.run(make_app(queue, secret), host=host, port=port, log_level="warning")
        finally:
            worker.stop()
            queue.close()

    @watch_app.command("wandb")
    def watch_wandb(
        project: str = typer.Option(..., "--project", "-p", metavar="ENTITY/PROJECT",
                                    help="The project to watch."),
        interval: float = typer.Option(60.0, "--interval", help="Seconds between polls."),
        once: bool = typer.Option(False, "--once", help="Poll once and exit."),
        no_panel: bool = NO_PANEL, config: Path = CONFIG,
    ) -> None:
        """Poll a W&B project and audit every run that ended and carries no verdict yet
        (the fallback for plans without Automations)."""
        from mlaudit_wandb.triage import judge, poll

        from ..errors import MlauditError
        from ..plugins import get_plugin
        from ._common import fail, settings_or_fail

        if project.count("/") != 1:
            fail(f"--project {project!r}: expected ENTITY/PROJECT")
        settings = settings_or_fail(config)
        plugin = get_plugin("wandb")
        try:
            n = poll(lambda: plugin.list_finished(project=project),
                     lambda ref: judge(plugin, ref, settings=settings, panel=not no_panel,
                                       log=typer.echo),
                     interval_s=interval, once=once, log=typer.echo)
        except MlauditError as exc:
            fail(str(exc))
        except KeyboardInterrupt:
            raise typer.Exit(0)
        typer.echo(f"mlaudit: audited {n} runs")
