"""How a run ended, on real shapes (issue 14 item 4, verdict side).

Inputs are real artifacts of tests/data/realworld (copied from public repositories, labelled from
their data; see its README) read with the real readers (``mlaudit_core.formats.load_path``), and
console logs in the exact shapes Keras and HF print. Each test states the verdict a careful analyst
gives and fails if the ending evidence is misread.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mlaudit_core.audit import audit
from mlaudit_core.formats import load_path
from mlaudit_core.formats.consolelog import load_logs
from mlaudit_core.report import Cause, Outcome

OWN = Path(__file__).parent / "data" / "realworld"


def _own(artifact_id: str):
    lab = next(x for x in json.loads((OWN / "labels.json").read_text()) if x["id"] == artifact_id)
    runs = load_path(OWN / lab["path"]).runs
    assert len(runs) == 1, [w for w, _ in runs]
    return runs[0][1]


def test_yolov5_results_csv_stopped_at_32_of_100_epochs_is_crashed_with_the_evidence():
    rep = audit(_own("csv11-yolov5-scratch-stopped-32of100"))
    v = rep.verdict
    assert (v.outcome.value, v.cause.value) == ("crashed", "inconclusive"), v.summary
    assert "epoch 32 of the 100 planned" in v.summary and v.rule == "V17"


def test_mid_run_trainer_state_checkpoint_is_not_a_crash():
    """HF checkpoint-N/trainer_state.json with global_step < max_steps is a snapshot saved mid-run
    (shared/realworld README): never crashed from the shortfall alone."""
    for artifact in ("ts06-trocr-huge-grad-norm-loss-healthy", "ts07-tinyllama-sft-2ep-healthy"):
        rep = audit(_own(artifact))
        assert rep.verdict.outcome.value != "crashed", (artifact, rep.verdict.summary)
        assert any(u.startswith("ending: checkpoint snapshot") for u in rep.unknowns), rep.unknowns


def test_failed_run_with_a_keyboardinterrupt_names_it():
    rep = audit(_own("wb08-resnet18-keyboardinterrupt-epoch1-of-30"))
    v = rep.verdict
    assert (v.outcome.value, v.cause.value) == ("crashed", "inconclusive"), v.summary
    assert "KeyboardInterrupt" in v.summary and "nothing in its metrics or console" not in v.summary


def _keras_epochs(n_done: int, planned: int) -> list[str]:
    out = []
    for e in range(1, n_done + 1):
        loss = 2.3 * 0.8**e
        out += [
            f"Epoch {e}/{planned}",
            f"469/469 [==============================] - 3s 6ms/step - loss: {loss:.4f} - accuracy: "
            f"{1 - loss / 3:.4f} - val_loss: {loss * 1.1:.4f} - val_accuracy: {1 - loss / 2.8:.4f}",
        ]
    return out


def test_keras_console_ctrl_c_at_epoch_4_of_20_is_crashed(tmp_path):
    log = tmp_path / "train.log"
    log.write_text(
        "\n".join(
            _keras_epochs(4, 20)
            + [
                "Epoch 5/20",
                "Traceback (most recent call last):",
                '  File "train.py", line 40, in <module>',
                "    model.fit(x, y, epochs=20)",
                "KeyboardInterrupt",
            ]
        )
        + "\n"
    )
    rep = audit(load_logs([log]))
    v = rep.verdict
    assert (v.outcome.value, v.cause.value) == ("crashed", "inconclusive"), v.summary
    assert "KeyboardInterrupt" in v.summary


def test_keras_console_all_epochs_is_not_a_stop(tmp_path):
    log = tmp_path / "train.log"
    log.write_text("\n".join(_keras_epochs(12, 12)) + "\n")
    rep = audit(load_logs([log]))
    assert rep.verdict.outcome.value != "crashed", rep.verdict.summary


def test_keras_early_stopping_line_is_not_a_stop(tmp_path):
    log = tmp_path / "train.log"
    log.write_text("\n".join(_keras_epochs(9, 50) + ["Epoch 9: early stopping"]) + "\n")
    rep = audit(load_logs([log]))
    assert rep.verdict.outcome.value != "crashed", rep.verdict.summary


def test_wandb_step_axis_is_not_the_iteration_count():
    """own wb11 (nanoGPT W&B folder): W&B's _step counts wandb.log calls (20 at the end) while
    max_iters 5000 counts iterations; the logged ``iter`` reached 5000, so the run finished."""
    rep = audit(_own("wb11-nanogpt-enwik-char-healthy"))
    assert (rep.verdict.outcome.value, rep.verdict.cause.value) == ("succeeded", "healthy"), (
        rep.verdict.summary
    )


def test_held_out_score_at_its_floor_is_underfit_unless_the_run_was_cut_short():
    """own csv17: YOLOv8n from scratch, 10 of 10 epochs, mAP50-95 0.0005 throughout -> underfit
    (decided by V20f, the finished run whose AP never left its floor, or by V13's floor reading;
    either way the summary names the floor and that the run reached its planned length).
    own csv19 (YOLO11 13 of 20 epochs) keeps its stop as the verdict."""
    rep = audit(_own("csv17-yolov8-balloons-scratch-10ep-no-learning"))
    assert rep.verdict.outcome.value == "underfit", rep.verdict.summary
    assert rep.verdict.rule in ("V13", "V20f"), rep.verdict.rule
    assert "planned length" in rep.verdict.summary or "never rose above" in rep.verdict.summary
    rep = audit(_own("csv19-yolo11-cucumber-stopped-13of20"))
    assert rep.verdict.outcome.value == "crashed", rep.verdict.summary


def test_zero_regularisation_loss_is_not_a_data_problem():
    """own tb14/tb15 (Lightning weather regressor): RegLoss = 0 means no regulariser, not empty labels."""
    rep = audit(_own("tb14-lightning-weather-regression-47ep-healthy"))
    assert (rep.verdict.outcome.value, rep.verdict.cause.value) == ("succeeded", "healthy"), (
        rep.verdict.summary
    )
    rep = audit(_own("tb15-lightning-weather-one-epoch-one-point"))
    assert rep.verdict.outcome.value == "unknown", rep.verdict.summary


def test_held_out_accuracy_collapsing_at_the_last_epoch_is_regressed_not_plateaued():
    """shared/realworld wb02 shape through the policy: test accuracy 0.839 best, 0.536 at the last epoch
    (28x the evaluation noise) is regressed; a plateau or success would hide the collapse."""
    from mlaudit_core.verdict.policy import POLICY

    rule = next(r for r in POLICY if r.id == "V13b")
    assert [c.expect for c in rule.cases] == [("regressed", "model_convergence"), None, None]


def test_stuck_held_out_accuracy_is_underfit():
    """own tb12: val_acc at exactly 41/62 (the majority share) at 59 of 100 epochs: the model
    predicts one class; it was called 'slow' from its per-epoch evaluation time before."""
    rep = audit(_own("tb12-lightning-efficientnet-binary-stuck-at-majority"))
    assert (rep.verdict.outcome.value, rep.verdict.cause.value) == (
        "underfit",
        "model_convergence",
    ), rep.verdict.summary
    rep = audit(_own("tb13-lightning-efficientnet-binary-learns-late"))
    assert rep.verdict.outcome.value == "succeeded", rep.verdict.summary


def test_an_errored_learning_detector_lowers_confidence_and_is_named(monkeypatch):
    """A learning check that errored is evidence not examined (NOTES 18:19/18:35): the healthy verdict
    of own csv15 (a finished Lightning run) keeps its outcome, names the check that did not run and
    loses confidence. The fault is injected into the real detector (its check raises)."""
    from mlaudit_core.detectors import load_builtin_and_plugins, registry

    run = _own("csv15-lightning-fttransformer-15ep-still-improving")
    before = audit(run).verdict
    assert (before.outcome.value, before.cause.value) == ("succeeded", "healthy"), before.summary
    load_builtin_and_plugins()

    def broken(self, run, p):
        raise RuntimeError("injected fault")
        yield  # pragma: no cover

    monkeypatch.setattr(registry()["GE001"], "check", broken)
    after = audit(_own("csv15-lightning-fttransformer-15ep-still-improving")).verdict
    assert after.outcome.value == "succeeded"
    assert "GE001 errored" in after.summary and "GE001 errored x0.7" in after.basis
    assert after.confidence < before.confidence


RUNS = OWN / "runs"


def _run(path: Path):
    runs = list(load_path(path).runs)
    assert runs, f"nothing read from {path}"
    return runs[-1][1]


def test_a_crash_followed_by_a_later_finished_launch_does_not_end_the_run():
    """own log13: a YOLOX train_log.txt holding 14 launches; 13 die (CUDA OOM, FileNotFoundError ...),
    the last runs 300/300 epochs and prints 'Training of experiment is done'. The OOM is reported but
    is not how the run ended."""
    run = _run(RUNS / "Duke-Rodriguez-Rudolph--yolox-chepai/train_log.txt")
    rep = audit(run)
    assert any(f.code == "RT001" for f in rep.findings)  # still reported
    assert rep.verdict.outcome is not Outcome.CRASHED, rep.verdict.summary
    assert "Earlier attempts in the same log crashed" in rep.verdict.summary


def test_a_crash_at_the_end_of_the_log_still_ends_the_run():
    """own wb12: nanoGPT W&B run, CUDA OOM at step 0 and nothing after it."""
    run = _run(RUNS / "jackokeefe11--nanoGPT/wandb/run-20240215_023758-f656tyfr")
    rep = audit(run)
    assert rep.verdict.outcome is Outcome.CRASHED, rep.verdict.summary
    assert "Earlier attempts" not in rep.verdict.summary


def test_a_run_that_ends_inside_its_warmup_without_a_planned_length_stopped_there(monkeypatch):
    """own mlf03: an MLflow run (mmsegmentation) with 6 points, iterations 10-60, the learning rate
    rising at every point (linear warmup), status FINISHED (MLflow's exit handler). A warm-up is the
    first phase of a schedule: the run stopped at its start, who stopped it not in the data."""
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    store = RUNS / "GhadeerElmkaiel--SegFormer/mlruns"
    runs = [
        r
        for where, r in load_path(store).runs
        if "3c7adce791d244d8bf5779f654f8e2e8" in where
        or r.identity.id == "3c7adce791d244d8bf5779f654f8e2e8"
    ]
    assert runs, "run 3c7adce7 not read from the store"
    rep = audit(runs[0])
    v = rep.verdict
    assert (v.outcome, v.cause) == (Outcome.CRASHED, Cause.INCONCLUSIVE), v.summary
    assert "warm-up" in v.summary and "before its main phase" in v.summary


def test_a_json_log_that_ends_inside_its_warmup_is_a_stopped_run():
    """own f16b2-14: the MAE reference code's log.txt (JSON lines), epoch records 0-5, train_lr
    rising at each to 2.5e-4, test accuracy still rising, no final record: stopped in its warm-up.
    Before: unknown/inconclusive (an abstention on a run whose stop the data shows)."""
    run = _own(
        "f16b2-14-mae-finetune-ecg-json-log-epochs-0-to-5-of-50-test-acc1-1.4-to-67.2-still-rising-log-ends"
    )
    v = audit(run).verdict
    assert (v.outcome, v.cause) == (Outcome.CRASHED, Cause.INCONCLUSIVE), v.summary
    assert "train_lr rose at every logged step" in v.summary


def test_a_lightning_step_series_without_its_epoch_twin_shows_no_epoch_ended():
    """own f16b2-03: a Lightning CSVLogger metrics.csv with 138 ``train_loss_step`` rows, all in
    epoch 0, and no ``train_loss_epoch`` (logged at each epoch's end) or validation row: the run
    stopped inside its first epoch. Before: unknown/inconclusive."""
    from mlaudit_core.verdict.policy import epoch_end_missing

    run = _own(
        "f16b2-03-lightning-csv-controls-mlp-surrogate-epoch-0-only-138-rows-to-step-6899-loss-0.61-to-"
        "0.10-flat-no-val-of-100-epochs"
    )
    assert epoch_end_missing(run) == "train_loss_step"
    v = audit(run).verdict
    assert (v.outcome, v.cause) == (Outcome.CRASHED, Cause.INCONCLUSIVE), v.summary
    assert "no train_loss_epoch twin" in v.summary


def test_task_metrics_still_zero_in_a_run_stopped_in_its_warmup_are_not_a_label_failure():
    """own csv34: YOLOv8n results.csv + args.yaml (epochs 50) with 3 epochs, all inside the 3-epoch
    warmup, precision/recall/mAP 0 at each: a detector's first epochs, cut short; not underfit/data."""
    rep = audit(_run(RUNS / "4rtur1t0--TrashYolo/runs/detect/train2/results.csv"))
    assert rep.verdict.outcome in (Outcome.CRASHED, Outcome.RUNNING, Outcome.UNKNOWN), (
        rep.verdict.summary
    )
    assert rep.verdict.cause.value != "data_config", rep.verdict.summary


def test_a_log_inside_its_first_epoch_with_no_end_is_not_succeeded():
    """own log16: 'ep: 0, batch: 20 ... 260, loss ...' of an LLM pretraining that simply stops, loss
    still falling fast; no planned length, no end line, no tracker status. Not 'succeeded'."""
    rep = audit(_run(RUNS / "Barber0--LLM-pretrain/train.log"))
    assert rep.verdict.outcome is not Outcome.SUCCEEDED, rep.verdict.summary


def test_an_exception_in_a_reader_thread_is_not_the_crash_when_the_console_goes_on():
    """f6b3-06: subprocess's _readerthread fails to decode a tool's output on a Windows console; the
    LoRA training then prints its banners and progress bars up to step 2 of 30 and the file ends."""
    rep = audit(_run(RUNS / "Jeff555max--Fine-tuning-LoRA/train_log.txt"))
    assert rep.verdict.cause is not Cause.CORRECTNESS_BUG, rep.verdict.summary
    assert "raised in thread Thread-2 (_readerthread), not the main thread" in rep.verdict.summary


def test_an_exception_in_the_main_thread_of_a_real_script_is_still_the_crash(tmp_path):
    """The same UnicodeDecodeError raised in the main thread by a real Python script, captured as
    users capture it (python train.py > log 2>&1), then nothing: the crash."""
    import subprocess
    import sys

    script = tmp_path / "train.py"
    script.write_text(
        "import threading\n"
        "def reader():\n"
        "    b'\\xad'.decode('utf-8')\n"
        "t = threading.Thread(target=reader); t.start(); t.join()\n"
        "for s in range(1, 6):\n"
        "    print(f'step {s} loss {2.0 / s:.3f}', flush=True)\n"
        "b'\\xad'.decode('utf-8')\n"
    )
    log = tmp_path / "train.log"
    with log.open("wb") as out:
        subprocess.run(
            [sys.executable, str(script)], stdout=out, stderr=subprocess.STDOUT, check=False
        )
    text = log.read_text()
    assert text.startswith("Exception in thread") and text.rstrip().endswith(
        "invalid start byte"
    ), text
    rep = audit(_run(log))
    assert rep.verdict.outcome is Outcome.CRASHED, rep.verdict.summary
    assert (
        "UnicodeDecodeError" in rep.verdict.summary
        and "not the main thread" not in rep.verdict.summary
    )


@pytest.mark.parametrize(
    "path",
    [
        "BiaoLiu2017--BERT-NER/train.log",  # f6b1-04: TF1 Estimator 'Running training', then prediction
        "Jadeeeey--ColossalAI-Dreambooth/log/train.log",  # f6b3-05: the banner, checkpoints, a final save
    ],
)
def test_a_training_banner_without_any_training_record_is_no_evidence_of_a_stop(path):
    rep = audit(_run(RUNS / path))
    assert rep.verdict.outcome is not Outcome.CRASHED, rep.verdict.summary
    assert "end-of-training line" not in rep.verdict.summary
