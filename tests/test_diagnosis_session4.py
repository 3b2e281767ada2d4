"""Session-4 diagnosis rules, each on real input from the own corpus (tests/data/realworld) or a run
made by the real library (tests/data/frameworks); each test fails on the code before the change.

- A validation ``<name>_step`` series (Lightning: per-batch values of the evaluation loop on their
  own batch counter) never replaces ``<name>_epoch`` as the held-out metric (csv27: a healthy
  OneCycle run was called overfit from val_loss_step).
- LI003 (epoch/step mismatch) does not call a reset when every record holds one steps-per-epoch
  ratio, whatever the steps-per-epoch figure says (log15: a progress-bar total over 3 epochs read as
  per epoch), nor on a step axis the reader numbered itself (``log.step_axis`` = train_log_dict).
- A diverged run's action names "the last good checkpoint" only when the run records one (a save
  interval in its params or a checkpoint-save console line).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mlaudit_core.audit import audit
from mlaudit_core.formats import load_path
from mlaudit_core.report import Outcome
from mlaudit_core.roles import Role

OWN = Path(__file__).parent / "data" / "realworld" / "runs"
FRAMEWORKS = Path(__file__).parent / "data" / "frameworks"


def _run(path: Path):
    runs = list(load_path(path).runs)
    assert runs, f"nothing read from {path}"
    return runs[-1][1]


def test_validation_step_series_does_not_replace_the_epoch_value():
    run = _run(OWN / "aakashvardhan--pl-wrapper/logs/lightning_logs/version_0/metrics.csv")
    assert run.key_for(Role.VAL_LOSS) == "val_loss_epoch"
    # the training series still prefers Lightning's per-step values
    assert run.key_for(Role.TRAIN_LOSS) == "train_loss_step"
    rep = audit(run)
    assert rep.verdict.outcome is Outcome.SUCCEEDED, rep.verdict.summary


@pytest.mark.parametrize(
    "params",
    [
        {"log.steps_per_epoch": "1677"},
        {"log.step_axis": "train_log_dict", "log.steps_per_epoch": "1677"},
    ],
)
def test_li003_no_reset_when_step_and_epoch_advance_together(params):
    run = _run(OWN / "Ishihara-Masabumi--Llama_SFT/train_log.txt")
    run.params.update(
        params
    )  # what a console reader reported for this log (the tqdm total, 3 epochs)
    rep = audit(run)
    assert not [f for f in rep.findings if f.code == "LI003"], [f.message for f in rep.findings]
    assert rep.verdict.outcome is Outcome.SUCCEEDED, rep.verdict.summary


def test_checkpoint_is_named_only_when_the_run_records_one():
    from mlaudit_core.verdict.narrative import _checkpoint_recorded, blowup

    with_saves = _run(
        OWN / "ChenZihua-cn--nanoGPT/train.log"
    )  # prints 'saving checkpoint to out-kirin'
    assert _checkpoint_recorded(with_saves, blowup(with_saves))
    no_saves = _run(
        FRAMEWORKS / "torch_tb" / "lr50"
    )  # torch.utils.tensorboard, no checkpoint written
    assert not _checkpoint_recorded(no_saves, blowup(no_saves))
    rep = audit(no_saves)
    assert not any("last good checkpoint" in a.action for a in rep.next_actions), [
        a.action for a in rep.next_actions
    ]


def test_a_python_warning_naming_gradscaler_is_not_precision_evidence():
    """nanoGPT prints a FutureWarning about ``torch.cuda.amp.GradScaler`` and echoes the source line
    ``scaler = torch.cuda.amp.GradScaler(enabled=(dtype == 'float16'))`` on every run, float32 on a
    CPU included (own corpus log09, a phone CPU run): that names the API, not the setting."""
    from mlaudit_core.verdict.evidence import precision_evidence

    run = _run(OWN / "ChenZihua-cn--nanoGPT/train.log")
    rep = audit(run)
    assert precision_evidence(run, rep.findings) == []
    assert rep.verdict.outcome is Outcome.DIVERGED
    assert not any("precision" in a.action.lower() for a in rep.next_actions), [
        a.action for a in rep.next_actions
    ]
    # a console line that states the setting still counts
    from mlaudit_core.rundata import ConsoleLine

    run.console.append(
        ConsoleLine(
            source="train.log", lineno=9999, text="Using 16bit Automatic Mixed Precision (AMP)"
        )
    )
    assert precision_evidence(run, rep.findings)


def test_a_crash_followed_by_a_later_finished_launch_does_not_end_the_run():
    """own log13: a YOLOX train_log.txt holding 14 launches; 13 die (CUDA OOM, FileNotFoundError ...),
    the last runs 300/300 epochs and prints 'Training of experiment is done'. The OOM is reported but
    is not how the run ended."""
    run = _run(OWN / "Duke-Rodriguez-Rudolph--yolox-chepai/train_log.txt")
    rep = audit(run)
    assert any(f.code == "RT001" for f in rep.findings)  # still reported
    assert rep.verdict.outcome is not Outcome.CRASHED, rep.verdict.summary
    assert "Earlier attempts in the same log crashed" in rep.verdict.summary


def test_a_crash_at_the_end_of_the_log_still_ends_the_run():
    """own wb12: nanoGPT W&B run, CUDA OOM at step 0 and nothing after it."""
    run = _run(OWN / "jackokeefe11--nanoGPT/wandb/run-20240215_023758-f656tyfr")
    rep = audit(run)
    assert rep.verdict.outcome is Outcome.CRASHED, rep.verdict.summary
    assert "Earlier attempts" not in rep.verdict.summary


def test_a_relaunch_resumed_from_an_earlier_checkpoint_is_not_a_correctness_bug():
    """own log12: a console log whose second launch resumes from the epoch-70 checkpoint (epoch counter
    100 -> 71, loss 1.49 where the first launch had 1.66 at epoch 71): weights and counter restored
    together. Reported (LI002 warning, rewound), not 'the resume did not restore the training state'."""
    run = _run(OWN / "CloneNOX--Bi-LSTM-CN-Language-model/train_log.txt")
    rep = audit(run)
    li = [f for f in rep.findings if f.code == "LI002"]
    assert li and li[0].facts.get("rewound") and li[0].severity.value == "warning", [
        f.message for f in li
    ]
    assert rep.verdict.cause.value != "correctness_bug", rep.verdict.summary
    assert rep.verdict.outcome in (Outcome.SUCCEEDED, Outcome.PLATEAUED), rep.verdict.summary


def test_a_run_that_ends_inside_its_warmup_without_a_planned_length_is_not_succeeded(monkeypatch):
    """own mlf03: an MLflow run (mmsegmentation) with 6 points, iterations 10-60, the learning rate
    rising at every point (linear warmup), status FINISHED (MLflow's exit handler). No planned length
    is logged: whether it finished or stopped at its start is not in the data, so not 'succeeded'."""
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    store = OWN / "GhadeerElmkaiel--SegFormer/mlruns"
    runs = [
        r
        for where, r in load_path(store).runs
        if "3c7adce791d244d8bf5779f654f8e2e8" in where
        or r.identity.id == "3c7adce791d244d8bf5779f654f8e2e8"
    ]
    assert runs, "run 3c7adce7 not read from the store"
    rep = audit(runs[0])
    assert rep.verdict.outcome is Outcome.UNKNOWN, rep.verdict.summary
    assert "warmup" in rep.verdict.summary and "planned length" in rep.verdict.summary


def test_li003_does_not_trust_a_bar_total_that_no_record_fits():
    """own log20: an HF console whose only epoch record with a step is (8716, epoch 10); the reader's
    steps per epoch (4358) came from a datasets 'Map' progress bar. No record fits that figure, so it
    is the figure that is wrong, not a counter that restarted."""
    run = _run(OWN / "EshaUbale--Language-Modeling-with-Huggiingface/train_log.txt")
    run.params["log.steps_per_epoch"] = "4358"  # what the console reader reported at 2e6c134
    rep = audit(run)
    assert not [f for f in rep.findings if f.code == "LI003"], [f.message for f in rep.findings]
    assert rep.verdict.cause.value != "correctness_bug", rep.verdict.summary


def test_task_metrics_still_zero_in_a_run_stopped_in_its_warmup_are_not_a_label_failure():
    """own csv34: YOLOv8n results.csv + args.yaml (epochs 50) with 3 epochs, all inside the 3-epoch
    warmup, precision/recall/mAP 0 at each: a detector's first epochs, cut short; not underfit/data."""
    rep = audit(_run(OWN / "4rtur1t0--TrashYolo/runs/detect/train2/results.csv"))
    assert rep.verdict.outcome in (Outcome.CRASHED, Outcome.RUNNING, Outcome.UNKNOWN), (
        rep.verdict.summary
    )
    assert rep.verdict.cause.value != "data_config", rep.verdict.summary


def test_a_loss_that_rose_from_its_first_value_and_stayed_is_diverged_not_underfit():
    """own ts23: QLoRA at learning rate 5, loss 1.637 -> 11.8 at step 2 -> exactly 10.3735 (ln 32000)
    for the rest of its 10 steps. It got worse from the start: diverged, not 'barely learned'."""
    rep = audit(_run(OWN / "poludmik--qlora-fine-tune/output/trainer_state.json"))
    assert rep.verdict.outcome is Outcome.DIVERGED, rep.verdict.summary
    assert any(f.code == "OP001" and f.facts.get("rose_from_start") for f in rep.findings)


def test_a_log_inside_its_first_epoch_with_no_end_is_not_succeeded():
    """own log16: 'ep: 0, batch: 20 ... 260, loss ...' of an LLM pretraining that simply stops, loss
    still falling fast; no planned length, no end line, no tracker status. Not 'succeeded'."""
    rep = audit(_run(OWN / "Barber0--LLM-pretrain/train.log"))
    assert rep.verdict.outcome is not Outcome.SUCCEEDED, rep.verdict.summary
