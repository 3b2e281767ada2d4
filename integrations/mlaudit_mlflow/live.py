"""``MlflowLiveSource``: what ``mlaudit watch mlflow --live`` follows (the shapes it
returns are in ``mlaudit_core/live/sources.py``).

RUNNING runs of the watched experiments (one ``search_runs`` per 1,000 runs, which also
carries every key's latest step and time: a key that did not advance costs no request); new
points of the keys that advanced, read with MLflow's ``get-history-bulk-interval`` (up to 100
runs per request, one request per metric key, the step range starting at the last point
seen). For a database URI the same query runs in-process through MLflow's SQL store.
``system/*`` keys are the heartbeat (their latest time only; never their history).
"""

from __future__ import annotations

import logging
import math

from mlaudit_core.live.detectors import is_system_key
from mlaudit_core.live.sources import LIVE_ARTIFACT, LIVE_TAG, STOP_TAG, RunInfo, Tail
from mlaudit_core.sdk_private import mlflow_metric_objs, mlflow_store

log = logging.getLogger("mlaudit.live")

#: MLflow's server limits for get-history-bulk-interval (mlflow/server/handlers.py:
#: MAX_RUNS_GET_METRIC_HISTORY_BULK, MAX_RESULTS_PER_RUN); a range holding more rows than
#: this for one run comes back evenly sampled.
MLFLOW_MAX_RUNS = 100
MLFLOW_MAX_ROWS = 2500
#: Runs per tail request (below the server's 100): shorter requests keep the fast-path listing
#: from queueing behind one long request on a busy server.
MLFLOW_TAIL_RUNS = 20
#: First sight of a run: an even sample of each detector key's whole history, this many runs
#: and rows per request (the server samples with window functions over the whole history;
#: 100 runs in one request took over 10 s on a loaded 2-core machine, 10 stay well under).
MLFLOW_ATTACH_RUNS = 10
MLFLOW_ATTACH_ROWS = 1000
_MAXF = 1.7976931348623157e308


def _restore(v) -> float:
    x = float(v)
    if math.isfinite(x) and abs(x) >= _MAXF:  # MLflow stores +-inf as +-max float64
        return math.copysign(math.inf, x)
    return x


