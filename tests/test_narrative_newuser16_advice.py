"""The report's next actions (mlaudit_core/verdict/narrative.py) on runs of the session-16 new-user pass
(files in tests/data/newuser16, README there): a next action never contradicts a statement of the
same report."""

from __future__ import annotations

from pathlib import Path

from mlaudit_core import audit
from mlaudit_core.formats import load_path

DATA = Path(__file__).parent / "data" / "newuser16"


def _report(name: str, fmt: str | None = None):
    ((_, run),) = load_path(DATA / name, fmt).runs
    return audit(run)


def test_best_checkpoint_action_says_when_the_run_records_no_checkpoint():
    # Lightning, StepLR(gamma=10), Trainer(enable_checkpointing=False): the rerun action says 'this run
    # records none'; the best-checkpoint action must not then say 'Use the checkpoint at step 224'
    # as if one existed
    r = _report("lightning_steplr_gamma10")
    assert r.verdict.outcome.value == "diverged"
    acts = [a.action for a in r.next_actions]
    assert any("this run records none" in a for a in acts), acts
    (best,) = [a for a in acts if a.startswith("Use the checkpoint at step")]
    assert "if one was saved there (this run records no checkpoint)" in best, best
