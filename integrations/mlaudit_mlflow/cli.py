"""The MLflow plugin's commands (registered by :func:`register`, the plugin's ``cli`` member;
``docs/extending.md``): ``mlaudit mlflow RUN_ID`` audits a run and writes the verdict back onto
it; ``mlaudit watch mlflow``, ``mlaudit batch mlflow`` and ``mlaudit serve mlflow-webhook``
(:mod:`.cli_webhook`). Importing this module imports no SDK."""

from __future__ import annotations

import logging
from pathlib import Path

import typer

from mlaudit.cli import cmd_batch as B
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
    run_batch_cli,
    run_pipeline,
    run_watch,
    settings_or_fail,
    watch_config,
)


def register(app: typer.Typer) -> None:
    from .cli_webhook import register as register_webhook

    register_webhook(app)
    W.watch_app.command("mlflow")(watch_mlflow)
    B.batch_app.command("mlflow")(batch_mlflow)

    @app.command("mlflow")
    def mlflow_cmd(
        run_id: str = typer.Argument(..., help="MLflow run id."),
        tracking_uri: str = typer.Option(
            None,
            "--tracking-uri",
            "-u",
            envvar="MLFLOW_TRACKING_URI",
            help="Server URL, sqlite:///path or file store (default: MLFLOW_TRACKING_URI).",
        ),
        fmt: Format = FORMAT,
        out: Path = OUT,
        fail_on: FailOn = FAIL_ON,
        config: Path = CONFIG,
        dry_run: bool = DRY_RUN,
        no_write: bool = NO_WRITE,
        verbose: bool = VERBOSE,
        notify: list[str] = NOTIFY,
        baseline: list[str] = typer.Option(
            None,
            "--baseline",
            "-b",
            help="Baseline run id (repeatable; several seeds give a noise "
            "band). Default: runs tagged mlaudit.baseline, the parent run, "
            "or recent finished runs with the same params except the seed.",
        ),
        no_baselines: bool = typer.Option(
            False, "--no-baselines", help="Do not look for baselines."
        ),
    ) -> None:
        """Audit an MLflow run; write tags, mlaudit/ artifacts and a Description section back."""
        from mlaudit_core.plugins import get_plugin

        plugin = get_plugin("mlflow", tracking_uri=tracking_uri)
        wb = None if no_write else (lambda run, rep: plugin.write_back(run, rep, dry_run=dry_run))

        def audit_fn(run, settings):
            from mlaudit_core.audit import audit, audit_with_baselines
            from mlaudit_core.baseline.selection import BaselinePolicy, select_baselines

            if no_baselines and not baseline:
                return audit(run, settings)
            policy = BaselinePolicy(explicit=list(baseline or []))
            sel = select_baselines(run, plugin.find_baselines(run, policy), policy)
            run.warnings.extend(sel.warnings)
            if not sel.runs:
                return audit(run, settings)
            return audit_with_baselines(
                run, [plugin.load(r.identity.id) for r in sel.runs], settings
            )

        run_pipeline(
            lambda: plugin.load(run_id),
            fmt=fmt,
            out=out,
            fail_on=fail_on,
            config=config,
            write_back=wb,
            verbose=verbose,
            what=f"mlflow run {run_id}",
            notify=notify,
            dry_run=dry_run,
            audit_fn=audit_fn,
        )


def _mlflow_source(plugin, scope: str, experiments: list[str]):
    from mlaudit_core.service import PluginSource

    class MlflowWatchSource(PluginSource):
        """Finished MLflow runs of the named experiments without an ``mlaudit.verdict`` tag."""

        page_limit = 1000
        audited_artifacts = ("mlaudit/report.html",)

        def __init__(self) -> None:
            super().__init__(plugin, scope)
            self._ids: list[str] | None = None

        def list_finished(self, since):
            if self._ids is None:  # resolved on the first listing, under its retries
                self._ids = self.plugin.experiment_ids(experiments)
            return self.plugin.list_finished(
                since,
                experiment_ids=self._ids,
                max_results=self.page_limit,
                no_end_time_since=self.floor,
            )

    return MlflowWatchSource()


