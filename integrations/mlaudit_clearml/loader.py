"""Load a ClearML task from the server into RunData, at full fidelity.

API calls (clearml-server API v2.23, through the SDK's logged-in ``Session``):

* ``tasks.get_by_id``: status, timestamps, project, parent, labels,
  hyper-parameters, configuration objects, user properties, artifacts, script;
* ``projects.get_by_id``: the project name;
* ``events.get_scalar_metrics_and_variants`` then, per title,
  ``events.scalar_metrics_iter_raw`` paged with its ``scroll_id`` (``batch_size``
  ``SCALAR_BATCH`` points a call): every reported point, never the downsampled
  ``scalar_metrics_iter_histogram`` the web UI draws (at most 5,000 points a
  series). It is asked twice, keyed by iteration (steps and values) and by
  timestamp (wall times; paired by :func:`~.mapping.pair_wall_times`). Machine
  and GPU telemetry are scalars of the titles ``:monitor:machine`` and
  ``:monitor:gpu`` and come the same way;
* ``events.get_task_log`` paged forward by ``from_timestamp`` (``LOG_BATCH``
  events a call): the whole console, capped at ``CONSOLE_MAX_BYTES`` (the tail
  is kept and a warning says so).
"""

from __future__ import annotations

from collections import deque

import numpy as np

from mlaudit_core.errors import InputError
from mlaudit_core.rundata import MetricTable, RunData, RunIdentity, Series

from . import mapping
from .connection import call

SCALAR_BATCH = 100_000
LOG_BATCH = 5_000
CONSOLE_MAX_BYTES = 50 * 1024 * 1024


def get_task(session, task_id: str) -> dict:
    """The task document. Raises InputError for an unknown id."""
    if not task_id or not task_id.strip():
        raise InputError("no ClearML task id given")
    return call(session, "tasks.get_by_id", task=task_id.strip(), what=task_id)["task"]


def _raw_scalars(session, task_id: str, title: str, key: str) -> dict[str, dict[str, list]]:
    """Every point of every series of ``title``, keyed by ``key`` ("iter" or "timestamp")."""
    out: dict[str, dict[str, list]] = {}
    scroll = None
    while True:
        payload = {
            "task": task_id,
            "metric": {"metric": title},
            "key": key,
            "batch_size": SCALAR_BATCH,
        }
        if scroll:
            payload["scroll_id"] = scroll
        data = call(session, "events.scalar_metrics_iter_raw", **payload)
        variants = data.get("variants") or {}
        for series, cols in variants.items():
            acc = out.setdefault(series, {"y": [], key: []})
            acc["y"].extend(cols.get("y") or [])
            acc[key].extend(cols.get(key) or [])
        scroll = data.get("scroll_id")
        if not data.get("returned") or not scroll:
            return out


def load_scalars(session, task_id: str, notes: list[str]) -> MetricTable:
    """All scalar series of the task as one table (key ``title/series``, step = iteration)."""
    metrics = (
        call(session, "events.get_scalar_metrics_and_variants", task=task_id).get("metrics") or {}
    )
    series: list[Series] = []
    unpaired: list[str] = []
    for title in sorted(metrics):
        by_iter = _raw_scalars(session, task_id, title, "iter")
        by_time = _raw_scalars(session, task_id, title, "timestamp")
        for name in sorted(by_iter):
            cols = by_iter[name]
            values = mapping.to_float(cols["y"])
            steps = np.asarray(cols["iter"], dtype=np.int64)
            tcols = by_time.get(name) or {"y": [], "timestamp": []}
            wall = mapping.pair_wall_times(
                values,
                mapping.to_float(tcols["y"]),
                np.asarray(tcols["timestamp"], dtype=np.float64),
            )
            if wall is None:
                wall = np.full(len(values), np.nan)
                unpaired.append(mapping.metric_key(title, name))
            series.append(Series(mapping.metric_key(title, name), steps, values, wall))
    if unpaired:
        notes.append(
            "wall times unknown for "
            + ", ".join(unpaired[:5])
            + (" ..." if len(unpaired) > 5 else "")
            + ": their iterations were not reported in time order"
        )
    return MetricTable.from_series(series)


