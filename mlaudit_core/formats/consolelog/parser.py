"""The engine that runs the format catalog over console lines.

One pass, one line at a time, bounded memory: metric points go to typed arrays
per series (25 bytes a point while reading), not Python objects, and past a budget
the densest series is thinned to a systematic sample; console lines are kept for
the head, the tail and the relevant lines in between (:mod:`.retention` gives the
policy and why). The engine keeps a little
state between lines (the last step, the current epoch from a Keras header,
steps per epoch inferred from a Hugging Face dict printed after a progress
bar, the open ``***** eval metrics *****`` block) so that formats that print
the step on a different line than the values still get the right step.

Before the first training record (a progress bar, an iteration line, a record
with a step) generic ``key = value`` / ``key: value`` lines are the run's
configuration printed at start-up and become params; after it they are
metrics.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ...errors import InputError
from ...rundata import ConsoleLine, MetricTable
from ...signatures import CONTEXT_CATEGORIES, ELISION_LINE, is_relevant, match_line
from .formats import CATALOG, NUM, LogFormat
from .infer import MAX_TEMPLATE_CHARS, Inferred, TemplateMiner, clean_terminal, superseded
from .names import TIME_UNITS, canonical, is_known, is_time_metric, to_seconds
from .retention import (
    CONTEXT_LINES,
    HEAD_LINES,
    LINE_CHARS,
    MIDDLE_LINES,
    POINT_BUDGET,
    TAIL_LINES,
    ConsoleKeeper,
    PointStore,
)

#: Longest line segment whose metrics are read (characters). Longer segments are
#: kept for signatures only: no training framework prints a metric line this long,
#: and regexes over megabyte lines cost seconds.
MAX_PARSE_CHARS = 65_536
#: Longest text kept per console line (characters; see :mod:`.retention`).
MAX_CONSOLE_CHARS = LINE_CHARS

_N = f"(?:{NUM})"
_UNIT = r"(?P<u>ms|us|s|sec|secs|min|%|it/s|s/it|(?i:bpc|bpb|bits|nats|tok/s|tokens/s|samples/s))?"
_DELIM = r"(?=[\s,;|)\]}]|$)"
#: A non-finite value written as a word (``nan``, ``inf``, ``Infinity``; ``nan.0``): never a word of a
#: name, so ``step 80/640 loss nan lr 1.2e+01`` is ``loss`` = NaN and ``lr`` = 12, not a name ``loss nan lr``.
_NONFINITE_WORD = r"(?i:[-+]?(?:nan|inf|infinity)(?:\.0)?)(?=[\s,;|)\]}]|$)"
#: A printed name: up to four words, the first one possibly qualified by a bracketed word
#: (``avg(utility)``, ``loss[val]``: a reduction or a split written around the name).
_KEY = (
    r"[A-Za-z][\w./@-]*(?:\([A-Za-z_][\w ./@-]{0,40}\)|\[[A-Za-z_][\w ./@-]{0,40}\])?"
    rf"(?:[ ]{{1,2}}(?!{_NONFINITE_WORD})[A-Za-z][\w./@()-]*){{0,3}}"
)
#: A value with thousands separators that ends its line or is followed by a space (OLMo's
#: ``train/Perplexity=9,097``); inside ``a=1,b=2`` the comma separates pairs and is not read so.
_THOUSANDS = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?(?=\s|$)"
_GEN_EQ = re.compile(rf"(?<![\w./@-])(?P<k>{_KEY})\s*=\s*(?P<v>{_THOUSANDS}|{_N}){_UNIT}{_DELIM}")
#: ``name: value``, also with one space before the colon when the figure ends its field (a comma, a bar,
#: a bracket or the line's end follows): ``loss : 5.753381, lr: 0.0008``, ``mean_dice : 0.000000`` (the
#: TransUNet-family trainers' ``'iteration %d : loss : %f'``); not ``12:10 AM : 0.9643 C.E. Loss``, a
#: figure written before its name.
_GEN_COLON = re.compile(
    rf"(?<![\w./@-])(?P<k>{_KEY})(?:(?<! ) :(?=\s+{_N}[^\s,;|)\]}}]*\s*(?:[,;|)\]}}]|$))|:)\s+"
    rf"(?P<v>{_N})\s?{_UNIT}{_DELIM}"
)
_GEN_PIPE = re.compile(rf"\|\s*(?P<k>{_KEY})\s+(?P<v>{_N})\s?{_UNIT}\s*(?=\||$)")
#: ``name - value`` pairs joined by commas: segmentation_models.pytorch's epoch runners print their logs
#: as ``', '.join('{} - {:.4}'.format(k, v))`` (``dice_loss - 0.2131, iou_score - 0.7012``). Read only
#: when a line has no other pair and every comma-separated field is such a pair (Keras' `` - `` joins
#: ``name: value`` pairs, which the colon reading takes).
_GEN_DASH = re.compile(rf"^(?P<k>[A-Za-z][\w./@]*) - (?P<v>{_N})$")


def _dash_record(work: str) -> bool:
    """Whether ``work`` is a record of :data:`_GEN_DASH` pairs only (no ``=``, ``:`` or ``|`` pair): a
    metrics record, never a configuration print, so it is read even before the training has started."""
    if " - " not in work or any(ch in work for ch in "=:|"):
        return False
    return all(_GEN_DASH.match(f.strip()) for f in work.strip().split(","))


#: A split's figures grouped in brackets after its name: ``Train(L=0.69 | A=0.50) Valid(L=0.68 | A=0.61)``,
#: ``val(loss: 0.3, acc: 0.9)``. The figures inside are that split's (``Valid`` + ``L`` -> ``Valid_loss``).
_GEN_GROUP = re.compile(
    r"(?<![\w.])(?P<g>train|training|valid|validation|val|eval|evaluation|dev|test)"
    r"\s*\(\s*(?P<body>[^()]{1,200}?)\s*\)",
    re.IGNORECASE,
)
#: Single-letter names inside a split group, read as the abbreviations they stand for in a record of
#: losses and accuracies (``L`` loss, ``A`` accuracy).
_GROUP_ABBREV = {"l": "loss", "a": "acc"}
#: A line opening with a bare record counter before grouped figures (``1 \tTrain(L=...)``).
#: A name written in brackets before its colon and its figure (``[epoch]: 199, [batch]: 24000, [loss]:
#: 4.85``, CoupletAI's ``logger.info`` records): read as the bare name when a line holds two or more
#: (one bracketed word before a colon is a tag: ``Epoch 001 [Train]:   0%|``).
_BRACKETED_KEY = re.compile(r"\[([A-Za-z][\w./-]{0,40})\](?=: [-+]?\.?\d)")


def _unbracketed(seg: str) -> str:
    """``seg`` with its bracketed names unwrapped (:data:`_BRACKETED_KEY`) when it holds two or more."""
    if "]: " in seg and len(_BRACKETED_KEY.findall(seg)) >= 2:
        return _BRACKETED_KEY.sub(r"\1", seg)
    return seg


_LEAD_COUNTER = re.compile(r"^\s*(?P<n>\d+)\s*[\t:|]?\s*(?=[A-Za-z])")
#: A bracketed vector after a name (DeepSpeed ``lr=[1.5e-05]``, ``lr: [0.001, 0.0001]`` per parameter
#: group): one value is the name's, several are ``name_0``, ``name_1`` ... (one series per term).
_GEN_VEC = re.compile(
    rf"(?<![\w./@-])(?P<k>{_KEY})\s*(?:=|:\s*)\s*\[\s*(?P<body>{_N}(?:\s*,\s*{_N}){{0,15}})\s*,?\s*\]"
)
_VEC_ITEM = re.compile(_N)
#: A counter printed as a position ``name: n/M`` (YOLOX ``epoch: 1/300, iter: 10/47``, ``step=120/5000``).
_GEN_POS_PAIR = re.compile(
    r"(?<![\w./@-])(?P<k>global[ _]step|step|iteration|iter|it|update|epoch|ep|batch)"
    r"\s*(?::\s*|=\s*|\s+)\[?\s*(?P<n>\d+)\s*/\s*(?P<m>\d+)\s*\]?(?=[\s,;|)\]}]|$)",
    re.IGNORECASE,
)
#: An accuracy printed as a count of the total (PyTorch MNIST ``Accuracy: 9838/10000 (98%)``): the fraction.
_GEN_FRACTION = re.compile(
    rf"(?<![\w./@-])(?P<k>{_KEY}):?\s+(?P<n>\d+)\s*/\s*(?P<m>\d+)(?:\s*\(\s*\d+(?:\.\d*)?%\s*\))?(?![\w./])"
)
#: An unnamed bracketed position right after an epoch prefix: the batch of that epoch.
_BARE_POS = re.compile(r"\s*\[\s*(?P<n>\d+)\s*/\s*(?P<m>\d+)\s*\]")
#: A line whose message opens with a held-out split tag: ``Epoch(val) [1][5/5]  accuracy: 7.5`` (mmengine),
#: ``[val] loss: 0.3``, ``Validation: loss=0.3``, ``Test | acc 0.9``, ``Test set: Average loss: 0.05`` (PyTorch MNIST). Its unprefixed figures are that split's.
_SPLIT_TAG = re.compile(
    r"^\W{0,3}(?:[A-Za-z]+\s*[(\[]\s*(?P<a>val|valid|validation|eval|evaluation|dev|test)\s*[)\]]"
    r"|(?P<b>val|valid|validation|eval|evaluation|dev|test|testing)(?:\s+(?:set|phase|results?|metrics))?\s*[:\[(|\]-])",
    re.IGNORECASE,
)


_SPLIT_HINT = re.compile(r"(?i:val|eval|test|dev)")
#: A held-out split tag as the last part of a log prefix, right before the message: ``... - INFO -
#: Validation - `` (own corpus f10b1-20: ``Validation - Loss: 0.1996, F1: 0.9995, AUC: 0.9997``).
_SPLIT_TAG_LAST = re.compile(
    r"(?i)(?:^|[\s\]|:-])(?P<t>val|valid|validation|eval|evaluation|dev|test|testing)\s*[-|:]\s*$"
)
#: A split named in a figure's own name: the line then names its splits itself.
_SPLIT_WORD = re.compile(
    r"(?i)(?:^|[\W_])(?:train|training|val|valid|validation|eval|evaluation|dev|test)(?:$|[\W_])"
)


#: A top-k accuracy name: ``Acc@1``, ``Prec@5``, ``top1``, ``top-5``, ``acc5`` (not a split-prefixed one).
_TOPK = re.compile(
    r"^\s*(?i:(?:acc|prec|accuracy)@\d+|top[-_ ]?\d+(?:[-_ ]?acc(?:uracy)?)?|acc\d)\s*$"
)


#: A figure with its running mean beside it (``Acc@1 75.000 (52.363)``): a meter's per-batch line.
_MEAN_BESIDE = re.compile(r"\d\s*\(\s*[-+]?\.?\d")
#: A top-k accuracy as the ImageNet example's ``AverageMeter`` prints it (``Acc@1``, ``Prec@5``): percent.
_AT_K = re.compile(r"(?i)(?:acc|prec)@\d")


#: A line reporting the best value so far (``Best model found at epoch 3, Val Loss: 0.41``).
_BEST_LINE = re.compile(r"(?i)\bbest\b")
#: The same in a template key (whitespace removed: ``Bestmodelfoundatepoch``).
_BEST_KEY = re.compile(r"(?i)(?<![a-z])best")
_STOP_WORDS = frozenset(
    "a an the of to in on at is are was were be by for from with and or as it this that "
    "than then into over too many much max min".split()
)


_THAN = re.compile(r"\bthan\b", re.IGNORECASE)


def _prose_count(key: str, raw: str) -> bool:
    """Whether ``key: raw`` is a count inside a sentence, not a figure: an integer whose name is
    outside the metric vocabulary and reads as prose (three words or more, or a function word:
    ``Too many dataloader workers: 2``, ``max is dataset.num_shards=1``); or any value whose name
    holds a comparison (``than``: scikit-learn's ``Validation score did not improve more than
    tol=0.000100 for 10 consecutive epochs. Stopping.``), which a metric's name never does."""
    if is_known(key):
        return False
    if _THAN.search(key):
        return True
    if not raw.lstrip("+-").isdigit():
        return False
    words = key.split()
    return len(words) >= 3 or any(w.lower() in _STOP_WORDS for w in words)


def _eval_record_prefix(keys: list[str], summary: bool = False) -> str | None:
    """``val/`` (or ``test/``) when one printed record's only loss is a held-out loss and it names no
    training figure (accelerate's ``epoch 0: {'accuracy': 0.96, 'eval_loss': 0.23}``): its unprefixed
    figures are that evaluation's. None otherwise (Keras ``loss: .. - accuracy: .. - val_loss: ..``
    has a training loss; its unprefixed figures stay training). ``summary``: the record prints no
    running mean beside its figures (no ``value (mean)`` meter): a pass's result, not a batch's."""
    if summary and all(_TOPK.search(k) for k in keys):
        # only top-k accuracies, no loss, no learning rate (`` * Acc@1 56.5 Acc@5 79.1``): the summary
        # ``validate()`` prints after an evaluation pass (PyTorch's ImageNet example and the scripts
        # derived from it: Swin, DeiT, ConvNeXt, MoCo); a training line carries its loss beside them
        return "val/"
    held = None
    for k in keys:
        name = canonical(k.strip(), "train/")[0]
        if name.startswith("train/") and _SPLIT_WORD.search(k):
            return None  # a training figure named as such
        if name.endswith("/loss"):
            if name.startswith("train/"):
                return None
            held = name[: name.index("/") + 1]
    return held


def _split_prefix(line: str) -> str:
    """``val/`` or ``test/`` when ``line``, or its message without the log prefix, opens with a
    held-out split tag (:data:`_SPLIT_TAG`), else ``train/`` (the default of unprefixed names)."""
    msg = strip_log_prefix(line)
    m = _SPLIT_TAG.match(line) or _SPLIT_TAG.match(msg)
    if m is None:
        # a tag written like a logger name before its message (``INFO - Validation - Loss: 0.19, F1: 0.99``):
        # the prefix pattern takes ``Validation -`` as a logger's name; the tag is its last part
        t = _SPLIT_TAG_LAST.search(line[: len(line) - len(msg)])
        if t is not None and not _SPLIT_WORD.search(msg):
            return "test/" if t["t"].lower().startswith("test") else "val/"
    if m is None or _SPLIT_WORD.search(m.string, m.end()):
        return "train/"  # no tag, or the rest names its splits itself (``[eval] iter 0: train 9.85 val 9.85``)
    return "test/" if (m["a"] or m["b"]).lower().startswith("test") else "val/"


