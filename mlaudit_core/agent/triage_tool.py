"""The ``experiment_triage`` agent tool: ``mlaudit batch mlflow --triage`` for an agent.

Runs of the MLflow experiment that carry an ``mlaudit.verdict`` tag (an earlier batch, watch
or audit) keep that verdict; the others are audited now (at most ``max_audits``, no
write-back), then :func:`mlaudit_core.triage.triage` runs on them all. Nothing is written back
unless ``write_back`` is true (then as the CLI does: experiment tags and the ``mlaudit-triage``
run; ``integrations/mlaudit_mlflow/triage.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: Most runs read by one call (``max_runs``'s ceiling).
MAX_RUNS = 10_000
#: Most runs audited by one call (``max_audits``'s ceiling); runs with a verdict tag cost none.
MAX_AUDITS = 500

INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "experiment": {"type": "string", "description": "MLflow experiment name."},
        "tracking_uri": {
            "type": "string",
            "description": "MLflow tracking URI; default the server's.",
        },
        "max_runs": {"type": "integer", "minimum": 2, "maximum": MAX_RUNS, "default": 2000},
        "max_audits": {
            "type": "integer",
            "minimum": 0,
            "maximum": MAX_AUDITS,
            "default": 100,
            "description": "Runs without an mlaudit.verdict tag audited now (no "
            "write-back); the rest take no part and are counted.",
        },
        "write_back": {"type": "boolean", "default": False},
    },
    "required": ["experiment"],
    "additionalProperties": False,
}
_FACTOR = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "kind": {"type": "string"},
        "target": {"type": "string"},
        "effect": {"type": "string"},
        "counts": {"type": "object"},
        "p_value": {"type": "number"},
        "q_value": {"type": "number"},
        "significant": {"type": "boolean"},
        "small": {"type": "boolean"},
    },
    "required": ["name", "kind", "effect", "counts", "p_value", "q_value", "significant"],
}
OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "experiment": {"type": "string"},
        "runs_read": {"type": "integer"},
        "audited_now": {"type": "integer"},
        "not_audited": {"type": "integer"},
        "triage": {
            "type": "object",
            "properties": {
                "runs": {"type": "integer"},
                "outcomes": {"type": "object"},
                "statements": {"type": "array", "items": {"type": "string"}},
                "tested": {"type": "integer"},
                "factors": {"type": "array", "items": _FACTOR},
                "change_point": {"type": ["object", "null"]},
                "commit_change_point": {"type": ["object", "null"]},
                "seed_noise": {"type": ["object", "null"]},
            },
            "required": ["runs", "outcomes", "statements", "factors"],
        },
        "written_to": {"type": ["string", "null"]},
    },
    "required": ["experiment", "runs_read", "triage"],
}
DESCRIPTION = (
    "What the failing runs of an MLflow experiment have in common: per param, tag, "
    "commit, host and start time a permutation test with Benjamini-Hochberg, the "
    "effect in words with counts; first bad / last good by start time and by commit; the best "
    "run judged against "
    "seed noise. Same as `mlaudit batch mlflow --triage`. Write-back only with "
    "write_back=true."
)


def experiment_triage(
    uri: str | None,
    settings,
    experiment: str,
    *,
    max_runs: int = 2000,
    max_audits: int = 100,
    write_back: bool = False,
    progress: Callable[[float, float, str], None],
) -> tuple[dict[str, Any], list[str]]:
    """``(data, lines)`` of the tool (``data`` per :data:`OUTPUT_SCHEMA`).

    Raises:
        InputError: no such experiment (from the MLflow plugin).
    """
    from ..audit import audit
    from ..plugins import get_plugin
    from ..redact import redact_text, redact_tree
    from ..triage import render_html, render_text, triage

    # Any: experiment_ids is an MLflow plugin capability outside the TrackerPlugin protocol
    plugin: Any = get_plugin("mlflow", tracking_uri=uri)
    ids = plugin.experiment_ids([experiment])
    store = plugin.triage_store()  # the plugin's reads and write-back (mlaudit_mlflow.triage)
    runs = store.runs(ids)[:max_runs]
    recs, audited, missing = [], 0, 0
    todo = [r for r in runs if not r.data.tags.get("mlaudit.verdict")]
    for r in runs:
        verdict = None
        if not r.data.tags.get("mlaudit.verdict"):
            if audited >= max_audits:
                missing += 1
                continue
            progress(audited, min(len(todo), max_audits) + 1, f"auditing {r.info.run_id}")
            rep = audit(plugin.load(r.info.run_id), settings)
            verdict = {
                "outcome": str(rep.verdict.outcome.value),
                "cause": str(rep.verdict.cause.value),
            }
            audited += 1
        recs.append(store.record(r, verdict))
    tri = triage(recs)
    doc = redact_tree(tri.to_dict())  # param/tag values are run-controlled text
    lines = redact_text(render_text(tri)).splitlines()
    if missing:
        lines.append(
            f"{missing} run(s) without an mlaudit.verdict tag were not audited (max_audits "
            f"{max_audits}) and take no part"
        )
    where = None
    if write_back:
        run_id = store.write(
            ids[0], doc, redact_text(render_text(tri)), redact_text(render_html(tri))
        )
        where = f"experiment tag mlaudit.triage and run {run_id}"
        lines.append(f"written to {where}")
    data = {
        "experiment": experiment,
        "runs_read": len(runs),
        "audited_now": audited,
        "not_audited": missing,
        "triage": doc,
        "written_to": where,
    }
    return data, lines
