"""LI002 (step resets and repeats) does not count an evaluation after training as a repeated point,
on real HF Trainer consoles of the session-17 new-user pass (tests/data/newuser17): a script that calls
``trainer.evaluate()`` after ``train()`` logs eval_loss at the final step a second time."""

from __future__ import annotations

from pathlib import Path

from mlaudit_core.audit import audit
from mlaudit_core.formats import load_path
from mlaudit_core.roles import Role

DATA = Path(__file__).parent.parent / "data" / "newuser17"


def test_li002_final_evaluate_after_train_is_not_a_repeat():
    for name in ("hf_healthy_evaluate_after_train.log", "hf_nanlabel_csv_empty_cell.log"):
        run = list(load_path(DATA / name).runs)[-1][1]
        vk = run.key_for(Role.VAL_LOSS)
        steps = run.series(vk).steps
        assert steps[-1] == steps[-2], (name, steps)  # the final step logged twice
        assert not [f for f in audit(run).findings if f.code == "LI002"], name
