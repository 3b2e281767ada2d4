"""Runs judged from their final values (session 15, fixer-art15), on real runs of the own corpus, each
labelled from its data before any mlaudit run; every test fails without its rule.

- ``verdict.final_values.two_points_improved`` / ``ended_at_two`` (policy V20b): f13b1-04, a Lightning
  CSVLogger file of two epochs, both losses falling, a validation record after each epoch (was unknown:
  too few points); f15b1-02, two training rows inside epoch 0 with no evaluation, no plan and no final
  status, stays unknown;
- ``verdict.final_values.fit_final_scores`` (policy V20c) and ``model_family.tree_ensemble``'s column
  subsampling parameters: f17b1-13, one FINISHED MLflow XGBoost run, train R2 0.996 against validation
  R2 0.948 (succeeded; was unknown); f18b2-05, an XGBoost run with train R2 0.958 against validation
  0.722 (overfit; was unknown);
- ``verdict.evidence.Basis.final_values``: those runs count as examined (the eval's floor "succeeded
  without a judgeable signal" reads it);
- ``formats.consolelog.infer``'s duration units (``0.5m``) and ``roles._split_named_objective``: f18b2-07,
  a console whose ``[0 200/75400] loss 4.0317 lr 2.98e-05 0.5m`` lines were not read (each line's minutes
  made it a layout of its own) and whose ``>> val 0.4238`` is the held-out loss (was unknown);
"""

from __future__ import annotations

from realworld_helpers import own_run

from mlaudit_core.audit import audit
from mlaudit_core.roles import Role, roles_of
from mlaudit_core.verdict.evidence import assess


def _verdict(run):
    rep = audit(run)
    return rep, (rep.verdict.outcome.value, rep.verdict.cause.value)


def test_two_points_improved_two_epochs_of_a_lightning_csv_succeeded():
    run = own_run("f13b1-04-")
    rep, got = _verdict(run)
    assert got == ("succeeded", "healthy"), rep.verdict.summary
    assert rep.verdict.rule == "V20b"
    assert 0 < rep.verdict.confidence < 0.7  # two points: less than a curve
    assert "val_loss was evaluated after each of its two records" in rep.verdict.summary
    assert assess(run, rep.findings, rep.detectors).examined


def test_two_points_inside_one_epoch_without_an_end_stays_unknown():
    run = own_run("f15b1-02-")
    rep, got = _verdict(run)
    assert got == ("unknown", "inconclusive"), rep.verdict.summary


def test_fit_final_scores_finished_xgboost_close_scores_succeeded():
    run = own_run("f17b1-13-")
    rep, got = _verdict(run)
    assert got == ("succeeded", "healthy"), rep.verdict.summary
    assert rep.verdict.rule == "V20c"
    assert "colsample_bytree" in rep.verdict.summary


def test_fit_final_scores_train_r2_far_above_validation_is_overfit():
    run = own_run("f18b2-05-")
    rep, got = _verdict(run)
    assert got == ("overfit", "model_convergence"), rep.verdict.summary
    assert "r2_train 0.9578 against r2_val 0.7218" in rep.verdict.summary


def test_console_minutes_unit_and_split_named_heldout_loss_are_read():
    run = own_run("f18b2-07-")
    assert run.metrics.count("train/loss") == 377
    assert run.key_for(Role.VAL_LOSS) == "train/val"
    rep, got = _verdict(run)
    assert got == ("succeeded", "healthy"), rep.verdict.summary


def test_split_named_heldout_value_needs_a_loss_beside_it():
    assert roles_of(["loss", "val"])["val"] == (Role.VAL_LOSS,)
    assert roles_of(["acc", "val"])["val"] == ()  # no loss: the held-out value of what is unknown


def test_finished_final_values_end_line_and_heldout_scores_succeeded():
    """Own corpus f20b1-10: a scikit-learn grid search whose log ends 'Training finished and model
    saved' after validation accuracy 0.918 and test accuracy 0.896 (one value each)."""
    v = audit(own_run("f20b1-10")).verdict
    assert (v.outcome.value, v.cause.value, v.rule) == ("succeeded", "healthy", "V20e")


def test_finished_final_values_trainer_summary_loss_below_its_mean_succeeded():
    """Own corpus f19b1-16: a W&B folder holding only the summary of an HF fine-tune (train_runtime,
    last loss 0.338 against the run's mean train_loss 0.529)."""
    v = audit(own_run("f19b1-16")).verdict
    assert (v.outcome.value, v.cause.value, v.rule) == ("succeeded", "healthy", "V20e")


def test_finished_final_values_finished_status_alone_is_not_an_end():
    """Own corpus mlf01: an MLflow run FINISHED after 4 s with one point per metric (test accuracy
    0.943) and no end-of-training record: not judged."""
    v = audit(own_run("mlf01")).verdict
    assert v.outcome.value == "unknown"
