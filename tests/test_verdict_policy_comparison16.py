"""Reports that compare a run's figure with a paper's or a released model's, read from real failure reports
(tests/data/reports):

* verdict.statements._PROTOCOL and _explains_by_evaluation (V18d): the thread explains the gap by how the
  figure was measured, naming the protocol (test-time flip, the Y channel of YCbCr against RGB, bilinear
  against nearest resampling, decoding with an LSTM language model, 2D against 3D scoring, the resize) and
  how the figure was obtained under it (``tested with``, ``computed on``, ``done with``, ``is applied``):
  metric_policy (b39-03, b39-07, b39-09, b40-04, b40-06, b27-07);
* verdict.policy._EXPECTED_ONLY: a maintainer's "it is normal" beside the protocol explained says the gap is
  expected, it places nothing at the reference's level, so the protocol decides (b39-07, b27-07); "your
  numbers look good" or a reference averaged over seeds still clears the run (b34-07, b32-08);
* verdict.stated_figures._OWNER_MATCHED: the reference's owner saw the same figure (``I also noticed this
  increase in number as well``, ``we have observed the same``) or states that a few repeats reach the
  reference (``about 5 runs should reach the reported result``): healthy (b39-08, b38-10)."""

from __future__ import annotations

from report_helpers import edited_context, report_case, report_verdict

from mlaudit_core.formats.consolelog.context import read_context_file
from mlaudit_core.verdict.stated_figures import owner_attests_match
from mlaudit_core.verdict.statements import _explains_by_evaluation, _sentences


def _maintainer_sentences(prefix: str) -> list[str]:
    params = read_context_file(report_case(prefix) / "context.txt")
    return [
        s for k, v in params.items() if str(k).startswith("maintainer") for s in _sentences(str(v))
    ]


def test_a_protocol_named_with_how_the_figure_was_obtained_explains_the_gap():
    """One sentence per report, from four repositories and two batches: each names a protocol and how the
    reference's figure was obtained under it."""
    for prefix, words in (
        ("b39-03", "Flip=True"),
        ("b39-09", "bilinear interpolation"),
        ("b40-04", "LSTM LM"),
        ("b40-06", "Y channel"),
    ):
        sents = _maintainer_sentences(prefix)
        hits = [s for i, s in enumerate(sents) if _explains_by_evaluation(sents, i)]
        assert hits and words in hits[0], prefix


def test_a_protocol_named_in_a_question_or_denied_explains_nothing():
    for s in (
        "Did you test with flip?",
        "The paper figure was not done with a LM.",
        "We asked whether the Y channel was used.",
        # the training's recipe, not how a figure was measured
        "We used random flip and resize during training.",
        "The LM was trained with a language model objective on our data.",
    ):
        assert not _explains_by_evaluation([s], 0), s


def test_reports_explained_by_the_measurement_protocol_are_metric_policy():
    """Before: unknown/inconclusive for all four ('no metric was logged at all')."""
    for prefix in ("b39-03", "b39-09", "b40-04", "b40-06"):
        v = report_verdict(report_case(prefix))
        assert (v["rule"], v["outcome"], v["cause"]) == ("V18d", "succeeded", "metric_policy"), (
            prefix
        )


def test_the_protocol_sentence_decides_the_verdict(tmp_path):
    """b40-06 without the maintainer's Y-channel sentence abstains again."""
    case = report_case("b40-06")
    ctx = edited_context(case, tmp_path, "We have tested on the  Y channel. ", "")
    assert report_verdict(case, ctx)["cause"] != "metric_policy"


def test_it_is_normal_beside_the_protocol_is_the_protocols_gap(tmp_path):
    """b39-07 (2D range image against 3D points, before: running/healthy by V20a) and b27-07 (the resize,
    before: unknown/healthy): the maintainer's 'normal' says the gap is expected, the protocol is why."""
    for prefix in ("b39-07", "b27-07"):
        v = report_verdict(report_case(prefix))
        assert (v["rule"], v["outcome"], v["cause"]) == ("V18d", "succeeded", "metric_policy"), (
            prefix
        )
    # the same maintainer placing the run at the reference's level instead clears it
    case = report_case("b39-07")
    ctx = edited_context(case, tmp_path, "It is normal.", "Your numbers look good.")
    assert report_verdict(case, ctx)["cause"] == "healthy"


def test_the_owner_who_saw_the_same_figure_clears_the_run():
    """b39-08 (MDEQ: 'I also noticed this increase in number as well ... (but we didn't update the paper)')
    and b38-10 (NP-FKGC: 'we have observed the same ... about 5 runs should reach the reported result').
    Before: unknown/inconclusive."""
    for prefix in ("b39-08", "b38-10"):
        params = read_context_file(report_case(prefix) / "context.txt")
        assert owner_attests_match(dict(params)) is not None, prefix
        v = report_verdict(report_case(prefix))
        assert (v["rule"], v["cause"]) == ("V19d", "healthy"), prefix
        assert v["outcome"] in ("succeeded", "unknown"), prefix


def test_a_turn_outside_parentheses_still_denies_the_owners_match():
    assert (
        owner_attests_match({"maintainer A": "We have observed the same, but your loss is NaN."})
        is None
    )
    assert owner_attests_match({"maintainer A": "I have not seen the same results."}) is None
