"""A run's stated result against a stated reference, read from the text of a report.

Failure reports often hold no curve, only sentences: ``Trying to reproduce 63.58 validation
accuracy but the accuracy in the last epoch is 63.17``, ``reported by the repository: mAP 74.0``
beside ``this run: mAP 73.5``. An analyst compares the two figures and asks whether the gap is
larger than what a rerun of the same configuration gives (seed noise). This module finds such
pairs; :func:`mlaudit_core.verdict.policy` decides with them.

Extraction, per clause (a line split at ``.``/``;`` followed by a space, and at ``but``/``while``/
``whereas``): a clause with a reference word (:data:`_REFERENCE`: reproduce, reported, paper,
README, published, official, expected, target) gives *reference* figures; a clause with a
result word (:data:`_RESULT`: this run, I got, my result, last/final epoch, achieved) and no
reference word gives *observed* figures. A figure is a number standing alone (``63.58``,
``87.7%``), named by the word before it when that word is a metric's name (``mAP 74.0`` ->
``map``; :func:`mlaudit_core.roles.parse_name`, or a CMC name such as ``Rank-1``); numbers after a
counter word (epoch, step, iteration, seed, batch, GPU), counts (``90 epochs``, ``8 GPUs``) and
numbers glued to letters (``fp64``, the 1 of ``Rank-1``) are not figures. Pairs: a reference and an observed
figure of the same name, else, when neither is named and one clause pair holds one of each, that
pair; and in a clause that compares (``28.37 ..., which is lower than the 28.39 in your paper``), the one
figure before the comparison against the one after it, when the part after names the reference. A pair
is kept only when both figures are on the same scale (both <= 1 or both > 1).

Noise band: :data:`RELATIVE_BAND` 1% of the reference. Seed-to-seed spread of the same
configuration is of that order on the figures reports quote: Picard 2021 ("torch.manual_seed(3407)
is all you need", arXiv:2109.08203) measures a 1.8-point max-min range of CIFAR-10 accuracy (~2%
relative) over 10^4 seeds and ~0.5 points of ImageNet top-1 (~0.7% relative) with a pretrained
model; Bouthillier et al. 2021 (MLSys, "Accounting for variance in machine learning benchmarks")
report seed standard deviations of 0.2-1% of the metric across their tasks. A gap inside 1% of the
reference is therefore inside the spread of one rerun; a wider gap is not judged here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

#: Share of the reference within which a reproduction gap is seed noise (module docstring).
RELATIVE_BAND = 0.01

_REFERENCE = re.compile(
    r"\b(?:reproduc\w*|reported|paper|readme|published|official|expected|target(?:ed)?)\b", re.I
)
_RESULT = re.compile(
    r"\b(?:this run|i got|i get|i obtained|i achieved|we got|my result|my run|"
    r"(?:last|final) epoch|final result|my (?:mAP|accuracy|score)|obtained|achieved)\b",
    re.I,
)
_CLAUSE = re.compile(r"(?<=[.;!?])\s+|\b(?:but|while|whereas|however)\b", re.I)
#: A comparison inside one clause (``PSNR 28.37 on Set14, which is lower than the 28.39 in your paper``):
#: the figure before it is the run's, the figure after it, in a part that names the reference, is the
#: reference; the comparison itself says they are the same metric.
_COMPARE = re.compile(
    r"\b(?:lower|higher|less|worse|better|smaller|larger|below|above|under|over)\s+than\b", re.I
)
_FIGURE = re.compile(
    r"(?<![\w.\-+/])(?P<v>\d+(?:\.\d+)?)(?P<pct>\s?%)?(?!\w|\.\d|/\d|\s?(?:s|ms|sec|min|h|GB|MB|x)\b)"
    # a count of something (90 epochs, 5000 images, 8 GPUs, 9 hours) is not a result figure
    r"(?!\s?(?:epochs?|steps?|iter\w*|images?|samples?|examples?|gpus?|hours?|minutes?|days?|"
    r"times?|runs?|seeds?|classes|layers?|params?)\b)"
)
_NAME_BEFORE = re.compile(r"([A-Za-z][A-Za-z0-9@_\-]*)\W{0,3}$")
_CMC = re.compile(r"(?i)^(?:rank|r|top|hit|recall|hits)@?-?\d+$")


def _is_metric_name(word: str) -> bool:
    """A metric's name (``mAP``, ``accuracy``, ``BLEU``, ``Rank-1``), not a word of the sentence."""
    from .roles import parse_name

    return parse_name(word).family is not None or _CMC.match(word) is not None


_COUNTER_WORDS = frozenset(
    "epoch epochs step steps iter iteration iterations seed batch gpu gpus rank layer top".split()
)


def text_lines(run) -> list[str]:
    """The text a report gives: console lines and the context's ``key: value`` params."""
    out = [c.text for c in run.console]
    out += [f"{k}: {v}" for k, v in run.params.items() if not k.startswith(("log.", "source."))]
    return out


@dataclass(frozen=True)
class Figure:
    name: str | None
    value: float
    text: str  # the clause it was read from


@dataclass(frozen=True)
class Gap:
    """A reference figure and the run's figure of the same metric."""

    name: str | None
    reference: float
    observed: float
    reference_text: str
    observed_text: str

    @property
    def relative(self) -> float:
        return abs(self.observed - self.reference) / abs(self.reference)

    @property
    def within_noise(self) -> bool:
        return self.relative <= RELATIVE_BAND


