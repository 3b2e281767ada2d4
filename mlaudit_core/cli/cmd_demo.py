"""``mlaudit demo``: train real small runs into a local MLflow store, audit each, write verdicts back."""

from __future__ import annotations

from pathlib import Path

import typer

#: What each injected regime should be judged as (outcomes accepted, cause).
EXPECTED = {
    "healthy": ({"succeeded"}, "healthy"),
    "high_lr": ({"diverged"}, None),
    "overfit": ({"overfit"}, None),
    "underfit": ({"underfit", "plateaued"}, None),
    "starved": ({"slow"}, None),
}


def register(app: typer.Typer) -> None:
    @app.command("demo")
    def demo(
        directory: Path = typer.Option(Path("mlaudit-demo"), "--dir", help="Folder for the MLflow store "
                                       "(sqlite) and the TensorBoard logs."),
        seed: int = typer.Option(0, "--seed", help="Training seed."),
    ) -> None:
        """Train five real small runs (healthy, high LR, overfit, underfit, data-starved) on scikit-learn's
        digits, log them to a local MLflow store and TensorBoard, audit each and write the verdicts back."""
        from rich.console import Console
        from rich.table import Table

        from ..audit import audit
        from ..errors import MlauditError
        from ..plugins import get_plugin, require
        from ..signal import clip
        from ._common import fail

        try:
            require("sklearn", "scikit-learn", "examples")
            mlflow = require("mlflow", "mlflow", "mlflow")
            require("tensorboard", "tensorboard", "tensorboard")
            require("tensorboardX", "tensorboardX", "examples")
            from mlaudit_demo.regimes import REGIMES, train
        except MlauditError as exc:
            fail(str(exc))
        console = Console()
        directory = directory.resolve()
        directory.mkdir(parents=True, exist_ok=True)
        uri = f"sqlite:///{directory / 'mlflow.db'}"
        import logging

        for name in ("mlflow", "alembic"):
            logging.getLogger(name).setLevel(logging.WARNING)
        mlflow.set_tracking_uri(uri)
        exp_name = "mlaudit-demo"
        if mlflow.get_experiment_by_name(exp_name) is None:
            mlflow.create_experiment(exp_name, artifact_location=(directory / "artifacts").as_uri())
        mlflow.set_experiment(exp_name)
        mlf = get_plugin("mlflow", tracking_uri=uri)
        tb = get_plugin("tensorboard")
        table = Table("regime", "outcome", "cause", "conf", "TensorBoard", title="mlaudit demo")
        lines: list[str] = []
        mismatches = 0
        for regime in REGIMES:
            import time as _time

            # one fresh log directory per training, so re-running the demo never mixes two runs
            tb_dir = directory / "tensorboard" / f"{regime}-{_time.strftime('%Y%m%d-%H%M%S')}"
            with console.status(f"training {regime}…"):
                res = train(regime, seed=seed, tb_logdir=str(tb_dir), verbose=False)
            run = mlf.load(res["run_id"])
            report = audit(run)
            mlf.write_back(run, report)
            tb_run = tb.load(res["tb_logdir"])
            tb_report = audit(tb_run)
            tb.write_back(tb_run, tb_report)
            v = report.verdict
            outcomes, cause = EXPECTED.get(regime, (set(), None))
            ok = v.outcome.value in outcomes and (cause is None or v.cause.value == cause)
            mismatches += not ok
            top = next((f for f in report.findings if f.severity.rank >= 1), None)
            table.add_row(regime, ("" if ok else "[red]") + v.outcome.value, v.cause.value,
                          f"{v.confidence:.2f}", tb_report.verdict.outcome.value)
            lines.append(f"{regime}: run {res['run_id']}"
                         + (f"\n    {top.code}: {clip(top.message, 160)}" if top else ""))
        console.print(table)
        for line in lines:
            console.print(line, markup=False, highlight=False, soft_wrap=True)
        import shutil
        import sys

        def tool(name: str) -> str:  # the venv's own script when the venv is not activated
            return shutil.which(name) and name or str(Path(sys.executable).parent / name)

        console.print(f"\nStore: {uri}\nVerdicts are on the runs (tags mlaudit.*, Description, artifacts "
                      f"mlaudit/). Open:\n"
                      f"  {tool('mlflow')} ui --backend-store-uri {uri} --host 127.0.0.1 --port 5000\n"
                      f"  {tool('tensorboard')} --logdir {directory / 'tensorboard'}\n"
                      f"Audit one again:\n  {tool('mlaudit')} mlflow {res['run_id']} -u {uri}",
                      soft_wrap=True, markup=False, highlight=False)
        if mismatches:
            console.print(f"[red]{mismatches} regime(s) got a verdict other than the injected one[/]")
