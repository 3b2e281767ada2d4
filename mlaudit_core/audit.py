"""Run every selected detector over a RunData and assemble the report."""

from __future__ import annotations

import time
from collections.abc import Iterable

from . import __version__
from .detectors import PLUGIN_ERRORS, registry
from .detectors.base import Skip
from .redact import redact_report
from .report import AuditReport, DetectorRun, Finding, RunRef
from .rundata import RunData
from .settings import Settings
from .verdict import decide


def run_detectors(run: RunData, settings: Settings) -> tuple[list[Finding], list[DetectorRun]]:
    """Run the selected detectors; never raises for a detector's failure.

    Returns (findings, one DetectorRun per selected detector with its status and time).
    """
    findings: list[Finding] = []
    runs: list[DetectorRun] = []
    for code, cls in registry().items():
        if not settings.is_selected(code):
            continue
        det = cls()
        t0 = time.perf_counter()
        reason = det.missing_inputs(run)
        if reason:
            runs.append(DetectorRun(code=code, name=cls.name, status="skipped", reason=reason))
            continue
        try:
            params = settings.params_for(cls)
            got = list(det.check(run, params))
            findings.extend(got)
            runs.append(DetectorRun(code=code, name=cls.name, status="ran",
                                    seconds=time.perf_counter() - t0))
        except Skip as s:
            runs.append(DetectorRun(code=code, name=cls.name, status="skipped", reason=str(s)))
        except Exception as exc:  # an erroring detector is recorded, never aborts the audit
            runs.append(DetectorRun(code=code, name=cls.name, status="errored",
                                    reason=f"{type(exc).__name__}: {exc}",
                                    seconds=time.perf_counter() - t0))
    return findings, runs


def run_ref(run: RunData) -> RunRef:
    return RunRef(tracker=run.identity.tracker, id=run.identity.id, name=run.identity.name,
                  url=run.identity.url, project=run.identity.project, status=run.status.value,
                  start_time=run.start_time.isoformat() if run.start_time else None,
                  end_time=run.end_time.isoformat() if run.end_time else None,
                  duration_s=run.duration_s, n_metrics=len(run.metrics.keys),
                  n_points=len(run.metrics))


def audit(run: RunData, settings: Settings | None = None,
          extra_findings: Iterable[Finding] = ()) -> AuditReport:
    """Audit one run: detectors, then the verdict policy, then redaction.

    Args:
        run: the canonical run.
        settings: thresholds, select/ignore, aliases; defaults when ``None``.
        extra_findings: findings computed outside the detector catalog (e.g. a
            baseline comparison) that the verdict should weigh.

    Returns:
        The report, with every run-controlled string redacted of secrets.
    """
    settings = settings or Settings()
    if settings.aliases:
        run.aliases = settings.alias_table()
    import numpy as np

    with np.errstate(all="ignore"):  # inf/NaN arithmetic in runs is data, not a warning to print
        findings, det_runs = run_detectors(run, settings)
        findings.extend(extra_findings)
        report = decide(run, findings, det_runs)
    report.run = run_ref(run)
    report.tool_version = __version__
    report.warnings = list(run.warnings) + list(PLUGIN_ERRORS)
    return redact_report(report)
