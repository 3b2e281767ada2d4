"""The report's plots drawn as SVG with numpy: no matplotlib, a few milliseconds per panel.

Each panel is one standalone ``<svg>`` element (``xmlns`` set, so the same text is a valid
``.svg`` file and an inline element of ``report.html``). It shows what the matplotlib PNGs of
:mod:`mlaudit_core.render.plots` show: the title, a legend above the axes, the curves (baseline
runs in grey), the findings' markers (vertical lines, spans, baseline bands, spike points),
non-finite points as ``×`` at the top edge, and under the first training panel the timeline
strip with its phases in lanes.

Curves are reduced to the pixels they are drawn on (:func:`pixel_minmax`): per pixel column
the first, last, lowest and highest point, in step order (M4, Jugel et al. 2014, "M4: A
Visualization-Oriented Time Series Data Aggregation", VLDB), which draws the same line as every
point would at that width, one-point spikes included.

Every string that comes from a run (metric keys, finding labels, phase names) is redacted,
shortened and XML-escaped (:func:`_text`); numbers are formatted by this module.

Why hand-written: drawing with matplotlib takes ~180 ms CPU per run (measured on
``batch mlflow`` with write-back) against a 10 ms budget; ``benchmarks/render_speed.py`` gives
the figure of this module.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from html import escape

import numpy as np

from ..redact import redact_text

#: Font used in the SVG text (the HTML page's font stack; falls back to any sans-serif).
FONT = "system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif"
#: Average glyph width as a fraction of the font size (DejaVu Sans / system sans at 11-13 px),
#: used to lay labels out without measuring text.
CHAR_W = 0.58


def _text(s: str, n: int = 60) -> str:
    """A run-controlled string made safe for SVG text: redacted, at most ``n`` chars, escaped."""
    t = redact_text(str(s))
    t = t if len(t) <= n else t[: n - 1] + "…"
    return escape(t, quote=True)


def _f(v: float) -> str:
    """A coordinate with one decimal (a tenth of a pixel), no trailing zeros."""
    return f"{v:.1f}".rstrip("0").rstrip(".")


def _fields(tenths: np.ndarray) -> np.ndarray:
    """Each integer of ``tenths`` (a number in tenths) as a fixed-width field of bytes: sign,
    whole digits, ``.``, tenth; the places it does not use (leading zeros, a ``.0``, the sign of
    a positive number) are NUL. Shape ``tenths.shape + (width,)``, uint8."""
    # int32 divides faster; int64 for numbers beyond 2e8 (never drawn, but valid input)
    a = np.abs(tenths).astype(np.int32 if np.abs(tenths).max() < 2**31 - 1 else np.int64)
    digits = max(1, len(str(int(a.max()) // 10)))
    field = np.empty((*a.shape, digits + 3), dtype=np.uint8)
    field[..., 0] = (tenths < 0) * ord("-")
    q = a // 10
    tenth = a - 10 * q
    has_tenth = tenth != 0
    field[..., digits + 1] = has_tenth * ord(".")
    field[..., digits + 2] = (tenth + 48) * has_tenth
    for k in range(digits, 0, -1):  # units digit first; a leading zero is left out
        r = q // 10
        d = q - 10 * r
        field[..., k] = (d + 48) * (q > 0) if k < digits else d + 48
        q = r
    return field


#: Numbers below this many tenths (1638.4: every coordinate of a panel) are written from a table.
_TABLE_SIZE = 1 << 14
_table: list[np.ndarray] = []


def _fields_table() -> np.ndarray:
    """:func:`_fields` of 0 .. ``_TABLE_SIZE`` - 1, built on first use (~0.3 ms, 98 KB)."""
    if not _table:
        _table.append(_fields(np.arange(_TABLE_SIZE)))
    return _table[0]


def numbers_text(vals: np.ndarray, seps: tuple[str, ...], tail: str = "") -> str:
    """Rows of numbers written as text in one vectorised pass: row ``i`` is ``seps[0]``,
    ``vals[i, 0]``, ``seps[1]``, ``vals[i, 1]``, …, ``tail``; the rows concatenated.

    Each number is written like :func:`_f` (one decimal, ``.0`` dropped, ``-`` when negative;
    rounded as ``numpy.rint(10 * v)``, which can differ from ``_f`` by a tenth at an exact tie
    such as ``0.05``, and a value that rounds to zero is ``0``, never ``-0``). Every number gets a fixed-width field of bytes (:func:`_fields`; a panel's coordinates are
    looked up in a table of them) in one matrix; the places a number does not use hold a NUL
    byte that ``bytes.translate`` deletes. No Python code runs per number: a curve of 4,000
    points is written in ~0.1 ms where ``"%.1f" %`` takes ~2 ms (measured with
    ``benchmarks/render_speed.py``, whose budget is 10 ms for a whole page).

    Args:
        vals: float array, shape (n, len(seps)); rows with a non-finite value are skipped, and
            a value beyond +-1e15 is written as +-1e15.
        seps: ASCII text (no NUL) before each column's number.
        tail: ASCII text (no NUL) after each row.

    Returns:
        The text (``""`` when no row is left).
    """
    m = len(seps)
    vals = np.asarray(vals, dtype=float).reshape(-1, m)
    finite = np.isfinite(vals)
    if not finite.all():
        vals = vals[finite.all(axis=1)]
    n = vals.shape[0]
    if n == 0:
        return ""
    if np.abs(vals).max() > 1e15:  # a point 1e15 px away is drawn the same where it is
        vals = np.clip(vals, -1e15, 1e15)
    tenths = np.rint(vals * 10)
    if tenths.min() >= 0 and tenths.max() < _TABLE_SIZE:
        field = _fields_table().take(tenths.astype(np.intp), axis=0)
    else:
        field = _fields(tenths)
    w = field.shape[2]
    seps_b = [sep.encode("ascii") for sep in seps]
    tail_b = tail.encode("ascii")
    out = np.empty((n, sum(map(len, seps_b)) + m * w + len(tail_b)), dtype=np.uint8)
    o = 0
    for j, sep in enumerate(seps_b):
        out[:, o : o + len(sep)] = np.frombuffer(sep, np.uint8)
        o += len(sep)
        out[:, o : o + w] = field[:, j]
        o += w
    out[:, o:] = np.frombuffer(tail_b, np.uint8)
    return out.tobytes().translate(None, b"\0").decode("ascii")


def pixel_minmax(px: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Indices to draw of a curve whose x is already in pixels: per integer pixel column the
    first, last, lowest and highest point, in order.

    Args:
        px: x positions in pixels, non-decreasing, shape (n,).
        y: values (any monotone transform of the drawn y), finite, shape (n,).

    Returns:
        Sorted int64 indices into ``px``/``y``; at most 4 per pixel column.
    """
    n = px.shape[0]
    if n <= 4:
        return np.arange(n, dtype=np.int64)
    col = (px if px[0] >= 0 else np.floor(px)).astype(np.int64)  # floor: truncation when >= 0
    brk = np.flatnonzero(col[1:] != col[:-1]) + 1
    if (brk.size + 1) * 4 >= n:
        return np.arange(n, dtype=np.int64)
    starts = np.empty(brk.size + 1, dtype=np.int64)
    starts[0], starts[1:] = 0, brk
    counts = np.empty_like(starts)
    counts[:-1], counts[-1] = brk - starts[:-1], n - brk[-1] if brk.size else n
    # the first index of each column's minimum (maximum): the largest of n - i over its ties
    back = np.arange(n, 0, -1)
    imin = n - np.maximum.reduceat(
        np.where(y == np.repeat(np.minimum.reduceat(y, starts), counts), back, 0), starts
    )
    imax = n - np.maximum.reduceat(
        np.where(y == np.repeat(np.maximum.reduceat(y, starts), counts), back, 0), starts
    )
    keep = np.zeros(n, dtype=bool)
    keep[starts] = True
    keep[brk - 1] = True
    keep[-1] = True
    keep[imin] = keep[imax] = True
    return np.flatnonzero(keep)


def nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """About ``n`` round tick values (1, 2, 2.5, 5 x 10^k steps) within [lo, hi]."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo] if math.isfinite(lo) else []
    raw = hi / max(n, 1) - lo / max(n, 1)  # not (hi - lo) / n: that overflows past +-9e307
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step - 1e-9) * step
    out: list[float] = []
    v = first
    while v <= hi + step * 1e-9 and len(out) < 50:
        out.append(0.0 if abs(v) < step * 1e-9 else v)
        v += step
    return out


def _fmt(v: float) -> str:
    """A tick label: ``1.5``, ``2e-05``, ``12k``-free plain ``:g`` formatting."""
    if v == 0:
        return "0"
    a = abs(v)
    if 1e-3 <= a < 1e6:
        return f"{v:.6g}"
    return f"{v:.3g}"


class Axes:
    """Data -> pixel transform of one axes box (linear, log10 or log2 y)."""

    def __init__(self, x0, y0, w, h, xlim, ylim, ylog: int = 0):
        self.x0, self.y0, self.w, self.h = x0, y0, w, h
        self.xlim, self.ylog = xlim, ylog
        if ylog:
            self.ylim = (math.log(ylim[0], ylog), math.log(ylim[1], ylog))
        else:
            self.ylim = ylim

    # Differences are taken of halves (x / 2 - a / 2): exact for normal floats, so the same
    # pixels, and finite for a range wider than a float (-1e308 .. 1e308).

    def px(self, x):
        a, b = self.xlim
        return (
            self.x0
            + (np.asarray(x, dtype=float) * 0.5 - a * 0.5) / ((b * 0.5 - a * 0.5) or 1.0) * self.w
        )

    def ty(self, y):
        y = np.asarray(y, dtype=float)
        return np.log(y) / math.log(self.ylog) if self.ylog else y

    def py(self, y):
        a, b = self.ylim
        return (
            self.y0 + self.h - (self.ty(y) * 0.5 - a * 0.5) / ((b * 0.5 - a * 0.5) or 1.0) * self.h
        )

    def x1(self, x) -> float:
        """:meth:`px` of one number, without numpy's per-call cost (the same float operations)."""
        a, b = self.xlim
        return self.x0 + (float(x) * 0.5 - a * 0.5) / ((b * 0.5 - a * 0.5) or 1.0) * self.w

    def y1(self, y) -> float:
        """:meth:`py` of one number (numpy's log on a log scale, as :meth:`py`)."""
        if self.ylog:
            return float(self.py(y))
        a, b = self.ylim
        return self.y0 + self.h - (float(y) * 0.5 - a * 0.5) / ((b * 0.5 - a * 0.5) or 1.0) * self.h


