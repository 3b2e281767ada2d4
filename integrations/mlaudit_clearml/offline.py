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

Damaged input: a malformed line or event (not JSON, not a list of event objects,
a non-numeric value or iteration) is skipped and counted in one warning (the
rest of the run is read); a damaged zip (bad CRC, truncated or encrypted member,
unsupported compression) is one :class:`InputError` naming the file. Reading is
bounded (a zip bomb stops there, with a warning): ``MAX_SESSION_BYTES``
uncompressed bytes over all members, ``MAX_LINE_BYTES`` per line, ``MAX_TASK_BYTES``
for ``task.json``, and the console keeps its last ``CONSOLE_MAX_BYTES``.
"""

from __future__ import annotations

import json
import zipfile
import zlib
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import numpy as np

from mlaudit_core.errors import InputError
from mlaudit_core.rundata import MetricTable, RunData, Series

from . import mapping
from .loader import CONSOLE_MAX_BYTES, run_from_task

TASK_FILE, METRICS_FILE, LOG_FILE = "task.json", "metrics.jsonl", "log.jsonl"
#: Uncompressed bytes read from one session, all members together: 2 GiB. The SDK
#: flushes a few hundred events per line (~100 bytes a scalar event), so 2 GiB is
#: some 20 million scalar points, beyond any run the server itself would plot.
MAX_SESSION_BYTES = 2 << 30
#: Longest line read (one ``add_batch`` call): 64 MiB, room for a batch of large
#: plotly plots; a longer line is skipped. Bounds the memory of one ``json.loads``.
MAX_LINE_BYTES = 64 << 20
#: Largest ``task.json`` read: 64 MiB (the server's own document limit is 16 MB).
MAX_TASK_BYTES = 64 << 20
#: What reading a zip member can raise when the zip is damaged or encrypted.
_ZIP_ERRORS = (zipfile.BadZipFile, zlib.error, RuntimeError, NotImplementedError, EOFError, OSError)


class _Session:
    """Uniform access to the session's three files in a folder or a zip."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.zip: zipfile.ZipFile | None = None
        if path.is_file():
            try:
                self.zip = zipfile.ZipFile(path)
            except zipfile.BadZipFile:
                raise InputError(
                    f"{path}: not a ClearML offline session (not a folder, not a zip)"
                ) from None
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


@contextmanager
def _member_errors(session: _Session, name: str) -> Iterator[None]:
    """A damaged / encrypted zip member or an unreadable file -> one InputError naming both."""
    try:
        yield
    except _ZIP_ERRORS as exc:
        what = f"{session.path}: {name}"
        if isinstance(exc, RuntimeError) and "encrypted" in str(exc):
            raise InputError(
                f"{what} is encrypted (password-protected zip); cannot be read"
            ) from None
        if isinstance(exc, RuntimeError) and not session.zip:
            raise
        kind = "damaged zip member" if session.zip is not None else "cannot be read"
        raise InputError(f"{what}: {kind} ({type(exc).__name__}: {exc})") from None


