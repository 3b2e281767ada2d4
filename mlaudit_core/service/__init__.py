"""Auto-triage at scale: the watcher core and the batch runner, shared by every tracker.

* :mod:`.state`: the sqlite state file (cursor, runs and their states, exactly-once bookkeeping).
* :mod:`.task`: the per-run task (load, audit, write back) and its :class:`RunResult`.
* :mod:`.source`: :class:`PluginSource`, what a tracker supplies to the watcher.
* :mod:`.watcher`: :class:`Watcher` (polling, queue, retries, idempotency, shutdown).
* :mod:`.batch`: :func:`run_batch` on a thread pool or Ray; :mod:`.summary` prints the result.

Imports no tracker SDK and no Ray (Ray is imported when ``--executor ray`` runs).
"""

from __future__ import annotations

from .batch import BatchOutcome, Executor, parse_since, run_batch
from .source import PluginSource
from .state import StateInUse, StateScopeMismatch, StateStore, default_state_path
from .summary import BatchSummary, render_summary
from .task import RunResult, TaskSpec, audit_one, audit_task
from .watcher import QueueFull, WatchConfig, Watcher

__all__ = [
    "BatchOutcome",
    "BatchSummary",
    "Executor",
    "PluginSource",
    "QueueFull",
    "RunResult",
    "StateInUse",
    "StateScopeMismatch",
    "StateStore",
    "TaskSpec",
    "WatchConfig",
    "Watcher",
    "audit_one",
    "audit_task",
    "default_state_path",
    "parse_since",
    "render_summary",
    "run_batch",
]
