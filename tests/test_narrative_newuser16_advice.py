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


def test_nan_run_actions_agree_with_the_summary_on_the_learning_rate():
    # a plain PyTorch print loop whose hand-written BCE went NaN after the loss fell to 0.017, no
    # reduced precision: the summary says 'retry with a 10x lower learning rate'; the actions must
    # not then say 'the peak LR halved', nor 'from the last checkpoint' next to 'no checkpoint ...
    # can exist'
    r = _report("pt_handwritten_bce_nan_at_step_30.log")
    assert "10x lower learning rate" in r.verdict.summary
    acts = [a.action for a in r.next_actions]
    assert not any("halved" in a for a in acts), acts
    assert any("lowered 10x or more" in a for a in acts), acts
    assert not any("from the last checkpoint" in a for a in acts), acts
