"""examples/corpus: generate a tiny corpus (seed 0, short runs) through the CLI and check, from the
MLflow store alone, that every run carries its labels and that each class's injected fault is
really in the logged data. Verdicts are not checked here: benchmarks/diagnosis_eval.py measures
them on the full corpus."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

mlflow = pytest.importorskip("mlflow")
pytest.importorskip("sklearn")

REPO = Path(__file__).resolve().parents[1]
# The classes whose fault is a mechanism of the generator (divergence, overfit and underfit are
# hyper-parameter choices; the benchmark covers them).
CLASSES = [
    "healthy",
    "benign_spike",
    "nan_bad_batch",
    "starved",
    "throughput_degradation",
    "reset_counter",
    "shuffled_labels",
    "eval_heavy",
    "oom_crash",
]
EXPECTED = {  # class -> (corpus.expected_outcome, corpus.expected_cause), as issue #4 labels them
    "healthy": ("succeeded", "healthy"),
    "benign_spike": ("succeeded", "healthy"),
    "divergence": ("diverged", "model_convergence"),
    "nan_bad_batch": ("crashed,diverged", "data_config"),
    "underfit": ("plateaued,underfit", "model_convergence"),
    "starved": ("slow", "infra_runtime"),
    "throughput_degradation": ("slow", "infra_runtime"),
    "reset_counter": ("*", "correctness_bug"),
    "shuffled_labels": ("overfit,plateaued,underfit", "data_config"),
    "eval_heavy": ("slow", "infra_runtime"),
    "oom_crash": ("crashed", "infra_runtime"),
}


class Logged:
    """One corpus run read back with MlflowClient (points in logging order)."""

    def __init__(self, client, run):
        self.run = run
        self.tags = run.data.tags
        self.params = run.data.params
        self.status = run.info.status
        self.hist = {}
        for key in run.data.metrics:
            pts = sorted(
                client.get_metric_history(run.info.run_id, key), key=lambda m: (m.timestamp, m.step)
            )
            self.hist[key] = pts
        with tempfile.TemporaryDirectory() as tmp:
            self.console = Path(
                client.download_artifacts(run.info.run_id, "console.log", tmp)
            ).read_text()

    def values(self, key: str) -> np.ndarray:
        return np.array([m.value for m in self.hist[key]], dtype=float)

    def steps(self, key: str) -> np.ndarray:
        return np.array([m.step for m in self.hist[key]])

    def walls(self, key: str) -> np.ndarray:
        return np.array([m.timestamp / 1000.0 for m in self.hist[key]])


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    out = tmp_path_factory.mktemp("corpus")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "examples.corpus.generate",
            "--out",
            str(out),
            "--seeds",
            "1",
            "--scale",
            "0.3",
            "--classes",
            ",".join(CLASSES),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    client = mlflow.MlflowClient(f"sqlite:///{out / 'mlflow.db'}")
    exp = client.get_experiment_by_name("mlaudit-corpus")
    runs = client.search_runs([exp.experiment_id], max_results=100)
    by_class: dict[str, list[Logged]] = {}
    for r in runs:
        by_class.setdefault(r.data.tags["corpus.class"], []).append(Logged(client, r))
    return {"out": out, "runs": by_class, "stdout": proc.stdout}


def one(corpus, cls: str) -> Logged:
    return corpus["runs"][cls][0]


def test_every_class_generated_with_its_labels(corpus):
    runs = corpus["runs"]
    assert sorted(runs) == sorted(CLASSES)
    assert (
        len(runs["healthy"]) == 2
    )  # two variants per seed: the false-alarm rate needs healthy runs
    families = set()
    for cls, logged in runs.items():
        for lg in logged:
            assert (
                lg.tags["corpus.expected_outcome"],
                lg.tags["corpus.expected_cause"],
            ) == EXPECTED[cls]
            assert lg.tags["corpus.seed"] == "0"
            families.add(lg.tags["corpus.variant"].split("/")[0])
            for key in (
                "train/loss",
                "train/lr",
                "train/grad_norm",
                "perf/step_time",
                "perf/data_time",
                "perf/throughput",
                "val/loss",
                "val/accuracy",
            ):
                assert key in lg.hist, (cls, key)
            assert "num_classes" in lg.params
            assert "corpus" not in " ".join(
                lg.params
            )  # the labels are tags, never hyper-parameters
    assert families == {"mlp", "rff"}
    assert (corpus["out"] / "manifest.json").exists()


def test_healthy_runs_learn(corpus):
    for lg in corpus["runs"]["healthy"]:
        assert lg.status == "FINISHED"
        loss = lg.values("train/loss")
        assert np.isfinite(loss).all()
        assert loss[-10:].mean() < 0.4 * loss[:5].mean()
        assert lg.values("val/accuracy")[-1] > 0.85


def test_benign_spike_spikes_then_recovers(corpus):
    lg = one(corpus, "benign_spike")
    loss, steps = lg.values("train/loss"), lg.steps("train/loss")
    i = int(np.argmax(loss))
    assert loss[i] > 10 * np.median(loss[max(0, i - 10) : i])  # the corrupted batch
    assert 0.3 * len(loss) < i < 0.5 * len(loss)
    assert np.median(loss[-10:]) < 3 * np.median(loss[i - 10 : i])  # recovered
    assert lg.status == "FINISHED" and np.isfinite(loss).all()
    assert steps[i] == int(int(lg.params["steps"]) * 0.4)


def test_nan_bad_batch_turns_nan_abruptly(corpus):
    lg = one(corpus, "nan_bad_batch")
    loss = lg.values("train/loss")
    bad = np.flatnonzero(~np.isfinite(loss))
    assert bad.size > 0
    first = int(bad[0])
    assert not np.isfinite(loss[first:]).any()  # NaN from the bad batch on
    before = loss[:first]
    assert before[-1] < 2 * np.median(before[-20:])  # no growth before the onset
    assert "non-finite training loss" in lg.console


def test_starved_waits_for_data(corpus):
    lg = one(corpus, "starved")
    ratio = lg.values("perf/data_time") / lg.values("perf/step_time")
    assert np.median(ratio) > 0.5


def test_throughput_degrades(corpus):
    tp = one(corpus, "throughput_degradation").values("perf/throughput")
    q = len(tp) // 4
    assert np.median(tp[-q:]) < 0.7 * np.median(tp[:q])


def test_reset_counter_restarts_steps_in_the_same_run(corpus):
    lg = one(corpus, "reset_counter")
    steps = lg.steps("train/loss")
    drops = np.flatnonzero(np.diff(steps) < 0)
    assert drops.size == 1
    assert steps[drops[0] + 1] == 1 and steps[drops[0]] > 10
    assert lg.status == "FINISHED"
    assert "resuming run from checkpoint" in lg.console
    # weights were restored: the loss right after the reset is far below the initial loss
    loss = lg.values("train/loss")
    assert np.median(loss[drops[0] + 1 : drops[0] + 6]) < 0.5 * np.median(loss[:5])


def test_shuffled_labels_stay_at_chance(corpus):
    lg = one(corpus, "shuffled_labels")
    chance = 1.0 / int(lg.params["num_classes"])
    assert lg.values("val/accuracy")[-1] < 2 * chance


def test_eval_takes_most_of_the_wall_time(corpus):
    lg = one(corpus, "eval_heavy")
    wall = lg.walls("train/loss")
    train = lg.values("perf/step_time")[1:].sum()
    assert 1 - train / (wall[-1] - wall[0]) > 0.5
    assert len(lg.values("val/loss")) >= len(lg.values("train/loss")) // 10


def test_oom_crash_prints_the_cuda_traceback(corpus):
    lg = one(corpus, "oom_crash")
    assert lg.status == "FAILED"
    assert "Traceback (most recent call last):" in lg.console
    assert "RuntimeError: CUDA out of memory. Tried to allocate" in lg.console
    assert "GiB total capacity" in lg.console
    assert "in evaluate" in lg.console or "in train_step" in lg.console
    # it crashed mid-run: fewer steps than planned, and finite until then
    loss = lg.values("train/loss")
    assert 0 < len(loss) < int(lg.params["steps"]) and np.isfinite(loss).all()


def test_generate_refuses_a_used_directory(corpus):
    proc = subprocess.run(
        [
            sys.executable,
            "examples/corpus/generate.py",
            "--out",
            str(corpus["out"]),
            "--classes",
            "healthy",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 2
    err = proc.stderr.strip().splitlines()
    assert len(err) == 1 and "already holds a corpus" in err[0]
