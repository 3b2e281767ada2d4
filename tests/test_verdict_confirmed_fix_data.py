"""verdict.statements.confirmed_fix ("data") and V00b on a real report whose thread confirms that the
labels were corrected (tests/data/reports b17-14: every Faster R-CNN loss NaN from epoch 2; the reporter:
'I found a label coordinate lower than 0 in the label of my data set. When I modified this coordinate, I
got the correct running result')."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from mlaudit.cli import app
from mlaudit_core.verdict.statements import confirmed_fix

REPORTS = Path(__file__).resolve().parent / "data" / "reports"


def test_a_nan_the_thread_fixed_by_correcting_the_labels_is_data_config():
    """Before: diverged/model_convergence (a NaN with no precision named: the learning rate first)."""
    (case,) = REPORTS.glob("b17-14-*")
    args = ["logs", *map(str, sorted(case.glob("*.log"))), "--config", str(case / "context.txt")]
    v = json.loads(CliRunner().invoke(app, [*args, "--format", "json"]).stdout)["verdict"]
    assert (v["rule"], v["outcome"], v["cause"]) == ("V00b", "diverged", "data_config")
    assert "modified this coordinate" in v["summary"]


def test_a_label_change_confirms_nothing_without_the_run_working_after_it():
    assert confirmed_fix({"reporter": "I fixed the box coordinates. It works now."})[0] == "data"
    for said in (
        "I fixed the box coordinates but the loss is still NaN.",
        "Should I fix the box coordinates? Then it works?",
        "I fixed the box coordinates.",
    ):
        assert confirmed_fix({"reporter": said}) is None, said
