"""Rules of session 16 (fixer-r1a16) on real runs of the own corpus, each labelled from its data before
any mlaudit run; every test fails without its rule.

- ``verdict.final_values.snapshot_so_far`` (in policy V20): an HF ``checkpoint-N/trainer_state.json``
  saved before ``max_steps`` with too few values for a trend is a run still training (running), healthy
  so far when its held-out accuracy beat chance: f22b2-05 (checkpoint 500 of 1170, eval accuracy 0.83 on
  4 labels; was unknown), f22b2-04 and f15b2-01 (one or two values, no accuracy: running, inconclusive;
  were unknown);
- ``baseline.reruns.split_reruns``: an earlier launch of a record is a baseline only when it reached
  ``COMPLETE_SHARE`` of the last launch's steps: f22b1-19, a console whose two launches aborted after 11
  and 1 iterations before a 100-epoch run (was regressed against the 11-iteration launch: BL001 over
  "steps 11-11"); f7b3-12, a 2-step launch before a 373-step PPO run (BL001 over "steps 2-2");
- ``verdict.score_floor.ap_at_floor`` (policy V20f): a run that ended with a held-out average precision
  never above 1%: f22b1-01 (YOLOv8n-pose 5 of 5 epochs, pose mAP50 0 -> 0.0035 while the box mAP rose)
  and f22b1-06 (a YOLOv5-codebase detector 2 of 2 epochs, mAP50 0.0025 -> 0.0029), both underfit (were
  succeeded/healthy).
"""

from __future__ import annotations

from realworld_helpers import own_run

from mlaudit_core.audit import audit
from mlaudit_core.baseline.compare import baselines_of


def _verdict(prefix: str):
    rep = audit(own_run(prefix))
    return rep, (rep.verdict.outcome.value, rep.verdict.cause.value)


def test_snapshot_so_far_checkpoint_with_accuracy_above_chance_is_running_healthy():
    rep, got = _verdict("f22b2-05-")
    assert got == ("running", "healthy"), rep.verdict.summary
    assert "step 500 of the 1170 planned" in rep.verdict.summary
    assert "chance 0.25 for 4 classes" in rep.verdict.summary


def test_snapshot_so_far_checkpoint_with_losses_only_is_running_inconclusive():
    for prefix in ("f22b2-04-", "f15b2-01-"):
        rep, got = _verdict(prefix)
        assert got == ("running", "inconclusive"), (prefix, rep.verdict.summary)


def test_split_reruns_an_aborted_launch_is_no_baseline_of_a_full_run():
    rep, got = _verdict("f22b1-19-")
    assert got in (("succeeded", "healthy"), ("plateaued", "model_convergence")), (
        rep.verdict.summary
    )
    assert not [f for f in rep.findings if f.code.startswith("BL")], [
        f.message for f in rep.findings
    ]
    run = own_run("f7b3-12-")
    assert not baselines_of(run), run.notes
    assert not [f for f in audit(run).findings if f.code == "BL001"]


def test_ended_at_ap_floor_finished_detector_and_pose_head_are_underfit():
    for prefix in ("f22b1-01-", "f22b1-06-"):
        rep, got = _verdict(prefix)
        assert got[0] == "underfit", (prefix, rep.verdict.summary)
        assert rep.verdict.rule == "V20f", prefix
    rep, _ = _verdict("f22b1-01-")
    assert "metrics/mAP50(P)" in rep.verdict.summary