def load_console(session, task_id: str, warnings: list[str]) -> list[dict]:
    """Every log event of the task, oldest first (the tail when over ``CONSOLE_MAX_BYTES``)."""
    events: deque[dict] = deque()
    size = 0
    dropped = 0
    from_ts = None
    while True:
        payload = {
            "task": task_id,
            "batch_size": LOG_BATCH,
            "navigate_earlier": False,
            "order": "asc",
        }
        if from_ts is not None:
            payload["from_timestamp"] = from_ts
        page = call(session, "events.get_task_log", **payload).get("events") or []
        if not page:
            break
        for ev in page:
            events.append(ev)
            size += len(ev.get("msg") or "")
            while size > CONSOLE_MAX_BYTES and len(events) > 1:
                size -= len(events.popleft().get("msg") or "")
                dropped += 1
        last = page[-1].get("timestamp")
        if last is None or last == from_ts:
            break
        from_ts = last
    if dropped:
        warnings.append(
            f"console log is over {CONSOLE_MAX_BYTES} bytes; read the last part "
            f"({dropped} earlier log events left out)"
        )
    return list(events)


def project_name(session, project_id: str | None) -> str | None:
    if not project_id:
        return None
    try:
        return (
            call(session, "projects.get_by_id", project=project_id)["project"].get("name")
            or project_id
        )
    except InputError:
        return project_id


def task_url(session, task: dict) -> str | None:
    """The task's page in the ClearML web UI."""
    try:
        web = session.get_app_server_host()
    except Exception:
        return None
    if not web:
        return None
    return f"{web.rstrip('/')}/projects/{task.get('project') or '*'}/experiments/{task['id']}/output/execution"


def run_from_task(
    task: dict,
    *,
    project: str | None,
    metrics: MetricTable,
    log_events: list[dict],
    url: str | None,
    warnings: list[str],
    notes: list[str],
) -> RunData:
    """Assemble RunData from a task document, its scalars and its log events."""
    start = mapping.parse_time(task.get("started")) or mapping.parse_time(task.get("created"))
    end = mapping.parse_time(task.get("completed"))
    status = task.get("status") or "unknown"
    if end is None and status in ("failed", "stopped", "published", "closed"):
        end = mapping.parse_time(task.get("status_changed")) or mapping.parse_time(
            task.get("last_update")
        )
    env = mapping.environment_of(task)
    if task.get("type"):
        env["task_type"] = str(task["type"])
    if task.get("status_message"):
        notes.append(f"ClearML status message: {task['status_message']}")
    run = RunData(
        identity=RunIdentity(
            tracker="clearml",
            id=task["id"],
            name=task.get("name") or task["id"],
            url=url,
            project=project,
        ),
        status=mapping.STATUS.get(status, mapping.RunStatus.UNKNOWN),
        start_time=start,
        end_time=end,
        params=mapping.params_of(task),
        tags=mapping.tags_of(task),
        metrics=metrics,
        console=mapping.console_lines(log_events),
        artifacts=mapping.artifacts_of(task),
        environment=env,
        parent_id=task.get("parent") or None,
        notes=notes,
        warnings=warnings,
    )
    mapping.restore_nonfinite(run)
    # the comment as loaded: the write-back re-reads it after writing only when it changed
    run.cache["clearml.comment_loaded"] = task.get("comment") or ""
    enrich(run)
    return run


def enrich(run: RunData) -> None:
    """Console-only signals (``mlaudit_core.formats.consolelog.enrich_from_console``) when that module is installed."""
    try:
        from mlaudit_core.formats.consolelog import enrich_from_console
    except ImportError:
        return
    enrich_from_console(run)


def load_task(session, task_id: str) -> RunData:
    """Load one task.

    Args:
        session: a logged-in SDK session (:func:`~.connection.connect`).
        task_id: the task id (32 hex characters).

    Raises:
        InputError: the task does not exist, or the server failed a call.
    """
    task = get_task(session, task_id)
    warnings: list[str] = []
    notes: list[str] = []
    metrics = load_scalars(session, task["id"], notes)
    log_events = load_console(session, task["id"], warnings)
    return run_from_task(
        task,
        project=project_name(session, task.get("project")),
        metrics=metrics,
        log_events=log_events,
        url=task_url(session, task),
        warnings=warnings,
        notes=notes,
    )