def watch_mlflow(
    experiment: list[str] = typer.Option(
        ..., "--experiment", "-e", help="Experiment name; repeat for several."
    ),
    poll_interval: float = W.POLL_INTERVAL,
    concurrency: int = W.CONCURRENCY,
    state: Path = W.STATE,
    since: str = W.SINCE,
    once: bool = W.ONCE,
    config: Path = CONFIG,
    tracking_uri: str = typer.Option(
        None,
        "--tracking-uri",
        "-u",
        envvar="MLFLOW_TRACKING_URI",
        help="Server URL or database URI (default: MLFLOW_TRACKING_URI).",
    ),
    notify: list[str] = NOTIFY,
    live: bool = W.LIVE,
    stop_on: str = W.STOP_ON,
    stall_floor: float = W.STALL_FLOOR,
    cooldown: float = W.COOLDOWN,
) -> None:
    """Watch MLflow experiments: audit each finished run; write tags, artifacts, Description.

    With ``--live``, RUNNING runs are followed too (docs/live.md)."""
    cfg = watch_config(poll_interval, concurrency, since, once)
    live_cfg = W.live_options(live, poll_interval, stop_on, stall_floor, cooldown)

    def make_source():
        from mlaudit_core.errors import MlauditError
        from mlaudit_core.plugins import get_plugin
        from mlaudit_core.redact import strip_uri_credentials

        plugin = get_plugin("mlflow", tracking_uri=tracking_uri)
        from mlaudit_mlflow.loader import resolve_uri

        names = ",".join(sorted(set(experiment)))
        scope = f"mlflow {strip_uri_credentials(resolve_uri(tracking_uri))} experiments={names}"
        source = _mlflow_source(plugin, scope, list(dict.fromkeys(experiment)))
        try:  # an unknown experiment is one line before any state or lock file is made
            source._ids = plugin.experiment_ids(list(dict.fromkeys(experiment)))
        except MlauditError:
            raise
        except Exception as exc:  # noqa: BLE001 - tracker outage: the watcher's listing retries it
            logging.getLogger("mlaudit").info(
                "experiments not resolved yet (%s); the first listing retries", type(exc).__name__
            )
        return source

    def make_live(source):
        from mlaudit_mlflow.live import MlflowLiveSource

        names = list(dict.fromkeys(experiment))
        return MlflowLiveSource(
            tracking_uri, source._ids, resolve=lambda: source.plugin.experiment_ids(names)
        )

    def with_app_inbox(watcher) -> None:
        # runs the MLflow server's `--app-name mlaudit` recorded as ended (docs/mlflow.md):
        # drained into the queue about every second; the listing stays the safety net
        from mlaudit_mlflow.server_app import InboxTrigger

        trigger = InboxTrigger(
            watcher.store.path, watcher, lambda: getattr(watcher.source, "_ids", None)
        ).start()
        try:
            code = watcher.run()
        finally:
            trigger.stop()
        if code:
            raise typer.Exit(code)

    run_watch(
        make_source,
        state=state,
        config=config,
        watch=cfg,
        notify=notify,
        live=None if live_cfg is None else (make_live, live_cfg),
        serve=None if once else with_app_inbox,
    )


