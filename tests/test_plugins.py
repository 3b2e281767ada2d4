"""Third-party detectors and tracker plugins are found through real entry points.

Each test lays out a real distribution on disk (a module plus a ``.dist-info`` folder
with ``entry_points.txt``) on PYTHONPATH, so ``importlib.metadata`` discovers it exactly
as it discovers an installed package, and runs the real CLI in a subprocess.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

DETECTOR = '''
from mlaudit_core.detectors import Detector, DetectorParams
from mlaudit_core.report import FactEvidence, Severity


class TooManyMetrics(Detector, code="XT001", name="too-many-metrics", family="instrumentation"):
    """More than ``limit`` metrics were logged (example third-party detector).

    Thresholds: ``limit`` 1 (test only).
    """

    class Params(DetectorParams):
        limit: int = 1

    def check(self, run, p):
        if len(run.metrics.keys) > p.limit:
            yield self.finding(Severity.WARNING, f"{len(run.metrics.keys)} metrics",
                               evidence=[FactEvidence(text="count")], signal="metrics", would_tell="x")
'''


def make_dist(root: Path, name: str, module_src: str, group: str, entry: str) -> None:
    (root / f"{name}.py").write_text(module_src)
    info = root / f"{name}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[{group}]\n{entry}\n")


def run_cli(args, root: Path):
    env = dict(os.environ, PYTHONPATH=str(root), COLUMNS="200")
    return subprocess.run(
        [sys.executable, "-c", "from mlaudit.cli import main; main()", *args],
        capture_output=True,
        text=True,
        env=env,
    )


def test_third_party_detector_listed_documented_and_run(tmp_path):
    make_dist(tmp_path, "mlaudit_ext_det", DETECTOR, "mlaudit.detectors", "ext = mlaudit_ext_det")
    r = run_cli(["rules", "--format", "json"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert '"XT001"' in r.stdout
    r = run_cli(["rule", "XT001"], tmp_path)
    assert "More than ``limit`` metrics" in r.stdout
    # it runs in an audit too
    code = (
        "import numpy as np\nfrom mlaudit_core import *\n"
        "r = RunData(RunIdentity('t','x'), metrics=MetricTable(['a','b'], [1,1], [0.1,0.2]))\n"
        "print([f.code for f in audit(r).findings])\n"
    )
    p = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(tmp_path)),
    )
    assert "XT001" in p.stdout, p.stderr


def test_broken_plugin_warns_and_host_keeps_working(tmp_path):
    make_dist(
        tmp_path,
        "mlaudit_broken",
        "raise ImportError('no numpy for you')\n",
        "mlaudit.detectors",
        "broken = mlaudit_broken",
    )
    r = run_cli(["rules", "--format", "json"], tmp_path)
    assert r.returncode == 0
    assert "OP001" in r.stdout
    assert "broken" in r.stderr and "failed to load" in r.stderr
