"""What differs between a run and its baselines, ranked by likely effect on the metrics.

Every param, tag, environment entry and logged invariant (a metric logged with
a single value, such as ``data/num_rows``) of the run is compared with the same
key of each baseline. A *delta* is a key whose run value is not among the
baselines' values. Seeds and run identity (names, ids, output paths,
timestamps, mlaudit's own tags) are not deltas: seeds are what the noise band
is made of.

Each delta gets a category (data, config, precision, model, packages, code,
metric, hardware) and a layer of the diagnosis workflow's causal order (see
:data:`LAYERS`). The ranking score is a prior on how often a change of that kind
moves a training metric, multiplied by the size of a numeric change and by
whether the baselines agree among themselves:

=================  ======  ===================================================
category           weight  examples
=================  ======  ===================================================
data               6.0     dataset version/hash, row or class counts, split
config (optim)     5.0     learning rate, batch size, optimizer, warmup, epochs
precision          4.5     fp16/bf16/fp32, AMP, TF32
model              4.0     architecture, width/depth, init checkpoint
packages           3.5     torch, CUDA, scikit-learn, container image
code               3.0     git commit
metric             3.0     metric threshold / averaging / eval settings
config (other)     2.0     any other param
hardware           1.5     GPU type, host
=================  ======  ===================================================

A numeric change multiplies the weight by ``1 + min(|log10(new/old)|, 3) / 3``
(a 10x learning-rate change ranks above a 10% one). A key on which the
baselines themselves disagree gets x0.3: baselines that differ on it still
agree within noise, so it explains little. A key present on one side only gets
x0.8. The weights *rank*; they are not probabilities (the order follows the
diagnosis workflow: data before code, configuration before hardware).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..redact import REDACTED, is_secret_key
from ..roles import Role
from ..rundata import RunData

#: Causal order of the boundaries checked for the first broken layer.
LAYERS: dict[str, str] = {
    "source": "source and semantics (dataset version/hash, schema, rows)",
    "labels": "ground truth (labels, classes)",
    "split": "split and sampling",
    "features": "feature pipeline (preprocessing, tokenizer, input shape)",
    "training": "training configuration (optimizer, learning rate, batch) - between the features "
    "and the artifact it produces",
    "model": "model artifact (architecture, weights, checkpoint)",
    "metric": "metric and decision logic (definition, threshold, metric library)",
    "runtime": "runtime and delivery (package versions, precision, hardware)",
}

#: Libraries whose version change can change a metric's definition or defaults.
METRIC_LIBRARIES = {
    "scikit-learn",
    "sklearn",
    "torchmetrics",
    "evaluate",
    "sacrebleu",
    "rouge-score",
    "jiwer",
    "pycocotools",
    "torcheval",
    "seqeval",
    "nltk",
    "bert-score",
    "pytrec-eval",
    "faster-coco-eval",
    "rapidfuzz",
    "lm-eval",
}

_WEIGHTS = {
    "data": 6.0,
    "config": 5.0,
    "precision": 4.5,
    "model": 4.0,
    "packages": 3.5,
    "code": 3.0,
    "metric": 3.0,
    "config_other": 2.0,
    "hardware": 1.5,
}

_IGNORE = re.compile(
    r"(^|_)(seed|seeds|random_state|random_seed|rng_seed)(_|$)|^mlaudit_|run_?name|run_?id|^name$|"
    r"output_dir|logging_dir|log_dir|save_dir|checkpoint_dir|ckpt_dir|run_dir|^mlflow_(user|runname|"
    r"parentrunid|source_name|source_type|log_model_history|loggedartifacts|note_content|"
    r"datasets|source_git_branch|source_git_repourl)|timestamp|(^|_)date$|start_time|end_time|"
    r"(^|_)(pid|uuid|job_id|slurm_job_id)$|^wandb_|^clearml_"
)
_CODE = re.compile(
    r"git_?(commit|sha|hash|revision)|source_git_commit|(^|_)commit(_|$)|(^|_)revision$|"
    r"code_version|(^|_)sha$"
)
_PRECISION = re.compile(r"precision|dtype|(^|_)(fp16|bf16|fp8|fp32|amp|tf32|half|mixed)(_|$)")
_HARDWARE = re.compile(
    r"(^|_)(gpu|gpus|gpu_name|gpu_type|accelerator|device|device_name|host|hostname|"
    r"node|machine|instance|instance_type|cpu|cpu_type|hardware)(_|$)"
)
_LAYER_RES = [
    (
        "split",
        re.compile(
            r"split|(^|_)(train|val|valid|test)_(size|rows|samples|frac|fraction|ratio)|"
            r"fold|holdout|(^|_)n_(train|val|test)(_|$)|num_(train|val|test)"
        ),
    ),
    (
        "training",
        re.compile(
            r"(^|_)(lr|learning_rate|batch|batch_size|train_batch_size|eval_batch_size|"
            r"per_device_train_batch_size|optim|optimizer|weight_decay|wd|warmup|"
            r"warmup_steps|warmup_ratio|epochs?|num_train_epochs|momentum|dropout|sched|"
            r"scheduler|lr_scheduler|clip|grad_clip|max_grad_norm|max_steps|train_iters|"
            r"beta1|beta2|adam_beta1|adam_beta2|adam_epsilon|eps|accum|"
            r"gradient_accumulation_steps|label_smoothing|world_size|num_gpus|"
            r"micro_batch_size|global_batch_size|alpha|l2|penalty)(_|$)"
        ),
    ),
    (
        "labels",
        re.compile(
            r"label|num_classes|n_classes|class_(count|counts|weights?)|(^|_)classes|"
            r"target_col"
        ),
    ),
    (
        "source",
        re.compile(
            r"(^|_)data(set)?(_|$)|dataset|corpus|(^|_)(rows|num_rows|n_rows|row_count|"
            r"n_samples|num_samples|schema|columns|table)(_|$)"
        ),
    ),
    (
        "features",
        re.compile(
            r"feature|preprocess|tokeni[sz]er|vocab|normali[sz]|augment|image_size|"
            r"img_size|resolution|max_seq|seq_len|context_len|max_length|transform|crop|"
            r"resize"
        ),
    ),
    (
        "model",
        re.compile(
            r"model|arch|checkpoint|ckpt|(^|_)init|pretrained|weights|hidden|layers|heads|"
            r"n_embd|d_model|num_params|n_params|depth|width"
        ),
    ),
    ("metric", re.compile(r"metric|threshold|(^|_)average|(^|_)eval_|calibrat|top_?k|decision")),
]
_VERSION = re.compile(r"^v?\d+(\.\d+)+([.+\-]?[\w.+\-]*)?$|\d+\.\d+-py\d")
_PKG_HINT = re.compile(
    r"(^|_)(version|pkg|package|pip|image|docker|container|cuda|cudnn|driver|nccl|"
    r"python|torch|pytorch|tensorflow|jax|transformers|numpy)(_|$)"
)


def norm_key(key: str) -> str:
    """Lower case, separators (``. - / : space``) folded to ``_``: ``"data.num-rows"`` -> ``"data_num_rows"``."""
    return re.sub(r"[\s\-./:]+", "_", key.strip().lower()).strip("_")


def norm_package(name: str) -> str:
    """Canonical package name (PEP 503): lower case, runs of ``-_.`` as ``-``."""
    return re.sub(r"[-_.]+", "-", name.strip().lower())


@dataclass
class Delta:
    """One key whose run value is not among the baselines' values."""

    source: str  # "params" | "tags" | "environment" | "metric"
    key: str
    run_value: str | None
    baseline_values: list[str | None]
    category: str
    layer: str  # a key of LAYERS, or "unlocalised" (code commits)
    consistent: bool  # the baselines agree among themselves
    score: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def baseline_value(self) -> str | None:
        vals = [v for v in self.baseline_values if v is not None]
        return vals[0] if vals else None

    def describe(self) -> str:
        base = (
            self.baseline_value
            if self.consistent
            else "/".join(sorted({str(v) for v in self.baseline_values}))
        )
        return f"{self.key}: {base} -> {self.run_value}"


