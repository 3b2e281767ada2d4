"""The console reader's training bar (mlaudit_core/formats/consolelog/parser.py ``_bar_pass_step``)
on a Hugging Face Trainer run resumed in the same console.

tests/data/newuser9/hf_resumed_console.log (README there): transformers 5.25, 96 steps over 6
epochs, SIGTERMed at step ~35 after ``checkpoint-32`` and relaunched with
``resume_from_checkpoint=True``; the second launch's bar starts at ``0/96`` and jumps to ``40/96``
(the Trainer skips to the checkpoint's global step). The Trainer prints no start banner at its
default log level, so nothing but the bar marks the relaunch.
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from mlaudit.cli import app
from mlaudit_core.formats.consolelog import load_logs

LOG = Path(__file__).parent / "data" / "newuser9" / "hf_resumed_console.log"


def test_bar_pass_step_reads_a_resumed_trainer_bar_as_one_step_axis():
    """Before: the relaunch's bar was the next pass of a per-epoch bar (steps 96 + 35 ... 96 + 96,
    'log.steps_per_epoch' 96, the run's max_steps), and LI003 called the resume a step-counter
    reset (unstable / correctness_bug)."""
    run = load_logs([LOG])
    steps = [int(s) for s in run.metrics.series("train/loss").steps]
    assert max(steps) <= 96, steps
    assert run.params.get("log.steps_per_epoch") != "96"
    assert [int(s) for s in run.metrics.series("val/loss").steps] == [16, 32, 48, 64, 80, 96]


def test_mlaudit_logs_judges_the_resumed_run_on_its_curves():
    res = CliRunner().invoke(app, ["logs", str(LOG), "--format", "json"])
    assert res.exit_code == 0, res.output
    verdict = json.loads(res.stdout)["verdict"]
    assert verdict["outcome"] == "succeeded", verdict["summary"]
