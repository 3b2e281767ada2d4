"""The narrative around a verdict: timeline, key metrics, surprising facts, hypotheses, next actions.

Presentation only: nothing here changes the outcome, the cause or the confidence (those are
:mod:`.policy` and :mod:`.evidence`). Moved unchanged out of the former ``verdict.py``; the
hypotheses and actions read the decision and the findings it rests on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ..detectors import detector_for, registry
from ..detectors.base import Remedy
from ..model_family import DL_ONLY_ADVICE, tree_ensemble
from ..report import (
    Cause,
    Finding,
    Hypothesis,
    NextAction,
    Outcome,
    SeriesEvidence,
    Severity,
    TimelinePhase,
)
from ..roles import Role, is_higher_better, normalise_key
from ..rundata import CHECKPOINT_SUFFIXES, RunData, Series
from ..signal import clip, fmt
from ..signatures import GRAPH_OP, frame_text, is_library_frame
from .evidence import framework_files
from .policy import Ctx as _Ctx
from .policy import Decision as _Decision

#: ``Detector.surprise_rank`` from which a detector's sentence comes after the curves' facts.
_AFTER_CURVES = 3


def finding_surprises(findings: list[Finding], *, after_curves: bool | None = None) -> list[str]:
    """The sentences the findings' detectors add to the surprising facts (``Detector.surprising``),
    by ``surprise_rank`` then in the findings' order; ``after_curves``: only those ranked after
    (True) or before (False) the facts read from the curves, None: all."""
    picked: list[tuple[int, str]] = []
    for f in findings:
        det = detector_for(f.code)
        if after_curves is not None and (det.surprise_rank >= _AFTER_CURVES) != after_curves:
            continue
        s = det.surprising(f)
        if s is not None:
            picked.append((det.surprise_rank, s))
    return [s for _, s in sorted(picked, key=lambda rs: rs[0])]


def surprising(run: RunData, findings: list[Finding]) -> list[str]:
    """Things a careful analyst would flag as unexpected, even when they are not failures: the
    detectors' sentences (:func:`finding_surprises`) around what the curves themselves show."""
    out = finding_surprises(findings, after_curves=False)
    tk, vk = run.key_for(Role.TRAIN_LOSS), run.key_for(Role.VAL_LOSS)
    if tk and vk:
        t, v = run.series(tk).by_step().finite(), run.series(vk).by_step().finite()
        if len(t) > 3 and len(v) > 3:
            idx = np.clip(np.searchsorted(t.steps, v.steps, side="right") - 1, 0, len(t) - 1)
            below = v.values < t.values[idx]
            if below.mean() > 0.8:
                out.append(
                    f"validation loss is below the training loss at {int(below.sum())} of {len(v)} "
                    "evaluations: regularisation active only in training (dropout, augmentation), "
                    "a running-average training loss, or validation data easier than (or leaked "
                    "from) training"
                )
    ak = run.key_for(Role.VAL_ACCURACY)
    if ak:
        a = run.series(ak).finite()
        if len(a) and float(a.values.max()) >= 0.999:
            out.append(
                f"{ak} reached {fmt(float(a.values.max()))}: perfect held-out accuracy is rare; check "
                "for train/validation overlap"
            )
    out += finding_surprises(findings, after_curves=True)
    return out


def key_metrics(
    run: RunData, findings: list[Finding] | None = None
) -> dict[str, dict[str, float | int | str | None]]:
    """Initial / best / final (and medians for time series) for each role that is logged.

    Exact zeros of a key that LI006 found to be stand-ins for non-finite steps (``kind='stand_in'``)
    are not values: they are left out of first/best/min/final/median and counted in
    ``standin_zeros`` (a "best 0" would show the logger's placeholder as the best loss)."""
    standin = {detector_for(f.code).standin_key(f) for f in findings or []} - {None}
    out: dict[str, dict[str, float | int | str | None]] = {}
    for role in Role:
        key = run.key_for(role)
        if key is None:
            continue
        s = run.series(key).by_step()
        f = s.finite()
        n_standin = 0
        if key in standin and len(f):
            keep = f.values != 0.0
            n_standin = int((~keep).sum())
            f = Series(f.key, f.steps[keep], f.values[keep], f.wall_times[keep]) if n_standin else f
        if not len(f):
            out[role.value] = {
                "key": key,
                "points": len(s),
                "finite_points": 0,
                "first": None,
                "best": None,
                "best_step": None,
                "min": None,
                "max": None,
                "final": None,
                "final_step": None,
                "median": None,
            }
            continue
        from ..roles import is_higher_better

        hib = is_higher_better(key) or role in (
            Role.VAL_ACCURACY,
            Role.TRAIN_ACCURACY,
            Role.THROUGHPUT,
        )
        directional = role in (
            Role.TRAIN_LOSS,
            Role.VAL_LOSS,
            Role.TRAIN_ACCURACY,
            Role.VAL_ACCURACY,
            Role.THROUGHPUT,
        )
        ib = int(np.argmax(f.values) if hib else np.argmin(f.values))
        out[role.value] = {
            "key": key,
            "points": len(s),
            "finite_points": len(f),
            "first": float(f.values[0]),
            "best": float(f.values[ib]) if directional else None,
            "best_step": int(f.steps[ib]) if directional else None,
            "min": float(f.values.min()),
            "max": float(f.values.max()),
            "final": float(f.values[-1]),
            "final_step": int(f.steps[-1]),
            "median": float(np.median(f.values)),
        }
        if n_standin:
            out[role.value]["standin_zeros"] = n_standin
    return out


def build_timeline(run: RunData, findings: list[Finding]) -> list[TimelinePhase]:
    """A practical timeline: start, warmup (from the logged LR), learning, events, termination."""
    tl = run.key_for(Role.TRAIN_LOSS) or run.key_for(Role.VAL_LOSS)
    t0 = run.start_time.timestamp() if run.start_time else None

    def wall(series, i):
        if t0 is None or not len(series):
            return None
        w = series.wall_times[i]
        return float(w - t0) if np.isfinite(w) else None

    s = run.series(tl).by_step() if tl else None
    phases: list[TimelinePhase] = []
    if s is not None and len(s):
        phases.append(
            TimelinePhase(
                name="startup",
                step_start=None,
                step_end=int(s.steps[0]),
                wall_start_s=0.0 if t0 else None,
                wall_end_s=wall(s, 0),
                note="from run start to the first logged step",
            )
        )
    phases += _warmup_phase(run, wall)
    phases += _learning_phases(run, wall)
    phases += _event_phases(findings)
    if s is not None and len(s):
        phases.append(
            TimelinePhase(
                name="termination",
                step_start=int(s.steps[-1]),
                step_end=int(s.steps[-1]),
                wall_start_s=wall(s, len(s) - 1),
                wall_end_s=run.duration_s,
                note=f"status {run.status.value}",
            )
        )
    return phases


def _warmup_phase(run: RunData, wall) -> list[TimelinePhase]:
    """The warmup: from the first logged learning rate up to its peak, when it rose (more than two
    points logged)."""
    lk = run.key_for(Role.LEARNING_RATE)
    if not lk:
        return []
    lr = run.series(lk).by_step().finite()
    if len(lr) <= 2:
        return []
    peak = int(np.argmax(lr.values))
    if not (peak > 0 and lr.values[0] < lr.values[peak]):
        return []
    return [
        TimelinePhase(
            name="warmup",
            step_start=int(lr.steps[0]),
            step_end=int(lr.steps[peak]),
            wall_start_s=wall(lr, 0),
            wall_end_s=wall(lr, peak),
            note=f"LR {fmt(float(lr.values[0]))} -> {fmt(float(lr.values[peak]))}",
        )
    ]


