"""Shared plumbing of the W&B tests: MLflow runs replayed as W&B history rows, and the
environment that points the real wandb SDK at a local fake server."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest


def mlflow_run_as_rows(client, run_id: str, root: Path) -> dict:
    """One MLflow run as ``{"params", "rows", "console"}``: ``rows`` are W&B history rows
    (``_step``, ``_timestamp`` in seconds, one key per logged metric, system metrics left
    out), ordered by step; ``console`` is the run's ``console.log`` artifact."""
    data = client.get_run(run_id).data
    rows: dict[int, dict] = {}
    for key in data.metrics:
        if key.startswith("system/"):
            continue
        for m in client.get_metric_history(run_id, key):
            row = rows.setdefault(m.step, {"_step": m.step})
            row[key] = m.value
            row["_timestamp"] = m.timestamp / 1000
    console = Path(client.download_artifacts(run_id, "console.log", str(root))).read_text()
    return {"params": data.params, "rows": [rows[s] for s in sorted(rows)], "console": console}


def reset_sdk_state() -> None:
    """Forget the SDKs' in-process sessions and settings so that the next test module, with its
    own local server, is not sent to this module's (stopped) one."""
    try:
        from clearml.backend_interface.base import InterfaceBase
        from clearml.config import ConfigWrapper

        InterfaceBase._default_session = None
        ConfigWrapper._config = None
    except ImportError:
        pass
    try:
        import wandb

        wandb.teardown()
    except Exception:  # teardown with no active setup is fine to ignore
        pass


@contextlib.contextmanager
def sdk_pointed_at(srv, api_key: str) -> Iterator[None]:
    """``WANDB_BASE_URL``/``WANDB_API_KEY`` set to the fake server for the block (online mode,
    silent); afterwards the environment is restored and the SDK state reset."""
    mp = pytest.MonkeyPatch()
    mp.setenv("WANDB_BASE_URL", srv.base_url)
    mp.setenv("WANDB_API_KEY", api_key)
    mp.setenv("WANDB_SILENT", "true")
    mp.delenv("WANDB_MODE", raising=False)
    try:
        yield
    finally:
        mp.undo()
        reset_sdk_state()
