"""The repository gate scanner (ast, never executed) and the CI log reader."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlaudit_core.ci.gates import parse_pins, scan_ci_yaml, scan_python
from mlaudit_core.ci.golden import load_values
from mlaudit_core.ci.logs import env_changes_in, parse_metric_pairs, scan_logs
from mlaudit_core.ci.model import CIContext
from mlaudit_core.errors import InputError

SRC = """\
import math, time
import numpy as np
import pytest
import torch

LOSS_RTOL = 0.02
CHECKED_METRICS = ["lm loss", "num-zeros"]


@pytest.mark.timeout(900)
def test_golden(metrics, golden):
    assert metrics["loss"] == pytest.approx(golden["loss"], rel=LOSS_RTOL)
    assert metrics["acc"] == pytest.approx(golden["acc"], abs=0.01)
    np.testing.assert_allclose(metrics["grad_norm"], golden["grad_norm"], rtol=1e-3, atol=1e-6)
    torch.testing.assert_close(out, ref)
    assert math.isclose(metrics["ppl"], golden["ppl"], rel_tol=1e-4)
    np.testing.assert_array_equal(metrics["tokens"], golden["tokens"])
    assert metrics["num_zeros"] == golden["num_zeros"]
    assert abs(metrics["f1"] - golden["f1"]) / golden["f1"] < 0.05


def test_speed(result):
    elapsed_s = result.wall
    assert elapsed_s < 60
    assert 1000 <= result.samples_per_sec
    if result.final_loss > 2.5:
        raise AssertionError("loss too high")
