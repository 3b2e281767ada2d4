"""Rule V11d (verdict/policy._heldout_nonfinite_recovered): a held-out loss term non-finite from its first
evaluation and finite after is how that term starts, not a model that turned unstable; one that was
finite and then went non-finite mid-run stays an instability the model recovered from."""

from __future__ import annotations

from pathlib import Path

from mlaudit_core.audit import audit
from mlaudit_core.formats import load_path
from mlaudit_core.report import Cause, Outcome

RUNS = Path(__file__).resolve().parent / "data" / "realworld" / "runs"


def _verdict(rel: str):
    run = list(load_path(RUNS / rel).runs)[-1][1]
    return audit(run).verdict


def test_val_cls_loss_inf_at_the_first_two_evaluations_only_is_not_instability():
    """Own corpus f24b1-05 (YOLOv8n fine-tune, 25 of 25 epochs): val/cls_loss inf at epochs 1-2 (warm-up),
    finite after, mAP50 0.044 -> 0.842 at the last epoch; labelled succeeded/healthy. V11d called it
    unstable before the onset-at-first-evaluation condition."""
    v = _verdict("110062122domingo--CoffeeBeanQualityDetection/runs/detect/train4/results.csv")
    assert (v.outcome, v.cause) == (Outcome.SUCCEEDED, Cause.HEALTHY), v.summary


def test_val_cls_loss_inf_after_finite_evaluations_stays_unstable():
    """Own corpus f14b1-07 (YOLOv8 car/bus): val/cls_loss 211 then inf at epoch 7, mAP50 0.63 -> 0.07, then
    recovered: a finite model that went non-finite mid-run is still read as unstable."""
    v = _verdict(
        "176deepak--Scraping-images-from-internet-and-YOLOv8-Training/runs/detect/train/results.csv"
    )
    assert (v.outcome, v.cause) == (Outcome.UNSTABLE, Cause.MODEL_CONVERGENCE), v.summary
