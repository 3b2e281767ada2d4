"""A run's stated result against a stated reference, read from the text of a report.

Failure reports often hold no curve, only sentences: ``Trying to reproduce 63.58 validation
accuracy but the accuracy in the last epoch is 63.17``, ``reported by the repository: mAP 74.0``
beside ``this run: mAP 73.5``. An analyst compares the two figures and asks whether the gap is
larger than what a rerun of the same configuration gives (seed noise). This module finds such
pairs; :func:`mlaudit_core.verdict.policy` decides with them.

Extraction, per clause (a line split at ``.``/``;`` followed by a space, and at ``but``/``while``/
``whereas``): a clause with a reference word (:data:`_REFERENCE`: reproduce, reported, paper,
README, published, official, expected, target, you report, a repo's results) gives *reference* figures; a clause with a
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

Reruns (:func:`rerun_spreads`): figures of repeats of one configuration, written as a comma list, as
figures labelled by their run or seed (``Run 1 | 55.76 mAP``, ``seed=11 -> 0.8712``, ``name: value``
lines under a ``Run 2:`` header) or as two figures of one sentence about repeats (``two trials with
the same config ... 67.980% and 67.210%``). Their spread is noise within :data:`RERUN_BAND` of the
mean; a wider spread is the configuration's own band when the text puts it down to chance (a
maintainer's "randomness in each run") and no run is an outlier (:data:`OUTLIER_RANGES`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

#: Share of the reference within which a reproduction gap is seed noise (module docstring).
RELATIVE_BAND = 0.01

_REFERENCE = re.compile(
    r"\b(?:reproduc(?!tion (?:gives|gave|got|yields|reache[sd])\b)\w*|reported|paper|readme|published|official|expected|target(?:ed)?|you report|"
    r"repo(?:sitory)?'s (?:\w+ )?results?)\b",
    re.I,
)
_RESULT = re.compile(
    r"\b(?:this run|reproduction (?:gives|gave|got|yields|reache[sd])|i got|i get|i obtained|i achieved|i achieve|i obtain|we got|my result|my run|"
    r"(?:i am|i'm|we are|we're) (?:obtaining|getting|achieving|seeing)|"
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
    r"(?<![\w.\-+/@])(?P<v>\d+(?:\.\d+)?)(?P<pct>\s?%)?(?!\w|\.\d|/\d|\s?(?:s|ms|sec|min|h|GB|MB|x)\b)"
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
    "epoch epochs step steps iter iteration iterations seed batch gpu gpus rank layer top "
    # a reference to a part of a paper or a file (``Table 1``, ``Fig. 3``, ``Eq. 2``, ``Section 4``)
    "table tab fig figure eq equation section sec appendix".split()
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
    """The gap of one line's clauses when they hold one reference and one observed figure, at most
    one of them named (``paper reports mAP 66.9%; reproduction gives 67.5%``); None otherwise."""
    line_refs = [f for f in refs if f.text in line]
    line_obs = [f for f in obs if f.text in line]
    if len(line_refs) == 1 and len(line_obs) == 1:
        r, o = line_refs[0], line_obs[0]
        if r.name is None or o.name is None:  # named on one side only: the line's one metric
            return Gap(r.name or o.name, r.value, o.value, r.text, o.text)
    return None


#: Max-min range, as a share of the mean, within which repeated runs of one configuration differ by
#: run-to-run noise: seed standard deviations of up to 1% of the metric (Bouthillier et al. 2021), and
#: the range of about ten draws is about 3 standard deviations. Also the band of two runs' gap when the
#: text gives no spread of its own.
RERUN_BAND = 0.03
#: A rerun is an outlier (a failed run among healthy ones, not noise) when it is farther from the
#: median of the others than this many times the others' own max-min range (and than RERUN_BAND):
#: for normal draws the next draw falls outside 3 ranges of the others with a probability well
#: below 1% at n >= 3 (the range of n >= 2 draws is >= 1.1 standard deviations on average).
OUTLIER_RANGES = 3.0
#: Words that say the figures are repeats of one configuration (reruns, repeats, seeds).
_RERUN = re.compile(
    r"(?i)\b(?:re-?runs?|re-?ran|repeat(?:s|ed)?|repetitions?|same (?:seed|config\w*|command|code)|"
    r"fixed seed|seeds?|every time|each time|run-to-run|non-?determinis\w*|trials?|twice|"
    r"(?:two|three|four|five|\d+) (?:runs|trainings|times)|replicat\w*|unchanged|no code changes?)\b"
)
#: Words that put the spread of repeats down to chance (a maintainer's "there is always some
#: randomness in each run", "variance from the random init"): the reruns' own spread is then the
#: configuration's noise band, whatever its width, as long as no run is an outlier.
_CHANCE = re.compile(
    r"(?i)\b(?:randomness|random init\w*|non-?determinis\w*|run-to-run|seed (?:variance|noise|"
    r"sensitivity)|variance measurement|fluctuat\w*|still have variance)\b"
)
#: Three or more figures in a list (``43.25, 43.20, 42.89``, ``[0.806, 0.808, ...]``), the last one
#: also joined by ``and``/``or`` as a sentence lists them (``67.7, 67.9, and 68.3``).
_LIST = re.compile(
    r"(?<![\w.])\d+(?:\.\d+)?(?:\s*,\s*\d+(?:\.\d+)?){2,}(?![\w.])"
    r"|(?<![\w.])\d+(?:\.\d+)?(?:\s*,\s*\d+(?:\.\d+)?)+\s*,?\s+(?:and|or)\s+\d+(?:\.\d+)?(?![\w.])"
)
_NUM = r"\d+(?:\.\d+)?"
#: A figure labelled by its run: ``Run 1 | 55.76 mAP``, ``seed=11 -> 0.8712``, ``seed=200 gives
#: val/loss=0.8721``; the optional name before the figure and the unit word after it name the metric.
_LABELLED = re.compile(
    r"(?i)\b(?P<label>run|trial|re-?run|seed|repeat)\s*[#=:]?\s*(?P<idx>\d+)\s*"
    r"(?:\||->|→|:|=|gives|got)\s*\**\s*(?:(?P<name>[A-Za-z][\w/@\-]*)\s*[:=]\s*)?"
    rf"(?P<v>{_NUM})(?P<pct>\s?%)?\**(?:\s*(?P<unit>[A-Za-z][\w@\-]*))?"
)
#: A line that only names a run (``Run 2:``): the ``name: value`` lines after it are that run's.
_HEADER = re.compile(r"(?i)^\W*(?:run|trial|re-?run|seed|repeat)\s*#?\s*\d+\s*:?\W*$")
_NAMED_VALUE = re.compile(rf"(?P<name>[A-Za-z][\w/.@\-]*)\s*[:=]\s*(?P<v>-?{_NUM})(?![\w.])")
#: Two figures of one sentence about repeats: ``got 67.980% and 67.210%``, ``0.3534 vs 0.3524``.
_PAIR = re.compile(
    rf"(?<![\w.])(?P<a>{_NUM})\s?%?\s*(?:and|vs\.?|versus|/)\s*(?P<b>{_NUM})\s?%?(?![\w.])", re.I
)


@dataclass(frozen=True)
class Spread:
    """Figures of repeated runs of one configuration and their max-min range relative to the mean.

    ``attributed``: the text puts the spread down to chance (:data:`_CHANCE`)."""

    values: tuple[float, ...]
    text: str
    attributed: bool = False

    @property
    def relative(self) -> float:
        m = sum(self.values) / len(self.values)
        return (max(self.values) - min(self.values)) / abs(m) if m else float("inf")

    @property
    def outlier(self) -> float | None:
        """The value farther from the median of the others than :data:`OUTLIER_RANGES` times their
        range and than :data:`RERUN_BAND` of the mean (a run that failed among reruns), else None;
        None for fewer than 3 values."""
        if len(self.values) < 3:
            return None
        mean = abs(sum(self.values) / len(self.values))
        for i, v in enumerate(self.values):
            rest = sorted(self.values[:i] + self.values[i + 1 :])
            mid = (rest[(len(rest) - 1) // 2] + rest[len(rest) // 2]) / 2
            dist = abs(v - mid)
            if dist > OUTLIER_RANGES * (rest[-1] - rest[0]) and dist > RERUN_BAND * mean:
                return v
        return None

    @property
    def within_noise(self) -> bool:
        """Inside :data:`RERUN_BAND` of the mean; or, three or more reruns whose spread the text
        puts down to chance and no outlier among them: that spread is the band itself."""
        if self.relative <= RERUN_BAND:
            return self.outlier is None
        return self.attributed and len(self.values) >= 3 and self.outlier is None


def _same_scale(vals: tuple[float, ...]) -> bool:
    return all(v <= 1 for v in vals) or all(v > 1 for v in vals)


def _list_spreads(lines: list[str]) -> list[tuple[tuple[float, ...], str]]:
    """Comma lists of >= 3 figures of one scale."""
    out = []
    for t in lines:
        for m in _LIST.finditer(t):
            vals = tuple(float(x) for x in re.findall(r"\d+(?:\.\d+)?", m.group(0)))
            if _same_scale(vals):
                out.append((vals, t.strip()[:160]))
    return out


def _labelled_spreads(lines: list[str]) -> list[tuple[tuple[float, ...], str]]:
    """Figures labelled by their run (``Run 1 | 55.76 mAP``, ``seed=11 -> 0.8712``) and the
    ``name: value`` lines under a run's header line (``Run 2:``), grouped by metric name (the name
    before the figure, else the unit word after it): >= 2 runs of one name make a spread."""
    groups: dict[str, dict[str, float]] = {}
    texts: dict[str, str] = {}
    header: str | None = None
    for t in lines:
        if _HEADER.match(t):
            header = t.strip()
            continue
        if header is not None:
            header = _under_header(t, header, groups, texts)
        for m in _LABELLED.finditer(t):
            if re.search(r"(?i)\bparam", t):
                continue  # a search's trials of different settings, not reruns
            label = f"{m.group('label').lower()} {m.group('idx')}"
            unit = m.group("unit")
            nm = (m.group("name") or (unit if unit and _is_metric_name(unit) else "")).lower()
            groups.setdefault(nm, {}).setdefault(label, float(m.group("v")))
            texts.setdefault(nm, t.strip()[:160])
    named = [nm for nm in groups if nm]
    if "" in groups and len(named) == 1:  # unnamed runs' figures are the one named metric's
        groups[named[0]] = {**groups.pop(""), **groups[named[0]]}
    out = []
    for nm, by_run in groups.items():
        vals = tuple(by_run.values())
        if len(vals) >= 2 and _same_scale(vals):
            out.append((vals, texts[nm]))
    return out


def _under_header(
    t: str, header: str, groups: dict[str, dict[str, float]], texts: dict[str, str]
) -> str | None:
    """Add a line under a run's header to ``groups``; the header ends (None) at the first line that
    holds neither a ``name: value`` nor only a code fence or nothing."""
    hits = list(_NAMED_VALUE.finditer(t))
    for m in hits:
        nm = m.group("name").lower()
        groups.setdefault(nm, {}).setdefault(header, float(m.group("v")))
        texts.setdefault(nm, t.strip()[:160])
    return header if hits or not t.strip("`~ \t") else None


#: A line that is only one figure (a script printing its result once per run).
_BARE = re.compile(rf"^\s*(?P<v>-?{_NUM})\s*$")


def _bare_spreads(lines: list[str]) -> list[tuple[tuple[float, ...], str]]:
    """Runs of >= 2 consecutive lines that each hold only one figure of one scale (a script that
    prints its result, run several times: ``0.19287356734275818`` / ``0.19287368655204773``)."""
    out: list[tuple[tuple[float, ...], str]] = []
    block: list[float] = []
    for t in [*lines, ""]:
        m = _BARE.match(t)
        if m is not None:
            block.append(float(m.group("v")))
            continue
        if len(block) >= 2 and _same_scale(tuple(block)):
            out.append((tuple(block), " / ".join(f"{v:g}" for v in block)[:160]))
        block = []
    return out


def _pair_spreads(lines: list[str]) -> list[tuple[tuple[float, ...], str]]:
    """Two figures joined by ``and``/``vs`` in a line that says they are repeats of one
    configuration (``two trials ... with the same config, but got 67.980% and 67.210%``)."""
    out: list[tuple[tuple[float, ...], str]] = []
    for t in lines:
        if not _RERUN.search(t):
            continue
        for m in _PAIR.finditer(t):
            vals = (float(m.group("a")), float(m.group("b")))
            if _same_scale(vals) and vals[0] != vals[1]:
                out.append((vals, t.strip()[:160]))
    return out


def rerun_spreads(lines: Iterable[str]) -> list[Spread]:
    """Figures of repeats of one configuration in a text that says they are repeats
    (:data:`_RERUN`): comma lists of >= 3 figures (``the f1 result will get 43.25, 43.20, 42.89``
    after ``with fixed seed``), figures labelled by their run or seed (:func:`_labelled_spreads`) and
    two figures of one sentence about repeats (:func:`_pair_spreads`). Each spread records whether
    the text puts the variation down to chance (:data:`_CHANCE`)."""
    lines = list(lines)
    if not any(_RERUN.search(t) for t in lines):
        return []
    attributed = any(_CHANCE.search(t) for t in lines)
    found = _list_spreads(lines) + _labelled_spreads(lines) + _pair_spreads(lines)
    found += _bare_spreads(lines)
    return [Spread(vals, text, attributed) for vals, text in found]


#: A gap stated in points (``the result is 0.5 points lower than the results that you provided``):
#: its size and the direction word.
_STATED_GAP = re.compile(
    rf"(?i)(?<![\w.])(?P<v>{_NUM})\s*(?:points?|pts?|%|percent(?:age points?)?)\s+"
    r"(?:lower|higher|less|worse|better|below|above|under|over)\b"
)
#: The run-to-run band a text states (``the performance may fluctuate 0.5~2% at each training``,
#: ``results vary by +-1 point between runs``): its upper end, in the metric's points.
_STATED_BAND = re.compile(
    r"(?i)\b(?:fluctuat\w*|var(?:y|ies|iation|iance)|differ(?:s|ence)?)\b[^.;\d]{0,40}?"
    rf"(?:(?:{_NUM})\s*(?:~|-|–|to)\s*)?(?:±|\+-|\+/-)?\s*(?P<hi>{_NUM})\s*(?:%|points?|pts?)"
)


@dataclass(frozen=True)
class StatedBand:
    """A gap to a reference stated in points, and a run-to-run band the text states for the same
    code; :attr:`within_noise` when the gap is no larger than the band's upper end."""

    gap: float
    band: float
    gap_text: str
    band_text: str

    @property
    def within_noise(self) -> bool:
        return self.gap <= self.band


