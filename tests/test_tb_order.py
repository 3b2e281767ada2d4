"""TensorBoard event files opened in the same second differ only in an unpadded counter
(``...host.9``, ``...host.10``): they are read in creation order, not name order (issue 16,
finding 11: name order read the later file first and reported a false step reset). Files are
written by TensorBoard's own EventFileWriter."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("tensorboard")


def _write(logdir, name: str, steps: range) -> None:
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    w = EventFileWriter(str(logdir), filename_suffix=f".{name}")
    for s in steps:
        summ = summary_pb2.Summary(
            value=[summary_pb2.Summary.Value(tag="train/loss", simple_value=2.0 * np.exp(-s / 100))]
        )
        w.add_event(event_pb2.Event(step=s, wall_time=1700000000.0 + s, summary=summ))
    w.close()
    (f,) = [p for p in logdir.iterdir() if p.name.endswith(f".{name}")]
    f.rename(logdir / f"events.out.tfevents.1700000000.host.{name}")


def test_files_sharing_a_second_are_read_in_counter_order(tmp_path):
    from mlaudit_tensorboard.reader import event_files, load_logdir

    _write(tmp_path, "9", range(0, 100))  # the first file the run opened
    _write(tmp_path, "10", range(100, 200))  # opened later in the same second
    names = [p.name for p in event_files(tmp_path)]
    assert names == [
        "events.out.tfevents.1700000000.host.9",
        "events.out.tfevents.1700000000.host.10",
    ]
    run = load_logdir(tmp_path)
    steps = run.metrics.series("train/loss").steps
    assert np.all(np.diff(steps) > 0), steps[:5]