class SvgPanel:
    """One panel being drawn: collects SVG elements and legend entries."""

    def __init__(self, width: int, height: int):
        self.width, self.height = width, height
        self.parts: list[str] = []
        self.legend: dict[str, str] = {}  # escaped label -> swatch svg (drawn at 0,0)

    def add(self, s: str) -> None:
        self.parts.append(s)

    def path(
        self, xs: np.ndarray, ys: np.ndarray, colour: str, width: float, extra: str = ""
    ) -> None:
        if xs.size == 0:
            return
        pts = numbers_text(np.column_stack([xs, ys]), (" ", ",")).lstrip(" ")
        self.add(
            f'<polyline points="{pts}" fill="none" stroke="{colour}" stroke-width="{width}" '
            f'stroke-linejoin="round" stroke-linecap="round"{extra}/>'
        )

    def text(self, x, y, s: str, size: float, colour="#374151", anchor="start", extra="") -> None:
        self.add(
            f'<text x="{_f(x)}" y="{_f(y)}" font-size="{size}" fill="{colour}" '
            f'text-anchor="{anchor}"{extra}>{s}</text>'
        )


#: Marker shapes: (text before the number, 0 for x / 1 for y, offset in radii) per coordinate,
#: then the element's closing text (``{c}`` the colour, ``{r}`` the radius).
_MARKERS: dict[str, tuple[tuple[tuple[str, int, float], ...], str]] = {
    "v": (
        (
            ('<path d="M', 0, -1),
            (",", 1, -0.7),
            ("L", 0, 1),
            (",", 1, -0.7),
            ("L", 0, 0),
            (",", 1, 1),
        ),
        'Z" fill="none" stroke="{c}" stroke-width="1.5"/>',
    ),
    "o": (
        (('<circle cx="', 0, 0), ('" cy="', 1, 0)),
        '" r="{r}" fill="none" stroke="{c}" stroke-width="1.5"/>',
    ),
    "o.": ((('<circle cx="', 0, 0), ('" cy="', 1, 0)), '" r="{r}" fill="{c}"/>'),
    "x": (
        (
            ('<path d="M', 0, -1),
            (",", 1, -1),
            ("L", 0, 1),
            (",", 1, 1),
            ("M", 0, -1),
            (",", 1, 1),
            ("L", 0, 1),
            (",", 1, -1),
        ),
        '" stroke="{c}" stroke-width="1.3"/>',
    ),
    "D": (
        (
            ('<path d="M', 0, 0),
            (",", 1, -1),
            ("L", 0, 1),
            (",", 1, 0),
            ("L", 0, 0),
            (",", 1, 1),
            ("L", 0, -1),
            (",", 1, 0),
        ),
        'Z" fill="{c}"/>',
    ),
}


