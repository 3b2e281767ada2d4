"""Offline W&B runs: ``run-<id>.wandb`` plus ``files/`` -> RunData.

An offline run directory (``wandb/offline-run-<date>-<id>/``, or the ``run-...``
directory of a synced run) holds the transaction log ``run-<id>.wandb`` that the
SDK writes record by record, and ``files/`` (``output.log``, ``config.yaml``,
media, user files). The log has everything mlaudit needs: history rows, system
stats, raw console output, config and summary updates, the exit code.
"""

from __future__ import annotations

import json
import math
import re
from datetime import datetime, timezone
from pathlib import Path

from mlaudit_core.errors import InputError
from mlaudit_core.rundata import Artifact, RunData, RunIdentity, RunStatus

from .mapping import (
    RESERVED,
    PointBuffer,
    console_from_chunks,
    console_from_text,
    params_of,
    system_key,
)
from .records import ScanResult, iter_records

_NUMBER_START = frozenset("-0123456789NI")  # JSON numbers and W&B's NaN/Infinity/-Infinity


def find_log(path: str | Path) -> Path:
    """The ``run-<id>.wandb`` file for a run directory (or the file itself).

    Accepts the run directory, the ``.wandb`` file, or a ``wandb/`` directory with a
    ``latest-run`` link. A directory holding several ``.wandb`` files (a ``latest-run`` copied
    as a folder over an earlier run's, two runs' files gathered in one folder) gives the one
    its other files belong to (:func:`several_logs`).

    Raises:
        InputError: no such path, or no ``.wandb`` file in it.
    """
    return _logs(path)[0]


#: The run folder a W&B SDK names in ``logs/debug.log`` (``.../wandb/run-20231211_140152-5milpyx4/logs``)
#: and the run id at the end of a run folder's own name.
_RUN_DIR = re.compile(r"(?:offline-)?run-\d{8}_\d{6}-(?P<id>[a-z0-9]+)")


def several_logs(path: str | Path) -> str | None:
    """A note for a run directory holding several ``.wandb`` files, naming the one read and why,
    or None when it holds one. The one read is, in order: the file whose run id ends the folder's
    name (``run-<date>-<id>``), the one whose run folder ``logs/debug.log`` names last (the SDK
    writes the run folder into it when the run starts; ``files/`` comes with it), else the one
    written last (modification time)."""
    log, others, why = _logs(path)
    if not others:
        return None
    return (
        f"{log.parent}: {len(others) + 1} W&B run files in one folder; {log.name} is audited "
        f"({why}); not audited: {', '.join(o.name for o in others)}"
    )


def _logs(path: str | Path) -> tuple[Path, list[Path], str]:
    p = Path(path).expanduser()
    if not p.exists():
        raise InputError(f"{p}: no such W&B run directory")
    if p.is_file():
        return p, [], ""
    if not list(p.glob("*.wandb")) and (p / "latest-run").exists():
        p = (p / "latest-run").resolve()
    logs = sorted(p.glob("run-*.wandb")) or sorted(p.glob("*.wandb"))
    if not logs:
        raise InputError(
            f"{p}: no run-<id>.wandb file in this directory (is it a W&B run directory?)"
        )
    if len(logs) == 1:
        return logs[0], [], ""
    by_id = {_log_id(x): x for x in logs}
    m = _RUN_DIR.fullmatch(p.name)
    if m and m["id"] in by_id:
        pick, why = by_id[m["id"]], "the run id in the folder's name"
    else:
        named = _RUN_DIR.findall(_debug_log_text(p))
        hit = next((i for i in reversed(named) if i in by_id), None)
        if hit is not None:
            pick, why = by_id[hit], "the run logs/debug.log belongs to"
        else:
            pick = max(logs, key=lambda x: (x.stat().st_mtime, x.name))
            why = "the one written last"
    return pick, [x for x in logs if x != pick], why


def _log_id(log: Path) -> str:
    """The run id of a ``run-<id>.wandb`` file's name."""
    return log.stem[4:] if log.stem.startswith("run-") else log.stem


