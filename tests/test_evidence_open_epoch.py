"""verdict.evidence ``open_epoch``: a console that ends with the header of a new epoch and nothing of
it was cut while that epoch ran; such a run is never ``succeeded``.

Real input: nnU-Net v1's training log from the own corpus (tests/data/realworld f7b1-03, scored in
session 7): 176 epochs of records, then ``epoch:  176`` as the last line after 48 h of a 1000-epoch
plan (called plateaued, then succeeded, before). The same log cut after a complete epoch has no
open epoch.
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from mlaudit.cli import app
from mlaudit_core.verdict.evidence import open_epoch

REAL = Path(__file__).resolve().parent / "data" / "realworld"
LABELS = json.loads((REAL / "labels.json").read_text())
(NNUNET,) = [REAL / x["path"] for x in LABELS if x["id"].startswith("f7b1-03-")]


def test_open_epoch_reads_the_last_header_with_nothing_after_it():
    lines = NNUNET.read_text().splitlines()
    assert open_epoch(lines) == "epoch:  176"
    last_record = max(i for i, t in enumerate(lines) if "This epoch took" in t)
    assert open_epoch(lines[: last_record + 1]) is None


def test_headers_alone_or_records_after_the_last_header_are_no_open_epoch():
    assert open_epoch(["Epoch 1/3", "Epoch 2/3", "Epoch 3/3"]) is None
    assert open_epoch(["Epoch 1/3", "loss 0.5", "Epoch 2/3", "loss 0.4"]) is None
    assert open_epoch(["Epoch 1/3", "loss 0.5", "Epoch 2/3 - loss 0.4"]) is None


def test_a_log_cut_inside_a_new_epoch_is_stopped_not_succeeded():
    res = CliRunner().invoke(app, ["logs", str(NNUNET), "--format", "json"])
    v = json.loads(res.stdout)["verdict"]
    assert (v["rule"], v["outcome"], v["cause"]) == ("V17", "crashed", "inconclusive")
    assert "epoch:  176" in v["summary"]