#: A message that changes a quantity to a new value: apex ``... reducing loss scale to 32768.0``, DeepSpeed
#: ``Attempted loss scale: 65536, reducing to 32768``, ``setting learning rate to 1e-4``. The new value is a
#: point of that quantity (read only for vocabulary names, :func:`.names.is_known`).
_CHANGE_VERB = r"(?:reduc|increas|decreas|lower|rais|adjust|chang|updat|sett|scal|halv|doubl)\w*"
_CHANGE_TO = re.compile(
    rf"(?i:{_CHANGE_VERB})\s+(?:the\s+)?(?P<k>[A-Za-z][A-Za-z_ ]{{0,30}}?)\s+to:?\s+(?P<v>{_N})(?![\w.])"
)
_CHANGE_AFTER = re.compile(
    rf"(?P<k>[A-Za-z][A-Za-z_]*(?: [A-Za-z_]+){{0,2}}):?\s+{_N},?\s+(?i:{_CHANGE_VERB})\s+to:?\s+"
    rf"(?P<v>{_N})(?![\w.])"
)
#: A label with a duration unit opening a ``|``-separated run (DeepSpeed's ``time (ms) | forward: 120.55 |
#: backward: 240.12 | step: 15.30``): every figure after it is a duration of that label, in that unit
#: (``time_forward``, ``time_step``; ``step`` there is a duration, not the step counter).
_UNIT_LABEL = re.compile(
    r"(?<![\w.])(?P<label>[A-Za-z]\w{0,30})\s*\((?P<u>ms|us|µs|s|sec|secs|min)\)\s*(?=\|)"
)
#: ``name value`` with only spaces between, as ``print("test accuracy", acc)`` or
#: ``print(f"epoch {e} loss {l}")`` write it. Read only for names of the vocabulary
#: (:func:`.names.is_known`) and step/epoch markers, never for free words: ``nr. of
#: training examples 6250`` is not a metric.
_GEN_SPACE = re.compile(rf"(?<![\w./@-])(?P<k>{_KEY})\s+(?P<v>{_N}){_UNIT}{_DELIM}")
_SPACE_CHEAP = re.compile(r"[A-Za-z]\s+[-+]?\.?\d")
#: A unit printed one space after a spaced value (nanoGPT ``loss 6.1551 BPC``): not prose.
_UNIT_WORD = re.compile(
    r"(?:ms|us|s|sec|secs|min|(?i:bpc|bpb|bits|nats|tok/s|tokens/s|samples/s))(?=[\s,;|)\]}]|$)"
)
#: A line that is only an epoch header: ``epoch 3``, ``Epoch 3/10``, ``=== Epoch 3 ===``, or one that
#: names the phase the lines under it belong to: ``Training epoch: 3``, ``Eval epoch: 4`` (mmskeleton /
#: ST-GCN's IO printer, own corpus f14b1-08), ``Validation epoch 2``.
_EPOCH_ONLY = re.compile(
    r"^\W*(?:(?P<phase>train(?:ing)?|eval(?:uation|uating)?|val(?:id|idation|idating)?|test(?:ing)?)\s+)?"
    r"epoch\s*[:#]?\s*(?P<n>\d+)(?:\s*(?:/|of)\s*(?P<total>\d+))?\W*$",
    re.IGNORECASE,
)
#: A line that is only a step header (``step 100``, ``=== iter 200/1000 ===``, ``Iteration 5:``): the
#: indented ``name=value`` lines under it are that step's record.
_STEP_ONLY = re.compile(
    r"^\W*(?:global[ _]step|step|iteration|iter|update)\s*[:#=]?\s*(?P<n>\d+)"
    r"(?:\s*(?:/|of)\s*(?P<total>\d+))?\W*$",
    re.IGNORECASE,
)
#: A line opening with a bracketed counter (XGBoost ``[0]\t...``, LightGBM ``[1]\t...``): kept for the
#: template reader, not stripped as a log prefix.
_BRACKET_COUNTER = re.compile(r"^\[\d+\]\s")
#: LightGBM's ``valid_0's auc: 0.833976`` (its evaluation line, pasted without the ``[N]`` counter): the
#: data set's name in the possessive, then the metric; the template reader names it (``val/auc``).
_POSSESSIVE_METRIC = re.compile(r"^\s*\w+'s [\w@.\-]+: -?\d")
_DIGIT = re.compile(r"\d")
#: ``: 0.98 C.E. Loss, 94.28% Accuracy``: figures written before their names, one per comma-separated
#: item after a colon; read only when the name is in the metric vocabulary.
_GEN_VALUE_FIRST = re.compile(
    r"(?:(?<=[:,;|])|^)\s*(?P<v>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(?P<u>%)?"
    r"\s+(?P<k>[A-Za-z][\w.]*(?:\s[A-Za-z][\w.]*){0,2})\s*(?=[,;|]|$)"
)
#: The message line of a Python exception (``RuntimeError: ... input.dim() = 6 ...``,
#: ``torch.multiprocessing.spawn.ProcessRaisedException: ...``): prose, whose ``name = number``
#: fragments are not metrics. A figure right after the colon (``TrainError: 0.4``) is still read.
_EXC_LINE = re.compile(r"\s*(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception):\s+(?![-+]?\.?\d)")
_WIDE_GAP = re.compile(r"\s{2,}")
_POSITION = re.compile(r"(?<![\w./-])\d+\s*/\s*\d+(?![\w./])")
#: A column name of a table header: a name, not a number or a sentence.
#: A colon inside a name is part of it (``mAP@.5:.95``).
#: A name starts with a letter of any script (``α``, a symbol printed as a column name).
_HEADER_CELL = re.compile(
    r"^(?=.{1,41}$)[^\W\d](?:[\w./@%()-]|:(?=[\w.]))*(?: [^\W\d(](?:[\w./@%()-]|:(?=[\w.]))*){0,3}$"
)
#: A cell that is a ``name:value`` pair with no space (``step:161``, ``loss:26.72``): a record's figure,
#: never a column name (own f19b2-19: ``used time:0.18,step:161,loss:26.7,mse_loss:1.67`` per line). The
#: name ends in a letter: ``mAP@.5:.95`` (YOLO's header) is a range in a column name, not a pair.
_PAIR_CELL = re.compile(rf"^[^\W\d][^:]*[A-Za-z_]:\s*{_N}$")
#: The cells of a 2+-space-aligned header line, with their columns: names separated by one space
#: are one cell (``macro avg``).
_HEADER_SPAN = re.compile(r"\S+(?: \S+)*")
#: A rule line drawn above or below a table's header (``=====``, ``-----``, ``+----+----+``).
_RULE_LINE = re.compile(r"^\s*[-=_+|─━═~*]{8,}\s*$")
#: A table cell holding a number with a glued unit: a time (scikit-learn's ``Remaining Time``
#: column: ``3.36s``), a percentage, or a memory size (YOLOv5/v7's ``gpu_mem`` column: ``11.8G``).
_UNIT_CELL = re.compile(rf"^(?P<v>{_N})(?:s|ms|%|[KMGT]i?B?)$")
#: A table cell holding a position ``n/total`` (YOLOv5/v7's ``Epoch`` column: ``0/299``): its ``n``.
_FRACTION_CELL = re.compile(r"^(?P<v>\d+)/\d+$")
#: The label of a table row that aggregates the rows of its table (YOLO's ``all`` row of the
#: validation table, scikit-learn's ``macro avg``): the row an analyst reads as the run's figure;
#: rows labelled otherwise (one per class) are a breakdown, not read.
_AGGREGATE_ROW = frozenset(
    {"all", "total", "overall", "mean", "average", "avg", "macro avg", "micro avg", "weighted avg"}
)
#: A rich progress bar (Lightning's RichProgressBar, ``rich.progress``): description, bar glyphs,
#: ``n/total``, elapsed and remaining times around a bullet, rate, then the metric column.
_RICH_BAR = re.compile(
    r"^\s*(?P<desc>\S.*?)\s+[━╸╺╾╼─]+\s+(?P<n>\d+)/(?P<m>\d+)\s+(?P<el>[\d:]+|-:--:--)\s*•\s*"
    r"(?:[\d:]+|-:--:--)\s*(?:(?P<rate>[\d.]+)(?P<unit>it/s|s/it))?\s*(?P<post>.*)$"
)
_RICH_PAIR = re.compile(rf"([A-Za-z_][\w/.@-]*):\s+({NUM})(?=\s|$)")
#: Indentation of the lines rich wraps a bar's metric column onto.
_WRAP_INDENT = " " * 30
#: A warning line (logging level or a Python warning category): its figures are not a record.
_WARNING_LINE = re.compile(r"\[Warning\]|\b[A-Z]\w*Warning:")
#: A step/epoch position opening a line: ``Epoch 3``, ``step: 100``, ``Iter [20/500]``. A plural
#: (``epochs: 400``, ``steps: 5000``) is a count, the plan printed with the configuration, unless a
#: ``n/total`` follows (``Epochs 3/10``); :func:`_step_prefix` applies that rule.
_STEP_PREFIX = re.compile(
    r"^\W{0,3}(?P<w>global[ _]step|step|iteration|iter|it|update|epoch|ep|batch)(?P<pl>s)?\b"
    r"\s*[:=#]?\s*\[?\s*(?P<n>\d+)(?:\s*/\s*(?P<total>\d+))?\]?",
    re.IGNORECASE,
)


def _step_prefix(seg: str) -> re.Match | None:
    """The position a line opens with (:data:`_STEP_PREFIX`), or None; a plural word
    without ``/total`` (``epochs: 400``) is the plan, not a position."""
    m = _STEP_PREFIX.match(strip_log_prefix(seg))
    if m is not None and m["pl"] and not m["total"]:
        return None
    return m


_D2_TASK = re.compile(r"Evaluation results for (?P<task>\w+)")
_D2_COPY = re.compile(r"copypaste: (?P<body>.*)$")
_D2_ROW = re.compile(r"^\s*\|(?:[^|]*\|){2,}\s*$")
_STEP_KEY = re.compile(
    r"\b(?:global_step|step|iter|iteration|epoch|ep|batch)\s*[:=]", re.IGNORECASE
)
_PARAM_EQ = re.compile(
    r"(?<![\w.])(?P<k>[A-Za-z_][\w.]*)\s*=\s*(?P<v>'[^']*'|\"[^\"]*\"|<[^>]*>|[^,\s)]+)"
)
_PARAM_LINE = re.compile(
    r"^\s*(?:\[[A-Z]+\]\s*)?(?P<k>[A-Za-z][\w .()/-]{0,60}?)\s*(?:=|:\s)\s*(?P<v>\S.*?)\s*$"
)
_LOG_PREFIX = re.compile(
    r"^(?:\s*:?(?:\[[^\]]{0,120}\]|\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?|\d{2}/\d{2}(?:/\d{4})? \d{2}:\d{2}:\d{2}|"
    r"(?:INFO|WARNING|WARN|DEBUG|ERROR|CRITICAL|FATAL|TRACE|SUCCESS)\b:?|[\w.]+(?=\s+[-|]\s)|"
    r"[\w.]+:[\w<>]+:\d+(?=\s+-\s)|>>|[-|:](?=\s)|\([\w.-]+\.py[ :]\d+\):?))+"
)  # loguru: 'name:function:line - message'; a ':' may join the parts ('%(asctime)s:%(levelname)s: %(message)s')
#: A line that announces a configuration dump printed under it (detectron2 "Running with full config:",
#: "Config:", "Hyperparameters:", "Arguments:"): the message ends with the word and a colon.
_CONFIG_OPEN = re.compile(
    r"\b(?:full config|config|configuration|hyper-?parameters|hparams|arguments|args|settings)\s*:\s*$",
    re.IGNORECASE,
)
#: A line of a YAML dump: ``KEY:`` (a section), ``KEY: value`` (one value) or ``- item``, nothing else.
_YAML_LINE = re.compile(r"^\s*(?:[A-Za-z_][\w.\-]*\s*:(?:\s+\S.*)?|-\s+\S.*)$")
#: A line that opens with a log record's own prefix (a ``[`` group, a date, a level): the dump is over.
_RECORD_START = re.compile(
    r"\s*(?:\[|\d{4}-\d{2}-\d{2}|\d{2}/\d{2}|(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL)\b)"
)
#: Lines after a record line within which a lone ``key: value`` still belongs to that record.
CONTINUATION_LINES = 3
_TS = re.compile(r"^\[?(?P<ts>\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d{1,6})?)")
# candidates only: the marker words, or a body with two spaces and none of the characters of log structure
_ANNOTATION = re.compile(
    r"\[(?P<b>\.\.\.|…|snip|truncated|omitted|sic|"
    r"[^\[\]\n=|<>%'\"{}]{0,200}? [^\[\]\n=|<>%'\"{}]{0,200}? [^\[\]\n=|<>%'\"{}]{0,200})\]"
)
_PROSE_WORD = re.compile(r"(?<![\w./@-])[A-Za-z][a-z'’]+(?![\w./@(-])")
_EVAL_DESC = re.compile(r"valid|eval|test|predict|sanity|inference", re.IGNORECASE)
_EPOCH_DESC = re.compile(r"\bEpoch\s+(\d+)", re.IGNORECASE)
#: Progress bars that are not training: loading weights, preparing or downloading data,
#: tokenising, encoding, saving. Descriptions printed by transformers (``Loading checkpoint
#: shards``, ``Loading weights``, ``Fetching 4 files``), datasets (``Map``, ``Map (num_proc=4)``,
#: ``Filter``, ``Generating train split``, ``Downloading data``, ``Extracting data files``,
#: ``Resolving data files``, ``Saving the dataset (1/1 shards)``, ``Casting the dataset``),
#: the run_clm/run_mlm examples (``Running tokenizer on dataset``, ``Grouping texts in chunks
#: of 1024``), TRL (``Tokenizing train dataset``, ``Applying chat template to train dataset``,
#: ``Packing train dataset``, ``Truncating train dataset``), sentence-transformers ``encode``
#: (``Batches``), vLLM (``Processed prompts``) and Ultralytics (``Scanning ...``). Such a bar
#: neither becomes the training bar nor gives a throughput point.
_NOT_TRAINING_DESC = re.compile(
    r"^(?:load|download|fetch|map\b|filter|generat|extract|resolv|sav|cach|cast|flatten|"
    r"tokeni[sz]|detokeni[sz]|running tokenizer|grouping texts|apply|pack|truncat|preprocess|process|"
    r"encod|embed|batches\b|scan|upload|writ|read|convert|comput|build|index|shuffl|quantiz|merg|"
    r"shard|creat|prepar|verif|check|copy|compil|export|sampl|search|sort|split|concat|collat|"
    r"adding requests|processed prompts)",
    re.IGNORECASE,
)
#: A split name before a data bar's description: Ultralytics prefixes its dataset scan with the mode
#: (``train: Scanning /data/labels/train.cache... 96300 images``; ultralytics/data/dataset.py builds
#: ``f"{self.prefix}Scanning ..."`` with ``prefix=colorstr(f"{mode}: ")``), whose total counts images,
#: not training steps (own f25b1-06: read as a plan of 96300 steps).
_SPLIT_PREFIX = re.compile(
    r"^(?:\x1b\[[0-9;]*m)*(?:train|training|val|valid|validation|test|eval)\s*:\s*(?:\x1b\[[0-9;]*m)*",
    re.IGNORECASE,
)
#: Rate units of data and file bars (``datasets`` ``examples/s``, ``ba/s``; downloads in bytes).
_DATA_RATE_UNITS = frozenset(
    {
        "examples/s",
        "ex/s",
        "ba/s",
        "b/s",
        "kb/s",
        "mb/s",
        "gb/s",
        "kib/s",
        "mib/s",
        "gib/s",
        "files/s",
        "file/s",
        "shards/s",
        "docs/s",
        "rows/s",
        "prompts/s",
        "lines/s",
        "bytes/s",
        "images/s",
        "img/s",
    }
)
#: A progress bar the catalog's bar pattern does not read (unit-scaled counts ``1.2k/1.2k``,
#: ``440M/440M``): a download or a data bar, removed from the line so its ``Name: 100%`` is not
#: read as a metric.
_OTHER_BAR = re.compile(
    r"(?:[A-Za-z][\w .#()/=,-]{0,80}?:\s*)?\d{1,3}%\|[^|]{0,200}\|[^\[\n]{0,60}"
    r"\[[^\]]{0,200}\]"
)
_DESC_BEFORE = re.compile(r"(?P<desc>[A-Za-z][\w .#()/=,-]{0,60}?):\s*:?\s+$")
_MARKERS = {
    "step": "@step",
    "global_step": "@step",
    "globalstep": "@step",
    "iteration": "@step",
    "iter": "@step",
    "it": "@step",
    "num_updates": "@step",
    "update": "@step",
    "updates": "@step",
    "trainer/global_step": "@step",
    "epoch": "@epoch",
    "ep": "@epoch",
    "batch": "@batch",
    "batch_idx": "@batch",
}
#: Start-up lines that state the plan (Hugging Face "Num Epochs = 3", "Total optimization steps = 345").
_PLAN_KEYS = {
    "num_epochs": "epochs",
    "num_train_epochs": "epochs",
    "max_epochs": "epochs",
    "epochs": "epochs",
    "n_epochs": "epochs",
    "total_optimization_steps": "total_steps",
    "max_steps": "total_steps",
    "total_steps": "total_steps",
    "train_iters": "total_steps",
}
_ACCURACY_LEAVES = ("accuracy", "top1", "top5", "mfu", "acc")


