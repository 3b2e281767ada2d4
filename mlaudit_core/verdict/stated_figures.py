"""Figures a report states in its sentences, read with where they come from.

Many failure reports hold no log, only sentences with figures: ``the accuracy is 0.793 ... when I only
change the batch size (512) ... acc: 0.2952``, ``loss was about 88 ... currently loss 112 at epoch 58``,
``Initially ... got a BLEU score of 37.1. Then ... continued from the last checkpoint ... gave 36.2``. An
analyst reads each figure with its provenance (which run, which point of the run) and compares like with
like. This module finds two such comparisons:

* :func:`stated_config_change`: the same metric stated for a run with the default setup and for a run in
  which one setting changed (``default command`` / ``changing batch size``);
* :func:`stated_course`: the same metric stated at an earlier and a later point of one run (an epoch or
  step number beside the figure, or words of time: ``initially``, ``before``, ``at first`` against
  ``then``, ``finally``, ``now``, ``currently``, ``after``).

A figure is a number after a metric's name (:func:`mlaudit_core.roles.parse_name` gives it a family:
loss, accuracy, error rate, score), optionally joined by ``:``, ``=``, ``of``, ``is``, ``was`` and
``about``; in a sentence that compares (``is far worse than that 0.57``) the bare figure after the
comparison takes the name of the figure before it. The direction of better comes from the name
(:func:`mlaudit_core.roles.is_higher_better`). A change counts only when it is larger than the seed noise
of one rerun, :data:`mlaudit_core.reference_gap.RELATIVE_BAND` (1% of the earlier figure; the sources are
cited there).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..reference_gap import RELATIVE_BAND
from ..roles import is_higher_better, parse_name

_NUM = r"-?\d+(?:\.\d+)?"
#: A metric's name and its figure: ``acc: 0.793``, ``loss was about 88``, ``a BLEU score of 37.1``,
#: ``WER 0.72``, ``with loss 112``.
_NAMED = re.compile(
    r"(?P<name>[A-Za-z][A-Za-z0-9@_\-]*)(?:\s+(?:score|rate|value))?\s*"
    r"(?:(?::|=|\bof\b|\bis\b|\bwas\b|\bwere\b|\bbecomes?\b|\bbecame\b|\bat\b)\s*)*"
    r"(?:(?:about|around|approximately|roughly|~)\s*)?"
    rf"(?P<v>{_NUM})(?P<pct>\s?%)?(?!\w|\.\d|\s?(?:epochs?|steps?|iter\w*|hours?|minutes?|days?|GB|MB)\b)",
    re.I,
)
#: A point of the run stated beside a figure: ``at epoch 58``, ``after 40,000 iterations``.
_POSITION = re.compile(
    r"^\s*(?:at|after|in|by)\s+(?:the\s+)?(?:epoch|step|iteration|iter)\s*(?P<n>\d[\d,]*)", re.I
)
_COMPARE = re.compile(r"\b(?:worse|better|lower|higher|less|more|smaller|larger)\s+than\b", re.I)
_BARE = re.compile(
    rf"(?<![\w.\-])(?P<v>{_NUM})(?P<pct>\s?%)?(?!\w|\.\d|\s?(?:epochs?|steps?|iter\w*|hours?|minutes?|days?|GB|MB)\b)"
)
#: Words that place a statement early or late in the run.
_EARLY = re.compile(
    r"\b(?:initially|at first|first(?:ly)?|at the (?:beginning|start)|in the beginning|when the train\w* "
    r"(?:began|started)|(?:right\s+)?before|originally|previously)\b",
    re.I,
)
_LATE = re.compile(
    r"\b(?:then|finally|afterwards?|after (?:this|that|it)|now|currently|later|in the end|at the end|"
    r"eventually|(?:still|again) (?:at|with))\b",
    re.I,
)
#: A baseline run: the default command or configuration, the original or reference setup.
_DEFAULT_RUN = re.compile(
    r"\b(?:default(?:\s+(?:command|config\w*|settings?|setup|parameters?|hyper-?parameters?))?|original "
    r"(?:command|config\w*|settings?|setup)|baseline)\b",
    re.I,
)
#: A run with one setting changed: ``changing batch size``, ``when I change the learning rate``,
#: ``with --batch-size 512``.
_SETTING = (
    r"(?:batch[ _-]?size|learning[ _-]?rate|\blr\b|optimi[sz]er|weight[ _-]?decay|epochs?|warm-?up|"
    r"momentum|dropout|num[ _-]?workers|image[ _-]?size|resolution|scheduler|precision|gpus?)"
)
_CHANGED_RUN = re.compile(
    rf"\b(?:chang\w*|increas\w*|decreas\w*|rais\w*|lower\w*|reduc\w*|doubl\w*|halv\w*|modif\w*|set\w*|switch\w*)"
    rf"\s+(?:the\s+|my\s+|only\s+)?(?:\w+\s+)?{_SETTING}",
    re.I,
)
#: Settings whose change is a rerun of one configuration, not another configuration.
_SEED_CHANGE = re.compile(r"\bseeds?\b", re.I)


@dataclass(frozen=True)
class Figure:
    name: str  # the metric's name as written, lower-cased
    value: float
    text: str  # the sentence it was read from
    position: int | None  # an epoch / step number stated beside it
    when: int  # -1 early, +1 late, 0 unstated
    order: int  # index of the sentence in the report


def _sentences(line: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z\[(\"'])|;\s+|\n", line) if s.strip()]


def _is_metric(word: str) -> bool:
    return parse_name(word).family in ("loss", "acc", "error", "score")


def _figures_of(sentence: str, order: int) -> list[Figure]:
    """The named figures of one sentence (:data:`_NAMED`), and in a comparing sentence the bare figure
    after the comparison under the name of the one before it."""
    out: list[Figure] = []
    when = -1 if _EARLY.search(sentence) else (1 if _LATE.search(sentence) else 0)
    for m in _NAMED.finditer(sentence):
        if not _is_metric(m.group("name")):
            continue
        pos = _POSITION.match(sentence[m.end() : m.end() + 40])
        n = int(pos.group("n").replace(",", "")) if pos else None
        out.append(Figure(m.group("name").lower(), float(m.group("v")), sentence, n, when, order))
    c = _COMPARE.search(sentence)
    if c and out and out[0].text is sentence:
        before = [f for f in out if sentence.find(str(f.name)) < c.start()]
        after = sentence[c.end() :]
        b = _BARE.search(after)
        if (
            before
            and b
            and not any(_NAMED.search(after) and _is_metric(x) for x in after.split()[:1])
        ):
            pos = _POSITION.match(after[b.end() : b.end() + 40])
            n = int(pos.group("n").replace(",", "")) if pos else None
            out.append(Figure(before[0].name, float(b.group("v")), sentence, n, 0, order))
    return out


def _all_figures(lines: list[str]) -> list[Figure]:
    out: list[Figure] = []
    order = 0
    for line in lines:
        for s in _sentences(line):
            out += _figures_of(s, order)
            order += 1
    return out


def _worse(name: str, earlier: float, later: float) -> bool:
    """Whether ``later`` is worse than ``earlier`` by more than :data:`RELATIVE_BAND` of ``earlier``."""
    if earlier == 0:
        return False
    change = (later - earlier) / abs(earlier)
    if abs(change) <= RELATIVE_BAND:
        return False
    return change < 0 if is_higher_better(name) else change > 0


@dataclass(frozen=True)
class Comparison:
    """One metric stated twice: ``before`` is the baseline run or the earlier point, ``after`` the other."""

    name: str
    before: Figure
    after: Figure
    setting: str  # the changed setting's words, for a configuration change; "" for a course

    @property
    def worse(self) -> bool:
        return _worse(self.name, self.before.value, self.after.value)

    @property
    def is_loss(self) -> bool:
        return parse_name(self.name).family == "loss"


def stated_config_change(lines: list[str]) -> Comparison | None:
    """The first metric stated both in a sentence about the default run (:data:`_DEFAULT_RUN`) and in a
    later sentence about a run with one setting changed (:data:`_CHANGED_RUN`; a seed is not a setting),
    both figures on the same scale, else ``None``."""
    figs = _all_figures(lines)
    base = [f for f in figs if _DEFAULT_RUN.search(f.text) and not _CHANGED_RUN.search(f.text)]
    for b in base:
        for f in figs:
            if f.name != b.name or f.order <= b.order or f.text == b.text:
                continue
            m = _CHANGED_RUN.search(f.text)
            if m is None or _SEED_CHANGE.search(m.group(0)):
                continue
            if (abs(b.value) <= 1) != (abs(f.value) <= 1):
                continue
            return Comparison(b.name, b, f, m.group(0))
    return None


def stated_course(lines: list[str]) -> Comparison | None:
    """The first metric stated at an earlier and a later point of one run, else ``None``: two figures of
    one name, ordered by the epoch / step numbers beside them when both have one, else one placed early
    and the other late by words of time (:data:`_EARLY`, :data:`_LATE`) or by a stated position against
    an early word. A metric that got worse is preferred to one that improved (the report's complaint)."""
    figs = _all_figures(lines)
    found: list[Comparison] = []
    for i, a in enumerate(figs):
        for b in figs[i + 1 :]:
            if a.name != b.name or a.text == b.text and a.position is None and b.position is None:
                continue
            if a.position is not None and b.position is not None and a.position != b.position:
                early, late = (a, b) if a.position < b.position else (b, a)
            elif a.when == -1 and (b.when == 1 or b.position is not None):
                early, late = a, b
            elif b.when == -1 and (a.when == 1 or a.position is not None):
                early, late = b, a
            else:
                continue
            found.append(Comparison(a.name, early, late, ""))
    worse = [c for c in found if c.worse]
    ranked = worse or found
    return ranked[0] if ranked else None


# --- training figures below held-out figures -------------------------------------------------------

_TRAIN = r"\btrain(?:ing)?(?:\s+(?:set|data|split|accuracy|acc|loss))?\b"
_HELDOUT = r"\b(?:val\w*|valid\w*|verification|test\w*|dev|held-?out|eval\w*)\b"
_ACC_WORD = re.compile(r"\b(?:acc\w*|correct\s+rate|precision|top-?1)\b", re.I)
_LOSS_WORD = re.compile(r"\bloss(?:es)?\b", re.I)
#: Training below held-out in one sentence: ``The accuracy of training set is lower than testing set``,
#: ``validation accuracy is higher than training accuracy``, ``train loss is higher than val loss``.
_TRAIN_LOWER = re.compile(
    rf"{_TRAIN}[^.;!?]{{0,50}}?\b(?:lower|less|worse|smaller|below)\b(?:\s+than\b)?[^.;!?]{{0,50}}?{_HELDOUT}"
    rf"|{_HELDOUT}[^.;!?]{{0,50}}?\b(?:higher|greater|better|larger|above)\b(?:\s+than\b)?[^.;!?]{{0,50}}?{_TRAIN}",
    re.I,
)
_TRAIN_HIGHER = re.compile(
    rf"{_TRAIN}[^.;!?]{{0,50}}?\b(?:higher|greater|larger|above)\b(?:\s+than\b)?[^.;!?]{{0,50}}?{_HELDOUT}"
    rf"|{_HELDOUT}[^.;!?]{{0,50}}?\b(?:lower|less|smaller|below)\b(?:\s+than\b)?[^.;!?]{{0,50}}?{_TRAIN}",
    re.I,
)
#: The held-out data named as part of the training data: then a high held-out figure is leakage.
_LEAKAGE = re.compile(
    r"\bleak\w*|\boverlap\w*|\bcontamin\w*|\bduplicat\w*|\bincluded in the train\w*|\btrain\s*\+\s*val\b"
    r"|\b(?:val\w*|test\w*) (?:set |data )?(?:is |was )?(?:also )?(?:in|part of) the train",
    re.I,
)


def stated_train_below_heldout(lines: list[str]) -> str | None:
    """The sentence of the report's text that states the training figure is worse than the held-out one (a
    training accuracy lower than the validation/test accuracy, :data:`_TRAIN_LOWER` in a sentence naming
    an accuracy; a training loss higher than the held-out loss, :data:`_TRAIN_HIGHER` in one naming a loss),
    else ``None``. ``None`` as well when any line names the held-out data as part of the training data or
    a leakage (:data:`_LEAKAGE`): a held-out figure that high is then the leak."""
    if any(_LEAKAGE.search(line) for line in lines):
        return None
    for line in lines:
        for s in _sentences(line):
            if _ACC_WORD.search(s) and _TRAIN_LOWER.search(s):
                return s.strip()[:240]
            if _LOSS_WORD.search(s) and _TRAIN_HIGHER.search(s) and not _ACC_WORD.search(s):
                return s.strip()[:240]
    return None


# --- a duration the thread accounts for ----------------------------------------------------------------

_TIME_UNIT = r"(?:hours?|hrs?|h|minutes?|mins?|days?|seconds?|secs?|s)"
#: A duration or a rate stated with its figure: ``each taking about 5 minutes``, ``85 hours``, ``180 images
#: / sec``, ``3.1 sec/step``.
_DURATION = re.compile(
    rf"\b\d+(?:\.\d+)?\s*{_TIME_UNIT}\b(?!\s*(?:ago|later))"
    r"|\b\d+(?:\.\d+)?\s*(?:images?|samples?|examples?|img|it|batches|tokens?)\s*/\s*(?:s|sec|second)\b"
    r"|\b\d+(?:\.\d+)?\s*(?:s|sec|seconds?)\s*/\s*(?:step|it|iter\w*|batch)\b",
    re.I,
)
#: A reference duration stated in the thread: ``It takes roughly 20 hours for full training on such a
#: GPU``, ``training took 3 days on 8 V100s``.
_REFERENCE_DURATION = re.compile(
    rf"\b(?:takes?|took|taking|needs?|needed|lasts?|lasted|runs? for|trained for)\b[^.;!?]{{0,40}}?"
    rf"\b\d+(?:\.\d+)?\s*(?:{_TIME_UNIT})\b",
    re.I,
)
#: The run's failure named: then a duration is not the whole complaint.
_FAILURE = re.compile(
    r"\b(?:nan|inf|error\w*|exception|crash\w*|killed|diverg\w*|fail\w*|hang\w*|hung|stuck|freez\w*|"
    r"out of memory|oom|traceback|not (?:converg\w*|learn\w*|decreas\w*)|utili[sz]ation|bottleneck)\b",
    re.I,
)


def stated_expected_duration(
    lines: list[str], thread: list[tuple[str, str]]
) -> tuple[str, str] | None:
    """``(duration_sentence, reference_sentence)`` when the report's complaint is how long the run takes (a
    sentence of its text with a duration or rate figure, :data:`_DURATION`, and no sentence naming a
    failure, :data:`_FAILURE`) and someone of the thread (``thread``: ``(key, text)`` of its statements)
    states how long the same training takes on the reference's hardware (:data:`_REFERENCE_DURATION`),
    not in a question; else ``None``. The run is then as slow as its schedule and hardware make it."""
    if any(_FAILURE.search(line) for line in lines):
        return None
    said = next((s for line in lines for s in _sentences(line) if _DURATION.search(s)), None)
    if said is None:
        return None
    for _key, text in thread:
        for s in _sentences(text):
            if _REFERENCE_DURATION.search(s) and "?" not in s and s.strip() != said.strip():
                return said.strip()[:240], s.strip()[:240]
    return None


# --- one result measured two ways ----------------------------------------------------------------------

#: A figure with its unit: ``62%``, ``27.61 %``, ``0.89``, ``4 points``; not part of a word, a version, an
#: identifier or a range (``VOC2007``, ``v2.4``, ``15-1``, ``1e-4``).
_UNIT_FIGURE = re.compile(
    r"(?<![\w.\-+/@])(?P<v>\d+(?:\.\d+)?)(?P<unit>\s?%|\s?percent\b|\s(?:points?|pts?)\b)?(?![\w.\-/]\d|\w)"
)
#: Words that may follow a figure: a unit, a joining word, a preposition. Any other word after a number
#: makes it a count or an identifier (``11 different recall points``, ``1000 benign samples``), unless it
#: is a metric's name (``68.3 ExactMatch``).
_AFTER_FIGURE = frozenset(
    "and or vs versus instead in on with for at when after from to than which but while is was as by "
    "using under compared against rather the".split()
)
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9@_\-]*")
#: Two figures of one sentence set against each other: ``62% instead of 67%``, ``1.46% ... far from ...
#: 10.2%``, ``0.90 (0.95 was reported ...)``, ``19.71 vs 24.01``.
_SET_AGAINST = re.compile(
    r"\binstead of\b|\brather than\b|\bvs\.?\b|\bversus\b|\bcompared (?:to|with)\b|\bagainst\b|\bfar from\b"
    r"|\b(?:worse|better|lower|higher|less|more|smaller|larger)\s+than\b|\bbelow\b|\babove\b|\breported\b",
    re.I,
)
#: Reaching this many characters from a figure, a metric's name is no longer the one it is a figure of.
_NAME_REACH = 60


