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
#: Where the names come from (each checked against files the framework wrote, see
#: tests/detectors/test_framework_defaults.py and /work/shared/realworld):
#: Hugging Face Trainer (``loss``/``eval_loss`` to MLflow, ``train/loss``/``eval/loss`` to
#: TensorBoard and W&B, summary point ``train_loss``), Lightning (``train_loss_step``,
#: ``train_loss_epoch``, ``val_loss``, ``epoch``), Keras (``loss``/``val_loss`` in History and
#: CSVLogger; ``epoch_loss`` in the TensorBoard ``train/`` and ``validation/`` sub-directories),
#: the ``torch.utils.tensorboard`` tutorial (``Loss/train``, ``Loss/test``, ``Accuracy/test``),
#: Ultralytics YOLOv5/v8 (``train/box_loss``, ``val/box_loss``, ``metrics/mAP_0.5:0.95``,
#: ``metrics/mAP50-95(B)``, ``x/lr0``, ``lr/pg0``), detectron2 (``total_loss``, ``bbox/AP``),
#: nanoGPT (``train loss``, ``val loss``, ``lr``) and generic ``*cross_entropy*``, ``*_nll``,
#: ``perplexity`` names (perplexity last: it is exp(loss), so ratio thresholds read it harder).
DEFAULT_ALIASES: dict[Role, list[str]] = {
    Role.TRAIN_LOSS: [
        "train/loss", "train_loss", "loss/train", "training/loss", "training_loss",
        "train/lm_loss", "lm/loss", "lm_loss", "train/loss_step", "train_loss_step", "train/loss_epoch",
        "train_loss_epoch", "loss", "total_loss", "train/total_loss", "train/epoch_loss", "epoch_loss",
        "train/*loss", "*/train_loss", "*_train_loss", "train_*_loss", "train/loss_*", "train_loss_*", "loss_step", "loss_epoch",
        "running_loss", "loss_avg", "avg_loss", "train/*cross_entropy*", "*cross_entropy*", "train/*nll*",
        "*_nll", "nll", "nll_loss", "*/loss", "train/perplexity", "train/ppl", "perplexity", "ppl",
    ],
    Role.VAL_LOSS: [
        "val/loss", "val_loss", "loss/val", "valid/loss", "valid_loss", "validation/loss",
        "validation_loss", "eval/loss", "eval_loss", "loss/validation", "loss/valid", "loss/eval",
        "loss/test", "val/lm_loss", "eval/lm_loss", "validation/epoch_loss", "val_loss_epoch", "test/loss",
        "test_loss", "val/*loss", "eval/*loss", "validation/*loss", "valid/*loss", "test/*loss",
        "val_*loss", "eval_*loss", "valid_*loss", "*_val_loss", "*_valid_loss", "*_eval_loss", "*_test_loss",
        "*/val_loss", "*/eval_loss", "*/test_loss", "val/*cross_entropy*", "eval/*cross_entropy*",
        "*val*cross_entropy*", "*eval*cross_entropy*", "val/*nll*", "eval/*nll*", "val_*nll", "eval_*nll",
        "val/perplexity", "eval/perplexity", "val_perplexity", "eval_perplexity", "val/ppl", "val_ppl",
        "eval/ppl", "eval_ppl", "test/perplexity", "test_perplexity",
        # suffix style (own corpus tb14, a Lightning regressor logging Loss / Loss_val / MAE_val)
        "loss_val", "loss_valid", "loss_validation", "loss_test", "loss_eval",
    ],
    Role.TRAIN_ACCURACY: [
        "train/accuracy", "train/acc", "train_accuracy", "train_acc", "accuracy/train", "acc/train",
        "train_acc_step", "train_acc_epoch", "train_accuracy_step", "train_accuracy_epoch",
        "train/epoch_accuracy", "epoch_accuracy", "accuracy", "acc",
        "train/top1", "train/prec@1", "train/*accuracy", "train_acc_*", "train_accuracy_*",
    ],
    Role.VAL_ACCURACY: [
        "val/accuracy", "val/acc", "val_accuracy", "val_acc", "valid/accuracy", "valid_acc",
        "eval/accuracy", "eval_accuracy", "eval/acc", "validation/accuracy", "accuracy/val",
        "accuracy/valid", "accuracy/validation", "accuracy/test", "acc/val", "acc/test",
        "validation/epoch_accuracy", "val_acc_epoch", "val_accuracy_epoch",
        "val/top1", "val/acc1", "val/prec@1", "eval/f1", "val/f1", "eval_f1", "test/accuracy",
        "test_accuracy", "test/acc", "test_acc", "validation/*accuracy", "val/*accuracy", "valid/*accuracy",
        "eval/*accuracy",
        # detection: the COCO-style mAP is the validation metric (YOLOv5/v8 fitness weighs mAP@.5:.95
        # 0.9 and mAP@.5 0.1; detectron2 writes AP in percent)
        "metrics/map50/95*", "metrics/map_0/5/0/95", "metrics/map_0/5", "metrics/map50*", "metrics/map*",
        "bbox/ap", "segm/ap", "keypoints/ap",
    ],
    Role.LEARNING_RATE: [
        "train/lr", "lr", "learning_rate", "train/learning_rate", "lr/*", "lr_*", "optim/lr",
        "trainer/lr", "*/lr", "x/lr0", "lr0", "*/lr0", "*learning_rate*",
        # Lightning's LearningRateMonitor writes ``lr-<Optimizer>`` (``lr-SGD``, ``lr-Adam/pg1``),
        # normalised to ``lr/sgd``; its ``lr-Adam-momentum`` is excluded in ``candidates``.
        # MLflow's Keras callback: ``optimizer_learning_rate``; torch schedulers: ``lr_scheduler/...``
        "optimizer/lr", "optimizer_lr", "lr/*/pg*", "lr_scheduler/*",
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

#: Roles measured on the training loop: an evaluation key (``eval_samples_per_second``,
#: ``eval/runtime``) never plays them, and neither does a key of another role's family.
_TRAINING_ONLY = {Role.TRAIN_LOSS, Role.TRAIN_ACCURACY, Role.THROUGHPUT, Role.STEP_TIME, Role.DATA_TIME,
                  Role.LEARNING_RATE, Role.GRAD_NORM}
#: Roles whose key must name an evaluation split when matched by a broad pattern.
_EVAL_ONLY = {Role.VAL_LOSS}

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
    pattern, the lexicographically first matching key wins. When the number of
    points per key is known (``counts``), a *series* wins over a *summary point*:
    a key with a single point (HF Trainer's end-of-training ``train_loss``, a
    ``test_acc`` written once) is used only when no candidate key of the role has
    two or more points; and for a training series Lightning's ``<name>_step`` wins over
    ``<name>_epoch`` when it has more points (the raw per-step signal; the epoch mean hides
    spikes). A validation ``<name>_step`` never wins: it is per-batch values of the evaluation
    loop on their own batch counter, and ``<name>_epoch`` is the held-out evaluation.
    """

    def __init__(self, overrides: dict[str, list[str]] | None = None) -> None:
        self.patterns: dict[Role, list[str]] = {r: list(p) for r, p in DEFAULT_ALIASES.items()}
        self.user_patterns: dict[Role, list[str]] = {}
        for role_name, pats in (overrides or {}).items():
            role = Role(role_name)
            self.user_patterns[role] = [normalise_key(p) for p in pats]
            self.patterns[role] = self.user_patterns[role] + self.patterns[role]

    def candidates(self, role: Role, keys: list[str]) -> list[str]:
        """Every logged key that could play ``role``, best first (pattern order, then name)."""
        norm = {k: normalise_key(k) for k in keys}
        user = set(self.user_patterns.get(role, ()))
        excluded: set[str] = set()
        if role in _TRAINING_ONLY:
            # ``val/loss`` must not be picked up by the ``*/loss``-style train patterns, nor
            # ``eval_samples_per_second`` be the training throughput
            excluded = {k for k, n in norm.items() if _is_eval_key(n)}
        if role is Role.TRAIN_LOSS:
            excluded |= {k for k, n in norm.items() if "scale" in n or "grad" in n}
        if role is Role.LEARNING_RATE:
            # Lightning's LearningRateMonitor(log_momentum=True) writes ``lr-Adam-momentum`` next to
            # ``lr-Adam``; a scheduler's ``lr_scheduler/last_epoch`` / ``step_size`` / ``gamma`` are not rates
            excluded |= {k for k, n in norm.items()
                         if "grad" in n or re.search(r"momentum|beta|weight_decay|last_epoch|step_size|gamma"
                                                     r"|warmup_steps|milestone", n)}
        out: list[str] = []
        for pat in self.patterns[role]:
            hits = sorted(k for k, n in norm.items()
                          if (pat in user or k not in excluded) and fnmatch.fnmatchcase(n, pat))
            if role in _EVAL_ONLY and pat.startswith("*"):
                hits = [h for h in hits if _is_eval_key(norm[h])]
            out.extend(h for h in hits if h not in out)
        return out

    def resolve(self, role: Role, keys: list[str], counts: dict[str, int] | None = None) -> str | None:
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
        if best.endswith("_epoch") and not _is_eval_key(normalise_key(best)):
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
#: callback logs the optimizer config prefixed (``optimizer_learning_rate``, new-user pass 2026-12-01).
LR_PARAM_NAMES = ("learning_rate", "lr", "lr0", "base_lr", "max_lr", "peak_lr", "init_lr",
                  "initial_learning_rate")
_LR_PARAM_PREFIXES = ("optimizer_", "optimiser_", "optim_")


def lr_param_name(key: str) -> str | None:
    """The canonical learning-rate name a param key stands for, or ``None``.

    The key's last dotted/slashed component is compared after dropping an optimizer prefix:
    ``"optimizer_learning_rate"`` -> ``"learning_rate"``, ``"General/lr"`` -> ``"lr"``,
    ``"optimizer.lr"`` -> ``"lr"``; ``"min_lr"``, ``"lr_scheduler_type"`` -> ``None``.
    """
    leaf = normalise_key(key).split("/")[-1]
    for pre in _LR_PARAM_PREFIXES:
        if leaf.startswith(pre) and leaf[len(pre):] in LR_PARAM_NAMES:
            return leaf[len(pre):]
    return leaf if leaf in LR_PARAM_NAMES else None


def _is_eval_key(norm: str) -> bool:
    return bool(re.search(r"(^|/|_)(val|valid|validation|eval|test)(/|_|$)", norm))


#: Accuracy-like names whose values may be logged in percent (0-100).
_PERCENT_NAMES = re.compile(r"acc|accuracy|top1|top5|prec@|(^|/)ap(\d+|[sml])?($|/)|map|f1|precision|recall|iou")


def as_fraction(key: str, values):
    """``values`` of an accuracy-like metric on the 0-1 scale, and whether they were in percent.

    A metric named like an accuracy (accuracy, acc, top1, mAP, AP, F1, precision, recall, IoU)
    whose finite values exceed 1 but not 100 was logged in percent (Keras/timm print
    ``77.08``; detectron2 writes ``bbox/AP`` 0-100): it is divided by 100. Anything else is
    returned unchanged. Shapes: ``values`` array-like (n,) -> (np.ndarray (n,), bool).
    """
    import numpy as np

    v = np.asarray(values, dtype=np.float64)
    fin = v[np.isfinite(v)]
    if fin.size and _PERCENT_NAMES.search(normalise_key(key)) and 1.0 + 1e-9 < fin.max() <= 100.0 \
            and fin.min() >= 0.0:
        return v / 100.0, True
    return v, False


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
