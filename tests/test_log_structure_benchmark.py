"""benchmarks/log_structure.py at toy size, and its matching rule on made-up cases (issue 26).

The toy run scores a few hand-made keys (with leave-one-framework-out) in a subprocess and checks
that the figures are printed and well-formed: fractions in [0, 1], as many hit counts as the keys
hold at most. No figure is asserted to reach its target here: that is the benchmark's measurement
(docs/logs.md), not a unit test. The matching-rule tests pin what counts as the same triple.
"""

from __future__ import annotations

import importlib.util
import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "benchmarks" / "log_structure.py"
KEYS = REPO / "benchmarks" / "log_structure_key"


def _bench():
    spec = importlib.util.spec_from_file_location("log_structure", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["log_structure"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_log_structure_benchmark_at_toy_size(tmp_path):
    out_json = tmp_path / "figures.json"
    p = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--only",
            "keras,xgboost",
            "--limit",
            "4",
            "--json",
            str(out_json),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=REPO,
    )
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    assert re.search(
        r"^all 4 logs, \d frameworks: precision \d\.\d{3}, recall \d\.\d{3}", p.stdout, re.M
    ), p.stdout
    assert "leave-one-framework-out: recall" in p.stdout
    figures = json.loads(out_json.read_text())
    assert len(figures["logs"]) == 4
    for row in figures["logs"].values():
        assert 0 <= row["hits"] <= min(row["key"], row["read"]) or row["key"] == 0
        assert 0.0 <= row["precision"] <= 1.0 and 0.0 <= row["recall"] <= 1.0
    for fw, row in figures["frameworks"].items():
        assert fw in ("keras", "xgboost")
        assert 0.0 <= row["lofo_recall"] <= 1.0 and 0.0 <= row["lofo_precision"] <= 1.0
        assert isinstance(row["removed"], list)
    total = figures["overall"]
    assert total["key"] == sum(r["key"] for r in figures["logs"].values()) > 0


def test_every_key_names_a_log_that_exists_and_holds_triples():
    keys = sorted(KEYS.glob("*.json"))
    assert len(keys) >= 40, len(keys)
    for k in keys:
        d = json.loads(k.read_text())
        assert (REPO / d["log"]).is_file(), (k.name, d["log"])
        assert d["framework"] and d["note"], k.name
        for t in d["triples"]:
            assert (
                len(t) == 3
                and (t[0] is None or isinstance(t[0], (int, float)))
                and isinstance(t[1], str)
            ), (k.name, t)
            assert t[2] == "nan" or isinstance(t[2], (int, float)), (k.name, t)


@pytest.mark.parametrize(
    ("printed", "reader"),
    [
        ("val_loss", "val/loss"),
        ("valid's binary_logloss", "val/binary_logloss"),
        ("train-logloss", "train/logloss"),
        ("Acc@1", "train/top1"),
        ("eval_accuracy", "val/accuracy"),
        ("test_acc", "val/accuracy"),
        ("learning_rate", "train/lr"),
        ("train_loss_step", "train/loss"),
        ("validation_0-logloss", "val/set_0_logloss"),
        ("gnorm", "train/grad_norm"),
    ],
)
def test_normalise_takes_a_printed_name_and_the_reader_name_as_the_same(printed, reader):
    bench = _bench()
    assert bench.normalise(printed) == bench.normalise(reader)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("val_loss", "train/loss"),
        ("validation_0-logloss", "validation_1-logloss"),
        ("train_loss_epoch", "train/loss"),
        ("loss", "lm_loss_estimate"),
    ],
)
def test_normalise_keeps_different_figures_apart(a, b):
    bench = _bench()
    assert bench.normalise(a) != bench.normalise(b)


def test_out_of_scope_is_timings_rates_memory_and_counters_only():
    bench = _bench()
    for name in (
        "perf/step_time",
        "train/epoch",
        "eta",
        "wps",
        "max mem",
        "tokens_per_second_per_gpu",
        "train/optimizer_step",
        "number of skipped iterations",
    ):
        assert bench.out_of_scope(bench.normalise(name)), name
    for name in ("loss", "val_acc", "lr", "grad_norm", "loss_scale", "valid's auc", "Logit Scale"):
        assert not bench.out_of_scope(bench.normalise(name)), name


def test_score_counts_a_consistent_step_axis_and_not_a_wrong_value():
    bench = _bench()
    key = {"train/loss": [(1.0, 0.5), (2.0, 0.4), (3.0, 0.3)]}
    # the reader counts steps where the key has epochs (100 steps an epoch): the same triples
    s, _ = bench.score(key, {"train/loss": [(100.0, 0.5), (200.0, 0.4), (300.0, 0.3)]})
    assert (s.hits, s.key, s.read) == (3, 3, 3)
    # a wrong value and an extra point: one miss, one false point
    s, _ = bench.score(key, {"train/loss": [(1.0, 0.5), (2.0, 0.41), (3.0, 0.3), (4.0, 0.2)]})
    assert (s.hits, s.key, s.read) == (2, 3, 4)
    assert s.precision == 0.5 and s.recall == pytest.approx(2 / 3)
    # values on a scrambled axis are not the same triples
    s, _ = bench.score(key, {"train/loss": [(3.0, 0.5), (7.0, 0.4), (8.0, 0.3)]})
    assert s.hits == 2
    # NaN is a value like any other; percent and fraction are one figure
    s, _ = bench.score(
        {"val/accuracy": [(1.0, 98.2)], "train/loss": [(1.0, math.nan)]},
        {"val/accuracy": [(1.0, 0.982)], "train/loss": [(1.0, math.nan)]},
    )
    assert (s.hits, s.key, s.read) == (2, 2, 2)
