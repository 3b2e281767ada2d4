"""RT007 hardware-error."""

from __future__ import annotations

from ..report import Cause, FactEvidence, Finding, Hypothesis, Outcome, Severity
from ..signatures import scan_run, xid_is_hardware
from ._console import ConsoleSignatureDetector
from ._knowledge import hyp, on_crash
from .base import Remedy

#: A few Xid meanings, from NVIDIA's "Xid Errors" reference (docs.nvidia.com/deploy/xid-errors).
XID_MEANING = {
    13: "graphics engine exception",
    31: "GPU memory page fault",
    43: "GPU stopped processing",
    45: "preemptive cleanup",
    48: "double-bit ECC error",
    61: "internal micro-controller breakpoint",
    62: "internal micro-controller halt",
    63: "ECC page retirement / row remapping",
    64: "ECC page retirement / row remapping failure",
    74: "NVLink error",
    79: "GPU has fallen off the bus",
    92: "high single-bit ECC error rate",
    94: "contained ECC error",
    95: "uncontained ECC error",
    119: "GSP RPC timeout",
    120: "GSP error",
    140: "unrecovered ECC error",
}

#: Failures that a hardware fault explains when they come after it.
_CONSEQUENCES = ("oom", "cuda_error", "collective_timeout", "device_assert", "nan")


class HardwareError(
    ConsoleSignatureDetector, code="RT007", name="hardware-error", family="runtime"
):
    """The console shows an accelerator hardware or driver fault (Xid, ECC, GPU lost).

    Why it matters: a GPU that faults makes every later error on that node
    unreliable: an out-of-memory, an illegal memory access or a NaN right after a
    hardware fault is a symptom of the fault, not a bug in the model or a batch
    size problem. The node, not the run, needs attention.
    Evidence: the first hardware line with its Xid code and documented meaning,
    and the failures that came after it in the same source (with line numbers).
    Remedy: drain the node and rerun elsewhere; check ``nvidia-smi -q -d ECC,
    PAGE_RETIREMENT,ROW_REMAPPER`` and the kernel log for Xid events; report it to
    the cluster operators.
    Thresholds: Xid codes NVIDIA documents as hardware/driver-memory faults (48,
    61-64, 74, 79, 92, 94, 95, 119, 120, 140), ECC errors and a lost GPU are
    critical; other Xids (13, 31, 43 ... usually raised by the application) are
    warnings.
    """

    implies = "crashed"
    supersedable_crash = True

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """A crash on it: the node's hardware (supported); the errors after it are symptoms."""
        return on_crash(
            finding,
            outcome,
            "the accelerator or its driver faulted (Xid, ECC, a lost GPU)",
            Cause.INFRA_RUNTIME,
            "nvidia-smi -q -d ECC,PAGE_RETIREMENT on the node; rerun the same job on another node",
            hyp(
                "the errors after the fault (an OOM, an illegal memory access, a NaN) are the run's own",
                "rejected",
                Cause.CORRECTNESS_BUG,
                against=[
                    "they follow a hardware fault on the same node, which makes them its symptoms"
                ],
            ),
        )

    crash_remedy = Remedy(
        "Drain the node and rerun elsewhere; check `nvidia-smi -q -d ECC,PAGE_RETIREMENT` and the kernel log for Xid events",
        "errors after a hardware fault are its symptoms, not bugs in the run",
    )

    categories = ("hardware",)

    def check(self, run, p):
        hits, _ = self.hits(run)
        if not hits:
            return
        all_hits, _ = scan_run(run)
        first = hits[0]
        hardware = [
            h for h in hits if h.signature.id != "xid" or xid_is_hardware(h.figures.get("xid"))
        ]
        lead = hardware[0] if hardware else first
        xid = lead.figures.get("xid")
        what = lead.signature.description
        if xid:
            meaning = XID_MEANING.get(int(xid), "see NVIDIA's Xid reference")
            what = f"Xid {xid}, {meaning}"
        after = [
            h
            for h in all_hits
            if h.signature.category in _CONSEQUENCES
            and h.line.source == lead.line.source
            and h.line.lineno >= lead.line.lineno
        ]
        kind = "an accelerator hardware error" if hardware else "an accelerator driver event"
        msg = f"{kind} ({what}) at {lead.line.source}:{lead.line.lineno}"
        if after:
            a = after[0]
            msg += (
                f"; followed by {a.signature.id} at line {a.line.lineno}"
                + (f" and {len(after) - 1} more failure line(s)" if len(after) > 1 else "")
                + ": those are symptoms of the hardware fault"
            )
        ev = [self.log_evidence(lead.line)] + [self.log_evidence(h.line) for h in after[:2]]
        if xid:
            ev.append(
                FactEvidence(
                    text=f"Xid {xid}: {XID_MEANING.get(int(xid), 'unlisted')}",
                    values={"xid": int(xid), "hardware": bool(hardware)},
                )
            )
        yield self.finding(
            Severity.CRITICAL if hardware else Severity.WARNING,
            msg,
            evidence=ev,
            signature=lead.signature.id,
            xid=int(xid) if xid else None,
            hardware=bool(hardware),
            lineno=lead.line.lineno,
            source=lead.line.source,
            followed_by=[{"signature": h.signature.id, "line": h.line.lineno} for h in after[:10]],
            n_hits=len(hits),
        )
