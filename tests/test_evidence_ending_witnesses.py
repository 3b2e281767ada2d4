"""How far a run got (mlaudit_core/verdict/evidence.py ``ending``) from every witness of it, on real
input (own corpus tests/data/realworld, shared/cases copy tests/data/cases):

- a tracker's end-of-run summary is a witness of the epoch reached that a cut history or a console
  whose epoch header is printed once does not carry (own f10b1-13: W&B ``.wandb`` history cut in
  epoch 1, ``wandb-summary.json`` at epoch 20 of 20): the run reached its plan;
- a short run with no patience param whose held-out metric last improved a few evaluations before a
  stop right after an evaluation is early stopping (tests/test_verdict_policy_newuser9_runs.py and
  newuser10 hold the Keras and Lightning runs); a best at the first evaluation and a rise to the stop
  is not (shared/cases overfit-small-data stays overfit).
"""

from __future__ import annotations

from pathlib import Path

from mlaudit_core.audit import audit
from mlaudit_core.formats import load_path
from mlaudit_core.report import Outcome

DATA = Path(__file__).parent / "data"


def _audit(path: Path):
    runs = list(load_path(path).runs)
    assert runs, f"nothing read from {path}"
    return audit(runs[-1][1])


def test_wandb_summary_epoch_reaches_the_plan_a_cut_history_does_not():
    rep = _audit(DATA / "realworld/runs/RanShui--PRML/wandb/run-20240105_165552-uw7u7luw")
    assert rep.verdict.outcome is Outcome.SUCCEEDED, rep.verdict.summary
    assert "Partial data" in rep.verdict.summary  # the cut history is still reported


def test_best_at_the_first_evaluation_then_a_rise_to_the_stop_is_no_early_stop():
    rep = _audit(DATA / "cases/overfit-small-data/train.log")
    assert rep.verdict.outcome is Outcome.OVERFIT, rep.verdict.summary