def marker_svg(kind: str, x: float, y: float, colour: str, size: float = 7) -> str:
    """One point marker: ``"v"`` (hollow down-triangle), ``"o"`` (hollow circle), ``"o."``
    (filled small circle), ``"x"`` (cross), ``"D"`` (filled diamond, any other kind)."""
    coords, tail = _MARKERS.get(kind, _MARKERS["D"])
    r = size / 2
    xy = (x, y)
    head = "".join(sep + _f(xy[axis] + m * r) for sep, axis, m in coords)
    return head + tail.format(c=colour, r=_f(r))


def markers_svg(kind: str, xs, ys, colour: str, size: float = 7) -> str:
    """:func:`marker_svg` at every (``xs[i]``, ``ys[i]``), the elements concatenated, written in
    one vectorised pass (:func:`numbers_text`); points with a non-finite coordinate are skipped.
    ``xs``, ``ys``: pixel positions, shape (n,) each (a scalar ``ys`` is broadcast)."""
    coords, tail = _MARKERS.get(kind, _MARKERS["D"])
    r = size / 2
    xy = np.broadcast_arrays(np.asarray(xs, dtype=float), np.asarray(ys, dtype=float))
    vals = np.column_stack([xy[axis] + m * r for _, axis, m in coords])
    return numbers_text(vals, tuple(sep for sep, _, _ in coords), tail.format(c=colour, r=_f(r)))


# --- one panel ----------------------------------------------------------------------------------


@dataclass
class _YStats:
    """What the y axis needs of a panel's values, gathered without joining the arrays."""

    n: int = 0
    positive: bool = True  # every value > 0 (a NaN is not)
    lo: float = math.inf  # the finite values' range
    hi: float = -math.inf
    raw_lo: float = math.inf  # with +-inf
    raw_hi: float = -math.inf


def _y_stats(ys: list[np.ndarray]) -> _YStats:
    """:class:`_YStats` of ``ys``; two passes over an all-finite array (its min and max)."""
    st = _YStats()
    for y in ys:
        if y.size == 0:
            continue
        st.n += y.size
        mn, mx = float(y.min()), float(y.max())
        if math.isfinite(mn) and math.isfinite(mx):
            fin_lo, fin_hi, pos = mn, mx, mn > 0
        else:  # NaN or inf among the values
            f = y[np.isfinite(y)]
            fin_lo, fin_hi = (float(f.min()), float(f.max())) if f.size else (math.inf, -math.inf)
            pos = bool((y > 0).all())  # then no NaN: mn, mx are the raw range
        st.positive = st.positive and pos
        st.lo, st.hi = min(st.lo, fin_lo), max(st.hi, fin_hi)
        st.raw_lo, st.raw_hi = min(st.raw_lo, mn), max(st.raw_hi, mx)
    return st


def _y_scale(panel, st: _YStats) -> int:
    """0 (linear), 10 or 2: the y scale :func:`mlaudit_core.render.plots._scale` picks."""
    if st.n == 0 or not st.positive:
        return 0
    if panel.yscale == "log2":
        return 2
    if panel.yscale == "auto" and st.raw_hi / st.raw_lo > 100:
        return 10
    return 0


def _y_ticks(ax: Axes) -> list[tuple[float, str]]:
    lo, hi = ax.ylim
    if not ax.ylog:
        return [(v, _fmt(v)) for v in nice_ticks(lo, hi)]
    k0, k1 = math.ceil(lo - 1e-9), math.floor(hi + 1e-9)
    step = max(1, math.ceil((k1 - k0 + 1) / 7))
    out = []
    for k in range(k0, k1 + 1, step):
        v = float(ax.ylog) ** k
        label = _fmt(v) if ax.ylog == 10 else f"2^{k}"
        out.append((v, label))
    if not out:  # less than one power inside the range: linear ticks on the log axis
        out = [(v, _fmt(v)) for v in nice_ticks(ax.ylog**lo, ax.ylog**hi, 4) if v > 0]
    return out


@dataclass
class _Drawn:
    """What one panel draws, gathered from its series before any pixel is placed."""

    keys: list[str]
    legend: list[tuple[str, str]] = field(default_factory=list)  # (escaped label, kind:colour)
    curves: list[tuple[np.ndarray, np.ndarray, str, float, bool]] = field(default_factory=list)
    grey: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)
    bad: list[tuple[np.ndarray, str]] = field(default_factory=list)
    drawn: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    ys: list[np.ndarray] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    total: int = 0
    xmin: float = math.inf
    xmax: float = -math.inf
    n_baselines: int = 0
    xlabel: str = "step"

    def span(self, lo: float, hi: float) -> None:
        self.xmin, self.xmax = min(self.xmin, lo), max(self.xmax, hi)


