"""mlaudit_core.ci.follow: a failing test followed to the values it compares, on real suites' code.

The repositories are built from public suites' test code and golden values (tests/data/ci_real,
sources in its SOURCES.md); each CI job is run for real (``python -m pytest -rA``, stdout and
stderr in one log, as CI captures it) and ``mlaudit ci`` audits the log.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mlaudit.cli import app
from mlaudit_core.ci.follow import follow_test, recompute

REAL = Path(__file__).parent / "data" / "ci_real"
MEGATRON_GOLDEN = (
    REAL
    / "megatron_lm_loss_regression/repo/tests/functional_tests/test_cases/gpt/gpt3_mcore_te_tp2_pp2"
    / "golden_values_dev_dgx_a100.json"
)


def run_job(repo: Path, header: str = "") -> Path:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTEST_ADDOPTS", None)
    te = subprocess.run(
        [sys.executable, "-m", "pytest", "-rA", "-p", "no:cacheprovider", "tests"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    log = repo.parent / "ci.log"
    log.write_text(header + "$ python -m pytest -rA tests\n" + te.stdout + te.stderr)
    return log


def audit(repo: Path, *logs: Path) -> dict:
    with tempfile.TemporaryDirectory() as d:
        return _audit(repo, Path(d) / "report.json", *logs)


def _audit(repo: Path, out: Path, *logs: Path) -> dict:
    res = CliRunner().invoke(
        app,
        [
            "ci",
            "--repo",
            str(repo),
            "--logs",
            *map(str, logs),
            "--format",
            "json",
            "--out",
            str(out),
        ],
    )
    assert res.exit_code in (0, 1), res.output
    return json.loads(out.read_text())


def megatron_repo(tmp_path: Path, test_src: str, actual: dict) -> Path:
    repo = tmp_path / "repo"
    (repo / "golden").mkdir(parents=True)
    (repo / "artifacts").mkdir()
    (repo / "tests").mkdir()
    shutil.copy(MEGATRON_GOLDEN, repo / "golden" / "gpt3_mcore_te_tp2_pp2_dev_dgx_a100.json")
    (repo / "artifacts" / "metrics.json").write_text(json.dumps(actual))
    (repo / "tests" / "test_golden.py").write_text(test_src)
    return repo


PLAIN = """import json

import pytest


def test_lm_loss_matches_golden():
    ref = json.load(open("golden/gpt3_mcore_te_tp2_pp2_dev_dgx_a100.json"))
    got = json.load(open("artifacts/metrics.json"))
    assert got["lm loss"] == pytest.approx(list(ref["lm loss"]["values"].values()), rel=0.05)
"""


def test_follow_plain_pytest_golden_failing_by_20pct_every_step_is_a_regression(tmp_path):
    """The issue's pattern on Megatron-LM's real golden values: json.load(open(golden)) compared
    with pytest.approx(rel=0.05) to artifacts/metrics.json, 20% higher at every step."""
    golden = json.loads(MEGATRON_GOLDEN.read_text())["lm loss"]["values"]
    repo = megatron_repo(tmp_path, PLAIN, {"lm loss": [v * 1.2 for v in golden.values()]})
    log = run_job(repo)
    assert "FAILED tests/test_golden.py::test_lm_loss_matches_golden" in log.read_text()
    r = audit(repo, log)
    v = r["verdict"]
    assert v["outcome"] == "regressed"
    assert v["cause"] in ("model_convergence", "correctness_bug")
    assert "11 of 11" in v["summary"]
    assert "golden/gpt3_mcore_te_tp2_pp2_dev_dgx_a100.json" in json.dumps(r)


ALLCLOSE = '''"""Megatron-LM's regular pipeline checks, written with numpy.testing.assert_allclose."""
import json

import numpy as np
import pytest


@pytest.fixture
def golden_values():
    with open("golden/gpt3_mcore_te_tp2_pp2_dev_dgx_a100.json") as f:
        return json.load(f)


def test_regular_pipeline(golden_values):
    logs = json.load(open("artifacts/metrics.json"))
    for metric in ["lm loss", "num-zeros"]:
        golden = np.array(list(golden_values[metric]["values"].values()))
        actual = np.array(logs[metric])
        np.testing.assert_allclose(actual, golden, rtol=1e-4, atol=0, err_msg=metric)
