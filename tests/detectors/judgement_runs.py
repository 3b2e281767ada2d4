"""Real training runs for the verdict's judgement rules (issue 27 item 3), made with the real libraries.

Each ``make_*`` trains a small model for a few seconds on CPU and logs it the way a user's script
does (torch ``SummaryWriter``, the HF Trainer's own TensorBoard callback, a ClearML offline
session). Nothing here writes a metric value by hand: what is logged is what the training produced.
What each run *is* comes from how it was made (the learning rate, the schedule, the labels chosen
to break it), written in ``LABELS`` and in ``tests/data/judgement/labels.json``.

Run as a script to (re)write the committed copies that ``tests/test_judgement_rules.py`` reads::

    python tests/detectors/judgement_runs.py tests/data/judgement

Every run is made in a child process (``--one NAME OUT``) so environment-driven settings and the
libraries' global state never leak between runs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve()


def _child(name: str, out: Path, timeout: float = 900) -> dict:
    env = dict(
        os.environ,
        PYTHONHASHSEED="0",
        OMP_NUM_THREADS="1",
        MKL_NUM_THREADS="1",
        TOKENIZERS_PARALLELISM="false",
    )
    res = subprocess.run(
        [sys.executable, str(HERE), "--one", name, str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if res.returncode != 0:
        raise RuntimeError(f"{name} failed ({res.returncode}):\n{res.stderr[-4000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def _blobs(n: int, classes: int, seed: int, spread: float = 1.0):
    import torch

    g = torch.Generator().manual_seed(seed)
    centres = torch.randn(classes, 16, generator=torch.Generator().manual_seed(123)) * 2.0
    y = torch.randint(0, classes, (n,), generator=g)
    x = centres[y] + spread * torch.randn(n, 16, generator=g)
    return x, y


def _mlp(classes: int = 10):
    import torch

    return torch.nn.Sequential(
        torch.nn.Linear(16, 64), torch.nn.ReLU(), torch.nn.Linear(64, classes)
    )


# --- plain PyTorch + SummaryWriter: learning-rate schedules that end in NaN ------------------------


def _torch_lr_nan(out: Path) -> dict:
    """``warmup_nan``: SGD with ``LinearLR(start_factor=1e-5, total_iters=300)`` towards a peak lr of
    1e4 (a warm-up whose peak is 1e5x the typical 0.1: the ramp reaches a breaking lr within steps);
    the loss turns NaN inside the ramp. ``jump_nan``: SGD lr 0.05 for 131 steps, then a
    ``MultiStepLR`` with ``gamma=1e5`` (a decay factor written as a multiplier) jumps it to 5000;
    the loss turns NaN right after the jump. Both run the forward pass under bf16 autocast (the
    hparams say ``precision=bf16-mixed``), keep training after the NaN as a loop without a finite
    check does, and log ``train/loss`` and ``train/lr`` every 10 steps (a ``log_interval`` as in
    nanoGPT: the loss of that step, so the step that blew up is between two logged points),
    val loss/accuracy per epoch. The same schedules in fp32 turn NaN too: the learning rate, not
    the precision, is what broke them."""
    import torch
    from torch.utils.tensorboard import SummaryWriter

    torch.set_num_threads(1)
    xt, yt = _blobs(2048, 10, 0)
    xv, yv = _blobs(512, 10, 1)
    runs = {}
    for name in ("warmup_nan", "jump_nan"):
        torch.manual_seed(0)
        net = _mlp()
        if name == "warmup_nan":
            opt = torch.optim.SGD(net.parameters(), lr=1e4)
            sched = torch.optim.lr_scheduler.LinearLR(opt, start_factor=1e-5, total_iters=300)
        else:
            opt = torch.optim.SGD(net.parameters(), lr=0.05)
            sched = torch.optim.lr_scheduler.MultiStepLR(opt, milestones=[131], gamma=1e5)
        writer = SummaryWriter(str(out / "torch_lr" / name))
        writer.add_hparams(
            {
                "optimizer": "SGD",
                "lr": opt.param_groups[0]["initial_lr"],
                "precision": "bf16-mixed",
                "schedule": "linear warmup 300"
                if name == "warmup_nan"
                else "MultiStepLR [130] x200",
            },
            {},
            run_name=".",
        )
        step = 0
        for _epoch in range(6):
            perm = torch.randperm(len(xt))
            for i in range(0, len(xt), 32):
                idx = perm[i : i + 32]
                with torch.autocast("cpu", dtype=torch.bfloat16):
                    loss = torch.nn.functional.cross_entropy(net(xt[idx]).float(), yt[idx])
                opt.zero_grad()
                loss.backward()
                if step % 10 == 0:
                    writer.add_scalar("train/lr", opt.param_groups[0]["lr"], step)
                    writer.add_scalar("train/loss", loss.item(), step)
                opt.step()
                sched.step()
                step += 1
            with torch.no_grad():
                logits = net(xv)
                writer.add_scalar(
                    "val/loss", torch.nn.functional.cross_entropy(logits, yv).item(), step
                )
                writer.add_scalar(
                    "val/accuracy", (logits.argmax(-1) == yv).float().mean().item(), step
                )
        writer.close()
        runs[name] = {"tensorboard": str(out / "torch_lr" / name)}
    return runs


# --- HF Trainer: shuffled labels, and a validation loss that goes non-finite ----------------------


def _hf(out: Path) -> dict:
    """Tiny BERT classifiers (from a config: no download) with the Trainer's own TensorBoard logging.

    ``shuffled``: 4 classes whose labels are drawn at random, independent of the tokens, for the
    training and the evaluation set (shuffled labels): the model memorises the training set (the
    training loss falls), evaluation accuracy stays at chance 1/4; the config's ``type_vocab_size``
    is 2 and ``vocab_size`` 64, neither of which is the label count. ``healthy``: the same model
    on a learnable binary task (label 1 when token 7 occurs; transformers 5 writes no ``id2label``
    for the default two labels), lr 3e-3.
    """
    import torch
    from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainingArguments

    torch.set_num_threads(1)

    class Tokens(torch.utils.data.Dataset):
        def __init__(self, n: int, seed: int, classes: int, shuffled: bool) -> None:
            g = torch.Generator().manual_seed(seed)
            self.x = torch.randint(1, 64, (n, 16), generator=g)
            self.y = (
                torch.randint(0, classes, (n,), generator=g)
                if shuffled
                else (self.x == 7).any(1).long()
            )

        def __len__(self) -> int:
            return len(self.y)

        def __getitem__(self, i):
            return {
                "input_ids": self.x[i],
                "attention_mask": torch.ones(16, dtype=torch.long),
                "labels": self.y[i],
            }

    def accuracy(p):
        return {"accuracy": float((p.predictions.argmax(-1) == p.label_ids).mean())}

    runs = {}
    for name, classes, shuffled, lr, warmup, epochs in (
        ("shuffled", 4, True, 2e-3, 0, 30),
        ("healthy", 2, False, 3e-3, 0, 4),
    ):
        torch.manual_seed(0)
        model = BertForSequenceClassification(
            BertConfig(
                vocab_size=64,
                hidden_size=64,
                num_hidden_layers=2,
                num_attention_heads=2,
                intermediate_size=128,
                max_position_embeddings=32,
                num_labels=classes,
            )
        )
        root = out / "hf" / name
        os.environ["TENSORBOARD_LOGGING_DIR"] = str(root / "tb")
        args = TrainingArguments(
            output_dir=str(root),
            report_to=["tensorboard"],
            logging_steps=4,
            eval_strategy="epoch",
            num_train_epochs=epochs,
            learning_rate=lr,
            warmup_steps=warmup,
            per_device_train_batch_size=16,
            per_device_eval_batch_size=64,
            save_strategy="no",
            use_cpu=True,
            disable_tqdm=True,
            seed=0,
        )
        n = 128 if shuffled else 512
        trainer = Trainer(
            model=model,
            args=args,
            train_dataset=Tokens(n, 0, classes, shuffled),
            eval_dataset=Tokens(128, 1, classes, shuffled),
            compute_metrics=accuracy,
        )
        trainer.train()
        trainer.state.save_to_json(str(root / "trainer_state.json"))
        runs[name] = {
            "tensorboard": str(root / "tb"),
            "trainer_state": str(root / "trainer_state.json"),
        }
    return runs


# --- plain PyTorch: a validation loss that overflows while the training loss rises ---------------------


NV = int(os.environ.get("JR_NV", "262144"))


def _torch_val_inf(out: Path) -> dict:
    """A regression MLP (MSE, fp32 training with gradient clipping at 1.0), SGD with a linear warm-up
    to lr 1.0, too hot for it (10x the typical 0.1): the training loss falls from 1.09 to 0.06,
    then rises again to 0.3-0.4 (5-7x its best, but less than half of what it had learned lost).
    Validation runs the way a user speeds it up, in half precision (``net.half()`` on a copy) with
    the squared error summed over the 262,144 held-out rows and divided by their number: as the
    model degrades, the fp16 sum overflows (> 65,504) and the validation loss is inf at every
    evaluation from the second on, while the fp32 per-batch training loss stays finite."""
    import copy

    import torch
    from torch.utils.tensorboard import SummaryWriter

    torch.set_num_threads(1)
    g = torch.Generator().manual_seed(0)
    w = torch.randn(16, 1, generator=g) / 4
    xt, xv = torch.randn(2048, 16, generator=g), torch.randn(NV, 16, generator=g)
    yt, yv = (
        xt @ w + 0.1 * torch.randn(2048, 1, generator=g),
        xv @ w + 0.1 * torch.randn(NV, 1, generator=g),
    )
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))
    opt = torch.optim.SGD(net.parameters(), lr=float(os.environ.get("JR_LR", "1.0")))
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 200))
    writer = SummaryWriter(str(out / "torch_val_inf"))
    step = 0
    for _epoch in range(6):
        for i in range(0, len(xt), 32):
            loss = torch.nn.functional.mse_loss(net(xt[i : i + 32]), yt[i : i + 32])
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
            opt.step()
            sched.step()
            writer.add_scalar("train/loss", loss.item(), step)
            writer.add_scalar("train/lr", opt.param_groups[0]["lr"], step)
            step += 1
        with torch.no_grad():
            half = copy.deepcopy(net).half()
            sse = torch.nn.functional.mse_loss(half(xv.half()), yv.half(), reduction="sum")
        writer.add_scalar("val/loss", (sse / len(xv)).item(), step)
    writer.close()
    return {"tensorboard": str(out / "torch_val_inf"), "steps": step}


# --- ClearML offline session: a diverging loss reported through the real SDK -------------------


def _clearml(out: Path) -> dict:
    """A plain PyTorch loop reporting to a ClearML offline session (``Task.set_offline(True)``):
    SGD at lr 3 on a regression MLP with MSE; the loss grows by orders of magnitude and overflows
    to inf/NaN, and every value is handed to ``Logger.report_scalar`` as the loop computed it."""
    import shutil
    import tempfile

    os.environ["CLEARML_CACHE_DIR"] = tempfile.mkdtemp(prefix="clearml-cache-")
    import torch
    from clearml import Task

    torch.set_num_threads(1)
    Task.set_offline(True)
    task = Task.init(
        project_name="judgement",
        task_name="regression-lr3",
        auto_connect_frameworks=False,
        auto_resource_monitoring=False,
        auto_connect_streams=False,
    )
    task.connect({"lr": 3.0, "optimizer": "SGD", "batch_size": 32}, name="Args")
    logger = task.get_logger()
    g = torch.Generator().manual_seed(0)
    x = torch.randn(1024, 16, generator=g)
    y = x @ torch.randn(16, 1, generator=g) + 0.1 * torch.randn(1024, 1, generator=g)
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    step = 0
    for _epoch in range(8):
        for i in range(0, len(x), 32):
            if step == 60:
                for gr in opt.param_groups:
                    gr["lr"] = 3.0  # the configured lr, applied after a short warm start
            loss = torch.nn.functional.mse_loss(net(x[i : i + 32]), y[i : i + 32])
            opt.zero_grad()
            loss.backward()
            opt.step()
            logger.report_scalar("train", "loss", float(loss.item()), iteration=step)
            step += 1
    folder = str(task.get_offline_mode_folder())
    task.close()
    (out / "clearml").mkdir(parents=True, exist_ok=True)
    dest = out / "clearml" / "regression-lr3.zip"
    shutil.copy(folder + ".zip", dest)
    shutil.rmtree(os.environ["CLEARML_CACHE_DIR"], ignore_errors=True)
    return {"zip": str(dest), "task_id": task.id}


# --- plain PyTorch: signals that contradict a healthy-looking loss ---------------------------------


def _torch_signals(out: Path) -> dict:
    """``gradspikes``: an MLP on 10 blobs (SGD lr 0.05, clipping at 1.0) where every 25th batch comes
    from a corrupted shard (inputs scaled 5x, labels permuted): the loss recovers on the very next
    step each time, the logged pre-clip grad norm spikes 10x+ above its median on those batches,
    again and again. ``grad_norm`` is what ``clip_grad_norm_`` returns; ``weight_norm`` the
    parameters' L2 norm."""
    import torch
    from torch.utils.tensorboard import SummaryWriter

    torch.set_num_threads(1)
    xt, yt = _blobs(2048, 10, 0)
    xv, yv = _blobs(512, 10, 1)
    torch.manual_seed(0)
    net = _mlp()
    opt = torch.optim.SGD(net.parameters(), lr=0.05)
    writer = SummaryWriter(str(out / "torch_signals" / "gradspikes"))
    step = 0
    for _epoch in range(8):
        for i in range(0, len(xt), 32):
            xb, yb = xt[i : i + 32], yt[i : i + 32]
            if step % 25 == 24:
                xb, yb = xb * 5.0, yb[torch.randperm(len(yb))]
            loss = torch.nn.functional.cross_entropy(net(xb), yb)
            opt.zero_grad()
            loss.backward()
            gn = torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
            opt.step()
            writer.add_scalar("train/loss", loss.item(), step)
            writer.add_scalar("train/grad_norm", float(gn), step)
            writer.add_scalar(
                "train/weight_norm",
                float(torch.sqrt(sum((p.detach() ** 2).sum() for p in net.parameters()))),
                step,
            )
            step += 1
        with torch.no_grad():
            logits = net(xv)
            writer.add_scalar(
                "val/loss", torch.nn.functional.cross_entropy(logits, yv).item(), step
            )
            writer.add_scalar("val/accuracy", (logits.argmax(-1) == yv).float().mean().item(), step)
    writer.close()
    return {"gradspikes": str(out / "torch_signals" / "gradspikes")}


