"""Benchmark: read a 200,000-row W&B history into RunData at full fidelity, print points/s.

The run is logged by the real wandb SDK in offline mode (WANDB_MODE=offline)
once and cached under ``--workdir``; each metric of each row is one point.
The script then times ``load_offline`` (framing, CRC check, protobuf decode,
conversion into the columnar MetricTable) and checks that every key has exactly
``--rows`` points, so the figure is for full fidelity, not a sample.

Usage::

    python benchmarks/wandb_ingest.py [--rows 200000] [--workdir /tmp/mlaudit-wandb-bench]

Target (issue 7): at least 100,000 points/s into RunData. For scale, the issue
quotes a raw protobuf pass over a 131 MB ``.wandb`` file at 378,000 records/s.
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import time
from pathlib import Path

KEYS = (
    "train/loss",
    "train/lr",
    "train/grad_norm",
    "perf/step_time",
    "perf/data_time",
    "perf/throughput",
)

_LOGGER = r"""
import math, os, sys
import wandb
rows = int(sys.argv[1])
run = wandb.init(project="mlaudit-bench", config={"lr": 3e-4, "seed": 0}, settings=wandb.Settings(
    console="off", x_disable_stats=True, x_disable_meta=True, x_disable_machine_info=True))
for i in range(rows):
    run.log({"train/loss": 2.0 * math.exp(-i / 50000) + 0.01 * math.sin(i), "train/lr": 3e-4,
             "train/grad_norm": 1.0 + 0.1 * math.cos(i), "perf/step_time": 0.1,
             "perf/data_time": 0.01, "perf/throughput": 320.0}, step=i)
run.finish()
print(run.id)
"""


def make_run(rows: int, workdir: Path) -> Path:
    """Log ``rows`` history rows with the real SDK (offline) and return the run directory."""
    marker = workdir / f"run-{rows}.path"
    if marker.exists() and Path(marker.read_text().strip()).exists():
        return Path(marker.read_text().strip())
    workdir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, WANDB_MODE="offline", WANDB_DIR=str(workdir), WANDB_SILENT="true")
    t0 = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", _LOGGER, str(rows)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()[-1]
    run_dir = next((workdir / "wandb").glob(f"offline-run-*-{out}"))
    print(f"logged {rows:,} rows with wandb in {time.perf_counter() - t0:.1f} s -> {run_dir}")
    marker.write_text(str(run_dir))
    return run_dir


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/mlaudit-wandb-bench"))
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)

    from mlaudit_wandb.offline import find_log, load_offline

    run_dir = make_run(args.rows, args.workdir)
    size = find_log(run_dir).stat().st_size
    best = math.inf
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        run = load_offline(run_dir)
        best = min(best, time.perf_counter() - t0)
    counts = {k: len(run.metrics.series(k)) for k in KEYS}
    bad = {k: n for k, n in counts.items() if n != args.rows}
    if bad:
        print(f"FAIL: expected {args.rows} points per key, got {bad}")
        return 1
    points = sum(counts.values())
    print(
        f".wandb file: {size / 1e6:.1f} MB, {args.rows:,} rows, {points:,} points "
        f"(every key has {args.rows:,}: full fidelity)"
    )
    print(
        f"load_offline: {best:.2f} s (best of {args.repeat}) -> {points / best:,.0f} points/s, "
        f"{args.rows / best:,.0f} rows/s, {size / 1e6 / best:.0f} MB/s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
