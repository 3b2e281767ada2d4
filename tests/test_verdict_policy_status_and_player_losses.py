"""policy._ended_failed (a tracker status after a run that met its plan) and
policy._adversarial_divergence (OP001 on one GAN player's loss).

Real input from the realworld corpus: W&B run folders f16b2-09 (an HF Trainer LoRA notebook run of
3/3 epochs whose ``.wandb`` file has no exit record, so W&B and mlaudit read it crashed), f15b1-12
(a KeyboardInterrupt at epoch 25 of 60) and f16b2-06 (a WGAN's discriminator loss)."""

from __future__ import annotations

from realworld_helpers import own_run

from mlaudit_core.audit import audit
from mlaudit_core.report import Cause, Outcome
from mlaudit_core.rundata import RunStatus
from mlaudit_core.verdict.evidence import ending


def test_a_crashed_status_after_the_plan_was_reached_leaves_the_training_to_the_learning_rules():
    run = own_run("f16b2-09-")
    assert run.status in (RunStatus.FAILED, RunStatus.KILLED)
    rep = audit(run)
    e = ending(run, rep.findings)
    assert e.planned and e.reached is not None and not e.short
    v = rep.verdict
    assert (v.outcome, v.cause) == (Outcome.SUCCEEDED, Cause.HEALTHY), v.summary


def test_a_crashed_status_of_a_run_that_stopped_short_stays_crashed():
    run = own_run("f15b1-12-")
    v = audit(run).verdict
    assert v.outcome is Outcome.CRASHED, v.summary


def test_a_gan_players_rising_loss_is_an_unstable_game_not_a_divergence():
    """f16b2-06: a 3-generator WGAN (COSCI-GAN) whose central discriminator loss goes 9.9 -> 0.7 and
    back to 6.6 in the last quarter of 400/400 epochs; OP001 reads a divergence of that loss."""
    from mlaudit_core.verdict.policy import _adversarial_player

    run = own_run("f16b2-06-")
    rep = audit(run)
    assert rep.findings and any(f.code == "OP001" for f in rep.findings)
    v = rep.verdict
    assert v.outcome is Outcome.UNSTABLE and v.cause is Cause.MODEL_CONVERGENCE, v.summary
    assert "two-player game" in v.summary
    assert [
        k
        for k in ("loss_D", "errG", "d_loss", "gen_loss", "critic_loss", "train/loss", "gd_loss")
        if _adversarial_player(k)
    ] == ["loss_D", "errG", "d_loss", "gen_loss"]
