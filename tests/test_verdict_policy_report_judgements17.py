"""Reports whose thread judges the run in words, read from real failure reports (tests/data/reports):

* verdict.stated_figures._OWNER_JUDGED (V19d through owner_attests_match): the reference's owner judges the
  gap, the result or the reporter's procedure with an approving predicate (``the performance difference is
  very minor``, ``I think it is acceptable``, ``you are doing the training correctly``): healthy (b43-03,
  b43-05, and b10-16's ``the 0.02 is negligible``);
* verdict.statements.unasserted: a sentence that asks (a question mark, or an auxiliary verb before its
  subject) or announces an investigation (``I will rerun the experiments to see if ...``) confirms no cause
  and no fix, by its mood, in every reading of the thread (b44-04, b40-01)."""

from __future__ import annotations

from report_helpers import edited_context, report_case, report_verdict

from mlaudit_core.formats.consolelog.context import read_context_file
from mlaudit_core.verdict.stated_figures import owner_attests_match
from mlaudit_core.verdict.statements import confirmed_fix, stated_cause, unasserted


def test_owner_judging_the_gap_or_the_procedure_clears_the_run():
    """b43-03 (DuRN: 'I think it is acceptable in this sense') and b43-05 (facenet: 'you are doing the
    training correctly ... the performance difference is very minor'), two repositories; before:
    unknown/inconclusive ('no metric was logged at all')."""
    for prefix in ("b43-03", "b43-05"):
        params = read_context_file(report_case(prefix) / "context.txt")
        assert owner_attests_match(dict(params)) is not None, prefix
        v = report_verdict(report_case(prefix))
        assert (v["rule"], v["cause"]) == ("V19d", "healthy"), prefix
        assert v["outcome"] in ("succeeded", "unknown"), prefix


def test_the_judgement_sentence_decides(tmp_path):
    """b43-05 with the maintainer's judgement turned into a doubt abstains again."""
    case = report_case("b43-05")
    ctx = edited_context(
        case,
        tmp_path,
        "It looks like you are doing the training correctly. Also, the performance difference is very minor.",
        "I am not sure the performance difference is minor.",
    )
    assert report_verdict(case, ctx)["cause"] != "healthy"


def test_a_judgement_denied_asked_or_of_a_statement_is_no_match():
    for said in (
        "The difference is not minor.",
        "Is the difference minor?",
        "That is correct, the bug is in the data loader.",
        "Your result looks fine but the loss is NaN.",
        "The gap between the two is mostly due to the test-time flip.",
    ):
        assert owner_attests_match({"maintainer A": said}) is None, said
    # the reporter's own judgement is a hope, not the owner's attestation
    assert owner_attests_match({"reporter B": "I think the difference is minor."}) is None
    assert owner_attests_match({"author C": "Well, I think the 0.02 is negligible."}) is not None


def test_questions_and_planned_investigations_are_unasserted():
    for s in (
        "Did lowering the learning rate help?",
        "Could you try a smaller batch size",
        "I will rerun the experiments to see if there is something wrong with the latest commit",
        "Let me check the config on my side.",
        "We'll look into the data loader.",
    ):
        assert unasserted(s), s
    for s in (
        "I found the problem, it's because the learning rate decrease too early.",
        "I will fix it in the next release.",
        "Lowering the learning rate fixed it.",
        "This is caused by the 1 ms timeout you set.",
    ):
        assert not unasserted(s), s


def test_a_planned_rerun_names_no_cause_the_later_finding_does():
    """b44-04 (DoReFa-Net): 'I will rerun the experiments to see if there is something wrong with the
    latest commit' was read as a code defect (before: unknown/correctness_bug); the maintainer's later
    finding, the learning rate decayed too early, is the cause."""
    case = report_case("b44-04")
    got = stated_cause(read_context_file(case / "context.txt"))
    assert got is not None and got[0] == "learning_rate" and "found the problem" in got[1]
    v = report_verdict(case)
    assert v["cause"] == "model_convergence", v["summary"]


def test_a_question_is_no_confirmed_fix():
    """b40-01 (EmoVoice): the maintainer's 'Did lowering the learning rate help?' was read as the
    confirmed fix (before: unknown/model_convergence)."""
    params = read_context_file(report_case("b40-01") / "context.txt")
    got = confirmed_fix(params)
    assert got is None or got[0] != "learning_rate", got
    assert report_verdict(report_case("b40-01"))["cause"] != "model_convergence"


