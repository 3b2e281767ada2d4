"""Audit cost on a large run: 10 million points, wall time and peak memory against plain numpy.

Builds, in memory, one RunData with 200 per-step metrics x 50,000 steps (plus validation
loss and accuracy every 100 steps): 10,001,000 points in one :class:`MetricTable`. The
curves are those of a healthy run: a decaying, noisy training loss, a validation loss a
little above it, warmup + cosine learning rate, grad norm, step time / data time /
throughput with jitter, GPU utilisation and memory, and per-layer grad norms, weight norms
and activation statistics for the rest. Then it runs :func:`mlaudit_core.audit.audit`
once and prints:

* the audit's wall time (best of 3, with the first and the median) next to one vectorised
  numpy pass over the same columns (``np.isfinite(...).sum()``, ``np.nanmin`` and
  ``np.nanmax`` over the values and the wall times; best of 3), and their ratio. Aim
  (issue #4): audit <= 10x that pass;
* peak memory: the process's peak resident set during the first audit (Linux ``VmHWM``, reset
  through ``/proc/self/clear_refs`` just before the audit; ``ru_maxrss`` elsewhere, which
  may include the table's construction) minus the resident set before the data was built,
  against the raw size of the table (``MetricTable.nbytes``: key code, step, value and wall
  time per point, 28 bytes). Aim: <= 4x raw.

Usage::

    python benchmarks/large_run.py [--steps 50000] [--metrics 200] [--tracemalloc]

``--tracemalloc`` repeats the audit under :mod:`tracemalloc` and prints its traced peak
(numpy reports its buffers to tracemalloc); that run is slower and is not timed.
"""

from __future__ import annotations

import argparse
import gc
import resource
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

MB = 1024 * 1024


def _status_kb(field: str) -> int | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def rss_bytes() -> int:
    """Current resident set size (bytes); ``ru_maxrss`` when /proc is unavailable."""
    kb = _status_kb("VmRSS")
    return (
        kb * 1024 if kb is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    )


