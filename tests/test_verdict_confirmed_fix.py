"""The fix a report's thread confirms (verdict.statements.confirmed_fix, rule V00b).

A careful analyst reads the setup next to the first NaN and the explanation the thread confirms: a
sentence that states the change and its result ("I had the exact same issue with fp16 ... I recommend
using fp32"; "try setting fp16 to False" answered by "It works for me!"; "fixes #1 by implementing lr
warmup: it no longer gives NaN"), never a keyword alone. A change followed by "still" / "did not help"
did not fix it, and a list of candidates confirms nothing.

Real reports of tests/data/reports, run as ``benchmarks/diagnosis_eval.py`` runs them:

* b13-05: yanmtt BART pretraining with ``--fp16``, bare ``step loss`` records ``76980 nan``; the maintainer
  had the same issue with fp16 and recommends fp32: diverged / data_config;
* b10-11: flan-alpaca T5 on a V100, "I got a [nan.0] value at each step" with ``precision 16-mixed``; the
  maintainer: T5 was pretrained in bf16, may not work well for fp16, remove the precision line (fp32):
  diverged / data_config;
* b12-12: BELLE LoRA on V100, the curve a screenshot; "try setting fp16 to False", then "It works for me!":
  plateaued (no curve: the reporter states the loss never seems to decrease) / data_config;
* b8-05: Glow, ``total_loss=nan`` at step 18; the maintainer's PR "fixes #1 by implementing lr warmup",
  tested on the reporter's seed: diverged / model_convergence;
* b8-12: Paddle DIoU-YOLOv3, "loss becomes NaN" within the first epoch, "lowering the learning rate does not
  help either"; the maintainer: "fixed just now: a small constant was missing inside log()": correctness_bug;
* b8-06: StreetSurf NaN at the first step; the maintainer: lr exactly zero from the warm-up scheduler
  under PyTorch 2, "It should be fixed now": correctness_bug;
* b10-03: Gemma SFT, loss 153318.95 with grad_norm nan, then intermittent nan; the reporter, later: "While
  training all weights need to be adjusted using fp32/tf32" (the fix stated as what the run needs):
  data_config;
* b7-07 (control): "I tried lowering the learning rate ... but that did not avoid it": no fix confirmed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mlaudit.cli import app
from mlaudit_core.formats.consolelog.context import parse_context_lines, read_context_file
from mlaudit_core.verdict.statements import confirmed_fix

REPORTS = Path(__file__).resolve().parent / "data" / "reports"


def _case(prefix: str) -> Path:
    (case,) = REPORTS.glob(prefix + "*")
    return case


def _verdict(prefix: str) -> dict:
    case = _case(prefix)
    args = ["logs", *map(str, sorted(case.glob("*.log")))]
    for cfg in sorted(case.glob("*.txt")):
        args += ["--config", str(cfg)]
    res = CliRunner().invoke(app, [*args, "--format", "json"])
    return json.loads(res.stdout)["verdict"]


@pytest.mark.parametrize(
    ("prefix", "outcome", "cause", "sentence"),
    [
        ("b13-05-", "diverged", "data_config", "I recommend using fp32"),
        ("b10-11-", "diverged", "data_config", "lead to fp32 training"),
        # no curve: the outcome is the reporter's symptom ("never seems to decrease": plateaued)
        ("b12-12-", "plateaued", "data_config", "fp16 to False"),
        ("b8-05-", "diverged", "model_convergence", "warmup"),
        ("b8-12-", "diverged", "correctness_bug", "fixed just now"),
        ("b10-03-", "diverged", "data_config", "need to be adjusted using fp32"),
        ("b15-03-", "crashed", "correctness_bug", "The fix was in EVER"),
        ("b8-06-", "diverged", "correctness_bug", "fixed now"),
        # a released checkpoint that the repository's code no longer loads; the maintainer: "I just update
        # the code, the current one should work" (was data_config, a wrong checkpoint)
        ("b24-07-", "crashed", "correctness_bug", "I just update the code"),
    ],
)
def test_thread_confirmed_fix_sets_the_cause(prefix, outcome, cause, sentence):
    v = _verdict(prefix)
    assert (v["outcome"], v["cause"]) == (outcome, cause), v["summary"]
    assert sentence in v["summary"]  # the finding says which sentence was read


def test_a_fix_tried_that_did_not_help_is_not_confirmed():
    assert confirmed_fix(read_context_file(_case("b7-07-") / "context.txt")) is None


@pytest.mark.parametrize(
    "lines",
    [
        [
            'reporter: "change to pytorch1.7. and change fp16 to False. the loss still keeps getting 69.0776."'
        ],
        [
            'maintainer x: "it could be one of the following things: 1. Learning rate is too high and should be '
            'reduced. 2. Your label is not binary."',
            'reporter: "I believe my problem is No.2"',
        ],
        ["task: fine-tuning with fp16 on V100, I recommend using fp32 for this data set"],
        ['maintainer x: "Got it, I will try fp32 tomorrow"'],
        ['reporter: "Do I need to use fp32 for this model?"'],
    ],
)
def test_confirmed_fix_ignores_unconfirmed_or_failed_changes(lines):
    assert confirmed_fix(parse_context_lines(lines)) is None


def test_context_keeps_a_speakers_later_sentences_and_keys_with_commas():
    got = parse_context_lines(
        [
            'reporter: "the loss becomes nan after 6k iterations"',
            'reporter (later, the cause): "found it: the optimizer stepped twice"',
            'reporter: "moving optimizer.step() into the else branch fixes it"',
            "lr: 0.1",
            "lr: 0.01",
        ]
    )
    assert got["reporter"] == "the loss becomes nan after 6k iterations"
    assert got["reporter (2)"] == "moving optimizer.step() into the else branch fixes it"
    assert got["reporter (later, the cause)"] == "found it: the optimizer stepped twice"
    assert got["lr"] == "0.01"  # a setting given twice keeps its last value


@pytest.mark.parametrize(
    ("prefix", "sentence"),
    [
        # LightGBM's 'No further splits with positive gain' only
        ("b13-16-", "no code changes required"),
        # a flow-matching loss flat around 0.23, screenshot only
        ("b10-14-", "reasonable magnitude"),
    ],
)
def test_maintainer_says_expected_with_nothing_failing_is_healthy(prefix, sentence):
    """Running: the report shows no end of the run (no final tracker status), the thread clears it."""
    v = _verdict(prefix)
    assert (v["outcome"], v["cause"]) == ("running", "healthy"), v["summary"]
    assert sentence in v["summary"]


def test_expected_next_to_a_cause_or_from_the_reporter_is_not_read():
    from mlaudit_core.verdict.statements import expected_behaviour

    assert (
        expected_behaviour({"maintainer x": "It is expected because your labels are not binary."})
        is None
    )
    assert (
        expected_behaviour({"reply by x": "That's not a bug. The survived column is all 0s"})
        is None
    )
    assert (
        expected_behaviour({"reporter": "I think the loss is normal, the model trains fine"})
        is None
    )


def test_a_curve_change_the_maintainer_calls_normal_is_no_confirmed_cause():
    """b15-13: FastChat SFT loss drops at each epoch start; the maintainer: "It is normal" (memorisation);
    another user's lower learning rate removed the stairs, which fixed no failure."""
    v = _verdict("b15-13-")
    assert v["cause"] == "healthy", v["summary"]


def test_worker_sigbus_from_torch_elastic_is_an_infra_crash():
    """b16-08: DLRover nanoGPT, ``ProcessFailure(... exitcode=-7 ... 'Signal 7 (SIGBUS) received by PID
    54')``: the 64 MB /dev/shm of a container is too small for the checkpoint."""
    v = _verdict("b16-08-")
    assert (v["outcome"], v["cause"]) == ("crashed", "infra_runtime"), v["summary"]
    assert "SIGBUS" in v["summary"]
