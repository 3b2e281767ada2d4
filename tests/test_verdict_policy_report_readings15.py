"""Readings of real failure reports (tests/data/reports) where the thread's confirmation, not a figure, sets
the verdict:

* verdict.statements.stated_flaky_test and verdict.policy._gate_threshold_fixed (V18c): a failing test the
  thread says fails by chance (flaky, unseeded) or whose tolerance it raises is the check's problem
  (metric_policy), not the code's (b34-01 MLServer assert_allclose, b33-09 GeometricMachineLearning.jl
  unseeded draw, b32-04 SGLang accuracy gate);
* verdict.statements._NOTHING_WRONG and stated_cause (V20): a maintainer's verdict on a comparison with a
  reference (results in line with ours, your numbers look good, the paper is incorrect, different
  initialisations give different accuracies, the reference averaged over seeds) clears the run (healthy),
  and outranks both the reference's recipe and the evaluation protocol the same maintainer explains (b34-04,
  b34-07, b33-07, b34-05, b32-08);
* verdict.policy._environment_fixed_unseen (V00): a fix that gave the job memory after its memory ran out
  implies the outcome, a crash (b33-10 keras-retinanet 'Killed', RAM exhausted, swap added; b31-05
  variant-nnue 'increasing the RAM did the job');
* verdict.gap_reasons._SETTING_INSTEAD (V18e before V18d's second reading): a recipe setting stated with the
  run's value against the reference's is why the figures differ (b34-03 SimpleDet SyncBN batch 12 instead
  of 24);
* verdict.statements._EVAL_SIDE (V18d): one model behind both figures, or a score threshold, is the
  evaluation (b33-06 SCG released model at threshold 0.2 vs the paper's 0.5);
* verdict.policy._thread_says_expected (V20a): "expected" because the metric is set by hand measures
  nothing (b33-05 brightmart accuracy set to 0.5): metric_policy;
* verdict.policy._slow_stated (V18b): a maintainer's "expected" that names the user's storage states where
  the time goes, not that nothing is wrong (b34-09 pytracking on an HDD)."""

from __future__ import annotations

from report_helpers import edited_context, report_case, report_verdict

from mlaudit_core.formats.consolelog.context import read_context_file
from mlaudit_core.verdict.statements import (
    evaluation_explains_gap,
    stated_cause,
    stated_flaky_test,
)


def test_a_tolerance_raised_for_a_flaky_assert_allclose_is_the_checks_problem():
    """Before: unknown/inconclusive (the tolerance named in backticks, ``Adjust `assert_allclose`
    tolerance``, was not read as a threshold made looser)."""
    v = report_verdict(report_case("b34-01"))
    assert (v["rule"], v["outcome"], v["cause"]) == ("V18c", "unknown", "metric_policy")


def test_an_unseeded_test_that_fails_by_chance_is_the_checks_problem(tmp_path):
    """Before: unknown/inconclusive. Without the sentence that the file calls no seed the thread states no
    chance, and nothing is concluded."""
    case = report_case("b33-09")
    v = report_verdict(case)
    assert (v["rule"], v["outcome"], v["cause"]) == ("V18c", "unknown", "metric_policy")
    assert "Random.seed" in v["summary"]
    ctx = edited_context(case, tmp_path, "the file calls no Random.seed! at all, so ", "")
    assert report_verdict(case, ctx)["cause"] != "metric_policy"


def test_a_flaky_gate_in_an_older_batch_reads_the_same():
    """b32-04 (SGLang CI accuracy gate, 'flaky' 200-question benchmark), abstained before."""
    v = report_verdict(report_case("b32-04"))
    assert (v["outcome"], v["cause"]) == ("unknown", "metric_policy")


def test_an_unseeded_training_run_is_no_flaky_test():
    """b34-05: 'the training scripts don't fix the seed' with no test failure shown is a rerun's spread."""
    lines = [ln for ln in (report_case("b34-05") / "context.txt").read_text().splitlines() if ln]
    assert stated_flaky_test(lines) is None


def test_a_maintainers_verdict_that_the_results_match_theirs_is_healthy():
    """Before: unknown/inconclusive for all three (b34-04 'in line with ours', b33-07 'the paper is
    incorrect', b34-05 'different initialization values lead to different accuracies')."""
    for prefix in ("b34-04", "b33-07", "b34-05"):
        v = report_verdict(report_case(prefix))
        assert (v["outcome"], v["cause"]) == ("unknown", "healthy"), prefix


def test_your_numbers_look_good_outranks_the_recipe_and_the_protocol_explained(tmp_path):
    """Before: succeeded/metric_policy (V18d, from the same maintainer's explanation of evaluation modes).
    Without the verdict, the protocol explained decides again."""
    case = report_case("b34-07")
    params = read_context_file(case / "context.txt")
    assert stated_cause(params)[0] == "healthy"
    v = report_verdict(case)
    # the owner's judgement of the numbers also clears the run by V19d (succeeded: a figure is stated)
    assert v["cause"] == "healthy" and v["outcome"] in ("unknown", "succeeded"), v
    ctx = edited_context(case, tmp_path, "Your numbers look good. I have the same numbers.", "")
    assert report_verdict(case, ctx)["cause"] == "metric_policy"


