"""RT009 nonfinite-message."""

from __future__ import annotations

from ..report import Cause, Finding, Hypothesis, Outcome, SeriesEvidence, Severity
from ._console import ConsoleSignatureDetector
from ._knowledge import hyp, said
from .base import Remedy

#: The series the console parser writes for Megatron's 'number of nan iterations' (formats.py).
NAN_ITERATIONS_KEY = "train/nan_iterations"


class NonFiniteMessage(
    ConsoleSignatureDetector, code="RT009", name="nonfinite-message", family="runtime"
):
    """The framework printed that the loss or the gradients became NaN/inf.

    Why it matters: a NaN message is often the only trace of a numerical failure
    when the loss history was not logged (or was logged too sparsely to hold the
    NaN); with the history, it confirms the onset.
    Evidence: the first such line (``Loss is nan, stopping training``, ``NaN or
    Inf found in input tensor``, anomaly-mode ``returned nan values``, a monitored
    metric that ``is not finite``) and how many there are.
    Remedy: as for non-finite values (LI001): with loss growth before, the learning
    rate; with an abrupt onset, the precision mode, loss scaling or the batch.
    Megatron-LM counts them instead of printing them: its iteration line's ``number of nan
    iterations: N |`` (megatron/training/training.py ``training_log``; parsed into
    ``train/nan_iterations``) above 0 is the same report.
    Thresholds: none. fp16 ``Gradient overflow`` messages are not counted here:
    they are the loss scaler working (RT006).
    """

    #: A non-finite symptom (``Detector.nonfinite_rank``), asked third.
    nonfinite_rank = 3

    implies = "diverged"

    remedies = (
        Remedy(
            "Log the training loss (and the grad norm) every step around the first NaN message",
            "a loss that grew before the NaN points at the learning rate; a finite, flat one at precision "
            "or a bad batch",
            "minutes",
        ),
    )

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """The framework's NaN report, without the loss history: the learning rate and numerics stay
        open until the history says which onset it was."""
        if outcome in (Outcome.SUCCEEDED, Outcome.UNKNOWN):
            return None
        return [
            hyp(
                "learning rate too high (the loss grew before it overflowed)",
                "open",
                Cause.MODEL_CONVERGENCE,
                "the loss history before the first NaN message: growth means the LR",
                for_=said(finding),
            ),
            hyp(
                "a numerical failure: precision mode, loss scaling or a bad batch",
                "open",
                Cause.DATA_CONFIG,
                "rerun from before the onset in fp32/bf16 and replay the batch at the onset",
            ),
        ]

    categories = ("nan",)

    def check(self, run, p):
        hits, _ = self.hits(run)
        if not hits:
            yield from self._counted(run)
            return
        h = hits[0]
        yield self.finding(
            Severity.ERROR,
            f'the framework reported non-finite values: "{h.line.text.strip()[:160]}" '
            f"({h.line.source}:{h.line.lineno}; {len(hits)} such line(s))",
            evidence=[self.log_evidence(x.line) for x in hits[:3]],
            lineno=h.line.lineno,
            n_hits=len(hits),
        )

    def _counted(self, run):
        """Megatron's per-interval count of iterations with a NaN/inf loss (``train/nan_iterations``)."""
        if NAN_ITERATIONS_KEY not in run.metrics:
            return
        s = run.metrics.series(NAN_ITERATIONS_KEY).by_step().finite()
        bad = s.values > 0
        if not bad.any():
            return
        n, first = int(s.values[bad].sum()), int(s.steps[bad][0])
        yield self.finding(
            Severity.ERROR,
            f"the framework counted {n} iteration(s) with a NaN/inf loss (Megatron 'number of nan "
            f"iterations'), the first in the interval logged at step {first}",
            evidence=[
                SeriesEvidence(
                    metric=NAN_ITERATIONS_KEY,
                    step_start=first,
                    step_end=int(s.steps[bad][-1]),
                    values={"nan_iterations": n},
                )
            ],
            n_nan_iterations=n,
            first_step=first,
        )
