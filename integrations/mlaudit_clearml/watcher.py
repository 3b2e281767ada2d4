"""Auto-triage: audit every task of a project when it completes, fails or is stopped.

The trigger is ClearML's own :class:`clearml.automation.TriggerScheduler`: a
task trigger on the project and statuses, polling ``tasks.get_all`` for tasks
whose ``last_update``/``last_change`` moved past its watermark, and calling
:meth:`Watcher.audit_task` on a background thread for each new task. It runs in
this process (:meth:`Watcher.start`) or as a ClearML service on a queue such as
``services`` (:meth:`Watcher.start_remotely`, the scheduler's ``start_remotely``).

Why a guard of its own: the scheduler remembers which tasks it triggered only in
memory (and in its own task's artifact when run by an agent). mlaudit's
write-back moves a task's ``last_update``/``last_change``, so a restarted
scheduler would see every judged task again. The guard is a SQLite file:

* ``judged``: one row per (task id, ``status_changed`` of the run that ended):
  ``pending`` while an audit runs, ``done`` after it, ``failed`` with the error
  (retried after ``interval`` x 2^(attempt-1) seconds, ``MAX_ATTEMPTS`` attempts in all).
  A task is audited at most once per ending; a task reset and run again ends
  with a new ``status_changed`` and is audited again;
* ``state``: the poll watermark (the scheduler's own ``last_update`` after each
  poll).

On start the watcher first catches up: the ``pending`` rows a previous process
left (it died mid-audit), ``failed`` rows with attempts left, and every task of
the project that ended (``status_changed``) after the stored watermark. Then the
scheduler starts from the time the catch-up query was made, so no task that
ended while the watcher was down is skipped and none is judged twice.
"""

from __future__ import annotations

import re
import sqlite3
import threading
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

from mlaudit_core.errors import InputError
from mlaudit_core.settings import Settings

from . import mapping
from .connection import call
from .plugin import ClearMLPlugin

