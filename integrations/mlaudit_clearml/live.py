"""``ClearMLLiveSource``: what ``mlaudit watch clearml --live`` follows (ClearML REST API v2).

* Listing: one ``tasks.get_all`` per poll for the watched projects' tasks in status
  ``in_progress`` (``last_iteration``, ``last_update``, ``last_metrics``: each series' latest
  value, the monitor's fast path).
* Tail: a task whose ``last_iteration`` advanced is read with ``events.get_task_events``
  (``event_type: training_stats_scalar``, newest first, ``count_total: false``), every event
  at full fidelity (never the sampled ``scalar_metrics_iter_histogram``), down to the last
  iteration seen, so a poll reads only the new scalars. ``metrics`` (clearml-server API
  2.22+: ``[{metric, variants}]``) limits the read to the series the live detectors use (loss,
  grad norm, loss scale, throughput: :meth:`LiveRun.needed_keys`) and the resource monitor's,
  and ``batch_size`` is the expected number of new events ((new iterations + 1) x series), so
  one request per task per poll reads what is new and little else (a short page is followed
  by the next one through the scroll id). clearml-server has no events endpoint that takes
  several tasks at full fidelity (``multi_task_scalar_metrics_iter_histogram`` samples;
  ``get_task_events``, ``scalar_metrics_iter_raw`` and ``get_task_log`` take one task), so a
  poll costs one console request per task and one scalar request per task whose
  ``last_iteration`` advanced. On first sight: the newest ``FIRST_EVENTS`` events.
  The console (``events.get_task_log``) is read after the last log event's timestamp. The
  resource monitor's series (title ``:monitor:...``) are the heartbeat: they keep arriving
  while a hung process is alive.
* NaN: the ClearML SDK reports a NaN/inf scalar as ``0.0`` by default
  (``MetricsEventAdapter.default_nan_value``, ``Logger.set_reporting_nan_value``), so the
  series never holds the NaN. Its ``NaN value encountered. Reporting it as '0.0'`` line is
  logged at INFO, which the console of an online task did not carry in our tests (clearml
  2.1.12). So: a training loss or grad norm (the roles' aliases) that falls from a positive
  value to exactly ``0.0`` is read as NaN from there while it stays 0.0 (a real loss is
  never exactly 0.0 after positive values; post-hoc LI006 reads such zeros as stand-ins
  too), and when the SDK's line does appear, points equal to its announced replacement
  value from one second before the line on are NaN too; each with a note.
* Write-back while the task runs: the task's user property ``mlaudit.live`` (the open
  episodes; properties can be edited on a running task, ``tasks.edit_hyper_params`` section
  ``properties``), no artifact (artifacts belong to the running process).
* Stop (``--stop-on``): ``tasks.stop`` (the UI's Abort): clearml-server stops a development
  task (one run from a user's machine) at once, and sets ``status_message: stopping`` on
  one an agent runs, for the agent to kill; the SDK in the training process checks its
  task's status every ``development.worker.report_period_sec`` (2 s) and exits ("### TASK
  STOPPED - USER ABORTED ###") when ``development.support_stopping`` is on (the default).

Tested with the real ``clearml`` SDK reporting a task to tests/clearml_fake_server.py, which
speaks clearml-server's API with its payload shapes and status rules (no ClearML server can
run in the tests).
"""

from __future__ import annotations

import logging
import math
import re

from mlaudit_core.live.sources import RunInfo, Tail

log = logging.getLogger("mlaudit.live")

LIVE_PROPERTY = "mlaudit.live"
#: Scalar events read on first sight of a task (its newest ones: one page, about 100 iterations
#: of 10 series; the detectors need tens of points, and 100 tasks x 5,000 took over a minute).
FIRST_EVENTS = 1000
_NAN_LINE = re.compile(r"NaN value encountered\. Reporting it as '([^']+)'")
_MONITOR = ":monitor:"


_KEYS: dict[tuple[str, str], str] = {}
#: Largest page clearml-server returns (``events_retrieval.max_raw_scalars_size``).
MAX_PAGE = 10_000


def _key(ev: dict) -> str:
    mv = (ev.get("metric") or "", ev.get("variant") or "")
    key = _KEYS.get(mv)
    if key is None:
        from .mapping import metric_key

        if len(_KEYS) > 100_000:  # bounded: a task logging ever new series names
            _KEYS.clear()
        key = _KEYS[mv] = metric_key(*mv)
    return key


