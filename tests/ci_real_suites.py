"""CI fixtures built from real public ML test suites, run for real with perturbed values.

Each fixture under ``tests/data/ci_real/<name>/`` holds a repository (``repo/``): a test
function and its golden values copied from a public suite (sources and licences in
``tests/data/ci_real/SOURCES.md``; imports simplified so the test runs here, the model run
replaced by the artifact file it writes), and the job's log ``ci.log``. :func:`build`
writes the job's artifact (the golden values perturbed as the fixture's story says, with a
fixed seed), then runs the CI job for real: the job's setup lines (image, packages) and
``python -m pytest -rA tests``, stdout and stderr captured into one file as CI captures
them. ``labels.json`` gives each fixture's expected outcome and cause, written before
``mlaudit ci`` was run on it; ``held_out`` fixtures were not tuned on.

Run ``python tests/ci_real_suites.py`` to rebuild every fixture's artifact and log.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).parent / "data" / "ci_real"


def _megatron_golden(repo: Path) -> dict:
    return json.loads(
        (
            repo
            / "tests/functional_tests/test_cases/gpt/gpt3_mcore_te_tp2_pp2/golden_values_dev_dgx_a100.json"
        ).read_text()
    )


def _write(path: Path, obj) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, indent=1) + "\n")


def art_megatron_regression(repo: Path, rng) -> None:
    """lm loss equal at step 1, then drifting up (1% .. 14%): a loss curve that stopped falling."""
    g = _megatron_golden(repo)
    out = json.loads(json.dumps(g))
    steps = list(g["lm loss"]["values"])
    for i, s in enumerate(steps):
        out["lm loss"]["values"][s] = round(g["lm loss"]["values"][s] * (1 + 0.014 * i), 5)
    _write(repo / "tensorboard_logs.json", out)


def art_megatron_iteration_time(repo: Path, rng) -> None:
    """Same losses and memory to the digit; every iteration 2.6 s slower (a slower node)."""
    g = _megatron_golden(repo)
    out = json.loads(json.dumps(g))
    for s, v in g["iteration-time"]["values"].items():
        out["iteration-time"]["values"][s] = round(v + 2.6 + float(rng.uniform(0, 0.05)), 5)
    _write(repo / "tensorboard_logs.json", out)


TORCHTUNE_LLAMA2 = [10.5201, 10.5217, 10.4945, 10.5136]
TORCHTUNE_LLAMA3 = [11.9839, 11.9684, 11.9596, 11.9366]


def art_torchtune_drift(repo: Path, rng) -> None:
    """Mixed-sign deviations of 0.9-1.4x the allowed (atol + rtol*|e| ~ 1.15e-3)."""
    signs = [1, -1, -1, 1]
    vals = [
        round(e + s * float(rng.uniform(0.0011, 0.0016)), 4)
        for e, s in zip(TORCHTUNE_LLAMA2, signs)
    ]
    _write(repo / "artifacts/llama2_7B_full_low_memory/loss_values.json", vals)
    _write(repo / "artifacts/llama3_8B_full_single_device/loss_values.json", TORCHTUNE_LLAMA3)


def art_lm_eval_length(repo: Path, rng) -> None:
    """The task was built with limit=9 instead of 10: 36 loglikelihoods for 40 golden ones."""
    src = (repo / "tests/models/test_huggingface.py").read_text()
    start = src.index("MULTIPLE_CH_RES = [")
    golden = json.loads(
        src[start + len("MULTIPLE_CH_RES = ") : src.index("]", start) + 1].replace(",\n    ]", "]")
    )
    vals = [round(v + float(rng.normal(0, 2e-4)), 6) for v in golden[:36]]
    _write(repo / "artifacts/arc_easy_loglikelihood.json", vals)


def art_liger_bf16(repo: Path, rng) -> None:
    """Liger's kernels vs Hugging Face's in bf16: per-step loss differences of bf16 size, both signs."""
    hf = json.loads((repo / "test/convergence/golden/mini_llama3_bf16_hf_loss.json").read_text())
    lig = []
    for v in hf:
        ulp = 2.0 ** (np.floor(np.log2(abs(v))) - 7)  # bf16 spacing at v
        lig.append(float(v + ulp * float(rng.choice([-1.0, 0.0, 1.0], p=[0.35, 0.3, 0.35]))))
    _write(repo / "artifacts/mini_llama3_bf16_liger_loss.json", lig)


def art_hf_bert_drift(repo: Path, rng) -> None:
    """BERT's [:, 1:4, 1:4] slice after a driver/image bump: mixed-sign 1-1.6e-4 deviations."""
    expected = np.array(
        [[[0.4249, 0.1008, 0.7531], [0.3771, 0.1188, 0.7467], [0.4152, 0.1098, 0.7108]]]
    )
    dev = rng.uniform(0.3e-4, 1.9e-4, expected.shape) * rng.choice([-1.0, 1.0], expected.shape)
    (repo / "artifacts").mkdir(parents=True, exist_ok=True)
    np.save(repo / "artifacts/bert_base_uncased_slice.npy", (expected + dev).astype(np.float32))


