"""Reports that compare a result with a paper, a released model or a recipe, read from real failure reports
(tests/data/reports, session 18 round 1):

* formats.consolelog.context._commented_speaker: a context file's ``# reporter: ...`` / ``# maintainer (NAME):
  ...`` comment line is read as that person's sentence (b47-b48 keep the thread that way); a comment that
  describes a file stays a comment;
* verdict.released_eval.released_weights_gap (V18d): an evaluation of released weights, with no training,
  whose figure differs from the published one -> metric_policy (b47-03, b47-04, b48-03);
* verdict.recipe_scale.batch_off_recipe (V18e): a reproduction at a total batch 16x smaller than its
  config's ``8xb64`` with no learning-rate rescaling -> data_config (b48-06);
* verdict.released_eval.metric_against_looks (V18d): renders that look better while the PSNR is lower ->
  metric_policy (b48-02);
* verdict.memory_growth._CAPACITY: the same parameters run fine on a smaller dataset, so the memory that grew
  is the data's size, not a leak (b47-01 stays infra_runtime once its ``# reporter:`` lines are read);
* verdict.statements._EVAL_SIDE: a figure aggregated by averaging (b45-05)."""

from __future__ import annotations

from report_helpers import edited_context, report_case, report_verdict

from mlaudit_core.formats.consolelog.context import parse_context_lines, read_context_file
from mlaudit_core.verdict.recipe_scale import batch_off_recipe
from mlaudit_core.verdict.released_eval import metric_against_looks, released_weights_gap


def _lines(prefix: str) -> tuple[list[str], dict[str, str]]:
    case = report_case(prefix)
    params = read_context_file(case / "context.txt")
    console = [t for p in sorted(case.glob("*.log")) for t in p.read_text().splitlines()]
    return console + [f"{k}: {v}" for k, v in params.items()], params


def test_commented_speaker_lines_are_read():
    """b47-03's thread is in ``# reporter:`` / ``# maintainer (NAME):`` lines; before: no param held it."""
    params = read_context_file(report_case("b47-03") / "context.txt")
    assert "maintainer (duanzhiihao)" in params
    assert params["reporter"].startswith("when I run the evaluation script")
    # a comment that describes a file has no ``role: sentence`` shape and stays a comment
    assert (
        parse_context_lines(['# reporter\'s prose (owner/repo issue #12, "RuntimeError: x")']) == {}
    )


def test_released_weights_scored_apart_from_the_paper_is_the_evaluation():
    """b47-03 (AP 95.9 vs 98.1), b47-04 (FID 14.06 vs 4.02), b48-03 (LC 43.86 vs 44.7): three repositories,
    released weights evaluated without training; before: unknown/inconclusive ('no metric was logged')."""
    for prefix, ref in (("b47-03", 98.1), ("b47-04", 4.02), ("b48-03", 44.7)):
        lines, params = _lines(prefix)
        got = released_weights_gap(lines, params)
        assert got is not None and got.reference == ref, prefix
        v = report_verdict(report_case(prefix))
        assert (v["rule"], v["outcome"], v["cause"]) == ("V18d", "succeeded", "metric_policy"), (
            prefix
        )


def test_a_run_that_trained_is_no_released_evaluation(tmp_path):
    """b47-04 with the reporter fine-tuning the checkpoint: a reproduction, not this reading."""
    case = report_case("b47-04")
    ctx = edited_context(
        case,
        tmp_path,
        "released LSUN-Churches checkpoint (no retraining)",
        "checkpoint I fine-tuned",
    )
    assert report_verdict(case, ctx)["cause"] != "metric_policy"


def test_batch_off_the_recipe_is_another_configuration(tmp_path):
    """b48-06 (MMPose IPR, 8xb64 config run as 4 GPUs x 8): before unknown/inconclusive; with the learning
    rate stated as rescaled the reading does not apply."""
    lines, _ = _lines("b48-06")
    assert batch_off_recipe(lines)[:2] == (512, 32)
    case = report_case("b48-06")
    v = report_verdict(case)
    assert (v["rule"], v["outcome"], v["cause"]) == ("V18e", "succeeded", "data_config")
    ctx = edited_context(
        case, tmp_path, "train_dataloader.num_workers=2 (", "auto_scale_lr.enable=True ("
    )
    assert report_verdict(case, ctx)["cause"] != "data_config"


def test_metric_lower_while_outputs_look_better():
    """b48-02 (nerfstudio: renders look much better with pose refinement, PSNR 15.74 vs 16.43)."""
    lines, _ = _lines("b48-02")
    assert metric_against_looks(lines)[0] == "PSNR"
    v = report_verdict(report_case("b48-02"))
    assert (v["rule"], v["outcome"], v["cause"]) == ("V18d", "succeeded", "metric_policy")


def test_memory_that_follows_the_dataset_size_is_no_leak():
    """b47-01 (bert-nmt: SIGKILL on 25M sentences, 'runs well on a small dataset (4k sentences) with the same
    parameters'): the reporter's 'memory usage continues to increase' does not make it a leak."""
    v = report_verdict(report_case("b47-01"))
    assert (v["outcome"], v["cause"]) == ("crashed", "infra_runtime")


def test_a_figure_aggregated_by_averaging_is_the_evaluation_side():
    """b45-05 (MeshWalker: the maintainer, 'the "accuracy" tab is a fast accuracy calculated while training,
    it is not the final accuracy we get using averaging'): verdict.statements._EVAL_SIDE reads the
    aggregation; before: unknown/inconclusive. Averaging weights (SWA/EMA) is training, not the evaluation."""
    from mlaudit_core.verdict.statements import _EVAL_SIDE

    v = report_verdict(report_case("b45-05"))
    assert (v["rule"], v["outcome"], v["cause"]) == ("V18d", "succeeded", "metric_policy")
    assert _EVAL_SIDE.search("the final accuracy we get using averaging")
    assert not _EVAL_SIDE.search("we get the final model by averaging the weights")