class MlflowLiveSource:
    """RUNNING runs of MLflow experiments (see the module docstring)."""

    tracker = "mlflow"
    can_stop = False  # MLflow has no remote stop: the hooks honour the stop_requested tag
    lists_latest_values = True  # search_runs carries each key's latest value, step and time
    #: said in a stall alert instead of the last console lines
    no_console = (
        "MLflow records no console output for a run (its tracking API has no log "
        "stream; a script's stdout never reaches the server), so no last console "
        "lines can be shown"
    )

    def __init__(
        self, tracking_uri: str | None, experiment_ids: list[str] | None, resolve=None
    ) -> None:
        """``experiment_ids``: the experiments to follow; None with ``resolve`` (a callable
        returning them, retried at each listing until it answers), or None alone for every
        experiment."""
        from mlaudit_mlflow.loader import client_for, is_db_uri, resolve_uri

        self.uri = resolve_uri(tracking_uri)
        self.client = client_for(tracking_uri)
        self.experiment_ids = experiment_ids
        self._resolve_ids = resolve
        self._db = is_db_uri(self.uri)
        self._http = self.uri.startswith(("http://", "https://"))
        self._exp_names: dict[str, str] = {}
        self.requests = 0
        self.failures = 0  # tail requests that failed (the poll goes on without them)

    # -- listing ---------------------------------------------------------------------------
    def list_running(self) -> dict[str, RunInfo]:
        if self.experiment_ids is None and self._resolve_ids is not None:
            self.experiment_ids = list(self._resolve_ids())
        ids = self.experiment_ids or [e.experiment_id for e in self.client.search_experiments()]
        out: dict[str, RunInfo] = {}
        token = None
        while True:
            page = self.client.search_runs(
                ids,
                filter_string="attributes.status = 'RUNNING'",
                max_results=1000,
                page_token=token,
            )
            self.requests += 1
            for r in page:
                objs = mlflow_metric_objs(r.data) or []
                latest = {m.key: (int(m.step), m.timestamp / 1000.0) for m in objs}
                out[r.info.run_id] = RunInfo(
                    values={m.key: _restore(m.value) for m in objs},
                    ref=r.info.run_id,
                    name=r.info.run_name or "",
                    url=self._url(r.info.experiment_id, r.info.run_id),
                    project=self._exp_name(r.info.experiment_id),
                    latest=latest,
                    tags=dict(r.data.tags),
                )
            token = page.token
            if not token:
                return out

    def _exp_name(self, exp_id: str) -> str:
        if exp_id not in self._exp_names:
            try:
                self._exp_names[exp_id] = self.client.get_experiment(exp_id).name
            except Exception:  # noqa: BLE001 - a name is cosmetic
                self._exp_names[exp_id] = exp_id
        return self._exp_names[exp_id]

    def _url(self, exp_id: str, run_id: str) -> str | None:
        if not self._http:
            return None
        return f"{self.uri.rstrip('/')}/#/experiments/{exp_id}/runs/{run_id}"

    def status(self, ref: str) -> str:
        """``running``, ``ended`` or ``gone`` (deleted or not found)."""
        try:
            r = self.client.get_run(ref)
        except Exception as exc:  # noqa: BLE001
            if "RESOURCE_DOES_NOT_EXIST" in str(exc) or "not found" in str(exc).lower():
                return "gone"
            raise
        if r.info.lifecycle_stage == "deleted":
            return "gone"
        return "running" if r.info.status in ("RUNNING", "SCHEDULED") else "ended"

    # -- reading ---------------------------------------------------------------------------
    def read(
        self,
        infos: list[RunInfo],
        cursors: dict[str, dict],
        keys: dict[str, set[str]] | None = None,
    ) -> dict[str, Tail]:
        """New points of every run; advances ``cursors[ref][key] = [step, wall]`` in place.

        ``keys[ref]``: read only these training keys of that run (the detectors' inputs);
        None reads every key. System keys are never read (their latest time is the heartbeat).
        """
        tails = {i.ref: Tail() for i in infos}
        want: dict[str, list[tuple[str, int | None, int]]] = {}
        for info in infos:
            cur = cursors.setdefault(info.ref, {})
            only = None if keys is None else keys.get(info.ref)
            for key, (step, wall) in info.latest.items():
                if is_system_key(key):
                    t = tails[info.ref]
                    t.system_wall = max(t.system_wall or 0.0, wall)
                    continue
                if only is not None and key not in only:
                    continue
                seen = cur.get(key)
                if seen is not None and (step, wall) <= (seen[0], seen[1]):
                    continue  # nothing new for this key: no request
                want.setdefault(key, []).append((info.ref, None if seen is None else seen[0], step))
        for key, items in want.items():
            first = [(r, e) for r, s, e in items if s is None]
            ranged = sorted(((r, s, e) for r, s, e in items if s is not None), key=lambda x: x[1])
            for i in range(0, len(first), MLFLOW_ATTACH_RUNS):  # first sight: a sampled summary
                chunk = first[i : i + MLFLOW_ATTACH_RUNS]
                self._fetch(key, [r for r, _ in chunk], None, None, tails, cursors)
            group: list[tuple[str, int, int]] = []
            for item in ranged:
                if group and (
                    len(group) >= MLFLOW_TAIL_RUNS or item[1] - group[0][1] > MLFLOW_MAX_ROWS
                ):
                    self._fetch(
                        key,
                        [g[0] for g in group],
                        group[0][1],
                        max(g[2] for g in group),
                        tails,
                        cursors,
                    )
                    group = []
                group.append(item)
            if group:
                self._fetch(
                    key,
                    [g[0] for g in group],
                    group[0][1],
                    max(g[2] for g in group),
                    tails,
                    cursors,
                )
        return tails

    def _fetch(
        self,
        key: str,
        refs: list[str],
        start: int | None,
        end: int | None,
        tails: dict[str, Tail],
        cursors: dict[str, dict],
    ) -> None:
        try:
            rows = self._history(key, refs, start, end)
        except Exception as exc:  # noqa: BLE001 - these runs' cursors stay: read at the next poll
            self.failures += 1
            if self.failures == 1 or self.failures % 100 == 0:
                log.warning(
                    "reading %s of %d run(s) failed (%s); retried at the next poll "
                    "(%d such failure(s) so far)",
                    key,
                    len(refs),
                    type(exc).__name__,
                    self.failures,
                )
            return
        by_run: dict[str, list[tuple[int, float, float]]] = {}
        for run_id, step, ts, value in rows:
            by_run.setdefault(run_id, []).append((step, ts, value))
        for ref, pts in by_run.items():
            pts.sort()
            seen = cursors[ref].get(key)
            if seen is not None:
                pts = [p for p in pts if (p[0], p[1]) > (seen[0], seen[1])]
            if seen is not None and len(by_run[ref]) >= MLFLOW_MAX_ROWS:
                tails[ref].notes.append(
                    f"{key}: {len(by_run[ref])} new points in one poll; "
                    "MLflow returned an even sample of them"
                )
            if not pts:
                continue
            t = tails[ref]
            t.points[key] = ([p[0] for p in pts], [p[1] for p in pts], [p[2] for p in pts])
            cursors[ref][key] = [pts[-1][0], pts[-1][1]]

    def _history(
        self, key: str, refs: list[str], start, end
    ) -> list[tuple[str, int, float, float]]:
        self.requests += 1
        if self._http:
            from mlflow.utils.rest_utils import http_request

            params = {
                "run_ids": refs,
                "metric_key": key,
                "max_results": MLFLOW_MAX_ROWS if start is not None else MLFLOW_ATTACH_ROWS,
            }
            if start is not None:
                params.update(start_step=start, end_step=max(end, start))
            store = mlflow_store(self.client)
            resp = http_request(
                store.get_host_creds(),
                "/ajax-api/2.0/mlflow/metrics/get-history-bulk-interval",
                "GET",
                params=params,
            )
            resp.raise_for_status()
            return [
                (
                    m["run_id"],
                    int(m.get("step", 0)),
                    int(m.get("timestamp", 0)) / 1000.0,
                    _restore(m.get("value", 0.0)),
                )
                for m in resp.json().get("metrics", [])
            ]
        store = mlflow_store(self.client)
        if self._db:
            got = store.get_metric_history_bulk_interval(
                run_ids=refs,
                metric_key=key,
                max_results=MLFLOW_MAX_ROWS if start is not None else MLFLOW_ATTACH_ROWS,
                start_step=start,
                end_step=None if start is None else max(end, start),
            )
            return [(m.run_id, int(m.step), m.timestamp / 1000.0, _restore(m.value)) for m in got]
        out = []  # a file store: the full history of the key (no range query exists)
        for ref in refs:
            for m in self.client.get_metric_history(ref, key):
                if start is None or start <= m.step <= end:
                    out.append((ref, int(m.step), m.timestamp / 1000.0, _restore(m.value)))
        return out

    # -- writing ---------------------------------------------------------------------------
    def write_live(self, ref: str, tag: str, doc: dict) -> None:
        import json

        self.client.log_text(ref, json.dumps(doc, indent=1, default=str), LIVE_ARTIFACT)
        self.client.set_tag(ref, LIVE_TAG, tag[:5000])

    def end_live(self, ref: str) -> None:
        """The run ended: the post-hoc verdict supersedes the live tag."""
        self.client.set_tag(
            ref,
            LIVE_TAG,
            "superseded: the run ended; see mlaudit.verdict (live history in mlaudit/live.json)",
        )

    def request_stop(self, ref: str, message: str) -> str:
        self.client.set_tag(ref, STOP_TAG, message[:5000])
        return f"tag {STOP_TAG} set (mlaudit.hooks callbacks stop the run at their next step)"
