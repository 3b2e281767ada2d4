"""formats.catboost_info: the objective CatBoost optimised is the run's loss (``_objective``), and a fit
that its overfitting detector ended is a run that stopped by itself (``_detector_stop``), which
verdict.policy's V14b then does not call a plateau of diminishing held-out returns.

Real input: CatBoost fits made here with the installed package (a multiclass ``MultiClass`` objective,
whose name the metric-name rules do not read as a loss; early stopping on the eval set), and the own
corpus's catboost_info of a Kaggle multiclass run ended by its detector at 1587 of 2000 iterations
(f7b1-16, labelled succeeded/healthy; judged unknown at the session-7 first run: no loss recognised).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from mlaudit_core import audit
from mlaudit_core.formats import load_path
from mlaudit_core.roles import Role

REAL = Path(__file__).resolve().parent / "data" / "realworld"


def _fit(tmp_path: Path, **kw) -> Path:
    catboost = pytest.importorskip("catboost")
    rng = np.random.default_rng(0)
    x = rng.normal(size=(600, 5))
    y = np.digitize(x[:, 0] + 0.5 * x[:, 1] + rng.normal(scale=0.8, size=600), [-0.7, 0.7])
    train_dir = tmp_path / "catboost_info"
    model = catboost.CatBoostClassifier(
        loss_function="MultiClass",
        train_dir=str(train_dir),
        verbose=False,
        thread_count=1,
        random_seed=0,
        **kw,
    )
    model.fit(x[:400], y[:400], eval_set=(x[400:], y[400:]))
    return train_dir


def test_catboost_info_objective_is_the_loss_and_an_early_stop_stopped_by_itself(tmp_path):
    train_dir = _fit(tmp_path, iterations=3000, learning_rate=0.03, early_stopping_rounds=50)
    run = load_path(train_dir).runs[0][1]
    assert run.key_for(Role.TRAIN_LOSS) == "train/MultiClass"
    assert run.key_for(Role.VAL_LOSS) == "val/MultiClass"
    n = len(run.metrics.series("val/MultiClass").values)
    assert n < 2000  # the detector ended the fit
    assert any(x.startswith("training stopped by itself") for x in run.notes), run.notes
    v = audit(run).verdict
    assert v.outcome.value == "succeeded", v.summary


def test_catboost_info_fit_to_its_plan_has_no_detector_note(tmp_path):
    train_dir = _fit(tmp_path, iterations=40, learning_rate=0.1)
    run = load_path(train_dir).runs[0][1]
    assert run.key_for(Role.TRAIN_LOSS) == "train/MultiClass"
    assert len(run.metrics.series("val/MultiClass").values) == 40
    assert not any(x.startswith("training stopped by itself") for x in run.notes)


def test_catboost_info_detector_stop_of_a_real_multiclass_run_is_succeeded():
    labels = json.loads((REAL / "labels.json").read_text())
    (lab,) = [x for x in labels if x["id"].startswith("f7b1-16-")]
    run = load_path(REAL / lab["path"]).runs[0][1]
    assert any("best at iteration 1486" in x for x in run.notes), run.notes
    v = audit(run).verdict
    assert (v.outcome.value, v.cause.value) == ("succeeded", "healthy"), v.summary
