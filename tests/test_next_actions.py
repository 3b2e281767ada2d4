"""Next actions: the fix for the diagnosed failure first, learning-rate advice scaled to the blow-up.

Each test writes a small console log, runs the real pipeline (load_logs -> audit) and reads the
ranked next actions (a new-user report, NOTES 2026-12-01 17:58: "Log throughput" ranked above the
fix, and "halve the peak LR" for a loss 1e13x its start with no good checkpoint).
"""

from __future__ import annotations

from pathlib import Path

from mlaudit_core import audit
from mlaudit_core.formats import load_path
from mlaudit_core.formats.consolelog import load_logs


def actions(tmp_path, vals):
    p = tmp_path / "train.log"
    p.write_text("\n".join(f"step={i} loss={x}" for i, x in enumerate(vals)) + "\n")
    r = audit(load_logs([p]))
    return r, [a.action for a in r.next_actions]


def test_a_blow_up_by_orders_of_magnitude_is_not_fixed_by_halving_the_lr(tmp_path):
    r, acts = actions(tmp_path, [2.3, 5e13, 1.4e30] + ["nan"] * 40)
    assert r.verdict.outcome.value == "diverged"
    assert "lowered 10x or more" in acts[0] and "typical value" in acts[0]
    assert not any("halved" in a for a in acts)
    # two finite points, none improving: no good checkpoint can exist
    assert acts[0].startswith("Restart from scratch") and "last good checkpoint" not in acts[0]


def test_missing_instrumentation_ranks_below_the_fix(tmp_path):
    r, acts = actions(tmp_path, [2.3, 5e13, 1.4e30] + ["nan"] * 40)
    logs = [i for i, a in enumerate(acts) if a.startswith("Log ")]
    assert logs, (
        "the run lacks validation and throughput: those actions are expected, after the fix"
    )
    assert min(logs) > 0 and all(not a.startswith("Log ") for a in acts[: min(logs)])


def test_a_mild_climb_after_long_improvement_keeps_the_checkpoint_and_halving(tmp_path):
    vals = [2.0 - i * 0.01 for i in range(60)] + [1.4 + 0.3 * i for i in range(20)] + ["nan"] * 5
    r, acts = actions(tmp_path, vals)
    assert (r.verdict.outcome.value, r.verdict.cause.value) == ("diverged", "model_convergence")
    # nothing in this log says a checkpoint was written: the action must not claim one exists
    # (new-user report: "Rerun from the last good checkpoint" for a run that saved none)
    assert acts[0].startswith("Rerun from a checkpoint saved before step") and "halved" in acts[0]
    assert "if one was written" in acts[0] and "last good checkpoint" not in acts[0]


def test_a_recorded_checkpoint_is_named_as_the_last_good_one(tmp_path):
    vals = [2.0 - i * 0.01 for i in range(60)] + [1.4 + 0.3 * i for i in range(20)] + ["nan"] * 5
    p = tmp_path / "train.log"
    lines = [f"step={i} loss={x}" for i, x in enumerate(vals)]
    lines.insert(51, "Saving model checkpoint to out/checkpoint-50")
    p.write_text("\n".join(lines) + "\n")
    r = audit(load_logs([p]))
    acts = [a.action for a in r.next_actions]
    assert r.verdict.outcome.value == "diverged"
    assert acts[0].startswith("Rerun from the last good checkpoint") and "halved" in acts[0]


def test_a_blow_up_in_the_first_tenth_of_the_run_restarts(tmp_path):
    """The demo's high_lr shape: the loss improves for 10 steps, blows up at step 14 of 200 and
    turns NaN: no save interval in the params, and a checkpoint that early is not plausible."""
    vals = (
        [0.62 - 0.025 * i for i in range(10)]
        + [0.4, 0.8, 1.5, 4.0]
        + [10.0 ** (1 + i) for i in range(30)]
    )
    vals += ["nan"] * 156
    r, acts = actions(tmp_path, vals)
    assert r.verdict.outcome.value == "diverged"
    assert acts[0].startswith("Restart from scratch") and "lowered 10x or more" in acts[0]


RUNS = Path(__file__).parent / "data" / "realworld" / "runs"
FRAMEWORKS = Path(__file__).parent / "data" / "frameworks"


def _run(path: Path):
    runs = list(load_path(path).runs)
    assert runs, f"nothing read from {path}"
    return runs[-1][1]


def test_checkpoint_is_named_only_when_the_run_records_one():
    from mlaudit_core.verdict.narrative import _checkpoint_recorded, blowup

    with_saves = _run(
        RUNS / "ChenZihua-cn--nanoGPT/train.log"
    )  # prints 'saving checkpoint to out-kirin'
    assert _checkpoint_recorded(with_saves, blowup(with_saves))
    no_saves = _run(
        FRAMEWORKS / "torch_tb" / "lr50"
    )  # torch.utils.tensorboard, no checkpoint written
    assert not _checkpoint_recorded(no_saves, blowup(no_saves))
    rep = audit(no_saves)
    assert not any("last good checkpoint" in a.action for a in rep.next_actions), [
        a.action for a in rep.next_actions
    ]


def test_divergence_action_names_no_lr_to_go_back_to_when_the_run_logs_none():
    """A plain PyTorch print loop (tests/data/newuser12 pt_sgd_unscaled_regression_diverge.log: SGD on
    unscaled features, MSE 1.7e10 -> inf, no LR printed): the run's LR is unknown, so the action names
    no value to go "back to" (it could be the one the run already has: a run at Adam's 1e-3 told "back to
    1e-3 for Adam"); it says to lower the run's own value 10x."""
    data = Path(__file__).parent / "data" / "newuser12" / "pt_sgd_unscaled_regression_diverge.log"
    r = audit(load_path(data).runs[0][-1])
    assert r.verdict.outcome.value == "diverged"
    act = next(a.action for a in r.next_actions if "peak LR" in a.action)
    assert "lowered 10x or more from the value the run used" in act
    assert "back to" not in act
