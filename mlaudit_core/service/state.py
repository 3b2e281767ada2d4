"""The state file of a watcher or a batch: which runs were seen, claimed, written and settled.

One small sqlite database (stdlib ``sqlite3``, WAL journal, ``synchronous=FULL``) per
watcher or batch. A run moves through::

    pending --claim--> claimed --begin_write--> writing --finish--> done
       ^                  |                        |
       +----release-------+      fail (retry)      +--> pending (next_at later) / failed

Every transition is one committed transaction and is conditional on the state it
leaves, so a worker that lost its claim (released at shutdown) cannot write.
A process killed at any moment leaves rows in ``claimed`` or ``writing``;
:meth:`StateStore.recover` puts them back to ``pending`` on the next start, and the
worker then asks the tracker whether the verdict is already there (see
``mlaudit_core.service.watcher``). ``writes`` counts the write-backs started per run,
``failures`` the attempts that failed, ``interrupts`` the attempts a dead process cut short.

One process at a time: the store holds an exclusive lock on ``<file>.lock``
(``filelock``: ``flock`` on POSIX, ``msvcrt`` locking on Windows), and a second watcher or batch on the same file gets :class:`StateInUse`.
A file also records its *scope* (tracker, store, experiments); opening it for another
scope raises :class:`StateScopeMismatch` instead of mixing two cursors.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import threading
import time
from collections.abc import Iterable
from pathlib import Path

import filelock

from ..errors import InputError
from ..redact import redact_text
from .task import RunResult

SCHEMA_VERSION = "1"
#: Run-controlled text columns, scrubbed of credentials before they are stored
_TEXT_COLS = ("name", "url", "note", "error")


def _redacted_row(result: RunResult) -> dict:
    row = result.to_row()
    for c in _TEXT_COLS:
        if isinstance(row.get(c), str):
            row[c] = redact_text(row[c])
    return row


UNSETTLED = ("pending", "claimed", "writing")

_DDL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    ref        TEXT PRIMARY KEY,
    state      TEXT NOT NULL,
    attempts   INTEGER NOT NULL DEFAULT 0,
    writes     INTEGER NOT NULL DEFAULT 0,
    next_at    REAL NOT NULL DEFAULT 0,
    seen_at    REAL NOT NULL,
    updated_at REAL NOT NULL,
    name       TEXT, url TEXT, outcome TEXT, cause TEXT, confidence REAL, codes TEXT,
    severity   TEXT, n_findings INTEGER, seconds REAL, wrote INTEGER, note TEXT, error TEXT,
    ending     TEXT,
    failures   INTEGER NOT NULL DEFAULT 0,
    interrupts INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS runs_state ON runs (state, next_at, seen_at);
"""
_RESULT_COLS = (
    "name",
    "url",
    "outcome",
    "cause",
    "confidence",
    "codes",
    "severity",
    "n_findings",
    "seconds",
    "wrote",
    "note",
    "error",
)


class StateInUse(InputError):
    """Another mlaudit process holds the state file."""


class StateScopeMismatch(InputError):
    """The state file belongs to another tracker, store or experiment set."""


#: The first 16 bytes of every SQLite 3 database (https://www.sqlite.org/fileformat.html).
SQLITE_HEADER = b"SQLite format 3\x00"


def _first_existing(path: Path) -> Path:
    """``path`` or its nearest ancestor that exists (``Path.exists`` is False under a file)."""
    for p in (path, *path.parents):
        if os.path.lexists(p):
            return p
    return Path(path.anchor or ".")


def _resolve(given: Path) -> Path:
    try:
        return given.resolve()
    except (OSError, RuntimeError) as exc:  # a symlink loop (RuntimeError before Python 3.13)
        raise InputError(f"{given}: cannot resolve the state file's path ({exc})") from None


