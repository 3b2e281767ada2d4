"""CPU time of drawing the report's plots and page for one run (issue 30).

Builds a run of ``--points`` steps (train loss with two spikes and a late NaN stretch, val loss,
learning rate, grad norm, loss scale, step time, GPU utilisation: 7 panels), audits it once,
then prints the median CPU time (``time.process_time``) over ``--repeat`` renders of the SVG
plots (:func:`mlaudit_core.render.plots.render_plots`), of the whole page
(:func:`mlaudit_core.render.html.render_html`), the page a tracker write-back uploads (the
JSON report embedded, ``embed_json=True``), and, when matplotlib is installed, of the
same plots as PNG (``fmt="png"``), the renderer the SVG one replaced.

    python benchmarks/render_speed.py [--points 100000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

from mlaudit_core import MetricTable, RunData, RunIdentity, RunStatus, audit
from mlaudit_core.render.html import render_html
from mlaudit_core.render.plots import plots_unavailable, render_plots


def make_run(n: int) -> RunData:
    rng = np.random.default_rng(0)
    st = np.arange(1, n + 1)
    loss = 2.5 * np.exp(-st / (n / 8)) + 0.3 + 0.02 * rng.standard_normal(n)
    loss[n // 5] += 4.0
    loss[n // 3] += 3.0
    loss[int(n * 0.9) :] = np.nan
    val_st = st[:: max(n // 200, 1)]
    cols = {
        "train/loss": (st, loss),
        "val/loss": (val_st, 2.5 * np.exp(-val_st / (n / 8)) + 0.35),
        "train/learning_rate": (st, 1e-3 * np.minimum(1.0, st / (n / 20))),
        "train/grad_norm": (st, 1.0 + 0.2 * rng.standard_normal(n) ** 2),
        "train/loss_scale": (st, 2.0 ** (16 - np.minimum(st // (n / 8), 6))),
        "perf/step_time": (st, 0.1 + 0.01 * rng.standard_normal(n) ** 2),
        "sys/gpu_util": (st[::10], 90 + 5 * rng.standard_normal(st[::10].size)),
    }
    keys, steps, values = [], [], []
    for k, (s, v) in cols.items():
        keys += [k] * s.size
        steps.append(s)
        values.append(v)
    return RunData(
        identity=RunIdentity("mlflow", "bench", name="render-speed"),
        status=RunStatus.FAILED,
        metrics=MetricTable(keys, np.concatenate(steps), np.concatenate(values)),
    )


def cpu_ms(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.process_time()
        fn()
        times.append(time.process_time() - t)
    return 1000 * statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    run = make_run(args.points)
    report = audit(run)
    plots, notes = render_plots(report, run)
    print(
        f"load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} CPUs; run of {len(run.metrics):,} "
        f"points ({args.points:,} steps), {len(plots)} panels {[p.name for p in plots]} {notes or ''}"
    )
    print(f"{'render':28} {'CPU ms per run':>15}")
    print(
        f"{'plots as SVG (numpy)':28} {cpu_ms(lambda: render_plots(report, run), args.repeat):15.1f}"
    )
    print(
        f"{'render_html (page + SVG)':28} {cpu_ms(lambda: render_html(report, run), args.repeat):15.1f}"
    )
    ms = cpu_ms(lambda: render_html(report, run, embed_json=True), args.repeat)
    print(f"{'render_html, JSON embedded':28} {ms:15.1f}")
    print(f"{'SVG bytes on the page':28} {sum(len(p.svg) for p in plots):15,}")
    if plots_unavailable() is None:
        ms = cpu_ms(lambda: render_plots(report, run, fmt="png"), max(1, args.repeat // 2))
        print(f"{'plots as PNG (matplotlib)':28} {ms:15.1f}")


if __name__ == "__main__":
    main()
