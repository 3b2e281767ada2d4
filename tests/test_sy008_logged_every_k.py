"""SY008 summary-time-swings on step times logged every k iterations and on per-epoch records counted
as steps: the time the slow points cost is counted for the k steps each point stands for.

The logs are made by a real training loop (torch, a linear model on random data) printing as nanoGPT
prints (``iter N: loss L, time Tms`` every 10 iterations) or one record per epoch; from a chosen point a
slower data loader (a sleep per batch) triples the step time, as a throttled disk or a CPU-bound loader
does (a clear margin over SY008's 2x factor: a doubled sleep is 1.9-2.1x of the measured step time).
"""

from __future__ import annotations

import json
import time

import pytest
from typer.testing import CliRunner

from mlaudit.cli import app

torch = pytest.importorskip("torch")


def _train(log, *, iters: int, every: int, slow_from: int, per_epoch: bool) -> None:
    torch.manual_seed(0)
    model = torch.nn.Linear(32, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(256, 32), torch.randn(256, 1)
    with log.open("w") as fh:
        for it in range(iters):
            t0 = time.perf_counter()
            if it >= slow_from:
                time.sleep(0.1)  # the loader now waits for each batch
            time.sleep(0.05)
            loss = torch.nn.functional.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            dt = time.perf_counter() - t0
            if it % every == 0:
                if per_epoch:
                    fh.write(
                        f"epoch {it // every + 1} loss {loss.item():.4f} time {dt * every:.1f}s\n"
                    )
                else:
                    fh.write(f"iter {it}: loss {loss.item():.4f}, time {dt * 1000:.2f}ms\n")


@pytest.mark.parametrize("per_epoch", [False, True])
def test_a_step_time_that_triples_midway_is_slow(tmp_path, per_epoch):
    log = tmp_path / "train.log"
    _train(log, iters=60, every=10, slow_from=30, per_epoch=per_epoch)
    v = json.loads(CliRunner().invoke(app, ["logs", str(log), "--format", "json"]).stdout)[
        "verdict"
    ]
    assert (v["outcome"], v["cause"]) == ("slow", "infra_runtime"), v["summary"]


def test_a_steady_step_time_is_not_slow(tmp_path):
    log = tmp_path / "train.log"
    _train(log, iters=60, every=10, slow_from=10**9, per_epoch=False)
    v = json.loads(CliRunner().invoke(app, ["logs", str(log), "--format", "json"]).stdout)[
        "verdict"
    ]
    assert v["outcome"] != "slow", v["summary"]
