"""Local formats (mlaudit_core.formats) and ``mlaudit PATH``: each reader on output written by the
real library (tests/data/formats/produce.py runs Hugging Face Trainer, Lightning CSVLogger,
Keras CSVLogger and torch.utils.tensorboard once per session) or copied from public
repositories (tests/data/formats/SOURCES.md), bad input for every reader, and every labelled
real artifact of tests/data/realworld (and shared/realworld beside the checkout when present)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from mlaudit.cli import _route_path, app
from mlaudit_core.errors import InputError
from mlaudit_core.formats import load_path, plan, readers
from mlaudit_core.roles import Role

DATA = Path(__file__).parent / "data" / "formats"
REPO = Path(__file__).parent.parent


def cli(*args: str):
    return CliRunner().invoke(app, _route_path(list(args)))


@pytest.fixture(scope="session")
def produced(tmp_path_factory) -> Path:
    """One run per format, written by the real libraries (a subprocess: torch imported once)."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    pytest.importorskip("lightning")
    import importlib.util

    assert importlib.util.find_spec("keras"), (
        "keras (dev extra) is needed to produce the Keras fixture"
    )
    out = tmp_path_factory.mktemp("produced")
    env = dict(os.environ, KERAS_BACKEND="torch", HF_HUB_OFFLINE="1")
    res = subprocess.run(
        [sys.executable, str(DATA / "produce.py"), str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    return out


# --- real library output ---------------------------------------------------------------------


def test_torch_tensorboard_docs_naming_is_one_run(produced):
    """PyTorch's documented tags (Loss/train, Loss/test, Accuracy/...) are one run, not four."""
    loaded = load_path(produced / "torch_tb")
    assert loaded.reader == "tensorboard" and len(loaded) == 1
    _, run = loaded.runs[0]
    assert {"Loss/train", "Loss/test", "Accuracy/train", "Accuracy/test"} <= set(run.metrics.keys)
    assert len(run.metrics.series("Loss/train")) == 60
    res = cli(str(produced / "torch_tb"), "--no-write", "--format", "json")
    assert res.exit_code == 0, res.output
    assert "separate runs" not in res.output
    res = cli("tensorboard", str(produced / "torch_tb"), "--no-write")
    assert res.exit_code == 0, res.output


def test_keras_csvlogger_append_keeps_last_run(produced):
    loaded = load_path(produced / "keras" / "training.log")
    assert loaded.reader == "keras_csv"
    _, run = loaded.runs[0]
    loss = run.metrics.series("loss")
    assert list(loss.steps) == [0, 1, 2, 3, 4, 5]  # the second fit (6 epochs), not the first (4)
    assert run.params["log.step_axis"] == "epoch"
    assert any("holds 2 runs appended" in n and "epochs 0-3" in n for n in run.notes)
    assert any("step axis is the epoch" in n for n in run.notes)
    assert run.key_for(Role.VAL_LOSS) == "val_loss"


def test_lightning_csvlogger_folder_of_versions(produced):
    loaded = load_path(produced / "lightning_logs")
    assert [Path(p).name for p, _ in loaded] == ["version_0", "version_1"]
    for _, run in loaded:
        assert "train_loss_step" in run.metrics.keys and "val_loss" in run.metrics.keys
        assert run.params["lr"] == "0.1"  # from hparams.yaml
        assert run.params["log.step_axis"] == "step"
    res = cli(str(produced / "lightning_logs"), "--no-write")
    assert res.exit_code == 0, res.output
    assert "2 runs found" in res.output and "Outcomes" in res.output


def _last_checkpoint(hf: Path) -> Path:
    return max(hf.glob("checkpoint-*"), key=lambda c: int(c.name.split("-")[1]))


def test_hf_trainer_state_and_checkpoint_folder(produced):
    ckpt = _last_checkpoint(produced / "hf")
    for target in (ckpt, ckpt / "trainer_state.json"):
        loaded = load_path(target)
        assert loaded.reader == "trainer_state"
        _, run = loaded.runs[0]
        assert run.params["max_steps"] == "40" and run.params["logging_steps"] == "2"
        assert len(run.metrics.series("loss")) == 20
        assert len(run.metrics.series("eval_loss")) == 4
        assert "grad_norm" in run.metrics.keys and "learning_rate" in run.metrics.keys
        assert (
            "train_loss" not in run.metrics.keys
        )  # a checkpoint is saved before the closing summary


def test_hf_output_dir_with_several_checkpoints_is_one_run(produced):
    """A real Trainer output_dir (save_steps=20 of max_steps=40: checkpoint-20 and checkpoint-40,
    each trainer_state.json the cumulative log_history to its step) is ONE run: the latest
    snapshot is audited, the earlier one named, never audited as a run of its own."""
    hf = produced / "hf"
    assert sorted(c.name for c in hf.glob("checkpoint-*")) == ["checkpoint-20", "checkpoint-40"]
    loaded = load_path(hf)
    states = [(p, run) for p, run in loaded.runs if "checkpoint-" in str(p)]
    assert len(states) == 1, [p for p, _ in loaded.runs]
    path, run = states[0]
    assert "checkpoint-40" in str(path) and len(run.metrics.series("loss")) == 20
    res = cli(str(hf), "--list")
    assert res.exit_code == 0, res.output
    assert "checkpoint-20" in res.output and "earlier" in res.output, res.output


def test_hf_console_quoted_values_transformers_5(produced):
    """transformers 5 prints {'loss': '0.7062', ...}: the values are read as numbers."""
    text = (produced / "hf" / "console.log").read_text()
    assert "'loss': '" in text  # the real Trainer's output has the quoted form
    loaded = load_path(produced / "hf" / "console.log")
    assert loaded.reader == "console"
    _, run = loaded.runs[0]
    assert len(run.metrics.series("train/loss")) == 20
    assert "train/grad_norm" in run.metrics.keys


def test_hf_console_dicts_numbered_like_the_trainer(produced):
    """transformers 5, disable_tqdm: the console's log dicts carry no step. Training dicts are
    numbered 1, 2, 3 ... (step N = the N-th training log), evaluation dicts sit at the training
    log before them; checked against the same run's trainer_state.json (logging_steps=2,
    eval_steps=10): console step x logging_steps is the Trainer's global step, for both."""
    ckpt = _last_checkpoint(produced / "hf")
    state = json.loads((ckpt / "trainer_state.json").read_text())
    every = state["logging_steps"]
    train_steps = [h["step"] for h in state["log_history"] if "loss" in h]
    eval_steps = [h["step"] for h in state["log_history"] if "eval_loss" in h]
    assert eval_steps and len(train_steps) == 20
    _, run = load_path(produced / "hf" / "console.log").runs[0]
    loss, val = run.metrics.series("train/loss"), run.metrics.series("val/loss")
    assert [int(s) * every for s in loss.steps] == train_steps
    assert [
        int(s) * every for s in val.steps
    ] == eval_steps  # eval dicts no longer counted as steps
    assert run.params["log.step_axis"] == "train_log_dict"
    assert any("training log dicts" in n for n in run.notes)
    assert list(loss.values) == pytest.approx(
        [h["loss"] for h in state["log_history"] if "loss" in h], rel=1e-3
    )


def test_hf_console_with_bars_steps_from_the_trainer_bar_not_loading_bars(produced):
    """A real fine-tune seen on a terminal (progress bars on): 'Writing model shards' and
    'Loading weights' bars come first and are not training; the Trainer's log dicts (every 5
    of 30 steps, eval every 10) sit at the steps they were logged at, which is the bar's redraw
    after each dict (tqdm.write), not the stale draw before it. Before: every point at step 3
    (the shard-writing bar's total), a throughput point from it, total_steps 3."""
    text = (produced / "hf_tqdm" / "console.log").read_text()
    assert "Writing model shards" in text and "Loading weights" in text  # the real libraries' bars
    loaded = load_path(produced / "hf_tqdm" / "console.log")
    assert loaded.reader == "console"
    _, run = loaded.runs[0]
    assert run.metrics.series("train/loss").steps.tolist() == [5, 10, 15, 20, 25, 30]
    assert run.metrics.series("val/loss").steps.tolist() == [10, 20, 30]
    assert run.params["log.total_steps"] == "30" and "log.steps_per_epoch" not in run.params
    assert "tqdm-not-training" in run.params["log.formats"]
    assert max(run.metrics.series("perf/throughput").steps) <= 30


def test_keras_console_config_print_and_reduce_lr_on_plateau(produced):
    """Keras 3 fit(verbose=2) with ReduceLROnPlateau(verbose=1) after a script's 'epochs: 12'
    print: the print is the plan (not train/epoch 12 at step 1), the LR messages are events
    (log.lr_changes), the lr series is Keras' own learning_rate column."""
    _, run = load_path(produced / "keras_console" / "train.log").runs[0]
    assert "train/epochs" not in run.metrics.keys and "train/epoch" not in run.metrics.keys
    assert run.params["log.epochs"] == "12" and run.params["epochs"] == "12"
    text = (produced / "keras_console" / "train.log").read_text()
    n_msgs = text.count("ReduceLROnPlateau reducing learning rate")
    assert n_msgs >= 1 and run.params["log.lr_changes"] == str(n_msgs)
    loss = run.metrics.series("train/loss")
    assert loss.steps.tolist() == list(range(1, 13))
    lr = run.metrics.series("train/lr")
    assert len(lr) == 12 and lr.values[0] == pytest.approx(0.01) and lr.values[-1] < 0.01


def test_lightning_tensorboard_logger_params_and_roles(produced):
    """Lightning TensorBoardLogger: hparams (the events' hparams plugin and hparams.yaml) become
    params (before: none); train/val loss and accuracy, the LearningRateMonitor's lr-SGD and the
    epoch play their roles."""
    ((_, run),) = load_path(produced / "tb_logs").runs
    assert run.params.get("lr") == "0.1"
    assert (
        run.key_for(Role.TRAIN_LOSS) == "train_loss_step"
        and run.key_for(Role.VAL_LOSS) == "val_loss"
    )
    assert (
        run.key_for(Role.VAL_ACCURACY) == "val_acc" and run.key_for(Role.LEARNING_RATE) == "lr-SGD"
    )
    lr = run.metrics.series("lr-SGD")
    assert lr.values[0] == pytest.approx(0.1) and lr.values[-1] == pytest.approx(
        0.01
    )  # StepLR(2) over 4 epochs


def test_accelerate_tensorboard_tracker_is_one_run_with_its_config(produced):
    """accelerate's TensorBoard tracker: init_trackers(config=) goes through add_hparams into a
    str(time.time()) sub-folder. Before: 'holds 2 separate runs' and nothing audited."""
    loaded = load_path(produced / "accel")
    assert len(loaded.runs) == 1 and not loaded.problems, loaded.problems
    _, run = loaded.runs[0]
    assert run.params.get("lr") == "0.1" and run.params.get("epochs") == "3"
    assert (
        run.key_for(Role.TRAIN_LOSS) == "train_loss" and run.key_for(Role.VAL_LOSS) == "valid_loss"
    )
    assert len(run.metrics.series("train_loss")) == 18
    assert not any(k.split("/")[0].replace(".", "").isdigit() for k in run.metrics.keys), (
        run.metrics.keys
    )


def test_keras_history_json(produced):
    """json.dump(history.history): one point per epoch, epochs from 0 (History.epoch); before:
    'not a recognised run file'."""
    loaded = load_path(produced / "keras_hist" / "history.json")
    assert loaded.reader == "keras_history"
    _, run = loaded.runs[0]
    hist = json.loads((produced / "keras_hist" / "history.json").read_text())
    assert run.metrics.series("val_loss").steps.tolist() == list(range(5))
    assert run.metrics.series("val_loss").values.tolist() == pytest.approx(hist["val_loss"])
    assert (
        run.key_for(Role.VAL_ACCURACY) == "val_accuracy" and run.params["log.step_axis"] == "epoch"
    )
    assert (
        load_path(
            produced / "hf" / _last_checkpoint(produced / "hf").name / "trainer_state.json"
        ).reader
        == "trainer_state"
    )  # a trainer_state.json is not taken for a History


# --- copied public artifacts (tests/data/formats/SOURCES.md) ---------------------------------


def test_keras_tensorboard_train_validation_are_one_run():
    loaded = load_path(DATA / "keras_tensorboard_run1")
    assert loaded.reader == "tensorboard" and len(loaded) == 1
    _, run = loaded.runs[0]
    assert {"train/epoch_loss", "validation/epoch_loss"} <= set(run.metrics.keys)
    assert len(run.metrics.series("validation/epoch_loss")) > 1


def test_keras_csvlogger_two_runs_in_one_file():
    run = load_path(DATA / "keras_csvlogger_appended.log").runs[0][1]
    note = next(n for n in run.notes if "appended" in n)
    assert "holds 2 runs" in note
    assert run.metrics.series("loss").steps[0] == 0


def test_swav_launches_split_and_config_not_metrics():
    loaded = load_path(DATA / "swav_appended_train.log")
    _, run = loaded.runs[0]
    assert any("launches appended" in n for n in run.notes)
    loss = run.metrics.series("train/loss")
    assert loss.steps.min() == 0 and loss.steps.max() == 399
    assert np.all(np.diff(loss.steps) >= 0)  # one launch only: the counter never starts over
    assert "train/epsilon" not in run.metrics.keys and run.params["log.epochs"] == "400"


def test_console_split_launches_batch_index_within_epoch_is_no_launch():
    """Realworld f10b2-09 (MTCNN, three stages PNet/RNet/ONet of 20 epochs each, ``Epoch: 2, Step: 0``
    after ``Epoch: 1, Step: 5800``): the step counts batches within the epoch, so it starts over every
    epoch while the epoch goes up; only the stage starts (epoch back to 1) are launches. Was read as
    60 launches (the last one epoch of 5 points); now 3, the last stage's 20 epochs kept with its
    steps numbered on across epochs (no counter reset left for LI002)."""
    path = REPO / "tests/data/realworld/runs/Enderfga--mtCNN_sysu/nohup.out"
    _, run = load_path(path).runs[-1]
    assert any("holds 3 launches" in n for n in run.notes), run.notes
    loss = run.metrics.series("train/loss")
    assert len(loss) == 100 and np.all(np.diff(loss.steps) > 0)
    epoch = run.metrics.series("train/epoch").values
    assert epoch[0] == 1 and epoch[-1] == 20


def test_nanogpt_derived_console():
    _, run = load_path(DATA / "nanogpt_train.log").runs[0]
    assert len(run.metrics.series("train/loss")) > 100
    assert len(run.metrics.series("val/loss")) > 5
    assert run.metrics.series("perf/step_time").values[-1] < 10  # ms converted to seconds


def test_committed_mlflow_store_is_read_only(tmp_path):
    """The store has no artifacts/ folders and a Windows artifact_uri: read, nothing created."""
    store = tmp_path / "mlruns"
    shutil.copytree(DATA / "mlruns_committed", store)
    before = sorted(p.relative_to(store) for p in store.rglob("*"))
    loaded = load_path(store)
    assert loaded.reader == "mlflow_store" and len(loaded) == 1
    _, run = loaded.runs[0]
    assert run.identity.id == "cb0096518b0e4c66a94428555f05420b"
    assert run.status.value == "running" and "EPOCHS" in run.params
    assert any("no artifacts/" in n for n in run.notes)
    assert sorted(p.relative_to(store) for p in store.rglob("*")) == before

    from mlaudit_mlflow.loader import load_run  # the tracker loader falls back to the same reader

    run2 = load_run(run.identity.id, str(store))
    assert run2.metrics.keys == run.metrics.keys
    assert sorted(p.relative_to(store) for p in store.rglob("*")) == before


def test_real_mlflow_file_store_deleted_run_and_missing_artifacts(tmp_path, monkeypatch):
    mlflow = pytest.importorskip("mlflow")
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    store = tmp_path / "mlruns"
    client = mlflow.MlflowClient(str(store))
    exp = client.create_experiment("e")
    ids = []
    for name in ("kept", "gone"):
        rid = client.create_run(exp, run_name=name).info.run_id
        for i in range(20):
            client.log_metric(rid, "loss", 1.0 / (i + 1), step=i)
        client.set_terminated(rid)
        ids.append(rid)
    client.delete_run(ids[1])
    for art in store.rglob("artifacts"):  # as after a git clone
        shutil.rmtree(art)
    loaded = load_path(store)
    assert [r.identity.id for _, r in loaded] == [ids[0]]
    assert any(ids[1] in p and "deleted" in why for p, why in loaded.problems)
    assert loaded.runs[0][1].status.value == "finished"
    assert not list(store.rglob("artifacts"))


def test_lfs_pointer_event_file_is_one_line_exit_2(tmp_path):
    d = tmp_path / "run"
    d.mkdir()
    (d / "events.out.tfevents.1.host").write_text(
        "version https://git-lfs.github.com/spec/v1\noid sha256:" + "a" * 64 + "\nsize 12345\n"
    )
    for args in ([str(d)], ["tensorboard", str(d)], [str(d / "events.out.tfevents.1.host")]):
        res = cli(*args)
        assert res.exit_code == 2, res.output
        assert "Git LFS pointer" in res.output and "git lfs pull" in res.output
        assert "Traceback" not in res.output
    assert not list(d.glob("*.mlaudit"))


def test_tensorboard_write_back_only_for_tensorboard(produced, tmp_path):
    tb = tmp_path / "tb"
    shutil.copytree(produced / "torch_tb", tb)
    res = cli(str(tb))
    assert res.exit_code == 0, res.output
    assert len(list(tb.glob("*.mlaudit"))) == 1
    csv = tmp_path / "k"
    shutil.copytree(produced / "keras", csv)
    assert cli(str(csv / "training.log")).exit_code == 0
    assert sorted(p.name for p in csv.iterdir()) == ["training.log"]


# --- the command ---------------------------------------------------------------------------------


def test_routing_keeps_subcommands():
    assert _route_path(["rules"]) == ["rules"]
    assert _route_path(["mlflow", "abc"]) == ["mlflow", "abc"]
    assert _route_path(["runs/x"]) == ["audit", "runs/x"]
    assert _route_path(["--version"]) == ["--version"]
    assert cli("rules").exit_code == 0
    res = cli("no/such/place")
    assert res.exit_code == 2 and "no such file or folder" in res.output


def test_as_overrides_and_list(produced):
    f = produced / "keras" / "training.log"
    res = cli(str(f), "--as", "generic_csv", "--no-write")
    assert res.exit_code == 0 and "reader: generic_csv" in res.output
    res = cli(str(f), "--as", "nope")
    assert res.exit_code == 2 and "unknown format" in res.output
    res = cli(str(produced), "--list")
    assert res.exit_code == 0
    readers_found = {line.split("\t")[1] for line in res.stdout.splitlines() if "\t" in line}
    assert {"tensorboard", "keras_csv", "lightning_csv", "trainer_state"} <= readers_found


def test_third_party_reader_by_entry_point(tmp_path, monkeypatch):
    """A reader installed by another distribution (real importlib.metadata discovery)."""
    (tmp_path / "fancy_reader.py").write_text(
        "from pathlib import Path\n"
        "from mlaudit_core.rundata import MetricTable, RunData, RunIdentity\n"
        "NAME = 'fancy'\nDETECTS = 'fancy logs'\n"
        "def sniff(path): return 0.99 if Path(path).suffix == '.fancy' else 0.0\n"
        "def load(path):\n"
        "    v = [float(x) for x in Path(path).read_text().split()]\n"
        "    return RunData(identity=RunIdentity('fancy', str(path)),\n"
        "                   metrics=MetricTable(['loss'] * len(v), range(len(v)), v))\n"
    )
    di = tmp_path / "fancy_reader-0.1.dist-info"
    di.mkdir()
    (di / "METADATA").write_text("Metadata-Version: 2.1\nName: fancy-reader\nVersion: 0.1\n")
    (di / "entry_points.txt").write_text("[mlaudit.formats]\nfancy = fancy_reader\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    readers.cache_clear()  # readers() is cached: look at the entry points again
    try:
        assert "fancy" in readers()
        f = tmp_path / "a.fancy"
        f.write_text("3 2 1.5 1.2 1.1")
        loaded = load_path(f)
        assert loaded.reader == "fancy" and len(loaded.runs[0][1].metrics.series("loss")) == 5
    finally:
        monkeypatch.undo()
        readers.cache_clear()
    assert "fancy" not in readers()


# --- bad input ---------------------------------------------------------------------------------

CSV_HEADERS = {
    "lightning_csv": ("metrics.csv", "epoch,step,train_loss_step,val_loss\n", "0,{i},{v},\n"),
    "keras_csv": ("training.log", "epoch,loss,val_loss\n", "{i},{v},{v}\n"),
    "ultralytics": (
        "results.csv",
        "               epoch,      train/box_loss,     metrics/mAP_0.5\n",
        "{i},{v},{v}\n",
    ),
    "timm_csv": ("summary.csv", "epoch,train_loss,eval_loss,eval_top1\n", "{i},{v},{v},50\n"),
    "generic_csv": ("log.csv", "step,loss\n", "{i},{v}\n"),
}


def _bad_cases(kind: str, d: Path) -> dict[str, Path]:
    """Bad files that still carry the reader's name and shape, so the sniffer picks the reader."""
    name, head, row = CSV_HEADERS.get(kind, (None, None, None))
    cases: dict[str, Path] = {}
    if kind == "trainer_state":
        name = "trainer_state.json"
        good = json.dumps(
            {
                "global_step": 3,
                "max_steps": 3,
                "log_history": [
                    {"loss": 1.0, "step": 1},
                    {"loss": 0.9, "step": 2},
                    {"loss": 0.8, "step": 3},
                ],
            }
        )
        cases["truncated"] = good[: len(good) - 20]
        cases["header_only"] = '{"global_step": 0, "max_steps": 10, "log_history": []}'
        cases["strings"] = json.dumps(
            {
                "max_steps": 3,
                "log_history": [
                    {"loss": "abc", "step": 1},
                    {"loss": float("nan"), "step": 1},
                    {"loss": 1e400, "step": 0},
                ],
            }
        )
    elif kind == "jsonlines":
        name = "metrics.json"
        rows = [json.dumps({"iteration": i, "total_loss": 1.0 / (i + 1)}) for i in range(5)]
        cases["truncated"] = "\n".join(rows) + '\n{"iteration": 5, "total_lo'
        cases["header_only"] = '{"iteration": 0}\n{"iteration": 1}\n'
        cases["strings"] = "\n".join(
            rows
            + [
                '{"iteration": 3, "total_loss": NaN}',
                '{"iteration": 2, "total_loss": "x"}',
                '{"iteration": 2, "total_loss": Infinity}',
            ]
        )
    elif kind == "keras_history":
        name = "history.json"
        good = json.dumps({"loss": [1.0, 0.9, 0.8], "val_loss": [1.1, 1.0, 0.95]})
        cases["truncated"] = good[: len(good) - 9]
        cases["header_only"] = '{"loss": [], "val_loss": []}'
        cases["strings"] = '{"loss": ["abc", NaN, 1e400, null, 0.5], "val_loss": "x"}'
    elif kind == "console":
        name = "train.log"
        cases["truncated"] = (
            "".join(f"step {i}: loss {1.0 / (i + 1)}\n" for i in range(5)) + "step 5: lo"
        )
        cases["header_only"] = "Starting training\nconfig: a=1\n"
        cases["strings"] = (
            "step 1: loss nan\nstep 1: loss inf\nstep 0: loss abc\nstep 2: loss 0.5\n"
        )
    else:
        rows = "".join(row.format(i=i, v=1.0 / (i + 1)) for i in range(5))
        cases["truncated"] = head + rows + row.format(i=5, v=0.1)[:3]
        cases["header_only"] = head
        bad = row.format(i=2, v="abc") + row.format(i=1, v="nan") + row.format(i=1, v="inf")
        cases["strings"] = head + rows + bad
    out = {}
    for case, text in cases.items():
        p = d / case / name
        p.parent.mkdir(parents=True)
        p.write_text(text)
        out[case] = p
    for case, data in (("empty", b""), ("binary", b"\x00\x01\x02\xff" * 1000)):
        p = d / case / name
        p.parent.mkdir(parents=True)
        p.write_bytes(data)
        out[case] = p
    return out


KINDS = ["trainer_state", "jsonlines", "keras_history", "console", *CSV_HEADERS]


@pytest.mark.parametrize("kind", KINDS)
def test_bad_input_never_a_traceback_never_succeeded(kind, tmp_path):
    for case, p in _bad_cases(kind, tmp_path).items():
        res = cli(str(p), "--as", kind, "--format", "json", "--no-write")
        assert "Traceback" not in res.output, (case, res.output)
        assert res.exit_code in (0, 2), (case, res.exit_code, res.output)
        if res.exit_code == 2:
            line = res.output.strip().splitlines()[-1]
            assert str(p) in res.output or p.name in line, (case, res.output)
        else:
            report = json.loads(res.stdout[res.stdout.index("{") :])
            outcome = report["verdict"]["outcome"]
            if outcome == "succeeded":  # only as the project's partial-data verdict, saying why
                v = report["verdict"]
                assert v["inconclusive"] and "Partial data" in v["summary"], (kind, case, v)
            if case in ("empty", "binary"):
                pytest.fail(f"{kind}/{case}: audited ({outcome}) instead of refused")
            if case == "header_only":  # a log without one metric line: unknown, saying so
                assert outcome == "unknown" and report["warnings"], (kind, case, report)
            if case == "strings" and kind == "console":
                # console text has no number columns: 'loss abc' is prose, not a bad cell; the
                # printed nan/inf losses are points, so the run is not called healthy
                assert outcome not in ("succeeded", "unknown"), (kind, case, report["verdict"])
            elif case == "strings":
                assert report["warnings"] or outcome == "unknown", (kind, case, report["warnings"])


@pytest.mark.parametrize("kind", ["generic_csv", "jsonlines", "console", "trainer_state"])
def test_200_mb_single_line(kind, tmp_path):
    name = {
        "generic_csv": "log.csv",
        "jsonlines": "metrics.json",
        "console": "train.log",
        "trainer_state": "trainer_state.json",
    }[kind]
    p = tmp_path / name
    with open(p, "wb") as fh:
        chunk = (
            b"step,loss," if kind == "generic_csv" else b'{"iteration": 1, "loss": '
        ) + b"9" * (1 << 20)
        fh.write(chunk)
        for _ in range(199):
            fh.write(b"9" * (1 << 20))
    res = cli(str(p), "--as", kind, "--no-write")
    assert "Traceback" not in res.output
    assert res.exit_code == 2 or "unknown" in res.output.lower(), res.output
    assert "succeeded" not in res.output.lower()


@pytest.mark.parametrize("kind", ["generic_csv", "jsonlines"])
@pytest.mark.parametrize("where", ["middle", "last_without_newline"])
def test_data_line_over_1_mib_is_skipped_and_reported(kind, where, tmp_path):
    """A data line longer than 1 MiB (the console reader's cap) is skipped without being held,
    the rows around it are read, and the report's warnings say so (issue 15; the memory
    figure for a 200 MB line is benchmarks/ingest.py --only long)."""
    from mlaudit_core.formats import _csv, jsonlines

    assert _csv.MAX_LINE == jsonlines.MAX_LINE == 1 << 20
    csv = kind == "generic_csv"
    p = tmp_path / ("log.csv" if csv else "metrics.json")
    row = (
        (lambda i: f"{i},{1 / (i + 1):.6f}\n")
        if csv
        else (lambda i: f'{{"iteration": {i}, "total_loss": {1 / (i + 1):.6f}}}\n')
    )
    big = (
        ("50," + "1" * (3 << 20))
        if csv
        else ('{"iteration": 50, "total_loss": ' + "1" * (3 << 20) + "}")
    )
    text = ("step,loss\n" if csv else "") + "".join(row(i) for i in range(50))
    if where == "middle":
        text += big + "\n" + "".join(row(i) for i in range(51, 100))
    else:
        text += big
    p.write_text(text)
    _, run = load_path(p, kind).runs[0]
    loss = run.metrics.series("loss" if csv else "total_loss")
    n_good = 99 if where == "middle" else 50
    assert len(loss) == n_good and 50 not in set(loss.steps.tolist())
    assert np.all(loss.values <= 1.0)  # the 3 MiB number never became a value
    assert any("longer than 1 MiB" in w for w in run.warnings), run.warnings
    res = cli(str(p), "--as", kind, "--format", "json", "--no-write")
    assert res.exit_code in (0, 1), res.output
    report = json.loads(res.stdout[res.stdout.index("{") :])
    assert any("longer than 1 MiB" in w for w in report["warnings"]), report["warnings"]


def test_long_lines_scan_counts_lines_across_blocks(tmp_path):
    from mlaudit_core.formats._csv import long_lines

    p = tmp_path / "x.csv"
    limit = 1 << 20
    # exactly the limit (kept), one byte over (long), a long line spanning three blocks, short lines
    p.write_bytes(
        b"a,b\n"
        + b"x" * limit
        + b"\n"
        + b"y" * (limit + 1)
        + b"\n"
        + b"z" * (3 * limit)
        + b"\n1,2\n"
    )
    assert long_lines(p) == (2, 3 * limit, False)
    p.write_bytes(b"a,b\n1,2\n" + b"z" * (limit + 5))
    assert long_lines(p) == (1, limit + 5, True)


def test_csv_nan_inf_strings_and_steps(tmp_path):
    p = tmp_path / "log.csv"
    p.write_text("step,loss,acc\n0,1.0,0.1\n1,nan,0.2\n2,inf,x\n2,0.5,0.3\n1,0.4,0.4\n")
    _, run = load_path(p).runs[0]
    loss = run.metrics.series("loss")
    assert len(loss) == 5 and np.isnan(loss.values[1]) and np.isinf(loss.values[2])
    assert len(run.metrics.series("acc")) == 4  # 'x' left out
    assert any("not numbers" in w and "acc (1)" in w for w in run.warnings)
    assert any("go back" in w for w in run.warnings)


def test_folder_with_nothing_recognisable(tmp_path):
    (tmp_path / "notes.md").write_text("# hello\n")
    (tmp_path / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 100)
    res = cli(str(tmp_path))
    assert res.exit_code == 2
    assert "nothing recognisable" in res.output and str(tmp_path) in res.output
    with pytest.raises(InputError):
        plan(tmp_path)


# --- every labelled real artifact ------------------------------------------------------------------

#: Readers that make sense for each labels.json kind.
SENSIBLE = {
    "trainer_state": {"trainer_state"},
    "csv": {"keras_csv", "lightning_csv", "ultralytics", "timm_csv", "generic_csv"},
    "tensorboard": {"tensorboard", "ultralytics", "jsonlines", "lightning_csv", "catboost_info"},
    "mlflow": {"mlflow_store"},
    "wandb": {"wandb_dir"},
    "logs": {"console", "jsonlines", "generic_csv"},  # a step<TAB>loss table named train.log
}
ROLES = (Role.TRAIN_LOSS, Role.VAL_LOSS, Role.VAL_ACCURACY, Role.TRAIN_ACCURACY)
# shared/ lies beside the checkout (CI: a copy next to the fresh clone, whatever its folder name;
# developers: /work/shared); the first one present is used
_SHARED = [
    p for p in (REPO.parent / "shared" / "realworld", Path("/work/shared/realworld")) if p.is_dir()
]
CORPORA = [REPO / "tests" / "data" / "realworld", *_SHARED[:1]]


def _entries():
    out = []
    for base in CORPORA:
        labels = base / "labels.json"
        if not labels.is_file():
            continue
        for e in json.loads(labels.read_text()):
            if e["kind"] in SENSIBLE:
                # a known reader gap, named in the label (``reader_gap``): an expected failure
                # that must fail (strict), so the mark goes when the reader learns the layout
                marks = (
                    [pytest.mark.xfail(strict=True, reason=e["reader_gap"])]
                    if e.get("reader_gap")
                    else []
                )
                out.append(pytest.param(base, e, id=f"{base.parent.name}/{e['id']}", marks=marks))
    return out


def test_realworld_corpora_present():
    """tests/data/realworld is in the repository, so the parametrised test below always runs."""
    assert (CORPORA[0] / "labels.json").is_file()


def _distinct_steps(run, key) -> int:
    """How many distinct steps the finite values of ``key`` were logged at."""
    s = run.metrics.series(key)
    return len(set(s.steps[np.isfinite(s.values)].tolist()))


@pytest.mark.parametrize("base,entry", _entries())
def test_realworld_artifact_sniffed_and_loaded(base, entry):
    if entry["kind"] == "wandb":
        pytest.importorskip("wandb")
    loaded = load_path(base / entry["path"])
    runs = loaded.runs
    if entry.get("run_id"):
        runs = [(p, r) for p, r in runs if r.identity.id == entry["run_id"]]
    assert runs, (loaded.reader, loaded.problems)
    companions = entry.get("companions", {})  # files beside the labelled run, each its own run
    for p, run in runs:
        reader = next(c.reader for c in plan(p)[0])
        rel = (
            Path(p).relative_to(base / entry["path"]).as_posix()
            if Path(p) != base / entry["path"]
            else ""
        )
        if rel in companions:
            assert reader == companions[rel], (entry["id"], rel, reader)
            assert run.metrics.keys, (entry["id"], rel)
            continue
        assert reader in SENSIBLE[entry["kind"]], (entry["id"], reader)
        has = [r for r in ROLES if run.key_for(r) is not None]
        if entry.get("no_series"):
            # labelled as holding no training series (the label says why): none may be invented;
            # a value logged at one step only (a summary, one evaluation) is a figure, not a series
            curves = [r for r in has if _distinct_steps(run, run.key_for(r)) > 1]
            assert not curves, (entry["id"], entry["no_series"], run.metrics.keys[:20])
            assert run.console or run.warnings or run.notes or run.metrics.keys, entry["id"]
            continue
        if entry.get("outcome_any_of") == ["unknown"]:
            continue  # labelled as holding nothing judgeable (e.g. only hp_metric)
        if not run.metrics.keys and set(entry["outcome_any_of"]) <= {
            "crashed",
            "unknown",
            "running",
        }:
            assert run.console, entry["id"]  # died before logging a metric: the console says why
            continue
        assert has, (entry["id"], run.metrics.keys[:20])


def test_grouped_table_equals_the_constructor():
    """The readers' sort-free MetricTable (formats._common.grouped_table) is the same table."""
    from mlaudit_core.formats._common import grouped_table
    from mlaudit_core.rundata import MetricTable

    rng = np.random.default_rng(1)
    names, counts = ["a", "b/c", "d"], [5, 3, 7]
    steps = rng.integers(0, 50, 15)
    values = rng.normal(size=15)
    values[4] = np.nan
    walls = rng.uniform(1e9, 2e9, 15)
    codes = np.repeat(np.arange(3), counts)
    ref = MetricTable(codes, steps, values, walls, names=names)
    got = grouped_table(names, counts, steps, values, walls)
    assert got.keys == ref.keys and len(got) == len(ref) and got.nbytes == ref.nbytes
    for k in names:
        a, b = got.series(k), ref.series(k)
        assert np.array_equal(a.steps, b.steps) and np.array_equal(a.wall_times, b.wall_times)
        assert np.array_equal(a.values, b.values, equal_nan=True)
    assert got.to_frame().equals(ref.to_frame())


# --- benchmarks at toy size (so they cannot rot) -------------------------------------------------


def test_ingest_benchmark_runs_at_toy_size():
    """benchmarks/ingest.py end to end, tiny: every reader runs and the counts agree (no timing)."""
    pytest.importorskip("tbparse")
    pytest.importorskip("tensorboardX")
    res = subprocess.run(
        [
            sys.executable,
            str(REPO / "benchmarks" / "ingest.py"),
            "--tb-points",
            "2000",
            "--rows",
            "500",
            "--mlflow-points",
            "500",
            "--skip-server",
            "--repeat",
            "1",
            "--only",
            "tb,tables,mlflow,long",
            "--long-mb",
            "2",
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    out = res.stdout
    for reader in (
        "mlaudit-tb",
        "tbparse",
        "EventAccumulator",
        "mlaudit-csv",
        "pandas.read_csv",
        "mlaudit-jsonl",
        "pandas.read_json",
        "MlflowClient (sqlite:///)",
    ):
        assert reader in out, out
    assert "mlaudit vs tbparse" in out and "mlaudit speed / pandas speed" in out
    assert (
        out.count("identical point counts: True") >= 4
        and "identical point counts: False" not in out
    ), out
    assert out.count("mlaudit's warning: ") == 2 and "warning: NONE" not in out, (
        out
    )  # --only long, both files


def test_many_runs_benchmark_runs_at_toy_size():
    """benchmarks/many_runs.py end to end, tiny (12 runs, --max-runs 10): runs found, audited
    and the left-out count agree (no timing asserted)."""
    res = subprocess.run(
        [
            sys.executable,
            str(REPO / "benchmarks" / "many_runs.py"),
            "--runs",
            "3,12",
            "--formats",
            "json,terminal",
            "--max-runs",
            "10",
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    rows = [line.split() for line in res.stdout.splitlines() if line.strip()[:1].isdigit()]
    assert [(r[0], r[1], r[2], r[3]) for r in rows] == [
        ("3", "json", "3", "3"),
        ("3", "terminal", "3", "3"),
        ("12", "json", "12", "10"),
        ("12", "terminal", "12", "10"),
    ]
    assert "KB per audited run" in res.stdout


def test_folder_of_many_runs_is_capped_and_streamed(tmp_path):
    """More runs than --max-runs: the first ones in path order are audited, the rest counted on
    stderr; the JSON list on stdout and in --out is complete and valid (written run by run)."""
    for i in range(6):
        (tmp_path / f"r{i}.csv").write_text("step,loss\n1,0.5\n2,0.4\n3,0.3\n")
    out = tmp_path / "out" / "all.json"
    res = cli(str(tmp_path), "--no-write", "--format", "json", "--max-runs", "4", "--out", str(out))
    assert res.exit_code in (0, 1), res.output
    got = json.loads(res.stdout[res.stdout.index("[") : res.stdout.rindex("]") + 1])
    assert [Path(x["path"]).name for x in got] == ["r0.csv", "r1.csv", "r2.csv", "r3.csv"]
    assert all(x["reader"] == "generic_csv" and x["report"]["verdict"]["outcome"] for x in got)
    assert json.loads(out.read_text()) == got
    assert (
        "6 runs found" in res.output
        and "2 left out" in res.output
        and "audited 4 of 6" in res.output
    )
    res = cli(str(tmp_path), "--no-write", "--format", "markdown", "--max-runs", "0")
    assert res.stdout.count("<!-- ") == 6 and "audited 6 of 6" in res.output
    from mlaudit.cli.cmd_audit import MAX_RUNS

    assert MAX_RUNS == 1000  # the documented default (docs/formats.md)


def test_logs_throughput_benchmark_runs_at_toy_size():
    res = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "logs_throughput.py"), "--lines", "2000"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    assert res.stdout.strip()


def test_clearml_offline_session_sniffed(tmp_path):
    """A session recorded by the real ClearML SDK (Task.set_offline; tests/clearml_helpers.py)."""
    pytest.importorskip("clearml")
    p = subprocess.run(
        [
            sys.executable,
            str(REPO / "tests" / "clearml_helpers.py"),
            "offline",
            "--out",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ),
    )
    assert p.returncode == 0, p.stderr[-3000:]
    made = json.loads(p.stdout.strip().splitlines()[-1])
    for target in (made["folder"], made["zip"]):
        loaded = load_path(target)
        assert loaded.reader == "clearml_offline"
        _, run = loaded.runs[0]
        assert run.identity.id == made["task_id"] and len(run.series("train/loss")) == 300
    res = cli(made["zip"], "--format", "json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout[res.stdout.index("{") :])["verdict"]["outcome"] != "succeeded"


def test_tensorboard_split_pairs_with_a_shared_suffix(tmp_path):
    """'train with SGD' + 'val with SGD' (a TF2 course run, tests/data/realworld tb11) are one run;
    'train_a' + 'train_b' are two runs (one split word: not a pair)."""
    tbx = pytest.importorskip("tensorboardX")
    for sub, tag in (
        ("one/train with SGD", "loss"),
        ("one/val with SGD", "loss"),
        ("two/train_a", "loss"),
        ("two/train_b", "loss"),
    ):
        w = tbx.SummaryWriter(str(tmp_path / sub))
        for i in range(10):
            w.add_scalar(tag, 1.0 / (i + 1), i)
        w.close()
    loaded = load_path(tmp_path / "one")
    assert len(loaded) == 1 and set(loaded.runs[0][1].metrics.keys) == {"train/loss", "val/loss"}
    assert [Path(p).name for p, _ in load_path(tmp_path / "two")] == ["train_a", "train_b"]


def test_all_numeric_csv_fast_path_equals_the_general_parse(tmp_path, monkeypatch):
    """An all-number CSV is parsed as one float64 block and handed to the metric table without
    copies (_csv._float_columns, _common.concat); the run is the same as through the general
    per-column parse, and a logged nan/inf still goes the general way and stays a point."""
    from mlaudit_core.formats import _csv

    p = tmp_path / "log.csv"
    rng = np.random.default_rng(1)
    rows = "".join(
        f"{i},{i // 10},{rng.random():.6f},,{rng.random():.4g}\n"
        if i % 3
        else f"{i},{i // 10},{rng.random():.6f},{rng.random():.5f},{rng.random():.4g}\n"
        for i in range(300)
    )
    p.write_text("step,epoch,loss,val_loss,lr\n" + rows)
    fast = load_path(p).runs[0][1]
    full = tmp_path / "full.csv"
    full.write_text(
        "step,epoch,loss,lr\n"
        + "".join(f"{i},{i // 10},{1 / (i + 1):.6f},0.1\n" for i in range(50))
    )
    assert load_path(full).runs[0][1].metrics._values.base is not None  # pandas' block, not a copy
    monkeypatch.setattr(_csv, "_numeric_head", lambda *a, **k: False)
    slow = load_path(p).runs[0][1]
    assert fast.metrics.keys == slow.metrics.keys
    for k in fast.metrics.keys:
        a, b = fast.metrics.series(k), slow.metrics.series(k)
        assert np.array_equal(a.steps, b.steps) and np.array_equal(
            a.values, b.values, equal_nan=True
        ), k
    assert len(fast.metrics.series("val_loss")) == 100  # empty cells are not points
    monkeypatch.undo()
    p.write_text("step,loss\n0,1.0\n1,nan\n2,inf\n3,0.5\n")
    assert not _csv._numeric_head(p, 2)
    loss = load_path(p).runs[0][1].metrics.series("loss")
    assert len(loss) == 4 and np.isnan(loss.values[1]) and np.isinf(loss.values[2])


def test_concat_views_back_to_back_columns_and_copies_otherwise():
    from mlaudit_core.formats._common import concat

    block = np.arange(12, dtype=np.float64).reshape(3, 4)
    parts = [block[0], block[1], block[2]]
    out = concat(parts)
    assert np.array_equal(out, np.arange(12.0)) and np.shares_memory(out, block)
    out = concat([block[0], block[2]])  # a gap: copied
    assert np.array_equal(out, [0, 1, 2, 3, 8, 9, 10, 11]) and not np.shares_memory(out, block)
    out = concat([block[1], block[0]])  # out of order: copied
    assert np.array_equal(out, [4, 5, 6, 7, 0, 1, 2, 3]) and not np.shares_memory(out, block)
    st = np.arange(3)
    assert np.array_equal(concat([st, st]), [0, 1, 2, 0, 1, 2])


def test_trainer_state_with_empty_log_history_is_partial_data():
    """A real state whose log_history is empty (logging_steps 500 > the 87 steps run, FinanceAdvice,
    tests/data/realworld f5b6-11) is read as a run with no metric and a warning saying why, not
    refused as bad input."""
    path = (
        REPO
        / "tests"
        / "data"
        / "realworld"
        / "runs"
        / "FlamingSpeed--FinanceAdvice"
        / "trainer_state.json"
    )
    run = load_path(path).runs[0][1]
    assert not run.metrics.keys
    assert any("log_history holds no logged step" in w and "500" in w for w in run.warnings), (
        run.warnings
    )


def test_console_sniffs_batch_job_output_suffixes(tmp_path):
    """A batch job's captured stderr named ``<job>.e``/``<job>.e<jobid>`` (SLURM --error, PBS/SGE) is a
    console log; a file with an unrelated suffix and the same text is not opened while walking."""
    from mlaudit_core.formats import console

    text = (
        "  0%|          | 0/50 [00:00<?, ?it/s]\n 10%|#         | 5/50 [47:45<7:09:58, 573.30s/it]\n"
        "slurmstepd: error: *** JOB 41995 ON clr1247 CANCELLED AT 2022-04-14T14:08:25 ***\n"
    )
    for name in ("SOAP.e", "train.e41995", "train.o41995"):
        (tmp_path / name).write_text(text)
        assert console.sniff(tmp_path / name) > 0, name
        assert plan(tmp_path / name)[0][0].reader == "console"
    (tmp_path / "train.png").write_text(text)
    assert console.sniff(tmp_path / "train.png") == 0.0


def test_catboost_info_is_one_run_with_train_and_val_curves(tmp_path):
    """A real CatBoost fit's train_dir (learn/ and test/ event files, learn_error.tsv, test_error.tsv,
    time_left.tsv, catboost_training.json) is read as ONE run: the learn set as train/, the eval set
    as val/, one point per iteration, the planned iteration count as a param."""
    catboost = pytest.importorskip("catboost")
    rng = np.random.default_rng(0)
    x = rng.normal(size=(400, 4))
    y = (x[:, 0] + 0.5 * x[:, 1] + rng.normal(scale=0.5, size=400) > 0).astype(int)
    train_dir = tmp_path / "catboost_info"
    model = catboost.CatBoostClassifier(
        iterations=30,
        eval_metric="AUC",
        train_dir=str(train_dir),
        verbose=False,
        thread_count=1,
        random_seed=0,
    )
    model.fit(x[:300], y[:300], eval_set=(x[300:], y[300:]))
    assert (train_dir / "learn_error.tsv").is_file() and (train_dir / "test_error.tsv").is_file()
    cands, _ = plan(tmp_path)
    assert [(c.path, c.reader) for c in cands] == [(train_dir, "catboost_info")]
    run = load_path(tmp_path).runs[0][1]
    assert (
        run.key_for(Role.TRAIN_LOSS) == "train/Logloss"
        and run.key_for(Role.VAL_LOSS) == "val/Logloss"
    )
    assert run.key_for(Role.VAL_ACCURACY) == "val/AUC"
    assert len(run.metrics.series("val/Logloss").values) == 30
    assert run.params["max_iterations"] == "30"
    evals = model.get_evals_result()["validation"]["Logloss"]
    assert np.allclose(run.metrics.series("val/Logloss").values, evals, rtol=1e-6)


def test_generic_csv_reads_name_value_records(tmp_path):
    """Lines of ``name,value`` pairs without a header (written by a training loop's
    ``f.write("iteration,%d,test_loss,%f,...")``, tests/data/realworld f5b2-09 test.log) are records:
    the names become columns and ``iteration`` the step, instead of the first record being taken
    for a header."""
    log = tmp_path / "test.log"
    with open(log, "w") as f:
        for it in range(100, 1100, 100):
            f.write(
                f"iteration,{it},test_loss,{2.0 / (it / 100)},test_accuracy,{0.5 + it / 4000}\n"
            )
    assert plan(log)[0][0].reader == "generic_csv"
    run = load_path(log).runs[0][1]
    assert sorted(run.metrics.keys) == ["test_accuracy", "test_loss"]
    s = run.metrics.series("test_loss")
    assert list(s.steps) == list(range(100, 1100, 100))
    assert np.allclose(s.values, [2.0 / (it / 100) for it in range(100, 1100, 100)])
    assert run.key_for(Role.VAL_LOSS) == "test_loss"


def test_generic_csv_reads_a_headered_tsv_without_step_column(tmp_path):
    """A tab-separated header of loss names over rows of numbers, no step column, in a ``.txt`` (PGNet's
    ``train_log.txt``, tests/data/realworld f5b2-08): a table whose row number is the step. A ``.txt``
    whose tab-separated lines are prose is not taken."""
    log = tmp_path / "train_log.txt"
    with open(log, "w") as f:
        f.write("total loss\tscore loss\tctc loss\t\n")
        for i in range(20):
            f.write(f"{46.6 / (1 + i):.6f}\t{0.25 / (1 + i):.6f}\t{9.2 / (1 + i):.6f}\t\n")
    assert plan(log)[0][0].reader == "generic_csv"
    run = load_path(log).runs[0][1]
    assert run.key_for(Role.TRAIN_LOSS) == "total loss"
    assert len(run.metrics.series("total loss").values) == 20
    assert any("row number is the step" in n for n in run.notes)
    prose = tmp_path / "notes.txt"
    prose.write_text("name\tcomment\nalice\tran the job twice\nbob\tchanged the lr\n")
    from mlaudit_core.formats import generic_csv

    assert generic_csv.sniff(prose) == 0.0


def test_every_reader_is_registered_once_as_an_entry_point():
    """One registry: every reader module of mlaudit_core/formats (and of the tracker plugins) is
    an ``mlaudit.formats`` entry point in pyproject.toml, and ``readers()`` gives each by NAME."""
    import ast

    import tomllib

    root = Path(__file__).resolve().parents[1]
    eps = tomllib.loads((root / "pyproject.toml").read_text())["project"]["entry-points"][
        "mlaudit.formats"
    ]
    modules = set()
    for path in [
        *(root / "mlaudit_core" / "formats").glob("*.py"),
        *(root / "integrations").glob("*/local_format.py"),
    ]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if any(
            isinstance(n, ast.Assign) and any(getattr(t, "id", None) == "NAME" for t in n.targets)
            for n in tree.body
        ):
            modules.add(
                ".".join(
                    path.relative_to(
                        root / ("integrations" if "integrations" in path.parts else ".")
                    )
                    .with_suffix("")
                    .parts
                )
            )
    assert modules and set(eps.values()) == modules, sorted(set(eps.values()) ^ modules)
    readers.cache_clear()
    assert set(readers()) == set(eps), sorted(set(readers()) ^ set(eps))
    import mlaudit_core.formats as formats

    assert not hasattr(formats, "BUILTIN"), "a second list of readers next to the entry points"


def _csv_read_both(path, monkeypatch):
    """``formats._csv.read`` with pandas, then with the standard library's reader (pandas
    reported absent), as ``{name: (values with NaN for absent, mask)}`` and the warnings."""
    import mlaudit_core._optional as optional
    from mlaudit_core.formats import _csv

    out = []
    for blocked in (False, True):
        with monkeypatch.context() as m:
            if blocked:
                m.setattr(optional, "pandas", lambda: None)
            cols, warnings = _csv.read(path)
        out.append(
            (
                {
                    k: [(float(x) if x == x else "nan") if mk else None for x, mk in zip(v, mask)]
                    for k, (v, mask) in cols.items()
                },
                warnings,
            )
        )
    return out


def test_csv_read_trailing_delimiter_on_data_rows(tmp_path, monkeypatch):
    """A hand-written loop's ``f"{step},{loss},\\n"`` ends every data row with a separator the
    header lacks: the columns stay where the header puts them (pandas alone took the first
    column for an index and shifted every series by one; without pandas every row was
    skipped)."""
    p = tmp_path / "metrics.csv"
    p.write_text("step,loss\n1,2.0,\n2,1.5,\n3,1.2,\n")
    for cols, warnings in _csv_read_both(p, monkeypatch):
        assert cols == {"step": [1.0, 2.0, 3.0], "loss": [2.0, 1.5, 1.2]}
        assert warnings == []


def test_csv_read_rows_numbers_as_pandas_reads_them(tmp_path, monkeypatch):
    """Without pandas a cell is a number when pandas reads it as one: Python's ``float``
    also takes ``1_000`` and non-ASCII digits (full-width ``１.５``), which pandas counts
    as cells that are not numbers."""
    p = tmp_path / "metrics.csv"
    p.write_text("step,loss\n1,1_000\n2,\uff11.\uff15\n3,1.2\n4,1e3\n", encoding="utf-8")
    with_pandas, without = _csv_read_both(p, monkeypatch)
    assert with_pandas[0]["loss"] == [None, None, 1.2, 1000.0]
    assert without == with_pandas


def test_plan_says_when_it_stopped_looking(tmp_path, monkeypatch):
    """A folder with more entries than ``MAX_ENTRIES`` (or runs deeper than ``MAX_DEPTH``)
    is read in part: ``plan`` says so in ``skipped`` (it returned the runs found so far and
    nothing else, so a batch over 200,000 files reported a partial folder as the whole)."""
    import mlaudit_core.formats as formats

    for i in range(6):
        (tmp_path / f"r{i}").mkdir()
        (tmp_path / f"r{i}" / "metrics.csv").write_text("step,loss\n1,2.0\n2,1.5\n3,1.2\n")
    monkeypatch.setattr(formats, "MAX_ENTRIES", 4)
    cands, skipped = formats.plan(tmp_path)
    assert 0 < len(cands) < 6
    assert any("more than 4 entries" in why and "not looked at" in why for _, why in skipped)
    monkeypatch.setattr(formats, "MAX_ENTRIES", 200_000)
    deep = tmp_path / "x" / "a" / "b" / "c"
    deep.mkdir(parents=True)
    (deep / "metrics.csv").write_text("step,loss\n1,2.0\n2,1.5\n3,1.2\n")
    monkeypatch.setattr(formats, "MAX_DEPTH", 1)
    cands, skipped = formats.plan(tmp_path)
    assert len(cands) == 6
    assert any("deeper than 1" in why for _, why in skipped), skipped


def test_read_rows_holds_floats_not_the_rows_strings(tmp_path, monkeypatch):
    """Without pandas the reader keeps a float and two flags per cell while it reads (the
    rows' strings, kept until the end, took 950 MB for an 88 MB, 1 M-row CSV): the values,
    masks and warnings match pandas' on a table with text, logged NaN, empty and ragged cells,
    and the arrays are writable float64."""
    p = tmp_path / "metrics.csv"
    rows = ["step,loss,acc,ckpt"]
    for i in range(300):
        loss = ("nan", "", "inf", "x")[i % 4] if i % 25 == 0 else f"{2.0 / (i + 1):.6f}"
        rows.append(f"{i},{loss},{i / 300:.4f},/ckpt/{i}.pt" if i % 7 else f"{i},{loss}")
    p.write_text("\n".join(rows) + "\n")
    with_pandas, without = _csv_read_both(p, monkeypatch)
    assert without == with_pandas
    assert "ckpt" not in without[0]  # a text column is no metric

    import mlaudit_core._optional as optional
    from mlaudit_core.formats import _csv

    monkeypatch.setattr(optional, "pandas", lambda: None)
    cols, _ = _csv.read(p)
    v, mask = cols["loss"]
    assert v.dtype == np.float64 and mask.dtype == bool and v.flags.writeable
