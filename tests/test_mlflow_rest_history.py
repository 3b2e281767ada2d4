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
    ms += [Metric("val/loss", 0.5 - 0.01 * i, t0 + 50 - i, i) for i in range(5)]  # logged newest first
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
    assert np.isnan(loss).sum() == 1 and np.isposinf(loss).sum() == 1 and np.isneginf(loss).sum() == 1


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
