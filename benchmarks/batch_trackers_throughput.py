"""Batch audit throughput for W&B and ClearML: runs audited per second with --jobs 1, --jobs 4
and --executor ray, against the local fake W&B and ClearML servers of the test suite.

What the figures measure: mlaudit's side of ``mlaudit batch wandb`` / ``mlaudit batch clearml``
(the real wandb and clearml SDKs reading each run, the audit, the write-back through the SDKs)
against ``tests/wandb_fake_server.py`` and ``tests/clearml_fake_server.py``, two test fixtures
that speak the trackers' wire protocols from memory on 127.0.0.1. They are not a real W&B or
ClearML server's latency or throughput: a real server answers over the network, from its own
databases, with its own rate limits (W&B's are per project, HTTP 429), so runs/s against
a real tracker are lower and depend on it. The fake servers run in a child process of their
own, so they do not share this process's interpreter lock with the audit threads, but they
share the machine's CPUs with it (and the fake ClearML server answers one request at a time).
As the fixtures stand, each of their answers stalls about 40 ms on loopback (Nagle's algorithm
against the client's delayed ACK, see :func:`no_nagle`); a real server sets ``TCP_NODELAY``,
so this script sets it too unless ``--fixture-nagle`` is given.

Setup: starts both fake servers, creates ``--runs`` small ended runs on each (default 200):
W&B runs stored on the fake server with 300 history rows (train loss every step, validation
loss every 20 steps), ClearML tasks recorded through the real SDK (``Task.create``, the same
scalars reported, ``mark_completed``); four shapes in turn: healthy, diverging, overfitting,
flat. Then, per tracker and per configuration, lists the project as the CLI does and audits
every run with :func:`mlaudit_core.service.run_batch` (what ``mlaudit batch wandb|clearml``
runs after listing) with a fresh state file, writing every verdict back unless
``--no-write``. Before each pass the fake server's store is restored to its state before the
first pass, so every pass audits and writes back the same untouched runs.

Prints, per tracker and configuration: runs, failed runs, seconds, runs/s, HTTP requests per
run (loading and writing back; ClearML: sent by this process, Ray workers' not counted; W&B:
received by the fake server, since wandb-core sends them; ``--request-detail`` lists them by
method and path, W&B's GraphQL requests by operation), the first
configuration's pass also pays the process's first imports and SDK start), the outcomes
after the first pass, and for Ray its start-up time (``ray.init``, a local Ray with 4 CPUs),
which is not counted in runs/s (the workers' first imports and SDK logins are).

Usage: ``python benchmarks/batch_trackers_throughput.py [--runs N] [--trackers wandb,clearml]
[--configs jobs1,jobs4,ray] [--no-write] [--request-detail] [--fixture-nagle]``
"""

from __future__ import annotations

import argparse
import copy
import math
import multiprocessing as mp
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))  # the fake servers are test fixtures

KEY = "b" * 40  # the fake W&B server's API key (a made-up one)
ENTITY, PROJECT = "bench", "batch-bench"
STEPS, VAL_EVERY = 300, 20
CONFIGS = {"jobs1": (1, "local"), "jobs4": (4, "local"), "ray": (4, "ray")}


def loss_curve(shape: int, i: int) -> tuple[float, float]:
    """(train loss, val loss) at step i for one of four shapes: healthy, diverging, overfitting,
    flat (as benchmarks/batch_throughput.py)."""
    base = 2.0 * math.exp(-i / 40) + 0.3
    if shape == 1 and i > 180:  # diverging
        base = 0.3 + (i - 180) * 0.2
    if shape == 3:  # flat
        base = 2.0 + 0.001 * math.sin(i)
    val = base + 0.1 + (max(0, i - 80) * 0.02 if shape == 2 else 0.0)  # overfitting
    return base, val


# ----------------------------------------------------------------- the servers' process