def _learning_phases(run: RunData, wall) -> list[TimelinePhase]:
    """Early learning (the smoothed training loss's first 90% of its total drop, >= 10 points)
    and the region after it, named "loss rising" when the loss climbs back by more than half of
    what it had dropped, else "stable region" (presentation only)."""
    tk = run.key_for(Role.TRAIN_LOSS)
    if not tk:
        return []
    t = run.series(tk).by_step().finite()
    if len(t) < 10:
        return []
    from ..signal import centered_median, smooth_window

    sm = centered_median(t.values, smooth_window(len(t)))
    with np.errstate(invalid="ignore", over="ignore"):  # inf - inf: a median overflowed
        drop = float(sm[0] - sm.min())
    if not (drop > 0 and np.isfinite(drop)):  # no drop, or a median overflowed (values ~1e308)
        return []
    i90 = int(np.flatnonzero(sm <= sm[0] - 0.9 * drop)[0])
    phases = [
        TimelinePhase(
            name="early learning",
            step_start=int(t.steps[0]),
            step_end=int(t.steps[i90]),
            wall_start_s=wall(t, 0),
            wall_end_s=wall(t, i90),
            note=f"{tk} {fmt(float(sm[0]))} -> {fmt(float(sm[i90]))} (90% of the total drop)",
        )
    ]
    if i90 < len(t) - 1:
        rising = float(sm[-1] - sm.min()) > 0.5 * drop
        phases.append(
            TimelinePhase(
                name="late region (loss rising)" if rising else "stable region",
                step_start=int(t.steps[i90]),
                step_end=int(t.steps[-1]),
                wall_start_s=wall(t, i90),
                wall_end_s=wall(t, len(t) - 1),
                note=f"{tk} {fmt(float(sm[i90]))} -> {fmt(float(sm[-1]))}",
            )
        )
    return phases


def _event_phases(findings: list[Finding]) -> list[TimelinePhase]:
    """A point on the timeline for each finding whose detector names a ``timeline_event``, at the
    step its facts give (onset, first, start or after) or its series evidence's window."""
    phases = []
    for f in findings:
        event = detector_for(f.code).timeline_event
        if event is None:
            continue
        step = (
            f.facts.get("onset_step")
            or f.facts.get("first_step")
            or f.facts.get("start_step")
            or f.facts.get("step_after")
        )
        ev = next((e for e in f.evidence if isinstance(e, SeriesEvidence)), None)
        phases.append(
            TimelinePhase(
                name=event,
                step_start=step if step is not None else (ev.step_start if ev else None),
                step_end=ev.step_end if ev else None,
                note=clip(f.message),
            )
        )
    return phases


def hypotheses(d: _Decision, c: _Ctx) -> list[Hypothesis]:
    """Competing explanations of the main symptom, with the evidence and a discriminating test:
    those of the first rule of :data:`_HYPOTHESIS_RULES` that applies (none: no hypotheses)."""
    return next((hs for rule in _HYPOTHESIS_RULES if (hs := rule(d, c)) is not None), [])


def _diverged_hypotheses(d: _Decision, c: _Ctx) -> list[Hypothesis] | None:
    """Diverged: a learning rate too high (a gradual rise) against a numerical failure (an
    abrupt onset)."""
    o = d.outcome
    if o is not Outcome.DIVERGED:
        return None
    hs: list[Hypothesis] = []
    gradual = d.cause is Cause.MODEL_CONVERGENCE
    hs.append(
        Hypothesis(
            statement="learning rate too high (or warmup too short)",
            status="supported" if gradual else "rejected",
            cause=Cause.MODEL_CONVERGENCE,
            evidence_for=(
                [c.lr.describe() + " (>= 10x typical)"]
                if gradual and c.lr.far_above
                else ["loss grew before the failure"]
                if gradual
                else []
            ),
            evidence_against=[] if gradual else ["no loss growth before the non-finite onset"],
            discriminating_test="rerun the first steps with the LR divided by 10",
        )
    )
    hs.append(
        Hypothesis(
            statement="numerical failure: precision mode / loss scaling / a bad batch",
            status="rejected" if gradual else "supported",
            cause=Cause.DATA_CONFIG,
            evidence_for=[]
            if gradual
            else ["abrupt onset right after finite, non-growing loss"]
            + [f"reduced precision in use: {c.precision[0][:100]}" for _ in c.precision[:1]],
            evidence_against=[]
            if c.precision
            else ["no fp16/bf16/AMP/loss-scale evidence in params, config or console"],
            discriminating_test="rerun from the last good checkpoint in fp32/bf16 or with "
            "dynamic loss scaling; replay the batch at the onset step",
        )
    )
    return hs


def _overfit_hypotheses(d: _Decision, c: _Ctx) -> list[Hypothesis] | None:
    """Overfit: too little data or regularisation, against a train/validation mismatch."""
    o = d.outcome
    if o is not Outcome.OVERFIT:
        return None
    hs: list[Hypothesis] = []
    hs.append(
        Hypothesis(
            statement="too little data or regularisation for the model size",
            status="supported",
            cause=Cause.MODEL_CONVERGENCE,
            evidence_for=[clip(d.summary)],
            discriminating_test="retrain with weight decay / augmentation or 2x data; the "
            "validation minimum should move later",
        )
    )
    hs.append(
        Hypothesis(
            statement="train/validation distribution mismatch (data/config issue)",
            status="rejected",
            cause=Cause.DATA_CONFIG,
            evidence_against=["validation loss first improved together with training loss"],
            discriminating_test="evaluate on a held-out slice of the training set",
        )
    )
    return hs


def _underfit_hypotheses(d: _Decision, c: _Ctx) -> list[Hypothesis] | None:
    """Underfit or plateaued: a learning rate too low or capacity too small, against labels or
    inputs without signal."""
    o = d.outcome
    if o not in (Outcome.UNDERFIT, Outcome.PLATEAUED):
        return None
    lr = c.run.has(Role.LEARNING_RATE)
    hs: list[Hypothesis] = []
    hs.append(
        Hypothesis(
            statement="learning rate too low or capacity too small",
            status="rejected" if _no_lr_raise(c) else "supported" if lr else "open",
            cause=Cause.MODEL_CONVERGENCE,
            evidence_against=[_no_lr_raise(c)] if _no_lr_raise(c) else [],
            evidence_for=[clip(d.summary)],
            discriminating_test="overfit a tiny subset (e.g. 64 samples); a healthy setup "
            "drives training loss near 0",
        )
    )
    hs.append(
        Hypothesis(
            statement="labels do not carry signal (shuffled, misaligned) or inputs are broken",
            status="open",
            cause=Cause.DATA_CONFIG,
            discriminating_test="overfit a tiny subset: if even that fails, check the data",
        )
    )
    return hs


