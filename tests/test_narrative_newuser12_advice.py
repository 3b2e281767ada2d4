"""The report's next actions and wording (mlaudit_core/verdict/narrative.py, model_family.py, the
GE002 sentence, the stopped-early summary, evidence.what_to_log) on runs of the session-12 new-user
pass (files in tests/data/newuser12, README there): a next action never contradicts a statement of
the same report, and advice follows the model family and the framework the run shows."""

from __future__ import annotations

from pathlib import Path

from mlaudit_core import audit
from mlaudit_core.formats import load_path

DATA = Path(__file__).parent / "data" / "newuser12"


def _report(name: str, fmt: str | None = None):
    ((_, run),) = load_path(DATA / name, fmt).runs
    return audit(run)


def _actions(report) -> list[str]:
    return [a.action for a in report.next_actions]


def test_underfit_no_lr_raise_when_ge002_says_raising_is_not_the_remedy():
    # Lightning linear model on circles, Adam 0.01 in hparams.yaml: GE002 says 'raising it is not the
    # remedy'; the actions must not then say 'raise the learning rate 3-10x'
    r = _report("lightning_linear_circles_tb/version_0")
    assert r.verdict.outcome.value == "underfit"
    assert "raising it is not the remedy" in r.verdict.summary
    acts = _actions(r)
    assert not any(a.startswith("Raise the learning rate") for a in acts), acts
    assert any(a.startswith("Do not raise the learning rate") for a in acts), acts


def test_no_checkpoint_kept_when_held_out_best_is_the_first_evaluation():
    # XGBoost with permuted labels: eval-logloss best at round 0 ('no checkpoint of this run is
    # better than chance'); the actions must not keep the checkpoint at the validation minimum
    r = _report("xgb_shuffled_labels.log", "console")
    assert r.verdict.outcome.value == "overfit"
    acts = _actions(r)
    assert not any(
        a.startswith(("Keep the checkpoint", "Keep the model at the best")) for a in acts
    )


def test_no_best_checkpoint_for_a_divergence_from_the_first_epoch():
    # unscaled regression, SGD: val loss 4e11 at its first (best) evaluation, inf from epoch 5; the
    # restart action says no good checkpoint can exist, so no 'use the checkpoint at step 1'
    r = _report("pt_sgd_unscaled_regression_diverge.log", "console")
    assert r.verdict.outcome.value == "diverged"
    acts = _actions(r)
    assert any("Restart from scratch" in a for a in acts), acts
    assert not any(a.startswith("Use the checkpoint") for a in acts), acts


def test_tree_ensemble_gets_tree_remedies_not_gradient_advice():
    # LightGBM at learning_rate 2.0: no grad norm, clipping or warmup in the actions or the
    # missing list; the shrinkage is the knob; GE002 does not call 7.25 'the chance level ln 2'
    r = _report("lgbm_lr_2.log", "console")
    assert r.verdict.outcome.value == "diverged"
    text = " ".join(_actions(r)) + " ".join(m.signal for m in r.missing_instrumentation)
    for word in ("grad norm", "clipping", "warmup"):
        assert word not in text.lower(), text
    assert "shrinkage" in _actions(r)[0]
    ge002 = next(f for f in r.findings if f.code == "GE002")
    assert "sits at the chance level" not in ge002.message
    assert "fell back to it" not in ge002.message
    assert "above the chance level" in ge002.message


def test_tree_ensemble_overfit_regularises_trees():
    r = _report("xgb_shuffled_labels.log", "console")
    acts = " ".join(_actions(r))
    assert "dropout" not in acts and "weight decay" not in acts, acts
    assert "max_depth" in acts


def test_library_frame_crash_points_at_the_users_innermost_frame():
    # torch's binary_cross_entropy raised: the action names train.py:9, not site-packages
    r = _report("keras_nan_inputs_bce_error.log", "console")
    first = _actions(r)[0]
    assert first.startswith(
        "Reproduce the failure at /tmp/newuser12/runs/keras_nan_bad_data/train.py:9"
    )
    assert "site-packages" not in first


