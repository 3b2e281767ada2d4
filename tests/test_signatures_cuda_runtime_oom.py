"""signatures.CATALOG 'cuda-error-oom' on a library's own CUDA check that names the runtime call and prints
the runtime's error string: dlib's CHECK_CUDA ('Error while calling cudaMalloc(...) in file
.../gpu_data.cpp:191. code: 2, reason: out of memory'), the whole console of report b21-09 (dlib's
dnn_mmod_ex example on a 4 GB GPU; the example needs about 5.3 GB)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from mlaudit.cli import app
from mlaudit_core.signatures import match_line

REPORTS = Path(__file__).resolve().parent / "data" / "reports"


def test_a_cuda_runtime_call_that_failed_out_of_memory_is_an_oom_crash():
    """Before: unknown/inconclusive ('no metric was logged at all'): no catalogue entry read dlib's line."""
    (case,) = REPORTS.glob("b21-09-*")
    lines = (case / "train.log").read_text().splitlines()
    hits = [sig.id for line in lines for sig, _ in match_line(line) if sig.category == "oom"]
    assert hits == ["cuda-error-oom"]
    args = ["logs", str(case / "train.log"), "--config", str(case / "context.txt")]
    v = json.loads(CliRunner().invoke(app, [*args, "--format", "json"]).stdout)["verdict"]
    assert (v["outcome"], v["cause"]) == ("crashed", "infra_runtime"), v["summary"]
    assert "out of memory" in v["summary"]
