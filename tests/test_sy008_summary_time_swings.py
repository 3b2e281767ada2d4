"""SY008 summary-time-swings on real and framework-formatted console text, through the CLI.

The real input is the nnU-Net report of tests/data/reports (b2-13: ``This epoch took 797.6 s`` ...
``1896.5 s`` on identical epochs, a system problem the maintainer confirmed), run as
``benchmarks/diagnosis_eval.py`` runs it. The other logs are written in nnU-Net's own line format
(``nnunet/training/network_training/network_trainer.py``: ``This epoch took %f s``) and in litgpt's
per-iteration format (``iter N step M: loss X, iter time: T ms``).
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from mlaudit.cli import app

DATA = Path(__file__).resolve().parent / "data"


def _audit(*args: str) -> dict:
    res = CliRunner().invoke(app, [*args, "--format", "json"])
    return json.loads(res.stdout)


def _codes(rep: dict) -> dict:
    return {f["code"]: f for f in rep["findings"]}


def _nnunet(times: list[float]) -> str:
    out = []
    for i, t in enumerate(times):
        out += [
            f"epoch:  {230 + i} ",
            f"2021-05-19 13:58:{i:02d}.000000: train loss : {-0.79 - i / 1000:.4f} ",
            f"2021-05-19 13:58:{i:02d}.000000: validation loss: {-0.82 - i / 1000:.4f} ",
            f"2021-05-19 13:58:{i:02d}.000000: lr: 0.0078 ",
            f"2021-05-19 13:58:{i:02d}.000000: This epoch took {t:f} s",
            " ",
        ]
    return "\n".join(out) + "\n"


def test_nnunet_epoch_times_that_swing_on_the_same_work_are_slow():
    (case,) = (DATA / "reports").glob("b2-13-*")
    rep = _audit("logs", str(case / "train.log"))
    f = _codes(rep)["SY008"]
    assert f["facts"]["ratio"] >= 2.0 and not f["facts"]["grew"]
    assert (rep["verdict"]["outcome"], rep["verdict"]["cause"]) == ("slow", "infra_runtime")


def test_steady_epoch_times_are_not_a_finding(tmp_path):
    log = tmp_path / "train.log"
    log.write_text(_nnunet([984.5, 797.6, 801.2, 810.9, 795.3, 805.0]))
    rep = _audit("logs", str(log))
    assert "SY008" not in _codes(rep)
    assert rep["verdict"]["outcome"] != "slow"
    log.write_text(
        _nnunet([984.5, 797.6, 801.2, 1810.9, 795.3, 805.0])
    )  # one epoch at 2.3x, same text
    assert _codes(_audit("logs", str(log)))["SY008"]["facts"]["ratio"] > 2.2


def test_per_iteration_times_at_consecutive_steps_are_left_to_the_per_step_detectors(tmp_path):
    log = tmp_path / "train.log"
    times = [5439.3, 1806.4, 1831.1, 1037.1, 2145.4, 1352.5, 1500.0]
    log.write_text(
        "".join(
            f"iter {i} step {i}: loss {2.0 - i / 10:.4f}, iter time: {t:.2f}ms\n"
            for i, t in enumerate(times)
        )
    )
    assert "SY008" not in _codes(_audit("logs", str(log)))


def test_a_millisecond_step_time_that_doubles_is_not_a_slowdown_to_act_on(tmp_path):
    log = tmp_path / "train.log"
    log.write_text(_nnunet([0.012, 0.005, 0.005, 0.011, 0.005, 0.005]))
    assert "SY008" not in _codes(_audit("logs", str(log)))
