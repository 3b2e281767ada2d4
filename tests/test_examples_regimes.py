"""mlaudit_demo.regimes (examples/regimes.py): train the five regimes for real (seed 0) into a sqlite MLflow store and
TensorBoard event files, read everything back through ``MlflowClient`` and TensorBoard's
``EventAccumulator`` and check that each run has the shape its name promises."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

mlflow = pytest.importorskip("mlflow")
pytest.importorskip("sklearn")
pytest.importorskip("tensorboardX")
pytest.importorskip("psutil")
event_accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")

REGIME_NAMES = ["healthy", "high_lr", "overfit", "underfit", "starved"]
PER_STEP = [
    "train/loss",
    "train/lr",
    "train/grad_norm",
    "perf/step_time",
    "perf/data_time",
    "perf/throughput",
]
PER_EVAL = ["val/loss", "val/accuracy"]


from mlaudit_demo import regimes  # noqa: E402


class Logged:
    """One regime's run read back from MLflow and from its TensorBoard logdir."""

    def __init__(self, client, run_id: str, tb_logdir: str, result: dict):
        self.client = client
        self.run = client.get_run(run_id)
        self.result = result
        self.mlflow = {}
        for key in PER_STEP + PER_EVAL:
            hist = sorted((m.step, m.value) for m in client.get_metric_history(run_id, key))
            self.mlflow[key] = hist
        acc = event_accumulator.EventAccumulator(tb_logdir, size_guidance={"scalars": 0})
        acc.Reload()
        self.tb_tags = set(acc.Tags()["scalars"])
        self.tb = {k: sorted((e.step, e.value) for e in acc.Scalars(k)) for k in self.tb_tags}

    def steps(self, key: str) -> list[int]:
        return [s for s, _ in self.mlflow[key]]

    def values(self, key: str) -> np.ndarray:
        return np.array([v for _, v in self.mlflow[key]], dtype=float)


@pytest.fixture(scope="module")
def logged(tmp_path_factory) -> dict[str, Logged]:
    root = tmp_path_factory.mktemp("regimes")
    uri = f"sqlite:///{root / 'mlflow.db'}"
    prev_uri = mlflow.get_tracking_uri()
    fluent = mlflow.tracking.fluent
    prev_exp = getattr(fluent, "_active_experiment_id", None)
    mlflow.set_tracking_uri(uri)
    try:
        exp_id = mlflow.create_experiment("regimes", artifact_location=(root / "art").as_uri())
        mlflow.set_experiment(experiment_id=exp_id)
        client = mlflow.MlflowClient(uri)
        out = {}
        for name in REGIME_NAMES:
            tb = str(root / "tb" / name)
            res = regimes.train(name, seed=0, tb_logdir=tb, verbose=False)
            assert res["run_id"] and res["tb_logdir"] == tb
            out[name] = Logged(client, res["run_id"], tb, res)
        yield out
    finally:
        mlflow.set_tracking_uri(prev_uri)
        if hasattr(fluent, "_active_experiment_id"):
            fluent._active_experiment_id = prev_exp


@pytest.mark.parametrize("name", REGIME_NAMES)
def test_logging_contract(logged, name):
    run = logged[name]
    data = run.run.data
    assert run.run.info.status == "FINISHED"
    assert data.tags["regime"] == name
    for p in (
        "regime",
        "lr",
        "hidden",
        "batch_size",
        "epochs",
        "seed",
        "train_size",
        "weight_decay",
        "optimizer",
        "warmup_steps",
    ):
        assert p in data.params, p
    assert data.params["regime"] == name and data.params["seed"] == "0"

    # train/* and perf/* every optimizer step, starting at 1
    n = run.result["steps"]
    for key in PER_STEP:
        assert run.steps(key) == list(range(1, n + 1)), key
    # at least 8 evaluations, the last one at the last step
    for key in PER_EVAL:
        st = run.steps(key)
        assert len(st) >= 8 and st[-1] == n and st == sorted(set(st)), key

    # warmup then constant/cosine learning rate
    lr = run.values("train/lr")
    cfg = regimes.REGIMES[name]
    w = cfg.warmup_steps
    assert np.all(np.diff(lr[:w]) > 0) and lr[w - 1] == pytest.approx(cfg.lr)
    assert np.all(lr[w:] <= cfg.lr * (1 + 1e-9))

    # perf metrics are consistent: data <= step, throughput = samples in the batch / step_time
    st, dt = run.values("perf/step_time"), run.values("perf/data_time")
    assert np.all(st > 0) and np.all(dt >= 0) and np.all(dt <= st)
    bs, n_train = int(data.params["batch_size"]), int(data.params["train_size"])
    samples = np.round(run.values("perf/throughput") * st, 6)
    assert set(samples) <= {bs, n_train % bs or bs}

    # TensorBoard has the very same scalars (float32 simple_value)
    assert set(PER_STEP + PER_EVAL) <= run.tb_tags
    for key in PER_STEP + PER_EVAL:
        tb_steps = [s for s, _ in run.tb[key]]
        assert tb_steps == run.steps(key), key
        tb_vals = np.array([v for _, v in run.tb[key]], dtype=float)
        ml_vals = run.values(key).astype(np.float32).astype(float)
        assert np.allclose(tb_vals, ml_vals, rtol=1e-6, equal_nan=True), key

    # console output as an artifact at the artifact root
    assert "console.log" in [a.path for a in run.client.list_artifacts(run.run.info.run_id)]
    text = Path(run.client.download_artifacts(run.run.info.run_id, "console.log")).read_text()
    eval_lines = [ln for ln in text.splitlines() if ln.startswith("step ") and "val_loss" in ln]
    assert len(eval_lines) == len(run.steps("val/loss"))


