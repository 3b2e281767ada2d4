"""Does the old code still reproduce the golden values on the same runner?

The one observation that tells numerical drift from a real change without arguing from the
size of the deviations: drift (a new image, driver, library, GPU) moves the old code and the
new code alike; a change under test moves only the new code. When the CI logs hold a run of
the old code beside the failing one, :func:`find_reference` reads what it says, from three
sources (strongest first):

* **values**: metric values of the old code (the metric lines of a log segment that checked out
  the base branch / previous commit, a ``--logs`` value file named for it such as
  ``metrics_main.json``, CSV columns marked ``_main`` / ``_base`` / ``_previous`` /
  ``_parent`` / ``_rerun`` / ``_reverted``): every failing tolerance gate is re-evaluated on
  them against the same golden values with the gate's own rule (:func:`.recompute._evaluate`),
  so "reproduces" means "passes the very gate the new code fails";
* **session**: the outcome of the same test (same pytest node id, else the same function) in
  a segment of the logs that ran the old code (see :mod:`.logs`): ``PASSED`` reproduces,
  ``FAILED`` does not (with the figures its assertion printed);
* **statement**: a line that says so in words ("reverting the PR on the same runner reproduces
  the golden values", "the previous commit fails the same way on this image"), including the
  reporter's ``# `` annotations of a shared case. A statement decides only when it places the
  old code on the same runner / machine / image or is a revert / rerun: "the last green build
  passed" is no evidence when the image changed since.

``same_runner`` is True when the old code ran in the same log file (the same job, so the same
runner), or when both logs name the same runner / agent; False when they name different
ones; None when nothing says. Evidence from a different runner is reported but does not
decide (drift can differ between machines).
"""

from __future__ import annotations

import math
import re

import numpy as np

from .model import CIContext, ReferenceRun, metric_id

_SAME = re.compile(
    r"same (?:runner|machine|node|host|agent|image|container|environment|hardware|gpu)|"
    r"this (?:runner|machine|node|agent|image)|\bre-?run\b|\brevert(?:ing|ed)?\b",
    re.IGNORECASE,
)


def _same_runner(ctx: CIContext, ref_source: str, new_sources: set[str]) -> bool | None:
    if ref_source in new_sources:
        return True
    a = ctx.runners.get(ref_source)
    b = {ctx.runners.get(s) for s in new_sources} - {None}
    if a and b:
        return a in b
    return None


_REEVALUATED = (
    "approx",
    "allclose",
    "isclose",
    "approximate",
    "tolerance",
    "exact",
    "deterministic",
)


def find_reference(ctx: CIContext, recs: list) -> list[ReferenceRun]:
    """What the logs say about the old code, per failing gate / test (see the module docstring).

    Args:
        ctx: the collected evidence (``ref_tests``, ``ref_assertions``, ``references``,
            ``ref_statements``, ``runners``).
        recs: the recomputed metrics (:class:`.recompute.Recompute`) of the new code.

    Returns:
        The reference observations, strongest source first; also stored in ``ctx.reference``.
    """
    failed = [t for t in ctx.tests if t.outcome in ("failed", "error")]
    new_sources = {t.source for t in failed} or {t.source for t in ctx.tests}
    out: list[ReferenceRun] = []
    # values of the old code, re-evaluated with each failing tolerance gate
    for rec in recs:
        failing = [
            c for c in rec.active_checks if c.passed is False and c.gate.kind in _REEVALUATED
        ]
        if failing:
            out += [
                r
                for ref in ctx.references
                if (r := _values_reference(ctx, rec, failing[0], ref, new_sources)) is not None
            ]
    out += _session_references(ctx, failed)
    out += _statement_references(ctx)
    ctx.reference = out
    return out


