"""The first next action of a crash on host memory (verdict/narrative.py, the ``host-memory`` row of
mlaudit_core/exception_causes.py): shrink the allocation or give the job more RAM, not "reproduce the
failure on one batch" (new-user pass 2026-12-06: every MemoryError run, from a console, W&B offline,
ClearML offline, was told to replay the step that cannot fit).

The run: a training loop that prints its epochs, then asks numpy for an array no machine holds
(10**13 float64 values, 72.8 TiB: malloc refuses at once, nothing is touched), captured as users
capture it (``python train.py > train.log 2>&1``); numpy raises ``_ArrayMemoryError: Unable to
allocate 72.8 TiB for an array with shape (10000000000000,) and data type float64``.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from mlaudit_core import audit
from mlaudit_core.formats import load_path

pytestmark = pytest.mark.e2e

TRAIN = """
import numpy as np
rng = np.random.default_rng(0)
w = np.zeros(20)
X = rng.normal(size=(256, 20)); y = X[:, 0] > 0
for epoch in range(8):
    p = 1 / (1 + np.exp(-X @ w))
    w -= 0.5 * X.T @ (p - y) / len(y)
    loss = -np.mean(y * np.log(p + 1e-9) + (1 - y) * np.log(1 - p + 1e-9))
    print(f"epoch {epoch} loss {loss:.4f}", flush=True)
features = np.ones((10**13,))
"""


def test_host_memory_crash_first_action_shrinks_the_allocation(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(TRAIN)
    log = tmp_path / "train.log"
    with log.open("wb") as out:  # python train.py > train.log 2>&1
        proc = subprocess.run(
            [sys.executable, str(script)], stdout=out, stderr=subprocess.STDOUT, timeout=120
        )
    text = log.read_text()
    assert proc.returncode == 1 and "Unable to allocate" in text and "MemoryError" in text, text[
        -800:
    ]

    ((_, run),) = load_path(log).runs
    report = audit(run)
    v = report.verdict
    assert (v.outcome.value, v.cause.value) == ("crashed", "infra_runtime"), v.summary
    first = report.next_actions[0].action
    line = (
        TRAIN.splitlines().index("features = np.ones((10**13,))") + 1
    )  # the user's line, not numpy's frame
    assert first.startswith(f"Shrink what is allocated at {script}:{line} "), first
    assert "more host RAM" in first
    assert not any(a.action.startswith("Reproduce the failure") for a in report.next_actions)
