"""The CI verdict: the CI findings in, the failure class, recommendation and ledger out.

The decision is a table, :data:`CI_RULES`: one :class:`CIRule` per row with the findings it
needs (``needs`` in words, ``codes``), the outcomes and causes it can give, its precedence and
its own cases (small finding sets with the verdict the row must give, or ``None`` where it must
not fire; ``tests/test_ci_classify.py`` enumerates them). Rows are tried in precedence order and
the first that fires decides. The order is the audit workflow's: what stopped the job before
what a gate said about it; test setup before values; the specific explanation before the
general one:

1. an infrastructure signature (CI011 infra) -> ``crashed`` / ``infra_runtime``;
2. an exception in the code under test (CI011 exception) -> ``crashed`` /
   ``correctness_bug`` (``data_config`` for missing files / bad config);
3. a golden file of another length whose common steps pass (CI004) ->
   ``succeeded`` / ``metric_policy`` (test setup);
4. a metric moved with a metric-library upgrade while the loss matched (CI009)
   -> ``succeeded`` / ``metric_policy``;
5. a tolerance check failed on a non-timing metric (CI002 error), or an exact
   check failed beyond drift: the old code on the same runner passes -> ``regressed``;
   drift-sized deviations -> ``metric_policy``; inside the golden seeds' noise band (CI010) ->
   ``metric_policy``; already off at the first step -> ``regressed`` /
   ``correctness_bug``; otherwise ``regressed`` / ``model_convergence``;
6. only exact-match checks failed on values within tolerance (CI003) ->
   ``succeeded`` / ``metric_policy`` (environment drift, or the change under test when the
   old code is bit-exact);
7. only timing / throughput gates or a timeout failed while the metric checks
   passed (CI005) -> ``slow`` / ``infra_runtime`` (timing gate) or
   ``metric_policy`` (job timeout);
8. failures no gate explains -> ``inconclusive``; nothing failed -> ``healthy``.

A model/convergence verdict is only reachable through rule 5, i.e. never when
only a performance, timeout, logging or tolerance-policy gate failed while the
loss and correctness checks passed.
"""

from __future__ import annotations

import math
import posixpath
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ..detectors import detector_for
from ..report import Cause, Finding, Hypothesis, NextAction, Outcome, Severity
from ..signal import fmt
from .model import (
    CIContext,
    CIVerdict,
    EnvChange,
    LogAssertion,
    ReferenceRun,
    TestResult,
    TracedInput,
)
from .recompute import DRIFT_MAX_EXCESS, DRIFT_REL
from .reference import decisive, describe

_DATA_EXC = (
    "FileNotFoundError",
    "PermissionError",
    "IsADirectoryError",
    "NotADirectoryError",
    "ConstructorError",
    "ScannerError",
    "ParserError",
    "JSONDecodeError",
)


def _by(findings: list[Finding]) -> dict[str, list[Finding]]:
    out: dict[str, list[Finding]] = {}
    for f in findings:
        out.setdefault(f.code, []).append(f)
    return out


def _new_env(ctx: CIContext) -> str:
    news = [e.new for e in ctx.env_changes if e.new]
    return news[0] if news else "the new environment"


def _hyp(
    statement: str,
    supported: bool | None,
    cause: Cause,
    test: str,
    for_: Sequence[str] = (),
    against: Sequence[str] = (),
) -> Hypothesis:
    status = "supported" if supported else "open" if supported is None else "rejected"
    return Hypothesis(
        statement=statement,
        status=status,
        cause=cause,
        evidence_for=list(for_),
        evidence_against=list(against),
        discriminating_test=test,
    )


def _failing_analysis(f: Finding) -> tuple[dict, dict] | None:
    """(check facts, analysis) of the worst active failing tolerance check of a CI002 row."""
    rows = [
        c
        for c in f.facts.get("checks", [])
        if c.get("active")
        and c.get("passed") is False
        and c.get("kind") not in ("deterministic", "exact")
        and isinstance(c.get("analysis"), dict)
        and "excess" in c["analysis"]
    ]
    if not rows:
        return None
    c = max(rows, key=lambda c: c["analysis"]["excess"])
    return c, c["analysis"]


def _pattern(c: dict, an: dict) -> str:
    """The recomputed figures of a failing check in one sentence."""
    tol = (f"rel={fmt(c['rtol'])}" if c.get("kind") == "approx" else f"rtol={fmt(c['rtol'])}") + (
        f", atol={fmt(c['atol'])}" if c.get("atol") and c.get("kind") != "approx" else ""
    )
    signs = (
        "too few elements for a sign pattern"
        if an["n"] < 3
        else f"mixed signs ({an['n_pos']} above, {an['n_neg']} below golden)"
        if an["sign"] == "mixed"
        else f"one-signed ({an['n_pos'] if an['sign'] == 'positive' else an['n_neg']} of "
        f"{an['n_pos'] + an['n_neg']} {'above' if an['sign'] == 'positive' else 'below'} golden)"
    )
    where = (
        f"first outside at step {an['onset_step']}"
        + (
            f", outside at every step from {an['outside_from_step']}"
            if an.get("outside_from_step") is not None
            and an["outside_from_step"] != an["onset_step"]
            else ""
        )
        if an.get("onset_step") is not None and an["n"] >= 3
        else ""
    )
    log = an.get("log")
    agree = ""
    if log and an.get("log_agrees") is not None:
        agree = (
            f"; matches the log's assertion ({log['source']}:{log['line']})"
            if an["log_agrees"]
            else f"; differs from the log's assertion ({log['source']}:{log['line']}: "
            f"{log.get('n_mismatch')} / {log.get('n_total')} mismatched)"
        )
    keys = an.get("dict_keys") or []
    scope = (
        f" (key {an.get('metric')!r} of the mapping compared there; {an['dict_outside']} of "
        f"{len(keys)} keys outside)"
        if len(keys) > 1
        else ""
    )
    return (
        f"{an['n_outside']} of {an['n']} elements outside {tol} ({c['path']}:{c['line']}){scope}, "
        f"max rel {fmt(an['max_rel'], 3)}, median rel {fmt(an['median_rel'], 3)}, "
        f"{fmt(an['excess'], 3)}x the allowed deviation, {signs}"
        + (f", {where}" if where else "")
        + agree
    )


# --- what the rules see ---------------------------------------------------------------------------


