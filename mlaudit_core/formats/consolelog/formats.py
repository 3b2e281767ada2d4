"""The catalog of console-log formats: one declarative entry per format.

A :class:`LogFormat` says how to recognise a line (``hint`` substrings, then a
regular expression), which named groups are which figures (``fields``), how to
read further ``key value`` pairs from the rest of the line (``pairs``), how the
printed names map onto metric names (``rename``, then
:func:`mlaudit_core.formats.consolelog.names.canonical`), the units of the printed values,
and how the step is recovered. Adding a format is adding one entry here and one
fixture log in ``tests/data/logs/``; the engine in :mod:`.parser` does not
change.

Field targets are metric names (``train/loss``) or markers:

``@step``        the global step / iteration of the record
``@epoch``       the epoch counter (also emitted as ``train/epoch``)
``@epochs``      the number of epochs planned
``@batch``       the batch index within the epoch
``@total``       batches per epoch (gives ``steps_per_epoch``)
``@span``        units per epoch of the step axis when they are not steps (samples)
``@total_steps`` the number of steps planned
``@section``     ``train`` / ``valid`` / ``test``: the default prefix of the pairs
``@skip``        read and ignored

A ``rename`` target ``~/name`` takes the record's prefix (``train/`` or ``val/``).

Units: a group ``<name>_unit`` next to a value group gives its unit; otherwise
``units[group or pair key]``, then a unit written in the name itself
(``(ms)``). Times are converted to seconds, ``%`` accuracies to fractions,
``s/it`` rates to ``it/s``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

NUM = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|NaN|NAN|inf|Inf|INF|infinity|Infinity)(?:\.0)?"
_N = f"(?:{NUM})"


@dataclass(frozen=True)
class LogFormat:
    """One console-log format. See the module docstring for the vocabulary.

    Attributes:
        id: stable identifier (also the fixture file name in tests/data/logs/).
        name: what prints it.
        example: one real line of the format (documentation and tests).
        pattern: regular expression, searched in the line; named groups are figures.
        hint: substrings of which at least one must be in the line before the regex is tried.
        exclude: substrings that rule a line out (Keras' running ``ETA:`` lines).
        fields: group -> metric name or marker.
        pairs: regex with groups ``k`` and ``v`` (optional ``u`` unit) applied to the
            ``rest`` group (or the text after the match) to read more figures.
        rename: printed pair key (lower case) -> metric name or marker.
        prefix: default prefix of pair keys without a train/val/test prefix.
        units: group or printed key (lower case) -> unit of the printed value.
        kind: ``record`` (values at a step), ``summary`` (final values, kept only for
            metrics the log gives no history of), ``header`` (sets the epoch or a block,
            emits nothing), ``progress`` (a progress bar: updates the step, the rest of
            the line is read by the other formats), ``ignore`` (consumes the line).
        step: ``auto`` (the record's step, else the step of a progress bar on the line,
            else epoch x steps per epoch, else the last step seen), ``epoch`` (the step is
            the epoch number: epoch-level logs), ``epoch_batch`` (epoch x total + batch).
        epoch_base: 0 or 1, the first epoch's number (for ``epoch_batch``).
        block: for a ``header``, the block it opens; for others, the block they require.
        pair_name: template for pair metric names (``perf/ds_{}``) instead of the mapping.
        const: metrics emitted with every match (event counters).
        ratios: metric -> (numerator group, denominator group), e.g. correct / total.
        final_batch_only: with ``@batch`` and ``@total``, only the line whose batch equals
            the total is a record (Keras 3 prints running values on every batch).
    """

    id: str
    name: str
    example: str
    pattern: str
    hint: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    fields: dict[str, str] = field(default_factory=dict)
    pairs: str | None = None
    rename: dict[str, str] = field(default_factory=dict)
    prefix: str = "train/"
    units: dict[str, str] = field(default_factory=dict)
    kind: str = "record"
    step: str = "auto"
    epoch_base: int = 0
    block: str | None = None
    pair_name: str | None = None
    const: dict[str, float] = field(default_factory=dict)
    ratios: dict[str, tuple[str, str]] = field(default_factory=dict)
    final_batch_only: bool = False

    def compiled(self) -> tuple[re.Pattern, re.Pattern | None]:
        return re.compile(self.pattern), (re.compile(self.pairs) if self.pairs else None)


#: A unit written after a value (``loss 1.23 BPC``, ``mem 5678MB``, ``time 20ms``): read as the
#: pair's ``u`` group; times and percentages are converted, other units are kept as printed.
UNIT_WORD = (
    r"(?:\s?(?P<u>(?i:bpc|bpb|bits?|nats?|ppl|[kmgt]i?b|tok(?:en)?s/s|samples/s|img/s|ex/s|ms|us|"
    r"s|sec|min|%)))?"
)
_PIPE_PAIRS = rf"(?P<k>[A-Za-z][^|:]*?)\s*:\s*(?P<v>{_N})\s*(?=\||$)"
_PAREN_TIME_UNIT = {"elapsed time per iteration": "ms"}

#: The catalog, most specific first. A progress bar is read first and the rest of
#: its line goes on; the first other format that matches a line consumes it.
CATALOG: list[LogFormat] = [
    LogFormat(
        id="tqdm",
        name="tqdm progress bars (Hugging Face, PyTorch Lightning, NeMo, plain tqdm)",
        example="Epoch 3:  45%|████▌     | 424/938 [00:12<00:14, 34.61it/s, loss=0.312, v_num=0]",
        pattern=(
            r"(?P<pct>\d{1,3})%\|[^|]{0,200}\|\s*(?P<batch>\d+)/(?P<total>\d+)"
            rf"\s*\[(?P<elapsed>[\d:]+)(?:<(?P<remaining>[\d:?]*))?(?:,\s*(?:(?P<rate>{_N})|\?)\s*"
            r"(?P<rate_unit>[A-Za-z]+/[A-Za-z]+))?(?:,\s*(?P<postfix>[^\]]*))?\]"
        ),
        hint=("%|",),
        kind="progress",  # the description before the bar ("Epoch 3:") is read by the engine
        fields={"rate": "perf/throughput"},
        pairs=rf"(?P<k>[A-Za-z_][\w ./@-]*?)=(?P<v>{_N})(?=[,\]\s]|$)",
        rename={
            "v_num": "@skip",
            "global_step": "@step",
            "step": "@step",
            "epoch": "@epoch",
            "consumed_samples": "train/consumed_samples",
            "train_loss_step": "train/loss",
            "loss_step": "train/loss",
        },
    ),
    LogFormat(
        id="hf-train-summary",
        name="Hugging Face Trainer, final training summary dict",
        example="{'train_runtime': 430.4, 'train_samples_per_second': 50.2, 'train_steps_per_second': 3.14, "
        "'train_loss': 0.8221, 'epoch': 1.0}",
        pattern=rf"'train_runtime':\s*'?{_N}",
        hint=("'train_runtime'",),
        kind="summary",
        pairs=rf"'(?P<k>[^'\n]{{1,80}})':\s*'?(?P<v>{_N})'?(?=\s*[,}}])",
        rename={
            "train_loss": "train/loss_mean",
            "train_runtime": "perf/train_runtime",
            "train_samples_per_second": "perf/train_samples_per_s",
            "train_steps_per_second": "perf/train_steps_per_s",
            "total_flos": "train/total_flos",
            "epoch": "@skip",
        },
        units={"train_runtime": "s"},
    ),
    LogFormat(
        id="hf-dict",
        name="Hugging Face Trainer log dicts (training and evaluation)",
        example="{'loss': 1.3437, 'grad_norm': 2.91, 'learning_rate': 4.41e-06, 'epoch': 0.0148}",
        # transformers 5.x prints the values as strings: {'loss': '2.345', 'grad_norm': '1.2', ...}
        pattern=rf"'[^'\n]{{1,80}}':\s*'?{_N}'?\s*[,}}]",
        hint=("':",),
        pairs=rf"'(?P<k>[^'\n]{{1,80}})':\s*'?(?P<v>{_N})'?(?=\s*[,}}])",
        rename={
            "loss": "train/loss",
            "learning_rate": "train/lr",
            "grad_norm": "train/grad_norm",
            "epoch": "@epoch",
            "step": "@step",
            "global_step": "@step",
            "eval_runtime": "val/runtime",
            "eval_samples_per_second": "val/samples_per_s",
            "eval_steps_per_second": "val/steps_per_s",
            "total_flos": "train/total_flos",
        },
        units={"eval_runtime": "s"},
    ),
    LogFormat(
        id="json-lines",
        name="JSON-lines metric logs (fairseq --log-format json, custom loggers)",
        example='{"epoch": 1, "update": 0.1, "loss": "9.126", "lr": "5e-05", "num_updates": "100"}',
        pattern=r"(?P<json>\{\s*\"[^{}]*\})\s*$",
        hint=('{"',),
        rename={
            "step": "@step",
            "global_step": "@step",
            "num_updates": "@step",
            "iteration": "@step",
            "iter": "@step",
            "_step": "@step",
            "epoch": "@epoch",
            "update": "@skip",
            "valid_num_updates": "@step",
            "valid_epoch": "@skip",
            "valid_best_loss": "val/best_loss",
            "_runtime": "@skip",
            "_timestamp": "@skip",
            "timestamp": "@skip",
            "wall": "@skip",
            "train_wall": "@skip",
            "time": "@skip",
        },
    ),
    LogFormat(
        id="hf-metrics-block-header",
        name="Hugging Face Trainer, `***** eval metrics *****` block header",
        example="***** eval metrics *****",
        pattern=r"^\s*\*{3,}\s*(?P<section>\w+) metrics\s*\*{3,}",
        hint=("metrics *",),
        fields={"section": "@section"},
        kind="header",
        block="hf-metrics",
    ),
    LogFormat(
        id="hf-metrics-block",
        name="Hugging Face Trainer, `  key = value` lines of a metrics block",
        example="  eval_loss               =     0.6999",
        pattern=rf"^\s+(?P<k>[\w/.@-]+)\s*=\s*(?P<v>{_N})\s*$",
        hint=("=",),
        kind="summary",
        block="hf-metrics",
        rename={
            "train_loss": "train/loss_mean",
            "epoch": "@skip",
            "train_runtime": "@skip",
            "train_samples_per_second": "perf/train_samples_per_s",
            "train_steps_per_second": "perf/train_steps_per_s",
            "total_flos": "train/total_flos",
            "eval_runtime": "val/runtime",
            "eval_samples_per_second": "val/samples_per_s",
            "eval_steps_per_second": "val/steps_per_s",
        },
    ),
    LogFormat(
        id="keras-epoch-header",
        name="Keras `Epoch N/M` header",
        example="Epoch 2/10",
        pattern=r"^\s*Epoch (?P<epoch>\d+)/(?P<epochs>\d+)\s*$",
        hint=("Epoch ",),
        fields={"epoch": "@epoch", "epochs": "@epochs"},
        kind="header",
    ),
    LogFormat(
        id="keras",
        name="Keras fit() epoch lines (Keras 2 and 3, verbose 1 and 2)",
        example=" - 383s - loss: 0.5388 - acc: 0.7156 - val_loss: 0.7477 - val_acc: 0.5938",
        pattern=(
            r"^\s*(?:(?P<batch>\d+)/(?P<total>\d+)\s*(?:\[[=>.]*\]|[━─]+)?\s*)?-?\s*"
            r"(?:(?P<epoch_time>\d+(?:\.\d+)?)(?P<epoch_time_unit>ms|s|m)\s+)?-?\s*"
            r"(?:(?P<step_time>\d+(?:\.\d+)?)(?P<step_time_unit>us|µs|ms|s)/(?:step|sample)\s*)?"
            rf"-\s+(?P<rest>[A-Za-z_][\w@]*:\s+{_N}(?:\s+-\s+[A-Za-z_][\w@]*:\s+{_N})*)"
            # TF 2.x Keras 2 verbose=2 ends with the epoch and step times: '- 7s/epoch - 371ms/step'
            r"(?:\s+-\s+\d+(?:\.\d+)?(?:us|µs|ms|s|m)/(?:epoch|step|sample))*\s*$"
        ),
        hint=("loss: ",),
        exclude=("ETA:",),
        fields={
            "batch": "@batch",
            "total": "@total",
            "epoch_time": "perf/epoch_time",
            "step_time": "perf/step_time",
        },
        pairs=rf"(?P<k>[A-Za-z_][\w@]*):\s+(?P<v>{_N})",
        step="epoch",
        final_batch_only=True,
    ),
    LogFormat(
        id="catboost",
        name="CatBoost fit() iteration lines (verbose=N; catboost 1.2 prints them from its C++ logger)",
        example="150:\tlearn: 0.0887724\ttest: 0.2577574\tbest: 0.2574985 (142)\ttotal: 2.29s\tremaining: 28.1s",
        pattern=rf"^(?P<step>\d+):\s+learn:\s+(?P<learn>{_N})(?P<rest>\s.*)?$",
        hint=("learn: ",),
        fields={"step": "@step", "learn": "train/loss"},
        # the first eval set's objective (``test``); ``best`` is its running minimum, ``total`` and
        # ``remaining`` the elapsed and estimated times
        pairs=rf"(?:^|\s)(?P<k>test):\s+(?P<v>{_N})",
        rename={"test": "val/loss"},
    ),
    LogFormat(
        id="tensorpack-epoch",
        name="Tensorpack epoch summary",
        example="Epoch 16 (global_step 542) finished, time:345.80 sec",
        pattern=(
            rf"Epoch (?P<epoch>\d+) \(global_step (?P<step>\d+)\) finished, time:\s*(?P<epoch_time>{_N})"
            r"\s*(?P<epoch_time_unit>seconds|sec|s|minutes|min|hours|h)?"
        ),
        hint=("global_step",),
        fields={"epoch": "@epoch", "step": "@step", "epoch_time": "perf/epoch_time"},
    ),
    LogFormat(
        id="megatron",
        name="Megatron-LM / NeMo (Megatron core) iteration lines",
        example=(
            " iteration      100/  500000 | consumed samples:        12800 | elapsed time per iteration "
            "(ms): 1234.5 | learning rate: 1.500E-04 | global batch size:   128 | lm loss: 7.512345E+00 | "
            "loss scale: 65536.0 | grad norm: 2.345 | number of skipped iterations:   0 | "
            "number of nan iterations:   0 |"
        ),
        pattern=r"\biteration\s+(?P<iteration>\d+)\s*/\s*(?P<total_steps>\d+)\s*\|(?P<rest>.*)$",
        hint=("iteration",),
        fields={"iteration": "@step", "total_steps": "@total_steps"},
        pairs=_PIPE_PAIRS,
        rename={
            "lm loss": "train/loss",
            "learning rate": "train/lr",
            "loss scale": "train/loss_scale",
            "grad norm": "train/grad_norm",
            "elapsed time per iteration (ms)": "perf/step_time",
            "number of skipped iterations": "train/skipped_iterations",
            "number of nan iterations": "train/nan_iterations",
            "consumed samples": "train/consumed_samples",
            "consumed tokens": "train/consumed_tokens",
            "global batch size": "train/global_batch_size",
            "num zeros": "train/num_zeros",
            "params norm": "train/params_norm",
            "throughput per gpu (tflop/s/gpu)": "perf/tflops_per_gpu",
        },
        units={"elapsed time per iteration (ms)": "ms"},
    ),
    LogFormat(
        id="megatron-validation",
        name="Megatron-LM validation lines",
        example=" validation loss at iteration 1000 | lm loss value: 6.123456E+00 | lm loss PPL: 4.561E+02 |",
        pattern=r"validation loss at iteration (?P<iteration>\d+)(?: on \w+ set)?\s*\|(?P<rest>.*)$",
        hint=("validation loss at",),
        fields={"iteration": "@step"},
        pairs=_PIPE_PAIRS,
        prefix="val/",
        rename={"lm loss value": "val/loss", "lm loss ppl": "val/ppl"},
    ),
    LogFormat(
        id="fairseq-inner",
        name="fairseq train_inner lines (simple and tqdm log formats)",
        example=(
            "2021-03-01 12:00:00 | INFO | train_inner | epoch 001:    100 / 1000 loss=9.126, nll_loss=8.9, "
            "ppl=478.2, wps=12345.6, ups=2.31, wpb=4096, bsz=128, num_updates=100, lr=5e-05, gnorm=1.234, "
            "loss_scale=128, train_wall=40, gb_free=10.1, wall=50"
        ),
        pattern=r"\bepoch (?P<epoch>\d+):\s+(?P<batch>\d+)\s*/\s*(?P<total>\d+)\s+(?P<rest>[\w.]+=.*)$",
        hint=("epoch ",),
        fields={"epoch": "@epoch", "batch": "@batch", "total": "@total"},
        pairs=rf"(?P<k>[\w.]+)=(?P<v>{_N})(?=[,\s]|$)",
        rename={
            "num_updates": "@step",
            "wall": "@skip",
            "train_wall": "@skip",
            "clip": "train/clip_pct",
            "oom": "train/oom_count",
            "gb_free": "perf/gb_free",
            "wpb": "train/words_per_batch",
            "bsz": "train/batch_size",
        },
    ),
    LogFormat(
        id="fairseq-epoch",
        name="fairseq epoch and validation summaries (`| epoch 003 | loss 4.1 | ...`)",
        example="| epoch 003 | valid on 'valid' subset | loss 4.512 | nll_loss 4.101 | ppl 17.16 | num_updates 3000",
        pattern=(
            r"\|?\s*epoch (?P<epoch>\d+)\s*\|\s*(?:(?P<section>valid|test|train)\w* on '[^']*' subset\s*\|)?"
            rf"(?P<rest>\s*[A-Za-z_][\w.]*\s+{_N}\s*(?:\|.*)?)$"
        ),
        hint=("epoch ",),
        fields={"epoch": "@epoch", "section": "@section"},
        pairs=rf"(?:^|\|)\s*(?P<k>[A-Za-z_][\w.]*)\s+(?P<v>{_N}){UNIT_WORD}\s*(?=\||$)",
        rename={
            "num_updates": "@step",
            "wall": "@skip",
            "train_wall": "@skip",
            "clip": "~/clip_pct",
            "oom": "~/oom_count",
            "gb_free": "perf/gb_free",
            "wpb": "~/words_per_batch",
            "bsz": "~/batch_size",
            "best_loss": "val/best_loss",
        },
    ),
    LogFormat(
        id="deepspeed-step",
        name="DeepSpeed engine step lines",
        example=(
            "[2023-05-01 10:00:00,123] [INFO] [logging.py:96:log_dist] [Rank 0] step=10, skipped=2, "
            "lr=[0.0001], mom=[(0.9, 0.999)]"
        ),
        pattern=rf"\bstep=(?P<step>\d+), skipped=(?P<skipped>\d+), lr=\[(?P<lr>{_N})",
        hint=("skipped=",),
        fields={"step": "@step", "skipped": "train/skipped_steps_total", "lr": "train/lr"},
    ),
    LogFormat(
        id="deepspeed-throughput",
        name="DeepSpeed throughput timer",
        example=(
            "[2023-05-01 10:00:00,456] [INFO] [timer.py:199:stop] epoch=0/micro_step=100/global_step=100, "
            "RunningAvgSamplesPerSec=123.45, CurrSamplesPerSec=130.2, MemAllocated=10.5GB, "
            "MaxMemAllocated=12.3GB"
        ),
        pattern=(
            r"(?:epoch=(?P<epoch>\d+)/micro_step=(?P<micro_step>\d+)/global_step=(?P<step>\d+)|"
            r"(?<![\w/])(?P<epoch_old>\d+)/(?P<step_old>\d+)),\s*"
            rf"(?:RunningAvgSamplesPerSec=(?P<avg>{_N}),\s*CurrSamplesPerSec=(?P<throughput>{_N})|"
            rf"SamplesPerSec=(?P<throughput_old>{_N}))"
            rf"(?:,\s*MemAllocated=(?P<mem>{_N})GB,\s*MaxMemAllocated=(?P<max_mem>{_N})GB)?"
        ),
        hint=("SamplesPerSec",),
        fields={
            "epoch": "@epoch",
            "step": "@step",
            "micro_step": "@skip",
            "avg": "@skip",
            "epoch_old": "@epoch",
            "step_old": "@step",
            "throughput_old": "perf/throughput",
            "throughput": "perf/throughput",
            "mem": "perf/mem_allocated_gb",
            "max_mem": "perf/max_mem_allocated_gb",
        },
    ),
    LogFormat(
        id="deepspeed-timers",
        name="DeepSpeed wall-clock breakdown (`time (ms) | forward: ...`)",
        example="[Rank 0] rank=0 time (ms) | forward: 123.45 | backward: 234.56 | optimizer: 12.34",
        pattern=r"time \(ms\) \|(?P<rest>.*)$",
        hint=("time (ms) |",),
        pairs=_PIPE_PAIRS,
        pair_name="perf/ds_time_{}",
        units={"*": "ms"},
    ),
    LogFormat(
        id="imagenet-train",
        name="PyTorch ImageNet / classification reference scripts, training lines",
        example=(
            "Epoch: [0][10/5005]\tTime 22.424 (7.498)\tData 22.372 (7.070)\tLoss 6.9065 (6.9074)\t"
            "Prec@1 0.000 (0.142)\tPrec@5 1.172 (0.533)"
        ),
        pattern=r"Epoch: \[(?P<epoch>\d+)\]\[\s*(?P<batch>\d+)/(?P<total>\d+)\]\s+(?P<rest>.*)$",
        hint=("Epoch: [",),
        fields={"epoch": "@epoch", "batch": "@batch", "total": "@total"},
        pairs=rf"(?P<k>[A-Za-z][\w@]*)\s+(?P<v>{_N})\s*\(\s*{_N}\s*\)",
        rename={"time": "perf/step_time", "data": "perf/data_time", "loss": "train/loss"},
        units={"prec@1": "%", "prec@5": "%", "acc@1": "%", "acc@5": "%"},
        step="epoch_batch",
    ),
    LogFormat(
        id="torchvision-metriclogger",
        name="torchvision reference scripts' MetricLogger (classification, detection, segmentation)",
        example=(
            "Epoch: [0]  [0/6]  eta: 0:00:25  lr: 0.001004  loss: 8.2773 (8.2773)  loss_classifier: 0.7230 (0.7230)"
            "  time: 4.1973  data: 1.1906  max mem: 2547"
        ),
        pattern=r"Epoch: \[(?P<epoch>\d+)\]\s+\[\s*(?P<batch>\d+)/(?P<total>\d+)\]\s+(?P<rest>.*)$",
        hint=("Epoch: [",),
        fields={"epoch": "@epoch", "batch": "@batch", "total": "@total"},
        # the first value is the running median of the window, the one in brackets the global average
        pairs=rf"(?P<k>[A-Za-z][\w/@]*(?: [a-z]+)?):\s+(?P<v>{_N})(?:\s+\(\s*{_N}\s*\))?(?=\s|$)",
        rename={
            "lr": "train/lr",
            "loss": "train/loss",
            "time": "perf/step_time",
            "data": "perf/data_time",
            "max mem": "perf/gpu_mem_mb",
            "img/s": "perf/throughput",
            "acc1": "train/top1",
            "acc5": "train/top5",
        },
        units={"acc1": "%", "acc5": "%"},
        step="epoch_batch",
    ),
    LogFormat(
        id="imagenet-train-nototal",
        name="ImageNet-example-style lines without the batch total (SwAV, DeepCluster, MoCo forks)",
        example="Epoch: [6][50]\tTime 0.627 (0.666)\tData 0.000 (0.032)\tLoss 3.9122 (3.9121)\tLr: 0.3913",
        pattern=r"Epoch: \[(?P<epoch>\d+)\]\[\s*(?P<batch>\d+)\]\s+(?P<rest>.*)$",
        hint=("Epoch: [",),
        fields={"epoch": "@epoch", "batch": "@skip"},
        pairs=rf"(?P<k>[A-Za-z][\w@]*):?\s+(?P<v>{_N})(?:\s*\(\s*{_N}\s*\))?(?=\s|$)",
        rename={
            "time": "perf/step_time",
            "data": "perf/data_time",
            "loss": "train/loss",
            "lr": "train/lr",
        },
        units={"prec@1": "%", "prec@5": "%", "acc@1": "%", "acc@5": "%"},
        step="epoch",
    ),
    LogFormat(
        id="swin-train",
        name="Swin Transformer / timm-derived `Train: [epoch/epochs][batch/total]` lines",
        example=(
            "Train: [3/300][100/625]\teta 0:03:37 lr 0.000100\ttime 0.3471 (0.3700)\tloss 2.3100 (2.4500)"
            "\tgrad_norm 1.2345 (1.5000)\tmem 5678MB"
        ),
        pattern=r"\bTrain: \[(?P<epoch>\d+)/(?P<epochs>\d+)\]\[\s*(?P<batch>\d+)/(?P<total>\d+)\]\s+(?P<rest>.*)$",
        hint=("Train: [",),
        fields={"epoch": "@epoch", "epochs": "@epochs", "batch": "@batch", "total": "@total"},
        pairs=rf"(?P<k>[A-Za-z][\w@]*)\s+(?P<v>{_N}){UNIT_WORD}(?:\s*\(\s*{_N}\s*\))?(?=\s|$)",
        rename={
            "time": "perf/step_time",
            "loss": "train/loss",
            "lr": "train/lr",
            "grad_norm": "train/grad_norm",
            "mem": "perf/gpu_mem_mb",
            "eta": "@skip",
        },
        step="epoch_batch",
    ),
    LogFormat(
        id="yolox",
        name="YOLOX trainer iteration lines (loguru; `epoch: e/E, iter: i/N, ... total_loss: x`)",
        example=(
            "2021-09-03 20:47:25.076 | INFO     | yolox.core.trainer:after_iter:246 - epoch: 300/300, "
            "iter: 10/47, mem: 1756Mb, iter_time: 0.108s, data_time: 0.002s, total_loss: 1.9, iou_loss: 1.1, "
            "l1_loss: 0.3, conf_loss: 0.2, cls_loss: 0.4, lr: 7.813e-06, size: 480, ETA: 0:00:03"
        ),
        pattern=r"\bepoch: (?P<epoch>\d+)/(?P<epochs>\d+), iter: (?P<batch>\d+)/(?P<total>\d+), (?P<rest>.*)$",
        hint=("iter: ",),
        fields={"epoch": "@epoch", "epochs": "@epochs", "batch": "@batch", "total": "@total"},
        pairs=rf"(?P<k>[A-Za-z][\w]*): (?P<v>{_N})(?P<u>s|Mb|MB)?(?=,|\s|$)",
        rename={
            "total_loss": "train/loss",
            "lr": "train/lr",
            "iter_time": "perf/step_time",
            "data_time": "perf/data_time",
            "mem": "perf/gpu_mem_mb",
            "size": "@skip",
        },
        units={"iter_time": "s", "data_time": "s"},
        step="epoch_batch",
        epoch_base=1,
    ),
    LogFormat(
        id="mmengine-train",
        name="MMEngine runners (mmdet 3, mmseg 1, mmpretrain, mmpose...), training lines",
        example=(
            "07/03 13:04:25 - mmengine - INFO - Epoch(train)  [1][ 50/196]  lr: 3.3333e-04  eta: 0:07:39  "
            "time: 0.2013  data_time: 0.0356  memory: 970  loss: 2.3025"
        ),
        pattern=(
            r"(?:Epoch\(train\)\s*\[(?P<epoch>\d+)\]\[\s*(?P<batch>\d+)/(?P<total>\d+)\]|"
            r"Iter\(train\)\s*\[\s*(?P<step>\d+)/(?P<total_steps>\d+)\])\s+(?P<rest>.*)$"
        ),
        hint=("(train)",),
        fields={
            "epoch": "@epoch",
            "batch": "@batch",
            "total": "@total",
            "step": "@step",
            "total_steps": "@total_steps",
        },
        pairs=rf"(?P<k>[A-Za-z][\w/.-]*):\s+(?P<v>{_N})(?=\s|$)",
        rename={
            "lr": "train/lr",
            "base_lr": "@skip",
            "loss": "train/loss",
            "time": "perf/step_time",
            "data_time": "perf/data_time",
            "memory": "perf/gpu_mem_mb",
            "grad_norm": "train/grad_norm",
        },
        step="epoch_batch",
        epoch_base=1,
    ),
    LogFormat(
        id="mmengine-val",
        name="MMEngine runners, validation and test lines (the last one per pass holds the metrics)",
        example="08/18 12:00:10 - mmengine - INFO - Epoch(val) [1][10/10]    accuracy/top1: 35.6000  data_time: 0.0220  time: 0.0663",
        pattern=r"(?:Epoch|Iter)\((?P<section>val|test)\)\s*\[[\d\s/]+\](?:\[[\d\s/]+\])?\s+(?P<rest>.*)$",
        hint=("(val)", "(test)"),
        fields={"section": "@section"},
        pairs=rf"(?P<k>[A-Za-z][\w/.-]*):\s+(?P<v>{_N})(?=\s|$)",
        rename={
            "time": "@skip",
            "data_time": "@skip",
            "memory": "@skip",
            "lr": "@skip",
            "eta": "@skip",
        },
        # mmengine's and mmpretrain's Accuracy print percent (``accuracy: 7.5000``); mmaction's acc/top1 a fraction
        units={"accuracy": "%", "accuracy/top1": "%", "accuracy/top5": "%"},
    ),
    LogFormat(
        id="torchtune",
        name="torchtune DiskLogger files (log_<time>.txt: `Step N | name:value ...`)",
        example="Step 2 | loss:2.1011 lr:2e-05 tokens_per_second_per_gpu:1411.9 peak_memory_active:12.1",
        pattern=r"^Step (?P<step>\d+) \| (?P<rest>.*)$",
        hint=("Step ",),
        fields={"step": "@step"},
        pairs=rf"(?P<k>[A-Za-z_][\w/.]*):(?P<v>{_N})(?=\s|$)",
        rename={
            "loss": "train/loss",
            "lr": "train/lr",
            "grad_norm": "train/grad_norm",
            "tokens_per_second_per_gpu": "perf/tokens_per_s_per_gpu",
        },
    ),
    LogFormat(
        id="coco-eval",
        name="pycocotools COCOeval summary (torchvision and detectron2 evaluation)",
        example=" Average Precision  (AP) @[ IoU=0.50:0.95 | area=   all | maxDets=100 ] = 0.612",
        pattern=(
            rf"Average Precision\s+\(AP\) @\[ IoU=(?:0\.50:0\.95\s+\| area=\s*all \| maxDets=\s*100 \] = "
            rf"(?P<ap>{_N})|0\.50\s+\| area=\s*all \| maxDets=\s*100 \] = (?P<ap50>{_N}))"
        ),
        hint=("Average Precision",),
        fields={"ap": "val/AP", "ap50": "val/AP50"},
        prefix="val/",
    ),
    LogFormat(
        id="coco-eval-other",
        name="pycocotools COCOeval summary, the other ten lines (read past)",
        example=" Average Recall     (AR) @[ IoU=0.50:0.95 | area=   all | maxDets=  1 ] = 0.401",
        pattern=r"Average (?:Precision|Recall)\s+\((?:AP|AR)\) @\[",
        hint=("Average ",),
        kind="ignore",
    ),
    LogFormat(
        id="pipe-epoch-step",
        name="custom loops printing `Epoch e | Step s/N | Loss: x | LR: y | ...`",
        example="Epoch 0 | Step   10/6501 | Loss: 8.2445 | PPL: 4455.51 | LR: 5.97e-05 | Grad: 25.399 | Time: 0.507s",
        pattern=r"\bEpoch (?P<epoch>\d+)(?:/(?P<epochs>\d+))?\s*\|\s*(?:Step|Batch|Iter)\s+(?P<batch>\d+)/(?P<total>\d+)\s*(?P<rest>\|.*)$",
        hint=("| Step", "| Batch", "| Iter"),
        fields={"epoch": "@epoch", "epochs": "@epochs", "batch": "@batch", "total": "@total"},
        pairs=rf"\|\s*(?P<k>[A-Za-z][\w ./@-]*?)\s*:\s*(?P<v>{_N}){UNIT_WORD}\s*(?=\||$)",
        rename={
            "loss": "train/loss",
            "lr": "train/lr",
            "grad": "train/grad_norm",
            "grad_norm": "train/grad_norm",
            "ppl": "train/ppl",
            "time": "perf/step_time",
        },
        step="epoch_batch",
    ),
    LogFormat(
        id="timm-train",
        name="timm train.py lines",
        example=(
            "Train: 3 [ 400/1251 ( 32%)]  Loss: 4.512 (4.62)  Time: 0.512s,  500.12/s  (0.530s,  483.02/s)  "
            "LR: 1.000e-03  Data: 0.012 (0.015)"
        ),
        pattern=r"\bTrain: (?P<epoch>\d+) \[\s*(?P<batch>\d+)/(?P<total>\d+) \(\s*\d+%\)\]\s+(?P<rest>.*)$",
        hint=("Train: ",),
        fields={"epoch": "@epoch", "batch": "@batch", "total": "@total"},
        pairs=rf"(?P<k>Loss|Time|LR|Data|Grad\s?Norm):\s*(?P<v>{_N})",
        rename={
            "time": "perf/step_time",
            "data": "perf/data_time",
            "loss": "train/loss",
            "lr": "train/lr",
        },
        step="epoch_batch",
    ),
    LogFormat(
        id="timm-val",
        name="timm validate() lines: the last batch's running means are the pass's figures",
        example="Test: [   3/3]  Time: 0.009 (0.012)  Loss:   2.638 ( 2.708)  Acc@1:   2.000 (  1.500)  Acc@5:  42.000 ( 38.000)",
        pattern=r"^\s*Test:\s+\[\s*(?P<batch>\d+)/(?P<total>\d+)\]\s+(?P<rest>.*\bLoss:.*)$",
        hint=("Test:",),
        fields={"batch": "@batch", "total": "@span"},
        pairs=rf"(?P<k>Loss|Acc@1|Acc@5):\s*{_N}\s*\(\s*(?P<v>{_N})\s*\)",
        prefix="val/",
        units={"acc@1": "%", "acc@5": "%"},
        final_batch_only=True,
    ),
    LogFormat(
        id="imagenet-test-batch",
        name="PyTorch ImageNet example, per-batch test lines (running values)",
        example="Test: [ 10/196]\tTime  0.105 ( 0.450)\tLoss 1.0e+00 (1.1e+00)\tAcc@1  75.00 ( 72.16)",
        # a line at the pass's last position (``[ 3/3]``) is its result, left to the other readers
        pattern=r"^\s*Test:\s+\[\s*(\d+)/(?!\1\])\d+\]",
        hint=("Test:",),
        kind="ignore",
    ),
    LogFormat(
        id="imagenet-val",
        name="PyTorch ImageNet example, validation summary",
        example=" * Acc@1 56.522 Acc@5 79.066",
        pattern=r"^\s*\*\s+(?P<rest>(?:Acc|Prec)@1\s.*)$",
        hint=("@1",),
        prefix="val/",
        pairs=rf"(?P<k>(?:Acc|Prec)@\d)\s+(?P<v>{_N})",
        units={"prec@1": "%", "prec@5": "%", "acc@1": "%", "acc@5": "%"},
    ),
    LogFormat(
        id="pytorch-mnist",
        name="PyTorch examples (MNIST-style `Train Epoch: 1 [640/60000 (1%)] Loss: ...`)",
        example="Train Epoch: 1 [640/60000 (1%)]\tLoss: 2.300513",
        pattern=(
            rf"Train Epoch: (?P<epoch>\d+) \[\s*(?P<batch>\d+)/(?P<total>\d+) \(\s*\d+%\)\]\s+Loss: (?P<loss>{_N})"
            r"(?P<rest>.*)$"
        ),
        hint=("Train Epoch",),
        fields={"epoch": "@epoch", "batch": "@batch", "total": "@span", "loss": "train/loss"},
        pairs=rf"(?P<k>Data \(t\)|Batch \(t\)|LR|Logit Scale):\s*(?P<v>{_N})",
        rename={"data (t)": "perf/data_time", "batch (t)": "perf/step_time", "lr": "train/lr"},
        step="epoch_batch",
        epoch_base=1,
    ),
    LogFormat(
        id="pytorch-mnist-test",
        name="PyTorch examples, test summary",
        example="Test set: Average loss: 0.0335, Accuracy: 9889/10000 (99%)",
        pattern=rf"Test set: Average loss: (?P<loss>{_N}), Accuracy: (?P<correct>\d+)/(?P<n>\d+)",
        hint=("Test set:",),
        fields={"loss": "val/loss", "correct": "@skip", "n": "@skip"},
        ratios={"val/accuracy": ("correct", "n")},
    ),
    LogFormat(
        id="litgpt",
        name="lit-gpt / litgpt and nanoGPT iteration lines",
        example="iter 7 step 1: loss 1.1201, iter time: 1819.72ms (optimizer.step)",
        pattern=(
            r"(?:Epoch (?P<epoch>\d+) \| )?\biter (?P<iteration>\d+)(?: step (?P<optimizer_step>\d+))?:?\s*"
            rf"(?:\|\s*)?loss(?: train)?:?\s*(?P<loss>{_N})(?:,\s*val:\s*(?:(?P<val_loss>{_N})|n/a))?"
            rf"(?:,\s*LR:\s*(?P<lr>{_N}))?(?:,|\s*\|)?\s*(?:iter )?time:?\s*(?P<step_time>{_N})\s*"
            rf"(?P<step_time_unit>ms|s)(?:,\s*mfu\s*(?P<mfu>{_N})%)?"
        ),
        hint=("iter ",),
        fields={
            "epoch": "@epoch",
            "iteration": "@step",
            "optimizer_step": "train/optimizer_step",
            "loss": "train/loss",
            "val_loss": "val/loss",
            "lr": "train/lr",
            "step_time": "perf/step_time",
            "mfu": "perf/mfu",
        },
        units={"mfu": "%"},
    ),
    LogFormat(
        id="litgpt-val",
        name="lit-gpt / litgpt validation lines",
        example="iter 100: val loss 0.9100, val time: 1234.56 ms",
        pattern=rf"\biter (?P<iteration>\d+): val loss (?P<val_loss>{_N})(?:, val time: (?P<val_time>{_N})\s*"
        r"(?P<val_time_unit>ms|s))?",
        hint=("val loss",),
        fields={"iteration": "@step", "val_loss": "val/loss", "val_time": "val/runtime"},
    ),
    LogFormat(
        id="nanogpt-iter-rate",
        name="nanoGPT-derived iteration lines with a per-iteration time",
        example="[train] iter 10: loss 8.7390 11136 ms/iter",
        pattern=rf"\biter (?P<iteration>\d+):\s*loss (?P<loss>{_N}),?\s+(?P<step_time>{_N})\s*(?P<step_time_unit>ms|s)/iter",
        hint=("/iter",),
        fields={"iteration": "@step", "loss": "train/loss", "step_time": "perf/step_time"},
    ),
    LogFormat(
        id="nanogpt-eval-short",
        name="nanoGPT-derived evaluation lines (`iter N: train X val Y`)",
        example="[eval] iter 0: train 9.8508 val 9.8491 lr 7.50e-07",
        pattern=rf"\b(?:iter|step) (?P<iteration>\d+):\s*train (?P<train_loss>{_N}),?\s+val (?P<val_loss>{_N})"
        rf"(?:,?\s+lr (?P<lr>{_N}))?",
        hint=(" val ",),
        fields={
            "iteration": "@step",
            "train_loss": "train/loss_estimate",
            "val_loss": "val/loss",
            "lr": "train/lr",
        },
    ),
    LogFormat(
        id="nanogpt-eval",
        name="nanoGPT evaluation lines",
        example="step 2000: train loss 1.7612, val loss 1.8956",
        pattern=rf"\bstep (?P<step>\d+): train loss (?P<train_loss>{_N}), val loss (?P<val_loss>{_N})",
        hint=("val loss",),
        fields={"step": "@step", "train_loss": "train/loss_estimate", "val_loss": "val/loss"},
    ),
    LogFormat(
        id="lightning-checkpoint",
        name="PyTorch Lightning ModelCheckpoint messages",
        example="Epoch 4, global step 4690: 'val_loss' reached 0.31234 (best 0.31234), saving model to 'x.ckpt'",
        pattern=rf"Epoch (?P<epoch>\d+), global step (?P<step>\d+): '?(?P<k>[\w/.-]+)'? reached (?P<v>{_N})",
        hint=("reached",),
        fields={"epoch": "@epoch", "step": "@step"},
    ),
    LogFormat(
        id="apex-overflow",
        name="apex / Megatron fp16 overflow (step skipped, loss scale reduced)",
        example="Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 32768.0",
        pattern=rf"Gradient overflow\.\s+Skipping step(?:,\s*(?:loss scaler \d+ )?reducing loss scale to (?P<scale>{_N}))?",
        hint=("overflow",),
        fields={"scale": "train/loss_scale"},
        const={"train/overflow_skips": 1.0},
    ),
    LogFormat(
        id="deepspeed-overflow",
        name="DeepSpeed fp16 overflow",
        example="[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, reducing to 32768",
        pattern=(
            r"(?:OVERFLOW!|loss scale overflow!|Overflow detected\.)\s*(?:Rank \d+ )?Skipping step\.?"
            rf"(?:\s*Attempted loss scale: {_N}, reducing to (?P<scale>{_N}))?"
        ),
        hint=("OVERFLOW!", "overflow!", "Overflow detected"),
        fields={"scale": "train/loss_scale"},
        const={"train/overflow_skips": 1.0},
    ),
    LogFormat(
        id="fairseq-overflow",
        name="fairseq fp16 overflow",
        example="NOTE: gradient overflow detected, ignoring gradient, setting loss scale to: 64.0",
        pattern=(
            r"(?:gradient overflow detected, ignoring gradient|AMP: overflow detected), "
            rf"setting (?:loss )?scale to:?\s*(?P<scale>{_N})"
        ),
        hint=("overflow detected",),
        fields={"scale": "train/loss_scale"},
        const={"train/overflow_skips": 1.0},
    ),
    LogFormat(
        id="lr-change",
        name="learning-rate change messages (ReduceLROnPlateau in Keras and PyTorch, custom decay)",
        example="Epoch 3: ReduceLROnPlateau reducing learning rate to 1e-05.",
        # a message about a change, not a value at a step: 'Reducing learning rate 0.01 to 0.001'
        # names the old rate first. The engine keeps the count and the last new rate as facts
        # (log.lr_changes, log.lr_changed_to); no lr point, and the step axis does not move.
        pattern=(
            r"(?i:\b(?:reduc|decay|lower|decreas|drop|adjust|chang|cut|halv)\w*\s+(?:the\s+)?"
            r"(?:learning[ _]rate|lr)\b|\b(?:learning[ _]rate|lr)\s+(?:\w+\s+){0,3}?"
            r"(?:reduced|decayed|lowered|decreased|dropped|adjusted|changed|cut|halved)\b|"
            r"ReduceLROnPlateau\b(?=[^\n]{0,40}\bto\b))(?:[^\n]{0,80}?\bto\s*:?\s*(?P<to>"
            + _N
            + r"))?"
        ),
        # hints are the verbs, not 'lr' or 'learning_rate' (on most training lines: a regex per line cost ~15%)
        hint=(
            "educ",
            "EDUC",
            "ecay",
            "ECAY",
            "ower",
            "ecreas",
            "rop",
            "djust",
            "hang",
            "cut",
            "alv",
        ),
        kind="ignore",
    ),
    LogFormat(
        id="wandb-summary",
        name="wandb run summary printed at exit (`wandb:  key value`)",
        example="wandb:                                                              eval_loss 0.69995",
        pattern=rf"^wandb:\s+(?P<k>[A-Za-z][\w/.@-]*)\s+(?P<v>{_N})\s*$",
        hint=("wandb:",),
        kind="summary",
    ),
    LogFormat(
        id="table-row",
        name="result tables (`│ test_acc │ 0.91 │`, Lightning test results)",
        example="│         test_acc          │    0.9100000262260437     │",
        pattern=rf"^\s*[│|┃]\s*(?P<k>[A-Za-z][\w/.@ -]*?)\s*[│|┃]\s*(?P<v>{_N})\s*[│|┃]\s*$",
        hint=("│", "|", "┃"),
        kind="summary",
    ),
]

#: Generic ``key=value``, ``key: value`` and ``| key value |`` lines are read by the
#: engine after every catalog entry has declined the line; see docs/logs.md.
GENERIC_ID = "generic"

#: Catalogue entries per framework: the entries to switch off to measure how structure
#: inference alone reads that framework's logs (leave-one-framework-out;
#: ``LogParser(disabled_formats=["keras"])``, ``load_logs(..., disabled_formats=...)`` or the
#: ``MLAUDIT_LOG_DISABLE_FORMATS`` environment variable). ``tqdm`` is the bar reader of every
#: tqdm-drawing framework (Hugging Face, Lightning 1.x/2.x TQDMProgressBar, plain loops).
FRAMEWORK_FORMATS: dict[str, tuple[str, ...]] = {
    "tqdm": ("tqdm",),
    "hf": ("hf-train-summary", "hf-dict", "hf-metrics-block-header", "hf-metrics-block"),
    "keras": ("keras-epoch-header", "keras"),
    "lightning": ("lightning-checkpoint", "table-row"),
    "json": ("json-lines",),
    "megatron": ("megatron", "megatron-validation"),
    "fairseq": ("fairseq-inner", "fairseq-epoch", "fairseq-overflow"),
    "timm": ("timm-train", "timm-val", "swin-train"),
    "imagenet-example": (
        "imagenet-train",
        "imagenet-train-nototal",
        "imagenet-test-batch",
        "imagenet-val",
    ),
    "custom-pipe": ("pipe-epoch-step",),
    "pytorch-examples": ("pytorch-mnist", "pytorch-mnist-test"),
    "nanogpt": ("litgpt", "litgpt-val", "nanogpt-iter-rate", "nanogpt-eval-short", "nanogpt-eval"),
    "mmengine": ("mmengine-train", "mmengine-val"),
    "yolox": ("yolox",),
    "torchtune": ("torchtune",),
    "coco": ("coco-eval", "coco-eval-other"),
    "deepspeed": (
        "deepspeed-step",
        "deepspeed-throughput",
        "deepspeed-timers",
        "deepspeed-overflow",
    ),
    "tensorpack": ("tensorpack-epoch",),
    "torchvision": ("torchvision-metriclogger",),
    "apex": ("apex-overflow",),
    "wandb": ("wandb-summary",),
    "xgboost": (),
    "lightgbm": (),
    "catboost": ("catboost",),
}