'''


def test_follow_allclose_drift_after_image_bump_is_metric_policy(tmp_path):
    """Mixed-sign deviations of 0.5-1.6x rtol=1e-4 on lm loss after a container bump: drift."""
    g = json.loads(MEGATRON_GOLDEN.read_text())
    signs = [1, -1, 1, 1, -1, -1, 1, -1, 1, -1, 1]
    mags = [0.5, 1.6, 0.9, 1.3, 0.2, 1.5, 0.7, 1.2, 0.4, 1.4, 0.6]
    loss = [v * (1 + s * m * 1e-4) for v, s, m in zip(g["lm loss"]["values"].values(), signs, mags)]
    actual = {"lm loss": loss, "num-zeros": list(g["num-zeros"]["values"].values())}
    repo = megatron_repo(tmp_path, ALLCLOSE, actual)
    log = run_job(repo, header="Pulling image nvcr.io/nvidia/pytorch:26.02-py3 -> 26.04-py3\n")
    r = audit(repo, log)
    v = r["verdict"]
    assert (v["outcome"], v["cause"]) == ("succeeded", "metric_policy"), v["summary"]
    assert "drift" in v["summary"].lower()


def test_recompute_counts_signs_excess_and_growth():
    c = recompute("assert_allclose", [1.0, 2.2, 3.6, 5.0], [1.0, 2.0, 3.0, 4.0], 0.05, 0.0, 3)
    assert (c.n, c.n_out, c.above, c.below, c.first_out) == (4, 3, 3, 0, 2)
    assert c.growing and abs(c.max_excess - 5.0) < 1e-9
    s = recompute("approx", [1.0, 2.0], [1.0, 2.0, 3.0], 1e-3, 1e-12, 1)
    assert s.shape_mismatch and s.n == 2 and s.n_out == 0


def test_real_suite_fixtures_are_classified_as_labelled():
    """benchmarks/baseline_and_ci.py's real-suite figure at its full (small) size."""
    sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))
    from baseline_and_ci import bench_real_suites

    res = bench_real_suites(REAL)
    labels = json.loads((REAL / "labels.json").read_text())
    assert len(res) == len(labels) >= 8
    assert sum(res.values()) >= 0.875 * len(res), res  # docs/ci.md: >= 7 of 8


def test_pytest_timeout_header_is_not_a_job_timeout():
    log = (REAL / "lm_eval_loglikelihood_length/ci.log").read_text()
    assert "timeout: 900.0s" in log  # pytest-timeout's session header, as CI printed it
    r = audit(
        REAL / "lm_eval_loglikelihood_length/repo", REAL / "lm_eval_loglikelihood_length/ci.log"
    )
    assert r["verdict"]["outcome"] != "slow"


# --- bad input ---------------------------------------------------------------------------


def _log_for(test: str, path: str, line: int) -> str:
    return (
        f"{path}:{line}: AssertionError\nFAILED {test} - AssertionError\n=== 1 failed in 0.1s ===\n"
    )


def test_follow_syntax_error_test_file_is_one_note(tmp_path):
    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "tests" / "test_x.py").write_text("def test_x(:\n    assert 1 == 2\n")
    fol = follow_test(repo, "tests/test_x.py::test_x", {})
    assert fol is not None and fol.checks == []
    assert len(fol.notes) == 1 and "tests/test_x.py: not parsed" in fol.notes[0]
    log = tmp_path / "ci.log"
    log.write_text(_log_for("tests/test_x.py::test_x", "tests/test_x.py", 2))
    assert audit(repo, log)["verdict"]["outcome"] == "unknown"


def test_follow_500mb_golden_file_is_skipped_not_read(tmp_path):
    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    with open(repo / "golden_values.json", "wb") as f:  # sparse: 500 MB on paper
        f.truncate(500 * 2**20)
    (repo / "metrics.json").write_text(json.dumps({"loss": [1.0, 2.0]}))
    (repo / "tests" / "test_x.py").write_text(
        "import json\nimport pytest\n\ndef test_x():\n"
        "    g = json.load(open('golden_values.json'))\n"
        "    m = json.load(open('metrics.json'))\n"
        "    assert m['loss'] == pytest.approx(g['loss'], rel=1e-3)\n"
    )
    fol = follow_test(repo, "tests/test_x.py::test_x", {})
    assert fol is not None and fol.checks == []
    assert any("golden_values.json: skipped: too big" in n for n in fol.notes)


def test_follow_fixture_chain_that_loops_ends_with_a_note(tmp_path):
    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "tests" / "conftest.py").write_text(
        "import pytest\n\n@pytest.fixture\ndef a(b):\n    return b\n\n"
        "@pytest.fixture\ndef b(a):\n    return a\n"
    )
    (repo / "tests" / "test_x.py").write_text(
        "import numpy as np\n\ndef test_x(a):\n    np.testing.assert_allclose(a, [1.0], rtol=1e-3)\n"
    )
    fol = follow_test(repo, "tests/test_x.py::test_x", {})
    assert fol is not None and fol.checks == []
    assert fol.notes == ["fixture 'a' could not be followed (not a static value, or a loop)"]


@pytest.mark.parametrize("path", ["/etc/hostname", "../outside_golden.json"])
def test_follow_never_reads_outside_the_repository(tmp_path, path):
    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    (tmp_path / "outside_golden.json").write_text(json.dumps([1.0, 2.0]))
    (repo / "metrics.json").write_text(json.dumps([1.5, 2.5]))
    (repo / "tests" / "test_x.py").write_text(
        "import json\nimport numpy as np\n\ndef test_x():\n"
        f"    expected = json.load(open({path!r}))\n"
        "    actual = json.load(open('metrics.json'))\n"
        "    np.testing.assert_allclose(actual, expected, rtol=1e-3)\n"
    )
    fol = follow_test(repo, "tests/test_x.py::test_x", {})
    assert fol is not None and fol.checks == []  # the outside file's values were never used
    assert len(fol.notes) == 1 and path in fol.notes[0] and "not opened" in fol.notes[0]


def test_follow_missing_file_names_it_and_what_to_pass(tmp_path):
    """The torchtune recipe test without its job artifact: unknown, naming the file and --logs."""
    src = REAL / "torchtune_loss_drift_after_image_bump"
    repo = tmp_path / "repo"
    shutil.copytree(src / "repo", repo)
    shutil.rmtree(repo / "artifacts")
    fol = follow_test(
        repo,
        "tests/recipes/test_full_finetune_single_device.py::TestFullFinetuneSingleDeviceRecipe"
        "::test_loss[llama2/7B_full_low_memory-llama2-meta]",
        {},
    )
    assert fol is not None and fol.missing == [
        "artifacts/llama2_7B_full_low_memory/loss_values.json"
    ]
    v = audit(repo, src / "ci.log")["verdict"]
    assert v["outcome"] == "unknown"
    assert "loss_values.json" in v["summary"] and "--logs" in v["summary"]


def test_env_changes_in_reads_image_was_statements():
    from mlaudit_core.ci.logs import env_changes_in

    (c,) = env_changes_in(
        "Pulling image ghcr.io/pytorch/torchtune-ci:cpu-2026.12 (was ghcr.io/pytorch/torchtune-ci:cpu-2026.10)",
        "ci.log",
        1,
    )
    assert (c.name, c.old, c.new) == ("image", "cpu-2026.10", "cpu-2026.12")
    assert env_changes_in("Pulling image x:1 (was x:1)", "ci.log", 1) == []


def test_follow_reads_yaml_golden_and_recomputes_almost_equal_and_abs_tolerance(tmp_path):
    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "tests" / "expected.yaml").write_text("eval_loss: 0.4100\naccuracy: 0.8800\n")
    (repo / "metrics.json").write_text(json.dumps({"eval_loss": 0.4150, "accuracy": 0.8801}))
    (repo / "tests" / "test_eval.py").write_text(
        "import json\nimport unittest\n\nimport yaml\n\nTOL = 1e-3\n\n\n"
        "class EvalTest(unittest.TestCase):\n"
        "    def test_eval(self):\n"
        "        with open('tests/expected.yaml') as f:\n"
        "            expected = yaml.safe_load(f)\n"
        "        m = json.load(open('metrics.json'))\n"
        "        self.assertAlmostEqual(m['accuracy'], expected['accuracy'], places=3)\n"
        "        assert abs(m['eval_loss'] - expected['eval_loss']) < TOL\n"
    )
    fol = follow_test(repo, "tests/test_eval.py::EvalTest::test_eval", {})
    assert fol is not None
    kinds = {c.kind: c for c in fol.checks}
    assert set(kinds) == {"assertAlmostEqual", "abs_diff"}
    assert not kinds["assertAlmostEqual"].failed
    ab = kinds["abs_diff"]
    assert ab.failed and abs(ab.max_abs - 0.005) < 1e-9 and abs(ab.max_excess - 5.0) < 1e-6
    assert ab.golden_src == "tests/expected.yaml" and ab.actual_src == "metrics.json"


def test_follow_unittest_failure_named_by_unittest_and_its_traceback(tmp_path):
    """A unittest suite run for real (``python -m unittest -v``): the FAIL line and the traceback
    name the test; the per-element assertAlmostEqual in a zip loop is recomputed as one check."""
    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "tests" / "__init__.py").write_text("")
    (repo / "tests" / "test_eval.py").write_text(
        "import json\nimport unittest\n\nEXPECTED = [2.30, 2.11, 1.95, 1.80]\n\n\n"
        "class EvalTest(unittest.TestCase):\n"
        "    def test_loss(self):\n"
        "        with open('metrics.json') as f:\n"
        "            got = json.load(f)\n"
        "        for a, e in zip(got, EXPECTED):\n"
        "            self.assertAlmostEqual(a, e, places=2)\n"
    )
    (repo / "metrics.json").write_text("[2.30, 2.25, 2.31, 2.40]")
    te = subprocess.run(
        [sys.executable, "-m", "unittest", "-v", "tests.test_eval"],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    log = tmp_path / "ci.log"
    log.write_text(te.stdout + te.stderr)
    assert "FAIL: test_loss (tests.test_eval.EvalTest" in log.read_text()
    v = audit(repo, log)["verdict"]
    assert (v["outcome"], v["cause"]) == ("regressed", "model_convergence"), v["summary"]
    assert "3 of 4 elements" in v["summary"] and "metrics.json" in v["summary"]
