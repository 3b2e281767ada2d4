"""In-process live checks for the ``mlaudit.hooks`` callbacks (``stop_on=...``).

:class:`LiveGuard` runs the cheap live detectors on each log step inside the training
process (the same :class:`~mlaudit_core.live.detectors.LiveRun` the watcher uses; O(1) per
call whatever the run's length: ``benchmarks/live_poll.py`` measures it on a 1 M-point
history) and tells the callback to set the framework's own stop flag. It also honours
``mlaudit.stop_requested``, the tag a live watcher run with ``--stop-on`` sets on an MLflow
run (MLflow has no remote stop), and ``mlaudit:stop-requested`` on an online W&B run (next
to W&B's own ``Run.stop()``): a daemon thread reads the active run's tags every
``tag_check_s`` seconds, so the training loop never waits on the tracker.

Stall conditions cannot be seen from inside a stalled loop; in-process ``stop_on`` covers
``nan``, ``diverged``, ``loss_scale`` and ``throughput`` (``stalled`` only through the tag).
"""

from __future__ import annotations

import json
import logging
import re
import sys
import threading
import time
from collections.abc import Iterable, Mapping

from ..report import Finding, LogEvidence
from .detectors import CODES, LiveRun, LiveThresholds, parse_stop_on, stop_name

log = logging.getLogger("mlaudit.live")

STOP_TAG = "mlaudit.stop_requested"
#: The tag a W&B live watcher adds with ``--stop-on`` (W&B tags are plain strings).
WANDB_STOP_TAG = "mlaudit:stop-requested"
LIVE_TAG = "mlaudit.live"


def _number(v) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    item = getattr(v, "item", None)  # a 0-d torch/numpy/tf value
    if item is not None:
        try:
            x = item()
        except Exception:  # noqa: BLE001 - not a scalar
            return None
        return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else None
    return None


