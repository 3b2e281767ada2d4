"""LI002 step-counter-reset."""

from __future__ import annotations

import numpy as np

from ..report import Cause, Finding, Hypothesis, Outcome, SeriesEvidence, Severity
from ..roles import Role
from ..signal import clip, fmt
from ._counters import reader_counted
from .base import Detector, DetectorParams, PlotMark, Remedy, Skip, as_int


class StepCounterReset(Detector, code="LI002", name="step-counter-reset", family="integrity"):
    """The step counter went backwards, repeated, or jumped: a reset or resumed counter.

    Why it matters: a curve plotted by step overlays two segments of training; a run
    resumed without restoring its checkpoint restarts from step 0 (and checkpoints
    named by step overwrite earlier ones). Duplicate steps mean a resumed run
    re-logged a range, so the tracker shows only the last write.
    Evidence: logging position, the step before and after each reset, the count of
    repeated steps, per metric (train loss first).
    Remedy: restore the global step with the checkpoint on resume; log a resume marker.
    A reset after which the training loss is back at its starting level (closer to the first
    value than to the value before the reset, after it had fallen) is a new run appended to
    the same log (Keras ``CSVLogger(append=True)``, a relaunched script; realworld csv01):
    reported as a warning with ``appended``, not as a correctness bug. A reset to a step where
    the first segment had the same loss (within 25%) restored weights and step together from an
    earlier checkpoint (a rewind, a relaunch resumed from it): a warning with ``rewound``. Only a
    counter that went back while the loss stayed where it was (the state restored, the step not)
    is the error, and only on a logged step: on a count the console reader made (``log.step_axis``
    ``train_log_dict``, ``log.step_source`` ``record_count``, :mod:`._counters`) a counter that goes back is a warning with
    ``reader_axis`` (own corpus f6b3-10: TRL dicts on progress-bar positions of a stdout/stderr capture).
    Thresholds: any decrease is a reset; repeats are reported when more than
    ``dup_frac`` of the points share a step (a few re-logged points are common), not counting repeats of
    the last step: an evaluation after training logs at the final step again (an HF script's
    ``trainer.evaluate()`` after ``train()``; tests/data/newuser17 hf consoles). A single reset after
    fewer than ``min_segment`` 3 points is a warning (``startup``): one or two start-up values on another
    counter are not a training segment that was resumed (own corpus f5b2-14: a DeepSpeed 'step=0' engine
    line, then the trainer's 'Step 1/100' ... 'Step 100/100').
    """

    implies = "unstable"

    #: Its finding is a point of the report's timeline under this name.
    timeline_event = "step reset"

    correctness_remedies = (
        Remedy(
            "Restore the global step (and optimizer/scheduler state) from the checkpoint on resume; "
            "check that the checkpoint was actually loaded",
            "a reset counter means the resume started from scratch",
        ),
        Remedy(
            "Name checkpoints uniquely (run id + step): checkpoints named by step will overwrite the "
            "earlier segment's",
            "prevents silent overwrite",
        ),
    )
    replaces_outcome_actions = True

    class Params(DetectorParams):
        dup_frac: float = 0.01
        min_segment: int = 3

    @classmethod
    def plot_marks(cls, finding: Finding) -> list[PlotMark] | None:
        """A vertical line at the step the counter went back to, and a span over the steps
        logged twice (the plot shows their last write)."""
        a, b = as_int(finding.facts.get("step_after")), as_int(finding.facts.get("step_before"))
        if a is None:
            return None
        out = [
            PlotMark(
                "vline",
                f"LI002 step reset {b}→{a}",
                "reset",
                (a,),
                note=f"LI002: step counter went back from {b} to {a} (resume); "
                f"steps {a}–{b} show the last write",
            )
        ]
        if b is not None and b > a:
            out.append(PlotMark("span", "LI002 re-logged steps", "reset", (a, b)))
        return out

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        return resume_hypotheses(finding, outcome)

    def check(self, run, p):
        keys = [run.key_for(r) for r in (Role.TRAIN_LOSS, Role.VAL_LOSS, Role.LEARNING_RATE)]
        keys = [k for k in dict.fromkeys(keys) if k]
        if not keys:
            raise Skip("no train loss, validation loss or learning rate series logged")
        for key in keys:
            s = run.series(key)
            if len(s) < 3:
                continue
            d = np.diff(s.steps)
            resets = np.flatnonzero(d < 0)
            # repeats of the last step are an evaluation after training (a script's trainer.evaluate()
            # after train(), Lightning's validate() after fit() log at the final step again), not re-logged points
            tail = np.flatnonzero(d != 0)
            dups = int((d[: int(tail[-1]) + 1 if tail.size else 0] == 0).sum())
            if resets.size:
                i = int(resets[0])
                v = s.values
                first, before, after = float(v[0]), float(v[i]), float(v[i + 1])
                lossy = key != run.key_for(Role.LEARNING_RATE)
                learned = lossy and np.isfinite([first, before, after]).all() and before < first
                if learned and abs(after - first) < abs(after - before):
                    # the loss is back at its starting level: a new run appended to the same log or
                    # run (Keras CSVLogger(append=True), a relaunched script), not a resumed one
                    yield self.finding(
                        Severity.WARNING,
                        f"{key}: the log holds {resets.size + 1} runs one after another: the step went back from "
                        f"{int(s.steps[i])} to {int(s.steps[i + 1])} at point {i + 1} of {len(s)} and the loss "
                        f"restarted at {fmt(after)} (the first run started at {fmt(first)} and had reached "
                        f"{fmt(before)}): a relaunch from scratch, judged by its last segment",
                        evidence=[
                            SeriesEvidence(
                                metric=key,
                                step_start=int(s.steps[i + 1]),
                                step_end=int(s.steps[i]),
                                values={
                                    "step_before": float(s.steps[i]),
                                    "step_after": float(s.steps[i + 1]),
                                    "loss_before": before,
                                    "loss_after": after,
                                },
                            )
                        ],
                        key=key,
                        n_resets=int(resets.size),
                        index=i + 1,
                        appended=True,
                        step_before=int(s.steps[i]),
                        step_after=int(s.steps[i + 1]),
                    )
                    return
                if resets.size == 1 and i + 1 < p.min_segment:
                    # one or two points before the only reset: a start-up line printed on another counter (a
                    # DeepSpeed 'step=0' engine line before the trainer's 'Step 1/100'), not a training segment
                    # that was resumed
                    yield self.finding(
                        Severity.WARNING,
                        f"{key}: the step went back from {int(s.steps[i])} to {int(s.steps[i + 1])} after only "
                        f"{i + 1} point(s) of {len(s)}, then ran forward: a start-up value on another counter, not "
                        "a resumed run",
                        evidence=[
                            SeriesEvidence(
                                metric=key,
                                step_start=int(s.steps[i + 1]),
                                step_end=int(s.steps[i]),
                                values={
                                    "step_before": float(s.steps[i]),
                                    "step_after": float(s.steps[i + 1]),
                                },
                            )
                        ],
                        key=key,
                        n_resets=1,
                        index=i + 1,
                        appended=False,
                        startup=True,
                        step_before=int(s.steps[i]),
                        step_after=int(s.steps[i + 1]),
                    )
                    return
                ref = _value_at_or_before(s.steps[: i + 1], v[: i + 1], float(s.steps[i + 1]))
                if learned and (
                    _same_level(after, ref) or _same_level(*_levels(s.steps, v, resets, i))
                ):
                    # the counter went back to a step where the first segment had the same loss: weights
                    # and step were restored together from an earlier checkpoint (a rewind or a relaunch
                    # resumed from it), not a counter that lost its state (own corpus log12: a Bi-LSTM
                    # console log, epoch 100 -> 71, loss 1.49 where the first launch had 1.66 at 71)
                    yield self.finding(
                        Severity.WARNING,
                        f"{key}: the step went back from {int(s.steps[i])} to {int(s.steps[i + 1])} at point {i + 1} "
                        f"of {len(s)} with the loss at {fmt(after)}, where the first segment had {fmt(ref)}: "
                        "the run was resumed from an earlier checkpoint with its step (weights and counter "
                        "restored together); curves by step overlay the two segments",
                        evidence=[
                            SeriesEvidence(
                                metric=key,
                                step_start=int(s.steps[i + 1]),
                                step_end=int(s.steps[i]),
                                values={
                                    "step_before": float(s.steps[i]),
                                    "step_after": float(s.steps[i + 1]),
                                    "loss_after": after,
                                    "loss_then": ref,
                                },
                            )
                        ],
                        key=key,
                        n_resets=int(resets.size),
                        index=i + 1,
                        appended=False,
                        rewound=True,
                        step_before=int(s.steps[i]),
                        step_after=int(s.steps[i + 1]),
                    )
                    return
                counted = reader_counted(run)
                if counted:
                    # no optimizer step to lose: a count the reader made starts over with every training the
                    # log holds, and a progress bar's position beside a printed dict is not its step
                    yield self.finding(
                        Severity.WARNING,
                        f"{key}: the step went back from {int(s.steps[i])} to {int(s.steps[i + 1])} at point {i + 1} "
                        f"of {len(s)} ({resets.size} time(s)), but {counted}: not a resumed run that lost its step",
                        evidence=[
                            SeriesEvidence(
                                metric=key,
                                step_start=int(s.steps[i + 1]),
                                step_end=int(s.steps[i]),
                                values={
                                    "step_before": float(s.steps[i]),
                                    "step_after": float(s.steps[i + 1]),
                                },
                            )
                        ],
                        key=key,
                        n_resets=int(resets.size),
                        index=i + 1,
                        appended=False,
                        reader_axis=True,
                        step_before=int(s.steps[i]),
                        step_after=int(s.steps[i + 1]),
                    )
                    return
                yield self.finding(
                    Severity.ERROR,
                    f"{key}: step counter went back from {int(s.steps[i])} to {int(s.steps[i + 1])} "
                    f"at point {i + 1} of {len(s)} ({resets.size} reset(s)); the run was "
                    "resumed or restarted without restoring its step",
                    evidence=[
                        SeriesEvidence(
                            metric=key,
                            step_start=int(s.steps[i + 1]),
                            step_end=int(s.steps[i]),
                            values={
                                "step_before": float(s.steps[i]),
                                "step_after": float(s.steps[i + 1]),
                            },
                        )
                    ],
                    key=key,
                    n_resets=int(resets.size),
                    index=i + 1,
                    appended=False,
                    step_before=int(s.steps[i]),
                    step_after=int(s.steps[i + 1]),
                )
                return
            if dups > p.dup_frac * len(s):
                yield self.finding(
                    Severity.WARNING,
                    f"{key}: {dups} of {len(s)} points repeat the previous step",
                    evidence=[SeriesEvidence(metric=key, values={"repeated": float(dups)})],
                    key=key,
                    n_repeated=dups,
                )
                return