@dataclass(frozen=True)
class Measured:
    """A task metric's figure read with the metric named next to it (``head``: the name's head word from
    :func:`mlaudit_core.roles.parse_name`, ``map`` for ``mAP``/``mAP-fix``; ``""`` when no name is near)."""

    head: str
    value: float
    percent: bool
    text: str
    order: int
    split: str | None = None  # ``train`` or ``eval`` when the name or the word before it says so
    #: The numbers written in the metric's name (``50`` for ``mAP50``, ``5095`` for ``mAP50-95``, ``1`` for
    #: ``top-1``/``R@1``): an IoU threshold or range, a rank cut-off. Names that differ in them are two
    #: metrics (COCO reports AP, AP50 and AP75 side by side), not one figure measured two ways.
    qualifier: str = ""


def _metric_heads(sentence: str) -> list[tuple[int, int, str, str | None]]:
    """``(start, end, head, split)`` of the words of ``sentence`` that name a task metric (accuracy, score
    or error family); ``split`` from the name (``val_acc``) or the word right before it (``training
    accuracy``), else ``None``."""
    out = []
    words = list(_WORD.finditer(sentence))
    for i, w in enumerate(words):
        p = parse_name(w.group(0))
        if p.family in ("acc", "score", "error") and p.head:
            split = p.split
            if split is None and i > 0 and sentence[words[i - 1].end() : w.start()].strip() == "":
                split = parse_name(words[i - 1].group(0)).split
            out.append((w.start(), w.end(), p.head, split))
    return out


