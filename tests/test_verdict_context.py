"""The verdict reads console-log signatures in context (the rules added with the console-log source).

Each test writes a small realistic log, runs the real pipeline (load_logs -> audit) and
checks the outcome, the cause, the primary finding and the first next action.
"""

from __future__ import annotations

import math

import pytest

from mlaudit_core import audit
from mlaudit_core.formats.consolelog import load_logs


def audit_text(tmp_path, text: str, name: str = "train.log"):
    p = tmp_path / name
    p.write_text(text)
    return audit(load_logs([p]))


def codes(report, min_sev="warning"):
    order = ["info", "warning", "error", "critical"]
    return {
        f.code for f in report.findings if order.index(f.severity.value) >= order.index(min_sev)
    }


def hf_lines(losses, start=10, every=10, total=2000):
    out = []
    for i, loss in enumerate(losses):
        step = start + i * every
        out.append(
            f"{100 * step // total:3d}%|#         | {step}/{total} [00:10<00:10,  7.50it/s]"
            f"{{'loss': {loss:.4f}, 'learning_rate': 2e-05, 'epoch': {step / total:.4f}}}"
        )
    return out


def test_few_overflow_skips_with_a_healthy_scale_are_benign(tmp_path):
    losses = [2.0 * math.exp(-i / 60) + 0.5 for i in range(150)]
    lines = hf_lines(
        losses, total=1500
    )  # the log reaches the end of its progress bar (a shorter one is a stop)
    # DeepSpeed's start: the scale comes down from 2^32 over a dozen skipped steps, then settles
    skips = [
        f"[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: {2 ** (32 - k)}, reducing to "
        f"{2 ** (31 - k)}"
        for k in range(12)
    ]
    r = audit_text(tmp_path, "\n".join(lines[:1] + skips + lines[1:]))
    assert (r.verdict.outcome.value, r.verdict.cause.value) == ("succeeded", "healthy")
    rt = next(f for f in r.findings if f.code == "RT006")
    assert rt.severity.value == "info" and rt.facts["benign"] and rt.facts["n_skipped"] == 12


def test_many_consecutive_skips_with_a_collapsing_scale_are_a_failure(tmp_path):
    lines = hf_lines([2.3 - 0.01 * i for i in range(30)], every=1, total=400)
    for k in range(40):  # every step from here on overflows and the scale halves towards zero
        step = 40 + k
        lines.append(
            f"{step * 100 // 400:3d}%|#   | {step}/400 [00:10<00:10,  7.50it/s]Gradient overflow.  "
            f"Skipping step, loss scaler 0 reducing loss scale to {65536 / 2 ** (k + 1)}"
        )
    r = audit_text(tmp_path, "\n".join(lines))
    v = r.verdict
    assert (v.outcome.value, v.cause.value) == ("diverged", "data_config")
    assert v.summary.startswith("fp16 loss scaling failed: 40 steps skipped")
    rt = next(f for f in r.findings if f.code == "RT006")
    assert rt.severity.value == "error" and rt.facts["longest_consecutive"] == 40
    assert (
        "the loss scale collapsed" in rt.message and "40 steps were skipped in a row" in rt.message
    )


def test_a_spike_that_recovers_is_not_a_divergence(tmp_path):
    losses = [2.0 * math.exp(-i / 80) + 0.6 + 0.01 * ((i * 7) % 5) for i in range(300)]
    for i in range(150, 154):
        losses[i] = 4.5  # a bad batch; back to normal after four logging steps
    r = audit_text(
        tmp_path, "\n".join(f"step={i} loss={x:.4f} lr=0.001" for i, x in enumerate(losses))
    )
    assert r.verdict.outcome.value not in ("diverged", "unstable"), r.verdict.summary
    assert not codes(r) & {"OP001", "LI001", "OP004"}
    spike = next(f for f in r.findings if f.code == "OP002")
    assert spike.severity.value == "info" and "all recovered" in spike.message


def _oom(path_frames: str) -> str:
    return (
        "Traceback (most recent call last):\n"
        + path_frames
        + "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 39.59 GiB total capacity; "
        "36.10 GiB already allocated; 1.21 GiB free; 37.20 GiB reserved in total by PyTorch)\n"
    )


