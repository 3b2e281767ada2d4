"""Console reader (consolelog/parser.py ``_summary_block``, ``_generic_step``, ``_SPLIT_TAG_LAST``):
figures printed again and again without a position of their own are records, not summaries.

Real input from the own corpus (tests/data/realworld, batches f17b1/f17b2, scored at session 14's
first run, where each was read with one or two points per series):
- f17b1-06: ``Training Loss: 0.1345`` and ``Model test error: 0.61342`` printed once per epoch for
  500 epochs, between blank lines and ``Model evaluation.`` messages;
- f17b1-12: a Ray Tune/RLlib ``Result for DQN_...:`` dict dumped as indented ``key: value`` lines at
  each of 80 reported iterations (``mean_q`` -0.015 -> 1.4e10);
- f17b2-11: ``Ép 1 | train 2.8312 | val 2.1483 | Acc 0.8693 ...`` per epoch, under a word for epoch
  that no catalogue entry knows (18 of 20 records on one step);
- f17b2-09: ``[INFO] [Val]   Epoch 1: total=1633.6117`` (the split as the prefix's last bracket).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from mlaudit_core.formats import load_path
from mlaudit_core.formats.consolelog import parse_lines

REAL = Path(__file__).resolve().parent / "data" / "realworld"
LABELS = json.loads((REAL / "labels.json").read_text())


def _path(prefix: str) -> Path:
    (path,) = [REAL / x["path"] for x in LABELS if x["id"].startswith(prefix)]
    return path


def test_one_figure_per_line_printed_each_epoch_is_a_series():
    ((_, run),) = load_path(_path("f17b1-06-")).runs
    loss = run.series("train/loss").finite()
    err = run.series("train/model_test_error").finite()
    assert len(loss) == 500 and len(err) >= 500
    assert loss.values[0] == 0.1345 and loss.values[-1] == 0.0054
    assert np.all(np.diff(loss.steps) > 0)


def test_a_result_dict_dumped_each_iteration_is_one_record_per_dump():
    ((_, run),) = load_path(_path("f17b1-12-")).runs
    q = run.series("train/mean_q").finite()
    assert len(q) >= 75 and q.values[-1] > 1e10
    assert np.all(np.diff(q.steps) > 0)
    it = run.series("train/iteration").finite()
    assert it.values[-1] == 324.0


def test_key_value_lines_printed_once_stay_summaries():
    lines = [f"step {i} loss={2.0 - 0.1 * i:.3f}" for i in range(1, 10)]
    lines += ["", "", "", "", "Final results:", "  accuracy: 0.91", "  f1: 0.88"]
    res = parse_lines(lines)
    assert res.metrics.count("train/accuracy") == 1
    assert res.metrics.count("train/loss") == 9


def test_records_without_a_position_on_one_step_are_the_next_records():
    res = parse_lines(_path("f17b2-11-").read_text(encoding="utf-8").splitlines())
    s = res.metrics.series("train/val")
    assert list(s.steps) == list(range(1, 21))
    assert s.values[8] == 2.0831 and s.values[-1] == 2.952


def test_a_bracketed_split_tag_before_the_message_names_the_split():
    lines = [
        "[2025-10-27 05:11:04] [INFO] Epoch 1 [140/155] total=1050.7520 pose=1050.7520 gaze=0.0000",
        "[2025-10-27 05:13:30] [INFO] [Train] Epoch 1: total=1554.0258 pose=1553.9341 gaze=0.0852",
        "[2025-10-27 05:15:32] [INFO] [Val]   Epoch 1: total=1633.6117 pose=1633.6117 gaze=0.0000",
    ]
    res = parse_lines(lines)
    assert list(res.metrics.series("val/total").values) == [1633.6117]
    assert 1633.6117 not in res.metrics.series("train/total").values
    ((_, run),) = load_path(_path("f17b2-09-")).runs
    assert len(run.series("val/total").finite()) >= 25
