"""W&B run folders (``wandb/run-*``, ``wandb/offline-run-*``) and ``wandb/`` folders holding them.

Detected by a ``run-<id>.wandb`` file, a ``files/`` folder with ``wandb-summary.json`` or
``wandb-metadata.json`` (a copied ``latest-run`` too), or a ``files/`` folder with
``output.log`` or ``config.yaml`` in a folder named ``run-*``/``offline-run-*``; a
``wandb/`` folder with several of them is a container (:func:`list_runs`).

With the ``.wandb`` file, the offline reader of the W&B plugin reads every history point
(``integrations/mlaudit_wandb/offline.py``; needs ``mlaudit[wandb]``). Without it (a
snapshot that dropped the large binary), metrics come from ``files/output.log`` (the
console, read by the log-format catalog), params from ``files/config.yaml`` and the final
values of ``files/wandb-summary.json`` are kept as ``summary.*`` params; the notes say
so. Nothing is written into the folder.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from mlaudit_core.errors import InputError
from mlaudit_core.formats._common import flat_params, read_yaml

NAME = "wandb_dir"
DETECTS = "W&B run folder (run-<id>.wandb and/or files/wandb-summary.json, output.log)"
_RUN_PREFIXES = ("run-", "offline-run-")
#: Files of a run folder's ``files/`` that only the W&B SDK writes.
_WANDB_FILES = ("wandb-summary.json", "wandb-metadata.json")


def _is_run(d: Path) -> bool:
    if not d.is_dir():
        return False
    if any(d.glob("*.wandb")):
        return True
    f = d / "files"
    if not f.is_dir():
        return False
    if any((f / n).is_file() for n in _WANDB_FILES):
        return True  # names only W&B writes: a run folder whatever its own name (``latest-run``)
    return d.name.startswith(_RUN_PREFIXES) and any(
        (f / n).is_file() for n in ("output.log", "config.yaml")
    )


def _runs_in(d: Path) -> list[Path]:
    try:
        return sorted(
            (
                c
                for c in d.iterdir()
                if c.name.startswith(_RUN_PREFIXES) and not c.is_symlink() and _is_run(c)
            ),
            key=lambda c: c.name,
        )
    except OSError:
        return []


def sniff(path: Path) -> float:
    if path.is_file():
        return 0.9 if path.suffix == ".wandb" else 0.0
    if _is_run(path):
        return 0.9
    if path.name == "wandb" or (path / "latest-run").exists():
        return 0.9 if _runs_in(path) else 0.0
    return 0.0


def list_runs(path: Path) -> list[Path]:
    if path.is_file() or _is_run(path):
        return []
    return _runs_in(path)


def load(path: Path):
    if path.is_file():
        path = path.parent
    if not _is_run(path):
        runs = _runs_in(path)
        if not runs:
            raise InputError(
                f"{path}: not a W&B run folder (no run-<id>.wandb, no files/wandb-summary.json)"
            )
        path = runs[-1]
    if any(path.glob("*.wandb")):
        from mlaudit_core.plugins import get_plugin

        run = get_plugin("wandb").load(str(path), offline=True)
        _check_summary(run, path)
        return run
    return _from_files(path)


#: A run folder whose files changed within this many seconds may still be written to
#: (W&B flushes the ``.wandb`` every few seconds, the console every write); without an
#: end record it stays ``running``.
RECENT_S = 600
#: ``logs/debug.log`` line ``wandb_run.py:_atexit_cleanup(): got exitcode: N``, written by
#: every SDK (0.10 to 0.31) when the run finishes (``wandb.finish()`` or at interpreter exit).
_EXITCODE = re.compile(rb"got exitcode: (-?\d+)")
#: The footer ``wandb.finish()`` prints into ``files/output.log`` (SDK 0.10-0.31).
_FOOTER = re.compile(
    rb"^wandb: (?:Run summary:|Run history:|Synced \d|You can sync this run|"
    rb"\S* ?View run .* at: |Find logs at: )",
    re.MULTILINE,
)


def _tail(p: Path, n: int = 65536) -> bytes:
    """The last ``n`` bytes of the regular file ``p`` (b"" for a FIFO, a device such as a
    ``debug.log`` linked to ``/dev/zero``, or an unreadable file)."""
    from mlaudit_core.boundedio import read_regular

    try:
        return read_regular(p, n, tail=True)
    except OSError:
        return b""


def _recent(path: Path) -> bool:
    """Whether the ``.wandb``, the summary or the console changed in the last :data:`RECENT_S` s."""
    now = time.time()
    for p in [
        *path.glob("*.wandb"),
        path / "files" / "wandb-summary.json",
        path / "files" / "output.log",
    ]:
        try:
            if now - p.stat().st_mtime < RECENT_S:
                return True
        except OSError:
            continue
    return False


_now = time.time  # the clock _silence compares record times with (a test moves it forward)


def _records_silent(run) -> bool:
    """Whether the history's own wall times say nothing was written for longer than a live run stays
    silent (:func:`_silence`). A file's mtime is the time it was copied (a clone, an archive
    extracted a minute ago); the records' times are when the run wrote them (own corpus f10b1-13: a
    ``.wandb`` cut at 512 KiB, its last record 2.9 years old, read from a fresh clone)."""
    age, limit = _silence(run)
    return age is not None and age > limit


def _silence(run) -> tuple[float | None, float]:
    """How long ago the run's last record was written, and how long a live run stays silent.

    Returns ``(age_s, limit_s)``: ``age_s`` is now minus the latest wall time over every
    series of the history (``system.*`` included; ``None`` when no record carries a time);
    ``limit_s`` is ``max(RECENT_S, 5 x the median interval between the training records'
    wall times)``. A live offline run writes a system-metrics record every 15 s by default
    (``x_stats_sampling_interval``, SDK 0.17-0.31) and a history record every log call, so
    a run silent past ``limit_s`` is not being written to: W&B's server marks an online run
    ``crashed`` the same way, when its heartbeats stop. The record's own time is used, not
    the file's mtime, so a run folder copied or cloned just now still reads as old.
    """
    import numpy as np

    latest, gaps = None, []
    for k in run.metrics.keys:
        wt = run.metrics.series(k).wall_times
        wt = wt[np.isfinite(wt)]
        if not len(wt):
            continue
        latest = float(wt.max()) if latest is None else max(latest, float(wt.max()))
        if not k.startswith("system.") and len(wt) > 2:
            gaps.append(float(np.median(np.diff(np.sort(wt)))))
    limit = max(RECENT_S, 5 * max(gaps)) if gaps else RECENT_S
    return (None if latest is None else _now() - latest), limit


def _notebook(path: Path) -> str:
    """What in ``files/wandb-metadata.json`` says the run was started from a notebook ('' when nothing
    does): a ``program`` / ``codePath`` ending in ``.ipynb`` (the SDK records the notebook's name),
    ``<python with no main file>`` (the SDK's program for an interactive session whose notebook it
    cannot name), or a ``colab`` key (the SDK adds the Colab notebook URL). A notebook's run is closed
    by ``wandb.finish()`` or the kernel's shutdown, not at the end of a cell, so one left open has no
    exit record (own corpus f6b2-02: a Colab session whose nine ``trainer.train()`` calls ran to the end
    of their schedules, never closed)."""
    from mlaudit_core.boundedio import read_regular_text

    try:
        meta = json.loads(read_regular_text(path / "files" / "wandb-metadata.json", 1 << 20))
    except (ValueError, RecursionError, OSError):
        return ""
    if not isinstance(meta, dict):
        return ""
    for key in ("program", "codePath", "codePathLocal"):
        v = meta.get(key)
        if isinstance(v, str) and (
            v.strip().lower().endswith(".ipynb") or v.strip() == "<python with no main file>"
        ):
            return f"{key} {v.strip()[:80]!r}"
    if meta.get("colab"):
        return "a Colab notebook URL"
    return ""


def _span(s: float) -> str:
    return f"{s / 3600:.1f} h" if s >= 5400 else f"{s / 60:.0f} min"


def _read_summary(path: Path) -> dict | None:
    from mlaudit_core.boundedio import read_regular_text

    summ = path / "files" / "wandb-summary.json"
    if not summ.is_file():
        return None
    try:
        data = json.loads(read_regular_text(summ, 16 << 20))
    except (ValueError, RecursionError, OSError):  # cut, nested past the stack, not a file
        return None
    return data if isinstance(data, dict) else None


def _check_summary(run, path: Path) -> None:
    """Reconcile a ``.wandb`` history with the run folder's other files (in place).

    A ``.wandb`` can stop early (cut when copied or committed: the realworld corpus's
    wb01/wb02 stop at step ~3,900 of 62,509 with no exit record), while
    ``files/wandb-summary.json``, ``files/output.log`` and ``logs/debug.log`` were
    written to the end. Then:

    - history: the ``.wandb`` prefix is kept, and the series parsed from
      ``files/output.log`` (console engine :mod:`.consolelog`) whose names the prefix
      lacks are added (they carry the console's own step axis, said in the notes);
      the summary's final values become ``summary.*`` params;
    - status, when the ``.wandb`` has no exit record: the exit code from
      ``logs/debug.log`` (``got exitcode: N``: finished for 0, failed otherwise), else
      ``finished`` when ``output.log`` ends with W&B's footer, else ``unknown`` when the
      summary reached a step the ``.wandb`` never reached (a live run's summary never
      runs ahead of its ``.wandb``). A warning names the truncated ``.wandb``.

    A run with none of these end marks stays ``running`` while its last record is recent
    (:func:`_silence`: within ``max(RECENT_S, 5 x its median logging interval)``); past that
    the process was killed, crashed or hung: status ``failed`` (W&B's ``crashed``, which
    its server gives an online run whose heartbeats stop) with a warning saying how long
    it has been silent. A live offline run is never called finished.
    """
    from mlaudit_core.rundata import RunStatus

    data = _read_summary(path)
    hist_max = max(
        (
            int(run.metrics.series(k).steps.max())
            for k in run.metrics.keys
            if not k.startswith("system.") and len(run.metrics.series(k))
        ),
        default=None,
    )
    last = data.get("_step") if data else None
    truncated = (
        isinstance(last, (int, float))
        and not isinstance(last, bool)
        and last > 1.05 * ((hist_max if hist_max is not None else -1) + 1) + 1
    )
    wandb_file = next(iter(sorted(path.glob("*.wandb"))), None)
    wname = wandb_file.name if wandb_file else path.name
    if truncated:
        run.warnings.append(
            f"{path.name}: the .wandb history ({wname}) is truncated: it stops at step "
            f"{hist_max}, wandb-summary.json reached step {int(last)}; the summary's final "
            "values are kept as summary.* params"
        )
        for k, v in data.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                run.params.setdefault(f"summary.{k}", str(v))
    if run.status != RunStatus.RUNNING:
        if truncated:
            _add_console_history(run, path, hist_max)
        return
    codes = _EXITCODE.findall(_tail(path / "logs" / "debug.log"))
    footer = bool(_FOOTER.search(_tail(path / "files" / "output.log", 16384)))
    if codes:
        code = int(codes[-1])
        run.status = RunStatus.FINISHED if code == 0 else RunStatus.FAILED
        run.environment["exit_code"] = str(code)
        how = f"logs/debug.log records exit code {code}"
    elif footer:
        run.status = RunStatus.FINISHED
        how = "files/output.log ends with W&B's end-of-run footer"
    elif truncated and (not _recent(path) or _records_silent(run)):
        run.status = RunStatus.UNKNOWN
        how = "wandb-summary.json reached a later step than the .wandb (a live run's never does)"
    else:
        age, limit = _silence(run)
        if age is None or age <= limit:
            return  # no end mark and written to lately: still running (or killed just now)
        nb = _notebook(path)
        if nb:
            run.status = RunStatus.UNKNOWN
            run.warnings[:] = [w for w in run.warnings if "no exit record" not in w]
            run.warnings.append(
                f"{wname} has no exit record and its last record was written {_span(age)} ago, but the run "
                f"was started from a notebook ({nb}): a notebook's run stays open until wandb.finish() or "
                "the kernel stops, so a missing end is not evidence of a crash; status unknown, judged on "
                "its records"
            )
            return
        run.status = (
            RunStatus.FAILED
        )  # what W&B's server calls 'crashed' (mapping.py: crashed -> failed)
        run.warnings[:] = [w for w in run.warnings if "no exit record" not in w]
        run.warnings.append(
            f"{wname} has no exit record and its last record was written {_span(age)} ago "
            f"(nothing since; a live run writes at least every {_span(limit)}): the process was killed, "
            "crashed or hung before it could end; audited as crashed, as W&B marks a run whose "
            "heartbeats stop"
        )
        return
    _add_console_history(run, path, hist_max)  # the .wandb stops before the end the other files saw
    runtime = data.get("_runtime") if data else None
    rt = f", runtime {float(runtime):.0f} s" if isinstance(runtime, (int, float)) else ""
    run.warnings[:] = [w for w in run.warnings if "no exit record" not in w]
    run.warnings.append(
        f"{wname} has no exit record (the file stops early), but the run ended: {how}{rt}; "
        f"status {run.status.value} from those files, not from the .wandb"
    )


def _add_console_history(run, path: Path, hist_max) -> None:
    """Audit the whole console of ``files/output.log`` instead of the prefix the ``.wandb``
    holds, and add its metric series the history lacks (in place).

    The series come from :func:`~mlaudit_core.formats.consolelog.enrich_from_console` (a
    logged key, or a key playing the same role, wins over a printed one); their steps are
    the console's own counter (an epoch or a progress bar), which the notes say.
    """
    out = path / "files" / "output.log"
    if not out.is_file() or out.stat().st_size == 0:
        return
    from mlaudit_core.boundedio import read_regular_text
    from mlaudit_core.formats.consolelog import FACT_PREFIX, enrich_from_console

    from .mapping import console_from_text

    try:
        console = console_from_text(read_regular_text(out))
    except OSError as exc:
        run.warnings.append(f"{out}: not read ({exc.strerror}); history is the .wandb prefix only")
        return
    if len(console) <= len(run.console):
        return
    before = set(run.metrics.keys)
    run.console = console
    run.cache.clear()
    # facts read from the partial console (a planned length from the first progress bar, ...)
    # are re-read from the whole log: the first bar may be a per-epoch bar that restarts
    for k in [k for k in run.params if k.startswith(FACT_PREFIX)]:
        del run.params[k]
    enrich_from_console(run)
    added = [k for k in run.metrics.keys if k not in before]
    run.notes.append(
        f"{path.name}: the .wandb stops at step {hist_max}; the console audited is "
        f"files/output.log ({len(console)} lines, the whole run)"
        + (
            f", and its series {', '.join(added[:8])} were added (their steps are the "
            "console's own counter)"
            if added
            else ""
        )
    )


def _from_files(path: Path):
    from mlaudit_core.formats.consolelog import load_logs

    files = path / "files"
    warnings: list[str] = []
    out = files / "output.log"
    if out.is_file() and out.stat().st_size > 0:
        run = load_logs([out], name=path.name)
        from mlaudit_core.formats.console import split_launches

        split_launches(run, out.name)
    else:
        from mlaudit_core.rundata import RunData, RunIdentity

        run = RunData(identity=RunIdentity(tracker="wandb", id=path.name, name=path.name))
        warnings.append(f"{path}: no files/output.log either; only the summary values are known")
    run.identity.tracker = "wandb"
    run.identity.id = path.name.rsplit("-", 1)[-1]
    run.identity.name = path.name
    cfg = read_yaml(files / "config.yaml", warnings) if (files / "config.yaml").is_file() else {}
    for k, v in cfg.items():
        if k.startswith("_"):
            continue
        val = v.get("value") if isinstance(v, dict) and "value" in v else v
        if isinstance(val, dict):
            flat_params(val, f"{k}.", run.params)
        else:
            run.params[k] = str(val)[:500]
    summ = files / "wandb-summary.json"
    if summ.is_file():
        try:
            from mlaudit_core.boundedio import read_regular_text

            data = json.loads(read_regular_text(summ, 16 << 20))
            for k, v in data.items() if isinstance(data, dict) else []:
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    run.params[f"summary.{k}"] = str(v)
        except (ValueError, RecursionError, OSError):  # cut, nested past the stack, no file
            warnings.append(f"{summ}: not valid JSON; the final values were not read")
    run.notes.insert(
        0,
        f"{path.name}: no run-<id>.wandb history in the folder; metrics were parsed from "
        "files/output.log, final values are the summary.* params (wandb-summary.json)",
    )
    run.warnings.extend(warnings)
    return run