# --- plain PyTorch: a slowed data loader, timing only in the event wall times ------------------------


def _torch_slow(out: Path) -> dict:
    """``paused``: a ``DataLoader`` whose dataset sleeps 60 ms on every 8th batch (a slow shard / a
    stalled network read), and ``healthy`` the same loop without the sleep. Only ``train/loss``
    (per step) and the val metrics are logged: the step times are only in the event wall times."""
    import torch
    from torch.utils.tensorboard import SummaryWriter

    torch.set_num_threads(1)
    xt, yt = _blobs(2048, 10, 0)
    xv, yv = _blobs(512, 10, 1)

    class Slow(torch.utils.data.Dataset):
        def __init__(self, pause: float) -> None:
            self.pause = pause

        def __len__(self) -> int:
            return len(xt) // 32

        def __getitem__(self, b):
            if self.pause and b % 8 == 7:
                time.sleep(self.pause)
            return xt[b * 32 : (b + 1) * 32], yt[b * 32 : (b + 1) * 32]

    runs = {}
    for name, pause in (("healthy", 0.0), ("paused", 0.06)):
        torch.manual_seed(0)
        net = _mlp()
        opt = torch.optim.SGD(net.parameters(), lr=0.05)
        loader = torch.utils.data.DataLoader(Slow(pause), batch_size=None, shuffle=False)
        writer = SummaryWriter(str(out / "torch_slow" / name))
        step = 0
        for _epoch in range(5):
            for xb, yb in loader:
                loss = torch.nn.functional.cross_entropy(net(xb), yb)
                opt.zero_grad()
                loss.backward()
                opt.step()
                time.sleep(0.01)  # the forward/backward of a real model: a step takes ~10 ms
                writer.add_scalar("train/loss", loss.item(), step)
                step += 1
            with torch.no_grad():
                logits = net(xv)
                writer.add_scalar(
                    "val/loss", torch.nn.functional.cross_entropy(logits, yv).item(), step
                )
                writer.add_scalar(
                    "val/accuracy", (logits.argmax(-1) == yv).float().mean().item(), step
                )
        writer.close()
        runs[name] = {"tensorboard": str(out / "torch_slow" / name)}
    return runs


