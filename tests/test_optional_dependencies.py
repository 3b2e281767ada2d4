"""mlaudit_core without its optional dependencies: scipy and matplotlib blocked.

In a fresh interpreter with ``sys.modules['scipy'] = sys.modules['matplotlib'] = None`` (an
import of either raises ImportError), a run is audited, the Student-t band multiplier of the
baseline comparison is computed and the HTML report with its plots is rendered.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.e2e  # a fresh interpreter

CODE = """
import json, sys
sys.modules["scipy"] = None
sys.modules["matplotlib"] = None
import numpy as np
from mlaudit_core import MetricTable, RunData, RunIdentity, audit
from mlaudit_core.baseline.band import t_quantile
from mlaudit_core.render.html import render_html
st = np.arange(1, 2001)
loss = 2.0 * np.exp(-st / 300.0) + 0.1
loss[1500:] = np.nan
run = RunData(identity=RunIdentity("mlflow", "r", name="r"),
              metrics=MetricTable(["train/loss"] * st.size, st, loss))
report = audit(run)
html = render_html(report, run)
print(json.dumps({"outcome": report.verdict.outcome.value, "svg": html.count("<svg"),
                  "t5": t_quantile(5, 2.0),
                  "loaded": sorted(m for m in ("scipy", "matplotlib") if sys.modules.get(m))}))
"""


def test_audit_band_and_report_without_scipy_or_matplotlib():
    p = subprocess.run(
        [sys.executable, "-c", CODE], capture_output=True, text=True, check=False, timeout=300
    )
    assert p.returncode == 0, p.stderr[-3000:]
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert out["loaded"] == [] and out["svg"] >= 1
    assert out["outcome"] in ("diverged", "crashed", "unstable"), out
    # t(0.97725, 4) * sqrt(1 + 1/5); scipy.stats.t.ppf(0.97725, 4) = 2.8693094
    assert out["t5"] == pytest.approx(2.8693094 * (1.2**0.5), rel=1e-7)
