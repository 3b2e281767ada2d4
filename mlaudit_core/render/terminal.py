"""Compact colour summary for the terminal (rich)."""

from __future__ import annotations

from rich.console import Console, Group, RenderableType
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from ..report import AuditReport, Cause, Finding, Outcome

_COLOUR = {
    Outcome.SUCCEEDED: "green",
    Outcome.RUNNING: "cyan",
    Outcome.SLOW: "yellow",
    Outcome.PLATEAUED: "yellow",
    Outcome.UNSTABLE: "yellow",
    Outcome.UNDERFIT: "yellow",
    Outcome.UNKNOWN: "white",
}
_SEV = {"info": "dim", "warning": "yellow", "error": "red", "critical": "bold red"}


def _shown(f: Finding) -> bool:
    """A finding the terminal summary lists without ``--verbose``: a warning or worse, or a
    comparison with the baselines the user named (``--baseline``; BL001 says "within noise" or "not
    enough seeds" at info severity, and that answer is what the option was given for)."""
    return f.severity.rank >= 1 or f.family == "baseline"


def render_terminal(
    report: AuditReport, console: Console | None = None, verbose: bool = False
) -> None:
    """Print the verdict banner, top findings and next actions. Run strings are markup-escaped."""
    console = console or Console()
    v = report.verdict
    colour = _COLOUR.get(v.outcome, "red")
    if v.cause is Cause.HEALTHY:
        colour = "green"
    head = Text.assemble(
        (f" {v.outcome.value.upper()} ", f"bold reverse {colour}"),
        "  cause ",
        (v.cause.value, "bold"),
        f"  confidence {v.confidence:.2f}",
    )
    body: list[RenderableType] = [head, Text(v.summary)]
    t = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
    t.add_column("code")
    t.add_column("sev")
    t.add_column("finding", overflow="fold")
    shown = [f for f in report.findings if verbose or _shown(f)][:10]
    for f in shown:
        t.add_row(f.code, Text(f.severity.value, style=_SEV[f.severity.value]), Text(f.message))
    if shown:
        body.append(t)
    if report.next_actions:
        body.append(Text("Next actions:", style="bold"))
        for i, a in enumerate(report.next_actions[:3], 1):
            body.append(Text(f" {i}. {a.action} ({a.cost})"))
    if report.missing_instrumentation:
        body.append(
            Text(
                "Missing: " + "; ".join(m.signal for m in report.missing_instrumentation),
                style="dim",
            )
        )
    for w in report.warnings:
        body.append(Text(f"warning: {w}", style="yellow"))
    title = escape(f"{report.run.tracker}:{report.run.name or report.run.id}")
    console.print(Panel(Group(*body), title=title, title_align="left", border_style=colour))
