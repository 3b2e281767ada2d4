"""Is it really worse? Baseline selection, noise bands, ranked deltas, first broken layer.

Tracker-agnostic: everything here works on :class:`~mlaudit_core.rundata.RunData`.
A tracker plugin finds candidate runs; :func:`select_baselines` picks the
baselines; :func:`compare_to_baselines` turns the comparison into findings for
:func:`~mlaudit_core.audit.audit`::

    sel = select_baselines(run, plugin.find_baselines(run, policy), policy)
    report = audit(run, settings, extra_findings=compare_to_baselines(run, sel.runs, settings))

or, with the hypothesis ledger and actions folded into the report,
``audit_with_baselines(run, sel.runs, settings)``.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..report import AuditReport, Finding, Hypothesis, NextAction
from ..rundata import RunData
from ..settings import Settings
from .band import Aligned, BandResult, align, compare_band
from .compare import EMITTED, MetricComparison, attach_baselines, baselines_of, compare_metrics
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
    "audit_with_baselines",
    "baselines_of",
    "compare_band",
    "compare_metrics",
    "compare_to_baselines",
    "config_matches",
    "find_deltas",
    "fold_ledger",
    "select_baselines",
]

BASELINE_CODES = ("BL001", "BL002", "BL003", "BL004")


def compare_to_baselines(
    run: RunData, baselines: Sequence[RunData], settings: Settings | None = None
) -> list[Finding]:
    """Compare ``run`` with ``baselines`` and return the baseline findings (BL001-BL004).

    Pass the result as ``audit(run, settings, extra_findings=...)``: the
    verdict then says ``regressed`` when a learning metric is worse beyond the
    baselines' noise band, and does not when it is within noise. The baseline
    detectors inside that audit see that the comparison was already reported
    and add nothing twice.

    Args:
        run: the run under audit.
        baselines: baseline runs (several seeds of the reference config give the noise band).
        settings: detector selection and parameters (``[tool.mlaudit.detectors.BL001]``).

    Returns:
        The findings; empty when ``baselines`` is empty (BL001 then reports
        "no baseline" as an unknown in the audit). A baseline detector that
        raises is recorded in ``run.warnings`` and skipped.
    """
    from ..detectors import registry
    from ..detectors.base import Skip

    settings = settings or Settings()
    attach_baselines(run, baselines)
    if not baselines:
        return []
    reg = registry()
    out: list[Finding] = []
    for code in BASELINE_CODES:
        if code not in reg or not settings.is_selected(code):
            continue
        cls = reg[code]
        try:
            out.extend(cls().check(run, settings.params_for(cls)))
        except Skip:
            continue
        except Exception as exc:  # never abort the audit for one comparison
            run.warnings.append(f"{code} {cls.name} errored: {type(exc).__name__}: {exc}")
    run.cache[EMITTED] = True
    return out


def fold_ledger(report: AuditReport) -> AuditReport:
    """Move the BL003 hypothesis ledger and its first discriminating test into the report.

    The ledger's hypotheses go before the verdict's own; the supported
    hypothesis' test becomes the first next action when the run regressed.
    Returns the same report, changed in place.
    """
    seen = {h.statement for h in report.hypotheses}
    ledger: list[Hypothesis] = []
    for f in report.findings:
        if f.code != "BL003":
            continue
        for h in f.facts.get("hypotheses", []):
            hyp = Hypothesis.model_validate(h)
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
                action=h.discriminating_test[:1].upper() + h.discriminating_test[1:],
                why=f"tests the leading explanation: {h.statement}",
                cost="hours",
            ),
        )
    return report


def audit_with_baselines(
    run: RunData, baselines: Sequence[RunData], settings: Settings | None = None
) -> AuditReport:
    """``audit`` with the baseline comparison, the ledger folded into the report.

    Raises nothing of its own; see :func:`mlaudit_core.audit.audit`.
    """
    from ..audit import audit

    extra = compare_to_baselines(run, baselines, settings)
    return fold_ledger(audit(run, settings, extra_findings=extra))