def _debug_log_text(run_dir: Path) -> str:
    from mlaudit_core.boundedio import read_regular

    try:
        return read_regular(run_dir / "logs" / "debug.log", 65536).decode("utf-8", "replace")
    except OSError:
        return ""


#: How long a run file still being written (modified within FRESH_S seconds) may take to get
#: its run record: W&B's service writes the ``.wandb`` in its own process and can flush it
#: after ``finish()`` returned; seen on a loaded 2-core CI machine (the hooks test's HF run).
FRESH_S = 30.0
RECORD_WAIT_S = 30.0


def load_offline(path: str | Path) -> RunData:
    """Read an offline W&B run, waiting briefly for a run file that is still being written.

    Same as :func:`_load_offline`; when the file has no run record yet but was modified in the
    last :data:`FRESH_S` seconds and starts with W&B's header (W&B's service is still writing it), it is read again every
    0.5 s for at most :data:`RECORD_WAIT_S` seconds before the error is raised.
    """
    import time

    deadline = time.monotonic() + RECORD_WAIT_S
    while True:
        try:
            return _load_offline(path)
        except InputError as exc:
            if "no run record" not in str(exc) or time.monotonic() > deadline:
                raise
            try:
                log = find_log(path)
                from mlaudit_core.boundedio import read_regular

                # a W&B file (its header) still being written
                fresh = (
                    read_regular(log, 4) == b":W&B" and time.time() - log.stat().st_mtime < FRESH_S
                )
            except (InputError, OSError):
                raise exc from None
            if not fresh:
                raise
            time.sleep(0.5)