def art_torchtune_seed(repo: Path, rng) -> None:
    """The recipe ran without its seed override (seed=null): another seed's curve, inside the seeds' band."""
    g = repo / "tests/recipes/golden"
    seeds = np.array(
        [json.loads((g / f"llama2_loss_seed{s}.json").read_text())["loss"] for s in (9, 10, 11)]
    )
    lo, hi = seeds.min(0), seeds.max(0)
    vals = [round(float(a + (b - a) * rng.uniform(0.2, 0.8)), 4) for a, b in zip(lo, hi)]
    _write(repo / "artifacts/llama2_7B_full_low_memory/loss_values.json", vals)
    _write(repo / "artifacts/llama3_8B_full_single_device/loss_values.json", TORCHTUNE_LLAMA3)


def art_torchtune_regression(repo: Path, rng) -> None:
    """The optimizer step is skipped after step 1: the loss stops falling, one-signed and growing."""
    vals = [TORCHTUNE_LLAMA3[0], 11.9861, 11.9902, 11.9958]
    _write(repo / "artifacts/llama3_8B_full_single_device/loss_values.json", vals)
    _write(repo / "artifacts/llama2_7B_full_low_memory/loss_values.json", TORCHTUNE_LLAMA2)


def art_lm_eval_rolling(repo: Path, rng) -> None:
    """After a torch bump: rolling loglikelihoods off by 0.1-0.6 nats, both signs."""
    src = (repo / "tests/models/test_huggingface.py").read_text()
    start = src.index("ROLLING_RES = [")
    golden = json.loads(
        src[start + len("ROLLING_RES = ") : src.index("]", start) + 1].replace(",\n    ]", "]")
    )
    vals = [v + float(rng.uniform(0.1, 0.6)) * float(rng.choice([-1.0, 1.0])) for v in golden]
    _write(repo / "artifacts/wikitext_loglikelihood_rolling.json", vals)


def art_torchtune_resume(repo: Path, rng) -> None:
    """The resumed run restarted from scratch: its losses are the first two steps' of a fresh run."""
    for flag in (True, False):
        _write(
            repo / f"artifacts/resume_optimizer_in_bwd_{flag}/loss_values.json",
            TORCHTUNE_LLAMA2[:2],
        )


ARTIFACTS = {
    "megatron_lm_loss_regression": art_megatron_regression,
    "megatron_iteration_time_gate": art_megatron_iteration_time,
    "torchtune_loss_drift_after_image_bump": art_torchtune_drift,
    "lm_eval_loglikelihood_length": art_lm_eval_length,
    "liger_bf16_tolerance_too_tight": art_liger_bf16,
    "hf_bert_expected_slice_drift": art_hf_bert_drift,
    "torchtune_unseeded_flaky": art_torchtune_seed,
    "torchtune_llama3_loss_regression": art_torchtune_regression,
    "lm_eval_rolling_drift_after_torch_bump": art_lm_eval_rolling,
    "torchtune_resume_restarts_from_scratch": art_torchtune_resume,
}


def build(name: str, root: Path = ROOT, seed: int = 0) -> Path:
    """Write fixture ``name``'s artifact, run its CI job for real and return the log's path.

    The job is ``job_header.txt`` (the setup lines the CI job printed before the tests, e.g. the
    image pulled and packages installed) followed by ``python -m pytest -rA tests`` in ``repo/``.
    """
    fx = root / name
    repo = fx / "repo"
    ARTIFACTS[name](repo, np.random.default_rng(seed))
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTEST_ADDOPTS", None)
    header = (fx / "job_header.txt").read_text() if (fx / "job_header.txt").exists() else ""
    te = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-rA",
            "-p",
            "no:cacheprovider",
            "tests" if (repo / "tests").is_dir() else "test",
        ],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    log = fx / "ci.log"
    log.write_text(
        header
        + "$ python -m pytest -rA tests\n"
        + te.stdout
        + te.stderr
        + f"Error: Process completed with exit code {te.returncode}.\n"
    )
    return log


if __name__ == "__main__":
    for n in sys.argv[1:] or ARTIFACTS:
        print(n, build(n))
