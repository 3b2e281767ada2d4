"""mlaudit_core.render.svg: the numpy SVG plots (pixel reduction, escaping, well-formed files)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np

from mlaudit_core import MetricTable, RunData, RunIdentity, audit
from mlaudit_core.render.plots import Panel, markers_from_findings, render_plots
from mlaudit_core.render.svg import nice_ticks, pixel_minmax, render_panel_svg

SVG = "{http://www.w3.org/2000/svg}"


def test_pixel_minmax_keeps_a_one_point_spike_and_at_most_four_points_per_column():
    n = 100_000
    x = np.linspace(0, 999.999, n)  # 1000 pixel columns
    y = np.sin(np.arange(n) / 500.0)
    y[54_321] = 50.0
    idx = pixel_minmax(x, y)
    assert 54_321 in idx
    assert (np.diff(idx) > 0).all() and idx[0] == 0 and idx[-1] == n - 1
    cols = np.floor(x[idx]).astype(int)
    assert np.bincount(cols).max() <= 4
    for c in (0, 417, 999):  # each column's extremes are kept
        sel = np.flatnonzero(np.floor(x).astype(int) == c)
        assert y[idx][cols == c].max() == y[sel].max()
        assert y[idx][cols == c].min() == y[sel].min()


def test_pixel_minmax_leaves_short_series_whole():
    x = np.arange(10.0) * 50
    assert pixel_minmax(x, x).tolist() == list(range(10))


def test_nice_ticks_are_round_and_inside():
    assert nice_ticks(-3.2, 97.0) == [0.0, 25.0, 50.0, 75.0]  # step 2.5 x 10^1 >= 100/5
    t = nice_ticks(0.00012, 0.00051, 4)
    assert t and all(0.00012 <= v <= 0.00051 for v in t)
    assert np.allclose(np.diff(t), 1e-4)


def test_run_strings_are_escaped_in_the_svg():
    key = 'train/loss"><script>alert(1)</script>'
    st = np.arange(1, 3001)
    y = np.exp(-st / 500.0)
    y[1500] = 40.0
    run = RunData(
        identity=RunIdentity("mlflow", "r", name="<b>x</b>"),
        metrics=MetricTable([key] * st.size, st, y),
    )
    report = audit(run)
    panel = Panel("hostile", "<i>title</i> & co", (), "training", keys=(key,))
    plot = render_panel_svg(
        panel, [(key, run.metrics.series(key))], markers_from_findings(report), report, run, True
    )
    root = ET.fromstring(plot.svg)  # well-formed: every string escaped
    assert root.tag == f"{SVG}svg"
    assert not list(root.iter(f"{SVG}script")) and not list(root.iter(f"{SVG}foreignObject"))
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert "<i>title</i> & co" in texts
    assert any(t and t.startswith('train/loss"><script>') for t in texts)
    assert not [a for el in root.iter() for a in el.attrib if a.startswith("on")]
    line = max(root.iter(f"{SVG}polyline"), key=lambda e: len(e.get("points")))
    pts = np.array([p.split(",") for p in line.get("points").split()], dtype=float)
    assert 100 < len(pts) <= 4 * 1100  # reduced to the pixels, not 3,000 points... or every one
    assert plot.points == 3000


def test_svg_plots_need_no_matplotlib_and_png_stays_available():
    st = np.arange(1, 801)
    run = RunData(
        identity=RunIdentity("mlflow", "r", name="r"),
        metrics=MetricTable(["train/loss"] * st.size, st, np.exp(-st / 100.0)),
    )
    report = audit(run)
    svgs, notes = render_plots(report, run)
    assert notes == [] and [p.suffix for p in svgs] == [".svg"] * len(svgs) and svgs
    pngs, notes = render_plots(report, run, fmt="png")
    assert notes == [] and [p.name for p in pngs] == [p.name for p in svgs]
    assert pngs[0].data[:8] == b"\x89PNG\r\n\x1a\n"


def _curve_points(svg: str) -> np.ndarray:
    root = ET.fromstring(svg)
    line = max(root.iter(f"{SVG}polyline"), key=lambda e: len(e.get("points")))
    return np.array([p.split(",") for p in line.get("points").split()], dtype=float)


def test_render_plots_draws_values_at_the_float_limits():
    """Values whose range overflows a float (+-1e308; 5e-324 .. 1e308 on a log axis) are drawn
    inside the axes, not dropped (an empty curve, or 'could not be drawn: OverflowError')."""
    st = np.arange(200)
    for values in (np.where(st % 2, 1e308, -1e308), np.where(st % 2, 1e308, 5e-324)):
        run = RunData(
            identity=RunIdentity("mlflow", "r", name="r"),
            metrics=MetricTable(["train/loss"] * st.size, st, values),
        )
        plots, notes = render_plots(audit(run), run)
        assert notes == [] and plots
        pts = _curve_points(plots[0].svg)
        assert len(pts) >= 2 and np.isfinite(pts).all()
        assert np.ptp(pts[:, 1]) > 100  # the two levels are drawn apart, within the panel
        assert (pts[:, 1] > 0).all() and (pts[:, 1] < plots[0].height).all()


def test_nice_ticks_of_a_range_wider_than_a_float():
    t = nice_ticks(-1.05e308, 1.05e308)
    assert t and all(-1.05e308 <= v <= 1.05e308 for v in t) and 0.0 in t
