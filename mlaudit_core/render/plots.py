"""The report's plots: key curves with the findings drawn on them, and telemetry.

Each plot is drawn as SVG with numpy (:mod:`mlaudit_core.render.svg`, the default and
what every report and tracker write-back uses), or on request (``fmt="png"``) as a
matplotlib figure rendered to PNG bytes (Agg backend), for a viewer that shows only
raster images. matplotlib is imported lazily: it lives in the ``plots`` extra, and
without it :func:`plots_unavailable` says why.

What is drawn comes from the report, never re-derived: spike markers from
``OP002``'s ``spike_steps``, the divergence point from ``OP001``'s
``onset_step``, the non-finite onset from ``LI001``'s ``first_step``, the
overfit onset from ``GE001``'s ``onset_step``, the plateau span from ``OP003``'s
``start_step`` to its evidence end, the resume reset from ``LI002``'s
``step_before``/``step_after``, the baseline band from ``BL001``'s ``band_lo``/
``band_hi`` over its tail window, and any other finding's series evidence on a
plotted metric as a span or point labelled with its code. Timeline phases are
drawn as bands in a strip under the first training panel.

Curves are downsampled for display only (see :func:`downsample`): the audit
itself always reads every point.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field

import numpy as np

from ..detectors import registry
from ..redact import redact_text
from ..report import AuditReport, SeriesEvidence, Severity
from ..roles import Role
from ..rundata import RunData, Series

#: Points kept per curve for display. Figures are at most ~1100 px wide, so 4000
#: points (about 3.5 per pixel column, enough for the min and max of each column)
#: draw exactly what the full series would at that width.
DISPLAY_POINTS = 4000
#: Pixels per inch of the PNGs (the CSS scales them to the column width).
DPI = 110

TRAIN_COLOUR = "#2563eb"
VAL_COLOUR = "#ea580c"
OTHER_COLOURS = ["#0f766e", "#7c3aed", "#ca8a04", "#db2777", "#4b5563"]
EVENT_COLOURS = {
    "divergence": "#dc2626",
    "non-finite": "#7f1d1d",
    "overfit": "#9333ea",
    "reset": "#92400e",
    "spike": "#dc2626",
    "plateau": "#6b7280",
    "baseline": "#16a34a",
    "finding": "#b45309",
}


@dataclass(frozen=True)
class Panel:
    """One plot: a file stem, a title, the roles drawn, and how its y axis is scaled."""

    name: str
    title: str
    roles: tuple[Role, ...]
    group: str  # "training" | "telemetry"
    yscale: str = "auto"  # "auto" (log when positive and spanning > 2 decades) | "linear" | "log2"
    ylabel: str = ""
    keys: tuple[str, ...] = ()  # literal metric keys, for panels not tied to a role


PANELS: tuple[Panel, ...] = (
    Panel("loss", "Loss", (Role.TRAIN_LOSS, Role.VAL_LOSS), "training", ylabel="loss"),
    Panel("accuracy", "Accuracy", (Role.TRAIN_ACCURACY, Role.VAL_ACCURACY), "training", "linear"),
    Panel("learning_rate", "Learning rate", (Role.LEARNING_RATE,), "training"),
    Panel("grad_norm", "Grad norm", (Role.GRAD_NORM,), "training"),
    Panel("loss_scale", "Loss scale", (Role.LOSS_SCALE,), "training", "log2"),
    Panel(
        "step_time",
        "Step time and data time",
        (Role.STEP_TIME, Role.DATA_TIME),
        "telemetry",
        "linear",
        "seconds",
    ),
    Panel("throughput", "Throughput", (Role.THROUGHPUT,), "telemetry", "linear"),
    Panel(
        "utilisation",
        "Utilisation",
        (Role.GPU_UTIL, Role.CPU_UTIL),
        "telemetry",
        "linear",
        "percent",
    ),
    Panel("memory", "GPU memory", (Role.GPU_MEMORY,), "telemetry", "linear"),
)


@dataclass
class Plot:
    """A rendered plot.

    Attributes:
        name: file stem, e.g. ``"loss"`` (written as ``plots/loss.svg`` or ``plots/loss.png``).
        title: heading shown above the image.
        group: ``"training"`` or ``"telemetry"``.
        svg: the standalone SVG document text (``fmt="svg"``), else ``""``.
        png: the PNG bytes (``fmt="png"``), else ``b""``.
        width, height: pixel size of the image.
        keys: the metric keys drawn.
        notes: one line per marker drawn, in plain text (escaped by the template).
        points: total points of the drawn series before downsampling.
    """

    name: str
    title: str
    group: str
    width: int
    height: int
    svg: str = ""
    png: bytes = b""
    keys: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    points: int = 0

    @property
    def suffix(self) -> str:
        """The file suffix of the image: ``".svg"`` or ``".png"``."""
        return ".svg" if self.svg else ".png"

    @property
    def data(self) -> bytes:
        """The image file's bytes (SVG as UTF-8, or PNG)."""
        return self.svg.encode("utf-8") if self.svg else self.png


