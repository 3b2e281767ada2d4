"""Canonical metric names for values read from console logs, and unit conversion.

Every format prints its own names (``lm loss``, ``val_acc``, ``eval_loss``,
``Prec@1``, ``gnorm``, ``elapsed time per iteration (ms)``). They are mapped to
one vocabulary whose names are the first choices of the alias table in
:mod:`mlaudit_core.roles`, so the detectors find them without guessing:

========================  ====================================================
``train/loss``            training loss (``loss``, ``lm loss``, ``train_loss``)
``val/loss``              validation loss (``val_loss``, ``eval_loss``, ``valid_loss``)
``train/accuracy``        training accuracy (``acc``, ``accuracy``)
``val/accuracy``          validation accuracy (``val_acc``, ``eval_accuracy``)
``train/top1`` ...        top-k accuracy (``Prec@1``, ``Acc@1``), as a fraction
``train/lr``              learning rate
``train/grad_norm``       gradient norm (``grad norm``, ``gnorm``)
``train/loss_scale``      fp16 loss scale
``perf/step_time``        seconds per step / iteration
``perf/data_time``        seconds per step spent waiting for data
``perf/throughput``       items per second (samples, tokens, iterations)
``train/epoch``           epoch counter
========================  ====================================================

Names that are not in the table keep their own words, lower-cased and joined
with ``_``, under ``train/``, ``val/`` or ``test/`` by their prefix.
"""

from __future__ import annotations

import functools
import re

#: unit -> factor to seconds
TIME_UNITS = {
    "us": 1e-6,
    "µs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "sec": 1.0,
    "secs": 1.0,
    "second": 1.0,
    "seconds": 1.0,
    "min": 60.0,
    "mins": 60.0,
    "minutes": 60.0,
    "h": 3600.0,
    "hour": 3600.0,
    "hours": 3600.0,
}

#: base name (after the train/val prefix is removed) -> canonical leaf, or a perf/ name.
_BASE = {
    "loss": "loss",
    "lm_loss": "loss",
    "lm_loss_value": "loss",
    "total_loss": "loss",
    "cost": "loss",
    "reduced_train_loss": "loss",
    "objective": "loss",
    "acc": "accuracy",
    "accuracy": "accuracy",
    "categorical_accuracy": "accuracy",
    "sparse_categorical_accuracy": "accuracy",
    "binary_accuracy": "accuracy",
    "acc@1": "top1",
    "prec@1": "top1",
    "top1": "top1",
    "acc1": "top1",
    "top_1": "top1",
    "acc@5": "top5",
    "prec@5": "top5",
    "top5": "top5",
    "acc5": "top5",
    "top_5": "top5",
    "lr": "lr",
    "learning_rate": "lr",
    "learning_rates": "lr",
    "lr_abs": "lr",
    "grad_norm": "grad_norm",
    "gnorm": "grad_norm",
    "gradient_norm": "grad_norm",
    "grad_norm_total": "grad_norm",
    "loss_scale": "loss_scale",
    "loss_scaler": "loss_scale",
    "scaler_scale": "loss_scale",
    "ppl": "ppl",
    "perplexity": "ppl",
    "lm_loss_ppl": "ppl",
    "epoch": "epoch",
}
#: base name -> perf/ name (independent of a train/val prefix unless noted)
_PERF = {
    "time": "step_time",
    "batch_time": "step_time",
    "step_time": "step_time",
    "iter_time": "step_time",
    "iteration_time": "step_time",
    "elapsed_time_per_iteration": "step_time",
    "time_per_step": "step_time",
    "train_step_timing": "step_time",
    "step_timing": "step_time",
    "sec_per_step": "step_time",
    "data": "data_time",
    "data_time": "data_time",
    "dataloader_time": "data_time",
    "data_load_time": "data_time",
    "load_time": "data_time",  # VietOCR 'load time: 0.02 - gpu time: 9.93' (own corpus f11b2-15)
    "throughput": "throughput",
    "samples_per_second": "throughput",
    "samples_per_sec": "throughput",
    "samples/s": "throughput",
    "tokens_per_second": "throughput",
    "tokens_per_sec": "throughput",
    "tokens/s": "throughput",
    "wps": "throughput",
    "it/s": "throughput",
    "ips": "throughput",
    "currsamplespersec": "throughput",
    "images/sec": "throughput",
    "img/s": "throughput",
    "ups": "updates_per_s",
    "mfu": "mfu",
    "tflops": "tflops",
    "tflop/s/gpu": "tflops_per_gpu",
    "throughput_per_gpu": "tflops_per_gpu",
    "epoch_time": "epoch_time",
}
_PREFIXES = (
    ("validation_", "val/"),
    ("validation/", "val/"),
    ("valid_", "val/"),
    ("valid/", "val/"),
    ("val_", "val/"),
    ("val/", "val/"),
    ("eval_", "val/"),
    ("eval/", "val/"),
    ("dev_", "val/"),
    ("test_", "test/"),
    ("test/", "test/"),
    ("training_", "train/"),
    ("train_", "train/"),
    ("train/", "train/"),
    ("training/", "train/"),
)
_SUFFIXES = (
    ("_validation", "val/"),
    ("_valid", "val/"),
    ("_val", "val/"),
    ("_eval", "val/"),
    ("_dev", "val/"),
    ("_test", "test/"),
    ("_training", "train/"),
    ("_train", "train/"),
)
#: A unit written after a name: in brackets (``time (s)``, ``acc [%]``) or a percent sign glued to
#: it (``Acc%``, a column header of a printed table).
_UNIT_SUFFIX = re.compile(
    r"\s*[(\[](?P<u>ms|s|sec|seconds|us|min|%|gb|gib|mb|mib|"
    r"tflop/s/gpu|samples/s|tokens/s)[)\]]\s*$|(?<=[a-z0-9_])(?P<pct>%)\s*$",
    re.IGNORECASE,
)
#: Word separators of a printed name; brackets around a qualifier too (``loss[val]`` is ``loss_val``).
_SEP = re.compile(r"[\s\-.()\[\]]+")
_SAFE = re.compile(r"[^a-z0-9_/@%]+")
#: A name that is a rate per second (``samples_per_sec``, ``RunningAvgSamplesPerSec``, ``tokens/s``): a
#: throughput figure, under ``perf/`` whatever its split.
_RATE = re.compile(r"(?:per_?sec(?:ond)?s?|per_?s|/s(?:ec)?)$")
_cache: dict[tuple[str, str], tuple[str, str | None]] = {}


