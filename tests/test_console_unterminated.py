"""A console log whose last line has no line end (mlaudit_core/formats/console.py).

A log saved without a final line end (pasted into an issue, a gist, an editor) is not partial
data: the verdict stands, with a load warning. A log that stops inside an unfinished progress
bar was cut while the process ran: partial, never ``succeeded``. The lines are Keras 3's
``model.fit`` console shape (``Epoch e/E`` then the finished step bar with its metrics).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

MLAUDIT = str(Path(sys.executable).with_name("mlaudit"))


def _epochs(n: int, of: int) -> list[str]:
    lines = []
    for e in range(1, n + 1):
        loss, val = 2.0 * math.exp(-e / 6) + 0.3, 2.1 * math.exp(-e / 6) + 0.35
        lines += [
            f"Epoch {e}/{of}",
            f"100/100 [==============================] - 2s 20ms/step - loss: {loss:.4f} - "
            f"accuracy: {1 - loss / 3:.4f} - val_loss: {val:.4f} - val_accuracy: {1 - val / 3:.4f}",
        ]
    return lines


def _audit(path: Path) -> dict:
    p = subprocess.run(
        [MLAUDIT, str(path), "--no-write", "-f", "json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode in (0, 1), p.stderr
    return json.loads(p.stdout)


def test_a_finished_log_without_a_final_line_end_keeps_its_verdict(tmp_path):
    path = tmp_path / "train.log"
    path.write_text("\n".join(_epochs(20, 20)))  # no "\n" after the last line
    report = _audit(path)
    assert report["verdict"]["outcome"] == "succeeded", report["verdict"]
    notes = [u for u in report["unknowns"] if "line end" in u]
    assert notes and "truncated" not in notes[0]
    # the same log with its line end: same outcome, and a higher confidence (no load warning)
    path.write_text("\n".join(_epochs(20, 20)) + "\n")
    again = _audit(path)
    assert again["verdict"]["outcome"] == "succeeded"
    assert again["verdict"]["confidence"] > report["verdict"]["confidence"]


def test_a_log_cut_inside_a_progress_bar_is_partial(tmp_path):
    path = tmp_path / "train.log"
    path.write_text(
        "\n".join(_epochs(20, 20)) + "\nEpoch 21/40\n"
        " 43/100 [===========>..................] - ETA: 1s - loss: 0.3123"
    )
    report = _audit(path)
    assert report["verdict"]["outcome"] != "succeeded", report["verdict"]
    assert report["verdict"]["confidence"] <= 0.5
    assert any("truncated" in u and "progress bar" in u for u in report["unknowns"]), report[
        "unknowns"
    ]
