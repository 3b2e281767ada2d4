"""Values odd by construction (from the first point, or from how the run logs them) and scores at
their ceiling are not failures of a healthy run (mlaudit_core/verdict/policy.py V06b and the agent
reward rule, detectors OP001, GE007, the console names table), on real input from the own corpus
(tests/data/realworld, labelled before any mlaudit run):

- f10b2-16: YOLOv8n val/cls_loss inf at every one of 200 evaluations, from the first, while mAP50
  rose to 0.85: the loss computation is broken, not the model (was diverged/data_config);
- f10b2-11: SB3 PPO ep_rew_mean -98 -> 340, stretch medians -54 -> 191 -> 185: the reward's spread
  inside a stretch is measured about the stretch's own trend (was underfit, 'did not learn');
- f5b4-08: Mask2Former's total loss 12.9 is the sum of the 30 loss terms it logs: no K-way
  cross-entropy to hold to ln K (was diverged, '3.4x ln 50');
- f11b1-07: YOLOv8n fitness 0.995 (mAP50 0.995) from epoch 8 of 100: within GE007's 1% of the
  ceiling, solved, not a plateau;
- f11b2-15: VietOCR's 'load time' is the data-loading time (a spike at each pass over the data), not
  the step time (was slow, 'pauses').
"""

from __future__ import annotations

from pathlib import Path

from mlaudit_core.audit import audit
from mlaudit_core.formats import load_path
from mlaudit_core.report import Outcome

RUNS = Path(__file__).parent / "data" / "realworld" / "runs"


def _audit(rel: str):
    runs = list(load_path(RUNS / rel).runs)
    assert runs, rel
    return audit(runs[-1][1])


def test_heldout_loss_nonfinite_from_the_first_evaluation_beside_a_rising_map_is_no_divergence():
    rep = _audit("1543siddhant--ANPR-System-Dev/ultralytics/runs/detect/train_model/results.csv")
    assert rep.verdict.outcome is not Outcome.DIVERGED, rep.verdict.summary
    assert any(f.code == "LI001" for f in rep.findings)  # the non-finite loss is still reported


def test_agent_reward_rising_inside_its_stretches_learned():
    rep = _audit("reddyn12--Sb3Test/logs/PPO_10")
    assert rep.verdict.outcome is not Outcome.UNDERFIT, rep.verdict.summary


def test_total_loss_that_sums_its_logged_terms_is_not_held_to_ln_k():
    rep = _audit("BUAAZhangHaonan--mgm_mask2former/output/log.txt")
    assert not any("chance level" in f.message for f in rep.findings if f.code == "OP001")
    assert rep.verdict.outcome is not Outcome.DIVERGED, rep.verdict.summary


def test_fitness_within_one_percent_of_its_ceiling_is_no_plateau():
    rep = _audit("0012223--ADOS_2024/runs/detect/train/results.csv")
    assert not any(f.code == "GE007" for f in rep.findings)
    assert rep.verdict.outcome is Outcome.SUCCEEDED, rep.verdict.summary


def test_vietocr_load_time_is_data_time_not_step_time():
    runs = list(load_path(RUNS / "TienNguyenKha--CS331_R-CIPT/output/train.log").runs)
    run = runs[-1][1]
    assert "perf/data_time" in run.metrics.keys
    assert audit(run).verdict.outcome is not Outcome.SLOW
