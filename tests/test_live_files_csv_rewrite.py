"""Following a Lightning CSVLogger file live when a new metric key appears (live/files.py).

Lightning's ``CSVLogger`` rewrites the whole ``metrics.csv`` with a new, sorted header the
first time a new key is logged (``_ExperimentWriter._rewrite_with_new_header``). The file
grows, so the live CSV tail (mlaudit_core/live/files.py) used to read on from its old byte
offset under the old header: the new ``train_acc`` column (sorted before ``train_loss``) was
read as ``train_loss`` (a loss "falling" from 1.1 to 0.6), and ``train_acc`` was missing.
Real Lightning writer, real files; no mock.
"""

from __future__ import annotations

from lightning.fabric.loggers import CSVLogger  # the dev extra (frameworks)

from mlaudit_core.live.files import LocalLiveSource


def _points(tail):
    return {k: (list(v[0]), [round(x, 6) for x in v[2]]) for k, v in tail.points.items()}


def test_rewritten_header_is_read_again_without_repeating_rows(tmp_path):
    logger = CSVLogger(str(tmp_path), name="run", version=0)
    for s in range(10):
        logger.log_metrics({"train_loss": 2.0 - 0.1 * s}, step=s)
    logger.save()
    src = LocalLiveSource([logger.log_dir])
    [info] = src.list_running().values()
    cursors: dict = {}
    first = _points(src.read([info], cursors)[info.ref])
    assert first == {"train_loss": (list(range(10)), [round(2.0 - 0.1 * s, 6) for s in range(10)])}

    for s in range(
        10, 20
    ):  # a new key: Lightning rewrites the file with header step,train_acc,train_loss
        logger.log_metrics({"train_acc": 0.5 + 0.01 * s, "train_loss": 2.0 - 0.1 * s}, step=s)
    logger.save()
    second = _points(src.read([info], cursors)[info.ref])
    steps = list(range(10, 20))
    assert second == {
        "train_loss": (steps, [round(2.0 - 0.1 * s, 6) for s in steps]),
        "train_acc": (steps, [round(0.5 + 0.01 * s, 6) for s in steps]),
    }

    for s in range(20, 23):  # plain appends after the rewrite
        logger.log_metrics({"train_acc": 0.5 + 0.01 * s, "train_loss": 2.0 - 0.1 * s}, step=s)
    logger.save()
    third = _points(src.read([info], cursors)[info.ref])
    assert third["train_loss"][0] == [20, 21, 22]


def test_a_truncated_csv_rewritten_by_a_new_run_is_read_from_its_first_row(tmp_path):
    """A logger restarted over the same file (truncated, then a new header, between polls a
    partial header line): the new run's rows are all read, none skipped as 'already read'."""
    csv_path = tmp_path / "metrics.csv"
    csv_path.write_text("step,loss\n" + "".join(f"{s},{2.0 - 0.1 * s}\n" for s in range(10)))
    src = LocalLiveSource([csv_path])
    [info] = src.list_running().values()
    cursors: dict = {}
    assert len(_points(src.read([info], cursors)[info.ref])["loss"][0]) == 10
    csv_path.write_text("ste")  # the restarted logger is writing its header
    assert _points(src.read([info], cursors)[info.ref]) == {}
    csv_path.write_text("step,loss,acc\n" + "".join(f"{s},{3.0 - 0.1 * s},0.5\n" for s in range(4)))
    again = _points(src.read([info], cursors)[info.ref])
    assert again["loss"] == ([0, 1, 2, 3], [round(3.0 - 0.1 * s, 6) for s in range(4)])