def _load_offline(path: str | Path) -> RunData:
    """Read an offline (or synced) W&B run directory into RunData.

    Args:
        path: the run directory, or its ``run-<id>.wandb`` file.

    Returns:
        RunData with tracker ``wandb``: every history point at full fidelity
        (step from ``_step``, wall time from ``_timestamp``, seconds since the
        epoch), system metrics under ``system.*``, console lines of
        ``output.log``, the config as params, user tags (group, job type and
        sweep as ``wandb.group``/``wandb.job_type``/``wandb.sweep``), the final
        summary in ``environment["summary"]`` (JSON) and the exit code.

        A truncated log keeps every complete record and adds one line to
        ``warnings``; a log without an exit record gives status ``running``
        (still running, or killed before it could write one), so the verdict
        stays inconclusive.

    Raises:
        InputError: the path is missing or not a W&B run file.
        MissingDependency: wandb is not installed.
    """
    log = find_log(path)
    run_dir = log.parent
    several = several_logs(run_dir)
    scan = ScanResult(log)
    hist = PointBuffer()
    raw_out: list[str] = []
    out_lines: list[str] = []
    config: dict = {}
    summary_raw: dict[str | tuple[str, ...], str] = {}  # top-level key or nested path
    info: dict = {}
    env: dict[str, str] = {}
    exit_code: int | None = None
    runtime: float | None = None
    n_rows = 0
    n_stats = 0
    hc, hs, hv, hw = hist.c, hist.s, hist.v, hist.w
    code = hist.code
    codes = hist.codes
    nan = math.nan

    for rec in iter_records(log, scan):
        kind = rec.WhichOneof("record_type")
        if kind == "history":
            h = rec.history
            step = None
            wall = nan
            n0 = len(hv)
            nested = None
            for it in h.item:
                nk = it.nested_key
                if len(nk) == 1:
                    key = nk[0]
                elif nk:
                    (nested := nested or []).append(it)
                    continue
                else:
                    key = it.key
                vj = it.value_json
                if key in RESERVED:
                    if key == "_step":
                        step = int(float(vj))
                    elif key == "_timestamp":
                        wall = float(vj)
                    continue
                if vj:
                    if vj[0] not in _NUMBER_START:
                        continue
                    try:
                        x = float(vj)
                    except ValueError:
                        continue
                else:
                    x = _typed(it)
                    if x is None:
                        continue
                c = codes.get(key)
                hc.append(code(key) if c is None else c)
                hv.append(x)
            if nested:
                _add_nested(nested, hc, hv, code)
            if step is None:
                step = h.step.num if h.HasField("step") and h.step.num else n_rows
            k = len(hv) - n0
            hs.extend([step] * k)
            hw.extend([wall] * k)
            n_rows += 1
        elif kind == "stats":
            st = rec.stats
            wall = st.timestamp.seconds + st.timestamp.nanos / 1e9
            for it in st.item:
                try:
                    x = float(it.value_json)
                except ValueError:
                    continue
                hist.add(system_key(it.key), n_stats, x, wall)
            n_stats += 1
        elif kind == "output_raw":
            raw_out.append(rec.output_raw.line)
        elif kind == "output":
            out_lines.append(rec.output.line)
        elif kind == "summary":  # one per logged row: keep raw JSON, decode only the last value
            for it in rec.summary.update:
                nk = it.nested_key
                summary_raw[nk[0] if len(nk) == 1 else (tuple(nk) or it.key)] = it.value_json
            for it in rec.summary.remove:
                nk = it.nested_key
                summary_raw.pop(nk[0] if len(nk) == 1 else (tuple(nk) or it.key), None)
        elif kind == "config":
            _apply(config, rec.config)
        elif kind == "run":
            _run_record(rec.run, info, config, env)
        elif kind == "exit":
            exit_code, runtime = rec.exit.exit_code, rec.exit.runtime
        elif kind == "environment":
            _environment(rec.environment, env)
        elif kind == "telemetry" and rec.telemetry.cli_version:
            env["wandb"] = rec.telemetry.cli_version

    warnings = list(scan.warnings)
    env["wandb_source"] = "offline"
    summary: dict = {}
    for path, vj in summary_raw.items():
        try:
            _set(summary, (path,) if isinstance(path, str) else path, json.loads(vj))
        except (ValueError, RecursionError):  # cut, or nested past the stack
            continue
    if not info:
        raise InputError(
            f"{log}: no run record in the file (is it a W&B run file?)"
            + (f"; {warnings[0]}" if warnings else "")
        )
    if raw_out:
        console = console_from_chunks(raw_out)
    elif out_lines:
        console = console_from_chunks(
            line if line.endswith("\n") else line + "\n" for line in out_lines
        )
    elif (run_dir / "files" / "output.log").is_file():
        from mlaudit_core.boundedio import read_regular_text

        try:
            console = console_from_text(read_regular_text(run_dir / "files" / "output.log"))
        except OSError:
            console = []
    else:
        console = []

    if exit_code is None:  # the verdict then stays inconclusive ("running") instead of healthy
        status = RunStatus.RUNNING
        warnings.append(
            f"{log}: no exit record: the run is still running or was killed before "
            "it could write one; audited as running"
        )
    else:
        status = RunStatus.FINISHED if exit_code == 0 else RunStatus.FAILED
        env["exit_code"] = str(exit_code)
    start = info.get("start_time")
    end = None
    if start is not None and runtime:
        end = datetime.fromtimestamp(start.timestamp() + runtime, tz=timezone.utc)
    elif start is not None and hw:
        last = max((w for w in hw if w == w), default=None)
        end = datetime.fromtimestamp(last, tz=timezone.utc) if last else None
    if summary:
        env["summary"] = json.dumps(
            {k: v for k, v in summary.items() if k not in RESERVED}, default=str, sort_keys=True
        )
    entity, project = info.get("entity") or "", info.get("project") or ""
    run_id = info["run_id"]
    return RunData(
        identity=RunIdentity(
            tracker="wandb",
            id=run_id,
            name=info.get("display_name") or run_id,
            url=None,
            project=f"{entity}/{project}" if entity else project or None,
        ),
        status=status,
        start_time=start,
        end_time=end,
        params=params_of(config),
        tags=info.get("tags", {}),
        metrics=hist.table(),
        console=console,
        artifacts=_files(run_dir),
        environment=env,
        resumed_from=info.get("resumed_from"),
        parent_id=info.get("parent_id"),
        warnings=warnings,
        notes=[several] if several else [],
    )


