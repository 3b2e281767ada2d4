"""mlaudit_core.signal: the numpy rolling medians used without pandas give pandas' figures."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from mlaudit_core import signal


def _series(rng: np.random.Generator, trial: int) -> np.ndarray:
    n = int(rng.integers(1, 300))
    v = rng.normal(size=n)
    if trial % 3 == 0:
        v[rng.random(n) < 0.2] = np.nan
    if trial % 5 == 0:
        v[rng.random(n) < 0.05] = np.inf
    if trial % 11 == 0:
        v[rng.random(n) < 0.05] = -np.inf
    if trial % 7 == 0:
        v = np.round(v, 1)  # ties
    return v


def test_window_median_matches_pandas_rolling_median() -> None:
    rng = np.random.default_rng(0)
    for trial in range(400):
        v = _series(rng, trial)
        w = int(rng.integers(1, 40))
        trailing = pd.Series(v).rolling(w, min_periods=1).median().to_numpy()
        centred = pd.Series(v).rolling(w, min_periods=1, center=True).median().to_numpy()
        np.testing.assert_array_equal(signal._window_median(v, w, w - 1, 1), trailing)
        np.testing.assert_array_equal(signal._window_median(v, w, w // 2, 1), centred)


def test_window_median_chunks_give_the_same_figures(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(1)
    v = rng.normal(size=1000)
    v[::37] = np.nan
    whole = signal._window_median(v, 25, 12, 1)
    monkeypatch.setattr(signal, "_MEDIAN_CHUNK", 7)
    np.testing.assert_array_equal(signal._window_median(v, 25, 12, 1), whole)


def test_robust_z_without_pandas_matches_with_pandas(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(2)
    for trial in range(100):
        v = _series(rng, trial)
        ref = rng.normal(size=v.size)
        w = int(rng.integers(3, 40))
        with_pd = signal.robust_z(v, ref, w)
        rolling, centred = signal.rolling_median(v, w), signal.centered_median(v, w)
        monkeypatch.setattr(signal, "pandas", lambda: None)
        np.testing.assert_array_equal(signal.robust_z(v, ref, w), with_pd)
        np.testing.assert_array_equal(signal.rolling_median(v, w), rolling)
        np.testing.assert_array_equal(signal.centered_median(v, w), centred)
        monkeypatch.undo()


def test_medians_of_an_empty_series_are_empty() -> None:
    assert signal.rolling_median(np.array([]), 5).size == 0
    assert signal.centered_median(np.array([]), 5).size == 0
    assert signal._window_median(np.array([]), 5, 2, 1).size == 0


def test_mann_kendall_z():
    """The Mann-Kendall score: large for a steady rise, negative for a fall, 0 without a trend; the
    normal approximation of S's variance (Kendall 1975) with ties removed from it."""
    from mlaudit_core.signal import mann_kendall_z

    rise = np.arange(30, dtype=float)
    # S = 435 pairs all rising, var = 30*29*65/18 = 3141.67: z = 434 / 56.05
    assert abs(mann_kendall_z(rise) - 434 / np.sqrt(30 * 29 * 65 / 18)) < 1e-9
    assert mann_kendall_z(rise[::-1]) < -7
    assert mann_kendall_z(np.ones(20)) == 0.0
    assert mann_kendall_z(np.array([1.0, 2.0])) == 0.0
    zigzag = np.tile([0.1, 0.3], 20)  # level with scatter: no trend
    assert abs(mann_kendall_z(zigzag)) < 1.645
