"""The compact form of a report: what an agent needs first, inside a bounded token budget.

``mlaudit ... --format compact`` and the MCP audit tools' ``format: "compact"`` give:

* always: ``verdict``, ``cause``, ``confidence``, ``rule`` and the run;
* ``summary``: the verdict's summary, cut to at most a third of the budget (and
  :data:`SUMMARY_CHARS`), so that evidence and actions always get room;
* then, taken in turn (finding, action, finding, action, finding, unknown, ...) while they fit:
  ``evidence``, the findings at warning and above, most severe first, each as
  ``{"code", "severity", "cite", "text"}`` where ``cite`` is ``file:line`` for a log or code
  line, ``metric@steps A-B`` for a metric series, ``config KEY`` for a setting, and ``text`` the
  finding's message; ``next_actions`` in the report's order; ``unknowns`` (what the evidence
  could not decide). Each text is cut at :data:`ITEM_CHARS`; within a kind the order is kept
  (nothing after an item that did not fit).

``omitted`` counts what did not fit (findings, next actions, unknowns, and every info finding),
so an agent knows to ask for the full report (``format: "report"`` / ``--format json``).

Budget: ``budget_tokens`` (default :data:`DEFAULT_TOKENS`, at least :data:`MIN_TOKENS`) is
turned into characters of compact JSON (``separators=(",", ":")``) at :data:`CHARS_PER_TOKEN`
characters a token. OpenAI documents about 4 characters a token for English text; JSON full of
paths, codes and digits splits finer, so 3 is used to stay under the budget with common BPE
tokenizers. The output's compact JSON is never longer than ``budget_tokens * 3`` characters.
"""

from __future__ import annotations

import json
from typing import Any

SCHEMA = "mlaudit-compact/1"
DEFAULT_TOKENS = 400
MIN_TOKENS = 200
MAX_TOKENS = 8000
CHARS_PER_TOKEN = 3
SUMMARY_CHARS = 400
ITEM_CHARS = 180

#: JSON Schema of the compact form (the MCP tools' structured output with format "compact").
COMPACT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "schema": {"type": "string", "const": SCHEMA},
        "run": {"type": "string"},
        "verdict": {"type": "string"},
        "cause": {"type": "string"},
        "confidence": {"type": "number"},
        "rule": {"type": ["string", "null"]},
        "summary": {"type": "string"},
        "evidence": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "code": {"type": "string"},
                    "severity": {"type": "string"},
                    "cite": {"type": "string"},
                    "text": {"type": "string"},
                },
                "required": ["code", "severity", "cite", "text"],
                "additionalProperties": False,
            },
        },
        "next_actions": {"type": "array", "items": {"type": "string"}},
        "unknowns": {"type": "array", "items": {"type": "string"}},
        "omitted": {"type": "object", "additionalProperties": {"type": "integer"}},
        "budget_tokens": {"type": "integer"},
    },
    "required": [
        "schema",
        "run",
        "verdict",
        "cause",
        "confidence",
        "evidence",
        "next_actions",
        "omitted",
        "budget_tokens",
    ],
    "additionalProperties": False,
}


