"""Rules of session 15 (fixer-r1a15) on real runs of the own corpus (f19b1, f19b2), each labelled from
its data before any mlaudit run; every test fails without its rule.

- ``policy.transient_nonfinite`` / ``_sporadic_nonfinite_end`` and ``task_metric_contradicts(...,
  near_best=False)``: f19b2-18, a YOLOv8x results.csv whose ``train/box_loss`` is ``inf`` at 4 isolated
  epochs of 100, the last among them, while mAP50 rises to its best at epoch 85 (was diverged/data_config);
- ``policy.task_metric_fell_while_fitting`` (in V14b): f19b1-09, a YOLOv8 fine-tune whose fitness level
  peaked by epoch 48 and ended 5x its noise band lower while every training loss kept falling (was
  plateaued);
- ``plan._outer_loop`` / ``_after_last_block`` and ``evidence._infer_patience``: f19b2-17, a console in
  Serbian whose ``=> Epoha [k/10] ZAVRSENA!`` blocks count 4 of 10 epochs, then 25 batch lines of the
  fifth (was succeeded/healthy);
- ``benchmarks/diagnosis_eval._latest_with_metrics``: f19b2-05, an MLflow experiment holding a finished
  200-epoch Keras run and an earlier run left RUNNING with nothing logged (the empty run was judged:
  "no metric was logged at all").
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from mlaudit_core.audit import audit
from mlaudit_core.formats import load_path
from mlaudit_core.plan import console_plan
from mlaudit_core.verdict.evidence import ending

REPO = Path(__file__).resolve().parents[1]
RUNS = REPO / "tests" / "data" / "realworld" / "runs"


def _run(path: Path):
    runs = list(load_path(path).runs)
    assert runs, path
    return runs[-1][1]


def test_transient_nonfinite_sporadic_inf_at_the_end_while_map_rises_is_no_divergence():
    path = RUNS / "Phenikaa-University--cv-finalterm/runs/detect/train20/results.csv"
    rep = audit(_run(path))
    li = [f for f in rep.findings if f.code == "LI001" and f.facts.get("role") == "train_loss"]
    assert li and li[0].facts["n_nonfinite"] == 4 and not li[0].facts["finite_at_end"]
    assert rep.verdict.outcome.value not in ("diverged", "unstable", "crashed"), rep.verdict.summary


def test_task_metric_fell_while_fitting_is_an_overfit_not_a_plateau():
    path = RUNS / "16thExegesisDH--Segmentation_model/runs/detect/train2/results.csv"
    v = audit(_run(path)).verdict
    assert (v.outcome.value, v.cause.value) == ("overfit", "model_convergence"), v.summary
    assert "kept falling" in v.summary


def test_outer_loop_counter_under_any_word_is_the_plan():
    path = RUNS / "Pantelijaa--NNUE-Chess-Engine/logs/train_log.txt"
    plans = console_plan(path.read_text(encoding="utf-8").splitlines())
    assert plans and (plans[0].planned, plans[0].unit, plans[0].reached) == (10.0, "epoch", 4.0)
    assert plans[0].open_pass and "pass 5 of 10" in plans[0].open_pass
    run = _run(path)
    e = ending(run, [])
    assert e.stopped and not e.early_stopped
    assert audit(run).verdict.outcome.value != "succeeded"


def test_outer_loop_counter_needs_one_total_and_consecutive_counts():
    # a per-epoch batch bar restarts: not an outer loop; nor is a counter whose total changes
    bar = [f"Batch [{k}/3] loss 0.5" for k in (1, 2, 3, 1, 2, 3)] + ["x"] * 30
    assert console_plan(bar) == []
    totals = ["Runde [1/5] fertig", "Runde [2/6] fertig"] + ["x"] * 30
    assert console_plan(totals) == []


def _load_eval():
    spec = importlib.util.spec_from_file_location(
        "diagnosis_eval", REPO / "benchmarks" / "diagnosis_eval.py"
    )
    mod = importlib.util.module_from_spec(spec)
    sys.modules["diagnosis_eval"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_diagnosis_eval_judges_the_latest_run_with_metrics_of_a_store():
    ev = _load_eval()
    store = RUNS / "Nathnael12--pharmaceutical-sales-prediction/mlruns/2"
    runs = list(load_path(store).runs)
    assert len(runs) == 2
    run, note = ev._pick(runs, {"id": "x"})
    assert run.metrics.keys and "428e8f8c775640d991acbc7027d01ef5" in note
