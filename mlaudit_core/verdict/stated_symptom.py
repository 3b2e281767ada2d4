"""The outcome a report states in words: what the reporter saw, when no curve could be judged.

Many failure reports hold no judgeable log, only the reporter's description of the symptom: ``the
reward is stuck around 145``, ``the test_reward never change``, ``after 200 epochs the loss is still
about 4.9``, ``I'm getting lowering loss scores across epochs, but accuracy is always zero``, ``the loss
suddenly becomes nan``, ``from 2.9 it/s to 1.6 it/s``. An analyst takes that sentence as the observation
it is (the reporter watched the run) and names the outcome it describes; a maintainer who answers that
the behaviour is normal overrules it (the policy checks that before this reading is used).

:func:`stated_symptom` reads one sentence at a time, in this order (the first kind found wins):

* ``diverged``: a loss, a gradient norm or the model's outputs stated non-finite (``the loss becomes
  nan``, ``grad_norm will be nan``), or a loss stated to blow up (``the loss rises rapidly``, ``the loss
  sharply increased``, ``explodes``, ``a second run exploded``);
* ``plateaued``: a training figure stated not to move (``stuck around``, ``stays about``, ``is still
  about 4.9``, ``keeps unchanged``, ``never change``, ``does not go down``, ``doesn't seem to decrease``, ``does not converge``);
* ``underfit``: a task metric stated at its floor (``accuracy is always zero``, ``the mAP is basically
  0``) or stated very low or very bad (``The validation accuracy is very low after 90 epochs``);
* ``crashed``: the run stated to have stopped on an error, in words (``it crashed``, ``it fails with
  "..."``, ``a device-side assert triggered``);
* ``slow``: a throughput or step time stated at two figures of one unit (``from 2.9 it/s to 1.6 it/s``,
  ``42.55s/it`` against ``538.26s/it`` beside a sentence that the run got slower), the later or the
  reported one worse by more than :data:`SLOW_DROP`, or a slowdown stated as a factor above
  1 / (1 - :data:`SLOW_DROP`) (``5x slower``, ``the training slows down 2~3x``).

A sentence counts only when it is asserted: not a question, and no negation, condition or hedge before
the symptom in its clause (``if the loss becomes nan``, ``maybe the loss is stuck``).
"""

from __future__ import annotations

import re

from .statements import _asserted


def _sentences(text: str) -> list[str]:
    """The sentences of ``text``: split after ``.``, ``!`` or ``?`` (and a closing quote) before a space,
    at `` -- `` and at ``; ``."""
    return [t for t in re.split(r"(?<=[.!?])[\"'”’]?\s+|\s+--\s+|;\s+", text) if t.strip()]


#: A throughput fall (or a step-time rise) larger than this share is a slowdown: SY001's threshold
#: (run-to-run throughput jitter on shared clusters is typically within 10-15%; a drop of more than 30%
#: is not jitter).
SLOW_DROP = 0.30

#: A training figure a reporter watches: a loss (not the loss scale of mixed precision), a reward or
#: return, an accuracy or task score.
_FIGURE = (
    r"(?:\w*loss(?:es)?(?!\s*scal)|\w*rewards?|returns?|accurac(?:y|ies)|\w*acc|top-?[15]|m?ap(?:50)?|f1|dice|"
    r"m?iou|bleu|wer|cer|psnr|ssim|auc|scores?|perplexity|ppl)"
)
#: A task metric, higher is better (``very low`` is bad only for these).
_HIGHER_BETTER = (
    r"(?:\w*accurac(?:y|ies)|\w*acc|top-?[15]|m?ap(?:50)?|f1|dice|m?iou|bleu|psnr|ssim|auc|"
    r"\w*rewards?|returns?|precision|recall)"
)