def strip_annotations(line: str) -> str:
    """Remove reporter annotations: ``[...]``, ``[snip]`` and bracketed prose of 3+ words.

    Brackets that hold log structure are kept: ``[INFO]``, ``[Rank 0]``,
    ``[00:01<00:02, 4.2it/s]``, ``[0][10/5005]``, ``['a', 'b']``.
    """
    if "[" not in line:
        return line
    return _ANNOTATION.sub(_annotation_repl, line)


def _annotation_repl(m: re.Match) -> str:
    body = m["b"].strip()
    if body in ("...", "…", "snip", "truncated", "omitted", "sic"):
        return ""
    if ":" in body and re.search(r"\d:\d", body):
        return m.group(0)
    if len(_PROSE_WORD.findall(body)) >= 3:
        return ""
    return m.group(0)


@functools.lru_cache(maxsize=8192)
def _metric_words(key: str) -> str:
    """The longest tail of a multi-word key that names a known metric or counter.

    Free text runs into generic keys: in ``Saving model at step=500 with loss=0.3`` the
    keys are ``step`` and ``loss``, not ``Saving model at step``; ``train loss`` and
    ``Validation Accuracy`` stay whole. A key with no known tail is kept as written.
    """
    if " " not in key:
        return key
    words = key.split()
    for i in range(len(words)):
        tail = " ".join(words[i:])
        if tail.lower().replace(" ", "_") in _MARKERS or is_known(tail):
            if i and words[i - 1].lower() in _CUMULATIVE and "time" in tail.lower():
                return key  # a clock reading (scikit-learn's 'Total training time: 0.03 seconds.')
            return tail
    return key


#: Words that make the time after them a running total, not the time of one step: scikit-learn's
#: SGD estimators print ``Total training time: 0.03 seconds.`` after each epoch (the time since
#: fit began), which read as ``training time`` is a per-step time of 0.00 s on every early epoch.
_CUMULATIVE = frozenset({"total", "cumulative", "elapsed", "overall", "accumulated"})


def strip_log_prefix(line: str) -> str:
    """The message part of a log line: leading ``[...]`` groups, timestamps, levels and logger names removed."""
    m = _LOG_PREFIX.match(line)
    return (line[m.end() :] if m else line).lstrip()


def _cell_num(cell: str) -> float | None:
    """A table cell as a number: plain, with a glued unit (:data:`_UNIT_CELL`) or a position
    ``n/total`` (:data:`_FRACTION_CELL`, its ``n``); None when it is not one."""
    m = _UNIT_CELL.match(cell) or _FRACTION_CELL.match(cell)
    return _num(m["v"]) if m is not None else _num(cell)


def _num(text: str) -> float | None:
    """``text`` as a float; ``nan.0`` / ``inf.0`` (a non-finite value formatted as ``f"{v:.1f}"``-like
    text by tqdm postfixes, Lightning's bar) is NaN / inf. None when not a number."""
    try:
        return float(text)
    except (TypeError, ValueError):
        if isinstance(text, str) and re.fullmatch(_THOUSANDS, text):
            return float(text.replace(",", ""))
        if isinstance(text, str) and text.endswith(".0"):
            try:
                return float(text[:-2])
            except ValueError:
                return None
        return None


def _convert(name: str, value: float, unit: str | None) -> float:
    """Normalise a value to the metric's unit: seconds, fractions, items per second."""
    if unit:
        u = unit.lower()
        if u in TIME_UNITS and is_time_metric(name):
            return to_seconds(value, u)
        if u == "%" and name.rsplit("/", 1)[-1].startswith(_ACCURACY_LEAVES):
            return value / 100.0
        if u.startswith("s/") and name.endswith("throughput"):
            return 1.0 / value if value > 0 else math.nan
    return value


#: Launch starts remembered (the first ones; past it the last start replaces the previous last).
MAX_LAUNCHES = 10_000
_LEAD = re.compile(r"^[^A-Za-z]*")
#: Python's warnings module output (``warnings.formatwarning``: ``path.py:759: UserWarning: ...``,
#: then the source line indented): code that runs again later prints it again (torch's DataLoader
#: pin_memory warning at every evaluation of a CPU Hugging Face Trainer run), so it never marks a launch
_PY_WARNING = re.compile(r"\.py:\d+: [A-Z]\w*Warning: ")


def _launch_text(text: str) -> str | None:
    """A line's message for launch matching: log prefix, timestamps and leading non-letters
    removed (``09/02/20 13:55:22 - 0:00:00 - arch: resnet50`` -> ``arch: resnet50``); None
    for a line without letters or a progress-bar update."""
    if "%|" in text or "\r" in text:
        return None
    msg = _LEAD.sub("", strip_log_prefix(text)).rstrip()
    return msg or None


def _launch_line(msg: str) -> bool:
    """Whether a message can mark a launch's start: at least 8 characters, 6 of them letters (not a
    bare number, a separator or a progress figure)."""
    return len(msg) >= 8 and sum(ch.isalpha() for ch in msg) >= 6


#: A booster's line announcing that the next line reprints the best iteration's evaluation record:
#: LightGBM 4 ``lightgbm/callback.py`` _EarlyStoppingCallback ("Early stopping, best iteration is:" and
#: "Did not meet early stopping. Best iteration is:", then ``[95]\tvalid's ...``), XGBoost < 1.3
#: ``training.py`` ("Stopping. Best iteration:"). The reprinted line repeats an earlier round: read as a
#: new point it sends the step back (a false resume).
_BEST_REPRINT = re.compile(r"\bbest iteration is:\s*$|\bStopping\. Best iteration:\s*$", re.I)


#: A quoted key with a quoted word for its value (``'objective': 'binary'``, ``'boosting_type': 'gbdt'``):
#: a parameter set printed as a dict (a tuned model's best parameters, a config). The Hugging Face
#: Trainer's log dicts hold numbers only (transformers 5.x prints them as quoted numbers: ``'loss':
#: '2.345'``; transformers/trainer.py ``Trainer.log`` rounds floats, the callbacks print the dict), so a
#: dict line with a word value is not one of them, and its numbers are not a training log.
_WORD_VALUE = re.compile(r"'[^'\n]{1,80}':\s*'(?!\s*[-+]?(?:\d|\.\d|nan\b|inf\b))[^'\n]*'", re.I)


@dataclass
class Launch:
    """Where one appended launch starts: its first line, the timestamp then (NaN when none),
    and the metric store's position (generation, kept points per series code)."""

    lineno: int
    source: str
    wall: float
    generation: int
    counts: list[int]


@dataclass
class ParseResult:
    """What one pass over the lines produced.

    Attributes:
        metrics: the metric points as a :class:`MetricTable`.
        params: configuration printed at start-up (``key = value`` lines before training).
        facts: figures recovered from the structure of the log: ``steps_per_epoch``,
            ``total_steps``, ``epochs``; and ``formats`` (format id -> lines).
        console: the kept console lines (head, relevant lines with context, tail; see
            :mod:`.retention`), in log order with their original line numbers.
        lines: number of lines read; ``omitted_console``: lines not kept in ``console``.
        points_read: metric points read; ``thinned``: series name -> sampling stride, for
            series thinned to stay within the point budget (empty when nothing was).
        first_wall / last_wall: first and last timestamp (seconds since the epoch) or None.
    """

    metrics: MetricTable
    params: dict[str, str] = field(default_factory=dict)
    facts: dict[str, float] = field(default_factory=dict)
    formats: Counter = field(default_factory=Counter)
    console: list[ConsoleLine] = field(default_factory=list)
    lines: int = 0
    omitted_console: int = 0
    points_read: int = 0
    thinned: dict[str, int] = field(default_factory=dict)
    first_wall: float | None = None
    last_wall: float | None = None
    launches: list[Launch] = field(default_factory=list)
    launches_dropped: int = 0
    store_generation: int = 0
    series_order: list[str] = field(default_factory=list)
    #: a note when the template cap of structure inference was reached (None otherwise)
    template_note: str | None = None


class _Compiled:
    __slots__ = (
        "excludes",
        "fields",
        "fmt",
        "has_kv",
        "hints",
        "pairs",
        "pairs_kv",
        "pairs_unit",
        "rx",
        "anchored",
    )

    def __init__(self, fmt: LogFormat) -> None:
        self.fmt = fmt
        self.rx, self.pairs = fmt.compiled()
        self.anchored = fmt.pattern.startswith("^")
        self.pairs_unit = bool(self.pairs is not None and "u" in self.pairs.groupindex)
        # the same pattern with only k and v capturing, so findall returns (k, v) tuples
        self.pairs_kv = (
            re.compile(re.sub(r"\(\?P<(?!k>|v>)\w+>", "(?:", fmt.pairs)) if fmt.pairs else None
        )
        self.hints = fmt.hint
        self.excludes = fmt.exclude
        self.fields = fmt.fields
        self.has_kv = "k" in self.rx.groupindex and "v" in self.rx.groupindex


_COMPILED = [_Compiled(f) for f in CATALOG]
_PROGRESS = [c for c in _COMPILED if c.fmt.kind == "progress"]
_OTHERS = [c for c in _COMPILED if c.fmt.kind != "progress"]
#: (compiled, hints, excludes, block required, kind, id) in catalog order, for the per-line loop
_DISPATCH = [
    (c, c.hints, c.excludes, c.fmt.block if c.fmt.kind != "header" else None, c.fmt.kind, c.fmt.id)
    for c in _OTHERS
]
#: The progress-bar layout itself (``desc: pct%|bar| n/total [elapsed<remaining, rate, k=v ...]``) is
#: structure, read by the base layer whatever draws it; the catalogue's ``tqdm`` entry adds the
#: names frameworks print in it (Lightning's ``v_num``, ``train_loss_step``; Megatron's
#: ``consumed_samples``). With that entry switched off, this reader without those names reads the bars.
_STRUCT_BAR = _Compiled(
    dataclasses.replace(
        next(f for f in CATALOG if f.id == "tqdm"),
        id="bar",
        name="progress bar (structure)",
        rename={},
    )
)

#: Catalogue entries switched off in every parser of this process (comma-separated ids or
#: framework names of :data:`.formats.FRAMEWORK_FORMATS`), for leave-one-framework-out measurements.
DISABLE_ENV = "MLAUDIT_LOG_DISABLE_FORMATS"


class UnknownFormatName(InputError, ValueError):
    """A name to switch off that is neither a catalogue id nor a framework of FRAMEWORK_FORMATS."""


def resolve_disabled(disabled: Iterable[str] | None) -> frozenset[str]:
    """Catalogue ids to switch off: ``disabled`` (ids or framework names) plus those named in
    the ``MLAUDIT_LOG_DISABLE_FORMATS`` environment variable. Raises :class:`UnknownFormatName`
    (an InputError and a ValueError) on a name that is neither a catalogue id nor a framework."""
    import os

    from .formats import FRAMEWORK_FORMATS

    names = list(disabled or ())
    env = os.environ.get(DISABLE_ENV, "")
    names += [n.strip() for n in env.split(",") if n.strip()]
    ids = {f.id for f in CATALOG}
    out: set[str] = set()
    for n in names:
        if n in FRAMEWORK_FORMATS:
            out.update(FRAMEWORK_FORMATS[n])
        elif n in ids:
            out.add(n)
        else:
            raise UnknownFormatName(
                f"unknown log format or framework {n!r} (catalogue ids: docs/logs.md; frameworks: "
                f"{', '.join(sorted(FRAMEWORK_FORMATS))})"
            )
    return frozenset(out)


def _record_constants(fmt: LogFormat, gd: dict[str, Any], rec: dict[str, float]) -> None:
    """Add a catalogued line's constants (``fmt.const``) and ratios (``fmt.ratios``: one named
    field over another, left out when either is missing or the denominator is 0) to ``rec``."""
    for k, v in fmt.const.items():
        rec[k] = v
    for k, (num, den) in fmt.ratios.items():
        a, b = _num(gd.get(num, "")), _num(gd.get(den, ""))
        if a is not None and b:
            rec[k] = a / b


