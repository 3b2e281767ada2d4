"""Print plain statistics of a training artifact, to check the labels in labels.json.

Usage:  python tests/data/realworld/describe.py PATH [PATH ...]
        python tests/data/realworld/describe.py --id ID      (looks PATH up in labels.json)

Stats only; this script does not import mlaudit and gives no verdict.
For every numeric series it prints: number of points, first/last (with step), min/max
(with step), the mean of each quarter of the points, and NaN/Inf counts.

Readers (ordinary libraries, no home-made parsing where a library exists):
- TensorBoard event files: tensorboard's EventAccumulator (scalars and v2 tensors).
- trainer_state.json: json, log_history grouped by key; max_steps/num_train_epochs printed.
- CSV (Lightning CSVLogger, Keras CSVLogger, YOLO results.csv, ...): pandas.
- MLflow file store: metric files parsed directly ("timestamp value step" per line).
- W&B run folder: wandb-summary.json and config.yaml printed; output.log tail printed.
- JSON-lines logs (detectron2 metrics.json, DETR log.txt, *.log.json, trainer_log.jsonl): pandas.
- Other text logs: numbers after `name: value` / `name=value` pairs, per name, by line order.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent


def stats(name, steps, values):
    v = np.asarray(values, dtype=float)
    s = np.asarray(steps)
    n = len(v)
    if n == 0:
        print(f"  {name}: empty")
        return
    nan = int(np.isnan(v).sum())
    inf = int(np.isinf(v).sum())
    fin = np.isfinite(v)
    line = f"  {name}: n={n} first={v[0]:.5g}@{s[0]} last={v[-1]:.5g}@{s[-1]}"
    if fin.any():
        vi = np.where(fin, v, np.nan)
        imin, imax = int(np.nanargmin(vi)), int(np.nanargmax(vi))
        line += f" min={v[imin]:.5g}@{s[imin]} max={v[imax]:.5g}@{s[imax]}"
        q = [
            np.nanmean(vi[a:b]) if np.isfinite(vi[a:b]).any() else float("nan")
            for a, b in _quarters(n)
        ]
        line += " q=[" + ", ".join(f"{x:.4g}" for x in q) + "]"
    if nan or inf:
        line += f" NaN={nan} Inf={inf}"
    print(line)


def _quarters(n):
    if n < 4:
        return [(i, i + 1) for i in range(n)]
    e = [round(n * k / 4) for k in range(5)]
    return [(e[k], e[k + 1]) for k in range(4)]


def describe_tb(path: Path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    files = sorted(path.rglob("events.out.tfevents*")) if path.is_dir() else [path]
    for f in files:
        print(
            f" [events] {f.relative_to(path) if path.is_dir() else f.name}  ({f.stat().st_size} B)"
        )
        ea = EventAccumulator(str(f), size_guidance={"scalars": 0, "tensors": 0})
        ea.Reload()
        tags = ea.Tags()
        for t in tags.get("scalars", []):
            ev = ea.Scalars(t)
            stats(t, [e.step for e in ev], [e.value for e in ev])
            if ev:
                print(f"    wall span {ev[-1].wall_time - ev[0].wall_time:.0f}s")
        for t in tags.get("tensors", []):
            ev = ea.Tensors(t)
            vals = []
            for e in ev:
                try:
                    import tensorboard.util.tensor_util as tu

                    a = tu.make_ndarray(e.tensor_proto)
                    vals.append(float(a) if a.size == 1 else float("nan"))
                except Exception:
                    vals.append(float("nan"))
            if any(np.isfinite(vals)):
                stats(t + " (tensor)", [e.step for e in ev], vals)


def describe_trainer_state(path: Path):
    d = json.loads(path.read_text())
    keys = [
        "global_step",
        "max_steps",
        "num_train_epochs",
        "epoch",
        "logging_steps",
        "eval_steps",
        "best_metric",
        "best_model_checkpoint",
        "train_batch_size",
    ]
    print("  " + ", ".join(f"{k}={d.get(k)}" for k in keys))
    series = {}
    for row in d.get("log_history", []):
        for k, v in row.items():
            if k in ("step", "epoch") or not isinstance(v, (int, float)):
                continue
            series.setdefault(k, []).append((row.get("step"), v))
    for k, pts in series.items():
        stats(k, [p[0] for p in pts], [p[1] for p in pts])


def describe_csv(path: Path):
    df = pd.read_csv(path, skipinitialspace=True)
    df.columns = [str(c).strip() for c in df.columns]
    print(f"  rows={len(df)} columns={list(df.columns)}")
    stepcol = next((c for c in ("step", "epoch", "Epoch") if c in df.columns), None)
    for c in df.columns:
        if c == stepcol or not pd.api.types.is_numeric_dtype(df[c]):
            continue
        sub = (
            df[[c] + ([stepcol] if stepcol else [])].dropna(subset=[c])
            if df[c].notna().any()
            else df
        )
        steps = sub[stepcol].tolist() if stepcol else list(sub.index)
        stats(c, steps, sub[c].tolist())


def describe_jsonl(path: Path):
    rows = []
    for line in path.read_text(errors="replace").splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                pass
    if not rows:
        return False
    df = pd.json_normalize(rows)
    print(f"  json lines={len(df)} keys={list(df.columns)[:40]}")
    stepcol = next(
        (c for c in ("iteration", "epoch", "step", "current_steps") if c in df.columns), None
    )
    for c in df.columns:
        if c == stepcol or not pd.api.types.is_numeric_dtype(df[c]):
            continue
        sub = df[[c] + ([stepcol] if stepcol else [])].dropna(subset=[c])
        stats(c, sub[stepcol].tolist() if stepcol else list(sub.index), sub[c].tolist())
    return True


PAIR = re.compile(r"([A-Za-z_][\w/\.\-]*)\s*[:=]\s*(-?(?:\d+\.?\d*(?:e[-+]?\d+)?|nan|inf))", re.I)


def describe_text(path: Path):
    txt = path.read_text(errors="replace").replace("\r", "\n")
    series = {}
    for i, line in enumerate(txt.splitlines()):
        for k, v in PAIR.findall(line):
            series.setdefault(k, []).append((i, float(v)))
    lines = txt.splitlines()
    print(f"  lines={len(lines)}")
    for k, pts in series.items():
        if len(pts) >= 2:
            stats(k, [f"L{p[0]}" for p in pts], [p[1] for p in pts])
    print("  --- last 5 lines ---")
    for line in [ln for ln in lines if ln.strip()][-5:]:
        print("   " + line[:200])
    for pat in ("Traceback", "KeyboardInterrupt", "Error", "Killed", "SIGTERM", "nan"):
        hits = [ln for ln in lines if pat in ln]
        if hits:
            print(f"  '{pat}' in {len(hits)} lines, e.g. {hits[-1][:160]!r}")


def describe_mlflow(root: Path):
    for meta in sorted(root.rglob("meta.yaml")):
        run = meta.parent
        if not (run / "metrics").is_dir() and not (run / "params").is_dir():
            continue
        txt = meta.read_text()
        status = re.search(r"status:\s*(\S+)", txt)
        st = re.search(r"start_time:\s*(\S+)", txt)
        en = re.search(r"end_time:\s*(\S+)", txt)
        print(
            f" [mlflow run] {run.relative_to(root)} status={status and status.group(1)} "
            f"start={st and st.group(1)} end={en and en.group(1)}"
        )
        params = (
            {p.name: p.read_text().strip()[:60] for p in sorted((run / "params").glob("*"))}
            if (run / "params").is_dir()
            else {}
        )
        if params:
            print("  params: " + ", ".join(f"{k}={v}" for k, v in list(params.items())[:60]))
        for mf in sorted((run / "metrics").rglob("*")) if (run / "metrics").is_dir() else []:
            if mf.is_dir():
                continue
            pts = []
            for line in mf.read_text().splitlines():
                parts = line.split()
                if len(parts) >= 2:
                    pts.append((int(parts[2]) if len(parts) > 2 else 0, float(parts[1])))
            stats(str(mf.relative_to(run / "metrics")), [p[0] for p in pts], [p[1] for p in pts])


def describe_wandb(run: Path):
    for name in ("files/wandb-summary.json", "files/config.yaml", "files/wandb-metadata.json"):
        f = run / name
        if f.exists():
            print(f" [{name}]")
            print("   " + f.read_text(errors="replace")[:3000].replace("\n", "\n   "))
    out = run / "files" / "output.log"
    if out.exists():
        print(" [files/output.log]")
        describe_text(out)


def describe(path: Path):
    print(f"== {path}")
    if path.is_dir():
        if (path / "files").is_dir() and any(path.glob("files/*")):
            return describe_wandb(path)
        if any(path.rglob("meta.yaml")) and any(path.rglob("metrics")):
            return describe_mlflow(path)
        if any(path.rglob("events.out.tfevents*")):
            describe_tb(path)
        for f in sorted(path.rglob("*")):
            if f.is_file() and "tfevents" not in f.name:
                describe(f)
        return
    name = path.name
    if "tfevents" in name:
        return describe_tb(path)
    if name == "trainer_state.json":
        return describe_trainer_state(path)
    if name.endswith(".csv"):
        return describe_csv(path)
    if name.endswith((".yaml", ".yml")) or name in ("last_checkpoint",):
        print("   " + path.read_text(errors="replace")[:1500].replace("\n", "\n   "))
        return
    if name.endswith((".log", ".txt")):
        first = path.read_text(errors="replace").split("\n", 1)[0]
        if first.strip().lower().startswith("epoch,"):
            return describe_csv(path)  # Keras CSVLogger writes training.log as CSV
    if (
        name.endswith((".json", ".jsonl", ".txt", ".log", ".out", ".err", ".e", ".o"))
        or name == "nohup.out"
    ):
        if name.endswith((".json", ".jsonl")) or path.read_text(
            errors="replace"
        ).lstrip().startswith("{"):
            try:
                d = json.loads(path.read_text())
                if isinstance(d, dict):
                    print("   " + json.dumps(d)[:1500])
                    return
            except json.JSONDecodeError:
                pass
            if describe_jsonl(path):
                return
        return describe_text(path)


def main(argv):
    if argv[:1] == ["--id"]:
        labels = json.loads((HERE / "labels.json").read_text())
        for lab in labels:
            if lab["id"] in argv[1:]:
                describe(HERE / lab["path"])
        return
    for a in argv:
        describe(Path(a))


if __name__ == "__main__":
    main(sys.argv[1:])
