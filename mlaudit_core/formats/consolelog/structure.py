"""Series read from the structure of pasted text when no line-by-line reading found any.

A failure report often carries its figures in a shape no log line has: a table pasted from a
notebook or a README, rows of numbers whose columns the program never named, or a sentence.
:func:`structured_series` reads three such shapes from the kept console lines; the console
reader (:func:`mlaudit_core.formats.consolelog.load_logs`) calls it only when the lines gave no
metric at all, so it never competes with a format the catalogue or structure inference knows.

Shapes read (docs/logs.md, "Tables, unnamed columns and stated figures"):

- **Tables in either orientation.** Rows of ``|``-separated cells (markdown, ASCII). The table's
  index is its first row or its first column when the corner cell is an index word (``step``,
  ``iter``, ``iteration``, ``epoch``, ``round``, ``episode``) and the cells along it are
  integers that increase. Every other row (index along the first row: the series runs along the
  row) or column (index down the first column) is one series named by its header cell.
  Cells that are not numbers (``…``, ``*``) are skipped, and so is an index cell that is not an
  integer (``epoch avg``: an aggregate, not a point of the curve).
- **Unnamed columns.** At least 3 lines of the same shape whose fields, after an index word and
  its integer (``epoch, 0089, 0.127, 0.018, ...``), are all numbers (``nan`` / ``inf`` kept):
  one series per position, named ``col1``, ``col2``, ... in the order printed.
- **Stated figures** (:func:`stated_series`): ``<quantity> (increased|rose|jumped|went up|
  exploded|dropped|fell|decreased|went|goes) from A to B`` as the two points ``A, B`` of that
  quantity, and ``<quantity> is stuck at A`` as a flat series; both are marked as stated in
  the report's prose, not logged.

Nothing is executed or evaluated: cells and fields are parsed with :func:`float` alone.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from ...rundata import ConsoleLine, Series
from .names import canonical

#: Words that name an index of training progress in a table's corner cell or before a row's counter.
INDEX_WORDS = frozenset(
    {
        "step",
        "steps",
        "iter",
        "iters",
        "iteration",
        "iterations",
        "epoch",
        "epochs",
        "round",
        "rounds",
        "episode",
        "episodes",
        "global_step",
        "global step",
    }
)

#: Fewest points a table or a group of unnamed rows must give a series for it to be read: the
#: detectors' own minimum for a trend (3 points, docs/detectors.md).
MIN_POINTS = 3

_SEPARATOR_CELL = re.compile(r"^:?-{2,}:?$")
_MARKUP = re.compile(r"[*`]+")
_NUMBER = re.compile(r"^[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$")
_NONFINITE = re.compile(r"^[-+]?(?:nan|inf|infinity)$", re.IGNORECASE)


#: A number followed by a unit a table cell may carry (``50.80%``, ``19.6s``, ``120 ms``) and a
#: trailing annotation that starts with a non-word character (``← best``, ``<- best``, ``*``).
_UNIT_CELL = re.compile(
    r"^(?P<n>[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*(?:%|ms|s|sec|min|h)?"
    r"(?:\s*[^\w\s.].*)?$"
)


def _value(cell: str) -> float | None:
    """A cell as a number (``nan`` / ``inf`` kept, thousands separators and markdown emphasis
    dropped; a unit of percent or time and a trailing annotation such as ``← best`` dropped, the
    number kept in the cell's own unit); None when the cell is not a number."""
    t = _MARKUP.sub("", cell).strip().replace(",", "")
    if _NUMBER.match(t) or _NONFINITE.match(t):
        return float(t)
    m = _UNIT_CELL.match(t)
    return float(m.group("n")) if m else None


def _index(cell: str) -> int | None:
    """A cell as an integer index (``10``, ``0089``); None otherwise."""
    t = _MARKUP.sub("", cell).strip().replace(",", "")
    return int(t) if t.isdigit() else None


def _is_index_word(cell: str) -> bool:
    return _MARKUP.sub("", cell).strip().lower() in INDEX_WORDS


#: A rule line under a header that uses no ``|`` (``------``, ``===+===``): part of the table.
_RULE_LINE = re.compile(r"^\s*[-=+:]{3,}\s*$")


def _cells(text: str, keep_first: bool = False) -> list[str] | None:
    """The cells of a ``|``-separated row; None when the line has fewer than 3 cells or is a
    separator row. The text before the first ``|`` is a log prefix and dropped, unless
    ``keep_first`` (a table whose rows do not open with ``|``: the first cell has no bar before
    it, ``Epoch | loss | acc``)."""
    if text.count("|") < 2:
        return None
    head, _, body = text.partition("|")
    if body.rstrip().endswith("|"):
        body = body.rstrip()[:-1]
    cells = [c.strip() for c in body.split("|")]
    if keep_first and head.strip():
        cells.insert(0, head.strip())
    if all(_SEPARATOR_CELL.match(c) or not c for c in cells):
        return None
    return cells if len(cells) >= 3 else None


def _tables(lines: Sequence[ConsoleLine]) -> list[list[list[str]]]:
    """Runs of consecutive ``|`` rows (separator rows and bar-free rule lines dropped,
    blank-free), each a table. A table whose first row does not open with ``|`` and whose text
    before the first ``|`` is an index word (``Epoch | TrainLoss | ...``) keeps that first cell on
    every row; otherwise the text before the first ``|`` is a log prefix."""
    out: list[list[list[str]]] = []
    cur: list[list[str]] = []
    keep_first = False
    for cl in lines:
        t = cl.text
        if cur and _RULE_LINE.match(t):
            continue
        if t.count("|") >= 2:
            if not cur:
                lead = t.partition("|")[0]
                keep_first = bool(lead.strip()) and _is_index_word(lead)
            cells = _cells(t, keep_first)
            if cells is not None:
                cur.append(cells)
            continue
        if cur:
            out.append(cur)
            cur = []
    if cur:
        out.append(cur)
    return out


def _increasing(ix: list[int]) -> bool:
    return len(ix) >= MIN_POINTS and all(b > a for a, b in zip(ix, ix[1:], strict=False))


def _series(name: str, steps: list[int], values: list[float]) -> Series:
    return Series(
        key=name,
        steps=np.asarray(steps, dtype=np.int64),
        values=np.asarray(values, dtype=np.float64),
        wall_times=np.full(len(steps), np.nan),
    )


#: A lower-case letter followed by an upper-case one inside a header (``TrainLoss``, ``ValAcc``):
#: a word boundary, so that the header reads as the words ``Train Loss``.
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")


def _named(name: str, pairs: list[tuple[int | None, str]]) -> Series | None:
    """The series ``name`` of the ``(index, cell)`` pairs whose index and cell are numbers, or None
    when the name is empty or fewer than :data:`MIN_POINTS` pairs are."""
    steps: list[int] = []
    values: list[float] = []
    for i, cell in pairs:
        v = _value(cell)
        if i is not None and v is not None:
            steps.append(i)
            values.append(v)
    name = _CAMEL.sub(" ", _MARKUP.sub("", name).strip())
    if not name or len(steps) < MIN_POINTS:
        return None
    return _series(canonical(name)[0], steps, values)


def _along(header: list[str], rows: list[list[str]]) -> list[Series]:
    """Series along rows: ``header`` is ``[index word, i1, i2, ...]``, each row ``[name, v1, ...]``."""
    cols = [(j, _index(c)) for j, c in enumerate(header) if j > 0]
    if not _increasing([i for _, i in cols if i is not None]):
        return []
    found = (_named(row[0], [(i, row[j]) for j, i in cols if j < len(row)]) for row in rows)
    return [s for s in found if s is not None]


def _down(header: list[str], rows: list[list[str]]) -> list[Series]:
    """Series down columns: ``header`` is ``[index word, name1, ...]``, each row ``[i, v1, ...]``."""
    keep = [(r, _index(r[0])) for r in rows]
    if not _increasing([i for _, i in keep if i is not None]):
        return []
    found = (
        _named(head, [(i, r[j]) for r, i in keep if j < len(r)])
        for j, head in enumerate(header[1:], 1)
    )
    return [s for s in found if s is not None]


def table_series(lines: Sequence[ConsoleLine]) -> list[Series]:
    """Series of every ``|`` table whose corner cell is an index word, read along its first row
    or down its first column (whichever holds increasing integers)."""
    out: list[Series] = []
    for table in _tables(lines):
        header, rows = table[0], table[1:]
        if not rows or not _is_index_word(header[0]):
            continue
        out.extend(_along(header, rows) or _down(header, rows))
    return out


_FIELD = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf|infinity)"
#: An index word, its integer, then only numeric fields (comma- or space-separated) to the line's end.
_UNNAMED = re.compile(
    r"\b(?P<w>steps?|iters?|iterations?|epochs?|rounds?|episodes?|global_step)"
    r"\s*[,:=]?\s*(?P<i>\d+)\s*[,:]?(?P<rest>(?:(?:\s*,\s*|\s+)(?:" + _FIELD + r")){2,})\s*$",
    re.IGNORECASE,
)
_FIELD_SPLIT = re.compile(r"\s*,\s*|\s+")
#: Substrings one of which a line must hold before :data:`_UNNAMED` is tried on it.
_INDEX_STEMS = ("step", "iter", "epoch", "round", "episode")