#: Audits of one task ending that may fail (server hiccups) before the watcher gives up on it.
MAX_ATTEMPTS = 3
_SCHEMA = """
CREATE TABLE IF NOT EXISTS judged (
    task_id TEXT NOT NULL, finished TEXT NOT NULL, state TEXT NOT NULL, verdict TEXT, error TEXT,
    attempts INTEGER NOT NULL DEFAULT 0, claimed_at REAL, done_at REAL,
    PRIMARY KEY (task_id, finished));
CREATE TABLE IF NOT EXISTS state (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


def _stop_on_sigterm() -> None:
    """SIGTERM stops the watcher like Ctrl-C (KeyboardInterrupt in the polling loop).

    ``Task.init`` (inside the scheduler) installs a SIGTERM handler that closes the
    task and then re-sends the signal; it can block on the scheduler's sleeping main
    thread, so a service manager's stop would hang. Set after the scheduler exists.
    """
    import signal

    def _raise(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _raise)


def default_state_path(project: str) -> Path:
    """``~/.mlaudit/clearml-watch-<project>.sqlite`` (project name made file-safe)."""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", project).strip("_") or "project"
    return Path.home() / ".mlaudit" / f"clearml-watch-{safe}.sqlite"


class Guard:
    """The persistent record of judged tasks and the poll watermark (thread-safe)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._inflight: set[tuple[str, str]] = set()
        self._db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None, timeout=30)
        with self._lock:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.executescript(_SCHEMA)

    def claim(self, task_id: str, finished: str) -> bool:
        """Mark (task, ending) as being audited; False when it was judged or is being judged now."""
        with self._lock:
            if (task_id, finished) in self._inflight:
                return False
            row = self._db.execute("SELECT state, attempts FROM judged WHERE task_id=? AND finished=?",
                                   (task_id, finished)).fetchone()
            if row and (row[0] == "done" or (row[0] == "failed" and row[1] >= MAX_ATTEMPTS)):
                return False
            self._db.execute(
                "INSERT INTO judged (task_id, finished, state, attempts, claimed_at) VALUES (?, ?, 'pending', 1, ?)"
                " ON CONFLICT(task_id, finished) DO UPDATE SET state='pending', attempts=attempts+1,"
                " claimed_at=excluded.claimed_at", (task_id, finished, time.time()))
            self._inflight.add((task_id, finished))
            return True

    def finish(self, task_id: str, finished: str, *, verdict: str | None = None, error: str | None = None) -> None:
        with self._lock:
            self._db.execute("UPDATE judged SET state=?, verdict=?, error=?, done_at=? WHERE task_id=? AND "
                             "finished=?", ("failed" if error else "done", verdict, error, time.time(),
                                            task_id, finished))
            self._inflight.discard((task_id, finished))

    def unfinished(self) -> list[str]:
        """Task ids left ``pending`` by a previous process, or ``failed`` with attempts left."""
        with self._lock:
            rows = self._db.execute("SELECT DISTINCT task_id FROM judged WHERE state='pending' OR "
                                    "(state='failed' AND attempts<?) ORDER BY claimed_at", (MAX_ATTEMPTS,))
            return [r[0] for r in rows.fetchall()]

    def due_retries(self, now: float, base_delay_s: float) -> list[str]:
        """Task ids whose last audit failed, with attempts left, and whose back-off has passed.

        The wait after the n-th failed attempt is ``base_delay_s`` x 2^(n-1) seconds.
        """
        with self._lock:
            rows = self._db.execute("SELECT task_id, finished, attempts, done_at FROM judged WHERE "
                                    "state='failed' AND attempts<? ORDER BY done_at", (MAX_ATTEMPTS,))
            return [r[0] for r in rows.fetchall() if (r[0], r[1]) not in self._inflight
                    and (r[3] or 0) + base_delay_s * 2 ** (r[2] - 1) <= now]

    def rows(self) -> list[dict]:
        with self._lock:
            cur = self._db.execute("SELECT task_id, finished, state, verdict, error, attempts, claimed_at, "
                                   "done_at FROM judged ORDER BY claimed_at")
            names = [d[0] for d in cur.description]
            return [dict(zip(names, r)) for r in cur.fetchall()]

    @property
    def watermark(self) -> datetime | None:
        with self._lock:
            row = self._db.execute("SELECT value FROM state WHERE key='watermark'").fetchone()
        return mapping.parse_time(row[0]) if row else None

    @watermark.setter
    def watermark(self, when: datetime) -> None:
        when = when if when.tzinfo else when.replace(tzinfo=timezone.utc)
        with self._lock:
            self._db.execute("INSERT INTO state (key, value) VALUES ('watermark', ?) ON CONFLICT(key) DO UPDATE "
                             "SET value=excluded.value", (when.astimezone(timezone.utc).isoformat(),))

    def close(self) -> None:
        with self._lock:
            self._db.close()


