"""Several launches of a job appended to one console log: the run is the last launch that trained.

A log file that a job appends to on every launch (``python train.py >> train.log``, a
hydra or SwAV logger opened in append mode) holds many runs one after the other. The
parser (:meth:`.parser.LogParser._launch_check`) marks where each launch begins: the
log's first two message lines (prefixes and timestamps removed) appearing again, one
after the other. :func:`keep_last_launch` then makes the run the last launch:

- **console**: only the last launch's lines are audited (failure signatures, the run's
  ending), so a traceback of an earlier launch never decides the last launch's verdict;
- **history**: the earlier launches are summarised in the notes (how many, their lines,
  how many ended with a traceback and the last such exception) and in params
  ``log.launches`` / ``log.launches_with_traceback``;
- **metrics**: the points printed after the last launch began; when that launch resumes
  an earlier one (the main series' first step comes after that launch's first step: a
  restart starts at or below it), the resumed launches' points are kept too, back to the
  launch that started the counter (a repeated step keeps its latest value downstream). Each launch's printed configuration (``epochs: 400``) becomes ``log.*`` params
  (:func:`config_to_params`).

When the last launch(es) printed no training point and no traceback (set-up lines only, an
evaluation-only launch of the saved model, a resume that found training done and exited), the run is the last launch that
did train (:func:`_training_launch`): its lines and points, with a note and the param
``log.launch_judged`` naming which launch was judged.

Launches are found only within one file (``mlaudit logs a.log b.log`` reads files as one
log and does not split them).
"""

from __future__ import annotations

import re
from datetime import datetime

import numpy as np

from ...plan import NORMAL_END
from ...rundata import MetricTable, RunData
from .parser import Launch, ParseResult

_EXCEPTION = re.compile(
    r"^\s*(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Interrupt|Exit|Failure)\b(?::|\s*$)"
)


def main_series(run: RunData) -> str | None:
    """The series that carries the launch's counter: the loss-like key with the most points."""
    keys = run.metrics.keys
    if not keys:
        return None
    lossy = [k for k in keys if "loss" in k.lower()] or keys
    return max(lossy, key=lambda k: len(run.metrics.series(k)))


def _training_launch(run: RunData, res: ParseResult, launches: list[Launch]) -> int | None:
    """The launch (0 = the one at the top of the file, ``i`` = ``launches[i - 1]``) that is the run
    when the last launch(es) did not train: they printed no point of the main series and no
    traceback (each only set up, evaluated the saved model, or found training done and exited), and
    an earlier launch did print training points. ``None`` when the last launch is the run."""
    main = main_series(run)
    if main is None or any(la.generation != res.store_generation for la in launches):
        return None  # the store was thinned: per-launch point counts are not known
    order = {k: i for i, k in enumerate(res.series_order)}
    c = order.get(main)
    if c is None:
        return None
    n_main = len(run.metrics.series(main))
    # a series first seen after a launch began had no point when it began (0)
    starts = [0] + [la.counts[c] if c < len(la.counts) else 0 for la in launches] + [n_main]
    trained = [j for j in range(len(launches) + 1) if starts[j + 1] > starts[j]]
    if not trained or trained[-1] == len(launches):
        return None
    j = trained[-1]
    after = launches[j].lineno  # the first launch that did not train
    if any(
        cl.lineno >= after and cl.text.startswith("Traceback (most recent call last)")
        for cl in run.console
    ):
        return None  # a later launch crashed: how the job ended is that crash (V08 reads it)
    # the later launches printed no training point and no traceback: each only set up, evaluated the
    # saved model or found training done and exited, so none of them is a training that replaces the
    # one that trained (realworld f8b1-11: four set-up-only relaunches after a 10-of-10-epoch launch)
    return j


#: Repeats inside a run (start-up lines between two points of a counter that goes on) that make them a
#: block the run prints again and again: more than one (f9b2-19: dozens, a DataLoader worker start per
#: epoch); a single one can be two launches whose counters happen to line up (own f10b1-20).
_MIN_REPEATS = 2


