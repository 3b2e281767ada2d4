"""One real training run of the corpus, with an optional injected fault, logged to MLflow.

Two model families, both trained for real (float32 numpy, hand-written back-propagation):

* ``mlp``: the ReLU MLP of ``mlaudit_demo.regimes`` (SGD with momentum or Adam).
* ``rff``: multinomial logistic (softmax) regression on random Fourier features, the
  kernel approximation of Rahimi & Recht (2007) that scikit-learn calls ``RBFSampler``:
  a fixed random projection ``sqrt(2/D) cos(x W + b)`` followed by one trainable linear
  layer, so the loss is convex in the trained weights.

Datasets ship with scikit-learn (nothing is downloaded): ``digits`` (1797 x 64, 10
classes), ``wine`` (178 x 13, 3), ``breast_cancer`` (569 x 30, 2), ``iris`` (150 x 4, 3)
and the synthetic ``make_classification`` (3000 x 40, 5 classes).

Metric names and cadence are those of the demo regimes (``step`` is the global optimizer
step, from 1): every step ``train/loss``, ``train/lr``, ``train/grad_norm``,
``perf/step_time`` (s, the whole step including data), ``perf/data_time`` (s waiting for
the batch), ``perf/throughput`` (samples/s); every evaluation ``val/loss`` and
``val/accuracy``. The printed lines (and tracebacks) are logged as the ``console.log``
artifact, the run ends FINISHED or FAILED.

The models are tiny: a step's real compute (0.05-1 ms) is comparable to timer jitter on a
shared machine and to one MLflow logging call. So that the time shares of a run (data
loading, evaluation, logging) are those of a real one, every training step also waits
``device_time`` seconds (default 2 ms), standing for the accelerator kernels of a real
model, and an evaluation waits for its forward passes at a third of that per batch. The
optimisation itself is never simulated.
"""

from __future__ import annotations

import copy
import math
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from mlaudit_demo.regimes import MLP, batches, lr_at

__all__ = [
    "DATASETS",
    "OOM_CAPACITY_GIB",
    "RunResult",
    "RunSpec",
    "SoftmaxRFF",
    "load_dataset",
    "train_run",
]

DATASETS = ("digits", "wine", "breast_cancer", "iris", "make_classification")

#: Total capacity of the simulated accelerator in the oom_crash class (a 16 GB card as
#: PyTorch reports it).
OOM_CAPACITY_GIB = 15.78


