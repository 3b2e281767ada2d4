"""Fixture repositories for `mlaudit ci`, one per shape of a plain golden-value CI suite.

Each repository is a real little ML project: ``train.py`` (numpy softmax regression on
fixed synthetic blobs, deterministic for a config, seed and precision) writes
``metrics.json`` (per-step ``loss`` and ``samples_per_sec``), and ``tests/`` holds a pytest
suite that compares it with a golden file the way people write such suites
(``pytest.approx(ref, rel=GOLDEN["rtol"])``, ``numpy.testing.assert_allclose``,
``torch.testing.assert_close``, a throughput bound). The "CI job" is run for real:
``python train.py`` then ``python -m pytest -rA`` in a subprocess, and its output is the
log ``mlaudit ci`` audits. Nothing here fakes a test outcome or a figure: the assertion
messages in the logs are pytest's, numpy's and torch's own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

TRAIN = '''\
"""Softmax regression on fixed blobs. Env: MATMUL_PRECISION (float64|float32), INPUT_DELAY_S."""
import json
import os
import sys
import time

import numpy as np


def train(cfg):
    data = np.random.default_rng(1234)
    n, d, k = 900, 8, 4
    centers = data.normal(0, 1.0, (k, d))
    y = data.integers(0, k, n)
    x = centers[y] + data.normal(0, 1.6, (n, d))
    dt = np.dtype(os.environ.get("MATMUL_PRECISION", "float64"))
    rng = np.random.default_rng(cfg["seed"])
    w = rng.normal(0, 0.01, (d, k))
    delay = float(os.environ.get("INPUT_DELAY_S", "0"))
    out = {"loss": [], "samples_per_sec": []}
    for step in range(1, cfg["steps"] + 1):
        t0 = time.perf_counter()
        if delay:
            time.sleep(delay)  # the input pipeline
        idx = rng.choice(n, cfg["batch_size"], replace=False)
        z = (x[idx].astype(dt) @ w.astype(dt)).astype(np.float64)
        z = z - z.max(1, keepdims=True)
        p = np.exp(z) / np.exp(z).sum(1, keepdims=True)
        loss = float(-np.mean(np.log(p[np.arange(len(idx)), y[idx]] + 1e-12)))
        g = p.copy()
        g[np.arange(len(idx)), y[idx]] -= 1
        w -= cfg["lr"] * (x[idx].T.astype(dt) @ g.astype(dt)).astype(np.float64) / len(idx)
        out["loss"].append(loss)
        out["samples_per_sec"].append(len(idx) / (time.perf_counter() - t0))
    return out


if __name__ == "__main__":
    cfg = json.load(open(sys.argv[1] if len(sys.argv) > 1 else "config.json"))
    json.dump(train(cfg), open("metrics.json", "w"))
'''

GOOD = {"seed": 0, "lr": 0.5, "batch_size": 32, "steps": 40}

APPROX_TEST = """\
import json

import pytest

GOLDEN = json.load(open("golden_values.json"))


def test_loss_curve_matches_golden():
    actual = json.load(open("metrics.json"))
    assert actual["loss"] == pytest.approx(GOLDEN["loss"], rel=GOLDEN["rtol"])
"""

ALLCLOSE_TEST = """\
import json
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def test_loss_curve_matches_golden():
    golden = json.loads((ROOT / "golden_values.json").read_text())
    actual = json.loads((ROOT / "metrics.json").read_text())
    np.testing.assert_allclose(actual["loss"], golden["loss"], rtol={rtol})
"""

ASSERT_CLOSE_TEST = """\
import json
import os

import torch

HERE = os.path.dirname(os.path.abspath(__file__))


def test_loss_curve_close():
    with open(os.path.join(HERE, "..", "golden", "loss_golden.json")) as f:
        golden = json.load(f)
    with open(os.path.join(HERE, "..", "metrics.json")) as f:
        actual = json.load(f)
    torch.testing.assert_close(torch.tensor(actual["loss"]), torch.tensor(golden["loss"]))
