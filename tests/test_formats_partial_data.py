"""Files of a known format that hold no curve yet are runs that logged nothing, not bad input:
a CSV log with its header and no row (formats/_csv.py ``_header_only``, formats/_common.py
``wide_run``), a trainer_state.json without its ``log_history`` (formats/trainer_state.py), and
a TensorBoard logdir without one scalar (integrations/mlaudit_tensorboard/reader.py). The HF
Trainer's end-of-training summary in a TensorBoard logdir is values, not series."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mlaudit_core.formats import load_path
from mlaudit_core.roles import Role

RUNS = Path(__file__).parent / "data" / "realworld" / "runs"


def test_a_csv_header_without_rows_is_a_run_that_logged_nothing(tmp_path):
    """A metrics table with its header and no row yet (realworld f7b2-18; here written by pandas)
    is a run with no series and a warning, audited as unknown (it was refused as bad input)."""
    import pandas as pd

    from mlaudit_core.audit import audit

    p = tmp_path / "train_log.csv"
    pd.DataFrame(columns=["epoch", "train_loss", "valid_loss", "dice"]).to_csv(p, index=False)
    ((_, run),) = load_path(p).runs
    assert not run.metrics.keys
    assert any("header only" in w and "nothing was logged yet" in w for w in run.warnings)
    assert audit(run).verdict.outcome.value == "unknown"


def test_a_trainer_state_without_log_history_is_read_as_summary_values():
    """Realworld f6b3-11: a hand-written trainer_state.json (best_metric, epoch, training_loss,
    global_step, no log_history) is read as partial data, not refused."""
    ((_, run),) = load_path(RUNS / "Mandar032004--QnA_Minor_Project" / "trainer_state.json").runs
    assert not run.metrics.keys
    assert run.params["global_step"] == "21900" and run.params["summary.training_loss"] == "0.22"
    assert any("no log_history" in w for w in run.warnings)


def test_hf_end_of_training_summary_in_tensorboard_is_final_params_not_series():
    """Realworld f11b2-09 (event files written by the HF Trainer, logging_steps 500 > the 300 steps
    run): train/train_loss (the mean loss over the run), train_runtime and the rates, one value
    each at step 300, are ``final.*`` params; the training-loss role is left empty."""
    pytest.importorskip("tensorboard")
    ((_, run),) = load_path(
        RUNS / "TaikiTakiuchi--linebot" / "runs" / "Oct11_01-48-25_4dac8fc521bd"
    ).runs
    assert not [k for k in run.metrics.keys if k.startswith("train/train_")]
    assert run.key_for(Role.TRAIN_LOSS) is None
    assert float(run.params["final.train_loss"]) == pytest.approx(0.7794, abs=1e-4)
    assert "final.train_runtime" in run.params
    assert any("end-of-training summary" in n for n in run.notes)


def test_tensorboard_logdir_without_a_scalar_says_so():
    """Realworld f6b1-19: an HF logdir holding only the args/model_config text summaries."""
    pytest.importorskip("tensorboard")
    logdir = (
        RUNS
        / "gtseligas--lcn-llama"
        / "output"
        / "pt"
        / "runs"
        / "Feb13_15-12-38_lrdn2575.leonardo.local"
    )
    ((_, run),) = load_path(logdir).runs
    assert not run.metrics.keys
    (note,) = [n for n in run.notes if n.startswith("no scalar was logged")]
    assert "args" in note and "model_config" in note


def test_labels_name_no_reader_gap_for_these_files():
    labels = json.loads((RUNS.parent / "labels.json").read_text())
    fixed = ("f7b2-18", "f6b3-11", "f6b1-19")
    assert not [e["id"] for e in labels if e["id"].startswith(fixed) and e.get("reader_gap")]