def stated_band_gaps(lines: Iterable[str]) -> list[StatedBand]:
    """Gaps to a reference stated in points in a clause that compares the run with a reference
    (``0.5 points lower than the results that you provided``), each with the widest run-to-run band
    the text states (``may fluctuate 0.5~2% at each training even with the same environment and
    code``, in a sentence that says the band is of repeated trainings, :data:`_RERUN`); none without
    such a band. The band is the repository's own figure for reruns of its code, so it, not a typical
    seed band, is what a gap is compared with."""
    lines = list(lines)
    bands = [
        (float(m.group("hi")), t.strip()[:160])
        for t in lines
        for sentence in re.split(r"(?<=[.;!?])\s+", t)
        if _RERUN.search(sentence)
        or re.search(
            r"(?i)\b(?:(?:each|every|per) (?:training|run)|between (?:runs|trainings|seeds))\b",
            sentence,
        )
        for m in _STATED_BAND.finditer(sentence)
    ]
    if not bands:
        return []
    band, band_text = max(bands)
    out = []
    for t in lines:
        for m in _STATED_GAP.finditer(t):
            rest = t[m.end() :]
            if re.search(
                r"(?i)\b(?:you|your|paper|readme|reported|published|provided|official)\b", rest
            ):
                out.append(StatedBand(float(m.group("v")), band, t.strip()[:160], band_text))
    return out


