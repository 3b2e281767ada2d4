"""The MLflow server path of the loader (integrations/mlaudit_mlflow/rest_history.py) against a
real ``mlflow server`` (conftest's session fixture, sqlite backend).

Every point must come back exactly as ``MlflowClient.get_metric_history`` returns it (NaN, the
+-max float stand-ins for +-inf, repeated steps, out-of-order logging), whichever endpoint
served it: the page size is lowered for a test so one key is paged through ``get-history``
over several pages (its last step is past a page), another is read whole through
``get-history-bulk``, and a third fills the bulk answer exactly and is read again.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

mlflow = pytest.importorskip("mlflow")


@pytest.fixture(scope="module")
def logged(mlflow_server):
    from mlflow.entities import Metric

    client = mlflow.MlflowClient(mlflow_server["url"])
    exp = client.create_experiment("rest-history")
    rid = client.create_run(exp, run_name="rest").info.run_id
    t0 = 1_700_000_000_000
    ms = []
    for i in range(23):  # paged: last step 22 > page 7; NaN, inf, -inf, a repeated step
        v = [math.nan, math.inf, -math.inf][i % 3] if i in (4, 9, 14) else 1.0 / (i + 1)
        ms.append(Metric("train/loss", v, t0 + i, i))
    ms.append(Metric("train/loss", 0.123, t0 + 100, 5))  # step 5 again, later
    ms += [
        Metric("val/loss", 0.5 - 0.01 * i, t0 + 50 - i, i) for i in range(5)
    ]  # logged newest first
    ms += [Metric("lr", 0.1, t0 + i, i) for i in range(7)]  # exactly one bulk page
    client.log_batch(rid, metrics=ms)
    client.set_terminated(rid)
    return mlflow_server["url"], rid


def test_rest_path_returns_what_mlflowclient_returns(logged, monkeypatch):
    from mlaudit_mlflow import loader, rest_history

    url, rid = logged
    monkeypatch.setattr(rest_history, "PAGE_SIZE", 7)
    client = loader.client_for(url)
    data = client.get_run(rid).data
    keys = sorted(data.metrics)
    ours = loader._metrics_via_rest(client, url, rid, keys, data)
    ref = loader._metrics_via_client(client, rid, keys)
    assert sorted(ours.keys) == sorted(ref.keys) == ["lr", "train/loss", "val/loss"]
    assert len(ours) == len(ref) == 24 + 5 + 7
    for k in keys:
        a, b = ours.series(k), ref.series(k)
        assert np.array_equal(a.steps, b.steps), k
        assert np.array_equal(a.values, b.values, equal_nan=True), k
        assert np.array_equal(a.wall_times, b.wall_times), k
    loss = ours.series("train/loss").values
    assert (
        np.isnan(loss).sum() == 1 and np.isposinf(loss).sum() == 1 and np.isneginf(loss).sum() == 1
    )


def test_load_run_through_the_server_equals_the_database(logged, mlflow_server):
    """The whole loader: server URL and the server's own sqlite:/// give the same table."""
    from mlaudit_mlflow.loader import load_run

    url, rid = logged
    a = load_run(rid, url).metrics
    b = load_run(rid, mlflow_server["db_uri"]).metrics
    assert sorted(a.keys) == sorted(b.keys)
    for k in a.keys:
        assert np.array_equal(a.series(k).values, b.series(k).values, equal_nan=True)
        assert np.array_equal(a.series(k).steps, b.series(k).steps)


def test_fetch_concurrency_is_bounded_and_checked(monkeypatch):
    from mlaudit_mlflow.rest_history import CONCURRENCY_ENV, DEFAULT_CONCURRENCY, concurrency

    from mlaudit_core.errors import InputError

    monkeypatch.delenv(CONCURRENCY_ENV, raising=False)
    assert concurrency() == DEFAULT_CONCURRENCY
    monkeypatch.setenv(CONCURRENCY_ENV, "2")
    assert concurrency() == 2
    for bad in ("0", "33", "four", "-1"):
        monkeypatch.setenv(CONCURRENCY_ENV, bad)
        with pytest.raises(InputError, match=CONCURRENCY_ENV):
            concurrency()


def test_load_runs_equals_load_run_per_run(mlflow_server, monkeypatch):
    """Several runs at once (the batch read-ahead): fewer requests, the same RunData.

    With the page lowered to 100 points: six runs' 12-point keys go in bulk requests grouped
    by latest step (at most half a page); one run logs 150 points over 5 steps (its latest
    step hides its length: the answer is full and cut, the runs after the cut are re-read
    alone); one run's key is past half a page (read alone); one run has a damaged value in
    the server's store (its own error, the other runs unharmed); one run lives in another
    experiment, one is deleted and one does not exist (each gets what load_run says)."""
    import sqlite3

    from mlaudit_mlflow import loader, rest_history
    from mlflow.entities import Metric

    url = mlflow_server["url"]
    client = mlflow.MlflowClient(url)
    exp, other = client.create_experiment("load-runs"), client.create_experiment("load-runs-2")
    t0 = 1_700_000_000_000

    def log(exp_id: str, k: int, n: int, per_step: int = 1) -> str:
        rid = client.create_run(exp_id, run_name=f"lr{k}").info.run_id
        ms = [Metric("loss", 1.0 / (i + 1) + k, t0 + i, i // per_step) for i in range(n)]
        ms += [Metric("val", math.nan if i == 2 else 0.5 + k, t0 + 10 * i, i) for i in range(4)]
        client.log_batch(rid, metrics=ms, params=[mlflow.entities.Param("k", str(k))])
        client.set_terminated(rid)
        return rid

    ids = [log(exp, k, 12) for k in range(6)] + [
        log(exp, 6, 150, 30),
        log(exp, 7, 60),
        log(other, 8, 5),
    ]
    damaged, deleted = log(exp, 9, 10), log(exp, 10, 3)
    client.delete_run(deleted)
    db = sqlite3.connect(mlflow_server["root"] / "mlflow.db")
    with db:
        db.execute(
            "UPDATE metrics SET value='not a number' WHERE run_uuid=? AND step=3", (damaged,)
        )
    db.close()
    missing = "0" * 32
    monkeypatch.setattr(rest_history, "PAGE_SIZE", 100)
    calls = []
    real = rest_history._request
    monkeypatch.setattr(rest_history, "_request", lambda *a: calls.append(a[1]) or real(*a))
    everything = ids + [damaged, deleted, missing]
    got = loader.load_runs(everything, url)
    assert set(got) == set(everything)
    many = len(calls)
    for rid in everything:
        try:
            want = loader.load_run(rid, url)
        except Exception as exc:  # noqa: BLE001 - compared with load_runs' result
            assert type(got[rid]) is type(exc) and str(got[rid]) == str(exc), (rid, got[rid])
            continue
        run = got[rid]
        assert run.params == want.params and run.tags == want.tags and run.status == want.status
        assert run.identity == want.identity and run.artifacts == want.artifacts
        assert run.metrics.keys == want.metrics.keys
        for k in want.metrics.keys:
            a, b = run.metrics.series(k), want.metrics.series(k)
            assert np.array_equal(a.steps, b.steps), (rid, k)
            assert np.array_equal(a.values, b.values, equal_nan=True), (rid, k)
            assert np.array_equal(a.wall_times, b.wall_times), (rid, k)
    assert many < len(calls) - many, calls  # fewer history requests than one run at a time
    assert all(not isinstance(got[r], Exception) for r in ids)
    assert isinstance(got[damaged], Exception) and isinstance(got[deleted], Exception)
    assert isinstance(got[missing], Exception)
