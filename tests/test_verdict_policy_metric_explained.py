"""verdict.policy._gate_threshold_fixed (V18c) and _evaluation_explains (V18d) on real reports with no
curve, whose thread puts the failure on the metric or its gate (tests/data/reports):

* b11-03: 'It failed 52 out of 500 runs ... Updating the assertion threshold to `0.06` ensures that the test
  always passes': a flaky gate, unknown/metric_policy;
* b13-01: 'I achieve a R@1 of 83.4, while you report a R@1 of 88.2'; the author: 'in order to evaluate on
  the validation dataset, you need to ...': succeeded/metric_policy;
* b15-15: nDCG 0.35 against 'the numbers listed on leaderboard are about 72 or 74'; a project member: 'you're
  just comparing two evaluations from different languages': succeeded/metric_policy.
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from mlaudit.cli import app
from mlaudit_core.verdict.statements import evaluation_explains_gap, gate_threshold_fix

REPORTS = Path(__file__).resolve().parent / "data" / "reports"


def _verdict(prefix: str, context: Path | None = None) -> dict:
    (case,) = REPORTS.glob(prefix + "*")
    args = [
        "logs",
        *map(str, sorted(case.glob("*.log"))),
        "--config",
        str(context or case / "context.txt"),
    ]
    return json.loads(CliRunner().invoke(app, [*args, "--format", "json"]).stdout)["verdict"]


def test_a_gap_the_thread_puts_on_the_evaluation_or_the_gate_is_metric_policy(tmp_path):
    """Before: each unknown/inconclusive. b13-01 without the author's answer is not judged by V18d."""
    v = _verdict("b11-03-")
    assert (v["rule"], v["outcome"], v["cause"]) == ("V18c", "unknown", "metric_policy")
    assert "assertion threshold to `0.06`" in v["summary"]
    for prefix in ("b13-01-", "b15-15-"):
        v = _verdict(prefix)
        assert (v["rule"], v["outcome"], v["cause"]) == ("V18d", "succeeded", "metric_policy"), (
            prefix
        )
    (case,) = REPORTS.glob("b13-01-*")
    ctx = tmp_path / "context.txt"
    ctx.write_text(
        "\n".join(
            x for x in (case / "context.txt").read_text().splitlines() if not x.startswith("author")
        )
    )
    assert _verdict("b13-01-", ctx)["rule"] != "V18d"


def test_the_statements_read_only_explanations_and_fixes():
    assert gate_threshold_fix(["The test failed.", "Should we relax the 0.1 threshold?"]) is None
    assert gate_threshold_fix(["Raising the tolerance did not help, the test still fails."]) is None
    assert (
        gate_threshold_fix(["I adjusted the confidence threshold to 0.5."]) is None
    )  # no test named
    lines = ["I get mAP 66.1 but the paper reports 70.5."]
    assert (
        evaluation_explains_gap(
            lines, {"maintainer NAME": "Which evaluation settings did you use?"}
        )
        is None
    )
    assert (
        evaluation_explains_gap(lines, {"reporter": "Maybe I must use another evaluation script."})
        is None
    )
    said = {"maintainer NAME": "The paper uses the VOC07 evaluation protocol instead."}
    assert evaluation_explains_gap(lines, said) == (lines[0], said["maintainer NAME"])
