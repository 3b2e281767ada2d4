"""What the live monitor needs from a tracker: running runs, their new points, write-back, stop.

The shapes every live source returns (:class:`RunInfo`, :class:`Tail`) and the names it writes
(:data:`LIVE_TAG`, :data:`STOP_TAG`, :data:`LIVE_ARTIFACT`). The sources themselves live in
their tracker plugins (the core names no tracker; tests/test_import_graph.py):

* ``MlflowLiveSource`` (MLflow plugin, ``live`` module): RUNNING runs of the watched
  experiments (one ``search_runs`` per 1,000 runs, which also carries every key's latest step and time: a key that did not
  advance costs no request); new points of the keys that advanced, read with MLflow's
  ``get-history-bulk-interval`` (up to 100 runs per request, one request per metric key,
  the step range starting at the last point seen). For a database URI the same query runs
  in-process through MLflow's SQL store. ``system/*`` keys are the heartbeat (their latest
  time only; never their history).
* ``TensorBoardLiveSource`` (TensorBoard plugin, ``live`` module): one log directory per
  run; every event file is read from the byte offset where the last poll stopped (whole records only), and console files
  (``*.log``, ``*.out``, ``*.txt``) in the directory from theirs.

Cursors are plain JSON dicts kept by the monitor in the state file.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..report import RunRef

log = logging.getLogger("mlaudit.live")

LIVE_TAG = "mlaudit.live"
STOP_TAG = "mlaudit.stop_requested"
LIVE_ARTIFACT = "mlaudit/live.json"


@dataclass
class RunInfo:
    """A running run as listed: ``latest`` maps each key to its latest ``(step, wall s)``."""

    ref: str
    name: str = ""
    url: str | None = None
    project: str | None = None
    latest: dict[str, tuple[int, float]] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    #: each key's latest value, when the listing carries it (MLflow does)
    values: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.url:  # live.json, alerts and state never carry the tracking URI's user-info
            from ..redact import public_url

            self.url = public_url(self.url)

    def run_ref(self, tracker: str) -> RunRef:
        return RunRef(
            tracker=tracker,
            id=self.ref,
            name=self.name,
            url=self.url,
            project=self.project,
            status="running",
        )


@dataclass
class Tail:
    """What is new on one run: training points ``{key: (steps, walls, values)}``, the newest
    system-metric time, console lines ``(source, line number, text)``, and notes."""

    # walls: a list while points are read; None once normalised when any wall time is unknown
    points: dict[str, tuple[list, Any, list]] = field(default_factory=dict)
    system_wall: float | None = None
    console: list[tuple[str, int, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def write_live_json(out: Path, tag: str, doc: dict) -> None:
    """Write a local run's live state ``{"tag": tag, **doc}`` to ``out`` (a ``live.json`` under
    the run's ``mlaudit/`` folder) atomically: a temporary file beside it, then ``os.replace``,
    so a reader never sees half a file. Creates ``out``'s folder. Raises OSError."""
    out.parent.mkdir(exist_ok=True)
    tmp = out.with_suffix(".json.tmp")
    tmp.write_text(json.dumps({"tag": tag, **doc}, indent=1, default=str), encoding="utf-8")
    os.replace(tmp, out)
