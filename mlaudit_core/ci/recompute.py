"""Recompute every gated metric from the raw golden and actual values.

For each metric that has golden values and actual values, on the steps both
logged: absolute error ``|a - g|``, relative error ``|a - g| / |g|`` (0 when both
are 0, inf when only g is 0), their maxima and the step of the maximum, the
mean relative error, the median values and their relative change, and for
every gate that applies to the metric whether it passes, how many steps exceed
its tolerance, how many it allows, and the formula used (see
:mod:`.gates`). A step that is NaN on both sides is not a mismatch (Megatron-LM
turns missing values into ``inf`` on both sides, which compare equal).

Whether a gate is *active* for the job that failed: a Megatron-style list of
checked metrics decides when one was found; otherwise a gate that would fail by
recomputation while the log's "metrics failed" list omits its metric is
deduced inactive; otherwise it is taken as active.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..roles import is_higher_better
from .model import CIContext, Gate, ValueSet, metric_id

#: Megatron-LM's steady-state window for iteration-time (median over these steps).
_STEADY_LONG, _STEADY_SHORT = (30, 45), (5, 20)
_TIMING = ("iteration_time", "iter_time", "step_time", "elapsed", "latency", "time")


@dataclass
class CheckOutcome:
    """One gate applied to one metric."""

    gate: Gate
    passed: bool | None  # None: could not be evaluated (reason in detail)
    n_steps: int = 0
    n_exceed: int = 0
    allowed: int = 0
    worst_step: int | None = None
    detail: str = ""
    active: bool = True
    active_reason: str = ""
    log_failed: bool | None = None
    #: the deviation pattern of a tolerance check (see :func:`analyse`)
    analysis: dict | None = None

    @property
    def tolerance_kind(self) -> str:
        return "exact" if self.gate.kind in ("deterministic", "exact") else self.gate.kind


@dataclass
class Recompute:
    """The recomputed comparison of one metric (figures in the metric's units; rel as fractions)."""

    metric: str
    golden: ValueSet
    actual: ValueSet
    n_golden: int
    n_actual: int
    n_common: int
    golden_steps: tuple[int, int]
    actual_steps: tuple[int, int]
    only_golden: int
    only_actual: int
    max_abs: float
    max_rel: float
    mean_rel: float
    max_rel_step: int | None
    first_step: int | None
    first_rel: float
    early_rel: float
    late_rel: float
    median_golden: float
    median_actual: float
    median_rel_change: float
    nonfinite_actual: int
    checks: list[CheckOutcome] = field(default_factory=list)
    #: the same checks evaluated on the common steps only (what a length-agnostic comparison would say)
    common_checks: list[CheckOutcome] = field(default_factory=list)
    band: dict | None = None
    spread_rel: float | None = None

    @property
    def length_mismatch(self) -> bool:
        return self.only_golden > 0 or self.only_actual > 0

    @property
    def active_checks(self) -> list[CheckOutcome]:
        return [c for c in self.checks if c.active]

    @property
    def is_timing(self) -> bool:
        return any(t in metric_id(self.metric) for t in _TIMING)

    @property
    def is_loss(self) -> bool:
        return "loss" in metric_id(self.metric)


def _rel(a: np.ndarray, g: np.ndarray) -> np.ndarray:
    d = np.abs(a - g)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = d / np.abs(g)
    r[(d == 0)] = 0.0
    r[(g == 0) & (d > 0)] = np.inf
    return r


def _positions(gst, g_idx: bool, ast_, a_idx: bool):
    """Step labels for position-wise comparison: the labelled side's steps, extended by its interval."""
    ref = gst if not g_idx else ast_ if not a_idx else np.arange(1, max(gst.size, ast_.size) + 1)
    n = max(gst.size, ast_.size)
    if ref.size < n:
        every = int(ref[-1] - ref[-2]) if ref.size >= 2 else 1
        start = int(ref[-1]) if ref.size else 0
        ref = np.concatenate([ref, start + every * np.arange(1, n - ref.size + 1)])
    return ref[: gst.size].astype(np.int64), ref[: ast_.size].astype(np.int64)


def _nice_up(x: float) -> float:
    """The smallest 1-2-5 x 10^k value >= x (a tolerance a person would write)."""
    if not math.isfinite(x) or x <= 0:
        return x
    e = math.floor(math.log10(x))
    for m in (1, 2, 5, 10):
        if m * 10**e >= x * (1 - 1e-12):
            return float(f"{m * 10**e:.3g}")
    return float(10 ** (e + 1))


#: A failure counts as "just past" the tolerance (drift-sized) up to this many times the allowed
#: deviation; beyond it, "an order of magnitude or more outside". The issue's drift example is
#: 0.4-1.2x of rel=1e-4; its regression example is 90x.
DRIFT_MAX_EXCESS = 10.0
#: Relative deviations up to this size are within numerical precision changes whatever the
#: gate's tolerance (below bf16's resolution, 2^-8 = 3.9e-3; the CI003 drift bound): mixed-sign
#: deviations this small are drift even when they grow along the steps (chaotic amplification
#: of round-off) or exceed a tolerance set at float32 round-off (torch's 1.3e-6 / 1e-5).
DRIFT_REL = 1e-3
#: Share of the nonzero deviations on one side above which the pattern is "one-signed".
ONE_SIGNED = 0.9


def _deviation(
    gate: Gate, a: np.ndarray, g: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(a - g, |g|, the deviation the gate allows per element), in the tensor's dtype when the
    gate compares torch tensors of a reduced precision."""
    if gate.dtype in ("float32", "float16", "bfloat16"):
        a32 = a.astype(np.float32)
        g32 = g.astype(np.float32)
        dev = (a32 - g32).astype(float)
        gabs = np.abs(g32).astype(float)
    else:
        dev, gabs = a - g, np.abs(g)
    rtol = gate.rtol or 0.0
    atol = gate.atol or 0.0
    if gate.kind == "approx":
        allowed = np.maximum(rtol * gabs, atol) if gate.rtol is not None else np.full(g.shape, atol)
    elif gate.kind == "tolerance" and gate.rtol is not None:
        allowed = rtol * gabs
    else:
        allowed = atol + rtol * gabs
    return dev, gabs, allowed


def _sign(n_pos: int, n_neg: int) -> str:
    """``positive`` / ``negative`` when one side holds :data:`ONE_SIGNED` of the nonzero
    deviations, else ``mixed``."""
    tot = max(n_pos + n_neg, 1)
    if n_pos / tot >= ONE_SIGNED:
        return "positive"
    if n_neg / tot >= ONE_SIGNED:
        return "negative"
    return "mixed"


def _rtol_needed(gate: Gate, d: np.ndarray, gabs: np.ndarray) -> float:
    """The smallest rtol that passes with the gate's atol (pytest.approx: max(rel, abs))."""
    atol = gate.atol or 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        need = np.where(
            gabs > 0, np.maximum(d - (atol if gate.kind != "approx" else 0.0), 0) / gabs, np.inf
        )
    rtol_needed = float(np.max(need)) if need.size else math.nan
    if gate.kind == "approx" and atol and gate.rtol is not None:
        need2 = np.where(d <= atol, 0.0, need)
        rtol_needed = float(np.max(need2)) if need2.size else math.nan
    return rtol_needed


def analyse(gate: Gate, steps: np.ndarray, a: np.ndarray, g: np.ndarray) -> dict:
    """How the actual values deviate from the golden ones under one tolerance gate.

    Figures (on the elements the gate compares, finite on both sides): ``n``, ``n_outside``,
    ``max_rel`` and ``median_rel`` (``|a - g| / |g|``), ``max_rel_outside`` /
    ``max_abs_outside`` (among violations, numpy's wording), ``excess`` (the largest
    ``|a - g| / allowed`` with the gate's own allowed deviation: approx ``max(rel |g|, abs)``,
    allclose ``atol + rtol |g|``), ``n_pos`` / ``n_neg`` (signs of the nonzero deviations
    ``a - g``), ``sign`` (``mixed``, ``positive``, ``negative``: one side holds at least
    :data:`ONE_SIGNED` of them), ``onset_step`` (first step outside), ``outside_from_step`` (the
    step from which every later step is outside, or ``None``), ``early_rel`` / ``late_rel``
    (mean relative error of the first / last quarter), ``growing`` (late >= 3 x early),
    ``persistent`` (every step from the first one outside is outside, at least 3),
    ``rtol_needed`` (the smallest rtol that passes with the gate's atol) and ``widen_to`` (twice
    that, rounded up to 1-2-5). Also ``max_rel_outside_vs_actual`` (pytest.approx's own
    "Max relative difference") and ``golden_step_change``.
    """
    fin = np.isfinite(a) & np.isfinite(g)
    st, a, g = steps[fin], a[fin], g[fin]
    dev, gabs, allowed = _deviation(gate, a, g)
    d = np.abs(dev)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(d == 0, 0.0, d / gabs)
        excess = np.where(d == 0, 0.0, d / allowed)
    out = ~(d <= allowed)
    nz = dev != 0
    n_pos, n_neg = int((dev > 0).sum()), int((dev < 0).sum())
    sign = _sign(n_pos, n_neg)
    q = max(1, rel.size // 4)
    early = float(np.mean(rel[:q])) if rel.size else math.nan
    late = float(np.mean(rel[-q:])) if rel.size else math.nan
    onset = int(st[int(np.argmax(out))]) if out.any() else None
    outside_from = None
    if out.size and out[-1]:
        stays = np.logical_and.accumulate(out[::-1])[::-1]
        outside_from = int(st[int(np.argmax(stays))])
    rtol_needed = _rtol_needed(gate, d, gabs)
    n_out = int(out.sum())
    # persistent: from the first step outside, every later step is outside too
    persistent = bool(onset is not None and onset == outside_from and n_out >= 3)
    return {
        "n": int(d.size),
        "n_outside": n_out,
        "max_abs": float(d.max()) if d.size else math.nan,
        "max_rel": float(rel.max()) if rel.size else math.nan,
        "median_rel": float(np.median(rel)) if rel.size else math.nan,
        "max_abs_outside": float(d[out].max()) if n_out else None,
        "max_rel_outside": float(rel[out].max()) if n_out else None,
        "median_rel_outside": float(np.median(rel[out])) if n_out else None,
        "excess": float(np.max(excess[np.isfinite(excess)]))
        if np.isfinite(excess).any()
        else math.inf,
        "n_pos": n_pos,
        "n_neg": n_neg,
        "n_zero": int((~nz).sum()),
        "sign": sign,
        "onset_step": onset,
        "outside_from_step": outside_from,
        "early_rel": early,
        "late_rel": late,
        "growing": bool(late >= 3 * early and late > 0 and early >= 0),
        "persistent": persistent,
        "rtol_needed": rtol_needed,
        "widen_to": _nice_up(2 * rtol_needed)
        if math.isfinite(rtol_needed) and rtol_needed > 0
        else None,
        "dtype": gate.dtype,
        # pytest.approx prints its "Max relative difference" as |a - e| / |a| over the
        # mismatched elements (pytest's ApproxSequenceLike._repr_compare)
        "max_rel_outside_vs_actual": float(
            np.max(np.where(np.abs(a[out]) > 0, d[out] / np.abs(a[out]), np.inf))
        )
        if n_out
        else None,
        "golden_step_change": float(np.median(np.abs(np.diff(g)) / np.abs(g[:-1])))
        if g.size >= 3 and np.all(g[:-1] != 0)
        else None,
    }


def match_log(check: CheckOutcome, ctx: CIContext) -> None:
    """Attach the figures the failed assertion printed and whether the recomputation agrees.

    ``log``: the :class:`~.model.LogAssertion` figures of the gate's test (same function, same
    file when the log names it). ``log_agrees``: the mismatch count is equal and the maximum
    absolute / relative differences agree to 1e-3 relative (1e-2 in float32: torch prints
    float32 differences); ``None`` when the log printed no figures for the gate.
    """
    g = check.gate
    if check.analysis is None:
        return
    hits = [
        x
        for x in ctx.assertions
        if x.test
        and x.test.split("::")[-1].split("[")[0] == (g.function or "")
        and (
            x.location is None
            or x.location.split(":")[0].endswith(g.path)
            or g.path.endswith(x.location.split(":")[0])
        )
    ]
    if not hits:
        return
    x = hits[0]
    an = check.analysis
    an["log"] = {
        "source": x.source,
        "line": x.line,
        "kind": x.kind,
        "n_mismatch": x.n_mismatch,
        "n_total": x.n_total,
        "max_abs": x.max_abs,
        "max_rel": x.max_rel,
        "among_violations": x.among_violations,
        "lengths": x.lengths,
    }
    if x.kind == "length":
        return
    tol = 1e-2 if g.dtype in ("float32", "float16", "bfloat16") else 1e-3
    ours_abs = an["max_abs_outside"] if x.among_violations else an["max_abs"]
    ours_rel = an["max_rel_outside"] if x.among_violations else an["max_rel"]
    if x.kind == "approx" and x.n_total and x.n_total > 1:
        # pytest's ApproxSequenceLike divides by the obtained value, ApproxMapping by the
        # expected one (_pytest/approx.py, _repr_compare)
        ours_abs = an["max_abs_outside"]
        ours_rel = an["max_rel_outside"] if an.get("mapping") else an["max_rel_outside_vs_actual"]
    agree = []
    if x.n_mismatch is not None:
        agree.append(x.n_mismatch == an["n_outside"])
    if x.n_total is not None:
        agree.append(x.n_total == an["n"])
    for theirs, ours in ((x.max_abs, ours_abs), (x.max_rel, ours_rel)):
        if theirs is not None and ours is not None:
            agree.append(math.isclose(theirs, ours, rel_tol=tol, abs_tol=1e-12))
    an["log_agrees"] = all(agree) if agree else None


def _mapping_groups(recs: list[Recompute]) -> dict[tuple, list[CheckOutcome]]:
    """The one-element checks of whole-mapping gates (no metric), grouped by gate and golden
    source: the keys one assertion of a mapping compares."""
    groups: dict[tuple, list[CheckOutcome]] = {}
    for r in recs:
        if r.n_common != 1:
            continue
        for c in r.checks:
            if c.analysis is not None and "n" in c.analysis and c.gate.metric is None:
                key = (c.gate.path, c.gate.line, c.gate.function, r.golden.source)
                groups.setdefault(key, []).append(c)
    return groups


def _aggregate(ans: list[dict]) -> dict:
    """The keys' figures as one comparison: elements and mismatches summed, maxima taken (an
    absent maximum outside the tolerance is None)."""

    def most(name: str) -> float | None:
        return max((a[name] or 0.0) for a in ans) or None

    return {
        "n": sum(a["n"] for a in ans),
        "n_outside": sum(a["n_outside"] for a in ans),
        "max_abs": max(a["max_abs"] for a in ans),
        "max_rel": max(a["max_rel"] for a in ans),
        "max_abs_outside": most("max_abs_outside"),
        "max_rel_outside": most("max_rel_outside"),
        "max_rel_outside_vs_actual": most("max_rel_outside_vs_actual"),
    }


def _match_log_mapping(recs: list[Recompute], ctx: CIContext) -> None:
    """One comparison of a mapping (``results == pytest.approx({"loss": .., "acc": ..})``) is
    recomputed key by key (one :class:`Recompute` per key); the log's assertion covers all the
    keys at once. Aggregate the keys' figures per gate (elements, mismatches, maxima) and set
    each key's ``log_agrees`` from the aggregate; ``dict_keys`` / ``dict_outside`` name them."""
    for cs in _mapping_groups(recs).values():
        if len(cs) < 2:
            continue
        ans = [c.analysis for c in cs if c.analysis is not None]
        agg = _aggregate(ans)
        probe = CheckOutcome(cs[0].gate, None, analysis=dict(agg, mapping=True))
        match_log(probe, ctx)
        found = probe.analysis or {}
        keys = [a.get("metric") for a in ans]
        for a in ans:
            a["dict_keys"] = keys
            a["dict_outside"] = agg["n_outside"]
            if "log" in found:
                a["log"] = found["log"]
                a["log_agrees"] = found.get("log_agrees")


def gate_applies(gate: Gate, metric: str, all_metrics: list[str]) -> bool:
    """True when ``gate`` compares ``metric``: same normalised name, a name contained in it, or a
    whole-array comparison (no metric) when the metric has no named gate."""
    if gate.kind in ("timeout",):
        return False
    if gate.metric is None:
        return gate.kind in ("allclose", "isclose", "exact", "approx")
    g, m = metric_id(gate.metric), metric_id(metric)
    if g == m:
        return True
    if any(metric_id(x) == g for x in all_metrics):
        return False  # the gate names another metric exactly
    gt, mt = set(g.split("_")), set(m.split("_"))
    return bool(gt) and gt <= mt


def _threshold_check(gate: Gate, a: np.ndarray, ctx: CIContext) -> CheckOutcome:
    """A timing / throughput / threshold gate: the figure the log printed for it, else the
    median (timing, throughput) or final (threshold) actual value, against the bound."""
    if gate.threshold is None:
        return CheckOutcome(gate, None, detail="the gate states no threshold")
    k = gate.kind
    meas = [
        m
        for m in ctx.measured
        if gate.threshold is not None
        and math.isclose(m.threshold, gate.threshold)
        and m.op == gate.op
    ]
    if meas:
        v = meas[0].value
        src = f"measured {v:g} (printed at {meas[0].source}:{meas[0].line})"
    else:
        fin = a[np.isfinite(a)]
        if not fin.size:
            return CheckOutcome(gate, None, detail="no finite actual value to compare")
        v = float(np.median(fin)) if k != "threshold" else float(fin[-1])
        src = f"{'median' if k != 'threshold' else 'final'} actual {v:g}"
    return _bound_outcome(gate, v, src)


def _steady_check(gate: Gate, steps: np.ndarray, a: np.ndarray, g: np.ndarray) -> CheckOutcome:
    """Megatron-LM's timing comparison: medians over the steady steps (30-45, 5-20 for <= 25)."""
    lo, hi = _STEADY_LONG if (steps.max() if steps.size else 0) > 25 else _STEADY_SHORT
    w = (steps >= lo) & (steps <= hi) & np.isfinite(a) & np.isfinite(g)
    if not w.any():
        return CheckOutcome(gate, None, detail=f"no finite values in steps {lo}-{hi}")
    am, gm = float(np.median(a[w])), float(np.median(g[w]))
    ok = bool(np.isclose(am, gm, rtol=gate.rtol or 0.0, atol=gate.atol or 0.0))
    return CheckOutcome(
        gate,
        ok,
        1,
        0 if ok else 1,
        0,
        None,
        f"median over steps {lo}-{hi}: actual {am:.6g} vs golden {gm:.6g} "
        f"(rel {abs(am - gm) / abs(gm):.3g}, rtol {gate.rtol:g})",
    )


def _close(gate: Gate, a: np.ndarray, g: np.ndarray) -> np.ndarray | None:
    """Per step, whether the values agree under the gate's own formula; None for a tolerance
    that is not a literal."""
    k = gate.kind
    rtol = gate.rtol if gate.rtol is not None else 0.0
    atol = gate.atol if gate.atol is not None else 0.0
    d = np.abs(a - g)
    if k in ("deterministic", "exact"):
        return a == g
    if k == "approx":
        tol = (
            np.maximum((gate.rtol or 0.0) * np.abs(g), atol)
            if gate.rtol is not None
            else np.full(g.shape, atol)
        )
        return d <= tol
    if k == "isclose" and gate.formula.startswith("math"):
        return d <= np.maximum(rtol * np.maximum(np.abs(a), np.abs(g)), atol)
    if k == "tolerance" and gate.rtol is None and gate.atol is None:
        return None
    if k == "tolerance" and gate.rtol is not None:
        return _rel(a, g) <= gate.rtol
    return d <= atol + rtol * np.abs(g)  # isclose / allclose / approximate / tolerance(atol)


def _evaluate(
    gate: Gate,
    metric: str,
    steps: np.ndarray,
    a: np.ndarray,
    g: np.ndarray,
    n_golden: int,
    mismatch: bool,
    ctx: CIContext,
) -> CheckOutcome:
    k = gate.kind
    if k in ("timing", "throughput", "threshold"):
        return _threshold_check(gate, a, ctx)
    if mismatch and k in ("allclose", "isclose", "exact", "approx"):
        return CheckOutcome(
            gate,
            False,
            int(steps.size),
            0,
            0,
            None,
            "golden and actual cover different steps: a whole-array comparison fails on "
            "the shapes before any value is compared",
        )
    if (
        gate.style == "megatron"
        and gate.kind == "approximate"
        and any(t in metric_id(metric) for t in _TIMING)
    ):
        return _steady_check(gate, steps, a, g)
    close = _close(gate, a, g)
    if close is None:
        return CheckOutcome(gate, None, detail="tolerance is not a literal; not recomputed")
    close = close | (np.isnan(a) & np.isnan(g))
    n = int(close.size)
    n_exceed = int((~close).sum())
    allowed = 0
    if gate.style == "megatron" and k == "approximate" and n > 1:
        allowed = min(max(n_golden // 100, 1), 50)
    d = np.abs(a - g)
    worst = int(steps[int(np.nanargmax(np.where(close, -np.inf, d)))]) if n_exceed else None
    passed = n_exceed <= allowed
    tol_txt = (
        "exact"
        if k in ("deterministic", "exact")
        else f"rtol {gate.rtol:g}" + (f", atol {gate.atol:g}" if gate.atol else "")
        if gate.rtol is not None
        else f"atol {gate.atol:g}"
    )
    return CheckOutcome(
        gate,
        passed,
        n,
        n_exceed,
        allowed,
        worst,
        f"{n_exceed} of {n} steps outside {tol_txt}" + (f" ({allowed} allowed)" if allowed else ""),
    )


def _pick(sets: list[ValueSet], metric: str) -> list[tuple[ValueSet, str]]:
    found = [(s, s.find(metric)) for s in sets]
    out = [(s, k) for s, k in found if k is not None]
    # explicit value files before values parsed out of log text
    return sorted(out, key=lambda sk: sk[0].label == "log")


@dataclass
class _Aligned:
    """A metric's golden and actual values on the steps both logged (see :func:`_align`)."""

    gst: np.ndarray  # golden steps (positions for a bare list)
    gv: np.ndarray  # golden values
    ast_: np.ndarray  # actual steps
    av: np.ndarray  # actual values
    common: np.ndarray  # the steps both logged
    g: np.ndarray  # golden values on them
    a: np.ndarray  # actual values on them


def _align(gs, acts) -> _Aligned:
    """The first golden and actual sets of a metric on their common steps (a bare list is
    compared by position, what ``a == approx(b)`` / allclose do)."""
    gset, gkey = gs[0]
    aset, akey = acts[0]
    gst, gv = gset.series(gkey)
    ast_, av = aset.series(akey)
    gmask, amask = gst >= 0, ast_ >= 0
    gst, gv, ast_, av = gst[gmask], gv[gmask], ast_[amask], av[amask]
    if gkey in gset.indexed or akey in aset.indexed:
        # label positions with the steps of the side that has real steps
        gst, ast_ = _positions(gst, gkey in gset.indexed, ast_, akey in aset.indexed)
    common, gi, ai = np.intersect1d(gst, ast_, return_indices=True)
    return _Aligned(gst, gv, ast_, av, common, gv[gi], av[ai])


def _figures(al: _Aligned) -> dict[str, Any]:
    """The recomputed figures of one metric (the :class:`Recompute` fields of the module
    docstring's step 1)."""
    gst, gv, ast_, av, common, g, a = al.gst, al.gv, al.ast_, al.av, al.common, al.g, al.a
    # golden entries that are NaN where the actual has no step are padding, not steps
    only_g = int(
        np.isin(gst, common, invert=True).sum()
        - np.isnan(gv[np.isin(gst, common, invert=True)]).sum()
    )
    only_a = int(
        np.isin(ast_, common, invert=True).sum()
        - np.isnan(av[np.isin(ast_, common, invert=True)]).sum()
    )
    fin = np.isfinite(a) & np.isfinite(g)
    out: dict[str, Any] = {
        "n_golden": int(np.isfinite(gv).sum()),
        "n_actual": int(np.isfinite(av).sum()),
        "n_common": int(common.size),
        "golden_steps": (int(gst.min()), int(gst.max())) if gst.size else (0, 0),
        "actual_steps": (int(ast_.min()), int(ast_.max())) if ast_.size else (0, 0),
        "only_golden": max(only_g, 0),
        "only_actual": max(only_a, 0),
        "nonfinite_actual": int(
            (~np.isfinite(av)).sum() - (~np.isfinite(gv)).sum()
            if av.size == gv.size
            else (~np.isfinite(av)).sum()
        ),
    }
    if not fin.any():
        out.update(
            max_abs=math.nan,
            max_rel=math.nan,
            mean_rel=math.nan,
            max_rel_step=None,
            first_step=None,
            first_rel=math.nan,
            early_rel=math.nan,
            late_rel=math.nan,
            median_golden=math.nan,
            median_actual=math.nan,
            median_rel_change=math.nan,
        )
        return out
    d = np.abs(a - g)
    r = _rel(a, g)
    rf = np.where(fin, r, np.nan)
    q = max(1, int(fin.sum()) // 4)
    fin_idx = np.flatnonzero(fin)
    mg = float(np.median(g[fin]))
    ma = float(np.median(a[fin]))
    out.update(
        max_abs=float(np.nanmax(np.where(fin, d, np.nan))),
        max_rel=float(np.nanmax(rf)),
        mean_rel=float(np.nanmean(rf)),
        max_rel_step=int(common[int(np.nanargmax(rf))]),
        first_step=int(common[fin_idx[0]]),
        first_rel=float(r[fin_idx[0]]),
        early_rel=float(np.nanmean(r[fin_idx[:q]])),
        late_rel=float(np.nanmean(r[fin_idx[-q:]])),
        median_golden=mg,
        median_actual=ma,
        median_rel_change=(ma - mg) / abs(mg)
        if mg not in (0.0,) and math.isfinite(mg)
        else math.nan,
    )
    return out


def _element_check(gate: Gate, rec: Recompute, al: _Aligned, ctx: CIContext) -> CheckOutcome | None:
    """A test that compares one element (``values[-1]``) of each side, not the arrays; None
    when the element is not there."""
    try:
        ga, aa = al.gv[gate.index], al.av[gate.index]
        sel = np.array([al.gst[gate.index]])
    except IndexError:
        return None
    c = _evaluate(gate, rec.metric, sel, np.array([aa]), np.array([ga]), 1, False, ctx)
    c.analysis = analyse(gate, sel, np.array([aa]), np.array([ga]))
    match_log(c, ctx)
    return c


def _analyse_check(
    c: CheckOutcome, gate: Gate, rec: Recompute, al: _Aligned, ctx: CIContext
) -> None:
    """The deviation pattern of a whole-curve check; torch compares in the tensor's dtype, so
    the verdict follows the cast values."""
    c.analysis = analyse(gate, al.common, al.a, al.g)
    c.analysis["metric"] = rec.metric
    if gate.dtype in ("float32", "float16", "bfloat16"):
        c.passed = c.analysis["n_outside"] == 0
        c.n_exceed = c.analysis["n_outside"]
        c.detail = (
            f"{c.n_exceed} of {c.n_steps} steps outside rtol {gate.rtol:g}, "
            f"atol {gate.atol:g} (in {gate.dtype})"
        )
    match_log(c, ctx)


def _length_check(c: CheckOutcome, gate: Gate, rec: Recompute, ctx: CIContext) -> None:
    """A whole-array comparison of two lengths: the lengths, and the log's length assertion."""
    c.analysis = {"lengths": [rec.n_golden, rec.n_actual]}
    hits = [
        x
        for x in ctx.assertions
        if x.kind == "length"
        and x.test
        and x.test.split("::")[-1].split("[")[0] == (gate.function or "")
    ]
    if hits:
        c.analysis["log"] = {
            "source": hits[0].source,
            "line": hits[0].line,
            "kind": "length",
            "lengths": hits[0].lengths,
        }
        c.analysis["log_agrees"] = hits[0].lengths == [rec.n_golden, rec.n_actual]


def _check_gates(
    rec: Recompute, al: _Aligned, ctx: CIContext, names: list[str], logged_tests: set
) -> None:
    """Evaluate every gate that applies to the metric (and, with a length mismatch, the same
    gates on the common steps only)."""
    for gate in ctx.gates:
        if not gate_applies(gate, rec.metric, names):
            continue
        if gate.index is not None and gate.kind in ("approx", "allclose", "isclose"):
            c1 = _element_check(gate, rec, al, ctx)
            if c1 is not None:
                rec.checks.append(c1)
            continue
        c = _evaluate(
            gate, rec.metric, al.common, al.a, al.g, rec.n_golden, rec.length_mismatch, ctx
        )
        # the deviation pattern for failing checks, the log's tests and torch dtypes
        # (400 whole-curve analyses of a 2,000-gate repo cost 2.7 s otherwise)
        if (
            c.passed is not None
            and not rec.length_mismatch
            and gate.kind in ("approx", "allclose", "isclose", "approximate", "tolerance")
            and (c.passed is False or gate.function in logged_tests or gate.dtype)
        ):
            _analyse_check(c, gate, rec, al, ctx)
        elif rec.length_mismatch and gate.kind in ("approx", "allclose", "isclose", "exact"):
            _length_check(c, gate, rec, ctx)
        rec.checks.append(c)
        if rec.length_mismatch:
            rec.common_checks.append(
                _evaluate(gate, rec.metric, al.common, al.a, al.g, rec.n_common, False, ctx)
            )


def _seeds(rec: Recompute, gs, acts, al: _Aligned, k: float) -> None:
    """With several golden sets (seeds): the run against their band and their spread; with
    several actual sets: their spread."""
    from ..baseline.band import Aligned, compare_band

    if len(gs) >= 2:
        base = []
        for s, key in gs:
            st, v = s.series(key)
            base.append(np.interp(al.common, st, v))
        aligned = Aligned("step", al.common.astype(float), al.common, al.a, np.vstack(base))
        b = compare_band(aligned, is_higher_better(rec.metric), k=k)
        with np.errstate(divide="ignore", invalid="ignore"):
            spread = (np.max(aligned.baselines, 0) - np.min(aligned.baselines, 0)) / np.abs(
                np.mean(aligned.baselines, 0)
            )
        rec.spread_rel = float(np.nanmedian(spread))
        rec.band = {
            "verdict": b.verdict,
            "n": b.n_baselines,
            "method": b.method,
            "run_tail_mean": b.run_tail_mean,
            "band_lo": b.band_lo,
            "band_hi": b.band_hi,
            "rel_delta": b.rel_delta,
            "z": b.z,
            "frac_tail_outside": b.frac_tail_worse,
            "tail_steps": [b.tail_start_step, b.tail_end_step],
            "sources": [s.source + (f" [{s.label}]" if s.label else "") for s, _ in gs],
        }
    elif len(acts) >= 2:
        vals = []
        for s, key in acts:
            st, v = s.series(key)
            vals.append(np.interp(al.common, st, v))
        arr = np.vstack(vals)
        with np.errstate(divide="ignore", invalid="ignore"):
            spread = (arr.max(0) - arr.min(0)) / np.abs(arr.mean(0))
        rec.spread_rel = float(np.nanmedian(spread))


def recompute(ctx: CIContext, k: float = 2.0) -> list[Recompute]:
    """Recompute each metric that has both golden and actual values. See the module docstring.

    Args:
        ctx: the collected evidence.
        k: band half-width in standard deviations when several golden sets (seeds) exist.

    Returns:
        One :class:`Recompute` per metric, in golden-file order.
    """
    names: list[str] = []
    for s in ctx.goldens:
        for m in s.metrics:
            if metric_id(m) not in {metric_id(x) for x in names}:
                names.append(m)
    gated_names = [g.metric for g in ctx.gates if g.metric]
    logged_tests = {t.function for t in ctx.tests}
    out: list[Recompute] = []
    for name in names:
        gs, acts = _pick(ctx.goldens, name), _pick(ctx.actuals, name)
        if not gs or not acts:
            continue
        gkey = gs[0][1]
        al = _align(gs, acts)
        rec = Recompute(
            metric=next((x for x in gated_names if metric_id(x) == metric_id(gkey)), gkey),
            golden=gs[0][0],
            actual=acts[0][0],
            **_figures(al),
        )
        _check_gates(rec, al, ctx, names, logged_tests)
        _seeds(rec, gs, acts, al, k)
        _activity(rec, ctx)
        out.append(rec)
    _match_log_mapping(out, ctx)
    from .reference import find_reference

    find_reference(ctx, out)  # the old code's results on the same runner, per failing gate
    return out


def _activity(rec: Recompute, ctx: CIContext) -> None:
    """For each check of ``rec``: whether the log says it failed (:func:`_log_failed`) and
    whether it was active in this job (:func:`_set_active`)."""
    failed_ids = {metric_id(m) for m in ctx.failed_metrics}
    failed_tests = {t.function for t in ctx.tests if t.outcome in ("failed", "error")}
    passed_tests = {t.function for t in ctx.tests if t.outcome == "passed"}
    mid = metric_id(rec.metric)
    for c in rec.checks:
        _log_failed(c, mid, failed_ids, failed_tests, passed_tests)
        _set_active(c, mid, ctx, failed_ids, failed_tests | passed_tests)


def _log_failed(
    c: CheckOutcome, mid: str, failed_ids: set, failed_tests: set, passed_tests: set
) -> None:
    """The log's word on the check: its test failed or passed, else the metric is or is not in
    the log's failed-metrics list; left as it is when the log says neither."""
    if c.gate.function and c.gate.function in failed_tests:
        c.log_failed = True
    elif c.gate.function and c.gate.function in passed_tests:
        c.log_failed = False
    elif failed_ids:
        c.log_failed = mid in failed_ids


def _set_active(c: CheckOutcome, mid: str, ctx: CIContext, failed_ids: set, seen: set) -> None:
    """Whether the check ran in this job: a Megatron-style gate is active when the repository's
    checked-metrics list names it; a check that would fail while the log's failed list omits it
    was not checked; a check whose test the log never shows is noted."""
    if c.gate.style == "megatron" and ctx.checked_metrics is not None:
        c.active = mid in {metric_id(m) for m in ctx.checked_metrics}
        where = ctx.checked_metrics_source
        c.active_reason = f"checked metrics {ctx.checked_metrics}" + (
            f" ({where.source}:{where.line})" if where else ""
        )
        if not c.active and ctx.failed_metrics and mid not in failed_ids and c.passed is False:
            c.active_reason += "; and the log's failed list omits it although it would fail"
    elif c.passed is False and ctx.failed_metrics and mid not in failed_ids:
        c.active = False
        c.active_reason = (
            "would fail by recomputation, yet the log's failed-metrics list "
            f"({', '.join(ctx.failed_metrics)}) omits it: not checked in this job"
        )
    elif c.gate.function and c.gate.function not in seen and ctx.tests:
        c.active_reason = "its test does not appear in the log"


_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}


def standalone_checks(ctx: CIContext, recs: list[Recompute]) -> list[CheckOutcome]:
    """Timing, throughput and threshold gates that no golden comparison covered.

    Evidence, in order: a failed assertion that printed the gate's bound
    (``assert 0.71 < 0.5``), the outcome of the gate's test function in the log,
    the median (timing/throughput) or final (threshold) value of a logged series
    of the gate's metric. A gate with none of these is returned with
    ``passed=None``.
    """
    covered = {id(c.gate) for r in recs for c in r.checks}
    failed = {t.function: t for t in ctx.tests if t.outcome in ("failed", "error")}
    passed = {t.function for t in ctx.tests if t.outcome == "passed"}
    out: list[CheckOutcome] = []
    for gate in ctx.gates:
        if (
            id(gate) in covered
            or gate.kind not in ("timing", "throughput", "threshold")
            or gate.threshold is None
        ):
            continue
        value, src = _printed_value(ctx, gate)
        if value is None and gate.metric:
            value, src = _logged_value(ctx, gate)
        if value is not None:
            c = _measured_outcome(gate, value, src)
            c.log_failed = (
                True if gate.function in failed else False if gate.function in passed else None
            )
        else:
            c = _test_outcome(gate, failed, passed)
        out.append(c)
    return out


def _printed_value(ctx: CIContext, gate) -> tuple[float | None, str]:
    """The measured value a failed assertion printed next to the gate's bound (``assert 0.71 <
    0.5``, either side), with its line; (None, "") when no printed comparison matches."""
    for m in ctx.measured:
        if m.op == gate.op and math.isclose(m.threshold, gate.threshold):
            value = m.value
        elif m.op == _FLIP.get(gate.op or "") and math.isclose(m.value, gate.threshold):
            value = m.threshold
        else:
            continue
        if value is not None:
            return value, f"{m.source}:{m.line}"
    return None, ""


def _logged_value(ctx: CIContext, gate) -> tuple[float | None, str]:
    """The gate's metric from the first logged series that has it: the median for a timing or
    throughput gate, the final value for a threshold; (None, "") when none has a finite value."""
    for s in ctx.actuals:
        key = s.find(gate.metric)
        if key:
            v = s.series(key)[1]
            v = v[np.isfinite(v)]
            if v.size:
                value = float(np.median(v)) if gate.kind != "threshold" else float(v[-1])
                return (
                    value,
                    f"{'median' if gate.kind != 'threshold' else 'final'} of {key} in {s.source}",
                )
    return None, ""


def _measured_outcome(gate, value: float, src: str) -> CheckOutcome:
    """Whether ``value``, measured at ``src``, holds the gate's bound (an unknown operator holds)."""
    return _bound_outcome(gate, value, f"measured {value:g} ({src})")


def _bound_outcome(gate: Gate, value: float, what: str) -> CheckOutcome:
    """Whether ``value`` holds the gate's bound (an unknown operator holds): one check, the
    detail ``what`` followed by the bound and the result."""
    assert gate.threshold is not None
    ok = {
        "<": value < gate.threshold,
        "<=": value <= gate.threshold,
        ">": value > gate.threshold,
        ">=": value >= gate.threshold,
    }.get(gate.op or "<", True)
    return CheckOutcome(
        gate,
        bool(ok),
        1,
        0 if ok else 1,
        0,
        None,
        f"{what} {gate.op} {gate.threshold:g}: {'holds' if ok else 'violated'}",
    )


def _test_outcome(gate, failed: dict, passed: set) -> CheckOutcome:
    """With no measured value, the outcome of the gate's test in the log; unknown without one."""
    if gate.function in failed:
        c = CheckOutcome(
            gate,
            False,
            1,
            1,
            0,
            None,
            f"its test {failed[gate.function].test} failed: {failed[gate.function].message}",
        )
        c.log_failed = True
    elif gate.function in passed:
        c = CheckOutcome(gate, True, 1, 0, 0, None, "its test passed")
        c.log_failed = False
    else:
        c = CheckOutcome(gate, None, detail="no measured value or test outcome in the logs")
    return c
