"""``mlaudit watch clearml``: audit every task of a project when it completes, fails or is stopped.

Built on the watcher core shared by every tracker (:mod:`mlaudit_core.service`): its
state file, queue, retries, exactly-once bookkeeping and SIGTERM shutdown. ClearML
supplies only what is ClearML's:

* :class:`ClearMLWatchSource`: "tasks of the project that ended after ``since``", as
  ``(task id, status_changed)`` pairs (``tasks.get_all`` filtered on ``status`` and
  ``status_changed``), plus the load (with baselines) and the write-back. The core lists
  every ``LIST_EVERY`` trigger polls: the catch-up after downtime and the safety net. A pair
  names one *ending* of a task, so a task reset and run again (a new ``status_changed``) is
  audited again, while a task whose verdict is written stays settled however often
  mlaudit's own write-back moves its ``last_update``.
* :class:`MonitorTrigger`: ClearML's public monitoring base class
  :class:`clearml.automation.monitor.Monitor` (the extension point of ClearML's own
  monitoring services), subclassed through its public hooks only
  (``get_query_parameters``: the project's tasks that reached an ended status since the
  previous poll; ``process_task``), polled every ``interval_s`` in a thread of its own;
  each task it reports is handed to ``Watcher.submit`` with its ending, so an audit starts
  within one poll of the task's end. The watcher is a ClearML task
  ``mlaudit watcher: <project>`` in the ``DevOps`` project (``Task.init``, type
  ``monitor``), which :func:`enqueue` can send to an agent's queue, usually ``services``
  (``Task.execute_remotely``).

The guard against a second audit is two-fold: the state file (one row per task and
ending) and, on the task itself, the user property ``mlaudit.ended``
(:data:`~.writeback.ENDED_PROPERTY`), written last by the write-back; a task whose
``mlaudit.ended`` is its current ``status_changed`` is settled without an audit, even by a
watcher that lost its state file.
"""

from __future__ import annotations

import logging
import re
import threading
from datetime import datetime

from mlaudit_core.errors import InputError, MlauditError
from mlaudit_core.rundata import RunData
from mlaudit_core.service import PluginSource, QueueFull
from mlaudit_core.service.task import one_line

from . import mapping
from .connection import call
from .writeback import ENDED_CACHE, ENDED_PROPERTY

log = logging.getLogger("mlaudit.watch.clearml")

#: The project is listed once every this many trigger polls (the catch-up and safety net).
LIST_EVERY = 10
#: ``RunData.cache`` key: the task's status when it was loaded for the audit.
STATUS_CACHE = "clearml.status"
SCHEDULER_PROJECT = "DevOps"


def scheduler_name(project: str) -> str:
    """The name of the scheduler's service task."""
    return f"mlaudit watcher: {project}"


class ServerError(RuntimeError):
    """A ClearML call failed while the watcher was running: an outage, retried, never fatal."""


