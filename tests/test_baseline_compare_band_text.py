"""The band BL001 prints (``MetricComparison.summary`` in mlaudit_core/baseline/compare.py) is held
within the range the metric's logged values lie in, and names the baselines, on two real MLflow runs
of one script (tests/data/newuser17: seeds 0 and 2 of a digits MLP, loss >= 0, accuracy in [0, 1]),
logged into a fresh sqlite store and audited with ``--baseline``."""

from __future__ import annotations

import re
from pathlib import Path

from report_helpers import cli_report, log_mlflow_record

DATA = Path(__file__).parent / "data" / "newuser17"


def test_compare_summary_band_stays_within_the_metric_range_and_names_the_baseline(tmp_path):
    import mlflow

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    client = mlflow.MlflowClient(uri)
    exp = client.create_experiment("seeds")
    base = log_mlflow_record(client, exp, DATA / "pt_mlflow_seed0_healthy.json")
    cand = log_mlflow_record(client, exp, DATA / "pt_mlflow_seed2_sigkilled_resumed.json")
    rep = cli_report("mlflow", cand, "-u", uri, "--no-write", "--baseline", base)
    bl = {f["facts"]["metric"]: f for f in rep["findings"] if f["code"] == "BL001"}
    assert {"train_loss", "val_acc"} <= set(bl), sorted(bl)
    for key, f in bl.items():
        lo, hi = (float(x) for x in re.search(r"band (\S+?)\.\.([^,]+),", f["message"]).groups())
        assert 0 <= lo <= hi, (key, f["message"])
        assert "(seed0)" in f["message"], f["message"]
    # the band itself (mean +- k spreads) passes 0 for the loss and 1 for the accuracy
    assert bl["train_loss"]["facts"]["band_lo"] < 0
    assert bl["val_acc"]["facts"]["band_hi"] > 1
    assert re.search(r"band \S+\.\.1,", bl["val_acc"]["message"]), bl["val_acc"]["message"]
