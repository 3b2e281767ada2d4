"""Console logs made by the real frameworks, captured as users capture them, read by the console
reader with structure inference (mlaudit_core/formats/consolelog/infer.py).

Each test runs a small training script with the installed library, its stdout and stderr sent
to one file (``python train.py > train.log 2>&1``: bars, carriage returns, backspaces and ANSI
colour as the library writes them to a file), then asserts the series read and the verdict of
``mlaudit logs``. The overfit scripts train on a small set and validate on labels unrelated to
the inputs, so the validation loss rises while the training loss falls.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mlaudit.cli import app
from mlaudit_core.formats.consolelog import load_logs

KERAS = """
import os, sys
os.environ.setdefault("KERAS_BACKEND", "torch")
import numpy as np, keras
keras.utils.set_random_seed(0)
rng = np.random.default_rng(0)
x = rng.normal(size=(256, 20)).astype("float32"); y = (x[:, 0] > 0).astype("int32")
xv = rng.normal(size=(64, 20)).astype("float32"); yv = (rng.normal(size=64) > 0).astype("int32")
m = keras.Sequential([keras.Input((20,)), keras.layers.Dense(128, activation="relu"),
                      keras.layers.Dense(128, activation="relu"), keras.layers.Dense(1, activation="sigmoid")])
m.compile(optimizer=keras.optimizers.Adam(3e-3), loss="binary_crossentropy", metrics=["accuracy"])
m.fit(x, y, validation_data=(xv, yv), epochs=10, batch_size=16, verbose=int(sys.argv[1]))
"""
XGBOOST = """
import numpy as np, xgboost as xgb
rng = np.random.default_rng(0); X = rng.normal(size=(60, 10)); y = (X[:, 0] + rng.normal(size=60) > 0).astype(int)
Xv = rng.normal(size=(40, 10)); yv = (Xv[:, 0] + rng.normal(size=40) > 0).astype(int)
m = xgb.XGBClassifier(n_estimators=120, max_depth=6, learning_rate=0.3, eval_metric=["logloss", "error"])
m.fit(X, y, eval_set=[(X, y), (Xv, yv)], verbose=True)
"""
LIGHTGBM = """
import numpy as np, lightgbm as lgb
rng = np.random.default_rng(0); X = rng.normal(size=(80, 10)); y = (X[:, 0] + rng.normal(size=80) > 0).astype(int)
Xv = rng.normal(size=(40, 10)); yv = (Xv[:, 0] + rng.normal(size=40) > 0).astype(int)
m = lgb.LGBMClassifier(n_estimators=100, min_child_samples=2, learning_rate=0.2)
m.fit(X, y, eval_set=[(X, y), (Xv, yv)], eval_metric="binary_logloss", callbacks=[lgb.log_evaluation(1)])
"""
LIGHTNING = """
import sys, torch, lightning as L
from torch.utils.data import DataLoader, TensorDataset
torch.manual_seed(0)
class M(L.LightningModule):
    def __init__(s):
        super().__init__(); s.net = torch.nn.Sequential(torch.nn.Linear(20, 128), torch.nn.ReLU(), torch.nn.Linear(128, 2))
    def training_step(s, b, i):
        x, y = b; loss = torch.nn.functional.cross_entropy(s.net(x), y); s.log("train_loss", loss, prog_bar=True)
        return loss
    def validation_step(s, b, i):
        x, y = b; out = s.net(x); s.log("val_loss", torch.nn.functional.cross_entropy(out, y), prog_bar=True)
    def configure_optimizers(s): return torch.optim.Adam(s.parameters(), 1e-2)
