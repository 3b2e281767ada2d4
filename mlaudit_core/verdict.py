"""The verdict policy: findings in, outcome / cause / confidence / narrative out.

Detectors measure; this module decides. The policy is an ordered list of rules
(first match sets the outcome and cause); every other finding is kept as
secondary evidence. The order encodes the "first broken layer" principle of the
diagnosis workflow: a crash signature explains more than the curves before it,
non-finite values explain more than a plateau, and systems problems are
reported apart from learning problems (they set the outcome only when the
learning itself is healthy).

Confidence (0..1) starts from the rule's base (how specific its evidence is) and
loses 0.1 for each missing signal that could have changed the conclusion
(validation metric for learning verdicts, step/data time for systems verdicts),
0.1 when loading produced warnings, and is capped at 0.5 for inconclusive
verdicts. The bases were set on the labelled cases in ``shared/cases`` and the
example regimes; they rank conclusions, they are not calibrated probabilities.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .report import (
    AuditReport,
    Cause,
    DetectorRun,
    Finding,
    Hypothesis,
    MissingSignal,
    NextAction,
    Outcome,
    RunRef,
    Severity,
    TimelinePhase,
    Verdict,
)
from .roles import Role
from .rundata import RunData, RunStatus
from .signal import clip, fmt

_CORRECTNESS_EXC = ("ValueError", "TypeError", "KeyError", "IndexError", "AttributeError",
                    "AssertionError", "NameError", "NotImplementedError", "ZeroDivisionError",
                    "ImportError", "ModuleNotFoundError", "FileNotFoundError", "UnboundLocalError")


@dataclass
class _Ctx:
    run: RunData
    by_code: dict[str, list[Finding]]

    def get(self, code: str, min_sev: Severity = Severity.INFO) -> Finding | None:
        for f in self.by_code.get(code, []):
            if f.severity.rank >= min_sev.rank:
                return f
        return None

    def train_nonfinite(self) -> Finding | None:
        for f in self.by_code.get("LI001", []):
            if f.facts.get("role") == Role.TRAIN_LOSS.value:
                return f
        return None


@dataclass
class _Decision:
    outcome: Outcome
    cause: Cause
    base_confidence: float
    summary: str
    primary: Finding | None = None


Rule = Callable[[_Ctx], "_Decision | None"]


def _crash_infra(c: _Ctx) -> _Decision | None:
    hw = c.get("RT007", Severity.ERROR)
    if hw:  # the first broken layer: an OOM or CUDA error after a hardware fault is its symptom
        return _Decision(Outcome.CRASHED, Cause.INFRA_RUNTIME, 0.9,
                         f"The run crashed on {hw.message}.", hw)
    for code, what in (("RT001", "it ran out of memory"), ("RT002", "a collective operation timed out"),
                       ("RT004", "a data-loader worker died"), ("RT008", "the disk filled up"),
                       ("RT010", "it was killed from outside")):
        f = c.get(code, Severity.ERROR)
        if f and not _ended_by_preemption(c, f):
            where = f.facts.get("code_path")
            extra = f" in the {where} code path" if where and where != "unknown" else ""
            return _Decision(Outcome.CRASHED, Cause.INFRA_RUNTIME, 0.9,
                             f"The run crashed because {what}{extra}: {f.message}.", f)
    return None


def _ended_by_preemption(c: _Ctx, f: Finding) -> bool:
    """A crash signature explained by the job's own termination (RT003: SIGTERM / preemption)."""
    if c.get("RT003") is None:
        return False
    if f.code in ("RT004", "RT010"):  # workers and the process are killed as the job is torn down
        return True
    msg = (f.facts.get("exception_message") or "").lower()
    exc = str(f.facts.get("exception_type", ""))
    return f.code == "RT005" and (exc.endswith(("KeyboardInterrupt", "SystemExit"))
                                  or "sigterm" in msg or "signal 15" in msg)


def _abrupt_nonfinite(c: _Ctx) -> _Decision | None:
    """OP004 reads the onset robustly (medians, optimizer steps): an abrupt onset is numerics."""
    f = c.get("OP004")
    if f and f.facts.get("abrupt"):
        return _Decision(Outcome.DIVERGED, Cause.DATA_CONFIG, 0.8, f"{f.message}.", f)
    return None


def _fp16_overflow(c: _Ctx) -> _Decision | None:
    """RT006 at error: fp16 loss scaling failed (a few skips with a healthy scale are info, benign)."""
    f = c.get("RT006", Severity.ERROR)
    if not f:
        op7 = c.get("OP007", Severity.ERROR)
        # a scale that never decreased did not collapse: bf16/fp32 Megatron runs print a constant 1.0
        f = op7 if op7 is not None and op7.facts.get("decreases") else None
    if not f:
        return None
    cause = Cause.MODEL_CONVERGENCE if c.get("OP001", Severity.ERROR) else Cause.DATA_CONFIG
    outcome = Outcome.CRASHED if f.facts.get("min_scale_error") else Outcome.DIVERGED
    return _Decision(outcome, cause, 0.75, f"fp16 loss scaling failed: {f.message}.", f)