def _typed(it) -> float | None:
    """A HistoryItem value held in the typed fields (newer SDKs) instead of value_json."""
    which = it.WhichOneof("value")
    if which == "number":
        return it.number
    if which == "integer":
        return float(it.integer)
    return None


def _add_nested(items, hc, hv, code) -> None:
    """Items of nested dicts: joined with ``.``; media objects (with a ``_type`` member) dropped."""
    media = {tuple(it.nested_key[:-1]) for it in items if it.nested_key[-1] == "_type"}
    for it in items:
        nk = tuple(it.nested_key)
        if any(nk[: len(m)] == m for m in media):
            continue
        vj = it.value_json
        if not vj or vj[0] not in _NUMBER_START:
            continue
        try:
            x = float(vj)
        except ValueError:
            continue
        hc.append(code(".".join(nk)))
        hv.append(x)


def _set(target: dict, path, value) -> None:
    d = target
    for k in path[:-1]:
        if not isinstance(d.get(k), dict):
            d[k] = {}
        d = d[k]
    d[path[-1]] = value


def _apply(target: dict, rec) -> None:
    """Apply a ConfigRecord (``update`` and ``remove`` items) to a nested dict."""
    for it in rec.update:
        try:
            _set(target, list(it.nested_key) or [it.key], json.loads(it.value_json))
        except (ValueError, RecursionError):  # cut, or nested past the stack
            continue
    for it in rec.remove:
        path = list(it.nested_key) or [it.key]
        d = target
        for k in path[:-1]:
            d = d.get(k) if isinstance(d.get(k), dict) else {}
        d.pop(path[-1], None)


def _run_record(r, info: dict, config: dict, env: dict[str, str]) -> None:
    info.update(run_id=r.run_id, entity=r.entity, project=r.project, display_name=r.display_name)
    tags = {t: "" for t in r.tags}
    for name, value in (
        ("wandb.group", r.run_group),
        ("wandb.job_type", r.job_type),
        ("wandb.sweep", r.sweep_id),
    ):
        if value:
            tags[name] = value
    info["tags"] = tags
    if r.notes:
        info["notes"] = r.notes
    if r.HasField("start_time"):
        info["start_time"] = datetime.fromtimestamp(
            r.start_time.seconds + r.start_time.nanos / 1e9, tz=timezone.utc
        )
    # RunRecord.branch_point (a fork's parent) exists from wandb 0.22's protobufs on
    if (
        "branch_point" in r.DESCRIPTOR.fields_by_name
        and r.HasField("branch_point")
        and r.branch_point.run
    ):
        info["parent_id"] = r.branch_point.run
    if r.resumed:
        info["resumed_from"] = r.run_id
    if r.host:
        env["host"] = r.host
    if r.git.commit:
        env["git_commit"] = r.git.commit
    if r.git.remote_url:
        env["git_remote"] = r.git.remote_url
    _apply(config, r.config)


def _environment(e, env: dict[str, str]) -> None:
    for name in (
        "os",
        "python",
        "host",
        "program",
        "executable",
        "gpu_type",
        "cuda_version",
        "docker",
    ):
        value = getattr(e, name)
        if value:
            env[name] = str(value)
    for name in ("cpu_count", "cpu_count_logical", "gpu_count"):
        value = getattr(e, name)
        if value:
            env[name] = str(value)
    if e.git.commit:
        env["git_commit"] = e.git.commit


def _files(run_dir: Path) -> list[Artifact]:
    files = run_dir / "files"
    if not files.is_dir():
        return []
    return [
        Artifact(path=str(p.relative_to(files)), size=p.stat().st_size)
        for p in sorted(files.rglob("*"))
        if p.is_file()
    ]


__all__ = ["find_log", "load_offline", "several_logs"]
