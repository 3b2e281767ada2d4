"""SY005 (time-outside-training): one pause that holds most of the time outside the steps is a single
stop of the run, not a slow run (``TimeOutsideTraining._one_pause``), on real input from the own corpus
(tests/data/realworld, labelled before any mlaudit run).

f10b2-01: an HF Trainer TensorBoard logdir of a protein-regression fine-tune, 1281 steps logged every
10 at about 11 s each, finished (train_runtime 7125 s), and one gap of 4964 s between steps 1200 and
1210: 79.5% of the wall time outside steps, 88% of it in that one gap. It was called slow/infra_runtime;
labelled succeeded/healthy. f17b2-05 (a JAX LSTM on W&B whose steps stall for hours in a row of gaps
before a KeyboardInterrupt) keeps the error finding.
"""

from __future__ import annotations

from pathlib import Path

from mlaudit_core.audit import audit
from mlaudit_core.formats import load_path
from mlaudit_core.report import Outcome, Severity
from mlaudit_core.rundata import RunData

RUNS = Path(__file__).parent.parent / "data" / "realworld" / "runs"
HF_REGRESSION = RUNS / "aarugunj27--EnzymeKcatAnaylsis" / "logs"
JAX_LSTM = RUNS / "Tarun-AK--scaling" / "wandb" / "latest-run"


def _run(path: Path) -> RunData:
    return list(load_path(path).runs)[-1][1]


def _sy005(rep):
    return [f for f in rep.findings if f.code == "SY005"]


def test_one_pause_is_not_a_slow_run():
    rep = audit(_run(HF_REGRESSION))
    sy = _sy005(rep)
    assert sy and sy[0].severity is Severity.INFO and sy[0].facts["kind"] == "pause", [
        f.message for f in sy
    ]
    assert sy[0].facts["pause_seconds"] > 4000
    assert rep.verdict.outcome is not Outcome.SLOW, rep.verdict.summary


def test_recurring_gaps_keep_the_error():
    sy = _sy005(audit(_run(JAX_LSTM)))
    assert sy and sy[0].severity is Severity.ERROR, [f.message for f in sy]
    assert sy[0].facts.get("kind") != "pause"