x = torch.randn(400, 20); y = (x[:, 0] > 0).long(); xv = torch.randn(100, 20); yv = (torch.randn(100) > 0).long()
bar = L.pytorch.callbacks.TQDMProgressBar() if sys.argv[1] == "tqdm" else L.pytorch.callbacks.RichProgressBar()
t = L.Trainer(callbacks=[bar], max_epochs=8, logger=False, enable_checkpointing=False, accelerator="cpu")
t.fit(M(), DataLoader(TensorDataset(x, y), batch_size=16), DataLoader(TensorDataset(xv, yv), batch_size=50))
"""
TQDM_LOOP = """
import random
from tqdm import tqdm
random.seed(0)
loss = 2.5
for epoch in range(6):
    bar = tqdm(range(40), desc=f"epoch {epoch}")
    for i in bar:
        loss *= 0.99
        bar.set_postfix(loss=f"{loss + random.random() * 0.02:.4f}")
    print(f"epoch {epoch}: train_loss={loss:.4f} val_loss={loss * 1.1:.4f} val_acc={0.5 + epoch * 0.07:.3f}")
"""
NANOGPT = """
import time, torch
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Embedding(64, 32), torch.nn.Flatten(), torch.nn.Linear(32 * 8, 64))
opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
data = torch.randint(0, 64, (512, 9))
for it in range(120):
    t0 = time.time()
    b = data[torch.randint(0, 512, (32,))]
    loss = torch.nn.functional.cross_entropy(model(b[:, :8]), b[:, 8])
    opt.zero_grad(); loss.backward(); opt.step()
    if it % 40 == 0:
        with torch.no_grad():
            v = data[:128]; vl = torch.nn.functional.cross_entropy(model(v[:, :8]), v[:, 8])
        print(f"step {it}: train loss {loss.item():.4f}, val loss {vl.item():.4f}")
    if it % 5 == 0:
        print(f"iter {it}: loss {loss.item():.4f}, time {(time.time() - t0) * 1000:.2f}ms")