#: A row of a printed table (columns aligned by runs of spaces, or ``|`` cells): its figures are the
#: readers' to take with their column names, not a sentence's.
_TABLE_ROW = re.compile(r"\S\s{3,}\d|\d\s{2,}\S|\|\s*-?\d")


def _qualifier(sentence: str, start: int, end: int) -> str:
    """The digits of the metric name at ``sentence[start:end]`` and of a rank word right before it
    (``top-1 accuracy``): :attr:`Measured.qualifier`."""
    word = sentence[start:end]
    before = re.search(
        r"\b(?:top|rank|r|recall|hits|p|precision)\s*[-@]?\s*(\d+)\s*$", sentence[:start], re.I
    )
    return (before.group(1) if before else "") + "".join(ch for ch in word if ch.isdigit())


def measured_figures(sentence: str, order: int = 0) -> list[Measured]:
    """The task-metric figures of one sentence (:data:`_UNIT_FIGURE`), each named by the nearest metric
    name of the sentence within :data:`_NAME_REACH` characters, before or after it. Not figures: a number
    after a counter word (``epoch 3``, ``Table 1``), a number followed by a word that is neither a unit, a
    joining word (:data:`_AFTER_FIGURE`) nor a metric name (a count: ``1000 samples``), a bound (``> 0.8``),
    the value of a setting that is no metric (``base_lr=0.001``), and the members of
    a list of three or more numbers (reruns and ranges are read by :mod:`mlaudit_core.reference_gap`);
    none in a table row (:data:`_TABLE_ROW`)."""
    from ..reference_gap import _COUNTER_WORDS

    if _TABLE_ROW.search(sentence):
        return []
    heads = _metric_heads(sentence)
    listed = {
        i
        for m in re.finditer(r"\d[\d.]*(?:\s*,\s*\d[\d.]*){2,}", sentence)
        for i in range(*m.span())
    }
    out: list[Measured] = []
    for m in _UNIT_FIGURE.finditer(sentence):
        if m.start() in listed:
            continue
        before = re.search(r"([A-Za-z]+)\W{0,2}$", sentence[: m.start()])
        if before and before.group(1).lower() in _COUNTER_WORDS:
            continue
        if re.search(r"[<>≤≥]=?\s*$", sentence[: m.start()]):
            continue  # a bound (``threshold > 0.8``), not a result
        assigned = re.search(r"([A-Za-z][\w@\-]*)\s*[=:]\s*$", sentence[: m.start()])
        if assigned and parse_name(assigned.group(1)).family not in ("acc", "score", "error"):
            if not re.fullmatch(r"(?i)overall|mean|avg|average|total|all", assigned.group(1)):
                continue  # another setting's value: ``lr=0.001``
        nxt = re.match(r"\s*([A-Za-z][\w\-]*)", sentence[m.end() :])
        if (
            nxt
            and not m.group("unit")
            and nxt.group(1).lower() not in _AFTER_FIGURE
            and not any(s == m.end() + nxt.start(1) for s, _e, _h, _sp in heads)
        ):
            continue
        near = [
            (min(abs(m.start() - e), abs(s - m.end())), h, sp or "", _qualifier(sentence, s, e))
            for s, e, h, sp in heads
            if min(abs(m.start() - e), abs(s - m.end())) <= _NAME_REACH
        ]
        head, split, qual = (
            (min(near)[1], min(near)[2] or None, min(near)[3]) if near else ("", None, "")
        )
        pct = bool(
            m.group("unit") and "%" in m.group("unit") or "percent" in (m.group("unit") or "")
        )
        out.append(Measured(head, float(m.group("v")), pct, sentence.strip(), order, split, qual))
    return out


