"""The W&B plugin's commands: ``mlaudit wandb``, ``mlaudit serve wandb-webhook``,
``mlaudit watch wandb`` and ``mlaudit batch wandb`` (registered by :func:`register`, the
plugin's ``cli`` member; ``docs/extending.md``). Importing this module imports no SDK."""

from __future__ import annotations

import os
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

PANEL = typer.Option(
    False,
    "--panel/--no-panel",
    help="Also log the HTML report as a panel in the run's history. Off by "
    "default: it resumes the run (wandb.init resume='must'), which turns a "
    "crashed run 'failed', moves its heartbeat and re-fires run-state "
    "automations. Without it: tags, summary keys, notes, files.",
)

REPORT = typer.Option(
    False,
    "--report/--no-report",
    help="Also save the verdict as a W&B Report in the run's project, with "
    "metric panels at the findings' steps (needs wandb-workspaces, in "
    "mlaudit[wandb]). No resume: the run's state is left alone. A "
    "re-audit updates the same report (mlaudit/report_id).",
)


def _report_or_fail(report: bool) -> None:
    """--report without wandb-workspaces: one line, exit 2, before any audit."""
    if report:
        from mlaudit.cli.api import fail
        from mlaudit_wandb.report_view import INSTALL_HINT, available

        if not available():
            fail(f"--report needs wandb-workspaces: {INSTALL_HINT}")


