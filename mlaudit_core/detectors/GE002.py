"""GE002 underfitting."""

from __future__ import annotations

import re

import numpy as np

from ..report import Cause, Finding, Hypothesis, Outcome, SeriesEvidence, Severity
from ..roles import Role, as_fraction
from ..signal import centered_median, fmt, smooth_window
from ._context import chance, finetune_evidence, peak_lr
from ._knowledge import hyp, said
from .base import Detector, DetectorParams, Remedy, Skip
from .GE004 import ValidationAtChance

#: ``Chance.source`` of a chance level inferred from the run's own loss and accuracy (``_context``).
INFERRED = "loss and accuracy agree"


def memorising(run, train, initial: float, final: float) -> dict | None:
    """The shuffled-labels signature, or ``None``: the training loss fell (smoothed final <= 95% of
    the initial) to below the held-out loss at the first evaluation (the untrained level), while the
    held-out loss ended above where it started (median of the last 3 evaluations > median of the
    first 3) and the held-out accuracy ended within its noise of where it started
    (:func:`GE001.accuracy_tolerance`). Needs >= 4 finite evaluations of both. Training fits
    something the held-out data does not share: labels without signal (Zhang et al. 2017,
    "Understanding deep learning requires rethinking generalization": networks fit random labels,
    the training loss falls while test accuracy stays at chance)."""
    from .GE001 import accuracy_tolerance

    vk, ak = run.key_for(Role.VAL_LOSS), run.key_for(Role.VAL_ACCURACY)
    if not vk or not ak or final > 0.95 * initial:
        return None
    v = run.series(vk).by_step().finite()
    a = run.series(ak).by_step().finite()
    if len(v) < 4 or len(a) < 4:
        return None
    acc, _ = as_fraction(ak, a.values)
    v_first, v_last = float(np.median(v.values[:3])), float(np.median(v.values[-3:]))
    a_first, a_last = float(np.median(acc[:3])), float(np.median(acc[-3:]))
    tol = accuracy_tolerance(acc)
    if not (final < float(v.values[0]) and v_last > v_first and a_last <= a_first + tol):
        return None
    return {
        "val_key": vk,
        "val_first": v_first,
        "val_last": v_last,
        "acc_key": ak,
        "acc_first": a_first,
        "acc_last": a_last,
        "acc_tolerance": tol,
    }


def _heldout_not_lower(run) -> bool:
    """True when the held-out loss (if logged) ended no lower than it began and the held-out score
    (if logged) ended no more than 2 points (as a fraction) above its first value: nothing held-out
    improved. (A YOLO box loss rising through warm-up while mAP climbs 0.02 -> 0.27 is learning.)"""
    vk = run.key_for(Role.VAL_LOSS)
    if vk:
        v = run.series(vk).by_step().finite().values
        if len(v) >= 2 and float(v[-1]) < float(v[0]):
            return False
    ak = run.key_for(Role.VAL_ACCURACY)
    if ak:
        a = run.series(ak).by_step().finite()
        if len(a) >= 2:
            acc, _ = as_fraction(ak, a.values)
            if float(acc[-1]) > float(acc[0]) + 0.02:
                return False
    return True


def _heldout_accuracy(run, min_evaluations: int):
    """``(key, finite points by step, values as fractions)`` of the held-out accuracy/score when it
    has at least ``min_evaluations`` finite evaluations, else ``None``."""
    ak = run.key_for(Role.VAL_ACCURACY)
    if not ak:
        return None
    a = run.series(ak).by_step().finite()
    if len(a) < min_evaluations:
        return None
    acc, _ = as_fraction(ak, a.values)
    return ak, a, acc


def score_floor(run, floor: float, min_evaluations: int) -> tuple[str, float, int] | None:
    """``(key, best, n)`` when the held-out score (accuracy, mAP, F1 as a fraction) never exceeded
    ``floor`` over at least ``min_evaluations`` evaluations, else ``None``. A score that stays at
    its floor (a detector's mAP50-95 at 0.0005 for 10 epochs, own corpus csv17) means nothing was
    learned that held-out data can measure, whatever the training loss did; it stands in for the
    chance level that a detection metric has no class count for (chance mAP is ~0)."""
    got = _heldout_accuracy(run, min_evaluations)
    if got is None:
        return None
    ak, a, acc = got
    best = float(np.max(acc))
    return (ak, best, len(a)) if best <= floor else None