def _nan_message(c: _Ctx) -> _Decision | None:
    """RT009 without a loss history: non-finite, but the onset cannot be read."""
    f = c.get("RT009", Severity.ERROR)
    if f and not c.run.has(Role.TRAIN_LOSS):
        return _Decision(Outcome.DIVERGED, Cause.INCONCLUSIVE, 0.5,
                         f"The loss became non-finite ({f.message}); without the loss history a learning-rate "
                         "divergence and a numerical failure cannot be told apart.", f)
    return None


def _preempted(c: _Ctx) -> _Decision | None:
    """RT003 when nothing else explains the end: preempted and requeued is not a crash."""
    f = c.get("RT003")
    if not f:
        return None
    if f.facts.get("requeued"):
        return _Decision(Outcome.RUNNING, Cause.INFRA_RUNTIME, 0.6,
                         f"The job was preempted and requeued, not crashed ({f.message}); it continues in a later "
                         "segment: check that it resumes from its checkpoint.", f)
    return _Decision(Outcome.CRASHED, Cause.INFRA_RUNTIME, 0.6,
                     f"The job was stopped by its scheduler ({f.message}) and not requeued.", f)


def _nonfinite(c: _Ctx) -> _Decision | None:
    f = c.train_nonfinite()
    if not f:
        return None
    div = c.get("OP001", Severity.ERROR)
    growth = f.facts.get("growth_before")
    if div or (growth is not None and growth >= 2.0):
        return _Decision(Outcome.DIVERGED, Cause.MODEL_CONVERGENCE, 0.85,
                         f"The training loss grew and then turned non-finite at step {f.facts['first_step']}: "
                         "an optimisation divergence (learning rate / warmup / clipping).", f)
    prior = f.facts.get("finite_points_before", 0)
    if not prior:
        return _Decision(Outcome.DIVERGED, Cause.DATA_CONFIG, 0.6,
                         f"The training loss was non-finite from its first logged step ({f.facts['first_step']}): "
                         "the inputs, the initialisation or the loss computation are broken before any "
                         "optimisation could diverge.", f)
    return _Decision(Outcome.DIVERGED, Cause.DATA_CONFIG, 0.75,
                     f"The training loss was finite and not growing ({prior} finite points, last "
                     f"{fmt(f.facts.get('last_finite'))}), then non-finite from step {f.facts['first_step']} "
                     f"on ({f.facts['n_nonfinite']} points): an abrupt numerical failure (precision / loss "
                     "scaling / a bad batch), not a learning-rate divergence.", f)


def _divergence(c: _Ctx) -> _Decision | None:
    f = c.get("OP001", Severity.ERROR)
    if f:
        return _Decision(Outcome.DIVERGED, Cause.MODEL_CONVERGENCE, 0.85, f"The run diverged: {f.message}.", f)
    return None


def _crash_other(c: _Ctx) -> _Decision | None:
    f = c.get("RT005", Severity.ERROR)
    if f and not _ended_by_preemption(c, f):
        exc = f.facts.get("exception_type", "")
        shape = c.get("RT005") and "shape" in (f.facts.get("exception_message") or "").lower()
        cause = (Cause.CORRECTNESS_BUG if (exc.rsplit(".", 1)[-1] in _CORRECTNESS_EXC or shape)
                 else Cause.INFRA_RUNTIME if exc.endswith(("OSError", "MemoryError", "TimeoutError"))
                 else Cause.CORRECTNESS_BUG)
        return _Decision(Outcome.CRASHED, cause, 0.7, f"The run crashed with {f.message}.", f)
    return None


def _reset(c: _Ctx) -> _Decision | None:
    f = c.get("LI002", Severity.ERROR) or c.get("LI003", Severity.ERROR)
    if f:
        return _Decision(Outcome.UNSTABLE, Cause.CORRECTNESS_BUG, 0.7,
                         f"The step counter reset: {f.message}. Curves by step overlay two segments; "
                         "the resume did not restore the training state.", f)
    return None


def _baseline(c: _Ctx) -> _Decision | None:
    """BL001: a learning metric worse than the baselines beyond their noise band; within noise: no rule."""
    f = c.get("BL001", Severity.ERROR)
    if not f:
        return None
    layer = c.get("BL003")
    cause = Cause((layer.facts.get("cause") if layer else None) or Cause.MODEL_CONVERGENCE.value)
    if cause is Cause.METRIC_POLICY:
        return _Decision(Outcome.SUCCEEDED, cause, 0.7, f"The metric moved because of how it is computed, "
                         f"not the model: {f.message}; {layer.message}.", f)
    where = f"; {layer.message}" if layer else ""
    return _Decision(Outcome.REGRESSED, cause, 0.8,
                     f"The run is worse than its baselines: {f.message}{where}.", f)


