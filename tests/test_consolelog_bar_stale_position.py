"""The console reader's training bar (mlaudit_core/formats/consolelog/parser.py ``_progress``) on a
plain PyTorch loop that calls tqdm's ``set_postfix(loss=...)`` once per step.

tqdm writes its position back only every ``mininterval`` (0.1 s), while each ``set_postfix`` redraws
the bar: several steps' losses are drawn at one stale position ('Epoch 1/12: 0%| 0/16 ...,
loss=1.38' ten times with ten losses). tests/data/newuser9/pt_tqdm_epoch_bars.log was printed by
torch 2.13.0 CPU and tqdm 4.70.1 (``python train.py 2>&1 | tee train.log``; one bar per epoch,
16 steps each, 12 epochs; README there).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from mlaudit_core.formats.consolelog import load_logs

DATA = Path(__file__).parent / "data"
LOG = DATA / "newuser9" / "pt_tqdm_epoch_bars.log"


def _bar_losses(text: str, epoch: int) -> list[float]:
    """The distinct losses the bar of one epoch drew, in order (what a person reads off it)."""
    out: list[float] = []
    for part in text.replace("\r", "\n").split("\n"):
        for seg in part.split(f"Epoch {epoch}/12:")[1:]:
            if "|" in seg and "loss=" in seg:
                v = float(seg.rsplit("loss=", 1)[1].split("]")[0])
                if not out or out[-1] != v:
                    out.append(v)
    return out


def test_progress_places_losses_drawn_at_a_stale_position_at_successive_steps():
    run = load_logs([LOG])
    loss = run.metrics.series("train/loss")
    first = _bar_losses(LOG.read_text(encoding="utf-8"), 1)
    assert len(first) == 16  # one loss per step, 10 of them drawn at '0/16'
    steps = np.asarray(loss.steps)
    vals = np.asarray(loss.values)
    got = [int(steps[np.flatnonzero(np.isclose(vals, v))[0]]) for v in first]
    assert got == list(range(got[0], got[0] + 16)), got
    # the only same-step pairs left are the per-epoch 'train_loss=' summary lines, one per epoch
    assert int((np.diff(steps) == 0).sum()) <= 12
    assert (np.diff(steps) >= 0).all()


def test_progress_keeps_a_new_series_at_the_position_of_the_bar():
    """Lightning adds the validation figures to the training bar's postfix at the epoch's last
    position: they stay at that step (one per epoch, at the epoch ends), not one step later."""
    run = load_logs([DATA / "logs" / "frameworks" / "lightning2-tqdm-healthy.log"])
    val = run.metrics.series("val/loss")
    spe = 16
    assert [int(s) % spe for s in val.steps] == [0] * len(val.steps)
