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
from mlaudit_core.logs import load_logs

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
        loss = 2.3 * 0.8 ** e
        out += [f"Epoch {e}/{planned}",
                f"469/469 [==============================] - 3s 6ms/step - loss: {loss:.4f} - accuracy: "
                f"{1 - loss / 3:.4f} - val_loss: {loss * 1.1:.4f} - val_accuracy: {1 - loss / 2.8:.4f}"]
    return out


def test_keras_console_ctrl_c_at_epoch_4_of_20_is_crashed(tmp_path):
    log = tmp_path / "train.log"
    log.write_text("\n".join(_keras_epochs(4, 20) + [
        "Epoch 5/20", "Traceback (most recent call last):", '  File "train.py", line 40, in <module>',
        "    model.fit(x, y, epochs=20)", "KeyboardInterrupt"]) + "\n")
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
