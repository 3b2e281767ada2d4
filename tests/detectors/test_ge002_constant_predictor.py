"""GE002.constant_predictor and policy rule V19j: an accuracy with the precision/F1 a one-class
predictor gets is the majority share and carries no information, whatever the number of points, on
real input from the own corpus (tests/data/realworld, labelled before any mlaudit run).

f13b2-13: a W&B notebook run whose summary holds test/accuracy 0.90566 (= 48/53, the majority
class of a 1:4:48 test set), test/precision 0.82022 (= 0.90566^2, the weighted precision of
predicting that class for every input) and test/f1 0.86083 (= 0.90566 x 2 x 0.90566 / 1.90566);
one point each, so no curve could be judged and the run was not judged at all."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlaudit_core.audit import audit
from mlaudit_core.detectors.GE002 import constant_predictor
from mlaudit_core.formats import load_path

RUNS = Path(__file__).parent.parent / "data" / "realworld" / "runs"


def _run():
    return list(load_path(RUNS / "NiyonshutiDavid--uruti_MLOP/wandb/latest-run").runs)[-1][1]


def test_weighted_precision_and_f1_of_a_one_class_predictor_are_recognised():
    hit = constant_predictor(_run())
    assert hit is not None
    ak, p, scores = hit
    assert ak == "test/accuracy" and p == pytest.approx(48 / 53)
    assert {k for k, _, how in scores if how == "weighted"} == {"test/f1", "test/precision"}


def test_summary_only_run_predicting_the_majority_class_is_underfit():
    v = audit(_run()).verdict
    assert (v.outcome.value, v.cause.value) == ("underfit", "model_convergence"), v.summary
    assert "one class for every input" in v.summary
