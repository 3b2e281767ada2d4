"""Load a ClearML offline session (``Task.set_offline(True)``) into RunData.

An offline session is a folder (or the zip the SDK writes next to it on
``Task.close()``) with:

* ``task.json``: the task document as the SDK would have sent it (id
  ``offline-<hex>``, name, ``project_name``, hyperparams incl. user properties,
  configuration, script, labels, artifacts);
* ``metrics.jsonl``: one JSON list of events per line, as ``events.add_batch``
  would have received them (scalars ``training_stats_scalar`` with metric,
  variant, iter, value, timestamp in ms; plots; debug images);
* ``log.jsonl``: the console, as lists of ``log`` events.

These are the files ``Task.import_offline_session`` replays to a server; reading
them directly gives the same run without a server. A zip is read member by
member (nothing is extracted). A scalar reported twice at one iteration keeps
the last value, as the server does (its event id is task-iter-metric-variant).
The session records no status: it is ``unknown`` unless ``task.json`` has one.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import numpy as np

from mlaudit_core.errors import InputError
from mlaudit_core.rundata import MetricTable, RunData, Series

from . import mapping
from .loader import run_from_task

TASK_FILE, METRICS_FILE, LOG_FILE = "task.json", "metrics.jsonl", "log.jsonl"


class _Session:
    """Uniform access to the session's three files in a folder or a zip."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.zip: zipfile.ZipFile | None = None
        if path.is_file():
            try:
                self.zip = zipfile.ZipFile(path)
            except zipfile.BadZipFile:
                raise InputError(f"{path}: not a ClearML offline session (not a folder, not a zip)") from None
        elif not path.is_dir():
            raise InputError(f"{path}: no such offline session folder or zip")
        if not self.exists(TASK_FILE):
            raise InputError(f"{path}: not a ClearML offline session (no {TASK_FILE})")

    def _member(self, name: str) -> str | None:
        assert self.zip is not None
        names = self.zip.namelist()
        if name in names:
            return name
        nested = [n for n in names if n.endswith("/" + name) and n.count("/") == 1]
        return nested[0] if nested else None

    def exists(self, name: str) -> bool:
        if self.zip is not None:
            return self._member(name) is not None
        return (self.path / name).is_file()

    def open(self, name: str) -> IO[bytes]:
        if self.zip is not None:
            return self.zip.open(self._member(name))  # type: ignore[arg-type]
        return (self.path / name).open("rb")

    def close(self) -> None:
        if self.zip is not None:
            self.zip.close()


def _event_lists(session: _Session, name: str, warnings: list[str]) -> Iterator[dict]:
    if not session.exists(name):
        return
    with session.open(name) as fh:
        for lineno, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            try:
                batch = json.loads(raw)
            except ValueError:
                warnings.append(f"{name}:{lineno}: unreadable line skipped")
                continue
            yield from (batch if isinstance(batch, list) else [batch])


def load_offline(path: str | Path, expected_id: str | None = None) -> RunData:
    """Load an offline session folder or zip.

    Args:
        path: the session folder (``.../offline/offline-<id>``) or its ``.zip``.
        expected_id: when given, the session's task id must match it.

    Raises:
        InputError: the path is missing, is not a session, or holds another task.
    """
    p = Path(path).expanduser()
    session = _Session(p)
    warnings: list[str] = []
    notes = ["read from a ClearML offline session; nothing is written back to it"]
    try:
        try:
            with session.open(TASK_FILE) as fh:
                task = json.load(fh)
        except ValueError as exc:
            raise InputError(f"{p}: {TASK_FILE} is not valid JSON ({exc})") from None
        if not isinstance(task, dict) or not task.get("id"):
            raise InputError(f"{p}: {TASK_FILE} has no task id")
        if expected_id and expected_id != task["id"]:
            raise InputError(f"{p} holds task {task['id']}, not {expected_id}")
        points: dict[str, dict[int, tuple[float, float]]] = {}
        first_ts = last_ts = None
        for ev in _event_lists(session, METRICS_FILE, warnings):
            if ev.get("task") not in (None, task["id"]) or ev.get("type") != "training_stats_scalar":
                continue
            ts = ev.get("timestamp")
            key = mapping.metric_key(ev.get("metric") or "", ev.get("variant") or "")
            value = ev.get("value")
            points.setdefault(key, {})[int(ev.get("iter") or 0)] = (
                np.nan if value is None else float(value), np.nan if ts is None else float(ts) / 1000.0)
            if ts is not None:
                first_ts = ts if first_ts is None else min(first_ts, ts)
                last_ts = ts if last_ts is None else max(last_ts, ts)
        logs = [ev for ev in _event_lists(session, LOG_FILE, warnings) if ev.get("type", "log") == "log"]
    finally:
        session.close()
    logs.sort(key=lambda e: e.get("timestamp") or 0)
    for ev in logs:
        ts = ev.get("timestamp")
        if ts is not None:
            first_ts = ts if first_ts is None else min(first_ts, ts)
            last_ts = ts if last_ts is None else max(last_ts, ts)
    series = []
    for key in sorted(points):
        steps = np.array(sorted(points[key]), dtype=np.int64)
        vals = np.array([points[key][int(s)][0] for s in steps], dtype=np.float64)
        wall = np.array([points[key][int(s)][1] for s in steps], dtype=np.float64)
        series.append(Series(key, steps, vals, wall))
    if task.get("status") is None:
        notes.append("an offline session records no task status")
    # no timestamps in task.json: the run spans its first and last reported event
    task.setdefault("started", first_ts)
    task.setdefault("completed", last_ts)
    return run_from_task(task, project=task.get("project_name"), metrics=MetricTable.from_series(series),
                         log_events=logs, url=None, warnings=warnings, notes=notes)
