"""GE001 overfitting-onset."""

from __future__ import annotations

import math
import re

import numpy as np

from ..report import Cause, Finding, Hypothesis, Outcome, SeriesEvidence, Severity
from ..roles import Role, as_fraction
from ..signal import fmt, mann_kendall_z
from ._context import chance
from ._knowledge import hyp, said
from .base import Detector, DetectorParams, PlotMark, Remedy, Skip, as_int

#: Evaluations on each side of the validation-loss minimum, and at the end, whose median accuracy
#: is compared (a single evaluation of a test set of a few hundred samples moves by a sample or two).
ACC_WINDOW = 3
#: The held-out accuracy "holds" when its final level is within this many step-to-step noise units
#: (median |delta| between evaluations) of its level at the validation-loss minimum: 3 noise units is
#: the usual "beyond noise" margin (also used by the policy's gap-overfit rule for the loss).
ACC_NOISE_UNITS = 3.0
#: A noise estimate needs a few differences: at least 6 evaluations (5 step-to-step changes).
MIN_ACC_EVALS = 6
#: Accuracy keys the calibration reading applies to (classification error vs cross-entropy).
_ACCURACY_KEY = re.compile(r"acc|top[-_ ]?1", re.I)
#: With a known chance level the accuracy must be at least half-way from chance to 1 (a model near
#: chance has no task performance to "hold"; shared case overfit-small-data: val_acc 0.56 for 2 classes).
MIN_LIFT = 0.5
#: A "mild" validation-loss rise gives back at most a tenth of what the run learned (first training
#: loss -> best validation loss). Figures: the new-user torch run 1.4% (healthy, accuracy flat);
#: realworld ts03 (BERT, 100 epochs) and own ts15 (ViT beans), both labelled overfit, give back >= 20%.
MILD_RISE = 0.10
#: The rise after the best is tested for a trend when at least this many evaluations follow the best:
#: at 20 values the one-sided 5% Mann-Kendall test finds a rise of Kendall's tau >= 0.27; the overfit
#: curves of the own corpus rise after their best with tau 0.2-1.0 (tb10 0.22 on 83 evaluations,
#: wb03 0.97 on 30), and shorter tails are left to GL alone.
TREND_MIN_EVALS = 20
#: One-sided 5% level of the Mann-Kendall score (standard normal quantile 0.95).
TREND_Z = 1.645


def accuracy_tolerance(vals: np.ndarray) -> float:
    """Noise margin of a held-out accuracy series (fractions 0-1, >= 2 evaluations): max(3 x the
    median |delta| between evaluations, 2 binomial standard deviations sqrt(p(1-p)/n)), where n,
    the held-out set size, is 1 / the smallest non-zero step of the logged accuracy (one example =
    1/n; an accuracy averaged more finely only makes n larger and the floor smaller)."""
    d = np.abs(np.diff(np.asarray(vals, dtype=float)))
    if not d.size:
        return 0.0
    noise = float(np.median(d))
    nz = d[d > 1e-9]
    n_eval = 1.0 / float(nz.min()) if nz.size else float("inf")
    p_hat = float(np.clip(np.median(vals), 0.0, 1.0))
    binomial = math.sqrt(p_hat * (1 - p_hat) / n_eval) if math.isfinite(n_eval) else 0.0
    return max(ACC_NOISE_UNITS * noise, 2.0 * binomial)


