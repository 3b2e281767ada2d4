"""GE007 validation-plateau."""

from __future__ import annotations

import numpy as np

from ..report import Cause, Finding, Hypothesis, Outcome, SeriesEvidence, Severity
from ..roles import Role, is_higher_better
from ..signal import fmt
from ._context import monitored
from ._knowledge import fact, hyp, said
from .base import Detector, DetectorParams, Remedy, Skip


def _headroom(key: str, best: float) -> float | None:
    """The distance of a higher-is-better accuracy's best to its ceiling (1.0, or 100 on a percent
    scale), in the series' units, or ``None`` for any other metric."""
    from ..roles import as_fraction, parse_name

    if parse_name(key).family != "acc" or best <= 0:
        return None
    frac, _ = as_fraction(key, np.array([best]))
    if not frac.size or not 0.0 < float(frac[0]) <= 1.0:
        return None
    return (1.0 - float(frac[0])) * best / float(frac[0])


def _at_ceiling(key: str, best: float, src: str = "", margin: float = 1e-9) -> bool:
    """True when a higher-is-better accuracy/score on a 0-1 or percent scale (or Ultralytics fitness,
    a weighted mean of two mAPs) reached its ceiling (1.0 / 100) to within ``margin`` of it."""
    from ..roles import as_fraction, parse_name

    if parse_name(key).family not in ("acc", "score") and src != "Ultralytics fitness":
        return False
    frac, _ = as_fraction(key, np.array([best]))
    return bool(frac.size) and float(frac[0]) >= 1.0 - margin


