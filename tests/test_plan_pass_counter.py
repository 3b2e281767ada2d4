"""plan.pass_counter_total / planned_lengths: a ``step k/N`` counter that restarts at every pass counts
one pass's batches, not the run's planned steps.

Real input: own corpus f20b2-11, a ChineseNER (BiLSTM-CRF) Python-logging console of 100 passes
(``iteration:2 step:56/1044`` after ``iteration:1 step:1000/1044``), which the console reader turns
into ``log.total_steps`` 1044.
"""

from __future__ import annotations

from pathlib import Path

from mlaudit_core.formats import load_path
from mlaudit_core.plan import pass_counter_total, planned_lengths

NER = (
    Path(__file__).resolve().parent / "data/realworld/runs/OYE93--ChineseNER-Platform/log/train.log"
)


def test_a_per_pass_batch_counter_is_no_planned_length():
    (_, run), *_ = load_path(NER).runs
    assert pass_counter_total([c.text for c in run.console]) == 1044.0
    assert all(p.planned != 1044.0 for p in planned_lengths(run))


def test_a_single_restart_is_a_relaunch_not_a_pass():
    """One restart (a relaunch appended to the console) keeps the counter as the plan."""
    lines = [f"step {k}/1000 loss 1.0" for k in (100, 200, 300, 100, 200, 300, 400)]
    assert pass_counter_total(lines) is None
    lines = [f"step {k}/1000 loss 1.0" for k in (100, 200, 900, 1000, 100, 200, 1000, 50, 150)]
    assert pass_counter_total(lines) == 1000.0
