"""``verdict.score_floor`` and policy V20f on real runs of the own corpus (labelled from their data before
any mlaudit run): a run that ended with a held-out average precision never above 1% is underfit, ahead
of any overfit reading of its losses; data_config when the model learned something that score does not
see (:func:`mlaudit_core.verdict.score_floor.learned_elsewhere`), else model_convergence.
"""

from __future__ import annotations

from realworld_helpers import own_label, own_run

from mlaudit_core.audit import audit
from mlaudit_core.verdict.score_floor import learned_elsewhere


def _verdict(prefix: str):
    rep = audit(own_run(prefix))
    got = (rep.verdict.outcome.value, rep.verdict.cause.value)
    lab = own_label(prefix)
    assert got[0] in lab["outcome_any_of"] and got[1] in lab["cause_any_of"], (
        prefix,
        rep.verdict.summary,
    )
    return rep, got


def test_ended_at_ap_floor_pose_head_at_zero_beside_a_learning_box_head_is_underfit_data_config():
    # f23b1-11: pose mAP exactly 0 in all 60 of 60 epochs while box mAP50 reached 0.498 and the box
    # validation loss crept up (was read as a gap overfit of the box head)
    rep, got = _verdict("f23b1-11-")
    assert got == ("underfit", "data_config"), rep.verdict.summary
    assert rep.verdict.rule == "V20f"
    assert "metrics/mAP50(B) reached" in rep.verdict.summary


def test_ended_at_ap_floor_training_loss_that_fell_is_data_config():
    # f22b1-06: every AP at its floor after 2 of 2 epochs, but the classification loss fell 25%
    rep, got = _verdict("f22b1-06-")
    assert got == ("underfit", "data_config"), rep.verdict.summary
    assert "train/cls_loss fell" in rep.verdict.summary


def test_ended_at_ap_floor_with_no_sign_of_learning_is_model_convergence():
    # csv17: YOLOv8n from scratch, 10 of 10 epochs, losses within 7% of their start, mAP50-95 0.0005
    rep, got = _verdict("csv17-")
    assert got == ("underfit", "model_convergence"), rep.verdict.summary
    assert learned_elsewhere(own_run("csv17-"), "metrics/mAP50(B)") is None