class LogParser:
    """Stateful line parser. Feed lines with :meth:`feed`, then call :meth:`result`.

    Args:
        keep_console: keep console lines (for signatures and evidence).
        max_console_lines: console lines kept from the start of the log (the head).
        tail_lines: console lines kept from the end of the log.
        middle_lines: relevant lines (:func:`mlaudit_core.signatures.is_relevant`) kept
            between head and tail, the first half and the last half of them.
        context_lines: lines kept either side of each relevant line in between.
        max_points: metric points kept before the densest series is thinned.
        disabled_formats: catalogue entry ids or framework names (:data:`.formats.FRAMEWORK_FORMATS`)
            to switch off; their lines are then read by structure inference alone (:mod:`.infer`).
            The ``MLAUDIT_LOG_DISABLE_FORMATS`` environment variable adds to it.
        infer: structure inference on (default). Off, the reader is the catalogue and the generic
            ``key=value`` reader alone (``benchmarks/logs_throughput.py`` measures both).

    Raises:
        ValueError: a name in ``disabled_formats`` is neither a catalogue id nor a framework.
    """

    def __init__(
        self,
        keep_console: bool = True,
        max_console_lines: int = HEAD_LINES,
        *,
        tail_lines: int = TAIL_LINES,
        middle_lines: int = MIDDLE_LINES,
        context_lines: int = CONTEXT_LINES,
        max_points: int = POINT_BUDGET,
        disabled_formats: Iterable[str] | None = None,
        infer: bool = True,
    ) -> None:
        self.keep_console = keep_console
        self.infer = infer
        self.disabled = resolve_disabled(disabled_formats)
        self._dispatch = (
            [d for d in _DISPATCH if d[5] not in self.disabled] if self.disabled else _DISPATCH
        )
        self._progress_fmts = [
            c if c.fmt.id not in self.disabled else _STRUCT_BAR for c in _PROGRESS
        ]
        self._miner = TemplateMiner()
        self._train_bar_moved = False
        self._inf_last: dict[str, int] = {}
        self._frac_epochs = False
        self._inf_pos: dict[str, tuple[int, int]] = {}
        #: inside a configuration dump (:data:`_CONFIG_OPEN`), whose YAML lines are settings
        self._config_dump = False
        #: the columns of a table printed in the log (names, separator), while its rows go on
        self._table: tuple[list[str], str | None] | None = None
        self._table_rows = 0
        #: the 2+-space-aligned table headers seen, by their number of columns, and the step
        #: of the last table row (for a later aggregate row, see :meth:`_table_line`)
        self._tables: dict[int, list[str]] = {}
        #: the column of each cell of those headers (start, end) in its line, by number of columns
        self._table_spans: dict[int, list[tuple[int, int]]] = {}
        self._table_step: int | None = None
        #: key/value tables (``| name | value |`` rows): the open one, and how many were closed
        self._kv_block: dict[str, tuple[float, float]] = {}
        self._kv_blocks = 0
        #: a rich progress bar line waiting for the deeply indented lines its metric column wraps onto
        self._wrap: str | None = None
        #: the step of the last bare ``step N`` header line, for the indented lines under it
        self.step_header: int | None = None
        self._keeper = ConsoleKeeper(
            max_console_lines,
            tail_lines,
            middle_lines,
            context_lines,
            MAX_CONSOLE_CHARS,
            is_relevant,
        )
        self._names: dict[str, int] = {}
        self._store = PointStore(max_points)
        self._last_step: list[int] = []
        self._last_value: list[float] = []
        self._summary: dict[str, tuple[float, float]] = {}
        self.params: dict[str, str] = {}
        self.facts: dict[str, float] = {}
        self.formats: Counter = Counter()
        self.lines = 0
        # state carried between lines
        self.step: int | None = None
        self.epoch: float | None = None
        self.spe: float | None = None
        self._first_epoch: int | None = (
            None  # the first epoch number a ``iter: n/M`` line was read with
        )
        self.started = False
        self.block: str | None = None
        self.section: str | None = None
        self.train_bar: tuple | None = None
        #: Last position of the training bar and how often it started over: a bar that
        #: restarts is a per-epoch bar, its total is steps per epoch, not the planned length.
        self._bar_last = -1
        self._bar_line = -10
        self._bar_partial = False
        self._bar_draw: tuple | None = None
        self._bar_restarts = 0
        self.bar_n: int | None = None
        #: the step and the series of the training bar's last point (None before one): see
        #: :meth:`_progress`
        self._bar_point: tuple[int, frozenset[str]] | None = None
        #: the epoch of the last bare ``epoch N`` header line (None before one)
        self.epoch_header: float | None = None
        #: the split the last epoch header names for the lines under it (``Eval epoch: 4``: ``val/``;
        #: None for a training or a plain header)
        self.header_split: str | None = None
        #: launches appended to the log after the first (see :meth:`_launch_check`)
        self.launches: list[Launch] = []
        self.launches_dropped = 0
        self._launch_first: list[str] = []
        self._launch_sig: tuple[str, ...] | None = None
        self._launch_source: str | None = None
        self._launch_tail: str | None = None
        self._launch_pending: Launch | None = None
        self._launch_warned = False  # the line before was a Python warning (see _PY_WARNING)
        #: Hugging Face dicts numbered without a step (see :meth:`_hf_ordinal`)
        self._hf_k = 0
        self._hf_rate = 0.0
        self._hf_epoch = 0.0
        self._hf_done = False
        self._hf_mode = False
        self._hf_last_epoch = 0.0
        self.seq = 0
        self.wall = math.nan
        self._ts_text = ""
        self.first_wall: float | None = None
        self.max_step = 0
        #: the first step a generic record was placed at (a position at or below it is a restart)
        self._first_step: int | None = None
        self.lineno = 0
        self.last_record_line = -10
        self._targets: dict[tuple[str, str, str], tuple[str, str | None]] = {}
        self._pending: tuple | None = None
        self._reprint_next = (
            False  # the line after a booster's "best iteration is:" reprints a record
        )
        self._be_epoch: float | None = None
        self._be_base = 0
        self._be_max = 0

    # --- input -------------------------------------------------------------------------------
    def feed_many(self, lines: Iterable[tuple[int, str]], source: str) -> None:
        for lineno, text in lines:
            self.feed(lineno, text, source)

    def feed(self, lineno: int, text: str, source: str) -> None:
        """Read one line (without its newline)."""
        self.lines += 1
        self.lineno += 1
        if "\x1b" in text or "\x08" in text:
            text = clean_terminal(text)
        if self._wrap is not None and self._wrap_continues(lineno, text, source):
            return
        if self._not_content(lineno, text, source):
            return
        if "[" in text:
            text = strip_annotations(text)
            if not text.strip():
                return
        if self.keep_console:
            self._keeper.add(source, lineno, text)
        if self._reprint_next:
            self._reprint_next = False
            return  # the best iteration's record printed again (:data:`_BEST_REPRINT`): no new point
        if _BEST_REPRINT.search(text):
            self._reprint_next = True
        c0 = text[0]
        if c0.isdigit() or c0 == "[":
            self._timestamp(text)
        self._launch_check(lineno, text, source)
        if "\r" in text:
            parts = [seg for seg in text.split("\r") if seg.strip()]
        else:
            parts = [text]
        if parts and self.infer and "━" in parts[-1] and _RICH_BAR.search(parts[-1]):
            self._wrap = parts.pop()  # read with the lines its metric column wraps onto
        for i, seg in enumerate(parts):
            self._segment(seg, parts[i + 1] if i + 1 < len(parts) else self._wrap)

    def _not_content(self, lineno: int, text: str, source: str) -> bool:
        """A blank line (ends the current block), a ``# `` annotation or an elision mark
        (``[...]``, kept in the console): True, the line holds no log content."""
        if not text or text.isspace():
            self.block = None
            if self.keep_console:
                self._keeper.add(source, lineno, "")
            return True
        if text[0] == "#" and text.startswith("# "):
            return True  # an annotation, not log content
        if ELISION_LINE.match(text):
            if self.keep_console:
                self._keeper.add(source, lineno, text.strip())
            return True
        return False

    def _wrap_continues(self, lineno: int, text: str, source: str) -> bool:
        """Decide whether a line continues the pending rich bar (its metric column wrapped onto
        an indented line): adds it and returns True; otherwise reads the pending bar
        (:meth:`_flush_wrap`) and returns False."""
        wrap = self._wrap
        if wrap is not None and text.startswith(_WRAP_INDENT) and text.strip() and "\r" not in text:
            self._wrap = wrap + " " + text.strip()  # the bar's metric column, wrapped by rich
            if self.keep_console:
                self._keeper.add(source, lineno, text)
            return True
        self._flush_wrap()
        return False

    def _timestamp(self, text: str) -> None:
        """The wall time of a line that starts with an ISO timestamp (``2024-05-01 12:00:03,123``,
        ``[2024-05-01T12:00:03]``): sets :attr:`wall` (NaN when it does not parse) and
        :attr:`first_wall`; a timestamp equal to the last one is not parsed again."""
        m = _TS.match(text)
        if m:
            ts = m["ts"]
            if ts != self._ts_text:
                self._ts_text = ts
                try:
                    self.wall = datetime.fromisoformat(ts.replace(",", ".")).timestamp()
                except ValueError:
                    self.wall = math.nan
                if self.first_wall is None and not math.isnan(self.wall):
                    self.first_wall = self.wall

    def _flush_wrap(self) -> None:
        """Read the pending rich bar (with its wrapped metric column) as a tqdm bar would be read:
        ``Epoch 3/9 ━━╺━━ 5/16 0:00:01 • 0:00:02 15.6it/s v_num: 1.000 loss: 0.5`` becomes
        ``Epoch 3/9: |━| 5/16 [0:00:01<?, 15.6it/s, v_num=1.000, loss=0.5]``: the position gives the
        step (epoch x bar length + position), the ``name: value`` pairs after the rate the figures."""
        text, self._wrap = self._wrap, None
        if text is None:
            return
        m = _RICH_BAR.search(text)
        if m is None:
            self._segment(text)
            return
        post = ", ".join(f"{k}={v}" for k, v in _RICH_PAIR.findall(m["post"] or ""))
        rate = f", {m['rate']}{m['unit']}" if m["rate"] else ", ?it/s"
        pct = 100 * int(m["n"]) // max(int(m["m"]), 1)
        self._segment(
            f"{m['desc'].strip()}: {pct}%|#| {m['n']}/{m['m']} [{m['el']}<?{rate}"
            f"{', ' + post if post else ''}]"
        )

    # --- appended launches ----------------------------------------------------------------------
    def _launch_check(self, lineno: int, text: str, source: str) -> None:
        """Find launches appended to one log: the log's first two message lines (timestamps and
        logger prefixes removed) appearing again, one after the other, start a new launch.

        One line alone is not enough (a message printed every epoch could open a log); two
        lines in the same order are what a job prints at start-up. When the log's first message
        line comes again as its second, the first launch printed that line only: a second launch
        starts there and the signature is its first two lines (own corpus f17b1-05: ``START train.py``
        twice, then nine launches of ``START train.py`` / ``Load train df``). Marks where each launch
        begins (line, timestamp, kept points per series) in :attr:`launches`. Once the first two
        lines are known, only a line holding the first line's tail (or the line after a candidate)
        is looked at.
        """
        if not (
            self._launch_tail is None
            or self._launch_tail in text
            or self._launch_pending is not None
        ):
            return
        if self._launch_skips_warning(text):
            return
        msg = _launch_text(text)
        if msg is None:
            return
        if self._launch_sig is None:  # collecting the log's first two message lines
            if (
                self._launch_first
                and msg == self._launch_first[0]
                and _launch_line(msg)
                and not self.started  # a table header reprinted after records is no launch
            ):
                # the first message line again at once: the first launch printed only that line and a
                # second launch starts here; the signature is this launch's first two lines
                gen, counts = self._store.mark()
                self._launch_pending = Launch(lineno, source, self.wall, gen, counts)
                return
            self._launch_first.append(msg)
            if len(self._launch_first) == 2:
                self._launch_sig = tuple(self._launch_first)
                self._launch_source = source
                first = self._launch_sig[0]
                self._launch_tail = first[-24:] if _launch_line(first) else "\x00never\x00"
                if self._launch_pending is not None:
                    self.launches.append(self._launch_pending)
                    self._launch_pending = None
                    self._new_launch()
            return
        if self._launch_pending is not None:
            pend, self._launch_pending = self._launch_pending, None
            if msg == self._launch_sig[1]:
                if len(self.launches) >= MAX_LAUNCHES:
                    self.launches_dropped += 1
                    self.launches[-1] = pend  # the last launch's start is what matters
                else:
                    self.launches.append(pend)
                self._new_launch()
                return
        if source == self._launch_source and msg == self._launch_sig[0]:
            gen, counts = self._store.mark()
            self._launch_pending = Launch(lineno, source, self.wall, gen, counts)

    def _launch_skips_warning(self, text: str) -> bool:
        """Whether a line is a Python warning or the indented source line printed under one
        (:data:`_PY_WARNING`): neither is start-up output, as the warning comes back whenever its
        code runs again."""
        if _PY_WARNING.search(text):
            self._launch_warned = True
            return True
        warned, self._launch_warned = self._launch_warned, False
        return warned and text[:1] in " \t"

    def _new_launch(self) -> None:
        """A new process started writing: forget the step state, the plan and the start-up
        configuration of the launch before (its points stay in the store, marked)."""
        self._flush_pending()
        self.started = False
        self.step = self.epoch = self.spe = self.epoch_header = self.header_split = None
        self.block = self.section = self.train_bar = self.bar_n = self._bar_point = None
        self._first_epoch = None
        self._train_bar_moved = False
        self._bar_last, self._bar_line, self._bar_restarts, self._bar_partial = -1, -10, 0, False
        self._bar_draw = None
        self.seq_steps = False
        self._hf_k, self._hf_rate, self._hf_epoch, self._hf_done, self._hf_mode = (
            0,
            0.0,
            0.0,
            False,
            False,
        )
        self.facts.clear()
        self.params.clear()
        self._summary.clear()
        # a point equal to the last one is a redraw only within a launch: a launch that prints the same
        # figure at the same step (a deterministic rerun) printed its own point
        self._last_step[:] = [-(2**62)] * len(self._last_step)

    @property
    def console(self) -> list[ConsoleLine]:
        """The console lines kept so far, in log order."""
        return self._keeper.lines()

    # --- one segment (a line, or one carriage-return part of it) --------------------------------
    def _segment(self, seg: str, nxt: str | None = None) -> None:
        """Read one part of a line; ``nxt`` is the part drawn after it on the same line (a
        carriage return in between), if any: a part redrawn with the same template is superseded
        and only the figures of the last state are read by the generic and template readers.

        The steps: detectron2 tables, progress bars (:meth:`_segment_bars`), the catalogue
        (:meth:`_segment_catalog`), then the generic, table and template readers."""
        if len(seg) > MAX_PARSE_CHARS:
            return
        seg = _unbracketed(seg)
        if self._config_dump:
            if _YAML_LINE.match(seg) and _RECORD_START.match(seg) is None:
                self._startup_params(seg)
                return  # a setting of the dump, never a record (detectron2's SCORE_THRESH_TEST: 0.05)
            self._config_dump = False
        if _CONFIG_OPEN.search(seg):
            self._config_dump = True
        raw = seg
        if ("copypaste: " in seg or seg.lstrip().startswith("|")) and self._d2_table(seg):
            return
        if "Evaluation results for " in seg:
            m = _D2_TASK.search(seg)
            if m:
                self._d2_task = m["task"]
        line_step = None
        if "%|" in seg:
            seg, line_step = self._segment_bars(seg)
            if not seg.strip():
                return
        if nxt is not None and self.infer and superseded(raw, nxt):
            return  # a bar state drawn over by the next one: only the last state is read
        if self._segment_catalog(seg, line_step):
            return
        if self.block is not None and seg[:1] not in " \t":
            self.block = None
        if _EXC_LINE.match(seg):
            return
        if not self.infer:
            self._generic(seg, line_step)
            return
        if (
            not self._generic(seg, line_step)
            and not self._table_line(seg)
            and _DIGIT.search(seg) is not None
        ):
            self._infer(seg, line_step)

    def _segment_bars(self, seg: str) -> tuple[str, int | None]:
        """Read the progress bars of a part of a line (:meth:`_progress`, at most four per bar
        format) and blank them with the description before each, and any other bar; returns the
        rest of the part and the step the last training bar gave (None without one)."""
        line_step = None
        for c in self._progress_fmts:
            m = c.rx.search(seg)
            guard = 0
            while m and guard < 4:
                guard += 1
                start = m.start()
                dm = _DESC_BEFORE.search(seg, max(0, start - 80), start) if start else None
                if dm is not None and self._fits_table(seg[:start]):
                    dm = None  # a table row drawn as the bar's description (YOLOv5/v7) is kept
                desc = dm["desc"] if dm else ""
                lead = _SPLIT_PREFIX.sub("", seg[:start].strip())
                if lead and _NOT_TRAINING_DESC.match(lead):
                    desc = lead[
                        :80
                    ]  # a data bar whose long description ends past _DESC_BEFORE's reach
                got = self._progress(c, m, desc)
                if got is not None:
                    line_step = got
                seg = seg[: dm.start() if dm else start] + " " + seg[m.end() :]
                m = c.rx.search(seg)
        if "%|" in seg:
            seg = _OTHER_BAR.sub(" ", seg)
        return seg, line_step

    def _segment_catalog(self, seg: str, line_step: int | None) -> bool:
        """Decide which catalogued format reads a part of a line: the first whose block, hints and
        exclusions admit it and whose pattern matches (an anchored one also on the message
        without its log prefix); reads it as an ignored line, a header or a record and returns
        True, or False when no format matched."""
        block = self.block
        msg: str | None = (
            None  # the message without the log prefix, for entries anchored at its start
        )
        for c, hints, excludes, needs_block, kind, fid in self._dispatch:
            if needs_block is not None and needs_block != block:
                continue
            for h in hints:
                if h in seg:
                    break
            else:
                if hints:
                    continue
            if excludes and any(x in seg for x in excludes):
                continue
            if fid == "hf-dict" and _WORD_VALUE.search(seg):
                continue  # a parameter set printed as a dict, not a Trainer log (see _WORD_VALUE)
            m = c.rx.search(seg)
            if m is None and c.anchored:
                # a layout printed through a logger (``[time name] (main.py 268): INFO  * Acc@1 ...``)
                if msg is None:
                    msg = strip_log_prefix(seg)
                if msg != seg.lstrip():
                    m = c.rx.search(msg)
                    if m is not None:
                        seg = msg
            if m is None:
                continue
            self.formats[fid] += 1
            if kind == "ignore":
                self._ignored_line(fid, m)
            elif kind == "header":
                self._header(c, m)
            else:
                self._record(c, m, seg, line_step)
            return True
        return False

    def _ignored_line(self, fid: str, m: re.Match) -> None:
        """A catalogued line read for no figure; a learning-rate change message still counts the
        changes and the last rate changed to (``lr_changes``, ``lr_changed_to``)."""
        if fid == "lr-change":
            self.facts["lr_changes"] = self.facts.get("lr_changes", 0.0) + 1
            to = _num(m["to"]) if m["to"] else None
            if to is not None:
                self.facts["lr_changed_to"] = to

    def _table_line(self, seg: str) -> bool:
        """A table printed in the log: a header row of names (tab-, comma- or 2+-space-separated,
        ``step<TAB>loss``) sets the columns; each following row of as many numbers is a record
        (a ``step``/``iter``/``epoch`` column gives its step, else the row count). Cells may carry
        a unit (``3.36s``, ``11.8G``) or be a position ``n/total`` (read as ``n``); a trailing
        colon (a progress bar's description separator) is not part of the line.

        A 2+-space-aligned header of 3+ columns is remembered after other lines end it: a row
        printed later with as many cells is one of its records, wherever it occurs (YOLOv5/v7
        print their per-epoch row as a progress bar's description and the validation row after
        the next epoch's header). A row whose first cell is an aggregate label (``all``, ``mean``)
        and whose other cells are numbers is the table's evaluation figure (``val/`` names) at the
        step of the last table row; rows with other labels (per-class breakdowns) are not read.
        Returns True when the line was a header or a row."""
        sep = "\t" if "\t" in seg else "," if "," in seg else None
        text = seg.strip()
        if sep is None and text.endswith(":") and not text.endswith("::"):
            text = text[:-1].rstrip()
        cells = [c.strip() for c in (seg.split(sep) if sep else _WIDE_GAP.split(text))]
        if self._current_table_row(cells, sep):
            return True
        if self._table is not None and _RULE_LINE.match(seg):
            return True  # the rule under a header: its rows follow
        self._table = None
        if (
            2 <= len(cells) <= 40
            and all(_HEADER_CELL.match(c) for c in cells)
            and not any(_PAIR_CELL.match(c) for c in cells)
            and (sep is not None or "  " in text)
        ):
            self._table = (cells, sep)
            if sep is None and len(cells) >= 3:
                self._tables[len(cells)] = cells
                spans = [m.span() for m in _HEADER_SPAN.finditer(seg)]
                if len(spans) == len(cells):
                    self._table_spans[len(cells)] = spans
            return True
        names = self._tables.get(len(cells)) if sep is None else None
        if names is not None:
            return self._remembered_table_row(names, cells)
        return sep is None and self._aligned_table_row(seg)

    def _current_table_row(self, cells: list[str], sep: str | None) -> bool:
        """A row of numbers of the table whose header came just before: recorded, True."""
        table = self._table
        if table is None or sep != table[1] or len(cells) != len(table[0]):
            return False
        vals = [_cell_num(c) for c in cells]
        if any(v is None for v in vals):
            return False
        self._table_record(table[0], vals)  # type: ignore[arg-type]
        return True

    def _remembered_table_row(self, names: list[str], cells: list[str]) -> bool:
        """A row as wide as a remembered header ``names`` (:meth:`_table_line`): numbers are a
        record, an aggregate label's numbers the table's evaluation figure; True when the row
        belongs to the table (a per-class row is the table's too, and not read)."""
        label = None if _cell_num(cells[0]) is not None else cells[0].lower()
        if label is not None and label not in _AGGREGATE_ROW:
            return all(_cell_num(c) is not None for c in cells[1:])
        vals = [_cell_num(c) for c in cells[1:]] if label else [_cell_num(c) for c in cells]
        if any(v is None for v in vals):
            return False
        if label:
            self._table_record(names[1:], vals, prefix="val/", step=self._table_step)  # type: ignore[arg-type]
        else:
            self._table_record(names, vals)  # type: ignore[arg-type]
        return True

    def _aligned_table_row(self, seg: str) -> bool:
        """A row of a fixed-width table whose columns are one space apart (``%7d %7.4f``): as many
        numbers as a remembered 2+-space-aligned header has cells, each within its cell's column
        (between the ends of the cells either side), is a record of that header. Marks printed
        after the last number (``★``, ``*`` at a new best) are not cells. True when recorded."""
        toks = [m for m in re.finditer(r"\S+", seg)]
        while toks and not any(ch.isalnum() for ch in toks[-1][0]):
            toks.pop()
        spans = self._table_spans.get(len(toks))
        if spans is None:
            return False
        vals = [_cell_num(t[0]) for t in toks]
        if any(v is None for v in vals):
            return False
        for i, t in enumerate(toks):
            lo = spans[i - 1][1] if i else 0
            hi = spans[i + 1][0] if i + 1 < len(spans) else len(seg) + 1
            if t.start() < lo or t.end() > hi:
                return False
        self._table_record(self._tables[len(toks)], vals)  # type: ignore[arg-type]
        return True

    def _fits_table(self, text: str) -> bool:
        """Whether ``text`` (a trailing colon aside) is a row of numbers as wide as a remembered
        2+-space-aligned table header (:meth:`_table_line`)."""
        text = text.strip()
        if text.endswith(":"):
            text = text[:-1].rstrip()
        cells = _WIDE_GAP.split(text)
        return (
            len(cells) in self._tables
            and "\t" not in text
            and all(_cell_num(c) is not None for c in cells)
        )

    def _table_record(
        self, names: list[str], vals: list[float], prefix: str = "train/", step: int | None = None
    ) -> None:
        rec: dict[str, float] = {}
        epoch = None
        for name, v in zip(names, vals):
            mk = _MARKERS.get(name.lower().replace(" ", "_"))
            if mk == "@step":
                step = int(v)
            elif mk == "@epoch":
                epoch = v
            elif mk is None:
                key, unit = canonical(name, prefix)
                rec[key] = _convert(key, v, unit)
        if not rec:
            return
        self._table_rows += 1
        if step is None:
            step = (
                int(epoch) if epoch is not None and float(epoch).is_integer() else self._table_rows
            )
        self._table_step = step
        self.started = True
        self.formats["table"] += 1
        if epoch is not None:
            rec.setdefault("train/epoch", epoch)
        if self.step is None or step > self.step:
            self.step = step
        self._emit_all(rec, step, epoch)

    # --- structure inference (templates learnt from the log itself) ------------------------------
    def _infer(self, seg: str, line_step: int | None) -> None:
        msg = seg.strip() if _BRACKET_COUNTER.match(seg) else strip_log_prefix(seg)
        if not msg or len(msg) > MAX_TEMPLATE_CHARS:
            return
        ctx = (line_step, self.step, self.epoch_header, self.seq)
        got = self._miner.add(msg, ctx, veto=_is_failure)
        for inf in got:
            self._emit_inferred(inf)

    def _emit_inferred(self, inf: Inferred) -> None:
        """Emit a record the template reader inferred: the plan it names, its split prefix
        (:func:`_inferred_prefix`), its figures (:meth:`_inferred_values`,
        :meth:`_inferred_record`) at the step :meth:`_inferred_step` decides."""
        line_step, ctx_step, header, _seq = inf.context
        if inf.epochs and inf.epochs > 0:
            self.facts["epochs"] = inf.epochs
        if inf.total_steps and inf.total_steps > 0:
            self.facts.setdefault("total_steps", inf.total_steps)
        default = _inferred_prefix(inf)
        values = _inferred_values(inf, default, ctx_step, line_step)
        if values is None:
            return
        rec = self._inferred_record(inf, values, default)
        if not rec:
            return
        self.formats["inferred"] += 1
        step, epoch = inf.step, inf.epoch
        if step is None:
            step = line_step
        if step is None:
            step = self._inferred_step(inf, epoch, header, ctx_step)
        if len(self._inf_last) < 4 * MAX_TEMPLATE_CHARS:
            self._inf_last[inf.key] = step
        self.started = True
        if epoch is not None:
            rec.setdefault("train/epoch", epoch)
        if self.step is None or step > self.step:
            self.step = step
        self._emit_all(rec, step, epoch)

    def _inferred_record(
        self, inf: Inferred, values: dict[str, float], default: str
    ) -> dict[str, float]:
        """The figures of an inferred record under their canonical names (``default``: the split
        prefix; ``Acc@k`` in percent, as the catalogue reads it); plan keys (``epochs``) set the
        plan instead."""
        rec: dict[str, float] = {}
        for raw, v in values.items():
            lk = raw.lower().replace(" ", "_")
            plan = _PLAN_KEYS.get(lk)
            if plan is not None:
                if v > 0:
                    self.facts.setdefault(plan, v)
                continue
            name, name_unit = canonical(raw, default)
            if name_unit is None and _AT_K.match(raw):
                name_unit = "%"  # as the catalogue's ImageNet-lineage entries read ``Acc@1``
            rec.setdefault(name, _convert(name, v, inf.units.get(raw) or name_unit))
        return rec

    def _inferred_step(
        self, inf: Inferred, epoch: float | None, header: float | None, ctx_step: int | None
    ) -> int:
        """The step of an inferred record that printed none: n of an epoch's total, the passes
        before plus n (:meth:`_inferred_pass_step`), the epoch times the steps per epoch, the
        whole epoch (an epoch axis), else the step of the line before or the next record
        (:meth:`_inferred_next_step`)."""
        e = epoch if epoch is not None else header
        if (
            epoch is not None
            and not self.spe
            and self.facts.get("total_steps")
            and self.facts.get("epochs")
        ):
            # a fractional epoch with the plan known (planned steps / planned epochs), as
            # _resolve_step does for the catalogue's records
            self.spe = self.facts["total_steps"] / self.facts["epochs"]
        if epoch is not None and not float(epoch).is_integer():
            self._frac_epochs = True  # the log counts fractional epochs: not an epoch axis
        whole = e is not None and float(e).is_integer() and not self._frac_epochs
        if inf.pos is not None and inf.pos[1] > 0 and whole and not inf.counted:
            return int(e) * inf.pos[1] + inf.pos[0]  # type: ignore[arg-type]  # n of an epoch's total
        if inf.pos is not None and inf.pos[1] > 0:
            return self._inferred_pass_step(inf.key, inf.pos)
        if e is not None and self.spe:
            return round(e * self.spe)
        if whole:
            self.params.setdefault("log.step_axis", "epoch")
            return int(e)  # type: ignore[arg-type]
        return self._inferred_next_step(inf, ctx_step)

    def _inferred_pass_step(self, key: str, pos: tuple[int, int]) -> int:
        """The step of an ``n/total`` position that starts over (one pass per epoch): the passes
        before times the total, plus n."""
        n, total = pos
        base, last_n = self._inf_pos.get(key, (0, -1))
        if n < last_n:
            base += total
        if len(self._inf_pos) < 4 * MAX_TEMPLATE_CHARS:
            self._inf_pos[key] = (base, n)
        return base + n

    def _inferred_next_step(self, inf: Inferred, ctx_step: int | None) -> int:
        """The step of the line before (a bar, a header, a record with a step) when this layout
        has not been read at it yet; else the next one after this layout's last (the step axis
        then counts records)."""
        last = self._inf_last.get(inf.key)
        if ctx_step is not None and (last is None or ctx_step > last):
            return ctx_step
        self.params.setdefault("log.step_axis", "record")
        return inf.ordinal if last is None else max(last + 1, inf.ordinal)

    # --- formats ---------------------------------------------------------------------------------
    def _progress(self, c: _Compiled, m: re.Match, desc: str) -> int | None:
        """Read a progress bar: returns the step of the training bar (an evaluation or data bar, or
        a bar other than the training one, gives None); the step is the epoch in its description
        times its total plus its position, else :meth:`_bar_pass_step`'s; its postfix figures
        (:meth:`_bar_postfix`) and its rate (throughput) are points at that step."""
        desc = desc.strip()
        n, total = int(m["batch"]), int(m["total"])
        if _EVAL_DESC.search(desc):
            return None
        unit = m["rate_unit"]
        if (desc and _NOT_TRAINING_DESC.match(desc)) or (unit and unit.lower() in _DATA_RATE_UNITS):
            self.formats["tqdm-not-training"] += 1
            return None
        em = _EPOCH_DESC.search(desc)
        ident = (re.sub(r"\d+", "#", desc), None if em else total)
        if self.train_bar is None or (ident != self.train_bar and not self._train_bar_moved and em):
            # the first bar, or an 'Epoch N' bar after a bar that never left 0 (Lightning 1.x draws
            # 'Training: 0/18' and renames the same bar 'Epoch 0' as it starts)
            self.train_bar = ident
        if ident != self.train_bar:
            return None
        if n > 0:
            self._train_bar_moved = True
        self.formats[c.fmt.id] += 1
        self.started = True
        if em:
            epoch = int(em[1])
            step = epoch * total + n
            self.epoch = epoch
            self.facts.setdefault("steps_per_epoch", float(total))
        else:
            step = self._bar_pass_step(m, n, total)
        rec, step = self._bar_postfix(c, m["postfix"], step)
        self._flush_pending(step)
        if n == self.bar_n and not rec:
            self.step = step  # the same position, maybe of the next pass (a restarted bar)
            return step
        if (
            n == self.bar_n
            and self._bar_point
            and step <= self._bar_point[0]
            and rec.keys() & self._bar_point[1]
        ):
            # a series the bar's last point already has, new again at an unmoved position: tqdm
            # writes its position back only every `mininterval` (0.1 s) while `set_postfix`
            # redraws the bar on each call, so a loop calling it once per step draws several
            # steps' losses at one stale position (tests/data/newuser9/pt_tqdm_epoch_bars.log: 10
            # losses at '0/16'); each is the next step. Other series at the same position (a
            # validation figure Lightning adds at the epoch's end) stay at its step.
            step = self._bar_point[0] + 1
        self.bar_n = n
        rate = _num(m["rate"]) if m["rate"] else None
        if rate is not None:
            rec["perf/throughput"] = _convert("perf/throughput", rate, m["rate_unit"])
        self.step = step
        if rec:
            self._bar_point = (step, frozenset(rec))
        self._emit_all(rec, step, None)
        return step

    def _bar_pass_step(self, m: re.Match, n: int, total: int) -> int:
        """The step of a training bar with no epoch in its description: the passes before
        (restarts counted here) times the bar's total, plus its position; a bar that never started
        over gives the planned total steps.

        The bar started over (one bar per epoch) when its position went back, or when a finished
        bar is drawn finished again on a later line (a log that kept only each bar's final state,
        as W&B's output.log of a terminal session does; tqdm's closing redraw of a finished bar is
        on the bar's own line, after a carriage return); but not when a finished draw is repeated
        with the same rate after the bar was seen part-way: that is tqdm.write at work (the Hugging
        Face Trainer's eval and summary dicts clear the bar and draw it again after each message;
        tqdm's smoothed rate only changes on an update, while the elapsed time goes on ticking:
        00:57 then 00:58 at 3.19s/it on a loaded machine). Passes of a real loop end at different
        rates (W&B output.log of realworld wb01: 20.67it/s, 20.75it/s, 20.72it/s ...)."""
        draw = (m["rate"], m["rate_unit"], m["postfix"])
        again = (
            n == self._bar_last == total
            and self.lineno > self._bar_line + 1
            and not (self._bar_partial and draw == self._bar_draw)
        )
        if n < total:
            self._bar_partial = True
        self._bar_draw = draw
        relaunch = n < self._bar_last < total and self.formats["hf-dict"] > 0
        if (n < self._bar_last or again) and not relaunch:
            self._bar_restarts += 1
            self.facts.pop("total_steps", None)
            self.facts.setdefault("steps_per_epoch", float(total))
        # A Hugging Face Trainer draws one bar over the whole run (its total is max_steps): when it
        # goes back before its end, a new launch started (a resume, whose bar then jumps to the
        # checkpoint's global step, or a rerun), not the next epoch
        # (tests/data/newuser9/hf_resumed_console.log)
        self._bar_last = n
        self._bar_line = self.lineno
        if not self._bar_restarts:
            self.facts["total_steps"] = float(total)
        return self._bar_restarts * total + n

    def _bar_postfix(
        self, c: _Compiled, post: str | None, step: int
    ) -> tuple[dict[str, float], int]:
        """``(record, step)`` from a training bar's postfix (``loss=0.52, lr=1e-4``): the figures
        that changed since the last draw (a bar redraws stale values), a step it names; Lightning
        1.x's running mean ``loss`` beside the logged ``train_loss_step`` is kept apart as
        ``train/loss_running``."""
        rec: dict[str, float] = {}
        if post:
            running = "loss_step=" in post
            assert c.pairs is not None  # a bar with a postfix is a format with pairs
            for pm in c.pairs.finditer(post):
                target = self._pair_target(c.fmt, pm["k"].strip())
                if running and target == "train/loss" and pm["k"].strip() == "loss":
                    target = "train/loss_running"
                v = _num(pm["v"])
                if v is None or target == "@skip":
                    continue
                if target == "@step":
                    step = int(v)
                elif target[0] != "@" and not self._repeats(target, v):
                    rec[target] = v  # a bar redraws stale postfix values: only changes are points
        return rec, step

    def _header(self, c: _Compiled, m: re.Match) -> None:
        fmt = c.fmt
        gd = m.groupdict()
        for g, target in c.fields.items():
            v = gd.get(g)
            if v is None:
                continue
            if target == "@epoch":
                self.epoch = float(v)
            elif target == "@epochs":
                self.facts["epochs"] = float(v)
            elif target == "@section":
                self.section = v.lower()
        if fmt.block:
            self.block = fmt.block

    def _pair_target(self, fmt: LogFormat, key: str, prefix: str | None = None) -> str:
        lk = key.lower()
        t = fmt.rename.get(lk)
        if t is not None:
            return (prefix or fmt.prefix) + t[2:] if t.startswith("~/") else t
        if fmt.pair_name:
            return fmt.pair_name.format(re.sub(r"[^a-z0-9]+", "_", lk).strip("_"))
        mk = _MARKERS.get(lk.replace(" ", "_"))
        if mk is not None:
            return mk
        return canonical(key, prefix or fmt.prefix)[0]

    def _record(self, c: _Compiled, m: re.Match, seg: str, line_step: int | None) -> None:
        """Read one line a catalogued format matched: its named fields
        (:meth:`_record_fields`), its name/value pairs (:meth:`_record_pairs`,
        :meth:`_record_pair_values`), the format's constants and ratios; then keep it as a summary
        (:meth:`_record_summary`) or place it at its step (:meth:`_record_place`)."""
        fmt = c.fmt
        gd = m.groupdict()
        rec: dict[str, float] = {}
        prefix, step, epoch, batch, total, span = self._record_fields(c, gd, rec)
        if fmt.block == "hf-metrics" and self.section:
            prefix = "val/" if self.section in ("eval", "validation") else f"{self.section}/"
        pairs = _record_pairs(c, m, seg, gd)
        if prefix == "train/" and len(pairs) > 1:
            prefix = _eval_record_prefix([k for k, _, _ in pairs]) or prefix
        step, epoch, batch = self._record_pair_values(fmt, pairs, prefix, rec, step, epoch, batch)
        events = tuple(fmt.const)
        _record_constants(fmt, gd, rec)
        if fmt.kind == "summary":
            self._record_summary(fmt, rec)
            return
        end = total if total is not None else span
        if fmt.final_batch_only and batch is not None and end is not None and batch != end:
            return
        if not rec and epoch is None and step is None:
            return
        if fmt.step == "epoch" and "perf/step_time" in rec and (end or 0) > 1:
            # one point per epoch: its step time is the epoch's mean over ``end`` batches
            self.params["log.step_time_over"] = "epoch"
        self._record_place(fmt, rec, step, epoch, batch, total or span, line_step, events, prefix)

    def _record_fields(
        self, c: _Compiled, gd: dict[str, Any], rec: dict[str, float]
    ) -> tuple[str, int | None, float | None, int | None, int | None, int | None]:
        """``(prefix, step, epoch, batch, total, span)`` from a format's named fields: ``@section``
        gives the split prefix, ``@step`` / ``@epoch`` / ``@batch`` / ``@total`` / ``@span`` the
        position (``@total`` and ``@total_steps`` also the plan); every other field is a figure
        added to ``rec`` in its unit."""
        fmt = c.fmt
        prefix = fmt.prefix
        step = epoch = batch = total = span = None
        for g, target in c.fields.items():
            raw = gd.get(g)
            if raw is None:
                continue
            if target == "@section":
                prefix = _section_prefix(raw)
                continue
            v = _num(raw)
            if v is None:
                continue
            if target[0] != "@":
                rec[target] = _convert(target, v, gd.get(g + "_unit") or fmt.units.get(g))
            elif target == "@step":
                step = int(v)
            elif target == "@epoch":
                epoch = v
            elif target == "@batch":
                batch = int(v)
            elif target == "@total":
                total = int(v)
                self.facts["steps_per_epoch"] = float(total)
            elif target == "@span":
                span = int(v)
            elif target == "@total_steps":
                self.facts["total_steps"] = v
        return prefix, step, epoch, batch, total, span

    def _record_pair_values(
        self,
        fmt: LogFormat,
        pairs: list[tuple[str, str, str | None]],
        prefix: str,
        rec: dict[str, float],
        step: int | None,
        epoch: float | None,
        batch: int | None,
    ) -> tuple[int | None, float | None, int | None]:
        """Add a catalogued line's name/value pairs to ``rec`` under the names the format (or the
        vocabulary) gives them (cached per format, name and prefix); pairs naming the step, epoch
        or batch set the position, returned as ``(step, epoch, batch)``."""
        targets = self._targets
        for key, raw, unit in pairs:
            tk = (fmt.id, key, prefix)
            cached = targets.get(tk)
            if cached is None:
                k = key.strip()
                cached = targets[tk] = (
                    self._pair_target(fmt, k, prefix),
                    fmt.units.get(k.lower()) or fmt.units.get("*") or canonical(k, prefix)[1],
                )
            target = cached[0]
            if target == "@skip":
                continue
            try:
                v = float(
                    raw[:-2] if raw.endswith((".0",)) and raw[:-2].lstrip("+-").isalpha() else raw
                )
            except ValueError:
                continue
            if target[0] == "@":
                if target == "@step":
                    step = int(v)
                elif target == "@epoch":
                    epoch = v
                elif target == "@batch":
                    batch = int(v)
                continue
            u = unit or cached[1]
            if target not in rec:
                rec[target] = _convert(target, v, u) if u else v
        return step, epoch, batch

    def _record_summary(self, fmt: LogFormat, rec: dict[str, float]) -> None:
        """Keep a summary line's figures as summary values (a key/value table row goes to the open
        table first); a Hugging Face train summary closes the Trainer's numbered dicts."""
        if fmt.id == "table-row":
            self._kv_row(rec)
        for k, v in rec.items():
            self._summary[k] = (v, self.wall)
        if fmt.id == "hf-train-summary" and self._hf_k:
            self._hf_done = True  # Trainer.train() ended; a later dict belongs to the next training

    def _record_place(
        self,
        fmt: LogFormat,
        rec: dict[str, float],
        step: int | None,
        epoch: float | None,
        batch: int | None,
        total: int | None,
        line_step: int | None,
        events: tuple[str, ...],
        prefix: str,
    ) -> None:
        """Place a catalogued record at its step: a Hugging Face dict with no step of its own is
        numbered (:meth:`_hf_ordinal`) or, written through the training bar, held until the bar's
        next draw (:meth:`_flush_pending`); every other record goes out at :meth:`_resolve_step`'s
        step."""
        explicit = step is not None or line_step is not None
        own_step = step is not None
        ordinal = False
        if (
            fmt.id == "hf-dict"
            and not explicit
            and (self.step is None or self._hf_mode)
            and not self.spe
            and not (self.facts.get("total_steps") and self.facts.get("epochs"))
        ):
            step, ordinal = self._hf_ordinal(rec, epoch), True
        step = self._resolve_step(fmt, step, epoch, batch, total, line_step)
        if not fmt.const:
            self.started = True
        self._flush_pending()
        if (
            fmt.id == "hf-dict"
            and not own_step
            and not ordinal
            and not self.spe
            and self.train_bar is not None
        ):
            # a Trainer dict written through the bar (tqdm.write): the bar drawn before it on the
            # line may lag (tqdm redraws at most every 0.1 s); the redraw right after the message
            # shows the step the dict was logged at. Held until that draw (see _flush_pending).
            self._pending = (rec, step, epoch, events, explicit, prefix, self.lineno)
            return
        self._finish_record(
            rec, step, epoch, events, explicit and not ordinal, prefix, fmt.step == "auto"
        )

    def _finish_record(self, rec, step, epoch, events, explicit, prefix, auto=True) -> None:
        if epoch is not None:
            if auto and explicit and epoch != int(epoch) and epoch > 0 and step > 0:
                self.spe = step / epoch
                self.facts["steps_per_epoch"] = float(round(self.spe))
            rec.setdefault("train/epoch", epoch)
        if prefix == "train/" and (self.step is None or step > self.step):
            self.step = step
        self._emit_all(rec, step, epoch, events)

    #: Lines after a held Trainer dict within which the training bar's redraw gives its step.
    _PENDING_LINES = 2

    def _flush_pending(self, bar_step: int | None = None) -> None:
        """Emit the held Hugging Face dict: at ``bar_step`` when the training bar is drawn again
        within :data:`_PENDING_LINES` lines at or past the step it was read at, else at that step.

        Measured on a real Trainer run (tests/data/formats/produce.py ``hf_tqdm``, 8 ms steps):
        the dicts logged at steps 5, 10 ... 30 follow bars drawn at 0, 5, 12, 15, 24, 25; the
        redraws after them read 5, 10, 15, 20, 25, 30."""
        pend = self._pending
        if pend is None:
            return
        self._pending = None
        rec, step, epoch, events, explicit, prefix, line = pend
        if bar_step is not None and self.lineno - line <= self._PENDING_LINES and bar_step >= step:
            step = bar_step
        self._finish_record(rec, step, epoch, events, explicit, prefix)

    def _hf_ordinal(self, rec: dict[str, float], epoch: float | None) -> int:
        """The step of a Hugging Face log dict printed without a progress bar or a plan
        (transformers 5 with ``disable_tqdm``, or its start-up lines not logged).

        Training dicts (``loss``/``learning_rate``) are numbered 1, 2, 3...: the step axis
        counts training log dicts (``logging_steps`` is not printed, so the global step
        cannot be told). An evaluation dict (``eval_*`` only) belongs to the training dict
        before it, or, when its ``epoch`` is past that dict's, to the training dict count
        its epoch stands for (dicts per epoch from the last training dict: consecutive
        end-of-epoch evaluations land on their own epochs). Before any training dict: 0.
        """
        train = "train/loss" in rec or "train/lr" in rec or "train/grad_norm" in rec
        self._hf_mode = (
            True  # the log's dicts are numbered from here on (a later bar does not take over)
        )
        if self._hf_done and (train or (epoch is not None and epoch < self._hf_last_epoch - 1e-9)):
            # the training before closed with its summary and this dict trains, or its epoch went back: a
            # new training starts at 1 (an evaluation at the last epoch, trainer.evaluate(), is the old one's)
            self._hf_done = False
            self._hf_k, self._hf_rate, self._hf_epoch = 0, 0.0, 0.0
        if epoch is not None:
            self._hf_last_epoch = epoch
        if train:
            self._hf_k += 1
            if epoch is not None and epoch > 0:
                self._hf_rate = self._hf_k / epoch
                self._hf_epoch = epoch
            self.params["log.step_axis"] = "train_log_dict"
            return self._hf_k
        k = self._hf_k
        if epoch is not None and self._hf_rate and epoch > self._hf_epoch * (1 + 1e-6) + 1e-9:
            k = max(k, round(epoch * self._hf_rate))
        return k

    def _resolve_step(self, fmt: LogFormat, step, epoch, batch, total, line_step) -> int:
        self.seq += 1
        if fmt.step == "epoch":
            e = epoch if epoch is not None else self.epoch
            if e is not None:
                self.epoch = e
                return int(e)
            return self.seq
        if fmt.step == "epoch_batch" and epoch is not None and batch is not None:
            span = total if total else self.facts.get("steps_per_epoch")
            if span:
                return int((epoch - fmt.epoch_base) * span + batch)
        if step is not None or line_step is not None:
            self.seq_steps = False
            self.params.pop("log.step_source", None)
            return step if step is not None else line_step
        if (
            epoch is not None
            and not self.spe
            and self.facts.get("total_steps")
            and self.facts.get("epochs")
        ):
            self.spe = (
                self.facts["total_steps"] / self.facts["epochs"]
            )  # planned steps / planned epochs
        if epoch is not None and self.spe:
            self.seq_steps = False
            self.params.pop("log.step_source", None)
            return round(epoch * self.spe)
        if self.step is not None and not getattr(self, "seq_steps", False):
            return self.step
        # no step anywhere (HF Trainer dicts printed with disable_tqdm): the record count is the
        # step, so successive records never collapse onto one step; log.step_source says so
        # (detectors/_counters.py: not an optimizer step)
        self.seq_steps = True
        self.params["log.step_source"] = "record_count"
        return self.seq

    # --- generic key/value lines ---------------------------------------------------------------
    def _generic(self, seg: str, line_step: int | None) -> bool:
        """Read generic ``key=value`` / ``key: value`` / ``| key value |`` / ``name value`` pairs and
        bare epoch / step header lines. Returns True when the line was taken (points, a summary
        value or a header), False when it is left to the template reader.

        The steps: lines that are no record (:meth:`_generic_skip`), headers
        (:meth:`_generic_header`), change messages, start-up configuration; then the pairs
        (:meth:`_generic_pairs`), the line's position (:meth:`_generic_position`), the split its
        figures belong to (:func:`_generic_prefix`), the record (:meth:`_generic_record`) and where
        it goes (:meth:`_generic_emit`)."""
        skip = self._generic_skip(seg)
        if skip is not None:
            return skip
        if self._generic_header(seg):
            return True
        if " to" in seg and self._change_message(seg):
            return True
        pairs, work, grouped = self._grouped_pairs(seg)
        if (
            not self.started
            and not grouped
            and _step_prefix(seg) is None
            and _STEP_KEY.search(seg) is None
            and not _dash_record(work)
        ):
            self._startup_params(seg)  # configuration printed before training starts
            return False
        if any(sig.category not in CONTEXT_CATEGORIES for sig, _ in match_line(seg)):
            return True  # a failure message, not metrics
        known_only = self._generic_pairs(seg, work, pairs)
        if not pairs:
            return False
        sp = _step_prefix(seg)
        step, epoch, batch = self._generic_position(seg, sp, grouped)
        default = _generic_prefix(seg, sp, pairs, work)
        if self.header_split and default == "train/" and sp is None:
            default = self.header_split  # the lines under ``Eval epoch: 4`` are that evaluation's
        rec, step, epoch, batch = self._generic_record(pairs, default, step, epoch, batch)
        if not rec:
            return False
        if _BEST_LINE.search(work) is not None and any(math.isinf(x) for x in rec.values()):
            # ``Best model found at epoch 0, Val Loss: inf, AUC: 0.00%``: a best-so-far tracker still at
            # its initial value (``best = float("inf")``): nothing was measured, none of it is a figure
            return True
        if not self.started and step is None and epoch is None and not _dash_record(work):
            self._startup_params(seg)
            return False
        return self._generic_emit(rec, work, step, epoch, batch, line_step, known_only)

    def _generic_skip(self, seg: str) -> bool | None:
        """Decide whether a line is no generic record before any pair is read: True (taken, nothing
        to read: a warning that holds a figure), False (left to the template reader: a
        ``[12]\\tname:value`` counter line, or a line with no pair shape at all), None (read on).
        A line that does not start indented ends the bare step header's block."""
        if seg[:1] not in " \t":
            self.step_header = None
        if _BRACKET_COUNTER.match(seg) or _POSSESSIVE_METRIC.match(seg):
            return False  # ``[12]\tname:value``, ``valid_0's auc: v``: left to the template reader
        if _WARNING_LINE.search(seg) is not None:
            return True  # a warning that holds a figure (``[Warning] ... best gain: -inf``), not a record
        spaced = not ("=" in seg or ": " in seg or "|" in seg)
        if spaced and _SPACE_CHEAP.search(seg) is None and not _dash_record(seg):
            return False
        return None

    def _generic_header(self, seg: str) -> bool:
        """Decide whether a line is a bare epoch header (later lines without a step belong to this
        epoch) or a bare step header (the indented lines under it are this step's record); sets the
        header, the plan it names and returns True when it is one."""
        em = (
            _EPOCH_ONLY.match(strip_log_prefix(seg))
            if ("poch" in seg or "POCH" in seg) and len(seg) < 200
            else None
        )
        if em:  # a bare epoch header: later lines without a step belong to this epoch
            self.epoch_header = float(em["n"])
            phase = (em["phase"] or "").lower()
            self.header_split = (
                _section_prefix(phase) if phase and not phase.startswith("train") else None
            )
            self.epoch = self.epoch_header
            if em["total"]:
                self.facts["epochs"] = float(em["total"])
            self.started = True
            self.formats["epoch-header"] += 1
            return True
        sm = _STEP_ONLY.match(strip_log_prefix(seg)) if len(seg) < 120 else None
        if sm:  # a bare step header: the indented lines under it are this step's record
            self.step_header = int(sm["n"])
            self.step = self.step_header
            if sm["total"]:
                self.facts.setdefault("total_steps", float(sm["total"]))
            self.started = True
            self.formats["step-header"] += 1
            return True
        return False

    @staticmethod
    def _generic_pairs(seg: str, work: str, pairs: list[tuple[str, str, str | None]]) -> bool:
        """Add to ``pairs`` the ``name=value`` / ``name: value`` / ``| name value |`` pairs of
        ``work`` (the line with its groups blanked) and the ``name value`` pairs beside them; with
        none, the vocabulary names and step/epoch markers of a spaced line (``test accuracy 0.739``,
        :func:`_known_spaced_pairs`), then figures written before their names after a colon
        (:func:`_value_first_pairs`). Returns whether only the spaced vocabulary reading found them."""
        spans = []
        for rx in (_GEN_EQ, _GEN_COLON, _GEN_PIPE):
            if (
                rx is _GEN_EQ
                and "=" not in work
                or rx is _GEN_PIPE
                and "|" not in work
                or rx is _GEN_COLON
                and ": " not in work
            ):
                continue
            for pm in rx.finditer(work):
                pairs.append((pm["k"], pm["v"], pm["u"]))
                spans.append((pm.start(), pm.end(), " " not in pm["k"].strip()))
        if pairs and _SPACE_CHEAP.search(work) is not None:
            pairs.extend(LogParser._spaced_beside(work, spans))
        if not pairs and _dash_record(work):
            pairs.extend(
                (m["k"], m["v"], None)
                for f in work.strip().split(",")
                if (m := _GEN_DASH.match(f.strip()))
            )
        known_only = False
        if not pairs:  # ``test accuracy 0.739``: only vocabulary names and step/epoch markers
            known_only = True
            pairs.extend(_known_spaced_pairs(seg))
        if ": " in seg and all(
            _MARKERS.get(_metric_words(k.strip()).lower().replace(" ", "_")) for k, _, _ in pairs
        ):
            pairs.extend(_value_first_pairs(seg))
        return known_only

    def _generic_position(
        self, seg: str, sp: re.Match | None, grouped: bool
    ) -> tuple[int | None, float | None, int | None]:
        """``(step, epoch, batch)`` of a line from its leading counter, its step/epoch/batch prefix
        ``sp`` and its ``n/M`` positions (``iter: n/M`` beside an epoch is n of the epoch's M);
        records the planned epochs a position names."""
        step: int | None = None
        epoch: float | None = None
        batch: int | None = None
        if grouped and sp is None and (lc := _LEAD_COUNTER.match(seg)) is not None:
            step = int(lc["n"])  # ``1 \tTrain(L=...) Valid(...)``: the record's counter
        if sp:
            w = sp["w"].lower()
            if w in ("epoch", "ep"):
                epoch = float(sp["n"])
                if sp["total"]:
                    self.facts["epochs"] = float(sp["total"])
            elif w == "batch":
                batch = int(sp["n"])
            else:
                step = int(sp["n"])
        in_epoch = None  # ``iter: n/M`` beside an epoch: n of the epoch's M
        if "/" in seg:
            for pm in _GEN_POS_PAIR.finditer(seg):
                w, n, m_ = pm["k"].lower(), int(pm["n"]), int(pm["m"])
                if w in ("epoch", "ep"):
                    epoch = float(n)
                    if m_ > 0:
                        self.facts["epochs"] = float(m_)
                elif m_ > 0 and (sp is None or sp["w"].lower() in ("epoch", "ep")):
                    in_epoch = (n, m_)
        if (
            in_epoch is None
            and epoch is not None
            and sp is not None
            and (bp := _BARE_POS.match(strip_log_prefix(seg), sp.end())) is not None
            and int(bp["m"]) > 0
        ):
            in_epoch = (
                int(bp["n"]),
                int(bp["m"]),
            )  # ``Epoch: [1]  [5/6]``, ``Epoch: [0][ 10/5005]``
        if in_epoch is not None:
            n, m_ = in_epoch
            if epoch is not None and float(epoch).is_integer():
                if self._first_epoch is None:
                    self._first_epoch = int(epoch)
                # epochs counted from 1 when the first printed is 1 (YOLOX), else from 0
                step = (int(epoch) - min(self._first_epoch, 1)) * m_ + n
            # without an epoch, an ``n/M`` that may start over each pass is left to the template reader
        return step, epoch, batch

    def _generic_record(
        self,
        pairs: list[tuple[str, str, str | None]],
        default: str,
        step: int | None,
        epoch: float | None,
        batch: int | None,
    ) -> tuple[dict[str, float], int | None, float | None, int | None]:
        """``(record, step, epoch, batch)`` from a line's pairs: step/epoch/batch markers set the
        position, plan keys (``epochs: 400``) set the plan, prose counts are skipped, every other
        pair is a figure under its canonical name (``default``: the split prefix of the line)."""
        rec: dict[str, float] = {}
        for key, raw, unit in pairs:
            key = _metric_words(key.strip())
            lk = key.lower().replace(" ", "_")
            v = _num(raw)
            if v is None:
                continue
            mk = _MARKERS.get(lk)
            if mk == "@step":
                step = int(v)
                continue
            if mk == "@epoch":
                epoch = v
                continue
            if mk == "@batch":
                batch = int(v)
                continue
            plan = _PLAN_KEYS.get(lk)
            if plan is not None and mk is None:  # ``epochs: 400``, ``max_steps = 5000``: the plan
                if v > 0 and "/" not in key:
                    self.facts.setdefault(plan, v)
                continue
            if mk is None and _prose_count(key, raw):
                continue
            name, name_unit = canonical(key, default)
            rec.setdefault(name, _convert(name, v, unit or name_unit))
        return rec, step, epoch, batch

    def _generic_emit(
        self,
        rec: dict[str, float],
        work: str,
        step: int | None,
        epoch: float | None,
        batch: int | None,
        line_step: int | None,
        known_only: bool,
    ) -> bool:
        """Place a generic record: left to the template reader (an ``n/total`` position and no
        step: returns False), a summary value (one figure, no position, far from the last record),
        or points at the step :meth:`_generic_step` decides (returns True)."""
        if (
            step is None
            and line_step is None
            and epoch is None
            and batch is None
            and self.infer
            and self.epoch_header is None
            and self.step_header is None
            and _POSITION.search(work) is not None
        ):
            return False  # an n/total position and no step: the template reader infers the step from it
        self.formats["generic-spaced" if known_only else "generic"] += 1
        if step is None and line_step is None and epoch is None and self.step_header is not None:
            step = self.step_header
        by_header = (
            step is None and line_step is None and epoch is None and self.epoch_header is not None
        )
        if self._generic_summary(
            rec, step is None and line_step is None and epoch is None, by_header
        ):
            return True
        self.started = True
        step_at = self._generic_step(rec, step, epoch, batch, line_step, by_header)
        if epoch is not None:
            rec.setdefault("train/epoch", epoch)
        self._advance(step_at, step is not None or line_step is not None or batch is not None)
        self._emit_all(rec, step_at, epoch)
        return True

    def _advance(self, step_at: int, own: bool) -> None:
        """Move the current position to a generic record's step ``step_at``: only forward, unless
        the line's own position (``own``: a step, a batch within an epoch) starts the counter over,
        at or below the first step placed (a second training in the same script, ``split_restarts``'
        rule); the records without a position of their own (an epoch summary) then sit there."""
        restart = own and self._first_step is not None and step_at <= self._first_step
        if self.step is None or step_at > self.step or restart:
            self.step = step_at
        if self._first_step is None or (own and step_at < self._first_step):
            self._first_step = step_at

    def _generic_summary(self, rec: dict[str, float], unplaced: bool, by_header: bool) -> bool:
        """Decide whether a generic record is a summary value, not a point: one figure with no step,
        epoch or header (``unplaced`` and not ``by_header``), printed more than
        :data:`CONTINUATION_LINES` lines after the last record. Keeps it as a summary and returns
        True when it is."""
        if (
            unplaced
            and len(rec) == 1
            and not by_header
            and self.lineno - self.last_record_line > CONTINUATION_LINES
        ):
            for k, v in rec.items():
                self._summary[k] = (v, self.wall)
            return True
        return False

    def _generic_step(
        self,
        rec: dict[str, float],
        step: int | None,
        epoch: float | None,
        batch: int | None,
        line_step: int | None,
        by_header: bool,
    ) -> int:
        """The step of a generic record with no step of its own: the bare epoch header's epoch
        (per-epoch prints, no step anywhere), the batch within the epoch, or the next record after
        the template reader's; then :meth:`_resolve_step`."""
        if (
            by_header
            and self.epoch_header is not None
            and (self.step is None or self.params.get("log.step_axis") == "epoch")
            and not self.spe
        ):
            # per-epoch prints under bare ``epoch N`` headers, no step anywhere: the epoch is the step
            step = int(self.epoch_header)
            self.params["log.step_axis"] = "epoch"
        if (
            step is None
            and line_step is None
            and batch is not None
            and not self.spe
            and self.params.get("log.step_axis", "batch") == "batch"
        ):
            step = self._batch_step(epoch if epoch is not None else self.epoch, batch)
        if (
            step is None
            and line_step is None
            and epoch is None
            and batch is None
            and self.step is not None
            and self.params.get("log.step_axis") == "record"
            and self._logged_at(rec, self.step)
        ):
            # the steps so far count the template reader's records (no step, epoch, bar or header
            # anywhere) and this record's metrics already have a point there: it is the next record
            step = self.step + 1
        return self._resolve_step(_GENERIC_FMT, step, epoch, batch, None, line_step)

    def _change_message(self, seg: str) -> bool:
        """A message that sets a vocabulary quantity to a new value (:data:`_CHANGE_TO`,
        :data:`_CHANGE_AFTER`): the new value is a point at the current step. Returns True when read."""
        m = _CHANGE_TO.search(seg) or _CHANGE_AFTER.search(seg)
        if m is None:
            return False
        words = _metric_words(m["k"].strip()).split()
        # the longest vocabulary name the words end with (``Attempted loss scale`` -> ``loss scale``)
        key = next(
            (" ".join(words[i:]) for i in range(len(words)) if is_known(" ".join(words[i:]))), ""
        )
        v = _num(m["v"])
        if v is None or not key or _MARKERS.get(key.lower().replace(" ", "_")):
            return False
        name, _ = canonical(key, "train/")
        self.formats["generic"] += 1
        self._emit_all({name: v}, self.step if self.step is not None else self.max_step, None)
        return True

    @staticmethod
    def _grouped_pairs(seg: str) -> tuple[list[tuple[str, str, str | None]], str, bool]:
        """``(pairs, rest, grouped)``: the pairs of a line's split groups (``Valid(L=0.68 | A=0.61)``
        -> ``Valid_loss``, ``Valid_acc``) and bracketed vectors (``lr=[1e-05]`` -> ``lr``;
        ``lr=[a, b]`` -> ``lr_0``, ``lr_1``), the line with those spans blanked (read no further),
        and whether a split group was read. The readers, in order: :func:`_split_group_pairs`,
        :func:`_unit_label_pairs`, :func:`_fraction_pairs`, :func:`_vector_pairs`."""
        pairs: list[tuple[str, str, str | None]] = []
        grouped = False
        if "(" in seg and ("=" in seg or ": " in seg):
            seg, grouped = _split_group_pairs(seg, pairs)
        if ")" in seg and "|" in seg and (um := _UNIT_LABEL.search(seg)) is not None:
            seg = _unit_label_pairs(seg, um, pairs)
        if "/" in seg:
            seg = _fraction_pairs(seg, pairs)
        if "[" in seg:
            seg = _vector_pairs(seg, pairs)
        return pairs, seg, grouped

    @staticmethod
    def _spaced_beside(
        seg: str, spans: list[tuple[int, int, bool]]
    ) -> list[tuple[str, str, str | None]]:
        """``name value`` runs of vocabulary names (:func:`.names.is_known`) in the parts of a line
        the ``key=value`` / ``key: value`` / ``| key value |`` pairs did not take: litgpt's
        ``iter 0 step 0: loss 0.5254, iter time: 5439.32ms`` is ``loss`` as well as ``iter time``.
        Step and epoch markers are left to the line's position prefix; a value followed by a
        word that opens no one-word pair is prose (``loss 10 times higher than lr: 0.1``)."""
        line = seg
        if spans:
            chars = list(seg)
            for a, b, _ in spans:
                chars[a:b] = " " * (b - a)
            seg = "".join(chars)
        found = list(_GEN_SPACE.finditer(seg))
        starts = {pm.start() for pm in found} | {a for a, _, one_word in spans if one_word}
        out = []
        for pm in found:
            nxt = len(line) - len(line[pm.end() :].lstrip())
            if (
                nxt < len(line)
                and line[nxt].isalpha()
                and nxt not in starts
                and _UNIT_WORD.match(line, nxt) is None
            ):
                continue
            key = _metric_words(pm["k"].strip())
            if key.lower().replace(" ", "_") not in _MARKERS and is_known(key):
                out.append((key, pm["v"], pm["u"]))
        return out

    def _batch_step(self, epoch: float | None, batch: int) -> int:
        """The step of a line that gives only a batch index (``ep: 0, batch: 20, loss: ...``),
        no step and no batches per epoch: the batch index, plus, from the second epoch on, the
        last batch index printed in each epoch before (the epoch's length as far as the log
        shows it; short by at most one logging interval per epoch)."""
        if epoch != self._be_epoch:
            if self._be_epoch is not None and epoch is not None and epoch > self._be_epoch:
                self._be_base += self._be_max
            self._be_epoch, self._be_max = epoch, 0
        self._be_max = max(self._be_max, batch)
        self.params["log.step_axis"] = "batch"
        return self._be_base + batch

    def _startup_params(self, seg: str) -> None:
        seg = strip_log_prefix(seg)
        if seg.count("=") >= 2:
            for pm in _PARAM_EQ.finditer(seg):
                self.params.setdefault(pm["k"], pm["v"].strip("'\""))
            return
        pl = _PARAM_LINE.match(seg)
        if pl:
            v = pl["v"].strip().strip("'\"")
            if v and len(v.split()) <= 4:
                k = pl["k"].strip()
                self.params.setdefault(k, v)
                plan = _PLAN_KEYS.get(k.lower().replace(" ", "_"))
                n = _num(v.replace(",", ""))
                if plan and n is not None and n > 0:
                    self.facts.setdefault(plan, n)

    # --- output --------------------------------------------------------------------------------
    def _repeats(self, name: str, value: float) -> bool:
        code = self._names.get(name)
        if code is None:
            return False
        last = self._last_value[code]
        return last == value or (last != last and value != value)  # NaN redrawn is NaN unchanged

    def _d2_table(self, seg: str) -> bool:
        """detectron2's evaluation results, as validation metrics keyed like its metrics.json under
        ``val/`` (``val/bbox/AP``, ``val/bbox/AP50``, ``val/segm/AP``...; percent, as printed) at the current step:
        ``copypaste: Task: bbox``, ``copypaste: AP,AP50,...``, ``copypaste: 45.1,65.4,...`` and
        the Markdown table ``|   AP   |  AP50  |`` / ``| 45.123 | 65.432 |`` before them.
        Returns True when the line was one of them."""
        m = _D2_COPY.search(seg)
        if m:
            body = m["body"].strip()
            if body.startswith("Task:"):
                self._d2_task = body[5:].strip() or "bbox"
                return True
            cells = [c.strip() for c in body.split(",")]
        elif _D2_ROW.match(seg):
            cells = [c.strip() for c in seg.strip().strip("|").split("|")]
            if all(set(c) <= set(":-") for c in cells):
                return True  # the |:---:| separator
        else:
            return False
        nums = [_num(c) for c in cells]
        if cells and all(c and (c[0].isalpha()) for c in cells) and "AP" in cells[0]:
            self._d2_names: list[str] | None = cells
            return True
        names = getattr(self, "_d2_names", None)
        if names and len(nums) == len(names) and all(v is not None for v in nums):
            task = getattr(self, "_d2_task", "bbox")
            # figures of an evaluation ("Evaluation results for bbox"): held-out, like every ``val/`` series
            rec = {f"val/{task}/{n}": v for n, v in zip(names, nums) if v is not None}
            self.formats["detectron2-ap"] += 1
            self._emit_all(rec, self.step if self.step is not None else self.max_step, None)
            if m:  # the copypaste block closes the table
                self._d2_names = None
            return True
        return False

    def _logged_at(self, rec: dict[str, float], step: int) -> bool:
        """Whether a metric of ``rec`` already has a point at ``step``."""
        names, last_step = self._names, self._last_step
        return any(names.get(k) is not None and last_step[names[k]] == step for k in rec)

    def _emit_all(
        self, rec: dict[str, float], step: int, epoch: float | None, events: tuple = ()
    ) -> None:
        if rec:
            self.last_record_line = self.lineno
        names, last_step, last_value = self._names, self._last_step, self._last_value
        wall = self.wall
        store = self._store
        for name, value in rec.items():
            code = names.get(name)
            if code is None:
                code = names[name] = len(names)
                last_step.append(-(2**62))
                last_value.append(math.nan)
                store.new_series()
            elif last_step[code] == step and last_value[code] == value and name not in events:
                continue  # the same point printed twice (a progress bar redrawn, a checkpoint message)
            last_step[code] = step
            last_value[code] = value
            store.add(code, step, value, wall)
        self.max_step = max(self.max_step, step)

    def _kv_row(self, rec: dict[str, float]) -> None:
        """A row of a key/value table. A name the open table already holds starts the next table:
        a log that prints the same table again and again (the stable-baselines3 / OpenAI baselines
        logger's dump, one per logging interval) holds one record per table, not a summary. From
        the second table on, when no other line gave a step, each closed table is emitted as a
        record (:meth:`_kv_flush`); a table printed once stays a summary (Lightning's test results)."""
        if any(k in self._kv_block for k in rec):
            if self.step is None or self.params.get("log.step_axis") == "table":
                self._kv_flush()
            else:
                self._kv_block = {}
        for k, v in rec.items():
            self._kv_block[k] = (v, self.wall)

    def _kv_flush(self) -> None:
        """Emit the open key/value table as one record: at its own step counter (a name ending in
        ``steps``/``timesteps`` holding an integer past the last step: SB3 ``total_timesteps``,
        baselines ``TimestepsSoFar``), else at the next record number."""
        blk, self._kv_block = self._kv_block, {}
        if not blk:
            return
        self._kv_blocks += 1
        self.params["log.step_axis"] = "table"
        nxt = (self.step or 0) + 1
        step = nxt
        for k, (v, _) in blk.items():
            leaf = k.rsplit("/", 1)[-1].lower()
            # a whole number a float holds exactly (never nan, inf or 1e30: no step)
            if (
                leaf.endswith(("steps", "timesteps", "stepssofar"))
                and nxt <= v < 2**53
                and float(v).is_integer()
            ):
                step = int(v)
                break
        wall = self.wall
        for k, (v, w) in blk.items():
            self.wall = w
            self._emit_all({k: v}, step, None)
        self.wall = wall
        self.step = step
        self.started = True

    def result(self) -> ParseResult:
        """The parsed metrics, params and facts. Summary values are added for metrics without history."""
        self._flush_wrap()
        self._flush_pending()
        if self._kv_blocks and self.params.get("log.step_axis") == "table":
            self._kv_flush()  # the last of the repeated tables
        store = self._store
        for name, (value, wall) in self._summary.items():
            if name in self._names:
                continue
            self._names[name] = len(self._names)
            store.new_series()
            store.append_final(self._names[name], self.max_step, value, wall)
            if wall == wall:
                store.any_wall = True
        self._summary.clear()
        names = list(self._names)
        thinned = {names[c]: k for c, k in store.thinned.items()}
        seen = store.seen
        table = store.table(names)
        if self.spe and "steps_per_epoch" not in self.facts:
            self.facts["steps_per_epoch"] = float(round(self.spe))
        last = self.wall if not math.isnan(self.wall) else None
        keeper = self._keeper
        return ParseResult(
            metrics=table,
            params=dict(self.params),
            facts=dict(self.facts),
            formats=self.formats,
            console=keeper.lines() if self.keep_console else [],
            lines=self.lines,
            omitted_console=keeper.omitted if self.keep_console else 0,
            points_read=seen,
            thinned=thinned,
            first_wall=self.first_wall,
            last_wall=last,
            launches=list(self.launches),
            launches_dropped=self.launches_dropped,
            store_generation=store.generation,
            series_order=names,
            template_note=self._miner.summary(),
        )


