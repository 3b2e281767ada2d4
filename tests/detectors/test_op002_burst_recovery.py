"""OP002 (loss-spike): a burst of spikes has recovered when a point between its spikes is back at
the earlier level, on real input from the own corpus (tests/data/realworld, labelled before any
mlaudit run).

f13b2-07: a nohup capture of a BERT binary fine-tune printing the loss after every batch (189
batches, 3 of 3 epochs, test accuracy 0.949). In epoch 2 single batches reach 0.155 and 0.158
between batches at 0.003-0.02; spikes closer than the 25-point window form one burst that runs
into the end of the log, and recovery measured only after the burst's last spike called it
unrecovered (unstable/model_convergence)."""

from __future__ import annotations

from pathlib import Path

from mlaudit_core.audit import audit
from mlaudit_core.formats import load_path
from mlaudit_core.report import Outcome, Severity

RUNS = Path(__file__).parent.parent / "data" / "realworld" / "runs"


def test_single_batch_spikes_back_at_the_earlier_level_between_them_recovered():
    runs = list(load_path(RUNS / "WindyAlan--finetune" / "nohup.out").runs)
    rep = audit(runs[-1][1])
    op002 = [f for f in rep.findings if f.code == "OP002"]
    assert op002, "the spikes are still reported"
    assert all(f.severity is Severity.INFO for f in op002), [f.message for f in op002]
    assert all(not f.facts.get("n_unrecovered") for f in op002)
    assert rep.verdict.outcome is not Outcome.UNSTABLE, rep.verdict.summary
