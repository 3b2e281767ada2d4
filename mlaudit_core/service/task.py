"""The per-run task shared by the watcher and the batch: load, audit, write back, report.

:func:`audit_one` never raises for a run's own problem: an unreadable run, a failing
audit or a refused write-back comes back as a :class:`RunResult` with ``error`` set
(one line, secrets redacted), so one bad run never stops a watcher or a batch.

:func:`audit_task` is the picklable form (a :class:`TaskSpec` and a run reference) that
``concurrent.futures`` and Ray ship to workers; each worker process builds its tracker
plugin once and reuses it.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from ..errors import MlauditError, TrackerUnavailable
from ..redact import redact_text

ERROR_MAX_CHARS = 300


@dataclass
class RunResult:
    """What happened to one run.

    ``ok`` is False when the run could not be loaded, audited or written back; ``error``
    then says which stage failed and why. ``severity`` is the highest finding severity
    (None without findings); ``codes`` are the finding codes at warning or above;
    ``seconds`` is wall time for the whole task; ``timings`` splits it into stages
    (``load``, ``detect``, ``verdict``, ``render``, ``write``; :mod:`.timing`), not stored in
    the state file. ``released`` marks a run given back
    unfinished at shutdown (nothing written). ``permanent`` marks a failure that retrying
    cannot fix (no such run, a malformed reference, a refused write-back): any
    :class:`~mlaudit_core.errors.MlauditError` except
    :class:`~mlaudit_core.errors.TrackerUnavailable`. Not stored in the state file.
    """

    ref: str
    ok: bool = True
    name: str = ""
    url: str | None = None
    outcome: str | None = None
    cause: str | None = None
    confidence: float | None = None
    codes: list[str] = field(default_factory=list)
    severity: str | None = None
    n_findings: int = 0
    seconds: float = 0.0
    wrote: bool = False
    note: str | None = None
    error: str | None = None
    released: bool = False
    permanent: bool = False
    timings: dict[str, float] = field(default_factory=dict)

    def take_verdict(self, report) -> None:
        """Fill ``outcome``, ``cause``, ``confidence``, ``codes``, ``n_findings`` and
        ``severity`` from an :class:`~mlaudit_core.report.AuditReport`."""
        v = report.verdict
        self.outcome, self.cause, self.confidence = v.outcome.value, v.cause.value, v.confidence
        self.codes = list(report.codes)
        self.n_findings = len(report.findings)
        worst = report.max_severity()
        self.severity = worst.value if worst else None

    def to_row(self) -> dict[str, Any]:
        row = asdict(self)
        row["codes"] = ",".join(self.codes)
        row["wrote"] = int(self.wrote)
        row.pop("timings", None)
        return row

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> RunResult:
        return cls(
            ref=row["ref"],
            ok=row["state"] == "done",
            name=row.get("name") or "",
            url=row.get("url"),
            outcome=row.get("outcome"),
            cause=row.get("cause"),
            confidence=row.get("confidence"),
            codes=[c for c in (row.get("codes") or "").split(",") if c],
            severity=row.get("severity"),
            n_findings=row.get("n_findings") or 0,
            seconds=row.get("seconds") or 0.0,
            wrote=bool(row.get("wrote")),
            note=row.get("note"),
            error=row.get("error"),
        )


@dataclass(frozen=True)
class TaskSpec:
    """Everything a worker needs to audit runs of one tracker (picklable).

    ``plugin_options`` are the plugin's constructor arguments (e.g. ``tracking_uri``);
    ``settings`` is ``Settings.model_dump()``; ``write_back`` False audits only.
    ``env``: ``(name, value)`` environment variables a worker process sets before it builds
    the plugin (the tracker's server URL and credentials as the caller resolved them), for
    workers that share neither the caller's environment nor its files (Ray workers on
    another machine, or on a cluster started elsewhere). Left out of ``repr``; it travels
    inside the pickled task, never in Ray's ``runtime_env`` (which Ray logs and shows on
    its dashboard). The thread pool ignores it: its threads already run in the caller.
    """

    tracker: str
    plugin_options: tuple[tuple[str, Any], ...] = ()
    settings: dict = field(default_factory=dict, hash=False)
    write_back: bool = True
    env: tuple[tuple[str, str], ...] = field(default=(), repr=False)


def one_line(stage: str, exc: BaseException) -> str:
    """``"<stage>: <Type>: <first line>"`` (the bare message for mlaudit's own errors), redacted,
    at most about ``ERROR_MAX_CHARS`` characters (the middle elided)."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    msg = text if isinstance(exc, MlauditError) else f"{type(exc).__name__}: {text}".rstrip(": ")
    line = redact_text(f"{stage}: {msg}")
    if len(line) > ERROR_MAX_CHARS:  # keep both ends: HTTP client errors put the cause last
        half = ERROR_MAX_CHARS // 2
        line = f"{line[:half]} … {line[-half:]}"
    return line


def audit_one(
    plugin,
    ref: str,
    settings,
    *,
    write_back: bool = True,
    after_load: Callable[[Any], str | None] | None = None,
    before_write: Callable[[Any], bool] | None = None,
) -> RunResult:
    """Load ``ref`` with ``plugin``, audit it, write the verdict back; never raises for the run.

    Args:
        plugin: a :class:`~mlaudit_core.plugins.TrackerPlugin` (or anything with its
            ``load`` and ``write_back``).
        ref: the plugin's run reference.
        settings: a :class:`~mlaudit_core.settings.Settings`.
        write_back: False audits without writing.
        after_load: called with the RunData; a returned string stops the task there with
            that string as ``note`` (the watcher's "verdict already present").
        before_write: called with the report just before the write-back; False gives the
            run back (``released``) without writing.

    Returns:
        The run's :class:`RunResult`; ``ok`` False with ``error`` set when a stage failed.
    """
    res, written = audit_stage(plugin, ref, settings, write_back=write_back, after_load=after_load)
    if written is None:
        return res
    return write_stage(plugin, res, written, before_write=before_write)


@dataclass
class Audited:
    """A run audited and not yet written back (between :func:`audit_stage` and
    :func:`write_stage`): the loaded run, its report and the task's start time."""

    run: Any
    report: Any
    t0: float


def audit_stage(
    plugin,
    ref: str,
    settings,
    *,
    write_back: bool = True,
    after_load: Callable[[Any], str | None] | None = None,
) -> tuple[RunResult, Audited | None]:
    """Load and audit ``ref`` (the first part of :func:`audit_one`); never raises for the run.

    Returns the result so far and, when the write-back is still to do (``write_back`` and
    the load and audit succeeded), what :func:`write_stage` needs; else ``(result, None)``
    with the result final (``seconds`` set).
    """
    from ..audit import audit
    from . import timing

    t0 = time.perf_counter()
    res = RunResult(ref=ref)
    stage = "load"
    with timing.collect() as acc:
        res.timings = acc
        try:
            with timing.timed("load"):
                run = plugin.load(ref)
            res.name, res.url = run.identity.name or "", run.identity.url
            if after_load is not None:
                note = after_load(run)
                if note:
                    res.note = note
                    res.outcome = run.tags.get("mlaudit.verdict")
                    res.cause = run.tags.get("mlaudit.cause")
                    res.seconds = time.perf_counter() - t0
                    return res, None
            stage = "audit"
            t = time.perf_counter()
            report = audit(run, settings)
            # detectors time themselves (DetectorRun.seconds); the rest is the verdict policy,
            # the report's assembly and redaction
            detect = sum(d.seconds or 0.0 for d in report.detectors)
            timing.add("detect", detect)
            timing.add("verdict", max(0.0, time.perf_counter() - t - detect))
            res.take_verdict(report)
        except Exception as exc:  # one run's failure is its result, never the caller's exception
            _failed(res, stage, exc)
            report = None
    if report is None or not write_back:
        res.seconds = time.perf_counter() - t0
        return res, None
    return res, Audited(run, report, t0)


def write_stage(
    plugin, res: RunResult, done: Audited, *, before_write: Callable[[Any], bool] | None = None
) -> RunResult:
    """Write ``done``'s verdict back (the second part of :func:`audit_one`, on any thread);
    never raises for the run. ``res.seconds`` is then the task's whole wall time."""
    from . import timing

    with timing.collect() as acc:
        try:
            if before_write is not None and not before_write(done.report):
                res.released = True
                return res
            t = time.perf_counter()
            plugin.write_back(
                done.run, done.report
            )  # a tracker marks its rendering timing.timed("render")
            timing.add("write", max(0.0, time.perf_counter() - t - acc.get("render", 0.0)))
            res.wrote = True
        except Exception as exc:  # one run's failure is its result, never the caller's exception
            _failed(res, "write-back", exc)
        finally:
            for k, v in acc.items():
                res.timings[k] = res.timings.get(k, 0.0) + v
            res.seconds = time.perf_counter() - done.t0
    return res


def _failed(res: RunResult, stage: str, exc: Exception) -> None:
    res.ok = False
    res.error = one_line(stage, exc)
    res.permanent = isinstance(exc, MlauditError) and not isinstance(exc, TrackerUnavailable)


def warm_up() -> None:
    """Load the detector registry once, before worker threads start.

    ``detectors.load_builtin_and_plugins`` marks itself loaded before its imports finish,
    so a thread auditing while another one triggers the first load can see only part of
    the catalog (a diverged run came out "succeeded" with two cold threads).
    """
    from ..detectors import registry

    registry()


@functools.lru_cache(maxsize=8)
def _plugin(tracker: str, options: tuple[tuple[str, Any], ...]):
    """One plugin (and tracker client) per process for :func:`audit_task`: a Ray worker keeps it
    across the tasks it runs. A local batch builds its own (:func:`.batch.local_results`)."""
    from ..plugins import get_plugin

    return get_plugin(tracker, **dict(options))


def audit_task(spec: TaskSpec, ref: str) -> RunResult:
    """The picklable per-run task for thread pools and Ray workers (see :func:`audit_one`)."""
    from ..settings import Settings

    try:
        plugin = _plugin(spec.tracker, spec.plugin_options)
        settings = Settings(**spec.settings)
    except Exception as exc:
        return RunResult(ref=ref, ok=False, error=one_line("setup", exc))
    return audit_one(plugin, ref, settings, write_back=spec.write_back)


def worker_task(spec: TaskSpec, ref: str) -> RunResult:
    """:func:`audit_task` in a worker process of its own (a Ray worker): first sets
    ``spec.env`` in the process environment (the caller's values win over the worker's),
    so the tracker SDK the plugin builds talks to the caller's server with its credentials.
    Never raises for the run (see :func:`audit_one`)."""
    import os

    for name, value in spec.env:
        if os.environ.get(name) != value:
            os.environ[name] = value
    return audit_task(spec, ref)
