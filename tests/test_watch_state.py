"""The watcher/batch state file: transitions, crash recovery, single-process lock, scope."""

from __future__ import annotations

import sqlite3
import sys

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
        st.finish(
            "r1", RunResult(ref="r1", outcome="diverged", cause="model_convergence", wrote=True)
        )
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
    st._lock_file.release()
    with StateStore(path, SCOPE) as again:
        assert again.recover() == ["claimed", "writing"]
        assert {r["ref"]: r["state"] for r in again.rows()} == {
            "claimed": "pending",
            "writing": "pending",
            "done": "done",
        }
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
        assert (row["state"], row["attempts"], row["ending"]) == (
            "pending",
            0,
            "2026-01-02T09:30:00",
        )
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
        w = Watcher(
            PluginSource(plugin=None, scope=SCOPE), st, Settings(), WatchConfig(max_pending=3)
        )
        assert w.submit(["a", "b"]) == 2
        assert w.submit(["a"]) == 0  # already waiting
        with pytest.raises(QueueFull):
            w.submit(["c", "d"])  # would make 4
        assert st.pending() == 2 and st.get("c") is None
        assert w.submit(["c"]) == 1
        assert w.status() == {"pending": 3}


def test_a_since_in_the_future_is_refused():
    from mlaudit_core.errors import InputError

    with pytest.raises(InputError, match=r"--since '2999-01-01': in the future"):
        parse_since("2999-01-01")
    assert parse_since("0001-01-01") == parse_since("all")  # before 1970: every run


def _watch(state: str, cwd):
    """``mlaudit watch mlflow`` up to its --state check (made before the tracker is asked)."""
    import os
    import subprocess
    from pathlib import Path

    mlaudit = str(Path(sys.executable).with_name("mlaudit"))
    env = {**os.environ, "MLFLOW_TRACKING_URI": "http://127.0.0.1:1", "COLUMNS": "300"}
    return subprocess.run(
        [mlaudit, "watch", "mlflow", "-e", "x", "--once", "--state", state],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env=env,
    )


def _one_error_line(p, text: str, after_log: bool = False) -> None:
    """Exit 2 and one error line containing ``text``; with ``after_log``, the watcher's INFO
    log lines may come first (the tracker was asked before the state file was opened)."""
    assert p.returncode == 2, p.stderr
    lines = p.stderr.splitlines()
    if after_log:
        assert all(" INFO " in line for line in lines[:-1]), p.stderr
        lines = lines[-1:]
    assert len(lines) == 1 and lines[0].startswith("mlaudit: error: "), p.stderr
    assert text in lines[0], p.stderr


def test_state_under_a_regular_file_is_one_line_and_creates_nothing(tmp_path):
    from mlaudit_core.errors import InputError

    (tmp_path / "afile").write_text("x")
    for rel in ("afile/x.sqlite", "afile/sub/x.sqlite"):
        with pytest.raises(InputError, match="a parent of the state file is not a directory"):
            StateStore(tmp_path / rel, SCOPE)
        _one_error_line(
            _watch(rel, tmp_path), f"{rel}: a parent of the state file is not a directory"
        )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


def test_state_on_a_device_is_refused_and_makes_no_journal():
    """/dev/null passed the header check (empty) and sqlite then made /dev/null-journal."""
    from pathlib import Path

    from mlaudit_core.errors import InputError

    journal = Path("/dev/null-journal")
    journal.unlink(missing_ok=True)
    with pytest.raises(InputError, match="/dev/null: not a regular file"):
        StateStore(Path("/dev/null"), SCOPE)
    _one_error_line(_watch("/dev/null", "/tmp"), "/dev/null: not a regular file")
    assert not journal.exists() and not Path("/dev/null.lock").exists()


def _unwritable_dir(d):
    """chmod ``d`` read-only; True when that denies writing (it does not for root)."""
    import os

    d.chmod(0o555)
    return not os.access(d, os.W_OK)


def test_new_state_in_a_read_only_place_is_one_line(tmp_path):
    """A chmod'ed directory; as root (chmod does not bind it) a place no one can create files
    in: /proc, where sqlite and the lock file both get ENOENT."""
    from pathlib import Path

    from mlaudit_core.errors import InputError

    ro = tmp_path / "ro"
    ro.mkdir()
    try:
        root = not _unwritable_dir(ro)
        if not root:
            path, text = ro / "x.sqlite", "is not writable"
        else:
            path, text = Path(f"/proc/mlaudit-test-{tmp_path.name}.sqlite"), "cannot create"
        for target in (path, path.parent / "sub" / "x.sqlite"):
            with pytest.raises(InputError, match=text) as exc:
                StateStore(target, SCOPE)
            assert str(target) in str(exc.value)
        _one_error_line(_watch(str(path), tmp_path), f"{path}: ", after_log=root)
        assert list(ro.iterdir()) == [] and not path.exists()
    finally:
        ro.chmod(0o755)


def test_existing_state_in_a_read_only_dir_is_one_line(tmp_path):
    """A valid state file whose lock file cannot be made: a read-only directory where chmod
    binds (not root); as root, a directory standing where the lock file should go (running as
    another user instead would depend on that user reaching the venv, which a CI checkout under
    a private temp dir does not allow)."""
    import shutil
    import tempfile
    from pathlib import Path

    from mlaudit_core.errors import InputError

    base = Path(tempfile.mkdtemp(prefix="mlaudit-ro-"))  # reachable by nobody, unlike tmp_path
    state = base / "ro" / "s.sqlite"
    try:
        base.chmod(0o755)
        state.parent.mkdir()
        with StateStore(state, SCOPE) as st:
            st.add(["r1"])
        (base / "ro" / "s.sqlite.lock").unlink()
        if _unwritable_dir(state.parent):  # not root: chmod binds
            with pytest.raises(InputError, match="is not writable"):
                StateStore(state, SCOPE)
            before = sorted(p.name for p in state.parent.iterdir())
            p = _watch(str(state), base)
            text = f"{state}: directory {state.parent} is not writable"
        else:  # root (chmod does not bind): the lock file cannot be created for another reason
            state.parent.chmod(0o755)
            (base / "ro" / "s.sqlite.lock").mkdir()
            before = sorted(p.name for p in state.parent.iterdir())
            p = _watch(str(state), base)
            text = f"{state}: cannot create the state file's lock"
        _one_error_line(p, text, after_log=text.endswith("lock"))
        assert sorted(p.name for p in state.parent.iterdir()) == before
        assert sqlite3.connect(state).execute("SELECT ref FROM runs").fetchall() == [("r1",)]
    finally:
        state.parent.chmod(0o755)
        shutil.rmtree(base)


def test_a_symlinked_state_file_shares_the_lock_of_its_target(tmp_path):
    target = tmp_path / "hook.sqlite"
    link = tmp_path / "link.sqlite"
    with StateStore(target, SCOPE):
        link.symlink_to(target)
        with pytest.raises(StateInUse, match="link.sqlite: state file is in use"):
            StateStore(link, SCOPE)
    with StateStore(link, SCOPE) as st:
        assert st.path == target
        with pytest.raises(StateInUse):
            StateStore(target, SCOPE)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "hook.sqlite",
        "hook.sqlite.lock",
        "link.sqlite",
    ]
