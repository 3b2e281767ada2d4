"""W&B vocabulary -> RunData: history points, system metrics, console text, config, state.

Shared by the online (public API) and offline (``.wandb`` file) loaders so that
the same training gives the same RunData both ways.

Key conventions (the ones the W&B UI and public API use):

* history keys are kept as logged (``train/loss``); nested dicts are joined with
  ``.`` (``{"e": {"f": 1}}`` -> ``e.f``); W&B's own ``_step``/``_runtime``/
  ``_timestamp``/``_wandb`` are not metrics; media objects (dicts carrying a
  ``_type``: images, tables, HTML) are not scalars and are left out;
* system metrics carry the ``system.`` prefix the events stream uses
  (``system.gpu.0.gpu``, ``system.cpu``); a bare ``.wandb`` stats key such as
  ``gpu.0.gpu`` gets it added. Their step is the sample index (0, 1, ...), like
  MLflow's system metrics, and their wall time the sample time.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from datetime import datetime, timezone
from typing import Any

import numpy as np

from mlaudit_core.rundata import ConsoleLine, MetricTable, RunStatus

#: W&B's reserved history keys: bookkeeping, not metrics.
RESERVED = frozenset({"_step", "_runtime", "_timestamp", "_wandb"})
#: Run states as the W&B API spells them -> the normalised status.
STATES = {
    "finished": RunStatus.FINISHED,
    "failed": RunStatus.FAILED,
    "crashed": RunStatus.FAILED,
    "killed": RunStatus.KILLED,
    "preempted": RunStatus.KILLED,
    "preempting": RunStatus.RUNNING,
    "running": RunStatus.RUNNING,
    "pending": RunStatus.RUNNING,
}
SYSTEM_PREFIX = "system."
CONSOLE_SOURCE = "output.log"


def time_of(value: Any) -> datetime | None:
    """A W&B API timestamp (``createdAt``, ``heartbeatAt``: ISO 8601, ``Z`` or naive meaning UTC)
    as an aware datetime; ``None`` for an empty or unparsable value."""
    if not value:
        return None
    try:
        t = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)


def status_of(state: str | None) -> RunStatus:
    return STATES.get((state or "").lower(), RunStatus.UNKNOWN)


class PointBuffer:
    """Accumulates (key, step, value, wall time) points and builds a MetricTable once.

    Keys are interned to integer codes as they arrive, so a point costs four list
    appends; the columns become numpy arrays only in :meth:`table`.
    """

    def __init__(self) -> None:
        self.codes: dict[str, int] = {}
        self.c: list[int] = []
        self.s: list[int] = []
        self.v: list[float] = []
        self.w: list[float] = []

    def code(self, key: str) -> int:
        code = self.codes.get(key)
        if code is None:
            code = self.codes[key] = len(self.codes)
        return code

    def add(self, key: str, step: int, value: float, wall: float) -> None:
        self.c.append(self.code(key))
        self.s.append(step)
        self.v.append(value)
        self.w.append(wall)

    def __len__(self) -> int:
        return len(self.v)

    def table(self) -> MetricTable:
        if not self.v:
            return MetricTable.empty()
        return MetricTable(
            np.asarray(self.c, dtype=np.int32),
            np.asarray(self.s, dtype=np.int64),
            np.asarray(self.v, dtype=np.float64),
            np.asarray(self.w, dtype=np.float64),
            names=list(self.codes),
        )


def scalar(value: Any) -> float | None:
    """A history value as a float, or ``None`` when it is not a number (text, media, null, bool).

    Non-finite values are kept: W&B writes them as ``NaN``/``Infinity``/``-Infinity``
    and a diverged loss must stay visible.
    """
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str) and value in ("NaN", "Infinity", "-Infinity", "nan", "inf", "-inf"):
        return float(value)
    return None


def add_row(buf: PointBuffer, row: dict[str, Any], fallback_step: int) -> None:
    """Add one public-API history row (``{"_step": 3, "train/loss": 0.5, ...}``) to ``buf``."""
    step = row.get("_step")
    step = (
        int(step)
        if isinstance(step, (int, float)) and not isinstance(step, bool) and math.isfinite(step)
        else fallback_step
    )
    wall = row.get("_timestamp")
    wall = (
        float(wall) if isinstance(wall, (int, float)) and not isinstance(wall, bool) else math.nan
    )
    for key, value in row.items():
        if key in RESERVED:
            continue
        if isinstance(value, dict):
            for k, v in flatten(value, key).items():
                x = scalar(v)
                if x is not None:
                    buf.add(k, step, x, wall)
            continue
        x = scalar(value)
        if x is not None:
            buf.add(key, step, x, wall)


def flatten(d: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested dicts joined with ``.``; media objects (dicts with ``_type``) are dropped."""
    out: dict[str, Any] = {}
    if "_type" in d:
        return out
    for k, v in d.items():
        key = f"{prefix}.{k}" if prefix else str(k)
        if isinstance(v, dict):
            out.update(flatten(v, key))
        else:
            out[key] = v
    return out


def system_key(key: str) -> str:
    return key if key.startswith(SYSTEM_PREFIX) else SYSTEM_PREFIX + key


def params_of(config: dict[str, Any]) -> dict[str, str]:
    """A run config flattened to ``{"optimizer.lr": "0.001"}``; W&B's ``_wandb`` block is left out.

    Values the public API wraps as ``{"value": v, "desc": ...}`` are unwrapped. Strings
    stay as they are; other values are JSON (so ``0.05`` -> ``"0.05"``, ``True`` ->
    ``"true"``, lists as JSON arrays), matching how MLflow stores logged params
    closely enough for baseline matching.
    """
    out: dict[str, str] = {}
    for key, value in config.items():
        if key in ("_wandb", "wandb_version"):
            continue
        if isinstance(value, dict) and set(value) <= {"value", "desc"} and "value" in value:
            value = value["value"]
        if isinstance(value, dict):
            for k, v in params_of({f"{key}.{k2}": v2 for k2, v2 in value.items()}).items():
                out[k] = v
            continue
        out[key] = value if isinstance(value, str) else json.dumps(value)
    return out


def console_from_text(text: str, source: str = CONSOLE_SOURCE) -> list[ConsoleLine]:
    """Split console text into numbered lines the way a terminal shows them.

    A carriage return (progress bars) overwrites the line: only the text after the
    last ``\\r`` of a line is kept, as in W&B's own ``output.log``.
    """
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    out = []
    for i, line in enumerate(lines, start=1):
        if "\r" in line:
            parts = [p for p in line.split("\r") if p]
            line = parts[-1] if parts else ""
        out.append(ConsoleLine(source, i, line))
    return out


def console_from_chunks(chunks: Iterable[str], source: str = CONSOLE_SOURCE) -> list[ConsoleLine]:
    """Console lines from raw output chunks (stdout and stderr interleaved in write order)."""
    return console_from_text("".join(chunks), source)
