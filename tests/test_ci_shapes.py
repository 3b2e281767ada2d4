"""`mlaudit ci` on the plain golden-value suites people write, one real failing job per shape.

Each fixture (tests/ci_shapes.py) writes a small numpy training repository with a pytest
suite, records its golden values by running ``train.py``, then runs the CI job for real
(``python train.py`` and ``python -m pytest`` in a subprocess); the audited log is that
job's output. Every figure the audit recomputes is checked twice: against the figures the
failed assertion printed in the log (pytest's, numpy's or torch's own message, parsed here
with plain regular expressions), and against an independent recomputation in this test.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from ci_shapes import (
    ALLCLOSE_TEST,
    APPROX_TEST,
    ASSERT_CLOSE_GOLDEN_TEST,
    ASSERT_CLOSE_TEST,
    CONFTEST,
    GOOD,
    HANDWRITTEN_TEST,
    THROUGHPUT_TEST,
    TIMEOUT_TEST,
    WORKFLOW,
    make_repo,
    run_job,
)
from typer.testing import CliRunner

from mlaudit.cli import app

IMAGE_BUMP = (
    "Bump base image from ghcr.io/acme/train-ci:24.05 to 24.09 (reduced-precision matmul "
    "by default)"
)


def audit(repo, *logs, extra=(), env=None) -> tuple[dict, str]:
    out = repo.parent / "report.json"
    res = CliRunner().invoke(
        app,
        [
            "ci",
            "--repo",
            str(repo),
            "--logs",
            *map(str, logs),
            *extra,
            "--format",
            "json",
            "--out",
            str(out),
        ],
        env=env or {},
    )
    assert res.exit_code == 0, res.output
    return json.loads(out.read_text()), res.output


def ci002(report: dict, metric: str = "loss") -> dict:
    return next(
        f for f in report["findings"] if f["code"] == "CI002" and f["facts"]["metric"] == metric
    )


def failing(report: dict, metric: str = "loss") -> dict:
    return next(c for c in ci002(report, metric)["facts"]["checks"] if c["passed"] is False)


def log_figures(text: str) -> dict:
    """The failed comparison's figures as printed (pytest / numpy wording)."""
    out = {}
    m = re.search(r"Mismatched elements: (\d+) / (\d+)", text)
    if m:
        out["n_mismatch"], out["n_total"] = int(m[1]), int(m[2])
    m = re.search(r"Max absolute difference(?: among violations)?: (\S+)", text)
    if m:
        out["max_abs"] = float(m[1])
    m = re.search(r"Max relative difference(?: among violations)?: (\S+)", text)
    if m:
        out["max_rel"] = float(m[1])
    return out


def curves(repo):
    golden = json.loads((repo / "golden_values.json").read_text())
    actual = json.loads((repo / "metrics.json").read_text())
    return np.array(actual["loss"]), np.array(golden["loss"]), golden


# --- approx on a loss curve: a real regression --------------------------------------------


@pytest.fixture(scope="module")
def regression(tmp_path_factory):
    """The change under test lowers the learning rate 0.5 -> 0.45; golden rtol 1e-4 is read
    from the golden file by the test (``rel=GOLDEN["rtol"]``)."""
    repo = make_repo(tmp_path_factory.mktemp("regression"), APPROX_TEST, rtol=1e-4)
    log = run_job(repo, dict(GOOD, lr=0.45))
    return repo, log