def classify(source: str, key: str, value: str | None) -> tuple[str, str]:
    """(category, layer) of a key. See the module docstring for the categories."""
    n = norm_key(key)
    v = (value or "").strip()
    if _CODE.search(n):
        return "code", "unlocalised"
    if _PRECISION.search(n):
        return "precision", "runtime"
    if source == "environment" or n.startswith(("pkg_", "package_", "pip_", "env_")):
        pkg = norm_package(re.sub(r"^(pkg|package|pip|env)_", "", n))
        if pkg in METRIC_LIBRARIES:
            return "packages", "metric"
        if _HARDWARE.search(n):
            return "hardware", "runtime"
        return "packages", "runtime"
    if norm_package(n) in METRIC_LIBRARIES:
        return "packages", "metric"
    if _HARDWARE.search(n):
        return "hardware", "runtime"
    for layer, rx in _LAYER_RES:
        if rx.search(n):
            cat = {
                "split": "data",
                "labels": "data",
                "source": "data",
                "features": "data",
                "training": "config",
                "model": "model",
                "metric": "metric",
            }[layer]
            return cat, layer
    if _VERSION.search(v) and _PKG_HINT.search(n):
        return "packages", "runtime"
    return "config_other", "training"


def _num(v: str | None) -> float | None:
    try:
        x = float(v) if v is not None else None
    except ValueError:
        return None
    return x if x is not None and math.isfinite(x) else None


