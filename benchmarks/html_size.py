"""HTML report size and render time for a large run (default 10 million points).

Builds a RunData in memory: ``--metrics`` metrics (default 200) x ``--steps`` steps
(default 50,000). Nine of them play the roles the report plots (train/val loss,
validation accuracy, learning rate, grad norm, loss scale, step time, data time,
GPU utilisation); the train loss has spikes and diverges to NaN, so the findings
drawn on the plots are there too. The rest are per-layer grad norms. Then:

1. ``audit(run)`` (every point read by the detectors),
2. ``render_html(report, run)`` (plots downsampled for display only),

and prints the point count, the seconds of each step, the HTML size in MB (the
target is under 5 MB) and the size of each inline plot. Also checks that the
largest spike of the full-resolution train loss is still in the downsampled curve.

Usage: ``python benchmarks/html_size.py [--metrics N] [--steps N] [--out report.html]``
"""

from __future__ import annotations

import argparse
import base64
import re
import sys
import time
from pathlib import Path

import numpy as np


def build_run(n_metrics: int, n_steps: int):
    from mlaudit_core import MetricTable, RunData, RunIdentity, RunStatus

    rng = np.random.default_rng(0)
    st = np.arange(1, n_steps + 1, dtype=np.int64)
    loss = 3.0 * np.exp(-st / (n_steps / 6)) + 1.0 + rng.normal(0, 0.02, n_steps)
    spikes = rng.choice(np.arange(n_steps // 10, n_steps // 2), 5, replace=False)
    loss[spikes] *= 3.0
    grow = st > 0.8 * n_steps
    loss[grow] += (st[grow] - 0.8 * n_steps) * (3.0 / n_steps)
    loss[st > 0.95 * n_steps] = np.nan
    val = 3.0 * np.exp(-st / (n_steps / 6)) + 1.1
    roles = {
        "train/loss": loss,
        "val/loss": val,
        "val/accuracy": 0.9 - val / 5,
        "train/lr": np.minimum(st / (n_steps / 50), 1)
        * 3e-4
        * 0.5
        * (1 + np.cos(np.pi * st / n_steps)),
        "train/grad_norm": 1 + rng.gamma(2, 0.2, n_steps),
        "train/loss_scale": 2.0 ** np.clip(16 - st // (n_steps // 8), 8, 16),
        "perf/step_time": 0.3 + rng.gamma(2, 0.01, n_steps),
        "perf/data_time": 0.02 + rng.gamma(2, 0.002, n_steps),
        "system/gpu_0_utilization_percentage": np.clip(90 + rng.normal(0, 3, n_steps), 0, 100),
    }
    names = list(roles)[:n_metrics]
    names += [f"layers/{i:03d}/weight_norm" for i in range(n_metrics - len(names))]
    values = np.empty(n_metrics * n_steps)
    for i, name in enumerate(names):
        values[i * n_steps : (i + 1) * n_steps] = (
            roles[name] if name in roles else 1 + 0.01 * i + rng.normal(0, 0.01, n_steps)
        )
    codes = np.repeat(np.arange(n_metrics, dtype=np.int32), n_steps)
    steps = np.tile(st, n_metrics)
    wall = 1.7e9 + steps * 0.3
    metrics = MetricTable(codes, steps, values, wall, names=names)
    run = RunData(
        identity=RunIdentity("bench", "big-run", name="10M-point benchmark run"),
        status=RunStatus.FAILED,
        metrics=metrics,
    )
    return run


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--metrics", type=int, default=200)
    ap.add_argument("--steps", type=int, default=50_000)
    ap.add_argument("--out", type=Path, default=None, help="also write the HTML here")
    a = ap.parse_args(argv)

    from mlaudit_core import audit
    from mlaudit_core.render.html import render_html
    from mlaudit_core.render.plots import downsample, plots_unavailable

    if plots_unavailable():
        print(f"note: {plots_unavailable()}; the page will have no plots", file=sys.stderr)
    t0 = time.perf_counter()
    run = build_run(a.metrics, a.steps)
    t_build = time.perf_counter() - t0
    t0 = time.perf_counter()
    report = audit(run)
    t_audit = time.perf_counter() - t0
    t0 = time.perf_counter()
    html = render_html(report, run)
    t_render = time.perf_counter() - t0
    size = len(html.encode("utf-8"))
    imgs = re.findall(r'<img src="data:image/png;base64,([^"]+)"[^>]*alt="([^"]*)"', html)
    print(f"points            {len(run.metrics):>14,} ({a.metrics} metrics x {a.steps:,} steps)")
    print(f"build RunData     {t_build:>14.2f} s")
    print(
        f"audit             {t_audit:>14.2f} s  (verdict: {report.verdict.outcome.value}, "
        f"{len(report.findings)} findings)"
    )
    print(f"render_html       {t_render:>14.2f} s")
    verdict = "ok" if size < 5e6 else "OVER"
    print(f"HTML size         {size / 1e6:>14.2f} MB  (target < 5 MB: {verdict})")
    for data, alt in imgs:
        print(f"  plot {alt.split(':')[0]:<26} {len(base64.b64decode(data)) / 1e3:>8.1f} KB")
    s = run.series("train/loss").by_step().finite()
    dx, dy = downsample(s.steps, s.values)
    kept = dy.max() == s.values.max() and dy.min() == s.values.min()
    print(f"train/loss shown  {len(dx):>14,} of {len(s):,} finite points; max and min kept: {kept}")
    if a.out:
        a.out.write_text(html, encoding="utf-8")
        print(f"wrote {a.out}")
    return 0 if size < 5e6 and kept else 1


if __name__ == "__main__":
    raise SystemExit(main())
