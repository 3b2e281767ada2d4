"""GE001 (overfitting-onset): a held-out rise with no trend after the best is a plateau's scatter, not
an overfit (``GE001._flat_after_best``, Mann-Kendall test of the evaluations from the best on), on
real input from the own corpus (tests/data/realworld, labelled before any mlaudit run).

f19b2-14: an Ultralytics YOLOv8n-cls results.csv, 50 of 50 epochs, top-1 0.965 after epoch 1 and
0.91-0.97 after; val/loss 0.097 at epoch 9, then 0.10-0.31 with no trend, 0.133 at the end (GL 37%).
f21b1-03: a Lightning CSVLogger metrics.csv of a CNN-LSTM price forecaster, val_loss best at epoch 20
and moving within a band for 80 more epochs (GL 18%). Both were called overfit; labels: plateaued or
succeeded. wb03 (AlexNet on CIFAR-10, W&B) and tb10 (YOLOv5 TensorBoard), labelled overfit, rise
after their best with a trend and keep the error finding.
"""

from __future__ import annotations

from pathlib import Path

from mlaudit_core.audit import audit
from mlaudit_core.formats import load_path
from mlaudit_core.report import Outcome, Severity
from mlaudit_core.rundata import RunData

RUNS = Path(__file__).parent.parent / "data" / "realworld" / "runs"
YOLO_CLS = RUNS / "ParasyteGS--FINN_Tesis" / "runs" / "classify" / "train" / "results.csv"
CNN_LSTM = (
    RUNS
    / "DyeDye-diyung--Framework_for_Financial_Time-Series_Forecasting"
    / "lightning_logs"
    / "version_1"
    / "metrics.csv"
)
ALEXNET = (
    RUNS
    / "nicetea17--CIFAR10-Classifier-AlexNet-and-Resnet18"
    / "wandb"
    / "run-20251020_205458-pypd7lzd"
)
YOLOV5 = RUNS / "ChamikaYp--yolov5-rubbish" / "runs" / "train" / "exp"


def _run(path: Path) -> RunData:
    return list(load_path(path).runs)[-1][1]


def _ge001(rep):
    return [f for f in rep.findings if f.code == "GE001"]


def test_flat_after_best_is_not_an_overfit():
    for path in (YOLO_CLS, CNN_LSTM):
        rep = audit(_run(path))
        ge = _ge001(rep)
        assert ge and all(f.severity is Severity.INFO for f in ge), [f.message for f in ge]
        assert ge[0].facts["kind"] == "no_trend"
        assert ge[0].facts["trend_z"] < 1.645
        assert rep.verdict.outcome is not Outcome.OVERFIT, rep.verdict.summary


def test_a_rise_with_a_trend_stays_an_overfit():
    for path in (ALEXNET, YOLOV5):
        rep = audit(_run(path))
        ge = [f for f in _ge001(rep) if f.severity is Severity.ERROR]
        assert ge, [f.message for f in _ge001(rep)]
        assert rep.verdict.outcome is Outcome.OVERFIT, rep.verdict.summary
