"""Judging a run from its final values: the branch of the verdict for runs that logged one or two
values per learning series (a tracker's summary, an MLflow run's final metrics, a two-epoch
Lightning CSV), too few for any detector's trend.

An analyst does not stop at "no curve": what the final values say is evidence too, weaker than a
curve's, and the verdict's confidence (:func:`.evidence.confidence`, from the points examined) is
lower for it. Two readings are made here, each only where the run is known to have ended:

* :func:`two_points_improved`: every learning series holds two values at two different steps, each loss
  fell and no accuracy or task score fell, and no held-out accuracy sits at or below chance: a short run
  that learned (succeeded, healthy); convergence, noise and a plateau cannot be told from two points.
* :func:`fit_final_scores`: a tree ensemble's fit (:func:`~mlaudit_core.model_family.tree_ensemble`)
  whose tracker marks the run finished and that logged a training and a held-out score once each (R2,
  accuracy, F1, AUC on a 0-1 scale). A boosting or forest library fits in one call and reports its
  final training and validation figures; those are the run's whole record. The training score
  :data:`FINAL_GAP` or more above the held-out one is an overfit; else a held-out score that beat
  chance by :data:`FINAL_LIFT` of the way to 1.0 is a fit that succeeded. A network's final values
  alone say nothing of whether its training converged, so this reading is for tree ensembles only.

The functions return ``(outcome, cause, sentence)`` or ``None``; :mod:`.policy` wraps them as rules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..model_family import tree_ensemble
from ..plan import NORMAL_END
from ..report import Cause, Outcome
from ..roles import Role, as_fraction, has_class_chance, parse_name
from ..rundata import RunData, RunStatus
from ..signal import fmt

if TYPE_CHECKING:
    from .evidence import Ending

#: A training score this far above the held-out one (0-1 scale) is an overfit: the policy's
#: ``MEMORISED_GAP``, 10 points (own wb03/wb05 and realworld csv01, labelled overfit; no healthy run of
#: realworld/own/libraries shows that gap with a training accuracy >= 0.99).
FINAL_GAP = 0.10
#: A held-out score's lift over chance, as a share of the way from chance to 1.0, from which the model
#: learned held-out signal (GE004's threshold for a held-out metric that beat chance, 25%).
FINAL_LIFT = 0.25
#: The loss roles and the accuracy/score roles of a learning verdict.
LOSS_ROLES = (Role.TRAIN_LOSS, Role.VAL_LOSS)
SCORE_ROLES = (Role.TRAIN_ACCURACY, Role.VAL_ACCURACY)

Judged = tuple[Outcome, Cause, str]


def _pair(run: RunData, key: str) -> tuple[float, float, float, float] | None:
    """``(first step, first value, last step, last value)`` of a series of exactly two finite values
    at two different steps, else ``None`` (one value, or the same value written twice at one step)."""
    s = run.metrics.series(key).by_step().finite()
    if len(s.values) != 2 or s.steps[0] == s.steps[1]:
        return None
    return float(s.steps[0]), float(s.values[0]), float(s.steps[1]), float(s.values[1])


def _learning_keys(run: RunData) -> dict[Role, str]:
    out: dict[Role, str] = {}
    for role in LOSS_ROLES + SCORE_ROLES:
        k = run.key_for(role)
        if k is not None:
            out[role] = k
    return out


def _all_pairs(run: RunData) -> bool:
    """Every learning series holds two values at two different steps, a loss among them."""
    keys = _learning_keys(run)
    return any(r in keys for r in LOSS_ROLES) and all(_pair(run, k) for k in keys.values())


def readable(run: RunData) -> str | None:
    """The final values a rule of this module reads, as text, or ``None``: two records of every learning
    series, or a finished tree ensemble's final training and held-out score of one measure. The evidence
    assessment (:func:`.evidence.assess`) records it: a verdict from these values rests on values
    examined, fewer than a curve's."""
    if _all_pairs(run):
        return "two records of every learning series"
    if _score_pair(run) is not None:
        return "a finished tree ensemble's final training and held-out scores"
    if run.status is RunStatus.FINISHED and _class_accuracy(run) is not None:
        return "a finished run's held-out accuracy of a task with a known class count"
    return None


