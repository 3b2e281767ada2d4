"""``mlaudit mlflow RUN_ID``: audit an MLflow run and write the verdict back onto it."""

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
    @app.command("mlflow")
    def mlflow_cmd(
        run_id: str = typer.Argument(..., help="MLflow run id."),
        tracking_uri: str = typer.Option(None, "--tracking-uri", "-u", envvar="MLFLOW_TRACKING_URI",
                                         help="Server URL, sqlite:///path or file store "
                                              "(default: MLFLOW_TRACKING_URI)."),
        fmt: Format = FORMAT, out: Path = OUT, fail_on: FailOn = FAIL_ON, config: Path = CONFIG,
        dry_run: bool = DRY_RUN, no_write: bool = NO_WRITE, verbose: bool = VERBOSE,
        notify: list[str] = NOTIFY,
        baseline: list[str] = typer.Option(None, "--baseline", "-b",
                                           help="Baseline run id (repeatable; several seeds give a noise "
                                                "band). Default: runs tagged mlaudit.baseline, the parent run, "
                                                "or recent finished runs with the same params except the seed."),
        no_baselines: bool = typer.Option(False, "--no-baselines", help="Do not look for baselines."),
    ) -> None:
        """Audit an MLflow run; write tags, mlaudit/ artifacts and a Description section back."""
        from mlaudit_core.plugins import get_plugin

        plugin = get_plugin("mlflow", tracking_uri=tracking_uri)
        wb = None if no_write else (lambda run, rep: plugin.write_back(run, rep, dry_run=dry_run))

        def audit_fn(run, settings):
            from mlaudit_core.audit import audit
            from mlaudit_core.baseline import audit_with_baselines
            from mlaudit_core.baseline.selection import BaselinePolicy, select_baselines

            if no_baselines and not baseline:
                return audit(run, settings)
            policy = BaselinePolicy(explicit=list(baseline or []))
            sel = select_baselines(run, plugin.find_baselines(run, policy), policy)
            run.warnings.extend(sel.warnings)
            if not sel.runs:
                return audit(run, settings)
            return audit_with_baselines(run, [plugin.load(r.identity.id) for r in sel.runs], settings)

        run_pipeline(lambda: plugin.load(run_id), fmt=fmt, out=out, fail_on=fail_on, config=config,
                     write_back=wb, verbose=verbose, what=f"mlflow run {run_id}",
                     notify=notify, dry_run=dry_run, audit_fn=audit_fn)