def register(app: typer.Typer) -> None:
    from mlaudit.cli.api import DEFAULT_HEADER_TIMEOUT_S, DEFAULT_MAX_CONNECTIONS, serve_app
    from mlaudit.cli.cmd_watch import (
        CONCURRENCY,
        COOLDOWN,
        LIVE,
        ONCE,
        POLL_INTERVAL,
        SINCE,
        STALL_FLOOR,
        STATE,
        STOP_ON,
        live_options,
        run_watch,
        watch_app,
        watch_config,
    )

    @app.command("wandb")
    def wandb_cmd(
        ref: str = typer.Argument(
            None,
            metavar="ENTITY/PROJECT/RUN_ID",
            help="The run (or its URL). Not needed with --offline.",
        ),
        offline: Path = typer.Option(
            None,
            "--offline",
            metavar="RUN_DIR",
            help="Read an offline run directory (run-<id>.wandb + files/) "
            "instead of the W&B server; nothing is written back.",
        ),
        panel: bool = PANEL,
        report: bool = REPORT,
        timeout: int = typer.Option(30, "--timeout", help="Seconds per W&B API request."),
        fmt: Format = FORMAT,
        out: Path = OUT,
        fail_on: FailOn = FAIL_ON,
        config: Path = CONFIG,
        dry_run: bool = DRY_RUN,
        no_write: bool = NO_WRITE,
        verbose: bool = VERBOSE,
        notify: list[str] = NOTIFY,
    ) -> None:
        """Audit a W&B run; write tags, mlaudit/ summary keys, a notes section and report files
        back (with --panel also a report panel). Credentials: WANDB_API_KEY / WANDB_BASE_URL /
        ~/.netrc."""
        from mlaudit.cli.api import fail
        from mlaudit_core.plugins import get_plugin

        if offline is None and not ref:
            fail("give ENTITY/PROJECT/RUN_ID, or --offline RUN_DIR")
        _report_or_fail(report and not no_write and offline is None)
        plugin = get_plugin("wandb", timeout=timeout, panel=panel, report=report)
        if offline is not None:

            def load():
                from mlaudit.cli.api import err_console
                from mlaudit_wandb.offline import find_log

                run_dir = find_log(offline).parent
                if offline.is_dir() and offline.resolve() != run_dir.resolve():  # latest-run
                    n = sum(1 for d in offline.glob("*run-*") if d.is_dir() and not d.is_symlink())
                    err_console.print(
                        f"{offline}: auditing the latest run, {run_dir.name} ({n} run "
                        f"director{'y' if n == 1 else 'ies'} there; give one to "
                        "audit another)",
                        markup=False,
                        highlight=False,
                        soft_wrap=True,
                    )
                return plugin.load(str(run_dir), offline=True)

            what = f"offline W&B run {offline}"
        else:
            load, what = (lambda: plugin.load(ref)), f"W&B run {ref}"
        wb = (
            None
            if no_write
            else (
                lambda run, rep: plugin.write_back(
                    run, rep, dry_run=dry_run, panel=panel, report_view=report
                )
            )
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

    @serve_app.command("wandb-webhook")
    def serve_wandb(
        host: str = typer.Option("127.0.0.1", "--host", help="Interface to listen on."),
        port: int = typer.Option(8787, "--port", min=1, max=65535, help="TCP port."),
        state: Path = typer.Option(
            None,
            "--state",
            "--queue-db",
            help="State file (sqlite) holding the queue and what was audited; "
            "survives restarts (default ./.mlaudit/watch-wandb-"
            "webhook-<hash>.sqlite).",
        ),
        max_queue: int = typer.Option(1000, "--max-queue", min=1, help="Runs waiting before 503."),
        max_attempts: int = typer.Option(
            5, "--max-attempts", min=1, help="Tries per run before giving up."
        ),
        concurrency: int = CONCURRENCY,
        project: list[str] = typer.Option(
            [],
            "--project",
            "-p",
            metavar="ENTITY/PROJECT",
            help="Also list this project's ended runs every "
            "--poll-interval seconds (a safety net for lost "
            "deliveries); repeat for several.",
        ),
        poll_interval: float = typer.Option(
            300.0, "--poll-interval", min=0.1, help="Seconds between --project listings."
        ),
        max_connections: int = typer.Option(
            DEFAULT_MAX_CONNECTIONS,
            "--max-connections",
            min=1,
            max=10000,
            help="Connections served at once; more get 503 (uvicorn limit_concurrency).",
        ),
        header_timeout: float = typer.Option(
            DEFAULT_HEADER_TIMEOUT_S,
            "--header-timeout",
            min=0.1,
            max=3600,
            help="Seconds a connection may take to send its request headers; then it is closed.",
        ),
        body_timeout: float = typer.Option(
            10.0,
            "--body-timeout",
            min=0.1,
            max=3600,
            help="Seconds a delivery may take to send its body; then 408.",
        ),
        panel: bool = PANEL,
        report: bool = REPORT,
        config: Path = CONFIG,
        notify: list[str] = NOTIFY,
        install_automation: str = typer.Option(
            None,
            "--install-automation",
            metavar="ENTITY/PROJECT",
            help="Create the W&B Automation (run finished/failed -> the team webhook) in this "
            "project through wandb.automations, then exit; see docs/wandb.md.",
        ),
        webhook: str = typer.Option(
            None,
            "--webhook",
            metavar="NAME",
            help="With --install-automation: the team webhook to use (default: the only one).",
        ),
        automation_name: str = typer.Option(
            "mlaudit-triage", "--automation-name", help="With --install-automation: its name."
        ),
    ) -> None:
        """Receive W&B Automations webhooks (run finished/failed) and audit each run.

        The shared secret (the webhook's access token, sent as Authorization: Bearer) is read
        from MLAUDIT_WANDB_WEBHOOK_SECRET; it is never printed. Runs go through the shared
        watcher core: a restart loses nothing, a failed audit is retried with backoff.
        With --install-automation ENTITY/PROJECT it creates the Automation and exits.
        """
        import signal
        import socket
        import threading

        from mlaudit.cli.api import fail
        from mlaudit_wandb.triage import SECRET_ENV

        if install_automation is not None:
            _install_automation(install_automation, webhook, automation_name)
            return

        secret = os.environ.get(SECRET_ENV, "").strip()  # a newline from an env file never matches
        if not secret:
            fail(f"set {SECRET_ENV} to the webhook's access token (W&B sends it as a Bearer token)")
        projects = _projects_or_fail(project)
        try:  # bind check first: an unusable host/port is one line, before any file is made
            with socket.create_server((host, port)):
                pass
        except OSError as exc:
            fail(f"--host {host} --port {port}: cannot listen ({exc.strerror or exc})")
        scope = "wandb webhook" + (
            f" projects={','.join(sorted(set(projects)))}" if projects else ""
        )
        cfg = watch_config(poll_interval, concurrency, None, False)
        cfg.max_attempts, cfg.max_pending = max_attempts, max_queue

        def serve(watcher) -> None:
            from mlaudit.cli.api import make_server
            from mlaudit_wandb.triage import make_app

            server = make_server(
                make_app(watcher, secret, body_timeout_s=body_timeout),
                host,
                port,
                max_connections=max_connections,
                header_timeout_s=header_timeout,
            )
            died: list[BaseException] = []

            def run_watcher() -> None:  # if the watcher stops on its own, the receiver stops too
                try:
                    watcher.run()
                except BaseException as exc:  # noqa: BLE001 - reported after the server stops
                    died.append(exc)
                finally:
                    server.should_exit = True

            runner = threading.Thread(target=run_watcher, name="mlaudit-watch", daemon=True)
            runner.start()
            typer.echo(
                f"mlaudit: W&B webhook receiver on http://{host}:{port}/webhook "
                f"(state {watcher.store.path})"
            )
            # uvicorn catches SIGINT/SIGTERM, shuts down, restores the handlers it found and
            # raises the signal again: with these handlers that stops the watcher, exit 0
            for sig in (signal.SIGTERM, signal.SIGINT):
                signal.signal(sig, watcher.stop)
            try:
                server.run()
            finally:
                watcher.stop()
                runner.join(cfg.grace_s + 5)
            if died:
                from mlaudit_core.errors import MlauditError

                exc = died[0]
                if isinstance(exc, MlauditError):
                    raise exc
                raise RuntimeError(f"the watcher stopped: {type(exc).__name__}: {exc}") from exc

        _report_or_fail(report)
        run_watch(
            lambda: _wandb_source(scope, projects, panel, report),
            state=state,
            config=config,
            watch=cfg,
            notify=notify,
            serve=serve,
        )

    B.batch_app.command("wandb")(batch_wandb)

    @watch_app.command("wandb")
    def watch_wandb(
        project: list[str] = typer.Option(
            ...,
            "--project",
            "-p",
            metavar="ENTITY/PROJECT",
            help="The project to watch; repeat for several.",
        ),
        poll_interval: float = POLL_INTERVAL,
        concurrency: int = CONCURRENCY,
        state: Path = STATE,
        since: str = SINCE,
        once: bool = ONCE,
        interval: float = typer.Option(
            None, "--interval", hidden=True, help="Old name of --poll-interval."
        ),
        panel: bool = PANEL,
        report: bool = REPORT,
        config: Path = CONFIG,
        notify: list[str] = NOTIFY,
        live: bool = LIVE,
        stop_on: str = STOP_ON,
        stall_floor: float = STALL_FLOOR,
        cooldown: float = COOLDOWN,
    ) -> None:
        """Poll W&B projects and audit every run that ended and carries no verdict yet (the
        fallback for plans without Automations); tags, summary keys, notes, files (--panel: panel).

        With ``--live``, running runs are followed too (docs/live.md)."""
        projects = _projects_or_fail(project)
        every = interval if interval is not None else poll_interval
        cfg = watch_config(every, concurrency, since, once)
        live_cfg = live_options(live, every, stop_on, stall_floor, cooldown)
        scope = f"wandb projects={','.join(sorted(set(projects)))}"

        def make_live(source):
            from mlaudit_wandb.live import WandbLiveSource

            return WandbLiveSource(projects)

        _report_or_fail(report)
        run_watch(
            lambda: _wandb_source(scope, projects, panel, report),
            state=state,
            config=config,
            watch=cfg,
            notify=notify,
            live=None if live_cfg is None else (make_live, live_cfg),
        )


def _install_automation(project: str, webhook: str | None, name: str) -> None:
    """``--install-automation``: create the run-state Automation; one line, exit 0 (also when
    it exists already), exit 2 for bad input or a server without run-state automations."""
    from mlaudit.cli.api import fail
    from mlaudit_core.errors import MlauditError
    from mlaudit_core.plugins import get_plugin
    from mlaudit_wandb.automation import PAYLOAD, install_automation
    from mlaudit_wandb.online import sdk_errors

    [project] = _projects_or_fail([project])
    try:
        api = get_plugin("wandb").api
        with sdk_errors(project):
            done = install_automation(api, project, webhook=webhook, name=name)
    except MlauditError as exc:
        fail(str(exc))
    import json

    verb = "created" if done.created else "exists already (left unchanged)"
    typer.echo(
        f"mlaudit: automation {done.name!r} in {done.project} {verb}: runs that finish or "
        f"fail -> webhook {done.webhook!r} ({done.url}), payload {json.dumps(PAYLOAD)}"
    )


def _projects_or_fail(projects: list[str]) -> list[str]:
    from mlaudit.cli.api import fail
    from mlaudit_wandb.online import valid_segment

    for p in projects:
        entity, _, name = p.partition("/")
        if not (valid_segment(entity) and valid_segment(name)):
            fail(f"--project {p!r}: expected ENTITY/PROJECT (names without spaces, ?, #, :, %)")
    return list(dict.fromkeys(projects))


def _wandb_source(scope: str, projects: list[str], panel: bool, report: bool = False):
    """The W&B source, its key checked before any state file is made (exit 2 when refused)."""
    from mlaudit_core.plugins import get_plugin
    from mlaudit_wandb.triage import WandbWatchSource

    plugin = get_plugin("wandb", panel=panel, report=report)
    source = WandbWatchSource(plugin, scope, projects)
    source.check_access()
    return source


def batch_wandb(
    project: str = typer.Option(
        ..., "--project", "-p", metavar="ENTITY/PROJECT", help="The W&B project."
    ),
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
    timeout: int = typer.Option(30, "--timeout", help="Seconds per W&B API request."),
    triage: bool = B.TRIAGE,
    report: bool = typer.Option(
        False,
        "--report/--no-report",
        help="With --triage: save the triage as the W&B Report "
        "'mlaudit triage: <project>' (needs wandb-workspaces; a "
        "later triage replaces it unless someone edited it) instead "
        "of a section of the project's description.",
    ),
) -> None:
    """Audit every ended run of a W&B project and write each verdict back.

    Written: tags, mlaudit/ summary keys, notes section, report files; no report panel
    (logging it resumes the run). Credentials: WANDB_API_KEY / WANDB_BASE_URL / ~/.netrc;
    with --executor ray they travel to the workers inside each task (never printed or logged).
    """
    settings = settings_or_fail(config)
    if report and not triage:
        from mlaudit.cli.api import fail

        fail(
            "--report goes with --triage on 'batch wandb' (a run's own report: "
            "'mlaudit wandb RUN --report')"
        )
    _report_or_fail(report)

    def prepare():
        from mlaudit_core.plugins import get_plugin
        from mlaudit_core.service import TaskSpec, parse_since

        since_dt = parse_since(since)
        options = (("timeout", timeout), ("panel", False))
        plugin = get_plugin("wandb", **dict(options))
        refs = plugin.list_runs(project, since_dt)
        from mlaudit_wandb.online import base_url

        spec = TaskSpec(
            "wandb",
            options,
            settings.model_dump(),
            write_back=not no_write,
            env=wandb_worker_env(plugin.api),
        )
        return refs, spec, f"wandb {base_url()} project={project}"

    def run_triage(results: list) -> tuple:
        return _triage_wandb(project, results, report=report, write=not no_write, timeout=timeout)

    run_batch_cli(
        prepare,
        title=f"wandb project {project}",
        tracker="wandb",
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


def _triage_wandb(project: str, results: list, *, report: bool, write: bool, timeout: int) -> tuple:
    """Triage of the batch's runs; written (``write``) as the project's W&B Report with
    ``report``, else into the project's description. Returns ``(Triage, where or None)``."""
    from mlaudit_core.redact import redact_tree
    from mlaudit_core.triage import triage
    from mlaudit_wandb.online import make_api
    from mlaudit_wandb.sweep_triage import records, save_report, write_project_summary

    api = make_api(timeout)
    tri = triage(records(api, project, results))
    failed = sum(not r.ok for r in results)
    if failed:
        tri.statements.insert(0, f"{failed} run(s) could not be audited and take no part")
    if not write:
        return tri, None
    if not report:
        done = write_project_summary(api, project, redact_tree(tri.to_dict()))
        where = f"the description of W&B project {project} (mlaudit's section; the rest kept)"
        if not done.verified:
            where += (
                "; the description changed again while it was written: the next triage merges again"
            )
        return tri, where
    saved = save_report(api, project, redact_tree(tri.to_dict()))
    where = f"W&B report {saved.url}" + (
        f" (report {saved.kept_edited} was edited by someone since the last triage: kept, "
        "this triage saved as a new report)"
        if saved.kept_edited
        else ""
    )
    return tri, where


def wandb_worker_env(api) -> tuple[tuple[str, str], ...]:
    """What a batch's workers need to reach the W&B server the listing used (``TaskSpec.env``).

    Every ``WANDB_*`` variable of this process, then ``WANDB_BASE_URL`` and ``WANDB_API_KEY``
    as ``api`` (a logged-in ``wandb.Api``) resolved them, so a key read from ``~/.netrc`` or
    ``wandb login`` reaches a Ray worker on another machine too. No key when ``api`` is
    authenticated otherwise (an identity token): its ``WANDB_*`` variables are forwarded.
    """
    env = B.env_with_prefix("WANDB_")
    env["WANDB_BASE_URL"] = str(api.settings["base_url"])
    if getattr(api, "api_key", None):
        env["WANDB_API_KEY"] = str(api.api_key)
    return tuple(sorted(env.items()))
