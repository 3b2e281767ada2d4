"""GE001 overfitting-onset."""

from __future__ import annotations

import numpy as np

from ..report import SeriesEvidence, Severity
from ..roles import Role, as_fraction
from ..signal import fmt
from ._context import chance
from .base import Detector, DetectorParams, Skip


class OverfittingOnset(Detector, code="GE001", name="overfitting-onset", family="generalization"):
    """Validation loss rises from its best while training loss keeps falling.

    Why it matters: every step after the onset makes the model worse on held-out
    data; the best checkpoint is the one at the onset, and early stopping would
    have saved the rest of the compute.
    Evidence: the best validation loss and its step (the onset), the final value,
    Prechelt's generalisation loss GL = 100 x (final / best - 1), the training loss
    change over the same span, and the share of steps after the onset (the
    early-stopping counterfactual).
    Remedy: more data or augmentation, regularisation (weight decay, dropout),
    early stopping on the validation loss, a smaller model.
    Thresholds: GL > ``gl_alpha`` 10 (Prechelt 1998, "Early stopping - but when?",
    criterion GL_alpha; alpha 5 is his most used, 10 is used here because tracker
    validation curves are noisier than his averaged ones), sustained: the last
    ``sustain`` evaluations all stay above the best by half of it.
    Not an overfit (issue 14: Lightning, SGD lr=50, loss bouncing at 6-12x chance, validation
    accuracy at chance throughout): when the training loss (median of its last evaluation
    interval) is at or above the chance-level loss ln K, or the validation accuracy never rose
    more than ``max_lift`` 25% of the way from chance to 1 (GE004's convention). The training
    loss change is a difference of window medians, one window per evaluation interval. Without
    any training loss the rise is reported at info level only (``train_loss_missing``).
    """

    needs = (Role.VAL_LOSS,)

    class Params(DetectorParams):
        gl_alpha: float = 10.0
        sustain: int = 2
        min_evals: int = 4
        max_lift: float = 0.25

    def check(self, run, p):
        key = run.key_for(Role.VAL_LOSS)
        s = run.series(key).by_step().finite()
        if len(s) < p.min_evals:
            raise Skip(f"{key} has {len(s)} evaluations (< {p.min_evals})")
        v = s.values
        ib = int(np.argmin(v))
        best, final = float(v[ib]), float(v[-1])
        if ib >= len(v) - p.sustain or best <= 0:
            return
        gl = 100.0 * (final / best - 1.0)
        tail = v[-p.sustain:]
        sustained = bool((tail > best * (1 + p.gl_alpha / 200.0)).all())
        if gl <= p.gl_alpha or not sustained:
            return
        rises = np.diff(v[ib:])
        monotone_share = float((rises > 0).mean()) if rises.size else 0.0
        train_change = None
        tk = run.key_for(Role.TRAIN_LOSS)
        ch = chance(run)
        if tk:
            t = run.series(tk).by_step().finite()
            # medians of a window of training points (one per evaluation interval), not single
            # points: a per-step loss bouncing 6-12x chance gives any sign to a point difference
            w = max(1, len(t) // max(len(v), 1))
            a = t.values[t.steps <= s.steps[ib]][-w:]
            b = t.values[-w:]
            if a.size and b.size:
                train_change = float(np.median(b) - np.median(a))
            if ch is not None and len(t) and float(np.median(t.values[-w:])) >= ch.loss:
                return  # the training set is not fit better than a uniform guess: nothing to overfit
        if train_change is not None and train_change > 0:
            return  # both rising: that is divergence, not overfitting
        if not tk:
            # without a training loss a rising validation loss cannot be told from a divergence or
            # from a model that never learned (tests/data/realworld tb11: a TF homework logging only
            # its test loss, stuck at the mean, was called "overfit")
            yield self.finding(
                Severity.INFO,
                f"{key} rose from its best {fmt(best)} at step {int(s.steps[ib])} to {fmt(final)} (GL {fmt(gl, 3)}%), "
                "but no training loss is logged: overfitting (training loss falling meanwhile) cannot be told "
                "from a divergence or a model that never learned",
                evidence=[SeriesEvidence(metric=key, step_start=int(s.steps[ib]), step_end=int(s.steps[-1]),
                                         values={"best": best, "final": final, "gl_percent": gl})],
                onset_step=int(s.steps[ib]), best=best, final=final, gl=gl, train_loss_missing=True)
            return
        ak = run.key_for(Role.VAL_ACCURACY)
        if ak and ch is not None:
            acc, _ = as_fraction(ak, run.series(ak).by_step().finite().values)
            if acc.size and float(acc.max()) - ch.accuracy < p.max_lift * (1 - ch.accuracy):
                return  # validation accuracy never left chance: the model learned nothing to overfit
        steps = s.steps
        total = float(steps[-1] - steps[0]) or 1.0
        after_share = float(steps[-1] - steps[ib]) / max(float(steps[-1]), 1.0)
        msg = (f"{key} rose from its best {fmt(best)} at step {int(steps[ib])} to {fmt(final)} at step "
               f"{int(steps[-1])} (GL {fmt(gl, 3)}%; rose in {fmt(100 * monotone_share, 3)}% of evals after the best)")
        if train_change is not None:
            msg += f" while training loss changed by {fmt(train_change)}"
        msg += (f"; early stopping at step {int(steps[ib])} would have saved "
                f"{fmt(100 * after_share, 3)}% of the steps")
        yield self.finding(
            Severity.ERROR, msg,
            evidence=[SeriesEvidence(metric=key, step_start=int(steps[ib]), step_end=int(steps[-1]),
                                     values={"best": best, "final": final, "gl_percent": gl})],
            onset_step=int(steps[ib]), best=best, final=final, gl=gl, best_eval_index=ib,
            n_evals=len(v), train_loss_change=train_change, compute_after_onset=after_share,
            span_steps=total)