def _class_accuracy(run: RunData) -> tuple[str, float, int, str] | None:
    """``(key, last value on a 0-1 scale, K, where K came from)`` of a held-out top-1 accuracy of a task
    with a known class count, else ``None``."""
    from ..detectors._context import chance as label_chance

    vk = run.key_for(Role.VAL_ACCURACY)
    if vk is None or not has_class_chance(vk):
        return None
    ch = label_chance(run, vocab=False)
    v, _ = as_fraction(vk, run.metrics.series(vk).by_step().finite().values)
    if ch is None or ch.classes < 2 or not len(v) or not 0 <= float(v[-1]) <= 1:
        return None
    return vk, float(v[-1]), ch.classes, ch.source


def ended_at_two(run: RunData, ending: Ending) -> str | None:
    """What shows a run of two records per series ended there, or ``None``: the tracker's finished
    status, its planned length reached, an end-of-training line in the console's last 300 lines, or a
    held-out record at or after the last training record (the evaluation a loop runs at the end of a
    pass: Lightning, Keras and the HF Trainer evaluate after each epoch). Two training records inside
    one epoch with none of these read the same whether the run ended or was cut there."""
    if run.status is RunStatus.FINISHED:
        return "the tracker marks the run finished"
    if ending.planned is not None and not ending.short:
        return f"it reached its planned length ({ending.planned_key} {ending.planned:g})"
    if any(NORMAL_END.search(x.text) for x in run.console[-300:]):
        return "its console has an end-of-training line"
    tk = run.key_for(Role.TRAIN_LOSS) or run.key_for(Role.TRAIN_ACCURACY)
    last_train = float(run.metrics.series(tk).finite().steps.max()) if tk else -np.inf
    for role in (Role.VAL_LOSS, Role.VAL_ACCURACY):
        k = run.key_for(role)
        p = _pair(run, k) if k else None
        if p is not None and p[2] >= last_train:
            return f"{k} was evaluated after each of its two records"
    return None


def two_points_improved(run: RunData, heldout_at_chance: bool) -> Judged | None:
    """Every learning series (training/held-out loss, training/held-out accuracy or score) holds two
    values at two different steps; at least one loss is among them and every loss fell; no accuracy
    or score fell; ``heldout_at_chance`` (a held-out accuracy at or below chance) is false. Then the
    run learned over its two records: succeeded, healthy. ``None`` otherwise, and for a series with a
    non-positive loss or a direction the name does not give."""
    keys = _learning_keys(run)
    if heldout_at_chance or not any(r in keys for r in LOSS_ROLES):
        return None
    moves: list[str] = []
    for role, k in keys.items():
        p = _pair(run, k)
        if p is None:
            return None
        _, first, _, last = p
        if role in LOSS_ROLES and not last < first:
            return None
        if role in SCORE_ROLES and last < first:
            return None
        moves.append(f"{k} {fmt(first)} -> {fmt(last)}")
    return (
        Outcome.SUCCEEDED,
        Cause.HEALTHY,
        "Judged from two records only: "
        + ", ".join(moves)
        + ". Every loss fell and no score fell, "
        "so the run learned over its two records, and nothing shows it stopped before its end; two "
        "points cannot show convergence, noise or a plateau: log every epoch (or every few steps) to "
        "judge the course of training.",
    )


def _chance(run: RunData, key: str) -> float:
    """The chance level of a 0-1 score: 0 for R2 (the mean's prediction scores 0), 0.5 for an AUC,
    1/K for an accuracy of a task with K known classes, else 0.5 (the highest chance of a task of two
    or more classes: the safe side)."""
    head = parse_name(key).head or ""
    if head == "r2":
        return 0.0
    if head in ("auc", "auroc"):
        return 0.5
    from ..detectors._context import chance as label_chance

    ch = label_chance(run, vocab=False)
    if ch is not None and ch.classes >= 2 and has_class_chance(key):
        return 1.0 / ch.classes
    return 0.5


