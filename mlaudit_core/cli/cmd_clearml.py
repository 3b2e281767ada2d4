"""``mlaudit clearml TASK_ID`` and ``mlaudit watch clearml --project P``."""

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
    from .cmd_watch import watch_app

    @app.command("clearml")
    def clearml_cmd(
        task_id: str = typer.Argument(None, metavar="TASK_ID", help="ClearML task id. Not needed with --offline."),
        offline: Path = typer.Option(None, "--offline", metavar="PATH",
                                     help="Read an offline session folder or zip (Task.set_offline(True)) "
                                          "instead of the server; nothing is written back."),
        no_baselines: bool = typer.Option(False, "--no-baselines",
                                          help="Do not compare with baseline tasks (parent, same name or "
                                               "labels in the project)."),
        no_panel: bool = typer.Option(False, "--no-panel", help="Do not report the HTML report and plots "
                                                                "(title 'mlaudit') to the task."),
        fmt: Format = FORMAT, out: Path = OUT, fail_on: FailOn = FAIL_ON, config: Path = CONFIG,
        dry_run: bool = DRY_RUN, no_write: bool = NO_WRITE, verbose: bool = VERBOSE,
        notify: list[str] = NOTIFY,
    ) -> None:
        """Audit a ClearML task; write labels, user properties, a comment section and a report panel
        back. Credentials: clearml.conf or CLEARML_API_HOST / CLEARML_API_ACCESS_KEY /
        CLEARML_API_SECRET_KEY."""
        from ..plugins import get_plugin
        from ._common import fail

        if offline is None and not task_id:
            fail("give a TASK_ID, or --offline PATH")
        plugin = get_plugin("clearml", offline=str(offline) if offline else None)
        if offline is not None:
            load, what = (lambda: plugin.load(task_id)), f"ClearML offline session {offline}"
        elif no_baselines:
            load, what = (lambda: plugin.load(task_id)), f"ClearML task {task_id}"
        else:
            load, what = (lambda: plugin.load_with_baselines(task_id)), f"ClearML task {task_id}"
        wb = None if (no_write or offline is not None) else (
            lambda run, rep: plugin.write_back(run, rep, dry_run=dry_run, panel=not no_panel))
        run_pipeline(load, fmt=fmt, out=out, fail_on=fail_on, config=config, write_back=wb,
                     verbose=verbose, what=what, notify=notify, dry_run=dry_run)

    @watch_app.command("clearml")
    def watch_clearml(
        project: str = typer.Option(..., "--project", "-p", help="The ClearML project to watch (its name)."),
        queue: str = typer.Option(None, "--queue", "-q",
                                  help="Run the watcher as a ClearML service on this queue (start_remotely, "
                                       "e.g. 'services') instead of in this process."),
        interval: float = typer.Option(60.0, "--interval", help="Seconds between polls of the server."),
        state: Path = typer.Option(None, "--state", help="SQLite guard file: tasks already judged and the "
                                                         "poll watermark (default ~/.mlaudit/clearml-watch-"
                                                         "<project>.sqlite)."),
        status: str = typer.Option("completed,failed,stopped", "--status",
                                   help="Comma-separated task statuses that trigger an audit."),
        once: bool = typer.Option(False, "--once", help="Audit what ended since the last watermark, then exit."),
        no_panel: bool = typer.Option(False, "--no-panel", help="Do not report the HTML report and plots."),
        config: Path = CONFIG,
    ) -> None:
        """Audit every task of a project when it completes, fails or is stopped, with ClearML's own
        TriggerScheduler; a restarted watcher never audits a task twice and skips none."""
        from ..errors import MlauditError
        from ._common import fail, settings_or_fail

        statuses = tuple(s.strip() for s in status.split(",") if s.strip())
        bad = [s for s in statuses if s not in ("completed", "failed", "stopped", "published", "closed")]
        if bad or not statuses:
            fail(f"--status {status!r}: use completed, failed, stopped (comma-separated)")
        if interval <= 0:
            fail(f"--interval {interval}: must be a positive number of seconds")
        settings = settings_or_fail(config)
        try:
            from mlaudit_clearml.watcher import Watcher, default_state_path

            watcher = Watcher(project, settings=settings, state_path=state or default_state_path(project),
                              interval_s=interval, statuses=statuses, panel=not no_panel, log=typer.echo)
            if once:
                n = watcher.catch_up()
                typer.echo(f"mlaudit: audited {n} tasks")
            elif queue:
                watcher.start_remotely(queue)
            else:
                watcher.start()
        except MlauditError as exc:
            fail(str(exc))
        except KeyboardInterrupt:
            raise typer.Exit(0)
