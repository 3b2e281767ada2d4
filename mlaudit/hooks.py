"""In-process hooks: audit a training run when training ends, inside the training script.

Four entry points, one behaviour:

* :func:`audit_on_exit` for hand-written loops: a context manager (audits when the
  block ends, also when it raises) or, called once without ``with``, an ``atexit``
  hook that audits when the interpreter exits.
* :func:`hf_callback` -> a ``transformers.TrainerCallback`` (``on_train_end``).
* :func:`lightning_callback` -> a Lightning ``Callback`` (``on_fit_end``; ``on_exception``
  audits a failed fit as crashed).
* :func:`keras_callback` -> a ``keras.callbacks.Callback`` (``on_train_end``).

The classes are also reachable as ``MlauditTrainerCallback``, ``MlauditLightningCallback``
and ``MlauditKerasCallback`` (module attributes built on first access). Importing this
module imports only the standard library: a framework is imported when its callback is
first built, ``mlaudit_core`` and the tracker SDK when an audit runs.

What a hook does when training ends:

1. Finds the run: the current MLflow run (``mlflow.active_run()``, else the last one this
   thread ended), the current ``wandb.run``, the current ClearML ``Task``; a Lightning
   ``MLFlowLogger``/``WandbLogger`` names its run directly. A tracker module that the
   script never imported is never imported. Every run found is audited.
2. In a worker thread: lets the tracker flush (MLflow async logging is flushed for the
   run found, never through ``mlflow.flush_artifact_async_logging()``, which starts a new
   run in a thread without one; a ClearML task is flushed with its uploads), loads the
   run through the tracker plugin, audits it with the project's settings, writes the
   verdict back exactly as ``mlaudit <tracker>`` does, and posts notifications
   (``notify=`` URLs plus ``[tool.mlaudit.notify]``). A run the tracker still shows as
   running is audited as ended (finished, or failed when training raised), and the report
   says so in its warnings. The exception that ended training (the ``with`` block's, the
   uncaught one at exit, Lightning's ``on_exception``) is added to the run's console as
   evidence, so ``RuntimeError: CUDA out of memory ...`` is diagnosed as such.
   A W&B run is never finished by mlaudit: W&B writes its history out completely only
   when the run finishes, and the user may still log to it (``trainer.train();
   trainer.evaluate()``). While it is open, the audit waits for it: it runs when W&B
   finishes the run (``run.finish()``, ``wandb.finish()``, or W&B's own exit handler),
   in W&B's last teardown stage; the result says ``deferred`` until then.
3. Waits for the worker at most ``budget_s`` seconds (default 60). Over budget it marks
   the run for the watcher (MLflow tag ``mlaudit.handoff = watcher``, W&B tag or ClearML
   label ``mlaudit:handoff``) and returns; the worker goes on as a daemon thread and, if
   the process lives long enough, still writes the verdict (and removes the mark).

A hook never fails the training job: whatever goes wrong (no run found, bad settings, an
unreachable tracker, an exception in the audit, the budget) is one warning line on the
``mlaudit.hooks`` logger (stderr when logging is not configured), and the job's output
and exit status are otherwise unchanged. Success logs one INFO line. Set
``MLAUDIT_HOOKS=off`` to disable every hook without editing the script.
"""

from __future__ import annotations

import atexit
import functools
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "DEFAULT_BUDGET_S",
    "HANDOFF_LABEL",
    "HANDOFF_TAG",
    "AuditOnExit",
    "HookResult",
    "TrackedRun",
    "audit_on_exit",
    "find_runs",
    "hf_callback",
    "keras_callback",
    "lightning_callback",
    "run_hook",
]

log = logging.getLogger("mlaudit.hooks")

#: Seconds a hook may delay the end of the job (the issue's default).
DEFAULT_BUDGET_S = 60.0
#: The MLflow tag that hands a run to the watcher (``mlaudit watch mlflow``).
HANDOFF_TAG = "mlaudit.handoff"
#: The W&B tag / ClearML label that does the same (replaced by the verdict's ``mlaudit:*`` tag).
HANDOFF_LABEL = "mlaudit:handoff"
#: ``MLAUDIT_HOOKS=off`` (or 0/false/no) disables every hook.
DISABLE_ENV = "MLAUDIT_HOOKS"
#: Time kept for marking the run for the watcher: a fifth of the budget, at least 2 s (one
#: round trip to the tracker) and at most 5 s.
HANDOFF_RESERVE = 0.2
HANDOFF_MIN_S = 2.0
HANDOFF_MAX_S = 5.0


