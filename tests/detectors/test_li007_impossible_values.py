"""LI007 metric-out-of-range on real inputs: values no correct metric can take.

* Report b18-09 (LibFewShot CAN, console): validation and test ``Acc@1 2008.000`` / ``2481.000`` printed
  on one step counter; read one point per step, no series had two points and the value went unseen
  (unknown/inconclusive). Every logged value is checked now, and above 100 is impossible on either scale.
* Report b20-02 (the PyTorch transfer-learning tutorial since 0.4): ``Acc: 0.0000`` at every epoch while
  ``val Loss`` falls to 0.2288. Under cross-entropy a wrong arg-max prediction costs at least ln 2 (shown
  with torch below), so an accuracy of 0 beside a mean loss under ln 2 is impossible.
* Controls from the own corpus: a sequence-level exact-match accuracy at 0 beside a token loss of 0.49
  (f7b3-13, OpenAI fine-tune) and a mAP at 0 beside a box-regression loss (csv34, YOLOv8 in warm-up) are
  not such a pair.
"""

from __future__ import annotations

import math
from pathlib import Path

import torch

from mlaudit_core.audit import audit
from mlaudit_core.detectors.LI007 import CE_WRONG_FLOOR
from mlaudit_core.formats import load_path
from mlaudit_core.formats.consolelog.context import read_context_file
from mlaudit_core.report import Cause, Outcome

DATA = Path(__file__).resolve().parents[1] / "data"


def _report_run(prefix: str):
    (case,) = (DATA / "reports").glob(prefix + "*")
    ((_, run),) = load_path(case / "train.log").runs
    run.params.update(read_context_file(case / "context.txt"))
    return run


def _li007(run):
    return [f for f in audit(run).findings if f.code == "LI007"]


def test_an_accuracy_above_100_logged_on_one_step_counter_is_impossible():
    run = _report_run("b18-09-")
    f = _li007(run)[0]
    assert f.facts["value"] > 100 and f.facts["upper_bound"] == 100.0
    v = audit(run).verdict
    assert (v.outcome, v.cause) == (Outcome.RUNNING, Cause.CORRECTNESS_BUG), v.summary


def test_the_cross_entropy_of_a_wrong_argmax_prediction_is_at_least_ln_2():
    assert math.isclose(CE_WRONG_FLOOR, math.log(2))
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(4096, 5, generator=g) * 3
    wrong = (logits.argmax(1) + 1 + torch.randint(0, 4, (4096,), generator=g)) % 5
    ce = torch.nn.functional.cross_entropy(logits, wrong, reduction="none")
    assert float(ce.min()) >= CE_WRONG_FLOOR - 1e-6


def test_a_zero_accuracy_beside_a_loss_below_ln_2_is_impossible():
    run = _report_run("b20-02-")
    f = _li007(run)[0]
    assert f.facts["kind"] == "contradicts_loss" and f.facts["loss"] == 0.2288
    v = audit(run).verdict
    assert (v.outcome, v.cause) == (Outcome.RUNNING, Cause.CORRECTNESS_BUG), v.summary


def test_a_sequence_accuracy_or_a_map_beside_another_loss_is_no_such_pair():
    own = DATA / "realworld" / "runs"
    for path in (
        own
        / "mdarshad1000--Fine-Tuning-GPTs"
        / "wandb"
        / "run-20221220_062129-ft-jxFTOONXtEE9wOuUXnAghvgu",
        own / "4rtur1t0--TrashYolo" / "runs" / "detect" / "train2" / "results.csv",
    ):
        for _, run in load_path(path).runs:
            assert not _li007(run), path
