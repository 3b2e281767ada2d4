"""Experiment triage (issue 32): is the known cause found first, and how often does a
noise-only sweep yield a claimed factor?

Generated sweeps of known structure: failures caused by an lr threshold (lr >= 3e-3), one bad
host, one commit, a start-time change, or nothing (noise-only: 20 % of runs fail at random);
each failing label is flipped with probability ``--flip`` (the causes are not perfect).

Figures printed:

- ``found first``: per cause, the share of sweeps whose first factor is the known one and is
  significant after Benjamini-Hochberg;
- ``false discovery``: the share of noise-only sweeps with any significant factor (target
  <= 5 %);
- ``first bad commit``: the share of regression sweeps (6 commits used one after the other,
  failures from one of them on) whose commit-ordered change point is significant and names that
  commit; ``commit change point on noise``: the share of noise sweeps over the same commits with
  a significant commit change point;
- ``grouping 10,000 runs``: wall seconds of :func:`mlaudit_core.triage.triage` on a
  ``--scale``-run sweep (target <= 1 s), the median of ``--repeat``;
- with ``--server-url``: the same sweeps (``--server-runs`` runs each) logged to a real
  ``mlflow server`` with loss curves (a failing run diverges), audited and triaged end to end
  by ``mlaudit batch mlflow --triage --format json --no-write``; found first per cause.

Usage: ``python benchmarks/triage_eval.py [--sweeps 200] [--runs 150] [--scale 10000]
[--server-url http://127.0.0.1:5000 --server-runs 24 --server-sweeps 2]``.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mlaudit_core.triage import triage  # noqa: E402

CAUSES = {"lr": "param:lr", "host": "host", "commit": "commit", "time": "start_time", "noise": None}


def sweep(n: int, cause: str, rng: np.random.Generator, flip: float) -> list[dict]:
    """``n`` run records whose failures follow ``cause``."""
    recs = []
    for i in range(n):
        lr = float(10 ** rng.uniform(-4, -2))
        host = f"gpu-{rng.integers(6)}"
        commit = str(rng.choice(["a1f3", "b2e4", "c3d5"]))
        bad = {
            "lr": lr >= 3e-3,
            "host": host == "gpu-3",
            "commit": commit == "c3d5",
            "time": i >= n // 2,
            "noise": bool(rng.random() < 0.2),
        }[cause]
        if cause != "noise" and rng.random() < flip:
            bad = not bad
        recs.append(
            {
                "run_id": f"r{i:05d}",
                "outcome": "diverged" if bad else "succeeded",
                "params": {
                    "lr": f"{lr:.4g}",
                    "batch_size": str(rng.choice([32, 64, 128])),
                    "optimizer": str(rng.choice(["adam", "sgd"])),
                    "seed": str(i % 3),
                },
                "tags": {"team": "vision"},
                "start_time": 1.7e9 + 60 * i,
                "commit": commit,
                "host": host,
                "metrics": {"val/loss": float(rng.normal(1.0, 0.05))},
            }
        )
    return recs


def records_eval(sweeps: int, runs: int, flip: float) -> None:
    rng = np.random.default_rng(2026)
    print(f"generated sweeps: {sweeps} per cause, {runs} runs each, label flip {flip:.0%}")
    for cause, name in CAUSES.items():
        hits = 0
        for k in range(sweeps):
            t = triage(sweep(runs, cause, rng, flip), seed=k)
            if name is None:
                hits += bool(t.significant)
            else:
                hits += bool(t.factors and t.factors[0].name == name and t.factors[0].significant)
        label = "false discovery (noise-only)" if name is None else f"found first: {cause}"
        print(f"  {label:<32} {hits}/{sweeps} = {hits / sweeps:.1%}")


def commit_sweep(n: int, bad_from: int | None, rng: np.random.Generator, flip: float) -> list[dict]:
    """``n`` runs made over 6 commits one after the other (neighbouring commits' runs
    interleave in time by up to 3 runs, as branches do); from commit ``bad_from`` on runs fail
    (a regression), or 20 % at random when ``bad_from`` is None."""
    recs = sweep(n, "noise", rng, 0.0)
    per = max(1, n // 6)
    for i, r in enumerate(recs):
        k = min(5, max(0, (i + int(rng.integers(-3, 4))) // per))
        r["commit"] = f"c{k}"
        if bad_from is not None:
            bad = k >= bad_from
            if rng.random() < flip:
                bad = not bad
            r["outcome"] = "diverged" if bad else "succeeded"
    return recs


def commit_eval(sweeps: int, runs: int, flip: float) -> None:
    """First bad / last good by commit: the share of regression sweeps (failures from a random
    commit 1-5 on) whose commit change point is significant and names that commit as the first
    bad one, and the share of noise sweeps (same commits, 20 % random failures) with a
    significant commit change point."""
    rng = np.random.default_rng(2027)
    hits = false = 0
    for k in range(sweeps):
        bad_from = int(rng.integers(1, 6))
        cc = triage(commit_sweep(runs, bad_from, rng, flip), seed=k).commit_change_point
        hits += bool(cc and cc["significant"] and cc["first_bad_commit"] == f"c{bad_from}")
        cc = triage(commit_sweep(runs, None, rng, flip), seed=k).commit_change_point
        false += bool(cc and cc["significant"])
    print(f"  {'first bad commit: regression':<32} {hits}/{sweeps} = {hits / sweeps:.1%}")
    print(f"  {'commit change point on noise':<32} {false}/{sweeps} = {false / sweeps:.1%}")


def scale_eval(n: int, repeat: int) -> None:
    rng = np.random.default_rng(1)
    for cause in ("lr", "noise"):
        recs = sweep(n, cause, rng, 0.03)
        times, cpu = [], []
        for k in range(repeat):
            t0, c0 = time.perf_counter(), time.process_time()
            triage(recs, seed=k)
            times.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        print(
            f"grouping {n:,} runs ({cause}): {statistics.median(times):.3f} s wall, "
            f"{statistics.median(cpu):.3f} s CPU (median of {repeat})"
        )


def server_eval(url: str, runs: int, sweeps: int, causes: list[str], flip: float) -> None:
    import mlflow
    from mlflow.entities import Metric, Param
    from typer.testing import CliRunner

    from mlaudit.cli import app

    client = mlflow.MlflowClient(url)
    rng = np.random.default_rng(7)
    stamp = int(time.time())
    print(f"through mlflow server {url}: {sweeps} sweep(s) per cause, {runs} runs each")
    for cause in causes:
        hits = 0
        for k in range(sweeps):
            exp = client.create_experiment(f"triage-eval-{cause}-{stamp}-{k}")
            for rec in sweep(runs, cause, rng, flip):
                tags = {"host": rec["host"], "mlflow.source.git.commit": rec["commit"]}
                rid = client.create_run(
                    exp, tags=tags, start_time=int(rec["start_time"] * 1000)
                ).info.run_id
                ms = []
                for i in range(1, 161):
                    loss = 2.0 * math.exp(-i / 30) + 0.2
                    if rec["outcome"] == "diverged" and i > 100:
                        loss = 0.2 + (i - 100) * 0.3
                    ms.append(Metric("train/loss", loss, 1_700_000_000_000 + i * 1000, i))
                client.log_batch(
                    rid, metrics=ms, params=[Param(a, b) for a, b in rec["params"].items()]
                )
                client.update_run(rid, status="FINISHED")
            with tempfile.TemporaryDirectory() as tmp:
                res = CliRunner().invoke(
                    app,
                    [
                        "batch",
                        "mlflow",
                        "-e",
                        f"triage-eval-{cause}-{stamp}-{k}",
                        "-u",
                        url,
                        "--state",
                        str(Path(tmp) / "s.sqlite"),
                        "--jobs",
                        "2",
                        "--triage",
                        "--no-write",
                        "--format",
                        "json",
                    ],
                )
            doc = json.loads(res.stdout[res.stdout.index("{") :])
            fs = doc["triage"]["factors"]
            name = CAUSES[cause]
            if name is None:
                hits += any(f["significant"] for f in fs)
            else:
                hits += bool(fs and fs[0]["name"] == name and fs[0]["significant"])
        label = "false discovery (noise-only)" if CAUSES[cause] is None else f"found first: {cause}"
        print(f"  {label:<32} {hits}/{sweeps}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sweeps", type=int, default=200)
    ap.add_argument("--runs", type=int, default=150)
    ap.add_argument("--flip", type=float, default=0.03)
    ap.add_argument("--scale", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--server-url")
    ap.add_argument("--server-runs", type=int, default=24)
    ap.add_argument("--server-sweeps", type=int, default=2)
    ap.add_argument("--server-causes", default="lr,host,commit,noise")
    a = ap.parse_args()
    records_eval(a.sweeps, a.runs, a.flip)
    commit_eval(a.sweeps, a.runs, a.flip)
    scale_eval(a.scale, a.repeat)
    if a.server_url:
        server_eval(
            a.server_url, a.server_runs, a.server_sweeps, a.server_causes.split(","), a.flip
        )


if __name__ == "__main__":
    main()
