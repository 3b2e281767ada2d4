"""The evidence of a CI audit, as plain serialisable data.

:func:`~mlaudit_core.ci.collect` fills a :class:`CIContext` from a repository,
logs and golden files; the CI detectors (``CI001``...) read it from
``run.cache`` and the classifier turns their findings into a verdict. The
context round-trips through ``to_dict`` / ``from_dict`` so an evidence bundle
can be saved, inspected, and audited again (the detector case files use that).
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field, fields
from typing import Any

import numpy as np

from ..report import Cause, Finding, Hypothesis, NextAction, Outcome

CONTEXT = "mlaudit.ci"


def metric_id(name: str) -> str:
    """Normalised metric name used to match gates, golden files and logs.

    ``"lm loss"``, ``"lm-loss"`` and ``"LM_Loss"`` all become ``"lm_loss"``.
    """
    return re.sub(r"[\s_\-./:]+", "_", name.strip().lower()).strip("_")


@dataclass
class Line:
    """A line of a log or repo file with its 1-based number and a context window (``"n: text"``)."""

    source: str
    line: int
    text: str
    context: list[str] = field(default_factory=list)
    kind: str = ""  # e.g. failure, pass, metric, timeout, infra:<signature>, exception:<type>


@dataclass
class Gate:
    """One way the repository compares a metric, cited by file and line.

    Attributes:
        kind: ``approx`` (pytest.approx), ``allclose`` (assert_allclose / assert_close),
            ``isclose`` (np.isclose / np.allclose / math.isclose), ``deterministic``
            (Megatron DeterministicTest: exact), ``approximate`` (Megatron ApproximateTest),
            ``exact`` (==, assert_array_equal), ``timing`` / ``throughput`` (a threshold on a
            time or speed), ``threshold`` (a bound on a metric), ``timeout`` (job or test time
            limit, seconds), ``tolerance`` (an rtol/atol setting not inside a recognised call).
        metric: the metric it gates, as written (``None`` when it compares whole arrays).
        rtol, atol: relative / absolute tolerance when it has them (defaults filled in).
        threshold, op: for timing/throughput/threshold/timeout gates, the bound and the operator
            that must hold (``measured op threshold``).
        function: the enclosing test function, to match ``FAILED path::test`` lines.
        formula: how the comparison is computed.
        style: ``megatron`` when it follows Megatron-LM's CHECK_THRESHOLDS pipeline.
    """

    path: str
    line: int
    expr: str
    kind: str
    metric: str | None = None
    rtol: float | None = None
    atol: float | None = None
    threshold: float | None = None
    op: str | None = None
    function: str | None = None
    formula: str = ""
    style: str = ""
    #: the element the test compares (``values[-1]``): ``None`` compares every element
    index: int | None = None
    #: torch dtype the comparison runs in (``assert_close`` on ``torch.tensor(list)``: float32)
    dtype: str | None = None
    #: where a tolerance read from a data file came from (``golden_values.json["rtol"]``)
    tolerance_source: str = ""


@dataclass
class ValueSet:
    """Metric values from one file or log: golden (expected) or actual (this run).

    ``metrics`` maps the metric name as written to ``(steps, values)`` lists.
    """

    source: str
    role: str  # golden | actual
    label: str = ""
    metrics: dict[str, tuple[list[int], list[float]]] = field(default_factory=dict)
    #: metric names whose steps are list positions (a bare JSON list): compared by position
    indexed: list[str] = field(default_factory=list)

    def series(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        steps, values = self.metrics[name]
        return np.asarray(steps, dtype=np.int64), np.asarray(values, dtype=float)

    def find(self, metric: str) -> str | None:
        """The key of this set that is ``metric`` once normalised, or ``None``."""
        mid = metric_id(metric)
        return next((k for k in self.metrics if metric_id(k) == mid), None)


@dataclass
class EnvChange:
    """A version change of a package, image or driver: ``name: old -> new`` and where it was seen."""

    name: str
    old: str | None
    new: str | None
    source: str
    line: int
    text: str


@dataclass
class Measured:
    """A figure a failed assertion printed (``assert 0.71 < 0.5``): measured value, operator, bound."""

    value: float
    op: str
    threshold: float
    source: str
    line: int
    text: str
    test: str | None = None


@dataclass
class TestResult:
    """A test outcome line (``FAILED tests/x.py::test_y - msg`` / ``PASSED ...``)."""

    test: str
    path: str | None
    function: str | None
    outcome: str  # passed | failed | error | skipped
    source: str
    line: int
    message: str = ""
    #: how the log names the code version that ran it (reference segments only)
    segment: str = ""


@dataclass
class LogAssertion:
    """The figures a failed comparison printed in the log (pytest / numpy / torch wording).

    ``kind``: ``approx`` (pytest.approx), ``allclose`` (numpy.testing), ``assert_close``
    (torch.testing), ``length`` (sizes or shapes differ). Figures the message does not print
    stay ``None``; ``lengths`` is (expected/desired, actual) for ``length``.
    """

    test: str | None
    kind: str
    source: str
    line: int
    text: str
    n_mismatch: int | None = None
    n_total: int | None = None
    max_abs: float | None = None
    max_rel: float | None = None
    among_violations: bool = False
    rtol: float | None = None
    atol: float | None = None
    lengths: list[int] | None = None
    obtained: float | None = None
    expected: float | None = None
    tolerance: float | None = None
    location: str | None = None  # "tests/test_x.py:25" of the raising line
    segment: str = ""  # the code version that printed it (reference segments only)


@dataclass
class TracedInput:
    """A file a test reads, found by following the test's source with ``ast``.

    ``status``: ``loaded`` (read as values), ``missing`` (not in the repo nor given),
    ``refused`` (outside the repository), ``too_big``, ``too_deep``, ``unreadable``.
    """

    test: str
    path: str  # as written / resolved relative to the repo
    role: str  # golden | actual | other
    status: str
    source: str  # test file
    line: int
    how: str = ""  # json.load / np.load / pd.read_csv / open
    detail: str = ""


@dataclass
class ReferenceRun:
    """Evidence about the *old* code on the same runner: the previous commit / base branch /
    a reference job, run beside the failing one (see :mod:`.reference`).

    ``reproduces`` is True when the old code still reproduces the golden values within the
    gate's tolerance, False when it fails the same gate too, None when not stated.
    """

    kind: str  # session (a test run in the logs) | values (its metric values) | statement
    source: str
    line: int
    text: str
    label: str = ""  # how the log names the old code ("git checkout main", "HEAD~1", ...)
    reproduces: bool | None = None
    test: str | None = None
    metric: str | None = None
    figures: dict = field(default_factory=dict)
    runner: str | None = None  # the runner / agent the old code ran on, when the log names it
    same_runner: bool | None = None


@dataclass
class CIContext:
    """Everything collected for one CI audit (see the module docstring)."""

    repo: str
    logs: list[str] = field(default_factory=list)
    failure_lines: list[Line] = field(default_factory=list)
    pass_lines: list[Line] = field(default_factory=list)
    metric_lines: list[Line] = field(default_factory=list)
    config_candidates: list[Line] = field(default_factory=list)
    source_candidates: list[Line] = field(default_factory=list)
    gates: list[Gate] = field(default_factory=list)
    golden_files: list[str] = field(default_factory=list)
    goldens: list[ValueSet] = field(default_factory=list)
    actuals: list[ValueSet] = field(default_factory=list)
    failed_metrics: list[str] = field(default_factory=list)
    failed_metrics_line: Line | None = None
    checked_metrics: list[str] | None = None
    checked_metrics_source: Line | None = None
    env_changes: list[EnvChange] = field(default_factory=list)
    packages_log: dict[str, str] = field(default_factory=dict)
    packages_repo: dict[str, str] = field(default_factory=dict)
    measured: list[Measured] = field(default_factory=list)
    tests: list[TestResult] = field(default_factory=list)
    timeouts: list[Line] = field(default_factory=list)
    infra: list[Line] = field(default_factory=list)
    exceptions: list[Line] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    assertions: list[LogAssertion] = field(default_factory=list)
    traced: list[TracedInput] = field(default_factory=list)
    #: test outcomes / assertion figures / metric values of the old code (reference segments)
    ref_tests: list[TestResult] = field(default_factory=list)
    ref_assertions: list[LogAssertion] = field(default_factory=list)
    references: list[ValueSet] = field(default_factory=list)
    #: what the logs say about the old code on the same runner (filled by :mod:`.reference`)
    reference: list[ReferenceRun] = field(default_factory=list)
    #: statements about the old code found in the logs, before they are matched to a test
    ref_statements: list[Line] = field(default_factory=list)
    #: log source -> the runner / agent name it states (``Runner name: 'gpu-3'``)
    runners: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-compatible dict (NaN values become ``None``)."""

        def clean(x):
            if isinstance(x, float) and not math.isfinite(x):
                return None
            if isinstance(x, dict):
                return {k: clean(v) for k, v in x.items()}
            if isinstance(x, (list, tuple)):
                return [clean(v) for v in x]
            return x

        return clean(asdict(self))

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CIContext:
        """Rebuild a context from :meth:`to_dict` output (missing keys take their defaults).

        Raises:
            ValueError: for an unknown key or a malformed entry (the message names it).
        """
        known = {f.name for f in fields(cls)}
        unknown = set(d) - known
        if unknown:
            raise ValueError(f"unknown CI context key(s): {', '.join(sorted(unknown))}")
        kinds = {
            "failure_lines": Line,
            "pass_lines": Line,
            "metric_lines": Line,
            "config_candidates": Line,
            "source_candidates": Line,
            "gates": Gate,
            "env_changes": EnvChange,
            "measured": Measured,
            "tests": TestResult,
            "timeouts": Line,
            "infra": Line,
            "exceptions": Line,
            "assertions": LogAssertion,
            "traced": TracedInput,
            "ref_tests": TestResult,
            "ref_assertions": LogAssertion,
            "reference": ReferenceRun,
            "ref_statements": Line,
        }
        kw: dict[str, Any] = {}
        try:
            for k, v in d.items():
                if k in kinds:
                    kw[k] = [kinds[k](**x) for x in v or []]
                elif k in ("goldens", "actuals", "references"):
                    kw[k] = [
                        ValueSet(
                            x["source"],
                            x["role"],
                            x.get("label", ""),
                            {
                                m: (
                                    list(s),
                                    [float("nan") if y is None else float(y) for y in vals],
                                )
                                for m, (s, vals) in _pairs(x.get("metrics", {})).items()
                            },
                            list(x.get("indexed") or []),
                        )
                        for x in v or []
                    ]
                elif k in ("failed_metrics_line", "checked_metrics_source"):
                    kw[k] = Line(**v) if v else None
                else:
                    kw[k] = v
        except (TypeError, KeyError) as exc:
            raise ValueError(f"malformed CI context entry: {exc}") from None
        return cls(**kw)


def _pairs(metrics: dict[str, Any]) -> dict[str, tuple[list[int], list[Any]]]:
    """Accept ``[steps, values]`` pairs or ``{"steps": [...], "values": [...]}`` or bare value lists."""
    out = {}
    for m, v in metrics.items():
        if isinstance(v, dict):
            vals = list(v["values"])
            out[m] = (list(v.get("steps") or range(1, len(vals) + 1)), vals)
        elif isinstance(v, (list, tuple)) and len(v) == 2 and isinstance(v[0], (list, tuple)):
            out[m] = (list(v[0]), list(v[1]))
        else:
            vals = list(v)
            out[m] = (list(range(1, len(vals) + 1)), vals)
    return out


@dataclass
class CIVerdict:
    """What the CI classifier (:mod:`.classify`) decides for one CI run: the outcome and cause, how
    sure (0-1), the summary, the finding it rests on, the next actions, the hypotheses ledger, what
    could not be concluded and the rule that decided."""

    outcome: Outcome
    cause: Cause
    confidence: float
    summary: str
    primary: Finding | None = None
    actions: list[NextAction] = field(default_factory=list)
    hypotheses: list[Hypothesis] = field(default_factory=list)
    conclusions: list[str] = field(default_factory=list)
    rule: str = ""
