"""OP002 (loss-spike): a spike the loss came back from later than ``recovery_points``, and then went on
to end below its level before the spike, is a transient the run outgrew, not an instability. Real input
from the own corpus: f25b2-03, the tab-separated loss table of an adversarial 3D-pose model (5000 rows):
2d_loss at 2.9 rises to 17.7 near row 100, is back under 3 by row 300 and ends at 0.16; called
unstable/model_convergence for "1 did not recover within 100 points"."""

from __future__ import annotations

from pathlib import Path

from mlaudit_core.audit import audit
from mlaudit_core.formats import load_path
from mlaudit_core.report import Outcome, Severity

LOG = (
    Path(__file__).parent.parent
    / "data"
    / "realworld"
    / "runs"
    / "lyuheng--unsupervised_3d_pose"
    / "checkpoints"
    / "log.txt"
)


def test_op002_spike_recovered_late_and_outgrown_is_benign():
    runs = list(load_path(LOG).runs)
    rep = audit(runs[-1][1])
    op002 = [f for f in rep.findings if f.code == "OP002"]
    assert op002, "the spikes are still reported"
    assert all(f.severity is Severity.INFO for f in op002), [f.message for f in op002]
    assert any(f.facts.get("n_late") for f in op002)
    assert rep.verdict.outcome is not Outcome.UNSTABLE, rep.verdict.summary
