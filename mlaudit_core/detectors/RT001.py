"""RT001 out-of-memory."""

from __future__ import annotations

from ..report import Cause, FactEvidence, Finding, Hypothesis, Outcome, Severity
from ..signal import clip, fmt
from ..signatures import frame_text, to_gib
from ._console import ConsoleSignatureDetector
from .base import Remedy


class OutOfMemory(ConsoleSignatureDetector, code="RT001", name="out-of-memory", family="runtime"):
    """The run hit an out-of-memory error (CUDA allocator, XLA, or the host OOM killer).

    Why it matters: the run crashed for a resource reason, not a modelling one; where
    it ran out decides the fix. An OOM raised in evaluation is a peak in the
    evaluation code (large score matrices, no ``torch.no_grad``), not a leak in the
    training loop.
    Evidence: the error line with the allocator's figures (requested, total
    capacity, already allocated, free, reserved; GiB) and the code path of the
    raising frame (training, evaluation, checkpoint) from the traceback.
    Remedy: training path: smaller micro-batch, activation checkpointing, shorter
    sequences; evaluation path: chunk the computation, smaller eval batch, no
    gradients, or evaluate on CPU.
    Thresholds: none; any OOM message is reported. An OOM the framework recovered from (the next
    memory line in the same source is its recovery message: fairseq "attempting to recover from
    OOM", "retrying batch") is a warning, not a crash; Ultralytics' "out of memory with batch=N.
    Reducing to batch=M" carries no allocator message and is not an OOM hit at all.
    """

    implies = "crashed"
    supersedable_crash = True
    memory_end_rank = 0
    out_of_memory = True

    #: Its finding is a point of the report's timeline under this name.
    timeline_event = "out of memory"

    categories = ("oom", "oom_recovered")

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """A crash on it: the code path's peak memory (supported) and a leak in the training loop
        (rejected when the allocation failed in evaluation code)."""
        if outcome is not Outcome.CRASHED:
            return None
        path = finding.facts.get("code_path")
        return [
            Hypothesis(
                statement=f"peak memory of the {path or 'failing'} code path exceeds the device",
                status="supported",
                cause=Cause.INFRA_RUNTIME,
                evidence_for=[clip(finding.message)],
                discriminating_test="rerun that path alone with half the batch; "
                "record torch.cuda.max_memory_allocated()",
            ),
            Hypothesis(
                statement="a memory leak in the training loop",
                status="rejected" if path == "evaluation" else "open",
                cause=Cause.CORRECTNESS_BUG,
                evidence_against=[
                    "the allocation failed in evaluation code, not in a training step"
                ]
                if path == "evaluation"
                else [],
                discriminating_test="log allocated memory per training step; a leak grows steadily",
            ),
        ]

    @classmethod
    def crash_remedy_for(cls, finding: Finding) -> Remedy | None:
        """Where the allocation failed decides the fix: the evaluation path or the training step."""
        if finding.facts.get("code_path") == "evaluation":
            return Remedy(
                "Reduce evaluation peak memory: chunk the scoring, use a smaller eval batch, run "
                "under torch.no_grad(), or evaluate on CPU",
                "the allocation failed in the evaluation path",
            )
        return Remedy(
            "Halve the micro-batch (keep the global batch with gradient accumulation) or enable "
            "activation checkpointing",
            "the training step exceeds device memory",
        )

    def check(self, run, p):
        every, tbs = self.hits(run)
        hits = [x for x in every if x.signature.category == "oom"]
        if not hits:
            return
        recovered = [x for x in hits if self._recovered(x, every)]
        crashed = [x for x in hits if x not in recovered]
        if not crashed:
            r = recovered[0]
            yield self.finding(
                Severity.WARNING,
                f"out of memory {len(recovered)} time(s), each followed by the framework's recovery "
                f"(first at {r.line.source}:{r.line.lineno}): the batch was skipped or retried, the "
                "run went on",
                evidence=[self.log_evidence(x.line) for x in recovered[:3]],
                signature=r.signature.id,
                recovered=True,
                n_hits=len(recovered),
            )
            return
        hits = crashed
        h = hits[0]
        f = h.figures
        gib = {
            k: to_gib(f.get(k), f.get(f"{k}_unit"))
            for k in ("requested", "total", "allocated", "free", "reserved")
        }
        tb = self.traceback_near(tbs, h.line.lineno, h.line.source)
        path = tb.code_path if tb else "unknown"
        parts = [f"{k} {fmt(v, 3)} GiB" for k, v in gib.items() if v is not None]
        where = f" in the {path} code path" if path != "unknown" else ""
        frame = tb.raising_frame if tb else None
        msg = (
            f"out of memory{where} ({h.signature.id}"
            + (": " + ", ".join(parts) if parts else "")
            + ")"
        )
        if frame:
            msg += f", raised at {frame_text(frame)}"
        ev = [self.log_evidence(h.line)]
        if frame:
            ev.append(
                FactEvidence(
                    text=f"raising frame {frame_text(frame)}",
                    values={"code_path": path},
                )
            )
        yield self.finding(
            Severity.CRITICAL,
            msg,
            evidence=ev,
            signature=h.signature.id,
            code_path=path,
            lineno=h.line.lineno,
            n_hits=len(hits),
            **{f"{k}_gib": v for k, v in gib.items()},
        )

    @staticmethod
    def _recovered(h, every) -> bool:
        """Whether the next memory line after ``h`` in its source is a recovery message."""
        later = [
            x for x in every if x.line.source == h.line.source and x.line.lineno > h.line.lineno
        ]
        return bool(later) and later[0].signature.category == "oom_recovered"
