"""verdict.policy._nan_recovered_stated (V07a) and verdict.statements.stated_recovered on a real report
(tests/data/reports b14-11: 'the loss is Nan' in the reporter's prose, no log lines; the maintainer: 'it
usually takes a few iterations to get back to normal' under mixed precision; the reporter: 'I find it does
not affect the training actually')."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from mlaudit.cli import app
from mlaudit_core.verdict.statements import stated_recovered

REPORTS = Path(__file__).resolve().parent / "data" / "reports"


def test_a_nan_the_thread_says_the_run_came_back_from_is_not_a_divergence():
    """Before: diverged/data_config (V07: a NaN under mixed precision). Running: no end was seen."""
    (case,) = REPORTS.glob("b14-11-*")
    args = ["logs", str(case / "report.log"), "--config", str(case / "context.txt")]
    v = json.loads(CliRunner().invoke(app, [*args, "--format", "json"]).stdout)["verdict"]
    assert (v["rule"], v["outcome"], v["cause"]) == ("V07a", "running", "healthy")
    assert "get back to normal" in v["summary"]


def test_stated_recovered_reads_only_a_recovery():
    assert stated_recovered({"reporter NAME": "It recovered after a few steps."}) is not None
    for said in (
        "Does it recover after a few steps?",
        "It recovered after a few steps but the loss is still NaN later.",
        "The NaN affects the training from step 10 on.",
    ):
        assert stated_recovered({"reporter NAME": said}) is None, said