def _slow_hypotheses(d: _Decision, c: _Ctx) -> list[Hypothesis] | None:
    """Slow: input-bound against compute-bound; not a convergence problem."""
    o = d.outcome
    if o is not Outcome.SLOW:
        return None
    hs: list[Hypothesis] = []
    starved = c.get("SY002", Severity.ERROR) is not None
    sy002 = c.get("SY002")
    hs.append(
        Hypothesis(
            statement="input-bound: the data pipeline cannot keep up",
            status="supported" if starved else "open",
            cause=Cause.INFRA_RUNTIME,
            evidence_for=[sy002.message] if starved and sy002 is not None else [],
            discriminating_test="time an epoch over the data loader alone, without the model",
        )
    )
    hs.append(
        Hypothesis(
            statement="compute-bound: the model step itself is slow",
            status="rejected" if starved else "open",
            cause=Cause.INFRA_RUNTIME,
            evidence_against=["data time is most of the step time"] if starved else [],
            discriminating_test="run the step on a cached synthetic batch",
        )
    )
    hs.append(
        Hypothesis(
            statement="a model or convergence problem",
            status="rejected",
            cause=Cause.MODEL_CONVERGENCE,
            evidence_against=["the finding is about time, not about the loss"],
        )
    )
    return hs


def _stopped_hypotheses(d: _Decision, c: _Ctx) -> list[Hypothesis] | None:
    """Crashed or running, stopped without a recorded end (V16, V17): stopped from outside, an
    error the output does not hold, or still running."""
    o = d.outcome
    if not (
        o in (Outcome.CRASHED, Outcome.RUNNING) and d.rule in ("V16", "V17") and c.ending.stopped
    ):
        return None
    hs: list[Hypothesis] = []
    why = c.ending.describe()
    hs.append(
        Hypothesis(
            statement="stopped from outside (a person, the scheduler's time limit, a preemption)",
            status="supported" if c.ending.interrupt else "open",
            cause=Cause.INFRA_RUNTIME,
            evidence_for=[why] if c.ending.interrupt else [],
            discriminating_test="check the scheduler's record (sacct / job events) and the "
            "shell history for the end time",
        )
    )
    hs.append(
        Hypothesis(
            statement="crashed with an error the captured output does not hold",
            status="rejected" if c.ending.interrupt else "open",
            cause=Cause.CORRECTNESS_BUG,
            evidence_against=["the console shows an interrupt"] if c.ending.interrupt else [],
            discriminating_test="attach the full stderr of the job; look for a traceback or an "
            "OOM-killer line in the kernel log",
        )
    )
    hs.append(
        Hypothesis(
            statement="still running, or resumed elsewhere",
            status="open",
            cause=Cause.INCONCLUSIVE,
            discriminating_test="look for a later run or checkpoint of the same config",
        )
    )
    return hs


def _crash_primary_hypotheses(d: _Decision, c: _Ctx) -> list[Hypothesis] | None:
    """Crashed with a primary finding: what its detector supports or rejects."""
    o = d.outcome
    if not (o is Outcome.CRASHED and d.primary is not None):
        return None
    hs: list[Hypothesis] = []
    hs += _primary_hypotheses(d.primary, o) or []
    return hs


def _primary_detector_hypotheses(d: _Decision, c: _Ctx) -> list[Hypothesis] | None:
    """Any other outcome with a primary finding whose detector has hypotheses: those."""
    o = d.outcome
    if d.primary is None:
        return None
    return _primary_hypotheses(d.primary, o)


def _unstable_lr_hypotheses(d: _Decision, c: _Ctx) -> list[Hypothesis] | None:
    """Unstable with a logged learning rate >= 10x typical: the learning rate, then what the
    primary finding's detector adds."""
    o = d.outcome
    if not (o is Outcome.UNSTABLE and c.lr.far_above):
        return None
    hs: list[Hypothesis] = []
    on = _clipping_on(c)
    hs.append(
        Hypothesis(
            statement="learning rate far too high for the optimiser",
            status="supported",
            cause=Cause.MODEL_CONVERGENCE,
            evidence_for=[f"{c.lr.describe()} ({(c.lr.lr or 0.0) / c.lr.typical:.3g}x typical)"]
            + (
                [f"gradient clipping active on {100 * on[1]:.0f}% of steps (clip {on[0]:g})"]
                if on
                else []
            ),
            discriminating_test="rerun with the LR at the optimiser's typical value; the "
            "held-out loss should settle",
        )
    )
    if d.primary is not None:
        hs += _primary_hypotheses(d.primary, o) or []
    return hs


def _healthy_hypotheses(d: _Decision, c: _Ctx) -> list[Hypothesis] | None:
    """Succeeded and healthy: healthy, and the benign spikes and overflow skips are no failure."""
    o = d.outcome
    if not (o is Outcome.SUCCEEDED and d.cause is Cause.HEALTHY):
        return None
    hs: list[Hypothesis] = []
    hs.append(
        Hypothesis(
            statement="the run is healthy",
            status="supported",
            cause=Cause.HEALTHY,
            evidence_for=[clip(d.summary)],
        )
    )
    benign = c.get("OP002")
    if benign:
        hs.append(
            Hypothesis(
                statement="the loss spikes are an instability",
                status="rejected",
                cause=Cause.MODEL_CONVERGENCE,
                evidence_against=[clip(benign.message)],
            )
        )
    skips = c.get("RT006")
    if skips and skips.facts.get("benign"):
        hs.append(
            Hypothesis(
                statement="the fp16 overflow messages are a failure",
                status="rejected",
                cause=Cause.DATA_CONFIG,
                evidence_against=[skips.message[:400]],
            )
        )
    return hs


#: The ledger's rules in precedence order: each gives its hypotheses, or None when it does
#: not apply to the decision.
_HYPOTHESIS_RULES = (
    _diverged_hypotheses,
    _overfit_hypotheses,
    _underfit_hypotheses,
    _slow_hypotheses,
    _stopped_hypotheses,
    _crash_primary_hypotheses,
    _unstable_lr_hypotheses,
    _primary_detector_hypotheses,
    _healthy_hypotheses,
)


#: The underfit action to raise the LR, said in full by :func:`_lr_raise_action` from what the run logged.
_RAISE_LR = "Raise the learning rate 3-10x or add capacity"

_ACTIONS: dict[Outcome, list[tuple[str, str, str]]] = {
    # Outcome.DIVERGED: built per run by _divergence_action (how far the loss blew up, and whether a
    # good checkpoint can exist at all)
    Outcome.OVERFIT: [
        (
            "Keep the checkpoint at the validation minimum (early stopping on validation loss)",
            "recovers the best model at no cost",
            "minutes",
        ),
        (
            "Add regularisation (weight decay, dropout), augmentation or more data",
            "moves the overfit onset later",
            "hours",
        ),
    ],
    Outcome.UNDERFIT: [
        (
            "Overfit a tiny subset (64 samples) to check the setup can learn at all",
            "separates a capacity/LR problem from a data problem",
            "minutes",
        ),
        (
            _RAISE_LR,
            "the usual cause of a flat loss",
            "hours",
        ),
    ],
    Outcome.PLATEAUED: [
        (
            "Check the LR schedule at the plateau start; try a higher LR or later decay",
            "a plateau often follows a decayed or too-low LR",
            "hours",
        )
    ],
    Outcome.UNSTABLE: [
        (
            "Inspect the batches and LR at the spike steps; add gradient clipping",
            "most unrecovered spikes follow a bad batch or an LR event",
            "hours",
        )
    ],
}