def test_approx_regression_is_model_convergence_with_the_logs_figures(regression):
    repo, log = regression
    text = log.read_text()
    assert "FAILED tests/test_convergence.py::test_loss_curve_matches_golden" in text
    r, _ = audit(repo, log)
    assert (r["verdict"]["outcome"], r["verdict"]["cause"]) == ("regressed", "model_convergence")
    c = failing(r)
    assert c["kind"] == "approx" and c["rtol"] == 1e-4
    assert (
        "golden_values.json" in c["tolerance_source"] and c["path"] == "tests/test_convergence.py"
    )
    an = c["analysis"]
    # independent recomputation with pytest.approx's rule |a - e| <= max(rel |e|, 1e-12)
    a, g, _ = curves(repo)
    outside = np.abs(a - g) > np.maximum(1e-4 * np.abs(g), 1e-12)
    assert an["n_outside"] == int(outside.sum()) and an["n"] == 40
    assert an["max_rel"] == pytest.approx(float(np.max(np.abs(a - g) / np.abs(g))))
    assert an["median_rel"] == pytest.approx(float(np.median(np.abs(a - g) / np.abs(g))))
    # the log's own figures: pytest prints max |a - e| and max |a - e| / |a| over mismatches
    fig = log_figures(text)
    assert (fig["n_mismatch"], fig["n_total"]) == (an["n_outside"], an["n"])
    assert an["max_abs_outside"] == pytest.approx(fig["max_abs"], rel=1e-9)
    assert an["max_rel_outside_vs_actual"] == pytest.approx(fig["max_rel"], rel=1e-9)
    assert an["log_agrees"] is True
    assert an["excess"] > 100  # orders of magnitude outside, not drift
    assert an["onset_step"] == 2  # step 1 is before any update: identical
    s = r["verdict"]["summary"]
    assert "not numerical drift" in s and f"{an['n_outside']} of 40" in s
    assert "Bisect" in r["next_actions"][0]["action"]


# --- allclose after an environment bump: drift ----------------------------------------------


@pytest.fixture(scope="module")
def drift(tmp_path_factory):
    """Same code and config; the new image runs matmuls in reduced precision (float16 inputs)."""
    repo = make_repo(tmp_path_factory.mktemp("drift"), ALLCLOSE_TEST.replace("{rtol}", "1e-4"))
    log = run_job(repo, GOOD, env={"MATMUL_PRECISION": "float16"}, header=IMAGE_BUMP)
    return repo, log


def test_allclose_drift_after_image_bump_is_metric_policy(drift):
    repo, log = drift
    text = log.read_text()
    assert "Not equal to tolerance rtol=0.0001" in text
    r, _ = audit(repo, log)
    assert (r["verdict"]["outcome"], r["verdict"]["cause"]) == ("succeeded", "metric_policy")
    c = failing(r)
    an = c["analysis"]
    a, g, _ = curves(repo)
    # numpy.testing.assert_allclose: |a - d| <= atol + rtol |d|, atol 0
    outside = np.abs(a - g) > 1e-4 * np.abs(g)
    assert an["n_outside"] == int(outside.sum()) > 0
    assert an["max_rel"] == pytest.approx(float(np.max(np.abs(a - g) / np.abs(g))))
    fig = log_figures(text)  # numpy prints its maxima "among violations"
    assert (fig["n_mismatch"], fig["n_total"]) == (an["n_outside"], 40)
    assert an["max_abs_outside"] == pytest.approx(fig["max_abs"], rel=1e-4)
    assert an["max_rel_outside"] == pytest.approx(fig["max_rel"], rel=1e-4)
    assert an["log_agrees"] is True
    dev = a - g
    assert an["n_pos"] == int((dev > 0).sum()) and an["n_neg"] == int((dev < 0).sum())
    assert an["sign"] == "mixed" and 1 < an["excess"] < 10
    s = r["verdict"]["summary"]
    assert "Numerical drift" in s and "24.09" in s and "not a model regression" in s
    widen = r["next_actions"][0]["action"]
    assert "Widen the loss gate at tests/test_convergence.py:" in widen
    new = float(re.search(r"to rtol=(\S+) ", widen)[1])
    assert an["max_rel"] < new <= 4 * an["max_rel"] and "still fails" in widen
    hyps = {h["statement"].split(":")[0]: h["status"] for h in r["hypotheses"]}
    assert hyps["model/convergence regression"] == "rejected"
    assert hyps["numerical drift from an environment change (image, library, hardware)"] == (
        "supported"
    )


def test_approx_drift_is_not_called_a_regression(tmp_path):
    """The issue's case: ``pytest.approx(rel=1e-4)`` failing by ~0.01% with mixed signs."""
    repo = make_repo(tmp_path, APPROX_TEST, rtol=1e-4)
    log = run_job(repo, GOOD, env={"MATMUL_PRECISION": "float16"}, header=IMAGE_BUMP)
    r, _ = audit(repo, log)
    assert (r["verdict"]["outcome"], r["verdict"]["cause"]) == ("succeeded", "metric_policy")
    an = failing(r)["analysis"]
    fig = log_figures(log.read_text())
    assert (fig["n_mismatch"], fig["n_total"]) == (an["n_outside"], 40)
    assert an["max_rel_outside_vs_actual"] == pytest.approx(fig["max_rel"], rel=1e-9)
    assert an["max_rel"] < 1e-3 and an["sign"] == "mixed"
    assert "do not refresh" not in json.dumps(r["next_actions"])
    assert "rel=" in r["next_actions"][0]["action"]  # widen approx's own argument


