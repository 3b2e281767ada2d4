"""``pytest.approx`` on a mapping of final metrics, recomputed key by key with the test's rel.

Real jobs (tests/ci_shapes.py): ``train.py`` and ``evaluate.py`` write ``eval_results.json``;
the test compares it with expected values written in the test (``EXPECTED = {...}``) or read
from ``golden_eval.json``. pytest prints one assertion for the whole mapping (mismatched keys,
max absolute difference, max relative difference over ``|expected|``); the audit's per-key
figures must add up to it.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from ci_shapes import GOOD, make_mapping_repo, run_eval_job
from test_ci_shapes import IMAGE_BUMP, audit


def _expected(repo, literal):
    if literal:
        src = (repo / "tests" / "test_convergence.py").read_text()
        return eval(re.search(r"EXPECTED = (\{.*\})", src)[1])  # our own fixture's literal
    return json.loads((repo / "golden_eval.json").read_text())


@pytest.mark.parametrize("literal", [True, False], ids=["literal", "golden-file"])
def test_mapping_regression_recomputed_per_key(tmp_path, literal):
    repo = make_mapping_repo(tmp_path, literal)
    log = run_eval_job(repo, dict(GOOD, lr=0.45))  # the change under test
    text = log.read_text()
    m = re.search(r"Mismatched elements: (\d+) / (\d+)", text)
    log_abs = float(re.search(r"Max absolute difference: (\S+)", text)[1])
    log_rel = float(re.search(r"Max relative difference: (\S+)", text)[1])
    r, _ = audit(repo, log)
    exp = _expected(repo, literal)
    act = json.loads((repo / "eval_results.json").read_text())
    rows = {f["facts"]["metric"]: f["facts"] for f in r["findings"] if f["code"] == "CI002"}
    assert set(rows) == set(exp)
    n_out = 0
    for k, e in exp.items():
        c = next(c for c in rows[k]["checks"] if c["kind"] == "approx")
        assert c["rtol"] == 1e-4
        an = c["analysis"]
        rel = abs(act[k] - e) / abs(e)
        assert an["max_rel"] == pytest.approx(rel, rel=1e-12)
        assert an["n_outside"] == int(abs(act[k] - e) > max(1e-4 * abs(e), 1e-12))
        n_out += an["n_outside"]
        assert an["log_agrees"] is True and an["dict_keys"] == list(exp)
    assert (int(m[1]), int(m[2])) == (n_out, len(exp))
    assert log_abs == pytest.approx(max(abs(act[k] - exp[k]) for k in exp), rel=1e-9)
    assert log_rel == pytest.approx(max(abs(act[k] - exp[k]) / abs(exp[k]) for k in exp), rel=1e-9)
    v = r["verdict"]
    assert (v["outcome"], v["cause"]) == ("regressed", "model_convergence"), v["summary"]
    assert "of the mapping compared there" in v["summary"]
    assert "already differs at step" not in v["summary"]  # final values have no first step


def test_mapping_drift_sized_values_are_not_called_a_regression(tmp_path):
    """Reduced-precision matmuls move the final metrics by ~1e-4 relative: drift-sized, but two
    values show no sign pattern: metric_policy with a low confidence and the old-code check."""
    repo = make_mapping_repo(tmp_path, True)
    t = repo / "tests" / "test_convergence.py"
    t.write_text(t.read_text().replace("rel=1e-4", "rel=1e-5"))  # a tight final-metric gate
    log = run_eval_job(repo, GOOD, env={"MATMUL_PRECISION": "float16"})
    log.write_text(IMAGE_BUMP + "\n" + log.read_text())
    r, _ = audit(repo, log)
    rows = [f["facts"] for f in r["findings"] if f["code"] == "CI002"]
    an = [c["analysis"] for f in rows for c in f["checks"] if c["passed"] is False]
    if not an:
        pytest.fail("the reduced-precision run passed rel=1e-4; the fixture no longer drifts")
    assert max(a["excess"] for a in an) < 10 and np.isfinite(an[0]["max_rel"])
    v = r["verdict"]
    assert (v["outcome"], v["cause"]) == ("succeeded", "metric_policy"), v["summary"]
    assert v["confidence"] == 0.5 and "run the old code on this runner" in v["summary"]