"""


def _capture(tmp_path: Path, script: str, *args: str, timeout: int = 600) -> Path:
    """Run ``script`` with the real library as a user does: ``python train.py ARGS > train.log 2>&1``."""
    src = tmp_path / "train.py"
    src.write_text(script)
    log = tmp_path / "train.log"
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    with open(log, "wb") as out:
        p = subprocess.run(
            [sys.executable, str(src), *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            timeout=timeout,
            cwd=tmp_path,
        )
    assert p.returncode == 0, log.read_text(errors="replace")[-3000:]
    return log


def _verdict(log: Path) -> dict:
    res = CliRunner().invoke(app, ["logs", str(log), "--format", "json"])
    return json.loads(res.stdout[res.stdout.index("{") :])["verdict"]


def _series(run, key):
    s = run.metrics.series(key)
    return [int(x) for x in s.steps], [float(v) for v in s.values]


@pytest.mark.parametrize("verbose", ["1", "2"])
def test_keras3_fit_log_gives_epoch_series_and_an_overfit_verdict(tmp_path, verbose):
    if importlib.util.find_spec("keras") is None or importlib.util.find_spec("torch") is None:
        pytest.skip("keras 3 with the torch backend is not installed")
    log = _capture(tmp_path, KERAS, verbose)
    if verbose == "1":
        assert b"\x1b[" in log.read_bytes() and b"\x08" in log.read_bytes()  # colour and backspaces
    for disabled in (None, ["keras"]):
        run = load_logs([log], disabled_formats=disabled)
        steps, val = _series(run, "val/loss")
        assert len(val) == 10 and steps == sorted(steps), disabled
        assert len(_series(run, "train/loss")[1]) >= 10, disabled
        assert run.params["log.epochs"] == "10"
    v = _verdict(log)
    assert v["outcome"] == "overfit", v


@pytest.mark.parametrize("bar", ["tqdm", "rich"])
def test_lightning2_fit_log_is_read(tmp_path, bar):
    pytest.importorskip("lightning")
    log = _capture(tmp_path, LIGHTNING, bar)
    run = load_logs([log])
    assert run.metrics.series("val/loss").values.size >= 1
    assert run.metrics.series("train/loss").values.size >= 1
    if bar == "tqdm":  # every epoch's bar is in the file: the run is judged
        assert _verdict(log)["outcome"] == "overfit"
    else:  # rich prints only the last state to a file: one point, not a curve
        assert run.metrics.series("val/loss").values.size == 1


def test_xgboost_eval_log_gives_both_eval_sets_and_is_judged(tmp_path):
    pytest.importorskip("xgboost")
    log = _capture(tmp_path, XGBOOST)
    run = load_logs([log])
    steps, val = _series(run, "val/logloss")
    assert steps == list(range(120))
    assert len(_series(run, "val/set_0_logloss")[1]) == 120  # the first eval set keeps its number
    assert min(val) < val[-1]  # trained past its best iteration
    assert _verdict(log)["outcome"] not in ("unknown", "succeeded")


def test_lightgbm_eval_log_gives_train_and_valid_series_and_an_overfit_verdict(tmp_path):
    pytest.importorskip("lightgbm")
    log = _capture(tmp_path, LIGHTGBM)
    run = load_logs([log])
    assert _series(run, "val/binary_logloss")[0] == list(range(1, 101))
    assert len(_series(run, "train/binary_logloss")[1]) == 100
    assert not [
        k for k in run.metrics.keys if "gain" in k
    ]  # '[Warning] ... best gain: -inf' is not a series
    assert _verdict(log)["outcome"] == "overfit"


def test_plain_tqdm_loop_log_gives_bar_and_epoch_series(tmp_path):
    log = _capture(tmp_path, TQDM_LOOP)
    for disabled in (None, ["tqdm"]):
        run = load_logs([log], disabled_formats=disabled)
        assert len(_series(run, "val/loss")[1]) == 6, disabled
        assert len(_series(run, "train/loss")[1]) >= 6, disabled
    assert _verdict(log)["outcome"] == "succeeded"


def test_nanogpt_style_log_is_read_with_and_without_its_catalogue_entries(tmp_path):
    pytest.importorskip("torch")
    log = _capture(tmp_path, NANOGPT)
    for disabled in (None, ["nanogpt"]):
        run = load_logs([log], disabled_formats=disabled)
        steps, _ = _series(run, "val/loss")
        assert steps == [0, 40, 80], disabled
        assert len(_series(run, "train/loss")[1]) >= 24, disabled
    assert _verdict(log)["outcome"] != "unknown"


FRAMEWORK_LOGS = Path(__file__).parent / "data" / "logs" / "frameworks"


def _expected_outcome(name: str) -> set[str]:
    if "diverge" in name:
        return {"diverged"}
    if "overfit" in name:
        return {"overfit"}
    if (
        name == "accelerate-healthy.log"
    ):  # a CPU run the verdict calls slow (data-loader bound), read whole
        return {"succeeded", "slow"}
    return {"succeeded"}


@pytest.mark.parametrize(
    "log",
    sorted(p.name for p in FRAMEWORK_LOGS.glob("*.log") if p.name != "lightning2-healthy.log"),
)
def test_framework_made_logs_give_the_verdict_of_their_run(log):
    """The logs made with the real libraries in tests/data/logs/frameworks (its README: versions and
    commands; Keras 2 and 3 verbose 1/2, Lightning 1.9 and 2 with tqdm and rich bars, HF Trainer,
    accelerate, XGBoost, LightGBM, a tqdm loop, timm- and nanoGPT-style loops) are judged as the run
    went, not ``unknown``. lightning2-healthy.log is left out: rich writes only the last state of
    its bar to a file, one point per series, too few for a trend."""
    v = _verdict(FRAMEWORK_LOGS / log)
    assert v["outcome"] in _expected_outcome(log), (log, v["outcome"], v["cause"])


def test_rich_bar_written_to_a_file_gives_its_one_final_state():
    run = load_logs([FRAMEWORK_LOGS / "lightning2-healthy.log"])
    assert {
        k: len(run.metrics.series(k).values) for k in ("train/loss", "val/loss", "val/accuracy")
    } == {
        "train/loss": 1,
        "val/loss": 1,
        "val/accuracy": 1,
    }
    # one point per series, and Lightning's end line ("`Trainer.fit` stopped: `max_epochs=...`
    # reached"): a finished run judged from its final values (V20e), not a curve
    v = _verdict(FRAMEWORK_LOGS / "lightning2-healthy.log")
    assert (v["outcome"], v["cause"]) == ("succeeded", "healthy"), v["summary"]
