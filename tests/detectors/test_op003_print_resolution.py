"""OP003 (loss plateau) reads a loss as frozen only from values printed precisely enough to show it
(mlaudit_core/signal.print_resolution), on real input: a report of the report corpus and artifacts of
the own corpus (tests/data/realworld).

- OpenNMT prints its perplexity with two decimals (report b4-08: ``Perplexity 8.29`` four times): the
  repeats are the rounding, not a loss no update moves, and the healthy run is not plateaued.
- Lightning's CSVLogger writes float32 at full precision (own csv01: an LSTM at 0.2500045, the MSE of
  predicting the mean, for thousands of steps): frozen, as before.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from mlaudit_core.audit import audit
from mlaudit_core.formats import load_path
from mlaudit_core.report import Outcome
from mlaudit_core.signal import print_resolution

OWN = Path(__file__).parents[1] / "data" / "realworld" / "runs"
REPORTS = Path(__file__).parents[1] / "data" / "reports"


def _audit(path: Path):
    runs = list(load_path(path).runs)
    assert runs, f"nothing read from {path}"
    return audit(runs[-1][1])


def _op003(rep):
    return [f for f in rep.findings if f.code == "OP003"]


def test_print_resolution_reads_the_decimal_unit_of_a_text_log():
    assert print_resolution(np.array([0.0497, 0.0496, 0.0530])) == 1e-4
    assert print_resolution(np.array([11.8, 1.1, 1.0])) == 0.1
    assert print_resolution(np.array([14.37, 8.29, np.nan])) == 0.01
    assert print_resolution(np.array([0.25000452995300293, 1.749620795249939])) is None
    assert print_resolution(np.array([np.nan])) is None


def test_loss_plateau_is_not_frozen_at_a_two_decimal_print():
    rep = _audit(next(REPORTS.glob("b4-08-*")) / "train.log")
    assert not any(f.facts.get("frozen") for f in _op003(rep)), [f.message for f in _op003(rep)]
    assert rep.verdict.outcome is not Outcome.PLATEAUED, rep.verdict.summary


def test_loss_plateau_is_frozen_at_full_float_precision():
    rep = _audit(OWN / "DiogoFerreira7--LSTM-Implementation/lightning_logs/version_6/metrics.csv")
    assert any(f.facts.get("frozen") for f in _op003(rep)), [f.message for f in rep.findings]
