"""The watcher/batch state file: transitions, crash recovery, single-process lock, scope."""

from __future__ import annotations

import sqlite3

import pytest

from mlaudit_core.service import RunResult, StateInUse, StateScopeMismatch, StateStore
from mlaudit_core.service.batch import parse_since
from mlaudit_core.service.task import one_line

SCOPE = "mlflow http://127.0.0.1:1 experiments=a"


def test_transitions_count_attempts_and_writes(tmp_path):
    with StateStore(tmp_path / "s.sqlite", SCOPE) as st:
        assert st.add(["r1", "r2"]) == 2
        assert st.add(["r1", "r3"]) == 1  # already known runs are not re-added
        assert st.ready(10) == ["r1", "r2", "r3"]
        assert st.claim("r1") and not st.claim("r1")  # a claimed run cannot be claimed again
        assert st.begin_write("r1") and not st.begin_write("r1")
        st.finish("r1", RunResult(ref="r1", outcome="diverged", cause="model_convergence",
                                  wrote=True))
        row = st.get("r1")
        got = (row["state"], row["attempts"], row["writes"], row["outcome"])
        assert got == ("done", 1, 1, "diverged")
        assert st.ready(10, exclude=["r2"]) == ["r3"]

        assert st.claim("r2") and st.release("r2")  # shutdown before writing: attempt not counted
        assert st.get("r2")["attempts"] == 0 and st.get("r2")["state"] == "pending"
        assert not st.begin_write("r2")  # a released claim cannot start writing

        assert st.claim("r3")
        st.fail("r3", RunResult(ref="r3", ok=False, error="load: boom"), retry_at=2e9)
        assert st.get("r3")["state"] == "pending"
        assert st.ready(10) == ["r2"]  # r3 waits for its retry time
        assert st.claim("r2")
        st.fail("r2", RunResult(ref="r2", ok=False, error="load: gone"), retry_at=None)
        assert st.counts() == {"done": 1, "pending": 1, "failed": 1}
        assert [r.ref for r in st.results()] == ["r1", "r2", "r3"]
        assert [r.ok for r in st.results()] == [True, False, False]


def test_a_killed_process_leaves_claims_that_the_next_one_recovers(tmp_path):
    path = tmp_path / "s.sqlite"
    st = StateStore(path, SCOPE)
    st.add(["claimed", "writing", "done"])
    st.claim("claimed")
    st.claim("writing") and st.begin_write("writing")
    st.claim("done") and st.begin_write("done")
    st.finish("done", RunResult(ref="done"))
    # no close(): as after SIGKILL, the lock file descriptor is only dropped with the object
    st._lock_file.close()
    with StateStore(path, SCOPE) as again:
        assert again.recover() == ["claimed", "writing"]
        assert {r["ref"]: r["state"] for r in again.rows()} == {
            "claimed": "pending", "writing": "pending", "done": "done"}
        assert again.get("writing")["writes"] == 1  # the started write is remembered
    # the journal is WAL and every transition was committed
    mode = sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def test_one_process_per_state_file_and_one_scope_per_file(tmp_path):
    path = tmp_path / "s.sqlite"
    with StateStore(path, SCOPE), pytest.raises(StateInUse, match="in use by another mlaudit"):
        StateStore(path, SCOPE)
    with pytest.raises(StateScopeMismatch, match="experiments=b"):
        StateStore(path, SCOPE.replace("=a", "=b"))
    with StateStore(path, SCOPE) as st:  # the lock was released by close()
        st.set_meta("cursor", "1.0")
        st.add(["x"])
        st.reset()
        assert st.rows() == [] and st.get_meta("cursor") is None and st.get_meta("scope") == SCOPE


def test_not_a_state_file(tmp_path):
    bad = tmp_path / "notes.sqlite"
    bad.write_text("these are not sqlite pages " * 100)
    with pytest.raises(Exception, match="not an mlaudit state file"):
        StateStore(bad, SCOPE)


def test_since_and_error_lines():
    assert parse_since("all").year == 1970
    assert parse_since("2024-05-01").tzinfo is not None
    assert parse_since("2024-05-01T10:00:00+02:00").utcoffset().total_seconds() == 7200
    with pytest.raises(Exception, match="not a date"):
        parse_since("yesterday-ish")
    line = one_line("load", RuntimeError("token=hf_" + "a" * 34 + " " + "x" * 400 + " the cause"))
    assert "hf_aaaa" not in line and line.startswith("load: RuntimeError: ")
    assert line.endswith("the cause")
    assert len(line) <= 305


def test_a_run_that_ends_again_is_requeued_once_per_ending(tmp_path):
    with StateStore(tmp_path / "s.sqlite", SCOPE) as st:
        assert st.add([("t1", "2026-01-01T00:00:00"), "r2"]) == 2
        assert st.claim("t1") and st.begin_write("t1")
        st.finish("t1", RunResult(ref="t1", outcome="healthy", wrote=True))
        assert st.add([("t1", "2026-01-01T00:00:00")]) == 0  # same ending: settled stays settled
        assert st.pending() == 1  # r2
        assert st.add([("t1", "2026-01-02T09:30:00")]) == 1  # reset and run again: audit again
        row = st.get("t1")
        assert (row["state"], row["attempts"], row["ending"]) == ("pending", 0, "2026-01-02T09:30:00")
        assert st.add([("t1", "2026-01-03T00:00:00")]) == 0  # not settled yet: not requeued twice
        assert st.add([("r2", "x")]) == 0 and st.get("r2")["ending"] == "x"  # no ending before
        assert st.pending() == 2


def test_a_state_file_from_before_endings_is_migrated(tmp_path):
    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path)
    db.executescript(f"""
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        INSERT INTO meta VALUES ('schema', '1'), ('scope', '{SCOPE}');
        CREATE TABLE runs (ref TEXT PRIMARY KEY, state TEXT NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0, writes INTEGER NOT NULL DEFAULT 0,
            next_at REAL NOT NULL DEFAULT 0, seen_at REAL NOT NULL, updated_at REAL NOT NULL,
            name TEXT, url TEXT, outcome TEXT, cause TEXT, confidence REAL, codes TEXT,
            severity TEXT, n_findings INTEGER, seconds REAL, wrote INTEGER, note TEXT, error TEXT);
        INSERT INTO runs (ref, state, seen_at, updated_at) VALUES ('old', 'done', 1, 1);
    """)
    db.commit()
    db.close()
    with StateStore(path, SCOPE) as st:
        assert st.add([("old", "e1")]) == 0  # the first ending seen is recorded, not re-audited
        assert st.get("old")["state"] == "done" and st.get("old")["ending"] == "e1"
        assert st.add([("old", "e2")]) == 1


def test_submit_is_bounded_and_queues_nothing_when_full(tmp_path):
    from mlaudit_core.service import PluginSource, QueueFull, WatchConfig, Watcher
    from mlaudit_core.settings import Settings

    with StateStore(tmp_path / "s.sqlite", SCOPE) as st:
        w = Watcher(PluginSource(plugin=None, scope=SCOPE), st, Settings(),
                    WatchConfig(max_pending=3))
        assert w.submit(["a", "b"]) == 2
        assert w.submit(["a"]) == 0  # already waiting
        with pytest.raises(QueueFull):
            w.submit(["c", "d"])  # would make 4
        assert st.pending() == 2 and st.get("c") is None
        assert w.submit(["c"]) == 1
        assert w.status() == {"pending": 3}