@dataclass
class Worst:
    """The worst substantive gated metric and what decides its class (rows 5-9 of the table)."""

    f: Finding
    fa: tuple[dict, dict] | None
    rtols: list[float]
    first_off: bool
    drift_like: bool
    in_band: list[Finding]
    tight: list[Finding]
    ref: ReferenceRun | None

    @property
    def old_ok(self) -> bool:
        """The old code on the same runner reproduces the golden values."""
        return self.ref is not None and self.ref.reproduces is True

    @property
    def old_fails(self) -> bool:
        """The old code on the same runner fails the gate too."""
        return self.ref is not None and self.ref.reproduces is False


@dataclass
class Evidence:
    """What a CI rule sees: the findings by code, the context, and the groupings rules share."""

    by: dict[str, list[Finding]]
    ctx: CIContext

    def get(self, code: str) -> list[Finding]:
        return self.by.get(code, [])

    @cached_property
    def metric_rows(self) -> list[Finding]:
        """CI002 rows of non-timing metrics."""
        return [f for f in self.get("CI002") if not f.facts.get("is_timing")]

    @cached_property
    def loss_rows(self) -> list[Finding]:
        return [f for f in self.metric_rows if f.facts.get("is_loss")]

    @cached_property
    def drift(self) -> list[Finding]:
        """CI003: exact checks failed on values within tolerance."""
        return self.get("CI003")

    @cached_property
    def substantive(self) -> list[Finding]:
        """Metric rows whose failure no test-setup or drift finding explains: a failed tolerance
        check, or a failed exact check on a metric with no CI003 drift and no CI004 length row
        (a length mismatch whose common steps agree explains that metric's failure)."""
        drift_metrics = {m["metric"] for f in self.drift for m in f.facts.get("metrics", [])}
        lengths = self.get("CI004")
        setup_only = {x.facts.get("metric") for x in lengths if x.facts.get("common_ok")}
        length_metrics = {x.facts.get("metric") for x in lengths}
        return [
            f
            for f in self.metric_rows
            if f.facts["metric"] not in setup_only
            and (
                f.facts.get("tolerance_failed")
                or (
                    f.facts.get("exact_failed")
                    and f.facts["metric"] not in drift_metrics
                    and f.facts["metric"] not in length_metrics
                )
            )
        ]

    def crash(self, kind: str) -> list[Finding]:
        """CI011 rows of one kind (``infra`` or ``exception``)."""
        return [f for f in self.get("CI011") if f.facts.get("kind") == kind]

    @cached_property
    def lengths(self) -> list[Finding]:
        """CI004 rows where the run is not shorter than its golden values."""
        return [f for f in self.get("CI004") if f.facts.get("direction") != "actual_shorter"]

    @cached_property
    def short(self) -> list[Finding]:
        return [f for f in self.get("CI004") if f.facts.get("direction") == "actual_shorter"]

    @cached_property
    def timing_only(self) -> list[Finding]:
        """CI005 rows when no metric check failed with them."""
        timing = self.get("CI005")
        return [] if any(t.facts.get("metric_fail") for t in timing) else timing

    @cached_property
    def worst(self) -> Worst | None:
        """The substantive row that decides (losses first, then the largest deviation)."""
        if not self.substantive:
            return None
        f = max(
            self.substantive,
            key=lambda x: (x.facts.get("is_loss", False), x.facts.get("max_rel") or 0),
        )
        noise = [
            n for n in self.get("CI010") if n.facts.get("inside_band") or n.facts.get("spread_rel")
        ]
        tight = [n for n in noise if n.facts.get("metric") == f.facts["metric"]]
        rtols = [c["rtol"] for c in f.facts.get("checks", []) if c.get("rtol") and c.get("active")]
        fa = _failing_analysis(f)
        first_off = _first_off(f, rtols)
        return Worst(
            f=f,
            fa=fa,
            rtols=rtols,
            first_off=first_off,
            drift_like=_drift_like(f, fa, first_off),
            in_band=[n for n in tight if n.facts.get("inside_band")],
            tight=tight,
            # the old code on the same runner decides when the logs hold it: drift moves old and
            # new code alike, a change under test moves only the new code
            ref=decisive(self.ctx, f.facts["metric"]),
        )


def _first_off(f: Finding, rtols: list[float]) -> bool:
    """The metric already differs beyond its tolerance at the first compared step (a single
    value, a final metric of a dict, has no first step to be off at)."""
    first = f.facts.get("first_rel")
    return bool(
        (f.facts.get("n_common") or 2) > 1
        and first is not None
        and rtols
        and math.isfinite(first)
        and first > min(rtols)
    )


def _drift_like(f: Finding, fa: tuple[dict, dict] | None, first_off: bool) -> bool:
    """The failing check's deviations look like numerical drift: mixed signs (or one or two
    values, which have no sign pattern: their size decides), within numerical precision
    (:data:`.recompute.DRIFT_REL`) or within :data:`.recompute.DRIFT_MAX_EXCESS` of the
    tolerance without growing or persisting; not off at the first step beyond precision, not
    outside a golden-seed band."""
    if fa is None:
        return False
    an = fa[1]
    if not (an["sign"] == "mixed" or an["n"] < 3):
        return False
    small = an["max_rel"] <= DRIFT_REL or (
        an["excess"] <= DRIFT_MAX_EXCESS and not an["growing"] and not an.get("persistent")
    )
    band = f.facts.get("band")
    return (
        small
        and not (first_off and f.facts["first_rel"] > DRIFT_REL)
        and not (band and band.get("verdict") == "worse")
    )


# --- the rows' decisions --------------------------------------------------------------------------


def _remedies(f: Finding) -> list[NextAction]:
    """The next actions the detector of ``f`` recommends for it (``Detector.remedies_for``)."""
    return [
        NextAction(action=r.action, why=r.why, cost=r.cost)
        for r in detector_for(f.code).remedies_for(f)
    ]


def _infra(e: Evidence) -> CIVerdict | None:
    rows = e.crash("infra")
    if not rows:
        return None
    f = rows[0]
    v = CIVerdict(
        Outcome.CRASHED,
        Cause.INFRA_RUNTIME,
        0.85,
        f"The job failed on infrastructure ({f.facts.get('signature')}): {f.message}.",
        f,
    )
    v.actions += _remedies(f)
    return v


def _exception(e: Evidence) -> CIVerdict | None:
    rows = e.crash("exception")
    if not rows:
        return None
    f = rows[0]
    et = f.facts.get("exception_type", "")
    cause = Cause.DATA_CONFIG if et.rsplit(".", 1)[-1] in _DATA_EXC else Cause.CORRECTNESS_BUG
    v = CIVerdict(
        Outcome.CRASHED,
        cause,
        0.75,
        f"The job crashed before its gates could judge it: {f.message}.",
        f,
    )
    v.actions += _remedies(f)
    return v


