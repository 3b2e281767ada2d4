"""LogParser: a comma-separated line of ``name:value`` pairs with no space after the colon is a record
(own f19b2-19, a DRL grasping agent's ``used time:T,step:N,loss:L,mse_loss:M`` lines), while a table
header whose column names hold a colon range (YOLOv7's ``mAP@.5:.95``, own f13b2-17) stays a header."""

from __future__ import annotations

from pathlib import Path

from mlaudit_core.formats import load_path

RUNS = Path(__file__).resolve().parent / "data" / "realworld" / "runs"


def _one(path: Path):
    (pair,) = load_path(path).runs
    return pair[1]


def test_pair_lines_without_spaces_are_records_with_their_step():
    run = _one(RUNS / "SDU-zgl--robot_grasp_drl" / "logs" / "train_log.txt")
    loss = run.metrics.series("train/loss")
    assert len(loss.values) == 1215
    assert loss.steps[0] == 160 and loss.steps[-1] == 1397
    assert abs(loss.values[0] - 17.400815963745117) < 1e-9
    assert "train/mse_loss" in run.metrics.keys


def test_a_colon_range_in_a_column_name_keeps_the_yolo_header():
    run = _one(RUNS / "WuG978--yolov7" / "nohup.out")
    assert "val/map@_5__95" in run.metrics.keys