class ValidationPlateau(Detector, code="GE007", name="validation-plateau", family="generalization"):
    """The held-out metric the run monitors stopped improving early: the rest of the run bought nothing.

    Why it matters: when validation reached its best level (within noise) in the first part of
    the run, every later epoch is compute without held-out gain, whatever the training loss
    still does; a shorter schedule, early stopping or a change of data/model is the lever.
    Evidence: the monitored metric (the run's ``monitor``/``metric_for_best_model``, Ultralytics
    fitness for YOLO, else the validation loss, else the validation accuracy), the evaluation at
    which it first came within the tolerance of its final best, and the share of evaluations after.
    Remedy: stop earlier (early stopping on this metric), or change what limits it (data,
    augmentation, capacity); a longer run of the same setup will not help.
    Thresholds: the tolerance is the larger of ``noise_k`` 3 x the evaluation noise (median
    absolute change between consecutive evaluations in the last half), capped at ``max_rel`` 3% of
    the best value, and ``min_rel`` 1% of it; a plateau when at least ``min_flat_share`` 60% of the
    evaluations come after the best level was first reached, with at least ``min_evals`` 8
    evaluations. For an accuracy the shares are of the smaller of its best and its distance to the
    ceiling (the error rate): near the ceiling a gain is measured on the errors left (97.0% -> 97.5%
    removes a sixth of them), so the tolerance never spans a large share of the remaining error (own
    corpus f6b2-05: a ViT's test accuracy 0.964 at step 900, best 0.975 at 2400 of 3000, was a plateau
    from step 800 at a tolerance of 1% of 0.975, 39% of the error left). Measured on the real corpora (shared/realworld, tests/data/realworld): runs
    labelled plateaued reach their level with 62-99% of evaluations left (YOLOv8 mAP flat from
    epoch 38 of 100, mlf02; YOLOv5 from 59 of 159, tb09; Keras val_loss from 20 of 100, csv06);
    healthy runs with early stopping have 50-58% left (wb06, tb04 Lightning, a 25-epoch YOLOv8
    whose noisy early fitness gave a 26% tolerance before the cap, tb08).

    A second shape (``kind`` ``diminishing``), when the monitored metric is the validation loss and
    a training loss is logged: over the second half of the evaluations the validation loss improved
    less than ``max_late_val_gain`` 2% (its best in that half vs the median of the three evaluations
    around the midpoint) while the training loss (median over the same windows) fell at least
    ``min_late_train_gain`` 8% and at least ``train_val_ratio`` 4x as much, and the gap between them
    (validation minus training; the training loss at the end is the median of its points after the
    last-but-one evaluation, at least its last 3) was positive at the midpoint and grew at least
    ``min_gap_growth`` 1.5x: the extra compute fits the
    training set only (diminishing held-out returns, the onset of overfitting). Measured on the real
    corpora: realworld log02 (nanoGPT, val 2.43 -> 2.39 = 1.4% over iterations 4000-8000 while train fell
    9.5%, gap 0.24 -> 0.42) and tests/data/realworld csv09 (Lightning, val -0.5% while train fell 12%, gap
    0.98 -> 1.47),
    both labelled plateaued|overfit by their analysts; realworld ts05 (LoRA, healthy: train and eval
    loss track each other, the train loss below eval only from its last point) does not have it.
    Not a plateau: a monitored accuracy or score (or Ultralytics fitness) whose best is within
    ``min_rel`` 1% of its ceiling (1.0, or 100 on a percent scale), the smallest gain this detector
    counts: the task is solved on the held-out set, nothing is left to gain (own corpus f5b3-11, validation
    accuracy 100% from epoch 3 on a 36-image set; f11b1-07, YOLOv8n fitness 0.995 from epoch 8 of 100,
    mAP50 0.995). Nor is a flat or diminishing held-out *loss* while a
    held-out task metric is at its best at one of the last 2 evaluations and better than where the plateau
    (or the second half) began (:func:`GE001.task_metric_best_at_end`; own corpus f5b5-13: a summariser's
    eval loss flat after epoch 6 while ROUGE rose to its best at epoch 10).
    """

    loss_reading = True

    @classmethod
    def remedies_for(cls, finding: Finding) -> tuple[Remedy, ...]:
        """Stop where the held-out metric stopped improving; change what limits it."""
        return (
            Remedy(
                f"Stop the next run of this setup near step {fact(finding, 'plateau_step')} (early "
                f"stopping on {fact(finding, 'metric', 'the monitored metric')})",
                "the steps after it bought no held-out gain",
                "minutes",
            ),
            Remedy(
                "Change what limits the held-out metric (data, augmentation, capacity) rather than "
                "training longer",
                "a longer run of the same setup stays on the plateau",
                "hours",
            ),
        )

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """A held-out plateau: the setup's limit (supported), the learning rate (open)."""
        return [
            hyp(
                "the setup reached its held-out limit (data, augmentation, capacity)",
                "supported",
                Cause.MODEL_CONVERGENCE,
                "more data or augmentation should raise the plateau; more steps should not",
                for_=said(finding),
            ),
            hyp(
                "the learning rate is too low or decayed too early",
                "open",
                Cause.MODEL_CONVERGENCE,
                "the LR at the plateau step; rerun the plateau stretch with a higher LR",
            ),
        ]

    class Params(DetectorParams):
        noise_k: float = 3.0
        min_rel: float = 0.01
        max_rel: float = 0.03
        min_flat_share: float = 0.6
        min_evals: int = 8
        max_late_val_gain: float = 0.02
        min_late_train_gain: float = 0.08
        train_val_ratio: float = 4.0
        min_gap_growth: float = 1.5

    def check(self, run, p):
        vk = run.key_for(Role.VAL_LOSS)
        if vk is not None:
            key, s, hib, src = monitored(run, vk)
        else:
            ak = run.key_for(Role.VAL_ACCURACY)
            if ak is None:
                raise Skip("no validation metric logged")
            key, s, hib, src = (
                ak,
                run.series(ak).by_step().finite(),
                is_higher_better(ak) or True,
                "validation accuracy",
            )
        if len(s) < p.min_evals:
            raise Skip(f"{key} has {len(s)} evaluations (< {p.min_evals})")
        v = s.values
        best = float(v.max() if hib else v.min())
        half = v[len(v) // 2 :]
        noise = float(np.median(np.abs(np.diff(half)))) if half.size > 2 else 0.0
        room = _headroom(key, best) if hib else None
        ref = abs(best) if room is None else min(abs(best), room)
        tol = max(min(p.noise_k * noise, p.max_rel * ref), p.min_rel * ref)
        near = (v >= best - tol) if hib else (v <= best + tol)
        i = int(np.flatnonzero(near)[0])
        first = float(v[0])
        if (best - first if hib else first - best) <= tol:
            return  # never improved beyond its noise: an underfit/at-chance question (GE002, GE004), not a plateau
        if hib and _at_ceiling(key, best, src, p.min_rel):
            # a score within min_rel of its ceiling (accuracy 1.0, 100%) has no gain left that this
            # detector would count: solved, not stalled
            return
        if not hib:
            from .GE001 import task_metric_best_at_end

            if (
                task_metric_best_at_end(
                    run,
                    float(
                        s.steps[
                            i
                            if (len(v) - 1 - i) / (len(v) - 1) >= p.min_flat_share
                            else len(v) // 2
                        ]
                    ),
                    2,
                )
                is not None
            ):
                return  # the task metric (ROUGE, accuracy, WER) still improved to its best at the end
        after = (len(v) - 1 - i) / (len(v) - 1)
        if after < p.min_flat_share:
            if vk is not None and key == vk and not hib:
                yield from self._diminishing(run, p, key, s)
            return
        yield self.finding(
            Severity.WARNING,
            f"{key} came within {fmt(tol, 3)} of its best {fmt(best)} at step {int(s.steps[i])} (evaluation {i + 1} of "
            f"{len(v)}) and did not improve beyond that in the remaining {fmt(100 * after, 3)}% of evaluations "
            f"(monitored: {src})",
            evidence=[
                SeriesEvidence(
                    metric=key,
                    step_start=int(s.steps[i]),
                    step_end=int(s.steps[-1]),
                    values={
                        "best": best,
                        "at_plateau_start": float(v[i]),
                        "tolerance": tol,
                        "first": first,
                    },
                )
            ],
            key=key,
            monitored_source=src,
            plateau_step=int(s.steps[i]),
            flat_share=after,
            best=best,
            tolerance=tol,
            noise=noise,
            higher_is_better=bool(hib),
        )

    def _diminishing(self, run, p, key, s):
        """The ``diminishing`` shape (see the class docstring)."""
        tk = run.key_for(Role.TRAIN_LOSS)
        if tk is None:
            return
        t = run.series(tk).by_step().finite()
        v, st = s.values, s.steps
        m = len(v) // 2
        if m < 2 or len(t) < 4:
            return
        v_mid = float(np.median(v[m - 1 : m + 2]))
        v_late = float(v[m:].min())
        if v_mid <= 0:
            return
        val_gain = (v_mid - v_late) / v_mid
        mid_win = t.values[(t.steps > st[m - 1]) & (t.steps <= st[m + 1])]
        end_win = t.values[t.steps > st[-2]]
        if end_win.size < 3:  # one logged point is noise (a last-step dip): at least the last 3
            end_win = t.values[-3:]
        if not mid_win.size or not end_win.size:
            return
        t_mid, t_end = float(np.median(mid_win)), float(np.median(end_win))
        if t_mid <= 0:
            return
        train_gain = (t_mid - t_end) / t_mid
        gap_mid, gap_end = v_mid - t_mid, float(np.median(v[-2:])) - t_end
        if (
            val_gain >= p.max_late_val_gain
            or train_gain < p.min_late_train_gain
            or train_gain < p.train_val_ratio * max(val_gain, 0.0)
            or gap_mid <= 0
            or gap_end < p.min_gap_growth * gap_mid
        ):
            return
        yield self.finding(
            Severity.WARNING,
            f"over the second half of the evaluations (from step {int(st[m])}) {key} improved only "
            f"{fmt(100 * val_gain, 2)}% ({fmt(v_mid)} -> best {fmt(v_late)}) while {tk} fell {fmt(100 * train_gain, 2)}% "
            f"({fmt(t_mid)} -> {fmt(t_end)}); the gap grew {fmt(gap_mid)} -> {fmt(gap_end)}: the extra steps fit the "
            "training set only (diminishing held-out returns)",
            evidence=[
                SeriesEvidence(
                    metric=key,
                    step_start=int(st[m]),
                    step_end=int(st[-1]),
                    values={"mid": v_mid, "best_late": v_late, "val_gain": val_gain},
                ),
                SeriesEvidence(
                    metric=tk,
                    step_start=int(st[m]),
                    step_end=int(st[-1]),
                    values={"mid": t_mid, "end": t_end, "train_gain": train_gain},
                ),
            ],
            kind="diminishing",
            key=key,
            monitored_source="validation loss",
            plateau_step=int(st[m]),
            val_gain=val_gain,
            train_gain=train_gain,
            gap_mid=gap_mid,
            gap_end=gap_end,
            higher_is_better=False,
        )