def test_github_summary_and_annotation_for_the_failing_gate(drift, tmp_path):
    repo, log = drift
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    _, output = audit(
        repo, log, env={"GITHUB_STEP_SUMMARY": str(summary), "GITHUB_ACTIONS": "true"}
    )
    md = summary.read_text()
    assert md.startswith("earlier step\n")  # appended, as GitHub expects
    assert "mlaudit ci: **succeeded** / **metric_policy**" in md
    assert "| loss | allclose | `tests/test_convergence.py:" in md and "mixed" in md
    ann = [x for x in output.splitlines() if x.startswith("::error ")]
    assert len(ann) == 1, output
    line = int(re.search(r"line=(\d+)", ann[0])[1])
    src = (repo / "tests" / "test_convergence.py").read_text().splitlines()
    assert "assert_allclose" in src[line - 1]
    assert ann[0].startswith("::error file=tests/test_convergence.py,line=")
    assert "title=mlaudit ci%3A succeeded / metric_policy::" in ann[0] and "\n" not in ann[0]


def test_assert_close_float32_drift_recomputed_in_the_tensor_dtype(tmp_path):
    """torch.testing.assert_close on torch.tensor(list): float32, rtol 1.3e-6, atol 1e-5.

    The reduced-precision image moves the loss by ~1e-4 relative, far past torch's float32
    round-off tolerance yet of both signs and within numerical precision: drift."""
    repo = make_repo(tmp_path, ASSERT_CLOSE_GOLDEN_TEST)
    log = run_job(repo, GOOD, env={"MATMUL_PRECISION": "float16"}, header=IMAGE_BUMP)
    text = log.read_text()
    assert "Tensor-likes are not close!" in text
    r, _ = audit(repo, log)
    c = failing(r)
    assert c["dtype"] == "float32" and (c["rtol"], c["atol"]) == (1.3e-6, 1e-5)
    an = c["analysis"]
    a, g, _ = curves(repo)
    a32, g32 = a.astype(np.float32), g.astype(np.float32)
    d = np.abs(a32 - g32)
    outside = d > np.float32(1e-5) + np.float32(1.3e-6) * np.abs(g32)
    assert an["n_outside"] == int(outside.sum())
    m = re.search(r"Mismatched elements: (\d+) / (\d+)", text)
    assert (int(m[1]), int(m[2])) == (an["n_outside"], 40)
    ga = float(re.search(r"Greatest absolute difference: (\S+)", text)[1])
    gr = float(re.search(r"Greatest relative difference: (\S+)", text)[1])
    assert an["max_abs"] == pytest.approx(ga, rel=1e-6)
    assert an["max_rel"] == pytest.approx(gr, rel=1e-5)
    assert an["log_agrees"] is True
    assert (r["verdict"]["outcome"], r["verdict"]["cause"]) == ("succeeded", "metric_policy")
    assert "within numerical precision" in r["verdict"]["summary"]


# --- assert_close with a golden file of another length: harness -------------------------


def test_assert_close_length_mismatch_is_a_harness_error(tmp_path):
    repo = make_repo(
        tmp_path,
        ASSERT_CLOSE_TEST,
        golden="golden/loss_golden.json",
        golden_cfg=dict(GOOD, steps=20),
    )
    log = run_job(repo, GOOD)  # the test now trains 40 steps; the golden file has 20
    text = log.read_text()
    assert "torch.Size([40]) != torch.Size([20])" in text
    r, _ = audit(repo, log)
    assert r["verdict"]["cause"] == "metric_policy" and r["verdict"]["outcome"] != "regressed"
    s = r["verdict"]["summary"]
    assert "Harness error" in s and "20 steps" in s and "40" in s
    c = failing(r)
    assert c["kind"] == "allclose" and c["dtype"] == "float32"
    assert (c["rtol"], c["atol"]) == (1.3e-6, 1e-5)  # torch's float32 defaults
    assert c["analysis"]["lengths"] == [20, 40] and c["analysis"]["log_agrees"] is True
    f = next(x for x in r["findings"] if x["code"] == "CI004")
    assert (f["facts"]["n_golden"], f["facts"]["n_actual"], f["facts"]["common_ok"]) == (
        20,
        40,
        True,
    )