def test_oom_in_training_step_is_a_batch_size_problem_not_evaluation(tmp_path):
    r = audit_text(
        tmp_path,
        _oom(
            '  File "train.py", line 90, in <module>\n    fit()\n'
            '  File "train.py", line 60, in training_step\n    loss.backward()\n'
        ),
    )
    assert (r.verdict.outcome.value, r.verdict.cause.value) == ("crashed", "infra_runtime")
    assert "in the training code path" in r.verdict.summary
    assert r.next_actions[0].action.startswith("Halve the micro-batch")


def test_oom_right_after_a_hardware_error_is_a_hardware_problem(tmp_path):
    text = (
        "step=100 loss=2.1\n"
        "[Mon Jan  8 10:00:01 2024] NVRM: Xid (PCI:0000:3b:00): 48, pid=4242, DBE (double bit error) ECC error\n"
        + _oom('  File "train.py", line 60, in training_step\n    loss.backward()\n')
    )
    r = audit_text(tmp_path, text)
    v = r.verdict
    assert (v.outcome.value, v.cause.value) == ("crashed", "infra_runtime")
    assert v.summary.startswith(
        "The run crashed on an accelerator hardware error (Xid 48, double-bit ECC error) "
        "at train.log:2"
    )
    assert "followed by cuda-oom at line 6: those are symptoms of the hardware fault" in v.summary
    assert r.next_actions[0].action.startswith("Drain the node")
    assert not any("micro-batch" in a.action for a in r.next_actions)


def test_a_preempted_and_requeued_job_is_not_a_crash(tmp_path):
    text = "\n".join(
        [
            *[f"step={i} loss={2.0 - i / 100:.3f}" for i in range(1, 60)],
            "slurmstepd: error: *** STEP 4242.0 ON gpu-node-7 CANCELLED AT 2024-03-01T12:00:00 DUE TO PREEMPTION ***",
            "Received SIGTERM: 15",
            "RuntimeError: DataLoader worker (pid 2816) is killed by signal: Terminated.",
            "Traceback (most recent call last):",
            '  File "train.py", line 80, in train_one_epoch',
            "KeyboardInterrupt",
            "requeing job 4242...",
        ]
    )
    r = audit_text(tmp_path, text)
    assert r.verdict.outcome.value == "running" and r.verdict.cause.value == "infra_runtime"
    assert "preempted and requeued, not crashed" in r.verdict.summary


def test_preempted_without_requeue_is_a_stop_by_the_scheduler(tmp_path):
    r = audit_text(tmp_path, "step=1 loss=2.0\nstep=2 loss=1.9\nReceived SIGTERM: 15\n")
    assert r.verdict.outcome.value == "crashed" and "not requeued" in r.verdict.summary


def test_disk_full_while_saving_a_checkpoint(tmp_path):
    text = (
        "step=500 loss=1.2\nTraceback (most recent call last):\n"
        '  File "train.py", line 120, in <module>\n    save_checkpoint(model, step)\n'
        '  File "train.py", line 40, in save_checkpoint\n    torch.save(state, path)\n'
        "OSError: [Errno 28] No space left on device: '/ckpt/step_500.pt'\n"
    )
    r = audit_text(tmp_path, text)
    assert (r.verdict.outcome.value, r.verdict.cause.value) == ("crashed", "infra_runtime")
    assert "the disk filled up" in r.verdict.summary and "/ckpt/step_500.pt" in r.verdict.summary
    assert r.next_actions[0].action.startswith("Free or enlarge the output volume")


def test_wall_time_limit(tmp_path):
    text = (
        "step=1 loss=2.0\nstep=2 loss=1.9\nslurmstepd: error: *** JOB 4242 ON gpu-node-7 CANCELLED AT "
        "2024-03-01T12:00:00 DUE TO TIME LIMIT ***\n"
    )
    r = audit_text(tmp_path, text)
    assert (r.verdict.outcome.value, r.verdict.cause.value) == ("crashed", "infra_runtime")
    assert "wall-time limit" in r.verdict.summary


