"""Is it really worse? Baseline selection, noise bands, ranked deltas, first broken layer.

Tracker-agnostic: everything here works on :class:`~mlaudit_core.rundata.RunData`.
A tracker plugin finds candidate runs; :func:`select_baselines` picks the
baselines; the orchestration home, :mod:`mlaudit_core.audit`, runs the comparison
(``mlaudit_core.audit.compare_to_baselines``: the baseline detectors BL001-BL004) and the audit::

    sel = select_baselines(run, plugin.find_baselines(run, policy), policy)
    report = audit(run, settings, extra_findings=compare_to_baselines(run, sel.runs, settings))

or, with the hypothesis ledger and actions folded into the report,
``mlaudit_core.audit.audit_with_baselines(run, sel.runs, settings)``.
"""

from __future__ import annotations

from collections.abc import Callable

from ..report import AuditReport, Finding, Hypothesis, NextAction
from .band import Aligned, BandResult, align, compare_band
from .compare import MetricComparison, attach_baselines, baselines_of, compare_metrics
from .deltas import LAYERS, Delta, find_deltas
from .layers import LayerReport, analyse
from .selection import BASELINE_TAG, BaselinePolicy, Selection, config_matches, select_baselines

__all__ = [
    "BASELINE_TAG",
    "LAYERS",
    "Aligned",
    "BandResult",
    "BaselinePolicy",
    "Delta",
    "LayerReport",
    "MetricComparison",
    "Selection",
    "align",
    "analyse",
    "attach_baselines",
    "baselines_of",
    "compare_band",
    "compare_metrics",
    "config_matches",
    "find_deltas",
    "fold_ledger",
    "select_baselines",
]


def fold_ledger(
    report: AuditReport, ledger_of: Callable[[Finding], list[Hypothesis]]
) -> AuditReport:
    """Move the findings' hypothesis ledgers and the first discriminating test into the report.

    ``ledger_of(finding)`` is the ledger a finding carries (its detector's ``ledger``: BL003's
    layer ledger), empty for most. The ledger's hypotheses go before the verdict's own; the
    supported hypothesis' test becomes the first next action when the run regressed.
    Returns the same report, changed in place.
    """
    seen = {h.statement for h in report.hypotheses}
    ledger: list[Hypothesis] = []
    for f in report.findings:
        for hyp in ledger_of(f):
            if hyp.statement not in seen:
                seen.add(hyp.statement)
                ledger.append(hyp)
    report.hypotheses = ledger + report.hypotheses
    supported = [
        h
        for h in ledger
        if h.status == "supported"
        and h.discriminating_test
        and h.cause is not None
        and h.cause.value != "healthy"
    ]
    if supported:
        h = supported[0]
        report.next_actions.insert(
            0,
            NextAction(
                action=(h.discriminating_test or "")[:1].upper()
                + (h.discriminating_test or "")[1:],
                why=f"tests the leading explanation: {h.statement}",
                cost="hours",
            ),
        )
    return report
