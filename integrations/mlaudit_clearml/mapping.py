"""ClearML task documents and events -> RunData (shared by the online and offline loaders).

Naming, in ClearML's own terms:

* a scalar is reported as ``(title, series, iteration, value)``; its metric key
  is ``<title>/<series>`` (``train/loss``, ``:monitor:gpu/gpu_0_utilization``),
  so the alias table in :mod:`mlaudit_core.roles` maps it to a role; the step
  is the iteration;
* hyper-parameters are ``<section>/<name>`` (``Args/lr``, ``General/batch_size``),
  as the web UI shows them; configuration objects become
  ``configuration/<name>`` (their text, capped at ``CONFIG_MAX_CHARS``);
* user properties (the ``properties`` section) and labels both land in
  ``RunData.tags``: a property as ``name -> value``, a label as ``label -> "true"``;
* console output is the task's ``log`` events in time order, one
  :class:`ConsoleLine` per line of their ``msg`` (source ``console``).
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Iterable

import numpy as np

from mlaudit_core.rundata import Artifact, ConsoleLine, RunStatus

CONFIG_MAX_CHARS = 20_000
PROPERTIES = "properties"
#: Label prefix of mlaudit's own labels on a task (``mlaudit:overfit``).
LABEL_PREFIX = "mlaudit:"

STATUS = {
    "created": RunStatus.UNKNOWN, "queued": RunStatus.UNKNOWN, "in_progress": RunStatus.RUNNING,
    "stopped": RunStatus.KILLED, "failed": RunStatus.FAILED, "completed": RunStatus.FINISHED,
    "closed": RunStatus.FINISHED, "published": RunStatus.FINISHED, "publishing": RunStatus.FINISHED,
    "unknown": RunStatus.UNKNOWN,
}
FINISHED_STATUSES = ("completed", "failed", "stopped")
LOCKED_STATUSES = ("published", "publishing")

_PIP_LINE = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._\-\[\]]*)\s*(?:==|@|~=|>=)\s*([^\s;#]+)")


def metric_key(title: str, series: str) -> str:
    return f"{title}/{series}"


def parse_time(value) -> datetime | None:
    """A ClearML timestamp (ISO string, or epoch milliseconds) as an aware UTC datetime."""
    if value is None or value == "":
        return None
    if isinstance(value, (int, float)):
        return datetime.fromtimestamp(float(value) / 1000.0, tz=timezone.utc)
    try:
        dt = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)


def params_of(task: dict) -> dict[str, str]:
    """Hyper-parameters (``section/name``) and configuration objects (``configuration/name``)."""
    out: dict[str, str] = {}
    for section, items in (task.get("hyperparams") or {}).items():
        if section == PROPERTIES:
            continue
        for name, item in (items or {}).items():
            value = item.get("value") if isinstance(item, dict) else item
            out[f"{section}/{name}"] = "" if value is None else str(value)
    for name, item in (task.get("configuration") or {}).items():
        value = item.get("value") if isinstance(item, dict) else item
        if value:
            out[f"configuration/{name}"] = str(value)[:CONFIG_MAX_CHARS]
    # tasks written by SDKs older than the hyperparams API keep them in execution.parameters
    for key, value in ((task.get("execution") or {}).get("parameters") or {}).items():
        out.setdefault(key, "" if value is None else str(value))
    return out


def tags_of(task: dict) -> dict[str, str]:
    """User properties as ``name -> value`` and labels as ``label -> "true"``."""
    out: dict[str, str] = {}
    for name, item in ((task.get("hyperparams") or {}).get(PROPERTIES) or {}).items():
        value = item.get("value") if isinstance(item, dict) else item
        out[name] = "" if value is None else str(value)
    for label in task.get("tags") or []:
        out.setdefault(str(label), "true")
    return out


def environment_of(task: dict) -> dict[str, str]:
    """Code and package provenance: repository, branch, commit, entry point, python, ``pkg_<name>``."""
    script = task.get("script") or {}
    env: dict[str, str] = {}
    for src, dst in (("repository", "git_repository"), ("branch", "git_branch"), ("version_num", "git_commit"),
                     ("entry_point", "entry_point"), ("binary", "python"), ("working_dir", "working_dir")):
        if script.get(src):
            env[dst] = str(script[src])
    reqs = script.get("requirements") or {}
    pip = reqs.get("pip") if isinstance(reqs, dict) else None
    for line in (pip or "").splitlines():
        m = _PIP_LINE.match(line)
        if m:
            env[f"pkg_{m.group(1).lower()}"] = m.group(2)
    container = task.get("container") or {}
    if container.get("image"):
        env["container_image"] = str(container["image"])
    return env


def artifacts_of(task: dict) -> list[Artifact]:
    arts = (task.get("execution") or {}).get("artifacts") or []
    if isinstance(arts, dict):  # the database form, keyed by hash; the API returns a list
        arts = list(arts.values())
    return [Artifact(str(a.get("key")), a.get("content_size")) for a in arts if a.get("key")]


def console_lines(log_events: Iterable[dict]) -> list[ConsoleLine]:
    """Log events (already in time order) as numbered console lines."""
    lines: list[ConsoleLine] = []
    n = 0
    for ev in log_events:
        msg = ev.get("msg")
        if not msg:
            continue
        for text in str(msg).splitlines():
            n += 1
            lines.append(ConsoleLine("console", n, text))
    return lines


def pair_wall_times(iter_values: np.ndarray, ts_values: np.ndarray, timestamps_ms: np.ndarray) -> np.ndarray | None:
    """Wall times (s) for iteration-ordered points, from the same points in timestamp order.

    The raw scalar endpoint returns either ``(iter, value)`` in iteration order or
    ``(timestamp, value)`` in time order. When both orders agree (the value
    sequences are equal: the usual case of a run that logs iterations forward)
    the timestamps belong to the points position by position; otherwise (a
    restarted counter) they cannot be paired and ``None`` is returned.
    """
    if iter_values.shape != ts_values.shape:
        return None
    if not np.array_equal(iter_values, ts_values, equal_nan=True):
        return None
    return np.asarray(timestamps_ms, dtype=np.float64) / 1000.0


def to_float(values) -> np.ndarray:
    """Scalar values as float64; ``None`` (JSON for NaN/inf the SDK could not encode) becomes NaN."""
    return np.array([np.nan if v is None else v for v in values], dtype=np.float64)
