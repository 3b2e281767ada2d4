"""V18d's reading of stated figures (mlaudit_core.verdict.stated_figures): a stage named with its
duration is a timing line, not an evaluation protocol, and metrics whose names differ by a threshold or
a cut-off (mAP50, mAP50-95; top-1, top-5) are two metrics, not one figure measured two ways. Real input:
the console of own f26b1-02 (Ultralytics 8.3.235 YOLO11n-seg), which prints 'Speed: 0.9ms preprocess,
13.5ms inference, 0.0ms loss, 4.6ms postprocess per image' and 'Box mAP50: 0.5146' / 'Box mAP50-95:
0.3784', and was called succeeded/metric_policy for "one model scored under two evaluation protocols"."""

from __future__ import annotations

from pathlib import Path

from mlaudit_core.audit import audit
from mlaudit_core.formats import load_path
from mlaudit_core.report import Cause
from mlaudit_core.verdict.stated_figures import (
    _measurement_named,
    measured_figures,
    measured_two_ways,
)

LOG = (
    Path(__file__).parent
    / "data"
    / "realworld"
    / "runs"
    / "Antoine-MR--ball-segmentation"
    / "training.log"
)


def test_stated_figures_timing_line_names_no_protocol():
    speed = next(x for x in LOG.read_text().splitlines() if x.startswith("Speed:"))
    assert _measurement_named([speed]) is None
    assert _measurement_named(["Boxes are kept after post-processing with NMS at IoU 0.7."])


def test_stated_figures_map50_and_map50_95_are_two_metrics():
    lines = LOG.read_text().splitlines()
    assert measured_two_ways(lines) is None
    (a,) = measured_figures("Box mAP50: 0.5146")
    (b,) = measured_figures("Box mAP50-95: 0.3784")
    assert a.qualifier != b.qualifier


def test_stated_figures_ultralytics_console_not_metric_policy():
    runs = list(load_path(LOG).runs)
    rep = audit(runs[-1][1])
    assert rep.verdict.cause is not Cause.METRIC_POLICY, rep.verdict.summary
