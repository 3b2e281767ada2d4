"""Memory that grew over a run until it ran out (a leak) against a job too large for its memory.

A run that dies of an out-of-memory error or a kill is an infra event when the job needs more memory
than the machine has (a batch too large for the GPU, a dataset cached whole in RAM: the memory is high
from the start, or fills up and then levels off). It is a bug in the training code when memory grows
over the run until nothing is left: a reference kept across iterations (loss tensors with their graphs
accumulated for logging, outputs appended to a list, objects recreated at every epoch). An analyst
tells the two apart by growth against size; this module reads growth from what a report states and
from a logged memory series.

* :func:`stated_memory_growth`: a sentence of the report's text states that memory grows over the run
  (``a slow and steady increase`` of the GPU memory, ``RAM usage continues to grow``, ``the RAM loses
  about 1 GB of free memory at each epoch``) without levelling off in the same sentence (``increases at
  the beginning of training and stabilizes`` is a cache filling up), or names a memory leak (``the mem
  leak``, ``the leak is about 0.5 GB per epoch``); unless someone of the thread explains the failure by
  capacity (``insufficient memory``, ``the entire dataset does not fit into RAM``, ``the scene took ~13G
  CPU RAM``, ``all features are loaded to the CPU RAM``): then the growth is the job's data arriving in
  memory, not a leak.
* :func:`memory_series_growth`: a logged memory series (GPU memory per iteration, as YOLOX's ``mem:``,
  MMEngine's ``memory:`` and detectron2's ``max_mem:`` fields) whose last quarter is still rising
  steadily (:data:`GROWTH_TAIL_RISE`), not a series that rose at start-up and then held.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import numpy as np

from .statements import (
    _MACHINE_KEY,
    _asserted,
    _clause_before,
    _fix_sentence,
    _sentences,
    _thread_values,
)

_MEM = r"(?:memory|ram|vram|mem)"
_USAGE = (
    r"(?:\s+(?:usage|use|consumption|footprint|allocation|occupation|occupancy|utili[sz]ation))?"
)
_GROWS = (
    r"(?:increas\w*|grow(?:s|ing|th)?|grew|ris(?:es|ing|e)|rose|climb\w*|accumulat\w*|creep\w*|"
    r"balloon\w*|(?:goes|went|going|keeps? going) up|builds? up)"
)
#: Memory stated to grow: the memory (its usage) as the subject of a verb of growth in the same clause,
#: growth ``of`` / ``in`` the memory, or the free memory shrinking.
_GROWTH = re.compile(
    rf"\b{_MEM}\b{_USAGE}[^.;!?,]{{0,40}}?\b{_GROWS}\b"
    rf"|\b{_GROWS}\b[^.;!?,]{{0,20}}?\b(?:in|of)\s+(?:the\s+)?(?:\w+\s+){{0,2}}?{_MEM}\b"
    rf"|\b(?:los(?:es|t|ing)|drops?|dropped|decreas\w*|shrinks?)\b[^.;!?,]{{0,40}}?\bfree\s+{_MEM}\b"
    rf"|\bfree\s+{_MEM}\b[^.;!?,]{{0,40}}?\b(?:decreas\w*|drops?|dropped|shrinks?|goes down|went down|"
    r"falls?|fell)\b",
    re.I,
)
#: A negation inside the growth's own words (``the memory does not increase``).
_NEGATED_SPAN = re.compile(r"\b(?:not|never|no)\b|n't\b", re.I)
#: The growth deduced, not seen: a consequence drawn from the code (``keeps each step's tensor attached to
#: the graph, so memory grows with every step``) or a prediction (``memory will grow``).
_INFERRED = re.compile(r"\b(?:so|therefore|thus|hence|would|will)\b", re.I)
#: The growth levels off (a cache that has filled up, not a leak).
_LEVELS = re.compile(
    r"\b(?:stabili[sz]\w*|plateau\w*|levell?(?:s|ed|ing)? off|flatten\w*|saturat\w*|"
    r"stops? (?:growing|increasing|rising)|(?:stays?|remains?|keeps?) (?:constant|flat|stable|the same|unchanged))\b",
    re.I,
)
#: A memory leak named: ``memory leak``, ``mem leak``, ``memory leakage``, ``memory leaky bug``, ``a leak in
#: host memory``, ``the leak is about 0.5 GB per epoch``.
_LEAK = re.compile(
    r"\b(?:mem(?:ory)?|ram|vram)\s+leak\w*"
    r"|\bleak\w*\s+(?:in|of)\s+(?:the\s+)?(?:\w+\s+){0,2}?(?:memory|ram|vram)\b"
    r"|\bleak\w*\b[^.;!?]{0,30}?\d+(?:\.\d+)?\s*[GM]i?B\b",
    re.I,
)
#: A hedged leak confirmed in the same statement: ``We can reproduce this bug and fixing is on the way``.
_CONFIRMS = re.compile(r"\b(?:reproduc\w*|fix(?:ed|ing)?|confirm\w*|noticed)\b", re.I)
#: The failure explained by the size of the job against the memory: the machine lacks memory, the job
#: needs a stated amount, or the data is held in memory by design.
_CAPACITY = re.compile(
    r"\binsufficient\s+(?:\w+\s+)?(?:memory|ram|vram)\b"
    r"|\bnot\s+enough\s+(?:\w+\s+)?(?:memory|ram|vram)\b"
    r"|\b(?:do(?:es)?|did|have|has)\s*(?:n't|not)\s+(?:have\s+|got\s+)?enough\s+(?:\w+\s+)?(?:memory|ram|vram)\b"
    r"|\b(?:do(?:es)?|did|will|would|can)\s*(?:n't|not)\s+fit\b"
    r"|\b(?:needs?|requires?|took|takes|uses?|occup(?:y|ies))\s+(?:about\s+|around\s+|~\s?)?\d+(?:\.\d+)?\s*[GM]i?B?\b"
    r"|\b\d+(?:\.\d+)?\s*[GM]i?B\b[^.;!?]{0,30}?\bshould\s+be\s+enough\b"
    r"|\b(?:loaded|read|cached|kept|stored|held)\s+(?:in(?:to)?|to)\s+(?:the\s+)?(?:\w+\s+){0,2}?(?:ram|memory)\b"
    # the same settings run on a smaller dataset: the memory follows the data's size, not the run's length
    r"|\b(?:runs?|works?|ran|worked)\s+(?:well|fine|ok|okay)?\s*(?:on|with)\s+(?:a\s+|the\s+)?(?:small(?:er)?|tiny)\s+"
    r"(?:\w+\s+)?(?:dataset|data|corpus|subset)\b[^.;!?]{0,40}?\bsame\s+(?:parameters|settings|config\w*|hyper-?parameters)\b",
    re.I,
)


def _capacity_explained(params: Mapping[str, object]) -> bool:
    """Whether a sentence of the thread (the machine's description left out) explains the failure by the
    job's size against the memory (:data:`_CAPACITY`), not asked and not negated before it."""
    for key, text in _thread_values(params):
        if _MACHINE_KEY.match(key):
            continue
        for s in _sentences(text):
            m = _CAPACITY.search(s)
            if m and "?" not in s:
                return True
    return False


def _statement_confirms(line: str, sentence: str) -> bool:
    """Whether another sentence of the same statement confirms what ``sentence`` hedged."""
    return any(
        _CONFIRMS.search(s) and "?" not in s for s in _sentences(line) if s.strip() != sentence
    )


def stated_memory_growth(lines: list[str], params: Mapping[str, object]) -> tuple[str, str] | None:
    """``(kind, sentence)`` when the report's text (``lines``: its pasted prose and the thread's lines)
    states that memory grew over the run: ``("growth", ...)`` for memory stated to grow (:data:`_GROWTH`),
    seen rather than deduced from the code or predicted in its clause (:data:`_INFERRED`), with no levelling
    off in the same sentence (:data:`_LEVELS`), ``("leak", ...)`` for a memory leak
    named (:data:`_LEAK`); a question, or a negation, condition or hedge before it in its clause, states
    nothing, except a hedged leak that another sentence of the same statement confirms (``This may be
    caused by the memory leaky bug. We can reproduce this bug and fixing is on the way.``).
    ``("capacity", ...)`` instead when someone of the thread explains the failure by capacity
    (:data:`_CAPACITY`): the growth is the job's data arriving in memory, not a leak. ``None`` when no
    sentence states a growth or a leak."""
    found: tuple[str, str] | None = None
    for line in lines:
        for s in _sentences(line):
            m = _GROWTH.search(s)
            if m and _asserted(s, m.start()) and not _NEGATED_SPAN.search(m.group(0)):
                if not _LEVELS.search(s) and not _INFERRED.search(_clause_before(s, m.end())):
                    found = found or ("growth", s.strip()[:240])
            m = _LEAK.search(s)
            if (
                m
                and "?" not in s
                and (_asserted(s, m.start()) or _statement_confirms(line, s.strip()))
            ):
                found = found or ("leak", s.strip()[:240])
        if found is not None:
            break
    if found is not None and _capacity_explained(params):
        return "capacity", found[1]
    return found


#: Points a memory series needs before its growth is read (a start-up rise and a tail to compare it with).
GROWTH_MIN_POINTS = 8
#: The last quarter of the series rises by at least this share of its first value: allocators hold a
#: run's peak after the first iterations (PyTorch's caching allocator keeps freed blocks; the ``mem``
#: fields of YOLOX, MMEngine and detectron2 print torch.cuda.max_memory_allocated, which only rises when
#: a new peak is reached), so a steady-state run's last quarter is flat to within a few percent; 5% more
#: memory in the last quarter of a run is a growth that has not stopped.
GROWTH_TAIL_RISE = 0.05
#: No one interval of the last quarter holds more than this share of its rise: a steady growth spreads
#: its rise, a larger batch or input arriving once puts it in one step (SY008's criterion for a summary
#: time that grows).
GROWTH_ONE_STEP_SHARE = 0.75
#: A memory series' key: GPU or host memory, allocated, reserved or its peak (``perf/gpu_mem_mb``,
#: ``perf/max_mem_allocated_gb``, ``system/gpu_0_memory_usage_percentage``).
_MEMORY_KEY = re.compile(r"(?:^|[/_])(?:max_)?(?:gpu_)?mem(?:ory)?(?:[/_]|$)", re.I)


def memory_series_growth(
    steps: np.ndarray, values: np.ndarray
) -> tuple[float, float, float] | None:
    """``(first, tail_start, last)`` of a memory series still rising steadily in its last quarter, else
    ``None``: at least :data:`GROWTH_MIN_POINTS` finite points; the last quarter (at least 3 points) rising
    by at least :data:`GROWTH_TAIL_RISE` of the first value, no one interval of it holding more than
    :data:`GROWTH_ONE_STEP_SHARE` of that rise. ``steps`` orders the points; any unit."""
    ok = np.isfinite(values) & np.isfinite(steps)
    v = values[ok][np.argsort(steps[ok], kind="stable")]
    if len(v) < GROWTH_MIN_POINTS or v[0] <= 0:
        return None
    tail = v[-max(3, len(v) // 4) :]
    rise = float(tail[-1] - tail[0])
    if rise < GROWTH_TAIL_RISE * v[0]:
        return None
    if float(np.max(np.diff(tail))) > GROWTH_ONE_STEP_SHARE * rise:
        return None
    return float(v[0]), float(tail[0]), float(tail[-1])


def logged_memory_growth(run) -> tuple[str, float, float, float] | None:
    """``(key, first, tail_start, last)`` of the first logged memory series (:data:`_MEMORY_KEY`) still
    rising steadily at its end (:func:`memory_series_growth`), else ``None``."""
    for key in run.metrics.keys:
        if not _MEMORY_KEY.search(key):
            continue
        s = run.metrics.series(key).by_step()
        got = memory_series_growth(np.asarray(s.steps, float), np.asarray(s.values, float))
        if got is not None:
            return (key, *got)
    return None


#: A change that stops the code from keeping autograd graphs it does not need: evaluation under
#: ``torch.no_grad()`` / ``torch.inference_mode()``, values logged with ``.item()`` or ``.detach()``.
_GRAPH_FIX = re.compile(
    r"\b(?:torch\.)?(?:no_grad|inference_mode)\b|\.detach\(\)|\.item\(\)|\bdetach(?:ed|ing)?\b",
    re.I,
)


def graph_release_fix(params: Mapping[str, object]) -> str | None:
    """The thread's sentence naming a change that stops the code from keeping autograd graphs
    (:data:`_GRAPH_FIX`: ``with torch.no_grad():`` around evaluation, ``.item()`` / ``.detach()`` for logged
    values), confirmed by the failure being gone in the thread (``That solved the issue``) and not followed by
    ``still`` / ``did not help`` (:func:`.statements._fix_sentence`), else ``None``: the memory was held by
    graphs the code kept, a bug in the code whatever the device's size."""
    return _fix_sentence(_thread_values(params), _GRAPH_FIX, None)
