"""An evaluation of released weights whose figure differs from the published one.

A report that scores the weights a paper or a repository released, without training them (``task:
evaluation of released pretrained weights``, ``model: released checkpoint (no retraining)``, ``I sampled
50k images using the checkpoint provided in the repo``), and states a figure that differs from the
published one cannot show a training failure: no training took place, and the same weights gave the
published figure under the authors' evaluation. The difference lies in how the figure was measured (the
test data's preprocessing, the metric's implementation or aggregation, the protocol, the version of the
evaluation tool). An analyst answers: evaluate with the reference's exact protocol before comparing.

Sources: the papers' and repositories' own statement that the released weights give the published figure
(the reason a checkpoint is released); the evaluation-protocol effects documented for the metrics reports
quote: FID depends on the reference set's resizing and the implementation (Parmar et al. 2022, "On
Aliased Resizing and Surprising Subtleties in GAN Evaluation", CVPR), AP on per-sequence against pooled
aggregation and the evaluation resolution (COCO/PASCAL evaluation docs), LLM-judge win rates on the
evaluator's version and its sampling (AlpacaEval README: pin the version, ~1 point run-to-run spread).

This module finds the two sides of such a comparison in a report's text: the statement that the run only
evaluated released weights (:data:`_RELEASED` beside an evaluation word, or ``no retraining``), with no
sentence saying the run trained or fine-tuned (:data:`_TRAINED`); a reference figure (a ``key: value`` line
whose key names the paper, the authors, the README or the model zoo, or a sentence ``... in the paper is
4.02``); and a figure of the run from any other line, on the same scale and apart from every reference
figure by more than the seed-noise band :data:`mlaudit_core.reference_gap.RELATIVE_BAND`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from ..reference_gap import RELATIVE_BAND

#: Weights someone else trained and released: ``released checkpoint``, ``your pretrained weights``,
#: ``authors' pretrained weights``, ``the official checkpoint``, ``the checkpoint provided in the repo``.
_RELEASED = re.compile(
    r"\b(?:released|provided|official|published|authors?'?|your)\s+(?:[\w-]+\s+){0,4}?"
    r"(?:checkpoints?|weights|ckpt|models?)\b|\bcheckpoints?\b[^.;]{0,60}\bprovided\b",
    re.I,
)
_EVALUATED = re.compile(
    r"\b(?:evaluat\w*|eval|test(?:ed|ing)?|sampl\w*|inference|benchmark\w*|scor(?:e|ed|ing))\b",
    re.I,
)
#: Stated in so many words: no training took place.
_NO_TRAINING = re.compile(
    r"\b(?:no|without(?: any)?) (?:re-?)?training\b|\beval(?:uation)?[- ]only\b", re.I
)
#: The run trained or fine-tuned (then its figure is a reproduction, judged by the other rules).
_TRAINED = re.compile(
    r"\b(?:I|we)\s+(?:have\s+|also\s+)?(?:re-?)?train(?:ed)?\b|\bfine-?tun(?:e|ed|ing)\b|"
    r"\btrained\s+(?:for|on|from|with)\b|\btraining[_ ](?:script|set|command|log)\b",
    re.I,
)
_NUM = r"-?\d+(?:\.\d+)?"
#: A ``key: value`` key that names the reference's figure: ``paper_fid``, ``reported_by_authors``,
#: ``reported in the paper``, ``reference_result``, ``readme_AP``.
_REF_KEY = re.compile(
    r"(?:^|[\s_.-])(?:paper|reported|published|readme|reference|official|authors?|zoo)(?:$|[\s_.-])",
    re.I,
)
#: A sentence that gives the reference's figure as its predicate: ``The FID score in the paper is 4.02``.
_REF_SENTENCE = re.compile(
    rf"\b(?:in|of|from|by) (?:the|your) (?:paper|readme|model zoo)\s+(?:is|was|are|were|=|:)\s*(?P<v>{_NUM})\b",
    re.I,
)
_REF_WORD = re.compile(
    r"\b(?:paper|reported|published|readme|reference|official|authors?|zoo|yours?|you obtained)\b",
    re.I,
)
_KV = re.compile(rf"^\s*(?P<k>[^:=]{{1,60}}?)\s*[:=]\s*(?P<v>{_NUM})\b")


@dataclass(frozen=True)
class ReleasedGap:
    said: str  # the sentence that says only released weights were evaluated
    reference: float
    observed: float
    reference_text: str
    observed_text: str


def _released_only(lines: list[str]) -> str | None:
    if any(_TRAINED.search(t) for t in lines):
        return None
    for t in lines:
        if _NO_TRAINING.search(t) or (_RELEASED.search(t) and _EVALUATED.search(t)):
            return t.strip()[:200]
    return None


def _references(lines: list[str]) -> list[tuple[float, str]]:
    out = []
    for t in lines:
        kv = _KV.match(t)
        if kv and _REF_KEY.search(kv["k"]):
            out.append((float(kv["v"]), t.strip()))
            continue
        m = _REF_SENTENCE.search(t)
        if m:
            out.append((float(m["v"]), t.strip()))
    return out


#: A ``key: value`` key that names the run's own figure: ``observed: 95.9``, ``evaluation 1: 43.86, 38.37``.
_OBS_KEY = re.compile(r"^\s*(?:observed|measured|result|my|ours|evaluation|eval|got)\b", re.I)
_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9@]+")
#: A ``name: figure`` pair inside a line (a framework's record: ``coco/AP: 0.586075  coco/AR: 0.688``).
_PAIR = re.compile(rf"(?<![\w/.])(?P<k>[A-Za-z][\w/@.-]*)\s*[:=]\s*(?P<v>{_NUM})(?![\w.])")


def _metric_words(lines: list[str]) -> set[str]:
    """Words of the reference lines that may name their metric (any but the reference's own words and
    short function words): ``fid`` of ``paper_fid: 4.02``."""
    words = {w.lower() for t in lines for w in _TOKEN.findall(t.replace("_", " "))}
    return {w for w in words if not _REF_WORD.fullmatch(w) and w not in _COMMON}


_COMMON = frozenset(
    "the in of is was are were by from to and or at on for with as its score value result results "
    "figure number metric".split()
)


def _observed(lines: list[str], ref_lines: set[str]) -> list[tuple[float, str]]:
    """The run's figures, from lines that name no reference: the figures
    :func:`.stated_figures.measured_figures` reads that it names by a metric, or in a line whose key
    names the run's figure (:data:`_OBS_KEY`) or that shares a word with a reference line (``400 DDIM
    steps FID score is 14.06`` beside ``paper_fid: 4.02``)."""
    from .stated_figures import measured_figures

    shared = _metric_words(sorted(ref_lines))
    out = []
    for i, t in enumerate(lines):
        if t.strip() in ref_lines or _REF_WORD.search(t):
            continue
        words = {w.lower() for w in _TOKEN.findall(t.replace("_", " "))}
        kv = _KV.match(t)
        if kv and _OBS_KEY.match(kv["k"]):
            out.append((float(kv["v"]), t.strip()))
        for p in _PAIR.finditer(t):  # ``coco/AP: 0.586075`` in a record line
            if {w.lower() for w in _TOKEN.findall(p["k"].replace("_", " "))} & shared:
                out.append((float(p["v"]), t.strip()))
        loose = bool(_OBS_KEY.match(t) or words & shared)
        out += [(f.value, t.strip()) for f in measured_figures(t, i) if f.head or loose]
    return out


def stated_gap(lines: list[str]) -> tuple[float, float, str, str] | None:
    """``(reference, observed, reference_text, observed_text)``: the first reference figure of ``lines``
    (:func:`_references`) and a figure of the run (:func:`_observed`) on the same scale (both <= 1 or both
    > 1) and apart by more than :data:`RELATIVE_BAND` of the reference, else ``None``."""
    refs = _references(lines)
    if not refs:
        return None
    obs = _observed(lines, {t for _, t in refs})
    for r, rt in refs:
        if r == 0:
            continue
        for o, ot in obs:
            if (abs(o) <= 1) != (abs(r) <= 1):
                continue
            if abs(o - r) / abs(r) > RELATIVE_BAND:
                return r, o, rt, ot
    return None


def released_weights_gap(lines: list[str], params: Mapping[str, object]) -> ReleasedGap | None:
    """The reference figure and run figure (:func:`stated_gap`) of a report that only evaluated released
    weights (module docstring), else ``None``. ``lines`` are the report's text lines (console and ``key:
    value`` params)."""
    said = _released_only(lines)
    if said is None:
        return None
    got = stated_gap(lines)
    return None if got is None else ReleasedGap(said, *got)


# --- the outputs judged better by eye while the metric says worse ----------------------------------

#: The outputs judged better by looking at them: ``the rendered results look much better``.
_LOOKS_BETTER = re.compile(
    r"\b(?:looks?|looked|looking)\s+(?:much\s+|a\s+lot\s+|way\s+|far\s+|visually\s+|clearly\s+)?"
    r"(?:better|sharper|nicer|cleaner|more\s+realistic)\b|\bvisually\s+(?:better|sharper|superior)\b",
    re.I,
)
_TURN = re.compile(r"\b(?:but|while|whereas|however|yet|although)\b", re.I)
#: A metric's name stated lower or worse after the turn: ``but the PSNR is lower``.
_METRIC_WORSE = re.compile(
    r"\b(?P<m>[A-Za-z][\w@-]*)\s+(?:score\s+|value\s+)?(?:is|was|are|were|gets?|got|becomes?|became)?\s*"
    r"(?:much\s+|slightly\s+|a\s+bit\s+)?(?:lower|worse|drops?|dropped|decreas\w*)\b",
    re.I,
)


def metric_against_looks(lines: list[str]) -> tuple[str, str] | None:
    """``(metric, sentence)`` when a sentence of ``lines`` states that the outputs look better and, after a
    turn (``but``, ``while``), that a metric's figure of them is lower or worse (:data:`_LOOKS_BETTER`,
    :data:`_METRIC_WORSE`), not in a clause that asks it; else ``None``. A pixel- or sample-level metric that
    disagrees with what the outputs show measures something the change did not improve (a misalignment
    of the evaluation views, an aggregation, a reference set): the metric's protocol, not the model, is in
    question (the metric_policy reading of a report)."""
    from ..roles import parse_name
    from .stated_figures import _sentences

    for line in lines:
        for s in _sentences(line):
            b = _LOOKS_BETTER.search(s)
            if b is None:
                continue
            t = _TURN.search(s, b.end())
            if t is None:
                continue
            for m in _METRIC_WORSE.finditer(s, t.end()):
                word = m["m"]
                if parse_name(word).family in ("acc", "score", "error") or (
                    word.isupper() and len(word) >= 2
                ):
                    return word, s.strip()[:240]
    return None