"""

MEGATRON_EXCERPT = """\
CHECK_THRESHOLDS = {
    "iteration-time": [common.ApproximateTest(atol=0, rtol=0.05)],
    "lm loss": [common.DeterministicTest(), common.ApproximateTest(atol=0, rtol=0.05)],
    "mem-allocated-bytes": [
        common.ApproximateTest(atol_func=common.approximate_threshold(rtol=0.05), rtol=0)
    ],
    ...
}
"""


def by(gates, kind):
    return [g for g in gates if g.kind == kind]


def test_every_gate_kind_with_tolerances_and_lines():
    gates, checked, where, notes = scan_python(SRC, "tests/test_golden.py")
    assert not notes and checked == ["lm loss", "num-zeros"] and where.line == 7
    approx = {g.metric: g for g in by(gates, "approx")}
    assert (
        approx["loss"].rtol == 0.02
        and approx["loss"].line == 12
        and approx["loss"].function == "test_golden"
    )
    assert approx["acc"].rtol is None and approx["acc"].atol == 0.01
    allc = {g.metric: g for g in by(gates, "allclose")}
    assert (allc["grad_norm"].rtol, allc["grad_norm"].atol) == (1e-3, 1e-6)
    torch_gate = [g for g in by(gates, "allclose") if g.expr.startswith("torch")][0]
    assert (torch_gate.rtol, torch_gate.atol) == (1.3e-6, 1e-5)  # torch float32 defaults
    assert [g.rtol for g in by(gates, "isclose") if g.metric == "ppl"] == [1e-4]
    assert {g.metric for g in by(gates, "exact")} >= {"tokens", "num_zeros"}
    tol = [g for g in by(gates, "tolerance") if g.metric == "f1"][0]
    assert tol.rtol == 0.05 and tol.line == 19
    timing = by(gates, "timing")[0]
    assert (timing.threshold, timing.op, timing.line, timing.metric) == (60, "<", 24, "elapsed_s")
    tput = by(gates, "throughput")[0]
    assert (tput.threshold, tput.op, tput.expr) == (
        1000,
        ">=",
        "1000 <= result.samples_per_sec",
    )  # x >= 1000
    thr = [g for g in by(gates, "threshold") if "loss" in (g.metric or "")][0]
    assert (thr.threshold, thr.op) == (2.5, "<=")  # `if loss > 2.5: raise` -> loss <= 2.5
    assert [g.threshold for g in by(gates, "timeout")] == [900]
    assert any(g.metric == "LOSS" for g in by(gates, "tolerance"))  # LOSS_RTOL = 0.02


def test_megatron_excerpt_with_elision_is_read():
    gates, *_ = scan_python(MEGATRON_EXCERPT, "thresholds.py.txt")
    got = {(g.metric, g.kind, g.rtol) for g in gates}
    assert ("lm loss", "deterministic", 0.0) in got and ("lm loss", "approximate", 0.05) in got
    assert ("mem-allocated-bytes", "approximate", 0.05) in got
    assert all(g.style == "megatron" for g in gates)


def test_sources_are_parsed_never_executed(tmp_path):
    marker = tmp_path / "executed"
    src = (
        f"open({str(marker)!r}, 'w').write('x')\nimport os\nos.system('touch {marker}')\n"
        "def test_x():\n    assert loss == pytest.approx(1.0, rel=0.1)\n"
    )
    gates, *_ = scan_python(src, "t.py")
    assert len(gates) == 1 and not marker.exists()
    bad, _, _, notes = scan_python("def broken(:\n    assert x == pytest.approx(1)\n", "broken.py")
    assert bad == [] and notes == ["broken.py: not valid Python; its comparisons were not read"]


def test_ci_yaml_timeouts_and_pins():
    y = "jobs:\n  train:\n    timeout-minutes: 30\n  gl:\n    timeout: 1h 30m\n  other:\n    timeout: 2h\n"
    gates = scan_ci_yaml(y, ".github/workflows/ci.yml")
    assert [(g.line, g.threshold) for g in gates] == [(3, 1800.0), (5, 5400.0), (7, 7200.0)]
    assert parse_pins(
        "numpy>=1\nscikit-learn==1.5.0\ntorch[cu121]==2.3.1 ; python_version>'3'\n"
    ) == {"scikit-learn": "1.5.0", "torch": "2.3.1"}


def test_metric_lines_in_common_shapes():
    assert parse_metric_pairs(
        " iteration       10/     100 | consumed samples: 320 | lm loss: 1.082218E+01 | "
        "grad norm: 3.1 |"
    ) == (10, {"consumed samples": 320.0, "lm loss": 10.82218, "grad norm": 3.1})
    assert parse_metric_pairs(
        "{'loss': 0.52, 'learning_rate': 5e-05, 'epoch': 1.0, 'step': 10}"
    ) == (10, {"loss": 0.52, "learning_rate": 5e-05, "epoch": 1.0})
    assert parse_metric_pairs("step 7 loss=1.234 val_acc: 0.5") == (
        7,
        {"loss": 1.234, "val_acc": 0.5},
    )
    assert parse_metric_pairs("Head SHA: 795f87be")[0] is None


def test_log_scan(tmp_path):
    log = tmp_path / "job.log"
    log.write_text(
        "# annotation: tests FAILED everywhere (not log content)\n"
        "Bump scikit-learn from 1.3.2 to 1.5.0\n"
        "Successfully installed numpy-2.4.0 scikit-learn-1.5.0\n"
        "step 1 loss=2.0\nstep 2 loss=1.5\n"
        "E       assert 0.71 < 0.5\n"
        "FAILED tests/test_perf.py::test_step_time - assert 0.71 < 0.5\n"
        "PASSED tests/test_train.py::test_loss\n"
        "AssertionError: The following metrics failed: lm loss, num-zeros\n"
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
        "Job exceeded the maximum execution time (timed out)\n"
    )
    ctx = CIContext(repo=str(tmp_path))
    scan_logs(ctx, [(log, "job.log")])
    assert all(x.line != 1 for x in ctx.failure_lines)
    assert [(e.name, e.old, e.new) for e in ctx.env_changes] == [("scikit-learn", "1.3.2", "1.5.0")]
    assert ctx.packages_log == {"numpy": "2.4.0", "scikit-learn": "1.5.0"}
    assert ctx.actuals[0].metrics["loss"] == ([1, 2], [2.0, 1.5])
    assert [(m.value, m.op, m.threshold) for m in ctx.measured][0] == (0.71, "<", 0.5)
    assert {(t.function, t.outcome) for t in ctx.tests} == {
        ("test_step_time", "failed"),
        ("test_loss", "passed"),
    }
    assert ctx.failed_metrics == ["lm loss", "num-zeros"] and ctx.failed_metrics_line.line == 9
    assert [x.kind for x in ctx.infra] == ["infra:cuda-oom"]
    assert [x.line for x in ctx.timeouts] == [11]
    assert ctx.failure_lines[0].context[0].startswith("4: ")  # a context window around each line


def test_env_transition_shapes():
    assert [
        (e.name, e.old, e.new)
        for e in env_changes_in("changes docker/.ngc_version.dev 26.02-py3 -> 26.04-py3", "x", 1)
    ] == [("docker/.ngc_version.dev", "26.02-py3", "26.04-py3")]
    assert env_changes_in("loss went from 2.1 to 1.8", "x", 1) == []


def test_golden_files(tmp_path):
    meg = tmp_path / "golden_values_dev.json"
    meg.write_text(
        '{"lm loss": {"start_step": 1, "end_step": 10, "step_interval": 5, "values": {"1": 10.8, '
        '"5": 10.6, "10": "nan"}}}'
    )
    [vs] = load_values(meg, "golden")
    steps, vals = vs.series("lm loss")
    assert list(steps) == [1, 5, 10] and vals[1] == 10.6 and vals[2] != vals[2]
    csv = tmp_path / "golden_vs_new.csv"
    csv.write_text(
        "step,lm_loss_golden_before,lm_loss_after_26.04,plain\n1,10.9,10.91,3\n2,10.8,10.79,4\n"
    )
    sets = {(s.role, s.label): s for s in load_values(csv, "golden")}
    assert set(sets) == {("golden", "golden_before"), ("actual", "after_26.04"), ("golden", "")}
    assert sets[("actual", "after_26.04")].metrics["lm_loss"] == ([1, 2], [10.91, 10.79])
    bad = tmp_path / "golden.json"
    bad.write_text("[1, 2]")
    with pytest.raises(InputError, match="golden.json: expected a JSON object"):
        load_values(bad, "golden")
    with pytest.raises(InputError, match="file not found"):
        load_values(Path(tmp_path / "nope.json"), "golden")


def test_tolerance_not_a_literal_is_never_replaced_by_a_default():
    """``rel=cfg.rel`` is not pytest's default 1e-6: the gate says it cannot be recomputed."""
    src = (
        "import pytest\nimport numpy as np\n\n"
        "def test_a(cfg, m, g):\n"
        "    assert m['loss'] == pytest.approx(g['loss'], rel=cfg.rel)\n"
        "    np.testing.assert_allclose(m['acc'], g['acc'], rtol=cfg.rtol)\n"
    )
    gates, _, _, _ = scan_python(src, "t.py")
    assert [(g.kind, g.rtol, g.atol) for g in gates] == [
        ("tolerance", None, None),
        ("tolerance", None, None),
    ]
    assert all("not recomputed" in g.formula for g in gates)


