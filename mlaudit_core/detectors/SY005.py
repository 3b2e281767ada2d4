"""SY005 time-outside-training."""

from __future__ import annotations

from datetime import datetime

import numpy as np

from ..formats.consolelog.parser import _TS
from ..plan import NORMAL_END
from ..report import Cause, Finding, Hypothesis, Outcome, SeriesEvidence, Severity
from ..roles import Role
from ..signal import fmt
from ._knowledge import hyp, said, time_not_convergence
from .base import Detector, DetectorParams, Remedy, Skip


def _relaunch_steps(raw) -> np.ndarray:
    """The steps at which a series, in the order it was logged, starts again at or below a step it had
    logged already, later on the clock: a relaunch that restored its step counter (a job killed and
    resumed into the same tracker run: 417 then 387). ``raw`` is a :class:`~mlaudit_core.rundata.Series`
    in logging order; empty when the steps only advance."""
    if len(raw) < 2:
        return np.zeros(0, dtype=raw.steps.dtype)
    back = (np.diff(raw.steps) <= 0) & (np.diff(raw.wall_times) > 0)
    return raw.steps[1:][back]


def _idle_between_launches(run, w: np.ndarray, steps: np.ndarray | None = None) -> np.ndarray:
    """Mask over the gaps ``w[i] -> w[i+1]`` (points at ``steps``) that hold a timestamped end-of-training
    line, or across which the run's epoch counter or its training-loss step starts again (a relaunch:
    'Epoch 10' then 'Epoch 1'; step 417 then 387 later on the clock): the time from one launch's end to
    the next launch's first step is not time of the run."""
    mask = np.zeros(max(w.size - 1, 0), dtype=bool)
    key = run.key_for(Role.TRAIN_LOSS)
    if key and steps is not None and w.size >= 2:
        for st in _relaunch_steps(run.series(key)).tolist():
            i = (
                int(np.searchsorted(steps, st, side="left")) - 1
            )  # the gap that ends at the relaunch's first step
            if 0 <= i < mask.size:
                mask[i] = True
    ek = run.key_for(Role.EPOCH)
    if ek and steps is not None and w.size >= 2:
        e = run.series(ek).by_step().finite()
        if len(e) >= 2:
            back = e.steps[1:][np.diff(e.values) < 0]  # the step of each epoch point that went back
            for st in back.tolist():
                i = (
                    int(np.searchsorted(steps, st, side="left")) - 1
                )  # the gap that ends at or after it
                if 0 <= i < mask.size:
                    mask[i] = True
    if w.size < 2 or not run.console:
        return mask
    for cl in run.console:
        if not NORMAL_END.search(cl.text):
            continue
        m = _TS.match(cl.text)
        if not m:
            continue
        try:
            t = datetime.fromisoformat(
                m["ts"].replace(",", ".")
            ).timestamp()  # naive local, as the reader
        except ValueError:
            continue
        i = int(np.searchsorted(w, t, side="right")) - 1  # the gap w[i] <= t < w[i+1]
        if 0 <= i < mask.size and w[i + 1] > t:
            mask[i] = True
    return mask


