"""LI006 (logged-zeros): a loss component exactly 0 at every point while siblings of the same split
move is a switched-off term (loss weight 0, a head without that term), not missing labels, unless the
zeros take every localisation term or every task metric with them. Real input from the own corpus
(tests/data/realworld, labelled before any mlaudit run).

f25b1-06: a W&B offline run of a modified Ultralytics detector (100 of 100 epochs, mAP50 0.39 -> 0.785)
whose dfl_loss is exactly 0 in every epoch while box_loss and cls_loss move (Ultralytics' BboxLoss returns
0 for DFL without a distribution head): called succeeded/data_config "Logged zeros show a data problem".
f26b2-19: a Lightning CSV of a speech deepfake detector whose hparams switch the f0 and vocoder-stem
losses off: both 0 on train and test while cls_loss moves and test AUC is 0.98.
f11b1-09 and f16b2-10 (YOLOv8 with box and DFL losses 0: no ground-truth box reaches training) stay data
failures."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlaudit_core.audit import audit
from mlaudit_core.formats import load_path
from mlaudit_core.report import Cause, Severity

RUNS = Path(__file__).parent.parent / "data" / "realworld" / "runs"


def _report(rel: str):
    runs = list(load_path(RUNS / rel).runs)
    return audit(runs[-1][1])


@pytest.mark.parametrize(
    "rel",
    [
        "klrc--person_veh_detection.pytorch/wandb/latest-run",
        "RedamancyAY--RobustSpeechDetection/logs/lightning_logs/version_0/metrics.csv",
    ],
)
def test_li006_zero_component_beside_moving_siblings_is_a_disabled_term(rel):
    rep = _report(rel)
    li006 = [f for f in rep.findings if f.code == "LI006"]
    assert li006, "the zeros are still noted"
    assert all(f.severity is Severity.INFO for f in li006), [f.message for f in li006]
    assert {f.facts.get("kind") for f in li006} == {"disabled_term"}
    assert rep.verdict.cause is not Cause.DATA_CONFIG, rep.verdict.summary


@pytest.mark.parametrize(
    "rel",
    [
        "07Yatin--anemia2/runs/detect/train/results.csv",
        "Painzxc--project/runs/detect/train21/results.csv",
    ],
)
def test_li006_every_localisation_term_at_zero_is_still_missing_boxes(rel):
    rep = _report(rel)
    errors = [f for f in rep.findings if f.code == "LI006" and f.severity is Severity.ERROR]
    assert any(f.facts.get("kind") == "all_zero" for f in errors), [f.message for f in errors]
    assert rep.verdict.cause is Cause.DATA_CONFIG, rep.verdict.summary
