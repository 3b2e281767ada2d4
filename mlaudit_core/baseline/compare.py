"""The comparison of one run with its baselines, computed once per audit and cached on the run.

Baselines travel with the run in ``run.cache`` (a per-audit memo that is never
serialised), so the baseline detectors (``BL001``-``BL004``) read them like any
other input and are skipped with a reason when there are none.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..roles import Role, is_higher_better, parse_name
from ..rundata import RunData
from ..signal import fmt
from .band import BandResult, align, compare_band

BASELINES = "mlaudit.baselines"
EMITTED = "mlaudit.baselines.emitted"
_MEMO = "mlaudit.baselines.metrics"

LEARNING_ROLES = (Role.VAL_LOSS, Role.VAL_ACCURACY, Role.TRAIN_LOSS, Role.TRAIN_ACCURACY)
PERF_ROLES = (Role.STEP_TIME, Role.THROUGHPUT, Role.DATA_TIME)
_HIB_ROLES = {Role.VAL_ACCURACY, Role.TRAIN_ACCURACY, Role.THROUGHPUT}


def attach_baselines(run: RunData, baselines: Sequence[RunData]) -> None:
    """Make ``baselines`` the run's baselines for this audit (replaces earlier ones)."""
    run.cache[BASELINES] = list(baselines)
    for key in (_MEMO, EMITTED, "mlaudit.baselines.deltas", "mlaudit.claims.checked"):
        run.cache.pop(key, None)


def baselines_of(run: RunData) -> list[RunData]:
    return list(run.cache.get(BASELINES) or [])


@dataclass
class MetricComparison:
    """One metric of the run judged against the baselines that logged it."""

    key: str
    role: str | None
    kind: str  # "learning" | "performance"
    is_loss: bool
    baseline_ids: list[str]
    axis: str
    band: BandResult
    #: the range every logged value of the metric (run and baselines) lies in, bounds the band is shown
    #: within: ``(0, None)`` when none is negative, ``(0, 1)`` for an accuracy/score logged as a fraction
    value_range: tuple[float | None, float | None] = (None, None)
    #: the baselines' display names (their run names), in ``baseline_ids`` order
    baseline_names: tuple[str, ...] = ()

    def _band_text(self) -> str:
        """``lo..hi`` of the band, each end held within :attr:`value_range` (a band of mean +- k
        spreads can pass 0 for a loss or 1 for an accuracy; no run can end there)."""
        lo, hi = self.band.band_lo, self.band.band_hi
        rlo, rhi = self.value_range
        if rlo is not None:
            lo, hi = max(lo, rlo), max(hi, rlo)
        if rhi is not None:
            lo, hi = min(lo, rhi), min(hi, rhi)
        return f"{fmt(lo)}..{fmt(hi)}"

    def _baselines_text(self) -> str:
        """``N baseline(s)``, with the baselines' names when three or fewer are named."""
        n = self.band.n_baselines
        names = [x for x in self.baseline_names if x]
        if names and len(names) <= 3:
            return f"{n} baseline(s) ({', '.join(names)})"
        return f"{n} baseline(s)"

    def _beyond_tail_band(self) -> bool:
        """Whether the run's tail mean is outside the band of the baselines' tail means (while the
        share of tail points is measured against the per-point band, which can be wider)."""
        b = self.band
        return not (b.band_lo <= b.run_tail_mean <= b.band_hi)

    def summary(self) -> str:
        b = self.band
        word = {
            "worse": "worse than",
            "better": "better than",
            "within_noise": "within the noise of",
            "insufficient_seeds": "not enough seeds to tell against",
        }[b.verdict]
        if b.verdict == "insufficient_seeds" and (b.delta > 0) == b.higher_is_better and b.delta:
            # a candidate on the better side of the baselines' mean: the open question is whether the
            # gain is real, not whether it regressed
            word = "no worse than (better on average; not enough seeds to tell whether the gain is real)"
        rel = f"{fmt(100 * b.rel_delta, 3)}%" if b.rel_delta is not None else "n/a"
        z = f", {fmt(b.z, 3)} std" if b.z is not None else ""
        return (
            f"{self.key} {word} {self._baselines_text()}: tail mean {fmt(b.run_tail_mean)} vs "
            f"{fmt(sum(b.baseline_tail_means) / len(b.baseline_tail_means))} (band {self._band_text()}, "
            f"{b.method}) over steps {b.tail_start_step}-{b.tail_end_step}"
            + (f" (aligned by {self.axis})" if self.axis != "step" else "")
            + f"; delta {rel}{z}; {fmt(100 * (b.frac_tail_better if b.verdict == 'better' else b.frac_tail_worse), 3)}"
            + f"% of tail points beyond {'the per-point band' if self._beyond_tail_band() else 'the band'}"
            + (
                " (the tail mean is beyond the band of the baselines' tail means, but fewer than half "
                "of its points are beyond the band drawn per evaluation, so the gap is not counted)"
                if self._beyond_tail_band() and b.verdict not in ("worse", "better")
                else ""
            )
            + (
                f"; about {b.seeds_needed} seeds would tell whether this gap is real"
                if b.verdict == "insufficient_seeds" and b.seeds_needed
                else "; at least 3 seeds are needed for a seed-to-seed estimate"
                if b.verdict == "insufficient_seeds"
                else ""
            )
        )


