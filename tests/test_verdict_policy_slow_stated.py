"""verdict.policy._slow_stated (V18b) and verdict.statements.stated_input_slowness on real reports whose
slowness is told in words and whose thread names the input pipeline (tests/data/reports):

* b14-14: 'only got 37 epochs, much slow than 4 gpus finishing 75 epoches per day in your paper'; the
  reporter confirms 'I set the num_workers to be 4 and it worked now!': slow, data_config;
* b16-02: three KAIR lines 200 iterations apart (6m51s each) that read healthy on their own; 'the computation
  is very slow', the maintainer names the I/O bottleneck and LMDB: slow, infra_runtime;
* b6-02: 'It takes too much time to generate batches!': slow, infra_runtime.
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from mlaudit.cli import app
from mlaudit_core.verdict.statements import stated_input_slowness

REPORTS = Path(__file__).resolve().parent / "data" / "reports"


def _verdict(prefix: str, context: Path | None = None) -> dict:
    (case,) = REPORTS.glob(prefix + "*")
    args = [
        "logs",
        *map(str, sorted(case.glob("*.log"))),
        "--config",
        str(context or case / "context.txt"),
    ]
    return json.loads(CliRunner().invoke(app, [*args, "--format", "json"]).stdout)["verdict"]


def test_a_slowness_told_in_words_with_the_input_side_named_is_slow(tmp_path):
    """Before: b14-14 and b6-02 unknown/inconclusive, b16-02 succeeded/healthy."""
    v = _verdict("b14-14-")
    assert (v["rule"], v["outcome"], v["cause"]) == ("V18b", "slow", "data_config")
    assert "num_workers" in v["summary"] and "much slow than" in v["summary"]
    v = _verdict("b16-02-")
    assert (v["rule"], v["outcome"], v["cause"]) == ("V18b", "slow", "infra_runtime")
    assert "I/O bottleneck" in v["summary"]
    v = _verdict("b6-02-")
    assert (v["rule"], v["outcome"], v["cause"]) == ("V18b", "slow", "infra_runtime")
    # b16-02 without the maintainer's answer: slowness stated, nothing names the input side
    (case,) = REPORTS.glob("b16-02-*")
    ctx = tmp_path / "context.txt"
    ctx.write_text(
        "\n".join(
            x for x in (case / "context.txt").read_text().splitlines() if "maintainer" not in x
        )
    )
    assert _verdict("b16-02-", ctx)["rule"] != "V18b"


def test_stated_input_slowness_needs_an_asserted_slowness():
    params = {"maintainer NAME": "Reading the images from the HDD is the bottleneck, use an SSD."}
    assert stated_input_slowness(["The training is extremely slow."], params)[0] == "storage"
    for said in (
        "Is the training very slow?",
        "The training is not slow at all.",
        "If it gets slow, tell me.",
    ):
        assert stated_input_slowness([said], params) is None, said
    # the worker count is the cause only when the thread confirms the change fixed it
    workers = {
        "maintainer NAME": "Set num_workers to 4.",
        "reporter": "That fixed it, it works now.",
    }
    assert stated_input_slowness(["It is very slow."], workers)[0] == "workers"
    assert (
        stated_input_slowness(["It is very slow."], {"maintainer NAME": "Set num_workers to 4."})[0]
        == "input"
    )


def test_an_idle_gpu_and_the_frameworks_few_workers_warning_are_an_input_bound_run():
    """Report b20-09 (NeMo ASR under PyTorch Lightning: 'Volatile GPU-util indicates 0%' with the GPU memory
    full, and Lightning's warning that the dataloader 'does not have many workers which may be a bottleneck.
    Consider increasing the value of the `num_workers` argument'; the maintainer: raise num_workers): slow,
    the worker setting (data_config); was unknown/inconclusive ('no metric was logged at all'). The warning
    is the installed Lightning's own text."""
    import inspect

    from lightning.pytorch.trainer.connectors import data_connector

    assert "does not have many workers which may be a bottleneck" in inspect.getsource(
        data_connector
    )
    v = _verdict("b20-09-")
    assert (v["rule"], v["outcome"], v["cause"]) == ("V18b", "slow", "data_config"), v["summary"]
    assert "GPU-util indicates 0%" in v["summary"] and "num_workers" in v["summary"]
