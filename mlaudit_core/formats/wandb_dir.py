"""W&B run folders (``wandb/run-*``, ``wandb/offline-run-*``) and ``wandb/`` folders holding them.

Detected by a ``run-<id>.wandb`` file, or a ``files/`` folder with ``wandb-summary.json``,
``output.log`` or ``config.yaml``, in a folder named ``run-*``/``offline-run-*``; a
``wandb/`` folder with several of them is a container (:func:`list_runs`).

With the ``.wandb`` file, the offline reader of the W&B plugin reads every history point
(``integrations/mlaudit_wandb/offline.py``; needs ``mlaudit[wandb]``). Without it (a
snapshot that dropped the large binary), metrics come from ``files/output.log`` (the
console, read by the log-format catalog), params from ``files/config.yaml`` and the final
values of ``files/wandb-summary.json`` are kept as ``summary.*`` params; the notes say
so. Nothing is written into the folder.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import InputError
from ._common import flat_params, read_yaml

NAME = "wandb_dir"
DETECTS = "W&B run folder (run-<id>.wandb and/or files/wandb-summary.json, output.log)"
_RUN_PREFIXES = ("run-", "offline-run-")


def _is_run(d: Path) -> bool:
    if not d.is_dir():
        return False
    if any(d.glob("*.wandb")):
        return True
    f = d / "files"
    return d.name.startswith(_RUN_PREFIXES) and f.is_dir() and any(
        (f / n).is_file() for n in ("wandb-summary.json", "output.log", "config.yaml"))


def _runs_in(d: Path) -> list[Path]:
    try:
        return sorted((c for c in d.iterdir() if c.name.startswith(_RUN_PREFIXES) and not c.is_symlink()
                       and _is_run(c)), key=lambda c: c.name)
    except OSError:
        return []


def sniff(path: Path) -> float:
    if path.is_file():
        return 0.9 if path.suffix == ".wandb" else 0.0
    if _is_run(path):
        return 0.9
    if path.name == "wandb" or (path / "latest-run").exists():
        return 0.9 if _runs_in(path) else 0.0
    return 0.0


def list_runs(path: Path) -> list[Path]:
    if path.is_file() or _is_run(path):
        return []
    return _runs_in(path)


def load(path: Path):
    if path.is_file():
        path = path.parent
    if not _is_run(path):
        runs = _runs_in(path)
        if not runs:
            raise InputError(f"{path}: not a W&B run folder (no run-<id>.wandb, no files/wandb-summary.json)")
        path = runs[-1]
    if any(path.glob("*.wandb")):
        from ..plugins import get_plugin

        run = get_plugin("wandb").load(str(path), offline=True)
        _check_summary(run, path)
        return run
    return _from_files(path)


def _check_summary(run, path: Path) -> None:
    """Say so when the ``.wandb`` history stops far before the step ``wandb-summary.json`` reached
    (a binary cut short when copied or committed), and keep the summary's final values."""
    summ = path / "files" / "wandb-summary.json"
    if not summ.is_file():
        return
    try:
        data = json.loads(summ.read_text(encoding="utf-8", errors="replace")[: 16 << 20])
    except ValueError:
        return
    if not isinstance(data, dict):
        return
    last = data.get("_step")
    hist_max = max((int(run.metrics.series(k).steps.max()) for k in run.metrics.keys
                    if not k.startswith("system.") and len(run.metrics.series(k))), default=None)
    if isinstance(last, (int, float)) and hist_max is not None and last > 1.05 * (hist_max + 1):
        run.warnings.append(f"{path.name}: the .wandb history is truncated: it stops at step {hist_max}, "
                            f"wandb-summary.json reached step {int(last)}; the summary's final values are "
                            "kept as summary.* params")
        for k, v in data.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                run.params.setdefault(f"summary.{k}", str(v))


def _from_files(path: Path):
    from .consolelog import load_logs

    files = path / "files"
    warnings: list[str] = []
    out = files / "output.log"
    if out.is_file() and out.stat().st_size > 0:
        run = load_logs([out], name=path.name)
        from .console import split_launches

        split_launches(run, out.name)
    else:
        from ..rundata import RunData, RunIdentity

        run = RunData(identity=RunIdentity(tracker="wandb", id=path.name, name=path.name))
        warnings.append(f"{path}: no files/output.log either; only the summary values are known")
    run.identity.tracker = "wandb"
    run.identity.id = path.name.rsplit("-", 1)[-1]
    run.identity.name = path.name
    cfg = read_yaml(files / "config.yaml", warnings) if (files / "config.yaml").is_file() else {}
    for k, v in cfg.items():
        if k.startswith("_"):
            continue
        val = v.get("value") if isinstance(v, dict) and "value" in v else v
        if isinstance(val, dict):
            flat_params(val, f"{k}.", run.params)
        else:
            run.params[k] = str(val)[:500]
    summ = files / "wandb-summary.json"
    if summ.is_file():
        try:
            data = json.loads(summ.read_text(encoding="utf-8", errors="replace")[: 16 << 20])
            for k, v in (data.items() if isinstance(data, dict) else []):
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    run.params[f"summary.{k}"] = str(v)
        except ValueError:
            warnings.append(f"{summ}: not valid JSON; the final values were not read")
    run.notes.insert(0, f"{path.name}: no run-<id>.wandb history in the folder; metrics were parsed from "
                        "files/output.log, final values are the summary.* params (wandb-summary.json)")
    run.warnings.extend(warnings)
    return run