@dataclass
class HookResult:
    """What a hook did with one run.

    ``status``: ``written`` (verdict written back), ``audited`` (audited, nothing written:
    ``write_back=False`` or a tracker copy that cannot be written, such as an offline W&B
    run), ``handed_off`` (over budget, marked for the watcher), ``failed`` (``error`` says
    why), ``no_run`` (no tracker run found), ``disabled`` (``MLAUDIT_HOOKS=off``),
    ``deferred`` (a W&B run still open: audited when W&B finishes it; this object is then
    updated in place).
    ``seconds`` is the time the hook delayed the caller.
    """

    status: str
    tracker: str | None = None
    ref: str | None = None
    outcome: str | None = None
    cause: str | None = None
    confidence: float | None = None
    error: str | None = None
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)


@dataclass
class TrackedRun:
    """A run found in this process: the plugin name and reference that load it, and how
    to flush it and mark it for the watcher (both run in the worker thread)."""

    tracker: str
    ref: str
    plugin_options: dict[str, Any] = field(default_factory=dict)
    load_options: dict[str, Any] = field(default_factory=dict)
    flush: Callable[[], None] | None = None
    handoff: Callable[[], None] | None = None
    clear_handoff: Callable[[], None] | None = None
    note: str | None = None  # a reason this run cannot be audited here
    #: ``defer(callback) -> bool``: run ``callback`` once the tracker has finished the run
    #: (False: it is finished already, audit now). W&B only.
    defer: Callable[[Callable[[], None]], bool] | None = None

    def __str__(self) -> str:
        return f"{self.tracker} run {self.ref}"


# --------------------------------------------------------------------------- finding runs


def _mlflow_run(run_id: str | None = None, tracking_uri: str | None = None) -> TrackedRun | None:
    """The MLflow run of this thread (active, else last ended), or ``run_id``.

    Must run in the training thread: MLflow keeps its active-run stack per thread.
    """
    mlflow = sys.modules.get("mlflow")
    if mlflow is None:
        if run_id is None:
            return None
        import mlflow
    uri = tracking_uri or mlflow.get_tracking_uri()
    if run_id is None:
        active = mlflow.active_run()
        if active is not None:
            run_id = active.info.run_id
        else:
            run_id = _last_mlflow_run_id(mlflow)
    if run_id is None:
        return None

    def flush() -> None:
        # flush_async_logging flushes the store's queue (no run involved); the fluent
        # flush_artifact_async_logging() would call _get_or_start_run() and, in this worker
        # thread (MLflow's active-run stack is per thread), start a new empty run: flush the
        # artifact repository of *this* run instead, when MLflow has one cached for it
        fn = getattr(mlflow, "flush_async_logging", None)
        if fn is not None:
            fn()
        from mlaudit_core.sdk_private import mlflow_artifact_repo

        repo = mlflow_artifact_repo(run_id)
        if repo is not None and hasattr(repo, "flush_async_logging"):
            repo.flush_async_logging()

    def client():
        return mlflow.MlflowClient(tracking_uri=uri)

    return TrackedRun(
        "mlflow",
        run_id,
        {"tracking_uri": uri},
        flush=flush,
        handoff=lambda: client().set_tag(run_id, HANDOFF_TAG, "watcher"),
        clear_handoff=lambda: client().delete_tag(run_id, HANDOFF_TAG),
    )


def _last_mlflow_run_id(mlflow) -> str | None:
    from mlaudit_core.sdk_private import mlflow_last_active_run_id

    return mlflow_last_active_run_id(mlflow)


