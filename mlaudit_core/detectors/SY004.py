"""SY004 step-time-outliers."""

from __future__ import annotations

import numpy as np

from ..report import Cause, Finding, Hypothesis, Outcome, SeriesEvidence, Severity
from ..roles import Role
from ..signal import fmt
from ._context import wall_step_times
from ._knowledge import hyp, said, time_not_convergence
from .base import Detector, DetectorParams, Remedy, Skip


class StepTimeOutliers(Detector, code="SY004", name="step-time-outliers", family="systems"):
    """Some steps take many times the median step time (stalls, checkpoint saves, evaluation, GC).

    Why it matters: isolated slow steps are normal (checkpointing, evaluation); when
    they add up to a large share of the wall time they are worth removing.
    Evidence: the number of outlier steps, the share of total step time they take,
    and the slowest steps. The first ``skip`` points (startup and compilation) are
    reported apart as startup time.
    Remedy: move checkpoint saves off the critical path (async save), evaluate less
    often, look for periodic host work.
    Thresholds: a step is an outlier above ``factor`` 5x the median; it is a finding
    when outliers take more than ``max_share`` 10% of the total step time
    (convention; below that the tail is normal jitter) and their excess over the median adds
    up to at least ``min_lost_seconds`` 0.5 s (measured here: a 0.5 ms/step toy run on a loaded
    2-core machine shows dozens of 5x "stalls" from OS scheduling that cost under 0.3 s).
    Recurring pauses: steps at ``pause_factor`` 2x the median or more (a step that doubled) on at
    least ``min_pause_steps`` 5% of the steps, in at least ``min_pause_events`` 3 separate stretches,
    taking ``min_pause_share`` 20% of the step time or more and ``min_lost_seconds`` in all: a pattern
    (a data loader that stalls every few batches, a slow shard), not jitter (measured here with
    tests/detectors/judgement_runs.py: a healthy loop has 0.3% of its steps at 2x, 0.6% of the time;
    the same loop with a loader pausing 60 ms every 8th batch 12.5% of steps, 44% of the time). A
    pause is also at least ``min_pause_seconds`` 10 ms longer than the median, and pauses are at most
    ``max_pause_steps`` 30% of the steps (the exception, not the rule): a loop of 1 ms steps has 47%
    of its wall-time intervals at 2x from logging and scheduling jitter alone (measured on the same
    script's gradspikes run). And the pauses keep a rhythm: one spacing between consecutive pause
    steps accounts for at least ``min_periodic`` 50% of the spacings (a loader whose prefetch runs
    dry every k batches, a shard read every k steps), where the load of other jobs on a shared
    machine stalls steps at random (measured on the generated corpus made on this 2-core machine:
    a healthy run with 8% of its steps at 2x, 26% of the step time, no dominant spacing; the
    pausing loader of judgement_runs.py: every spacing 8). The spacing is read between the starts of
    pause stretches (consecutive paused steps are one stretch): slow steps side by side are a slow
    spell, not a pause that recurs (tests/data/newuser17: a healthy MLflow run logging every step over
    HTTP at load 13-16, 15% of its steps at 2x, 54% of the spacings 1 step; between stretches no
    spacing holds more than 13%).
    A step-time series of per-epoch means (``log.step_time_over`` = ``epoch``: the console's Keras
    epoch lines print the epoch's mean ``ms/step``) is skipped: a pause every k batches raises every
    epoch's mean alike, and what differs between epochs is the machine's load (tests/data/newuser12:
    a healthy Keras run on a shared 2-core machine swings 3-269 ms/step between epochs).
    Without a step-time series, the step times come from the records' own wall times
    (``_context.wall_step_times``: TensorBoard, MLflow, W&B timestamps), for the recurring-pause
    check only.
    """

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """Slow steps: periodic host work (recurring) against random stalls."""
        recurring = bool(finding.facts.get("recurring"))
        return [
            hyp(
                "periodic work on the critical path (checkpoint saves, evaluation, garbage collection)",
                "supported" if recurring else "open",
                Cause.INFRA_RUNTIME,
                "compare the slow steps with the checkpoint and evaluation interval",
                for_=said(finding) if recurring else [],
            ),
            hyp(
                "random stalls (I/O, network storage, other jobs on the node)",
                "rejected" if recurring else "open",
                Cause.INFRA_RUNTIME,
                "the node's I/O wait at the slow steps",
                against=["the slow steps recur at a fixed interval"] if recurring else [],
            ),
            time_not_convergence(),
        ]

    remedies = (
        Remedy(
            "Move checkpoint saves off the critical path (async save) and look for periodic host work",
            "a few very slow steps take a large share of the time",
            "hours",
        ),
    )

    class Params(DetectorParams):
        factor: float = 5.0
        max_share: float = 0.10
        skip: int = 3
        min_lost_seconds: float = 0.5
        pause_factor: float = 2.0
        min_pause_steps: float = 0.05
        min_pause_share: float = 0.20
        min_pause_events: int = 3
        max_pause_steps: float = 0.30
        min_pause_seconds: float = 0.01
        min_periodic: float = 0.5

    def check(self, run, p):
        key = run.key_for(Role.STEP_TIME)
        if key is not None and run.params.get("log.step_time_over") == "epoch":
            raise Skip(
                "the step times are per-epoch means (one point per epoch, e.g. Keras 'ms/step'): a "
                "pause within an epoch is averaged out and the spread between epochs is the machine's load"
            )
        if key is not None:
            s = run.series(key).by_step().finite()
            steps, vals, source = s.steps, s.values, key
        else:
            got = wall_step_times(run)
            if got is None:
                raise Skip("no step time logged and no per-point wall times to read it from")
            source, steps, vals, _ = got
        if len(vals) <= p.skip + 5:
            return
        v = vals[p.skip :]
        st = steps[p.skip :]
        med = float(np.median(v))
        if med <= 0:
            return
        pauses = (v >= p.pause_factor * med) & (v - med >= p.min_pause_seconds)
        p_share = float(v[pauses].sum() / v.sum())
        p_lost = float((v[pauses] - med).sum())
        events = int(np.sum(pauses[1:] & ~pauses[:-1]) + int(pauses[0]))
        # the rhythm is read between pause stretches (consecutive paused steps are one stretch): slow steps
        # side by side are a slow spell (load, the tracker's own latency), not a pause that comes back
        starts = pauses.copy()
        starts[1:] &= ~pauses[:-1]
        gaps = np.diff(st[starts])
        period, mode_gap = 0.0, 0
        if gaps.size:
            vals_, counts = np.unique(gaps, return_counts=True)
            period, mode_gap = float(counts.max() / gaps.size), int(vals_[int(np.argmax(counts))])
        if (
            p.min_pause_steps <= pauses.mean() <= p.max_pause_steps
            and p_share >= p.min_pause_share
            and events >= p.min_pause_events
            and p_lost >= p.min_lost_seconds
            and period >= p.min_periodic
        ):
            worst = np.argsort(v)[::-1][:3]
            yield self.finding(
                Severity.WARNING,
                f"{int(pauses.sum())} of {len(v)} steps ({fmt(100 * float(pauses.mean()), 3)}%) take {fmt(p.pause_factor, 2)}x "
                f"the median step time ({fmt(med)} s) or more, recurring from step {int(st[pauses][0])} to "
                f"{int(st[pauses][-1])} ({fmt(100 * period, 3)}% of the {int(starts.sum())} pauses start "
                f"{mode_gap} steps apart): pauses that take {fmt(100 * p_share, 3)}% of the step time "
                f"({fmt(p_lost, 3)} s lost; {source}); slowest at step(s) "
                + ", ".join(str(int(st[i])) for i in worst),
                evidence=[
                    SeriesEvidence(
                        metric=source if key else run.key_for(Role.TRAIN_LOSS) or source,
                        step_start=int(st[i]),
                        step_end=int(st[i]),
                        values={"step_time_s": float(v[i])},
                    )
                    for i in worst
                ],
                n_outliers=int(pauses.sum()),
                share=p_share,
                median_s=med,
                lost_seconds=p_lost,
                recurring=True,
                from_wall_times=key is None,
            )
            return
        if key is None:
            return  # isolated slow steps read from wall times are logging and host jitter as often as stalls
        out = v > p.factor * med
        share = float(v[out].sum() / v.sum())
        lost = float((v[out] - med).sum())
        if share <= p.max_share or lost < p.min_lost_seconds:
            return
        worst = np.argsort(v)[::-1][:3]
        yield self.finding(
            Severity.WARNING,
            f"{int(out.sum())} steps over {fmt(p.factor, 2)}x the median step time ({fmt(med)} s) take "
            f"{fmt(100 * share, 3)}% of all step time; slowest at step(s) "
            + ", ".join(str(int(st[i])) for i in worst),
            evidence=[
                SeriesEvidence(
                    metric=key,
                    step_start=int(st[i]),
                    step_end=int(st[i]),
                    values={"step_time_s": float(v[i])},
                )
                for i in worst
            ],
            n_outliers=int(out.sum()),
            share=share,
            median_s=med,
            lost_seconds=lost,
        )