def _unnamed_fields(text: str) -> tuple[str, int, list[float]] | None:
    """``(shape, index, values)`` of a line whose fields after an index word and its integer are
    all numbers (at least 2); the shape is the first word before the index word with digits masked,
    the index word and the number of values, so lines of one printer group together."""
    tail = text.rstrip(" ,")[-3:].lower()
    if not tail or not (tail[-1].isdigit() or tail in ("nan", "inf")):
        return None
    low = text.lower()
    if not any(w in low for w in _INDEX_STEMS):
        return None
    m = _UNNAMED.search(text)
    if m is None:
        return None
    vals = [float(t) for t in _FIELD_SPLIT.split(m["rest"].strip(" ,")) if t]
    head = re.sub(r"\d+", "0", (text[: m.start()].split() or [""])[0])
    return f"{head}|{m['w'].lower()}|{len(vals)}", int(m["i"]), vals


def unnamed_series(lines: Sequence[ConsoleLine]) -> list[Series]:
    """Series ``col1``, ``col2``, ... of the most frequent shape of unnamed numeric rows (at least
    :data:`MIN_POINTS` lines whose index does not go back)."""
    groups: dict[str, list[tuple[int, list[float]]]] = {}
    for cl in lines:
        got = _unnamed_fields(cl.text)
        if got is not None:
            groups.setdefault(got[0], []).append((got[1], got[2]))
    if not groups:
        return []
    rows = max(groups.values(), key=len)
    steps = [i for i, _ in rows]
    if len(rows) < MIN_POINTS or any(b < a for a, b in zip(steps, steps[1:], strict=False)):
        return []
    width = len(rows[0][1])
    return [_series(f"col{j + 1}", steps, [r[1][j] for r in rows]) for j in range(width)]