def _wandb_run(run: Any = None) -> TrackedRun | None:
    """The current ``wandb.run`` (or ``run``): online by path, offline by its directory."""
    if run is None:
        wandb = sys.modules.get("wandb")
        run = getattr(wandb, "run", None) if wandb is not None else None
    if run is None:
        return None
    settings = getattr(run, "settings", None)
    offline = bool(getattr(run, "offline", False) or getattr(settings, "mode", "") == "offline")
    defer = functools.partial(_after_wandb_finish, run)
    if offline:
        run_dir = str(
            Path(run.dir).parent
        )  # .../offline-run-<time>-<id>/files -> the run directory
        return TrackedRun("wandb", run_dir, load_options={"offline": True}, defer=defer)
    ref = f"{run.entity}/{run.project}/{run.id}"

    def tags(add: bool) -> None:
        import wandb

        api_run = wandb.Api().run(ref)
        kept = [t for t in (api_run.tags or []) if t != HANDOFF_LABEL]
        api_run.tags = kept + [HANDOFF_LABEL] if add else kept
        api_run.update()

    return TrackedRun(
        "wandb", ref, handoff=lambda: tags(True), clear_handoff=lambda: tags(False), defer=defer
    )


def _after_wandb_finish(run: Any, callback: Callable[[], None]) -> bool:
    """Run ``callback`` once W&B has finished ``run``; False when it is finished already.

    Uses the run's teardown hooks (``TeardownStage.LATE``: after W&B sent its last
    messages, so the history is complete on disk and on the server), which ``finish()``
    calls however the run ends (``run.finish()``, ``wandb.finish()``, W&B's exit handler).
    These are private W&B names, reached through mlaudit_core.sdk_private.wandb_on_finish:
    without them the run is audited at once, as far as W&B has written it, with a warning.
    """
    from mlaudit_core.sdk_private import wandb_on_finish

    return wandb_on_finish(run, callback)


def _clearml_task() -> TrackedRun | None:
    clearml = sys.modules.get("clearml")
    if clearml is None:
        return None
    task = clearml.Task.current_task()
    if task is None:
        return None
    found = TrackedRun(
        "clearml",
        task.id,
        flush=lambda: task.flush(wait_for_uploads=True),
        handoff=lambda: task.add_tags([HANDOFF_LABEL]),
    )
    if clearml.Task.is_offline():
        found.note = (
            "an offline ClearML session is complete only after Task.close(): audit its "
            "zip with `mlaudit clearml --offline`"
        )
    return found


def find_runs(
    trackers: Sequence[str] | None = None,
    *,
    run_id: str | None = None,
    tracking_uri: str | None = None,
) -> list[TrackedRun]:
    """The tracker runs of this process, in the order MLflow, W&B, ClearML.

    Args:
        trackers: only these trackers (``"mlflow"``, ``"wandb"``, ``"clearml"``); default all.
        run_id: an explicit MLflow run id (then ``trackers`` defaults to ``["mlflow"]``).
        tracking_uri: the MLflow tracking URI (default ``mlflow.get_tracking_uri()``).

    Only SDKs the script already imported are looked at (none is imported here, except
    mlflow for an explicit ``run_id``). Call from the training thread.
    """
    want = set(trackers or (["mlflow"] if run_id else ["mlflow", "wandb", "clearml"]))
    out: list[TrackedRun] = []
    for name, find in (
        ("mlflow", lambda: _mlflow_run(run_id, tracking_uri)),
        ("wandb", _wandb_run),
        ("clearml", _clearml_task),
    ):
        if name in want:
            found = find()
            if found is not None:
                out.append(found)
    return out


# --------------------------------------------------------------------------- the hook


@dataclass
class _Options:
    budget_s: float = DEFAULT_BUDGET_S
    notify: tuple[str, ...] = ()
    config: Path | None = None
    write_back: bool = True
    trackers: tuple[str, ...] | None = None
    run_id: str | None = None
    tracking_uri: str | None = None

    @classmethod
    def of(
        cls,
        budget_s: float = DEFAULT_BUDGET_S,
        notify: str | Sequence[str] = (),
        config: str | os.PathLike | None = None,
        write_back: bool = True,
        trackers: Sequence[str] | None = None,
        run_id: str | None = None,
        tracking_uri: str | None = None,
    ) -> _Options:
        if budget_s is None or budget_s < 0:
            raise ValueError(f"budget_s must be a number of seconds >= 0, got {budget_s!r}")
        unknown = set(trackers or ()) - {"mlflow", "wandb", "clearml"}
        if unknown:
            raise ValueError(f"unknown tracker(s) {sorted(unknown)}: use mlflow, wandb, clearml")
        return cls(
            float(budget_s),
            (notify,) if isinstance(notify, str) else tuple(notify),
            Path(config) if config else None,
            write_back,
            tuple(trackers) if trackers else None,
            run_id,
            tracking_uri,
        )


