"""Timing-only pastes judged from their timing (verdict.policy V18 `_slow`, SY002 stalls, SY008 growth).

Real reports of tests/data/reports, run as ``benchmarks/diagnosis_eval.py`` runs them (``mlaudit logs
FILE --config context.txt``):

* b2-14: three Megatron lines, ``elapsed time per iteration (ms)`` 84606 -> 142474 -> 202438 at
  iterations 10/15/20 of 600: a time per iteration that rises at every interval is a per-step cost
  the code accumulates (slow, correctness_bug), and the paste ending at iteration 20 is not a crash;
* b5-11: ``load_data_time: 19.6173`` beside 0.64-0.69 s steps: a batch that waited for data 30x the
  step (slow, infra_runtime); the console reader gives each ``key: value`` record its own step;
* b2-13: nnU-Net epoch times that swing 2.4x stay slow, infra_runtime (the machine, not the code).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mlaudit.cli import app
from mlaudit_core.formats import load_path

REPORTS = Path(__file__).resolve().parent / "data" / "reports"


def _case(prefix: str) -> Path:
    (case,) = REPORTS.glob(prefix + "*")
    return case


def _verdict(prefix: str) -> dict:
    case = _case(prefix)
    args = ["logs", *map(str, sorted(case.glob("*.log")))]
    for cfg in sorted(case.glob("*.txt")):
        args += ["--config", str(cfg)]
    res = CliRunner().invoke(app, [*args, "--format", "json"])
    return json.loads(res.stdout)["verdict"]


@pytest.mark.parametrize(
    ("prefix", "cause"),
    [("b2-14-", "correctness_bug"), ("b5-11-", "infra_runtime"), ("b2-13-", "infra_runtime")],
)
def test_timing_pastes_are_slow(prefix, cause):
    v = _verdict(prefix)
    assert (v["outcome"], v["cause"]) == ("slow", cause), v["summary"]


def test_key_value_records_without_a_step_each_get_their_own_step():
    """b5-11's lines hold no step; each record is the next one, so the 19.6 s wait is a point of its own."""
    loaded = load_path(_case("b5-11-") / "train.log")
    run = loaded.runs[0][1]
    s = run.series("train/load_data_time")
    assert len(set(s.steps.tolist())) == len(s) >= 5
    assert max(s.by_step().values) > 19


OLMO = (
    Path(__file__).resolve().parent
    / "data/realworld/runs/AntonioLopardo--OLMo/checkpoints/OLMo-1B-grad-provenance-1000/train.log"
)


def test_multi_line_records_keep_one_step_per_record_and_thousands_separators():
    """OLMo prints one ``name=value`` line per metric under each ``[step=N/M]`` header: the lines of
    one block share a step (a new step only when a metric repeats), ``Perplexity=9,097`` is 9097,
    and ``CrossEntropyLoss`` (one word once lower-cased) is the training loss (own corpus f6b3-03)."""
    from mlaudit_core.roles import Role

    run = load_path(OLMO).runs[0][1]
    ce = run.series("train/crossentropyloss")
    ppl = run.series("train/ppl")
    assert len(set(ce.steps.tolist())) == len(ce) and ce.steps.tolist() == ppl.steps.tolist()
    assert 1000 < float(ppl.values[0]) < 10_000
    assert run.key_for(Role.TRAIN_LOSS) == "train/crossentropyloss"


def test_one_record_whose_step_waits_for_data_is_input_bound():
    """b9-04: MetricLogger's one record at iteration 200, ``time: 40.1906  data: 38.0570``: 95% of the
    step waits for data (SY002 on fewer than 3 records, past start-up, a wait of seconds)."""
    v = _verdict("b9-04-")
    assert (v["outcome"], v["cause"]) == ("slow", "infra_runtime"), v["summary"]
