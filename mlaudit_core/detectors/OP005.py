"""OP005 lr-schedule."""

from __future__ import annotations

import numpy as np

from ..report import Cause, Finding, Hypothesis, Outcome, SeriesEvidence, Severity
from ..roles import Role
from ..signal import fmt
from ._knowledge import fact, hyp, said
from .base import Detector, DetectorParams, Remedy


class LrSchedule(Detector, code="OP005", name="lr-schedule", family="optimization"):
    """Learning-rate schedule phases from the logged LR, and schedule problems.

    Why it matters: a warmup that is too short or a peak that is too hot destabilises the start,
    and a schedule that decays to almost nothing early leaves the rest of the run unable to learn.
    Reports the phases (warmup, constant, decay, restarts) at info level, and warns when:
    the training loss becomes unstable (spike or non-finite) within the warmup or right
    after the LR peak (warmup too short or peak too hot); or the LR decays to almost
    nothing before half of the run (the rest of the run cannot learn).
    Evidence: warmup end step and peak LR, decay start, final LR, and the instability step.
    Remedy: longer warmup or lower peak LR; align the schedule's total steps with the run.
    Thresholds: "right after the peak" is within ``after_peak_factor`` 2x the warmup
    length; "almost nothing" is below ``min_lr_ratio`` 1% of the peak (convention: cosine
    schedules in common recipes end at 0-10% of the peak at the *end* of training).
    """

    @classmethod
    def remedies_for(cls, finding: Finding) -> tuple[Remedy, ...]:
        """The schedule problem the finding names: a hot start or an early decay to zero."""
        out = []
        if finding.facts.get("early_zero_step") is not None:
            out.append(
                Remedy(
                    f"Set the schedule's total steps to the run's length (the LR reaches almost 0 at step "
                    f"{fact(finding, 'early_zero_step')}, before half of the run)",
                    "the steps after the LR reached 0 cannot learn; a horizon that matches the run uses them",
                    "minutes",
                )
            )
        if finding.facts.get("hot_step") is not None:
            out.append(
                Remedy(
                    f"Lengthen the warmup past step {fact(finding, 'hot_step')} or lower the peak LR "
                    f"({fact(finding, 'peak_lr')})",
                    "the loss became unstable within the warmup or right after the peak",
                    "hours",
                )
            )
        return tuple(out)

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """The schedule as the cause: a hot start, a horizon shorter than the run; none for the
        phases reported at info level."""
        hs = []
        if finding.facts.get("hot_step") is not None:
            hs.append(
                hyp(
                    "warmup too short or peak LR too hot",
                    "supported",
                    Cause.MODEL_CONVERGENCE,
                    "rerun with twice the warmup: the instability should move later or vanish",
                    for_=said(finding),
                )
            )
        if finding.facts.get("early_zero_step") is not None:
            hs.append(
                hyp(
                    "the schedule's horizon is shorter than the run (the LR decays to 0 early)",
                    "supported",
                    Cause.DATA_CONFIG,
                    "compare the scheduler's total steps with the steps the run made",
                    for_=said(finding),
                )
            )
        return hs or None

    needs = (Role.LEARNING_RATE,)

    class Params(DetectorParams):
        after_peak_factor: float = 2.0
        min_lr_ratio: float = 0.01
        spike_factor: float = 2.0

    surprise_rank = 4

    @classmethod
    def surprising(cls, finding: Finding) -> str | None:
        """A learning rate already near zero early in the run (the schedule ends too soon)."""
        return finding.message if finding.facts.get("early_zero_step") else None

    def check(self, run, p):
        key = run.key_for(Role.LEARNING_RATE)
        lr = run.series(key).by_step().finite()
        if len(lr) < 3:
            return
        v, st = lr.values, lr.steps
        ipk = int(np.argmax(v))
        peak = float(v[ipk])
        warm_end = int(st[ipk]) if ipk > 0 and v[0] < 0.9 * peak else None
        restarts = int((np.diff(v) > 0.5 * peak).sum()) if peak > 0 else 0
        phases = []
        if warm_end is not None:
            phases.append(f"warmup to step {warm_end} (LR {fmt(float(v[0]))} -> {fmt(peak)})")
        decay_i = next((i for i in range(ipk, len(v)) if v[i] < 0.95 * peak), None)
        if decay_i is not None:
            phases.append(f"decay from step {int(st[decay_i])} to LR {fmt(float(v[-1]))}")
        else:
            phases.append(f"constant at {fmt(peak)}")
        if restarts:
            phases.append(f"{restarts} restart(s)")
        problems = []
        tk = run.key_for(Role.TRAIN_LOSS)
        hot_step = None
        if tk and warm_end is not None:
            t = run.series(tk).by_step()
            horizon = warm_end + p.after_peak_factor * max(warm_end - int(st[0]), 1)
            win = t.steps <= horizon
            tv = t.values[win]
            if tv.size > 3:
                bad = ~np.isfinite(tv)
                ref = (
                    np.nanmin(np.where(np.isfinite(tv), tv, np.nan))
                    if np.isfinite(tv).any()
                    else np.nan
                )
                rise = np.isfinite(tv) & (tv > p.spike_factor * max(float(tv[0]), 1e-12))
                hit = np.flatnonzero(bad | rise)
                if hit.size and np.isfinite(ref):
                    hot_step = int(t.steps[win][hit[0]])
                    problems.append(
                        f"training loss unstable at step {hot_step}, within the warmup or "
                        f"right after the LR peak at step {warm_end}: warmup too short or "
                        "peak LR too hot"
                    )
        below = np.flatnonzero(v < p.min_lr_ratio * peak)
        early_zero = None
        if below.size and peak > 0:
            i0 = int(below[0])
            if i0 > ipk and st[i0] < st[0] + 0.5 * (st[-1] - st[0]):
                early_zero = int(st[i0])
                problems.append(
                    f"LR below {fmt(100 * p.min_lr_ratio, 2)}% of its peak from step {early_zero}, "
                    "before half of the run"
                )
        sev = Severity.WARNING if problems else Severity.INFO
        msg = "LR schedule: " + "; ".join(phases) + ("; " + "; ".join(problems) if problems else "")
        yield self.finding(
            sev,
            msg,
            evidence=[
                SeriesEvidence(
                    metric=key,
                    step_start=int(st[0]),
                    step_end=int(st[-1]),
                    values={"peak": peak, "final": float(v[-1])},
                )
            ],
            warmup_end_step=warm_end,
            peak_lr=peak,
            final_lr=float(v[-1]),
            restarts=restarts,
            hot_step=hot_step,
            early_zero_step=early_zero,
        )
