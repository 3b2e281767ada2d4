"""``WandbLiveSource``: what ``mlaudit watch wandb --live`` follows (W&B public API).

* Listing: one ``api.runs(project, filters={"state": "running"})`` per poll (100 runs a page).
  Each run's summary carries every key's latest value with the run's latest ``_step`` and
  ``_timestamp``: the monitor's fast path checks a non-finite loss there before any history
  is read, and a run whose ``_step`` did not advance costs no further request.
* Tail: ``Run.scan_history(min_step=<last step seen + 1>)`` (wandb-core's ``HistoryPage`` /
  ``RunParquetHistory``: full fidelity, only the new steps); on first sight of a run an even
  sample of its history (``Run.history(samples=1000)``, the ``sampledHistory`` field), so a
  watcher that starts on a long run does not read all of it. ``systemMetrics`` (the newest
  system sample, with its ``_timestamp``) is the heartbeat.
* Console: ``Run.console_logs(last=200)`` (wandb >= 0.31: the ``logLines`` of the run page's
  Logs tab, which W&B serves for running runs too), the lines after the last one seen, when
  the run's ``heartbeatAt`` moved: the stall evidence (last lines) and LV007 (NCCL/OOM).
* Write-back while the run runs: tags only (``mlaudit:live-LV00x`` while an episode is open,
  ``mlaudit:live-ok`` after it cleared). The summary and files belong to the training
  process until it ends (wandb-core re-sends the whole summary), so the live history stays
  in the watcher's state file and the alerts; the post-hoc write-back drops every
  ``mlaudit:`` tag and writes the verdict when the run ends.
* Stop (``--stop-on``): ``Run.stop()``, W&B's own "Stop run" (the ``StopRun`` mutation:
  the server flags the run; the training process's SDK reads the flag and interrupts the
  script), plus the tag ``mlaudit:stop-requested`` that the ``mlaudit.hooks`` callbacks
  with ``stop_on=`` poll, so a run whose SDK does not act on the flag still stops at its
  next logging step.

Tested with the real wandb SDK (a training process logging ONLINE, ``wandb.Api`` here)
against tests/wandb_fake_server.py, which implements these GraphQL operations with the
real payload shapes (no W&B server can run in the tests).
"""

from __future__ import annotations

import logging

from mlaudit_core.live.sources import RunInfo, Tail

from .mapping import time_of

log = logging.getLogger("mlaudit.live")

LIVE_TAG_PREFIX = "mlaudit:live-"
STOP_TAG = "mlaudit:stop-requested"
#: History rows read on first sight of a run (an even sample of everything before).
FIRST_SAMPLES = 1000
PAGE_SIZE = 1000
#: Console lines read per run per poll (the newest; enough for the stall evidence and LV007).
CONSOLE_LINES = 200


def _num(v) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str) and v in ("NaN", "nan", "Infinity", "-Infinity", "inf", "-inf"):
        return float(v.replace("Infinity", "inf"))
    return None


def _ts(value) -> float | None:
    t = time_of(value)
    return None if t is None else t.timestamp()


