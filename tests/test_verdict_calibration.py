"""The confidence calibration map (``mlaudit_core.verdict.evidence.calibrated`` and
``CALIBRATION``): monotone and bounded per evidence class, equal to the fit of the committed
first-run table (``benchmarks/confidence_first_runs.csv``: verdicts of the first run of every fresh
batch f9-f16 / b12-b28 and f18-f26 / b31-b48, on runs the rules had not seen), calibrated on rounds it was not fitted on,
applied to real artifacts of the own corpus (tests/data/realworld), and stated in docs/index.md.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from realworld_helpers import own_run

from mlaudit_core.audit import audit
from mlaudit_core.verdict.evidence import CALIBRATION, calibrated

ROOT = Path(__file__).parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
cc = pytest.importorskip("confidence_calibration")


def test_calibrated_is_monotone_and_bounded_in_every_evidence_class():
    scores = [i / 100 for i in range(5, 100)]
    for kind in CALIBRATION:
        ps = [calibrated(s, kind) for s in scores]
        assert all(0 < p < 1 for p in ps), kind
        assert all(b >= a for a, b in zip(ps, ps[1:])), kind
    with pytest.raises(KeyError):
        calibrated(0.5, "not-a-class")


def test_calibration_constants_are_the_fit_of_the_first_run_table():
    rows = cc.load()
    assert {r["evidence"] for r in rows} == set(CALIBRATION)
    # round 17 (f17, b29-b30) ran on code that printed no evidence class; no later batch is in yet
    assert not any(r["id"].startswith(("f17", "b29-", "b30-", "f27", "b49-", "b50-")) for r in rows)
    assert {r["round"] for r in rows} == set(range(9, 17)) | set(range(18, 27))
    fitted = cc.fit(rows)
    for kind, (a, b) in CALIBRATION.items():
        assert fitted[kind][0] == pytest.approx(a, abs=0.01), kind
        assert fitted[kind][1] == pytest.approx(b, abs=0.01), kind


def test_confidence_calibration_on_rounds_it_was_not_fitted_on():
    """Leave-one-round-out over the 609 first-run verdicts: ECE 0.136 raw -> at most 0.05; fitted
    on rounds 9-20 and checked on 21-26: ECE and Brier no worse than raw (0.098 -> 0.091, 0.248 ->
    0.229)."""
    rows = cc.load()
    loro = cc.leave_one_round_out(rows)
    _, ece_raw, brier_raw = cc.reliability([(s, y) for s, _, y in loro])
    _, ece, brier = cc.reliability([(c, y) for _, c, y in loro])
    assert ece <= 0.05 < ece_raw and brier < brier_raw
    early = cc.fit([r for r in rows if r["round"] <= cc.SPLIT])
    late = [r for r in rows if r["round"] > cc.SPLIT]
    _, ece_raw, brier_raw = cc.reliability([(r["score"], r["right"]) for r in late])
    _, ece, brier = cc.reliability([(cc.apply(early, r), r["right"]) for r in late])
    assert ece <= ece_raw and brier < brier_raw


def test_confidence_of_real_runs_is_the_calibrated_probability_of_their_evidence_class():
    """wb07: a ResNet-18 W&B run whose log holds a CUDA out-of-memory traceback at the start (an
    observed signature); wb06: a ResNet-18 CIFAR-100 run stopped early, healthy (no failure finding
    on its curves); wb03: an AlexNet overfit read from its validation loss (a failure read from a
    curve, mapped to the fraction right of that class on unseen runs)."""
    oom = audit(own_run("wb07-resnet18-cuda-oom-at-start")).verdict
    assert (oom.outcome.value, oom.cause.value) == ("crashed", "infra_runtime")
    assert "calibrated (observed)" in (oom.basis or "")
    assert calibrated(0.05, "observed") < oom.confidence < calibrated(0.99, "observed")
    healthy = audit(own_run("wb06-resnet18-cifar100-earlystop-healthy")).verdict
    assert (healthy.outcome.value, healthy.cause.value) == ("succeeded", "healthy")
    assert "calibrated (no_failure)" in (healthy.basis or "")
    overfit = audit(own_run("wb03-alexnet-cifar10-overfit-val-loss-doubles")).verdict
    assert overfit.outcome.value == "overfit" and "calibrated (curve)" in (overfit.basis or "")
    assert overfit.confidence == pytest.approx(calibrated(0.5, "curve"), abs=0.006)
    # a failure read from a curve is right less often on unseen runs than an observed crash
    assert overfit.confidence < oom.confidence


def test_docs_state_the_calibration_constants():
    text = (ROOT / "docs" / "index.md").read_text()
    for kind, (a, b) in CALIBRATION.items():
        assert f"`{kind}`" in text and f"{a:g}" in text and f"{b:g}" in text, kind