def _chance(c: _Ctx) -> _Decision | None:
    """GE004: validation at chance is a data problem first (labels without signal, broken
    validation labels), whatever the training curve did."""
    f = c.get("GE004", Severity.WARNING)
    if not f or (f.facts.get("labels_carry_signal") and c.get("GE001", Severity.ERROR)):
        return None  # training accuracy beat chance from the first eval: an overfit, not the labels (GE004)
    if c.get("GE002", Severity.ERROR):
        # Training barely learned either. If the loss never moved, the optimiser is the first
        # suspect (LR far too low: underfit rule). If it moved, then stalled early while
        # validation sat at chance, the model reached what the labels allow: no signal.
        # Thresholds measured on the corpus (examples/corpus): shuffled labels drop the loss
        # 6% then plateau for under half the run; a too-low LR moves it < 3% or never plateaus.
        plateau = c.get("OP003")
        moved_then_stalled = (plateau is not None and plateau.facts.get("flat_share", 1.0) < 0.9
                              and plateau.facts.get("rel_total_improvement", 0.0) >= 0.03)
        if not (moved_then_stalled and (f.facts.get("lift") or 0.0) < 0.1):
            return None
    outcome = (Outcome.OVERFIT if c.get("GE001", Severity.ERROR)
               else Outcome.UNDERFIT if c.get("GE002", Severity.ERROR) else Outcome.PLATEAUED)
    return _Decision(outcome, Cause.DATA_CONFIG, 0.75,
                     f"Validation never beat chance: {f.message}. The labels or inputs carry no signal the "
                     "model can generalise (shuffled or misaligned labels, broken validation preprocessing).", f)


def _overfit(c: _Ctx) -> _Decision | None:
    f = c.get("GE001", Severity.ERROR)
    if f:
        return _Decision(Outcome.OVERFIT, Cause.MODEL_CONVERGENCE, 0.85, f"The run overfit: {f.message}.", f)
    return None


def _underfit(c: _Ctx) -> _Decision | None:
    f = c.get("GE002", Severity.ERROR)
    if f:
        return _Decision(Outcome.UNDERFIT, Cause.MODEL_CONVERGENCE, 0.75,
                         f"The model barely learned the training set: {f.message}.", f)
    f = c.get("OP003", Severity.WARNING)
    if f:
        return _Decision(Outcome.PLATEAUED, Cause.MODEL_CONVERGENCE, 0.7, f"The run plateaued: {f.message}.", f)
    return None


def _unstable(c: _Ctx) -> _Decision | None:
    f = c.get("OP002", Severity.WARNING)
    if f:
        return _Decision(Outcome.UNSTABLE, Cause.MODEL_CONVERGENCE, 0.6, f"Training was unstable: {f.message}.", f)
    return None


def _slow(c: _Ctx) -> _Decision | None:
    # SY004 (isolated slow steps) and SY003 (idle accelerator) stay bottleneck findings but do not
    # set the outcome: on shared machines both come from neighbours as often as from the run
    # (measured on the corpus at load average 8-15: SY004 fired on healthy runs)
    for code in ("SY002", "SY005", "SY001"):
        f = c.get(code, Severity.WARNING)
        if f:
            base = 0.85 if code in ("SY002", "SY005") else 0.7
            return _Decision(Outcome.SLOW, Cause.INFRA_RUNTIME, base, f"The run was slow: {f.message}.", f)
    return None


def _ended_failed(c: _Ctx) -> _Decision | None:
    """A run the tracker (or the in-process hook) saw end failed or killed is not called "slow":
    its ending is the main fact, the slowness stays a finding. Without a crash signature the
    cause is inconclusive (as in the fallback)."""
    if c.run.status in (RunStatus.FAILED, RunStatus.KILLED) and c.get("RT003") is None:
        return _fallback(c)
    return None


RULES: list[Rule] = [_crash_infra, _abrupt_nonfinite, _nonfinite, _fp16_overflow, _divergence, _nan_message,
                     _crash_other, _reset, _baseline, _chance, _overfit, _underfit, _unstable,
                     _ended_failed, _slow, _preempted]


def _fallback(c: _Ctx) -> _Decision:
    run = c.run
    if run.status in (RunStatus.FAILED, RunStatus.KILLED):
        return _Decision(Outcome.CRASHED, Cause.INCONCLUSIVE, 0.3,
                         f"The run ended {run.status.value}, and nothing in its metrics or console explains "
                         "why.")
    if not run.has(Role.TRAIN_LOSS) and not run.has(Role.VAL_LOSS) and not run.has(Role.VAL_ACCURACY):
        return _Decision(Outcome.SUCCEEDED, Cause.INCONCLUSIVE, 0.2,
                         "No loss or validation metric was logged, so the learning cannot be judged.")
    tl = run.key_for(Role.TRAIN_LOSS)
    msg = "No failure signature: the run finished"
    if tl:
        s = run.series(tl).finite()
        if len(s):
            msg += f" with {tl} {fmt(float(s.values[0]))} -> {fmt(float(s.values[-1]))}"
    return _Decision(Outcome.SUCCEEDED, Cause.HEALTHY, 0.75, msg + ".")