def heldout_accuracy_holds(run, at_step: float) -> dict | None:
    """Does the held-out accuracy keep its level after ``at_step`` (the validation-loss minimum)?

    Holds when the validation-loss rise is *mild* (its final level gives back at most 10% of the
    drop from the first training or validation loss, whichever is higher, to the best validation
    loss), the accuracy is *flat* after the minimum (3-evaluation rolling medians span at most the
    tolerance: max(3 x median |delta|, 2 binomial standard deviations sqrt(p(1-p)/n), n = 1 / the
    accuracy's smallest step)), its final level is within the tolerance of its level at the minimum,
    and, with a known chance level, it is at least half-way from chance to 1. A large rise is left to
    the loss-based overfit reading (realworld ts03 and own ts15 are labelled overfit).

    Returns ``None`` without a held-out *accuracy* (key matching acc/top1) of at least 6 finite
    evaluations, else a dict: ``holds`` (bool), ``flat``, ``learned``, ``mild``, ``rise_share``,
    ``key``, ``at_best`` (median accuracy of the evaluations next to ``at_step``, fraction 0-1),
    ``final`` (median of the last 3), ``best`` (max), ``tolerance``. A validation loss that rises
    while accuracy holds is the model growing over-confident on the examples it gets wrong (a
    calibration shift, Guo et al. 2017, "On Calibration of Modern Neural Networks": NLL overfits
    while the error rate does not), not a model that got worse at the task.
    """
    ak = run.key_for(Role.VAL_ACCURACY)
    if not ak or not _ACCURACY_KEY.search(ak):
        return None  # mAP/IoU next to a box-regression loss: not the calibration reading of NLL vs error
    a = run.series(ak).by_step().finite()
    if len(a) < MIN_ACC_EVALS:
        return None
    vals, _ = as_fraction(ak, a.values)
    i = int(np.clip(np.searchsorted(a.steps, at_step, side="left"), 0, len(vals) - 1))
    at_best = float(np.median(vals[max(0, i - 1) : i + 2]))
    final = float(np.median(vals[-ACC_WINDOW:]))
    tol = accuracy_tolerance(vals)
    after = vals[max(0, i - 1) :]
    rolling = np.array(
        [np.median(after[j : j + ACC_WINDOW]) for j in range(max(1, len(after) - ACC_WINDOW + 1))]
    )
    flat = float(rolling.max() - rolling.min()) <= tol
    ch = chance(run)
    learned = ch is None or at_best - ch.accuracy >= MIN_LIFT * (1 - ch.accuracy)
    # mild: the validation-loss rise gives back at most MILD_RISE of what the run learned (from its
    # first training loss, ~ the untrained loss, down to the best validation loss)
    mild, rise_share = False, None
    vk, tk = run.key_for(Role.VAL_LOSS), run.key_for(Role.TRAIN_LOSS)
    if vk and tk:
        v = run.series(vk).by_step().finite()
        t = run.series(tk).by_step().finite()
        if len(v) and len(t):
            best_v = float(v.values.min())
            learned_drop = max(float(t.values[0]), float(v.values[0])) - best_v
            if learned_drop > 0:
                rise_share = (float(np.median(v.values[-ACC_WINDOW:])) - best_v) / learned_drop
                mild = rise_share <= MILD_RISE
    return {
        "holds": bool(flat and final >= at_best - tol and learned and mild),
        "key": ak,
        "at_best": at_best,
        "final": final,
        "best": float(vals.max()),
        "tolerance": tol,
        "flat": flat,
        "learned": learned,
        "mild": mild,
        "rise_share": rise_share,
    }


def heldout_task_metrics(run) -> list[tuple[str, bool]]:
    """``(key, higher is better)`` of every held-out task metric the run logs: an evaluation-split
    accuracy, score or error rate whose direction its name states (accuracy, F1, mAP, dice, WER; not a
    loss, runtime or throughput), in the run's key order."""
    from ..roles import parse_name

    out = []
    for k in run.metrics.keys:
        pn = parse_name(k)
        if (
            pn.split == "eval"
            and pn.family in ("acc", "score", "error")
            and pn.higher_is_better is not None
        ):
            out.append((k, bool(pn.higher_is_better)))
    return out


