"""Console logs as a source: metric series and run context from plain text.

Public surface::

    from mlaudit_core.formats.consolelog import load_logs, enrich_from_console, parse_lines

- :func:`load_logs` turns log files (and optional config/context files) into a
  :class:`~mlaudit_core.rundata.RunData` of tracker ``logs``.
- :func:`enrich_from_console` parses a tracker run's captured console output
  and adds the series the metric store lacks (grad norm, loss scale,
  throughput that were only printed), recording them in ``run.derived``.
- The formats are a declarative catalog (:mod:`.formats`); the failure
  signatures are in :mod:`mlaudit_core.signatures`. See ``docs/logs.md``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from datetime import datetime
from pathlib import Path

from ...errors import InputError
from ...roles import Role
from ...rundata import MetricTable, RunData, RunIdentity, RunStatus
from .context import read_context_file
from .formats import CATALOG, LogFormat
from .parser import LogParser, ParseResult, parse_lines, strip_annotations
from .reader import MAX_LINE_BYTES, LineReader, UnreadableLog
from .retention import CONTEXT_LINES, HEAD_LINES, MIDDLE_LINES, POINT_BUDGET, TAIL_LINES
from .structure import structured_series

__all__ = [
    "CATALOG",
    "LogFormat",
    "LogParser",
    "ParseResult",
    "UnreadableLog",
    "enrich_from_console",
    "load_logs",
    "parse_lines",
    "read_context_file",
    "strip_annotations",
]

#: Facts recovered from the log structure are added to params under this prefix.
FACT_PREFIX = "log."


def load_logs(
    paths: Sequence[str | Path],
    config_paths: Iterable[str | Path] = (),
    name: str | None = None,
    *,
    max_line_bytes: int = MAX_LINE_BYTES,
    max_console_lines: int = HEAD_LINES,
    tail_lines: int = TAIL_LINES,
    middle_lines: int = MIDDLE_LINES,
    context_lines: int = CONTEXT_LINES,
    max_points: int = POINT_BUDGET,
    tap=None,
    disabled_formats: Iterable[str] | None = None,
    infer: bool = True,
) -> RunData:
    """Read console log files (in the order given, as one continuous log) into a RunData.

    Args:
        paths: log files; ``-`` is standard input, ``.gz`` files are decompressed.
        config_paths: config / context files whose ``key = value`` lines (or JSON /
            YAML / TOML) become params; they override values printed in the log.
        name: display name of the run (default: the first file's name).
        max_line_bytes: line-length cap; longer lines are cut and reported.
        max_console_lines: console lines kept from the start of the log (the head).
        tail_lines: console lines kept from the end of the log (the tail).
        middle_lines: lines that can matter to a failure signature or a traceback kept
            between head and tail (the first and the last half of them), each with
            ``context_lines`` lines either side; the rest is counted in the notes.
        max_points: metric points kept before the densest series is thinned to a
            systematic sample (non-finite changes, step resets and last points are always
            kept); the notes name thinned series. See :mod:`.retention`.
        tap: called as ``tap(path, lineno, text)`` with every line as read, before any
            filtering, so another reader can share this one pass over the files (the evidence
            pass of ``mlaudit logs``, :func:`mlaudit_core.evidence.collect`).
        disabled_formats: catalogue entry ids or framework names to switch off (their lines are
            then read by structure inference alone, :mod:`.infer`); see
            :data:`.formats.FRAMEWORK_FORMATS` and docs/logs.md.
        infer: structure inference (:mod:`.infer`) on; off reads with the catalogue alone.

    Memory is bounded by these figures, not by the length of the log: 10 M lines read in
    well under 1 GB (``benchmarks/logs_throughput.py`` measures it).

    Returns:
        A RunData with tracker ``logs``: metrics parsed by the format catalog,
        params, console lines, start/end time from timestamps, and warnings for
        anything that could not be read. Status ``RUNNING`` when a file grew while it was
        read (a run still writing it: read up to its size at the start), else ``UNKNOWN``.

    Raises:
        InputError: no log file could be read at all (each reason is named), or a
            config file cannot be read.
    """
    if not paths:
        raise InputError("no log file given")
    parser = LogParser(
        keep_console=True,
        max_console_lines=max_console_lines,
        tail_lines=tail_lines,
        middle_lines=middle_lines,
        context_lines=context_lines,
        max_points=max_points,
        disabled_formats=disabled_formats,
        infer=infer,
    )
    warnings: list[str] = []
    problems: list[str] = []
    read = 0
    grew = False
    for path in paths:
        try:
            reader = LineReader(path, max_line_bytes=max_line_bytes)
        except UnreadableLog as exc:
            problems.append(str(exc))
            continue
        source = Path(str(path)).name if str(path) != "-" else "stdin"
        parser.feed_many(reader if tap is None else _tapped(reader, tap, path), source)
        warnings.extend(reader.warnings)
        grew = grew or reader.grew
        read += 1
    if not read:
        raise InputError("; ".join(problems))
    warnings = [f"{p} (skipped)" for p in problems] + warnings
    params: dict[str, str] = {}
    for cfg in config_paths:
        try:
            params.update(read_context_file(cfg))
        except UnreadableLog as exc:
            raise InputError(f"--config {exc}") from None
    res = parser.result()
    shape = _read_structure(res)
    run = _to_run(res, paths, params, warnings, name, (max_console_lines, tail_lines))
    if shape is not None:
        run.notes.append(shape)
        for key in res.metrics.keys:
            run.derived[key] = shape
    if grew:  # lines kept coming while the log was read: the run is still being written
        run.status = RunStatus.RUNNING
    if (
        len(paths) == 1 and res.launches and shape is None
    ):  # several launches appended to one file: the run is the last
        from .launches import keep_last_launch

        keep_last_launch(run, res, Path(str(paths[0])).name if str(paths[0]) != "-" else "stdin")
    return run


def _read_structure(res: ParseResult) -> str | None:
    """When no line gave a metric, the series of a pasted table, of unnamed numeric columns or of
    figures stated in prose (:mod:`.structure`) become ``res.metrics``; returns the note naming
    the shape read (None when nothing was read)."""
    if len(res.metrics) or not res.console:
        return None
    series, note = structured_series(res.console)
    if series:
        res.metrics = MetricTable.from_series(series)
        res.series_order = [s.key for s in series]
    return note


def _tapped(reader, tap, path):
    for lineno, text in reader:
        tap(path, lineno, text)
        yield lineno, text


def _to_run(
    res: ParseResult,
    paths: Sequence[str | Path],
    config: dict[str, str],
    warnings: list[str],
    name: str | None,
    console_cap: tuple[int, int],
) -> RunData:
    params = dict(res.params)
    params.update(config)
    for k, v in res.facts.items():
        params[f"{FACT_PREFIX}{k}"] = str(int(v)) if float(v).is_integer() else str(v)
    if res.formats:
        params[f"{FACT_PREFIX}formats"] = ", ".join(
            f"{k} ({n})" for k, n in res.formats.most_common()
        )
    notes = []
    if res.omitted_console:  # a note, not a warning: no figure is lost, so no confidence is either
        notes.append(
            f"{res.omitted_console:,} of {res.lines:,} console lines were not kept (between the first "
            f"{console_cap[0]:,} and the last {console_cap[1]:,} lines, only lines that can hold a failure "
            "signature or a traceback are kept, with the lines around them); metrics were read from every "
            "line"
        )
    if (
        res.thinned
    ):  # a note: every point was read; the kept sample keeps level, trend, noise and NaNs
        some = ", ".join(f"{k} (every {n}th point)" for k, n in list(res.thinned.items())[:5])
        notes.append(
            f"{res.points_read:,} metric points were read and {len(res.metrics):,} kept: the densest "
            f"series were thinned to a systematic sample ({some}); the first non-finite value, step "
            "resets and each series' last point are kept (docs/logs.md)"
        )
    if params.get(f"{FACT_PREFIX}step_axis") == "train_log_dict":
        notes.append(
            "the step axis counts the Hugging Face Trainer's training log dicts (1, 2, 3 ...): the "
            "console prints no step and not logging_steps, so step N is the N-th training log (global "
            "step N x logging_steps); each evaluation dict sits at the training log before it (or at "
            "the one its epoch stands for)"
        )
    elif params.get(f"{FACT_PREFIX}step_axis") == "epoch":
        notes.append(
            "the step axis is the epoch (per-epoch lines under bare 'epoch N' headers, no step printed)"
        )
    if res.template_note:
        notes.append(res.template_note)
    if len(res.metrics) == 0:
        warnings.append(
            "no metric lines were recognised in the log: no catalogued format matched and no recurring "
            "line carried named numbers (looked for name: value, name=value, name value, | name value |, "
            "JSON/dict keys, N/M and step/epoch counters; docs/logs.md); the audit relies on failure "
            "signatures only"
        )
    first = Path(str(paths[0])).name if str(paths[0]) != "-" else "stdin"
    digest = hashlib.sha1("\0".join(str(p) for p in paths).encode()).hexdigest()[:12]
    run = RunData(
        identity=RunIdentity(tracker="logs", id=name or f"{first}-{digest}", name=name or first),
        status=RunStatus.UNKNOWN,
        start_time=datetime.fromtimestamp(res.first_wall) if res.first_wall else None,
        end_time=datetime.fromtimestamp(res.last_wall) if res.last_wall else None,
        params=params,
        metrics=res.metrics,
        console=res.console,
        warnings=warnings,
    )
    run.notes.append(
        f"read {res.lines} lines from {len(paths)} file(s); "
        f"{len(res.metrics)} metric points in {len(res.metrics.keys)} series"
    )
    run.notes.extend(notes)
    for key in res.metrics.keys:
        run.derived[key] = "parsed from the console log"
    return run


def enrich_from_console(run: RunData) -> RunData:
    """Parse ``run.console`` and add the series the metric store lacks.

    A parsed series is added when its key is not already logged and no logged key
    already plays its role (a tracker's own ``loss`` wins over a printed one).
    Each added series is recorded in ``run.derived`` (by role value when it plays a
    role, else by key). Facts recovered from the log structure (steps per epoch,
    total steps) are added to params as ``log.*`` when absent. Returns ``run``
    (modified in place). Never raises on console content.
    """
    if not run.console:
        return run
    parser = LogParser(keep_console=False)
    for cl in run.console:
        parser.feed(cl.lineno, cl.text, cl.source)
    res = parser.result()
    sources = sorted({cl.source for cl in run.console})
    where = f"parsed from console output ({', '.join(sources[:3])})"
    played = {r for r in Role if run.key_for(r) is not None}
    added = []
    for key in res.metrics.keys:
        if key in run.metrics:
            continue
        role = next((r for r in Role if run.aliases.resolve(r, [key]) == key), None)
        if role is not None and role in played:
            continue
        added.append((key, role))
    if added:
        existing = [run.metrics.series(k) for k in run.metrics.keys]
        run.metrics = MetricTable.from_series(existing + [res.metrics.series(k) for k, _ in added])
        for key, role in added:
            run.derived[
                role.value if role is not None and role.value not in run.derived else key
            ] = where
    for k, v in res.facts.items():
        run.params.setdefault(f"{FACT_PREFIX}{k}", str(int(v)) if float(v).is_integer() else str(v))
    run.cache.pop("signatures", None)
    return run