class Watcher:
    """Audit the tasks of one ClearML project as they end.

    Args:
        project: the project name (it must exist).
        settings: audit settings (thresholds, select/ignore, aliases).
        state_path: the SQLite guard file.
        interval_s: seconds between polls of the server (the scheduler's pooling frequency).
        statuses: task statuses that trigger an audit.
        panel: write the report panel (debug sample and plots) too.
        log: one-line progress messages.
        plugin: the ClearML plugin to use (a new one by default).

    Raises:
        InputError: no such project, or the server/credentials problems of ``connect``.
    """

    def __init__(self, project: str, *, settings: Settings | None = None, state_path: str | Path,
                 interval_s: float = 60.0, statuses: tuple[str, ...] = mapping.FINISHED_STATUSES,
                 panel: bool = True, log: Callable[[str], None] = print,
                 plugin: ClearMLPlugin | None = None) -> None:
        self.project = project
        self.settings = settings or Settings()
        self.interval_s = interval_s
        self.statuses = tuple(statuses)
        self.panel = panel
        self.log = log
        self.plugin = plugin or ClearMLPlugin()
        self.project_id = self.plugin.project_id(project)
        self.guard = Guard(state_path)
        self.scheduler = None

    # ------------------------------------------------------------------ one task

    def audit_task(self, task_id: str) -> str | None:
        """Audit one task unless it was judged for this ending already; never raises.

        Returns the ``outcome/cause`` written, or ``None`` when skipped or failed.
        """
        from mlaudit_core.audit import audit

        try:
            doc = call(self.plugin.session, "tasks.get_by_id", task=task_id)["task"]
        except Exception as exc:
            self.log(f"mlaudit: cannot read task {task_id}: {exc}")
            return None
        if doc.get("status") not in self.statuses:
            return None
        finished = str(doc.get("status_changed") or doc.get("completed") or doc.get("last_update") or "")
        if not self.guard.claim(task_id, finished):
            return None
        try:
            run = self.plugin.load_with_baselines(task_id)
            report = audit(run, self.settings)
            self.plugin.write_back(run, report, panel=self.panel)
        except Exception as exc:  # one bad task never stops the watcher
            msg = f"{type(exc).__name__}: {exc}" if not isinstance(exc, InputError) else str(exc)
            self.guard.finish(task_id, finished, error=msg)
            self.log(f"mlaudit: audit of task {task_id} failed: {msg}")
            return None
        verdict = f"{report.verdict.outcome.value}/{report.verdict.cause.value}"
        self.guard.finish(task_id, finished, verdict=verdict)
        self.log(f"mlaudit: task {task_id} ({doc.get('name')}): {verdict}")
        return verdict

    # ------------------------------------------------------------------ catch-up

    def _ended_since(self, since: datetime) -> list[str]:
        q = {"project": [self.project_id], "status": list(self.statuses), "order_by": ["status_changed"],
             "only_fields": ["id", "status_changed"],
             "status_changed": ">" + since.astimezone(timezone.utc).isoformat()}
        return [t["id"] for t in call(self.plugin.session, "tasks.get_all", **q).get("tasks") or []]

    def catch_up(self) -> int:
        """Audit what a previous watcher left: pending/failed audits and tasks ended since the watermark.

        Returns the number of tasks audited. Leaves the watermark at the time the
        query was made (a first run, with no watermark, only records it).
        """
        started = datetime.now(timezone.utc)
        ids = list(self.guard.unfinished())
        mark = self.guard.watermark
        if mark is not None:
            ids += self._ended_since(mark)
        n = sum(1 for tid in dict.fromkeys(ids) if self.audit_task(tid))
        self.guard.watermark = started
        return n

    # ------------------------------------------------------------------ the scheduler

    def make_scheduler(self):
        """A ``TriggerScheduler`` with one task trigger calling :meth:`audit_task`."""
        from clearml.automation import TriggerScheduler
        from clearml.backend_api.session.client import APIClient

        watcher = self

        class _Scheduler(TriggerScheduler):
            def _step(self) -> bool:
                executed = super()._step()
                marks = [t.last_update for t in self._task_triggers if t.last_update]
                if marks:
                    watcher.guard.watermark = max(mapping.parse_time(m) if isinstance(m, str) else m
                                                  for m in marks)
                # a failed audit (server hiccup) is retried with back-off, not left until a restart
                for task_id in watcher.guard.due_retries(time.time(), watcher.interval_s):
                    threading.Thread(target=watcher.audit_task, args=(task_id,), daemon=True).start()
                return executed

        sched = _Scheduler(pooling_frequency_minutes=self.interval_s / 60.0,
                           force_create_task_name=f"mlaudit watcher: {self.project}",
                           force_create_task_project="DevOps")
        sched._client = APIClient(session=self.plugin.session)  # the bounded-retry session
        sched.add_task_trigger(name="mlaudit", schedule_function=self.audit_task, trigger_project=self.project,
                               trigger_on_status=list(self.statuses), add_tag=False)
        for trigger in sched._task_triggers:
            trigger.last_update = self.guard.watermark or datetime.now(timezone.utc)
        self.scheduler = sched
        return sched

    def start(self) -> None:
        """Catch up, then poll every ``interval_s`` seconds in this process (does not return)."""
        audited = self.catch_up()
        self.log(f"mlaudit: watching ClearML project {self.project!r} for tasks that end "
                 f"({', '.join(self.statuses)}), polling every {self.interval_s:g} s; {audited} caught up; "
                 f"guard {self.guard.path}")
        sched = self.make_scheduler()
        _stop_on_sigterm()
        sched.start()

    def start_remotely(self, queue: str) -> None:
        """Enqueue the watcher as a ClearML service on ``queue`` (this process exits); on the agent, run it."""
        from clearml import Task

        if not Task.running_locally():
            self.start()
            return
        if not call(self.plugin.session, "queues.get_all", name=f"^{re.escape(queue)}$").get("queues"):
            raise InputError(f"no ClearML queue named {queue!r}")
        self.log(f"mlaudit: enqueuing the watcher of {self.project!r} on queue {queue!r}")
        self.make_scheduler().start_remotely(queue=queue)