def _torch_leak(out: Path) -> dict:
    """``leaking``: the same loop logging a running mean of the loss the way a common mistake
    writes it, ``history.append(loss)`` (the tensor, graph and all, not ``loss.item()``) and
    ``sum(history) / len(history)`` at every step: each step adds to a sum over every earlier
    step, so the step time grows with the run (a per-step cost that grows: throughput drifts
    down). Only the losses are logged; the step times are only in the event wall times."""
    import torch
    from torch.utils.tensorboard import SummaryWriter

    torch.set_num_threads(1)
    xt, yt = _blobs(2048, 10, 0)
    torch.manual_seed(0)
    net = _mlp()
    opt = torch.optim.SGD(net.parameters(), lr=0.05)
    writer = SummaryWriter(str(out / "torch_slow" / "leaking"))
    history = []
    step = 0
    for _epoch in range(25):
        for i in range(0, len(xt), 32):
            loss = torch.nn.functional.cross_entropy(net(xt[i : i + 32]), yt[i : i + 32])
            opt.zero_grad()
            loss.backward()
            opt.step()
            history.append(loss)
            running = sum(history) / len(history)
            writer.add_scalar("train/loss", loss.item(), step)
            writer.add_scalar("train/loss_running_mean", float(running), step)
            step += 1
    writer.close()
    return {"leaking": str(out / "torch_slow" / "leaking"), "steps": step}