#: How a figure is measured, named: the metric's definition (``11 point method to calculate ap``, ``AP is
#: computed by measuring precision at 11 recall points``, interpolation, averaging over classes), the
#: evaluator (the evaluation code, script, protocol or setting, a scoring script),
#: post-processing (a confidence or score threshold, NMS, tokenisation, case), and what the test inputs are
#: (cropped, resized, full-size or multi-scale test images, test-time augmentation).
_MEASURED = re.compile(
    r"\b\d+[- ]?points?\s+(?:method|interpolat\w*|metric|average\w*)\b|\binterpolat\w*"
    r"|\b(?:calculat|comput)\w*\s+(?:by|as|with|using|over)\b|\bto\s+(?:calculat|comput)\w*\s+(?:the\s+)?[A-Za-z]"
    r"|\baverag\w*\s+(?:over|across)\b|\b(?:weighted|per-class|macro|micro)[- ]?(?:average|mean|avg)\b"
    r"|\beval\w*\s+(?:code|script|tool|protocol|settings?|function|metric|server|api)\b"
    r"|\b(?:scor(?:ing|er)\s+script|protocol)\b"
    r"|\b(?:confidence|score|detection|iou)\s+threshold\w*|\bpost-?process\w*|\b(?:de)?tokeni[sz]\w*"
    r"|\bcase-?(?:in)?sensitive\b"
    r"|\b(?:test|eval\w*|inference|validation)\b[^.;!?]{0,60}?\b(?:crop\w*|resiz\w*|full[- ]size|multi-?scale"
    r"|full (?:test )?images?)|\b(?:crop\w*|resiz\w*|full[- ]size|multi-?scale)\b[^.;!?]{0,40}?\b(?:test|eval\w*"
    r"|inference|validation)\b|\btest[- ]time augment\w*",
    re.I,
)
_NOT_BEFORE = re.compile(
    r"\b(?:no|not|never|without|nothing to do with)\b\s+(?:\w+\s+){0,2}$", re.I
)


