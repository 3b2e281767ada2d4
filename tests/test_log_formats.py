"""Every console-log format of the catalog, on fixture logs in tests/data/logs (one parametrised test each).

tests/data/logs/expected.yaml says, per fixture, which formats must be recognised and
which series (points, first and last (step, value)), params and recovered facts the log
must give. A catalog entry without a fixture fails ``test_every_format_has_a_fixture``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from mlaudit_core import ConsoleLine, MetricTable, Role, RunData, RunIdentity
from mlaudit_core.formats.consolelog import (
    CATALOG,
    enrich_from_console,
    load_logs,
    parse_lines,
    strip_annotations,
)
from mlaudit_core.formats.consolelog.context import (
    chance_level,
    parse_context_lines,
    precision_setting,
    read_context_file,
    steps_per_epoch,
)
from mlaudit_core.formats.consolelog.names import canonical

LOGS = Path(__file__).parent / "data" / "logs"
EXPECTED = yaml.safe_load((LOGS / "expected.yaml").read_text())


def formats_seen(run: RunData) -> set[str]:
    text = run.params.get("log.formats", "")
    return {part.split(" (")[0] for part in text.split(", ") if part}


@pytest.mark.parametrize("fixture", sorted(EXPECTED), ids=str)
def test_fixture_log(fixture):
    exp = EXPECTED[fixture]
    run = load_logs([LOGS / fixture])
    assert set(exp["formats"]) <= formats_seen(run), run.params.get("log.formats")
    for key, (n, first, last) in exp["series"].items():
        assert key in run.metrics, f"{key} not parsed; got {run.metrics.keys}"
        s = run.metrics.series(key)
        assert len(s) == n, (key, s.steps.tolist(), s.values.tolist())
        assert (int(s.steps[0]), float(s.values[0])) == (
            first[0],
            pytest.approx(first[1], rel=1e-6),
        ), key
        assert (int(s.steps[-1]), float(s.values[-1])) == (
            last[0],
            pytest.approx(last[1], rel=1e-6),
        ), key
    for k, v in (exp.get("params") or {}).items():
        assert run.params.get(k) == v, (k, run.params)
    for k, v in (exp.get("facts") or {}).items():
        assert run.params.get(f"log.{k}") == v, (k, run.params)
    for k in exp.get("absent_params", []):
        assert k not in run.params
    for k in exp.get("absent_series", []):  # config prints (``epochs: 12``) are not metrics
        assert k not in run.metrics.keys, (k, run.metrics.keys)
    assert not run.warnings


def test_every_format_has_a_fixture():
    covered = {f for e in EXPECTED.values() for f in e["formats"]}
    missing = sorted(({f.id for f in CATALOG} | {"generic"}) - covered)
    assert not missing, f"formats without a fixture log in tests/data/logs/expected.yaml: {missing}"


@pytest.mark.parametrize("fmt", CATALOG, ids=lambda f: f.id)
def test_catalog_example_is_read_by_its_own_entry(fmt):
    lines = [fmt.example]
    if fmt.block and fmt.kind != "header":
        opener = next(f for f in CATALOG if f.block == fmt.block and f.kind == "header")
        lines = [opener.example, fmt.example]
    if fmt.kind in ("record", "summary") and fmt.id != "keras":
        lines = ["step=1 loss=1.0"] + lines  # after training started: values are metrics
    res = parse_lines(lines)
    assert res.formats[fmt.id] >= 1, (fmt.id, dict(res.formats))
    if fmt.kind in ("record", "summary", "progress"):
        assert len(res.metrics) > 0


def test_parsed_names_play_their_roles():
    run = load_logs([LOGS / "megatron.log", LOGS / "generic.log"])
    want = {
        Role.TRAIN_LOSS: "train/loss",
        Role.VAL_LOSS: "val/loss",
        Role.LEARNING_RATE: "train/lr",
        Role.GRAD_NORM: "train/grad_norm",
        Role.LOSS_SCALE: "train/loss_scale",
        Role.STEP_TIME: "perf/step_time",
        Role.DATA_TIME: "perf/data_time",
        Role.THROUGHPUT: "perf/throughput",
    }
    assert {r: run.key_for(r) for r in want} == want


@pytest.mark.parametrize(
    "raw,prefix,name,unit",
    [
        ("lm loss", "train/", "train/loss", None),
        ("val_acc", "train/", "val/accuracy", None),
        ("eval_loss", "train/", "val/loss", None),
        ("Prec@1", "train/", "train/top1", None),
        ("gnorm", "train/", "train/grad_norm", None),
        ("elapsed time per iteration (ms)", "train/", "perf/step_time", "ms"),
        ("wps", "val/", "val/throughput", None),
        ("train_step_timing in s", "train/", "perf/step_time", None),
        ("Validation Accuracy", "train/", "val/accuracy", None),
    ],
)
def test_canonical_names(raw, prefix, name, unit):
    assert canonical(raw, prefix) == (name, unit)


def test_annotations_and_comments_are_not_log_content():
    assert strip_annotations("loss 0.5 [reporter: the loss went to NaN right here]") == "loss 0.5 "
    assert strip_annotations("[...] 3 more lines") == " 3 more lines"
    for keep in (
        "[INFO] Learning rate: 3e-05",
        " 10%|█ | 10/100 [00:01<00:09, 9.5it/s]",
        "Epoch: [0][10/5005]",
        "[Rank 0] step=10, skipped=0, lr=[0.0001]",
        "ids = ['a b c', 'd']",
        "[W reducer.cpp:1300] Warning: find_unused_parameters=True",
    ):
        assert strip_annotations(keep) == keep
    res = parse_lines(
        [
            "# loss=9.9 reporter note",
            "step=1 loss=1.0 [the reporter says this is normal]",
            "[loss spiked here, as described in the thread]",
        ]
    )
    s = res.metrics.series("train/loss")
    assert s.values.tolist() == [1.0]
    assert [c.text for c in res.console] == ["step=1 loss=1.0 "]


def test_timestamps_become_wall_times_and_run_times():
    run = load_logs([LOGS / "fairseq.log"])
    s = run.metrics.series("train/loss")
    assert np.isfinite(s.wall_times).all()
    assert s.wall_times[1] - s.wall_times[0] == pytest.approx(40.0)
    assert run.duration_s == pytest.approx(122.0)


def test_files_are_read_in_order_as_one_log(tmp_path):
    a, b = tmp_path / "part1.log", tmp_path / "part2.log"
    a.write_text("step=1 loss=2.0\nstep=2 loss=1.5\n")
    b.write_text(
        'step=3 loss=1.2\nTraceback (most recent call last):\n  File "t.py", line 3, in train\n'
        "ValueError: bad\n"
    )
    run = load_logs([a, b], name="two-parts")
    assert run.identity.tracker == "logs" and run.identity.name == "two-parts"
    assert run.metrics.series("train/loss").steps.tolist() == [1, 2, 3]
    assert {c.source for c in run.console} == {"part1.log", "part2.log"}


def test_enrich_from_console_adds_only_what_the_store_lacks():
    console = (LOGS / "megatron.log").read_text().splitlines()
    table = MetricTable(["lm_loss"] * 3, [10, 20, 30], [10.6, 10.5, 9.8])
    run = RunData(
        RunIdentity("test", "r1"),
        metrics=table,
        console=[ConsoleLine("output.log", i, t) for i, t in enumerate(console, 1)],
    )
    enrich_from_console(run)
    assert run.key_for(Role.TRAIN_LOSS) == "lm_loss"  # the tracker's own loss wins
    assert "train/loss" not in run.metrics
    assert run.key_for(Role.GRAD_NORM) == "train/grad_norm"
    assert run.key_for(Role.LOSS_SCALE) == "train/loss_scale"
    assert run.metrics.series("perf/step_time").values.tolist() == pytest.approx(
        [1.5203, 1.4801, 1.4756]
    )
    assert run.derived["grad_norm"].startswith("parsed from console output (output.log)")
    assert run.derived["loss_scale"].startswith("parsed from console output")
    assert run.params["log.total_steps"] == "500"
    assert run.metrics.series("lm_loss").values.tolist() == [10.6, 10.5, 9.8]


def test_enrich_from_console_without_console_is_a_no_op():
    run = RunData(RunIdentity("test", "r2"))
    assert enrich_from_console(run) is run and len(run.metrics) == 0


def test_context_lines_become_params():
    params = parse_context_lines(
        [
            "# As described by the reporter",
            'steps_per_epoch: 542   (reporter: "one epoch has 542 steps")',
            'precision = "16-true"',
            "num_train_epochs=1, learning_rate=3e-05, warmup_steps=136 (ratio 0.1), batch 16",
            "dataset: wisesight (21628 train), 1352 steps per epoch [a note from the thread about it]",
        ]
    )
    assert params["precision"] == "16-true"
    assert params["learning_rate"] == "3e-05" and params["num_train_epochs"] == "1"
    assert steps_per_epoch(params) == (542, "steps_per_epoch")
    assert steps_per_epoch({"dataset": params["dataset"]}) == (1352, "dataset")
    assert steps_per_epoch({"Number of batches per epoch (validation set)": "2404"}) is None
    assert precision_setting(params) == ("precision", "16-true", True)
    assert chance_level({"task": "binary cover/stego classification (chance = 0.5)"}) == (
        0.5,
        "task",
    )
    assert chance_level({"model.num_labels": "4"}) == (0.25, "model.num_labels")


def test_structured_config_files(tmp_path):
    (tmp_path / "c.json").write_text(
        json.dumps({"trainer": {"precision": "bf16-mixed", "max_epochs": 3}})
    )
    (tmp_path / "c.yaml").write_text("optim:\n  lr: 0.001\n  betas: [0.9, 0.999]\n")
    assert read_context_file(tmp_path / "c.json") == {
        "trainer.precision": "bf16-mixed",
        "trainer.max_epochs": "3",
    }
    assert read_context_file(tmp_path / "c.yaml") == {
        "optim.lr": "0.001",
        "optim.betas": "[0.9, 0.999]",
    }


def test_console_cap_keeps_the_lines_that_matter(tmp_path):
    p = tmp_path / "long.log"
    p.write_text("\n".join(f"step={i} loss={1 / (i + 1):.4f}" for i in range(50)) + "\nKilled\n")
    run = load_logs([p], max_console_lines=10, tail_lines=1, context_lines=0)
    assert len(run.metrics.series("train/loss")) == 50  # metrics from every line
    assert len(run.console) == 11 and run.console[-1].text == "Killed"
    assert "40 of 51 console lines were not kept" in run.notes[-1]
    assert not run.warnings


def test_long_log_keeps_failures_and_line_numbers_within_the_bounds(tmp_path):
    """A log far longer than every retention bound: the console keeps the head, the tail and
    the failures in between with their own line numbers; the loss is thinned to the point
    budget but keeps its transient NaN, its restart and its last point (not timed)."""
    from mlaudit_core.audit import audit
    from mlaudit_core.signatures import scan_run

    n = 60_000
    lines = [f"step={i} loss={2.0 / (1 + i / 1000):.5f} lr=1e-4" for i in range(n)]
    lines[17_777] = "step=17777 loss=nan lr=1e-4"
    lines[30_000] = "Traceback (most recent call last):"  # a caught, logged exception mid-run
    lines[30_001] = '  File "train.py", line 88, in save_checkpoint'
    lines[30_002] = "OSError: [Errno 28] No space left on device"
    for j in range(40_000, 40_010):
        lines[j] = f"step={j - 40_000} loss=2.0 lr=1e-4"  # a restart: the step counter starts over
    lines += [
        "Traceback (most recent call last):",
        '  File "train.py", line 80, in training_step',
        "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 39.59 GiB total capacity; "
        "36.10 GiB already allocated; 1.21 GiB free; 37.20 GiB reserved in total by PyTorch)",
    ]
    p = tmp_path / "long.log"
    p.write_text("\n".join(lines) + "\n")
    run = load_logs(
        [p], max_console_lines=100, tail_lines=50, middle_lines=40, context_lines=2, max_points=4000
    )
    assert 150 < len(run.console) <= 100 + 50 + 40
    linenos = [c.lineno for c in run.console]
    assert linenos == sorted(linenos) and linenos[:100] == list(range(1, 101))
    assert linenos[-50:] == list(range(n + 3 - 49, n + 4))
    by_line = {c.lineno: c.text for c in run.console}
    assert by_line[30_003].startswith("OSError") and by_line[30_002].startswith(
        "  File"
    )  # 1-based numbers
    assert by_line[n + 3].startswith("RuntimeError: CUDA out of memory")
    _, tbs = scan_run(run)
    assert [(tb.exception_type, tb.line.lineno) for tb in tbs] == [
        ("OSError", 30_003),
        ("RuntimeError", n + 3),
    ]
    report = audit(run)
    oom = [f for f in report.findings if f.code == "RT001"]
    assert oom and any(getattr(e, "line", None) == n + 3 for e in oom[0].evidence), oom
    loss = run.metrics.series("train/loss")
    assert len(run.metrics) <= 4000 and len(loss) < n // 10
    assert int(loss.steps[0]) == 0 and int(loss.steps[-1]) == n - 1  # first and last point
    nan_at = loss.steps[np.isnan(loss.values)]
    assert list(nan_at) == [17_777]  # the transient NaN
    resets = np.flatnonzero(np.diff(loss.steps) < 0)
    assert len(resets) == 1 and int(loss.steps[resets[0] + 1]) == 0  # the restart
    assert any("were thinned" in x and "train/loss" in x for x in run.notes), run.notes
    assert any("console lines were not kept" in x for x in run.notes)


def test_point_store_thins_the_densest_series_only():
    from mlaudit_core.formats.consolelog.retention import PointStore

    store = PointStore(budget=1000)
    store.new_series()
    store.new_series()
    for i in range(20_000):
        store.add(0, i, 1.0 / (i + 1), float("nan"))
        if i % 100 == 0:
            store.add(1, i, 0.5, float("nan"))
    assert store.kept <= 1000 and store.seen == 20_200
    table = store.table(["train/loss", "val/loss"])
    assert len(table.series("val/loss")) == 200  # the sparse series stays whole
    s = table.series("train/loss")
    stride = int(s.steps[1] - s.steps[0])
    assert stride > 1 and np.all(np.diff(s.steps[:-1]) == stride)  # a systematic sample
    assert int(s.steps[-1]) == 19_999 and np.isnan(table.series("train/loss").wall_times).all()


def test_free_text_around_generic_keys():
    res = parse_lines(
        [
            "step=1 loss=2.0",
            "Saving model at step=500 with loss=0.3",
            "Step 600: Validation Accuracy: 0.91, final accuracy: 0.9",
            "step=700 loss=nan",
            "RuntimeError: CUDA out of memory. step=701 loss=0.2",
        ]
    )
    got = {
        k: list(zip(res.metrics.series(k).steps.tolist(), res.metrics.series(k).values.tolist()))
        for k in res.metrics.keys
    }
    assert got["train/loss"][:2] == [(1, 2.0), (500, 0.3)]
    assert (
        np.isnan(got["train/loss"][2][1]) and len(got["train/loss"]) == 3
    )  # the OOM line is not metrics
    assert got["val/accuracy"] == [(600, 0.91)] and got["train/accuracy"] == [(600, 0.9)]


def test_enormous_console_line_keeps_both_ends(tmp_path):
    """A line of carriage-return progress updates with the exception printed after them on the
    same line: the kept console text is bounded and still ends with the exception."""
    from mlaudit_core.formats.consolelog.retention import LINE_CHARS

    bar = "\r".join(
        f"Epoch 0:  {j % 100}%|#   | {j}/90000 [00:01<00:02, 4.2it/s, loss=2.3]"
        for j in range(3000)
    )
    oom = "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 39.59 GiB total capacity)"
    p = tmp_path / "cr.log"
    p.write_text("step=1 loss=2.5\n" + bar + oom + "\nstep=2 loss=2.4\n")
    run = load_logs([p])
    kept = {c.lineno: c.text for c in run.console}
    assert len(bar) > 10 * LINE_CHARS and len(kept[2]) < LINE_CHARS + 100
    assert kept[2].startswith("Epoch 0:") and kept[2].endswith(oom) and "characters ...]" in kept[2]
    from mlaudit_core.audit import audit

    report = audit(run)
    assert any(
        f.code == "RT001" and any(getattr(e, "line", None) == 2 for e in f.evidence)
        for f in report.findings
    )


def test_point_store_bounds_points_kept_outside_the_sample():
    """A series whose step alternates between two counters on every line (two formats writing
    one key) cannot force every point past the budget."""
    from mlaudit_core.formats.consolelog.retention import FORCED_MAX, PointStore

    store = PointStore(budget=1000)
    store.new_series()
    for i in range(100_000):
        store.add(0, i if i % 2 else i // 1000, float("nan") if i % 3 == 0 else 1.0, float("nan"))
    assert store.kept <= 2 * (FORCED_MAX + 1000) and store.seen == 100_000
    s = store.table(["train/loss"]).series("train/loss")
    assert int(s.steps[-1]) == 99_999 and int(s.steps[0]) == 0


def test_logs_throughput_benchmark_hf_mix_at_toy_size():
    """benchmarks/logs_throughput.py --mix hf at toy size (the figures are not asserted, the run is)."""
    import subprocess
    import sys

    bench = Path(__file__).parents[1] / "benchmarks" / "logs_throughput.py"
    res = subprocess.run(
        [sys.executable, str(bench), "--lines", "2000", "--mix", "hf", "--no-cli"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    assert (
        "is the final OOM: True" in res.stdout and "parse peak within 1 GiB: True" in res.stdout
    ), res.stdout