class ClearMLLiveSource:
    """In-progress tasks of ClearML projects (see the module docstring)."""

    tracker = "clearml"
    can_stop = True
    lists_latest_values = True

    def __init__(self, projects: list[str], session=None) -> None:
        """Raises InputError for an unknown project or refused credentials."""
        from .connection import connect

        self.session = session or connect()
        self.projects = list(projects)
        self._ids: list[str] | None = None
        self._tasks: dict[str, dict] = {}
        self._series: dict[str, dict[str, tuple[str, str]]] = {}  # task -> key -> (metric, variant)
        self.requests = 0

    def _call(self, endpoint: str, **payload):
        from .connection import call

        self.requests += 1
        return call(self.session, endpoint, **payload)

    def _project_ids(self) -> list[str]:
        if self._ids is None:
            from mlaudit_core.errors import InputError

            ids = []
            for name in self.projects:
                found = (
                    self._call(
                        "projects.get_all", name=f"^{re.escape(name)}$", only_fields=["id", "name"]
                    ).get("projects")
                    or []
                )
                exact = [p["id"] for p in found if p.get("name") == name]
                if not exact:
                    raise InputError(f"no ClearML project named {name!r}")
                ids += exact
            self._ids = ids
        return self._ids

    # -- listing ---------------------------------------------------------------------------
    def list_running(self) -> dict[str, RunInfo]:
        from .loader import task_url
        from .mapping import parse_time

        tasks = (
            self._call(
                "tasks.get_all",
                project=self._project_ids(),
                status=["in_progress"],
                only_fields=[
                    "id",
                    "name",
                    "project",
                    "last_iteration",
                    "last_update",
                    "last_metrics",
                    "status",
                ],
            ).get("tasks")
            or []
        )
        out = {}
        for t in tasks:
            upd = parse_time(t.get("last_update"))
            wall = upd.timestamp() if upd else None
            it = int(t.get("last_iteration") or 0)
            latest, values, maxima, series = {}, {}, {}, {}
            for variants in (t.get("last_metrics") or {}).values():
                for lm in (variants or {}).values():
                    key = _key(lm)
                    series[key] = (lm.get("metric") or "", lm.get("variant") or "")
                    v = lm.get("value")
                    if wall is None or not isinstance(v, (int, float)) or key.startswith(_MONITOR):
                        continue
                    latest[key], values[key] = (it, wall), float(v)
                    if isinstance(lm.get("max_value"), (int, float)):
                        maxima[key] = float(lm["max_value"])
            self._standin_latest(values, maxima)
            self._tasks[t["id"]] = t
            self._series[t["id"]] = series
            out[t["id"]] = RunInfo(
                ref=t["id"],
                name=t.get("name") or t["id"],
                url=task_url(self.session, t),
                project=", ".join(self.projects),
                latest=latest,
                values=values,
            )
        return out

    @staticmethod
    def _standin_latest(values: dict[str, float], maxima: dict[str, float]) -> None:
        """The fast path's view of the SDK's NaN stand-in: a training loss or grad norm whose
        latest value is exactly 0.0 while its maximum so far is positive is NaN (as
        :meth:`_standins` reads the tail)."""
        from mlaudit_core.roles import AliasTable, Role

        table = AliasTable()
        for role in (Role.TRAIN_LOSS, Role.GRAD_NORM):
            key = table.resolve(role, list(values))
            if key is not None and values[key] == 0.0 and maxima.get(key, 0.0) > 0:
                values[key] = math.nan

    def status(self, ref: str) -> str:
        from mlaudit_core.errors import InputError

        try:
            t = self._call("tasks.get_all", id=[ref], only_fields=["id", "status"]).get("tasks")
        except InputError:
            return "gone"
        if not t:
            return "gone"
        return "running" if t[0].get("status") in ("in_progress", "queued") else "ended"

    # -- reading ---------------------------------------------------------------------------
    def read(
        self,
        infos: list[RunInfo],
        cursors: dict[str, dict],
        keys: dict[str, set[str]] | None = None,
    ) -> dict[str, Tail]:
        tails: dict[str, Tail] = {}
        for info in infos:
            tail = tails[info.ref] = Tail()
            cur = cursors.setdefault(info.ref, {})
            task = self._tasks.get(info.ref) or {}
            try:
                self._console(info.ref, cur, tail)
                last = int(task.get("last_iteration") or 0)
                seen = cur.get("iter")
                if seen is None or last > seen or cur.get("sys_pending"):
                    self._scalars(
                        info.ref, cur, tail, None if keys is None else keys.get(info.ref), last
                    )
            except Exception as exc:  # noqa: BLE001 - the cursor stays: read at the next poll
                log.warning("reading task %s failed (%s); retried at the next poll", info.ref, exc)
                tails[info.ref] = Tail()
                continue
            self._restore_nan(tail, cur)
        return tails

    def _filter(self, task: str, only: set[str] | None) -> list[dict] | None:
        """``metrics`` of the request: the wanted keys' series and the monitor's, grouped by
        title; None (every series) when a wanted key is not in the listing's ``last_metrics``."""
        series = self._series.get(task) or {}
        if only is None or not series or any(k not in series for k in only):
            return None
        by_metric: dict[str, list[str]] = {}
        for key, (metric, variant) in series.items():
            if key in only or key.startswith(_MONITOR):
                by_metric.setdefault(metric, []).append(variant)
        return [{"metric": m, "variants": sorted(v)} for m, v in sorted(by_metric.items())]

    def _scalars(
        self, task: str, cur: dict, tail: Tail, only: set[str] | None, last: int | None = None
    ) -> None:
        seen = cur.get("iter")
        got: list[dict] = []
        scroll = None
        metrics = self._filter(task, only)
        n_series = (
            sum(len(m["variants"]) for m in metrics)
            if metrics is not None
            else max(1, len(self._series.get(task) or {}))
        )
        if seen is None or last is None:
            batch = FIRST_EVENTS
        else:  # the new iterations' events and one more iteration: the page ends below `seen`
            batch = min(MAX_PAGE, max(n_series, (max(0, last - seen) + 1) * n_series))
        if metrics == [] and last is not None:  # no series the detectors read: nothing to fetch
            cur["iter"] = last
            return
        while True:
            payload = {
                "task": task,
                "event_type": "training_stats_scalar",
                "order": "desc",
                "batch_size": batch,
                "count_total": False,
            }
            if metrics is not None:
                payload["metrics"] = metrics
            if scroll:
                payload["scroll_id"] = scroll
            data = self._call("events.get_task_events", **payload)
            page = data.get("events") or []
            got += page
            scroll = data.get("scroll_id")
            if not page or not scroll:
                break
            low = min(int(e.get("iter") or 0) for e in page)
            if (seen is not None and low <= seen) or (seen is None and len(got) >= FIRST_EVENTS):
                break
            batch = min(MAX_PAGE, 2 * batch)  # more than expected: larger pages from here
        if seen is None and len(got) >= FIRST_EVENTS:
            tail.notes.append(f"first sight: the newest {len(got)} scalar events")
        pts: dict[str, list[tuple[int, float, float]]] = {}
        top = seen if seen is not None else -1
        for e in got:
            it = int(e.get("iter") or 0)
            if seen is not None and it <= seen:
                continue
            key = _key(e)
            v = e.get("value")
            if not isinstance(v, (int, float)):
                continue
            ts = float(e.get("timestamp") or 0) / 1000.0
            if key.startswith(_MONITOR):  # the resource monitor: the heartbeat
                tail.system_wall = max(tail.system_wall or 0.0, ts)
                continue
            if only is not None and key not in only:
                continue
            pts.setdefault(key, []).append((it, ts, float(v)))
            top = max(top, it)
        for key, p in pts.items():
            p.sort()
            tail.points[key] = ([x[0] for x in p], [x[1] for x in p], [x[2] for x in p])
        self._standins(tail, cur)
        if top >= 0:
            cur["iter"] = top

    @staticmethod
    def _standins(tail: Tail, cur: dict) -> None:
        """A training loss or grad norm that falls from a positive value to exactly ``0.0`` is
        the SDK's NaN/inf stand-in (see the module docstring): those points become NaN again,
        with a note. Other keys (an LR schedule ending at 0) are left alone."""
        from mlaudit_core.roles import AliasTable, Role

        table = AliasTable()
        keys = list(tail.points)
        wanted = {table.resolve(Role.TRAIN_LOSS, keys), table.resolve(Role.GRAD_NORM, keys)}
        state = cur.setdefault("standin", {})
        for key in wanted - {None}:
            s, w, v = tail.points[key]
            prev, run = state.get(key, [None, False])
            nv = list(v)
            n = 0
            for i, x in enumerate(nv):
                if x == 0.0 and (run or (prev is not None and prev > 0)):
                    nv[i], run = math.nan, True
                    n += 1
                else:
                    prev, run = x, False
            state[key] = [prev, run]
            if n:
                tail.points[key] = (s, w, nv)
                tail.notes.append(
                    f"{key}: {n} point(s) of exactly 0.0 after positive values read "
                    "as NaN (the ClearML SDK reports NaN/inf as 0.0 by default)"
                )

    def _console(self, task: str, cur: dict, tail: Tail) -> None:
        last_ts = cur.get("log_ts")
        n0 = int(cur.get("log_lines") or 0)
        if last_ts is None:  # first sight: the newest lines only
            page = (
                self._call(
                    "events.get_task_log",
                    task=task,
                    batch_size=100,
                    navigate_earlier=True,
                    order="asc",
                ).get("events")
                or []
            )
        else:
            page = (
                self._call(
                    "events.get_task_log",
                    task=task,
                    batch_size=1000,
                    navigate_earlier=False,
                    from_timestamp=last_ts,
                    order="asc",
                ).get("events")
                or []
            )
        lines = 0
        for ev in page:
            ts = ev.get("timestamp")
            for text in str(ev.get("msg") or "").splitlines():
                lines += 1
                tail.console.append(("console", n0 + lines, text))
                m = _NAN_LINE.search(text)
                if m and isinstance(ts, (int, float)):
                    cur.setdefault("nan_marks", []).append([float(ts) / 1000.0, m.group(1)])
            if isinstance(ts, (int, float)):
                last_ts = max(last_ts or 0, ts)
        cur["log_ts"] = last_ts if last_ts is not None else 0
        cur["log_lines"] = n0 + lines

    @staticmethod
    def _restore_nan(tail: Tail, cur: dict) -> None:
        """Points equal to the SDK's NaN replacement value, reported from 1 s before its
        warning line on, become NaN again (see the module docstring)."""
        marks = cur.get("nan_marks") or []
        if not marks:
            return
        since = min(m[0] for m in marks) - 1.0
        try:
            repl = {float(m[1]) for m in marks}
        except ValueError:
            return
        n = 0
        for key, (s, w, v) in tail.points.items():
            nv = list(v)
            for i, x in enumerate(nv):
                if x in repl and w[i] is not None and w[i] >= since:
                    nv[i] = math.nan
                    n += 1
            tail.points[key] = (s, w, nv)
        if n:
            tail.notes.append(
                f"{n} point(s) equal to the ClearML SDK's NaN replacement value "
                f"{sorted(repl)} read as NaN (its console warned 'NaN value "
                "encountered')"
            )

    # -- writing ---------------------------------------------------------------------------
    def write_live(self, ref: str, tag: str, doc: dict) -> None:
        """The user property ``mlaudit.live`` (section ``properties``: editable while running)."""
        self._call(
            "tasks.edit_hyper_params",
            task=ref,
            replace_hyperparams="none",
            hyperparams=[
                {
                    "section": "properties",
                    "name": LIVE_PROPERTY,
                    "value": tag[:1000],
                    "type": "str",
                    "description": "mlaudit live triage (open episodes)",
                }
            ],
        )

    def end_live(self, ref: str) -> None:
        try:
            self.write_live(ref, "superseded: the task ended; see the mlaudit verdict", {})
        except Exception as exc:  # noqa: BLE001 - cosmetic
            log.info("task %s: live property not updated: %s", ref, exc)

    def request_stop(self, ref: str, message: str) -> str:
        data = self._call(
            "tasks.stop",
            task=ref,
            force=False,
            status_reason="mlaudit live",
            status_message=message[:200],
        )
        status = ((data or {}).get("fields") or {}).get("status")
        if status == "stopped":
            return "task aborted (tasks.stop: status stopped; the SDK ends the process)"
        return (
            "abort requested (tasks.stop: status_message 'stopping'; the agent running the "
            "task kills it)"
        )
