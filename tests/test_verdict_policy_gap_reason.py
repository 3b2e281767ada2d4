"""V18e (verdict.gap_reasons.stated_gap_reason): a report compares its run with a reference and the thread
states why they differ; the cause is what that sentence names. Real reports b13-13 (NNKGReasoning: the author
says the run was not trained long enough, 30k of the paper's 450k steps) and b12-02 (OpenVPRLab: the
maintainer says the yaml's out_channels is 512, the default, where the paper uses 1024), through the CLI as a
user runs them; and sentences that state nothing (a question, a hedge, a negation, the reporter's guess)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mlaudit.cli import app
from mlaudit_core.verdict.gap_reasons import stated_gap_reason

REPORTS = Path(__file__).resolve().parent / "data" / "reports"


def _verdict(pattern: str) -> dict:
    (case,) = REPORTS.glob(pattern)
    args = ["logs", *map(str, sorted(case.glob("*.log"))), "--config", str(case / "context.txt")]
    return json.loads(CliRunner().invoke(app, [*args, "--format", "json"]).stdout)["verdict"]


@pytest.mark.parametrize(
    ("pattern", "want", "said"),
    [
        ("b13-13-*", ("underfit", "model_convergence"), "not trained the models long enough"),
        ("b12-02-*", ("succeeded", "data_config"), "initialized to 512"),
        # a setting named as the mismatch, without its value: the batch size in the released
        # hyper-parameters (DC-GMM), the configuration's images per batch (RankSortLoss), a flag of the
        # training script (MeViS); each was unknown/inconclusive before
        ("b21-01-*", ("succeeded", "data_config"), "mismatch with the hyper-parameters"),
        ("b21-10-*", ("succeeded", "data_config"), "mismatch with our configuration"),
        ("b22-09-*", ("succeeded", "data_config"), "lies in the parameter --freeze_text_encoder"),
        # the training script's default is not the reference's setup ('Swin unable to reach 90%')
        ("b23-04-*", ("succeeded", "data_config"), "not using randomaug as default"),
    ],
)
def test_the_thread_states_why_the_run_differs_from_the_reference(pattern, want, said):
    v = _verdict(pattern)
    assert (v["outcome"], v["cause"]) == want, v["summary"]
    assert said in v["summary"]


_COMPARE = {"reporter": "I get MRR 9.6 but the paper reports 12.4."}


@pytest.mark.parametrize(
    "said",
    [
        "Have you trained the models long enough?",
        "Maybe you have not trained the models long enough.",
        "It is because the yaml file you used sets out_channels to 512?",
        "It is not because of the config: out_channels is 1024 as the paper uses 1024.",
        "Is there a mismatch with the hyper-parameters?",
        "Maybe there is a mismatch with the hyper-parameters.",
        "There is no mismatch with the hyper-parameters.",
    ],
)
def test_a_question_a_hedge_or_a_negation_states_no_reason(said):
    assert stated_gap_reason(list(_COMPARE.values()), {**_COMPARE, "maintainer NAME": said}) is None


def test_the_reporters_own_guess_is_not_the_threads_reason():
    params = {**_COMPARE, "reporter (later)": "I have not trained the models long enough."}
    assert stated_gap_reason(list(_COMPARE.values()), params) is None


@pytest.mark.parametrize(
    ("pattern", "said"),
    [
        # the figure's aggregation defined; a maintainer line under a long key (a PR title with '...'); the
        # paper measured under a benchmark's own setting
        ("b14-07-*", "row 12 is the mean over the first 12 steps"),
        ("b9-07-*", "use_07_metric=True"),
        ("b18-06-*", "benchmark setting"),
    ],
)
def test_the_thread_names_how_the_reference_was_measured(pattern, said):
    """V18d on real reports b14-07 (PDFormer: row 12 of the table is the 12-step average the paper quotes),
    b9-07 (ChainerCV: the reported mAP needs the evaluation preset and the VOC07 metric) and b18-06 (Moirai:
    the paper's ETTh1 figures follow the LSF benchmark setting, normalised with the train split's
    statistics): the gap is the comparison, not the run."""
    v = _verdict(pattern)
    assert (v["outcome"], v["cause"]) == ("succeeded", "metric_policy"), v["summary"]
    assert said in v["summary"]