def _one_line(exc: BaseException) -> str:
    try:
        from mlaudit_core.service.task import one_line

        return one_line(type(exc).__name__, exc).split(": ", 1)[-1]
    except Exception:
        return f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"


class _Job:
    """The worker thread's state, shared with the waiting caller under ``lock``."""

    def __init__(
        self, runs: list[TrackedRun], opts: _Options, ended: str, error: BaseException | None = None
    ) -> None:
        self.runs, self.opts, self.ended, self.error = runs, opts, ended, error
        self.lock = threading.Lock()
        self.results: dict[int, HookResult] = {}
        self.written: set[int] = set()
        self.handed_off = False
        self.handoff_done = threading.Event()
        self.notifying = False

    def run(self) -> None:
        # MLflow draws artifact progress bars on stderr while the plugin reads and writes
        # artifacts; the job's output must stay as it was, so they are off during the audit.
        quiet = "MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR" not in os.environ
        if quiet:
            os.environ["MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR"] = "false"
        try:
            self._run()
        finally:
            if quiet:
                os.environ.pop("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", None)

    def _run(self) -> None:
        try:
            from mlaudit_core.settings import load_settings

            settings = load_settings(explicit=self.opts.config)
        except Exception as exc:
            for i, r in enumerate(self.runs):
                self._set(
                    i, HookResult("failed", r.tracker, r.ref, error=f"settings: {_one_line(exc)}")
                )
            return
        for i, r in enumerate(self.runs):
            try:
                self._set(i, self._audit(i, r, settings))
            except Exception as exc:  # the audit's failure is the hook's result, never the job's
                self._set(i, HookResult("failed", r.tracker, r.ref, error=_one_line(exc)))

    def _set(self, i: int, res: HookResult) -> None:
        with self.lock:
            self.results[i] = res

    def _audit(self, i: int, tr: TrackedRun, settings) -> HookResult:
        from datetime import datetime, timezone

        from mlaudit_core.audit import audit
        from mlaudit_core.plugins import get_plugin
        from mlaudit_core.rundata import RunStatus

        if tr.note:
            return HookResult("failed", tr.tracker, tr.ref, error=tr.note)
        if tr.flush is not None:
            tr.flush()
        plugin = get_plugin(tr.tracker, **tr.plugin_options)
        run = plugin.load(tr.ref, **tr.load_options)
        if run.status is RunStatus.RUNNING:  # the tracker has not closed it yet; training has ended
            run.status = {"failed": RunStatus.FAILED, "killed": RunStatus.KILLED}.get(
                self.ended, RunStatus.FINISHED
            )
            run.end_time = run.end_time or datetime.now(timezone.utc)
            run.warnings.append(
                f"the tracker still showed the run as running; mlaudit's in-process "
                f"hook saw training end ({run.status.value}) and audited it as such"
            )
        if self.error is not None:
            _add_exception(run, self.error)
        report = audit(run, settings)
        v = report.verdict
        res = HookResult(
            "audited", tr.tracker, tr.ref, v.outcome.value, v.cause.value, v.confidence
        )
        if self.opts.write_back:
            wb = plugin.write_back(run, report)
            if wb.tags:
                res.status = "written"
                with self.lock:
                    self.written.add(i)
                    late = self.handed_off
                if late and tr.clear_handoff is not None:  # written after all: drop the mark
                    self.handoff_done.wait(10)
                    tr.clear_handoff()
            res.notes += list(getattr(wb, "notes", []) or [])
        from mlaudit_core.notify import notify

        with self.lock:
            self.notifying = True
        try:
            notify(report, settings, self.opts.notify)
        finally:
            with self.lock:
                self.notifying = False
        return res


#: The console source name of the exception a hook caught.
EXCEPTION_SOURCE = "mlaudit hook: exception that ended training"


