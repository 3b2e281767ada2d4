"""Why a run's figure differs from its reference, as a report's thread states it.

A report compares its run with a reference (``the MRR results reported in the paper``, ``lower than MixVPR
repo's training result (~0.87)``) and someone of the thread other than the reporter states why the two
differ. An analyst takes the cause from what that sentence names, and only from a sentence that states it:

* ``training_length``: the run was trained far shorter than the reference (``your only problem is that you
  have not trained the models long enough``, ``it needs many more iterations``): the model had not converged,
  model_convergence;
* ``configuration``: a setting of the run differs from the reference's, with the value named (``because in
  the yaml file you used, the out_channel is initialized to 512 (the default value). While the paper uses
  1024``), or a setting named as the mismatch (``There was a mismatch with the hyper-parameters (namely
  batch size)``, ``The inconsistency ... lies in the parameter --freeze_text_encoder``), or the training
  code's default named as not the reference's (``the training codes was not using randomaug as
  default``), or a recipe setting stated with the run's value against the reference's (``a 4-GPU machine
  will yield a bn batch size of 12 instead of 24``): the run is a faithful run of another configuration,
  data_config.

The evaluation side (another protocol, scorer, split or leaderboard entry) is read by
:func:`mlaudit_core.verdict.statements.evaluation_explains_gap`. A question, a negation before the words in
their clause and a hedge (``maybe``, ``could be``, a list of candidates) state nothing; the reporter's own
guesses are not the thread's explanation.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from .statements import _FIGURE_WORD as _FIGURE
from .statements import _REPORTER_KEY, _sentences, _thread_values, unasserted

#: A reference the run is compared with, in a sentence that holds a figure or says the run falls short
#: of it: a paper, a README, a repository's or an official result, a leaderboard.
_REFERENCE = re.compile(
    r"\b(?:paper|readme|reported|published|official|leaderbo\w+|repo(?:sitory)?'s (?:\w+ )?results?|"
    r"you report\w*)\b",
    re.I,
)
_SHORT_OF = re.compile(
    r"\b(?:can ?not|cannot|can't|couldn't|could not|unable to|fail(?:s|ed)? to)\s+(?:\w+\s+){0,2}?"
    r"(?:reproduce|achieve|reach|get|match)\b|\b(?:lower|worse|below|less) than\b",
    re.I,
)
#: Training far shorter than the reference's: ``have not trained the models long enough``, ``train it
#: much longer``, ``it needs many more iterations``.
_TRAINED_SHORT = re.compile(
    r"\b(?:not|n't|never)\s+(?:been\s+)?train(?:ed|ing)?\s+(?:\w+\s+){0,3}?(?:long enough|enough|"
    r"to convergence)\b"
    r"|\btrain(?:ed|ing)?\s+(?:it\s+|them\s+|the models?\s+)?(?:much\s+|a lot\s+|far\s+)?longer\b"
    r"|\b(?:needs?|requires?|takes?|took)\s+(?:\w+\s+){0,3}?(?:more|longer)\s+(?:training|epochs|"
    r"iterations|steps)\b",
    re.I,
)
#: A setting named with its value: ``the out_channel of MixVPR is initialized to 512 (the default value)``,
#: ``in the yaml file you used ... 512``, ``lr is set to 0.1 in your config``.
_SETTING = re.compile(
    r"\b(?:ya?ml|config\w*|default (?:value|setting)s?|hyper-?param\w*|initiali[sz]ed to|set to)\b",
    re.I,
)
_BECAUSE = re.compile(r"\b(?:because|since|that's why|this is why|due to)\b", re.I)
#: The reference's own value stated: ``the paper uses 1024``, ``we trained with 1024``, ``should be 1024``,
#: ``instead of 512``.
_REFERENCE_VALUE = re.compile(
    r"\b(?:paper|original|official|readme|we|i)\s+(?:\w+\s+){0,2}?(?:uses?|used|sets?|trained with|"
    r"train with)\b[^.;]*?\d"
    r"|\b(?:should be|instead of|rather than)\b[^.;]*?\d",
    re.I,
)
_HEDGE = re.compile(
    r"\b(?:maybe|perhaps|might|could be|may be|possibly|not sure|i guess|one of the following)\b",
    re.I,
)
_NEGATION = re.compile(r"\b(?:no|not|never|without|nothing)\b|n't\b", re.I)


#: Falling short of a target named by the verb itself or by its figure: ``Fail to reproduce the result``
#: (what is reproduced is the reference), ``unable to reach 90%``.
_SHORT_OF_TARGET = re.compile(
    r"\b(?:can ?not|cannot|can't|couldn't|could not|unable to|fail(?:s|ed)? to|not able to)\s+"
    r"(?:reproduce\b|(?:\w+\s+){0,2}?(?:reach|achieve|get|match)\s+(?:\w+\s+){0,2}?\d)",
    re.I,
)


def _comparison(lines: list[str]) -> str | None:
    """The first sentence of the text that compares the run with a reference: a reference word with a
    figure, or with words saying the run falls short of it (``can not achieve the comparable results
    reported in the paper``), or words saying the run falls short of a target the verb or its figure names
    (:data:`_SHORT_OF_TARGET`)."""
    for line in lines:
        for s in _sentences(line):
            if _REFERENCE.search(s) and (_FIGURE.search(s) or _SHORT_OF.search(s)):
                return s.strip()[:240]
            if _SHORT_OF_TARGET.search(s) and "?" not in s:
                return s.strip()[:240]
    return None


def _stated(s: str, m: re.Match[str]) -> bool:
    """Not a question, not hedged, no negation earlier in the words' clause (``it is not because of the
    config``)."""
    lo = max(s.rfind(p, 0, m.start()) for p in ",;:(") + 1
    return not unasserted(s) and not _HEDGE.search(s) and not _NEGATION.search(s[lo : m.start()])


#: A setting named as where the run and the reference differ: ``There was a mismatch with the
#: hyper-parameters (namely batch size)``, ``that's the mismatch with our configuration``, ``The
#: inconsistency between reported and reproduced performance lies in the parameter --freeze_text_encoder``;
#: or the training code's default named as not what the reference used: ``the training codes was not
#: using randomaug as default``.
_SETTING_WORD = (
    r"(?:hyper-?param\w*|param(?:eter)?s?|config\w*|settings?|flags?|--[a-z][\w\-]*|batch[ _-]?size|"
    r"learning[ _-]?rate|gpus?|augment\w*|defaults?)"
)
_SETTING_MISMATCH = re.compile(
    rf"\b(?:mismatch\w*|inconsisten\w*|discrepanc\w*)\b[^.;!?]{{0,80}}?(?<![\w-]){_SETTING_WORD}\b"
    r"|\b(?:not|n't)\s+(?:using|use|used|enabl\w*|turn\w* on|set)\b[^.;!?]{0,40}?\b(?:as|by)\s+default\b",
    re.I,
)


#: A recipe setting stated with the run's value against the reference's: ``a 4-GPU machine will yield a bn
#: batch size of 12 instead of 24``, ``lr 0.01 rather than 0.1``.
_SETTING_INSTEAD = re.compile(
    rf"(?<![\w-]){_SETTING_WORD}\b[^.;!?]{{0,30}}?(?<![\w.])\d[\w.]*\s+(?:instead of|rather than)\s+\d",
    re.I,
)


def _reason_in(sents: list[str], i: int) -> str | None:
    """The kind of reason sentence ``i`` of one speaker's value states, else None."""
    s = sents[i]
    m = _TRAINED_SHORT.search(s)
    if m and not unasserted(s) and not _HEDGE.search(s):
        return "training_length"
    m = _SETTING_MISMATCH.search(s)
    if m and not unasserted(s) and not _HEDGE.search(s):
        lo = max(s.rfind(p, 0, m.start()) for p in ",;:(") + 1
        if not re.search(r"\b(?:no|not|never|nothing)\b|n't\b", s[lo : m.start()], re.I):
            return "configuration"
    m = _SETTING_INSTEAD.search(s)
    if m and _stated(s, m):
        return "configuration"
    m = _SETTING.search(s)
    if m and _stated(s, m) and _FIGURE.search(s) and _BECAUSE.search(s):
        if _REFERENCE_VALUE.search(" ".join(sents[i : i + 2])):
            return "configuration"
    return None


def stated_gap_reason(
    lines: list[str], params: Mapping[str, object]
) -> tuple[str, str, str] | None:
    """``(kind, comparison, sentence)`` when the text compares the run with a reference (:func:`_comparison`)
    and someone of the thread other than the reporter states why they differ: ``kind`` is
    ``training_length`` or ``configuration`` (module docstring); else ``None``."""
    comparison = _comparison(lines)
    if comparison is None:
        return None
    for key, text in _thread_values(params):
        if _REPORTER_KEY.match(key):
            continue
        sents = _sentences(text.removeprefix(f"{key}: "))
        for i in range(len(sents)):
            kind = _reason_in(sents, i)
            if kind is not None:
                return kind, comparison, f"{key}: {sents[i].strip()}"[:240]
    return None