def decide(run: RunData, findings: list[Finding], det_runs: list[DetectorRun]) -> AuditReport:
    """Apply the policy. Returns a report with verdict, timeline, hypotheses, unknowns and actions."""
    by_code: dict[str, list[Finding]] = {}
    for f in findings:
        by_code.setdefault(f.code, []).append(f)
    ctx = _Ctx(run, by_code)
    decision = None
    for rule in RULES:
        decision = rule(ctx)
        if decision:
            break
    decision = decision or _fallback(ctx)
    if run.status is RunStatus.RUNNING and decision.outcome is not Outcome.CRASHED:
        decision = _Decision(Outcome.RUNNING, decision.cause if decision.cause is not Cause.HEALTHY
                             else Cause.INCONCLUSIVE, min(decision.base_confidence, 0.5),
                             "The run is still running; so far: " + decision.summary, decision.primary)

    missing = [MissingSignal(signal=f.facts["signal"], would_tell=f.facts["would_tell"])
               for f in findings if f.family == "instrumentation"]
    conf = decision.base_confidence
    learning = decision.outcome in (Outcome.SUCCEEDED, Outcome.OVERFIT, Outcome.UNDERFIT, Outcome.PLATEAUED)
    if learning and not (run.has(Role.VAL_LOSS) or run.has(Role.VAL_ACCURACY)):
        conf -= 0.1
    if decision.outcome is Outcome.SLOW and not run.has(Role.STEP_TIME):
        conf -= 0.1
    if run.warnings:
        conf -= 0.1
    inconclusive = decision.cause is Cause.INCONCLUSIVE
    # partial input (a truncated or unreadable file, a missing log): the verdict stands as the
    # best reading of what was there, but is marked inconclusive and says what is missing
    partial = [w for w in run.warnings
               if re.search(r"truncat|corrupt|could not be read|cannot read|no such file|skipped|empty", w, re.I)]
    summary = decision.summary
    if partial:
        inconclusive = True
        summary += " Partial data: " + "; ".join(partial[:3]) + "."
    if inconclusive:
        conf = min(conf, 0.5)
    verdict = Verdict(outcome=decision.outcome, cause=decision.cause, confidence=round(max(conf, 0.05), 2),
                      summary=summary, inconclusive=inconclusive)

    ordered = sorted(findings, key=lambda f: (-f.severity.rank, f is not decision.primary, f.code))
    unknowns = [f"{d.code} {d.name}: {d.reason}" for d in det_runs if d.status == "skipped"]
    unknowns += [f"{d.code} {d.name} errored ({d.reason}); its check is unknown"
                 for d in det_runs if d.status == "errored"]
    if run.warnings:
        unknowns += [f"loading: {w}" for w in run.warnings]
    if not (run.key_for(Role.TRAIN_LOSS) or run.key_for(Role.VAL_LOSS)):
        unknowns.append("timeline: unknown, no training or validation loss series to place phases on")
    if not len(run.metrics):
        unknowns.append("key metrics: unknown, no metric was logged")
    return AuditReport(
        run=RunRef(tracker=run.identity.tracker, id=run.identity.id),
        verdict=verdict,
        findings=ordered,
        timeline=build_timeline(run, findings),
        key_metrics=key_metrics(run),
        hypotheses=hypotheses(decision, ctx),
        conclusions=[f.message for f in ordered if f.severity.rank >= Severity.ERROR.rank][:5],
        unknowns=unknowns,
        surprising=surprising(run, findings),
        missing_instrumentation=missing,
        next_actions=next_actions(decision, ctx),
        detectors=det_runs,
    )


def surprising(run: RunData, findings: list[Finding]) -> list[str]:
    """Things a careful analyst would flag as unexpected, even when they are not failures."""
    out = [f"benign: {f.message}" for f in findings if f.code == "OP002" and f.severity is Severity.INFO]
    out += [f.message for f in findings if f.code in ("OP007", "RT006") and f.severity is Severity.INFO]
    tk, vk = run.key_for(Role.TRAIN_LOSS), run.key_for(Role.VAL_LOSS)
    if tk and vk:
        t, v = run.series(tk).by_step().finite(), run.series(vk).by_step().finite()
        if len(t) > 3 and len(v) > 3:
            idx = np.clip(np.searchsorted(t.steps, v.steps, side="right") - 1, 0, len(t) - 1)
            below = v.values < t.values[idx]
            if below.mean() > 0.8:
                out.append(f"validation loss is below the training loss at {int(below.sum())} of {len(v)} "
                           "evaluations: regularisation active only in training (dropout, augmentation), "
                           "a running-average training loss, or validation data easier than (or leaked "
                           "from) training")
    ak = run.key_for(Role.VAL_ACCURACY)
    if ak:
        a = run.series(ak).finite()
        if len(a) and float(a.values.max()) >= 0.999:
            out.append(f"{ak} reached {fmt(float(a.values.max()))}: perfect held-out accuracy is rare; check "
                       "for train/validation overlap")
    sched = next((f for f in findings if f.code == "OP005" and f.facts.get("early_zero_step")), None)
    if sched:
        out.append(sched.message)
    return out


