"""Bounded memory for long console logs: which console lines and metric points are kept.

A console log can hold tens of millions of lines (a two-week pre-training job's stdout).
Reading it must not need memory in proportion to it (a 10 M-line log in at most 1 GB,
``benchmarks/logs_throughput.py``). Two stores bound what one pass keeps:

:class:`ConsoleKeeper` (console lines, for failure signatures and the report's evidence).
What reads ``RunData.console`` decides the policy (``grep -rn '\\.console' mlaudit_core``):

- the signature scan (:func:`mlaudit_core.signatures.scan`, detectors RT001-RT011, LI003,
  RT006) reads lines that hold a needle, traceback frames and exception lines;
- the verdict's :func:`~mlaudit_core.verdict.evidence.ending` reads the first 5,000 lines
  (the planned length, a framework's start line) and the last 400 (interrupts, early
  stopping, the framework's end line); ``precision_evidence`` the first 5,000.

So the keeper holds **the head** (the first ``head`` lines, default 50,000), **the tail**
(the last ``tail`` lines, default 20,000, a ring buffer), and in between **the relevant
lines** (:func:`~mlaudit_core.signatures.is_relevant`: a signature's needle, ``Error``,
``Exception``, ``Traceback``, a ``File "..."`` frame) with ``context`` lines either side
(default 3, for the source line under a frame and the message after an error line). The
relevant lines in between are bounded too: the first ``middle // 2`` and the last
``middle // 2`` (default 50,000 in all) are kept, so the first failure and the last one
both survive a log that repeats a warning millions of times. Lines keep their original
line numbers, so evidence points at the right line of the file. A kept line longer than
``max_chars`` (default 4,096) keeps its first quarter and its last three quarters around a
``[... N characters ...]`` marker: an exception printed after carriage-return progress
updates on the same line stays whole, and 120,000 kept lines stay under 500 MB even when
every line is enormous (the longest signature message in the catalog, a CUDA OOM, is
about 400 characters; evidence shows 500).

:class:`PointStore` (metric points). Every point is read; points are kept in typed arrays
per series (8 bytes each for step, value and wall time, one flag byte). Past ``budget``
points in all (default 5,000,000: 140 MB in the final table), the series with the most
points is thinned to every second point of its systematic sample (stride 1, 2, 4 ...),
until the total is under 3/4 of the budget. A systematic sample keeps a series' level,
trend and noise (what the trend and noise detectors compute); points a stride would drop
are kept anyway when they matter on their own: a change between finite and non-finite
values (the first NaN, a recovery), a step that goes backwards (a restart, a reset), and
the last point of each series; at most ``FORCED_MAX`` (10,000) such points per series, the
first ones, so a series whose value flips between NaN and finite, or whose step axis
alternates between two counters, on every line still fits the budget. Series smaller than the largest are never thinned first,
so an evaluation series printed every few thousand steps stays whole.
"""

from __future__ import annotations

from array import array
from collections import deque
from collections.abc import Callable
from math import isfinite

import numpy as np

from ...rundata import ConsoleLine, MetricTable

#: Console lines kept from the start of the log (``ending`` reads the first 5,000; a
#: start-up config dump of a large job runs to a few thousand lines).
HEAD_LINES = 50_000
#: Console lines kept from the end of the log (``ending`` reads the last 400).
TAIL_LINES = 20_000
#: Relevant lines kept between head and tail: the first half and the last half of them.
MIDDLE_LINES = 50_000
#: Lines kept before and after each relevant line in between.
CONTEXT_LINES = 3
#: Points kept per series outside the sample (non-finite changes, step resets): the first ones.
FORCED_MAX = 10_000
#: Longest text kept per console line (characters): its first quarter and last three quarters.
LINE_CHARS = 4096
#: Metric points kept in all before the largest series is thinned (24 bytes each in the
#: table, 25 while reading: about 120 MB).
POINT_BUDGET = 5_000_000

_STRIDE, _FORCED, _BOTH = 0, 1, 2