def _final(run: RunData, key: str | None) -> float | None:
    """The last value of a summary series of one value (or the same value written more than once),
    on a 0-1 scale; ``None`` for a series with two different values or none."""
    if key is None:
        return None
    v, _ = as_fraction(key, run.metrics.series(key).finite().values)
    if not len(v) or float(np.ptp(v)) > 0:
        return None
    x = float(v[-1])
    return x if x <= 1.0 else None


def _score_pair(run: RunData) -> tuple[str, str, float, str, float] | None:
    """``(tree evidence, training key, its final value, held-out key, its final value)`` of a tree
    ensemble the tracker marks finished that logged one final value of the same 0-1 score on each side."""
    tree = tree_ensemble(run)
    if tree is None or run.status is not RunStatus.FINISHED:
        return None
    vk, tk = run.key_for(Role.VAL_ACCURACY), run.key_for(Role.TRAIN_ACCURACY)
    if vk is None or tk is None or parse_name(vk).head != parse_name(tk).head:
        return None  # no pair, or two different measures: no gap to read
    va, tr = _final(run, vk), _final(run, tk)
    if va is None or tr is None:
        return None
    return tree, tk, tr, vk, va


def fit_final_scores(run: RunData) -> Judged | None:
    """A tree ensemble (:func:`~mlaudit_core.model_family.tree_ensemble`) whose tracker marks the run
    finished and that logged a held-out score (0-1 scale, one value) and a training score of the same
    measure: the training score :data:`FINAL_GAP` or more above it -> overfit, model_convergence; else a
    held-out score at least :data:`FINAL_LIFT` of the way from chance to 1.0 -> succeeded, healthy.
    ``None`` otherwise (another model, no final status, no score pair, a weak held-out score)."""
    pair = _score_pair(run)
    if pair is None:
        return None
    tree, tk, tr, vk, va = pair
    shown = f"{tk} {fmt(tr)} against {vk} {fmt(va)}"
    if tr - va >= FINAL_GAP:
        return (
            Outcome.OVERFIT,
            Cause.MODEL_CONVERGENCE,
            f"The fit overfit: a tree ensemble ({tree}) finished with {shown}, "
            f"{fmt(100 * (tr - va), 3)} points lower on held-out data: the trees fit their training "
            "rows far better than new ones. Shallower trees, fewer rounds with early stopping on the "
            "validation set, subsampling or stronger leaf regularisation narrow the gap; judged from "
            "final values only (log the per-round evaluation to see where it opened).",
        )
    ch = _chance(run, vk)
    if ch >= 1.0 or (va - ch) / (1.0 - ch) < FINAL_LIFT:
        return None
    return (
        Outcome.SUCCEEDED,
        Cause.HEALTHY,
        f"Judged from final values: a tree ensemble ({tree}) finished with {shown} (chance "
        f"{fmt(ch)}): the held-out score is well above chance and within {fmt(100 * FINAL_GAP, 3)} points "
        "of the training score, so the fit generalises. No per-round curve was logged: log the "
        "per-round evaluation to judge how many rounds it needed.",
    )


def planned_heldout_accuracy(run: RunData, ending: Ending) -> Judged | None:
    """A run the tracker marks finished that reached its planned length (:class:`.evidence.Ending`:
    a plan, the count reached, not short) and logged a held-out top-1 accuracy of a task with a known
    class count K: its last value at least :data:`FINAL_LIFT` of the way from chance (1/K) to 1.0 is a
    run that did what it was set to do and learned what held-out data measures: succeeded, healthy.
    ``None`` otherwise."""
    if run.status is not RunStatus.FINISHED or ending.planned is None or ending.reached is None:
        return None
    acc = _class_accuracy(run)
    if ending.short or acc is None:
        return None
    vk, last, k, source = acc
    level = 1.0 / k
    if (last - level) / (1.0 - level) < FINAL_LIFT:
        return None
    return (
        Outcome.SUCCEEDED,
        Cause.HEALTHY,
        f"Judged from final values: the run finished and reached its planned length ({ending.planned_key} "
        f"{ending.planned:g}), and {vk} ends at {fmt(last)} against chance {fmt(level)} for "
        f"{k} classes ({source}): the model learned what held-out data measures. Too few "
        "points for a curve: log the loss every few steps and an evaluation per epoch to judge the course "
        "of training (whether more training would still help).",
    )


