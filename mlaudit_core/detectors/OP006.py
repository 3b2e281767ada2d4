"""OP006 grad-norm."""

from __future__ import annotations

import numpy as np

from ..report import Cause, ConfigEvidence, Finding, Hypothesis, Outcome, SeriesEvidence, Severity
from ..roles import Role
from ..signal import fmt
from ._knowledge import fact, hyp, said
from .base import Detector, DetectorParams, Remedy

_CLIP_PARAMS = (
    "max_grad_norm",
    "clip_grad_norm",
    "gradient_clipping",
    "grad_clip",
    "clip_grad",
    "max_norm",
    "grad_clip_norm",
    "clip_norm",
)


class GradNorm(Detector, code="OP006", name="grad-norm", family="optimization"):
    """Gradient-norm behaviour: explosion, growth over the run, and clipping frequency.

    Why it matters: a grad norm that grows by orders of magnitude precedes divergence; one
    clipped on almost every step means the effective step size is set by the clip, not
    the learning rate.
    Evidence: early and late median grad norm, the maximum and its step, and, when the clip
    threshold is in the params (``max_grad_norm`` and similar), the share of clipped steps.
    Remedy: lower the LR or warm up longer for growth/explosion; raise the clip or lower the
    LR when nearly every step is clipped.
    Thresholds: explosion when the max exceeds ``spike_factor`` 10x the median, a warning when
    at least ``min_recurring`` 3 separate spikes of that size recur after the first 10% of the run,
    spread over at least a quarter of it (one spike or one burst is an event, spikes that come back
    a pattern: a bad shard, an LR too close to the edge); growth when the
    last-quarter median exceeds ``growth_factor`` 10x the first-quarter median; frequent
    clipping above ``max_clip_share`` 50% of steps (conventions; one order of magnitude is the
    usual "exploding gradient" criterion, Pascanu et al. 2013 discuss norms growing by orders).
    """

    @classmethod
    def remedies_for(cls, finding: Finding) -> tuple[Remedy, ...]:
        """Clipping on most steps: the clip sets the step; spikes or growth: the steps behind them."""
        out = []
        if finding.facts.get("recurring_spikes") or finding.facts.get("grew"):
            out.append(
                Remedy(
                    f"Look at the loss, LR and batch at the largest grad-norm steps (max at step "
                    f"{fact(finding, 'max_step')})",
                    "spikes on single batches point at the data, a norm growing with the LR at the schedule",
                    "minutes",
                )
            )
        share = finding.facts.get("clip_share")
        if share is not None and share > 0.5:
            out.append(
                Remedy(
                    "Lower the learning rate (or raise the clip): the grad norm is above the clip on "
                    f"{100 * float(share):.0f}% of steps",
                    "when nearly every step is clipped, the clip and not the LR sets the step size",
                    "hours",
                )
            )
        elif out:
            out.append(
                Remedy(
                    "Lower the peak LR or lengthen the warmup, with gradient clipping",
                    "a grad norm that grows by orders of magnitude precedes divergence",
                    "hours",
                )
            )
        return tuple(out)

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """A run whose curves look healthy while the gradient says otherwise: both stay open."""
        if not (finding.facts.get("recurring_spikes") or finding.facts.get("grew")):
            return None
        return [
            hyp(
                "the run is healthy (the curves show no failure)",
                "open",
                Cause.HEALTHY,
                "a second seed, or the held-out metric after more steps",
                against=said(finding),
            ),
            hyp(
                "an instability is building up (grad-norm spikes or growth the loss does not show yet)",
                "open",
                Cause.MODEL_CONVERGENCE,
                "rerun with half the LR: the grad norm should stay flat",
                for_=said(finding),
            ),
        ]

    needs = (Role.GRAD_NORM,)

    class Params(DetectorParams):
        spike_factor: float = 10.0
        min_recurring: int = 3
        growth_factor: float = 10.0
        max_clip_share: float = 0.5

    @classmethod
    def contradicts_healthy(cls, finding):
        """Recurring spikes of 10x the median or more, or a grad norm grown 10x over the run."""
        return bool(finding.facts.get("recurring_spikes") or finding.facts.get("grew"))

    def check(self, run, p):
        key = run.key_for(Role.GRAD_NORM)
        s = run.series(key).by_step().finite()
        if len(s) < 8:
            return
        v = s.values
        q = max(len(v) // 4, 1)
        med, early, late = float(np.median(v)), float(np.median(v[:q])), float(np.median(v[-q:]))
        imax = int(np.argmax(v))
        problems, sev = [], Severity.INFO
        if med > 0 and v[imax] > p.spike_factor * med:
            problems.append(
                f"max {fmt(float(v[imax]))} at step {int(s.steps[imax])} is "
                f"{fmt(float(v[imax]) / med, 3)}x the median"
            )
        spikes = np.flatnonzero(v > p.spike_factor * med) if med > 0 else np.array([], dtype=int)
        # separate spike events (a spike spanning neighbouring points counts once), after the first 10%
        # of the run, where the first updates of a fresh model legitimately have large gradients
        events = [
            int(i)
            for j, i in enumerate(spikes)
            if (j == 0 or i > spikes[j - 1] + 1) and i >= len(v) // 10
        ]
        # recurring: spread over at least a quarter of the run, not one burst
        recurring = len(events) >= p.min_recurring and events[-1] - events[0] >= len(v) // 4
        if recurring:
            problems.append(
                f"{len(events)} separate spikes >= {fmt(p.spike_factor)}x the median {fmt(med)} "
                f"recur from step {int(s.steps[events[0]])} to step {int(s.steps[events[-1]])}: "
                "some batches or steps blow the gradient up again and again"
            )
            sev = Severity.WARNING
        if early > 0 and late > p.growth_factor * early:
            problems.append(
                f"grew from median {fmt(early)} (first quarter) to {fmt(late)} (last quarter)"
            )
            sev = Severity.WARNING
        clip, share = None, None
        ev = [
            SeriesEvidence(
                metric=key,
                step_start=int(s.steps[0]),
                step_end=int(s.steps[-1]),
                values={"median": med, "early": early, "late": late, "max": float(v[imax])},
            )
        ]
        for name in _CLIP_PARAMS:
            raw = next((val for k, val in run.params.items() if k.lower().endswith(name)), None)
            if raw is None:
                continue
            try:
                clip = float(raw)
            except ValueError:
                continue
            if clip > 0:
                share = float((v > clip).mean())
                ev.append(ConfigEvidence(key=name, value=str(raw)))
                if share > p.max_clip_share:
                    problems.append(
                        f"clipped on {fmt(100 * share, 3)}% of steps (clip {fmt(clip)})"
                    )
                    sev = Severity.WARNING
            break
        if not problems:
            return
        yield self.finding(
            sev,
            f"{key}: " + "; ".join(problems),
            evidence=ev,
            median=med,
            early=early,
            late=late,
            max=float(v[imax]),
            max_step=int(s.steps[imax]),
            clip=clip,
            clip_share=share,
            recurring_spikes=len(events) if recurring else 0,
            grew=bool(early > 0 and late > p.growth_factor * early),
        )