def _known_spaced_pairs(seg: str) -> list[tuple[str, str, str | None]]:
    """The ``name value`` pairs of a spaced line whose names are vocabulary names or step/epoch
    markers (``test accuracy 0.739``); a value followed by a word that does not begin another pair
    is prose (``the loss 10 times higher``, ``accuracy 0 classes were``), not a figure."""
    pairs: list[tuple[str, str, str | None]] = []
    found = list(_GEN_SPACE.finditer(seg))
    starts = {pm.start() for pm in found}
    for pm in found:
        nxt = len(seg) - len(seg[pm.end() :].lstrip())
        if (
            nxt < len(seg)
            and seg[nxt].isalpha()
            and nxt not in starts
            and _UNIT_WORD.match(seg, nxt) is None
        ):
            continue
        key = _metric_words(pm["k"].strip())
        if key.lower().replace(" ", "_") in _MARKERS or is_known(key):
            pairs.append((key, pm["v"], pm["u"]))
    return pairs


def _value_first_pairs(seg: str) -> list[tuple[str, str, str | None]]:
    """The figures after a line's first ``: `` written before their vocabulary names (``Epoch 3 @
    10:27 PM : 0.9816 C.E. Loss, 94.28% Accuracy``), read when the pairs before gave only step
    markers."""
    pairs: list[tuple[str, str, str | None]] = []
    for pm in _GEN_VALUE_FIRST.finditer(seg, seg.index(": ")):
        key = _metric_words(pm["k"].strip())
        if is_known(key):
            pairs.append((key, pm["v"], pm["u"]))
    return pairs


