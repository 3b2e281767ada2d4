"""The console reader's data bars: Ultralytics prefixes its dataset scan with the split
(``train: Scanning /data/labels/train.cache... 96300 images, 2 backgrounds, 0 corrupt: 100%|...|
96300/96300``), a description longer than the 80 characters the bar's description is looked for in; the
bar counts images, not training steps. Real input: the W&B output.log of own f25b1-06 (a finished
100-epoch Ultralytics run), whose scan line was read as a plan of 96300 steps and the run called crashed
at "step 100 of the 96300 planned"."""

from __future__ import annotations

from pathlib import Path

from mlaudit_core.audit import audit
from mlaudit_core.formats import load_path
from mlaudit_core.report import Outcome

RUN = (
    Path(__file__).parent
    / "data"
    / "realworld"
    / "runs"
    / "klrc--person_veh_detection.pytorch"
    / "wandb"
    / "latest-run"
)


def test_consolelog_split_prefixed_scan_bar_is_no_plan():
    run = list(load_path(RUN).runs)[-1][1]
    assert "log.total_steps" not in run.params, run.params.get("log.total_steps")
    rep = audit(run)
    assert rep.verdict.outcome is Outcome.SUCCEEDED, rep.verdict.summary
