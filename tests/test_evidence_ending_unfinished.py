"""verdict.evidence.ending: what shows a run did not finish (or did), on real runs of the own corpus.

- ``cut_training_epoch``: own f24b1-20, a Lightning CSVLogger file of a VAE with no validation,
  logging every 50 steps (4 rows in each of epochs 1-10, one row in epoch 11) from a script whose
  sibling runs reach epoch 99: the last epoch was cut while it ran (crashed/inconclusive; was
  plateaued/inconclusive);
- ``_counted_epochs``: own f13b1-12, a PowerShell console 'Starting Training for 2 epochs...' then
  'Epoch 1/2 - Loss: 0.97655' and nothing after: the 1-based counter reached epoch 1 of 2
  (crashed/inconclusive; was unknown: the epoch series counted as 0-based made it 2 of 2);
- ``verdict._on_partial_data``: own f18b1-09, a W&B folder whose ``.wandb`` history is cut at epoch 29
  while its console ends with Ultralytics' '100 epochs completed in 0.547 hours': the end-of-training
  line is a witness the cut did not reach (succeeded/healthy; was unknown, V20p).
"""

from __future__ import annotations

from realworld_helpers import own_run

from mlaudit_core.audit import audit
from mlaudit_core.verdict.evidence import cut_training_epoch, ending


def test_cut_training_epoch_lightning_csv_without_validation_cut_in_epoch_11():
    run = own_run("f24b1-20")
    assert "the last epoch (11) holds 1" in (cut_training_epoch(run) or "")
    v = audit(run).verdict
    assert (v.outcome.value, v.cause.value) == ("crashed", "inconclusive")


def test_cut_training_epoch_needs_no_evaluation_and_equal_epochs():
    """A run with a held-out evaluation is read by ``cut_epoch``; own f19b2-04 (a Lightning tutorial
    CSV of 10 complete epochs, training loss only) is not cut."""
    assert cut_training_epoch(own_run("f19b2-04")) is None


def test_counted_epochs_one_based_console_counter_reached_one_of_two():
    run = own_run("f13b1-12")
    e = ending(run, [])
    assert (e.planned, e.reached, e.short) == (2.0, 1.0, True)
    v = audit(run).verdict
    assert (v.outcome.value, v.cause.value) == ("crashed", "inconclusive")


def test_on_partial_data_end_of_training_line_is_a_witness_past_the_cut():
    v = audit(own_run("f18b1-09")).verdict
    assert (v.outcome.value, v.cause.value) == ("succeeded", "healthy")