_NONFINITE = re.compile(
    r"\b(?:\w*loss(?:es)?(?!\s*scal)|grad(?:ient)?[ _-]?norms?|gradients?|grads?|weights?|outputs?|logits?|"
    r"predictions?)\b[^.;!?]{0,40}?\b(?:becomes?|became|becoming|turns?|turned|turning|goes|went|going|"
    r"is|are|was|were|will be|gets?|got|getting|to|into|reaches?|reached)\s+(?:\w+\s+){0,2}?"
    r"(?:nan|inf|infinity|infinite|non-?finite)\b"
    r"|\b(?:gets?|got|getting|gives?|gave|giving|produc\w+|see|saw|seeing|observ\w+|ha(?:ve|s|d))\s+"
    r"(?:an?\s+|the\s+)?(?:nan|inf)\s+(?:loss(?:es)?|gradients?|grad[ _-]?norms?)\b"
    # a loss that blows up: 'the loss rises rapidly', 'the loss explodes'
    r"|\b\w*loss(?:es)?\b(?!\s*scal)[^.;!?]{0,20}?\b(?:(?:rises?|rose|rising|increas\w*|grows?|grew|goes up|went up|"
    r"shoots? up|shot up|jumps?|jumped)\s+(?:\w+\s+)?(?:rapidly|sharply|quickly|suddenly|dramatically|"
    r"exponentially)|explod\w*|blows? up|blew up)\b"
    # the same with the adverb first: 'then the loss sharply increased'
    r"|\b\w*loss(?:es)?\b(?!\s*scal)[^.;!?]{0,20}?\b(?:rapidly|sharply|quickly|suddenly|dramatically|"
    r"exponentially)\s+(?:rises?|rose|increas\w*|grows?|grew|goes up|went up|shoots? up|shot up|jumps?|"
    r"jumped|spikes?|spiked)\b"
    r"|\b(?:run|training|gradients?)\b[^.;!?]{0,20}?\b(?:explod(?:es|ed|ing)|blows? up|blew up)\b",
    re.I,
)
_PLATEAU = re.compile(
    # a figure with a verb of staying: 'the reward is stuck around 145', 'the loss stays about 4.9'
    rf"\b{_FIGURE}\b[^.;!?]{{0,40}}?\b(?:(?:is|are|was|were|seems?|gets?|got|still|always)\s+){{0,2}}"
    r"(?:stuck|flat|constant|unchanged|frozen|stagnant|stagnat\w*|plateau\w*)\b"
    rf"|\b{_FIGURE}\b[^.;!?]{{0,40}}?\b(?:stays?|stayed|remains?|remained|keeps?|kept|hover\w*|sits?)"
    r"\s+(?:\w+\s+){0,2}?(?:(?:about|around|at|near|~)\s*)?-?\d"
    rf"|\b{_FIGURE}\b[^.;!?]{{0,40}}?\b(?:is|are|was|were)\s+still\s+(?:about|around|at|near|~)\s*-?\d"
    rf"|\b{_FIGURE}\b[^.;!?]{{0,40}}?\bkeeps?\s+(?:\w+\s+)?(?:unchanged|the same|constant)\b"
    # a figure stated not to move: 'the test_reward never change', 'the loss does not go down'
    rf"|\b{_FIGURE}\b[^.;!?]{{0,40}}?\b(?:never|not|doesn't|don't|didn't|won't|can't|cannot|fails? to)\s+"
    r"(?:\w+\s+){0,2}?(?:chang\w*|mov\w*|decreas\w*|go(?:es|ing)? down|go(?:es|ing)? to (?:zero|0)\b|"
    r"reach(?:es|ing)? (?:zero|0)\b|drop\w*|improv\w*|converg\w*|lower\w*|fall\w*)"
    # the training stated not to converge: 'PPO does not converge'
    r"|\b(?:does not|doesn't|did not|didn't|never|not|cannot|can't|fails? to|unable to)\s+converg\w*",
    re.I,
)
_FLOOR = re.compile(
    rf"\b{_HIGHER_BETTER}\b[^.;!?]{{0,30}}?\b(?:(?:is|are|was|were|stays?|remains?|gets?|got|reads?|at|"
    r"always|basically|almost|nearly|near|close to|still|only|just|all|exactly|of)\s+){1,3}"
    r"(?:zero|0(?:\.0+)?\s?%?)(?!\w|\.\d)"
    rf"|\b{_HIGHER_BETTER}\b[^.;!?]{{0,30}}?\b(?:very|extremely|really|so|too|terribly)\s+(?:low|bad|poor)\b"
    r"|\bresults?\b[^.;!?]{0,20}?\b(?:very|extremely|really|so|terribly)\s+(?:bad|poor)\b",
    re.I,
)
#: A rate or a time per unit of work, with its figure.
_UNIT = (
    r"(?:it/s|s/it|sec/it|steps?/s(?:ec)?|s/step|sec/step|samples?/s(?:ec)?|sam/sec|imgs?/s|images?/s(?:ec)?|"
    r"tokens?/s(?:ec)?|batch(?:es)?/s(?:ec)?|s/epoch|s per epoch|seconds? per (?:epoch|step|iteration))"
)
_RATE = re.compile(rf"(?<![\w.])(?P<v>\d+(?:\.\d+)?)\s?(?P<u>{_UNIT})", re.I)
_FROM_TO = re.compile(
    rf"\bfrom\s+(?P<a>\d+(?:\.\d+)?)\s?(?P<ua>{_UNIT})?\s+to\s+(?P<b>\d+(?:\.\d+)?)\s?(?P<ub>{_UNIT})",
    re.I,
)
#: The run stated slower: ``way slower``, ``much slower``, ``huge drop in performance``, ``slows down``.
_SLOWER = re.compile(
    r"\b(?:slower|slow(?:s|ed|ing)?\s+down|(?:drop|fall|decrease|regression)\w*\s+(?:\w+\s+){0,2}?"
    r"(?:in\s+)?(?:performance|speed|throughput))\b",
    re.I,
)


