"""What a detector may know about a run beyond its curves: chance level, fine-tune evidence, loss components.

Shared by GE001, GE002, GE004, GE005, OP003 and LI006. Every figure here is read from the
run itself (params, config, the logged series); nothing is assumed about a framework
except the names its defaults write (see :mod:`mlaudit_core.roles`).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

import numpy as np

from ..formats.consolelog.context import chance_level
from ..roles import Role, as_fraction, lr_param_name, normalise_key
from ..rundata import RunData


@dataclass(frozen=True)
class Chance:
    """Chance level of a classification-style run.

    Attributes:
        accuracy: accuracy of a uniform guess (1/K).
        loss: cross-entropy of a uniform guess, ln K (nats).
        classes: K.
        source: where K came from (a param key, or ``"loss and accuracy agree"``).
    """

    accuracy: float
    loss: float
    classes: int
    source: str


#: The vocabulary size as a whole leaf name: ``vocab_size``, ``model_config.vocab_size``, never
#: ``type_vocab_size`` (BERT's token-type count, 2) or ``max_vocab_size``-like compounds.
_VOCAB_KEY = re.compile(r"(?:^|[./])(?:vocab_size|n_vocab|num_tokens|ntokens)$", re.IGNORECASE)
_ID2LABEL = re.compile(r"(?:^|[._/])id2label$", re.IGNORECASE)
#: One entry of a label map flattened into params (TensorBoard text summaries of the HF config:
#: ``model_config.id2label.3 = LABEL_3``).
_ID2LABEL_ENTRY = re.compile(r"^(?P<map>(?:.*[._/])?id2label)[./](?P<id>\d+)$", re.IGNORECASE)


def label_map(run: RunData) -> tuple[int, str, bool] | None:
    """``(entries, param key, named)`` of the run's label map (HF ``id2label``), given as one JSON
    value or flattened into one param per entry; ``named`` when a label is not HF's default
    ``LABEL_<i>``. ``None`` without one."""
    for key, v in run.params.items():
        if _ID2LABEL.search(key.strip()):
            n = _count_labels(str(v))
            if n:
                return (
                    n,
                    key,
                    not re.fullmatch(r"[\s{}'\":,0-9]*(?:LABEL_\d+[\s{}'\":,0-9]*)*", str(v)),
                )
    maps: dict[str, list[str]] = {}
    for key, v in run.params.items():
        m = _ID2LABEL_ENTRY.match(key.strip())
        if m:
            maps.setdefault(m["map"], []).append(str(v).strip())
    if maps:
        name, labels = max(maps.items(), key=lambda kv: len(kv[1]))
        return len(labels), name, any(not re.fullmatch(r"LABEL_\d+", lab) for lab in labels)
    return None


def chance(run: RunData, *, vocab: bool = True) -> Chance | None:
    """The run's chance level, or ``None`` when nothing in the run states or shows it.

    ``vocab=False`` leaves out the vocabulary-size source (an accuracy's chance level is the
    task's label count, never a vocabulary).

    In order: the *consistency* inference below (two measurements agreeing beat a param
    whose meaning is a guess: realworld wb04 has a 200-class param but sits at ln 10 with
    accuracy 0.10), then ``num_classes``/``num_labels``/``chance``/binary in params (as GE004 always
    did), the number of entries of an ``id2label`` label map (HF model config, one JSON param or
    flattened ``model_config.id2label.<i>`` entries; only with a ``*ForSequenceClassification``-style
    architecture, named labels, or a size other than 2, since every HF config carries a default
    two-entry ``id2label``), a ``vocab_size`` param (language models: the uniform next-token loss
    is ln V; only with an LM head, or with no architecture or label map named and a perplexity or no
    accuracy logged: classifier configs carry the vocabulary of their encoder; never
    ``type_vocab_size``). The
    consistency inference: the final validation accuracy within 10% (relative) of 1/K
    and the final training loss within 3% of ln K for the same K in 2..1000. Two
    independent quantities agreeing on K is the evidence an analyst uses when a run
    "sits at ln 4 with accuracy 0.24" (realworld tb02, ts04; wb01 of the Lion runs).
    """
    seen = _inferred(run)
    if (
        seen is not None
    ):  # what the run shows beats what a param might mean (``classes: 200`` of a dataset)
        return seen
    if regression_task(run):
        return None  # a regression has no uniform guess over classes: no integer of it is a K
    got = chance_level(run.params)
    if got is not None and 0 < got[0] < 1:
        k = max(2, round(1 / got[0]))
        return Chance(got[0], math.log(1 / got[0]), k, got[1])
    binary = _binary_metric(run)
    if binary is not None:
        return binary
    arch = " ".join(
        str(v) for k, v in run.params.items() if re.search(r"architectures?$", k.strip(), re.I)
    )
    classifier = bool(re.search(r"For\w*Classification", arch))
    lm_head = bool(
        re.search(r"For(?:Causal|Masked)LM|ForConditionalGeneration|LMHead|ForSeq2SeqLM", arch)
    )
    labels = label_map(run)
    if labels is not None and not lm_head:
        n, key, named = labels
        # every HF config carries id2label {0: LABEL_0, 1: LABEL_1} by default: only a classifier
        # head, named labels or a map of another size (num_labels set) make it the class count
        if n >= 2 and (classifier or named or n != 2):
            return Chance(1 / n, math.log(n), n, key)
    if not vocab or not (lm_head or (not (arch or classifier or labels) and _token_task(run))):
        # a classifier's config carries its encoder's vocabulary: the vocabulary is the chance level
        # of next-token prediction only, never of a task whose labels are unknown
        return None
    for key, v in run.params.items():
        if _VOCAB_KEY.search(key.strip()):
            try:
                n = int(float(str(v).strip()))
            except ValueError:
                continue
            if n >= 2:
                return Chance(1 / n, math.log(n), n, key)
    return None


#: HF's ``problem_type`` param (``model_config.problem_type``, ``args.problem_type``) as a whole leaf.
_PROBLEM_TYPE_KEY = re.compile(r"(?:^|[./])problem_type$", re.IGNORECASE)


def regression_task(run: RunData) -> bool:
    """Whether the run's config states a regression: HF ``problem_type: regression`` (transformers'
    ``PretrainedConfig``: the loss is MSE on ``num_labels`` outputs), or a label map of one entry (HF's
    ``num_labels=1`` regression head). A regression loss has no chance level over classes, so no
    config integer (a pretrained model's ``vocab_size``) gives one (issue 27: the chance level comes
    from the task's label count only; own corpus f10b2-01: an ESM protein-regression fine-tune with the
    masked-LM config's ``vocab_size`` 33 and ``id2label`` {0: LABEL_0}, MSE 25 -> 15)."""
    for key, v in run.params.items():
        if (
            _PROBLEM_TYPE_KEY.search(key.strip())
            and str(v).strip().strip("'\"").lower() == "regression"
        ):
            return True
    labels = label_map(run)
    return labels is not None and labels[0] == 1


def _token_task(run: RunData) -> bool:
    """Whether the run, with no architecture named, reads as token prediction: a perplexity is
    logged, or no accuracy is (a classifier is judged by accuracy; a language model by its loss)."""
    keys = [normalise_key(k) for k in run.metrics.keys]
    if any("perplexity" in k or re.search(r"(^|[/_])ppl($|[/_])", k) for k in keys):
        return True
    return not (run.key_for(Role.VAL_ACCURACY) or run.key_for(Role.TRAIN_ACCURACY))


def _count_labels(text: str) -> int | None:
    try:
        d = json.loads(text.replace("'", '"'))
        return len(d) if isinstance(d, dict) else None
    except (ValueError, TypeError):
        n = len(re.findall(r"['\"]?\d+['\"]?\s*:", text))
        return n or None


def _last_finite(run: RunData, role: Role, tail: int = 3) -> float | None:
    key = run.key_for(role)
    if key is None:
        return None
    s = run.series(key).by_step().finite()
    if not len(s):
        return None
    v = s.values
    if role in (Role.VAL_ACCURACY, Role.TRAIN_ACCURACY):
        v, _ = as_fraction(key, v)
    return float(np.median(v[-tail:]))


def _inferred(run: RunData) -> Chance | None:
    """K where the final validation accuracy is within 10% of 1/K and the final training loss, else
    the final validation loss (the same held-out data as the accuracy), within 3% of ln K; with no
    held-out accuracy or loss logged, the final training accuracy and training loss the same way;
    else :func:`_from_start`."""
    acc = _last_finite(run, Role.VAL_ACCURACY)
    pairs: tuple[tuple[Role, int], ...] = ((Role.TRAIN_LOSS, 5), (Role.VAL_LOSS, 3))
    if acc is None and run.key_for(Role.VAL_LOSS) is None:
        # no held-out number at all: the training accuracy and the training loss, measured on the same
        # batches, are the two quantities that agree on K (own f22b2-12: loss 1.609 = ln 5, accuracy 0.198)
        acc, pairs = _last_finite(run, Role.TRAIN_ACCURACY), ((Role.TRAIN_LOSS, 5),)
    if acc is None or not (0.001 <= acc < 0.55):
        return None
    k = round(1 / acc)
    if 2 <= k <= 1000 and abs(acc - 1 / k) <= 0.1 / k:
        for role, tail in pairs:
            loss = _last_finite(run, role, tail=tail)
            if loss is not None and loss > 0 and abs(loss - math.log(k)) <= 0.03 * math.log(k):
                return Chance(1 / k, math.log(k), k, "loss and accuracy agree")
    held = _heldout_at_uniform(run)
    if held is not None:
        return held
    if _last_finite(run, Role.TRAIN_LOSS, tail=5) is None:
        return None
    return _from_start(run)


#: A held-out loss within this share of ln K at every evaluation sits at the uniform guess: an untrained
#: K-way softmax scores ln K exactly, up to the spread of its initial logits (Karpathy, "A recipe for
#: training neural networks", 2019: "verify loss @ init"); 1% is 0.007 at K = 2, under a tenth of the way
#: from ln 2 to ln 3. newuser10 hf_defaults_at_chance: eval_loss 0.6936, 0.6934, 0.6933 (ln 2 = 0.6931).
HELDOUT_UNIFORM_TOL = 0.01
#: ... with a held-out accuracy whose best lift over 1/K, as a share of the way from 1/K to 1.0, stays under
#: this (GE004's threshold for a held-out metric that beat chance, 25%).
HELDOUT_UNIFORM_LIFT = 0.25


def _heldout_at_uniform(run: RunData) -> Chance | None:
    """K where the held-out loss is within :data:`HELDOUT_UNIFORM_TOL` of ln K at every one of >= 3
    evaluations (its predictions never left the uniform guess) and the held-out accuracy (an
    ``acc``/``top1`` metric, >= 3 evaluations) never beat 1/K by :data:`HELDOUT_UNIFORM_LIFT` of the way
    to 1.0: the two held-out measurements agree on a K-way model predicting alike for every class. This
    holds where the final accuracy misses 1/K by more than 10% (a model predicting one class scores that
    class's share: 0.43 on a binary evaluation set) and where the training loss is only a summary value
    (HF Trainer at logging_steps 500). K in 2..1000."""
    vk, ak = run.key_for(Role.VAL_LOSS), run.key_for(Role.VAL_ACCURACY)
    if vk is None or ak is None or not re.search(r"acc|top-?1", normalise_key(ak)):
        return None
    v = run.series(vk).by_step().finite().values
    a = run.series(ak).by_step().finite().values
    if len(v) < 3 or len(a) < 3 or not 0 < float(np.median(v)) < math.log(1000) + 0.01:
        return None
    k = round(math.exp(float(np.median(v))))
    if not 2 <= k <= 1000:
        return None
    lnk = math.log(k)
    if float(np.max(np.abs(v - lnk))) > HELDOUT_UNIFORM_TOL * lnk:
        return None
    acc = as_fraction(ak, a)[0]
    if (float(np.max(acc)) - 1 / k) / (1 - 1 / k) >= HELDOUT_UNIFORM_LIFT:
        return None
    return Chance(1 / k, lnk, k, "held-out loss at ln K at every evaluation, accuracy at chance")


#: A logged metric named after a binary objective: LightGBM's ``binary_logloss`` / ``binary_error``
#: (the metrics of its ``objective='binary'``, LightGBM documentation "Parameters: metric"): K = 2.
_BINARY_METRIC = re.compile(r"(?:^|[/_.])binary_(?:logloss|error)$", re.IGNORECASE)


def _binary_metric(run: RunData) -> Chance | None:
    key = next((k for k in run.metrics.keys if _BINARY_METRIC.search(k)), None)
    return Chance(0.5, math.log(2), 2, key) if key else None


def _from_start(run: RunData) -> Chance | None:
    """K from the start of training: the first logged training loss within 3% of ln K (an untrained
    classifier's cross-entropy is the uniform guess's) and the median validation accuracy within 15%
    of 1/K (held-out accuracy at a uniform guess all run long), for the same K in 2..1000. Two
    quantities agreeing on K, as in :func:`_inferred`, when the training loss has since fallen
    (a model that memorised labels it cannot generalise: shuffled labels, a broken split). Only
    for an accuracy (``acc``/``top1`` in its name): realworld mlf02's YOLOv8 mAP50-95 of ~0.19
    with a first box loss near ln 5 is no chance level."""
    tk, vk = run.key_for(Role.TRAIN_LOSS), run.key_for(Role.VAL_ACCURACY)
    if tk is None or vk is None or not re.search(r"acc|top-?1", normalise_key(vk)):
        return (
            None  # a detection score (mAP) or F1 is not a share of right guesses: 1/K means nothing
        )
    t = run.series(tk).by_step().finite()
    v = run.series(vk).by_step().finite()
    # a first loss above ln 1000 names no K of 2..1000 (and exp() of a 1e16 loss overflows)
    if len(t) < 3 or len(v) < 3 or not 0 < t.values[0] < math.log(1000) + 1:
        return None
    acc = float(np.median(as_fraction(vk, v.values)[0]))
    k = round(math.exp(float(t.values[0])))
    if not 2 <= k <= 1000 or abs(float(t.values[0]) - math.log(k)) > 0.03 * math.log(k):
        return None
    if abs(acc - 1 / k) > 0.15 / k:
        return None
    return Chance(1 / k, math.log(k), k, "first training loss and validation accuracy agree")


_PRETRAINED_KEYS = re.compile(
    r"(?:^|[._/])(?:_?name_or_path|model_name_or_path|pretrained(?:_model)?(?:_name)?(?:_or_path)?|"
    r"base_model(?:_name_or_path)?|init_from|resume_from_checkpoint|load_from|finetune_from|from_pretrained|"
    r"weights|init_checkpoint|checkpoint_path|ckpt_path|pretrained_weights)$",
    re.IGNORECASE,
)
_PEFT_KEYS = re.compile(
    r"(?:^|[._/])(?:peft_type|lora_r|lora_alpha|lora_rank|use_lora|use_peft|adapter_name|"
    r"finetuning_type|finetune)$",
    re.IGNORECASE,
)
_FALSY = {"", "none", "null", "false", "0", "scratch", "''", '""', "[]", "{}"}


def finetune_evidence(run: RunData) -> tuple[str, str] | None:
    """(param key, value) showing the run started from trained weights, or ``None``.

    A pretrained model name or path (HF ``_name_or_path`` / ``model_name_or_path``), a
    warm start (nanoGPT ``init_from`` other than ``scratch``, Ultralytics ``model``/YOLOv5
    ``weights`` ending in ``.pt``, ``resume_from_checkpoint``), or PEFT/LoRA settings.
    """
    for key, v in run.params.items():
        k, val = key.strip(), str(v).strip()
        if val.lower() in _FALSY:
            continue
        if _PRETRAINED_KEYS.search(k):
            return key, val[:200]
        if re.search(r"(?:^|[._/])model$", k, re.IGNORECASE) and re.search(
            r"\.(?:pt|pth|ckpt|safetensors|bin)$", val, re.IGNORECASE
        ):
            return key, val[:200]
        if _PEFT_KEYS.search(k) and val.lower() not in ("false", "0", "none"):
            return key, val[:200]
    return None


def loss_keys(run: RunData, *, evaluation: bool) -> list[str]:
    """Every logged loss-like key (components included) of the training or the evaluation split: a
    name whose head is a loss (``loss``, ``nll``, cross-entropy, bits per byte, perplexity;
    :func:`mlaudit_core.roles.parse_name`), not a loss scale, with an evaluation split or not."""
    from ..roles import parse_name

    out = []
    for k in run.metrics.keys:
        p = parse_name(k)
        if p.family != "loss" or any(t in ("scale", "lossscale") for t in p.tokens):
            continue
        if (p.split == "eval") == evaluation:
            out.append(k)
    return sorted(out)


def planned_epochs(run: RunData) -> int | None:
    """Epochs the run planned, from every source that states it (:func:`mlaudit_core.plan.planned_epochs`)."""
    from ..plan import planned_epochs as _planned

    return _planned(run)


def early_stopping_patience(run: RunData) -> tuple[int, str] | None:
    """(patience in evaluations, param key) the run itself configured, or ``None``."""
    for key, v in run.params.items():
        if re.search(
            r"(?:^|[._/])(?:patience|early_stopping_patience|es_patience)$",
            key.strip(),
            re.IGNORECASE,
        ):
            try:
                n = int(float(str(v).strip()))
            except ValueError:
                continue
            if n > 0:
                return n, key
    return None


_SGD = re.compile(r"\bsgd\b|momentum", re.IGNORECASE)


def peak_lr(run: RunData) -> tuple[float, float] | None:
    """(peak learning rate, the "high" level for this run's optimiser) or ``None`` when unknown.

    The peak is the largest finite value of the learning-rate series, else a ``learning_rate``
    / ``lr`` / ``lr0`` param (:func:`mlaudit_core.roles.lr_param_name`, which also reads MLflow
    Keras' ``optimizer_learning_rate``). "High" is 0.1 for SGD (the ResNet recipe's starting LR, Goyal et
    al. 2017) and 1e-3 for everything else (Adam's default, Kingma & Ba 2015; fine-tunes of
    pretrained models use 1e-5..1e-4, Devlin et al. 2019, Hu et al. 2021).
    """
    lr = None
    key = run.key_for(Role.LEARNING_RATE)
    if key:
        v = run.series(key).finite().values
        if v.size:
            lr = float(v.max())
    if lr is None:
        for k, pv in run.params.items():
            if lr_param_name(k) is not None:
                try:
                    lr = float(str(pv).strip())
                    break
                except ValueError:
                    continue
    if lr is None or lr <= 0:
        return None
    opt = " ".join(str(v) for k, v in run.params.items() if re.search(r"optim", k, re.IGNORECASE))
    return lr, (0.1 if _SGD.search(opt) else 1e-3)


def monitored(run: RunData, val_loss_key: str):
    """(key, series by step, higher is better, where the choice came from) of the metric the run monitors.

    The ``monitor`` / ``metric_for_best_model`` / ``early_stopping_metric`` param names it (Keras,
    Lightning, HF Trainer; HF drops the ``eval_`` prefix); Ultralytics logs ``metrics/mAP*`` and
    selects by fitness = 0.1 mAP@.5 + 0.9 mAP@.5:.95 (ultralytics ``Metric.fitness``); otherwise
    the validation loss.
    """
    from ..roles import is_higher_better
    from ..rundata import Series

    keys = run.metrics.keys
    norm = {normalise_key(k): k for k in keys}
    for pk, pv in run.params.items():
        if re.search(
            r"(?:^|[._/])(?:monitor|metric_for_best_model|early_stopping_metric)$",
            pk.strip(),
            re.IGNORECASE,
        ):
            want = normalise_key(str(pv).strip().strip("'\""))
            for cand in (want, f"eval_{want}", f"eval/{want}", f"val_{want}", f"val/{want}"):
                if cand in norm and len(run.series(norm[cand]).finite()):
                    k = norm[cand]
                    hib = is_higher_better(k)
                    if re.search(r"greater_is_better|mode", " ".join(run.params)):
                        for gk, gv in run.params.items():
                            if gk.strip().endswith(("greater_is_better",)):
                                hib = str(gv).strip().lower() in ("true", "1")
                            elif gk.strip().endswith(".mode") or gk.strip() == "mode":
                                hib = (
                                    str(gv).strip().lower() == "max"
                                    if str(gv).strip().lower() in ("max", "min")
                                    else hib
                                )
                    return k, run.series(k).by_step().finite(), hib, pk
    m50 = [k for n, k in norm.items() if re.fullmatch(r"metrics/map(_0/5|50)(\(b\)|b)?", n)]
    m5095 = [
        k for n, k in norm.items() if re.fullmatch(r"metrics/map(_0/5/0/95|50/95)(\(b\)|b)?", n)
    ]
    if m50 and m5095:
        a, b = run.series(m50[0]).by_step(), run.series(m5095[0]).by_step()
        steps = np.intersect1d(a.steps, b.steps)
        if steps.size:
            va = a.values[np.searchsorted(a.steps, steps)]
            vb = b.values[np.searchsorted(b.steps, steps)]
            fit = 0.1 * va + 0.9 * vb
            ok = np.isfinite(fit)
            s = Series("fitness", steps[ok], fit[ok], np.full(int(ok.sum()), np.nan))
            return "fitness (0.1 mAP@.5 + 0.9 mAP@.5:.95)", s, True, "Ultralytics fitness"
    return val_loss_key, run.series(val_loss_key).by_step().finite(), False, "validation loss"


#: Classes assumed at most when only an upper bound on the chance-level loss is wanted.
MAX_CLASSES = 100_000


def chance_or_bound(run: RunData) -> Chance | None:
    """The run's chance level, else an upper bound on it for a classifier of unknown K.

    When the run logs an accuracy (a classification run, so its loss is a cross-entropy) but
    nothing says how many classes, ln(``MAX_CLASSES`` = 100,000) = 11.5 bounds the uniform-guess
    loss of any classifier up to 100k classes (LM vocabularies of 32k-250k included: ln 250,880 =
    12.4 is within 2x of it). An accuracy that is 0 at every point does not count (Keras adds
    one to regressions). ``None`` when the run is not visibly a classification run.
    """
    ch = chance(run)
    if ch is not None:
        return ch
    accs = [k for k in (run.key_for(Role.VAL_ACCURACY), run.key_for(Role.TRAIN_ACCURACY)) if k]
    # an accuracy that is exactly 0 throughout is Keras' default metric on a regression (realworld
    # tb07: MSE with epoch_accuracy 0): not evidence of a classifier
    if any(np.nanmax(run.series(k).finite().values, initial=0.0) > 0 for k in accs):
        return Chance(
            1 / MAX_CLASSES,
            math.log(MAX_CLASSES),
            MAX_CLASSES,
            "upper bound: an accuracy is logged, classes unknown (at most 100,000 assumed)",
        )
    return None


#: Fewest intervals between logged training points for a step time read from wall times.
WALL_MIN_INTERVALS = 20


def wall_step_times(run: RunData) -> tuple[str, np.ndarray, np.ndarray, np.ndarray] | None:
    """``(description, steps, seconds per step, wall time at each step)`` read from the records' own wall times when the run
    logs no step time or throughput: the training-loss points' timestamps (TensorBoard event
    ``wall_time``, MLflow and W&B timestamps), the time between consecutive points divided by the
    steps between them. Intervals that hold an evaluation (a validation point's step) or an epoch
    change are left out: their time is evaluation, checkpointing and the loader's restart, not
    training steps (SY005 reads evaluation time). ``None`` without finite,
    advancing wall times on at least :data:`WALL_MIN_INTERVALS` intervals."""
    key = run.key_for(Role.TRAIN_LOSS)
    if key is None:
        return None
    s = run.series(key).by_step()
    w = s.wall_times
    if len(s) <= WALL_MIN_INTERVALS or not np.isfinite(w).all():
        return None
    dstep = np.diff(s.steps).astype(float)
    dt = np.diff(w)
    ok = (dstep > 0) & (dt > 0)
    # boundaries: evaluations (a validation point) and epoch changes (evaluation, checkpointing and the
    # loader's restart happen there); an interval [a, b] holding one measures them, not training steps
    marks = [
        np.unique(run.series(k).steps)
        for k in (run.key_for(Role.VAL_LOSS), run.key_for(Role.VAL_ACCURACY))
        if k
    ]
    ek = run.key_for(Role.EPOCH)
    if ek:
        e = run.series(ek).by_step().finite()
        if len(e) > 1:
            marks.append(e.steps[1:][np.diff(e.values) != 0])
    if marks:
        b = np.unique(np.concatenate(marks))
        lo = np.searchsorted(b, s.steps[:-1], side="left")
        hi = np.searchsorted(b, s.steps[1:], side="right")
        ok &= hi <= lo  # no boundary step within [a, b]
    if int(ok.sum()) < WALL_MIN_INTERVALS:
        return None
    return (
        f"wall time per step between {key} points",
        s.steps[1:][ok],
        dt[ok] / dstep[ok],
        w[1:][ok],
    )
