"""Auto-triage: a webhook receiver for W&B Automations and a polling fallback.

``mlaudit serve wandb-webhook`` runs :func:`make_app` under uvicorn. W&B's
webhook action POSTs the automation's payload with the webhook's access token in
``Authorization: Bearer <token>`` (W&B docs, "Create a webhook automation");
the receiver compares it in constant time with ``MLAUDIT_WANDB_WEBHOOK_SECRET``.
A recommended payload template::

    {"event_type": "${event_type}", "entity": "${entity_name}",
     "project": "${project_name}", "run_id": "${run_id}"}

(``run_path``/``run_url``/``run_name`` are accepted too.) Accepted runs go into a
bounded queue persisted in SQLite, so a crash or restart loses nothing: a job is
deleted only after its audit succeeded, and an audit that raises is retried up
to ``max_attempts`` times with a growing delay. ``GET /healthz`` reports the
queue depth.

The loop guard: a run already judged in its current state (``mlaudit/verdict``
and ``mlaudit/run_state`` in its summary) is skipped, so the report panel's
resume, which re-fires run-state automations, does not start a second audit.
"""

from __future__ import annotations

import hmac
import json
import re
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

SECRET_ENV = "MLAUDIT_WANDB_WEBHOOK_SECRET"
_URL = re.compile(r"/(?P<e>[^/]+)/(?P<p>[^/]+)/runs/(?P<r>[^/?#]+)")


class QueueFull(Exception):
    """The persisted queue holds ``max_size`` jobs already."""


class RunQueue:
    """A bounded FIFO of run paths persisted in SQLite (one row per pending audit).

    Args:
        path: the SQLite file (created if missing).
        max_size: at most this many pending jobs; :meth:`put` raises QueueFull beyond it.
    """

    def __init__(self, path: str | Path, max_size: int = 1000) -> None:
        self.path = str(path)
        self.max_size = max_size
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS jobs (id INTEGER PRIMARY KEY AUTOINCREMENT, "
                         "run TEXT NOT NULL UNIQUE, attempts INTEGER NOT NULL DEFAULT 0, "
                         "not_before REAL NOT NULL DEFAULT 0, last_error TEXT)")
        self._db.execute("CREATE TABLE IF NOT EXISTS failed (run TEXT PRIMARY KEY, attempts INTEGER, "
                         "last_error TEXT)")

    def put(self, run: str) -> bool:
        """Queue ``run``; returns False when it is already queued. Raises QueueFull."""
        with self._lock:
            if self.depth() >= self.max_size:
                raise QueueFull(f"queue full ({self.max_size} runs pending)")
            cur = self._db.execute("INSERT OR IGNORE INTO jobs (run) VALUES (?)", (run,))
            return cur.rowcount == 1

    def next(self, now: float | None = None) -> tuple[int, str, int] | None:
        """The oldest job that is due: (job id, run, attempts so far), or None."""
        now = time.time() if now is None else now
        with self._lock:
            return self._db.execute("SELECT id, run, attempts FROM jobs WHERE not_before <= ? "
                                    "ORDER BY id LIMIT 1", (now,)).fetchone()

    def done(self, job_id: int) -> None:
        with self._lock:
            self._db.execute("DELETE FROM jobs WHERE id = ?", (job_id,))

    def retry(self, job_id: int, error: str, delay_s: float, max_attempts: int) -> bool:
        """Record a failed attempt; returns False (job moved to ``failed``) after ``max_attempts``."""
        with self._lock:
            run, attempts = self._db.execute("SELECT run, attempts FROM jobs WHERE id = ?",
                                             (job_id,)).fetchone()
            attempts += 1
            if attempts >= max_attempts:
                self._db.execute("INSERT OR REPLACE INTO failed VALUES (?, ?, ?)", (run, attempts, error))
                self._db.execute("DELETE FROM jobs WHERE id = ?", (job_id,))
                return False
            self._db.execute("UPDATE jobs SET attempts = ?, not_before = ?, last_error = ? WHERE id = ?",
                             (attempts, time.time() + delay_s, error, job_id))
            return True

    def depth(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM jobs").fetchone()[0]

    def failed(self) -> list[tuple[str, int, str]]:
        return self._db.execute("SELECT run, attempts, last_error FROM failed").fetchall()

    def close(self) -> None:
        self._db.close()


def run_path_from_payload(payload: dict) -> str | None:
    """``ENTITY/PROJECT/RUN_ID`` from a webhook payload, or None when it names no run."""
    if not isinstance(payload, dict):
        return None
    for key in ("run_path", "run"):
        v = payload.get(key)
        if isinstance(v, str) and v.count("/") == 2:
            return v.strip("/")
    v = payload.get("run_url")
    if isinstance(v, str) and (m := _URL.search(v)):
        return f"{m['e']}/{m['p']}/{m['r']}"
    entity = payload.get("entity") or payload.get("entity_name")
    project = payload.get("project") or payload.get("project_name")
    run_id = payload.get("run_id") or payload.get("run_name")
    if all(isinstance(x, str) and x and "/" not in x for x in (entity, project, run_id)):
        return f"{entity}/{project}/{run_id}"
    return None


@dataclass
class Worker:
    """Drains the queue: one audit at a time, retried with a growing delay when it raises.

    ``audit_one(run_path)`` does the whole audit and write-back; any exception is a
    failed attempt (delay ``base_delay_s * 2**attempts`` seconds, at most ``max_attempts``).
    """

    queue: RunQueue
    audit_one: Callable[[str], object]
    max_attempts: int = 5
    base_delay_s: float = 5.0
    idle_s: float = 0.5
    log: Callable[[str], None] = print

    def __post_init__(self) -> None:
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def step(self) -> bool:
        """Process one due job; returns False when none was due."""
        job = self.queue.next()
        if job is None:
            return False
        job_id, run, attempts = job
        try:
            self.audit_one(run)
        except Exception as exc:  # a crashed audit is retried, never lost
            err = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            again = self.queue.retry(job_id, err, self.base_delay_s * 2 ** attempts, self.max_attempts)
            self.log(f"audit of {run} failed ({err}); " +
                     ("will retry" if again else f"gave up after {self.max_attempts} attempts"))
            return True
        self.queue.done(job_id)
        return True

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="mlaudit-wandb-worker", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 10) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _loop(self) -> None:
        while not self._stop.is_set():
            if not self.step():
                self._stop.wait(self.idle_s)