#: A slowdown stated as a factor: ``5x slower``, ``2-3 times slower``, ``the training slows down 2~3x``,
#: ``slowed down by a factor of 4``; the low end of a range is read.
_FACTOR_SLOWER = re.compile(
    r"(?<![\w.])(?P<f>\d+(?:\.\d+)?)(?:\s*[~\-–]\s*\d+(?:\.\d+)?)?\s*(?:x|×|times)\s+slower\b"
    r"|\bslow(?:s|ed)?\s+down\s+(?:by\s+)?(?:(?:about|around|roughly|almost|nearly|~)\s*)?"
    r"(?:a\s+factor\s+of\s+)?(?P<g>\d+(?:\.\d+)?)(?:\s*[~\-–]\s*\d+(?:\.\d+)?)?\s*(?:x|×|times)?(?![\w.])",
    re.I,
)


def _slow_factor(s: str) -> str | None:
    """``s`` when it states a slowdown by a factor whose lost throughput (1 - 1/factor) exceeds
    :data:`SLOW_DROP` (a factor above ~1.43), asserted; else ``None``."""
    for m in _FACTOR_SLOWER.finditer(s):
        factor = float(m.group("f") or m.group("g"))
        if m.group("g") and not re.search(r"(?:x|×|times|factor)", m.group(0), re.I):
            continue  # 'slows down 3' without a factor word is not a factor
        if factor > 0 and 1 - 1 / factor > SLOW_DROP and _asserted(s, m.start()):
            return s.strip()
    return None


#: A library's version changed: a verb of upgrade before a release number (``upgrading from 0.12.1 to
#: 0.13.0``, ``when upgrading to 1.2.1``, ``after updating to v2.3``, ``upgraded torch to 2.1``) or before
#: the newest release (``updated to the latest version``), or two release numbers joined by an arrow
#: (``burn 0.12.1 -> 0.13.0``). A release number has three parts or a ``v`` (``2.1`` alone is as likely a
#: setting's value: ``updated the lr to 0.001``), or two after a framework's name.
_RELEASE = (
    r"(?<![\w.])(?:v\d+(?:\.\d+)+|\d+\.\d+\.\d+(?:\.\d+)*)(?:(?:a|b|rc|post|dev)\d*)?(?![\w.])"
)
_FRAMEWORK_RELEASE = (
    r"\b(?:py)?torch|tensorflow|\btf\b|\bjax(?:lib)?\b|\bcuda\b|cudnn|mxnet|paddle(?:paddle)?|keras|"
    r"transformers|deepspeed|lightning|numpy"
)
_VERSION_CHANGE = re.compile(
    rf"\b(?:upgrad\w*|downgrad\w*|updat\w*|bump\w*)\b[^.;!?]{{0,60}}?(?:{_RELEASE}|"
    rf"(?:{_FRAMEWORK_RELEASE})\s*(?:to\s+|==?\s*)?\d+\.\d+\b|"
    r"\b(?:the\s+)?(?:latest|newest|new(?:er)?)\s+(?:version|release)\b)"
    rf"|{_RELEASE}\s*(?:->|→|=>)\s*{_RELEASE}",
    re.I,
)


def stated_version_change(lines: list[str]) -> str | None:
    """The first sentence of ``lines`` (a report's text, not a maintainer's or an author's line) that
    states a library's version changed (:data:`_VERSION_CHANGE`), asserted; else ``None``."""
    for s in _observed(lines):
        m = _VERSION_CHANGE.search(s)
        if m and _asserted(s, m.start()):
            return s.strip()[:240]
    return None


def _is_time(unit: str) -> bool:
    """A time per unit of work (``s/it``: higher is slower), not a rate (``it/s``)."""
    u = unit.lower()
    return u.startswith(("s", "sec")) and not u.startswith(("sam", "step")) or " per " in u


def _norm(unit: str) -> str:
    return re.sub(r"\s+", " ", unit.lower()).replace("sec", "s")


def _worse_by(a: float, b: float, unit: str) -> float:
    """How much slower ``b`` is than ``a`` (a share of ``a``'s throughput lost), both in ``unit``."""
    if a <= 0 or b <= 0:
        return 0.0
    rate_a, rate_b = (1 / a, 1 / b) if _is_time(unit) else (a, b)
    return 1 - rate_b / rate_a


