"""Trajectory alignment and the baseline noise band (pure numpy).

A run is compared with its baselines on a common axis: the optimizer step, or
the tokens / samples seen when every run logs such a counter (runs with
different batch sizes are only comparable by data seen). Baseline values are
linearly interpolated onto the run's own points inside the range all series
cover; nothing is extrapolated.

The band at each aligned point (and for the tail means) is:

* three or more baselines: the Student-t **prediction interval for one new
  seed**, ``mean +- t(0.975, n-1) * sd * sqrt(1 + 1/n)`` (sd with ddof=1;
  :func:`student_t_two_sided`), widened to include every baseline seed. This is the
  interval a run from the same distribution as its baselines falls in 95% of
  the time (two-sided) whatever ``n``; a ``mean +- 2 sd`` band is far too narrow
  with 3-5 seeds (the issue's simulation: 12% false "worse" with 3 baselines).
  ``k`` is then the coverage expressed in normal standard deviations
  (``k`` = 1.96 -> 95%); the default 2.0 maps to 95.4%.
* one or two baselines: no seed-to-seed estimate exists (two seeds give one
  degree of freedom), so the verdict is ``insufficient_seeds`` ("not enough
  seeds to tell", INFO) **unless** the tail gap exceeds both
  :data:`LARGE_MULTIPLE` x the within-run noise (robust step-to-step scatter
  of the baseline tail points) and :data:`LARGE_REL` of the baseline tail mean,
  and lies beyond every baseline on that side. The report says how many seeds
  would be needed (:func:`seeds_needed`).

Verdict on the tail window (the last ``tail_frac`` of the aligned axis):
*worse* when the run's tail mean lies beyond the tail band on the bad side
**and** at least ``min_outside`` of the run's tail points lie beyond the
per-point band on that side; *better* symmetrically; otherwise *within noise*.
Both conditions must hold so that one bad evaluation does not make a
regression, and a shifted mean made of points inside the band does not either.

The false "worse" rate of this rule on runs drawn from the same distribution
as their baselines is printed by ``benchmarks/baseline_and_ci.py`` for 1, 2, 3,
5 and 10 baselines (at most 5% for each; see docs/baselines.md).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..rundata import RunData, Series

#: With 1-2 baselines, a gap counts only beyond this many within-run noise sds ...
LARGE_MULTIPLE = 10.0
#: ... and beyond this share of the baseline tail mean (5%: Megatron-LM's own ApproximateTest
#: tolerance for timing and memory; a seed change alone rarely moves a final loss that much).
LARGE_REL = 0.05
#: verdict with fewer than 3 baselines and a gap that is not large
INSUFFICIENT = "insufficient_seeds"


def _coverage(k: float) -> float:
    """Two-sided normal coverage of +-k sd (k=2 -> 0.954)."""
    return math.erf(k / math.sqrt(2))


@functools.lru_cache(maxsize=256)
def t_quantile(n: int, k: float = 2.0) -> float:
    """The Student-t multiplier of the prediction interval for one new seed from ``n`` baselines:
    ``t(q, n-1) * sqrt(1 + 1/n)`` with ``q`` the upper quantile of the coverage of +-``k`` sd."""
    return student_t_two_sided(_coverage(k), n - 1) * math.sqrt(1 + 1 / n)


def _t_within(x: float, df: int) -> float:
    """``P(|T| <= x)`` for Student's t with an integer ``df >= 1``: the closed forms of Abramowitz
    & Stegun (1964), 26.7.3 (odd ``df``) and 26.7.4 (even ``df``), with ``theta = atan(x/sqrt(df))``.
    """
    theta = math.atan(x / math.sqrt(df))
    s, c2 = math.sin(theta), math.cos(theta) ** 2
    if df % 2 == 0:  # sin(theta) * (1 + 1/2 c^2 + 1*3/(2*4) c^4 + ... up to c^(df-2))
        term, total = 1.0, 1.0
        for j in range(1, df // 2):
            term *= c2 * (2 * j - 1) / (2 * j)
            total += term
        return s * total
    if df == 1:
        return 2 * theta / math.pi
    term, total = 1.0, 1.0  # 2/pi (theta + sin cos (1 + 2/3 c^2 + 2*4/(3*5) c^4 + ... c^(df-3)))
    for j in range(1, (df - 1) // 2):
        term *= c2 * (2 * j) / (2 * j + 1)
        total += term
    return 2 / math.pi * (theta + s * math.cos(theta) * total)


@functools.lru_cache(maxsize=512)
def student_t_two_sided(coverage: float, df: int) -> float:
    """The ``x`` with ``P(|T| <= x) = coverage`` for Student's t with ``df`` degrees of freedom
    (``t.ppf(0.5 + coverage / 2, df)``).

    The exact finite-sum CDF (:func:`_t_within`) inverted by bisection to double precision:
    this is the one Student-t call of the package, and computing it here keeps scipy out of
    the required dependencies. Checked against ``scipy.stats.t.ppf`` to 1e-10
    relative for df 1-300 (tests/test_baseline_band.py).

    Args:
        coverage: in (0, 1).
        df: an integer >= 1.

    Raises:
        ValueError: for a coverage outside (0, 1) or ``df < 1``.
    """
    if not 0 < coverage < 1 or df < 1:
        raise ValueError(f"need 0 < coverage < 1 and df >= 1, got {coverage}, {df}")
    lo, hi = 0.0, 1.0
    while _t_within(hi, df) < coverage:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        if _t_within(mid, df) < coverage:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def seeds_needed(gap: float, sd: float, k: float = 2.0, cap: int = 50) -> int | None:
    """Smallest ``n >= 3`` whose prediction interval half-width ``t_quantile(n) * sd`` is below
    ``|gap|``; ``None`` when even ``cap`` seeds would not resolve it (or sd is unknown)."""
    if not (sd > 0) or not math.isfinite(sd) or not math.isfinite(gap):
        return None
    for n in range(3, cap + 1):
        if t_quantile(n, k) * sd < abs(gap):
            return n
    return None


#: Keys that count tokens or samples seen (normalised: lower case, separators as ``_``).
_DATA_SEEN = re.compile(
    r"(^|_)(consumed_(tokens|samples)|tokens_seen|samples_seen|num_tokens_seen|"
    r"num_input_tokens_seen|total_tokens|train_tokens|seen_tokens|seen_samples)$"
)


def _norm(key: str) -> str:
    return re.sub(r"[\s\-./:]+", "_", key.strip().lower()).strip("_")


def data_seen_key(run: RunData) -> str | None:
    """The logged key counting tokens or samples seen (e.g. ``consumed_tokens``), or ``None``."""
    hits = sorted(k for k in run.metrics.keys if _DATA_SEEN.search(_norm(k)))
    return hits[0] if hits else None


@dataclass
class Aligned:
    """One metric of a run and its baselines on a common axis.

    Attributes:
        axis: ``"step"`` or the name of the tokens/samples key used.
        x: axis values, shape (m,), increasing.
        steps: the run's step at each point, shape (m,).
        run: the run's values, shape (m,).
        baselines: baseline values interpolated at ``x``, shape (n, m).
    """

    axis: str
    x: np.ndarray
    steps: np.ndarray
    run: np.ndarray
    baselines: np.ndarray


def _to_axis(
    run: RunData, s: Series, counter: str | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(axis values, metric values, steps) for a by-step finite series, mapped through ``counter``.

    Sorted by axis value; points outside the counter's logged step range are dropped.
    """
    if counter is None:
        return s.steps.astype(float), s.values, s.steps
    c = run.metrics.series(counter).by_step().finite()
    if len(c) < 2:
        return None
    inside = (s.steps >= c.steps[0]) & (s.steps <= c.steps[-1])
    x = np.interp(s.steps[inside].astype(float), c.steps.astype(float), c.values)
    order = np.argsort(x, kind="stable")
    return x[order], s.values[inside][order], s.steps[inside][order]


