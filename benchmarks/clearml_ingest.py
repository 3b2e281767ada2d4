"""How fast ``mlaudit_clearml.loader.load_task`` reads scalars and console through the real SDK.

Fills the test suite's fake ClearML server (tests/clearml_fake_server.py, on 127.0.0.1) with one
task holding ``--points`` scalar points spread over ``--series`` series and ``--log-lines``
console lines, then loads the task as ``mlaudit clearml`` does (raw scalar endpoint asked by
iteration and by timestamp, 100,000 points a call; console paged 5,000 events a call) and prints
the figures. The fake server answers from memory, so the figures are the client side's cost (SDK
session, JSON decoding, building the table) plus loopback HTTP; a real server adds its
Elasticsearch time.

    python benchmarks/clearml_ingest.py --points 200000 --series 10
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--points", type=int, default=200_000)
    ap.add_argument("--series", type=int, default=10)
    ap.add_argument("--log-lines", type=int, default=100_000)
    args = ap.parse_args()

    from clearml_fake_server import FakeClearMLServer

    srv = FakeClearMLServer().start()
    tmp = Path(tempfile.mkdtemp(prefix="mlaudit-bench-"))
    os.environ["CLEARML_CONFIG_FILE"] = str(srv.write_config(tmp / "clearml.conf"))
    os.environ["CLEARML_CACHE_DIR"] = str(tmp / "cache")
    tid = srv.ep_tasks__create({"name": "bench", "project": None})["id"]
    srv.set_status(tid, "completed")
    store = srv._task_events(tid)
    per = args.points // args.series
    t0 = 1_700_000_000_000
    for s in range(args.series):
        metric, variant = ("train", f"s{s}")
        for i in range(per):
            ev = {
                "type": "training_stats_scalar",
                "task": tid,
                "metric": metric,
                "variant": variant,
                "iter": i,
                "value": 1.0 / (i + 1),
                "timestamp": t0 + i * 10,
            }
            store["training_stats_scalar"][
                hashlib.md5(f"{tid}-{i}-{metric}-{variant}".encode()).hexdigest()
            ] = ev
    store["log"].extend(
        {
            "type": "log",
            "task": tid,
            "timestamp": t0 + i,
            "level": "info",
            "msg": f"step {i} | loss {1.0 / (i + 1):.4f}",
        }
        for i in range(args.log_lines)
    )

    from mlaudit_clearml.connection import connect
    from mlaudit_clearml.loader import load_console, load_scalars, load_task

    session = connect()
    t = time.perf_counter()
    table = load_scalars(session, tid, [])
    t_scalars = time.perf_counter() - t
    t = time.perf_counter()
    events = load_console(session, tid, [])
    t_console = time.perf_counter() - t
    t = time.perf_counter()
    run = load_task(session, tid)
    t_total = time.perf_counter() - t
    calls = sum(1 for e, _ in srv.calls if e == "events.scalar_metrics_iter_raw")
    print(
        f"scalars: {len(table):,} points in {args.series} series: {t_scalars:.2f} s "
        f"({len(table) / t_scalars:,.0f} points/s; {calls} raw-endpoint calls for both passes)"
    )
    print(
        f"console: {len(events):,} log events: {t_console:.2f} s ({len(events) / t_console:,.0f} lines/s)"
    )
    print(
        f"load_task (scalars + console + task + console parsing): {t_total:.2f} s, "
        f"table {run.metrics.nbytes / 1e6:.1f} MB"
    )
    srv.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
