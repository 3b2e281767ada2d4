"""OP008 (erratic-validation-loss): a held-out loss that jumps by factors but whose level fell and
whose last evaluation is among the best of the run's second half is the evaluation's scatter around a
falling curve, not a run that failed to settle, on real input from the own corpus
(tests/data/realworld, labelled before any mlaudit run).

f17b2-04: a Lightning CSVLogger metrics.csv of a TSDiff diffusion forecaster, 100 of 100 epochs,
valid_loss every 10 epochs 0.0179 ... 0.0355 (one spike) ... 0.0020 at the last, its minimum.
f21b1-02: a Lightning metrics.csv of a regressor, val_loss 8.7e-4 -> 1.8e-6 over 100 epochs with
2-5x jumps between epochs, last 1.82e-6 against a minimum of 1.72e-6. Both healthy by their labels,
both were called unstable. f7b3-14 (a GNN whose validation loss explodes 30x late, labelled
unstable/diverged) keeps the error finding.
"""

from __future__ import annotations

from pathlib import Path

from mlaudit_core.audit import audit
from mlaudit_core.formats import load_path
from mlaudit_core.report import Outcome, Severity
from mlaudit_core.rundata import RunData

RUNS = Path(__file__).parent.parent / "data" / "realworld" / "runs"
TSDIFF = (
    RUNS
    / "NatdanaiDan--Explore-a-new-method-of-forecasting-BTC-to-become-a-billionaire."
    / "lightning_logs"
    / "version_0"
    / "metrics.csv"
)
REGRESSOR = RUNS / "Driemann--ml-aos" / "lightning_logs" / "version_1" / "metrics.csv"
GNN = RUNS / "obfasina--Inverse_Problems_GNN" / "wandb" / "run-20220705_182613-3oj65ikk"


def _run(path: Path) -> RunData:
    return list(load_path(path).runs)[-1][1]


def _op008(rep):
    return [f for f in rep.findings if f.code == "OP008"]


def test_erratic_loss_ending_at_its_best_is_not_unstable():
    for path in (TSDIFF, REGRESSOR):
        rep = audit(_run(path))
        op = _op008(rep)
        assert op and all(f.severity is Severity.INFO for f in op), [f.message for f in op]
        assert op[0].facts["ends_at_best"] is True
        assert rep.verdict.outcome is not Outcome.UNSTABLE, rep.verdict.summary


def test_erratic_loss_ending_high_keeps_the_error():
    op = _op008(audit(_run(GNN)))
    assert op and op[0].severity is Severity.ERROR, [f.message for f in op]
    assert not op[0].facts.get("ends_at_best")