def test_ram_exhausted_then_fixed_with_swap_is_an_infra_crash(tmp_path):
    """Before: unknown/infra_runtime ('the issue was caused when the RAM had been exhausted' was read as a
    condition, and 'Killed96160' not as a kill)."""
    case = report_case("b33-10")
    v = report_verdict(case)
    assert (v["outcome"], v["cause"]) == ("crashed", "infra_runtime")
    assert "RAM had been exhausted" in v["summary"]


def test_more_ram_that_did_the_job_implies_the_run_crashed_of_memory(tmp_path):
    """b31-05: 'Indeed, increasing the RAM did the job' after a training that stops with 'killed'. Before:
    unknown/healthy (the maintainer's 'the loss looks fine', the reporter's confirmation not read). A fix
    that gave the loader shared memory is no memory exhaustion."""
    case = report_case("b31-05")
    v = report_verdict(case)
    assert (v["rule"], v["outcome"], v["cause"]) == ("V00", "crashed", "infra_runtime")
    ctx = edited_context(
        case, tmp_path, "increasing the RAM did the job", "increasing the shared memory did the job"
    )
    # the quoted 'killed' states the kill on its own (statements._KILLED): taken out too
    ctx.write_text(ctx.read_text().replace("it shows 'killed' and does", "it does"))
    assert report_verdict(case, ctx)["outcome"] != "crashed"


def test_an_expected_slowness_on_an_hdd_is_the_machines_input_side(tmp_path):
    """Before: running/healthy (V20a, from 'The training time is expected to be much longer if you are
    using a HDD'). An 'expected' that names no input side still clears the run."""
    case = report_case("b34-09")
    v = report_verdict(case)
    assert (v["rule"], v["outcome"], v["cause"]) == ("V18b", "slow", "infra_runtime")
    ctx = edited_context(
        case,
        tmp_path,
        "The training time is expected to be much longer if you are using a HDD.",
        "The training time you see is expected.",
    )
    assert report_verdict(case, ctx)["cause"] == "healthy"


def test_a_setting_stated_against_the_references_value_is_the_gap_reason(tmp_path):
    """b34-03: 'a 4-GPU machine will yield a bn batch size of 12 instead of 24'. Before:
    succeeded/metric_policy (V18d's second reading, the two figures on test-dev and minival taken for one
    model measured two ways). Without the sentence, that reading decides again."""
    case = report_case("b34-03")
    v = report_verdict(case)
    assert (v["rule"], v["outcome"], v["cause"]) == ("V18e", "succeeded", "data_config")
    ctx = edited_context(
        case,
        tmp_path,
        "so a 4-GPU machine will yield a bn batch size of 12 instead of 24 which will severely harm the "
        "performance",
        "so it matters",
    )
    assert report_verdict(case, ctx)["cause"] == "metric_policy"


def test_one_released_model_scored_with_another_threshold_is_the_evaluation():
    """b33-06: 'The model with 27.18 mAP is precisely the same model we provided in the repo ... we used 0.5
    as the threshold for object detection scores'. Before: unknown/inconclusive."""
    lines = [ln for ln in (report_case("b33-06") / "context.txt").read_text().splitlines() if ln]
    lines += (report_case("b33-06") / "report.log").read_text().splitlines()
    params = read_context_file(report_case("b33-06") / "context.txt")
    got = evaluation_explains_gap(lines, params)
    assert got is not None and "same model" in got[1]
    v = report_verdict(report_case("b33-06"))
    assert (v["rule"], v["outcome"], v["cause"]) == ("V18d", "succeeded", "metric_policy")


def test_an_accuracy_set_by_hand_is_expected_because_it_measures_nothing(tmp_path):
    """b33-05: 'it is normal, i manuall set accuracy to 0.5'. Before: running/healthy (V20a). A plain 'it
    is normal' still clears the run."""
    case = report_case("b33-05")
    v = report_verdict(case)
    assert (v["rule"], v["cause"]) == ("V20a", "metric_policy")
    ctx = edited_context(case, tmp_path, "i manuall set accuracy to 0.5, ", "")
    assert report_verdict(case, ctx)["cause"] == "healthy"


def test_a_reference_averaged_over_seeds_against_one_run_is_seed_spread(tmp_path):
    """b32-08 (GAT): 'the value reported in the paper is averaged after training 100 times (with different
    random seeds)' against a released single run. Before: succeeded/metric_policy (V18d)."""
    case = report_case("b32-08")
    v = report_verdict(case)
    assert (v["outcome"], v["cause"]) == ("unknown", "healthy")
    ctx = edited_context(
        case,
        tmp_path,
        "averaged after training 100 times (with different random seeds)",
        "different",
    )
    assert read_context_file(ctx) and stated_cause(read_context_file(ctx)) is None
