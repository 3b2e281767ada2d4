"""LI006 logged-zeros."""

from __future__ import annotations

import re

import numpy as np

from ..report import Cause, Finding, Hypothesis, Outcome, SeriesEvidence, Severity
from ..roles import Role, normalise_key
from ..signal import fmt
from ._context import loss_keys
from ._knowledge import hyp, said
from .base import Detector, DetectorParams, Remedy, Skip

_CLS = re.compile(r"cls|class")
#: A penalty term that is 0 whenever its weight is 0 (the default of most codes that log one):
#: regularisation, weight decay, L1/L2 penalties. ``reg`` alone counts only without a box context
#: (detectron2 ``loss_box_reg``, ``rpn``/``loc`` losses are box regression, whose zeros matter).
_PENALTY = re.compile(r"regulari[sz]|penalty|weight_?decay|(^|[/_.\-])l[12]([/_.\-]|$)")
_REG = re.compile(r"(^|[/_.\-])reg(loss|_loss)?([/_.\-]|$)|^regloss")
_BOX = re.compile(r"box|bbox|rpn|loc|anchor")
#: A localisation term of a detector: computed only on the predictions matched to a ground-truth box
#: (Ultralytics ``v8DetectionLoss``: the CIoU box loss and the DFL loss both sum over ``fg_mask``; YOLOv5
#: ``lbox`` over the matched targets), so every one of them is 0 when no box reaches the loss.
_LOCALISATION = re.compile(r"box|bbox|g?iou|dfl|rpn|loc(?!al)|anchor")


def disabled_term(zero_keys: list[str], moving: list[str]) -> bool:
    """Whether loss components exactly 0 at every point, beside ``moving`` components of the same split,
    are terms switched off (a loss weight of 0, a head the model does not have) rather than labels that
    never reached the loss. Missing labels zero *every* term computed on them: a localisation term (box,
    IoU, DFL) at 0 is read as missing boxes only when no localisation term of the split moves (YOLOv8 with
    no boxes: box and DFL 0, the classification BCE over all anchors still moves; realworld mlf01, own
    csv16). A DFL term at 0 beside a moving box loss is a head without a distribution-focal term
    (Ultralytics ``BboxLoss`` returns 0 for DFL when ``reg_max`` is 1; own f25b1-06). A component of any
    other kind at 0 beside moving siblings is a term whose weight is 0 (own f26b2-19: f0 and vocoder-stem
    losses of a speech detector whose hparams switch them off). Every task metric at 0 is judged
    separately (``metrics_zero``)."""
    if not zero_keys or not moving:
        return False
    loc_zero = [k for k in zero_keys if _LOCALISATION.search(normalise_key(k))]
    loc_moving = [k for k in moving if _LOCALISATION.search(normalise_key(k))]
    return not loc_zero or bool(loc_moving)


def is_penalty(key: str) -> bool:
    """A regularisation-type loss term (``RegLoss``, ``reg_loss``, ``l2_penalty``, ``weight_decay_loss``)
    whose exact zeros mean the penalty is switched off, not a broken pipeline (own corpus tb14/tb15:
    a weather regressor logging ``RegLoss`` = 0 with no regulariser configured)."""
    k = normalise_key(key).replace("regloss", "reg_loss")
    return bool(_PENALTY.search(k) or (_REG.search(k) and not _BOX.search(k)))


#: Params only Hugging Face ``TrainingArguments`` / trainer_state.json carry (last dotted component).
_HF_PARAMS = (
    "logging_nan_inf_filter",
    "per_device_train_batch_size",
    "logging_steps",
    "transformers_version",
    "eval_steps",
    "save_total_limit",
)
#: Metric keys only the HF Trainer's integrations log (W&B/MLflow/TensorBoard callbacks).
_HF_KEYS = (
    "train/global_step",
    "train/train_runtime",
    "train/total_flos",
    "total_flos",
    "train_runtime",
)


def hf_trainer_evidence(run) -> str | None:
    """What shows that the run was made by the Hugging Face Trainer (a param or metric key only it
    writes, e.g. ``args.logging_nan_inf_filter``, ``logging_steps``, ``train/global_step``), or ``None``.
    The stand-in wording names HF's ``logging_nan_inf_filter`` only then."""
    for k in run.params:
        leaf = normalise_key(k).split("/")[-1].split(".")[-1]
        if leaf in _HF_PARAMS or k.startswith("args.") and leaf.startswith("logging_"):
            return f"param {k}"
    for k in run.metrics.keys:
        if k in _HF_KEYS:
            return f"metric {k}"
    return None


