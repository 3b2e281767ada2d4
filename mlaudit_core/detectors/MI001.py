"""MI001-MI004 missing instrumentation."""

from __future__ import annotations

import numpy as np

from ..report import Cause, FactEvidence, Finding, Hypothesis, Outcome, Severity
from ..roles import Role, lr_param_name
from ..roles import unplaced as _unplaced
from ._knowledge import hyp
from .base import Detector, DetectorParams, Remedy


class _MissingSignal(Detector):
    """Base for missing-instrumentation detectors: report when none of ``roles`` is logged."""

    roles: tuple[Role, ...] = ()
    would_tell: str = ""

    @classmethod
    def remedies_for(cls, finding: Finding) -> tuple[Remedy, ...]:
        """Log the missing signal in the next run (what it would tell is the finding's); nothing
        when the signal was logged with non-finite values only (LI001 judges those)."""
        if finding.facts.get("logged_nonfinite"):
            return ()
        return (
            Remedy(
                f"Log {finding.facts.get('signal')} in the next run",
                str(finding.facts.get("would_tell") or cls.would_tell),
                "minutes",
            ),
        )

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """What the missing signal leaves open: the question it would answer."""
        if finding.facts.get("logged_nonfinite"):
            return None
        return [
            hyp(
                f"cannot be told without {finding.facts.get('signal')}: "
                + str(finding.facts.get("would_tell") or cls.would_tell),
                "open",
                Cause.INCONCLUSIVE,
                f"log {finding.facts.get('signal')} in the next run",
            )
        ]

    class Params(DetectorParams):
        pass

    def check(self, run, p):
        if any(run.has(r) for r in self.roles):
            return
        names = " / ".join(r.value.replace("_", " ") for r in self.roles)
        # a key of the role logged with only NaN/inf values is not missing: it was logged non-finite
        # (a Keras validation_loss of inf was logged: "Log val loss in the next run" would be
        # wrong advice); LI001 judges the non-finite values themselves
        nonfinite = []
        for r in self.roles:
            k = run.key_for(r)
            if k is not None and len(run.metrics.series(k)):
                v = run.metrics.series(k).values
                kinds = sorted({"nan" if np.isnan(x) else "inf" if x > 0 else "-inf" for x in v})
                nonfinite.append(f"{k} ({len(v)} point(s), all {'/'.join(kinds)})")
        if nonfinite:
            yield self.finding(
                Severity.INFO,
                f"{names} logged but never finite: "
                + ", ".join(nonfinite)
                + "; nothing could be judged from it",
                evidence=[
                    FactEvidence(text="logged with non-finite values only: " + ", ".join(nonfinite))
                ],
                signal=names,
                would_tell=self.would_tell,
                logged_nonfinite=True,
            )
            return
        # training keys first: system telemetry (system.*, sys/...) would hide them in "+N more"
        keys = sorted(run.metrics.keys, key=lambda k: (k.lower().startswith(("system", "sys/")), k))
        shown = ", ".join(keys[:12]) + (f" (+{len(keys) - 12} more)" if len(keys) > 12 else "")
        # held-out series whose name says no measure mlaudit knows (``val_score``, ``eval/objective``):
        # named, so the user can map them in [tool.mlaudit.aliases]
        unplaced = _unplaced(run, heldout_only=True) if Role.VAL_LOSS in self.roles else []
        msg = f"no {names} logged: {self.would_tell}"
        if unplaced:
            shown_u = ", ".join(f"{k} ({_direction(run, k)})" for k in unplaced)
            msg += (
                f"; could not place {shown_u} (the name says no loss, accuracy, score or error mlaudit "
                "knows, and a direction over the run does not say which it is; map it in "
                "[tool.mlaudit.aliases])"
            )
        yield self.finding(
            Severity.INFO,
            msg,
            evidence=[
                FactEvidence(
                    text=f"no logged key's name reads as a {names}; logged: {shown or 'nothing'}"
                )
            ],
            signal=names,
            would_tell=self.would_tell,
            unplaced=unplaced,
        )


def _direction(run, key: str) -> str:
    """How a series moved over the run: the median of its first and last thirds."""
    v = run.metrics.series(key).by_step().finite().values
    third = max(1, v.size // 3)
    a, b = float(np.median(v[:third])), float(np.median(v[-third:]))
    word = "rose" if b > a else "fell" if b < a else "flat"
    return f"{word} {a:.4g} -> {b:.4g}"


class NoValidationMetric(
    _MissingSignal, code="MI001", name="no-validation-metric", family="instrumentation"
):
    """No validation loss or validation accuracy was logged.

    Why it matters: without held-out evaluation, overfitting, the best checkpoint
    and generalisation cannot be judged; a falling training loss alone proves little.
    Remedy: evaluate on a held-out split every N steps and log it.
    A validation key logged with NaN/inf values only is not missing: the finding then says it was
    logged but never finite (fact ``logged_nonfinite``), is not listed under missing
    instrumentation, and LI001 judges the non-finite values.
    """

    roles = (Role.VAL_LOSS, Role.VAL_ACCURACY)
    would_tell = "overfitting onset, best checkpoint and generalisation gap"


class NoLearningRate(
    _MissingSignal, code="MI002", name="no-learning-rate", family="instrumentation"
):
    """No learning-rate series was logged.

    Why it matters: warmup and schedule bugs, and the link between an instability
    and a schedule event, cannot be checked.
    Remedy: log the optimizer's current LR every step (``scheduler.get_last_lr()``).
    When a learning-rate param is logged (``learning_rate``, ``lr``, MLflow Keras'
    ``optimizer_learning_rate``), the signal reported missing is the learning-rate *series*.
    """

    roles = (Role.LEARNING_RATE,)
    would_tell = "warmup/schedule problems and whether an instability followed a schedule event"

    def check(self, run, p):
        # with the LR known from a param (HF ``learning_rate``, MLflow Keras ``optimizer_learning_rate``),
        # what is missing is the *series* (the schedule), not the learning rate
        param = next(((k, v) for k, v in run.params.items() if lr_param_name(k) is not None), None)
        for f in super().check(run, p):
            if param is not None and not f.facts.get("logged_nonfinite"):
                try:
                    shown = f"{float(str(param[1]).strip()):g}"
                except ValueError:
                    shown = str(param[1])[:40]
                f.message = (
                    f"no learning-rate series logged (param {param[0]}={shown} gives the "
                    f"configured value only): {self.would_tell}"
                )
                f.facts["signal"] = "learning-rate series"
            yield f


class NoGradNorm(_MissingSignal, code="MI003", name="no-grad-norm", family="instrumentation"):
    """No gradient-norm series was logged.

    Why it matters: exploding gradients, clipping frequency and the cause of loss
    spikes cannot be told apart.
    Remedy: log the global grad norm (the value ``clip_grad_norm_`` returns).
    """

    roles = (Role.GRAD_NORM,)
    would_tell = "exploding gradients, clipping frequency and the cause of spikes"


class NoThroughput(_MissingSignal, code="MI004", name="no-throughput", family="instrumentation"):
    """No throughput, step time or data time was logged.

    Why it matters: a slow run cannot be told from a slow input pipeline, and
    slow-downs over time are invisible.
    Remedy: log step time and data time per step (or samples/s).
    """

    roles = (Role.THROUGHPUT, Role.STEP_TIME, Role.DATA_TIME)
    would_tell = "input-bound vs compute-bound and slow-downs over time"
