"""The signature catalogue against the frameworks' own messages (mlaudit_core.signature_sources).

Every row: its example is an instance of its format and its signature matches it. Rows of packages
that are test dependencies (torch, lightning, transformers, keras): the format's literal text is in
the installed file. Rows marked ``produced``: the package itself produces the message here (a
torchrun job whose worker gets SIGKILL, a torchrun agent sent SIGTERM, a DataLoader worker that dies,
Lightning's SIGTERM / KeyboardInterrupt / non-finite early-stopping handlers, Keras' TerminateOnNaN,
anomaly mode, ``torch.save`` to a full device) and the catalogue reads what it printed. The two
torchrun jobs are also audited end to end: a killed worker and a terminated job are infrastructure
events, never a code bug.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shlex
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import free_port

from mlaudit_core.rundata import ConsoleLine
from mlaudit_core.signature_sources import SOURCES, format_in_file, source_file, template_regex
from mlaudit_core.signatures import CATALOG, MEANINGS, match_line, scan

torch = pytest.importorskip("torch")

PY = sys.executable
BIN = Path(PY).parent
_INSTALLED = ("torch", "lightning", "transformers", "keras", "accelerate")


def _ids(src):
    return f"{src.signature}:{src.package}:{src.template[:30]}"


@pytest.mark.parametrize("src", SOURCES, ids=_ids)
def test_every_row_is_an_instance_of_its_format_and_its_signature_matches(src):
    assert template_regex(src.template).search(src.example), (src.template, src.example)
    got = {sig.id: figs for sig, figs in match_line(src.example)}
    assert src.signature in got, got
    for k, v in src.figures.items():
        assert got[src.signature].get(k) == v, (k, got[src.signature])


def test_every_row_names_a_catalogue_entry_and_every_category_has_a_meaning():
    ids = {s.id for s in CATALOG}
    assert {s.signature for s in SOURCES} <= ids
    assert {s.category for s in CATALOG} <= set(MEANINGS)
    assert {s.check for s in SOURCES} <= {"produced", "installed", "source", "upstream"}


def _site(package: str) -> Path:
    spec = importlib.util.find_spec(package)
    assert spec and spec.origin, package
    return Path(spec.origin).parents[1]


@pytest.mark.parametrize(
    "src",
    [s for s in SOURCES if s.check in ("installed", "produced") and s.package in _INSTALLED],
    ids=_ids,
)
def test_the_installed_package_writes_this_format(src):
    path = source_file(src, _site(src.package))
    assert path.is_file(), path
    missing = format_in_file(src, path)
    assert not missing, (
        f"{src.package} (installed) no longer writes {missing} in {path}; the row read {src.version}"
    )


def _lines(text: str) -> list[ConsoleLine]:
    return [ConsoleLine("log", i, t) for i, t in enumerate(text.splitlines(), 1)]


def _hits(text: str) -> dict[str, list]:
    out: dict[str, list] = {}
    for h in scan(_lines(text))[0]:
        out.setdefault(h.signature.id, []).append(h)
    return out


def _audit(log: Path) -> dict:
    r = subprocess.run(
        [str(BIN / "mlaudit"), "logs", str(log), "-f", "json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    return json.loads(r.stdout)["verdict"]


_TRAIN = """
import os, signal, sys, time
import torch, torch.distributed as dist
dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(0)
w = torch.zeros(4, requires_grad=True)
x = torch.randn(64, 4)
y = x @ torch.tensor([1.0, -2.0, 0.5, 3.0])
opt = torch.optim.SGD([w], lr=0.05)
for step in range(1, 400):
    loss = ((x @ w - y) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    dist.all_reduce(w.grad)
    w.grad /= dist.get_world_size()
    opt.step()
    if rank == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)
    if step == int(sys.argv[1]) and rank == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(0.05)
