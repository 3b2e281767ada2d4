"""``mlaudit watch PATH --live`` asks the tracker plugins which local paths they follow
(``local_live_source``, issue 22): a TensorBoard log directory goes to the TensorBoard
plugin's live source, found through its entry point, with no plugin named by the command line.
Event files are written by the real tensorboardX writer; the watcher runs as a subprocess."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

from tensorboardX import SummaryWriter


def _tb_run(d: Path, nan_from: int | None = None) -> Path:
    w = SummaryWriter(str(d))
    for i in range(60):
        w.add_scalar(
            "train/loss",
            float("nan") if nan_from is not None and i >= nan_from else 2.0 * math.exp(-i / 20),
            i,
        )
    w.close()
    return d


def test_paths_are_routed_to_the_plugin_that_follows_them(tmp_path):
    from mlaudit_tensorboard.live import TensorBoardLiveSource

    from mlaudit.cli.cmd_watch_path import make_source
    from mlaudit_core.live.files import CompositeSource, LocalLiveSource
    from mlaudit_core.plugins import local_live_sources

    tb = _tb_run(tmp_path / "tb")
    csv = tmp_path / "metrics.csv"
    csv.write_text("step,loss\n1,0.5\n")
    sources, rest = local_live_sources([tb, csv])
    assert [type(s) for s in sources] == [TensorBoardLiveSource] and rest == [csv]
    assert isinstance(make_source([tb]), TensorBoardLiveSource)
    # paths no plugin claims are followed as local files, and offered to the plugins again
    # when something is created in them (tests/test_live_discovery.py)
    only = make_source([csv])
    assert isinstance(only, CompositeSource) and only.claim is local_live_sources
    assert [type(s) for s in only.sources] == [LocalLiveSource]
    both = make_source([tb, csv])
    assert [type(s) for s in both.sources] == [TensorBoardLiveSource, LocalLiveSource]


def test_watch_path_live_on_a_tensorboard_run_alerts(tmp_path):
    tb = _tb_run(tmp_path / "run1", nan_from=40)
    p = subprocess.run(
        [
            sys.executable,
            "-c",
            "from mlaudit.cli import main; main()",
            "watch",
            str(tb),
            "--live",
            "--once",
            "--state",
            str(tmp_path / "w.sqlite"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env=dict(os.environ, COLUMNS="200"),
    )
    assert p.returncode == 0, p.stderr
    assert "LV001" in p.stderr and "train/loss is nan at step 40" in p.stderr, p.stderr
    assert "LV001" in json.dumps(json.loads((tb / "mlaudit" / "live.json").read_text()))
