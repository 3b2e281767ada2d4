"""The healthy rule's summary (policy._healthy, V21) when nothing shows the run's end: a plain PyTorch
loop writing TensorBoard scalars with ``SummaryWriter``, killed with SIGKILL part-way through a
planned 3000 epochs. Event files have no end marker and the planned length is not in them,
so what is left looks like a shorter run; the summary must not say "the run finished", and it says
what would tell (new-user pass 2026-12-06: killed, SIGTERM'd and hung runs were all "the run
finished"). The outcome itself is the verdict owners' call and is not asserted here; the test needs
the healthy rule to decide the run, and fails (never skips) when it does not.

Every scalar is written with ``walltime`` = the loop's start + 1 ms per step (``add_scalar``'s
``walltime`` argument), not the time of the call: on a loaded 2-core CI machine the process is
descheduled for seconds between two events, and those pauses read as a throughput fall (SY001)
that took the verdict away from the healthy rule (the test skipped under load).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from mlaudit_core import audit
from mlaudit_core.formats import load_path

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

TRAIN = """
import sys, time, torch
from torch import nn
from torch.utils.tensorboard import SummaryWriter
torch.set_num_threads(1); torch.manual_seed(0)
x = torch.randn(512, 20); y = (x[:, 0] > 0).long()
m = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 2))
opt = torch.optim.SGD(m.parameters(), lr=0.05, momentum=0.9)
w = SummaryWriter(sys.argv[1])
t0, step = time.time(), 0
for epoch in range(3000):
    for i in range(0, 512, 64):
        loss = nn.functional.cross_entropy(m(x[i:i + 64]), y[i:i + 64])
        opt.zero_grad(); loss.backward(); opt.step()
        w.add_scalar("train/loss", loss.item(), step, walltime=t0 + step * 0.001); step += 1
    w.flush()
    print(f"epoch {epoch}", flush=True)
"""


def test_healthy_summary_does_not_claim_an_end_it_cannot_see(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("tensorboard")
    script = tmp_path / "train.py"
    script.write_text(TRAIN)
    log = tmp_path / "train.log"
    logdir = tmp_path / "runs" / "exp"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, str(script), str(logdir)],
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "OMP_NUM_THREADS": "1"},
        )
        try:
            deadline = time.monotonic() + 300
            while b"epoch 20\n" not in log.read_bytes():
                assert proc.poll() is None, log.read_text(errors="replace")[-2000:]
                assert time.monotonic() < deadline, "no 20th epoch in 300 s"
                time.sleep(0.1)
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL

    ((_, run),) = load_path(logdir).runs
    v = audit(run).verdict
    assert v.outcome.value == "succeeded", (
        f"the healthy rule no longer decides this run ({v.rule} {v.outcome.value}: {v.summary}): "
        "give the test a run it decides"
    )
    assert "the run finished" not in v.summary, v.summary
    assert v.summary.startswith("No failure signature in the data read, which ends with train/loss")
    assert "nothing in it shows the run reached its planned end" in v.summary