def snapshot_so_far(run: RunData, ending: Ending) -> Judged | None:
    """A checkpoint's state saved before the run's planned end (:class:`.evidence.Ending`: a snapshot,
    short of its plan, e.g. an HF ``checkpoint-N/trainer_state.json`` at ``global_step`` below
    ``max_steps``) holding too few values for a trend: the file itself says the run was still training
    when it was written, so running, whatever happened after it. The cause is healthy when a held-out
    top-1 accuracy of a task with a known class count beat chance (1/K) by :data:`FINAL_LIFT` of the way
    to 1.0 (the model learned held-out signal so far), else inconclusive (one or two values of a loss
    say nothing of the learning). ``None`` when the input is no mid-run snapshot."""
    if not ending.snapshot or not ending.short or ending.planned is None or ending.reached is None:
        return None
    where = (
        f"The file is a checkpoint's state saved mid-run: {ending.unit} {ending.reached:g} of the "
        f"{ending.planned:g} planned ({ending.planned_key}, {100 * (ending.share or 0):.0f}%), so the run was "
        "still training when it was written; whether it went on to its end is not in this file (audit its "
        "last checkpoint, TensorBoard logs or console for that)."
    )
    acc = _class_accuracy(run)
    if acc is not None:
        vk, last, k, source = acc
        level = 1.0 / k
        if (last - level) / (1.0 - level) >= FINAL_LIFT:
            return (
                Outcome.RUNNING,
                Cause.HEALTHY,
                f"{where} Healthy so far: {vk} is {fmt(last)} against chance {fmt(level)} for {k} classes "
                f"({source}), so the model had learned what held-out data measures by then. Too few points "
                "for a curve.",
            )
    return (
        Outcome.RUNNING,
        Cause.INCONCLUSIVE,
        f"{where} Too few points for a trend, and no held-out accuracy above chance, so how the learning went "
        "is not in it.",
    )


#: A last training loss at least this share below the run's mean training loss fell over the run: the
#: policy's ``CONVERGED_DROP`` (OP001's ``min_drop`` convention for a loss that learned), 20%.
MEAN_DROP = 0.2
#: Keys of the Hugging Face Trainer's end-of-training summary (``Trainer.train`` logs them once, when
#: its loop returns: after its planned steps, or when a callback stopped it; never from a killed run).
END_SUMMARY_KEYS = ("train_runtime", "train_samples_per_second", "train_steps_per_second")


def _summary_values(run: RunData) -> dict[str, float]:
    """The run's final values by key: the last finite value of every series, then the tracker's
    end-of-run summary (``summary.<key>`` / ``final.<key>`` params: W&B ``wandb-summary.json``, an HF
    ``trainer_state.json``'s end-of-training record) for keys no series holds."""
    out: dict[str, float] = {}
    for k in run.metrics.keys:
        v = run.metrics.series(k).finite().values
        if len(v):
            out[k] = float(v[-1])
    for k, p in run.params.items():
        for prefix in ("summary.", "final."):
            if k.startswith(prefix) and k[len(prefix) :] not in out:
                try:
                    x = float(str(p).strip())
                except ValueError:
                    continue
                if np.isfinite(x):
                    out[k[len(prefix) :]] = x
    return out


def ended_normally(run: RunData) -> str | None:
    """What in the run's own record shows its training loop returned, or ``None``: an end-of-training
    line (:data:`~mlaudit_core.plan.NORMAL_END`) among the console's last 300 lines, or the Hugging
    Face Trainer's end-of-training summary (:data:`END_SUMMARY_KEYS`, as a series or a summary value).
    A tracker's finished status is not enough: MLflow's and W&B's exit handlers mark any process that
    exits without an exception finished (own corpus mlf01, f6b2-21: runs of 4 s marked FINISHED)."""
    end = next((x.text for x in reversed(run.console[-300:]) if NORMAL_END.search(x.text)), None)
    if end is not None:
        return f"its console has an end-of-training line ({end.strip()[:100]})"
    for k in _summary_values(run):
        if k.replace("/", ".").split(".")[-1] in END_SUMMARY_KEYS:
            return (
                f"it holds the Trainer's end-of-training summary ({k}): its training loop returned"
            )
    return None