class ClearMLWatchSource(PluginSource):
    """The ended tasks of one ClearML project, as the shared watcher sees them.

    Args:
        plugin: a :class:`~.plugin.ClearMLPlugin` (server mode).
        project: the project name.
        statuses: the task statuses that count as ended (a subset of
            :data:`~.mapping.FINISHED_STATUSES`).
        panel: also write the report panel (debug sample and plots).

    Raises:
        InputError: no project of that name, no credentials, credentials refused or
            server unreachable (each one line).
    """

    def __init__(
        self,
        plugin,
        project: str,
        statuses: tuple[str, ...] = mapping.FINISHED_STATUSES,
        *,
        panel: bool = True,
    ) -> None:
        self.project = project
        self.statuses = tuple(statuses)
        self.panel = panel
        self.project_id = plugin.project_id(project)
        super().__init__(plugin, f"clearml {plugin.session.host} project={project}")

    def list_finished(self, since: datetime | None) -> list[tuple[str, str]]:
        """``(task id, status_changed)`` of the project's tasks that ended after ``since``,
        with or without an earlier verdict (the state file and :meth:`is_audited` decide).

        Raises:
            ServerError: the server failed the call (the watcher retries with backoff).
        """
        try:
            return self.plugin.list_finished(
                since,
                project_id=self.project_id,
                statuses=self.statuses,
                include_audited=True,
                endings=True,
            )
        except InputError as exc:
            raise ServerError(str(exc)) from None

    def endings(self, task_ids: list[str]) -> list[tuple[str, str]]:
        """``(task id, status_changed)`` of those of ``task_ids`` that are ended now.

        Raises:
            InputError: the server failed the call.
        """
        tasks = (
            call(
                self.plugin.session,
                "tasks.get_all",
                id=list(task_ids),
                status=list(self.statuses),
                only_fields=["id", "status_changed"],
            ).get("tasks")
            or []
        )
        return [(t["id"], str(t["status_changed"])) for t in tasks if t.get("status_changed")]

    def load(self, ref: str) -> RunData:
        """The task with its baselines; ``run.cache`` gets its status and ``status_changed``
        as read *before* the load (so a task reset meanwhile is audited again, never skipped).

        Raises:
            InputError: the task is gone, or a server call failed.
        """
        docs = (
            call(
                self.plugin.session,
                "tasks.get_all",
                id=[ref],
                only_fields=["id", "status", "status_changed"],
            ).get("tasks")
            or []
        )
        if not docs:
            raise InputError(f"no ClearML task {ref!r} on {self.plugin.session.host}")
        run = self.plugin.load_with_baselines(ref)
        run.cache[STATUS_CACHE] = docs[0].get("status")
        run.cache[ENDED_CACHE] = docs[0].get("status_changed")
        return run

    def write_back(self, run, report):
        return self.plugin.write_back(run, report, panel=self.panel)

    def is_audited(self, run: RunData) -> bool:
        """True when the task carries a complete verdict for the ending that was loaded: its
        ``mlaudit.ended`` property (written last) is the task's ``status_changed``."""
        if self.audited_tag not in run.tags:
            return False
        written, loaded = run.tags.get(ENDED_PROPERTY), run.cache.get(ENDED_CACHE)
        if not written or not loaded:
            return False
        a, b = mapping.parse_time(written), mapping.parse_time(loaded)
        return a == b if a is not None and b is not None else str(written) == str(loaded)

    #: Seconds between setting ``mlaudit.claim`` and reading it back (see ``claim_task``).
    claim_settle_s = 0.5

    def claim(self, run: RunData, owner: str, lease_s: float) -> str | None:
        """Take the task's lease (user property ``mlaudit.claim``) so that two watchers of one
        project do not both write and notify it; None when taken, else why not. See
        :func:`mlaudit_clearml.writeback.claim_task`."""
        from .writeback import claim_task

        return claim_task(
            self.plugin.session,
            run.identity.id,
            owner,
            lease_s=lease_s,
            settle_s=self.claim_settle_s,
            ended=run.cache.get(ENDED_CACHE),
        )

    def release_claim(self, run: RunData, owner: str) -> None:
        """Delete ``owner``'s ``mlaudit.claim`` once the verdict is written (best effort)."""
        from .writeback import release_claim

        release_claim(self.plugin.session, run.identity.id, owner)

    def skip_reason(self, run: RunData) -> str | None:
        status = run.cache.get(STATUS_CACHE)
        if status not in self.statuses:
            return f"task is {status} now, no longer ended (audited when it ends again)"
        return super().skip_reason(run)


def service_task(project: str):
    """The watcher's own ClearML task, ``mlaudit watcher: <project>`` in ``DevOps`` (type
    ``monitor``), as ClearML's monitoring services make theirs (``Task.init``; on an agent
    this attaches to the task the agent runs)."""
    from .connection import sdk

    Task = sdk().Task
    return Task.init(
        project_name=SCHEDULER_PROJECT,
        task_name=scheduler_name(project),
        task_type=Task.TaskTypes.monitor,
        reuse_last_task_id=False,
        auto_resource_monitoring=False,
        auto_connect_frameworks=False,
    )


def make_monitor(source: ClearMLWatchSource, on_task):
    """A :class:`clearml.automation.monitor.Monitor` on the source's project that calls
    ``on_task(task_id)`` for each task that reached one of ``source.statuses`` since the
    previous step.

    Only the public extension points are used (ClearML's own monitoring services, e.g.
    ``examples/services/monitoring/slack_alerts.py``, subclass it the same way):
    :meth:`~Monitor.set_projects`, :meth:`get_query_parameters` (the ``tasks.get_all``
    filter: the statuses, newest first), :meth:`process_task`, and ``monitor_step()`` (one
    poll; ``monitor()`` is the same loop without a way to stop, so the thread below calls
    ``monitor_step`` itself). The Monitor asks for tasks whose ``status_changed`` is after its
    previous step, so a task is reported once per ending; the watcher's state file and the
    task's ``mlaudit.ended`` property still decide whether it is audited.
    """
    from clearml.automation.monitor import Monitor

    class TaskEndMonitor(Monitor):
        def get_query_parameters(self) -> dict:
            return {"status": list(source.statuses), "order_by": ["-last_update"]}

        def process_task(self, task) -> None:
            on_task(task.id)

    monitor = TaskEndMonitor()
    monitor.set_projects(project_ids=[source.project_id])
    return monitor


