"""The CI verdict: the CI findings in, the failure class, recommendation and ledger out.

Ordered rules, first match wins (the order is the audit workflow's: what
stopped the job before what a gate said about it; test setup before values;
the specific explanation before the general one):

1. an infrastructure signature (CI011 infra) -> ``crashed`` / ``infra_runtime``;
2. an exception in the code under test (CI011 exception) -> ``crashed`` /
   ``correctness_bug`` (``data_config`` for missing files / bad config);
3. a golden file of another length whose common steps pass (CI004) ->
   ``succeeded`` / ``metric_policy`` (test setup);
4. a metric moved with a metric-library upgrade while the loss matched (CI009)
   -> ``succeeded`` / ``metric_policy``;
5. a tolerance check failed on a non-timing metric (CI002 error), or an exact
   check failed beyond drift: inside the golden seeds' noise band (CI010) ->
   ``metric_policy``; already off at the first step -> ``regressed`` /
   ``correctness_bug``; otherwise ``regressed`` / ``model_convergence``;
6. only exact-match checks failed on values within tolerance (CI003) ->
   ``succeeded`` / ``metric_policy`` (environment drift);
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
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..report import Cause, Finding, Hypothesis, NextAction, Outcome
from ..signal import fmt
from .model import CIContext
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


@dataclass
class CIVerdict:
    outcome: Outcome
    cause: Cause
    confidence: float
    summary: str
    primary: Finding | None = None
    actions: list[NextAction] = field(default_factory=list)
    hypotheses: list[Hypothesis] = field(default_factory=list)
    conclusions: list[str] = field(default_factory=list)
    rule: str = ""


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


def classify(findings: list[Finding], ctx: CIContext) -> CIVerdict:
    """Apply the rules of the module docstring. Never raises for missing findings."""
    by = _by(findings)
    ci002 = by.get("CI002", [])
    metric_rows = [f for f in ci002 if not f.facts.get("is_timing")]
    loss_rows = [f for f in metric_rows if f.facts.get("is_loss")]
    drift = by.get("CI003", [])
    drift_metrics = {m["metric"] for f in drift for m in f.facts.get("metrics", [])}
    # a length mismatch whose common steps agree explains that metric's failure (rule 3)
    setup_only = {x.facts.get("metric") for x in by.get("CI004", []) if x.facts.get("common_ok")}
    substantive = [
        f
        for f in metric_rows
        if f.facts["metric"] not in setup_only
        and (
            f.facts.get("tolerance_failed")
            or (
                f.facts.get("exact_failed")
                and f.facts["metric"] not in drift_metrics
                and not any(x.facts.get("metric") == f.facts["metric"] for x in by.get("CI004", []))
            )
        )
    ]
    crash = by.get("CI011", [])
    lengths = [f for f in by.get("CI004", []) if f.facts.get("direction") != "actual_shorter"]
    short = [f for f in by.get("CI004", []) if f.facts.get("direction") == "actual_shorter"]
    timing = by.get("CI005", [])
    ungated = by.get("CI006", [])
    noise = [
        f for f in by.get("CI010", []) if f.facts.get("inside_band") or f.facts.get("spread_rel")
    ]
    defn = by.get("CI009", [])

    loss_txt = "; ".join(
        f"{f.facts['metric']} max rel {fmt(f.facts['max_rel'], 3)}" for f in loss_rows
    )
    regression_rejected_by = [
        f"{f.facts['metric']} max rel diff {fmt(f.facts['max_rel'], 3)}: every tolerance "
        "check passes"
        for f in metric_rows
        if not f.facts.get("tolerance_failed") and f.facts.get("checks")
    ]
    v: CIVerdict
    infra = [f for f in crash if f.facts.get("kind") == "infra"]
    exc = [f for f in crash if f.facts.get("kind") == "exception"]
    if infra:
        f = infra[0]
        v = CIVerdict(
            Outcome.CRASHED,
            Cause.INFRA_RUNTIME,
            0.85,
            f"The job failed on infrastructure ({f.facts.get('signature')}): {f.message}.",
            f,
            rule="infra",
        )
        v.actions.append(
            NextAction(
                action="Rerun the job; if it recurs, fix the resource the signature names "
                "(memory, interconnect, disk, node)",
                why="an infrastructure failure says nothing about the model",
                cost="minutes",
            )
        )
    elif exc:
        f = exc[0]
        et = f.facts.get("exception_type", "")
        cause = Cause.DATA_CONFIG if et.rsplit(".", 1)[-1] in _DATA_EXC else Cause.CORRECTNESS_BUG
        v = CIVerdict(
            Outcome.CRASHED,
            cause,
            0.75,
            f"The job crashed before its gates could judge it: {f.message}.",
            f,
            rule="exception",
        )
        v.actions.append(
            NextAction(
                action=f"Reproduce the exception at {f.facts.get('raising') or 'the raising frame'}"
                " on one batch",
                why="the traceback names the failing code",
                cost="minutes",
            )
        )
    elif lengths and all(f.facts.get("common_ok") for f in lengths) and not substantive:
        f = lengths[0]
        ll = next((a.lengths for a in ctx.assertions if a.kind == "length" and a.lengths), None)
        v = CIVerdict(
            Outcome.SUCCEEDED,
            Cause.METRIC_POLICY,
            0.8,
            f"Harness error, not a model regression: the golden values of {f.facts['metric']} "
            f"have {f.facts['n_golden']} steps and the run {f.facts['n_actual']}"
            + (f" (the log's assertion: expected length {ll[0]}, actual {ll[1]})" if ll else "")
            + f", so a whole-array comparison fails on the shapes: {f.message}.",
            f,
            rule="golden_length",
        )
        v.actions.append(
            NextAction(
                action=f"Regenerate the golden values of {f.facts['golden_source']} for the "
                f"current run length ({f.facts['n_actual']} steps), or compare only the "
                "common steps",
                why="the values agree where both sides have them",
                cost="minutes",
            )
        )
    elif defn and not substantive_loss(substantive):
        f = defn[0]
        v = CIVerdict(
            Outcome.SUCCEEDED,
            Cause.METRIC_POLICY,
            0.75,
            f"The metric's definition changed with a library upgrade; the model did not: {f.message}.",
            f,
            rule="metric_definition",
        )
        v.actions.append(
            NextAction(
                action=f"Recompute {f.facts['metric']} from the same predictions with "
                f"{f.facts['library']} {f.facts['old']} and {f.facts['new']}",
                why="confirms the definition change in minutes",
                cost="minutes",
            )
        )
        v.actions.append(
            NextAction(
                action=f"Pin {f.facts['library']}=={f.facts['old']} for the gate, or re-record "
                f"the golden {f.facts['metric']} under {f.facts['new']} and store package "
                "versions with golden files",
                why="the gate compares two definitions",
                cost="minutes",
            )
        )
    elif substantive:
        f = max(
            substantive, key=lambda x: (x.facts.get("is_loss", False), x.facts.get("max_rel") or 0)
        )
        in_band = [
            n
            for n in noise
            if n.facts.get("metric") == f.facts["metric"] and n.facts.get("inside_band")
        ]
        tight = [n for n in noise if n.facts.get("metric") == f.facts["metric"]]
        rtols = [c["rtol"] for c in f.facts.get("checks", []) if c.get("rtol") and c.get("active")]
        first_off = (
            # a single value (a final metric of a dict) has no first step to be off at
            (f.facts.get("n_common") or 2) > 1
            and f.facts.get("first_rel") is not None
            and rtols
            and math.isfinite(f.facts["first_rel"])
            and f.facts["first_rel"] > min(rtols)
        )
        fa = _failing_analysis(f)
        drift_like = (
            fa is not None
            # one or two values (final metrics) have no sign pattern: their size decides
            and (fa[1]["sign"] == "mixed" or fa[1]["n"] < 3)
            and (
                fa[1]["max_rel"] <= DRIFT_REL
                or (
                    fa[1]["excess"] <= DRIFT_MAX_EXCESS
                    and not fa[1]["growing"]
                    and not fa[1].get("persistent")
                )
            )
            and not (first_off and f.facts["first_rel"] > DRIFT_REL)
            and not (f.facts.get("band") and f.facts["band"].get("verdict") == "worse")
        )
        # the old code on the same runner decides when the logs hold it: drift moves old and
        # new code alike, a change under test moves only the new code
        ref = decisive(ctx, f.facts["metric"])
        old_ok = ref is not None and ref.reproduces is True
        old_fails = ref is not None and ref.reproduces is False
        if old_ok:
            fa_ = fa
            pat = (
                f" {f.facts['metric']}: {_pattern(*fa_)}." if fa_ is not None else f" {f.message}."
            )
            cause = Cause.CORRECTNESS_BUG if first_off else Cause.MODEL_CONVERGENCE
            v = CIVerdict(
                Outcome.REGRESSED,
                cause,
                0.85 if ref is not None and ref.same_runner else 0.75,
                "A real change, not numerical drift: "
                + describe(ref)
                + ", while the new code fails it."
                + pat
                + (
                    " The deviations are drift-sized, but drift would move the old code too."
                    if drift_like
                    else ""
                ),
                f,
                rule="regression_old_code" if not first_off else "first_step",
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
        elif drift_like and fa is not None:
            c, an = fa
            envs = ctx.env_changes
            env_txt = (
                f" after {envs[0].name} {envs[0].old or '?'} -> {envs[0].new or '?'} "
                f"({envs[0].source}:{envs[0].line})"
                if envs
                else ""
            )
            widen = an.get("widen_to")
            key = "rel" if c.get("kind") == "approx" else "rtol"
            v = CIVerdict(
                Outcome.SUCCEEDED,
                Cause.METRIC_POLICY,
                0.9 if old_fails else 0.5 if an["n"] < 3 else 0.8 if envs else 0.6,
                f"Numerical drift{env_txt}, not a model regression: {f.facts['metric']}: "
                + _pattern(c, an)
                + (
                    f". A deviation within {fmt(an['excess'], 3)}x of the tolerance on "
                    f"{an['n']} value(s): drift-sized, but one or two values show no sign "
                    "pattern, so run the old code on this runner to tell drift from a change."
                    if an["n"] < 3
                    else ". Small deviations of both signs just past a tight tolerance: the gate is "
                    "tighter than the platform's numerical noise."
                    if an["excess"] <= DRIFT_MAX_EXCESS
                    else f". Deviations of both signs within numerical precision (max rel "
                    f"{fmt(an['max_rel'], 3)} <= {fmt(DRIFT_REL)}): the gate is set at "
                    "round-off level, tighter than the platform's numerical noise."
                )
                + (
                    f" Confirmed: {describe(ref)}."
                    if old_fails
                    else ""
                    if envs
                    else " No environment change was seen in the logs; confirm with a rerun on the old image."
                ),
                f,
                rule="tolerance_drift",
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
            if not old_fails:
                v.actions.append(
                    NextAction(
                        action="To confirm, run the last green commit on this runner and image: if it "
                        "still reproduces the golden values within the current tolerance, the change "
                        "under test moved them (a real change, not drift)",
                        why="drift moves old and new code alike; a regression moves only the new code",
                        cost="minutes",
                    )
                )
        elif in_band or (tight and not f.facts.get("band")):
            n = (in_band or tight)[0]
            v = CIVerdict(
                Outcome.SUCCEEDED,
                Cause.METRIC_POLICY,
                0.7,
                f"The gate fails on noise: {n.message}.",
                n,
                rule="noise_band",
            )
            v.actions.append(
                NextAction(
                    action=f"Set the {f.facts['metric']} tolerance from the measured seed "
                    f"spread ({fmt(100 * (n.facts.get('spread_rel') or 0), 3)}%) or "
                    "compare with the band of several golden seeds",
                    why="a gate tighter than run-to-run noise fails at random",
                    cost="minutes",
                )
            )
        elif first_off:
            v = CIVerdict(
                Outcome.REGRESSED,
                Cause.CORRECTNESS_BUG,
                0.7,
                f"{f.facts['metric']} already differs at step {f.facts.get('first_step')} (rel "
                f"{fmt(f.facts['first_rel'], 3)} > {fmt(min(rtols))}), before optimisation could move it: "
                f"the computation or its inputs changed. {f.message}.",
                f,
                rule="first_step",
            )
            v.actions.append(
                NextAction(
                    action="Compare the step-1 forward pass (same batch, same weights) between "
                    "the last green commit and this one",
                    why="a first-step difference is a correctness/data change, not convergence",
                    cost="hours",
                )
            )
        else:
            grow = (f.facts.get("late_rel") or 0) > 2 * (f.facts.get("early_rel") or 0)
            band = f.facts.get("band")
            conf = 0.85 if band and band.get("verdict") == "worse" else 0.8
            extra = (
                f" It is outside the band of {band['n']} golden seeds ({fmt(band['band_lo'])}.."
                f"{fmt(band['band_hi'])})."
                if band and band.get("verdict") == "worse"
                else ""
            )
            pat = ""
            if fa is not None:
                c, an = fa
                why_real = (
                    "orders of magnitude outside the tolerance"
                    if an["excess"] > DRIFT_MAX_EXCESS * 10
                    else "well outside the tolerance"
                    if an["excess"] > DRIFT_MAX_EXCESS
                    else "one-signed"
                    if an["sign"] != "mixed"
                    else "growing along the steps"
                    if an["growing"]
                    else f"outside at every step from step {an['onset_step']}"
                )
                pat = f" {f.facts['metric']}: {_pattern(c, an)} ({why_real}: not numerical drift)."
            if old_fails:
                extra += (
                    f" But {describe(ref)}: the environment, not the change under test, moved "
                    "the values."
                )
            v = CIVerdict(
                Outcome.REGRESSED,
                Cause.MODEL_CONVERGENCE,
                conf,
                f"A real training regression:{pat or ' ' + f.message + '.'}"
                + (
                    f" The gap grows from {fmt(100 * f.facts['early_rel'], 3)}% early to "
                    f"{fmt(100 * f.facts['late_rel'], 3)}% late."
                    if grow
                    else ""
                )
                + extra,
                f,
                rule="regression",
            )
            v.actions.append(
                NextAction(
                    action="Bisect the environment change (image, driver, libraries) with the "
                    "old code: it fails the gate too"
                    if old_fails
                    else "Bisect between the last green commit and this one with the same "
                    "config and image; do not refresh the golden values",
                    why="the loss left its tolerance: the change under test made training worse",
                    cost="hours",
                )
            )
    elif drift and (ref0 := decisive(ctx)) is not None and ref0.reproduces:
        f = drift[0]
        v = CIVerdict(
            Outcome.SUCCEEDED,
            Cause.METRIC_POLICY,
            0.6,
            "The change under test moved the values within tolerance, not the environment: "
            f"{describe(ref0)}, while the new code is not bit-identical ({f.message.split('. Numerical')[0]}).",
            f,
            rule="exact_code_change",
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
    elif drift:
        f = drift[0]
        new = _new_env(ctx)
        v = CIVerdict(
            Outcome.SUCCEEDED,
            Cause.METRIC_POLICY,
            0.85,
            f"Environment drift, not a model regression: {f.message}.",
            f,
            rule="exact_drift",
        )
        v.actions.append(
            NextAction(
                action=f"Refresh the golden values for the new image ({new}) and keep the "
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
    elif timing and not any(t.facts.get("metric_fail") for t in timing):
        f = timing[0]
        gate_fail = bool(f.facts.get("checks"))
        if gate_fail:
            v = CIVerdict(
                Outcome.SLOW,
                Cause.INFRA_RUNTIME,
                0.75,
                f"Only a timing gate failed; the loss and metric checks pass, so this is a runtime "
                f"slowdown, not a model regression: {f.message}.",
                f,
                rule="timing",
            )
            v.actions.append(
                NextAction(
                    action="Time the job on the previous and the current environment on the same "
                    "hardware; fix the slowdown or re-baseline the bound if it is expected",
                    why="the runtime got slower; the model did not change",
                    cost="hours",
                )
            )
        else:
            v = CIVerdict(
                Outcome.SLOW,
                Cause.METRIC_POLICY,
                0.7,
                f"The job hit its time limit while every metric check passed. {f.message}.",
                f,
                rule="timeout",
            )
            v.actions.append(
                NextAction(
                    action="Raise the job timeout or shorten the test (fewer steps)",
                    why="the metrics pass; the limit is the failing gate",
                    cost="minutes",
                )
            )
    elif short:
        f = short[0]
        v = CIVerdict(
            Outcome.CRASHED,
            Cause.INCONCLUSIVE,
            0.4,
            f"The run logged fewer steps than its golden values and nothing in the logs says why: "
            f"{f.message}.",
            f,
            rule="short",
        )
    elif by.get("CI007"):
        f = by["CI007"][0]
        failed_tests = [t.test for t in ctx.tests if t.outcome in ("failed", "error")]
        missing = [
            x
            for x in ctx.traced
            if x.status in ("missing", "refused", "too_deep", "too_big", "unreadable")
            and (x.test in failed_tests or not failed_tests)
        ]
        printed = [a for a in ctx.assertions if a.test in failed_tests or not failed_tests]
        said = ""
        if printed:
            a = printed[0]
            figs = []
            if a.n_mismatch is not None:
                figs.append(f"{a.n_mismatch} of {a.n_total} elements mismatched")
            if a.max_rel is not None:
                figs.append(f"max rel diff {fmt(a.max_rel, 3)}")
            if a.lengths:
                figs.append(f"lengths {a.lengths[0]} and {a.lengths[1]}")
            said = (
                f" The log's assertion ({a.source}:{a.line}, {a.kind}) printed "
                + (", ".join(figs) or a.text[:120])
                + "; without the values the pattern (drift or regression) cannot be told."
            )
        if missing:
            x = missing[0]
            what = {
                "missing": "was neither in --logs nor in the repository",
                "refused": "is outside the repository (not opened)",
            }.get(x.status, f"could not be read ({x.detail})")
            r0 = decisive(ctx)
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
                rule="missing_input",
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
        else:
            v = CIVerdict(
                Outcome.UNKNOWN,
                Cause.INCONCLUSIVE,
                0.3,
                f"Not judged: the logs show failures that no collected gate or value explains: "
                f"{f.message}.{said}",
                f,
                rule="unexplained",
            )
            need = []
            if not ctx.goldens:
                need.append("the golden files (--golden)")
            if not ctx.actuals:
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
    else:
        v = CIVerdict(
            Outcome.SUCCEEDED,
            Cause.HEALTHY,
            0.7,
            "Every gate passes on recomputation and the logs show no failure.",
            rule="healthy",
        )

    # per gated metric: the deviation pattern of each failing tolerance check
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
    for u in ungated:
        v.actions.append(
            NextAction(
                action=f"Add a tolerance gate for {u.facts['metric']} (it "
                f"{'rose' if u.facts['median_rel_change'] > 0 else 'fell'} "
                f"{fmt(100 * abs(u.facts['median_rel_change']), 3)}% unchecked)",
                why="no active gate checks it",
                cost="minutes",
            )
        )
        v.conclusions.append(u.message)
    v.hypotheses = _ledger(v, by, ctx, regression_rejected_by, loss_txt)
    if v.primary is not None:
        v.conclusions.insert(0, v.primary.message)
    return v


def substantive_loss(rows: list[Finding]) -> bool:
    return any(f.facts.get("is_loss") for f in rows)


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
        _hyp(
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
        ),
        _hyp(
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
        ),
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
