"""Metric histories from an MLflow tracking *server*, concurrently, at full fidelity.

``MlflowClient.get_metric_history`` asks for one key at a time, one page after the other,
and turns every point into a protobuf message and then a ``Metric`` entity. On 200,000
points through a local ``mlflow server`` that client-side parsing was about two thirds of
the time (``benchmarks/ingest.py``). Here:

* **Same requests, same credentials.** Every request goes through MLflow's own
  :func:`mlflow.utils.rest_utils.http_request` with the client's ``MlflowHostCreds``
  (basic auth, bearer token, client certificate, auth plugins, request-header plugins,
  retries, ``MLFLOW_HTTP_REQUEST_TIMEOUT``, which mlaudit sets from
  ``MLAUDIT_TRACKER_TIMEOUT``) and MLflow's keep-alive ``requests.Session`` pool.
* **Keys in parallel, pages in order.** Keys are fetched by a process-wide pool of
  :func:`concurrency` threads (bounded, whatever the number of runs loading at once);
  each key pages ``/api/2.0/mlflow/metrics/get-history`` with ``max_results`` =
  :data:`PAGE_SIZE` and the server's ``next_page_token`` until there is none (a server
  that ignores ``max_results``, MLflow 2.x, answers in one page).
* **A bulk endpoint only at full fidelity.** ``/ajax-api/2.0/mlflow/metrics/get-history-bulk``
  (MLflow 2.x and 3.x; what the UI's charts read) returns a key's raw points serialised
  without protobuf, but at most :data:`PAGE_SIZE` of them and without paging: an answer
  shorter than that is the whole series, a full one may be cut and the key is read again
  through ``get-history`` (a key whose latest step is past a page goes there directly).
  ``get-history-bulk-interval`` (sampled to a few hundred points
  per key, which hides spikes) is never used. A server without the bulk endpoint (404,
  405, 501: Databricks, proxies that expose only ``/api``) is remembered and asked only
  through ``get-history`` from then on.
* JSON is parsed with the standard library straight into arrays; ``"NaN"``,
  ``"Infinity"`` strings (protobuf JSON) and ``NaN`` literals (the bulk endpoint) both
  become floats; MLflow's +-max float64 stand-ins for +-inf are restored by the loader.

Why not the client: it is the same endpoint; the protobuf/entity round trip per point is
what cost the time, and it has no concurrency.
"""

from __future__ import annotations

import json
import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from operator import itemgetter

import numpy as np

from mlaudit_core.errors import InputError
from mlaudit_core.sdk_private import mlflow_host_creds, mlflow_store

#: Points per request. MLflow's own page size and the bulk endpoint's cap are 25,000
#: (``GET_METRIC_HISTORY_MAX_RESULTS``, ``MAX_HISTORY_RESULTS``); a 25,000-point page took
#: more than the 10 s read timeout (``MLAUDIT_TRACKER_TIMEOUT``) on a loaded 2-core machine
#: with four requests in flight, 10,000 stays within it.
PAGE_SIZE = 10_000
HISTORY = "/api/2.0/mlflow/metrics/get-history"
BULK = "/ajax-api/2.0/mlflow/metrics/get-history-bulk"
CONCURRENCY_ENV = "MLAUDIT_FETCH_CONCURRENCY"
#: Concurrent history requests per process. 4: on a 2-worker ``mlflow server`` (2 cores) 2
#: and 4 threads were within 15% of each other and both well ahead of 1 (benchmarks/ingest.py);
#: more only queues on the server.
DEFAULT_CONCURRENCY = 4
_NO_BULK_STATUS = (404, 405, 501)

_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None
_pool_pid: int | None = None
_no_bulk: set[str] = set()


def concurrency() -> int:
    """Concurrent history requests (:data:`CONCURRENCY_ENV`, 1..32, default 4).

    Raises:
        InputError: the variable is not a whole number from 1 to 32.
    """
    raw = os.environ.get(CONCURRENCY_ENV, "").strip()
    if not raw:
        return DEFAULT_CONCURRENCY
    if not raw.isdigit() or not 1 <= int(raw) <= 32:
        raise InputError(f"{CONCURRENCY_ENV}={raw!r}: expected a whole number from 1 to 32")
    return int(raw)


def pool() -> ThreadPoolExecutor:
    """The process-wide fetch pool (a new one after a fork: threads do not survive it)."""
    global _pool, _pool_pid
    with _lock:
        if _pool is None or _pool_pid != os.getpid():
            _pool = ThreadPoolExecutor(
                max_workers=concurrency(), thread_name_prefix="mlaudit-fetch"
            )
            _pool_pid = os.getpid()
        return _pool