def _figures(clause: str) -> list[Figure]:
    out = []
    for m in _FIGURE.finditer(clause):
        before = clause[: m.start()]
        nm = _NAME_BEFORE.search(before)
        word = nm.group(1) if nm else None
        if word is not None and word.lower() in _COUNTER_WORDS:
            continue  # a counter's value, not a figure
        if word is not None and not _is_metric_name(word):
            word = None
        out.append(Figure(word.lower() if word else None, float(m.group("v")), clause.strip()))
    return out


def reproduction_gaps(lines: Iterable[str]) -> list[Gap]:
    """Pairs of (reference, observed) figures stated in ``lines`` (see the module docstring): the
    figures of each clause (:func:`_read_clause`), an unnamed pair of one line
    (:func:`_unnamed_pair`), then the named pairs across lines; both figures on the same side of 1
    (fractions with fractions) and a positive reference."""
    refs: list[Figure] = []
    obs: list[Figure] = []
    unnamed_pairs: list[Gap] = []
    compared: list[Gap] = []
    for line in lines:
        for clause in _CLAUSE.split(line):
            if not clause or not clause.strip():
                continue
            _read_clause(clause, refs, obs, compared)
        pair = _unnamed_pair(line, refs, obs)
        if pair is not None:
            unnamed_pairs.append(pair)
    gaps: list[Gap] = []
    named_obs = {f.name: f for f in obs if f.name}
    for r in refs:
        if r.name and r.name in named_obs:
            o = named_obs[r.name]
            gaps.append(Gap(r.name, r.value, o.value, r.text, o.text))
    gaps.extend(unnamed_pairs)
    gaps.extend(compared)
    return [g for g in gaps if g.reference > 0 and (g.reference <= 1) == (g.observed <= 1)]


def _read_clause(clause: str, refs: list[Figure], obs: list[Figure], compared: list[Gap]) -> None:
    """Sort one clause's figures: a comparison within the clause is a gap of its own
    (:func:`_compared_gap`, added to ``compared``); otherwise a clause naming a reference adds its
    figures to ``refs``, one stating a result to ``obs``, any other none."""
    is_ref = _REFERENCE.search(clause) is not None
    gap = _compared_gap(clause) if is_ref else None
    if gap is not None:
        compared.append(gap)
        return
    is_obs = not is_ref and _RESULT.search(clause) is not None
    if not (is_ref or is_obs):
        return
    (refs if is_ref else obs).extend(_figures(clause))


def _compared_gap(clause: str) -> Gap | None:
    """The gap of a comparison inside one clause ('PSNR 28.37 on Set14, which is lower than the
    28.39 in your paper'): one figure before the comparison word (observed) and one reference
    figure after it; None otherwise."""
    cmp = _COMPARE.search(clause)
    if cmp is None or not _REFERENCE.search(clause[cmp.end() :]):
        return None
    mine, theirs = _figures(clause[: cmp.start()]), _figures(clause[cmp.end() :])
    if len(mine) != 1 or len(theirs) != 1:
        return None
    o, r = mine[0], theirs[0]
    return Gap(o.name or r.name, r.value, o.value, r.text, o.text)


def _unnamed_pair(line: str, refs: list[Figure], obs: list[Figure]) -> Gap | None:
    """The gap of one line's clauses when they hold one unnamed reference and one unnamed
    observed figure; None otherwise."""
    line_refs = [f for f in refs if f.text in line and f.name is None]
    line_obs = [f for f in obs if f.text in line and f.name is None]
    if len(line_refs) == 1 and len(line_obs) == 1:
        r, o = line_refs[0], line_obs[0]
        return Gap(None, r.value, o.value, r.text, o.text)
    return None


#: Max-min range, as a share of the mean, within which repeated runs of one configuration differ by
#: run-to-run noise: seed standard deviations of up to 1% of the metric (Bouthillier et al. 2021), and
#: the range of about ten draws is about 3 standard deviations.
RERUN_BAND = 0.03
#: Words that say the figures are repeats of one configuration (reruns, repeats, seeds).
_RERUN = re.compile(
    r"(?i)\b(?:re-?runs?|re-?ran|repeat(?:s|ed)?|repetitions?|same (?:seed|config\w*|command|code)|"
    r"fixed seed|seeds?|every time|each time|run-to-run|non-?determinis\w*)\b"
)
#: Three or more figures in a list (``43.25, 43.20, 42.89``, ``[0.806, 0.808, ...]``).
_LIST = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?:\s*,\s*\d+(?:\.\d+)?){2,}(?![\w.])")


@dataclass(frozen=True)
class Spread:
    """Figures of repeated runs of one configuration and their max-min range relative to the mean."""

    values: tuple[float, ...]
    text: str

    @property
    def relative(self) -> float:
        m = sum(self.values) / len(self.values)
        return (max(self.values) - min(self.values)) / abs(m) if m else float("inf")

    @property
    def within_noise(self) -> bool:
        return self.relative <= RERUN_BAND


def rerun_spreads(lines: Iterable[str]) -> list[Spread]:
    """Lists of >= 3 figures of one scale in a text that says they are repeats of one configuration
    (:data:`_RERUN`), e.g. ``the f1 result will get 43.25, 43.20, 42.89`` after ``with fixed seed``."""
    lines = list(lines)
    if not any(_RERUN.search(t) for t in lines):
        return []
    out = []
    for t in lines:
        for m in _LIST.finditer(t):
            vals = tuple(float(x) for x in re.split(r"\s*,\s*", m.group(0)))
            if all(v <= 1 for v in vals) or all(v > 1 for v in vals):
                if len(set(vals)) > 1 or len(vals) >= 3:
                    out.append(Spread(vals, t.strip()[:160]))
    return out