def _add_exception(run, exc: BaseException) -> None:
    """Append the traceback of ``exc`` to ``run.console`` (console evidence for signatures),
    unless the console already ends with it (a tracker that captured stderr)."""
    import traceback

    from mlaudit_core.redact import redact_text
    from mlaudit_core.rundata import ConsoleLine

    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    last = f"{type(exc).__name__}: {exc}".strip()
    tail = [c.text for c in run.console[-200:]]
    if any(last.splitlines()[0] in t for t in tail if t):
        return
    lines = [redact_text(x) for x in text.rstrip("\n").splitlines()]
    run.console.extend(ConsoleLine(EXCEPTION_SOURCE, i, x) for i, x in enumerate(lines, 1))
    run.warnings.append(
        f"training ended with {type(exc).__name__}; mlaudit's hook added its "
        "traceback to the console evidence"
    )


def run_hook(
    opts: _Options,
    *,
    ended: str = "finished",
    runs: list[TrackedRun] | None = None,
    error: BaseException | None = None,
) -> list[HookResult]:
    """Find the runs (unless given), audit them within the budget; never raises.

    Args:
        opts: the hook's options.
        ended: how training ended: ``finished``, ``failed`` or ``killed`` (the status a run
            the tracker still shows as running is audited with).
        runs: runs found by the caller (a Lightning logger); default :func:`find_runs`.
        error: the exception that ended training, added to the run's console as evidence.

    Returns:
        One :class:`HookResult` per run (one ``no_run``/``disabled``/``failed`` result when
        there is none). At most one warning line is logged for the whole call.
    """
    t0 = time.monotonic()
    if os.environ.get(DISABLE_ENV, "").strip().lower() in ("off", "0", "false", "no"):
        return [HookResult("disabled")]
    try:
        return _run_hook(opts, ended, runs, t0, error)
    except BaseException as exc:  # noqa: BLE001 - nothing may escape into the training job
        if isinstance(exc, KeyboardInterrupt):
            res = HookResult("failed", error="interrupted (Ctrl-C) while auditing")
        else:
            res = HookResult("failed", error=_one_line(exc))
        res.seconds = time.monotonic() - t0
        _warn(f"mlaudit: hook failed: {res.error}; the training job is unaffected")
        return [res]


def _defer(
    opts: _Options, ended: str, tr: TrackedRun, error: BaseException | None
) -> HookResult | None:
    """Audit ``tr`` once its tracker finishes it; the ``deferred`` result (updated in place
    then), or None when the run is finished already (audit it now)."""
    res = HookResult(
        "deferred",
        tr.tracker,
        tr.ref,
        notes=[
            "the W&B run is still open: audited when W&B finishes it (run.finish(), "
            "wandb.finish() or at exit); mlaudit never ends a run it does not own"
        ],
    )

    def later() -> None:
        import dataclasses

        (got,) = run_hook(
            opts, ended=ended, runs=[dataclasses.replace(tr, defer=None)], error=error
        )
        res.__dict__.update(got.__dict__)

    return res if tr.defer(later) else None


def _run_hook(
    opts: _Options,
    ended: str,
    runs: list[TrackedRun] | None,
    t0: float,
    error: BaseException | None = None,
) -> list[HookResult]:
    if runs is None:
        runs = find_runs(opts.trackers, run_id=opts.run_id, tracking_uri=opts.tracking_uri)
    if not runs:
        _warn("mlaudit: no MLflow, W&B or ClearML run found in this process; nothing audited")
        return [HookResult("no_run", seconds=time.monotonic() - t0)]
    deferred: list[HookResult] = []
    now: list[TrackedRun] = []
    for r in runs:
        got = _defer(opts, ended, r, error) if r.defer is not None else None
        if got is not None:
            deferred.append(got)
        else:
            now.append(r)
    if not now:
        return deferred
    return deferred + _audit_now(opts, ended, now, t0, error)