def no_nagle() -> None:
    """Make both fake servers send their answers without Nagle's algorithm (``TCP_NODELAY``), as
    real HTTP servers do. As the fixtures stand, each answer is written in two pieces (headers,
    then body) on a socket without ``TCP_NODELAY``; the body then waits for the client's delayed
    ACK, about 40 ms on Linux loopback, so every request costs >= 44 ms whatever the work.
    Measured on this machine with a trivial request: ClearML 44 -> 1.2 ms, W&B 44 -> 0.8 ms.

    ClearML (``http.server``): the handlers' ``disable_nagle_algorithm``. W&B (uvicorn on
    asyncio): asyncio sets ``TCP_NODELAY`` only on sockets whose ``proto`` is ``IPPROTO_TCP``,
    and the fixture's listening socket is made with proto 0, so the check is relaxed here.
    """
    import asyncio.base_events
    import socket

    import clearml_fake_server

    for handler in (clearml_fake_server._ApiHandler, clearml_fake_server._FilesHandler):
        handler.disable_nagle_algorithm = True

    def set_nodelay(sock) -> None:
        if sock.family in (socket.AF_INET, socket.AF_INET6) and sock.type == socket.SOCK_STREAM:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    asyncio.base_events._set_nodelay = set_nodelay


def serve(conn, root: str, n_wandb: int, nagle: bool) -> None:
    """Child process: both fake servers, ``n_wandb`` W&B runs, then commands from ``conn``:
    ``snapshot`` / ``restore`` (the stores as they were at ``snapshot``), ``stop``. Without
    ``nagle``, :func:`no_nagle` first."""
    if not nagle:
        no_nagle()
    from clearml_fake_server import FakeClearMLServer
    from wandb_fake_server import FakeRun, FakeWandbServer

    wsrv = FakeWandbServer(api_key=KEY, entity=ENTITY)
    wsrv.start()
    for k in range(n_wandb):
        rows = []
        for i in range(1, STEPS + 1):
            tr, va = loss_curve(k % 4, i)
            row = {"_step": i, "_timestamp": 1_700_000_000 + i, "_runtime": i, "train/loss": tr}
            if i % VAL_EVERY == 0:
                row["val/loss"] = va
            rows.append(row)
        wsrv.add_run(
            FakeRun(
                ENTITY,
                PROJECT,
                f"run{k:04d}",
                display_name=f"run-{k:04d}",
                config={"lr": 0.001, "shape": k % 4},
                history=rows,
                created_at=f"2026-01-01T00:{k // 60 % 60:02d}:{k % 60:02d}",
            )
        )
    csrv = FakeClearMLServer().start()
    conf = csrv.write_config(Path(root) / "clearml.conf")
    conn.send({"wandb": wsrv.base_url, "clearml_conf": str(conf)})
    saved: dict = {}
    logs = ("operations", "calls", "requests", "unknown", "property_edits", "http_log")
    while True:
        cmd = conn.recv()
        if cmd == "snapshot":
            with wsrv.lock, csrv.lock:
                saved = {
                    "w": copy.deepcopy(wsrv.runs),
                    "c": {
                        k: copy.deepcopy(getattr(csrv, k))
                        for k in ("tasks", "projects", "events", "files")
                    },
                }
        elif cmd == "restore":
            with wsrv.lock, csrv.lock:
                wsrv.runs = copy.deepcopy(saved["w"])
                for k, v in saved["c"].items():
                    setattr(csrv, k, copy.deepcopy(v))
                for srv in (wsrv, csrv):  # request logs: only tests read them
                    for name in logs:
                        if isinstance(getattr(srv, name, None), list):
                            getattr(srv, name).clear()
        elif cmd == "wandb-requests":  # every HTTP request and GraphQL operation since restore
            with wsrv.lock:
                conn.send({"http": list(wsrv.http_log), "graphql": list(wsrv.operations)})
            continue
        elif cmd == "stop":
            wsrv.stop()
            csrv.stop()
            conn.send("stopped")
            return
        conn.send("ok")


class Servers:
    """The child process running the fake servers; :meth:`call` sends one command."""

    def __init__(self, root: Path, n_wandb: int, nagle: bool = False) -> None:
        ctx = mp.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=serve, args=(child, str(root), n_wandb, nagle), daemon=True)
        self.proc.start()
        if not self.conn.poll(120):
            raise SystemExit("the fake servers did not start in 120 s")
        self.info = self.conn.recv()

    def call(self, cmd: str):
        self.conn.send(cmd)
        if not self.conn.poll(300):
            raise SystemExit(f"the fake servers did not answer {cmd!r}")
        return self.conn.recv()

    def stop(self) -> None:
        try:
            self.call("stop")
        finally:
            self.proc.join(20)
            if self.proc.is_alive():
                self.proc.kill()


# ----------------------------------------------------------------- runs and passes