def _slow_from_to(s: str) -> str | None:
    m = _FROM_TO.search(s)
    if m is None:
        return None
    unit = m.group("ub")
    if m.group("ua") and _norm(m.group("ua")) != _norm(unit):
        return None
    drop = _worse_by(float(m.group("a")), float(m.group("b")), unit)
    return s.strip() if drop > SLOW_DROP else None


def _slow_two_figures(lines: list[str]) -> str | None:
    """A sentence of ``lines`` (sentences) that the run got slower, and two figures of one unit in them
    whose worst is slower than the first by more than :data:`SLOW_DROP`."""
    said = next(
        (s.strip() for s in lines if (m := _SLOWER.search(s)) and _asserted(s, m.start())), None
    )
    if said is None:
        return None
    by_unit: dict[str, list[float]] = {}
    for line in lines:
        for m in _RATE.finditer(line):
            by_unit.setdefault(_norm(m.group("u")), []).append(float(m.group("v")))
    for unit, vals in by_unit.items():
        worst = max(vals) if _is_time(unit) else min(vals)
        if len(vals) >= 2 and _worse_by(vals[0], worst, unit) > SLOW_DROP:
            return said
    return None


#: The run stated to have stopped on an error or a kill, in words: ``it crashed``, ``"killed" appears``, ``it fails with "Expected more than 1
#: value per channel"``, ``throws an error``, ``the error is raised``, a CUDA ``device-side assert
#: triggered``, a ``segmentation fault``. A pasted exception line alone is not read here (the crash
#: signatures read the log's tracebacks).
_CRASH = re.compile(
    r"\bcrash(?:ed|es)\b|\b(?:fails?|failed|failing|dies|died|stops?|stopped|ends?|ended|exits?|exited)\s+with\b"
    r"|\b(?:throws?|threw|thrown|raises?|raised|gives?|gave|gets?|got|shows?|showed|hits?)\s+(?:me\s+)?"
    r"(?:(?:an?|the|this|that|following|same)\s+)*(?:[\w-]+\s+)?(?:error|exception)s?\b"
    r"|\b(?:error|exception)\s+(?:is\s+|was\s+)?(?:raised|thrown)\b|\bdevice-side assert(?:ion)? triggered\b"
    r"|\bsegmentation fault\b|\bcore dumped\b|\b(?:is|was|got|gets|been)\s+killed\b|[\"'“]killed[\"'”]",
    re.I,
)
_KINDS = (
    ("diverged", _NONFINITE),
    ("plateaued", _PLATEAU),
    ("underfit", _FLOOR),
    ("crashed", _CRASH),
)
#: A line a maintainer, an author or a project member said (``maintainer NAME: ...`` of a report's
#: context): an explanation or an answer, not the observation of the run.
_ANSWER_KEY = re.compile(
    r"^(?:maintainer|(?:co-?)?author|owner|developer|contributor|collaborator|member)\b[^:]*:", re.I
)
#: An early stop's own reason (``val_acc does not improve after 3, stopping the fitting``, ``Training until
#: validation scores don't improve for 50 rounds``): the stop rule at work, which the early-stop readings
#: judge.
_STOP_REASON = re.compile(r"\b(?:patience|early[ _-]?stop\w*|stopping|until)\b", re.I)


def _observed(lines: list[str]) -> list[str]:
    """The sentences of ``lines`` that can state an observation: not a maintainer's or an author's
    line, not an early stop's reason."""
    return [
        s
        for line in lines
        if not _ANSWER_KEY.match(line)
        for s in _sentences(line)
        if not _STOP_REASON.search(s)
    ]


def stated_symptom(lines: list[str]) -> tuple[str, str] | None:
    """``(outcome, sentence)``: the outcome a sentence of a report's text states (the reporter's symptom),
    else ``None``. ``lines``: the report's text (its pasted lines and the ``key: value`` lines of its
    context; :func:`mlaudit_core.reference_gap.text_lines`). ``outcome`` is ``"diverged"``,
    ``"plateaued"``, ``"underfit"``, ``"crashed"`` or ``"slow"`` (the module's docstring gives the readings); the
    sentence is cut to 240 characters."""
    said = _observed(lines)
    for outcome, pat in _KINDS:
        for s in said:
            m = pat.search(s)
            if m and _asserted(s, m.start()):
                return outcome, s.strip()[:240]
    for s in said:
        got = _slow_from_to(s)
        if got is not None and _asserted(s, 0):
            return "slow", got[:240]
    slow = _slow_two_figures(said)
    if slow is None:
        slow = next((got for s in said if (got := _slow_factor(s)) is not None), None)
    return ("slow", slow[:240]) if slow is not None else None
