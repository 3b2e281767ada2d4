"""The detector contract and its registry.

A detector is one small class with a stable code (two or three letters and
three digits, like a linter rule), a name, a docstring that is its
documentation, typed parameters with defaults, the roles it needs, and a
``check`` that yields findings. Subclassing registers it::

    class LossDivergence(Detector, code="OP001", name="loss-divergence", family="optimization"):
        '''Training loss climbs far above its best value and stays there. ...'''
        needs = (Role.TRAIN_LOSS,)

        class Params(DetectorParams):
            factor: float = 2.0

        def check(self, run, p):
            ...
            yield self.finding(Severity.ERROR, "message", evidence=[...])

A detector whose inputs are missing is *skipped* with a reason; one that raises
is recorded as *errored*; neither ever aborts an audit.
"""

from __future__ import annotations

import inspect
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, model_validator

from ..report import Finding, Hypothesis, Outcome, SeriesEvidence, Severity
from ..roles import Role
from ..rundata import RunData

CODE_RE = re.compile(r"^[A-Z]{2,3}\d{3}$")

FAMILIES = {
    "integrity": "Logging integrity",
    "optimization": "Optimization dynamics",
    "generalization": "Generalization",
    "systems": "Systems and bottlenecks",
    "runtime": "Runtime and infrastructure log signatures",
    "baseline": "Baseline comparison",
    "ci": "CI gates",
    "claims": "Claims",
    "instrumentation": "Missing instrumentation",
}


class DetectorParams(BaseModel):
    """Base of every detector's parameters.

    Unknown keys are rejected, and so are NaN, infinite and negative numbers: every
    threshold, factor, count and window of the built-in detectors is a non-negative
    magnitude (a negative or NaN one would silently switch a detector off or on).
    """

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    @model_validator(mode="after")
    def _non_negative(self):
        for name, value in self:
            if isinstance(value, (int, float)) and not isinstance(value, bool) and value < 0:
                raise ValueError(f"{name} must be >= 0 (got {value})")
        return self


class Skip(Exception):
    """Raised inside ``check`` when the run lacks what the detector needs.

    The message is the reason shown in the report's unknowns.
    """


@dataclass(frozen=True)
class PlotMark:
    """How a finding marks a metric's plot in the HTML report (``Detector.plot_marks``).

    ``kind``: ``vline`` (``steps`` = (step,)), ``span`` and ``band`` ((start, end); a band also
    has ``y`` = (lo, hi)), ``points`` (the steps). ``event`` names the colour the renderer uses
    (divergence, non-finite, overfit, reset, spike, plateau, baseline, finding). ``key``: the
    metric it belongs to, None for every training panel. ``note``: the sentence under the plot.
    """

    kind: str
    label: str
    event: str
    steps: tuple = ()
    key: str | None = None
    y: tuple = ()
    note: str = ""


@dataclass(frozen=True)
class Remedy:
    """A next action a detector recommends: what to do, what it tells apart or fixes (``why``),
    and its cost (minutes, hours, days)."""

    action: str
    why: str
    cost: str = "minutes"


def as_int(x: Any) -> int | None:
    """``x`` as an int (a fact of a finding), None when absent or not a number."""
    try:
        return None if x is None else int(x)
    except (TypeError, ValueError):
        return None


def as_float(x: Any) -> float | None:
    """``x`` as a finite float, None when absent, not a number or not finite."""
    try:
        v = None if x is None else float(x)
    except (TypeError, ValueError):
        return None
    return v if v is not None and math.isfinite(v) else None


def failing_row(f: Finding) -> dict:
    """``f`` as a failing check of a CI report's canonical answers (``Detector.ci_answers``)."""
    return {
        "metric": f.facts.get("metric") or f.code,
        "check": f.name,
        "name": f.name,
        "passed": False,
        "detail": f.message,
        "text": f.message,
    }


def first_series_evidence(f: Finding) -> SeriesEvidence | None:
    return next((e for e in f.evidence if isinstance(e, SeriesEvidence)), None)


_REGISTRY: dict[str, type[Detector]] = {}