def create_clearml_tasks(n: int, project: str) -> None:
    """``n`` ended tasks through the SDK, as tests/test_batch_trackers.py records them."""
    from clearml import Task

    for k in range(n):
        t = Task.create(project_name=project, task_name=f"task-{k:04d}")
        t.mark_started(force=True)
        lg = t.get_logger()
        for i in range(1, STEPS + 1):
            tr, va = loss_curve(k % 4, i)
            lg.report_scalar("train", "loss", tr, iteration=i)
            if i % VAL_EVERY == 0:
                lg.report_scalar("val", "loss", va, iteration=i)
        t.flush(wait_for_uploads=True)
        t.mark_completed(force=True)


def prepare(tracker: str, write: bool):
    """(refs, TaskSpec) exactly as ``mlaudit batch <tracker>`` builds them after listing."""
    from mlaudit_clearml.cli import clearml_worker_env
    from mlaudit_wandb.cli import wandb_worker_env

    from mlaudit_core.plugins import get_plugin
    from mlaudit_core.service import TaskSpec
    from mlaudit_core.settings import Settings

    settings = Settings().model_dump()
    if tracker == "wandb":
        options = (("timeout", 30), ("panel", False))
        plugin = get_plugin("wandb", **dict(options))
        refs = plugin.list_runs(f"{ENTITY}/{PROJECT}")
        return refs, TaskSpec(
            "wandb", options, settings, write_back=write, env=wandb_worker_env(plugin.api)
        )
    plugin = get_plugin("clearml")
    refs = plugin.list_runs(PROJECT)
    return refs, TaskSpec(
        "clearml", (), settings, write_back=write, env=clearml_worker_env(plugin.session)
    )


def wandb_path(path: str) -> str:
    """A W&B request path with the entity, project, run and file names elided."""
    parts = path.strip("/").split("/")
    if parts[0] in ("files", "parquet") and len(parts) >= 4:
        tail = (
            ["file_stream"] if parts[-1] == "file_stream" else ["<file>"] if len(parts) > 4 else []
        )
        return "/" + "/".join([parts[0], "<run>", *tail])
    return path


class EndpointCounter:
    """Counts the HTTP requests this process sends through ``requests`` (the wandb public API,
    its file uploads and the clearml SDK all go through it), per method and path with run
    and task ids elided, while installed. Ray workers' requests are not counted."""

    def __init__(self) -> None:
        import threading

        self.by_path: Counter = Counter()
        self._lock = threading.Lock()
        self._orig = None

    def __enter__(self) -> EndpointCounter:
        import re

        import requests

        orig = self._orig = requests.Session.request
        counter = self
        ids = re.compile(r"/[0-9a-f]{16,}|/run\d{4}|/task-\d{4}|[?].*$")

        def request(session, method, url, *a, **kw):
            path = ids.sub("/<id>", str(url).split("://", 1)[-1].split("/", 1)[-1])
            if "graphql" in path and isinstance(kw.get("json"), dict):  # the operation's name
                query = str(kw["json"].get("query", ""))
                m = re.search(r"(query|mutation)\s+(\w+)", query)
                path += f" {m.group(2) if m else '?'}"
            with counter._lock:
                counter.by_path[f"{method} /{path}"] += 1
            return orig(session, method, url, *a, **kw)

        requests.Session.request = request
        return self

    def __exit__(self, *exc) -> None:
        import requests

        requests.Session.request = self._orig


