"""CI008 ci-environment-change."""

from __future__ import annotations

from ..baseline.deltas import METRIC_LIBRARIES, norm_package
from ..ci.context import context_of
from ..report import Cause, FactEvidence, Finding, Hypothesis, LogEvidence, Outcome, Severity
from ._knowledge import hyp, said
from .base import Detector, DetectorParams, Remedy


def env_deltas(ctx) -> list[dict]:
    """Version changes: stated transitions in the logs, and repo pins that differ from what the log installed."""
    out = []
    for e in ctx.env_changes:
        out.append(
            {
                "name": e.name,
                "old": e.old,
                "new": e.new,
                "source": e.source,
                "line": e.line,
                "text": e.text,
                "metric_library": norm_package(e.name) in METRIC_LIBRARIES,
            }
        )
    pins = {norm_package(k): (k, v) for k, v in ctx.packages_repo.items()}
    for k, v in ctx.packages_log.items():
        n = norm_package(k)
        if n in pins and pins[n][1] != v and not any(norm_package(d["name"]) == n for d in out):
            out.append(
                {
                    "name": k,
                    "old": pins[n][1],
                    "new": v,
                    "source": "repo pin vs log",
                    "line": 0,
                    "text": f"{pins[n][0]}=={pins[n][1]} pinned in the repo, {k} {v} installed in the job",
                    "metric_library": n in METRIC_LIBRARIES,
                }
            )
    return out


class EnvironmentChange(Detector, code="CI008", name="ci-environment-change", family="ci"):
    """The job ran in a changed environment: container image, driver or package versions differ.

    Why it matters: golden values are recorded on one stack; a new image or
    library changes numerics, and a metric library upgrade can change a
    metric's very definition (averaging, defaults, tokenisation).
    Evidence: each version change with the line that states it, or a repo
    pin that differs from the version the job installed; metric libraries
    (scikit-learn, torchmetrics, evaluate, sacrebleu, ...) are flagged.
    Remedy: record the environment with every golden file; refresh goldens
    per image.
    Thresholds: none. Warning when a metric library changed, info otherwise.
    """

    @classmethod
    def remedies_for(cls, finding: Finding) -> tuple[Remedy, ...]:
        """With a metric library upgrade, recompute the metric with both versions first."""
        out = []
        if finding.facts.get("metric_library_changed"):
            out.append(
                Remedy(
                    "Recompute the evaluation metric from the same predictions with both library "
                    "versions",
                    "tells a changed metric definition from a changed model",
                    "minutes",
                )
            )
        out.append(
            Remedy(
                "Record the environment (image digest, driver, package versions) with every golden "
                "file and refresh the goldens per image",
                "golden values hold for the stack they were recorded on",
                "minutes",
            )
        )
        return tuple(out)

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """A changed environment: numerical drift (open), a metric definition change (open when a
        metric library changed)."""
        hs = [
            hyp(
                "numerical drift from the changed environment",
                "open",
                Cause.INFRA_RUNTIME,
                "rerun the old code in the new environment",
                for_=said(finding),
            )
        ]
        if finding.facts.get("metric_library_changed"):
            hs.append(
                hyp(
                    "a metric library upgrade changed the metric's definition",
                    "open",
                    Cause.METRIC_POLICY,
                    "recompute the metric from the same predictions with both versions",
                )
            )
        return hs

    class Params(DetectorParams):
        pass

    @classmethod
    def ci_answers(cls, finding: Finding) -> dict[str, list[dict]]:
        """Each changed package or image is an environment change of the CI answers."""
        return {
            "environment": [
                {
                    "name": c["name"],
                    "old": c["old"],
                    "new": c["new"],
                    "source": c["source"],
                    "line": c["line"],
                    "text": c["text"],
                }
                for c in finding.facts.get("changes", [])
            ]
        }

    def check(self, run, p):
        ctx = context_of(run)
        if ctx is None:
            return
        ds = env_deltas(ctx)
        if not ds:
            return
        lib = [d for d in ds if d["metric_library"]]
        txt = "; ".join(f"{d['name']}: {d['old'] or '?'} -> {d['new'] or '?'}" for d in ds[:5])
        yield self.finding(
            Severity.WARNING if lib else Severity.INFO,
            f"environment changed: {txt}" + (" (a metric library)" if lib else ""),
            evidence=[
                LogEvidence(source=d["source"], line=d["line"], text=d["text"])
                if d["line"]
                else FactEvidence(text=d["text"])
                for d in ds[:8]
            ],
            changes=ds,
            metric_library_changed=bool(lib),
        )
