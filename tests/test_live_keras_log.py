"""``mlaudit watch PATH --live`` on a real Keras ``CSVLogger('training.log')`` (Keras' own
example file name): the ``.log`` file is a CSV, not a console log. Read as a console log it gave
no training point at all (new-user pass, session 3)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

os.environ.setdefault("KERAS_BACKEND", "torch")  # keras 3 without TensorFlow (frameworks extra)
pytest.importorskip("torch")
pytest.importorskip("keras")

from mlaudit_core.live.files import LocalLiveSource, is_csv  # noqa: E402

TRAIN = textwrap.dedent("""
    import os, sys
    os.environ["KERAS_BACKEND"] = "torch"
    import numpy as np, keras
    rng = np.random.default_rng(0)
    x = rng.normal(size=(256, 8)).astype("float32"); y = (x[:, 0] > 0).astype("int64")
    m = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16, activation="relu"),
                          keras.layers.Dense(2, activation="softmax")])
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    m.fit(x, y, validation_split=0.25, epochs=3, batch_size=32, verbose=0,
          callbacks=[keras.callbacks.CSVLogger(sys.argv[1])])
""")


def test_a_keras_training_log_is_followed_as_a_csv(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    log = run / "training.log"
    (run / "console.log").write_text("Epoch 1/3\n")  # a real console log beside it stays one
    env = {**os.environ, "KERAS_BACKEND": "torch"}
    subprocess.run([sys.executable, "-c", TRAIN, str(log)], check=True, timeout=600, env=env)
    assert log.read_text().startswith("epoch,")
    assert is_csv(log) and not is_csv(run / "console.log")

    src = LocalLiveSource([run])
    infos = list(src.list_running().values())
    assert len(infos) == 1
    tail = src.read(infos, {})[infos[0].ref]
    steps, _, values = tail.points["loss"]
    assert list(steps) == [0, 1, 2] and len(values) == 3
    assert len(tail.points["val_loss"][2]) == 3

    # the command a user runs: a --once poll that alerts nothing still says what it read
    mlaudit = str(Path(sys.executable).with_name("mlaudit"))
    p = subprocess.run(
        [mlaudit, "watch", str(run), "--live", "--once", "--state", str(tmp_path / "live.sqlite")],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert p.returncode == 0, p.stderr
    assert f"live, one poll of 1 local path: {run.resolve()}" in p.stderr, p.stderr
    assert "1 run(s) followed" in p.stderr
    read = int(p.stderr.split("run(s) followed, ")[1].split(" point(s)")[0])
    assert read >= 4 * 3  # loss, accuracy, val_loss, val_accuracy over 3 epochs (+ console)