#: A duration right next to a word: ``4.6ms postprocess``, ``postprocess: 12 ms``, ``inference 0.6 s``.
_DURATION_BEFORE = re.compile(
    r"\d(?:[\d.,]*)\s*(?:ms|µs|us|ns|s|sec|secs|seconds?|milliseconds?)\W{0,3}$", re.I
)
_DURATION_AFTER = re.compile(
    r"^\W{0,3}\d[\d.,]*\s*(?:ms|µs|us|ns|s|sec|secs|seconds?|milliseconds?)\b", re.I
)


def _measurement_named(lines: list[str]) -> str | None:
    """The first sentence of ``lines`` that names how a figure is measured (:data:`_MEASURED`), not in a
    question and not negated right before (``not the evaluation script``); else ``None``. A stage named
    with its duration (``Speed: 0.9ms preprocess, 13.5ms inference, 0.0ms loss, 4.6ms postprocess per
    image``, the timing line Ultralytics prints after every validation) times the pipeline; it names no
    protocol (own f26b1-02)."""
    for line in lines:
        for s in _sentences(line):
            if _TABLE_ROW.search(s):
                continue
            for m in _MEASURED.finditer(s):
                if "?" in s or _NOT_BEFORE.search(s[: m.start()]):
                    continue
                if _DURATION_BEFORE.search(s[: m.start()]) or _DURATION_AFTER.search(s[m.end() :]):
                    continue  # a stage's duration, not how a figure is measured
                return s.strip()[:240]
    return None


