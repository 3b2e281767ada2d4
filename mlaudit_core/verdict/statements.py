"""What a report's sentences state about the run: read from its prose params.

A failure report comes with prose (``task: ...``, ``config (reporter): ...``, ``reporter: "..."``,
``maintainer NAME: "..."`` lines of a context file, read as params). A careful analyst reads two
kinds of statement there that no curve carries:

* the precision the run used, named in a sentence (:func:`stated_precision`): precision evidence like
  a ``precision = 16`` param (:func:`.evidence.precision_evidence`);
* that the same failure went away when only the software stack or the machine changed (another
  PyTorch / TensorFlow / CUDA / cuDNN / driver version, another GPU), code, data and settings unchanged
  (:func:`environment_fix`): the environment is then the cause (infra_runtime), not the model or the
  data, whatever the symptom (a NaN, a crash).

Only values of at least :data:`PROSE_WORDS` words are read: one-word values are settings, read by key.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

#: Prose: a value of at least this many words is a sentence or a settings list, not one setting.
PROSE_WORDS = 3

#: A reduced-precision mode named in a sentence or a settings list (a report's ``task:`` or
#: ``config:`` line): ``AMP fp16 mixed precision``, ``precision 16-true``, ``--fp16``, ``bf16=True``,
#: Lightning's precision values (``16-true``, ``bf16-mixed``) on their own, ``f16`` (the dtype's short name
#: in numpy/JAX and in reports), and transformers/bitsandbytes' ``load_in_4bit`` / ``load_in_8bit`` (weights
#: quantised, computed in 16-bit).
#: ``AMP`` counts only in capitals (the word "amp" is not a setting).
_PRECISION_STATED = re.compile(
    r"(?<![\w-])(?:--)?(?:"
    r"(?:precision|mixed_precision|dtype)\s*[=:]?\s*[\"']?(?:16-true|16-mixed|bf16-true|bf16-mixed|"
    r"fp16|bf16|float16|bfloat16|16)\b"
    r"|(?:bf)?16-(?:true|mixed)\b|(?-i:AMP)\b|fp16|bf16|float16|bfloat16|f16\b|load_in_[48]bit\b|"
    r"mixed[- ]precision|"
    r"half[- ]precision|"
    r"torch\.cuda\.amp|apex\.amp|GradScaler|autocast)",
    re.I,
)
#: A negation before the mode in the same clause (``fp16 not used``, ``without AMP``, ``fp16=False``,
#: ``disable AMP``): the sentence says the mode is off, or what turning it off did.
_PRECISION_OFF = re.compile(
    r"\b(?:no|not|without|disabl\w*|turn\w* off|switch\w* off|remov\w*|instead of)\b[^.;,]{0,30}$"
    r"|^\W{0,3}(?:=|:)?\s*(?:false|0|off|none|no)\b|^[^.;,]{0,12}\b(?:not used|off|disabled|false)\b",
    re.I,
)


def stated_precision(text: str) -> str | None:
    """The clause of a prose value (>= :data:`PROSE_WORDS` words: a report's task or config line)
    that names a reduced-precision mode as in use, or ``None``. A mode named after a negation in the
    same clause (``without fp16``, ``disable AMP``) or followed by one (``fp16 not used``,
    ``fp16=False``) is not in use. One-word values are settings and are read by key
    (``evidence._PRECISION_PARAM``)."""
    if len(text.split()) < PROSE_WORDS:
        return None
    for m in _PRECISION_STATED.finditer(text):
        before, after = text[max(0, m.start() - 40) : m.start()], text[m.end() : m.end() + 20]
        if _PRECISION_OFF.search(before) or _PRECISION_OFF.search(after):
            continue
        lo = max(text.rfind(s, 0, m.start()) for s in ".;,()") + 1
        hi = min([i for i in (text.find(s, m.end()) for s in ".;,)") if i >= 0] or [len(text)])
        return text[lo:hi].strip()[:120]
    return None


#: The software stack and the machine: frameworks, their compiled back ends, drivers, images.
_STACK = (
    r"(?:\b(?:py)?torch\b|tensorflow|\btf\b|\bcuda\b|cudnn|\bcu\d{2,3}\b|\bdrivers?\b|\bnccl\b|"
    r"\bjax(?:lib)?\b|mxnet|paddle(?:paddle)?\b|\bkeras\b|\btransformers\b|deepspeed|\bapex\b|"
    r"\bnumpy\b|\bpython\s*\d|docker|container|\bimage\b|kaolin|\bmmcv\b|triton|xformers|flash[-_ ]?attn|"
    r"bitsandbytes|\bversion\b|\bbuild\b)"
)
_STACK_RE = re.compile(_STACK, re.I)
#: A change of the stack: a verb of change followed, in the same clause, by a package or a version.
_STACK_CHANGE = re.compile(
    r"\b(?:upgrad\w*|downgrad\w*|switch\w*|chang\w*|reinstall\w*|install\w*|rebuil\w*|recompil\w*|"
    r"roll\w* back|revert\w*|updat\w*|replac\w*|mov\w* to|went back to|using)\b[^.;!?]{0,60}?"
    r"(?:" + _STACK + r"|\b\d+\.\d+(?:\.\d+)?\b)",
    re.I,
)
#: The failure went away (a sentence without a negation).
_GONE = re.compile(
    r"\b(?:resolved|solved|fixed|works|worked|working|went away|is gone|was gone|no longer|"
    r"(?:runs?|trains?|ran|trained|looks?|seems?) (?:fine|good|well|normal(?:ly)?)|perfectly|fine now)\b",
    re.I,
)
_NEGATED = re.compile(
    r"(?:\bnot\b|n't\b|\bnever\b|\bstill\b|\bno luck\b|\bneither\b|\bnor\b|\bwithout success\b|"
    r"\bsame (?:error|problem|issue)\b)",
    re.I,
)
#: The same job, unchanged, works on another machine or GPU.
_OTHER_MACHINE = re.compile(
    r"\b(?:same|identical|unchanged)\b[^.;!?]{0,100}?\bbut\s+(?:it\s+)?(?:works?|worked|runs?|ran|trains?)"
    r"\b[^.;!?]{0,20}?\bon\b|"
    r"\b(?:works?|worked|runs?|ran|trains?|trained)\s+(?:fine\s+|well\s+|normally\s+|correctly\s+)?on\s+"
    r"(?:an?\s+|the\s+)?(?:another|other|different|second)\s+(?:\w+\s+){0,2}?"
    r"(?:gpus?|vms?|machines?|servers?|cards?|nodes?|computers?|instances?|hosts?|clusters?)\b",
    re.I,
)
#: A change on the model, data or code side: then the fix is not the environment's alone.
_OTHER_CHANGE = re.compile(
    r"\b(?:learning[ _-]?rate|\blr\b|batch[ _-]?size|clip\w*|warm-?up|labels?|seeds?|dataset|"
    r"normali[sz]\w*|loss function|init\w*|bug|my code|the code|typo|config(?:uration)?)\b",
    re.I,
)


def _sentences(text: str) -> list[str]:
    return [t for t in re.split(r"(?<=[.!?])\s+|\s+--\s+|;\s+", text) if t.strip()]


#: A sentence that asks: a question mark, or an auxiliary verb opening it before its subject (``Did lowering
#: the learning rate help``, ``Could you try a smaller batch``), the word order of an English question
#: whether or not the writer typed the mark.
_INTERROGATIVE = re.compile(
    r"[?\uff1f]|^\W*(?:did|does|do|is|are|was|were|can|could|would|will|should|have|has|shall)\s+"
    r"(?:you|it|this|that|these|those|the|your|we|they|there|i|[a-z]+ing)\b",
    re.I,
)
#: A sentence that announces an investigation the writer is about to make: the future or a plan
#: (``I will``, ``we'll``, ``I am going to``, ``let me``) with a verb of looking (``rerun``, ``check``,
#: ``look into``, ``investigate``), or a purpose of finding out (``to see if``, ``to check whether``). It
#: reports no finding: ``I will rerun the experiments to see if there is something wrong with the latest
#: commit`` names the commit as a suspect, not as the cause. (A plan to fix, ``I will fix it in the next
#: release``, does state that something is broken and is left to the readings of a fix.)
_INVESTIGATION = re.compile(
    r"\b(?:(?:i|we)\s*(?:'ll|will|shall|am going to|'m going to|are going to|plan to|intend to)|let (?:me|us))\s+"
    r"(?:\w+\s+){0,2}?(?:re-?run|run|check|look|investigate|test|try|verify|debug|reproduce|see|dig|examine)\b"
    r"|\bto\s+(?:see|check|find out|verify|test)\s+(?:if|whether)\b",
    re.I,
)


#: The learning rate (its schedule or iteration budget; not a warm-up, which is an optimisation technique
#: added, not a recipe value carried over) named together with the run's scale (its
#: GPU or node count, its batch size, the linear scaling rule): ``The settings are made for 8 GPUs, when
#: you have only 2 GPUs, you should adjust the learning rate``, ``we temporarily disable automatic LR
#: scaling``, ``if you increase the batch size to 1024, the same learning rate / learning rate schedule
#: might not apply``.
_LR_WORD = re.compile(
    r"\blearning[ _-]?rates?\b|\b(?:base_|initial_|init_)?lr\b|\bschedul\w*|\biterations\b",
    re.I,
)
_RUN_SCALE = re.compile(
    r"\b(?:\d+\s*)?gpus?\b|\bnodes?\b|\bbatch[ _-]?sizes?\b|\bbs\b|\bbatch\s+of\b|\blinear(?:ly)?\s+scal\w*"
    r"|\b(?:lr|learning[ _-]?rate)\s+scaling\b",
    re.I,
)


def lr_scaled_to_run(said: str) -> bool:
    """Whether the sentence ``said`` names the learning rate (its schedule or iterations,
    :data:`_LR_WORD`) together with the run's scale (:data:`_RUN_SCALE`: GPUs, nodes, the batch size, the
    linear scaling rule). For a run that trained to the end below its reference, that is the recipe's
    setting not carried over to the run's scale (data_config), not an optimisation that failed; a loss
    that turned non-finite makes it the update size's (model_convergence), which the caller checks."""
    text = said.split(": ", 1)[-1]  # the sentence, not the key that introduces it
    return bool(_LR_WORD.search(text) and _RUN_SCALE.search(text))


def unasserted(s: str) -> bool:
    """Whether sentence ``s`` asks (:data:`_INTERROGATIVE`) or announces an investigation
    (:data:`_INVESTIGATION`) rather than states a finding: by its mood, not by what it names, neither
    confirms a cause nor a fix (``Did lowering the learning rate help?`` is no report that it did)."""
    return bool(_INTERROGATIVE.search(s) or _INVESTIGATION.search(s))


def environment_fix(params: Mapping[str, object]) -> str | None:
    """The statement, from a report's prose params, that the failure went away with only the software
    stack or the machine changed, or ``None``.

    A value counts when one of its sentences changes the stack (``switched to tensorflow 1.3 and
    cudnn/6.0``, ``changed 1.7 to 1.6`` in a value naming PyTorch) and a sentence without negation says
    the failure is gone (``now it works perfectly``, ``the problem was resolved``), or when it says the
    same job works on another machine (``gives nan on the RTX 2080 Ti but works on an Azure GPU VM``).
    A value that also names a change of the model, data or code (learning rate, batch size, labels,
    seed, a bug) is not read: the fix is then not the environment's alone."""
    for key, raw in params.items():
        if str(key).startswith(("log.", "source.")):
            continue
        text = str(raw)
        if len(text.split()) < PROSE_WORDS or _OTHER_CHANGE.search(text):
            continue
        sents = _sentences(text)
        for s in sents:
            m = _OTHER_MACHINE.search(s)
            if m and not _NEGATED.search(s[max(0, m.start() - 15) : m.end()]):
                return f"{key}: {s.strip()[:200]}"
        if not _STACK_RE.search(text):
            continue
        change = next((s for s in sents if _STACK_CHANGE.search(s)), None)
        gone = next((s for s in sents if _GONE.search(s) and not _NEGATED.search(s)), None)
        if change is not None and gone is not None:
            said = change.strip() if change == gone else f"{change.strip()} {gone.strip()}"
            return f"{key}: {said[:200]}"
    return None


# --- the fix a report's thread confirms ----------------------------------------------------------