class _Skipped:
    """Counts of skipped input of one member, reported as one warning each."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.counts: dict[str, list[int]] = {}  # reason -> [count, first line]

    def add(self, reason: str, lineno: int) -> None:
        c = self.counts.setdefault(reason, [0, lineno])
        c[0] += 1

    def report(self, warnings: list[str]) -> None:
        for reason, (n, first) in self.counts.items():
            warnings.append(
                f"{self.name}: {n} {reason} skipped (first at line {first}); the rest was read"
            )


def _lines(
    session: _Session, name: str, budget: list[int], skipped: _Skipped, warnings: list[str]
) -> Iterator[tuple[int, bytes]]:
    """(line number, bytes) of one member, streamed under the line and session caps.

    ``budget`` is the one-element list of session bytes still allowed (shared by members).
    """
    if not session.exists(name):
        return
    with _member_errors(session, name), session.open(name) as fh:
        lineno = 0
        while True:
            raw = fh.readline(MAX_LINE_BYTES)
            if not raw:
                return
            lineno += 1
            budget[0] -= len(raw)
            if len(raw) >= MAX_LINE_BYTES and not raw.endswith(b"\n"):
                while budget[0] > 0:  # skip the rest of the over-long line
                    rest = fh.readline(MAX_LINE_BYTES)
                    budget[0] -= len(rest)
                    if not rest or rest.endswith(b"\n"):
                        break
                skipped.add(f"line(s) longer than {MAX_LINE_BYTES >> 20} MiB", lineno)
                raw = b""
            if budget[0] < 0:
                warnings.append(
                    f"{session.path}: read stopped at {MAX_SESSION_BYTES >> 30} GiB of "
                    f"uncompressed data (in {name} line {lineno}); the run is partial"
                )
                return
            if raw.strip():
                yield lineno, raw


def _event_lists(
    session: _Session, name: str, warnings: list[str], budget: list[int]
) -> Iterator[tuple[int, dict, _Skipped]]:
    """(line number, event, skip counter) for every event object of a ``*.jsonl`` member."""
    skipped = _Skipped(name)
    for lineno, raw in _lines(session, name, budget, skipped, warnings):
        try:
            batch = json.loads(raw)
        except (ValueError, RecursionError):  # cut, or nested past the stack
            skipped.add("line(s) that are not JSON", lineno)
            continue
        if isinstance(batch, dict):
            batch = [batch]
        if not isinstance(batch, list):
            skipped.add("line(s) that are not a list of events", lineno)
            continue
        for ev in batch:
            if isinstance(ev, dict):
                yield lineno, ev, skipped
            else:
                skipped.add("event(s) that are not JSON objects", lineno)
    skipped.report(warnings)


def load_offline(path: str | Path, expected_id: str | None = None) -> RunData:
    """Load an offline session folder or zip.

    Args:
        path: the session folder (``.../offline/offline-<id>``) or its ``.zip``.
        expected_id: when given, the session's task id must match it.

    Raises:
        InputError: the path is missing, is not a session, or holds another task; a zip
            member is damaged (bad CRC-32, corrupt deflate data) or encrypted; ``task.json``
            is over ``MAX_TASK_BYTES``. Malformed lines and caps reached are warnings instead.
    """
    p = Path(path).expanduser()
    session = _Session(p)
    warnings: list[str] = []
    notes = ["read from a ClearML offline session; nothing is written back to it"]
    budget = [MAX_SESSION_BYTES]
    try:
        with _member_errors(session, TASK_FILE), session.open(TASK_FILE) as fh:
            data = fh.read(MAX_TASK_BYTES + 1)
        if len(data) > MAX_TASK_BYTES:
            raise InputError(
                f"{p}: {TASK_FILE} is over {MAX_TASK_BYTES >> 20} MiB; not a task document"
            )
        budget[0] -= len(data)
        try:
            task = json.loads(data)
        except (ValueError, RecursionError) as exc:  # RecursionError: nested past the stack
            raise InputError(f"{p}: {TASK_FILE} is not valid JSON ({exc})") from None
        if not isinstance(task, dict) or not task.get("id"):
            raise InputError(f"{p}: {TASK_FILE} has no task id")
        if expected_id and expected_id != task["id"]:
            raise InputError(f"{p} holds task {task['id']}, not {expected_id}")
        points: dict[str, dict[int, tuple[float, float]]] = {}
        first_ts = last_ts = None
        for lineno, ev, skipped in _event_lists(session, METRICS_FILE, warnings, budget):
            if (
                ev.get("task") not in (None, task["id"])
                or ev.get("type") != "training_stats_scalar"
            ):
                continue
            try:
                ts = ev.get("timestamp")
                ts = None if ts is None else float(ts)
                key = mapping.metric_key(str(ev.get("metric") or ""), str(ev.get("variant") or ""))
                value = ev.get("value")
                point = (
                    np.nan if value is None else float(value),
                    np.nan if ts is None else ts / 1000.0,
                )
                it = int(ev.get("iter") or 0)
            except (TypeError, ValueError, OverflowError):
                skipped.add(
                    "scalar event(s) with a non-numeric value, iteration or timestamp", lineno
                )
                continue
            points.setdefault(key, {})[it] = point
            if ts is not None:
                first_ts = ts if first_ts is None else min(first_ts, ts)
                last_ts = ts if last_ts is None else max(last_ts, ts)
        tail: deque[dict] = deque()
        size = dropped = 0
        for _, ev, _ in _event_lists(session, LOG_FILE, warnings, budget):
            if ev.get("type", "log") != "log":
                continue
            if not isinstance(ev.get("timestamp"), (int, float, type(None))):
                ev["timestamp"] = None
            tail.append(ev)
            size += len(str(ev.get("msg") or ""))
            while size > CONSOLE_MAX_BYTES and len(tail) > 1:
                size -= len(str(tail.popleft().get("msg") or ""))
                dropped += 1
        if dropped:
            warnings.append(
                f"{LOG_FILE}: console is over {CONSOLE_MAX_BYTES >> 20} MiB; read its last "
                f"part ({dropped} earlier log events dropped)"
            )
        logs = list(tail)
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
    return run_from_task(
        task,
        project=task.get("project_name"),
        metrics=MetricTable.from_series(series),
        log_events=logs,
        url=None,
        warnings=warnings,
        notes=notes,
    )
