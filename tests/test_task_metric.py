"""mlaudit_core.task_metric: the run's task metric read first, and the policy rules that ask it
(``task_metric_overrules`` in V12/V12a/V14/V14b, the surrogate-loss reading of V06 and V10,
``kept_by_the_heldout_loss`` in V21, GE001's ``task_metric_best_at_end``).

Real input only: artifacts of the own corpus (tests/data/realworld), each written by the library
named in its test; every test fails without the rule it names (the verdict before is in its
docstring).
"""

from __future__ import annotations

import json
from pathlib import Path

from mlaudit_core import audit
from mlaudit_core.formats import load_path
from mlaudit_core.task_metric import judge, solved, surrogate_loss, task_metric

REAL = Path(__file__).resolve().parent / "data" / "realworld"
LABELS = json.loads((REAL / "labels.json").read_text())


def _run(ident: str):
    (lab,) = [x for x in LABELS if x["id"].startswith(ident)]
    ((_, run),) = load_path(REAL / lab["path"]).runs
    return run


def test_solved_top1_at_its_ceiling_is_no_validation_plateau():
    """f12b2-04, Ultralytics classify results.csv: top-1 1.0 from epoch 8 of 100, val/loss flat at
    0.5513 (labelled succeeded/healthy; V14b called it plateaued from the flat validation loss)."""
    run = _run("f12b2-04-")
    key, level = solved(run)
    assert key == "metrics/accuracy_top1" and level == 1.0
    v = audit(run).verdict
    assert (v.outcome.value, v.cause.value) == ("succeeded", "healthy"), v.summary
    assert "ceiling" in v.summary


def test_solved_map50_is_no_overfit_of_a_swinging_box_loss():
    """f12b1-06, Ultralytics results.csv with a validation set of one or two boxes: mAP50 at its
    maximum 0.995 for the last 110 epochs while val/box_loss swings 0.46-1.28 (labelled
    succeeded|unknown; V12 called it overfit from the box loss). V12 may decide it, but as the
    held-out set's noise (metric_policy), never as an overfit."""
    run = _run("f12b1-06-")
    assert solved(run)[0] == "metrics/mAP50(B)"
    v = audit(run).verdict
    assert v.outcome.value == "succeeded", v.summary
    assert v.cause.value in ("metric_policy", "healthy"), v.summary


def test_judge_holds_a_fall_of_a_tenth_of_the_gain():
    """f10b2-16, Ultralytics results.csv with placeholder validation losses: mAP50-95 0.512 at
    epoch 152, 0.4625 at 199 (labelled succeeded/healthy; V12 called it overfit from GE001 on the
    held-out error): the selection metric (fitness) gave back less than a tenth of its gain."""
    run = _run("f10b2-16-")
    j = judge(run)
    assert j.metric.key.startswith("fitness") and j.holds and not j.fell
    assert j.best - j.final <= 0.1 * (j.best - j.first)
    v = audit(run).verdict
    assert (v.outcome.value, v.cause.value) == ("succeeded", "healthy"), v.summary


def test_a_held_out_metric_that_fell_is_judged_by_the_task_metric_not_any_metric():
    """f12b2-13, AllenNLP TensorBoard: validation loss +17% from epoch 2 and validation accuracy
    0.79 -> 0.71 while a training-tracking ``validation/s_recall`` rose to its last epoch (labelled
    overfit; GE001 took s_recall as 'the task metric still improving' and the run was succeeded)."""
    run = _run("f12b2-13-")
    assert task_metric(run).key == "validation/accuracy"
    v = audit(run).verdict
    assert (v.outcome.value, v.cause.value) == ("overfit", "model_convergence"), v.summary


def test_grpo_surrogate_loss_is_no_divergence_the_reward_decides():
    """f11b2-11, TRL GRPOTrainer trainer_state.json: the loss within +-0.2 of zero, the mean reward
    -0.10 -> 1.47 -> -0.49 at the noise of its own evaluations (labelled regressed|plateaued; V06
    called it diverged from 'the loss ended above its initial value')."""
    run = _run("f11b2-11-")
    assert surrogate_loss(run) == "loss"
    j = judge(run, surrogate=True)
    assert j.metric.key == "reward" and not j.fell and j.best - j.first <= j.band
    v = audit(run).verdict
    assert (v.outcome.value, v.rule) == ("plateaued", "V06"), v.summary


def test_ppo_surrogate_loss_is_no_divergence_nor_baseline_regression():
    """f7b3-12, a Unity ML-Agents PPO console: the displayed loss takes both signs (and is NaN on
    most lines) while the agent's score rose 0.006 -> 0.7 (labelled succeeded/healthy; V06 called it
    diverged, and without V06 V10 compared the loss's level with an earlier launch's)."""
    run = _run("f7b3-12-")
    assert surrogate_loss(run) == "train/loss"
    j = judge(run, surrogate=True)
    assert j.metric.key == "train/score" and j.holds
    v = audit(run).verdict
    assert (v.outcome.value, v.cause.value) == ("succeeded", "healthy"), v.summary
    assert "surrogate" in v.summary


def test_checkpoint_kept_by_the_rising_heldout_loss_is_a_metric_policy_finding():
    """f6b1-14, HF Trainer trainer_state.json: best_model_checkpoint at the eval-loss minimum of
    epoch 3 while eval accuracy rose to its best at epoch 10 (labelled overfit|succeeded with
    model_convergence|metric_policy; V21 gave succeeded/healthy)."""
    run = _run("f6b1-14-")
    v = audit(run).verdict
    assert (v.outcome.value, v.cause.value) == ("succeeded", "metric_policy"), v.summary
    assert "checkpoint-1626" in v.summary


def test_a_doubled_heldout_loss_with_a_creeping_accuracy_stays_an_overfit():
    """Control, wb03 (W&B, AlexNet on CIFAR-10, labelled overfit): the validation loss doubles
    while the validation accuracy still creeps up; the task metric neither sits at a ceiling nor is
    the overfit read from it, so the loss reading stands."""
    run = _run("wb03-")
    assert solved(run) is None
    assert audit(run).verdict.outcome.value == "overfit"