def _same_scale(a: Measured, b: Measured) -> bool:
    """Both fractions or both percentages: a figure of 1 or less beside one above 1 is the same scale only
    when the larger is stated in percent and 100 times the smaller's scale is no closer (never taken)."""
    return (a.value <= 1) == (b.value <= 1)


#: A point of training stated in a sentence: ``at epoch 20``, ``after 40,000 iterations``, ``step 500``.
_AT_POINT = re.compile(
    r"\b(?:epoch|step|iter(?:ation)?)s?\s*[#:=]?\s*\d|\b\d[\d,]*\s*(?:epochs?|steps?|iter(?:ation)?s?)\b",
    re.I,
)


def measured_two_ways(lines: list[str]) -> tuple[Measured, Measured, str] | None:
    """``(first, second, measurement)`` when the text states one task metric's figure twice, the two
    differing by more than :data:`RELATIVE_BAND` of the first (in two sentences under the same metric
    name, or in one sentence that sets them against each other, :data:`_SET_AGAINST`), and a sentence
    names how a figure is measured (:func:`_measurement_named`), neither stated at a point of training
    (:data:`_AT_POINT`: a course), not one of the training split against one of a held-out split, with
    no sentence stating that a training setting was changed (:data:`_CHANGED_RUN`: that is another
    configuration, V18f's). The two figures then differ by how they were measured, not by what the model
    learned; else ``None``."""
    sentences = [s for line in lines for s in _sentences(line)]
    if any(_CHANGED_RUN.search(s) for s in sentences):
        return None
    how = _measurement_named(lines)
    if how is None:
        return None
    # a figure stated at a point of training (``at epoch 20``) belongs to a course (V18g's), not a protocol
    figs = [
        f
        for i, s in enumerate(sentences)
        if not _AT_POINT.search(s)
        for f in measured_figures(s, i)
    ]
    for i, a in enumerate(figs):
        for b in figs[i + 1 :]:
            if _stated_apart(a, b):
                return a, b, how
    return None


def _stated_apart(a: Measured, b: Measured) -> bool:
    """Whether figures ``a`` and ``b`` are one metric stated twice, :data:`RELATIVE_BAND` apart
    (:func:`measured_two_ways`): on the same scale and split, in one sentence that sets them
    against each other (:data:`_SET_AGAINST`) under no two different names, or in two sentences
    under the same metric name."""
    if a.value == b.value or not _same_scale(a, b) or a.value == 0:
        return False
    if a.qualifier != b.qualifier:
        return False  # two metrics whose names differ by a threshold or cut-off (mAP50, mAP50-95)
    if a.split and b.split and a.split != b.split:
        return False  # a training figure against a held-out one: a generalisation gap
    if abs(b.value - a.value) / abs(a.value) <= RELATIVE_BAND:
        return False
    if a.order == b.order:
        if not (a.head or b.head) or a.head and b.head and a.head != b.head:
            return False
        return _SET_AGAINST.search(a.text) is not None
    return bool(a.head and a.head == b.head)


# --- held-out data stated to be in the training data ----------------------------------------------------

_HELD_SPLIT = r"(?:test\w*|val(?:id\w*)?|eval\w*|dev|held-?out)"
_TRAIN_SPLIT = r"train(?:ing)?"
#: A held-out split stated to be in the training data: a leakage, overlap or contamination between the
#: two splits (``train/test leakage``, ``train-test overlap``), held-out rows that also appear in the
#: training set (``7.4% of the test set (2,172 rows) also appears in the training set``), or a training
#: split made of the training and the held-out split (``train_split='train+val'``).
_HELDOUT_IN_TRAIN = re.compile(
    rf"\b{_TRAIN_SPLIT}\s*(?:/|-|and|&)\s*{_HELD_SPLIT}\s+(?:leak\w*|overlap\w*|contamin\w*)"
    rf"|\b{_HELD_SPLIT}\s*(?:/|-|and|&)\s*{_TRAIN_SPLIT}\s+(?:leak\w*|overlap\w*|contamin\w*)"
    rf"|\b(?:leak\w*|overlap\w*|contamin\w*)\s+(?:between|of)\s+(?:the\s+)?{_TRAIN_SPLIT}\w*\s+(?:and|&)\s+"
    rf"(?:the\s+)?{_HELD_SPLIT}"
    rf"|\b{_HELD_SPLIT}\s+(?:set|split|data|rows|samples|images|examples)\b[^.;!?]{{0,60}}?\b(?:also\s+)?"
    rf"(?:appears?|appeared|is|are|was|were|included|contained|present)\s+(?:also\s+)?in\s+the\s+"
    rf"{_TRAIN_SPLIT}\b"
    rf"|\b{_TRAIN_SPLIT}(?:_?split)?\W{{0,4}}{_TRAIN_SPLIT}\s*\+\s*{_HELD_SPLIT}\b",
    re.I,
)