def key_metrics(run: RunData) -> dict[str, dict[str, float | int | str | None]]:
    """Initial / best / final (and medians for time series) for each role that is logged."""
    out: dict[str, dict[str, float | int | str | None]] = {}
    for role in Role:
        key = run.key_for(role)
        if key is None:
            continue
        s = run.series(key).by_step()
        f = s.finite()
        if not len(f):
            out[role.value] = {"key": key, "points": len(s), "finite_points": 0, "first": None, "best": None,
                               "best_step": None, "min": None, "max": None, "final": None, "final_step": None,
                               "median": None}
            continue
        from .roles import is_higher_better
        hib = is_higher_better(key) or role in (Role.VAL_ACCURACY, Role.TRAIN_ACCURACY, Role.THROUGHPUT)
        directional = role in (Role.TRAIN_LOSS, Role.VAL_LOSS, Role.TRAIN_ACCURACY, Role.VAL_ACCURACY,
                               Role.THROUGHPUT)
        ib = int(np.argmax(f.values) if hib else np.argmin(f.values))
        out[role.value] = {"key": key, "points": len(s), "finite_points": len(f),
                           "first": float(f.values[0]),
                           "best": float(f.values[ib]) if directional else None,
                           "best_step": int(f.steps[ib]) if directional else None,
                           "min": float(f.values.min()), "max": float(f.values.max()),
                           "final": float(f.values[-1]),
                           "final_step": int(f.steps[-1]), "median": float(np.median(f.values))}
    return out


def build_timeline(run: RunData, findings: list[Finding]) -> list[TimelinePhase]:
    """A practical timeline: start, warmup (from the logged LR), learning, events, termination."""
    phases: list[TimelinePhase] = []
    tl = run.key_for(Role.TRAIN_LOSS) or run.key_for(Role.VAL_LOSS)
    t0 = run.start_time.timestamp() if run.start_time else None

    def wall(series, i):
        if t0 is None or not len(series):
            return None
        w = series.wall_times[i]
        return float(w - t0) if np.isfinite(w) else None

    if tl:
        s = run.series(tl).by_step()
        if len(s):
            phases.append(TimelinePhase(name="startup", step_start=None, step_end=int(s.steps[0]),
                                        wall_start_s=0.0 if t0 else None, wall_end_s=wall(s, 0),
                                        note="from run start to the first logged step"))
    lk = run.key_for(Role.LEARNING_RATE)
    if lk:
        lr = run.series(lk).by_step().finite()
        if len(lr) > 2:
            peak = int(np.argmax(lr.values))
            if peak > 0 and lr.values[0] < lr.values[peak]:
                phases.append(TimelinePhase(name="warmup", step_start=int(lr.steps[0]),
                                            step_end=int(lr.steps[peak]), wall_start_s=wall(lr, 0),
                                            wall_end_s=wall(lr, peak),
                                            note=f"LR {fmt(float(lr.values[0]))} -> {fmt(float(lr.values[peak]))}"))
    tk = run.key_for(Role.TRAIN_LOSS)
    if tk:
        t = run.series(tk).by_step().finite()
        if len(t) >= 10:
            from .signal import centered_median, smooth_window

            sm = centered_median(t.values, smooth_window(len(t)))
            drop = float(sm[0] - sm.min())
            if drop > 0:
                i90 = int(np.flatnonzero(sm <= sm[0] - 0.9 * drop)[0])
                phases.append(TimelinePhase(name="early learning", step_start=int(t.steps[0]),
                                            step_end=int(t.steps[i90]), wall_start_s=wall(t, 0),
                                            wall_end_s=wall(t, i90),
                                            note=f"{tk} {fmt(float(sm[0]))} -> {fmt(float(sm[i90]))} "
                                                 "(90% of the total drop)"))
                if i90 < len(t) - 1:
                    # "stable" only if the loss stays near its best; a loss that climbs back by
                    # more than half of what it had dropped is named for it (presentation only)
                    rising = float(sm[-1] - sm.min()) > 0.5 * drop
                    name = "late region (loss rising)" if rising else "stable region"
                    phases.append(TimelinePhase(name=name, step_start=int(t.steps[i90]),
                                                step_end=int(t.steps[-1]), wall_start_s=wall(t, i90),
                                                wall_end_s=wall(t, len(t) - 1),
                                                note=f"{tk} {fmt(float(sm[i90]))} -> {fmt(float(sm[-1]))}"))
    events = {"OP001": "divergence", "LI001": "non-finite onset", "GE001": "overfit onset",
              "OP003": "plateau", "LI002": "step reset", "SY001": "slowdown", "RT001": "out of memory",
              "RT005": "exception", "RT003": "preemption"}
    for f in findings:
        if f.code in events:
            step = f.facts.get("onset_step") or f.facts.get("first_step") or f.facts.get("start_step") \
                or f.facts.get("step_after")
            ev = next((e for e in f.evidence if getattr(e, "kind", "") == "series"), None)
            phases.append(TimelinePhase(name=events[f.code],
                                        step_start=step if step is not None else (ev.step_start if ev else None),
                                        step_end=ev.step_end if ev else None, note=clip(f.message)))
    if tl:
        s = run.series(tl).by_step()
        if len(s):
            phases.append(TimelinePhase(name="termination", step_start=int(s.steps[-1]),
                                        step_end=int(s.steps[-1]), wall_start_s=wall(s, len(s) - 1),
                                        wall_end_s=run.duration_s, note=f"status {run.status.value}"))
    return phases