def test_the_most_likely_reason_is_the_speakers_explanation():
    """b44-03 (ACAR-Net): 'the most possible reason is that setting batch size per GPU to be larger than 1
    has negative effect on our method' is the maintainer's chosen explanation, a setting (before:
    unknown/inconclusive); 'a possible reason' stays a guess."""
    from mlaudit_core.verdict.resolution import thread_resolution

    case = report_case("b44-03")
    got = thread_resolution(read_context_file(case / "context.txt"))
    assert got is not None and got[0] == "config" and "most possible reason" in got[1]
    v = report_verdict(case)
    assert (v["outcome"], v["cause"]) == ("unknown", "data_config"), v["summary"]
    guess = {"maintainer A": "A possible reason is that the batch size per GPU is larger than 1."}
    assert thread_resolution(guess) is None


def test_memory_growth_stated_without_an_ending_is_a_leak_while_running():
    """b44-06 (packnet-sfm): 'memory usage is growing slowly (from 21G to 38G in one epoch)', no kill or
    out-of-memory (before: unknown/inconclusive): V01b's leak before it ends the run."""
    v = report_verdict(report_case("b44-06"))
    assert (v["rule"], v["outcome"], v["cause"]) == ("V19k", "running", "correctness_bug"), v


def test_memory_growth_with_a_kill_stays_v01b_and_capacity_clears_it(tmp_path):
    """b22-01 (growth that levels off, killed) keeps its infra reading; b44-06 with the growth put down to
    the job's size is no leak."""
    assert report_verdict(report_case("b22-01"))["cause"] == "infra_runtime"
    case = report_case("b44-06")
    ctx = edited_context(
        case,
        tmp_path,
        'maintainer VitorGuizilini-TRI: "You are right',
        'maintainer VitorGuizilini-TRI: "The entire dataset does not fit into RAM, it is cached as it is '
        "read. You are right",
    )
    assert report_verdict(case, ctx)["cause"] != "correctness_bug"


def test_a_nan_explained_by_the_finder_takes_the_settled_cause(tmp_path):
    """b40-07 (OpenVLA LoRA): 'train_loss: nan' and the reporter's closing 'I found that the problem is
    caused by loading wrong pre-training weights' (an input: data_config; before: model_convergence by
    V07). Without the finding the default reading comes back."""
    case = report_case("b40-07")
    v = report_verdict(case)
    assert (v["rule"], v["outcome"], v["cause"]) == ("V00b", "diverged", "data_config"), v
    text = (case / "context.txt").read_text()
    old = next(line for line in text.splitlines() if "I found that the problem is caused" in line)
    ctx = edited_context(case, tmp_path, old, "")
    assert report_verdict(case, ctx)["cause"] != "data_config"


def test_a_confirmed_fix_in_prose_takes_the_outcome_the_reporter_states():
    """b43-07 (WaveGrad): 'i had NaN loss issue' at lr 1e-3, the fix a smaller lr (before:
    unknown/model_convergence: the outcome was left unknown with the symptom stated); b28-02's NaN is of the
    validation loss only and stays unknown; b12-12's stated oscillation gives plateaued."""
    v = report_verdict(report_case("b43-07"))
    assert (v["rule"], v["outcome"], v["cause"]) == ("V00b", "diverged", "model_convergence"), v
    assert report_verdict(report_case("b28-02"))["outcome"] == "unknown"
    assert report_verdict(report_case("b12-12"))["outcome"] == "plateaued"


def test_a_learning_rate_named_with_the_runs_scale_is_the_recipe_when_nothing_diverged():
    """b41-07 (YOLOF on 2 GPUs with the 8-GPU settings) and b32-07 (EfficientFormer, fixed lr with LR
    scaling disabled, 8x128 against the paper's 24x128): the learning rate named with the GPU count or the
    batch is the recipe not carried over to the run's scale (before: unknown/model_convergence for both).
    A NaN under the same words stays the update size's (b26-03: lower the lr for fewer than 8 GPUs)."""
    from mlaudit_core.verdict.statements import lr_scaled_to_run

    for prefix in ("b41-07", "b32-07"):
        v = report_verdict(report_case(prefix))
        assert (v["outcome"], v["cause"]) == ("unknown", "data_config"), (prefix, v["summary"])
    assert report_verdict(report_case("b26-03"))["cause"] == "model_convergence"
    assert lr_scaled_to_run("maintainer A: with 2 GPUs you should lower the learning rate")
    assert not lr_scaled_to_run("maintainer A: lower the learning rate")
    # the key that introduces a sentence is not the sentence
    assert not lr_scaled_to_run(
        "after the run with lr x4: use warmup after increasing the batch size"
    )
