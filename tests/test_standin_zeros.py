"""LI006 stand-in zeros in the report: the key-metric table never shows the placeholder 0.0 as the
best loss, and HF's logging_nan_inf_filter is named only for a run the HF Trainer made.

New-user report (NOTES 2026-12-01 17:58): demo high_lr showed train/loss "best 0" and named HF's
filter on a run not made by HF. Real readers: the console-log parser and the trainer_state.json
reader (the file the HF Trainer writes in each checkpoint folder; its documented shape).
"""

from __future__ import annotations

import json

from mlaudit_core import audit
from mlaudit_core.formats import load_path
from mlaudit_core.formats.consolelog import load_logs

#: a loss that spikes, with exact zeros where the steps were non-finite
LOSSES = [
    2.3,
    2.1,
    1.9,
    4.0,
    9.7,
    5.1,
    2.4,
    0.0,
    3.3,
    9.7,
    0.0,
    6.0,
    8.0,
    0.0,
    7.5,
    9.0,
    8.8,
    9.9,
    10.1,
    10.0,
]


def test_plain_script_zeros_are_not_the_best_loss_and_not_blamed_on_hf(tmp_path):
    p = tmp_path / "train.log"
    p.write_text("\n".join(f"step={i} loss={x}" for i, x in enumerate(LOSSES)) + "\n")
    r = audit(load_logs([p]))
    li006 = next(f for f in r.findings if f.code == "LI006" and f.facts["kind"] == "stand_in")
    assert li006.facts["hf_trainer"] is False and "logging_nan_inf_filter" not in li006.message
    km = r.key_metrics["train_loss"]
    assert km["best"] == 1.9 and km["min"] == 1.9 and km["standin_zeros"] == 3


def test_hf_trainer_state_names_the_filter(tmp_path):
    d = tmp_path / "checkpoint-20"
    d.mkdir()
    log = [
        {"loss": x, "learning_rate": 5e-5, "epoch": (i + 1) / 20, "step": i + 1}
        for i, x in enumerate(LOSSES)
    ]
    (d / "trainer_state.json").write_text(
        json.dumps(
            {
                "global_step": 20,
                "max_steps": 20,
                "num_train_epochs": 1,
                "logging_steps": 1,
                "eval_steps": 500,
                "save_steps": 20,
                "log_history": log,
            }
        )
    )
    ((_, run),) = load_path(d).runs
    r = audit(run)
    li006 = next(f for f in r.findings if f.code == "LI006" and f.facts["kind"] == "stand_in")
    assert li006.facts["hf_trainer"] is True and "logging_nan_inf_filter" in li006.message
    assert r.key_metrics["train_loss"]["best"] > 0
