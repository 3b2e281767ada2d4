"""formats/consolelog/context.parse_context_lines: a ``key: sentence`` line that lists settings keeps the
sentence as well as the settings."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from mlaudit.cli import app
from mlaudit_core.formats.consolelog.context import parse_context_lines

REPORTS = Path(__file__).resolve().parent / "data" / "reports"


def test_a_sentence_that_lists_settings_is_kept_with_them():
    line = (
        "task: GraphSAGE on Cora, 10 repeats, each resetting every seed to 111 and setting "
        "cudnn.deterministic=True, benchmark=False, enabled=False before building the model"
    )
    got = parse_context_lines([line])
    assert got["benchmark"] == "False"
    assert got["task"].startswith("GraphSAGE on Cora, 10 repeats")
    # a plain settings line stays settings only
    assert parse_context_lines(["lr=0.1, batch_size=32, epochs=5"]) == {
        "lr": "0.1",
        "batch_size": "32",
        "epochs": "5",
    }


def test_ten_seeded_reruns_within_two_percent_are_healthy():
    """Real report b8-08 (PyG GraphSAGE on Cora, '10 repeats' named in the task sentence that also lists
    cudnn settings; accuracies 0.800-0.817): before, the sentence was dropped for its settings, so the
    ten figures were not read as reruns and the verdict abstained."""
    (case,) = REPORTS.glob("b8-08-*")
    args = ["logs", *map(str, sorted(case.glob("*.log"))), "--config", str(case / "context.txt")]
    v = json.loads(CliRunner().invoke(app, [*args, "--format", "json"]).stdout)["verdict"]
    assert (v["outcome"], v["cause"]) == ("succeeded", "healthy"), v["summary"]
