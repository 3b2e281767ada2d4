"""What a detector knows reaches the report of a real audit: its next actions
(``Detector.remedies_for``, ``Detector.crash_remedy_for``) and its hypotheses
(``Detector.hypotheses``), through the narrative that only iterates over findings.

One real input per family, audited as a user audits it (``mlaudit audit`` / ``mlaudit logs``):
console logs and CSV files of tests/data/realworld (public repositories, tests/data/realworld/
SOURCES.md) and a report of tests/data/reports. Each test compares the report with what the
primary finding's detector says of that same finding, so no expected text is written here. The
baseline (BL), CI (CI) and claims (CL) families are tested on their real fixtures in
tests/test_baseline.py and tests/test_ci_fixtures.py.
"""

from __future__ import annotations

import math
from pathlib import Path

from typer.testing import CliRunner

from mlaudit.cli import app
from mlaudit_core.detectors import registry
from mlaudit_core.report import AuditReport, Finding

DATA = Path(__file__).resolve().parents[1] / "data"
RUNS = DATA / "realworld" / "runs"


def _report(tmp_path: Path, *args: str) -> AuditReport:
    out = tmp_path / "report.json"
    res = CliRunner().invoke(app, [*args, "--format", "json", "--out", str(out)])
    assert out.exists(), res.output
    return AuditReport.model_validate_json(out.read_text())


def _primary(rep: AuditReport, code: str) -> Finding:
    """The report's first finding of ``code`` at the highest severity it has (the report orders
    the primary finding first among those of its severity)."""
    fs = [f for f in rep.findings if f.code == code]
    assert fs, f"no {code} finding: {rep.verdict.summary}"
    top = max(f.severity.rank for f in fs)
    return next(f for f in fs if f.severity.rank == top)


def _actions(rep: AuditReport) -> list[str]:
    return [a.action for a in rep.next_actions]


def _statements(rep: AuditReport) -> list[str]:
    return [h.statement for h in rep.hypotheses]


def test_a_preempted_job_gets_its_detectors_crash_remedy_and_hypotheses(tmp_path):
    """RT003: a SLURM job cancelled by the scheduler (realworld f5b4-02): the first action is
    RT003's crash remedy, not 'reproduce at the raising frame' (there is none); the ledger is
    RT003's."""
    rep = _report(
        tmp_path,
        "logs",
        str(RUNS / "owencqueen--PolymerGNN/formal/model_comparisons/SOAP/out_tg/SOAP.e"),
    )
    assert rep.verdict.outcome.value == "crashed"
    f = _primary(rep, "RT003")
    rt003 = registry()["RT003"]
    crash = rt003.crash_remedy_for(f)
    assert crash is not None and _actions(rep)[0] == crash.action
    assert {r.action for r in rt003.remedies_for(f)} <= set(_actions(rep))
    hs = rt003.hypotheses(f, rep.verdict.outcome) or []
    assert hs and [h.statement for h in hs] == _statements(rep)
    assert [h.status for h in hs] == [h.status for h in rep.hypotheses]


def test_a_slow_run_gets_its_timing_detectors_remedies(tmp_path):
    """SY008: a Megatron log whose time per iteration grows (report b2-14): SY008's remedies
    are the report's first actions for the slow run."""
    case = next(DATA.glob("reports/b2-14-*"))
    rep = _report(tmp_path, "logs", str(case / "train.log"), "--config", str(case / "context.txt"))
    assert rep.verdict.outcome.value == "slow"
    f = _primary(rep, "SY008")
    want = [r.action for r in registry()["SY008"].remedies_for(f)]
    assert want and _actions(rep)[: len(want)] == want


def test_an_unstable_run_gets_its_spike_detectors_remedy_and_hypotheses(tmp_path):
    """OP002: a console whose loss leaves its level for 100 logged steps four times (3x the
    curve, then back): OP002's remedy names the spike steps, and its hypotheses are the ledger.
    The run is written here: the real console this test used (realworld f5b3-18, about 50
    appended launches) is now read as its last launch, which is labelled overfit/plateaued."""
    losses = [2.0 * math.exp(-i / 60) + 0.5 for i in range(600)]
    for start in (150, 250, 350, 450):
        for i in range(start, start + 100):
            losses[i] *= 3
    log = tmp_path / "train.log"
    log.write_text(
        "\n".join(f"step={i} loss={x:.4f} lr=0.001" for i, x in enumerate(losses)) + "\n"
    )
    rep = _report(tmp_path, "logs", str(log))
    assert rep.verdict.outcome.value == "unstable"
    f = _primary(rep, "OP002")
    op002 = registry()["OP002"]
    want = [r.action for r in op002.remedies_for(f)]
    assert want and set(want) <= set(_actions(rep))
    assert str(f.facts["spike_steps"][0]) in want[0]
    hs = op002.hypotheses(f, rep.verdict.outcome) or []
    assert hs and {h.statement for h in hs} <= set(_statements(rep))


def test_an_overfit_run_gets_its_overfitting_detectors_remedy(tmp_path):
    """GE001: a Keras CSVLogger file whose validation loss rises from epoch 6 (realworld
    f5b5-01): GE001's test that tells overfitting from a split mismatch is among the actions,
    beside the outcome's own."""
    rep = _report(tmp_path, "audit", str(RUNS / "Achuthan2909--ECG-Analysis/training.log"))
    assert rep.verdict.outcome.value == "overfit"
    f = _primary(rep, "GE001")
    want = [r.action for r in registry()["GE001"].remedies_for(f)]
    assert want and set(want) <= set(_actions(rep))
    assert any(a.startswith("Keep the checkpoint") for a in _actions(rep))


def test_an_impossible_metric_gets_its_integrity_detectors_remedy(tmp_path):
    """LI007: a real Keras fit whose custom accuracy divides by a hard-coded batch size ends at
    1.0125 (tests/data/judgement/keras_metric, judgement_runs ``_keras_metric``): LI007's
    recomputation is the report's first action. (YOLOX's ``iou_loss``, own f7b2-01, is a weighted
    loss, not a bounded metric.)"""
    rep = _report(tmp_path, "audit", str(DATA / "judgement" / "keras_metric" / "training.csv"))
    assert rep.verdict.cause.value == "correctness_bug"
    f = _primary(rep, "LI007")
    want = [r.action for r in registry()["LI007"].remedies_for(f)]
    assert want and _actions(rep)[0] == want[0]


def test_missing_instrumentation_is_advised_by_its_detectors(tmp_path):
    """MI001: the same preempted job logged no validation metric: MI001 has a remedy ('what to log
    next time') and an open hypothesis for its finding; the report leads with the fix for the crash,
    and, since the job logged no epoch counter that shows it got past its first epoch
    (narrative._crashed_in_first_epoch), it gives no log-next-time action at all."""
    rep = _report(
        tmp_path,
        "logs",
        str(RUNS / "owencqueen--PolymerGNN/formal/model_comparisons/SOAP/out_tg/SOAP.e"),
    )
    f = _primary(rep, "MI001")
    want = [r.action for r in registry()["MI001"].remedies_for(f)]
    assert want and want[0] not in _actions(rep)
    assert _actions(rep)[0].startswith("Resubmit from the last checkpoint"), _actions(rep)
    hs = registry()["MI001"].hypotheses(f, rep.verdict.outcome) or []
    assert [h.status for h in hs] == ["open"] and str(f.facts["signal"]) in hs[0].statement
