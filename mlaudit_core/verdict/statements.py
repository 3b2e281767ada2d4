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
    r"roll\w* back|revert\w*|updat\w*|mov\w* to|went back to|using)\b[^.;!?]{0,60}?"
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