def _mean_loss_fell(run: RunData, vals: dict[str, float]) -> str | None:
    """``"<last loss key> <last> against the run's mean <mean key> <mean>"`` when the run holds the Hugging
    Face Trainer's end-of-training summary, whose ``train_loss`` is the mean training loss over the
    whole run (``TrainOutput.training_loss``), and its last logged training loss (another key) is at
    least :data:`MEAN_DROP` below that mean; else ``None``."""
    mean_key = next((k for k in vals if k.replace("/", ".").split(".")[-1] == "train_loss"), None)
    if mean_key is None or not any(
        k.replace("/", ".").split(".")[-1] in END_SUMMARY_KEYS for k in vals
    ):
        return None
    mean = vals[mean_key]
    for k, last in vals.items():
        pn = parse_name(k)
        if (
            k == mean_key
            or pn.family != "loss"
            or pn.split == "eval"
            or pn.tokens[-1:] != ("loss",)
        ):
            continue
        if mean > 0 and 0 < last <= (1 - MEAN_DROP) * mean:
            return f"{k} {fmt(last)} against the run's mean {mean_key} {fmt(mean)}"
    return None


def _heldout_scores(run: RunData, vals: dict[str, float]) -> list[tuple[str, float, float]] | None:
    """``[(key, final value on a 0-1 scale, chance)]`` of the run's held-out accuracies and task scores
    (evaluation split, higher is better), ``None`` when one of them did not beat its chance (an
    accuracy's 1/K with K known, an AUC's 0.5, an R2's 0, else 0.5, the highest chance of a task of two
    classes or more) by :data:`FINAL_LIFT` of the way to 1.0."""
    out = []
    for k, x in vals.items():
        pn = parse_name(k)
        if pn.split != "eval" or pn.family not in ("acc", "score") or not pn.higher_is_better:
            continue
        v, _ = as_fraction(k, np.array([x]))
        if not 0 <= float(v[0]) <= 1:
            continue
        ch = _chance(run, k)
        if ch >= 1.0 or (float(v[0]) - ch) / (1.0 - ch) < FINAL_LIFT:
            return None
        out.append((k, float(v[0]), ch))
    return out


def finished_final_values(run: RunData) -> Judged | None:
    """A run whose own record shows its training loop returned (:func:`ended_normally`) and whose final
    values show it learned: the last training loss at least :data:`MEAN_DROP` below the run's mean
    training loss (:func:`_mean_loss_fell`), or held-out accuracies or task scores that all beat their
    chance by :data:`FINAL_LIFT` of the way to 1.0 (:func:`_heldout_scores`), and no final loss is exactly
    zero. Then the run did what it was
    set to do: succeeded, healthy, judged on final values (the verdict's confidence is that of the few
    points examined). ``None`` otherwise: a loop that returned after one step or with figures at chance
    is no success, and without an end-of-training record a run killed mid-way leaves the same final
    values (the caller excludes failure signatures, stopped runs and reports)."""
    ended = ended_normally(run)
    if ended is None:
        return None
    vals = _summary_values(run)
    if any(parse_name(k).family == "loss" and x == 0.0 for k, x in vals.items()):
        # a loss of exactly zero measures nothing (a loss not accumulated, masked or leaked targets):
        # the final values are not all credible (own corpus f24b2-13: 'Train Loss: 0.0000' after one epoch)
        return None
    fell = _mean_loss_fell(run, vals)
    scores = _heldout_scores(run, vals)
    if fell is not None:
        shown = f"the loss fell over the run ({fell})"
    elif scores:
        shown = "the held-out figures beat chance: " + ", ".join(
            f"{k} {fmt(x)} (chance {fmt(ch)})" for k, x, ch in scores
        )
    else:
        return None
    return (
        Outcome.SUCCEEDED,
        Cause.HEALTHY,
        f"Judged from final values: the run ended normally ({ended}) and {shown}. No curve was logged, so "
        "how training went (convergence, noise, a plateau) is not known: log the loss every few steps and "
        "an evaluation per epoch to judge it.",
    )