def hypotheses(d: _Decision, c: _Ctx) -> list[Hypothesis]:
    """Competing explanations of the main symptom, with the evidence and a discriminating test."""
    hs: list[Hypothesis] = []
    o = d.outcome
    lr = c.run.has(Role.LEARNING_RATE)
    if o is Outcome.DIVERGED:
        gradual = d.cause is Cause.MODEL_CONVERGENCE
        hs.append(Hypothesis(statement="learning rate too high (or warmup too short)",
                             status="supported" if gradual else "rejected", cause=Cause.MODEL_CONVERGENCE,
                             evidence_for=["loss grew before the failure"] if gradual else [],
                             evidence_against=[] if gradual else ["no loss growth before the non-finite onset"],
                             discriminating_test="rerun the first steps with the LR divided by 10"))
        hs.append(Hypothesis(statement="numerical failure: precision mode / loss scaling / a bad batch",
                             status="rejected" if gradual else "supported", cause=Cause.DATA_CONFIG,
                             evidence_for=[] if gradual else ["abrupt onset right after finite, non-growing loss"],
                             discriminating_test="rerun from the last good checkpoint in fp32/bf16 or with "
                                                 "dynamic loss scaling; replay the batch at the onset step"))
    elif o is Outcome.OVERFIT:
        hs.append(Hypothesis(statement="too little data or regularisation for the model size",
                             status="supported", cause=Cause.MODEL_CONVERGENCE,
                             evidence_for=[clip(d.summary)],
                             discriminating_test="retrain with weight decay / augmentation or 2x data; the "
                                                 "validation minimum should move later"))
        hs.append(Hypothesis(statement="train/validation distribution mismatch (data/config issue)",
                             status="rejected", cause=Cause.DATA_CONFIG,
                             evidence_against=["validation loss first improved together with training loss"],
                             discriminating_test="evaluate on a held-out slice of the training set"))
    elif o in (Outcome.UNDERFIT, Outcome.PLATEAUED):
        hs.append(Hypothesis(statement="learning rate too low or capacity too small",
                             status="supported" if lr else "open", cause=Cause.MODEL_CONVERGENCE,
                             evidence_for=[clip(d.summary)],
                             discriminating_test="overfit a tiny subset (e.g. 64 samples); a healthy setup "
                                                 "drives training loss near 0"))
        hs.append(Hypothesis(statement="labels do not carry signal (shuffled, misaligned) or inputs are broken",
                             status="open", cause=Cause.DATA_CONFIG,
                             discriminating_test="overfit a tiny subset: if even that fails, check the data"))
    elif o is Outcome.SLOW:
        starved = c.get("SY002", Severity.ERROR) is not None
        hs.append(Hypothesis(statement="input-bound: the data pipeline cannot keep up",
                             status="supported" if starved else "open", cause=Cause.INFRA_RUNTIME,
                             evidence_for=[c.get("SY002").message] if starved else [],
                             discriminating_test="time an epoch over the data loader alone, without the model"))
        hs.append(Hypothesis(statement="compute-bound: the model step itself is slow",
                             status="rejected" if starved else "open", cause=Cause.INFRA_RUNTIME,
                             evidence_against=["data time is most of the step time"] if starved else [],
                             discriminating_test="run the step on a cached synthetic batch"))
        hs.append(Hypothesis(statement="a model or convergence problem", status="rejected",
                             cause=Cause.MODEL_CONVERGENCE,
                             evidence_against=["the finding is about time, not about the loss"]))
    elif o is Outcome.CRASHED and d.primary is not None:
        path = d.primary.facts.get("code_path")
        if d.primary.code == "RT001":
            hs.append(Hypothesis(statement=f"peak memory of the {path or 'failing'} code path exceeds the device",
                                 status="supported", cause=Cause.INFRA_RUNTIME,
                                 evidence_for=[clip(d.primary.message)],
                                 discriminating_test="rerun that path alone with half the batch; "
                                                     "record torch.cuda.max_memory_allocated()"))
            hs.append(Hypothesis(statement="a memory leak in the training loop",
                                 status="rejected" if path == "evaluation" else "open",
                                 cause=Cause.CORRECTNESS_BUG,
                                 evidence_against=["the allocation failed in evaluation code, not in a "
                                                   "training step"] if path == "evaluation" else [],
                                 discriminating_test="log allocated memory per training step; a leak grows "
                                                     "steadily"))
    elif d.primary is not None and d.primary.code in ("LI002", "LI003"):
        hs.append(Hypothesis(statement="the job was resumed without restoring its checkpoint (state and step)",
                             status="supported", cause=Cause.CORRECTNESS_BUG,
                             evidence_for=[clip(d.primary.message)],
                             discriminating_test="look for the checkpoint-load line in the resumed job's log; "
                                                 "compare the first resumed loss with the last loss before"))
        hs.append(Hypothesis(statement="two different jobs logged into the same run id",
                             status="open", cause=Cause.CORRECTNESS_BUG,
                             discriminating_test="compare hosts, start times and params of the two segments"))
    elif o is Outcome.SUCCEEDED and d.cause is Cause.HEALTHY:
        hs.append(Hypothesis(statement="the run is healthy", status="supported", cause=Cause.HEALTHY,
                             evidence_for=[clip(d.summary)]))
        benign = c.get("OP002")
        if benign:
            hs.append(Hypothesis(statement="the loss spikes are an instability", status="rejected",
                                 cause=Cause.MODEL_CONVERGENCE, evidence_against=[clip(benign.message)]))
        skips = c.get("RT006")
        if skips and skips.facts.get("benign"):
            hs.append(Hypothesis(statement="the fp16 overflow messages are a failure", status="rejected",
                                 cause=Cause.DATA_CONFIG, evidence_against=[skips.message[:400]]))
    return hs


