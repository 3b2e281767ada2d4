"""A live alert carries the same evidence format as the post-hoc report (issue 18, "Done when").

A real ``torch.utils.tensorboard.SummaryWriter`` in a subprocess writes a run whose loss turns
NaN at step 30, with a console log; the live monitor (``TensorBoardLiveSource``, as
``mlaudit watch tensorboard --live`` runs it) polls it and posts to a real HTTP receiver as a
JSON webhook and as Slack. Then ``mlaudit LOGDIR --format json --no-write`` audits the same
run post hoc. Checked: the JSON alert's ``live.finding`` and the run's ``mlaudit/live.json``
episode validate against the report schema's ``Finding`` (docs/schema/report.schema.json),
every evidence item has exactly the fields of its kind in that schema, as the post-hoc
report's evidence items do; the Slack alert lists the same evidence.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.webhook_receiver import Receiver

HERE = Path(__file__).parent
MLAUDIT = shutil.which("mlaudit", path=str(Path(sys.executable).parent)) or "mlaudit"

WRITER = r"""
import math, sys
from pathlib import Path
from torch.utils.tensorboard import SummaryWriter
logdir = Path(sys.argv[1])
w = SummaryWriter(str(logdir))
con = open(logdir / "train.log", "w")
for step in range(1, 61):
    loss = float("nan") if step >= 30 else 2.0 * math.exp(-step / 10) + 0.3
    w.add_scalar("train/loss", loss, step)
    w.add_scalar("train/lr", 0.1, step)
    con.write(f"step {step} loss {loss:.4f}\n")
w.close()
con.close()
"""

_KIND_DEF = {
    "series": "SeriesEvidence",
    "log": "LogEvidence",
    "fact": "FactEvidence",
    "config": "ConfigEvidence",
    "code": "CodeEvidence",
}


def _finding_validator():
    import jsonschema

    schema = json.loads((HERE.parent / "docs" / "schema" / "report.schema.json").read_text())
    defs = schema["$defs"]
    return jsonschema.Draft202012Validator({"$ref": "#/$defs/Finding", "$defs": defs}), defs


def _check_evidence_fields(finding: dict, defs: dict) -> None:
    for e in finding["evidence"]:
        allowed = set(defs[_KIND_DEF[e["kind"]]]["properties"])
        assert set(e) <= allowed, (e["kind"], set(e) - allowed)


def test_live_alert_evidence_is_the_reports(tmp_path):
    pytest.importorskip("torch")
    from mlaudit_tensorboard.live import TensorBoardLiveSource

    from mlaudit_core.live import LiveConfig, LiveMonitor
    from mlaudit_core.service import StateStore
    from mlaudit_core.settings import Settings

    logdir = tmp_path / "run"
    logdir.mkdir()
    script = tmp_path / "w.py"
    script.write_text(WRITER)
    p = subprocess.run(
        [sys.executable, str(script), str(logdir)], capture_output=True, text=True, timeout=300
    )
    assert p.returncode == 0, p.stderr[-2000:]
    with Receiver() as rx:
        settings = Settings().model_copy(
            update={
                "notify": {
                    "urls": [rx.url + "/hook", "slack+" + rx.url + "/slack"],
                    "min_severity": "none",
                }
            }
        )
        with StateStore(tmp_path / "s.sqlite", "evidence") as st:
            mon = LiveMonitor(
                TensorBoardLiveSource([logdir]), st, settings, LiveConfig(poll_interval_s=1.0)
            )
            mon.poll_once()
        posts = {r.path: r.json() for r in rx.requests}
    assert set(posts) == {"/hook", "/slack"}, list(posts)
    validator, defs = _finding_validator()

    # the JSON alert: the finding exactly as a report holds it, evidence included
    alert = posts["/hook"]
    finding = alert["live"]["finding"]
    validator.validate(finding)
    assert finding["code"] == alert["findings"][0]["code"] == "LV001"
    assert finding["message"] == alert["findings"][0]["message"]
    _check_evidence_fields(finding, defs)
    series = next(e for e in finding["evidence"] if e["kind"] == "series")
    assert series["metric"] == "train/loss" and series["values"]["first_nonfinite_step"] == 30

    # the run's live.json: the same finding
    doc = json.loads((logdir / "mlaudit" / "live.json").read_text())
    validator.validate(doc["episodes"][0]["finding"])
    assert doc["episodes"][0]["finding"]["evidence"] == finding["evidence"]

    # Slack: the same evidence, one line each
    slack = json.dumps(posts["/slack"])
    assert (
        "Evidence" in slack
        and "train/loss steps 30" in slack
        and "first_nonfinite_step=30" in slack
    )

    # the post-hoc report of the same run: its findings and evidence in the same schema
    out = subprocess.run(
        [MLAUDIT, str(logdir), "--format", "json", "--no-write"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode in (0, 1), out.stderr[-2000:]
    report = json.loads(out.stdout)
    posthoc = report["findings"]
    assert posthoc, report["verdict"]
    kinds_live = {e["kind"] for e in finding["evidence"]}
    kinds_post = {e["kind"] for f in posthoc for e in f["evidence"]}
    assert "series" in kinds_live & kinds_post
    for f in posthoc:
        validator.validate(f)
        _check_evidence_fields(f, defs)
    # the post-hoc non-finite finding points at the same step of the same series
    nonfinite = [
        e
        for f in posthoc
        for e in f["evidence"]
        if e["kind"] == "series"
        and e.get("metric") == "train/loss"
        and 30 in (e.get("step_start"), e.get("step_end"))
    ]
    assert nonfinite, [f["code"] for f in posthoc]