def test_healthy_converges(logged):
    run = logged["healthy"]
    tl, vl = run.values("train/loss"), run.values("val/loss")
    assert np.all(np.isfinite(tl)) and np.all(np.isfinite(vl))
    assert tl[-20:].mean() < 0.05 * tl[:5].mean()
    assert vl[-1] < 0.6 * vl[0]
    assert vl[-1] <= 1.1 * vl.min()  # flat at its minimum, not rising
    assert run.values("val/accuracy")[-1] >= 0.95
    assert np.all(np.isfinite(run.values("train/grad_norm")))


def test_high_lr_diverges(logged):
    run = logged["high_lr"]
    tl = run.values("train/loss")
    finite = np.isfinite(tl)
    first_bad = int(np.argmin(finite))
    assert not finite[first_bad], "training loss never became inf/NaN"
    # logging went on after the first non-finite value, and it stayed non-finite
    assert len(tl) - first_bad >= 10
    assert not np.any(finite[first_bad:])
    assert run.result["diverged_at"] == first_bad + 1
    # it first learned something, then climbed far above its best
    best = tl[:30].min()
    assert best < 0.5 * tl[0]
    assert np.nanmax(tl[finite]) > 1e6 * max(best, 1e-3)
    assert not math.isfinite(run.values("val/loss")[-1])
    assert not math.isfinite(run.values("train/grad_norm")[-1])


def test_overfit_val_loss_turns_up(logged):
    run = logged["overfit"]
    tl = run.values("train/loss")
    assert tl[-20:].max() < 1e-3  # memorised the 60 training samples
    assert run.run.data.params["train_size"] == "60"
    assert float(run.run.data.params["weight_decay"]) == 0.0
    steps, vl = run.steps("val/loss"), run.values("val/loss")
    i_min = int(np.argmin(vl))
    assert steps[i_min] < 0.4 * steps[-1]  # minimum early ...
    assert vl[i_min] < 0.8 * vl[0]  # ... after a real decrease
    late = vl[int(len(vl) * 2 / 3) :]
    assert late.min() > 1.3 * vl[i_min]  # ... then clearly higher for the last third
    assert vl[-1] > 1.3 * vl[i_min]


def test_underfit_barely_learns(logged):
    run = logged["underfit"]
    tl = run.values("train/loss")
    assert np.all(np.isfinite(tl))
    assert tl[-1] > 0.85 * tl[0]
    assert tl[-20:].mean() > 0.85 * tl[:20].mean()
    assert run.values("val/accuracy")[-1] < 0.7
    assert run.values("val/loss")[-1] > 0.85 * run.values("val/loss")[0]


def test_starved_is_input_bound(logged):
    starved, healthy = logged["starved"], logged["healthy"]
    ratio = np.median(starved.values("perf/data_time")) / np.median(
        starved.values("perf/step_time")
    )
    assert ratio > 0.8
    h_ratio = np.median(healthy.values("perf/data_time")) / np.median(
        healthy.values("perf/step_time")
    )
    assert h_ratio < 0.5
    # same model/optimizer as healthy, so it still converges
    assert starved.values("val/accuracy")[-1] >= 0.95
    assert starved.run.data.params["lr"] == healthy.run.data.params["lr"]
    # several seconds long: system metrics were sampled (interval 1 s)
    assert any(k.startswith("system/") for k in starved.run.data.metrics)


def test_deterministic_given_seed():
    a = regimes.train("overfit", seed=1, mlflow_run=False, steps=60, verbose=False)
    b = regimes.train("overfit", seed=1, mlflow_run=False, steps=60, verbose=False)
    c = regimes.train("overfit", seed=2, mlflow_run=False, steps=60, verbose=False)
    for key in ("train/loss", "train/grad_norm", "val/loss", "val/accuracy"):
        assert a["final"][key] == b["final"][key], key
    assert a["final"]["train/loss"] != c["final"]["train/loss"]
    assert a["run_id"] is None
