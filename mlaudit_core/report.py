"""The audit report: a versioned pydantic model with a published JSON Schema.

``schema_version`` follows semantic versioning: a minor bump only adds optional
fields, so a reader of 1.x reads every 1.y report. Codes (detector codes,
outcomes, causes) are stable identifiers.
"""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

SCHEMA_VERSION = "1.1"


class Outcome(str, Enum):
    """What happened to the run."""

    SUCCEEDED = "succeeded"
    PLATEAUED = "plateaued"
    DIVERGED = "diverged"
    OVERFIT = "overfit"
    UNDERFIT = "underfit"
    UNSTABLE = "unstable"
    REGRESSED = "regressed"
    SLOW = "slow"
    CRASHED = "crashed"
    RUNNING = "running"
    #: Not judged: no judgeable training signal (no recognised loss or validation metric,
    #: too few points, an unreadable input, only summary values). Added in schema 1.1.
    UNKNOWN = "unknown"


class Cause(str, Enum):
    """Why, in the cause classes of the ML failure audit workflow."""

    MODEL_CONVERGENCE = "model_convergence"
    CORRECTNESS_BUG = "correctness_bug"
    DATA_CONFIG = "data_config"
    INFRA_RUNTIME = "infra_runtime"
    METRIC_POLICY = "metric_policy"
    UNSUPPORTED_CLAIM = "unsupported_claim"
    HEALTHY = "healthy"
    INCONCLUSIVE = "inconclusive"


class Severity(str, Enum):
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"
    CRITICAL = "critical"

    @property
    def rank(self) -> int:
        return ["info", "warning", "error", "critical"].index(self.value)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", use_enum_values=False)


class SeriesEvidence(_Model):
    """A metric window a person can check in the tracker's chart."""

    kind: Literal["series"] = "series"
    metric: str
    step_start: int | None = None
    step_end: int | None = None
    values: dict[str, float | None] = Field(
        default_factory=dict, description="named figures, e.g. best, final, ratio"
    )
    note: str | None = None


class LogEvidence(_Model):
    """A line of console or CI log text, with its source and 1-based line number."""

    kind: Literal["log"] = "log"
    source: str
    line: int
    text: str


class ConfigEvidence(_Model):
    """A config/param key and its value."""

    kind: Literal["config"] = "config"
    key: str
    value: str


class CodeEvidence(_Model):
    """A place in a repository: file and line, with the expression found there."""

    kind: Literal["code"] = "code"
    path: str
    line: int
    text: str


class FactEvidence(_Model):
    """A figure computed from the run that is not a single series window."""

    kind: Literal["fact"] = "fact"
    text: str
    values: dict[str, float | str | None] = Field(default_factory=dict)


Evidence = Annotated[
    SeriesEvidence | LogEvidence | ConfigEvidence | CodeEvidence | FactEvidence,
    Field(discriminator="kind"),
]


class Finding(_Model):
    """One detector result: what was measured, how bad, and where to check it."""

    code: str
    name: str
    severity: Severity
    message: str
    evidence: list[Evidence] = Field(default_factory=list)
    facts: dict[str, Any] = Field(
        default_factory=dict, description="machine-readable figures behind the message"
    )
    family: str = ""


class DetectorRun(_Model):
    """How a detector ended: ran, skipped (inputs missing) or errored (raised)."""

    code: str
    name: str
    status: Literal["ran", "skipped", "errored"]
    reason: str | None = None
    seconds: float = 0.0


class Verdict(_Model):
    outcome: Outcome
    cause: Cause
    confidence: float = Field(
        ge=0,
        le=1,
        description="0..1, the probability that outcome and cause are both right: an evidence "
        "score mapped per evidence class by a map fitted on runs the rules had not seen "
        "(docs/index.md, 'How confidence is derived'); 0 for unknown",
    )
    summary: str
    inconclusive: bool = False
    rule: str | None = Field(
        None, description="id of the policy rule that decided (V01..); added in 1.1"
    )
    basis: str | None = Field(None, description="the terms the confidence came from; added in 1.1")


class TimelinePhase(_Model):
    name: str
    step_start: int | None = None
    step_end: int | None = None
    wall_start_s: float | None = Field(None, description="seconds since run start")
    wall_end_s: float | None = None
    note: str | None = None


class Hypothesis(_Model):
    statement: str
    status: Literal["supported", "open", "rejected"]
    cause: Cause | None = None
    evidence_for: list[str] = Field(default_factory=list)
    evidence_against: list[str] = Field(default_factory=list)
    discriminating_test: str | None = None


class MissingSignal(_Model):
    signal: str
    would_tell: str


class NextAction(_Model):
    action: str
    why: str
    cost: Literal["minutes", "hours", "days"] = "minutes"


class RunRef(_Model):
    tracker: str
    id: str
    name: str = ""
    url: str | None = None

    @field_validator("url")
    @classmethod
    def _public_url(cls, v: str | None) -> str | None:
        """A run's link never carries user-info (``mlaudit_core.redact.public_url``)."""
        from .redact import public_url

        return public_url(v) if v else v

    project: str | None = None
    status: str = "unknown"
    start_time: str | None = None
    end_time: str | None = None
    duration_s: float | None = None
    n_metrics: int = 0
    n_points: int = 0


class AuditReport(_Model):
    """Everything mlaudit concluded about one run. Serialised as ``report.json``."""

    schema_version: str = SCHEMA_VERSION
    tool_version: str = ""
    run: RunRef
    verdict: Verdict
    findings: list[Finding] = Field(default_factory=list)
    timeline: list[TimelinePhase] = Field(default_factory=list)
    key_metrics: dict[str, dict[str, float | int | str | None]] = Field(default_factory=dict)
    hypotheses: list[Hypothesis] = Field(default_factory=list)
    conclusions: list[str] = Field(default_factory=list, description="strong conclusions")
    unknowns: list[str] = Field(default_factory=list)
    surprising: list[str] = Field(default_factory=list)
    missing_instrumentation: list[MissingSignal] = Field(default_factory=list)
    next_actions: list[NextAction] = Field(default_factory=list)
    detectors: list[DetectorRun] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)

    @property
    def codes(self) -> list[str]:
        """Distinct finding codes at warning or above, sorted."""
        return sorted({f.code for f in self.findings if f.severity.rank >= Severity.WARNING.rank})

    def max_severity(self) -> Severity | None:
        if not self.findings:
            return None
        return max((f.severity for f in self.findings), key=lambda s: s.rank)


def report_json_schema() -> dict:
    """The JSON Schema of :class:`AuditReport` (draft 2020-12), as published in ``docs/schema/``."""
    schema = AuditReport.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = f"https://mlaudit.dev/schema/report-{SCHEMA_VERSION}.json"
    return schema
