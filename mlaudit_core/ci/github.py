"""Where CI users look: a GitHub Actions job summary and annotations for the failing gate, and
a Buildkite build annotation.

* :func:`step_summary` renders the Markdown written (appended) to the file named by
  ``GITHUB_STEP_SUMMARY`` (GitHub's job summary; 1 MiB per step, so the text is capped at
  :data:`SUMMARY_LIMIT` bytes).
* :func:`annotations` renders workflow commands ``::error file=F,line=N,title=T::message``
  for each failing gate (file and line of the comparison in the repository), escaped as
  GitHub documents: ``%``, ``\\r``, ``\\n`` in the message as ``%25``, ``%0D``, ``%0A``, and
  also ``:`` and ``,`` in properties as ``%3A``, ``%2C``.

* :func:`buildkite_style` picks the style of the Buildkite annotation (``buildkite-agent
  annotate --style error|warning|info|success``) whose body is the same Markdown (Buildkite
  renders CommonMark with GitHub's extensions, 1 MiB per annotation).

All read only the finished :class:`~mlaudit_core.report.AuditReport` (already redacted).
"""

from ..detectors import detector_for
from ..report import AuditReport
from ..signal import fmt

#: GitHub's job summary limit per step is 1 MiB; stay under it.
SUMMARY_LIMIT = 1_000_000


def _esc_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _esc_prop(s: str) -> str:
    return _esc_data(s).replace(":", "%3A").replace(",", "%2C")


def failing_gates(report: AuditReport) -> list[dict]:
    """Each failing gate: ``{"path", "line", "metric", "kind", "detail"}`` (active checks that
    fail by recomputation, timing gates that failed, and the failing test's comparison when
    its values could not be loaded)."""
    out: list[dict] = []
    seen = set()
    for f in report.findings:
        for metric, c in detector_for(f.code).failing_gates(f):
            key = (c.get("path"), c.get("line"))
            if key in seen or not c.get("path"):
                continue
            seen.add(key)
            out.append(
                {
                    "path": c["path"],
                    "line": c.get("line") or 1,
                    "metric": metric,
                    "kind": c.get("kind"),
                    "detail": c.get("detail", ""),
                }
            )
    if out:
        return out
    # no recomputed gate failed: the job timeout's line, else the failed tests' comparisons
    by = {f.code: f for f in report.findings}
    gates = by["CI001"].facts.get("gates", []) if "CI001" in by else []
    timing = by.get("CI005")
    if timing is not None and timing.facts.get("timeout"):
        out = [
            {
                "path": g["path"],
                "line": g["line"],
                "metric": None,
                "kind": "timeout",
                "detail": g.get("formula", ""),
            }
            for g in gates
            if g.get("kind") == "timeout"
        ][:1]
    if not out and "CI007" in by:
        failed = {
            t.split("::")[-1].split("[")[0] for t in by["CI007"].facts.get("failed_tests", [])
        }
        out = [
            {
                "path": g["path"],
                "line": g["line"],
                "metric": g.get("metric"),
                "kind": g["kind"],
                "detail": "its test failed; the comparison could not be recomputed",
            }
            for g in gates
            if g.get("function") in failed and g.get("kind") != "timeout"
        ]
    return out


def annotations(report: AuditReport, level: str = "error") -> list[str]:
    """Workflow-command lines for the failing gates (one ``::error`` per gate), or one
    annotation without a file when no gate could be located."""
    v = report.verdict
    title = f"mlaudit ci: {v.outcome.value} / {v.cause.value}"
    msg = v.summary
    if report.next_actions:
        msg += "\nNext: " + report.next_actions[0].action
    gates = failing_gates(report)
    if not gates:
        return [f"::{level} title={_esc_prop(title)}::{_esc_data(msg)}"]
    return [
        f"::{level} file={_esc_prop(g['path'])},line={int(g['line'])},title={_esc_prop(title)}::"
        + _esc_data(f"{g['metric'] or g['kind']}: {g['detail']}\n{msg}")
        for g in gates
    ]


def step_summary(report: AuditReport) -> str:
    """A compact Markdown job summary: verdict, the failing gates recomputed, next actions,
    and the full report folded in a ``<details>`` block."""
    from ..render import render_markdown

    v = report.verdict
    lines = [
        f"### mlaudit ci: **{v.outcome.value}** / **{v.cause.value}** "
        f"(confidence {fmt(v.confidence, 2)})",
        "",
        v.summary,
        "",
    ]
    rows = []
    for f in report.findings:
        for metric, c in detector_for(f.code).recomputed_gates(f):
            an = c.get("analysis") or {}
            state = "fails" if c.get("passed") is False else "passes" if c.get("passed") else "n/a"
            rows.append(
                f"| {metric} | {c.get('kind')} | `{c.get('path')}:{c.get('line')}` | "
                f"{state} | {an.get('n_outside', '')}{'/' + str(an['n']) if 'n' in an else ''} | "
                f"{fmt(an['max_rel'], 3) if an.get('max_rel') is not None else ''} | "
                f"{fmt(an['median_rel'], 3) if an.get('median_rel') is not None else ''} | "
                f"{an.get('sign', '')} |"
            )
    if rows:
        lines += [
            "| metric | gate | where | recomputed | outside | max rel | median rel | signs |",
            "|---|---|---|---|---|---|---|---|",
            *rows,
            "",
        ]
    if report.next_actions:
        lines.append("**Next actions**")
        lines += [f"1. {a.action} — {a.why}" for a in report.next_actions[:5]]
        lines.append("")
    if report.unknowns:
        lines.append("**Not known**: " + "; ".join(report.unknowns[:5]))
        lines.append("")
    head = "\n".join(lines)
    full = render_markdown(report)
    text = head + "\n<details><summary>Full report</summary>\n\n" + full + "\n</details>\n"
    if len(text.encode()) > SUMMARY_LIMIT:
        text = head + "\n(full report omitted: over GitHub's 1 MiB summary limit)\n"
    return text


def buildkite_style(report: AuditReport) -> str:
    """The annotation style for a verdict: ``error`` for a regression or a crash, ``warning``
    for anything not judged or slow, ``success`` when healthy, else ``info`` (a gate or drift
    problem: the model is fine, the gate needs a change)."""
    v = report.verdict
    if v.outcome.value in ("regressed", "crashed", "diverged") or v.cause.value in (
        "model_convergence",
        "correctness_bug",
    ):
        return "error"
    if v.cause.value == "healthy":
        return "success"
    if v.outcome.value in ("unknown", "slow") or v.cause.value == "inconclusive":
        return "warning"
    return "info"