def stated_heldout_in_training(lines: list[str]) -> str | None:
    """The first sentence of ``lines`` that states held-out data is part of the training data
    (:data:`_HELDOUT_IN_TRAIN`), not in a question and not negated right before (``no train/test
    overlap``), else ``None``. A figure measured on such data measures memorisation, not generalisation."""
    for line in lines:
        for s in _sentences(line):
            for m in _HELDOUT_IN_TRAIN.finditer(s):
                if "?" in s or _NOT_BEFORE.search(s[: m.start()]):
                    continue
                return s.strip()[:240]
    return None


# --- the result stated to match the reference --------------------------------------------------------

#: The run's results stated to be at the reference's level in words, without figures: ``I am getting results
#: which are close to the published results``, ``the accuracy matches the paper``, ``similar to the reported
#: numbers``, ``your results are already very close to or even better than those reported in the paper``.
_MATCHES_REFERENCE = re.compile(
    r"\b(?:results?|accuracy|scores?|performance|numbers|figures|metrics?|m?ap|f1|bleu)\b[^.;!?]{0,40}?\b"
    r"(?:(?:are|is|were|was|which are|which is|that are)\s+)?"
    r"(?:close to|similar to|comparable (?:to|with)|consistent with|in line with|on par with|match(?:es|ing)?|"
    r"(?:about|nearly|almost) the same as)(?:\s+or\s+(?:even\s+)?(?:better|higher)\s+than)?"
    r"\s+(?:the\s+|your\s+|those\s+(?:(?:in|of)\s+(?:the\s+)?)?)?"
    r"(?:published|paper'?s?|reported|official|readme'?s?|original)\b",
    re.I,
)
#: A negation or a doubt before the statement in its clause: ``not close to``, ``far from``, ``can't get
#: close to``, ``hoping to match``.
_NOT_MATCHED = re.compile(
    r"\b(?:not|never|no|far|cannot|can't|couldn't|unable|fail\w*|hop\w*|want\w*|try\w*|tried|expect\w*|"
    r"should|would|if)\b|n't\b",
    re.I,
)


def stated_reference_matched(lines: list[str], reported: list[str]) -> str | None:
    """The sentence of ``lines`` in which the run's results are stated, in words, to be at the level of the
    reference's (:data:`_MATCHES_REFERENCE`: close to, similar to, matching the published, paper's or
    reported results), with no negation, doubt or wish before it in its clause (:data:`_NOT_MATCHED`), not
    in a question; ``None`` as well when a sentence of the reporter's own text (``reported``: what was
    pasted and the reporter's statements) names a failure (:data:`_FAILURE`: a NaN, an error, a crash, a
    hang, a loss that does not decrease) or a shortfall against a reference (``lower than``, ``cannot
    reproduce``: :mod:`.gap_reasons`). The run then reached its reference: what the report asks about is
    on the way there."""
    from .gap_reasons import _SHORT_OF, _SHORT_OF_TARGET

    if any(_FAILURE.search(line) for line in reported):
        return None
    if any(_SHORT_OF.search(line) or _SHORT_OF_TARGET.search(line) for line in reported):
        return None  # the reporter also states a shortfall (``lower than``, ``cannot reproduce``)
    for line in lines:
        for s in _sentences(line):
            for m in _MATCHES_REFERENCE.finditer(s):
                clause = re.split(
                    r",|\b(?:but|however|although|while)\b", s[: m.start()], flags=re.I
                )[-1]
                if "?" in s or _NOT_MATCHED.search(clause + s[m.start() : m.end()]):
                    continue
                return s.strip()[:240]
    return None


# --- the reference's owner states the result is at its level ----------------------------------------

