"""The console reader (mlaudit_core/formats/consolelog) on scikit-learn's ``MLPClassifier(verbose=True)``.

The files in tests/data/default_runs/ were printed by scikit-learn 1.9.1 itself (README there).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mlaudit_core.formats.consolelog import load_logs
from mlaudit_core.roles import Role

DATA = Path(__file__).parent / "data" / "default_runs"


def test_load_logs_reads_the_iteration_loss_and_the_validation_score():
    run = load_logs([DATA / "sklearn_mlp_shuffled_labels.log"])
    loss = run.metrics.series("train/loss")
    score = run.metrics.series("val/score")
    assert loss.steps[0] == 1 and loss.steps[-1] == 61 and len(loss.steps) == 61
    assert loss.values[0] == pytest.approx(0.81248202)
    assert len(score.steps) == 61 and score.values[0] == pytest.approx(0.446667)
    assert run.key_for(Role.TRAIN_LOSS) == "train/loss"


@pytest.mark.xfail(
    strict=True,
    reason="sklearn's 'Validation score' (the estimator's score(): accuracy for a classifier) "
    "plays no role: a held-out bare 'score' has no head in mlaudit_core/roles.py. Giving it one "
    "(tried in session 7) makes V12 call sklearn's own early stop 'overfit' "
    "(test_verdict_policy_default_runs.py), so the role waits for that rule (lead told)",
)
def test_sklearn_validation_score_plays_the_validation_metric():
    run = load_logs([DATA / "sklearn_mlp_shuffled_labels.log"])
    assert run.key_for(Role.VAL_ACCURACY) == "val/score"


def test_sklearn_stop_message_is_not_a_metric():
    """``Validation score did not improve more than tol=0.000100 for 30 consecutive epochs.
    Stopping.`` is sklearn's early-stopping message, not a record of a metric ``tol``."""
    run = load_logs([DATA / "sklearn_mlp_shuffled_labels.log"])
    assert [k for k in run.metrics.keys if "tol" in k] == []
