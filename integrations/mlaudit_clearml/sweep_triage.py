"""Experiment triage on ClearML (``mlaudit batch clearml --project NAME --triage``).

:func:`records` reads the project's audited tasks (``tasks.get_all``, 500 a page, only the
fields triage needs) and joins them with the batch's verdicts (:mod:`mlaudit_core.triage`
records):

- params: as every ClearML read of mlaudit takes them (:func:`mlaudit_clearml.mapping.params_of`):
  the hyper-parameters as ``section/name`` (``Args/lr``, ``General/seed``) without the
  ``properties`` section (user properties, mlaudit's ``mlaudit.*`` among them), configuration
  objects as ``configuration/name``;
- tags: every label seen in the project is a yes/no factor ``tag:<label>`` on every task
  (``mlaudit:*`` labels, mlaudit's own output, left out);
- commit: ``script.version_num`` (the git commit ClearML records when the task starts);
- host: ``last_worker`` (the agent or machine that ran it);
- start time: ``started`` (else ``created``); final metrics: ``last_metrics`` as
  ``metric/variant`` (for the seed-noise band).

Where it is written (:func:`write_triage`, unless ``--no-write``): the **project's
description** (the project page's overview / "Edit description"), as one section between
mlaudit's markers (:data:`mlaudit_core.writeback.BEGIN` / ``END``) after the user's text, which
is kept. The write is :func:`mlaudit_core.writeback.write_section`: read, merge, write
(``projects.update``), read again, and merge again on the newer text when someone saved the
description meanwhile, so a concurrent edit is not lost. Nothing else of the project or of any
task is touched. Importing this module imports no SDK.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from mlaudit_core.writeback import triage_section, write_section

from .connection import call
from .mapping import params_of, parse_time

#: Tasks per ``tasks.get_all`` page.
PAGE = 500
#: Labels that are mlaudit's own output, not a factor.
OWN_TAG_PREFIX = "mlaudit:"
#: Fields read per task.
FIELDS = [
    "id",
    "name",
    "status",
    "hyperparams",
    "configuration",
    "execution.parameters",
    "tags",
    "script.version_num",
    "started",
    "created",
    "last_worker",
    "last_metrics",
]


def _time(value: Any) -> float | None:
    t = parse_time(value)
    return None if t is None else t.timestamp()


def metrics_of(last_metrics: Any) -> dict[str, float]:
    """``{metric/variant: last value}`` from a task's ``last_metrics``."""
    out: dict[str, float] = {}
    if not isinstance(last_metrics, dict):
        return out
    for variants in last_metrics.values():
        for v in (variants or {}).values() if isinstance(variants, dict) else ():
            if isinstance(v, dict) and isinstance(v.get("value"), (int, float)):
                out[f"{v.get('metric')}/{v.get('variant')}"] = float(v["value"])
    return out


def record_of(
    task: dict[str, Any], verdict: dict[str, Any], all_tags: Iterable[str]
) -> dict[str, Any]:
    """One ``tasks.get_all`` document as a triage record."""
    own = set(task.get("tags") or [])
    return {
        "run_id": task["id"],
        "name": task.get("name") or "",
        "outcome": verdict.get("outcome") or "",
        "cause": verdict.get("cause"),
        "params": params_of(task),
        "tags": {t: ("yes" if t in own else "no") for t in all_tags},
        "start_time": _time(task.get("started")) or _time(task.get("created")),
        "commit": ((task.get("script") or {}).get("version_num") or None),
        "host": task.get("last_worker") or None,
        "metrics": metrics_of(task.get("last_metrics")),
    }


def records(session, project_id: str, results: Iterable) -> list[dict[str, Any]]:
    """Triage records of the tasks the batch audited (``results``: RunResult list, refs = task
    ids; tasks that could not be audited take no part)."""
    verdicts = {str(r.ref): {"outcome": r.outcome, "cause": r.cause} for r in results if r.ok}
    tasks: list[dict[str, Any]] = []
    page = 0
    while True:
        got = (
            call(
                session,
                "tasks.get_all",
                project=[project_id],
                only_fields=FIELDS,
                order_by=["started"],
                page=page,
                page_size=PAGE,
            ).get("tasks")
            or []
        )
        tasks += [t for t in got if t.get("id") in verdicts]
        if len(got) < PAGE:
            break
        page += 1
    all_tags = sorted(
        {
            t
            for task in tasks
            for t in (task.get("tags") or [])
            if not str(t).startswith(OWN_TAG_PREFIX)
        }
    )
    return [record_of(t, verdicts[t["id"]], all_tags) for t in tasks]


def write_triage(session, project_id: str, doc: dict[str, Any]):
    """Merge :func:`mlaudit_core.writeback.triage_section` into the project's description (the user's text kept, a
    concurrent edit merged again: :func:`~mlaudit_core.writeback.write_section`). Returns the
    :class:`~mlaudit_core.writeback.SectionWrite`. Server errors propagate as InputError."""

    def read() -> str | None:
        return (call(session, "projects.get_by_id", project=project_id).get("project") or {}).get(
            "description"
        )

    def write(text: str) -> None:
        call(session, "projects.update", project=project_id, description=text)

    return write_section(
        read, write, triage_section(doc, "tasks"), full_report="`mlaudit batch clearml --triage`"
    )
