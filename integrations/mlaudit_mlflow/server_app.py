"""``mlflow server --app-name mlaudit``: the MLflow server tells the watcher when a run ends.

MLflow has no run-event webhooks, so ``mlaudit watch mlflow`` lists finished runs every
``--poll-interval`` seconds. This module is an ``mlflow.app`` plugin (the entry point MLflow's
own ``basic-auth`` app uses, ``pyproject.toml``: ``mlaudit = "mlaudit_mlflow.server_app:
create_app"``): inside the tracking server it sees each successful ``runs/update`` request
whose run ends up ``FINISHED``, ``FAILED`` or ``KILLED`` (``mlflow.end_run``,
``MlflowClient.set_terminated``, ``update_run``) and records the run in an inbox table,
:data:`INBOX_TABLE`, of the watcher's state file (``MLAUDIT_MLFLOW_APP_STATE`` in the
server's environment: the same path as ``mlaudit watch mlflow --state``). The watcher's
:class:`InboxTrigger` drains that table every :data:`DRAIN_EVERY_S` seconds and submits the
runs of its experiments, so an audit starts about a second after the run ends; the listing
stays the safety net (a server without the app, a run ended by another server replica).

The app only reads the request and response of ``runs/update``; it never changes a
response, and a failure to record (state file missing, locked for longer than the SQLite
busy timeout) is logged by the server, never returned to the client. The inbox is plain
SQLite in the same file (WAL): the server writes rows, the watcher deletes what it took.

Usage::

    export MLAUDIT_MLFLOW_APP_STATE=/var/lib/mlaudit/mlflow.sqlite
    mlflow server --app-name mlaudit --backend-store-uri ... &
    mlaudit watch mlflow -e churn --state /var/lib/mlaudit/mlflow.sqlite
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from pathlib import Path

log = logging.getLogger("mlaudit.mlflow.app")

STATE_ENV = "MLAUDIT_MLFLOW_APP_STATE"
INBOX_TABLE = "mlflow_app_inbox"
TERMINAL = ("FINISHED", "FAILED", "KILLED")
#: Seconds between the watcher's looks at the inbox (one indexed SELECT on a local file).
DRAIN_EVERY_S = 0.5
#: SQLite busy timeout, seconds: the watcher holds write locks for milliseconds.
BUSY_S = 5.0
_SCHEMA = (
    f"CREATE TABLE IF NOT EXISTS {INBOX_TABLE} (run_id TEXT NOT NULL, experiment_id TEXT, "
    "status TEXT, received REAL NOT NULL, PRIMARY KEY (run_id, status))"
)


def _connect(path: str | os.PathLike) -> sqlite3.Connection:
    db = sqlite3.connect(str(path), timeout=BUSY_S, isolation_level=None)
    db.execute(_SCHEMA)
    return db


def push(path: str | os.PathLike, run_id: str, experiment_id: str | None, status: str) -> None:
    """Record that ``run_id`` ended with ``status`` (idempotent per run and status)."""
    db = _connect(path)
    try:
        db.execute(
            f"INSERT OR REPLACE INTO {INBOX_TABLE} VALUES (?, ?, ?, ?)",
            (run_id, experiment_id, status, time.time()),
        )
    finally:
        db.close()


def drain(path: str | os.PathLike) -> list[tuple[str, str | None]]:
    """Take every recorded ``(run_id, experiment_id)`` out of the inbox (oldest first)."""
    if not Path(path).exists():
        return []
    db = _connect(path)
    try:
        db.execute("BEGIN IMMEDIATE")
        rows = db.execute(
            f"SELECT run_id, experiment_id FROM {INBOX_TABLE} ORDER BY received"
        ).fetchall()
        db.execute(f"DELETE FROM {INBOX_TABLE}")
        db.execute("COMMIT")
        return [(r, e) for r, e in rows]
    finally:
        db.close()


def _on_response(request, response, state: str) -> None:
    if (
        request.method != "POST"
        or not request.path.endswith("/mlflow/runs/update")
        or response.status_code != 200
    ):
        return
    body = request.get_json(silent=True) or {}
    info = (
        ((response.get_json(silent=True) or {}).get("run_info") or {}) if response.is_json else {}
    )
    status = info.get("status") or body.get("status")
    run_id = info.get("run_id") or body.get("run_id") or body.get("run_uuid")
    if status in TERMINAL and isinstance(run_id, str) and run_id.isalnum():
        push(state, run_id, info.get("experiment_id"), status)


def create_app(app=None):
    """The ``mlflow.app`` factory: MLflow's Flask app with an after-request hook; wrapped in
    MLflow's FastAPI app when the server runs under uvicorn (MLflow's default), as
    ``basic-auth`` does."""
    from mlflow.server import app as flask_app

    app = app or flask_app
    state = os.environ.get(STATE_ENV, "").strip()
    if not state:
        log.warning(
            "mlaudit app: %s is not set; run ends are not recorded (the watcher's "
            "polling still finds them)",
            STATE_ENV,
        )

    @app.after_request
    def _mlaudit_record_run_end(response):
        if state:
            try:
                from flask import request

                _on_response(request, response, state)
            except Exception as exc:  # noqa: BLE001 - never fail the client's request
                log.warning(
                    "mlaudit app: run end not recorded in %s: %s: %s",
                    state,
                    type(exc).__name__,
                    exc,
                )
        return response

    try:
        from mlflow.server.fastapi_app import create_fastapi_app
    except ImportError:  # MLflow 2.x
        create_fastapi_app = None
    from mlaudit_core.sdk_private import mlflow_server_uses_uvicorn

    if create_fastapi_app is not None and mlflow_server_uses_uvicorn():
        return create_fastapi_app(app)
    return app


class InboxTrigger:
    """Drain the inbox into ``watcher.submit`` every ``DRAIN_EVERY_S`` seconds, keeping the
    runs of ``experiment_ids()`` (an empty result keeps none until the ids are known)."""

    def __init__(self, path: Path, watcher, experiment_ids) -> None:
        self.path, self.watcher, self.experiment_ids = Path(path), watcher, experiment_ids
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._run, name="mlaudit-mlflow-app-inbox", daemon=True
        )

    def start(self) -> InboxTrigger:
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._thread.join(timeout)

    def _run(self) -> None:
        from mlaudit_core.service import QueueFull

        while not self._stop.wait(DRAIN_EVERY_S):
            try:
                ids = set(self.experiment_ids() or ())
                if not ids:
                    continue
                runs = [r for r, e in drain(self.path) if e is None or e in ids]
                if runs:
                    self.watcher.submit(runs)
            except QueueFull as exc:
                log.warning("mlflow app inbox: %s; the next listing picks them up", exc)
            except Exception as exc:  # noqa: BLE001 - the listing is the safety net
                log.warning("mlflow app inbox not read: %s: %s", type(exc).__name__, exc)