# --- HF Trainer console logs with several launches appended to one file ------------------------------

_HF_SCRIPT = """
import sys, torch
from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainingArguments
torch.set_num_threads(1)
mode, out = sys.argv[1], sys.argv[2]
print("config: tiny-bert hidden=32 layers=1 num_labels=2 lr=3e-3 epochs=4 batch=16", flush=True)
print("data: 512 train / 128 eval sequences of 16 tokens (label: token 7 occurs)", flush=True)

class Tokens(torch.utils.data.Dataset):
    def __init__(self, n, seed):
        g = torch.Generator().manual_seed(seed)
        self.x = torch.randint(1, 50, (n, 16), generator=g)
        self.y = (self.x == 7).any(1).long()
    def __len__(self):
        return len(self.y)
    def __getitem__(self, i):
        return {"input_ids": self.x[i], "attention_mask": torch.ones(16, dtype=torch.long), "labels": self.y[i]}

def accuracy(p):
    return {"accuracy": float((p.predictions.argmax(-1) == p.label_ids).mean())}

torch.manual_seed(0)
if mode == "train":
    model = BertForSequenceClassification(BertConfig(vocab_size=50, hidden_size=32, num_hidden_layers=1,
        num_attention_heads=2, intermediate_size=64, max_position_embeddings=32, num_labels=2))
else:
    model = BertForSequenceClassification.from_pretrained(out + "/final")
args = TrainingArguments(output_dir=out, report_to=[], logging_steps=4, eval_strategy="epoch", num_train_epochs=4,
    learning_rate=3e-3, per_device_train_batch_size=16, per_device_eval_batch_size=64, save_strategy="epoch",
    use_cpu=True, disable_tqdm=True, seed=0)
trainer = Trainer(model=model, args=args, train_dataset=Tokens(512, 0), eval_dataset=Tokens(128, 1),
                  compute_metrics=accuracy)
if mode == "train":
    trainer.train()
    trainer.save_model(out + "/final")
elif mode == "resume":
    trainer.train(resume_from_checkpoint=True)
else:
    print(trainer.evaluate(), flush=True)
"""