def reset_peak() -> bool:
    """Reset the kernel's peak-RSS counter (Linux >= 4.0); False when not possible."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def peak_bytes() -> int:
    kb = _status_kb("VmHWM")
    return (
        kb * 1024 if kb is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    )


def build_run(steps: int, n_metrics: int, seed: int = 0):
    """A healthy-looking RunData of ``n_metrics`` per-step metrics x ``steps`` steps (+2 eval series).

    Returns ``(run, raw_bytes)``.
    """
    from mlaudit_core.rundata import MetricTable, RunData, RunIdentity, RunStatus

    rng = np.random.default_rng(seed)
    s = np.arange(1, steps + 1, dtype=np.int64)
    x = s.astype(np.float64)
    warm = max(steps // 25, 1)
    lr = np.where(
        x <= warm,
        3e-4 * x / warm,
        3e-4 * 0.5 * (1 + np.cos(np.pi * np.clip((x - warm) / (steps - warm), 0, 1))),
    )
    loss = 2.5 * np.exp(-x / (steps / 6)) + 0.35 + 0.04 * rng.standard_normal(steps)
    step_time = 0.25 * (1 + 0.03 * rng.standard_normal(steps)).clip(0.8)
    step_time[0] = 6.0  # compile / warm-up step
    data_time = 0.01 * rng.lognormal(0, 0.3, steps)
    wall = 1.7e9 + np.cumsum(step_time)
    named = {
        "train/loss": loss,
        "train/lr": lr,
        "train/grad_norm": (1.0 / (1 + x / (steps / 5))) * rng.lognormal(0, 0.2, steps),
        "perf/step_time": step_time,
        "perf/data_time": data_time,
        "perf/throughput": 256 / step_time,
        "system/gpu_0_utilization_percentage": (92 + 3 * rng.standard_normal(steps)).clip(0, 100),
        "system/gpu_0_memory_usage_percentage": (71 + 0.5 * rng.standard_normal(steps)).clip(
            0, 100
        ),
        "train/epoch": x / (steps / 10),
    }
    names = list(named)
    per_step = [named[k] for k in names]
    kinds = ("grad_norm", "weight_norm", "act_mean", "act_std")
    i = 0
    while len(names) < n_metrics:
        layer, kind = divmod(i, len(kinds))
        i += 1
        names.append(f"layers/{layer:03d}/{kinds[kind]}")
        base = {"grad_norm": 0.05, "weight_norm": 12.0, "act_mean": 0.0, "act_std": 1.0}[
            kinds[kind]
        ]
        drift = 1 + 0.2 * (1 - np.exp(-x / steps))
        per_step.append(base * drift + 0.01 * rng.standard_normal(steps))
    eval_every = 100
    ev = s[eval_every - 1 :: eval_every]
    eloss = 2.5 * np.exp(-ev / (steps / 6)) + 0.45 + 0.01 * rng.standard_normal(ev.size)
    eacc = 0.95 - 0.8 * np.exp(-ev / (steps / 6)) + 0.003 * rng.standard_normal(ev.size)

    n_key = len(names)
    codes = np.concatenate(
        [
            np.repeat(np.arange(n_key, dtype=np.int32), steps),
            np.full(ev.size, n_key, dtype=np.int32),
            np.full(ev.size, n_key + 1, dtype=np.int32),
        ]
    )
    all_steps = np.concatenate([np.tile(s, n_key), ev, ev])
    values = np.concatenate([*per_step, eloss, eacc])
    walls = np.concatenate([np.tile(wall, n_key), wall[ev - 1], wall[ev - 1]])
    del per_step, named
    table = MetricTable(codes, all_steps, values, walls, names=[*names, "val/loss", "val/accuracy"])
    del codes, all_steps, values, walls
    start = datetime.fromtimestamp(1.7e9, tz=timezone.utc)
    run = RunData(
        identity=RunIdentity(tracker="synthetic", id="large-run", name="large-run"),
        status=RunStatus.FINISHED,
        start_time=start,
        end_time=start + timedelta(seconds=float(wall[-1] - 1.7e9)),
        params={"lr": "3e-4", "batch_size": "256", "steps": str(steps)},
        metrics=table,
    )
    return run, table.nbytes


def numpy_pass(run, repeat: int = 3) -> float:
    """Best-of-``repeat`` seconds of one vectorised pass over the table's value and wall columns."""
    t = run.metrics
    cols = (t._values, t._wall)  # the same arrays the detectors slice
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for c in cols:
            int(np.isfinite(c).sum())
            float(np.nanmin(c))
            float(np.nanmax(c))
        best = min(best, time.perf_counter() - t0)
    return best


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=50_000)
    ap.add_argument("--metrics", type=int, default=200, help="per-step metrics (default 200)")
    ap.add_argument(
        "--tracemalloc", action="store_true", help="also measure a traced peak (slower)"
    )
    args = ap.parse_args(argv)
    if args.steps < 1000 or args.metrics < 10:
        print("error: --steps must be >= 1000 and --metrics >= 10", file=sys.stderr)
        return 2

    from mlaudit_core.audit import audit
    from mlaudit_core.render.markdown import render_markdown

    # warm imports and caches (detector registry, templates) on a small run first
    small, _ = build_run(1000, 10)
    render_markdown(audit(small))
    del small
    gc.collect()

    rss0 = rss_bytes()
    t0 = time.perf_counter()
    run, raw = build_run(args.steps, args.metrics)
    gc.collect()
    t_build = time.perf_counter() - t0
    rss_data = rss_bytes()
    n = len(run.metrics)

    t_np = numpy_pass(run)
    gc.collect()
    exact = reset_peak()
    t0 = time.perf_counter()
    report = audit(run)
    t_first = time.perf_counter() - t0
    peak = peak_bytes()
    times = [t_first]
    for _ in range(2):  # best of 3, as the numpy pass; the per-audit memo is cleared each time
        run.cache.clear()
        t0 = time.perf_counter()
        audit(run)
        times.append(time.perf_counter() - t0)
    t_audit = min(times)
    top = sorted(((d.seconds, d.code) for d in report.detectors), reverse=True)[:8]

    print(
        f"large run: {n:,} points ({len(run.metrics.keys)} metrics; {args.metrics} x {args.steps:,} "
        f"steps + 2 eval series), built in {t_build:.1f}s"
    )
    print(f"raw data (MetricTable.nbytes): {raw / MB:,.1f} MB ({raw / n:.0f} B/point)")
    print(
        f"verdict: {report.verdict.outcome.value}/{report.verdict.cause.value}; "
        f"{len(report.findings)} findings"
    )
    print()
    print(f"numpy pass (isfinite+nanmin+nanmax over values and wall times, best of 3): {t_np:.3f}s")
    print(
        f"audit wall time (best of 3; first {t_first:.3f}s, median {sorted(times)[1]:.3f}s):   "
        f"{t_audit:.3f}s"
    )
    print(
        f"ratio audit / numpy pass: {t_audit / t_np:.1f}x   (aim <= 10x: "
        f"{'ok' if t_audit / t_np <= 10 else 'MISS'})"
    )
    print("slowest detectors: " + ", ".join(f"{c} {s:.3f}s" for s, c in top))
    print()
    how = (
        "VmHWM reset before the audit" if exact else "ru_maxrss (includes the table's construction)"
    )
    print(
        f"RSS before building the data {rss0 / MB:,.0f} MB; with the data {rss_data / MB:,.0f} MB; "
        f"peak during the audit {peak / MB:,.0f} MB ({how})"
    )
    extra = peak - rss_data
    total = peak - rss0
    print(f"audit's own peak above the loaded data: {extra / MB:,.1f} MB = {extra / raw:.2f}x raw")
    print(
        f"peak memory for data + audit: {total / MB:,.1f} MB = {total / raw:.2f}x raw   "
        f"(aim <= 4x: {'ok' if total / raw <= 4 else 'MISS'})"
    )
    if args.tracemalloc:
        import tracemalloc

        gc.collect()
        tracemalloc.start()
        audit(run)
        _, traced = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        print(
            f"tracemalloc peak during a second audit (allocations made by the audit): "
            f"{traced / MB:,.1f} MB = {traced / raw:.2f}x raw"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
