"""Online W&B runs through the public API (``wandb.Api``) -> RunData.

Credentials and server come from the usual W&B settings (``WANDB_API_KEY``,
``WANDB_BASE_URL``, ``~/.netrc``, ``wandb login``); mlaudit never prints or
writes them. Every SDK failure becomes one :class:`InputError` line naming the
run and the problem (unknown run, wrong key, unreachable server).
"""

from __future__ import annotations

import math
import os
import re
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from mlaudit_core.errors import InputError, TrackerUnavailable
from mlaudit_core.plugins import require
from mlaudit_core.redact import redact_text
from mlaudit_core.rundata import Artifact, RunData, RunIdentity

from .mapping import (
    PointBuffer,
    add_row,
    console_from_text,
    params_of,
    scalar,
    status_of,
    system_key,
)
from .mapping import time_of as _time

#: Page size for the full-fidelity history scan (wandb's default is 1,000 rows).
PAGE_SIZE = 10_000
#: Upper bound on system-metric samples asked for (the events stream is sampled
#: every 15 s by default: 100,000 samples is 17 days).
SYSTEM_SAMPLES = 100_000
#: Characters W&B never allows in an entity, project or run id (whitespace, URL syntax).
_BAD_SEGMENT = re.compile(r"[\s?#:%\\/]")


def valid_segment(s: str) -> bool:
    r"""An entity, project or run id W&B could hold: 1-128 printable characters, none of
    whitespace ``? # : % \ /``, not ``.`` or ``..`` (URL path segments W&B would not route)."""
    return (
        0 < len(s) <= 128
        and s.isprintable()
        and not _BAD_SEGMENT.search(s)
        and s not in (".", "..")
    )


_URL = re.compile(r"^https?://[^/]+/(?P<e>[^/]+)/(?P<p>[^/]+)/runs/(?P<r>[^/?#]+)")


@dataclass(frozen=True)
class RunPath:
    entity: str
    project: str
    run_id: str

    def __str__(self) -> str:
        return f"{self.entity}/{self.project}/{self.run_id}"


def parse_ref(ref: str) -> RunPath:
    """``ENTITY/PROJECT/RUN_ID``, ``ENTITY/PROJECT/runs/RUN_ID`` or a run's URL -> RunPath.

    Raises:
        InputError: the reference has another shape.
    """
    ref = ref.strip()
    m = _URL.match(ref)
    if m:
        return RunPath(m["e"], m["p"], m["r"])
    parts = [p for p in ref.split("/") if p]
    if len(parts) == 4 and parts[2] == "runs":
        parts = [parts[0], parts[1], parts[3]]
    if len(parts) != 3 or not all(valid_segment(p) for p in parts):
        raise InputError(f"{ref!r}: expected a W&B run as ENTITY/PROJECT/RUN_ID or its URL")
    return RunPath(*parts)


def base_url() -> str:
    return os.environ.get("WANDB_BASE_URL", "https://api.wandb.ai").rstrip("/")


#: W&B answers that mean "the server failed this time" (HTTP 5xx, rate limiting, a GraphQL
#: "internal error"): a watcher retries them, unlike "no such run" or a refused key.
_TRANSIENT = (
    "internal error",
    "500",
    "502",
    "503",
    "504",
    "bad gateway",
    "service unavailable",
    "gateway timeout",
    "429",
    "too many requests",
    "rate limit",
    # wandb-core (>= 0.22) downloads a run's history to one parquet file per run under
    # WANDB_CACHE_DIR, even with use_cache=False: a second process scanning the same run at the
    # same moment truncates it under the first ("failed to create reader for file: ...
    # EOF: Parquet file too small"); the next scan reads a whole file
    "failed to create reader for file",
)


