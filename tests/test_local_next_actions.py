"""A healthy local run (a real Keras fit's console log) gets no 'Tag this run mlaudit.baseline'
action: a local file has no tags and `mlaudit PATH` takes no baseline (new-user pass, session 3:
the Keras console log of a healthy fit was told to tag itself)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("torch")

from mlaudit_core.audit import audit  # noqa: E402
from mlaudit_core.formats import load_path  # noqa: E402
from mlaudit_core.report import Outcome  # noqa: E402

TRAIN = textwrap.dedent("""
    import os
    os.environ["KERAS_BACKEND"] = "torch"
    import numpy as np, keras
    keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2000, 16)).astype("float32")
    y = (x @ rng.normal(size=(16, 4)) + 0.5 * rng.normal(size=(2000, 4))).argmax(1)
    m = keras.Sequential([keras.Input((16,)), keras.layers.Dense(64, activation="relu"),
                          keras.layers.Dense(4, activation="softmax")])
    m.compile(optimizer=keras.optimizers.Adam(1e-3), loss="sparse_categorical_crossentropy",
              metrics=["accuracy"])
    m.fit(x[:1600], y[:1600], validation_data=(x[1600:], y[1600:]), epochs=15, batch_size=32,
          verbose=2)
""")


def test_a_healthy_local_log_is_not_told_to_tag_itself(tmp_path):
    if importlib.util.find_spec("keras") is None:
        pytest.skip("keras is not installed (frameworks extra)")
    log = tmp_path / "keras.console.log"
    with open(log, "w") as fh:
        subprocess.run(
            [sys.executable, "-c", TRAIN],
            check=True,
            timeout=600,
            stdout=fh,
            stderr=subprocess.STDOUT,
            env={**os.environ, "KERAS_BACKEND": "torch"},
        )
    loaded = load_path(log)
    _, run = loaded.runs[0]
    assert run.identity.tracker not in ("mlflow", "wandb", "clearml")
    report = audit(run)
    assert report.verdict.outcome is Outcome.SUCCEEDED, report.verdict.summary
    assert not [a for a in report.next_actions if "mlaudit.baseline" in a.action]
    # the same run as a tracker's run is still told to become a baseline (a tag is possible)
    run.identity.tracker = "mlflow"
    assert [a for a in audit(run).next_actions if "mlaudit.baseline" in a.action]
