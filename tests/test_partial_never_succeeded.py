"""Partial input never gives 'succeeded', and a per-epoch progress bar is not a planned length.

Break-it pass: a CSV log whose last line was cut while being written was called
succeeded/healthy ("the run finished") next to its own "the file was cut" note. Realworld wb01/
wb02 (W&B folders whose .wandb stops at 6% of the run): a tqdm bar that restarts every epoch
(6250/6250, then 7/6250) was read as a planned length of 6,250 steps, so the run looked stopped
early ('crashed'); with that fixed, the 6% prefix alone looked healthy ('succeeded').
"""

from __future__ import annotations

import math

from mlaudit_core.audit import audit
from mlaudit_core.formats import load_path


def _healthy_rows(n: int) -> list[str]:
    return [
        f"{i},{2.3 * math.exp(-i / 20) + 0.1:.5f},{2.3 * math.exp(-i / 20) + 0.15:.5f}"
        for i in range(n)
    ]


def test_csv_cut_while_written_is_not_succeeded(tmp_path):
    whole = tmp_path / "whole.csv"
    whole.write_text("step,loss,val_loss\n" + "\n".join(_healthy_rows(100)) + "\n")
    cut = tmp_path / "cut.csv"
    cut.write_text("step,loss,val_loss\n" + "\n".join(_healthy_rows(100)) + "\n100,0.00")
    ((_, run_whole),) = load_path(whole).runs
    ((_, run_cut),) = load_path(cut).runs
    assert audit(run_whole).verdict.outcome.value == "succeeded"  # the same rows, complete
    v = audit(run_cut).verdict
    assert v.outcome.value != "succeeded" and v.inconclusive, v.summary
    assert "partial" in v.summary.lower()


def test_a_progress_bar_that_restarts_is_per_epoch_not_the_planned_length(tmp_path):
    lines = []
    for epoch in range(3):
        for n in range(0, 101, 20):
            lines.append(
                f"\r 50%|#####     | {n}/100 [00:01<00:01, 50.00it/s, loss={2.0 - 0.1 * epoch - 0.001 * n:.3f}]"
            )
    one = tmp_path / "one_bar.log"
    one.write_text(lines[3] + "\n")
    many = tmp_path / "epochs.log"
    many.write_text("\n".join(lines) + "\n")
    ((_, r1),) = load_path(one, fmt="console").runs
    assert r1.params.get("log.total_steps") == "100"  # one bar, not yet restarted: its total
    ((_, r3),) = load_path(many, fmt="console").runs
    assert "log.total_steps" not in r3.params and r3.params.get("log.steps_per_epoch") == "100"
    steps = r3.metrics.series("train/loss").by_step().steps
    assert steps.max() == 300  # cumulative over the three epochs, not 0..100 three times
