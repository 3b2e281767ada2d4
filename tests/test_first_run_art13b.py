"""Rules of session 13 (fixer-art13b) on real runs of the own corpus (f15b1, f15b2), each labelled
from its data before any mlaudit run; every test fails without its rule.

- consolelog ``LogParser._aligned_table_row`` and ``_HEADER_CELL`` (mlaudit_core/formats/consolelog/
  parser.py), ``names.canonical``'s glued ``%``: f15b1-11, a bit decoder's nohup console printing a
  fixed-width table (header ``Ep Loss L_bit ... Acc% α atk`` between ``=====`` rules, rows one space
  apart, a ``★`` after new bests) was read as "no metric was logged at all";
- ``policy._rounded_to_zero``: the same console prints its loss with 4 decimals, 0.0001 then 0.0000:
  not a loss of exactly zero (was succeeded/data_config);
- ``roles.has_class_chance`` in GE004: f15b2-13, YOLOv8 results.csv whose mAP50-95 was compared with
  1/7 classes (was plateaued/data_config "never beat chance");
- ``policy._nonfinite_from_first`` with ``ORDINARY_START_LOSS``: f15b2-09, a PINN's loss 1.226 at
  epoch 0, NaN from epoch 1 (was diverged/data_config);
- ``policy._cpu_bound`` (V18k): f15b1-14, a QLoRA fine-tune on the CPU whose log ends at step 1 of
  1857 with 99 h to go (was running/inconclusive).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from mlaudit_core.audit import audit
from mlaudit_core.formats import load_path

RUNS = Path(__file__).parent / "data" / "realworld" / "runs"


def _run(path: Path):
    runs = list(load_path(path).runs)
    assert runs, path
    return runs[-1][1]


def _verdict(path: Path):
    return audit(_run(path))


def test_aligned_table_row_reads_a_fixed_width_table_one_space_apart():
    run = _run(RUNS / "Adam-Sm1th--GG/train.log")
    loss = run.metrics.series("train/loss").by_step()
    acc = run.metrics.series("train/accuracy").by_step()
    assert len(loss) == len(acc) == 5368  # every row, the ones marked ★ too
    assert (int(loss.steps[0]), float(loss.values[0])) == (1, 0.7)
    assert int(loss.steps[-1]) == 500000
    # ``Acc%`` with ``50.20%`` cells: a fraction
    assert np.isclose(acc.values[0], 0.502) and np.isclose(acc.values[-1], 1.0)


def test_rounded_to_zero_loss_printed_at_4_decimals_is_not_a_zero_loss():
    r = _verdict(RUNS / "Adam-Sm1th--GG/train.log")
    v = r.verdict
    assert (v.outcome.value, v.cause.value) == ("succeeded", "healthy"), v.summary


def test_has_class_chance_keeps_map_out_of_validation_at_chance():
    r = _verdict(RUNS / "Nueri-ai--Smoke_fire/runs/detect/train21/results.csv")
    assert not any(f.code == "GE004" for f in r.findings)
    v = r.verdict
    assert (v.outcome.value, v.cause.value) == ("crashed", "inconclusive"), v.summary


def test_ordinary_first_loss_then_nan_is_the_first_updates():
    r = _verdict(RUNS / "SreeSatyaGit--PINAPINN/lightning_logs/version_2/metrics.csv")
    v = r.verdict
    assert (v.outcome.value, v.cause.value) == ("diverged", "model_convergence"), v.summary
    assert "1.226" in v.summary


def test_cpu_bound_bar_with_days_to_go_is_slow():
    r = _verdict(RUNS / "0ai-Cyberviser--PeachTree/training.log")
    v = r.verdict
    assert (v.outcome.value, v.cause.value) == ("slow", "infra_runtime"), v.summary
    assert "no accelerator is found" in v.summary


def test_ge004_reads_a_roc_auc_against_half():
    """A ROC AUC's chance level is 0.5 whatever the class count: GE004 examines report b11-04's
    LightGBM ``valid_0's auc`` (0.833976 -> 0.833968) instead of skipping it as not an accuracy."""
    from mlaudit_core.formats.consolelog import load_logs

    case = next((RUNS.parent.parent / "reports").glob("b11-04-*"))
    run = load_logs([case / "train.log"], [case / "context.txt"])
    r = audit(run)
    assert not any("GE004" in u for u in r.unknowns), r.unknowns
    v = r.verdict
    assert (v.outcome.value, v.cause.value) == ("succeeded", "healthy"), v.summary


def test_config_dump_lines_are_settings_not_records():
    """consolelog ``LogParser._segment`` with ``_CONFIG_OPEN``/``_YAML_LINE``: the YAML under
    detectron2's "Running with full config:" is configuration. f15b2-18 (14 launches, none trains)
    read ``SMOOTH_L1_LOSS_BETA: 0.1`` of each dump as a training loss and called it plateaued."""
    run = _run(RUNS / "RohitDhankar--Obj_Detect_Detectron2/output_dir/log.txt")
    assert not any("smooth_l1" in k or "score_thresh" in k for k in run.metrics.keys)
    v = audit(run).verdict
    assert v.outcome.value not in ("plateaued", "succeeded", "underfit", "overfit"), v.summary