# --- throughput-only failure --------------------------------------------------------------


def test_throughput_only_failure_is_not_a_model_regression(tmp_path):
    repo = make_repo(tmp_path, THROUGHPUT_TEST)
    log = run_job(repo, GOOD, env={"INPUT_DELAY_S": "0.02"})  # a slower input pipeline
    text = log.read_text()
    assert "PASSED tests/test_convergence.py::test_loss_curve_matches_golden" in text
    printed = float(re.search(r"assert ([\d.]+) > 2000", text)[1])
    r, _ = audit(repo, log)
    assert r["verdict"]["outcome"] == "slow" and r["verdict"]["cause"] == "infra_runtime"
    loss = ci002(r)["facts"]["checks"][0]
    assert loss["passed"] is True and loss["analysis"]["n_outside"] == 0
    t = next(x for x in r["findings"] if x["code"] == "CI005")
    assert t["facts"]["metrics_pass"] is True
    a = json.loads((repo / "metrics.json").read_text())["samples_per_sec"]
    assert float(np.median(a)) == pytest.approx(printed)
    assert f"{printed:g}" in t["message"] or f"{float(np.median(a)):g}" in t["message"]


# --- a job timeout with every metric passing ---------------------------------------------


def test_job_timeout_with_metrics_passing_is_not_a_regression(tmp_path):
    repo = make_repo(
        tmp_path, TIMEOUT_TEST, rtol=1e-4, files={".github/workflows/ci.yml": WORKFLOW}
    )
    log = run_job(repo, GOOD, limit_s=15, runner_limit="1 minutes")
    text = log.read_text()
    assert "exceeded the maximum execution time" in text
    assert "test_loss_curve_matches_golden PASSED" in text
    r, output = audit(repo, log, env={"GITHUB_ACTIONS": "true"})
    ann = [x for x in output.splitlines() if x.startswith("::error ")]
    assert ann and ann[0].startswith("::error file=.github/workflows/ci.yml,line=6,")
    assert r["verdict"]["outcome"] == "slow" and r["verdict"]["cause"] == "metric_policy"
    assert "every metric check passed" in r["verdict"]["summary"]
    assert "limit 60 s at .github/workflows/ci.yml:6" in r["verdict"]["summary"]
    assert failing_or_none(r) is None


def failing_or_none(r):
    try:
        return failing(r)
    except StopIteration:
        return None


# --- the actual-values file is missing: unknown -------------------------------------------


@pytest.fixture(scope="module")
def missing(tmp_path_factory):
    """The test failed in CI; the metrics.json artifact it read is not in the checkout."""
    repo = make_repo(tmp_path_factory.mktemp("missing"), APPROX_TEST, rtol=1e-4)
    log = run_job(repo, dict(GOOD, lr=0.45), train_in_log=False)
    (repo / "metrics.json").unlink()
    return repo, log


def test_missing_actual_values_file_is_unknown_naming_the_file(missing):
    repo, log = missing
    r, _ = audit(repo, log)
    v = r["verdict"]
    assert (v["outcome"], v["cause"]) == ("unknown", "inconclusive")
    assert "metrics.json" in v["summary"] and "tests/test_convergence.py:9" in v["summary"]
    assert "neither in --logs nor in the repository" in v["summary"]
    fig = log_figures(log.read_text())
    assert f"{fig['n_mismatch']} of {fig['n_total']} elements mismatched" in v["summary"]
    act = r["next_actions"][0]["action"]
    assert "--logs metrics.json" in act and "--golden" not in act


def test_missing_file_given_with_golden_never_advises_golden(missing, tmp_path):
    repo, log = missing
    r, _ = audit(repo, log, extra=["--golden", str(repo / "golden_values.json")])
    assert r["verdict"]["outcome"] == "unknown"
    assert not any("--golden" in a["action"] for a in r["next_actions"])