def _generic_prefix(
    seg: str, sp: re.Match | None, pairs: list[tuple[str, str, str | None]], work: str
) -> str:
    """The split prefix of a generic record's figures (``train/``, ``val/``, ...): the split word
    of the line (or the tag right after its position: ``Epoch 1 Validation - Loss: 18.49``), unless
    the names carry their own splits; several figures of an evaluation set name it
    (:func:`_eval_record_prefix`)."""
    default = _split_prefix(seg) if _SPLIT_HINT.search(seg) else "train/"
    if default == "train/" and sp is not None and _SPLIT_HINT.search(seg):
        # the tag right after the position: ``Epoch 1 Validation - Loss: 18.49``
        default = _split_prefix(strip_log_prefix(seg)[sp.end() :])
    if default != "train/" and any(_SPLIT_WORD.search(k) for k, _, _ in pairs):
        default = (
            "train/"  # ``[eval] iter 0: train 9.85 val 9.85 lr 7e-07``: the names give the splits
        )
    if default == "train/" and len(pairs) > 1:
        default = (
            _eval_record_prefix([k for k, _, _ in pairs], summary=_MEAN_BESIDE.search(work) is None)
            or default
        )
    return default


def _section_prefix(raw: str) -> str:
    """The split prefix a format's ``@section`` field names: ``val/`` (valid, val, dev, eval),
    ``test/``, else ``train/``."""
    s = raw.lower()
    if s.startswith(("valid", "val", "dev", "eval")):
        return "val/"
    return "test/" if s.startswith("test") else "train/"


