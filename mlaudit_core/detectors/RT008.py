"""RT008 disk-full."""

from __future__ import annotations

from ..report import Cause, FactEvidence, Finding, Hypothesis, Outcome, Severity
from ..signatures import frame_text
from ._console import ConsoleSignatureDetector
from ._knowledge import hyp, on_crash
from .base import Remedy


class DiskFull(ConsoleSignatureDetector, code="RT008", name="disk-full", family="runtime"):
    """The run failed writing to a full disk or an exhausted quota, or writing or reading a checkpoint.

    Why it matters: the run stopped for a storage reason, not a modelling one;
    usually while saving a checkpoint (which may now be truncated and unloadable)
    or writing logs/caches.
    Evidence: the ``No space left on device`` / quota line with the path when
    printed, and the code path (checkpoint, training, evaluation) of the traceback
    it belongs to; without such a line, a checkpoint write that failed part-way
    (``PytorchStreamWriter failed writing file``, ``unexpected pos``) or a checkpoint
    that cannot be read (``failed finding central directory``: a truncated file).
    Remedy: free space or point the output at a larger volume; keep fewer
    checkpoints (``save_total_limit``, ``save_top_k``); verify that the last
    checkpoint loads before resuming from it.
    Thresholds: none; any disk-full message is reported.
    """

    implies = "crashed"
    supersedable_crash = True

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """A crash on it: storage (supported); the last checkpoint may be truncated (open)."""
        return on_crash(
            finding,
            outcome,
            "the disk or quota ran out while writing",
            Cause.INFRA_RUNTIME,
            "df -h / the quota of the output path; count the checkpoints kept",
            hyp(
                "the last checkpoint is truncated and cannot be resumed from",
                "open",
                Cause.INFRA_RUNTIME,
                "load the last checkpoint in a fresh process before resuming from it",
            ),
        )

    crash_remedy = Remedy(
        "Free or enlarge the output volume, keep fewer checkpoints, and check that the last checkpoint loads before resuming",
        "the run stopped on a full disk; a checkpoint cut short will not load",
    )

    categories = ("disk_full", "checkpoint_failed")

    def check(self, run, p):
        hits, tbs = self.hits(run)
        if not hits:
            return
        full = [x for x in hits if x.signature.category == "disk_full"]
        h = (full or hits)[0]
        path = h.figures.get("path")
        tb = self.traceback_near(tbs, h.line.lineno, h.line.source)
        code_path = tb.code_path if tb else "unknown"
        frame = tb.user_frame if tb else None
        if full:
            msg = (
                "the disk filled up (no space left on device"
                + (f" writing {path}" if path else "")
                + ")"
            )
        else:
            msg = f"a checkpoint could not be written or read ({h.signature.description})"
        if code_path != "unknown":
            msg += f" in the {code_path} code path"
        if frame:
            msg += f", raised under {frame_text(frame)}"
        if code_path == "checkpoint" and full:
            msg += "; the checkpoint being written is likely truncated"
        ev = [self.log_evidence(h.line)]
        if frame:
            ev.append(
                FactEvidence(
                    text=f"frame {frame_text(frame)}",
                    values={"code_path": code_path},
                )
            )
        yield self.finding(
            Severity.CRITICAL,
            msg,
            evidence=ev,
            path=path,
            code_path=code_path,
            lineno=h.line.lineno,
            n_hits=len(hits),
            signature=h.signature.id,
        )