#: Params that describe the setup, not what someone in the thread said about the failure.
_SETUP_KEY = re.compile(
    r"^(?:task|command|config|script|setup|environment|model|data(?:set)?)\b", re.I
)
_REDUCED = r"(?:fp16|float16|half[- ]precision|mixed[- ]precision|(?-i:AMP)|amp|precision|16-mixed|16-true|int8)"
_FULL = (
    r"(?:fp32|float32|tf32|full[- ]precision|single[- ]precision|32-true|32[- ]bit|bf16|bfloat16)"
)
#: The reduced precision turned off, or full precision taken instead: ``fp16 set to False``, ``disable
#: AMP``, ``removing the "precision" line``, ``I recommend using fp32``, ``should lead to fp32 training``.
_PRECISION_FIX = re.compile(
    rf"\b{_REDUCED}\b[^.;!?]{{0,25}}?(?:=|\bto\b)\s*[\"']?(?:false|off|none)\b"
    rf"|\b(?:disabl\w*|remov\w*|turn\w* off|switch\w* off|without|dropp\w*)\s+(?:the\s+)?[\"']?{_REDUCED}\b"
    r"|\b(?:use|using|used|train\w*\s+(?:in|with)|switch\w*\s+to|chang\w*\s+to|mov\w*\s+to|went\s+back\s+to|"
    rf"recommend\w*(?:\s+using)?|lead\s+to|adjusted\s+using|go\s+with)\s+(?:\w+\s+){{0,2}}?{_FULL}\b",
    re.I,
)
#: The failure tied to the reduced precision in the same sentence: ``the same issue with fp16``, ``may not
#: work well for fp16``, ``fp16 causes the overflow``.
_PRECISION_BLAME = re.compile(
    r"\b(?:issues?|problems?|errors?|nan|inf|overflows?|unstable|instabilit\w*|diverg\w*|not\s+work\w*|"
    r"doesn't\s+work|fail\w*)\b[^.;!?]{0,40}?\b(?:with|in|for|under)\s+(?:the\s+)?"
    + _REDUCED
    + r"\b|\b"
    + _REDUCED
    + r"\b[^.;!?]{0,30}?\b(?:caus\w*|is the (?:cause|problem|culprit)|leads? to nan)",
    re.I,
)
_LR = r"(?:learning[ _-]?rates?|\blrs?\b|step[ _-]?size)"
#: The update size made smaller or ramped: ``lowering the learning rate``, ``the learning rate is 1, which
#: is too big``, ``implementing lr warmup``.
_LR_FIX = re.compile(
    rf"\b(?:lower\w*|reduc\w*|decreas\w*|smaller|halv\w*)\s+(?:the\s+|a\s+)?(?:initial\s+|starting\s+|start\s+|base\s+|peak\s+|max\w*\s+)?{_LR}"
    rf"|{_LR}[^.;!?]{{0,40}}?\b(?:too\s+(?:high|big|large)|should\s+be\s+(?:reduced|lowered|smaller))"
    r"|\b(?:add\w*|implement\w*|us(?:e|ing))\s+(?:an?\s+|the\s+)?(?:lr\s+|learning[ -]rate\s+)?warm-?up",
    re.I,
)
#: A statement that names candidates, not a cause: read only when the failure is confirmed gone. A
#: suggestion to try something (``you may try to decrease the learning rate``, ``you can try a smaller
#: lr``) is one candidate offered, not the fix confirmed.
_HEDGED = re.compile(
    r"\b(?:could be|might|may be|maybe|perhaps|possibly|one of the following|not sure|guess)\b"
    r"|\b(?:may|can|could|might)\s+(?:want\s+to\s+)?(?:try|consider)\b",
    re.I,
)
#: The failure stayed: ``still``, ``did not help``, ``no luck``, ``same error``.
_PERSISTED = re.compile(
    r"\b(?:still|(?:did|does|do)\s*(?:n't|not)\s+help\w*|not\s+help\w*|no luck|same (?:error|problem|issue|result)|"
    r"without success|not fixed|(?:did|does|do)\s*(?:n't|not)\s+(?:fix|avoid|solve|work|change)\w*|no effect)\b"
    r"|\btried\b[^.;!?]*\bbut\b",
    re.I,
)


#: The project's code changed by its maintainer: ``This problem was fixed just now``, ``It should be fixed
#: now``, ``pull the latest code``, ``fixed in #123``, ``I just update the code, the current one should
#: work``, ``I have updated the code to correct this``.
_CODE_FIXED = re.compile(
    r"\b(?:fixed|fixes)\b[^.;!?]{0,30}?\b(?:now|in (?:the )?(?:latest|master|main|commit|release|#\d+|pr\b))"
    r"|\bpull (?:the )?latest\b|\b(?:has|have|was|is|been) (?:been |now )?fixed\b|\bpushed (?:a )?fix\b"
    r"|\bthe fix (?:was|is) in\b"
    r"|\b(?:I|we)(?: have| has|'ve)?(?: just| now)? (?:updated?|changed|modified) the (?:code|repo(?:sitory)?)\b",
    re.I,
)
_MAINTAINER_KEY = re.compile(r"(?:maintainer|author|owner|developer)\b", re.I)

#: The data corrected: ``When I modified this coordinate``, ``after fixing the annotations``, ``re-labelled
#: the masks`` (labels, annotations, boxes and their coordinates, masks, ground truth).
_DATA_FIX = re.compile(
    r"\b(?:modif\w*|fix\w*|correct\w*|chang\w*|clean\w*|remov\w*|filter\w*|repair\w*|re-?label\w*|"
    r"re-?annotat\w*)\b[^.;!?]{0,40}?\b(?:labels?|annotations?|coordinates?|bounding[ -]?box\w*|bbox\w*|boxes|"
    r"masks?|ground[ -]truth)\b",
    re.I,
)
#: The run worked after the change, in the reporter's words: ``I got the correct running result``.
_WORKED = re.compile(
    r"\b(?:got|get|gets|getting)\s+(?:the\s+)?(?:correct|normal|right|expected)\b|" + _GONE.pattern,
    re.I,
)


def _data_fix_sentence(values: list[tuple[str, str]]) -> str | None:
    """The first sentence of the thread that corrects the data's labels or annotations (:data:`_DATA_FIX`)
    and says, in itself or the next sentence of the same value, that the run then worked (:data:`_WORKED`,
    not negated); a question, or a next sentence that says the failure stayed (not a conditional ``If you
    also encounter the same problem``), confirms nothing."""
    for key, text in values:
        sents = _sentences(text)
        for i, s in enumerate(sents):
            m = _DATA_FIX.search(s)
            if not m or "?" in s or _PERSISTED.search(s):
                continue
            nxt = sents[i + 1] if i + 1 < len(sents) else ""
            if nxt and not re.match(r"\W*if\b", nxt, re.I) and _PERSISTED.search(nxt):
                continue
            rest = (
                s[: m.start()] + s[m.end() :]
            )  # the fix's own verb (``fixed``) is not the outcome
            if any(_WORKED.search(x) and not _NEGATED.search(x) for x in (rest, nxt) if x):
                s = s.strip()
                return (s if s.startswith(key) else f"{key}: {s}")[:240]
    return None


_NECESSITY = re.compile(r"\b(?:needs? to|must|ha(?:ve|s|d) to)\b", re.I)


def _thread_values(params: Mapping[str, object]) -> list[tuple[str, str]]:
    """``(key, text)`` of each prose param a person of the thread said (setup lines left out); the key is
    part of the text (``maintainer NAME (PR #2, "fixes #1 by implementing lr warmup"): ...``)."""
    out = []
    for key, raw in params.items():
        k = str(key)
        if k.startswith(("log.", "source.")) or _SETUP_KEY.match(k):
            continue
        text = str(raw)
        if len(text.split()) >= PROSE_WORDS:
            out.append((k, f"{k}: {text}" if len(k.split()) > 2 else text))
    return out


def _fix_sentence(
    values: list[tuple[str, str]], fix: re.Pattern[str], blame: re.Pattern[str] | None
) -> str | None:
    """The first sentence naming the change ``fix`` that the thread confirms, or ``None``: in a value
    where neither it nor the next sentence says the failure stayed, and either that value asserts it
    (no hedge) together with a sentence tying the failure to what changed (``blame``) or with the
    failure gone, or another value says the failure is gone."""
    gone_anywhere = any(
        _GONE.search(s) and not _NEGATED.search(s) for _, t in values for s in _sentences(t)
    )
    for key, text in values:
        sents = _sentences(text)
        for i, s in enumerate(sents):
            if not fix.search(s) or unasserted(s):
                continue
            after = " ".join(sents[i : i + 2])
            if _PERSISTED.search(after):
                continue
            # the change stated as what the run needs (``all weights need to be adjusted using fp32``,
            # not a question) asserts it like a sentence tying the failure to what changed
            tied = (blame is not None and any(blame.search(t) for t in sents)) or (
                _NECESSITY.search(s) is not None and "?" not in s
            )
            if (tied and not _HEDGED.search(text)) or gone_anywhere:
                s = s.strip()
                return (s if s.startswith(key) else f"{key}: {s}")[:240]
    return None


def confirmed_fix(params: Mapping[str, object]) -> tuple[str, str] | None:
    """What a report's thread confirms fixed the failure: ``("precision", sentence)`` when the reduced
    precision turned off or full precision taken instead is stated as the fix (``I had the exact same issue
    with fp16 ... I recommend using fp32``; ``try setting fp16 to False`` with ``It works for me!``),
    ``("learning_rate", sentence)`` when a smaller or ramped learning rate is (``fixes #1 by implementing lr
    warmup: it no longer gives NaN``), ``("data", sentence)`` when the labels or annotations corrected made
    the run work (``When I modified this coordinate, I got the correct running result``, a label coordinate
    below 0; :func:`_data_fix_sentence`), ``("code", sentence)`` when a maintainer states the project's code
    was fixed (``This problem was fixed just now: a small constant was missing inside log()``), else
    ``None``.

    A change counts only as a sentence that states it, confirmed: by the failure being gone (a sentence
    without negation, in any value of the thread) or, for precision, by the same value tying the failure
    to the reduced mode without hedging. A change followed by ``still`` / ``did not help`` is a change that
    did not fix it; a list of candidates (``it could be one of the following``) confirms nothing alone.
    The setup lines (task, command, config) are not statements. The precision reading comes first: a
    maintainer who names the precision and a smaller learning rate recommends the precision change."""
    values = _thread_values(params)
    if not values:
        return None
    said = _fix_sentence(values, _PRECISION_FIX, _PRECISION_BLAME)
    if said is not None:
        return "precision", said
    said = _fix_sentence(values, _LR_FIX, _LR_FIX)
    if said is not None:
        return "learning_rate", said
    said = _data_fix_sentence(values)
    if said is not None:
        return "data", said
    for key, text in values:
        if not _MAINTAINER_KEY.match(key):
            continue
        for s in _sentences(text):
            if _CODE_FIXED.search(s) and not _PERSISTED.search(s) and not _NEGATED.search(s):
                s = s.strip()
                return "code", (s if s.startswith(key) else f"{key}: {s}")[:240]
    return None


#: A maintainer's statement that what the reporter saw is the expected behaviour: ``a loss around 0.23 is a
#: reasonable magnitude``, ``That's normal``, ``there's no code changes required``, ``it works as designed``.
_EXPECTED = re.compile(
    r"(?:\b(?:is|are|looks?|seems?)\s+|(?<=\w)['’](?:s|re)\s+)(?:\w+\s+){0,2}?(?:normal|expected|reasonable|as expected)\b"
    r"|\bas (?:designed|intended)\b|\bno (?:code )?changes? (?:is |are )?(?:required|needed)\b"
    r"|\btrains? (?:fine|correctly|normally)\b|\bnothing (?:is )?wrong\b",
    re.I,
)
#: A metric set by hand in the code: ``i manuall set accuracy to 0.5``, ``the accuracy is hard-coded``,
#: ``the score is a placeholder``: an expected figure that measures nothing.
_METRIC_SET_BY_HAND = re.compile(
    r"\b(?:manuall?y?|by hand|hard-?cod\w*)\s+(?:set\s+)?(?:the\s+)?(?:accuracy|metric|score|f1|map|auc)\b"
    r"|\b(?:accuracy|metric|score|f1|map|auc)\s+(?:is|was|are|were)\s+(?:\w+\s+)?(?:hard-?coded|a placeholder|"
    r"set (?:manually|by hand))\b",
    re.I,
)
#: Words of a cause or a failure next to the statement: ``expected because your labels ...``, ``normal for
#: a NaN ...``, ``not a bug, the column is all 0s``: then it explains a failure, it does not clear the run.
_FAILURE_WORDS = re.compile(
    r"\b(?:because|due to|wrong\w*|mistake|bug\w*|nan|inf|errors?|should|instead|fix\w*|lower|reduce|"
    r"oom|memory|crash\w*|diverg\w*|not (?:normal|expected|reasonable))\b",
    re.I,
)