_ACTIONS: dict[Outcome, list[tuple[str, str, str]]] = {
    Outcome.DIVERGED: [("Rerun from the last good checkpoint with the peak LR halved and gradient clipping "
                        "at 1.0", "tests the learning-rate explanation directly", "hours")],
    Outcome.OVERFIT: [("Keep the checkpoint at the validation minimum (early stopping on validation loss)",
                       "recovers the best model at no cost", "minutes"),
                      ("Add regularisation (weight decay, dropout), augmentation or more data",
                       "moves the overfit onset later", "hours")],
    Outcome.UNDERFIT: [("Overfit a tiny subset (64 samples) to check the setup can learn at all",
                        "separates a capacity/LR problem from a data problem", "minutes"),
                       ("Raise the learning rate 3-10x or add capacity", "the usual cause of a flat loss",
                        "hours")],
    Outcome.PLATEAUED: [("Check the LR schedule at the plateau start; try a higher LR or later decay",
                         "a plateau often follows a decayed or too-low LR", "hours")],
    Outcome.UNSTABLE: [("Inspect the batches and LR at the spike steps; add gradient clipping",
                        "most unrecovered spikes follow a bad batch or an LR event", "hours")],
}


#: Actions when a systems or data finding is the primary one (the fix differs per bottleneck).
_PRIMARY_ACTIONS: dict[str, list[tuple[str, str, str]]] = {
    "SY002": [("Profile the input pipeline alone (iterate the DataLoader without the model)",
               "confirms input-bound vs compute-bound in minutes", "minutes"),
              ("Move data to faster storage / cache it, pre-process offline, add loader workers",
               "the fix for an input-bound run; hyperparameters will not help", "hours")],
    "SY005": [("Evaluate less often (e.g. every 10% of the run) or on a fixed subset",
               "evaluation takes more wall time than training", "minutes"),
              ("Time one evaluation and make it batched and gradient-free (torch.no_grad / inference mode)",
               "a slow evaluation loop is usually per-sample or keeps gradients", "hours")],
    "SY001": [("Profile a late step against an early one (host memory, recompilation, I/O contention)",
               "throughput fell during the run, so something accumulates", "hours")],
    "SY004": [("Move checkpoint saves off the critical path (async save) and look for periodic host work",
               "a few very slow steps take a large share of the time", "hours")],
    "SY003": [("Raise the batch size or overlap host work with the accelerator; check the input pipeline",
               "the accelerator is idle most of the time", "hours")],
    "GE004": [("Check that labels line up with inputs: train on 64 samples; a correct pipeline memorises them "
               "and, with labels shuffled on purpose, cannot generalise", "separates data from model", "minutes"),
              ("Check that validation preprocessing and label mapping equal the training ones",
               "a broken validation pipeline also sits at chance", "minutes")],
}

