"""policy.accuracy_lost_to_memorising (V14b's overfit reading): a held-out accuracy that peaked and then
sat well below its peak while the training loss went on falling, with the held-out loss far above the
training loss, is an overfit even when the held-out loss only flattened (issue 27 item 3: the task
metric is judged, not only the loss).

Positive and control are own-corpus artifacts (tests/data/realworld, labels.json).
"""

from __future__ import annotations

from pathlib import Path

from mlaudit_core import audit
from mlaudit_core.formats import load_path

OWN = Path(__file__).resolve().parent / "data" / "realworld"


def _verdict(rel: str):
    loaded = load_path(OWN / rel)
    return audit(loaded.runs[-1][1]).verdict


def test_accuracy_lost_to_memorising_is_overfit_not_a_plateau():
    """f6b2-11: YOLOv8s-cls, 200 of 200 epochs, top-1 0.706 at epoch 24 then ~0.60, training loss
    1.0 -> 0.034, val/loss flat near 2.0 from epoch 19: was plateaued (V14b)."""
    v = _verdict("runs/JavaKhangNguyen--ACNE11-Classification/runs/classify/train6")
    assert (v.outcome.value, v.cause.value) == ("overfit", "model_convergence"), v.summary
    assert "accuracy_top1 peaked at 0.7064" in v.summary


def test_accuracy_kept_near_its_best_stays_a_plateau():
    """Control, f7b2-04: MobileCLIP fine-tune whose training loss fell to 0.012 while val loss sat flat,
    its held-out best at epoch 46 of 50: no accuracy lost, so not called overfit."""
    v = _verdict("runs/mntalha--MaterialVision/models/Apple_MobileCLIP/checkpoints/train.log")
    assert v.outcome.value != "overfit", v.summary