#: The reference's owner (a maintainer or author of the thread) placing the run's result at the reference's
#: level: ``Your test result is within an expected range``, ``that is in line with the results we
#: observed``, ``the performance is close enough to be reproducible``. The owner knows the spread of the
#: reference's own reruns and the protocol behind its figure; a reporter's words of the same shape are a
#: hope, not an attestation.
_OWNER_MATCHED = re.compile(
    r"\bwithin\s+(?:the\s+|an?\s+)?(?:expected|normal|usual|reasonable|acceptable)\s+"
    r"(?:range|margin|band|bounds?|interval)\b"
    r"|\bin line with\s+(?:the\s+|our\s+|what\s+)?(?:(?:results?|numbers|figures|scores?|values)\s+)?"
    r"(?:(?:that\s+)?(?:we|i)\s+(?:have\s+|had\s+)?(?:observed|got|obtained|saw|measured|reported|expect(?:ed)?)"
    r"|(?:published|reported|expected)\s+(?:results?|numbers|figures|scores?))\b"
    r"|\bclose enough\b"
    # the owner's own runs gave the same: ``we have observed the same``, ``I also noticed this increase in
    # number as well``
    r"|\b(?:we|i)\s+(?:(?:have|had|also)\s+){0,2}(?:observed|noticed|seen|saw|found|had|got)\s+"
    r"(?:the\s+same\b|(?:this|that|it)\b(?:\s+[\w-]+){0,3}?\s+(?:as\s+well|too)\b)"
    # repeats of the same configuration reach the reference: ``about 5 runs should reach the reported
    # result``
    r"|\b(?:\d+|several|multiple|a\s+few)\s+(?:runs|times|seeds|trials)\s+(?:\w+\s+){0,2}?"
    r"(?:reach|get|achieve|match|reproduce)\w*\s+(?:\w+\s+){0,2}?(?:paper|reported|published|results?)\b",
    re.I,
)
#: The owner's judgement of the run, read as a class of statement rather than a phrase: what is judged (the
#: gap between the run and the reference, the run's result, or how the reporter trained) and an approving
#: predicate of it, joined by a copula or a verb of seeming in one clause: ``the performance difference is
#: very minor``, ``the 0.02 is negligible``, ``I think it is acceptable``, ``your result looks fine``, ``you
#: are doing the training correctly``. ``normal`` and ``expected`` judge only a gap: of a pronoun they say a
#: behaviour is known, not that the run is at the reference's level.
_GAP_NOUN = r"(?:difference|gap|drop|discrepanc(?:y|ies)|deviation|variation|margin)"
_RESULT_NOUN = (
    r"(?:results?|numbers?|figures?|scores?|performance|accuracy|reproduction|training|run)"
)
#: A bare figure judged is a gap only by a size (``the 0.02 is negligible``); ``0.001 is OK`` judges a
#: setting's value.
_FIGURE_GAP = (
    r"(?<![\w.])\d+(?:\.\d+)?%?(?:\s+points?)?"
    r"\s+(?:is|are|was|were|seems?|looks?)\s+(?:\w+\s+)?(?:negligible|insignificant|marginal|minor|small|tiny)\b"
)
#: A pronoun names what the reporter asked about; ``that is correct`` confirms a statement, so only
#: judgements of a size or of acceptability are read of it.
_PRONOUN = r"(?:it|this|that)"
_COPULA = (
    r"\s+(?:is|are|was|were|seems?|looks?|sounds?)\s+(?:(?:very|quite|pretty|rather|relatively|already|"
    r"still|only|just|a\s+bit|totally|perfectly|completely|fairly|reasonably|so|too)\s+)*"
)
_GAP_APPROVED = (
    r"(?:minor|small|tiny|slight|negligible|marginal|insignificant|acceptable|reasonable|fine|ok(?:ay)?|"
    r"normal|expected|within\s+(?:the\s+)?(?:noise|variance|error|run-to-run))\b"
)
_RESULT_APPROVED = r"(?:acceptable|negligible|fine|ok(?:ay)?|correct|good|reasonable\s+(?:results?|reproduction))\b"
_PRONOUN_APPROVED = (
    r"(?:acceptable|negligible|insignificant|a\s+reasonable\s+(?:results?|reproduction))\b"
)
_OWNER_JUDGED = re.compile(
    rf"\b{_GAP_NOUN}\b(?:\s+(?:\w+\s+){{0,4}}?\w+)??{_COPULA}{_GAP_APPROVED}"
    rf"|\b{_RESULT_NOUN}{_COPULA}{_RESULT_APPROVED}|\b{_PRONOUN}{_COPULA}{_PRONOUN_APPROVED}"
    rf"|{_FIGURE_GAP}"
    r"|\byou(?:\s+are|\s+were|'re)?\s+(?:doing|did|do|ran|running|trained|training|followed)\s+(?:\w+\s+){0,3}?"
    r"(?:correctly|right|properly)\b",
    re.I,
)
#: A negation or a doubt before the words in their clause, or a turn after them in the sentence: ``not
#: within the expected range``, ``hardly close enough``, ``close enough, but the test score is low``.
_OWNER_DENIED = re.compile(r"\b(?:not|never|no|hardly|far|if|whether)\b|n't\b", re.I)
_TURN_AFTER = re.compile(r"\b(?:but|however|although|though|except)\b", re.I)
_OWNER_KEY = re.compile(r"^(?:maintainers?|(?:co-?)?authors?|owners?|developers?)\b", re.I)


def owner_attests_match(params: dict[str, object] | None) -> str | None:
    """``"speaker: sentence"`` when a maintainer or author of a report's thread (a param whose key opens with
    the role, :data:`_OWNER_KEY`) states that the run's result is at the reference's level
    (:data:`_OWNER_MATCHED`), not in a question, with no negation or doubt before it in its clause and no
    turn (``but``, ``however``) after it in its sentence; else ``None``. No threshold: the owner's
    knowledge of the reference's own spread and protocol decides, as a careful analyst lets it when the
    figures alone (one rerun, two reference runs) cannot."""
    from .statements import _sentences, unasserted

    for key, raw in (params or {}).items():
        k = str(key)
        if not _OWNER_KEY.match(k):
            continue
        for s in _sentences(str(raw)):
            if unasserted(s):
                continue
            for m in [*_OWNER_MATCHED.finditer(s), *_OWNER_JUDGED.finditer(s)]:
                clause = re.split(
                    r"[,;:]|\b(?:but|however|although|while)\b", s[: m.start()], flags=re.I
                )[-1]
                if _OWNER_DENIED.search(m.group(0)):
                    continue  # ``the difference is not minor``
                # a turn in parentheses is an aside (``(but we didn't update the paper)``)
                after = re.sub(r"\([^()]*\)", "", s[m.end() :])
                if _OWNER_DENIED.search(clause) or _TURN_AFTER.search(after):
                    continue
                return f"{k}: {s.strip()}"[:240]
    return None