#: A standard deviation stated for the reference or for reruns of its code: ``the standard deviation is
#: +- 1.8``, ``std 0.4``, ``22.5 ± 1.8``.
_STATED_STD = re.compile(
    rf"(?i)\b(?:standard deviation|std\.?|s\.d\.|σ)\s*(?:is|of|was|=|:)?\s*(?:about|around|~|±|\+-|\+/-|\s)*"
    rf"(?P<sd>{_NUM})(?!\.\d)|(?<![\w.]){_NUM}\s*(?:±|\+-|\+/-)\s*(?P<pm>{_NUM})(?![\w.])"
)
#: How many standard deviations of reruns one run may lie from their mean and still be noise: a
#: normal draw falls within 2 of them 95% of the time.
STD_BAND = 2.0


def stated_std(lines: Iterable[str]) -> tuple[float, str] | None:
    """``(std, sentence)``: the largest standard deviation the text states for repeated runs (a
    sentence with a standard deviation, :data:`_STATED_STD`, in a line that speaks of reruns or seeds,
    :data:`_RERUN`, or says the figure is a mean), else ``None``. A gap to the reference within
    :data:`STD_BAND` of it is run-to-run noise of the reference's own code."""
    found = []
    for t in lines:
        if not (_RERUN.search(t) or re.search(r"(?i)\b(?:mean|average[sd]?)\b", t)):
            continue
        for sentence in re.split(r"(?<=[.;!?])\s+", t):
            for m in _STATED_STD.finditer(sentence):
                v = float(m.group("sd") or m.group("pm"))
                if v > 0:
                    lo = sentence.rfind(",", 0, max(0, m.start() - 40)) + 1
                    found.append((v, sentence[max(lo, m.start() - 120) : m.end()].strip()))
    return max(found) if found else None


