"""A small ML repository with golden-value tests, written into a temp dir by the CI tests.

``train.py`` trains a softmax regression on fixed synthetic blobs with plain
numpy (deterministic for a given config and seed), prints one line per step and
per evaluation, and writes ``metrics.json``. ``tests/test_train.py`` compares
those metrics with ``golden_values.json`` (Megatron-LM golden-values shape)
using ``pytest.approx`` and a step-time budget; variants swap in other gates.
The "CI job" is the real thing: ``python train.py`` then ``python -m pytest -rA``,
their output concatenated into ``ci.log``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

TRAIN_PY = '''\
"""Softmax regression on fixed synthetic blobs (numpy only). Usage: python train.py [config.json]."""
import json
import os
import sys
import time

import numpy as np


def f1_score(y, p, k, average):
    """F1 like sklearn.metrics.f1_score for ``average`` in {"macro", "micro"}."""
    if average == "micro":
        return float(np.mean(y == p))
    f1s = []
    for c in range(k):
        tp = np.sum((p == c) & (y == c)); fp = np.sum((p == c) & (y != c)); fn = np.sum((p != c) & (y == c))
        f1s.append(0.0 if tp == 0 else 2 * tp / (2 * tp + fp + fn))
    return float(np.mean(f1s))


def train(cfg, echo=True):
    data = np.random.default_rng(1234)
    n, d, k = 900, 8, 4
    centers = data.normal(0, 1.0, (k, d))
    y = data.integers(0, k, n)
    x = centers[y] + data.normal(0, 1.6, (n, d))
    xt, yt, xv, yv = x[:720], y[:720], x[720:], y[720:]
    rng = np.random.default_rng(cfg["seed"])
    w = rng.normal(0, 0.01, (d, k))
    delay = float(os.environ.get("DATA_DELAY_S", "0"))
    average = os.environ.get("F1_AVERAGE", "macro")
    m = {"loss": [], "step_time": [], "val_loss": [], "val_accuracy": [], "val_f1": []}

    def probs(a):
        z = a @ w
        z = z - z.max(1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(1, keepdims=True)

    for step in range(1, cfg["steps"] + 1):
        t0 = time.perf_counter()
        if delay:
            time.sleep(delay)  # input pipeline
        idx = rng.choice(len(xt), cfg["batch_size"], replace=False)
        p = probs(xt[idx])
        loss = float(-np.mean(np.log(p[np.arange(len(idx)), yt[idx]] + 1e-12)))
        g = p.copy()
        g[np.arange(len(idx)), yt[idx]] -= 1
        w -= cfg["lr"] * xt[idx].T @ g / len(idx)
        dt = time.perf_counter() - t0
        m["loss"].append(loss)
        m["step_time"].append(dt)
        if echo:
            print(f"step {step} loss={loss:.6f} step_time={dt:.6f}")
        if step % cfg["eval_every"] == 0:
            pv = probs(xv)
            vl = float(-np.mean(np.log(pv[np.arange(len(yv)), yv] + 1e-12)))
            pred = pv.argmax(1)
            va, vf = float(np.mean(pred == yv)), f1_score(yv, pred, k, average)
            m["val_loss"].append(vl)
            m["val_accuracy"].append(va)
            m["val_f1"].append(vf)
            if echo:
                print(f"eval step {step} val_loss={vl:.6f} val_accuracy={va:.4f} val_f1={vf:.4f}")
    return m


if __name__ == "__main__":
    cfg = json.load(open(sys.argv[1] if len(sys.argv) > 1 else "config.json"))
    metrics = train(cfg)
    json.dump(metrics, open("metrics.json", "w"))
'''

TEST_PY = """\
import json
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = json.loads((ROOT / "golden_values.json").read_text())
METRICS = json.loads((ROOT / "metrics.json").read_text())


def golden(name):
    return [GOLDEN[name]["values"][k] for k in sorted(GOLDEN[name]["values"], key=int)]


def test_loss_matches_golden():
    assert METRICS["loss"] == pytest.approx(golden("loss"), rel={loss_rtol})


def test_val_accuracy_matches_golden():
    assert METRICS["val_accuracy"][-1] == pytest.approx(golden("val_accuracy")[-1], abs=0.02)


