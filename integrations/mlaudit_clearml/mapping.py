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
from collections.abc import Iterable
from datetime import datetime, timezone

import numpy as np

from mlaudit_core.roles import Role
from mlaudit_core.rundata import Artifact, ConsoleLine, MetricTable, RunData, RunStatus, Series

CONFIG_MAX_CHARS = 20_000
PROPERTIES = "properties"
#: Label prefix of mlaudit's own labels on a task (``mlaudit:overfit``).
LABEL_PREFIX = "mlaudit:"

STATUS = {
    "created": RunStatus.UNKNOWN,
    "queued": RunStatus.UNKNOWN,
    "in_progress": RunStatus.RUNNING,
    "stopped": RunStatus.KILLED,
    "failed": RunStatus.FAILED,
    "completed": RunStatus.FINISHED,
    "closed": RunStatus.FINISHED,
    "published": RunStatus.FINISHED,
    "publishing": RunStatus.FINISHED,
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
    for src, dst in (
        ("repository", "git_repository"),
        ("branch", "git_branch"),
        ("version_num", "git_commit"),
        ("entry_point", "entry_point"),
        ("binary", "python"),
        ("working_dir", "working_dir"),
    ):
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


def pair_wall_times(
    iter_values: np.ndarray, ts_values: np.ndarray, timestamps_ms: np.ndarray
) -> np.ndarray | None:
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


#: What ClearML's ``Logger`` stores in place of NaN and +-inf scalars by default
#: (``Logger.set_reporting_nan_value`` / ``set_reporting_inf_value``): the scalar store
#: cannot hold non-finite numbers.
SDK_NONFINITE_SUBSTITUTE = 0.0
_NONFINITE_WORD = re.compile(r"(?i)(?<![a-z])[-+]?(nan|inf|infinity)(?![a-z])")


def restore_nonfinite(run: RunData, substitute: float = SDK_NONFINITE_SUBSTITUTE) -> int:
    """Put back the non-finite values the SDK stored as ``substitute``, where the console proves them.

    The console lines that print a ``nan``/``inf`` are parsed with
    :func:`mlaudit_core.formats.consolelog.parse_lines`. For each
    printed metric with a NaN/inf value at some step, the stored series playing
    the same role (or logged under the same key) is examined: a maximal stretch of
    consecutive points equal to ``substitute`` that contains such a step is
    restored to NaN, and a warning names the series, the steps and the console
    evidence. Stretches the console does not prove are left as stored.

    Returns the number of points restored (0 when ``mlaudit_core.formats.consolelog`` is absent).
    """
    try:
        from mlaudit_core.formats.consolelog import parse_lines
    except ImportError:
        return 0
    # only lines that print a non-finite number can prove one (and parsing all costs seconds)
    lines = [(c.lineno, c.text) for c in run.console if _NONFINITE_WORD.search(c.text)]
    if not lines:
        return 0
    printed = parse_lines(lines, keep_console=False).metrics
    proofs: dict[str, tuple[str, np.ndarray]] = {}
    for pkey in printed.keys:
        ps = printed.series(pkey)
        bad = ps.steps[~np.isfinite(ps.values)]
        if not len(bad):
            continue
        key = pkey if pkey in run.metrics else None
        if key is None:
            role = next((r for r in Role if run.aliases.resolve(r, [pkey]) == pkey), None)
            key = run.key_for(role) if role is not None else None
        if key is not None and key not in proofs:
            proofs[key] = (pkey, bad)
    if not proofs:
        return 0
    restored = 0
    series = []
    for key in run.metrics.keys:
        s = run.metrics.series(key)
        if key in proofs:
            pkey, bad = proofs[key]
            order = np.argsort(s.steps, kind="stable")
            zero = s.values[order] == substitute
            values = s.values.copy()
            edges = np.flatnonzero(np.diff(np.concatenate([[0], zero.astype(np.int8), [0]])))
            hits = []
            for a, b in zip(edges[::2], edges[1::2]):
                steps = s.steps[order][a:b]
                if np.isin(bad, steps).any():
                    values[order[a:b]] = np.nan
                    hits.append((int(steps[0]), int(steps[-1]), b - a))
            if hits:
                n = sum(h[2] for h in hits)
                restored += n
                where = ", ".join(f"{a}-{b}" for a, b, _ in hits)
                run.warnings.append(
                    f"ClearML stores NaN/inf scalars as {substitute:g}: {n} points of {key} (steps {where}) "
                    f"restored as non-finite, the console printed {pkey} = nan/inf at step {int(bad[0])}"
                )
                s = Series(key, s.steps, values, s.wall_times)
        series.append(s)
    if restored:
        run.metrics = MetricTable.from_series(series)
    return restored
