"""RT006 (fp16-overflow-skips): the share of skipped steps is read only over a window long enough to
say something about the steady state (``min_share_steps``).

The overflow lines are the ones the loss scalers print, taken from :data:`mlaudit_core.signature_sources.SOURCES`
(the message as the package formats it); the training records after them are HF Trainer log lines. A
pasted window of a few records with one skip at a healthy scale is routine dynamic loss scaling
(reports b2-02, b5-05 paste such windows); a scale that collapses is a failure at any window length.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from mlaudit.cli import app
from mlaudit_core.signature_sources import SOURCES

SKIP_MESSAGES = [
    s.example
    for s in SOURCES
    if s.signature.startswith("overflow-skip")
    and "loss_scale" in s.figures
    and float(s.figures["loss_scale"]) > 1
]
HF_RECORDS = [
    "{'loss': 2.1034, 'grad_norm': 1.53, 'learning_rate': 4.9e-05, 'epoch': 0.1}",
    "{'loss': 1.9921, 'grad_norm': 1.41, 'learning_rate': 4.8e-05, 'epoch': 0.2}",
    "{'loss': 1.8567, 'grad_norm': 1.22, 'learning_rate': 4.7e-05, 'epoch': 0.3}",
]


def _audit(tmp_path, lines):
    log = tmp_path / "train.log"
    log.write_text("\n".join(lines) + "\n")
    res = CliRunner().invoke(app, ["logs", str(log), "--format", "json"])
    return json.loads(res.stdout)


def test_there_are_overflow_messages_with_a_healthy_scale():
    assert len(SKIP_MESSAGES) >= 2


@pytest.mark.parametrize("message", SKIP_MESSAGES)
def test_one_skip_in_a_short_window_is_benign(tmp_path, message):
    rep = _audit(tmp_path, [message, *HF_RECORDS])
    rt006 = [f for f in rep["findings"] if f["code"] == "RT006"]
    assert rt006 and rt006[0]["severity"] == "info", rt006
    assert rep["verdict"]["outcome"] not in ("diverged", "crashed")
    assert rep["verdict"]["cause"] != "data_config"


def test_a_collapsing_scale_fails_in_a_short_window_too(tmp_path):
    lines = [
        f"Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to {2.0**k}"
        for k in range(15, -3, -1)
    ]
    rep = _audit(tmp_path, lines)
    rt006 = [f for f in rep["findings"] if f["code"] == "RT006"]
    assert rt006 and rt006[0]["severity"] == "error"
    assert rep["verdict"]["cause"] == "data_config"


def test_rt006_deepspeed_config_loss_scale_zero_is_no_collapse():
    """Own corpus f5b2-13: a DeepSpeed ZeRO-3 console whose config dump prints ``loss_scale=0.0``
    (the value that selects dynamic scaling) before two overflow skips at 65536 -> 32768 and 55
    clean steps. The 0 is no scale the run reached: the skips are benign, and the run, cut at step 55
    of 100, is not called diverged (before: 'the loss scale collapsed to 0', diverged/data_config)."""
    from pathlib import Path

    from mlaudit_core.audit import audit
    from mlaudit_core.formats import load_path

    log = Path(__file__).parents[1] / "data/realworld/runs/linskybing--LLM/logs/nv/zero_3.out"
    rep = audit(load_path(log).runs[0][1])
    (f,) = [x for x in rep.findings if x.code == "RT006"]
    assert "collapsed" not in f.message and "benign" in f.message, f.message
    assert rep.verdict.outcome.value != "diverged", rep.verdict.summary
