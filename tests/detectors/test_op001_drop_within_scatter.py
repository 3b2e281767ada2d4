"""OP001 (loss-divergence): a loss back at its initial level diverged only when what it had learned
exceeds its own scatter. Real input from the own corpus: f26b1-16, the trainer_state.json of a 60-step
Unsloth QLoRA run logging the loss of every step (0.46-1.32 with no trend; point-to-point scatter band
0.50). Its smoothed dip from 0.78 to 0.58 and return was read as "learned, then lost it": diverged, which
the label forbids."""

from __future__ import annotations

from pathlib import Path

from mlaudit_core.audit import audit
from mlaudit_core.detectors.OP001 import LossDivergence
from mlaudit_core.formats import load_path
from mlaudit_core.report import Outcome, Severity

STATE = (
    Path(__file__).parent.parent
    / "data"
    / "realworld"
    / "runs"
    / "Artaccann--OSOL_backend"
    / "outputs"
)


def test_op001_dip_and_return_inside_the_scatter_is_no_divergence():
    runs = list(load_path(STATE / "trainer_state.json").runs)
    rep = audit(runs[-1][1])
    assert not [
        f for f in rep.findings if f.code == "OP001" and f.severity.rank >= Severity.ERROR.rank
    ], [f.message for f in rep.findings if f.code == "OP001"]
    assert rep.verdict.outcome is not Outcome.DIVERGED, rep.verdict.summary


def test_op001_noise_band_is_three_median_steps_of_the_second_half():
    assert abs(LossDivergence._noise_band([5.0, 4.0, 1.0, 1.1, 1.0, 1.1]) - 0.3) < 1e-9