def _cut(text: str, n: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


def cite(finding) -> str:
    """Where a finding's evidence is: ``file:line`` (log or code line) first, else a metric
    series' steps, a config key, or the finding code alone."""
    from ..report import CodeEvidence, ConfigEvidence, LogEvidence, SeriesEvidence

    ev = list(finding.evidence)
    for e in ev:
        if isinstance(e, LogEvidence):
            return f"{e.source}:{e.line}"
        if isinstance(e, CodeEvidence):
            return f"{e.path}:{e.line}"
    for e in ev:
        if isinstance(e, SeriesEvidence):
            if e.step_start is None:
                return e.metric
            end = e.step_end if e.step_end is not None else e.step_start
            return (
                f"{e.metric}@step {end}"
                if end == e.step_start
                else f"{e.metric}@steps {e.step_start}-{end}"
            )
    for e in ev:
        if isinstance(e, ConfigEvidence):
            return f"config {e.key}"
    return finding.code


def _size(obj: dict) -> int:
    return len(json.dumps(obj, separators=(",", ":"), ensure_ascii=False))


def compact_report(report, budget_tokens: int = DEFAULT_TOKENS) -> dict[str, Any]:
    """The compact form of ``report`` (an :class:`~mlaudit_core.report.AuditReport`) within
    ``budget_tokens`` (clamped to ``MIN_TOKENS..MAX_TOKENS``); see the module docstring."""
    budget_tokens = max(MIN_TOKENS, min(MAX_TOKENS, int(budget_tokens)))
    limit = budget_tokens * CHARS_PER_TOKEN
    v, run = report.verdict, report.run
    name = f" ({_cut(run.name, 60)})" if run.name and run.name != run.id else ""
    findings = sorted(
        (f for f in report.findings if f.severity.rank >= 1), key=lambda f: -f.severity.rank
    )
    out: dict[str, Any] = {
        "schema": SCHEMA,
        "run": f"{run.tracker}:{_cut(run.id, 80)}{name}",
        "verdict": v.outcome.value,
        "cause": v.cause.value,
        "confidence": round(float(v.confidence), 2),
        "rule": v.rule,
        "summary": "",
        "evidence": [],
        "next_actions": [],
        "unknowns": [],
        "omitted": {
            "findings": len(findings),
            "next_actions": len(report.next_actions),
            "unknowns": len(report.unknowns),
            "info_findings": sum(1 for f in report.findings if f.severity.rank < 1),
        },
        "budget_tokens": budget_tokens,
    }
    # the summary takes at most a third of the budget, so evidence and actions always get room
    room = limit - _size(out)
    summary = _cut(v.summary, max(40, min(SUMMARY_CHARS, room // 3)))
    out["summary"] = summary if _size({**out, "summary": summary}) <= limit else ""
    queues: dict[str, list[Any]] = {
        "evidence": [
            {
                "code": f.code,
                "severity": f.severity.value,
                "cite": _cut(cite(f), 120),
                "text": _cut(f.message, ITEM_CHARS),
            }
            for f in findings
        ],
        "next_actions": [_cut(a.action, ITEM_CHARS) for a in report.next_actions],
        "unknowns": [_cut(u, ITEM_CHARS) for u in report.unknowns],
    }
    omitted_key = {"evidence": "findings", "next_actions": "next_actions", "unknowns": "unknowns"}
    # round robin in priority order: finding, action, finding, action, finding, unknown, ...
    order = ["evidence", "next_actions", "evidence", "next_actions", "evidence", "unknowns"]
    closed: set[str] = set()
    while len(closed) < len(queues):
        progressed = False
        for key in order:
            if key in closed:
                continue
            if not queues[key]:
                closed.add(key)
                continue
            item = queues[key][0]
            trial = {**out, key: [*out[key], item]}
            if _size(trial) > limit and key == "evidence" and len(item["text"]) > 80:
                item = {**item, "text": _cut(item["text"], 80)}  # a short one beats none
                trial = {**out, key: [*out[key], item]}
            if _size(trial) > limit:
                closed.add(key)  # keep the order: nothing after a dropped item of this kind
                continue
            out[key] = trial[key]
            queues[key].pop(0)
            out["omitted"][omitted_key[key]] -= 1
            progressed = True
        if not progressed:
            break
    out["omitted"] = {k: n for k, n in out["omitted"].items() if n}
    if not out["summary"]:
        del out["summary"]
    if not out["unknowns"]:
        del out["unknowns"]
    return out


def render_compact(report, budget_tokens: int = DEFAULT_TOKENS) -> str:
    """:func:`compact_report` as one line of compact JSON."""
    return json.dumps(
        compact_report(report, budget_tokens), separators=(",", ":"), ensure_ascii=False
    )