def _gather(series, run) -> _Drawn:
    """Curves (finite points), baseline curves (grey) and non-finite points of each series."""
    from . import plots as P

    d = _Drawn(keys=[k for k, _ in series])
    for i, (key, s) in enumerate(series):
        d.total += len(s)
        cx, cy, bad_x, d.xlabel = P._xy(s)
        colour = (P.TRAIN_COLOUR, P.VAL_COLOUR, *P.OTHER_COLOURS)[i % (2 + len(P.OTHER_COLOURS))]
        base = P._baseline_curves(run, key)
        d.n_baselines = max(d.n_baselines, len(base))
        for _, bx, by in base:
            d.grey.append((bx, by))
            d.ys.append(by)
            d.span(float(bx[0]), float(bx[-1]))
        if cx.size:
            sparse = cx.size < 60
            d.curves.append((cx, cy, colour, 1.6 if sparse else 1.3, sparse))
            d.legend.append((_text(f"{key} ({len(s):,} pts)"), f"line:{colour}"))
            d.drawn[key] = (cx, cy)
            d.ys.append(cy)
            d.span(float(cx[0]), float(cx[-1]))
        if bad_x.size:
            _gather_nonfinite(d, key, bad_x)
    if d.n_baselines:
        d.legend.append((f"baseline runs ({d.n_baselines})", "line:#9ca3af"))
    return d


def _gather_nonfinite(d: _Drawn, key: str, bad_x: np.ndarray) -> None:
    """Non-finite points of ``key``: an × at the top edge (at most 400), a legend entry, a note."""
    from . import plots as P

    d.span(float(bad_x.min()), float(bad_x.max()))
    bx = bad_x if bad_x.size <= 400 else bad_x[np.linspace(0, bad_x.size - 1, 400).astype(int)]
    d.bad.append((bx, P.EVENT_COLOURS["non-finite"]))
    d.legend.append(
        (
            _text(f"{key}: NaN/inf ({bad_x.size:,} pts)"),
            f"x:{P.EVENT_COLOURS['non-finite']}",
        )
    )
    d.notes.append(
        f"{key}: {bad_x.size:,} non-finite point(s), first at step {int(bad_x.min())} "
        "(marked × at the top edge)"
    )


def _shown_markers(markers, d: _Drawn, panel, with_timeline: bool) -> list:
    """The markers drawn on this panel (its metrics', and the run-wide ones on training panels)."""
    shown = []
    for m in markers:
        if m.key is not None and m.key not in d.keys:
            continue
        if m.key is None and panel.group != "training":
            continue
        if m.kind == "band":
            d.ys.append(np.asarray(m.y, dtype=float))
        if m.kind == "points" and m.key not in d.drawn:
            continue
        shown.append(m)
        if m.note and (m.key is not None or with_timeline):
            d.notes.append(m.note)
    return shown


def _limits(panel, d: _Drawn) -> tuple[int, tuple[float, float], tuple[float, float]]:
    """(log base or 0, y limits, x limits), padded 5% (y) and 1% (x)."""
    st = _y_stats(d.ys)
    ylog = _y_scale(panel, st)
    if st.lo <= st.hi:  # some finite value (all > 0 on a log scale)
        lo, hi = st.lo, st.hi
    else:
        lo, hi = (1.0, 10.0) if ylog else (0.0, 1.0)
    if ylog:
        llo, lhi = math.log(lo, ylog), math.log(hi, ylog)
        pad = (lhi - llo) * 0.05 or 0.5
        # the padded limits stay floats: 5e-324 .. 1e308 padded 5% would be 10^-355 .. 10^340
        e_min, e_max = math.log(5e-324, ylog), math.log(sys.float_info.max, ylog) * (1 - 1e-12)
        ylim = (ylog ** max(llo - pad, e_min), ylog ** min(lhi + pad, e_max))
    else:
        # 5% of each limit, not of their difference (finite for -1e308 .. 1e308)
        pad = (hi * 0.05 - lo * 0.05) or (abs(hi) * 0.05 or 0.5)
        big = sys.float_info.max
        ylim = (max(lo - pad, -big), min(hi + pad, big))
    xmin, xmax = (d.xmin, d.xmax) if np.isfinite(d.xmin) else (0.0, 1.0)
    xpad = (xmax * 0.01 - xmin * 0.01) or 0.5
    return ylog, ylim, (xmin - xpad, xmax + xpad)


