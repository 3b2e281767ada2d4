"""RT009 nonfinite-message."""

from __future__ import annotations

from ..report import Severity
from ._console import ConsoleSignatureDetector


class NonFiniteMessage(ConsoleSignatureDetector, code="RT009", name="nonfinite-message", family="runtime"):
    """The framework printed that the loss or the gradients became NaN/inf.

    Why it matters: a NaN message is often the only trace of a numerical failure
    when the loss history was not logged (or was logged too sparsely to hold the
    NaN); with the history, it confirms the onset.
    Evidence: the first such line (``Loss is nan, stopping training``, ``NaN or
    Inf found in input tensor``, anomaly-mode ``returned nan values``, a monitored
    metric that ``is not finite``) and how many there are.
    Remedy: as for non-finite values (LI001): with loss growth before, the learning
    rate; with an abrupt onset, the precision mode, loss scaling or the batch.
    Thresholds: none. fp16 ``Gradient overflow`` messages are not counted here:
    they are the loss scaler working (RT006).
    """

    categories = ("nan",)

    def check(self, run, p):
        hits, _ = self.hits(run)
        if not hits:
            return
        h = hits[0]
        yield self.finding(Severity.ERROR,
                           f"the framework reported non-finite values: \"{h.line.text.strip()[:160]}\" "
                           f"({h.line.source}:{h.line.lineno}; {len(hits)} such line(s))",
                           evidence=[self.log_evidence(x.line) for x in hits[:3]],
                           lineno=h.line.lineno, n_hits=len(hits))
