"""The baseline noise band with few seeds: Student-t prediction interval, "not enough seeds".

The false "worse" simulation of benchmarks/baseline_and_ci.py runs here at toy size (same
code path, fewer runs), so the benchmark cannot rot.
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from mlaudit_core.baseline.band import (
    INSUFFICIENT,
    Aligned,
    compare_band,
    seeds_needed,
    t_quantile,
)

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "baseline_and_ci.py"


def _bench():
    spec = importlib.util.spec_from_file_location("baseline_and_ci_bench", BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _al(run, base):
    run = np.asarray(run, float)
    x = np.arange(1, run.size + 1, dtype=float)
    return Aligned("step", x, x.astype(np.int64), run, np.asarray(base, float))


def test_t_multiplier_is_the_prediction_interval_for_one_new_seed():
    # mean +- t(0.975, n-1) * sd * sqrt(1 + 1/n) at k = 1.96 (95%)
    for n in (3, 5, 10):
        assert t_quantile(n, 1.959963984540054) == pytest.approx(
            stats.t.ppf(0.975, n - 1) * math.sqrt(1 + 1 / n), rel=1e-9
        )


def test_student_t_two_sided_matches_scipy_for_every_df_and_coverage():
    """The package's own Student-t quantile (scipy is a dev dependency only) against scipy."""
    from mlaudit_core.baseline.band import student_t_two_sided

    for df in range(1, 301):
        for cov in (0.3829, 0.6827, 0.95, 0.9545, 0.9973, 0.99994):
            want = stats.t.ppf(0.5 + cov / 2, df)
            assert student_t_two_sided(cov, df) == pytest.approx(want, rel=1e-10), (df, cov)
    with pytest.raises(ValueError):
        student_t_two_sided(1.0, 3)
    with pytest.raises(ValueError):
        student_t_two_sided(0.95, 0)


def test_three_seeds_band_is_the_t_interval_of_the_tail_means():
    rng = np.random.default_rng(0)
    base = 1.0 + np.array([[0.00], [0.02], [-0.01]]) + 0.001 * rng.standard_normal((3, 50))
    res = compare_band(_al(np.full(50, 1.0), base), higher_is_better=False, tail_frac=0.2)
    tails = base[:, 40:].mean(axis=1)
    half = (
        stats.t.ppf(0.5 + math.erf(2 / math.sqrt(2)) / 2, 2) * tails.std(ddof=1) * math.sqrt(4 / 3)
    )
    assert res.band_hi == pytest.approx(tails.mean() + half, rel=1e-9)
    assert res.method.startswith("t-prediction-interval") and res.verdict == "within_noise"


def test_one_or_two_baselines_say_not_enough_seeds_with_how_many_needed():
    rng = np.random.default_rng(1)
    base = 1.0 + 0.002 * rng.standard_normal((1, 60))
    res = compare_band(_al(1.02 + 0.002 * rng.standard_normal(60), base), higher_is_better=False)
    assert res.verdict == INSUFFICIENT
    assert res.seeds_needed is not None and res.seeds_needed >= 3
    assert any("not enough seeds to tell" in n for n in res.notes)


def test_a_huge_gap_is_worse_even_with_one_baseline():
    rng = np.random.default_rng(2)
    base = 1.0 + 0.002 * rng.standard_normal((1, 60))
    res = compare_band(_al(1.5 + 0.002 * rng.standard_normal(60), base), higher_is_better=False)
    assert res.verdict == "worse"  # 50% above, far beyond 10x the within-run noise and 5%


def test_seeds_needed_shrinks_with_the_gap():
    assert seeds_needed(1.0, 0.1) == 3
    assert seeds_needed(0.3, 0.1) > seeds_needed(0.6, 0.1)
    assert seeds_needed(0.01, 0.1) is None  # not resolvable with 50 seeds


def test_benchmark_false_worse_rate_at_most_5_percent_toy_size(capsys):
    rates = _bench().bench_false_worse(trials=150)
    out = capsys.readouterr().out
    assert "n=1:" in out and "n=10:" in out
    for n in (1, 2, 3, 5, 10):
        assert rates[(0.02, n)] <= 0.05, (n, rates[(0.02, n)])