@dataclass(frozen=True)
class RunSpec:
    """Everything that defines one corpus run: model, data, optimiser, and the injected fault.

    Step-valued fault fields are absolute optimizer steps (``None`` = no such fault).
    """

    corpus_class: str
    seed: int
    family: str = "mlp"  # "mlp" or "rff"
    dataset: str = "digits"
    steps: int = 400
    lr: float = 0.05  # peak learning rate after warmup
    optimizer: str = "sgd"  # "sgd" (heavy-ball momentum) or "adam"
    momentum: float = 0.9  # SGD momentum or Adam beta1
    beta2: float = 0.999
    weight_decay: float = 1e-4
    warmup_steps: int = 20
    schedule: str = "cosine"  # "cosine" (to 0) or "constant" after warmup
    batch_size: int = 128
    hidden: tuple[int, ...] = (512,)  # mlp only
    rff_features: int = 1024  # rff only: number of random features D
    rff_gamma: float = 0.02  # rff only: RBF kernel width, exp(-gamma |x - x'|^2)
    train_size: int | None = None  # sub-sample of the training split
    val_frac: float = 0.3
    eval_every: int = 25
    device_time: float = 0.002  # s each step waits for the (simulated) accelerator, see module doc
    nonfinite_patience: int = 30  # steps still logged after the loss turns NaN/inf
    # ---- injected faults
    bad_batch_step: int | None = None  # a corrupted batch is fed at this step
    bad_batch: str = ""  # "nonfinite": some inputs NaN/inf; "misaligned": see _corrupt
    bad_batch_scale: float = 3.0
    shuffle_labels: bool = False  # training labels permuted (validation labels intact)
    data_sleep: float = 0.0  # s the input pipeline sleeps per batch (data-loader starvation)
    slowdown: float = 0.0  # s of extra work per step at the last step, growing linearly from 0
    eval_cost_ratio: float = 0.0  # evaluation costs this many times the training since the last one
    oom_step: int | None = None  # step at which the simulated accelerator runs out of memory
    oom_in: str = "evaluate"  # "evaluate" or "train_step": the function that raises
    crash_step: int | None = None  # the process dies after this step ...
    checkpoint_every: int = (
        50  # ... and a new one resumes from the last checkpoint, step counter reset
    )
    description: str = ""

    def params(self, num_classes: int | None = None) -> dict[str, Any]:
        """The run's hyper-parameters as a tracker would log them (no fault fields)."""
        p: dict[str, Any] = {
            "model": (
                f"mlp({'-'.join(map(str, self.hidden))}, relu)"
                if self.family == "mlp"
                else f"softmax-regression(random-fourier-features D={self.rff_features})"
            ),
            "dataset": f"sklearn.{self.dataset}",
            "seed": self.seed,
            "lr": self.lr,
            "optimizer": self.optimizer,
            "momentum": self.momentum,
            "weight_decay": self.weight_decay,
            "warmup_steps": self.warmup_steps,
            "lr_schedule": self.schedule,
            "batch_size": self.batch_size,
            "steps": self.steps,
            "eval_every": self.eval_every,
            "train_size": self.train_size if self.train_size is not None else "all",
        }
        if num_classes is not None:
            p["num_classes"] = num_classes
        if self.optimizer == "adam":
            p["beta2"] = self.beta2
        if self.family == "rff":
            p["rff_gamma"] = self.rff_gamma
        if self.crash_step is not None:
            p["checkpoint_every"] = self.checkpoint_every
        return p


@dataclass
class RunResult:
    spec: RunSpec
    run_id: str | None
    status: str  # "FINISHED" or "FAILED"
    steps_logged: int
    wall_time: float  # s
    # key -> [(step, wall s, value)]: every point trained, including those a crash lost before logging
    history: dict[str, list[tuple[int, float, float]]] = field(default_factory=dict)
    console: list[str] = field(default_factory=list)

    def last(self, key: str) -> float:
        pts = self.history.get(key) or [(0, 0.0, float("nan"))]
        return pts[-1][2]


# --------------------------------------------------------------------------- data


