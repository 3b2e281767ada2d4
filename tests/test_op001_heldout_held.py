"""OP001 (mlaudit_core/detectors/OP001.py) on a training loss logged as single-batch values whose
rise to the end is scatter while the held-out loss holds (files in tests/data/fixer_nu13, README
there)."""

from __future__ import annotations

from pathlib import Path

from mlaudit_core.audit import audit
from mlaudit_core.formats import load_path

DATA = Path(__file__).parent / "data" / "fixer_nu13"


def test_op001_single_batch_scatter_under_a_held_heldout_loss_is_no_divergence():
    run = load_path(DATA / "lightning_csv_moons_healthy").runs[0][1]
    rep = audit(run)
    op1 = [f for f in rep.findings if f.code == "OP001"]
    assert op1 and all(f.severity.value == "info" and f.facts.get("heldout_held") for f in op1)
    assert (rep.verdict.outcome.value, rep.verdict.cause.value) == ("succeeded", "healthy"), (
        rep.verdict.summary
    )