def _hf_launches(out: Path) -> dict:
    """An HF Trainer script run as users run it, ``python train.py MODE >> train.log 2>&1``, twice into
    one log: ``eval_after``: a training launch (4 epochs, healthy), then an evaluation-only launch
    of the saved model (``trainer.evaluate()``); ``resume_after``: a training launch, then a launch
    that resumes from the last checkpoint (``resume_from_checkpoint=True``), finds training done and
    exits. Each launch prints the script's same two configuration lines first."""
    import shutil
    import tempfile

    runs = {}
    for name, second in (("eval_after", "eval"), ("resume_after", "resume")):
        work = Path(tempfile.mkdtemp(prefix="hf-launch-"))
        script = work / "train.py"
        script.write_text(_HF_SCRIPT)
        log = out / "hf_launches" / name / "train.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ, TOKENIZERS_PARALLELISM="false")
        with log.open("ab") as fh:
            for mode in ("train", second):
                subprocess.run(
                    [sys.executable, str(script), mode, str(work / "out")],
                    stdout=fh,
                    stderr=subprocess.STDOUT,
                    env=env,
                    check=True,
                    timeout=900,
                    cwd=str(work),
                )
        shutil.rmtree(work, ignore_errors=True)
        runs[name] = str(log)
    return runs


# --- PyTorch: DataLoader workers that print the script's set-up lines, two launches in one log ----------

_TORCH_WORKERS_SCRIPT = """
import logging, sys
from collections import Counter
import torch
logging.basicConfig(stream=sys.stdout, level=logging.INFO, format="%(asctime)s - %(levelname)s - %(message)s")
# module level: runs in the main process and again in every DataLoader worker the spawn context starts
centres = torch.randn(7, 16, generator=torch.Generator().manual_seed(123)) * 2.0
g = torch.Generator().manual_seed(0)
y = torch.randint(0, 7, (1024,), generator=g)
x = centres[y] + 2.0 * torch.randn(1024, 16, generator=g)
counts = Counter(y.tolist())
logging.info("Class distribution: %s", counts)
logging.info("Class weights: %s", [len(y) / (7 * counts[c]) for c in range(7)])


def main():
    epochs = int(sys.argv[1])
    torch.manual_seed(0)
    torch.set_num_threads(1)
    train = torch.utils.data.TensorDataset(x[:768], y[:768])
    loader = torch.utils.data.DataLoader(train, batch_size=64, shuffle=True, num_workers=2,
                                         multiprocessing_context="spawn")
    model = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.ReLU(), torch.nn.Linear(64, 7))
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    lossf = torch.nn.CrossEntropyLoss()
    for epoch in range(epochs):
        model.train()
        total, right, n = 0.0, 0, 0
        for xb, yb in loader:
            opt.zero_grad()
            out = model(xb)
            loss = lossf(out, yb)
            loss.backward()
            opt.step()
            total += loss.item() * len(yb)
            right += int((out.argmax(1) == yb).sum())
            n += len(yb)
        model.eval()
        with torch.no_grad():
            out = model(x[768:])
            vloss = lossf(out, y[768:]).item()
            vacc = float((out.argmax(1) == y[768:]).float().mean())
        logging.info(f"Epoch [{epoch + 1}/{epochs}], Train Loss: {total / n:.4f}, Train Acc: {100 * right / n:.2f}%, "
                     f"Val Loss: {vloss:.4f}, Val Acc: {100 * vacc:.2f}%")


if __name__ == "__main__":
    main()
"""


