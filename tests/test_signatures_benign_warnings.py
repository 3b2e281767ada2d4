"""The catalogue's benign warnings (category ``benign_warning``) against the installed packages: LightGBM's
``No further splits with positive gain`` and scikit-learn's max_iter ConvergenceWarnings, produced here by the
packages themselves (a script run as users run it, ``python fit.py > log 2>&1``) and read from their installed
files (mlaudit_core.signature_sources rows), then audited: a log whose only framework messages are these is
not a failure."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from mlaudit_core.rundata import ConsoleLine
from mlaudit_core.signature_sources import SOURCES, format_in_file, source_file, template_regex
from mlaudit_core.signatures import CONTEXT_CATEGORIES, scan

pytest.importorskip("lightgbm")
pytest.importorskip("sklearn")

BIN = Path(sys.executable).parent
_PACKAGES = {"lightgbm": "lightgbm", "scikit-learn": "sklearn"}
_ROWS = [s for s in SOURCES if s.package in _PACKAGES]

_FIT = """
import numpy as np, lightgbm as lgb
from sklearn.linear_model import LogisticRegression
from sklearn.neural_network import MLPClassifier
rng = np.random.default_rng(0)
X = rng.normal(size=(200, 3)); y = (X[:, 0] > 0).astype(int)
# 31 leaves on 200 rows that one split separates: the later leaves have no split that gains
lgb.train({"objective": "binary", "num_leaves": 31, "min_data_in_leaf": 1, "min_data_in_bin": 1,
           "verbose": 1}, lgb.Dataset(X, y), num_boost_round=2)
LogisticRegression(max_iter=2).fit(X, y)
MLPClassifier(max_iter=2).fit(X, y)
print("accuracy 0.93", flush=True)
"""


@pytest.fixture(scope="module")
def fit_log(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("benign")
    (d / "fit.py").write_text(_FIT)
    log = d / "fit.log"
    with log.open("w") as out:
        subprocess.run(
            [sys.executable, "fit.py"], stdout=out, stderr=subprocess.STDOUT, cwd=d, timeout=120
        )
    return log


def test_the_packages_print_the_catalogued_benign_warnings(fit_log):
    text = fit_log.read_text()
    lines = [ConsoleLine("fit.log", i, t) for i, t in enumerate(text.splitlines(), 1)]
    hits = scan(lines)[0]
    got = {h.signature.id for h in hits}
    assert {"lightgbm-no-positive-gain", "sklearn-convergence-warning"} <= got, text
    assert {h.signature.category for h in hits} == {"benign_warning"}
    # a message, never metrics: LightGBM's 'best gain: -inf' is not read as a series
    assert "benign_warning" not in CONTEXT_CATEGORIES
    for src in (s for s in _ROWS if s.check == "produced"):
        assert template_regex(src.template).search(text), (src.template, text)


@pytest.mark.parametrize("src", _ROWS, ids=lambda s: f"{s.signature}:{s.file}")
def test_the_installed_package_writes_this_format(src):
    spec = importlib.util.find_spec(_PACKAGES[src.package])
    assert spec and spec.origin
    path = source_file(src, Path(spec.origin).parents[1])  # compiled: lightgbm/lib/lib_lightgbm.so
    assert path.is_file(), path
    assert not format_in_file(src, path), f"{src.package} no longer writes {src.template!r}"


def test_a_log_of_only_benign_warnings_is_not_a_failure(fit_log):
    r = subprocess.run(
        [str(BIN / "mlaudit"), "logs", str(fit_log), "-f", "json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    v = json.loads(r.stdout)["verdict"]
    assert v["outcome"] in ("unknown", "succeeded") and v["cause"] == "healthy", v["summary"]
    assert "No further splits with positive gain" in v["summary"]