def check_state_file(path: Path) -> None:
    """Refuse a ``--state`` path that cannot be a state file, creating nothing.

    A missing or empty file is fine (it becomes a new state file, with its missing parent
    directories); an existing one must be a readable and writable regular file starting
    with the SQLite header. A symlink is followed (the file it names is checked).

    Raises:
        InputError: the path is a directory or another non-regular file (``/dev/null``), a
            parent is not a directory, the directory cannot be written (the lock file and
            the journal live next to the state file), or the file cannot be read or is not
            an SQLite database.
    """
    given = Path(path)
    path = _resolve(given)
    if path.is_dir():
        raise InputError(f"{given}: is a directory, not an mlaudit state file")
    base = _first_existing(path)
    if base != path:  # a new file: its nearest existing ancestor must be a writable directory
        if not base.is_dir():
            raise InputError(f"{given}: a parent of the state file is not a directory ({base})")
        if not os.access(base, os.W_OK | os.X_OK):
            raise InputError(
                f"{given}: cannot create the state file (directory {base} is not writable)"
            )
        return
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        raise InputError(f"{given}: state file cannot be read ({exc.strerror or exc})") from None
    if not stat.S_ISREG(mode):
        raise InputError(f"{given}: not a regular file (a state file is an SQLite file)")
    if not os.access(path.parent, os.W_OK | os.X_OK):
        raise InputError(
            f"{given}: directory {path.parent} is not writable (the state file's "
            "lock and journal are created next to it)"
        )
    try:
        with open(path, "rb") as fh:
            head = fh.read(len(SQLITE_HEADER))
    except OSError as exc:
        raise InputError(f"{given}: state file cannot be read ({exc.strerror or exc})") from None
    if head and head != SQLITE_HEADER:
        raise InputError(f"{given}: not an mlaudit state file (not an SQLite database)")
    if not os.access(path, os.W_OK):
        raise InputError(f"{given}: state file is not writable")