def _pairs(run: RunData, baselines: Sequence[RunData], roles: Sequence[Role], extra: Sequence[str]):
    """(label key, role, run key, [(baseline, its key)]) for each role/extra key the run logs."""
    out: list[tuple[str, Role | None, str, list[tuple[RunData, str | None]]]] = []
    covered: set[str] = set()
    for role in roles:
        rk = run.key_for(role)
        if rk is None or not run.has(role):
            continue
        bk = [(b, b.key_for(role)) for b in baselines]
        bk = [(b, k) for b, k in bk if k is not None and b.has(role)]
        if bk:
            out.append((rk, role, rk, bk))
            covered.add(rk)
    for k in extra:
        if k in covered or k not in run.metrics:
            continue
        bk = [(b, k) for b in baselines if k in b.metrics]
        if bk:
            out.append((k, None, k, bk))
    return out


def _extra_learning_keys(run: RunData, baselines: Sequence[RunData], limit: int = 8) -> list[str]:
    """Accuracy-like or loss-like keys logged by the run and every baseline, beyond the roles."""
    common = set(run.metrics.keys)
    for b in baselines:
        common &= set(b.metrics.keys)
    keys = [
        k
        for k in sorted(common)
        if not k.lower().startswith("system")
        and parse_name(k).family in ("loss", "error", "acc", "score")
    ]
    return keys[:limit]


def _value_range(
    run: RunData, key: str, bk: Sequence[tuple[RunData, str | None]], role: Role | None
) -> tuple[float | None, float | None]:
    """The bounds every finite logged value of ``key`` (the run) and of the baselines' keys lies in:
    0 below when none is negative; 1 above too for an accuracy or score (by role or name) whose
    values all lie in [0, 1]. ``(None, None)`` without finite values."""
    vals = [run.series(key).finite().values] + [
        b.series(k).finite().values for b, k in bk if k is not None and k in b.metrics
    ]
    lo = min((float(v.min()) for v in vals if v.size), default=None)
    hi = max((float(v.max()) for v in vals if v.size), default=None)
    if lo is None or hi is None or lo < 0:
        return (None, None)
    fraction = role in (Role.VAL_ACCURACY, Role.TRAIN_ACCURACY) or (
        role is None and parse_name(key).family in ("acc", "score")
    )
    return (0.0, 1.0 if fraction and hi <= 1.0 else None)


def compare_metrics(
    run: RunData,
    k: float = 2.0,
    tail_frac: float = 0.2,
    min_outside: float = 0.5,
    metrics: Sequence[str] = (),
    by_data_seen: bool = True,
) -> list[MetricComparison]:
    """Compare every learning and performance metric of ``run`` with its attached baselines.

    Args:
        run: a run with baselines attached (:func:`attach_baselines`).
        k, tail_frac, min_outside: band parameters (see :mod:`.band`).
        metrics: extra metric keys to compare besides the roles.
        by_data_seen: align by tokens/samples seen when all runs log a counter.

    Returns:
        One comparison per metric that the run and at least one baseline share
        over at least two aligned points. Memoised per parameter set.
    """
    memo_key = (k, tail_frac, min_outside, tuple(metrics), by_data_seen)
    memo = run.cache.setdefault(_MEMO, {})
    if memo_key in memo:
        return memo[memo_key]
    bls = baselines_of(run)
    out: list[MetricComparison] = []
    extra = list(metrics) + _extra_learning_keys(run, bls)
    for kind, roles, ex in (("learning", LEARNING_ROLES, extra), ("performance", PERF_ROLES, ())):
        for label, role, rk, bk in _pairs(run, bls, roles, ex):
            al = align(run, rk, [b for b, _ in bk], [key for _, key in bk], by_data_seen)
            if al is None:
                continue
            hib = role in _HIB_ROLES if role is not None else is_higher_better(rk)
            band = compare_band(al, hib, k=k, tail_frac=tail_frac, min_outside=min_outside)
            is_loss = (role in (Role.TRAIN_LOSS, Role.VAL_LOSS)) or (
                role is None and "loss" in rk.lower()
            )
            out.append(
                MetricComparison(
                    label,
                    role.value if role else None,
                    kind,
                    is_loss,
                    [b.identity.id for b, _ in bk],
                    al.axis,
                    band,
                    _value_range(run, rk, bk, role),
                    tuple(b.identity.name or b.identity.id for b, _ in bk),
                )
            )
    memo[memo_key] = out
    return out


def latest_comparisons(run: RunData) -> list[MetricComparison]:
    """The comparisons BL001 computed for this audit (its parameters), else computed with the defaults."""
    memo = run.cache.get(_MEMO) or {}
    if memo:
        return next(iter(memo.values()))
    return compare_metrics(run)
