"""Load an MLflow run into RunData at full fidelity.

Two paths for metric histories:

* **Database URIs** (``sqlite:///``, ``postgresql://``, ``mysql://``...): one bulk
  query over MLflow's own ``SqlMetric`` model (the ``metrics`` table), ordered by
  key, timestamp and step. ``MlflowClient.get_metric_history`` pages per key and
  builds an entity object per point; on 500,000 points it took 16 s here against
  1.7 s for the bulk query (see ``benchmarks/ingest.py``).
* **Servers** (``http(s)://``): the REST API directly, keys in parallel on a bounded pool,
  through MLflow's own request function and credentials (:mod:`.rest_history`): 4x less
  client CPU than ``MlflowClient.get_metric_history``; the wall-time gain is bounded by the
  server's own CPU per point (1.2-2.0x with the server on the same 2 cores, benchmarks/README.md).
* **File stores**: ``MlflowClient.get_metric_history`` per key.

NaN is stored by MLflow as ``value=0, is_nan=1`` and +-inf as +-max float64; both
are restored. Console output is read from a text artifact when one was logged
(``*.log``, ``*.txt`` named like stdout/console/output), capped at
``CONSOLE_MAX_BYTES`` from the end of the file.
"""

from __future__ import annotations

import logging
import os
import threading
from datetime import datetime, timezone
from operator import itemgetter
from pathlib import Path

import numpy as np

from mlaudit_core.errors import InputError, TrackerUnavailable
from mlaudit_core.plugins import require
from mlaudit_core.rundata import (
    Artifact,
    ConsoleLine,
    MetricTable,
    RunData,
    RunIdentity,
    RunStatus,
    Series,
)
from mlaudit_core.sdk_private import mlflow_metric_objs, mlflow_sql_metric_model
from mlaudit_core.signal import clip

CONSOLE_MAX_BYTES = 50 * 1024 * 1024
_MAXF = 1.7976931348623157e308
_DB_SCHEMES = ("sqlite", "postgresql", "mysql", "mssql")
_STATUS = {
    "FINISHED": RunStatus.FINISHED,
    "FAILED": RunStatus.FAILED,
    "KILLED": RunStatus.KILLED,
    "RUNNING": RunStatus.RUNNING,
    "SCHEDULED": RunStatus.RUNNING,
}
_CONSOLE_NAMES = ("console", "stdout", "output", "train", "log")


