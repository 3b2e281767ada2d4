"""Structure inference: metric series from a console log's own line templates.

The base layer of the console reader. The catalogue (:mod:`.formats`) knows ~44 layouts
by name; this module reads the layouts it does not know, from the log itself:

1. **Terminal redraws** (:func:`clean_terminal`, :func:`redraws`): ANSI colour and cursor
   codes are removed; backspace runs and cursor-up / erase-line codes are redraws, like a
   carriage return (Keras 3 ``fit(verbose=1)`` writes ``\\b`` x N then ``\\r``; rich and
   tqdm write ``\\r`` or ``ESC[1A ESC[2K``). Of the parts of one physical line, a part
   followed by a redraw of the same template (its numbers masked) is *superseded*: only the
   last state of each bar is read, with the figures printed on it (Keras' running averages
   between batches are not values a person reads off the log; the epoch-end state is).
2. **Templates** (:class:`TemplateMiner`): each line the catalogue and the generic
   ``key=value`` reader left unread is reduced to its template (numbers masked, bar glyph
   runs folded, whitespace removed). A template that recurs (:data:`MIN_REPEAT` times) and
   whose masked numbers have a stable name in the constant text before them (``name: v``,
   ``name:v``, ``name=v``, ``name v``, ``| name v |``, ``'name': v`` / ``"name": v``,
   ``namev`` with a decimal value, LightGBM's ``valid_1's name: v``) gives one candidate
   series per named field.
3. **Step axis**: a field named like a counter (``step``, ``iter``, ``iteration``,
   ``global_step``, ``update``, ``epoch``, ``batch``), an ``N/M`` position (``M`` constant:
   the planned length, ``Epoch k/N`` planned epochs), or an unnamed integer that grows over
   the template's occurrences (XGBoost's ``[0]``, LightGBM's ``[1]``) is the step; else the
   parser's current step (a bar, a header line), else the record count.

Guards (precision before recall: a wrong point misleads a verdict, a missing one at worst
makes it ``unknown``): a template with more than :data:`MAX_PROSE_WORDS` words outside its
field names is prose; a template that names a warning, a deprecation or a failure signature,
or looks like echoed source code (``def``, ``return``, ``File "...", line``, a call with
``(``) is not read; an integer-only field with a name outside the metric vocabulary
(:func:`.names.is_known`) is a count or a size, not a series; a field name ending in a
stop word (``is 2``, ``of 10``) is prose.

Why not ``drain3`` (the maintained Drain implementation, LogPai): measured on the first 20,000
lines (26,148 carriage-return parts) of ``benchmarks/logs_throughput.py``'s mixed log, one CPU,
same process: ``drain3`` 0.9.11 ``TemplateMiner.add_log_message`` at its default settings costs
95.7 µs a part and makes 831 clusters; this miner costs 22.8 µs a part (names are worked out once
per template) and finds the 12 layouts the generator prints. On training logs the variable tokens
are the numbers, so masking them gives one cluster per layout without a similarity threshold.
``drain3`` 0.9.11 also pins
``cachetools==4.2.1``, which breaks ``mlflow-tracing`` (``cachetools>=5``) in the same environment.

Memory: at most :data:`MAX_TEMPLATES` templates are tracked (each key at most
:data:`MAX_TEMPLATE_CHARS` characters, at most :data:`MAX_PENDING` pending occurrences each);
lines of further templates are counted and reported, never stored.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from .names import is_known

#: Distinct templates tracked; past it new layouts are counted, not learnt (a log with
#: millions of distinct lines stays within bounded memory). 4,096 is ~80x the most templates
#: learnt from one log of tests/data/logs, ../shared/realworld and ../shared/cases (52, a W&B
#: debug-internal.log of 6,830 lines; measured 2026-12-06).
MAX_TEMPLATES = 4096
#: Longest line (characters) considered as a template: metric lines are short; long lines
#: are tracebacks, configs and dumps.
MAX_TEMPLATE_CHARS = 400
#: Occurrences before a template is read as a series: two lines of the same layout with
#: named numbers are a record printed twice, not a sentence that happens to hold a number.
MIN_REPEAT = 2
#: Occurrences of a template held while its figures have not changed; a template printed this
#: often with the same figures is configuration or a constant message, never read as a series.
MAX_PENDING = 16
#: Words outside field names above which a template is prose (a sentence with a number).
MAX_PROSE_WORDS = 6

_ANSI = re.compile(
    r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][A-Za-z0-9]|\x1b[=>78c]"
)
#: Codes that move back over what was drawn: cursor up / to column / previous line, erase line.
_REDRAW_CODES = re.compile(r"\x1b\[[0-9]*[AFGK]|\x1b\[2K|\x08+")
_TEMPLATE_RX = re.compile(
    # one character class first: most positions of a line fail here, before the alternatives
    r"(?=[\d━─█▉▊▋▌▍▎▏#=>.·•+nNiI-])"
    r"(?:(?P<time>(?<![\w.:/-])(?:\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?)?|\d{1,2}/\d{1,2}/\d{2,4}"
    r"|\d{2}/\d{2}\s+\d{2}:\d{2}:\d{2}(?:[.,]\d+)?"
    r"|\d{1,3}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:\s?[AaPp][Mm]\b)?)(?![\w:]))"
    r"|(?P<pos>(?<![\w./-])\d+\s*/\s*\d+(?![\w.]))"
    # a value with its unit glued on: a time per step, a rate, a duration (``12s``, ``0.5m`` or
    # ``3min`` elapsed minutes, ``1.5h``), a share or a size; masked, so the line's layout recurs
    r"|(?P<unit>(?<![\w./-])[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?(?P<u>(?:ms|s|us|µs)/(?:step|epoch|sample|batch|iter)|"
    r"it/s|s/it|ms|us|µs|s|min|m|h|%|MB|GB|Mb|Gb)(?![\w./]))"
    r"|(?P<num>(?<![\w./@-])[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?(?![\w.])"
    r"|(?<=[A-Za-z])\d+\.\d+(?:[eE][-+]?\d+)?(?![\w.])"
    # a non-finite value printed in a number's place (Python's str(float): nan, inf, -inf; NaN):
    # the same field as the numbers of the same template, not a constant word
    r"|(?<![\w./-])[-+]?(?:nan|NaN|inf|Inf)(?![\w.]))"
    r"|(?P<glyph>[━─█▉▊▋▌▍▎▏#=>.·•]{3,}|[━█]+))"
)
_WS = re.compile(r"\s+")
_NAME_AT_END = re.compile(
    r"""(?:['"](?P<q>[A-Za-z_][\w ./@'-]{0,60})['"]\s*:\s*['"]?|"""
    # a name starts at a word boundary: the ``s`` of a rate ``26530/s LR: 4e-4`` is not a name's head
    # a name may end in a bracketed qualifier or argument: ``avg(utility)=``, ``loss[val]:``
    r"""(?<![\w./@-])(?P<n>[A-Za-z_][\w./@-]*(?:'s)?(?:\s[A-Za-z_][\w./@-]*){0,2}?"""
    r"""(?:\([A-Za-z_][\w ./@-]{0,40}\)|\[[A-Za-z_][\w ./@-]{0,40}\])?)\s*(?P<sep>[:=]\s*|\s*|\|\s*)?)$"""
)
_WORD = re.compile(r"[A-Za-z][A-Za-z'’]+")
_STOP = frozenset(
    "a an the of to in on at is are was were be by for from with and or as it this that "
    "than then into over per each all any no not out up has have had will can may".split()
)
_STEP_WORDS = {
    "step": "step",
    "global_step": "step",
    "globalstep": "step",
    "iter": "step",
    "iteration": "step",
    "it": "step",
    "update": "step",
    "updates": "step",
    "num_updates": "step",
    "round": "step",
    "epoch": "epoch",
    "ep": "epoch",
    "batch": "batch",
    "batch_idx": "batch",
}
_REJECT = re.compile(
    r"(?i:warn|deprecat|exception|traceback)|\bdef |\breturn\b|File \"|\bline \d|"
    r"\bimport\b|=\s*[A-Za-z_][\w.]*\(|^\s*[A-Za-z_][\w.]*\(.*\)\s*$|https?:|\bERROR\b|\bCRITICAL\b|\bFATAL\b"
)
_COUNTER_ROLES = frozenset({"step", "epoch", "batch", "pos"})
#: suffix of the role of a running-mean field (``name`` + this)
_MEAN = "\x00mean"
_UNIT_NAMES = {
    "ms/step": "step_time",
    "s/step": "step_time",
    "us/step": "step_time",
    "µs/step": "step_time",
    "it/s": "throughput",
    "s/it": "throughput",
}