def canonical(raw: str, default_prefix: str = "train/") -> tuple[str, str | None]:
    """Map a printed metric name to ``(canonical name, unit found in the name or None)``.

    ``default_prefix`` is used for names without a train/val/test prefix
    (``"val/"`` for lines known to be evaluation output). Results are memoised.
    """
    key = (raw, default_prefix)
    hit = _cache.get(key)
    if hit is not None:
        return hit
    k = raw.strip().lower()
    unit = None
    m = _UNIT_SUFFIX.search(k)
    if m:
        unit = m["u"] or m["pct"]
        k = k[: m.start()]
    k = _SEP.sub("_", k.strip()).strip("_")
    k = k.replace("_in_s", "") if k.endswith("_in_s") else k
    if k.endswith("_ms") and not k.endswith("_ms_"):
        unit, k = unit or "ms", k[:-3]
    prefix = ""
    for p, canon in _PREFIXES:
        if k.startswith(p) and len(k) > len(p):
            prefix, k = canon, k[len(p) :]
            break
    else:
        # the split written after the name (``loss train``, ``loss_val``, ``acc_test``; litgpt,
        # many research loops): the same figure as ``train loss``, ``val_loss``, ``test_acc``
        for p, canon in _SUFFIXES:
            if k.endswith(p) and len(k) > len(p):
                prefix, k = canon, k[: -len(p)]
                break
    side = prefix or default_prefix
    if k in _PERF and side == "train/":
        out = f"perf/{_PERF[k]}"
    elif k in _PERF:
        out = f"{side}{_PERF[k]}"
    elif _RATE.search(k) is not None:
        out = f"perf/{_SAFE.sub('_', k).strip('_')}"  # a rate (``RunningAvgSamplesPerSec``): throughput
    else:
        leaf = _BASE.get(k, _SAFE.sub("_", k).strip("_") or "value")
        out = f"{prefix or default_prefix}{leaf}"
    _cache[key] = (out, unit)
    return out, unit


@functools.lru_cache(maxsize=8192)
def is_known(raw: str) -> bool:
    """Whether a printed name maps onto the vocabulary above (not just kept in its own words)."""
    k = _SEP.sub("_", _UNIT_SUFFIX.sub("", raw.strip().lower())).strip("_")
    for p, _ in _PREFIXES:
        if k.startswith(p) and len(k) > len(p):
            k = k[len(p) :]
            break
    return k in _BASE or k in _PERF


def to_seconds(value: float, unit: str | None) -> float:
    """Convert a time figure to seconds; an unknown or missing unit leaves it unchanged."""
    if not unit:
        return value
    return value * TIME_UNITS.get(unit.lower(), 1.0)


def is_time_metric(name: str) -> bool:
    """Whether a canonical name holds a duration (its printed value is converted to seconds)."""
    return "time" in name.rsplit("/", 1)[-1]