def _torch_workers(out: Path) -> dict:
    """A plain PyTorch script whose DataLoader (``num_workers=2``, the ``spawn`` start method, as on
    Windows and macOS) re-imports the script in every worker, so each epoch prints the script's
    set-up lines (``Class distribution`` / ``Class weights``) again; run twice as users run it,
    ``python train.py 6 >> train.log 2>&1``: a first launch of 6 epochs that finishes, then a second
    one killed with its workers (SIGKILL to the process group, as a scheduler's time limit does) once
    the workers for epoch 4 have printed their set-up lines: it stopped after 3 of its 6 epochs."""
    import shutil
    import signal
    import tempfile

    work = Path(tempfile.mkdtemp(prefix="torch-workers-"))
    (work / "train.py").write_text(_TORCH_WORKERS_SCRIPT)
    log = out / "torch_workers" / "killed" / "train.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, str(work / "train.py"), "6"]
    with log.open("ab") as fh:
        subprocess.run(
            cmd, stdout=fh, stderr=subprocess.STDOUT, check=True, timeout=900, cwd=str(work)
        )
        proc = subprocess.Popen(
            cmd, stdout=fh, stderr=subprocess.STDOUT, cwd=str(work), start_new_session=True
        )
        deadline = time.monotonic() + 900
        while proc.poll() is None and time.monotonic() < deadline:
            text = log.read_text()
            third = text.rfind("Epoch [3/6]")
            if text.count("Epoch [3/6]") == 2 and text[third:].count("Class weights") >= 2:
                os.killpg(proc.pid, signal.SIGKILL)  # the job's processes, workers included
                break
            time.sleep(0.2)
        proc.wait(timeout=60)
    shutil.rmtree(work, ignore_errors=True)
    return {"killed": str(log)}


# --- Lightning: a run killed mid-epoch and resumed from its last checkpoint (ckpt_path) ------------

_LIGHTNING_RESUME_SCRIPT = """
import sys, time
import torch, lightning as L
torch.set_num_threads(1)
centres = torch.randn(10, 16, generator=torch.Generator().manual_seed(123)) * 2.0
g = torch.Generator().manual_seed(0)
y = torch.randint(0, 10, (4096,), generator=g)
x = centres[y] + 2.0 * torch.randn(4096, 16, generator=g)
slow = float(sys.argv[2])

class Net(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))
    def training_step(self, batch, i):
        if slow:
            time.sleep(slow)
        loss = torch.nn.functional.cross_entropy(self.net(batch[0]), batch[1])
        self.log("train_loss", loss, prog_bar=True)
        return loss
    def validation_step(self, batch, i):
        out = self.net(batch[0])
        self.log("val_loss", torch.nn.functional.cross_entropy(out, batch[1]), prog_bar=True)
        self.log("val_acc", (out.argmax(1) == batch[1]).float().mean(), prog_bar=True)
    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)

L.seed_everything(0)
train = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x[:3072], y[:3072]), batch_size=64, shuffle=True)
val = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x[3072:], y[3072:]), batch_size=256)
ckpt = L.pytorch.callbacks.ModelCheckpoint(dirpath="ckpt", save_last=True)
bar = L.pytorch.callbacks.TQDMProgressBar()  # Lightning's default bar when rich is not installed
trainer = L.Trainer(max_epochs=6, accelerator="cpu", devices=1, callbacks=[ckpt, bar], log_every_n_steps=8,
                    enable_model_summary=False, logger=False)
trainer.fit(Net(), train, val, ckpt_path="last" if sys.argv[1] == "resume" else None)
"""


