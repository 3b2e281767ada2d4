"""GE004 validation-at-chance."""

from __future__ import annotations

import numpy as np

from ..formats.consolelog.context import chance_level
from ..report import Cause, ConfigEvidence, Finding, Hypothesis, Outcome, SeriesEvidence, Severity
from ..roles import Role, has_class_chance, parse_name
from ..signal import fmt
from ._context import chance as label_chance
from ._knowledge import hyp, said
from .base import Detector, DetectorParams, Remedy, Skip


class ValidationAtChance(
    Detector, code="GE004", name="validation-at-chance", family="generalization"
):
    """Validation accuracy stays near chance level: the model has learned nothing that generalises.

    Why it matters: a validation accuracy close to a uniform guess means the
    features do not carry the label to held-out data; if the training accuracy is
    far above chance at the same time, the model is memorising the training set
    (too little data, leakage-free but signal-free features, or broken validation
    labels). If both stay at chance, the labels or inputs may be broken.
    Evidence: the chance level and where it came from, the median / best / final
    validation accuracy, its lift over chance as a share of the possible lift,
    and the training accuracy at the first and last evaluation. A training accuracy
    already well above chance at the first evaluation (before a model could memorise
    anything) shows that the labels carry signal (``labels_carry_signal``): then the
    failure is generalisation (too little data, overfitting), not the labels. A training
    accuracy that starts at chance and rises by more than twice the held-out lift plus
    ``max_lift`` is the model memorising labels that carry no held-out signal (``memorises``).
    Remedy: more data or augmentation, a model suited to the signal, check the
    validation labels and preprocessing (same as training); overfit a tiny
    subset to confirm the pipeline can learn at all.
    Thresholds: the median validation accuracy has recovered less than
    ``max_lift`` 25% of the way from chance to 1.0 (convention: on a balanced
    binary task, a median under 0.625). Chance comes from params (``chance =``,
    ``num_classes`` / ``num_labels``, a binary task), else the task's label map (HF ``id2label``)
    or the loss and accuracy agreeing on a class count K (``_context.chance``, never a vocabulary
    or ``type_vocab_size``), or the ``chance`` parameter; class imbalance is not known, so chance
    is the uniform guess.
    """

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """Held-out accuracy at chance: memorising (training accuracy far above chance) against
        labels or inputs without signal (both at chance)."""
        signal = finding.facts.get("labels_carry_signal")
        return [
            hyp(
                "the model memorises the training set (too little data, features without signal)",
                "supported" if signal else "open",
                Cause.MODEL_CONVERGENCE,
                "training accuracy against validation accuracy over the run",
                for_=said(finding) if signal else [],
            ),
            hyp(
                "labels or inputs are broken (shuffled, misaligned, a different preprocessing)",
                "open" if signal else "supported",
                Cause.DATA_CONFIG,
                "overfit a tiny subset; compare the validation preprocessing with training's",
                for_=[] if signal else said(finding),
            ),
        ]

    implies = "underfit"

    remedies = (
        Remedy(
            "Check that labels line up with inputs: train on 64 samples; a correct pipeline memorises them and, with labels shuffled on purpose, cannot generalise",
            "separates data from model",
            "minutes",
        ),
        Remedy(
            "Check that validation preprocessing and label mapping equal the training ones",
            "a broken validation pipeline also sits at chance",
            "minutes",
        ),
    )

    needs = (Role.VAL_ACCURACY,)

    class Params(DetectorParams):
        chance: float | None = None
        max_lift: float = 0.25
        min_evals: int = 3

    def check(self, run, p):
        key = run.key_for(Role.VAL_ACCURACY)
        auc = parse_name(key).head in ("auc", "auroc")
        if p.chance is None and not auc and not has_class_chance(key):
            raise Skip(
                f"{key} is not a top-1 accuracy: its chance level is not 1/num_classes "
                "(a random detector's mAP is ~0; set the chance parameter)"
            )
        if p.chance is not None:
            chance, source = p.chance, "detector parameter chance"
        else:
            got = chance_level(run.params)
            if got is None:
                ch = label_chance(run, vocab=False)
                if ch is None:
                    raise Skip(
                        "chance level unknown (no num_classes / num_labels / id2label / chance in params)"
                    )
                got = (ch.accuracy, ch.source)
            chance, source = got
            if auc:  # a classification task's ROC AUC: a random score's is 0.5, whatever K
                chance, source = (
                    0.5,
                    f"ROC AUC of a random score ({source} names a classification task)",
                )
        s = run.series(key).by_step().finite()
        if len(s) < p.min_evals:
            raise Skip(f"{key} has {len(s)} evaluations (< {p.min_evals})")
        v = s.values
        if v.max() > 1.0 + 1e-9:
            v = v / 100.0  # printed in percent
        med, best, final = float(np.median(v)), float(v.max()), float(v[-1])
        room = 1.0 - chance
        if room <= 0:
            return
        lift = (med - chance) / room
        if lift >= p.max_lift:
            return
        n_classes = round(1 / chance) if chance > 0 else None
        classes = (
            f" for {n_classes} classes" if n_classes and abs(1 / n_classes - chance) < 1e-6 else ""
        )
        msg = (
            f"{key} stays near chance ({fmt(chance)}{classes}): median {fmt(med)}, best {fmt(best)}, final "
            f"{fmt(final)} over {len(v)} evaluations ({fmt(100 * lift, 3)}% of the way from chance to 1)"
        )
        train_final = train_first = None
        signal = None
        memorises = False
        tk = run.key_for(Role.TRAIN_ACCURACY)
        if tk:
            t = run.series(tk).by_step().finite()
            if len(t):
                tv = t.values / (100.0 if t.values.max() > 1.0 + 1e-9 else 1.0)
                train_first, train_final = float(tv[0]), float(tv[-1])
                train_lift = (train_final - chance) / room
                signal = (train_first - chance) / room >= p.max_lift
                if train_lift > 2 * max(lift, 0.0) + p.max_lift:
                    memorises = not signal
                    msg += f", while {tk} reaches {fmt(train_final)}"
                    msg += (
                        f" (already {fmt(train_first)} at the first evaluation: the labels carry signal, the "
                        "model fits the training data but does not generalise)"
                        if signal
                        else f" from {fmt(train_first)}: the model memorises the training set"
                    )
                else:
                    msg += f"; {tk} is also low ({fmt(train_final)}): check labels and inputs"
        yield self.finding(
            Severity.WARNING,
            msg,
            evidence=[
                SeriesEvidence(
                    metric=key,
                    step_start=int(s.steps[0]),
                    step_end=int(s.steps[-1]),
                    values={"chance": chance, "median": med, "best": best, "final": final},
                ),
                ConfigEvidence(key=source, value=str(run.params.get(source, chance))[:300]),
            ],
            chance=chance,
            chance_source=source,
            median=med,
            best=best,
            final=final,
            lift=lift,
            train_accuracy_first=train_first,
            train_accuracy_final=train_final,
            labels_carry_signal=signal,
            memorises=memorises,
            n_evals=len(v),
        )