def test_nan_message_without_loss_history_under_mixed_precision_names_the_precision_first(
    tmp_path,
):
    """Reduced precision in use and a NaN message with no loss history: the precision is the first
    suspect (data_config, as for an abrupt onset with reduced precision below), and the summary says
    the onset cannot be read (reports b10-08: fp16 autocast NaN gone with bf16)."""
    text = "Epoch: [3]  [ 100/7393]  eta: 1:02:03\nLoss is nan, stopping training\n"
    r = audit_text(tmp_path, "Using native Torch AMP. Training in mixed precision.\n" + text)
    assert (r.verdict.outcome.value, r.verdict.cause.value) == ("diverged", "data_config")
    assert "onset cannot be read" in r.verdict.summary
    # with no reduced precision in use the learning rate is the first suspect (V07, like V03/V04)
    r = audit_text(tmp_path, text)
    assert (r.verdict.outcome.value, r.verdict.cause.value) == ("diverged", "model_convergence")


@pytest.mark.parametrize("growth,fp16", [(True, False), (False, True), (False, False)])
def test_nonfinite_onset_gradual_vs_abrupt(tmp_path, growth, fp16):
    vals = [2.0 - i * 0.01 for i in range(60)]
    if growth:
        vals += [
            1.4 + 0.3 * i for i in range(20)
        ]  # the loss climbs for 20 steps before overflowing
    lines = ["Using native Torch AMP. Training in mixed precision."] if fp16 else []
    lines += [f"step={i} loss={x:.4f}" for i, x in enumerate(vals)]
    lines += [f"step={len(vals) + i} loss=nan" for i in range(5)]
    r = audit_text(tmp_path, "\n".join(lines))
    assert r.verdict.outcome.value == "diverged"
    # abrupt: numerics with reduced precision in use, the learning rate first without (V03/V04)
    assert r.verdict.cause.value == ("data_config" if fp16 else "model_convergence")


def test_a_constant_loss_scale_of_one_is_not_an_fp16_failure(tmp_path):
    # Megatron prints "loss scale: 1.0" on every line of a bf16 (or fp32) run: there is no loss scaling
    lines = [
        f" iteration {i:8d}/  250000 | consumed samples: {i * 1024:12d} | elapsed time per iteration (ms): "
        f"86545.2 | learning rate: 9.150E-06 | global batch size:  1024 | lm loss: {3.0 - i / 400:.6E} | "
        "loss scale: 1.0 | grad norm: 0.231 | number of skipped iterations:   0 | number of nan iterations:   0 |"
        for i in range(100, 160)
    ]
    r = audit_text(tmp_path, "\n".join(lines))
    assert "fp16" not in r.verdict.summary
    assert r.verdict.outcome.value != "diverged"
    assert not [f for f in r.findings if f.code == "RT006"]


def test_the_phase_after_early_learning_is_named_for_what_the_loss_does(tmp_path):
    """A loss that falls and stays is a 'stable region'; one that falls and climbs back above
    half of its drop is a 'late region (loss rising)', never 'stable'."""
    fall = [2.0 * math.exp(-i / 20) + 0.3 for i in range(100)]
    names = {}
    for shape, tail in (("flat", [0.3] * 100), ("rising", [0.3 + 0.02 * i for i in range(100)])):
        text = "\n".join(f"step={i} loss={x:.4f} lr=0.001" for i, x in enumerate(fall + tail))
        r = audit_text(tmp_path, text, f"{shape}.log")
        names[shape] = [p.name for p in r.timeline]
    assert "stable region" in names["flat"] and "late region (loss rising)" not in names["flat"]
    assert "late region (loss rising)" in names["rising"] and "stable region" not in names["rising"]


@pytest.mark.parametrize(
    "status, outcome", [("finished", "slow"), ("failed", "crashed"), ("killed", "crashed")]
)
def test_a_run_that_ended_failed_is_crashed_not_slow(status, outcome):
    """Throughput falls through the run to 40% (SY001, progressive) in both; the run the tracker saw
    fail is called crashed (the slowdown stays a finding), the finished one slow. The atexit hook
    sets the failed status."""
    from detectors.test_detector_cases import make_run

    from mlaudit_core import audit as run_audit

    run = make_run(
        {
            "name": f"slow-{status}",
            "status": status,
            "metrics": {
                "perf/throughput": {"linear": [1000, 400], "n": 200, "noise": 0.02},
                "train/loss": {"decay": [2.0, 0.3], "n": 200},
            },
        }
    )
    r = run_audit(run)
    assert r.verdict.outcome.value == outcome, r.verdict.summary
    assert "SY001" in codes(r)