def _golden_length(e: Evidence) -> CIVerdict | None:
    if not e.lengths or not all(f.facts.get("common_ok") for f in e.lengths) or e.substantive:
        return None
    f = e.lengths[0]
    ll = next((a.lengths for a in e.ctx.assertions if a.kind == "length" and a.lengths), None)
    v = CIVerdict(
        Outcome.SUCCEEDED,
        Cause.METRIC_POLICY,
        0.8,
        f"Harness error, not a model regression: the golden values of {f.facts['metric']} "
        f"have {f.facts['n_golden']} steps and the run {f.facts['n_actual']}"
        + (f" (the log's assertion: expected length {ll[0]}, actual {ll[1]})" if ll else "")
        + f", so a whole-array comparison fails on the shapes: {f.message}.",
        f,
    )
    v.actions += _remedies(f)
    return v


def _metric_definition(e: Evidence) -> CIVerdict | None:
    defn = e.get("CI009")
    if not defn or substantive_loss(e.substantive):
        return None
    f = defn[0]
    v = CIVerdict(
        Outcome.SUCCEEDED,
        Cause.METRIC_POLICY,
        0.75,
        f"The metric's definition changed with a library upgrade; the model did not: {f.message}.",
        f,
    )
    v.actions += _remedies(f)
    return v


def _old_code(w: Worst) -> CIVerdict:
    f, fa = w.f, w.fa
    pat = f" {f.facts['metric']}: {_pattern(*fa)}." if fa is not None else f" {f.message}."
    v = CIVerdict(
        Outcome.REGRESSED,
        Cause.CORRECTNESS_BUG if w.first_off else Cause.MODEL_CONVERGENCE,
        0.85 if w.ref is not None and w.ref.same_runner else 0.75,
        "A real change, not numerical drift: "
        + describe(w.ref)
        + ", while the new code fails it."
        + pat
        + (
            " The deviations are drift-sized, but drift would move the old code too."
            if w.drift_like
            else ""
        ),
        f,
    )
    v.actions.append(
        NextAction(
            action="Bisect the commits between the old code and this one on the same "
            "runner and image; do not refresh the golden values and do not widen the "
            "tolerance",
            why="the old code still reproduces the golden values where the new code does "
            "not: the change under test moved them",
            cost="hours",
        )
    )
    return v


def _first_step_old_code(e: Evidence) -> CIVerdict | None:
    w = e.worst
    return _old_code(w) if w is not None and w.old_ok and w.first_off else None


def _regression_old_code(e: Evidence) -> CIVerdict | None:
    w = e.worst
    return _old_code(w) if w is not None and w.old_ok else None


def _drift_summary(w: Worst, c: dict, an: dict, envs: list) -> str:
    env_txt = (
        f" after {envs[0].name} {envs[0].old or '?'} -> {envs[0].new or '?'} "
        f"({envs[0].source}:{envs[0].line})"
        if envs
        else ""
    )
    if an["n"] < 3:
        size = (
            f". A deviation within {fmt(an['excess'], 3)}x of the tolerance on "
            f"{an['n']} value(s): drift-sized, but one or two values show no sign "
            "pattern, so run the old code on this runner to tell drift from a change."
        )
    elif an["excess"] <= DRIFT_MAX_EXCESS:
        size = (
            ". Small deviations of both signs just past a tight tolerance: the gate is "
            "tighter than the platform's numerical noise."
        )
    else:
        size = (
            f". Deviations of both signs within numerical precision (max rel "
            f"{fmt(an['max_rel'], 3)} <= {fmt(DRIFT_REL)}): the gate is set at "
            "round-off level, tighter than the platform's numerical noise."
        )
    if w.old_fails:
        confirm = f" Confirmed: {describe(w.ref)}."
    elif envs:
        confirm = ""
    else:
        confirm = (
            " No environment change was seen in the logs; confirm with a rerun on the old image."
        )
    return (
        f"Numerical drift{env_txt}, not a model regression: {w.f.facts['metric']}: "
        + _pattern(c, an)
        + size
        + confirm
    )


def _tolerance_drift(e: Evidence) -> CIVerdict | None:
    w = e.worst
    if w is None or not w.drift_like or w.fa is None:
        return None
    f = w.f
    c, an = w.fa
    envs = e.ctx.env_changes
    widen = an.get("widen_to")
    key = "rel" if c.get("kind") == "approx" else "rtol"
    v = CIVerdict(
        Outcome.SUCCEEDED,
        Cause.METRIC_POLICY,
        0.9 if w.old_fails else 0.5 if an["n"] < 3 else 0.8 if envs else 0.6,
        _drift_summary(w, c, an, envs),
        f,
    )
    if widen:
        still = f"; it still fails any step off by more than {fmt(100 * widen, 3)}%" + (
            f" (a 1% shift of {f.facts['metric']} would fail by {fmt(0.01 / widen, 2)}x)"
            if widen < 0.01
            else ""
        )
        v.actions.append(
            NextAction(
                action=f"Widen the {f.facts['metric']} gate at {c['path']}:{c['line']} from "
                f"{key}={fmt(c['rtol'])} to {key}={fmt(widen)} (2x the largest deviation "
                f"seen, {fmt(an['rtol_needed'], 3)}){still}",
                why="the deviations are platform noise: mixed signs, not growing, within "
                f"{fmt(an['excess'], 3)}x of the tolerance",
                cost="minutes",
            )
        )
    v.actions.append(
        NextAction(
            action="Or re-record the golden values on the new environment and store the "
            "image/library versions with them",
            why="golden values hold for the stack that recorded them",
            cost="minutes",
        )
    )
    if not w.old_fails:
        v.actions.append(
            NextAction(
                action="To confirm, run the last green commit on this runner and image: if it "
                "still reproduces the golden values within the current tolerance, the change "
                "under test moved them (a real change, not drift)",
                why="drift moves old and new code alike; a regression moves only the new code",
                cost="minutes",
            )
        )
    return v


def _noise_band(e: Evidence) -> CIVerdict | None:
    w = e.worst
    if w is None or not (w.in_band or (w.tight and not w.f.facts.get("band"))):
        return None
    n = (w.in_band or w.tight)[0]
    v = CIVerdict(
        Outcome.SUCCEEDED,
        Cause.METRIC_POLICY,
        0.7,
        f"The gate fails on noise: {n.message}.",
        n,
    )
    v.actions.append(
        NextAction(
            action=f"Set the {w.f.facts['metric']} tolerance from the measured seed "
            f"spread ({fmt(100 * (n.facts.get('spread_rel') or 0), 3)}%) or "
            "compare with the band of several golden seeds",
            why="a gate tighter than run-to-run noise fails at random",
            cost="minutes",
        )
    )
    return v