def _counter_launches(run: RunData, res: ParseResult) -> list[Launch]:
    """The repeated start-up lines that begin a launch, without those that repeat inside one run.

    A job can print its first lines again while it trains (each DataLoader worker start prints
    the dataset's set-up lines, every epoch). A new launch restarts the training counter (or
    rewinds it to a checkpoint), or follows a crash or an end of training; those repeats sit
    between two points of a counter that goes on (:func:`_goes_on`). When at least one candidate
    sits inside a run like that (:data:`_MIN_REPEATS`), the start-up lines are a block the run repeats, and a candidate
    is a launch only when a traceback or an end-of-training line lies since the last launch began,
    or the main series has points since then and after the candidate and its counter does not go
    on across it (a candidate with no point since the last launch began, or none after it, is the
    block printed again before training or before the file ends). Without such a repeat, or with
    a thinned store (per-launch counts not known), the candidates are kept as they are."""
    launches = res.launches
    main = main_series(run)
    if main is None:
        return launches
    c = {k: i for i, k in enumerate(res.series_order)}.get(main)
    if (
        not launches
        or c is None
        or res.launches_dropped
        or any(la.generation != res.store_generation for la in launches)
    ):
        return launches
    n_main = len(run.metrics.series(main))
    ended = [
        cl.lineno
        for cl in run.console
        if cl.text.startswith("Traceback (most recent call last)") or NORMAL_END.search(cl.text)
    ]
    kept: list[Launch] = []
    begin_line, begin_count, repeats = 0, 0, 0
    for la in launches:
        at = la.counts[c] if c < len(la.counts) else 0  # 0: the series had no point yet
        if any(begin_line <= ln < la.lineno for ln in ended):
            kept.append(la)  # a process ended since the last launch began
        elif begin_count < at < n_main and _goes_on(run, main, at) is False:
            kept.append(la)  # the counter starts over or rewinds: a new launch
        elif begin_count < at < n_main and _goes_on(run, main, at) is None:
            return launches  # the steps number records and no epoch is logged: nothing tells
        else:
            repeats += begin_count < at < n_main
            continue
        begin_line, begin_count = la.lineno, at
    return kept if repeats >= _MIN_REPEATS else launches


def _epochs(run: RunData, main: str) -> np.ndarray | None:
    """The epoch logged with each point of the main series (an epoch series with the same number
    of points), or None."""
    n = len(run.metrics.series(main))
    for k in run.metrics.keys:
        if k.split("/")[-1] == "epoch" and len(run.metrics.series(k)) == n:
            return run.metrics.series(k).values
    return None


def _numbers_records(steps: np.ndarray) -> bool:
    """Whether the steps only number the records (1, 2, 3... or 0, 1, 2...: a console that prints
    no step of its own): such steps go up across a restart, so they tell nothing of the counter."""
    return bool(steps.size) and bool(
        np.array_equal(steps, np.arange(steps[0], steps[0] + steps.size))
    )


def _goes_on(run: RunData, main: str, at: int) -> bool | None:
    """Whether the training counter goes on between the main series' points ``at - 1`` and
    ``at``: the step goes up and the epoch logged with it (:func:`_epochs`), if any, does not go
    back; with steps that only number the records, the epoch must go up. None when neither
    tells (record numbers and no epoch)."""
    s = run.metrics.series(main)
    e = _epochs(run, main)
    if _numbers_records(s.steps):
        return None if e is None else bool(e[at] > e[at - 1])
    return bool(s.steps[at] > s.steps[at - 1] and (e is None or not e[at] < e[at - 1]))


def _later(run: RunData, main: str, a: int, b: int) -> bool:
    """Whether the main series' point ``a`` (a launch's first) is further along the training
    counter than point ``b`` (an earlier launch's first): a resume. With an epoch logged with the
    points (:func:`_epochs`) and steps that only number the records, the epoch decides (a restart
    starts at the same first epoch); else the step."""
    s = run.metrics.series(main)
    e = _epochs(run, main)
    if e is not None and _numbers_records(s.steps) and np.isfinite(e[a]) and np.isfinite(e[b]):
        return bool(e[a] > e[b])
    return bool(s.steps[a] > s.steps[b])