#: First action when a runtime signature is the primary finding of a crash.
_SIGNATURE_ACTIONS: dict[str, tuple[str, str]] = {
    "RT007": ("Drain the node and rerun elsewhere; check `nvidia-smi -q -d ECC,PAGE_RETIREMENT` and the kernel "
              "log for Xid events", "errors after a hardware fault are its symptoms, not bugs in the run"),
    "RT008": ("Free or enlarge the output volume, keep fewer checkpoints, and check that the last checkpoint "
              "loads before resuming", "the run stopped on a full disk; a checkpoint cut short will not load"),
    "RT010": ("Check the kernel log for the OOM killer and the scheduler's memory/time limits; resume from the "
              "last checkpoint", "a killed process leaves no traceback; the sender is outside the run"),
    "RT006": ("Find what makes the gradients overflow (the steps before the first skip); train in bf16 or "
              "fp32 to confirm", "the loss scale hit its floor: fp16 numerics stopped the run"),
}


def next_actions(d: _Decision, c: _Ctx) -> list[NextAction]:
    """The smallest high-signal actions, cheapest first within the main outcome."""
    acts: list[NextAction] = []
    p = d.primary
    if d.outcome is Outcome.DIVERGED and d.cause is Cause.DATA_CONFIG:
        acts.append(NextAction(action="Check the precision setting first: train in bf16/fp32 or enable "
                                      "mixed precision with dynamic loss scaling (pure fp16 has no master "
                                      "weights or loss scaling)",
                               why="an abrupt NaN with no loss growth is numerics, not the learning rate",
                               cost="minutes"))
        acts.append(NextAction(action="Replay the batch at the onset step and check inputs/labels for "
                                      "NaN or extreme values", why="rules out a bad batch", cost="minutes"))
    elif d.outcome is Outcome.CRASHED and p is not None and p.code == "RT001":
        if p.facts.get("code_path") == "evaluation":
            acts.append(NextAction(action="Reduce evaluation peak memory: chunk the scoring, use a smaller "
                                          "eval batch, run under torch.no_grad(), or evaluate on CPU",
                                   why="the allocation failed in the evaluation path", cost="minutes"))
        else:
            acts.append(NextAction(action="Halve the micro-batch (keep the global batch with gradient "
                                          "accumulation) or enable activation checkpointing",
                                   why="the training step exceeds device memory", cost="minutes"))
    elif d.outcome is Outcome.CRASHED and p is not None and p.code in _SIGNATURE_ACTIONS:
        acts.append(NextAction(action=_SIGNATURE_ACTIONS[p.code][0], why=_SIGNATURE_ACTIONS[p.code][1],
                               cost="minutes"))
    elif d.outcome is Outcome.CRASHED and p is not None:
        acts.append(NextAction(action=f"Reproduce the failure at {p.facts.get('raising_file') or 'the raising frame'}"
                                      f":{p.facts.get('raising_line') or ''} on one batch",
                               why="the traceback names the failing code", cost="minutes"))
    elif d.cause is Cause.CORRECTNESS_BUG and p is not None and p.code in ("LI002", "LI003"):
        acts.append(NextAction(action="Restore the global step (and optimizer/scheduler state) from the "
                                      "checkpoint on resume; check that the checkpoint was actually loaded",
                               why="a reset counter means the resume started from scratch", cost="minutes"))
        acts.append(NextAction(action="Name checkpoints uniquely (run id + step): checkpoints named by step "
                                      "will overwrite the earlier segment's", why="prevents silent overwrite",
                               cost="minutes"))
    generic = [] if (p is not None and p.code in ("LI002", "LI003")) else _ACTIONS.get(d.outcome, [])
    for a, why, cost in (_PRIMARY_ACTIONS.get(p.code, []) if p is not None else []) + generic:
        acts.append(NextAction(action=a, why=why, cost=cost))
    if c.get("GE003", Severity.WARNING) and d.outcome is not Outcome.OVERFIT:
        f = c.get("GE003")
        acts.append(NextAction(action=f"Use the checkpoint at step {f.facts['best_step']} (best {f.facts['key']})",
                               why="the final checkpoint is worse than the best", cost="minutes"))
    for f in c.by_code.get("MI001", []) + c.by_code.get("MI004", []):
        acts.append(NextAction(action=f"Log {f.facts['signal']} in the next run", why=f.facts["would_tell"],
                               cost="minutes"))
    if d.cause is Cause.HEALTHY and not acts:
        acts.append(NextAction(action="Tag this run mlaudit.baseline=true so that later runs of the same "
                                      "config are judged against it (noise band from several seeds)",
                               why="a healthy reference makes the next regression audit decisive",
                               cost="minutes"))
    if d.cause is Cause.INCONCLUSIVE:
        acts.insert(0, NextAction(action="Attach the console log and the loss/validation metrics to the run",
                                  why="the verdict is blocked on missing data", cost="minutes"))
    order = {"minutes": 0, "hours": 1, "days": 2}
    return sorted(acts, key=lambda a: order[a.cost])[:8]
