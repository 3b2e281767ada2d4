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


#: Where ``mlflow ui`` (the command the demo prints) serves the UI.
UI_URL = "http://127.0.0.1:5000"
#: MLflow 3.x's experiment-kind tag and the value of classic training experiments: the UI opens
#: an experiment without it in the GenAI (traces) view (mlflow/server/js, ExperimentKind).
EXPERIMENT_KIND_TAG, EXPERIMENT_KIND = "mlflow.experimentKind", "custom_model_development"
#: The search filter that lists the runs mlaudit did not call succeeded.
NOT_SUCCEEDED = "tags.`mlaudit.verdict` != 'succeeded'"


def ui_links(base: str, experiment_id: str, runs: list[tuple[str, str]]) -> list[str]:
    """Lines with direct MLflow UI links: the experiment's runs list (the training-runs table,
    not the GenAI view), the same list filtered to runs not called succeeded, and each run's
    page; then how to show the verdict column.

    URL shapes are the MLflow 3.x UI routes (hash router): ``#/experiments/<id>/runs`` with
    the ``searchFilter`` query parameter, and ``#/experiments/<id>/runs/<run_id>``; MLflow
    2.x serves the same two routes. ``runs``: ``(label, run_id)`` pairs.
    """
    from urllib.parse import quote

    listing = f"{base}/#/experiments/{experiment_id}/runs"
    out = [
        f"  runs list:  {listing}",
        f"  not succeeded: {listing}?searchFilter={quote(NOT_SUCCEEDED, safe='')}",
    ]
    out += [f"  {label}: {base}/#/experiments/{experiment_id}/runs/{rid}" for label, rid in runs]
    out.append(
        "  To see verdicts in the runs list: Columns > Tags > tick mlaudit.verdict "
        "(and mlaudit.cause); filter with tags.`mlaudit.verdict` = 'diverged'."
    )
    return out


def register(app: typer.Typer) -> None:
    @app.command("demo")
    def demo(
        directory: Path = typer.Option(
            Path("mlaudit-demo"),
            "--dir",
            help="Folder for the MLflow store (sqlite) and the TensorBoard logs.",
        ),
        seed: int = typer.Option(0, "--seed", help="Training seed."),
    ) -> None:
        """Train five real small runs (healthy, high LR, overfit, underfit, data-starved) on scikit-learn's
        digits, log them to a local MLflow store and TensorBoard, audit each and write the verdicts back."""
        from rich.console import Console
        from rich.table import Table

        from mlaudit.cli.api import fail
        from mlaudit_core.audit import audit
        from mlaudit_core.errors import MlauditError
        from mlaudit_core.plugins import get_plugin, require
        from mlaudit_core.signal import clip

        try:
            require("sklearn", "scikit-learn", "examples")
            mlflow = require("mlflow", "mlflow", "mlflow")
            require("tensorboard", "tensorboard", "tensorboard")
            require("tensorboardX", "tensorboardX", "examples")
            from mlaudit_demo.regimes import REGIMES, train
        except MlauditError as exc:
            fail(str(exc))
        console = Console()
        try:
            directory = directory.resolve()
            directory.mkdir(parents=True, exist_ok=True)
        except (OSError, RuntimeError) as exc:  # a file, a link loop (RuntimeError), no access
            reason = getattr(exc, "strerror", None) or str(exc)
            fail(f"{directory}: cannot be the demo's folder ({reason})")
        uri = f"sqlite:///{directory / 'mlflow.db'}"
        import logging

        for name in ("mlflow", "alembic"):
            logging.getLogger(name).setLevel(logging.WARNING)
        mlflow.set_tracking_uri(uri)
        exp_name = "mlaudit-demo"
        if mlflow.get_experiment_by_name(exp_name) is None:
            mlflow.create_experiment(exp_name, artifact_location=(directory / "artifacts").as_uri())
        exp = mlflow.set_experiment(exp_name)
        # MLflow 3.x opens an experiment of unknown kind in its GenAI view (traces); the demo's
        # runs are classic model training, so the experiment says so and opens on the runs list.
        mlflow.MlflowClient().set_experiment_tag(
            exp.experiment_id, EXPERIMENT_KIND_TAG, EXPERIMENT_KIND
        )
        run_ids: list[tuple[str, str]] = []
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
            table.add_row(
                regime,
                ("" if ok else "[red]") + v.outcome.value,
                v.cause.value,
                f"{v.confidence:.2f}",
                tb_report.verdict.outcome.value,
            )
            run_ids.append((regime, res["run_id"]))
            lines.append(
                f"{regime}: run {res['run_id']}"
                + (f"\n    {top.code}: {clip(top.message, 160)}" if top else "")
            )
        console.print(table)
        for line in lines:
            console.print(line, markup=False, highlight=False, soft_wrap=True)
        import shutil
        import sys
        from shlex import quote  # printed commands stay copy-pastable in a folder with spaces

        def tool(name: str) -> str:  # the venv's own script when the venv is not activated
            return quote(shutil.which(name) and name or str(Path(sys.executable).parent / name))

        from urllib.parse import unquote, urlparse

        # the HTML report (with its plots) of the first run that did not succeed, as a file to open
        shown = next((r for r in run_ids if r[0] != "healthy"), run_ids[0])
        art = urlparse(mlflow.MlflowClient().get_run(shown[1]).info.artifact_uri)
        html = (
            Path(unquote(art.path)) / "mlaudit" / "report.html"
            if art.scheme in ("", "file")
            else None
        )
        html_line = (
            f"HTML report of {shown[0]} (plots, all findings): {quote(str(html))}\n"
            if html is not None and html.is_file()
            else ""
        )
        console.print(
            f"\nStore: {uri}\nVerdicts are on the runs (tags mlaudit.*, Description, artifacts "
            f"mlaudit/).\n{html_line}Open:\n"
            f"  {tool('mlflow')} ui --backend-store-uri {quote(uri)} --host 127.0.0.1 --port 5000\n"
            f"  {tool('tensorboard')} --logdir {quote(str(directory / 'tensorboard'))}\n"
            + "\n".join(ui_links(UI_URL, exp.experiment_id, run_ids))
            + "\n"
            f"Audit one again:\n  {tool('mlaudit')} mlflow {res['run_id']} -u {quote(uri)}",
            soft_wrap=True,
            markup=False,
            highlight=False,
        )
        if mismatches:
            console.print(
                f"[red]{mismatches} regime(s) got a verdict other than the injected one[/]"
            )
