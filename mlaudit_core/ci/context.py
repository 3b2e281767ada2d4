"""Access to the CI evidence attached to a run, and the memoised recomputation."""

from __future__ import annotations

from ..rundata import RunData
from .model import CONTEXT, CIContext
from .recompute import Recompute, recompute

_RECOMPUTE = "mlaudit.ci.recompute"


def attach_context(run: RunData, ctx: CIContext) -> None:
    """Make ``ctx`` the CI evidence of ``run`` (the CI detectors read it)."""
    run.cache[CONTEXT] = ctx
    run.cache.pop(_RECOMPUTE, None)


def context_of(run: RunData) -> CIContext | None:
    return run.cache.get(CONTEXT)


def recomputed(run: RunData) -> list[Recompute]:
    """:func:`~.recompute.recompute` of the run's CI context, computed once per audit."""
    if _RECOMPUTE not in run.cache:
        ctx = context_of(run)
        run.cache[_RECOMPUTE] = recompute(ctx) if ctx is not None else []
    return run.cache[_RECOMPUTE]


def gate_evidence(g):
    """A gate as report evidence: file, line and the expression."""
    from ..report import CodeEvidence

    return CodeEvidence(path=g.path, line=g.line, text=g.expr)


def check_facts(c) -> dict:
    """A check outcome as plain figures for ``Finding.facts``."""
    g = c.gate
    return {
        "kind": g.kind,
        "path": g.path,
        "line": g.line,
        "expr": g.expr,
        "rtol": g.rtol,
        "atol": g.atol,
        "threshold": g.threshold,
        "op": g.op,
        "formula": g.formula,
        "passed": c.passed,
        "n_steps": c.n_steps,
        "n_exceed": c.n_exceed,
        "allowed": c.allowed,
        "worst_step": c.worst_step,
        "detail": c.detail,
        "active": c.active,
        "active_reason": c.active_reason,
        "log_failed": c.log_failed,
        "function": g.function,
        "index": g.index,
        "dtype": g.dtype,
        "tolerance_source": g.tolerance_source,
        "analysis": c.analysis,
    }


def tol_text(c) -> str:
    """``exact`` / ``rtol 0.05`` / ``atol 0.1`` / ``< 0.5`` for a check."""
    g = c.gate
    if g.kind in ("deterministic", "exact"):
        return "exact match"
    if g.kind in ("timing", "throughput", "threshold", "timeout"):
        return f"{g.op} {g.threshold:g}"
    parts = []
    if g.rtol:
        parts.append(f"rtol {g.rtol:g}")
    if g.atol:
        parts.append(f"atol {g.atol:g}")
    return ", ".join(parts) or "exact match"
