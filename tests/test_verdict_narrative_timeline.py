"""mlaudit_core.verdict.narrative.build_timeline on training losses at the float limits."""

from __future__ import annotations

import numpy as np
import pytest

from mlaudit_core import MetricTable, RunData, RunIdentity, audit
from mlaudit_core.verdict.narrative import build_timeline


@pytest.mark.parametrize("value", [1e308, -1e308, 1.7e308])
@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_build_timeline_of_a_constant_loss_near_the_float_limit(value):
    """A rolling median of 1e308s averages two of them to inf at the edges; the learning
    phases are then left out (no drop to read), not an IndexError that ends the audit."""
    st = np.arange(200)
    run = RunData(
        identity=RunIdentity("mlflow", "r", name="r"),
        metrics=MetricTable(["train/loss"] * st.size, st, np.full(st.size, value)),
    )
    phases = build_timeline(run, [])
    assert "early learning" not in [p.name for p in phases]
    assert audit(run).verdict is not None
