"""False alarms on healthy real runs (issue 27: <= 5%), fixed as rules an analyst applies to any run:
a plateau at the end of the planned schedule after a large drop is convergence
(verdict/policy.converged_at_plan), a barely-moving loss beside another loss that fell is not shown to
be the objective (policy.another_loss_learned), a loss "divergence" while the task metric rises to its
best is not the model's (policy.task_metric_contradicts), a held-out loss rise while the run's
selection metric rose from there is no overfit (policy.selection_metric_holds), an accuracy's plateau
tolerance is bounded by its error rate (GE007 headroom), word accuracy is an accuracy (roles).

Positives are own-corpus artifacts (tests/data/realworld, labels.json) that were called failing;
each rule also has a control that keeps a true failure of the same shape.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mlaudit_core import audit
from mlaudit_core.formats import load_path

OWN = Path(__file__).resolve().parent / "data" / "realworld"


def _verdict(rel: str):
    loaded = load_path(OWN / rel)
    return audit(loaded.runs[-1][1]).verdict


def test_policy_converged_at_plan_gpt2_lora_checkpoint_is_not_plateaued():
    """f9b2-07: trainer_state of checkpoint-7500 of max_steps 7843, loss 5.29 -> 3.37 in the first
    quarter then level: was plateaued (V14)."""
    v = _verdict("runs/LaziestCactus--GPTLoRA/results/checkpoint-7500/trainer_state.json")
    assert v.outcome.value in ("succeeded", "running"), v.summary


def test_policy_plateau_with_a_small_drop_at_its_plan_stays_plateaued():
    """Control, ts19: a Flan-T5 fine-tune at step 2051 of 2051 whose loss fell 7.6% and then sat flat:
    not a large drop, the plateau stands."""
    v = _verdict(
        "runs/Siddharth-magesh--flan-t5-base-MedicalQnA/results/checkpoint-2051/trainer_state.json"
    )
    assert v.outcome.value == "plateaued", v.summary


def test_policy_another_loss_learned_gaitset_full_triplet_loss_flat_is_not_plateaued():
    """f9b2-20: GaitSet 80000 of 80000 iterations; the optimised hard-mined triplet loss 0.44 -> 0.16
    while the full triplet loss beside it stays 0.19: was plateaued (V13) on the flat one."""
    v = _verdict("runs/faiimea--GaitSet/train.out")
    assert (v.outcome.value, v.cause.value) == ("succeeded", "healthy"), v.summary


def test_policy_a_single_flat_loss_stays_plateaued_or_underfit():
    """Control, csv08: a Lightning language-model trial whose only training loss moved 1.4%."""
    v = _verdict("runs/0Xero7--slm_training/lightning_logs/version_3/metrics.csv")
    assert v.outcome.value in ("plateaued", "underfit"), v.summary


def test_policy_task_metric_contradicts_divergence_of_a_summed_loss():
    """f7b2-17: a ViT's train_loss summed over batches (812 -> 515, far above any ln K) while val_acc
    rose 38% -> 71%, its best at the end: was diverged (OP001 above chance)."""
    v = _verdict("runs/QianQing26--MiniViT/train_log.csv")
    assert (v.outcome.value, v.cause.value) == ("succeeded", "healthy"), v.summary


def test_policy_divergence_with_a_falling_accuracy_stays_diverged(tmp_path):
    """Control: the same columns, a loss that climbs 10x from its best while val_acc falls back to
    chance: the task metric does not contradict it."""
    rows = ["train_loss,train_acc,val_loss,val_acc"]
    for i in range(30):
        loss = 2.3 - 0.05 * i if i < 12 else 1.7 * (1.35 ** (i - 11))
        acc = 20 + 4 * i if i < 12 else max(10.0, 64 - 5 * (i - 11))
        rows.append(f"{loss:.4f},{acc:.2f},{loss * 1.1:.4f},{acc - 2:.2f}")
    p = tmp_path / "train_log.csv"
    p.write_text("\n".join(rows) + "\n")
    v = audit(load_path(p).runs[-1][1]).verdict
    assert v.outcome.value in ("diverged", "unstable"), v.summary


def test_policy_selection_metric_rose_after_the_loss_minimum_is_not_overfit():
    """f8b2-10: YOLOv8 helmet detector, val box loss lowest at epoch 8 of 100 while fitness rose from
    there to its best at 83 (a few validation objects: mAP jumps): was overfit (V12)."""
    v = _verdict("runs/AayushSalvi--helmet_detection/runs/detect/train2/results.csv")
    assert v.outcome.value != "overfit", v.summary


def test_policy_selection_metric_that_gave_back_a_fifth_of_its_gain_stays_overfit():
    """Control, tb10: YOLOv5 val box loss +34% from its minimum at epoch 67 of 150; fitness rose from
    there but ends a fifth of its gain below its best (mAP 0.144 -> 0.106): an overfit."""
    v = _verdict("runs/ChamikaYp--yolov5-rubbish/runs/train/exp")
    assert v.outcome.value in ("overfit", "plateaued"), v.summary


def test_policy_word_accuracy_holding_while_the_loss_creeps_is_not_overfit():
    """f7b2-19: G2P val_loss +16% from its minimum at epoch 243 of 343 while val_wacc (word accuracy)
    holds near its best 0.863: a calibration note once 'wacc' reads as an accuracy."""
    v = _verdict("runs/quincyhopper--g2p/train_log.csv")
    assert v.outcome.value in ("succeeded", "plateaued"), v.summary


def test_policy_accuracy_near_its_ceiling_is_not_a_plateau_from_its_first_quarter():
    """f6b2-05: ViT test accuracy 0.964 at step 900, best 0.975 at 2400 of 3000: was plateaued from step
    800 (a tolerance of 1% of 0.975, 39% of the error left)."""
    v = _verdict("runs/Devesan--Deepfake_detection/wandb/run-20220103_222021-1k9ahb41")
    assert v.outcome.value == "succeeded", v.summary


@pytest.mark.parametrize("rel", ["runs/jetyue04--loss-plateau/wandb/run-20260123_005619-q4ebbqpc"])
def test_policy_low_accuracy_plateau_stays_plateaued(rel):
    """Control, wb01: test accuracy flat at 0.10-0.16 for 88% of the run stays a plateau."""
    v = _verdict(rel)
    assert v.outcome.value in ("plateaued", "underfit"), json.dumps(v.summary)


def test_sy002_epoch_start_waits_of_a_sparsely_logged_run_are_not_slow():
    """f7b1-04: Paddle logs every ~1250 of 5011 iterations per epoch and always the first, whose
    1.3-1.8 s data wait (the loader's workers starting again) read as 23.5% of the logged wall time:
    was slow (SY002 stalls); once per epoch it is 0.1% of the run's."""
    loaded = load_path(OWN / "runs/CuberrChen--CSRA-Paddle/output/train.log")
    rep = audit(loaded.runs[-1][1])
    assert not [f for f in rep.findings if f.code == "SY002"], rep.verdict.summary
    assert rep.verdict.outcome.value != "slow", rep.verdict.summary


def test_sy002_epoch_starts_marks_the_first_logged_point_of_each_epoch():
    """epoch_starts on the same log: the long waits sit exactly at the epoch changes."""
    import numpy as np

    from mlaudit_core.detectors.SY002 import epoch_starts
    from mlaudit_core.roles import Role

    run = load_path(OWN / "runs/CuberrChen--CSRA-Paddle/output/train.log").runs[-1][1]
    d = run.series(run.key_for(Role.DATA_TIME)).by_step().finite()
    starts = epoch_starts(run, d.steps)
    assert starts is not None
    waits = d.values[1:] > 1.0  # the first point is the run's start (SY002 leaves it out)
    assert bool(starts[1:][waits].all())
    assert 25 <= int(starts.sum()) <= 30  # one per epoch of the 30, not every logged point
    assert int(np.median(np.diff(d.steps[starts]))) == 5011  # an epoch of iterations apart


def test_sy001_running_total_of_train_time_is_no_throughput_fall():
    """f10b2-08 (scored first run, session 10): a modded-nanogpt log, 'step:N/4300 train_time:...ms
    step_avg:1.32s', whose train_time (time since the start) read as an 81% throughput fall: slow.
    per_step_time turns the running total back into 1.0-1.5 s per step."""
    import numpy as np

    from mlaudit_core.detectors.SY001 import per_step_time
    from mlaudit_core.roles import Role

    rel = "runs/AkramjitS--gpt-lab-diffusion/experiments/20250418_204839_Baseline_343m/training_log.txt"
    run = load_path(OWN / rel).runs[-1][1]
    s = run.series(run.key_for(Role.STEP_TIME)).by_step().finite()
    per = per_step_time(s)
    assert per is not s and 1.0 < float(np.median(per.values)) < 1.5
    rep = audit(run)
    assert rep.verdict.outcome.value != "slow", rep.verdict.summary


def test_sy001_iteration_time_that_grows_stays_slow():
    """Control, report b2-14: Megatron's per-iteration 'elapsed time per iteration (ms)' grows over the
    run: a per-step time, not a running total; still slow."""
    from typer.testing import CliRunner

    from mlaudit.cli import app

    (case,) = (OWN.parent / "reports").glob("b2-14-*")
    args = ["logs", *map(str, sorted(case.glob("*.log")))]
    if (case / "context.txt").exists():
        args += ["--config", str(case / "context.txt")]
    v = json.loads(CliRunner().invoke(app, [*args, "--format", "json"]).stdout)["verdict"]
    assert v["outcome"] == "slow", v["summary"]


def test_roles_split_less_accuracy_beside_split_losses_is_heldout_early_stop_read():
    """f10b1-10 (scored first run, session 10): Ultralytics classify results.csv (train/loss, val/loss,
    metrics/accuracy_top1; args patience 10, epochs 60) ends at epoch 19 = best top-1 at 9 + 10: with
    the top-1 read as the held-out accuracy the stop is early stopping, not an overfit."""
    rel = "runs/AicoSchreurs--street-type-classification-yolov8/runs/classify/train/results.csv"
    v = _verdict(rel)
    assert (v.outcome.value, v.cause.value) == ("succeeded", "healthy"), v.summary


def test_roles_split_less_accuracy_stays_training_where_the_logger_names_no_splits():
    """Control: Keras' 'loss'/'accuracy' beside 'val_loss'/'val_accuracy', and a run that logs a
    train-split accuracy, keep their roles."""
    from mlaudit_core.roles import Role, roles_of

    keras = roles_of(["loss", "accuracy", "val_loss", "val_accuracy"])
    assert keras["accuracy"] == (Role.TRAIN_ACCURACY,)
    named = roles_of(["train/loss", "val/loss", "train/acc", "metrics/accuracy_top1"])
    assert Role.VAL_ACCURACY not in named["metrics/accuracy_top1"]


def test_evidence_patience_on_the_watched_fitness_and_a_transient_inf_that_came_back():
    """f10b2-15 (scored first run, session 10): YOLO11 results.csv + args.yaml (epochs 50, patience 10),
    31 epochs = best fitness at 21 + 10; train/box_loss 'inf' at epoch 5 only while mAP50-95 rose
    0.24 -> 0.70: was unstable/inconclusive (V05b), and the stop was read from mAP50-95 alone (best
    at 29) as a crash. The early stop is read on the fitness Ultralytics watches, and the transient
    inf beside a rising task metric is no instability."""
    rel = "runs/Abhijeet999-beep--Dog-Emotion-Detection-Dataset-Training/runs/detect/train/results.csv"
    v = _verdict(rel)
    assert (v.outcome.value, v.cause.value) == ("succeeded", "healthy"), v.summary
