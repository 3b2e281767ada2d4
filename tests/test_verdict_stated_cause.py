"""verdict.statements.stated_cause / pasted_nonfinite and the rules that use them (V20's stated cause, V00's
environment, V00b's pasted NaN record, V18c's silenced warning) on real reports (tests/data/reports): the
cause a thread states, classed by the object of its fix or explanation, for reports whose input holds no
judgeable curve."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mlaudit.cli import app
from mlaudit_core.verdict.statements import gate_threshold_fix, pasted_nonfinite, stated_cause

REPORTS = Path(__file__).resolve().parent / "data" / "reports"


def _verdict(prefix: str) -> dict:
    (case,) = REPORTS.glob(f"{prefix}-*")
    args = ["logs", *map(str, sorted(case.glob("*.log")))]
    for cfg in sorted(case.glob("*.txt")):
        args += ["--config", str(cfg)]
    return json.loads(CliRunner().invoke(app, [*args, "--format", "json"]).stdout)["verdict"]


@pytest.mark.parametrize(
    ("prefix", "rule", "outcome", "cause", "said"),
    [
        # the object of a stated cause: the code (before: unknown/inconclusive; b25-06 and b25-10 read as one
        # model scored two ways, succeeded/metric_policy, before the thread's statement of a defect)
        ("b25-06", "V20", "unknown", "correctness_bug", "I found the bug"),
        # (the author's "I have pushed the fix" outranks the reporter's "I found one bug in lines 25-28")
        ("b25-08", "V20", "unknown", "correctness_bug", "I have pushed the fix"),
        ("b17-13", "V20", "unknown", "correctness_bug", "confirmed this issue"),
        # (a training accuracy stated at 0%: below chance, its measurement broken; V19k, outcome unknown)
        (
            "b17-15",
            "V19k",
            "unknown",
            "correctness_bug",
            "traced to the accuracy accumulation line",
        ),
        # a maintainer's acknowledgement that the code must change
        ("b25-10", "V20", "unknown", "correctness_bug", "which needs to be fixed"),
        # a setting, the recipe or the data
        ("b19-03", "V20", "unknown", "data_config", "the problem in the"),
        ("b14-12", "V20", "unknown", "data_config", "`fast_dev_run` should not be passed"),
        ("b25-03", "V20", "unknown", "data_config", "after adjusting dataset_enlarge_ratio"),
        ("b26-05", "V20", "unknown", "data_config", "It was trained with 5 layers"),
        # nothing failed: rerun noise, a figure on another scale, an outdated reference, a loss already good
        ("b25-09", "V20", "unknown", "healthy", "just random noise"),
        ("b25-07", "V20", "unknown", "healthy", "only the scale differs"),
        ("b25-05", "V20", "unknown", "healthy", "old version of the paper"),
        ("b25-02", "V20", "unknown", "healthy", "yours is already very good"),
        ("b22-05", "V20", "unknown", "healthy", "is OK for batch_size"),
        # a crash whose cause the thread states is the shared memory (before: crashed/correctness_bug)
        ("b26-01", "V00", "crashed", "infra_runtime", "caused by lack of shared memory"),
        # a one-line paste with the total loss NaN and a lower learning rate (before: unknown)
        ("b26-03", "V00b", "diverged", "model_convergence", "det_loss_cls_1: nan"),
        # a CI test's warning-as-error silenced as the fix (before: unknown/healthy)
        ("b26-07", "V18c", "unknown", "metric_policy", "ignoring the warning"),
    ],
)
def test_the_cause_a_real_thread_states_decides_a_report_without_a_curve(
    prefix, rule, outcome, cause, said
):
    v = _verdict(prefix)
    assert (v["rule"], v["outcome"], v["cause"]) == (rule, outcome, cause), v["summary"]
    assert said in v["summary"]


def test_a_suggestion_a_guess_or_an_attempt_states_no_cause():
    for said in (
        "Maybe there is something wrong with the dataset?",
        "If you change the batch size, you need to adapt the learning rate.",
        "I tried to change the hyper-parameters and the loss is still nan.",
        "I am wondering whether there is a typo in your table.",
        "It is possible some bugs exist.",
        "There's no bug in the dataloader.",
    ):
        assert stated_cause({"maintainer NAME": said}) is None, said


def test_the_object_of_the_statement_names_the_cause_class():
    def kind(said: str) -> str | None:
        got = stated_cause({"maintainer NAME": said})
        return got[0] if got else None

    assert kind("This is caused by a shared_memory error.") == "environment"
    assert kind("It was due to a bug in the dataloader.") == "code"
    assert kind("I traced it to the loss line, where an int tensor is multiplied.") == "code"
    assert kind("It was caused by the command line I used.") is None
    assert kind("The problem was the docker shm size; with --shm-size=8g it runs.") == "environment"
    assert kind("This is a bug in our evaluation script, fixed in #123.") == "code"
    assert kind("The issue was the wrong num_classes in the config.") == "config"
    assert kind("The difference is within run-to-run variance.") == "healthy"
    assert kind("This is a known issue with CUDA 11.0; use 11.1.") == "environment"
    # a symptom told in the present, or a reporter's own claim of a bug, states no found cause
    assert kind("The problem is that the loss is NaN after 3 epochs.") is None
    assert stated_cause({"reporter": "I think this is a bug in your evaluation script."}) is None
    assert kind("There was a mismatch with the hyper-parameters (namely batch size).") == "config"
    # a value that says nothing failed is not read for the cause of the normal behaviour
    assert kind("That's normal. This is mostly caused by the small batch size used.") == "healthy"
    # the words that nothing failed only count from a maintainer, and not beside a failure
    assert stated_cause({"reporter": "That's normal, I think."}) is None
    assert kind("That's normal for a NaN loss.") is None


def test_a_pasted_record_with_a_nonfinite_total_loss():
    assert pasted_nonfinite(["lr: 1.8e-04, det_loss_cls_1: nan, loss: nan, grad_norm: nan"])
    assert pasted_nonfinite(["(Step: 95400) train_mel_loss_before = nan."])
    # a NaN of another value, or prose, is not a record's loss
    assert pasted_nonfinite(["lr: 1.8e-04, acc: nan, loss: 2.1"]) is None
    assert pasted_nonfinite(["the loss: nan after a while"]) is None


def test_a_silenced_warning_is_a_gate_fix_only_in_a_report_about_a_check():
    said = "Ignoring the warning makes it possible to get this test to pass."
    assert gate_threshold_fix([said]) is not None
    assert gate_threshold_fix(["We silence the ConvergenceWarning in the training script."]) is None


@pytest.mark.parametrize(
    ("prefix", "rule", "outcome", "cause", "said"),
    [
        # the maintainer's word outranks the reporter's workaround, and a maintainer's "Yes" makes the
        # question before it a statement (before: diverged/model_convergence from the NaN alone)
        ("b27-08", "V00b", "diverged", "correctness_bug", "Yes, you are right."),
        # the same "Yes" to the reporter's question whether a recent change is at fault (before: unknown)
        ("b28-05", "V20", "unknown", "correctness_bug", "Yes, I think it is a bug"),
        # a NaN in a pasted record and a cause the thread states (before: diverged/data_config from V03)
        ("b20-01", "V00b", "diverged", "correctness_bug", "the fixed code"),
        # the writer's own mistake found (before: unknown/inconclusive)
        ("b10-13", "V00b", "diverged", "data_config", "order of bounding box"),
        # a call written as code is the code's object (before: unknown/data_config from "the dataset")
        ("b28-01", "V20", "unknown", "correctness_bug", "cv2.resize()"),
        # (and 'the loss suddenly becomes nan', the reporter's symptom: diverged, V19k)
        ("b7-07", "V19k", "diverged", "correctness_bug", "optimizer.step()"),
        # a maintainer's instruction the maintainer confirmed removes the failure (before: unknown)
        ("b27-04", "V00", "unknown", "infra_runtime", "update your nvidia driver"),
        # "It's fine", a negation only in the clause that explains why (before: unknown/inconclusive)
        ("b27-03", "V20", "unknown", "healthy", "It's fine"),
        # "The reason for this is that ...", and only held-out values non-finite: not a training
        # divergence (before: diverged/inconclusive)
        ("b28-02", "V00b", "unknown", "data_config", "The reason for this is that batch size"),
        # "i set X, now it is work, but I don't know if that's right" (before: unknown/inconclusive)
        ("b28-03", "V20", "unknown", "data_config", "now it is work"),
    ],
)
def test_the_resolution_a_real_thread_states_by_its_voice_and_object(
    prefix, rule, outcome, cause, said
):
    v = _verdict(prefix)
    assert (v["rule"], v["outcome"], v["cause"]) == (rule, outcome, cause), v["summary"]
    assert said in v["summary"]


def test_agreement_instruction_and_own_mistake_need_their_whole_form():
    question = {"user NAME": "Is the ratio in the loss function dividing by zero here?"}
    assert stated_cause({**question, "maintainer NAME": "Yes, you are right."}) == (
        "code",
        "maintainer NAME: Yes, you are right. (to user NAME: Is the ratio in the loss function "
        "dividing by zero here?)",
    )
    # an agreement taken back, or one with no question before it, states nothing
    assert stated_cause({**question, "maintainer NAME": "Yes, but not in this case."}) is None
    assert stated_cause({"maintainer NAME": "Yes, you are right."}) is None
    # an instruction nobody confirmed, a finding without an owned mistake, a negated "fine"
    assert stated_cause({"maintainer NAME": "Please update your nvidia driver to 396.26."}) is None
    assert stated_cause({"user NAME": "I found that the loss is nan when batch size is 1."}) is None
    assert stated_cause({"maintainer NAME": "It's not fine, the head is missing."}) is None
    # a call in prose with a space before the bracket is not code
    assert stated_cause({"maintainer NAME": "It was caused by the dataset (or config)."}) == (
        "config",
        "maintainer NAME: It was caused by the dataset (or config).",
    )


def test_a_setting_set_is_a_change_only_with_its_own_improvement():
    def kind(*said: str) -> str | None:
        got = stated_cause({f"reporter ({i})": x for i, x in enumerate(said)})
        return got[0] if got else None

    assert kind("I set the num_workers to be 4 and it worked now!") == "config"
    # the setup told in passing, confirmed by nothing of its own (a later "solved" answers someone else)
    assert (
        kind(
            "I get an error at 35406 steps. I set the num_workers=2.",
            "The problem has been solved!",
        )
        is None
    )
    assert (
        kind("the problem has been solved, the reason is I have a label like an empty string.")
        == "config"
    )


def _thread(prefix: str) -> dict:
    """The params a report folder's logs and context give the audited run (as ``mlaudit logs`` reads them)."""
    from mlaudit_core.evidence import collect

    (case,) = REPORTS.glob(f"{prefix}-*")
    logs = [str(p) for p in sorted(case.glob("*.log"))]
    return dict(
        collect(None, logs, config=sorted(case.glob("*.txt")), value_files=False).run.params
    )


