"""The verdict policy as a table: one :class:`Rule` per row, tried in precedence order.

Each rule states the findings it needs (``needs``, in words, and ``codes``), the outcomes and
causes it can give, its precedence, a test (``when``) and its own cases (``cases``: small
finding sets with the verdict the rule must give, or ``None`` where it must not fire).
``tests/test_verdict_policy.py`` enumerates :data:`POLICY` and runs every case; ``mlaudit`` docs
print the table (docs/index.md).

The order encodes the "first broken layer" principle of the diagnosis workflow: a hardware or
memory signature explains more than the curves before it; non-finite values explain more than a
plateau; systems problems set the outcome only when the learning itself is healthy; a run that
stopped before its planned end is ``crashed`` (or ``running``) unless a learning failure explains
more; and with no judgeable training signal the verdict is ``unknown``. The first rule that
matches sets outcome and cause; every other finding stays as secondary evidence. Confidence is
not part of a rule: :func:`.evidence.confidence` derives it from what was examined.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..detectors._context import Chance, finetune_evidence
from ..detectors.base import detector_for, registry
from ..plan import NORMAL_END
from ..report import Cause, Finding, LogEvidence, Outcome, SeriesEvidence, Severity
from ..roles import Role, as_fraction, has_class_chance, is_higher_better, normalise_key
from ..rundata import RunData, RunStatus
from ..signal import fmt
from ..signatures import match_line
from .evidence import FAR_ABOVE, FAR_BELOW_LR, MIN_TREND_POINTS, Basis, Ending, LrAssessment
from .granularity import HeldoutSize, heldout_size

_CORRECTNESS_EXC = (
    "ValueError",
    "TypeError",
    "KeyError",
    "IndexError",
    "AttributeError",
    "AssertionError",
    "NameError",
    "NotImplementedError",
    "ZeroDivisionError",
    "ImportError",
    "ModuleNotFoundError",
    "FileNotFoundError",
    "UnboundLocalError",
)
#: A launcher's report that a child process failed; with no child traceback in the log, why it failed is not there.
_LAUNCHER_EXC = ("ChildFailedError",)


@dataclass
class Ctx:
    """What a rule sees: the run, findings by code, and the evidence assessment."""

    run: RunData
    by_code: dict[str, list[Finding]]
    basis: Basis
    ending: Ending
    precision: list[str]
    lr: LrAssessment
    #: crash findings left out because a later end-of-training line follows them (evidence.superseded_crash)
    superseded: list[str] = field(default_factory=list)

    def get(self, code: str, min_sev: Severity = Severity.INFO) -> Finding | None:
        for f in self.by_code.get(code, []):
            if f.severity.rank >= min_sev.rank:
                return f
        return None

    def train_nonfinite(self) -> Finding | None:
        for f in self.by_code.get("LI001", []):
            if f.facts.get("role") == Role.TRAIN_LOSS.value:
                return f
        return None


@dataclass
class Decision:
    outcome: Outcome
    cause: Cause
    summary: str
    primary: Finding | None = None
    rule: str = ""


@dataclass(frozen=True)
class Case:
    """One example of a rule: findings ``(code, severity, facts)``, run facts, and the verdict
    ``(outcome, cause)`` the rule gives, or ``None`` where it must not fire."""

    name: str
    findings: tuple[tuple[str, str, dict[str, Any]], ...] = ()
    expect: tuple[str, str] | None = None
    status: str = "finished"
    series: dict[str, tuple[float, ...]] = field(default_factory=dict)
    params: dict[str, str] = field(default_factory=dict)
    console: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Rule:
    """One row of the policy table."""

    id: str
    name: str
    precedence: int
    needs: str
    outcomes: tuple[Outcome, ...]
    causes: tuple[Cause, ...]
    when: Callable[[Ctx], Decision | None]
    cases: tuple[Case, ...] = ()
    codes: tuple[str, ...] = ()

    def apply(self, c: Ctx) -> Decision | None:
        d = self.when(c)
        if d is not None:
            d.rule = self.id
        return d


# --- rule tests ---------------------------------------------------------------------------------


def _ended_by_preemption(c: Ctx, f: Finding) -> bool:
    """A crash signature explained by the job's own termination (RT003: SIGTERM / preemption)."""
    return c.get("RT003") is not None and detector_for(f.code).stopped_from_outside(f)


def _maintainer_fixed_code(c: Ctx) -> bool:
    """Whether a maintainer of the thread states the project's code was fixed (a submodule or version
    bump inside the project is its code, not the user's environment)."""
    from .statements import confirmed_fix

    got = confirmed_fix(c.run.params)
    return got is not None and got[0] == "code"


def _first_nonfinite(c: Ctx) -> Finding | None:
    """The first warning-or-worse finding of the non-finite detectors, in their
    ``nonfinite_rank`` order; else ``None``."""
    ranked = sorted(
        (r, code) for code in c.by_code if (r := detector_for(code).nonfinite_rank) is not None
    )
    return next(
        (
            f
            for _, code in ranked
            for f in c.by_code[code]
            if f.severity.rank >= Severity.WARNING.rank
        ),
        None,
    )


def _any_error(c: Ctx) -> bool:
    """Whether any finding of the run is an error or worse."""
    return any(f.severity.rank >= Severity.ERROR.rank for fs in c.by_code.values() for f in fs)


def _environment_fixed(c: Ctx) -> Decision | None:
    """A failure (a non-finite loss or message, a crash with an exception) whose report states that it
    went away when only the software stack or the machine changed (:func:`.statements.environment_fix`:
    another framework / CUDA / cuDNN version, the same job on another GPU): the environment is the
    cause, whatever the symptom looked like (a NaN reads as a learning-rate or data problem on its own)."""
    from .statements import stated_cause

    got = stated_cause(c.run.params)
    said = got[1] if got is not None and got[0] == "environment" else None
    if said is None or _maintainer_fixed_code(c):
        return None
    nan = _first_nonfinite(c)
    crash = c.get("RT005", Severity.ERROR)
    from .statements import pasted_nonfinite

    pasted = (
        pasted_nonfinite([x.text for x in c.run.console]) if nan is None and crash is None else None
    )
    if nan is None and crash is None and pasted is None:
        return _environment_fixed_unseen(c, said)
    return _environment_fixed_failure(nan, crash, pasted, said)


def _environment_fixed_unseen(c: Ctx, said: str) -> Decision | None:
    """:func:`_environment_fixed` with no non-finite value and no crash: ``None`` when a curve or
    an error is there to judge; a crash when the text states the run's memory ran out or its process was
    killed (:func:`_memory_stated`), or when the confirmed fix gave the job host memory
    (:func:`.statements.memory_given`: more RAM, swap): the resource the fix gave the job is the one whose
    exhaustion ended it; else the unknown outcome of a prose-only report."""
    if c.basis.judgeable or _any_error(c):
        return None  # a curve or another failure signature is judged by its own rule
    stated = _memory_stated(c)
    if stated is not None:
        return stated  # the memory that ran out is the confirmed cause, and its outcome is a crash
    from .statements import memory_given

    if memory_given(said):
        return Decision(
            Outcome.CRASHED,
            Cause.INFRA_RUNTIME,
            "No curve or error was given, and the report states the failure went away when the job was given "
            f"more host memory ({said}): the run's memory ran out, and a run whose memory runs out is killed "
            "(the kernel's out-of-memory killer prints a bare 'Killed', no traceback). Give the job the RAM or "
            "swap the fix gave it, or lower what it holds in memory (loader workers, cached data, evaluation "
            "buffers).",
        )
    # a report in prose only (a hang, a stall, an error not pasted): the outcome is the one its text
    # states (a kill or memory exhaustion, a symptom), else not in the data; the cause is the one the
    # thread confirmed
    outcome, seen = _stated_outcome(c)
    return Decision(
        outcome,
        Cause.INFRA_RUNTIME,
        f"No curve or error was given ({seen}), and the report states "
        f"that the failure went away with only the software stack or the machine changed ({said}): the "
        "environment (a driver, a framework, CUDA/cuDNN version or the GPU) is the cause, not the model "
        "or the data. Pin the working versions; report the failing combination upstream.",
    )


def _stated_outcome(c: Ctx) -> tuple[Outcome, str]:
    """The outcome a report's text states, with the words that say so: crashed when it states the memory
    ran out or the process was killed (:func:`.statements.stated_memory_exhaustion`), else the reporter's
    symptom (:func:`.stated_symptom.stated_symptom`), else unknown ("the outcome is not judged from
    figures")."""
    from ..reference_gap import text_lines
    from .stated_symptom import stated_symptom
    from .statements import stated_memory_exhaustion

    lines = text_lines(c.run)
    mem = stated_memory_exhaustion(lines)
    if mem is not None:
        return Outcome.CRASHED, f'the report states the run died: "{mem[1]}"'
    got = stated_symptom(lines)
    if got is not None and got[0] in _SYMPTOM and not _AT_ZERO.search(got[1]):
        return _SYMPTOM[got[0]][0], f'the report states the symptom: "{got[1]}"'
    return Outcome.UNKNOWN, "the outcome is not judged from figures"


def _environment_fixed_failure(
    nan: Finding | None, crash: Finding | None, pasted: str | None, said: str
) -> Decision:
    """:func:`_environment_fixed`'s decision for a non-finite loss (``nan`` or a ``pasted``
    record) or a ``crash`` that went away with only the environment changed (``said``)."""
    what = "the loss turned non-finite" if nan is not None or pasted else "the run crashed"
    shown = (nan or crash).message if nan or crash else f'the pasted record "{pasted}"'  # type: ignore[union-attr]
    return Decision(
        Outcome.DIVERGED if nan is not None or pasted else Outcome.CRASHED,
        Cause.INFRA_RUNTIME,
        f"{what[0].upper()}{what[1:]} ({shown}), and the report states that the same job stopped failing "
        f"with only the software stack or the machine changed ({said}): the environment (a framework, "
        "CUDA/cuDNN or driver version, or the GPU) is the cause, not the model or the data. Pin the "
        "working versions; report the failing combination upstream.",
        nan or crash,
    )


def _confirmed_fix_cause(kind: str) -> tuple[Cause, str]:
    """The cause and the advice of :func:`_thread_confirmed_fix` for the ``kind`` of the confirmed fix."""
    if kind == "precision":
        cause = Cause.DATA_CONFIG
        why = (
            "the reduced precision is the cause (an fp16/int8 overflow or underflow), not the model or "
            "the data; train in fp32 or bf16, or resume from the last finite checkpoint with the fix"
        )
    elif kind == "learning_rate":
        cause = Cause.MODEL_CONVERGENCE
        why = (
            "the update size is the cause (the learning rate too high for the start or the batch); lower "
            "it or ramp it with a warm-up, and resume from the last finite checkpoint"
        )
    elif kind == "data":
        cause = Cause.DATA_CONFIG
        why = (
            "the data is the cause (a label or annotation out of its valid range, such as a box coordinate "
            "below 0, makes the loss non-finite); validate every label's range before training"
        )
    else:
        cause = Cause.CORRECTNESS_BUG
        why = "a bug in the code produced the non-finite values; update to the fixed code and rerun"
    return cause, why


def _thread_stated_nonfinite(c: Ctx) -> Decision | None:
    """A non-finite loss (a finding, or a pasted record: :func:`.statements.pasted_nonfinite`) whose
    report's thread states its cause (:func:`.statements.stated_cause`) as the code or a setting / the
    data, with no confirmed fix: the run diverged and the thread's cause is the cause (a NaN alone
    does not tell a bad input from a defect or a too-large step; the thread does). With no such sentence,
    the statement that settled the thread (:func:`.resolution.thread_resolution`: a maintainer's
    explanation, or one by whoever found the cause: ``I found that the problem is caused by loading wrong
    pre-training weights``) names it the same way. ``None`` otherwise (the environment is V00's; a thread
    that says nothing failed does not explain a NaN)."""
    from .resolution import thread_resolution
    from .statements import pasted_nonfinite, stated_cause

    got = stated_cause(c.run.params) or thread_resolution(c.run.params)
    if got is None or got[0] not in ("code", "config", "learning_rate"):
        return None
    nan = _first_nonfinite(c)
    pasted = pasted_nonfinite([x.text for x in c.run.console]) if nan is None else None
    if nan is None and pasted is None:
        return None
    kind, said = got
    cause, why = _STATED_CAUSE[kind]
    if nan is not None and _heldout_only_nonfinite(c):
        return Decision(
            Outcome.UNKNOWN,
            cause,
            f"Only held-out values are non-finite ({nan.message}); no training loss is shown non-finite, so "
            "the training is not shown diverging (an evaluation that divides by an empty count or batch "
            f'gives NaN on its own), and the report\'s thread states the cause, in the sentence "{said}": '
            f"{why}.",
            nan,
        )
    head = (
        f"The loss turned non-finite ({nan.message})"
        if nan is not None
        else f'The pasted record shows a non-finite loss ("{pasted}")'
    )
    return Decision(
        Outcome.DIVERGED,
        cause,
        f'{head}, and the report\'s thread states the cause, in the sentence "{said}": {why}.',
        nan,
    )


def _heldout_only_nonfinite(c: Ctx) -> bool:
    """Whether every warning-or-worse finding of the non-finite detectors is on a held-out series
    (:func:`mlaudit_core.roles.parse_name` split ``eval``: ``val/loss``, ``Validation acc``) and the run
    has no training series with a non-finite value."""
    from ..roles import parse_name

    keys = [
        str(e.metric)
        for code in c.by_code
        if detector_for(code).nonfinite_rank is not None
        for f in c.by_code[code]
        if f.severity.rank >= Severity.WARNING.rank
        for e in f.evidence
        if isinstance(e, SeriesEvidence)
    ]
    if not keys or any(parse_name(k).split != "eval" for k in keys):
        return False
    return not any(
        parse_name(k).split != "eval" and not bool(np.isfinite(c.run.series(k).values).all())
        for k in c.run.metrics.keys
    )


def _thread_confirmed_fix(c: Ctx) -> Decision | None:
    """A failure whose report's thread confirms the fix in a sentence (:func:`.statements.confirmed_fix`):
    the reduced precision turned off (data_config: the NaN comes from the precision setting) or a smaller
    or ramped learning rate (model_convergence). With a non-finite loss or message the run diverged; with
    no judgeable curve at all (a prose-only report) the outcome stays unknown and the cause is the
    confirmed one; a judgeable curve or a failure signature without a non-finite value is left to its
    rules."""
    from .statements import confirmed_fix

    got = confirmed_fix(c.run.params)
    if got is None:
        return _thread_stated_nonfinite(c)
    kind, said = got
    from .statements import expected_behaviour

    nan = _first_nonfinite(c)
    from .statements import pasted_nonfinite

    pasted = pasted_nonfinite([x.text for x in c.run.console]) if nan is None else None
    crash = c.get("RT005", Severity.ERROR) if kind == "code" else None
    if crash is not None and nan is None:
        return Decision(
            Outcome.CRASHED,
            Cause.CORRECTNESS_BUG,
            f"The run crashed ({crash.message}), and a maintainer states the project's code was fixed, in "
            f'the sentence "{said}": a bug in the code, not the machine; update to the fixed code and rerun.',
            crash,
        )
    if nan is None and pasted is None and (c.basis.judgeable or kind == "code" or _any_error(c)):
        return None  # a curve or a failure signature (a loss-scale floor, a crash) is judged by its rule
    if nan is None and pasted is None and expected_behaviour(c.run.params) is not None:
        return None  # the maintainer says nothing failed: a change that altered the curve fixed no failure
    cause, why = _confirmed_fix_cause(kind)
    if kind == "learning_rate" and nan is None and pasted is None and _lr_not_scaled(c, said):
        cause, why = _RESOLVED_CAUSE["lr_scale"]
    fix = {
        "precision": "full precision",
        "learning_rate": "a smaller or ramped learning rate",
        "code": "a change to the project's code",
        "data": "a correction of the data's labels or annotations",
    }[kind]
    head = (
        f"The loss turned non-finite ({nan.message})"
        if nan is not None
        else f'The pasted record shows a non-finite loss ("{pasted}")'
        if pasted is not None
        else "No curve was given (not judged from figures)"
    )
    outcome = Outcome.DIVERGED if nan is not None or pasted is not None else Outcome.UNKNOWN
    if outcome is Outcome.UNKNOWN:
        outcome, seen = _stated_training_outcome(c)
        head += f"; {seen}" if outcome is not Outcome.UNKNOWN else ""
    return Decision(
        outcome,
        cause,
        f'{head}, and the report\'s thread confirms the fix was {fix}, in the sentence "{said}": {why}.',
        nan,
    )


#: A held-out split named in a symptom's sentence: what it states of a validation or test figure says
#: nothing of the training's own course.
_HELDOUT_NAMED = re.compile(r"\b(?:val\w*|valid\w*|test\w*|eval\w*|dev)\b", re.I)


def _stated_training_outcome(c: Ctx) -> tuple[Outcome, str]:
    """The outcome a prose-only report states of its training (:func:`_stated_outcome`: a crash stated,
    else the reporter's symptom), unknown when the symptom's sentence names a held-out split (a NaN
    validation loss does not show the training diverging)."""
    outcome, seen = _stated_outcome(c)
    if outcome is not Outcome.CRASHED and _HELDOUT_NAMED.search(seen):
        return Outcome.UNKNOWN, ""
    return outcome, seen


def _hardware(c: Ctx) -> Decision | None:
    hw = c.get("RT007", Severity.ERROR)
    if hw:  # the first broken layer: an OOM or CUDA error after a hardware fault is its symptom
        return Decision(
            Outcome.CRASHED, Cause.INFRA_RUNTIME, f"The run crashed on {hw.message}.", hw
        )
    return None


def _memory_leak(c: Ctx) -> Decision | None:
    """V01b: the run ended on memory (an out-of-memory, a kill or a data-loader worker's death at error, not
    explained by a preemption; or, with no such signature, an out-of-memory or a kill stated in a sentence:
    :func:`.statements.stated_memory_exhaustion`), and the memory grew over the run: a logged memory series
    still rising steadily at its end (:func:`.memory_growth.logged_memory_growth`) or a sentence stating
    the growth or naming a leak, with no one in the thread explaining it by the job's size
    (:func:`.memory_growth.stated_memory_growth`); or, for an out-of-memory, the thread confirms the fix was
    to stop keeping autograd graphs (:func:`.memory_growth.graph_release_fix`: ``torch.no_grad()`` around
    evaluation, ``.item()`` for logged values). Growth, not size: a leak in the training code (the
    memory would run out on any machine, later on a larger one), correctness_bug."""
    from ..reference_gap import text_lines
    from .memory_growth import graph_release_fix, logged_memory_growth, stated_memory_growth
    from .statements import stated_memory_exhaustion

    ends = sorted(
        (d for d in registry().values() if d.memory_end_rank is not None),
        key=lambda d: (d.memory_end_rank, d.code),
    )
    crash = next(
        (
            f
            for d in ends
            if (f := c.get(d.code, Severity.ERROR)) is not None and not _ended_by_preemption(c, f)
        ),
        None,
    )
    lines = text_lines(c.run)
    if crash is not None:
        ended = crash.message
    else:
        said = stated_memory_exhaustion(lines)
        if said is None or c.get("RT003") is not None:
            return None
        ended = f'"{said[1]}"'
    stated = stated_memory_growth(lines, c.run.params)
    if stated is not None and stated[0] == "capacity":
        return None  # growth stated, and explained by the job's size in the thread
    if stated is not None:
        grew = (
            f'the report states the memory grew over the run ("{stated[1]}")'
            if stated[0] == "growth"
            else f'the report names a memory leak ("{stated[1]}")'
        )
    else:
        logged = logged_memory_growth(c.run)
        released = (
            graph_release_fix(c.run.params)
            if crash is not None and registry()[crash.code].out_of_memory
            else None
        )
        if logged is None and released is not None:
            return Decision(
                Outcome.CRASHED,
                Cause.CORRECTNESS_BUG,
                f"The run ran out of memory ({ended}), and the thread confirms the fix was to stop keeping "
                f'autograd graphs ("{released}"): the memory was held by graphs the code did not need (an '
                "evaluation run with gradients on, values logged as tensors), a bug in the code, not a device "
                "too small. Run evaluation under torch.no_grad() and model.eval(), log loss.item().",
                crash,
            )
        if logged is None:
            return None
        key, first, start, last = logged
        grew = (
            f"{key} was still rising steadily at the end of the run ({fmt(start)} -> {fmt(last)} over its "
            f"last quarter, from {fmt(first)} at its first point)"
        )
    return Decision(
        Outcome.CRASHED,
        Cause.CORRECTNESS_BUG,
        f"The run ran out of memory ({ended}), and {grew}: memory that grows until it runs out is a leak "
        "in the training code, not a job too large for the machine (a larger machine or a smaller batch "
        "only postpones the crash). Look for references kept across iterations: losses or outputs "
        "accumulated as tensors (log loss.item(), not loss), lists that grow every step, objects recreated "
        "every epoch (data generators, callbacks); compare memory at the start of two epochs to confirm.",
        crash,
    )


def _nonfinite_before_native_crash(c: Ctx) -> bool:
    """Whether the run's loss was non-finite before its segmentation fault (a finding, or a pasted record:
    :func:`.statements.pasted_nonfinite`): native code that crashes on NaN/inf values (a kernel, a C++
    post-processing step) is the divergence's consequence, not its cause (report b7-12: detectron2's
    loss_dict with a NaN loss_cls, then 'exit code 139 (interrupted by signal 11: SIGSEGV)')."""
    from .statements import pasted_nonfinite

    return (
        _first_nonfinite(c) is not None
        or pasted_nonfinite([x.text for x in c.run.console]) is not None
    )


#: A collective watchdog timeout this short (ms) is a setting no collective over real data meets: torch
#: 2.13.0's default process-group timeout is 30 min (torch/distributed/constants.py default_pg_timeout) and
#: 10 min for NCCL (torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp kProcessGroupNCCLDefaultTimeout,
#: default_pg_nccl_timeout in CUDA builds), and a first all-reduce (the communicator's set-up) alone can
#: take longer than a second (report b43-01: ``Timeout(ms)=1 ran for 90 milliseconds``).
COLLECTIVE_TIMEOUT_SETTING_MS = 1000


def _collective_timeout_set_too_short(f: Finding) -> Decision | None:
    """RT002's watchdog timeout (its ``timeout_ms`` fact, which only RT002 sets) printed below
    :data:`COLLECTIVE_TIMEOUT_SETTING_MS`: the configured timeout (``init_process_group(timeout=...)``), not
    the network or a hung rank, ended the run."""
    tmo = f.facts.get("timeout_ms")
    if tmo is None or tmo >= COLLECTIVE_TIMEOUT_SETTING_MS:
        return None
    return Decision(
        Outcome.CRASHED,
        Cause.DATA_CONFIG,
        f"The run crashed because a collective operation timed out: {f.message}. The watchdog's timeout is "
        f"{tmo} ms, far below what any collective over real data takes (torch's default is 10 minutes): the "
        "process group's timeout setting ended the run, not the network or a hung rank. Set the timeout back "
        "to the default (or minutes) in init_process_group.",
        f,
    )


def _crash_infra(c: Ctx) -> Decision | None:
    for code, what in (
        ("RT001", "it ran out of memory"),
        ("RT002", "a collective operation timed out"),
        ("RT004", "a data-loader worker died"),
        ("RT008", "a storage write or read failed"),
        ("RT010", "it was killed from outside"),
    ):
        f = c.get(code, Severity.ERROR)
        if f and not _ended_by_preemption(c, f):
            if (short := _collective_timeout_set_too_short(f)) is not None:
                return short
            if f.facts.get("kind") == "sigsegv":
                if _nonfinite_before_native_crash(c):
                    continue  # the loss was non-finite first: the divergence rules read it
                what = "native code crashed"
            where = f.facts.get("code_path")
            extra = f" in the {where} code path" if where and where != "unknown" else ""
            return Decision(
                Outcome.CRASHED,
                Cause.INFRA_RUNTIME,
                f"The run crashed because {what}{extra}: {f.message}.",
                f,
            )
    return None


def transient_nonfinite(c: Ctx) -> Finding | None:
    """LI001 on the training loss where the loss came back: fewer than half of the points after the
    onset are non-finite and the last point is finite (a skipped batch, HF/YOLO logging a NaN step),
    so the run did not diverge. A last point that is non-finite reads the same when the loss already
    came back from a non-finite stretch at least as long as the final one and a task metric rose
    beyond noise from the onset, with its best after it (:func:`task_metric_contradicts`): one more sporadic point of the kind
    the run recovered from, while the model kept improving at its task, is no divergence (own corpus
    f19b2-18: a YOLOv8x ``train/box_loss`` inf at 4 isolated epochs of 100, the last among them,
    while mAP50 rose to its best at epoch 85; f10b2-15 and csv10 the same with a finite last point)."""
    f = c.train_nonfinite()
    if f is None or f.facts.get("all_after_nonfinite"):
        return None
    after = (f.facts.get("n_points") or 0) - (f.facts.get("index") or 0)
    if after <= 0 or (f.facts.get("n_nonfinite") or 0) / after >= 0.5:
        return None
    s = (
        c.run.metrics.series(f.facts["key"]).by_step()
        if f.facts.get("key") in c.run.metrics
        else None
    )
    if s is None or not len(s):
        return None
    if not np.isfinite(s.values[-1]) and not _sporadic_nonfinite_end(c, s.values, f):
        return None
    return f


def _sporadic_nonfinite_end(c: Ctx, values: np.ndarray, f: Finding) -> bool:
    """The series ends non-finite, but its final non-finite stretch is no longer than one it already
    came back from, and a task metric rose from the first onset to a best after it: the final stretch is
    one more of the sporadic non-finite points, not the start of a divergence."""
    bad = ~np.isfinite(np.asarray(values, dtype=np.float64))
    stretches: list[int] = []
    n = 0
    for b in bad:
        if b:
            n += 1
        elif n:
            stretches.append(n)
            n = 0
    if not stretches or n > max(stretches):
        return False
    onset = float(f.facts.get("first_step") or 0)
    return task_metric_contradicts(c.run, onset, near_best=False) is not None


def _transient(c: Ctx) -> Decision | None:
    """V05b; not when a task metric rose beyond noise from the onset to a best after it
    (:func:`task_metric_contradicts`):
    a non-finite value that came back while the model kept improving at its task is a logging or
    skipped-step artefact, not instability (own corpus f10b2-15: one 'inf' epoch mean of a YOLO box
    loss under AMP, epoch 5 of 31, while mAP50-95 rose 0.24 -> 0.70)."""
    f = transient_nonfinite(c)
    if f is None:
        return None
    if (
        task_metric_contradicts(c.run, float(f.facts.get("first_step") or 0), near_best=False)
        is not None
    ):
        return None
    return Decision(
        Outcome.UNSTABLE,
        Cause.INCONCLUSIVE,
        f"The training loss was non-finite at {f.facts.get('n_nonfinite')} of "
        f"{f.facts.get('n_points')} points from step {f.facts.get('first_step')} on, but came back "
        "and ended finite: transient non-finite values (a skipped or bad batch), not a divergence.",
        f,
    )


#: A training loss at the onset of non-finite gradient norms at least this many times its last value
#: before: 10x, where OP002 calls 2x-10x spikes of a run that recovers.
GRAD_NORM_JUMP = 10.0


def _nonfinite_grad_norm(c: Ctx) -> Decision | None:
    """The gradient norm is non-finite at every logged point from its onset to the end (2 or more)
    while the training loss, still finite, jumped :data:`GRAD_NORM_JUMP` x at the onset or ends at
    exactly 0: the weights took a non-finite update and the loss that follows is not a measurement
    (HF Trainer logs 0.0 once the model's outputs are NaN). One non-finite grad norm that comes back
    finite is a skipped fp16 step (dynamic loss scaling), not this."""
    gk, lk = c.run.key_for(Role.GRAD_NORM), c.run.key_for(Role.TRAIN_LOSS)
    if not gk or not lk:
        return None
    g = c.run.metrics.series(gk).by_step()
    bad = ~np.isfinite(g.values)
    if bad.sum() < 2 or not bad[-1]:
        return None
    i0 = int(np.argmax(bad))
    if not bad[i0:].all() or i0 == 0:
        return None
    onset = int(g.steps[i0])
    loss = c.run.metrics.series(lk).by_step()
    before = loss.values[(loss.steps < onset) & np.isfinite(loss.values)]
    after = loss.values[loss.steps >= onset]
    if not before.size or not after.size or not np.isfinite(after).all():
        return None
    last = float(before[-1])
    jumped = last > 0 and float(after.max()) >= GRAD_NORM_JUMP * last
    if not (jumped or after[-1] == 0.0):
        return None
    cause = Cause.DATA_CONFIG if c.precision else Cause.MODEL_CONVERGENCE
    why = (
        f"with reduced precision in use ({c.precision[0]}): an fp16 overflow that loss scaling did not "
        "contain"
        if c.precision
        else "an optimisation divergence (learning rate, warm-up, clipping)"
    )
    return Decision(
        Outcome.DIVERGED,
        cause,
        f"{gk} was non-finite at every logged point from step {onset} to the end while {lk} went "
        f"{fmt(last)} -> {fmt(float(after.max()))}"
        + (" and then exactly 0" if after[-1] == 0.0 else "")
        + f": the weights took a non-finite update and the later loss is not a measurement; {why}.",
    )


def _reward_trained(run: RunData) -> str | None:
    """The key of the reward a policy trained from rewards logged (:func:`roles.plain_reward`, >=
    :data:`MIN_TREND_POINTS` finite points, not constant), else ``None``. Such a run's loss is a
    surrogate of the reward, not a measure of fit: GRPO's loss is exactly 0 at on-policy steps by
    construction (advantages normalised within each group, no KL term), so a zero loss there measures
    nothing wrong and a flat one is no plateau; the reward is the task metric (own corpus f17b1-11: TRL
    GRPO trainer_state, loss 0 at 792 of 1000 records while the reward rose 0.18 -> 0.31)."""
    from ..roles import plain_reward

    for k in run.metrics.keys:
        if plain_reward(k):
            v = run.metrics.series(k).finite().values
            if v.size >= MIN_TREND_POINTS and float(np.ptp(v)) > 0:
                return k
    return None


def _zero_grad_norm(run: RunData) -> str | None:
    """The key of a logged gradient norm that is exactly 0 at every one of its >=
    :data:`MIN_TREND_POINTS` finite points, else ``None``. Beside a loss of exactly 0 from its first
    point it says the loss sends no gradient at all (own corpus f20b2-13: an HF LoRA checkpoint with
    loss 0.0 and grad_norm 0.0 at all 25 logs; f6b3-02: an OLMo run whose grad norm is exactly 0)."""
    g = run.key_for(Role.GRAD_NORM)
    if not g:
        return None
    v = run.metrics.series(g).finite().values
    return g if v.size >= MIN_TREND_POINTS and bool(np.all(v == 0.0)) else None


def _zero_loss(c: Ctx) -> Decision | None:
    """The training loss is exactly 0.0 at its last points: nothing is being measured (labels
    leaked into inputs, a fully masked loss, templated targets); exactly 0 from the first point means
    nothing was ever learned from the data."""
    k = c.run.key_for(Role.TRAIN_LOSS)
    if not k:
        return None
    s = c.run.metrics.series(k).by_step().finite()
    if len(s) < MIN_TREND_POINTS or not np.all(s.values[-3:] == 0.0):
        return None
    if _reward_trained(c.run) is not None:
        return None
    from_start = bool(s.values[0] == 0.0)
    dead = _zero_grad_norm(c.run) if from_start and np.all(s.values == 0.0) else None
    if dead is not None:
        return Decision(
            Outcome.UNDERFIT,
            Cause.CORRECTNESS_BUG,
            f"{k} and {dead} are exactly 0 at every logged point from the first: no gradient reaches "
            "the weights, so nothing is trained (every label masked out of the loss, or the loss not "
            "connected to the trainable parameters); a code fault, not a property of the data.",
        )
    grown = _grown_before_zeros(s.steps, s.values)
    if grown is not None:
        step0, peak, low = grown
        return Decision(
            Outcome.DIVERGED,
            Cause.MODEL_CONVERGENCE,
            f"{k} grew to {fmt(peak)} ({fmt(peak / low, 3)}x its best {fmt(low)}) and then sat at exactly 0 "
            f"from step {step0} to the end: a loss does not fall from there to exactly zero; the tracker "
            "stored the non-finite values that followed as 0.0 (ClearML reports NaN/inf as 0.0 by "
            "default). The run diverged.",
        )
    if not from_start and _rounded_to_zero(s.values):
        return None
    snapped = _snapped_to_zero_under_precision(c, s.values) if not from_start else None
    if snapped is not None:
        return snapped
    outcome = Outcome.PLATEAUED if from_start else Outcome.SUCCEEDED
    when = (
        "from its first logged point"
        if from_start
        else f"from step {int(s.steps[np.argmax(s.values == 0.0)])}"
    )
    return Decision(
        outcome,
        Cause.DATA_CONFIG,
        f"{k} is exactly 0 {when} to the end: a loss of exactly zero measures nothing (targets "
        "leaked into the inputs, a fully masked loss, templated data); the training result cannot "
        "be trusted until the data and the loss are checked.",
    )


#: Decimal places tried when inferring the precision a series was printed at (:func:`_print_resolution`):
#: consoles and trackers that round print 2 to 6 (``f"{loss:.4f}"``; the Hugging Face Trainer's
#: ``round(loss, 4)``).
MAX_PRINT_DECIMALS = 6
#: Print-resolution units (``10**-d`` at ``d`` decimals) within which the nonzero values between a
#: printed loss's zeros lie (their median) when the zeros are the loss rounded away, not a loss of zero.
ROUNDED_ZERO_UNITS = 10


def _print_resolution(v: np.ndarray) -> float | None:
    """The resolution ``10**-d`` a series was printed at: the fewest decimal places ``d`` (up to
    :data:`MAX_PRINT_DECIMALS`) that hold every value exactly; None when the values need more (full
    float precision, not printed text)."""
    for d in range(MAX_PRINT_DECIMALS + 1):
        scaled = v * 10.0**d
        if np.all(np.abs(scaled - np.round(scaled)) <= 1e-6 * np.maximum(1.0, np.abs(scaled))):
            return 10.0**-d
    return None


def _rounded_to_zero(v: np.ndarray) -> bool:
    """Zeros of a printed loss that sits at the edge of the last decimal it prints: the values are
    rounded to a resolution (:func:`_print_resolution`) and after the first zero the loss keeps coming
    back to nonzero values, typically (their median) within :data:`ROUNDED_ZERO_UNITS` units of it
    (``0.0000, 0.0001, 0.0000`` at 4 decimals). A loss of exactly zero (a masked loss, leaked targets) is zero at every later point; one
    that flickers between 0 and the last printed digit is a positive loss of about half a unit (own
    corpus f15b1-11: a bit decoder's loss printed with 4 decimals, 0.0000 first at epoch 278,200 of
    500,000 and 0.0001 at 1,185 later rows; own ts05, HF Trainer ``round(loss, 4)``, is 0.0 at every
    point from step 970 and stays a zero loss)."""
    zeros = np.flatnonzero(v == 0.0)
    if not zeros.size:
        return False
    after = v[zeros[0] :]
    back = after[after != 0.0]
    res = _print_resolution(v)
    return (
        bool(back.size)
        and res is not None
        and res < 1.0
        and float(np.median(np.abs(back))) <= ROUNDED_ZERO_UNITS * res
    )


#: A loss this large or larger that reads exactly 0 at the next logged point did not get there by learning.
ZERO_SNAP_FROM = 0.01


def _snapped_to_zero_under_precision(c: Ctx, v: np.ndarray) -> Decision | None:
    """With reduced precision in use, a training loss that goes from >= :data:`ZERO_SNAP_FROM` to exactly 0.0
    from one logged point to the next and stays there: no optimiser brings a loss from there to exactly zero
    in one interval; the half-precision forward pass or loss scaling broke it (values under- or
    overflowing fp16, skipped updates logged as 0): diverged, data_config (report b18-02: Qwen-VL on a
    V100 in fp16, loss 3.8462 then exactly 0.0 from step 2; bf16 on an A100 trains)."""
    if not c.precision:
        return None
    nz = np.flatnonzero(v != 0.0)
    if not len(nz) or nz[-1] + 1 >= len(v) or float(abs(v[nz[-1]])) < ZERO_SNAP_FROM:
        return None
    i = int(nz[-1])
    return Decision(
        Outcome.DIVERGED,
        Cause.DATA_CONFIG,
        f"The training loss went from {fmt(float(v[i]))} to exactly 0 at the next logged point and stayed "
        f"there ({len(v) - i - 1} points), with reduced precision in use ({c.precision[0]}): a loss does not "
        "reach exactly zero in one interval by learning; the half-precision computation broke it (fp16 "
        "under- or overflow, updates skipped and logged as 0). Train in bf16 (on hardware that supports it) "
        "or fp32.",
    )


#: Grown by orders of magnitude: the largest of the last points before the zeros at least this many
#: times the lowest value before them. 100x (two orders of magnitude) is far beyond any loss spike of
#: a run that recovers (OP002 calls 2x-10x spikes); a ClearML run that overflowed logged 1e29 then 0.0.
ZERO_AFTER_GROWTH = 100.0


def _grown_before_zeros(steps: np.ndarray, v: np.ndarray) -> tuple[int, float, float] | None:
    """(first step of the final run of exact zeros, the peak just before it, the lowest value before
    it) when the loss grew :data:`ZERO_AFTER_GROWTH`-fold over the last few points before the zeros
    began, else ``None``."""
    nz = np.flatnonzero(v != 0.0)
    if not nz.size or nz[-1] >= len(v) - 1:
        return None
    end = int(nz[-1]) + 1  # the final zeros start here
    before = v[:end]
    before = before[before > 0]
    if before.size < 3:
        return None
    tail = before[-min(5, before.size) :]
    peak_at = before.size - tail.size + int(np.argmax(tail))
    # growth: the peak comes after the lowest value before it (a loss that fell to its lowest
    # printed value and was then rounded to 0.0 did not grow)
    low = float(before[: peak_at + 1].min())
    peak = float(before[peak_at])
    if low <= 0 or peak < ZERO_AFTER_GROWTH * low:
        return None
    return int(steps[end]), peak, low


#: An LR "jump" before a non-finite onset: one logged LR value at least this factor above the one before
#: it, among the last :data:`LR_EVENT_POINTS` LR points up to the onset (a step schedule's milestone,
#: a restart, a misconfigured multiplier). 2x: schedules that decay never raise the LR, and a halving
#: step schedule read backwards is the smallest multiplier in common use.
LR_JUMP = 2.0
LR_EVENT_POINTS = 3


#: Logged LR points, all rising, up to a non-finite onset that place it inside a ramp when the window is too
#: short for a 2x rise: 3 (two rises in a row: one rise alone can be a schedule's single step).
LR_RAMP_POINTS = 3


def lr_increase_before(c: Ctx, onset: int | None) -> str | None:
    """The learning-rate event the non-finite onset at step ``onset`` follows, in words, or ``None``:
    the LR still rising at the onset, risen at every logged point from the first to the onset and at
    least 2x overall (inside a warm-up ramp), rising at every one of at least :data:`LR_RAMP_POINTS`
    points up to the onset (a ramp seen through a window too short for 2x), or a jump of
    :data:`LR_JUMP` x between consecutive LR points among the last :data:`LR_EVENT_POINTS` up to the onset (a schedule jump). A NaN there is
    learning-rate evidence whether or not the loss had grown first: the step that blew up can fall
    between two logged points."""
    k = c.run.key_for(Role.LEARNING_RATE)
    if k is None or onset is None:
        return None
    lr = c.run.metrics.series(k).by_step().finite()
    keep = lr.steps <= onset
    st, v = lr.steps[keep], lr.values[keep]
    if len(v) < 2 or v[0] <= 0:
        return None
    if bool(np.all(np.diff(v) > 0)) and v[-1] >= 2 * v[0]:
        return (
            f"inside the warm-up ramp: {k} rose at every logged point from {fmt(float(v[0]))} (step "
            f"{int(st[0])}) to {fmt(float(v[-1]))} at step {int(st[-1])}, and was still rising"
        )
    if len(v) >= LR_RAMP_POINTS and bool(np.all(np.diff(v) > 0)):
        # a pasted window too short to show a 2x rise: an LR that rose at every logged point up to the
        # onset is inside its ramp (the warm-up had not ended)
        return (
            f"inside a learning-rate ramp: {k} rose at every one of its {len(v)} logged points up to the onset "
            f"({fmt(float(v[0]))} at step {int(st[0])} -> {fmt(float(v[-1]))} at step {int(st[-1])}): the "
            "warm-up had not ended"
        )
    tail_s, tail_v = st[-(LR_EVENT_POINTS + 1) :], v[-(LR_EVENT_POINTS + 1) :]
    ratio = tail_v[1:] / np.maximum(tail_v[:-1], 1e-300)
    if ratio.size and float(ratio.max()) >= LR_JUMP:
        j = int(np.argmax(ratio))
        return (
            f"right after a learning-rate jump: {k} went from {fmt(float(tail_v[j]))} (step {int(tail_s[j])}) "
            f"to {fmt(float(tail_v[j + 1]))} (step {int(tail_s[j + 1])}), {fmt(float(ratio[j]), 3)}x"
        )
    return None


#: A finite training loss that turns non-finite with no reduced precision in use: no 16-bit overflow explains
#: it, and an update that jumped out of range (the learning rate, a warm-up, missing clipping) is the first
#: suspect, ahead of a bad batch. Measured on the real corpora: of the 10 such runs and reports (own log09,
#: f5b2-04; reports b2-04, b2-05, b3-03, b4-10, b6-04, b6-09, b6-06; libraries keras-lr10) whose cause was
#: confirmed, every one was the learning rate; the reduced-precision one (shared/cases fp16-true-nan) was
#: numerics.
_NO_PRECISION_NAN = (
    "{what}, with no reduced precision in use (no fp16/bf16 setting, loss scale or precision "
    "line): no 16-bit overflow explains it, so the update size (learning rate, warm-up, missing "
    "gradient clipping) is the first suspect, ahead of a bad batch or an input/loss bug: retry "
    "with a 10x lower learning rate and gradient clipping."
)


def _abrupt_nonfinite(c: Ctx) -> Decision | None:
    """OP004 reads the onset robustly (medians, optimizer steps): an abrupt onset is numerics or a
    bad batch (data_config) when reduced precision is in use, unless the learning rate is far above
    typical or had just risen (a warm-up ramp, a schedule jump: then it is the LR); without reduced
    precision the learning rate is the first suspect (:data:`_NO_PRECISION_NAN`)."""
    f = c.get("OP004")
    if not (f and f.facts.get("abrupt")) or transient_nonfinite(c):
        return None
    li = c.train_nonfinite()
    if li is not None and _one_finite_point_at_start(c, li) is not None:
        # no finite stretch to be abrupt after: V04 reads it as non-finite from the start
        return None
    event = lr_increase_before(c, f.facts.get("onset_step"))
    if event is not None:
        return Decision(
            Outcome.DIVERGED,
            Cause.MODEL_CONVERGENCE,
            f"{f.facts.get('key')} was finite (last {fmt(f.facts.get('last_finite'))}) and turned non-finite "
            f"at step {f.facts.get('onset_step')} with no loss growth logged before it; the onset is "
            f"{event}: the learning rate is the first suspect"
            + (f" before the precision ({', '.join(c.precision[:1])})" if c.precision else "")
            + ": the step that blew up can fall between two logged points.",
            f,
        )
    if c.lr.far_above and not c.precision:
        return Decision(
            Outcome.DIVERGED,
            Cause.MODEL_CONVERGENCE,
            f"{f.message}; with {c.lr.describe()} (>= {10:g}x typical) and no reduced precision "
            "in use, the learning rate is the first suspect.",
            f,
        )
    if not c.precision and not _lr_at_or_below_default(c.lr):
        return Decision(
            Outcome.DIVERGED, Cause.MODEL_CONVERGENCE, _NO_PRECISION_NAN.format(what=f.message), f
        )
    if not c.precision:
        return Decision(
            Outcome.DIVERGED,
            Cause.DATA_CONFIG,
            f"{f.message}, at {c.lr.describe()}: at or below the optimiser's default, with no "
            "reduced precision in use and no loss growth before the onset, the update size does not "
            "explain it: a bad input batch (a NaN or inf feature or label, a log/sqrt/division of "
            "zero in the loss, a numerical bug in the update code) is the first suspect: check the "
            "inputs for non-finite values.",
            f,
        )
    return Decision(Outcome.DIVERGED, Cause.DATA_CONFIG, f"{f.message}.", f)


#: The default learning rate of Adam/AdamW and RMSprop (PyTorch, Keras, Kingma & Ba 2015), the lowest
#: default among the common optimisers but Lion: a known learning rate at or below it with the
#: optimiser unknown is at or below the default of whichever common optimiser ran.
DEFAULT_LR_ANY_OPTIMISER = 1e-3


def _lr_at_or_below_default(lr: LrAssessment) -> bool:
    """The run's known learning rate is at or below its optimiser's typical value (or, with the
    optimiser unknown, at or below :data:`DEFAULT_LR_ANY_OPTIMISER`): an update size that trains
    the same model on finite data for many steps. ``False`` when the learning rate is unknown."""
    if lr.lr is None or lr.lr <= 0:
        return False
    limit = lr.typical if lr.optimiser else min(lr.typical, DEFAULT_LR_ANY_OPTIMISER)
    return lr.lr <= limit


def _updates_before_first_point(c: Ctx, f: Finding) -> tuple[int, int] | None:
    """``(first step, logging interval)`` when the non-finite series starts more than two logging
    intervals after step 0: the points a logger writes from the start are missing (a pasted window of
    a longer log, a tail), so updates ran unseen before the first point and "broken before any
    optimisation" does not follow. A first point within two intervals (Lightning's first log at step
    49 of ``log_every_n_steps=50``; 0- or 1-based counters) is the start. ``None`` with fewer than 2
    points (no interval) or a reader-made record count (``log.step_source``)."""
    key = f.facts.get("key") or f.facts.get("metric")
    if not key or key not in c.run.metrics or c.run.params.get("log.step_source") == "record_count":
        return None
    steps = c.run.series(str(key)).by_step().steps
    if len(steps) < 2:
        return None
    every = int(np.median(np.diff(steps)))
    first = int(steps[0])
    if every < 1 or first <= 2 * every:
        return None
    return first, every


def _one_finite_point_at_start(c: Ctx, f: Finding) -> tuple[float, float] | None:
    """``(step, value)`` of the training loss's only finite point before its non-finite onset when
    that point is the series' first and lies at the run's start (step <= 1, or within two logging
    intervals of step 0 as :func:`_updates_before_first_point` reads it); else ``None``. One finite
    value shows no trend, so neither growth before the onset nor a stretch of learning it broke
    from can be seen: the loss is read as non-finite from the start. Reports b9-02 (OSVOS, 2.3e11
    at step 10 of a log every 10 steps, then NaN: labels not binary) and own f13b1-03 (a GAN's
    discriminator loss 1.6e24 at step 0, then NaN for 80 epochs) were called learning-rate
    divergences from this single point."""
    if f.facts.get("finite_points_before") != 1:
        return None
    key = str(f.facts.get("key") or f.facts.get("metric") or "")
    if key not in c.run.metrics or c.run.params.get("log.step_source") == "record_count":
        return None
    s = c.run.series(key).by_step()
    v = np.asarray(s.values, dtype=np.float64)
    if v.size < 2 or not np.isfinite(v[0]) or np.isfinite(v[1:]).any():
        return None
    first = float(s.steps[0])
    if first > 1 and _updates_before_first_point(c, f) is not None:
        return None
    return first, float(v[0])


def _first_epoch_predictions_moved(c: Ctx) -> tuple[str, float, float] | None:
    """``(key, first-epoch value, later value)`` of an accuracy-like series (family acc, higher is
    better, not a running best) of >= 3 points whose value is the same at every epoch after the
    first and different at the first: with the loss non-finite from the first epoch, a model whose
    weights are non-finite predicts one constant answer, so a first-epoch accuracy that differs from
    that frozen level was measured over batches with finite predictions: the weights were finite
    for part of epoch 1 and blew up inside it (an optimisation divergence). Libraries corpus
    keras-lr10-csvlogger (SGD lr 10): accuracy 0.136 in epoch 1, 0.1035 in every epoch after."""
    from ..roles import parse_name

    for k in c.run.metrics.keys:
        pn = parse_name(k)
        if pn.running_best or pn.family != "acc" or not pn.higher_is_better:
            continue
        v = np.asarray(c.run.series(k).by_step().values, dtype=np.float64)
        if v.size < 3 or not np.isfinite(v).all():
            continue
        later = v[1:]
        if float(np.ptp(later)) == 0.0 and v[0] != later[0]:
            return k, float(v[0]), float(later[0])
    return None


def _fp16_overflow(c: Ctx) -> Decision | None:
    """RT006 at error: fp16 loss scaling failed (a few skips with a healthy scale are info, benign)."""
    f = c.get("RT006", Severity.ERROR)
    if not f:
        op7 = c.get("OP007", Severity.ERROR)
        # a scale that never decreased did not collapse: bf16/fp32 Megatron runs print a constant 1.0
        f = op7 if op7 is not None and op7.facts.get("decreases") else None
    if not f:
        return None
    cause = Cause.MODEL_CONVERGENCE if c.get("OP001", Severity.ERROR) else Cause.DATA_CONFIG
    outcome = Outcome.CRASHED if f.facts.get("min_scale_error") else Outcome.DIVERGED
    return Decision(outcome, cause, f"fp16 loss scaling failed: {f.message}.", f)


def _nonfinite(c: Ctx) -> Decision | None:
    f = c.train_nonfinite()
    if not f or transient_nonfinite(c):
        return None
    div = c.get("OP001", Severity.ERROR)
    growth = f.facts.get("growth_before")
    if div or (growth is not None and growth >= 2.0):
        return Decision(
            Outcome.DIVERGED,
            Cause.MODEL_CONVERGENCE,
            f"The training loss grew and then turned non-finite at step {f.facts['first_step']}: "
            "an optimisation divergence (learning rate / warmup / clipping).",
            f,
        )
    event = lr_increase_before(c, f.facts.get("first_step"))
    if event is not None:
        return Decision(
            Outcome.DIVERGED,
            Cause.MODEL_CONVERGENCE,
            f"The training loss turned non-finite at step {f.facts['first_step']}, {event}: a "
            "learning-rate divergence, even with no loss growth logged before it.",
            f,
        )
    prior = f.facts.get("finite_points_before", 0)
    if not prior and (dev := _apple_mps_device(c.run.params)) is not None:
        return _nonfinite_on_apple_mps(f, dev)
    epoch_axis = c.run.params.get("log.step_axis") == "epoch"
    if not prior and epoch_axis and not c.lr.far_above:
        return _nonfinite_from_first_epoch(c, f)
    if not prior:
        return _nonfinite_from_first(c, f)
    start = _one_finite_point_at_start(c, f)
    if start is not None:
        return _nonfinite_from_first(c, f, start)
    if not c.precision:
        return Decision(
            Outcome.DIVERGED,
            Cause.MODEL_CONVERGENCE,
            _NO_PRECISION_NAN.format(
                what=f"The training loss was finite and not growing ({prior} finite points, last "
                f"{fmt(f.facts.get('last_finite'))}), then non-finite from step {f.facts['first_step']} on "
                f"({f.facts['n_nonfinite']} points)"
            ),
            f,
        )
    what = "precision / loss scaling / a bad batch"
    return Decision(
        Outcome.DIVERGED,
        Cause.DATA_CONFIG,
        f"The training loss was finite and not growing ({prior} finite points, last "
        f"{fmt(f.facts.get('last_finite'))}), then non-finite from step {f.facts['first_step']} "
        f"on ({f.facts['n_nonfinite']} points): an abrupt numerical failure ({what}), not a "
        "learning-rate divergence.",
        f,
    )


#: A device setting that selects Apple's Metal (MPS) backend: Ultralytics ``device: mps``, Lightning
#: ``accelerator: mps``, a torch device string ``mps``/``mps:0``, transformers' ``use_mps_device: true``.
_MPS_DEVICE_KEY = re.compile(r"(?:^|[/._])(?:device|accelerator|use_mps_device)$", re.I)
_MPS_DEVICE_VALUE = re.compile(r"^\s*['\"]?(?:mps(?::\d+)?|true)['\"]?\s*$", re.I)


def _apple_mps_device(params: Mapping[str, str]) -> str | None:
    """``key=value`` of the run's setting that puts training on Apple's MPS backend, or None
    (``use_mps_device`` counts when true; the others when their value is ``mps``)."""
    for k, v in params.items():
        if not _MPS_DEVICE_KEY.search(k) or not _MPS_DEVICE_VALUE.match(str(v)):
            continue
        if str(v).strip().strip("'\"").lower() == "true" and not k.lower().endswith(
            "use_mps_device"
        ):
            continue
        return f"{k}={v}"
    return None


def _nonfinite_on_apple_mps(f: Finding, device: str) -> Decision:
    """The training loss non-finite from its first logged point on Apple's MPS backend: a backend fault
    is the first reading (infra_runtime). The MPS training path of PyTorch produces non-finite or invalid
    values that the same command on CPU does not (Ultralytics issues #9933 'NaN cls loss on MPS', same
    command finite with device=cpu; #9113 and hub #1199: NaN / zero losses training on MPS that CPU and
    CUDA do not show; own corpus f25b1-11: YOLO11n NaN in every epoch on mps, the same data finite on
    CPU). The check that separates it from the data: the same command on CPU (or with amp off)."""
    return Decision(
        Outcome.DIVERGED,
        Cause.INFRA_RUNTIME,
        f"The training loss was non-finite from its first logged point to the end "
        f"({f.facts.get('n_nonfinite')} points) on Apple's MPS backend ({device}): PyTorch's MPS training "
        "path is known to produce NaN or invalid values where the same command is finite on CPU or "
        "CUDA, so the backend is the first suspect, before the data. Run the same command with the "
        "device set to cpu (and mixed precision off): finite there = the backend; NaN there too = the "
        "inputs or the loss.",
        f,
    )


def _nonfinite_from_first_epoch(c: Ctx, f: Finding) -> Decision:
    """The training loss non-finite from the first point of a one-row-per-epoch log, the learning
    rate not 10x typical: that point closes a whole epoch of updates, so a divergence inside epoch 1
    is possible. An accuracy whose first-epoch value differs from the constant it holds after
    (:func:`_first_epoch_predictions_moved`) shows finite predictions during epoch 1: the learning
    rate (model_convergence). Without that, nothing in the data was ever finite and nothing was
    learned: the inputs, the loss or the code produce it (data_config), as own f13b1-05 (an MLP's
    data_loss NaN in all 28 epochs, hparams empty) was labelled."""
    moved = _first_epoch_predictions_moved(c)
    if moved is not None and not c.precision:
        k, first, later = moved
        return Decision(
            Outcome.DIVERGED,
            Cause.MODEL_CONVERGENCE,
            f"The training loss was non-finite from the first logged epoch, but {k} was "
            f"{fmt(first)} in that epoch and {fmt(later)} in every epoch after: a model with "
            "non-finite weights predicts one constant answer, so epoch 1 began with finite "
            "predictions and the weights blew up inside it; no reduced precision is in use, so "
            f"the update size is the first suspect ({c.lr.describe()}): lower the learning rate "
            "and add gradient clipping.",
            f,
        )
    return Decision(
        Outcome.DIVERGED,
        Cause.DATA_CONFIG,
        f"The training loss was non-finite from the first logged epoch to the end "
        f"({f.facts.get('n_nonfinite')} points) and no logged value shows the model finite at any "
        "time: nothing was learned, so the inputs (NaN/inf values, a division by zero in the "
        "normalisation), the loss computation or the code produce it; a learning-rate divergence "
        f"inside epoch 1 is the other reading ({c.lr.describe()}). What separates them: the loss "
        "logged per step (finite and growing first = the learning rate), and a check of the "
        "inputs and targets for NaN/inf before training.",
        f,
    )


#: The largest first loss read as an ordinary loss, computed by a working forward pass on sane inputs:
#: a cross-entropy at initialisation is about ln K, under 13 even for a 200,000-token vocabulary, and
#: a regression loss on standardised targets is of order 1. A first loss beyond it (reports b9-02: 2.3e11;
#: own f13b1-03: 1.6e24) is broken already at the start, by the inputs, the targets or the loss.
ORDINARY_START_LOSS = 100.0


def _nonfinite_from_first(c: Ctx, f: Finding, start: tuple[float, float] | None = None) -> Decision:
    """The training loss non-finite from its first logged point (``f``, the non-finite finding), or
    from the point after its only finite one at the run's start (``start``: step and value, from
    :func:`_one_finite_point_at_start`): a learning-rate divergence when the rate is 10x typical, or
    when that only finite value is an ordinary loss (at most :data:`ORDINARY_START_LOSS`) without
    reduced precision (the inputs gave a sane loss; the first updates broke the weights), or when it
    is the logger's first point after two or more unrecorded updates (Lightning's ``log_every_n_steps``)
    with the rate at or above typical (a huge loss there may already be the overshoot),
    when updates before the first point are unseen (:func:`_updates_before_first_point`) or when
    its only point is on the run's own step counter past the start with the rate at or above
    typical (no reduced precision in each case); open (inconclusive) when that first point comes after
    two or more unrecorded updates and the data holds no learning rate; else inputs, initialisation or
    the loss broken before any optimisation (data_config)."""
    if start is not None:
        at0, value = start
        if c.lr.far_above and not c.precision:
            return Decision(
                Outcome.DIVERGED,
                Cause.MODEL_CONVERGENCE,
                f"The training loss had one finite value ({fmt(value)} at step {at0:g}, the start) "
                f"and was non-finite from step {f.facts['first_step']} on, with "
                f"{c.lr.describe()}: at 10x the typical value the first updates overshoot; no "
                "reduced precision is in use, so numerics are not the first suspect.",
                f,
            )
        if not c.precision and at0 > 1 and c.lr.at_or_above_typical:
            # the logger's first point comes after ``at0`` updates (Lightning's log_every_n_steps):
            # a loss already huge there may be the first updates overshooting at this rate
            return Decision(
                Outcome.DIVERGED,
                Cause.MODEL_CONVERGENCE,
                f"The training loss had one finite value, {fmt(value)} at step {at0:g}, the logger's "
                f"first point, which comes after {at0:g} updates it did not record, and was non-finite "
                f"from step {f.facts['first_step']} to the end ({f.facts.get('n_nonfinite')} points), "
                f"with {c.lr.describe()} (at or above the typical value) and no reduced precision in "
                "use: the updates before the first point may have blown the weights up, so the learning "
                "rate is the first suspect. Lower it 10x (or add warm-up and gradient clipping) and "
                "rerun with the loss logged from step 1; if the loss is huge at step 1 too, check the "
                "inputs and targets for their range.",
                f,
            )
        if not c.precision and abs(value) <= ORDINARY_START_LOSS:
            return Decision(
                Outcome.DIVERGED,
                Cause.MODEL_CONVERGENCE,
                f"The training loss had one finite value, {fmt(value)} at step {at0:g} (the start), an "
                "ordinary loss: the inputs, targets and initial weights gave a finite loss of a usual "
                f"size, and from step {f.facts['first_step']} to the end ({f.facts.get('n_nonfinite')} "
                "points) it was non-finite: the first updates made the weights non-finite. The update "
                f"is the first suspect ({c.lr.describe()}; the optimiser's settings, or a loss whose "
                "gradient is non-finite where its value is not: a sqrt or log at 0, a division by a "
                "norm): no reduced precision is in use. Log the loss and the gradient norm of the "
                "first steps, and rerun with a 10x lower learning rate.",
                f,
            )
        return Decision(
            Outcome.DIVERGED,
            Cause.DATA_CONFIG,
            f"The training loss had one finite value, {fmt(value)} at step {at0:g} (the start, "
            f"before updates could move it), and was non-finite from step {f.facts['first_step']} "
            f"to the end ({f.facts.get('n_nonfinite')} points): no finite stretch shows learning or "
            "growth to diverge from, so the inputs or targets (out of the range the loss expects, "
            "unscaled, NaN/inf), the initialisation or the loss computation break it from the start "
            f"({c.lr.describe()}). What separates them from a learning-rate blow-up in the first "
            "update: the loss of the first batches logged per step, and a check of inputs and "
            "targets for NaN/inf and for their expected range.",
            f,
        )
    if c.lr.far_above and not c.precision:
        return Decision(
            Outcome.DIVERGED,
            Cause.MODEL_CONVERGENCE,
            f"The training loss was non-finite from its first logged step ({f.facts['first_step']}) "
            f"with {c.lr.describe()}: at 10x the typical value the first updates overshoot; "
            "no reduced precision is in use, so numerics are not the first suspect.",
            f,
        )
    unseen = _updates_before_first_point(c, f)
    if unseen is not None and not c.precision:
        first, every = unseen
        return Decision(
            Outcome.DIVERGED,
            Cause.MODEL_CONVERGENCE,
            f"The training loss was non-finite from its first logged step ({first}), but the data "
            f"holds a point every {every} step(s) and starts later: the updates before step {first} "
            "are not in it, so the loss may have grown and blown up there; no reduced precision is "
            "in use, so the learning rate is the first suspect (lower it and rerun from the start "
            "with the loss logged from step 1).",
            f,
        )
    past = _first_point_past_start(c, f, unseen is None)
    if past is not None:
        return past
    return Decision(
        Outcome.DIVERGED,
        Cause.DATA_CONFIG,
        f"The training loss was non-finite from its first logged step ({f.facts['first_step']}): "
        "the inputs, the initialisation or the loss computation are broken before any "
        "optimisation could diverge.",
        f,
    )


def _first_point_past_start(c: Ctx, f: Finding, no_gap: bool) -> Decision | None:
    """:func:`_nonfinite_from_first` for a first non-finite point past the run's start (step > 1 on the
    run's own counter): its only point, at a rate at or above typical (``no_gap``: no logging interval
    seen), is the learning rate; with no learning rate in the data, the updates before it unrecorded,
    the cause is open; else ``None``."""
    at = f.facts.get("first_step")
    key = str(f.facts.get("key") or f.facts.get("metric") or "")
    if (
        no_gap
        and key in c.run.metrics
        and len(c.run.series(key).by_step().steps) == 1
        and not c.precision
        and c.lr.at_or_above_typical
        and isinstance(at, (int, float))
        and at > 1
        and c.run.params.get("log.step_source") != "record_count"
    ):
        # one point, on the run's own step counter past its start: the updates before it are unseen
        return Decision(
            Outcome.DIVERGED,
            Cause.MODEL_CONVERGENCE,
            f"The training loss was non-finite at its only logged step ({at}), which is not the "
            f"start: {int(at) - 1} updates ran before it unseen, with {c.lr.describe()} (at or "
            "above the typical value) and no reduced precision in use, so the learning rate is the "
            "first suspect, not inputs broken before any optimisation: lower it (or add warm-up) and "
            "rerun with the loss logged from step 1.",
            f,
        )
    if (
        c.lr.lr is None
        and not c.precision
        and isinstance(at, (int, float))
        and at > 1
        and c.run.params.get("log.step_source") != "record_count"
    ):
        # the logger's first point comes after updates it did not record, at a rate the data does not hold
        return Decision(
            Outcome.DIVERGED,
            Cause.INCONCLUSIVE,
            f"The training loss was non-finite from its first logged step ({at:g}), which comes after "
            f"{at:g} updates the logger did not record (Lightning's log_every_n_steps, a logging "
            "interval), and the learning rate is not in the data: a blow-up inside those updates (the "
            "learning rate) and inputs or a loss broken from the start read the same here. What "
            "separates them: the loss logged from step 1 (finite and growing first = the learning "
            "rate), the run's learning rate against its optimiser's usual range, and a check of the "
            "inputs and targets for NaN/inf.",
            f,
        )
    return None


#: A task metric "contradicts" a divergence when, from the onset to the end, it rose by more than this
#: many noise units (median |delta| between points of its second half) and ended within as many of
#: its best: the usual "beyond noise" margin (GE001's ACC_NOISE_UNITS).
CONTRADICT_NOISE = 3.0


def task_metric_contradicts(
    run: RunData, onset_step: float, *, near_best: bool = True
) -> tuple[str, float, float] | None:
    """``(key, level at the onset, final level)`` of an accuracy, score or reward (a name whose family
    is one of those and says higher is better; any split, not a running best) with >= 6 finite points,
    at least 3 of them after ``onset_step``, whose final level (median of its last 3 points) is above
    its level at the onset (median of the 3 points around it) by more than :data:`CONTRADICT_NOISE`
    noise units and within as many of its best (with ``near_best=False``: whose best came after the
    onset, wherever it ended); else ``None``. A model whose training loss diverged
    predicts worse from the onset on, on the training data and off it: a task metric that keeps
    rising to its best says the loss series is not the model's objective as read (a sum over batches
    on another scale, a surrogate, a mean of an empty list shown as NaN). Own corpus f7b2-17: a ViT's
    train_loss summed over batches (812 -> 515, 47x ln 100,000) while val_acc rose 38% -> 71%, its
    best."""
    from ..roles import parse_name

    for k in run.metrics.keys:
        pn = parse_name(k)
        if (
            pn.running_best
            or pn.family not in ("acc", "score", "reward")
            or not pn.higher_is_better
        ):
            continue
        m = run.series(k).by_step().finite()
        n = len(m)
        if n < 6 or int((m.steps > onset_step).sum()) < 3:
            continue
        v = np.asarray(m.values, dtype=np.float64)
        i0 = int(np.clip(np.searchsorted(m.steps, onset_step, side="left"), 0, n - 1))
        at = float(np.median(v[max(0, i0 - 1) : i0 + 2]))
        final = float(np.median(v[-3:]))
        half = v[n // 2 :]
        noise = float(np.median(np.abs(np.diff(half)))) if half.size > 2 else 0.0
        margin = CONTRADICT_NOISE * noise
        if final - at <= margin:
            continue
        if float(v.max()) - final <= max(margin, 1e-12) or (
            not near_best and float(m.steps[int(np.argmax(v))]) > onset_step
        ):
            return k, at, final
    return None


def _surrogate_divergence(c: Ctx, f: Finding) -> Decision | None:
    """OP001 on a training loss that takes both signs (:func:`..task_metric.surrogate_loss`: a
    policy-gradient surrogate, a negative Dice or ELBO), which is not minimised towards zero, so its
    rise above an earlier negative best is no evidence; the task metric decides
    (:func:`..task_metric.judge`, a training-loop score allowed): it fell from its best level beyond
    its noise band and a tenth of its gain -> regressed; it never rose above its first level by more
    than its noise band -> plateaued; it rose and held -> ``None`` (the rules below judge the run).
    Without a task metric of >= 6 evaluations the OP001 reading stands (diverged)."""
    from ..task_metric import judge

    j = judge(c.run, surrogate=True)
    if j is None:
        return Decision(
            Outcome.DIVERGED, Cause.MODEL_CONVERGENCE, f"The run diverged: {f.message}.", f
        )
    why = (
        f"{f.facts.get('key') or 'the training loss'} takes both signs: a surrogate objective that is not "
        f"minimised towards zero (a policy-gradient loss, a negative Dice or ELBO), so its rise is no "
        f"divergence; the task metric decides: {j.describe()}"
    )
    if j.fell:
        return Decision(
            Outcome.REGRESSED,
            Cause.MODEL_CONVERGENCE,
            f"The run got worse at its task: {why}. It fell from its best level by more than its noise "
            "band: the model the run ends with is worse than one it had; keep the best checkpoint and "
            "look at what changed after it (learning rate, KL weight, reward hacking, truncation).",
        )
    gain = j.best - j.first if j.metric.higher_is_better else j.first - j.best
    if gain <= j.band:
        return Decision(
            Outcome.PLATEAUED,
            Cause.MODEL_CONVERGENCE,
            f"The task metric never improved beyond its noise: {why}. More steps at this setting buy "
            "nothing measurable; check the reward signal's variance, the learning rate and the KL weight.",
        )
    return None


#: Name tokens of one player's loss in a two-player (adversarial) game: a GAN's discriminator and
#: generator (``loss_D``, ``errG``, ``d_loss``, ``Central_Discriminator_loss``); not ``critic``,
#: which is also the value network of actor-critic RL.
_PLAYER_TOKENS = frozenset({"discriminator", "disc", "generator", "gen", "adversarial", "adv"})
_PLAYER_SHORT = re.compile(r"^(?:loss|err)[_/. ]?[dg]$|^[dg][_/. ]?(?:loss|err)$", re.I)


def _adversarial_player(key: str) -> bool:
    """``key`` names one player's loss in an adversarial game (:data:`_PLAYER_TOKENS`, or the short
    forms ``loss_D``, ``d_loss``, ``errG`` of the PyTorch DCGAN example)."""
    leaf = key.rsplit("/", 1)[-1]
    if _PLAYER_SHORT.match(leaf):
        return True
    words = re.sub(r"([a-z])([A-Z])", r"\1 \2", key).lower()
    return bool(_PLAYER_TOKENS.intersection(re.split(r"[^a-z]+", words)))


def _adversarial_divergence(f: Finding, key: str) -> Decision:
    """OP001 on one player's finite loss in an adversarial game: the two losses trade against each
    other and neither is minimised towards zero, so a rise after a low is the game's balance
    shifting (unstable GAN training), not a divergence of the model (OP001 reads finite losses; a
    non-finite loss is judged by the rules before this one)."""
    return Decision(
        Outcome.UNSTABLE,
        Cause.MODEL_CONVERGENCE,
        f"The adversarial game is unstable: {f.message}. {key} is one player's loss in "
        "a two-player game (a discriminator or generator): it is not minimised towards zero, "
        "so its rise is the balance of the game shifting, not a divergence; judge the run by its "
        "sample quality (FID, inception score, a held-out metric) and look for mode collapse.",
        f,
    )


def _divergence(c: Ctx) -> Decision | None:
    f = c.get("OP001", Severity.ERROR)
    if f and task_metric_contradicts(c.run, float(f.facts.get("onset_step") or 0)) is not None:
        return None  # the task metric rose to its best after the onset: not the model's divergence
    if f:
        from ..task_metric import surrogate_loss

        if surrogate_loss(c.run) is not None:
            return _surrogate_divergence(c, f)
        key = next((str(e.metric) for e in f.evidence if isinstance(e, SeriesEvidence)), "")
        if key and _adversarial_player(key):
            return _adversarial_divergence(f, key)
        return Decision(
            Outcome.DIVERGED, Cause.MODEL_CONVERGENCE, f"The run diverged: {f.message}.", f
        )
    return None


#: Blown-up start: a classifier's training loss at its first point at or above this (OP008's
#: ``absurd_scale``: a cross-entropy starts near ln K <= ln 100,000 = 11.5, so 1e6 needs logits of that
#: size: the first updates blew the weights up) ...
BLOWN_UP_LOSS = 1e6
#: ... and the rest of the run at least this factor lower (median), so the level is no summed loss's
#: scale but one blow-up. Session 7 default run: Keras SGD lr 25, epoch-1 loss 1.9e16, then 10-20.
BLOWN_UP_FALL = 1e3


#: Fewer than 3 points: a classifier's cross-entropy at or above this multiple of its uniform-guess loss
#: (ln K, or ln 100,000 = 11.5 for an unknown K: at least 115 nats) at every point: the correct class's
#: probability is below e^-115, which only logits blown up by the updates give.
BLOWN_UP_FEW = 10.0


def _blown_up_few(c: Ctx, k: str, v: np.ndarray) -> Decision | None:
    """V06c on 1-2 training-loss points: every point at or above :data:`BLOWN_UP_FEW` x the uniform
    guess's loss, with the learning rate 10x or more its optimiser's typical value: the first updates
    blew the weights up (no fall afterwards can be read on so few points, so the LR must say it)."""
    from ..detectors._context import chance_or_bound

    ch = chance_or_bound(c.run)
    if ch is None or not c.lr.far_above or float(v.min()) < BLOWN_UP_FEW * ch.loss:
        return None
    return Decision(
        Outcome.DIVERGED,
        Cause.MODEL_CONVERGENCE,
        f"The run blew up at its start: {k} is {', '.join(fmt(float(x)) for x in v)}, at least "
        f"{BLOWN_UP_FEW:g}x the loss of a uniform guess ({fmt(ch.loss)}; {ch.source}), with "
        f"{c.lr.describe()}: the first updates blew the weights up. Lower the learning rate 10x or more "
        "(or add warm-up and gradient clipping).",
    )


def _blown_up_start(c: Ctx) -> Decision | None:
    """A classification run (an accuracy logged) whose first training-loss point is >= 1e6 and whose
    later points sit >= 1000x lower: the first updates blew the weights up (a far too high learning
    rate), and the run never recovered a trainable state. Diverged, never an underfit to answer with a
    higher learning rate."""
    from ..detectors._context import chance_or_bound

    k = c.run.key_for(Role.TRAIN_LOSS)
    if not k or chance_or_bound(c.run) is None:
        return None
    v = c.run.metrics.series(k).by_step().finite().values
    if 0 < len(v) < 3:
        return _blown_up_few(c, k, v)
    if len(v) < 3 or float(v[0]) < BLOWN_UP_LOSS:
        return None
    rest = float(np.median(v[1:]))
    if rest * BLOWN_UP_FALL > float(v[0]):
        return None
    return Decision(
        Outcome.DIVERGED,
        Cause.MODEL_CONVERGENCE,
        f"The run blew up at its start: {k} was {fmt(float(v[0]))} at its first point, far above any "
        f"classifier's starting loss (ln K <= 11.5), then sat near {fmt(rest)}: the first updates blew "
        "the weights up and the model never recovered. Lower the learning rate 10x or more (or add "
        "warmup and gradient clipping); do not raise it.",
    )


#: The training loss "rose" before a non-finite validation loss: its smoothed level over the last
#: quarter at least this factor above its minimum. 1.5x is the in-run degradation level of
#: ``DEGRADED_TRAIN`` (a loss noisy around a plateau stays well under it).
VAL_NONFINITE_TRAIN_RISE = 1.5


#: Risen then frozen: the training loss's last points (at least this many) repeat one level ...
RISEN_FROZEN_POINTS = 4
#: ... to within this share of it (median absolute deviation; OP003's frozen_rel_spread, 1e-4), the level at
#: least this multiple of the first point: the run ended above where it started (OP003 leaves such a loss
#: to OP001, whose divergence needs a 2x rise).
RISEN_FROZEN_RISE = 1.1


def _risen_then_frozen(c: Ctx) -> Decision | None:
    """V06d: the training loss (>= 6 finite points, none non-finite) rose to >= 1.1x its first point and
    its last >= 4 points repeat one level (median deviation <= 1e-4 of it, printed precisely enough to
    show it: :func:`signal.print_resolution` <= 1e-3 of the level): an update moved the model to a fixed
    point worse than its start, where no later update changes anything (saturated softmax outputs, dead
    ReLUs). That is what a learning rate far too high does (a real Keras 3.15 run, SGD warm-up to lr 200:
    loss 8.42 -> 12.4978 at every later epoch = (1 - accuracy) x -ln(1e-7), every prediction one-hot and
    clipped; accuracy identical to 9 digits): diverged, model_convergence."""
    from ..signal import print_resolution

    k = c.run.key_for(Role.TRAIN_LOSS)
    if not k:
        return None
    raw = c.run.metrics.series(k).by_step()
    if len(raw) < 6 or not np.isfinite(raw.values).all():
        return None
    v = raw.values.astype(float)
    tail = v[-RISEN_FROZEN_POINTS:]
    level = float(np.median(tail))
    if v[0] <= 0 or level < RISEN_FROZEN_RISE * float(v[0]):
        return None
    n = RISEN_FROZEN_POINTS
    while n < len(v) and abs(float(v[-n - 1]) - level) <= 1e-4 * level:
        n += 1
    q = print_resolution(v)
    if float(np.max(np.abs(tail - level))) > 1e-4 * level or (q is not None and q > 1e-3 * level):
        return None
    return Decision(
        Outcome.DIVERGED,
        Cause.MODEL_CONVERGENCE,
        f"The training loss rose and froze: {k} went from {fmt(float(v[0]))} to {fmt(level)} "
        f"({level / float(v[0]):.2f}x) and repeats that level at its last {n} points (from step "
        f"{int(raw.steps[-n])}): an update moved the model to a fixed point worse than its start (saturated "
        "outputs or dead units) that no later update leaves. A learning rate far too high does this: lower it "
        "(or the warm-up's target) by 10x and restart from scratch.",
    )


def _nonfinite_from_first_eval(f: Finding) -> bool:
    """LI001's held-out loss non-finite at every one of its evaluations (>= 3), the first included."""
    n = int(f.facts.get("n_points") or 0)
    return n >= 3 and int(f.facts.get("n_nonfinite") or 0) == n


def _first_eval_step(c: Ctx, f: Finding) -> float:
    """The step of the first evaluation of LI001's held-out loss (its onset when unknown)."""
    k = f.facts.get("key")
    s = c.run.metrics.series(k).by_step() if k in c.run.metrics.keys else None
    return float(s.steps[0]) if s is not None and len(s) else float(f.facts.get("first_step") or 0)


def _nonfinite_validation(c: Ctx) -> Decision | None:
    """LI001 on the validation loss, non-finite at every evaluation from its onset to the end, while
    the training loss stayed finite (a non-finite training loss has its own rules): the held-out
    loss of the model the run produced is NaN/inf, so the run diverged whatever the training curve
    shows (a NaN filter, averaged or sparse logging, or a finite check that stops before logging
    hide the blow-up from the training loss). A training loss that rose >= 1.5x its minimum before
    the end makes it an optimisation divergence (model_convergence); a training loss still falling
    leaves a broken evaluation (fp16 overflow, an empty batch) as likely as a divergence. Not a
    divergence: a held-out loss non-finite at every evaluation from the first (odd from the start,
    by construction, not after a change in training) while a task metric of those evaluations rose
    to its best (:func:`task_metric_contradicts`): the loss computation is what is broken, and the
    other rules judge the run (own corpus f10b2-16: YOLOv8n val/cls_loss inf at all 200 epochs
    while mAP50 rose to 0.85)."""
    if c.train_nonfinite() is not None:
        return None
    f = next(
        (
            x
            for x in c.by_code.get("LI001", [])
            if x.facts.get("role") == Role.VAL_LOSS.value and x.facts.get("all_after_nonfinite")
        ),
        None,
    )
    if f is None:
        return None
    onset = (
        f"{f.facts.get('key')} was non-finite at every evaluation from step {f.facts.get('first_step')} on "
        f"({f.facts.get('n_nonfinite')} of {f.facts.get('n_points')})"
    )
    tk = c.run.key_for(Role.TRAIN_LOSS)
    t = c.run.metrics.series(tk).by_step().finite() if tk else None
    if t is not None and len(t) >= MIN_TREND_POINTS:
        from ..signal import centered_median, smooth_window

        sm = centered_median(t.values, smooth_window(len(t)))
        i = int(np.argmin(sm))
        low = float(sm[i])
        late = float(np.median(sm[-max(1, len(sm) // 4) :]))
        if low > 0 and i < len(sm) - 1 and late >= VAL_NONFINITE_TRAIN_RISE * low:
            return Decision(
                Outcome.DIVERGED,
                Cause.MODEL_CONVERGENCE,
                f"The run diverged: {onset}, while {tk} rose from its minimum {fmt(low)} at step "
                f"{int(t.steps[i])} to {fmt(late)} over the last quarter ({fmt(late / low, 3)}x): the "
                f"model blew up ({c.lr.describe()}); the training loss as logged stayed finite.",
                f,
            )
    if _nonfinite_from_first_eval(f) and task_metric_contradicts(c.run, _first_eval_step(c, f)):
        # non-finite at the first evaluation too, before training could move the model far, while a
        # task metric of the same evaluations learned: the loss computation is broken, not the model
        return None
    if c.precision:
        return Decision(
            Outcome.DIVERGED,
            Cause.DATA_CONFIG,
            f"The held-out loss is non-finite: {onset}, while the training loss stayed finite and did not "
            f"rise, with reduced precision in use ({c.precision[0]}): the evaluation overflowing fp16's "
            "range (65504; half-precision weights, an fp16 evaluation) is the first suspect before a "
            "divergence the training loss hides. Evaluate one checkpoint in fp32 or bf16 on a few batches.",
            f,
        )
    return Decision(
        Outcome.DIVERGED,
        Cause.INCONCLUSIVE,
        f"The held-out loss is non-finite: {onset}, while the training loss stayed finite and did not "
        "rise: a divergence the logged training loss does not show (a NaN filter, averaged logging), "
        "or a broken evaluation (half-precision overflow, an empty or corrupt batch). The final model's "
        "quality is unknown; evaluate one checkpoint in fp32 on a few batches.",
        f,
    )


def _heldout_nonfinite_recovered(c: Ctx) -> Decision | None:
    """LI001 on the held-out loss or one of its terms, non-finite at fewer than half of the
    evaluations from its onset and finite again at the last one, while the training loss stayed
    finite: the model itself was numerically unstable at those evaluations (an evaluation skips no
    batch and steps no optimizer, so an inf/NaN there is the model's output on held-out data, not a
    skipped step as a transient training-loss NaN can be), and it recovered. What the run did after
    (a later decline, a late best) is secondary to that (own corpus f14b1-07: YOLOv8 val/cls_loss 211
    then inf at epoch 7 in warm-up, mAP50 0.63 -> 0.07, recovering to 0.967; f13b2-18: val/cls_loss
    inf at epoch 5, mAP 0.14, recovering to 0.95). Not on a run stopped before its planned end: a
    blow-up it recovered from does not explain the stop, which the stop rules read (shared realworld
    tb05: YOLOv5 val/box_loss NaN at its second evaluation of 151, stopped at epoch 150 of 300).
    Not when the term is non-finite from its first evaluation: instability is a finite model turning
    non-finite, and a term undefined at the first evaluation(s) of a fresh fine-tune (a new detection
    head that predicts nothing yet, so a per-prediction loss divides by zero) had no finite state to
    lose; it is how that term starts, and the run is read from what follows (own corpus f24b1-05:
    YOLOv8n val/cls_loss inf at epochs 1-2 of 25, finite after, mAP50 0.044 -> 0.842 at the last
    epoch)."""
    if c.train_nonfinite() is not None or c.ending.stopped:
        return None
    for f in c.by_code.get("LI001", []):
        if f.facts.get("role") != Role.VAL_LOSS.value or not f.facts.get("finite_at_end"):
            continue
        onset = int(f.facts.get("index") or 0)
        after = int(f.facts.get("n_points") or 0) - onset
        n_bad = int(f.facts.get("n_nonfinite") or 0)
        if onset == 0 or after <= 0 or n_bad / after >= 0.5:
            continue
        return Decision(
            Outcome.UNSTABLE,
            Cause.MODEL_CONVERGENCE,
            f"The model was numerically unstable and recovered: {f.facts.get('key')} was non-finite at "
            f"{n_bad} of {f.facts.get('n_points')} evaluations from step {f.facts.get('first_step')} and "
            f"finite again from step {f.facts.get('recovered_step')} to the end, while the training loss "
            f"stayed finite ({c.lr.describe()}). An evaluation skips no batch: the model's outputs on "
            "held-out data overflowed there. Keep the best checkpoint after the recovery; a shorter or "
            "gentler warm-up, a lower peak learning rate or gradient clipping removes the blow-up.",
            f,
        )
    return None


def _nan_message(c: Ctx) -> Decision | None:
    """RT009 without a loss history (no training loss, or fewer finite points than a trend needs: a
    pasted record or two): non-finite, but the onset cannot be read; with no reduced precision in use
    the learning rate is the first suspect (:data:`_NO_PRECISION_NAN`); with reduced precision named
    (a setting, a loss scale, a sentence of the report) the precision is, as V03/V04 read an abrupt
    NaN under it: an fp16 overflow or underflow (data_config)."""
    f = c.get("RT009", Severity.ERROR)
    key = c.run.key_for(Role.TRAIN_LOSS)
    no_history = not key or int(np.isfinite(c.run.series(key).values).sum()) < MIN_TREND_POINTS
    if f and no_history and not c.precision:
        return Decision(
            Outcome.DIVERGED,
            Cause.MODEL_CONVERGENCE,
            _NO_PRECISION_NAN.format(what=f"The loss became non-finite ({f.message})"),
            f,
        )
    if f and no_history:
        return Decision(
            Outcome.DIVERGED,
            Cause.DATA_CONFIG,
            f"The loss became non-finite ({f.message}) with reduced precision in use "
            f"({c.precision[0]}): an fp16 overflow or underflow is the first suspect before the learning "
            "rate (fp16's range ends at 65504; bf16 or fp32 keeps the same run finite if it is), then a "
            "bad batch. Without the loss history the onset cannot be read: log the loss per step.",
            f,
        )
    if f and c.ending.in_warmup and not c.precision:
        # the logged loss stayed finite and the learning rate rose at every logged point to the end:
        # the NaN the text reports came after the window, while the warm-up was still raising the LR
        key = c.run.key_for(Role.TRAIN_LOSS)
        if key and bool(np.all(np.isfinite(c.run.series(key).values))):
            return Decision(
                Outcome.DIVERGED,
                Cause.MODEL_CONVERGENCE,
                f"The loss became non-finite ({f.message}) after a window where it was finite while "
                f"{c.ending.in_warmup}: a NaN inside the learning-rate warm-up is the learning rate's "
                "(a peak too high for this batch size or model); lower the peak or lengthen the warm-up.",
                f,
            )
    return None


def _nan_recovered_stated(c: Ctx) -> Decision | None:
    """V07a: RT009 (a non-finite value in the text) is the only finding at error, no loss history shows the
    onset (fewer finite training-loss points than a trend needs), and the report's thread says the symptom
    went away by itself or did not affect the training (:func:`.statements.stated_recovered`): a transient
    non-finite value (a loss-scale search under mixed precision, one bad batch) that the run came back
    from, as V05b reads a curve that came back; not a divergence."""
    f = c.get("RT009", Severity.ERROR)
    if f is None:
        return None
    errors = {
        x.code for fs in c.by_code.values() for x in fs if x.severity.rank >= Severity.ERROR.rank
    }
    key = c.run.key_for(Role.TRAIN_LOSS)
    if errors != {"RT009"} or (
        key and int(np.isfinite(c.run.series(key).values).sum()) >= MIN_TREND_POINTS
    ):
        return None
    from .statements import stated_recovered

    said = stated_recovered(c.run.params)
    if said is None:
        return None
    return Decision(
        _healthy_so_far(c),
        Cause.HEALTHY,
        f"A non-finite value was reported ({f.message}), and the thread says the run came back from it, in "
        f'the sentence "{said}": a transient NaN/inf (a loss-scale search under mixed precision, a skipped '
        "batch) is not a divergence. Without the loss history the run's end is not judged; log the loss "
        "per step to see that it stays finite.",
        f,
    )


def _launch_failed(c: Ctx) -> Decision | None:
    """V07c: RT011 at error (the console ends on the shell's, the interpreter's or the argument
    parser's error) and no judgeable training signal: the launch failed before training, in its
    environment or command line (data_config), never "no metric was logged". A judgeable curve
    means a training ran and is left to the curve rules."""
    f = c.get("RT011", Severity.ERROR)
    if f is None or c.basis.judgeable:
        return None
    return Decision(
        Outcome.CRASHED,
        Cause.DATA_CONFIG,
        f"The launch failed before training: {f.message}. Nothing of the model or the data was "
        "reached; the failure is in the launch environment or the command line.",
        f,
    )


def _constant_predictor(c: Ctx) -> Decision | None:
    """V19j: no judgeable curve, and the last held-out evaluation's accuracy with its precision/F1
    are those of a model that predicts one class for every input
    (:func:`mlaudit_core.detectors.GE002.constant_predictor`): the accuracy is the majority share and
    carries no information; nothing was learned (underfit). Curves with >= 3 points are judged by
    GE002 (:func:`~mlaudit_core.detectors.GE002.majority_baseline`)."""
    from ..detectors.GE002 import constant_predictor

    if c.basis.judgeable:
        return None
    hit = constant_predictor(c.run)
    if hit is None:
        return None
    ak, p, scores = hit
    shown = ", ".join(f"{k} {fmt(v)} ({how})" for k, v, how in scores[:3])
    return Decision(
        Outcome.UNDERFIT,
        Cause.MODEL_CONVERGENCE,
        f"The model predicts one class for every input: {ak} is {fmt(p)} and {shown} are exactly the "
        f"scores of always predicting a class of share {fmt(p)} (weighted precision p^2, weighted F1 "
        "2p^2/(1+p), macro scores over K classes), so the accuracy is the majority share and "
        "carries no information: nothing was learned beyond the class balance. Check the class "
        "weights or sampling, the labels, and the number of steps and learning rate.",
    )


def _crash_other(c: Ctx) -> Decision | None:
    f = c.get("RT005", Severity.ERROR)
    if f and not _ended_by_preemption(c, f):
        exc = str(f.facts.get("exception_type", ""))
        if detector_for(f.code).stopped_from_outside(f):
            # a kill, termination or interrupt signal is an infrastructure event or a person, never a code bug
            return Decision(
                Outcome.CRASHED,
                Cause.INCONCLUSIVE,
                f"The run was stopped by {exc.rsplit('.', 1)[-1]} ({f.message}); why it was "
                "stopped is not in the data.",
                f,
            )
        if exc.endswith(_LAUNCHER_EXC):
            return Decision(
                Outcome.CRASHED,
                Cause.INCONCLUSIVE,
                f"The launcher reports that a worker failed ({f.message}), and the worker's own error "
                "is not in the log: attach the worker's output (torchrun --tee 3, or the rank's log).",
                f,
            )
        if any(
            sig.category == "nan" for sig, _ in match_line(f.facts.get("exception_message") or "")
        ):
            # a framework's non-finite check raised it (anomaly mode, a NaN guard): numerics, not code; a
            # loss that grew first is a divergence rule above (V04/V06), so here it was finite and flat
            return Decision(
                Outcome.CRASHED,
                Cause.DATA_CONFIG,
                f"The run stopped on a non-finite check ({f.message}) while the training loss was finite "
                "and not growing: an abrupt numerical failure (a bad batch, precision, a sqrt/log of an "
                "invalid value), not a code bug.",
                f,
            )
        after = _probability_range_error_after_progress(c, f)
        if after is not None:
            return Decision(
                Outcome.CRASHED,
                Cause.DATA_CONFIG,
                f"The run crashed with {f.message} after {after}: the loss was computed on the "
                "model's probabilities for those batches, so the values it rejected are not logits "
                "(a missing sigmoid fails on the first batch) but non-finite ones: a NaN or inf in a "
                "later batch's inputs made the prediction NaN. Check the inputs for non-finite values "
                "(impute or drop them) before training.",
                f,
            )
        named = f.facts.get("exception_cause")
        if named:
            # the exception names its cause (mlaudit_core/exception_causes.py: data, environment, network)
            return Decision(
                Outcome.CRASHED,
                Cause(named),
                f"The run crashed with {f.message}: {f.facts.get('exception_meaning')}.",
                f,
            )
        shape = "shape" in (f.facts.get("exception_message") or "").lower()
        killed = _wrapper_crash_stated_killed(c, exc) if not shape else None
        if killed is not None:
            return killed
        cause = (
            Cause.CORRECTNESS_BUG
            if (exc.rsplit(".", 1)[-1] in _CORRECTNESS_EXC or shape)
            else Cause.INFRA_RUNTIME
            if exc.endswith(("OSError", "MemoryError", "TimeoutError"))
            else Cause.CORRECTNESS_BUG
        )
        return Decision(Outcome.CRASHED, cause, f"The run crashed with {f.message}.", f)
    return None


def _wrapper_crash_stated_killed(c: Ctx, exc: str) -> Decision | None:
    """V08's reading of an exception that names no cause of its own (no :mod:`mlaudit_core.exception_causes`
    row, a class that is not a programming error: ``Py4JJavaError``, ``ExecutionException``, a
    ``RuntimeError`` reporting that a worker or child process failed) in a report whose text states that the
    process was killed or ran out of memory (:func:`.statements.stated_memory_exhaustion`: ``this process has
    been killed``, ``the GPU runs out of memory``): the exception is how the caller learnt that the process
    it waited on died, and the thread says how it died; a kill signal (exit code 137 = 128 + SIGKILL) or an
    out-of-memory is an infra event, never a code bug. ``None`` for a programming error's class
    (``_CORRECTNESS_EXC``) or a report that states no such event."""
    if exc.rsplit(".", 1)[-1] in _CORRECTNESS_EXC:
        return None
    from ..reference_gap import text_lines
    from .statements import stated_memory_exhaustion

    got = stated_memory_exhaustion(text_lines(c.run))
    if got is None:
        return None
    f = c.get("RT005", Severity.ERROR)
    what = {
        "gpu": "the GPU ran out of memory",
        "host": "the host's memory (RAM) filled up",
        "memory": "the job ran out of memory",
        "killed": "the process was killed from outside (the host's out-of-memory killer or the scheduler)",
    }[got[0]]
    return Decision(
        Outcome.CRASHED,
        Cause.INFRA_RUNTIME,
        f"The run crashed with {f.message if f else exc}, an error that names no cause of its own, and the "
        f'report states that {what}, in the sentence "{got[1]}": the exception is the caller\'s report of '
        "the process's death, not a code bug. Check the kernel log (dmesg) or the scheduler's accounting "
        "for the kill, then give the job more memory or reduce what one process holds (rows x classes, "
        "batch size, loader workers).",
        f,
    )


#: torch's range check of a probability fed to binary cross-entropy (aten/src/ATen/native/Loss.cpp
#: binary_cross_entropy_out_cpu: 'all elements of input should be between 0 and 1'; the CUDA kernel
#: Loss.cu asserts 'input_val >= zero && input_val <= one'). Keras' binary_crossentropy clips finite
#: probabilities into range first, so there only NaN fails it.
_PROBABILITY_RANGE = re.compile(
    r"all elements of input should be between 0 and 1|input_val >= zero && input_val <= one"
)
#: A training-loss reading in a console line (a Keras bar's ``loss: 0.6514``, ``loss=0.65``).
_LOSS_READING = re.compile(r"\bloss\b\W{0,3}([-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)", re.I)
#: Finite training-loss readings (or points of the training-loss series) before the error that show
#: the loss ran on earlier batches.
MIN_FINITE_LOSS_READINGS = 2


def _probability_range_error_after_progress(c: Ctx, f: Finding) -> str | None:
    """What showed finite training before a probability-range error of binary cross-entropy
    (:data:`_PROBABILITY_RANGE`) in crash finding ``f``: ``"2 finite points of train/loss"`` or
    ``"3 finite loss readings in the console (the last 0.65)"``; ``None`` without the error or with
    fewer than :data:`MIN_FINITE_LOSS_READINGS`. A model without a sigmoid hands logits to the loss
    and fails on its first batch; one that computed a finite loss on earlier batches produced
    probabilities, and a later batch's NaN prediction (a NaN feature, tests/data/newuser12
    keras_nan_inputs_bce_error.log: loss 1.04 -> 0.65 over 29 batches) is what left the range."""
    if not _PROBABILITY_RANGE.search(f.facts.get("exception_message") or ""):
        return None
    tk = c.run.key_for(Role.TRAIN_LOSS)
    if tk:
        n = int(np.isfinite(c.run.series(tk).values).sum())
        if n >= MIN_FINITE_LOSS_READINGS:
            return f"{n} finite points of {tk}"
    logs = [(e.source, e.line) for e in f.evidence if isinstance(e, LogEvidence)]
    if not logs:
        return None
    src, ln = min(logs, key=lambda t: t[1])
    readings: list[float] = []
    for line in c.run.console:
        if line.source != src or line.lineno >= ln:
            continue
        for m in _LOSS_READING.finditer(line.text):
            v = float(m.group(1))
            if np.isfinite(v):
                readings.append(v)
    if len(readings) < MIN_FINITE_LOSS_READINGS:
        return None
    return f"{len(readings)} finite loss readings in the console (the last {fmt(readings[-1])})"


def _reset(c: Ctx) -> Decision | None:
    f = c.get("LI002", Severity.ERROR) or c.get("LI003", Severity.ERROR)
    if f:
        return Decision(
            Outcome.UNSTABLE,
            Cause.CORRECTNESS_BUG,
            f"The step counter reset: {f.message}. Curves by step overlay two segments; "
            "the resume did not restore the training state.",
            f,
        )
    return None


#: An agent's episode reward is judged by the medians of ``REWARD_SEGMENTS`` equal stretches of its
#: series, never by its last point or its single best (a 100-episode moving average still swings by
#: a third of its level between rollouts: own corpus f7b1-05, SB3 PPO ep_rew_mean 73.5 at its peak,
#: 46.8 at the last row, 45.2 as the median of both its best and its last stretch): it learned when
#: its best stretch beats its first by ``REWARD_LEARNED_NOISE`` x the within-stretch spread (the
#: median interquartile range about each stretch's own trend line, :func:`_detrended_iqr`), and it collapsed when the last stretch kept less than
#: ``REWARD_KEPT`` of that gain (a policy collapse gives back most of what it learned: own corpus
#: f7b1-08, Acrobot PPO stretches -7848 -> best -5275 -> -7946, -4% kept; the healthy SB3/baselines
#: runs of f7b1-f7b3 keep 90-100%).
REWARD_SEGMENTS = 10
REWARD_MIN_POINTS = 6
REWARD_LEARNED_NOISE = 2.0
REWARD_KEPT = 0.4


def agent_reward(run: RunData) -> tuple[str, np.ndarray, np.ndarray] | None:
    """``(key, steps, values)`` of the episode reward/return the run's task metric is (roles: family
    ``reward``), with >= :data:`REWARD_MIN_POINTS` finite points, else ``None``."""
    from ..roles import parse_name

    k = run.key_for(Role.VAL_ACCURACY)
    if not k or parse_name(k).family != "reward":
        return None
    s = run.series(k).by_step().finite()
    if len(s) < REWARD_MIN_POINTS:
        return None
    return k, np.asarray(s.steps), np.asarray(s.values, dtype=np.float64)


def _detrended_iqr(x: np.ndarray, y: np.ndarray) -> float:
    """The interquartile range of ``y`` about its least-squares line over ``x`` (the stretch's own
    noise): a reward still rising inside a stretch spreads its points by the rise, which is learning,
    not noise (own corpus f10b2-11: SB3 PPO ep_rew_mean -98 -> 340, stretch medians -54 -> 191 -> 185,
    called 'did not learn' on a within-stretch range that was mostly the rise)."""
    if len(y) < 3 or float(np.ptp(x)) == 0.0:
        return float(np.subtract(*np.percentile(y, [75, 25])))
    slope, icpt = np.polyfit(np.asarray(x, dtype=np.float64), y, 1)
    r = y - (slope * np.asarray(x, dtype=np.float64) + icpt)
    return float(np.subtract(*np.percentile(r, [75, 25])))


def _agent_reward(c: Ctx) -> Decision | None:
    """An agent (reinforcement learning) is judged by its episode reward, not its surrogate losses:
    it never learned (best stretch within noise of the first: underfit), it collapsed (the last
    stretch kept less than :data:`REWARD_KEPT` of its best gain: unstable), else the healthy rule's
    verdict (which also weighs how the run ended) with the reward's course as its evidence."""
    hit = agent_reward(c.run)
    if hit is None:
        return None
    k, steps, v = hit
    n = min(REWARD_SEGMENTS, len(v) // 3)
    parts = np.array_split(np.arange(len(v)), n)
    med = np.array([float(np.median(v[p])) for p in parts])
    spread = float(np.median([_detrended_iqr(steps[p], v[p]) for p in parts]))
    first, last = float(med[0]), float(med[-1])
    ib = int(np.argmax(med))
    best = float(med[ib])
    gain = best - first
    at = lambda i: int(steps[parts[i][len(parts[i]) // 2]])  # noqa: E731
    course = (
        f"{k}, median over {n} equal stretches of the run: {fmt(first)} (first) -> {fmt(best)} "
        f"(best, near step {at(ib)}) -> {fmt(last)} (last); spread within a stretch {fmt(spread)}"
    )
    if gain <= REWARD_LEARNED_NOISE * spread or gain <= 0:
        if c.ending.stopped:
            return None
        return Decision(
            Outcome.UNDERFIT,
            Cause.MODEL_CONVERGENCE,
            f"The agent did not learn: {course}; its best stretch is within "
            f"{fmt(REWARD_LEARNED_NOISE)}x the spread of its first. The episode reward is the task "
            "metric of an agent (its policy/value losses need not fall); check the reward signal, the "
            "exploration, the learning rate and the observation/action scaling.",
        )
    kept = (last - first) / gain
    if kept < REWARD_KEPT:
        return Decision(
            Outcome.UNSTABLE,
            Cause.MODEL_CONVERGENCE,
            f"The agent's reward collapsed: {course}; the last stretch keeps {fmt(100 * kept, 3)}% of the "
            "gain of its best (a policy collapse). Keep the best checkpoint; lower the learning rate or "
            "the clip range, or check the value/advantage scaling and the entropy of the policy.",
        )
    if c.ending.stopped:
        return None
    d = _healthy(c)
    if d is None:  # pragma: no cover - the healthy rule always decides
        return None
    d.summary = (
        f"The agent learned: {course} ({fmt(100 * kept, 3)}% of its best gain kept). " + d.summary
    )
    return d


def _baseline(c: Ctx) -> Decision | None:
    """BL001: a learning metric worse than the baselines beyond their noise band; within noise: no rule.
    Not on a training loss that takes both signs (:func:`..task_metric.surrogate_loss`): a surrogate
    not minimised towards zero says nothing of quality by its level (own corpus f7b3-12: a PPO loss
    -0.028 vs an earlier launch's -0.040 while the agent's score rose 0.04 -> 0.72)."""
    f = c.get("BL001", Severity.ERROR)
    if not f:
        return None
    from ..task_metric import surrogate_loss

    if f.facts.get("metric") and f.facts.get("metric") == surrogate_loss(c.run):
        return None
    layer = c.get("BL003")
    cause = Cause((layer.facts.get("cause") if layer else None) or Cause.MODEL_CONVERGENCE.value)
    if cause is Cause.METRIC_POLICY and layer is not None:
        return Decision(
            Outcome.SUCCEEDED,
            cause,
            f"The metric moved because of how it is computed, "
            f"not the model: {f.message}; {layer.message}.",
            f,
        )
    where = f"; {layer.message}" if layer else ""
    return Decision(
        Outcome.REGRESSED, cause, f"The run is worse than its baselines: {f.message}{where}.", f
    )


def _chance(c: Ctx) -> Decision | None:
    """GE004: validation at chance is a data problem first (labels without signal, broken
    validation labels), whatever the training curve did."""
    f = c.get("GE004", Severity.WARNING)
    if not f or (f.facts.get("labels_carry_signal") and c.get("GE001", Severity.ERROR)):
        return None  # training accuracy beat chance from the first eval: an overfit, not the labels
    if c.get("GE002", Severity.ERROR) and not f.facts.get("memorises"):
        # Training barely learned either (a training accuracy that rose from chance while the held-out
        # one sat at it is memorisation: GE002 then speaks of the held-out metric GE004 reads). If the loss never moved, the optimiser is the first
        # suspect (LR: underfit rule). If it moved, then stalled early while validation sat at
        # chance, the model reached what the labels allow: no signal (examples/corpus: shuffled
        # labels drop the loss 6% then plateau for under half the run; a too-low LR moves it < 3%).
        plateau = c.get("OP003")
        moved_then_stalled = (
            plateau is not None
            and plateau.facts.get("flat_share", 1.0) < 0.9
            and plateau.facts.get("rel_total_improvement", 0.0) >= 0.03
        )
        if not (moved_then_stalled and (f.facts.get("lift") or 0.0) < 0.1):
            return None
    outcome = (
        Outcome.OVERFIT
        if c.get("GE001", Severity.ERROR) or f.facts.get("memorises")
        else Outcome.UNDERFIT
        if c.get("GE002", Severity.ERROR) or _training_at_uniform_guess(c)
        else Outcome.PLATEAUED
    )
    blown = _blown_up_to_uniform_guess(c) if outcome is Outcome.UNDERFIT else None
    if blown is not None:
        return Decision(
            Outcome.DIVERGED,
            Cause.MODEL_CONVERGENCE,
            f"The training loss blew up at the start and then sat at the uniform guess: {blown}, while "
            f"{f.message}. A freshly initialised classifier starts near ln K; a loss at twice that or more "
            "comes from steps too large for the weights (the learning rate), and a network they "
            "saturated then predicts the uniform guess for the rest of the run: lower the learning rate.",
            f,
        )
    return Decision(
        outcome,
        Cause.DATA_CONFIG,
        f"Validation never beat chance: {f.message}. The labels or inputs carry no signal the "
        "model can generalise (shuffled or misaligned labels, broken validation preprocessing)"
        + (
            "; the training loss also ended at the uniform guess, so a learning rate or a run too small "
            "to move the model is the other suspect."
            if outcome is Outcome.UNDERFIT and not c.get("GE002", Severity.ERROR)
            else "."
        ),
        f,
    )


def _blown_up_to_uniform_guess(c: Ctx) -> str | None:
    """The text of a training loss whose first points (the median of its first 5%, at least one, as
    OP001's rose-from-start reads them) are at least OP001's ``chance_factor`` (2) x ln K and whose last
    value is at the uniform guess (:func:`_training_at_uniform_guess`), else None: the first steps blew
    the model up (a model does that much worse than uniform only by confidently predicting wrong
    classes, which learning does not produce) and it then collapsed to predicting the uniform guess
    (session-13 new-user run r26: Adam at lr 1.0, Loss/train 430 at step 5, then ln 10 = 2.30 to the
    end). K must be known (``_context.chance``)."""
    from ..detectors._context import chance as label_chance
    from ..detectors.OP001 import LossDivergence

    if not _training_at_uniform_guess(c):
        return None
    tk = c.run.key_for(Role.TRAIN_LOSS)
    t = c.run.metrics.series(tk).by_step().finite().values if tk else np.array([])
    ch = label_chance(c.run, vocab=False)
    if ch is None or len(t) < 5:
        return None
    first = float(np.median(t[: max(1, len(t) // 20)]))
    if first < LossDivergence.Params().chance_factor * ch.loss:
        return None
    return (
        f"{tk} {fmt(first)} over its first points ({fmt(first / ch.loss, 3)}x ln {ch.classes} = "
        f"{fmt(ch.loss)}; {ch.source}), {fmt(float(t[-1]))} at the end"
    )


def _training_at_uniform_guess(c: Ctx) -> bool:
    """The last training loss (a summary value counts) is at least ``UNIFORM_GUESS_SHARE`` (0.9) of ln K,
    the uniform guess's loss for the run's K classes: training learned nothing either, so the run is
    underfit rather than plateaued at a level it reached (newuser10 hf_defaults_at_chance: HF Trainer's
    summary train_loss 0.6923 with every eval_loss at ln 2)."""
    from ..detectors._context import chance as label_chance

    tk = c.run.key_for(Role.TRAIN_LOSS)
    t = c.run.metrics.series(tk).by_step().finite().values if tk else np.array([])
    ch = label_chance(c.run, vocab=False)
    return (
        bool(len(t))
        and ch is not None
        and ch.classes >= 2
        and float(t[-1]) >= UNIFORM_GUESS_SHARE * ch.loss
    )


def _nothing_to_overfit(c: Ctx) -> Decision | None:
    """An overfit reading (GE001, GE005) on a run whose held-out task score never left its floor (<= 1%,
    GE002's score floor, over >= 3 evaluations): the model learned nothing held-out data can measure, so
    there is nothing to overfit; a rising held-out loss there is a model that has not learned the task
    (own corpus f5b4-15 and log18: DETR, class error ~100%, AP ~0 at every epoch, test loss rising)."""
    if c.get("GE001", Severity.ERROR) is None and c.get("GE005", Severity.WARNING) is None:
        return None
    if c.ending.stopped:
        return None  # a run cut short with its score still at the floor: its stop explains more
    from ..detectors.GE002 import score_floor

    floor = score_floor(c.run, 0.01, 3)
    if floor is None:
        return None
    k, best, n = floor
    return Decision(
        Outcome.UNDERFIT,
        Cause.MODEL_CONVERGENCE,
        f"The model learned nothing held-out data can measure: {k} never rose above {fmt(best)} in {n} "
        "evaluations (its floor), so the rising held-out loss is not an overfit of a learned model; "
        "check the matching of predictions to targets (box format, class indices), the learning rate and "
        "whether the run is long enough.",
        c.get("GE001", Severity.ERROR) or c.get("GE005", Severity.WARNING),
    )


#: Held-out never learned: the validation loss's best stays within this share above the uniform-guess
#: loss ln K (K from the run's class count, else the K whose ln K its first value is) ...
NEVER_LEARNED_MARGIN = 0.03
#: ... while the training loss fell to at most this share of its first value (the model can fit the
#: training set). Default runs of session 7 on permuted labels: Keras val loss 0.704 -> best 0.695
#: (ln 2 = 0.693) while the training loss fell 78%; LightGBM valid logloss best 0.702, train 0.51 -> 0.01.
NEVER_LEARNED_TRAIN_SHARE = 0.5


def _heldout_never_learned(c: Ctx) -> Decision | None:
    """The validation loss never got below the uniform-guess loss ln K (its best within 3% above
    it, over >= 4 evaluations) while the training loss fell to half its first value or less, and no
    held-out accuracy beat chance (median lift < 25% of the way to 1.0, GE004's threshold): the
    model fits the training set and nothing of it carries to held-out data, so the labels or the
    split carry no signal (shuffled or misaligned labels, a broken split), not an overfit of a
    learned model. K is the run's class count (``_context.chance``) or, when nothing states it, the
    integer K >= 2 whose ln K the first validation loss is within 3% of."""
    import math

    from ..detectors._context import chance as label_chance

    vk, tk = c.run.key_for(Role.VAL_LOSS), c.run.key_for(Role.TRAIN_LOSS)
    if not vk or not tk:
        return None
    v = c.run.metrics.series(vk).by_step().finite().values
    t = c.run.metrics.series(tk).by_step().finite().values
    if len(v) < 4 or len(t) < 4 or not 0 < v[0] < 20 or t[0] <= 0:
        return None
    ch = label_chance(c.run, vocab=False)
    if ch is not None and ch.classes >= 2:
        k, source = int(ch.classes), ch.source
    else:
        k = round(math.exp(float(v[0])))
        if k < 2 or abs(float(v[0]) - math.log(k)) > NEVER_LEARNED_MARGIN * math.log(k):
            return None
        source = f"the first {vk}, {fmt(float(v[0]))} = ln {k}"
    lnk = math.log(k)
    best = float(np.min(v))
    if best < (1 - NEVER_LEARNED_MARGIN) * lnk:
        return None
    n = max(1, len(t) // 4)
    t_end = float(np.median(t[-n:]))
    if t_end > NEVER_LEARNED_TRAIN_SHARE * float(t[0]):
        return None
    acc = _acc(c, Role.VAL_ACCURACY)
    if acc is not None and (acc[1] - 1 / k) / (1 - 1 / k) >= 0.25:
        return None  # a held-out accuracy that learned: the loss is miscalibrated, not the labels
    tak = c.run.key_for(Role.TRAIN_ACCURACY)
    ta = c.run.metrics.series(tak).by_step().finite().values if tak else np.array([])
    if (
        len(ta)
        and (float(ta[0]) / (100.0 if ta.max() > 1.5 else 1.0) - 1 / k) / (1 - 1 / k) >= 0.25
    ):
        # the training accuracy was well above chance at the first evaluation, before a model could
        # memorise anything: the labels carry signal, so the failure is generalisation (GE004's
        # labels_carry_signal; shared/cases overfit-small-data: train acc 0.72 at epoch 1, overfit)
        return None
    outcome = Outcome.OVERFIT if c.get("GE001", Severity.ERROR) else Outcome.PLATEAUED
    return Decision(
        outcome,
        Cause.DATA_CONFIG,
        f"Held-out data was never learned: {vk} never went below {fmt(best)}, the uniform-guess loss "
        f"ln {k} = {fmt(lnk)} (K from {source}), over {len(v)} evaluations, while {tk} fell from "
        f"{fmt(float(t[0]))} to {fmt(t_end)}. The model fits the training set and nothing of it "
        "carries to held-out data: check that the labels line up with the inputs (shuffled or "
        "misaligned labels) and the split; no checkpoint of this run is better than chance.",
        c.get("GE001", Severity.ERROR),
    )


#: An overfit raises the held-out loss gradually: at most 3x its best in every run labelled overfit of
#: realworld/own (GL 12.8-199%: own f7b2-14 fastai 0.23 -> 0.69). A final held-out loss 10x its best or
#: more (an order of magnitude) is instability, not overfit (own f7b3-14: a GNN whose validation loss
#: ended 17x its best while its training loss sat flat).
OVERFIT_MAX_RATIO = 10.0


#: A framework's early-stopping line naming the metric it watches: XGBoost < 1.3 (``training.py``,
#: ``_train_internal``: "Will train until {} hasn't improved in {} rounds."), Lightning's EarlyStopping
#: (``lightning/pytorch/callbacks/early_stopping.py`` 2.6.6: "Metric {} improved ...", "Monitored metric {}
#: did not improve in the last {} records.").
_EARLY_STOP_WATCHES = re.compile(
    r"Will train until (?P<a>\S+) hasn't improved in \d+ rounds|"
    r"(?:Monitored metric|\bMetric) (?P<b>\S+) (?:did not improve|improved)\b"
)
_TRAIN_METRIC = re.compile(r"^(?:train|training)[-_/.]", re.I)


def task_metric_overrules(c: Ctx) -> str | None:
    """Why the run's task metric overrules an overfit or plateau read from the losses, or ``None``.

    The task metric comes first (:mod:`..task_metric`): a held-out accuracy or AP at its ceiling over
    its last tenth of evaluations (:func:`..task_metric.solved`: the held-out set is solved by that
    measure, nothing is left to gain or lose on it); or, when GE001's overfit is read from the task
    metric itself (its held-out error), a final level that holds within the metric's noise band or
    gave back at most a tenth of its gain (:func:`..task_metric.judge`; own corpus f10b2-16: YOLOv8
    mAP50-95 0.512 at epoch 152, 0.4625 at 199, a fall of a tenth of its 0.49 gain, its last quarter
    the best by quarter means). A held-out *loss* that rises while the task metric keeps improving is
    left to the loss rules: the labelled corpora call a doubled validation loss an overfit even when
    the accuracy still creeps up (own wb03, wb05, tb10, f7b3-01)."""
    from ..task_metric import judge, solved

    got = solved(c.run)
    if got is not None:
        return (
            f"{got[0]} sits at its ceiling ({fmt(got[1])} over its last evaluations): the held-out set "
            "is solved by that measure"
        )
    f = c.get("GE001", Severity.ERROR)
    if f is not None and str(f.facts.get("measure", "")).startswith("held-out error"):
        j = judge(c.run)
        if j is not None and j.holds:
            return f"the task metric held its level: {j.describe()}"
    return None


def early_stop_on_training(run: RunData) -> str | None:
    """The console line whose early stopping watches a training-set metric (``train-logloss``,
    ``train_loss``), or ``None``: such a stop follows the fit to the training data and never fires on a
    held-out rise, a misconfigured stop (XGBoost watches the last set of ``evals``)."""
    for ln in run.console[:5000]:
        m = _EARLY_STOP_WATCHES.search(ln.text)
        if m and _TRAIN_METRIC.match(m["a"] or m["b"] or ""):
            return ln.text.strip()[:160]
    return None


def _overfit(c: Ctx) -> Decision | None:
    """GE001 at error, on a run its own early stopping did not end: an early stop on the rising
    held-out metric is the designed response (the rise inside its patience window triggered it, and
    the kept model is the best one), as V12a holds. When the log's early stopping watches a training
    metric (:func:`early_stop_on_training`), the stop could never fire on the held-out rise: the
    stopping criterion is misconfigured (data_config)."""
    f = c.get("GE001", Severity.ERROR)
    if f is None:
        return _flat_tiny_heldout(c)
    if f and task_metric_overrules(c) is not None:
        return None
    stop_explains = c.ending.early_stopped and not rise_outlasts_patience(c.run, f)
    if f and not stop_explains and selection_metric_holds(c.run) is None:
        tiny = heldout_size(c.run)
        if tiny is not None and tiny.loss_within_noise:
            return _tiny_heldout(c, f, tiny)
        gl = float(f.facts.get("gl") or 0.0)
        if f.facts.get("measure") == "loss" and gl >= 100.0 * (OVERFIT_MAX_RATIO - 1.0):
            return Decision(
                Outcome.UNSTABLE,
                Cause.MODEL_CONVERGENCE,
                f"The held-out loss blew up: {f.message}. A validation loss at "
                f"{fmt(1 + gl / 100, 3)}x its best is an order of magnitude, not the gradual rise of "
                "an overfit: the model became numerically unstable on held-out data (a learning rate "
                "too high for the late stage, exploding activations, a few inputs far outside the "
                "training range). Keep the best checkpoint; look at the evaluations where it jumped.",
                f,
            )
        watched = early_stop_on_training(c.run)
        if watched is not None:
            return Decision(
                Outcome.OVERFIT,
                Cause.DATA_CONFIG,
                f"The run overfit: {f.message}. Its early stopping watches a training metric "
                f'("{watched}"), which keeps improving as the model fits the training set, so it never '
                "stopped the run: watch the held-out metric (XGBoost stops on the last set of evals).",
                f,
            )
        return Decision(
            Outcome.OVERFIT, Cause.MODEL_CONVERGENCE, f"The run overfit: {f.message}.", f
        )
    return None


def rise_outlasts_patience(run: RunData, f: Finding) -> tuple[int, int] | None:
    """``(evaluations after the held-out best, patience)`` when GE001's held-out rise lasted more
    evaluations than the early-stopping patience the run configured, plus one (frameworks differ by
    one in counting the stopping evaluation), else ``None`` (no patience configured, or the rise fits
    in it). An early stop watching that held-out series fires ``patience`` evaluations after its
    best; a rise that went on longer was not what stopped the run (the stop watched another metric,
    as Ultralytics' fitness, which kept improving while the loss rose), so the stop is no designed
    response to it (own corpus f22b2-13: YOLOv8s val/box_loss best at epoch 12, rising to the stop at
    epoch 220 = best fitness 120 + patience 100, mAP50-95 0.088 -> 0.063)."""
    from ..detectors._context import early_stopping_patience

    pat = early_stopping_patience(run)
    n, ib = f.facts.get("n_evals"), f.facts.get("best_eval_index")
    if pat is None or not isinstance(n, int) or not isinstance(ib, int):
        return None
    after = n - 1 - ib
    return (after, pat[0]) if after > pat[0] + 1 else None


def _flat_after_best(c: Ctx) -> Finding | None:
    """GE001's info finding of a held-out rise with no trend after the best (``kind='no_trend'``)."""
    return next((g for g in c.by_code.get("GE001", []) if g.facts.get("kind") == "no_trend"), None)


def _flat_tiny_heldout(c: Ctx) -> Decision | None:
    """A held-out rise GE001 reads as scatter after the best, on a held-out set of a few examples: the
    set is too small to rank the epochs either way (:func:`_tiny_heldout`)."""
    g = _flat_after_best(c)
    if g is None or c.ending.early_stopped:
        return None
    tiny = heldout_size(c.run)
    if tiny is None or not tiny.loss_within_noise:
        return None
    return _tiny_heldout(c, g, tiny)


def _tiny_heldout(c: Ctx, f: Finding, tiny: HeldoutSize) -> Decision | None:
    """A held-out rise read on a held-out set of a few examples (:func:`.granularity.heldout_size`):
    counting noise, not an overfit. A run that reached its end is judged on what it is measured with
    (succeeded, metric_policy: the held-out set is too small to rank its epochs); a stopped one is
    left to the rules of its stop (``None``)."""
    if c.ending.stopped:
        return None
    return Decision(
        Outcome.SUCCEEDED,
        Cause.METRIC_POLICY,
        f"The held-out loss rose ({f.message}), but {tiny.sentence()}: a held-out set that small cannot "
        "tell an overfit from chance, nor rank the epochs. Evaluate on a held-out set of hundreds of "
        "examples before reading these curves.",
        f,
    )


#: The run's selection metric "holds" when its best evaluation lies in the last ``SELECTION_TAIL`` of
#: its evaluations, or its final value (median of the last 3) is within ``SELECTION_NOISE`` x its
#: noise (median absolute change between consecutive evaluations of its second half) of that best.
SELECTION_TAIL = 0.1
SELECTION_NOISE = 3.0


def selection_metric_holds(run: RunData) -> tuple[str, float, float, int, int] | None:
    """``(name, best, final, best evaluation, evaluations)`` when the metric the run selects its
    checkpoint by is a task metric, not a loss (a ``monitor``/``metric_for_best_model`` param naming
    an accuracy or score, or Ultralytics fitness from its mAP columns; :func:`detectors._context.
    monitored`), has >= 6 evaluations and ended at or near its best (:data:`SELECTION_TAIL`,
    :data:`SELECTION_NOISE`), or ended (median of its last 3) above its level at the held-out loss
    minimum (median of the 3 evaluations around it) by more than that margin and within a tenth of its
    gain (best - first) of its best; else ``None``. The task
    metric is what the run is for: a held-out
    loss component rising while it holds is not a model getting worse at its task (own corpus
    f8b2-09: YOLOv8 val/box_loss above its minimum while the fitness is best at epoch 294 of 300;
    f8b2-10: a helmet detector's val box loss up 29% from epoch 8 while fitness rose from there to its
    best at 83, ending 0.04 below it on a validation set of a few objects)."""
    from ..detectors._context import monitored

    vk = run.key_for(Role.VAL_LOSS)
    if not vk:
        return None
    name, s, hib, source = monitored(run, vk)
    if source == "validation loss" or not hib or len(s) < 6:
        return None
    v = np.asarray(s.values, dtype=np.float64)
    ib = int(np.argmax(v))
    half = v[len(v) // 2 :]
    noise = float(np.median(np.abs(np.diff(half)))) if half.size > 2 else 0.0
    final = float(np.median(v[-3:]))
    if float(v[ib]) - float(v[0]) <= SELECTION_NOISE * noise:
        return None  # it never improved: nothing that holds
    tail = ib >= len(v) - max(2, int(np.ceil(SELECTION_TAIL * len(v))))
    if tail or float(v[ib]) - final <= SELECTION_NOISE * noise:
        return name, float(v[ib]), final, ib + 1, len(v)
    # ended well above where the held-out loss turned and near its best (giving back at most a tenth
    # of what it gained, GE001's MILD_RISE): the model got better by the measure it is selected by
    # after the loss's minimum, whatever that loss did (own corpus f8b2-10; tb10, whose mAP gave back
    # a fifth of its gain from its best, stays an overfit)
    from ..detectors.GE001 import MILD_RISE

    lv = run.series(vk).by_step().finite()
    if len(lv) and float(v[ib]) - final <= MILD_RISE * (float(v[ib]) - float(v[0])):
        at = float(lv.steps[int(np.argmin(lv.values))])
        i0 = int(np.clip(np.searchsorted(s.steps, at, side="left"), 0, len(v) - 1))
        if (
            i0 < len(v) - 3
            and final - float(np.median(v[max(0, i0 - 1) : i0 + 2])) > SELECTION_NOISE * noise
        ):
            return name, float(v[ib]), final, ib + 1, len(v)
    return None


def _gap_overfit(c: Ctx) -> Decision | None:
    """GE005 at warning (validation loss at least twice the training loss at the end, the gap grown
    since the best evaluation) while the validation loss ended worse than its best beyond its noise
    (3x the median step-to-step change of its last half, at least 2% of the best) and the training
    loss kept falling after that best evaluation: the run fits the training set ever better and the
    held-out data no better, the definition of overfitting even when GE001's generalisation-loss
    threshold is not reached (a slow creep)."""
    f = c.get("GE005", Severity.WARNING)
    tk, vk = c.run.key_for(Role.TRAIN_LOSS), c.run.key_for(Role.VAL_LOSS)
    if not f or not tk or not vk or c.ending.early_stopped:
        # an early stop on the rising validation loss is the designed response: the rise inside its
        # patience window is what triggered it (tests/data/realworld wb06, healthy)
        return None
    if selection_metric_holds(c.run) is not None or task_metric_overrules(c) is not None:
        return None  # the metric the run selects by ended at or near its best: no overfit to report
    if _flat_after_best(c) is not None:
        return None  # GE001: no trend after the held-out best, scatter around a level, not a creep
    v = c.run.metrics.series(vk).by_step().finite()
    t = c.run.metrics.series(tk).by_step().finite()
    if len(v) < 4 or len(t) < 4:
        return None
    ib = int(np.argmin(v.values))
    if ib >= len(v) - 1:
        return None
    best, final = float(v.values[ib]), float(v.values[-1])
    half = v.values[len(v) // 2 :]
    noise = float(np.median(np.abs(np.diff(half)))) if half.size > 2 else 0.0
    if final - best <= max(3 * noise, 0.02 * abs(best)):
        return None
    at_best = t.values[t.steps <= v.steps[ib]]
    after = t.values[t.steps > v.steps[ib]]
    if not len(at_best) or len(after) < 2:
        return None
    k = max(1, min(len(after) // 4, 10))
    if float(np.median(after[-k:])) >= float(np.median(at_best[-k:])):
        return None  # training did not keep improving: not the overfitting shape
    from ..detectors.GE001 import heldout_accuracy_holds

    held = heldout_accuracy_holds(c.run, float(v.steps[ib]))
    if held is not None and held["holds"]:
        return None  # held-out accuracy kept its level: a calibration shift, not overfitting (GE001 notes it)
    return Decision(
        Outcome.OVERFIT,
        Cause.MODEL_CONVERGENCE,
        f"The run overfit (slowly): {vk} ended at {fmt(final)}, above its best {fmt(best)} at step "
        f"{int(v.steps[ib])} (noise ~{fmt(noise)}), while {tk} kept falling; {f.message}.",
        f,
    )


#: Memorised: the training accuracy's last-quarter median at or above this (the training set is fit) ...
MEMORISED_TRAIN_ACC = 0.99
#: ... with the validation accuracy's last-quarter median at least this far below it (in accuracy units).
#: From the real corpora: own wb03/wb05 (AlexNet CIFAR-10, labelled overfit: train 0.993, val 0.77) and
#: realworld csv01 (Keras, labelled overfit|plateaued: train 0.997, val 0.85); no healthy run of
#: realworld/own/libraries has a training accuracy >= 0.99 with a gap of 10 points (keras-healthy: 1.0/1.0).
MEMORISED_GAP = 0.10


def _acc(c: Ctx, role: Role) -> tuple[str, float] | None:
    k = c.run.key_for(role)
    if not k:
        return None
    v = c.run.metrics.series(k).by_step().finite().values
    if len(v) < 3:
        return None
    q = v[-max(1, len(v) // 4) :]
    scale = 100.0 if float(np.max(v)) > 1.5 else 1.0  # accuracy logged in percent (0-100)
    return k, float(np.median(q)) / scale


#: Loss names that are not a classifier's cross-entropy (a squared or absolute error, a focal or dice
#: loss weights or bounds a misclassified example's term below ln 2): :func:`_train_acc_from_nll` skips them.
_NOT_NLL = re.compile(r"mse|mae|l1|l2|huber|focal|dice|hinge|contrastive|triplet|kl", re.I)


def _train_acc_from_nll(c: Ctx) -> tuple[str, float] | None:
    """``(key, lower bound)`` of the training accuracy of a classifier that logs no training accuracy,
    from its training loss (a mean negative log-likelihood, >= 3 finite points, last-quarter median
    ``L``): a misclassified example's probability of its true class is at most 1/2, so it adds at least
    ln 2 to the mean, and at most ``L / ln 2`` of the examples are misclassified (Markov's inequality):
    the training accuracy is at least ``1 - L / ln 2``. A loss with extra positive terms (weight decay,
    an auxiliary loss) only loosens the bound. Only for a run that logs a held-out accuracy (a
    classifier) and a loss whose name is no squared/absolute error, focal, dice or ranking loss."""
    k = c.run.key_for(Role.TRAIN_LOSS)
    if not k or _NOT_NLL.search(k) or c.run.key_for(Role.VAL_ACCURACY) is None:
        return None
    v = c.run.metrics.series(k).by_step().finite().values
    if len(v) < 3 or float(np.min(v)) < 0:
        return None
    med = float(np.median(v[-max(1, len(v) // 4) :]))
    return k, 1.0 - med / float(np.log(2))


def _memorised(c: Ctx) -> Decision | None:
    """The training accuracy at >= 99% over the last quarter of the run while the validation accuracy
    sits >= 10 points below it: the model memorised the training set and does not generalise as
    well; more epochs only widen the gap (the textbook overfit reading of an accuracy gap). A run
    that logs no training accuracy has it bounded from below by its cross-entropy training loss
    (:func:`_train_acc_from_nll`: a last-quarter loss <= 0.0069 is a training accuracy >= 99%)."""
    tr, va = _acc(c, Role.TRAIN_ACCURACY), _acc(c, Role.VAL_ACCURACY)
    bound = tr is None and va is not None
    if bound:
        tr = _train_acc_from_nll(c)
    if tr is None or va is None or tr[1] > 1.0 or va[1] > 1.0:
        return None
    if tr[1] < MEMORISED_TRAIN_ACC or tr[1] - va[1] < MEMORISED_GAP:
        return None
    fit = (
        f"{tr[0]} ends so low (a mean cross-entropy of {fmt(float(np.log(2)) * (1 - tr[1]))} over "
        f"the last quarter) that the training accuracy is at least {fmt(100 * tr[1], 3)}%"
        if bound
        else f"{tr[0]} is {fmt(100 * tr[1], 3)}% over the last quarter"
    )
    return Decision(
        Outcome.OVERFIT,
        Cause.MODEL_CONVERGENCE,
        f"The run overfit: {fit} (the training set is memorised) while {va[0]} is "
        f"{fmt(100 * va[1], 3)}%, {fmt(100 * (tr[1] - va[1]), 3)} points lower; more epochs only widen "
        "the gap (regularise, augment, or stop at the best validation).",
    )


#: Degraded in-run: the held-out metric's final value is worse than its best by this share of the
#: best (a loss 25% above its minimum, an accuracy/mAP 25% below its peak) ...
DEGRADED_HELDOUT = 0.25
#: ... while the smoothed training loss rose this factor above its own minimum after reaching it (the
#: training got worse too, so it is not an overfit). Both from the shape the analysts of shared/realworld and
#: tests/data/realworld call "regressed" (an LR too high after warmup: train 0.12 -> 0.31, eval
#: loss 0.22 -> 0.40); a healthy Keras run's val-accuracy dip of 4% (realworld csv02) stays out.
DEGRADED_TRAIN = 1.5


def _degraded(c: Ctx) -> Decision | None:
    """GE003 (final held-out value worse than its best beyond noise) by >= 25% of the best, with the
    smoothed training loss rising >= 1.5x above its minimum after it: the model the run ends with is worse
    than one it produced earlier, and training got worse too (not an overfit): a regression within
    the run, usually the learning rate after warmup."""
    f = c.get("GE003", Severity.WARNING)
    k = c.run.key_for(Role.TRAIN_LOSS)
    if not f or not k or not f.facts.get("best"):
        return None
    best, final = float(f.facts["best"]), float(f.facts["final"])
    if abs(final - best) < DEGRADED_HELDOUT * abs(best):
        return None
    from ..signal import centered_median, smooth_window

    t = c.run.metrics.series(k).by_step().finite()
    if len(t) < 10:
        return None
    sm = centered_median(t.values, smooth_window(len(t)))
    i = int(np.argmin(sm))
    lo = float(sm[i])
    if lo <= 0 or i >= len(sm) - 1:
        return None
    j = i + int(np.argmax(sm[i:]))
    if float(sm[j]) < DEGRADED_TRAIN * lo:
        return None
    return Decision(
        Outcome.REGRESSED,
        Cause.MODEL_CONVERGENCE,
        f"The run got worse during training: {f.message}; and {k} rose to {fmt(float(sm[j]))} at step "
        f"{int(t.steps[j])}, {float(sm[j]) / lo:.1f}x its minimum {fmt(lo)} (step {int(t.steps[i])}). "
        "Training and held-out quality both degraded (not an overfit): the learning rate after "
        "warmup is the first suspect; keep the best checkpoint.",
        f,
    )


#: Ended far below its best: the final held-out value worse than its best by DEGRADED_HELDOUT of the best
#: *and* by this many times the evaluation noise (GE003's noise estimate). 10x noise is far outside what an
#: evaluation repeats by chance; the realworld/own/libraries runs reaching it are all labelled diverged,
#: overfit, regressed or underfit (measured: wb02 28x, tb11 >1000x, ts12 15x, wb09 14x), none healthy.
ENDED_BELOW_NOISE = 10.0


def _heldout_climb(c: Ctx) -> str | None:
    """How the held-out loss climbed, when GE001 reported its rise without a training loss to read
    (``train_loss_missing``, a loss, not an accuracy) and the loss (>= 6 evaluations) fell from its first
    evaluation to its best by more than it moves between evaluations (median absolute change) and then
    rose at more than half of the evaluations after the best: a gradual climb after learning, the
    overfitting curve, not a collapse (a jump) nor a model that never learned (own corpus f17b2-03: a
    recommender's val_loss 1.121 -> 0.933 at epoch 9, then up at most of 55 epochs to 1.325; tb11's test
    loss, stuck at the mean from its second evaluation, never fell first). Else ``None``."""
    g = c.get("GE001", Severity.INFO)
    vk = c.run.key_for(Role.VAL_LOSS)
    if (
        g is None
        or not g.facts.get("train_loss_missing")
        or not vk
        or c.run.key_for(Role.TRAIN_LOSS)
    ):
        return None
    v = c.run.series(vk).by_step().finite().values
    if len(v) < 6:
        return None
    ib = int(np.argmin(v))
    after = np.diff(v[ib:])
    noise = float(np.median(np.abs(np.diff(v))))
    if ib == 0 or after.size < 2 or float(v[0]) - float(v[ib]) <= noise:
        return None
    share = float((after > 0).mean())
    if share <= 0.5:
        return None
    return (
        f"{vk} fell {fmt(float(v[0]))} -> {fmt(float(v[ib]))} over its first {ib + 1} evaluations, then rose "
        f"at {fmt(100 * share, 3)}% of the {after.size} evaluations after its best"
    )


def _ended_below_best(c: Ctx) -> Decision | None:
    """GE003 with the final held-out value >= 25% of the best and >= 10x the noise below the best, when no
    overfit/underfit rule explained it: the model the run ends with is much worse than one it produced
    earlier. Never a plateau or a success (realworld wb02: test accuracy 0.839 best, 0.536 at the last
    epoch, labelled regressed)."""
    f = c.get("GE003", Severity.WARNING)
    if not f or not f.facts.get("best"):
        return None
    best, final = float(f.facts["best"]), float(f.facts["final"])
    noise = float(f.facts.get("noise") or 0.0)
    gap = abs(final - best)
    if gap < DEGRADED_HELDOUT * abs(best) or gap < ENDED_BELOW_NOISE * noise:
        return None
    climb = _heldout_climb(c)
    if climb is not None:
        return Decision(
            Outcome.OVERFIT,
            Cause.MODEL_CONVERGENCE,
            f"The run overfit: {f.message}; {climb}. No training loss is logged to show the gap, but a "
            "held-out loss that learns, bottoms out and then climbs steadily while training goes on is "
            "the overfitting curve (a collapse or a bad step jumps instead): keep the best checkpoint, "
            "stop early on the held-out loss, regularise.",
            f,
        )
    return Decision(
        Outcome.REGRESSED,
        Cause.MODEL_CONVERGENCE,
        f"The run ended far below its best: {f.message} ({fmt(100 * gap / abs(best), 3)}% of the best, "
        f"{fmt(gap / noise if noise else float('inf'), 3)}x the evaluation noise). The final model is "
        "much worse than one the run produced earlier: keep the best checkpoint, and look at what "
        "changed before the drop (learning rate, data order, a numerical event).",
        f,
    )


#: A collapse: the training loss repeats one value exactly (to the logged precision) at this many
#: consecutive points, at least ``COLLAPSE_SHARE`` of the run, after it first fell ``COLLAPSE_DROP`` from its
#: first value. Losses averaged over different batches never repeat to 4+ significant digits for 10 points
#: unless the model's output stopped depending on its input (realworld log04: SwAV at exactly 2.3026 = ln 10
#: for ~60 epochs, labelled plateaued; with GE002 it changes no other verdict of realworld/own/libraries;
#: own wb04, stuck at chance from its first point without a drop first, stays underfit).
COLLAPSE_MIN_POINTS = 10
COLLAPSE_SHARE = 0.1
COLLAPSE_DROP = 0.05


def collapse_stretch(c: Ctx) -> tuple[str, int, int, float] | None:
    """(key, first step, length, value) of the longest stretch of exactly repeated training-loss values
    after the loss first fell :data:`COLLAPSE_DROP` from its first value, when it is long enough."""
    k = c.run.key_for(Role.TRAIN_LOSS)
    if not k:
        return None
    s = c.run.metrics.series(k).by_step().finite()
    v = s.values
    if len(v) < COLLAPSE_MIN_POINTS or v[0] == 0:
        return None
    best = (0, 0)
    i = 0
    while i < len(v):
        j = i
        while j + 1 < len(v) and v[j + 1] == v[i]:
            j += 1
        if j - i + 1 > best[1] and v[i] != 0.0 and (v[0] - v[i]) >= COLLAPSE_DROP * abs(v[0]):
            best = (i, j - i + 1)
        i = j + 1
    i, n = best
    if n < max(COLLAPSE_MIN_POINTS, COLLAPSE_SHARE * len(v)):
        return None
    return k, int(s.steps[i]), n, float(v[i])


#: A training loss logged at full float precision (more than ``FROZEN_DIGITS`` significant digits: not a value
#: rounded for display) that is bitwise the same at every one of >= ``COLLAPSE_MIN_POINTS`` records from the first
#: never depended on the batch: losses of different batches differ in their last digits even when the model
#: predicts a constant, unless the constant is the uniform guess (the loss is then exactly ln K for every batch,
#: so a value at ln K for an integer K <= ``FROZEN_MAX_K`` is left to the underfit rules). Own corpus f8b2-17
#: (Lightning CSV, train_loss_batch 16.74222755432129 at all 74 records: labelled correctness_bug).
FROZEN_DIGITS = 6
FROZEN_MAX_K = 100_000


def frozen_loss(c: Ctx) -> tuple[str, int, float] | None:
    """``(key, points, value)`` when the training loss repeats one full-precision value bitwise at every
    record from its first (:data:`FROZEN_DIGITS`); ``None`` otherwise."""
    import math

    k = c.run.key_for(Role.TRAIN_LOSS)
    if not k:
        return None
    v = c.run.metrics.series(k).by_step().finite().values
    if len(v) < COLLAPSE_MIN_POINTS or not (v == v[0]).all() or v[0] == 0:
        return None
    x = float(v[0])
    if float(f"{x:.{FROZEN_DIGITS}g}") == x:
        return None  # rounded for display: repeats say nothing about the bits
    if 0 < x < math.log(FROZEN_MAX_K) and abs(x - math.log(round(math.exp(x)))) < 1e-4 * x:
        return None  # the uniform guess's loss ln K: a collapse, not a frozen value
    return k, len(v), x


#: Logged grad-norm points, >= 90% of them exactly 0, that say no gradient reaches the weights: a float
#: norm of a network's gradients is exactly 0 only when every gradient is (a clipped or tiny norm is not
#: 0.0); three points rule out a first-step artefact (a norm logged before the first backward).
MIN_ZERO_GRAD_POINTS = 3


def another_loss_learned(run: RunData, key: str | None) -> str | None:
    """Another training loss of the run (a key that can play the training-loss role) that fell at
    least :data:`CONVERGED_DROP` from its start (median of its first 5% of points, at least 3) to its
    end (median of its last 25%), when the judged loss ``key`` is not the run's total (its name
    beyond the split is not ``loss``, ``total`` or ``objective`` alone); else ``None``. With several
    losses logged and none named the total, the flat one is not shown to be what the run optimises: a
    loss that fell says the model learns (own corpus f9b2-20: GaitSet's hard-mined triplet loss, the
    optimised one, 0.44 -> 0.16 while the full triplet loss logged beside it stays at 0.19 by
    construction)."""
    from ..roles import _TRAIN, parse_name, roles_of

    if not key:
        return None
    rest = [t for t in parse_name(key).tokens if t not in _TRAIN]
    if rest in (["loss"], ["losses"]) or any(t in ("total", "objective") for t in rest):
        return None
    roles = roles_of(list(run.metrics.keys))
    for k in run.metrics.keys:
        if k == key or Role.TRAIN_LOSS not in roles.get(k, ()):
            continue
        v = run.series(k).by_step().finite().values
        if len(v) < 8:
            continue
        start = float(np.median(v[: max(3, len(v) // 20)]))
        end = float(np.median(v[-max(3, len(v) // 4) :]))
        if start > 0 and (start - end) / start >= CONVERGED_DROP:
            return k
    return None


#: A straight descent: the training loss's slope over the last third of its steps is at least this share
#: of its slope over the first third. A learning curve bends as the model approaches what it can fit
#: (own/realworld: of the training losses with >= 10 points that fall at >= 90% of their points, the
#: healthy ones end at a slope a fraction of their first; boosting at learning_rate 0.001,
#: tests/data/newuser12 sklearn_gbr_lr_0.001.log, ends at 0.77 of it).
STRAIGHT_SLOPE_SHARE = 0.5
#: ... falling at this share of its points or more (a deterministic full-batch or boosting loss, an
#: epoch mean: per-batch noise would make the slopes meaningless) ...
STRAIGHT_SMOOTH_SHARE = 0.9
#: ... over at least this many points ...
STRAIGHT_MIN_POINTS = 10
#: ... and not yet halved: a loss that fell at one pace from the start and kept less than half its
#: first value is in its initial descent, not near its floor.
STRAIGHT_MAX_FALL = 0.5


def straight_descent(c: Ctx) -> str | None:
    """A description when the training loss (no held-out loss or metric logged, the run not
    stopped early and shown to have reached its end, :func:`_reached_end`) fell at :data:`STRAIGHT_SMOOTH_SHARE` of its >= :data:`STRAIGHT_MIN_POINTS`
    points, less than :data:`STRAIGHT_MAX_FALL` of its first value in all, and its slope per step
    over the last third of its steps is >= :data:`STRAIGHT_SLOPE_SHARE` of its slope over the first
    third (the curve never bent): the run ended in its initial descent, far from converged, which
    is underfitting (too few iterations or too small a learning rate); else ``None``."""
    tk = c.run.key_for(Role.TRAIN_LOSS)
    if not tk or c.ending.stopped or _heldout_keys(c.run) or _reached_end(c) is None:
        return None
    s = c.run.series(tk).by_step().finite()
    if len(s) < STRAIGHT_MIN_POINTS:
        return None
    st, v = s.steps.astype(np.float64), s.values
    span = float(st[-1] - st[0])
    if span <= 0 or v[0] <= 0 or float((np.diff(v) < 0).mean()) < STRAIGHT_SMOOTH_SHARE:
        return None
    fall = float((v[0] - v[-1]) / v[0])
    if not 0 < fall < STRAIGHT_MAX_FALL:
        return None
    a, b = st[0] + span / 3, st[0] + 2 * span / 3
    va, vb = float(np.interp(a, st, v)), float(np.interp(b, st, v))
    early, late = (float(v[0]) - va) / (a - st[0]), (vb - float(v[-1])) / (float(st[-1]) - b)
    if early <= 0 or late < STRAIGHT_SLOPE_SHARE * early:
        return None
    return (
        f"{tk} fell {fmt(float(v[0]))} -> {fmt(float(v[-1]))} ({fmt(100 * fall, 3)}%) at one pace to its "
        f"last point: {fmt(late)} per step over the last third of the run vs {fmt(early)} over the first "
        f"({fmt(100 * late / early, 3)}%), at {fmt(100 * float((np.diff(v) < 0).mean()), 3)}% of its "
        f"{len(s)} points"
    )


def _reached_end(c: Ctx) -> str | None:
    """What shows the run reached its planned end: a finished status, :data:`evidence.COMPLETE_SHARE`
    of a planned length, an end-of-training line (:data:`~mlaudit_core.plan.NORMAL_END`), or a logged
    remaining-time estimate at 0 at its last point (scikit-learn's verbose ``Remaining Time`` column,
    ``0.00s`` at the last iteration); else ``None`` (a log that simply stops may be a run still going or
    killed: own corpus log16, a pretraining log cut at batch 260)."""
    from .evidence import COMPLETE_SHARE

    if c.run.status is RunStatus.FINISHED:
        return "finished status"
    if c.ending.share is not None and c.ending.share >= COMPLETE_SHARE:
        return "planned length reached"
    for line in c.run.console[-200:]:
        if NORMAL_END.search(line.text):
            return line.text.strip()[:120]
    for k in c.run.metrics.keys:
        if re.search(r"remaining|\beta\b", k, re.I):
            v = c.run.series(k).by_step().finite().values
            if len(v) and float(v[-1]) == 0.0:
                return f"{k} 0 at its last point"
    return None


def _heldout_keys(run: RunData) -> list[str]:
    """The keys of held-out (evaluation-split) losses, accuracies and scores."""
    from ..roles import parse_name

    return [k for k in run.metrics.keys if parse_name(k).split == "eval"]


def _straight_descent(c: Ctx) -> Decision | None:
    """V13c: the training loss ended in its initial descent (:func:`straight_descent`)."""
    said = straight_descent(c)
    if said is None:
        return None
    return Decision(
        Outcome.UNDERFIT,
        Cause.MODEL_CONVERGENCE,
        f"The run ended far from converged: {said}. A learning curve bends as the model nears what it "
        "can fit; this one never did, so the model is underfit for lack of iterations or of step size: "
        "raise the learning rate or the number of iterations (trees, epochs) and log a held-out score.",
    )


def _underfit_broken_signal(c: Ctx, f: Finding) -> Decision | None:
    """The loss GE002 found barely moving does not come from learning at all: it collapsed to one exact
    value (:func:`collapse_stretch`: plateaued), it is one exact value at every point
    (:func:`frozen_loss`: a code bug), or the gradient norm is exactly 0 at 90% of at least
    :data:`MIN_ZERO_GRAD_POINTS` points (a code bug); ``None`` otherwise."""
    col = collapse_stretch(c)
    if col is not None:
        k, step, n, val = col
        return Decision(
            Outcome.PLATEAUED,
            Cause.MODEL_CONVERGENCE,
            f"The training loss fell, then sat at exactly {fmt(val, 6)} for {n} consecutive points from "
            f"step {step}: identical values over different batches mean the output stopped depending on "
            f"the input (a collapse), so the run plateaued rather than learning slowly; {f.message}.",
            f,
        )
    frozen = frozen_loss(c)
    if frozen is not None:
        k, n, val = frozen
        return Decision(
            Outcome.UNDERFIT,
            Cause.CORRECTNESS_BUG,
            f"{k} is exactly {val!r} at all {n} logged points: a loss logged at full precision never "
            "repeats to the last bit over different batches, so the value does not come from the batches "
            "(frozen or detached parameters, an optimiser that never steps, or a stale value logged instead "
            f"of the current loss); {f.message}.",
            f,
        )
    gk = c.run.key_for(Role.GRAD_NORM)
    g = c.run.series(gk).finite() if gk else None
    if g is not None and len(g) >= MIN_ZERO_GRAD_POINTS and float((g.values == 0).mean()) >= 0.9:
        # no gradient reached the parameters: the loss is detached, the parameters frozen or left out of
        # the optimizer; no learning rate or schedule moves weights whose gradient is exactly zero
        return Decision(
            Outcome.UNDERFIT,
            Cause.CORRECTNESS_BUG,
            f"The model barely learned the training set: {f.message}; and {gk} is exactly 0 at "
            f"{int((g.values == 0).sum())} of {len(g)} logged points: no gradient reaches the weights "
            "(a loss computed outside the graph, frozen parameters, parameters missing from the optimizer).",
            f,
        )
    return None


def _underfit(c: Ctx) -> Decision | None:
    f = c.get("GE002", Severity.ERROR)
    if not f:
        return None
    if f.facts.get("score_floor") and c.ending.stopped:
        return None  # a held-out score still at its floor when the run was cut short: its stop explains more
    broken = _underfit_broken_signal(c, f)
    if broken is not None:
        return broken
    if f.facts.get(
        "labels_suspect"
    ):  # GE002: train loss under the first held-out loss, held-out rising, acc flat
        return Decision(
            Outcome.UNDERFIT,
            Cause.DATA_CONFIG,
            f"The model learned nothing that generalises: {f.message}.",
            f,
        )
    majority = _imbalanced_constant_predictor(c, f)
    if majority is not None:
        ak, share, n_at, n = majority
        return Decision(
            Outcome.UNDERFIT,
            Cause.DATA_CONFIG,
            f"The model predicts the majority class only: {f.message}; {ak} sits at {fmt(share)} at "
            f"{n_at} of {n} evaluations, the score of one class predicted for every input, so that "
            f"class is {fmt(100 * share, 3)}% of the held-out set: on data this imbalanced an "
            "unweighted loss is minimised by the class prior. Weight the classes in the loss (or "
            "resample), and judge the model by recall/F1 or AUC, not accuracy.",
            f,
        )
    worse = _made_worse(c, f)
    if worse is not None:
        return Decision(
            Outcome.REGRESSED,
            Cause.MODEL_CONVERGENCE,
            f"The training made the model worse: {f.message}; the training loss never went below its "
            f"first value, and {worse}. A model that starts at that level and loses it under training "
            "regressed (it did not fail to learn): look at the step size first (a learning rate too high "
            "for the starting point, a schedule that raises it), and keep the first checkpoint.",
            f,
        )
    if _too_early_for_underfit(c, f):
        return None
    heldout = heldout_still_improving(c.run) if f.facts.get("relative_drop_only") else None
    if f.facts.get("relative_drop_only") and (heldout is not None or _loss_alone_still_falling(c)):
        if c.lr.far_below:
            # still improving at the end, but at a learning rate below any optimiser's typical range:
            # the run is learning too slowly to converge in its length (demo regime 'underfit', lr 5e-6)
            return Decision(
                Outcome.UNDERFIT,
                Cause.MODEL_CONVERGENCE,
                f"The model is learning too slowly: {f.message}, while "
                + ("the held-out numbers still improve" if heldout else "the loss still falls")
                + f" at the end, at a {c.lr.describe()} (below {FAR_BELOW_LR:g}, the range of "
                "any optimiser): raise the learning rate, or train far longer.",
                f,
            )
        still = still_falling_at_pace(c.run, c.run.key_for(Role.TRAIN_LOSS))
        slow_lr = (
            c.lr.lr is not None
            and c.lr.optimiser
            is not None  # an unknown optimiser's typical value is SGD's, an upper bound
            and c.lr.lr <= c.lr.typical / FAR_ABOVE
            and finetune_evidence(c.run) is None
        )
        if still is not None and slow_lr and not c.ending.stopped:
            # the training loss barely moved and is still falling at its average pace at the last
            # point, at a learning rate an order of magnitude below its (named) optimiser's typical value
            # for a model trained from scratch: the run ended while learning steadily, far from converged,
            # which is underfitting, not a finished run (a fine-tune's or a typical LR's small late
            # fall is the tail of learning: own f6b3-10, f6b2-19)
            q3, q4 = still
            return Decision(
                Outcome.UNDERFIT,
                Cause.MODEL_CONVERGENCE,
                f"The model is learning too slowly for the run's length: {f.message}, and the training "
                f"loss is still falling at its average pace in its last quarter (median {fmt(q3)} -> "
                f"{fmt(q4)})"
                + (" while the held-out numbers still improve at the end" if heldout else "")
                + f", at a {c.lr.describe()} "
                "(an order of magnitude below it or more, training from scratch): the run ended far from "
                "converged. Raise the learning rate toward its typical value, or train far longer.",
                f,
            )
        return None  # a small drop while held-out numbers or the lone loss still improve: learning
    if f.facts.get("relative_drop_only") and another_loss_learned(
        c.run, c.run.key_for(Role.TRAIN_LOSS)
    ):
        return None  # one of several losses flat while another fell: not shown to be the objective
    if f.facts.get("relative_drop_only"):
        # a small relative drop with nothing to compare its level with (no chance level reached, no
        # held-out score at its floor, the loss did go below its start): the curve is flat, and whether
        # the level is poor (underfit) or the tail of earlier learning (a fine-tune, a first log after
        # learning, a run resumed where another ended) is not in the data
        return Decision(
            Outcome.PLATEAUED,
            Cause.MODEL_CONVERGENCE,
            f"The training loss barely moved: {f.message}. Nothing in the run gives that level a reference "
            "(no chance level reached, no held-out score at its floor), so the run plateaued; it is underfit "
            "only if the level is poor for this task (compare with the loss of an untrained model or a "
            "baseline).",
            f,
        )
    return Decision(
        Outcome.UNDERFIT,
        Cause.MODEL_CONVERGENCE,
        f"The model barely learned the training set: {f.message}.",
        f,
    )


#: Noise units (median absolute change between consecutive evaluations) by which a held-out loss must end
#: above its first evaluation to have got worse: the usual "beyond noise" margin of GE001's
#: ``ACC_NOISE_UNITS``.
WORSE_NOISE_UNITS = 3.0


def _made_worse(c: Ctx, f: Finding) -> str | None:
    """Why the held-out data says the training made the model worse, when GE002 found a training loss
    that never went below its first value and ended above it (``never_fell``, ``ratio`` > 1), not at the
    chance level nor with a held-out score at its floor: the held-out loss (>= 4 evaluations) ends above
    its first evaluation by more than :data:`WORSE_NOISE_UNITS` x its median change between evaluations,
    and the held-out accuracy (>= 4 evaluations) ends below its first evaluation by more than its noise
    margin (:func:`..detectors.GE001.accuracy_tolerance`). Else ``None``. A model that never learned sits
    at its starting level with nothing to lose (realworld tb11: a regression stuck at the mean predictor,
    no accuracy; csv17: a YOLOv8 mAP at its floor); one that loses accuracy and held-out loss from its
    first evaluation on regressed under the training (own corpus f17b1-08: a Keras fit whose learning
    rate rises every epoch 0.001 -> 0.0079, loss 0.483 -> 0.535, val_loss 0.521 -> 0.595, val accuracy
    0.820 -> 0.793)."""
    if not f.facts.get("never_fell") or f.facts.get("at_chance") or f.facts.get("score_floor"):
        return None
    if float(f.facts.get("ratio") or 0.0) <= 1.0:
        return None
    vk, ak = c.run.key_for(Role.VAL_LOSS), c.run.key_for(Role.VAL_ACCURACY)
    if not vk or not ak:
        return None
    v = c.run.series(vk).by_step().finite().values
    if len(v) < 4:
        return None
    noise = float(np.median(np.abs(np.diff(v))))
    if float(v[-1]) - float(v[0]) <= WORSE_NOISE_UNITS * noise:
        return None
    from ..detectors.GE001 import accuracy_tolerance
    from ..roles import as_fraction

    a, _ = as_fraction(ak, c.run.series(ak).by_step().finite().values)
    if len(a) < 4 or float(a[0]) - float(a[-1]) <= accuracy_tolerance(a):
        return None
    return (
        f"{vk} ended at {fmt(float(v[-1]))} against {fmt(float(v[0]))} at its first evaluation "
        f"({fmt((float(v[-1]) - float(v[0])) / noise if noise else float('inf'), 3)}x its change between "
        f"evaluations) while {ak} fell {fmt(float(a[0]))} -> {fmt(float(a[-1]))}: the model was already "
        "good at its first evaluation and lost it"
    )


#: The held-out accuracy of a constant predictor at or above which its class is a strong majority: at most
#: 20% of the examples in the other classes, the "moderate" imbalance of Google's Machine Learning
#: Crash Course (minority 1-20%; "mild" is 20-40%). Below it (own tb12: 0.661, 41 of 62 images) a model
#: stuck on the majority class failed to learn a fairly balanced task (model_convergence).
IMBALANCED_MAJORITY = 0.8


def _imbalanced_constant_predictor(c: Ctx, f: Finding) -> tuple[str, float, int, int] | None:
    """``(accuracy key, value, evaluations at it, evaluations)`` when GE002 found the held-out
    predictions constant (``stuck_accuracy``: an accuracy, recall or score at one value) or at the
    majority baseline, and the held-out accuracy sits at one value, at least
    :data:`IMBALANCED_MAJORITY` and under 1, at half or more of at least 5 evaluations: the accuracy
    of one class predicted for every input is that class's share, so the set is strongly imbalanced
    and the class prior is what an unweighted loss learned (tests/data/newuser12 pt_majority_class_tb:
    val/accuracy 0.937 at 15 of 15 evaluations, val/recall 0, 6.3% positives). ``None`` otherwise."""
    if not (f.facts.get("stuck_accuracy") or f.facts.get("majority_baseline")):
        return None
    from ..detectors.GE002 import as_fraction

    ak = c.run.key_for(Role.VAL_ACCURACY)
    if not ak:
        return None
    a = c.run.series(ak).by_step().finite()
    if len(a) < 5:
        return None
    acc, _ = as_fraction(ak, a.values)
    uniq, counts = np.unique(np.round(acc, 6), return_counts=True)
    j = int(np.argmax(counts))
    value, n_at = float(uniq[j]), int(counts[j])
    if n_at < 0.5 * len(acc) or not IMBALANCED_MAJORITY <= value < 1.0:
        return None
    return ak, value, n_at, len(acc)


#: Share of one epoch below which a training loss that did not fall shows nothing about underfitting:
#: over the first tenth of an epoch the per-batch losses of report b13-17 (ResNet-50, ImageNet
#: example) spread 1.09-1.60, a 45% band no trend of a few percent can be read from.
EARLY_EPOCH_SHARE = 0.1


def _too_early_for_underfit(c: Ctx, f: Finding) -> bool:
    """GE002 from a loss that did not fall or barely fell (no chance level, score floor or label
    evidence) read over less than :data:`EARLY_EPOCH_SHARE` of one epoch (the log's own
    ``steps_per_epoch``) of a plan of several epochs: the model has not yet seen a tenth of its
    training data once, and per-batch losses at the start of training move by tens of percent
    from batch to batch (report b13-17: ResNet-50 at iterations 0-140 of 5005, epoch 1 of 30, loss
    1.09-1.60 per batch), so underfitting (a statement about the training set) is not judged; the
    other findings decide."""
    if any(f.facts.get(k) for k in ("at_chance", "score_floor", "labels_suspect")):
        return False
    try:
        per_epoch = float(c.run.params.get("log.steps_per_epoch") or 0)
    except (TypeError, ValueError):
        return False
    tk = c.run.key_for(Role.TRAIN_LOSS)
    if per_epoch <= 0 or not tk or c.ending.unit != "epoch" or (c.ending.planned or 0) < 2:
        return False
    steps = c.run.series(tk).finite().steps
    if _epochs_spanned(c.run, steps) >= 1.0:
        # the loss's records span whole epochs by the run's epoch counter: its steps count logging
        # calls, not batches (W&B's ``_step`` of a Keras callback logging once per epoch; own corpus
        # f17b1-08: 10 records over epochs 0-9 beside 1875 batches per epoch)
        return False
    return len(steps) > 0 and float(steps.max() - steps.min()) < EARLY_EPOCH_SHARE * per_epoch


def _loss_alone_still_falling(c: Ctx) -> bool:
    """True when the training loss is the run's only learning curve (no held-out loss or accuracy
    logged), OP003 found no flat stretch in it, the learning rate is not far above its optimiser's
    typical value (:data:`.evidence.FAR_ABOVE`), and it still falls at its average pace in its last
    quarter (:func:`still_falling_at_pace`). A plateau is a curve that stopped falling; a small total
    drop of a curve that falls to its end is slow learning, not a stall, and with no held-out number
    nothing says the level is poor (own corpus f16b1-10: an LM pretraining loss, quarter medians
    4.34, 4.15, 4.09, 3.99 over steps 700-2840 of a log whose start was lost; f5b5-04: 0.553, 0.529,
    0.515, 0.506 over 200 epochs)."""
    from ..roles import parse_name

    run = c.run
    tk = run.key_for(Role.TRAIN_LOSS)
    if not tk or c.get("OP003", Severity.WARNING) is not None or c.lr.far_above:
        # at a learning rate far above its optimiser's typical value a loss that barely moves is
        # the optimiser overshooting, not slow learning
        return False
    for role in (Role.VAL_LOSS, Role.VAL_ACCURACY):
        k = run.key_for(role)
        if k and len(run.series(k).finite()) > 0:
            return False
    for k in run.metrics.keys:
        pn = parse_name(k)
        if pn.split == "eval" and pn.family in ("acc", "score", "error", "loss"):
            if len(run.series(k).finite()) > 0:
                return False
    return still_falling_at_pace(run, tk) is not None


def _epochs_spanned(run: RunData, steps: np.ndarray) -> float:
    """How many epochs the run's epoch series (role epoch) advances over ``steps`` (its values at the
    first and last of them, read at or before each step); 0.0 without an epoch series or steps."""
    ek = run.key_for(Role.EPOCH)
    if not ek or not len(steps):
        return 0.0
    e = run.series(ek).by_step().finite()
    if not len(e):
        return 0.0
    i = np.searchsorted(e.steps, [float(steps.min()), float(steps.max())], side="right") - 1
    i = np.clip(i, 0, len(e) - 1)
    return float(e.values[i[1]] - e.values[i[0]])


def heldout_still_improving(run: RunData) -> tuple[str, float, float] | None:
    """``(key, first, best)`` of a held-out loss or task metric (evaluation split; a loss, accuracy, score
    or error rate whose direction its name states) with >= 4 finite evaluations whose best value is at
    one of its last ``max(2, n // 20)`` evaluations and better than its first by more than twice its
    noise (median absolute step of its second half); else ``None``. A model whose held-out numbers
    still improve at the end has not stalled, whatever its training loss does: a training loss flat at
    its floor (label smoothing, augmentation, a fine-tune's tail) or barely moving from a first log
    that follows learning is no plateau (own corpus f5b4-09: DeiT test top-1 at its best at the last
    of 15 epochs under a flat smoothed loss; f6b3-10: a QLoRA eval loss still creeping down at the end).
    Not applied to GE007, whose monitored held-out metric is itself the plateau evidence."""
    from ..roles import parse_name

    for k in run.metrics.keys:
        pn = parse_name(k)
        if (
            pn.split != "eval"
            or pn.higher_is_better is None
            or pn.family not in ("acc", "score", "error", "loss")
            or any(t in ("scale", "lossscale") for t in pn.tokens)
        ):
            continue
        m = run.series(k).by_step().finite()
        if len(m) < 4:
            continue
        vals = m.values if pn.higher_is_better else -m.values
        ib = int(np.argmax(vals))
        half = vals[len(vals) // 2 :]
        noise = float(np.median(np.abs(np.diff(half)))) if half.size > 2 else 0.0
        if ib >= len(vals) - max(2, len(vals) // 20) and float(vals[ib] - vals[0]) > 2 * noise:
            return k, float(m.values[0]), float(m.values[ib])
    return None


#: Share of its average fall per quarter that a loss must still fall in its last quarter to be "still
#: falling at its pace": half, i.e. its decline has not even halved its speed by the end. A loss that
#: converges decelerates (its per-quarter fall shrinks toward 0: own f5b4-09, a DeiT loss flat at its
#: floor under a still-improving top-1).
STILL_FALLING_PACE = 0.5


def still_falling_at_pace(run: RunData, key: str | None) -> tuple[float, float] | None:
    """``(third-quarter median, last-quarter median)`` of the loss ``key`` (>= 8 finite points, by
    step) when its last quarter still falls by at least :data:`STILL_FALLING_PACE` of its average fall
    per quarter over the run (first-quarter median to last-quarter median, divided by 3) and that
    average fall is positive; else ``None``. Medians per quarter, so per-batch noise does not decide."""
    if not key:
        return None
    v = run.series(key).by_step().finite().values
    n = len(v)
    if n < 8:
        return None
    q1, q3, q4 = (float(np.median(v[a * n // 4 : (a + 1) * n // 4])) for a in (0, 2, 3))
    pace = (q1 - q4) / 3
    if pace <= 0 or q3 - q4 < STILL_FALLING_PACE * pace:
        return None
    return q3, q4


#: A training loss "learned" when it fell at least this share of its first (smoothed) level before
#: levelling off: OP001's ``min_drop`` convention for a loss that learned.
CONVERGED_DROP = 0.2


def converged_at_plan(c: Ctx, f: Finding) -> bool:
    """An OP003 plateau that is convergence: the run reached its planned length (at least
    :data:`evidence.COMPLETE_SHARE` of it, a checkpoint snapshot included), the training loss fell at
    least :data:`CONVERGED_DROP` of its first level before it levelled off, and it is not frozen at one
    value (a constant-prediction solution). Levelling off at the end of the planned schedule after a
    large drop is how a run converges; "more steps buy nothing" says nothing about a run that used all
    it planned (own corpus f9b2-07: a GPT-2 LoRA checkpoint at step 7500 of 7843, loss 5.29 -> 3.37 in
    the first quarter, flat after). Without a planned length a plateau stands (mlf05, f5b3-08)."""
    from .evidence import COMPLETE_SHARE

    share = c.ending.share
    return (
        share is not None
        and share >= COMPLETE_SHARE
        and not f.facts.get("frozen")
        and float(f.facts.get("rel_total_improvement") or 0.0) >= CONVERGED_DROP
    )


def _plateau(c: Ctx) -> Decision | None:
    f = c.get("OP003", Severity.WARNING)
    if f and task_metric_overrules(c) is not None:
        return None
    if f and heldout_still_improving(c.run) is not None:
        return (
            None  # held-out numbers still improving at the end: the training loss is at its floor
        )
    if f and converged_at_plan(c, f):
        return None  # a large drop, then level to the end of its plan: converged
    if f and learned_its_task(c, f) is not None:
        return None  # level under an accuracy that rose to 90% or more: learning done, not a stall
    if f and heldout_at_ceiling(c, f) is not None:
        return None  # level under a held-out score at its ceiling: nothing left to learn
    if f and _reward_trained(c.run) is not None:
        return None  # the surrogate loss of a policy trained from rewards: flat says nothing (see there)
    if f:
        return Decision(
            Outcome.PLATEAUED, Cause.MODEL_CONVERGENCE, f"The run plateaued: {f.message}.", f
        )
    return None


#: A held-out score (accuracy, F1, AUC on the 0-1 scale) at or above this over the second half of
#: its evaluations is at its ceiling: the model is right on 99 of 100 held-out inputs, so a training
#: loss level beside it is where learning ended, not a stall (own corpus f10b1-20: an AI-text
#: detector's val AUC 0.9995-1.0 and F1 0.999 from its first epoch, its loss level at 0.05).
HELDOUT_CEILING = 0.99


def heldout_at_ceiling(c: Ctx, f: Finding) -> tuple[str, float] | None:
    """``(key, lowest value)`` when the held-out accuracy (the key playing ``VAL_ACCURACY``, higher
    is better, >= 3 evaluations) is at :data:`HELDOUT_CEILING` or above at every evaluation of its
    second half, under an OP003 plateau that is not frozen at one value; else ``None``. A constant
    predictor reaches it only on a set with a 99% majority class: the held-out accuracy must not be
    constant."""
    if f.facts.get("frozen"):
        return None
    ak = c.run.key_for(Role.VAL_ACCURACY)
    if not ak or not is_higher_better(ak):
        return None
    s = c.run.series(ak).by_step().finite()
    if len(s) < 3:
        return None
    v, _ = as_fraction(ak, s.values)
    tail = v[len(v) // 2 :]
    if float(np.ptp(v)) == 0.0 or float(tail.min()) < HELDOUT_CEILING or float(v.max()) > 1.0:
        return None
    return ak, float(tail.min())


def learned_its_task(c: Ctx, f: Finding) -> tuple[str, float, float] | None:
    """``(key, first, last)`` of a training or held-out accuracy that rose by more than GE002's
    ``learned_rise`` (2 points) to GE002's ``learned_accuracy`` (0.9) or above
    (:func:`..detectors.GE002.accuracy_learned`), under an OP003 plateau that is not frozen at one
    value; else ``None``. A model right on 90% of its inputs and still gaining has learned its task,
    and a loss level under it is where that learning ended, not a stall (own corpus f5b1-19: C.E.
    loss flat at 0.95 from epoch 8 while the accuracy went 94% -> 98.5%; a cross-entropy floor set by
    the softmax). A constant predictor on an imbalanced set can sit at 0.9+, but it does not rise."""
    from ..detectors.GE002 import Underfitting, accuracy_learned

    if f.facts.get("frozen"):
        return None
    p = Underfitting.Params()
    return accuracy_learned(c.run, p.learned_accuracy, p.learned_rise)


#: A plateau needs the held-out metric to have stopped improving: one whose best evaluation is among
#: its last ``NEW_BEST_TAIL`` (at least 2) and whose last evaluation is within the plateau's tolerance
#: of that best was still improving, however slowly, when the run ended (own corpus f7b2-05: a CLIP
#: fine-tune whose validation loss set its 25th best at its last of 50 epochs; f5b2-03: CatBoost
#: validation logloss at its best at iteration 1000 of 1000).
NEW_BEST_TAIL = 0.1


def new_best_at_end(run: RunData, f: Finding) -> tuple[str, int, int] | None:
    """``(key, best evaluation number, evaluations)`` when GE007's monitored series (a logged metric;
    a derived fitness is not checked) has its best among its last :data:`NEW_BEST_TAIL` evaluations
    and ends within GE007's tolerance of it, else ``None``."""
    k = f.facts.get("key")
    if not k or k not in run.metrics.keys or f.facts.get("higher_is_better") is None:
        return None
    s = run.series(k).by_step().finite()
    n = len(s)
    if n < 4:
        return None
    v = s.values if f.facts["higher_is_better"] else -s.values
    ib = int(np.argmax(v))
    tol = float(f.facts.get("tolerance") or 0.0)
    if ib >= n - max(2, int(np.ceil(NEW_BEST_TAIL * n))) and float(v[ib] - v[-1]) <= tol:
        return k, ib + 1, n
    return None


#: Held-out accuracy lost to memorising: its last-quarter median below its best by at least this share of the
#: best (and 3x its evaluation noise, GE003's) ...
ACCURACY_LOST_SHARE = 0.10
#: ... while the training loss's last-quarter median fell to at most this share of its value at that best:
#: training went on fitting the training set (own f6b2-11: YOLOv8-cls top-1 0.706 at epoch 24, last quarter
#: 0.605, training loss 1.0 -> 0.034).
ACCURACY_LOST_TRAIN_SHARE = 0.5


def accuracy_lost_to_memorising(c: Ctx) -> str | None:
    """A description when the held-out accuracy peaked and then stayed below its peak (last-quarter median
    >= :data:`ACCURACY_LOST_SHARE` of the best and >= 3x its noise below it, the best before the last
    quarter, >= 8 evaluations) while the training loss kept falling to :data:`ACCURACY_LOST_TRAIN_SHARE` of
    its value at that best or less and GE005 finds the held-out loss >= 2x the training loss at the end:
    the textbook overfit read on the task metric when the held-out loss only flattens. ``None`` otherwise."""
    g = c.get("GE005", Severity.WARNING)
    ak, tk = c.run.key_for(Role.VAL_ACCURACY), c.run.key_for(Role.TRAIN_LOSS)
    if not g or not ak or not tk or not is_higher_better(ak):
        return None
    a = c.run.metrics.series(ak).by_step().finite()
    t = c.run.metrics.series(tk).by_step().finite()
    n = len(a)
    if n < 8 or len(t) < 8:
        return None
    ib = int(np.argmax(a.values))
    q = max(2, n // 4)
    if ib >= n - q:
        return None
    best, tail = float(a.values[ib]), float(np.median(a.values[-q:]))
    half = a.values[n // 2 :]
    noise = float(np.median(np.abs(np.diff(half))))
    if best <= 0 or best - tail < max(ACCURACY_LOST_SHARE * best, 3 * noise):
        return None
    at_best = t.values[t.steps <= a.steps[ib]]
    if not len(at_best) or at_best[-1] <= 0:
        return None
    t_end = float(np.median(t.values[-max(1, len(t) // 4) :]))
    if t_end > ACCURACY_LOST_TRAIN_SHARE * float(at_best[-1]):
        return None
    return (
        f"{ak} peaked at {fmt(best)} (step {int(a.steps[ib])}) and sat at {fmt(tail)} over the last quarter "
        f"(noise ~{fmt(noise)}) as {tk} fell from {fmt(float(at_best[-1]))} to {fmt(t_end)}"
    )


def task_metric_fell_while_fitting(c: Ctx) -> str | None:
    """A description when the run's task metric fell from its best level (:func:`..task_metric.judge`:
    levels are medians of a tenth of the evaluations; it fell by more than its noise band and more than
    a tenth of its gain, and its best level came before the last one) while the training loss kept
    falling after that best (its final level, the median of its last tenth, below its level at the
    best step), in a run its own early stopping did not end: the model fit the training set better
    and did worse at its task on held-out data, which is what an overfit is, whatever the held-out
    loss did (own corpus f19b1-09: a YOLOv8 fine-tune whose fitness peaked at 0.678 by epoch 37-43 and
    ended at 0.632, 5x its noise band lower, while every training loss kept falling; f15b1-09, f5b3-16
    the same shape, labelled overfit). A metric that held within its band or gave back at most a
    tenth of its gain is a plateau, not an overfit; ``None`` then, and without a task metric or a
    training loss of >= 6 points."""
    from ..task_metric import judge

    if c.ending.early_stopped:
        return None
    j = judge(c.run)
    tk = c.run.key_for(Role.TRAIN_LOSS)
    if j is None or not j.fell or not tk:
        return None
    t = c.run.series(tk).by_step().finite()
    if len(t) < MIN_EVALS_FOR_FALL:
        return None
    w = max(3, int(np.ceil(0.1 * len(t))))
    upto = int(np.searchsorted(t.steps, j.best_step, side="right"))
    if upto < 1:
        return None
    at_best = float(np.median(t.values[max(0, upto - w) : upto]))
    end = float(np.median(t.values[-w:]))
    if not end < at_best:
        return None
    return f"{j.describe()}, while {tk} kept falling ({fmt(at_best)} at its best -> {fmt(end)})"


#: Points a training loss needs for :func:`task_metric_fell_while_fitting` (the task metric's own
#: ``MIN_EVALS``: five changes for a noise estimate).
MIN_EVALS_FOR_FALL = 6


def converged_without_gap(c: Ctx, f: Finding) -> str | None:
    """A description when GE007's plateau is a converged run: its monitored series is the held-out
    loss, the training loss learned (its last-quarter median at least :data:`CONVERGED_DROP` below
    its first points' median) and, after the plateau's start, sits at the held-out loss's best
    within its own noise (the interquartile range of its points there): the model does as well on
    held-out data as on the training data, so neither more steps (nothing left to fit) nor
    regularisation (no gap) would help; else ``None``. tests/data/newuser12 pt_wandb_offline_moons:
    train/loss 0.62 -> 0.07 (per-batch, 0.01-0.16), val/loss best 0.074 at epoch 5 of 20, flat to the
    end. A plateau at a poor level has a training loss that barely fell (own wb01-tf, csv37), and one
    with a gap a training loss below the held-out best by more than its noise (own tb09, csv06, csv09,
    realworld log02)."""
    vk, tk = c.run.key_for(Role.VAL_LOSS), c.run.key_for(Role.TRAIN_LOSS)
    if not vk or not tk or f.facts.get("key") != vk or f.facts.get("higher_is_better"):
        return None
    t = c.run.series(tk).by_step().finite()
    if len(t) < 8:
        return None
    start = float(np.median(t.values[: max(3, len(t) // 20)]))
    end = float(np.median(t.values[-max(3, len(t) // 4) :]))
    if start <= 0 or (start - end) / start < CONVERGED_DROP:
        return None
    after = t.values[t.steps >= int(f.facts.get("plateau_step") or 0)]
    best = float(f.facts.get("best") or 0.0)
    if after.size < 4 or best <= 0:
        return None
    q1, med, q3 = (float(x) for x in np.quantile(after, [0.25, 0.5, 0.75]))
    if abs(med - best) > q3 - q1:
        return None
    return (
        f"{tk} fell {fmt(start)} -> {fmt(end)} and sat at {fmt(med)} (quartiles {fmt(q1)}-{fmt(q3)}) "
        f"after step {f.facts.get('plateau_step')}, level with {vk}'s best {fmt(best)}"
    )


def _cut_short(c: Ctx) -> bool:
    """Whether the run was cut short of what it would have run: stopped (:attr:`.evidence.Ending.stopped`)
    or failed/killed, except a run whose only stop evidence is its record ending inside a pass
    (``cut_epoch``: no shortfall of a known plan, no interrupt, no missing end line, no epoch header
    last): how much of the run was left is then not known, so the held-out course up to the cut is the
    run's reading (own corpus f22b2-11: a Mask R-CNN console cut at batch 140 of 188 of epoch 32, its
    AP50 flat for the 21 epochs after its best)."""
    e = c.ending
    cut_only = bool(e.cut_epoch) and not (
        e.interrupt or e.short or e.missing_end_line or e.open_epoch
    )
    return (e.stopped and not cut_only) or c.run.status in (RunStatus.FAILED, RunStatus.KILLED)


def _val_plateau(c: Ctx) -> Decision | None:
    """GE007: the monitored validation metric came within its noise of its best early and did not
    improve in the rest of the run (detector: defaults; fires on no healthy run of realworld/own/
    libraries, NOTES 17:02)."""
    f = c.get("GE007", Severity.WARNING)
    if f and task_metric_overrules(c) is not None:
        return None
    if any(g.facts.get("kind") == "calibration" for g in c.by_code.get("GE001", [])):
        return None  # val loss rose while held-out accuracy held: a calibration note, not a plateau
    stopped = _cut_short(c)
    if f and new_best_at_end(c.run, f) is not None:
        return None  # still setting new bests at its end: converging, not stalled
    if f and f.facts.get("kind") == "diminishing" and c.ending.early_stopped:
        # held-out gains that shrank while the run's own early stopping watched them: the stop came
        # when they ended, so no more than its patience was spent past them (own corpus f7b1-16:
        # CatBoost's overfitting detector at 1587 of 2000 iterations). A metric flat from early on
        # (its best far before the stop) is still a plateau (own tb09, csv05).
        return None
    if f and not stopped and converged_without_gap(c, f) is not None:
        return None  # both losses flat at one level after a learning curve: converged, not stalled
    if f and not stopped and heldout_learned_at_end(c.run) is not None:
        return None  # the held-out accuracy ended at its best, at a learned level: converged, not stalled
    if f and not stopped:  # a run cut short never had the chance to improve: its stop explains more
        lost = accuracy_lost_to_memorising(c) or task_metric_fell_while_fitting(c)
        if lost is not None:
            return Decision(
                Outcome.OVERFIT,
                Cause.MODEL_CONVERGENCE,
                f"The run overfit: {f.message}, while {lost}. The model fits the training set ever "
                "better and held-out data worse: keep the checkpoint at the held-out best, regularise or "
                "augment, or stop there.",
                f,
            )
        return Decision(
            Outcome.PLATEAUED,
            Cause.MODEL_CONVERGENCE,
            f"Validation plateaued: {f.message}. More steps at this setting buy nothing; change the LR "
            "schedule, the data or the model, or stop earlier.",
            f,
        )
    return None


_LEARNING_OUTCOMES = (
    Outcome.OVERFIT,
    Outcome.UNDERFIT,
    Outcome.PLATEAUED,
    Outcome.UNSTABLE,
    Outcome.REGRESSED,
)


def _learning_outcome(c: Ctx, after: int) -> Outcome | None:
    """The outcome of the first learning rule with precedence above ``after`` that matches (used by
    rules that fix the cause but leave the outcome to what the curves show)."""
    for rule in sorted(POLICY, key=lambda r: r.precedence):
        if rule.precedence <= after or rule.name in (
            "no-judgeable-signal",
            "healthy",
            "metric-out-of-range",
        ):
            continue
        d = rule.when(c)
        if d is not None and d.outcome in _LEARNING_OUTCOMES:
            return d.outcome
    return None


def _logged_zeros(c: Ctx) -> Decision | None:
    """LI006 at error with a data signature: validation losses exactly 0 at every evaluation while
    another validation component is not (the validation set has no labels), every task metric
    (mAP, precision, recall) exactly 0 at every evaluation (the model never matched one label), or a
    training loss component exactly 0 throughout while the other components move (no ground-truth
    boxes reach training). Each is a data/label pipeline failure, not a model result: cause
    data_config. With the task metrics all 0 the model learned nothing usable (underfit); otherwise
    the outcome is what the learning rules after this one read (succeeded when none fires). The HF
    nan-filter stand-ins (kind ``stand_in``) are non-finite steps, not data: other rules judge them."""
    fs = [
        f
        for f in c.by_code.get("LI006", [])
        if f.severity.rank >= Severity.ERROR.rank
        and (
            f.facts.get("kind") in ("empty_validation", "metrics_zero")
            or (f.facts.get("kind") == "all_zero" and f.facts.get("other_losses_move"))
        )
    ]
    if not fs:
        return None
    metrics_zero = any(
        f.facts.get("kind") == "metrics_zero" or f.facts.get("all_metrics_zero") for f in fs
    )
    if c.ending.stopped and all(f.facts.get("kind") == "metrics_zero" for f in fs):
        # task metrics still at 0 in a run cut short are what its first epochs look like (a detector in
        # its warmup matches nothing yet), not a label failure: the stop explains more, as for GE002's
        # score floor (own corpus csv34: YOLOv8n, 3 of 50 epochs, all inside the 3-epoch warmup)
        return None
    outcome = Outcome.UNDERFIT if metrics_zero else (_learning_outcome(c, 86) or Outcome.SUCCEEDED)
    f = next((f for f in fs if f.facts.get("kind") != "all_zero"), fs[0])
    more = "; ".join(x.message for x in fs if x is not f)
    return Decision(
        outcome,
        Cause.DATA_CONFIG,
        f"Logged zeros show a data problem: {f.message}"
        + (f"; also {more}" if more else "")
        + ". Check the label files and the dataset config (paths, class ids, label format) "
        "before reading anything else in this run.",
        f,
    )


def _metric_out_of_range(c: Ctx) -> Decision | None:
    """LI007: a bounded metric (accuracy, F1, AUC, IoU, mAP) outside [0, 1] (or above 100 on a
    percent scale) is computed wrongly: the cause is a correctness bug in the evaluation whatever
    the curves show; the outcome is what the learning rules after this one read (succeeded when
    none fires, running when the text does not show the run's end: an excerpt of a report, a log
    that ends inside a progress bar, a tracker's RUNNING status; unknown instead of succeeded when no
    curve is judgeable). An overlap score of masks (IoU, Dice) out of range is the targets' format instead
    (data_config, :data:`_OVERLAP_SCORE`): its formula keeps it in [0, 1] for targets in [0, 1] (report
    b48-07: smp ``iou_score - -1.209`` with 0/255 masks)."""
    f = c.get("LI007", Severity.ERROR)
    if not f:
        return None
    unended = (
        c.run.status is RunStatus.RUNNING
        or (c.ending.excerpt or c.ending.open_bar)
        and not c.ending.interrupt
    )
    outcome = _learning_outcome(c, 97) or (Outcome.RUNNING if unended else Outcome.SUCCEEDED)
    if outcome is Outcome.SUCCEEDED and not c.basis.judgeable:
        # succeeded needs positive evidence (V20): with no curve to judge the training by, only the
        # impossible value is seen
        outcome = Outcome.UNKNOWN
    if _OVERLAP_SCORE.search(str(f.facts.get("key", ""))):
        return Decision(
            outcome,
            Cause.DATA_CONFIG,
            f"An overlap score left its range: {f.message}. IoU = TP / (TP + FP + FN) and Dice = 2 TP / "
            "(2 TP + FP + FN), with TP = sum(target x prediction), FP = sum(prediction) - TP and FN = "
            "sum(target) - TP, stay within [0, 1] whenever targets and predictions lie in [0, 1]; the "
            "prediction passes through the metric's sigmoid or softmax, so the targets do not: masks "
            "stored as 0/255 or as class indices instead of 0/1, or of another shape than the "
            "prediction. Scale the masks to {0, 1} (divide by 255), check their shape against the "
            "prediction, and retrain; the score and the loss mean nothing until then.",
            f,
        )
    return Decision(
        outcome,
        Cause.CORRECTNESS_BUG,
        f"A metric is computed wrongly: {f.message}. Whatever it says about the model cannot be "
        "trusted until the metric code is fixed (custom metrics averaged over batches, a missing "
        "clip, a wrong reduction, an integer division).",
        f,
    )


#: Overlap scores of a segmentation mask computed from soft counts (IoU / Jaccard, Dice / F-score over
#: pixels): out of [0, 1] only when the targets are (:func:`_metric_out_of_range`).
_OVERLAP_SCORE = re.compile(r"(?:^|[/_])(?:m?iou|jaccard|dice)(?:[/_]|$|\d)", re.I)


def heldout_learned_at_end(run: RunData) -> tuple[str, float, float] | None:
    """``(key, best, final)`` when the held-out accuracy learned and ended within its noise margin of
    its best (:func:`heldout_accuracy_near_best`) at GE002's ``learned_accuracy`` (0.9) or above; else
    ``None``. A held-out loss that stops improving early under a held-out accuracy that got there and
    holds it to the end is a model that converged fast (a pretrained network's fine-tune typically
    does so in a few epochs), not one that stalled short of its task: GE002 and V14
    (:func:`learned_its_task`) read the same level as a learned task (own corpus f21b2-07: a 7-class
    image classifier, validation accuracy 0.964 -> best 0.977 at epoch 3 and 0.977 at epoch 10, its
    validation loss best at epoch 4 of 10, labelled succeeded/healthy)."""
    from ..detectors.GE002 import Underfitting

    near = heldout_accuracy_near_best(run)
    if near is None or near[2] < Underfitting.Params().learned_accuracy:
        return None
    return near


def heldout_accuracy_near_best(run: RunData) -> tuple[str, float, float] | None:
    """``(key, best, final)`` of the held-out accuracy (role validation accuracy, an accuracy or
    score on a 0-1 or percent scale, >= 6 evaluations) when it learned (its best beats its first by
    more than its noise margin, :func:`detectors.GE001.accuracy_tolerance`) and its final value
    (median of the last 3) is within that margin of its best; else ``None``. A held-out loss that
    jumps by factors while this holds is the loss's own noise (a few confident errors), not a model
    whose held-out behaviour is unstable (own corpus f8b2-12: Keras val_loss jumping 0.06 <-> 0.2
    late in a run whose val_accuracy ends at 0.961 against its best 0.981)."""
    from ..detectors.GE001 import accuracy_tolerance
    from ..roles import as_fraction, parse_name

    k = run.key_for(Role.VAL_ACCURACY)
    if not k or parse_name(k).family not in ("acc", "score"):
        return None
    s = run.series(k).by_step().finite()
    if len(s) < 6:
        return None
    vals, _ = as_fraction(k, s.values)
    if float(vals.min()) < 0.0 or float(vals.max()) > 1.0:
        return None
    tol = accuracy_tolerance(vals)
    best, first, final = float(vals.max()), float(vals[0]), float(np.median(vals[-3:]))
    if best - first > tol and final >= best - tol:
        return k, best, final
    return None


def _erratic_validation(c: Ctx) -> Decision | None:
    """OP008: the validation loss jumps by factors between consecutive evaluations late in the run.
    At an absurd scale (>= 1e6, fact ``scale_suspect``) the cause is the data's scale, not the model."""
    f = c.get("OP008", Severity.ERROR)
    if not f:
        return None
    if not f.facts.get("scale_suspect") and heldout_accuracy_near_best(c.run) is not None:
        return None  # the held-out accuracy learned and ended at its best level: the loss's jumps are not instability
    if f.facts.get("scale_suspect"):
        return Decision(
            Outcome.UNSTABLE,
            Cause.DATA_CONFIG,
            f"The held-out loss is erratic at an absurd scale: {f.message}.",
            f,
        )
    return Decision(
        Outcome.UNSTABLE, Cause.MODEL_CONVERGENCE, f"The held-out loss is erratic: {f.message}.", f
    )


def _unstable(c: Ctx) -> Decision | None:
    f = c.get("OP002", Severity.WARNING)
    if f:
        return Decision(
            Outcome.UNSTABLE, Cause.MODEL_CONVERGENCE, f"Training was unstable: {f.message}.", f
        )
    return None


def _plan_met_before_failed_status(c: Ctx) -> bool:
    """The run's records reached its stated plan (planned length logged or stated, reached at least
    :data:`..evidence.COMPLETE_SHARE` of it), no interrupt line and no error finding: a failed or
    killed status then came after training (a notebook kernel closed without ``wandb.finish()``, W&B
    marks such a run crashed; a non-zero exit in code that runs after ``fit``), and says nothing of
    the training itself."""
    e = c.ending
    return bool(
        e.planned
        and e.reached is not None
        and not e.short
        and not e.interrupt
        and not any(
            f.severity is Severity.ERROR and f.family == "runtime"
            for fs in c.by_code.values()
            for f in fs
        )
    )


def _ended_failed(c: Ctx) -> Decision | None:
    """A run the tracker (or the in-process hook) saw end failed or killed: its ending is the main
    fact (a slowdown stays a finding). Without a crash signature the cause is inconclusive."""
    if c.run.status in (RunStatus.FAILED, RunStatus.KILLED) and c.get("RT003") is None:
        e = c.ending
        if _plan_met_before_failed_status(c):
            return (
                None  # training reached its plan: the learning rules judge it, the status is noted
            )
        if e.interrupt or e.short:
            return Decision(
                Outcome.CRASHED,
                Cause.INCONCLUSIVE,
                f"The run ended {c.run.status.value}: {e.describe()}. Who stopped it, and why, is not in "
                "the data.",
            )
        return Decision(
            Outcome.CRASHED,
            Cause.INCONCLUSIVE,
            f"The run ended {c.run.status.value}, and nothing in its metrics or console explains "
            "why.",
        )
    return None


def _stopped_early(c: Ctx) -> Decision | None:
    """Positive evidence that the run stopped before its planned end: planned length vs reached,
    an interrupt line, a framework log without its end-of-training line. A mid-run checkpoint
    snapshot or an early stop the run's patience explains is not such evidence."""
    e = c.ending
    if not e.stopped or c.get("RT003") is not None:  # a preemption has its own rule (V19)
        return None
    why = e.describe()
    if (
        not e.interrupt
        and not e.missing_end_line
        and c.run.status is not RunStatus.RUNNING
        and _slow(c) is not None
    ):
        # the only stop evidence is a shortfall of the plan, which a paste or a silent kill gives
        # alike; a slowdown the data shows is a finding, the unexplained stop is not (V18 decides)
        return None
    if c.run.status is RunStatus.RUNNING:
        return Decision(
            Outcome.RUNNING,
            Cause.INCONCLUSIVE,
            f"The run is still running according to its tracker: {why}.",
        )
    if c.run.console and e.interrupt_kind in ("sigint", "sigterm"):
        # the console names the signal that stopped it: who sent it is the open question
        sender = (
            "a Ctrl-C (SIGINT) from the person at the terminal, or a tool that sends SIGINT"
            if e.interrupt_kind == "sigint"
            else "a SIGTERM: a scheduler's time limit or preemption, `timeout`, or a `kill`"
        )
        return Decision(
            Outcome.CRASHED,
            Cause.INCONCLUSIVE,
            f"The run stopped before its planned end: {why}. It was interrupted by {sender}; "
            "the shell history or the scheduler's record says who and why.",
        )
    if c.run.console:
        # the console was read and ends without a signature: what stops a process without a word
        return Decision(
            Outcome.CRASHED,
            Cause.INCONCLUSIVE,
            f"The run stopped before its planned end: {why}. Its console ends without a crash "
            "signature: a SIGKILL (the kernel's OOM killer, a scheduler's limit) or a SIGTERM under "
            "Python's default handler prints nothing; the scheduler's record or the kernel log says "
            "which.",
        )
    return Decision(
        Outcome.CRASHED,
        Cause.INCONCLUSIVE,
        f"The run stopped before its planned end: {why}. No crash signature says why "
        "(attach the console log or the scheduler's record).",
    )


def _slow_codes() -> list[str]:
    """The detectors whose finding makes a run slow, in the order they are asked
    (``Detector.slow_rank``)."""
    ranked = [d for d in registry().values() if d.slow_rank is not None]
    return [d.code for d in sorted(ranked, key=lambda d: (d.slow_rank, d.code))]


def _slow(c: Ctx) -> Decision | None:
    """A systems finding (:func:`_slow_codes`, SY004's recurring pauses) sets the outcome slow, unless
    the run learned nothing: a classifier still at the uniform guess (:func:`_at_uniform_guess`, V19e)
    is the failure to fix first, however long its steps took (a systems problem sets the outcome only
    when the learning itself is healthy: the module's first-broken-layer order)."""
    d = _slow_systems(c)
    if d is not None and _at_uniform_guess(c) is not None:
        return None
    return d


def _slow_systems(c: Ctx) -> Decision | None:
    # SY004 (isolated slow steps) and SY003 (idle accelerator) stay bottleneck findings but do not
    # set the outcome: on shared machines both come from neighbours as often as from the run
    for code in _slow_codes():
        f = c.get(code, Severity.WARNING)
        if f and f.facts.get("grew"):  # SY008 states that the time grew at every interval
            # a time per iteration that rises at every logged interval at the same work per step is a
            # per-step cost that grows with the step count: something the training loop keeps across
            # steps (tensors with their graph, lists, caches); the machine's load swings, it does not
            # climb at every interval
            return Decision(
                Outcome.SLOW,
                Cause.CORRECTNESS_BUG,
                f"The run got slower at every logged interval: {f.message}. A per-step cost that grows "
                "with the step count is something the training code keeps across steps (tensors that "
                "hold their graph, growing lists or caches): compare host memory at two steps.",
                f,
            )
        if f:
            return Decision(Outcome.SLOW, Cause.INFRA_RUNTIME, f"The run was slow: {f.message}.", f)
    # recurring pauses (steps at 2x the median or more, in several stretches, a fifth of the step time)
    # are a pattern of the run itself, unlike a few isolated slow steps
    f = next(
        (
            x
            for x in c.by_code.get("SY004", [])
            if x.facts.get("recurring") and x.severity.rank >= Severity.WARNING.rank
        ),
        None,
    )
    if f:
        return Decision(
            Outcome.SLOW,
            Cause.INFRA_RUNTIME,
            f"The run was slow: {f.message}. The input pipeline or host work stalls the steps "
            "again and again (a slow shard or reader, too few loader workers, periodic host work).",
            f,
        )
    return None


#: A console line saying the process has no accelerator to train on: PyTorch's DataLoader warning
#: ("'pin_memory' argument is set as true but no accelerator is found"), mmcv/mmengine's environment
#: table ("CUDA available: False"), Lightning's "GPU available: False", the Hugging Face Trainer's
#: "device: cpu, n_gpu: 0", a script's own "Using CPU" / "device: cpu" / "CUDA is not available".
_NO_ACCELERATOR = re.compile(
    r"no accelerator is found|\bCUDA available:\s*False|\bGPU available:\s*False|"
    r"\bn_gpu:\s*0\b|\bCUDA (?:is )?not available|no CUDA GPUs are available|"
    r"\b(?:using|running on|training on)\s+(?:the\s+)?CPU\b|\bdevice\s*[:=]\s*['\"]?cpu\b",
    re.IGNORECASE,
)
#: A console line saying the process trains on an accelerator (a contradiction of the above).
_ON_ACCELERATOR = re.compile(
    r"\bCUDA available:\s*True|\bGPU available:\s*True|\bdevice\s*[:=]\s*['\"]?(?:cuda|mps|xpu|tpu)\b|"
    r"\b(?:using|running on|training on)\s+(?:the\s+)?(?:GPU|cuda)",
    re.IGNORECASE,
)
#: The remaining time of a tqdm bar (``[03:13<99:47:03, 193.55s/it]``) or Keras' ``ETA: 3:12:56``.
_BAR_REMAINING = re.compile(
    r"<\s*(?:(?P<h>\d+):)?(?P<m>\d+):(?P<s>\d\d)\b|ETA:\s*(?:(?P<h2>\d+):)?(?P<m2>\d+):(?P<s2>\d\d)\b"
)
#: Remaining time of a training bar on the CPU from which the plan is called too slow for the machine:
#: a day. A fine-tune that needs days of CPU time for what an accelerator does in hours is the machine's
#: limit, not a plan (own corpus f15b1-14: a 1.1 B-parameter QLoRA fine-tune at 193 s a step, 99 h to go).
CPU_PLAN_HOURS = 24.0


def _cpu_bound(c: Ctx) -> Decision | None:
    """V18k: the console ends inside a training progress bar whose remaining time is at least
    :data:`CPU_PLAN_HOURS`, and the console says the process has no accelerator
    (:data:`_NO_ACCELERATOR`, and nothing says it has one): the run trains on the CPU and its plan needs
    days at the rate the bar shows; slow, infra_runtime (the machine, not the model or the data).
    Not when a judgeable curve or a finding at error says more."""
    bar = c.ending.open_bar
    if not bar or c.basis.judgeable:
        return None
    if any(x.severity.rank >= Severity.ERROR.rank for fs in c.by_code.values() for x in fs):
        return None
    m = _BAR_REMAINING.search(bar)
    if m is None:
        return None
    h, mi, se = (m["h"] or m["h2"] or "0"), (m["m"] or m["m2"]), (m["s"] or m["s2"])
    hours = int(h) + int(mi) / 60 + int(se) / 3600
    if hours < CPU_PLAN_HOURS:
        return None
    lines = [ln.text for ln in c.run.console]
    hit = next((m for t in lines if (m := _NO_ACCELERATOR.search(t))), None)
    if hit is None or any(_ON_ACCELERATOR.search(t) for t in lines):
        return None
    cpu = hit.string[max(0, hit.start() - 60) : hit.end() + 30]
    return Decision(
        Outcome.SLOW,
        Cause.INFRA_RUNTIME,
        f'The run trains on the CPU ("...{cpu.strip()}...") and its progress bar ends with '
        f"{hours:.0f} h still to go ({bar.strip()[-80:]}): at that rate the plan takes days. The cause is the "
        "machine: run it where an accelerator is visible to the framework (check "
        "torch.cuda.is_available() and the CUDA build of the installed torch), or shrink the plan.",
    )


def _slow_stated(c: Ctx) -> Decision | None:
    """V18b: a report that states its run is slow and names the input pipeline as where the time goes
    (:func:`.statements.stated_input_slowness`), no finding at error and no maintainer's sentence that the
    speed is expected: slow. The cause is the data-loader setting (data_config) when the thread confirms
    that a worker count changed fixed it and names no storage or decoding; else the machine's input side
    (infra_runtime: storage reads, I/O, the decoder, batch generation), as for a measured data-time stall
    (V18). A loss curve that looks healthy does not contradict a complaint about speed. A maintainer's
    "expected" that itself names the input side (``The training time is expected to be much longer if you
    are using a HDD``) states where the time goes, not that nothing is wrong: it does not clear the run."""
    if any(x.severity.rank >= Severity.ERROR.rank for fs in c.by_code.values() for x in fs):
        return None
    from ..reference_gap import text_lines
    from .statements import _INPUT_SIDE, expected_behaviour, stated_input_slowness

    expected = expected_behaviour(c.run.params)
    if expected is not None and not _INPUT_SIDE.search(expected):
        return None  # the speed cleared; an "expected" under the input side names the cause instead
    got = stated_input_slowness(text_lines(c.run), c.run.params)
    if got is None:
        return None
    kind, slow, named = got
    where = "" if named == slow else f', and the thread names the input side in "{named}"'
    if kind == "workers":
        return Decision(
            Outcome.SLOW,
            Cause.DATA_CONFIG,
            f'The report states the run is slow ("{slow}"){where}: the data-loader worker count is the '
            "setting the text names as the bottleneck or the thread confirms fixed it. Set the workers to what the host's CPUs can serve per "
            "process (CPU cores / processes), and compare the step time before and after.",
        )
    return Decision(
        Outcome.SLOW,
        Cause.INFRA_RUNTIME,
        f'The report states the run is slow ("{slow}"){where}: the input pipeline (reading, decoding or '
        "generating the batches) cannot feed the steps. Log the data time beside the step time to confirm; "
        "store the data on faster storage or in a packed format (LMDB, shards), decode faster, or add "
        "loader workers.",
    )


def _stated_config_change(c: Ctx) -> Decision | None:
    """V18f: no judgeable curve, no finding at error, no maintainer's sentence that the behaviour is
    expected, and the report states one metric for the default run and for a run with one setting changed
    (:func:`.stated_figures.stated_config_change`), the changed run worse by more than seed noise: the
    setting moved the result; a faithful run of a worse configuration (regressed, data_config)."""
    if not _no_error_no_curve(c):
        return None
    from ..reference_gap import text_lines
    from .stated_figures import stated_config_change
    from .statements import expected_behaviour

    if expected_behaviour(c.run.params) is not None:
        return None
    got = stated_config_change(text_lines(c.run))
    if got is None or not got.worse:
        return None
    return Decision(
        Outcome.REGRESSED,
        Cause.DATA_CONFIG,
        f'The report states {got.name} {fmt(got.before.value)} for the default run ("{got.before.text[:140]}") '
        f'and {fmt(got.after.value)} after {got.setting} ("{got.after.text[:140]}"): one setting changed and '
        "the result moved far beyond the noise of a rerun, so the change is the cause, not the code or the "
        "machine. Settings depend on each other (a batch size changed without its learning rate, an epoch "
        "count without its schedule): restore the default, or change its dependent settings with it "
        "(scale the learning rate with the batch size), and compare over two seeds.",
    )


def _stated_course_worse(c: Ctx) -> Decision | None:
    """V18g: no judgeable curve, no finding at error, no maintainer's sentence that the behaviour is
    expected, and the report states one metric at an earlier and a later point of the run
    (:func:`.stated_figures.stated_course`), the later worse by more than seed noise: the run got worse as
    training went on. A loss that rose: diverged; a task metric that fell: regressed; model_convergence
    (the optimisation, a step size too large for the stage of training or training past the best point)."""
    if not _no_error_no_curve(c):
        return None
    from ..reference_gap import text_lines
    from .stated_figures import stated_course
    from .statements import expected_behaviour

    if expected_behaviour(c.run.params) is not None:
        return None
    got = stated_course(text_lines(c.run))
    if got is None or not got.worse:
        return None
    at = {
        f: f" at epoch/step {f.position}" if f.position is not None else ""
        for f in (got.before, got.after)
    }
    said = (
        f"{got.name} {fmt(got.before.value)}{at[got.before]} and later {fmt(got.after.value)}{at[got.after]} "
        f'("{got.before.text[:120]}" ... "{got.after.text[:120]}")'
    )
    if got.is_loss:
        return Decision(
            Outcome.DIVERGED,
            Cause.MODEL_CONVERGENCE,
            f"The report states the loss rose as training went on: {said}. A loss that climbs back above "
            "where it was is an optimisation that has become unstable (a learning rate too large for this "
            "stage of training, often after a restart or a schedule change): lower the learning rate "
            "(or its peak), resume from the last good checkpoint, and watch the loss at each epoch.",
        )
    return Decision(
        Outcome.REGRESSED,
        Cause.MODEL_CONVERGENCE,
        f"The report states the result got worse as training went on: {said}. More training made the model "
        "worse: it was past its best point (over-training on the data, or a learning rate too large when "
        "training was continued). Keep the best checkpoint by a held-out metric, continue with a lower "
        "learning rate, or stop at the best epoch.",
    )


def _train_below_heldout(c: Ctx) -> Decision | None:
    """V18h: no judgeable curve, no finding at error, and a sentence of the report states the training
    figure is worse than the held-out one (:func:`.stated_figures.stated_train_below_heldout`: a training
    accuracy below the validation/test accuracy, a training loss above the held-out loss), with no leakage
    named: what training-time augmentation and regularisation give; not underfitting, not a fault."""
    if not _no_error_no_curve(c):
        return None
    from ..reference_gap import text_lines
    from .stated_figures import stated_train_below_heldout

    said = stated_train_below_heldout(text_lines(c.run))
    if said is None:
        return None
    return Decision(
        Outcome.UNKNOWN,
        Cause.HEALTHY,
        f'The report states the training figure is worse than the held-out one ("{said}"). Training figures '
        "are measured on the training inputs as the model sees them, augmented, mixed or with dropout on, "
        "which are harder than the clean validation and test inputs: a training accuracy below the held-out "
        "accuracy is the expected effect of training-time augmentation or regularisation, not underfitting "
        "or a bug. To compare like with like, evaluate the model on the un-augmented training set in eval "
        "mode.",
    )


def _duration_accounted(c: Ctx) -> Decision | None:
    """V18i: no judgeable curve, no finding at error, the report's complaint is a duration or rate it
    states, with no failure named and no input pipeline named as where the time goes (V18b's), and someone of the thread states how long the same training takes on
    the reference's hardware (:func:`.stated_figures.stated_expected_duration`): the run is as slow as its
    schedule and hardware make it (healthy), not stalled."""
    if not _no_error_no_curve(c):
        return None
    from ..reference_gap import text_lines
    from .stated_figures import stated_expected_duration
    from .statements import (
        _REPORTER_KEY,
        _thread_values,
        affirmed_expected,
        expected_behaviour,
        stated_input_slowness,
    )

    if expected_behaviour(c.run.params) or affirmed_expected(text_lines(c.run), c.run.params):
        return None  # the maintainer's own words decide (V20a)
    if stated_input_slowness(text_lines(c.run), c.run.params) is not None:
        return None  # the input pipeline named as where the time goes (V18b)
    thread = [(k, t) for k, t in _thread_values(c.run.params) if not _REPORTER_KEY.match(k)]
    got = stated_expected_duration(text_lines(c.run), thread)
    if got is None:
        return None
    said, ref = got
    return Decision(
        Outcome.UNKNOWN,
        Cause.HEALTHY,
        f"The report's complaint is the run's duration (\"{said}\"), and the thread states how long the same "
        f'training takes on the reference\'s hardware ("{ref}"): the duration follows from the schedule '
        "length and the GPU, nothing is stalled. Scale the reference's time by the hardware's relative speed "
        "to check; train on faster hardware or shorten the schedule if the full length is not needed.",
    )


def _no_error_no_curve(c: Ctx) -> bool:
    """No judgeable curve and no finding at error: only the report's sentences can decide."""
    return not c.basis.judgeable and not any(
        x.severity.rank >= Severity.ERROR.rank for fs in c.by_code.values() for x in fs
    )


def _gate_threshold_fixed(c: Ctx) -> Decision | None:
    """V18c: no judgeable curve, no finding at error, and a sentence of the report states that a test's or
    gate's threshold or tolerance was made looser as the fix (:func:`.statements.gate_threshold_fix`), or
    that a failing test fails by chance (:func:`.statements.stated_flaky_test`: flaky, nondeterministic,
    unseeded): the check was set inside the statistic's own noise, the training is not shown to fail."""
    if not _no_error_no_curve(c):
        return None
    from ..reference_gap import text_lines
    from .statements import gate_threshold_fix, stated_flaky_test

    said = gate_threshold_fix(text_lines(c.run))
    if said is None:
        flaky = stated_flaky_test(text_lines(c.run))
        if flaky is None:
            return None
        return Decision(
            Outcome.UNKNOWN,
            Cause.METRIC_POLICY,
            f'The report shows a failing test, and its text states the test fails by chance ("{flaky}"): '
            "the check draws random inputs or compares a nondeterministic output without the margin of its "
            "spread, so one red run says nothing of the code or the training under test. Seed the test (or "
            "make the output deterministic) and set its tolerance from the spread measured over seeds.",
        )
    return Decision(
        Outcome.UNKNOWN,
        Cause.METRIC_POLICY,
        f'The report\'s fix is a looser threshold for the check, in the sentence "{said}": the gate was set '
        "inside the run-to-run noise of the statistic it checks (a flaky test), not a failure of the "
        "training. Measure the statistic's spread over seeds and set the threshold outside it (or seed the "
        "test).",
    )


#: A maintainer's words that the behaviour is expected (``It is normal``), which place nothing at the
#: reference's level: with an evaluation named as the difference, the gap is expected because the two
#: figures were measured differently, and the protocol decides.
_EXPECTED_ONLY = re.compile(r"\b(?:normal|expected|usual)\b", re.I)


def _evaluation_explains(c: Ctx) -> Decision | None:
    """V18d: no judgeable curve, no finding at error, the gaps not already within seed noise (V19d), and the
    report compares its run's figure with a reference (a paper, a README, a leaderboard) while someone of
    the thread explains the difference by the evaluation (:func:`.statements.evaluation_explains_gap`:
    the evaluator's protocol or settings, another leaderboard entry, another language or split): the run is
    not shown to have failed; the comparison is the problem (metric_policy)."""
    if not _no_error_no_curve(c) or _reproduction_within_noise(c) is not None:
        return None
    from ..reference_gap import text_lines
    from .statements import evaluation_explains_gap, stated_cause

    stated = stated_cause(c.run.params)
    if stated is not None and stated[0] == "healthy" and not _EXPECTED_ONLY.search(stated[1]):
        # a maintainer places the run's figures at the reference's level (the same numbers, a draw of the
        # seeds the reference averages): their verdict, not the protocol, decides
        return None
    got = evaluation_explains_gap(text_lines(c.run), c.run.params)
    if got is None:
        return _measured_two_ways(c) or _released_weights_scored(c) or _metric_against_looks(c)
    comparison, why = got
    return Decision(
        Outcome.SUCCEEDED,
        Cause.METRIC_POLICY,
        f'The report compares the run with a reference ("{comparison}"), and the thread explains the '
        f'difference by the evaluation ("{why}"): the two figures were not measured the same way, so the gap '
        "is no regression of the model. Rescore with the reference's evaluation protocol (the same "
        "evaluator, settings, split and task) before comparing.",
    )


def _released_weights_scored(c: Ctx) -> Decision | None:
    """V18d's third reading: the report only evaluated released weights, without training them, and states
    a figure apart from the published one by more than seed noise (:func:`.released_eval.released_weights_gap`),
    with no reason for the gap stated by the thread (:func:`.gap_reasons.stated_gap_reason`) and no cause
    stated by it (:func:`.statements.stated_cause`): no training took place, so the difference lies in the
    evaluation (metric_policy)."""
    from ..reference_gap import text_lines
    from .gap_reasons import stated_gap_reason
    from .released_eval import released_weights_gap
    from .statements import stated_cause

    lines = text_lines(c.run)
    got = released_weights_gap(lines, c.run.params)
    if got is None or stated_gap_reason(lines, c.run.params) is not None:
        return None
    if stated_cause(c.run.params) is not None:
        return None  # the thread names the cause (a corrupt download, a bug): its reading decides
    return Decision(
        Outcome.SUCCEEDED,
        Cause.METRIC_POLICY,
        f'The run evaluated released weights without training them ("{got.said[:140]}") and states '
        f'{fmt(got.observed)} ("{got.observed_text[:100]}") against the published {fmt(got.reference)} '
        f'("{got.reference_text[:100]}"): the same weights gave the published figure under the authors\' '
        "evaluation, so the difference lies in the evaluation (the test data's preprocessing, the metric's "
        "implementation or aggregation, the protocol, the evaluation tool's version), not in training. "
        "Evaluate with the reference's exact protocol (its preprocessing, aggregation, resolution and tool "
        "version) before judging the weights.",
    )


def _metric_against_looks(c: Ctx) -> Decision | None:
    """V18d's fourth reading: a sentence states that the outputs look better while a metric of them is lower
    (:func:`.released_eval.metric_against_looks`), and the thread states no cause
    (:func:`.statements.stated_cause`): the metric and the outputs disagree, so the metric's protocol does
    not measure what the change did (metric_policy); nothing in the text says training failed."""
    from ..reference_gap import text_lines
    from .released_eval import metric_against_looks
    from .statements import stated_cause

    got = metric_against_looks(text_lines(c.run))
    if got is None or stated_cause(c.run.params) is not None:
        return None
    name, said = got
    return Decision(
        Outcome.SUCCEEDED,
        Cause.METRIC_POLICY,
        f'The report states the outputs look better while {name} is lower ("{said}"): a metric computed '
        "against fixed references (pixels of fixed evaluation views, a reference set, an aggregation) can "
        "fall when the outputs improve but no longer align with what it compares them to (e.g. evaluation "
        "camera poses that are not optimised when the training cameras are). Compare the settings under an "
        "evaluation that aligns them with the references (or on the same fixed poses/inputs), not on the raw "
        "figure.",
    )


def _heldout_in_training(c: Ctx) -> Decision | None:
    """V18j: no judgeable curve, no finding at error, and a sentence of the text states that held-out data
    is part of the training data (:func:`.stated_figures.stated_heldout_in_training`): whatever the figure
    on it, it measures memorisation, not generalisation (data_config). Succeeded when the text states a
    task metric's figure (the run trained and was scored), else unknown."""
    if not _no_error_no_curve(c):
        return None
    from ..reference_gap import text_lines
    from .stated_figures import measured_figures, stated_heldout_in_training

    lines = text_lines(c.run)
    said = stated_heldout_in_training(lines)
    if said is None:
        return None
    scored = any(f.head for line in lines for f in measured_figures(line))
    return Decision(
        Outcome.SUCCEEDED if scored else Outcome.UNKNOWN,
        Cause.DATA_CONFIG,
        f'The text states that held-out data is part of the training data ("{said}"): a figure measured on '
        "data the model was trained on measures memorisation, not generalisation, so it is inflated and "
        "no sign of how the model does on unseen data. Remove the overlap (deduplicate across splits, keep "
        "the held-out split out of the training split) and score again on data the model never saw.",
    )


def _measured_two_ways(c: Ctx) -> Decision | None:
    """V18d's second reading: the text states one task metric's figure twice, the two apart by more than
    seed noise, and a sentence names how a figure is measured (the metric's definition, the evaluator,
    post-processing, the test inputs), with no training setting stated as changed
    (:func:`.stated_figures.measured_two_ways`) and no reason for the gap stated by the thread
    (:func:`.gap_reasons.stated_gap_reason`): one model scored two ways (metric_policy)."""
    from ..reference_gap import text_lines
    from .stated_figures import measured_two_ways

    got = measured_two_ways(text_lines(c.run))
    if got is None:
        return None
    from .gap_reasons import stated_gap_reason

    if stated_gap_reason(text_lines(c.run), c.run.params) is not None:
        return None  # the thread states why the run differs from the reference: V18e's reading
    from .statements import stated_cause

    stated = stated_cause(c.run.params)
    if stated is not None and stated[0] == "code":
        return None  # the thread states the scoring code is at fault: a defect, judged by V20's reading
    a, b, how = got
    name = a.head or b.head
    unit = "%" if a.percent else ""
    said = f'"{a.text[:140]}"' if a.order == b.order else f'"{a.text[:120]}" ... "{b.text[:120]}"'
    return Decision(
        Outcome.SUCCEEDED,
        Cause.METRIC_POLICY,
        f"The report states {name} {fmt(a.value)}{unit} and {fmt(b.value)}{unit} ({said}), and names how a "
        f'figure is measured ("{how}"): the two are one model scored under two evaluation protocols '
        "(metric definition, evaluator, post-processing or test inputs), so their gap says nothing of what "
        "the model learned. Compare figures only under one protocol: rescore with the reference's "
        "evaluator and settings, and state the protocol beside every figure.",
    )


def _gap_reason_stated(c: Ctx) -> Decision | None:
    """V18e: no judgeable curve, no finding at error, the gaps not within seed noise (V19d), and the report
    compares its run with a reference while someone of the thread other than the reporter states why they
    differ (:func:`.gap_reasons.stated_gap_reason`): the run was trained far shorter than the reference (the
    model had not converged: underfit, model_convergence), or a setting of the run, named with its value,
    differs from the reference's (a faithful run of another configuration: succeeded, data_config)."""
    if not _no_error_no_curve(c) or _reproduction_within_noise(c) is not None:
        return None
    from ..reference_gap import text_lines
    from .gap_reasons import stated_gap_reason

    got = stated_gap_reason(text_lines(c.run), c.run.params)
    if got is None:
        return _batch_off_recipe(c)
    kind, comparison, why = got
    if kind == "training_length":
        return Decision(
            Outcome.UNDERFIT,
            Cause.MODEL_CONVERGENCE,
            f'The report compares the run with a reference ("{comparison}"), and the thread states that the run '
            f'was trained far shorter than the reference ("{why}"): the model had not converged when it was '
            "measured, so the gap is the training length, not a fault of the code or the data. Train for the "
            "reference's schedule (its steps or epochs), or compare at equal training length.",
        )
    return Decision(
        Outcome.SUCCEEDED,
        Cause.DATA_CONFIG,
        f'The report compares the run with a reference ("{comparison}"), and the thread states that a setting '
        f'of the run differs from the reference\'s ("{why}"): the run is a faithful run of another '
        "configuration, so its figure is not the reference's. Set the reference's value (the config file's "
        "default is not always the paper's) and rerun before comparing.",
    )


def _batch_off_recipe(c: Ctx) -> Decision | None:
    """V18e's second reading: the text states the recipe's total batch and the run's, apart by a factor 2
    or more with no learning-rate rescaling stated (:func:`.recipe_scale.batch_off_recipe`), and the run's
    figure apart from the reference's by more than seed noise (:func:`.released_eval.stated_gap`): a
    faithful run of another configuration (succeeded, data_config)."""
    from ..reference_gap import text_lines
    from .recipe_scale import batch_off_recipe
    from .released_eval import stated_gap

    lines = text_lines(c.run)
    scale = batch_off_recipe(lines)
    gap = stated_gap(lines) if scale is not None else None
    if scale is None or gap is None:
        return None
    recipe, run, recipe_text, run_text = scale
    return Decision(
        Outcome.SUCCEEDED,
        Cause.DATA_CONFIG,
        f'The run trained at a total batch of {run} ("{run_text[:110]}") where its recipe uses {recipe} '
        f'("{recipe_text[:110]}"), with no learning-rate rescaling stated, and scores {fmt(gap[1])} against '
        f"the reference's {fmt(gap[0])}: the recipe's learning rate and schedule are tuned for its total batch, "
        "so the run is a faithful run of another configuration, not a fault of the code. Restore the "
        "recipe's total batch (more GPUs or gradient accumulation), or scale the learning rate linearly "
        "with the total batch (e.g. auto_scale_lr), then compare again.",
    )


def _preempted(c: Ctx) -> Decision | None:
    """RT003 when nothing else explains the end: preempted and requeued is not a crash."""
    f = c.get("RT003")
    if not f:
        return None
    if f.facts.get("requeued"):
        return Decision(
            Outcome.RUNNING,
            Cause.INFRA_RUNTIME,
            f"The job was preempted and requeued, not crashed ({f.message}); it continues in a later "
            "segment: check that it resumes from its checkpoint.",
            f,
        )
    return Decision(
        Outcome.CRASHED,
        Cause.INFRA_RUNTIME,
        f"The job was stopped by its scheduler ({f.message}) and not requeued.",
        f,
    )


#: A held-out score at its ceiling: 1 on a 0-1 scale, 100 on a percentage scale.
_PERFECT = (1.0, 100.0)


def perfect_heldout_scores(run: RunData) -> list[tuple[str, float]]:
    """Summary values (params written as ``NAME: value`` and series of at most 2 points) of held-out
    accuracy or score metrics (:func:`mlaudit_core.roles.parse_name`: family acc/score, split not
    train), when there are 2 or more and every one sits at its ceiling; else empty."""
    from ..roles import parse_name

    got: dict[str, float] = {}
    for k, v in run.params.items():
        p = parse_name(k)
        if p.family in ("acc", "score") and p.split != "train" and not k.startswith("log."):
            try:
                got[k] = float(str(v).strip().rstrip("%"))
            except ValueError:
                continue
    for k in run.metrics.keys:
        p = parse_name(k)
        s = run.metrics.series(k).finite()
        if p.family in ("acc", "score") and p.split != "train" and 0 < len(s) <= 2:
            got[k] = float(s.values[-1])
    if len(got) < 2 or not all(v in _PERFECT for v in got.values()):
        return []
    return sorted(got.items())


def _perfect_scores(c: Ctx) -> Decision | None:
    if c.basis.judgeable:
        return None
    got = perfect_heldout_scores(c.run)
    if not got:
        return None
    shown = ", ".join(f"{k} {fmt(v)}" for k, v in got[:6])
    return Decision(
        Outcome.UNKNOWN,
        Cause.DATA_CONFIG,
        f"Every held-out score is perfect ({shown}): a perfect score on every test metric is what test "
        "data the model saw in training gives (overlap between the splits, duplicated samples, labels "
        "leaking into the inputs); check the split before trusting the result.",
    )


def _overflow_grad_norm(c: Ctx) -> Decision | None:
    """V19g: reduced precision in use, the gradient norm non-finite at some logged points (not all), while
    every training-loss point is finite, one is logged at or after the first non-finite norm, and the loss
    ends at or below its first value;
    no other finding at warning or above. A dynamic loss scaler (torch GradScaler, mmcv/mmengine's fp16
    hooks, DeepSpeed, apex) measures the gradient norm of a step whose scaled gradients overflowed as
    inf/NaN, skips that step and lowers the scale: routine while the loss stays finite and keeps
    falling. Unknown (or running, for a snapshot) and healthy: the learning is not judged beyond that."""
    if not c.precision:
        return None
    gk, tk = c.run.key_for(Role.GRAD_NORM), c.run.key_for(Role.TRAIN_LOSS)
    if not gk or not tk:
        return None
    g = c.run.metrics.series(gk).by_step()
    t = c.run.metrics.series(tk).by_step().values
    bad = ~np.isfinite(g.values)
    if not bad.any() or bad.all() or not len(t) or not np.isfinite(t).all():
        return None
    ts = c.run.metrics.series(tk).by_step().steps
    if not (ts >= g.steps[int(np.argmax(bad))]).any() or float(t[-1]) > float(t[0]):
        return None  # no loss point from the first non-finite grad norm on, or the loss rose
    for code, fs in c.by_code.items():
        for x in fs:
            if x.severity.rank < Severity.WARNING.rank:
                continue
            if detector_for(code).nonfinite_role(x) != Role.GRAD_NORM.value:
                return None
    snapshot = c.run.status is RunStatus.RUNNING or c.ending.open_bar
    return Decision(
        Outcome.RUNNING if snapshot else Outcome.UNKNOWN,
        Cause.HEALTHY,
        f"The non-finite gradient norms are loss scaling at work, not a failure: {gk} is non-finite at "
        f"{int(bad.sum())} of {len(bad)} points, under reduced precision "
        f"({c.precision[0]}), while {tk} stays finite and goes {fmt(float(t[0]))} -> {fmt(float(t[-1]))}. "
        "A dynamic loss scaler skips a step whose scaled gradients overflow and lowers the scale; the "
        "learning itself is not judged further here.",
    )


def _routine_loss_scaling(c: Ctx) -> Decision | None:
    """No judgeable learning signal, and what the text does show is fp16 overflow skips that RT006
    reads as benign (a few skips, the scale settled above its floor, no floor message), with no
    finding at warning or above: dynamic loss scaling at work, the question a report asks about it
    answered; the learning itself is not judged."""
    if c.basis.judgeable:
        return None
    f = c.get("RT006")
    if f is None or f.severity.rank >= Severity.WARNING.rank:
        return None
    if any(x.severity.rank >= Severity.WARNING.rank for fs in c.by_code.values() for x in fs):
        return None
    return Decision(
        Outcome.UNKNOWN,
        Cause.HEALTHY,
        f"The overflow messages are dynamic loss scaling at work, not a failure: {f.message}. A step "
        "with an inf/NaN gradient is skipped and the scale lowered until it fits; the scale settled "
        "above its floor. The learning itself is not judged here (no loss curve in the text).",
        f,
    )


def _reproduction_within_noise(c: Ctx) -> Decision | None:
    """No judgeable curve; the text states a reference figure (a paper's, a README's, a target to
    reproduce) and the run's figure of the same metric, every such gap within the seed-noise band of
    :mod:`mlaudit_core.reference_gap` (1% of the reference), or repeats of one configuration whose
    spread is run-to-run noise, or a gap stated in points no wider than the run-to-run band the text
    states for the same code; and no finding at warning or above: the result is as close as a rerun
    of the same configuration gets."""
    if c.basis.judgeable:
        return None
    if any(x.severity.rank >= Severity.WARNING.rank for fs in c.by_code.values() for x in fs):
        return None
    from ..reference_gap import (
        STD_BAND,
        file_spreads,
        reproduction_gaps,
        rerun_spreads,
        stated_band_gaps,
        stated_std,
        text_lines,
    )

    lines = text_lines(c.run)
    gaps = reproduction_gaps(lines)
    spreads = rerun_spreads(lines) + file_spreads(c.run.console, lines)
    stated = stated_band_gaps(lines)
    if not (gaps or spreads or stated):
        return _reference_matched_in_words(c, lines) or _owner_attests_match(c, lines)
    std = stated_std(lines) if gaps else None

    def in_std(g) -> bool:
        # the std is in the metric's points: a std of 1 or more cannot be one of a 0-1 figure
        return (
            std is not None
            and not (g.reference <= 1 and std[0] >= 1)
            and abs(g.observed - g.reference) <= STD_BAND * std[0]
        )

    within = [g.within_noise or in_std(g) for g in gaps] + [sp.within_noise for sp in spreads]
    if not all(within + [st.within_noise for st in stated]):
        return _owner_attests_match(c, lines)
    if gaps:
        return _gaps_within_noise(gaps, std if any(not g.within_noise for g in gaps) else None)
    if spreads:
        return _spreads_within_noise(spreads)
    st = stated[0]
    return Decision(
        Outcome.SUCCEEDED,
        Cause.HEALTHY,
        f"The gap to the reference is inside the run-to-run band stated for the same code: "
        f'{fmt(st.gap)} points ("{st.gap_text[:90]}") against reruns that differ by up to '
        f'{fmt(st.band)} ("{st.band_text[:120]}"). One run cannot show a regression smaller than '
        "the spread of reruns; to compare configurations, run several seeds and compare means.",
    )


def _owner_attests_match(c: Ctx, lines: list[str]) -> Decision | None:
    """V19d's reading of a report whose thread has the reference's owner (a maintainer or author) state that
    the run's result is at the reference's level (:func:`.stated_figures.owner_attests_match`: ``within an
    expected range``, ``in line with the results we observed``, ``close enough to be reproducible``), with
    no finding at warning or above (checked by the caller): the owner knows the spread of the reference's
    own reruns and the protocol behind its figure, which one rerun against one or two reference runs cannot
    show; the run is healthy. Succeeded when the text states a task figure (the run was trained and
    scored), else unknown."""
    from .stated_figures import measured_figures, owner_attests_match

    said = owner_attests_match(dict(c.run.params))
    if said is None:
        return None
    scored = any(f.head for line in lines for f in measured_figures(line))
    return Decision(
        Outcome.SUCCEEDED if scored else Outcome.UNKNOWN,
        Cause.HEALTHY,
        f"The reference's owner states that the run's result is at the reference's level (\"{said}\"): a "
        "gap between one run and the reference's figure (or its owner's few reruns) inside what the owner "
        "expects is run-to-run variation (seed, device, nondeterministic kernels), not a regression. To "
        "compare more firmly, repeat over several seeds and compare the mean and spread with the reference.",
    )


def _reference_matched_in_words(c: Ctx, lines: list[str]) -> Decision | None:
    """V19d's reading of a report that states no figures of its result but says, in words, that the result
    is at the reference's level (:func:`.stated_figures.stated_reference_matched`: ``results which are
    close to the published results``), with no failure in the reporter's own text: the run reached its
    reference, so what the report asks about (a curve's shape, a speed) happened on the way to a success."""
    from .stated_figures import stated_reference_matched
    from .statements import _REPORTER_KEY

    reported = [x.text for x in c.run.console] + [
        f"{k}: {v}" for k, v in c.run.params.items() if _REPORTER_KEY.match(str(k))
    ]
    said = stated_reference_matched(lines, reported)
    if said is None:
        return None
    return Decision(
        Outcome.SUCCEEDED,
        Cause.HEALTHY,
        f"The report states the run's results are at the reference's level (\"{said}\"), and names no "
        "failure: the run reached what it was meant to. What it asks about (the curve's shape on the way, an "
        "early stall, spikes) did not keep it from the result; keep the full schedule (no early stop during "
        "an early plateau) and compare final figures with the reference under one protocol.",
    )


def _stop_ignored(c: Ctx) -> Decision | None:
    """V19s: the console announces an early stop and then logs further epochs counting on past it
    (:func:`.evidence.stop_not_honoured`), with no finding at error: the early-stopping code decided to
    stop and the loop did not, a defect in the training code or its version (a callback that sets a flag
    the loop never reads), whatever the curve looks like. The outcome is not in the text: the run may
    have gone on to its epoch limit or been stopped by hand."""
    if any(x.severity.rank >= Severity.ERROR.rank for fs in c.by_code.values() for x in fs):
        return None
    from .evidence import stop_not_honoured

    got = stop_not_honoured([x.text for x in c.run.console])
    if got is None:
        return None
    line, at, last = got
    return Decision(
        Outcome.UNKNOWN,
        Cause.CORRECTNESS_BUG,
        f'The log announces an early stop at epoch {at} ("{line}") and then goes on training to epoch '
        f"{last}: the stop was decided and not carried out, a defect in the early-stopping code or the "
        "loop that should honour it (a callback that sets a stop flag the loop does not read, an old "
        "version of the callback), not the learning. Update the library or fix the callback, and check "
        "that the loop stops when it says so.",
    )


def _memory_stated(c: Ctx) -> Decision | None:
    """V19i: no judgeable curve and no finding at error (no framework message decided), and a sentence of
    the report states that the run's memory ran out (:func:`.statements.stated_memory_exhaustion`: the
    GPU's, or the host's RAM filling up in a report that says the run failed): an out-of-memory crash told
    in words is the same infra event as the framework's message (the seeds: an out-of-memory is
    infra_runtime), whatever setting the thread then changes to fit the job in memory."""
    if c.basis.judgeable:
        return None
    if any(x.severity.rank >= Severity.ERROR.rank for fs in c.by_code.values() for x in fs):
        return None
    from ..reference_gap import text_lines
    from .statements import stated_memory_exhaustion, stated_timeout

    lines = text_lines(c.run)
    got = stated_memory_exhaustion(lines)
    if got is None:
        timeout = stated_timeout(lines)
        got = ("timeout", timeout) if timeout is not None else None
    if got is None:
        return None
    dev, said = got
    what = {
        "gpu": "the GPU ran out of memory",
        "host": "the host's memory (RAM) filled up and the run died: a host out-of-memory, not the GPU's",
        "memory": "the run ran out of memory",
        "killed": "the run's process was killed from outside (the host's out-of-memory killer or the "
        "scheduler: a kill signal is an infra event, never a code bug)",
        "timeout": "the distributed job failed on its process-group timeout (a rank waited at a collective "
        "longer than the limit while another was still busy)",
    }[dev]
    fix = {
        "gpu": "lower the per-device batch size or sequence/image size (check the command's actual "
        "values), use gradient accumulation, mixed precision or checkpointing, or a GPU with more memory",
        "host": "lower the data-loader workers (num_workers) and what each holds in memory, watch host "
        "memory while training, or use a machine with more RAM",
        "memory": "find which memory ran out (GPU or host RAM) and lower the batch size or the data-loader "
        "workers accordingly",
        "killed": "check the kernel log (dmesg: 'Out of memory: Killed process') and the scheduler's "
        "accounting for the kill's reason, then lower host memory use (loader workers, cached data) or ask "
        "for more memory or time",
        "timeout": "do the long single-rank work (tokenisation, evaluation) once before the job or on every "
        "rank and cache it, or raise the process group's timeout where the launcher passes it",
    }[dev]
    return Decision(
        Outcome.CRASHED,
        Cause.INFRA_RUNTIME,
        f'The report states that {what}, in the sentence "{said}". No framework message or curve was given; '
        f"an out-of-memory is a resource limit, not a model or code failure: {fix}.",
    )


def _gaps_within_noise(gaps, std: tuple[float, str] | None = None) -> Decision:
    """V19d's decision for stated results within 1% of their references, or within
    :data:`mlaudit_core.reference_gap.STD_BAND` standard deviations of reruns the text states
    (``std``: the deviation and its sentence)."""
    from ..reference_gap import RELATIVE_BAND, STD_BAND

    shown = "; ".join(
        f"{g.name + ' ' if g.name else ''}{fmt(g.observed)} against {fmt(g.reference)} "
        f"({100 * g.relative:.2g}%)"
        for g in gaps[:4]
    )
    if std is not None:
        return Decision(
            Outcome.SUCCEEDED,
            Cause.HEALTHY,
            f"The stated result is inside the run-to-run spread the report gives for its reference: "
            f"{shown}, within {fmt(STD_BAND)} standard deviations of {fmt(std[0])} "
            f'("{std[1][:160]}"). One run that far from a mean of reruns is ordinary variation, not a '
            "regression; to compare, repeat over several seeds and compare the mean and spread.",
        )
    return Decision(
        Outcome.SUCCEEDED,
        Cause.HEALTHY,
        f"The stated result matches its reference within seed noise: {shown}, each within "
        f"{100 * RELATIVE_BAND:g}% of the reference, which reruns of one configuration with other "
        "seeds differ by. Read from the report's sentences, not from a curve: confirm with a second "
        "seed before looking for a cause.",
    )


def _spreads_within_noise(spreads) -> Decision:
    """V19d's decision for repeats of one configuration whose spread is run-to-run noise."""
    from ..reference_gap import RERUN_BAND

    shown = "; ".join(
        f"{', '.join(fmt(v) for v in sp.values[:8])} (range {100 * sp.relative:.2g}% of the mean)"
        for sp in spreads[:3]
    )
    band = (
        f"within {100 * RERUN_BAND:g}% of the mean (seeds, non-deterministic kernels and data order move "
        "a metric by that much)"
        if all(sp.relative <= RERUN_BAND for sp in spreads)
        else "a spread the report puts down to run-to-run randomness, with no run an outlier from the "
        "others: that spread is the configuration's own noise band"
    )
    return Decision(
        Outcome.SUCCEEDED,
        Cause.HEALTHY,
        f"The repeated runs of one configuration differ by run-to-run noise: {shown}, {band}. No run "
        "is a regression to explain; report the mean and spread over seeds, not one run.",
    )


#: A held-out accuracy within this share of 1/K, K = round(1 / accuracy), names K: 0.1 -> 10 classes.
SUMMARY_GUESS_ACC = 0.1
#: The loss band of the uniform guess, as a share of ln K (the cross-entropy of predicting 1/K for every
#: class): from 0.9 ln K (a classifier that moved 10% off it has learned next to nothing) to 2 ln K.
SUMMARY_GUESS_LOSS = (0.9, 2.0)
#: A training accuracy's lift over chance, as a share of the way from chance to 1.0, from which the model
#: learned the training data (GE004's threshold for a held-out metric that beat chance, 25%).
SUMMARY_TRAIN_LIFT = 0.25


def _summary_at_uniform_guess(c: Ctx) -> Decision | None:
    """V19f: only summary values (fewer than 3 points, so no rule above judged a curve), and the last
    held-out accuracy and a last loss (held-out, else training) are together the uniform guess of a
    K-class model: the accuracy is 1/K (K from the task's class count, else K = round(1/accuracy), the
    accuracy within :data:`SUMMARY_GUESS_ACC` of 1/K) and the loss at least ``0.9 ln K`` and at most
    ``2 ln K`` (:data:`SUMMARY_GUESS_LOSS`). Two independent figures agreeing on one K is what an analyst reads as "the
    model predicts every class alike": underfit, model_convergence. A training accuracy logged and
    beyond chance by 25% of the way to 1.0 (:data:`SUMMARY_TRAIN_LIFT`) while the held-out one is at chance: the
    held-out labels or split carry no signal, data_config."""
    from ..detectors._context import chance as label_chance

    if c.basis.judgeable or c.ending.stopped:
        return None
    ak, vk, tk = (
        c.run.key_for(Role.VAL_ACCURACY),
        c.run.key_for(Role.VAL_LOSS),
        c.run.key_for(Role.TRAIN_LOSS),
    )
    if not ak or not has_class_chance(ak):
        return None
    a = c.run.metrics.series(ak).by_step().finite().values
    lk = vk if vk and len(c.run.metrics.series(vk).finite().values) else tk
    lv = c.run.metrics.series(lk).by_step().finite().values if lk else np.array([])
    if not len(a) or not len(lv) or not 0 < a[-1] <= 0.5:
        return None
    loss = float(lv[-1])
    ch = label_chance(c.run, vocab=False)
    k = ch.classes if ch is not None and ch.classes >= 2 else round(1 / float(a[-1]))
    if k < 2 or abs(float(a[-1]) * k - 1) > SUMMARY_GUESS_ACC:
        return None
    ln_k = float(np.log(k))
    if not SUMMARY_GUESS_LOSS[0] * ln_k <= loss <= SUMMARY_GUESS_LOSS[1] * ln_k:
        return None
    cause = Cause.MODEL_CONVERGENCE
    why = "the model learned almost nothing: train longer or at a higher learning rate"
    trk = c.run.key_for(Role.TRAIN_ACCURACY)
    tr = c.run.metrics.series(trk).finite().values if trk else np.array([])
    if len(tr) and 0 <= tr[-1] <= 1 and (tr[-1] - 1 / k) / (1 - 1 / k) >= SUMMARY_TRAIN_LIFT:
        cause = Cause.DATA_CONFIG
        why = (
            f"{trk} is {fmt(float(tr[-1]))}, so the model learned the training data while held-out data "
            "shows no signal: check the held-out labels and the split first"
        )
    return Decision(
        Outcome.UNDERFIT,
        cause,
        f"Only summary values were logged, and they are the uniform guess of a {k}-class model: {ak} "
        f"{fmt(float(a[-1]))} (1/{k} = {fmt(1 / k)}) with {lk} {fmt(loss)} (ln {k} = {fmt(ln_k)}); {why}.",
        None,
    )


#: A held-out loss at least this multiple of the training loss: the generalisation gap is larger than
#: the training loss itself (report b14-10: val_loss 50.89 against loss 18.65, 2.7x, at the early stop).
EARLY_STOP_GAP = 2.0


def _early_stopped_gap(c: Ctx) -> Decision | None:
    """V19h: only summary values (no judgeable curve), the console says early stopping ended the run,
    and the last held-out loss is at least :data:`EARLY_STOP_GAP` times the last training loss (both
    finite and positive). Early stopping ends a run when the held-out loss (Keras' default monitor)
    stopped improving for its patience, so the held-out loss was past its best while the training loss
    sat far below it: the model fits the training data much better than held-out data, overfit."""
    if c.basis.judgeable or not c.ending.early_stopped:
        return None
    vk, tk = c.run.key_for(Role.VAL_LOSS), c.run.key_for(Role.TRAIN_LOSS)
    if not vk or not tk:
        return None
    v = c.run.metrics.series(vk).by_step().finite().values
    t = c.run.metrics.series(tk).by_step().finite().values
    if not len(v) or not len(t) or not 0 < float(t[-1]) * EARLY_STOP_GAP <= float(v[-1]):
        return None
    if _heldout_accuracy_never_beat_chance(c):
        return None  # nothing learned that generalises: no overfit to explain (GE001's rule)
    return Decision(
        Outcome.OVERFIT,
        Cause.MODEL_CONVERGENCE,
        f"Early stopping ended the run ({c.ending.early_stopped}) with {vk} {fmt(float(v[-1]))} against "
        f"{tk} {fmt(float(t[-1]))} ({float(v[-1]) / float(t[-1]):.1f}x): the held-out loss had stopped "
        "improving while the training loss sat far below it, so the model fits its training data much "
        "better than held-out data. Keep the best checkpoint; more data, augmentation or regularisation "
        "narrow the gap.",
    )


def _failure_signature(c: Ctx) -> bool:
    """Whether a finding of the run is an error or worse, or a runtime signature (a traceback, an
    out-of-memory, a kill) at warning or above: what the final-values rules must not read past. Other
    warnings (GPU idle under a CPU model, a slow start) were weighed by the rules above and say nothing
    of what the final values show."""
    return any(
        f.severity.rank >= Severity.ERROR.rank
        or (f.family == "runtime" and f.severity.rank >= Severity.WARNING.rank)
        for fs in c.by_code.values()
        for f in fs
    )


def _final_scores(c: Ctx) -> Decision | None:
    """V20c: no judgeable curve, no failure signature (:func:`_failure_signature`), not stopped short; a finished tree
    ensemble's final training and held-out scores (:func:`.final_values.fit_final_scores`): overfit
    when the training score is 10 points or more above the held-out one, else succeeded when the
    held-out score beat chance by 25% of the way to 1.0."""
    from .final_values import fit_final_scores

    if c.basis.judgeable or c.ending.stopped or _failure_signature(c):
        return None
    got = fit_final_scores(c.run)
    return None if got is None else Decision(*got)


def _planned_accuracy(c: Ctx) -> Decision | None:
    """V20d: no judgeable curve, no failure signature (:func:`_failure_signature`), not stopped short, not
    a report's excerpt; the tracker marks the run finished at its planned length and its last held-out
    top-1 accuracy beat chance (1/K, K known) by 25% of the way to 1.0
    (:func:`.final_values.planned_heldout_accuracy`): succeeded, healthy."""
    from .final_values import planned_heldout_accuracy
    from .statements import is_report

    if c.basis.judgeable or c.ending.stopped or is_report(c.run.params) or _failure_signature(c):
        return None
    got = planned_heldout_accuracy(c.run, c.ending)
    return None if got is None else Decision(*got)


def _finished_values(c: Ctx) -> Decision | None:
    """V20e: no judgeable curve, no failure signature (:func:`_failure_signature`), not stopped short or
    interrupted, not running, failed or killed, not a report; the run's own record shows its training
    loop returned and its final values show it learned (:func:`.final_values.finished_final_values`: an
    end-of-training line or the Trainer's end summary, and a last loss 20% below the run's mean loss or
    held-out scores that all beat chance by 25% of the way to 1.0): succeeded, healthy."""
    from .final_values import finished_final_values
    from .statements import is_report

    if (
        c.basis.judgeable
        or c.ending.stopped
        or c.ending.interrupt
        or is_report(c.run.params)
        or c.run.status in (RunStatus.RUNNING, RunStatus.FAILED, RunStatus.KILLED)
        or _failure_signature(c)
    ):
        return None
    got = finished_final_values(c.run)
    return None if got is None else Decision(*got)


def _two_points(c: Ctx) -> Decision | None:
    """V20b: no judgeable curve because every learning series holds two values, no failure signature
    (:func:`_failure_signature`), the run neither stopped short, interrupted, running nor failed, and its record shows its end as
    the healthy rule reads it (:func:`_healthy_unended` finds nothing open) and something shows it ended
    there (:func:`.final_values.ended_at_two`: a finished status, the plan reached, an end line, an
    evaluation after the last training record); every loss fell and no score
    fell over the two records (:func:`.final_values.two_points_improved`): succeeded, healthy. Not for a
    report's pasted lines (an excerpt the reporter chose, not the run's record; V20 reads its thread)."""
    from .final_values import ended_at_two, two_points_improved
    from .statements import is_report

    if (
        c.basis.judgeable
        or c.basis.points != 2
        or is_report(c.run.params)
        or c.ending.excerpt
        or c.ending.stopped
        or c.ending.interrupt
        or c.run.status in (RunStatus.RUNNING, RunStatus.FAILED, RunStatus.KILLED)
        or _failure_signature(c)
    ):
        return None
    examined = ", ".join(f"{k} ({n} points)" for k, n in c.basis.signals.values())
    if _healthy_unended(c, examined) is not None:
        return None
    ended = ended_at_two(c.run, c.ending)
    if ended is None:
        return None
    got = two_points_improved(c.run, _heldout_accuracy_never_beat_chance(c))
    if got is None:
        return None
    return Decision(got[0], got[1], got[2] + f" The run ended there: {ended}.")


def _heldout_accuracy_never_beat_chance(c: Ctx) -> bool:
    """A held-out accuracy is logged and its best value is at or below chance (1/K with K from the
    task's label count; 0 when the count is not known)."""
    from ..detectors._context import chance as label_chance

    ak = c.run.key_for(Role.VAL_ACCURACY)
    a = c.run.metrics.series(ak).finite().values if ak else np.array([])
    if not len(a):
        return False
    ch = label_chance(c.run, vocab=False)
    level = 1 / ch.classes if ch is not None and ch.classes >= 2 else 0.0
    return float(a.max()) <= level


def _thread_says_expected(c: Ctx) -> Decision | None:
    """V20a: no judgeable curve and no finding at error, and a maintainer's sentence in the report says
    the behaviour is expected (:func:`.statements.expected_behaviour`): nothing in the input contradicts
    the confirmed explanation, so the cause is healthy; metric_policy when the sentence says the metric
    is set by hand (:data:`.statements._METRIC_SET_BY_HAND`: ``it is normal, i manually set accuracy to
    0.5``): then the figure is expected because it measures nothing. Not judged from figures: the outcome
    is running (healthy so far, its end not seen) when the tracker gives no final status, else unknown."""
    from ..reference_gap import text_lines
    from .statements import affirmed_expected, expected_behaviour

    if c.basis.judgeable or any(
        f.severity.rank >= Severity.ERROR.rank for fs in c.by_code.values() for f in fs
    ):
        return None
    said = expected_behaviour(c.run.params) or affirmed_expected(text_lines(c.run), c.run.params)
    if said is None or _reproduction_within_noise(c) is not None:
        return None  # reruns within their noise band say succeeded from figures (V19d)
    from .statements import _METRIC_SET_BY_HAND

    if _METRIC_SET_BY_HAND.search(said):
        return Decision(
            _healthy_so_far(c),
            Cause.METRIC_POLICY,
            f"Not judged from figures (no judgeable curve); the maintainer calls the figure expected because "
            f'of how it is computed, in the sentence "{said}": the metric is set by hand or a placeholder, '
            "so it does not measure the model, and its flat value says nothing of the training. Judge the run "
            "on its loss, or compute the metric from the model's predictions.",
        )
    return Decision(
        _healthy_so_far(c),
        Cause.HEALTHY,
        f"Not judged from figures (no judgeable curve), and nothing in the input is a failure; the "
        f'maintainer states the behaviour is expected, in the sentence "{said}": no failure to fix.',
    )


#: The outcome a report's symptom sentence states (:func:`.stated_symptom.stated_symptom`), with the
#: cause a curve-based rule gives that outcome when the thread states none: a plateau or a divergence
#: read from a curve is model_convergence (V14, V06; a divergence under reduced precision data_config, V04), a task metric at zero is a held-out measurement at
#: its floor (V11: data_config; the outcome unknown, as the training is not measured by it), a slowdown
#: with no cause named is the machine's (V18), a crash with no cause named leaves the cause open.
_SYMPTOM = {
    "diverged": (
        Outcome.DIVERGED,
        Cause.MODEL_CONVERGENCE,
        "the loss became non-finite or blew up",
    ),
    "plateaued": (Outcome.PLATEAUED, Cause.MODEL_CONVERGENCE, "the training stopped improving"),
    "underfit": (Outcome.UNDERFIT, Cause.INCONCLUSIVE, "the model did not learn the task"),
    "slow": (Outcome.SLOW, Cause.INFRA_RUNTIME, "the run got slower"),
    "crashed": (Outcome.CRASHED, Cause.INCONCLUSIVE, "the run stopped on an error"),
    "memory": (
        Outcome.RUNNING,
        Cause.CORRECTNESS_BUG,
        "the memory grows over the run while it goes on (no out-of-memory or kill yet): a reference kept "
        "across iterations (outputs or losses with their graphs appended to a list, objects rebuilt each "
        "step), V01b's leak before it ends the run",
    ),
}
#: A task metric stated at zero (not merely low): a held-out measurement at its floor.
_AT_ZERO = re.compile(r"(?<![\w.])(?:zero|0(?:\.0+)?\s?%?)(?!\w|\.\d)", re.I)


def _growth_stated(c: Ctx) -> tuple[str, str] | None:
    """``("memory", sentence)`` when the report states the memory grows over the run or names a leak
    (:func:`.memory_growth.stated_memory_growth`, not explained by the job's size), and states no
    out-of-memory or kill (:func:`.statements.stated_memory_exhaustion`: that ending is V01b's reading);
    else ``None``."""
    from ..reference_gap import text_lines
    from .memory_growth import stated_memory_growth
    from .statements import stated_memory_exhaustion

    lines = text_lines(c.run)
    if stated_memory_exhaustion(lines) is not None:
        return None
    got = stated_memory_growth(lines, c.run.params)
    if got is None or got[0] == "capacity":
        return None
    return "memory", got[1]


def _has_thread(c: Ctx) -> bool:
    """Whether the run comes with a report's prose (:func:`.statements.is_report`, or an ``observed``
    line): its sentences are people's observations. A run's own log lines are not (LightGBM's
    ``Training until validation scores don't improve for 50 rounds`` states its stopping rule)."""
    from .statements import is_report

    return is_report(c.run.params) or any(
        str(k).lower().startswith("observed") for k in c.run.params
    )


def _symptom_stated(c: Ctx) -> Decision | None:
    """V19k: no judgeable curve and no finding at error, and a sentence of the report (not a maintainer's)
    states the symptom the reporter saw (:func:`.stated_symptom.stated_symptom`): the run's outcome is
    that observation. The cause is the one the thread states (:func:`_thread_stated_cause`); a thread
    that says nothing failed overrules the symptom (no decision: V20 gives unknown, healthy); with no
    cause stated, the one a curve-based rule gives that outcome (:data:`_SYMPTOM`). Only a run that comes
    with a report's prose (:func:`_has_thread`) is read so."""
    if not _no_error_no_curve(c) or not _has_thread(c):
        return None
    from ..reference_gap import text_lines
    from .stated_symptom import stated_symptom

    got = stated_symptom(text_lines(c.run))
    if got is None:
        from .statements import pasted_nonfinite

        pasted = pasted_nonfinite([x.text for x in c.run.console])
        got = ("diverged", pasted) if pasted is not None else None
    if got is None:
        got = _growth_stated(c)
    if got is None:
        return None
    kind, said = got
    outcome, cause, what = _SYMPTOM[kind]
    if kind == "memory":
        outcome = _healthy_so_far(c)
    from .evidence import precision_evidence

    usual = "no cause is stated in the thread; this is the usual cause of that outcome, check it."
    if kind == "diverged" and precision_evidence(
        c.run, [x for fs in c.by_code.values() for x in fs]
    ):
        cause = Cause.DATA_CONFIG  # a NaN under reduced precision is the setting's (V04's reading)
        usual = (
            "no cause is stated in the thread, and reduced precision is in use: a NaN under it is most "
            "often an fp16 overflow or underflow (a setting); train in fp32 or bf16 to check."
        )
    if kind == "underfit" and _AT_ZERO.search(said):
        # a task metric at exactly zero is below any chance level: the measurement (its labels, split or
        # code) is broken, and the training itself is not measured by it
        outcome, cause, what = (
            Outcome.UNKNOWN,
            Cause.DATA_CONFIG,
            "a task metric at zero is below chance, so its measurement (labels, split or metric code) is "
            "broken and the training is not measured by it",
        )
    if kind == "slow":
        cause, usual = _slowdown_with_release(c, cause, usual)
    # the settling statement's cause fills a cause the symptom leaves open; a symptom whose curve-based
    # rule names a cause (a plateau, a divergence, a slowdown) keeps it unless a sentence states the cause
    stated = _thread_stated_cause(c, resolution=cause is Cause.INCONCLUSIVE)
    if stated is not None and stated[0] in (Cause.HEALTHY, Cause.METRIC_POLICY):
        return (
            None  # the thread settles it as no failure of the run: the run-to-run spread, the check
        )
    why = stated[1] if stated is not None else usual
    return Decision(
        outcome,
        stated[0] if stated is not None else cause,
        f'Not judged from figures (no judgeable curve); the report states the symptom, in the sentence "{said}": '
        f"{what} ({outcome.value}). The cause: {why}",
    )


def _slowdown_with_release(c: Ctx, cause: Cause, usual: str) -> tuple[Cause, str]:
    """A stated slowdown's cause when the report also states that a library's version changed
    (:func:`.stated_symptom.stated_version_change`): the same job slower under a new release of the code it
    runs on is a performance regression in that release, a defect in code (correctness_bug; reports b18-08
    scvi-tools 1.2.0 -> 1.2.1, b32-06 neosr after an update, b48-05 burn 0.12.1 -> 0.13.0: all three fixed
    by a code change), not the machine's. Else ``(cause, usual)`` unchanged."""
    from ..reference_gap import text_lines
    from .stated_symptom import stated_version_change

    said = stated_version_change(text_lines(c.run))
    if said is None:
        return cause, usual
    return Cause.CORRECTNESS_BUG, (
        f'no cause is stated in the thread, and the report states a library\'s version changed ("{said}"): '
        "the same job slower under a new release is a performance regression in that release's code. Time "
        "one step under the old and the new version on the same machine, pin the faster one, and report "
        "the regression upstream."
    )


def _healthy_so_far(c: Ctx) -> Outcome:
    """The outcome of a report a thread clears without a judgeable curve: running (the reporter asked while
    the run went on, no end seen) unless the tracker gives the run a final status."""
    return (
        Outcome.RUNNING
        if c.run.status in (RunStatus.RUNNING, RunStatus.UNKNOWN)
        else Outcome.UNKNOWN
    )


def _snapshot_so_far(c: Ctx) -> Decision | None:
    """A checkpoint's state saved before its planned end, too few values for a trend, no failure
    signature (:func:`_failure_signature`), not a report: running, its cause from the held-out accuracy
    (:func:`.final_values.snapshot_so_far`)."""
    from .final_values import snapshot_so_far
    from .statements import is_report

    if is_report(c.run.params) or _failure_signature(c):
        return None
    got = snapshot_so_far(c.run, c.ending)
    return None if got is None else Decision(*got)


def _no_signal(c: Ctx) -> Decision | None:
    """Abstain: no judgeable training signal (no recognised loss/validation metric, too few points,
    only summary values). ``succeeded`` needs positive evidence."""
    if c.basis.judgeable:
        return None
    missing = c.basis.missing(c.run)
    bar = c.ending.open_bar if not c.ending.interrupt else None
    if c.run.status is RunStatus.RUNNING or bar:
        where = (
            f"The log ends inside a progress bar with time still to go ({bar.strip()}): it was "
            "captured while the run was going, and it"
            if bar and c.run.status is not RunStatus.RUNNING
            else "The run is still running and"
        )
        stated = _thread_stated_cause(c)
        return Decision(
            Outcome.RUNNING,
            stated[0] if stated is not None else Cause.INCONCLUSIVE,
            f"{where} holds no judgeable training signal yet: "
            + "; ".join(missing)
            + (f"; {stated[1]}" if stated is not None else "."),
        )
    snap = _snapshot_so_far(c)
    if snap is not None:
        return snap
    routine = _only_benign_warnings(c)
    if routine is not None:
        return Decision(
            Outcome.UNKNOWN,
            Cause.HEALTHY,
            "Not judged from figures ("
            + "; ".join(missing)
            + "), and the framework's only messages are "
            f"routine warnings, not failures: {routine}. Log the training loss and a held-out metric to judge "
            "the learning itself.",
        )
    stated = _thread_stated_cause(c)
    if stated is not None:
        cause, why = stated
        return Decision(
            Outcome.UNKNOWN,
            cause,
            "Not judged from figures (" + "; ".join(missing) + "), and " + why,
        )
    stop = _stop_ended_the_run(c)
    if stop is not None:
        return Decision(
            Outcome.UNKNOWN,
            Cause.HEALTHY,
            "Not judged from figures ("
            + "; ".join(missing)
            + f'), and the log ends with its early stop ("{stop}"): '
            "the training stopped itself because the metric it monitors stopped improving for its patience, "
            "the designed end of the run, not an error. Raise or disable the patience to train longer; log "
            "the curves to judge the learning itself.",
        )
    return Decision(
        Outcome.UNKNOWN,
        Cause.INCONCLUSIVE,
        "Not judged: " + "; ".join(missing) + ". Log or pass what is listed under next actions "
        "to get a verdict.",
    )


#: What a thread's stated cause means, by the object of its fix or explanation
#: (:func:`.statements.stated_cause`), and what to do next.
_STATED_CAUSE = {
    "environment": (
        Cause.INFRA_RUNTIME,
        "the software stack or the machine (a framework, CUDA/cuDNN or driver version, shared memory, RAM "
        "or storage) is the cause, not the model or the data; pin the working versions or give the job the "
        "resources the fix gave it",
    ),
    "code": (
        Cause.CORRECTNESS_BUG,
        "a defect in the code (the training or the evaluation code) is the cause, not the model's "
        "learning or the machine; update to the fixed code and re-run or re-score before comparing figures",
    ),
    "config": (
        Cause.DATA_CONFIG,
        "a setting, the recipe or the data (hyper-parameters, flags, epochs, augmentation, the dataset or "
        "its labels) is the cause, not the code or the machine; use the reference's settings and data, or "
        "compare against a reference trained with yours",
    ),
    "learning_rate": (
        Cause.MODEL_CONVERGENCE,
        "the update size (the learning rate, its schedule or warm-up) is the cause, not the code, the data or "
        "the machine; lower or ramp the learning rate for this model, batch size and data, and rerun",
    ),
    "healthy": (
        Cause.HEALTHY,
        "nothing failed (the figure is at the model's usual level, within run-to-run noise, on another "
        "scale, or compared with an outdated reference); compare with the current reference, on its scale, "
        "over a few seeds before changing anything",
    ),
}


def _stop_ended_the_run(c: Ctx) -> str | None:
    """The early-stop line that ends a run with no finding at warning or above
    (:func:`.evidence.stop_at_end`), else ``None``."""
    if any(x.severity.rank >= Severity.WARNING.rank for fs in c.by_code.values() for x in fs):
        return None
    from .evidence import stop_at_end

    return stop_at_end([x.text for x in c.run.console])


def _thread_stated_cause(c: Ctx, resolution: bool = True) -> tuple[Cause, str] | None:
    """The cause a report's thread states (:func:`.statements.stated_cause`), for a report with no
    judgeable curve and no finding at error: ``(cause, explanation)`` naming the sentence it came from,
    else, with ``resolution``, the cause of the statement that settled the thread
    (:func:`_thread_resolution_cause`), else ``None``. The outcome stays what the figures can say
    (nothing)."""
    if not _no_error_no_curve(c):
        return None
    from .statements import stated_cause

    got = stated_cause(c.run.params)
    if got is None:
        return _thread_resolution_cause(c) if resolution else None
    kind, said = got
    cause, why = _STATED_CAUSE[kind]
    return cause, f'the report\'s thread states the cause, in the sentence "{said}": {why}.'


#: What a thread's resolution means when it names the run's randomness or the evaluation
#: (:func:`.resolution.thread_resolution`); its other kinds mean what :data:`_STATED_CAUSE` says.
_RESOLVED_CAUSE = {
    "seed_gate": (
        Cause.METRIC_POLICY,
        "the run's randomness (its seed, initialisation or sampling) decides whether the check passes, so "
        "the check is tighter than the run-to-run spread of what it measures: the gate, not the code under "
        "test, failed; fix the seed or set the tolerance (or the budget) outside the spread over seeds",
    ),
    "seed": (
        Cause.HEALTHY,
        "the run's randomness (its seed, initialisation or sampling) explains the difference: one run is one "
        "draw of the run-to-run spread, not a failure; compare the mean over a few seeds with the reference",
    ),
    "evaluation": (
        Cause.METRIC_POLICY,
        "the evaluation (its protocol, split, metric, tolerance or threshold) explains the figure, not the "
        "training; score the run the way the reference was scored before comparing",
    ),
    "lr_scale": (
        Cause.DATA_CONFIG,
        "the learning rate (or its schedule) is named with the run's scale (its GPU count or batch size), "
        "and the run did not diverge: the recipe's setting was not carried over to this scale, a faithful "
        "run of another configuration rather than an optimisation that failed; rescale the learning rate "
        "and schedule linearly with the total batch (or train at the reference's scale) before comparing",
    ),
}


def _thread_resolution_cause(c: Ctx) -> tuple[Cause, str] | None:
    """The cause of the statement that settled a report's thread (:func:`.resolution.thread_resolution`:
    an explanation, a confirmed fix, a maintainer's instruction, classed by what it names), when no
    sentence states the cause in the readings of :func:`.statements.stated_cause`. Randomness is the
    check's problem (metric_policy) in a text that shows a test failure (:data:`.statements._TEST_FAILURE`),
    else the run-to-run spread (healthy); a setting or an input in a text that states the run's memory ran
    out (:func:`.statements.stated_memory_exhaustion`) only sized the job past the machine (infra_runtime,
    as every out-of-memory is labelled); ``None`` when the thread names no resolution."""
    from ..reference_gap import text_lines
    from .resolution import thread_resolution
    from .statements import _TEST_FAILURE, stated_memory_exhaustion

    got = thread_resolution(c.run.params)
    if got is None:
        return None
    kind, said = got
    lines = text_lines(c.run)
    if kind == "seed" and any(_TEST_FAILURE.search(x) for x in lines):
        kind = "seed_gate"
    if kind == "config" and stated_memory_exhaustion(lines) is not None:
        kind = "environment"  # a job sized past the machine's memory: the setting only sized it
    if kind == "learning_rate" and _lr_not_scaled(c, said):
        kind = "lr_scale"
    cause, why = _RESOLVED_CAUSE.get(kind) or _STATED_CAUSE[kind]
    return cause, f'the statement that settled the report\'s thread is "{said}": {why}.'


def _lr_not_scaled(c: Ctx, said: str) -> bool:
    """Whether the learning rate the thread names as the cause (``said``) is named with the run's scale
    (:func:`.statements.lr_scaled_to_run`: GPUs, batch size) in a report that shows no divergence (no
    non-finite value found, pasted or stated): the recipe's setting not carried over to the run's scale."""
    from ..reference_gap import text_lines
    from .stated_symptom import stated_symptom
    from .statements import lr_scaled_to_run, pasted_nonfinite

    if not lr_scaled_to_run(said) or _first_nonfinite(c) is not None:
        return False
    if pasted_nonfinite([x.text for x in c.run.console]) is not None:
        return False
    symptom = stated_symptom(text_lines(c.run))
    return symptom is None or symptom[0] != "diverged"


_WARN_PREFIX = re.compile(r"^\S+\.pyx?:\d+:\s*")


def _only_benign_warnings(c: Ctx) -> str | None:
    """The console's benign warnings described (docs/signatures.md, category ``benign_warning``: LightGBM's
    ``No further splits with positive gain``, scikit-learn's max_iter ConvergenceWarning), when they are its
    only signatures besides context ones (checkpoints, resumes), no traceback was read and no finding is at
    warning or above; else ``None``."""
    from ..signatures import CONTEXT_CATEGORIES, scan_run

    if not c.run.console or any(
        x.severity.rank >= Severity.WARNING.rank for fs in c.by_code.values() for x in fs
    ):
        return None
    hits, tracebacks = scan_run(c.run)
    benign = [h for h in hits if h.signature.category == "benign_warning"]
    others = [
        h for h in hits if h.signature.category not in CONTEXT_CATEGORIES | {"benign_warning"}
    ]
    if not benign or others or tracebacks:
        return None
    by_id: dict[str, list] = {}
    for h in benign:
        by_id.setdefault(h.signature.id, []).append(h)
    # the message without the ``path.py:LINE:`` prefix Python's warnings module puts before it
    shown = "; ".join(
        f'"{_WARN_PREFIX.sub("", hs[0].line.text.strip())[:100]}" ({len(hs)} line(s): '
        f"{hs[0].signature.description})"
        for hs in by_id.values()
    )
    return shown


#: Training-loss points under which a loss that ended at >= 2x its start is not judged healthy (OP001's
#: min_points: below it no divergence is measured).
SHORT_LOSS_POINTS = 10


#: Still at the uniform guess: the run's last training loss (and last held-out loss, when one is logged) is at
#: least this share of ln K, the cross-entropy of predicting 1/K for every class, and its first value was at or
#: above it (a classifier's loss that started there): a model this close to the uniform guess at its end has
#: learned almost nothing, however the run ended. K from the task's class count (``_context.chance``, never a
#: vocabulary). Own corpus: f8b1-15 (3 classes, loss 1.096 -> 1.033, eval 0.998; ln 3 = 1.099), f6b1-11
#: (binary, train 0.86 -> 0.82, val 0.76 -> 0.72; ln 2 = 0.693), f7b1-15 (binary, 0.694 -> 0.633).
UNIFORM_GUESS_SHARE = 0.9
#: ... and the held-out accuracy's best lift over chance, as a share of the way from chance to 1.0, below
#: which held-out data shows no signal either (GE004's threshold, 25%): the labels or the split are the
#: first suspects (data_config); above it the model learns held-out signal slowly (model_convergence).
UNIFORM_GUESS_LIFT = 0.25


def _uniform_guess_accuracy(c: Ctx, ch: Chance) -> tuple[Cause, str]:
    """:func:`_at_uniform_guess`'s cause and the note on the held-out accuracy: data_config when
    its best (a chance-scored accuracy in [0, 1]) lifts less than :data:`UNIFORM_GUESS_LIFT` of
    the way from chance ``ch.accuracy`` to 1.0, else model_convergence (and no note without one)."""
    ak = c.run.key_for(Role.VAL_ACCURACY)
    a = c.run.metrics.series(ak).by_step().finite().values if ak else np.array([])
    cause = Cause.MODEL_CONVERGENCE
    note = ""
    if (
        len(a)
        and 0 < ch.accuracy < 1
        and 0 <= a.max() <= 1
        and ak is not None
        and has_class_chance(ak)
    ):
        lift = (float(a.max()) - ch.accuracy) / (1 - ch.accuracy)
        note = f" and {ak} is at best {fmt(float(a.max()))} (chance {fmt(ch.accuracy)})"
        if lift < UNIFORM_GUESS_LIFT:
            cause = Cause.DATA_CONFIG
    return cause, note


#: A top-1 accuracy's name (``acc``, ``accuracy``, ``top1``), whose chance level is 1/K.
_TOP1 = re.compile(r"acc|top-?1")


def _chance_from_first_losses(c: Ctx, t: np.ndarray, v: np.ndarray) -> Chance | None:
    """The class count K of a run that states none, from its first training loss and its first held-out
    loss both within :data:`NEVER_LEARNED_MARGIN` (3%) of ln K for the same integer K >= 2: two
    measurements of a freshly initialised classifier agreeing on the uniform guess's loss. Only for a K
    whose ln K is farther than twice that margin from ln (K + 1) (K <= 7), so the loss names one K; a
    larger K's neighbours lie within the margin and any loss would name one. Only when the run logs no
    top-1 accuracy (:data:`_TOP1`; an accuracy and a loss agreeing is :func:`detectors._context.chance`'s
    own reading); a ranking metric in the accuracy role (MRR, hits@k: own f22b1-05) does not count."""
    import math

    if not len(t) or not len(v) or not 0 < float(t[0]) < 20:
        return None
    if any(
        (acc_key := c.run.key_for(r)) and _TOP1.search(normalise_key(acc_key))
        for r in (Role.VAL_ACCURACY, Role.TRAIN_ACCURACY)
    ):
        # a top-1 accuracy is the better witness: _context.chance reads K from it and the loss; a ranking
        # metric in the accuracy role (MRR, hits@k) has no 1/K chance level and witnesses nothing
        return None
    k = round(math.exp(float(t[0])))
    if k < 2 or math.log(k + 1) - math.log(k) <= 2 * NEVER_LEARNED_MARGIN * math.log(k):
        return None
    lnk = math.log(k)
    if any(abs(float(x[0]) - lnk) > NEVER_LEARNED_MARGIN * lnk for x in (t, v)):
        return None
    tk, vk = c.run.key_for(Role.TRAIN_LOSS), c.run.key_for(Role.VAL_LOSS)
    return Chance(1 / k, lnk, k, f"the first {tk} and {vk}, both at ln {k}")


def _at_uniform_guess(c: Ctx) -> Decision | None:
    """V19e: the training loss (>= 3 finite points; else the held-out loss) started at or above ``0.9 ln K``
    (and at most ``2 ln K``) and ended there too, and so did the last value of each other logged loss: the run ended at the uniform guess's loss,
    underfit. The cause is data_config when a held-out accuracy never beat chance by 25% of the way to
    1.0, else model_convergence. Not when the run was stopped short (its stop explains more)."""
    from ..detectors._context import chance as label_chance

    if c.ending.stopped:
        return None
    tk, vk = c.run.key_for(Role.TRAIN_LOSS), c.run.key_for(Role.VAL_LOSS)
    t = c.run.metrics.series(tk).by_step().finite().values if tk else np.array([])
    v = c.run.metrics.series(vk).by_step().finite().values if vk else np.array([])
    ch = label_chance(c.run, vocab=False)
    # a language model's classes are its tokens: _context.chance names the vocabulary only for next-token
    # prediction (an LM head, or a token task with no architecture named), whose loss is a token
    # cross-entropy by construction, so an early blow-up above 2 ln V does not make it another quantity
    lm = ch is None and (ch := label_chance(c.run)) is not None
    if ch is None:
        ch = _chance_from_first_losses(c, t, v)
    if ch is None or ch.classes < 2:
        return None
    # the run's loss: the training loss, else (fewer than 3 training points) the held-out loss
    main, mk = (t, tk) if len(t) >= 3 else (v, vk)
    if len(main) < 3:
        return None
    floor = UNIFORM_GUESS_SHARE * ch.loss
    if not (floor <= main[0] <= (np.inf if lm else 2 * ch.loss) and main[-1] >= floor):
        return None
    if any(len(x) and x[-1] < floor for x in (t, v)):
        return None
    other = vk if mk == tk else tk
    last_other = v if mk == tk else t
    held = f", {other} ends at {fmt(last_other[-1])}" if len(last_other) else ""
    cause, acc = _uniform_guess_accuracy(c, ch)
    held += acc
    why = (
        "held-out data shows no signal either: check the labels and the split first"
        if cause is Cause.DATA_CONFIG
        else f"with {c.lr.describe()} (at or above it) a higher learning rate is not the fix: updates "
        "this large overshoot every minimum but the uniform guess; lower it 10x"
        if c.lr.at_or_above_typical
        else "train longer or at a higher learning rate (a warm-up longer than the run never reaches its rate)"
    )
    return Decision(
        Outcome.UNDERFIT,
        cause,
        f"The run ended at the uniform guess: {mk} went {fmt(main[0])} -> {fmt(main[-1])}{held}, while predicting "
        f"1/{ch.classes} for every class scores ln {ch.classes} = {fmt(ch.loss)} ({ch.classes} classes from "
        f"{ch.source}); the model learned almost nothing: {why}.",
        None,
    )


def _run_ended(c: Ctx) -> str | None:
    """What shows the run ended where its record ends, or ``None``: the tracker's finished status, its
    planned length reached, or the framework's end-of-training or early-stop line (never a run stopped
    short, running or a report's excerpt)."""
    run, e = c.run, c.ending
    if (
        e.stopped
        or e.excerpt
        or run.status in (RunStatus.RUNNING, RunStatus.FAILED, RunStatus.KILLED)
    ):
        return None
    if run.status is RunStatus.FINISHED:
        return "the tracker marks the run finished"
    if e.planned is not None and not e.short:
        return f"it reached its planned length ({e.planned_key} {e.planned:g})"
    if e.early_stopped:
        return e.early_stopped
    if any(NORMAL_END.search(ln.text) for ln in run.console[-300:]):
        return "its console has an end-of-training line"
    return None


def _ended_at_ap_floor(c: Ctx) -> Decision | None:
    """V20f: the run ended (:func:`_run_ended`), no finding at error but a score-floor one (fact
    ``score_floor``: GE002's own floor reading), and a
    held-out average precision never left its floor (:func:`.score_floor.ap_at_floor`: best <= 1% over >= 2
    evaluations): the model does not perform its task, whatever its losses or its other heads did, so no
    overfit, plateau or healthy reading of its losses stands: underfit. The cause is data_config when the
    model learned something the floored score does not see (:func:`.score_floor.learned_elsewhere`: another
    AP head above the floor, a training loss that fell by a fifth), else model_convergence."""
    from .score_floor import FLOOR, ap_at_floor, learned_elsewhere
    from .statements import is_report

    if is_report(c.run.params) or any(
        f.severity.rank >= Severity.ERROR.rank and not f.facts.get("score_floor")
        for fs in c.by_code.values()
        for f in fs
    ):
        return None
    ended = _run_ended(c)
    if ended is None:
        return None
    got = ap_at_floor(c.run)
    if got is None:
        return None
    k, first, best, n = got
    learned = learned_elsewhere(c.run, k)
    head = (
        f"The model learned something ({learned}) that this score does not see, so optimisation is not what "
        "failed: check that the targets of this head (boxes, keypoints, class indices) and the evaluated "
        "image size and held-out set match what the model was trained on."
        if learned
        else "Nothing else in the run shows learning either: train far longer (from pretrained weights for "
        "every head), and check that the targets (boxes, keypoints, class indices) match what the model "
        "predicts at the evaluated image size."
    )
    return Decision(
        Outcome.UNDERFIT,
        Cause.DATA_CONFIG if learned else Cause.MODEL_CONVERGENCE,
        f"The model does not perform its task: {k} went {fmt(first)} -> at most {fmt(best)} over its {n} "
        f"evaluations, never above {fmt(100 * FLOOR, 3)}% (an untrained detector's level), and the run ended "
        f"there ({ended}), so no later epoch lifts it, whatever the losses did. {head}",
    )


def _players_only(c: Ctx) -> str | None:
    """The training-loss keys, joined, when every training-split loss the run logs is one player's loss
    in an adversarial game (:func:`_adversarial_player`: a discriminator's and a generator's) and it
    logs no held-out loss or task metric (roles validation loss / validation accuracy); else ``None``.
    Neither player's loss is minimised towards zero, so no success is read from them (own corpus
    f17b1-19: a WaveGAN CSV whose generator loss climbs 0.73 -> 2.5-3.0 while the discriminator's falls
    1.39 -> 0.27, no sample metric)."""
    from ..roles import parse_name

    if c.run.key_for(Role.VAL_LOSS) or c.run.key_for(Role.VAL_ACCURACY):
        return None
    tk = c.run.key_for(Role.TRAIN_LOSS)
    if not tk or not _adversarial_player(tk):
        return None
    losses = [
        k
        for k in c.run.metrics.keys
        if parse_name(k).family == "loss" and parse_name(k).split != "eval"
    ]
    if not losses or not all(_adversarial_player(k) for k in losses):
        return None
    return ", ".join(losses[:4])


def _ended_descending(c: Ctx) -> Decision | None:
    """V20g: a run the healthy reading (:func:`_healthy`) would call succeeded (whatever findings it
    outweighed), not a report, whose loss ended in its initial descent (:func:`.levelled.still_descending`: no accuracy
    logged; the held-out loss, else the training loss, still falling at full pace at its last points and
    not yet halved): the run ended while the model was still learning, so it is underfit
    (model_convergence: more steps or a larger learning rate), not a success."""
    from .levelled import still_descending
    from .statements import is_report

    if is_report(c.run.params):
        return None
    got = still_descending(c.run)
    if got is None:
        return None
    healthy = _healthy(c)
    if healthy is None or healthy.outcome is not Outcome.SUCCEEDED:
        return None
    return Decision(
        Outcome.UNDERFIT,
        Cause.MODEL_CONVERGENCE,
        f"The run ended while the model was still learning: {got.describe()}. A loss that converges slows "
        "down as the model nears what it can fit; this one had not, so the model is underfit for lack of "
        "steps (or of step size): train longer or at a larger learning rate, and log a task metric "
        "(accuracy, error) to see what the model does.",
    )


def _task_unlearned(c: Ctx) -> Decision | None:
    """V20h: a run the healthy reading (:func:`_healthy`) would call succeeded, not a report nor a paste,
    whose task metric shows the model did not learn its task (:mod:`.task_unlearned`): a held-out ROC
    AUC that never left chance (:func:`.task_unlearned.auc_at_chance`), or a low task metric that did
    not move while the loss fell (:func:`.task_unlearned.metric_unmoved`). No decrease of a loss is a
    success when the score the run was for did not move: underfit, model_convergence."""
    from .statements import is_report
    from .task_unlearned import auc_at_chance, metric_still_rising, metric_unmoved

    if c.ending.excerpt or is_report(c.run.params):
        return None
    auc = auc_at_chance(c.run)
    flat = None if auc is not None else metric_unmoved(c.run)
    rising = None if auc is not None or flat is not None else metric_still_rising(c.run)
    if auc is None and flat is None and rising is None:
        return None
    healthy = _healthy(c)
    if healthy is None or healthy.outcome is not Outcome.SUCCEEDED:
        return None
    if auc is not None:
        what = (
            f"The run did not learn its task: the classifier never left chance on held-out data: "
            f"{auc.describe()}. Whatever its losses did, its held-out ranking of positives over "
            "negatives is a coin toss. Check the learning rate and the number of steps, then the labels, "
            "the data the model sees and how the metric is computed."
        )
    elif flat is not None:
        what = (
            f"The run did not learn its task: the task metric did not move while the loss fell: "
            f"{flat.describe()}. The optimiser bought loss with nothing the task sees (the most frequent "
            "tokens or class, the output's scale). Check the learning rate and the number of steps, then "
            "the labels, the data the model sees and how the metric is computed."
        )
    else:
        assert rising is not None
        what = (
            f"The run ended while its task metric was still climbing from a low level: "
            f"{rising.describe()}. A learning curve slows down as the model nears what it can do; this "
            "one had not, so the model is undertrained: train longer (more epochs, or a larger image "
            "size or learning rate if the budget is fixed)."
        )
    return Decision(Outcome.UNDERFIT, Cause.MODEL_CONVERGENCE, what)


def _healthy(c: Ctx) -> Decision | None:
    """Positive evidence of health: a judgeable training signal examined, no rule above fired.

    The steps: a running run; a training loss too short and risen to judge
    (:func:`_healthy_loss`); a record that shows the run going, not ended
    (:func:`_healthy_unended`); then the message, with a note when nothing shows the run's end
    (:func:`_end_unseen_note`), the reruns' noise band (:func:`_reruns_note`) and the run's own
    signals that contradict health."""
    run = c.run
    if run.status is RunStatus.RUNNING:
        return Decision(
            Outcome.RUNNING,
            Cause.INCONCLUSIVE,
            "The run is still running; so far no failure signature in what was examined.",
        )
    examined = ", ".join(
        f"{k} ({n} point{'' if n == 1 else 's'})" for k, n in c.basis.signals.values()
    )
    players = _players_only(c)
    if players is not None:
        return Decision(
            Outcome.UNKNOWN,
            Cause.INCONCLUSIVE,
            f"Not judged: {players} are the players' losses of an adversarial game, which trade against "
            "each other and are not minimised towards zero, so their course says nothing of what the "
            "generator learned (a falling discriminator loss is the discriminator winning, a rising "
            "generator loss is common in healthy and failing runs alike); no sample-quality or held-out "
            f"metric (FID, inception score, a held-out loss) is logged. Examined: {examined}.",
        )
    msg, rose = _healthy_loss(c, examined)
    if rose is not None:
        return rose
    unended = _healthy_unended(c, examined) or _unmoved_heldout(c, examined)
    if unended is not None:
        return unended
    msg = _end_unseen_note(c, msg)
    e = c.ending
    if e.early_stopped and e.short and e.planned and e.reached is not None:
        # a run that ended well short of its plan by itself: the reader is told where and why
        why = e.early_stopped.split(" (")[0]
        msg += (
            f"; {why}"
            if "stopped by itself" in why
            else f"; it stopped by itself at {e.unit} {fmt(e.reached)} of the {fmt(e.planned)} planned "
            f"({e.planned_key}): {why}"
        )
    msg += _reruns_note(c)
    msg += _task_metric_note(c)
    kept = kept_by_the_heldout_loss(c)
    if kept is not None:
        return Decision(
            Outcome.SUCCEEDED, Cause.METRIC_POLICY, msg + f"; but {kept}. Examined: {examined}."
        )
    doubt = contradicting_signals(c.by_code)
    if doubt:
        msg += (
            f". Examined: {examined}. But the run's own signals say otherwise: "
            + "; ".join(f.message for f in doubt[:2])
            + ". The curves look healthy; find the steps behind these before trusting the result"
        )
        return Decision(Outcome.SUCCEEDED, Cause.HEALTHY, msg + ".", doubt[0])
    return Decision(Outcome.SUCCEEDED, Cause.HEALTHY, msg + f". Examined: {examined}.")


def _stopped_at_iteration_cap(c: Ctx) -> Decision | None:
    """The library states its solver stopped at its iteration cap before converging
    (:func:`.iteration_cap.stated_cap_stop`) and the training loss was still falling at the end
    (:func:`.iteration_cap.still_falling_at_end`): under-trained (underfit/model_convergence); else
    ``None``. Only for a finished run with a judgeable signal and no finding at error (a rule above
    judges a failure)."""
    from .iteration_cap import stated_cap_stop, still_falling_at_end

    if not c.basis.judgeable or _any_error(c) or c.run.status is RunStatus.RUNNING:
        return None
    said = stated_cap_stop(c.run)
    if said is None:
        return None
    falling = still_falling_at_end(c.run)
    if falling is None:
        return None
    first, q3, last = falling
    said = _WARN_PREFIX.sub("", said)
    return Decision(
        Outcome.UNDERFIT,
        Cause.MODEL_CONVERGENCE,
        f'The library states that its solver stopped at its iteration cap before converging ("{said[:160]}") '
        f"and the training loss was still falling when it stopped ({fmt(first)} -> third-quarter median "
        f"{fmt(q3)} -> {fmt(last)} at the end, its lowest): the run stopped while still learning, so the "
        "model is the one the budget left, not the one its objective reaches. Raise max_iter (or scale the "
        "inputs, or raise the learning rate) and rerun until the library's own tolerance stops it.",
    )


def _task_metric_note(c: Ctx) -> str:
    """The healthy message's clause when the task metric overruled a loss-based reading
    (:func:`task_metric_overrules`, or a training loss that takes both signs,
    :func:`..task_metric.surrogate_loss`); empty otherwise."""
    from ..task_metric import judge, surrogate_loss

    sur = surrogate_loss(c.run)
    if sur is not None and c.get("OP001", Severity.ERROR) is not None:
        j = judge(c.run, surrogate=True)
        if j is not None:
            return (
                f"; {sur} takes both signs, a surrogate not minimised towards zero, so its rise is no "
                f"divergence: the task metric decides, and {j.describe()}"
            )
    loss_read = any(
        c.get(d.code, Severity.WARNING) is not None for d in registry().values() if d.loss_reading
    )
    why = task_metric_overrules(c) if loss_read else None
    return (
        f"; the losses' overfit/plateau reading is overruled by the task metric: {why}"
        if why
        else ""
    )


def kept_by_the_heldout_loss(c: Ctx) -> str | None:
    """A clause when the run keeps its checkpoint by the held-out loss while its task metric kept
    improving past that loss's minimum, else ``None``: GE001 found the held-out loss rising while the
    task metric is at its best at the end (``kind`` ``task_metric_improving``), and the run's
    ``best_metric`` (HF Trainer's trainer_state) equals the held-out loss's minimum (to 1e-6
    relative: the Trainer's default ``metric_for_best_model`` is the loss). The checkpoint kept as
    the best is then worse at the task than the final model: a selection-metric problem
    (metric_policy), not a failed run (own corpus f6b1-14: CodeBERT ``best_model_checkpoint`` at the
    eval-loss minimum of epoch 3 while eval accuracy rose 0.967 -> 0.972 to epoch 10)."""
    g = next(
        (f for f in c.by_code.get("GE001", []) if f.facts.get("kind") == "task_metric_improving"),
        None,
    )
    vk = c.run.key_for(Role.VAL_LOSS)
    bm = c.run.params.get("best_metric")
    if g is None or not vk or bm is None:
        return None
    try:
        best_metric = float(bm)
    except ValueError:
        return None
    v = c.run.series(vk).by_step().finite()
    if not len(v):
        return None
    lo = float(v.values.min())
    if abs(best_metric - lo) > 1e-6 * max(1.0, abs(lo)):
        return None
    ck = c.run.params.get("best_model_checkpoint")
    kept = f" ({ck})" if ck else ""
    return (
        f"the checkpoint it keeps as best{kept} is the one at {vk}'s minimum {fmt(lo)} (best_metric), "
        f"while {g.facts.get('task_metric')} kept improving after it to its best at the end: the kept "
        "model is worse at the task than the final one; select by the task metric "
        "(metric_for_best_model) or keep the last checkpoint"
    )


#: Fewest training-loss points from which a short loss that ended at >= 2x its start is read as a rise
#: after a descent: one more than the 3 of a trend, so a first value, a lower point and an end are seen
#: with one point between (own f5b5-09's 3-point launch, 2.547 -> 1.077 -> 21.9, stays unjudged).
SHORT_RISE_POINTS = 4


def _short_loss_rose(tl: str, v: np.ndarray, examined: str) -> Decision | None:
    """A short training loss (:data:`SHORT_RISE_POINTS` to :data:`SHORT_LOSS_POINTS` points) that
    ended at >= 2x its first value: diverged when its last two points both are (the rise held), else
    unstable (one spike at the end). A loss that ends above where it started has undone its
    optimisation whatever the noise of a few points (OP001's 'ended above its initial value'); the
    points are too few to time the onset, so the confidence is the policy's floor. Reports
    b17-01 (LLaVA LoRA, 0.66 -> 6.66 over 7 logged dicts) and b42-03 (a pasted loss table, 4.31 ->
    1.44 -> 13.83 over 6 steps). None below :data:`SHORT_RISE_POINTS` points."""
    if v.size < SHORT_RISE_POINTS:
        return None
    v0, lo = float(v[0]), float(v.min())
    held = bool(v[-2] >= 2 * v0)
    return Decision(
        Outcome.DIVERGED if held else Outcome.UNSTABLE,
        Cause.MODEL_CONVERGENCE,
        f"The training loss rose above where it started: {tl} went {fmt(v0)} -> best {fmt(lo)} -> "
        f"{fmt(float(v[-1]))} at its end ({fmt(float(v[-1]) / v0, 3)}x its first value) over {v.size} "
        + (
            "points, its last two both above twice the start: the optimisation undid itself (a step "
            "size too large for the setup is the usual cause). "
            if held
            else "points, the last one a spike above twice the start: an unstable optimisation. "
        )
        + f"Too few points to time the onset; log the loss every few steps. Examined: {examined}.",
    )


def _healthy_loss(c: Ctx, examined: str) -> tuple[str, Decision | None]:
    """``(message, decision)``: the healthy message's opening with the training loss's first and
    last values, and an unknown decision when that loss ended at twice its first value or more on
    fewer than :data:`SHORT_LOSS_POINTS` points with no held-out series to judge by ('succeeded'
    needs positive evidence, and OP001 needs 10 points to call a divergence)."""
    run = c.run
    tl = run.key_for(Role.TRAIN_LOSS)
    msg = "No failure signature: the run finished"
    if not tl:
        return msg, None
    s = run.series(tl).finite()
    if len(s):
        msg += f" with {tl} {fmt(float(s.values[0]))} -> {fmt(float(s.values[-1]))}"
    v0, v1 = (float(s.values[0]), float(s.values[-1])) if len(s) else (0.0, 0.0)
    heldout = any(
        len(run.series(k).finite()) >= MIN_TREND_POINTS
        for k in (run.key_for(Role.VAL_LOSS), run.key_for(Role.VAL_ACCURACY))
        if k
    )
    if len(s) < SHORT_LOSS_POINTS and v0 > 0 and v1 >= 2 * v0 and not heldout:
        rose = _short_loss_rose(tl, s.values, examined)
        if rose is not None:
            return msg, rose
        return msg, Decision(
            Outcome.UNKNOWN,
            Cause.INCONCLUSIVE,
            f"Not judged: {tl} ended at {fmt(v1 / v0, 3)}x its first value ({fmt(v0)} -> {fmt(v1)}) "
            f"over only {len(s)} points, too few to tell a divergence from noise, and a loss that "
            f"rose is no evidence of success. Examined: {examined}. Log the loss every few steps.",
        )
    return msg, None


def _healthy_unended(c: Ctx, examined: str) -> Decision | None:
    """The decision for a healthy-looking record that does not show the run's end: a log that ends
    inside a progress bar with time to go (running, inconclusive: still going or killed), an excerpt of a report short of its plan
    (running: :func:`.evidence.excerpt`), a checkpoint saved mid-run (running, healthy so far), every record in one epoch with nothing saying the run ended there
    (:func:`_one_epoch_unended`), or a learning rate still warming up with no planned length
    (unknown). None when the record can be judged as ended."""
    e = c.ending
    if e.open_bar and not e.snapshot and (e.short or e.planned is None):
        # a run still going (healthy so far) and a process killed without a word (infra_runtime)
        # leave the same file, so the cause is not in it (own f6b1-02, f13b2-06, f13b2-16: labelled
        # inconclusive/infra_runtime, the curve read so far looking healthy)
        return Decision(
            Outcome.RUNNING,
            Cause.INCONCLUSIVE,
            f"Not judged to its end: the log ends inside a progress bar with time still to go "
            f"({e.open_bar.strip()}), so it was captured while the run was going or the process "
            "was killed without a word (the two end the same way; the scheduler's record tells them "
            f"apart); what was read so far looks healthy. Examined: {examined}.",
        )
    if e.excerpt and not e.interrupt and (e.short or e.missing_end_line or e.open_epoch):
        return Decision(
            Outcome.RUNNING,
            Cause.HEALTHY,
            f"Healthy so far: {e.describe()}, but {e.excerpt}, so it shows the run going, not its end. "
            f"Examined: {examined}.",
        )
    if e.snapshot and e.short:
        # a checkpoint saved mid-run shows the run training, not its end: it may have gone on or been
        # stopped after it (a Trainer killed by SIGKILL leaves exactly this), so never 'succeeded'
        return Decision(
            Outcome.RUNNING,
            Cause.HEALTHY,
            f"Healthy up to this snapshot, which is not the run's end: it holds {e.unit} "
            f"{e.reached:g} of the {e.planned:g} planned ({e.planned_key}, {100 * (e.share or 0):.0f}%). "
            "Whether the run went on to its end or stopped after it is not in this file; audit its "
            f"TensorBoard logs, tracker run or console log for the end. Examined: {examined}.",
        )
    if (
        (e.planned is None or _one_epoch_plan_unshown(c))
        and not e.early_stopped
        and c.run.status is not RunStatus.FINISHED
    ):
        one_epoch = _one_epoch_unended(c, examined)
        if one_epoch is not None:
            return one_epoch
    if e.in_warmup and e.planned is None:
        # a warm-up is the first phase of a schedule, never its end: a learning rate still rising at
        # the last logged step shows the schedule's main phase was never reached, so the run stopped
        # (or was still going when captured) at its start, whatever its tracker status says (own
        # corpus mlf03: 6 points, iterations 10-60 of a warmup, FINISHED in MLflow because its exit
        # handler marks any ended process so; f16b2-14: MAE fine-tune records at epochs 0-5, train_lr
        # still rising). Who stopped it is not in the data, as for a plan shortfall (V17).
        return Decision(
            Outcome.CRASHED,
            Cause.INCONCLUSIVE,
            f"The run stopped inside its learning-rate warm-up: {e.in_warmup}. A warm-up is the first "
            "phase of a schedule, so the run ended (or was still going when this was captured) before "
            "its main phase; nothing in the data says who stopped it or why (a SIGKILL, a scheduler's "
            "limit or a person leave no line). What was read looked healthy up to there. Examined: "
            f"{examined}. The scheduler's record or the console says why it stopped.",
        )
    return _levelled_unended(c, examined)


def _unmoved_heldout(c: Ctx, examined: str) -> Decision | None:
    """Underfit, model_convergence: a held-out accuracy that repeated a value at consecutive
    evaluations and never rose beyond noise above its first value, while the training loss fell less
    than a fifth (:func:`.levelled.unmoved_accuracy`). Not read on a text pasted in a report (a paste
    is the slice its reporter chose to show)."""
    from .levelled import unmoved_accuracy
    from .statements import is_report

    if c.ending.excerpt or is_report(c.run.params):
        return None
    u = unmoved_accuracy(c.run)
    if u is None:
        return None
    return Decision(
        Outcome.UNDERFIT,
        Cause.MODEL_CONVERGENCE,
        f"Nothing was learned after the first evaluation: {u.describe()}. The same accuracy on the same "
        "held-out set means the model's predictions there did not change (a constant or near-constant "
        "predictor, most often the majority class). Compare it with the majority class's share and "
        f"check the learning rate, the labels and the frozen layers. Examined: {examined}.",
    )


def _levelled_unended(c: Ctx, examined: str) -> Decision | None:
    """Plateaued, inconclusive: the training loss is the run's only learning signal, nothing shows
    the run's end (no planned length, early stop, finished status or end-of-training line), the loss
    is not one player's in an adversarial game, it does not still fall at pace
    (:func:`still_falling_at_pace`), and its second half held within noise of its midpoint level
    (:func:`.levelled.levelled_off`). A levelled training loss with no held-out figure and no end
    shows the training stopped improving, not that it succeeded. Not read on a text pasted in a
    report (:func:`.statements.is_report`, or an elided paste, :attr:`.evidence.Ending.excerpt`): a
    paste is the slice of a run its reporter chose to show, not the run's course (reports b12-04,
    b35-09: eleven and twelve loss lines of healthy runs pasted to ask about speed and an early drop)."""
    from .levelled import levelled_off, only_training_loss
    from .statements import is_report

    run, e = c.run, c.ending
    if (
        e.excerpt
        or is_report(run.params)
        or e.planned is not None
        or e.early_stopped
        or run.status is RunStatus.FINISHED
        or any(NORMAL_END.search(ln.text) for ln in run.console[-300:])
    ):
        return None
    tk = only_training_loss(c.basis.signals)
    if tk is None or _adversarial_player(tk) or still_falling_at_pace(run, tk) is not None:
        return None
    lev = levelled_off(run, tk)
    if lev is None:
        return None
    return Decision(
        Outcome.PLATEAUED,
        Cause.INCONCLUSIVE,
        f"The training loss levelled off: {lev.describe()}. It is the run's only learning signal (no "
        "held-out loss, accuracy or task score) and nothing shows the run's end (no planned length, "
        "end-of-training line or finished status), so whether that level is a good fit or a stall, and "
        "whether the run was meant to stop there, is not in the data; no success can be shown. "
        f"Examined: {examined}. Log a held-out metric and the planned length.",
    )


def epoch_end_missing(run: RunData) -> str | None:
    """The first Lightning ``<name>_step`` key whose ``<name>_epoch`` twin was never logged, else
    None. Lightning names a value logged with both ``on_step`` and ``on_epoch`` ``<name>_step`` at
    each logged step and ``<name>_epoch`` at each epoch's end (``LightningModule.log``: "if both are
    True, the logged names are suffixed with _step and _epoch"), so a ``_step`` series with no
    ``_epoch`` twin shows that no epoch ever ended (own corpus f16b2-03: a CSVLogger with 138
    ``train_loss_step`` rows in epoch 0 and no ``train_loss_epoch`` or validation row)."""
    keys = set(run.metrics.keys)
    for k in run.metrics.keys:
        if k.endswith("_step") and len(k) > len("_step"):
            twin = k[: -len("_step")] + "_epoch"
            if twin not in keys and run.metrics.count(k) >= MIN_TREND_POINTS:
                return k
    return None


def _one_epoch_plan_unshown(c: Ctx) -> bool:
    """True when the plan is one epoch (``max_epochs: 1``, ``num_train_epochs: 1``) and no held-out
    record comes at or after the last training record. A 0-based epoch counter at 0 counts as one
    epoch reached (:func:`evidence._reached_epochs` errs towards complete), so such a plan is
    'reached' by any record of its epoch; what shows that epoch ended is the evaluation a loop runs
    at its end (Lightning, Keras and the HF Trainer evaluate after the epoch), and without one a run
    cut inside its only epoch reads the same (own corpus f12b1-03: Lightning ``max_epochs: 1``, 156
    training rows in epoch 0 and no validation row)."""
    e, run = c.ending, c.run
    if e.unit != "epoch" or e.planned is None or e.planned > 1:
        return False
    tk = run.key_for(Role.TRAIN_LOSS)
    t = run.series(tk).finite() if tk else None
    if t is None or not len(t):
        return False
    last = float(t.steps.max())
    for role in (Role.VAL_LOSS, Role.VAL_ACCURACY):
        k = run.key_for(role)
        if k:
            v = run.series(k).finite()
            if len(v) and float(v.steps.max()) >= last:
                return False
    return True


def _one_epoch_unended(c: Ctx, examined: str) -> Decision | None:
    """Unknown when the whole record sits inside one epoch (the counter never advanced, >= 3
    points) and no end-of-training line is in the last 300 console lines: a one-epoch run that
    finished and one cut short look the same (own corpus log16: an LLM pretraining log 'ep: 0,
    batch: 20 ... 260' that simply stops, loss still falling fast). The caller has checked that
    no planned length (other than one epoch with no evaluation after the training records:
    :func:`_one_epoch_plan_unshown`), early stop or finished status says the run ended."""
    run = c.run
    ek = run.key_for(Role.EPOCH)
    ev = run.series(ek).finite().values if ek else None
    text = [ln.text for ln in run.console[-300:]]
    if (
        ev is not None
        and len(ev) >= 3
        and float(ev.min()) == float(ev.max())
        and not any(NORMAL_END.search(t) for t in text)
    ):
        e = c.ending
        twinless = epoch_end_missing(run)
        if twinless is not None:
            # the record itself shows the first epoch never ended: stopped inside it (or still
            # going when captured), the reason not in the data, as for a plan shortfall (V17)
            return Decision(
                Outcome.CRASHED,
                Cause.INCONCLUSIVE,
                f"The run stopped inside its first epoch: every record is in epoch {ev[0]:g} ({ek} "
                f"never advanced), and {twinless} has no {twinless[: -len('_step')]}_epoch twin, the "
                "value Lightning logs at each epoch's end, so no epoch ever ended. Nothing in the data "
                "says who stopped it or why (a SIGKILL, a scheduler's limit or a person leave no "
                f"line); what was read looked healthy up to there. Examined: {examined}.",
            )
        if e.planned is not None:
            return Decision(
                Outcome.UNKNOWN,
                Cause.INCONCLUSIVE,
                f"Not judged: the plan is one epoch ({e.planned_key}={e.planned:g}) and every record is "
                f"in epoch {ev[0]:g} ({ek} never advanced), with no evaluation after the last training "
                "record, no end-of-training line and no finished status: whether that epoch ended or "
                f"the run was cut inside it is not in the data; what was read looked healthy. Examined: "
                f"{examined}. Log an evaluation or the end of training.",
            )
        return Decision(
            Outcome.UNKNOWN,
            Cause.INCONCLUSIVE,
            f"Not judged: every record is in epoch {ev[0]:g} ({ek} never advanced), and no planned "
            "length, end-of-training line or finished status says the run ended there; what was "
            f"read looked healthy. Examined: {examined}. Log the planned length or the end of "
            "training.",
        )
    return None


def _end_unseen_note(c: Ctx, msg: str) -> str:
    """The healthy message reworded when nothing shows the run's end (no finished status, planned
    length, early stop or end-of-training line): a run killed (SIGKILL, a default-handled
    SIGTERM) or hung mid-way leaves the same files (TensorBoard event files and plain consoles
    have no end marker), so 'finished' is not said."""
    run, e = c.run, c.ending
    if (
        run.status is RunStatus.FINISHED
        or e.planned is not None
        or e.early_stopped
        or any(NORMAL_END.search(ln.text) for ln in run.console[-300:])
    ):
        return msg
    msg = msg.replace(
        "No failure signature: the run finished with",
        "No failure signature in the data read, which ends with",
        1,
    ).replace("No failure signature: the run finished", "No failure signature in the data read", 1)
    return msg + (
        "; nothing in it shows the run reached its planned end (no planned length, end-of-training line or "
        "finished status), and a run killed or hung mid-way reads the same: log or pass its planned length"
    )


def _reruns_note(c: Ctx) -> str:
    """The clause saying the gap to the earlier runs of the same configuration in this record
    (baseline/reruns.py, ``#run-N`` baselines) is within their noise band: not a regression; empty
    without such runs."""
    reruns = [
        f
        for f in c.by_code.get("BL001", [])
        if f.severity.rank < Severity.ERROR.rank
        and any(re.search(r"#run-\d+$", str(b)) for b in f.facts.get("baseline_ids") or [])
    ]
    if not reruns:
        return ""
    return (
        f"; against the {reruns[0].facts.get('n_baselines')} earlier run(s) of the same configuration in "
        "this record, the gap is within noise ("
        + ", ".join(
            f"{f.facts.get('metric')} {fmt(100 * float(f.facts.get('rel_delta') or 0.0), 3)}%"
            for f in reruns[:2]
        )
        + "): not a regression"
    )


def contradicting_signals(by_code: dict[str, list[Finding]]) -> list[Finding]:
    """Findings at warning or above that contradict a healthy-looking run without being a failure of
    their own: OP006 on recurring grad-norm spikes of 10x the median or more, or a grad norm that
    grew 10x over the run (the gradient says something the loss curve does not show yet)."""
    return [
        f
        for f in by_code.get("OP006", [])
        if f.severity.rank >= Severity.WARNING.rank
        and (f.facts.get("recurring_spikes") or f.facts.get("grew"))
    ]


# --- the table ----------------------------------------------------------------------------------

_E, _W, _I = "error", "warning", "info"
#: A healthy training curve for the cases: 2.0 falling and bending toward 1.5 (a straight line would be
#: V13c's unbent descent).
_LOSS = {"loss": tuple(1.5 + 0.5 * 0.95**i for i in range(50))}

POLICY: tuple[Rule, ...] = (
    Rule(
        "V00",
        "environment-fixed",
        5,
        "a non-finite loss (OP004/LI001/RT009 at warning) or an exception (RT005 at error), or no judgeable "
        "curve and no error at all (a report in prose only: the outcome its text states, a kill or memory "
        "exhaustion -> crashed, else the reporter's symptom as V19k reads it, else unknown), and the report's "
        "prose states the failure went away with only the software stack or the machine changed",
        (
            Outcome.DIVERGED,
            Outcome.CRASHED,
            Outcome.UNKNOWN,
            Outcome.PLATEAUED,
            Outcome.UNDERFIT,
            Outcome.SLOW,
        ),
        (Cause.INFRA_RUNTIME,),
        _environment_fixed,
        codes=("OP004", "LI001", "RT009", "RT005"),
        cases=(
            Case(
                "NaN gone after a PyTorch downgrade (report b8-13)",
                (("LI001", _E, {}),),
                ("diverged", "infra_runtime"),
                params={
                    "reporter": "I used CUDA 10.1 and pytorch 1.7. But the problem was resolved when I "
                    "changed 1.7 to 1.6!"
                },
            ),
            Case(
                "same training NaN on one GPU, fine on another machine (report b6-01)",
                (("RT009", _E, {}),),
                ("diverged", "infra_runtime"),
                params={
                    "reporter": "the same training gives nan on the RTX 2080 Ti but works on an Azure GPU VM"
                },
            ),
            Case(
                "a lower learning rate fixed it: not the environment",
                (("LI001", _E, {}),),
                None,
                params={
                    "reporter": "I upgraded to pytorch 1.7 and lowered the learning rate, now it works"
                },
            ),
            Case(
                "an upgrade that did not help",
                (("LI001", _E, {}),),
                None,
                params={
                    "reporter": "I switched to tensorflow 1.3 but it still gives nan, not fixed"
                },
            ),
            Case(
                "a hang in prose only, gone with another GPU driver (report b24-03)",
                (),
                ("unknown", "infra_runtime"),
                params={
                    "reporter NAME": "I got it fixed by replacing the Nvidia GPU Gaming Driver for the "
                    "Studio Driver (Version 460.89)."
                },
            ),
            Case(
                "a curve to judge: left to the curve rules",
                (),
                None,
                series=_LOSS,
                params={"reporter": "I switched to tensorflow 1.3 and now it works perfectly"},
            ),
        ),
    ),
    Rule(
        "V00b",
        "thread-confirmed-fix",
        6,
        "a non-finite loss (OP004/LI001/RT009 at warning) or no judgeable curve, and a sentence of the report's "
        "thread that states the fix and is confirmed: reduced precision turned off, a smaller / ramped "
        "learning rate, or the labels / annotations corrected with the run then working; or, with the "
        "non-finite loss or an exception, a maintainer's sentence that the code was fixed; with a non-finite "
        "loss and no confirmed fix, the cause the thread states (else the statement that settled the thread: "
        "a maintainer's explanation or the finder's) when its object is the code or a setting / the data "
        "(outcome unknown when only held-out values are non-finite: no training divergence shown); with no "
        "curve at all, the outcome the report states (a crash, else the reporter's symptom unless its "
        "sentence names a held-out split), else unknown, and a learning rate confirmed with the run's scale "
        "(GPUs, batch size) and nothing diverged -> data_config (the recipe not carried over to that scale)",
        (Outcome.DIVERGED, Outcome.UNKNOWN, Outcome.CRASHED),
        (Cause.DATA_CONFIG, Cause.MODEL_CONVERGENCE, Cause.CORRECTNESS_BUG),
        _thread_confirmed_fix,
        codes=("OP004", "LI001", "RT009"),
        cases=(
            Case(
                "fp16 NaN, the maintainer had the same issue with fp16 and recommends fp32 (report b13-05)",
                (("RT009", _E, {}),),
                ("diverged", "data_config"),
                params={
                    "maintainer NAME": "I had the exact same issue with fp16. One needs to work with smaller "
                    "learning rates. I recommend using fp32."
                },
            ),
            Case(
                "NaN gone with lr warm-up (report b8-05)",
                (("RT009", _E, {}),),
                ("diverged", "model_convergence"),
                params={
                    "maintainer NAME (PR #2, fixes #1 by implementing lr warmup)": "I've tested with your "
                    "seed and it no longer gives NaN"
                },
            ),
            Case(
                "fp16 turned off and the loss still flat: not the fix (report b7-08)",
                (("RT009", _E, {}),),
                None,
                params={
                    "reporter": "change to pytorch1.7. and change fp16 to False. the loss still keeps getting 69.0776."
                },
            ),
            Case(
                "a learning rate tried that did not help",
                (("RT009", _E, {}),),
                None,
                params={"reporter": "I tried lowering the learning rate but that did not avoid it"},
            ),
            Case(
                "candidates listed, none confirmed",
                (("RT009", _E, {}),),
                None,
                params={
                    "maintainer NAME": "it could be one of the following things: 1. Learning rate is too high "
                    "and should be reduced. 2. Your label is not binary."
                },
            ),
            Case(
                "NaN, the maintainer agrees the loss function divides by zero (report b27-08)",
                (("RT009", _E, {}),),
                ("diverged", "correctness_bug"),
                params={
                    "reporter": "I remembered that when I changed the batch size, the problem is gone.",
                    "user NAME": "There is a statistical ratio in the loss function; the count may be 0 "
                    "for a small batch. Is this correct?",
                    "maintainer NAME": "Yes, you are right.",
                },
            ),
            Case(
                "NaN, the maintainer fixed the loss code (report b8-12)",
                (("RT009", _E, {}),),
                ("diverged", "correctness_bug"),
                params={
                    "reporter": "Within less than one epoch the loss becomes NaN; lowering the learning rate "
                    "does not help either.",
                    "maintainer NAME": "This problem was fixed just now: a small constant was missing inside "
                    "log(). Pull the latest code.",
                },
            ),
            Case(
                "a loss-scale floor crash with fp32 recommended: the crash rule judges it (report b13-02)",
                (("RT006", _E, {"min_scale_error": True}),),
                None,
                params={"maintainer NAME": "You can use fp32 to train the model. It works now."},
            ),
            Case(
                "a crash, the maintainer: the fix was in the project's code (report b15-03)",
                (("RT005", _E, {}),),
                ("crashed", "correctness_bug"),
                params={
                    "maintainer NAME": "Right, forgot to update the submodule version. Should be updated now. "
                    "The fix was in EVER."
                },
            ),
            Case(
                "a changed curve while the maintainer says it is normal (report b15-13)",
                (),
                None,
                params={
                    "maintainer NAME": "It is normal.",
                    "another user": "reducing the learning rate from e-05 to e-06 made the stairs disappear.",
                },
            ),
            Case(
                "code fixed, no curve and no NaN: not judged here",
                (),
                None,
                params={
                    "maintainer NAME": "This problem was fixed just now. Pull the latest code."
                },
            ),
            Case(
                "a judgeable finite curve: left to the curve rules",
                (),
                None,
                series=_LOSS,
                params={"maintainer NAME": "I recommend using fp32. It works now."},
            ),
        ),
    ),
    Rule(
        "V01",
        "hardware-fault",
        10,
        "RT007 hardware error at error",
        (Outcome.CRASHED,),
        (Cause.INFRA_RUNTIME,),
        _hardware,
        codes=("RT007",),
        cases=(
            Case(
                "xid then OOM: the hardware fault first",
                ((("RT007", _E, {})), ("RT001", _E, {})),
                ("crashed", "infra_runtime"),
            ),
            Case("no hardware signature", (("RT001", _E, {}),), None),
        ),
    ),
    Rule(
        "V01b",
        "memory-leak",
        15,
        "RT001 OOM, RT010 killed or RT004 worker died at error (not a preemption), or an out-of-memory or kill "
        "stated in a sentence, and memory that grew over the run: a logged memory series still rising "
        "steadily in its last quarter, or a sentence stating the growth (not levelling off) or naming a leak, "
        "not explained by the job's size in the thread; or an OOM whose confirmed fix stops keeping autograd "
        "graphs (torch.no_grad(), .item(), .detach())",
        (Outcome.CRASHED,),
        (Cause.CORRECTNESS_BUG,),
        _memory_leak,
        codes=("RT001", "RT010", "RT004"),
        cases=(
            Case(
                "CUDA OOM after 2 epochs, GPU memory rising steadily (report b21-08)",
                (("RT001", _E, {}),),
                ("crashed", "correctness_bug"),
                console=(
                    "Tracking the GPU memory consumption a slow and steady increase is visible.",
                ),
            ),
            Case(
                "killed, the maintainer confirms a leak (report b21-07)",
                (("RT010", _E, {}),),
                ("crashed", "correctness_bug"),
                params={"maintainer NAME": "Yes, I also noticed the mem leak during training."},
            ),
            Case(
                "growth that levels off: a cache filling up (report b22-01)",
                (("RT010", _E, {}),),
                None,
                console=(
                    "memory usage increases continuously at the beginning of training and stabilizes at "
                    "around a certain value.",
                ),
            ),
            Case(
                "growth the maintainer explains by capacity (report b16-07)",
                (("RT004", _E, {}),),
                None,
                params={
                    "reporter": "the memory usage is increasing during the training.",
                    "maintainer NAME": "it could be due to too many processes, which results in "
                    "insufficient memory.",
                },
            ),
            Case("an OOM with no growth: capacity", (("RT001", _E, {}),), None),
            Case(
                "OOM in validate(), fixed by torch.no_grad() (report b20-04)",
                (("RT001", _E, {}),),
                ("crashed", "correctness_bug"),
                params={
                    "maintainer NAME": "you can try putting everything under the validate() function "
                    "under 'with torch.no_grad():'",
                    "reporter": "Thank you! That solved the issue.",
                },
            ),
        ),
    ),
    Rule(
        "V02",
        "infra-crash",
        20,
        "RT001 OOM, RT002 collective timeout, RT004 worker died, RT008 disk full or RT010 killed (SIGKILL, "
        "SIGBUS, a time limit, or a segmentation fault: native code crashed), at error, not explained by the "
        "job's own preemption (RT003)",
        (Outcome.CRASHED,),
        (Cause.INFRA_RUNTIME,),
        _crash_infra,
        codes=("RT001", "RT002", "RT004", "RT008", "RT010"),
        cases=(
            Case(
                "OOM in evaluation",
                (("RT001", _E, {"code_path": "evaluation"}),),
                ("crashed", "infra_runtime"),
            ),
            Case(
                "worker killed while the job is preempted",
                (("RT004", _E, {}), ("RT003", _W, {})),
                None,
            ),
        ),
    ),
    Rule(
        "V03",
        "abrupt-nonfinite",
        30,
        "OP004 with an abrupt onset (finite, not growing, then non-finite); the LR >= 10x typical without "
        "reduced precision, or an onset inside a warm-up ramp or right after an LR jump (>= 2x within the last "
        "3 LR points), makes it the learning rate; so does the absence of reduced precision (no 16-bit "
        "overflow to explain it) unless the known LR is at or below its optimiser's default (<= 1e-3 with "
        "the optimiser unknown): then a bad input batch (data_config); not when the training loss's only finite point is its first, at the "
        "run's start (V04 reads that as non-finite from the start)",
        (Outcome.DIVERGED,),
        (Cause.DATA_CONFIG, Cause.MODEL_CONVERGENCE),
        _abrupt_nonfinite,
        codes=("OP004",),
        cases=(
            Case(
                "one finite point at step 0 (1.6e24), NaN after: left to V04 (own f13b1-03)",
                (
                    ("OP004", _E, {"abrupt": True, "onset_step": 1}),
                    (
                        "LI001",
                        _E,
                        {
                            "role": "train_loss",
                            "key": "train_disc_loss",
                            "first_step": 1,
                            "finite_points_before": 1,
                        },
                    ),
                ),
                None,
                series={"train_disc_loss": (1.6e24,) + (float("nan"),) * 9},
            ),
            Case(
                "fp16 NaN after the first optimizer step",
                (("OP004", _E, {"abrupt": True}),),
                ("diverged", "data_config"),
                params={"fp16": "true", "learning_rate": "2e-5"},
            ),
            Case(
                "float64 numpy, lr 3.0, NaN from step 1",
                (("OP004", _E, {"abrupt": True}),),
                ("diverged", "model_convergence"),
                params={"lr": "3.0", "dtype": "float64"},
            ),
            Case("gradual onset", (("OP004", _E, {"abrupt": False}),), None),
            Case(
                "fp32, LR unknown, abrupt NaN: the LR first",
                (("OP004", _E, {"abrupt": True}),),
                ("diverged", "model_convergence"),
            ),
            Case(
                "fp32, LR 0.03 with the optimiser unknown (above Adam's default): the LR first",
                (("OP004", _E, {"abrupt": True}),),
                ("diverged", "model_convergence"),
                params={"learning_rate": "0.03"},
            ),
            Case(
                "fp32, Adam at 1e-3 (its default), abrupt NaN: a bad batch (newuser12 one NaN cell)",
                (("OP004", _E, {"abrupt": True}),),
                ("diverged", "data_config"),
                params={"lr": "0.001", "optimizer": "Adam"},
            ),
            Case(
                "fp32, LR 2e-5 (below every default), abrupt NaN: a bad batch",
                (("OP004", _E, {"abrupt": True}),),
                ("diverged", "data_config"),
                params={"learning_rate": "2e-5"},
            ),
            Case(
                "bf16, NaN at step 10 inside a linear warm-up",
                (("OP004", _E, {"abrupt": True, "onset_step": 10}),),
                ("diverged", "model_convergence"),
                params={"precision": "bf16-mixed"},
                series={"lr": (0.1, 333.0, 666.0, 1000.0)},
            ),
            Case(
                "fp16, NaN right after a 1e5x step-schedule jump",
                (("OP004", _E, {"abrupt": True, "onset_step": 15}),),
                ("diverged", "model_convergence"),
                params={"fp16": "true", "learning_rate": "0.05"},
                series={"lr": tuple([0.05] * 14 + [5000.0] * 5)},
            ),
            Case(
                "fp16, NaN with a decaying LR",
                (("OP004", _E, {"abrupt": True, "onset_step": 12}),),
                ("diverged", "data_config"),
                params={"fp16": "true", "learning_rate": "2e-5"},
                series={"lr": tuple(2e-5 * 0.9**i for i in range(20))},
            ),
        ),
    ),
    Rule(
        "V04",
        "nonfinite-loss",
        40,
        "LI001 on the training loss: grown >= 2x (or OP001) before, or the onset inside a warm-up ramp or right "
        "after an LR jump -> LR divergence; non-finite from the first "
        "step, or after one finite point at the run's start -> inputs/init, or the LR when >= 10x typical "
        "without reduced precision, or the first updates (model_convergence) when that one point is an ordinary "
        "loss (<= 100) or comes after >= 2 unrecorded updates at a rate at or above typical, without reduced "
        "precision (from the first logged epoch, the LR not 10x typical: the LR when an accuracy "
        "differs in epoch 1 from the constant it holds after, else inputs/loss; from a first point more than "
        "two logging intervals in, without "
        "reduced precision: the LR, the updates before it unseen; from a first logged step after >= 2 unrecorded "
        "updates with no learning rate in the data and no reduced precision: inconclusive); finite then abrupt -> numerics / bad batch with reduced "
        "precision in use, the learning rate without",
        (Outcome.DIVERGED,),
        (Cause.MODEL_CONVERGENCE, Cause.DATA_CONFIG, Cause.INCONCLUSIVE),
        _nonfinite,
        codes=("LI001", "OP001"),
        cases=(
            Case(
                "grew then NaN",
                (("LI001", _E, {"role": "train_loss", "first_step": 40, "growth_before": 5.0}),),
                ("diverged", "model_convergence"),
            ),
            Case(
                "NaN from step 1 at lr 3.0 (SGD)",
                (
                    (
                        "LI001",
                        _E,
                        {"role": "train_loss", "first_step": 1, "finite_points_before": 0},
                    ),
                ),
                ("diverged", "model_convergence"),
                params={"lr": "3.0", "optimizer": "SGD"},
            ),
            Case(
                "NaN from step 1 at lr 1e-4",
                (
                    (
                        "LI001",
                        _E,
                        {"role": "train_loss", "first_step": 1, "finite_points_before": 0},
                    ),
                ),
                ("diverged", "data_config"),
                params={"lr": "1e-4"},
            ),
            Case(
                "NaN from the first logged epoch, nothing else logged, LR unknown (own f13b1-05)",
                (
                    (
                        "LI001",
                        _E,
                        {"role": "train_loss", "first_step": 0, "finite_points_before": 0},
                    ),
                ),
                ("diverged", "data_config"),
                params={"log.step_axis": "epoch"},
            ),
            Case(
                "NaN from the first logged epoch, accuracy 0.136 in epoch 1 then 0.1035 (keras-lr10)",
                (
                    (
                        "LI001",
                        _E,
                        {"role": "train_loss", "first_step": 0, "finite_points_before": 0},
                    ),
                ),
                ("diverged", "model_convergence"),
                params={"log.step_axis": "epoch"},
                series={"accuracy": (0.136, 0.1035, 0.1035, 0.1035)},
            ),
            Case(
                "one finite point at step 0, NaN after, typical LR (report b9-02)",
                (
                    (
                        "LI001",
                        _E,
                        {
                            "role": "train_loss",
                            "key": "loss",
                            "first_step": 1,
                            "finite_points_before": 1,
                            "n_nonfinite": 5,
                        },
                    ),
                ),
                ("diverged", "data_config"),
                series={"loss": (2.3e11,) + (float("nan"),) * 5},
                params={"lr": "1e-4"},
            ),
            Case(
                "finite then NaN, fp16",
                (
                    (
                        "LI001",
                        _E,
                        {
                            "role": "train_loss",
                            "first_step": 300,
                            "n_nonfinite": 5,
                            "finite_points_before": 30,
                            "last_finite": 0.5,
                        },
                    ),
                ),
                ("diverged", "data_config"),
                params={"fp16": "true"},
            ),
            Case(
                "finite then NaN, no reduced precision",
                (
                    (
                        "LI001",
                        _E,
                        {
                            "role": "train_loss",
                            "first_step": 300,
                            "n_nonfinite": 5,
                            "finite_points_before": 30,
                            "last_finite": 0.5,
                        },
                    ),
                ),
                ("diverged", "model_convergence"),
            ),
            Case("NaN in a validation metric only", (("LI001", _E, {"role": "val_loss"}),), None),
        ),
    ),
    Rule(
        "V05",
        "loss-scale-collapse",
        50,
        "RT006 at error, or OP007 with a decreasing scale (precision evidence in itself)",
        (Outcome.DIVERGED, Outcome.CRASHED),
        (Cause.DATA_CONFIG, Cause.MODEL_CONVERGENCE),
        _fp16_overflow,
        codes=("RT006", "OP007"),
        cases=(
            Case("40 consecutive skips", (("RT006", _E, {}),), ("diverged", "data_config")),
            Case(
                "scale hit its floor",
                (("RT006", _E, {"min_scale_error": True}),),
                ("crashed", "data_config"),
            ),
            Case("constant scale 1.0 (bf16)", (("OP007", _E, {"decreases": False}),), None),
        ),
    ),
    Rule(
        "V05b",
        "transient-nonfinite",
        55,
        "LI001 on the training loss with < 50% of the points after the onset non-finite and a finite last "
        "point (the loss came back), unless an accuracy, score or reward rose from the onset to its best",
        (Outcome.UNSTABLE,),
        (Cause.INCONCLUSIVE,),
        _transient,
        codes=("LI001",),
        cases=(
            Case(
                "3 NaN of 133 after onset, ends finite",
                (
                    (
                        "LI001",
                        _E,
                        {
                            "role": "train_loss",
                            "key": "loss",
                            "n_nonfinite": 2,
                            "n_points": 50,
                            "index": 10,
                            "first_step": 10,
                            "all_after_nonfinite": False,
                        },
                    ),
                ),
                ("unstable", "inconclusive"),
                series={"loss": tuple(float("nan") if i in (10, 20) else 1.0 for i in range(50))},
            ),
            Case(
                "NaN to the end",
                (
                    (
                        "LI001",
                        _E,
                        {
                            "role": "train_loss",
                            "key": "loss",
                            "n_nonfinite": 40,
                            "n_points": 50,
                            "index": 10,
                            "all_after_nonfinite": True,
                        },
                    ),
                ),
                None,
            ),
        ),
    ),
    Rule(
        "V05c",
        "nonfinite-grad-norm",
        57,
        "gradient norm non-finite at every logged point from its onset to the end (2+ points), the training "
        "loss finite but 10x its last value at the onset or exactly 0 at the end -> diverged (data_config with "
        "reduced precision, model_convergence without)",
        (Outcome.DIVERGED,),
        (Cause.DATA_CONFIG, Cause.MODEL_CONVERGENCE),
        _nonfinite_grad_norm,
        cases=(
            Case(
                "loss 3.6 -> 63 -> 0.0 with a NaN grad norm from the jump on",
                (),
                ("diverged", "model_convergence"),
                series={
                    "loss": (3.6, 3.5, 3.4, 63.4, 0.0),
                    "grad_norm": (7.3, 7.0, 6.8, float("nan"), float("nan")),
                },
            ),
            Case(
                "one NaN grad norm, finite again (an fp16 skip)",
                (),
                None,
                series={
                    "loss": (3.6, 3.5, 3.4, 3.3, 3.2),
                    "grad_norm": (7.3, float("nan"), 6.8, 6.5, 6.4),
                },
            ),
        ),
    ),
    Rule(
        "V06",
        "divergence",
        60,
        "OP001 at error, unless an accuracy, score or reward rose from the onset to its best at the end; "
        "on a training loss that takes both signs (a surrogate, not minimised towards zero) the task metric "
        "decides: fell beyond its noise -> regressed, never rose beyond it -> plateaued, rose and held -> "
        "the rules below",
        (Outcome.DIVERGED, Outcome.REGRESSED, Outcome.PLATEAUED),
        (Cause.MODEL_CONVERGENCE,),
        _divergence,
        codes=("OP001",),
        cases=(
            Case("loss 10x its best", (("OP001", _E, {}),), ("diverged", "model_convergence")),
            Case(
                "GRPO loss of both signs, reward within its noise (own corpus f11b2-11)",
                (("OP001", _E, {"key": "loss"}),),
                ("plateaued", "model_convergence"),
                series={
                    "loss": (-0.05, 0.02, -0.1, 0.03, -0.02, 0.01, 0.0001, 0.0002, 0.0001, 0.0002),
                    "reward": (0.2, 0.9, -0.1, 0.8, 0.1, 1.0, 0.0, 0.7, 0.3, 0.5),
                },
            ),
            Case(
                "surrogate loss, reward rose and held: the rules below judge the run",
                (("OP001", _E, {"key": "loss"}),),
                None,
                series={
                    "loss": (-0.05, 0.02, -0.1, 0.03, -0.02, 0.01, 0.0001, 0.0002, 0.0001, 0.0002),
                    "reward": (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.7, 0.71),
                },
            ),
            Case(
                "surrogate loss, reward rose then fell back",
                (("OP001", _E, {"key": "loss"}),),
                ("regressed", "model_convergence"),
                series={
                    "loss": (-0.05, 0.02, -0.1, 0.03, -0.02, 0.01, 0.0001, 0.0002, 0.0001, 0.0002),
                    "reward": (0.0, 0.3, 0.6, 0.9, 0.91, 0.9, 0.5, 0.2, 0.1, 0.1),
                },
            ),
        ),
    ),
    Rule(
        "V06b",
        "nonfinite-validation",
        65,
        "LI001 on the validation loss, non-finite from its onset to the end, with a finite training loss: "
        "training loss risen >= 1.5x its minimum over the last quarter -> model_convergence, else with reduced "
        "precision in use data_config, else inconclusive",
        (Outcome.DIVERGED,),
        (Cause.MODEL_CONVERGENCE, Cause.DATA_CONFIG, Cause.INCONCLUSIVE),
        _nonfinite_validation,
        codes=("LI001",),
        cases=(
            Case(
                "val NaN to the end, train still falling, fp16 named (report b11-06)",
                (
                    (
                        "LI001",
                        _E,
                        {
                            "role": "val_loss",
                            "key": "val/loss",
                            "first_step": 128,
                            "n_nonfinite": 1,
                            "n_points": 1,
                            "all_after_nonfinite": True,
                        },
                    ),
                ),
                ("diverged", "data_config"),
                series=_LOSS,
                params={"task": "supervised fine-tuning with the HF Trainer in fp16, 5 epochs"},
            ),
            Case(
                "val inf from step 128, train 0.06 -> 0.35",
                (
                    (
                        "LI001",
                        _E,
                        {
                            "role": "val_loss",
                            "key": "val/loss",
                            "first_step": 128,
                            "n_nonfinite": 5,
                            "n_points": 6,
                            "all_after_nonfinite": True,
                        },
                    ),
                ),
                ("diverged", "model_convergence"),
                series={
                    "loss": tuple([1.1, 0.5, 0.2, 0.1, 0.06] + [0.06 + 0.01 * i for i in range(30)])
                },
            ),
            Case(
                "val NaN to the end, train still falling",
                (
                    (
                        "LI001",
                        _E,
                        {
                            "role": "val_loss",
                            "key": "val/loss",
                            "first_step": 40,
                            "n_nonfinite": 3,
                            "n_points": 8,
                            "all_after_nonfinite": True,
                        },
                    ),
                ),
                ("diverged", "inconclusive"),
                series=_LOSS,
            ),
            Case(
                "one NaN evaluation, later ones finite",
                (
                    (
                        "LI001",
                        _E,
                        {
                            "role": "val_loss",
                            "key": "val/loss",
                            "first_step": 40,
                            "n_nonfinite": 1,
                            "n_points": 8,
                            "all_after_nonfinite": False,
                        },
                    ),
                ),
                None,
                series=_LOSS,
            ),
            Case(
                "training loss non-finite too (V04's)",
                (
                    ("LI001", _E, {"role": "val_loss", "all_after_nonfinite": True}),
                    ("LI001", _E, {"role": "train_loss"}),
                ),
                None,
            ),
        ),
    ),
    Rule(
        "V06d",
        "risen-then-frozen",
        66,
        "a finite training loss (>= 6 points) that ended >= 1.1x its first point and repeats one level "
        "(within 1e-4 of it, printed precisely enough) at its last >= 4 points: an update moved the model "
        "to a fixed point worse than its start",
        (Outcome.DIVERGED,),
        (Cause.MODEL_CONVERGENCE,),
        _risen_then_frozen,
        cases=(
            Case(
                "Keras warm-up to lr 200: loss 8.417 -> 12.404 -> 12.4978 at every later epoch",
                (),
                ("diverged", "model_convergence"),
                series={
                    "loss": (8.417044639587402, 12.404013633728027)
                    + (12.49781608581543, 12.497817993164062) * 5,
                    "accuracy": (0.3046875, 0.23046875) + (0.224609375,) * 10,
                },
            ),
            Case(
                "a loss that rose and keeps moving (noise, not frozen)",
                (),
                None,
                series={"loss": (1.0, 1.3, 1.25, 1.31, 1.28, 1.33, 1.27, 1.3)},
            ),
            Case(
                "a loss that fell and froze (OP003's frozen plateau, not this rule)",
                (),
                None,
                series={"loss": (2.3, 1.1, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9)},
            ),
        ),
    ),
    Rule(
        "V06c",
        "blown-up-start",
        67,
        "a classification run (an accuracy logged) whose first training-loss point is >= 1e6 and whose "
        "later points sit >= 1000x lower (median); with 1-2 points, every point >= 10x the uniform guess's "
        "loss (ln K, else ln 100,000) and the LR >= 10x typical",
        (Outcome.DIVERGED,),
        (Cause.MODEL_CONVERGENCE,),
        _blown_up_start,
        cases=(
            Case(
                "two points, cross-entropy 6776 and 6488 at lr 2.0, accuracy 0.06",
                (),
                ("diverged", "model_convergence"),
                series={"loss": (6776.2, 6487.71), "acc": (0.0, 0.06)},
                params={"lr": "2.0"},
            ),
            Case(
                "two points, loss 6776 at a typical lr (a summed loss)",
                (),
                None,
                series={"loss": (6776.2, 6487.71), "acc": (0.0, 0.06)},
                params={"lr": "1e-3"},
            ),
            Case(
                "Keras SGD lr 25: epoch-1 loss 1.9e16, then 10-20, accuracy at chance",
                (),
                ("diverged", "model_convergence"),
                series={
                    "loss": (1.9e16, 14.0, 19.0, 12.0, 16.0),
                    "accuracy": (0.5, 0.49, 0.51, 0.5, 0.5),
                },
            ),
            Case(
                "regression on raw targets: MSE 4e10 -> 2e9, no accuracy",
                (),
                None,
                series={"loss": (4e10, 1e10, 5e9, 3e9, 2e9)},
            ),
        ),
    ),
    Rule(
        "V07a",
        "nonfinite-recovered-stated",
        68,
        "RT009 the only finding at error, no loss history (< 3 finite training-loss points), and a sentence "
        "of the thread that the symptom went away by itself or did not affect the training (not a question, "
        "not followed by 'still') -> running (no final tracker status), else unknown; healthy",
        (Outcome.RUNNING, Outcome.UNKNOWN),
        (Cause.HEALTHY,),
        _nan_recovered_stated,
        codes=("RT009",),
        cases=(
            Case(
                "AMP NaN that does not affect the training (report b14-11)",
                (("RT009", _E, {}),),
                ("unknown", "healthy"),
                params={
                    "reporter NAME": "Thanks, I find it does not affect the training actually."
                },
            ),
            Case(
                "a NaN the thread does not clear",
                (("RT009", _E, {}),),
                None,
                params={"reporter NAME": "The loss is still NaN after 1000 steps."},
            ),
        ),
    ),
    Rule(
        "V07",
        "nonfinite-message",
        70,
        "RT009 at error without a training-loss history (< 3 finite points): the learning rate first "
        "with no reduced precision in use, else the precision (data_config); with a finite loss series whose "
        "learning rate rose at every logged point to the end (inside its warm-up), no reduced precision: the "
        "learning rate",
        (Outcome.DIVERGED,),
        (Cause.MODEL_CONVERGENCE, Cause.DATA_CONFIG),
        _nan_message,
        codes=("RT009",),
        cases=(
            Case(
                "NaN message, no loss history, fp32",
                (("RT009", _E, {}),),
                ("diverged", "model_convergence"),
            ),
            Case(
                "NaN message, no loss history, fp16",
                (("RT009", _E, {}),),
                ("diverged", "data_config"),
                params={"fp16": "true"},
            ),
            Case(
                "NaN message after one logged record, autocast fp16 stated (report b10-08)",
                (("RT009", _E, {}),),
                ("diverged", "data_config"),
                params={
                    "task": "fine-tuning with torchrun, mixed precision via torch autocast (fp16)"
                },
                series={"loss": (0.2606,)},
            ),
            Case("NaN message with a loss history", (("RT009", _E, {}),), None, series=_LOSS),
            Case(
                "NaN message after a finite window inside the warm-up (report b7-12)",
                (("RT009", _E, {}),),
                ("diverged", "model_convergence"),
                series={
                    "loss": (1.62, 1.57, 1.62, 1.69, 1.65),
                    "lr": (0.0066, 0.0068, 0.0070, 0.0072, 0.0074),
                },
            ),
        ),
    ),
    Rule(
        "V07c",
        "launch-failed",
        79,
        "RT011 at error (the console ends on bash's 'unbound variable' / 'command not found' / 'No such "
        "file or directory' / 'Permission denied', CPython's 'can't open file' or argparse's 'PROG: error: "
        "...') and no judgeable training signal: the launch failed before training",
        (Outcome.CRASHED,),
        (Cause.DATA_CONFIG,),
        _launch_failed,
        codes=("RT011",),
        cases=(
            Case(
                "set -u launch script, PYTHONPATH unset (own f13b1-13)",
                (("RT011", _E, {"signature": "shell-unbound-variable"}),),
                ("crashed", "data_config"),
            ),
            Case(
                "argparse error after an earlier launch that trained: left to the curve rules",
                (("RT011", _E, {"signature": "argparse-error"}),),
                None,
                series=_LOSS,
            ),
        ),
    ),
    Rule(
        "V08",
        "exception",
        80,
        "RT005 traceback at error (not a preemption): KeyboardInterrupt/SystemExit/SignalException or a signal "
        "named in the message -> stopped, cause inconclusive (a signal is never a code bug); a launcher's "
        "ChildFailedError without the worker's error -> inconclusive; a non-finite check that raised (a nan "
        "signature in the message: anomaly mode) -> data_config; an exception that names its cause "
        "(mlaudit_core/exception_causes.py: data errors -> data_config, environment/network -> infra_runtime); "
        "an exception that names no cause and is no programming error's class (Py4JJavaError, a RuntimeError "
        "that a child failed) in a report that states the process was killed or ran out of memory -> "
        "infra_runtime; code errors -> correctness_bug; OSError/MemoryError/TimeoutError -> infra_runtime",
        (Outcome.CRASHED,),
        (Cause.CORRECTNESS_BUG, Cause.INFRA_RUNTIME, Cause.DATA_CONFIG, Cause.INCONCLUSIVE),
        _crash_other,
        codes=("RT005",),
        cases=(
            Case(
                "shape mismatch",
                (
                    (
                        "RT005",
                        _E,
                        {"exception_type": "RuntimeError", "exception_message": "shape mismatch"},
                    ),
                ),
                ("crashed", "correctness_bug"),
            ),
            Case(
                "OSError",
                (("RT005", _E, {"exception_type": "OSError"}),),
                ("crashed", "infra_runtime"),
            ),
            Case(
                "a wrapper exception, the thread states the process was killed (report b29-04)",
                (
                    (
                        "RT005",
                        _E,
                        {
                            "exception_type": "Py4JJavaError",
                            "exception_message": "An error occurred while calling o663.fit.",
                        },
                    ),
                ),
                ("crashed", "infra_runtime"),
                params={
                    "maintainer": "The message means that this process has been killed (a SIGKILL signal "
                    "has been sent to it)."
                },
            ),
            Case(
                "an exception that names its cause (an undecodable image: data)",
                (
                    (
                        "RT005",
                        _E,
                        {
                            "exception_type": "PIL.UnidentifiedImageError",
                            "exception_cause": "data_config",
                            "exception_meaning": "an image file of the data set does not decode",
                        },
                    ),
                ),
                ("crashed", "data_config"),
            ),
            Case(
                "KeyboardInterrupt",
                (("RT005", _E, {"exception_type": "KeyboardInterrupt"}),),
                ("crashed", "inconclusive"),
            ),
            Case(
                "SIGTERM by the scheduler",
                (("RT005", _E, {"exception_type": "KeyboardInterrupt"}), ("RT003", _W, {})),
                None,
            ),
            Case(
                "torchrun agent got SIGTERM (SignalException, RT003 fired)",
                (
                    (
                        "RT005",
                        _E,
                        {
                            "exception_type": "torch.distributed.elastic.multiprocessing.api.SignalException",
                            "exception_message": "Process 21354 got signal: 15",
                        },
                    ),
                    ("RT003", _W, {}),
                ),
                None,
            ),
            Case(
                "a signal named in the exception, no RT003",
                (
                    (
                        "RT005",
                        _E,
                        {
                            "exception_type": "RuntimeError",
                            "exception_message": "Process 7 got signal: 2",
                        },
                    ),
                ),
                ("crashed", "inconclusive"),
            ),
            Case(
                "an audio ValueError that merely says 'signal 1' is a code error",
                (
                    (
                        "RT005",
                        _E,
                        {
                            "exception_type": "ValueError",
                            "exception_message": "Input signal 1 has the wrong length",
                        },
                    ),
                ),
                ("crashed", "correctness_bug"),
            ),
            Case(
                "anomaly mode raised on a NaN gradient, loss finite before",
                (
                    (
                        "RT005",
                        _E,
                        {
                            "exception_type": "RuntimeError",
                            "exception_message": "Function 'PowBackward0' returned nan values in its 0th output.",
                        },
                    ),
                ),
                ("crashed", "data_config"),
                series=_LOSS,
            ),
            Case(
                "ChildFailedError without the worker's traceback",
                (
                    (
                        "RT005",
                        _E,
                        {
                            "exception_type": "torch.distributed.elastic.multiprocessing.errors.ChildFailedError",
                            "exception_message": "",
                        },
                    ),
                ),
                ("crashed", "inconclusive"),
            ),
        ),
    ),
    Rule(
        "V08b",
        "zero-loss",
        85,
        "training loss exactly 0.0 at its last 3+ points (exactly 0 from the first point: nothing learned), "
        "not a printed loss that keeps coming back to its last printed digit after its first zero (rounded "
        "away, not zero); "
        "grown >= 100x its best over the last points before the zeros -> diverged (a tracker storing NaN/inf as "
        "0.0, ClearML's default); from >= 0.01 to exactly 0 in one logged interval with reduced precision in "
        "use -> diverged, data_config; not when the run logs the reward it trains a policy from (GRPO's "
        "loss is 0 by construction)",
        (Outcome.PLATEAUED, Outcome.SUCCEEDED, Outcome.DIVERGED),
        (Cause.DATA_CONFIG, Cause.MODEL_CONVERGENCE),
        _zero_loss,
        cases=(
            Case(
                "LoRA loss exactly zero throughout",
                (),
                ("plateaued", "data_config"),
                series={"loss": (0.0,) * 20},
            ),
            Case(
                "templated data: 0.85 -> 0",
                (),
                ("succeeded", "data_config"),
                series={"loss": (0.85, 0.4, 0.1, 0.0, 0.0, 0.0)},
            ),
            Case(
                "HF nan filter zeros between spikes",
                (),
                None,
                series={"loss": (10.3, 0.0, 19.9, 0.0, 12.0, 0.0, 15.0)},
            ),
            Case(
                "ClearML: grew to 1e29, then NaN stored as 0.0",
                (),
                ("diverged", "model_convergence"),
                series={"loss": (2.0, 0.5, 0.3, 0.2, 160.0, 7e8, 1e29, 0.0, 0.0, 0.0, 0.0)},
            ),
        ),
    ),
    Rule(
        "V08c",
        "logged-zeros",
        86,
        "LI006 at error with a data signature (validation losses exactly 0 while another validation "
        "component is not, every task metric exactly 0, or a training loss component exactly 0 while the "
        "others move): task metrics all 0 -> underfit (not when only the task metrics are 0 in a run stopped "
        "before its planned end), else the first learning rule after this one, else succeeded",
        (Outcome.UNDERFIT, Outcome.SUCCEEDED) + _LEARNING_OUTCOMES,
        (Cause.DATA_CONFIG,),
        _logged_zeros,
        codes=("LI006",),
        cases=(
            Case(
                "YOLOv5 val box/cls losses 0, mAP 0 (no validation labels)",
                (("LI006", _E, {"kind": "empty_validation", "all_metrics_zero": True}),),
                ("underfit", "data_config"),
            ),
            Case(
                "YOLOv8 train box loss 0, every metric 0",
                (
                    ("LI006", _E, {"kind": "all_zero", "other_losses_move": True}),
                    ("LI006", _E, {"kind": "metrics_zero"}),
                    ("GE001", _E, {}),
                ),
                ("underfit", "data_config"),
            ),
            Case(
                "val losses 0, metrics fine, curves healthy",
                (("LI006", _E, {"kind": "empty_validation"}),),
                ("succeeded", "data_config"),
                series=_LOSS,
            ),
            Case(
                "HF nan-filter stand-ins",
                (("LI006", _E, {"kind": "stand_in"}),),
                None,
                series=_LOSS,
            ),
            Case(
                "every task metric 0 in a run stopped at 3 of 50 epochs",
                (("LI006", _E, {"kind": "metrics_zero"}),),
                None,
                series={"loss": (2.0, 1.9, 1.8, 1.75)},
                params={"epochs": "50", "log.step_axis": "epoch"},
            ),
            Case(
                "the only loss is 0 (no other component)",
                (("LI006", _E, {"kind": "all_zero", "other_losses_move": False}),),
                None,
            ),
        ),
    ),
    Rule(
        "V09",
        "step-reset",
        90,
        "LI002 or LI003 at error",
        (Outcome.UNSTABLE,),
        (Cause.CORRECTNESS_BUG,),
        _reset,
        codes=("LI002", "LI003"),
        cases=(
            Case(
                "step counter went 8672 -> 542",
                (("LI002", _E, {}),),
                ("unstable", "correctness_bug"),
            ),
            Case("info only", (("LI003", _I, {}),), None),
        ),
    ),
    Rule(
        "V09b",
        "metric-out-of-range",
        97,
        "LI007 at error (a bounded metric outside [0, 1], or above 100 in percent); the outcome is the first "
        "learning rule after this one that matches, else succeeded (unknown with no judgeable curve); the "
        "cause correctness_bug, data_config for an overlap score of masks (IoU, Dice: targets outside [0, 1])",
        (Outcome.SUCCEEDED, Outcome.UNKNOWN) + _LEARNING_OUTCOMES,
        (Cause.CORRECTNESS_BUG, Cause.DATA_CONFIG),
        _metric_out_of_range,
        codes=("LI007",),
        cases=(
            Case(
                "IoU -1.209, loss curve healthy",
                (("LI007", _E, {"key": "train/iou_score"}),),
                ("succeeded", "data_config"),
                series=_LOSS,
            ),
            Case(
                "Keras custom F1 1.092, run plateaued",
                (("LI007", _E, {}), ("OP003", _W, {})),
                ("plateaued", "correctness_bug"),
            ),
            Case(
                "F1 1.092, curves healthy",
                (("LI007", _E, {}),),
                ("succeeded", "correctness_bug"),
                series=_LOSS,
            ),
        ),
    ),
    Rule(
        "V09c",
        "agent-reward",
        98,
        "an agent's episode reward/return is the task metric (role validation accuracy, family reward): "
        "best stretch within noise of the first -> underfit; last stretch keeps < 40% of the best gain -> "
        "unstable; else the healthy rule's verdict; a stopped run is left to the rules below",
        (Outcome.UNDERFIT, Outcome.UNSTABLE, Outcome.SUCCEEDED, Outcome.RUNNING, Outcome.UNKNOWN),
        (Cause.MODEL_CONVERGENCE, Cause.HEALTHY, Cause.INCONCLUSIVE),
        _agent_reward,
        cases=(
            Case(
                "reward rises and stays",
                series={"rollout/ep_rew_mean": tuple(float(i) + (i % 3) for i in range(60))},
                expect=("succeeded", "healthy"),
            ),
            Case(
                "reward rises then falls back to its start",
                series={
                    "rollout/ep_rew_mean": tuple(float(min(i, 60 - i)) + (i % 3) for i in range(60))
                },
                expect=("unstable", "model_convergence"),
            ),
            Case(
                "reward flat",
                series={"rollout/ep_rew_mean": tuple(-12.0 + (i % 4) for i in range(60))},
                expect=("underfit", "model_convergence"),
            ),
            Case("no reward logged", series=_LOSS, expect=None),
        ),
    ),
    Rule(
        "V10",
        "baseline-regression",
        100,
        "BL001 at error; BL003's layer gives the cause (metric_policy -> succeeded)",
        (Outcome.REGRESSED, Outcome.SUCCEEDED),
        tuple(Cause),
        _baseline,
        codes=("BL001", "BL003"),
        cases=(
            Case("worse than baselines", (("BL001", _E, {}),), ("regressed", "model_convergence")),
            Case(
                "metric definition changed",
                (("BL001", _E, {}), ("BL003", _I, {"cause": "metric_policy"})),
                ("succeeded", "metric_policy"),
            ),
        ),
    ),
    Rule(
        "V11",
        "validation-at-chance",
        110,
        "GE004 at warning (not with GE001 when the labels carry signal; with GE002 only when the loss moved "
        "then stalled or the training accuracy rose from chance while the held-out one sat at it: overfit)",
        (Outcome.OVERFIT, Outcome.UNDERFIT, Outcome.PLATEAUED),
        (Cause.DATA_CONFIG,),
        _chance,
        codes=("GE004", "GE001", "GE002", "OP003"),
        cases=(
            Case(
                "val at chance, train plateau",
                (("GE004", _W, {"lift": 0.0}),),
                ("plateaued", "data_config"),
            ),
            Case(
                "train beat chance, overfit",
                (("GE004", _W, {"labels_carry_signal": True}), ("GE001", _E, {})),
                None,
            ),
            Case("loss never moved (LR)", (("GE004", _W, {"lift": 0.0}), ("GE002", _E, {})), None),
            Case(
                "train acc rose from chance, val acc never rose",
                (("GE004", _W, {"lift": 0.0, "memorises": True}), ("GE002", _E, {})),
                ("overfit", "data_config"),
            ),
        ),
    ),
    Rule(
        "V11b",
        "heldout-never-learned",
        112,
        "the validation loss's best within 3% above ln K (K: the class count, else the K whose ln K its first "
        "value is) over >= 4 evaluations, the training loss down to <= 50% of its first value, no held-out "
        "accuracy lift >= 25%, no training accuracy >= 25% above chance at its first evaluation",
        (Outcome.OVERFIT, Outcome.PLATEAUED),
        (Cause.DATA_CONFIG,),
        _heldout_never_learned,
        codes=("GE001",),
        cases=(
            Case(
                "Keras on permuted labels: val loss 0.704 -> best 0.695 (ln 2), train 0.73 -> 0.16",
                (("GE001", _E, {}),),
                ("overfit", "data_config"),
                series={
                    "loss": (0.73, 0.68, 0.6, 0.5, 0.4, 0.3, 0.2, 0.16),
                    "val_loss": (0.704, 0.701, 0.717, 0.695, 0.75, 0.8, 0.9, 1.0),
                },
            ),
            Case(
                "overfit after learning: val loss 0.70 -> 0.45 -> 0.60",
                (("GE001", _E, {}),),
                None,
                series={
                    "loss": (0.73, 0.6, 0.5, 0.4, 0.3, 0.2, 0.15, 0.1),
                    "val_loss": (0.70, 0.6, 0.5, 0.45, 0.5, 0.55, 0.58, 0.6),
                },
            ),
        ),
    ),
    Rule(
        "V11c",
        "nothing-learned-to-overfit",
        115,
        "GE001 at error or GE005 at warning while every held-out task score (accuracy, mAP, F1 as a fraction) "
        "stayed at or under 1% over >= 3 evaluations, in a run not stopped before its planned end",
        (Outcome.UNDERFIT,),
        (Cause.MODEL_CONVERGENCE,),
        _nothing_to_overfit,
        codes=("GE001", "GE005"),
        cases=(
            Case(
                "DETR 4 epochs: test loss up, AP <= 7e-8 throughout",
                (("GE005", _W, {}),),
                ("underfit", "model_convergence"),
                series={
                    "loss": (29.5, 28.1, 27.7, 27.5),
                    "val_loss": (53.8, 55.7, 56.9, 57.9),
                    "val_map": (0.0, 1e-8, 7e-8, 5e-9),
                },
            ),
            Case(
                "overfit with a held-out accuracy that learned",
                (("GE001", _E, {}),),
                None,
                series={
                    "loss": (2.0, 1.0, 0.5, 0.2),
                    "val_loss": (1.5, 1.2, 1.4, 1.8),
                    "val_acc": (0.5, 0.7, 0.68, 0.66),
                },
            ),
        ),
    ),
    Rule(
        "V20f",
        "ended-at-ap-floor",
        116,
        "the run ended (finished status, its plan reached, an end-of-training or early-stop line; not stopped "
        "short, running or a report), no finding at error but GE002's score floor, and a held-out average "
        "precision (mAP, AP, AP50) never above 1% (GE002's score floor) over >= 2 evaluations: underfit, before "
        "any overfit or plateau reading of the losses; data_config when another AP head left the floor or a "
        "training loss fell >= 20%, else model_convergence",
        (Outcome.UNDERFIT,),
        (Cause.DATA_CONFIG, Cause.MODEL_CONVERGENCE),
        _ended_at_ap_floor,
        cases=(
            Case(
                "YOLOv8n-pose 5 of 5 epochs: box mAP 0.075 -> 0.456, pose mAP50 0 -> 0.0035 (own f22b1-01)",
                (),
                ("underfit", "data_config"),
                series={
                    "train/box_loss": (0.90, 0.85, 0.78, 0.72, 0.68),
                    "metrics/mAP50-95(B)": (0.075, 0.208, 0.288, 0.399, 0.456),
                    "metrics/mAP50(P)": (0.0, 0.00004, 0.00005, 0.00039, 0.0035),
                },
                params={"epochs": "5"},
            ),
            Case(
                "YOLOv8n from scratch 10 of 10 epochs, losses within 7%, mAP50-95 0.0005 (own csv17)",
                (),
                ("underfit", "model_convergence"),
                series={
                    "train/box_loss": (2.85, 3.0, 3.1, 3.2, 3.23),
                    "train/cls_loss": (4.04, 3.95, 3.9, 3.8, 3.76),
                    "metrics/mAP50-95(B)": (0.0005, 0.0005, 0.0004, 0.0005, 0.0005),
                },
                params={"epochs": "5"},
            ),
            Case(
                "mAP 0.12 at the end",
                (),
                None,
                series={"train/box_loss": (0.9, 0.8, 0.7), "metrics/mAP50(B)": (0.01, 0.05, 0.12)},
                params={"epochs": "3"},
            ),
            Case(
                "mAP at the floor, run still running",
                (),
                None,
                status="running",
                series={
                    "train/box_loss": (0.9, 0.8, 0.7),
                    "metrics/mAP50(B)": (0.001, 0.002, 0.003),
                },
            ),
        ),
    ),
    Rule(
        "V11d",
        "heldout-nonfinite-recovered",
        118,
        "LI001 on the held-out loss or one of its terms (every evaluation-split loss), non-finite at < 50% "
        "of the evaluations from its onset (after a finite first evaluation) and finite at the last, with the training loss finite, in a run "
        "not stopped before its planned end: the model was unstable at those evaluations and recovered",
        (Outcome.UNSTABLE,),
        (Cause.MODEL_CONVERGENCE,),
        _heldout_nonfinite_recovered,
        codes=("LI001",),
        cases=(
            Case(
                "val cls loss inf at one evaluation in warm-up, finite after",
                (
                    (
                        "LI001",
                        _E,
                        {
                            "role": "val_loss",
                            "key": "val/cls_loss",
                            "n_nonfinite": 1,
                            "n_points": 100,
                            "index": 6,
                            "first_step": 7,
                            "recovered_step": 8,
                            "finite_at_end": True,
                            "component": True,
                        },
                    ),
                ),
                ("unstable", "model_convergence"),
            ),
            Case(
                "val loss non-finite to the end",
                (
                    (
                        "LI001",
                        _E,
                        {
                            "role": "val_loss",
                            "key": "val_loss",
                            "n_nonfinite": 94,
                            "n_points": 100,
                            "index": 6,
                            "first_step": 7,
                            "finite_at_end": False,
                            "all_after_nonfinite": True,
                        },
                    ),
                ),
                None,
            ),
        ),
    ),
    Rule(
        "V12",
        "overfit",
        120,
        "GE001 at error; not when the run's own early stopping fired within its patience of the held-out best; a held-out loss ending 10x its "
        "best or more is unstable; data_config when the log's early stopping watches a training metric; "
        "not when the run's selection metric (its monitor, Ultralytics fitness) ended at or near its best, or "
        "rose from the held-out loss minimum to within a tenth of its gain of its best",
        (Outcome.OVERFIT, Outcome.UNSTABLE),
        (Cause.MODEL_CONVERGENCE, Cause.DATA_CONFIG),
        _overfit,
        codes=("GE001",),
        cases=(
            Case(
                "XGBoost's early stopping watches the training set (report b8-02)",
                (("GE001", _E, {}),),
                ("overfit", "data_config"),
                console=("Will train until train-logloss hasn't improved in 1000 rounds.",),
            ),
            Case(
                "early stopping on the held-out set: a plain overfit",
                (("GE001", _E, {}),),
                ("overfit", "model_convergence"),
                console=("Will train until eval-logloss hasn't improved in 1000 rounds.",),
            ),
            Case(
                "val loss ended 17x its best",
                (("GE001", _E, {"gl": 1600.0, "measure": "loss"}),),
                ("unstable", "model_convergence"),
            ),
            Case(
                "val loss rose 40% from its min",
                (("GE001", _E, {}),),
                ("overfit", "model_convergence"),
            ),
            Case(
                "the run's own early stopping fired (sklearn: 'did not improve ... Stopping.')",
                (("GE001", _E, {}),),
                None,
                console=(
                    "Validation score did not improve more than tol=0.000100 for 10 consecutive "
                    "epochs. Stopping.",
                ),
            ),
        ),
    ),
    Rule(
        "V12a",
        "gap-overfit",
        122,
        "GE005 at warning (val loss >= 2x train loss at the end, gap grown since the best evaluation), the "
        "validation loss ending above its best beyond its noise (3x median change, >= 2%) and the training "
        "loss still falling after that best; not when the run's own early stopping fired or its selection "
        "metric ended at or near its best",
        (Outcome.OVERFIT,),
        (Cause.MODEL_CONVERGENCE,),
        _gap_overfit,
        codes=("GE005",),
        cases=(
            Case(
                "val creeps 1.20 -> 1.37 while train falls",
                (("GE005", _W, {}),),
                ("overfit", "model_convergence"),
                series={
                    "loss": tuple(2.0 * 0.97**i for i in range(40)),
                    "val_loss": tuple([1.5, 1.3, 1.2] + [1.2 + 0.005 * i for i in range(37)]),
                },
            ),
            Case(
                "the run's early stopping fired on the rise",
                (("GE005", _W, {}),),
                None,
                series={
                    "loss": tuple(2.0 * 0.97**i for i in range(40)),
                    "val_loss": tuple([1.5, 1.3, 1.2] + [1.2 + 0.005 * i for i in range(37)]),
                },
                console=("Early stopping triggered after 40 epochs.",),
            ),
            Case(
                "val still at its best at the end",
                (("GE005", _W, {}),),
                None,
                series={
                    "loss": tuple(2.0 * 0.97**i for i in range(40)),
                    "val_loss": tuple(1.5 - 0.005 * i for i in range(40)),
                },
            ),
            Case(
                "train loss rose too (not overfit)",
                (("GE005", _W, {}),),
                None,
                series={
                    "loss": tuple([0.5, 0.3, 0.2] + [0.2 + 0.01 * i for i in range(37)]),
                    "val_loss": tuple([1.5, 1.3, 1.2] + [1.2 + 0.01 * i for i in range(37)]),
                },
            ),
        ),
    ),
    Rule(
        "V12c",
        "memorised",
        124,
        "training accuracy >= 99% over the last quarter with the validation accuracy >= 10 points below it",
        (Outcome.OVERFIT,),
        (Cause.MODEL_CONVERGENCE,),
        _memorised,
        cases=(
            Case(
                "AlexNet CIFAR-10: train 99.3%, val 77%",
                (),
                ("overfit", "model_convergence"),
                series={
                    "loss": _LOSS["loss"],
                    "train_acc": tuple(min(0.993, 0.5 + 0.02 * i) for i in range(50)),
                    "val_acc": tuple(min(0.77, 0.5 + 0.01 * i) for i in range(50)),
                },
            ),
            Case(
                "percent scale: 99.7 vs 85",
                (),
                ("overfit", "model_convergence"),
                series={
                    "loss": _LOSS["loss"],
                    "train_acc": (90.0, 99.0, 99.7, 99.8),
                    "val_acc": (80.0, 84.0, 85.0, 85.0),
                },
            ),
            Case(
                "both at 100% (easy task)",
                (),
                None,
                series={
                    "loss": _LOSS["loss"],
                    "train_acc": (0.9, 1.0, 1.0, 1.0),
                    "val_acc": (0.9, 1.0, 1.0, 1.0),
                },
            ),
            Case(
                "train 86.5%, val 84% (not memorised)",
                (),
                None,
                series={
                    "loss": _LOSS["loss"],
                    "train_acc": (0.7, 0.8, 0.86, 0.865),
                    "val_acc": (0.7, 0.8, 0.84, 0.84),
                },
            ),
        ),
    ),
    Rule(
        "V12b",
        "degraded-in-run",
        125,
        "GE003 at warning with the final held-out value >= 25% worse than its best, and the smoothed "
        "training loss rising >= 1.5x above its minimum after it",
        (Outcome.REGRESSED,),
        (Cause.MODEL_CONVERGENCE,),
        _degraded,
        codes=("GE003",),
        cases=(
            Case(
                "eval loss 0.22 -> 0.40, train 0.12 -> 0.31",
                (("GE003", _W, {"best": 0.219, "final": 0.40}),),
                ("regressed", "model_convergence"),
                series={
                    "loss": tuple(
                        [0.5, 0.3, 0.2, 0.15, 0.12, 0.12, 0.13]
                        + [0.2 + 0.01 * i for i in range(12)]
                    )
                },
            ),
            Case(
                "val accuracy dips 4%, train loss falls",
                (("GE003", _W, {"best": 0.6258, "final": 0.6006}),),
                None,
                series=_LOSS,
            ),
            Case(
                "eval loss up 80% but train loss keeps falling (overfit shape)",
                (("GE003", _W, {"best": 0.5, "final": 0.9}),),
                None,
                series=_LOSS,
            ),
        ),
    ),
    Rule(
        "V13",
        "underfit",
        130,
        "GE002 at error; plateaued when the training loss fell >= 5% then repeated one "
        "value exactly at >= 10 consecutive points (>= 10% of the run: a collapse); correctness_bug when "
        "the grad norm is exactly 0 at >= 90% of >= 3 logged points (no gradient reaches the weights); "
        "plateaued when a small relative drop is the only evidence (no chance level, score floor or "
        "never-below-start: no reference level says the level is poor), no held-out number still "
        "improves at the end, the training loss is not the run's only curve still falling at its pace "
        "in its last quarter (no OP003, an LR not far above typical) "
        "and no other training loss fell >= 20% beside a flat one not named the total; "
        "data_config when the held-out predictions are constant (stuck accuracy/score, majority baseline) "
        "and the held-out accuracy sits at one value >= 0.8 at half its >= 5 evaluations (a class that "
        "is >= 80% of the set: the class prior learned); regressed when the training loss never went below "
        "its first value and ended above it, not at chance or a score floor, while the held-out loss ended > 3x "
        "its evaluation-to-evaluation change above its first evaluation and the held-out accuracy below its "
        "first beyond its noise margin (training made the model worse)",
        (Outcome.UNDERFIT, Outcome.PLATEAUED, Outcome.REGRESSED),
        (Cause.MODEL_CONVERGENCE, Cause.CORRECTNESS_BUG, Cause.DATA_CONFIG),
        _underfit,
        codes=("GE002",),
        cases=(
            Case("loss 2.30 -> 2.28", (("GE002", _E, {}),), ("underfit", "model_convergence")),
            Case(
                "recall 0 at every evaluation, val accuracy 0.937 throughout (newuser12, 6.3% positives)",
                (("GE002", _E, {"stuck_accuracy": True, "key": "val/recall", "value": 0.0}),),
                ("underfit", "data_config"),
                series={"val/accuracy": (0.937,) * 15, "val/recall": (0.0,) * 15},
            ),
            Case(
                "val accuracy stuck at 0.661, the majority share of a 2:1 set (own tb12)",
                (("GE002", _E, {"stuck_accuracy": True, "key": "val_acc", "value": 0.661}),),
                ("underfit", "model_convergence"),
                series={"val_acc": (0.661,) * 12},
            ),
            Case(
                "loss flat at chance, grad norm exactly 0 at every point (own f6b3-02, OLMo)",
                (("GE002", _E, {}),),
                ("underfit", "correctness_bug"),
                series={"loss": (10.38, 10.36, 10.35, 10.33, 10.32), "grad_norm": (0.0,) * 5},
            ),
            Case(
                "SwAV 2.62 -> exactly 2.3026 (ln 10) for 40 epochs -> 2.12",
                (("GE002", _E, {}),),
                ("plateaued", "model_convergence"),
                series={
                    "loss": (2.62, 2.45, 2.31)
                    + (2.3026,) * 40
                    + tuple(2.30 - 0.004 * i for i in range(45))
                },
            ),
            Case(
                "stuck at chance from the start (no drop first)",
                (("GE002", _E, {}),),
                ("underfit", "model_convergence"),
                series={"loss": (2.3026,) * 50},
            ),
            Case(
                "a small relative drop with no reference level (own f5b1-18: LoRA 1.42 -> 1.36)",
                (("GE002", _E, {"relative_drop_only": True}),),
                ("plateaued", "model_convergence"),
            ),
            Case("warning only", (("GE002", _W, {}),), None),
        ),
    ),
    Rule(
        "V13c",
        "straight-descent",
        131,
        "no held-out loss or metric logged, the run not stopped early and its end shown (finished status, "
        "planned length, end-of-training line, a remaining-time estimate at 0); the training loss fell at >= 90% of "
        ">= 10 points, by less than half its first value, and its slope over the last third of its steps is "
        ">= half its slope over the first third (it never bent): underfit",
        (Outcome.UNDERFIT,),
        (Cause.MODEL_CONVERGENCE,),
        _straight_descent,
        cases=(
            Case(
                "GradientBoosting at lr 0.001: 25.29 -> 20.29, ~0.03 per tree throughout (newuser12)",
                (),
                ("underfit", "model_convergence"),
                series={"train/loss": tuple(25.29 - 0.025 * i for i in range(0, 201, 10))},
            ),
            Case(
                "a bending curve: 2.3 -> 1.4, the last third's slope a tenth of the first's",
                (),
                None,
                series={"train/loss": tuple(1.3 + 1.0 * 0.85**i for i in range(20))},
            ),
            Case(
                "straight, but a held-out loss is logged: the held-out rules judge",
                (),
                None,
                series={
                    "train/loss": tuple(25.29 - 0.025 * i for i in range(0, 201, 10)),
                    "val/loss": tuple(26.0 - 0.02 * i for i in range(0, 201, 20)),
                },
            ),
        ),
    ),
    Rule(
        "V13b",
        "ended-below-best",
        136,
        "GE003 with the final held-out value >= 25% of the best and >= 10x its noise below the best; overfit "
        "when no training loss is logged and the held-out loss fell to its best before it and then rose at "
        "more than half of the evaluations after it (the textbook overfit curve)",
        (Outcome.REGRESSED, Outcome.OVERFIT),
        (Cause.MODEL_CONVERGENCE,),
        _ended_below_best,
        codes=("GE003",),
        cases=(
            Case(
                "realworld wb02: test accuracy 0.839 -> 0.536 at the last epoch, noise 0.011",
                (("GE003", _W, {"best": 0.839, "final": 0.536, "noise": 0.011}),),
                ("regressed", "model_convergence"),
                series=_LOSS,
            ),
            Case(
                "healthy Keras dip: val acc 0.90 -> 0.86",
                (("GE003", _W, {"best": 0.90, "final": 0.86, "noise": 0.01}),),
                None,
                series=_LOSS,
            ),
            Case(
                "30% below the best but within 5x noise (tiny, noisy validation set)",
                (("GE003", _W, {"best": 0.8, "final": 0.56, "noise": 0.05}),),
                None,
                series=_LOSS,
            ),
        ),
    ),
    Rule(
        "V14",
        "plateau",
        140,
        "OP003 at warning, unless a held-out loss or task metric is at its best at its last evaluations "
        "(still improving: the training loss is at its floor), or the run reached its planned length after "
        "a drop of >= 20% and the loss is not frozen (converged), or a training or held-out accuracy rose "
        "> 2 points to >= 0.9 under a loss not frozen (learned its task: GE002's learned accuracy), or the run logs the reward it trains a "
        "policy from (the loss is its surrogate)",
        (Outcome.PLATEAUED,),
        (Cause.MODEL_CONVERGENCE,),
        _plateau,
        codes=("OP003",),
        cases=(
            Case(
                "flat for 60% of the run", (("OP003", _W, {}),), ("plateaued", "model_convergence")
            ),
        ),
    ),
    Rule(
        "V14b",
        "validation-plateau",
        145,
        "GE007 at warning (the monitored validation metric stopped "
        "improving early, or improved < 2% over the second half while the training loss kept falling and "
        "the gap widened); not on a run that stopped early or ended failed; overfit when the held-out accuracy "
        "peaked and sat >= 10% below its peak over the last quarter while the training loss fell to half its "
        "value at that peak and GE005 finds the held-out loss >= 2x the training loss, or when the task "
        "metric's level fell from its best beyond its noise band and a tenth of its gain while the training "
        "loss kept falling, in a run its early stopping did not end; not when the "
        "monitored held-out loss's best is level with the training loss after the plateau's start (within "
        "the training loss's interquartile range there) and the training loss fell >= 20% (converged), nor "
        "when the held-out accuracy learned and ended within its noise of its best at >= 0.9 (GE002's "
        "learned accuracy: converged fast)",
        (Outcome.PLATEAUED, Outcome.OVERFIT),
        (Cause.MODEL_CONVERGENCE,),
        _val_plateau,
        codes=("GE007",),
        cases=(
            Case(
                "val loss flat for the last 60% of evaluations",
                (("GE007", _W, {}),),
                ("plateaued", "model_convergence"),
            ),
            Case(
                "nanoGPT val -1.4% over the second half, train -9.5%, gap 0.24 -> 0.42",
                (("GE007", _W, {"kind": "diminishing"}),),
                ("plateaued", "model_convergence"),
                series=_LOSS,
            ),
            Case("info only", (("GE007", _I, {}),), None),
            Case(
                "val loss best 0.074 at evaluation 5 of 20, train loss 0.62 -> 0.07 level with it "
                "(newuser12 W&B moons): converged",
                (
                    (
                        "GE007",
                        _W,
                        {
                            "key": "val/loss",
                            "best": 0.074,
                            "plateau_step": 4,
                            "higher_is_better": False,
                        },
                    ),
                ),
                None,
                series={
                    "train/loss": (
                        0.62,
                        0.4,
                        0.2,
                        0.1,
                        0.08,
                        0.06,
                        0.09,
                        0.07,
                        0.08,
                        0.065,
                        0.085,
                        0.075,
                    ),
                    "val/loss": (
                        0.2,
                        0.12,
                        0.085,
                        0.078,
                        0.074,
                        0.077,
                        0.076,
                        0.079,
                        0.075,
                        0.08,
                        0.077,
                        0.08,
                    ),
                },
            ),
            Case(
                "the same val loss over a train loss at 0.03, below it by more than its noise: plateaued",
                (
                    (
                        "GE007",
                        _W,
                        {
                            "key": "val/loss",
                            "best": 0.074,
                            "plateau_step": 4,
                            "higher_is_better": False,
                        },
                    ),
                ),
                ("plateaued", "model_convergence"),
                series={
                    "train/loss": (
                        0.62,
                        0.4,
                        0.2,
                        0.1,
                        0.05,
                        0.04,
                        0.035,
                        0.03,
                        0.032,
                        0.029,
                        0.03,
                        0.028,
                    ),
                    "val/loss": (
                        0.2,
                        0.12,
                        0.085,
                        0.078,
                        0.074,
                        0.077,
                        0.076,
                        0.079,
                        0.075,
                        0.08,
                        0.077,
                        0.08,
                    ),
                },
            ),
            Case(
                "run interrupted at 8% of its plan",
                (("GE007", _W, {}),),
                None,
                status="failed",
                series=_LOSS,
                console=("KeyboardInterrupt",),
            ),
        ),
    ),
    Rule(
        "V14c",
        "erratic-validation",
        148,
        "OP008 at error: the validation loss jumps > 2x between consecutive "
        "evaluations >= 3 times in the second half; data_config when it sits at >= 1e6; not when the "
        "held-out accuracy learned and ended within its noise of its best",
        (Outcome.UNSTABLE,),
        (Cause.MODEL_CONVERGENCE, Cause.DATA_CONFIG),
        _erratic_validation,
        codes=("OP008",),
        cases=(
            Case(
                "realworld csv03: val_loss 7.9e12 -> bouncing 2e7-7e7",
                (("OP008", _E, {"scale_suspect": True}),),
                ("unstable", "data_config"),
            ),
            Case(
                "val loss bouncing 0.4-1.7 (TF2 RMSprop)",
                (("OP008", _E, {"scale_suspect": False}),),
                ("unstable", "model_convergence"),
            ),
        ),
    ),
    Rule(
        "V15",
        "unstable",
        150,
        "OP002 at warning",
        (Outcome.UNSTABLE,),
        (Cause.MODEL_CONVERGENCE,),
        _unstable,
        codes=("OP002",),
        cases=(
            Case("unrecovered spikes", (("OP002", _W, {}),), ("unstable", "model_convergence")),
            Case("benign spike (info)", (("OP002", _I, {}),), None),
        ),
    ),
    Rule(
        "V16",
        "ended-failed",
        160,
        "tracker status failed or killed, no preemption (RT003)",
        (Outcome.CRASHED,),
        (Cause.INCONCLUSIVE,),
        _ended_failed,
        cases=(
            Case("MLflow status FAILED", (), ("crashed", "inconclusive"), status="failed"),
            Case(
                "W&B run failed after a KeyboardInterrupt",
                (),
                ("crashed", "inconclusive"),
                status="failed",
                series=_LOSS,
                console=("Traceback (most recent call last):", "KeyboardInterrupt"),
            ),
            Case("killed but preempted", (("RT003", _W, {}),), None, status="killed"),
        ),
    ),
    Rule(
        "V17",
        "stopped-early",
        170,
        "planned length (max_steps, MAX_ITER, epochs, Keras 'Epoch k/N') > 5% beyond what was reached (or "
        "short by more than 2 logging intervals and 1% of the plan), an interrupt line, or an HF/detectron2 log without its end-of-training line; not a mid-run checkpoint "
        "snapshot, not an early stop its patience explains, not a shortfall alone beside a slowdown V18 "
        "reads; 'running' when the tracker says running",
        (Outcome.CRASHED, Outcome.RUNNING),
        (Cause.INCONCLUSIVE,),
        _stopped_early,
        cases=(
            Case(
                "3 epochs of 100 (results.csv)",
                (),
                ("crashed", "inconclusive"),
                series={"loss": (2.0, 1.9, 1.8)},
                params={"epochs": "100", "log.step_axis": "epoch"},
            ),
            Case(
                "still running at 10%",
                (),
                ("running", "inconclusive"),
                status="running",
                series=_LOSS,
                params={"max_steps": "500"},
            ),
            Case(
                "trainer_state checkpoint 500/1250",
                (),
                None,
                series=_LOSS,
                params={"max_steps": "1250"},
                notes=(
                    "checkpoint snapshot at step 49 of max_steps 1250: a checkpoint is saved mid-run",
                ),
            ),
            Case(
                "KeyboardInterrupt line",
                (),
                ("crashed", "inconclusive"),
                series=_LOSS,
                console=("Traceback (most recent call last):", "KeyboardInterrupt"),
            ),
            Case("complete", (), None, series=_LOSS, params={"max_steps": "50"}),
            Case(
                "HF early stopping: short, but the log has its train_runtime line",
                (),
                None,
                series=_LOSS,
                params={"max_steps": "500"},
                console=(
                    "{'loss': 0.5, 'epoch': 1.0}",
                    "{'train_runtime': 120.5, 'train_loss': 0.61, 'epoch': 1.0}",
                ),
            ),
            Case(
                "ended inside the LR warmup (detectron2 300/300 with a 1000-iteration warmup)",
                (),
                None,
                series={
                    "loss": (2.6, 2.4, 2.1, 1.9, 1.7, 1.65),
                    "lr": (1e-7, 2e-7, 4e-7, 8e-7, 1.6e-6, 2.4e-6),
                },
            ),
            Case(
                "Lightning epoch counter 0-19 of 20",
                (),
                None,
                series={"loss": _LOSS["loss"][:20], "epoch": tuple(float(i) for i in range(20))},
                params={"max_epochs": "20"},
            ),
        ),
    ),
    Rule(
        "V18j",
        "heldout-in-training-stated",
        175,
        "no judgeable curve and no finding at error; a sentence of the text states that held-out data is part "
        "of the training data (a train/test leakage, overlap or contamination, held-out rows that also appear "
        "in the training set, a training split of train+val), not in a question or negated -> succeeded "
        "(a task metric's figure stated) or unknown, data_config",
        (Outcome.SUCCEEDED, Outcome.UNKNOWN),
        (Cause.DATA_CONFIG,),
        _heldout_in_training,
        cases=(
            Case(
                "duplicate rows: 7.4% of the test set also in the training set (report b24-04)",
                (),
                ("unknown", "data_config"),
                status="unknown",
                console=(
                    "Dataset v2.4 has duplicate rows causing train/test leakage",
                    "7.4% of the test set (2,172 rows) also appears in the training set.",
                ),
            ),
            Case(
                "a training split of train+val and a validation accuracy (report b5-09)",
                (),
                ("succeeded", "data_config"),
                status="unknown",
                console=("The val acc is overall=84.18.", "test score is overall=66.95"),
                params={"config": "model='small', train_split='train+val', 13 epochs"},
            ),
            Case(
                "no overlap stated",
                (),
                None,
                status="unknown",
                console=("I checked: there is no train/test overlap, and the val acc is 84.18.",),
            ),
        ),
    ),
    Rule(
        "V19s",
        "stop-not-honoured",
        177,
        "no finding at error; the console announces an early stop (an early-stopping line with a stop word, "
        "not a counter) and then logs two or more epochs whose numbers go on past the stop's epoch (the "
        "count does not start again, as a new fold or launch would) -> unknown, correctness_bug",
        (Outcome.UNKNOWN,),
        (Cause.CORRECTNESS_BUG,),
        _stop_ignored,
        cases=(
            Case(
                "a callback logs 'stopping the fitting' and the epochs go on (report b29-08)",
                (),
                ("unknown", "correctness_bug"),
                console=(
                    "Epoch 13/10000",
                    "16/16 - 342s - loss: 0.3702 - val_loss: 0.3748",
                    "INFO:megnet.callbacks:val_acc does not improve after 3, stopping the fitting...",
                    "Epoch 14/10000",
                    "16/16 - 339s - loss: 0.3723 - val_loss: 0.3999",
                    "Epoch 15/10000",
                    "16/16 - 344s - loss: 0.3748 - val_loss: 0.3903",
                ),
            ),
            Case(
                "early stopping in fold 1, fold 2 counts from epoch 1 again",
                (),
                None,
                console=(
                    "Epoch 13/100",
                    "Epoch 00013: early stopping",
                    "Epoch 1/100",
                    "Epoch 2/100",
                ),
            ),
        ),
    ),
    Rule(
        "V18k",
        "cpu-bound",
        179,
        "no judgeable curve and no finding at error; the console ends inside a progress bar with >= 24 h to "
        "go and says the process has no accelerator (no accelerator found, CUDA/GPU available: False, device "
        "cpu) and never that it has one -> slow, the machine",
        (Outcome.SLOW,),
        (Cause.INFRA_RUNTIME,),
        _cpu_bound,
        cases=(
            Case(
                "QLoRA on the CPU, step 1 of 1857 with 99 h to go (own f15b1-14)",
                (),
                ("slow", "infra_runtime"),
                console=(
                    "UserWarning: 'pin_memory' argument is set as true but no accelerator is found, then "
                    "device pinned memory won't be used.",
                    "  0%|          | 1/1857 [03:13<99:47:03, 193.55s/it]",
                ),
            ),
            Case(
                "the same bar on a GPU",
                (),
                None,
                console=(
                    "device: cuda",
                    "  0%|          | 1/1857 [03:13<99:47:03, 193.55s/it]",
                ),
            ),
        ),
    ),
    Rule(
        "V18",
        "slow",
        180,
        "SY002 data starvation, SY005 time outside training or SY001 throughput drop, "
        "at warning (SY001 is a warning only when progressive, falling in every quarter from the start, or "
        "when it fell >= 50% and held there: the last quarter's upper quartile under the first's lower), or "
        "SY004 recurring pauses (steps at 2x the median or more on 5-30% of steps, >= 20% of the step time, "
        "one spacing between them in >= half the cases; "
        "from the records' wall times when no step time is logged), or SY008 (a sparse epoch/interval time "
        "series that swings or grows 2x; growing at every interval: correctness_bug, a per-step cost the "
        "training code accumulates)",
        (Outcome.SLOW,),
        (Cause.INFRA_RUNTIME, Cause.CORRECTNESS_BUG),
        _slow,
        codes=("SY002", "SY005", "SY001", "SY004", "SY008"),
        cases=(
            Case("input-bound", (("SY002", _E, {}),), ("slow", "infra_runtime")),
            Case(
                "epoch times of the same work swing 2.4x (SY008)",
                (("SY008", _W, {"ratio": 2.38}),),
                ("slow", "infra_runtime"),
                series=_LOSS,
            ),
            Case(
                "time per iteration grows at every interval 2.4x (SY008 grew; report b2-14)",
                (("SY008", _W, {"ratio": 2.39, "grew": True}),),
                ("slow", "correctness_bug"),
            ),
            Case("isolated slow steps only (SY004)", (("SY004", _W, {}),), None),
            Case(
                "recurring pauses: 13% of steps at 2x+, 45% of the time (SY004)",
                (("SY004", _W, {"recurring": True}),),
                ("slow", "infra_runtime"),
            ),
            Case(
                "throughput stepped down (neighbour load), no cause in the data",
                (("SY001", _I, {}),),
                None,
                series=_LOSS,
            ),
            Case(
                "throughput falling at warning (SY001 at warning)",
                (("SY001", _W, {"drop": 0.8}),),
                ("slow", "infra_runtime"),
                series=_LOSS,
            ),
            Case(
                "throughput falling every quarter",
                (("SY001", _E, {"progressive": True}),),
                ("slow", "infra_runtime"),
                series=_LOSS,
            ),
        ),
    ),
    Rule(
        "V18h",
        "train-below-heldout-stated",
        181,
        "no judgeable curve and no finding at error, and a sentence states the training accuracy is below the "
        "held-out accuracy (or the training loss above the held-out loss), no leakage named",
        (Outcome.UNKNOWN,),
        (Cause.HEALTHY,),
        _train_below_heldout,
        cases=(
            Case(
                "training accuracy below test accuracy (report b21-05)",
                (),
                ("unknown", "healthy"),
                status="unknown",
                console=("The accuracy of training set is lower than testing set",),
            ),
            Case(
                "the validation split is part of the training data: leakage, not augmentation",
                (),
                None,
                status="unknown",
                console=("Validation accuracy is higher than training accuracy.",),
                params={"config": "train_split='train+val'"},
            ),
        ),
    ),
    Rule(
        "V18i",
        "duration-accounted",
        182,
        "no judgeable curve and no finding at error, the report states a duration or rate with no failure "
        "named, and someone of the thread (not the reporter) states how long the training takes on the "
        "reference's hardware",
        (Outcome.UNKNOWN,),
        (Cause.HEALTHY,),
        _duration_accounted,
        cases=(
            Case(
                "85 hours on a K80, the maintainer's 20 hours on a V100 (report b21-06)",
                (),
                ("unknown", "healthy"),
                status="unknown",
                console=(
                    "1024 epochs, each taking about 5 minutes. That leads to a total of 85 hours.",
                ),
                params={
                    "maintainer NAME": "It takes roughly 20 hours for full training on a V100 GPU."
                },
            ),
            Case(
                "a duration beside a failure",
                (),
                None,
                status="unknown",
                console=("Each epoch takes 5 minutes and then the loss is nan.",),
                params={"maintainer NAME": "It takes roughly 20 hours on a V100 GPU."},
            ),
        ),
    ),
    Rule(
        "V18f",
        "stated-config-change",
        183,
        "no judgeable curve and no finding at error, no maintainer's sentence that it is expected, and the "
        "report states one metric for the default run and for a run with one setting changed, the changed "
        "run worse by more than 1% of the default's figure",
        (Outcome.REGRESSED,),
        (Cause.DATA_CONFIG,),
        _stated_config_change,
        cases=(
            Case(
                "accuracy 0.793 with the default command, 0.2952 with the batch size changed (report b21-02)",
                (),
                ("regressed", "data_config"),
                status="unknown",
                console=(
                    "The result of default command : NMI: 0.74268, ARI: 0.6775, acc: 0.793, final K: 10",
                    "The result of the command of changing batch size : NMI: 0.52621, acc: 0.2952",
                ),
            ),
            Case(
                "another seed is a rerun, not another configuration",
                (),
                None,
                status="unknown",
                console=(
                    "With the default config I get acc: 0.793.",
                    "After changing the seed I get acc: 0.75.",
                ),
            ),
        ),
    ),
    Rule(
        "V18g",
        "stated-course-worse",
        184,
        "no judgeable curve and no finding at error, no maintainer's sentence that it is expected, and the "
        "report states one metric at an earlier and a later point of the run (epoch/step numbers or words "
        "of time), the later worse by more than 1% of the earlier: a loss that rose -> diverged, a task "
        "metric that fell -> regressed",
        (Outcome.DIVERGED, Outcome.REGRESSED),
        (Cause.MODEL_CONVERGENCE,),
        _stated_course_worse,
        cases=(
            Case(
                "loss about 88 before the restore, 112 at epoch 58 (report b21-03)",
                (),
                ("diverged", "model_convergence"),
                status="unknown",
                console=(
                    "Right before the first checkpoint/restore loss was about 88.",
                    "It's currently with loss 112 at epoch 58.",
                ),
            ),
            Case(
                "BLEU 37.1 after 3 epochs, 36.2 after 6 more (report b6-10)",
                (),
                ("regressed", "model_convergence"),
                status="unknown",
                console=(
                    "Initially, I trained it for 3 epochs and got a BLEU score of 37.1.",
                    "Then, I continued the training and it finally gave a BLEU score of 36.2.",
                ),
            ),
            Case(
                "the loss fell: nothing got worse",
                (),
                None,
                status="unknown",
                console=("The loss was 9.2 when the training began.", "But now it is loss 3.17."),
            ),
        ),
    ),
    Rule(
        "V18b",
        "slow-stated",
        185,
        "no finding at error; a sentence of the report states the run is slow (not a question, negated or "
        "hedged) and the input pipeline is named (in that sentence, or by the thread: loader workers, data "
        "time, storage, I/O, decoding); no maintainer's sentence that the speed is expected -> slow: "
        "data_config when the thread confirms a worker-count change fixed it and names no storage, else "
        "infra_runtime",
        (Outcome.SLOW,),
        (Cause.DATA_CONFIG, Cause.INFRA_RUNTIME),
        _slow_stated,
        cases=(
            Case(
                "37 epochs a day, much slower than the paper; num_workers 4 fixed it (report b14-14)",
                (),
                ("slow", "data_config"),
                params={
                    "reporter": "I've trained for nearly a day and only got 37 epochs, much slow than 4 gpus "
                    "finishing 75 epoches per day in your paper.",
                    "reporter NAME": "Thank you! I set the num_workers to be 4 and it worked now!",
                },
            ),
            Case(
                "slow batch generation, told in words (report b6-02)",
                (),
                ("slow", "infra_runtime"),
                params={"reporter": "It takes too much time to generate batches!"},
            ),
            Case(
                "a question about speed states nothing",
                (),
                None,
                params={"reporter": "Is the training very slow because of the data loader?"},
            ),
            Case(
                "the maintainer says the speed is expected",
                (),
                None,
                params={
                    "reporter": "The training is very slow with the data loader at 3 s per step.",
                    "maintainer NAME": "That looks normal for this model.",
                },
            ),
        ),
    ),
    Rule(
        "V18c",
        "gate-threshold-fixed",
        186,
        "no judgeable curve, no finding at error; a sentence of the report states a test's or gate's "
        "threshold or tolerance made looser as the fix (not a question, negated or followed by 'still'), or, "
        "in a text that shows a test failure, that the test fails by chance (flaky, nondeterministic, "
        "unseeded) -> unknown, metric_policy",
        (Outcome.UNKNOWN,),
        (Cause.METRIC_POLICY,),
        _gate_threshold_fixed,
        cases=(
            Case(
                "a flaky CI test fixed by a measured threshold (report b11-03)",
                (),
                ("unknown", "metric_policy"),
                params={
                    "author": "The test sometimes fails when the seed settings are removed. Updating the "
                    "assertion threshold to 0.06 ensures that the test always passes."
                },
            ),
            Case(
                "a question is no fix",
                (),
                None,
                params={"reporter": "The test failed. Should we relax the 0.1 threshold?"},
            ),
            Case(
                "an unseeded test that fails by chance (report b33-09)",
                (),
                ("unknown", "metric_policy"),
                params={
                    "reporter": "train! forwards a step size: Test Failed at test/training_parameters.jl:54",
                    "maintainer NAME": "the file calls no Random.seed! at all, so which draw it gets "
                    "depends on every test that ran before it",
                },
            ),
            Case(
                "flakiness denied is no explanation",
                (),
                None,
                params={
                    "reporter": "The CI test failed on main; this is not a flaky test, it fails every time."
                },
            ),
        ),
    ),
    Rule(
        "V18d",
        "evaluation-explains-gap",
        187,
        "no judgeable curve, no finding at error, gaps not within seed noise; the text compares the run's "
        "figure with a reference (paper, README, leaderboard) and someone of the thread other than the "
        "reporter explains the difference by the evaluation (its protocol, settings, leaderboard entry, "
        "language or split, the text's tokenisation, the number of samples scored, an aggregation by averaging (not of "
        "weights); or a measurement protocol "
        "named with how the figure was obtained under it: test-time flip or crops, the Y channel against RGB, "
        "the resampling, a language model in decoding, 2D against 3D scoring), not in a question or denied, "
        "and no maintainer places the run at the reference's level; or the text states one task metric's figure twice, apart by "
        "more than 1%, and a sentence names how a figure is measured (metric definition, evaluator, "
        "post-processing, test inputs) with no training setting stated as changed; or the text states that "
        "the run only evaluated released weights (released/provided/official/authors' checkpoint or weights "
        "beside an evaluation word, or no retraining; no line says the run trained or fine-tuned) and a "
        "figure apart by more than 1% from a reference figure (a key naming the paper, authors, README, "
        "reference or model zoo, or 'in the paper is X'), with no reason or cause stated by the thread; or "
        "a sentence states the outputs look better while a metric of them is lower, with no cause stated "
        "-> succeeded, metric_policy",
        (Outcome.SUCCEEDED,),
        (Cause.METRIC_POLICY,),
        _evaluation_explains,
        cases=(
            Case(
                "released LSUN-Churches checkpoint, FID 14.06 against the paper's 4.02 (report b47-04)",
                (),
                ("succeeded", "metric_policy"),
                params={
                    "model": "LDM, released LSUN-Churches checkpoint (no retraining)",
                    "paper_fid": "4.02",
                },
                console=("400 DDIM steps FID score is 14.063717185112182",),
            ),
            Case(
                "a fine-tuned released checkpoint is a training run, not an evaluation",
                (),
                None,
                params={
                    "model": "LDM, released LSUN-Churches checkpoint, fine-tuned on my data",
                    "paper_fid": "4.02",
                },
                console=("400 DDIM steps FID score is 14.063717185112182",),
            ),
            Case(
                "renders look better with pose refinement, PSNR lower (report b48-02)",
                (),
                ("succeeded", "metric_policy"),
                params={
                    "reporter": "with the SO3xR3 pose refinement the rendered results look much better, but "
                    "the PSNR is lower (15.74 vs 16.43 without pose refinement)."
                },
            ),
            Case(
                "mIoU 62% on full test images instead of the paper's 67% on cropped ones (report b24-08)",
                (),
                ("succeeded", "metric_policy"),
                console=(
                    "Seems your test results are based on the cropped test images. I run the 15-1 setting, "
                    "and the mIoU should be the 62% instead of 67%.",
                ),
            ),
            Case(
                "one BLEU from two scoring scripts (report b5-07)",
                (),
                ("succeeded", "metric_policy"),
                console=(
                    "For multi-bleu.perl, 19.71;",
                    "For multi-bleu-detok.perl, 24.01 (case-sensitive);",
                ),
            ),
            Case(
                "a training setting changed between the two figures: another configuration",
                (),
                None,
                status="unknown",
                console=(
                    "With the evaluation script of the repo I get mAP 70.1.",
                    "After changing the batch size I get mAP 64.3.",
                ),
            ),
            Case(
                "R@1 83.4 against the reported 88.2; the author names the official protocol (report b13-01)",
                (),
                ("succeeded", "metric_policy"),
                params={
                    "reporter": "With your model I achieve a R@1 of 83.4, while you report a R@1 of 88.2.",
                    "author NAME": "In order to evaluate on the validation dataset you need to use mode val.",
                },
            ),
            Case(
                "PSNR on RGB against the paper's Y channel (report b40-06)",
                (),
                ("succeeded", "metric_policy"),
                params={
                    "reporter": "The psnr of your SR baboon image is 18.57dB, but in your paper the value is "
                    "20.35dB.",
                    "maintainer NAME": "We have tested on the Y channel. I think you may evaluate on RGB "
                    "channels.",
                },
            ),
            Case(
                "a protocol denied explains nothing",
                (),
                None,
                params={
                    "reporter": "I get WER 4.82 but the paper reports 3.82.",
                    "maintainer NAME": "The 3.82 figure was not done with a language model.",
                },
            ),
            Case(
                "the maintainer only asks about the evaluation",
                (),
                None,
                params={
                    "reporter": "I get mAP 66.1 but the paper reports 70.5.",
                    "maintainer NAME": "Which evaluation settings did you use?",
                },
            ),
        ),
    ),
    Rule(
        "V18e",
        "thread-states-gap-reason",
        188,
        "no judgeable curve, no finding at error, gaps not within seed noise; the text compares the run with "
        "a reference and someone of the thread other than the reporter states why they differ: trained far "
        "shorter than the reference -> underfit, model_convergence; a setting named with its value differing "
        "from the reference's -> succeeded, data_config (not in a question, a hedge or after a negation); or, "
        "with no reason stated, the text states the recipe's total batch (an OpenMMLab config name "
        "NxbM, or N GPUs x M images per GPU on the config's line) and the run's (a stated product or "
        "total), apart by a factor 2 or more with no learning-rate rescaling stated, and the run's figure "
        "apart from a reference figure by more than 1% -> succeeded, data_config",
        (Outcome.UNDERFIT, Outcome.SUCCEEDED),
        (Cause.MODEL_CONVERGENCE, Cause.DATA_CONFIG),
        _gap_reason_stated,
        cases=(
            Case(
                "AP 0.586 against the model zoo's 0.633 at a total batch of 32 for an 8xb64 config "
                "(report b48-06)",
                (),
                ("succeeded", "data_config"),
                params={
                    "config": "configs/body_2d_keypoint/ipr_res50_8xb64-210e_coco-256x256.py",
                    "override": "train_dataloader.batch_size=8 (4 GPUs x 8 = 32 images per step)",
                    "reference_result": "0.633 AP (model zoo)",
                },
                console=("Epoch(val) [210][814/814]  coco/AP: 0.586075  coco/AR: 0.688114",),
            ),
            Case(
                "the same run with the learning rate rescaled by auto_scale_lr",
                (),
                None,
                params={
                    "config": "configs/body_2d_keypoint/ipr_res50_8xb64-210e_coco-256x256.py",
                    "override": "train_dataloader.batch_size=8 (4 GPUs x 8 = 32 images per step), "
                    "auto_scale_lr.enable=True",
                    "reference_result": "0.633 AP (model zoo)",
                },
                console=("Epoch(val) [210][814/814]  coco/AP: 0.586075  coco/AR: 0.688114",),
            ),
            Case(
                "MRR below the paper's; the author: not trained long enough (report b13-13)",
                (),
                ("underfit", "model_convergence"),
                params={
                    "reporter": "I can not achieve the comparable results reported in the paper.",
                    "author NAME": "Your only problem is that you have not trained the models long enough.",
                },
            ),
            Case(
                "R@1 0.85 against the repository's 0.87; the yaml's 512 against the paper's 1024 (report b12-02)",
                (),
                ("succeeded", "data_config"),
                params={
                    "reporter": "The result (~0.85) is lower than the repo's training result (~0.87).",
                    "maintainer NAME": "That's because in the yaml file you used, out_channels is initialized "
                    "to 512 (the default value). While the paper uses 1024.",
                },
            ),
            Case(
                "the maintainer only asks about the training length",
                (),
                None,
                params={
                    "reporter": "I get MRR 9.6 but the paper reports 12.4.",
                    "maintainer NAME": "Have you trained the models long enough?",
                },
            ),
        ),
    ),
    Rule(
        "V19j",
        "constant-predictor",
        189,
        "no judgeable curve, and the last held-out evaluation's accuracy p (0.5 <= p < 1) with every "
        "precision/F1 of that split at that evaluation equal to a one-class predictor's (weighted precision "
        "p^2, weighted F1 2p^2/(1+p) within 1%; macro over an integer K >= 2 within 3%)",
        (Outcome.UNDERFIT,),
        (Cause.MODEL_CONVERGENCE,),
        _constant_predictor,
        cases=(
            Case(
                "W&B summary: accuracy 48/53, weighted precision and F1 of a constant predictor (f13b2-13)",
                (),
                ("underfit", "model_convergence"),
                series={
                    "test/accuracy": (0.9056603773584906,),
                    "test/precision": (0.8202207191171236,),
                    "test/f1": (0.8608257052120306,),
                },
            ),
            Case(
                "accuracy 0.906 with a weighted F1 of 0.90: a model that predicts several classes",
                (),
                None,
                series={"test/accuracy": (0.9056,), "test/f1": (0.90,)},
            ),
        ),
    ),
    Rule(
        "V19",
        "preempted",
        190,
        "RT003: requeued -> running, else crashed",
        (Outcome.RUNNING, Outcome.CRASHED),
        (Cause.INFRA_RUNTIME,),
        _preempted,
        codes=("RT003",),
        cases=(
            Case("requeued", (("RT003", _W, {"requeued": True}),), ("running", "infra_runtime")),
            Case("cancelled", (("RT003", _W, {}),), ("crashed", "infra_runtime")),
        ),
    ),
    Rule(
        "V19i",
        "memory-stated",
        191,
        "no judgeable curve, no finding at error; a sentence of the report states that the run's memory ran "
        "out (the GPU's; or the host's RAM filled up where the report says the run failed), that its "
        "process was killed (passive: 'the job got killed'), or names a distributed timeout beside a "
        "sentence that it failed; not in a question, a negation, a condition or a hedge -> crashed, "
        "infra_runtime",
        (Outcome.CRASHED,),
        (Cause.INFRA_RUNTIME,),
        _memory_stated,
        cases=(
            Case(
                "the GPU runs out of memory, told in words (report b15-07)",
                (),
                ("crashed", "infra_runtime"),
                params={"reporter": "for some reason the GPU runs out of memory on a 12GB card"},
            ),
            Case(
                "host RAM filled up and the script failed (report b16-14)",
                (),
                ("crashed", "infra_runtime"),
                params={
                    "reporter": "The 128 GB RAM was quickly filled up, and the training script failed."
                },
            ),
            Case(
                "the training process killed, told in words",
                (),
                ("crashed", "infra_runtime"),
                params={
                    "reporter": "My training process was killed after epoch 3 without any error."
                },
            ),
            Case(
                "a DDP timeout during tokenisation, told in words (report b18-10)",
                (),
                ("crashed", "infra_runtime"),
                params={
                    "reporter": "At 30 minutes it always errors out; the init_process_group default "
                    "timeout is 1800 s."
                },
            ),
            Case(
                "a question is not a statement",
                (),
                None,
                params={"reporter": "Could the GPU run out of memory with batch size 64?"},
            ),
            Case(
                "advice to avoid it states nothing",
                (),
                None,
                params={
                    "maintainer NAME": "Use batch size 8 to avoid running out of memory on the GPU."
                },
            ),
            Case(
                "RAM full but nothing failed",
                (),
                None,
                params={
                    "reporter": "The RAM was completely filled up during preprocessing of the data."
                },
            ),
        ),
    ),
    Rule(
        "V19h",
        "early-stopped-gap",
        192,
        "no judgeable curve; the run stopped by early stopping (its console says so) and its last held-out "
        "loss is >= 2x its last training loss, and no held-out accuracy that never beat chance -> overfit, "
        "model_convergence",
        (Outcome.OVERFIT,),
        (Cause.MODEL_CONVERGENCE,),
        _early_stopped_gap,
        cases=(
            Case(
                "Keras epoch 46: loss 18.65, val_loss 50.89, 'Epoch 00046: early stopping' (report b14-10)",
                (),
                ("overfit", "model_convergence"),
                series={"loss": (18.6522,), "val_loss": (50.886,)},
                console=("Epoch 00046: early stopping",),
            ),
            Case(
                "early stopping with val_loss 1.1x the training loss: no gap to explain",
                (),
                None,
                series={"loss": (0.50,), "val_loss": (0.55,)},
                console=("Epoch 00012: early stopping",),
            ),
        ),
    ),
    Rule(
        "V20a",
        "thread-says-expected",
        193,
        "no judgeable curve, no finding at error, and a maintainer's sentence in the report that the "
        "behaviour is expected (not next to a cause or failure word), or a maintainer's plain 'Yes' to the "
        "report's 'is this reasonable/normal?' -> running (no final tracker status), else unknown; healthy "
        "(metric_policy when the sentence says the metric is set by hand or hard-coded)",
        (Outcome.RUNNING, Outcome.UNKNOWN),
        (Cause.HEALTHY, Cause.METRIC_POLICY),
        _thread_says_expected,
        cases=(
            Case(
                "a repeated informational warning, closed as needing no change (report b13-16)",
                (),
                ("unknown", "healthy"),
                params={
                    "maintainer NAME": "I'm going to close this as there's no code changes required."
                },
            ),
            Case(
                "expected because the accuracy is set by hand (report b33-05)",
                (),
                ("unknown", "metric_policy"),
                params={"maintainer NAME": "yeah. it is normal, i manuall set accuracy to 0.5"},
            ),
            Case(
                "expected because of a wrong setting: a cause, not a clearance",
                (),
                None,
                params={"maintainer NAME": "It is expected because your labels are not binary."},
            ),
            Case(
                "a crash in the input",
                (("RT005", _E, {}),),
                None,
                params={"maintainer NAME": "a loss around 0.23 is a reasonable magnitude."},
            ),
        ),
    ),
    Rule(
        "V19g",
        "overflow-grad-norm",
        194,
        "reduced precision in use; the grad norm non-finite at some points (not all), every training-loss "
        "point finite, one at or after the first non-finite norm, the last at or below the first, no other "
        "finding at warning or above "
        "-> unknown (running for a snapshot), healthy: a loss scaler's skipped overflow steps",
        (Outcome.UNKNOWN, Outcome.RUNNING),
        (Cause.HEALTHY,),
        _overflow_grad_norm,
        cases=(
            Case(
                "fp16, grad norm nan at the first of two points, loss 1.91 -> 0.92",
                (("LI001", _E, {"role": "grad_norm"}),),
                ("unknown", "healthy"),
                series={"loss": (1.9091, 0.9186), "grad_norm": (float("nan"), 3.9772)},
                params={"fp16": "true"},
            ),
            Case(
                "no reduced precision",
                (("LI001", _E, {"role": "grad_norm"}),),
                None,
                series={"loss": (1.9091, 0.9186), "grad_norm": (float("nan"), 3.9772)},
            ),
        ),
    ),
    Rule(
        "V19b",
        "perfect-heldout-scores",
        195,
        "no judgeable training signal, and 2+ held-out accuracy/score summary values all at their ceiling (1 or "
        "100%) -> unknown, data_config (a train/test overlap or a leak is the first suspect)",
        (Outcome.UNKNOWN,),
        (Cause.DATA_CONFIG,),
        _perfect_scores,
        cases=(
            Case(
                "ACC/AP/R_ACC/F_ACC all 1.0, no curve",
                (),
                ("unknown", "data_config"),
                params={"ACC": "1.00000", "AP": "1.00000", "R_ACC": "1.00000", "F_ACC": "1.00000"},
            ),
            Case("one perfect, one not", (), None, params={"ACC": "1.0", "AP": "0.93"}),
            Case(
                "perfect training accuracy only",
                (),
                None,
                series={"train/accuracy": (1.0,), "train/f1": (1.0,)},
            ),
            Case("a loss curve", (), None, params={"ACC": "1.0", "AP": "1.0"}, series=_LOSS),
        ),
    ),
    Rule(
        "V19f",
        "summary-at-uniform-guess",
        196,
        "only summary values (< 3 points) whose last held-out accuracy is 1/K and whose last loss is 0.9-2x ln K "
        "for the same K (the task's class count, else round(1/accuracy)): underfit; data_config when a "
        "training accuracy beat chance by 25% of the way to 1.0",
        (Outcome.UNDERFIT,),
        (Cause.MODEL_CONVERGENCE, Cause.DATA_CONFIG),
        _summary_at_uniform_guess,
        cases=(
            Case(
                "one evaluation: accuracy 0.1, loss 2.377 (ln 10 = 2.303)",
                (),
                ("underfit", "model_convergence"),
                series={"val_acc": (0.1,), "val_loss": (2.3766909,)},
            ),
            Case(
                "one evaluation at 1/2 with train accuracy 0.95",
                (),
                ("underfit", "data_config"),
                series={"val_acc": (0.5,), "val_loss": (0.70,), "train_acc": (0.95,)},
            ),
            Case(
                "one evaluation: accuracy 0.1, loss 0.4 (no uniform guess)",
                (),
                None,
                series={"val_acc": (0.1,), "val_loss": (0.4,)},
            ),
        ),
    ),
    Rule(
        "V19c",
        "routine-loss-scaling",
        197,
        "no judgeable training signal; RT006 at info (fp16 overflow skips with the scale settled above its floor) "
        "and no finding at warning or above -> unknown, healthy: routine dynamic loss scaling",
        (Outcome.UNKNOWN,),
        (Cause.HEALTHY,),
        _routine_loss_scaling,
        codes=("RT006",),
        cases=(
            Case(
                "three apex skips, scale 1024 -> 256", (("RT006", _I, {}),), ("unknown", "healthy")
            ),
            Case("skips at the loss-scale floor", (("RT006", _E, {}),), None),
            Case("benign skips beside a loss curve", (("RT006", _I, {}),), None, series=_LOSS),
        ),
    ),
    Rule(
        "V19d",
        "reproduction-within-noise",
        198,
        "no judgeable training signal; the text states a reference figure (paper, README, a target to "
        "reproduce) and the run's figure of the same metric, every gap within 1% of the reference (seed "
        "noise); or figures of reruns of one configuration (a list, run- or seed-labelled figures, two "
        "figures of a sentence about repeats) whose range is within 3% of their mean, or wider with no "
        "outlier when the text puts the spread down to chance; or a gap stated in points within the "
        "run-to-run band the text states for the same code; or, with none of these figures, a sentence "
        "states in words that the results are close to the published/paper/reported ones (not negated, "
        "doubted or asked) and the reporter's own text names no failure; or, figures or not, the reference's "
        "owner (a maintainer or author) states the result is within the expected range, in line with what "
        "they observed or close enough, or judges the gap, the result or the reporter's procedure with an "
        "approving predicate (the difference minor or negligible, the result acceptable, the training done "
        "correctly) (not negated, asked or turned by a 'but'); no finding at warning or "
        "above -> succeeded (unknown when no task figure is stated), healthy",
        (Outcome.SUCCEEDED, Outcome.UNKNOWN),
        (Cause.HEALTHY,),
        _reproduction_within_noise,
        cases=(
            Case(
                "mAP 73.5 reproduced against 74.0 reported (report b2-09)",
                (),
                ("succeeded", "healthy"),
                params={"reported by the repository": "mAP 74.0", "this run": "mAP 73.5"},
            ),
            Case(
                "mAP 0.388 against the owner's reruns 0.405 and 0.407, the owner: within the expected range "
                "(report b30-01)",
                (),
                ("succeeded", "healthy"),
                params={
                    "reporter": "I reran the code and got mAP 0.388, the paper reports 0.405",
                    "maintainer": "Your test result is within an expected range.",
                },
            ),
            Case(
                "three reruns with a fixed seed: F1 43.25, 43.20, 42.89 (report b8-04)",
                (),
                ("succeeded", "healthy"),
                params={"reporter": "with a fixed seed the f1 result will get 43.25, 43.20, 42.89"},
            ),
            Case(
                "reruns 30% apart are not noise",
                (),
                None,
                params={"reporter": "reruns with the same seed give 43.2, 30.1, 42.9"},
            ),
            Case(
                "results close to the published ones, asked about the curve's shape (report b23-08)",
                (),
                ("succeeded", "healthy"),
                console=(
                    "I am getting results which are close to the published results, however the "
                    "validation loss curve looks a bit strange;",
                ),
            ),
            Case(
                "results not close to the paper's",
                (),
                None,
                console=("My results are not close to the published results.",),
            ),
            Case(
                "a 5% gap is not noise",
                (),
                None,
                params={"reported by the repository": "mAP 74.0", "this run": "mAP 70.3"},
            ),
            Case(
                "a loss curve is judged by its rules",
                (),
                None,
                params={"reported by the repository": "mAP 74.0", "this run": "mAP 73.5"},
                series=_LOSS,
            ),
        ),
    ),
    Rule(
        "V19e",
        "at-uniform-guess",
        199,
        "a classifier's training loss (>= 3 points) starts and ends at >= 0.9 ln K (K from the task's class "
        "count), and the last held-out loss too when logged; data_config when a held-out accuracy never beat "
        "chance by 25% of the way to 1.0; not on a run stopped short; a language model's K is its vocabulary "
        "(an LM head named), its first loss then unbounded above (an early blow-up)",
        (Outcome.UNDERFIT,),
        (Cause.MODEL_CONVERGENCE, Cause.DATA_CONFIG),
        _at_uniform_guess,
        cases=(
            Case(
                "no class count stated: train loss 0.6936 -> 0.688, val loss 0.6967 -> 0.7014 (ln 2)",
                (),
                ("underfit", "model_convergence"),
                series={"loss": (0.6936, 0.690, 0.688), "val_loss": (0.6967, 0.699, 0.701, 0.7014)},
            ),
            Case(
                "3 classes, loss 1.096 -> 1.033 (ln 3 = 1.099)",
                (),
                ("underfit", "model_convergence"),
                series={"loss": (1.096, 1.084, 1.033)},
                params={"num_labels": "3"},
            ),
            Case(
                "binary, val accuracy 0.56 at best",
                (),
                ("underfit", "data_config"),
                series={"loss": (0.86, 0.84, 0.82), "val_acc": (0.555, 0.56, 0.555)},
                params={"num_labels": "2"},
            ),
            Case(
                "3 classes, loss 1.10 -> 0.40",
                (),
                None,
                series={"loss": (1.10, 0.8, 0.4)},
                params={"num_labels": "3"},
            ),
        ),
    ),
    Rule(
        "V19m",
        "stopped-at-iteration-cap",
        200,
        "a finished run with a judgeable signal and no finding at error whose library states that its solver "
        "reached its iteration cap before its tolerance (scikit-learn's max_iter ConvergenceWarning family), "
        "with the training loss (>= 8 points) still falling at the end (last-quarter median below the third "
        "quarter's, the last point within that fall of the minimum): stopped while still learning",
        (Outcome.UNDERFIT,),
        (Cause.MODEL_CONVERGENCE,),
        _stopped_at_iteration_cap,
        cases=(
            Case(
                "MLPClassifier(max_iter=15): loss 0.664 -> 0.550, still falling (newuser11)",
                (),
                ("underfit", "model_convergence"),
                series={
                    "loss": (0.664, 0.653, 0.643, 0.633, 0.624, 0.615, 0.606, 0.598, 0.590, 0.550)
                },
                console=(
                    "sklearn/neural_network/_multilayer_perceptron.py:785: ConvergenceWarning: Stochastic "
                    "Optimizer: Maximum iterations (15) reached and the optimization hasn't converged yet.",
                ),
            ),
            Case(
                "the warning, the loss flat at its floor",
                (),
                None,
                series={"loss": (0.9, 0.5, 0.3, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2)},
                console=(
                    "ConvergenceWarning: Stochastic Optimizer: Maximum iterations (200) reached and the "
                    "optimization hasn't converged yet.",
                ),
            ),
            Case("a falling loss, no warning", (), None, series=_LOSS),
        ),
    ),
    Rule(
        "V19k",
        "symptom-stated",
        201,
        "no judgeable curve, no finding at error, no maintainer's sentence that it is expected; a sentence "
        "of the report (not a maintainer's; not a question, negated, conditional or hedged) states the "
        "symptom: a loss or gradient norm non-finite -> diverged; a training figure stuck, unchanged, not "
        "going down or not converging -> plateaued; a task metric very low/bad -> underfit, at zero (below "
        "chance: its measurement is broken) -> unknown; a "
        "throughput or step time at two figures, worse by more than 30% (SY001's threshold) -> slow; memory "
        "stated to grow over the run or a leak named, with no out-of-memory or kill stated and no capacity "
        "explanation -> running (unknown for a finished run), correctness_bug (V01b's leak before it ends "
        "the run). The "
        "cause the thread states (V20's reading; a thread saying nothing failed overrules the symptom), else "
        "model_convergence (diverged, plateaued), data_config (a task metric at zero: V11's reading), infra_runtime "
        "(slow), inconclusive (underfit)",
        (
            Outcome.DIVERGED,
            Outcome.PLATEAUED,
            Outcome.UNDERFIT,
            Outcome.SLOW,
            Outcome.RUNNING,
            Outcome.UNKNOWN,
        ),
        (
            Cause.MODEL_CONVERGENCE,
            Cause.DATA_CONFIG,
            Cause.INFRA_RUNTIME,
            Cause.CORRECTNESS_BUG,
            Cause.INCONCLUSIVE,
        ),
        _symptom_stated,
        cases=(
            Case(
                "the reward stuck around 145, told in words (report b30-04)",
                (),
                ("plateaued", "model_convergence"),
                params={
                    "reporter": "I noticed that Pytorch implementation does not manage to solve CartPole "
                    "environment with the default config (the reward is stuck around 145)."
                },
            ),
            Case(
                "accuracy always zero while the loss falls (report b11-09)",
                (),
                ("unknown", "data_config"),
                params={
                    "reporter": "Hi, I'm getting lowering loss scores across epochs, but accuracy is "
                    "always zero."
                },
            ),
            Case(
                "from 2.9 it/s to 1.6 it/s after an update (report b32-06)",
                (),
                ("slow", "infra_runtime"),
                console=("- RGT: from 2.9 it/s to 1.6 it/s",),
                params={"reporter": "Today I updated and noticed a huge drop in performance."},
            ),
            Case(
                "a few percent slower is no slowdown",
                (),
                None,
                console=("- RGT: from 2.9 it/s to 2.7 it/s",),
                params={"reporter": "Today I updated and noticed a small drop in performance."},
            ),
            Case(
                "a question states nothing",
                (),
                None,
                params={"reporter": "Is the loss stuck around 4.9 because of the vocabulary?"},
            ),
            Case(
                "host memory growing within an epoch, no kill yet (report b44-06)",
                (),
                ("unknown", "correctness_bug"),
                params={
                    "reporter": "I found that memory usage is growing slowly (from 21G to 38G in one "
                    "epoch)."
                },
            ),
            Case(
                "a run's own log line states its stopping rule, not a symptom (own f17b2-06)",
                (),
                None,
                console=("Training until validation scores don't improve for 50 rounds",),
            ),
            Case(
                "the maintainer's explanation is no observation",
                (),
                None,
                params={"maintainer NAME": "If the loss stays at 4.9 the vocabulary is too large."},
            ),
        ),
    ),
    Rule(
        "V20b",
        "two-points-improved",
        202,
        "no judgeable curve: every learning series holds two values at two steps; every loss fell and no "
        "accuracy or score fell, no held-out accuracy at or below chance, no error or runtime signature, "
        "the run not stopped short, interrupted, running or failed and its end not left open (one epoch "
        "with no plan, a progress bar with time to go); its end shown by a finished status, the plan "
        "reached, an end line or a held-out record after the last training record -> succeeded, healthy "
        "(a lower confidence: two points)",
        (Outcome.SUCCEEDED,),
        (Cause.HEALTHY,),
        _two_points,
        cases=(
            Case(
                "Lightning CSV, two epochs: train 0.210 -> 0.195, val 0.216 -> 0.144 (own f13b1-04)",
                (),
                ("succeeded", "healthy"),
                series={"train_loss": (0.2101, 0.1950), "val_loss": (0.2156, 0.1437)},
                status="unknown",
            ),
            Case(
                "two training records, no evaluation, no plan, no final status (own f15b1-02)",
                (),
                None,
                series={"train_loss": (0.7029, 0.6521), "train_acc": (0.5625, 0.75)},
                status="unknown",
            ),
            Case(
                "the held-out loss rose between the two records",
                (),
                None,
                series={"train_loss": (1.2307, 0.4579), "val_loss": (0.4291, 0.5248)},
            ),
            Case(
                "one point per metric",
                (),
                None,
                series={"loss": (0.3,), "val_loss": (0.4,)},
            ),
        ),
    ),
    Rule(
        "V20c",
        "fit-final-scores",
        203,
        "no judgeable curve, no error or runtime signature, not stopped short; a tree ensemble (a tree "
        "library's parameter or console line) that the tracker marks finished, with one final training and "
        "held-out value of the same 0-1 score: training 10 points or more above held-out -> overfit, "
        "model_convergence; else a held-out score 25% of the way from chance to 1.0 or more -> succeeded, "
        "healthy",
        (Outcome.OVERFIT, Outcome.SUCCEEDED),
        (Cause.MODEL_CONVERGENCE, Cause.HEALTHY),
        _final_scores,
        cases=(
            Case(
                "XGBoost, FINISHED: r2_train 0.958, r2_val 0.722 (own f18b2-05)",
                (),
                ("overfit", "model_convergence"),
                series={"r2_train": (0.9578,), "r2_val": (0.7218,)},
                params={"colsample_bytree": "0.8", "n_estimators": "100"},
            ),
            Case(
                "LightGBM, FINISHED: train r2 0.961, valid r2 0.958 (own f17b2-06)",
                (),
                ("succeeded", "healthy"),
                series={"train/r2": (0.9614,), "valid/r2": (0.9582,)},
                params={"model.params.boosting_type": "gbdt"},
            ),
            Case(
                "a network's final values: no tree library named",
                (),
                None,
                series={"train_accuracy": (0.948,), "test_accuracy": (0.943,)},
            ),
        ),
    ),
    Rule(
        "V20d",
        "finished-plan-heldout-accuracy",
        204,
        "no judgeable curve, no error or runtime signature, not stopped short, not a report; the tracker marks "
        "the run finished, it reached its planned length, and its last held-out top-1 accuracy beat chance "
        "(1/K, K known) by 25% of the way to 1.0 -> succeeded, healthy",
        (Outcome.SUCCEEDED,),
        (Cause.HEALTHY,),
        _planned_accuracy,
        cases=(
            Case(
                "HF Trainer, 1 of 1 epochs, 5 labels, eval accuracy 0.84 then 0.80 (own f18b2-12)",
                (),
                ("succeeded", "healthy"),
                series={"eval/accuracy": (0.84, 0.80), "train/epoch": (0.8, 0.96)},
                params={"num_train_epochs": "1", "num_labels": "5"},
            ),
            Case(
                "no planned length",
                (),
                None,
                series={"train_accuracy": (0.948,), "test_accuracy": (0.943,)},
                params={"num_labels": "10"},
            ),
        ),
    ),
    Rule(
        "V20e",
        "finished-final-values",
        205,
        "no judgeable curve, no error or runtime signature, not stopped short, interrupted, running, failed or "
        "killed, not a report; an end-of-training line or the Trainer's end summary shows the loop returned, "
        "and the last training loss is 20% below the run's mean loss or every held-out score beat chance by "
        "25% of the way to 1.0 -> succeeded, healthy",
        (Outcome.SUCCEEDED,),
        (Cause.HEALTHY,),
        _finished_values,
        cases=(
            Case(
                "scikit-learn fit: val accuracy 0.918, test 0.896, 'Training finished and model saved' (own "
                "f20b1-10)",
                (),
                ("succeeded", "healthy"),
                series={"val/accuracy": (0.9182,), "test/accuracy": (0.8955,)},
                console=("INFO Training finished and model saved: stress_model.joblib",),
            ),
            Case(
                "W&B summary of an HF fine-tune: last loss 0.338, mean 0.529, train_runtime (own f19b1-16)",
                (),
                ("succeeded", "healthy"),
                params={
                    "summary.train/loss": "0.338",
                    "summary.train/train_loss": "0.5294",
                    "summary.train/train_runtime": "13155.4",
                },
            ),
            Case(
                "a held-out accuracy at chance after the end line",
                (),
                None,
                series={"val/accuracy": (0.52,)},
                console=("Training finished.",),
            ),
            Case(
                "a training loss printed 0.0000 beside the end line (own f24b2-13)",
                (),
                None,
                series={"train/loss": (0.0,), "val/accuracy": (0.8673,)},
                console=("Training finished. Best threshold: 0.9474",),
            ),
            Case(
                "no end-of-training record: a FINISHED status alone (own mlf01)",
                (),
                None,
                series={"train_accuracy": (0.948,), "test_accuracy": (0.943,)},
            ),
        ),
    ),
    Rule(
        "V20g",
        "ended-still-descending",
        206,
        "a run the healthy reading would call succeeded, not a report, no accuracy "
        "logged; its held-out loss (>= 8 points, else its training loss) positive, falling at each of its "
        "last 3 intervals and in its last quarter at >= half its average pace per quarter, and < 50% below its "
        "first value: underfit, model_convergence",
        (Outcome.UNDERFIT,),
        (Cause.MODEL_CONVERGENCE,),
        _ended_descending,
        cases=(
            Case(
                "val_loss 2.27 -> 1.88 in 10 epochs, falling at every one (own f6b1-10)",
                (),
                ("underfit", "model_convergence"),
                series={
                    "val_loss": (2.274, 2.26, 2.22, 2.17, 2.12, 2.06, 2.01, 1.96, 1.91, 1.877),
                },
            ),
            Case(
                "a bending curve: 2.3 -> 1.4, flat at its end",
                (),
                None,
                series={"val_loss": tuple(1.3 + 1.0 * 0.7**i for i in range(12))},
            ),
            Case(
                "still falling, but an accuracy is logged: it judges",
                (),
                None,
                series={
                    "val_loss": (2.274, 2.26, 2.22, 2.17, 2.12, 2.06, 2.01, 1.96, 1.91, 1.877),
                    "val_acc": (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9),
                },
            ),
        ),
    ),
    Rule(
        "V20h",
        "task-metric-unlearned",
        207,
        "a run the healthy reading would call succeeded, not a report or a paste; a held-out ROC AUC (not "
        "a precision-recall AUC) over >= 3 evaluations never above 0.625 and on average within 0.125 of "
        "0.5 (never 25% of the way from chance to 1.0), or a 0-1 task metric (held-out, else training "
        "accuracy role) over >= 8 evaluations whose best is below 0.25 and whose range is <= 5% of its "
        "headroom while the loss (held-out with >= 8 points, else training) fell >= 5% of its first "
        "value, or a held-out task metric over >= 8 evaluations with its best below 0.25, reached in its "
        "last quarter, still gaining in its last quarter >= half its average gain per quarter (V20g's "
        "pace, mirrored): underfit, model_convergence",
        (Outcome.UNDERFIT,),
        (Cause.MODEL_CONVERGENCE,),
        _task_unlearned,
        cases=(
            Case(
                "val AUC 0.48, 0.49, 0.37, 0.53 over 4 epochs (own f26b2-12)",
                (),
                ("underfit", "model_convergence"),
                series={
                    "train_loss": (0.6947, 0.6939, 0.6927, 0.6907),
                    "val_loss": (0.6933, 0.6960, 0.6924, 0.6929),
                    "val_auc": (0.4805, 0.4919, 0.3718, 0.5276),
                },
            ),
            Case(
                "token accuracy 0.049-0.068 over 12 epochs while the loss falls 11.2 -> 8.7 (own f26b1-01)",
                (),
                ("underfit", "model_convergence"),
                series={
                    "train_loss": (
                        11.23,
                        10.9,
                        10.6,
                        10.3,
                        10.0,
                        9.8,
                        9.6,
                        9.4,
                        9.2,
                        9.0,
                        8.8,
                        8.66,
                    ),
                    "train_accuracy": (
                        0.049,
                        0.066,
                        0.066,
                        0.066,
                        0.067,
                        0.067,
                        0.067,
                        0.067,
                        0.067,
                        0.068,
                        0.068,
                        0.068,
                    ),
                },
            ),
            Case(
                "mAP50-95 0.04 -> 0.14 over 15 of 15 epochs, still climbing (own f26b1-08)",
                (),
                ("underfit", "model_convergence"),
                series={
                    "train/box_loss": tuple(1.742 - 0.0357 * i for i in range(15)),
                    "val/box_loss": tuple(1.905 - 0.041 * i for i in range(15)),
                    "metrics/mAP50-95(B)": (
                        0.042,
                        0.035,
                        0.030,
                        0.051,
                        0.062,
                        0.080,
                        0.089,
                        0.097,
                        0.110,
                        0.114,
                        0.118,
                        0.126,
                        0.131,
                        0.136,
                        0.138,
                    ),
                },
            ),
            Case(
                "a val AUC that rose to 0.81",
                (),
                None,
                series={
                    "train_loss": (0.69, 0.60, 0.52, 0.45),
                    "val_loss": (0.69, 0.62, 0.55, 0.50),
                    "val_auc": (0.52, 0.66, 0.75, 0.81),
                },
            ),
            Case(
                "an accuracy that rose 0.10 -> 0.22 over 8 evaluations",
                (),
                None,
                series={
                    "train_loss": (2.3, 2.2, 2.1, 2.0, 1.95, 1.9, 1.85, 1.8),
                    "train_accuracy": (0.10, 0.12, 0.14, 0.16, 0.18, 0.20, 0.21, 0.22),
                },
            ),
        ),
    ),
    Rule(
        "V20",
        "no-judgeable-signal",
        208,
        "no learning series with >= 3 finite points that a learning detector examined (no recognised "
        "loss/validation metric, only summary values, hp_metric only); running when the tracker says so or "
        "the console ends inside a progress bar with time still to go; running when the input is a checkpoint's "
        "state saved before its planned end (no failure signature, not a report), healthy when its held-out "
        "top-1 accuracy beat chance (1/K, K known) by 25% of the way to 1.0, else inconclusive; unknown, healthy when the console's only "
        "signatures are benign warnings (a solver at max_iter, a leaf with no gainful split) and no finding is at "
        "warning or above; with no finding at error, the cause the report's thread states (the object of its "
        "stated cause, confirmed fix or a maintainer's acknowledgement: the stack or the machine -> "
        "infra_runtime, the code -> correctness_bug, the learning rate or its warm-up -> model_convergence "
        "(data_config when the statement names it with the run's scale, GPUs or batch size, and nothing "
        "diverged), a setting, the recipe or the data -> data_config; a maintainer's sentence that nothing failed: noise, "
        "already good, another scale, an outdated reference, a warning to ignore -> healthy); else, with no finding at warning or above, a console "
        "that ends with an announced early stop (no epoch after it, within its last 30 lines) -> unknown, healthy",
        (Outcome.UNKNOWN, Outcome.RUNNING),
        (
            Cause.INCONCLUSIVE,
            Cause.HEALTHY,
            Cause.INFRA_RUNTIME,
            Cause.CORRECTNESS_BUG,
            Cause.DATA_CONFIG,
            Cause.MODEL_CONVERGENCE,
        ),
        _no_signal,
        cases=(
            Case(
                "HF checkpoint-500 of max_steps 1170, 4 labels, one eval accuracy 0.83 (own f22b2-05)",
                (),
                ("running", "healthy"),
                status="unknown",
                series={"loss": (0.6628,), "eval_accuracy": (0.8256,), "eval_loss": (0.7639,)},
                params={"max_steps": "1170", "global_step": "500", "num_labels": "4"},
                notes=(
                    "checkpoint snapshot at step 500 of max_steps 1170: a checkpoint is saved mid-run",
                ),
            ),
            Case(
                "HF checkpoint-2000 of max_steps 5000, two loss records (own f15b2-01)",
                (),
                ("running", "inconclusive"),
                status="unknown",
                series={"loss": (2.4526, 2.3638)},
                params={"max_steps": "5000", "global_step": "2000"},
                notes=(
                    "checkpoint snapshot at step 2000 of max_steps 5000: a checkpoint is saved mid-run",
                ),
            ),
            Case(
                "the log ends with AllenNLP's early stop and its final metrics (report b29-07)",
                (),
                ("unknown", "healthy"),
                console=(
                    "INFO - allennlp.training.trainer - Ran out of patience.  Stopping training.",
                    "INFO - allennlp.training.checkpointer - loading best weights",
                    'INFO - allennlp.common.util - Metrics: { "best_epoch": 12 }',
                ),
            ),
            Case(
                "accuracy below the paper's; the author found a bug in the eval function (report b25-06)",
                (),
                ("unknown", "correctness_bug"),
                params={
                    "reporter NAME": "I'm getting best test accuracy of around 53.6%.",
                    "author NAME (later)": "I found the bug. Just comment these two lines: "
                    "src/train_and_evaluate.py#L379-L380. It seems that there's sth wrong with the eval "
                    "function.",
                },
            ),
            Case(
                "the maintainer: a mismatch with the hyper-parameters (report b21-01)",
                (),
                ("unknown", "data_config"),
                params={
                    "maintainer NAME": "There was a mismatch with the hyper-parameters (namely batch size). "
                    "Now it should be fixed."
                },
            ),
            Case(
                "WER differences called random noise by the maintainer (report b25-09)",
                (),
                ("unknown", "healthy"),
                params={
                    "maintainer NAME": "So I think any WER differences here are just random noise, and it "
                    "should be OK to merge this."
                },
            ),
            Case(
                "the maintainer only wonders whether the dataset is wrong",
                (),
                ("unknown", "inconclusive"),
                params={"maintainer NAME": "Maybe there is something wrong with the dataset?"},
            ),
            Case("hp_metric only", (), ("unknown", "inconclusive"), series={"hp_metric": (0.5,)}),
            Case(
                "only LightGBM's no-gain warnings in the console (report b13-16)",
                (),
                ("unknown", "healthy"),
                console=(
                    "[LightGBM] [Warning] No further splits with positive gain, best gain: -inf",
                ),
            ),
            Case(
                "one point per metric",
                (),
                ("unknown", "inconclusive"),
                series={"loss": (0.3,), "val_loss": (0.4,)},
            ),
            Case("a loss curve", (), None, series=_LOSS),
        ),
    ),
    Rule(
        "V21",
        "healthy",
        210,
        "a judgeable training signal examined and no rule above fired (recurring "
        "grad-norm spikes or growth, OP006, named as contradicting signals and lowering the confidence); unknown when "
        "a training loss of < 4 points ended at >= 2x its first value with no held-out series (4-9 points: "
        "diverged when its last two points are both >= 2x its first, unstable when only its last is; "
        "model_convergence), or when every "
        "record sits in one epoch with no planned length (or a plan of one epoch and no evaluation after the "
        "last training record), end line or finished status; crashed (inconclusive: stopped, who and why "
        "not in the data) when the learning rate still rose at the last logged step and no planned length "
        "was logged (the run ended inside its warm-up), or when every record sits in one epoch and a "
        "Lightning <name>_step series has no <name>_epoch twin (no epoch ever ended); running (healthy so "
        "far) when the input is a mid-run snapshot below its planned length or its console ends inside a "
        "progress bar with time still to go (a log captured while the run was going); metric_policy when the "
        "run keeps its checkpoint by a held-out loss whose rise GE001 found while the task metric kept improving "
        "to the end (best_metric at that loss's minimum); unknown when the only training losses are an "
        "adversarial game's players' (a discriminator's and a generator's) and no held-out metric is logged",
        (
            Outcome.SUCCEEDED,
            Outcome.RUNNING,
            Outcome.CRASHED,
            Outcome.UNKNOWN,
            Outcome.DIVERGED,
            Outcome.UNSTABLE,
        ),
        (Cause.HEALTHY, Cause.INCONCLUSIVE, Cause.METRIC_POLICY, Cause.MODEL_CONVERGENCE),
        _healthy,
        cases=(
            Case("a decreasing loss", (), ("succeeded", "healthy"), series=_LOSS),
            Case(
                "a seed rerun within the band of the earlier run in the same log (BL001 info)",
                (
                    (
                        "BL001",
                        _I,
                        {
                            "metric": "val/loss",
                            "n_baselines": 1,
                            "rel_delta": 0.07,
                            "baseline_ids": ["train.log#run-1"],
                            "verdict": "insufficient_seeds",
                        },
                    ),
                ),
                ("succeeded", "healthy"),
                series=_LOSS,
            ),
            Case(
                "a decreasing loss, grad-norm spikes of 10x+ recurring (OP006)",
                (("OP006", _W, {"recurring_spikes": 18}),),
                ("succeeded", "healthy"),
                series=_LOSS,
            ),
            Case("running", (), ("running", "inconclusive"), series=_LOSS, status="running"),
            Case(
                "3 loss points ending at 8.6x the first, no held-out series",
                (),
                ("unknown", "inconclusive"),
                series={"loss": (2.547, 1.077, 21.9)},
            ),
            Case(
                "6 loss points 4.31 -> 1.44 -> 13.83, the last two above 2x the first",
                (),
                ("diverged", "model_convergence"),
                series={"loss": (4.31, 1.44, 7.08, 15.06, 16.02, 13.83)},
            ),
            Case(
                "7 loss points, only the last above 2x the first",
                (),
                ("unstable", "model_convergence"),
                series={"loss": (0.66, 0.80, 4.27, 0.77, 0.56, 0.82, 6.66)},
            ),
            Case(
                "ended inside its warmup, no planned length",
                (),
                ("crashed", "inconclusive"),
                series={"loss": _LOSS["loss"][:6], "lr": (1e-6, 2e-6, 3e-6, 4e-6, 5e-6, 6e-6)},
            ),
            Case(
                "every record in epoch 0, no end line, status unknown",
                (),
                ("unknown", "inconclusive"),
                series={"loss": (10.9, 10.1, 9.4, 8.9, 8.4), "epoch": (0, 0, 0, 0, 0)},
                status="unknown",
            ),
            Case(
                "every record in epoch 0, Lightning's train_loss_step without train_loss_epoch",
                (),
                ("crashed", "inconclusive"),
                series={
                    "train_loss_step": (0.61, 0.44, 0.2, 0.1, 0.1),
                    "epoch": (0, 0, 0, 0, 0),
                },
                status="unknown",
            ),
            Case(
                "every record in epoch 0, tracker says finished",
                (),
                ("succeeded", "healthy"),
                series={"loss": (10.9, 10.1, 9.4, 8.9, 8.4), "epoch": (0, 0, 0, 0, 0)},
            ),
            Case(
                "ended inside its warmup, planned length reached",
                (),
                ("succeeded", "healthy"),
                series={"loss": _LOSS["loss"][:6], "lr": (1e-6, 2e-6, 3e-6, 4e-6, 5e-6, 6e-6)},
                params={"max_steps": "5"},
            ),
            Case(
                "trainer_state checkpoint at step 49 of 1250, healthy so far",
                (),
                ("running", "healthy"),
                series=_LOSS,
                params={"max_steps": "1250"},
                notes=(
                    "checkpoint snapshot at step 49 of max_steps 1250: a checkpoint is saved mid-run",
                ),
            ),
        ),
    ),
)


def first_match(c: Ctx) -> Decision:
    """The decision of the first rule (by precedence) that matches."""
    for rule in sorted(POLICY, key=lambda r: r.precedence):
        d = rule.apply(c)
        if d is not None:
            return d
    raise AssertionError("the healthy rule always matches")  # pragma: no cover


def table_markdown() -> str:
    """The policy as a Markdown table (docs/index.md)."""
    rows = ["| # | rule | needs | outcome | cause |", "|---|---|---|---|---|"]
    for r in sorted(POLICY, key=lambda r: r.precedence):
        rows.append(
            f"| {r.id} | {r.name} | {r.needs} | {', '.join(o.value for o in r.outcomes)} | "
            f"{', '.join(c.value for c in r.causes) if len(r.causes) < 6 else 'from BL003'} |"
        )
    return "\n".join(rows)