def clean_terminal(text: str) -> str:
    """``text`` with ANSI colour codes removed and terminal redraws turned into ``\\r``.

    Backspace runs and cursor movements back over the line (``ESC[A``, ``ESC[F``, ``ESC[G``,
    ``ESC[K``, ``ESC[2K``) mark a redraw, like a carriage return; every other escape sequence
    (colour, bold, OSC titles) is removed. Returns ``text`` itself when it has neither.
    """
    if "\x1b" not in text and "\x08" not in text:
        return text
    text = _REDRAW_CODES.sub("\r", text)
    return _ANSI.sub("", text) if "\x1b" in text else text


def template_key(seg: str) -> str:
    """The layout of a line: numbers masked (``\\x01``, ``N/M`` as ``\\x02``), bar glyph runs folded,
    whitespace removed (numbers padded to a width: ``(  0%)`` and ``(100%)`` are one layout). Two
    redraws of one bar, or two records of one print, share it."""
    return _WS.sub("", _TEMPLATE_RX.sub(_mask, seg))


def _mask(m: re.Match) -> str:
    if m["time"]:
        return "\x04"
    if m["glyph"]:
        return "\x03"
    if m["pos"]:
        return "\x02"
    if m["unit"]:
        return "\x01" + m["u"]
    return "\x01"


