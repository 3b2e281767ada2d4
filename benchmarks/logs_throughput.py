"""Throughput and peak memory of ``mlaudit logs`` on a mixed-format console log of any size.

Generates the log (Hugging Face dicts after tqdm bars, tqdm bars redrawn with carriage
returns, Megatron iterations, fairseq train_inner, DeepSpeed steps, ImageNet-example lines,
litgpt iterations, Keras epochs, generic key=value lines, plain INFO chatter, warnings, a
few fp16 overflow messages, a caught-and-logged traceback every 250,000 lines and the final
CUDA OOM traceback), then measures, each in a fresh child process:

- parse: ``mlaudit_core.formats.consolelog.load_logs`` (read + parse into a RunData), with structure inference
  (the reader as shipped, :mod:`mlaudit_core.formats.consolelog.infer`) and, beside it, the
  catalogue reader alone (``infer=False``: the catalogue and the generic ``key=value`` reader);
  the inferring reader must keep at least half the catalogue reader's lines per CPU-second;
- cli: ``mlaudit logs FILE --format json`` end to end (parse, all detectors, verdict, render);
- reference: ``grep -c loss FILE`` on the same file.

Prints lines per second, wall and CPU seconds (the machine is shared: CPU time is the
figure that does not depend on the other processes; the load average is printed), peak
resident memory (MiB, from the child's ``ru_maxrss``, and over the interpreter-and-imports
baseline for the parse), and the ratio to ``grep -c`` (CPU time to CPU time); then whether
the end-to-end peak is within the 1 GiB bound of issue 16 (a 10 M-line log), and whether the
final OOM traceback was found at its line. Usage::

    python benchmarks/logs_throughput.py [--lines 1000000] [--keep PATH] [--no-cli | --no-parse]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PY = sys.executable


def generate(path: Path, n_lines: int, seed: int = 0) -> int:
    """Write ``n_lines`` lines of mixed-format training output to ``path``; returns its size in bytes."""
    rnd = random.Random(seed)
    loss = 9.0
    out = []
    kinds = [
        "hf",
        "megatron",
        "fairseq",
        "deepspeed",
        "imagenet",
        "litgpt",
        "keras",
        "generic",
        "chatter",
        "chatter",
        "chatter",
    ]
    for i in range(n_lines):
        step = i + 1
        loss = max(0.5, loss * 0.99999 + rnd.uniform(-0.01, 0.01))
        k = kinds[i % len(kinds)]
        ts = f"2024-05-01 10:{(i // 60000) % 60:02d}:{(i // 1000) % 60:02d},{i % 1000:03d}"
        if i % 250_000 == 125_000:  # a caught exception logged with its traceback mid-run
            out += [
                f"{ts} - WARNING - trainer - checkpoint upload failed, retrying",
                "Traceback (most recent call last):",
                '  File "train.py", line 212, in upload_checkpoint',
                "    client.put(path)",
                "ConnectionResetError: [Errno 104] Connection reset by peer",
            ]
            line = f"{ts} - INFO - trainer - retry 1 succeeded"
        elif i % 997 == 3:
            line = (
                f"{ts} - WARNING - torch.utils.data - UserWarning: This DataLoader will create 8 worker "
                "processes in total. Our suggested max number of worker in current system is 2"
            )
        elif (
            i % 13 == 7
        ):  # a tqdm bar redrawn on one line with carriage returns (stdout captured to a file)
            line = "\r".join(
                f"Epoch 0:  {j}%|#         | {step * 10 + j}/20000000 [00:{j:02d}<10:00, 3.1{j}it/s, "
                f"loss={loss:.3f}]"
                for j in range(5)
            )
        elif i % 100_003 == 5:
            line = (
                f" 45%|####5     | {step}/2000000 [01:00<01:10, 7.10it/s]Gradient overflow.  Skipping step, "
                f"loss scaler 0 reducing loss scale to {2 ** (16 - i // 100_003)}.0"
            )
        elif k == "hf":
            line = (
                f" 45%|####5     | {step}/2000000 [01:00<01:10,  7.{i % 10}0it/s]{{'loss': {loss:.4f}, "
                f"'grad_norm': {1 + rnd.random():.3f}, 'learning_rate': 2e-05, 'epoch': {step / 20000:.4f}}}"
            )
        elif k == "megatron":
            line = (
                f" [{ts}] iteration {step:8d}/ 2000000 | consumed samples: {step * 128:12d} | elapsed time per "
                f"iteration (ms): {1500 + rnd.random() * 30:.1f} | learning rate: 1.500E-04 | global batch size: "
                f"  128 | lm loss: {loss:.6E} | loss scale: 65536.0 | grad norm: {1 + rnd.random():.3f} | "
                "number of skipped iterations:   0 | number of nan iterations:   0 |"
            )
        elif k == "fairseq":
            line = (
                f"{ts} | INFO | train_inner | epoch 001:  {step % 1000:5d} / 1000 loss={loss:.3f}, "
                f"nll_loss={loss * 0.9:.3f}, ppl=12.3, wps=12345.6, ups=2.31, wpb=4096, bsz=128, "
                f"num_updates={step}, lr=5e-05, gnorm={1 + rnd.random():.3f}, loss_scale=128, wall=50"
            )
        elif k == "deepspeed":
            line = (
                f"[{ts}] [INFO] [logging.py:96:log_dist] [Rank 0] step={step}, skipped=0, lr=[1.5e-05], "
                "mom=[(0.9, 0.999)]"
            )
        elif k == "imagenet":
            line = (
                f"Epoch: [{step // 5005}][{step % 5005:5d}/5005]\tTime  0.351 ( 0.812)\tData  0.002 ( 0.411)\t"
                f"Loss {loss:.4e} ({loss:.4e})\tAcc@1  12.50 ( 11.10)\tAcc@5  40.62 ( 38.00)"
            )
        elif k == "litgpt":
            line = (
                f"Epoch 1 | iter {step} step {step // 4} | loss train: {loss:.3f}, val: n/a | iter time: "
                f"{300 + rnd.random() * 10:.2f} ms"
            )
        elif k == "keras":
            line = (
                f"938/938 [==============================] - 5s 5ms/step - loss: {loss:.4f} - accuracy: 0.9123 "
                f"- val_loss: {loss * 1.1:.4f} - val_accuracy: 0.9012"
            )
        elif k == "generic":
            line = f"{ts} - INFO - __main__ - step={step} loss={loss:.4f} lr=1e-4 grad_norm={rnd.random():.3f}"
        else:
            line = f"{ts} - INFO - data.loader - prefetching shard {i % 977} of 977 from /data/shards (cache hit)"
        out.append(line)
        if len(out) >= 50_000:
            _flush(path, out)
    out += [
        "Traceback (most recent call last):",
        '  File "train.py", line 80, in training_step',
        (
            "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 39.59 GiB total capacity; "
            "36.10 GiB already allocated; 1.21 GiB free; 37.20 GiB reserved in total by PyTorch)"
        ),
    ]
    _flush(path, out)
    return path.stat().st_size


def generate_hf(path: Path, n_lines: int, seed: int = 0) -> int:
    """A Hugging Face Trainer job's captured stdout: ``n_lines`` lines, most of them the tqdm bar
    redrawn with carriage returns (10 updates a line, one line per 10 steps, as a file captures
    it), a loss dict every 50 steps, an eval dict every 5,000, INFO/WARNING chatter, a caught
    traceback every 250,000 lines and the final CUDA OOM traceback. Returns the size in bytes."""
    rnd = random.Random(seed)
    loss, out, step = 9.0, [], 0
    total = n_lines * 10
    for i in range(n_lines):
        ts = f"[INFO|2024-05-01 10:{(i // 60000) % 60:02d}:{(i // 1000) % 60:02d},{i % 1000:03d}]"
        if i % 250_000 == 125_000:
            out += [
                f"{ts} trainer.py:2310 >> push_to_hub failed, will retry",
                "Traceback (most recent call last):",
                '  File "run_clm.py", line 601, in on_save',
                "    api.upload_folder(folder)",
                "requests.exceptions.ReadTimeout: HTTPSConnectionPool(host='huggingface.co', port=443)",
            ]
            line = f"{ts} trainer.py:2315 >> retry succeeded"
        elif i % 500 == 250:
            line = f"{ts} trainer.py:1912 >> Saving model checkpoint to out/checkpoint-{step}"
        elif i % 997 == 3:
            line = (
                "/usr/lib/python3/dist-packages/torch/utils/checkpoint.py:31: UserWarning: None of the inputs "
                "have requires_grad=True. Gradients will be None"
            )
        elif i % 500 == 0 and step:
            line = (
                f"{{'eval_loss': {loss * 1.05:.4f}, 'eval_runtime': 12.3, 'eval_samples_per_second': 81.2, "
                f"'eval_steps_per_second': 10.2, 'epoch': {step / 100000:.2f}}}"
            )
        elif i % 5 == 1:
            loss = max(0.5, loss * 0.9999 + rnd.uniform(-0.01, 0.01))
            line = (
                f"{{'loss': {loss:.4f}, 'grad_norm': {1 + rnd.random():.3f}, 'learning_rate': "
                f"{2e-5 * (1 - step / total):.3e}, 'epoch': {step / 100000:.2f}}}"
            )
        else:
            parts = []
            for _ in range(10):
                step += 1
                parts.append(
                    f" {100 * step // total:3d}%|###       | {step}/{total} [1:02:03<10:00:00, "
                    f"{3 + rnd.random():.2f}it/s]"
                )
            line = "\r".join(parts)
        out.append(line)
        if len(out) >= 50_000:
            _flush(path, out)
    out += [
        "Traceback (most recent call last):",
        '  File "train.py", line 80, in training_step',
        (
            "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 39.59 GiB total capacity; "
            "36.10 GiB already allocated; 1.21 GiB free; 37.20 GiB reserved in total by PyTorch)"
        ),
    ]
    _flush(path, out)
    return path.stat().st_size


def _flush(path: Path, lines: list[str]) -> None:
    with open(path, "a", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    lines.clear()


_CHILD = r"""
import resource, sys, time
from mlaudit_core.formats.consolelog import load_logs
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t, c = time.perf_counter(), time.process_time()
run = load_logs([sys.argv[1]], infer=sys.argv[2] == "infer")
dt, dc = time.perf_counter() - t, time.process_time() - c
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
last = run.console[-1]
oom = int(last.text.startswith("RuntimeError: CUDA out of memory"))
print(dt, dc, base, peak, len(run.metrics), len(run.metrics.keys), len(run.console), last.lineno, oom)
"""


def measure_parse(path: Path, mode: str = "infer"):
    """(wall s, CPU s, baseline MiB, peak MiB, points, series, console lines, last line number,
    whether the last kept line is the OOM) of load_logs in a child; ``mode`` ``infer`` (structure
    inference on, as shipped) or ``catalogue`` (``infer=False``)."""
    out = subprocess.run(
        [PY, "-c", _CHILD, str(path), mode], capture_output=True, text=True, check=True
    )
    dt, dc, base, peak, pts, keys, console, lastno, oom = out.stdout.split()
    return (
        float(dt),
        float(dc),
        int(base) / 1024,
        int(peak) / 1024,
        int(pts),
        int(keys),
        int(console),
        int(lastno),
        oom == "1",
    )


def measure_cmd(cmd: list[str], repeat: int = 1) -> tuple[float, float, float]:
    """Median wall seconds, median CPU seconds and peak RSS (MiB) of a child command, from its own rusage."""
    walls, cpus, peak = [], [], 0.0
    for _ in range(repeat):
        t = time.perf_counter()
        # output to a pipe, not /dev/null: GNU grep stops at the first match when it writes to /dev/null
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        proc.stdout.read()
        _, _, ru = os.wait4(proc.pid, 0)
        proc.stdout.close()
        walls.append(time.perf_counter() - t)
        cpus.append(ru.ru_utime + ru.ru_stime)
        peak = max(peak, ru.ru_maxrss / 1024)
    return sorted(walls)[len(walls) // 2], sorted(cpus)[len(cpus) // 2], peak


def _cli(path: Path, n: int, g_cpu: float) -> None:
    """Measure ``mlaudit logs PATH --format json`` end to end and print its figures."""
    mlaudit = shutil.which("mlaudit", path=os.path.dirname(PY)) or "mlaudit"
    c_dt, c_cpu, c_peak = measure_cmd([mlaudit, "logs", str(path), "--format", "json"])
    print(
        f"mlaudit logs (CLI):  wall {c_dt:7.2f} s  CPU {c_cpu:7.2f} s  {n / c_cpu:12,.0f} lines/CPU-s "
        f"({n / c_dt:,.0f} lines/wall-s)  peak RSS {c_peak:,.0f} MiB  grep ratio {c_cpu / g_cpu:,.0f}x  "
        "(parse + all detectors + verdict + JSON)"
    )
    print(f"end-to-end peak within 1 GiB: {c_peak <= 1024} ({c_peak:,.0f} MiB)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--keep", type=Path, help="write the generated log here and keep it")
    ap.add_argument(
        "--mix",
        choices=("formats", "hf"),
        default="formats",
        help="formats: every catalog format in turn (the costly mix); hf: a Hugging Face Trainer job's "
        "stdout (tqdm bars with carriage returns, loss and eval dicts, chatter, tracebacks)",
    )
    ap.add_argument(
        "--reuse", action="store_true", help="with --keep: measure the kept log if it exists"
    )
    ap.add_argument(
        "--no-cli",
        action="store_true",
        help="measure the parse only, not `mlaudit logs` end to end",
    )
    ap.add_argument(
        "--no-parse",
        action="store_true",
        help="measure `mlaudit logs` end to end only, not the parse in a child of its own "
        "(halves the time of a 10 M-line run; the end-to-end peak is the issue-16 figure)",
    )
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="mlaudit-logs-bench-"))
    path = args.keep or tmp / "mixed.log"
    reuse = args.reuse and args.keep and path.exists()
    if path.exists() and not reuse:
        path.unlink()
    try:
        t = time.perf_counter()
        size = (
            path.stat().st_size
            if reuse
            else (generate_hf if args.mix == "hf" else generate)(path, args.lines)
        )
        with open(path, "rb") as f:
            n = sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 24), b""))
        print(
            f"{'reused' if reuse else 'generated'} {n:,} lines, {size / 2**20:.1f} MiB in "
            f"{time.perf_counter() - t:.1f} s: {path}"
        )
        print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        grep = shutil.which("grep")
        g_dt, g_cpu, _ = measure_cmd([grep, "-c", "loss", str(path)], repeat=5)
        g_cpu = max(g_cpu, 1e-3)
        print(
            f"grep -c loss:        wall {g_dt:7.2f} s  CPU {g_cpu:7.2f} s  {n / g_cpu:12,.0f} lines/CPU-s"
        )
        if args.no_parse and not args.no_cli:
            return _cli(path, n, g_cpu)
        k_dt, k_cpu, _, k_peak, k_pts, k_keys, _, _, _ = measure_parse(path, "catalogue")
        print(
            f"catalogue reader:    wall {k_dt:7.2f} s  CPU {k_cpu:7.2f} s  {n / k_cpu:12,.0f} lines/CPU-s "
            f"({n / k_dt:,.0f} lines/wall-s)  peak RSS {k_peak:,.0f} MiB  {k_pts:,} metric points in {k_keys} "
            "series (load_logs(infer=False))"
        )
        p_dt, p_cpu, base, peak, pts, keys, console, lastno, oom = measure_parse(path)
        print(
            f"parse (load_logs):   wall {p_dt:7.2f} s  CPU {p_cpu:7.2f} s  {n / p_cpu:12,.0f} lines/CPU-s "
            f"({n / p_dt:,.0f} lines/wall-s)  peak RSS {peak:,.0f} MiB ({peak - base:,.0f} MiB over the "
            f"{base:,.0f} MiB interpreter+imports)  grep ratio {p_cpu / g_cpu:,.0f}x  (with structure inference)"
        )
        print(
            f"                     {pts:,} metric points in {keys} series; {console:,} console lines kept; "
            f"last kept line {lastno:,} is the final OOM: {oom}"
        )
        ratio = k_cpu / p_cpu
        print(f"inferring / catalogue reader speed: {ratio:.2f} (floor 0.5): {ratio >= 0.5}")
        if args.no_cli:
            print(f"parse peak within 1 GiB: {peak <= 1024}")
            return
        _cli(path, n, g_cpu)
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
