"""Batch write-behind (mlaudit_core.service.batch.local_results): each worker hands a run's
write-back to a writer thread and audits its next run meanwhile; a run's result comes out
only after its write-back ended, at most ``jobs x depth`` write-backs are in flight, a
failing write-back is that run's failed result, and the verdicts are those of writing in
the worker (depth 0).

The plugin reads runs from CSV files with mlaudit's own reader and records its write-backs
(the point is the order and number of calls, which a tracker would hide); the same batch
through a real ``mlflow server`` runs in tests/test_batch_mlflow.py.
"""

from __future__ import annotations

import threading
import time

import pytest

from mlaudit_core.errors import InputError
from mlaudit_core.service import StateStore, TaskSpec, run_batch
from mlaudit_core.service import batch as batch_mod
from mlaudit_core.settings import Settings
from tests.test_batch_read_ahead import CsvPlugin, write_runs


class WritingCsvPlugin(CsvPlugin):
    """:class:`CsvPlugin` whose ``write_back`` takes ``write_s`` and is recorded; a run named
    in ``refuse`` has its write-back refused."""

    def __init__(self, folder, write_s: float, refuse: frozenset[str] = frozenset()) -> None:
        super().__init__(folder)
        self.write_s, self.refuse = write_s, refuse
        self.written: list[str] = []
        self.writing = 0
        self.max_writing = 0

    def write_back(self, run, report) -> None:
        with self._mu:
            self.writing += 1
            self.max_writing = max(self.max_writing, self.writing)
        try:
            time.sleep(self.write_s)
            ref = run.identity.name.removesuffix(".csv")
            if ref in self.refuse:
                raise InputError(f"{ref}: write-back refused")
            with self._mu:
                self.written.append(ref)
        finally:
            with self._mu:
                self.writing -= 1


def _batch(tmp_path, monkeypatch, plugin, refs, depth: int, jobs: int, tag: str):
    monkeypatch.setattr(batch_mod, "get_plugin", lambda tracker, **options: plugin)
    monkeypatch.setenv(batch_mod.WRITE_BEHIND_ENV, str(depth))
    monkeypatch.setenv(batch_mod.READ_AHEAD_ENV, "0")
    spec = TaskSpec("csv-test", (), Settings().model_dump(), write_back=True)
    seen_written: dict[str, bool] = {}

    def on_result(res) -> None:  # the write-back of a yielded run has ended
        seen_written[res.ref] = res.ref in plugin.written

    with StateStore(tmp_path / f"{tag}.sqlite", "write-behind test") as store:
        out = run_batch(refs, spec, store, jobs=jobs, on_result=on_result)
    return out, seen_written


def test_write_behind_yields_after_the_write_bounds_it_and_keeps_verdicts(tmp_path, monkeypatch):
    refs = write_runs(tmp_path, 10)
    got = {}
    for depth in (0, 2):
        plugin = WritingCsvPlugin(tmp_path, write_s=0.05, refuse=frozenset({"r3"}))
        out, seen_written = _batch(
            tmp_path, monkeypatch, plugin, refs, depth, jobs=1, tag=f"d{depth}"
        )
        assert out.audited_now == len(refs)
        by_ref = {r.ref: r for r in out.results}
        assert not by_ref["r3"].ok and by_ref["r3"].error == "write-back: r3: write-back refused"
        assert all(by_ref[r].ok and by_ref[r].wrote for r in refs if r != "r3"), out.results
        assert all(seen_written[r] for r in refs if r != "r3"), seen_written
        assert plugin.max_writing <= max(1, depth), plugin.max_writing
        assert out.timings["write"] > 0
        got[depth] = {
            r.ref: (r.ok, r.outcome, r.cause, r.confidence, tuple(r.codes)) for r in out.results
        }
        if depth:
            assert plugin.max_writing == depth  # the writes did overlap
    assert got[0] == got[2]


def test_write_behind_depth_from_the_environment(monkeypatch):
    monkeypatch.delenv(batch_mod.WRITE_BEHIND_ENV, raising=False)
    assert batch_mod.write_behind_depth() == batch_mod.DEFAULT_WRITE_BEHIND
    monkeypatch.setenv(batch_mod.WRITE_BEHIND_ENV, "0")
    assert batch_mod.write_behind_depth() == 0
    for bad in ("-1", "65", "two"):
        monkeypatch.setenv(batch_mod.WRITE_BEHIND_ENV, bad)
        with pytest.raises(InputError, match=batch_mod.WRITE_BEHIND_ENV):
            batch_mod.write_behind_depth()


def test_a_stopped_batch_ends_the_started_write_backs(tmp_path, monkeypatch):
    refs = write_runs(tmp_path, 12)
    plugin = WritingCsvPlugin(tmp_path, write_s=0.1)
    monkeypatch.setattr(batch_mod, "get_plugin", lambda tracker, **options: plugin)
    monkeypatch.setenv(batch_mod.WRITE_BEHIND_ENV, "2")
    spec = TaskSpec("csv-test", (), Settings().model_dump(), write_back=True)
    stream = batch_mod.local_results(spec, refs, 1)
    first = next(stream)
    assert first.ok and first.ref in plugin.written
    stream.close()  # the consumer stops: started write-backs end, none is left half done
    assert plugin.writing == 0
    assert not any(
        t.name.startswith(("mlaudit-write", "mlaudit-batch")) and t.is_alive()
        for t in threading.enumerate()
    )
    assert len(plugin.written) < len(refs)


class ExitingCsvPlugin(WritingCsvPlugin):
    """A write-back that raises a ``BaseException`` that is not an ``Exception``
    (``SystemExit`` from an SDK's ``sys.exit`` on a thread)."""

    def write_back(self, run, report) -> None:
        if run.identity.name.removesuffix(".csv") in self.refuse:
            raise SystemExit(3)
        super().write_back(run, report)


def test_local_results_a_write_back_raising_system_exit_is_its_runs_failure(tmp_path, monkeypatch):
    """The run whose write-back raised ``SystemExit`` on a writer thread is yielded as failed
    with its verdict kept; the batch neither hangs waiting for its result nor loses the
    others (the writer put no result for it, and ``done.get()`` waited forever)."""
    refs = write_runs(tmp_path, 6)
    plugin = ExitingCsvPlugin(tmp_path, write_s=0.01, refuse=frozenset({"r2"}))
    monkeypatch.setattr(batch_mod, "get_plugin", lambda tracker, **options: plugin)
    monkeypatch.setenv(batch_mod.WRITE_BEHIND_ENV, "2")
    monkeypatch.setenv(batch_mod.READ_AHEAD_ENV, "0")
    spec = TaskSpec("csv-test", (), Settings().model_dump(), write_back=True)
    got: list = []
    t = threading.Thread(
        target=lambda: got.extend(batch_mod.local_results(spec, refs, 1)), daemon=True
    )
    t.start()
    t.join(120)
    assert not t.is_alive(), "the batch waited forever for the run whose write-back exited"
    by_ref = {r.ref: r for r in got}
    assert sorted(by_ref) == sorted(refs)
    assert not by_ref["r2"].ok and "SystemExit" in by_ref["r2"].error
    assert by_ref["r2"].outcome  # the verdict is kept