def _values_reference(ctx: CIContext, rec, c, ref, new_sources: set[str]) -> ReferenceRun | None:
    """The old code's values of ``rec``'s metric (``ref``) re-evaluated with the failing gate
    ``c``; None when they share no step with the golden values or cannot be judged."""
    from .recompute import _evaluate, analyse

    key = ref.find(rec.metric)
    if key is None:
        return None
    gst, gv = rec.golden.series(rec.golden.find(rec.metric) or rec.metric)
    rst, rv = ref.series(key)
    if key in ref.indexed or rec.golden.find(rec.metric) in rec.golden.indexed:
        n = min(rst.size, gst.size)
        rst, gst_ = np.arange(1, n + 1), np.arange(1, n + 1)
        rv, gv_ = rv[:n], gv[:n]
    else:
        gst_, gv_ = gst, gv
    common, gi, ri = np.intersect1d(gst_, rst, return_indices=True)
    if not common.size:
        return None
    g, a = gv_[gi], rv[ri]
    rc = _evaluate(c.gate, rec.metric, common, a, g, int(common.size), False, ctx)
    if rc.passed is None:
        return None
    an = analyse(c.gate, common, a, g) if c.gate.kind not in ("exact", "deterministic") else {}
    new_an = c.analysis or {}
    figs = {
        "n": int(common.size),
        "n_outside": rc.n_exceed,
        "max_rel": an.get("max_rel", float(np.nanmax(np.abs(a - g) / np.abs(g)))),
        "excess": an.get("excess"),
        "new_max_rel": new_an.get("max_rel", rec.max_rel),
        "new_excess": new_an.get("excess"),
        "gate": f"{c.gate.path}:{c.gate.line}",
    }
    return ReferenceRun(
        "values",
        ref.source,
        0,
        f"{rec.metric} of the old code ({ref.label or ref.source}): {rc.detail}",
        ref.label or ref.source,
        bool(rc.passed),
        c.gate.function,
        rec.metric,
        {
            k: v
            for k, v in figs.items()
            if v is None or not isinstance(v, float) or math.isfinite(v)
        },
        ctx.runners.get(ref.source),
        _same_runner(ctx, ref.source, {rec.actual.source} | new_sources)
        if ref.source not in (rec.actual.source,)
        else True,
    )


def _session_references(ctx: CIContext, failed: list) -> list[ReferenceRun]:
    """The same failing test in a segment of the log that ran the old code."""
    out: list[ReferenceRun] = []
    for t in failed:
        hits = [r for r in ctx.ref_tests if r.test == t.test] or [
            r for r in ctx.ref_tests if r.function == t.function and r.path == t.path
        ]
        for r in hits[-1:]:
            if r.outcome not in ("passed", "failed", "error"):
                continue
            ref_a = next(
                (x for x in ctx.ref_assertions if x.test == r.test and x.source == r.source), None
            )
            figs = {}
            if ref_a is not None:
                figs = {
                    k: getattr(ref_a, k)
                    for k in ("n_mismatch", "n_total", "max_abs", "max_rel")
                    if getattr(ref_a, k) is not None
                }
            out.append(
                ReferenceRun(
                    "session",
                    r.source,
                    r.line,
                    f"{r.outcome.upper()} {r.test}" + (f" - {r.message}" if r.message else ""),
                    r.segment,
                    r.outcome == "passed",
                    t.test,
                    None,
                    figs,
                    ctx.runners.get(r.source),
                    _same_runner(ctx, r.source, {t.source}),
                )
            )
    return out


def _statement_references(ctx: CIContext) -> list[ReferenceRun]:
    """What the logs say about the old code in words."""
    return [
        ReferenceRun(
            "statement",
            ln.source,
            ln.line,
            ln.text,
            "",
            ln.kind.endswith("reproduces"),
            None,
            None,
            {},
            None,
            # "the last green build passed" says nothing when the image changed since:
            # only the old code rerun now, on this runner / image, discriminates
            bool(_SAME.search(ln.text)),
        )
        for ln in ctx.ref_statements
    ]


def decisive(ctx: CIContext, metric: str | None = None) -> ReferenceRun | None:
    """The reference observation that decides drift vs regression for ``metric``: the first
    one (values, then session, then statement) that is on the same runner or does not say
    otherwise; None when there is none."""
    rows = [
        r
        for r in ctx.reference
        if r.reproduces is not None
        and r.same_runner is not False
        and (metric is None or r.metric is None or metric_id(r.metric) == metric_id(metric))
    ]
    order = {"values": 0, "session": 1, "statement": 2}
    rows.sort(key=lambda r: (order.get(r.kind, 3), r.same_runner is not True))
    return rows[0] if rows else None


def describe(r: ReferenceRun | None) -> str:
    """One sentence for a summary: what the old code did and where the log says so."""
    if r is None:
        return "the old code's result is not in the log"
    where = f"{r.source}:{r.line}" if r.line else r.source
    who = f"the old code ({r.label})" if r.label else "the old code"
    runner = " on the same runner" if r.same_runner else f" (runner {r.runner})" if r.runner else ""
    if r.kind == "values":
        f = r.figures
        figs = (
            f"max rel {f['max_rel']:.3g}"
            + (f", {f['excess']:.3g}x the allowed deviation" if f.get("excess") is not None else "")
            if f.get("max_rel") is not None
            else ""
        )
        return (
            f"{who}{runner} {'still reproduces' if r.reproduces else 'also fails'} the golden "
            f"{r.metric} under the same gate ({f.get('gate')}: {f.get('n_outside')} of {f.get('n')} "
            f"outside{', ' + figs if figs else ''}; {where})"
        )
    if r.kind == "session":
        return (
            f"{who}{runner} {'passes' if r.reproduces else 'fails'} the same test "
            f"({r.text[:160]}; {where})"
        )
    return f"the logs state that {who} {'reproduces the golden values' if r.reproduces else 'fails the same way'} ({where}: {r.text[:160]!r})"
