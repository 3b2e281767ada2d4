"""Record ClearML tasks with the real SDK for the ClearML tests (run as a child process).

``Task.init`` patches the interpreter (stdout/stderr capture, import hooks, exit
handlers), so the tests record tasks in a child process, the way a training
script would, against the fake server (or offline), and read the task ids from
its stdout (one JSON object on the last line).

Commands::

    python clearml_helpers.py replay  --runs RUNS.json --project P
    python clearml_helpers.py offline --out DIR

``replay`` re-logs MLflow runs exported by :func:`export_mlflow_runs` (the
``mlaudit_demo.regimes`` trainings, logged with ``train/loss``, ``val/loss``, ``val/accuracy``, ``train/lr``, ``train/grad_norm``,
``perf/step_time``, ``perf/data_time``, ``perf/throughput``) into one ClearML task
each: every point through ``Logger.report_scalar(title, series, value, iteration)``
(``train/loss`` -> title ``train``, series ``loss``) in step order, the console
lines printed (captured by the SDK) as the run reaches their step, and ClearML's
own resource monitor sampling the machine (``:monitor:machine``). MLflow's own
``system/*`` metrics are not replayed: ClearML measures its own. NaN/inf go
through the SDK unchanged, which reports them as 0.0 (``Logger`` default), as it
would for a user.

``offline`` records a session with ``Task.set_offline(True)``: parameters, user
properties, labels, a loss curve that diverges, GPU telemetry reported under the
resource monitor's titles/series (``:monitor:gpu`` ``gpu_0_utilization``,
``gpu_0_mem_usage``; this machine has no GPU for the monitor to sample), and a
CUDA out-of-memory traceback on the console.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import time

_STEP = re.compile(r"\bstep (\d+)\b")


def _init(project: str, name: str, *, monitor: bool, tags: list[str] | None = None):
    from clearml import Task

    task = Task.init(
        project_name=project,
        task_name=name,
        reuse_last_task_id=False,
        tags=tags,
        auto_connect_arg_parser=False,
        auto_connect_frameworks={
            "detect_repository": False,
            "matplotlib": False,
            "tensorboard": False,
            "pytorch": False,
            "tensorflow": False,
            "joblib": False,
            "hydra": False,
            "jsonargparse": False,
        },
        auto_resource_monitoring={
            "sample_frequency_per_sec": 20,
            "report_frequency_sec": 0.2,
            "first_report_sec": 0.2,
            "wait_for_first_iteration_to_start_sec": 0.2,
        }
        if monitor
        else False,
    )
    return task


def export_mlflow_runs(mlflow_uri: str, run_ids: list[str], path: str) -> None:
    """Write what ``replay`` needs of each MLflow run to a JSON file (run in the parent process,
    where mlflow is already imported)."""
    import mlflow

    client = mlflow.MlflowClient(mlflow_uri)
    runs = []
    for run_id in run_ids:
        run = client.get_run(run_id)
        keys = sorted(k for k in run.data.metrics if not k.startswith("system/"))
        points = {
            k: [[m.step, m.value] for m in client.get_metric_history(run_id, k)] for k in keys
        }
        # every mlaudit_demo.regimes run logs its console as this artifact
        local = client.download_artifacts(run_id, "console.log")
        with open(local, encoding="utf-8") as fh:
            console = fh.read().splitlines()
        runs.append(
            {
                "id": run_id,
                "name": run.info.run_name,
                "params": dict(run.data.params),
                "points": points,
                "console": console,
            }
        )
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(runs, fh)  # NaN/Infinity are kept (Python's JSON extension)


def replay(runs_file: str, project: str) -> dict[str, str]:
    with open(runs_file, encoding="utf-8") as fh:
        runs = json.load(fh)
    out: dict[str, str] = {}
    for run in runs:
        points: dict[int, list[tuple[str, float]]] = {}
        for key, pts in run["points"].items():
            for step, value in pts:
                points.setdefault(int(step), []).append((key, value))
        console: list[str] = run["console"]
        task = _init(project, run["name"], monitor=True)
        task.connect(dict(run["params"]), name="Args")
        logger = task.get_logger()
        pending = list(console)
        if pending and not _STEP.search(pending[0]):
            print(pending.pop(0), flush=True)
        # let the monitor take a few samples over the replay; the 'starved' run's test asserts on
        # them, and on a loaded runner (load 14) 0.6 s once gave the monitor's thread no sample
        t_end = time.time() + (3.0 if "starved" in run["name"] else 0.6)
        for step in sorted(points):
            for key, value in points[step]:
                title, _, series = key.partition("/")
                logger.report_scalar(title, series or title, value, iteration=step)
            while pending and (m := _STEP.search(pending[0])) and int(m.group(1)) <= step:
                print(pending.pop(0), flush=True)
            if step % 50 == 0 and time.time() < t_end:
                time.sleep(0.05)
        for line in pending:
            print(line, flush=True)
        while "starved" in run["name"] and time.time() < t_end:
            time.sleep(0.05)
        task.close()
        out[run["id"]] = task.id
    return out


def offline(out_dir: str) -> dict[str, str]:
    import os

    os.environ["CLEARML_CACHE_DIR"] = out_dir
    from clearml import Task

    Task.set_offline(True)
    task = _init("offline-proj", "offline-diverge", monitor=False, tags=["nightly"])
    task.connect({"lr": 0.5, "batch_size": 64}, name="Args")
    task.set_user_properties(owner="ml-team")
    logger = task.get_logger()
    for i in range(1, 301):
        loss = 2.3 * math.exp(-i / 40) + 0.1 if i <= 200 else 0.1 * math.exp((i - 200) / 12)
        logger.report_scalar("train", "loss", loss, iteration=i)
        if i % 25 == 0:
            logger.report_scalar("val", "loss", loss * 1.1, iteration=i)
        if i % 10 == 0:
            logger.report_scalar(":monitor:gpu", "gpu_0_utilization", 12.0 + (i % 7), iteration=i)
            logger.report_scalar(":monitor:gpu", "gpu_0_mem_usage", 41.5, iteration=i)
        if i % 100 == 0:
            print(f"step {i} | loss {loss:.4f}", flush=True)
    logger.report_scalar("train", "loss", 123.0, iteration=300)  # re-reported: the last value wins
    print("Traceback (most recent call last):", flush=True)
    print('  File "train.py", line 88, in evaluate', flush=True)
    print(
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 15.78 GiB total "
        "capacity; 13.90 GiB already allocated; 1.10 GiB free)",
        flush=True,
    )
    folder = str(task.get_offline_mode_folder())
    task.close()
    return {"task_id": task.id, "folder": folder, "zip": folder + ".zip"}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("replay")
    r.add_argument("--runs", required=True, help="JSON file written by export_mlflow_runs")
    r.add_argument("--project", required=True)
    o = sub.add_parser("offline")
    o.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    res = replay(args.runs, args.project) if args.cmd == "replay" else offline(args.out)
    sys.stdout.write("\n" + json.dumps(res) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
