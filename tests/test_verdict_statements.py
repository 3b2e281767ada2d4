"""What a report's sentences state (verdict.statements): the precision in use, and a fix that changed
only the environment.

Reduced precision stated in prose (``stated_precision``):

A report states its precision setting in prose (``task: ... (AMP fp16 mixed precision, ...)``,
``config (reporter): ..., precision 16-true``) rather than as a ``precision = 16`` param. Such a
statement is precision evidence like the param: a NaN with reduced precision in use has numerics /
the precision setting (data_config) as first suspect (rules V03/V04), not the learning rate.

Real reports of tests/data/reports, run as ``benchmarks/diagnosis_eval.py`` runs them:

* b7-06: mmpretrain MAE with the ``-amp-`` config, loss NaN from epoch 165; the reporter: "disable
  AMP solves it";
* b8-14: litgpt Falcon-7B adapter on V100 with ``precision 16-true``, NaN right after the first
  optimizer step; the maintainer: V100 supports 16-mixed, not 16-true;
* b11-06: TinyLlama SFT with the HF Trainer "in fp16": eval loss NaN while the training loss stays finite
  and falls (V06b: the evaluation overflowing fp16 before a hidden divergence);
* b4-10 (control): a NaN at lr 0.01 with no precision named stays the learning rate's.

A failure that went away with only the software stack or the machine changed (``environment_fix``,
rule V00: infra_runtime):

* b8-13: convmesh GAN, g_loss NaN at the first update; "the problem was resolved when I changed 1.7
  to 1.6" (PyTorch);
* b9-01: tensorpack ResNet, TensorFlow's "Nan in summary histogram" (signature nan-message); "switched
  to tensorflow 1.3 and cudnn/6.0. Now it seems to work perfectly";
* b6-01: darknet ``28: -nan, -nan avg loss`` lines on an RTX 2080 Ti; "the same training ... works on an
  Azure GPU VM".
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mlaudit.cli import app
from mlaudit_core.verdict.statements import environment_fix, stated_precision

REPORTS = Path(__file__).resolve().parent / "data" / "reports"


def _verdict(prefix: str) -> dict:
    (case,) = REPORTS.glob(prefix + "*")
    args = ["logs", *map(str, sorted(case.glob("*.log")))]
    for cfg in sorted(case.glob("*.txt")):
        args += ["--config", str(cfg)]
    res = CliRunner().invoke(app, [*args, "--format", "json"])
    return json.loads(res.stdout)["verdict"]


@pytest.mark.parametrize(
    ("text", "clause"),
    [
        ("devices = 8, micro_batch_size = 1, precision 16-true", "precision 16-true"),
        (
            "MAE with config mae-amp-coslr (AMP fp16 mixed precision, cosine lr)",
            "AMP fp16 mixed precision",
        ),
        ("we train with --fp16 on 4 V100", "we train with --fp16 on 4 V100"),
        (
            "Perhaps it's because you are using 16-true",
            "Perhaps it's because you are using 16-true",
        ),
        (
            "both models were loaded in f16 with load_in_4bit because memory was short",
            "both models were loaded in f16 with load_in_4bit because memory was short",
        ),
        (
            "model loaded with load_in_8bit=True on a T4",
            "model loaded with load_in_8bit=True on a T4",
        ),
    ],
)
def test_stated_precision_reads_the_clause_naming_the_mode(text, clause):
    assert stated_precision(text) == clause


@pytest.mark.parametrize(
    "text",
    [
        "fp16 not used in this run",
        "trained without fp16 on 8 GPUs",
        "disable AMP solves it",
        "run with fp16=False and lr 0.1",
        "the amp on the bench was too loud",  # the word, not the setting
        "fp16",  # one word: a setting, read by its key
        "photos from the f160 camera",  # f16 only as a word of its own
        "load_in_4bit=False on every run",
    ],
)
def test_stated_precision_ignores_a_mode_that_is_off_or_not_named(text):
    assert stated_precision(text) is None


@pytest.mark.parametrize("prefix", ["b7-06-", "b8-14-", "b11-06-", "b12-05-"])
def test_nan_with_precision_stated_in_the_report_is_data_config(prefix):
    v = _verdict(prefix)
    assert (v["outcome"], v["cause"]) == ("diverged", "data_config"), v["summary"]


def test_nan_without_a_precision_named_stays_the_learning_rates():
    v = _verdict("b4-10-")
    assert (v["outcome"], v["cause"]) == ("diverged", "model_convergence"), v["summary"]


@pytest.mark.parametrize(
    "said",
    [
        "I used CUDA 10.1 and pytorch 1.7. But the problem was resolved when I changed 1.7 to 1.6!",
        "Ok, I have switched to tensorflow 1.3 and cudnn/6.0. Now it seems to work perfectly.",
        "the same training gives nan on the RTX 2080 Ti but works on an Azure GPU VM",
        "after a downgrade of the nvidia driver to 470 the job trains fine",
        "it works on another GPU server",
    ],
)
def test_environment_fix_reads_a_fix_of_the_stack_or_the_machine(said):
    assert environment_fix({"reporter": said}) is not None


@pytest.mark.parametrize(
    "said",
    [
        "I upgraded to pytorch 1.7 and lowered the learning rate, now it works",  # a model-side change too
        "I switched to tensorflow 1.3 but it still gives nan",  # not gone
        "If you're using cudnn 5.1.5 you should upgrade it.",  # advice, no outcome
        "cudnn5.1.10 should work",
        "It doesn't work on another GPU either",
        "fixed by adding a small epsilon inside log() in the code",  # a code fix
    ],
)
def test_environment_fix_ignores_other_fixes_advice_and_failures(said):
    assert environment_fix({"reporter": said}) is None


def test_environment_fix_reads_prose_only():
    assert (
        environment_fix({"torch": "1.6", "log.source": "switched to torch 1.6 and now it works"})
        is None
    )


@pytest.mark.parametrize("prefix", ["b8-13-", "b9-01-", "b6-01-"])
def test_failure_gone_with_the_environment_changed_is_infra(prefix):
    v = _verdict(prefix)
    assert (v["outcome"], v["cause"]) == ("diverged", "infra_runtime"), v["summary"]
    assert "software stack or the machine" in v["summary"]


def test_environment_fixed_on_a_gpu_hang_reported_in_prose_only():
    """Report b24-03 (StarDist 3D stuck at epoch 1 of 400 on the GPU, no log pasted): "I got it fixed by
    replacing the Nvidia GPU Gaming Driver for the Studio Driver": a driver replaced, the failure gone.
    With no curve and no error the outcome is not judged, the cause is the environment (was
    unknown/inconclusive: 'replacing' was no verb of change, and V00 needed a NaN or a crash)."""
    v = _verdict("b24-03-")
    assert (v["outcome"], v["cause"]) == ("unknown", "infra_runtime"), v["summary"]
    assert "Studio Driver" in v["summary"]