"""

ASSERT_CLOSE_GOLDEN_TEST = ASSERT_CLOSE_TEST.replace(
    '"golden", "loss_golden.json"', '"golden_values.json"'
)

THROUGHPUT_TEST = """\
import json

import numpy as np
import pytest


@pytest.fixture
def metrics():
    with open("metrics.json") as f:
        return json.load(f)


def test_loss_curve_matches_golden(metrics):
    golden = json.load(open("golden_values.json"))
    assert metrics["loss"] == pytest.approx(golden["loss"], rel=1e-6)


def test_throughput(metrics):
    samples_per_sec = float(np.median(metrics["samples_per_sec"]))
    assert samples_per_sec > 2000
"""

HANDWRITTEN_TEST = """\
import json
import os

import pandas as pd

HERE = os.path.dirname(__file__)
CFG = json.load(open(os.path.join(HERE, "..", "thresholds.json")))
TOL = CFG["loss_tol"]


def test_loss_relative_error(golden_loss):
    table = pd.read_csv(os.path.join(HERE, "..", "out", "metrics.csv"))
    for a, b in zip(table["loss"], golden_loss):
        assert abs(a - b) / abs(b) < TOL
"""

CONFTEST = """\
from pathlib import Path

import numpy as np
import pytest


@pytest.fixture
def golden_loss():
    return np.load(Path(__file__).parent / "data" / "golden_loss.npy")
"""

TIMEOUT_TEST = (
    APPROX_TEST
    + """

def test_end_to_end_eval():
    import time

    time.sleep(60)  # an evaluation that hangs on the runner
"""
)

WORKFLOW = """\
name: convergence
on: [pull_request]
jobs:
  convergence:
    runs-on: ubuntu-latest
    timeout-minutes: 1
    steps:
      - uses: actions/checkout@v4
      - run: python train.py config.json
      - run: python -m pytest -v tests
