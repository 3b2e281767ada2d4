"""mlaudit_core.render.svg: numbers and markers written as SVG text in one vectorised pass
(numbers_text, markers_svg) say what the per-number formatting (_f, marker_svg) says."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest

from mlaudit_core.render.svg import _f, marker_svg, markers_svg, numbers_text


def _one_by_one(vals: np.ndarray, seps: tuple[str, ...], tail: str) -> str:
    rows = []
    for row in vals.tolist():
        text = "".join(sep + _f(v) for sep, v in zip(seps, row)) + tail
        rows.append(text.replace("-0,", "0,").replace("-0L", "0L").replace("-0Z", "0Z"))
    return "".join(rows)


@pytest.mark.parametrize(
    "lo, hi", [(-1, 1), (-37, 37), (0, 1638.3), (-1100, 1100), (0, 2.5e5), (-3e9, 3e9)]
)
def test_numbers_text_writes_what_f_writes(lo, hi):
    rng = np.random.default_rng(int(hi))
    vals = rng.uniform(lo, hi, (3000, 3))
    vals[::5] = np.round(vals[::5])  # whole numbers lose their ".0"
    vals[7] = [0.0, 0.04, 10.0]
    vals[8] = [1638.3, 0.06, 99.96]  # the last number of svg's table of numbers
    seps = ("M", ",", "L")
    # _f writes "-0" for a value that rounds to zero from below; numbers_text writes "0"
    assert numbers_text(vals, seps, "Z") == _one_by_one(vals, seps, "Z")


def test_numbers_text_examples_and_non_finite_rows():
    vals = np.array([[70.0, 201.84], [np.nan, 1.0], [-3.95, 1234.06], [0.01, np.inf], [9.96, 0.0]])
    assert numbers_text(vals, (" ", ",")) == " 70,201.8 -4,1234.1 10,0"
    assert numbers_text(np.array([[1638.3, 1638.4]]), ("", ",")) == "1638.3,1638.4"  # table, not
    assert numbers_text(np.array([[1e300, -1.7e308]]), ("", ",")) == (
        "1000000000000000,-1000000000000000"  # far off the canvas, where it draws the same
    )
    assert numbers_text(np.empty((0, 2)), (" ", ",")) == ""
    assert numbers_text(np.full((3, 2), np.nan), (" ", ",")) == ""


@pytest.mark.parametrize("kind", ["v", "o", "o.", "x", "D"])
def test_markers_svg_is_marker_svg_at_every_point(kind):
    rng = np.random.default_rng(3)
    xs, ys = rng.uniform(60, 1100, 250), rng.uniform(0, 600, 250)
    for size in (5, 6, 9):
        one_by_one = "".join(
            marker_svg(kind, x, y, "#7f1d1d", size) for x, y in zip(xs.tolist(), ys.tolist())
        )
        assert markers_svg(kind, xs, ys, "#7f1d1d", size) == one_by_one
    root = ET.fromstring(f'<svg xmlns="http://www.w3.org/2000/svg">{one_by_one}</svg>')
    assert len(root) == 250  # one well-formed element per point


def test_markers_svg_broadcasts_one_y_and_skips_non_finite_points():
    out = markers_svg("x", np.array([10.0, np.nan, 20.0]), 5.0, "#111", 6)
    assert out == marker_svg("x", 10.0, 5.0, "#111", 6) + marker_svg("x", 20.0, 5.0, "#111", 6)
    assert markers_svg("x", np.array([]), 5.0, "#111", 6) == ""
