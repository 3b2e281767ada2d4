"""The verdict (mlaudit_core/verdict/policy.py and the detectors it reads) on runs a new user made
with the real frameworks at their defaults (session 12; files in tests/data/newuser12, README
there).

The truth of each run was written before mlaudit saw it (a table with the time); each test says
what a careful analyst reads in the file.
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from mlaudit.cli import app

DATA = Path(__file__).parent / "data" / "newuser12"


def _verdict(*args: str) -> dict:
    res = CliRunner().invoke(app, [*args, "--format", "json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def _replay_mlflow(name: str, tmp_path: Path) -> dict:
    """Log the exported run (params, every metric point as stored, status) into a fresh sqlite
    MLflow store and audit it with ``mlaudit mlflow RUN -u sqlite:///...``."""
    import mlflow
    from mlflow.entities import Metric, Param

    rec = json.loads((DATA / name).read_text())
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    client = mlflow.MlflowClient(uri)
    exp = client.create_experiment("newuser12")
    rid = client.create_run(exp, run_name=rec["run_name"]).info.run_id
    client.log_batch(rid, params=[Param(k, str(v)) for k, v in rec["params"].items()])
    metrics = [
        Metric(k, float(v), int(t), int(s)) for k, pts in rec["metrics"].items() for s, v, t in pts
    ]
    client.log_batch(rid, metrics=metrics)
    client.set_terminated(rid, rec["status"])
    return _verdict("mlflow", rid, "-u", uri, "--no-write")


def test_policy_dataloader_worker_parse_error_on_a_bad_record_is_data_config():
    rep = _verdict("logs", str(DATA / "pt_loader_worker_bad_record.log"))
    assert (rep["verdict"]["outcome"], rep["verdict"]["cause"]) == ("crashed", "data_config")


def test_policy_bce_input_range_error_after_a_finite_loss_is_data_config():
    rep = _verdict("logs", str(DATA / "keras_nan_inputs_bce_error.log"))
    assert (rep["verdict"]["outcome"], rep["verdict"]["cause"]) == ("crashed", "data_config")


def test_policy_unexpected_keyword_of_a_config_class_is_data_config():
    rep = _verdict("logs", str(DATA / "hf_evaluation_strategy_kwarg.log"))
    assert (rep["verdict"]["outcome"], rep["verdict"]["cause"]) == ("crashed", "data_config")


def test_policy_sklearn_gbr_still_falling_linearly_at_its_last_tree_is_underfit():
    rep = _verdict("logs", str(DATA / "sklearn_gbr_lr_0.001.log"))
    assert rep["verdict"]["outcome"] == "underfit", rep["verdict"]["summary"]


def test_policy_mlflow_run_barely_learning_at_lr_1e_5_is_underfit(tmp_path):
    rep = _replay_mlflow("pt_mlflow_lr_1e-5_config_typo.json", tmp_path)
    assert rep["verdict"]["outcome"] == "underfit", rep["verdict"]["summary"]


def test_policy_wandb_offline_run_converged_at_the_noise_ceiling_is_succeeded():
    rep = _verdict("wandb", "--offline", str(next((DATA / "pt_wandb_offline_moons").iterdir())))
    assert rep["verdict"]["outcome"] == "succeeded", rep["verdict"]["summary"]


def test_policy_trainer_console_whose_throughput_dropped_4x_at_mid_run_is_slow():
    rep = _verdict("logs", str(DATA / "hf_loader_slowed_at_step_50.log"))
    assert rep["verdict"]["outcome"] == "slow", rep["verdict"]["summary"]


def test_policy_keras_console_with_load_driven_epoch_step_times_is_succeeded():
    rep = _verdict("logs", str(DATA / "keras_early_stopping_verbose.log"))
    assert rep["verdict"]["outcome"] == "succeeded", rep["verdict"]["summary"]


def test_policy_flat_loss_then_nan_at_a_low_lr_is_a_bad_batch():
    rep = _verdict("audit", str(DATA / "lightning_nan_input_cell_csv" / "version_0"), "--no-write")
    assert (rep["verdict"]["outcome"], rep["verdict"]["cause"]) == ("diverged", "data_config")


def test_policy_majority_class_predictor_is_a_data_config_underfit():
    rep = _verdict("audit", str(DATA / "pt_majority_class_tb"), "--no-write")
    assert (rep["verdict"]["outcome"], rep["verdict"]["cause"]) == ("underfit", "data_config")