class WandbLiveSource:
    """Running runs of one W&B project (``ENTITY/PROJECT``); see the module docstring."""

    tracker = "wandb"
    can_stop = True
    lists_latest_values = True

    def __init__(self, projects: list[str] | str, api=None, timeout: int | None = None) -> None:
        """``projects``: ``ENTITY/PROJECT`` names. Raises InputError on bad credentials."""
        from .online import make_api

        self.projects = [projects] if isinstance(projects, str) else list(projects)
        self.api = api or make_api(timeout)
        self._runs: dict[str, object] = {}
        self.requests = 0

    # -- listing ---------------------------------------------------------------------------
    def list_running(self) -> dict[str, RunInfo]:
        out: dict[str, RunInfo] = {}
        self.api.flush()  # wandb.Api caches listings: a live watcher needs fresh ones
        for project in self.projects:
            out.update(self._list(project))
        return out

    def _list(self, project: str) -> dict[str, RunInfo]:
        from .online import sdk_errors

        out: dict[str, RunInfo] = {}
        with sdk_errors(project):
            runs = list(
                self.api.runs(project, filters={"state": "running"}, per_page=100, lazy=False)
            )
            self.requests += 1
        for r in runs:
            summary = dict(r.summary_metrics or {})
            step = summary.get("_step")
            if not isinstance(step, (int, float)) or isinstance(step, bool):
                step = getattr(r, "lastHistoryStep", -1)
            wall = summary.get("_timestamp")
            latest, values = {}, {}
            if isinstance(step, (int, float)) and step >= 0 and isinstance(wall, (int, float)):
                for k, v in summary.items():
                    x = _num(v)
                    if k.startswith("_") or x is None:
                        continue
                    latest[k], values[k] = (int(step), float(wall)), x
            ref = f"{project}/{r.id}"
            self._runs[ref] = r
            out[ref] = RunInfo(
                ref=ref,
                name=r.name or r.id,
                url=_url(r),
                project=project,
                latest=latest,
                values=values,
                tags={t: "" for t in r.tags or []},
            )
        return out

    def status(self, ref: str) -> str:
        """``running``, ``ended`` or ``gone``."""
        from mlaudit_core.errors import InputError

        from .online import fetch_run, parse_ref

        try:
            r = fetch_run(self.api, parse_ref(ref))
        except InputError as exc:
            if "no such run" in str(exc):
                return "gone"
            raise
        return "running" if r.state in ("running", "pending", "preempting") else "ended"

    # -- reading ---------------------------------------------------------------------------
    def read(
        self,
        infos: list[RunInfo],
        cursors: dict[str, dict],
        keys: dict[str, set[str]] | None = None,
    ) -> dict[str, Tail]:
        """New history rows of each run since ``cursors[ref]["step"]`` (advanced in place)."""
        import inspect

        from .online import sdk_errors

        tails: dict[str, Tail] = {}
        for info in infos:
            tail = tails[info.ref] = Tail()
            r = self._runs.get(info.ref)
            if r is None:
                continue
            sysm = getattr(r, "system_metrics", None)
            if isinstance(sysm, str):
                import json

                try:
                    sysm = json.loads(sysm)
                except ValueError:
                    sysm = None
            if isinstance(sysm, dict) and isinstance(sysm.get("_timestamp"), (int, float)):
                tail.system_wall = float(sysm["_timestamp"])
            cur = cursors.setdefault(info.ref, {})
            self._console(info.ref, r, cur, tail)
            seen = cur.get("step")
            last = getattr(r, "lastHistoryStep", -1)
            if last is None or last < 0 or (seen is not None and last <= seen):
                continue
            only = None if keys is None else keys.get(info.ref)
            try:
                with sdk_errors(info.ref):
                    self.requests += 1
                    if seen is None:
                        rows = r.history(samples=FIRST_SAMPLES, pandas=False) or []
                    else:
                        fresh = (
                            {"use_cache": False}
                            if "use_cache" in inspect.signature(r.scan_history).parameters
                            else {}
                        )
                        rows = list(
                            r.scan_history(min_step=int(seen) + 1, page_size=PAGE_SIZE, **fresh)
                        )
            except Exception as exc:  # noqa: BLE001 - the cursor stays: read at the next poll
                log.warning("reading %s failed (%s); retried at the next poll", info.ref, exc)
                continue
            by_step: dict[int, dict] = {}
            for row in rows:  # an export overlapping the live tail repeats rows: one per step
                s = row.get("_step")
                if isinstance(s, (int, float)) and not isinstance(s, bool):
                    by_step.setdefault(int(s), row)
            for s in sorted(by_step):
                if seen is not None and s <= seen:
                    continue
                row = by_step[s]
                wall = row.get("_timestamp")
                wall = float(wall) if isinstance(wall, (int, float)) else None
                for k, v in row.items():
                    if k.startswith("_") or (only is not None and k not in only):
                        continue
                    x = _num(v)
                    if x is None:
                        continue
                    acc = tail.points.setdefault(k, ([], [], []))
                    acc[0].append(s)
                    acc[1].append(wall)
                    acc[2].append(x)
            if by_step:
                cur["step"] = max(max(by_step), int(seen) if seen is not None else -1)
            if seen is None and len(rows) >= FIRST_SAMPLES:
                tail.notes.append(f"first sight: an even sample of {len(rows)} history rows")
        for t in tails.values():  # None walls: the monitor's clock
            for k, (s, w, v) in list(t.points.items()):
                if any(x is None for x in w):
                    t.points[k] = (s, None, v)
        return tails

    def _console(self, ref: str, r, cur: dict, tail: Tail) -> None:
        """New console lines: ``Run.console_logs(last=CONSOLE_LINES)`` (wandb >= 0.31; the
        ``logLines`` the UI's Logs tab reads, live runs included), lines numbered above the last
        one seen. Read only when the run's ``heartbeatAt`` moved (console lines arrive through
        the file stream, which moves it), so an idle run costs no request."""
        if not hasattr(r, "console_logs"):
            return
        beat = str(getattr(r, "heartbeat_at", None) or "")
        if beat and cur.get("beat") == beat:
            return
        from .online import sdk_errors

        seen = int(cur.get("log_n", -1))
        try:
            with sdk_errors(ref):
                self.requests += 1
                logs = r.console_logs(last=CONSOLE_LINES)
                lines = [x for x in logs if x.number > seen]
        except Exception as exc:  # noqa: BLE001 - console lines are evidence, not the tail
            log.info("console of %s not read (%s); retried at the next poll", ref, exc)
            return
        total = getattr(getattr(logs, "last_response", None), "total_lines", 0) or 0
        if lines and seen >= 0 and lines[0].number > seen + 1:
            tail.notes.append(
                f"console: {lines[0].number - seen - 1} line(s) since the last poll "
                f"not read (the newest {CONSOLE_LINES} were)"
            )
        for x in lines:
            tail.console.append(("console", x.number + 1, x.content))
        if lines:
            cur["log_n"] = max(x.number for x in lines)
        elif total and seen < 0:
            cur["log_n"] = total - 1
        cur["beat"] = beat

    # -- writing ---------------------------------------------------------------------------
    def _tags(self, ref: str, change) -> None:
        from .online import fetch_run, parse_ref, sdk_errors
        from .writeback import _UPDATE_TAGS, _read_tags_notes, _write

        wrun = fetch_run(self.api, parse_ref(ref))
        with sdk_errors(ref):
            tags = list(_read_tags_notes(wrun)[0])
            new = change(tags)
            if new != tags:
                _write(wrun, _UPDATE_TAGS, tags=new)

    def write_live(self, ref: str, tag: str, doc: dict) -> None:
        """Tags ``mlaudit:live-<code>`` for each open episode (``mlaudit:live-ok`` when none);
        the user's tags and other ``mlaudit:`` tags are kept."""
        codes = sorted({e["code"] for e in doc.get("episodes", []) if e["state"] == "open"})
        mine = [f"{LIVE_TAG_PREFIX}{c}" for c in codes] or [f"{LIVE_TAG_PREFIX}ok"]
        self._tags(ref, lambda tags: [t for t in tags if not t.startswith(LIVE_TAG_PREFIX)] + mine)

    def end_live(self, ref: str) -> None:
        """Nothing: the post-hoc write-back replaces every ``mlaudit:`` tag with the verdict."""

    def request_stop(self, ref: str, message: str) -> str:
        from .online import fetch_run, parse_ref, sdk_errors

        self._tags(ref, lambda tags: tags if STOP_TAG in tags else [*tags, STOP_TAG])
        wrun = fetch_run(self.api, parse_ref(ref))
        if not hasattr(wrun, "stop"):  # wandb < 0.31: no public stop
            return (
                f"tag {STOP_TAG} set (this wandb SDK has no Run.stop(); mlaudit.hooks "
                "callbacks with stop_on= stop the run at their next step)"
            )
        with sdk_errors(ref):
            wrun.stop()
        return (
            f"W&B stop requested (Run.stop(), as the UI's Stop button) and tag {STOP_TAG} "
            "set (mlaudit.hooks callbacks stop the run at their next step)"
        )


def _url(run) -> str | None:
    try:
        return run.url
    except Exception:  # noqa: BLE001 - cosmetic
        return None
