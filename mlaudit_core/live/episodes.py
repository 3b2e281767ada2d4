"""Live episodes: alert once per episode, cooldown, recovery, and what survives a restart.

An *episode* is one stretch of time during which a live condition (a slot of
:data:`~mlaudit_core.live.detectors.SLOT_CAUSE`) holds on a run. Its life::

    condition starts --> episode opened (row written, alert_sent=1) --> alert posted,
                         finding written onto the run, stop requested (--stop-on)
    condition clears --> episode closed (row written, recovered_sent=1) --> "recovered" posted
    run ends         --> open episodes closed without a message (the post-hoc audit follows)

Exactly-once across restarts: the state change is committed *before* the message is sent
(at most once, like the watcher's verdict notifications); a watcher killed between the
commit and the post loses that one message, never sends it twice. Each message carries a
delivery id derived from (run, slot, episode number, kind), so a receiver can also
deduplicate. An episode opening within ``cooldown_s`` of the previous episode of the same
slot closing is recorded but not alerted (nor its recovery), so a flapping condition
posts once.

The tables live in the watcher's own state file (``live_runs``, ``live_episodes``, created
on first use next to the watcher's ``runs`` table), through its connection and lock.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from dataclasses import dataclass

from ..redact import redact_obj, redact_text
from ..report import AuditReport, Cause, Finding, Outcome, RunRef, Verdict
from .detectors import SLOT_CAUSE, stop_name

log = logging.getLogger("mlaudit.live")

#: Default cooldown: Prometheus Alertmanager's default ``group_interval`` (5 min), the
#: usual gap before a changed alert group is notified again.
COOLDOWN_S = 300.0
#: Confidence of the alert's verdict block: a live finding is an observation of a condition
#: on the data seen so far, not a judgement of the run (the post-hoc audit judges it).
LIVE_CONFIDENCE = 1.0

_DDL = """
CREATE TABLE IF NOT EXISTS live_runs (
    ref TEXT PRIMARY KEY, status TEXT NOT NULL, state TEXT, cursor TEXT, info TEXT,
    first_seen REAL NOT NULL, updated_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS live_episodes (
    ref TEXT NOT NULL, slot TEXT NOT NULL, n INTEGER NOT NULL, code TEXT NOT NULL,
    state TEXT NOT NULL, opened_at REAL NOT NULL, closed_at REAL, alert_sent INTEGER NOT NULL,
    recovered_sent INTEGER NOT NULL DEFAULT 0, stop_requested INTEGER NOT NULL DEFAULT 0,
    finding TEXT NOT NULL, PRIMARY KEY (ref, slot, n));
"""


class LiveStore:
    """Per-run live state and episodes, in the tables of an opened
    :class:`~mlaudit_core.service.state.StateStore` (or a bare sqlite path for tests)."""

    def __init__(self, store) -> None:
        self.store = store
        self._db, self._mu = store._db, store._mu
        with self._mu:
            self._db.executescript(_DDL)

    def _q(self, sql: str, args=()):
        with self._mu:
            return self._db.execute(sql, tuple(args))

    # -- runs ------------------------------------------------------------------------------
    def load_run(self, ref: str) -> dict | None:
        row = self._q("SELECT * FROM live_runs WHERE ref=?", (ref,)).fetchone()
        if row is None:
            return None
        d = dict(row)
        for k in ("state", "cursor", "info"):
            d[k] = json.loads(d[k]) if d[k] else {}
        return d

    def save_runs(self, rows: list[tuple[str, str, dict, dict, dict]]) -> None:
        """Save ``(ref, status, state, cursor, info)`` rows in one transaction."""
        now = time.time()
        with self._mu:
            cur = self._db.cursor()
            cur.execute("BEGIN")
            for ref, status, state, cursor, info in rows:
                cur.execute(
                    "INSERT INTO live_runs(ref, status, state, cursor, info, first_seen, updated_at)"
                    " VALUES(?,?,?,?,?,?,?) ON CONFLICT(ref) DO UPDATE SET status=excluded.status,"
                    " state=excluded.state, cursor=excluded.cursor, info=excluded.info,"
                    " updated_at=excluded.updated_at",
                    # redacted as objects, then serialised: a shape run over JSON text could
                    # take a quote with it and leave a file no one can read back
                    (
                        ref,
                        status,
                        json.dumps(redact_obj(state)),
                        json.dumps(cursor),
                        json.dumps(redact_obj(info)),
                        now,
                        now,
                    ),
                )
            cur.execute("COMMIT")

    def prune(self, before: float) -> int:
        """Forget runs that stopped running before ``before`` (epoch s), with their episodes."""
        with self._mu:
            cur = self._db.cursor()
            cur.execute("BEGIN")
            old = [
                r[0]
                for r in cur.execute(
                    "SELECT ref FROM live_runs WHERE status<>'running' AND updated_at<?", (before,)
                )
            ]
            for ref in old:
                cur.execute("DELETE FROM live_episodes WHERE ref=?", (ref,))
                cur.execute("DELETE FROM live_runs WHERE ref=?", (ref,))
            cur.execute("COMMIT")
        return len(old)

    def refs(self, status: str = "running") -> list[str]:
        return [
            r[0]
            for r in self._q("SELECT ref FROM live_runs WHERE status=? ORDER BY ref", (status,))
        ]

    # -- episodes --------------------------------------------------------------------------
    def open_episodes(self, ref: str) -> dict[str, dict]:
        return {
            r["slot"]: dict(r)
            for r in self._q("SELECT * FROM live_episodes WHERE ref=? AND state='open'", (ref,))
        }

    def episodes(self, ref: str | None = None) -> list[dict]:
        if ref is None:
            cur = self._q("SELECT * FROM live_episodes ORDER BY ref, opened_at")
        else:
            cur = self._q("SELECT * FROM live_episodes WHERE ref=? ORDER BY opened_at", (ref,))
        return [dict(r) for r in cur]

    def last_closed(self, ref: str, slot: str) -> float | None:
        return self._q(
            "SELECT MAX(closed_at) FROM live_episodes WHERE ref=? AND slot=? AND state='closed'",
            (ref, slot),
        ).fetchone()[0]

    def open(self, ref: str, slot: str, finding: Finding, alert: bool, stop: bool) -> int:
        """Record a new open episode (committed before anything is sent); returns its number."""
        with self._mu:
            cur = self._db.cursor()
            cur.execute("BEGIN IMMEDIATE")
            n = (
                cur.execute(
                    "SELECT MAX(n) FROM live_episodes WHERE ref=? AND slot=?", (ref, slot)
                ).fetchone()[0]
                or 0
            ) + 1
            cur.execute(
                "INSERT INTO live_episodes(ref, slot, n, code, state, opened_at, "
                "alert_sent, stop_requested, finding) VALUES(?,?,?,?, 'open', ?,?,?,?)",
                (
                    ref,
                    slot,
                    n,
                    finding.code,
                    time.time(),
                    int(alert),
                    int(stop),
                    json.dumps(redact_obj(finding.model_dump(mode="json"))),
                ),
            )
            cur.execute("COMMIT")
        return n

    def close(self, ref: str, slot: str, n: int, recovered_sent: bool) -> bool:
        cur = self._q(
            "UPDATE live_episodes SET state='closed', closed_at=?, recovered_sent=? "
            "WHERE ref=? AND slot=? AND n=? AND state='open'",
            (time.time(), int(recovered_sent), ref, slot, n),
        )
        return cur.rowcount == 1


@dataclass
class LiveEvent:
    """One message to send: ``kind`` ``"alert"`` or ``"recovered"``."""

    ref: str
    slot: str
    n: int
    kind: str
    finding: Finding
    stop: bool = False

    @property
    def delivery(self) -> str:
        return hashlib.sha256(f"{self.ref}|{self.slot}|{self.n}|{self.kind}".encode()).hexdigest()[
            :32
        ]


def reconcile(
    lstore: LiveStore,
    ref: str,
    conditions: dict[str, Finding],
    *,
    stop_on: tuple[str, ...] = (),
    cooldown_s: float = COOLDOWN_S,
    now: float | None = None,
    close_missing: bool = True,
    seen_since: float | None = None,
    seen_step: int | None = None,
) -> list[LiveEvent]:
    """Open episodes for new conditions, close those that cleared; returns the messages due.

    ``conditions``: :meth:`LiveRun.conditions` of this poll. Console slots
    (``console:...``) never clear (a line that was printed stays printed).
    ``close_missing=False``: only open (a fast path that saw part of the conditions).
    An episode is not closed on evidence older than what opened it: one opened at or after
    ``seen_since`` (this poll's listing time: the fast-path thread opened it on a newer
    listing while this poll read its tails), or whose finding's step lies beyond
    ``seen_step`` (the newest step the detectors were fed: after a restart the saved
    summary may predate the point that opened the episode). Without this a NaN run once got
    alert, "recovered", alert (a poll whose tails ended before the NaN closed the episode).
    """
    now = time.time() if now is None else now
    events: list[LiveEvent] = []
    opened = lstore.open_episodes(ref)
    for slot, finding in conditions.items():
        if slot in opened:
            continue
        base = slot.split(":", 1)[0]
        last = lstore.last_closed(ref, slot)
        alert = last is None or now - last >= cooldown_s
        stop = alert and stop_name(finding.code) in stop_on
        n = lstore.open(ref, slot, finding, alert=alert, stop=stop)
        if alert:
            events.append(LiveEvent(ref, slot, n, "alert", finding, stop=stop))
        else:
            log.info(
                "run %s: %s again within the %.0f s cooldown: recorded, not alerted",
                ref,
                base,
                cooldown_s,
            )
    for slot, ep in opened.items():
        if not close_missing or slot in conditions or slot.startswith("console:"):
            continue
        if seen_since is not None and float(ep["opened_at"]) >= seen_since:
            continue
        finding = Finding.model_validate_json(ep["finding"])
        step = finding.facts.get("step")
        if (
            seen_step is not None
            and isinstance(step, (int, float))
            and not isinstance(step, bool)
            and seen_step < step
        ):
            continue
        send = bool(ep["alert_sent"])
        if lstore.close(ref, slot, ep["n"], recovered_sent=send) and send:
            events.append(LiveEvent(ref, slot, ep["n"], "recovered", finding))
    return events


def close_all(lstore: LiveStore, ref: str) -> int:
    """Close every open episode of an ended run without a message; returns how many."""
    n = 0
    for slot, ep in lstore.open_episodes(ref).items():
        n += lstore.close(ref, slot, ep["n"], recovered_sent=False)
    return n


# ----------------------------------------------------------------------------- messages


def alert_report(event: LiveEvent, run: RunRef) -> AuditReport:
    """The alert as an :class:`AuditReport` (outcome ``running``): the same finding and evidence
    models as a post-hoc report, so every renderer and the notification payloads read it."""
    from .._version import __version__

    f = event.finding
    base = event.slot.split(":", 1)[0]
    if event.kind == "recovered":
        summary = f"recovered: {f.name} ({f.code}) no longer holds; it was: {f.message}"
        cause = Cause.HEALTHY
        f = f.model_copy(update={"message": f"recovered: {f.message}"})
    else:
        summary = f"live: {f.message}"
        cause = Cause(SLOT_CAUSE.get(base, "inconclusive"))
    return AuditReport(
        tool_version=__version__,
        run=run,
        verdict=Verdict(
            outcome=Outcome.RUNNING, cause=cause, confidence=LIVE_CONFIDENCE, summary=summary
        ),
        findings=[f],
    )


def evidence_text(e) -> str:
    """One evidence item as one plain line, as the Markdown report words it
    (:func:`mlaudit_core.render.markdown._evidence`), unescaped (the channel escapes it)."""

    def num(x) -> str:
        if isinstance(x, float):
            return f"{x:.4g}"
        return "n/a" if x is None else str(x)

    vals = ", ".join(f"{n}={num(v)}" for n, v in (getattr(e, "values", None) or {}).items())
    if e.kind == "series":
        rng = f" steps {e.step_start}–{e.step_end}" if e.step_start is not None else ""
        return f"{e.metric}{rng}" + (f" ({vals})" if vals else "")
    if e.kind in ("log", "code"):
        return f"{e.source if e.kind == 'log' else e.path}:{e.line}: {e.text[:300]}"
    if e.kind == "config":
        return f"{e.key} = {e.value}"
    return e.text + (f" ({vals})" if vals else "")


def live_doc(ref: str, lstore: LiveStore, run: RunRef) -> dict:
    """The ``mlaudit/live.json`` document: every episode of the run, newest last."""
    eps = []
    for e in lstore.episodes(ref):
        eps.append(
            {
                "slot": e["slot"],
                "n": e["n"],
                "code": e["code"],
                "state": e["state"],
                "opened_at": e["opened_at"],
                "closed_at": e["closed_at"],
                "alerted": bool(e["alert_sent"]),
                "stop_requested": bool(e["stop_requested"]),
                "finding": json.loads(e["finding"]),
            }
        )
    return {
        "schema": "mlaudit.live/1",
        "run": run.model_dump(mode="json"),
        "updated_at": time.time(),
        "episodes": eps,
    }


def live_tag(ref: str, lstore: LiveStore) -> str:
    """The ``mlaudit.live`` tag value: open episodes by code and slot, or ``ok``."""
    open_ = [
        f"{e['code']} {e['slot'].split(':', 1)[0]}"
        for e in lstore.episodes(ref)
        if e["state"] == "open"
    ]
    return ("alert: " + ", ".join(open_)) if open_ else "ok (recovered)"


def send(event: LiveEvent, run: RunRef, settings) -> list:
    """Post ``event`` to the ``--notify`` targets; never raises. Returns the deliveries.

    The json body is :func:`mlaudit_core.notify.json_payload` with ``event`` set to
    ``mlaudit.live`` and a ``live`` block (kind, slot, episode, code); the
    ``X-Mlaudit-Event`` header is ``live``; the signature covers the body as for verdicts.
    Slack gets the verdict message with a ``mlaudit live`` heading.
    """
    from .. import notify as nt
    from ..settings import SettingsError

    try:
        targets, policy = nt.notify_config(
            getattr(settings, "notify", None) or {}, source=getattr(settings, "source", None)
        )
    except SettingsError as exc:
        log.warning("mlaudit: live notifications skipped: %s", exc)
        return []
    if not targets:
        return []
    report = alert_report(event, run)
    gate = alert_report(LiveEvent(event.ref, event.slot, event.n, "alert", event.finding), run)
    todo = [t for t in targets if t.skip_reason(gate) is None]
    if not todo:
        return []
    import requests

    out = []
    deadline = time.monotonic() + policy.total_s
    with requests.Session() as session:
        for t in todo:
            if t.kind == "slack":
                payload = nt.slack_payload(report)
                head = "mlaudit live alert" if event.kind == "alert" else "mlaudit live: recovered"
                payload["text"] = f"{head}: {payload['text']}"
                ev_lines = [
                    f"• {nt.slack_escape(redact_text(evidence_text(e)))}"
                    for e in report.findings[0].evidence[:8]
                ]
                if ev_lines:  # before the context block: the evidence of the report's finding
                    payload["blocks"].insert(
                        -1,
                        {
                            "type": "section",
                            "text": {
                                "type": "mrkdwn",
                                "text": nt._clip(
                                    "*Evidence*\n" + "\n".join(ev_lines), nt.SLACK_SECTION_MAX
                                ),
                            },
                        },
                    )
            else:
                payload = nt.json_payload(report, event.delivery)
                payload["event"] = "mlaudit.live"
                payload["live"] = {
                    "kind": event.kind,
                    "slot": event.slot,
                    "episode": event.n,
                    "code": event.finding.code,
                    "stop_requested": event.stop,
                    # the finding exactly as a report's findings[] holds it
                    # (docs/schema/report.schema.json#/$defs/Finding), redacted
                    "finding": nt._redact_all(report.findings[0].model_dump(mode="json")),
                }
            body = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()
            headers = {
                "Content-Type": "application/json; charset=utf-8",
                "User-Agent": nt.USER_AGENT,
            }
            if t.kind == "json":
                headers[nt.EVENT_HEADER] = "live"
                headers[nt.DELIVERY_HEADER] = event.delivery
                if t.secret:
                    headers[nt.SIGNATURE_HEADER] = nt.sign(body, t.secret)
            d = nt._deliver(session, t, body, headers, policy, deadline)
            if d.error:
                log.warning("mlaudit: live notification to %s failed: %s", d.target, d.error)
            out.append(d)
    return out