#: The reporter's question whether what they saw is expected: ``Is this reasonable?``, ``Is that normal?``.
_ASKS_EXPECTED = re.compile(
    r"\b(?:is|are)\s+(?:this|it|that|these|the \w+)\s+(?:\w+\s+)?"
    r"(?:reasonable|normal|expected|ok|okay|correct|right)\s*\?",
    re.I,
)


def affirmed_expected(lines: list[str], params: Mapping[str, object]) -> str | None:
    """The maintainer's answer ``Yes`` to the report's question whether what it shows is expected (``Is
    this reasonable?`` -> ``Yes. Each epoch takes about 8 hours in our implementation setting.``), or
    ``None``: the answer's first two sentences, when they hold no ``but``, ``however`` or negation and no
    cause or failure word (:data:`_FAILURE_WORDS`)."""
    if not any(_ASKS_EXPECTED.search(line) for line in lines):
        return None
    for key, raw in params.items():
        if not _MAINTAINER_KEY.match(str(key)):
            continue
        first = " ".join(_sentences(str(raw))[:2])
        if not re.match(r"\W*yes\b", first, re.I):
            continue
        if re.search(r"\b(?:but|however|although)\b", first, re.I) or _NEGATED.search(first):
            continue
        if _FAILURE_WORDS.search(first) or _HEDGED.search(first):
            continue
        return f"{key}: {first.strip()[:200]}"
    return None


def expected_behaviour(params: Mapping[str, object]) -> str | None:
    """The maintainer's sentence, from a report's prose params, that the behaviour reported is expected
    (``a flow matching loss around 0.23 is a reasonable magnitude``; ``I'm going to close this as there's
    no code changes required``), or ``None``. Only values of keys naming a maintainer (or the project's
    author or owner) are read, and a sentence that also names a cause or a failure (``because``, ``bug``,
    ``nan``, ``should``, ``fix``) explains a failure rather than clearing the run, so it does not count."""
    for key, raw in params.items():
        if not _MAINTAINER_KEY.match(str(key)):
            continue
        for s in _sentences(str(raw)):
            m = _EXPECTED.search(s)
            if m and not _FAILURE_WORDS.search(s) and not _HEDGED.search(s):
                return f"{key}: {s.strip()[:200]}"
    return None


# --- an infra event named in words ----------------------------------------------------------------

#: A device's memory running out, in words (``the GPU runs out of memory``, ``got a CUDA OOM``, ``out of
#: GPU memory``): the event itself is the failure, as a framework's OOM message would be.
_DEVICE_OOM = re.compile(
    r"\b(?:gpus?|cuda|vram|graphics card)\b[^.;!?]{0,40}?\b(?:runs?|ran|running|goes|went|going) out of memory\b"
    r"|\bout of (?:gpu|cuda|video|device) memory\b"
    r"|\b(?:gets?|got|getting|hits?|hitting|throws?|threw|raises?|raised)\s+(?:an?\s+|the\s+)?(?:cuda\s+)?"
    r"(?-i:OOM)\b",
    re.I,
)
#: Memory running out with no device named (``it runs out of memory``), or the host's memory filling up
#: (``the 128 GB RAM was quickly filled up``, ``RAM is full``, ``memory and swap were fully occupied``): the host's case is a failure only with a
#: sentence that the run failed (:data:`_FAILED`).
_ANY_OOM = re.compile(r"\b(?:runs?|ran|running|goes|went|going) out of memory\b", re.I)
_HOST_FULL = re.compile(
    r"\b(?:ram|swap|host memory|system memory|cpu memory|main memory)\b[^.;!?]{0,30}?\b"
    r"(?:(?:is|was|were|are|has|had|have|got|gets|get|been|being|quickly|completely|fully|all)\s+){0,3}"
    r"(?:fill(?:s|ed|ing)?\s+up|full|exhausted|used up|occupied)\b",
    re.I,
)
_GPU_WORD = re.compile(r"\b(?:gpus?|cuda|vram|graphics card)\b", re.I)
#: The run's process killed from outside, in the passive (``the training process was killed``, ``my job got
#: killed``, ``the running process was "Killed"`` quoting the shell): the OOM killer or the scheduler, not
#: the code (``I killed it`` is the user's own stop).
_KILLED = re.compile(
    r"\b(?:process(?:es)?|training|trainings|job|jobs|script|run|worker|workers|program|kernel|it)\b"
    r"[^.;!?]{0,30}?\b(?:was|were|got|gets|get|is|are|being|been)\s+(?:(?!not\b|never\b)\w+\s+)?[\"'“‘]?killed\b"
    # the shell's own word quoted: ``it shows 'killed' and does not print any stack trace``
    r"|\b(?:shows?|showed|shown|prints?|printed|says?|said|displays?|displayed|outputs?)\s+(?:only\s+|just\s+)?"
    r"[\"'“‘]killed[\"'”’]",
    re.I,
)
#: The run stopped: ``the training script failed``, ``crashed``, ``was killed``, ``dies``, ``had to quit``; the shell's
#: ``Killed`` glued to the next output (``Killed96160``).
_FAILED = re.compile(
    r"\b(?:fail(?:s|ed)?|crash(?:es|ed)?|di(?:es|ed)|abort(?:s|ed)|stopped|terminated|quit(?:s)?)\b"
    r"|\bkilled(?![a-z])",
    re.I,
)
#: Before the event in its clause: a negation, a condition or a candidate (``no OOM``, ``to avoid running
#: out of memory``, ``if it runs out of memory``, ``maybe the GPU ran out of memory``).
_NOT_ASSERTED = re.compile(
    r"\b(?:no|not|never|without|avoid\w*|prevent\w*|if|whether|when|unless|could|might|may|maybe|perhaps|"
    r"possibly|in case|otherwise|instead of)\b|n't\b",
    re.I,
)


#: A cause stated by when it struck (``the issue was caused when the RAM had been exhausted``): ``when``
#: there tells what happened, not a condition.
_CAUSED_WHEN = re.compile(r"\b(?:caused|happen(?:s|ed)|occur(?:s|red))\s+when\b", re.I)


#: The host's memory named as what the fix gave the job (``increasing the RAM did the job``, ``I resolved it
#: by configuring swap memory``); shared memory (``/dev/shm``) is the loader's, whose failures are hangs
#: and bus errors, not a memory exhaustion.
_HOST_MEMORY = re.compile(
    r"\b(?:ram|swap|host memory|system memory|cpu memory|main memory)\b", re.I
)
_SHARED_MEMORY = re.compile(r"\bshared[ _-]?memory\b|\bshm\b", re.I)


def memory_given(said: str) -> bool:
    """Whether the sentence ``said`` of a confirmed fix names the host's memory (:data:`_HOST_MEMORY`: RAM,
    swap) and not the loader's shared memory: the fix gave the job memory, so its memory had run out."""
    return bool(_HOST_MEMORY.search(said)) and not _SHARED_MEMORY.search(said)


def _asserted(sentence: str, start: int) -> bool:
    """Whether the event at ``start`` of ``sentence`` is stated as having happened: not in a question, and
    no negation, condition or hedge earlier in its clause."""
    if "?" in sentence:
        return False
    lo = max(sentence.rfind(s, 0, start) for s in ",:;(") + 1
    return _NOT_ASSERTED.search(_CAUSED_WHEN.sub(" ", sentence[lo:start])) is None


def stated_memory_exhaustion(lines: list[str]) -> tuple[str, str] | None:
    """``(device, sentence)`` when a sentence of a report's text (its pasted prose and the thread's lines)
    states that the run's memory ran out: ``("gpu", ...)`` for a device's memory (``the GPU runs out of
    memory``), ``("host", ...)`` for the host's RAM filling up in a sentence or thread that also says the
    run failed (``The workstation's 128 GB RAM was quickly filled up, which was likely the cause that the
    training script failed``), ``("memory", ...)`` for memory running out with no device named,
    ``("killed", ...)`` for the run's process killed from outside in the passive (:data:`_KILLED`); else
    ``None``. A question, a negation, a condition or a hedge before the event in its clause states nothing
    (``does it run out of memory?``, ``to avoid running out of memory``, ``maybe it is an OOM``)."""
    host: tuple[str, str] | None = None
    failed = False
    for line in lines:
        for s in _sentences(line):
            failed = failed or (_FAILED.search(s) is not None and "?" not in s)
            for pat, dev in ((_DEVICE_OOM, "gpu"), (_ANY_OOM, "memory")):
                m = pat.search(s)
                if m and _asserted(s, m.start()):
                    if dev == "memory" and _GPU_WORD.search(s[: m.start()]):
                        dev = "gpu"
                    return dev, s.strip()[:240]
            m = _KILLED.search(s)
            if m and _asserted(s, m.start()):
                return "killed", s.strip()[:240]
            m = _HOST_FULL.search(s)
            if host is None and m and _asserted(s, m.start()):
                host = ("host", s.strip()[:240])
    return host if host is not None and failed else None


#: A distributed job's timeout named: ``init_process_group default timeout is 1800 s``, ``an NCCL collective
#: timeout``, ``the DDP barrier timed out``.
_DIST_TIMEOUT = re.compile(
    r"\b(?:ddp_timeout|init_process_group|nccl|watchdog|process[ _]group|collective|barrier|distributed|"
    r"multi-?gpu|torchrun)\b[^.;!?]{0,80}?\btime[ -]?(?:d[ -])?outs?\b"
    r"|\btime[ -]?(?:d[ -])?outs?\b[^.;!?]{0,40}?\b(?:nccl|ddp|collective|barrier|watchdog|process group)\b",
    re.I,
)
#: The run failed, in words: ``it always errors out``, ``aborts``, ``crashed``, ``got a timeout error``.
_ERRORED = re.compile(
    r"\b(?:errors? out|error(?:s|ed)? out|(?:throws?|raises?|reports?|gets?|got|hits?) (?:an? |the )?"
    r"(?:\w+ )?(?:error|exception)|fail(?:s|ed)?|crash(?:es|ed)?|abort(?:s|ed)?)\b",
    re.I,
)


def stated_timeout(lines: list[str]) -> str | None:
    """The sentence of a report's text that names a distributed job's timeout (:data:`_DIST_TIMEOUT`: the
    process group's, NCCL's, a barrier's) where it or a neighbouring sentence of the same line says the
    run failed (:data:`_ERRORED`), neither a question; else ``None``."""
    for line in lines:
        sents = _sentences(line)
        for i, s in enumerate(sents):
            m = _DIST_TIMEOUT.search(s)
            if not m or "?" in s or not _asserted(s, m.start()):
                continue
            near = [x for x in sents[max(0, i - 1) : i + 2] if "?" not in x]
            failed = next((x for x in near if _ERRORED.search(x) and not _NEGATED.search(x)), None)
            if failed is not None:
                said = s.strip() if failed == s else f"{failed.strip()} ... {s.strip()}"
                return said[:240]
    return None


# --- a slowness told in words, with the input side named ------------------------------------------------

