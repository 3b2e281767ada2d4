"""The verdict (mlaudit_core/verdict/policy.py and the detectors it reads) on runs a new user made
with the real frameworks at their defaults (session 11; files in tests/data/newuser11, README
there).

The truth of each run was written before mlaudit saw it (a table with the time). The strict xfails
are verdict problems left to the verdict-rule owners (reported to the lead); each says what a
careful analyst reads in the file.
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from mlaudit.cli import app

DATA = Path(__file__).parent / "data" / "newuser11"


def _verdict(*args: str) -> dict:
    res = CliRunner().invoke(app, [*args, "--format", "json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_policy_warmup_nan_console_is_a_learning_rate_divergence():
    """A plain PyTorch loop printing ``step N/640 loss X lr Y``: SGD warmed up over 64 steps to lr 12,
    the loss grows through the ramp, inf at step 70 and NaN from step 80 to the end: diverged, an
    optimisation (learning-rate) cause, with the training loss named non-finite."""
    rep = _verdict("logs", str(DATA / "pt_warmup_nan_peak.log"))
    assert rep["verdict"]["outcome"] == "diverged", rep["verdict"]["summary"]
    assert rep["verdict"]["cause"] == "model_convergence", rep["verdict"]["summary"]
    li001 = [f["message"] for f in rep["findings"] if f["code"] == "LI001"]
    assert any(m.startswith("train/loss is non-finite") for m in li001), li001


def test_policy_causal_lm_at_the_uniform_guess_over_its_vocabulary_is_not_succeeded():
    """HF Trainer, GPT-2 causal LM from config (vocab_size 48 in config.json), lr 0.5: loss 7.54 at the
    first logging step, then 3.77-3.9 to the end, eval_loss 4.12 -> 3.75 (ln 48 = 3.87): the model sits
    at the uniform guess over its vocabulary (a causal LM's classes are its tokens: the trainer_state
    reader takes vocab_size from config.json under an LM head), underfit (V19e), with no advice to
    raise a learning rate that is already 0.48."""
    rep = _verdict("audit", str(DATA / "hf_lm_lr_0.5"), "--no-write")
    assert rep["verdict"]["outcome"] == "underfit", rep["verdict"]["summary"]
    assert "ln 48" in rep["verdict"]["summary"]
    assert "higher learning rate is not the fix" in rep["verdict"]["summary"]


def test_policy_lightning_converged_with_two_val_loaders_is_succeeded():
    """Lightning, two validation dataloaders, LearningRateMonitor, gradient clipping,
    accumulate_grad_batches 2, 12 epochs of max_epochs 12: val_loss/dataloader_idx_0 0.30 -> 0.105 by
    epoch 5 then 0.107-0.111, val_acc 0.94-0.95 (the data's noise ceiling): a converged run (V14b's
    ``heldout_learned_at_end``), not a plateau."""
    rep = _verdict("audit", str(DATA / "lightning_two_val_loaders_tb"), "--no-write")
    assert rep["verdict"]["outcome"] == "succeeded", rep["verdict"]["summary"]


def test_policy_short_run_with_evaluation_gaps_is_not_slow():
    """A short TensorBoard run whose 2x-slow steps come side by side at the epoch ends (the
    evaluation pass), not as a pause recurring at one spacing: SY004 reads the rhythm between pause
    stretches, so no slow verdict (was slow/infra_runtime from 9 'pauses')."""
    rep = _verdict("audit", str(DATA / "pt_val_is_train_tb"), "--no-write")
    assert rep["verdict"]["outcome"] != "slow", rep["verdict"]["summary"]


def test_policy_sklearn_mlp_stopped_by_max_iter_while_improving_is_underfit():
    """The library's ConvergenceWarning and a loss still falling: V19m. scikit-learn
    MLPClassifier(max_iter=15, verbose=True): loss 0.664 -> 0.550, still falling about 1.3% per
    iteration, then 'ConvergenceWarning: Stochastic Optimizer: Maximum iterations (15) reached
    and the optimization hasn't converged yet' (validation accuracy 0.74): stopped by its
    iteration budget while improving, underfit (was succeeded/healthy)"""
    rep = _verdict("logs", str(DATA / "sklearn_mlp_max_iter_15.log"))
    assert rep["verdict"]["outcome"] == "underfit", rep["verdict"]["summary"]


def test_policy_trainer_console_with_a_final_evaluate_is_succeeded():
    rep = _verdict("logs", str(DATA / "hf_lm_tee_final_evaluate.log"))
    assert (rep["verdict"]["outcome"], rep["verdict"]["cause"]) == ("succeeded", "healthy")


def test_policy_final_evaluate_reprint_is_no_step_repeat_warning():
    """An HF console ending with the script's trainer.evaluate(): the last evaluation logged again
    at the final step is no repeated point (LI002 does not count repeats of the last step)."""
    rep = _verdict("logs", str(DATA / "hf_lm_tee_final_evaluate.log"))
    assert not [f for f in rep["findings"] if f["code"] == "LI002"], rep["findings"]