class TimeOutsideTraining(Detector, code="SY005", name="time-outside-training", family="systems"):
    """A large share of the wall time is spent outside training steps, mostly in evaluation.

    Why it matters: evaluation, checkpointing and logging that take more wall time than the
    training itself make every experiment slower without improving the model; the fix is a
    cadence or an implementation change, not a hyperparameter.
    Evidence: from the per-step wall times of the training-loss series, the gap between
    consecutive steps minus the logged step time (or minus the median gap when no step
    time is logged) is time outside the step; gaps that follow a step with a validation
    point are attributed to evaluation. Reported: evaluation share, other outside share,
    number of evaluations and the mean seconds per evaluation.
    Remedy: evaluate less often or on a fixed subset, make evaluation batched and
    gradient-free, move checkpoint saving off the critical path.
    Not run time: a gap that holds the trainer's end-of-training line (:data:`~mlaudit_core.plan.NORMAL_END`,
    timestamped), or across which the epoch counter starts again, is the idle time between one launch's end
    and the next launch appended to the same log (own corpus f5b1-03: three launches, 8 h idle between the
    first two; f5b3-11: three 10-epoch launches 'Epoch 1..10'), or where the training loss, in the order
    it was logged, starts again at a step it had passed, later on the clock (a job killed and resumed into
    the same tracker run; tests/data/newuser17: an MLflow run SIGKILLed at step 417 and resumed from its
    step-387 checkpoint 20 s later); it is left out of the wall time.
    Not judged (skipped): wall times that go back in step order (segments of several launches overlay
    one step axis) or that advance at fewer than ``min_advancing_share`` half of the steps (training
    lines without their own timestamp carry the last timestamped line's time, so the clock does not time
    the steps).
    Not judged either when more than ``max_outlier_share`` a quarter of the gaps sit beyond the fence with no
    evaluation beside them: outliers are a minority by definition, so the points come at several cadences
    (own corpus f5b1-03: a per-200-batch line and an epoch summary alternate, 20 s and 264 s) and the
    median gap times no step.
    Thresholds: evaluation above ``max_eval_share`` 30% of the wall time, or all time
    outside steps above ``max_outside_share`` 50% (convention: frameworks' default eval
    cadences keep evaluation to a few percent of training time). Only real gaps count: a gap
    over ``gap_factor`` 3x the median gap and ``min_gap_seconds`` 1 s longer than the step
    (Tukey's far-out fences sit near 3x the typical spread; measured here: on the 2-core test
    machine under load, healthy toy runs show gaps of 1-2x the median with no eval or save
    between them).
    One pause is not a slow run: when the evaluations do not explain the time and one gap holds more than
    ``max_pause_share`` half of the time outside the steps, the finding is info (``kind='pause'``): a single
    stop (a machine that slept, a preempted or waiting job resumed in place) is not a cost every step or
    evaluation pays (own corpus f10b2-01: one 4964 s gap in a 7101 s HF Trainer run logged every 11 s).
    """

    implies = "slow"
    slow_rank = 2

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """Wall time outside the steps: evaluation (its share) against checkpointing and logging."""
        evals = (finding.facts.get("eval_seconds") or 0) > 0
        return [
            hyp(
                "evaluation takes a large share of the wall time (cadence or implementation)",
                "supported" if evals else "open",
                Cause.INFRA_RUNTIME,
                "time one evaluation; halve its cadence and compare the wall time",
                for_=said(finding) if evals else [],
            ),
            hyp(
                "checkpoint saving or logging blocks training",
                "open",
                Cause.INFRA_RUNTIME,
                "time one checkpoint save; compare the gaps with the save interval",
            ),
            time_not_convergence(),
        ]

    remedies = (
        Remedy(
            "Evaluate less often (e.g. every 10% of the run) or on a fixed subset",
            "evaluation takes more wall time than training",
            "minutes",
        ),
        Remedy(
            "Time one evaluation and make it batched and gradient-free (torch.no_grad / inference mode)",
            "a slow evaluation loop is usually per-sample or keeps gradients",
            "hours",
        ),
    )

    needs = (Role.TRAIN_LOSS,)

    class Params(DetectorParams):
        max_eval_share: float = 0.30
        max_outside_share: float = 0.50
        min_points: int = 20
        min_seconds: float = 5.0
        gap_factor: float = 3.0
        min_gap_seconds: float = 1.0
        min_advancing_share: float = 0.5
        max_outlier_share: float = 0.25
        max_pause_share: float = 0.5

    def _one_pause(self, s, gaps, excess, outside, eval_share, total, p):
        """The info finding for time outside the steps that is one pause, or None.

        When the evaluations do not explain the time (``eval_share`` within ``max_eval_share``) and a
        single gap holds more than ``max_pause_share`` half of all the time outside the steps, that time is
        one stop of the run (a laptop or notebook that slept, a preempted or waiting job resumed in place),
        not a cost every step or evaluation pays: the remedy of a slow cadence does not apply, and the
        pace of the run is its steps' (own corpus f10b2-01: an HF Trainer regression, 1281 steps logged
        every 10 at about 11 s, and one gap of 4964 s between steps 1200 and 1210, 70% of the wall time)."""
        if eval_share > p.max_eval_share or outside <= 0:
            return None
        i = int(np.argmax(excess))
        if float(excess[i]) <= p.max_pause_share * outside:
            return None
        return self.finding(
            Severity.INFO,
            f"one pause of {fmt(float(gaps[i]), 4)} s between steps {int(s.steps[i])} and {int(s.steps[i + 1])} "
            f"holds {fmt(100 * float(excess[i]) / outside, 3)}% of the time outside training steps "
            f"({fmt(100 * outside / total, 3)}% of {fmt(total, 4)} s): a single stop of the run (a machine that "
            "slept, a job preempted or waiting), not a cost its steps or evaluations pay again and again",
            evidence=[
                SeriesEvidence(
                    metric=s.key,
                    step_start=int(s.steps[i]),
                    step_end=int(s.steps[i + 1]),
                    values={"pause_s": float(gaps[i]), "outside_share": outside / total},
                )
            ],
            kind="pause",
            pause_seconds=float(gaps[i]),
            outside_share=outside / total,
            wall_seconds=total,
        )

    def check(self, run, p):
        key = run.key_for(Role.TRAIN_LOSS)
        s = run.series(key).by_step()
        w = s.wall_times
        if len(s) < p.min_points or not np.isfinite(w).all():
            raise Skip(f"{key} has no per-step wall times")
        gaps = np.diff(w)
        if gaps.size and float(gaps.min()) < 0:
            # in step order the clock goes back: segments written at different times overlay one step
            # axis (a resume from an earlier checkpoint, appended launches), so no gap is a time outside
            raise Skip(
                f"{key} wall times go back in step order (segments of different launches overlay)"
            )
        if gaps.size and np.count_nonzero(gaps > 0) < p.min_advancing_share * gaps.size:
            # a console whose training lines carry no timestamp of their own (TensorFlow 1 'loss = x, step = N')
            # gets the wall time of the last timestamped line: the clock does not measure the steps
            raise Skip(
                f"{key} wall times advance at only {np.count_nonzero(gaps > 0)} of {gaps.size} steps"
            )
        idle = _idle_between_launches(run, w, s.steps)
        total = float(w[-1] - w[0]) - float(gaps[idle].sum())
        if total <= 0:
            raise Skip(f"{key} wall times do not advance")
        st_key = run.key_for(Role.STEP_TIME)
        if st_key:
            st = run.series(st_key).by_step()
            lookup = dict(zip(st.steps.tolist(), st.values.tolist()))
            step_t = np.array([lookup.get(x, np.nan) for x in s.steps[1:].tolist()])
            step_t = np.where(np.isfinite(step_t), step_t, np.median(gaps))
        else:
            step_t = np.full(gaps.size, np.median(gaps))
        # only real gaps count: a gap several times the typical one and at least min_gap_seconds longer
        # than the step. Jitter of a busy machine (every gap 1-2x the median) is not time spent outside
        # training (a healthy run on a loaded 2-core machine has such jitter)
        med_gap = float(np.median(gaps)) if gaps.size else 0.0
        real = (gaps > p.gap_factor * med_gap) & ((gaps - step_t) > p.min_gap_seconds)
        real &= ~idle
        excess = np.where(real, np.clip(gaps - step_t, 0, None), 0.0)
        eval_key = run.key_for(Role.VAL_LOSS) or run.key_for(Role.VAL_ACCURACY)
        eval_excess, n_evals = 0.0, 0
        after_eval = np.zeros(gaps.size, dtype=bool)
        if eval_key:
            ev_steps = np.unique(run.series(eval_key).steps)
            # an evaluation logged at step s ran just after (or just before) training step s
            after_eval = np.isin(s.steps[:-1], ev_steps) | np.isin(s.steps[1:], ev_steps)
            eval_excess = float(excess[after_eval].sum())
            n_evals = int(ev_steps.size)
        n_odd = int(np.count_nonzero(real & ~after_eval))
        if n_odd > p.max_outlier_share * gaps.size:
            # outliers are a minority by definition: when a quarter of the gaps or more sit beyond the fence with
            # no evaluation to explain them, the points come at two or more cadences (a sampled batch line and an
            # epoch summary in one series) and the median gap is no step time
            raise Skip(
                f"{key}: {n_odd} of {gaps.size} gaps exceed {p.gap_factor:g}x the median gap without an "
                "evaluation: the points are logged at several cadences, so no single step time"
            )
        outside = float(excess.sum())
        eval_share, outside_share = eval_excess / total, outside / total
        if outside < p.min_seconds or (
            eval_share <= p.max_eval_share and outside_share <= p.max_outside_share
        ):
            return
        pause = self._one_pause(s, gaps, excess, outside, eval_share, total, p)
        if pause is not None:
            yield pause
            return
        if eval_share > p.max_eval_share:
            msg = (
                f"evaluation takes {fmt(100 * eval_share, 3)}% of the wall time ({n_evals} evaluations, "
                f"~{fmt(eval_excess / max(n_evals, 1), 3)} s each; {fmt(100 * outside_share, 3)}% outside "
                f"training steps in all, over {fmt(total, 4)} s)"
            )
        else:
            # the evaluations do not explain the time: say where it went, not a per-evaluation figure
            msg = (
                f"work outside training steps takes {fmt(100 * outside_share, 3)}% of the wall time "
                f"({int(np.count_nonzero(real))} gaps between logged steps beyond {p.gap_factor:g}x the "
                f"typical one, over {fmt(total, 4)} s)"
                + (
                    f"; the {n_evals} evaluations account for {fmt(100 * eval_share, 3)}% of it"
                    if n_evals
                    else ""
                )
            )
        yield self.finding(
            Severity.ERROR,
            msg,
            evidence=[
                SeriesEvidence(
                    metric=key,
                    step_start=int(s.steps[0]),
                    step_end=int(s.steps[-1]),
                    values={
                        "eval_share": eval_share,
                        "outside_share": outside_share,
                        "wall_s": total,
                    },
                )
            ],
            eval_share=eval_share,
            outside_share=outside_share,
            n_evals=n_evals,
            eval_seconds=eval_excess,
            wall_seconds=total,
        )