#: The run stated slow: ``the training is extremely slow``, ``will slow down after some iterations``,
#: ``much slow than ... in your paper``, ``It takes too much time to generate batches``.
_SLOW = re.compile(
    r"\b(?:very|extremely|really|so|too|quite|much|super|incredibly|painfully|terribly)\s+slow(?:er|ly)?\b"
    r"|\bslow(?:s|ed|ing)?\s+down\b|\bslower\s+than\b"
    r"|\b(?:takes?|took|taking|costs?)\s+(?:too|so|very|a very)\s+(?:much\s+time|long)\b"
    r"|\b(?:is|are|was|were|becomes?|became|gets?|got|seems?)\s+slow\b"
    # an idle accelerator: the GPU's utilisation read at 0% (nvidia-smi's 'Volatile GPU-Util') while
    # the job runs: the steps wait for something other than the GPU
    r"|\bgpu[- ]?util\w*\b[^.;!?%]{0,40}?(?<![\d.])0\s?%"
    # the same told in words: ``GPU-util is low``, ``GPU-Util too low``; the duration itself called too
    # long: ``training time too long``, ``the epoch time is very long``
    r"|\bgpu[- ]?util\w*\s+(?:is\s+|was\s+|stays?\s+)?(?:too\s+|very\s+|so\s+|really\s+|extremely\s+)?low\b"
    r"|\b(?:training|train|epoch|iteration|step|run)\s+times?\s+(?:is\s+|was\s+)?(?:too|very|so|extremely)\s+long\b",
    re.I,
)
#: A line where the framework (or a person) names the data-loader worker count as the bottleneck:
#: Lightning's ``The 'train_dataloader' does not have many workers which may be a bottleneck. Consider
#: increasing the value of the `num_workers` argument`` (lightning 2.6.6 trainer/connectors/data_connector.py
#: _check_dataloader_iterable's warning).
_WORKERS_BOTTLENECK = re.compile(
    r"\bbottleneck\b[^\n]{0,120}?\bnum[_ -]?workers\b|\bnum[_ -]?workers\b[^\n]{0,120}?\bbottleneck\b",
    re.I,
)
#: The input pipeline named: the loader, its workers, batch generation, the data time, the CPU feeding it.
_INPUT_SIDE = re.compile(
    r"\bdata[- ]?load\w*|\bdataloader\w*|\bdata[- ]time\b|\bwaiting for (?:the )?data\b|\bnum[_ -]?workers\b"
    r"|\bworkers?_per_gpu\b|\b(?:number of|more|fewer|less) (?:data[- ]?loader |loader )?workers\b"
    r"|\bgenerat\w* (?:the )?batch\w*|\bcpu\b[^.;!?]{0,25}\b(?:bottleneck|stressed|bound|overloaded)\b"
    r"|\b(?:i/o|io)\b|\bstorage\b|\bdisks?\b|\bssds?\b|\bhdds?\b|\blmdb\b|\brandom (?:seeks?|reads?)\b"
    r"|\bdecod\w*|\b\w*reader\b|\bnfs\b",
    re.I,
)
#: Of the input side, where the data is read and decoded (storage, I/O, the decoder): the machine's part.
_STORAGE_SIDE = re.compile(
    r"\b(?:i/o|io)\b|\bstorage\b|\bdisks?\b|\bssds?\b|\bhdds?\b|\blmdb\b|\brandom (?:seeks?|reads?)\b"
    r"|\bdecod\w*|\b\w*reader\b|\bnfs\b",
    re.I,
)
#: A data-loader worker count: the setting a user chooses.
_WORKER_SETTING = re.compile(
    r"\bnum[_ -]?workers\b|\bworkers?_per_gpu\b|\b(?:number of|more|fewer|less) (?:data[- ]?loader |loader )?workers\b",
    re.I,
)
#: Params that list the machine (``hardware: ... SATA SSD 960 GB``): a description, not a statement.
_MACHINE_KEY = re.compile(r"^(?:hardware|machine|system|host|gpus?|cpus?|platform|os)\b", re.I)
_NEGATION_BEFORE = re.compile(r"\b(?:no|not|never|without)\b|n't\b", re.I)


def _clause_before(sentence: str, start: int) -> str:
    lo = max(sentence.rfind(s, 0, start) for s in ",:;(") + 1
    return sentence[lo:start]


def _stated_slow(lines: list[str]) -> str | None:
    """The first sentence of ``lines`` that states the run is slow (:data:`_SLOW`), asserted."""
    for line in lines:
        for s in _sentences(line):
            m = _SLOW.search(s)
            if m and _asserted(s, m.start()):
                return s.strip()
    return None


def _input_side_named(values: list[tuple[str, str]]) -> list[str]:
    """The thread's sentences that name the input side (:data:`_INPUT_SIDE`), not asked and not negated."""
    named = []
    for _, text in values:
        for s in _sentences(text):
            m = _INPUT_SIDE.search(s)
            if m and "?" not in s and not _NEGATION_BEFORE.search(_clause_before(s, m.start())):
                named.append(s.strip())
    return named


def stated_input_slowness(
    lines: list[str], params: Mapping[str, object]
) -> tuple[str, str, str] | None:
    """``(kind, slow_sentence, input_sentence)`` when a report states that its run is slow and names the
    input pipeline as where the time goes, else ``None``.

    ``slow_sentence``: a sentence of the report's text (``lines``: its pasted prose and the thread's lines)
    that states the run is slow (:data:`_SLOW`), not in a question and with no negation, condition or hedge
    before it in its clause. ``input_sentence``: the slowness sentence itself when it names the input side
    (``It takes too much time to generate batches``), else a sentence of the thread (:func:`_thread_values`,
    the machine's description left out) that names it (:data:`_INPUT_SIDE`: the loader and its workers,
    the data time, storage and I/O, the decoder), not in a question and not negated (a maintainer's ``If
    you meet I/O bottleneck, preparing the dataset as lmdb ... can help a lot`` names it). ``kind``:
    ``"storage"`` when a named sentence names storage, I/O or decoding (:data:`_STORAGE_SIDE`);
    ``"workers"`` when the thread confirms that a data-loader worker count changed fixed it (``I set the
    num_workers to be 4 and it worked now!``) or a line of the text names the worker count as the
    bottleneck (:data:`_WORKERS_BOTTLENECK`, the framework's own warning); else ``"input"``. A GPU
    utilisation read at 0% while the job runs states the slowness (the steps wait for their input)."""
    slow = _stated_slow(lines)
    if slow is None:
        return None
    values = [(k, t) for k, t in _thread_values(params) if not _MACHINE_KEY.match(k)]
    bottleneck = next(
        (t.strip() for t in lines if _WORKERS_BOTTLENECK.search(t) and "?" not in t), None
    )
    named = (
        ([slow] if _INPUT_SIDE.search(slow) else [])
        + _input_side_named(values)
        + ([bottleneck] if bottleneck is not None else [])
    )
    if not named:
        return None
    storage = next((s for s in named if _STORAGE_SIDE.search(s)), None)
    if storage is not None:
        return "storage", slow[:240], storage[:240]
    gone = any(_GONE.search(s) and not _NEGATED.search(s) for _, t in values for s in _sentences(t))
    workers = next(
        (s for s in named if _WORKER_SETTING.search(s) and not _PERSISTED.search(s)), None
    )
    if workers is not None and gone:
        return "workers", slow[:240], workers[:240]
    if bottleneck is not None:
        return "workers", slow[:240], bottleneck[:240]
    return "input", slow[:240], named[0][:240]


# --- the metric or its gate as the explanation ------------------------------------------------------

#: A test's or gate's threshold made looser as the fix: ``Updating the assertion threshold to 0.06 ensures
#: that the test always passes``, ``increasing the threshold should solve it``, ``raise the tolerance``.
_THRESHOLD_FIX = re.compile(
    r"\b(?:increas|rais|relax|loosen|bump|updat|adjust|widen)\w*\s+(?:the\s+)?(?:[\w`'\"]+\s+){0,2}?"
    r"(?:threshold|tolerance|tol|atol|rtol)s?\b"
    # a warning the check turns into an error let through: ``ignoring the warning makes it possible to get
    # this test to pass``, ``the PR silences the ConvergenceWarning in this test``
    r"|\b(?:ignor|silenc|suppress|filter)\w*\s+(?:the\s+|this\s+|that\s+)?\w*warnings?\b",
    re.I,
)
#: A test or a gate named: the threshold belongs to a check, not to the model (a confidence threshold).
_GATE = re.compile(r"\b(?:tests?|asserts?|assertions?|ci|checks?|gates?|flaky)\b", re.I)


def gate_threshold_fix(lines: list[str]) -> str | None:
    """The sentence of a report's text that states a test's or gate's threshold or tolerance was made
    looser as the fix (:data:`_THRESHOLD_FIX`), in a report that names a test or gate (:data:`_GATE`), or
    ``None``. A question (``Should we ... relax the 0.1 threshold?``), a negation before it in its clause
    or a change that did not help (``still``, ``did not help``) states no fix."""
    if not any(_GATE.search(line) for line in lines):
        return None
    for line in lines:
        for s in _sentences(line):
            m = _THRESHOLD_FIX.search(s)
            if m and "?" not in s and not _PERSISTED.search(s):
                if not _NEGATION_BEFORE.search(_clause_before(s, m.start())):
                    return s.strip()[:240]
    return None


#: A test failure shown: a test framework's failure line (pytest's, Julia's ``Test Failed at``), an
#: assertion error or an ``assert_*`` helper, a CI job, a test suite.
_TEST_FAILURE = re.compile(
    r"\btest failed\b|\bfailed tests?\b|\btests? (?:fail\w*|suite)\b|\bAssertionError\b|\bassert_\w+|\bpytest\b"
    r"|\b(?:unit|ci|regression|end-to-end|e2e)[ -]tests?\b|(?-i:\bCI\b)|\btestsets?\b",
    re.I,
)
#: The check itself fails by chance, in words: the test is flaky or nondeterministic, or draws its random
#: inputs with no fixed seed (``the file calls no Random.seed! at all``, ``the test is not seeded``).
_FLAKY = re.compile(
    r"\bflak(?:y|iness)\b|\bnon-?deterministic\w*\b|\bun-?seeded\b"
    r"|\bno\s+(?:fixed\s+|random\s+)?[\w.]*seed\b|\bnot\s+(?:\w+\s+)?seeded\b"
    r"|\b(?:does|do|did)\s*(?:n't|\s+not)\s+(?:fix|set)\s+(?:the\s+|a\s+|any\s+)?(?:random\s+)?seeds?\b",
    re.I,
)


def stated_flaky_test(lines: list[str]) -> str | None:
    """The sentence of a report's text that states a failing test fails by chance (:data:`_FLAKY`: flaky,
    nondeterministic, drawn without a fixed seed), in a text that shows a test failure
    (:data:`_TEST_FAILURE`: a test framework's failure line, an assertion, a CI job), or ``None``. A
    question or a negation before it in its clause (``this is not a flaky test``) states nothing. Without
    a test failure shown, an unseeded training run is a rerun's spread (:data:`_NOTHING_WRONG`), not a
    check's."""
    if not any(_TEST_FAILURE.search(line) for line in lines):
        return None
    for line in lines:
        for s in _sentences(line):
            m = _FLAKY.search(s)
            if m and "?" not in s and not _NEGATION_BEFORE.search(_clause_before(s, m.start())):
                return s.strip()[:240]
    return None