#: The outcome's actions for a tree ensemble (:func:`~mlaudit_core.model_family.tree_ensemble`):
#: its knobs are the shrinkage, the rounds and the trees (LightGBM, XGBoost and scikit-learn
#: parameter documentation; default learning rates 0.1, 0.3 (eta) and 0.1).
_TREE_ACTIONS: dict[Outcome, list[tuple[str, str, str]]] = {
    Outcome.OVERFIT: [
        (
            "Keep the model at the best round (early stopping on the validation set: "
            "early_stopping_rounds / lightgbm.early_stopping, then best_iteration)",
            "recovers the best model at no cost",
            "minutes",
        ),
        (
            "Regularise the trees: shallower trees (max_depth / num_leaves), larger leaves "
            "(min_child_samples / min_child_weight), L1/L2 (reg_alpha / reg_lambda), row and column "
            "subsampling, a smaller learning rate; or more data",
            "moves the overfit onset later",
            "minutes",
        ),
    ],
    Outcome.UNDERFIT: [
        (
            "Raise the learning rate (shrinkage) 3-10x, or add rounds or deeper trees",
            "a boosting run at a tiny shrinkage or with too few or too small trees learns little",
            "minutes",
        ),
    ],
    Outcome.PLATEAUED: [
        (
            "Check the learning rate (shrinkage) and the trees' size: a plateau of a boosting run "
            "is a model that stopped finding useful splits",
            "deeper trees or more features move it; more rounds at the same settings do not",
            "minutes",
        )
    ],
    Outcome.UNSTABLE: [
        (
            "Lower the learning rate (shrinkage) and inspect the rounds where the loss jumped",
            "a boosting run whose loss jumps between rounds overshoots at its shrinkage",
            "minutes",
        )
    ],
    Outcome.DIVERGED: [
        (
            "Rerun with the learning rate (shrinkage) lowered 10x or more and more rounds, with early "
            "stopping on the validation set (the libraries' defaults: 0.1 LightGBM and "
            "scikit-learn, eta 0.3 XGBoost)",
            "each round adds a tree scaled by the learning rate: a loss that grows round after "
            "round overshoots at this shrinkage",
            "minutes",
        )
    ],
}


def _remedies(code: str) -> list[tuple[str, str, str]]:
    """The next actions a detector recommends when its finding decides the verdict (its
    ``remedies``), as (action, why, cost)."""
    det = registry().get(code)
    return [(r.action, r.why, r.cost) for r in det.remedies] if det is not None else []


def _remedies_of(f: Finding) -> list[tuple[str, str, str]]:
    """The next actions the detector of ``f`` recommends when ``f`` decides the verdict
    (``Detector.remedies_for``), as (action, why, cost)."""
    return [(r.action, r.why, r.cost) for r in detector_for(f.code).remedies_for(f)]


def _primary_hypotheses(primary: Finding, outcome: Outcome) -> list[Hypothesis] | None:
    """The hypotheses the primary finding's detector adds to the ledger (``Detector.hypotheses``)."""
    det = registry().get(primary.code)
    return det.hypotheses(primary, outcome) if det is not None else None


def _crash_remedy(primary: Finding) -> Remedy | None:
    """The first action when the run crashed on this finding (its detector's ``crash_remedy_for``)."""
    det = registry().get(primary.code)
    return det.crash_remedy_for(primary) if det is not None else None


#: A training loss this many times its first finite value before it blew up (or went non-finite)
#: is not fixed by halving the learning rate: halving moves the LR by 2x, the loss moved by orders of
#: magnitude. 100x is two orders of magnitude; the torch tutorial run with SGD lr=20 (issue NEWUSER
#: 17:58) reached 5e13 / 2.3 ~ 2e13x.
BLOWUP_EXTREME = 100.0
#: Param names (last dotted component) holding a checkpoint interval: HF Trainer ``save_steps``,
#: Lightning ModelCheckpoint ``every_n_train_steps``, Keras ModelCheckpoint ``save_freq``, common
#: script names.
_SAVE_INTERVAL = (
    "save_steps",
    "every_n_train_steps",
    "save_freq",
    "checkpoint_every",
    "checkpoint_interval",
    "save_interval",
    "ckpt_interval",
    "save_every",
    "ckpt_every",
)
#: Values of a checkpoint-interval param that mean no checkpoint is saved.
_NO_SAVE = frozenset({"", "0", "-1", "none", "null", "false", "no"})
#: A "good" checkpoint needs at least this many finite, improving loss points before the blow-up.
_GOOD_PREFIX_POINTS = 5
#: Without a save interval in the params, a blow-up within this share of the logged steps is taken to
#: precede the first checkpoint (trainers save per epoch or every N steps; HF's default save_steps is
#: 500, Lightning's ModelCheckpoint once per epoch).
_EARLY_SHARE = 0.10


@dataclass
class Blowup:
    """How the loss left its range: ``growth`` is the largest finite loss over the first finite
    value (inf when the loss never had a finite value), ``onset_step`` the first step that is
    non-finite or above 3x the running minimum, ``good_checkpoint`` whether a checkpoint taken while the
    loss was finite and improving can exist (>= 5 such points and the onset after the first save: the
    save interval in the params, else after the first 10% of the logged steps)."""

    growth: float
    onset_step: int | None
    nonfinite: bool
    good_checkpoint: bool
    save_interval: float | None = None


def blowup(run: RunData) -> Blowup | None:
    """Measure the blow-up of the training loss (validation loss when no training loss); ``None``
    without a loss series. Reads ``run.params`` for a checkpoint interval (see ``_SAVE_INTERVAL``)."""
    k = run.key_for(Role.TRAIN_LOSS) or run.key_for(Role.VAL_LOSS)
    if k is None:
        return None
    s = run.series(k).by_step()
    if not len(s):
        return None
    v, st = np.asarray(s.values, dtype=float), np.asarray(s.steps)
    fin = np.isfinite(v)
    nonfinite = bool((~fin).any())
    if not fin.any():
        return Blowup(float("inf"), int(st[0]), True, False)
    i0 = int(np.flatnonzero(fin)[0])
    first = float(v[i0])
    onset = None
    run_min = first
    for i in range(i0, len(v)):
        if not np.isfinite(v[i]) or (run_min > 0 and v[i] > 3 * run_min):
            onset = i
            break
        run_min = min(run_min, float(v[i]))
    fv = v[fin]
    growth = float(fv.max() / first) if first > 0 else float("inf") if fv.max() > first else 1.0
    prefix = v[i0:onset] if onset is not None else v[i0:]
    improving = len(prefix) >= _GOOD_PREFIX_POINTS and float(prefix.min()) < 0.9 * float(prefix[0])
    interval = None
    for pk, pv in run.params.items():
        if normalise_key(pk).split("/")[-1] in _SAVE_INTERVAL:
            try:
                x = float(str(pv).strip())
            except ValueError:
                continue
            if np.isfinite(x) and x > 0:
                interval = x
                break
    good = improving
    if good and onset is not None:
        if interval is not None:
            good = float(st[onset]) > interval
        else:  # no save interval known: a blow-up in the first tenth of the run rarely has a checkpoint
            span = float(st[-1] - st[0]) or 1.0
            good = float(st[onset] - st[0]) >= _EARLY_SHARE * span
    return Blowup(growth, int(st[onset]) if onset is not None else None, nonfinite, good, interval)


def _saved_weights(run: RunData) -> list[str]:
    """The run's artifacts that are saved weights (:data:`~mlaudit_core.rundata.CHECKPOINT_SUFFIXES`),
    by path."""
    return [a.path for a in run.artifacts if a.path.lower().endswith(CHECKPOINT_SUFFIXES)]