def _zeros_in_stretches(zero: np.ndarray, standins: list[int]) -> int:
    """How many points are exact zeros in the runs of consecutive zeros that hold a stand-in (index
    in ``standins``): a loss that stays at 0.0 from a stand-in to the end is one stand-in stretch, every
    point of it a missing value, though only its first has a positive neighbour."""
    edges = np.flatnonzero(np.diff(np.r_[0, zero.astype(np.int8), 0]))
    return sum(
        int(b - a) for a, b in zip(edges[::2], edges[1::2]) if any(a <= i < b for i in standins)
    )


def _task_metrics(run) -> tuple[list[str], list[str]]:
    """``(keys, keys exactly 0 at every evaluation)`` of the run's task metrics (``metrics/*``: mAP,
    precision, recall)."""
    keys = [
        k
        for k in run.metrics.keys
        if normalise_key(k).startswith("metrics/") and run.series(k).finite().values.size
    ]
    return keys, [k for k in keys if (run.series(k).finite().values == 0.0).all()]


class LoggedZeros(Detector, code="LI006", name="logged-zeros", family="integrity"):
    """A loss logged as exactly 0.0 is a missing value, not a perfect model.

    Three real shapes, each a different failure:

    * ``stand_in``: exact zeros *between* positive training losses. Hugging Face Trainer's
      ``logging_nan_inf_filter`` (on by default) drops a NaN/inf step from the logging
      window; with ``logging_steps=1`` the window is empty and 0.0 is logged. These steps
      were non-finite (realworld tb03: 14 zeros between spikes to 19.97). The message names
      that filter only when the run shows it is an HF Trainer run (:func:`hf_trainer_evidence`;
      fact ``hf_trainer``); other scripts that write 0 for NaN get the generic wording.
    * ``all_zero``: a training loss (or a loss component) that is exactly 0 at every point.
      With a zero gradient norm, or next to other components that do move, no learning
      signal reaches it: labels masked out, a loss disconnected from the graph, or (YOLO
      ``box_loss``/``dfl_loss``) no ground-truth boxes in the training set (realworld ts02,
      mlf01). A classification component (``cls_loss``) that is 0 while the others move is
      left alone: a single-class detector has no classification loss (YOLOv5 with ``nc: 1``,
      realworld csv04 and tb05).
    * ``empty_validation``: validation losses exactly 0 at every evaluation while another
      validation component is not: YOLOv5 writes 0 box/cls validation losses when the
      validation images have no labels (realworld tb06).
    * ``disabled_term`` (info): components exactly 0 throughout while siblings of the same split move,
      and the zeros are not every localisation term nor every task metric (:func:`disabled_term`): a
      switched-off term (loss weight 0, no DFL head), not a data failure (own f25b1-06, f26b2-19).
    * Penalty terms (:func:`is_penalty`: regularisation, weight decay, L1/L2; ``RegLoss`` without a
      box context) are left out of every shape: their zeros mean the penalty is off.
    * ``metrics_zero``: every task metric (``metrics/*``: mAP, precision, recall) exactly 0 at
      every evaluation: the model never matched one validation label (realworld tb06, mlf01).

    Why it matters: a zero loss reads as success and hides a broken pipeline or a
    non-finite step.
    Evidence: the key, how many points are exactly zero and where, the values around them.
    Remedy: stand-ins: treat them as NaN (set ``logging_nan_inf_filter=False`` to see the
    real values) and find the first non-finite step; all-zero: check label masking and that
    the loss depends on the model output; empty validation: check the validation labels.
    Thresholds: none for all-zero (every point exactly 0, at least ``min_points`` 3); stand-ins
    need at least ``min_standins`` 1 exact zero whose neighbours' median exceeds
    ``min_neighbour`` 0.05 (a converged loss decays smoothly towards 0 and is never exactly 0
    next to values of 0.05 and more; measured on realworld tb03 vs ts05/log03).
    """

    @classmethod
    def remedies_for(cls, finding: Finding) -> tuple[Remedy, ...]:
        """By what the zeros are: stand-ins for NaN, a loss without signal, empty validation labels."""
        kind = finding.facts.get("kind")
        if kind == "stand_in":
            return (
                Remedy(
                    "Log the real values (HF Trainer: logging_nan_inf_filter=False) and find the first "
                    "non-finite step",
                    "the zeros stand in for NaN/inf steps, which the filter hides",
                    "minutes",
                ),
            )
        if kind == "all_zero":
            return (
                Remedy(
                    "Check one batch: are all labels masked out (-100), does the loss depend on the "
                    "model output (requires_grad), does the data hold the targets this loss needs",
                    "a loss at exactly 0 everywhere carries no learning signal",
                    "minutes",
                ),
            )
        return (
            Remedy(
                "Check the validation labels: the files exist, are non-empty and are named as the "
                "loader expects",
                "validation losses or task metrics of exactly 0 mean no validation label was matched",
                "minutes",
            ),
        )

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """The zeros as missing values (supported), not a perfect model (rejected)."""
        kind = finding.facts.get("kind")
        what = {
            "stand_in": "the zeros stand in for non-finite steps",
            "all_zero": "no learning signal reaches this loss (masked labels, a detached loss)",
        }.get(str(kind), "the validation labels are missing or unmatched")
        return [
            hyp(
                what,
                "supported",
                Cause.DATA_CONFIG,
                "inspect one batch's labels and the loss's inputs",
                for_=said(finding),
            ),
            hyp(
                "the model is perfect on this loss",
                "rejected",
                Cause.HEALTHY,
                against=["an exact 0.0 loss at every point is a missing value, not a fit"],
            ),
        ]

    class Params(DetectorParams):
        min_points: int = 3
        min_standins: int = 1
        min_neighbour: float = 0.05

    @classmethod
    def standin_key(cls, finding: Finding) -> str | None:
        """The training loss whose exact zeros stand in for non-finite steps (``kind='stand_in'``)."""
        return finding.facts.get("key") if finding.facts.get("kind") == "stand_in" else None

    def check(self, run, p):
        train = loss_keys(run, evaluation=False)
        val = loss_keys(run, evaluation=True)
        tk = run.key_for(Role.TRAIN_LOSS)
        if tk and tk not in train:
            train.append(tk)
        if not train and not val:
            raise Skip("no loss series logged")
        yield from self._train(run, p, train)
        yield from self._validation(run, p, val)

    def _train(self, run, p, keys):
        keys = [k for k in keys if not is_penalty(k)]
        all_zero, moving = [], []
        hf = hf_trainer_evidence(run)
        for key in keys:
            s = run.series(key).by_step().finite()
            if len(s) < p.min_points:
                continue
            v = s.values
            zero = v == 0.0
            if zero.all():
                all_zero.append((key, s))
                continue
            moving.append(key)
            if not zero.any() or zero.sum() > 0.8 * len(v):
                continue
            # stand-ins: an exact zero surrounded by clearly positive values
            idx = np.flatnonzero(zero)
            standins = []
            for i in idx:
                nb = v[max(0, i - 3) : i + 4]
                nb = nb[nb != 0.0]
                if nb.size and float(np.median(nb)) > p.min_neighbour:
                    standins.append(i)
            if len(standins) >= p.min_standins:
                i0 = standins[0]
                around = v[max(0, i0 - 3) : i0 + 4]
                n_said = _zeros_in_stretches(zero, standins)
                yield self.finding(
                    Severity.ERROR,
                    f"{key} is exactly 0.0 at {n_said} of {len(v)} points next to positive values (first at "
                    f"step {int(s.steps[i0])}; neighbours {', '.join(fmt(float(x), 3) for x in around)}): a logged 0.0 "
                    "next to losses of this size is a stand-in for a non-finite step, not a value"
                    + (
                        f" (Hugging Face Trainer run, {hf}: its logging_nan_inf_filter logs 0.0 when every step of "
                        "the logging window was NaN/inf; set logging_nan_inf_filter=False to see them)"
                        if hf
                        else " (a logger or script that replaces NaN/inf by 0, e.g. nan_to_num or a NaN filter; "
                        "log the raw value to see them)"
                    ),
                    evidence=[
                        SeriesEvidence(
                            metric=key,
                            step_start=int(s.steps[max(0, i0 - 3)]),
                            step_end=int(s.steps[min(len(v) - 1, i0 + 3)]),
                            values={"zeros": float(len(standins)), "max": float(v.max())},
                        )
                    ],
                    kind="stand_in",
                    hf_trainer=bool(hf),
                    key=key,
                    n_zero=len(standins),
                    n_points=len(v),
                    first_step=int(s.steps[i0]),
                    role=Role.TRAIN_LOSS.value if key == run.key_for(Role.TRAIN_LOSS) else None,
                )
        yield from self._all_zero(run, all_zero, moving)

    def _all_zero(self, run, all_zero, moving):
        """Training losses exactly 0 at every point: a switched-off term beside moving siblings
        (:func:`disabled_term`, info), else no learning signal (error)."""
        all_zero = [
            (k, s) for k, s in all_zero if not (moving and _CLS.search(normalise_key(k)))
        ]  # a single-class detector has no classification loss (YOLO nc=1: cls_loss is 0)
        if disabled_term([k for k, _ in all_zero], moving):
            yield self._disabled([k for k, _ in all_zero], moving, max(len(s) for _, s in all_zero))
            return
        for key, s in all_zero:
            gk = run.key_for(Role.GRAD_NORM)
            g = run.series(gk).finite().values if gk else np.array([])
            why = []
            if g.size and (g == 0).all():
                why.append(f"{gk} is 0 too")
            if moving:
                why.append(f"other training losses move ({', '.join(moving[:3])})")
            yield self.finding(
                Severity.ERROR,
                f"{key} is exactly 0 at all {len(s)} points (steps {int(s.steps[0])}-{int(s.steps[-1])})"
                + (f"; {'; '.join(why)}" if why else "")
                + ": no learning signal reaches this loss (labels masked out, a loss detached from the model output, "
                "or, for a detection box/dfl loss, no ground-truth boxes in the training data)",
                evidence=[
                    SeriesEvidence(
                        metric=key,
                        step_start=int(s.steps[0]),
                        step_end=int(s.steps[-1]),
                        values={"points": float(len(s)), "max": 0.0},
                    )
                ],
                kind="all_zero",
                key=key,
                n_points=len(s),
                other_losses_move=bool(moving),
                grad_norm_zero=bool(g.size and (g == 0).all()),
            )

    def _disabled(self, zero_keys: list[str], moving: list[str], n_points: int) -> Finding:
        """An info note: components at 0 throughout beside moving siblings are switched-off terms
        (:func:`disabled_term`), not a data failure."""
        return self.finding(
            Severity.INFO,
            f"{', '.join(zero_keys[:3])} exactly 0 at all {n_points} point(s) while {', '.join(moving[:3])} "
            "move: a loss term that is switched off (weight 0, or a head the model does not have), not missing "
            "labels, which would zero every term computed on them",
            evidence=[
                SeriesEvidence(metric=k, values={"points": float(n_points)}) for k in zero_keys[:4]
            ],
            kind="disabled_term",
            zero_keys=zero_keys,
        )

    def _validation(self, run, p, keys):
        keys = [k for k in keys if not is_penalty(k)]
        zero_keys, nonzero = [], []
        for key in keys:
            s = run.series(key).by_step().finite()
            if len(s) < 1:
                continue
            (zero_keys if (s.values == 0.0).all() else nonzero).append(key)
        metric_keys, zero_metrics = _task_metrics(run)
        n_evals = max((len(run.series(k)) for k in zero_keys + zero_metrics), default=0)
        zero_keys = [k for k in zero_keys if not (nonzero and _CLS.search(normalise_key(k)))]
        all_metrics_zero = bool(zero_metrics) and len(zero_metrics) == len(metric_keys)
        if not all_metrics_zero and disabled_term(zero_keys, nonzero):
            yield self._disabled(zero_keys, nonzero, n_evals)
        elif zero_keys and nonzero:
            yield self.finding(
                Severity.ERROR,
                f"{', '.join(zero_keys)} exactly 0 at every evaluation while {', '.join(nonzero[:2])} is not"
                + (
                    f", and every task metric ({', '.join(zero_metrics[:4])}) is 0"
                    if zero_metrics and len(zero_metrics) == len(metric_keys)
                    else ""
                )
                + f" over {n_evals} evaluation(s): the validation set has no labels to match (empty or misnamed "
                "label files; YOLOv5 writes 0 box/cls validation losses in that case)",
                evidence=[
                    SeriesEvidence(metric=k, values={"evaluations": float(len(run.series(k)))})
                    for k in (zero_keys + zero_metrics)[:4]
                ],
                kind="empty_validation",
                zero_keys=zero_keys,
                zero_metrics=zero_metrics,
                n_evals=n_evals,
                all_metrics_zero=bool(zero_metrics) and len(zero_metrics) == len(metric_keys),
            )
        elif len(metric_keys) >= 2 and len(zero_metrics) == len(metric_keys):
            yield self.finding(
                Severity.ERROR,
                f"every task metric ({', '.join(zero_metrics[:4])}) is exactly 0 at all {n_evals} evaluations: the "
                "model never matched a single validation label",
                evidence=[
                    SeriesEvidence(metric=k, values={"evaluations": float(len(run.series(k)))})
                    for k in zero_metrics[:4]
                ],
                kind="metrics_zero",
                zero_keys=zero_keys,
                zero_metrics=zero_metrics,
                n_evals=n_evals,
            )