def _legend(d: _Drawn, shown) -> list[tuple[str, str]]:
    """The legend: the curves', then the markers' in drawing order, unique by label."""
    from . import plots as P

    legend = list(d.legend)
    for m in shown:
        kind = {"vline": "vline", "span": "span", "band": "band"}.get(m.kind)
        if m.kind == "points":
            kind = "v" if m.colour == P.EVENT_COLOURS["spike"] else "o"
        legend.append((_text(m.label), f"{kind}:{m.colour}"))
    seen: dict[str, str] = {}
    for lab, sw in legend:
        seen.setdefault(lab, sw)
    return list(seen.items())


@dataclass
class _Frame:
    """A panel being drawn: the canvas, the axes and the sizes every drawing step shares."""

    g: SvgPanel
    ax: Axes
    top: float
    left: float
    axes_w: float
    axes_h: float
    fs: float
    tick_fs: float
    xt: list[float]
    clip: str

    @property
    def ab(self) -> float:
        """The y pixel of the axes' bottom."""
        return self.top + self.axes_h


def _draw_grid(fr: _Frame, panel) -> None:
    """Grid lines, y tick labels, the axes' frame and the y label."""
    g, ax, top, ab, left = fr.g, fr.ax, fr.top, fr.ab, fr.left
    for v in fr.xt:
        x = ax.x1(v)
        g.add(
            f'<line x1="{_f(x)}" y1="{_f(top)}" x2="{_f(x)}" y2="{_f(ab)}" stroke="#e5e7eb" stroke-width="0.8"/>'
        )
    for v, lab in _y_ticks(ax):
        y = ax.y1(v)
        if not top - 0.5 <= y <= ab + 0.5:
            continue
        g.add(
            f'<line x1="{_f(left)}" y1="{_f(y)}" x2="{_f(left + fr.axes_w)}" y2="{_f(y)}" stroke="#e5e7eb" stroke-width="0.8"/>'
        )
        g.text(left - 6, y + fr.tick_fs * 0.35, escape(lab), fr.tick_fs, "#4b5563", "end")
    g.add(
        f'<path d="M{_f(left)},{_f(top)}V{_f(ab)}H{_f(left + fr.axes_w)}" fill="none" stroke="#9ca3af" stroke-width="1"/>'
    )
    if panel.ylabel:
        fs = fr.fs
        g.text(
            16 * fs,
            top + fr.axes_h / 2,
            escape(panel.ylabel),
            12 * fs,
            "#374151",
            "middle",
            f' transform="rotate(-90 {_f(16 * fs)} {_f(top + fr.axes_h / 2)})"',
        )


def _draw_under(fr: _Frame, shown, d: _Drawn) -> None:
    """Spans, the baselines' grey curves and bands: under the run's curves."""
    from . import plots as P

    g, ax, clip = fr.g, fr.ax, fr.clip
    for m in shown:
        if m.kind == "span":
            a, b = ax.x1(m.steps[0]), ax.x1(m.steps[1])
            op = 0.08 if m.colour == P.EVENT_COLOURS["finding"] else 0.13
            g.add(
                f'<rect x="{_f(a)}" y="{_f(fr.top)}" width="{_f(max(b - a, 1.0))}" height="{_f(fr.axes_h)}" '
                f'fill="{m.colour}" fill-opacity="{op}"{clip}/>'
            )
    for bx, by in d.grey:
        xs = ax.px(bx)
        keep = pixel_minmax(xs, by)  # the pixel y is monotone in the value
        g.path(xs[keep], ax.py(by[keep]), "#9ca3af", 0.8, f' stroke-opacity="0.8"{clip}')
    for m in shown:
        if m.kind == "band":
            a, b = ax.x1(m.steps[0]), ax.x1(m.steps[1])
            y1, y0 = ax.y1(m.y[1]), ax.y1(m.y[0])
            g.add(
                f'<rect x="{_f(a)}" y="{_f(y1)}" width="{_f(max(b - a, 1.0))}" height="{_f(max(y0 - y1, 1.0))}" '
                f'fill="{m.colour}" fill-opacity="0.3" stroke="{m.colour}" stroke-width="0.8"{clip}/>'
            )


