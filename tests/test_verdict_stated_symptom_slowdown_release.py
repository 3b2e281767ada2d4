"""verdict.stated_symptom (a loss blow-up with the adverb first, a slowdown stated as a factor,
stated_version_change) and verdict.policy._slowdown_with_release on real reports (tests/data/reports):

* b46-07 (DiffIR): "the PSNR only reached around 26 for the first 20,000 iterations, but then the loss
  sharply increased and the PSNR dropped to around 5". Before: unknown/inconclusive (only "the loss rises
  sharply", verb first, was read). Now diverged, model_convergence (the usual cause; the label's).
* b48-05 (FSRS-rs): the reporter's sentences ("the training slows down 2~3x" after "upgrading from 0.12.1
  to 0.13.0", "5x slower in the benchmark") sit in ``# `` annotation lines of its context, which no reader
  takes; written as ``reporter:`` lines (the form of the older batches) they read slow, and the release
  change names the cause: a performance regression in the new release's code, correctness_bug (as the
  label, and as b18-08 and b32-06, both fixed by a code change).
* b18-08 (scvi-tools, "way slower when upgrading to 1.2.1 as compared to 1.2.0") without the maintainer's
  lines: before infra_runtime (a slowdown's usual cause), now correctness_bug from the release change.
"""

from __future__ import annotations

from report_helpers import report_case, report_verdict

from mlaudit_core.verdict.stated_symptom import stated_symptom, stated_version_change


def test_a_loss_that_sharply_increased_is_a_divergence():
    v = report_verdict(report_case("b46-07"))
    assert (v["rule"], v["outcome"], v["cause"]) == ("V19k", "diverged", "model_convergence")
    assert "loss sharply increased" in v["summary"]
    # the verb first was read before; a loss that 'sharply' did anything else is no blow-up
    assert stated_symptom(["then the loss increased sharply"])[0] == "diverged"
    assert stated_symptom(["then the loss sharply decreased"]) is None


def test_a_slowdown_factor_beside_a_release_change_is_a_regression_in_code(tmp_path):
    case = report_case("b48-05")
    lines = (case / "context.txt").read_text().splitlines()
    ctx = tmp_path / "context.txt"
    ctx.write_text("\n".join(ln[2:] if ln.startswith("# reporter") else ln for ln in lines))
    v = report_verdict(case, ctx)
    assert (v["rule"], v["outcome"], v["cause"]) == ("V19k", "slow", "correctness_bug"), v[
        "summary"
    ]
    assert "0.12.1 -> 0.13.0" in v["summary"]
    # as the thread's quoted lines (``# reporter: ...``, read as the reporter's sentences by
    # formats/consolelog/context._COMMENTED_SPEAKER) they give the same verdict
    v = report_verdict(case)
    assert (v["rule"], v["outcome"], v["cause"]) == ("V19k", "slow", "correctness_bug"), v[
        "summary"
    ]
    # a factor of 1.2 is within the jitter of a shared machine; a setting's value is no release
    assert stated_symptom(["reporter: it is 1.2x slower now"]) is None
    assert stated_version_change(["reporter: I updated the lr to 0.001 and it is slower"]) is None


def test_a_slowdown_after_an_upgrade_without_the_thread_is_the_release(tmp_path):
    case = report_case("b18-08")
    lines = (case / "context.txt").read_text().splitlines()
    ctx = tmp_path / "context.txt"
    ctx.write_text("\n".join(ln for ln in lines if not ln.startswith("maintainer")))
    v = report_verdict(case, ctx)
    assert (v["outcome"], v["cause"]) == ("slow", "correctness_bug"), v["summary"]
    assert "upgrading to 1.2.1" in v["summary"]