_FIGURE = (
    r"(?:about |around |roughly |approximately |~ ?)?"
    r"(?P<{0}>[-+]?(?:\d{{1,3}}(?:[ ,]\d{{3}})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?)"
)
#: The change itself (``from A to B``); its verb and quantity are the words before it (:func:`_before`).
_CHANGE = re.compile(rf"from\s+{_FIGURE.format('a')}\s+to\s+{_FIGURE.format('b')}(?![\d.])")
#: A level (``stuck at A``); its verb and quantity are the words before it.
_STUCK = re.compile(rf"stuck\s+(?:at|around)\s+{_FIGURE.format('a')}(?![\d.])")
#: Verbs of a change (their last word) and of a level, between a quantity and its figures.
_CHANGE_VERBS = frozenset(
    "increased increases increase rose rises jumped jumps up exploded explodes dropped drops fell "
    "falls decreased decreases went goes grew grows climbed climbs".split()
)
_STUCK_VERBS = frozenset("is was stays stayed remains remained gets got".split())
_FROM_TO = re.compile(
    r"from\s+(?:about |around |roughly |approximately |~ ?)?[-+]?\d[\d., ]*\s+to\s"
)
#: Adverbs between a quantity and its verb (``loss suddenly increased``), skipped.
_ADVERBS = frozenset({"has", "had", "have", "suddenly", "then", "quickly", "rapidly", "also"})