def test_given_actual_values_file_completes_the_audit(missing, tmp_path):
    """The same job with its artifact passed through --logs is judged (a regression)."""
    repo, log = missing
    import subprocess
    import sys

    from ci_shapes import TRAIN  # noqa: F401  (the artifact is re-made by the job's own code)

    art = tmp_path / "metrics.json"
    (repo / "config.json").write_text(json.dumps(dict(GOOD, lr=0.45)))
    subprocess.run([sys.executable, "train.py", "config.json"], cwd=repo, check=True, timeout=120)
    (repo / "metrics.json").rename(art)
    r, _ = audit(repo, log, art)
    assert (r["verdict"]["outcome"], r["verdict"]["cause"]) == ("regressed", "model_convergence")
    assert failing(r)["analysis"]["log_agrees"] is True


# --- a hand-written relative-error check, golden from a conftest fixture (np.load) ----------


def test_handwritten_check_with_fixture_npy_golden_and_csv_actuals(tmp_path):
    """``abs(a - b) / abs(b) < TOL`` with TOL read from thresholds.json, the golden curve from a
    conftest fixture (``np.load``) and the actual curve from ``pd.read_csv``."""
    import subprocess
    import sys

    repo = make_repo(
        tmp_path,
        HANDWRITTEN_TEST,
        golden="unused_golden_values.json",
        files={"tests/conftest.py": CONFTEST, "thresholds.json": json.dumps({"loss_tol": 1e-3})},
    )
    # the golden curve as the conftest fixture loads it (.npy), and the job writing a CSV
    g = np.array(json.loads((repo / "unused_golden_values.json").read_text())["loss"])
    (repo / "unused_golden_values.json").unlink()
    (repo / "tests" / "data").mkdir()
    np.save(repo / "tests" / "data" / "golden_loss.npy", g)
    log = run_job(repo, dict(GOOD, lr=0.45))
    a = np.array(json.loads((repo / "metrics.json").read_text())["loss"])
    (repo / "out").mkdir()
    (repo / "out" / "metrics.csv").write_text(
        "step,loss\n" + "\n".join(f"{i + 1},{float(v)!r}" for i, v in enumerate(a)) + "\n"
    )
    # rerun the suite now that the job's CSV exists: the log is pytest's own
    e = dict(PYTHONDONTWRITEBYTECODE="1", PATH="/usr/bin:/bin")
    te = subprocess.run(
        [sys.executable, "-m", "pytest", "-rA", "-p", "no:cacheprovider", "tests"],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=300,
        env=e,
    )
    log.write_text(te.stdout + te.stderr)
    assert "FAILED tests/test_convergence.py::test_loss_relative_error" in te.stdout
    r, _ = audit(repo, log)
    c = failing(r)
    assert c["kind"] == "tolerance" and c["rtol"] == 1e-3
    assert "thresholds.json" in c["tolerance_source"]
    rel = np.abs(a - g) / np.abs(g)
    assert c["analysis"]["n_outside"] == int((rel > 1e-3).sum())
    assert c["analysis"]["max_rel"] == pytest.approx(float(rel.max()))
    # the loop stops at the first failing element: the log prints that one
    m = re.search(
        r"assert \(np\.float64\(([\d.e-]+)\) / np\.float64\(([\d.e-]+)\)\) < 0\.001", te.stdout
    )
    first = float(m[1]) / float(m[2])
    assert first == pytest.approx(float(rel[np.argmax(rel > 1e-3)]), rel=1e-12)
    assert r["verdict"]["cause"] == "model_convergence"
    row = ci002(r)["facts"]
    assert not any("thresholds.json" in u for u in r["unknowns"])  # settings, not values
    assert row["golden_source"] == "tests/data/golden_loss.npy"
    assert row["actual_source"] == "out/metrics.csv"


# --- files the audit may open (issue 16 item 10) ------------------------------------------