#: The evaluation side named: the evaluator, its protocol or settings, the leaderboard's entry, another
#: language, task or split of the benchmark.
_EVAL_SIDE = re.compile(
    r"\bevaluat\w*|\bprotocol\b|\bleaderbo\w+|\bscor(?:ing|er)\b|\bpreset\b"
    r"|\bdifferent (?:languages?|tasks?|splits?|subsets?|versions?|metrics?)\b"
    # how the figure is aggregated: ``row 12 is the mean over the first 12 steps``
    r"|\b(?:mean|average|sum|median)\s+(?:over|of|across)\b"
    # a figure aggregated by averaging views, clips or runs (``the final accuracy we get using averaging``),
    # not the averaging of weights or checkpoints (SWA, EMA: a training technique)
    r"|\b(?:using|with|by|after)\s+averaging\b(?!\s+(?:the\s+|of\s+(?:the\s+)?)?(?:weights|models?|"
    r"checkpoints?|parameters))"
    # the reference measured under a benchmark's own setting: ``the results in the paper follow the long
    # sequence forecasting benchmark setting, which normalizes the series``
    r"|\bbenchmark(?:'s)? (?:settings?|protocols?)\b"
    # how the figure is measured: the text's tokenisation (``computed with our tokenization, while most
    # papers ... use the MOSES tokenizer``), the number of samples it is computed from (``The 1k images'
    # FID``, ``When 50k images, the FID will be below 3``)
    r"|\b(?:de)?tokeni[sz]\w*"
    r"|(?<![\w.])\d+(?:\.\d+)?\s*[km]?\s+(?:generated\s+|sampled\s+)?(?:images|samples)\b"
    # not a batch's size: ``4 images/GPU``, ``2 images per GPU``, ``16 images in batch``
    r"(?!\s*(?:/|per\b|in\s+(?:a\s+|each\s+|the\s+|one\s+)?(?:mini-?)?batch))"
    r"|\bnumber of (?:generated\s+)?(?:images|samples)\b"
    # one model behind both figures: ``The model with 27.18 mAP is precisely the same model we provided``;
    # a post-processing threshold of the scoring: ``0.5 as the threshold for object detection scores``
    r"|\b(?:exactly|precisely)?\s*the\s+same\s+(?:released\s+|trained\s+|pre-?trained\s+)?"
    r"(?:model|checkpoint|weights)\b(?!\s+(?:with|on|for|using)\b)"
    r"|\bthreshold (?:for|of|on) (?:the\s+)?(?:\w+\s+){0,2}?(?:scores?|confidences?)\b"
    r"|\b(?:score|confidence) thresholds?\b",
    re.I,
)
#: How a figure was obtained, stated with what it was obtained with: ``the reported results are tested with
#: Flip=True``, ``We have tested on the Y channel``, ``The 3.82% WER on test-clean is done with a LSTM LM``,
#: ``bilinear interpolation is applied to obtain a more robust baseline``: a verb of measuring (or of
#: producing a figure) with its means, which is an explanation in itself.
_MEASURED_WITH = re.compile(
    r"\b(?:tested|evaluated|computed|calculated|measured|scored|decoded|obtained|reported|done)\s+"
    r"(?:(?:only|all|both|also|just)\s+)?(?:with|on|using|under|via)\b"
    r"|\b(?:applied|used)\s+to\s+(?:obtain|compute|calculate|get|produce|measure|evaluate|test)\b",
    re.I,
)
#: A measurement protocol named by what it sets, each a known source of a gap between one model's
#: figures (the figure changes while the model does not): test-time augmentation (``tested with
#: Flip=True``, multi-scale or ten-crop testing, TTA), the image channel or colour space a figure is
#: computed on (PSNR on the ``Y channel`` of YCbCr against RGB), the resampling of inputs or outputs
#: (``bilinear interpolation``, nearest-neighbour upsampling, the resize), the decoding of a sequence
#: model (an external ``LSTM LM``, beam search, greedy), and the domain a dense prediction is scored in
#: (2D range image against 3D points after projection).
_PROTOCOL = re.compile(
    r"\bflip(?:ped|ping|s)?\b|\bflip\s*=\s*true\b|\b(?:multi|single)[- ]scale\s+(?:test\w*|eval\w*|inference)\b"
    r"|\btest[- ]time\s+augment\w*|(?-i:\bTTA\b)|\b(?:ten|10|five|5|centre|center)[- ]crops?\b"
    r"|\b(?:Y|luminance|luma|RGB|YCbCr|gr[ae]yscale)\s+(?:three-)?channels?\b|\bYCbCr\b|\bcolou?r\s+space\b"
    r"|\b(?:bilinear|bicubic|nearest(?:[- ]neighbou?r)?|lanczos)\s+(?:interpolation|resiz\w*|upsampl\w*|"
    r"downsampl\w*|resampl\w*|sampler|sampling)\b|\binterpolation\b|\bresiz(?:e|es|ing)\b"
    # a language model in decoding, not one being trained: ``done with a LSTM LM``, ``without a LM``
    r"|\b(?:with|without)\s+(?:an?\s+|the\s+)?(?:external\s+|LSTM\s+|RNN\s+|Transformer\s+|n-gram\s+|neural\s+)?"
    r"(?:(?-i:LMs?)|language\s+models?)\b"
    r"|\b(?:LSTM|RNN|n-gram|external)\s+(?:(?-i:LMs?)|language\s+models?)\b"
    r"|\b(?:(?-i:LM)|language\s+model)\s+(?:rescor\w*|fusion|weight|scale)\b|\bshallow\s+fusion\b"
    r"|\bbeam\s+(?:search|size|width)\b|\bgreedy\s+(?:decod\w*|search)\b"
    r"|\b(?:on|in)\s+(?:2D|3D)\b|\bproject(?:ed|ion|ing)?\s+(?:back\s+)?(?:to|onto|into)\s+(?:the\s+)?"
    r"(?:2D|3D|points?|images?)\b",
    re.I,
)
#: The training named beside a protocol's words: ``we train with random flip``, ``resize the images for
#: training``: a recipe setting, not how a figure was measured, unless a test or evaluation word is as near.
_TRAINING_NEAR = re.compile(r"\btrain(?:s|ed|ing)?\b", re.I)
_TESTING_NEAR = re.compile(r"\b(?:test\w*|eval\w*|inference|validat\w*|results?|reported)\b", re.I)
#: How near (characters, either side) a training or testing word is read as the protocol's context.
PROTOCOL_CONTEXT = 40


def _training_protocol(s: str, m: re.Match[str]) -> bool:
    """Whether the protocol words ``m`` of sentence ``s`` describe the training: a training word within
    :data:`PROTOCOL_CONTEXT` characters of them and no test or evaluation word as near."""
    near = s[max(0, m.start() - PROTOCOL_CONTEXT) : m.end() + PROTOCOL_CONTEXT]
    return bool(_TRAINING_NEAR.search(near)) and not _TESTING_NEAR.search(near)


#: How a figure was obtained, in the words of the one who measured it: ``tested with``, ``computed on``,
#: ``done with``, ``is applied``, ``we follow``.
_MEASURED_HOW = re.compile(
    r"\b(?:test(?:ed|s)?|evaluat(?:ed|es)|comput(?:ed|es)|calculat(?:ed|es)|measur(?:ed|es)|scor(?:ed|es)|"
    r"decod(?:ed|es)|obtain(?:ed|s)|appli(?:ed|es)|done|follow(?:s|ed)?|reported|report)\b",
    re.I,
)
#: Words of an explanation (a necessity, a difference, a use): the sentence explains, not only asks.
_EXPLAINS = re.compile(
    r"\b(?:because|since|instead|different|must|should|needs?|have to|has to|uses?|using|used|comparing|"
    r"compared?)\b"
    # a definition of the figure: ``row 12 is the mean over the first 12 steps``
    r"|\b(?:is|are)\s+(?:the|an?)\s+(?:mean|average|sum|median)\s+(?:over|of|across)\b",
    re.I,
)
#: A reference the run is compared with: a paper, a README, a leaderboard, reported or published figures.
_REFERENCE_WORD = re.compile(
    r"\b(?:paper|readme|reported|published|official|you report|as reported|leaderbo\w+|"
    r"previous publications?)\b",
    re.I,
)
#: A question told in words: ``asked whether the number came from the evaluator``.
_ASKED = re.compile(r"\b(?:asked|asks|asking|whether|wonder\w*)\b", re.I)
_REPORTER_KEY = re.compile(r"^(?:reporter|user|op)\b", re.I)
#: The reference named as the owner's own figures, in the reporter's words: ``I am trying to replicate your
#: FID scores below 3``.
_YOUR_FIGURES = re.compile(
    r"\byour\s+(?:[\w-]+\s+){0,2}?(?:scores?|results?|numbers|figures|accuracy|performance)\b", re.I
)
#: The run's figure confirmed as measured right: ``The 1k images' FID is correct``.
_FIGURE_CONFIRMED = re.compile(r"\b(?:is|are)\s+(?:\w+\s+)?correct\b", re.I)
_FIGURE_WORD = re.compile(r"(?<![\w.])\d+(?:\.\d+)?%?(?![\w.]\d)")


def evaluation_explains_gap(
    lines: list[str], params: Mapping[str, object]
) -> tuple[str, str] | None:
    """``(comparison, explanation)`` when a report compares its run's figure with a reference (a sentence of
    its text with a figure and a reference word: a paper, a README, a leaderboard, reported figures) and
    someone of the thread other than the reporter explains the difference by the evaluation (a sentence
    naming the evaluator, its protocol or settings, the leaderboard's entry, another language, task or
    split, the text's tokenisation or the number of samples the figure is computed from, with a word of
    explanation in it or the next sentence: ``must``, ``should``, ``instead``, ``different``, ``using``, or
    a figure stated under that protocol, or the run's figure confirmed as ``correct``), or states how a
    figure was obtained (:data:`_MEASURED_WITH`: ``the reported results are tested with Flip=True``), not
    in a question or a hedge; else ``None``. The reporter's sentence may name the reference as the owner's figures (``your FID
    scores below 3``)."""
    comparison = None
    for line in lines:
        for s in _sentences(line):
            if (_REFERENCE_WORD.search(s) or _YOUR_FIGURES.search(s)) and _FIGURE_WORD.search(s):
                comparison = s.strip()
                break
        if comparison is not None:
            break
    if comparison is None:
        return None
    for key, text in _thread_values(params):
        if _REPORTER_KEY.match(key):
            continue
        # the speaker's own words: a question quoted in the key (what was asked) is not theirs
        sents = _sentences(text.removeprefix(f"{key}: "))
        for i, s in enumerate(sents):
            how = _MEASURED_WITH.search(s)
            if how and "?" not in s and not _ASKED.search(s) and not _HEDGED.search(s):
                if not _NEGATION_BEFORE.search(_clause_before(s, how.start())):
                    return comparison[:240], s.strip()[:240]
            if _explains_by_evaluation(sents, i):
                return comparison[:240], s.strip()[:240]
    return None


def _explains_by_evaluation(sents: list[str], i: int) -> bool:
    """Whether sentence ``i`` of one speaker's sentences ``sents`` explains a gap by the evaluation: it names
    the evaluation side (:data:`_EVAL_SIDE`) with a word of explanation in it or the next sentence, a figure
    beside it or the run's figure confirmed, or it names a measurement protocol (:data:`_PROTOCOL`) with
    how a figure was obtained under it (:data:`_MEASURED_HOW`) or a word of explanation; not in a question,
    a question told in words, or after a negation."""
    s = sents[i]
    if "?" in s or _ASKED.search(s):
        return False
    for pat, how in ((_EVAL_SIDE, None), (_PROTOCOL, _MEASURED_HOW)):
        m = pat.search(s)
        if not m or re.search(
            r"\b(?:not|no|nothing to do with)\s+(?:\w+\s+){0,2}$", s[: m.start()], re.I
        ):
            continue
        # the training's recipe, not the measurement (``we train with random flip``), or a hedge
        if how is not None and (_training_protocol(s, m) or _HEDGED.search(s)):
            continue
        # a protocol denied earlier in its clause: ``the paper's figure was not done with a LM``
        if how is not None and re.search(
            r"\b(?:no|not|never)\b|n't\b", _clause_before(s, m.start()), re.I
        ):
            continue
        # a figure beside the protocol states what the metric is under it (``When 50k images, the FID
        # will be below 3``); a confirmation says the run's figure is right as measured
        rest = s[: m.start()] + s[m.end() :]
        if (
            _EXPLAINS.search(" ".join(sents[i : i + 2]))
            or _FIGURE_WORD.search(rest)
            or _FIGURE_CONFIRMED.search(rest)
            or (how is not None and how.search(rest))
        ):
            return True
    return False


# --- a non-finite value the thread says went away by itself ------------------------------------------

#: The symptom went away with nothing changed: ``it does not affect the training``, ``it usually takes a
#: few iterations to get back to normal``, ``It recovered after few steps training``.
_RECOVERED = re.compile(
    r"\b(?:does|did|do|will|would)\s*(?:n't|not)\s+(?:really\s+)?affect\s+(?:the\s+)?"
    r"(?:training|results?|model|performance|convergence)\b"
    r"|\b(?:gets?|got|getting|goes|went|going|comes?|came|coming)\s+back\s+to\s+normal\b"
    r"|\brecover(?:s|ed)\s+(?:after|within|in|by itself|on its own)\b",
    re.I,
)


def stated_recovered(params: Mapping[str, object]) -> str | None:
    """The sentence of a report's thread (:func:`_thread_values`) that says the symptom went away by itself
    or did not affect the training (:data:`_RECOVERED`), not in a question and not followed by ``still`` /
    ``did not help``; else ``None``."""
    for key, text in _thread_values(params):
        for s in _sentences(text):
            if _RECOVERED.search(s) and "?" not in s and not _PERSISTED.search(s):
                s = s.strip()
                return (s if s.startswith(key) else f"{key}: {s}")[:240]
    return None


# --- where a pasted text ends ---------------------------------------------------------------------------

#: The run stopped, hung or failed, in words: ``training stops at epoch 3``, ``it hangs``, ``the process
#: was killed``, ``crashes with``, ``exits without an error``, ``runs out of memory``.
_STOP_STATED = re.compile(
    r"\b(?:stop(?:s|ped|ping)?|halt(?:s|ed)?|hang(?:s|ing)?|hung|stuck|freez(?:e|es|ing)|froze(?:n)?|"
    r"crash(?:es|ed|ing)?|killed|di(?:e|es|ed)|abort(?:s|ed)?|terminat(?:es|ed)|exit(?:s|ed)?|quit(?:s)?|"
    r"fail(?:s|ed|ing|ure)?|errors? out|interrupt(?:s|ed)?|preempt\w*|segfault\w*|core dumped|"
    r"out of memory|OOM|breaks|broke|restart(?:s|ed)|disconnect(?:s|ed)|(?:end(?:s|ed)|finish(?:es|ed)) "
    r"(?:at|after|early|prematurely|abruptly|suddenly))\b",
    re.I,
)
#: The run not going on, told with a negation (which :func:`_asserted` would read as no statement):
#: ``it does not continue``, ``training didn't finish``, ``never completes``.
_NO_PROGRESS = re.compile(
    r"\b(?:(?:does|did|do|will|would|could|can)(?:n't| not)|never)\s+(?:\w+\s+)?(?:continue|finish|complete|"
    r"proceed|progress|go on|end|resume|start)\w*\b",
    re.I,
)