def make_app(queue: RunQueue, secret: str, *, states: tuple[str, ...] = ("finished", "failed",
                                                                           "crashed", "killed")):
    """The Starlette app: ``POST /webhook`` (Bearer secret), ``GET /healthz``.

    Responses: 202 queued, 200 ignored (duplicate, or an event for another state),
    400 payload names no run, 401 wrong or missing secret, 503 queue full.
    """
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    expected = f"Bearer {secret}".encode()

    async def webhook(request):
        got = request.headers.get("authorization", "").encode()
        if not secret or not hmac.compare_digest(got, expected):
            return JSONResponse({"error": "missing or wrong bearer token"}, status_code=401)
        try:
            payload = json.loads(await request.body() or b"{}")
        except ValueError:
            return JSONResponse({"error": "body is not JSON"}, status_code=400)
        state = str(payload.get("state") or payload.get("run_state") or "").lower() \
            if isinstance(payload, dict) else ""
        if state and state not in states:
            return JSONResponse({"ignored": f"run state {state}"}, status_code=200)
        run = run_path_from_payload(payload)
        if run is None:
            return JSONResponse({"error": "payload names no run (send entity, project, run_id "
                                          "or run_path)"}, status_code=400)
        try:
            added = queue.put(run)
        except QueueFull as exc:
            return JSONResponse({"error": str(exc)}, status_code=503)
        return JSONResponse({"queued" if added else "already_queued": run},
                            status_code=202 if added else 200)

    async def healthz(request):
        return JSONResponse({"ok": True, "queued": queue.depth(), "failed": len(queue.failed())})

    return Starlette(routes=[Route("/webhook", webhook, methods=["POST"]),
                             Route("/healthz", healthz, methods=["GET"])])


def poll(list_finished: Callable[[], list[str]], handle: Callable[[str], object], *,
         interval_s: float = 60.0, once: bool = False, log: Callable[[str], None] = print,
         stop: threading.Event | None = None) -> int:
    """The polling fallback: every ``interval_s`` seconds, audit runs that ended and carry no verdict.

    Returns the number of runs handled (when ``once`` or stopped).
    """
    stop = stop or threading.Event()
    handled = 0
    while True:
        for run in list_finished():
            try:
                handle(run)
                handled += 1
            except Exception as exc:  # one bad run never stops the watcher; next poll retries
                log(f"audit of {run} failed: {type(exc).__name__}: {exc}")
        if once or stop.wait(interval_s):
            return handled


def judge(plugin, ref: str, *, settings=None, panel: bool = True,
          log: Callable[[str], None] = print) -> str:
    """Audit one run for auto-triage and write the verdict back; returns the outcome or why skipped.

    Skips a run still running and a run already judged in its current state (loop guard).
    Raises whatever the load or write-back raises (the worker retries).
    """
    from mlaudit_core.audit import audit

    from .writeback import already_judged

    state, summary = plugin.run_state(ref)
    if state in ("running", "pending", "preempting"):
        log(f"{ref}: still {state}; not audited")
        return f"skipped: {state}"
    if already_judged(summary, state):
        log(f"{ref}: already judged while {state}; skipped")
        return "skipped: already judged"
    run = plugin.load(ref)
    report = audit(run, settings)
    plugin.write_back(run, report, panel=panel)
    log(f"{ref}: {report.verdict.outcome.value} ({report.verdict.cause.value}, "
        f"confidence {report.verdict.confidence:.2f})")
    return report.verdict.outcome.value