class StateStore:
    """Runs and cursor of one watcher or batch, in a sqlite file.

    Args:
        path: the state file (created with its parent directory when missing). A symlink
            is resolved first: :attr:`path` is the file itself, and its lock
            ``<file>.lock`` sits next to it, so two names of one file share one lock.
        scope: one line naming what the file tracks, e.g.
            ``"mlflow http://host:5000 experiments=a,b"``.

    Raises:
        StateInUse: another process has the file open.
        StateScopeMismatch: the file was created for another scope.
        InputError: the file is not an mlaudit state file, or cannot be one there (see
            :func:`check_state_file`; also a lock file that cannot be created). Nothing
            this call created is left behind.

    Thread-safe: one connection, guarded by a lock (transactions are microseconds).
    """

    def __init__(self, path: Path, scope: str) -> None:
        scope = redact_text(scope)  # a tracking URI's password never reaches the file
        given = Path(path)
        check_state_file(given)  # before any directory, lock or database file is made
        # the file itself, not the name it was given: a symlink and its target share one lock
        self.path = _resolve(given)
        made_dirs = [p for p in reversed(self.path.parents) if not p.exists()]
        lock_path = self.path.with_name(self.path.name + ".lock")
        made_lock = not lock_path.exists()
        made_db = not self.path.exists()

        def undo() -> None:  # leave nothing behind that this call created
            if made_db:
                for suffix in ("", "-wal", "-shm", "-journal"):
                    Path(f"{self.path}{suffix}").unlink(missing_ok=True)
            if made_lock:
                lock_path.unlink(missing_ok=True)
            for d in reversed(made_dirs):
                try:
                    d.rmdir()
                except OSError:
                    break

        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            undo()
            raise InputError(
                f"{given}: cannot create the directory {self.path.parent} "
                f"({exc.strerror or type(exc).__name__})"
            ) from None
        try:
            open(lock_path, "a").close()  # errors here are named (a directory, no write access)
            self._lock_file = filelock.FileLock(str(lock_path), timeout=0, thread_local=False)
            self._lock_file.acquire()
        except filelock.Timeout:  # a TimeoutError, so an OSError: caught first
            raise StateInUse(
                f"{given}: state file is in use by another mlaudit watcher or "
                "batch (give each one its own --state)"
            ) from None
        except OSError as exc:
            undo()
            raise InputError(
                f"{given}: cannot create the state file's lock {lock_path} "
                f"({exc.strerror or type(exc).__name__})"
            ) from None
        self._mu = threading.Lock()
        try:
            self._db = sqlite3.connect(
                self.path, check_same_thread=False, isolation_level=None, timeout=30
            )
            self._db.row_factory = sqlite3.Row
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.executescript(_DDL)
            cols = {r[1] for r in self._db.execute("PRAGMA table_info(runs)")}
            if "ending" not in cols:  # a state file written before endings were recorded
                self._db.execute("ALTER TABLE runs ADD COLUMN ending TEXT")
            for col in ("failures", "interrupts"):  # before failures and kills were told apart
                if col not in cols:
                    self._db.execute(
                        f"ALTER TABLE runs ADD COLUMN {col} INTEGER NOT NULL DEFAULT 0"
                    )
        except sqlite3.DatabaseError as exc:
            if getattr(self, "_db", None) is not None:
                self._db.close()
            self._lock_file.release()
            undo()
            what = (
                "cannot open the state file"
                if isinstance(exc, sqlite3.OperationalError)
                else "not an mlaudit state file"
            )
            raise InputError(f"{given}: {what} ({exc})") from None
        stored = self.get_meta("scope")
        if self.get_meta("schema") is None:
            self.set_meta("schema", SCHEMA_VERSION)
            self.set_meta("scope", scope)
        elif stored != scope:
            self.close()
            raise StateScopeMismatch(
                f"{given}: state file belongs to '{stored}', not "
                f"'{scope}' (give this one its own --state)"
            )
        self.scope = scope

    def close(self) -> None:
        if getattr(self, "_db", None) is not None:
            self._db.close()
            del self._db
        if self._lock_file.is_locked:
            self._lock_file.release()

    def __enter__(self) -> StateStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- plumbing -------------------------------------------------------------------------
    def _exec(self, sql: str, args: Iterable = ()) -> sqlite3.Cursor:
        with self._mu:
            return self._db.execute(sql, tuple(args))

    def _one(self, sql: str, args: Iterable = ()):
        row = self._exec(sql, args).fetchone()
        return None if row is None else row[0]

    def get_meta(self, key: str) -> str | None:
        return self._one("SELECT value FROM meta WHERE key=?", (key,))

    def set_meta(self, key: str, value: str) -> None:
        self._exec(
            "INSERT INTO meta(key, value) VALUES(?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value=excluded.value",
            (key, value),
        )

    # -- runs -----------------------------------------------------------------------------
    def add(self, refs: Iterable[str | tuple[str, str | None]]) -> int:
        """Record runs as ``pending`` unless already known; returns how many were (re)queued.

        An item is a run reference, or ``(ref, ending)`` where ``ending`` is an opaque token
        naming one ending of the run (e.g. its end time). A run already settled (``done`` or
        ``failed``) that is listed again with a *different* ending goes back to ``pending``
        with its attempts reset: a resumed W&B run or a reset ClearML task that ended again
        is audited again. The same ending, or none, never requeues a run.
        """
        now = time.time()
        with self._mu:
            cur = self._db.cursor()
            cur.execute("BEGIN")
            n = 0
            for item in refs:
                ref, ending = (item, None) if isinstance(item, str) else item
                got = cur.execute(
                    "INSERT OR IGNORE INTO runs(ref, state, seen_at, updated_at, "
                    "ending) VALUES(?, 'pending', ?, ?, ?)",
                    (ref, now, now, ending),
                ).rowcount
                if not got and ending is not None:
                    got = cur.execute(
                        "UPDATE runs SET state='pending', attempts=0, failures=0, interrupts=0, "
                        "next_at=0, seen_at=?, "
                        "updated_at=?, ending=?, error=NULL WHERE ref=? AND state IN "
                        "('done', 'failed') AND ending IS NOT NULL AND ending<>?",
                        (now, now, ending, ref, ending),
                    ).rowcount
                    # a row from before endings were recorded: remember this one, no requeue
                    cur.execute(
                        "UPDATE runs SET ending=? WHERE ref=? AND ending IS NULL", (ending, ref)
                    )
                n += got
            cur.execute("COMMIT")
        return n

    def pending(self) -> int:
        """How many runs wait for an audit (``pending``, ``claimed`` or ``writing``)."""
        marks = ",".join("?" * len(UNSETTLED))
        return self._one(f"SELECT COUNT(*) FROM runs WHERE state IN ({marks})", UNSETTLED)

    def recover(self, states: tuple[str, ...] = ("claimed", "writing")) -> list[str]:
        """Put runs left in ``states`` by a previous process back to ``pending``; returns them.

        Each counts one *interruption* (the process died during its attempt), kept apart
        from failures: a killed watcher is not the run's fault. A run interrupted before
        goes to the back of the queue (``seen_at`` now; after its first interruption it is
        resumed first, as it was): a watcher restarted again and again (killed every few
        seconds, or by one run) still makes progress through the other runs, and one run's
        interruptions stay few (measured: with the oldest-first order, 100 random kills over
        200 runs left 5 runs interrupted 25 times each and most runs untouched)."""
        marks = ",".join("?" * len(states))
        refs = [
            r[0]
            for r in self._exec(
                f"SELECT ref FROM runs WHERE state IN ({marks}) ORDER BY ref", states
            )
        ]
        now = time.time()
        self._exec(
            f"UPDATE runs SET state='pending', next_at=0, updated_at=?, "
            f"seen_at=CASE WHEN interrupts>=1 THEN ? ELSE seen_at END, "
            f"interrupts=interrupts+1 WHERE state IN ({marks})",
            (now, now, *states),
        )
        return refs

    def ready(self, limit: int, exclude: Iterable[str] = ()) -> list[str]:
        """Up to ``limit`` pending runs whose retry time has come, oldest seen first."""
        skip = set(exclude)
        out = []
        for (ref,) in self._exec(
            "SELECT ref FROM runs WHERE state='pending' AND next_at<=? ORDER BY seen_at, ref",
            (time.time(),),
        ):
            if ref not in skip:
                out.append(ref)
                if len(out) >= limit:
                    break
        return out

    def retrying(self) -> int:
        """How many pending runs wait after a failed attempt (an error recorded)."""
        return self._one("SELECT COUNT(*) FROM runs WHERE state='pending' AND error IS NOT NULL")

    def waiting(self) -> tuple[int, float | None]:
        """Pending runs held back without a failure (another watcher's tracker-side claim, see
        :meth:`defer`): ``(how many, earliest retry time in epoch s)``."""
        row = self._exec(
            "SELECT COUNT(*), MIN(next_at) FROM runs WHERE state='pending' AND "
            "error IS NULL AND next_at>?",
            (time.time(),),
        ).fetchone()
        return (row[0] or 0, row[1]) if row else (0, None)

    def next_retry_at(self) -> float | None:
        """The earliest retry time (epoch seconds) of a pending run still in its backoff."""
        return self._one(
            "SELECT MIN(next_at) FROM runs WHERE state='pending' AND next_at>?", (time.time(),)
        )

    def _move(self, ref: str, frm: str, to: str, extra: str = "", args: Iterable = ()) -> bool:
        cur = self._exec(
            f"UPDATE runs SET state=?, updated_at=?{extra} WHERE ref=? AND state=?",
            (to, time.time(), *args, ref, frm),
        )
        return cur.rowcount == 1

    def claim(self, ref: str) -> bool:
        """``pending`` -> ``claimed`` (one more attempt). False when the run is not pending."""
        return self._move(ref, "pending", "claimed", ", attempts=attempts+1")

    def release(self, ref: str) -> bool:
        """``claimed`` -> ``pending``, the attempt not counted (shutdown before writing)."""
        return self._move(ref, "claimed", "pending", ", attempts=MAX(attempts-1, 0)")

    def defer(self, ref: str, retry_at: float, note: str | None = None) -> bool:
        """``claimed`` -> ``pending`` until ``retry_at`` (epoch s), no attempt counted (another
        watcher holds the run's tracker-side claim)."""
        return self._move(
            ref,
            "claimed",
            "pending",
            ", attempts=MAX(attempts-1, 0), next_at=?, note=?",
            (retry_at, note),
        )

    def begin_write(self, ref: str) -> bool:
        """``claimed`` -> ``writing``; counts one write. False when the claim was lost."""
        return self._move(ref, "claimed", "writing", ", writes=writes+1")

    def finish(self, ref: str, result: RunResult) -> None:
        """Settle a run as ``done`` with its verdict (from any state)."""
        row = _redacted_row(result)
        cols = ", ".join(f"{c}=?" for c in _RESULT_COLS)
        self._exec(
            f"UPDATE runs SET state='done', updated_at=?, {cols} WHERE ref=?",
            (time.time(), *(row[c] for c in _RESULT_COLS), ref),
        )

    def fail(self, ref: str, result: RunResult, retry_at: float | None) -> None:
        """Record a failed attempt: back to ``pending`` until ``retry_at`` (epoch seconds), or
        ``failed`` for good when ``retry_at`` is None."""
        row = _redacted_row(result)
        cols = ", ".join(f"{c}=?" for c in _RESULT_COLS)
        state = "failed" if retry_at is None else "pending"
        self._exec(
            f"UPDATE runs SET state=?, next_at=?, updated_at=?, failures=failures+1, "
            f"{cols} WHERE ref=?",
            (state, retry_at or 0, time.time(), *(row[c] for c in _RESULT_COLS), ref),
        )

    def requeue(self, states: tuple[str, ...]) -> int:
        """Put every run in ``states`` back to ``pending`` now (a resumed batch retries them)."""
        marks = ",".join("?" * len(states))
        return self._exec(
            f"UPDATE runs SET state='pending', next_at=0, updated_at=? WHERE state IN ({marks})",
            (time.time(), *states),
        ).rowcount

    def prune(self, before: float) -> int:
        """Forget settled runs last updated before ``before`` (epoch seconds)."""
        return self._exec(
            "DELETE FROM runs WHERE state IN ('done', 'failed') AND updated_at<?", (before,)
        ).rowcount

    def reset(self) -> None:
        """Forget every run and the cursor (``--fresh``)."""
        self._exec("DELETE FROM runs")
        self._exec("DELETE FROM meta WHERE key NOT IN ('schema', 'scope')")

    def get(self, ref: str) -> dict | None:
        row = self._exec("SELECT * FROM runs WHERE ref=?", (ref,)).fetchone()
        return dict(row) if row else None

    def rows(self, states: tuple[str, ...] | None = None) -> list[dict]:
        if states is None:
            cur = self._exec("SELECT * FROM runs ORDER BY seen_at, ref")
        else:
            marks = ",".join("?" * len(states))
            cur = self._exec(
                f"SELECT * FROM runs WHERE state IN ({marks}) ORDER BY seen_at, ref", states
            )
        return [dict(r) for r in cur.fetchall()]

    def results(self, refs: Iterable[str] | None = None) -> list[RunResult]:
        """Settled runs (``done``, ``failed``, and failed attempts still pending) as results."""
        want = None if refs is None else set(refs)
        out = []
        for row in self.rows():
            if want is not None and row["ref"] not in want:
                continue
            if row["state"] in ("done", "failed") or row["error"]:
                out.append(RunResult.from_row(row))
        return out

    def counts(self) -> dict[str, int]:
        return {r[0]: r[1] for r in self._exec("SELECT state, COUNT(*) FROM runs GROUP BY state")}


def default_state_path(kind: str, *parts: str) -> Path:
    """``./.mlaudit/<kind>-<parts>.sqlite``, with each part reduced to file-name characters."""
    safe = "-".join("".join(c if c.isalnum() or c in "._" else "_" for c in p) for p in parts if p)
    return Path(os.getcwd()) / ".mlaudit" / f"{kind}-{safe}.sqlite"