#: The head of a counted bar (Keras ``12/20 [====>....]`` or ``12/20 ━━━━``): its position and total.
_COUNTED_BAR = re.compile(r"^\s*(\d+)/(\d+)\s*(?:\[[=>.]*\]|[━─╸╺]+)")


def superseded(part: str, nxt: str) -> bool:
    """Whether ``nxt``, drawn after ``part`` on the same line (a carriage return between), is a
    redraw of the same bar: the same template, or the same counted bar (``n/total`` with the
    same total) at a later state (Keras' running ``ETA:`` states before the epoch's last)."""
    if len(part) <= MAX_TEMPLATE_CHARS and template_key(part) == template_key(nxt):
        return True
    a = _COUNTED_BAR.match(part)
    if a is None:
        return False
    b = _COUNTED_BAR.match(nxt)
    return b is not None and a[2] == b[2] and int(a[1]) <= int(b[1])


def redraws(text: str) -> Iterator[tuple[str, bool]]:
    """The parts of one physical line as ``(part, superseded)``: split at ``\\r``; a part is
    superseded when the next non-empty part has the same template (a redraw of the same bar).
    Only the last state of each bar is then read, with the figures printed on it."""
    parts = [p for p in text.split("\r") if p.strip()]
    if len(parts) <= 1:
        yield from ((p, False) for p in parts)
        return
    for i, p in enumerate(parts):
        yield p, i + 1 < len(parts) and superseded(p, parts[i + 1])


@dataclass
class Field:
    """One masked number of a template: ``name`` (as printed, '' when none), ``kind``
    (``num``, ``pos`` for ``N/M``, ``unit`` for a value with a glued unit) and its unit."""

    name: str
    kind: str
    unit: str | None = None
    decimal: bool = (
        False  # written with a decimal point or an exponent (``1.00000`` is not a count)
    )
    #: printed in parentheses right after a named number (``Loss: 1.010 ( 0.952)``): that
    #: figure's running mean over the pass (AverageMeter's ``val (avg)``)
    paren: bool = False
    #: printed right after the number before it, only blanks between (``Prec@1 001 0.000``)
    bare: bool = False


@dataclass
class Template:
    """One line layout: its fields, how often it was seen and its pending occurrences."""

    key: str
    fields: list[Field]
    count: int = 0
    prose: bool = False
    pending: list[tuple[list[float | tuple[int, int]], tuple]] = field(default_factory=list)
    roles: dict[int, str] | None = (
        None  # field index -> "step" / "epoch" / "batch" / "pos" / metric name
    )
    last: list[float | None] = field(default_factory=list)
    grows: list[bool] = field(default_factory=list)
    all_int: list[bool] = field(default_factory=list)