class Detector:
    """Base class of all detectors. See the module docstring for the contract."""

    code: ClassVar[str]
    name: ClassVar[str]
    family: ClassVar[str]
    needs: ClassVar[tuple[Role, ...]] = ()
    #: "stable" or "preview" (preview detectors run but are flagged in `mlaudit rules`).
    lifecycle: ClassVar[str] = "stable"
    Params: ClassVar[type[DetectorParams]] = DetectorParams
    #: Next actions when this detector's finding decides the verdict, cheapest first.
    remedies: ClassVar[tuple[Remedy, ...]] = ()
    #: The first action when the run crashed and this detector's signature is the primary finding.
    crash_remedy: ClassVar[Remedy | None] = None
    #: Next actions when this detector's finding is the primary one of a correctness bug.
    correctness_remedies: ClassVar[tuple[Remedy, ...]] = ()
    #: Its finding as the primary one makes the outcome's generic actions wrong (a reset step
    #: counter: the curves are two runs, not one that diverged or plateaued).
    replaces_outcome_actions: ClassVar[bool] = False
    #: Its findings are evidence that reduced precision or loss scaling is in use
    #: (``verdict.evidence.precision_evidence``): a loss-scale skip, a loss-scale collapse.
    shows_reduced_precision: ClassVar[bool] = False
    #: Where its sentence goes among a report's surprising facts (``Detector.surprising``):
    #: ascending; 0-2 before the facts read from the curves, 3 and above after them.
    surprise_rank: ClassVar[int] = 0
    #: The name of its finding as an event of the report's timeline (``narrative.build_timeline``:
    #: divergence, non-finite onset, ...), None when its finding is not an event.
    timeline_event: ClassVar[str | None] = None
    #: What its findings say about the claims checked against the telemetry
    #: (``verdict.claims.apply_claims``): "contradicted", "unverifiable", "supported", or None.
    claim_status: ClassVar[str | None] = None
    #: The outcome its finding at warning or above implies (``verdict.evidence.confidence``: an
    #: agreeing or a competing explanation), or None; "degraded" for a held-out reflection of
    #: several failures that competes with none of them (GE003).
    implies: ClassVar[str | None] = None
    #: Its finding at warning or above makes a run slow (``verdict.policy._slow``); the detectors
    #: are asked in ascending rank, the first one found decides. None: it does not set the outcome.
    slow_rank: ClassVar[int | None] = None
    #: Its finding at warning or above is a non-finite loss or message, the symptom a report's
    #: "fixed by another framework / CUDA version" statement explains (``verdict.policy.
    #: _environment_fixed``); asked in ascending rank, the first one found is shown. None: it is not.
    nonfinite_rank: ClassVar[int | None] = None
    #: Its finding is a crash signature that a later end-of-training line or later training
    #: progress in the same console supersedes (``verdict.evidence.superseded_crash``).
    supersedable_crash: ClassVar[bool] = False
    #: Its finding at error is a run ended by memory (an out-of-memory, a kill, a data-loader
    #: worker's death) that the memory-leak rule reads (``verdict.policy._memory_leak``); asked in
    #: ascending rank, the first one found is the end. None: it is not.
    memory_end_rank: ClassVar[int | None] = None
    #: Its finding is an allocation that failed (an out-of-memory), not a kill or a worker death.
    out_of_memory: ClassVar[bool] = False
    #: Its finding at warning or above is an overfit/plateau reading of the losses that the run's
    #: task metric can overrule (``verdict.policy._task_metric_note``).
    loss_reading: ClassVar[bool] = False

    def __init_subclass__(
        cls, code: str | None = None, name: str | None = None, family: str | None = None, **kw: Any
    ) -> None:
        super().__init_subclass__(**kw)
        if code is None:  # an abstract intermediate class
            return
        if not CODE_RE.match(code):
            raise ValueError(f"detector code {code!r} must be 2-3 capitals and 3 digits")
        if family not in FAMILIES:
            raise ValueError(f"detector {code}: unknown family {family!r}")
        if not (cls.__doc__ or "").strip():
            raise ValueError(f"detector {code} needs a docstring: it is its documentation")
        if code in _REGISTRY and _REGISTRY[code] is not cls:
            raise ValueError(
                f"detector code {code} registered twice "
                f"({_REGISTRY[code].__module__} and {cls.__module__})"
            )
        cls.code, cls.name, cls.family = code, name or code.lower(), family
        _REGISTRY[code] = cls

    # --- helpers for check() -------------------------------------------------
    def finding(
        self, severity: Severity, message: str, *, evidence: list | None = None, **facts: Any
    ) -> Finding:
        return Finding(
            code=self.code,
            name=self.name,
            severity=severity,
            message=message,
            evidence=list(evidence or []),
            facts=facts,
            family=self.family,
        )

    def missing_inputs(self, run: RunData) -> str | None:
        """Reason the detector cannot run on ``run``, or ``None``."""
        missing = [r for r in self.needs if not run.has(r)]
        if missing:
            names = ", ".join(r.value.replace("_", " ") for r in missing)
            return f"no {names} series logged"
        return None

    def check(self, run: RunData, p: DetectorParams) -> Iterator[Finding]:  # pragma: no cover
        raise NotImplementedError

    # --- what the report draws ---------------------------------------------------
    @classmethod
    def plot_marks(cls, finding: Finding) -> list[PlotMark] | None:
        """How ``finding`` marks the plots, from its facts and evidence (never recomputed): a list
        (empty: nothing drawn), or None to let the report draw its series evidence (a band for a
        step range, a point for one step; warnings and errors only)."""
        return None

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """The hypotheses ``finding`` supports or rejects when it is the primary finding of a
        verdict with ``outcome`` (the report's ledger); None when it has none to add."""
        return None

    @classmethod
    def ledger(cls, finding: Finding) -> list[Hypothesis]:
        """The hypotheses ``finding`` puts at the head of the report's ledger whatever the verdict
        (``baseline.fold_ledger``: BL003's layer ledger); empty for most detectors."""
        return []

    @classmethod
    def crash_remedy_for(cls, finding: Finding) -> Remedy | None:
        """The first action when the run crashed with ``finding`` as the primary one: the
        detector's ``crash_remedy``, or one chosen from the finding's facts."""
        return cls.crash_remedy

    @classmethod
    def remedies_for(cls, finding: Finding) -> tuple[Remedy, ...]:
        """The next actions when ``finding`` decides the verdict: the detector's ``remedies``, or
        ones chosen from the finding's facts."""
        return cls.remedies

    @classmethod
    def omits_outcome_actions(cls, finding: Finding) -> tuple[str, ...]:
        """Openings of the outcome's generic actions that ``finding``, as the primary one, makes
        redundant (its own remedies already do that check)."""
        return ()

    @classmethod
    def stopped_from_outside(cls, finding: Finding) -> bool:
        """Whether ``finding`` is what a process stopped from outside shows (a termination or kill
        signal, an interrupt): with the job's own termination in the run (RT003) it is a symptom
        of that termination, not a crash of its own (``verdict.policy``)."""
        return False

    @classmethod
    def contradicts_healthy(cls, finding: Finding) -> bool:
        """Whether ``finding``'s facts contradict a healthy verdict (``verdict.evidence.confidence``
        lowers it as for a competing explanation)."""
        return False

    # --- what the report says besides the verdict ---------------------------------
    @classmethod
    def surprising(cls, finding: Finding) -> str | None:
        """The sentence ``finding`` adds to the report's surprising facts (unexpected, not a
        failure), or None; ordered among them by ``surprise_rank``."""
        return None

    @classmethod
    def standin_key(cls, finding: Finding) -> str | None:
        """The metric whose exact zeros ``finding`` found to be stand-ins for non-finite steps
        (the key metrics leave them out), or None."""
        return None

    @classmethod
    def nonfinite_observed(cls, finding: Finding) -> bool:
        """Whether ``finding`` is a non-finite value observed in a loss (as strong as a crash
        signature whatever the number of points before it, ``verdict.evidence.confidence``)."""
        return False

    @classmethod
    def nonfinite_role(cls, finding: Finding) -> str | None:
        """The role (:class:`~mlaudit_core.roles.Role` value) of the series whose non-finite values
        ``finding`` reports, or None when it reports none (the loss-scaling rule V19g asks it)."""
        return None

    # --- what a CI report says -----------------------------------------------------
    @classmethod
    def ci_answers(cls, finding: Finding) -> dict[str, list[dict]]:
        """What ``finding`` adds to the canonical answers of a CI report
        (``ci.schema_out.answer_bag``), by section: ``calculations``, ``failing``, ``passing``,
        ``gates``, ``claims``, ``environment``; each a list of rows."""
        return {}

    @classmethod
    def recomputed_gates(cls, finding: Finding) -> list[tuple[str | None, dict]]:
        """Every gate ``finding`` recomputed, passing or not, as (metric or expression, check with
        its ``kind``, ``path``, ``line``, ``passed`` and ``analysis``) (``ci.github.step_summary``'s
        table)."""
        return []

    @classmethod
    def failing_gates(cls, finding: Finding) -> list[tuple[str | None, dict]]:
        """The failing gates ``finding`` recomputed, as (metric or expression, check with its
        ``path``, ``line``, ``kind``, ``detail``) (``ci.github.failing_gates``)."""
        return []

    # --- documentation ---------------------------------------------------------
    @classmethod
    def doc(cls) -> str:
        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def summary(cls) -> str:
        return cls.doc().splitlines()[0] if cls.doc() else ""

    @classmethod
    def param_table(cls) -> list[tuple[str, str, Any, str]]:
        """(name, type, default, description) for each parameter."""
        rows = []
        for name, f in cls.Params.model_fields.items():
            ann = getattr(f.annotation, "__name__", str(f.annotation))
            rows.append((name, ann, f.default, f.description or ""))
        return rows


def registry() -> dict[str, type[Detector]]:
    """All registered detectors by code, built-ins and entry-point plugins, sorted by code."""
    from . import load_builtin_and_plugins

    load_builtin_and_plugins()
    return dict(sorted(_REGISTRY.items()))


def detector_for(code: str) -> type[Detector]:
    """The registered detector of ``code``; the base class (which knows nothing: no remedies,
    no marks, no answers) for a code no detector registered."""
    from . import load_builtin_and_plugins

    load_builtin_and_plugins()
    return _REGISTRY.get(code, Detector)