def _record_pairs(
    c: _Compiled, m: re.Match, seg: str, gd: dict[str, Any]
) -> list[tuple[str, str, str | None]]:
    """The name/value pairs of a catalogued line: its ``k``/``v`` groups, the pairs of its rest
    (the format's pair pattern, with units when it has them) and the numeric entries of a JSON
    object it holds (not JSON, or nested past the decoder's stack: none)."""
    pairs: list[tuple[str, str, str | None]] = []
    if c.has_kv and gd.get("k") and gd.get("v"):
        pairs.append((gd["k"], gd["v"], None))
    if c.pairs is not None:
        rest = gd.get("rest")
        text = rest if rest is not None else seg[m.start() :]
        if c.pairs_unit:
            pairs += [(pm["k"], pm["v"], pm["u"]) for pm in c.pairs.finditer(text)]
        elif c.pairs_kv is not None:  # set whenever c.pairs is
            pairs += [(k, v, None) for k, v in c.pairs_kv.findall(text)]
    if gd.get("json"):
        try:
            obj = json.loads(gd["json"])
        except (ValueError, RecursionError):
            obj = None
        if isinstance(obj, dict):
            for k, v in obj.items():
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    pairs.append((str(k), repr(float(v)), None))
                elif isinstance(v, str) and _num(v) is not None:
                    pairs.append((str(k), v, None))
    return pairs