def _before(text: str, end: int, verbs: frozenset[str]) -> str | None:
    """The quantity's words (the last two) before ``end`` when the word right before is one of
    ``verbs`` (``went up``: its ``up``; adverbs before it skipped), else None."""
    words = re.findall(r"[A-Za-z][\w/@.\-]*", text[max(0, end - 80) : end])
    if not words or words[-1].lower() not in verbs:
        return None
    words.pop()
    if words and words[-1].lower() in ("went", "goes"):  # ``went up``, ``goes up``
        words.pop()
    while words and words[-1].lower() in _ADVERBS:
        words.pop()
    return " ".join(words[-2:])


#: Words a stated quantity must end with to be read: the metrics the roles know by name.
_KNOWN_QUANTITY = re.compile(
    r"(loss|accuracy|acc|error|perplexity|ppl|reward|return|psnr|bleu|f1|map|auc|dice|iou|wer)$",
    re.IGNORECASE,
)
#: Words naming the split before a stated quantity (``the validation loss``).
_SPLIT_WORDS = frozenset({"train", "training", "val", "validation", "valid", "eval", "test", "dev"})

#: Points of a flat stated series ("stuck at A"): the fewest a plateau can be read from.
STUCK_POINTS = MIN_POINTS


def _quantity(raw: str) -> str | None:
    """The metric a sentence names (``The value of loss`` -> ``loss``, ``the validation loss`` ->
    ``validation loss``), or None when its last word is not a metric name."""
    words = raw.strip().split()
    if not words or not _KNOWN_QUANTITY.search(words[-1]):
        return None
    if len(words) > 1 and words[-2].lower() in _SPLIT_WORDS:
        return f"{words[-2]} {words[-1]}"
    return words[-1]


def _figure(text: str) -> float | None:
    try:
        return float(text.replace(",", "").replace(" ", ""))
    except ValueError:
        return None


def stated_series(lines: Sequence[ConsoleLine]) -> list[Series]:
    """Series of figures stated in prose: ``loss increased from 1.2 to 16 000`` gives the points
    (0, 1.2) and (1, 16000) of ``train/loss``; ``the loss is stuck at 0.69`` gives a flat series of
    :data:`STUCK_POINTS` points. The first sentence naming a quantity wins; steps are positions."""
    out: dict[str, Series] = {}
    for cl in lines:
        low = cl.text.lower()
        found = [(m, _CHANGE_VERBS) for m in (_CHANGE.finditer(low) if "from" in low else ())]
        found += [(m, _STUCK_VERBS) for m in (_STUCK.finditer(low) if "stuck" in low else ())]
        for m, verbs in found:
            q = _quantity(_before(low, m.start(), verbs) or "")
            a = _figure(m["a"])
            b = _figure(m["b"]) if verbs is _CHANGE_VERBS else a
            if q is None or a is None or b is None:
                continue
            key = canonical(q)[0]
            if verbs is _CHANGE_VERBS:
                out.setdefault(key, _series(key, [0, 1], [a, b]))
            else:
                out.setdefault(key, _series(key, list(range(STUCK_POINTS)), [a] * STUCK_POINTS))
    return list(out.values())


def structured_series(lines: Sequence[ConsoleLine]) -> tuple[list[Series], str | None]:
    """The series of the first shape that gives any (tables, then unnamed columns, then stated
    figures) and a note naming the shape read (None when nothing was read)."""
    found = table_series(lines)
    if found:
        return (
            found,
            "the figures were read from a pasted table (its index row or column named step/epoch)",
        )
    found = unnamed_series(lines)
    if found:
        return found, (
            "the figures were read from rows of unnamed numeric columns (named col1, col2, ... by "
            "position); no column names which metric it holds"
        )
    found = stated_series(lines)
    if found:
        return found, (
            "the figures were stated in the report's prose ('<quantity> rose from A to B'), not logged: "
            "each is two points (a start and an end) or a flat level, not a curve"
        )
    return [], None