def _checkpoint_recorded(run: RunData, b: Blowup | None) -> bool:
    """Whether the run itself says a checkpoint was written: a checkpoint interval in its params (a
    number, or a word such as Keras's ``save_freq="epoch"``; not 0, -1 or none), or a
    console line of the checkpoint-save signatures (``saving checkpoint to ...``, ``Saving model
    checkpoint to ...``, ``save_model``) before the blow-up, or a saved-weights file among its artifacts
    (Lightning's default ``checkpoints/epoch=9-step=430.ckpt`` beside its metrics)."""
    if b is not None and b.save_interval is not None:
        return True
    if _saved_weights(run):
        return True
    if any(
        normalise_key(k).split("/")[-1] in _SAVE_INTERVAL and str(v).strip().lower() not in _NO_SAVE
        for k, v in run.params.items()
    ):
        return True
    if not run.console:
        return False
    from ..signatures import scan_run

    hits, _ = scan_run(run)
    return any(h.signature.category == "checkpoint" for h in hits)


def _abrupt_nan(c: _Ctx) -> bool:
    """A loss turning non-finite abruptly (OP004's onset, no gradual growth) with no reduced precision
    in use: the summary's rule (policy ``_NO_PRECISION_NAN``) advises a 10x lower learning rate, and
    the action says the same."""
    op004 = c.get("OP004")
    return bool(op004 and op004.facts.get("abrupt")) and not c.precision


def _extreme_blowup(b: Blowup | None) -> bool:
    """The loss grew ``BLOWUP_EXTREME`` x or more, or turned non-finite after growing 10x with no
    good checkpoint before it."""
    return b is not None and (
        b.growth >= BLOWUP_EXTREME or (b.nonfinite and not b.good_checkpoint and b.growth >= 10)
    )


def _extreme_why(c: _Ctx, b: Blowup | None, abrupt_nan: bool) -> list[str]:
    """Why halving the learning rate will not be enough: the loss's growth, its non-finite end, the
    learning rate far above typical."""
    why = []
    if b is not None and np.isfinite(b.growth) and b.growth > 1:
        why.append(f"the loss reached {b.growth:.3g}x its first value")
    if b is not None and b.nonfinite:
        why.append(
            "then turned non-finite"
            if why
            else "the loss turned non-finite abruptly with no reduced precision in use"
            if abrupt_nan
            else "the loss turned non-finite"
        )
    if c.lr.far_above:
        why.append(c.lr.describe())
    return why


def _divergence_action(c: _Ctx) -> tuple[str, str, str]:
    """The learning-rate action for a diverged run, scaled by how far the loss blew up; "rerun from
    the last good checkpoint" only when one can exist, else "restart"."""
    b = blowup(c.run)
    abrupt_nan = _abrupt_nan(c)
    extreme = c.lr.far_above or abrupt_nan or _extreme_blowup(b)
    saved = _checkpoint_recorded(c.run, b)
    if b is not None and b.good_checkpoint and b.onset_step is not None:
        where = (
            "Rerun from the last good checkpoint (saved before step " + str(b.onset_step) + ")"
            if saved
            # a checkpoint *can* exist; nothing in the run says one was written (a diverged
            # MLflow run may have saved none)
            else "Rerun from a checkpoint saved before step "
            + str(b.onset_step)
            + " if one was written "
            "(this run records none), else restart from scratch"
        )
    elif b is not None:
        where = "Restart from scratch (no checkpoint taken while the loss was finite and improving can exist)"
    else:
        where = (
            "Rerun from the last good checkpoint"
            if saved
            else "Rerun from a checkpoint saved before the blow-up if one was written, else from scratch"
        )
    if extreme:
        target = (
            f"{c.lr.typical:g} for {c.lr.optimiser}"
            if c.lr.optimiser
            else "e.g. 1e-3 for Adam/AdamW, 0.1 for SGD"
        )
        if c.lr.lr is not None and c.lr.lr <= c.lr.typical:
            # never send a run "back to" a range it is already in (a Keras SGD run at
            # 0.05 is below "0.1 for sgd"): the LR is ordinary, the model/data need less
            lr_part = (
                f" (now {c.lr.lr:g}, already at or below the typical {target}: this model and data "
                "need a smaller one; check the scale of the inputs and targets too)"
            )
        elif c.lr.lr is None:
            # the run's LR is not in the data: naming a value to go "back to" could name the one it
            # already has (a run at Adam's 1e-3 told "back to 1e-3 for Adam")
            lr_part = (
                " from the value the run used (it is not in the data, so no value is named; a run "
                f"already at its optimiser's typical value ({target}) needs a smaller one for this model and data: "
                "check the scale of the inputs and targets too)"
            )
        else:
            lr_part = (
                f" (now {c.lr.lr:g}, {c.lr.lr / c.lr.typical:.3g}x typical)"
                f", back to the optimiser's typical range ({target})"
            )
        why = _extreme_why(c, b, abrupt_nan)
        return (
            f"{where} with the peak LR lowered 10x or more{lr_part}, with warmup and "
            f"{_clipping_part(c)}",
            (", ".join(why) or "the loss blew up by orders of magnitude")
            + ": halving the learning rate will not be enough",
            "hours",
        )
    return (
        f"{where} with the peak LR halved and {_clipping_part(c)}",
        "tests the learning-rate explanation directly",
        "hours",
    )


def _clipping_on(c: _Ctx) -> tuple[float, float] | None:
    """(clip threshold, share of logged steps above it) when the run itself shows gradient clipping
    active on most steps (OP006 facts clip / clip_share, share > 50%), else ``None``."""
    for f in c.by_code.get("OP006", []):
        clip, share = f.facts.get("clip"), f.facts.get("clip_share")
        if clip is not None and share is not None and share > 0.5:
            return float(clip), float(share)
    return None


def _clipping_part(c: _Ctx) -> str:
    """ "gradient clipping at 1.0", unless the run's own evidence says clipping is already on for most
    steps: then advising it would contradict the run (HF Trainer's max_grad_norm 1.0
    clips 98% of the steps of some runs)."""
    on = _clipping_on(c)
    if on is None:
        return "gradient clipping at 1.0"
    return (
        f"keep the clipping (already active: grad norm above the clip {on[0]:g} on {100 * on[1]:.0f}% of "
        "steps, so the clip sets the step size and only a lower LR shrinks it)"
    )


def _unstable_action(c: _Ctx) -> tuple[str, str, str]:
    """The unstable run's action: clipping is advised only when the run does not already clip on most
    steps; a learning rate >= 10x the optimiser's typical value is named first."""
    on = _clipping_on(c)
    if c.lr.far_above:
        return (
            f"Lower the peak learning rate 10x or more, to the optimiser's typical range "
            f"({c.lr.describe()}, {(c.lr.lr or 0.0) / c.lr.typical:.3g}x typical)"
            + (
                f"; clipping is already active on {100 * on[1]:.0f}% of steps (clip {on[0]:g})"
                if on
                else "; add gradient clipping at 1.0"
            ),
            "an LR this far above typical makes every update overshoot",
            "hours",
        )
    if on is not None:
        return (
            f"Lower the learning rate (or check it): gradient clipping is already active on {100 * on[1]:.0f}% "
            f"of steps (clip {on[0]:g}), so the clip, not the LR schedule, sets the step size; then inspect "
            "the batches at the spike steps",
            "clipping on almost every step means the LR is too high for this model",
            "hours",
        )
    return _ACTIONS[Outcome.UNSTABLE][0]


