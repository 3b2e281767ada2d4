"""Prose lines in ordinary console logs do not become metric points (console reader).

The console reader reads space-separated ``name value`` lines (``print('test accuracy', acc)``,
ca02f61) for vocabulary names. A warning or a sentence that happens to hold such a name followed
by a number (``the loss 10 times higher``, ``accuracy 0 classes were never predicted``) is not a
metric: before the fix these lines added a 1e9 loss spike and an accuracy of 99 to the run.
"""

from __future__ import annotations

from mlaudit_core.formats.consolelog import load_logs

TRAINING = [
    f"Epoch {e} loss {2.3 - 0.15 * e:.2f} accuracy {0.1 + 0.07 * e:.2f}" for e in range(1, 11)
]
PROSE = [
    "Note: the loss 10 times higher than expected may indicate a bug",
    "warning: accuracy 0 classes were never predicted",
    "Top 5 accuracy 99 percent of samples were seen",
    "The loss 1e9 is clipped",
]


def _values(run, key):
    s = run.metrics.series(key)
    return [float(v) for v in s.values]


def test_prose_lines_between_epochs_add_no_points(tmp_path):
    lines = []
    for i, line in enumerate(TRAINING):
        lines.append(line)
        if i < len(PROSE):
            lines.append(PROSE[i])
    log = tmp_path / "train.log"
    log.write_text("\n".join(lines) + "\n")
    run = load_logs([log])
    loss = _values(run, "train/loss")
    acc = _values(run, "train/accuracy")
    assert loss == [round(2.3 - 0.15 * e, 2) for e in range(1, 11)]
    assert acc == [round(0.1 + 0.07 * e, 2) for e in range(1, 11)]


def test_spaced_values_with_a_unit_word_are_still_read(tmp_path):
    """nanoGPT's ``iter 10: loss 4.6810 BPC, time 52.57ms`` keeps its loss (a unit, not prose)."""
    log = tmp_path / "train.log"
    log.write_text(
        "".join(
            f"iter {i * 10}: loss {5 - 0.1 * i:.4f} BPC, time 52.57ms, mfu 7.09%\n"
            for i in range(8)
        )
    )
    run = load_logs([log])
    assert _values(run, "train/loss") == [round(5 - 0.1 * i, 4) for i in range(8)]


def test_exception_message_lines_add_no_series(tmp_path):
    """The message line of a Python exception is prose: PyTorch's ``RuntimeError: permute(sparse_coo):
    number of dimensions ... i.e. input.dim() = 6 is not equal to len(dims) = 5`` (the STTN crash,
    tests/data/realworld f5b2-12) once made ``train/of_dimensions_i_e_input_dim`` and
    ``train/not_equal_to_len_dims`` series. A figure right after the colon is still read."""
    lines = list(TRAINING) + [
        "Traceback (most recent call last):",
        '  File "train.py", line 12, in <module>',
        "    x = inputs.permute(2, 1, 0, 3, 4)",
        "RuntimeError: permute(sparse_coo): number of dimensions in the tensor input does not match the length "
        "of the desired ordering of dimensions i.e. input.dim() = 6 is not equal to len(dims) = 5",
        "torch.multiprocessing.spawn.ProcessRaisedException: step = 3 loss = 7",
    ]
    log = tmp_path / "train.log"
    log.write_text("\n".join(lines) + "\n")
    run = load_logs([log])
    clean = tmp_path / "clean.log"
    clean.write_text("\n".join(TRAINING) + "\n")
    assert sorted(run.metrics.keys) == sorted(load_logs([clean]).metrics.keys), run.metrics.keys
    assert "train/loss" in run.metrics.keys and not any("dim" in k for k in run.metrics.keys)
    assert _values(run, "train/loss") == [round(2.3 - 0.15 * e, 2) for e in range(1, 11)]


def test_figures_written_before_their_names_are_read(tmp_path):
    """``Epoch k @ 10:27 PM : 0.9816 C.E. Loss, 94.28% Accuracy`` (a DDP CNN's console, tests/data/realworld
    f5b1-19): after the colon each comma-separated item is a figure then its name; read when the name is
    in the metric vocabulary, with the epoch as the step."""
    log = tmp_path / "train.out"
    log.write_text(
        "".join(
            f"Epoch {e} @ 10:{27 + e} PM : {0.98 - 0.01 * e:.4f} C.E. Loss, {94 + e:.2f}% Accuracy\n"
            for e in range(6)
        )
        + "Save Checkpoint 3, 12 samples\n"
    )
    run = load_logs([log])
    assert _values(run, "train/loss") == [round(0.98 - 0.01 * e, 4) for e in range(6)]
    assert _values(run, "train/accuracy") == [round((94 + e) / 100, 4) for e in range(6)]
