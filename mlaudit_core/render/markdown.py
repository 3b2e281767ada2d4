"""Markdown rendering through a jinja2 template, with run-controlled strings escaped."""

from __future__ import annotations

import math

import jinja2

from ..report import AuditReport

_SYSTEMS = {"systems"}
_LEARNING = {"integrity", "optimization", "generalization", "runtime", "baseline", "ci", "claims"}


def md_escape(value) -> str:
    """Escape for Markdown that may be rendered as HTML: tag openers, table pipes, newlines, backticks."""
    if value is None:
        return ""
    # Only "<" can open HTML in Markdown; entities decode to text, never to markup.
    s = str(value).replace("<", "&lt;").replace("[", "\\[").replace("]", "\\]")  # no live links
    return s.replace("|", "\\|").replace("\n", " ").replace("`", "'")


def _num(x) -> str:
    if x is None:
        return "n/a"
    if isinstance(x, float):
        return f"{x:.4g}" if math.isfinite(x) else str(x)
    return str(x)


def _evidence(e) -> str:
    k = e.kind
    if k == "series":
        rng = f" steps {e.step_start}–{e.step_end}" if e.step_start is not None else ""
        vals = ", ".join(f"{n}={_num(v)}" for n, v in e.values.items())
        return f"{md_escape(e.metric)}{rng}" + (f" ({md_escape(vals)})" if vals else "")
    if k == "log":
        return f"{md_escape(e.source)}:{e.line}: `{e.text.replace('`', chr(39))[:300]}`"
    if k == "config":
        return f"{md_escape(e.key)} = {md_escape(e.value)}"
    if k == "code":
        return f"{md_escape(e.path)}:{e.line}: `{e.text.replace('`', chr(39))[:300]}`"
    return md_escape(e.text) + (
        f" ({md_escape(', '.join(f'{n}={_num(v)}' for n, v in e.values.items()))})"
        if e.values
        else ""
    )


_env = jinja2.Environment(
    loader=jinja2.PackageLoader("mlaudit_core", "templates"),
    autoescape=False,
    keep_trailing_newline=True,
    trim_blocks=False,
    undefined=jinja2.StrictUndefined,
)
_env.filters.update(
    md=md_escape, num=_num, evidence=_evidence, code=lambda s: str(s).replace("`", "'")
)


def render_markdown(report: AuditReport) -> str:
    """The full report in the triage workflow's section order."""
    learning = [f for f in report.findings if f.family in _LEARNING]
    systems = [f for f in report.findings if f.family in _SYSTEMS]
    has_time = any(
        k in report.key_metrics for k in ("step_time", "data_time", "throughput", "gpu_util")
    )
    return _env.get_template("report.md.j2").render(
        r=report, learning=learning, systems=systems, has_time=has_time
    )


def render_summary_markdown(report: AuditReport, max_findings: int = 5) -> str:
    """A short Markdown summary (verdict + top findings + next action) for tracker descriptions."""
    v = report.verdict
    lines = [
        f"**mlaudit verdict: {v.outcome.value}** · cause **{v.cause.value}** · confidence "
        f"{v.confidence:.2f}",
        "",
        md_escape(v.summary),
        "",
    ]
    top = [f for f in report.findings if f.severity.rank >= 1][:max_findings]
    for f in top:
        lines.append(f"- `{f.code}` {f.severity.value}: {md_escape(f.message)}")
    if report.next_actions:
        lines += ["", f"Next: {md_escape(report.next_actions[0].action)}"]
    lines += ["", f"_mlaudit {report.tool_version}; full report in artifacts `mlaudit/`_"]
    return "\n".join(lines)
