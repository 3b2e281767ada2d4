"""mlaudit PATH without pandas and scipy: every local format is audited, with the verdict
it gets when pandas is installed.

``pip install mlaudit`` (no extras) installs neither (pyproject: pandas is the ``pandas``
extra). Each mode runs in a fresh interpreter: one with ``sys.modules["pandas"] = None`` and
``sys.modules["scipy"] = None`` (any import of them raises ImportError), one without; both
run the console-script entry point (:func:`mlaudit.cli.main`) on one real run of every
format reader (``--no-write``: the fixtures in tests/data stay as they are) and print the
JSON report's verdict.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e  # fresh interpreters

DATA = Path(__file__).parent / "data"

PROBE = """
import contextlib, io, json, sys
if sys.argv[1] == "blocked":
    sys.modules["pandas"] = None
    sys.modules["scipy"] = None
import mlaudit.cli
out = {}
for fmt, path in json.loads(sys.argv[2]):
    buf = io.StringIO()
    sys.argv = ["mlaudit", path, "--as", fmt, "-f", "json", "--no-write"]
    code = 0
    with contextlib.redirect_stdout(buf):
        try:
            mlaudit.cli.main()
        except SystemExit as exc:
            code = exc.code
    try:
        report = json.loads(buf.getvalue())
    except ValueError:
        out[fmt] = {"code": code, "stdout": buf.getvalue()[-500:]}
        continue
    reports = report if isinstance(report, list) else [report]
    out[fmt] = {"code": code, "verdicts": [
        [r["verdict"]["outcome"], r["verdict"]["cause"], len(r.get("findings", []))] for r in reports]}
out["_loaded"] = sorted(m for m in ("pandas", "scipy") if sys.modules.get(m) is not None)
sys.stderr.write(json.dumps(out) + "\\n")
"""


def _timm(tmp: Path) -> Path:
    run = tmp / "timm-run"
    run.mkdir()
    rows = ["epoch,train_loss,eval_loss,eval_top1,eval_top5,lr"]
    for e in range(12):
        rows.append(f"{e},{2.3 * 0.8**e:.4f},{2.4 * 0.82**e:.4f},{40 + 4 * e},{70 + 2 * e},0.001")
    (run / "summary.csv").write_text("\n".join(rows) + "\n")
    return run


def _runs(tmp: Path) -> list[tuple[str, str]]:
    real = DATA / "realworld" / "runs"
    runs = [
        ("catboost_info", real / "AutumnCrocus--JapanHorseRacePrediction" / "catboost_info"),
        ("clearml_offline", DATA / "judgement" / "clearml" / "regression-lr3.zip"),
        ("console", DATA / "logs" / "apex.log"),
        (
            "generic_csv",
            DATA / "cases" / "ci-golden-drift-after-image-bump" / "golden_vs_new_h100.csv",
        ),
        ("jsonlines", real / "Aaryan004--Pothole_Detection_Model_RCNNs" / "output"),
        ("keras_csv", DATA / "formats" / "keras_csvlogger_appended.log"),
        ("keras_history", DATA / "frameworks" / "keras" / "healthy" / "history.json"),
        ("lightning_csv", real / "0Xero7--slm_training" / "lightning_logs" / "version_10"),
        ("mlflow_store", DATA / "formats" / "mlruns_committed"),
        ("tensorboard", DATA / "formats" / "keras_tensorboard_run1"),
        ("timm_csv", _timm(tmp)),
        ("trainer_state", DATA / "frameworks" / "hf" / "diverging"),
        (
            "ultralytics",
            real / "01-Zhangsaisai--Wheat-Weed-Detection-YOLOv8" / "runs" / "detect" / "train",
        ),
        ("wandb_dir", real / "02hyc--VQ-VAE" / "wandb"),
    ]
    return [(fmt, str(p)) for fmt, p in runs]


def _audit(mode: str, runs: list[tuple[str, str]]) -> dict:
    p = subprocess.run(
        [sys.executable, "-c", PROBE, mode, json.dumps(runs)],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert p.returncode == 0, p.stderr[-2000:]
    return json.loads(p.stderr.strip().splitlines()[-1])


def test_every_local_format_is_audited_without_pandas_and_scipy(tmp_path: Path) -> None:
    from mlaudit_core.formats import readers

    runs = _runs(tmp_path)
    assert {fmt for fmt, _ in runs} == set(readers()), "a format reader has no run in this test"
    blocked = _audit("blocked", runs)
    assert blocked.pop("_loaded") == []
    with_pandas = _audit("installed", runs)
    with_pandas.pop("_loaded")
    for fmt, _ in runs:
        assert "verdicts" in blocked[fmt], f"{fmt} without pandas: {blocked[fmt]}"
        assert blocked[fmt]["verdicts"], fmt
        assert blocked[fmt] == with_pandas[fmt], fmt
