"""The registry webhook's deliveries on disk: a bounded queue that survives a restart.

``mlaudit serve mlflow-webhook`` answers MLflow at once (202) and audits on a worker thread.
The deliveries in between live in the same kind of state file as the watchers'
(:class:`mlaudit_core.service.StateStore`: one sqlite file, WAL journal, ``synchronous=FULL``,
an exclusive ``<file>.lock`` so that two receivers never share one file, and a scope line
naming the registry), in their own table ``registry_deliveries``. One row per delivery id::

    queued --claim--> running --finish--> done
       ^                 |  \\
       +---- retry ------+   +--fail (attempts used up)--> failed

* **Accept** (:meth:`DeliveryQueue.add`) is one committed transaction before the 202: a
  receiver killed after answering still has the delivery. A delivery id already in the table
  is not queued again (MLflow's own retries resend the same id and signature; a replay too),
  nor is a model version that is queued, running or done under another id.
* **Bounded.** At most ``max_queue`` deliveries wait (queued or running); beyond that the
  receiver answers 503 and MLflow's retry or a later ``mlaudit batch mlflow`` picks the run
  up. Settled rows (done, failed) are kept for ``keep_s`` seconds (default one day, well over
  the 5-minute replay window the signature's timestamp allows) and at most
  :data:`KEEP_SETTLED` of them; older ones are deleted on each accept.
* **Restart.** :meth:`DeliveryQueue.recover` puts rows a killed receiver left ``running`` back
  to ``queued``, marked ``recovered``; before re-auditing such a delivery the auditor checks
  whether the model version already carries ``mlaudit.verdict`` (written last, so present
  means the first attempt completed) and then only marks it done: a restart neither loses a
  delivery nor audits one twice. A failed audit is retried ``max_attempts`` times with
  backoff (30 s, 60 s, 120 s ... capped at 15 min), then ``failed``.
* **Redacted.** Nothing of the request but the delivery id, the model name (verbatim: it is
  the address the worker tags, and the redactor takes names like ``sk-learn-...`` for a key),
  the version and the run id is stored; never the body, headers or signature. Error texts are
  scrubbed by :func:`mlaudit_core.redact.redact_text`.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path

from mlaudit_core.redact import redact_text

#: Settled rows kept at most (the newest), besides the time limit.
KEEP_SETTLED = 10_000
#: Seconds settled rows are kept (one day).
KEEP_S = 86_400.0
#: Retry backoff: first delay and cap, seconds.
BACKOFF_S, BACKOFF_MAX_S = 30.0, 900.0
SCHEMA = """
CREATE TABLE IF NOT EXISTS registry_deliveries (
    delivery    TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    version     TEXT NOT NULL,
    run_id      TEXT NOT NULL,
    state       TEXT NOT NULL,
    attempts    INTEGER NOT NULL DEFAULT 0,
    recovered   INTEGER NOT NULL DEFAULT 0,
    next_at     REAL NOT NULL DEFAULT 0,
    received_at REAL NOT NULL,
    updated_at  REAL NOT NULL,
    outcome     TEXT,
    error       TEXT
);
CREATE INDEX IF NOT EXISTS registry_deliveries_state ON registry_deliveries (state, next_at);
CREATE INDEX IF NOT EXISTS registry_deliveries_version ON registry_deliveries (name, version);
"""
WAITING = ("queued", "running")


@dataclass
class Delivery:
    """One queued delivery as the worker gets it (``recovered``: a killed receiver left it
    running)."""

    delivery: str
    name: str
    version: str
    run_id: str
    attempts: int = 0
    recovered: bool = False


class DeliveryQueue:
    """The ``registry_deliveries`` table of a :class:`~mlaudit_core.service.StateStore`.

    Args:
        store: the open state file (its lock keeps other receivers out).
        max_queue: deliveries waiting (queued + running) before :meth:`add` says ``full``.
        max_attempts: audits of one delivery before it is ``failed``.
        keep_s: seconds settled rows are kept.
    """

    def __init__(
        self, store, *, max_queue: int = 1000, max_attempts: int = 3, keep_s: float = KEEP_S
    ) -> None:
        self.store, self.max_queue, self.max_attempts, self.keep_s = (
            store,
            max_queue,
            max_attempts,
            keep_s,
        )
        self._db, self._mu = store._db, store._mu
        self.wake = threading.Event()
        with self._mu:
            self._db.executescript(SCHEMA)

    @property
    def path(self) -> Path:
        return self.store.path

    def add(
        self,
        delivery: str,
        name: str,
        version: str,
        run_id: str,
        now: float | None = None,
        *,
        again: bool = False,
    ) -> str:
        """Queue a delivery; returns ``queued``, ``seen`` (this delivery id is known),
        ``duplicate`` (this model version of this run is queued, running or, unless ``again``,
        done) or ``full``. ``again``: the version was checked to carry no verdict (a model
        deleted and created anew from the same run: same name, version and run)."""
        now = time.time() if now is None else now
        # the name is the model version's address, kept verbatim (not redacted): the redactor
        # takes names like 'sk-learn-classifier-...' for a key, and the worker tags that name
        with self._mu:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                if db.execute(
                    "SELECT 1 FROM registry_deliveries WHERE delivery = ?", (delivery,)
                ).fetchone():
                    db.execute("COMMIT")
                    return "seen"
                # the same version of the same run: a registered model deleted and created
                # again numbers its versions from 1 anew, from other runs (not a duplicate)
                states = "('queued', 'running')" if again else "('queued', 'running', 'done')"
                if db.execute(
                    "SELECT 1 FROM registry_deliveries WHERE name = ? AND version = ?"
                    f" AND run_id = ? AND state IN {states}",
                    (name, version, run_id),
                ).fetchone():
                    db.execute("COMMIT")
                    return "duplicate"
                waiting = db.execute(
                    "SELECT COUNT(*) FROM registry_deliveries WHERE state IN ('queued', 'running')"
                ).fetchone()[0]
                if waiting >= self.max_queue:
                    db.execute("COMMIT")
                    return "full"
                db.execute(
                    "INSERT INTO registry_deliveries (delivery, name, version, run_id, "
                    "state, received_at, updated_at) VALUES (?, ?, ?, ?, 'queued', ?, ?)",
                    (delivery, name, version, run_id, now, now),
                )
                self._prune(now)
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        self.wake.set()
        return "queued"

    def _prune(self, now: float) -> None:
        """Delete settled rows older than ``keep_s`` and beyond the newest KEEP_SETTLED."""
        self._db.execute(
            "DELETE FROM registry_deliveries WHERE state IN ('done', 'failed') AND updated_at < ?",
            (now - self.keep_s,),
        )
        self._db.execute(
            "DELETE FROM registry_deliveries WHERE state IN ('done', 'failed') AND delivery NOT IN"
            " (SELECT delivery FROM registry_deliveries WHERE state IN ('done', 'failed') "
            "ORDER BY updated_at DESC LIMIT ?)",
            (KEEP_SETTLED,),
        )

    def recover(self) -> int:
        """At start: rows left ``running`` by a killed receiver go back to ``queued``
        (marked recovered). Returns how many."""
        with self._mu:
            cur = self._db.execute(
                "UPDATE registry_deliveries SET state = 'queued', "
                "recovered = 1, next_at = 0 WHERE state = 'running'"
            )
            return cur.rowcount

    def claim(self, now: float | None = None) -> Delivery | None:
        """The oldest queued delivery due now, marked running; None when there is none."""
        now = time.time() if now is None else now
        with self._mu:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                row = db.execute(
                    "SELECT * FROM registry_deliveries WHERE state = 'queued' AND "
                    "next_at <= ? ORDER BY received_at LIMIT 1",
                    (now,),
                ).fetchone()
                if row is not None:
                    db.execute(
                        "UPDATE registry_deliveries SET state = 'running', attempts = "
                        "attempts + 1, updated_at = ? WHERE delivery = ?",
                        (now, row["delivery"]),
                    )
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        if row is None:
            return None
        return Delivery(
            row["delivery"],
            row["name"],
            row["version"],
            row["run_id"],
            row["attempts"] + 1,
            bool(row["recovered"]),
        )

    def finish(self, d: Delivery, outcome: str) -> None:
        with self._mu:
            self._db.execute(
                "UPDATE registry_deliveries SET state = 'done', outcome = ?, "
                "error = NULL, updated_at = ? WHERE delivery = ?",
                (outcome, time.time(), d.delivery),
            )

    def fail(self, d: Delivery, error: str) -> str:
        """Record a failed audit: ``queued`` again after a backoff, or ``failed`` when the
        attempts are used up. Returns the new state."""
        now = time.time()
        state = "failed" if d.attempts >= self.max_attempts else "queued"
        delay = min(BACKOFF_S * 2 ** (d.attempts - 1), BACKOFF_MAX_S)
        with self._mu:
            self._db.execute(
                "UPDATE registry_deliveries SET state = ?, error = ?, next_at = ?, "
                "updated_at = ? WHERE delivery = ?",
                (state, redact_text(error)[:500], now + delay, now, d.delivery),
            )
        return state

    def next_due(self) -> float | None:
        """When the next queued delivery is due (epoch seconds), None when none is queued."""
        with self._mu:
            row = self._db.execute(
                "SELECT MIN(next_at) FROM registry_deliveries WHERE state = 'queued'"
            ).fetchone()
        return row[0]

    def counts(self) -> dict[str, int]:
        """Rows per state (``queued``, ``running``, ``done``, ``failed``)."""
        out = dict.fromkeys(("queued", "running", "done", "failed"), 0)
        with self._mu:
            for state, n in self._db.execute(
                "SELECT state, COUNT(*) FROM registry_deliveries GROUP BY state"
            ):
                out[state] = n
        return out

    def rows(self) -> list[dict]:
        """Every row (for tests and ``/healthz``-style inspection), oldest first."""
        with self._mu:
            return [
                dict(r)
                for r in self._db.execute("SELECT * FROM registry_deliveries ORDER BY received_at")
            ]
