"""Batch audit throughput: runs audited per second with --jobs 1, --jobs 4 and --executor ray.

Starts a local ``mlflow server`` (sqlite backend, 127.0.0.1), creates ``--runs`` small
finished runs (default 1,000: 200 training-loss points and 10 validation-loss points
each, in four shapes: healthy, diverging, overfitting, flat), then audits the whole
experiment with :func:`mlaudit_core.service.run_batch` (exactly what ``mlaudit batch
mlflow`` runs after listing) once per configuration, each with a fresh state file, and
writes every verdict back (tags, Description section, report artifacts) unless
``--no-write``.

Prints, per configuration and write-back mode: runs, failed runs, seconds, runs/s,
runs/s per worker (target, issue 21: at least 10 without write-back), for Ray its start-up
time (``ray.init``, not counted in runs/s), the load average at the row's end, CPU ms per run
of this process and of the server, HTTP requests per run sent by this process (Ray workers'
are not counted), and where the time went (load, detect, verdict, render, write; per run,
summed over worker threads, :mod:`mlaudit_core.service.timing`).

Usage: ``python benchmarks/batch_throughput.py [--runs N] [--configs jobs1,jobs4,ray]
[--write off,on | --no-write] [--server-workers N] [--read-ahead 0,4] [--write-behind 0,2]
[--request-detail]`` (``tests/test_benchmarks_smoke.py`` runs
it at toy size).
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import requests

EXPERIMENT = "batch-bench"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(root: Path, workers: int) -> tuple[subprocess.Popen, str]:
    port = free_port()
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
            f"sqlite:///{root / 'mlflow.db'}",
            "--artifacts-destination",
            str(root / "artifacts"),
            "--workers",
            str(workers),
        ],
        stdout=open(root / "server.log", "wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
        env=dict(os.environ, MLFLOW_SERVER_ENABLE_JOB_EXECUTION="false"),
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(180):
        try:
            if requests.get(f"{url}/health", timeout=1).status_code == 200:
                return proc, url
        except requests.RequestException:
            time.sleep(0.5)
    os.killpg(proc.pid, signal.SIGKILL)
    raise SystemExit("mlflow server did not start:\n" + (root / "server.log").read_text()[-2000:])


def loss_curve(shape: int, i: int) -> tuple[float, float]:
    """(train loss, val loss) at step i for one of four shapes."""
    base = 2.0 * math.exp(-i / 40) + 0.3
    if shape == 1 and i > 120:  # diverging
        base = 0.3 + (i - 120) * 0.2
    if shape == 3:  # flat
        base = 2.0 + 0.001 * math.sin(i)
    val = base + 0.1 + (max(0, i - 80) * 0.02 if shape == 2 else 0.0)  # overfitting
    return base, val


def create_runs(url: str, n: int) -> None:
    import mlflow
    from mlflow.entities import Metric, Param

    client = mlflow.MlflowClient(url)
    exp = client.create_experiment(EXPERIMENT)
    t0 = 1_700_000_000_000

    def one(k: int) -> None:
        rid = client.create_run(exp, run_name=f"run-{k:04d}").info.run_id
        ms = []
        for i in range(1, 201):
            tr, va = loss_curve(k % 4, i)
            ms.append(Metric("train/loss", tr, t0 + i * 1000, i))
            if i % 20 == 0:
                ms.append(Metric("val/loss", va, t0 + i * 1000, i))
        client.log_batch(rid, metrics=ms, params=[Param("lr", "0.001"), Param("shape", str(k % 4))])
        client.set_terminated(rid, "FINISHED")

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(one, range(n)))


def server_cpu(pid: int) -> float:
    """CPU seconds of the server process tree (psutil; NaN without it)."""
    try:
        import psutil
    except ImportError:
        return math.nan
    total = 0.0
    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.Error:
        return math.nan
    for p in procs:
        try:
            t = p.cpu_times()
            total += t.user + t.system
        except psutil.Error:
            pass
    return total


class RequestCounter:
    """Counts the HTTP requests this process sends (every ``requests.Session.request``: MLflow's
    client and mlaudit's own history requests both go through it) while installed, in all
    (``n``) and by endpoint (``by``: ``"METHOD path"``, an artifact upload's file path
    collapsed to ``<file>``)."""

    def __init__(self) -> None:
        import threading
        from collections import Counter

        self.n = 0
        self.by: Counter = Counter()
        self._lock = threading.Lock()
        self._orig = None

    @staticmethod
    def endpoint(method: str, url: str) -> str:
        from urllib.parse import urlparse

        path = urlparse(str(url)).path
        mark = "/mlflow-artifacts/artifacts/"
        if mark in path:
            path = path[: path.index(mark) + len(mark)] + "<file>"
        return f"{str(method).upper()} {path}"

    def __enter__(self) -> RequestCounter:
        orig = self._orig = requests.Session.request
        counter = self

        def request(session, *a, **kw):
            method = a[0] if a else kw.get("method", "?")
            url = a[1] if len(a) > 1 else kw.get("url", "")
            with counter._lock:
                counter.n += 1
                counter.by[counter.endpoint(method, url)] += 1
            return orig(session, *a, **kw)

        requests.Session.request = request
        return self

    def __exit__(self, *exc) -> None:
        requests.Session.request = self._orig


def measure(
    url: str,
    refs: list[str],
    state: Path,
    *,
    jobs: int | None,
    executor: str,
    write: bool,
    server_pid: int | None = None,
) -> dict:
    """One batch; CPU per run of this process (all threads) and of the server: figures
    the machine's load does not move the way it moves wall time (Ray workers' CPU is
    not in this process)."""
    from mlaudit_core.service import Executor, StateStore, TaskSpec, run_batch
    from mlaudit_core.settings import Settings

    spec = TaskSpec("mlflow", (("tracking_uri", url),), Settings().model_dump(), write_back=write)
    s0 = server_cpu(server_pid) if server_pid else math.nan
    c0 = time.process_time()
    with StateStore(state, f"bench {url}") as store, RequestCounter() as requests_sent:
        out = run_batch(refs, spec, store, jobs=jobs, executor=Executor(executor))
    cpu = time.process_time() - c0
    srv = (server_cpu(server_pid) - s0) if server_pid else math.nan
    failed = [r for r in out.results if not r.ok]
    n = max(1, out.audited_now)
    return {
        "runs": out.audited_now,
        "failed": len(failed),
        "seconds": out.seconds,
        "rate": out.audited_now / out.seconds if out.seconds else 0.0,
        "startup": out.startup_s,
        "first_error": failed[0].error if failed else "",
        "timings": out.timings,
        "client_ms": 1000 * cpu / n,
        "server_ms": 1000 * srv / n,
        "requests": requests_sent.n / n,
        "by_endpoint": {k: v / n for k, v in requests_sent.by.most_common()},
    }


CONFIGS = {"jobs1": (1, "local"), "jobs4": (4, "local"), "ray": (4, "ray")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument(
        "--configs",
        default="jobs1,jobs4,ray",
        help=f"comma-separated configurations, of: {', '.join(CONFIGS)}",
    )
    ap.add_argument("--no-write", action="store_true", help="same as --write off")
    ap.add_argument(
        "--write", default="off,on", help="write-back modes to measure: off, on or off,on"
    )
    ap.add_argument("--server-workers", type=int, default=2)
    ap.add_argument(
        "--request-detail",
        action="store_true",
        help="also print each row's requests per run by endpoint",
    )
    ap.add_argument(
        "--read-ahead",
        default=None,
        help="runs loaded ahead of the workers (MLAUDIT_READ_AHEAD), one or more "
        "comma-separated depths to compare, e.g. 0,4 (default: mlaudit's default)",
    )
    ap.add_argument(
        "--write-behind",
        default=None,
        help="write-backs in flight behind each worker (MLAUDIT_WRITE_BEHIND), one or more "
        "comma-separated depths to compare, e.g. 0,2 (default: mlaudit's default); "
        "rows with write-back only",
    )
    args = ap.parse_args()
    bad = [c for c in args.configs.split(",") if c not in CONFIGS]
    if bad:  # before a server is started or a run created
        ap.exit(
            2,
            f"batch_throughput.py: error: --configs {args.configs!r}: unknown configuration "
            f"{', '.join(map(repr, bad))} (choose from {', '.join(CONFIGS)})\n",
        )
    from mlaudit_mlflow.plugin import MlflowPlugin

    root = Path(tempfile.mkdtemp(prefix="mlaudit-batch-bench-"))
    proc, url = start_server(root, args.server_workers)
    try:
        t = time.perf_counter()
        create_runs(url, args.runs)
        print(
            f"created {args.runs} finished runs in {time.perf_counter() - t:.1f} s on {url} "
            f"(mlflow server, {args.server_workers} workers, sqlite)"
        )
        plugin = MlflowPlugin(url)
        refs = plugin.list_finished(
            None,
            experiment_ids=plugin.experiment_ids([EXPERIMENT]),
            include_audited=True,
            max_results=None,
        )
        modes = ["off"] if args.no_write else args.write.split(",")
        print(f"listed {len(refs)} runs; {os.cpu_count()} CPUs\n")
        print(
            f"{'config':<22}{'write':>6}{'runs':>6}{'failed':>8}{'seconds':>10}{'runs/s':>9}"
            f"{'per worker':>12}{'start-up s':>12}{'load avg':>10}{'CPU ms/run':>12}{'server':>8}"
            f"{'req/run':>9}"
        )
        from mlaudit_core.service.timing import split_line

        splits = []
        from mlaudit_core.service.batch import (
            READ_AHEAD_ENV,
            WRITE_BEHIND_ENV,
            read_ahead_depth,
            write_behind_depth,
        )

        depths = (
            [int(d) for d in args.read_ahead.split(",")]
            if args.read_ahead
            else [read_ahead_depth()]
        )
        behinds = (
            [int(d) for d in args.write_behind.split(",")]
            if args.write_behind
            else [write_behind_depth()]
        )
        runs_of = [
            (mode, name, d, b)
            for mode in modes
            for name in args.configs.split(",")
            for d in (depths if CONFIGS[name][1] == "local" else [0])
            for b in (behinds if mode == "on" and CONFIGS[name][1] == "local" else [0])
        ]
        for (
            mode,
            name,
            depth,
            behind,
        ) in runs_of:  # off first: the write-back's tags would not change an audit's cost
            jobs, executor = CONFIGS[name]
            label = f"--executor ray -j {jobs}" if executor == "ray" else f"--jobs {jobs}"
            if executor == "local" and len(depths) > 1:
                label += f" ahead {depth}"
            if mode == "on" and executor == "local" and len(behinds) > 1:
                label += f" behind {behind}"
            os.environ[READ_AHEAD_ENV] = str(depth)
            os.environ[WRITE_BEHIND_ENV] = str(behind)
            r = measure(
                url,
                refs,
                root / f"state-{name}-{mode}-{depth}-{behind}.sqlite",
                jobs=jobs,
                executor=executor,
                write=mode == "on",
                server_pid=proc.pid,
            )
            per = r["rate"] / jobs
            print(
                f"{label:<22}{mode:>6}{r['runs']:>6}{r['failed']:>8}{r['seconds']:>10.1f}"
                f"{r['rate']:>9.2f}{per:>12.2f}{r['startup']:>12.1f}{os.getloadavg()[0]:>10.1f}"
                f"{r['client_ms']:>12.0f}{r['server_ms']:>8.0f}{r['requests']:>9.1f}",
                flush=True,
            )
            if r["first_error"]:
                print(f"  first failure: {r['first_error']}")
            if args.request_detail:
                for ep, per_run in r["by_endpoint"].items():
                    print(f"      {per_run:5.2f} per run  {ep}")
            splits.append((label, mode, split_line(r["timings"], r["runs"]), per))
        print("\ntime split (per run, summed over worker threads)")
        for label, mode, split, _ in splits:
            print(f"{label:<22}{mode:>6}  {split}")
        for label, mode, _, per in splits:
            if mode == "off":
                print(
                    f"runs/s per worker without write-back ({label}): {per:.1f} "
                    f"(target >= 10: {'met' if per >= 10 else 'NOT met'})"
                )
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
