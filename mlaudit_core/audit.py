"""Orchestration: the one home of "audit a run", "audit a CI job", "audit a run with its
baselines" and "audit a run with claims".

Everything here runs the detectors and assembles a report; the packages below it
(``detectors/``, ``ci/``, ``baseline/``, ``claims``, ``verdict/``) measure and return
findings and never call back up here (tests/test_import_graph.py lists the layers).

* :func:`audit` -- one run: every selected detector, the verdict policy, redaction.
* :func:`audit_with_baselines` / :func:`compare_to_baselines` -- a run against baseline runs
  (BL001-BL004 and the hypothesis ledger folded into the report; ``docs/baselines.md``).
* :func:`audit_with_claims` -- a run and the numeric claims of a text (CL001-CL003).
* :func:`audit_ci` -- a CI job's logs and repository (``mlaudit ci``; ``docs/ci.md``).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from pathlib import Path

from ._version import __version__
from .detectors import PLUGIN_ERRORS, detector_for, registry
from .detectors.base import Skip
from .redact import redact_report
from .report import AuditReport, DetectorRun, Finding, Hypothesis, RunRef
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
            runs.append(
                DetectorRun(
                    code=code, name=cls.name, status="ran", seconds=time.perf_counter() - t0
                )
            )
        except Skip as s:
            runs.append(DetectorRun(code=code, name=cls.name, status="skipped", reason=str(s)))
        except Exception as exc:  # an erroring detector is recorded, never aborts the audit
            runs.append(
                DetectorRun(
                    code=code,
                    name=cls.name,
                    status="errored",
                    reason=f"{type(exc).__name__}: {exc}",
                    seconds=time.perf_counter() - t0,
                )
            )
    return findings, runs


def run_ref(run: RunData) -> RunRef:
    return RunRef(
        tracker=run.identity.tracker,
        id=run.identity.id,
        name=run.identity.name,
        url=run.identity.url,
        project=run.identity.project,
        status=run.status.value,
        start_time=run.start_time.isoformat() if run.start_time else None,
        end_time=run.end_time.isoformat() if run.end_time else None,
        duration_s=run.duration_s,
        n_metrics=len(run.metrics.keys),
        n_points=len(run.metrics),
    )


def audit(
    run: RunData, settings: Settings | None = None, extra_findings: Iterable[Finding] = ()
) -> AuditReport:
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

    extra = list(extra_findings)
    with np.errstate(all="ignore"):  # inf/NaN arithmetic in runs is data, not a warning to print
        findings, det_runs = run_detectors(run, settings)
        if not extra and not _has_baselines(run):
            extra = _rerun_findings(run, settings)
        findings.extend(extra)
        report = decide(run, findings, det_runs)
    report.run = run_ref(run)
    report.tool_version = __version__
    report.warnings = list(run.warnings) + list(PLUGIN_ERRORS)
    return redact_report(report)


def _has_baselines(run: RunData) -> bool:
    from .baseline.compare import baselines_of

    return bool(baselines_of(run))


def _rerun_findings(run: RunData, settings: Settings) -> list[Finding]:
    """A record holding reruns of one configuration (:func:`.baseline.reruns.split_reruns`): the last
    run compared with the earlier ones through the baseline noise band (BL001-BL004), so that a gap
    between seeds is not read as a regression and a gap beyond the band is. Each finding says that
    the baselines are the earlier runs of the same record."""
    from .baseline.reruns import split_reruns

    got = split_reruns(run)
    if got is None:
        return []
    last, earlier = got
    out = compare_to_baselines(last, earlier, settings)
    where = (
        f" [baselines: the {len(earlier)} earlier run(s) of the same configuration in this record; the run "
        "compared is the last one]"
    )
    return [f.model_copy(update={"message": f.message + where}) for f in out]


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
    settings = settings or Settings()
    from .baseline.compare import EMITTED, attach_baselines

    attach_baselines(run, baselines)
    if not baselines:
        return []
    reg = registry()
    out: list[Finding] = []
    for code, cls in reg.items():
        if cls.family != "baseline" or not settings.is_selected(code):
            continue
        try:
            out.extend(cls().check(run, settings.params_for(cls)))
        except Skip:
            continue
        except Exception as exc:  # never abort the audit for one comparison
            run.warnings.append(f"{code} {cls.name} errored: {type(exc).__name__}: {exc}")
    run.cache[EMITTED] = True
    return out


def _ledger_of(finding: Finding) -> list[Hypothesis]:
    """The hypothesis ledger ``finding`` carries, as its detector says (``Detector.ledger``)."""
    return detector_for(finding.code).ledger(finding)


def audit_with_baselines(
    run: RunData, baselines: Sequence[RunData], settings: Settings | None = None
) -> AuditReport:
    """``audit`` with the baseline comparison, the ledger folded into the report.

    Raises nothing of its own; see :func:`mlaudit_core.audit.audit`.
    """
    from .baseline import fold_ledger

    extra = compare_to_baselines(run, baselines, settings)
    return fold_ledger(audit(run, settings, extra_findings=extra), _ledger_of)


def audit_with_claims(
    run: RunData,
    text: str,
    settings=None,
    baselines: Sequence[RunData] = (),
    source: str = "claims",
) -> AuditReport:
    """Audit a run and check the claims of ``text`` against it (and its baselines).

    Raises nothing of its own; see :func:`mlaudit_core.audit.audit`.
    """
    from .baseline import fold_ledger
    from .claims import attach_claims
    from .verdict.claims import apply_claims

    attach_claims(run, text, source)
    extra: list[Finding] = compare_to_baselines(run, baselines, settings) if baselines else []
    report = audit(run, settings, extra_findings=extra)
    if baselines:
        fold_ledger(report, _ledger_of)
    return apply_claims(report)


def audit_ci(
    repo: Path,
    logs: Sequence[Path],
    golden: Sequence[Path] = (),
    claims: Path | None = None,
    settings: Settings | None = None,
) -> AuditReport:
    """Run the whole CI audit and return the report (redacted).

    Args:
        repo, logs, golden: see :func:`collect`.
        claims: a text file (PR description, results note) whose numeric claims are checked.
        settings: detector selection (``ignore`` applies) and parameters.

    Raises:
        InputError: bad inputs (see :func:`collect`; an unreadable claims file).
    """
    from .ci import _display, _golden_run, build_run
    from .ci.classify import classify
    from .ci.context import attach_context
    from .ci.logs import read_log_lines
    from .claims import REGRESSION, attach_claims
    from .errors import InputError
    from .verdict.claims import apply_claims

    settings = settings or Settings()
    claims_text = None
    if claims is not None:
        if not claims.is_file():
            raise InputError(f"--claims {claims}: file not found")
        claims_text = "\n".join(
            cl.text for cl in read_log_lines(claims, str(claims), option="--claims")
        )
    from .ci.context import _RECOMPUTE
    from .evidence import collect as collect_evidence

    ev = collect_evidence(repo, logs, golden)  # the evidence pass (`mlaudit evidence`): collect
    ctx, console = ev.context, ev.console
    run = build_run(ctx, console)
    attach_context(run, ctx)
    run.cache[_RECOMPUTE] = ev.recomputed  # recomputed once, by the evidence pass
    sub = settings.model_copy(update={"select": ["CI"]})
    findings, det_runs = run_detectors(run, sub)
    v = classify(findings, ctx)
    if v.cause.value == "inconclusive":
        # classify abstained: follow the failing tests to the values they compare
        from .ci.follow import follow_verdict

        given = {p.name: p for p in [*logs, *golden]}
        fv = follow_verdict(repo, ctx, given, [cl.text for cl in console])
        if fv is not None:
            v, f_followed = fv
            findings.append(f_followed)
    if claims is not None and claims_text is not None:
        from .baseline.compare import attach_baselines

        g = _golden_run(ctx)
        if g is not None:
            attach_baselines(run, [g])
        regressed = v.cause.value in ("model_convergence", "correctness_bug")
        run.cache[REGRESSION] = {
            "regressed": regressed,
            "why": ("the CI audit found " + v.cause.value.replace("_", " ") + ": " + v.summary)
            if regressed
            else f"the CI audit found no model regression ({v.cause.value}): {v.summary}",
        }
        attach_claims(run, claims_text, _display(claims, repo))
        cl_findings, cl_runs = run_detectors(run, settings.model_copy(update={"select": ["CL"]}))
        findings += cl_findings
        det_runs += cl_runs
    report = _ci_report(run, ctx, findings, det_runs, v)
    report.tool_version = __version__
    if claims_text is not None:
        apply_claims(report)
    return redact_report(report)


def _ci_report(
    run: RunData, ctx, findings: list[Finding], det_runs: list[DetectorRun], v
) -> AuditReport:
    """The CI report: findings ranked, the recomputed gates as key metrics, what is unknown."""
    from .ci.context import recomputed
    from .ci.model import metric_id
    from .report import Severity, Verdict
    from .roles import is_higher_better
    from .verdict.narrative import finding_surprises

    ordered = sorted(findings, key=lambda f: (-f.severity.rank, f is not v.primary, f.code))
    key_metrics: dict[str, dict[str, float | int | str | None]] = {}
    import numpy as np

    for r in recomputed(run):
        st, vals = r.actual.series(r.actual.find(r.metric) or r.metric)
        fin = np.isfinite(vals)
        if not fin.any():
            continue
        st, vals = st[fin], vals[fin]
        hib = is_higher_better(r.metric)
        ib = int(np.argmax(vals) if hib else np.argmin(vals))
        # first/best/final as for a run (the report's table), then the golden comparison figures
        # the same fields as verdict.key_metrics (the renderers read them), then the golden comparison
        directional = not r.is_timing
        key_metrics[r.metric] = {
            "key": r.metric,
            "points": int(vals.size),
            "finite_points": int(vals.size),
            "first": float(vals[0]),
            "best": float(vals[ib]) if directional else None,
            "best_step": int(st[ib]) if directional else None,
            "min": float(vals.min()),
            "max": float(vals.max()),
            "final": float(vals[-1]),
            "final_step": int(st[-1]),
            "median": float(np.median(vals)),
            "max_abs": r.max_abs,
            "max_rel": r.max_rel,
            "mean_rel": r.mean_rel,
            "golden_median": r.median_golden,
            "actual_median": r.median_actual,
            "golden_source": r.golden.source,
        }
    unknowns = [
        f"{d.code} {d.name}: {d.reason}" for d in det_runs if d.status in ("skipped", "errored")
    ]
    if not ctx.goldens:
        unknowns.append(
            "no golden values were found or given (--golden): the gates could not be recomputed"
        )
    if ctx.goldens and not ctx.actuals:
        unknowns.append("no actual metric values in the logs: the gates could not be recomputed")
    named = {metric_id(m) for m in ctx.failed_metrics}
    have = {metric_id(r.metric) for r in recomputed(run)}
    for m in ctx.failed_metrics:
        if metric_id(m) not in have:
            unknowns.append(
                f"the log reports {m!r} as failed, but no golden/actual values for it were given"
            )
    for g in ctx.gates:
        if g.kind in ("approximate", "deterministic") and ctx.checked_metrics is None and not named:
            unknowns.append(
                "which metrics this job checks is not declared in the repo; all configured gates "
                "were taken as active"
            )
            break
    unknowns += ctx.notes
    conclusions = list(
        dict.fromkeys(
            v.conclusions
            + [
                f.message
                for f in ordered
                if f.severity.rank >= Severity.ERROR.rank and f.family != "ci"
            ]
        )
    )[:6]
    return AuditReport(
        run=run_ref(run),
        verdict=Verdict(
            outcome=v.outcome,
            cause=v.cause,
            confidence=round(v.confidence, 2),
            summary=v.summary,
            inconclusive=v.cause.value == "inconclusive",
        ),
        findings=ordered,
        key_metrics=key_metrics,
        hypotheses=v.hypotheses,
        conclusions=conclusions,
        unknowns=unknowns,
        surprising=finding_surprises([f for f in findings if f.family == "ci"]),
        next_actions=v.actions[:8],
        detectors=det_runs,
        warnings=[],
    )
