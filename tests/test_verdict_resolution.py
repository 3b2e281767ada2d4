"""The statement that settled a report's thread, classed by what it names (verdict.resolution), and the
crash a reporter states in words (verdict.stated_symptom, kind ``crashed``), on real reports of
tests/data/reports from several batches. Each report below was unknown/inconclusive before (no curve, and
no sentence in the readings of verdict.statements.stated_cause):

* a setting: b38-06 AnimeGAN (``CUDA_VISIBLE_DEVICES = "1"`` changed to ``"0"``, confirmed ``resolved``),
  b35-10 bias-free denoiser (``My problem was that I was using ... Trainer(syncbatchnorm=True) option``);
* an input: b38-08 AdaptFormer (``You should use our provided checkpoint`` then ``Thanks! It works!``),
  b36-07 PaddleSeg (a maintainer's ``Please modify the label, i.e. change 255 to 1``), b37-03 NAS-Bench-201
  (``the error is caused because one label is 1000``, with the stated device-side assert: crashed);
* randomness: b38-03 ReCirq (a CI test, ``because of one bad random seed``: the gate, metric_policy), b38-10
  NP-FKGC (one run below the paper, ``the neural process samples from a distribution``: healthy);
* the evaluation: b8-01 PaddleOCR (``lower eval_batch_step ... and it works``: metric_policy);
* a stated crash: b33-04 fastai (``it fails with "Expected more than 1 value per channel"``, the maintainer's
  ``because you didn't use drop_last=True``); a stated kill, b35-04 MVTN (``"killed" appears``); a loss that
  blows up, b34-08 guided-diffusion (``the loss rises rapidly``) and b39-10 EDSR (``a second run exploded``,
  ``Using exponential attenuation to change learning rate can solve the above problems``); a loss stated
  not to move, b38-01 OFT (``doesn't seem to decrease``);
* a maintainer's merged pull request with a fix in its title: b40-02 solo-learn (the code);
* how the reference figure was obtained (statements.evaluation_explains_gap, V18d): b39-03 ETC (``the
  reported results are tested with Flip=True``), b40-04 RETURNN (``The 3.82% WER ... is done with a LSTM
  LM``), b40-06 ESRGAN (``We have tested on the Y channel``), b39-09 (``bilinear interpolation is applied to
  obtain a more robust baseline``);
* a maintainer's answer that opens by calling the figures right (statements._NOTHING_WRONG): b40-05 IRN
  (``Hi, it is correct.``, then why the paper's Y-channel PSNR is higher; ``the same with other works`` is
  no confirmation that a fix worked);
* the host's memory stated full (statements._HOST_FULL, V19i): b39-04 BirdNET (``memory and swap were fully
  occupied and finally the program had to quit``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from report_helpers import edited_context, report_case, report_verdict

from mlaudit_core.verdict.resolution import object_class, thread_resolution
from mlaudit_core.verdict.stated_symptom import stated_symptom


@pytest.mark.parametrize(
    ("prefix", "outcome", "cause"),
    [
        ("b38-06", "unknown", "data_config"),
        ("b35-10", "unknown", "data_config"),
        ("b38-08", "unknown", "data_config"),
        ("b36-07", "unknown", "data_config"),
        ("b37-03", "crashed", "data_config"),
        ("b38-03", "unknown", "metric_policy"),
        ("b38-10", "unknown", "healthy"),
        ("b8-01", "unknown", "metric_policy"),
        ("b33-04", "crashed", "data_config"),
        ("b35-04", "crashed", "correctness_bug"),
        ("b34-08", "diverged", "model_convergence"),
        ("b39-10", "diverged", "model_convergence"),
        ("b38-01", "plateaued", "correctness_bug"),
        ("b40-02", "unknown", "correctness_bug"),
        ("b39-03", "succeeded", "metric_policy"),
        ("b40-04", "succeeded", "metric_policy"),
        ("b40-06", "succeeded", "metric_policy"),
        ("b39-09", "succeeded", "metric_policy"),
        ("b39-04", "crashed", "infra_runtime"),
        ("b40-05", "unknown", "healthy"),
    ],
)
def test_thread_resolution_gives_the_cause_of_what_the_settling_statement_names(
    prefix: str, outcome: str, cause: str
):
    v = report_verdict(report_case(prefix))
    assert (v["outcome"], v["cause"]) == (outcome, cause), v["summary"]


def test_thread_resolution_needs_the_confirmation_and_reads_what_it_confirms(tmp_path: Path):
    """b38-08 without the reporter's ``Thanks! It works!``: the maintainer's answer opens with a question
    and its instruction is still read as the maintainer's (an instruction, not hedged); with the
    instruction hedged (``you might try our checkpoint``) and no confirmation, nothing settled it."""
    case = report_case("b38-08")
    ctx = edited_context(case, tmp_path, 'reporter ZipengFeng: "Thanks! It works!"', "")
    v = report_verdict(case, ctx)
    assert v["cause"] == "data_config"
    (tmp_path / "h").mkdir()
    hedged = edited_context(
        case,
        tmp_path / "h",
        "You should use our provided checkpoint",
        "you might try our checkpoint",
    )
    text = hedged.read_text().replace('reporter ZipengFeng: "Thanks! It works!"', "")
    hedged.write_text(text)
    assert report_verdict(case, hedged)["cause"] == "inconclusive"


def test_thread_resolution_randomness_is_the_gate_in_a_test_and_the_spread_in_a_comparison():
    assert thread_resolution(
        {"contributor X": "This is just because of one bad random seed/initiation."}
    ) == ("seed", "contributor X: This is just because of one bad random seed/initiation.")
    # a question or a hedge states nothing
    assert thread_resolution({"contributor X": "Is this because of a bad random seed?"}) is None
    assert thread_resolution({"contributor X": "Maybe this is because of a bad seed."}) is None


def test_thread_resolution_reads_works_as_the_verb_not_the_noun():
    said = {
        "reporter": "The PSNR is lower than in the paper.",
        "maintainer X": "The paper uses the Y channel, which follows the setting in other works.",
    }
    assert thread_resolution(said) is None
    said["reporter (2)"] = "Thanks! It works!"
    assert thread_resolution(said) is not None


def test_object_class_reads_classes_not_phrases():
    assert object_class('it to os.environ["CUDA_VISIBLE_DEVICES"] = "0"') == "setting"
    assert object_class("use our provided checkpoint") == "input"
    assert object_class("one label is 1000") == "input"
    assert object_class("lower eval_batch_step and add some more training images") == "evaluation"
    assert object_class("the neural process samples from a distribution") == "random"
    assert object_class("I had a line left in from a test") == "code"
    assert object_class("the node ran out of memory") == "machine"
    assert object_class("lowering the learning rate to 1e-4") == "optimisation"
    # a call that passes name=value is a setting passed, not the code
    assert object_class("using the Trainer(syncbatchnorm=True) option") == "setting"


def test_evaluation_explains_gap_needs_the_measuring_stated_not_asked_or_hedged(tmp_path: Path):
    """b40-06 with the maintainer's sentence turned into a question or a hedge: nothing explains the gap."""
    case = report_case("b40-06")
    old = "We have tested on the  Y channel."
    for i, new in enumerate(
        ("Have you tested on the Y channel?", "We might have tested on the Y channel.")
    ):
        (tmp_path / str(i)).mkdir()
        ctx = edited_context(case, tmp_path / str(i), old, new)
        text = ctx.read_text().replace("I think you may evaluate on RGB channels.", "")
        ctx.write_text(text)
        assert report_verdict(case, ctx)["cause"] != "metric_policy"


def test_stated_symptom_reads_a_crash_in_words_not_a_pasted_exception_or_a_question():
    assert stated_symptom(['reporter: after the first epoch it fails with "Expected more than 1"'])[
        0
    ] == ("crashed")
    assert stated_symptom(["symptom: RuntimeError: device-side assert triggered"])[0] == "crashed"
    assert stated_symptom(["Why does it crash after epoch 1?"]) is None
    assert stated_symptom(["it does not crash, the loss is fine"]) is None
    assert stated_symptom(["maintainer NAME: it crashed because of the labels"]) is None
    assert stated_symptom(['reporter: "killed" appears in the second epoch'])[0] == "crashed"
    assert stated_symptom(["the loss rises rapidly after 5000 iterations"])[0] == "diverged"
    assert stated_symptom(["the loss rises slowly after 5000 iterations"]) is None
