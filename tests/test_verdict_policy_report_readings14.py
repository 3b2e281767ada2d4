"""Readings of real failure reports (tests/data/reports) that carry to threads worded differently:

* verdict.policy._crash_infra on RT010's ``sigsegv`` (signatures ``sigsegv``): a bare 'Segmentation fault
  (core dumped)' is a native crash, an infra event (b30-03: deep_sort train.py, fixed by another matplotlib);
* verdict.policy._wrapper_crash_stated_killed (V08): an exception that names no cause of its own
  (Py4JJavaError around a Spark job) in a report that states the process was killed (b29-04: CatBoost
  Master 'exited with code 137', the OOM killer) is an infra crash, not a code bug;
* verdict.policy._owner_attests_match and verdict.stated_figures.owner_attests_match (V19d): the reference's
  owner saying the result is within the expected range / in line with what they observed / close enough is
  a healthy run (b30-01 CastDet, b30-06 kaldi-tuda-de, b29-06 TVCaption);
* verdict.statements.evaluation_explains_gap (V18d): the figure measured under another protocol, the text's
  tokenisation or the number of samples (b30-02 tensor2tensor approx BLEU vs Moses BLEU, b29-05 FID from 1k
  samples vs 50k)."""

from __future__ import annotations

from report_helpers import edited_context, report_case, report_verdict

from mlaudit_core.formats.consolelog.context import read_context_file
from mlaudit_core.verdict.stated_figures import owner_attests_match
from mlaudit_core.verdict.statements import evaluation_explains_gap


def test_a_bare_segmentation_fault_is_a_native_crash_of_the_environment():
    """Before: unknown/infra_runtime (no error read in 'Segmentation fault (core dumped)')."""
    v = report_verdict(report_case("b30-03"))
    assert (v["rule"], v["outcome"], v["cause"]) == ("V02", "crashed", "infra_runtime")
    assert "segmentation fault" in v["summary"] and "native code" in v["summary"]


def test_a_segmentation_fault_after_a_nan_loss_leaves_the_divergence_to_decide():
    """b7-12: detectron2 prints a loss_dict with loss_cls nan, then 'Process finished with exit code 139
    (interrupted by signal 11: SIGSEGV)': the NaN came first, the native crash follows from it, so the
    verdict stays the divergence (diverged/model_convergence, a learning rate too large for one GPU)."""
    v = report_verdict(report_case("b7-12"))
    assert (v["outcome"], v["cause"]) == ("diverged", "model_convergence")


def test_a_wrapper_exception_with_a_stated_kill_is_an_infra_crash(tmp_path):
    """Before: crashed/correctness_bug ('Py4JJavaError ... (unknown code path)'). Without the sentence
    that the process was killed the same exception stays a code bug."""
    case = report_case("b29-04")
    v = report_verdict(case)
    assert (v["rule"], v["outcome"], v["cause"]) == ("V08", "crashed", "infra_runtime")
    assert "exited with code 137" in v["summary"] and "Py4JJavaError" in v["summary"]
    ctx = tmp_path / "context.txt"
    ctx.write_text(
        "\n".join(
            ln
            for ln in (case / "context.txt").read_text().splitlines()
            if not ln.startswith("maintainer")
        )
    )
    assert report_verdict(case, ctx)["cause"] == "correctness_bug"


def test_the_reference_owner_attesting_the_level_is_a_healthy_run(tmp_path):
    """Before: b30-01 succeeded/metric_policy (V18d, 0.388 against the owner's reruns 0.405/0.407), b30-06
    and b29-06 unknown/inconclusive. The same words negated, or said by the reporter, decide nothing."""
    for prefix, outcome in (
        ("b30-01", "succeeded"),
        ("b30-06", "unknown"),
        ("b29-06", "succeeded"),
    ):
        v = report_verdict(report_case(prefix))
        assert (v["rule"], v["outcome"], v["cause"]) == ("V19d", outcome, "healthy"), prefix
        assert "reference's owner" in v["summary"]
    case = report_case("b30-01")
    denied = edited_context(
        case,
        tmp_path,
        "Your test result is within an expected range.",
        "Your test result is not within an expected range.",
    )
    assert report_verdict(case, denied)["cause"] != "healthy"
    assert (
        owner_attests_match({"reporter X": "my result is within the expected range, right"}) is None
    )
    assert owner_attests_match({"maintainer Y": "Is it within the expected range?"}) is None
    assert (
        owner_attests_match({"maintainer Y": "It is close enough, but the test score is too low."})
        is None
    )
    assert (
        owner_attests_match({"maintainer Y": "That is in line with what we observed."}) is not None
    )


