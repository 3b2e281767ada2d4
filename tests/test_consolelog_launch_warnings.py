"""The console reader's launch check (formats/consolelog/parser.py ``LogParser._launch_check``)
skips Python warnings: a warning and its source line come back whenever the code that warns runs
again, so they are not the start-up lines that mark a new launch.

Real input: tests/data/newuser10/hf_killed_resumed_tee.log (README there), a Hugging Face Trainer
run on CPU killed and resumed into one ``tee -a`` file, whose first message lines are torch's
DataLoader ``pin_memory`` warning, printed again at each of its 4 evaluations. Before, every
evaluation was read as a new launch: the run was cut to its last 4 loss points, all at step 5 (the
evaluation bar's position), and 3 of them "repeated the previous step" (LI002).
"""

from __future__ import annotations

from pathlib import Path

from mlaudit_core.formats.consolelog import load_logs

LOG = Path(__file__).parent / "data" / "newuser10" / "hf_killed_resumed_tee.log"


def test_launch_check_reads_a_killed_and_resumed_trainer_as_one_step_axis():
    run = load_logs([LOG])
    loss = run.metrics.series("train/loss")
    assert loss.steps.tolist() == list(range(5, 85, 5))  # 6 points before the kill, 10 after
    assert loss.values[0] == 0.6961 and loss.values[-1] == 0.6315
    assert run.metrics.series("val/loss").steps.tolist() == [20, 40, 60, 80]
    assert "log.launches" not in run.params  # the resume goes on counting: one run


def test_launch_check_still_finds_a_launch_behind_a_warning(tmp_path):
    """Start-up lines after a warning still mark a launch: two launches of one script appended,
    each printing a warning (and its source line) before its configuration lines."""
    one = (
        "/venv/lib/python3.11/site-packages/torch/utils/data/dataloader.py:759: UserWarning: "
        "'pin_memory' argument is set as true but no accelerator is found\n"
        "  super().__init__(loader)\n"
        "model: resnet18, optimizer: sgd\n"
        "dataset: cifar10, batch size 64\n"
    )
    first = "".join(f"step {i} loss {v}\n" for i, v in enumerate((2.3, 2.1, 1.9, 1.7), 1))
    second = "".join(f"step {i} loss {v}\n" for i, v in enumerate((2.3, 2.0, 1.6, 1.2, 0.9), 1))
    f = tmp_path / "train.log"
    f.write_text(one + first + one + second)
    run = load_logs([f])
    assert run.params.get("log.launches") == "2"
    assert run.metrics.series("train/loss").values.tolist() == [2.3, 2.0, 1.6, 1.2, 0.9]