"""


def _torchrun(tmp_path: Path, kill_at: int, port: int, term_after: float | None = None) -> str:
    script = tmp_path / "train.py"
    script.write_text(_TRAIN)
    log = tmp_path / "train.log"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    with log.open("w") as out:  # captured as users capture it: torchrun ... > log 2>&1
        p = subprocess.Popen(
            [
                str(BIN / "torchrun"),
                "--nproc_per_node",
                "2",
                "--master_port",
                str(port),
                str(script),
                str(kill_at),
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=tmp_path,
        )
        if term_after is not None:
            deadline = time.time() + 120
            while "step 20 " not in log.read_text() and time.time() < deadline and p.poll() is None:
                time.sleep(0.2)
            time.sleep(term_after)
            p.send_signal(signal.SIGTERM)
        p.wait(timeout=180)
    return log.read_text()


def test_torchrun_worker_killed_with_sigkill_is_an_infra_crash_not_a_code_bug(tmp_path):
    text = _torchrun(tmp_path, kill_at=30, port=free_port())
    for tpl in (
        "failed (exitcode: %s) local_rank: %s (pid: %s) of binary: %s",
        "Signal {} ({}) received by PID {}",
        "Sending process %s closing signal %s",
    ):
        assert template_regex(tpl).search(text), tpl
    hits = _hits(text)
    assert "sigkill" in hits and "elastic-teardown" in hits
    # the sibling torchrun stopped (SIGTERM, exit code -15 under 'Failures:') is teardown, not a termination
    assert "sigterm" not in hits, [h.line.text for h in hits["sigterm"]]
    assert (
        any(h.figures.get("listed_as") for h in hits.get("elastic-sibling-stopped", []))
        or "exitcode  : -15" not in text
    )
    v = _audit(tmp_path / "train.log")
    assert (v["outcome"], v["cause"]) == ("crashed", "infra_runtime"), v


def test_torchrun_worker_error_is_reported_over_the_peers_connection_loss(tmp_path):
    """Rank 1 raises ValueError; rank 0's all_reduce then fails with gloo's 'Connection closed by
    peer ... caused by a remote worker crashing': the verdict names rank 1's error (a code bug)."""
    script = tmp_path / "train.py"
    script.write_text(
        _TRAIN.replace(
            "os.kill(os.getpid(), signal.SIGKILL)", 'raise ValueError(f"bad label {step}")'
        )
    )
    log = tmp_path / "train.log"
    with log.open("w") as out:
        subprocess.run(
            [
                str(BIN / "torchrun"),
                "--nproc_per_node",
                "2",
                "--master_port",
                str(free_port()),
                str(script),
                "30",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "OMP_NUM_THREADS": "1"},
            cwd=tmp_path,
            timeout=180,
        )
    r = subprocess.run(
        [str(BIN / "mlaudit"), "logs", str(log), "-f", "json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    report = json.loads(r.stdout)
    v = report["verdict"]
    assert (v["outcome"], v["cause"]) == ("crashed", "correctness_bug"), v
    assert "ValueError: bad label 30" in v["summary"], v["summary"]


def test_torchrun_agent_sent_sigterm_is_a_termination_not_a_code_bug(tmp_path):
    text = _torchrun(tmp_path, kill_at=-1, port=free_port(), term_after=0.5)
    assert template_regex("Received %s death signal, shutting down workers").search(text)
    assert template_regex("Process {} got signal: {}").search(text)
    hits = _hits(text)
    assert "sigterm" in hits
    v = _audit(tmp_path / "train.log")
    assert v["cause"] != "correctness_bug" and (v["outcome"], v["cause"]) == (
        "crashed",
        "infra_runtime",
    ), v


def test_accelerate_launch_of_a_killed_script_is_an_infra_crash(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(
        "import os, signal\nfrom accelerate import Accelerator\nAccelerator(cpu=True)\n"
        "for step in range(1, 6):\n    print(f'step {step} loss {1.0 / step:.4f}', flush=True)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    log = tmp_path / "train.log"
    with log.open("w") as out:
        subprocess.run(
            [str(BIN / "accelerate"), "launch", "--cpu", "--num_processes", "1", str(script)],
            stdout=out,
            stderr=subprocess.STDOUT,
            timeout=300,
            cwd=tmp_path,
        )
    text = log.read_text()
    assert "died with <Signals.SIGKILL: 9>" in text, text[-2000:]
    assert "sigkill" in _hits(text)
    v = _audit(log)
    assert (v["outcome"], v["cause"]) == ("crashed", "infra_runtime"), v


def _run(code: str, tmp_path: Path, env: dict | None = None, timeout: int = 300) -> str:
    script = tmp_path / "job.py"
    script.write_text(textwrap.dedent(code))
    r = subprocess.run(
        [PY, str(script)],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=tmp_path,
        env={**os.environ, **(env or {})},
    )
    return r.stdout + r.stderr


def test_dataloader_worker_death_as_torch_reports_it(tmp_path):
    out = _run(
        """
        import os, signal, torch
        from torch.utils.data import DataLoader, Dataset
        class D(Dataset):
            def __len__(self): return 8
            def __getitem__(self, i):
                os.kill(os.getpid(), signal.SIGKILL)
        try:
            list(DataLoader(D(), num_workers=1))
        except RuntimeError as e:
            print(f"RuntimeError: {e}")
    """,
        tmp_path,
    )
    assert "DataLoader worker (pid" in out, out
    assert "dataloader-worker-killed" in _hits(out)


def test_anomaly_mode_nan_message(tmp_path):
    x = torch.tensor([-1.0], requires_grad=True)
    with pytest.raises(RuntimeError) as e, torch.autograd.detect_anomaly(check_nan=True):
        torch.sqrt(x).sum().backward()
    assert [s.id for s, _ in match_line(f"RuntimeError: {e.value}")] == ["nan-message"], str(
        e.value
    )


def test_torch_oom_error_class_line():
    import traceback

    line = traceback.format_exception_only(torch.OutOfMemoryError, torch.OutOfMemoryError())[
        -1
    ].strip()
    assert [s.id for s, _ in match_line(line)] == ["torch-oom-error"], line


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux)")
def test_disk_full_and_checkpoint_write_and_read_failures_as_python_and_torch_report_them(tmp_path):
    with pytest.raises(OSError) as e:
        with open("/dev/full", "w") as f:
            f.write("x" * 10)
    assert [s.id for s, _ in match_line(f"OSError: {e.value}")] == ["disk-full"], str(e.value)
    with pytest.raises(RuntimeError) as w:
        torch.save({"w": torch.zeros(1000)}, "/dev/full")
    got = {s.id for s, _ in match_line(f"RuntimeError: {w.value}")}
    assert got & {"checkpoint-write-failed", "disk-full"}, str(w.value)
    ok = tmp_path / "ok.pt"
    torch.save({"w": torch.zeros(1000)}, ok)
    cut = tmp_path / "cut.pt"
    cut.write_bytes(ok.read_bytes()[:200])  # a checkpoint truncated by a full disk
    with pytest.raises(RuntimeError) as r:
        torch.load(cut, weights_only=True)
    assert "checkpoint-read-failed" in {s.id for s, _ in match_line(f"RuntimeError: {r.value}")}, (
        str(r.value)
    )


def test_shell_reports_a_sigkilled_child_as_killed(tmp_path):
    r = subprocess.run(
        ["bash", "-c", f"{shlex.quote(PY)} -c 'import os; os.kill(os.getpid(), 9)'; true"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "Killed" in r.stderr, r.stderr
    assert "sigkill" in _hits(r.stderr), r.stderr


def test_shell_reports_a_sigbus_child_as_bus_error(tmp_path):
    """bash's job report of a child ended by SIGBUS (a container's /dev/shm filled under a DataLoader)
    is the libc's strsignal text, 'Bus error', which the sigbus row reads as an infra death."""
    r = subprocess.run(
        ["bash", "-c", f"{shlex.quote(PY)} -c 'import os; os.kill(os.getpid(), 7)'; true"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "Bus error" in r.stderr, r.stderr
    assert "sigbus" in _hits(r.stderr), r.stderr
    assert "sigbus" in _hits("Bus error (core dumped)")
    assert "sigbus" not in _hits("a bus error in the CAN driver was fixed in 2.1")


def test_shell_and_faulthandler_report_a_sigsegv_child_as_a_segmentation_fault(tmp_path):
    """bash's job report of a child ended by SIGSEGV is glibc's strsignal text, 'Segmentation fault', and
    CPython's faulthandler prints 'Fatal Python error: Segmentation fault': the sigsegv row reads both as a
    native crash; prose that mentions a segmentation fault is not one."""
    r = subprocess.run(
        ["bash", "-c", f"{shlex.quote(PY)} -c 'import os; os.kill(os.getpid(), 11)'; true"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "Segmentation fault" in r.stderr, r.stderr
    assert "sigsegv" in _hits(r.stderr), r.stderr
    f = subprocess.run(
        [PY, "-X", "faulthandler", "-c", "import ctypes; ctypes.string_at(0)"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "Fatal Python error: Segmentation fault" in f.stderr, f.stderr
    assert "sigsegv" in _hits(f.stderr), f.stderr
    assert "sigsegv" not in _hits("a segmentation fault in the CAN driver was fixed in 2.1")


def test_lightning_nonfinite_stop_sigterm_and_keyboard_interrupt_messages(tmp_path):
    out = _run(
        """
        import os, signal, sys
        import torch, lightning as L
        from lightning.pytorch.callbacks import EarlyStopping
        from torch.utils.data import DataLoader, TensorDataset

        class M(L.LightningModule):
            def __init__(self, mode):
                super().__init__(); self.mode = mode; self.l = torch.nn.Linear(2, 1)
            def training_step(self, b, i):
                if self.mode == "sigterm" and self.global_step == 2:
                    os.kill(os.getpid(), signal.SIGTERM)
                if self.mode == "interrupt" and self.global_step == 2:
                    raise KeyboardInterrupt
                return self.l(b[0]).pow(2).mean()
            def validation_step(self, b, i):
                self.log("val_loss", torch.tensor(float("nan")))
            def configure_optimizers(self):
                return torch.optim.SGD(self.parameters(), lr=0.1)

        data = DataLoader(TensorDataset(torch.randn(16, 2)), batch_size=4)
        kw = dict(max_epochs=3, logger=False, enable_checkpointing=False, enable_progress_bar=False,
                  enable_model_summary=False)
        L.Trainer(callbacks=[EarlyStopping("val_loss", check_finite=True, verbose=True)], **kw).fit(M("nan"), data, data)
        try:
            L.Trainer(**kw).fit(M("sigterm"), data)
        except SystemExit:
            pass
        L.Trainer(**kw).fit(M("interrupt"), data)
    """,
        tmp_path,
    )
    hits = _hits(out)
    assert "is not finite. Previous best value was" in out and "nan-message" in hits, out[-2000:]
    assert "Received SIGTERM: 15" in out and "sigterm" in hits, out[-2000:]
    assert "Detected KeyboardInterrupt, attempting graceful shutdown" in out and "sigint" in hits, (
        out[-2000:]
    )


def test_keras_terminate_on_nan_message(tmp_path):
    out = _run(
        """
        import numpy as np, keras
        x = np.ones((32, 2), "float32"); y = np.full((32, 1), np.nan, "float32")
        m = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
        m.compile(optimizer="sgd", loss="mse")
        m.fit(x, y, epochs=2, batch_size=8, callbacks=[keras.callbacks.TerminateOnNaN()], verbose=0)
    """,
        tmp_path,
        env={"KERAS_BACKEND": "torch"},
    )
    assert "Invalid loss, terminating training" in out, out[-2000:]
    assert "nan-message" in _hits(out)


def test_signature_reference_is_generated_from_the_catalogue():
    from mlaudit.cli.cmd_rules import signatures_markdown

    doc = Path(__file__).resolve().parents[1] / "docs" / "signatures.md"
    assert doc.read_text() == signatures_markdown(), (
        "docs/signatures.md is stale: run `mlaudit rules --signatures --format markdown > docs/signatures.md`"
    )


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux)")
def test_ci_log_reads_a_failed_checkpoint_write_as_an_infra_signature(tmp_path):
    from mlaudit_core.ci.logs import scan_logs
    from mlaudit_core.ci.model import CIContext

    out = _run(
        """
        import torch
        torch.save({"w": torch.zeros(1000)}, "/dev/full")
        """,
        tmp_path,
    )
    assert "PytorchStreamWriter" in out or "unexpected pos" in out, out[-2000:]
    log = tmp_path / "job.log"
    log.write_text(out)
    ctx = CIContext(repo=str(tmp_path))
    scan_logs(ctx, [(log, "job.log")])
    assert any(x.kind == "infra:checkpoint-write-failed" for x in ctx.infra), [
        x.kind for x in ctx.infra
    ]


def test_torch_gradscaler_skips_an_overflow_silently_so_only_the_scale_series_shows_it(capsys):
    """torch's GradScaler prints nothing when it skips a step: there is no console signature for
    torch AMP, only the logged loss scale (RT006/OP007 read it). Pinned here so the catalogue says so."""
    p = torch.nn.Parameter(torch.ones(2))
    opt = torch.optim.SGD([p], lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=1024.0)
    scaler.scale(p.sum() * float("inf")).backward()
    scaler.step(opt)
    scaler.update()
    out = capsys.readouterr()
    assert scaler.get_scale() == 512.0 and torch.equal(p.detach(), torch.ones(2))
    assert not out.out and not out.err and not match_line(out.out + out.err)


def test_anomaly_mode_stop_is_a_numerical_failure_not_a_code_bug(tmp_path):
    """A plain torch loop under detect_anomaly, finite loss, then one bad batch (a sqrt of negative
    inputs): torch raises 'Function ... returned nan values'; the verdict is a numerical failure."""
    script = tmp_path / "train.py"
    script.write_text(
        textwrap.dedent(
            """
            import torch
            torch.manual_seed(0)
            w = torch.nn.Parameter(torch.tensor([1.0, 0.5]))
            opt = torch.optim.SGD([w], lr=0.01)
            x = torch.randn(256, 2).abs()
            with torch.autograd.detect_anomaly():
                for step in range(1, 200):
                    i = (step * 8) % 256
                    xb = x[i:i + 8] if step != 120 else -x[i:i + 8]
                    loss = (torch.sqrt(xb) * w).sum(1).sub(1.0).pow(2).mean()
                    opt.zero_grad(); loss.backward(); opt.step()
                    if step % 10 == 0:
                        print(f"step {step} loss {loss.item():.4f}", flush=True)
            """
        )
    )
    log = tmp_path / "train.log"
    with log.open("w") as out:
        subprocess.run(
            [PY, str(script)], stdout=out, stderr=subprocess.STDOUT, timeout=300, cwd=tmp_path
        )
    assert "returned nan values" in log.read_text()
    v = _audit(log)
    assert (v["outcome"], v["cause"]) == ("crashed", "data_config"), v


def test_safetensors_truncated_file_and_accelerate_batch_search_as_the_packages_raise_them(
    tmp_path,
):
    """safetensors 0.8.0 reading a file cut short (a full disk, an interrupted copy) and accelerate 1.16.0's
    find_executable_batch_size after every batch size ran out of memory: what the packages raise here is
    read as a failed checkpoint read and as out of memory."""
    from accelerate.utils import find_executable_batch_size
    from safetensors.torch import load_file, save_file

    ok = tmp_path / "ok.safetensors"
    save_file({"w": torch.zeros(1000)}, str(ok))
    cut = tmp_path / "cut.safetensors"
    cut.write_bytes(ok.read_bytes()[:200])
    with pytest.raises(Exception) as r:
        load_file(str(cut))
    line = f"{type(r.value).__module__}.{type(r.value).__name__}: {r.value}"
    assert "checkpoint-read-failed" in {s.id for s, _ in match_line(line)}, line

    @find_executable_batch_size(starting_batch_size=4)
    def step(batch_size):
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

    with pytest.raises(RuntimeError) as b:
        step()
    line = f"RuntimeError: {b.value}"
    assert [s.id for s, _ in match_line(line)] == ["batch-size-search-exhausted"], line
    assert MEANINGS["oom"].cause == "infra_runtime"


def test_dataloader_timeout_as_torch_raises_it(tmp_path):
    """torch 2.13.0's DataLoader with ``timeout=0.2`` and a worker that takes 1 s per sample (a hung or
    starved worker): the RuntimeError it raises is read as a data-loader worker failure (RT004), an
    infrastructure cause."""
    out = _run(
        """
        import time, torch
        from torch.utils.data import DataLoader, Dataset
        class D(Dataset):
            def __len__(self): return 2
            def __getitem__(self, i):
                time.sleep(1.0)
                return torch.zeros(1)
        try:
            list(DataLoader(D(), num_workers=1, timeout=0.2))
        except RuntimeError as e:
            print(f"RuntimeError: {e}")
    """,
        tmp_path,
    )
    assert "DataLoader timed out after 0.2 seconds" in out, out
    (hit,) = _hits(out)["dataloader-timeout"]
    assert hit.figures == {"timeout": "0.2"}
    assert MEANINGS["worker_killed"].cause == "infra_runtime"


def test_launch_failures_as_bash_and_cpython_print_them(tmp_path):
    """A launch that fails before training: bash under ``set -u`` at an unset variable, a command
    not on PATH, a script that does not exist; CPython given a missing script; argparse given an
    option the script does not define. Each is the ``launch_failed`` category (RT011)."""
    parser = (
        "import argparse; p = argparse.ArgumentParser(prog='train.py'); "
        "p.add_argument('--lr'); p.parse_args(['--max_training_steps', '2'])"
    )
    produced = {
        "shell-unbound-variable": ["bash", "-c", "set -u; echo $MLAUDIT_UNSET_VARIABLE"],
        "shell-command-not-found": ["bash", "-c", "mlaudit-no-such-command --lr 1e-4"],
        "launch-file-not-found": ["bash", str(tmp_path / "missing.sh")],
        "argparse-error": [PY, "-c", parser],
    }
    for sig, cmd in produced.items():
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        assert r.returncode != 0, (cmd, r.stderr)
        assert {s.category for s, _ in match_line(r.stderr.strip().splitlines()[-1])} == {
            "launch_failed"
        }, r.stderr
        assert sig in _hits(r.stderr), r.stderr
    r = subprocess.run(
        [PY, str(tmp_path / "missing.py")], capture_output=True, text=True, timeout=60
    )
    assert "launch-file-not-found" in _hits(r.stderr), r.stderr