def test_step_time_budget():
    step_time = float(np.median(METRICS["step_time"]))
    assert step_time < {step_budget}
"""

TEST_LENGTH_PY = """\
import json
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = json.loads((ROOT / "golden_values.json").read_text())
METRICS = json.loads((ROOT / "metrics.json").read_text())


def test_loss_matches_golden():
    golden = [GOLDEN["loss"]["values"][k] for k in sorted(GOLDEN["loss"]["values"], key=int)]
    np.testing.assert_allclose(METRICS["loss"], golden, rtol=1e-5)
"""

TEST_EVAL_PY = """\
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = json.loads((ROOT / "golden_values.json").read_text())
METRICS = json.loads((ROOT / "metrics.json").read_text())


def last(name):
    v = GOLDEN[name]["values"]
    return v[max(v, key=int)]


def test_val_loss_matches_golden():
    assert METRICS["val_loss"][-1] == pytest.approx(last("val_loss"), rel=1e-3)


def test_val_f1_matches_golden():
    assert METRICS["val_f1"][-1] == pytest.approx(last("val_f1"), rel=1e-3)
"""

GOOD = {"seed": 0, "lr": 0.5, "batch_size": 32, "steps": 40, "eval_every": 10}


def load_train(repo: Path):
    """Import the fixture's own train.py (test code the test wrote; mlaudit never imports it)."""
    spec = importlib.util.spec_from_file_location(
        f"fixture_train_{abs(hash(str(repo)))}", repo / "train.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def megatron_golden(metrics: dict, cfg: dict) -> dict:
    """Golden values in Megatron-LM's shape: per metric start/end/interval and a step -> value map."""
    out = {}
    for name, vals in metrics.items():
        if name == "step_time":
            continue
        every = cfg["eval_every"] if name.startswith("val_") else 1
        steps = [every * (i + 1) for i in range(len(vals))]
        out[name] = {
            "start_step": steps[0],
            "end_step": steps[-1],
            "step_interval": every,
            "values": {str(s): v for s, v in zip(steps, vals)},
        }
    return out


def make_repo(
    root: Path,
    *,
    golden_cfg: dict = GOOD,
    test_py: str = TEST_PY,
    loss_rtol: float = 0.01,
    step_budget: float = 0.005,
    extra_golden_seeds: tuple[int, ...] = (),
    golden_env: dict | None = None,
    files: dict[str, str] | None = None,
) -> Path:
    """Write the repository and record its golden values with ``golden_cfg``."""
    repo = root / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "train.py").write_text(TRAIN_PY)
    (repo / "tests" / "test_train.py").write_text(
        test_py.replace("{loss_rtol}", repr(loss_rtol)).replace("{step_budget}", repr(step_budget))
    )
    for name, text in (files or {}).items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    mod = load_train(repo)
    old = {k: os.environ.get(k) for k in (golden_env or {})}
    os.environ.update(golden_env or {})
    try:
        (repo / "golden_values.json").write_text(
            json.dumps(megatron_golden(mod.train(golden_cfg, False), golden_cfg), indent=1)
        )
        for s in extra_golden_seeds:
            cfg = dict(golden_cfg, seed=s)
            (repo / f"golden_values_seed{s}.json").write_text(
                json.dumps(megatron_golden(mod.train(cfg, False), cfg))
            )
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return repo


def run_ci_job(repo: Path, cfg: dict, env: dict | None = None, header: str = "") -> Path:
    """Run the CI job for real (train, then pytest) and return the path of its log."""
    (repo / "config.json").write_text(json.dumps(cfg))
    e = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", **(env or {}))
    e.pop("PYTEST_ADDOPTS", None)
    log = [header] if header else []
    tr = subprocess.run(
        [sys.executable, "train.py", "config.json"],
        cwd=repo,
        env=e,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    log += ["$ python train.py config.json", tr.stdout, tr.stderr]
    te = subprocess.run(
        [sys.executable, "-m", "pytest", "-rA", "-p", "no:cacheprovider", "tests"],
        cwd=repo,
        env=e,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    log += ["$ python -m pytest -rA tests", te.stdout, te.stderr, f"exit code {te.returncode}"]
    path = repo.parent / "ci.log"
    path.write_text("\n".join(log))
    return path
