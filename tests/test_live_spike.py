"""Unrecovered loss spike (LV008): a spike that does not come back within N points alerts; a
spike that recovers does not.

* The rule on small tails (a flat loss with a one-point spike, a lasting jump, a jump that
  comes back late) and its state surviving JSON (the watcher's state file).
* Real PyTorch runs (tests/data/live/torch_lr_bump.py: an MLP trained with SGD, logged with
  ``torch.utils.tensorboard.SummaryWriter`` in a subprocess while the live monitor polls its
  log directory): a lasting LR bump gets one LV008 alert, a two-step LR blip whose spike
  recovers gets none, and an unchanged run gets no live alert at all.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import threading
from pathlib import Path

import pytest

HERE = Path(__file__).parent


def _run(values, th=None, every=1):
    """Feed ``values`` ``every`` points per poll; returns the slots seen at each poll."""
    from mlaudit_core.live import LiveRun, LiveThresholds

    th = th or LiveThresholds()
    r = LiveRun()
    seen = []
    for i in range(0, len(values), every):
        chunk = values[i : i + every]
        steps = list(range(i, i + len(chunk)))
        r.feed({"train/loss": (steps, [1000.0 + s for s in steps], chunk)}, 1000.0 + i, th)
        r = LiveRun.from_json(json.loads(json.dumps(r.to_json())))  # the state file round trip
        seen.append(set(r.conditions(1000.0 + i, th, running=False)))
    return seen


def _noisy(level, n, rng, sd=0.01):
    return [level + rng.gauss(0, sd) for _ in range(n)]


def test_a_spike_that_recovers_is_not_an_alert():
    rng = random.Random(0)
    vals = _noisy(1.0, 200, rng) + [3.0, 2.5] + _noisy(1.0, 200, rng)
    assert not any("spike" in s for s in _run(vals))


def test_a_lasting_jump_alerts_after_the_recovery_window_and_clears_when_back():
    from mlaudit_core.live import LiveRun, LiveThresholds

    rng = random.Random(1)
    vals = _noisy(1.0, 200, rng) + _noisy(1.7, 150, rng) + _noisy(1.0, 30, rng)
    seen = _run(vals)
    first = next(i for i, s in enumerate(seen) if "spike" in s)
    # the burst is the jump's first points until the trailing median catches up (~13 points);
    # the alert comes 100 points after its last spike point
    assert 300 <= first <= 330, first
    assert all("spike" in s for s in seen[first:349])
    assert "spike" not in seen[-1]  # back at the old level: the condition clears
    # the finding carries the spike's step, its trailing median and the rule's window
    th = LiveThresholds()
    r = LiveRun()
    r.feed(
        {"train/loss": (list(range(340)), [1000.0 + i for i in range(340)], vals[:340])}, 2000.0, th
    )
    f = r.conditions(2000.0, th, running=False)["spike"]
    assert f.code == "LV008" and f.facts["step"] == 200
    assert f.facts["trailing_median"] == pytest.approx(1.0, abs=0.02)
    assert f.facts["recovery_points"] == 100
    assert f.evidence[0].metric == "train/loss" and f.evidence[0].step_start == 200


def test_a_late_recovery_inside_one_poll_is_still_reported():
    """100 points without recovery happened, even if the loss came back before the next poll."""
    rng = random.Random(2)
    vals = _noisy(1.0, 100, rng) + _noisy(2.0, 130, rng) + _noisy(1.0, 20, rng)
    seen = _run(vals, every=len(vals))
    assert seen == [{"spike"}]
    rng = random.Random(2)
    short = _noisy(1.0, 100, rng) + _noisy(2.0, 60, rng) + _noisy(1.0, 20, rng)
    assert _run(short, every=len(short)) == [set()]  # back within the window: nothing


def test_spike_is_a_stop_name():
    from mlaudit_core.live import parse_stop_on
    from mlaudit_core.live.detectors import stop_name

    assert parse_stop_on("nan,spike") == ("nan", "spike")
    assert stop_name("LV008") == "spike"


def test_real_torch_lr_bump_alerts_and_blip_does_not(tmp_path):
    """Three real runs trained at the same time, one monitor polling their log directories
    every 0.3 s while they are written."""
    pytest.importorskip("torch")
    from mlaudit_tensorboard.live import TensorBoardLiveSource

    from mlaudit_core.live import LiveConfig, LiveMonitor
    from mlaudit_core.service import StateStore
    from mlaudit_core.settings import Settings

    modes = ("bump", "blip", "steady")
    dirs = {m: tmp_path / m for m in modes}
    for d in dirs.values():
        d.mkdir()
    with StateStore(tmp_path / "s.sqlite", "test") as st:
        mon = LiveMonitor(
            TensorBoardLiveSource(list(dirs.values())),
            st,
            Settings(),
            LiveConfig(poll_interval_s=0.3, write_back=True, cooldown_s=0),
        )
        procs = {
            m: subprocess.Popen(
                [
                    sys.executable,
                    str(HERE / "data" / "live" / "torch_lr_bump.py"),
                    str(d),
                    m,
                    "0.004",
                ],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for m, d in dirs.items()
        }
        th = threading.Thread(target=mon.run, daemon=True)
        th.start()
        try:
            outs = {m: p.communicate(timeout=600) for m, p in procs.items()}
        finally:
            mon.stop_event.set()
            th.join(60)
        for m, p in procs.items():
            assert p.returncode == 0, outs[m][1][-2000:]
        mon.poll_once()  # the last points
    runs = {m: json.loads(outs[m][0].strip().splitlines()[-1]) for m in modes}
    events = {
        m: [(e.kind, e.finding.code, e.finding) for e, _ in mon.sent if e.ref == str(d.resolve())]
        for m, d in dirs.items()
    }

    bump = runs["bump"]  # what the run did (measured by the script, not by mlaudit)
    assert bump["finite"] and bump["last100"] > 1.3 * bump["before"]  # the loss stayed up
    alerts = [f for k, c, f in events["bump"] if k == "alert" and c == "LV008"]
    assert len(alerts) == 1, [(k, c, f.message) for k, c, f in events["bump"]]
    assert alerts[0].facts["step"] >= 300  # not before the bump
    doc = json.loads((dirs["bump"] / "mlaudit" / "live.json").read_text())
    assert "LV008" in [e["code"] for e in doc["episodes"]]

    blip = runs["blip"]
    assert blip["peak"] > 10 * blip["before"]  # a real spike...
    assert blip["last100"] < 1.3 * blip["before"]  # ...that recovered
    assert [c for _k, c, _f in events["blip"] if c == "LV008"] == [], [
        f.message for *_x, f in events["blip"]
    ]

    assert runs["steady"]["finite"]
    assert events["steady"] == [], [f.message for *_x, f in events["steady"]]