def align(
    run: RunData,
    key: str,
    baselines: Sequence[RunData],
    base_keys: Sequence[str],
    by_data_seen: bool = True,
) -> Aligned | None:
    """Align ``key`` of ``run`` with ``base_keys[i]`` of ``baselines[i]``.

    Args:
        run: the run under audit.
        key: its metric key.
        baselines: the baseline runs (one or more).
        base_keys: the matching key in each baseline (same length as ``baselines``).
        by_data_seen: align by tokens/samples seen when every run logs such a counter.

    Returns:
        The aligned values, or ``None`` when the series share fewer than 2 points
        of the axis.
    """
    runs = (run, *baselines)
    counters = [data_seen_key(r) for r in runs]
    use_counter = by_data_seen and all(counters)
    keys = (key, *base_keys)
    mapped = []
    for r, k, c in zip(runs, keys, counters):
        m = _to_axis(r, r.metrics.series(k).by_step().finite(), c if use_counter else None)
        if m is None or len(m[0]) < 2:
            return None
        mapped.append(m)
    lo = max(x[0] for x, _, _ in mapped)
    hi = min(x[-1] for x, _, _ in mapped)
    rx, rv, rs = mapped[0]
    inside = (rx >= lo) & (rx <= hi)
    if inside.sum() < 2:
        return None
    x = rx[inside]
    base = np.vstack([np.interp(x, bx, bv) for bx, bv, _ in mapped[1:]])
    return Aligned(
        (counters[0] or "step") if use_counter else "step",
        x,
        rs[inside].astype(np.int64),
        rv[inside],
        base,
    )