class LiveGuard:
    """Per-log-step live checks with a stop decision.

    Args:
        stop_on: stop names (``"nan,diverged"`` or a sequence; see
            :data:`~mlaudit_core.live.detectors.STOP_NAMES`).
        thresholds: :class:`LiveThresholds` (defaults documented there).
        honour_stop_tag: also stop when the active MLflow run carries ``mlaudit.stop_requested``.
        tag_check_s: seconds between two reads of that tag (in a daemon thread).
        write_back: write the finding onto the active MLflow run (tag ``mlaudit.live``,
            artifact ``mlaudit/live.json``) when the guard trips.

    Raises:
        ValueError: an unknown stop name.
    """

    def __init__(
        self,
        stop_on: str | Iterable[str],
        thresholds: LiveThresholds | None = None,
        honour_stop_tag: bool = True,
        tag_check_s: float = 10.0,
        write_back: bool = True,
    ) -> None:
        self.stop_on = parse_stop_on(stop_on)
        self.th = thresholds or LiveThresholds()
        self.run = LiveRun()
        self.tripped: Finding | None = None
        self.honour_stop_tag = honour_stop_tag
        self.tag_check_s = tag_check_s
        self.write_back = write_back
        self._remote: str | None = None
        self._watch: threading.Thread | None = None
        self._stop_watch = threading.Event()

    def check(
        self, logs: Mapping[str, object], step: int, now: float | None = None
    ) -> Finding | None:
        """Feed one log step's scalars; returns the finding that asks for a stop (once), else None."""
        if self.tripped is not None:
            return None
        now = time.time() if now is None else now
        pts = {}
        for k, v in logs.items():
            x = _number(v)
            if x is not None:
                pts[k] = ((step,), (now,), (x,))
        self.run.feed(pts, now, self.th)
        if self.honour_stop_tag and self._watch is None:
            self._start_tag_watch()
        for _slot, f in self.run.conditions(now, self.th, running=False).items():
            if stop_name(f.code) in self.stop_on:
                return self._trip(f)
        if self._remote is not None:
            return self._trip(_remote_finding(self._remote))
        return None

    def _trip(self, f: Finding) -> Finding:
        self.tripped = f
        # one clear line on stderr whatever the script's logging setup (as the hooks' messages)
        print(
            f"mlaudit: stopping training (stop_on={','.join(self.stop_on) or 'tag'}): "
            f"{f.code} {f.name}: {f.message}",
            file=sys.stderr,
            flush=True,
        )
        log.info("stopping training: %s %s: %s", f.code, f.name, f.message)
        if self.write_back:
            self._write(f)
        self.close()
        return f

    def close(self) -> None:
        self._stop_watch.set()

    # -- the MLflow stop tag ---------------------------------------------------------------
    def _active_mlflow(self):
        mlflow = sys.modules.get("mlflow")
        if mlflow is None:
            return None, None
        run = mlflow.active_run()
        return (mlflow, run.info.run_id) if run is not None else (mlflow, None)

    def _active_wandb(self):
        """The active ONLINE W&B run's ``entity/project/id`` (None offline or without one)."""
        wandb = sys.modules.get("wandb")
        run = getattr(wandb, "run", None) if wandb is not None else None
        if run is None:
            return None
        try:
            if getattr(run, "offline", False) or run.settings.mode in ("offline", "disabled"):
                return None
            return f"{run.entity}/{run.project}/{run.id}"
        except Exception:  # noqa: BLE001 - an SDK without these attributes: no polling
            return None

    def _start_tag_watch(self) -> None:
        mlflow, run_id = self._active_mlflow()
        wandb_path = self._active_wandb()
        if run_id is None and wandb_path is None:
            return  # no tracked run yet; tried again at the next step
        if run_id is not None:
            client = mlflow.MlflowClient()

            def read() -> str | None:
                return client.get_run(run_id).data.tags.get(STOP_TAG)
        else:
            wandb = sys.modules["wandb"]  # the training script's (an active run was found)
            api = wandb.Api(timeout=10)

            def read() -> str | None:
                # the W&B live watcher's stop request (mlaudit_wandb.live.STOP_TAG)
                api.flush()
                tags = api.run(wandb_path).tags or []
                if WANDB_STOP_TAG not in tags:
                    return None
                codes = [t.split("-", 1)[1] for t in tags if t.startswith("mlaudit:live-LV")]
                return f"{' '.join(codes)} (W&B run tag {WANDB_STOP_TAG})".strip()

        def loop() -> None:
            while not self._stop_watch.is_set():
                try:
                    tag = read()
                    if tag:
                        self._remote = tag
                        return
                except Exception as exc:  # noqa: BLE001 - an outage: check again later
                    log.debug("mlaudit: reading %s failed: %s", STOP_TAG, exc)
                self._stop_watch.wait(self.tag_check_s)

        self._watch = threading.Thread(target=loop, name="mlaudit-stop-tag", daemon=True)
        self._watch.start()

    def _write(self, f: Finding) -> None:
        mlflow, run_id = self._active_mlflow()
        if run_id is None:
            return
        try:
            client = mlflow.MlflowClient()
            doc = {
                "schema": "mlaudit.live/1",
                "source": "in-process (mlaudit.hooks stop_on)",
                "stopped": True,
                "episodes": [
                    {
                        "code": f.code,
                        "state": "open",
                        "stop_requested": True,
                        "finding": f.model_dump(mode="json"),
                    }
                ],
            }
            client.log_text(run_id, json.dumps(doc, indent=1), "mlaudit/live.json")
            client.set_tag(run_id, LIVE_TAG, f"stopped: {f.code} {f.name}")
        except Exception as exc:  # noqa: BLE001 - stopping matters more than the record
            log.warning("mlaudit: could not write the live finding onto the run: %s", exc)


def _remote_finding(tag: str) -> Finding:
    m = re.match(r"\s*(LV\d{3})\b", tag)
    code = m.group(1) if m and m.group(1) in CODES else "LV004"
    name, family, severity, _ = CODES[code]
    return Finding(
        code=code,
        name=name,
        severity=severity,
        family=family,
        message=f"stop requested by the live watcher ({STOP_TAG}): {tag}",
        evidence=[LogEvidence(source=f"tag {STOP_TAG}", line=1, text=tag[:500])],
    )


def guard_from(stop_on) -> LiveGuard | None:
    """A :class:`LiveGuard` for a callback's ``stop_on=`` (None when empty)."""
    names = parse_stop_on(stop_on)
    return LiveGuard(names) if names else None
