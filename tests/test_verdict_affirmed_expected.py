"""verdict.statements.affirmed_expected and V20a on a real report whose maintainer answers 'Yes' to the
reporter's 'Is this reasonable?' (tests/data/reports b17-09: LEO align task, 7-8 hours per epoch;
maintainer: 'Yes. Each epoch takes about 8 hours in our implementation setting.')."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from mlaudit.cli import app
from mlaudit_core.verdict.statements import affirmed_expected, expected_behaviour

REPORTS = Path(__file__).resolve().parent / "data" / "reports"


def test_a_maintainers_yes_to_is_this_reasonable_clears_the_run():
    """Before: unknown/inconclusive ('no metric was logged at all')."""
    (case,) = REPORTS.glob("b17-09-*")
    args = ["logs", str(case / "report.log"), "--config", str(case / "context.txt")]
    v = json.loads(CliRunner().invoke(app, [*args, "--format", "json"]).stdout)["verdict"]
    assert (v["rule"], v["outcome"], v["cause"]) == ("V20a", "running", "healthy")
    assert "Each epoch takes about 8 hours" in v["summary"]


def test_affirmed_expected_needs_the_question_and_a_plain_yes():
    q = ["The loss is 0.3 after 2 epochs. Is this normal?"]
    assert affirmed_expected(q, {"maintainer NAME": "Yes. That is what we see too."}) is not None
    for answer in ("Yes, but your learning rate is too high.", "No, it should be lower.", "Maybe."):
        assert affirmed_expected(q, {"maintainer NAME": answer}) is None, answer
    assert affirmed_expected(["The loss is 0.3."], {"maintainer NAME": "Yes."}) is None
    assert affirmed_expected(q, {"reporter": "Yes. That is what we see too."}) is None


def test_a_maintainers_thats_normal_clears_the_run():
    """b24-05 (img2pose: spikes in the training curve; the maintainer: "That's normal, I also had a lot of
    spikes during training"). Before: unknown/inconclusive ('no metric was logged at all')."""
    (case,) = REPORTS.glob("b24-05-*")
    args = ["logs", str(case / "report.log"), "--config", str(case / "context.txt")]
    v = json.loads(CliRunner().invoke(app, [*args, "--format", "json"]).stdout)["verdict"]
    assert (v["rule"], v["outcome"], v["cause"]) == ("V20a", "running", "healthy")
    assert expected_behaviour({"maintainer NAME": "That's normal for a small batch."}) is not None
    assert expected_behaviour({"maintainer NAME": "That's not normal, lower the lr."}) is None