def load_dataset(
    name: str,
    seed: int,
    val_frac: float = 0.3,
    train_size: int | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """A scikit-learn dataset split into train / validation by ``seed``, standardised.

    Returns ``(X_train, y_train, X_val, y_val, num_classes)``; X float32 of shape
    (n, features) standardised with the training statistics, y int64 class ids.

    Raises:
        ValueError: unknown dataset name.
    """
    from sklearn import datasets

    if name == "make_classification":
        X, y = datasets.make_classification(
            n_samples=3000,
            n_features=40,
            n_informative=20,
            n_redundant=5,
            n_classes=5,
            class_sep=1.5,
            random_state=7,
        )
    elif name in ("digits", "wine", "breast_cancer", "iris"):
        X, y = getattr(datasets, f"load_{name}")(return_X_y=True)
    else:
        raise ValueError(f"unknown dataset {name!r}; choose from {DATASETS}")
    X = X.astype(np.float64)
    perm = np.random.default_rng(10_000 + seed).permutation(len(X))
    X, y = X[perm], y[perm]
    n_val = round(len(X) * val_frac)
    X_tr, y_tr, X_val, y_val = X[n_val:], y[n_val:], X[:n_val], y[:n_val]
    if train_size is not None and train_size < len(X_tr):
        sub = np.random.default_rng(20_000 + seed).choice(len(X_tr), train_size, replace=False)
        X_tr, y_tr = X_tr[sub], y_tr[sub]
    mu = X_tr.mean(axis=0)
    sd = X_tr.std(axis=0) + 1.0 if name == "digits" else X_tr.std(axis=0) + 1e-6
    f32 = np.float32
    return (
        ((X_tr - mu) / sd).astype(f32),
        y_tr.astype(np.int64),
        ((X_val - mu) / sd).astype(f32),
        y_val.astype(np.int64),
        int(y.max()) + 1,
    )


# --------------------------------------------------------------------------- second model family


class SoftmaxRFF(MLP):
    """Softmax regression on random Fourier features (a fixed random first layer).

    ``phi(x) = sqrt(2 / D) * cos(x @ Omega + b)`` with ``Omega ~ N(0, 2 gamma)`` and
    ``b ~ U[0, 2 pi)`` approximates the RBF kernel ``exp(-gamma |x - x'|^2)``
    (Rahimi & Recht 2007); the trained part is one linear layer ``phi(x) @ W1 + b1``
    (zero-initialised, as is usual for logistic regression), so the optimiser, the
    loss and the evaluation are the demo MLP's with no hidden layer.
    """

    def __init__(
        self,
        n_in: int,
        n_out: int,
        rng: np.random.Generator,
        features: int = 1024,
        gamma: float = 0.02,
    ) -> None:
        super().__init__(features, (), n_out, rng)
        self.params["W1"][:] = 0.0
        self.omega = rng.normal(0.0, math.sqrt(2.0 * gamma), (n_in, features)).astype(np.float32)
        self.phase = rng.uniform(0.0, 2.0 * math.pi, features).astype(np.float32)
        self.scale = np.float32(math.sqrt(2.0 / features))

    def features(self, X: np.ndarray) -> np.ndarray:
        return self.scale * np.cos(X @ self.omega + self.phase)

    def forward(self, X: np.ndarray) -> tuple[list[np.ndarray], np.ndarray]:
        return super().forward(self.features(X))


# --------------------------------------------------------------------------- simulated accelerator


class DeviceMemory:
    """Byte accounting of a simulated accelerator, raising PyTorch's out-of-memory error.

    The corpus has no GPU; this keeps the numbers a CUDA caching allocator would print
    (requested, total capacity, already allocated, free, reserved; GiB) so that the
    console holds the same message a real run does.
    """

    GIB = 1024**3

    def __init__(self, capacity_gib: float = OOM_CAPACITY_GIB, device: int = 0) -> None:
        self.capacity = capacity_gib * self.GIB
        self.allocated = 0.0
        self.reserved = 0.0
        self.device = device

    def alloc(self, nbytes: float) -> None:
        if self.allocated + nbytes > self.capacity * 0.97:
            free = max(self.capacity - self.reserved, 0.0) / self.GIB
            raise RuntimeError(
                f"CUDA out of memory. Tried to allocate {nbytes / self.GIB:.2f} GiB (GPU {self.device}; "
                f"{self.capacity / self.GIB:.2f} GiB total capacity; {self.allocated / self.GIB:.2f} GiB "
                f"already allocated; {free:.2f} GiB free; {self.reserved / self.GIB:.2f} GiB reserved "
                "in total by PyTorch) If reserved memory is >> allocated memory try setting "
                "max_split_size_mb to avoid fragmentation.  See documentation for Memory Management "
                "and PYTORCH_CUDA_ALLOC_CONF"
            )
        self.allocated += nbytes
        self.reserved = max(self.reserved, self.allocated * 1.04)

    def free(self, nbytes: float) -> None:
        self.allocated = max(self.allocated - nbytes, 0.0)


# --------------------------------------------------------------------------- logging


class _MlflowLog:
    """Buffered metrics for one MLflow run, handed to MLflow's asynchronous logging queue.

    The buffer is flushed at every evaluation, like the demo regimes; ``synchronous=False``
    (MLflow >= 2.8) writes it from MLflow's own thread, so the training loop does not
    wait for the tracking store, as in a real training job.
    """

    BATCH = 1000  # MLflow's limit of metrics per log_batch call

    def __init__(self, client, run_id: str | None) -> None:
        self.client, self.run_id = client, run_id
        self.buffer: list[tuple[str, float, int, int]] = []
        self.pending: list = []

    def add(self, values: dict[str, float], step: int, wall: float) -> None:
        ms = int(wall * 1000)
        self.buffer.extend((k, float(v), ms, step) for k, v in values.items())

    def flush(self) -> None:
        if self.client is not None and self.buffer:
            from mlflow.entities import Metric

            ms = [Metric(k, v, t, s) for k, v, t, s in self.buffer]
            for i in range(0, len(ms), self.BATCH):
                op = self.client.log_batch(
                    self.run_id, metrics=ms[i : i + self.BATCH], synchronous=False
                )
                if op is not None:
                    self.pending.append(op)
        self.buffer = []

    def wait(self) -> None:
        """Block until every queued batch is in the store (raises what the store raised)."""
        for op in self.pending:
            op.wait()
        self.pending = []

    def drop(self) -> None:
        """Lose the unflushed points (the process died before writing them)."""
        self.buffer = []


# --------------------------------------------------------------------------- training


def _make_model(spec: RunSpec, n_in: int, n_out: int, rng: np.random.Generator) -> MLP:
    if spec.family == "mlp":
        return MLP(n_in, spec.hidden, n_out, rng)
    if spec.family == "rff":
        return SoftmaxRFF(n_in, n_out, rng, features=spec.rff_features, gamma=spec.rff_gamma)
    raise ValueError(f"unknown model family {spec.family!r}; choose 'mlp' or 'rff'")


def _stream(
    spec: RunSpec,
    X: np.ndarray,
    y: np.ndarray,
    rng: np.random.Generator,
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    return batches(X, y, spec.batch_size, rng, sleep=spec.data_sleep)


class _Crash(Exception):
    """The simulated death of the training process (reset_counter class)."""


def train_run(
    spec: RunSpec,
    client=None,
    experiment_id: str | None = None,
    tags: dict[str, str] | None = None,
    verbose: bool = False,
) -> RunResult:
    """Train ``spec`` for real and log it to MLflow through ``client`` (``None``: in memory only).

    The run is created in ``experiment_id`` with ``tags``; the console lines are logged as
    ``console.log`` and the run is terminated FINISHED, or FAILED when training raised.
    The simulated out-of-memory error ends the run the way it ends a real process: its
    traceback is printed and the run is FAILED; any other exception is a bug of the
    generator and propagates (after the run is marked FAILED).

    Returns:
        A :class:`RunResult` with every logged point (key -> [(step, wall s, value)]).
    """
    from threadpoolctl import threadpool_limits  # ships with scikit-learn

    run_id = None
    if client is not None:
        run = client.create_run(
            experiment_id, run_name=f"{spec.corpus_class}-seed{spec.seed}", tags=tags or {}
        )
        run_id = run.info.run_id
    log = _MlflowLog(client, run_id)
    res = RunResult(spec, run_id, "FINISHED", 0, 0.0)

    def emit(line: str) -> None:
        res.console.append(line)
        if verbose:
            print(line, flush=True)

    t_start = time.time()
    try:
        # single-threaded BLAS: the matrices are small and the machine is shared
        with threadpool_limits(limits=1), np.errstate(all="ignore"):
            _train(spec, log, res, emit)
    except (
        BaseException
    ) as exc:  # the run fails the way a real process does: traceback on the console
        res.status = "FAILED"
        for line in traceback.format_exc().rstrip("\n").splitlines():
            emit(line)
        if not (isinstance(exc, RuntimeError) and str(exc).startswith("CUDA out of memory")):
            raise  # a bug in the generator, not an injected fault
    finally:
        log.flush()
        log.wait()
        res.wall_time = time.time() - t_start
        if client is not None:
            client.log_text(run_id, "\n".join(res.console) + "\n", "console.log")
            client.set_terminated(run_id, status=res.status)
    return res


def _param(k: str, v: Any):
    from mlflow.entities import Param

    return Param(k, str(v))


def _train(spec: RunSpec, log: _MlflowLog, res: RunResult, emit: Callable[[str], None]) -> None:
    X_tr, y_tr, X_val, y_val, n_cls = load_dataset(
        spec.dataset, spec.seed, spec.val_frac, spec.train_size
    )
    rng = np.random.default_rng(spec.seed)
    if spec.shuffle_labels:
        y_tr = rng.permutation(y_tr)
    model = _make_model(spec, X_tr.shape[1], n_cls, rng)
    params = spec.params(n_cls)
    if log.client is not None:
        log.client.log_batch(log.run_id, params=[_param(k, v) for k, v in params.items()])
    emit(f"{spec.corpus_class} seed={spec.seed} " + " ".join(f"{k}={v}" for k, v in params.items()))
    emit(
        f"data: {len(X_tr)} train / {len(X_val)} validation samples, {X_tr.shape[1]} features, "
        f"{n_cls} classes"
    )
    device = None
    if spec.oom_step is not None:
        device = DeviceMemory()
        device.alloc(device.capacity * 0.40)  # weights, gradients and optimizer state
    state = {"checkpoint": None, "diverged_at": None}
    try:
        _segment(
            spec, model, X_tr, y_tr, X_val, y_val, rng, log, res, emit, device, state, first=True
        )
    except _Crash:
        # The first process died: its unflushed points and its console are lost. A new
        # process restores weights and optimizer state from the last checkpoint, but not the
        # global step (the bug), and logs into the same run.
        log.drop()
        ckpt_step, ckpt = state["checkpoint"]
        res.console.clear()
        time.sleep(0.3)  # process restart
        emit(
            f"{spec.corpus_class} seed={spec.seed} (restarted) "
            + " ".join(f"{k}={v}" for k, v in params.items())
        )
        emit(
            f"resuming run from checkpoint ckpt-{ckpt_step:06d}.npz: model weights and optimizer "
            "state restored"
        )
        model.params, model.velocity, model.second, model.t = copy.deepcopy(ckpt)
        _segment(
            spec,
            model,
            X_tr,
            y_tr,
            X_val,
            y_val,
            np.random.default_rng(spec.seed + 1),
            log,
            res,
            emit,
            device,
            state,
            first=False,
        )


def _segment(spec, model, X_tr, y_tr, X_val, y_val, rng, log, res, emit, device, state, first):
    stream = _stream(spec, X_tr, y_tr, rng)
    total = spec.steps
    step = 0
    train_time_since_eval = 0.0
    while step < total:
        step += 1
        lr = lr_at(step, spec, total)
        t0 = time.perf_counter()
        xb, yb = next(stream)
        if step == spec.bad_batch_step and first:
            xb = _corrupt(spec, xb, rng)
        t1 = time.perf_counter()
        loss, grad_norm = train_step(
            model,
            spec,
            xb,
            yb,
            lr,
            device,
            _oom_bytes(spec, step, device, "train_step") if device else 0.0,
        )
        time.sleep(spec.device_time)
        if spec.slowdown:
            time.sleep(spec.slowdown * step / total)  # host-side work growing with the step
        t2 = time.perf_counter()
        step_time = t2 - t0
        train_time_since_eval += step_time
        values = {
            "train/loss": loss,
            "train/lr": lr,
            "train/grad_norm": grad_norm,
            "perf/step_time": step_time,
            "perf/data_time": t1 - t0,
            "perf/throughput": len(yb) / max(step_time, 1e-9),
        }
        if state["diverged_at"] is None and not math.isfinite(loss):
            state["diverged_at"] = step
            emit(
                f"step {step} | non-finite training loss ({loss}); logging {spec.nonfinite_patience} "
                "more steps then stopping"
            )
        stop = (
            state["diverged_at"] is not None
            and step >= state["diverged_at"] + spec.nonfinite_patience
        )
        last = step == total or stop
        if step % spec.eval_every == 0 or last:
            te = time.perf_counter()
            val_loss, val_acc = evaluate(
                model,
                X_val,
                y_val,
                device,
                _oom_bytes(spec, step, device, "evaluate") if device else 0.0,
            )
            time.sleep(spec.device_time / 3 * math.ceil(len(X_val) / spec.batch_size))
            if spec.eval_cost_ratio:
                # what the extra evaluation work costs: `ratio` x the training since the last eval
                spent = time.perf_counter() - te
                time.sleep(max(0.0, spec.eval_cost_ratio * train_time_since_eval - spent))
            train_time_since_eval = 0.0
            values["val/loss"], values["val/accuracy"] = val_loss, val_acc
            emit(
                f"step {step} | loss {loss:.4g} | val_loss {val_loss:.4g} | val_acc {val_acc:.4f} | "
                f"lr {lr:.4g} | grad_norm {grad_norm:.4g} | step_time {step_time * 1000:.2f}ms | "
                f"data_time {(t1 - t0) * 1000:.2f}ms"
            )
        wall = time.time()
        log.add(values, step, wall)
        for k, v in values.items():
            res.history.setdefault(k, []).append((step, wall, float(v)))
        res.steps_logged += 1
        if "val/loss" in values:
            log.flush()
        if spec.crash_step is not None and step % spec.checkpoint_every == 0:
            state["checkpoint"] = (
                step,
                copy.deepcopy((model.params, model.velocity, model.second, model.t)),
            )
        if first and spec.crash_step is not None and step == spec.crash_step:
            raise _Crash()
        if stop:
            emit(
                f"stopping early at step {step}: training loss non-finite since step {state['diverged_at']}"
            )
            return
    emit(f"done: {step} steps | final val_acc {res.last('val/accuracy'):.4f}")


def _corrupt(spec: RunSpec, xb: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    xb = xb.copy()
    if spec.bad_batch == "nonfinite":
        # a few samples decoded to garbage: NaN and inf features
        rows = rng.choice(len(xb), max(1, len(xb) // 16), replace=False)
        xb[rows, ::3] = np.nan
        xb[rows, 1::3] = np.inf
    elif spec.bad_batch == "misaligned":
        # a shard whose records are out of step with their labels, and un-normalised
        xb = np.roll(xb, 1, axis=0) * np.float32(spec.bad_batch_scale)
    return xb


def train_step(
    model: MLP,
    spec: RunSpec,
    xb: np.ndarray,
    yb: np.ndarray,
    lr: float,
    device: DeviceMemory | None = None,
    activation_bytes: float = 0.0,
) -> tuple[float, float]:
    """One optimiser update; returns (training loss, global gradient L2 norm).

    With ``device``, the step first allocates ``activation_bytes`` on the simulated
    accelerator (freed after the update) and raises its out-of-memory error when they do
    not fit.
    """
    if device is not None:
        device.alloc(activation_bytes)
    loss, grads = model.loss_and_grads(xb, yb)
    grad_norm = math.sqrt(sum(float(np.sum(g * g)) for g in grads.values()))
    if spec.optimizer == "adam":
        model.adam_step(grads, lr, spec.momentum, spec.weight_decay, beta2=spec.beta2)
    else:
        model.sgd_step(grads, lr, spec.momentum, spec.weight_decay)
    if device is not None:
        device.free(activation_bytes)
    return loss, grad_norm


def evaluate(
    model: MLP,
    X: np.ndarray,
    y: np.ndarray,
    device: DeviceMemory | None = None,
    scratch_bytes: float = 0.0,
) -> tuple[float, float]:
    """Validation (loss, accuracy) of ``model`` on ``X``, ``y``.

    With ``device``, the evaluation's score buffers (``scratch_bytes``) are allocated on
    the simulated accelerator first.
    """
    if device is not None:
        device.alloc(scratch_bytes)
    try:
        return model.evaluate(X, y)
    finally:
        if device is not None:
            device.free(scratch_bytes)


def _oom_bytes(spec: RunSpec, step: int, device: DeviceMemory, where: str) -> float:
    """Bytes the step (``where`` = "train_step") or evaluation asks the simulated device for.

    Model weights and optimizer state hold 40% of the device from the start. Training:
    a sequence-length curriculum grows the activations from 10% to 50% of the device by
    ``oom_step``, where the next length needs 65% and no longer fits. Evaluation: the
    usual pass needs 30%; from ``oom_step`` on it also scores every validation pair (a
    retrieval metric), 70%, which does not fit.
    """
    cap = device.capacity
    if spec.oom_in != where:
        return 0.0
    if where == "train_step":
        return cap * (0.65 if step >= spec.oom_step else 0.10 + 0.40 * step / spec.oom_step)
    return cap * (0.70 if step >= spec.oom_step else 0.30)


def spec_dict(spec: RunSpec) -> dict[str, Any]:
    d = asdict(spec)
    d["hidden"] = list(spec.hidden)
    return d