def keep_last_launch(run: RunData, res: ParseResult, name: str) -> None:
    """Make ``run`` (read from one file with ``res``) its last launch, in place, or the last launch
    that trained when the launches after it did not (:func:`_training_launch`). See the module."""
    launches = _counter_launches(run, res)
    if not launches:
        return
    res.launches = launches
    n = len(launches) + 1 + res.launches_dropped
    j = _training_launch(run, res, launches)
    if j is not None:
        _keep_training_launch(run, res, launches, j, name, n)
        return
    last = launches[-1]
    history = _history(run, launches)
    run.console = [cl for cl in run.console if cl.lineno >= last.lineno]
    kept_from, how = _cut_metrics(run, res, launches)
    config_to_params(run, main_series(run))
    tb = history["with_traceback"]
    run.params["log.launches"] = str(n)
    run.params["log.launches_with_traceback"] = str(tb)
    ended = (
        f"; {tb} of them ended with a traceback (the last: {history['last_exception']!r} at line "
        f"{history['last_exception_line']})"
        if tb
        else "; none ended with a traceback"
    )
    run.notes.append(
        f"{name} holds {n} launches appended one after another (each starts with the same first lines); the "
        f"run audited is the last launch (from line {last.lineno}"
        + (
            f", {datetime.fromtimestamp(last.wall):%Y-%m-%d %H:%M:%S}"
            if np.isfinite(last.wall)
            else ""
        )
        + f"); the {n - 1} earlier launch(es) are history, not this run{ended}. {how}"
    )
    if kept_from is not None and np.isfinite(kept_from.wall):
        run.start_time = datetime.fromtimestamp(
            float(kept_from.wall)
        )  # naive local, as load_logs does
    run.cache.clear()


def _keep_training_launch(
    run: RunData, res: ParseResult, launches: list[Launch], j: int, name: str, n: int
) -> None:
    """Make ``run`` launch ``j`` (see :func:`_training_launch`): its console lines and the points
    printed before the next launch began (with the launches it resumes, as for the last launch)."""
    nxt = launches[j]
    begin = launches[j - 1].lineno if j else 0
    order = {k: i for i, k in enumerate(res.series_order)}
    table = run.metrics
    cut = []
    for k in table.keys:
        ks = table.series(k)
        c = order.get(k)
        b = nxt.counts[c] if c is not None and c < len(nxt.counts) else len(ks)
        cut.append(type(ks)(k, ks.steps[:b], ks.values[:b], ks.wall_times[:b]))
    run.metrics = MetricTable.from_series([x for x in cut if len(x)])
    later = run.console
    run.console = [cl for cl in later if begin <= cl.lineno < nxt.lineno]
    how = "Metrics: the points it printed."
    if j:
        _, how = _cut_metrics(run, res, launches[:j])
    config_to_params(run, main_series(run))
    run.params["log.launches"] = str(n)
    run.params["log.launch_judged"] = str(j + 1)
    run.notes.append(
        f"{name} holds {n} launches appended one after another (each starts with the same first lines); the run "
        f"audited is launch {j + 1} (lines {max(begin, 1)}-{nxt.lineno - 1}), the last one that trained: the "
        f"{len(launches) - j} launch(es) after it (from line {nxt.lineno}) printed no training point and no "
        "traceback (set-up lines only, an evaluation-only launch, or a resume that found training done), so "
        "they do not replace "
        f"the run that trained. {how.replace('the last launch', 'this launch')}"
    )
    if j and np.isfinite(launches[j - 1].wall):
        run.start_time = datetime.fromtimestamp(float(launches[j - 1].wall))
    run.cache.clear()


def _history(run: RunData, launches: list[Launch]) -> dict:
    """Tracebacks of the launches before the last, from the console lines kept."""
    starts = [1] + [la.lineno for la in launches]
    with_tb = set()
    last_exc, last_line = "", 0
    bounds = np.array(starts[1:])
    for cl in run.console:
        if cl.lineno >= launches[-1].lineno:
            break
        i = int(np.searchsorted(bounds, cl.lineno, side="right"))  # launch index of this line
        text = cl.text
        if text.startswith("Traceback (most recent call last)"):
            with_tb.add(i)
        elif i in with_tb and _EXCEPTION.match(text):
            last_exc, last_line = text.strip()[:200], cl.lineno
    return {
        "with_traceback": len(with_tb),
        "last_exception": last_exc,
        "last_exception_line": last_line,
    }