def task_metric_best_at_end(
    run, loss_min_step: float, last: int
) -> tuple[str, float, float] | None:
    """``(key, value at the loss minimum, final value)`` of the run's task metric
    (:func:`..task_metric.task_metric`: the metric it selects by, else its held-out accuracy/score,
    else a held-out error rate such as WER; one metric, not any of several a run logs) with >= 4
    finite evaluations whose best value is at one of its ``last`` evaluations and better than at the
    held-out loss minimum ``loss_min_step``; else ``None`` (own corpus f12b2-13: an AllenNLP
    validation ``s_recall`` that tracks the training fit rose to its last epoch while the validation
    accuracy fell 0.79 -> 0.71 and the loss rose 17%). The task
    metric is what the run is for: when it is still improving at the end, a rising held-out loss is the
    loss's own noise or calibration, not a model getting worse (own corpus f5b6-10: Whisper eval_loss
    0.209 -> 0.239 while WER fell 9.86 -> 9.62, its best, at the last evaluation)."""
    from ..task_metric import task_metric

    m = task_metric(run)
    if m is None or len(m.values) < 4:
        return None
    vals = m.values if m.higher_is_better else -m.values
    ib = int(np.argmax(vals))
    i0 = int(np.clip(np.searchsorted(m.steps, loss_min_step, side="left"), 0, len(vals) - 1))
    if ib >= len(vals) - last and float(vals[ib]) > float(vals[i0]):
        return m.key, float(m.values[i0]), float(m.values[-1])
    return None