"""


def _train(repo: Path, cfg: dict, env: dict | None = None) -> dict:
    e = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", **(env or {}))
    (repo / "_golden_cfg.json").write_text(json.dumps(cfg))
    subprocess.run(
        [sys.executable, "train.py", "_golden_cfg.json"], cwd=repo, env=e, check=True, timeout=120
    )
    (repo / "_golden_cfg.json").unlink()
    out = json.loads((repo / "metrics.json").read_text())
    (repo / "metrics.json").unlink()
    return out


def make_repo(
    root: Path,
    test_py: str,
    *,
    golden: str = "golden_values.json",
    golden_cfg: dict = GOOD,
    golden_env: dict | None = None,
    rtol: float | None = None,
    files: dict[str, str] | None = None,
) -> Path:
    """Write the repository and record its golden loss curve by running ``train.py`` for real."""
    repo = root / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "train.py").write_text(TRAIN)
    (repo / "tests" / "test_convergence.py").write_text(test_py)
    for name, text in (files or {}).items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    m = _train(repo, golden_cfg, golden_env)
    doc: dict = {"loss": m["loss"]}
    if rtol is not None:
        doc = {"rtol": rtol, **doc}
    (repo / golden).parent.mkdir(parents=True, exist_ok=True)
    (repo / golden).write_text(json.dumps(doc, indent=1))
    return repo


def run_job(
    repo: Path,
    cfg: dict,
    env: dict | None = None,
    header: str = "",
    train_in_log: bool = True,
    limit_s: float | None = None,
    runner_limit: str = "",
) -> Path:
    """Run the CI job (train, then pytest) for real and return its log.

    ``limit_s``: kill pytest after this many seconds, as the CI runner does at the job's
    ``timeout-minutes`` (scaled down so the test suite stays fast; the fixture's workflow file
    states 1 minute), then append the runner's own cancellation lines naming ``runner_limit``.
    """
    (repo / "config.json").write_text(json.dumps(cfg))
    e = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONUNBUFFERED="1", **(env or {}))
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
    if train_in_log:
        log += ["$ python train.py config.json", tr.stdout, tr.stderr]
    args = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider"]
    args += ["-v", "tests"] if limit_s else ["-rA", "tests"]
    log.append("$ python -m pytest " + " ".join(args[4:]))
    try:
        te = subprocess.run(
            args,
            cwd=repo,
            env=e,
            capture_output=True,
            text=True,
            timeout=limit_s or 300,
            check=False,
        )
        log += [te.stdout, te.stderr, f"exit code {te.returncode}"]
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        log += [
            out,
            f"##[error]The job running on runner GitHub Actions 7 has exceeded the maximum "
            f"execution time of {runner_limit}.",
            "##[error]The operation was canceled.",
        ]
    path = repo.parent / "ci.log"
    path.write_text("\n".join(log))
    return path


# --- the old code on the same runner: a CI job that runs the base branch beside the PR --------

GIT = [
    "git",
    "-c",
    "user.name=ci",
    "-c",
    "user.email=ci@example.invalid",
    "-c",
    "init.defaultBranch=main",
]


def make_git_repo(root: Path, test_py: str, new_train: str, **kw) -> Path:
    """A fixture repository under git: ``main`` holds the code that recorded the golden values,
    branch ``pr`` the change under test (``new_train`` replaces ``train.py``)."""
    repo = make_repo(root, test_py, **kw)
    run = dict(cwd=repo, check=True, capture_output=True, timeout=60)
    subprocess.run([*GIT, "init", "-q"], **run)
    subprocess.run([*GIT, "add", "-A"], **run)
    subprocess.run([*GIT, "commit", "-q", "-m", "golden values recorded"], **run)
    subprocess.run([*GIT, "checkout", "-q", "-b", "pr"], **run)
    (repo / "train.py").write_text(new_train)
    subprocess.run([*GIT, "commit", "-q", "-am", "the change under test"], **run)
    return repo


def _bk(lines: list[str], t0: int = 1_764_600_000_000) -> list[str]:
    """Buildkite's raw job log framing: every line starts with an APC timestamp
    ``ESC _bk;t=<ms> BEL`` (https://buildkite.com/docs/pipelines/managing-log-output)."""
    out = []
    for i, block in enumerate(lines):
        for ln in block.split("\n"):
            out.append(f"\x1b_bk;t={t0 + 7 * len(out) + i}\x07{ln}")
    return out


def _gh(lines: list[str]) -> list[str]:
    """GitHub Actions' downloaded job log: an ISO-8601 timestamp before every line."""
    out = []
    for block in lines:
        for ln in block.split("\n"):
            out.append(f"2026-12-01T19:{len(out) // 60 % 60:02d}:{len(out) % 60:02d}.1234567Z {ln}")
    return out


def run_two_versions(
    repo: Path,
    cfg: dict,
    env: dict | None = None,
    system: str = "plain",
    header: str = "",
    name: str = "ci.log",
) -> Path:
    """One CI job that runs the suite on the base branch (``git checkout main``) and then on the
    change under test (``git checkout pr``), on the same machine, for real: git, ``train.py`` and
    pytest in subprocesses. ``system``: ``plain`` (commands echoed as ``$ cmd``), ``buildkite``
    (``--- `` / ``+++ `` sections, ``_bk;t=`` timestamps, pytest's own ANSI colours) or
    ``github`` (``##[group]Run cmd`` groups, ISO timestamps)."""
    e = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONUNBUFFERED="1", **(env or {}))
    e.pop("PYTEST_ADDOPTS", None)
    (repo / "config.json").write_text(json.dumps(cfg))
    log: list[str] = [header] if header else []
    color = ["--color=yes"] if system == "buildkite" else []
    steps = [
        ("main", "Reference: the base branch (main) on this agent"),
        ("pr", "Tests on the PR"),
    ]
    for ref, title in steps:
        if system == "buildkite":
            log.append(("--- :git: " if ref == "main" else "+++ :pytest: ") + title)
        elif system == "github":
            log.append(f"##[group]Run git checkout {ref}")
        for cmd in (
            [*GIT, "checkout", "-q", ref],
            [sys.executable, "train.py", "config.json"],
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", *color, "tests"],
        ):
            shown = " ".join(["git", *cmd[len(GIT) :]] if cmd[0] == "git" else ["python", *cmd[1:]])
            if system != "github" or cmd[0] != "git":
                log.append(f"$ {shown}")
            p = subprocess.run(cmd, cwd=repo, env=e, capture_output=True, text=True, timeout=300)
            log += [p.stdout, p.stderr]
        if system == "github":
            log.append("##[endgroup]")
    if system == "buildkite":
        log = _bk(log)
    elif system == "github":
        log = _gh(log)
    path = repo.parent / name
    path.write_text("\n".join(log))
    return path