def plots_unavailable() -> str | None:
    """Why plots cannot be drawn here (matplotlib missing), or ``None`` when they can."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return "matplotlib is not installed (pip install 'mlaudit[plots]')"
    return None


def downsample(
    x: np.ndarray, y: np.ndarray, n_out: int = DISPLAY_POINTS
) -> tuple[np.ndarray, np.ndarray]:
    """At most about ``n_out`` points of (x, y) for display, keeping every bucket's extremes.

    Uses tsdownsample's MinMaxLTTB (Van Der Donckt et al. 2023, "MinMaxLTTB:
    Leveraging MinMax-Preprocessing to Accelerate LTTB"): a min/max pre-selection
    per bucket, then LTTB. Without tsdownsample, the first/last point and the
    min and max of each of ``n_out // 2`` equal-count buckets are kept (M4 without
    the bucket edges). Either way a one-point spike stays visible.

    Args:
        x: increasing step values, shape (n,).
        y: finite values, shape (n,).
        n_out: the target number of points (>= 4).

    Returns:
        (x, y) views of the kept points, in order; the inputs unchanged when n <= n_out.
    """
    n = x.shape[0]
    if n <= n_out:
        return x, y
    try:
        from tsdownsample import MinMaxLTTBDownsampler
    except ImportError:
        idx = _minmax_buckets(y, n_out)
    else:
        idx = (
            MinMaxLTTBDownsampler()
            .downsample(np.ascontiguousarray(x), np.ascontiguousarray(y), n_out=n_out)
            .astype(np.int64)
        )
    return x[idx], y[idx]


def _minmax_buckets(y: np.ndarray, n_out: int) -> np.ndarray:
    n = y.shape[0]
    buckets = max((n_out - 2) // 2, 1)
    edges = np.linspace(1, n - 1, buckets + 1).astype(np.int64)
    lo, hi = edges[:-1], edges[1:]
    keep = hi > lo
    lo, hi = lo[keep], hi[keep]
    imin = np.array([a + int(np.argmin(y[a:b])) for a, b in zip(lo, hi)], dtype=np.int64)
    imax = np.array([a + int(np.argmax(y[a:b])) for a, b in zip(lo, hi)], dtype=np.int64)
    return np.unique(np.concatenate([[0, n - 1], imin, imax]))


# --- markers ------------------------------------------------------------------------------------


@dataclass
class _Marker:
    kind: str  # "vline" | "span" | "points" | "band"
    label: str  # legend text
    colour: str
    steps: tuple = ()  # vline: (step,); span: (start, end); points: steps; band: (start, end)
    key: str | None = None  # the metric the marker belongs to; None = every training panel
    y: tuple = ()  # band: (lo, hi)
    note: str = ""


def markers_from_findings(report: AuditReport) -> list[_Marker]:
    """What to draw for each finding: what its detector says (``Detector.plot_marks``, read from
    the finding's facts and evidence, never recomputed), else its series evidence (warnings and
    errors)."""
    reg = registry()
    out: list[_Marker] = []
    for f in report.findings:
        det = reg.get(f.code)
        marks = det.plot_marks(f) if det is not None else None
        if marks is not None:
            out += [
                _Marker(
                    m.kind, m.label, EVENT_COLOURS[m.event], m.steps, key=m.key, y=m.y, note=m.note
                )
                for m in marks
            ]
        elif f.severity.rank >= Severity.WARNING.rank:
            for e in f.evidence:
                if isinstance(e, SeriesEvidence) and e.step_start is not None:
                    a = e.step_start
                    b = e.step_end if e.step_end is not None else a
                    kind = "points" if a == b else "span"
                    out.append(
                        _Marker(
                            kind,
                            f"{f.code} {f.name}",
                            EVENT_COLOURS["finding"],
                            (a,) if kind == "points" else (min(a, b), max(a, b)),
                            key=e.metric,
                            note=f"{f.code}: {f.name} at step{'s' if a != b else ''} "
                            f"{a}{'' if a == b else f'–{b}'}",
                        )
                    )
    return out


# --- drawing ------------------------------------------------------------------------------------


def _xy(s: Series) -> tuple[np.ndarray, np.ndarray, np.ndarray, str]:
    """(x, finite values, x of non-finite points, x label) of a by-step series."""
    st = s.steps
    if st.size > 1 and not (st[1:] > st[:-1]).all():  # already by step: nothing to sort
        s = s.by_step()
    x = s.steps
    label = "step"
    if len(s) > 1 and x[0] == x[-1]:  # no step logged: every point at one step
        x = np.arange(len(s), dtype=np.int64)
        label = "point (no step logged)"
    fin = np.isfinite(s.values)
    if fin.all():
        return x, s.values, x[:0], label
    return x[fin], s.values[fin], x[~fin], label


def _value_at(x: np.ndarray, y: np.ndarray, steps) -> tuple[np.ndarray, np.ndarray]:
    steps = np.asarray(steps, dtype=np.int64)
    if x.size == 0 or steps.size == 0:
        return np.array([]), np.array([])
    i = np.clip(np.searchsorted(x, steps), 0, x.size - 1)
    hit = x[i] == steps
    return steps[hit], y[i][hit]


def _baseline_curves(run: RunData, key: str) -> list[tuple[str, np.ndarray, np.ndarray]]:
    try:
        from ..baseline.compare import baselines_of
    except ImportError:
        return []
    out = []
    for b in baselines_of(run)[:8]:
        if key in b.metrics:
            x, y, _, _ = _xy(b.metrics.series(key))
            if x.size:
                x, y = downsample(x, y, DISPLAY_POINTS // 2)
                out.append((b.identity.name or b.identity.id, x, y))
    return out


def _label(text: str) -> str:
    """A run-controlled string made safe for a matplotlib label (no mathtext, no secrets, short)."""
    t = redact_text(str(text)).replace("$", r"\$")
    return t if len(t) <= 60 else t[:57] + "…"


_PHASE_COLOURS = {
    "warmup": "#60a5fa",
    "plateau": "#9ca3af",
    "divergence": "#ef4444",
    "non-finite onset": "#7f1d1d",
    "overfit onset": "#a855f7",
    "step reset": "#b45309",
    "slowdown": "#f59e0b",
}


def _timeline_layout(phases, xlim: tuple[float, float], per_px: float, char_px: float):
    """Where each timeline phase goes: one entry per phase name, in as few lanes as keep
    labels apart.

    A phase name that repeats (one non-finite onset per metric) is drawn once, at its
    earliest step; the timeline table in the report lists every phase.

    Args:
        phases: the report's timeline phases.
        xlim: the x range drawn (steps).
        per_px: steps per pixel.
        char_px: the labels' average character width in pixels.

    Returns:
        ([(label, start, end, lane, anchor, label_x, colour)], number of lanes); ``anchor`` is
        ``"in"`` (label inside the bar), ``"left"`` (before the phase) or ``"right"`` (after).
    """
    first: dict[str, tuple[int, int]] = {}
    for p in phases:
        a = p.step_start if p.step_start is not None else p.step_end
        b = p.step_end if p.step_end is not None else p.step_start
        if a is None:
            continue
        lo, hi = min(a, b), max(a, b)
        if p.name not in first or lo < first[p.name][0]:
            first[p.name] = (lo, hi)
    lanes: list[list[tuple[float, float]]] = []
    out = []
    for name, (a, b) in sorted(first.items(), key=lambda kv: kv[1]):
        label = _label(name)
        text_w = (len(label) * char_px + 10) * per_px
        inside = b - a >= text_w
        left = not inside and b + text_w > xlim[1]  # no room on the right: label before the phase
        extent = (a, b) if inside else ((a - text_w, b) if left else (a, b + text_w))
        lane = next(
            (
                i
                for i, used in enumerate(lanes)
                if all(extent[1] < u0 or extent[0] > u1 for u0, u1 in used)
            ),
            None,
        )
        if lane is None:
            lanes.append([])
            lane = len(lanes) - 1
        lanes[lane].append(extent)
        anchor, lx = ("in", a) if inside else (("left", a) if left else ("right", b))
        out.append((name, a, b, lane, anchor, lx, _PHASE_COLOURS.get(name, "#64748b")))
    return out, len(lanes)


def _draw_timeline(ax, phases, xlim: tuple[float, float], width_px: float) -> None:
    """Phases as bars (spans) or diamonds (single steps), laid out by :func:`_timeline_layout`."""
    span = (xlim[1] - xlim[0]) or 1.0
    per_px = span / max(width_px, 1.0)
    layout, n_lanes = _timeline_layout(
        phases, xlim, per_px, 6.3
    )  # 7.5 pt DejaVu Sans at DPI: ~6.3 px per character
    for name, a, b, lane, anchor, x, colour in layout:
        if b > a:
            ax.broken_barh(
                [(a, b - a)], (lane - 0.35, 0.7), facecolors=colour, alpha=0.55, linewidth=0
            )
        else:
            ax.plot([a], [lane], marker="D", markersize=5, color=colour, linestyle="none")
        dx, ha = {"in": (4, "left"), "left": (-5, "right"), "right": (5, "left")}[anchor]
        ax.annotate(
            _label(name),
            (x, lane),
            xytext=(dx, 0),
            textcoords="offset points",
            va="center",
            ha=ha,
            fontsize=7.5,
            color="#1f2937",
        )
    ax.set_ylim(-0.6, max(n_lanes, 1) - 0.4)
    ax.invert_yaxis()
    ax.set_yticks([])
    ax.set_ylabel("timeline", fontsize=8, rotation=0, ha="right", va="center")
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)


@dataclass
class _Drawn:
    """What the curves of a panel put on its axes: the points, the curves by key (x, y), the
    y values for scaling, the x extent, the most baseline curves of one key, the notes."""

    total: int = 0
    curves: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    all_y: list[np.ndarray] = field(default_factory=list)
    xmin: float = np.inf
    xmax: float = -np.inf
    n_baselines: int = 0
    notes: list[str] = field(default_factory=list)


def _render_panel(
    panel: Panel,
    series: list[tuple[str, Series]],
    markers: list[_Marker],
    report: AuditReport,
    run: RunData,
    with_timeline: bool,
) -> Plot:
    """One panel as a PNG: its curves (with baseline runs and non-finite points,
    :func:`_draw_series`), the findings' marks (:func:`_draw_marker`), axes and legend
    (:func:`_style_axes`), the timeline strip under the training panel when asked, the title."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure

    big = panel.name == "loss"
    w, h = (10.0, 4.2) if big else (6.4, 3.0)
    fs = 1.0 if big else 1.15  # half-width panels are shown smaller: larger type keeps them legible
    fig = Figure(figsize=(w, h + (0.9 if with_timeline else 0)), dpi=DPI)
    if with_timeline:
        gs = fig.add_gridspec(2, 1, height_ratios=[h, 0.9], hspace=0.08)
        ax = fig.add_subplot(gs[0])
        tl = fig.add_subplot(gs[1], sharex=ax)
    else:
        ax, tl = fig.add_subplot(1, 1, 1), None
    keys = [k for k, _ in series]
    drawn = _Drawn()
    for i, (key, s) in enumerate(series):
        _draw_series(ax, i, key, s, run, drawn, fs)
    if drawn.n_baselines:
        ax.plot(
            [], [], color="#9ca3af", linewidth=0.8, label=f"baseline runs ({drawn.n_baselines})"
        )
    for m in markers:
        if m.key is not None and m.key not in keys:
            continue
        if m.key is None and panel.group != "training":
            continue
        _draw_marker(ax, m, drawn)
        if m.note and (m.key is not None or with_timeline):  # a run-wide event is noted once
            drawn.notes.append(m.note)
    rows = _style_axes(ax, panel, drawn, big, fs)
    if tl is not None:
        ax.tick_params(labelbottom=False)
        ax.set_xlabel("")
        _draw_timeline(tl, report.timeline, ax.get_xlim(), 0.9 * w * DPI)
        tl.set_xlabel("step", fontsize=8.5)
        tl.tick_params(labelsize=8)
    # title row at the top, the legend rows under it, then the axes (inches -> figure fraction)
    fh = fig.get_figheight()
    left = 0.08 if big else 0.11
    fig.text(
        left,
        1 - 0.08 / fh,
        _label(panel.title),
        ha="left",
        va="top",
        fontsize=10.5 * fs,
        fontweight="bold",
        color="#111827",
    )
    top = 1 - (0.34 * fs + 0.17 * fs * rows + 0.06) / fh
    fig.subplots_adjust(
        left=left, right=0.985, top=top, bottom=(0.5 if not with_timeline else 0.45) / fh
    )
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    width, height = round(fig.get_figwidth() * DPI), round(fig.get_figheight() * DPI)
    return Plot(
        name=panel.name,
        title=panel.title,
        group=panel.group,
        png=buf.getvalue(),
        width=width,
        height=height,
        keys=keys,
        notes=list(dict.fromkeys(drawn.notes)),
        points=drawn.total,
    )


