"""Shared base for detectors that read failure signatures from console text."""

from __future__ import annotations

from ..report import LogEvidence
from ..signatures import SignatureHit, Traceback, scan_run
from .base import Detector, Skip


class ConsoleSignatureDetector(Detector):
    """Base: skips when no console text was captured; gives hits of its categories."""

    categories: tuple[str, ...] = ()

    def hits(self, run) -> tuple[list[SignatureHit], list[Traceback]]:
        if not run.console:
            raise Skip("no console output captured")
        hits, tbs = scan_run(run)
        return [h for h in hits if h.signature.category in self.categories], tbs

    @staticmethod
    def log_evidence(line) -> LogEvidence:
        return LogEvidence(source=line.source, line=line.lineno, text=line.text.strip()[:500])

    @staticmethod
    def traceback_near(tbs: list[Traceback], lineno: int, source: str) -> Traceback | None:
        """The traceback whose exception line is this line, or the last one before it (same source)."""
        best = None
        for tb in tbs:
            if tb.line.source == source and tb.line.lineno <= lineno + 1:
                best = tb
        return best
