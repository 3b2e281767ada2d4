"""Judgement rules of session 13 on real artifacts of the own corpus (tests/data/realworld, copied
byte-exact from public repositories and labelled from their data before any mlaudit run), read with
the real readers. Each test states the reading a careful analyst gives any run and fails without its
rule:

- a held-out loss term non-finite at some evaluations and finite after: the model was unstable and
  recovered (LI001 reads every evaluation-split loss; policy V11d);
- the end-of-training line of the transformers 2.x-3.x example scripts (``global_step = N, average
  loss = X``) is an end line;
- an epoch header that names its phase (``Eval epoch: 4``) puts the lines under it in that split.
"""

from __future__ import annotations

from realworld_helpers import own_run

from mlaudit_core.audit import audit
from mlaudit_core.report import Cause, Outcome
from mlaudit_core.verdict.evidence import ending


def test_li001_reads_every_term_of_the_heldout_loss_and_v11d_calls_the_recovered_blow_up_unstable():
    """f14b1-07: YOLOv8 results.csv, val/cls_loss 211 then the string 'inf' at epoch 7 of 100 (in the
    learning-rate warm-up) while val/box_loss stays finite; mAP50 0.63 -> 0.07, then 0.967 at epoch 62.
    The inf is the model's output on held-out data (an evaluation skips no batch), and it recovered:
    unstable/model_convergence, not the late decline read as an overfit."""
    run = own_run("f14b1-07-")
    rep = audit(run)
    li = [f for f in rep.findings if f.code == "LI001"]
    assert li and li[0].facts["key"] == "val/cls_loss" and li[0].facts["finite_at_end"], [
        f.message for f in rep.findings
    ]
    v = rep.verdict
    assert (v.outcome, v.cause) == (Outcome.UNSTABLE, Cause.MODEL_CONVERGENCE), v.summary
    assert v.rule == "V11d" and "val/cls_loss" in v.summary


def test_the_end_line_of_transformers_example_scripts_ends_the_run():
    """f14b2-11: a nohup capture of a transformers-2.x-style QA script (its '***** Running training
    *****' banner, no Trainer 'train_runtime'); the epoch bar reaches 3/3 and the script prints
    ' global_step = 13747, average loss = 11.67' when train() returns. Not 'stopped without its
    end-of-training line'."""
    run = own_run("f14b2-11-")
    rep = audit(run)
    e = ending(run, rep.findings)
    assert e.missing_end_line is None and not e.stopped, e
    assert rep.verdict.outcome is not Outcome.CRASHED, rep.verdict.summary


def test_an_eval_epoch_header_puts_the_lines_under_it_in_the_validation_split():
    """f14b1-08: the mmskeleton/ST-GCN IO printer writes 'Training epoch: N' and 'Eval epoch: N'
    headers, each followed by an indented '\\tmean_loss: X' line: the mean loss under 'Eval epoch' is
    the evaluation's loss, and 'Top1: 20.00%' under it the evaluation's accuracy."""
    run = own_run("f14b1-08-")
    assert "val/mean_loss" in run.metrics.keys and "val/top1" in run.metrics.keys, run.metrics.keys
    assert "train/mean_loss" in run.metrics.keys


def test_a_name_with_two_spaces_is_one_name():
    """f6b2-04: a W&B output.log printing '... Validation Loss: 3.1e-06 \\tValidation  Accuracy: 0.978'
    (two spaces inside the name): the validation accuracy is its own series, not a second training
    accuracy; at 0.990-0.992 for the last 80 of 100 epochs it is at its ceiling, and the flat validation
    loss is no plateau to report."""
    run = own_run("f6b2-04-")
    acc = run.metrics.series("val/accuracy")
    assert len(acc) == 100 and float(acc.values[-1]) > 0.99, run.metrics.keys
    assert float(run.metrics.series("train/accuracy").values[-1]) > 0.994
    v = audit(run).verdict
    assert (v.outcome, v.cause) == (Outcome.SUCCEEDED, Cause.HEALTHY), v.summary


def test_a_split_tag_in_the_place_of_a_logger_name_is_the_lines_split():
    """f10b1-20: Python logging '%(asctime)s - %(name)s - %(levelname)s - %(message)s' whose message
    opens with its split like a logger name: '... - INFO - Validation - Loss: 0.1996, F1: 0.9995,
    AUC: 0.9997'. The three figures are the evaluation's, not the training loss and F1."""
    run = own_run("f10b1-20-")
    assert [round(float(x), 4) for x in run.metrics.series("val/f1").values] == [
        0.9989,
        0.9995,
        0.9995,
        0.9994,
        0.9995,
    ]
    assert float(run.metrics.series("train/loss").values.max()) < 0.2


def test_tensorboard_event_files_of_several_launches_are_judged_by_the_last_that_trained():
    """f10b2-01: an HF Trainer logdir holding the event files of 7 processes over two months, each
    starting its train/loss at step 10 (relaunches from scratch, not resumes); the last one trained 128
    points to step 1280 and wrote the end-of-training summary. The run is that launch (named in the
    summary), not 140 points of several runs whose step 'goes back' from 100 to 10."""
    run = own_run("f10b2-01-")
    assert (run.params.get("log.launches"), run.params.get("log.launch_judged")) == ("6", "6")
    loss = run.metrics.series("train/loss")
    assert len(loss) == 128 and int(loss.steps[0]) == 10 and int(loss.steps[-1]) == 1280
    rep = audit(run)
    assert not [f for f in rep.findings if f.code == "LI002" and f.severity.value == "error"]
    assert rep.verdict.cause is not Cause.CORRECTNESS_BUG, rep.verdict.summary
    assert "launch 6 of 6" in rep.verdict.summary