def is_report(params: Mapping[str, object]) -> bool:
    """Whether the run comes with a report's thread: a param said by the reporter or a maintainer
    (``reporter NAME: "..."``, ``maintainer NAME: "..."``), so its logs are what was pasted there."""
    return any(_REPORTER_KEY.match(str(k)) or _MAINTAINER_KEY.match(str(k)) for k in params)


def stated_stop(params: Mapping[str, object]) -> str | None:
    """The first sentence of a report's thread (:func:`_thread_values`) that says the run stopped, hung
    or failed (:data:`_STOP_STATED`), asserted (not a question, no negation, condition or hedge before
    it in its clause); else ``None``."""
    for key, text in _thread_values(params):
        for s in _sentences(text):
            m = _STOP_STATED.search(s)
            if (m and _asserted(s, m.start())) or (_NO_PROGRESS.search(s) and "?" not in s):
                s = s.strip()
                return (s if s.startswith(key) else f"{key}: {s}")[:240]
    return None


# --- the cause a thread states, read from what its fix or its explanation is about ------------------

#: The software stack or the machine as the object of a fix or a cause: a framework, CUDA / cuDNN / NCCL,
#: a driver, a container, the host's shared memory, RAM or storage (a version alone is not: ``the updated
#: version of the paper``).
_OBJ_ENV = re.compile(
    r"\b(?:py)?torch\b|tensorflow|\btf\b|\bcuda\b|cudnn|cudatoolkit|\bcu\d{2,3}\b|\bdrivers?\b|\bnccl\b|"
    r"\bjax(?:lib)?\b|mxnet|\bkeras\b|docker|\bcontainers?\b|shared[ _-]?memory|/dev/shm|\bshm\b|\bram\b|"
    r"\bswap\b|\bservers?\b|\bfirmware\b|\bstorage\b|\bdisks?\b|\bssds?\b|\bhdds?\b|\bnfs\b|(?-i:\bOS\b)|"
    r"\boperating system\b",
    re.I,
)
#: A setting, the recipe or the data as the object: hyper-parameters, a flag or option (``--name``, a
#: ``snake_case`` setting name), the batch size, the epochs, augmentation, a config file, the dataset, its
#: labels, split or preprocessing.
_OBJ_CONFIG = re.compile(
    r"\bhyper-?param\w*|\bparam(?:eter)?s?\b|\bflags?\b|(?<![\w-])--[a-z][\w-]+|\boptions?\b|\barguments?\b|"
    r"\bsettings?\b|\bconfig\w*|\bya?ml\b|\brecipe\b|\bbatch[ _-]?size\b|\bepochs?\b|\baugment\w*|"
    r"\brandaug\w*|\bdataset\b|\bdata\b(?![ _-]?loader)|\blabels?\b|\bannotations?\b|\bsplits?\b|"
    r"\bpreprocess\w*|\bbounding[ -]?box\w*|\bbbox\w*|\bground[ -]?truth\b|\bbackground\b|\bby default\b|\bas default\b|\b[a-z]+(?:_[a-z]+)+\b(?![.(]\w)",
    re.I,
)
#: The project's code as the object: a bug, the code, a function or a call written as code
#: (``cv2.resize()``, ``optimizer.step()``), lines of a source file, a commit.
_OBJ_CODE = re.compile(
    r"(?<![\w.])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*\([^()\s]{0,40}\)|"
    r"\bbugs?\b|\bcodes?\b|\bfunctions?\b|\blines?\s+\d|(?<!command )\bline\b(?!\s+of\s+(?:the\s+)?log)|\b\w+\.(?:py|cpp|cu|lua)\b|\bcommit\b|"
    r"\bimplementation\b|\bdata[ _-]?loader\b|\bstrings?\b|\bpull request\b|\bPR\b",
    re.I,
)
#: The update size as the object: the learning rate, its schedule or warm-up (the model's convergence,
#: as a confirmed smaller or ramped learning rate is in :func:`confirmed_fix`).
_OBJ_LR = re.compile(
    r"\blearning[ _-]?rates?\b|\b(?:base_|initial_|init_|max_)?lrs?\b|\bwarm-?up\b|\bstep[ _-]?size\b",
    re.I,
)
_OBJECTS = (
    ("learning_rate", _OBJ_LR),
    ("environment", _OBJ_ENV),
    ("config", _OBJ_CONFIG),
    ("code", _OBJ_CODE),
)

#: What the code or the setup left out: ``(was) not using``, ``(is)n't enabled``.
_NOT_DONE = re.compile(r"\s*(?:n't|\s+not)\s+(?:using|used|enabled|set|applied|passed)\b", re.I)
#: A sentence stating a cause: ``caused by lack of shared memory``, ``It was due to a bug in the
#: dataloader``, ``I found the bug``, ``there's sth wrong with the eval function``, ``There was a mismatch
#: with the hyper-parameters``, ``there is normalization incompatibility between the training script and the
#: deepfault code``, ``the training codes was not using randomaug as default``.
_CAUSE_STATED = re.compile(
    r"\b(?:caused by|due to|because of|traced (?:it |this |back )?to|"
    r"the (?:root )?cause (?:is|was)|"
    r"the (?:main |real |root )?reason (?:for (?:this|that|it) |why [^.;!?]{0,60}? )?(?:is|was)|the (?:problem|issue|culprit) was|(?:is|was) the (?:cause|culprit|reason))\b"
    r"|\bturn(?:s|ed) out\b"
    r"|\b(?:i|we)\s+(?:\w+\s+)?(?:found|find|figured|tracked|located)\b[^.;!?]{0,16}?"
    r"\b(?:bugs?|problems?|issues?|cause|reason|mistakes?)\b|\bfigured (?:it )?out\b"
    r"|\bthere(?:'s| is| was| were| are)\s+(?:a|an|one|some|sth|something|two)?\s*(?:\w+\s+)?"
    r"(?:bugs?|issues?|problems?|mismatch\w*|incompatib\w*|mistakes?|typos?|wrong)\s+(?:in|with|on|of|at|between)\b"
    r"|\b(?:mismatch|inconsistenc\w*|discrepanc\w*)\b[^.;!?]{0,40}?\b(?:lies|lie|comes?|came|with|in)\b"
    r"|\b(?:is|are|was|were)" + _NOT_DONE.pattern,
    re.I,
)
#: A finding stated: ``I found that the order of bounding box is actually [xmin, ymin, xmax, ymax]``; a
#: cause when the same value owns the mistake (:data:`_OWN_MISTAKE`), else a symptom seen.
_FOUND_THAT = re.compile(
    r"\b(?:i|we)\s+(?:\w+\s+)?(?:found|realized|realised|noticed|discovered)\s+(?:out\s+)?that\b",
    re.I,
)
#: The writer owns the mistake: ``Silly mistake :(``, ``my bad``, ``it was my problem``, ``my fault``.
_OWN_MISTAKE = re.compile(
    r"\b(?:silly|stupid|careless|dumb|my|own)\s+(?:\w+\s+)?(?:mistakes?|errors?|fault|bad)\b|\bmy bad\b"
    r"|\b(?:it|that|this) was my (?:own )?(?:problem|mistake|fault|error)\b",
    re.I,
)
#: The fix named with its outcome: ``Solved by setting num_workers=0``, ``I fixed it by converting the
#: labels``, ``the issue was resolved by upgrading torch``: the object after ``by`` is the change.
_FIXED_BY = re.compile(
    r"\b(?:fixed|solved|resolved)\s+(?:it\s+|this\s+|that\s+|the\s+(?:\w+\s+)?(?:problem|issue|error|hang|"
    r"crash)\s+)?by\b",
    re.I,
)
#: A change made: its object then says what the fix was about.
_CHANGE_MADE = re.compile(
    r"\b(?:fix(?:ed|ing)?|chang(?:ed|ing)|updat(?:ed|ing)|upgrad(?:ed|ing)|downgrad(?:ed|ing)|"
    r"replac(?:ed|ing)|increas(?:ed|ing)|decreas(?:ed|ing)|adjust(?:ed|ing)|remov(?:ed|ing)|"
    r"comment(?:ed|ing) out|correct(?:ed|ing)|switch(?:ed|ing)|reinstall(?:ed|ing)|modif(?:ied|ying)|"
    r"enlarg(?:ed|ing)|rais(?:ed|ing)|mov(?:ed|ing)|add(?:ed|ing)|"
    r"disabl(?:ed|ing)|enabl(?:ed|ing)|install(?:ed|ing)|convert(?:ed|ing))\b|\b(?:i|we)\s+(?:also\s+|then\s+|just\s+)?set\b"
    # an instruction: ``Please update your nvidia driver to 396.26.``, ``Set larger batch size``
    r"|(?:^\W*|\bplease\s+)(?:update|upgrade|downgrade|install|reinstall|set|use|increase|decrease|"
    r"reduce|lower|raise|change|replace|remove|switch)\b",
    re.I,
)
#: The failure went away or the run improved: ``the problem is fixed``, ``It solved my problem``, ``the
#: training time became shorter``, ``it can be trained using 8 workers`` (``fixed`` before a noun, ``the
#: fixed run``, names a change, not an outcome).
_IMPROVED = re.compile(
    r"\b(?:resolved|solved|works|worked|working|went away|is gone|was gone|no longer|perfectly|fine now)\b"
    r"|\bnow (?:it|this|that)\s+(?:is\s+)?work\b|\b(?:did|does|do)\s+the\s+(?:job|trick)\b"
    r"|\b(?:is|was|been|be|got|get|gets|are|were|now)\s+(?:\w+\s+)?fixed\b"
    r"|\b(?:runs?|trains?|ran|trained|looks?|seems?)\s+(?:fine|good|well|normal(?:ly)?)\b"
    r"|\b(?:became|becomes|is|was|got|gets)\s+(?:much\s+|a lot\s+)?(?:shorter|faster|better|normal)\b"
    r"|\bcan (?:now )?be (?:trained|run)\b"
    # the change named as what removed the failure: ``We have confirmed that it avoids this deadlock``
    r"|\b(?:avoids?|avoided|prevents?|prevented|fix(?:es|ed))\s+(?:this|that|it|the)\b",
    re.I,
)
#: A maintainer's acknowledgement that the project must change: ``This is a bug in our evaluation
#: script``, ``which needs to be fixed``, ``will be fixed soon``, ``I have pushed the fix in bcd19ec``, ``I have updated the code to correct this``, ``I
#: have confirmed this issue on our side``, ``We updated the gpt-grader script``, ``I updated the master branch
#: with the abovementioned fix``.
_ACKNOWLEDGED = re.compile(
    r"\b(?:is|was)\s+(?:a|an)\s+(?:known\s+)?(?:bug|issue|problem|mistake)\s+(?:in|with|of)\b"
    r"|\b(?:needs?|has|have|had)\s+to\s+be\s+fixed\b|\bwill\s+(?:\w+\s+)?be\s+fixed\b"
    r"|\bpushed\s+(?:a|the)\s+fix\b|\bupdated\s+the\s+(?:[\w-]+\s+)?(?:code|script|function|implementation)\b|"
    r"\bupdated\s+the\s+(?:master|main)\s+branch\b|\bconfirmed\s+this\s+(?:issue|bug|problem)\b",
    re.I,
)
#: Words that make a sentence a suggestion, a guess or a condition, not a statement of what happened. A
#: likelihood in the superlative (``the most possible reason is``, ``most likely``) is the speaker's chosen
#: explanation among the candidates, stated as such, not a guess.
_NOT_STATED = re.compile(
    r"^\W*(?:if|when|unless|try)\b|(?<!\bmost )\b(?:possible|possibly|probably|likely)\b"
    r"|\b(?:suspect\w*|wonder\w*|whether|tried|try(?:ing)?|hope)\b",
    re.I,
)
#: How the reference was trained, stated by its maintainer: ``It was trained with 5 layers of 800 node GRUs
#: ... and ran for 97 epochs``, ``We trained it for 300 epochs``, ``our model used 4 GPUs``.
_REFERENCE_RECIPE = re.compile(
    r"\b(?:it|this|that|the (?:model|checkpoint|result|number|figure|baseline)s?|we|i|ours?)\s+"
    r"(?:was\s+|were\s+|(?:have\s+|had\s+)?)(?:originally\s+)?(?:trained|ran|run|fine-?tuned|pre-?trained)"
    r"\s+(?:it\s+|them\s+)?(?:with|for|on|using)\b",
    re.I,
)
_THREAD_PERSON = re.compile(
    r"^(?:reporter|user|op|maintainer|(?:co-?)?author|owner|developer|contributor|commenter|another user)\b",
    re.I,
)
_ACK_KEY = re.compile(r"^(?:maintainer|(?:co-?)?author|owner|developer|contributor)\b", re.I)

