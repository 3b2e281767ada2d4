"""The terminal summary (mlaudit_core/render/terminal.py) on real runs.

tests/data/newuser9/pt_loop_seed{0,1}.log: a plain PyTorch loop (torch 2.13.0 CPU, Adam 1e-3, 12
epochs, the same data and config, seeds 0 and 1) printing one line per epoch, captured as
``python train.py > train.log 2>&1`` (the MLflow lines are its ``mlflow.log_metric`` run's).
"""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from mlaudit_core.audit import audit_with_baselines
from mlaudit_core.formats.consolelog import load_logs
from mlaudit_core.render import render_terminal

DATA = Path(__file__).parent / "data" / "newuser9"


def _text(report) -> str:
    out = io.StringIO()
    render_terminal(report, Console(file=out, width=200, color_system=None))
    return out.getvalue()


def test_render_terminal_shows_the_baseline_comparison_the_user_asked_for():
    """``--baseline`` asks "is it worse?": the answer (BL001, info when within noise or when one
    baseline cannot give a band) is in the summary, not only in ``--format json``."""
    run = load_logs([DATA / "pt_loop_seed1.log"])
    base = load_logs([DATA / "pt_loop_seed0.log"])
    report = audit_with_baselines(run, [base])
    bl = [f for f in report.findings if f.code == "BL001"]
    assert bl and all(f.severity.value == "info" for f in bl)
    text = _text(report)
    assert "BL001" in text
    assert "val/loss" in text.split("BL001", 1)[1]


def test_render_terminal_leaves_other_info_findings_to_verbose():
    run = load_logs([DATA / "pt_loop_seed1.log"])
    report = audit_with_baselines(run, [])
    infos = [f for f in report.findings if f.severity.value == "info" and f.family != "baseline"]
    assert infos
    text = _text(report)
    assert all(f.code not in text for f in infos if f.code != "BL001")
