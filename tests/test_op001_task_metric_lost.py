"""OP001 on a training loss that fell by orders of magnitude, then rose to 2x its best and stayed: the
held-out task metric decides whether the run lost what it learned (real HF trainer_state.json, own
corpus f10b1-02: a wav2vec2 CTC fine-tune whose WER and CER went back to 1.0)."""

from __future__ import annotations

import json
from pathlib import Path

from mlaudit_core.audit import audit
from mlaudit_core.formats import load_path
from mlaudit_core.report import Outcome

STATE = (
    Path(__file__).parent
    / "data"
    / "realworld"
    / "runs"
    / "siasio--StressDetection"
    / "results"
    / "trainer_state_first.json"
)


def _verdict(path: Path):
    (entry,) = load_path(path).runs
    return audit(next(x for x in entry if hasattr(x, "metrics")))


def test_a_task_metric_back_at_its_first_value_makes_a_2x_loss_rise_a_divergence():
    rep = _verdict(STATE)
    assert rep.verdict.outcome is Outcome.DIVERGED
    op = next(f for f in rep.findings if f.code == "OP001")
    assert "lost 100% of its improvement" in op.message


def test_the_same_loss_rise_with_the_task_metric_still_at_its_best_is_not(tmp_path):
    """The same file with the last evaluations' WER and CER at their best values: the loss regained 27-43% of
    its drop in ratio, under half, and the metric the run is judged by kept its improvement."""
    state = json.loads(STATE.read_text())
    for h in state["log_history"]:
        if "eval_wer" in h and h["step"] > 1250:
            h["eval_wer"], h["eval_cer"] = 0.33, 0.16
    p = tmp_path / "trainer_state.json"
    p.write_text(json.dumps(state))
    rep = _verdict(p)
    assert not [f for f in rep.findings if f.code == "OP001"]