#: Nothing failed, in a maintainer's words: the spread of reruns (``any WER differences here are just
#: random noise``, ``significant variance in training runs``), a value at the model's floor that is
#: already good (``yours is already very good``), results already at the reference (``your results are
#: already very close to ... the paper``), a figure read on another scale (``the two are equivalent, only
#: the scale differs``), an outdated reference (``you're looking at an old version of the paper``),
#: ``That's normal``.
_NOTHING_WRONG = re.compile(
    r"\b(?:just|only|simply|within(?: the)?|mostly)\s+(?:[\w-]+\s+)?(?:noise|variance|variation)\b"
    r"|\brandom noise\b"
    r"|\bvariance (?:in|between|across|of) (?:\w+\s+)?runs\b"
    r"|\b(?:is|are|'s|'re)\s+already\s+(?:very\s+|quite\s+|pretty\s+)?(?:good|close|fine|great)\b"
    r"|\bonly the scale differs\b|\b(?:the )?(?:two|both) are equivalent\b"
    r"|\b(?:old|older|outdated|earlier|previous|first) version of the (?:paper|readme|table)\b"
    r"|\b(?:that|this|it)(?:'s| is)\s+(?:totally\s+|completely\s+|perfectly\s+|quite\s+)?normal\b"
    # the answer opens by calling the run's figures right: ``Hi, it is correct.``
    r"|^\W*(?:(?:hi|hello|yes)\W+)?(?:that|this|it)(?:'s| is)\s+(?:all\s+)?correct\W*$"
    r"|\b(?:is|are|'s|looks?|seems?)\s+(?:ok|okay|fine)\b(?!-)"
    # a message without consequence: ``This warning can be safely ignored``, ``it is harmless``
    r"|\bcan\s+(?:safely\s+)?be\s+(?:safely\s+)?ignored\b|\bcan\s+(?:safely\s+)?ignore\s+(?:this|these|that|it|the)\b"
    r"|\b(?:is|are)\s+(?:completely\s+|totally\s+)?harmless\b"
    # the reference's own runs showed the same: ``we had the same experience on JAAD``, ``I have the same
    # numbers``
    r"|\b(?:we|i)\s+(?:also\s+)?(?:had|have|saw|see|observed|got|get)\s+the\s+same\s+(?:experience|behaviou?r|"
    r"curves?|thing|pattern|numbers|results?|figures|scores?|accuracy)\b"
    # the run's figures judged against the reference's own: ``The results you're observing appear to be in
    # line with ours``, ``Your numbers look good``
    r"|\b(?:in line|consistent|on par)\s+with\s+(?:ours|our\s+(?:own\s+)?(?:results|numbers|figures|runs)|"
    r"what we (?:got|get|saw|see|observed))\b"
    r"|\byour\s+(?:[\w-]+\s+){0,2}?(?:numbers|results|figures|scores|accuracy|curves?)\s+(?:look|looks|seem|"
    r"seems|are)\s+(?:\w+\s+)?(?:good|right|correct|reasonable|fine)\b"
    # the reference itself is wrong: ``the paper is incorrect for this particular experiment``
    r"|\bthe\s+(?:paper|readme|table)(?:'s\s+[\w-]+)?\s+(?:is|was)\s+(?:\w+\s+)?incorrect\b"
    # the reference is a mean over seeds, the run one draw from that spread: ``the value reported in the
    # paper is averaged after training 100 times (with different random seeds)``
    r"|\b(?:averaged?|mean)\b[^.;!?]{0,60}?\b(?:different|multiple|several|many|\d+)\s+(?:random\s+)?"
    r"(?:seeds|runs)\b"
    # reruns that differ by their random start: ``different initialization values lead to different
    # accuracies``
    r"|\bdifferent\s+(?:random\s+)?(?:initiali[sz]ations?|seeds?|initiali[sz]ation values)\s+"
    r"(?:\w+\s+){0,2}?(?:lead|leads|give|gives|result|results|yield|yields)\s+(?:in\s+|to\s+)?"
    r"(?:slightly\s+|somewhat\s+)?different\s+(?:accurac\w+|results|numbers|scores|figures|performance)\b",
    re.I,
)

#: A failure named beside the words that nothing failed: then they do not clear the run (a cause word such
#: as ``due to`` may explain the noise: ``variance in training runs due to CUDNN``).
_CALM_SPOILED = re.compile(
    r"\b(?:wrong\w*|mistake|bug\w*|nan|inf|errors?|fix\w*|lower|reduce|oom|crash\w*|diverg\w*|"
    r"not (?:normal|expected|reasonable))\b",
    re.I,
)


def _object_of(text: str) -> str | None:
    """The class of the first object named in ``text`` (:data:`_OBJECTS`: ``environment``, ``config``,
    ``code``), or ``None``."""
    found = [(m.start(), i) for i, (_, pat) in enumerate(_OBJECTS) if (m := pat.search(text))]
    return _OBJECTS[min(found)[1]][0] if found else None


#: How far after a statement's verb its object is looked for (characters): the rest of its clause.
OBJECT_WINDOW = 50


def _calm_denied(s: str) -> bool:
    """Whether sentence ``s``'s words that nothing failed (:data:`_NOTHING_WRONG`) are negated: a negation
    up to the end of their clause (``It's not fine``, ``I don't think it is normal``). A negation in a
    later clause explains why nothing failed (``It's fine, there is an extra head during pretraining,
    which is not used for finetuning``)."""
    m = _NOTHING_WRONG.search(s)
    if m is None:
        return True
    ends = [i for c in ",;:" if (i := s.find(c, m.end())) >= 0]
    end = min(ends) if ends else len(s)
    return bool(_NEGATED.search(s[:end]))


def _calm_sentence(sents: list[str]) -> str | None:
    """The first of a maintainer's sentences ``sents`` that says nothing failed (:data:`_NOTHING_WRONG`):
    not a question, not spoiled, negated, unstated or a change made, and no one set anything; else ``None``."""
    return next(
        (
            s
            for s in sents
            if _NOTHING_WRONG.search(s)
            and "?" not in s
            and not _CALM_SPOILED.search(s)
            and not _calm_denied(s)
            and not _NOT_STATED.search(s)
            and not _CHANGE_MADE.search(s)
            and not re.search(r"\b(?:i|we|you)\s+(?:\w+\s+)?set\b", s, re.I)
        ),
        None,
    )


def _sentence_cause(
    key: str, own: str, sents: list[str], i: int, later_gone: bool
) -> tuple[str, str] | None:
    """``(kind, sentence)`` that sentence ``sents[i]`` of the value ``own`` (by ``key``) states: a cause
    (:func:`_stated_cause_in`), a change the run confirmed (:func:`_confirmed_change_in`, ``later_gone``:
    a later value says the problem went away) or a maintainer's acknowledgement
    (:func:`_acknowledged_in`); ``None`` for a question, a hedge, an unstated or persisting one."""
    s = sents[i]
    if unasserted(s) or _HEDGED.search(s) or _NOT_STATED.search(s) or _PERSISTED.search(s):
        return None
    nxt = sents[i + 1] if i + 1 < len(sents) else ""
    if nxt and _PERSISTED.search(nxt):
        return None
    said = f"{key}: {s.strip()}"[:240]
    return (
        _stated_cause_in(s, nxt, own, said)
        or _confirmed_change_in(s, nxt, own, said, later_gone)
        or _acknowledged_in(key, s, own, said)
    )


def _stated_cause_in(s: str, nxt: str, own: str, said: str) -> tuple[str, str] | None:
    """``(kind, said)`` when sentence ``s`` states a cause (:data:`_CAUSE_STATED`) whose object (in
    ``s``, else in the next sentence ``nxt``) is named; the environment only when the value ``own``
    names no other change; else ``None``."""
    m = _CAUSE_STATED.search(s)
    if m is None and _OWN_MISTAKE.search(own):
        m = _FOUND_THAT.search(s) or _OWN_MISTAKE.search(s)
    if m is None:
        return None
    # a negation before the statement or inside it (``There's no bug in``), not the one that
    # states what the code left out (``was not using randomaug``)
    inside = _NOT_DONE.sub("", m.group(0))
    if _NEGATION_BEFORE.search(f"{_clause_before(s, m.start())} {inside}"):
        return None
    kind = (
        _object_of(s[m.start() : m.end() + OBJECT_WINDOW])
        or _object_of(s[m.end() :])
        or _object_of(nxt)
    )
    if kind is not None and not (kind == "environment" and _OTHER_CHANGE.search(own)):
        return kind, said
    return None


def _improved_clause(text: str) -> bool:
    """Whether a clause of ``text`` (split at ``,`` ``;`` ``:`` and ``but``) says the run improved
    (:data:`_IMPROVED`) without a negation in that clause: ``now it is work, but I don't know if that's
    right`` improved; ``it does not work`` did not."""
    return any(
        _IMPROVED.search(c) and not _NEGATED.search(c)
        for c in re.split(r"[,;:]|\bbut\b", text, flags=re.I)
    )


def _confirmed_change_in(
    s: str, nxt: str, own: str, said: str, later_gone: bool
) -> tuple[str, str] | None:
    """``(kind, said)`` when sentence ``s`` states a change made (:data:`_CHANGE_MADE`) whose object is
    named and the run improved (:data:`_IMPROVED` in the rest of ``s``, in ``nxt`` or ``later_gone``);
    else ``None``. ``I set X`` also tells a setup (``I set the num_workers=2.``): it is a change only with
    the improvement in its own sentence or the next (``I set the num_workers to be 4 and it worked now!``)."""
    by = _FIXED_BY.search(s)
    if by is not None and not _NEGATION_BEFORE.search(_clause_before(s, by.start())):
        kind = _object_of(s[by.end() : by.end() + OBJECT_WINDOW])
        if kind is not None and not (kind == "environment" and _OTHER_CHANGE.search(own)):
            return kind, said
    m = _CHANGE_MADE.search(s)
    if m is None or _NEGATION_BEFORE.search(_clause_before(s, m.start())):
        return None
    rest = s[: m.start()] + s[m.end() :]
    gone = any(_improved_clause(x) for x in (rest, nxt) if x)
    kind = _object_of(s[m.end() : m.end() + OBJECT_WINDOW])
    # the stack changed together with the model, data or code: not the environment's fix alone
    if kind == "environment" and _OTHER_CHANGE.search(own):
        kind = None
    if kind is not None and (gone or (later_gone and not m.group(0).lower().endswith("set"))):
        return kind, said
    return None


def _acknowledged_in(key: str, s: str, own: str, said: str) -> tuple[str, str] | None:
    """``(kind, said)`` when a maintainer's (``key``) sentence ``s`` acknowledges the project must change
    (:data:`_ACKNOWLEDGED`, not negated): ``environment`` when the stack is named within
    :data:`OBJECT_WINDOW`, else ``config`` when the value ``own`` names a setting, else ``code``."""
    m = _ACKNOWLEDGED.search(s) if _ACK_KEY.match(key) else None
    if m is None or _NEGATED.search(s):
        return None
    if _OBJ_ENV.search(s[m.start() : m.end() + OBJECT_WINDOW]):
        return "environment", said
    return ("config" if _OBJ_CONFIG.search(own) else "code"), said