def _audit_now(
    opts: _Options,
    ended: str,
    runs: list[TrackedRun],
    t0: float,
    error: BaseException | None,
) -> list[HookResult]:
    reserve = min(HANDOFF_MAX_S, max(HANDOFF_MIN_S, HANDOFF_RESERVE * opts.budget_s))
    deadline = t0 + max(opts.budget_s, reserve)  # a budget under 2 s still leaves time to mark
    job = _Job(runs, opts, ended, error)
    worker = threading.Thread(target=job.run, name="mlaudit-hook", daemon=True)
    try:
        worker.start()
    except RuntimeError:  # Python 3.12.0-3.12.1 refuse new threads in atexit handlers
        job.run()  # so the audit runs inline there, without the budget
    else:
        worker.join(max(0.0, deadline - reserve - time.monotonic()))
    with job.lock:
        done = not worker.is_alive()
        results = dict(job.results)
        pending = [i for i in range(len(runs)) if i not in results and i not in job.written]
        still_notifying = job.notifying
        if not done and pending:
            job.handed_off = True
    out: list[HookResult] = []
    problems: list[str] = []
    if not done and pending:
        marked, why = _handoff([runs[i] for i in pending], deadline)
        job.handoff_done.set()
        for i in pending:
            res = HookResult(
                "handed_off",
                runs[i].tracker,
                runs[i].ref,
                error=f"not done within the {opts.budget_s:g} s budget",
            )
            results[i] = res
        where = ", ".join(str(runs[i]) for i in pending)
        mark = (
            ("marked for the watcher (" + ", ".join(marked) + ")")
            if marked
            else f"could not mark it for the watcher ({why})"
        )
        problems.append(f"audit of {where} not done within the {opts.budget_s:g} s budget; {mark}")
    for i, r in enumerate(runs):
        res = results.get(i)
        if res is None:  # written; notification or bookkeeping still running at the deadline
            res = HookResult("written", r.tracker, r.ref)
            if still_notifying:
                res.notes.append("notifications still sending at the end of the budget")
        if res.status == "failed":
            problems.append(f"audit of {r} failed: {res.error}")
        res.seconds = time.monotonic() - t0
        out.append(res)
    if problems:
        _warn("mlaudit: " + "; ".join(problems) + "; the training job is unaffected")
    else:
        for res in out:
            log.info(
                "mlaudit: %s run %s: %s / %s (%.2f), %s",
                res.tracker,
                res.ref,
                res.outcome,
                res.cause,
                res.confidence or 0.0,
                res.status,
            )
    return out


def _handoff(runs: list[TrackedRun], deadline: float) -> tuple[list[str], str]:
    """Mark ``runs`` for the watcher in a daemon thread, waiting until ``deadline`` at most."""
    marked: list[str] = []
    errors: list[str] = []

    def work() -> None:
        for r in runs:
            if r.handoff is None:
                errors.append(f"{r.tracker} runs cannot be marked here")
                continue
            try:
                r.handoff()
                marked.append(
                    f"{HANDOFF_TAG}=watcher on {r}"
                    if r.tracker == "mlflow"
                    else f"{HANDOFF_LABEL} on {r}"
                )
            except Exception as exc:
                errors.append(_one_line(exc))

    t = threading.Thread(target=work, name="mlaudit-handoff", daemon=True)
    t.start()
    t.join(max(0.1, deadline - time.monotonic()))
    if t.is_alive() and not errors:
        errors.append("the tracker did not answer in time")
    return list(marked), "; ".join(errors)


def _warn(line: str) -> None:
    try:
        from mlaudit_core.redact import redact_text

        line = redact_text(line)
    except Exception:
        pass
    log.warning(" ".join(line.split()))  # one line, whatever the messages contained


# --------------------------------------------------------------------------- plain loops


class AuditOnExit:
    """Audit the tracker run when a block ends (``with``) or when the interpreter exits.

    Created by :func:`audit_on_exit`, which registers :meth:`at_exit` with :mod:`atexit`;
    entering the ``with`` block cancels that registration, so the run is audited once, when
    the block ends. ``results`` holds the :class:`HookResult` list afterwards.
    """

    def __init__(self, opts: _Options) -> None:
        self.opts = opts
        self.results: list[HookResult] | None = None
        atexit.register(self.at_exit)

    def __enter__(self) -> AuditOnExit:
        atexit.unregister(self.at_exit)
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        ended = "finished"
        if exc_type is not None:
            if issubclass(exc_type, KeyboardInterrupt):
                ended = "killed"
            elif not (
                issubclass(exc_type, SystemExit) and exc is not None and exc.code in (0, None)
            ):
                ended = "failed"
        error = exc if ended == "failed" else None
        self.results = run_hook(self.opts, ended=ended, error=error)
        return False  # never swallow the training's exception

    def at_exit(self) -> None:
        """The ``atexit`` handler: audits with status failed after an uncaught exception."""
        last = getattr(sys, "last_value", None)  # set by the interpreter for an uncaught exception
        ended = "finished"
        if last is not None:
            ended = "killed" if isinstance(last, KeyboardInterrupt) else "failed"
        self.results = run_hook(self.opts, ended=ended, error=last if ended == "failed" else None)


