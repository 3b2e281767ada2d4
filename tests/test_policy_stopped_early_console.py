"""The verdict's wording for a run that stopped before its planned end (policy._stopped_early, V17)
when its console was read: a Keras fit of 3000 epochs, its console captured as users capture it
(``python train.py > train.log 2>&1``), killed with SIGKILL or SIGTERM after a few epochs.

Neither signal leaves a line in the console (SIGKILL cannot be caught; Python's default SIGTERM
handler prints nothing), so the console ends mid-run. The verdict is crashed / inconclusive from
the planned length (``Epoch N/3000``); the summary must not ask for the console log it was given,
and the first next action says where the end is recorded (the scheduler, the kernel log).
"""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time

import pytest

from mlaudit_core import audit
from mlaudit_core.formats import load_path

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

KERAS_LONG = """
import os
os.environ.setdefault("KERAS_BACKEND", "torch")
import numpy as np, keras
keras.utils.set_random_seed(0)
rng = np.random.default_rng(0)
X = rng.normal(size=(512, 20)).astype("float32"); y = (X[:, 0] > 0).astype("int32")
m = keras.Sequential([keras.Input((20,)), keras.layers.Dense(32, activation="relu"), keras.layers.Dense(2)])
m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
m.fit(X, y, validation_split=0.2, epochs=3000, batch_size=64)
"""


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_stopped_early_console_read_names_where_the_end_is_recorded(tmp_path, sig):
    if importlib.util.find_spec("keras") is None or importlib.util.find_spec("torch") is None:
        pytest.skip("keras with the torch backend is not installed")
    script = tmp_path / "train.py"
    script.write_text(KERAS_LONG)
    log = tmp_path / "train.log"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    with log.open("wb") as out:  # python train.py > train.log 2>&1
        proc = subprocess.Popen(
            [sys.executable, str(script)],
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=tmp_path,
            env=env,
        )
        try:
            deadline = time.monotonic() + 600
            while b"Epoch 6/3000" not in log.read_bytes():
                assert proc.poll() is None, log.read_text(errors="replace")[-2000:]
                assert time.monotonic() < deadline, "keras printed no 6th epoch in 600 s"
                time.sleep(0.2)
        finally:
            proc.send_signal(sig)
            proc.wait(timeout=60)
    assert proc.returncode == -sig
    assert "Traceback" not in log.read_text(errors="replace")

    ((_, run),) = load_path(log).runs
    report = audit(run)
    v = report.verdict
    assert (v.outcome.value, v.cause.value) == ("crashed", "inconclusive"), v.summary
    assert "of the 3000 planned" in v.summary
    assert "attach the console log" not in v.summary.lower()
    assert "console ends without a crash signature" in v.summary
    first = report.next_actions[0].action
    assert "sacct" in first and "dmesg" in first, [a.action for a in report.next_actions]