#: A maintainer's fix that landed in the project: ``this issue is resolved in #167``, ``fixed in PR #12``, a
#: pull request that ``closes this issue``, ``Fixed. Please update``, a commit named (by its hash or its URL)
#: as where the fix is.
_FIX_LANDED = re.compile(
    r"\b(?:resolved|fixed|solved|addressed)\s+(?:in|by|with|via)\s+(?:(?:the\s+)?(?:pull request|PR|commit)\s*)?"
    r"(?:[\w.-]+/[\w.-]+)?#\d+"
    r"|\b(?:pull request|PR)\b[^;!?]{0,200}?\b(?:closes|fixes|resolves|closed|fixed|resolved)\s+(?:this|the)\s+issue\b"
    r"|(?:^|[\s\"'“])fixed[.!]?[\"'”]?\s+please\s+(?:update|upgrade|pull|git pull|reinstall)\b"
    # a commit named as the fix: ``This is now corrected in commit 97e9c5d``, ``I have changed it in
    # f216512``, ``Fixed this in https://github.com/o/r/commit/c957dea``
    r"|\b(?:fixed|corrected|resolved|solved|addressed|patched|changed|updated)\s+(?:(?:this|it|that)\s+)?(?:now\s+)?"
    r"(?:in|by|with|via)\s+(?:the\s+)?(?:commit\s+)?(?:https?://\S+/commits?/\w+|(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b)",
    re.I,
)
#: A pull request's or commit's title quoted after it: its object says what the fix changed.
_QUOTED_TITLE = re.compile(r"[\"“(]([^\"”()]{8,200})[\"”)]")
#: A maintainer's word that the settings shipped were not tuned: ``the scripts under runnable/ have not
#: been tuned``, ``not tuned well enough``: the settings (the recipe) are the cause.
_UNTUNED = re.compile(
    r"\b(?:not|never)\s+(?:been\s+|yet\s+)?(?:well[ -])?tuned\b|\buntuned\b", re.I
)


def _fix_landed(key: str, own: str) -> tuple[str, str] | None:
    """``(kind, said)`` when a maintainer's (``key``) value ``own`` (or its key, which may hold a pull
    request's title) says the project's settings were not tuned (:data:`_UNTUNED`: ``config``) or that a fix landed in the project (:data:`_FIX_LANDED`): the
    object of the fix's quoted title when it names one (:func:`_object_of`), else ``code`` (the project
    changed its code to fix the report); else ``None``. A question or a hedge states nothing."""
    if not _ACK_KEY.match(key) or "?" in own or _HEDGED.search(own):
        return None
    said = f"{key}: {own.strip()}"
    m = _UNTUNED.search(said)
    if m is not None and not _NOT_STATED.search(_clause_before(said, m.start())):
        return "config", said[:240]
    m = _FIX_LANDED.search(said)
    if m is None:
        return None
    title = _QUOTED_TITLE.search(said[max(0, m.start() - 200) :])
    kind = _object_of(title.group(1)) if title is not None else None
    return kind or "code", said[:240]


#: A maintainer's answer that agrees with what the question before it proposed: ``Yes, you are right.``,
#: ``Yes, I think it is a bug.``, ``Exactly.``, ``Correct.``
_AGREES = re.compile(
    r"^\W*(?:yes|yeah|yep|exactly|correct|right|indeed|you(?:'re| are) right)\b", re.I
)
_DISAGREES = re.compile(r"\b(?:but|however|although|though)\b", re.I)


def _affirmed_hypothesis(
    key: str, sents: list[str], earlier: list[tuple[str, str]]
) -> tuple[str, str] | None:
    """``(kind, said)`` when a maintainer's (``key``) answer ``sents`` opens by agreeing (:data:`_AGREES`,
    no ``but`` / ``however`` or negation in its first two sentences) and the thread's last value before it
    (``earlier``: whoever said it) asks a question: the question's proposal is then the stated cause (``There is a
    statistical ratio in the loss function ... which leads to nan. Is this correct?`` -> ``Yes, you are
    right.``). The object is the one the answer names, else the first the question's value names
    (:func:`_object_of`); else ``None``."""
    if not earlier or not sents or not _AGREES.match(sents[0]):
        return None
    first = " ".join(sents[:2])
    if _DISAGREES.search(first) or _NEGATED.search(first):
        return None
    asked_key, asked = earlier[-1]
    if "?" not in asked and "\uff1f" not in asked:
        return None
    proposal = asked.removeprefix(f"{asked_key}: ")
    kind = _object_of(first) or _object_of(proposal)
    if kind is None:
        return None
    return kind, f"{key}: {first.strip()} (to {asked_key}: {proposal.strip()[:120]})"[:240]


def _reference_recipe(key: str, sents: list[str]) -> tuple[str, str] | None:
    """``("config", sentence)``: the reference's recipe, stated by its maintainer (``key``) in a report
    compared with a reference: the run differs from it by its settings (a hedge after the statement,
    ``probably with the augment flag set``, qualifies a detail, not the statement); else ``None``."""
    for s in sents:
        m = _REFERENCE_RECIPE.search(s)
        if m and "?" not in s and not _NOT_STATED.search(_clause_before(s, m.start())):
            if not _HEDGED.search(s[: m.start()]) and not _NEGATED.search(s[: m.end()]):
                return "config", f"{key}: {s.strip()}"[:240]
    return None


def _value_cause(
    key: str,
    text: str,
    later: list[tuple[str, str]],
    said_all: list[tuple[str, str]],
    compared: bool,
) -> tuple[str, str] | None:
    """The cause one thread value (``key: text``) states, for :func:`stated_cause`: ``("healthy",
    sentence)`` for a maintainer's sentence that nothing failed, else the first sentence's stated cause
    (:func:`_sentence_cause`; a change counts as confirmed when a ``later`` value says the problem went),
    else, for a maintainer, the agreed question's proposal (:func:`_affirmed_hypothesis`); ``None`` when it
    states nothing."""
    own = text.removeprefix(f"{key}: ")
    sents = _sentences(own)
    maintainer = bool(_ACK_KEY.match(key))
    if maintainer:
        calm = _calm_sentence(sents)
        if calm is not None:
            return "healthy", f"{key}: {calm.strip()}"[:240]
    later_gone = any(
        _IMPROVED.search(s) and not _NEGATED.search(s) and "?" not in s
        for _, t in later
        for s in _sentences(t)
    )
    got = next(
        (g for i in range(len(sents)) if (g := _sentence_cause(key, own, sents, i, later_gone))),
        None,
    )
    if got is None and maintainer:
        got = _affirmed_hypothesis(key, sents, said_all[: said_all.index((key, text))])
    if got is None and maintainer:
        got = _fix_landed(key, own)
    return got


def _confirms(key: str, text: str, got: tuple[str, str], other: tuple[str, str] | None) -> bool:
    """Whether a maintainer's (``key``) value ``text``, whose stated cause is ``got``, only says a fix
    landed (:func:`_fix_landed`) of the kind of the cause ``other`` stated before it: it then confirms
    that cause, whose sentence names it."""
    if other is None or other[0] != got[0]:
        return False
    return got == _fix_landed(key, text.removeprefix(f"{key}: "))


def stated_cause(params: Mapping[str, object]) -> tuple[str, str] | None:
    """``(kind, sentence)``: what a report's thread states the cause or the fix was, classed by its object,
    or ``None``. ``kind``:

    * ``"environment"``: the stack or the machine (:func:`environment_fix`, or a stated cause or a
      confirmed change whose object is in :data:`_OBJ_ENV`: ``caused by lack of shared memory``);
    * ``"code"`` / ``"config"``: the project's code (a bug, a function, lines of a file), or a setting,
      the recipe or the data (hyper-parameters, a flag, the batch size, the epochs, augmentation, the
      dataset, its labels or preprocessing), the first object named within :data:`OBJECT_WINDOW`
      characters from a sentence's statement of a cause (:data:`_CAUSE_STATED`: ``It was due to a bug in
      the dataloader``, ``There was a mismatch with the hyper-parameters``; with no object there, the next
      sentence's: ``I found the bug. Just comment these two lines``), or after a change confirmed by the run
      then working (:data:`_CHANGE_MADE`, with :data:`_IMPROVED` in the same or the next sentence or in a
      later value: ``after adjusting dataset_enlarge_ratio the training time became shorter``), or a
      maintainer's acknowledgement that the project must change (:data:`_ACKNOWLEDGED`: ``Duplicate of
      #1430 -- which needs to be fixed``, ``I have pushed the fix``, ``This is a bug in our evaluation
      script``: ``environment`` when the stack is named within the window, else ``config`` when its
      value names a setting, else ``code``);
    * ``"learning_rate"``: the learning rate, its schedule or warm-up named as that object
      (:data:`_OBJ_LR`: ``the cause was the learning rate set too high``): the model's convergence;
    * ``"healthy"``: a maintainer's (or author's) sentence that nothing failed (:data:`_NOTHING_WRONG`:
      rerun noise, a value already good, another scale, an outdated reference, ``That's normal``). A value
      that says so is not read for causes (``That's normal ... This is mostly caused by the small batch
      size`` explains the normal behaviour).

    A question, a hedge, a condition or an attempt (``maybe``, ``probably``, ``if``, ``tried``), a negation
    before the statement in its clause or a ``still`` / ``did not help`` states nothing; the setup lines
    (task, command, config) are not statements. A value that states a cause comes before one that says
    nothing failed, and a maintainer's (or author's) cause before anyone else's: the reporter's workaround
    (``when I changed the batch size, the problem is gone``) yields to the maintainer's explanation. A
    maintainer's answer that agrees (``Yes, you are right.``) with the question just before it states the
    question's proposal (:func:`_affirmed_hypothesis`); the writer's own finding with the mistake owned
    (``I found that the order of bounding box is actually ... Silly mistake``) is a stated cause; in a
    comparison with a reference, a maintainer's statement of the reference's recipe (:func:`_reference_recipe`)
    is the cause (``config``) unless a maintainer also says nothing failed (``Your numbers look good``); an
    instruction (``Please update your nvidia driver``) is a change made, confirmed like any other; ``fixed /
    solved by X`` names the change X with its outcome; ``turns out`` states a found cause; a cause
    statement with no object in its window takes the first object of the rest of its sentence (``it turns
    out that the nan comes out because the default learning rate is too large``), then the next one's. A
    maintainer's fix landed (:func:`_fix_landed`) of the same kind as a cause stated before it confirms that
    cause, whose sentence names it (``It is caused by cv2.resize()`` before ``Fixed it in ac143e3``)."""
    fixed = confirmed_fix(params)
    if fixed is None or fixed[0] != "code":
        env = environment_fix(params)
        if env is not None:
            return "environment", env
    said_all = _thread_values(params)
    values = [(k, t) for k, t in said_all if _THREAD_PERSON.match(k)]
    compared = any(
        _REFERENCE_WORD.search(str(v)) for k, v in params.items() if not str(k).startswith("log.")
    )
    healthy: tuple[str, str] | None = None
    # the first cause stated by someone other than a maintainer
    other: tuple[str, str] | None = None
    # the reference's recipe a maintainer states in a comparison: a difference inferred, not a verdict
    recipe: tuple[str, str] | None = None
    for vi, (key, text) in enumerate(values):
        got = _value_cause(key, text, values[vi + 1 :], said_all, compared)
        if got is not None and got[0] == "healthy":
            healthy = healthy or got
            continue
        if got is not None and _ACK_KEY.match(key):
            if _confirms(key, text, got, other):
                return other
            return got  # the maintainer's word on the cause outranks the reporter's
        if got is None and compared and _ACK_KEY.match(key):
            recipe = recipe or _reference_recipe(key, _sentences(text.removeprefix(f"{key}: ")))
        other = other or got
    if recipe is not None:
        # the maintainer's own verdict that the run's figures are fine outranks the recipe they describe
        return healthy or recipe
    if other is not None:
        return other
    if fixed is not None and fixed[0] == "code":
        return "code", fixed[1]
    return healthy


#: A pasted training record whose loss (the total or a term of it) or gradient norm is NaN or infinite, among
#: the record's other ``name: value`` pairs (``... loss_dense_depth: 0.9466, loss: nan, grad_norm: nan``;
#: ``(Step: 95400) train_mel_loss_before = nan.``): a NaN term makes the total NaN.
_RECORD_NONFINITE = re.compile(
    r"(?<![\w.])(?:[\w/.-]*loss[\w/.-]*|grad[_ ]?norm)\s*[:=]\s*-?(?:nan|inf)\b", re.I
)


def pasted_nonfinite(console: list[str]) -> str | None:
    """The first pasted line (``console``: the text of the log files, not the context's prose) that is a
    training record (at least two ``name: value`` pairs) whose loss or gradient norm is NaN or inf
    (:data:`_RECORD_NONFINITE`), cut to 160 characters around it; else ``None``. A one-line paste is too
    short for the series reader's curve, yet it shows the run diverged."""
    for line in console:
        m = _RECORD_NONFINITE.search(line)
        if m and len(re.findall(r"[\w/.]+\s*[:=]\s*[-+\w.]+", line)) >= 2:
            lo = max(0, m.start() - 100)
            return ("..." if lo else "") + line[lo : m.end() + 40].strip()
    return None