def _draw_over(fr: _Frame, shown, d: _Drawn) -> None:
    """The run's curves, then vertical lines, marked points and non-finite points on top."""
    from . import plots as P

    g, ax = fr.g, fr.ax
    for cx, cy, colour, lw, sparse in d.curves:
        xs = ax.px(cx)
        keep = pixel_minmax(xs, cy)  # the pixel y is monotone in the value
        g.path(xs[keep], ax.py(cy[keep]), colour, lw, fr.clip)
        if sparse:
            g.add(markers_svg("o.", xs, ax.py(cy), colour, 5))
    for m in shown:
        if m.kind == "vline":
            x = ax.x1(m.steps[0])
            g.add(
                f'<line x1="{_f(x)}" y1="{_f(fr.top)}" x2="{_f(x)}" y2="{_f(fr.ab)}" stroke="{m.colour}" '
                f'stroke-width="1.2" stroke-dasharray="5 3"/>'
            )
        elif m.kind == "points":
            px_, py_ = P._value_at(*d.drawn[m.key], m.steps)
            kind = "v" if m.colour == P.EVENT_COLOURS["spike"] else "o"
            g.add(markers_svg(kind, ax.px(px_), ax.py(py_), m.colour, 9))
    for bx, colour in d.bad:
        g.add(markers_svg("x", ax.px(bx), fr.top, colour, 6))


def _draw_timeline(fr: _Frame, tl_layout, tl_h: float, lane_h: float, tfs: float) -> float:
    """The timeline strip under the axes; returns the y pixel of its bottom."""
    g, ax, left = fr.g, fr.ax, fr.left
    t0 = fr.ab + 8
    g.text(left - 6, t0 + tl_h / 2 + 4, "timeline", 11 * fr.fs, "#374151", "end")
    for v in fr.xt:
        x = ax.x1(v)
        g.add(
            f'<line x1="{_f(x)}" y1="{_f(t0)}" x2="{_f(x)}" y2="{_f(t0 + tl_h)}" stroke="#f3f4f6" stroke-width="0.8"/>'
        )
    g.add(
        f'<line x1="{_f(left)}" y1="{_f(t0 + tl_h)}" x2="{_f(left + fr.axes_w)}" y2="{_f(t0 + tl_h)}" stroke="#9ca3af"/>'
    )
    for label, a, b, lane, anchor, lx, colour in tl_layout:
        yc = t0 + 4 + lane * lane_h + lane_h / 2
        xa, xb = ax.x1(a), ax.x1(b)
        if b > a:
            g.add(
                f'<rect x="{_f(xa)}" y="{_f(yc - lane_h * 0.35)}" width="{_f(max(xb - xa, 1.0))}" '
                f'height="{_f(lane_h * 0.7)}" fill="{colour}" fill-opacity="0.55"/>'
            )
        else:
            g.add(marker_svg("D", xa, yc, colour, 8))
        tx = ax.x1(lx) + (4 if anchor == "in" else (-6 if anchor == "left" else 6))
        g.text(
            tx,
            yc + tfs * 0.35,
            _text(label),
            tfs,
            "#1f2937",
            "end" if anchor == "left" else "start",
        )
    return t0 + tl_h


def _draw_xlabels(fr: _Frame, xa_y: float, xlabel: str) -> None:
    """X tick marks and labels, and the x axis label, under ``xa_y``."""
    g, ax = fr.g, fr.ax
    for v in fr.xt:
        x = ax.x1(v)
        g.add(
            f'<line x1="{_f(x)}" y1="{_f(xa_y)}" x2="{_f(x)}" y2="{_f(xa_y + 4)}" stroke="#9ca3af"/>'
        )
        g.text(x, xa_y + 6 + fr.tick_fs, escape(_fmt(v)), fr.tick_fs, "#4b5563", "middle")
    g.text(
        fr.left + fr.axes_w / 2,
        xa_y + 10 + fr.tick_fs + 12 * fr.fs,
        escape(xlabel),
        12 * fr.fs,
        "#374151",
        "middle",
    )


def _draw_legend(fr: _Frame, legend, ncol: int, lfs: float, title_fs: float) -> None:
    """The legend, right-aligned in ``ncol`` columns under the title row."""
    g = fr.g
    widths = [len(lab) for lab, _ in legend]
    colw = (max(widths) * CHAR_W * lfs) + 30
    colw = min(colw, fr.axes_w / ncol)
    x0 = fr.left + fr.axes_w - ncol * colw
    for i, (lab, sw) in enumerate(legend):
        r, c = divmod(i, ncol)
        lx = x0 + c * colw
        ly = 10 + title_fs + 8 + r * (lfs + 6) + lfs * 0.5
        kind, colour = sw.split(":", 1)
        if kind == "line":
            g.add(
                f'<line x1="{_f(lx)}" y1="{_f(ly)}" x2="{_f(lx + 20)}" y2="{_f(ly)}" stroke="{colour}" stroke-width="2"/>'
            )
        elif kind == "vline":
            g.add(
                f'<line x1="{_f(lx)}" y1="{_f(ly)}" x2="{_f(lx + 20)}" y2="{_f(ly)}" stroke="{colour}" stroke-width="1.5" stroke-dasharray="5 3"/>'
            )
        elif kind in ("span", "band"):
            fop = "0.3" if kind == "band" else "0.2"
            g.add(
                f'<rect x="{_f(lx)}" y="{_f(ly - 5)}" width="20" height="10" fill="{colour}" fill-opacity="{fop}"/>'
            )
        else:
            g.add(marker_svg(kind, lx + 10, ly, colour, 8))
        g.text(lx + 25, ly + lfs * 0.35, lab, lfs, "#374151")


