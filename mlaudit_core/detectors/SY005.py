"""SY005 time-outside-training."""

from __future__ import annotations

import numpy as np

from ..report import SeriesEvidence, Severity
from ..roles import Role
from ..signal import fmt
from .base import Detector, DetectorParams, Skip


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
    Thresholds: evaluation above ``max_eval_share`` 30% of the wall time, or all time
    outside steps above ``max_outside_share`` 50% (convention: frameworks' default eval
    cadences keep evaluation to a few percent of training time). Only real gaps count: a gap
    over ``gap_factor`` 3x the median gap and ``min_gap_seconds`` 1 s longer than the step
    (Tukey's far-out fences sit near 3x the typical spread; measured here: on the 2-core test
    machine under load, healthy toy runs show gaps of 1-2x the median with no eval or save
    between them).
    """

    needs = (Role.TRAIN_LOSS,)

    class Params(DetectorParams):
        max_eval_share: float = 0.30
        max_outside_share: float = 0.50
        min_points: int = 20
        min_seconds: float = 5.0
        gap_factor: float = 3.0
        min_gap_seconds: float = 1.0

    def check(self, run, p):
        key = run.key_for(Role.TRAIN_LOSS)
        s = run.series(key).by_step()
        w = s.wall_times
        if len(s) < p.min_points or not np.isfinite(w).all():
            raise Skip(f"{key} has no per-step wall times")
        total = float(w[-1] - w[0])
        if total <= 0:
            raise Skip(f"{key} wall times do not advance")
        gaps = np.diff(w)
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
        # training (issue 14: a healthy run on a loaded 2-core machine was called "slow" that way)
        med_gap = float(np.median(gaps)) if gaps.size else 0.0
        real = (gaps > p.gap_factor * med_gap) & ((gaps - step_t) > p.min_gap_seconds)
        excess = np.where(real, np.clip(gaps - step_t, 0, None), 0.0)
        eval_key = run.key_for(Role.VAL_LOSS) or run.key_for(Role.VAL_ACCURACY)
        eval_excess, n_evals = 0.0, 0
        if eval_key:
            ev_steps = np.unique(run.series(eval_key).steps)
            # an evaluation logged at step s ran just after (or just before) training step s
            after_eval = np.isin(s.steps[:-1], ev_steps) | np.isin(s.steps[1:], ev_steps)
            eval_excess = float(excess[after_eval].sum())
            n_evals = int(ev_steps.size)
        outside = float(excess.sum())
        eval_share, outside_share = eval_excess / total, outside / total
        if outside < p.min_seconds or (eval_share <= p.max_eval_share and outside_share <= p.max_outside_share):
            return
        what = "evaluation" if eval_share > p.max_eval_share else "work outside training steps"
        yield self.finding(
            Severity.ERROR,
            f"{what} takes {fmt(100 * (eval_share if eval_share > p.max_eval_share else outside_share), 3)}% "
            f"of the wall time ({n_evals} evaluations, ~{fmt(eval_excess / max(n_evals, 1), 3)} s each; "
            f"{fmt(100 * outside_share, 3)}% outside training steps in all, over {fmt(total, 4)} s)",
            evidence=[SeriesEvidence(metric=key, step_start=int(s.steps[0]), step_end=int(s.steps[-1]),
                                     values={"eval_share": eval_share, "outside_share": outside_share,
                                             "wall_s": total})],
            eval_share=eval_share, outside_share=outside_share, n_evals=n_evals,
            eval_seconds=eval_excess, wall_seconds=total)