@dataclass
class BandResult:
    """Where a run sits relative to its baselines' noise band, with the figures behind it.

    All values are in the metric's own units; ``rel_delta`` is relative to the
    baseline tail mean; ``z`` is the delta in baseline tail standard deviations
    (``None`` with fewer than 3 baselines).
    """

    verdict: str  # "worse" | "within_noise" | "better" | "insufficient_seeds"
    method: str
    n_baselines: int
    k: float
    tail_start_step: int
    tail_end_step: int
    run_tail_mean: float
    baseline_tail_means: list[float]
    band_lo: float
    band_hi: float
    delta: float
    rel_delta: float | None
    z: float | None
    frac_tail_worse: float
    frac_tail_better: float
    frac_all_worse: float
    onset_step: int | None
    higher_is_better: bool
    notes: list[str] = field(default_factory=list)
    #: with fewer than 3 baselines: seeds that would resolve a gap of this size (None: unknown)
    seeds_needed: int | None = None
    within_run_noise: float | None = None

    def figures(self) -> dict[str, float | int | str | None]:
        return {
            "run_tail_mean": self.run_tail_mean,
            "band_lo": self.band_lo,
            "band_hi": self.band_hi,
            "baseline_mean": float(np.mean(self.baseline_tail_means)),
            "delta": self.delta,
            "rel_delta": self.rel_delta,
            "z": self.z,
            "frac_tail_outside": self.frac_tail_worse
            if self.verdict != "better"
            else self.frac_tail_better,
        }


def _scatter(v: np.ndarray) -> float:
    """Step-to-step noise of a series: robust std of first differences / sqrt(2)."""
    if v.size < 3:
        return 0.0
    d = np.diff(v)
    mad = np.median(np.abs(d - np.median(d)))
    return float(1.4826 * mad / np.sqrt(2))


def point_band(base: np.ndarray, k: float) -> tuple[np.ndarray, np.ndarray, str]:
    """Per-point band from baseline values of shape (n, m): (lo, hi, method).

    The per-point band only decides which tail points count as "beyond the band" (a
    consistency check against one bad evaluation); the decision itself is on the tail means
    (see :func:`compare_band`). With 3 or more baselines it is mean +- ``k`` sd widened to
    every seed; with 1-2 their min/max widened by the large-gap floor.
    """
    mn, mx = base.min(axis=0), base.max(axis=0)
    n = base.shape[0]
    if n >= 3:
        mu, sd = base.mean(axis=0), base.std(axis=0, ddof=1)
        return (
            np.minimum(mu - k * sd, mn),
            np.maximum(mu + k * sd, mx),
            f"t-prediction-interval({100 * _coverage(k):.3g}%, n={n})",
        )
    floor = LARGE_MULTIPLE * np.array([_scatter(b) for b in base]).max()
    mu = base.mean(axis=0)
    floor = np.maximum(floor, LARGE_REL * np.abs(mu))
    return (
        mn - floor,
        mx + floor,
        f"minmax+max({LARGE_MULTIPLE:g}x-within-run-noise,{LARGE_REL:g}-rel)",
    )