def stuck_accuracy(
    run, share: float, min_evaluations: int, ceiling: float
) -> tuple[str, float, int, int] | None:
    """``(key, value, n at value, n)`` when the held-out accuracy equals its first-evaluation value
    *exactly* at ``share`` or more of at least ``min_evaluations`` evaluations, that value being under
    ``ceiling`` (a saturated 1.0 is a solved task, not a stuck one); else ``None``. Identical accuracy
    over many evaluations means identical predictions: the model outputs one class (own tb12: val_acc
    0.6613 = 41/62, the majority share, at 59 of 100 epochs; realworld wb04 0.1 at 50 of 50). Not when
    the held-out loss's last quarter sits at 70% of its first value or lower: the model kept improving
    its probabilities with an argmax already fixed at the first evaluation (a 53-image validation set
    at 0.943 from the first evaluation while the validation loss fell 0.25 -> 0.10)."""
    got = _heldout_accuracy(run, min_evaluations)
    if got is None:
        return None
    ak, a, acc = got
    first = float(acc[0])
    n_at = int(np.sum(acc == first))
    if first >= ceiling or n_at < share * len(acc):
        return None
    vk = run.key_for(Role.VAL_LOSS)
    if vk:
        v = run.series(vk).by_step().finite().values
        if (
            len(v) >= 4
            and v[0] > 0
            and float(np.median(v[-max(1, len(v) // 4) :])) <= 0.7 * float(v[0])
        ):
            # the held-out loss fell by a third or more: the model improved (its confidence) even though
            # the argmax never changed, e.g. a small validation set solved before the first evaluation
            return None
    return ak, float(a.values[0]), n_at, len(acc)


def frozen_task_metric(
    run, share: float, min_evaluations: int, ceiling: float
) -> tuple[str, float, int, int] | None:
    """``(key, value, n at value, n)`` when a held-out task metric other than the accuracy role (an
    evaluation-split accuracy or score: IoU, dice, F1, mAP) sits at one value (to 1e-6, float32 round-off)
    at ``share`` or more of at least ``min_evaluations`` evaluations, that value under ``ceiling`` and
    under 0.9; else ``None``. The same score over many evaluations means the same predictions: a
    segmentation model whose mean IoU repeats 0.3755 (all background: the background class's IoU over 2)
    predicts one mask for every input, whatever its pixel accuracy and loss do (own corpus f5b5-08).
    A frozen value at 0.9 or above is left alone: the argmax was already right (see :func:`stuck_accuracy`)."""
    from ..roles import parse_name

    ak = run.key_for(Role.VAL_ACCURACY)
    for k in run.metrics.keys:
        pn = parse_name(k)
        if (
            k == ak
            or pn.split != "eval"
            or pn.family not in ("acc", "score")
            or pn.higher_is_better is not True
        ):
            continue
        m = run.series(k).by_step().finite()
        if len(m) < min_evaluations:
            continue
        vals, _ = as_fraction(k, m.values)
        uniq, counts = np.unique(np.round(vals, 6), return_counts=True)
        j = int(np.argmax(counts))
        v = float(uniq[j])
        n_at = int(np.sum(np.abs(vals - v) <= 1e-6))
        if n_at >= share * len(vals) and v < min(ceiling, 0.9):
            return k, v, n_at, len(vals)
    return None


def task_metric_at_floor(
    run, floor: float, min_points: int
) -> tuple[str, float, float, int] | None:
    """``(key, first, max, n)`` of a training or held-out task metric (an accuracy or score whose name says
    higher is better: accuracy, F1, mAP, dice, BLEU; as a fraction) with >= ``min_points`` finite points that
    never exceeded ``floor`` and never rose: the maximum of its second half within its noise
    (:func:`GE001.accuracy_tolerance`) of its first value. A task metric at 10% or less that does not move
    is a model that does not perform its task (below chance for any task of 10 or fewer classes; a
    reasoning/RL accuracy at 0-6%, own corpus f5b1-11 GRPO: 0.06, 0.04, 0.06, 0.00, 0.06, 0.01 over 3/3
    epochs while its policy loss sat near 0 by construction). Else ``None``."""
    from ..roles import parse_name
    from .GE001 import accuracy_tolerance

    for k in run.metrics.keys:
        pn = parse_name(k)
        if pn.family not in ("acc", "score") or pn.higher_is_better is not True:
            continue
        m = run.series(
            k
        ).finite()  # every logged value in order (a step printed twice keeps both points)
        if len(m) < min_points:
            continue
        acc, _ = as_fraction(k, m.values)
        if float(acc.min()) < 0.0:
            continue
        top, first = float(acc.max()), float(acc[0])
        late = float(acc[len(acc) // 2 :].max())
        if top <= floor and late <= first + accuracy_tolerance(acc):
            return k, first, top, len(acc)
    return None


def majority_baseline(run) -> tuple[str, float, int, float, int] | None:
    """``(accuracy key, majority share p, classes K, best accuracy, n)`` when the held-out accuracy never beat
    the accuracy of always predicting the majority class, else ``None``. The baseline is read from an
    evaluation where accuracy and macro-F1 (an eval ``f1`` key) are exactly those of a constant predictor:
    it scores p (the majority share) and its macro-F1 is the majority class's F1 2p / (1 + p) over K classes,
    every other class at 0; so macro-F1 x K = 2p / (1 + p) for an integer K >= 2, within 3%. A run whose
    best held-out accuracy is no higher than p never beat that predictor (a model that learned beats it at
    some evaluation: own corpus f5b1-10, 0.849 at one evaluation, 0.921 at its best): nothing was learned to overfit (own corpus f5b6-08: accuracy 0.902 at macro-F1 0.190 =
    0.948 / 5 at epoch 1, later 0.41-0.82)."""
    ak = run.key_for(Role.VAL_ACCURACY)
    fk = next(
        (
            k
            for k in run.metrics.keys
            if re.search(
                r"(?:^|[/_.])(?:eval|val|valid|test)[/_.].*\bf1\b|"
                r"(?:^|[/_.])(?:eval|val|valid|test)[/_.](?:macro[/_.])?f1",
                k,
                re.I,
            )
        ),
        None,
    )
    if not ak or not fk:
        return None
    a, f = run.series(ak).by_step().finite(), run.series(fk).by_step().finite()
    if len(a) < 4:
        return None
    acc, _ = as_fraction(ak, a.values)
    f1, _ = as_fraction(fk, f.values)
    by_step = dict(zip(f.steps.tolist(), f1.tolist()))
    for st, p in zip(a.steps.tolist(), acc.tolist()):
        m = by_step.get(st)
        if m is None or m <= 0 or not 0.5 <= p < 1.0:
            continue
        k = (2 * p / (1 + p)) / m
        kr = round(k)
        if kr >= 2 and abs(k - kr) <= 0.03 * kr and float(acc.max()) <= p + 1e-9:
            return ak, p, kr, float(acc.max()), len(acc)
    return None


#: Relative tolerance of a weighted score against the constant predictor's value (p^2 for the weighted
#: precision, 2p^2/(1+p) for the weighted F1): the scores are printed to 4+ digits, so a real model
#: whose score lands within 1% of the identity by chance is unlikely; own corpus f13b2-13 (accuracy
#: 0.90566 = 48/53, weighted precision 0.82022 = 0.90566^2, weighted F1 0.86083) is within 0.01%.
CONSTANT_WEIGHTED_TOL = 0.01
_SCORE_KEY = re.compile(
    r"(?:^|[/_.])(?P<split>eval|val|valid|validation|test)[/_.](?:\w+[/_.])*?"
    r"(?P<avg>macro|weighted)?[/_.]?(?P<score>f1|precision)(?:[/_.](?P<avg2>macro|weighted))?$",
    re.I,
)

_SPLIT = re.compile(r"(?:^|[/_.])(?P<split>eval|val|valid|validation|test)(?=[/_.])", re.I)


def constant_predictor(run) -> tuple[str, float, list[tuple[str, float, str]]] | None:
    """``(accuracy key, accuracy p, [(score key, value, identity)])`` when the last held-out evaluation
    is that of a model that predicts one class for every input, else ``None``. Such a model scores the
    majority share p, and each precision/F1 of the same split logged at that evaluation is exactly a
    function of p (scikit-learn's averages with ``zero_division`` 0 for the classes never predicted):
    weighted precision p^2, weighted F1 p * 2p/(1+p) (:data:`CONSTANT_WEIGHTED_TOL`); macro precision
    p/K and macro F1 (2p/(1+p))/K for an integer K >= 2 within 3% (:func:`majority_baseline`). A score
    named without an average is tried as both. Every such score at that evaluation must match, and at
    least one must exist; 0.5 <= p < 1 (a balanced or solved task has no informative majority).
    Shapes: one point per key suffices (a W&B summary, an MLflow run's final metrics)."""
    ak = run.key_for(Role.VAL_ACCURACY)
    if not ak:
        return None
    a = run.series(ak).by_step().finite()
    if not len(a):
        return None
    acc, _ = as_fraction(ak, a.values)
    p, at = float(acc[-1]), float(a.steps[-1])
    if not 0.5 <= p < 1.0:
        return None
    split = _SPLIT.search(ak)
    matched: list[tuple[str, float, str]] = []
    for k in run.metrics.keys:
        m = _SCORE_KEY.search(k)
        if not m or (split and m["split"].lower() != split["split"].lower()):
            continue
        s = run.series(k).by_step().finite()
        if not len(s):
            continue
        v_all, _ = as_fraction(k, s.values)
        here = [float(v) for st, v in zip(s.steps, v_all) if float(st) == at]
        if len(s) == 1 and len(a) == 1:
            here = [float(v_all[0])]
        if not here or here[-1] <= 0:
            continue
        v = here[-1]
        ok = _constant_score_identity(p, v, (m["avg"] or m["avg2"] or "").lower(), m["score"])
        if ok is None:
            return None  # a score of that evaluation that a constant predictor would not give
        matched.append((k, v, ok))
    return (ak, p, matched) if matched else None


def _constant_score_identity(p: float, v: float, avg: str, score: str) -> str | None:
    """How a precision/F1 ``v`` (averaging ``avg``: "", "weighted" or "macro"; ``score``:
    "precision" or "f1") equals a one-class predictor's at majority share ``p``: "weighted",
    "macro over K classes", or None (see :func:`constant_predictor`)."""
    f1 = score.lower() == "f1"
    weighted = p * (2 * p / (1 + p)) if f1 else p * p
    macro_k = ((2 * p / (1 + p)) if f1 else p) / v
    if avg in ("", "weighted") and abs(v - weighted) <= CONSTANT_WEIGHTED_TOL * weighted:
        return "weighted"
    if (
        avg in ("", "macro")
        and round(macro_k) >= 2
        and abs(macro_k - round(macro_k)) <= 0.03 * round(macro_k)
    ):
        return f"macro over {round(macro_k)} classes"
    return None


def accuracy_learned(run, level: float, rise: float) -> tuple[str, float, float] | None:
    """``(key, first, last)`` of a training or held-out accuracy (as a fraction, smoothed ends: medians of
    the first and last 3 points, >= 4 finite points) that ends at ``level`` or above after rising by more
    than ``rise`` from its start, else ``None``. A model right on 90% of its inputs and still improving
    learned its task, whatever the relative drop of a loss whose first logged point already follows
    learning (own corpus f5b1-19: C.E. loss 0.98 -> 0.95 while accuracy went 94% -> 98%). A constant
    predictor on an imbalanced set can sit at 0.9+, but it does not rise."""
    for role in (Role.VAL_ACCURACY, Role.TRAIN_ACCURACY):
        ak = run.key_for(role)
        if not ak:
            continue
        a = run.series(ak).by_step().finite()
        if len(a) < 4:
            continue
        acc, _ = as_fraction(ak, a.values)
        first, last = float(np.median(acc[:3])), float(np.median(acc[-3:]))
        if last >= level and last > first + rise:
            return ak, first, last
    return None


def _final_val_accuracy(run) -> tuple[str | None, float | None]:
    """``(key, value)`` of the held-out accuracy's last finite point (``(key, None)`` without one;
    ``(None, None)`` when the run logs none)."""
    ak = run.key_for(Role.VAL_ACCURACY)
    if ak:
        a = run.series(ak).finite()
        if len(a):
            return ak, float(a.values[-1])
    return ak, None


#: A final loss above this multiple of the chance level is said to be above chance, not at it:
#: the ``at_chance`` band of :class:`Underfitting` (5%) on the upper side.
_ABOVE_CHANCE = 1.05


def _above_chance(ch, final: float) -> bool:
    """Whether the final loss is above the chance level ``ch`` by more than the 5% band (a
    uniform guess would score better than the model)."""
    return ch is not None and final > _ABOVE_CHANCE * ch.loss


def _chance_note(ch, at_chance: bool, final: float | None = None) -> str:
    """The clause saying the loss sits at the chance level ``ch`` (empty when it does not), or
    ends above it (``final`` beyond the 5% band: worse than a uniform guess); a chance level
    inferred from the final accuracy (a 10-class run at accuracy 0.12 reads as K = 8) is said to
    be an inference, with the params that would state it."""
    if at_chance and final is not None and _above_chance(ch, final):
        return (
            f"; the loss ends at {fmt(final)}, above the chance level ln {ch.classes} = "
            f"{fmt(ch.loss)} ({ch.source}): a uniform guess would score better"
        )
    if at_chance and ch.source == INFERRED:
        return (
            f"; the loss is near ln {ch.classes} = {fmt(ch.loss)}, the chance level of {ch.classes} "
            f"classes (inferred from the final accuracy and loss agreeing, not read from a num_labels / "
            "num_classes / id2label param)"
        )
    if at_chance:
        return f"; the loss sits at the chance level ln {ch.classes} = {fmt(ch.loss)} ({ch.source})"
    return ""


def _memorising_note(memo: dict) -> str:
    """The clause of a model memorising training labels (:func:`memorising`'s figures): check the
    labels and the shuffling; a higher learning rate will not help."""
    return (
        f"; meanwhile {memo['val_key']} rose {fmt(memo['val_first'])} -> {fmt(memo['val_last'])} and "
        f"{memo['acc_key']} stayed at its starting level ({fmt(memo['acc_first'])} -> "
        f"{fmt(memo['acc_last'])}, noise {fmt(memo['acc_tolerance'])}) while the training loss fell "
        f"below the held-out loss of the first evaluation: the model memorises training labels "
        "that do not generalise; check the labels and the shuffling (labels shuffled or misaligned "
        "with the inputs, a different label mapping for training and validation); a higher "
        "learning rate will not help"
    )


def _lr_note(lr, unstable_start: bool, above: bool = False) -> str:
    """The clause saying raising the learning rate is not the remedy: the peak ``lr`` (value,
    typical value for the optimiser) is already at or above typical, or the loss started above
    chance and fell back to it; empty otherwise."""
    if lr is not None and lr[0] >= lr[1]:
        return (
            f"; the peak learning rate {fmt(lr[0])} is already at or above typical values "
            f"(>= {fmt(lr[1])} for this run's optimiser): raising it is not the remedy"
        )
    if unstable_start and above:
        return "; the loss was above chance from the start (an unstable start): do not raise the LR"
    if unstable_start:
        return "; the loss started above chance and fell back to it (an unstable start): do not raise the LR"
    return ""


class Underfitting(Detector, code="GE002", name="underfitting", family="generalization"):
    """Training loss barely moved over the whole run: the model is not learning the training set.

    Why it matters: with the training loss close to its initial value the model
    has learned little; validation numbers are then meaningless for model
    selection, and the usual culprits (LR far too low, too little capacity,
    frozen weights, labels that carry no signal) are cheap to test.
    Evidence: initial and final smoothed training loss and their ratio; the final
    validation accuracy when logged.
    Remedy: raise the learning rate, add capacity, check that parameters are
    trainable and that labels match inputs (train on a tiny subset: a healthy
    setup overfits it quickly).
    Thresholds: final / initial and best / initial both > ``max_ratio`` 0.85 (less than 15% improvement),
    measured on examples/regimes.py: healthy runs reach < 0.3, starved-of-capacity
    runs stay > 0.9. ``min_points`` 8: a ratio of smoothed first and last values needs no
    more (HF Trainer logs 12 points over a 1200-step run at its default cadence, realworld tb02),
    but under ``min_points_unassisted`` 20 points the run must also sit at its chance level: a
    12-point LoRA fine-tune of a pretrained LM falling 7% (tests/data/realworld ts09) is not
    underfit, a 12-point run at ln 4 with accuracy 0.24 is.

    Fine-tunes: a relative drop says nothing about a run that starts from trained weights
    (a pretrained ``_name_or_path``, a warm-start checkpoint, LoRA/PEFT settings; or an
    initial loss under ``finetune_start`` 0.5 x the chance-level loss ln K). Such a run is
    underfit only when its loss stays at chance (final within ``at_chance`` 5% of ln K);
    otherwise an info finding says why the small drop is expected (realworld: a T5
    fine-tune 2.0 -> 1.74 over 215k steps is healthy; a LoRA RoBERTa at ln 4 = 1.386 with
    accuracy 0.24 is not). Chance comes from params or from loss and accuracy agreeing
    on K (see ``detectors/_context.py``).
    Advice: ``raise_lr_advisable`` is false when the peak learning rate is already at or
    above typical values for the optimiser family (``high_lr`` 1e-3 for Adam-type fine-tunes
    of pretrained models, 0.1 for SGD from scratch; Adam 1e-3 is Kingma & Ba's default,
    1e-5..1e-4 the range of the BERT/LoRA fine-tuning papers) or when the loss sits at chance
    after an unstable start (the first points above chance): raising it would make things worse,
    or when the run shows the shuffled-labels signature (:func:`memorising`: training loss falls
    under the first held-out loss while the held-out loss rises and the held-out accuracy stays at
    its start): then ``labels_suspect`` is true and the verdict's cause is the data.
    A chance level inferred from the run's own loss and accuracy (no class count in the params) is
    named as inferred (``chance_inferred``), never stated as fact.
    Stuck held-out accuracy (:func:`stuck_accuracy`, fact ``stuck_accuracy``): the held-out accuracy
    equal to its first-evaluation value at >= ``stuck_share`` 50% of >= ``stuck_min_evaluations`` 10
    evaluations, under ``stuck_ceiling`` 0.95, is underfit whatever the training loss did. On our real
    corpora this shape occurs on 10 artifacts (realworld tb02, tb07, mlf01, wb01, wb04; own csv16, tb12;
    libraries hf-diverging x2, keras-lr10), all labelled underfit/plateaued/diverged; the healthy run
    nearest to it (libraries hf-healthy, 0.75 at 3 of 6 evaluations) has too few evaluations.
    Never below its start: with ``min_points`` 8 or more, a smoothed training loss that never went under
    its first value, and a held-out loss (if logged) that ended no lower than it began, is underfit without
    a chance level (own tb11: a TF2 MSE regressor, train 15.4 -> 16.6 and test 13.4 -> 17.0 over 10 epochs).
    Held-out score at its floor (:func:`score_floor`): a held-out accuracy/mAP/F1 that never exceeded
    ``score_floor`` 1% (as a fraction) over at least ``min_evaluations`` 5 evaluations stands in for
    the chance check (fact ``score_floor``; the policy leaves a run that stopped early to its stop rule):
    own corpus csv17, YOLOv8 from scratch, 10 epochs at mAP50-95 0.0005 with rising box loss. 1% sits
    under every trained detector in our real corpora after its first epochs (own tb08 0.056 at epoch
    1; own csv11, YOLOv5 from scratch, 0.0001 at epoch 0 and past 0.01 in its first quarter) and
    above an untrained one (0.0005, own csv17); 5 evaluations keep the warm-up of a from-scratch run out.
    Learned by its accuracy (:func:`accuracy_learned`): a small relative loss drop is only an info finding
    when a training or held-out accuracy ends at ``learned_accuracy`` 0.9 or above after rising more than
    ``learned_rise`` 2 points (the stuck-accuracy noise step above): the loss's first logged point came
    after learning (own corpus f5b1-19, 94% -> 98%).
    Task metric at its floor (:func:`task_metric_at_floor`, facts ``task_floor``/``score_floor``): any training
    or held-out accuracy/score that never exceeded ``task_floor`` 10% and never rose over >= ``min_evaluations``
    5 points is underfit whatever the loss did (the policy leaves a run that stopped early to its stop rule).
    Never beat the majority baseline (:func:`majority_baseline`, fact ``majority_baseline``): underfit too.
    A reference level: fact ``relative_drop_only`` is true when the small relative drop is the only evidence
    (no chance level reached, no held-out score at its floor, a loss that did fall below its start, no
    memorising signature). "Underfit" says the level reached is poor, which needs a level to compare with;
    without one the verdict policy reads the flat curve as a plateau (own corpus: f5b1-18 LoRA 1.42 -> 1.36,
    f5b5-04 0.69 -> 0.50, f6b2-19 a second run starting at 0.33 where its first ended; every true underfit
    of realworld/own/libraries has a reference or accepts plateaued).
    A held-out task metric frozen at one value (:func:`frozen_task_metric`: IoU, dice, F1 repeating to 1e-6 at
    >= ``stuck_share`` of >= ``stuck_min_evaluations`` evaluations) is the stuck-accuracy finding for scores.
    """

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """A loss that barely moved: learning rate or capacity, against labels without signal (the
        shuffled-labels signature) or weights that are not updated."""
        suspect = bool(finding.facts.get("labels_suspect"))
        no_raise = finding.facts.get("raise_lr_advisable") is False
        return [
            hyp(
                "learning rate too low or capacity too small",
                "rejected" if suspect or no_raise else "open",
                Cause.MODEL_CONVERGENCE,
                "overfit a tiny subset (64 samples): a healthy setup drives the loss near 0",
                for_=[] if suspect or no_raise else said(finding),
                against=["the LR is already at or above the optimiser's typical value"]
                if no_raise and not suspect
                else [],
            ),
            hyp(
                "labels carry no signal (shuffled, misaligned) or the inputs are broken",
                "supported" if suspect else "open",
                Cause.DATA_CONFIG,
                "train on a tiny subset: if even that cannot be fitted, check the data",
                for_=said(finding) if suspect else [],
            ),
            hyp(
                "the weights are not updated (frozen parameters, a detached loss)",
                "open",
                Cause.CORRECTNESS_BUG,
                "compare two checkpoints' weights",
            ),
        ]

    implies = "underfit"

    needs = (Role.TRAIN_LOSS,)

    class Params(DetectorParams):
        max_ratio: float = 0.85
        min_points: int = 8
        min_points_unassisted: int = 20
        finetune_start: float = 0.5
        at_chance: float = 0.05
        score_floor: float = 0.01
        min_evaluations: int = 5
        stuck_share: float = 0.5
        stuck_min_evaluations: int = 10
        stuck_ceiling: float = 0.95
        learned_accuracy: float = 0.9
        task_floor: float = 0.10
        learned_rise: float = 0.02

    @classmethod
    def remedies_for(cls, finding: Finding) -> tuple[Remedy, ...]:
        """With labels suspect (the shuffled-labels signature), the label checks first: GE004's."""
        return ValidationAtChance.remedies if finding.facts.get("labels_suspect") else cls.remedies

    @classmethod
    def omits_outcome_actions(cls, finding: Finding) -> tuple[str, ...]:
        """With labels suspect, GE004's label checks replace the tiny-subset overfit."""
        return ("Overfit a tiny subset",) if finding.facts.get("labels_suspect") else ()

    def check(self, run, p):
        found, skip = [], None
        try:
            found = list(self._loss_check(run, p))
        except Skip as exc:
            skip = exc
        if any(f.severity is Severity.ERROR for f in found):
            yield from found
            return
        tk = run.key_for(Role.TRAIN_LOSS)
        blew_up = bool(tk) and bool((~np.isfinite(run.series(tk).values)).any())
        stuck = (
            None
            if blew_up
            else stuck_accuracy(run, p.stuck_share, p.stuck_min_evaluations, p.stuck_ceiling)
        )
        if stuck is None and not blew_up:
            stuck = frozen_task_metric(run, p.stuck_share, p.stuck_min_evaluations, p.stuck_ceiling)
        if stuck is not None:
            key = run.key_for(Role.TRAIN_LOSS)
            s = run.series(key).by_step().finite()
            if len(s):
                ak, value, n_at, n = stuck
                initial, final = float(s.values[0]), float(s.values[-1])
                yield self.finding(
                    Severity.ERROR,
                    f"{ak} is exactly {fmt(value)}"
                    + (
                        ", its value at the first evaluation,"
                        if fmt(value) == fmt(float(run.series(ak).by_step().finite().values[0]))
                        else ""
                    )
                    + f" at {n_at} of {n} evaluations: "
                    "the model's held-out predictions did not change for most of the run"
                    + (
                        " (one class predicted for every input, typically the majority class)"
                        if re.search(r"acc", ak, re.I)
                        else ""
                    )
                    + f", whatever {key} did ({fmt(initial)} -> {fmt(final)}); check the learning rate, the class "
                    "balance and that the output layer is trained",
                    evidence=[
                        SeriesEvidence(
                            metric=ak,
                            values={
                                "value": value,
                                "at_value": float(n_at),
                                "evaluations": float(n),
                            },
                        )
                    ],
                    initial=initial,
                    final=final,
                    stuck_accuracy=True,
                    key=ak,
                    value=value,
                    n_at_value=n_at,
                    n_evaluations=n,
                    raise_lr_advisable=False,
                    labels_suspect=False,
                )
                return
        base = majority_baseline(run)
        if base is not None:
            ak, maj, k, top, n = base
            yield self.finding(
                Severity.ERROR,
                f"{ak} never beat the majority-class baseline: at one evaluation accuracy {fmt(maj)} and macro-F1 are "
                f"those of a constant predictor over {k} classes (macro-F1 = (2p/(1+p))/{k}), and the best of its {n} "
                f"evaluations is {fmt(top)}: the model never learned more than the class balance; check the class "
                "weights or sampling, the labels and the learning rate",
                evidence=[
                    SeriesEvidence(
                        metric=ak, values={"majority": maj, "best": top, "classes": float(k)}
                    )
                ],
                key=ak,
                majority=maj,
                classes=k,
                best=top,
                majority_baseline=True,
                raise_lr_advisable=False,
                labels_suspect=False,
            )
            return
        floor = None if blew_up else task_metric_at_floor(run, p.task_floor, p.min_evaluations)
        if floor is not None:
            mk, first, top, n = floor
            yield self.finding(
                Severity.ERROR,
                f"{mk} never rose from its floor: {fmt(first)} at its first of {n} points, at most {fmt(top)} over "
                "the run: the model does not perform the task it is measured on, whatever its loss did (a loss "
                "near 0 by construction, a policy-gradient or contrastive objective, is no evidence of learning); "
                "check the reward/labels, the learning rate and that the trained weights are the ones evaluated",
                evidence=[
                    SeriesEvidence(
                        metric=mk, values={"first": first, "max": top, "points": float(n)}
                    )
                ],
                key=mk,
                first=first,
                max=top,
                n_points=n,
                score_floor=True,
                task_floor=True,
                raise_lr_advisable=False,
                labels_suspect=False,
            )
            return
        yield from found
        if skip is not None and not found:
            raise skip

    def _loss_check(self, run, p):
        """Judge the training loss's relative drop: no finding for a run that blew up, fell far
        enough or never dropped below zero; an INFO finding for a run that started from trained
        weights (:meth:`_finetune_finding`) or whose accuracy shows it learned
        (:meth:`_learned_finding`); else the underfit ERROR finding (:meth:`_underfit_finding`)."""
        key = run.key_for(Role.TRAIN_LOSS)
        s = run.series(key).by_step()
        if (~np.isfinite(s.values)).any():
            return  # a run that blew up is not underfitting
        if len(s) < p.min_points:
            raise Skip(f"{key} has {len(s)} points (< {p.min_points})")
        sm = centered_median(s.values, smooth_window(len(s)))
        initial, final, best = float(sm[0]), float(sm[-1]), float(sm.min())
        if initial <= 0:
            return
        ratio = final / initial
        # judged on the best level reached: a loss that fell and then rose learned, then diverged
        if ratio <= p.max_ratio or best / initial <= p.max_ratio:
            return
        ch = chance(run)
        at_chance = ch is not None and final >= (1 - p.at_chance) * ch.loss
        floor = score_floor(run, p.score_floor, p.min_evaluations)
        # never below its start: the smoothed training loss never went under its first value (and the
        # held-out loss, when logged, ended no lower than it began): with >= min_points nothing was learned
        never_fell = best >= initial and _heldout_not_lower(run)
        if len(s) < p.min_points_unassisted and not at_chance and floor is None and not never_fell:
            raise Skip(
                f"{key} has {len(s)} points (< {p.min_points_unassisted}) and no chance level to compare "
                "with: too few to call a small relative drop underfitting"
            )
        ft = finetune_evidence(run)
        low_start = ch is not None and initial < p.finetune_start * ch.loss
        if (ft or low_start) and not at_chance and floor is None:
            yield self._finetune_finding(key, s, initial, final, ft, ch)
            return
        learned = accuracy_learned(run, p.learned_accuracy, p.learned_rise)
        if learned is not None and not at_chance and floor is None and not never_fell:
            yield self._learned_finding(key, learned, initial, final)
            return
        yield self._underfit_finding(
            run, key, s, initial, final, ch, at_chance, floor, never_fell, ft
        )

    def _finetune_finding(self, key, s, initial: float, final: float, ft, ch) -> Finding:
        """The INFO finding of a small drop in a run that starts from trained weights (``ft``: the
        param that says so, else an initial loss under half the chance level ``ch``): not judged
        underfit by its relative drop."""
        ratio = final / initial
        why = (
            f"{ft[0]} = {ft[1]}"
            if ft
            else f"its initial loss {fmt(initial)} is already under half the chance level ln {ch.classes} = "
            f"{fmt(ch.loss)}"
        )
        return self.finding(
            Severity.INFO,
            f"{key} fell only {fmt(100 * (1 - ratio), 3)}% ({fmt(initial)} -> {fmt(final)}), as expected of a "
            f"run that starts from trained weights ({why}): not judged underfit by its relative drop",
            evidence=[
                SeriesEvidence(
                    metric=key,
                    step_start=int(s.steps[0]),
                    step_end=int(s.steps[-1]),
                    values={"initial": initial, "final": final, "ratio": ratio},
                )
            ],
            initial=initial,
            final=final,
            ratio=ratio,
            finetune=True,
            finetune_evidence=ft[0] if ft else "initial loss below chance",
        )

    def _learned_finding(self, key, learned, initial: float, final: float) -> Finding:
        """The INFO finding of a small loss drop while an accuracy rose (``learned``: its key,
        first and last value): the model learned the task; not judged underfit."""
        ratio = final / initial
        ak, first, last = learned
        return self.finding(
            Severity.INFO,
            f"{key} fell only {fmt(100 * (1 - ratio), 3)}% ({fmt(initial)} -> {fmt(final)}), but {ak} rose "
            f"{fmt(first)} -> {fmt(last)}: the model learned the task (the first logged loss already follows "
            "learning); not judged underfit by its relative drop",
            evidence=[SeriesEvidence(metric=ak, values={"first": first, "last": last})],
            initial=initial,
            final=final,
            ratio=ratio,
            accuracy_learned=True,
            key=ak,
        )

    def _underfit_finding(
        self,
        run,
        key,
        s,
        initial: float,
        final: float,
        ch,
        at_chance: bool,
        floor,
        never_fell: bool,
        ft,
    ) -> Finding:
        """The underfit ERROR finding: the drop, the final held-out accuracy, the score floor, the
        chance level (:func:`_chance_note`), a memorising model (:func:`_memorising_note`) and
        whether raising the learning rate is advisable (:func:`_lr_note`)."""
        ratio = final / initial
        lr = peak_lr(run)
        unstable_start = (
            at_chance and float(np.max(s.values[: max(3, len(s) // 10)])) > 1.5 * ch.loss
        )
        raise_ok = not unstable_start and not (lr is not None and lr[0] >= lr[1])
        values = {"initial": initial, "final": final, "ratio": ratio}
        ak, acc = _final_val_accuracy(run)
        if acc is not None:
            values["final_val_accuracy"] = acc
        msg = (
            f"{key} went from {fmt(initial)} to {fmt(final)} ({fmt(100 * (1 - ratio), 3)}% improvement "
            f"over {len(s)} points)"
        )
        if acc is not None:
            msg += f"; final {ak} {fmt(acc)}"
        if floor is not None:
            msg += (
                f"; the held-out score {floor[0]} never rose above {fmt(floor[1])} in {floor[2]} evaluations "
                "(its floor: the model predicts nothing correctly on held-out data)"
            )
        msg += _chance_note(ch, at_chance, final)
        memo = memorising(run, s, initial, final)
        if memo is not None:
            raise_ok = False
            values.update({k: v for k, v in memo.items() if isinstance(v, float)})
            msg += _memorising_note(memo)
        msg += _lr_note(lr, unstable_start, _above_chance(ch, final))
        return self.finding(
            Severity.ERROR,
            msg,
            evidence=[
                SeriesEvidence(
                    metric=key, step_start=int(s.steps[0]), step_end=int(s.steps[-1]), values=values
                )
            ],
            initial=initial,
            final=final,
            ratio=ratio,
            final_val_accuracy=acc,
            at_chance=at_chance,
            chance_loss=ch.loss if ch else None,
            finetune=bool(ft),
            peak_lr=lr[0] if lr else None,
            raise_lr_advisable=raise_ok,
            labels_suspect=memo is not None,
            chance_inferred=bool(ch and ch.source == INFERRED),
            score_floor=floor is not None,
            never_fell=never_fell,
            relative_drop_only=not (
                at_chance or floor is not None or never_fell or memo is not None
            ),
        )
