"""RT006 fp16-overflow-skips."""

from __future__ import annotations

import numpy as np

from ..report import Cause, FactEvidence, Finding, Hypothesis, Outcome, SeriesEvidence, Severity
from ..roles import Role
from ..signal import fmt
from ..signatures import scan_run
from ._knowledge import hyp, said
from .base import Detector, DetectorParams, Remedy, Skip

#: Series the console-log parser (and trackers) write for skipped fp16 steps.
EVENTS_KEY = (
    "train/overflow_skips"  # one point per skipped step (apex, DeepSpeed, fairseq messages)
)
INTERVAL_KEY = "train/skipped_iterations"  # Megatron: skipped iterations per logging interval
CUMULATIVE_KEY = "train/skipped_steps_total"  # DeepSpeed: running count of skipped steps


class Fp16OverflowSkips(Detector, code="RT006", name="fp16-overflow-skips", family="runtime"):
    """Steps skipped for fp16 gradient overflow, read in context: benign dynamic scaling or a failure.

    Why it matters: with dynamic loss scaling (apex, torch GradScaler, DeepSpeed,
    Megatron, fairseq) an overflowing step is skipped and the loss scale halved;
    a few skips while the scale settles are the mechanism working, not a fault.
    Many skips, long runs of consecutive skips, a scale that collapses towards 1,
    or a "minimum loss scale reached" error mean the gradients are inf/NaN on
    most steps: the run stops learning (or stops).
    Evidence: number of skipped steps and their share of the steps run, the steps
    they happened at and the longest run of consecutive skips, the loss-scale
    trajectory and its minimum, whether the training loss has NaN/inf values, and
    the training loss before the first and after the last skip.
    Remedy: benign: nothing. Failing: find what makes gradients overflow (a loss
    spike, LR too high, an fp16-unsafe op), use bf16, or raise the minimum loss scale
    only after that.
    Thresholds: failing when the scale falls to ``collapse_scale`` 1.0 or below (a
    scale under 1 shrinks gradients, so they overflow unscaled), when more than
    ``max_skip_share`` 5% of steps are skipped (dynamic scalers grow the scale again
    after 1000-2000 clean steps, DeepSpeed ``loss_scale_window`` and torch
    ``GradScaler(growth_interval=2000)``, so steady state is about one skip per
    thousand steps; 5% is 50x that; the share is read only over ``min_share_steps`` 100 steps
    or more: a pasted window of a few records with one skip is 5-25% "skipped" and says nothing
    about the steady state, reports b2-02 / b5-05), when ``max_consecutive`` 25 or more steps are
    skipped in a row (DeepSpeed's first 2^32 -> 2^16 descent alone is 16 skips), or
    on a minimum-loss-scale error.
    """

    implies = "diverged"

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """The overflow skips as dynamic loss scaling at work (benign) against gradients that
        overflow on most steps (a failure), from the finding's ``benign`` fact."""
        benign = bool(finding.facts.get("benign"))
        return [
            hyp(
                "the fp16 overflow messages are dynamic loss scaling at work (a few skips, the scale "
                "settles)",
                "supported" if benign else "rejected",
                Cause.HEALTHY,
                "plot the loss scale: it settles above its floor when the mechanism works",
                for_=said(finding) if benign else [],
                against=[] if benign else said(finding),
            ),
            hyp(
                "the gradients overflow on most steps (a loss spike, an LR too high, an fp16-unsafe op)",
                "rejected" if benign else "supported",
                Cause.DATA_CONFIG,
                "rerun the first overflowing steps in bf16 or fp32: a numerics failure disappears, an "
                "LR problem does not",
                for_=[] if benign else said(finding),
                against=said(finding) if benign else [],
            ),
        ]

    crash_remedy = Remedy(
        "Find what makes the gradients overflow (the steps before the first skip); train in bf16 or fp32 to confirm",
        "the loss scale hit its floor: fp16 numerics stopped the run",
    )

    class Params(DetectorParams):
        collapse_scale: float = 1.0
        max_skip_share: float = 0.05
        max_consecutive: int = 25
        min_share_steps: int = 100

    shows_reduced_precision = True
    surprise_rank = 1

    @classmethod
    def surprising(cls, finding: Finding) -> str | None:
        """Overflow skips the loss scaler recovered from (info) are routine, worth knowing."""
        return finding.message if finding.severity is Severity.INFO else None

    def check(self, run, p):
        hits, _ = scan_run(run) if run.console else ([], [])
        overflow_hits = [h for h in hits if h.signature.category == "overflow_skip"]
        min_hits = [h for h in hits if h.signature.category == "min_loss_scale"]
        n_skips, steps = self._skips(run, overflow_hits)
        if n_skips == 0 and not min_hits:
            return
        total = self._steps_run(run)
        share = n_skips / total if total else None
        longest = (
            self._longest_run(steps) if steps.size else (n_skips if n_skips and not total else None)
        )
        scale = self._scales(run, overflow_hits)
        min_scale = float(min(scale)) if scale else None
        loss, nonfinite, before, after = self._loss_around(run, steps)
        nan_msgs = [h for h in hits if h.signature.category == "nan"]
        reasons = self._reasons(p, bool(min_hits), min_scale, share, total, longest)
        failing = bool(reasons)
        msg = self._skips_message(n_skips, total, share, steps, longest, scale, min_scale)
        if loss:
            msg += self._loss_message(loss, nonfinite, before, after, steps)
        if failing:
            msg += ": fp16 loss scaling is failing (" + "; ".join(reasons) + ")"
        else:
            msg += ": dynamic loss scaling working as designed, benign"
        ev = []
        if steps.size:
            ev.append(
                SeriesEvidence(
                    metric=EVENTS_KEY if EVENTS_KEY in run.metrics else INTERVAL_KEY,
                    step_start=int(steps.min()),
                    step_end=int(steps.max()),
                    values={"skipped": float(n_skips), "min_loss_scale": min_scale},
                )
            )
        for h in (min_hits + overflow_hits)[:3]:
            ev.append(self._log(h.line))
        if not ev:
            ev.append(FactEvidence(text=msg, values={"skipped": n_skips}))
        yield self.finding(
            Severity.ERROR if failing else Severity.INFO,
            msg,
            evidence=ev,
            n_skipped=n_skips,
            total_steps=total,
            skip_share=share,
            longest_consecutive=longest,
            skip_steps=[int(x) for x in steps[:50]],
            loss_scales=scale[:50],
            min_loss_scale=min_scale,
            min_scale_error=bool(min_hits),
            loss_nonfinite=nonfinite,
            nan_messages=len(nan_msgs),
            loss_before=before,
            loss_after=after,
            benign=not failing,
            reasons=reasons,
        )

    @staticmethod
    def _skips(run, overflow_hits) -> tuple[int, np.ndarray]:
        """How many steps were skipped and at which steps: from the per-step skip events, the
        per-interval counts or the cumulative counter logged (first found), else the console's
        overflow lines (no steps). Raises Skip with neither a console nor a counter."""
        steps = np.array([], dtype=np.int64)
        if EVENTS_KEY in run.metrics:
            ev = run.metrics.series(EVENTS_KEY)
            return int(np.nansum(ev.values)), ev.steps
        if INTERVAL_KEY in run.metrics:
            ev = run.metrics.series(INTERVAL_KEY).finite()
            return int(ev.values.sum()), ev.steps[ev.values > 0]
        if CUMULATIVE_KEY in run.metrics:
            ev = run.metrics.series(CUMULATIVE_KEY).by_step().finite()
            if len(ev):
                steps = ev.steps[np.diff(np.concatenate([[0.0], ev.values])) > 0]
            return (int(ev.values.max()) if len(ev) else 0), steps
        if run.console:
            return len(overflow_hits), steps
        raise Skip("no console output and no overflow counters logged")

    @staticmethod
    def _loss_around(run, steps: np.ndarray):
        """The training loss key, whether it holds a NaN/inf, and its median over the last 10
        finite points before the first skip and after the last one (None when not logged)."""
        loss = run.key_for(Role.TRAIN_LOSS)
        nonfinite = False
        before = after = None
        if loss:
            s = run.series(loss).by_step()
            nonfinite = bool((~np.isfinite(s.values)).any())
            f = s.finite()
            if steps.size and len(f):
                b = f.values[f.steps < steps.min()][-10:]
                a = f.values[f.steps > steps.max()][-10:]
                before = float(np.median(b)) if b.size else None
                after = float(np.median(a)) if a.size else None
        return loss, nonfinite, before, after

    @staticmethod
    def _reasons(p, min_hit: bool, min_scale, share, total, longest) -> list[str]:
        """Why loss scaling is failing (none: benign): the minimum scale reached, the scale at or
        below ``collapse_scale``, more than ``max_skip_share`` of at least ``min_share_steps``
        steps skipped, or ``max_consecutive`` skips in a row."""
        reasons = []
        if min_hit:
            reasons.append("the minimum loss scale was reached")
        if min_scale is not None and min_scale <= p.collapse_scale:
            reasons.append(f"the loss scale collapsed to {fmt(min_scale)}")
        if share is not None and share > p.max_skip_share and (total or 0) >= p.min_share_steps:
            reasons.append(
                f"{fmt(100 * share, 3)}% of steps were skipped (> {fmt(100 * p.max_skip_share, 2)}%)"
            )
        if longest is not None and longest >= p.max_consecutive:
            reasons.append(f"{longest} steps were skipped in a row")
        return reasons

    @staticmethod
    def _skips_message(n_skips, total, share, steps, longest, scale, min_scale) -> str:
        """The skips counted, where (the first 8 steps), the longest run and the scale's path."""
        where = (
            f" out of {total}" + (f" ({fmt(100 * share, 2)}%)" if share is not None else "")
            if total
            else ""
        )
        at = ""
        if steps.size:
            shown = ", ".join(str(int(x)) for x in steps[:8]) + (" ..." if steps.size > 8 else "")
            at = f" at step{'s' if steps.size > 1 else ''} {shown}"
        msg = f"{n_skips} step{'s' if n_skips != 1 else ''} skipped for fp16 gradient overflow{where}{at}"
        if longest is not None and steps.size:
            msg += f", at most {longest} in a row"
        if scale:
            traj = " -> ".join(fmt(x, 6) for x in scale[:6]) + (" ..." if len(scale) > 6 else "")
            msg += f"; loss scale {traj}, never below {fmt(min_scale, 6)}"
        return msg

    @staticmethod
    def _loss_message(loss, nonfinite, before, after, steps) -> str:
        """Whether the loss holds a NaN/inf and kept decreasing after the overflows."""
        msg = f"; {loss} has {'NaN/inf values' if nonfinite else 'no NaN/inf'}"
        if before is not None and after is not None:
            trend = "kept decreasing" if after < before else "did not decrease"
            msg += (
                f" and {trend} after the overflows (median {fmt(before)} before step {int(steps.min())}, "
                f"{fmt(after)} after step {int(steps.max())})"
            )
        return msg

    @staticmethod
    def _log(line):
        from ..report import LogEvidence

        return LogEvidence(source=line.source, line=line.lineno, text=line.text.strip()[:500])

    @staticmethod
    def _steps_run(run) -> int | None:
        """The number of steps the run went through: the largest step of a training-side series."""
        best = 0
        for role in (Role.TRAIN_LOSS, Role.THROUGHPUT, Role.STEP_TIME, Role.LEARNING_RATE):
            k = run.key_for(role)
            if k:
                s = run.series(k)
                if len(s):
                    best = max(best, int(s.steps.max()))
        total = run.params.get("log.total_steps")
        if total and total.isdigit() and best and int(total) >= best:
            best = int(total)
        return best or None

    @staticmethod
    def _longest_run(steps: np.ndarray) -> int:
        u = np.unique(steps)
        if u.size == 0:
            return 0
        breaks = np.flatnonzero(np.diff(u) > 1)
        edges = np.concatenate([[-1], breaks, [u.size - 1]])
        return int(np.diff(edges).max())

    @staticmethod
    def _scales(run, hits) -> list[float]:
        """The loss scale's trajectory (the logged series without repeats, else the figures of the
        overflow lines). Zeros before its first positive value are dropped (a series of zeros only is
        no trajectory: the overflow lines' figures are read): a live dynamic scale is a
        positive power of two, and 0 is the configuration value that selects dynamic scaling
        (DeepSpeed's ``fp16.loss_scale``, printed in its config dump as ``loss_scale=0.0``: own corpus
        f5b2-13), not a scale that collapsed."""
        k = run.key_for(Role.LOSS_SCALE)
        if k:
            s = run.series(k).finite()
            pos = np.flatnonzero(s.values > 0)
            if pos.size:
                v = s.values[pos[0] :]
                keep = np.concatenate([[True], v[1:] != v[:-1]])  # the trajectory, without repeats
                return [float(x) for x in v[keep]]
        out = []
        for h in hits:
            try:
                out.append(float(h.figures["loss_scale"]))
            except (KeyError, ValueError):
                continue
        return out