def _draw_series(ax, i: int, key: str, s: Series, run: RunData, drawn: _Drawn, fs: float) -> None:
    """The ``i``-th curve of a panel (its colour by position), the same metric of the baseline
    runs in grey under it, and its non-finite points as crosses on the top edge (with a note)."""
    drawn.total += len(s)
    x, y, bad_x, xlabel = _xy(s)
    colour = (TRAIN_COLOUR, VAL_COLOUR, *OTHER_COLOURS)[i % (2 + len(OTHER_COLOURS))]
    curves = _baseline_curves(run, key)
    drawn.n_baselines = max(drawn.n_baselines, len(curves))
    for _, bx, by in curves:
        ax.plot(bx, by, color="#9ca3af", linewidth=0.8, alpha=0.8, zorder=1)
    if x.size:
        dx, dy = downsample(x, y)
        sparse = x.size < 60
        ax.plot(
            dx,
            dy,
            color=colour,
            linewidth=1.6 if sparse else 1.3,
            zorder=3,
            marker="o" if sparse else None,
            markersize=3,
            label=_label(f"{key} ({len(s):,} pts)"),
        )
        drawn.curves[key] = (x, y)
        drawn.all_y.append(y)
        drawn.xmin, drawn.xmax = min(drawn.xmin, float(x[0])), max(drawn.xmax, float(x[-1]))
    if bad_x.size:
        drawn.xmin = min(drawn.xmin, float(bad_x.min()))
        drawn.xmax = max(drawn.xmax, float(bad_x.max()))
        bx = bad_x if bad_x.size <= 400 else bad_x[np.linspace(0, bad_x.size - 1, 400).astype(int)]
        ax.plot(
            bx,
            np.ones_like(bx, dtype=float),
            transform=ax.get_xaxis_transform(),
            linestyle="none",
            marker="x",
            markersize=4,
            color=EVENT_COLOURS["non-finite"],
            clip_on=False,
            zorder=4,
            label=_label(f"{key}: NaN/inf ({bad_x.size:,} pts)"),
        )
        drawn.notes.append(
            f"{key}: {bad_x.size:,} non-finite point(s), first at step {int(bad_x.min())} "
            "(marked × at the top edge)"
        )
    ax.set_xlabel(xlabel, fontsize=8.5 * fs)


