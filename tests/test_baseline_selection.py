"""Baseline selection policy, delta ranking and the band rule, as pure functions over RunData."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np

from mlaudit_core import MetricTable, RunData, RunIdentity, RunStatus
from mlaudit_core.baseline import BaselinePolicy, config_matches, find_deltas, select_baselines
from mlaudit_core.baseline.band import Aligned, compare_band

T0 = datetime(2026, 5, 1, tzinfo=timezone.utc)


def run(
    rid,
    *,
    params=None,
    tags=None,
    env=None,
    status=RunStatus.FINISHED,
    project="exp",
    hours=0,
    parent=None,
):
    return RunData(
        RunIdentity("test", rid, rid, project=project),
        status=status,
        params=dict(params or {}),
        tags=dict(tags or {}),
        environment=dict(env or {}),
        end_time=T0 + timedelta(hours=hours),
        parent_id=parent,
    )


CFG = {"lr": "0.001", "batch_size": "64", "seed": "0"}


def test_explicit_ids_win_and_missing_ones_are_reported():
    me = run("me", params=CFG)
    cands = [
        run("a", params=CFG),
        run("b", params=CFG, status=RunStatus.FAILED),
        run("c", params=CFG),
    ]
    sel = select_baselines(me, cands, BaselinePolicy(explicit=["b", "zz"]))
    assert sel.rule == "explicit" and [r.identity.id for r in sel.runs] == ["b"]
    assert any("zz" in w for w in sel.warnings) and any("b is failed" in w for w in sel.warnings)


def test_tagged_runs_before_parent_and_same_config():
    me = run("me", params=CFG, parent="p")
    cands = [
        run("p", params=CFG),
        run("t1", params={"lr": "9"}, tags={"mlaudit.baseline": "true"}, hours=1),
        run("t2", params=CFG, tags={"mlaudit.baseline": "yes"}, hours=2),
        run("t3", tags={"mlaudit.baseline": "true"}, status=RunStatus.KILLED),
    ]
    sel = select_baselines(me, cands)
    assert sel.rule == "tagged" and [r.identity.id for r in sel.runs] == ["t2", "t1"]


def test_parent_when_nothing_is_tagged():
    me = run("me", params=CFG, parent="p")
    sel = select_baselines(me, [run("p", params={"lr": "1"}), run("x", params=CFG)])
    assert sel.rule == "parent" and sel.runs[0].identity.id == "p"


def test_same_config_except_seed_most_recent_first_capped():
    me = run("me", params=CFG)
    cands = [
        run(f"s{i}", params=dict(CFG, seed=str(i), run_name=f"r{i}"), hours=i) for i in range(1, 8)
    ]
    cands += [
        run("other-lr", params=dict(CFG, lr="0.01")),
        run("other-exp", params=CFG, project="x"),
        run("crashed", params=CFG, status=RunStatus.FAILED, hours=99),
        run("me", params=CFG),
    ]
    sel = select_baselines(me, cands, BaselinePolicy(max_runs=3))
    assert sel.rule == "same_config"
    assert [r.identity.id for r in sel.runs] == ["s7", "s6", "s5"]


def test_config_match_is_numeric_aware_and_strict_on_missing_keys():
    assert config_matches(
        run("a", params={"lr": "1e-3", "seed": "1"}), run("b", params={"lr": "0.001", "seed": "2"})
    )
    assert not config_matches(
        run("a", params={"lr": "1e-3"}), run("b", params={"lr": "1e-3", "wd": "0.1"})
    )


def test_nothing_qualifies():
    sel = select_baselines(run("me", params=CFG), [run("x", params={"lr": "5"})])
    assert sel.rule == "none" and sel.runs == []


def test_deltas_ranked_by_likely_effect():
    base = [
        run(
            f"b{i}",
            params={
                "lr": "0.001",
                "batch_size": "64",
                "dataset_hash": "abc",
                "seed": str(i),
                "output_dir": f"/out/{i}",
            },
            env={"torch": "2.3.0", "host": f"node{i}", "git_commit": "1111"},
        )
        for i in range(3)
    ]
    me = run(
        "me",
        params={
            "lr": "0.01",
            "batch_size": "64",
            "dataset_hash": "def",
            "seed": "9",
            "output_dir": "/out/me",
        },
        env={"torch": "2.4.0", "host": "node9", "git_commit": "2222"},
    )
    d = find_deltas(me, base)
    keys = [x.key for x in d]
    assert set(keys[:2]) == {"dataset_hash", "lr"}  # data and a 10x learning-rate change lead
    assert "seed" not in keys and "output_dir" not in keys
    by = {x.key: x for x in d}
    assert by["torch"].category == "packages" and by["git_commit"].layer == "unlocalised"
    assert (
        not by["host"].consistent and by["host"].score < by["torch"].score
    )  # baselines differ on host
    assert by["lr"].score > by["torch"].score
    small = find_deltas(
        run("me2", params={"lr": "0.0011", "batch_size": "64", "dataset_hash": "def"}), base
    )
    assert [x.key for x in small][:2] == [
        "dataset_hash",
        "lr",
    ]  # a 10% LR change ranks below a data change


def test_metric_invariants_are_compared():
    def r(rid, rows):
        return RunData(
            RunIdentity("test", rid),
            metrics=MetricTable(
                ["data/num_rows", "train/loss", "train/loss"], [0, 1, 2], [rows, 2.0, 1.0]
            ),
        )

    d = find_deltas(r("me", 45000), [r("b1", 50000), r("b2", 50000)])
    assert [(x.key, x.run_value, x.layer) for x in d] == [("data/num_rows", "45000", "source")]


def _aligned(run_vals, base_vals):
    x = np.arange(1, len(run_vals) + 1, dtype=float)
    return Aligned(
        "step", x, x.astype(np.int64), np.asarray(run_vals, float), np.asarray(base_vals, float)
    )


def test_one_bad_point_in_the_tail_is_not_a_regression():
    base = np.array(
        [
            [1.0, 0.8, 0.6, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5],
            [1.0, 0.8, 0.6, 0.5, 0.51, 0.5, 0.49, 0.5, 0.5, 0.5],
            [1.0, 0.8, 0.6, 0.5, 0.5, 0.49, 0.5, 0.51, 0.5, 0.5],
        ]
    )
    one_spike = [1.0, 0.8, 0.6, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.9]
    assert (
        compare_band(_aligned(one_spike, base), higher_is_better=False, tail_frac=0.5).verdict
        == "within_noise"
    )
    shifted = [1.0, 0.8, 0.6, 0.5, 0.56, 0.57, 0.56, 0.57, 0.56, 0.57]
    res = compare_band(_aligned(shifted, base), higher_is_better=False, tail_frac=0.5)
    assert res.verdict == "worse" and res.frac_tail_worse == 1.0 and res.onset_step == 5


def test_direction_for_accuracy():
    base = np.array([[0.5, 0.8, 0.9, 0.9], [0.5, 0.8, 0.9, 0.91], [0.5, 0.81, 0.9, 0.9]])
    assert (
        compare_band(_aligned([0.5, 0.8, 0.95, 0.96], base), higher_is_better=True).verdict
        == "better"
    )
    assert (
        compare_band(_aligned([0.5, 0.7, 0.8, 0.8], base), higher_is_better=True).verdict == "worse"
    )