class ConsoleKeeper:
    """Keep the head, the tail and the relevant lines in between (with context), bounded.

    Args:
        head, tail, middle, context: as the module docstring says; ``head`` may be 0.
        max_chars: longest text kept per line.
        relevant: the predicate for lines that matter in between.

    ``add`` takes lines in log order; ``lines()`` returns the kept lines in log order;
    ``omitted`` counts lines not kept.
    """

    def __init__(
        self,
        head: int,
        tail: int,
        middle: int,
        context: int,
        max_chars: int,
        relevant: Callable[[str], bool],
    ) -> None:
        self.head_n, self.context, self.max_chars = head, context, max_chars
        self.relevant = relevant
        self.head: list[ConsoleLine] = []
        self.tail: deque[ConsoleLine] = deque(maxlen=max(tail, 1))
        self._tail_n = tail
        self.first_half = max(middle // 2, 0)
        self.mid_first: list[ConsoleLine] = []
        self.mid_last: deque[ConsoleLine] = deque(maxlen=max(middle - self.first_half, 1))
        self._before: deque[ConsoleLine] = deque(maxlen=max(context, 1))
        self._after = 0
        self.seen = 0
        self.dropped = 0

    def add(self, source: str, lineno: int, text: str) -> None:
        self.seen += 1
        cl = ConsoleLine(source, lineno, text if len(text) <= self.max_chars else self._cut(text))
        if len(self.head) < self.head_n:
            self.head.append(cl)
            return
        if self._tail_n <= 0:
            self._middle(cl)
            return
        if len(self.tail) == self.tail.maxlen:
            self._middle(self.tail[0])  # the oldest tail line leaves the tail window
        self.tail.append(cl)

    def _cut(self, text: str) -> str:
        a = self.max_chars // 4
        b = self.max_chars - a
        return f"{text[:a]} [... {len(text) - a - b:,} characters ...] {text[-b:]}"

    def _middle(self, cl: ConsoleLine) -> None:
        """Decide on a line that is neither in the head nor in the tail."""
        if cl.text and self.relevant(cl.text):
            for b in self._before:
                self._put(b)
            self._before.clear()
            self._put(cl)
            self._after = self.context
        elif self._after > 0:
            self._after -= 1
            self._put(cl)
        else:
            if self.context and len(self._before) == self._before.maxlen:
                self.dropped += 1
            elif not self.context:
                self.dropped += 1
                return
            self._before.append(cl)

    def _put(self, cl: ConsoleLine) -> None:
        if len(self.mid_first) < self.first_half:
            self.mid_first.append(cl)
            return
        if len(self.mid_last) == self.mid_last.maxlen:
            self.dropped += 1
        self.mid_last.append(cl)

    @property
    def omitted(self) -> int:
        return (
            self.seen
            - len(self.head)
            - len(self.mid_first)
            - len(self.mid_last)
            - (len(self.tail) if self._tail_n > 0 else 0)
        )

    def lines(self) -> list[ConsoleLine]:
        tail = list(self.tail) if self._tail_n > 0 else []
        return self.head + self.mid_first + list(self.mid_last) + tail


class _Series:
    __slots__ = (
        "flags",
        "forced",
        "last",
        "last_kept",
        "last_step",
        "nonfinite",
        "seen",
        "steps",
        "stride",
        "values",
        "walls",
    )

    def __init__(self) -> None:
        self.steps = array("q")
        self.values = array("d")
        self.walls = array("d")
        self.flags = bytearray()
        self.seen = 0
        self.forced = 0
        self.stride = 1
        self.last: tuple[int, float, float] | None = None
        self.last_kept = True
        self.last_step: int | None = None
        self.nonfinite = False


class PointStore:
    """Metric points per series with a total budget (see the module docstring).

    ``add(code, step, value, wall)`` takes points in log order; ``table(names)`` builds the
    :class:`~mlaudit_core.rundata.MetricTable`; ``thinned`` maps a series code to its
    final stride (only series that were thinned) and ``seen`` counts every point read.
    """

    def __init__(self, budget: int = POINT_BUDGET) -> None:
        self.budget = max(int(budget), 1000)
        self.limit = self.budget  # raised only when forced points alone exceed the budget
        self.series: list[_Series] = []
        self.kept = 0
        self.seen = 0
        self.any_wall = False
        #: bumped each time a series is thinned (kept-point indices taken before are stale)
        self.generation = 0

    def new_series(self) -> None:
        self.series.append(_Series())

    def add(self, code: int, step: int, value: float, wall: float) -> None:
        s = self.series[code]
        self.seen += 1
        i = s.seen
        s.seen = i + 1
        nonfinite = not isfinite(value)
        forced = s.forced < FORCED_MAX and (
            (i > 0 and nonfinite != s.nonfinite) or (s.last_step is not None and step < s.last_step)
        )
        s.nonfinite = nonfinite
        s.last_step = step
        on_stride = i % s.stride == 0
        if wall == wall:
            self.any_wall = True
        if on_stride or forced:
            if forced and not on_stride:
                s.forced += 1
            s.steps.append(step)
            s.values.append(value)
            s.walls.append(wall)
            s.flags.append(_BOTH if on_stride and forced else _STRIDE if on_stride else _FORCED)
            s.last_kept = True
            self.kept += 1
            if self.kept > self.limit:
                self._thin()
        else:
            s.last = (step, value, wall)
            s.last_kept = False

    def _thin(self) -> None:
        """Halve the sample of the largest series until the total is under 3/4 of the budget."""
        self.limit = self.budget
        while self.kept > self.budget * 3 // 4:
            s = max(
                self.series, key=lambda x: len(x.steps) - x.forced
            )  # the most points a stride can drop
            n = len(s.steps)
            if n - s.forced < 4:
                self.limit = max(
                    self.budget, self.kept * 2
                )  # nothing left to thin: do not retry per point
                return
            flags = np.frombuffer(s.flags, dtype=np.uint8)
            stride_pt = flags != _FORCED
            k = np.cumsum(stride_pt) - 1  # rank of each stride point in the sample
            keep_stride = stride_pt & (k % 2 == 0)
            keep = keep_stride | (flags != _STRIDE)
            new_flags = np.where(keep_stride, np.where(flags == _BOTH, _BOTH, _STRIDE), _FORCED)[
                keep
            ]
            if s.last_kept and not keep[-1]:  # the newest point stays the series' last point
                s.last = (s.steps[-1], s.values[-1], s.walls[-1])
                s.last_kept = False
            s.steps = array("q", np.frombuffer(s.steps, dtype=np.int64)[keep].tobytes())
            s.values = array("d", np.frombuffer(s.values, dtype=np.float64)[keep].tobytes())
            s.walls = array("d", np.frombuffer(s.walls, dtype=np.float64)[keep].tobytes())
            s.flags = bytearray(new_flags.astype(np.uint8).tobytes())
            s.stride *= 2
            self.generation += 1
            self.kept -= n - len(s.steps)
            if n - len(s.steps) == 0:
                self.limit = max(self.budget, self.kept * 2)  # nothing left to thin (all forced)
                return

    def append_final(self, code: int, step: int, value: float, wall: float) -> None:
        """A point added after reading (a summary value): always kept."""
        s = self.series[code]
        s.steps.append(step)
        s.values.append(value)
        s.walls.append(wall)
        s.flags.append(_FORCED)
        s.seen += 1
        self.seen += 1
        self.kept += 1

    def mark(self) -> tuple[int, list[int]]:
        """``(generation, kept points per series code)``: where every series stands now."""
        return self.generation, [len(s.steps) for s in self.series]

    @property
    def thinned(self) -> dict[int, int]:
        return {i: s.stride for i, s in enumerate(self.series) if s.stride > 1}

    def table(self, names: list[str]) -> MetricTable:
        """The kept points as a MetricTable (the pending last point of each series included).

        The per-series buffers are released as they are copied, so the peak is one copy.
        """
        for s in self.series:
            if not s.last_kept and s.last is not None:
                st, v, w = s.last
                s.steps.append(st)
                s.values.append(v)
                s.walls.append(w)
                s.flags.append(_FORCED)
                s.last_kept = True
        counts = np.array([len(s.steps) for s in self.series], dtype=np.int64)
        n = int(counts.sum())
        if n == 0:
            return MetricTable.empty()
        steps = np.empty(n, dtype=np.int64)
        values = np.empty(n, dtype=np.float64)
        walls = np.empty(n, dtype=np.float64) if self.any_wall else None
        a = 0
        for s in self.series:
            b = a + len(s.steps)
            if b > a:
                steps[a:b] = np.frombuffer(s.steps, dtype=np.int64)
                values[a:b] = np.frombuffer(s.values, dtype=np.float64)
                if walls is not None:
                    walls[a:b] = np.frombuffer(s.walls, dtype=np.float64)
            s.steps, s.values, s.walls, s.flags = array("q"), array("d"), array("d"), bytearray()
            a = b
        if walls is None:
            walls = np.broadcast_to(
                np.float64(np.nan), (n,)
            )  # read-only: no detector writes wall times
        return MetricTable.from_grouped(names, counts, steps, values, walls)