def _draw_marker(ax, m: _Marker, drawn: _Drawn) -> None:
    """A finding's mark: a dashed line at a step, a shaded span of steps, a band of values over a
    span, or circles (triangles for spikes) on the curve at given steps."""
    if m.kind == "vline":
        ax.axvline(
            m.steps[0],
            color=m.colour,
            linestyle="--",
            linewidth=1.2,
            zorder=5,
            label=_label(m.label),
        )
    elif m.kind == "span":
        ax.axvspan(
            m.steps[0],
            m.steps[1],
            color=m.colour,
            alpha=0.08 if m.colour == EVENT_COLOURS["finding"] else 0.13,
            zorder=0,
            label=_label(m.label),
            linewidth=0,
        )
    elif m.kind == "band":
        ax.fill_between(
            [m.steps[0], m.steps[1]],
            [m.y[0]] * 2,
            [m.y[1]] * 2,
            facecolor=m.colour,
            alpha=0.3,
            edgecolor=m.colour,
            zorder=2,
            label=_label(m.label),
            linewidth=0.8,
        )
    elif m.kind == "points" and m.key in drawn.curves:
        px, py = _value_at(*drawn.curves[m.key], m.steps)
        if px.size:
            ax.plot(
                px,
                py,
                linestyle="none",
                marker="v" if m.colour == EVENT_COLOURS["spike"] else "o",
                markersize=7,
                markerfacecolor="none",
                markeredgewidth=1.5,
                color=m.colour,
                zorder=6,
                label=_label(m.label),
            )


