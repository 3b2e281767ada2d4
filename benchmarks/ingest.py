"""Ingest speed: mlaudit's loaders next to the official readers, on the same data, in one run.

Generates a TensorBoard log directory (default 1,000,000 scalar points, written by
tensorboardX) and an MLflow run in a sqlite store (default 500,000 points), then
reads each with:

* TensorBoard: mlaudit's reader, TensorBoard's ``EventAccumulator`` (sampling off),
  and ``tbparse.SummaryReader``;
* MLflow: mlaudit's loader on the ``sqlite:///`` URI (one bulk query), and
  ``MlflowClient.get_metric_history`` on the same URI and through a local
  ``mlflow server``.

and a CSV log and a JSON-lines log (each reader ``--repeat`` times, alternating, fastest kept) (default 1,000,000 rows each, about 100 MB: a
generic step CSV and a detectron2-style ``metrics.json``), read with mlaudit's format
readers (:mod:`mlaudit_core.formats`) and with ``pandas.read_csv`` /
``pandas.read_json(lines=True)``.

Each reader runs in its own subprocess so its peak RSS (``ru_maxrss``) is its own.
Prints points (or rows), seconds, points/s, peak MB and the speed-up of mlaudit over each.
Targets (issue 15): TensorBoard at least 15x faster than tbparse; CSV and JSON-lines at no
less than half the speed of pandas.

Usage: ``python benchmarks/ingest.py [--tb-points N] [--mlflow-points N] [--rows N] [--skip-server]
[--skip-mlflow]`` (``tests/test_formats.py`` runs it at toy size).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TAGS = 10


def gen_tb(path: Path, n: int) -> None:
    from tensorboardX import SummaryWriter

    w = SummaryWriter(str(path), max_queue=10000, flush_secs=3600)
    per = n // TAGS
    for i in range(per):
        for t in range(TAGS):
            w.add_scalar(f"m{t}/value", 1.0 / (i + 1 + t), i)
    w.close()


def gen_mlflow(uri: str, n: int) -> str:
    import mlflow
    from mlflow.entities import Metric

    client = mlflow.MlflowClient(uri)
    exp = client.create_experiment("bench")
    rid = client.create_run(exp).info.run_id
    per = n // TAGS
    batch: list = []
    for i in range(per):
        for t in range(TAGS):
            batch.append(Metric(f"m{t}/value", 1.0 / (i + 1 + t), 1_700_000_000_000 + i, i))
        if len(batch) >= 1000:
            client.log_batch(rid, metrics=batch)
            batch = []
    if batch:
        client.log_batch(rid, metrics=batch)
    client.set_terminated(rid)
    return rid


CSV_COLS = ("loss", "val_loss", "lr", "grad_norm", "accuracy", "val_accuracy", "throughput", "data_time")


def gen_tables(path: Path, rows: int) -> tuple[Path, Path]:
    """A generic step CSV and a detectron2-style JSON-lines log with ``rows`` rows each."""
    import numpy as np

    rng = np.random.default_rng(0)
    step = np.arange(rows)
    cols = {c: (1.0 / (step + 1 + i)) * (1 + 0.01 * rng.standard_normal(rows)) for i, c in enumerate(CSV_COLS)}
    csv = path / "metrics_log.csv"
    import pandas as pd

    pd.DataFrame({"step": step, "epoch": step // 1000, **cols}).to_csv(csv, index=False, float_format="%.9g")
    jl = path / "metrics.json"
    with open(jl, "w") as fh:
        names = ["total_loss", "loss_cls", "loss_box_reg", "lr", "time", "data_time", "fast_rcnn/cls_accuracy",
                 "eta_seconds"]
        arr = np.stack([cols[c] for c in CSV_COLS], axis=1)
        for i in range(rows):
            body = ", ".join(f'"{n}": {v:.9g}' for n, v in zip(names, arr[i]))
            fh.write(f'{{"iteration": {i}, {body}}}\n')
    return csv, jl


def read(reader: str, target: str, extra: str) -> dict:
    """Run inside the child process: read with one reader, return points and seconds.

    Module imports happen before the clock starts, for every reader alike.
    """
    for mod in {"mlaudit-tb": ["mlaudit_tensorboard.reader", "mlaudit_core"],
                "EventAccumulator": ["tensorboard.backend.event_processing.event_accumulator"],
                "tbparse": ["tbparse"], "mlaudit-mlflow": ["mlaudit_mlflow.loader", "mlflow"],
                "MlflowClient": ["mlflow"], "mlaudit-csv": ["mlaudit_core.formats", "pandas"],
                "mlaudit-jsonl": ["mlaudit_core.formats", "pandas"], "pandas.read_csv": ["pandas"],
                "pandas.read_json": ["pandas"]}.get(reader, []):
        __import__(mod)
    t0 = time.perf_counter()
    if reader == "mlaudit-tb":
        from mlaudit_tensorboard.reader import load_logdir

        n = len(load_logdir(target).metrics)
    elif reader == "EventAccumulator":
        from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

        acc = EventAccumulator(target, size_guidance={"scalars": 0})
        acc.Reload()
        n = sum(len(acc.Scalars(t)) for t in acc.Tags()["scalars"])
    elif reader == "tbparse":
        from tbparse import SummaryReader

        n = len(SummaryReader(target).scalars)
    elif reader == "mlaudit-mlflow":
        from mlaudit_mlflow.loader import load_run

        n = len(load_run(extra, target).metrics)
    elif reader == "MlflowClient":
        import mlflow

        c = mlflow.MlflowClient(target)
        n = sum(len(c.get_metric_history(extra, k)) for k in c.get_run(extra).data.metrics)
    elif reader in ("mlaudit-csv", "mlaudit-jsonl"):
        from mlaudit_core.formats import load_path

        loaded = load_path(target)
        n = len(loaded.runs[0][1].metrics)
        extra = loaded.reader
    elif reader == "pandas.read_csv":
        import pandas as pd

        df = pd.read_csv(target)
        n = int(df.drop(columns=["step"]).notna().sum().sum())
    elif reader == "pandas.read_json":
        import pandas as pd

        df = pd.read_json(target, lines=True)
        n = int(df.drop(columns=["iteration", "eta_seconds"]).notna().sum().sum())
    else:
        raise SystemExit(f"unknown reader {reader}")
    return {"points": n, "seconds": time.perf_counter() - t0,
            "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def child(reader: str, target: str, extra: str = "") -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", reader, target, extra],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def start_server(db_uri: str, root: Path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    mlflow_bin = shutil.which("mlflow", path=str(Path(sys.executable).parent)) or "mlflow"
    proc = subprocess.Popen([mlflow_bin, "server", "--host", "127.0.0.1", "--port", str(port),
                             "--backend-store-uri", db_uri, "--artifacts-destination", str(root / "a"),
                             "--workers", "1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    import requests

    url = f"http://127.0.0.1:{port}"
    for _ in range(180):
        try:
            if requests.get(url + "/health", timeout=1).ok:
                # warm the server (first request initialises its store) before anything is timed
                requests.get(url + "/api/2.0/mlflow/experiments/search", params={"max_results": 1},
                             timeout=60)
                return proc, url
        except requests.RequestException:
            time.sleep(0.5)
    proc.kill()
    raise SystemExit("mlflow server did not start")


def row(name: str, r: dict, ref: dict | None) -> str:
    rate = r["points"] / r["seconds"] if r["seconds"] else float("inf")
    speed = f"{r['seconds'] / ref['seconds']:.1f}x" if ref and ref is not r else ""
    return f"{name:34s} {r['points']:>10,d} {r['seconds']:9.2f} {rate:>13,.0f} {r['peak_mb']:9.0f}  {speed}"


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        print(json.dumps(read(sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else "")))
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tb-points", type=int, default=1_000_000)
    ap.add_argument("--mlflow-points", type=int, default=500_000)
    ap.add_argument("--rows", type=int, default=1_000_000, help="rows of the CSV and JSON-lines logs")
    ap.add_argument("--skip-server", action="store_true", help="skip MlflowClient through a server (slowest)")
    ap.add_argument("--skip-mlflow", action="store_true", help="skip the MLflow part")
    ap.add_argument("--repeat", type=int, default=3,
                    help="runs of each CSV/JSON-lines reader, alternating; the fastest counts (a shared "
                         "machine's load varies between runs)")
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="mlaudit-ingest-"))
    head = f"{'reader':34s} {'points':>10s} {'seconds':>9s} {'points/s':>13s} {'peak MB':>9s}  mlaudit is"
    try:
        t = time.perf_counter()
        gen_tb(tmp / "tb", a.tb_points)
        print(f"generated {a.tb_points:,d} TensorBoard points in {time.perf_counter() - t:.1f} s")
        res = {n: child(n, str(tmp / "tb")) for n in ("mlaudit-tb", "EventAccumulator", "tbparse")}
        print("\nTensorBoard event files\n" + head)
        for n, r in res.items():
            print(row(n, r, None if n == "mlaudit-tb" else res["mlaudit-tb"]))
        counts = {r["points"] for r in res.values()}
        print(f"identical point counts: {len(counts) == 1}")
        tbx = res["tbparse"]["seconds"] / res["mlaudit-tb"]["seconds"]
        print(f"mlaudit vs tbparse: {tbx:.1f}x faster (target >= 15x: {'met' if tbx >= 15 else 'NOT met'})")

        t = time.perf_counter()
        (tmp / "tables").mkdir()
        csv, jl = gen_tables(tmp / "tables", a.rows)
        mb = (csv.stat().st_size / 1e6, jl.stat().st_size / 1e6)
        print(f"\ngenerated {a.rows:,d}-row logs (CSV {mb[0]:.0f} MB, JSON-lines {mb[1]:.0f} MB) in "
              f"{time.perf_counter() - t:.1f} s")
        for title, ours, theirs, f in (("CSV log", "mlaudit-csv", "pandas.read_csv", csv),
                                       ("JSON-lines log", "mlaudit-jsonl", "pandas.read_json", jl)):
            runs = {ours: [], theirs: []}
            for _ in range(a.repeat):  # alternating, so both see the same machine load
                for name in (ours, theirs):
                    runs[name].append(child(name, str(f)))
            r = {name: min(xs, key=lambda x: x["seconds"]) for name, xs in runs.items()}
            print(f"\n{title}\n" + head)
            for n, x in r.items():
                print(row(n, x, None if n == ours else r[ours]))
            ratio = r[theirs]["seconds"] / r[ours]["seconds"]
            print(f"mlaudit speed / pandas speed: {ratio:.2f} (target >= 0.5: {'met' if ratio >= 0.5 else 'NOT met'})"
                  f"; identical point counts: {r[ours]['points'] == r[theirs]['points']}")
        if a.skip_mlflow:
            return

        db_uri = f"sqlite:///{tmp / 'mlflow.db'}"
        t = time.perf_counter()
        rid = gen_mlflow(db_uri, a.mlflow_points)
        print(f"\ngenerated {a.mlflow_points:,d} MLflow points in {time.perf_counter() - t:.1f} s")
        m = {"mlaudit (sqlite:///, bulk query)": child("mlaudit-mlflow", db_uri, rid),
             "MlflowClient (sqlite:///)": child("MlflowClient", db_uri, rid)}
        if not a.skip_server:
            proc, url = start_server(db_uri, tmp)
            try:
                m["mlaudit (server, REST)"] = child("mlaudit-mlflow", url, rid)
                m["MlflowClient (server)"] = child("MlflowClient", url, rid)
            finally:
                proc.terminate()
                proc.wait(timeout=30)
        print("\nMLflow run\n" + head)
        ref = m["mlaudit (sqlite:///, bulk query)"]
        for n, r in m.items():
            print(row(n, r, None if r is ref else ref))
        print(f"identical point counts: {len({r['points'] for r in m.values()}) == 1}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")
    main()