def render_panel_svg(panel, series, markers, report, run, with_timeline: bool):
    """One :class:`~mlaudit_core.render.plots.Plot` with ``svg`` set (see the module docstring).

    Args:
        panel: the :class:`~mlaudit_core.render.plots.Panel`.
        series: (metric key, Series) pairs drawn, in legend order.
        markers: every finding marker of the report (those of other metrics are skipped).
        report: the audit (its timeline is drawn when ``with_timeline``).
        run: the run (its baselines' curves are drawn in grey).
        with_timeline: draw the timeline strip under this panel.
    """
    from . import plots as P

    big = panel.name == "loss"
    fs = 1.0 if big else 1.2  # half-width panels are shown smaller: larger type keeps them legible
    width = 1100 if big else 704
    axes_h = 400 if big else 250
    left, right = (70 if big else 84), 16
    d = _gather(series, run)
    shown = _shown_markers(markers, d, panel, with_timeline)
    ylog, ylim, xlim = _limits(panel, d)
    legend = _legend(d, shown)

    ncol = 3 if big else 2
    rows = -(-len(legend) // ncol)
    lfs = 11 * fs
    title_fs = 15 * fs
    top = 10 + title_fs + 8 + rows * (lfs + 6) + 6
    axes_w = width - left - right
    # timeline layout first: its height depends on the number of lanes
    tl_layout, n_lanes = [], 0
    tfs = 11 * fs if not big else 11
    if with_timeline:
        per_px = (xlim[1] - xlim[0]) / axes_w
        tl_layout, n_lanes = P._timeline_layout(report.timeline, xlim, per_px, tfs * CHAR_W)
    lane_h = 20.0
    tl_h = max(n_lanes, 1) * lane_h + 8 if with_timeline else 0.0
    bottom = 18 * fs + 22 * fs
    height = int(round(top + axes_h + (8 + tl_h if with_timeline else 0) + bottom))
    ax = Axes(left, top, axes_w, axes_h, xlim, ylim, ylog)
    g = SvgPanel(width, height)
    cid = f"mlaudit-clip-{panel.name}"
    g.add(
        f'<defs><clipPath id="{cid}"><rect x="{_f(left)}" y="{_f(top)}" width="{_f(axes_w)}" '
        f'height="{_f(axes_h)}"/></clipPath></defs>'
    )
    g.add(f'<rect width="{width}" height="{height}" fill="#ffffff"/>')
    xt = [v for v in nice_ticks(xlim[0], xlim[1], 8 if big else 5) if xlim[0] <= v <= xlim[1]]
    fr = _Frame(g, ax, top, left, axes_w, axes_h, fs, 10.5 * fs, xt, f' clip-path="url(#{cid})"')
    _draw_grid(fr, panel)
    _draw_under(fr, shown, d)
    _draw_over(fr, shown, d)
    # x axis labels: under the axes, or under the timeline
    xa_y = _draw_timeline(fr, tl_layout, tl_h, lane_h, tfs) if with_timeline else fr.ab
    _draw_xlabels(fr, xa_y, d.xlabel)
    # title and legend (right-aligned, under the title row)
    g.text(
        left, 10 + title_fs, _text(panel.title), title_fs, "#111827", "start", ' font-weight="bold"'
    )
    if legend:
        _draw_legend(fr, legend, ncol, lfs, title_fs)
    alt = _text(f"{panel.title}: {', '.join(d.keys)}", 200)
    svg = (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" role="img" aria-label="{alt}" font-family="{FONT}" class="plot">'
        f"<title>{alt}</title>" + "".join(g.parts) + "</svg>"
    )
    return P.Plot(
        name=panel.name,
        title=panel.title,
        group=panel.group,
        svg=svg,
        width=width,
        height=height,
        keys=d.keys,
        notes=list(dict.fromkeys(d.notes)),
        points=d.total,
    )