def _first_step(e: Evidence) -> CIVerdict | None:
    w = e.worst
    if w is None or not w.first_off:
        return None
    f = w.f
    v = CIVerdict(
        Outcome.REGRESSED,
        Cause.CORRECTNESS_BUG,
        0.7,
        f"{f.facts['metric']} already differs at step {f.facts.get('first_step')} (rel "
        f"{fmt(f.facts['first_rel'], 3)} > {fmt(min(w.rtols))}), before optimisation could move it: "
        f"the computation or its inputs changed. {f.message}.",
        f,
    )
    v.actions.append(
        NextAction(
            action="Compare the step-1 forward pass (same batch, same weights) between "
            "the last green commit and this one",
            why="a first-step difference is a correctness/data change, not convergence",
            cost="hours",
        )
    )
    return v


def _why_real(an: dict) -> str:
    """Why a failing check's deviations are not numerical drift, in a few words."""
    if an["excess"] > DRIFT_MAX_EXCESS * 10:
        return "orders of magnitude outside the tolerance"
    if an["excess"] > DRIFT_MAX_EXCESS:
        return "well outside the tolerance"
    if an["sign"] != "mixed":
        return "one-signed"
    if an["growing"]:
        return "growing along the steps"
    return f"outside at every step from step {an['onset_step']}"


def _regression(e: Evidence) -> CIVerdict | None:
    w = e.worst
    if w is None:
        return None
    f = w.f
    grow = (f.facts.get("late_rel") or 0) > 2 * (f.facts.get("early_rel") or 0)
    band = f.facts.get("band")
    worse = bool(band and band.get("verdict") == "worse")
    extra = (
        f" It is outside the band of {band['n']} golden seeds ({fmt(band['band_lo'])}.."
        f"{fmt(band['band_hi'])})."
        if band and worse
        else ""
    )
    pat = ""
    if w.fa is not None:
        c, an = w.fa
        pat = f" {f.facts['metric']}: {_pattern(c, an)} ({_why_real(an)}: not numerical drift)."
    if w.old_fails:
        extra += (
            f" But {describe(w.ref)}: the environment, not the change under test, moved the values."
        )
    v = CIVerdict(
        Outcome.REGRESSED,
        Cause.MODEL_CONVERGENCE,
        0.85 if worse else 0.8,
        f"A real training regression:{pat or ' ' + f.message + '.'}"
        + (
            f" The gap grows from {fmt(100 * f.facts['early_rel'], 3)}% early to "
            f"{fmt(100 * f.facts['late_rel'], 3)}% late."
            if grow
            else ""
        )
        + extra,
        f,
    )
    v.actions.append(
        NextAction(
            action="Bisect the environment change (image, driver, libraries) with the "
            "old code: it fails the gate too"
            if w.old_fails
            else "Bisect between the last green commit and this one with the same "
            "config and image; do not refresh the golden values",
            why="the loss left its tolerance: the change under test made training worse",
            cost="hours",
        )
    )
    return v


def _exact_code_change(e: Evidence) -> CIVerdict | None:
    ref0 = decisive(e.ctx) if e.drift else None
    if ref0 is None or not ref0.reproduces:
        return None
    f = e.drift[0]
    v = CIVerdict(
        Outcome.SUCCEEDED,
        Cause.METRIC_POLICY,
        0.6,
        "The change under test moved the values within tolerance, not the environment: "
        f"{describe(ref0)}, while the new code is not bit-identical ({f.message.split('. Numerical')[0]}).",
        f,
    )
    v.actions.append(
        NextAction(
            action="If the numerical change is intended (operation order, a fused kernel), "
            "re-record the golden values with this commit; otherwise bisect the commits since "
            "the old code",
            why="the old code reproduces the golden values bit-exactly on this runner",
            cost="minutes",
        )
    )
    return v


def _exact_drift(e: Evidence) -> CIVerdict | None:
    if not e.drift:
        return None
    f = e.drift[0]
    v = CIVerdict(
        Outcome.SUCCEEDED,
        Cause.METRIC_POLICY,
        0.85,
        f"Environment drift, not a model regression: {f.message}.",
        f,
    )
    v.actions.append(
        NextAction(
            action=f"Refresh the golden values for the new image ({_new_env(e.ctx)}) and keep the "
            "tolerance (approximate) gate",
            why="the values agree within tolerance; only bit-exactness changed with the "
            "environment",
            cost="minutes",
        )
    )
    v.actions.append(
        NextAction(
            action="Keep the exact-match check as a same-image reproducibility check "
            "(non-blocking, or re-recorded with every image bump)",
            why="bit-exact goldens cannot survive a container or library change",
            cost="minutes",
        )
    )
    return v


def _timing(e: Evidence) -> CIVerdict | None:
    if not e.timing_only or not e.timing_only[0].facts.get("checks"):
        return None
    f = e.timing_only[0]
    v = CIVerdict(
        Outcome.SLOW,
        Cause.INFRA_RUNTIME,
        0.75,
        f"Only a timing gate failed; the loss and metric checks pass, so this is a runtime "
        f"slowdown, not a model regression: {f.message}.",
        f,
    )
    v.actions.append(
        NextAction(
            action="Time the job on the previous and the current environment on the same "
            "hardware; fix the slowdown or re-baseline the bound if it is expected",
            why="the runtime got slower; the model did not change",
            cost="hours",
        )
    )
    return v


def _timeout(e: Evidence) -> CIVerdict | None:
    if not e.timing_only or e.timing_only[0].facts.get("checks"):
        return None
    f = e.timing_only[0]
    v = CIVerdict(
        Outcome.SLOW,
        Cause.METRIC_POLICY,
        0.7,
        f"The job hit its time limit while every metric check passed. {f.message}.",
        f,
    )
    v.actions.append(
        NextAction(
            action="Raise the job timeout or shorten the test (fewer steps)",
            why="the metrics pass; the limit is the failing gate",
            cost="minutes",
        )
    )
    return v


def _short(e: Evidence) -> CIVerdict | None:
    if not e.short:
        return None
    f = e.short[0]
    return CIVerdict(
        Outcome.CRASHED,
        Cause.INCONCLUSIVE,
        0.4,
        f"The run logged fewer steps than its golden values and nothing in the logs says why: "
        f"{f.message}.",
        f,
    )


def _failed_tests(ctx: CIContext) -> list[str]:
    return [t.test for t in ctx.tests if t.outcome in ("failed", "error")]