def test_a_figure_measured_under_another_protocol_is_metric_policy(tmp_path):
    """Before: both unknown/inconclusive ('no metric was logged at all'). b30-02: the TensorBoard BLEU uses
    the library's tokenisation, papers the Moses tokenizer; b29-05: the FID of 1k samples against the paper's
    from 50k. A maintainer's sentence that names no protocol explains nothing."""
    for prefix in ("b30-02", "b29-05"):
        v = report_verdict(report_case(prefix))
        assert (v["rule"], v["outcome"], v["cause"]) == ("V18d", "succeeded", "metric_policy"), (
            prefix
        )
    params = read_context_file(report_case("b29-05") / "context.txt")
    lines = [f"{k}: {v}" for k, v in params.items()]
    got = evaluation_explains_gap(lines, params)
    assert got is not None and "1k images" in got[1]
    case = report_case("b30-02")
    vague = edited_context(
        case,
        tmp_path,
        "The BLEU score on TensorBoard is computed with our tokenization, while most papers (including ours) "
        "report BLEU scores that use the MOSES tokenizer.",
        "Thanks for the report.",
    )
    assert report_verdict(case, vague)["rule"] != "V18d"
    # a batch's size is no sample count of the evaluation (b21-10: 'the learning rate is tuned for 4
    # images/GPU, that is 16 images in batch' explains a setting, not the scoring)
    assert (
        evaluation_explains_gap(
            ["reporter: in the paper, RS-ATSS is 0.399, I get 0.392."],
            {
                "maintainer": "We used 4 GPUs and the learning rate is tuned for 4 images/GPU, that is 16 images in batch."
            },
        )
        is None
    )


def test_a_suggestion_to_try_a_smaller_learning_rate_confirms_no_fix(tmp_path):
    """verdict.statements.confirmed_fix: b30-12's co-author wrote 'you may try to decrease the learning
    rate' and the maintainer then called the record normal ('This record looks ok ... be patient'). Before:
    unknown/model_convergence from the suggestion read as a confirmed fix; after: the maintainer's word,
    healthy. The same change stated as what fixed it is still the learning-rate cause."""
    from mlaudit_core.verdict.statements import confirmed_fix

    case = report_case("b30-12")
    v = report_verdict(case)
    assert (v["outcome"], v["cause"]) == ("unknown", "healthy")
    assert confirmed_fix(read_context_file(case / "context.txt")) is None
    fixed = edited_context(
        case,
        tmp_path,
        '"In this case, you may try to decrease the learning rate."',
        '"Decreasing the learning rate to 0.0001 fixed it, the loss now goes down."',
    )
    assert confirmed_fix(read_context_file(fixed))[0] == "learning_rate"


def test_training_that_goes_on_after_its_announced_early_stop_is_a_code_defect():
    """verdict.policy._stop_ignored (V19s) and verdict.evidence.stop_not_honoured on b29-08: MEGNet's
    callback logs 'stopping the fitting' after epoch 13 and epochs 14-17 follow. Before: running/healthy.
    A count that starts again after the stop (another fold) and a counter towards a stop are not this."""
    from mlaudit_core.verdict.evidence import stop_not_honoured

    case = report_case("b29-08")
    v = report_verdict(case)
    assert (v["rule"], v["outcome"], v["cause"]) == ("V19s", "unknown", "correctness_bug")
    lines = (case / "train.log").read_text().splitlines()
    assert stop_not_honoured(lines)[1:] == (13, 17)
    assert (
        stop_not_honoured(
            ["Epoch 13/100", "Epoch 00013: early stopping", "Epoch 1/100", "Epoch 2/100"]
        )
        is None
    )
    assert (
        stop_not_honoured(["Epoch 3", "EarlyStopping counter: 1 out of 7", "Epoch 4", "Epoch 5"])
        is None
    )


def test_a_log_that_ends_with_its_early_stop_is_a_designed_end():
    """verdict.policy._no_signal (V20) and verdict.evidence.stop_at_end on b29-07: AllenNLP's 'Ran out of
    patience.  Stopping training.' then the best weights loaded and the final metrics, no curve. Before:
    unknown/inconclusive ('no metric was logged at all'); after: unknown/healthy, never succeeded without a
    curve. A stop followed by more epochs is not an end."""
    from mlaudit_core.verdict.evidence import stop_at_end

    v = report_verdict(report_case("b29-07"))
    assert (v["rule"], v["outcome"], v["cause"]) == ("V20", "unknown", "healthy")
    assert "Ran out of patience" in v["summary"]
    assert stop_at_end(["Epoch 3", "Epoch 00003: early stopping", "Epoch 4"]) is None
    assert (
        stop_at_end(["Epoch 3", "Epoch 00003: early stopping", "Restoring best weights"])
        is not None
    )