def test_crash_before_training_fixes_the_call_not_one_batch():
    # TrainingArguments(evaluation_strategy=...) TypeError: the console opens with the traceback
    r = _report("hf_evaluation_strategy_kwarg.log", "console")
    acts = _actions(r)
    assert acts[0].startswith("Fix the call at"), acts
    assert not any("one batch" in a for a in acts), acts
    assert not any(a.startswith("Log ") for a in acts), acts


def test_ctrl_c_console_names_the_interrupt_not_sigkill():
    # Lightning 'Detected KeyboardInterrupt, attempting graceful shutdown ...' at epoch 12
    r = _report("lightning_ctrl_c.log", "console")
    assert (r.verdict.outcome.value, r.verdict.cause.value) == ("crashed", "inconclusive")
    assert "SIGKILL" not in r.verdict.summary and "Ctrl-C" in r.verdict.summary
    first = _actions(r)[0]
    assert "dmesg" not in first and "Ctrl-C" in first, first


def test_lightning_console_points_at_lightning_logs():
    # a RichProgressBar console (not judgeable): the files Lightning wrote, not mlflow.log_metric
    r = _report("lightning_resume_rich.log", "console")
    acts = _actions(r)
    assert "lightning_logs/version_N" in acts[0], acts
    assert not any("mlflow.log_metric" in a for a in acts), acts


def test_sy005_names_no_per_evaluation_time_when_evaluations_do_not_explain_it():
    # HF Trainer -> W&B offline (48 examples, 40 epochs): 64.6% of the wall time outside steps,
    # not at the evaluations; the sentence must not say '40 evaluations, ~0 s each'
    r = _report("hf_overfit_wandb_offline/offline-run-20261207_071708-lk1bfihc")
    sy = next(f for f in r.findings if f.code == "SY005")
    assert sy.message.startswith("work outside training steps takes"), sy.message
    assert "s each" not in sy.message, sy.message


def test_bl001_explains_a_tail_mean_beyond_the_band_with_no_points_beyond(tmp_path):
    # Lightning MLFlowLogger to a real mlflow server: the lr 1e-4 run against two seeds; train_loss
    # tail mean 790% above the baselines while 0% of its points lie beyond the per-point band
    import json
    import shutil

    from typer.testing import CliRunner

    from mlaudit.cli import app

    db = tmp_path / "mlflow.db"
    shutil.copy(DATA / "lightning_mlflow_seeds_lr1e-4.db", db)
    res = CliRunner().invoke(
        app,
        [
            "mlflow",
            "17a9db4a887f452582e5239b7b068c90",
            "--tracking-uri",
            f"sqlite:///{db}",
            "--baseline",
            "f18ecae0b3a64f8dbe27e35dd945f977",
            "--baseline",
            "87be6fde88104937b96cbf895fa85d19",
            "--no-write",
            "--format",
            "json",
        ],
    )
    assert res.exit_code == 0, res.output
    rep = json.loads(res.stdout)
    msgs = [f["message"] for f in rep["findings"] if f["code"] == "BL001"]
    train = next(m for m in msgs if m.startswith("train_loss"))
    assert "0% of tail points beyond the per-point band" in train, train
    assert "so the gap is not counted" in train, train


def test_succeeded_headline_names_the_error_findings_that_did_not_decide():
    # own corpus csv10 (YOLOv5 results.csv, 3 NaN loss rows that recover): succeeded/healthy while
    # LI001 is at critical; the summary names the findings that did not decide the verdict
    ((_, run),) = load_path(
        Path(__file__).parent
        / "data/realworld/runs/1WangXT--Pipeline_Defect_Recognition/runs/train/exp2/results.csv"
    ).runs
    r = audit(run)
    assert r.verdict.outcome.value == "succeeded"
    assert any(f.code == "LI001" for f in r.findings)
    assert "Not deciding: LI001" in r.verdict.summary, r.verdict.summary