def _inferred_prefix(inf: Inferred) -> str:
    """The split prefix of an inferred record's figures: the split word of its template, unless
    its names carry their own splits; several figures of an evaluation set name it
    (:func:`_eval_record_prefix`; a template with running means beside is no summary)."""
    default = _split_prefix(inf.key) if _SPLIT_HINT.search(inf.key) else "train/"
    if default != "train/" and any(_SPLIT_WORD.search(k) for k in inf.rec):
        default = "train/"
    if default == "train/" and len(inf.rec) > 1:
        default = _eval_record_prefix(list(inf.rec), summary="\x01(\x01" not in inf.key) or default
    return default


def _inferred_values(
    inf: Inferred, default: str, ctx_step: int | None, line_step: int | None
) -> dict[str, float] | None:
    """The figures of an inferred record, or None when it holds none: a best-so-far tracker at its
    initial ``float("inf")``, or a running line of an evaluation pass printed batch by batch
    (``Test: [ 3/3]  Loss: 1.010 ( 0.952)``), whose running means at its last batch are the pass's
    figures (placed at the step of the line before when there is one)."""
    values = inf.rec
    if _BEST_KEY.search(inf.key) is not None and any(math.isinf(x) for x in values.values()):
        return None  # a best-so-far tracker at its initial ``float("inf")``: nothing was measured
    if inf.means and default != "train/" and inf.pos is not None:
        if inf.pos[0] != inf.pos[1]:
            return None
        values = {**inf.rec, **inf.means}
        if ctx_step is not None or line_step is not None:
            inf.step = line_step if line_step is not None else ctx_step
            inf.pos = None
    return values


def _blanked(seg: str, spans: list[tuple[int, int]]) -> str:
    """``seg`` with the given ``(start, end)`` spans (in order, not overlapping) replaced by
    spaces of the same length."""
    parts = []
    prev = 0
    for start, end in spans:
        parts.append(seg[prev:start] + " " * (end - start))
        prev = end
    return "".join(parts) + seg[prev:] if parts else seg


def _split_group_pairs(seg: str, pairs: list[tuple[str, str, str | None]]) -> tuple[str, bool]:
    """Add the pairs of a line's split groups (``Valid(L=0.68 | A=0.61)`` -> ``Valid_loss``,
    ``Valid_acc``; abbreviations from :data:`_GROUP_ABBREV`) to ``pairs``; returns the line with
    the groups read blanked and whether one was read."""
    spans = []
    for gm in _GEN_GROUP.finditer(seg):
        body = gm["body"]
        inner = [
            (pm["k"], pm["v"], pm["u"]) for rx in (_GEN_EQ, _GEN_COLON) for pm in rx.finditer(body)
        ]
        if not inner:
            continue
        for k, v, u in inner:
            k = k.strip()
            pairs.append((f"{gm['g']}_{_GROUP_ABBREV.get(k.lower(), k)}", v, u))
        spans.append((gm.start(), gm.end()))
    return _blanked(seg, spans), bool(spans)


def _unit_label_pairs(seg: str, um: re.Match, pairs: list[tuple[str, str, str | None]]) -> str:
    """Add the pairs after a duration label (DeepSpeed's ``time (ms) | forward: 120.55 | step:
    15.30``, match ``um`` of :data:`_UNIT_LABEL`) to ``pairs`` as ``label_name`` in the label's
    unit; returns the line blanked from the label on."""
    label, unit, tail = um["label"], um["u"], seg[um.end() :]
    for pm in (pm for rx in (_GEN_COLON, _GEN_EQ, _GEN_PIPE) for pm in rx.finditer(tail)):
        pairs.append((f"{label}_{pm['k'].strip()}", pm["v"], pm["u"] or unit))
    return seg[: um.start()] + " " * (len(seg) - um.start())


def _fraction_pairs(seg: str, pairs: list[tuple[str, str, str | None]]) -> str:
    """Add accuracies written as a fraction (``accuracy: 93/100`` -> 0.93; vocabulary accuracy,
    top1 or top5 names only, 0 <= n <= m, m > 0) to ``pairs``; returns the line with them
    blanked."""
    spans = []
    for fm in _GEN_FRACTION.finditer(seg):
        k = _metric_words(fm["k"].strip())
        n, m_ = int(fm["n"]), int(fm["m"])
        if (
            not (is_known(k) and canonical(k)[0].rsplit("/", 1)[-1] in ("accuracy", "top1", "top5"))
            or not 0 <= n <= m_
            or m_ == 0
        ):
            continue
        pairs.append((k, repr(n / m_), None))
        spans.append((fm.start(), fm.end()))
    return _blanked(seg, spans)


def _vector_pairs(seg: str, pairs: list[tuple[str, str, str | None]]) -> str:
    """Add bracketed vectors (``lr=[1e-05]`` -> ``lr``; ``lr=[a, b]`` -> ``lr_0``, ``lr_1``) to
    ``pairs``; returns the line with them blanked."""
    spans = []
    for vm in _GEN_VEC.finditer(seg):
        items = _VEC_ITEM.findall(vm["body"])
        k = vm["k"].strip()
        if len(items) == 1:
            pairs.append((k, items[0], None))
        else:
            pairs.extend((f"{k}_{i}", v, None) for i, v in enumerate(items))
        spans.append((vm.start(), vm.end()))
    return _blanked(seg, spans)


def _is_failure(line: str) -> bool:
    """A failure message (a signature outside the context categories): never a metric template."""
    return any(sig.category not in CONTEXT_CATEGORIES for sig, _ in match_line(line))


_GENERIC_FMT = LogFormat(
    id="generic",
    name="generic key/value lines",
    example="step=100 loss=2.31 lr=1e-4",
    pattern=r"$^",
)


def parse_lines(
    lines: Iterable[tuple[int, str]] | Iterable[str],
    source: str = "console",
    keep_console: bool = True,
    disabled_formats: Iterable[str] | None = None,
) -> ParseResult:
    """Parse console lines (``(lineno, text)`` pairs or plain strings) in one pass.

    ``disabled_formats``: catalogue ids or framework names switched off (see :class:`LogParser`).
    Returns a :class:`ParseResult`. Never raises on content: a line no format
    recognises is simply not a metric line.
    """
    p = LogParser(keep_console=keep_console, disabled_formats=disabled_formats)
    p.feed_many(_numbered(lines), source)
    return p.result()


def _numbered(lines) -> Iterator[tuple[int, str]]:
    for i, item in enumerate(lines, 1):
        if isinstance(item, str):
            yield i, item.rstrip("\n")
        else:
            yield item
