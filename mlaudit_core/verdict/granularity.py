"""How many examples a held-out metric was counted on, read from the values it takes.

An accuracy (or a detector's recall) measured on ``n`` examples (objects) is a multiple of ``1/n``:
a 16-image validation set gives 0.6875, 0.75, 0.8125; three validation boxes give recall 1/3,
2/3, 1. With ``n`` that small one example more or less moves the metric by ``1/n`` and the
binomial standard error of an accuracy near 0.5 is ``0.5/sqrt(n)`` (0.15 for ``n`` = 10): the
held-out curves' swings are counting noise, too coarse to rank epochs or to call an overfit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..roles import Role, as_fraction, parse_name
from ..rundata import RunData

#: Largest held-out set read from a metric's granularity. Above about 30 examples a 1/n grid is
#: too fine to tell from printed decimals, and the binomial error (0.5/sqrt(30) = 0.09) stops
#: dwarfing the differences the learning rules read.
MAX_EXAMPLES = 30
#: Share of a metric's values that must sit on the 1/n grid (YOLO's recall is interpolated at a
#: confidence threshold: own corpus f18b1-04 has 84 of 100 values on the 1/3 grid, the rest at
#: 0.54-0.99). Values at random fall on a 1/n grid (n <= 30, within 0.001) with chance 6% or less.
ON_GRID_SHARE = 0.8
#: Points a metric needs before its grid is read, and distinct values it must take (a metric
#: constant at 0 or 1 is on every grid).
MIN_POINTS = 8
MIN_LEVELS = 3
#: Distance from a grid point that counts as on it (values printed with 4 decimals or more).
GRID_TOL = 1e-3
#: Binomial standard errors within which a held-out accuracy's fall from its best is counting noise
#: (two: a 95% band).
NOISE_SE = 2.0


@dataclass(frozen=True)
class HeldoutSize:
    """``key`` takes values on a ``1/n`` grid: its held-out set has ``n`` examples (or objects)."""

    key: str
    n: int
    levels: int
    #: The metric's best and its last level (median of its last 3 values), as fractions.
    best: float = 1.0
    last: float = 1.0

    @property
    def loss_within_noise(self) -> bool:
        """Whether the metric's last level is within :data:`NOISE_SE` binomial standard errors of
        its best (at least one example, ``1/n``): what the held-out set measures did not get worse
        beyond counting noise, so a rise of the held-out loss beside it is no evidence of an overfit
        either. A drop beyond that (0.9 -> 0.6 on 25 examples) is a real loss of accuracy."""
        p = min(max(self.best, 0.0), 1.0)
        margin = max(NOISE_SE * float(np.sqrt(p * (1 - p) / self.n)), 1.0 / self.n)
        return self.best - self.last <= margin + 1e-9

    def sentence(self) -> str:
        return (
            f"{self.key} takes only multiples of 1/{self.n} ({self.levels} distinct values): it is "
            f"counted on about {self.n} held-out examples, so one example moves it by "
            f"{100 / self.n:.0f} points and its swings, and those of the held-out loss beside it, "
            "are counting noise"
        )


def _decimals(v: np.ndarray) -> int:
    """The fewest decimals (0-6) every value of ``v`` is printed with."""
    for d in range(7):
        if np.allclose(v * 10**d, np.round(v * 10**d), atol=1e-6):
            return d
    return 7


def _grid(v: np.ndarray) -> int | None:
    """The smallest ``n`` <= :data:`MAX_EXAMPLES` whose ``1/n`` grid holds :data:`ON_GRID_SHARE`
    of ``v`` (fractions in [0, 1]) with at least :data:`MIN_LEVELS` - 1 distinct interior levels on
    it (0 and 1 are on every grid: a metric stuck there says nothing of ``n``), coarser than the
    values' printed decimals could make by chance (``5 n`` at most ``10**decimals``: values rounded
    to 2 decimals fall on a 1/n grid for n up to 20 only by the grid, not by rounding)."""
    dec = _decimals(v)
    for n in range(2, MAX_EXAMPLES + 1):
        if 5 * n > 10**dec:
            return None
        on = np.abs(v * n - np.round(v * n)) <= GRID_TOL * n
        inner = np.unique(np.round(v[on & (v > GRID_TOL) & (v < 1 - GRID_TOL)] * n))
        if float(on.mean()) >= ON_GRID_SHARE and inner.size >= MIN_LEVELS - 1:
            return n
    return None


def heldout_size(run: RunData) -> HeldoutSize | None:
    """The held-out set size the run's held-out accuracy (the key playing ``VAL_ACCURACY``) or its
    only recall key (a detector's overall recall) reveals, or ``None``. Per-class metrics are not
    read (a rare class's recall on 3 of its entities says nothing of the set's size).

    A key is read when it has at least :data:`MIN_POINTS` finite values in [0, 1] (percent
    converted) taking at least :data:`MIN_LEVELS` distinct values, at least :data:`ON_GRID_SHARE`
    of them on one ``1/n`` grid with ``n`` <= :data:`MAX_EXAMPLES`."""
    keys = [run.key_for(Role.VAL_ACCURACY)]
    recalls = [
        k
        for k in run.metrics.keys
        if parse_name(k).head == "recall" and parse_name(k).split != "train"
    ]
    if len(recalls) == 1:
        keys.append(recalls[0])
    for key in dict.fromkeys(k for k in keys if k):
        v = run.series(key).finite().values
        if len(v) < MIN_POINTS:
            continue
        v, _ = as_fraction(key, v)
        if float(v.min()) < 0 or float(v.max()) > 1:
            continue
        levels = len(np.unique(np.round(v, 6)))
        if levels < MIN_LEVELS:
            continue
        n = _grid(v)
        if n is not None:
            return HeldoutSize(key, n, levels, float(v.max()), float(np.median(v[-3:])))
    return None