class MonitorTrigger:
    """Run the :func:`make_monitor` Monitor in a thread, handing the tasks it reports to the
    watcher.

    Create it in the main thread (the service task's ``Task.init`` runs here), then
    :meth:`start`; :meth:`stop` ends the polling thread (waits up to ``timeout`` s for a poll
    in progress).
    """

    def __init__(self, source: ClearMLWatchSource, watcher, interval_s: float) -> None:
        self.source, self.watcher, self.interval_s = source, watcher, interval_s
        self._stop = threading.Event()
        self.task = service_task(source.project)
        self.monitor = make_monitor(source, self._on_task)
        self._thread = threading.Thread(
            target=self._run, name="mlaudit-clearml-trigger", daemon=True
        )

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:  # monitor_step catches and prints its own query errors; this is a backstop
                self.monitor.monitor_step()
            except Exception as exc:  # noqa: BLE001 - an outage; the next poll tries again
                log.warning("ClearML Monitor poll failed: %s", one_line("clearml", exc))
            self._stop.wait(self.interval_s)

    def _on_task(self, task_id: str) -> None:
        """The Monitor's ``process_task``: queue the task with its ending (``status_changed``
        as the server returns it, the same string the listing records)."""
        if self._stop.is_set():
            return
        try:
            pairs = self.source.endings([task_id])
            if pairs:
                self.watcher.submit(pairs)
        except QueueFull as exc:
            log.warning("task %s: %s; the next listing picks it up", task_id, exc)
        except Exception as exc:  # noqa: BLE001 - the listing is the safety net
            log.warning(
                "task %s: not queued by the trigger (%s); the next listing picks it up",
                task_id,
                one_line("clearml", exc),
            )


def run_with_trigger(watcher, interval_s: float) -> None:
    """Watch with the ClearML ``Monitor`` as the trigger, in this (the main) thread, until
    SIGTERM/SIGINT.

    The service task's ``Task.init`` installs its own SIGTERM handler; ``watcher.run`` then
    installs the watcher's over it, so SIGTERM stops the watcher (in-flight audits finish
    or are given back), then the Monitor's thread, and the process exits 0. If the Monitor
    cannot be created, the watcher lists the project every ``interval_s`` instead.
    """
    try:
        trigger = MonitorTrigger(watcher.source, watcher, interval_s)
    except MlauditError:
        raise
    except Exception as exc:  # noqa: BLE001 - keep watching by listing alone
        log.error(
            "the ClearML Monitor could not start (%s); listing the project every %g s instead",
            one_line("clearml", exc),
            interval_s,
        )
        watcher.cfg.poll_interval_s = interval_s
        watcher.run()
        return
    trigger.start()
    try:
        watcher.run()
    finally:
        trigger.stop()


def running_on_agent() -> bool:
    """True when this process was started by a ClearML agent (``Task.running_locally()`` is
    False). Raises MissingDependency when the clearml SDK is not installed."""
    from .connection import sdk

    return not sdk().Task.running_locally()


def enqueue(source: ClearMLWatchSource, queue: str, interval_s: float) -> None:
    """Send the watcher to a ClearML agent's ``queue`` (default ``services``) as its service
    task (``Task.init`` then ``Task.execute_remotely(queue_name=queue, exit_process=True)``,
    as ClearML's monitoring services do); this process then exits 0. On the agent the same
    command runs the shared watcher with the Monitor as its trigger.

    Raises:
        InputError: no queue of that name.
    """
    found = (
        call(source.plugin.session, "queues.get_all", name=f"^{re.escape(queue)}$").get("queues")
        or []
    )
    if not any(q.get("name") == queue for q in found):
        raise InputError(f"no ClearML queue named {queue!r}")
    log.info(
        "enqueuing the watcher of %r on queue %r as the service task %r",
        source.project,
        queue,
        scheduler_name(source.project),
    )
    service_task(source.project).execute_remotely(queue_name=queue, exit_process=True)