def measure(refs: list[str], spec, state: Path, *, jobs: int, executor: str) -> dict:
    from mlaudit_core.service import Executor, StateStore, run_batch

    with StateStore(state, f"bench {spec.tracker}") as store, EndpointCounter() as sent:
        out = run_batch(refs, spec, store, jobs=jobs, executor=Executor(executor))
    failed = [r for r in out.results if not r.ok]
    wrote = sum(r.wrote for r in out.results)
    outcomes = Counter(r.outcome for r in out.results if r.ok)
    return {
        "runs": out.audited_now,
        "failed": len(failed),
        "wrote": wrote,
        "outcomes": outcomes,
        "seconds": out.seconds,
        "startup": out.startup_s,
        "rate": out.audited_now / out.seconds if out.seconds else 0.0,
        "first_error": failed[0].error if failed else "",
        "requests": sum(sent.by_path.values()) / max(1, out.audited_now),
        "by_path": {k: v / max(1, out.audited_now) for k, v in sent.by_path.most_common()},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=200, help="runs (tasks) per tracker")
    ap.add_argument("--trackers", default="wandb,clearml")
    ap.add_argument("--configs", default="jobs1,jobs4,ray")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument(
        "--request-detail",
        action="store_true",
        help="print the HTTP requests per run by method and path (local executors)",
    )
    ap.add_argument(
        "--fixture-nagle",
        action="store_true",
        help="keep the fake servers' ~40 ms stall per request (as the tests run them)",
    )
    args = ap.parse_args()
    trackers = args.trackers.split(",")
    root = Path(tempfile.mkdtemp(prefix="mlaudit-trackers-bench-"))
    servers = Servers(root, args.runs if "wandb" in trackers else 0, nagle=args.fixture_nagle)
    os.environ.update(
        {
            "WANDB_BASE_URL": servers.info["wandb"],
            "WANDB_API_KEY": KEY,
            "WANDB_SILENT": "true",
            "CLEARML_CONFIG_FILE": servers.info["clearml_conf"],
            "CLEARML_CACHE_DIR": str(root / "clearml-cache"),
            "CLEARML_LOG_LEVEL": "WARNING",
        }
    )
    os.environ.pop("WANDB_MODE", None)
    try:
        if "clearml" in trackers:
            t = time.perf_counter()
            create_clearml_tasks(args.runs, PROJECT)
            print(
                f"created {args.runs} completed ClearML tasks through the SDK in "
                f"{time.perf_counter() - t:.1f} s"
            )
        if "wandb" in trackers:
            print(f"stored {args.runs} finished W&B runs on the fake server")
        servers.call("snapshot")
        print(
            f"{STEPS} history rows a run (+{STEPS // VAL_EVERY} validation points); "
            f"write-back {'off' if args.no_write else 'on'}; {os.cpu_count()} CPUs; "
            "local fake servers in a child process (not a real tracker's latency), "
            f"{'with their ~40 ms stall per request' if args.fixture_nagle else 'TCP_NODELAY'}"
        )
        for tracker in trackers:
            refs, spec = prepare(tracker, not args.no_write)
            where = servers.info["wandb"] if tracker == "wandb" else "clearml fake server"
            print(f"\n{tracker}: listed {len(refs)} runs ({where})")
            print(
                f"{'config':<22}{'runs':>6}{'failed':>8}{'seconds':>10}{'runs/s':>9}"
                f"{'start-up s':>12}{'req/run':>9}"
            )
            for name in args.configs.split(","):
                jobs, executor = CONFIGS[name]
                servers.call("restore")  # every pass audits and writes back untouched runs
                label = f"--executor ray -j {jobs}" if executor == "ray" else f"--jobs {jobs}"
                r = measure(
                    refs,
                    spec,
                    root / f"state-{tracker}-{name}.sqlite",
                    jobs=jobs,
                    executor=executor,
                )
                if tracker == "wandb":  # wandb-core sends them, not this process: the server counts
                    seen = servers.call("wandb-requests")
                    n = max(1, r["runs"])
                    paths = Counter(f"{m} {wandb_path(p)}" for m, p in seen["http"])
                    paths.pop("POST /graphql", None)  # listed by operation name instead
                    paths.update(f"POST /graphql {op}" for op in seen["graphql"])
                    r["requests"] = len(seen["http"]) / n
                    r["by_path"] = {k: v / n for k, v in paths.most_common()}
                req = "n/a" if executor == "ray" else f"{r['requests']:.1f}"
                print(
                    f"{label:<22}{r['runs']:>6}{r['failed']:>8}{r['seconds']:>10.1f}"
                    f"{r['rate']:>9.2f}{r['startup']:>12.1f}{req:>9}",
                    flush=True,
                )
                if args.request_detail and executor != "ray":
                    for path, n in r["by_path"].items():
                        print(f"    {n:6.2f} per run  {path}")
                if name == args.configs.split(",")[0]:
                    print(
                        "  outcomes: "
                        + ", ".join(f"{k} {v}" for k, v in r["outcomes"].most_common())
                    )
                if r["first_error"]:
                    print(f"  first failure: {r['first_error']}")
                if not args.no_write and r["wrote"] != r["runs"] - r["failed"]:
                    print(f"  written back: {r['wrote']} of {r['runs'] - r['failed']}")
    finally:
        servers.stop()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