class OverfittingOnset(Detector, code="GE001", name="overfitting-onset", family="generalization"):
    """Validation loss rises from its best while training loss keeps falling.

    Without a validation loss, the held-out accuracy (any name the roles read as one: ``val_top1``,
    ``val_sparse_top_k_categorical_accuracy``, ``eval/mAP``) is read as its error rate 1 - accuracy
    (percent divided by 100 first), the quantity Prechelt's GL is defined on; the calibration
    reading below does not apply then (the accuracy is the measure itself).

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
    Not an overfit (a Lightning run at SGD lr=50 bouncing at 6-12x chance, validation
    accuracy at chance throughout, fitted nothing): when the training loss (median of its last evaluation
    interval) is at or above the chance-level loss ln K, or the validation accuracy never rose
    more than ``max_lift`` 25% of the way from chance to 1 (GE004's convention). The training
    loss change is a difference of window medians, one window per evaluation interval. Without
    any training loss the rise is reported at info level only (``train_loss_missing``).
    A mild rise while the held-out accuracy stays flat within its noise
    (:func:`heldout_accuracy_holds`) is an info-level calibration note (``kind='calibration'``:
    over-confidence on the errors), not an overfit.
    Also info, not an overfit: a held-out task metric (accuracy, F1, mAP, WER, dice) at its best at one of the
    last ``sustain`` evaluations and better than at the loss minimum (:func:`task_metric_best_at_end`: the
    model still improves at its task), and a rise near the loss's floor: the best held-out loss at least
    ``floor_factor`` 100x below its first value and the rise giving back at most ``MILD_RISE`` 10% of that
    drop (own corpus f5b5-03: 0.0766 -> best 0.0003 -> 0.0005, GL 67% on a rise of 0.0002).
    No finding when the held-out accuracy never beat the majority-class baseline (:func:`GE002.majority_baseline`):
    nothing was learned to overfit (GE002 reports it).
    Info, not an overfit, either: a held-out curve whose last evaluations stay within the level it had
    already reached and visited before its best, giving back at most ``MILD_RISE`` of what was learned
    (:meth:`_within_plateau`, ``kind='within_plateau'``; own f25b2-06).
    Info, not an overfit, either: a held-out curve with ``TREND_MIN_EVALS`` 20 or more evaluations after its
    best, no rising trend among them (Mann-Kendall, one-sided 5%) and the lowest of them within their
    interquartile range of the best (``kind='no_trend'``): it scatters around a level after its best, of
    which the best is the lowest draw (own corpus f19b2-14, f21b1-03: GL 37% and 18% from that scatter alone).
    """

    loss_reading = True

    @classmethod
    def remedies_for(cls, finding: Finding) -> tuple[Remedy, ...]:
        """Calibration: select by the task metric; an overfit: the test that tells it from a
        train/validation mismatch (the outcome's actions keep the checkpoint and regularise)."""
        if finding.facts.get("kind") == "calibration":
            return (
                Remedy(
                    "Select the checkpoint by the held-out task metric and check calibration (a "
                    "temperature fitted on the validation set)",
                    "the held-out loss rises from over-confidence while the accuracy holds",
                    "minutes",
                ),
            )
        return (
            Remedy(
                "Evaluate the final model on a slice of the training data held out from training",
                "scored like validation: overfitting; scored like training: the validation data "
                "differs from training (split, preprocessing)",
                "minutes",
            ),
        )

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """Rising held-out loss: overfitting (supported) or a train/validation mismatch (open);
        a calibration note: over-confidence, not lost accuracy."""
        if finding.facts.get("kind") == "calibration":
            return [
                hyp(
                    "over-confidence: the held-out loss rises while the held-out accuracy holds",
                    "supported",
                    Cause.METRIC_POLICY,
                    "fit a temperature on the validation set: the loss falls, the accuracy does not move",
                    for_=said(finding),
                )
            ]
        return [
            hyp(
                "too little data or regularisation for the model size",
                "supported",
                Cause.MODEL_CONVERGENCE,
                "retrain with weight decay / augmentation: the validation minimum should move later",
                for_=said(finding),
            ),
            hyp(
                "train/validation distribution mismatch",
                "open",
                Cause.DATA_CONFIG,
                "evaluate on a held-out slice of the training set",
            ),
        ]

    implies = "overfit"

    #: Its finding is a point of the report's timeline under this name.
    timeline_event = "overfit onset"

    needs = (Role.VAL_LOSS,)

    class Params(DetectorParams):
        gl_alpha: float = 10.0
        sustain: int = 2
        min_evals: int = 4
        max_lift: float = 0.25
        floor_factor: float = 100.0

    def missing_inputs(self, run):
        """Runs on the validation loss, or without one on the held-out accuracy (read as its error rate)."""
        if run.has(Role.VAL_LOSS) or run.has(Role.VAL_ACCURACY):
            return None
        return "no val loss or val accuracy series logged"

    @classmethod
    def plot_marks(cls, finding: Finding) -> list[PlotMark] | None:
        """A vertical line at the overfitting onset (``onset_step``)."""
        s = as_int(finding.facts.get("onset_step"))
        if s is None:
            return None
        return [
            PlotMark(
                "vline",
                f"GE001 overfit onset (step {s})",
                "overfit",
                (s,),
                note=f"GE001: validation stops improving at step {s}",
            )
        ]

    surprise_rank = 2

    @classmethod
    def surprising(cls, finding: Finding) -> str | None:
        """The calibration note (held-out loss rises while held-out accuracy holds)."""
        return (
            f"calibration: {finding.message}"
            if finding.facts.get("kind") == "calibration"
            else None
        )

    @staticmethod
    def _heldout_error(run, p):
        """(key, from_accuracy, series, values): the validation loss, else the held-out error
        rate 1 - accuracy (Prechelt's GL is defined on the validation-set error, of which the
        classification error is one: a held-out top-1 that fell 30 points while the training loss
        fell is an overfit, whatever the metric is called). Raises Skip with fewer than
        ``min_evals`` evaluations or an accuracy off a 0-1 (or percent) scale."""
        key = run.key_for(Role.VAL_LOSS)
        from_accuracy = not run.has(Role.VAL_LOSS)
        if from_accuracy:
            key = run.key_for(Role.VAL_ACCURACY)
        s = run.series(key).by_step().finite()
        if len(s) < p.min_evals:
            raise Skip(f"{key} has {len(s)} evaluations (< {p.min_evals})")
        v = s.values
        if from_accuracy:
            acc, _ = as_fraction(key, v)
            if float(acc.min()) < 0.0 or float(acc.max()) > 1.0:
                raise Skip(f"{key} is not on a 0-1 (or percent) scale: no error rate to read")
            v = 1.0 - acc
        return key, from_accuracy, s, v

    @staticmethod
    def _training_trend(run, s, v, ib: int, ch):
        """(training loss key, its change from the best evaluation to the end, its noise, whether
        it ends at or above the chance level ``ch``): medians of a window of training points (one
        per evaluation interval), not single points, since a per-step loss bouncing 6-12x chance
        gives any sign to a point difference; the noise is the median step-to-step change."""
        train_change = None
        train_noise = 0.0
        tk = run.key_for(Role.TRAIN_LOSS)
        if not tk:
            return tk, train_change, train_noise, False
        t = run.series(tk).by_step().finite()
        w = max(1, len(t) // max(len(v), 1))
        a = t.values[t.steps <= s.steps[ib]][-w:]
        b = t.values[-w:]
        if a.size and b.size:
            train_change = float(np.median(b) - np.median(a))
        train_noise = float(np.median(np.abs(np.diff(t.values)))) if len(t) > 1 else 0.0
        at_chance = ch is not None and len(t) and float(np.median(t.values[-w:])) >= ch.loss
        return tk, train_change, train_noise, bool(at_chance)

    def _loss_rise_note(self, run, key, steps, v, ib, best, final, gl, p):
        """The info finding for a held-out loss rise that is not an overfit, or None: the task
        metric kept improving to the end (``task_metric_best_at_end``), or the rise is noise near
        the loss's floor (the best at least ``floor_factor`` x below the first value, the rise at
        most ``MILD_RISE`` of what was learned)."""
        rose = f"{key} rose from its best {fmt(best)} at step {int(steps[ib])} to {fmt(final)} (GL {fmt(gl, 3)}%)"
        ev = [
            SeriesEvidence(
                metric=key,
                step_start=int(steps[ib]),
                step_end=int(steps[-1]),
                values={"best": best, "final": final, "gl_percent": gl},
            )
        ]
        still = task_metric_best_at_end(run, float(steps[ib]), p.sustain)
        first = float(v[0])
        if still is not None:
            mk, at_min, last = still
            why = (
                f"but the task metric {mk} kept improving and is at its best at the end ({fmt(at_min)} at that "
                f"step, {fmt(last)} at the end): the model got better at the task; the loss rise is not an "
                "overfit (keep the last checkpoint)"
            )
            return self.finding(
                Severity.INFO,
                f"{rose}, {why}",
                evidence=ev,
                kind="task_metric_improving",
                onset_step=int(steps[ib]),
                best=best,
                final=final,
                gl=gl,
                task_metric=mk,
            )
        if (
            best > 0
            and first >= p.floor_factor * best
            and (final - best) <= MILD_RISE * (first - best)
        ):
            why = (
                f"a rise of {fmt(final - best)} at a loss {fmt(first / best, 3)}x below its first value "
                f"{fmt(first)}: it gives back {fmt(100 * (final - best) / (first - best), 2)}% of what was "
                "learned, noise near the loss's floor rather than an overfit"
            )
            return self.finding(
                Severity.INFO,
                f"{rose}, {why}",
                evidence=ev,
                kind="near_floor",
                onset_step=int(steps[ib]),
                best=best,
                final=final,
                gl=gl,
            )
        return None

    @staticmethod
    def _overfit_message(
        key, from_accuracy, steps, ib, best, final, gl, monotone_share, train_change, after_share
    ) -> str:
        """The held-out metric's move from its best to the end, the training loss's change, and
        the share of the steps early stopping at the best would have saved."""
        if from_accuracy:
            msg = (
                f"{key} fell from its best {fmt(1 - best)} at step {int(steps[ib])} to {fmt(1 - final)} at step "
                f"{int(steps[-1])} (held-out error {fmt(best)} -> {fmt(final)}, GL {fmt(gl, 3)}%; fell in "
                f"{fmt(100 * monotone_share, 3)}% of evals after the best)"
            )
        else:
            msg = (
                f"{key} rose from its best {fmt(best)} at step {int(steps[ib])} to {fmt(final)} at step "
                f"{int(steps[-1])} (GL {fmt(gl, 3)}%; rose in {fmt(100 * monotone_share, 3)}% of evals after the best)"
            )
        if train_change is not None:
            msg += f" while training loss changed by {fmt(train_change)}"
        msg += (
            f"; early stopping at step {int(steps[ib])} would have saved "
            f"{fmt(100 * after_share, 3)}% of the steps"
        )
        return msg

    def _benign_rise(self, run, key, from_accuracy, s, v, ib, best, final, gl, p):
        """The info finding for a held-out rise that is not an overfit (a loss's rise under a task metric
        still improving or near its floor, :meth:`_loss_rise_note`; no trend after the best,
        :meth:`_flat_after_best`), or None."""
        if not from_accuracy:
            note = self._loss_rise_note(run, key, s.steps, v, ib, best, final, gl, p)
            if note is not None:
                return note
        note = self._flat_after_best(key, from_accuracy, s, v, ib, best, final, gl)
        if note is not None:
            return note
        return self._within_plateau(run, key, from_accuracy, s, v, ib, best, final, gl, p)

    def _within_plateau(self, run, key, from_accuracy, s, v, ib, best, final, gl, p):
        """The info finding for a held-out rise that stays inside the level the curve had already reached
        before its best, or None.

        The plateau starts at the first evaluation that is no higher than the highest of the last ``sustain``
        evaluations (the end); when at least two evaluations of it come before the best and the highest of
        those is at or above the end (the curve came down past the end's level and went back above it before
        its best), and the rise from the best gives back at most
        :data:`MILD_RISE` of what the run learned (the first training or held-out value down to the best),
        the end is a level the curve had visited before its best: the best is the lowest draw of that
        level's scatter, not the turn of a U-curve, whose end climbs above everything it showed on the way
        down (own f25b2-06: a Keras LSTM's val_loss at 0.0066-0.0080 from epoch 4 of 15, best 0.00665 at
        epoch 9, 0.00761 at the end, below the 0.0080 of epoch 6; the overfit curves of the corpus end above
        their whole descent)."""
        end = float(np.max(v[-p.sustain :]))
        pre = np.flatnonzero(v[:ib] <= end)
        if pre.size == 0 or ib - int(pre[0]) < 2:
            return None
        visited = float(np.max(v[int(pre[0]) : ib]))
        if end > visited:
            return None
        first = float(v[0])
        tk = run.key_for(Role.TRAIN_LOSS)
        if not from_accuracy and tk:
            t = run.series(tk).by_step().finite()
            if len(t):
                first = max(first, float(t.values[0]))
        if first <= best or (final - best) > MILD_RISE * (first - best):
            return None
        what = (
            f"{key} fell from its best {fmt(1 - best)} at step {int(s.steps[ib])} to {fmt(1 - final)}"
            if from_accuracy
            else f"{key} rose from its best {fmt(best)} at step {int(s.steps[ib])} to {fmt(final)}"
        )
        return self.finding(
            Severity.INFO,
            f"{what} (GL {fmt(gl, 3)}%), but it had already reached that level at step {int(s.steps[int(pre[0])])} "
            f"and been as high as {fmt(visited)} before its best, and the rise gives back "
            f"{fmt(100 * (final - best) / (first - best), 2)}% of what was learned: the end is inside the "
            "plateau's scatter, whose lowest draw the best is; a plateau, not an overfit",
            evidence=[
                SeriesEvidence(
                    metric=key,
                    step_start=int(s.steps[int(pre[0])]),
                    step_end=int(s.steps[-1]),
                    values={"best": best, "final": final, "gl_percent": gl, "visited": visited},
                )
            ],
            kind="within_plateau",
            onset_step=int(s.steps[ib]),
            best=best,
            final=final,
            gl=gl,
        )

    def _flat_after_best(self, key, from_accuracy, s, v, ib, best, final, gl):
        """The info finding for a held-out rise with no trend after the best, or None.

        With at least :data:`TREND_MIN_EVALS` evaluations after the best, no rising trend among them
        (Mann-Kendall score below :data:`TREND_Z`, :func:`..signal.mann_kendall_z`) and the lowest of them
        within their interquartile range of the best (the curve comes back to the best's level: for 20 draws
        of one distribution the two lowest lie about a third of that range apart), the held-out curve
        scatters around a level after its best: the best is the lowest draw of that scatter and GL measures
        the scatter's width, not a model getting worse (an overfit's held-out loss keeps rising: the own
        corpus's overfit curves score 3-40 on this test; f19b2-14, a YOLOv8-cls validation loss at 0.10-0.31
        for 41 epochs after its best, scores 0.4; f21b1-03, a CNN-LSTM's at 80 epochs after its best, 0.5)."""
        post = np.asarray(v[ib:], dtype=np.float64)
        if post.size < TREND_MIN_EVALS:
            return None
        z = float(mann_kendall_z(post))
        if z >= TREND_Z:
            return None
        rest = post[1:]
        q75, q25 = np.percentile(rest, [75, 25])
        if float(rest.min()) - best > float(q75 - q25):
            # no evaluation after the best comes back to within the later ones' interquartile range of it:
            # the curve stepped up and stayed there (own f5b4-04, a Whisper fine-tune at 100x the usual LR:
            # eval loss 2.55, then 3.2-4.5), it does not scatter around the best's level
            return None
        what = (
            f"{key} fell from its best {fmt(1 - best)} at step {int(s.steps[ib])} to {fmt(1 - final)}"
            if from_accuracy
            else f"{key} rose from its best {fmt(best)} at step {int(s.steps[ib])} to {fmt(final)}"
        )
        return self.finding(
            Severity.INFO,
            f"{what} (GL {fmt(gl, 3)}%), but its {post.size} evaluations from the best on show no rising "
            f"trend (Mann-Kendall z {fmt(z, 2)} < {fmt(TREND_Z)}): the curve scatters around a level after "
            "its best, whose lowest draw the best is; a plateau, not an overfit",
            evidence=[
                SeriesEvidence(
                    metric=key,
                    step_start=int(s.steps[ib]),
                    step_end=int(s.steps[-1]),
                    values={"best": best, "final": final, "gl_percent": gl, "trend_z": z},
                )
            ],
            kind="no_trend",
            onset_step=int(s.steps[ib]),
            best=best,
            final=final,
            gl=gl,
            trend_z=z,
        )

    def _no_train_loss_note(self, key, from_accuracy, s, ib, best, final, gl):
        """The info finding for a held-out rise without a training loss to tell an overfit from a
        divergence or a model that never learned."""
        what = (
            f"{key} fell from its best {fmt(1 - best)} at step {int(s.steps[ib])} to {fmt(1 - final)}"
            if from_accuracy
            else f"{key} rose from its best {fmt(best)} at step {int(s.steps[ib])} to {fmt(final)}"
        )
        return self.finding(
            Severity.INFO,
            f"{what} (GL {fmt(gl, 3)}%), "
            "but no training loss is logged: overfitting (training loss falling meanwhile) cannot be told "
            "from a divergence or a model that never learned",
            evidence=[
                SeriesEvidence(
                    metric=key,
                    step_start=int(s.steps[ib]),
                    step_end=int(s.steps[-1]),
                    values={"best": best, "final": final, "gl_percent": gl},
                )
            ],
            onset_step=int(s.steps[ib]),
            best=best,
            final=final,
            gl=gl,
            train_loss_missing=True,
        )

    def check(self, run, p):
        key, from_accuracy, s, v = self._heldout_error(run, p)
        ib = int(np.argmin(v))
        best, final = float(v[ib]), float(v[-1])
        if ib >= len(v) - p.sustain or best <= 0:
            return
        gl = 100.0 * (final / best - 1.0)
        tail = v[-p.sustain :]
        sustained = bool((tail > best * (1 + p.gl_alpha / 200.0)).all())
        if gl <= p.gl_alpha or not sustained:
            return
        rises = np.diff(v[ib:])
        monotone_share = float((rises > 0).mean()) if rises.size else 0.0
        ch = chance(run)
        tk, train_change, train_noise, at_chance = self._training_trend(run, s, v, ib, ch)
        if at_chance:
            return  # the training set is not fit better than a uniform guess: nothing to overfit
        if train_change is not None and train_change > 0:
            return  # both rising: that is divergence, not overfitting
        if from_accuracy and (train_change is None or -train_change <= 3 * train_noise):
            # an accuracy that falls while the training loss does not keep falling (beyond 3 noise units,
            # its median step-to-step change) is a regression (GE003), not an overfit: realworld wb02,
            # test accuracy 0.84 -> 0.54 at the last epoch with the training loss flat, is labelled regressed
            return
        if not tk:
            # without a training loss a rising validation loss cannot be told from a divergence or
            # from a model that never learned (tests/data/realworld tb11: a TF homework logging only
            # its test loss, stuck at the mean, was called "overfit")
            yield self._no_train_loss_note(key, from_accuracy, s, ib, best, final, gl)
            return
        ak = run.key_for(Role.VAL_ACCURACY)
        if ak and ch is not None:
            acc, _ = as_fraction(ak, run.series(ak).by_step().finite().values)
            if acc.size and float(acc.max()) - ch.accuracy < p.max_lift * (1 - ch.accuracy):
                return  # validation accuracy never left chance: the model learned nothing to overfit
        from .GE002 import majority_baseline

        if majority_baseline(run) is not None:
            return  # the held-out accuracy never beat always predicting the majority class: nothing to overfit
        steps = s.steps
        held = None if from_accuracy else heldout_accuracy_holds(run, float(steps[ib]))
        if held is not None and held["holds"]:
            # the task metric kept its level: the loss rise is over-confidence on the errors, a
            # calibration note, not an overfit verdict (NOTES 17:58: torch tutorial run, accuracy
            # 0.9725-0.9787 flat while Loss/test 0.071 -> 0.090 was called overfit at error)
            yield self.finding(
                Severity.INFO,
                f"{key} rose from its best {fmt(best)} at step {int(steps[ib])} to {fmt(final)} (GL {fmt(gl, 3)}%) "
                f"while {held['key']} held its level ({fmt(held['at_best'])} at that step, {fmt(held['final'])} "
                f"at the end, best {fmt(held['best'])}; noise margin {fmt(held['tolerance'])}): the model grows "
                "over-confident on the examples it gets wrong (calibration), it does not get worse at the task; "
                "keep the checkpoint with the best accuracy, or calibrate (temperature scaling) if the "
                "probabilities are used",
                evidence=[
                    SeriesEvidence(
                        metric=key,
                        step_start=int(steps[ib]),
                        step_end=int(steps[-1]),
                        values={"best": best, "final": final, "gl_percent": gl},
                    )
                ],
                kind="calibration",
                onset_step=int(steps[ib]),
                best=best,
                final=final,
                gl=gl,
                accuracy_holds=True,
                accuracy_at_best=held["at_best"],
                accuracy_final=held["final"],
                accuracy_tolerance=held["tolerance"],
                train_loss_change=train_change,
            )
            return
        note = self._benign_rise(run, key, from_accuracy, s, v, ib, best, final, gl, p)
        if note is not None:
            yield note
            return
        total = float(steps[-1] - steps[0]) or 1.0
        after_share = float(steps[-1] - steps[ib]) / max(float(steps[-1]), 1.0)
        msg = self._overfit_message(
            key,
            from_accuracy,
            steps,
            ib,
            best,
            final,
            gl,
            monotone_share,
            train_change,
            after_share,
        )
        yield self.finding(
            Severity.ERROR,
            msg,
            evidence=[
                SeriesEvidence(
                    metric=key,
                    step_start=int(steps[ib]),
                    step_end=int(steps[-1]),
                    values={"best": best, "final": final, "gl_percent": gl},
                )
            ],
            onset_step=int(steps[ib]),
            best=best,
            final=final,
            gl=gl,
            best_eval_index=ib,
            n_evals=len(v),
            train_loss_change=train_change,
            compute_after_onset=after_share,
            span_steps=total,
            key=key,
            measure="held-out error (1 - accuracy)" if from_accuracy else "loss",
        )