def audit_on_exit(
    *,
    budget_s: float = DEFAULT_BUDGET_S,
    notify: str | Sequence[str] = (),
    config: str | os.PathLike | None = None,
    write_back: bool = True,
    trackers: Sequence[str] | None = None,
    run_id: str | None = None,
    tracking_uri: str | None = None,
) -> AuditOnExit:
    """Audit the run when training ends: ``with audit_on_exit(): ...`` or at interpreter exit.

    Args:
        budget_s: the most seconds the hook may delay the end of the job (default 60);
            over it the run is marked for the watcher and the hook returns.
        notify: webhook URL(s) for the verdict, added to ``[tool.mlaudit.notify]``
            (see :mod:`mlaudit_core.notify`).
        config: settings file (default: mlaudit.toml or pyproject.toml ``[tool.mlaudit]``
            found from the current directory).
        write_back: False audits without writing the verdict back.
        trackers: only these of ``mlflow``, ``wandb``, ``clearml`` (default: every run found).
        run_id, tracking_uri: an explicit MLflow run (default: the active or last run).

    Raises:
        ValueError: a negative budget or an unknown tracker name (at the call, not at exit).
    """
    return AuditOnExit(
        _Options.of(budget_s, notify, config, write_back, trackers, run_id, tracking_uri)
    )


# --------------------------------------------------------------------------- framework callbacks


def _require(module: str, what: str):
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise ImportError(
            f"mlaudit.hooks.{what} needs the {module.split('.')[0]} package "
            f"(pip install {module.split('.')[0]})"
        ) from None


def _guard(stop_on: Any):
    """The in-process live guard of a callback's ``stop_on=`` (None when not asked)."""
    if not stop_on:
        return None
    from mlaudit_core.live.inprocess import guard_from

    return guard_from(stop_on)


@functools.cache
def _hf_class() -> type:
    TrainerCallback = _require("transformers", "hf_callback").TrainerCallback

    class MlauditTrainerCallback(TrainerCallback):
        """Hugging Face ``Trainer`` callback: audits the run in ``on_train_end`` (main process).

        Put it after the tracker's own callback (``callbacks=[...]`` come after ``report_to``'s),
        so the tracker has closed or flushed its run first.
        """

        def __init__(self, stop_on: Any = (), **options: Any) -> None:
            self.options = _Options.of(**options)
            self.results: list[HookResult] | None = None
            self.live = _guard(stop_on)  # stop_on=: live checks per log step (docs/live.md)

        def on_log(self, args, state, control, logs=None, **kwargs):
            # every rank sees the same gathered logs, so every rank takes the same decision
            if self.live is not None and logs and self.live.check(logs, state.global_step):
                control.should_training_stop = True

        def on_train_end(self, args, state, control, **kwargs):
            if getattr(state, "is_world_process_zero", True):
                self.results = run_hook(self.options)

    return MlauditTrainerCallback


def _lightning_runs(trainer) -> list[TrackedRun] | None:
    """Runs named by the trainer's MLFlowLogger / WandbLogger (None: look for active runs)."""
    found: list[TrackedRun] = []
    for lg in getattr(trainer, "loggers", None) or []:
        kind = type(lg).__name__
        try:
            if kind == "MLFlowLogger" and getattr(lg, "run_id", None):
                # the logger's public MlflowClient (``experiment``) knows the tracking URI
                uri = getattr(lg.experiment, "tracking_uri", None)
                r = _mlflow_run(lg.run_id, uri if isinstance(uri, str) else None)
                if r is not None:
                    found.append(r)
            elif kind == "WandbLogger":
                r = _wandb_run(lg.experiment)
                if r is not None:
                    found.append(r)
        except Exception as exc:  # a logger we cannot read: say so in the results, keep going
            found.append(TrackedRun(kind, "?", note=f"could not read the {kind}: {_one_line(exc)}"))
    return found or None


