"""Claims in prose checked against logged telemetry (core functions, no CLI)."""

from __future__ import annotations

import numpy as np

from mlaudit_core import MetricTable, RunData, RunIdentity, RunStatus
from mlaudit_core.audit import audit_with_claims
from mlaudit_core.claims import check_claims, extract_claims

PR = """## Fused optimizer step

* val accuracy 92.1% on the held-out split
* **2x faster** than main
* loss converged to 1.8
* no regression on the eval suite
* BLEU of 31.2
"""


def run(rid="pr", acc=(0.61, 0.80, 0.90, 0.9206), loss_end=1.83, tput=2000.0, seed=0) -> RunData:
    rng = np.random.default_rng(seed)
    steps = np.arange(1, 201)
    loss = (
        1.8
        + (4.0 - 1.8) * np.exp(-steps / 30)
        + (loss_end - 1.8)
        + 0.003 * rng.standard_normal(steps.size)
    )
    keys = (
        ["train/loss"] * steps.size + ["val/accuracy"] * len(acc) + ["perf/throughput"] * steps.size
    )
    st = list(steps) + [50 * (i + 1) for i in range(len(acc))] + list(steps)
    vals = list(loss) + list(acc) + list(tput + 20 * rng.standard_normal(steps.size))
    return RunData(
        RunIdentity("test", rid), status=RunStatus.FINISHED, metrics=MetricTable(keys, st, vals)
    )


def test_extracts_the_claim_shapes_with_their_lines():
    cs = extract_claims(PR, "PR.md")
    got = [(c.line, c.kind, c.value) for c in cs]
    assert (3, "value", 92.1) in got and (4, "speedup", 2.0) in got and (5, "value", 1.8) in got
    assert (6, "no_regression", None) in got and (7, "value", 31.2) in got
    acc = next(c for c in cs if c.line == 3)
    assert acc.percent and acc.decimals == 1 and acc.source == "PR.md"
    assert next(c for c in cs if c.line == 5).qualifier == "final"
    pct = extract_claims(
        "Now 30% faster and val loss below 2.0; accuracy improved from 90.3% to 92.1%."
    )
    assert [c.value for c in pct if c.kind == "speedup"] == [1.3]
    assert any(c.comparator == "<" and c.value == 2.0 for c in pct)
    assert any(c.before == 90.3 and c.value == 92.1 for c in pct)


def test_value_claims_respect_the_written_precision():
    checks = {c.claim.line: c for c in check_claims(extract_claims(PR), run())}
    assert checks[3].status == "supported"  # 0.9206 rounds to 92.1%
    assert checks[5].status == "supported"  # final ~1.83 within +-0.05 of 1.8
    assert checks[7].status == "unverifiable" and "bleu" in checks[7].explanation.lower()
    assert checks[4].status == "unverifiable"  # a speedup needs a baseline
    assert checks[6].status == "unverifiable"
    wrong = {
        c.claim.line: c
        for c in check_claims(extract_claims(PR), run(acc=(0.6, 0.85, 0.874), loss_end=2.3))
    }
    assert wrong[3].status == "contradicted" and wrong[3].figures["final"] == 0.874
    assert "87.4%" in wrong[3].explanation
    assert wrong[5].status == "contradicted"


def test_best_value_claim_is_flagged_when_the_final_is_worse():
    [c] = check_claims(extract_claims("val accuracy 92.1%"), run(acc=(0.61, 0.921, 0.90)))
    assert (
        c.status == "supported"
        and "best" in c.explanation
        and "final value is 90%" in c.explanation
    )


def test_speedup_and_no_regression_against_baselines():
    base = [run(f"main{i}", tput=1000.0, seed=i) for i in (1, 2, 3)]
    checks = {c.claim.line: c for c in check_claims(extract_claims(PR), run(tput=2000.0), base)}
    assert checks[4].status == "supported" and 1.9 < checks[4].figures["measured_factor"] < 2.1
    slow = {c.claim.line: c for c in check_claims(extract_claims(PR), run(tput=1300.0), base)}
    assert slow[4].status == "contradicted" and "1.3" in slow[4].explanation


def test_run_audit_built_on_a_contradicted_claim_is_unsupported_claim():
    base = [run(f"main{i}", tput=1000.0, seed=i) for i in (1, 2, 3)]
    rep = audit_with_claims(
        run(acc=(0.6, 0.85, 0.874), tput=2000.0, seed=4), PR, baselines=base, source="PR.md"
    )
    assert rep.verdict.cause.value == "unsupported_claim"
    assert "Underlying verdict" in rep.verdict.summary
    bad = [f for f in rep.findings if f.code == "CL001"]
    assert {f.facts["line"] for f in bad} == {3, 6}  # 87.4% is not 92.1%, and it is worse than main
    assert (
        "val/accuracy worse than 3 baseline(s)"
        in next(f for f in bad if f.facts["line"] == 6).message
    )
    assert any(f.code == "CL002" for f in rep.findings)  # BLEU is not logged
    assert rep.hypotheses[0].status == "rejected"


def test_supported_claims_leave_the_verdict_alone():
    base = [run(f"main{i}", tput=1000.0, seed=i) for i in (1, 2, 3)]
    rep = audit_with_claims(
        run(tput=2000.0, seed=4), "val accuracy 92.1%, 2x faster, no regression", baselines=base
    )
    assert rep.verdict.cause.value != "unsupported_claim"
    ok = next(f for f in rep.findings if f.code == "CL003")
    assert len(ok.facts["claims"]) == 3