# --- final metrics compared as a mapping: results == pytest.approx({...}) ----------------------

EVALUATE = """\
import json

m = json.load(open("metrics.json"))
tail = m["loss"][-5:]
json.dump({"eval_loss": m["loss"][-1], "loss_tail": sum(tail) / len(tail)}, open("eval_results.json", "w"))
"""

#: the expected final metrics written in the test (``%(...)r`` filled with recorded values)
MAPPING_LITERAL_TEST = """\
import json

import pytest

EXPECTED = {"eval_loss": %(eval_loss)r, "loss_tail": %(loss_tail)r}


def test_eval_results():
    results = json.load(open("eval_results.json"))
    assert results == pytest.approx(EXPECTED, rel=1e-4)
"""

MAPPING_FILE_TEST = """\
import json

import pytest


def test_eval_results():
    golden = json.load(open("golden_eval.json"))
    results = json.load(open("eval_results.json"))
    assert results == pytest.approx(golden, rel=1e-4)
"""


def make_mapping_repo(root: Path, literal: bool) -> Path:
    """A repository whose test compares the job's final metrics (``eval_results.json``) with
    expected values, as a mapping, with ``pytest.approx(rel=1e-4)``; the expected values are
    recorded by running the good config for real (written into the test, or ``golden_eval.json``)."""
    repo = make_repo(root, "", files={"evaluate.py": EVALUATE})
    e = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    (repo / "config.json").write_text(json.dumps(GOOD))
    for cmd in (["train.py", "config.json"], ["evaluate.py"]):
        subprocess.run([sys.executable, *cmd], cwd=repo, env=e, check=True, timeout=120)
    ev = json.loads((repo / "eval_results.json").read_text())
    if literal:
        (repo / "tests" / "test_convergence.py").write_text(MAPPING_LITERAL_TEST % ev)
    else:
        (repo / "golden_eval.json").write_text(json.dumps(ev))
        (repo / "tests" / "test_convergence.py").write_text(MAPPING_FILE_TEST)
    for f in ("eval_results.json", "metrics.json", "config.json"):
        (repo / f).unlink()
    return repo


def run_eval_job(repo: Path, cfg: dict, env: dict | None = None) -> Path:
    """The job: train, evaluate, pytest (subprocesses); returns the log."""
    e = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", **(env or {}))
    e.pop("PYTEST_ADDOPTS", None)
    (repo / "config.json").write_text(json.dumps(cfg))
    log = []
    for cmd in (
        ["train.py", "config.json"],
        ["evaluate.py"],
        ["-m", "pytest", "-p", "no:cacheprovider", "-rA", "tests"],
    ):
        p = subprocess.run(
            [sys.executable, *cmd], cwd=repo, env=e, capture_output=True, text=True, timeout=300
        )
        log += [f"$ python {' '.join(cmd)}", p.stdout, p.stderr]
    path = repo.parent / "ci.log"
    path.write_text("\n".join(log))
    return path