def _cut_metrics(
    run: RunData, res: ParseResult, launches: list[Launch]
) -> tuple[Launch | None, str]:
    """Keep the points of the last launch (and of the launches it resumes). Returns the launch
    the kept points start at (None when they start at the top of the file) and a sentence."""
    table = run.metrics
    if not table.keys:
        return launches[-1], "No metric was printed in the last launch."
    order = {k: i for i, k in enumerate(res.series_order)}
    if any(la.generation != res.store_generation for la in launches[-1:]):
        walls = launches[-1].wall
        if not np.isfinite(walls):
            return None, (
                "The log was thinned after the last launch began and has no timestamps: its metrics "
                "were kept whole (not split by launch)."
            )
        series = [table.series(k) for k in table.keys]
        kept = [
            type(s)(s.key, s.steps[m], s.values[m], s.wall_times[m])
            for s in series
            for m in [s.wall_times >= walls]
            if m.any()
        ]
        run.metrics = MetricTable.from_series(kept)
        return launches[-1], "Metrics: the points timestamped after the last launch began."

    def start(la: Launch | None, key: str) -> int:
        if la is None:
            return 0
        c = order.get(key, len(la.counts))
        return la.counts[c] if c < len(la.counts) else 0

    main = main_series(run)
    assert main is not None  # the table has keys (checked above)
    chain = [None, *launches]
    s = table.series(main)
    bounds = [start(la, main) for la in chain] + [len(s)]
    with_points = [j for j in range(len(chain)) if bounds[j + 1] > bounds[j]]
    i = len(chain) - 1  # the last launch
    # walk back while a launch resumes an earlier one: its first step comes after that launch's
    # first step (a restart starts at or below it, as split_restarts in _common decides);
    # launches that printed no point of the main series (crashed at start-up) are passed over
    while bounds[i + 1] > bounds[i]:
        earlier = [j for j in with_points if j < i]
        if not earlier or not _later(run, main, bounds[i], bounds[earlier[-1]]):
            break
        i = earlier[-1]
    first = chain[i]
    kept = _chain_points(table, chain[i:], start)
    run.metrics = MetricTable.from_series(kept)
    resumed = len(chain) - 1 - i
    if not kept:
        return (
            first,
            "The last launch printed no metric (earlier launches' metrics are not this run's).",
        )
    if resumed:
        return first, (
            f"The last launch resumes the {resumed} launch(es) before it ({main} goes on from where "
            "they stopped): their points are kept with it."
        )
    return first, "Metrics: the points printed by the last launch."


def _chain_points(table: MetricTable, chain: list, start) -> list:
    """Each series' points from the first launch of ``chain`` (launches joined by resumes) on,
    without those a later launch redid (:func:`_not_redone`); ``start(launch, key)`` is where a
    launch begins in a series."""
    kept = []
    for k in table.keys:
        ks = table.series(k)
        a = start(chain[0], k)
        if a < len(ks):
            m = _not_redone(ks.steps, [start(la, k) for la in chain])
            m[:a] = False
            if m.any():
                kept.append(type(ks)(k, ks.steps[m], ks.values[m], ks.wall_times[m]))
    return kept


def _not_redone(steps: np.ndarray, starts: list[int]) -> np.ndarray:
    """The points of one series a later launch did not redo: ``starts`` are the indexes where each
    launch of a resumed chain begins in the series. A launch that resumes from a checkpoint before
    the last step printed (``710000`` after ``713600``) trains those steps again: the earlier
    launch's points at or after the step it resumed from are history, replaced by the new ones."""
    keep = np.ones(len(steps), dtype=bool)
    bounds = [*starts, len(steps)]
    cutoff = np.inf
    for j in range(len(starts) - 1, -1, -1):
        a, b = bounds[j], bounds[j + 1]
        if a >= b:
            continue
        keep[a:b] &= steps[a:b] < cutoff
        cutoff = min(cutoff, float(steps[a]))
    return keep


def config_to_params(run: RunData, main: str | None) -> None:
    """Values a launch prints with its configuration (``epochs: 400``, ``seed: 31``) are not
    metrics: a key with one value, at most 1/20 of the main series' points and no metric
    word in its name (``loss``, ``acc``, ``f1``, ``map``..., nothing under ``val/`` or
    ``test/``) becomes a ``log.*`` param (in place). The first launch's start-up lines are
    params already (the parser reads ``key: value`` lines before training as configuration);
    a later launch prints them after the earlier launches' training lines."""
    if main is None or main not in run.metrics:
        return
    n_main = len(run.metrics.series(main))
    kept, config = [], []
    for k in run.metrics.keys:
        ks = run.metrics.series(k)
        fin = ks.values[np.isfinite(ks.values)]
        if (
            k != main
            and len(ks) * 20 <= n_main
            and np.unique(fin).size <= 1
            and not _METRIC_WORD.search(k)
        ):
            config.append(k)
            if fin.size:
                run.params.setdefault(f"log.{k.split('/', 1)[-1]}", f"{fin[-1]:g}")
        else:
            kept.append(ks)
    if config:
        run.metrics = MetricTable.from_series(kept)


_METRIC_WORD = re.compile(
    r"^(?:val|test)/|loss|acc|top\d|f1|map|auc|iou|bleu|rouge|ppl|perplex|error|score|reward",
    re.IGNORECASE,
)