def _lr_raise_action(c: _Ctx) -> tuple[str, str, str]:
    """The action to raise the learning rate, from the peak LR and optimiser the run logged
    (:func:`~mlaudit_core.verdict.evidence.lr_assessment`): a known LR below its optimiser's typical
    peak is raised towards it (a factor, not 3-10x: SGD at 1e-4 is 1000x below SGD's 0.1); an unknown
    LR gets the usual peaks to compare with (:data:`~mlaudit_core.verdict.evidence.TYPICAL_LR`)."""
    lr = c.lr
    if lr.lr is not None and lr.lr > 0 and lr.lr < lr.typical:
        return (
            f"Raise the learning rate towards {fmt(lr.typical)} (this run's {fmt(lr.lr)}, {lr.key}, is "
            f"{fmt(lr.typical / lr.lr, 3)}x below the usual peak for "
            f"{lr.optimiser or 'an unknown optimiser'}) or add capacity",
            "the usual cause of a flat loss",
            "hours",
        )
    if lr.lr is None:
        return (
            "Raise the learning rate (the run logs none; usual peaks: 1e-3 for Adam/AdamW, 0.01-0.1 "
            "for SGD) or add capacity",
            "the usual cause of a flat loss",
            "hours",
        )
    return (_RAISE_LR, "the usual cause of a flat loss", "hours")


def _no_lr_raise(c: _Ctx) -> str:
    """Why raising the learning rate must not be advised ('' when it may): the LR is at or above the
    optimiser's typical value, or the loss sits at chance with an unstable start (OP002/GE004)."""
    g = c.get("GE002", Severity.ERROR)
    if g is not None and g.facts.get("labels_suspect"):
        return (
            "the training loss fell below the first held-out loss while the held-out loss rose and the "
            "held-out accuracy stayed at its start (a label/data problem)"
        )
    if c.lr.at_or_above_typical:
        return c.lr.describe() + " is at or above typical"
    if g is not None and g.facts.get("raise_lr_advisable") is False:
        # the finding's own sentence says raising the LR is not the remedy: the advice follows it
        if g.facts.get("peak_lr") is not None:
            return f"the peak learning rate {fmt(float(g.facts['peak_lr']))} is at or above typical"
        return "the loss started above chance and fell back to it (an unstable start)"
    if (
        c.get("GE004", Severity.WARNING) is not None
        and c.get("OP002", Severity.WARNING) is not None
    ):
        return "the loss is at chance level with an unstable start"
    return ""


def next_actions(d: _Decision, c: _Ctx) -> list[NextAction]:
    """The smallest high-signal actions, cheapest first within the main outcome: the fix for the
    diagnosed failure (:func:`_fix_actions`, then the primary detector's remedies and the
    outcome's actions, :func:`_outcome_actions`), the best checkpoint, a tag for a healthy
    reference, what to attach when the cause is open (:func:`_inconclusive_action`), then what to
    log next time; at most 8."""
    p = d.primary
    acts = _fix_actions(d, c, p)
    at_chance = c.get("GE004", Severity.WARNING)
    for a, why, cost in _outcome_actions(d, c, p, at_chance is not None):
        acts.append(NextAction(action=a, why=why, cost=cost))
    later: list[NextAction] = []  # after the fix for the diagnosed failure, before what to log next
    best = _best_checkpoint_action(d, c, at_chance is not None)
    if best is not None:
        (later if d.outcome is Outcome.DIVERGED else acts).append(best)
    # a crash before any metric was logged: what the next run should log is not yet the question
    instrument = [] if d.outcome is Outcome.CRASHED and not _trained(c) else _instrument_actions(c)
    if _crashed_in_first_epoch(d, c):
        instrument = []  # the fix comes first, and the run never reached what the signals would show
    elif framework_files(c.run) is not None:
        instrument = [a for a in instrument if not a.action.startswith(_LOG_VAL)]
    # a tag is only possible on a tracker's run (the baseline finders read it there); a local
    # file (CSV, console log, trainer_state, event files) has none
    taggable = c.run.identity.tracker in ("mlflow", "wandb", "clearml")
    if d.cause is Cause.HEALTHY and not acts and not instrument and taggable:
        acts.append(
            NextAction(
                action="Tag this run mlaudit.baseline=true so that later runs of the same "
                "config are judged against it (noise band from several seeds)",
                why="a healthy reference makes the next regression audit decisive",
                cost="minutes",
            )
        )
    first = _inconclusive_action(d, c)
    if first is not None:
        acts.insert(0, first)
    order = {"minutes": 0, "hours": 1, "days": 2}
    # the fix for the diagnosed failure first (cheapest first within it), then what to log next time
    return (
        sorted(acts, key=lambda a: order[a.cost])
        + later
        + sorted(instrument, key=lambda a: order[a.cost])
    )[:8]


def _fix_actions(d: _Decision, c: _Ctx, p: Finding | None) -> list[NextAction]:
    """The first actions for the diagnosed failure: a NaN from numerics (the precision setting when
    reduced precision is in use, then the batch at the onset); a crash (the primary detector's
    crash remedy, a host-memory allocation to shrink, else the raising frame to reproduce); a
    correctness bug (the primary detector's correctness remedies)."""
    acts: list[NextAction] = []
    if d.outcome is Outcome.DIVERGED and d.cause is Cause.DATA_CONFIG:
        if c.precision:  # a precision cause is only named with precision evidence
            acts.append(
                NextAction(
                    action="Check the precision setting first: train in bf16/fp32 or enable "
                    "mixed precision with dynamic loss scaling (pure fp16 has no master "
                    "weights or loss scaling)",
                    why="an abrupt NaN with no loss growth is numerics, not the learning rate; "
                    "reduced precision is in use (" + c.precision[0][:100] + ")",
                    cost="minutes",
                )
            )
        acts.append(
            NextAction(
                action="Replay the batch at the onset step and check inputs/labels for "
                "NaN or extreme values",
                why="rules out a bad batch",
                cost="minutes",
            )
        )
    elif d.outcome is Outcome.CRASHED and p is not None:
        acts.append(_crash_action(p, trained=_trained(c)))
    elif (
        d.cause is Cause.CORRECTNESS_BUG
        and p is not None
        and (det := registry().get(p.code)) is not None
        and det.correctness_remedies
    ):
        acts += [
            NextAction(action=r.action, why=r.why, cost=r.cost) for r in det.correctness_remedies
        ]
    return acts


