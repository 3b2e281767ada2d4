"""How a run ended, on real shapes (issue 14 item 4, verdict side).

Inputs are real artifacts of tests/data/realworld (copied from public repositories, labelled from
their data; see its README) read with the real readers (``mlaudit_core.formats.load_path``), and
console logs in the exact shapes Keras and HF print. Each test states the verdict a careful analyst
gives and fails if the ending evidence is misread.
"""

from __future__ import annotations

import json
from pathlib import Path

from mlaudit_core.audit import audit
from mlaudit_core.formats import load_path
from mlaudit_core.formats.consolelog import load_logs

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
    """own csv17: YOLOv8n from scratch, 10 of 10 epochs, mAP50-95 0.0005 throughout -> underfit.
    own csv19 (YOLO11 13 of 20 epochs) keeps its stop as the verdict."""
    rep = audit(_own("csv17-yolov8-balloons-scratch-10ep-no-learning"))
    assert (rep.verdict.outcome.value, rep.verdict.rule) == ("underfit", "V13"), rep.verdict.summary
    assert "never rose above" in rep.verdict.summary
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