def _field_name(before: str) -> tuple[str, str]:
    """The name printed right before a number (from the constant text since the previous
    number), and the separator: '' when none can be read."""
    m = _NAME_AT_END.search(before[-80:])
    if m is None:
        return "", ""
    if m["q"]:
        return m["q"].strip(), ":"
    name = (m["n"] or "").strip()
    if not name:
        return "", ""
    words = name.split()
    while words and words[0].lower() in _STOP:
        words = words[1:]
    if not words or words[-1].lower() in _STOP:
        return "", ""
    sep = (m["sep"] or "").strip()
    return " ".join(words), sep


_PREFIX = re.compile(r"^([A-Za-z]+(?:_\d+)?)(?:'s\s+|-|/)")


def _prefix(name: str) -> str:
    """The evaluation-set prefix of a metric name (``valid_1`` of ``valid_1's auc``, ``train`` of
    ``train-logloss``, ``val`` of ``val/acc``), '' when it has none."""
    m = _PREFIX.match(name)
    return m[1].lower() if m else ""


_EVAL_SET = re.compile(r"^(?P<set>[A-Za-z]+)_(?P<i>\d+)(?:-|'s\s+|/|\s+)(?P<m>\S.*)$")


def _name_eval_sets(roles: dict[int, str]) -> dict[int, str]:
    """Numbered evaluation sets (XGBoost ``validation_0-logloss``, LightGBM ``valid_1's auc``):
    the highest-numbered set of the line is the held-out set (``val_<metric>``): XGBoost and
    LightGBM early stopping watch the last evaluation set (xgboost ``fit(eval_set=...)`` and
    ``lightgbm.early_stopping`` documentation), and the training set is the first one users
    pass. The others keep their number (``eval_set_0_<metric>``); a set named ``train...``
    stays training."""
    sets = {i: m for i, r in roles.items() if (m := _EVAL_SET.match(r)) is not None}
    if not sets:
        return roles
    last = max(int(m["i"]) for m in sets.values())
    out = dict(roles)
    for i, m in sets.items():
        if m["set"].lower().startswith("train"):
            out[i] = f"train_{m['m']}"
        elif int(m["i"]) == last:
            out[i] = f"val_{m['m']}"
        else:
            out[i] = f"eval_set_{m['i']}_{m['m']}"
    return out


def parse_template(
    seg: str, names: bool = True
) -> tuple[str, list[Field], list[float | tuple[int, int]], int] | None:
    """``(key, fields, values, prose words)`` of one line, or None when it holds no number.

    ``values[i]`` is a float, or ``(n, m)`` for an ``N/M`` position. With ``names`` False the
    field names and the prose count are not worked out (a line of a template already known:
    the names are the template's), which is most of the cost.
    """
    fields: list[Field] = []
    values: list[float | tuple[int, int]] = []
    key_parts: list[str] = []
    consts: list[str] = []
    prev = 0
    named_spans: list[str] = []
    for m in _TEMPLATE_RX.finditer(seg):
        const = seg[prev : m.start()]
        key_parts.append(const)
        prev = m.end()
        if m["glyph"] or m["time"]:
            key_parts.append("\x03" if m["glyph"] else "\x04")
            consts.append(const)
            continue
        consts.append(const)
        name = _field_name(const)[0] if names else ""
        if m["pos"]:
            a, _, b = m["pos"].partition("/")
            fields.append(Field(name, "pos"))
            values.append((int(a), int(b)))
            key_parts.append("\x02")
        elif m["unit"]:
            u = m["u"]
            raw = m["unit"][: -len(u)]
            fields.append(Field(name or _UNIT_NAMES.get(u, ""), "unit", u))
            values.append(float(raw))
            key_parts.append("\x01" + u)
        else:
            raw = m["num"]
            fields.append(
                Field(
                    name,
                    "num",
                    decimal=not raw.lstrip("+-").isdigit(),
                    paren=names and not name and const.strip() == "(" and bool(fields),
                    bare=bool(fields) and not const.strip(),
                )
            )
            try:
                values.append(float(raw))
            except ValueError:
                values.append(float("nan"))
            key_parts.append("\x01")
        if name:
            named_spans.append(name)
    if not fields:
        return None
    rest = seg[prev:]
    key_parts.append(rest)
    consts.append(rest)
    key = _WS.sub("", "".join(key_parts))
    if not names:
        return key, fields, values, 0
    words = sum(len(_WORD.findall(c)) for c in consts) - sum(
        len(_WORD.findall(n)) for n in named_spans
    )
    return key, fields, values, words