def test_tolerance_read_from_a_loaded_golden_file_and_element_index():
    src = (
        "import json\nimport pytest\nimport torch\n\n"
        "GOLDEN = json.load(open('golden_values.json'))\n"
        "TOL = GOLDEN['tol']\n\n"
        "def test_a(m):\n"
        "    assert m['loss'][-1] == pytest.approx(GOLDEN['loss'][-1], rel=GOLDEN['rtol'])\n"
        "    assert abs(m['acc'] - GOLDEN['acc']) / GOLDEN['acc'] < TOL\n"
        "    torch.testing.assert_close(torch.tensor(m['x'], dtype=torch.float64), torch.tensor(GOLDEN['x']))\n"
    )
    data = {"GOLDEN": {"rtol": 1e-4, "tol": 0.02, "loss": [1.0]}}
    gates, _, _, _ = scan_python(src, "t.py", data, {"GOLDEN": "golden_values.json"})
    by = {g.kind: g for g in gates}
    assert (by["approx"].rtol, by["approx"].index) == (1e-4, -1)
    assert "from golden_values.json" in by["approx"].tolerance_source
    assert by["tolerance"].rtol == 0.02 and "golden_values.json" in by["tolerance"].tolerance_source
    assert (by["allclose"].dtype, by["allclose"].rtol, by["allclose"].atol) == (
        "float64",
        1e-7,
        1e-7,
    )