def _missing_inputs(ctx: CIContext) -> list[TracedInput]:
    """Value files a failing test reads that could not be read (every test's when none failed)."""
    failed = _failed_tests(ctx)
    return [
        x
        for x in ctx.traced
        if x.status in ("missing", "refused", "too_deep", "too_big", "unreadable")
        and (x.test in failed or not failed)
    ]


def _printed(ctx: CIContext) -> str:
    """What the log's assertion printed for a failing test, as a sentence ('' when none)."""
    failed = _failed_tests(ctx)
    printed = [a for a in ctx.assertions if a.test in failed or not failed]
    if not printed:
        return ""
    a = printed[0]
    figs = []
    if a.n_mismatch is not None:
        figs.append(f"{a.n_mismatch} of {a.n_total} elements mismatched")
    if a.max_rel is not None:
        figs.append(f"max rel diff {fmt(a.max_rel, 3)}")
    if a.lengths:
        figs.append(f"lengths {a.lengths[0]} and {a.lengths[1]}")
    return (
        f" The log's assertion ({a.source}:{a.line}, {a.kind}) printed "
        + (", ".join(figs) or a.text[:120])
        + "; without the values the pattern (drift or regression) cannot be told."
    )


def _missing_input(e: Evidence) -> CIVerdict | None:
    missing = _missing_inputs(e.ctx) if e.get("CI007") else []
    if not missing:
        return None
    f = e.get("CI007")[0]
    said = _printed(e.ctx)
    x = missing[0]
    what = {
        "missing": "was neither in --logs nor in the repository",
        "refused": "is outside the repository (not opened)",
    }.get(x.status, f"could not be read ({x.detail})")
    r0 = decisive(e.ctx)
    if r0 is not None:
        said += f" Note: {describe(r0)}: " + (
            "the change under test, not the environment, moved the values."
            if r0.reproduces
            else "the environment moved the values for the old code too."
        )
    v = CIVerdict(
        Outcome.UNKNOWN,
        Cause.INCONCLUSIVE,
        0.3,
        f"Not judged: {x.test} failed, and the {x.role}-values file it reads ({x.path}, "
        f"{x.source}:{x.line}) {what}, so its gate could not be recomputed.{said}",
        f,
    )
    v.actions.append(
        NextAction(
            action=f"Pass the job's {x.path} (the CI artifact the test reads) with "
            f"--logs {posixpath.basename(x.path)}"
            if x.role == "actual"
            else f"Pass the golden file the test reads ({x.path}) with --golden",
            why=f"{x.source}:{x.line} reads it; the gate is recomputed from it",
            cost="minutes",
        )
    )
    return v


def _unexplained(e: Evidence) -> CIVerdict | None:
    if not e.get("CI007"):
        return None
    f = e.get("CI007")[0]
    v = CIVerdict(
        Outcome.UNKNOWN,
        Cause.INCONCLUSIVE,
        0.3,
        f"Not judged: the logs show failures that no collected gate or value explains: "
        f"{f.message}.{_printed(e.ctx)}",
        f,
    )
    need = []
    if not e.ctx.goldens:
        need.append("the golden files (--golden)")
    if not e.ctx.actuals:
        need.append("the job's metric values or metric log (--logs)")
    v.actions.append(
        NextAction(
            action="Pass " + " and ".join(need)
            if need
            else "Check which test failed and what it compares: the golden and actual "
            "values given do not cover its metric",
            why="without values the gates cannot be recomputed",
            cost="minutes",
        )
    )
    return v


def _healthy(e: Evidence) -> CIVerdict | None:
    return CIVerdict(
        Outcome.SUCCEEDED,
        Cause.HEALTHY,
        0.7,
        "Every gate passes on recomputation and the logs show no failure.",
    )


