"""Metric roles and the alias table that maps tracker metric names onto them.

Detectors never guess metric names: they ask :class:`RunData` for a *role*
(train loss, validation loss, learning rate, ...) and the alias table decides
which logged key plays that role. The default table covers the names written by
the common frameworks (Hugging Face Trainer, PyTorch Lightning, Keras,
Megatron-LM, fairseq, MLflow and W&B system metrics); projects extend it in
``[tool.mlaudit.aliases]``.
"""

from __future__ import annotations

import fnmatch
import re
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


#: Default aliases, most specific first. Patterns are matched against the
#: *normalised* key (lower case, any of ``.``, ``-``, space and ``:`` turned into
#: ``/`` except inside words joined by ``_``) with :func:`fnmatch.fnmatchcase`.
DEFAULT_ALIASES: dict[Role, list[str]] = {
    Role.TRAIN_LOSS: [
        "train/loss", "train_loss", "loss/train", "training/loss", "training_loss",
        "train/lm_loss", "lm/loss", "lm_loss", "train/loss_epoch", "train/loss_step",
        "loss", "train/*loss", "*/train_loss", "train_*_loss", "train/loss_*", "train_loss_*",
        "running_loss", "loss_avg", "avg_loss",
    ],
    Role.VAL_LOSS: [
        "val/loss", "val_loss", "loss/val", "valid/loss", "valid_loss", "validation/loss",
        "validation_loss", "eval/loss", "eval_loss", "loss/validation", "val/lm_loss",
        "eval/lm_loss", "test/loss", "test_loss", "val/*loss", "eval/*loss", "validation/*loss",
        "valid/*loss",
    ],
    Role.TRAIN_ACCURACY: [
        "train/accuracy", "train/acc", "train_accuracy", "train_acc", "accuracy", "acc",
        "train/top1", "train/prec@1", "train/*accuracy",
    ],
    Role.VAL_ACCURACY: [
        "val/accuracy", "val/acc", "val_accuracy", "val_acc", "valid/accuracy", "valid_acc",
        "eval/accuracy", "eval_accuracy", "eval/acc", "validation/accuracy",
        "val/top1", "val/acc1", "val/prec@1", "eval/f1", "val/f1", "eval_f1", "test/accuracy",
        "test_accuracy", "test/acc", "validation/*accuracy", "val/*accuracy", "valid/*accuracy",
        "eval/*accuracy",
    ],
    Role.LEARNING_RATE: [
        "train/lr", "lr", "learning_rate", "train/learning_rate", "lr/*", "lr_*", "optim/lr",
        "trainer/lr", "*/lr", "*learning_rate*",
    ],
    Role.GRAD_NORM: ["train/grad_norm", "grad_norm", "gradient_norm", "*/grad_norm", "*grad_norm*",
                     "*gnorm*"],
    Role.LOSS_SCALE: ["loss_scale", "train/loss_scale", "*/loss_scale", "*loss_scale*", "scaler/scale"],
    Role.THROUGHPUT: [
        "perf/throughput", "throughput", "train/throughput", "*samples_per_second*",
        "*samples_per_sec*", "*tokens_per_second*", "*tokens_per_sec*", "*it/s*", "*/throughput",
    ],
    Role.STEP_TIME: [
        "perf/step_time", "step_time", "train/step_time", "iteration_time", "iter_time",
        "iteration-time", "time/step", "batch_time", "*/step_time", "*step_time*", "*iter_time*",
    ],
    Role.DATA_TIME: ["perf/data_time", "data_time", "train/data_time", "time/data", "*/data_time",
                     "*data_time*", "*dataloader_time*"],
    Role.GPU_UTIL: [
        "system/gpu_0_utilization_percentage", "system/gpu_*_utilization_percentage",
        "system/gpu/0/gpu", "system/gpu/*/gpu", "*gpu*util*",
        "monitor/gpu/gpu_0_utilization", "*gpu_utilization*",  # ClearML ``:monitor:gpu``, normalised
    ],
    Role.GPU_MEMORY: [
        "system/gpu_0_memory_usage_percentage", "system/gpu_*_memory_usage_percentage",
        "system/gpu/0/memory_allocated", "system/gpu/0/memoryallocated", "system/gpu/*/memoryallocated",
        "monitor/gpu/gpu_0_mem_usage", "monitor/gpu/gpu_*_mem_usage",
        "*gpu*mem*percent*", "*gpu_memory*",
    ],
    Role.CPU_UTIL: ["system/cpu_utilization_percentage", "system/cpu", "*cpu_util*", "*cpu_usage*"],
    Role.EPOCH: ["epoch", "train/epoch", "trainer/epoch"],
}

_SEP = re.compile(r"[.\-\s:]+")


def normalise_key(key: str) -> str:
    """Lower-case ``key`` and fold the separators trackers use into ``/``.

    ``"Loss/Train"`` -> ``"loss/train"``; ``"system.gpu.0.gpu"`` -> ``"system/gpu/0/gpu"``.
    """
    k = key.strip().lower()
    k = _SEP.sub("/", k)
    return k.strip("/")


class AliasTable:
    """Resolves a :class:`Role` to one logged metric key.

    Args:
        overrides: role name -> list of patterns, tried *before* the defaults.

    Resolution is deterministic: patterns are tried in order and, for one
    pattern, the lexicographically first matching key wins.
    """

    def __init__(self, overrides: dict[str, list[str]] | None = None) -> None:
        self.patterns: dict[Role, list[str]] = {r: list(p) for r, p in DEFAULT_ALIASES.items()}
        for role_name, pats in (overrides or {}).items():
            role = Role(role_name)
            self.patterns[role] = [normalise_key(p) for p in pats] + self.patterns[role]

    def resolve(self, role: Role, keys: list[str]) -> str | None:
        """Return the logged key that plays ``role`` among ``keys``, or ``None``."""
        norm = {k: normalise_key(k) for k in keys}
        taken_by_other: set[str] = set()
        # A key that is exactly another role's first-choice name never plays this role
        # (``val/loss`` must not be picked up by the ``*/loss``-style train patterns).
        if role is Role.TRAIN_LOSS:
            taken_by_other = {k for k, n in norm.items() if _is_eval_key(n) or "scale" in n}
        for pat in self.patterns[role]:
            hits = sorted(k for k, n in norm.items()
                          if k not in taken_by_other and fnmatch.fnmatchcase(n, pat))
            if role is Role.LEARNING_RATE:
                hits = [h for h in hits if "grad" not in norm[h]]
            if hits:
                return hits[0]
        return None


def _is_eval_key(norm: str) -> bool:
    return bool(re.search(r"(^|/|_)(val|valid|validation|eval|test)(/|_|$)", norm))


def is_higher_better(key: str) -> bool:
    """Directionality of a metric from its name: accuracy-like keys are higher-is-better.

    Loss-, error-, perplexity- and time-like names are lower-is-better; so is
    anything unrecognised (the conservative reading for a loss curve).
    """
    n = normalise_key(key)
    if re.search(r"loss|err|perplexity|ppl|time|wer|cer|mse|mae|rmse|nll", n):
        return False
    return bool(re.search(r"acc|f1|auc|precision|recall|bleu|rouge|map|iou|dice|top1|top5|prec@|score|r2",
                          n))