def test_gitlab_job_timeout_line_and_limit(tmp_path):
    log = tmp_path / "job.log"
    log.write_text(
        "tests/test_train.py::test_loss PASSED\n"
        "ERROR: Job failed: execution took longer than 1h0m0s seconds\n"
        "rootdir: /builds/group/test_timeout_project\n"
    )
    ctx = CIContext(repo=str(tmp_path))
    scan_logs(ctx, [(log, "job.log")])
    assert [t.line for t in ctx.timeouts] == [2]  # not the path that contains "timeout"
    gates = scan_ci_yaml("convergence:\n  stage: test\n  timeout: 1h 30m\n", ".gitlab-ci.yml")
    assert [(g.kind, g.threshold, g.line) for g in gates] == [("timeout", 5400.0, 3)]


def test_schema_without_jsonschema_is_one_clear_error(monkeypatch):
    """A venv without the ``ci`` extra: --schema names the package to install (not exit 3)."""
    import builtins

    from mlaudit_core.ci.schema_out import fill_schema

    real = builtins.__import__

    def no_jsonschema(name, *a, **k):
        if name == "jsonschema" or name.startswith("jsonschema."):
            raise ImportError("No module named 'jsonschema'")
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_jsonschema)
    with pytest.raises(InputError, match=r"pip install 'mlaudit\[ci\]'"):
        fill_schema(None, {"type": "object"})


def test_source_segment_matches_ast_on_every_node():
    """gates._source_segment (one line split per file; ``ast.get_source_segment`` splits the
    whole file on every call, quadratic over a test of thousands of asserts) gives the same
    text for every node: CRLF, lone CR, a form feed, non-ASCII, multi-line calls."""
    import ast

    from mlaudit_core.ci.gates import _source_segment

    src = (
        "def test_acc():\r\n    acc = 0.9  # précision\r\n"
        "    assert acc == pytest.approx(\n        0.95, rel=1e-3)\r"
        "\x0c    x = {'é': [1, 2,\n  3]}\n"
        "    assert abs(acc - 1) < 0.1 and 'ü' != \"\u2028\""
    )
    tree = ast.parse(src)
    nodes = [n for n in ast.walk(tree) if hasattr(n, "lineno")]
    assert len(nodes) > 20
    for n in nodes:
        assert _source_segment(src, n) == ast.get_source_segment(src, n), ast.dump(n)
    assert _source_segment(src, tree) is None


def test_scan_python_on_a_test_of_thousands_of_asserts():
    """scan_python reads each gate's source text from one line split: a test of 3,000
    asserts (generated tests have them) gives its 3,000 gates (it took minutes when each
    gate re-split the file; ``benchmarks/baseline_and_ci.py`` times it)."""
    from mlaudit_core.ci.gates import scan_python

    body = "".join(f"    assert acc_{i} >= 0.{i % 9 + 1}\n" for i in range(3000))
    gates = scan_python("def test_many():\n" + body, "tests/test_many.py")[0]
    assert len([g for g in gates if g.kind == "threshold"]) == 3000
    assert gates[-1].expr == "acc_2999 >= 0.3" and gates[-1].line == 3001
