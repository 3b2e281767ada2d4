"""Machine-readable forms of a batch's results: ``mlaudit batch ... --format json|csv|markdown``.

One row per run, with the columns :data:`COLUMNS`:

- ``id``: the run reference (MLflow run id, W&B ``entity/project/run_id``, ClearML task id),
- ``name``: the run name,
- ``status``: ``audited`` (a verdict was reached) or ``failed`` (the run could not be read,
  audited or written back; ``error`` says which stage and why),
- ``outcome``, ``cause``, ``confidence`` (0-1, empty when not audited),
- ``codes``: finding codes at warning or above (JSON: a list; CSV and markdown: comma-joined),
- ``error``: the reason a run failed (empty when audited),
- ``url``: the run's page in the tracker when known.

Rows come worst first (the summary's order: severity, outcome, confidence), then failed runs.
Run-controlled text (names, ids, errors) passes through :func:`mlaudit_core.redact.redact_text`:
credentials redacted, terminal control characters shown as ``\\xNN`` in every format (a
``jq -r`` or ``cut`` of the output cannot drive the reader's terminal). Markdown cells also
escape ``|``, backslashes and line breaks; CSV quoting is the :mod:`csv` module's.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable
from typing import Any

from mlaudit_core.redact import redact_text, redact_tree
from mlaudit_core.service.summary import BatchSummary, badness
from mlaudit_core.service.task import RunResult

#: The columns, in order, of every format.
COLUMNS = ("id", "name", "status", "outcome", "cause", "confidence", "codes", "error", "url")
#: ``--format`` values; ``table`` is the Rich summary for people.
FORMATS = ("table", "json", "csv", "markdown")
#: Schema name of the JSON document.
JSON_SCHEMA = "mlaudit-batch/1"


def _clean(text: str | None) -> str:
    return redact_text(text or "")


def row(r: RunResult) -> dict[str, Any]:
    """One run as a dict with the keys :data:`COLUMNS` (``codes`` a list, ``confidence`` a
    float rounded to 3 places or None)."""
    return {
        "id": _clean(r.ref),
        "name": _clean(r.name),
        "status": "audited" if r.ok else "failed",
        "outcome": (r.outcome or "") if r.ok else "",
        "cause": (r.cause or "") if r.ok else "",
        "confidence": round(r.confidence, 3) if (r.ok and r.confidence is not None) else None,
        "codes": list(r.codes) if r.ok else [],
        "error": "" if r.ok else _clean(r.error or "unknown error"),
        "url": _clean(r.url),
    }


def ordered(results: Iterable[RunResult]) -> list[RunResult]:
    """Audited runs worst first (:func:`~mlaudit_core.service.summary.badness`), then failed
    runs in the order given."""
    results = list(results)
    return sorted((r for r in results if r.ok), key=badness) + [r for r in results if not r.ok]


def _flat(rec: dict[str, Any]) -> dict[str, str]:
    out = {}
    for k in COLUMNS:
        v = rec[k]
        if k == "codes":
            v = ",".join(v)
        elif k == "confidence":
            v = "" if v is None else f"{v:.3f}"
        out[k] = str(v)
    return out


def to_json(summary: BatchSummary, triage: dict[str, Any] | None = None) -> str:
    """``{"schema", "title", "runs", "audited", "failed", "outcomes", "causes", "rows": [...]}``,
    plus ``"triage"`` (:meth:`mlaudit_core.triage.Triage.to_dict`, strings redacted) when
    given (``--triage``)."""
    doc = {
        "schema": JSON_SCHEMA,
        "title": _clean(summary.title),
        "runs": len(summary.results),
        "audited": len(summary.ok),
        "failed": len(summary.failed),
        "outcomes": dict(summary.outcomes),
        "causes": dict(summary.causes),
        "rows": [row(r) for r in ordered(summary.results)],
    }
    if triage is not None:
        doc["triage"] = redact_tree(triage)
    return json.dumps(doc, indent=2)


def to_csv(summary: BatchSummary) -> str:
    """A header line (:data:`COLUMNS`) and one CSV line per run (RFC 4180 quoting, ``\\n`` ends)."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    w.writeheader()
    for r in ordered(summary.results):
        w.writerow(_flat(row(r)))
    return buf.getvalue()


def _md_cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def to_markdown(summary: BatchSummary) -> str:
    """A GitHub-flavoured markdown table (a title line, then one row per run), e.g. for a CI
    job summary (``>> $GITHUB_STEP_SUMMARY``)."""
    lines = [
        f"**{_md_cell(_clean(summary.title))}**: {len(summary.results)} runs, "
        f"{len(summary.ok)} audited, {len(summary.failed)} failed",
        "",
        "| " + " | ".join(COLUMNS) + " |",
        "|" + "---|" * len(COLUMNS),
    ]
    for r in ordered(summary.results):
        flat = _flat(row(r))
        lines.append("| " + " | ".join(_md_cell(flat[k]) for k in COLUMNS) + " |")
    return "\n".join(lines) + "\n"


def render(summary: BatchSummary, fmt: str, triage: dict[str, Any] | None = None) -> str:
    """The summary in ``fmt`` (``json``, ``csv`` or ``markdown``). ValueError otherwise.
    ``triage`` goes into the JSON document only."""
    if fmt == "json":
        return to_json(summary, triage) + "\n"
    if fmt == "csv":
        return to_csv(summary)
    if fmt == "markdown":
        return to_markdown(summary)
    raise ValueError(f"unknown format {fmt!r}")
