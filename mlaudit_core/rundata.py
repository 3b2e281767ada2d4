"""RunData: the one canonical input every source is turned into.

A run from MLflow, W&B, ClearML, TensorBoard, a console log or a CI job becomes
one :class:`RunData`. Detectors read only this.

Metric histories are one long columnar table (key, step, wall time, value) held
in numpy arrays, grouped by key once at construction so that ``series(key)`` is
an O(1) slice. Ten million points cost about 28 bytes each (280 MB).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from typing import TYPE_CHECKING

import numpy as np

from .roles import AliasTable, Role

if TYPE_CHECKING:  # pandas loads on first use: importing RunData (the CLI, the hooks) skips it
    import pandas as pd

_LOSS_ROLES = (Role.TRAIN_LOSS, Role.VAL_LOSS)


def _all_zero(s: Series) -> bool:
    v = s.values[np.isfinite(s.values)]
    return bool(v.size) and not v.any()


class RunStatus(str, Enum):
    """Lifecycle state of a run, normalised across trackers."""

    FINISHED = "finished"
    FAILED = "failed"
    KILLED = "killed"
    RUNNING = "running"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Series:
    """One metric's history in logging order (not re-sorted by step).

    Attributes:
        key: the metric name as logged.
        steps: int64 array, shape (n,).
        values: float64 array, shape (n,); may contain NaN and +-inf as logged.
        wall_times: float64 array, shape (n,), seconds since the Unix epoch (NaN if unknown).
    """

    key: str
    steps: np.ndarray
    values: np.ndarray
    wall_times: np.ndarray

    def __len__(self) -> int:
        return int(self.values.shape[0])

    def by_step(self) -> Series:
        """The same points stably sorted by step, keeping the *last* value of a repeated step.

        A repeated step is a re-logged point (a resumed run overwrites); the last
        write is the one a tracker UI shows.
        """
        if len(self) == 0:
            return self
        order = np.argsort(self.steps, kind="stable")
        s = self.steps[order]
        keep = np.ones(len(s), dtype=bool)
        keep[:-1] = s[1:] != s[:-1]
        idx = order[keep]
        return Series(self.key, self.steps[idx], self.values[idx], self.wall_times[idx])

    def finite(self) -> Series:
        """Only the points whose value is finite."""
        m = np.isfinite(self.values)
        return Series(self.key, self.steps[m], self.values[m], self.wall_times[m])


def _factorize(keys) -> tuple[np.ndarray, list[str]]:
    """Key names -> (int32 codes, names in first-seen order), as ``pandas.factorize``; a
    missing key (None or NaN) gets code -1 and is left out of the table. A dict, no pandas:
    the readers of large runs pass codes already (``names=``)."""
    keys = list(keys)
    index: dict = {}
    codes = np.empty(len(keys), dtype=np.int32)
    for i, k in enumerate(keys):
        if k is None or (isinstance(k, float) and k != k):
            codes[i] = -1
            continue
        c = index.get(k)
        if c is None:
            c = index[k] = len(index)
        codes[i] = c
    return codes, [str(k) for k in index]


class MetricTable:
    """A long table of metric points, grouped by key.

    Args:
        keys: metric name per point, shape (n,), any sequence of str, or integer
            codes into ``names``.
        steps: int-like, shape (n,).
        values: float-like, shape (n,).
        wall_times: float seconds since epoch, shape (n,), or ``None`` (all NaN).
        names: when ``keys`` are integer codes, the key names they index.

    Raises:
        ValueError: if the columns have different lengths.
    """

    def __init__(
        self, keys, steps, values, wall_times=None, names: list[str] | None = None
    ) -> None:
        steps = np.asarray(steps, dtype=np.int64)
        values = np.asarray(values, dtype=np.float64)
        n = steps.shape[0]
        wall = (
            np.full(n, np.nan) if wall_times is None else np.asarray(wall_times, dtype=np.float64)
        )
        if names is None:
            codes, names = _factorize(keys)
        else:
            codes = np.asarray(keys, dtype=np.int32)
        if not (codes.shape[0] == n == values.shape[0] == wall.shape[0]):
            raise ValueError(
                "metric columns differ in length: "
                f"keys={codes.shape[0]} steps={n} values={values.shape[0]} "
                f"wall_times={wall.shape[0]}"
            )
        order = np.argsort(codes, kind="stable")
        self._codes = codes[order]
        self._steps = steps[order]
        self._values = values[order]
        self._wall = wall[order]
        bounds = np.searchsorted(self._codes, np.arange(len(names) + 1))
        self._slices = {
            names[i]: (int(bounds[i]), int(bounds[i + 1]))
            for i in range(len(names))
            if bounds[i + 1] > bounds[i]
        }

    @classmethod
    def empty(cls) -> MetricTable:
        return cls([], [], [], [])

    @classmethod
    def from_grouped(cls, names: list[str], counts, steps, values, wall_times=None) -> MetricTable:
        """A table from columns already grouped by key, without the sort ``__init__`` does.

        Args:
            names: the key of each group, in the order the groups appear in the columns.
            counts: points per group, shape (len(names),), summing to n.
            steps, values, wall_times: shape (n,) each, group after group (``wall_times`` may be
                ``None``: all NaN). Arrays are used as given (no copy when already int64/float64).

        Raises:
            ValueError: if the counts do not add up to the column length, or columns differ in length.
        """
        counts = np.asarray(counts, dtype=np.int64)
        steps = np.asarray(steps, dtype=np.int64)
        values = np.asarray(values, dtype=np.float64)
        n = steps.shape[0]
        wall = (
            np.full(n, np.nan) if wall_times is None else np.asarray(wall_times, dtype=np.float64)
        )
        if (
            counts.shape[0] != len(names)
            or int(counts.sum()) != n
            or values.shape[0] != n
            or wall.shape[0] != n
        ):
            raise ValueError(
                f"grouped columns do not match: {len(names)} names, {counts.shape[0]} counts summing "
                f"to {int(counts.sum())}, steps={n} values={values.shape[0]} wall_times={wall.shape[0]}"
            )
        t = cls.__new__(cls)
        t._codes = np.repeat(np.arange(len(names), dtype=np.int32), counts)
        t._steps, t._values, t._wall = steps, values, wall
        bounds = np.concatenate([[0], np.cumsum(counts)])
        t._slices = {}
        for i, name in enumerate(names):
            if counts[i] > 0:
                if name in t._slices:
                    raise ValueError(f"key {name!r} appears in two groups")
                t._slices[name] = (int(bounds[i]), int(bounds[i + 1]))
        return t

    @classmethod
    def from_series(cls, series: Iterable[Series]) -> MetricTable:
        """Build a table from per-key series (used by loaders that page per metric)."""
        series = list(series)
        if not series:
            return cls.empty()
        names = [s.key for s in series]
        codes = np.concatenate([np.full(len(s), i, dtype=np.int32) for i, s in enumerate(series)])
        return cls(
            codes,
            np.concatenate([s.steps for s in series]),
            np.concatenate([s.values for s in series]),
            np.concatenate([s.wall_times for s in series]),
            names=names,
        )

    @property
    def keys(self) -> list[str]:
        return list(self._slices)

    def __contains__(self, key: object) -> bool:
        return key in self._slices

    def __len__(self) -> int:
        return int(self._values.shape[0])

    def count(self, key: str) -> int:
        """Number of points logged for ``key`` (0 when not logged)."""
        a, b = self._slices.get(key, (0, 0))
        return b - a

    def series(self, key: str) -> Series:
        """The history of ``key`` in logging order. Raises ``KeyError`` if not logged."""
        a, b = self._slices[key]
        return Series(key, self._steps[a:b], self._values[a:b], self._wall[a:b])

    def to_frame(self) -> pd.DataFrame:
        """The long table as a DataFrame with columns key, step, wall_time, value.

        Raises:
            MissingDependency: pandas is not installed (``pip install 'mlaudit[pandas]'``).
        """
        from ._optional import pandas
        from .errors import MissingDependency

        pd = pandas()
        if pd is None:
            raise MissingDependency("pandas", "pandas")

        names = np.empty(len(self), dtype=object)
        for k, (a, b) in self._slices.items():
            names[a:b] = k
        return pd.DataFrame(
            {"key": names, "step": self._steps, "wall_time": self._wall, "value": self._values}
        )

    @property
    def nbytes(self) -> int:
        return int(
            self._codes.nbytes + self._steps.nbytes + self._values.nbytes + self._wall.nbytes
        )


@dataclass
class RunIdentity:
    """Who the run is: tracker name, id, display name, UI url, project/experiment."""

    tracker: str
    id: str
    name: str = ""
    url: str | None = None
    project: str | None = None

    def __post_init__(self) -> None:
        if self.url:  # a tracker URL built from the tracking URI never keeps its user-info
            from .redact import public_url

            self.url = public_url(self.url)


@dataclass(slots=True)
class ConsoleLine:
    """One line of console output: where it came from (file or stream) and its 1-based line number."""

    source: str
    lineno: int
    text: str


@dataclass
class Artifact:
    path: str
    size: int | None = None


#: File suffixes of saved weights (PyTorch/Lightning, safetensors, Keras/HDF5): an artifact with one is
#: a checkpoint the run wrote.
CHECKPOINT_SUFFIXES = (".ckpt", ".pt", ".pth", ".safetensors", ".bin", ".h5", ".keras")


@dataclass
class RunData:
    """The canonical, tracker-agnostic view of one run.

    Detectors read ``metrics`` through :meth:`series` and :meth:`key_for`, never by
    hard-coded names. ``warnings`` collects problems met while loading (a
    truncated event file, an unreadable artifact) and ends up in the report.
    """

    identity: RunIdentity
    status: RunStatus = RunStatus.UNKNOWN
    start_time: datetime | None = None
    end_time: datetime | None = None
    params: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    metrics: MetricTable = field(default_factory=MetricTable.empty)
    console: list[ConsoleLine] = field(default_factory=list)
    artifacts: list[Artifact] = field(default_factory=list)
    environment: dict[str, str] = field(default_factory=dict)
    parent_id: str | None = None
    resumed_from: str | None = None
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    aliases: AliasTable = field(default_factory=AliasTable)
    #: Roles whose series came from a source other than the metric store (e.g.
    #: parsed out of console text), so the report can say where a number came from.
    derived: dict[str, str] = field(default_factory=dict)
    #: Per-audit memo (e.g. the console signature scan), never serialised.
    cache: dict = field(default_factory=dict, repr=False, compare=False)

    def key_for(self, role: Role) -> str | None:
        """The logged key playing ``role``, or ``None`` when no key matches.

        Memoised per run in :attr:`cache` for the same metric table and alias table (the
        detectors ask about 100 times per audit; resolving took 30% of a small run's audit
        CPU, benchmarks/batch_throughput.py)."""
        memo = self.cache.setdefault("key_for", {})
        hit = memo.get(role)
        m = self.metrics
        if hit is not None and hit[0] is m and hit[1] is self.aliases and hit[2] == len(m.keys):
            return hit[3]
        key = self._key_for(role)
        memo[role] = (m, self.aliases, len(m.keys), key)
        return key

    def _key_for(self, role: Role) -> str | None:
        m = self.metrics
        keys = m.keys
        counts = {k: m.count(k) for k in keys}
        key = self.aliases.resolve(role, keys, counts)
        if (
            key is not None
            and counts[key] >= 2
            and role in _LOSS_ROLES
            and _all_zero(m.series(key))
        ):
            # a loss component that is exactly 0 everywhere (YOLO box_loss without boxes) carries no
            # signal: another candidate that moves plays the role (LI006 reports the zeros)
            others = [
                k
                for k in self.aliases.candidates(role, keys)
                if k != key and counts[k] >= 2 and not _all_zero(m.series(k))
            ]
            if others:
                return self.aliases.resolve(role, others, counts)
        return key

    def has(self, role: Role) -> bool:
        key = self.key_for(role)
        return key is not None and len(self.metrics.series(key).finite()) > 0

    def series(self, role_or_key: Role | str) -> Series:
        """The history for a role or a literal key.

        Raises:
            KeyError: if no logged key plays the role / the key was not logged.
        """
        if isinstance(role_or_key, Role):
            key = self.key_for(role_or_key)
            if key is None:
                raise KeyError(f"no metric plays role {role_or_key.value}")
            return self.metrics.series(key)
        return self.metrics.series(role_or_key)

    @property
    def duration_s(self) -> float | None:
        if self.start_time and self.end_time:
            return (self.end_time - self.start_time).total_seconds()
        return None