@pytest.mark.parametrize(
    ("prefix", "kind", "said"),
    [
        # the learning rate is the update size (model_convergence), not a setting like the others, and a
        # cause statement's object may come at its sentence's end ("it turns out that the nan comes out
        # because the default learning rate is too large")
        ("b19-06", "learning_rate", "because the default learning rate is too large"),
        ("b23-02", "learning_rate", "found the cause was the learning rate"),
        ("b11-08", "learning_rate", "after I set a smaller learning rate"),
    ],
)
def test_the_object_of_a_real_threads_statement(prefix, kind, said):
    got = stated_cause(_thread(prefix))
    assert got is not None and got[0] == kind and said in got[1], got


def test_fixed_by_turns_out_an_owned_mistake_and_a_warning_to_ignore():
    def kind(key: str, said: str) -> str | None:
        got = stated_cause({key: said})
        return got[0] if got else None

    assert kind("reporter", "Solved by setting num_workers=0.") == "config"
    assert kind("reporter", "I fixed it by converting the labels to long.") == "config"
    assert kind("reporter", "It was not solved by reducing the batch size.") is None
    assert kind("reporter", "Turned out to be a bug in my collate function.") == "code"
    assert kind("reporter", "Turns out the annotations were wrong.") == "config"
    assert kind("reporter", "My bad, the dataset path was wrong.") == "config"
    assert kind("reporter", "Disabling the augmentation fixed it.") == "config"
    assert kind("maintainer NAME", "This warning can be safely ignored.") == "healthy"
    assert kind("maintainer NAME", "You can ignore this warning.") == "healthy"
    assert kind("maintainer NAME", "You cannot ignore this warning.") is None