def _same_level(after: float | None, ref: float | None) -> bool:
    """Whether a loss after a reset is within 25% of the first segment's at that step."""
    return (
        after is not None
        and ref is not None
        and bool(np.isfinite([after, ref]).all())
        and ref > 0
        and 0.75 <= after / ref <= 1.25
    )


#: Points on each side of a reset whose median is the loss level there: a per-batch loss is noisy
#: (a single batch's value is often 25% off its neighbours), five points' median is not.
_LEVEL_POINTS = 5


def _levels(
    steps: np.ndarray, values: np.ndarray, resets: np.ndarray, i: int
) -> tuple[float | None, float | None]:
    """The loss level right after the reset at point ``i`` (the median of up to
    :data:`_LEVEL_POINTS` points before the next reset) and the first segment's level at that step
    (the median of its last :data:`_LEVEL_POINTS` points at or before it); None when a side has
    fewer than 3 points."""
    end = int(resets[1]) + 1 if resets.size > 1 else len(values)
    after = values[i + 1 : min(end, i + 1 + _LEVEL_POINTS)]
    idx = np.flatnonzero(steps[: i + 1] <= steps[i + 1])[-_LEVEL_POINTS:]
    if after.size < 3 or idx.size < 3:
        return None, None
    return float(np.nanmedian(after)), float(np.nanmedian(values[idx]))


def _value_at_or_before(steps: np.ndarray, values: np.ndarray, step: float) -> float | None:
    """The first segment's value at the last point whose step is <= ``step`` (``None`` if none)."""
    idx = np.flatnonzero(steps <= step)
    if not idx.size:
        return None
    return float(values[int(idx[-1])])


def resume_hypotheses(finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
    """A reset step counter that is not a crash: resumed without its checkpoint (supported), or
    two jobs logging into one run id (open). Shared by LI002 and LI003."""
    if outcome is Outcome.CRASHED:
        return None
    return [
        Hypothesis(
            statement="the job was resumed without restoring its checkpoint (state and step)",
            status="supported",
            cause=Cause.CORRECTNESS_BUG,
            evidence_for=[clip(finding.message)],
            discriminating_test="look for the checkpoint-load line in the resumed job's log; "
            "compare the first resumed loss with the last loss before",
        ),
        Hypothesis(
            statement="two different jobs logged into the same run id",
            status="open",
            cause=Cause.CORRECTNESS_BUG,
            discriminating_test="compare hosts, start times and params of the two segments",
        ),
    ]