#: A TypeError of a constructor call (CPython's wording): ``Trainer.__init__() got an unexpected keyword
#: argument 'max_epoch'``, ``__init__() missing 1 required positional argument``.
_CONSTRUCTOR_CALL = re.compile(
    r"__init__\(\) (?:got an unexpected keyword|got multiple values|missing \d+ required|takes \d+)"
)
#: The size of a failed allocation in an exception message: PyTorch's "you tried to allocate
#: 475636432896 bytes", NumPy's "Unable to allocate 3.2 GiB", CUDA's "Tried to allocate 2.00 GiB".
_ALLOC_SIZE = re.compile(
    r"allocate (\d+(?:\.\d+)?)\s*(bytes|B|KiB|MiB|GiB|TiB|KB|MB|GB|TB)\b", re.IGNORECASE
)
_UNIT: dict[str, float] = {"b": 1, "bytes": 1, "kib": 2**10, "mib": 2**20, "gib": 2**30}
_UNIT.update({"tib": 2**40, "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12})


def _asked_bytes(text: str) -> float | None:
    """The bytes a failed allocation asked for (:data:`_ALLOC_SIZE`), or ``None``."""
    m = _ALLOC_SIZE.search(text)
    return float(m[1]) * _UNIT[m[2].lower()] if m else None


def _human_bytes(n: float) -> str:
    """``n`` bytes in decimal units (``476 GB``, ``3.44 MB``), 3 significant digits."""
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n:.0f} bytes"


def _crash_action(p: Finding, trained: bool = True) -> NextAction:
    """The first action of a crash on ``p``: its detector's crash remedy; for a host-memory
    exception, shrink the allocation where the traceback names it; else reproduce the failure at
    the raising frame."""
    cr = _crash_remedy(p)
    if cr is not None:
        return NextAction(action=cr.action, why=cr.why, cost="minutes")
    if p.facts.get("exception_rule") == "host-memory":
        f_, l_ = (
            (p.facts["user_file"], p.facts.get("user_line"))
            if p.facts.get("user_file")
            else (p.facts.get("raising_file") or "the raising frame", p.facts.get("raising_line"))
        )
        where = f"{f_}:{l_ or ''}"
        asked = _asked_bytes(p.message)
        size = f"{_human_bytes(asked)} asked" if asked else "the size in the message"
        return NextAction(
            action=f"Shrink what is allocated at {where} ({size}): load or "
            "process the data in chunks, a smaller batch or fewer DataLoader workers, "
            "float32 instead of float64; or give the job more host RAM"
            + (
                f" if {_human_bytes(asked)} is the size meant (an allocation far beyond the data's "
                "size comes from a wrong shape)"
                if asked
                else ""
            ),
            why="the host (CPU) memory could not hold the allocation; replaying it fails the "
            "same way",
            cost="minutes",
        )
    raising = p.facts.get("raising_file")
    at = (
        frame_text((raising, p.facts.get("raising_line") or 0, p.facts.get("raising_func") or ""))
        if raising == GRAPH_OP
        else f"{raising or 'the raising frame'}:{p.facts.get('raising_line') or ''}"
    )
    user = p.facts.get("user_file")
    if (
        user
        and raising
        and raising != GRAPH_OP
        and raising != user
        and is_library_frame(str(raising))
    ):
        # the library frame that raised is not the code to change: the user's innermost frame
        # that called into it is
        lib = str(raising).replace("\\", "/")
        short = lib[m.end() :] if (m := _SITE.search(lib)) else lib.rsplit("/", 1)[-1]
        at = (
            f"{user}:{p.facts.get('user_line') or ''} (your code's innermost frame; it raised in "
            f"{short}:{p.facts.get('raising_line') or ''}"
            + (f" {p.facts['raising_func']}" if p.facts.get("raising_func") else "")
            + ")"
        )
    if _CONSTRUCTOR_CALL.search(p.message):
        # an object's constructor refused its arguments: no batch is involved, the call is the fix
        return NextAction(
            action=f"Fix the call at {at}: the constructor refused its arguments (check each keyword "
            "against the installed version's signature)",
            why="the exception names a constructor's arguments, raised before any batch",
            cost="minutes",
        )
    if not trained:
        # the console opens with the traceback: it happened before the training loop printed anything
        return NextAction(
            action=f"Fix the call at {at}: the console opens with its traceback, before any "
            "training step (its arguments, the config, the data it reads, the package version)",
            why="the traceback names the failing code and nothing ran before it",
            cost="minutes",
        )
    return NextAction(
        action=f"Reproduce the failure at {at} on one batch",
        why="the traceback names the failing code",
        cost="minutes",
    )


#: Where an installed package's path starts (its module path follows).
_SITE = re.compile(r".*(?:site-packages|dist-packages)/")


def _lr_advice(
    d: _Decision, c: _Ctx, generic: list[tuple[str, str, str]]
) -> list[tuple[str, str, str]]:
    """The outcome's generic actions with the learning-rate advice settled: no raise (and why) when
    :func:`_no_lr_raise` forbids it, else the raise said from what the run logged
    (:func:`_lr_raise_action`)."""
    if d.outcome in (Outcome.UNDERFIT, Outcome.PLATEAUED) and _no_lr_raise(c):
        generic = [
            (a, w, k)
            for a, w, k in generic
            if "higher LR" not in a and "Raise the learning rate" not in a
        ]
        generic.append(
            (
                "Do not raise the learning rate: "
                + _no_lr_raise(c)
                + "; check the data and labels, "
                "the loss, and lower the LR or add warmup if the start is unstable",
                "a higher LR would make an unstable or already-high-LR run worse",
                "hours",
            )
        )
    return [_lr_raise_action(c) if a == _RAISE_LR else (a, w, k) for a, w, k in generic]


def _outcome_actions(
    d: _Decision, c: _Ctx, p: Finding | None, at_chance: bool
) -> list[tuple[str, str, str]]:
    """The primary detector's remedies, then the outcome's generic actions (none when the primary
    finding replaces them): for an unstable run the LR advice, for a diverged one the restart,
    for an underfit or plateaued one no "raise the LR" when that would be wrong; minus those the
    primary finding makes redundant, and minus keeping a checkpoint that never beat chance."""
    replaced = (
        p is not None and (pd := registry().get(p.code)) is not None and pd.replaces_outcome_actions
    )
    generic = [] if replaced else list(_ACTIONS.get(d.outcome, []))
    if d.outcome is Outcome.UNSTABLE and generic:
        generic = [_unstable_action(c)]
    if d.outcome is Outcome.DIVERGED and not replaced:
        generic.append(_divergence_action(c))
    if d.rule == "V19m":  # the solver stopped at its iteration cap while the loss still fell
        generic.insert(
            0,
            (
                "Raise max_iter (the iteration cap the library reached) and rerun until the solver's "
                "own tolerance stops it",
                "the library states its solver stopped before converging while the loss still fell",
                "minutes",
            ),
        )
    generic = _lr_advice(d, c, generic)
    primary = _remedies_of(p) if p is not None else []
    if p is not None and (omit := detector_for(p.code).omits_outcome_actions(p)):
        generic = [(a, w, k) for a, w, k in generic if not a.startswith(omit)]
    if tree_ensemble(c.run) is not None:
        primary, generic = _for_tree_ensemble(d, c, primary, generic, replaced)
    if not _checkpoint_worth_keeping(d, c, at_chance):
        # no checkpoint of a run whose held-out metric never beat chance or its first evaluation
        generic = [g for g in generic if not g[0].startswith(_KEEP_BEST)]
        primary = [g for g in primary if not g[0].startswith(_KEEP_BEST)]
    return primary + generic


def _for_tree_ensemble(
    d: _Decision,
    c: _Ctx,
    primary: list[tuple[str, str, str]],
    generic: list[tuple[str, str, str]],
    replaced: bool,
) -> tuple[list[tuple[str, str, str]], list[tuple[str, str, str]]]:
    """The actions of a tree ensemble: its own outcome actions (:data:`_TREE_ACTIONS`, minus the LR
    raise when :func:`_no_lr_raise` forbids it) replace the generic ones, and the detector remedies
    about gradient descent on weights (:data:`~mlaudit_core.model_family.DL_ONLY_ADVICE`) go."""
    lr_raise_denied = d.outcome in (Outcome.UNDERFIT, Outcome.PLATEAUED) and _no_lr_raise(c)
    tree = [
        t
        for t in _TREE_ACTIONS.get(d.outcome, [])
        if not (lr_raise_denied and t[0].startswith("Raise the learning rate"))
    ]
    generic = [] if replaced else tree + [g for g in generic if g[0].startswith("Do not raise")]
    return [r for r in primary if not DL_ONLY_ADVICE.search(r[0])], generic


def held_out_improved(c: _Ctx, key: str | None = None) -> bool:
    """Whether a checkpoint of the run can be worth keeping: the held-out metric ``key`` (default:
    the GE003 finding's key, else the held-out loss) reached its best at a later evaluation than the
    first and that best is finite and better than the first value. A best at the first evaluation
    (an overfit from the start, a loss that grew from the first epoch) means no checkpoint of the
    run beats the model as it was at its first evaluation; without a held-out series: ``True``
    (nothing contradicts keeping one)."""
    if key is None:
        g = c.get("GE003")
        key = str(g.facts["key"]) if g is not None and g.facts.get("key") else None
    key = key or c.run.key_for(Role.VAL_LOSS)
    if not key or key not in c.run.metrics:
        return True
    v = c.run.metrics.series(key).by_step().finite().values
    if len(v) < 2:
        return True
    higher = is_higher_better(key)
    ib = int(np.argmax(v)) if higher else int(np.argmin(v))
    return ib > 0 and bool(v[ib] > v[0] if higher else v[ib] < v[0])


def _checkpoint_worth_keeping(d: _Decision, c: _Ctx, at_chance: bool) -> bool:
    """A checkpoint is recommended only when the report does not deny one exists: the held-out
    metric never beat chance (GE004), did not improve after its first evaluation
    (:func:`held_out_improved`), the training loss sits at chance or fell only by memorising labels that
    do not generalise (GE002 ``at_chance`` / ``labels_suspect``), or the loss diverged before any checkpoint taken while it was
    finite and improving could exist (:func:`blowup`, whose action then says "restart from
    scratch")."""
    if at_chance or not held_out_improved(c):
        return False
    g = c.get("GE002", Severity.ERROR)
    if g is not None and (g.facts.get("labels_suspect") or g.facts.get("at_chance")):
        # a model memorising labels that do not generalise, or at chance: no checkpoint of it is worth keeping
        return False
    if d.outcome is Outcome.DIVERGED:
        b = blowup(c.run)
        if b is not None and not b.good_checkpoint:
            return False
    return True


#: How the actions that keep the best checkpoint (or the best round) begin.
_KEEP_BEST = ("Keep the checkpoint", "Keep the best checkpoint", "Keep the model at the best round")


def _best_checkpoint_action(d: _Decision, c: _Ctx, at_chance: bool) -> NextAction | None:
    """Use the best checkpoint when the final one is worse (GE003), unless the run overfit (its
    own actions say so) or no checkpoint is worth keeping (:func:`_checkpoint_worth_keeping`)."""
    if not (
        c.get("GE003", Severity.WARNING)
        and d.outcome is not Outcome.OVERFIT
        and _checkpoint_worth_keeping(d, c, at_chance)
    ):
        return None
    f = c.get("GE003")
    assert f is not None  # a GE003 of at least warning severity exists
    # the run's own record of saved checkpoints (:func:`_checkpoint_recorded`): without one, the
    # action says a checkpoint at that step is needed, not that the run has one
    recorded = _checkpoint_recorded(c.run, blowup(c.run))
    files = _saved_weights(c.run)
    where = (
        " if one was saved there (this run records no checkpoint)"
        if not recorded
        else f" if one was saved there (the run's folder holds {', '.join(files[:3])}"
        + (f" and {len(files) - 3} more" if len(files) > 3 else "")
        + ")"
        if files
        else ""
    )
    return NextAction(
        action=f"Use the checkpoint at step {f.facts['best_step']} (best {f.facts['key']}){where}",
        why="the final checkpoint is worse than the best",
        cost="minutes",
    )


def _trained(c: _Ctx) -> bool:
    """Whether anything ran before the crash: the run logged a metric point, or its console holds
    a line before its first traceback (an epoch header, a progress bar, a library's start-up
    lines). ``False`` for a console that opens with the traceback and a run without metrics:
    the exception came before the training loop printed anything."""
    if any(len(c.run.metrics.series(k)) for k in c.run.metrics.keys):
        return True
    if not c.run.console:
        return True  # nothing says what ran before the crash
    for line in c.run.console:
        if line.text.startswith("Traceback (most recent call last)"):
            return False
        if line.text.strip():
            return True
    return True


#: How MI001's action to log a held-out metric begins; not advised on a console of a framework that
#: writes its logged metrics to files of its own (:func:`~mlaudit_core.verdict.evidence.framework_files`:
#: Lightning's ``self.log`` values go to ``lightning_logs/version_N``, its progress bar shows the last
#: ones only).
_LOG_VAL = "Log val loss"


def _crashed_in_first_epoch(d: _Decision, c: _Ctx) -> bool:
    """Whether the run crashed before the end of its first epoch (an epoch counter below 1, or none: a
    crash at step 2, in a constructor): no evaluation was due yet, so a missing held-out series or step
    time says nothing about what the run logs, and what to log next time is not the question."""
    if d.outcome is not Outcome.CRASHED:
        return False
    ek = c.run.key_for(Role.EPOCH)
    e = c.run.series(ek).finite().values if ek else np.array([])
    return not (e.size and float(e.max()) >= 1)


def _instrument_actions(c: _Ctx) -> list[NextAction]:
    """What to log in the next run (missing instrumentation, MI001 / MI004): useful next time,
    never ahead of the fix; a signal logged as NaN/inf only is the run's problem, not logging's."""
    tree = tree_ensemble(c.run) is not None
    return [
        NextAction(action=r.action, why=r.why, cost=r.cost)
        for f in c.by_code.get("MI001", []) + c.by_code.get("MI004", [])
        for r in detector_for(f.code).remedies_for(f)
        if not (tree and DL_ONLY_ADVICE.search(r.action))
    ]


def _inconclusive_action(d: _Decision, c: _Ctx) -> NextAction | None:
    """With the cause open, what would decide it, first: the scheduler's or kernel's record of a
    crash with no traceback (V17), the console log of a run judged on curves only, or the
    missing console and metrics of a run that could not be judged."""
    if d.cause is not Cause.INCONCLUSIVE:
        return None
    if d.outcome is Outcome.CRASHED and c.run.console and d.rule == "V17":
        if c.ending.interrupt_kind in ("sigint", "sigterm"):
            # the console names the signal: no kernel-log hunt for a silent SIGKILL
            return NextAction(
                action="Find who sent the "
                + ("Ctrl-C (SIGINT)" if c.ending.interrupt_kind == "sigint" else "SIGTERM")
                + " the console names (the shell history; a scheduler's time limit or preemption: "
                "sacct -j JOB); if the stop was not intended, resume from the last checkpoint",
                why="the console shows the interrupt ("
                + (c.ending.interrupt or "").strip()[:100]
                + "), so the process was stopped from outside, not by an error",
                cost="minutes",
            )
        return NextAction(
            action="Look up how the job ended outside the process: the scheduler's "
            "record (sacct -j JOB, the exit code or signal) or the kernel log "
            "(dmesg: 'Out of memory: Killed process')",
            why="the console stops mid-run without a traceback, which is what a "
            "SIGKILL or a default-handled SIGTERM leaves",
            cost="minutes",
        )
    if c.basis.judgeable and not c.run.console:
        return NextAction(
            action="Attach the job's console log (stdout and stderr) to the run, or "
            "pass it with mlaudit logs",
            why="the curves do not say why the run ended; a traceback, an OOM-killer "
            "or a scheduler line would",
            cost="minutes",
        )
    if not c.basis.judgeable:
        return NextAction(
            action="Attach the console log and the loss/validation metrics to the run",
            why="the verdict is blocked on missing data",
            cost="minutes",
        )
    return None
