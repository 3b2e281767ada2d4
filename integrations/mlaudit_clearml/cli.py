"""The ClearML plugin's commands: ``mlaudit clearml TASK_ID``, ``mlaudit watch clearml --project P``
and ``mlaudit batch clearml --project P`` (registered by :func:`register`, the plugin's ``cli``
member; ``docs/extending.md``). Importing this module imports no SDK."""

from __future__ import annotations

from pathlib import Path

import typer

from mlaudit.cli import cmd_batch as B
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
    run_batch_cli,
    run_pipeline,
    settings_or_fail,
)


def register(app: typer.Typer) -> None:
    from mlaudit.cli.cmd_watch import (
        CONCURRENCY,
        COOLDOWN,
        LIVE,
        ONCE,
        SINCE,
        STALL_FLOOR,
        STATE,
        STOP_ON,
        live_options,
        run_watch,
        setup_logging,
        watch_app,
        watch_config,
    )

    @app.command("clearml")
    def clearml_cmd(
        task_id: str = typer.Argument(
            None, metavar="TASK_ID", help="ClearML task id. Not needed with --offline."
        ),
        offline: Path = typer.Option(
            None,
            "--offline",
            metavar="PATH",
            help="Read an offline session folder or zip (Task.set_offline(True)) "
            "instead of the server; nothing is written back.",
        ),
        no_baselines: bool = typer.Option(
            False,
            "--no-baselines",
            help="Do not compare with baseline tasks (parent, same name or labels in the project).",
        ),
        no_panel: bool = typer.Option(
            False,
            "--no-panel",
            help="Do not report the HTML report and plots (title 'mlaudit') to the task.",
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
        """Audit a ClearML task; write labels, user properties, a comment section and a report panel
        back. Credentials: clearml.conf or CLEARML_API_HOST / CLEARML_API_ACCESS_KEY /
        CLEARML_API_SECRET_KEY."""
        from mlaudit.cli.api import fail
        from mlaudit_core.plugins import get_plugin

        if offline is None and not task_id:
            fail("give a TASK_ID, or --offline PATH")
        plugin = get_plugin("clearml", offline=str(offline) if offline else None)
        if offline is not None:
            load, what = (lambda: plugin.load(task_id)), f"ClearML offline session {offline}"
        elif no_baselines:
            load, what = (lambda: plugin.load(task_id)), f"ClearML task {task_id}"
        else:
            load, what = (lambda: plugin.load_with_baselines(task_id)), f"ClearML task {task_id}"
        # an offline session gets nothing written; its write_back only says so (as W&B's offline
        # runs do), so the user is not left wondering where the verdict went
        wb = (
            None
            if no_write
            else (lambda run, rep: plugin.write_back(run, rep, dry_run=dry_run, panel=not no_panel))
        )
        run_pipeline(
            load,
            fmt=fmt,
            out=out,
            fail_on=fail_on,
            config=config,
            write_back=wb,
            verbose=verbose,
            what=what,
            notify=notify,
            dry_run=dry_run,
        )

    B.batch_app.command("clearml")(batch_clearml)

    @watch_app.command("clearml")
    def watch_clearml(
        project: str = typer.Option(
            ..., "--project", "-p", help="The ClearML project to watch (its name)."
        ),
        queue: str = typer.Option(
            None,
            "--queue",
            "-q",
            help="Run the watcher as a ClearML service on this queue (start_remotely, "
            "e.g. 'services') instead of in this process.",
        ),
        status: str = typer.Option(
            "completed,failed,stopped",
            "--status",
            help="Comma-separated task statuses that count as ended.",
        ),
        poll_interval: float = typer.Option(
            30.0,
            "--poll-interval",
            min=0.1,
            max=60480.0,
            help="Seconds between the ClearML Monitor's polls of the server; "
            "the project is also listed every 10 polls (catch-up and "
            "safety net).",
        ),
        concurrency: int = CONCURRENCY,
        state: Path = STATE,
        since: str = SINCE,
        once: bool = ONCE,
        interval: float = typer.Option(
            None, "--interval", hidden=True, help="Old name of --poll-interval."
        ),
        no_panel: bool = typer.Option(
            False, "--no-panel", help="Do not report the HTML report and plots."
        ),
        config: Path = CONFIG,
        notify: list[str] = NOTIFY,
        live: bool = LIVE,
        stop_on: str = STOP_ON,
        stall_floor: float = STALL_FLOOR,
        cooldown: float = COOLDOWN,
    ) -> None:
        """Audit every task of a project when it completes, fails or is stopped: ClearML's public
        Monitor class is the trigger, the shared watcher core audits each task ending once (state
        file), also across restarts, and skips none. With ``--live``, in-progress tasks are
        followed too (every --poll-interval; --stop-on aborts the task: docs/live.md)."""
        from mlaudit.cli.api import fail
        from mlaudit_clearml.mapping import FINISHED_STATUSES
        from mlaudit_clearml.watcher import LIST_EVERY
        from mlaudit_core.errors import MlauditError

        statuses = tuple(dict.fromkeys(s.strip() for s in status.split(",") if s.strip()))
        if not statuses or any(s not in FINISHED_STATUSES for s in statuses):
            fail(f"--status {status!r}: use {', '.join(FINISHED_STATUSES)} (comma-separated)")
        every = poll_interval if interval is None else interval
        if not 0 < every <= 60480:  # listed every 10 polls: the shared core's one-week cap / 10
            name = "--poll-interval" if interval is None else "--interval"
            fail(f"{name} {every}: must be a positive number of seconds, at most 60480")
        if queue is not None and once:
            fail("--queue and --once do not go together (a service runs until stopped)")
        cfg = watch_config(every * LIST_EVERY, concurrency, since, once)
        live_cfg = live_options(live, every, stop_on, stall_floor, cooldown)

        def make_live(source):
            from mlaudit_clearml.live import ClearMLLiveSource

            return ClearMLLiveSource([project], session=source.plugin.session)

        def make_source():
            from mlaudit_clearml.watcher import ClearMLWatchSource
            from mlaudit_core.plugins import get_plugin

            return ClearMLWatchSource(get_plugin("clearml"), project, statuses, panel=not no_panel)

        if queue is not None:
            from mlaudit_clearml.watcher import enqueue, running_on_agent

            try:
                if not running_on_agent():  # on the agent the same command runs the watcher below
                    setup_logging()
                    enqueue(make_source(), queue, every)
                    raise typer.Exit(0)
            except MlauditError as exc:
                fail(str(exc))

        def serve(watcher) -> None:
            from mlaudit_clearml.watcher import run_with_trigger

            run_with_trigger(watcher, every)

        run_watch(
            make_source,
            state=state,
            config=config,
            watch=cfg,
            notify=notify,
            serve=None if once else serve,
            live=None if live_cfg is None else (make_live, live_cfg),
        )


def batch_clearml(
    project: str = typer.Option(..., "--project", "-p", help="The ClearML project (its name)."),
    since: str = B.SINCE,
    jobs: int = B.JOBS,
    executor: str = B.EXECUTOR,
    ray_address: str = B.RAY_ADDRESS,
    state: Path = B.STATE,
    fresh: bool = B.FRESH,
    worst: int = B.WORST,
    no_write: bool = NO_WRITE,
    config: Path = CONFIG,
    fmt: str = B.FORMAT,
    triage: bool = B.TRIAGE,
) -> None:
    """Audit every ended task of a ClearML project and write each verdict back.

    Ended: completed, failed or stopped. Written: labels, user properties, comment section,
    report panel. Credentials: clearml.conf or CLEARML_API_HOST / CLEARML_API_ACCESS_KEY /
    CLEARML_API_SECRET_KEY; with --executor ray they travel to the workers inside each task
    (never printed or logged).
    """
    settings = settings_or_fail(config)

    def prepare():
        from mlaudit_core.plugins import get_plugin
        from mlaudit_core.service import TaskSpec, parse_since

        since_dt = parse_since(since)
        plugin = get_plugin("clearml")
        refs = plugin.list_runs(project, since_dt)
        spec = TaskSpec(
            "clearml",
            (),
            settings.model_dump(),
            write_back=not no_write,
            env=clearml_worker_env(plugin.session),
        )
        where["plugin"] = plugin
        return refs, spec, f"clearml {plugin.session.host} project={project}"

    where: dict = {}

    def run_triage(results: list) -> tuple:
        return _triage_clearml(where["plugin"], project, results, write=not no_write)

    run_batch_cli(
        prepare,
        title=f"clearml project {project}",
        tracker="clearml",
        name=project,
        state=state,
        jobs=jobs,
        executor=executor,
        ray_address=ray_address,
        fresh=fresh,
        worst=worst,
        fmt=fmt,
        triage=run_triage if triage else None,
    )


def _triage_clearml(plugin, project: str, results: list, *, write: bool) -> tuple:
    """Triage of the batch's tasks; merged into the project's description (``write``).
    Returns ``(Triage, where written or None)``."""
    from mlaudit_clearml.sweep_triage import records, write_triage
    from mlaudit_core.redact import redact_tree
    from mlaudit_core.triage import triage

    pid = plugin.project_id(project)
    tri = triage(records(plugin.session, pid, results))
    failed = sum(not r.ok for r in results)
    if failed:
        tri.statements.insert(0, f"{failed} run(s) could not be audited and take no part")
    if not write:
        return tri, None
    done = write_triage(plugin.session, pid, redact_tree(tri.to_dict()))
    where = f"the description of ClearML project {project!r} (mlaudit's section; the rest kept)"
    if not done.verified:
        where += (
            "; the description changed again while it was written: the next triage merges again"
        )
    return tri, where


def clearml_worker_env(session) -> tuple[tuple[str, str], ...]:
    """What a batch's workers need to reach the ClearML server the listing used (``TaskSpec.env``).

    Every ``CLEARML_*`` / ``TRAINS_*`` variable of this process, then the API, web and files
    hosts and the access/secret key pair as ``session`` (the logged-in SDK ``Session``)
    resolved them from ``clearml.conf`` or the environment, so they reach a Ray worker on a
    machine without that file. A host the SDK cannot infer is left out (the worker's SDK
    infers it the same way).
    """
    env = B.env_with_prefix("CLEARML_", "TRAINS_")
    env["CLEARML_API_HOST"] = str(session.host)
    for name, getter in (
        ("CLEARML_WEB_HOST", session.get_app_server_host),
        ("CLEARML_FILES_HOST", session.get_files_server_host),
    ):
        try:
            env[name] = str(getter())
        except ValueError:  # "Could not detect ClearML web application server"
            pass
    if session.access_key and session.secret_key:  # None with CLEARML_AUTH_TOKEN (forwarded)
        env["CLEARML_API_ACCESS_KEY"] = str(session.access_key)
        env["CLEARML_API_SECRET_KEY"] = str(session.secret_key)
    return tuple(sorted(env.items()))