@dataclass
class Inferred:
    """Points of one template occurrence, ready to emit: ``rec`` (metric name -> value),
    ``step``/``epoch``/``batch`` when a counter field gave them, ``pos`` an ``N/M`` position
    and ``total``/``epochs`` planned lengths read from it."""

    rec: dict[str, float]
    units: dict[str, str] = field(default_factory=dict)
    epochs: float | None = None
    total_steps: float | None = None
    step: int | None = None
    epoch: float | None = None
    batch: int | None = None
    pos: tuple[int, int] | None = None
    #: ``pos`` is a named step counter printed beside an epoch (``Epoch 1 | Step 0/6501``): it may
    #: start over each epoch, so the step is the passes before plus ``n``
    counted: bool = False
    context: tuple = ()
    ordinal: int = 0
    key: str = ""
    #: metric name -> its running mean printed beside it (``Loss: 1.010 ( 0.952)``)
    means: dict[str, float] = field(default_factory=dict)


def _observe(t: Template, values: list, decimal: list[bool]) -> None:
    """Update what a template's fields have shown so far with one occurrence's values: whether
    each was always a whole number (``all_int``) and always grew (``grows``), and its last value;
    a tuple value (a position) is skipped."""
    for i, v in enumerate(values):
        if isinstance(v, tuple):
            continue
        if decimal[i] or v != v or not float(v).is_integer():
            t.all_int[i] = False
        last = t.last[i]
        if last is not None and not (v > last):
            t.grows[i] = False
        t.last[i] = v


