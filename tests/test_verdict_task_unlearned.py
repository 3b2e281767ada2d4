"""``verdict.task_unlearned`` and policy V20h (``policy._task_unlearned``) on real runs of the own corpus:
a run the healthy reading would call succeeded whose task metric shows the model did not learn its task
is underfit, model_convergence. Each of the first three fails without the rule (they were
succeeded/healthy from V21): a held-out ROC AUC that never left chance (f26b2-12), a token accuracy
unmoved while the loss fell (f26b1-01), a detector's mAP50-95 unmoved while its val box loss fell
(f9b1-11). Then the limits: a held-out AUC that left chance, an accuracy that learned, and an AUC of
another quantity far below 0.5 (a pose PCK curve's area) are not read."""

from __future__ import annotations

from pathlib import Path

from realworld_helpers import last_run

from mlaudit_core.audit import audit
from mlaudit_core.verdict.task_unlearned import auc_at_chance, metric_unmoved

REPO = Path(__file__).resolve().parents[1]
RUNS = REPO / "tests" / "data" / "realworld" / "runs"


def _verdict(rel: str):
    return audit(last_run(RUNS / rel)).verdict


def test_auc_at_chance_audio_deepfake_classifier_is_underfit():
    # f26b2-12: Lightning CSV, val-auc 0.48, 0.49, 0.37, 0.53 over 4 epochs, cls loss at ln 2 throughout
    v = _verdict("RedamancyAY--MVCL-ADD/logs/lightning_logs/version_0/metrics.csv")
    assert (v.outcome.value, v.cause.value) == ("underfit", "model_convergence"), v.summary
    assert v.rule == "V20h"
    assert "never left chance" in v.summary


def test_metric_unmoved_translation_token_accuracy_while_the_loss_falls_is_underfit():
    # f26b1-01: a console log, token accuracy 0.049 -> 0.066-0.068 for 52 epochs, loss 11.2 -> 8.66
    v = _verdict("B777B2056-2--machine_translation_en2zh/train.log")
    assert (v.outcome.value, v.cause.value) == ("underfit", "model_convergence"), v.summary
    assert v.rule == "V20h"


def test_metric_unmoved_detector_map_while_the_box_loss_falls_is_underfit():
    # f9b1-11: Ultralytics results.csv, mAP50-95 0.002-0.010 for 100 of 100 epochs, val box loss -19%
    v = _verdict("Aarya01Patil--Person_PPE_Detection_Model/runs/detect/train2/results.csv")
    assert (v.outcome.value, v.cause.value) == ("underfit", "model_convergence"), v.summary
    assert v.rule == "V20h"


def test_task_unlearned_not_read_on_runs_that_learned():
    # f8b1-17: a Keras pneumonia classifier, val_auc up to 0.996; f6b2-18: a GNN jet tagger, val_roc_auc
    # 0.94, val_accuracy 0.82-0.85; f7b1-01: mmpose's val/auc (a PCK curve's area, 0.007-0.067) is no
    # ranking at chance
    for rel in (
        "Arifoo00--Pneumonia-Detection-Using-EfficientNetB0/training_history.csv",
        "Baucki1--NNjetTagger/lightning_logs/version_1",
        "duanbo320--openmmlab_camp/20230605_200941/20230605_200941.log",
    ):
        run = last_run(RUNS / rel)
        assert auc_at_chance(run) is None, rel
        assert metric_unmoved(run) is None, rel


def test_metric_still_rising_short_detector_run_is_underfit():
    # f26b1-08: Ultralytics results.csv, YOLOv8n on CPU, 15 of 15 epochs, mAP50-95 0.04 -> 0.14 climbing
    # at the end, every loss still falling (was succeeded/healthy)
    v = _verdict("2024uce0062-sys--crack-detection-ai/runs/detect/train/results.csv")
    assert (v.outcome.value, v.cause.value) == ("underfit", "model_convergence"), v.summary
    assert v.rule == "V20h"
    assert "still climbing" in v.summary


def test_metric_still_rising_not_read_above_a_quarter_of_the_ceiling():
    # f24b2-11: a YOLOv5s at 100 of 100 epochs still gaining, mAP50-95 best 0.31: a healthy detector
    from mlaudit_core.verdict.task_unlearned import metric_still_rising

    run = last_run(RUNS / "ParthTiwari02--Fabric/runs/train/exp3/results.csv")
    assert metric_still_rising(run) is None
    assert audit(run).verdict.outcome.value == "succeeded"
