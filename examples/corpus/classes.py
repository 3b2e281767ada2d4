"""The corpus classes: what each injects, and the verdict a correct audit gives it.

Each class has a few *variants* (model family x dataset x hyper-parameters); seed ``s``
uses variant ``s mod len(variants)``, so three seeds cover both model families in every
class that has both. Fault positions are fractions of the run, so ``scale`` (a factor on
the number of steps, for quick smoke tests) keeps each fault in the same place.

Expected labels (outcome set, cause) follow the cause classes of the ML failure audit
workflow (``/work/shared/seeds/000_*``): a learning failure is ``model_convergence``, a
broken input or label is ``data_config``, a systems problem is ``infra_runtime``, a
logging/resume bug is ``correctness_bug``. ``outcomes=None`` means any outcome is right.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from .train import RunSpec

__all__ = ["CLASSES", "HEALTHY_CLASSES", "CorpusClass", "build_spec"]


@dataclass(frozen=True)
class CorpusClass:
    name: str
    outcomes: frozenset[str] | None  # expected outcome set; None = any outcome
    cause: str  # expected cause class
    fault: str  # what is injected, in one line
    variants: tuple[dict[str, Any], ...]  # RunSpec overrides, one dict per variant
    runs_per_seed: int = 1  # healthy has more runs: the false-alarm rate needs them

    def expected_outcome_tag(self) -> str:
        return "*" if self.outcomes is None else ",".join(sorted(self.outcomes))


# ----------------------------------------------------------------------------- healthy bases
# Each converges for real: val accuracy 0.93-1.0, validation loss at (or within noise of)
# its minimum at the end.
MLP_DIGITS = {
    "family": "mlp",
    "dataset": "digits",
    "hidden": (512,),
    "batch_size": 128,
    "lr": 0.05,
    "steps": 400,
}
RFF_DIGITS = {
    "family": "rff",
    "dataset": "digits",
    "rff_features": 1024,
    "rff_gamma": 0.01,
    "batch_size": 128,
    "lr": 0.5,
    "steps": 400,
}
MLP_CANCER = {
    "family": "mlp",
    "dataset": "breast_cancer",
    "hidden": (64,),
    "batch_size": 32,
    "lr": 0.003,
    "weight_decay": 1e-3,
    "steps": 400,
}
RFF_WINE = {
    "family": "rff",
    "dataset": "wine",
    "rff_features": 512,
    "rff_gamma": 0.05,
    "batch_size": 16,
    "lr": 0.3,
    "steps": 400,
}
MLP_SYNTH = {
    "family": "mlp",
    "dataset": "make_classification",
    "hidden": (256, 256),
    "batch_size": 128,
    "lr": 0.02,
    "steps": 400,
}
RFF_IRIS = {
    "family": "rff",
    "dataset": "iris",
    "rff_features": 256,
    "rff_gamma": 0.2,
    "batch_size": 16,
    "lr": 0.3,
    "steps": 400,
}

_BASES = (MLP_DIGITS, RFF_DIGITS, MLP_CANCER, RFF_WINE, MLP_SYNTH, RFF_IRIS)
_THREE = (MLP_DIGITS, RFF_DIGITS, MLP_SYNTH)


def _with(bases, **kw) -> tuple[dict[str, Any], ...]:
    return tuple({**b, **kw} for b in bases)


CLASSES: dict[str, CorpusClass] = {
    c.name: c
    for c in [
        CorpusClass(
            "healthy",
            frozenset({"succeeded"}),
            "healthy",
            "none: a well-tuned run",
            _BASES,
            runs_per_seed=2,
        ),
        CorpusClass(
            "benign_spike",
            frozenset({"succeeded"}),
            "healthy",
            "one corrupted batch at 40% of the run (inputs out of step with their labels and "
            "not normalised, x3): the loss spikes, then recovers",
            _with(_THREE, bad_batch="misaligned", _bad_at=0.4),
        ),
        CorpusClass(
            "divergence",
            frozenset({"diverged"}),
            "model_convergence",
            "peak learning rate far too high: the loss grows, then overflows",
            (
                dict(MLP_DIGITS, lr=3.0, warmup_steps=50, schedule="constant"),
                dict(MLP_SYNTH, lr=1.5, warmup_steps=50, schedule="constant"),
                dict(MLP_CANCER, lr=2.0, warmup_steps=50, schedule="constant"),
            ),
        ),
        CorpusClass(
            "nan_bad_batch",
            frozenset({"diverged", "crashed"}),
            "data_config",
            "one batch with NaN/inf inputs mid-run: the loss turns NaN abruptly, no growth before",
            _with(_THREE, bad_batch="nonfinite", _bad_at=0.55),
        ),
        CorpusClass(
            "overfit",
            frozenset({"overfit"}),
            "model_convergence",
            "60 training samples, no regularisation, long training: validation loss turns back up",
            (
                dict(
                    MLP_DIGITS,
                    optimizer="adam",
                    lr=5e-4,
                    beta2=0.95,
                    batch_size=20,
                    train_size=60,
                    steps=1000,
                    eval_every=50,
                    weight_decay=0.0,
                    schedule="constant",
                ),
                dict(
                    RFF_DIGITS,
                    optimizer="adam",
                    lr=0.02,
                    beta2=0.95,
                    batch_size=20,
                    train_size=60,
                    rff_features=2048,
                    steps=1000,
                    eval_every=50,
                    weight_decay=0.0,
                    schedule="constant",
                ),
                dict(
                    MLP_SYNTH,
                    optimizer="adam",
                    lr=1e-3,
                    beta2=0.95,
                    batch_size=20,
                    train_size=100,
                    steps=1000,
                    eval_every=50,
                    weight_decay=0.0,
                    schedule="constant",
                ),
            ),
        ),
        CorpusClass(
            "underfit",
            frozenset({"underfit", "plateaued"}),
            "model_convergence",
            "learning rate ~10,000x too low: the loss barely moves",
            (dict(MLP_DIGITS, lr=5e-6), dict(RFF_DIGITS, lr=5e-5), dict(MLP_SYNTH, lr=2e-6)),
        ),
        CorpusClass(
            "starved",
            frozenset({"slow"}),
            "infra_runtime",
            "the input pipeline sleeps 8 ms per batch: data time > half of every step",
            _with(_THREE, data_sleep=0.008, steps=300),
        ),
        CorpusClass(
            "throughput_degradation",
            frozenset({"slow"}),
            "infra_runtime",
            "host-side work per step grows linearly from 0 to 12 ms over the run",
            _with(_THREE, slowdown=0.012, steps=300),
        ),
        CorpusClass(
            "reset_counter",
            None,
            "correctness_bug",
            "the process dies at 60% of the run and a new one resumes from the last checkpoint "
            "without restoring the step counter, logging into the same run",
            _with(_THREE, _crash_at=0.6),
        ),
        CorpusClass(
            "shuffled_labels",
            frozenset({"underfit", "plateaued", "overfit"}),
            "data_config",
            "training labels permuted at random (validation labels intact): nothing to learn",
            _with(_THREE, shuffle_labels=True),
        ),
        CorpusClass(
            "eval_heavy",
            frozenset({"slow"}),
            "infra_runtime",
            "every evaluation (each 10 steps) costs 6x the training since the previous one",
            _with(_THREE, eval_every=10, eval_cost_ratio=6.0, steps=300),
        ),
        CorpusClass(
            "oom_crash",
            frozenset({"crashed"}),
            "infra_runtime",
            "the simulated accelerator runs out of memory mid-run (in evaluation or in a "
            "training step): CUDA out-of-memory traceback, run FAILED",
            (
                dict(MLP_DIGITS, _oom_at=0.5, oom_in="evaluate"),
                dict(RFF_DIGITS, _oom_at=0.6, oom_in="train_step"),
                dict(MLP_SYNTH, _oom_at=0.7, oom_in="evaluate"),
            ),
        ),
    ]
}

#: Classes whose runs are healthy (the false-alarm rate is measured on them).
HEALTHY_CLASSES = ("healthy", "benign_spike")


def build_spec(name: str, seed: int, index: int = 0, scale: float = 1.0) -> RunSpec:
    """The :class:`RunSpec` of class ``name`` for ``seed`` (``index``: the n-th run of that seed).

    ``scale`` multiplies the number of steps (at least 40), keeping fault positions as
    fractions of the run.

    Raises:
        KeyError: unknown class name.
    """
    cls = CLASSES[name]
    v = dict(cls.variants[(seed * cls.runs_per_seed + index) % len(cls.variants)])
    steps = max(40, round(v.pop("steps", 400) * scale))
    bad_at, crash_at, oom_at = (
        v.pop("_bad_at", None),
        v.pop("_crash_at", None),
        v.pop("_oom_at", None),
    )
    spec = RunSpec(corpus_class=name, seed=seed, steps=steps, description=cls.fault, **v)
    if scale < 1.0:
        spec = replace(
            spec,
            eval_every=max(5, round(spec.eval_every * max(scale, 0.4))),
            warmup_steps=max(5, round(spec.warmup_steps * scale)),
            checkpoint_every=max(10, round(spec.checkpoint_every * scale)),
        )
    if bad_at is not None:
        spec = replace(spec, bad_batch_step=int(steps * bad_at))
    if crash_at is not None:
        # die between two evaluations, after at least one checkpoint
        spec = replace(spec, crash_step=max(int(steps * crash_at), spec.checkpoint_every) + 3)
    if oom_at is not None:
        spec = replace(spec, oom_step=int(steps * oom_at))
    return spec
