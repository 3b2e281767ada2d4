"""Batch read-ahead (issue 21): runs loaded ahead of the workers give the same results as
loading each run in its worker, memory stays bounded, and a load error reaches the run it
belongs to.

The end-to-end test audits a real experiment on the session's ``mlflow server`` (the
``experiment`` fixture of test_batch_mlflow: healthy, diverging, overfitting runs and one
whose history the server cannot read). The bound and error tests use a small plugin that
reads runs from CSV files with mlaudit's own reader: the point there is the order and number
of ``load`` calls, which a tracker would hide.
"""

from __future__ import annotations

import threading
import time

import pytest

from mlaudit_core.errors import InputError
from mlaudit_core.service import StateStore, TaskSpec, run_batch
from mlaudit_core.service.batch import READ_AHEAD_ENV, ReadAhead, read_ahead_depth
from mlaudit_core.settings import Settings
from tests.waiting import wait_until


class CsvPlugin:
    """Loads ``<dir>/<ref>.csv`` with mlaudit's format reader; counts loads in flight."""

    def __init__(self, folder, delay: float = 0.0) -> None:
        self.folder, self.delay = folder, delay
        self.loaded: list[str] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._mu = threading.Lock()

    def load(self, ref: str, **options):
        from mlaudit_core.formats import load_path

        with self._mu:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            time.sleep(self.delay)
            path = self.folder / f"{ref}.csv"
            if not path.exists():
                raise InputError(f"{path}: no such file")
            (_, run), *_ = load_path(path).runs
            with self._mu:
                self.loaded.append(ref)
            return run
        finally:
            with self._mu:
                self.in_flight -= 1

    def marker(self) -> str:
        return "plugin attribute"


def write_runs(folder, n: int) -> list[str]:
    refs = []
    for k in range(n):
        rows = ["step,loss"] + [
            f"{i},{2.0 / (1 + i / 10) + 0.01 * (k % 3):.5f}" for i in range(1, 61)
        ]
        (folder / f"r{k}.csv").write_text("\n".join(rows) + "\n")
        refs.append(f"r{k}")
    return refs


def test_read_ahead_keeps_order_bound_and_errors(tmp_path):
    refs = write_runs(tmp_path, 8)
    plugin = CsvPlugin(tmp_path, delay=0.02)
    ahead = ReadAhead(plugin, refs + ["missing"], depth=3)
    try:
        # nothing taken yet: the `depth` loads started at once finish, and no other starts
        wait_until(
            lambda: len(plugin.loaded) >= 3 and plugin.in_flight == 0,
            60,
            "the first three runs read ahead",
            detail=lambda: str(plugin.loaded),
        )
        assert sorted(plugin.loaded) == refs[:3], plugin.loaded  # the first three
        assert ahead.marker() == "plugin attribute"  # everything else is the plugin's
        for ref in refs:
            run = ahead.load(ref)
            assert run.metrics.count("loss") == 60
        assert sorted(plugin.loaded) == sorted(refs), plugin.loaded  # each run loaded once
        assert plugin.max_in_flight <= 3
        with pytest.raises(InputError, match="missing.csv: no such file"):
            ahead.load("missing")  # the load's own error, raised in the taking thread
        extra = write_runs(tmp_path, 9)[-1]  # r8: not in the list, loaded right here
        assert ahead.load(extra).metrics.count("loss") == 60
    finally:
        ahead.close()


def test_close_stops_loading_ahead(tmp_path):
    refs = write_runs(tmp_path, 20)
    plugin = CsvPlugin(tmp_path, delay=0.05)
    ahead = ReadAhead(plugin, refs, depth=2)
    ahead.load(refs[0])
    ahead.close()
    # every read-ahead thread has ended: no load can start or finish after this
    wait_until(
        lambda: (
            not any(
                t.name.startswith("mlaudit-read-ahead") and t.is_alive()
                for t in threading.enumerate()
            )
        ),
        60,
        "the read-ahead threads to end",
    )
    assert len(plugin.loaded) <= 4, plugin.loaded  # the taken run, two ahead, one in flight


def test_read_ahead_depth_from_the_environment(monkeypatch):
    monkeypatch.delenv(READ_AHEAD_ENV, raising=False)
    assert read_ahead_depth() == 4
    monkeypatch.setenv(READ_AHEAD_ENV, "0")
    assert read_ahead_depth() == 0
    for bad in ("-1", "65", "four"):
        monkeypatch.setenv(READ_AHEAD_ENV, bad)
        with pytest.raises(InputError, match=READ_AHEAD_ENV):
            read_ahead_depth()


def test_batch_with_and_without_read_ahead_agree_on_a_real_server(
    mlflow_server, tmp_path, monkeypatch
):
    mlflow = pytest.importorskip("mlflow")
    from test_batch_mlflow import log_run

    client = mlflow.MlflowClient(mlflow_server["url"])
    exp_id = client.create_experiment("read-ahead")
    refs = [
        log_run(client, exp_id, f"{s}-{k}", s)
        for k in range(3)
        for s in ("healthy", "diverge", "overfit")
    ]
    spec = TaskSpec(
        "mlflow",
        (("tracking_uri", mlflow_server["url"]),),
        Settings().model_dump(),
        write_back=False,
    )
    got = {}
    for depth in (0, 3):
        monkeypatch.setenv(READ_AHEAD_ENV, str(depth))
        with StateStore(tmp_path / f"s{depth}.sqlite", "read-ahead test") as store:
            out = run_batch(refs, spec, store, jobs=2)
        assert out.audited_now == len(refs) and all(r.ok for r in out.results), out.results
        got[depth] = {
            r.ref: (r.outcome, r.cause, r.confidence, tuple(r.codes)) for r in out.results
        }
        assert (out.timings.get("read-ahead", 0.0) > 0) == (depth > 0), out.timings
    assert got[0] == got[3]
    assert {got[0][r][0] for r in refs} >= {"diverged"}, got[0]  # the shapes were told apart