def _style_axes(ax, panel: Panel, drawn: _Drawn, big: bool, fs: float) -> int:
    """Scale, x range (1% padding), label, grid and ticks of the axes, and the legend above them
    (one entry per label, 3 columns on the wide panel, 2 on the others); returns its rows."""
    _scale(ax, panel, drawn.all_y)
    if np.isfinite(drawn.xmin) and drawn.xmax > drawn.xmin:
        pad = (drawn.xmax - drawn.xmin) * 0.01
        ax.set_xlim(drawn.xmin - pad, drawn.xmax + pad)
    if panel.ylabel:
        ax.set_ylabel(panel.ylabel, fontsize=8.5 * fs)
    ax.grid(True, color="#e5e7eb", linewidth=0.7)
    ax.tick_params(labelsize=8 * fs)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    handles, labels = ax.get_legend_handles_labels()
    rows = 0
    if handles:  # above the axes, right of the title, so it never hides a curve
        uniq = dict(zip(labels, handles))
        ncol = 3 if big else 2
        rows = -(-len(uniq) // ncol)
        ax.legend(
            uniq.values(),
            uniq.keys(),
            fontsize=7.5 * fs,
            loc="lower right",
            bbox_to_anchor=(1.0, 1.0),
            ncol=ncol,
            frameon=False,
            borderaxespad=0.2,
            handlelength=1.6,
            columnspacing=1.2,
        )
    return rows


def _scale(ax, panel: Panel, all_y: list[np.ndarray]) -> None:
    if not all_y:
        return
    y = np.concatenate(all_y)
    if panel.yscale == "log2" and (y > 0).all():
        ax.set_yscale("log", base=2)
    elif panel.yscale == "auto" and y.size and (y > 0).all() and y.max() / y.min() > 100:
        ax.set_yscale("log")


def render_plots(
    report: AuditReport, run: RunData | None, fmt: str = "svg"
) -> tuple[list[Plot], list[str]]:
    """Draw every panel whose roles the run logged.

    Args:
        report: the audit of ``run`` (findings, timeline).
        run: the run's data; ``None`` gives no plots.
        fmt: ``"svg"`` (drawn with numpy by :mod:`mlaudit_core.render.svg`, no extra needed)
            or ``"png"`` (matplotlib, the ``plots`` extra: for a tracker that shows only
            raster images).

    Returns:
        (plots in display order, notes on what could not be drawn). A panel that
        fails to draw is noted, never raised: a report without one image beats no
        report.

    Raises:
        ValueError: for an unknown ``fmt``.
    """
    if fmt not in ("svg", "png"):
        raise ValueError(f"plot format must be 'svg' or 'png', not {fmt!r}")
    if run is None:
        return [], ["plots need the run's metric histories; this report was rendered without them"]
    if fmt == "png":
        why = plots_unavailable()
        if why:
            return [], [f"plots are not included: {why}"]
    markers = markers_from_findings(report)
    panels = list(PANELS)
    role_keys = {run.key_for(r) for p in PANELS for r in p.roles}
    extra = [
        m.key
        for m in markers
        if m.kind == "band"
        and m.key is not None
        and m.key in run.metrics
        and m.key not in role_keys
    ]
    for i, key in enumerate(dict.fromkeys(extra)):  # a baseline metric no role panel shows
        panels.insert(
            1 + i, Panel(f"baseline_{i + 1}", f"{key} vs baselines", (), "training", keys=(key,))
        )
    if fmt == "svg":
        from .svg import render_panel_svg

        return _draw_panels(panels, report, run, markers, render_panel_svg)
    import matplotlib

    matplotlib.use("Agg", force=False)
    # run-controlled labels have "$" escaped (_label), so mathtext only ever renders tick labels
    with matplotlib.rc_context(
        {
            "font.family": "DejaVu Sans",
            "axes.edgecolor": "#9ca3af",
            "axes.labelcolor": "#374151",
            "xtick.color": "#4b5563",
            "ytick.color": "#4b5563",
            "axes.formatter.useoffset": False,
        }
    ):
        return _draw_panels(panels, report, run, markers, _render_panel)


def _draw_panels(panels, report, run, markers, draw) -> tuple[list[Plot], list[str]]:
    plots: list[Plot] = []
    problems: list[str] = []
    plotted: set[str] = set()
    timeline_done = False
    for panel in panels:
        keys = [run.key_for(r) for r in panel.roles] + list(panel.keys)
        keys = [k for k in dict.fromkeys(keys) if k and k not in plotted and k in run.metrics]
        series = [(k, run.metrics.series(k)) for k in keys]
        if not any(len(s) for _, s in series):
            continue
        tl = not timeline_done and panel.group == "training" and bool(report.timeline)
        try:  # extreme ranges (1e300) overflow inside log transforms: harmless
            with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
                plots.append(draw(panel, series, markers, report, run, tl))
        except Exception as exc:  # noqa: BLE001 - one broken panel never loses the report
            problems.append(f"plot '{panel.title}' could not be drawn: {type(exc).__name__}: {exc}")
            continue
        timeline_done = timeline_done or tl
        plotted.update(keys)
    return plots, problems