@contextmanager
def sdk_errors(what: str) -> Iterator[None]:
    """Turn wandb's exceptions into one InputError line (credentials redacted)."""
    wandb = require("wandb", "wandb", "wandb")
    from wandb.errors import AuthenticationError, CommError, UsageError
    from wandb.errors import Error as WandbError

    try:  # wandb-core's service errors (wandb >= 0.20); older SDKs raise CommError instead
        from wandb.sdk.lib.service.service_connection import WandbApiFailedError
    except ImportError:

        class WandbApiFailedError(Exception):  # noqa: N818 - never raised: a placeholder
            pass

    try:
        yield
    except InputError:
        raise
    except AuthenticationError as exc:
        msg = _first_line(exc)
        if any(
            s in msg.lower()
            for s in (
                "invalid credentials",
                "did not recognize",
                "401",
                "403",
                "api key",
                "unauthorized",
            )
        ):
            raise InputError(
                f"{what}: W&B at {base_url()} rejected the API key (check "
                "WANDB_API_KEY, ~/.netrc or `wandb login`)"
            ) from None
        raise TrackerUnavailable(
            f"{what}: cannot reach W&B at {base_url()}: {msg.split(': ', 1)[-1]}"
        ) from None
    except (CommError, UsageError, WandbApiFailedError, ValueError, WandbError) as exc:
        msg = _first_line(exc)
        low = msg.lower()
        if "could not find run" in low or "not found" in low:
            raise InputError(
                f"{what}: no such run on {base_url()} (deleted, or a typo in ENTITY/PROJECT/RUN_ID)"
            ) from None
        if any(
            s in low
            for s in (
                "connection refused",
                "connect:",
                "no such host",
                "timeout",
                "timed out",
                "dial tcp",
                "unreachable",
                "connection reset",
                "did not respond in time",
            )
        ):
            raise TrackerUnavailable(f"{what}: cannot reach W&B at {base_url()}: {msg}") from None
        if "api key" in low or "credentials" in low or "401" in low or "permission" in low:
            raise InputError(f"{what}: W&B at {base_url()} refused access: {msg}") from None
        if any(s in low for s in _TRANSIENT):
            raise TrackerUnavailable(f"{what}: W&B API error: {msg}") from None
        raise InputError(f"{what}: W&B API error: {msg}") from None
    except OSError as exc:
        raise InputError(f"{what}: cannot reach W&B at {base_url()}: {exc}") from None
    del wandb


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return redact_text(text[0] if text else type(exc).__name__)


def make_api(timeout: int | None = None):
    """A ``wandb.Api`` with the user's settings; raises InputError on bad credentials/server.

    ``timeout``: seconds per request (default: ``MLAUDIT_TRACKER_TIMEOUT``, 10 s).
    """
    from mlaudit_core.settings import tracker_timeout

    os.environ.setdefault("WANDB_SILENT", "true")  # wandb's own ERROR lines would double ours
    wandb = require("wandb", "wandb", "wandb")
    with sdk_errors("login"):
        return wandb.Api(timeout=max(1, round(timeout or tracker_timeout())))


def fetch_run(api, path: RunPath):
    with sdk_errors(str(path)):
        return api.run(str(path))


def load_online(ref: str, *, api=None, timeout: int | None = None) -> RunData:
    """Read one run through the public API at full fidelity.

    Reads state and timestamps, config, summary, tags, notes, group, job type and
    sweep; every history row (``scan_history``, which wandb-core serves from the
    run's parquet history exports plus the live tail: never the ~500-point
    sampled ``history()``); the system-metrics stream; the console
    (``output.log``); the file list.

    Args:
        ref: ``ENTITY/PROJECT/RUN_ID`` or the run's URL.
        api: a ``wandb.Api`` to reuse (one is made from the user's settings otherwise).
        timeout: seconds per API request.

    Returns:
        RunData with tracker ``wandb``; see :mod:`mlaudit_wandb.mapping` for key names.
        Rows repeated at the same ``_step`` (a resumed run re-logging, or an export
        overlapping the live tail) are read once.

    Raises:
        InputError: bad reference, unknown or deleted run, rejected key, unreachable server.
        MissingDependency: wandb is not installed.
    """
    path = parse_ref(ref)
    api = api or make_api(timeout)
    run = fetch_run(api, path)
    what = str(path)
    warnings: list[str] = []
    with sdk_errors(what):
        state = run.state
        config = dict(run.config)
        summary = dict(run.summary_metrics or {})
        tags = {t: "" for t in (run.tags or [])}
        for name, value in (
            ("wandb.group", run.group),
            ("wandb.job_type", run.job_type),
            ("wandb.sweep", run.sweep_name),
        ):
            if value:
                tags[name] = str(value)
        buf = PointBuffer()
        n_rows = read_history(run, buf)
        read_system(run, buf)
        files = [Artifact(path=f.name, size=getattr(f, "size", None)) for f in run.files()]
    console, console_warning = read_console(run, {a.path for a in files})
    if console_warning:
        warnings.append(console_warning)
    status = status_of(state)
    if state == "running":
        warnings.append(
            f"{what}: the run is still running; the audit covers {n_rows} history rows so far"
        )
    start = _time(run.created_at)
    end = _time(getattr(run, "heartbeat_at", None)) if state != "running" else None
    runtime = summary.get("_runtime")
    if start is not None and isinstance(runtime, (int, float)) and state != "running":
        end = datetime.fromtimestamp(start.timestamp() + float(runtime), tz=timezone.utc)
    env = {"state": state, "wandb_source": "online"}
    if getattr(run, "commit", None):
        env["git_commit"] = str(run.commit)
    sm = {k: v for k, v in summary.items() if not k.startswith("_")}
    if sm:
        import json

        env["summary"] = json.dumps(sm, default=str, sort_keys=True)
    out = RunData(
        identity=RunIdentity(
            tracker="wandb",
            id=path.run_id,
            name=run.name or path.run_id,
            url=_safe_url(run),
            project=f"{path.entity}/{path.project}",
        ),
        status=status,
        start_time=start,
        end_time=end,
        params=params_of(config),
        tags=tags,
        metrics=buf.table(),
        console=console,
        artifacts=files,
        environment=env,
        warnings=warnings,
    )
    # the notes as loaded: the write-back re-reads them after writing only when they changed
    out.cache["wandb.notes_loaded"] = run.notes or ""
    return out