def host_creds(client, uri: str):
    """The ``MlflowHostCreds`` the client's REST store uses, or None (not a REST store)."""
    store = mlflow_store(client)
    getter = getattr(store, "get_host_creds", None)
    if callable(getter):
        return getter()
    return mlflow_host_creds(uri)


def _request(creds, endpoint: str, params: dict):
    from mlflow.utils.rest_utils import http_request

    return http_request(creds, endpoint, "GET", params=params)


def _columns(points: list[dict]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(steps int64, values float64, timestamps ms float64), sorted by (timestamp, step)."""
    n = len(points)
    steps = np.fromiter((int(p.get("step", 0)) for p in points), np.int64, n)
    values = np.fromiter(map(float, map(itemgetter("value"), points)), np.float64, n)
    ts = np.fromiter((float(p.get("timestamp", 0)) for p in points), np.float64, n)
    if n > 1 and not (np.all(np.diff(ts) >= 0)):
        order = np.lexsort((steps, ts))
        steps, values, ts = steps[order], values[order], ts[order]
    return steps, values, ts


def _paged(creds, run_id: str, key: str) -> list[dict]:
    from mlflow.utils.rest_utils import verify_rest_response

    out: list[dict] = []
    token = None
    while True:
        params = {"run_id": run_id, "metric_key": key, "max_results": PAGE_SIZE}
        if token:
            params["page_token"] = token
        resp = _request(creds, HISTORY, params)
        verify_rest_response(resp, HISTORY)
        body = json.loads(resp.content or b"{}")
        out += body.get("metrics", [])
        nxt = body.get("next_page_token")
        if not nxt or nxt == token:
            return out
        token = nxt


def fetch_key(
    creds, uri: str, run_id: str, key: str, last_step: int | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every point of one key: (steps, values, timestamps in ms), by (timestamp, step).

    ``last_step``: the step of the key's latest point (``Run.data``), a hint of its length:
    a key whose last step is :data:`PAGE_SIZE` or more goes straight to ``get-history``
    (the bulk endpoint would answer a full, possibly cut, page that is then read again).

    Raises:
        MlflowException: the server refused the request (no such run, no permission...).
        requests exceptions: the server is unreachable (after MLflow's retries).
    """
    if uri not in _no_bulk and (last_step is None or last_step < PAGE_SIZE):
        resp = _request(
            creds, BULK, {"run_id": run_id, "metric_key": key, "max_results": PAGE_SIZE}
        )
        if resp.status_code in _NO_BULK_STATUS:
            _no_bulk.add(uri)
        elif resp.status_code == 200:
            try:
                points = json.loads(resp.content or b"{}").get("metrics", [])
            except ValueError:  # not MLflow's JSON (a proxy's page): use the REST API
                _no_bulk.add(uri)
                points = None
            if points is not None and len(points) < PAGE_SIZE:
                try:
                    return _columns(points)
                except (TypeError, ValueError):  # a value that is no number: the bulk endpoint
                    pass  # passes a damaged row through, get-history reports the server's error
        # a full answer may be cut, any other refusal is reported by get-history itself
    return _columns(_paged(creds, run_id, key))


def submit(fn, *args) -> Future:
    """``fn(*args)`` on :func:`pool`, or right here when no new thread may start.

    At interpreter shutdown (an ``atexit`` audit of a script that crashed: the in-process hooks)
    ``concurrent.futures`` refuses new work ("cannot schedule new futures after interpreter
    shutdown"); the call then runs in the calling thread and its result (or exception) is
    returned as a finished future.
    """
    try:
        return pool().submit(fn, *args)
    except RuntimeError:
        done: Future = Future()
        try:
            done.set_result(fn(*args))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller through the future
            done.set_exception(exc)
        return done


def fetch_all(
    client, uri: str, run_id: str, keys: list[str], last_steps: dict[str, int] | None = None
) -> list[tuple[str, tuple]]:
    """Every key of ``keys`` fetched on :func:`pool`; ``[(key, (steps, values, ts_ms))]`` in
    ``keys`` order (``last_steps``: see :func:`fetch_key`). The first failure is raised after
    the others finished."""
    creds = host_creds(client, uri)
    if creds is None:
        raise RuntimeError("no REST host credentials")
    hint = last_steps or {}
    futures: list[tuple[str, Future]] = [
        (k, submit(fetch_key, creds, uri, run_id, k, hint.get(k))) for k in keys
    ]
    out, first = [], None
    for k, f in futures:
        try:
            out.append((k, f.result()))
        except BaseException as exc:  # noqa: BLE001 - re-raised below, after every key settled
            first = first or exc
    if first is not None:
        raise first
    return out


#: Run ids per ``get-history-bulk`` request (MLflow's own limit is 100).
BULK_RUNS = 100


def _bulk_runs(creds, run_ids: list[str], key: str) -> tuple[dict[str, list[dict]], set[str]]:
    """One ``get-history-bulk`` request for ``key`` of several runs.

    Returns ({run_id: points} of the runs answered whole, run ids to read alone). The server
    sorts the answer by run id and cuts it at ``max_results`` points in all: when it is
    full, every run before the last run id in it is whole and the rest are read alone.

    Raises:
        LookupError: no bulk endpoint on this server (remembered like in :func:`fetch_key`).
        MlflowException / requests exceptions: any other refusal (the caller reads each run
            alone, so the error lands on the run it belongs to).
    """
    from mlflow.utils.rest_utils import verify_rest_response

    resp = _request(creds, BULK, {"run_id": run_ids, "metric_key": key, "max_results": PAGE_SIZE})
    if resp.status_code in _NO_BULK_STATUS:
        raise LookupError(BULK)
    verify_rest_response(resp, BULK)
    points = json.loads(resp.content or b"{}").get("metrics", [])
    by_run: dict[str, list[dict]] = {rid: [] for rid in run_ids}
    for p in points:
        by_run.setdefault(p.get("run_id"), []).append(p)
    if len(points) < PAGE_SIZE:
        return {rid: by_run[rid] for rid in run_ids}, set()
    last = points[-1].get("run_id")
    whole = {rid: by_run[rid] for rid in run_ids if rid < last}
    return whole, {rid for rid in run_ids if rid not in whole}


def fetch_many(
    client, uri: str, wanted: dict[str, dict[str, int | None]]
) -> dict[str, list[tuple[str, tuple]] | Exception]:
    """Histories of several runs of one server: ``wanted`` maps run id -> {key: latest step or
    None}; returns run id -> ``[(key, (steps, values, ts_ms))]`` in ``wanted[run]`` key order,
    or the exception that run's own read raised.

    Each key is asked for many runs at once through ``get-history-bulk`` (full fidelity,
    never the interval-sampled endpoint): runs are grouped so that their latest steps (a
    hint of the point counts) add up to at most half a page, at most :data:`BULK_RUNS` per
    request; a key whose latest step is past half a page, a run cut from a full answer, and
    every run of a request the server refused are read alone with :func:`fetch_key`.
    Requests run on :func:`pool`.
    """
    creds = host_creds(client, uri)
    if creds is None:
        raise RuntimeError("no REST host credentials")
    by_key: dict[str, list[str]] = {}
    alone: list[tuple[str, str]] = []
    for rid, keys in wanted.items():
        for k, last in keys.items():
            if uri in _no_bulk or last is None or last >= PAGE_SIZE // 2:
                alone.append((rid, k))
            else:
                by_key.setdefault(k, []).append(rid)
    groups: list[tuple[str, list[str]]] = []
    for k, rids in by_key.items():
        group: list[str] = []
        budget = 0
        for rid in sorted(rids):
            need = wanted[rid][k] + 1
            if group and (budget + need > PAGE_SIZE // 2 or len(group) >= BULK_RUNS):
                groups.append((k, group))
                group, budget = [], 0
            group.append(rid)
            budget += need
        if group:
            groups.append((k, group))
    got: dict[tuple[str, str], tuple | BaseException] = {}
    futures = [(k, g, submit(_bulk_runs, creds, g, k)) for k, g in groups]
    for k, g, fut in futures:
        try:
            whole, rest = fut.result()
        except LookupError:
            _no_bulk.add(uri)
            whole, rest = {}, set(g)
        except Exception:  # noqa: BLE001 - each run read alone says whose data was refused
            whole, rest = {}, set(g)
        for rid, points in whole.items():
            try:
                got[(rid, k)] = _columns(points)
            except (TypeError, ValueError):  # a damaged value: the run's own get-history reports it
                rest.add(rid)
        alone += [(rid, k) for rid in rest]
    single = [(rid, k, submit(fetch_key, creds, uri, rid, k, wanted[rid][k])) for rid, k in alone]
    for rid, k, fut in single:
        try:
            got[(rid, k)] = fut.result()
        except BaseException as exc:  # noqa: BLE001 - that run's result
            got[(rid, k)] = exc
    out: dict[str, list[tuple[str, tuple]] | Exception] = {}
    for rid, keys in wanted.items():
        errors = [got[(rid, k)] for k in keys if isinstance(got[(rid, k)], BaseException)]
        out[rid] = errors[0] if errors else [(k, got[(rid, k)]) for k in keys]
    return out