def test_only_files_inside_the_repo_are_opened(tmp_path):
    """A log naming absolute paths, ../ and /proc/self/environ, and a test reading ../x.json."""
    root = tmp_path
    secret = root / "secret.py"
    secret.write_text("TOKEN = 'do-not-read'\n")
    repo = root / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "tests" / "test_x.py").write_text(
        "import json\nimport pytest\n\n\ndef test_loss():\n"
        "    other = json.load(open('../outside_values.json'))\n"
        "    assert other['loss'] == pytest.approx([1.0], rel=1e-3)\n"
    )
    (root / "outside_values.json").write_text(json.dumps({"loss": [2.0]}))
    log = root / "ci.log"
    log.write_text(
        f'  File "{secret}", line 1, in <module>\n'
        '  File "../secret.py", line 1, in <module>\n'
        '  File "/proc/self/environ", line 1, in <module>\n'
        "FAILED tests/test_x.py::test_loss - assert [2.0] == approx([1.0 ± 1.0e-03])\n"
    )
    r, out = audit(repo, log)
    text = json.dumps(r)
    assert "do-not-read" not in text and "outside_values" in text
    notes = r["unknowns"]
    assert any("secret.py" in n and "not opened" in n for n in notes)
    assert any("/proc/self/environ" in n and "not opened" in n for n in notes)
    assert any("../outside_values.json" in n and "outside the repository" in n for n in notes)
    assert r["verdict"]["outcome"] == "unknown"


def test_absolute_runner_path_maps_into_the_repo(regression, tmp_path):
    """/home/runner/work/x/x/tests/test_convergence.py names the repo's file: it is cited."""
    repo, log = regression
    log2 = tmp_path / "ci.log"
    log2.write_text(
        log.read_text()
        + '\n  File "/home/runner/work/x/x/tests/test_convergence.py", line 10, in test_loss\n'
    )
    r, _ = audit(repo, log2)
    assert r["verdict"]["cause"] == "model_convergence"
    assert not any("runner/work" in n for n in r["unknowns"])


def test_deeply_nested_golden_json_is_skipped_not_exit_3(regression, tmp_path):
    repo, log = regression
    deep = repo / "golden_deep_values.json"
    deep.write_text("[" * 5000 + "]" * 5000)
    try:
        r, _ = audit(repo, log)
        assert any("golden_deep_values.json" in n and "too deep" in n for n in r["unknowns"])
        assert r["verdict"]["cause"] == "model_convergence"  # the real golden file still judged
        r2, _ = audit(repo, log, extra=["--golden", str(deep)])
        assert any("too deep" in n for n in r2["unknowns"])
    finally:
        deep.unlink()


def test_schema_answer_never_invents_a_class_for_an_unjudged_failure(missing, tmp_path):
    repo, log = missing
    schema = {
        "type": "object",
        "required": ["classification"],
        "properties": {"classification": {"enum": ["model_regression", "gate_policy"]}},
    }
    sp, out = tmp_path / "schema.json", tmp_path / "answer.json"
    sp.write_text(json.dumps(schema))
    args = ["ci", "--repo", str(repo), "--logs", str(log), "--schema", str(sp), "--out", str(out)]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 2 and "has no value for it" in res.output and not out.exists()
    schema["properties"]["classification"]["enum"].append("unknown")
    sp.write_text(json.dumps(schema))
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    assert json.loads(out.read_text())["classification"] == "unknown"


def test_annotation_for_an_unjudged_failure_points_at_the_tests_comparison(missing):
    repo, log = missing
    _, output = audit(repo, log, env={"GITHUB_ACTIONS": "true"})
    ann = [x for x in output.splitlines() if x.startswith("::error ")]
    assert len(ann) == 1 and ann[0].startswith("::error file=tests/test_convergence.py,line=10,")
    assert "unknown / inconclusive" in ann[0]


def test_node_ids_relative_to_a_subdirectory_rootdir(regression, tmp_path):
    """pytest run from tests/ prints ``test_convergence.py::...``: still traced to the repo file."""
    repo, log = regression
    log2 = tmp_path / "ci.log"
    log2.write_text(log.read_text().replace("tests/test_convergence.py", "test_convergence.py"))
    r, _ = audit(repo, log2)
    assert r["verdict"]["cause"] == "model_convergence"
    assert "golden_values.json" in failing(r)["tolerance_source"]


def test_given_golden_wins_over_the_file_the_test_reads(regression, tmp_path):
    repo, log = regression
    other = tmp_path / "release_golden.json"
    other.write_text((repo / "golden_values.json").read_text())
    r, _ = audit(repo, log, extra=["--golden", str(other)])
    row = ci002(r)["facts"]
    assert row["golden_source"].endswith("release_golden.json") and row["band"] is None
    assert failing(r)["rtol"] == 1e-4  # the tolerance still read from the test's own file
    assert r["verdict"]["cause"] == "model_convergence"
