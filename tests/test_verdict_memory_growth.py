"""verdict.memory_growth and rule V01b (verdict.policy._memory_leak): memory that grew until the run died is
a leak in the code; memory that is simply too small for the job is infra. Real reports: b21-07 (Keras
hourglass killed at epoch 25/100, 'the RAM loses more or less 1 GB of free memory' at each epoch, the
maintainer 'noticed the mem leak'), b21-08 (SpareNet CUDA OOM after 2 epochs, 'a slow and steady increase'
of GPU memory), b19-10 (YOLOX 'Killed' at epoch 7, the maintainer names 'the memory leaky bug' and is
fixing it); and the capacity cases that must stay infra: b22-01 (RAM grows then stabilises, the dataset
cached in memory), b16-07 (replay memory growing, the maintainer says 'insufficient memory'), b22-11
(OOM killer, the scene takes ~13G of the 16 GB), b12-09 (CUDA OOM, the GPU too small), b17-03 (a SIGKILL; the
maintainer deduces from the code that memory would grow, none was seen)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from mlaudit.cli import app
from mlaudit_core.formats.consolelog import load_logs
from mlaudit_core.verdict.memory_growth import (
    logged_memory_growth,
    memory_series_growth,
    stated_memory_growth,
)

REPORTS = Path(__file__).resolve().parent / "data" / "reports"
RUNS = Path(__file__).resolve().parent / "data" / "realworld" / "runs"


def _verdict(case: Path) -> dict:
    logs = sorted(str(p) for p in case.glob("*.log"))
    args = ["logs", *logs, "--config", str(case / "context.txt"), "--format", "json"]
    return json.loads(CliRunner().invoke(app, args).stdout)["verdict"]


@pytest.mark.parametrize("prefix", ["b21-07-", "b21-08-", "b19-10-", "b20-04-"])
def test_memory_that_grew_until_the_run_died_is_a_leak_in_the_code(prefix):
    """Before: b21-07 crashed/inconclusive (stopped at epoch 25 of 100), b21-08 and b19-10
    crashed/infra_runtime (an OOM, a kill). b20-04 (a captioning model whose training fits at batch 96-128
    while validate() runs out of CUDA memory; 'That solved the issue' after the maintainer's 'with
    torch.no_grad():') was crashed/infra_runtime: the memory held by graphs the code kept."""
    (case,) = REPORTS.glob(prefix + "*")
    v = _verdict(case)
    assert (v["rule"], v["outcome"], v["cause"]) == ("V01b", "crashed", "correctness_bug"), v
    assert "leak" in v["summary"] or "no_grad" in v["summary"]


@pytest.mark.parametrize("prefix", ["b22-01-", "b16-07-", "b22-11-", "b12-09-", "b17-03-"])
def test_memory_too_small_for_the_job_stays_an_infra_crash(prefix):
    (case,) = REPORTS.glob(prefix + "*")
    v = _verdict(case)
    assert v["rule"] != "V01b" and (v["outcome"], v["cause"]) == ("crashed", "infra_runtime"), v


def test_stated_memory_growth_reads_asserted_growth_and_leaks_only():
    assert stated_memory_growth(["GPU memory keeps going up every epoch."], {})[0] == "growth"
    assert stated_memory_growth(["The leak is about 0.5 GB per epoch."], {})[0] == "leak"
    assert (
        stated_memory_growth(
            ["This may be caused by the memory leak bug. We can reproduce this bug."], {}
        )[0]
        == "leak"
    )
    for said in (
        "Does the memory grow over time?",
        "Maybe there is a memory leak.",
        "The memory does not increase during training.",
        "If the RAM usage grows, lower the workers.",
        "Try to increase the memory limit of the container.",
        "Memory usage increases at the beginning and then stabilizes.",
        # deduced from the code, not seen (report b17-03, labelled infra_runtime: a kill with no growth seen)
        "The running sum keeps each step's tensor attached to the graph, so memory grows with every step.",
    ):
        assert stated_memory_growth([said], {}) is None, said
    explained = {"maintainer NAME": "The dataset is read into working memory by design."}
    assert stated_memory_growth(["RAM usage grows steadily."], explained)[0] == "capacity"


#: A real torch training loop that prints this process's resident memory (MiB, /proc/self/statm) after each
#: of 32 steps; ``leak`` keeps each loss tensor with its graph for logging, as SpareNet's runner did (report
#: b21-08), else loss.item().
_LOOP = """
import sys, torch
torch.set_num_threads(1)
torch.manual_seed(0)
leak = sys.argv[1] == "leak"
x = torch.randn(512, 512)
model = torch.nn.Linear(512, 512)
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
kept = []
for _ in range(32):
    loss = model(torch.tanh(model(x))).pow(2).mean()
    opt.zero_grad()
    loss.backward(retain_graph=leak)
    opt.step()
    kept.append(loss if leak else loss.item())
    with open("/proc/self/statm") as f:
        print(int(f.read().split()[1]) * 4096 / 2**20, flush=True)
"""


@pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="reads RSS from /proc (Linux)")
def test_a_memory_series_measured_over_a_leaking_torch_loop_grows_and_a_clean_one_does_not():
    """The resident memory of a fresh process measured at each step of a real torch training loop that
    keeps its loss tensors for logging grows to the end; the same loop keeping loss.item() holds."""
    pytest.importorskip("torch")

    def rss(mode: str) -> np.ndarray:
        out = subprocess.run(
            [sys.executable, "-c", _LOOP, mode], capture_output=True, text=True, check=True
        ).stdout
        return np.asarray([float(x) for x in out.split()])

    steps = np.arange(32, dtype=float)
    assert memory_series_growth(steps, rss("clean")) is None
    got = memory_series_growth(steps, rss("leak"))
    assert got is not None and got[2] > got[1]


def test_a_logged_gpu_memory_peak_that_holds_after_start_up_is_no_growth():
    """Real YOLOX consoles (realworld tkp153--ML: yolox_s, 235 'mem:' points 3775 -> 4717 MB held from
    early on; yolox_nano)."""
    for name in ("yolox_s", "yolox_nano"):
        run = load_logs([RUNS / "tkp153--ML" / "YOLOX_outputs" / name / "train_log.txt"])
        assert "perf/gpu_mem_mb" in run.metrics
        assert logged_memory_growth(run) is None
