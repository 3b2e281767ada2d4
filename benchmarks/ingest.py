"""Ingest speed: mlaudit's loaders next to the official readers, on the same data, in one run.

Generates a TensorBoard log directory (default 1,000,000 scalar points, written by
tensorboardX) and an MLflow run in a sqlite store (default 500,000 points), then
reads each with:

* TensorBoard: mlaudit's reader, TensorBoard's ``EventAccumulator`` (sampling off),
  and ``tbparse.SummaryReader``;
* MLflow: mlaudit's loader on the ``sqlite:///`` URI (one bulk query), and
  ``MlflowClient.get_metric_history`` on the same URI and through a local
  ``mlflow server``.

and a CSV log and a JSON-lines log (default 1,000,000 rows each, about 100 MB: a
generic step CSV and a detectron2-style ``metrics.json``), read with mlaudit's format
readers (:mod:`mlaudit_core.formats`) and with ``pandas.read_csv`` /
``pandas.read_json(lines=True)``.

Each reader runs in its own subprocess so its peak RSS (``VmHWM``, see :func:`peak_mb`) is its own.
The TensorBoard and table readers run ``--repeat`` times each, alternating (reader A, B, C,
A, B, C...), and the fastest run of each counts: on a shared machine the load moves between
runs, and alternating gives every reader the same spread of it.
Prints points (or rows), wall seconds, the reader process's CPU seconds (``getrusage``, nearly
independent of the load), points/s, peak MB and the speed-up of mlaudit over each, in wall time
and in CPU time; the TensorBoard part also prints every run's wall and CPU seconds.
Targets: TensorBoard at least 20x faster than tbparse (issue 21); CSV and JSON-lines at no
less than half the speed of pandas (issue 15); MLflow at least 5x ``MlflowClient`` on a
``sqlite:///`` URI and at least 3x through a local ``mlflow server`` (sqlite backend) with 2 and
4 workers (issue 21). The server rows start one server per ``--server-workers`` count;
``MlflowClient`` is read once per server (slow), mlaudit ``--repeat`` times (fastest kept).
``--only long`` (not in the default set) writes a CSV log and a JSON-lines log of a few
hundred rows with one data line of ``--long-mb`` MB (default 200) in the middle and reads
each with mlaudit (lines over 1 MiB are skipped, issue 15) and with pandas, printing the
peak memory of each. ``--only tb,tables,mlflow`` picks parts (``tests/test_benchmarks_smoke.py`` runs the MLflow
part at toy size, ``tests/test_formats.py`` the others).

Usage: ``python benchmarks/ingest.py [--tb-points N] [--mlflow-points N] [--rows N] [--skip-server]
[--skip-mlflow] [--server-workers 2,4] [--only tb,tables,mlflow] [--repeat N]``.
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
    """One finished run with ``n`` points over :data:`TAGS` keys in a ``sqlite:///`` store.

    The last point of each key is logged through ``MlflowClient`` (MLflow keeps its
    ``latest_metrics`` row), the others are inserted into MLflow's own ``metrics`` table in
    one transaction: logging 500,000 points through the client takes minutes, and the
    readers see exactly what MLflow would have stored.
    """
    import sqlite3

    import mlflow
    from mlflow.entities import Metric

    client = mlflow.MlflowClient(uri)
    exp = client.create_experiment(f"bench-{time.time_ns()}")
    rid = client.create_run(exp).info.run_id
    per = n // TAGS
    t0 = 1_700_000_000_000
    client.log_batch(
        rid,
        metrics=[
            Metric(f"m{t}/value", 1.0 / (per + t), t0 + per - 1, per - 1) for t in range(TAGS)
        ],
    )
    rows = (
        (f"m{t}/value", 1.0 / (i + 1 + t), t0 + i, rid, i, 0)
        for i in range(per - 1)
        for t in range(TAGS)
    )
    con = sqlite3.connect(uri[len("sqlite:///") :])
    with con:
        con.executemany(
            "insert into metrics (key, value, timestamp, run_uuid, step, is_nan) "
            "values (?, ?, ?, ?, ?, ?)",
            rows,
        )
    con.close()
    client.set_terminated(rid)
    return rid


CSV_COLS = (
    "loss",
    "val_loss",
    "lr",
    "grad_norm",
    "accuracy",
    "val_accuracy",
    "throughput",
    "data_time",
)


def gen_tables(path: Path, rows: int) -> tuple[Path, Path]:
    """A generic step CSV and a detectron2-style JSON-lines log with ``rows`` rows each."""
    import numpy as np

    rng = np.random.default_rng(0)
    step = np.arange(rows)
    cols = {
        c: (1.0 / (step + 1 + i)) * (1 + 0.01 * rng.standard_normal(rows))
        for i, c in enumerate(CSV_COLS)
    }
    csv = path / "metrics_log.csv"
    import pandas as pd

    pd.DataFrame({"step": step, "epoch": step // 1000, **cols}).to_csv(
        csv, index=False, float_format="%.9g"
    )
    jl = path / "metrics.json"
    with open(jl, "w") as fh:
        names = [
            "total_loss",
            "loss_cls",
            "loss_box_reg",
            "lr",
            "time",
            "data_time",
            "fast_rcnn/cls_accuracy",
            "eta_seconds",
        ]
        arr = np.stack([cols[c] for c in CSV_COLS], axis=1)
        for i in range(rows):
            body = ", ".join(f'"{n}": {v:.9g}' for n, v in zip(names, arr[i]))
            fh.write(f'{{"iteration": {i}, {body}}}\n')
    return csv, jl


def read(reader: str, target: str, extra: str) -> dict:
    """Run inside the child process: read with one reader, return points and seconds.

    Module imports happen before the clock starts, for every reader alike.
    """
    for mod in {
        "mlaudit-tb": ["mlaudit_tensorboard.reader", "mlaudit_core"],
        "EventAccumulator": ["tensorboard.backend.event_processing.event_accumulator"],
        "tbparse": ["tbparse"],
        "mlaudit-mlflow": ["mlaudit_mlflow.loader", "mlflow"],
        "MlflowClient": ["mlflow"],
        "mlaudit-csv": ["mlaudit_core.formats", "pandas"],
        "mlaudit-jsonl": ["mlaudit_core.formats", "pandas"],
        "pandas.read_csv": ["pandas"],
        "pandas.read_json": ["pandas"],
        "mlaudit-long": ["mlaudit_core.formats", "pandas"],
        "pandas-long": ["pandas"],
    }.get(reader, []):
        __import__(mod)
    if reader in (
        "mlaudit-mlflow",
        "MlflowClient",
    ):  # MLflow's store module for the URI, for both alike
        __import__(
            "mlflow.store.tracking.sqlalchemy_store"
            if target.startswith("sqlite")
            else "mlflow.store.tracking.rest_store"
        )
    c0 = cpu_seconds()
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
    elif reader == "mlaudit-long":
        from mlaudit_core.formats import load_path

        run = load_path(target).runs[0][1]
        n = len(run.metrics)
        extra = "; ".join(w for w in run.warnings if "MiB" in w)
    elif reader == "pandas-long":
        import pandas as pd

        try:
            df = (
                pd.read_csv(target) if target.endswith(".csv") else pd.read_json(target, lines=True)
            )
            n = int(df.notna().sum().sum())
        except Exception as exc:  # noqa: BLE001 - what pandas does with the line is the figure
            n, extra = 0, f"{type(exc).__name__}: {str(exc)[:80]}"
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
    seconds = time.perf_counter() - t0
    return {
        "points": n,
        "seconds": seconds,
        "cpu": cpu_seconds() - c0,
        "peak_mb": peak_mb(),
        "extra": extra,
    }


def cpu_seconds() -> float:
    """CPU seconds (user + system) this process has used so far, all its threads
    (``resource.getrusage(RUSAGE_SELF)``): unlike wall time, nearly independent of the machine's load."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def peak_mb() -> float:
    """This process's peak RSS in MB: ``VmHWM`` (Linux), else ``ru_maxrss``.

    ``ru_maxrss`` of a child started from a large parent is at least the parent's peak
    (Linux copies the memory high-water mark at fork and keeps it across exec: the
    long-line part read 587 MB for every reader, the parent's peak); ``VmHWM`` belongs to
    the program the child runs.
    """
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(reader: str, target: str, extra: str = "") -> dict:
    # both MLflow readers get MLflow's default 120 s read timeout (mlaudit's own default, 10 s,
    # is for a watcher noticing a hung server, not for a loaded benchmark machine)
    env = dict(os.environ, MLAUDIT_TRACKER_TIMEOUT=os.environ.get("MLAUDIT_TRACKER_TIMEOUT", "120"))
    out = subprocess.run(
        [sys.executable, __file__, "--child", reader, target, extra],
        capture_output=True,
        text=True,
        env=env,
    )
    if out.returncode:
        raise SystemExit(f"{reader} failed on {target}:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def start_server(db_uri: str, root: Path, workers: int = 2):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    mlflow_bin = shutil.which("mlflow", path=str(Path(sys.executable).parent)) or "mlflow"
    proc = subprocess.Popen(
        [
            mlflow_bin,
            "server",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--backend-store-uri",
            db_uri,
            "--artifacts-destination",
            str(root / "a"),
            "--workers",
            str(workers),
        ],
        stdout=open(root / "server.log", "ab"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
        env=dict(os.environ, MLFLOW_SERVER_ENABLE_JOB_EXECUTION="false"),
    )
    import requests

    url = f"http://127.0.0.1:{port}"
    for _ in range(360):
        try:
            if requests.get(url + "/health", timeout=1).ok:
                # warm the server (first request initialises its store) before anything is timed
                requests.get(
                    url + "/api/2.0/mlflow/experiments/search",
                    params={"max_results": 1},
                    timeout=60,
                )
                return proc, url
        except requests.RequestException:
            time.sleep(0.5)
    proc.kill()
    raise SystemExit("mlflow server did not start:\n" + (root / "server.log").read_text()[-2000:])


def row(name: str, r: dict, ref: dict | None) -> str:
    """One table line: points, wall seconds, CPU seconds of the reader's process, points/s (wall),
    peak MB and, against ``ref`` (mlaudit's row), how many times faster mlaudit is in wall time
    and in CPU time."""
    rate = r["points"] / r["seconds"] if r["seconds"] else float("inf")
    speed = ""
    if ref and ref is not r:
        speed = f"{r['seconds'] / ref['seconds']:.1f}x"
        if ref.get("cpu"):
            speed += f" (CPU {r.get('cpu', 0) / ref['cpu']:.1f}x)"
    return (
        f"{name:34s} {r['points']:>10,d} {r['seconds']:9.2f} {r.get('cpu', 0):8.2f} {rate:>13,.0f} "
        f"{r['peak_mb']:9.0f}  {speed}"
    )


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        print(json.dumps(read(sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else "")))
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tb-points", type=int, default=1_000_000)
    ap.add_argument("--mlflow-points", type=int, default=500_000)
    ap.add_argument(
        "--rows", type=int, default=1_000_000, help="rows of the CSV and JSON-lines logs"
    )
    ap.add_argument(
        "--skip-server", action="store_true", help="skip MlflowClient through a server (slowest)"
    )
    ap.add_argument(
        "--server-workers",
        default="2,4",
        help="comma-separated worker counts of the local mlflow server, one server each",
    )
    ap.add_argument(
        "--only",
        default="tb,tables,mlflow",
        help="parts to run: tb, tables (csv and jsonl, or one of them), mlflow, long",
    )
    ap.add_argument(
        "--long-mb", type=int, default=200, help="size of the one long line of --only long (MB)"
    )
    ap.add_argument("--skip-mlflow", action="store_true", help="skip the MLflow part")
    ap.add_argument("--skip-sqlite", action="store_true", help="MLflow: only the server rows")
    ap.add_argument(
        "--server-url",
        help="MLflow: read through this running server (its backend must "
        "be --db-uri) instead of starting servers",
    )
    ap.add_argument("--db-uri", help="MLflow: an existing sqlite:/// store to log the run into")
    ap.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="runs of each TensorBoard and CSV/JSON-lines reader (and of mlaudit's MLflow "
        "server reader), alternating; the fastest counts (a shared machine's load varies "
        "between runs)",
    )
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="mlaudit-ingest-"))
    head = (
        f"{'reader':34s} {'points':>10s} {'seconds':>9s} {'CPU s':>8s} {'points/s':>13s} {'peak MB':>9s}  "
        f"mlaudit is (wall, CPU)"
    )
    print(f"load average at start: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    try:
        parts = set(a.only.split(","))
        if "tb" in parts:
            tensorboard(a, tmp, head)
        if parts & {"tables", "csv", "jsonl"}:
            tables(a, tmp, head, {"csv", "jsonl"} if "tables" in parts else parts)
        if "long" in parts:
            long_line(a, tmp, head)
        if a.skip_mlflow or "mlflow" not in parts:
            return
        mlflow_part(a, tmp, head)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def tensorboard(a, tmp: Path, head: str) -> None:
    t = time.perf_counter()
    gen_tb(tmp / "tb", a.tb_points)
    print(f"generated {a.tb_points:,d} TensorBoard points in {time.perf_counter() - t:.1f} s")
    names = ("mlaudit-tb", "EventAccumulator", "tbparse")
    runs: dict[str, list[dict]] = {n: [] for n in names}
    for _ in range(max(1, a.repeat)):  # alternating, so every reader sees the same spread of load
        for n in names:
            runs[n].append(child(n, str(tmp / "tb")))
    res = {n: min(xs, key=lambda x: x["seconds"]) for n, xs in runs.items()}
    print(
        f"\nTensorBoard event files (best of {max(1, a.repeat)}, alternating; load average now "
        f"{os.getloadavg()[0]:.1f})\n" + head
    )
    for n, r in res.items():
        print(row(n, r, None if n == "mlaudit-tb" else res["mlaudit-tb"]))
    for n, xs in runs.items():
        print(
            f"  {n}: wall "
            + ", ".join(f"{x['seconds']:.2f}" for x in xs)
            + " s; CPU "
            + ", ".join(f"{x['cpu']:.2f}" for x in xs)
            + " s"
        )
    counts = {x["points"] for xs in runs.values() for x in xs}
    print(f"identical point counts: {len(counts) == 1}")
    tbx = res["tbparse"]["seconds"] / res["mlaudit-tb"]["seconds"]
    cpux = min(x["cpu"] for x in runs["tbparse"]) / min(x["cpu"] for x in runs["mlaudit-tb"])
    print(
        f"mlaudit vs tbparse: {tbx:.1f}x faster in wall time, {cpux:.1f}x in CPU time "
        f"(target >= 20x: {'met' if tbx >= 20 else 'NOT met'})"
    )


def tables(a, tmp: Path, head: str, which: set[str] = frozenset({"csv", "jsonl"})) -> None:
    t = time.perf_counter()
    (tmp / "tables").mkdir()
    csv, jl = gen_tables(tmp / "tables", a.rows)
    mb = (csv.stat().st_size / 1e6, jl.stat().st_size / 1e6)
    print(
        f"\ngenerated {a.rows:,d}-row logs (CSV {mb[0]:.0f} MB, JSON-lines {mb[1]:.0f} MB) in "
        f"{time.perf_counter() - t:.1f} s"
    )
    for title, ours, theirs, f in [
        t
        for t in (
            ("CSV log", "mlaudit-csv", "pandas.read_csv", csv),
            ("JSON-lines log", "mlaudit-jsonl", "pandas.read_json", jl),
        )
        if ("csv" if t[1] == "mlaudit-csv" else "jsonl") in which
    ]:
        runs = {ours: [], theirs: []}
        for _ in range(a.repeat):  # alternating, so both see the same machine load
            for name in (ours, theirs):
                runs[name].append(child(name, str(f)))
        r = {name: min(xs, key=lambda x: x["seconds"]) for name, xs in runs.items()}
        print(f"\n{title}\n" + head)
        for n, x in r.items():
            print(row(n, x, None if n == ours else r[ours]))
        ratio = r[theirs]["seconds"] / r[ours]["seconds"]
        print(
            f"mlaudit speed / pandas speed: {ratio:.2f} (target >= 0.5: {'met' if ratio >= 0.5 else 'NOT met'})"
            f"; identical point counts: {r[ours]['points'] == r[theirs]['points']}"
        )


def long_line(a, tmp: Path, head: str) -> None:
    """One data line of ``--long-mb`` MB between 200 ordinary rows, in a CSV and a JSON-lines log."""
    (tmp / "long").mkdir()
    big = b"9" * (a.long_mb * 1_000_000)
    csv, jl = tmp / "long" / "log.csv", tmp / "long" / "metrics.json"
    with open(csv, "wb") as fh:
        fh.write(b"step,loss\n" + b"".join(b"%d,%.6f\n" % (i, 1 / (i + 1)) for i in range(100)))
        fh.write(b"100," + big + b"\n")
        fh.write(b"".join(b"%d,%.6f\n" % (i, 1 / (i + 1)) for i in range(101, 201)))
    with open(jl, "wb") as fh:
        fh.write(
            b"".join(
                b'{"iteration": %d, "total_loss": %.6f}\n' % (i, 1 / (i + 1)) for i in range(100)
            )
        )
        fh.write(b'{"iteration": 100, "total_loss": ' + big + b"}\n")
        fh.write(
            b"".join(
                b'{"iteration": %d, "total_loss": %.6f}\n' % (i, 1 / (i + 1))
                for i in range(101, 201)
            )
        )
    del big
    print(f"\none {a.long_mb} MB data line between 200 rows\n" + head)
    for f in (csv, jl):
        ours, theirs = child("mlaudit-long", str(f)), child("pandas-long", str(f))
        print(row(f"mlaudit ({f.name})", ours, None))
        print(
            row(f"pandas ({f.name})", theirs, None)
            + (f"  ({theirs['extra']})" if theirs["extra"] else "")
        )
        print(
            f"  mlaudit's warning: {ours['extra'] or 'NONE'}; peak {ours['peak_mb']:.0f} MB for a "
            f"{f.stat().st_size / 1e6:.0f} MB file"
        )


def _pair(
    m: dict,
    ours: str,
    theirs: str,
    r_ours: dict,
    r_theirs: dict,
    target: float,
    label: str,
    workers: int | None = None,
) -> None:
    m[ours], m[theirs] = r_ours, r_theirs
    x = r_theirs["seconds"] / r_ours["seconds"] if r_ours["seconds"] else float("inf")
    same = r_ours["points"] == r_theirs["points"]
    print(
        f"mlaudit vs MlflowClient ({label}): {x:.1f}x faster (target >= {target:g}x: "
        f"{'met' if x >= target else 'NOT met'}); same point count: {same}; load average "
        f"{os.getloadavg()[0]:.1f}",
        flush=True,
    )
    so, st = r_ours.get("server_cpu", float("nan")), r_theirs.get("server_cpu", float("nan"))
    print(
        f"  CPU seconds of the reader process: mlaudit {r_ours['cpu']:.2f}, MlflowClient "
        f"{r_theirs['cpu']:.2f} ({r_theirs['cpu'] / max(1e-9, r_ours['cpu']):.1f}x)",
        flush=True,
    )
    if so == so and st == st:  # not NaN: the server's CPU was measured
        print(
            f"  CPU seconds: reader mlaudit {r_ours['cpu']:.2f}, MlflowClient {r_theirs['cpu']:.2f}; "
            f"server answering mlaudit {so:.2f}, MlflowClient {st:.2f}; reader + server: "
            f"mlaudit {r_ours['cpu'] + so:.2f}, MlflowClient {r_theirs['cpu'] + st:.2f} "
            f"({(r_theirs['cpu'] + st) / max(1e-9, r_ours['cpu'] + so):.1f}x)",
            flush=True,
        )
        if workers:
            # MlflowClient asks one request at a time: its wall time is at least its own CPU plus
            # the server's. mlaudit's requests run in parallel, but the server's CPU can at best
            # spread over min(workers, cores) cores (reader and server share this machine)
            cores = min(workers, os.cpu_count() or 1)
            bound = (r_theirs["cpu"] + st) / max(1e-9, max(so / cores, r_ours["cpu"]))
            print(
                f"  upper bound of the speed-up from these CPU figures with the server on this "
                f"machine ({os.cpu_count()} cores, {workers} workers): {bound:.1f}x",
                flush=True,
            )


def _best(reader: str, target: str, rid: str, repeat: int, server_pid: int | None = None) -> dict:
    return min(
        (_served(reader, target, rid, server_pid) for _ in range(max(1, repeat))),
        key=lambda x: x["seconds"],
    )


def server_cpu(pid: int | None) -> float:
    """CPU seconds used so far by the server process ``pid`` and its children (psutil; NaN
    without psutil or a pid)."""
    try:
        import psutil
    except ImportError:
        return float("nan")
    if pid is None:
        return float("nan")
    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.Error:
        return float("nan")
    total = 0.0
    for p in procs:
        try:
            t = p.cpu_times()
            total += t.user + t.system
        except psutil.Error:
            pass
    return total


def _served(reader: str, target: str, rid: str, server_pid: int | None) -> dict:
    """``child`` plus the CPU seconds the server spent meanwhile (``server_cpu``)."""
    s0 = server_cpu(server_pid)
    r = child(reader, target, rid)
    r["server_cpu"] = server_cpu(server_pid) - s0
    return r


def mlflow_part(a, tmp: Path, head: str) -> None:
    """sqlite:/// and a local ``mlflow server`` (sqlite backend) per worker count: mlaudit's
    loader and ``MlflowClient.get_metric_history`` on the same run, alternating."""
    db_uri = a.db_uri or f"sqlite:///{tmp / 'mlflow.db'}"
    t = time.perf_counter()
    rid = gen_mlflow(db_uri, a.mlflow_points)
    print(f"\ngenerated {a.mlflow_points:,d} MLflow points in {time.perf_counter() - t:.1f} s")
    m: dict = {}
    if not a.skip_sqlite:
        runs: dict[str, list[dict]] = {"mlaudit-mlflow": [], "MlflowClient": []}
        for _ in range(
            max(1, min(a.repeat, 2))
        ):  # alternating; MlflowClient is slow, at most 2 each
            for name in runs:
                runs[name].append(child(name, db_uri, rid))
        best = {n: min(xs, key=lambda x: x["seconds"]) for n, xs in runs.items()}
        _pair(
            m,
            "mlaudit (sqlite:///, bulk query)",
            "MlflowClient (sqlite:///)",
            best["mlaudit-mlflow"],
            best["MlflowClient"],
            5,
            "sqlite:///",
        )
    if a.server_url:  # a server already running on --db-uri (the test suite's)
        theirs = child("MlflowClient", a.server_url, rid)
        ours = _best("mlaudit-mlflow", a.server_url, rid, a.repeat)
        _pair(
            m,
            "mlaudit (server, REST)",
            "MlflowClient (server)",
            ours,
            theirs,
            3,
            f"mlflow server at {a.server_url}",
        )
    elif not a.skip_server:
        for w in [int(x) for x in a.server_workers.split(",") if x]:
            proc, url = start_server(db_uri, tmp, w)
            try:
                theirs = _served("MlflowClient", url, rid, proc.pid)
                ours = _best("mlaudit-mlflow", url, rid, a.repeat, proc.pid)
                _pair(
                    m,
                    f"mlaudit (server {w}w, REST)",
                    f"MlflowClient (server {w}w)",
                    ours,
                    theirs,
                    3,
                    f"mlflow server, {w} workers",
                    workers=w,
                )
            finally:
                proc.terminate()
                proc.wait(timeout=30)
    print("\nMLflow run\n" + head)
    ref = next(iter(m.values()))
    for n, r in m.items():
        print(row(n, r, None if r is ref else ref))
    print(f"identical point counts: {len({r['points'] for r in m.values()}) == 1}")


if __name__ == "__main__":
    os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")
    main()
