"""consolelog.structure: series read from the structure of pasted text (a table in either
orientation, rows of unnamed numeric columns, figures stated in prose) when no line of the log
gave a metric; and what the verdict makes of them (LI001's every-series-at-once reading, V21's
short loss that rose above its start).

Inputs: the pasted files of the real failure reports in tests/data/reports (b42-03 a transposed
markdown loss table, b41-05 PointNetLK's unnamed comma rows ending in nan, b39-10 a loss stated in
a sentence, b17-01 LLaVA's 7 logged loss dicts) and the YOLOv7 console of own f13b2-17, whose own
tables the line reader reads (the structure pass must not run there).
"""

from __future__ import annotations

import math
from pathlib import Path

from mlaudit_core.audit import audit
from mlaudit_core.formats.consolelog import load_logs
from mlaudit_core.roles import Role

DATA = Path(__file__).resolve().parent / "data"
REPORTS = DATA / "reports"


def _report(prefix: str) -> Path:
    (folder,) = [d for d in REPORTS.iterdir() if d.name.startswith(prefix)]
    return folder


def _logs(prefix: str) -> list[Path]:
    return sorted(_report(prefix).glob("*.log"))


def test_table_series_reads_a_transposed_markdown_table_along_its_rows():
    run = load_logs(_logs("b42-03-"))
    s = run.series("train/loss").by_step()
    # the 'epoch avg' column (not an index) and the '…' cells are skipped
    assert [int(x) for x in s.steps] == [10, 20, 30, 40, 50, 160]
    assert [float(x) for x in s.values] == [4.31, 1.44, 7.08, 15.06, 16.02, 13.83]
    assert run.key_for(Role.TRAIN_LOSS) == "train/loss"
    assert any("pasted table" in n for n in run.notes)


def test_table_series_reads_a_table_down_its_columns(tmp_path):
    log = tmp_path / "paste.log"
    log.write_text(
        "| epoch | loss | val_loss |\n|---|---|---|\n"
        + "".join(f"| {e} | {2.0 / e:.3f} | {2.2 / e:.3f} |\n" for e in range(1, 6))
    )
    run = load_logs([log])
    assert len(run.series("train/loss")) == 5
    assert [int(x) for x in run.series("val/loss").steps] == [1, 2, 3, 4, 5]


def test_table_series_leaves_a_table_without_an_index_corner_unread():
    """b42-06's reproduction table: its corner cell is empty and its header (2, 3, 4, 5) is a depth,
    not training progress."""
    run = load_logs(_logs("b42-06-"))
    assert len(run.metrics) == 0


def test_unnamed_series_keeps_the_nan_rows_of_unnamed_columns():
    run = load_logs(_logs("b41-05-"))
    assert run.metrics.keys == ["col1", "col2", "col3", "col4"]
    c1 = run.series("col1").by_step()
    assert len(c1) == 16 and int(c1.steps[0]) == 89 and int(c1.steps[-1]) == 200
    assert float(c1.values[0]) == 0.127450
    assert all(math.isnan(float(v)) for v in c1.values[-3:])


def test_li001_reads_every_series_non_finite_at_once_as_a_diverged_loss():
    rep = audit(load_logs(_logs("b41-05-")))
    li = [f for f in rep.findings if f.code == "LI001"]
    assert li and li[0].facts["every_series"] and li[0].facts["first_step"] == 198
    assert rep.verdict.outcome.value == "diverged", rep.verdict.summary


def test_stated_series_reads_a_loss_stated_in_a_sentence():
    run = load_logs(_logs("b39-10-"))
    s = run.series("train/loss")
    assert [float(x) for x in s.values] == [1.2, 16000.0]
    assert any("stated in the report's prose" in n for n in run.notes)


def test_stated_series_reads_a_stuck_value(tmp_path):
    log = tmp_path / "report.log"
    log.write_text("I trained for 3 days but the accuracy is stuck at 0.5 whatever I do.\n")
    s = load_logs([log]).series("train/accuracy")
    assert [float(x) for x in s.values] == [0.5, 0.5, 0.5]


def test_structure_is_not_read_where_the_lines_gave_metrics():
    run = load_logs([DATA / "realworld" / "runs" / "WuG978--yolov7" / "nohup.out"])
    assert not any(k.startswith("col") for k in run.metrics.keys)
    assert not any("pasted table" in n for n in run.notes)


def test_v21_short_loss_that_rose_above_its_start_diverged():
    """A 6-point pasted loss 4.31 -> 1.44 -> 13.83, last two above twice the start: diverged."""
    v = audit(load_logs(_logs("b42-03-"))).verdict
    assert (v.outcome.value, v.cause.value) == ("diverged", "model_convergence"), v.summary


def test_v21_short_loss_with_one_spike_at_its_end_is_unstable():
    """LLaVA's 7 logged loss dicts 0.66 ... 0.82 -> 6.66: one spike at the end: unstable."""
    v = audit(load_logs(_logs("b17-01-"))).verdict
    assert (v.outcome.value, v.cause.value) == ("unstable", "model_convergence"), v.summary


def test_table_series_reads_a_bar_table_whose_rows_open_without_a_bar():
    """own f26b1-13 (a BreathCNN nohup log): ``Epoch | TrainLoss | TrainAcc | ValLoss | ValAcc | LR |
    Time`` over a ``-----`` rule line, rows ``1 | 1.0164 | 50.80% | ... | 19.6s  ← best``: the first
    cell has no bar before it, the cells carry units (``%``, ``s``) and a trailing annotation, and
    the headers are CamelCase words."""
    from mlaudit_core.formats import load_path

    path = DATA / "realworld/runs/DexplovateCode--WheezeDetectionAI/logs/train.log"
    ((_, run),) = load_path(path).runs
    assert run.key_for(Role.TRAIN_LOSS) == "train/loss"
    assert run.key_for(Role.VAL_LOSS) == "val/loss"
    loss = run.series("train/loss").by_step()
    assert [int(x) for x in loss.steps[:3]] == [1, 2, 3] and len(loss) == 22
    assert float(loss.values[0]) == 1.0164 and float(loss.values[-1]) == 0.4059
    acc = run.series("val/accuracy").by_step()
    assert (
        float(acc.values[0]) == 60.67 and float(acc.values[1]) == 31.25
    )  # percent, annotation dropped
    assert float(run.series("perf/step_time").by_step().values[3]) == 41.3


def test_table_series_keeps_dropping_a_log_prefix_before_the_first_bar(tmp_path):
    """A prefix that is no index word (``INFO``) before the first ``|`` is not a cell."""
    log = tmp_path / "paste.log"
    log.write_text(
        "INFO | epoch | loss | val_loss |\n"
        + "".join(f"INFO | {e} | {2.0 / e:.3f} | {2.2 / e:.3f} |\n" for e in range(1, 6))
    )
    run = load_logs([log])
    assert [int(x) for x in run.series("val/loss").steps] == [1, 2, 3, 4, 5]
