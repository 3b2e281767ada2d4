"""Live detectors: cheap, incremental checks on the tail of a run that is still running.

A :class:`LiveRun` keeps a bounded summary of everything seen so far (running best of the
smoothed loss, the run's logging intervals, its early throughput, the last points) and is
fed only the points that are new since the last poll (:meth:`LiveRun.feed`). Memory and
time per point are O(1): nothing grows with the run's length, so the watcher can follow
hundreds of runs and the in-process hooks can call it on every log step (measured in
``benchmarks/live_poll.py``: per-call cost on a 1 M-point history).

:meth:`LiveRun.conditions` returns the conditions that hold *now*, one per slot, each as a
:class:`~mlaudit_core.report.Finding` with evidence (the same models as the post-hoc report).
Episodes, alerts and recovery are decided by :mod:`mlaudit_core.live.episodes`.

Codes and default thresholds (:class:`LiveThresholds`; each with its source):

========  =====================  ==========================================================
code      slot / name            holds while
========  =====================  ==========================================================
LV001     nonfinite              the training loss is NaN/inf (one point), or the grad norm
                                 is non-finite on ``nonfinite_grad_run`` 2 logged points in
                                 a row (one inf grad norm is a skipped fp16 overflow step);
                                 clears after ``clear_points`` 10 finite points
LV002     diverged               the smoothed loss (median of the last 5) stays above
                                 ``diverge_factor`` 2 x its running best for
                                 ``diverge_window`` 10 points in a row
LV003     loss_scale             the loss scale fell to ``min_loss_scale`` 1 or below after
                                 being above it
LV004     stall (stalled)        no new training point for max(``stall_factor`` 10 x the
                                 run's median logging interval, ``stall_floor_s``)
LV005     stall (heartbeat)      the same, while system metrics keep arriving (a hang)
LV006     throughput             throughput below (1 - ``throughput_drop``) 0.7 x the run's
                                 early median for ``throughput_window`` 10 points in a row
LV007     console                an NCCL watchdog/communicator error or an out-of-memory line
                                 in the run's console (one episode per signature and rank)
LV008     spike                  a loss spike (modified z > 3.5 and +50 % over the trailing
                                 median of 25 points, as post-hoc OP002) has not come back
                                 within ``spike_recovery_points`` 100 points; a spike that
                                 recovers inside that window is never alerted; clears when the
                                 loss returns to its pre-spike level
========  =====================  ==========================================================
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone

from ..report import FactEvidence, Finding, LogEvidence, SeriesEvidence, Severity
from ..roles import AliasTable, Role

#: code, finding name, family, severity, the ``--stop-on`` name that covers it
CODES: dict[str, tuple[str, str, Severity, str]] = {
    "LV001": ("live-nonfinite", "optimization", Severity.CRITICAL, "nan"),
    "LV002": ("live-divergence", "optimization", Severity.ERROR, "diverged"),
    "LV003": ("live-loss-scale-collapse", "optimization", Severity.ERROR, "loss_scale"),
    "LV004": ("live-stalled", "runtime", Severity.ERROR, "stalled"),
    "LV005": ("live-heartbeat-only", "runtime", Severity.ERROR, "stalled"),
    "LV006": ("live-throughput-collapse", "systems", Severity.WARNING, "throughput"),
    "LV007": ("live-console-failure", "runtime", Severity.CRITICAL, "console"),
    "LV008": ("live-unrecovered-spike", "optimization", Severity.ERROR, "spike"),
}
#: Names ``--stop-on`` / ``stop_on=`` accept.
STOP_NAMES = ("nan", "diverged", "loss_scale", "stalled", "throughput", "console", "spike")
#: Cause class of each slot, for the alert's verdict block.
SLOT_CAUSE = {
    "nonfinite": "model_convergence",
    "diverged": "model_convergence",
    "loss_scale": "model_convergence",
    "stall": "infra_runtime",
    "throughput": "infra_runtime",
    "console": "infra_runtime",
    "spike": "model_convergence",
}
#: Console signature categories that alert while a run is running.
CONSOLE_CATEGORIES = ("oom", "collective_timeout", "nccl")
#: Metric-key prefixes of system telemetry (MLflow's system metrics monitor logs ``system/...``;
#: W&B ``system.*``); such keys are the heartbeat, never the training signal.
SYSTEM_PREFIXES = ("system/", "system.", "sys/")


def parse_stop_on(value: str | Iterable[str] | None) -> tuple[str, ...]:
    """``"nan,diverged"`` or ``("nan",)`` -> a tuple of stop names.

    Raises:
        ValueError: a name that is not one of :data:`STOP_NAMES`.
    """
    if not value:
        return ()
    items = value.split(",") if isinstance(value, str) else list(value)
    out = []
    for it in items:
        name = str(it).strip().lower()
        if not name:
            continue
        if name not in STOP_NAMES:
            raise ValueError(f"unknown stop condition {name!r} (one of {', '.join(STOP_NAMES)})")
        if name not in out:
            out.append(name)
    return tuple(out)


@dataclass
class LiveThresholds:
    """Default live thresholds and their sources (all overridable).

    * ``diverge_factor`` 2.0: the divergence property of TheDeepChecker (Ben Braiek & Khomh
      2020: loss above twice its running minimum), the same factor as post-hoc OP001;
      ``diverge_window`` 10 points and the median-of-5 smoothing keep one spike from counting
      (OP001 smooths over 5 % of a finished run; a live tail has no "5 % of the run", so a
      fixed window is used). ``min_points`` 10 before the best means anything.
    * ``min_loss_scale`` 1.0: apex's ``min_loss_scale`` floor, as post-hoc OP007.
    * ``stall_factor`` 10 x the median logging interval, floored at ``stall_floor_s`` 600 s:
      PyTorch's default process-group timeout for NCCL is 10 min, so a rank that waits
      shorter than that may still be inside a legitimately slow collective or checkpoint.
    * ``throughput_drop`` 0.3 with ``throughput_window`` 10 points: post-hoc SY001's 30 %
      (run-to-run jitter on shared clusters is within 10-15 %); ``throughput_warmup`` 5 points
      skipped (compile/warm-up steps); the early median is over the first
      ``throughput_ref_points`` 200 points after them.
    * unrecovered spike (LV008): the same rule as post-hoc OP002 (``mlaudit_core/detectors/
      OP002.py``), fed one point at a time: a point is a spike when its modified z-score
      against the median of the previous ``spike_window`` 25 points exceeds ``spike_z`` 3.5
      (Iglewicz & Hoaglin 1993, MAD of the previous 25 residuals) *and* it is at least
      ``spike_min_rise`` 50 % above that median; spike points less than ``spike_window``
      points apart are one burst. The burst has recovered when a later point is within
      ``spike_recovery_tol`` 20 % of the pre-spike median (or within ``spike_recovery_range``
      2 % of the loss's range, initial level minus best, for losses near zero; a rise smaller
      than that is not a spike). Recovery is judged on the median of the last 5 points
      (LV002's smoothing), not one point as OP002 does on a finished run, so one low
      mini-batch does not end an episode (the real torch run with a lasting LR bump,
      tests/data/live/torch_lr_bump.py ``bump``: 5 single points of 246 were back at the old
      level, the first 15 steps before the median of 5 was). Unrecovered = ``spike_recovery_points`` 100 points after the
      burst's last spike without such a point: OP002's window, the "few hundred steps" a
      benign spike (hard batch, LR restart) takes to recover at the usual logging interval
      (PaLM, Chowdhery et al. 2022, sec. 5.1: spikes that do not recover are the ones that
      need a restart from an earlier checkpoint).
    * ``nonfinite_grad_run`` 2 and ``clear_points`` 10: dynamic loss scaling skips a step on an
      inf/NaN gradient and logs it (torch ``GradScaler``; HF Trainer logs that grad norm), so
      a single one is normal in fp16; a non-finite loss is never normal.
    """

    diverge_factor: float = 2.0
    diverge_window: int = 10
    min_points: int = 10
    min_loss_scale: float = 1.0
    stall_factor: float = 10.0
    stall_floor_s: float = 600.0
    throughput_drop: float = 0.3
    throughput_window: int = 10
    throughput_warmup: int = 5
    throughput_ref_points: int = 200
    nonfinite_grad_run: int = 2
    clear_points: int = 10
    spike_window: int = 25
    spike_z: float = 3.5
    spike_min_rise: float = 0.5
    spike_recovery_points: int = 100
    spike_recovery_tol: float = 0.2
    spike_recovery_range: float = 0.02


_SMOOTH = 5
_MAX_INTERVALS = 200
_CONSOLE_TAIL = 20


def _fmt(x: float | None) -> str:
    if x is None:
        return "-"
    if not math.isfinite(x):
        return str(x)
    return f"{x:.4g}"


def _iso(t: float | None) -> str | None:
    if t is None:
        return None
    return datetime.fromtimestamp(t, tz=timezone.utc).isoformat(timespec="seconds")


@dataclass
class _NonFinite:
    pending: bool = False
    bad_run: int = 0
    good_run: int = 0
    first_step: int | None = None
    first_value: str | None = None
    active: bool = False


@dataclass
class LiveRun:
    """The live summary of one run (JSON-serialisable with :meth:`to_json`/:meth:`from_json`).

    Feed it new points with :meth:`feed` (training keys) and :meth:`feed_system` (heartbeat
    keys), console lines with :meth:`feed_console`, then ask :meth:`conditions`.
    """

    loss_key: str | None = None
    grad_key: str | None = None
    scale_key: str | None = None
    thr_key: str | None = None
    thr_inverted: bool = False
    keys: list[str] = field(default_factory=list)
    n_loss: int = 0
    smooth: list[float] = field(default_factory=list)
    best: float | None = None
    best_step: int | None = None
    over_run: int = 0
    over_since: int | None = None
    last_loss: float | None = None
    last_loss_step: int | None = None
    nonfinite: dict[str, dict] = field(default_factory=dict)
    scale_max: float | None = None
    scale_last: float | None = None
    scale_step: int | None = None
    scale_collapsed_at: int | None = None
    thr_seen: int = 0
    thr_ref: list[float] = field(default_factory=list)
    thr_median: float | None = None
    thr_low_run: int = 0
    thr_low_since: int | None = None
    thr_last: float | None = None
    last_step: int | None = None
    last_wall: float | None = None
    last_obs: float | None = None
    last_sys_wall: float | None = None
    last_sys_obs: float | None = None
    intervals: list[float] = field(default_factory=list)
    iv_step: int | None = None
    iv_wall: float | None = None
    console_tail: list[str] = field(default_factory=list)
    console_hits: list[dict] = field(default_factory=list)
    n_points: int = 0
    sp_win: list[float] = field(default_factory=list)
    sp_res: list[float] = field(default_factory=list)
    sp_head: list[float] = field(default_factory=list)
    sp_min: float | None = None
    sp_event: dict | None = None
    sp_unreported: dict | None = None

    # -- serialisation ---------------------------------------------------------------------
    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, doc: dict | None) -> LiveRun:
        if not doc:
            return cls()
        known = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in doc.items() if k in known})

    # -- roles -----------------------------------------------------------------------------
    def _resolve(self, keys: Iterable[str], aliases: AliasTable | None = None) -> None:
        new = [k for k in keys if k not in self.keys and not is_system_key(k)]
        if not new:
            return
        self.keys = sorted({*self.keys, *new})
        table = aliases or AliasTable()
        self.loss_key = self.loss_key or table.resolve(Role.TRAIN_LOSS, self.keys)
        self.grad_key = self.grad_key or table.resolve(Role.GRAD_NORM, self.keys)
        self.scale_key = self.scale_key or table.resolve(Role.LOSS_SCALE, self.keys)
        if self.thr_key is None:
            k = table.resolve(Role.THROUGHPUT, self.keys)
            if k is None:
                k = table.resolve(Role.STEP_TIME, self.keys)
                self.thr_inverted = k is not None
            self.thr_key = k

    # -- feeding ---------------------------------------------------------------------------
    def feed(
        self,
        points: dict[str, tuple],
        now: float,
        thresholds: LiveThresholds,
        aliases: AliasTable | None = None,
    ) -> None:
        """Add new training points: ``{key: (steps, walls, values)}``, each sequence in step
        order (walls in epoch seconds, may be None). ``now``: the watcher's clock. The detector
        keys' points go to their detectors (:meth:`_feed_detectors`) and give the logging
        intervals (:meth:`_feed_intervals`); any other key's newest point moves the stall clock."""
        if not points:
            return
        self._resolve(points.keys(), aliases)
        merged: dict[int, float] = {}
        progress: list[tuple[int, float]] = []
        for key, (steps, walls, values) in points.items():
            if is_system_key(key):
                continue
            n = len(values)
            if not n:
                continue
            self.n_points += n
            self._feed_detectors(key, steps, values, thresholds)
            if key not in (self.loss_key, self.grad_key, self.scale_key, self.thr_key):
                # not a detector input: its newest point moves the stall clock, no per-point work
                w = walls[n - 1] if walls is not None and walls[n - 1] is not None else now
                progress.append((int(max(steps)), float(w)))
                continue
            if walls is not None:
                for i in range(n):
                    s, w = int(steps[i]), walls[i]
                    if w is not None and (s not in merged or w > merged[s]):
                        merged[s] = float(w)
            else:
                for i in range(n):
                    merged.setdefault(int(steps[i]), now)
        self._feed_intervals(merged, now)
        for step, wall in progress:
            self.feed_progress(step, wall, now)

    def _feed_detectors(self, key: str, steps, values, thresholds: LiveThresholds) -> None:
        """Each point of a detector key to its detector: the loss (divergence, spikes, non-finite),
        the grad norm (non-finite runs), the loss scale, the throughput."""
        n = len(values)
        if key == self.loss_key:
            for i in range(n):
                self._loss(int(steps[i]), float(values[i]), thresholds)
        if key == self.grad_key:
            for i in range(n):
                self._nonfinite(
                    key,
                    int(steps[i]),
                    float(values[i]),
                    thresholds,
                    need=thresholds.nonfinite_grad_run,
                )
        if key == self.scale_key:
            for i in range(n):
                self._scale(int(steps[i]), float(values[i]), thresholds)
        if key == self.thr_key:
            for i in range(n):
                self._throughput(int(steps[i]), float(values[i]), thresholds)

    def _feed_intervals(self, merged: dict[int, float], now: float) -> None:
        """The logging intervals from the detector keys' own points (the latest wall time of each
        new step, at most :data:`_MAX_INTERVALS` kept); each step moves the stall clock."""
        for s in sorted(merged):
            w = merged[s]
            if self.iv_step is None or s > self.iv_step:
                if self.iv_wall is not None and w > self.iv_wall:
                    self.intervals.append(w - self.iv_wall)
                    if len(self.intervals) > _MAX_INTERVALS:
                        del self.intervals[: len(self.intervals) - _MAX_INTERVALS]
                self.iv_step, self.iv_wall = s, max(w, self.iv_wall or w)
            self.feed_progress(s, w, now)

    def needed_keys(self, keys: Iterable[str], aliases: AliasTable | None = None) -> set[str]:
        """The training keys whose points the detectors read (loss, grad norm, loss scale,
        throughput or step time); the others only matter for progress, which a listing's
        latest step and time give (:meth:`feed_progress`)."""
        self._resolve(keys, aliases)
        return {k for k in (self.loss_key, self.grad_key, self.scale_key, self.thr_key) if k}

    def feed_progress(self, step: int, wall: float, now: float) -> None:
        """The newest training point of any key (from a run listing): moves the stall clock,
        not the logging intervals (those come from the points the detectors read)."""
        if (
            self.last_step is None
            or step > self.last_step
            or (self.last_wall is not None and wall > self.last_wall and step >= self.last_step)
        ):
            if self.last_wall is None or wall > self.last_wall:
                self.last_wall = wall
            if self.last_step is None or step > self.last_step:
                self.last_step = step
            self.last_obs = now

    def feed_system(self, wall: float | None, now: float) -> None:
        """A system-metric (heartbeat) point arrived, logged at ``wall`` (epoch s)."""
        if wall is not None and (self.last_sys_wall is None or wall > self.last_sys_wall):
            self.last_sys_wall = wall
            self.last_sys_obs = now

    def feed_console(self, lines: Iterable[tuple[str, int, str]]) -> None:
        """New console lines ``(source, line number, text)``; failure lines become hits."""
        from ..signatures import could_match, match_line

        for source, lineno, text in lines:
            if len(text) > 500:  # redacted before the cut: a cut credential loses its shape
                from ..redact import redact_text

                text = redact_text(text)
            self.console_tail.append(text[:500])
            if not could_match(text):
                continue
            for sig, groups in match_line(text):
                if sig.category not in CONSOLE_CATEGORIES:
                    continue
                rank = groups.get("rank") or _rank_of(text)
                self.console_hits.append(
                    {
                        "sig": sig.id,
                        "category": sig.category,
                        "description": sig.description,
                        "rank": rank,
                        "source": source,
                        "line": lineno,
                        "text": text[:500],
                    }
                )
        if len(self.console_tail) > _CONSOLE_TAIL:
            del self.console_tail[: len(self.console_tail) - _CONSOLE_TAIL]

    # -- per-point rules -------------------------------------------------------------------
    def _loss(self, step: int, v: float, t: LiveThresholds) -> None:
        assert self.loss_key is not None  # _loss runs for points of the loss key only
        self._nonfinite(self.loss_key, step, v, t, need=1)
        if not math.isfinite(v):
            return
        self.n_loss += 1
        self.last_loss, self.last_loss_step = v, step
        self._spike(step, v, t)
        self.smooth.append(v)
        if len(self.smooth) > _SMOOTH:
            del self.smooth[0]
        m = (
            sorted(self.smooth)[len(self.smooth) // 2]
            if len(self.smooth) % 2
            else statistics.median(self.smooth)
        )
        if self.n_loss < min(_SMOOTH, t.min_points):
            return
        if self.best is None or m < self.best:
            self.best, self.best_step = m, step
        if self.n_loss >= t.min_points and self.best > 0 and m > t.diverge_factor * self.best:
            if self.over_run == 0:
                self.over_since = step
            self.over_run += 1
        else:
            self.over_run, self.over_since = 0, None

    def _spike(self, step: int, v: float, t: LiveThresholds) -> None:
        """One finite loss point through the OP002 rule (see :class:`LiveThresholds`); O(window)."""
        w = t.spike_window
        if len(self.sp_head) < w:
            self.sp_head.append(v)
        self.sp_min = v if self.sp_min is None else min(self.sp_min, v)
        rng = max(statistics.median(self.sp_head) - self.sp_min, 0.0)
        base = statistics.median(self.sp_win) if self.sp_win else v
        resid = v - base
        mad = statistics.median(self.sp_res) if len(self.sp_res) >= 3 else 0.0
        z = 0.6745 * resid / mad if mad > 0 else 0.0
        is_spike = (
            len(self.sp_win) >= w
            and z > t.spike_z
            and base > 0
            and v > base * (1 + t.spike_min_rise)
            and resid >= t.spike_recovery_range * rng
        )
        self.sp_win.append(v)
        self.sp_res.append(abs(resid))
        if len(self.sp_win) > w:
            del self.sp_win[0]
        if len(self.sp_res) > w:
            del self.sp_res[0]
        ev = self.sp_event
        if is_spike and ev is None:
            tol = max(base * t.spike_recovery_tol, t.spike_recovery_range * rng)
            self.sp_event = {
                "step": step,
                "value": v,
                "ref": base,
                "tol": tol,
                "last_i": self.n_loss,
                "last_step": step,
                "after": 0,
                "active": False,
                "peak": v,
            }
            return
        if ev is None:
            return
        if is_spike and not ev["active"] and self.n_loss - ev["last_i"] <= w:
            # the same burst (OP002: spike points closer than the window belong together):
            # the recovery window restarts after its last spike
            ev["last_i"], ev["last_step"], ev["after"] = self.n_loss, step, 0
            ev["peak"] = max(ev["peak"], v)
            return
        level = statistics.median(self.smooth)  # median of the last 5, as LV002
        if level <= ev["ref"] + ev["tol"]:
            self.sp_event = None  # recovered (before or after the alert)
            if ev["active"] and not ev.get("reported"):  # unrecovered, then back within one poll
                ev["recovered_step"] = step
                self.sp_unreported = ev
            return
        ev["after"] += 1
        ev["last_value"] = v
        if not ev["active"] and ev["after"] >= t.spike_recovery_points:
            ev["active"] = True
            ev["since_step"] = step

    def _nonfinite(self, key: str, step: int, v: float, t: LiveThresholds, need: int) -> None:
        st = self.nonfinite.get(key)
        if st is None:  # a plain dict (JSON state), the fields of _NonFinite
            st = self.nonfinite[key] = asdict(_NonFinite())
        if math.isfinite(v):
            st["good_run"] += 1
            st["bad_run"] = 0
            if st["active"] and st["good_run"] >= t.clear_points:
                st["active"] = False
        else:
            st["bad_run"] += 1
            st["good_run"] = 0
            if st["bad_run"] >= need and not st["active"]:
                st["active"] = True
                st["pending"] = True  # reported by the next conditions() even if it clears first
                st["first_step"] = step
                st["first_value"] = str(v)

    def _scale(self, step: int, v: float, t: LiveThresholds) -> None:
        if not math.isfinite(v):
            return
        if self.scale_max is None or v > self.scale_max:
            self.scale_max = v
        self.scale_last, self.scale_step = v, step
        if self.scale_max > t.min_loss_scale and v <= t.min_loss_scale:
            if self.scale_collapsed_at is None:
                self.scale_collapsed_at = step
        elif v > t.min_loss_scale:
            self.scale_collapsed_at = None

    def _throughput(self, step: int, v: float, t: LiveThresholds) -> None:
        if not math.isfinite(v) or v <= 0:
            return
        if self.thr_inverted:
            v = 1.0 / v
        self.thr_seen += 1
        self.thr_last = v
        if self.thr_seen <= t.throughput_warmup:
            return
        if len(self.thr_ref) < t.throughput_ref_points:
            self.thr_ref.append(v)
            self.thr_median = None
            return
        if self.thr_median is None:  # the reference is fixed once full: its median once
            self.thr_median = statistics.median(self.thr_ref)
        ref = self.thr_median
        if v < (1 - t.throughput_drop) * ref:
            if self.thr_low_run == 0:
                self.thr_low_since = step
            self.thr_low_run += 1
        else:
            self.thr_low_run, self.thr_low_since = 0, None

    # -- conditions ------------------------------------------------------------------------
    def latest_conditions(
        self, latest: dict[str, tuple[int, float, float]], aliases: AliasTable | None = None
    ) -> dict[str, Finding]:
        """The fast path: conditions visible in each key's *latest* point alone
        (``{key: (step, wall, value)}``, as a tracker's run listing carries them), before the
        tail is read. Only a non-finite training loss qualifies (one point is enough for it);
        the state is not changed (the tail read feeds the same points)."""
        self._resolve(latest.keys(), aliases)
        if self.loss_key is None or self.loss_key not in latest:
            return {}
        step, _wall, v = latest[self.loss_key]
        if math.isfinite(v):
            return {}
        return {
            "nonfinite": _finding(
                "LV001",
                f"{self.loss_key} is {v} at step {step} while the run is still running",
                [
                    SeriesEvidence(
                        metric=self.loss_key,
                        step_start=step,
                        step_end=step,
                        values={"first_nonfinite_step": step},
                        note=f"latest value {v} (from the run listing)",
                    )
                ],
                key=self.loss_key,
                step=step,
                value=str(v),
            )
        }

    def median_interval(self) -> float | None:
        return statistics.median(self.intervals) if len(self.intervals) >= 3 else None

    def stall_threshold(self, t: LiveThresholds) -> float:
        med = self.median_interval()
        return max(t.stall_factor * med, t.stall_floor_s) if med else t.stall_floor_s

    def stall_age(self, now: float) -> float | None:
        """Seconds without a new training point: the smaller of the run's own clock (its last
        point's time) and ours (when we last saw one), so a skewed writer clock cannot fake a
        stall; None before any point."""
        ages = [now - x for x in (self.last_wall, self.last_obs) if x is not None]
        return max(0.0, min(ages)) if ages else None

    def conditions(
        self,
        now: float,
        t: LiveThresholds,
        running: bool = True,
        status_known: bool = True,
        no_console: str | None = None,
    ) -> dict[str, Finding]:
        """The live conditions that hold now: ``{slot: Finding}`` (slots of :data:`SLOT_CAUSE`;
        console hits are returned under ``console:<signature>:<rank>`` and consumed).

        ``running``: the tracker says the run is running (False: no stall is judged).
        ``status_known=False`` (TensorBoard: no run status): a run that stopped writing may
        simply have ended, so only a stall with a heartbeat (LV005: console still growing) is
        reported, never a plain LV004.
        ``no_console``: why the tracker has no console to show (MLflow): said in a stall's
        evidence and message instead of the last console lines. One method per condition
        (``_nonfinite_now`` ... ``_console_now``), in this order."""
        out: dict[str, Finding] = {}
        self._nonfinite_now(out)
        self._diverged_now(out, t)
        self._spike_now(out, t)
        self._loss_scale_now(out, t)
        self._stall_now(out, now, t, running, status_known, no_console)
        self._throughput_now(out, t)
        self._console_now(out)
        return out

    def _nonfinite_now(self, out: dict[str, Finding]) -> None:
        """LV001: a training metric non-finite while the run is running (the first one; a value finite
        again since is still reported once)."""
        for key, st in self.nonfinite.items():
            if st.get("active") or st.get("pending"):
                cleared = "" if st.get("active") else " (finite again since)"
                st["pending"] = False
                out["nonfinite"] = _finding(
                    "LV001",
                    f"{key} is {st['first_value']} at step {st['first_step']} while the "
                    f"run is still running{cleared}",
                    [
                        SeriesEvidence(
                            metric=key,
                            step_start=st["first_step"],
                            step_end=self.last_step,
                            values={"first_nonfinite_step": st["first_step"]},
                            note=f"first non-finite value {st['first_value']}",
                        )
                    ],
                    key=key,
                    step=st["first_step"],
                    value=st["first_value"],
                )
                break

    def _diverged_now(self, out: dict[str, Finding], t: LiveThresholds) -> None:
        """LV002: the smoothed loss above ``diverge_factor`` x its best for ``diverge_window`` points."""
        if self.over_run >= t.diverge_window and self.best:
            ratio = statistics.median(self.smooth) / self.best
            out["diverged"] = _finding(
                "LV002",
                f"{self.loss_key} (median of the last {len(self.smooth)}: "
                f"{_fmt(statistics.median(self.smooth))}) has stayed above {t.diverge_factor:g} x its "
                f"best {_fmt(self.best)} (step {self.best_step}) for {self.over_run} points since "
                f"step {self.over_since}",
                [
                    SeriesEvidence(
                        metric=self.loss_key,
                        step_start=self.best_step,
                        step_end=self.last_loss_step,
                        values={"best": self.best, "last": self.last_loss, "ratio": ratio},
                    )
                ],
                best=self.best,
                best_step=self.best_step,
                since_step=self.over_since,
                ratio=ratio,
                factor=t.diverge_factor,
            )

    def _spike_now(self, out: dict[str, Finding], t: LiveThresholds) -> None:
        """LV008: a loss spike that did not come back within ``spike_recovery_points`` (reported once)."""
        sp = (
            self.sp_event
            if self.sp_event is not None and self.sp_event.get("active")
            else self.sp_unreported
        )
        if sp is not None:
            sp["reported"] = True
            self.sp_unreported = None
            since = (
                f"; back at step {sp['recovered_step']}"
                if sp.get("recovered_step") is not None
                else ""
            )
            out["spike"] = _finding(
                "LV008",
                f"{self.loss_key} spiked at step {sp['step']} ({_fmt(sp['value'])} vs "
                f"trailing median {_fmt(sp['ref'])}) and did not come back within "
                f"{t.spike_recovery_points} points (last {_fmt(sp.get('last_value'))}; recovered "
                f"means a median of 5 points <= {_fmt(sp['ref'] + sp['tol'])}){since}",
                [
                    SeriesEvidence(
                        metric=self.loss_key,
                        step_start=sp["step"],
                        step_end=self.last_loss_step,
                        values={
                            "value": sp["value"],
                            "trailing_median": sp["ref"],
                            "peak": sp["peak"],
                            "last": sp.get("last_value"),
                            "recovered_after_points": None,
                        },
                        note=f"no point back within {_fmt(sp['tol'])} of the pre-spike "
                        f"median in {sp['after']} points",
                    )
                ],
                step=sp["step"],
                value=sp["value"],
                trailing_median=sp["ref"],
                points_after=sp["after"],
                recovery_points=t.spike_recovery_points,
            )

    def _loss_scale_now(self, out: dict[str, Finding], t: LiveThresholds) -> None:
        """LV003: the loss scale collapsed to ``min_loss_scale`` or below."""
        if self.scale_collapsed_at is not None:
            out["loss_scale"] = _finding(
                "LV003",
                f"{self.scale_key} fell from {_fmt(self.scale_max)} to "
                f"{_fmt(self.scale_last)} (<= {t.min_loss_scale:g}) at step {self.scale_collapsed_at}: "
                "nearly every step overflows and is skipped",
                [
                    SeriesEvidence(
                        metric=self.scale_key,
                        step_start=self.scale_collapsed_at,
                        step_end=self.scale_step,
                        values={"max": self.scale_max, "last": self.scale_last},
                    )
                ],
                step=self.scale_collapsed_at,
                max=self.scale_max,
                last=self.scale_last,
            )

    def _stall_now(
        self,
        out: dict[str, Finding],
        now: float,
        t: LiveThresholds,
        running: bool,
        status_known: bool,
        no_console: str | None,
    ) -> None:
        """LV005 / LV004: no new training step for longer than the stall threshold while the run is
        running: a hang when system metrics keep arriving, else a stall (only with a known
        run status); the last console lines (or why there are none) as evidence."""
        age = self.stall_age(now)
        limit = self.stall_threshold(t)
        if running and age is not None and age >= limit:
            med = self.median_interval()
            ev: list[FactEvidence | LogEvidence] = [
                FactEvidence(
                    text=f"last training step {self.last_step} at {_iso(self.last_wall)}; no new "
                    f"step for {age:.0f} s (threshold {limit:.0f} s)",
                    values={
                        "last_step": self.last_step,
                        "last_wall_time": _iso(self.last_wall),
                        "seconds_without_step": round(age, 1),
                        "threshold_s": round(limit, 1),
                        "median_interval_s": None if med is None else round(med, 3),
                    },
                )
            ]
            for i, line in enumerate(self.console_tail[-5:]):
                ev.append(LogEvidence(source="console (last lines)", line=i + 1, text=line))
            console_note = ""
            if not self.console_tail:
                ev.append(
                    FactEvidence(
                        text=no_console
                        or "no console line received from the run so far: no last lines to show"
                    )
                )
                if no_console:
                    console_note = f"; {no_console}"
            sys_alive = (
                self.last_sys_wall is not None
                and self.last_wall is not None
                and self.last_sys_wall > self.last_wall + max(med or 0, 1.0)
                and self.last_sys_obs is not None
                and now - self.last_sys_obs < limit
            )
            if sys_alive:
                out["stall"] = _finding(
                    "LV005",
                    f"training metrics stopped at step {self.last_step} "
                    f"({age:.0f} s ago) while system metrics keep arriving (last at "
                    f"{_iso(self.last_sys_wall)}): the process is alive but not training (a hang)"
                    f"{console_note}",
                    ev,
                    last_step=self.last_step,
                    seconds=age,
                    threshold_s=limit,
                    last_system_time=_iso(self.last_sys_wall),
                )
            elif status_known:
                out["stall"] = _finding(
                    "LV004",
                    f"no new training step for {age:.0f} s (threshold {limit:.0f} s = "
                    f"max({t.stall_factor:g} x median interval "
                    f"{'-' if med is None else f'{med:.3g} s'}, {t.stall_floor_s:g} s)) while the "
                    f"run is still running; last step {self.last_step} at {_iso(self.last_wall)}"
                    f"{console_note}",
                    ev,
                    last_step=self.last_step,
                    seconds=age,
                    threshold_s=limit,
                )

    def _throughput_now(self, out: dict[str, Finding], t: LiveThresholds) -> None:
        """LV006: throughput below ``1 - throughput_drop`` of the run's early median for
        ``throughput_window`` points."""
        if self.thr_low_run >= t.throughput_window and self.thr_ref and self.thr_last is not None:
            ref = statistics.median(self.thr_ref)
            what = f"1/{self.thr_key}" if self.thr_inverted else self.thr_key
            out["throughput"] = _finding(
                "LV006",
                f"throughput ({what}) {_fmt(self.thr_last)} is below "
                f"{1 - t.throughput_drop:g} x the run's early median {_fmt(ref)} for "
                f"{self.thr_low_run} points since step {self.thr_low_since}",
                [
                    SeriesEvidence(
                        metric=self.thr_key,
                        step_start=self.thr_low_since,
                        step_end=self.last_step,
                        values={
                            "early_median": ref,
                            "last": self.thr_last,
                            "ratio": self.thr_last / ref,
                        },
                    )
                ],
                early_median=ref,
                last=self.thr_last,
                since_step=self.thr_low_since,
            )

    def _console_now(self, out: dict[str, Finding]) -> None:
        """LV007: each console failure signature seen since the last call, by signature and rank
        (consumed)."""
        for hit in self.console_hits:
            where = f" on rank {hit['rank']}" if hit.get("rank") is not None else ""
            out[f"console:{hit['sig']}:{hit.get('rank')}"] = _finding(
                "LV007",
                f"{hit['description']}{where} in the running run's console "
                f"({hit['source']} line {hit['line']})",
                [LogEvidence(source=hit["source"], line=hit["line"], text=hit["text"])],
                signature=hit["sig"],
                category=hit["category"],
                rank=hit.get("rank"),
            )
        self.console_hits = []


def _rank_of(text: str) -> str | None:
    import re

    m = re.match(r"^\s*\[(?:rank|default)(\d+)\]:|^\s*rank(\d+):|^\s*(\d{1,4}):\s", text)
    if m:
        return next(g for g in m.groups() if g is not None)
    m = re.search(r"\[Rank (\d+)\]|\brank[ =:]+(\d+)", text, re.IGNORECASE)
    return next((g for g in m.groups() if g is not None), None) if m else None


def is_system_key(key: str) -> bool:
    k = key.lower()
    return k.startswith(SYSTEM_PREFIXES)


def _finding(code: str, message: str, evidence: list, **facts) -> Finding:
    name, family, severity, _stop = CODES[code]
    return Finding(
        code=code,
        name=name,
        severity=severity,
        message=message,
        evidence=evidence,
        facts={k: v for k, v in facts.items()},
        family=family,
    )


def stop_name(code: str) -> str:
    """The ``--stop-on`` name that covers a live code (``LV001`` -> ``nan``)."""
    return CODES[code][3]
