"""Metric roles: which logged series plays the training loss, the validation metric, the learning rate...

Detectors never guess metric names: they ask :class:`RunData` for a *role* (train loss,
validation loss, learning rate, ...) and :class:`AliasTable` decides which logged key plays it.
The decision is made from the name's *tokens*, not from a list of known names:

1. :func:`parse_name` splits a key on ``/ _ - . : @ ( )`` and spaces and at camelCase
   boundaries (``valLoss`` -> ``val``, ``loss``), joins the multi-word terms (``learning rate``,
   ``cross entropy``, ``samples per second``, ``bits per byte``, ``grad norm``, ``top 1``), and
   reads: the **split** (``train``/``training`` vs ``val``/``valid``/``validation``/``eval``/``test``/
   ``dev``/``holdout``, as a prefix, a suffix or a path part), the **reduction** (Lightning's
   ``_step``/``_epoch``, Keras' ``epoch_``), tracker prefixes that say nothing (``metrics/``,
   ``charts/``, ``x/``, ``trainer/``, ``perf/``), and the **head**: the word that says what the
   number measures. Heads and their families: loss (``loss``; ``nll``, ``ce``/cross-entropy,
   bits-per-byte/char/dim; perplexity/``ppl`` last, as exp(loss) makes ratio thresholds read it
   harder), error rates and regression errors (``error``/``err``, ``wer``, ``cer``, ``mae``,
   ``mse``, ``rmse``: lower is better, a held-out one plays the validation loss when no loss is
   logged), accuracy (``accuracy``/``acc``/``acc1``/``top1``/``prec@1``; ``top5``/``top_k`` after),
   task scores (F1, AUC, mAP/AP, IoU, Dice, BLEU, ROUGE, exact match, precision/recall last),
   learning rate, gradient norm, loss scale, throughput (``<count> per s/sec/second``, ``it/s``),
   step time and data time. A name made only of counter words (``epoch``, ``global_step``,
   ``num_input_tokens_seen``) is a counter, never a metric; a bare ``epoch`` plays :data:`Role.EPOCH`.
2. Roles: a loss-family head with an evaluation split plays the validation loss, with a train
   split or none the training loss; an accuracy or task score with an evaluation split plays the
   validation accuracy (the held-out quality metric, higher is better). A bare accuracy is the
   training side (Keras ``accuracy`` / ``val_accuracy``); an agent's episode reward/return
   (``rollout/ep_rew_mean``, ``eval/mean_reward``, ``charts/episodic_return``) plays the validation
   accuracy (the task metric), and where one is logged the losses and accuracies play no role (RL
   surrogate objectives need not fall); a bare detection/sequence/ranking score
   (``bbox/AP``, ``metrics/mAP50-95``, ``wer``, ``bleu``) is computed on held-out data unless the same
   name with an evaluation split is also logged. A running best (``best_``/``max_``/``min_``) never
   plays a role: it cannot show a regression.
3. Ranking among the candidates of one role: head family (loss before nll/ce before perplexity
   before error rates; accuracy/top-1 before top-k and task scores before precision/recall), then the
   qualifier (none, then an aggregate such as ``total``/``overall``/``mean``/``macro``, then a
   component such as ``box``/``cls``), explicit split before implied, no reduction before ``_step``
   before ``_epoch``, fewer tokens, then the name. For mAP/AP the COCO primary metric (AP over IoU
   0.5:0.95, or a bare AP) comes before a single-threshold AP50/AP75/APs.

Values complete the names (:func:`as_fraction`: an accuracy-like series above 1 but within 100
is in percent; :func:`is_counter`: a non-decreasing integer series is a step/epoch counter;
:func:`unplaced`: the series no role took, reported so a user can map them). Tracker system
telemetry (GPU/CPU utilisation and memory) keeps the fixed key names the tracker SDKs write.
Projects map their own names in ``[tool.mlaudit.aliases]`` (fnmatch patterns tried first).
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from enum import Enum


class Role(str, Enum):
    """What a metric series means, independent of what it was called."""

    TRAIN_LOSS = "train_loss"
    VAL_LOSS = "val_loss"
    TRAIN_ACCURACY = "train_accuracy"
    VAL_ACCURACY = "val_accuracy"
    LEARNING_RATE = "learning_rate"
    GRAD_NORM = "grad_norm"
    LOSS_SCALE = "loss_scale"
    THROUGHPUT = "throughput"
    STEP_TIME = "step_time"
    DATA_TIME = "data_time"
    GPU_UTIL = "gpu_util"
    GPU_MEMORY = "gpu_memory"
    CPU_UTIL = "cpu_util"
    EPOCH = "epoch"


#: Tracker system telemetry: fixed key names written by the tracker SDKs (MLflow
#: ``system/...``, W&B ``system.gpu.N.gpu``, ClearML ``:monitor:gpu``), matched with
#: :func:`fnmatch.fnmatchcase` against the normalised key.
SYSTEM_KEYS: dict[Role, list[str]] = {
    Role.GPU_UTIL: [
        "system/gpu_0_utilization_percentage",
        "system/gpu_*_utilization_percentage",
        "system/gpu/0/gpu",
        "system/gpu/*/gpu",
        "*gpu*util*",
        "monitor/gpu/gpu_0_utilization",
        "*gpu_utilization*",
    ],
    Role.GPU_MEMORY: [
        "system/gpu_0_memory_usage_percentage",
        "system/gpu_*_memory_usage_percentage",
        "system/gpu/0/memory_allocated",
        "system/gpu/0/memoryallocated",
        "system/gpu/*/memoryallocated",
        "monitor/gpu/gpu_0_mem_usage",
        "monitor/gpu/gpu_*_mem_usage",
        "*gpu*mem*percent*",
        "*gpu_memory*",
    ],
    Role.CPU_UTIL: ["system/cpu_utilization_percentage", "system/cpu", "*cpu_util*", "*cpu_usage*"],
}
_SEP = re.compile(r"[.\-\s:]+")


def normalise_key(key: str) -> str:
    """Lower-case ``key`` and fold the separators trackers use into ``/``.

    ``"Loss/Train"`` -> ``"loss/train"``; ``"system.gpu.0.gpu"`` -> ``"system/gpu/0/gpu"``.
    """
    k = key.strip().lower()
    k = _SEP.sub("/", k)
    return k.strip("/")


# --- tokens -------------------------------------------------------------------------------------

_SPLIT_RE = re.compile(r"[/_\-.\s:@()\[\]{}|,=#$\\^~'\"]+")
#: camelCase boundaries: ``valLoss`` -> val|Loss, ``F1Score`` -> F1|Score; ``mAP50``, ``IoU``,
#: ``APs`` stay whole (a single lower-case letter before a capital is part of an acronym).
_CAMEL = re.compile(r"(?<=[a-z]{2})(?=[A-Z])|(?<=[A-Z0-9])(?=[A-Z][a-z]{2})")
_TRAIN = frozenset({"train", "training", "trn"})
_EVAL = frozenset(
    {
        "val",
        "valid",
        "validation",
        "eval",
        "evaluation",
        "test",
        "testing",
        "dev",
        "holdout",
        "heldout",
        "tst",
    }
)
#: Words that say nothing about what is measured: tracker/logger prefixes and "set"/"split".
_NEUTRAL = frozenset(
    {
        "metrics",
        "metric",
        "charts",
        "chart",
        "x",
        "trainer",
        "perf",
        "performance",
        "scalars",
        "scalar",
        "summary",
        "logs",
        "log",
        "set",
        "split",
        "lm",
        "main",
        "data",
        "optim",
        "optimizer",
        "optimiser",
        "custom",
        "y",
        "value",
        "values",
    }
)
_AGGREGATE = frozenset(
    {
        "total",
        "overall",
        "mean",
        "avg",
        "average",
        "running",
        "sum",
        "combined",
        "full",
        "macro",
        "micro",
        "weighted",
        "all",
        "global",
        "ema",
        "smoothed",
        "smooth",
    }
)
#: A running best is monotone by construction: it can never show a rise or a fall.
_RUNNING_BEST = frozenset({"best", "max", "min", "lowest", "highest", "peak"})
_REDUCTION = {"step": 1, "batch": 1, "iter": 1, "epoch": 2}
_COUNTER_WORDS = frozenset(
    {
        "step",
        "steps",
        "global",
        "iter",
        "iters",
        "iteration",
        "iterations",
        "epoch",
        "epochs",
        "batch",
        "batches",
        "idx",
        "index",
        "num",
        "n",
        "nb",
        "total",
        "seen",
        "samples",
        "examples",
        "tokens",
        "input",
        "flos",
        "runtime",
        "timestamp",
        "count",
        "counter",
        "consumed",
        "trained",
        "processed",
        "optimizer",
        "update",
        "updates",
        "length",
        "len",
        "dataset",
        "time",
        "wall",
        "walltime",
        "elapsed",
        "secs",
        "sec",
        "seconds",
        "s",
    }
)

#: Head token -> (family, rank within the family). Families: loss, error (lower is better),
#: acc, score (higher is better), lr, gradnorm, lossscale, throughput, steptime, datatime.
_HEADS: dict[str, tuple[str, int]] = {
    "loss": ("loss", 0),
    "losses": ("loss", 0),
    "objective": ("loss", 3),
    "nll": ("loss", 1),
    "ce": ("loss", 1),
    "xent": ("loss", 1),
    "crossentropy": ("loss", 1),
    "bce": ("loss", 1),
    "bpb": ("loss", 1),
    "bpc": ("loss", 1),
    "bpd": ("loss", 1),
    "logloss": ("loss", 1),
    "perplexity": ("loss", 2),
    "ppl": ("loss", 2),
    "error": ("error", 0),
    "err": ("error", 0),
    "wer": ("error", 0),
    "cer": ("error", 0),
    "ter": ("error", 0),
    "mae": ("error", 1),
    "mse": ("error", 1),
    "rmse": ("error", 1),
    "mape": ("error", 1),
    "smape": ("error", 1),
    "accuracy": ("acc", 0),
    "acc": ("acc", 0),
    "acc1": ("acc", 0),
    "top1": ("acc", 0),
    "wacc": ("acc", 1),  # word accuracy (speech recognition, grapheme-to-phoneme)
    "prec1": ("acc", 0),
    "top5": ("acc", 1),
    "acc5": ("acc", 1),
    "topk": ("acc", 1),
    "f1": ("score", 1),
    "fscore": ("score", 1),
    "auc": ("score", 1),
    "auroc": ("score", 1),
    "map": ("score", 1),
    "ap": ("score", 1),
    "iou": ("score", 1),
    "miou": ("score", 1),
    "dice": ("score", 1),
    "bleu": ("score", 1),
    "sacrebleu": ("score", 1),
    "rouge": ("score", 1),
    "rouge1": ("score", 1),
    "rouge2": ("score", 1),
    "rougel": ("score", 1),
    "rougelsum": ("score", 1),
    "em": ("score", 1),
    "mcc": ("score", 1),
    "ndcg": ("score", 1),
    "mrr": ("score", 1),
    "r2": ("score", 1),
    "chrf": ("score", 1),
    "meteor": ("score", 1),
    "precision": ("score", 3),
    "recall": ("score", 3),
    "lr": ("lr", 0),
    "gradnorm": ("gradnorm", 0),
    "gnorm": ("gradnorm", 0),
    "lossscale": ("lossscale", 0),
    "throughput": ("throughput", 0),
    "persec": ("throughput", 1),
    "steptime": ("steptime", 0),
    "datatime": ("datatime", 0),
    "reward": ("reward", 0),
    "rewards": ("reward", 0),
    "rew": ("reward", 0),
    "eprewmean": ("reward", 0),
    "return": ("reward", 1),
    "returns": ("reward", 1),
    # a game-playing agent's share of games won (``win rate``, ``avg(num_wins)`` over N games): its
    # task metric as the episode return is, whatever words go with it
    "winrate": ("reward", 0),
    "wins": ("reward", 1),
}
#: Words that make a reward/return the episode's (reinforcement learning): stable-baselines3
#: ``rollout/ep_rew_mean``, OpenAI baselines ``mean 100 episode reward`` / ``eprewmean``, CleanRL
#: ``charts/episodic_return``, RLlib ``episode_reward_mean``, Unity ML-Agents ``Environment/Cumulative
#: Reward``, RLlib ``env_runners/episode_return_mean``. A reward without them, or with any other word
#: (DPO's ``rewards/chosen``, ``eval_rewards/accuracies``, a reward model's ``rewards/margins``), is not
#: the task metric of an agent; an evaluation split with only aggregate words also is (SB3
#: ``eval/mean_reward``).
_EPISODE = frozenset(
    {
        "ep",
        "episode",
        "episodes",
        "episodic",
        "rollout",
        "rollouts",
        "cumulative",
        "eprewmean",
        "env",
        "environment",
        "runners",
        "runner",
        "sampler",
    }
)
#: Heads of the reward family that are a game-playing agent's task metric by themselves.
_WIN_HEADS = frozenset({"winrate", "wins"})
_AP_HEAD = re.compile(r"^m?ap(\d+|[sml])$")
_LR_HEAD = re.compile(r"^lr\d+$")
_TOPK_HEAD = re.compile(r"^(top|acc)\d+$")
#: Families computed on held-out data by convention when the name states no split.
_HELDOUT_BY_DEFAULT = {"score"}
_HIGHER = {"acc", "score", "reward"}
_LOWER = {"loss", "error"}
#: Words that never go with a learning rate series (LearningRateMonitor's ``lr-Adam-momentum``,
#: a scheduler's ``last_epoch`` / ``step_size`` / ``gamma``).
_NOT_LR = frozenset(
    {
        "momentum",
        "beta",
        "beta1",
        "beta2",
        "decay",
        "wd",
        "gamma",
        "milestone",
        "milestones",
        "warmup",
        "size",
        "type",
        "factor",
        "patience",
        "last",
        "grad",
        "gradnorm",
        "scale",
    }
)
_COUNT_NOUNS = frozenset(
    {
        "samples",
        "sample",
        "tokens",
        "token",
        "tok",
        "examples",
        "example",
        "images",
        "image",
        "img",
        "imgs",
        "it",
        "its",
        "steps",
        "sequences",
        "seqs",
        "frames",
        "words",
        "batches",
        "items",
        "iters",
        "iterations",
    }
)
_PER_TIME = frozenset({"s", "sec", "secs", "second", "seconds"})


def _words(key: str) -> list[str]:
    out: list[str] = []
    for part in _SPLIT_RE.split(key.strip()):
        if part:
            out.extend(w.lower() for w in _CAMEL.split(part) if w)
    return out


_DIGIT = "<digit>"  # a word made of digits
_END = "<end>"  # the end of the name
_STEPS = frozenset({"step", "iter", "iteration", "batch"})
#: Multi-word terms joined into one token, tried in order at each position: a tuple of word sets (or
#: :data:`_DIGIT` / :data:`_END`) and the token, ``{0}``/``{1}`` standing for the matched words.
_TERMS: tuple[tuple[tuple, str], ...] = (
    (({"bits"}, {"per"}, {"byte"}), "bpb"),
    (({"bits"}, {"per"}, {"char", "character"}), "bpc"),
    (({"bits"}, {"per"}, {"dim"}), "bpd"),
    (({"word"}, {"error"}, {"rate"}), "wer"),
    (({"char", "character"}, {"error"}, {"rate"}), "cer"),
    ((_COUNT_NOUNS, {"per"}, _PER_TIME), "persec"),
    (({"time"}, {"per"}, _STEPS), "steptime"),
    (({"learning"}, {"rate"}), "lr"),
    (({"cross"}, {"entropy"}), "ce"),
    (({"grad", "gradient", "grads", "gradients"}, {"norm", "norms", "l2"}), "gradnorm"),
    (({"loss", "scaler"}, {"scale"}), "lossscale"),
    (({"error"}, {"rate"}), "error"),
    (({"win", "wins", "winning"}, {"rate", "ratio", "percentage", "pct", "fraction"}), "winrate"),
    (({"top", "acc", "prec", "map", "ap"}, _DIGIT), "{0}{1}"),
    (({"top"}, {"k"}), "topk"),
    (({"f"}, {"1"}), "f1"),
    (({"f1"}, {"score"}), "f1"),
    (({"roc"}, {"auc"}), "auc"),
    (({"exact"}, {"match"}), "em"),
    (
        ({"io"}, {"u"}),
        "iou",
    ),  # Keras names MeanIoU / IoU by snake-casing the class: mean_io_u, val_io_u
    ((_COUNT_NOUNS - {"steps"}, _PER_TIME), "persec"),
    ((_STEPS, {"time"}), "steptime"),
    ((_STEPS | {"epoch"}, {"took"}), "steptime"),
    (({"time"}, _STEPS - {"batch"}, _END), "steptime"),
    (({"data", "dataloader", "dataloading", "loader"}, {"time"}), "datatime"),
    (({"time"}, {"data"}, _END), "datatime"),
)


def _term_at(w: list[str], i: int) -> tuple[str, int] | None:
    """The joined token starting at ``w[i]`` and the number of words it takes, or ``None``."""
    for pattern, token in _TERMS:
        taken: list[str] = []
        for j, want in enumerate(pattern):
            word = w[i + j] if i + j < len(w) else None
            if want is _END:
                ok = word is None
            elif want is _DIGIT:
                ok = word is not None and word.isdigit()
            else:
                ok = word is not None and word in want
            if not ok:
                break
            if word is not None:
                taken.append(word)
        else:
            return token.format(*taken), len(taken)
    return None


def _join_terms(w: list[str]) -> list[str]:
    """Join multi-word terms into one token (:data:`_TERMS`: ``learning rate`` -> ``lr``, ``samples
    per second`` -> ``persec``, ``top 1`` -> ``top1``, ``acc@1`` -> ``acc1``, ``grad norm`` ->
    ``gradnorm``); a word ending in ``crossentropy`` (Keras) is ``ce``."""
    out: list[str] = []
    i = 0
    while i < len(w):
        hit = _term_at(w, i)
        if hit is not None:
            out.append(hit[0])
            i += hit[1]
        else:
            out.append("ce" if w[i].endswith("crossentropy") else w[i])
            i += 1
    return out


@dataclass(frozen=True)
class NameParts:
    """What a metric name says, from its tokens (see :func:`parse_name`).

    Attributes:
        tokens: the joined lower-case tokens.
        split: ``"train"``, ``"eval"`` or ``None`` (the name states no split).
        family: head family (``loss``, ``error``, ``acc``, ``score``, ``lr``, ``gradnorm``,
            ``lossscale``, ``throughput``, ``steptime``, ``datatime``), ``"counter"``,
            ``"epoch"``, or ``None`` (no head word: the name is not placed).
        head: the head token.
        kind_rank: rank of the head within its family (0 first).
        qualifier_rank: 0 no qualifier, 1 an aggregate (total, overall, mean, macro...), 2 a component.
        reduction: 0 none, 1 per step/batch, 2 per epoch.
        running_best: a best/max/min-so-far series.
    """

    tokens: tuple[str, ...]
    split: str | None
    family: str | None
    head: str | None
    kind_rank: int
    qualifier_rank: int
    reduction: int
    running_best: bool

    @property
    def higher_is_better(self) -> bool | None:
        if self.family in _HIGHER:
            return True
        if self.family in _LOWER or self.family in ("steptime", "datatime"):
            return False
        return None


def _head_of(t: str) -> tuple[str, int] | None:
    if t in _HEADS:
        return _HEADS[t]
    if _LR_HEAD.match(t):
        return ("lr", 0)
    if _AP_HEAD.match(t):
        return ("score", 1)
    if _TOPK_HEAD.match(t):
        return ("acc", 1)
    if t.startswith("rouge"):
        return ("score", 1)
    if len(t) > 4 and t.endswith("loss") and t.isalnum():
        # a loss class's name written as one word once lower-cased (OLMo ``train/CrossEntropyLoss``,
        # ``NLLLoss``, ``BCEWithLogitsLoss``): a cross-entropy-like head, ranked with nll/ce
        return ("loss", 1)
    return None


_PARSE_CACHE: dict[str, NameParts] = {}


def _split_of(toks: tuple[str, ...]) -> str | None:
    """The split a name's words state: ``eval`` when one is an evaluation word, else ``train``
    when one is a training word, else None."""
    if any(t in _EVAL for t in toks):
        return "eval"
    if any(t in _TRAIN for t in toks):
        return "train"
    return None


def _head_word(toks: tuple[str, ...]) -> tuple[str | None, str | None, int, int]:
    """``(family, head, kind rank, head index)`` of a name's head word: the loss word names the
    quantity when a loss is broken into parts (DETR ``loss_ce``, mmseg ``decode.loss_seg``);
    otherwise the last head word does (``eval_overall_f1``). Without a head word, a name that
    starts with a lone ``L``/``l`` (the loss symbol of the papers, printed by loops that write
    their objective as ``L = L_crf + L_selection``) is a loss, its other words the component,
    ranked after every loss named by a word (a symbol is weaker evidence: report b9-05 prints box
    dimensions ``l=0.2367 h=0.1836 w=0.1582`` beside its ``loss: nan``).
    ``(None, None, 0, -1)`` without one."""
    found = [(i, h) for i, h in ((i, _head_of(t)) for i, t in enumerate(toks)) if h is not None]
    if not found:
        core = [
            i
            for i, t in enumerate(toks)
            if t not in _TRAIN and t not in _EVAL and t not in _NEUTRAL
        ]
        if core and toks[core[0]] == "l":
            return "loss", "l", 3, core[0]  # the symbol of a loss, ``L = L_crf + L_selection``
        return None, None, 0, -1
    loss_words = [(i, h) for i, h in found if toks[i] in ("loss", "losses")]
    hi, (family, kind_rank) = loss_words[0] if loss_words else found[-1]
    return family, toks[hi], kind_rank, hi


def _episode_reward(toks: tuple[str, ...], hi: int, split: str | None) -> bool:
    """Whether a reward name is an agent's episode return: an episode word or an evaluation split,
    and no other word than episode, aggregate, running-best words and numbers. A reward with
    another word (DPO's ``rewards/chosen``, ``eval_rewards/accuracies``, ``reward_std``) or with
    neither an episode word nor an evaluation split (TRL's training ``reward``) is not."""
    others = [
        t
        for i, t in enumerate(toks)
        if i != hi and t not in _TRAIN and t not in _EVAL and t not in _NEUTRAL
    ]
    episodic = any(t in _EPISODE for t in toks)
    return (episodic or split == "eval") and all(
        t in _EPISODE or t in _AGGREGATE or t in _RUNNING_BEST or t.isdigit() for t in others
    )


def plain_reward(key: str) -> bool:
    """Whether ``key`` names the reward itself, with no other word than a split, a logger prefix or an
    aggregate (``reward``, ``train/reward``, ``reward_mean``, ``rewards``): the mean reward a policy
    trained from rewards (TRL's GRPO/PPO trainers, an agent's return) collected at that step. Named
    rewards with another word are not (DPO's implicit ``rewards/chosen``, ``rewards/margins``; a
    ``reward_std``)."""
    core = [
        t
        for t in parse_name(key).tokens
        if t not in _TRAIN and t not in _EVAL and t not in _NEUTRAL and t not in _AGGREGATE
    ]
    return core in (["reward"], ["rewards"])


def _headless_family(toks: tuple[str, ...], split: str | None) -> str | None:
    """The family of a name without a head word: ``epoch`` for the epoch alone, ``counter`` for
    counter words and numbers only with no split, else None."""
    core = [t for t in toks if t not in _NEUTRAL and t not in _TRAIN]
    if core == ["epoch"]:
        return "epoch"
    if core and all(t in _COUNTER_WORDS or t.isdigit() for t in core) and split is None:
        return "counter"
    return None


def _ap_rank(key: str, rest: list[str]) -> tuple[int, list[str]]:
    """``(kind rank, rest)`` of a COCO AP name: AP over IoU 0.5:0.95 (or a bare AP) is the primary
    metric (rank 1); AP50/AP75/APs come after (rank 2). YOLOv8's ``(B)`` (boxes) is no qualifier."""
    low = key.lower()
    primary = "95" in low or not re.search(r"m?ap[_@\-.:(\s]*\d|aps|apm|apl", low)
    return (1 if primary else 2), [t for t in rest if not t.rstrip("b").isdigit() and t != "b"]


def parse_name(key: str) -> NameParts:
    """Tokens, split, head and rank of a metric name (pure; memoised).

    ``"val_top1"`` -> split eval, family acc; ``"train/box_loss"`` -> split train, family loss,
    component; ``"eval_samples_per_second"`` -> split eval, family throughput;
    ``"num_input_tokens_seen"`` -> family counter.
    """
    hit = _PARSE_CACHE.get(key)
    if hit is not None:
        return hit
    toks = tuple(_join_terms(_words(key)))
    split = _split_of(toks)
    family, head, kind_rank, hi = _head_word(toks)
    if family == "reward" and head not in _WIN_HEADS and not _episode_reward(toks, hi, split):
        family = head = None
        kind_rank = 0
        hi = -1
    rest = [
        t
        for i, t in enumerate(toks)
        if i != hi and t not in _TRAIN and t not in _EVAL and t not in _NEUTRAL and not t.isdigit()
    ]
    reduction = 0
    for t in list(rest):
        if t in _REDUCTION and family is not None:
            reduction = max(reduction, _REDUCTION[t])
            rest.remove(t)
    running_best = any(t in _RUNNING_BEST for t in rest)
    if family is None:
        family = _headless_family(toks, split)
    if head is not None and (
        _AP_HEAD.match(head) or head in ("map", "ap") or head.startswith(("map", "ap"))
    ):
        kind_rank, rest = _ap_rank(key, rest)
    qualifier_rank = 0
    if rest:
        qualifier_rank = 1 if all(t in _AGGREGATE for t in rest) else 2
    out = NameParts(toks, split, family, head, kind_rank, qualifier_rank, reduction, running_best)
    if len(_PARSE_CACHE) < 100_000:
        _PARSE_CACHE[key] = out
    return out


def _family_roles(p: NameParts) -> tuple[Role, ...]:
    """The roles a parsed name can play (before the run-level sibling rule)."""
    if p.running_best:
        return ()
    f = p.family
    if f in ("loss", "error"):
        if f == "loss" and any(t in ("scale", "grad", "gradnorm") for t in p.tokens):
            return ()
        if p.split == "eval":
            return (Role.VAL_LOSS,)
        if f == "error" and p.split is None:
            return (Role.VAL_LOSS, Role.TRAIN_LOSS)  # decided by the sibling rule
        return (Role.TRAIN_LOSS,)
    if f in ("acc", "score"):
        if p.split == "eval":
            return (Role.VAL_ACCURACY,)
        if p.split is None and f in _HELDOUT_BY_DEFAULT:
            return (Role.VAL_ACCURACY, Role.TRAIN_ACCURACY)  # decided by the sibling rule
        if p.split is None and p.qualifier_rank == 2:
            # a sub-module's own statistic named without a split (detectron2 ``fast_rcnn/cls_accuracy``
            # over region proposals, mostly background): not the task's training accuracy, which the
            # held-out metric is compared with (realworld tb01: 100% "memorised" vs bbox/AP 75.8%)
            return ()
        return (Role.TRAIN_ACCURACY,)
    if f == "reward":
        # an agent's episode reward/return is its task metric, higher is better, whichever
        # loop logged it (SB3 ``rollout/ep_rew_mean`` and ``eval/mean_reward``)
        return (Role.VAL_ACCURACY,)
    if p.split == "eval":
        return ()  # eval_samples_per_second, eval/runtime: not the training loop's
    if f == "lr":
        return () if any(t in _NOT_LR for t in p.tokens) else (Role.LEARNING_RATE,)
    simple = {
        "gradnorm": Role.GRAD_NORM,
        "lossscale": Role.LOSS_SCALE,
        "throughput": Role.THROUGHPUT,
        "steptime": Role.STEP_TIME,
        "datatime": Role.DATA_TIME,
        "epoch": Role.EPOCH,
    }
    return (simple[f],) if f in simple else ()


def _sibling_key(p: NameParts) -> tuple[str, ...]:
    return tuple(t for t in p.tokens if t not in _TRAIN and t not in _EVAL and t not in _NEUTRAL)


def _core(toks: tuple[str, ...]) -> list[str]:
    """The tokens of a name without its split and the words that say nothing."""
    return [t for t in toks if t not in _TRAIN and t not in _EVAL and t not in _NEUTRAL]


def roles_of(keys: list[str]) -> dict[str, tuple[Role, ...]]:
    """Every role each key can play, from its name, with the run-level rule for names that state
    no split: a bare task score or error rate (``bbox/AP``, ``wer``) is held-out unless the same
    name with an evaluation split is logged too (Keras ``auc`` / ``val_auc``: then it is the
    training side), and a qualified accuracy without a split (``fast_rcnn/cls_accuracy``) is the
    training accuracy only when its evaluation twin is logged (Keras
    ``sparse_top_k_categorical_accuracy`` / ``val_sparse_top_k_categorical_accuracy``)."""
    parsed = {k: parse_name(k) for k in keys}
    with_eval = {_sibling_key(p) for p in parsed.values() if p.split == "eval"}
    agent = any(p.family == "reward" and not p.running_best for p in parsed.values())
    # other one-letter names beside a lone ``l`` (``x y z l h w``: a box's coordinates and sizes)
    # make it a coordinate, not the loss symbol (report b9-05)
    letters = {
        c[0] for c in (_core(p.tokens) for p in parsed.values()) if len(c) == 1 and len(c[0]) == 1
    }
    out: dict[str, tuple[Role, ...]] = {}
    for k, p in parsed.items():
        if p.head == "l" and len(letters - {"l"}) >= 2:
            out[k] = ()
            continue
        if agent and p.family in ("loss", "error", "acc", "score"):
            # an agent's policy/value/actor/critic/entropy/TD losses are surrogate objectives that
            # need not fall (a PPO loss rises as the value targets grow with the reward; a DQN TD
            # loss grows as returns grow) and a discriminator's accuracy is not the agent's task:
            # where the episode reward is logged it is the metric judged (own corpus f7b1-06,
            # f7b2-08, f7b3-16: losses rising on runs whose reward rose, called diverged)
            out[k] = ()
            continue
        roles = _family_roles(p)
        if len(roles) == 2:
            roles = (roles[1],) if _sibling_key(p) in with_eval else (roles[0],)
        elif (
            not roles
            and p.split is None
            and p.family in ("acc", "score")
            and not p.running_best
            and _sibling_key(p) in with_eval
        ):
            roles = (
                Role.TRAIN_ACCURACY,
            )  # Keras sparse_top_k_categorical_accuracy / val_...: one measure
        out[k] = roles
    _split_less_accuracy_is_heldout(parsed, out)
    _split_named_objective(parsed, out)
    return out


def _split_named_objective(parsed: dict[str, NameParts], out: dict) -> None:
    """A series named by an evaluation split alone (``val``, ``test``; ``[train] ... >> val 0.42``) in a
    run whose training objective is a loss (a loss-family name under a train split or none) is that
    objective measured on held-out data: it plays the validation loss when no other name does (own corpus
    f18b2-07: ``loss 4.03`` every 200 steps and ``>> val 0.4238`` at each evaluation). Changes ``out``
    in place."""
    if any(Role.VAL_LOSS in r for r in out.values()):
        return
    if not any(
        p.family == "loss" and p.split != "eval" and not p.running_best for p in parsed.values()
    ):
        return
    for k, p in parsed.items():
        if p.family is None and p.split == "eval" and not _core(p.tokens) and not out.get(k):
            out[k] = (Role.VAL_LOSS,)


def _split_less_accuracy_is_heldout(parsed: dict[str, NameParts], out: dict) -> None:
    """In a run whose logger names its splits (a training loss under a train split and a held-out loss
    under an evaluation split) and logs no accuracy under a train split and none held-out, an accuracy
    named without a split is the held-out one: the logger measures it where it measures the held-out
    loss (Ultralytics classify's results.csv: ``train/loss``, ``val/loss``, ``metrics/accuracy_top1``;
    own corpus f10b1-10, whose early stop on top-1 was unread without it). Changes ``out`` in place."""
    fams = [(p.family, p.split) for p in parsed.values() if not p.running_best]
    if not (
        ("loss", "train") in fams
        and ("loss", "eval") in fams
        and not any(f in ("acc", "score") and sp is not None for f, sp in fams)
        and not any(Role.VAL_ACCURACY in r for r in out.values())
    ):
        return
    for k, p in parsed.items():
        if p.family == "acc" and p.split is None and not p.running_best and not out.get(k):
            out[k] = (Role.VAL_ACCURACY,)


def _rank(key: str, p: NameParts) -> tuple:
    fam_order = {"loss": 0, "error": 1, "acc": 0, "score": 1}.get(p.family or "", 0)
    # a held-out ``_epoch`` value is the evaluation; its ``_step`` twin is per-batch values of the
    # evaluation loop: for an evaluation split the epoch reduction comes first
    red = {0: 0, 1: 2, 2: 1}[p.reduction] if p.split == "eval" else p.reduction
    return (fam_order, p.kind_rank, p.qualifier_rank, 0 if p.split else 1, red, len(p.tokens), key)


class AliasTable:
    """Resolves a :class:`Role` to one logged metric key.

    Args:
        overrides: role name -> list of fnmatch patterns (on the normalised key), tried *before*
            the name rules; a key a user pattern names plays that role whatever its tokens say.

    Candidates come from :func:`roles_of` (the name's tokens) and are ranked as the module
    docstring says; system telemetry from :data:`SYSTEM_KEYS`. Resolution is deterministic.
    When the number of points per key is known (``counts``), a *series* wins over a *summary
    point*: a key with a single point (HF Trainer's end-of-training ``train_loss``, a ``test_acc``
    written once) is used only when no candidate key of the role has two or more points; and for
    a training series Lightning's ``<name>_step`` wins over ``<name>_epoch`` when it has more
    points (the raw per-step signal; the epoch mean hides spikes). A validation ``<name>_step``
    never wins: it is per-batch values of the evaluation loop on their own batch counter, and
    ``<name>_epoch`` is the held-out evaluation.
    """

    def __init__(self, overrides: dict[str, list[str]] | None = None) -> None:
        self.patterns: dict[Role, list[str]] = {r: list(p) for r, p in SYSTEM_KEYS.items()}
        self.user_patterns: dict[Role, list[str]] = {}
        for role_name, pats in (overrides or {}).items():
            role = Role(role_name)
            self.user_patterns[role] = [normalise_key(p) for p in pats]
        self._memo: dict[tuple[str, ...], dict[str, tuple[Role, ...]]] = {}

    def _roles(self, keys: list[str]) -> dict[str, tuple[Role, ...]]:
        t = tuple(keys)
        hit = self._memo.get(t)
        if hit is None:
            hit = roles_of(keys)
            if len(self._memo) > 64:
                self._memo.clear()
            self._memo[t] = hit
        return hit

    def candidates(self, role: Role, keys: list[str]) -> list[str]:
        """Every logged key that could play ``role``, best first (user patterns, then the rank)."""
        out: list[str] = []
        norm = {k: normalise_key(k) for k in keys}
        for pat in self.user_patterns.get(role, ()):
            out.extend(
                k for k in sorted(keys) if fnmatch.fnmatchcase(norm[k], pat) and k not in out
            )
        if role in SYSTEM_KEYS:
            for pat in self.patterns[role]:
                out.extend(
                    k for k in sorted(keys) if fnmatch.fnmatchcase(norm[k], pat) and k not in out
                )
            return out
        roles = self._roles(keys)
        ranked = sorted(
            (k for k in keys if role in roles.get(k, ()) and k not in out),
            key=lambda k: _rank(k, parse_name(k)),
        )
        return out + ranked

    def resolve(
        self, role: Role, keys: list[str], counts: dict[str, int] | None = None
    ) -> str | None:
        """Return the logged key that plays ``role`` among ``keys``, or ``None``.

        Args:
            counts: points per key, when known; enables "a series wins over a summary point".
        """
        cands = self.candidates(role, keys)
        if not cands:
            return None
        if counts is None:
            return cands[0]
        series = [k for k in cands if counts.get(k, 0) >= 2]
        best = series[0] if series else cands[0]
        if best.endswith("_epoch") and parse_name(best).split != "eval":
            # only for training series: a validation ``<name>_step`` holds per-batch values of
            # the evaluation loop on its own batch counter (Lightning), not the model at more
            # points in time; the ``_epoch`` value is the held-out evaluation (own corpus csv27:
            # val_loss_step 0.10-0.45 across batches read as an overfit)
            sibling = best[: -len("_epoch")] + "_step"
            if sibling in counts and counts[sibling] > counts.get(best, 0):
                best = sibling
        return best


#: Param names holding the run's (peak) learning rate, as the frameworks write them: HF Trainer
#: ``learning_rate``, YOLO ``lr0``, mmcv/detectron2 ``base_lr``, OneCycle ``max_lr``; MLflow's Keras
#: callback logs the optimizer config prefixed (``optimizer_learning_rate``).
LR_PARAM_NAMES = (
    "learning_rate",
    "lr",
    "lr0",
    "base_lr",
    "max_lr",
    "peak_lr",
    "init_lr",
    "initial_learning_rate",
)
_LR_PARAM_PREFIXES = ("optimizer_", "optimiser_", "optim_")


def lr_param_name(key: str) -> str | None:
    """The canonical learning-rate name a param key stands for, or ``None``.

    The key's last dotted/slashed component is compared after dropping an optimizer prefix:
    ``"optimizer_learning_rate"`` -> ``"learning_rate"``, ``"General/lr"`` -> ``"lr"``,
    ``"optimizer.lr"`` -> ``"lr"``; ``"min_lr"``, ``"lr_scheduler_type"`` -> ``None``.
    """
    leaf = normalise_key(key).split("/")[-1]
    for pre in _LR_PARAM_PREFIXES:
        if leaf.startswith(pre) and leaf[len(pre) :] in LR_PARAM_NAMES:
            return leaf[len(pre) :]
    return leaf if leaf in LR_PARAM_NAMES else None


def as_fraction(key: str, values):
    """``values`` of an accuracy-like metric on the 0-1 scale, and whether they were in percent.

    A metric whose name's head is an accuracy, a task score bounded by 1 (F1, AUC, mAP/AP, IoU,
    Dice, BLEU, ROUGE, precision, recall) or an error rate (error, WER, CER) and whose finite values
    exceed 1 but not 100 was logged in percent (Keras/timm print ``77.08``; detectron2 writes
    ``bbox/AP`` 0-100; sacreBLEU 0-100): it is divided by 100. Anything else is returned
    unchanged. Shapes: ``values`` array-like (n,) -> (np.ndarray (n,), bool).
    """
    import numpy as np

    v = np.asarray(values, dtype=np.float64)
    fin = v[np.isfinite(v)]
    p = parse_name(key)
    bounded = (
        p.family in ("acc", "score")
        and p.head not in ("r2", "mcc", "ndcg", "mrr")
        or (p.family == "error" and p.kind_rank == 0)
    )
    if fin.size and bounded and 1.0 + 1e-9 < fin.max() <= 100.0 and fin.min() >= 0.0:
        return v / 100.0, True
    return v, False


def has_class_chance(key: str) -> bool:
    """Whether ``1/K`` is the chance level of the metric ``key`` for a K-class task: a top-1 accuracy
    (``accuracy``, ``acc``, ``top1``, ``acc1``, ``prec@1``; :func:`parse_name` family ``acc`` at rank 0),
    the share of predictions that are right, which a uniform guess over K classes scores 1/K. Task scores
    have other chance levels (a random detector's mAP/AP and a random mask's IoU/Dice are ~0, ROC AUC
    0.5, F1/precision/recall depend on class frequencies) and a top-k accuracy's is k/K."""
    p = parse_name(key)
    return p.family == "acc" and p.kind_rank == 0


def is_higher_better(key: str) -> bool:
    """Directionality of a metric from its name's head (:func:`parse_name`): accuracies and task
    scores are higher-is-better; losses, error rates, perplexities and times lower-is-better; a
    name without a head is higher-is-better only when it says ``score`` (anything else
    unrecognised is read as lower-is-better, the conservative reading for a loss curve)."""
    p = parse_name(key)
    hib = p.higher_is_better
    if hib is not None:
        return hib
    return "score" in p.tokens


def is_counter(values) -> bool:
    """A step/epoch counter by its values: at least 3 finite values, all integers, never
    decreasing and not all equal (``epoch`` 0, 0, 1, 1, 2; ``global_step`` 10, 20, 30)."""
    import numpy as np

    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    if v.size < 3:
        return False
    return bool(np.all(np.mod(v, 1) == 0) and np.all(np.diff(v) >= 0) and v[-1] > v[0])


#: Key prefixes of tracker system telemetry (never a training metric to place).
_SYSTEM_PREFIXES = ("system", "sys/", "monitor", "gpu", "cpu", "memory", "disk", "network", "proc")


def unplaced(run, heldout_only: bool = False) -> list[str]:
    """Series of ``run`` (a :class:`~mlaudit_core.rundata.RunData`) with at least 3 finite points
    that no role took and that are neither counters (by name or by values, :func:`is_counter`) nor
    system telemetry: the names mlaudit could not place. With ``heldout_only``, only names that
    state an evaluation split (``val_score``, ``eval/objective``). Sorted; at most 20."""
    import numpy as np

    m = run.metrics
    keys = list(m.keys)
    taken = {run.key_for(r) for r in Role}
    roles = run.aliases._roles(keys)
    out = []
    for k in sorted(keys):
        if k in taken or roles.get(k) or k.lower().startswith(_SYSTEM_PREFIXES):
            continue
        p = parse_name(k)
        if p.family in ("counter", "epoch") or (heldout_only and p.split != "eval"):
            continue
        if p.family is not None and _family_roles(p):
            continue  # a candidate of a role another key plays better (a loss component)
        v = m.series(k).values
        if int(np.isfinite(v).sum()) < 3 or is_counter(v):
            continue
        out.append(k)
        if len(out) >= 20:
            break
    return out