def _lightning_resume(out: Path) -> dict:
    """A Lightning script run as users run it, ``python train.py MODE >> train.log 2>&1``: a first
    launch killed (SIGKILL to its process group, as a scheduler's limit does) in the middle of its
    fourth epoch of 6, then a launch that resumes from the last checkpoint
    (``trainer.fit(..., ckpt_path="last")``, saved at the end of epoch 3): it trains epoch 4 again
    (the steps the first launch had printed in it are redone) and finishes 6 of 6 epochs, healthy."""
    import shutil
    import signal
    import tempfile

    work = Path(tempfile.mkdtemp(prefix="lightning-resume-"))
    (work / "train.py").write_text(_LIGHTNING_RESUME_SCRIPT)
    log = out / "lightning_resume" / "killed_resumed" / "train.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as fh:
        proc = subprocess.Popen(
            [sys.executable, str(work / "train.py"), "train", "0.02"],
            stdout=fh,
            stderr=subprocess.STDOUT,
            cwd=str(work),
            start_new_session=True,
        )
        deadline = time.monotonic() + 900
        while proc.poll() is None and time.monotonic() < deadline:
            if (work / "ckpt" / "last.ckpt").exists() and "Epoch 3: " in log.read_text(
                errors="replace"
            ):
                text = log.read_text(errors="replace")
                if text.count("Epoch 3: ") >= 20:  # well into the fourth epoch (0-based 3)
                    os.killpg(proc.pid, signal.SIGKILL)
                    break
            time.sleep(0.2)
        proc.wait(timeout=60)
        subprocess.run(
            [sys.executable, str(work / "train.py"), "resume", "0"],
            stdout=fh,
            stderr=subprocess.STDOUT,
            check=True,
            timeout=900,
            cwd=str(work),
        )
    shutil.rmtree(work, ignore_errors=True)
    return {"killed_resumed": str(log)}


# --- Keras: a custom metric divided by a hard-coded batch size (CSVLogger) -------------------------

_KERAS_METRIC_SCRIPT = """
import os, sys
os.environ.setdefault("KERAS_BACKEND", "torch")
import keras, numpy as np, torch
centres = torch.randn(10, 16, generator=torch.Generator().manual_seed(123)) * 2.0
g = torch.Generator().manual_seed(0)
y = torch.randint(0, 10, (2048,), generator=g)
x = (centres[y] + 2.0 * torch.randn(2048, 16, generator=g)).numpy()
y = y.numpy()

def accuracy_sum(y_true, y_pred):
    # the bug: divided by a hard-coded batch size (60) where the mean over the real batch (64) was meant
    hit = keras.ops.cast(keras.ops.equal(keras.ops.argmax(y_pred, -1), keras.ops.cast(keras.ops.reshape(y_true, (-1,)), "int64")), "float32")
    return keras.ops.sum(hit) / 60.0  # a hard-coded batch size, not the real 64

keras.utils.set_random_seed(0)
model = keras.Sequential([keras.Input((16,)), keras.layers.Dense(64, activation="relu"), keras.layers.Dense(10)])
model.compile(optimizer=keras.optimizers.Adam(1e-3),
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy", accuracy_sum])
model.fit(x, y, epochs=10, batch_size=64, validation_split=0.25, verbose=2,
          callbacks=[keras.callbacks.CSVLogger(sys.argv[1])])
"""


def _keras_metric(out: Path) -> dict:
    """A Keras fit (``CSVLogger``) with a custom accuracy that divides the hits by a hard-coded batch
    size (60) instead of the real one (64): the metric ends above 1 (1.0125), an impossible value."""
    log = out / "keras_metric" / "training.csv"
    log.parent.mkdir(parents=True, exist_ok=True)
    script = log.parent / "train.py"
    script.write_text(_KERAS_METRIC_SCRIPT)
    subprocess.run(
        [sys.executable, str(script), str(log)],
        capture_output=True,
        check=True,
        timeout=900,
        cwd=str(log.parent),
    )
    script.unlink()
    return {"csv": str(log)}


# --- Keras: a reference run and its rerun printed into one console log ----------------------------

_KERAS_SCRIPT = """
import os, sys
os.environ.setdefault("KERAS_BACKEND", "torch")
import keras, numpy as np, torch
centres = torch.randn(10, 16, generator=torch.Generator().manual_seed(123)) * 2.0
def blobs(n, seed):
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, 10, (n,), generator=g)
    return (centres[y] + 2.0 * torch.randn(n, 16, generator=g)).numpy(), y.numpy()
x, y = blobs(2048, 0)
broken = sys.argv[1] == "broken"
for seed in (0, 1):
    print(f"=== seed {seed}: {'reference' if seed == 0 else 'rerun'}", flush=True)
    keras.utils.set_random_seed(seed)
    yy = y.copy()
    if broken and seed == 1:  # the rerun's data pipeline mislabels 40% of the examples
        bad = np.random.default_rng(0).random(len(yy)) < 0.4
        yy[bad] = np.random.default_rng(1).integers(0, 10, int(bad.sum()))
    model = keras.Sequential([keras.Input((16,)), keras.layers.Dense(64, activation="relu"), keras.layers.Dense(10)])
    model.compile(optimizer=keras.optimizers.Adam(1e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    model.fit(x, yy, epochs=10, batch_size=64, validation_split=0.25, verbose=2)
"""