def same(a: str | None, b: str | None) -> bool:
    """Equal as strings, or as numbers within 1e-9 relative (``"0.001" == "1e-3"``)."""
    if a == b:
        return True
    x, y = _num(a), _num(b)
    return x is not None and y is not None and abs(x - y) <= 1e-9 * max(abs(x), abs(y))


_LEARNING_OR_PERF = set(Role)
_MEMO = "mlaudit.baselines.deltas"


def invariants(run: RunData) -> dict[str, str]:
    """Metrics logged with a single value (e.g. ``data/num_rows``) as strings, by key.

    Keys that play a metric role (loss, accuracy, LR, throughput ...) are not
    invariants even when they were logged once.
    """
    role_keys = {run.key_for(r) for r in _LEARNING_OR_PERF}
    out: dict[str, str] = {}
    for k in run.metrics.keys:
        if k in role_keys:
            continue
        s = run.metrics.series(k).finite()
        # O(n) and exits at the first differing value: curves are never invariants
        if len(s) and (
            len(s) == 1 or (s.values[-1] == s.values[0] and np.all(s.values == s.values[0]))
        ):
            v = float(s.values[0])
            out[k] = str(int(v)) if v.is_integer() else repr(v)
    return out


def _sources(run: RunData) -> dict[str, dict[str, str]]:
    return {
        "params": run.params,
        "tags": run.tags,
        "environment": run.environment,
        "metric": invariants(run),
    }


def _compared(src: str, key: str) -> bool:
    """Whether a key is compared: not an ignored one (ids, times, paths), and of the tags only
    MLflow's code tags (source commit, entry point) among its own ``mlflow.*``."""
    if _IGNORE.search(norm_key(key)):
        return False
    return not (src == "tags" and key.startswith("mlflow.") and not _CODE.search(norm_key(key)))


def _delta(src: str, key: str, rv, bv: list) -> Delta | None:
    """The delta of ``key`` between the run's value ``rv`` and the baselines' ``bv``, scored;
    None when a baseline has the run's value. Whether the baselines agree among themselves is
    ``consistent``; a secret's values are redacted."""
    if any(same(rv, v) for v in bv):
        return None
    distinct: list[str | None] = []
    for v in bv:
        if not any(same(v, d) for d in distinct):
            distinct.append(v)
    cat, layer = classify(src, key, rv if rv is not None else next((v for v in bv if v), None))
    if is_secret_key(key, rv) or any(is_secret_key(key, v) for v in bv):
        # "api_secret: a/b -> c": the values never leave here
        rv = None if rv is None else REDACTED
        bv = [None if v is None else REDACTED for v in bv]
    d = Delta(src, key, rv, bv, cat, layer, consistent=len(distinct) == 1)
    d.score = _score(d)
    return d


def find_deltas(run: RunData, baselines: Sequence[RunData]) -> list[Delta]:
    """Every delta between ``run`` and ``baselines``, highest score first.

    Returns an empty list when nothing logged differs (then the first broken
    layer is not visible in the logged invariants).
    """
    memo = run.cache.get(_MEMO)
    if memo is not None and memo[0] == [id(b) for b in baselines]:
        return memo[1]
    out: list[Delta] = []
    rs = _sources(run)
    bs = [_sources(b) for b in baselines]
    for src in ("params", "tags", "environment", "metric"):
        keys = set(rs[src]) | set().union(*(set(b[src]) for b in bs))
        for key in sorted(keys):
            if _compared(src, key):
                d = _delta(src, key, rs[src].get(key), [b[src].get(key) for b in bs])
                if d is not None:
                    out.append(d)
    out.sort(key=lambda d: (-d.score, d.key))
    run.cache[_MEMO] = ([id(b) for b in baselines], out)
    return out


def _score(d: Delta) -> float:
    cat = d.category
    if cat == "config" and d.layer == "training":
        w = _WEIGHTS["config"]
    else:
        w = _WEIGHTS.get(cat, 2.0)
    a, b = _num(d.run_value), _num(d.baseline_value)
    if a is not None and b is not None and a > 0 and b > 0:
        w *= 1 + min(abs(math.log10(a / b)), 3) / 3
    if not d.consistent:
        w *= 0.3
        d.notes.append("the baselines differ among themselves on this key")
    if d.run_value is None or all(v is None for v in d.baseline_values):
        w *= 0.8
        d.notes.append("logged on one side only")
    return round(w, 3)