def _mlflow():
    m = require("mlflow", "mlflow", "mlflow")
    for name in ("mlflow", "alembic"):  # store-migration chatter is not mlaudit's output
        logging.getLogger(name).setLevel(logging.WARNING)
    # Bounded retries and connect/read timeouts (MLAUDIT_TRACKER_TIMEOUT, default 10 s) so an
    # unreachable or hung server fails in seconds, not minutes; a user's own MLFLOW_* win.
    from mlaudit_core.settings import tracker_timeout

    os.environ.setdefault("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "1")
    os.environ.setdefault("MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR", "1")
    os.environ.setdefault("MLFLOW_HTTP_REQUEST_TIMEOUT", str(max(1, round(tracker_timeout()))))
    os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")
    # MLflow 3 keeps file stores readable only behind this switch; mlaudit reads (and tags)
    # existing legacy stores, it never creates one (check_store_exists)
    os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
    return m


def resolve_uri(tracking_uri: str | None) -> str:
    mlflow = _mlflow()
    return tracking_uri or mlflow.get_tracking_uri()


def client_for(tracking_uri: str | None):
    """An ``MlflowClient`` for an existing store.

    Raises:
        InputError: the store does not exist, is not an MLflow store, or its scheme is unsupported.
    """
    mlflow = _mlflow()
    uri = resolve_uri(tracking_uri)
    check_store_exists(uri)
    if uri.startswith(("http://", "https://")) and int(mlflow.__version__.split(".")[0]) < 3:
        # MLflow 2.x resolves proxied artifact URIs (mlflow-artifacts:/) against the global
        # tracking URI, not the client's: without this the report artifacts cannot be written
        mlflow.set_tracking_uri(uri)
    key = _cache_key(uri)
    with _clients_lock:
        client = _clients.get(key)
    if client is not None:
        return client
    try:
        client = mlflow.MlflowClient(tracking_uri=uri)
    except Exception as exc:  # unsupported scheme, missing DB driver, broken database...
        raise InputError(
            f"{uri}: cannot open the MLflow tracking store ({type(exc).__name__}: "
            f"{clip(str(exc).splitlines()[0] if str(exc) else '', 160)})"
        ) from None
    with _clients_lock:
        return _clients.setdefault(key, client)


#: One ``MlflowClient`` per store and process, reused by every load and write-back of a
#: watcher or batch worker: building one for a ``sqlite:///`` store verifies the schema
#: (about 1 s on a loaded 2-core machine); for a server it is cheap, and MLflow's
#: keep-alive session is shared anyway.
_clients: dict[tuple, object] = {}
_clients_lock = threading.Lock()


def _cache_key(uri: str) -> tuple:
    """(uri, process, file identity of a sqlite database): a database file replaced at the
    same path gets a new client, never one holding connections to the old file."""
    ident: tuple = ()
    if uri.startswith("sqlite:///"):
        try:
            st = os.stat(uri[len("sqlite:///") :])
            ident = (st.st_dev, st.st_ino)
        except OSError:
            pass
    return (uri, os.getpid(), *ident)


def is_db_uri(uri: str) -> bool:
    return uri.split(":", 1)[0].split("+", 1)[0] in _DB_SCHEMES


def check_store_exists(uri: str) -> None:
    """Refuse a ``sqlite:///`` path or file store that does not exist (MLflow would create one).

    Raises:
        InputError: the database file or store directory is missing.
    """
    if uri.startswith("sqlite:///"):
        path = Path(uri[len("sqlite:///") :])
        if str(path) in ("", ":memory:"):
            return
        if not path.is_file():
            hint = ""
            if not os.environ.get("MLFLOW_TRACKING_URI") and path == Path.cwd() / "mlflow.db":
                # MLflow's default store: a path the user may never have given
                hint = (
                    " (MLflow's default store for this directory: give --tracking-uri/-u or "
                    "set MLFLOW_TRACKING_URI)"
                )
            raise InputError(f"{uri}: no such MLflow database file{hint}")
        # MLflow would write its whole schema into any sqlite file it is pointed at: look first,
        # read-only, for the tables every MLflow database has
        import sqlite3

        try:
            con = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
            try:
                tables = {
                    r[0] for r in con.execute("select name from sqlite_master where type='table'")
                }
            finally:
                con.close()
        except sqlite3.DatabaseError as exc:
            raise InputError(f"{uri}: not an sqlite database ({exc})") from None
        if not {"runs", "metrics", "experiments"} <= tables:
            raise InputError(f"{uri}: not an MLflow database (no runs/metrics/experiments tables)")
    elif uri.startswith("file:") or "://" not in uri:
        path = Path(
            uri[len("file://") :] if uri.startswith("file://") else uri.removeprefix("file:")
        )
        if not path.is_dir():
            raise InputError(f"{uri}: no such MLflow file store directory")


def _restore_inf(v: np.ndarray) -> np.ndarray:
    """MLflow stores +-inf as +-max float64 (SQL has no inf); turn them back into inf."""
    v[v >= _MAXF] = np.inf
    v[v <= -_MAXF] = -np.inf
    return v


_engines: dict[tuple, object] = {}


def _engine(uri: str):
    """One SQLAlchemy engine per database and process (:func:`_cache_key`), without a
    connection pool: each load opens and closes its own connection."""
    sa = require("sqlalchemy", "mlflow", "mlflow")
    from sqlalchemy.pool import NullPool

    key = _cache_key(uri)
    with _clients_lock:
        eng = _engines.get(key)
        if eng is None:
            eng = _engines[key] = sa.create_engine(uri, poolclass=NullPool)
        return eng


def _bulk_metrics_db(uri: str, run_id: str) -> MetricTable:
    """All metric points of ``run_id`` in one query through MLflow's ``SqlMetric`` model."""
    sa = require("sqlalchemy", "mlflow", "mlflow")
    SqlMetric = mlflow_sql_metric_model()

    engine = _engine(uri)
    stmt = (
        sa.select(
            SqlMetric.key, SqlMetric.step, SqlMetric.timestamp, SqlMetric.value, SqlMetric.is_nan
        )
        .where(SqlMetric.run_uuid == run_id)
        .order_by(SqlMetric.key, SqlMetric.timestamp, SqlMetric.step)
    )
    compiled = stmt.compile(dialect=engine.dialect)
    params = (
        [compiled.params[k] for k in compiled.positiontup]
        if compiled.positional
        else compiled.params
    )
    # The statement comes from MLflow's model; rows are fetched through the DBAPI cursor
    # because SQLAlchemy's Row objects cost more than the query itself on 10^5+ points.
    raw = engine.raw_connection()
    try:
        cur = raw.cursor()
        cur.execute(str(compiled), params)
        rows = cur.fetchall()
        cur.close()
    finally:
        raw.close()
    if not rows:
        return MetricTable.empty()
    n = len(rows)
    keys = list(map(itemgetter(0), rows))
    steps = np.fromiter(map(itemgetter(1), rows), np.int64, n)
    ts = np.fromiter(map(itemgetter(2), rows), np.float64, n)
    v = _restore_inf(np.fromiter(map(itemgetter(3), rows), np.float64, n))
    v[np.fromiter(map(itemgetter(4), rows), bool, n)] = np.nan
    del rows
    return MetricTable(keys, steps, v, ts / 1000.0)


_experiments: dict[tuple[str, str], object] = {}


def _experiment(client, uri: str, experiment_id: str):
    """The run's experiment, asked once per store and process: a batch audits one
    experiment's runs, and only its name is used (a rename meanwhile shows next session)."""
    key = (uri, str(experiment_id))
    exp = _experiments.get(key)
    if exp is None:
        exp = _experiments[key] = client.get_experiment(experiment_id)
    return exp


def _metrics_via_rest(client, uri: str, run_id: str, keys: list[str], data=None) -> MetricTable:
    """Every key's history from a tracking server, keys in parallel (:mod:`.rest_history`).
    ``data``: the run's ``RunData`` entity (its latest metrics' steps hint each key's length)."""
    from .rest_history import fetch_all

    last = {
        m.key: m.step
        for m in mlflow_metric_objs(data) or []
        if isinstance(getattr(m, "step", None), int)
    }
    series = [
        Series(k, steps, _restore_inf(values), ts / 1000.0)
        for k, (steps, values, ts) in fetch_all(client, uri, run_id, keys, last)
    ]
    return MetricTable.from_series(series)


def _metrics_via_client(client, run_id: str, keys: list[str]) -> MetricTable:
    series = []
    for key in keys:
        hist = client.get_metric_history(run_id, key)
        hist = sorted(hist, key=lambda m: (m.timestamp, m.step))
        series.append(
            Series(
                key,
                np.fromiter((m.step for m in hist), np.int64, len(hist)),
                _restore_inf(np.fromiter((m.value for m in hist), np.float64, len(hist))),
                np.fromiter((m.timestamp / 1000.0 for m in hist), np.float64, len(hist)),
            )
        )
    return MetricTable.from_series(series)


def _list_artifacts(
    client, run_id: str, max_depth: int = 3, artifact_uri: str | None = None
) -> list[Artifact]:
    """The run's artifact files, ``max_depth`` folder levels down.

    ``artifact_uri``: the run's ``info.artifact_uri`` when the caller already has the run
    (a batch's ``search_runs``): the run's artifact repository is then listed directly, as
    ``MlflowClient.list_artifacts`` does after it has asked the server for the run again
    (one request less per run), and sub-folders through the same repository (the client
    lists a sub-folder through a ``runs:/`` repository: two more ``get_run`` and a search
    for a logged model named like the folder, per folder; a logged model's own files, which
    that search adds, are not the run's artifacts and never hold its console log).
    """
    out: list[Artifact] = []
    lister = client.list_artifacts
    if artifact_uri is not None:
        repo = _artifact_repo(artifact_uri, client)
        if repo is not None:

            def lister(_run_id, path):
                return repo.list_artifacts(path)

    def walk(path: str | None, depth: int) -> None:
        for fi in lister(run_id, path):
            if fi.is_dir:
                if depth < max_depth:
                    walk(fi.path, depth + 1)
            else:
                out.append(Artifact(fi.path, fi.file_size))

    walk(None, 0)
    return out


def _artifact_repo(artifact_uri: str, client):
    """MLflow's artifact repository for ``artifact_uri`` (what ``mlflow.artifacts.list_artifacts``
    builds from a run's ``artifact_uri``), or None when this MLflow cannot build it that way."""
    try:
        from mlflow.tracking.artifact_utils import (
            add_databricks_profile_info_to_artifact_uri,
            get_artifact_repository,
        )

        uri = add_databricks_profile_info_to_artifact_uri(artifact_uri, client.tracking_uri)
        try:
            return get_artifact_repository(uri, tracking_uri=client.tracking_uri)
        except TypeError:  # MLflow 2.x before tracking_uri was a parameter
            return get_artifact_repository(uri)
    except Exception:  # noqa: BLE001 - the client's own listing is the fallback
        return None


def _console_candidates(artifacts: list[Artifact]) -> list[Artifact]:
    cands = []
    for a in artifacts:
        if a.path.startswith("mlaudit/"):
            continue
        name = a.path.rsplit("/", 1)[-1].lower()
        if name.endswith((".log", ".txt", ".out")) and any(w in name for w in _CONSOLE_NAMES):
            cands.append(a)
    return cands


def read_console(
    client, run_id: str, artifacts: list[Artifact], warnings: list[str]
) -> list[ConsoleLine]:
    lines: list[ConsoleLine] = []
    from .console_tail import read_tail

    for a in _console_candidates(artifacts)[:3]:
        try:  # only the tail is fetched where the store allows it (console_tail.py)
            raw, _how = read_tail(client, run_id, a.path, CONSOLE_MAX_BYTES)
        except Exception as exc:  # an unreadable artifact is a warning, not a failed audit
            warnings.append(f"console artifact {a.path} could not be read: {exc}")
            continue
        if a.size is not None and a.size > CONSOLE_MAX_BYTES:
            warnings.append(
                f"console artifact {a.path} is {a.size} bytes; read the last {CONSOLE_MAX_BYTES}"
            )
        text = raw.decode("utf-8", errors="replace")
        lines += [ConsoleLine(a.path, i, t) for i, t in enumerate(text.splitlines(), 1)]
    return lines


def light_run(r) -> RunData:
    """RunData with metadata only (no metrics, console or artifacts) from an MLflow ``Run`` entity."""
    info, data = r.info, r.data
    tags = dict(data.tags)
    return RunData(
        identity=RunIdentity(
            tracker="mlflow",
            id=info.run_id,
            name=info.run_name or info.run_id,
            project=info.experiment_id,
        ),
        status=_STATUS.get(info.status, RunStatus.UNKNOWN),
        start_time=datetime.fromtimestamp(info.start_time / 1000, tz=timezone.utc)
        if info.start_time
        else None,
        end_time=datetime.fromtimestamp(info.end_time / 1000, tz=timezone.utc)
        if info.end_time
        else None,
        params=dict(data.params),
        tags=tags,
        environment={
            k: v for k, v in tags.items() if k.startswith(("mlflow.source.", "mlflow.gitRepoURL"))
        },
        parent_id=tags.get("mlflow.parentRunId"),
    )


def file_store_path(uri: str) -> Path | None:
    """The folder of a file-store URI (``file:///x``, ``file:x`` or a bare path), else None."""
    if is_db_uri(uri) or uri.startswith(("http://", "https://", "databricks")):
        return None
    if uri.startswith("file://"):
        from urllib.parse import unquote, urlparse

        return Path(unquote(urlparse(uri).path))
    if "://" in uri:
        return None
    return Path(uri.removeprefix("file:"))


def _committed_run_dir(uri: str, run_id: str) -> Path | None:
    """The run's folder when MLflow's FileStore would not list it, read directly instead.

    A run folder without ``artifacts/`` (a store committed to git, which keeps no empty
    folder) is skipped by the FileStore ("run not found"); a store under a path with a
    component named ``artifacts`` is refused by it. Opening the store with MlflowClient
    would also create ``.trash/`` in it. Such runs are read from their files
    (:mod:`mlaudit_core.formats.mlflow_store`), read-only.
    """
    store = file_store_path(uri)
    if store is None or not store.is_dir():
        return None
    from mlaudit_core.formats.mlflow_store import find_run

    d = find_run(store, run_id)
    if d is None:
        return None
    if not (d / "artifacts").is_dir() or "artifacts" in d.resolve().parts[:-1]:
        return d
    return None


def _load_direct(run_dir: Path) -> RunData:
    from mlaudit_core.formats.mlflow_store import load

    run = load(run_dir)
    try:
        from mlaudit_core.formats.consolelog import enrich_from_console
    except ImportError:
        return run
    return enrich_from_console(run)


def load_run(run_id: str, tracking_uri: str | None = None) -> RunData:
    """Load one MLflow run.

    Args:
        run_id: the run's id (32 hex characters).
        tracking_uri: a server URL, ``sqlite:///path``, another database URI, or a file
            store path; default: MLflow's own resolution (``MLFLOW_TRACKING_URI``).

    Raises:
        InputError: the run does not exist, was deleted, or the store is unreachable.
        MissingDependency: mlflow is not installed.
    """
    _mlflow()  # MissingDependency (one line) before anything else
    from mlflow.exceptions import MlflowException

    uri = resolve_uri(tracking_uri)
    direct = _committed_run_dir(uri, run_id)
    if direct is not None:
        return _load_direct(direct)
    client = client_for(uri)
    listing = None
    if uri.startswith(("http://", "https://")):
        # a server: the artifact listing needs only the id, so it is asked while get_run is
        # (one round trip less per run in a batch; rest_history.pool bounds both)
        from .rest_history import submit

        listing = submit(_list_artifacts, client, run_id)
    try:
        r = client.get_run(run_id)
    except MlflowException as exc:
        code = getattr(exc, "error_code", "")
        if "RESOURCE_DOES_NOT_EXIST" in str(code) or "not found" in str(exc).lower():
            raise InputError(f"mlflow run {run_id!r} not found at {uri}") from None
        first = (
            clip(str(exc).strip().splitlines()[0], 300) if str(exc).strip() else type(exc).__name__
        )
        # the server's own failures (MLflow's error codes for 5xx and 429) are worth a retry
        err = (
            TrackerUnavailable
            if str(code) in ("INTERNAL_ERROR", "TEMPORARILY_UNAVAILABLE", "REQUEST_LIMIT_EXCEEDED")
            else InputError
        )
        raise err(f"mlflow tracking server {uri} could not be read: {first}") from None
    except Exception as exc:  # connection errors surface as requests/urllib3 exceptions
        raise TrackerUnavailable(
            f"mlflow tracking store {uri} is unreachable: "
            f"{type(exc).__name__}: "
            f"{str(exc).splitlines()[0][:200] if str(exc) else ''}"
        ) from None
    if r.info.lifecycle_stage == "deleted":
        raise InputError(f"mlflow run {run_id!r} is deleted")
    if uri.startswith(("http://", "https://")):
        _batch_experiments.setdefault(uri, set()).add(str(r.info.experiment_id))
    side = None
    metrics = None
    if uri.startswith(("http://", "https://")):
        # a server: the artifact listing and the experiment are asked while the metric
        # histories download, all on the bounded fetch pool (rest_history.pool)
        from .rest_history import submit

        side = (listing, submit(_experiment, client, uri, r.info.experiment_id))
        metrics = _metrics_via_rest(client, uri, run_id, sorted(r.data.metrics), r.data)
    elif is_db_uri(uri):
        metrics = _bulk_metrics_db(uri, run_id)
    else:
        metrics = _metrics_via_client(client, run_id, sorted(r.data.metrics))
    return _assemble(client, uri, r, metrics, *(side or (None, None)))


def _assemble(client, uri: str, r, metrics: MetricTable, listing=None, experiment=None) -> RunData:
    """RunData from a ``Run`` entity and its metric histories; the artifact listing and the
    experiment are futures (a server) or asked here (None)."""
    info, data = r.info, r.data
    run_id = info.run_id
    warnings: list[str] = []
    try:
        artifacts = listing.result() if listing is not None else _list_artifacts(client, run_id)
    except Exception as exc:
        artifacts = []
        warnings.append(f"artifact listing failed: {exc}")
    console = read_console(client, run_id, artifacts, warnings)
    tags = dict(data.tags)
    exp = None
    try:
        exp = (
            experiment.result()
            if experiment is not None
            else client.get_experiment(info.experiment_id)
        )
    except Exception:
        pass
    url = None
    if uri.startswith(("http://", "https://")):
        url = f"{uri.rstrip('/')}/#/experiments/{info.experiment_id}/runs/{run_id}"
    env = {k: v for k, v in tags.items() if k.startswith(("mlflow.source.", "mlflow.gitRepoURL"))}
    run = RunData(
        identity=RunIdentity(
            tracker="mlflow",
            id=run_id,
            name=info.run_name or run_id,
            url=url,
            project=exp.name if exp else info.experiment_id,
        ),
        status=_STATUS.get(info.status, RunStatus.UNKNOWN),
        start_time=datetime.fromtimestamp(info.start_time / 1000, tz=timezone.utc)
        if info.start_time
        else None,
        end_time=datetime.fromtimestamp(info.end_time / 1000, tz=timezone.utc)
        if info.end_time
        else None,
        params=dict(data.params),
        tags=tags,
        metrics=metrics,
        console=console,
        artifacts=artifacts,
        environment=env,
        parent_id=tags.get("mlflow.parentRunId"),
        warnings=warnings,
    )
    if info.artifact_uri:  # the write-back uploads there directly (writeback.upload_report)
        run.cache["mlflow.artifact_uri"] = info.artifact_uri
    # the Description as loaded: the write-back re-reads it after writing only when it changed
    run.cache["mlflow.note_loaded"] = tags.get("mlflow.note.content") or ""
    try:  # console-only signals (grad norm, loss scale printed but not logged) become series
        from mlaudit_core.formats.consolelog import enrich_from_console
    except ImportError:
        return run
    return enrich_from_console(run)


#: Experiments whose runs a server's batch has loaded (:func:`load_runs` searches them).
_batch_experiments: dict[str, set[str]] = {}
#: Run ids per ``search_runs`` in :func:`load_runs` (the filter names each id).
SEARCH_IDS = 50


def _search_ids(client, uri: str, run_ids: list[str]) -> dict[str, object]:
    """``Run`` entities of ``run_ids`` from the experiments this process has seen them in,
    by ``search_runs`` with an ``attributes.run_id IN (...)`` filter (one request for many
    ``get_run``). Runs it does not return (another experiment, deleted) are left out; a
    server that refuses the filter gives {} (the caller then asks ``get_run`` per run)."""
    exps = sorted(_batch_experiments.get(uri, ()))
    if not exps or not run_ids:
        return {}
    out: dict[str, object] = {}
    try:
        for i in range(0, len(run_ids), SEARCH_IDS):
            chunk = run_ids[i : i + SEARCH_IDS]
            flt = "attributes.run_id IN (" + ", ".join(f"'{rid}'" for rid in chunk) + ")"
            for r in client.search_runs(exps, filter_string=flt, max_results=len(chunk)):
                if r.info.run_id in chunk:
                    out[r.info.run_id] = r
    except Exception:  # an old server or a proxy refusing the filter: per-run get_run
        return {}
    return out


def load_runs(
    run_ids: list[str], tracking_uri: str | None = None
) -> dict[str, RunData | Exception]:
    """Load several runs of one store: ``{run_id: RunData or the exception load_run would raise}``.

    From a server (``http(s)://``) this asks fewer, larger requests than one :func:`load_run`
    per run: the runs' entities in one ``search_runs`` per :data:`SEARCH_IDS` ids (an
    experiment not searched yet is learnt from the first run the search misses, asked with
    ``get_run``, and searched too), each metric key's
    history for many runs in one ``get-history-bulk`` request (full fidelity, see
    :func:`.rest_history.fetch_many`), and the artifact listings in parallel. A run the
    search does not return, or whose histories cannot be read in bulk, is loaded alone,
    so its error is its own. Other stores: :func:`load_run` per run.

    Raises:
        MissingDependency: mlflow is not installed.
    """
    _mlflow()
    uri = resolve_uri(tracking_uri)
    out: dict[str, RunData | Exception] = {}

    def alone(rid: str) -> None:
        try:
            out[rid] = load_run(rid, uri)
        except Exception as exc:  # noqa: BLE001 - the run's own result
            out[rid] = exc

    if not uri.startswith(("http://", "https://")) or len(run_ids) < 2:
        for rid in run_ids:
            alone(rid)
        return out
    try:
        client = client_for(uri)
    except Exception as exc:  # noqa: BLE001 - every run's result
        return dict.fromkeys(run_ids, exc)
    ids = list(dict.fromkeys(run_ids))
    known = _batch_experiments.setdefault(uri, set())
    found: dict[str, object] = {}
    missing = ids
    while missing:  # a run the search misses names an experiment to add (once each)
        found.update(_search_ids(client, uri, missing))
        missing = [rid for rid in missing if rid not in found]
        if not missing:
            break
        try:
            exp = str(client.get_run(missing[0]).info.experiment_id)
        except Exception:  # noqa: BLE001 - no such run: load_run below reports it
            break
        if exp in known:  # searched already (a deleted run): load_run below reports it
            break
        known.add(exp)
    for rid in ids:
        if rid not in found:
            alone(rid)
    if not found:
        return out
    from .rest_history import fetch_many, submit

    wanted = {}
    for rid, r in found.items():  # each key with its latest step (a hint of its length)
        last = {
            m.key: m.step
            for m in mlflow_metric_objs(r.data) or []
            if isinstance(getattr(m, "step", None), int)
        }
        wanted[rid] = {k: last.get(k) for k in sorted(r.data.metrics)}
    listings = {
        rid: submit(_list_artifacts, client, rid, 3, r.info.artifact_uri)
        for rid, r in found.items()
    }
    exps = {rid: submit(_experiment, client, uri, r.info.experiment_id) for rid, r in found.items()}
    histories = fetch_many(client, uri, wanted)
    for rid, r in found.items():
        h = histories.get(rid)
        if isinstance(h, Exception) or h is None:
            listings[rid].cancel()
            alone(rid)
            continue
        try:
            series = [Series(k, st, _restore_inf(v), ts / 1000.0) for k, (st, v, ts) in h]
            out[rid] = _assemble(
                client, uri, r, MetricTable.from_series(series), listings[rid], exps[rid]
            )
        except Exception as exc:  # noqa: BLE001 - the run's own result
            out[rid] = exc
    return out
