"""The end-of-batch summary: outcome and cause counts, the worst runs, the unreadable runs."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..redact import redact_text
from ..report import Outcome, Severity
from .task import RunResult

#: Outcomes from worst to best, in the order of the verdict policy's rules ("first broken
#: layer": a crash outranks a divergence, which outranks a slow run; docs/index.md).
OUTCOME_ORDER = [
    Outcome.CRASHED,
    Outcome.DIVERGED,
    Outcome.REGRESSED,
    Outcome.UNSTABLE,
    Outcome.OVERFIT,
    Outcome.UNDERFIT,
    Outcome.PLATEAUED,
    Outcome.SLOW,
    Outcome.RUNNING,
    Outcome.UNKNOWN,
    Outcome.SUCCEEDED,
]
_RANK = {o.value: i for i, o in enumerate(OUTCOME_ORDER)}
_SEV = {s.value: s.rank for s in Severity}


def badness(r: RunResult) -> tuple:
    """Sort key, worst first: highest finding severity, then outcome order, then confidence."""
    return (
        -_SEV.get(r.severity or "", -1),
        _RANK.get(r.outcome or "", len(_RANK)),
        -(r.confidence or 0),
    )


@dataclass
class BatchSummary:
    """Counts over every run of a batch (earlier sessions of a resumed batch included)."""

    title: str
    results: list[RunResult]
    from_earlier: int = 0
    seconds: float = 0.0
    audited_now: int = 0
    timings: dict = field(default_factory=dict)  # stage -> seconds, this session (timing.py)
    outcomes: Counter = field(default_factory=Counter)
    causes: Counter = field(default_factory=Counter)

    def __post_init__(self) -> None:
        for r in self.ok:
            self.outcomes[r.outcome or "unknown"] += 1
            self.causes[r.cause or "unknown"] += 1

    @property
    def ok(self) -> list[RunResult]:
        return [r for r in self.results if r.ok]

    @property
    def failed(self) -> list[RunResult]:
        return [r for r in self.results if not r.ok]

    def worst(self, n: int = 10) -> list[RunResult]:
        """Up to ``n`` audited runs that did not simply succeed, worst first."""
        bad = [
            r
            for r in self.ok
            if r.outcome != Outcome.SUCCEEDED.value
            or _SEV.get(r.severity or "", -1) >= Severity.WARNING.rank
        ]
        return sorted(bad, key=badness)[:n]


def _safe(text: str | None) -> str:
    """Run-controlled text for the terminal: credentials redacted, control characters (ESC
    sequences that clear or retitle a terminal) shown as ``\\xNN``, Rich markup escaped."""
    return escape(redact_text(text or ""))


def render_summary(s: BatchSummary, console: Console, worst_n: int = 10) -> None:
    """Print the summary tables (run names, refs and reasons redacted and escaped)."""
    rate = f", {s.audited_now / s.seconds:.1f} runs/s" if s.seconds > 0 and s.audited_now else ""
    head = (
        f"{_safe(s.title)}: {len(s.results)} runs, {len(s.ok)} audited, "
        f"{len(s.failed)} unreadable or failed"
    )
    if s.from_earlier:
        head += f" ({s.from_earlier} settled in an earlier session, from the state file)"
    console.print(f"[bold]{head}[/]")
    console.print(f"this session: {s.audited_now} runs in {s.seconds:.1f} s{rate}", highlight=False)

    if s.outcomes:
        t = Table(title="Outcomes", title_justify="left")
        t.add_column("outcome")
        t.add_column("runs", justify="right")
        for o, n in sorted(s.outcomes.items(), key=lambda kv: _RANK.get(kv[0], 99)):
            t.add_row(o, str(n))
        c = Table(title="Causes", title_justify="left")
        c.add_column("cause")
        c.add_column("runs", justify="right")
        for cause, n in s.causes.most_common():
            c.add_row(cause, str(n))
        console.print(t)
        console.print(c)

    worst = s.worst(worst_n)
    if worst:
        w = Table(title=f"Worst runs (top {len(worst)})", title_justify="left")
        for col in ("run", "name", "outcome", "cause", "confidence", "codes"):
            w.add_column(col, overflow="fold")
        for r in worst:
            w.add_row(
                _safe(r.ref),
                _safe(r.name),
                r.outcome or "",
                r.cause or "",
                f"{r.confidence:.2f}" if r.confidence is not None else "",
                ",".join(r.codes),
            )
        console.print(w)

    if s.failed:
        f = Table(title=f"Unreadable or failed runs ({len(s.failed)})", title_justify="left")
        f.add_column("run", overflow="fold")
        f.add_column("reason", overflow="fold")
        for r in s.failed:
            f.add_row(_safe(r.ref), _safe(r.error or "unknown error"))
        console.print(f)

    from .timing import split_line

    split = split_line(s.timings, s.audited_now)
    if split:  # footer: where this session's time went, summed over worker threads
        console.print(f"[dim]{split}; summed over worker threads[/]", highlight=False)
