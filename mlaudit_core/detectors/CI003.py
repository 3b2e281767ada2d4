"""CI003 ci-exact-match-drift."""

from __future__ import annotations

from ..ci.context import context_of, gate_evidence, recomputed, tol_text
from ..report import Cause, FactEvidence, Finding, Hypothesis, LogEvidence, Outcome, Severity
from ..signal import fmt
from ._knowledge import hyp, said
from .base import Detector, DetectorParams, Remedy


class ExactMatchDrift(Detector, code="CI003", name="ci-exact-match-drift", family="ci"):
    """An exact-match (deterministic) gate failed on values that agree within tolerance: numerical drift, not a regression.

    Why it matters: bit-exact golden values hold for one software/hardware
    stack. A new container image, library or GPU changes kernel choice and
    reduction order, so the last digits move while the training is the same.
    Failing such a gate says "the environment changed", not "the model got
    worse".
    Evidence: the metrics whose exact check failed, their max relative
    difference next to the tolerance check that passes (or the drift bound),
    and the environment changes seen in the logs (image, packages).
    Remedy: refresh the golden values on the new environment and keep the
    tolerance gate; treat the exact check as a reproducibility check tied to
    one image.
    Thresholds: with no tolerance check configured, values within
    ``drift_rel`` = 1e-3 relative count as drift (below bf16's resolution,
    2^-8 = 3.9e-3, and far above fp32 round-off).
    """

    remedies = (
        Remedy(
            "Refresh the golden values on the new environment and keep the tolerance gate",
            "the exact values hold for one software/hardware stack only",
            "minutes",
        ),
        Remedy(
            "Tie the exact check to one image: record the image digest with the golden file",
            "makes the exact check a reproducibility check of that image, not a model gate",
            "minutes",
        ),
    )

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """Drift (supported) against a regression (rejected: within tolerance)."""
        return [
            hyp(
                "numerical drift from a changed environment (kernels, reduction order)",
                "supported",
                Cause.INFRA_RUNTIME,
                "rerun the old code in the new image: it drifts the same way",
                for_=said(finding),
            ),
            hyp(
                "a model regression",
                "rejected",
                Cause.MODEL_CONVERGENCE,
                against=["the values agree within tolerance"],
            ),
        ]

    class Params(DetectorParams):
        drift_rel: float = 1e-3

    def check(self, run, p):
        ctx = context_of(run)
        if ctx is None:
            return
        rows, ev = [], []
        for r in recomputed(run):
            found = _exact_only_failure(r, p.drift_rel)
            if found is not None:
                rows.append(found[0])
                ev += found[1]
        if not rows:
            return
        envs = [e for e in ctx.env_changes]
        env_txt = ""
        if envs:
            e = envs[0]
            env_txt = f"; environment change: {e.name} {e.old or '?'} -> {e.new or '?'}"
            ev += [LogEvidence(source=x.source, line=x.line, text=x.text) for x in envs[:3]]
        figs = "; ".join(
            f"{x['metric']} max rel {fmt(x['max_rel'], 3)} ({x['basis']}, "
            f"{x['exact_steps_differ']} of {x['n_steps']} steps not bit-identical)"
            for x in rows
        )
        yield self.finding(
            Severity.WARNING,
            f"the exact-match check failed while the tolerance check passes ({figs}){env_txt}. Numerical drift "
            "from an environment change, not a model regression",
            evidence=ev or [FactEvidence(text=figs)],
            metrics=rows,
            env_changes=[
                {"name": e.name, "old": e.old, "new": e.new, "source": e.source, "line": e.line}
                for e in envs
            ],
        )


def _exact_only_failure(r, drift_rel: float) -> tuple[dict, list] | None:
    """A metric whose exact-match check fails while its tolerance check passes (or, with no
    tolerance check, whose largest relative difference is within ``drift_rel``): its row and
    the gates' evidence; None otherwise (a length mismatch is not this finding)."""
    exact = [
        c
        for c in r.active_checks
        if c.gate.kind in ("deterministic", "exact") and c.passed is False
    ]
    if not exact or r.length_mismatch:
        return None
    tol = [
        c
        for c in r.checks
        if c.gate.kind not in ("deterministic", "exact", "timing", "throughput", "threshold")
    ]
    tol_ok = [c for c in tol if c.passed]
    if tol and len(tol_ok) == len([c for c in tol if c.passed is not None]) and tol_ok:
        basis = f"{tol_text(tol_ok[0])} passes"
    elif not tol and r.max_rel <= drift_rel:
        basis = f"within the drift bound {drift_rel:g}"
    else:
        return None
    row = {
        "metric": r.metric,
        "max_rel": r.max_rel,
        "max_rel_step": r.max_rel_step,
        "tolerance": tol_text(tol_ok[0]) if tol_ok else None,
        "rtol": tol_ok[0].gate.rtol if tol_ok else None,
        "exact_steps_differ": exact[0].n_exceed,
        "n_steps": exact[0].n_steps,
        "basis": basis,
    }
    ev = [gate_evidence(exact[0].gate)] + ([gate_evidence(tol_ok[0].gate)] if tol_ok else [])
    return row, ev
