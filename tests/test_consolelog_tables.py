"""consolelog.parser LogParser._table_line: a header of column names followed by rows of numbers is
a table whose columns are series, wherever its rows occur in the console.

Inputs: the YOLOv7 console of own f13b2-17 (tests/data/realworld: ``Epoch gpu_mem box obj cls
total labels img_size`` rows drawn as tqdm descriptions, ``n/total`` and ``11.8G`` cells, the
``Class Images Labels P R mAP@.5 mAP@.5:.95`` header as the validation bar's description and its
``all`` row printed after the next epoch's header), and a console written by a loop that prints
its tables the same way through the installed tqdm.
"""

from __future__ import annotations

from pathlib import Path

from tqdm import tqdm

from mlaudit_core.formats.consolelog import load_logs
from mlaudit_core.roles import Role

RUNS = Path(__file__).resolve().parent / "data" / "realworld" / "runs"


def _last(run, key: str) -> tuple[int, float]:
    s = run.series(key).by_step()
    return int(s.steps[-1]), float(s.values[-1])


def test_table_line_reads_the_yolov7_epoch_and_validation_tables():
    run = load_logs([RUNS / "WuG978--yolov7" / "nohup.out"])
    total = run.series("train/total").by_step()
    assert len(total) == 300 and int(total.steps[0]) == 0
    assert _last(run, "train/total") == (299, 0.03446)  # the epoch's last redraw
    assert _last(run, "train/gpu_mem")[1] == 11.8
    mp = run.series("val/map@_5").by_step()
    assert len(mp) == 300
    assert (int(mp.steps[0]), float(mp.values[0])) == (0, 0.0014)
    assert _last(run, "val/map@_5") == (299, 0.992)
    assert _last(run, "val/map@_5__95") == (299, 0.812)
    assert run.key_for(Role.VAL_ACCURACY) == "val/map@_5__95"


def _yolo_like_console(path: Path, epochs: int, batches: int) -> Path:
    """Print a training loop's tables as YOLOv5/v7 do: the epoch header, each batch's row as the
    bar's description, the validation header as the validation bar's description, and the
    validation ``all`` row (with a per-class row after it) once the next header is out."""
    with path.open("w") as fh:
        pending = None
        for epoch in range(epochs):
            print(
                ("\n" + "%10s" * 6) % ("Epoch", "gpu_mem", "box", "obj", "total", "img_size"),
                file=fh,
            )
            if pending:
                print(pending, file=fh)
            bar = tqdm(total=batches, file=fh, mininterval=0)
            for i in range(batches):
                box, obj = 0.08 / (1 + epoch + i / batches), 0.03 / (1 + epoch)
                s = ("%10s" * 2 + "%10.4g" * 4) % (
                    f"{epoch}/{epochs - 1}",
                    "3.2G",
                    box,
                    obj,
                    box + obj,
                    640,
                )
                bar.set_description(s)
                bar.update(1)
            bar.close()
            head = ("%20s" + "%12s" * 4) % ("Class", "Images", "P", "R", "mAP@.5")
            for _ in tqdm(range(2), desc=head, file=fh, mininterval=0):
                pass
            m = 0.1 + 0.2 * epoch
            pending = (
                ("%20s" + "%12i" + "%12.3g" * 3) % ("all", 50, m, m, m)
                + "\n"
                + ("%20s" + "%12i" + "%12.3g" * 3) % ("cat", 50, 0.01, 0.01, 0.01)
            )
        print(pending, file=fh)
    return path


def test_table_line_reads_rows_drawn_as_bar_descriptions(tmp_path):
    run = load_logs([_yolo_like_console(tmp_path / "train.log", epochs=4, batches=5)])
    total = run.series("train/total").by_step()
    assert list(total.steps) == [0, 1, 2, 3]
    assert abs(float(total.values[0]) - (0.08 / 1.8 + 0.03)) < 1e-3
    mp = run.series("val/map@_5").by_step()
    assert list(mp.steps) == [0, 1, 2, 3]
    assert [round(float(v), 3) for v in mp.values] == [0.1, 0.3, 0.5, 0.7]  # the 'cat' rows unread