def _keras_reruns(out: Path) -> dict:
    """A Keras script that trains the same configuration twice, seed 0 (the reference) and seed 1
    (the rerun), printing both ``fit(verbose=2)`` histories into one log (``python train.py >
    train.log 2>&1``). ``seeds``: both runs as written (the gap is seed noise). ``broken``: the
    rerun's labels are corrupted on 40% of the examples (a broken data pipeline): it ends far
    below the reference."""
    import shutil
    import tempfile

    runs = {}
    for name in ("seeds", "broken"):
        work = Path(tempfile.mkdtemp(prefix="keras-reruns-"))
        (work / "train.py").write_text(_KERAS_SCRIPT)
        log = out / "keras_reruns" / name / "train.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("wb") as fh:
            subprocess.run(
                [sys.executable, str(work / "train.py"), name],
                stdout=fh,
                stderr=subprocess.STDOUT,
                check=True,
                timeout=900,
                cwd=str(work),
            )
        shutil.rmtree(work, ignore_errors=True)
        runs[name] = str(log)
    return runs


# --- two models trained one after another into one log (a multi-stage pipeline) -----------------------

_TORCH_STAGES_SCRIPT = """
import sys, time
import torch
torch.set_num_threads(1)
centres = torch.randn(10, 16, generator=torch.Generator().manual_seed(123)) * 2.0
g = torch.Generator().manual_seed(0)
y = torch.randint(0, 10, (1536,), generator=g)
x = centres[y] + 1.5 * torch.randn(1536, 16, generator=g)


def stage(name, hidden, epochs):
    print(f"Training {name}:", flush=True)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=32, shuffle=True)
    for epoch in range(1, epochs + 1):
        for step, (xb, yb) in enumerate(loader):
            out = model(xb)
            loss = torch.nn.functional.cross_entropy(out, yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            if step % 8 == 0:  # the step counts batches within the epoch, as MTCNN-style trainers print it
                acc = float((out.argmax(1) == yb).float().mean())
                print(f"{time.strftime('%Y-%m-%d %H:%M:%S')} : Epoch: {epoch}, Step: {step}, "
                      f"accuracy: {acc:.4f}, loss: {loss.item():.5f}, lr:0.05", flush=True)


stage("small", 16, 5)
stage("large", 64, 5)
print("All stages done", flush=True)
"""


def _torch_stages(out: Path) -> dict:
    """A plain PyTorch script that trains two models one after another (stage ``small`` then stage
    ``large``, 5 epochs each, a per-epoch batch index as the printed step), captured as users capture
    it, ``python train.py > train.log 2>&1``: two trainings, each its own epoch counter from 1."""
    import shutil
    import tempfile

    work = Path(tempfile.mkdtemp(prefix="torch-stages-"))
    (work / "train.py").write_text(_TORCH_STAGES_SCRIPT)
    log = out / "torch_stages" / "two_models" / "train.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("wb") as fh:
        subprocess.run(
            [sys.executable, str(work / "train.py")],
            stdout=fh,
            stderr=subprocess.STDOUT,
            check=True,
            timeout=900,
            cwd=str(work),
        )
    shutil.rmtree(work, ignore_errors=True)
    return {"two_models": str(log)}


MAKERS = {
    "torch_val_inf": _torch_val_inf,
    "torch_lr": _torch_lr_nan,
    "hf": _hf,
    "clearml": _clearml,
    "torch_signals": _torch_signals,
    "torch_slow": _torch_slow,
    "hf_launches": _hf_launches,
    "keras_reruns": _keras_reruns,
    "torch_leak": _torch_leak,
    "torch_workers": _torch_workers,
    "lightning_resume": _lightning_resume,
    "keras_metric": _keras_metric,
    "torch_stages": _torch_stages,
}


if __name__ == "__main__":
    if sys.argv[1] == "--one":
        dest = Path(sys.argv[3])
        dest.mkdir(parents=True, exist_ok=True)
        print(json.dumps(MAKERS[sys.argv[2]](dest)))
    else:
        dest = Path(sys.argv[1])
        for n in sys.argv[2].split(",") if len(sys.argv) > 2 else MAKERS:
            print(n, _child(n, dest), flush=True)