def batch_mlflow(
    experiment: str = typer.Option(..., "--experiment", "-e", help="Experiment name."),
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
    tracking_uri: str = typer.Option(
        None,
        "--tracking-uri",
        "-u",
        envvar="MLFLOW_TRACKING_URI",
        help="Server URL or database URI (default: MLFLOW_TRACKING_URI).",
    ),
) -> None:
    """Audit every finished run of an MLflow experiment and write each verdict back."""
    settings = settings_or_fail(config)

    def prepare():
        from mlaudit_core.plugins import get_plugin
        from mlaudit_core.service import TaskSpec, parse_since

        since_dt = parse_since(since)
        plugin = get_plugin("mlflow", tracking_uri=tracking_uri)
        from mlaudit_mlflow.loader import resolve_uri

        uri = resolve_uri(tracking_uri)
        ids = plugin.experiment_ids([experiment])
        refs = plugin.list_finished(
            since_dt, experiment_ids=ids, include_audited=True, max_results=None
        )
        from mlaudit_mlflow.loader import client_for
        from mlaudit_mlflow.triage import triage_run_ids

        skip = triage_run_ids(client_for(uri), ids)  # mlaudit's own triage record
        refs = [r for r in refs if r not in skip]
        where["running"] = _running_count(client_for(uri), ids)
        where["uri"], where["ids"] = uri, ids
        spec = TaskSpec(
            "mlflow", (("tracking_uri", uri),), settings.model_dump(), write_back=not no_write
        )
        return refs, spec, f"mlflow {uri} experiment={experiment}"

    where: dict = {}

    def run_triage(results: list) -> tuple:
        return _triage_mlflow(where["uri"], where["ids"], results, write=not no_write)

    try:
        run_batch_cli(
            prepare,
            title=f"mlflow experiment {experiment}",
            tracker="mlflow",
            name=experiment,
            state=state,
            jobs=jobs,
            executor=executor,
            ray_address=ray_address,
            fresh=fresh,
            worst=worst,
            fmt=fmt,
            triage=run_triage if triage else None,
        )
    except typer.Exit as stop:
        from mlaudit_core.errors import EXIT_INCOMPLETE

        if stop.exit_code in (0, EXIT_INCOMPLETE):  # the batch ran; bad input stays one line
            _say_running_left_out(where.get("running", 0), experiment)
        raise
    _say_running_left_out(where.get("running", 0), experiment)


def _running_count(client, ids: list[str]) -> int:
    """How many runs of these experiments are RUNNING (0 when the server does not answer: the
    batch itself reports an unreachable server)."""
    from .triage import search_all

    try:
        return len(search_all(client, ids, "attributes.status = 'RUNNING'"))
    except Exception:  # noqa: BLE001
        return 0


def _say_running_left_out(n: int, experiment: str) -> None:
    """One stderr line, after the batch, when it left RUNNING runs out: a process killed by SIGKILL
    (the OOM killer, a scheduler) never ends its MLflow run, so the run stays RUNNING and no batch
    audits it. Nothing is printed when every run has ended."""
    if n:
        typer.echo(
            f"mlaudit: {n} run(s) of experiment {experiment!r} are still RUNNING and are not audited "
            "(a process killed by SIGKILL leaves its run RUNNING): `mlaudit mlflow RUN_ID` audits one, "
            "`mlaudit watch mlflow --experiment NAME --live` follows them",
            err=True,
        )


def _triage_mlflow(uri: str, ids: list[str], results: list, *, write: bool) -> tuple:
    """Triage of the batch's runs; written onto the experiment (``write``). Returns
    ``(Triage, where written or None)``."""
    from mlaudit_core.redact import redact_text, redact_tree
    from mlaudit_core.triage import render_html, render_text, triage

    from .loader import client_for
    from .triage import records, write_triage

    client = client_for(uri)
    tri = triage(records(client, ids, results))
    failed = sum(not r.ok for r in results)
    if failed:
        tri.statements.insert(0, f"{failed} run(s) could not be audited and take no part")
    if not write or len(ids) != 1:
        return tri, None
    # run-controlled text (param and tag values) is redacted before it is written anywhere
    run_id = write_triage(
        client,
        ids[0],
        redact_tree(tri.to_dict()),
        redact_text(render_text(tri)),
        redact_text(render_html(tri)),
    )
    return tri, (
        f"experiment tag mlaudit.triage and run {run_id} "
        "(artifacts mlaudit/triage.json, .md, .html)"
    )