def read_history(run, buf: PointBuffer) -> int:
    """Every history row into ``buf`` (full fidelity); returns the number of distinct steps."""
    seen: set[int] = set()
    n = 0
    # wandb >= 0.22 caches scanned history unless told not to; older SDKs have no cache
    # (and no ``use_cache`` argument)
    import inspect

    fresh = (
        {"use_cache": False}
        if "use_cache" in inspect.signature(run.scan_history).parameters
        else {}
    )
    for row in _scan_rows(run, fresh):
        step = row.get("_step")
        if isinstance(step, (int, float)) and not isinstance(step, bool):
            if step in seen:
                continue
            seen.add(step)
        add_row(buf, row, n)
        n += 1
    return n


def _scan_rows(run, fresh: dict) -> Iterator[dict]:
    """``run.scan_history`` rows; a scan that fails on the history cache file before its first
    row (another process writing the same file, see ``_TRANSIENT``) is started again, up to
    three times, 0.5 s then 1 s apart; any other failure, or one after rows came, is raised."""
    for attempt in range(3):
        rows = 0
        try:
            for row in run.scan_history(page_size=PAGE_SIZE, **fresh):
                rows += 1
                yield row
            return
        except Exception as exc:
            if rows or attempt == 2 or "failed to create reader for file" not in str(exc):
                raise
        time.sleep(0.5 * (attempt + 1))


def read_system(run, buf: PointBuffer) -> int:
    """The system-metrics (events) stream into ``buf`` as ``system.*`` keys; step = sample index."""
    rows = run.history(stream="system", samples=SYSTEM_SAMPLES, pandas=False) or []
    for i, row in enumerate(rows):
        wall = row.get("_timestamp")
        wall = float(wall) if isinstance(wall, (int, float)) else math.nan
        for key, value in row.items():
            if key.startswith("_"):
                continue
            x = scalar(value)
            if x is not None:
                buf.add(system_key(key), i, x, wall)
    return len(rows)


def read_console(run, file_names: set[str]) -> tuple[list, str | None]:
    """Console lines of ``output.log`` (the file W&B uploads with the run's stdout/stderr).

    Returns (lines, warning or None). A missing log is not an error: the run may have
    been started with ``console="off"``.
    """
    if "output.log" not in file_names:
        return [], None
    try:
        with tempfile.TemporaryDirectory(prefix="mlaudit-wandb-") as tmp:
            fh = run.file("output.log").download(root=tmp, replace=True)
            fh.close()
            text = Path(tmp, "output.log").read_text("utf-8", "replace")
    except Exception as exc:  # the run is still readable without its console
        return [], f"{run.id}: output.log could not be downloaded ({_first_line(exc)})"
    return console_from_text(text), None


def _safe_url(run) -> str | None:
    try:
        return run.url
    except Exception:
        return None
