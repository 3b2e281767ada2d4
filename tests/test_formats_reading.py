"""Local format reading: bars that are not training, lr-change messages, epoch plans, deep JSON lines, --out paths.

(a) a progress bar that is not training (loading weights, ``datasets`` ``Map``, downloads,
``Generating train split``, tokenising) became the run's training bar: its rate a throughput
point, its position the step of every log dict after it. The bars here are drawn by the real
``tqdm`` with the descriptions and units those libraries pass it.
(b) ``Reducing learning rate 0.01 to 0.001`` was read as an lr point (the old rate) and took a
record-count step, shifting every epoch line after it.
(c) ``epochs: 400`` (a configuration print) was read as an epoch prefix: ``train/epoch`` 400 at
step 1 and ``train/epochs`` a metric.
(d) a JSON-lines file with one very deep line was 'not a recognised run file' as a whole.
(e) ``mlaudit DIR --out DIR/train.txt`` overwrote the log the run was read from (real console
script).
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from tqdm import tqdm

from mlaudit_core.formats import load_path
from mlaudit_core.formats.consolelog import load_logs, parse_lines

MLAUDIT = str(Path(sys.executable).with_name("mlaudit"))


def _bar(desc: str | None, total: int, unit: str = "it", unit_scale: bool = False) -> str:
    """What the real tqdm writes for one bar run to completion (carriage returns and all)."""
    buf = io.StringIO()
    with tqdm(
        total=total,
        desc=desc,
        unit=unit,
        unit_scale=unit_scale,
        file=buf,
        mininterval=0,
        ascii=False,
        dynamic_ncols=False,
        ncols=100,
    ) as bar:
        for _ in range(total):
            bar.update(1)
    return buf.getvalue()


def _series(run, key):
    s = run.metrics.series(key)
    return list(zip(s.steps.tolist(), s.values.tolist()))


def test_bars_that_are_not_training_give_no_step_and_no_throughput(tmp_path):
    text = "".join(
        [
            _bar("Loading checkpoint shards", 2),
            "\n",
            _bar("Map", 50, unit=" examples"),
            "\n",
            _bar("Generating train split", 40, unit=" examples"),
            "\n",
            _bar("Tokenizing", 8),
            "\n",
            _bar("Downloading", 1200, unit="B", unit_scale=True),
            "\n",
        ]
    )
    # then the Trainer's bar (no description) with its log dicts written through it (tqdm.write,
    # as transformers' ProgressCallback.on_log does), every 5 of 20 steps
    buf = io.StringIO()
    with tqdm(total=20, file=buf, mininterval=0, ncols=100) as bar:
        for step in range(1, 21):
            bar.update(1)
            if step % 5 == 0:
                bar.write(
                    str(
                        {
                            "loss": round(1.0 - step / 40, 4),
                            "learning_rate": 5e-05,
                            "epoch": step / 20,
                        }
                    ),
                    file=buf,
                )
    log = tmp_path / "console.log"
    log.write_text(text + buf.getvalue() + "\n")
    run = load_logs([log])
    loss = _series(run, "train/loss")
    assert [s for s, _ in loss] == [5, 10, 15, 20], loss
    thr = _series(run, "perf/throughput")
    assert thr and all(s <= 20 for s, _ in thr), thr  # only the training bar's points
    assert run.params.get("log.total_steps") == "20"
    assert "tqdm-not-training" in run.params["log.formats"]
    assert not any("download" in k or "map" in k.split("/")[-1] for k in run.metrics.keys), (
        run.metrics.keys
    )


def test_a_finished_bar_drawn_again_by_tqdm_write_is_not_a_new_pass():
    """tqdm.write (the Trainer's eval and summary dicts) redraws the finished bar unchanged."""
    for elapsed in (
        "00:00",
        "00:57",
        "00:58",
    ):  # the clock ticks between redraws; the rate does not
        done = f"100%|██████████| 30/30 [{elapsed}<00:00, 3.19s/it]"
        res = parse_lines(
            [
                " 50%|█████     | 15/30 [00:28<00:30,  2.01s/it]",
                "100%|██████████| 30/30 [00:57<00:00, 3.19s/it]",
                "{'eval_loss': '0.682', 'epoch': '3.75'}",
                done,
                "{'train_runtime': '58.69', 'train_loss': '0.6884', 'epoch': '3.75'}",
                done,
            ]
        )
        assert res.facts.get("total_steps") == 30.0 and "steps_per_epoch" not in res.facts, (
            elapsed,
            res.facts,
        )
        assert res.metrics.series("val/loss").steps.tolist() == [30]


@pytest.mark.parametrize(
    "message",
    [
        "Reducing learning rate 0.01 to 0.001",
        "Epoch 2: ReduceLROnPlateau reducing learning rate to 0.001.",
        "Epoch 00002: reducing learning rate of group 0 to 1.0000e-03.",
    ],
)
def test_lr_change_messages_are_events_not_points(message):
    res = parse_lines(
        [
            "epoch 1 train_loss 0.9 val_loss 1.0",
            message,
            "epoch 2 train_loss 0.8 val_loss 0.9",
            "epoch 3 train_loss 0.7 val_loss 0.85",
        ]
    )
    assert "train/lr" not in res.metrics.keys, res.metrics.keys
    loss = res.metrics.series("train/loss")
    assert loss.steps.tolist() == [1, 2, 3], (
        loss.steps.tolist()
    )  # no record count taken by the message
    assert res.facts["lr_changes"] == 1 and res.facts["lr_changed_to"] == pytest.approx(1e-3)


def test_epochs_config_print_is_the_plan_not_a_step():
    res = parse_lines(
        [
            "epochs: 400",
            "lr: 0.001",
            "batch_size: 32",
            "Epoch 1 loss=0.9",
            "Epoch 2 loss=0.8",
            "Epoch 3 loss=0.75",
        ]
    )
    assert "train/epochs" not in res.metrics.keys
    ep = res.metrics.series("train/epoch")
    assert ep.values.tolist() == [1.0, 2.0, 3.0] and ep.steps.tolist() == [1, 2, 3]
    assert res.facts["epochs"] == 400 and res.params["lr"] == "0.001"


def test_epochs_printed_after_training_started_is_still_the_plan():
    res = parse_lines(["step 1 loss 0.9", "num_epochs: 3", "step 2 loss 0.8"])
    assert "train/num_epochs" not in res.metrics.keys and res.facts["epochs"] == 3


def test_epochs_with_a_total_is_still_a_position():
    res = parse_lines(["Epochs 3/10 loss: 0.5"])
    assert res.metrics.series("train/epoch").values.tolist() == [3.0] and res.facts["epochs"] == 10


def _jsonl(path: Path, deep_at: int, depth: int = 200_000) -> None:
    with open(path, "w") as fh:
        for i in range(10):
            if i == deep_at:
                fh.write("[" * depth + "\n")
            fh.write(json.dumps({"iteration": i, "total_loss": 1.0 / (i + 1), "lr": 0.01}) + "\n")


@pytest.mark.parametrize("deep_at,depth", [(0, 200_000), (4, 200_000), (1, 20_000)])
def test_one_very_deep_jsonl_line_is_skipped_and_named(tmp_path, deep_at, depth):
    f = tmp_path / "metrics.json"
    _jsonl(f, deep_at, depth)
    loaded = load_path(f)
    assert loaded.reader == "jsonlines"
    ((_, run),) = loaded.runs
    assert len(run.metrics.series("total_loss")) == 10
    assert any(f"line {deep_at + 1})" in w and "nested too deeply" in w for w in run.warnings), (
        run.warnings
    )


def test_a_deep_json_dict_in_a_console_log_is_not_a_crash():
    res = parse_lines(
        ["step 1 loss 0.5", '{"a": ' + "[" * 20_000 + "]" * 20_000 + "}", "step 2 loss 0.4"]
    )
    assert res.metrics.series("train/loss").steps.tolist() == [1, 2]


LOG = "".join(f"step {s}: loss {2.0 - 0.1 * s:.2f}\n" for s in range(1, 11))


@pytest.mark.parametrize(
    "name,content",
    [
        ("train.txt", LOG),
        (
            "metrics.json",
            "".join(
                json.dumps({"iteration": i, "total_loss": 1.0 / (i + 1)}) + "\n" for i in range(10)
            ),
        ),
    ],
)
def test_out_onto_a_file_of_the_run_folder_is_refused(tmp_path, name, content):
    run = tmp_path / "run"
    run.mkdir()
    (run / name).write_text(content)
    proc = subprocess.run(
        [MLAUDIT, "run", "--no-write", "--out", f"run/{name}"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 2, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip() and not ln.startswith("reader:")]
    assert len(lines) == 1 and name in lines[0] and "input file" in lines[0], proc.stderr
    assert (run / name).read_text() == content


def test_out_inside_the_run_folder_that_is_our_report_is_rewritten(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "train.txt").write_text(LOG)
    for _ in range(2):  # the second time the report exists inside the run folder: ours, so replaced
        proc = subprocess.run(
            [MLAUDIT, "run", "--no-write", "--out", "run/report.md"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert proc.returncode == 0, proc.stderr
    assert (run / "report.md").read_text().startswith("# mlaudit") and (
        run / "train.txt"
    ).read_text() == LOG