@functools.cache
def _lightning_class(namespace: str | None = None) -> type:
    if namespace is None:  # the namespace the script uses: Trainer checks isinstance against it
        namespace = (
            "pytorch_lightning"
            if ("pytorch_lightning" in sys.modules and "lightning.pytorch" not in sys.modules)
            else "lightning.pytorch"
        )
    Callback = _require(namespace, "lightning_callback").Callback

    class MlauditLightningCallback(Callback):
        """Lightning callback: audits in ``on_fit_end``; ``on_exception`` audits a failed fit.

        Runs on global rank 0 only. The run comes from the trainer's ``MLFlowLogger`` or
        ``WandbLogger`` when there is one, else from the active tracker runs.
        """

        def __init__(self, stop_on: Any = (), **options: Any) -> None:
            super().__init__()
            self.options = _Options.of(**options)
            self.results: list[HookResult] | None = None
            self.live = _guard(stop_on)  # stop_on=: live checks per batch (docs/live.md)

        def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
            # on logging steps only: reading a device tensor syncs the accelerator
            every = max(1, int(getattr(trainer, "log_every_n_steps", 1) or 1))
            if self.live is not None and trainer.global_step % every == 0:
                logs = dict(trainer.callback_metrics)
                if isinstance(outputs, dict) and "loss" in outputs:
                    logs.setdefault("loss", outputs["loss"])
                if self.live.check(logs, trainer.global_step):
                    trainer.should_stop = True

        def on_fit_end(self, trainer, pl_module) -> None:
            if getattr(trainer, "is_global_zero", True):
                self.results = run_hook(self.options, runs=_lightning_runs(trainer))

        def on_exception(self, trainer, pl_module, exception: BaseException) -> None:
            if getattr(trainer, "is_global_zero", True):
                ended = "killed" if isinstance(exception, KeyboardInterrupt) else "failed"
                self.results = run_hook(
                    self.options,
                    ended=ended,
                    runs=_lightning_runs(trainer),
                    error=exception if ended == "failed" else None,
                )

    return MlauditLightningCallback


@functools.cache
def _keras_class() -> type:
    keras = _require("keras", "keras_callback")

    class MlauditKerasCallback(keras.callbacks.Callback):
        """Keras callback: audits the active tracker run in ``on_train_end``."""

        def __init__(self, stop_on: Any = (), **options: Any) -> None:
            super().__init__()
            self.options = _Options.of(**options)
            self.results: list[HookResult] | None = None
            self.live = _guard(stop_on)  # stop_on=: live checks per batch (docs/live.md)
            self._batches = 0

        def on_train_batch_end(self, batch, logs=None) -> None:
            self._batches += 1
            if self.live is not None and logs and self.live.check(logs, self._batches):
                self.model.stop_training = True

        def on_train_end(self, logs=None) -> None:
            self.results = run_hook(self.options)

    return MlauditKerasCallback


def hf_callback(**options: Any):
    """A ``transformers.TrainerCallback`` that audits at ``on_train_end``.

    Options as :func:`audit_on_exit`. Raises ImportError without transformers.
    """
    return _hf_class()(**options)


def lightning_callback(*, namespace: str | None = None, **options: Any):
    """A Lightning ``Callback`` that audits at ``on_fit_end`` and ``on_exception``.

    ``namespace``: ``"lightning.pytorch"`` or ``"pytorch_lightning"`` (default: the one the
    script imported). Options as :func:`audit_on_exit`. Raises ImportError without Lightning.
    """
    return _lightning_class(namespace)(**options)


def keras_callback(**options: Any):
    """A ``keras.callbacks.Callback`` that audits at ``on_train_end``.

    Options as :func:`audit_on_exit`. Raises ImportError without keras.
    """
    return _keras_class()(**options)


_CLASSES = {
    "MlauditTrainerCallback": _hf_class,
    "MlauditLightningCallback": _lightning_class,
    "MlauditKerasCallback": _keras_class,
}


def __getattr__(name: str) -> Any:
    if name in _CLASSES:
        return _CLASSES[name]()
    raise AttributeError(f"module 'mlaudit.hooks' has no attribute {name!r}")
