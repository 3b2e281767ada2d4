"""The planned length of a run, from every source that states it.

One place answers "how long was this run meant to be?" for every reader (the verdict's
ending, the detectors' context). Sources, in the order they are believed:

1. **Params** (tracker params, hparams/config sidecar files the readers load: Lightning
   ``hparams.yaml``, Ultralytics ``args.yaml``/``opt.yaml``, timm ``args.yaml``, W&B
   ``config.yaml``, MLflow/ClearML params, HF ``trainer_state.json`` and ``TrainingArguments``,
   console plan facts such as ``log.total_steps``): a key whose last component (after ``.``,
   ``/``, ``:``) is a step budget (:data:`PLANNED_STEP_NAMES`: ``max_steps``, ``max_iter``,
   ``train_iters``, ``total_steps``, accelerate's ``max_train_steps``...) or an epoch budget
   (:data:`PLANNED_EPOCH_NAMES`: ``num_train_epochs``, ``epochs``, ``max_epochs``...), with a
   finite positive value (HF's and Lightning's ``-1`` mean "not set").
2. **The console**: the HF Trainer banner ``Total optimization steps = N``; an ``Epoch k/N``
   counter (Keras ``Epoch 3/20``, Lightning's rich bar ``Epoch 3/19``, ``Epoch [3/100]``,
   ``epoch: 3/100``, ``EPOCH 3 of 30``); a step counter ``step k/N`` / ``iter [k/N]`` /
   ``Iteration k/N`` / ``step k of N``. A counter is believed only when one total ``N`` holds for
   at least half of its occurrences (a per-epoch batch bar restarts with its own total; it is not
   the run's plan) and its ``k`` does not go back to its start at every pass (:func:`pass_counter_total`:
   it counts one pass's batches; a console reader's ``log.total_steps`` taken from it is not believed
   either); ``k`` of its last occurrence is the length reached by the console's own
   count, the median rise of ``k`` between prints its logging interval, and the printed text is
   kept so that the report names it. Last, a budget the run states at start-up (:data:`_STATED`:
   ``--epochs 500``, ``{'num_train_epochs': 3}``, ``"max_steps": 20000``, ``Training for 500
   epochs``), whose reached length the caller measures from the series as for params.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace

#: Param names of a step budget (HF ``max_steps``, detectron2 ``MAX_ITER``, Megatron ``train_iters``,
#: accelerate examples ``max_train_steps``, transformers schedulers ``num_training_steps``, boosting rounds).
PLANNED_STEP_NAMES = (
    "max_steps",
    "max_iter",
    "max_iters",
    "train_iters",
    "total_steps",
    "num_steps",
    "total_iters",
    "max_iterations",
    "num_iterations",
    "max_train_steps",
    "num_training_steps",
    "total_training_steps",
    "train_steps",
    # gradient boosting's rounds (one tree per round, the step of a boosting console): XGBoost's
    # xgb.train ``num_boost_round`` and its CLI ``num_round``, the scikit-learn API's ``n_estimators``
    # (XGBoost, LightGBM, scikit-learn), R's ``nrounds``; LightGBM's ``num_iterations`` is above
    "num_boost_round",
    "num_round",
    "n_estimators",
    "nrounds",
)
#: Param names of an epoch budget. Not ``epoch``: HF saves the epoch *reached* under it.
PLANNED_EPOCH_NAMES = (
    "num_train_epochs",
    "epochs",
    "max_epochs",
    "n_epochs",
    "num_epochs",
    "max_epoch",
    "num_epoch",
    "total_epochs",
    "train_epochs",
    "nb_epochs",
    "nb_epoch",
)

#: Lines frameworks print when training returns normally (also after early stopping): HF
#: ``train_runtime`` / "Training completed", detectron2 "Overall training speed" / "Total training
#: time", Lightning "`Trainer.fit` stopped" / "Signaling Trainer to stop", Ultralytics "N epochs
#: completed in", YOLOX "Training of experiment is done", TensorFlow 1 Estimator "Loss for final step"
#: (``estimator.py``, printed when ``train()`` returns), and the plain-prose end lines of research
#: code ("Training finished.", "Training complete", "Finished training", "Training done"; OpenNMT-py
#: "Training finished after not improving"). A "finished"/"done" that ends the line or is followed by
#: punctuation or "after"/"in"/"and" ("Training finished and model saved") is the end of training, not
#: a per-epoch line ("Training finished epoch 3" is not matched). A short run whose log ends with one
#: of these ended normally.
NORMAL_END = re.compile(
    r"'train_runtime'|\"train_runtime\"|Training completed|Overall training speed|"
    r"Total training time|Trainer\.fit` stopped|Signaling Trainer to stop|"
    r"epochs completed in|Training of experiment is done|Loss for final step|"
    r"\bglobal_step = \d+, average loss = |"
    r"\b(?:training (?:is )?(?:finished|complete|done)|finished training)"
    r"(?=\s*(?:$|[.!:,;]|after\b|in\b|and\b))",
    re.I,
)

_HF_TOTAL = re.compile(r"Total optimization steps = ([\d,]+)")
#: ``Epoch 3/20``, ``Epoch [3/100]``, ``epoch: 3/100``, ``epoch 17 of 500``
_EPOCH_OF = re.compile(r"\bepoch\s*[:=]?\s*[\[(]?\s*(\d+)\s*(?:/|\s+of\s+)\s*(\d+)(?!\d)", re.I)
#: ``step 65/3000``, ``Iter [65/3000]``, ``iteration 65 of 3000``; not Docker's build steps
#: (``Step 3/12 : RUN pip install``)
_STEP_OF = re.compile(
    r"\b(?:step|iter|iteration)\s*[:=]?\s*[\[(]?\s*(\d+)\s*(?:/|\s+of\s+)\s*(\d+)(?!\d)"
    r"\s*[\])]?(?!\s*:\s)",
    re.I,
)
#: A loop counter under any word (``Epoha [3/10]``, ``Epoche 3/10``, ``Época [3/10]``): a word at the
#: start of a line (after markers such as ``=>``, ``---``, ``#``), then ``k/N`` with or without brackets.
_WORD_OF = re.compile(
    r"^[\W_]*?(?P<word>[^\W\d_]{3,})\s*[:=]?\s*[\[(]?\s*(\d+)\s*/\s*(\d+)(?!\d)\s*[\])]?"
)
#: Console lines scanned at each end of the log (the plan is printed at the start, the count at the end).
SCAN_LINES = 5000

_NAMES = "|".join(sorted(PLANNED_STEP_NAMES + PLANNED_EPOCH_NAMES, key=len, reverse=True))
#: A budget the run prints as it starts: a command line's ``--epochs 500`` (argparse also takes the
#: value after a space; ``--epochs=500`` is read by the console parser), a Python dict or JSON print
#: of the arguments (``{'num_train_epochs': 500}``, ``"max_epochs": 500``), and the start-up prose of
#: training loops (``Training for 500 epochs``, ``Start training for 10000 steps``; not the past
#: tense ``trained for``, which reports what was done).
_STATED = re.compile(
    rf"(?:(?<![\w-])--(?P<flag>{_NAMES})\s+|['\"](?P<key>{_NAMES})['\"]\s*:\s*)(?P<n>\d+(?:\.0+)?)(?![\w.])|"
    r"\b(?:start(?:ing)?\s+)?train(?:ing)?\s+for\s+(?P<pn>\d+)\s+(?P<punit>epoch|step|iteration|iter)s?\b",
    re.I,
)


@dataclass(frozen=True)
class PlannedLength:
    """A planned length and where it was read.

    Attributes:
        planned: the budget (steps or epochs), > 0.
        unit: ``"step"`` or ``"epoch"``.
        source: the param key, or ``"console 'Epoch k/N'"`` and the like.
        reached: the count reached by the same source, when the source states it (a console
            counter's last ``k``), else ``None`` (the caller measures it from the series).
        interval: the source's own counting interval (the median rise of a console counter's ``k``
            between consecutive prints: 100 for ``Train step:605700/617600`` printed every 100
            steps), else ``None``.
        text: the console text that stated the plan (a counter's last occurrence, ``step:605700/617600``),
            else ``None``.
        open_pass: for an outer-loop counter printed as a block after each pass (:func:`_outer_loop`),
            why the console ends inside the next pass (lines logged after the last block), else ``None``.
        first: a console counter's first ``k`` (1 for a 1-based ``Epoch 1/N`` ... ``Epoch N/N``), else
            ``None``.
    """

    planned: float
    unit: str
    source: str
    reached: float | None = None
    interval: float | None = None
    text: str | None = None
    open_pass: str | None = None
    first: float | None = None


def leaf(key: str) -> str:
    """The last component of a param or metric key (after ``.``, ``/``, ``:``), lower case."""
    return re.split(r"[./:]", key.strip().lower())[-1]


def first_positive_param(
    params: dict[str, str], name_of: Callable[[str], str | None], order: tuple[str, ...]
) -> tuple[str, float] | None:
    """``(key, value)`` of the param whose ``name_of(key)`` comes first in ``order`` and whose
    value is a finite positive number (the first such key per name wins), else None."""
    found: dict[str, tuple[str, float]] = {}
    for k, v in params.items():
        name = name_of(k)
        if name is None or name in found:
            continue
        try:
            x = float(str(v).strip())
        except ValueError:
            continue
        if math.isfinite(x) and x > 0:
            found[name] = (k, x)
    for n in order:
        if n in found:
            return found[n]
    return None


def param_plan(params: dict[str, str], names: tuple[str, ...]) -> tuple[str, float] | None:
    """``(key, value)`` of the first name in ``names`` (in that order) that a param's last key
    component equals, with a finite positive numeric value; the first such key per name wins."""
    return first_positive_param(params, lambda k: leaf(k) if leaf(k) in names else None, names)


def _counter(lines: list[str], pattern: re.Pattern) -> PlannedLength | None:
    """The plan of a ``k/N`` counter whose N is the same in at least half of its hits: N, the
    last ``k``, the median positive rise of ``k`` between consecutive hits (its printing
    interval, ``None`` with fewer than two rises) and the text of the last hit (unit and source
    are filled by the caller)."""
    hits = [
        (int(m.group(1)), int(m.group(2)), m.group(0))
        for t in lines
        for m in [pattern.search(t)]
        if m
    ]
    hits = [(k, n, t) for k, n, t in hits if 0 < n and 0 <= k <= n]
    if not hits:
        return None
    n, count = Counter(n for _, n, _ in hits).most_common(1)[0]
    if count * 2 < len(hits):
        return None
    same = [(k, t) for k, nn, t in hits if nn == n]
    rises = sorted(b - a for (a, _), (b, _) in zip(same, same[1:]) if b > a)
    interval = float(rises[len(rises) // 2]) if len(rises) >= 2 else None
    if _restarts_per_pass([k for k, _ in same], n, interval):
        return None
    return PlannedLength(
        float(n),
        "",
        "",
        float(same[-1][0]),
        interval,
        same[-1][1].strip()[:160],
        first=float(same[0][0]),
    )


#: A ``k/N`` counter that goes back to the start of its count this many times, each time from its
#: last print before N, counts the batches of one pass (``iteration:2 step:56/1044`` after
#: ``iteration:1 step:1000/1044``: own corpus f20b2-11, a ChineseNER console of 100 passes), not the
#: run's steps. Two, so that one relaunch appended to a console (a restart from an arbitrary ``k``)
#: is not read as a pass.
PASS_RESTARTS = 2


def _restarts_per_pass(ks: list[int], n: int, interval: float | None) -> bool:
    """Whether the counts ``ks`` of a ``k/N`` counter restart at every pass: they go back at
    least :data:`PASS_RESTARTS` times, each time from a count within one printing ``interval`` of
    ``n`` (the counter printed its last value of the pass, then began the next)."""
    if interval is None:
        return False
    backs = [(a, b) for a, b in zip(ks, ks[1:]) if b < a]
    return len(backs) >= PASS_RESTARTS and all(a + interval >= n for a, _ in backs)


def pass_counter_total(lines: list[str]) -> float | None:
    """N of a console ``step k/N`` counter that restarts at every pass (:func:`_restarts_per_pass`):
    the number of batches in one pass, which is no planned length of the run; else None."""
    if len(lines) > 2 * SCAN_LINES:
        lines = lines[:SCAN_LINES] + lines[-SCAN_LINES:]
    hits = [(int(m.group(1)), int(m.group(2))) for t in lines for m in [_STEP_OF.search(t)] if m]
    hits = [(k, n) for k, n in hits if 0 < n and 0 <= k <= n]
    if not hits:
        return None
    n, count = Counter(n for _, n in hits).most_common(1)[0]
    ks = [k for k, nn in hits if nn == n]
    rises = sorted(b - a for a, b in zip(ks, ks[1:]) if b > a)
    interval = float(rises[len(rises) // 2]) if len(rises) >= 2 else None
    return float(n) if _restarts_per_pass(ks, n, interval) else None


def console_plan(lines: list[str]) -> list[PlannedLength]:
    """Planned lengths stated in console text (see the module docstring), best first."""
    if len(lines) > 2 * SCAN_LINES:
        lines = lines[:SCAN_LINES] + lines[-SCAN_LINES:]
    out: list[PlannedLength] = []
    for t in lines[:SCAN_LINES]:
        m = _HF_TOTAL.search(t)
        if m:
            out.append(
                PlannedLength(
                    float(m.group(1).replace(",", "")),
                    "step",
                    "console 'Total optimization steps'",
                    text=m.group(0),
                )
            )
            break
    ep = _counter(lines, _EPOCH_OF)
    if ep is not None:
        out.append(replace(ep, unit="epoch", source="console 'Epoch k/N'"))
    else:
        outer = _outer_loop(lines)
        if outer is not None:
            out.append(outer)
    st = _counter(lines, _STEP_OF)
    if st is not None:
        out.append(replace(st, unit="step", source="console 'step k/N'"))
    stated = _stated(lines[:SCAN_LINES])
    if stated is not None:
        out.append(stated)
    return out


#: Words whose ``k/N`` counts steps or batches, or that the epoch pattern reads (Docker's ``Step 3/12 :``
#: build steps among them), never an outer loop of passes.
_NOT_OUTER = frozenset({"step", "steps", "iter", "iters", "iteration", "batch", "batches", "epoch"})
#: An outer-loop counter is at most this share of the console's lines (printed once per pass, between
#: the lines of the inner loop it wraps).
OUTER_SHARE = 0.2


def _outer_loop(lines: list[str]) -> PlannedLength | None:
    """The plan of an outer training loop printed under a word no pattern names (a language other
    than English: ``=> Epoha [1/10] ZAVRSENA!``): one word heads >= 2 lines with ``k/N``, N the same
    in every one, k rising by exactly 1 from one to the next and never restarting (a per-epoch batch
    bar restarts, and a step counter rises by its interval), those lines at most :data:`OUTER_SHARE`
    of the console. Read as epochs: the loop printed once per pass with the loss lines of the pass
    between, which is what an epoch header or summary is. ``None`` otherwise (or when the word is
    one of :data:`_NOT_OUTER`)."""
    by_word: dict[str, list[tuple[int, int, str]]] = {}
    for t in lines:
        m = _WORD_OF.match(t)
        if m:
            by_word.setdefault(m["word"].lower(), []).append((int(m[2]), int(m[3]), t))
    for word, hits in by_word.items():
        if word in _NOT_OUTER or len(hits) < 2 or len(hits) > OUTER_SHARE * len(lines):
            continue
        n = hits[0][1]
        ks = [k for k, _, _ in hits]
        if n <= 0 or any(nn != n for _, nn, _ in hits) or not 0 < ks[-1] <= n:
            continue
        if any(b - a != 1 for a, b in zip(ks, ks[1:])):
            continue
        return PlannedLength(
            float(n),
            "epoch",
            f"console '{word} k/N' (an outer loop)",
            float(ks[-1]),
            1.0,
            hits[-1][2].strip()[:160],
            _after_last_block(lines, hits[-1][2], ks[-1], n),
        )
    return None


def _after_last_block(lines: list[str], last: str, k: int, n: int) -> str | None:
    """Why the console ends inside pass ``k + 1`` of ``n``: the last counter line ``last`` heads a
    block (it and the lines up to the next blank line), and two or more non-blank lines follow that
    block (the records of a pass that never printed its own line); else ``None`` (the log ends with
    the block, or the counter line heads the records of its pass, as an epoch header does)."""
    i = len(lines) - 1 - lines[::-1].index(last)
    j = i + 1
    while j < len(lines) and lines[j].strip():
        j += 1
    after = [t for t in lines[j:] if t.strip()]
    if len(after) < 2 or k >= n:
        return None
    return (
        f"{len(after)} lines follow the last '{last.strip()[:60]}' block: the console ends inside "
        f"pass {k + 1} of {n}"
    )


def _stated(lines: list[str]) -> PlannedLength | None:
    """The first budget a start-up line states (:data:`_STATED`), with no reached length (the
    caller measures it from the series), else None."""
    for t in lines:
        for m in _STATED.finditer(t):
            name = (m["flag"] or m["key"] or "").lower()
            if name:
                unit = "step" if name in PLANNED_STEP_NAMES else "epoch"
                n = float(m["n"])
            else:
                unit = "epoch" if m["punit"].lower() == "epoch" else "step"
                n = float(m["pn"])
            if n > 0:
                return PlannedLength(n, unit, "console's stated plan", text=m.group(0).strip())
    return None


def planned_lengths(run) -> list[PlannedLength]:
    """Every planned length ``run`` (a :class:`~mlaudit_core.rundata.RunData`) states, in the
    order they are believed: params' step budget, params' epoch budget, then the console."""
    out: list[PlannedLength] = []
    steps = param_plan(run.params, PLANNED_STEP_NAMES)
    if steps is not None and steps[0].startswith("log.") and run.console:
        # a plan the console reader took from a counter of the same console: not believed when
        # that counter restarts at every pass (it counts one pass's batches)
        if pass_counter_total([c.text for c in run.console]) == steps[1]:
            steps = None
    if steps is not None:
        out.append(PlannedLength(steps[1], "step", steps[0]))
    epochs = param_plan(run.params, PLANNED_EPOCH_NAMES)
    if epochs is not None:
        out.append(PlannedLength(epochs[1], "epoch", epochs[0]))
    if run.console:
        out.extend(console_plan([c.text for c in run.console]))
    return out


def planned_epochs(run) -> int | None:
    """Epochs the run planned (params first, then the console's ``Epoch k/N``), or ``None``."""
    for p in planned_lengths(run):
        if p.unit == "epoch":
            return int(p.planned)
    return None


#: An epoch index and a per-pass batch counter ``k/N`` on one line: ``Epoch 1 [300/469]`` (the
#: PyTorch DCGAN example and the loops written after it), ``Epoch: [1][190/480]`` (the PyTorch ImageNet
#: example's ``ProgressMeter``), ``[Epoch 2/200] [Batch 300/938]`` (PyTorch-GAN), ``epoch 3, iter
#: 200/1000``. The epoch and the counter are separated by a bracket, blanks or punctuation, so
#: ``Epoch 12/40`` alone (a plan counter) is not read as epoch 1 at 2/40.
_EPOCH_BATCH = re.compile(
    r"\bepoch\b[\s:=#]*[\[(]?\s*(?P<e>\d+)(?:\s*/\s*\d+)?\s*(?:[\])][\s,|:-]*|[\s,|:-]+)"
    r"[\[(]?\s*(?:(?:batch|iter(?:ation)?|step)\b[\s:=#]*)?[\[(]?\s*(?P<k>\d+)\s*/\s*(?P<n>\d+)(?!\d)[\])]?",
    re.I,
)


def cut_pass(lines: list[str]) -> str | None:
    """Why the console ends inside a pass over the data, from a per-pass batch counter
    (:data:`_EPOCH_BATCH`), else ``None``.

    The counter must count one pass: its most common total ``N`` holds for at least half of its lines
    and its ``k`` goes back to its start when the epoch index rises, after an earlier pass printed
    ``k`` within one printing interval of ``N`` (the loop prints to the end of each pass). Its last
    line is then inside a pass when its ``k`` is more than one printing interval (the median rise of
    ``k`` within a pass) short of ``N``, and no end-of-training line (:data:`NORMAL_END`) follows it.
    A loop that runs its passes to the end prints its last ``k`` within one interval of ``N`` at the
    end of every pass, the last one included, so a console whose last counter stops mid-pass was cut
    while that pass ran (a kill, a crash that printed nothing, a copy of a running job): own corpus
    f21b1-11, a DCGAN console that ends at ``Epoch 1 [300/469]`` after printing every 100 batches."""
    hits = [
        (i, int(m["e"]), int(m["k"]), int(m["n"]), m.group(0))
        for i, t in enumerate(lines)
        if "poch" in t or "POCH" in t
        for m in [_EPOCH_BATCH.search(t)]
        if m
    ]
    hits = [h for h in hits if 0 < h[3] and 0 <= h[2] <= h[3]]
    if len(hits) < 3:
        return None
    n, count = Counter(h[3] for h in hits).most_common(1)[0]
    if count * 2 < len(hits):
        return None
    same = [h for h in hits if h[3] == n]
    rises = sorted(b[2] - a[2] for a, b in zip(same, same[1:]) if a[1] == b[1] and b[2] > a[2])
    if len(rises) < 2:
        return None
    interval = rises[len(rises) // 2]
    i, epoch, k, _, text = same[-1]
    done = [h[2] for h in same if h[1] < epoch]
    if not done or max(done) + interval < n or k + interval >= n:
        return None
    if any(NORMAL_END.search(t) for t in lines[i + 1 :]):
        return None
    return (
        f"the console's last batch counter (`{text.strip()[:80]}`) is at batch {k} of the {n} of its "
        f"pass, printed every {interval} batches, and earlier passes printed theirs to the end: the "
        "console ends inside that pass"
    )