def compare_band(
    al: Aligned,
    higher_is_better: bool,
    k: float = 2.0,
    tail_frac: float = 0.2,
    min_outside: float = 0.5,
) -> BandResult:
    """Judge the aligned run against the band. See the module docstring for the rule.

    Args:
        al: the aligned series.
        higher_is_better: direction of the metric (accuracy: True, loss: False).
        k: band half-width in standard deviations (default 2: ~95% two-sided).
        tail_frac: share of the aligned axis judged as the "end of training" (default 0.2).
        min_outside: share of tail points that must lie beyond the band (default 0.5).
    """
    t0 = al.x[0] + (1 - tail_frac) * (al.x[-1] - al.x[0])
    tail = al.x >= t0
    if tail.sum() < 1:
        tail[-1] = True
    n = al.baselines.shape[0]
    lo, hi, method = point_band(al.baselines, k)
    run_tail = float(al.run[tail].mean())
    base_tail = al.baselines[:, tail].mean(axis=1)
    notes: list[str] = []
    needed = None
    noise = None
    if n >= 3:
        mu, sd = float(base_tail.mean()), float(base_tail.std(ddof=1))
        m = t_quantile(n, k)
        t_lo, t_hi = (
            min(mu - m * sd, float(base_tail.min())),
            max(mu + m * sd, float(base_tail.max())),
        )
        z = (run_tail - mu) / sd if sd > 0 else None
    else:
        mu = float(base_tail.mean())
        noise = max(_scatter(b[tail]) for b in al.baselines)
        floor = max(LARGE_MULTIPLE * noise, LARGE_REL * abs(mu))
        t_lo, t_hi = float(base_tail.min()) - floor, float(base_tail.max()) + floor
        z = None
        seed_sd = float(base_tail.std(ddof=1)) if n == 2 else noise
        needed = seeds_needed(run_tail - mu, seed_sd, k)
        notes.append(
            f"{n} baseline(s): no seed-to-seed estimate; a gap counts only beyond "
            f"{LARGE_MULTIPLE:g}x the within-run noise and {100 * LARGE_REL:g}% of the baseline"
        )
    worse_pt = al.run < lo if higher_is_better else al.run > hi
    better_pt = al.run > hi if higher_is_better else al.run < lo
    f_worse, f_better = float(worse_pt[tail].mean()), float(better_pt[tail].mean())
    tail_worse = run_tail < t_lo if higher_is_better else run_tail > t_hi
    tail_better = run_tail > t_hi if higher_is_better else run_tail < t_lo
    if tail_worse and f_worse >= min_outside:
        verdict = "worse"
    elif tail_better and f_better >= min_outside:
        verdict = "better"
    elif n < 3:
        verdict = INSUFFICIENT
        notes.append(
            "not enough seeds to tell: "
            + (
                f"about {needed} seeds would resolve a gap of this size"
                + (" (if seeds spread like the within-run noise)" if n == 1 else "")
                if needed
                else "at least 3 baseline seeds are needed for a seed-to-seed estimate"
            )
        )
    else:
        verdict = "within_noise"
    # onset: first point from which the run stays beyond the band on the worse side
    onset = None
    if worse_pt[-1]:
        stays = np.logical_and.accumulate(worse_pt[::-1])[::-1]
        onset = int(al.steps[int(np.argmax(stays))])
    delta = run_tail - mu
    return BandResult(
        verdict=verdict,
        method=method,
        n_baselines=n,
        k=k,
        tail_start_step=int(al.steps[tail][0]),
        tail_end_step=int(al.steps[tail][-1]),
        run_tail_mean=run_tail,
        baseline_tail_means=[float(v) for v in base_tail],
        band_lo=float(t_lo),
        band_hi=float(t_hi),
        delta=float(delta),
        rel_delta=float(delta / abs(mu)) if mu else None,
        z=float(z) if z is not None else None,
        frac_tail_worse=f_worse,
        frac_tail_better=f_better,
        frac_all_worse=float(worse_pt.mean()),
        onset_step=onset,
        higher_is_better=higher_is_better,
        notes=notes,
        seeds_needed=needed,
        within_run_noise=noise,
    )
