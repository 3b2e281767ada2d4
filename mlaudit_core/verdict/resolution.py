"""The resolution of a report's thread: which statement settled the failure, and what it names.

A failure report often holds no judgeable curve, only its thread. An analyst reading it looks for the
statement that settled the issue and asks what that statement is about, not how it is phrased:

1. **Find the resolution** (:func:`thread_resolution`), in this order:

   * an explanation: a sentence that states why (``because``, ``due to``, ``is caused``, ``the problem
     was``, ``turns out``, ``I found out that``), asserted (no question, hedge or condition);
   * a confirmed fix: a value that says the failure went away (``resolved``, ``solved``, ``it works``,
     ``did the trick``); the change is its own sentence that names a change (``change it to``, ``set``,
     ``use``, ``X = Y``), else the answer just before it by someone else (``You should use our provided
     checkpoint ...`` then ``Thanks! It works!``); an answer the asker acknowledges (``Ok, I got it,
     thanks``) is settled the same way;
   * a maintainer's instruction, not hedged (``Please modify the label``, ``You are supposed to convert
     the data``, ``the base_lr should be 1e-4 instead of 1e-5``).

2. **Class what it names** (:func:`object_class`), by small vocabularies of general classes: the run's
   randomness (a seed, the initialisation, sampling, variance, several runs), the evaluation (its
   protocol, split, metric, tolerance or threshold), the optimisation (the learning rate, warm-up, more
   steps or epochs), a setting (a flag, option, argument, environment variable, config key, ``X = Y``),
   an input (the dataset, labels, classes, a path or file, a checkpoint or pretrained weights, a
   tokenizer), a version or an install, the machine (memory, disk, a node, a driver, the network, a
   kill or preemption, a quota), or the project's code (a line, a function, a source file, a commit, a
   pull request, a bug). Randomness and the evaluation, when named, qualify everything else in the
   statement (``lower eval_batch_step`` is a setting of the evaluation); else the first class named wins.

The policy maps the kind: a setting, an input or a version is data_config, the code correctness_bug, the
machine infra_runtime, the optimisation model_convergence, the evaluation metric_policy; randomness is
healthy for a run compared with a reference (one draw of the run-to-run spread) and metric_policy for a
test or a gate (a check too tight for that spread).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from .statements import (
    _HEDGED,
    _NEGATION_BEFORE,
    _NOT_STATED,
    _PERSISTED,
    _SETUP_KEY,
    _THREAD_PERSON,
    _clause_before,
    _sentences,
    _thread_values,
    unasserted,
)

#: The kinds :func:`thread_resolution` returns, by the class of the object named.
_KIND = {
    "random": "seed",
    "evaluation": "evaluation",
    "optimisation": "learning_rate",
    "setting": "config",
    "input": "config",
    "version": "config",
    "machine": "environment",
    "code": "code",
}

#: The run's randomness: a seed, the (random) initialisation, sampling from a distribution, variance or
#: fluctuation between runs, several runs.
_RANDOM = re.compile(
    r"\bseeds?\b|\brandom(?:ness|ly)?\b|\binitiali[sz]ations?\b|\binitiation\b|\bstochastic\w*"
    r"|\bsampl\w*\s+(?:\w+\s+){0,2}?from\b|\bvarian(?:ce|t)\b|\bvariations?\b|\bfluctuat\w*"
    r"|\bnon-?determinis\w*|\b(?:several|multiple|many|few|\d+)\s+(?:more\s+)?(?:runs|times|trials)\b"
    r"|\brun-to-run\b|\bnoise\b",
    re.I,
)
#: The evaluation: its protocol, split or set, metric, evaluator, tolerance or threshold.
_EVALUATION = re.compile(
    r"\beval\w*|\bprotocol\b|\bmetrics?\b|\bminival\b|\bval(?:idation)?\s+(?:sets?|splits?|v\d)"
    r"|\btest\s+(?:sets?|splits?)\b|\bsplits?\b|\btoleranc\w*|\bthresholds?\b|\b[ar]tol\b|\bleaderboard\b",
    re.I,
)
#: The optimisation: the learning rate and its schedule, warm-up, training longer, the model's capacity.
_OPTIMISATION = re.compile(
    r"\blearning[ _-]?rates?\b|\b(?:base_|initial_|init_|max_)?lr\b|\bwarm-?up\b|\bschedul\w*"
    r"|\b(?:more|longer|larger|many)\s+(?:\w+\s+)?(?:iterations|epochs|steps|training)\b"
    r"|\b(?:iterations|epochs|steps)\s+(?:\w+\s+)?(?:larger|longer|more)\b|\btrain\w*\s+(?:\w+\s+)?longer\b"
    r"|\bcapacity\b|\bmodel size\b",
    re.I,
)
#: A setting: a flag, option, argument, environment variable (an all-capitals name), a config key, a
#: hyper-parameter, a ``name = value`` assignment, a ``snake_case`` setting name, the batch size.
_SETTING = re.compile(
    r"\bflags?\b|(?<![\w-])--[a-z][\w-]+|\boptions?\b|\barguments?\b|\bsettings?\b|\bconfig\w*|\bya?ml\b"
    r"|\bhyper-?param\w*|\bparam(?:eter)?s\b|\benviron\w*|(?-i:\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b)"
    r"|\b[a-z]\w*\s*=\s*[\w\"'.-]|\b[a-z]+(?:_[a-z]+)+\b(?![.(]\w)|\bbatch[ _-]?size\b|\bdrop_?last\b",
    re.I,
)
#: An input: the dataset and its labels, annotations or class count, a path or file, a checkpoint or
#: pretrained weights, a tokenizer or vocabulary.
_INPUT = re.compile(
    r"\bdata(?:sets?)?\b(?![ _-]?loader)|\blabels?\b|\bannotations?\b|\bclass(?:es)?\b|\bnum_classes\b"
    r"|\bground[ -]?truth\b|\bimages?\b|\bpaths?\b|\bfiles?\b|\bfolders?\b|\bformat\b|\bcheckpoints?\b"
    r"|\bweights\b|\bpre-?trained\b|\b\w+\.(?:pth?|ckpt|bin|safetensors|h5|json|csv|txt)\b|\btokeni[sz]er\b"
    r"|\bvocab\w*|\btrainids?\b|\bmasks?\b",
    re.I,
)
#: A version or an install of a library.
_VERSION = re.compile(
    r"\bversions?\b|\b(?:re)?install\w*|\bupgrad\w*|\bdowngrad\w*|\bpip\b|\bconda\b|\bpackages?\b"
    r"|\blibrar(?:y|ies)\b|\brequirements\b",
    re.I,
)
#: The machine: memory, storage (a disk, an SSD), a node, a driver, the network, a kill or preemption, a quota,
#: a container.
_MACHINE = re.compile(
    r"\bmemory\b|\bram\b|\bswap\b|\boom\b|\bdisks?\b|\bstorage\b|\bnodes?\b|\bdrivers?\b|\bnetwork\b"
    r"|\bkill\w*|\bpreempt\w*|\bquota\b|\bhardware\b|\bcluster\b|\bservers?\b|\bdocker\b|\bcontainers?\b"
    r"|\bssds?\b|\bhdds?\b|\bnvme\b|\bshm\b|/dev/shm",
    re.I,
)
#: The project's code: a line, a function, a source file, a call (not one passing ``name=value``: a setting), a
#: commit, a pull request, a bug.
_CODE = re.compile(
    r"\blines?\b(?!\s+of\s+(?:the\s+)?log)|\bfunctions?\b|\bcodes?\b|\bbugs?\b|\bimplementation\b"
    r"|\b\w+\.(?:py|cpp|cu|lua|sh|m)\b|(?<![\w.])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*\([^()=]{0,40}\)"
    r"|\bcommit\b|\b[0-9a-f]{7,40}\b(?<=\d\w{6})|\bpull request\b|(?-i:\bPR\b)|#\d+|\bpatch\w*|\bscripts?\b",
    re.I,
)
#: The classes in the order that breaks a tie (two named at one position: ``eval_batch_step`` is the
#: evaluation's setting).
_CLASSES = (
    ("random", _RANDOM),
    ("evaluation", _EVALUATION),
    ("optimisation", _OPTIMISATION),
    ("setting", _SETTING),
    ("input", _INPUT),
    ("version", _VERSION),
    ("machine", _MACHINE),
    ("code", _CODE),
)


def object_class(text: str) -> str | None:
    """The class of what ``text`` (the object of a fix or an explanation) names first: ``random``,
    ``evaluation``, ``optimisation``, ``setting``, ``input``, ``version``, ``machine`` or ``code``
    (:data:`_CLASSES`, a tie broken by their order); ``None`` when it names none."""
    found = [(m.start(), i) for i, (_, pat) in enumerate(_CLASSES) if (m := pat.search(text))]
    return _CLASSES[min(found)[1]][0] if found else None


#: A statement of why: ``because``, ``due to``, ``is caused``, ``the problem was``, ``turns out``, ``I found
#: out that``, ``My problem was that``.
_WHY = re.compile(
    r"\bbecause\b|\bdue to\b|\bcaused\b|\b(?:root\s+)?cause\s+(?:is|was)\b|\breason\s+(?:is|was)\b"
    r"|\b(?:the|my|this|our|real|main)\s+(?:\w+\s+)?(?:problem|issue|mistake|error|culprit)\s+(?:is|was)\s+"
    r"(?!not\b|no\b|fixed|solved|resolved|gone|still|present|the same)|\bturn(?:s|ed)\s+out\b"
    r"|\bfound\s+(?:out\s+)?(?:that\b|,)",
    re.I,
)
#: The writer found the cause: ``I found out``, ``turns out``, ``I realised``, ``My problem was``.
_FOUND = re.compile(
    r"\b(?:found|realized|realised|figured|noticed|discovered)\b|\bturn(?:s|ed)\s+out\b"
    r"|\b(?:my|the)\s+(?:\w+\s+)?(?:problem|issue|mistake|cause|culprit)\s+(?:is|was)\b|\bmy (?:bad|fault)\b",
    re.I,
)
#: The failure went away or the answer settled it: ``resolved``, ``solved``, ``it works``, ``did the
#: trick``, ``fixed``, ``I got it``.
_SETTLED = re.compile(
    r"\b(?:resolved|solved|fixed|went away|is gone|no longer)\b"
    # ``works`` as the verb, not the noun (``the same with other works``)
    r"|(?<!\bother )(?<!\bprevious )(?<!\bprior )(?<!\bthese )(?<!\bthose )(?<!\btheir )(?<!\bour )"
    r"(?<!\bmany )(?<!\bsome )(?<!\bsimilar )(?<!\brelated )\b(?:works|worked)\b"
    r"|\b(?:can|will|does|did)\s+(?:\w+\s+)?(?:solve|fix|resolve)\s+(?:the|this|that|it|my|these)\b"
    r"|\b(?:did|does)\s+the\s+(?:job|trick)\b|\bi\s+(?:got|get|see)\s+it\b|\bthat\s+(?:explains|makes sense)\b",
    re.I,
)
#: A change named: a verb of change, or ``instead of`` / ``should be``.
_CHANGE = re.compile(
    r"\b(?:chang(?:e|ed|es|ing)|modif(?:y|ied|ies|ying)|replac(?:e|ed|es|ing)|set(?:ting)?|us(?:e|ed|ing)|"
    r"switch(?:ed|es|ing)?|convert(?:ed|s|ing)?|delet(?:e|ed|ing)|remov(?:e|ed|ing)|add(?:ed|ing)?|"
    r"lower(?:ed|ing)?|rais(?:e|ed|ing)|increas(?:e|ed|ing)|decreas(?:e|ed|ing)|reduc(?:e|ed|ing)|"
    r"mak(?:e|ing)|made|upgrad(?:e|ed|ing)|downgrad(?:e|ed|ing)|updat(?:e|ed|ing)|(?:re)?install(?:ed|ing)?|"
    r"relabel(?:l?ed|l?ing)?|fix(?:ed|ing)?)\b"
    r"|\binstead of\b|\bshould be\b",
    re.I,
)
#: An instruction: ``Please X``, ``You should X``, ``you need to X``, ``You are supposed to X``, ``X
#: should be Y``.
_INSTRUCTION = re.compile(
    r"^\W*(?:please\s+)?(?:use|set|change|modify|convert|replace|remove|delete|add|update|upgrade|"
    r"downgrade|install|lower|raise|increase|decrease|reduce|relabel)\b"
    r"|\bplease\s+(?:\w+\s+)?(?:use|set|change|modify|convert|replace|remove|delete|add|update|upgrade|"
    r"downgrade|install|lower|raise|increase|decrease|reduce|relabel)\b"
    r"|\byou\s+(?:should|need\s+to|have\s+to|must|are\s+supposed\s+to)\s+(?!\w+\s+if\b)"
    r"|\bshould\s+be\s+[^.;!?]{0,40}?\binstead\s+of\b",
    re.I,
)


#: A belief or a hypothesis, not a statement of what happened: ``could have caused``, ``I suspect``, ``I
#: think``, ``the only hypothesis``.
_BELIEF = re.compile(
    r"\b(?:could|might|may|must)\s+have\b|\bhypothes\w*|\bsuspect\w*|\bsuspicious\b"
    r"|\b(?:i|we)\s+(?:\w+\s+)?(?:think|believe|assume|feel)\b",
    re.I,
)


def _asserted(s: str, start: int) -> bool:
    """Whether sentence ``s`` asserts what starts at ``start``: not a question, no hedge, belief, condition
    or attempt in it, no negation before it in its clause, and nothing said to persist."""
    return not (
        unasserted(s)
        or _HEDGED.search(s)
        or _BELIEF.search(s)
        or _NOT_STATED.search(s)
        or _PERSISTED.search(s)
        or _NEGATION_BEFORE.search(_clause_before(s, start))
    )


#: A maintainer's pull request or commit named as merged or landed (in the key that introduces its title:
#: ``maintainer PR #351 (merged)``), and a change in its title: the project's code changed.
_LANDED = re.compile(
    r"(?:\bPR\b|\bpull request\b|\bcommit\b)[^:]{0,40}?(?:#\d+|\b[0-9a-f]{7,40}\b)[^:]{0,40}?\b(?:merged|landed)\b",
    re.I,
)
_LANDED_CHANGE = re.compile(r"\bfix\w*|\bbump\w*|\bpatch\w*|\bupdat\w*|\bcorrect\w*", re.I)
_MAINTAINER = re.compile(r"^(?:maintainer|(?:co-?)?author|owner|developer|contributor)\b", re.I)

#: How far after a statement's marker its object is read (characters).
WINDOW = 120


def _explanation(sents: list[str]) -> tuple[str, str] | None:
    """``(class, sentence)`` of the first sentence of ``sents`` that states why (:data:`_WHY`), asserted,
    whose object (up to :data:`WINDOW` characters after the marker) names a class."""
    for s in sents:
        m = _WHY.search(s)
        if m is None or not _asserted(s, m.start()):
            continue
        cls = object_class(s[m.end() : m.end() + WINDOW])
        if cls is not None:
            return cls, s.strip()
    return None


def _change(sents: list[str], instruction: bool, asked: str = "") -> tuple[str, str] | None:
    """``(class, sentence)`` of the first sentence of ``sents`` that names a change (:data:`_CHANGE`; with
    ``instruction``, an instruction: :data:`_INSTRUCTION`), asserted (an instruction under a condition
    that the thread before it, ``asked``, meets counts: :func:`_condition_met`), and the class of its
    object: the sentence from the change on (for ``X should be Y instead of Z``, from ``X``'s clause)."""
    pat = _INSTRUCTION if instruction else _CHANGE
    for s in sents:
        m = pat.search(s)
        if m is None or _SETTLED.fullmatch(s.strip(" .!")):
            continue
        if not _asserted(s, m.start()) and not (
            instruction and _condition_met(s, asked) and _asserted(_after_condition(s), 0)
        ):
            continue
        lo = m.start()
        if m.group(0).lower().startswith("should"):
            lo -= len(_clause_before(s, m.start()))
        cls = object_class(s[lo : m.end() + WINDOW])
        if cls is not None:
            return cls, s.strip()
    return None


#: A condition that opens a sentence: ``If you are fine-tuning LLaMa-2 7B,``, ``When start from scratch,``.
_CONDITION = re.compile(r"^\W*(?:if|when|whenever)\s+([^,;:]{3,80}),\s*", re.I)
#: Words that say nothing of a condition's content.
_FUNCTION_WORDS = frozenset(
    "you your are is was were the a an to of in on for with from and or it this that using use".split()
)


def _after_condition(s: str) -> str:
    """Sentence ``s`` without its opening condition (:data:`_CONDITION`)."""
    m = _CONDITION.match(s)
    return s[m.end() :] if m else s


def _condition_met(s: str, asked: str) -> bool:
    """Whether sentence ``s`` opens with a condition (:data:`_CONDITION`) that the thread before it
    (``asked``: what the reporter and the setup lines said) meets: at least half of the condition's
    content words (not :data:`_FUNCTION_WORDS`) occur there. ``When start from scratch, the base_lr should
    be 1e-4`` answers a reporter who trained ``from scratch``: the instruction is for their run."""
    m = _CONDITION.match(s)
    if m is None or not asked:
        return False
    words = [w for w in re.findall(r"[\w.-]+", m.group(1).lower()) if w not in _FUNCTION_WORDS]
    said = set(re.findall(r"[\w.-]+", asked.lower()))
    return bool(words) and 2 * sum(w in said for w in words) >= len(words)


def _settled(sents: list[str]) -> bool:
    """Whether one of ``sents`` says the failure went away or the answer settled it (:data:`_SETTLED`,
    asserted)."""
    return any((m := _SETTLED.search(s)) and _asserted(s, m.start()) for s in sents)


def _own(key: str, text: str) -> list[str]:
    return _sentences(text.removeprefix(f"{key}: "))


def _person(key: str) -> str:
    """The person of a thread value's key (``reporter NAME (later)`` -> ``reporter NAME``)."""
    return re.sub(r"\s*\(.*$", "", key).strip().lower()


def thread_resolution(params: Mapping[str, object]) -> tuple[str, str] | None:
    """``(kind, sentence)``: the statement that settled a report's thread, classed by what it names
    (module docstring), or ``None``. ``kind`` is ``"seed"`` (randomness), ``"evaluation"``,
    ``"learning_rate"`` (the optimisation), ``"config"`` (a setting, an input, a version),
    ``"environment"`` (the machine) or ``"code"``. Read in order: the first asserted explanation of a
    maintainer (author, owner, contributor), then anyone's who found it or whose value says it settled;
    a maintainer's pull request or commit named as merged with a fix in its title (the code); a confirmed
    change (in the value that
    confirms it, else in the answer just before it, or that answer as an explanation); a maintainer's
    instruction. The sentence names its speaker and is cut to 240 characters."""
    values = [(k, t) for k, t in _thread_values(params) if _THREAD_PERSON.match(k)]
    if not values:
        return None
    setup = " ".join(str(v) for k, v in params.items() if _SETUP_KEY.match(str(k)))
    maintainer = _MAINTAINER
    order = [v for v in values if maintainer.match(v[0])] + [
        v for v in values if not maintainer.match(v[0])
    ]
    for key, text in order:
        sents = _own(key, text)
        if not maintainer.match(key) and not (_FOUND.search(text) or _settled(sents)):
            continue  # anyone else's "because" is a guess until they found it or it settled the issue
        got = _explanation(sents)
        if got is not None:
            return _KIND[got[0]], f"{key}: {got[1]}"[:240]
    for key, text in values:
        if maintainer.match(key) and _LANDED.search(key) and _LANDED_CHANGE.search(text):
            return "code", text[:240]  # a change merged into the project is a change of its code
    for i in range(len(values)):
        got = _confirmed(values, i)
        if got is not None:
            return _KIND[got[0]], got[1][:240]
    for i, (key, text) in enumerate(values):
        if maintainer.match(key):
            asked = " ".join([setup, *(t for _, t in values[:i])])
            got = _change(_own(key, text), instruction=True, asked=asked)
            if got is not None:
                return _KIND[got[0]], f"{key}: {got[1]}"[:240]
    return None


def _confirmed(values: list[tuple[str, str]], i: int) -> tuple[str, str] | None:
    """``(class, said)`` when thread value ``values[i]`` confirms a resolution (:data:`_SETTLED`): the change
    it names itself, else the answer just before it by another person (a change or an instruction named
    there, else that answer's first classed sentence); ``None`` otherwise."""
    key, text = values[i]
    sents = _own(key, text)
    if not _settled(sents):
        return None
    got = _change(sents, instruction=False)
    if got is not None:
        return got[0], f"{key}: {got[1]}"
    if i == 0 or _person(values[i - 1][0]) == _person(key):
        return None
    pkey, ptext = values[i - 1]
    psents = [s for s in _own(pkey, ptext) if "?" not in s and "\uff1f" not in s]
    got = _change(psents, instruction=True) or _change(psents, instruction=False)
    if got is None and _MAINTAINER.match(pkey):
        got = next(
            ((c, s.strip()) for s in psents if not _HEDGED.search(s) and (c := object_class(s))),
            None,
        )
    if got is None:
        return None
    return got[0], f"{pkey}: {got[1]} (then {key}: {text.removeprefix(f'{key}: ')[:60]})"