class TemplateMiner:
    """Learn a log's line templates and read named numbers from the recurring ones.

    :meth:`add` takes one line (not read by the catalogue) and a context tuple, and returns
    the occurrences that became readable with it (the pending ones when its template
    qualifies, else just this one), each an :class:`Inferred`. Memory is bounded by
    :data:`MAX_TEMPLATES`; :attr:`dropped` counts lines of templates past the cap.
    """

    def __init__(self, max_templates: int = MAX_TEMPLATES) -> None:
        self.templates: dict[str, Template] = {}
        self.max_templates = max_templates
        self.dropped = 0
        self.read = 0

    def add(
        self, seg: str, context: tuple = (), veto: Callable[[str], bool] | None = None
    ) -> list[Inferred]:
        """Read one line; ``veto(line)`` True on a template's first line marks it never readable
        (the parser passes its failure-signature check). Returns the readable occurrences."""
        if len(seg) > MAX_TEMPLATE_CHARS:
            return []
        parsed = parse_template(seg, names=False)
        if parsed is None:
            return []
        key, fields, values, words = parsed
        decimal = [f.decimal for f in fields]
        t = self.templates.get(key)
        if t is None:
            if len(self.templates) >= self.max_templates:
                self.dropped += 1
                return []
            t, values = self._new_template(seg, veto)
        if t.prose:
            return []
        t.count += 1
        _observe(t, values, decimal)
        if t.roles is None:
            out = self._settle(t, values, context)
        else:
            out = [self._read(t, values, context + (t.count,))]
        self.read += len(out)
        return out

    def _new_template(self, seg: str, veto: Callable[[str], bool] | None) -> tuple[Template, list]:
        """Register the template of a line seen for the first time, parsed with its field names;
        returns it with the line's values. It is prose, never read, when it has more than
        :data:`MAX_PROSE_WORDS` words, matches :data:`_REJECT`, names no field or is vetoed."""
        key, fields, values, words = parse_template(seg)  # type: ignore[misc]
        prose = (
            words > MAX_PROSE_WORDS
            or _REJECT.search(seg) is not None
            or not any(f.name for f in fields)
            or (veto is not None and veto(seg))
        )
        t = self.templates[key] = Template(
            key,
            fields,
            prose=prose,
            last=[None] * len(fields),
            grows=[True] * len(fields),
            all_int=[True] * len(fields),
        )
        return t, values

    def _settle(self, t: Template, values: list, context: tuple) -> list[Inferred]:
        """Hold an occurrence of a template whose field roles are not known yet; from
        :data:`MIN_REPEAT` occurrences on, decide the roles (:meth:`_roles`): counters only make
        it a progress message (never read), the same figures every time a configuration dump
        (not a series yet; prose after :data:`MAX_PENDING`), else the held occurrences are read
        and returned."""
        t.pending.append((values, context + (t.count,)))
        if t.count < MIN_REPEAT:
            return []
        roles = self._roles(t)
        metrics = [i for i, r in roles.items() if r not in ("step", "epoch", "batch", "pos")]
        if not metrics:
            t.prose = True  # counters only: a progress message, not a record
            t.pending.clear()
            return []
        first = t.pending[0][0]
        if not any(vals[i] != first[i] for vals, _ in t.pending for i in metrics):
            # the same figures printed again: a configuration dump of each launch, not a series yet
            if len(t.pending) >= MAX_PENDING:
                t.prose = True
                t.pending.clear()
            return []
        t.roles = roles
        pend, t.pending = t.pending, []
        return [self._read(t, vals, ctx) for vals, ctx in pend]

    def _roles(self, t: Template) -> dict[int, str]:
        # name prefixes of the fractional fields (``train`` of ``train-logloss``, ``valid's`` of
        # ``valid's auc``): an integer printed under the same prefix is that set's metric (AUC 1)
        fractional = {
            _prefix(f.name) for i, f in enumerate(t.fields) if f.name and not t.all_int[i]
        } - {""}
        roles: dict[int, str] = {}
        for i, f in enumerate(t.fields):
            lname = f.name.lower().replace(" ", "_")
            if f.kind == "pos":
                roles[i] = _STEP_WORDS.get(lname, "pos")
                continue
            counter = _STEP_WORDS.get(lname)
            if counter is not None and (
                t.all_int[i] or counter == "epoch"
            ):  # epochs may be fractional
                roles[i] = counter
                continue
            if not f.name and f.paren and i - 1 in roles and roles[i - 1] not in _COUNTER_ROLES:
                roles[i] = roles[i - 1] + _MEAN  # ``Loss: 1.010 ( 0.952)``: the running mean
                continue
            if not f.name:
                # an unnamed integer that grows at every occurrence: an iteration counter
                if t.all_int[i] and t.grows[i] and i == 0 and "step" not in roles.values():
                    roles[i] = "step"
                continue
            if t.all_int[i] and i + 1 < len(t.fields) and t.fields[i + 1].bare:
                continue  # ``Prec@1 001 0.000 (0.000)``: an integer label before the figure, not a value
            if (
                t.all_int[i]
                and not is_known(f.name)
                and f.kind != "unit"
                and _prefix(f.name) not in fractional
            ):
                continue  # a count or a size (``shard 3``, ``workers 8``), not a series
            roles[i] = f.name
        return _name_eval_sets(roles)

    def _read(self, t: Template, values: list, context: tuple) -> Inferred:
        out = Inferred({}, context=context[:-1], ordinal=context[-1], key=t.key)
        assert t.roles is not None
        for i, role in t.roles.items():
            v = values[i]
            if role == "pos":
                if isinstance(v, tuple):
                    out.pos = v
                continue
            if isinstance(v, tuple):
                n = v[0]
                if role == "epoch":
                    out.epoch = float(n)
                    out.epochs = float(v[1])
                elif role == "step" and "epoch" in t.roles.values():
                    out.pos, out.counted = v, True
                elif role == "step":
                    out.step = n
                    out.total_steps = float(v[1])
                else:
                    out.batch = n
                    out.pos = v
                continue
            if role == "step":
                out.step = int(v)
            elif role == "epoch":
                out.epoch = float(v)
            elif role == "batch":
                out.batch = int(v)
            elif role.endswith(_MEAN):
                out.means[role[: -len(_MEAN)].replace("'s ", "_")] = float(v)
            else:
                f = t.fields[i]
                name = role.replace("'s ", "_")
                out.rec[name] = float(v)
                if f.unit is not None:
                    out.units[name] = (
                        "ms"
                        if f.unit.startswith("ms")
                        else "us"
                        if f.unit.startswith(("us", "µs"))
                        else "s"
                        if f.unit == "s/step"
                        else f.unit
                    )
        return out

    def summary(self) -> str | None:
        """One line about the cap, when it was reached: templates tracked and lines not clustered."""
        if not self.dropped:
            return None
        return (
            f"{len(self.templates):,} distinct line templates were learnt (the cap) and {self.dropped:,} "
            "lines of further layouts were not clustered; metrics of catalogued formats were read from "
            "every line"
        )