# --- the table ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CICase:
    """One example of a CI rule: findings ``(code, facts)``, context fields (``CIContext`` field
    -> rows as dicts of the field's model), and the verdict ``(outcome, cause)`` the rule gives,
    or ``None`` where it must not fire."""

    name: str
    findings: tuple[tuple[str, dict[str, Any]], ...] = ()
    expect: tuple[str, str] | None = None
    context: dict[str, tuple[dict[str, Any], ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class CIRule:
    """One row of the CI table: tried in ``precedence`` order, the first that fires decides."""

    id: str
    precedence: int
    needs: str
    codes: tuple[str, ...]
    outcomes: tuple[Outcome, ...]
    causes: tuple[Cause, ...]
    when: Callable[[Evidence], CIVerdict | None]
    cases: tuple[CICase, ...] = ()
    #: the verdict's ``rule`` when it differs from ``id`` (two rows giving one class)
    label: str = ""

    def apply(self, e: Evidence) -> CIVerdict | None:
        v = self.when(e)
        if v is not None:
            v.rule = self.label or self.id
        return v


_MODELS: dict[str, type] = {
    "env_changes": EnvChange,
    "reference": ReferenceRun,
    "traced": TracedInput,
    "tests": TestResult,
    "assertions": LogAssertion,
}


def case_evidence(case: CICase) -> Evidence:
    """The :class:`Evidence` of a case: real findings and a real :class:`CIContext`."""
    findings = [
        Finding(
            code=code,
            name=code,
            severity=Severity.ERROR,
            message=f"{code} fired",
            facts=dict(facts),
        )
        for code, facts in case.findings
    ]
    ctx = CIContext(repo="case")
    for name, rows in case.context.items():
        setattr(ctx, name, [_MODELS[name](**r) for r in rows])
    return Evidence(_by(findings), ctx)


def _check(
    excess: float,
    sign: str = "mixed",
    n: int = 40,
    max_rel: float = 2e-4,
    growing: bool = False,
    persistent: bool = False,
) -> dict[str, Any]:
    """A failing active tolerance check (rtol 1e-4) with its recomputed deviation pattern."""
    n_out = max(1, n // 4)
    return {
        "kind": "allclose",
        "path": "tests/test_golden.py",
        "line": 12,
        "rtol": 1e-4,
        "atol": 0.0,
        "active": True,
        "passed": False,
        "analysis": {
            "n": n,
            "n_outside": n_out,
            "max_rel": max_rel,
            "median_rel": max_rel / 2,
            "excess": excess,
            "sign": sign,
            "n_pos": n // 2 if sign == "mixed" else n,
            "n_neg": n - n // 2 if sign == "mixed" else 0,
            "onset_step": 5,
            "outside_from_step": None,
            "growing": growing,
            "persistent": persistent,
            "widen_to": 2 * max_rel,
            "rtol_needed": max_rel,
        },
    }


def _gated(
    metric: str = "loss",
    check: dict[str, Any] | None = None,
    first_rel: float = 1e-6,
    **facts: Any,
) -> tuple[str, dict[str, Any]]:
    """A CI002 row of a gated loss whose tolerance check failed (``check``, default: drift-sized)."""
    c = check if check is not None else _check(1.8)
    row = {
        "metric": metric,
        "is_loss": True,
        "is_timing": False,
        "tolerance_failed": True,
        "max_rel": c["analysis"]["max_rel"],
        "first_step": 1,
        "first_rel": first_rel,
        "early_rel": 1e-4,
        "late_rel": 1e-4,
        "n_common": 40,
        "checks": [c],
    }
    row.update(facts)
    return ("CI002", row)


_FAILED = ("CI007", {"failed_tests": ["tests/test_golden.py::test_loss"]})
_ENV = {
    "name": "image",
    "old": "24.05",
    "new": "24.09",
    "source": "ci.log",
    "line": 1,
    "text": "bump",
}


def _ref(reproduces: bool) -> dict[str, Any]:
    return {
        "kind": "session",
        "source": "ci.log",
        "line": 40,
        "text": "reference run",
        "label": "main",
        "reproduces": reproduces,
        "same_runner": True,
    }


_REGRESSION = _gated(
    check=_check(40.0, sign="positive", max_rel=4e-3), first_rel=1e-6, late_rel=4e-3
)
_DRIFT = _gated()
_FIRST_OFF = _gated(check=_check(40.0, sign="positive", max_rel=4e-3), first_rel=4e-3)
_EXACT = ("CI003", {"metrics": [{"metric": "loss"}]})
_SPREAD = ("CI010", {"metric": "loss", "spread_rel": 5e-3, "inside_band": True})


CI_RULES: tuple[CIRule, ...] = (
    CIRule(
        "infra",
        10,
        "an infrastructure signature in the job's log (CI011 kind infra)",
        ("CI011",),
        (Outcome.CRASHED,),
        (Cause.INFRA_RUNTIME,),
        _infra,
        (
            CICase(
                "nccl-timeout",
                (("CI011", {"kind": "infra", "signature": "nccl"}), _REGRESSION),
                ("crashed", "infra_runtime"),
            ),
            CICase("exception-is-not-infra", (("CI011", {"kind": "exception"}),)),
        ),
    ),
    CIRule(
        "exception",
        20,
        "an exception in the code under test (CI011 kind exception); missing "
        "files and bad config are data_config",
        ("CI011",),
        (Outcome.CRASHED,),
        (Cause.CORRECTNESS_BUG, Cause.DATA_CONFIG),
        _exception,
        (
            CICase(
                "keyerror",
                (("CI011", {"kind": "exception", "exception_type": "KeyError"}),),
                ("crashed", "correctness_bug"),
            ),
            CICase(
                "missing-file",
                (("CI011", {"kind": "exception", "exception_type": "builtins.FileNotFoundError"}),),
                ("crashed", "data_config"),
            ),
            CICase("no-crash", (_REGRESSION,)),
        ),
    ),
    CIRule(
        "golden_length",
        30,
        "golden values of another length whose common steps agree (CI004 "
        "common_ok), and no substantive metric failure",
        ("CI004",),
        (Outcome.SUCCEEDED,),
        (Cause.METRIC_POLICY,),
        _golden_length,
        (
            CICase(
                "longer-run",
                (
                    (
                        "CI004",
                        {
                            "metric": "loss",
                            "common_ok": True,
                            "n_golden": 40,
                            "n_actual": 50,
                            "golden_source": "golden.json",
                        },
                    ),
                ),
                ("succeeded", "metric_policy"),
            ),
            CICase("common-steps-differ", (("CI004", {"metric": "loss", "common_ok": False}),)),
            CICase(
                "with-a-regression", (("CI004", {"metric": "acc", "common_ok": True}), _REGRESSION)
            ),
        ),
    ),
    CIRule(
        "metric_definition",
        40,
        "a metric moved with a metric-library upgrade (CI009) while no loss failed",
        ("CI009",),
        (Outcome.SUCCEEDED,),
        (Cause.METRIC_POLICY,),
        _metric_definition,
        (
            CICase(
                "f1-after-sklearn-bump",
                (
                    (
                        "CI009",
                        {
                            "metric": "val_f1",
                            "library": "scikit-learn",
                            "old": "1.3.2",
                            "new": "1.5.0",
                        },
                    ),
                ),
                ("succeeded", "metric_policy"),
            ),
            CICase("loss-failed-too", (("CI009", {"metric": "val_f1"}), _REGRESSION)),
        ),
    ),
    CIRule(
        "first_step_old_code",
        50,
        "a substantive failure off at the first step, and the old "
        "code on the same runner reproduces the golden values",
        ("CI002",),
        (Outcome.REGRESSED,),
        (Cause.CORRECTNESS_BUG,),
        _first_step_old_code,
        (
            CICase(
                "old-code-passes",
                (_FIRST_OFF,),
                ("regressed", "correctness_bug"),
                {"reference": (_ref(True),)},
            ),
            CICase("no-old-code", (_FIRST_OFF,)),
        ),
        label="first_step",
    ),
    CIRule(
        "regression_old_code",
        60,
        "a substantive failure (tolerance failed, or an exact check "
        "beyond drift), and the old code on the same runner reproduces the golden values",
        ("CI002",),
        (Outcome.REGRESSED,),
        (Cause.MODEL_CONVERGENCE, Cause.CORRECTNESS_BUG),
        _regression_old_code,
        (
            CICase(
                "drift-sized-but-old-code-passes",
                (_DRIFT,),
                ("regressed", "model_convergence"),
                {"reference": (_ref(True),), "env_changes": (_ENV,)},
            ),
            CICase("old-code-fails-too", (_DRIFT,), None, {"reference": (_ref(False),)}),
        ),
    ),
    CIRule(
        "tolerance_drift",
        70,
        "a failing tolerance check with mixed-sign deviations within "
        "numerical precision or a few times the tolerance, not growing, not persistent "
        "(CI002 analysis)",
        ("CI002", "CI008"),
        (Outcome.SUCCEEDED,),
        (Cause.METRIC_POLICY,),
        _tolerance_drift,
        (
            CICase(
                "after-image-bump",
                (_DRIFT, ("CI008", {})),
                ("succeeded", "metric_policy"),
                {"env_changes": (_ENV,)},
            ),
            CICase(
                "old-code-fails-too",
                (_DRIFT,),
                ("succeeded", "metric_policy"),
                {"reference": (_ref(False),)},
            ),
            CICase("one-signed", (_gated(check=_check(1.8, sign="positive")),)),
            CICase(
                "growing-past-precision", (_gated(check=_check(1.8, growing=True, max_rel=4e-3)),)
            ),
        ),
    ),
    CIRule(
        "noise_band",
        80,
        "the failing metric's seed spread or golden-seed band (CI010) holds the run",
        ("CI002", "CI010"),
        (Outcome.SUCCEEDED,),
        (Cause.METRIC_POLICY,),
        _noise_band,
        (
            CICase("inside-seed-band", (_REGRESSION, _SPREAD), ("succeeded", "metric_policy")),
            CICase("no-seed-spread", (_REGRESSION,)),
        ),
    ),
    CIRule(
        "first_step",
        90,
        "a substantive failure already off at the first compared step",
        ("CI002",),
        (Outcome.REGRESSED,),
        (Cause.CORRECTNESS_BUG,),
        _first_step,
        (
            CICase("off-at-step-1", (_FIRST_OFF,), ("regressed", "correctness_bug")),
            CICase("matches-at-step-1", (_REGRESSION,)),
        ),
    ),
    CIRule(
        "regression",
        100,
        "any other substantive failure: the change made training worse",
        ("CI002",),
        (Outcome.REGRESSED,),
        (Cause.MODEL_CONVERGENCE,),
        _regression,
        (
            CICase("one-signed-growing", (_REGRESSION,), ("regressed", "model_convergence")),
            CICase(
                "old-code-fails-too",
                (_REGRESSION,),
                ("regressed", "model_convergence"),
                {"reference": (_ref(False),)},
            ),
            CICase("nothing-failed", (_gated(tolerance_failed=False),)),
        ),
    ),
    CIRule(
        "exact_code_change",
        110,
        "only exact checks failed on values within tolerance (CI003), "
        "and the old code reproduces the golden values bit-exactly",
        ("CI003",),
        (Outcome.SUCCEEDED,),
        (Cause.METRIC_POLICY,),
        _exact_code_change,
        (
            CICase(
                "old-code-bit-exact",
                (_EXACT,),
                ("succeeded", "metric_policy"),
                {"reference": (_ref(True),)},
            ),
            CICase("no-old-code", (_EXACT,)),
        ),
    ),
    CIRule(
        "exact_drift",
        120,
        "only exact checks failed on values within tolerance (CI003): environment drift",
        ("CI003",),
        (Outcome.SUCCEEDED,),
        (Cause.METRIC_POLICY,),
        _exact_drift,
        (
            CICase(
                "image-bump", (_EXACT,), ("succeeded", "metric_policy"), {"env_changes": (_ENV,)}
            ),
            CICase("no-exact-failure", (_FAILED,)),
        ),
    ),
    CIRule(
        "timing",
        130,
        "only timing / throughput gates failed while the metric checks passed (CI005 with checks)",
        ("CI005",),
        (Outcome.SLOW,),
        (Cause.INFRA_RUNTIME,),
        _timing,
        (
            CICase(
                "iteration-time",
                (("CI005", {"checks": [{"metric": "iteration-time"}]}),),
                ("slow", "infra_runtime"),
            ),
            CICase("metric-failed-too", (("CI005", {"checks": [{}], "metric_fail": True}),)),
        ),
    ),
    CIRule(
        "timeout",
        140,
        "the job timed out while the metric checks passed (CI005, no timing check)",
        ("CI005",),
        (Outcome.SLOW,),
        (Cause.METRIC_POLICY,),
        _timeout,
        (
            CICase("job-timeout", (("CI005", {"timeout": True}),), ("slow", "metric_policy")),
            CICase("timing-gate", (("CI005", {"checks": [{}]}),)),
        ),
    ),
    CIRule(
        "short",
        150,
        "the run logged fewer steps than its golden values (CI004 actual_shorter)",
        ("CI004",),
        (Outcome.CRASHED,),
        (Cause.INCONCLUSIVE,),
        _short,
        (
            CICase(
                "stopped-early",
                (("CI004", {"direction": "actual_shorter"}),),
                ("crashed", "inconclusive"),
            ),
            CICase("longer", (("CI004", {"direction": "actual_longer"}),)),
        ),
    ),
    CIRule(
        "missing_input",
        160,
        "a failing test (CI007) reads a value file that could not be read",
        ("CI007",),
        (Outcome.UNKNOWN,),
        (Cause.INCONCLUSIVE,),
        _missing_input,
        (
            CICase(
                "golden-file-missing",
                (_FAILED,),
                ("unknown", "inconclusive"),
                {
                    "traced": (
                        {
                            "test": "t",
                            "path": "golden.json",
                            "role": "golden",
                            "status": "missing",
                            "source": "tests/test_golden.py",
                            "line": 3,
                        },
                    )
                },
            ),
            CICase("nothing-traced", (_FAILED,)),
        ),
    ),
    CIRule(
        "unexplained",
        170,
        "failures in the logs (CI007) that no collected gate or value explains",
        ("CI007",),
        (Outcome.UNKNOWN,),
        (Cause.INCONCLUSIVE,),
        _unexplained,
        (
            CICase("failed-test-no-values", (_FAILED,), ("unknown", "inconclusive")),
            CICase("no-failure-line", ()),
        ),
    ),
    CIRule(
        "healthy",
        180,
        "nothing failed",
        (),
        (Outcome.SUCCEEDED,),
        (Cause.HEALTHY,),
        _healthy,
        (CICase("all-pass", (_gated(tolerance_failed=False),), ("succeeded", "healthy")),),
    ),
)


def first_match(e: Evidence) -> CIVerdict:
    """The verdict of the first row of :data:`CI_RULES` that fires (``healthy`` always does)."""
    for rule in CI_RULES:
        v = rule.apply(e)
        if v is not None:
            return v
    raise AssertionError("the healthy row always fires")


def table_markdown() -> str:
    """:data:`CI_RULES` as a Markdown table (docs/ci.md)."""
    out = ["| precedence | rule | needs | findings | outcome / cause |", "|---|---|---|---|---|"]
    for r in CI_RULES:
        oc = ", ".join(o.value for o in r.outcomes) + " / " + ", ".join(c.value for c in r.causes)
        out.append(f"| {r.precedence} | {r.id} | {r.needs} | {', '.join(r.codes) or '-'} | {oc} |")
    return "\n".join(out)


def classify(findings: list[Finding], ctx: CIContext) -> CIVerdict:
    """The verdict of the first row of :data:`CI_RULES` that fires, with the per-metric
    deviation patterns, the ungated metrics and the hypothesis ledger. Never raises for
    missing findings."""
    e = Evidence(_by(findings), ctx)
    v = first_match(e)
    _add_patterns(v, e.metric_rows)
    for u in e.get("CI006"):
        v.actions += _remedies(u)
        v.conclusions.append(u.message)
    rejected_by = [
        f"{f.facts['metric']} max rel diff {fmt(f.facts['max_rel'], 3)}: every tolerance "
        "check passes"
        for f in e.metric_rows
        if not f.facts.get("tolerance_failed") and f.facts.get("checks")
    ]
    loss_txt = "; ".join(
        f"{f.facts['metric']} max rel {fmt(f.facts['max_rel'], 3)}" for f in e.loss_rows
    )
    v.hypotheses = _ledger(v, e.by, ctx, rejected_by, loss_txt)
    if v.primary is not None:
        v.conclusions.insert(0, v.primary.message)
    return v


def _add_patterns(v: CIVerdict, metric_rows: list[Finding]) -> None:
    """Per gated metric, the deviation pattern of its failing tolerance check as a conclusion."""
    for row in metric_rows:
        fa_ = _failing_analysis(row)
        if fa_ is None:
            continue
        txt = f"{row.facts['metric']}: {_pattern(*fa_)}"
        band = row.facts.get("band")
        if band:
            txt += (
                f"; against {band['n']} golden seeds the run is {band['verdict'].replace('_', ' ')}"
                f" (band {fmt(band['band_lo'])}..{fmt(band['band_hi'])})"
            )
        if row.facts.get("spread_rel") is not None:
            txt += f"; seed-to-seed spread {fmt(100 * row.facts['spread_rel'], 3)}% (median relative range)"
        if txt not in v.conclusions:
            v.conclusions.append(txt)


def substantive_loss(rows: list[Finding]) -> bool:
    return any(f.facts.get("is_loss") for f in rows)


def _regression_hypothesis(
    v: CIVerdict, rejected_by: list[str], ref_for: list[str], ref_against: list[str]
) -> Hypothesis:
    """Model/convergence regression: supported by the regression rows, rejected by passing checks."""
    r = v.rule
    return _hyp(
        "model/convergence regression: the change under test made training worse",
        r in ("regression", "regression_old_code"),
        Cause.MODEL_CONVERGENCE,
        "rerun the last green commit on the same image and hardware; a regression reproduces there only "
        "with the new code",
        for_=([v.summary] if r in ("regression", "regression_old_code") else []) + ref_for,
        against=(
            (
                ["the deviations are drift-sized: " + v.summary.split(": ", 1)[-1]]
                if r == "tolerance_drift"
                else rejected_by
            )
            if r not in ("regression", "regression_old_code")
            else []
        )
        + ref_against,
    )


def _drift_hypothesis(
    v: CIVerdict,
    by: dict[str, list[Finding]],
    ctx: CIContext,
    ref_for: list[str],
    ref_against: list[str],
) -> Hypothesis:
    """Numerical drift from an environment change: rejected when the old code reproduces."""
    r = v.rule
    return _hyp(
        "numerical drift from an environment change (image, library, hardware)",
        False
        if ref_for
        else True
        if r in ("exact_drift", "tolerance_drift")
        else None
        if ctx.env_changes
        else False,
        Cause.METRIC_POLICY,
        "rerun the job twice on the new image (bit-identical to each other) and once on the old image "
        "(matches the old golden values)",
        for_=([v.summary] if r == "tolerance_drift" else [])
        + ref_against
        + [f.message for f in by.get("CI003", [])]
        + [
            f"{e.name}: {e.old or '?'} -> {e.new or '?'} ({e.source}:{e.line})"
            for e in ctx.env_changes[:2]
        ],
        against=ref_for
        + (
            []
            if r in ("exact_drift", "tolerance_drift") or ctx.env_changes
            else ["no environment change seen in the logs"]
        ),
    )


def _ledger(
    v: CIVerdict,
    by: dict[str, list[Finding]],
    ctx: CIContext,
    rejected_by: list[str],
    loss_txt: str,
) -> list[Hypothesis]:
    r = v.rule
    ref = decisive(ctx)
    ref_for = [describe(ref)] if ref is not None and ref.reproduces else []
    ref_against = [describe(ref)] if ref is not None and ref.reproduces is False else []
    hs = [
        _regression_hypothesis(v, rejected_by, ref_for, ref_against),
        _drift_hypothesis(v, by, ctx, ref_for, ref_against),
        _hyp(
            "test setup: golden values of another length or step interval",
            r == "golden_length",
            Cause.METRIC_POLICY,
            "regenerate the golden file for the current length and rerun the comparison",
            for_=[f.message for f in by.get("CI004", [])],
            against=[] if by.get("CI004") else ["golden and actual cover the same steps"],
        ),
        _hyp(
            "runtime slowdown or a tight time limit (timing / timeout gate)",
            r in ("timing", "timeout") or None if by.get("CI006") else r in ("timing", "timeout"),
            Cause.INFRA_RUNTIME,
            "time the same job on the old and new environment on the same node",
            for_=[f.message for f in by.get("CI005", []) + by.get("CI006", [])],
        ),
        _hyp(
            "correctness bug or changed inputs (differs from the first step, or an exception)",
            r in ("first_step", "exception"),
            Cause.CORRECTNESS_BUG,
            "compare the step-1 forward pass on one fixed batch between the two versions",
            for_=[v.summary] if r in ("first_step", "exception") else [],
            against=[
                f"{f.facts['metric']} matches at step {f.facts.get('first_step')} (rel "
                f"{fmt(f.facts.get('first_rel'), 3)})"
                for f in by.get("CI002", [])
                if f.facts.get("is_loss")
                and f.facts.get("first_rel") is not None
                and r not in ("first_step", "exception")
            ][:2],
        ),
    ]
    if by.get("CI009") or r == "metric_definition":
        hs.append(
            _hyp(
                "the metric's definition changed with a library upgrade",
                r == "metric_definition",
                Cause.METRIC_POLICY,
                "recompute the metric from the same predictions with both versions",
                for_=[f.message for f in by.get("CI009", [])],
            )
        )
    if by.get("CI010"):
        hs.append(
            _hyp(
                "the gate is tighter than run-to-run noise",
                r == "noise_band",
                Cause.METRIC_POLICY,
                "rerun the baseline config with 3 seeds and compare the spread with the tolerance",
                for_=[f.message for f in by["CI010"]],
            )
        )
    if by.get("CI011"):
        hs.append(
            _hyp(
                "infrastructure failure",
                r == "infra",
                Cause.INFRA_RUNTIME,
                "rerun on another node",
                for_=[f.message for f in by["CI011"] if f.facts.get("kind") == "infra"],
            )
        )
    return hs
