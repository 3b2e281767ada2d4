"""verdict.evidence ``excerpt``: a pasted text whose last line is where the reporter's paste ends, not
where the run ended, so a shortfall of the plan there is no evidence of a stop.

Real input, public failure reports of tests/data/reports, read as ``benchmarks/diagnosis_eval.py`` reads
them (``mlaudit logs FILE --config context.txt``): b17-01 (LLaVA LoRA, HF Trainer loss dicts around step
2566 of 10485, a ``[...]`` line, then step 2588: the reporter pasted the spikes), b20-02 (the PyTorch
transfer-learning tutorial's first two of 25 epochs pasted in a pull request whose thread never says the
run stopped). Both were crashed/inconclusive ('stopped before its planned end'). b19-04's thread says
nothing of a stop either, but its traceback decides (a crash is read from the text, not from its end).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mlaudit.cli import app
from mlaudit_core.audit import audit
from mlaudit_core.formats import load_path
from mlaudit_core.formats.consolelog.context import read_context_file
from mlaudit_core.verdict.evidence import ending
from mlaudit_core.verdict.statements import is_report, stated_stop

REPORTS = Path(__file__).resolve().parent / "data" / "reports"


def _case(prefix: str) -> Path:
    (case,) = REPORTS.glob(prefix + "*")
    return case


def _verdict(prefix: str) -> dict:
    case = _case(prefix)
    args = ["logs", *map(str, sorted(case.glob("*.log"))), "--config", str(case / "context.txt")]
    res = CliRunner().invoke(app, [*args, "--format", "json"])
    return json.loads(res.stdout)["verdict"]


def test_an_elision_mark_makes_the_text_an_excerpt_not_a_stopped_run():
    ((_, run),) = load_path(_case("b17-01-") / "train.log").runs
    e = ending(run, audit(run).findings)
    assert e.short and e.excerpt is not None and "train.log:27 ([...])" in e.excerpt
    assert not e.stopped
    v = _verdict("b17-01-")
    assert v["outcome"] != "crashed", v["summary"]


def test_a_report_whose_thread_never_says_the_run_stopped_is_an_excerpt():
    case = _case("b20-02-")
    params = read_context_file(case / "context.txt")
    assert is_report(params) and stated_stop(params) is None
    v = _verdict("b20-02-")
    assert v["outcome"] == "running", v["summary"]


@pytest.mark.parametrize(
    ("prefix", "said"),
    [
        ("b19-08-", "crashes with a latent shape mismatch"),
        ("b18-10-", "at 30 minutes it always errors out"),
    ],
)
def test_stated_stop_reads_a_sentence_that_says_the_run_stopped(prefix, said):
    params = read_context_file(_case(prefix) / "context.txt")
    got = stated_stop(params)
    assert got is not None and said in got, got


@pytest.mark.parametrize(
    "said",
    [
        "training breaks at epoch 3",
        "it does not continue after epoch 2",
        "the run ends at epoch 5 without any error",
        "the process was killed",
    ],
)
def test_stated_stop_reads_a_stop_told_with_other_verbs_or_a_negation(said):
    assert stated_stop({"reporter someone": said}) is not None
    assert stated_stop({"reporter someone": "Is it killed? I get 0 accuracy"}) is None