#: A line's shape: its text with every number replaced, so that the same print of two runs compares equal.
_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?", re.I)
#: ``name = value`` / ``name: value`` pairs of a result line (``train loss =   1.022, valid loss =   1.448,
#: AUC = 0.8550``); a name may hold spaces.
_RESULT_PAIR = re.compile(
    rf"(?P<name>[A-Za-z][\w@/\-]*(?: [A-Za-z][\w@/\-]*){{0,2}})\s*[:=]\s*(?P<v>-?{_NUM})(?![\w.])"
)


def file_spreads(console: Iterable, lines: Iterable[str]) -> list[Spread]:
    """Runs given as separate files (``run1.log``, ``run2.log``) in a text that says they are repeats of one
    configuration (:data:`_RERUN`: ``the same command with the same seed``): the last line of one shape
    (numbers aside) that every file prints, read as ``name = value`` pairs, gives one spread per name found in
    every file. When a held-out task metric is among them (:func:`mlaudit_core.roles.parse_name`: an accuracy
    or score not of the training split, ``AUC``), only those are returned: reruns are compared on their
    result, and a loss after one epoch moves more than the result does. Each spread records whether the text
    puts the variation down to chance (:data:`_CHANCE`)."""
    from .roles import parse_name

    lines = list(lines)
    if not any(_RERUN.search(t) for t in lines):
        return []
    by_file: dict[str, list[str]] = {}
    for c in console:
        by_file.setdefault(c.source, []).append(c.text)
    if len(by_file) < 2:
        return []
    shapes = [
        {_NUMBER.sub("#", t.strip()): t for t in texts if _RESULT_PAIR.search(t)}
        for texts in by_file.values()
    ]
    common = set.intersection(*(set(s) for s in shapes))
    if not common:
        return []
    # the shape printed last in the first file: the runs' final result line
    last = max(common, key=lambda k: list(shapes[0]).index(k))
    per_run = [
        {m["name"].strip().lower(): float(m["v"]) for m in _RESULT_PAIR.finditer(s[last])}
        for s in shapes
    ]
    names = [n for n in per_run[0] if all(n in r for r in per_run[1:])]
    task = [
        n
        for n in names
        if parse_name(n).family in ("acc", "score") and parse_name(n).split != "train"
    ]
    attributed = any(_CHANCE.search(t) for t in lines)
    out = []
    for n in task or names:
        vals = tuple(r[n] for r in per_run)
        if _same_scale(vals) and parse_name(n).family != "counter":
            out.append(Spread(vals, f"{n}: " + " / ".join(f"{v:g}" for v in vals), attributed))
    return out
