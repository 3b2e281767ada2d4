"""Console logs (stdout captured to a file): the catalog in :mod:`.consolelog` reads them.

Detected by a text file whose first 64 KiB hold lines some catalog format recognises
(``docs/logs.md`` lists the formats); a ``*.log``/``*.txt``/``*.out`` file without
such lines is a weak candidate (chosen only when nothing else fits, and then audited for
failure signatures). A log holding several launches of a job appended to one file (the
step or epoch counter starts over, e.g. SwAV's ``train.log``) is split: the last launch
is audited and the earlier ones are named in the notes. A file whose last line has no line
end (``print`` and ``logging`` end every line) may have been cut while being written: a warning
says so; when that line is a progress bar the data is partial (never ``succeeded``). (W&B's ``files/output.log`` normally lacks the
final line end; it is read by the W&B folder reader, which does not warn.)
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from ..rundata import MetricTable
from ._common import check_text, head_text

NAME = "console"
DETECTS = "console log (lines the log-format catalog recognises)"
_TEXT_SUFFIXES = (".log", ".txt", ".out", ".err", ".stdout", ".stderr", ".gz")
#: A batch job's captured output: PBS/SGE name it ``<job>.o<jobid>``/``<job>.e<jobid>`` and users point
#: SLURM's ``--output``/``--error`` at ``<job>.o``/``<job>.e``.
_JOB_SUFFIX = re.compile(r"\.[eo]\d*$")


def sniff(path: Path) -> float:
    if path.is_dir():
        return 0.0
    suffix = path.suffix.lower()
    named = (
        suffix in _TEXT_SUFFIXES
        or bool(_JOB_SUFFIX.fullmatch(suffix))
        or any(w in path.name.lower() for w in ("log", "stdout", "output"))
    )
    if not named and suffix:  # an image, a checkpoint, source code...: not opened while walking
        return 0.0
    if suffix in (".csv", ".tsv", ".json", ".jsonl", ".yaml", ".yml", ".toml", ".py"):
        return 0.0  # structured files have their own readers (``--as console`` still reads them)
    text = head_text(path, 65536)  # UTF-8 or UTF-16, NUL holes left out; "" when binary
    if not text:
        return 0.0
    from .consolelog import parse_lines

    # each carriage-return part a line (a redraw or a line end alike): sniffing counts figures
    res = parse_lines(text.splitlines()[:2000], keep_console=False)
    n = len(res.metrics)
    if n >= 3:
        return 0.6 if named else 0.5
    if n:
        return 0.45 if named else 0.3
    return 0.2 if named else 0.0


def load(path: Path):
    from .consolelog import load_logs

    check_text(path, "console log") if path.suffix != ".gz" else None
    run = load_logs([path])
    split_launches(run, path.name)
    if path.suffix != ".gz":
        from ._csv import head_tail_problem

        cut = head_tail_problem(path)
        if cut:
            run.warnings.append(_unterminated_warning(path, cut))
    return run


#: An unfinished tqdm/Keras progress bar: ``43%|``, ``43/100 [`` (tqdm ``43/100 [00:01<...``
#: or Keras ``43/100 [===>...``) with n < total, or Keras's ``ETA:`` (gone when the bar ends).
_PCT = re.compile(r"(\d{1,3})%\|")
_COUNT = re.compile(r"(\d+)/(\d+) \[")
_ETA = re.compile(r"\bETA:?\s*\d")


def _unfinished_bar(line: str) -> bool:
    if _ETA.search(line):
        return True
    if any(int(m.group(1)) < 100 for m in _PCT.finditer(line)):
        return True
    return any(int(m.group(1)) < int(m.group(2)) for m in _COUNT.finditer(line))


def _unterminated_warning(path: Path, cut: str) -> str:
    """The warning for a console log whose last line has no line end.

    ``print`` and ``logging`` end every line, so a log stopped mid-line was usually cut while
    being written; but logs pasted into issues, gists or editors often just lack the final
    line end. Only an unfinished progress bar there (a process stopped mid-epoch) is called
    truncated (partial input: never ``succeeded``), as is a last line of the previous line's
    shape with fewer fields (a record cut mid-way); any other last line is a load warning
    that lowers confidence (x0.9) without making the data partial. No corpus artifact has an
    unterminated console log outside W&B folders (checked: shared realworld, shared cases,
    tests/data/realworld, 120 text files), so the split follows the mechanism, not a figure.
    """
    try:
        with open(path, "rb") as fh:
            fh.seek(0, 2)
            fh.seek(max(fh.tell() - 4096, 0))
            tail = fh.read().decode("utf-8", "replace")
    except OSError:
        tail = ""
    lines = tail.split("\n")[-2:]
    last = lines[-1].split("\r")[-1]
    if _unfinished_bar(last):
        return cut.replace(
            "that row was left out",
            "it stops inside a progress bar, so the run may have gone on after the log did",
        )
    prev = lines[0].split("\r")[-1].split() if len(lines) == 2 else []
    words = last.split()
    if prev and words and words[0] == prev[0] and len(words) < len(prev):
        # a record of the previous line's shape with fewer fields ('step 5: lo' after
        # 'step 4: loss 0.2'): cut mid-record
        return cut.replace("that row was left out", "that record was left out")
    return (
        f"{path.name}: the last line has no line end; the log may stop before the run did "
        "(or it was saved without a final line end)"
    )


def _epoch_restarts(run, main: str) -> list[int]:
    """Where the epoch starts over, when the steps of ``main`` do not (a console whose steps number
    its records: ``Epoch 1/20, Train Loss: 0.098`` lines of launches appended one after another),
    as indexes into ``main``: from a ``*/epoch`` series logged with each of its points, or from
    any ``*/epoch`` series by the wall time of its restarts (every point timestamped)."""
    from ._common import split_restarts

    s = run.metrics.series(main)
    for k in run.metrics.keys:
        if k.split("/")[-1] != "epoch":
            continue
        e = run.metrics.series(k)
        r = split_restarts(e.values.astype(np.float64))
        if not r:
            continue
        if len(e) == len(s):
            return r
        if np.isfinite(e.wall_times).all() and np.isfinite(s.wall_times).all():
            at = sorted({int(np.searchsorted(s.wall_times, e.wall_times[i])) for i in r})
            return [a for a in at if 0 < a < len(s)]
    return []


def _launch_restarts(run, main: str, restarts: list[int]) -> list[int]:
    """The step restarts of ``main`` that begin a launch: where a ``*/epoch`` series logged with each
    of its points goes up at the restart, the step counts batches within the epoch (``Epoch: 2,
    Step: 0`` after ``Epoch: 1, Step: 5800``): the training counter (epoch, step) goes on, so that
    restart is no launch (realworld f10b2-09: three MTCNN stages of 20 epochs each, 60 'launches'
    before). A restart where the epoch also starts over or goes back, or with no epoch logged, stays."""
    n = len(run.metrics.series(main))
    for k in run.metrics.keys:
        e = run.metrics.series(k).values
        if k.split("/")[-1] == "epoch" and len(e) == n:
            return [i for i in restarts if not e[i] > e[i - 1]]
    return restarts


def _steps_across_epochs(run, main: str) -> None:
    """Number the steps of a launch whose step counts batches within the epoch (``Epoch: 2, Step: 0``
    after ``Epoch: 1, Step: 5800``) on from the previous epoch's last step, in place: each restart of
    ``main``'s step where the ``*/epoch`` logged with each point goes up (:func:`_launch_restarts`)
    adds the step reached before it plus one stride (the median step increment), for every series
    logged with ``main`` (the same steps); the others keep theirs. Without this a per-epoch batch
    index reads as a counter reset every epoch (LI002)."""
    from ._common import split_restarts

    s = run.metrics.series(main)
    steps = s.steps.astype(np.float64)
    inner = split_restarts(steps)
    if not inner or _launch_restarts(run, main, inner):
        return  # no restart, or one the epoch does not explain: the steps stay as printed
    diffs = np.diff(steps)
    stride = float(np.median(diffs[diffs > 0])) if (diffs > 0).any() else 1.0
    new = steps.copy()
    offset = 0.0
    for a, b in zip([0, *inner], [*inner, len(steps)]):
        new[a:b] = steps[a:b] - steps[a] + offset
        offset = new[b - 1] + stride
    kept = []
    for k in run.metrics.keys:
        ks = run.metrics.series(k)
        same = len(ks) == len(s) and np.array_equal(ks.steps, s.steps)
        kept.append(type(ks)(k, new, ks.values, ks.wall_times) if same else ks)
    run.metrics = MetricTable.from_series(kept)
    run.notes.append(
        f"{main}: the printed step counts batches within each epoch (it starts over {len(inner)} "
        "time(s) as the epoch goes up); the steps are numbered on across epochs"
    )


def _last_launch_series(
    run, keys: list[str], cut_wall: float, cut_at: tuple[int, int, np.ndarray]
) -> list:
    """Each key's points of the last launch: for a key logged with the main series (its steps) those
    from the restart's index (``cut_at``: the main series' length, that index and its steps), else
    those at or after the last restart's wall time when every point has one, else for a key with as
    many points as the main series those from the restart's index, else those after the key's own
    last restart."""
    from ._common import split_restarts

    kept = []
    main_steps = cut_at[2]
    for k in keys:
        ks = run.metrics.series(k)
        if len(ks) == cut_at[0] and np.array_equal(ks.steps, main_steps):
            # logged with the main series, point for point: cut at the restart's index (a wall time
            # printed to the second can hold points of both launches)
            m = np.arange(len(ks)) >= cut_at[1]
        elif np.isfinite(cut_wall) and np.isfinite(ks.wall_times).all():
            m = ks.wall_times >= cut_wall
        elif len(ks) == cut_at[0]:
            m = np.arange(len(ks)) >= cut_at[1]
        else:
            r = split_restarts(ks.steps.astype(np.float64))
            m = np.zeros(len(ks), dtype=bool)
            m[(r[-1] if r else 0) :] = True
        if m.any():
            kept.append(type(ks)(k, ks.steps[m], ks.values[m], ks.wall_times[m]))
    return kept


def _config_values_to_params(run, kept: list, main: str) -> list:
    """Values each launch prints with its configuration (``epochs: 400``, ``seed: 31``) are not
    metrics: a key of the kept launch with one value throughout and at most 1/20 of the main
    series' points (each launch prints it once, resumed launches again) becomes a ``log.*``
    param; returns the other series."""
    n_main = max((len(ks) for ks in kept if ks.key == main), default=0)
    config = []
    for ks in kept:
        if ks.key == main:
            continue
        fin = ks.values[np.isfinite(ks.values)]
        if len(ks) * 20 <= n_main and np.unique(fin).size <= 1:
            config.append(ks.key)
            if fin.size:
                run.params.setdefault(f"log.{ks.key.split('/', 1)[-1]}", f"{fin[-1]:g}")
    return [ks for ks in kept if ks.key not in config]


def split_launches(run, name: str) -> None:
    """Keep only the last launch when the main series' counter starts over (in place).

    The main series is the one with the most points among the training-loss-like keys
    (else any key). With wall times, every point before the last restart's time is
    dropped; without, each key keeps its own points after its last restart.
    """
    from ._common import split_restarts

    keys = run.metrics.keys
    if not keys:
        return
    # a loss-named value printed once (a configuration's ``loss_weight: 1``) carries no counter
    lossy = [k for k in keys if "loss" in k.lower() and len(run.metrics.series(k)) >= 3] or keys
    main = max(lossy, key=lambda k: len(run.metrics.series(k)))
    s = run.metrics.series(main)
    step_restarts = split_restarts(s.steps.astype(np.float64))
    restarts = _launch_restarts(run, main, step_restarts) or _epoch_restarts(run, main)
    if not restarts:
        if step_restarts:
            _steps_across_epochs(run, main)
        return
    from ..baseline.reruns import split_reruns

    # complete reruns of one configuration from scratch: the earlier ones are the last one's
    # baselines (compared through the noise band, docs/baselines.md "Reruns in one record")
    reruns = split_reruns(run)
    cut_wall = s.wall_times[restarts[-1]]
    kept = _config_values_to_params(
        run, _last_launch_series(run, keys, cut_wall, (len(s), restarts[-1], s.steps)), main
    )
    bounds = [0, *restarts, len(s)]
    segs = [(bounds[i], bounds[i + 1]) for i in range(len(bounds) - 1)]
    desc = "; ".join(
        f"{a + 1}: steps {int(s.steps[a])}-{int(s.steps[b - 1])}"
        for a, b in [segs[i] for i in range(len(segs) - 1)][:20]
    )
    more = "" if len(segs) <= 21 else f" and {len(segs) - 21} more"
    last_a, last_b = segs[-1]
    run.metrics = MetricTable.from_series(kept)
    _steps_across_epochs(run, main)
    run.notes.append(
        f"{name} holds {len(segs)} launches appended one after another ({main} starts over "
        f"{len(restarts)} time(s)); audited the last (steps {int(s.steps[last_a])}-"
        f"{int(s.steps[last_b - 1])}); earlier launches (from point {desc}{more}) were left out"
    )
    if np.isfinite(cut_wall):
        from datetime import datetime

        run.start_time = datetime.fromtimestamp(float(cut_wall))  # naive local, as load_logs does
    run.cache.clear()
    if reruns is not None:
        from ..baseline.compare import attach_baselines

        attach_baselines(run, reruns[1])
        run.notes.append(
            f"the {len(reruns[1])} earlier launch(es) ran the same configuration from scratch to "
            "a comparable length: they are this run's baselines (noise band)"
        )
