"""What the verdict rests on: the training signal examined, how the run ended, precision and
learning-rate evidence, and the confidence derived from all of it.

Everything here reads the run and the findings; nothing decides an outcome (that is
:mod:`.policy`). Three questions are answered:

1. **Is there a judgeable training signal?** (:func:`assess`) A learning series (training loss,
   validation loss, validation or training accuracy, resolved through the alias table) with at
   least :data:`MIN_TREND_POINTS` finite points *and* at least one learning detector that ran on
   it. Without one the verdict is ``unknown`` unless a runtime signature or the tracker's status
   says what happened (a crash is judged from its traceback, not from curves), or the final values
   of a run known to have ended do (:mod:`.final_values`: ``Basis.final_values``).
2. **How did the run end?** (:func:`ending`) The planned length (:mod:`mlaudit_core.plan`:
   ``max_steps``, ``MAX_ITER``, ``train_iters``, ``epochs``/``num_train_epochs``/``max_epochs`` in
   params and config files, the HF banner, ``Epoch k/N`` and ``step k/N`` counters in the console)
   against what was reached, an interrupt in the console
   (KeyboardInterrupt, SIGTERM), early stopping (a ``patience`` that explains the stop), and a
   checkpoint snapshot (a ``trainer_state.json`` saved mid-run, which is *not* evidence of a stop).
3. **Is there precision evidence / is the learning rate high?** (:func:`precision_evidence`,
   :func:`lr_assessment`) A precision cause is only named with fp16/bf16/AMP/loss-scale evidence;
   raising the learning rate is never advised when it is at or above the optimiser's typical value.

Confidence (:func:`confidence`) is derived from the evidence, not set per rule; the formula and its
sources are in its docstring and in docs/index.md.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np

from ..detectors import detector_for
from ..plan import NORMAL_END, cut_pass, first_positive_param, leaf, planned_lengths
from ..report import DetectorRun, Finding, LogEvidence, Severity
from ..roles import LR_PARAM_NAMES, Role, lr_param_name, normalise_key
from ..rundata import RunData
from .statements import stated_precision

#: Fewer finite points than this cannot show a trend: with one or two points the first and last
#: value are the whole series, and no learning detector of the catalogue can run (their
#: ``min_points`` are 5-20). An MLflow run with one point per metric (summary values only) and a
#: TensorBoard logdir with only ``hp_metric`` fall under this.
MIN_TREND_POINTS = 3

LEARNING_ROLES = (Role.TRAIN_LOSS, Role.VAL_LOSS, Role.VAL_ACCURACY, Role.TRAIN_ACCURACY)
LEARNING_FAMILIES = ("optimization", "generalization")

#: A run that reached less than this share of its planned length stopped early (a 5% allowance
#: covers the last logging interval and 0/1-based epoch counters; HF logs epoch 2.99 of 3).
COMPLETE_SHARE = 0.95
#: ... and so did a run within that 5% whose shortfall is more than this many of its own logging
#: intervals (the counter's rise between records: 100 steps for a console printing every 100 steps,
#: one epoch for an epoch counter): the last logging interval and a 0/1-based count explain at most
#: two, never 119 (own corpus f11b2-13: ``Train step:605700/617600`` every 100 steps, then nothing).
MAX_MISSING_INTERVALS = 2
#: ... and is at least this share of the plan: plans computed from a dataset's size differ from the
#: steps the loop runs by a batch per epoch (``drop_last``, a last partial batch), under 1% of an
#: epoch of 100 batches or more.
MIN_MISSING_SHARE = 0.01


@dataclass
class Basis:
    """The evidence a verdict can rest on (a summary of what was examined)."""

    signals: dict[str, tuple[str, int]] = field(
        default_factory=dict
    )  # role -> (key, finite points)
    learning_detectors_ran: list[str] = field(default_factory=list)
    agent_reward: bool = False  # an episode reward series the policy's reward rule judges
    signature: list[str] = field(default_factory=list)  # runtime signature codes at warning+
    console_lines: int = 0
    n_metrics: int = 0
    #: the final values a final-values rule reads (:func:`.final_values.readable`), with no curve
    final_values: str | None = None

    @property
    def points(self) -> int:
        return max((n for _, n in self.signals.values()), default=0)

    @property
    def examined(self) -> bool:
        """A learning signal was examined: a judgeable curve, or final values a rule reads."""
        return self.judgeable or self.final_values is not None

    @property
    def judgeable(self) -> bool:
        return self.agent_reward or (
            self.points >= MIN_TREND_POINTS and bool(self.learning_detectors_ran)
        )

    def missing(self, run: RunData) -> list[str]:
        """Exactly what is missing for a learning verdict, one sentence each."""
        out: list[str] = []
        keys = run.metrics.keys
        if not keys:
            out.append("no metric was logged at all")
        elif not self.signals:
            shown = ", ".join(sorted(keys)[:8]) + (" ..." if len(keys) > 8 else "")
            out.append(
                f"none of the {len(keys)} logged metrics ({shown}) is a training loss, validation loss "
                "or accuracy mlaudit recognises"
            )
        else:
            few = [
                f"{k} has {n} finite point{'s' if n != 1 else ''}"
                for k, n in self.signals.values()
                if n < MIN_TREND_POINTS
            ]
            if few and self.points < MIN_TREND_POINTS:
                out.append(
                    "too few points for any trend ("
                    + "; ".join(few[:4])
                    + f"; at least {MIN_TREND_POINTS} are needed): only summary values were logged"
                )
            elif not self.learning_detectors_ran:
                out.append("no learning detector could run on the logged series (see unknowns)")
        if not self.console_lines and not self.signature:
            out.append("no console log was attached, so crash signatures could not be checked")
        return out


def signals(run: RunData) -> dict[str, tuple[str, int]]:
    out: dict[str, tuple[str, int]] = {}
    for role in LEARNING_ROLES:
        key = run.key_for(role)
        if key is None:
            continue
        s = run.metrics.series(key)
        out[role.value] = (key, int(np.isfinite(s.values).sum()))
    return out


def assess(run: RunData, findings: list[Finding], det_runs: list[DetectorRun]) -> Basis:
    from ..detectors import registry

    reg = registry()
    ran = [
        d.code
        for d in det_runs
        if d.status == "ran"
        and d.code in reg
        and reg[d.code].family in LEARNING_FAMILIES
        and any(r in LEARNING_ROLES for r in getattr(reg[d.code], "needs", ()))
    ]
    sig = sorted(
        {
            f.code
            for f in findings
            if f.family == "runtime" and f.severity.rank >= Severity.WARNING.rank
        }
    )
    from .final_values import readable
    from .policy import agent_reward

    return Basis(
        signals=signals(run),
        learning_detectors_ran=ran,
        agent_reward=agent_reward(run) is not None,
        signature=sig,
        console_lines=len(run.console),
        n_metrics=len(run.metrics.keys),
        final_values=readable(run),
    )


#: Console lines Lightning's Trainer prints at start-up or at its end (``GPU available: False, used:
#: False``, ``TPU available: ...``, ```Trainer.fit` stopped: ...``; lightning 2.x
#: ``trainer/connectors/accelerator_connector.py`` and ``trainer/trainer.py``).
_LIGHTNING_LINE = re.compile(
    r"^GPU available: (?:True|False)|^TPU available: |`Trainer\.fit` stopped"
)


def framework_files(run: RunData) -> tuple[str, str] | None:
    """(action, why) pointing at the metric files a framework writes by default, when the console
    shows that framework: Lightning's default logger writes ``lightning_logs/version_N`` (TensorBoard
    event files, or ``metrics.csv`` with a CSVLogger) next to the script; ``None`` otherwise."""
    if any(_LIGHTNING_LINE.search(c.text) for c in run.console[:400]):
        return (
            "Audit the metric files Lightning wrote by default: mlaudit lightning_logs/version_N (the "
            "folder of this run: TensorBoard event files, or metrics.csv with a CSVLogger, under the "
            "logger's save_dir)",
            "Lightning logs every self.log(...) value there; its progress bar shows only the last ones",
        )
    return None


def what_to_log(run: RunData, basis: Basis) -> list[tuple[str, str]]:
    """(action, why) pairs that would turn an abstention into a verdict: the files the run's
    framework wrote by default (:func:`framework_files`) first, else what to log."""
    files = framework_files(run)
    if files is not None:
        return [files] + (
            []
            if basis.console_lines
            else [
                (
                    "Attach the console log (mlaudit logs FILE, or the tracker's output.log artifact)",
                    "crash, OOM and numerical signatures are read from it",
                )
            ]
        )
    out = [
        (
            "Log the training loss every few steps (and a validation loss or accuracy per evaluation) "
            "under a recognised name (train/loss, loss, val_loss, eval/accuracy; docs/detectors.md lists "
            "the aliases) or map yours with [tool.mlaudit.aliases]",
            "a learning verdict needs a per-step series; summary values or unrecognised names cannot be judged",
        )
    ]
    if basis.signals and basis.points < MIN_TREND_POINTS:
        out.insert(
            0,
            (
                "Log the loss as a series (a value per logging step, e.g. mlflow.log_metric(key, v, "
                "step=step)), not only its final value",
                f"a trend needs at least {MIN_TREND_POINTS} points; the run holds only summary values",
            ),
        )
    if not basis.console_lines:
        out.append(
            (
                "Attach the console log (mlaudit logs FILE, or the tracker's output.log artifact)",
                "crash, OOM and numerical signatures are read from it",
            )
        )
    return out


# --- how the run ended ----------------------------------------------------------------------------

_PATIENCE = ("patience", "early_stopping_patience", "es_patience")
#: The smallest change an early-stopping callback counts as an improvement: Lightning/Keras
#: ``min_delta``, HF ``early_stopping_threshold``.
_MIN_DELTA = ("min_delta", "early_stopping_threshold", "es_min_delta")


def _patience_counter(values: np.ndarray, higher_is_better: bool, min_delta: float) -> int:
    """Evaluations since the last one that beat the best so far by more than ``min_delta``, counted
    as the early-stopping callbacks count them (Lightning/Keras ``EarlyStopping``, HF
    ``EarlyStoppingCallback``: an evaluation not better than best - min_delta adds one)."""
    sign = 1.0 if higher_is_better else -1.0
    best, wait = None, 0
    for v in values:
        x = sign * float(v)
        if best is None or x > best + abs(min_delta):
            best, wait = x, 0
        else:
            wait += 1
    return wait


#: A progress bar short of its total with time still to go, as the last line of a console: tqdm
#: ``417/586 [47:52<27:15, 9.68s/it]`` (elapsed<remaining), Keras ``512/1875 [====>....] - ETA: 6s``.
_OPEN_BAR = re.compile(
    r"(?<![\w/.])(?P<n>\d+)\s*/\s*(?P<m>\d+)\s*\[(?:[^\]]*<\s*\d|[=>.\s]*\]\s*-\s*ETA)"
)


def open_bar(lines: list[str]) -> str | None:
    """The last non-blank console line when it is a progress bar short of its total with time still
    to go (:data:`_OPEN_BAR`), else None: a console that ends there was captured while the bar ran (a
    log pasted from a running job); a process killed without a word ends the same way, so this is no
    evidence of a stop either way. Not when the framework's end-of-training line
    (:data:`~mlaudit_core.plan.NORMAL_END`, HF's ``train_runtime`` dict) comes among the last 20
    lines with nothing but bar redraws after it: tqdm re-renders a bar it closes when ``train()``
    returns, so that bar is the finished loop's last state (an early stop leaves it short of its
    total), not a run captured while it went on."""
    tail = lines[-20:]
    last = next((t for t in reversed(tail) if t.strip()), None)
    if last is None:
        return None
    end = next((i for i in range(len(tail) - 1, -1, -1) if NORMAL_END.search(tail[i])), None)
    if end is not None and all(not t.strip() or _OPEN_BAR.search(t) for t in tail[end + 1 :]):
        return None
    found = list(_OPEN_BAR.finditer(last))
    m = found[-1] if found else None  # the bar's last redraw on the line
    if m is None or not 0 < int(m["n"]) < int(m["m"]):
        return None
    # only the bar's last redraw: tqdm writes its redraws to a file on one line, each after a '\r'
    return last[last.rfind("\r", 0, m.start()) + 1 :].strip()[-160:]


#: An interrupt (Ctrl-C, SIGTERM) or the shell's report of a fatal signal that ended the process (bash's
#: strsignal texts for SIGSEGV, SIGABRT, SIGILL, SIGFPE, as a whole line, with or without "(core dumped)",
#: after bash's "line N: PID" and before the padded command line bash adds for a script's child).
_INTERRUPT = re.compile(
    r"\bKeyboardInterrupt\b|\bSIGTERM\b|signal 15\b|^Terminated\b|\bSIGINT\b|"
    r"^(?:.*\bline \d+:\s+\d+\s+)?(?:Segmentation fault|Aborted|Illegal instruction|"
    r"Floating point exception)(?: \(core dumped\))?(?:\s{2,}\S.*)?\s*$",
    re.M,
)
#: A line saying the training loop stopped itself because the monitored metric stopped improving:
#: Keras/Lightning/HF "early stopping", OpenNMT-py "Early Stop!", "stopped early", CatBoost's "Stopped by
#: overfitting detector" (catboost 1.2 its early_stopping_rounds / od_wait), AllenNLP's "Ran out of
#: patience", and the prose of
#: research code ("has not improved for 3 epochs. Stopping training.", "no improvement ... stop").
_EARLY_STOP_LINE = re.compile(
    r"early[ _-]?stop(?:ping|ped)?\b|EarlyStopping|Stopping training early|"
    r"stopped early|no improvement observed in last \d+ epochs|Stopped by overfitting detector|"
    # AllenNLP's Trainer (allennlp/training/trainer.py: "Ran out of patience.  Stopping training.")
    r"\bran out of patience\b|"
    r"(?:not|no longer|did not|didn't) improve\w*\b.{0,80}\bstop(?:ping|ped|s)?\b",
    re.I,
)
#: A configuration echo that names early stopping without it having happened (``early_stopping=True``,
#: ``'early_stopping_patience': 3``, ``--early_stop 10``): not a report that the run stopped.
_EARLY_STOP_CONFIG = re.compile(
    r"early[ _-]?stop\w*['\"]?\s*(?:[=:]|\s)\s*['\"]?(?:true|false|none|-?\d)|"
    r"early[ _-]?stop\w*_(?:patience|threshold|delta|rounds|metric|mode)",
    re.I,
)


def early_stop_line(text: str) -> bool:
    """True when console line ``text`` reports that training stopped early (not a config echo)."""
    return bool(_EARLY_STOP_LINE.search(text)) and not _EARLY_STOP_CONFIG.search(text)


#: A stop announced, not a counter towards one: ``stopping the fitting``, ``Early stopping``, ``Stopping
#: training``; pytorchtools' ``EarlyStopping counter: 2 out of 7`` counts, it does not stop.
_STOP_WORD = re.compile(r"\bstop(?:ping|ped|s)?\b", re.I)
_EPOCH_NO = re.compile(r"\bepoch\s*[:\[(#]?\s*(\d+)\b", re.I)
#: Epoch records after an announced stop that show the loop went on: two, each past the stop's epoch.
STOP_IGNORED_EPOCHS = 2


#: How near the end of the console an announced early stop must be to be the run's end: the lines a
#: framework prints after it (best weights restored, the model archived, a final metrics block).
STOP_AT_END_LINES = 30


def stop_at_end(text: list[str]) -> str | None:
    """The announced early stop (:func:`early_stop_line` with a stop word, not a counter) among the last
    :data:`STOP_AT_END_LINES` lines of console ``text`` with no epoch record after it: the training ended
    by its own stopping rule. ``None`` otherwise."""
    tail = text[-STOP_AT_END_LINES:]
    for i in range(len(tail) - 1, -1, -1):
        t = tail[i]
        if early_stop_line(t) and _STOP_WORD.search(t) and "counter" not in t.lower():
            if any(_EPOCH_NO.search(u) for u in tail[i + 1 :]):
                return None
            return t.strip()[:200]
    return None


def stop_not_honoured(text: list[str]) -> tuple[str, int, int] | None:
    """``(stop line, epoch at the stop, last epoch)`` when console ``text`` announces that training stops
    early (:func:`early_stop_line` with a stop word, not a counter) and then logs at least
    :data:`STOP_IGNORED_EPOCHS` more epochs whose numbers go on past the stop's epoch (the count did not
    start again, as a new fold or a new launch would): the stop the callback announced was not carried out
    (the flag it sets is not read by the loop). ``None`` otherwise, and when no epoch number precedes the
    stop."""
    for i, t in enumerate(text):
        if not (early_stop_line(t) and _STOP_WORD.search(t)) or "counter" in t.lower():
            continue
        before = [int(m.group(1)) for u in text[: i + 1] if (m := _EPOCH_NO.search(u))]
        if not before:
            return None
        at = before[-1]
        after = [int(m.group(1)) for u in text[i + 1 :] if (m := _EPOCH_NO.search(u))]
        if len(after) < STOP_IGNORED_EPOCHS or after[0] <= at:
            return None
        if any(b < a for a, b in zip(after, after[1:])):
            return None  # the count starts again: another fold or launch
        return t.strip()[:200], at, after[-1]
    return None


#: The line a framework prints when training starts and the one it prints when training ends
#: normally. A log holding the start banner but not the end line stopped before its end (a log
#: fragment without the banner is not judged this way: its end may simply be cut off).
_END_LINES = {
    "huggingface": (
        # the Trainer's summary dict, or the example scripts of transformers 2.x-3.x (run_glue.py,
        # run_squad.py: ``logger.info(" global_step = %s, average loss = %s", ...)`` once train() returns)
        re.compile(
            r"'train_runtime'|\"train_runtime\"|Training completed|\bglobal_step = \d+, average loss = "
        ),
        re.compile(r"\*\*\*\*\* Running training \*\*\*\*\*"),
    ),
    "detectron2": (
        re.compile(r"Overall training speed|Total training time"),
        re.compile(r"Starting training from iteration"),
    ),
}


def superseded_crash(run: RunData, f: Finding) -> str | None:
    """The end-of-training line (:data:`~mlaudit_core.plan.NORMAL_END`) that follows crash finding ``f``'s console line
    in the same source, or a note that at least :data:`MIN_PROGRESS_LINES` training progress lines follow it
    (a signature ends a run only when no progress follows it), or ``None``. A log that people append to holds earlier attempts: a traceback
    followed later by the trainer's normal end line belongs to an attempt that did not end the run
    (own corpus log13: 13 failed YOLOX launches, OOMs included, then one that ran 300/300 epochs and
    printed 'Training of experiment is done'). Only a supersedable crash signature
    (``Detector.supersedable_crash``: out of memory, collective timeout, worker death, Python error,
    hardware fault, disk full, killed) is looked at."""
    if not detector_for(f.code).supersedable_crash:
        return None
    logs = [(e.source, e.line) for e in f.evidence if isinstance(e, LogEvidence)]
    if not logs or not run.console:
        return None
    src, ln = max(logs, key=lambda t: t[1])
    # a Python traceback headed by threading's 'Exception in thread NAME:' (any crash signature read there)
    in_thread = _thread_exception(run, src, ln)
    if in_thread is not None:
        return in_thread
    progress: list[str] = []
    for c in reversed(run.console):
        if c.source == src and c.lineno <= ln:
            break
        if c.source == src and NORMAL_END.search(c.text):
            return c.text.strip()[:160]
        if c.source == src and _PROGRESS.search(c.text) and not _NOT_PROGRESS.search(c.text):
            progress.append(c.text.strip())
    if len(progress) >= MIN_PROGRESS_LINES:
        # training went on after the signature: a warning-level heartbeat/timeout line (torch elastic's
        # 'failed to send a keep-alive heartbeat ... RendezvousTimeoutError', own corpus f5b1-19: 8 more
        # epochs after it), a recovered OOM, or an earlier launch's crash in an appended log
        return f"training went on after it ({len(progress)} progress lines, the last: {progress[0][:100]})"
    return None


#: The header CPython's default ``threading.excepthook`` prints above the traceback of an exception that
#: ended a thread other than the main one (Lib/threading.py ``_make_invoke_excepthook``:
#: ``Exception in thread {name}:``); ``Exception ignored in thread``-style lines are the same case.
_THREAD_HEADER = re.compile(r"^Exception (?:ignored )?in thread ([^:]{1,120}):?\s*$")
#: Lines of a traceback block (frames, the caret markers, the exception line itself).
_TRACEBACK_LINE = re.compile(r"^\s*(?:Traceback \(most recent call last\)|File \"|\^|~)|^\s{2,}\S")


def _thread_exception(run: RunData, src: str, ln: int) -> str | None:
    """A note when the exception at ``src:ln`` was raised in a thread other than the main one (its
    traceback is headed ``Exception in thread NAME:``) and the console goes on with at least
    :data:`MIN_PROGRESS_LINES` lines of output after it: the exception ended that thread, not the
    process (own corpus f6b3-06: subprocess's ``_readerthread`` failing to decode a tool's output on a
    Windows console, then the training's progress bars)."""
    lines = [c for c in run.console if c.source == src]
    at = next((i for i, c in enumerate(lines) if c.lineno == ln), None)
    if at is None:
        return None
    i = at - 1
    while i >= 0 and _TRACEBACK_LINE.search(lines[i].text):
        i -= 1
    m = _THREAD_HEADER.match(lines[i].text.strip()) if i >= 0 else None
    if m is None or m[1].strip() in ("MainThread",):
        return None
    after = [c.text.strip() for c in lines[at + 1 :] if c.text.strip()]
    if len(after) < MIN_PROGRESS_LINES:
        return None
    return (
        f"raised in thread {m[1].strip()}, not the main thread: it ended that thread only, and the process "
        f"went on ({len(after)} lines after it, the last: {after[-1][:100]})"
    )


#: A training progress line: a counter or a loss/accuracy name followed closely by its number
#: ('Epoch 42 @ ...', 'step 300 | loss 2.1', 'loss: 0.53', 'Iter [65/3000]').
_PROGRESS = re.compile(r"\b(?:epoch|step|iter(?:ation)?|loss|acc(?:uracy)?)\b\W{0,4}[-+]?\d", re.I)
#: Lines that mention those words without being progress: traceback frames, errors, warnings.
_NOT_PROGRESS = re.compile(
    r"Traceback|^\s*File \"|Error\b|Exception\b|WARNING|Warning:|^\s*\^", re.I
)
#: Progress lines after a crash signature that show the run went on (more than a stray line of another
#: rank flushed after the failure: three records).
MIN_PROGRESS_LINES = 3


@dataclass
class Ending:
    """How the run ended, from params, series and console (see :func:`ending`)."""

    planned: float | None = None
    planned_key: str | None = None
    unit: str = "step"  # "step" or "epoch"
    reached: float | None = None
    interval: float | None = None  # the logging interval of the count that measured ``reached``
    plan_text: str | None = None  # the console line that stated the plan
    interrupt: str | None = None  # the console line
    early_stopped: str | None = None  # why a short run is an early stop, not a crash
    snapshot: str | None = None  # a mid-run checkpoint: short is expected
    missing_end_line: str | None = None  # framework whose end-of-training line is absent
    in_warmup: str | None = None  # the LR rose at every step to the end: no schedule ends in warmup
    open_bar: str | None = None  # the console ends inside a progress bar with time to go
    open_epoch: str | None = None  # the console ends with a new epoch's header and nothing of it
    cut_epoch: str | None = None  # the series end inside an epoch (see :func:`cut_epoch`)
    excerpt: str | None = None  # why the console's end is where a paste ends, not the run's end

    @property
    def interrupt_kind(self) -> str | None:
        """What the console's interrupt line names: ``"sigint"`` (KeyboardInterrupt, SIGINT: a
        Ctrl-C), ``"sigterm"`` (SIGTERM, signal 15, the shell's ``Terminated``: a time limit, a
        preemption, ``timeout`` or ``kill``), ``"fatal"`` (the shell's report of a segfault, an
        abort, an illegal instruction or a floating point exception); ``None`` without one."""
        if not self.interrupt:
            return None
        if re.search(r"\bKeyboardInterrupt\b|\bSIGINT\b", self.interrupt):
            return "sigint"
        if re.search(r"\bSIGTERM\b|signal 15\b|^\s*Terminated\b", self.interrupt):
            return "sigterm"
        return "fatal"

    @property
    def share(self) -> float | None:
        if self.planned and self.reached is not None and self.planned > 0:
            return self.reached / self.planned
        return None

    @property
    def missing_intervals(self) -> float | None:
        """The shortfall of the plan in logging intervals (``None`` without a plan, a reached
        length or an interval)."""
        if self.planned is None or self.reached is None or not self.interval:
            return None
        return (self.planned - self.reached) / self.interval

    @property
    def short(self) -> bool:
        """The run reached less than :data:`COMPLETE_SHARE` of its plan, or less than all of it
        with a shortfall of more than :data:`MAX_MISSING_INTERVALS` logging intervals that is at
        least :data:`MIN_MISSING_SHARE` of the plan."""
        s = self.share
        if s is None:
            return False
        if s < COMPLETE_SHARE:
            return True
        gap = self.missing_intervals
        return gap is not None and gap > MAX_MISSING_INTERVALS and 1.0 - s >= MIN_MISSING_SHARE

    @property
    def stopped(self) -> bool:
        """Positive evidence that the run stopped before its end (not a snapshot, not early stopping)."""
        if self.snapshot or self.early_stopped:
            return False
        if (self.open_bar or self.excerpt) and not self.interrupt:
            # the text ends mid-bar (a capture of a running job, or a silent kill) or where a report's
            # paste was cut: not a stop to report
            return False
        # in_warmup is reported, never decisive: detectron2's default warmup (1000 iterations) is
        # longer than many complete fine-tunes (shared/realworld tb01: 300/300 iterations, healthy)
        return bool(
            self.interrupt
            or self.short
            or self.missing_end_line
            or self.open_epoch
            or self.cut_epoch
        )

    def describe_plan(self) -> str:
        """The plan, where it was read and how far the run got: ``it reached step 605700 of the
        617600 planned (printed `step:605700/617600`, 98%, 119 logging intervals of 100
        short)``."""
        where = f"printed `{self.plan_text}`" if self.plan_text else str(self.planned_key)
        share = 100 * (self.share or 0.0)
        gap = self.missing_intervals
        tail = f"{share:.0f}%"
        if self.short and share >= 100 * COMPLETE_SHARE and gap is not None:
            tail += f", {gap:.0f} logging intervals of {self.interval:g} short"
        return f"it reached {self.unit} {self.reached:g} of the {self.planned:g} planned ({where}, {tail})"

    def describe(self) -> str:
        parts = []
        if self.short:
            parts.append(self.describe_plan())
        if self.interrupt:
            parts.append(
                f"the console shows an interrupt or a fatal signal ({self.interrupt.strip()[:120]})"
            )
        if self.in_warmup:
            parts.append(self.in_warmup)
        if self.missing_end_line:
            parts.append(f"the {self.missing_end_line} log stops without its end-of-training line")
        if self.open_epoch:
            parts.append(
                f"the log ends with the header of a new epoch ({self.open_epoch}) and nothing of that "
                "epoch after it: it was cut while the epoch ran"
            )
        if self.cut_epoch:
            parts.append(self.cut_epoch)
        return "; ".join(parts)


def _param(run: RunData, names: tuple[str, ...]) -> tuple[str, float] | None:
    """The first param whose last dotted component (normalised) is one of ``names``, as a number."""

    def leaf(k: str) -> str | None:
        x = normalise_key(k).split("/")[-1]
        return x if x in names else None

    return _positive_param(run, leaf, names)


def _positive_param(run: RunData, name_of, order: tuple[str, ...]) -> tuple[str, float] | None:
    """``(key, value)`` of the param whose ``name_of(key)`` comes first in ``order`` and whose
    value is a finite positive number (the first such key per name wins), else None."""
    return first_positive_param(run.params, name_of, order)


#: Metrics that count optimisation steps in their value. A tracker's own step axis need not be in
#: iterations: W&B's ``_step`` counts ``wandb.log`` calls, so a nanoGPT run logging every 250
#: iterations ends at ``_step`` 20 of ``max_iters`` 5000 with ``iter`` = 5000 (own corpus wb11).
_STEP_COUNTERS = (
    "iter",
    "iters",
    "iteration",
    "iterations",
    "global_step",
    "num_steps",
    "trainer/global_step",
    "train/global_step",
    "step",
)


def _reached_steps(run: RunData, count_from_zero: bool = True) -> float | None:
    """The number of optimisation steps the run reached: the largest step of its training loss,
    learning rate or validation loss, or of a step counter it logs as a metric. A counter whose first
    record is at step 0 is 0-based (Lightning's CSVLogger, a ``for step in range(n)`` loop logging
    ``step``): its last record at step k is step k + 1 of the plan (own corpus f14b1-04: steps 0-3 of
    ``max_steps`` 4), as :func:`_reached_epochs` counts a 0-based epoch; ``count_from_zero`` False gives
    the largest step as logged."""
    best = None
    zero_based = False
    for role in (Role.TRAIN_LOSS, Role.LEARNING_RATE, Role.VAL_LOSS):
        k = run.key_for(role)
        if k:
            s = run.metrics.series(k)
            if len(s):
                best = max(best or 0.0, float(s.steps.max()))
                zero_based = zero_based or (role is Role.TRAIN_LOSS and float(s.steps.min()) == 0.0)
    if best is not None and count_from_zero and zero_based and best >= 1:
        best += 1.0
    for k in run.metrics.keys:
        if k.lower() in _STEP_COUNTERS or k.lower().rsplit("/", 1)[-1] in (
            "iter",
            "iteration",
            "global_step",
        ):
            v = run.metrics.series(k).finite().values
            if v.size and best is not None and float(v.max()) > best:
                best = float(v.max())
    return best


def _steps_advance(run: RunData) -> bool:
    """Whether some metric of the run has a point past step 0 (none at all: ``True``, nothing to
    judge by)."""
    if not run.metrics.keys:
        return True
    for k in run.metrics.keys:
        st = run.metrics.series(k).steps
        if st.size and float(st.max()) > 0:
            return True
    return False


def _reached_epochs(run: RunData) -> float | None:
    k = run.key_for(Role.EPOCH)
    if k:
        s = run.metrics.series(k).finite()
        if len(s):
            top = float(s.values.max())
            # an integer epoch counter is 0-based in Lightning/Keras/YOLOv5 (the last epoch of 20
            # is logged as 19); HF's fractional epoch ends at 3.0. +1 errs towards "complete".
            ints = bool(np.all(np.equal(np.mod(s.values, 1), 0)))
            return top + 1 if ints else top
    if run.params.get("log.step_axis") == "epoch":
        st = _reached_steps(run, count_from_zero=False)
        if st is not None:
            return st + 1  # results.csv / Keras epochs are 0-based rows: row k is epoch k+1
    return _summary_epoch(run)


def _summary_epoch(run: RunData) -> float | None:
    """The epoch the tracker's end-of-run summary holds (W&B ``wandb-summary.json``'s ``epoch``, kept as
    the ``summary.epoch`` param when the history is cut or absent): the last epoch the run logged, a
    witness of how far it got that no history series carries (own corpus f10b1-13: a truncated
    ``.wandb`` history stops in epoch 1, its summary says epoch 20 of 20, iteration 30820 = 20 x 1541).
    An integer is read as 0-based, like an epoch series (+1 errs towards complete)."""
    v = run.params.get("summary.epoch")
    try:
        x = float(v) if v is not None else math.nan
    except (TypeError, ValueError):
        return None
    if not math.isfinite(x) or x < 0:
        return None
    return x + 1 if x == int(x) else x


#: Keys of the Hugging Face Trainer's end-of-training summary: ``Trainer.train`` logs them once, when
#: the training loop returns (after max_steps, or earlier when a callback such as EarlyStoppingCallback
#: stopped it), never from a run killed before it returned (tests/detectors/test_roles_real_runs.py).
_END_SUMMARY_KEYS = ("train_runtime", "train_samples_per_second", "train_steps_per_second")


def _end_summary(run: RunData) -> str | None:
    """The end-of-training summary a tracker holds (HF ``train_runtime`` as a metric, e.g.
    TensorBoard ``train/train_runtime``, or trainer_state's ``final.train_runtime`` param): the
    training returned normally, so a run short of its plan stopped by itself."""
    for k in run.metrics.keys:
        if normalise_key(k).split("/")[-1] in _END_SUMMARY_KEYS:
            return f"the run logged the Trainer's end-of-training summary ({k}): training returned normally"
    for k in run.params:
        if k.startswith("final.") and k[len("final.") :] in _END_SUMMARY_KEYS:
            return f"the run holds the Trainer's end-of-training summary ({k}): training returned normally"
    return None


def _val_series(run: RunData):
    for role in (Role.VAL_ACCURACY, Role.VAL_LOSS):
        k = run.key_for(role)
        if k:
            s = run.metrics.series(k).by_step().finite()
            if len(s) >= 2:
                return role, s
    return None, None


def ending(run: RunData, findings: list[Finding]) -> Ending:
    """Read the planned length, the length reached and the console's ending.

    Returns an :class:`Ending`; ``stopped`` is True only with positive evidence (a shortfall of
    more than 5% of the plan, an interrupt line, or a framework log missing its end line), and
    never for a mid-run checkpoint snapshot (HF ``trainer_state.json``, shared/realworld README)
    or a stop that the run's own early-stopping patience explains. The steps, in order:
    :func:`_read_notes`, :func:`_read_plan`, :func:`_read_warmup`, the interrupt and open bar of
    the console, :func:`_read_early_stop`, :func:`_read_patience`, :func:`_read_missing_end_line`,
    then where the record ends inside a pass: :func:`open_epoch`, :func:`cut_epoch`,
    :func:`~mlaudit_core.plan.cut_pass` (a per-pass batch counter) and, for a run short of its plan or
    without one, :func:`cut_training_epoch`.
    """
    e = Ending()
    _read_notes(run, e)
    text = [c.text for c in run.console]
    _read_plan(run, e)
    _read_warmup(run, e)
    for t in text[-200:]:
        if _INTERRUPT.search(t):
            e.interrupt = t
            break
    e.open_bar = open_bar(text)
    _read_early_stop(run, e, text)
    _read_patience(run, e)
    _read_booster_stop(run, e)
    _read_missing_end_line(run, e, text)
    if not e.interrupt and not e.early_stopped:
        e.open_epoch = open_epoch(text)
        e.cut_epoch = e.cut_epoch or cut_epoch(run) or cut_pass(text)
        if not e.cut_epoch and (e.planned is None or e.short):
            # a run that reached its plan may end inside an epoch (a step budget)
            e.cut_epoch = cut_training_epoch(run)
    e.excerpt = excerpt(run)
    return e


def excerpt(run: RunData) -> str | None:
    """Why the console's last line is where a pasted text ends rather than where the run ended, or
    ``None``: an elision mark on a line of its own (``[...]``, ``[snip]``, ``......``;
    :data:`mlaudit_core.signatures.ELISION_LINE`) shows the reporter cut the paste, and a report's
    thread (:func:`.statements.is_report`) that never says the run stopped, hung or failed
    (:func:`.statements.stated_stop`) pastes lines to show a symptom, not the run's end. Either
    way a shortfall of the plan, a missing end line or an epoch header as the last line is the
    paste's end, no evidence of a stop (reports b17-01, b20-02, b2-15: all read as stopped
    before this; an interrupt line is still one)."""
    from ..signatures import ELISION_LINE
    from .statements import is_report, stated_stop

    for cl in run.console:
        if ELISION_LINE.match(cl.text):
            return f"the text is an excerpt: the paste was cut at {cl.source}:{cl.lineno} ({cl.text.strip()})"
    if is_report(run.params) and stated_stop(run.params) is None:
        return (
            "the text was pasted in a report whose thread never says the run stopped, hung or failed: "
            "its last line is where the paste ends"
        )
    return None


#: A line that is only an epoch header, after an optional timestamp: ``epoch:  176`` (nnU-Net),
#: ``Epoch 12/200``, ``=== Epoch 3 ===``, ``[Epoch 4]``.
_EPOCH_HEADER = re.compile(
    r"^(?:[\d\-/: .,T]+[:|\]]?\s*)?[=\-#*\[\s]*epoch\s*[:=#]?\s*(\d+)\s*(?:(?:/|of)\s*\d+)?\s*[\]:=\-#*\s]*$",
    re.I,
)


def open_epoch(lines: list[str]) -> str | None:
    """The last non-blank console line when it is an epoch header (:data:`_EPOCH_HEADER`) that
    opened each earlier epoch too (>= 2 headers, the one before it followed by other lines) and
    nothing follows it, else None. A loop prints the header of an epoch only when it starts that
    epoch, so a log that ends with it was cut while the epoch ran (a job killed at its time limit,
    a silent kill, or a capture of a running job), never at the end of its training (own corpus
    f7b1-03: nnU-Net's ``epoch:  176`` as the last line after 48 h, epoch 176 of its 1000)."""
    body = [t.strip() for t in lines[-5000:] if t.strip()]
    if len(body) < 3:
        return None
    m = _EPOCH_HEADER.match(body[-1])
    if m is None:
        return None
    prev = next((i for i in range(len(body) - 2, -1, -1) if _EPOCH_HEADER.match(body[i])), None)
    if prev is None or prev == len(body) - 2:
        return None
    return body[-1][-80:]


def cut_epoch(run: RunData) -> str | None:
    """Why the series end inside an epoch, else ``None``: every epoch before the last (>= 1) logged
    training-loss records and ended with a held-out evaluation, and the last epoch logged fewer
    training-loss records than the fewest of them minus one (a logging interval that does not divide
    the epoch moves a record at most one way) and no evaluation. A loop that evaluates at the end of
    every epoch (Lightning's default ``check_val_every_n_epoch=1``, a Keras ``validation_data``) ends a
    finished run with that epoch's evaluation, so a last epoch short of its records and of its
    evaluation was cut while it ran (own corpus f17b1-02: a Lightning CSV with 15 training rows and a
    validation row in epoch 0, then one training row of epoch 1). An integer epoch series and a
    training loss at >= 2 steps are needed (HF's fractional epoch is not counted in whole epochs)."""
    ek, tk = run.key_for(Role.EPOCH), run.key_for(Role.TRAIN_LOSS)
    vk = run.key_for(Role.VAL_LOSS) or run.key_for(Role.VAL_ACCURACY)
    if not (ek and tk and vk):
        return None
    es = run.metrics.series(ek).by_step().finite()
    ts = run.metrics.series(tk).by_step().finite()
    vs = run.metrics.series(vk).by_step().finite()
    if len(es) < 2 or len(ts) < 2 or not len(vs):
        return None
    if not bool(np.all(np.equal(np.mod(es.values, 1), 0))) or np.any(np.diff(es.values) < 0):
        return None

    def epoch_at(steps: np.ndarray) -> np.ndarray:
        i = np.searchsorted(es.steps, steps, side="right") - 1
        out = np.full(steps.shape, np.nan)
        ok = i >= 0
        out[ok] = es.values[i[ok]]
        return out

    te, ve = epoch_at(ts.steps), epoch_at(vs.steps)
    if np.isnan(te).any():
        return None
    last = float(te[-1])
    earlier = sorted({float(x) for x in te if x < last})
    if not earlier:
        return None
    counts = [int(np.sum(te == x)) for x in earlier]
    n_last = int(np.sum(te == last))
    evaluated = {float(x) for x in ve if not np.isnan(x)}
    if last in evaluated or not all(x in evaluated for x in earlier):
        return None
    if n_last >= min(counts) - 1:
        return None
    return (
        f"the last epoch ({last:g}) holds {n_last} {tk} record(s) against at least {min(counts)} in each "
        f"earlier epoch, and none of the held-out evaluations ({vk}) every earlier epoch ended with: "
        "the run was cut while that epoch ran"
    )


#: Complete epochs a run without a held-out evaluation must show before its last epoch's records are
#: compared with theirs (with an evaluation, one is enough: the evaluation marks each epoch's end).
MIN_COMPLETE_EPOCHS = 2


def cut_training_epoch(run: RunData) -> str | None:
    """:func:`cut_epoch` for a run that logs no held-out evaluation (``None`` with one, or without an
    epoch series and a training loss; the caller skips a run that reached its planned length, which
    may end inside an epoch): the training loss is logged at
    a fixed step interval (its steps rise by one value), at least :data:`MIN_COMPLETE_EPOCHS` epochs
    before the last logged the same number of records give or take one, and the last epoch logged
    fewer than the fewest of them minus one. A loop's passes have the same number of batches, so a
    last pass with fewer records was cut while it ran (own corpus f24b1-20: a Lightning CSV logging
    every 50 steps, about 4 rows in each of epochs 0-10 and one row in epoch 11, from a script whose
    other runs reach epoch 99)."""
    ek, tk = run.key_for(Role.EPOCH), run.key_for(Role.TRAIN_LOSS)
    if not (ek and tk) or run.key_for(Role.VAL_LOSS) or run.key_for(Role.VAL_ACCURACY):
        return None
    es = run.metrics.series(ek).by_step().finite()
    ts = run.metrics.series(tk).by_step().finite()
    if len(es) < 2 or len(ts) < 3:
        return None
    if not bool(np.all(np.equal(np.mod(es.values, 1), 0))) or np.any(np.diff(es.values) < 0):
        return None
    if len(np.unique(np.diff(ts.steps))) != 1:
        return None
    i = np.searchsorted(es.steps, ts.steps, side="right") - 1
    if np.any(i < 0):
        return None
    te = es.values[i]
    last = float(te[-1])
    # the first epoch may start after its first batch was logged elsewhere: compare whole epochs only
    earlier = sorted({float(x) for x in te if x < last})[1:]
    if len(earlier) < MIN_COMPLETE_EPOCHS:
        return None
    counts = [int(np.sum(te == x)) for x in earlier]
    n_last = int(np.sum(te == last))
    if max(counts) - min(counts) > 1 or n_last >= min(counts) - 1:
        return None
    held = f"{min(counts)}" if min(counts) == max(counts) else f"{min(counts)}-{max(counts)}"
    return (
        f"the last epoch ({last:g}) holds {n_last} {tk} record(s) against {held} in each complete epoch "
        "before it, logged at the same step interval: the run was cut while that epoch ran"
    )


def _read_notes(run: RunData, e: Ending) -> None:
    """A mid-run snapshot (a reader's note, or ``source.snapshot``) and a stop the trainer itself
    recorded (trainer_state: "training stopped by itself")."""
    for n in run.notes:
        if "checkpoint snapshot" in n or "saved mid-run" in n:
            e.snapshot = n
        elif n.startswith(
            "training stopped by itself"
        ):  # trainer_state: the Trainer ended training there
            e.early_stopped = n
    if str(run.params.get("source.snapshot", "")).lower() == "true":
        e.snapshot = e.snapshot or "the input is a mid-run snapshot"
    stopped = next((k for k in run.metrics.keys if leaf(k) == "stopped_iteration"), None)
    if stopped is not None and not e.early_stopped:
        # the boosting library's record of an early stop: mlflow 3 xgboost/lightgbm autolog log
        # ``stopped_iteration`` and ``best_iteration`` only when early stopping ended the fit
        # (mlflow/xgboost/__init__.py, mlflow/lightgbm/__init__.py autolog)
        e.early_stopped = (
            f"the run recorded {stopped}: its early stopping ended the boosting rounds"
        )


def _read_plan(run: RunData, e: Ending) -> None:
    """The first planned length (params' step budget, params' epoch budget, then the console's)
    whose reached length is known, with that length: steps from the series (HF's saved
    ``global_step`` for a params plan, the console's own count for a console plan), epochs from
    the series or the console."""
    for plan in planned_lengths(run):
        console = plan.source.startswith("console")
        interval = plan.interval
        if plan.unit == "step":
            # every point of every metric at step 0: values logged without a step (MLflow's
            # ``log_metric`` puts them there) are a summary whose step counts no optimisation step
            # (own corpus f17b1-13: a FINISHED MLflow XGBoost run's final R2 values at step 0 against
            # ``n_estimators`` 200); a per-epoch row at epoch 0 is read by the epoch branch
            reached = _reached_steps(run) if _steps_advance(run) else None
            if not console:
                interval = _step_interval(run)
                gs = _param(
                    run, ("global_step",)
                )  # HF trainer_state: the step the state was saved at
                if gs is not None:
                    reached = max(reached or 0.0, gs[1])
            elif plan.reached is not None:
                reached = max(reached or 0.0, plan.reached)
            else:  # a plan the console states, not counts: measured like a params plan
                interval = _step_interval(run)
        elif console and plan.reached is None:
            reached = _reached_epochs(run)
            interval = _epoch_interval(run)
        elif console:
            # a console's header count and the tracker's end-of-run summary are two witnesses: the
            # larger holds (a header printed once, then tqdm bars only, counts 1 of 20 in a run whose
            # summary is at epoch 20)
            summ = _summary_epoch(run)
            reached = plan.reached if summ is None else max(plan.reached or 0.0, summ)
        else:
            reached = _counted_epochs(run, plan) or _reached_epochs(run)
            interval = _epoch_interval(run)
        if reached is not None:
            e.planned_key, e.planned, e.unit, e.reached = (
                plan.source,
                plan.planned,
                plan.unit,
                reached,
            )
            e.interval, e.plan_text = interval, plan.text
            e.cut_epoch = plan.open_pass
            return


def _counted_epochs(run: RunData, plan) -> float | None:
    """The epochs reached by the console's own 1-based ``Epoch k/N`` counter (its first print ``k`` = 1,
    so its last ``k`` counts the epochs begun) when the console reader took the plan ``plan`` from that
    console (a ``log.`` param) and the counter names the same ``N``; else ``None``. The epoch series
    read from the same lines is counted as 0-based (+1, erring towards complete), which makes a
    1-based ``Epoch 1/2`` and nothing after it look like 2 of 2 epochs (own corpus f13b1-12)."""
    if not plan.source.startswith("log.") or not run.console:
        return None
    for p in planned_lengths(run):
        if (
            p.source == "console 'Epoch k/N'"
            and p.planned == plan.planned
            and p.reached is not None
            and p.first is not None
            and p.first >= 1
        ):
            return p.reached
    return None


def _median_rise(steps: np.ndarray) -> float | None:
    """The median positive rise between consecutive values of ``steps`` (None with fewer than two)."""
    d = np.diff(np.asarray(steps, dtype=float))
    d = d[np.isfinite(d) & (d > 0)]
    return float(np.median(d)) if d.size >= 2 else None


def _step_interval(run: RunData) -> float | None:
    """The logging interval, in steps, of the training loss (else the learning rate or the
    validation loss): the count a params step plan's reached length is measured in."""
    for role in (Role.TRAIN_LOSS, Role.LEARNING_RATE, Role.VAL_LOSS):
        k = run.key_for(role)
        if k:
            got = _median_rise(run.metrics.series(k).by_step().finite().steps)
            if got is not None:
                return got
    return None


def _epoch_interval(run: RunData) -> float | None:
    """The interval, in epochs, of the count a params epoch plan's reached length is measured in:
    the median rise of an epoch series' distinct values (1 for an integer counter, 0.01 for Hugging
    Face's fractional epoch logged every 1% of an epoch), 1 for a log whose step axis is the epoch,
    else None."""
    k = run.key_for(Role.EPOCH)
    if k:
        v = np.unique(run.metrics.series(k).finite().values)
        return _median_rise(v)
    if run.params.get("log.step_axis") == "epoch":
        return 1.0
    return None


def _read_warmup(run: RunData, e: Ending) -> None:
    """A logged learning rate that rose at every step to its last value (>= MIN_TREND_POINTS
    points): the run ended inside its warmup (not read on a snapshot)."""
    k = run.key_for(Role.LEARNING_RATE)
    if not k or e.snapshot:
        return
    lr = run.metrics.series(k).by_step().finite()
    if (
        len(lr) >= MIN_TREND_POINTS
        and lr.values[-1] > lr.values[0] > 0
        and bool(np.all(np.diff(lr.values) > 0))
    ):
        e.in_warmup = (
            f"{k} rose at every logged step to its last value ({lr.values[0]:.3g} -> "
            f"{lr.values[-1]:.3g}): the run ended inside its warmup"
        )


def _read_early_stop(run: RunData, e: Ending, text: list[str]) -> None:
    """A short run that stopped by itself: its end-of-run summary, a console early-stopping line,
    or the framework's end-of-training line at the end of the log."""
    summary = _end_summary(run) if e.short and not e.interrupt and not e.early_stopped else None
    if summary:
        e.early_stopped = summary
    if any(early_stop_line(t) for t in text[-400:]):
        e.early_stopped = "the console reports early stopping"
    elif e.short and not e.interrupt:
        end = next((t for t in reversed(text[-300:]) if NORMAL_END.search(t)), None)
        if end is not None:
            e.early_stopped = (
                f"the log ends with the framework's end-of-training line ({end.strip()[:100]})"
            )


def _watched(run: RunData):
    """``(series, higher is better)`` of the metric the run's early stopping watches when the run names
    one other than its validation loss (a ``monitor``-style param, Ultralytics fitness:
    :func:`detectors._context.monitored`), else ``None`` (own corpus f10b2-15: YOLO11 stopped at epoch
    31 = its best fitness at 21 + patience 10, while mAP50-95 alone peaked at 29)."""
    vk = run.key_for(Role.VAL_LOSS)
    if not vk:
        return None
    from ..detectors._context import monitored

    _, ms, mhib, src = monitored(run, vk)
    if src == "validation loss" or len(ms) < 2:
        return None
    return ms, bool(mhib)


#: A stop no patience param explains is read as early stopping when the held-out metric's last
#: improvement came at least this many evaluations before the end: Lightning's ``EarlyStopping``
#: patience default is 3, HF ``early_stopping_patience`` and Keras ``patience`` are set by the user
#: (tests/data/newuser10 lightning_early_stopped_tb: 3, newuser9 keras_early_stopping: 4).
MIN_INFERRED_PATIENCE = 2
#: ... in a run with at least this many evaluations (fewer give no curve a stop could follow).
MIN_PATIENCE_EVALS = 5


def _infer_patience(run: RunData, e: Ending) -> None:
    """A short epoch run with no patience param whose end is early stopping's own signature: the
    held-out metric an early-stopping callback watches (the run's named monitor, else the validation
    loss, the default of Keras' ``EarlyStopping`` and of HF's ``metric_for_best_model``, else the
    validation accuracy) has >= :data:`MIN_PATIENCE_EVALS` evaluations, none of the last ``k`` >=
    :data:`MIN_INFERRED_PATIENCE` beat its best, and its last evaluation is at or after the last
    training record: the run stopped right after an evaluation, where callbacks run, ``k``
    evaluations after its best, and its best came in the second half of the evaluations (``k`` at
    most half of them: a patience is short beside the run; a best at the first evaluations and a
    rise after it is overfitting whatever stopped it, shared/cases overfit-small-data: val_loss
    rising from epoch 1 to 5 of 10). Lightning's and Keras' early stopping print nothing by default
    (``verbose`` off), so a console or a logger folder is all that is left of it. A process killed
    mid-epoch leaves training records after its last evaluation."""
    from ..roles import is_higher_better

    if e.cut_epoch:
        return  # the console ends inside a pass: callbacks run at a pass's end, not inside it
    watched = _watched(run)
    vk = run.key_for(Role.VAL_LOSS)
    if watched is not None:
        s, hib = watched
    elif vk and len(run.metrics.series(vk).by_step().finite()) >= 2:
        s, hib = run.metrics.series(vk).by_step().finite(), is_higher_better(vk)
    else:
        role, s = _val_series(run)
        if s is None:
            return
        hib = role is Role.VAL_ACCURACY or is_higher_better(s.key)
    tk = run.key_for(Role.TRAIN_LOSS)
    t = run.metrics.series(tk).by_step().finite() if tk else None
    if len(s) < MIN_PATIENCE_EVALS or (t is not None and len(t) and t.steps[-1] > s.steps[-1]):
        return
    waited = _patience_counter(s.values, bool(hib), 0.0)
    if MIN_INFERRED_PATIENCE <= waited <= (len(s) - 1) // 2:
        e.early_stopped = (
            f"{s.key} last improved {waited} evaluations before the end and the run stopped right "
            "after an evaluation: the end an early-stopping callback with that patience gives (none "
            "is printed by default)"
        )


def _outwaited(values: np.ndarray, higher_is_better: bool, waited: int, patience: float) -> bool:
    """Whether the held-out metric went on more than ``patience`` evaluations (plus
    :func:`_patience_slack`) after its last best, counted the most lenient way the callbacks count:
    a value equal to the best as an improvement (YOLOv5 utils/torch_utils.py and Ultralytics
    ultralytics/utils/torch_utils.py ``EarlyStopping.__call__``: ``if fitness >= self.best_fitness``),
    and the run's ``min_delta`` counter (``waited``). Every early-stopping callback stops when its
    counter reaches the patience (YOLOv5/Ultralytics ``stop = delta >= self.patience``, Keras and
    Lightning ``wait >= patience``, HF ``early_stopping_patience_counter >= early_stopping_patience``),
    so a run that went on past that did not stop because of its patience (own corpus f26b2-08:
    YOLOv5 best fitness at epoch 54 of 0-215, patience 100, no end line)."""
    v = np.asarray(values, dtype=float)
    if not len(v):
        return False
    best = np.nanmax(v) if higher_is_better else np.nanmin(v)
    at_best = np.flatnonzero(np.isclose(v, best, rtol=1e-9, atol=0.0))
    if not len(at_best):
        return False
    since_tie = len(v) - 1 - int(at_best[-1])
    return min(since_tie, waited) > patience + _patience_slack(patience)


def _patience_slack(patience: float) -> float:
    """Evaluations a run may log past its patience counter reaching the patience: the epoch whose
    check stopped it and a row the logger writes after the check (2), or 10% of a long patience."""
    return max(2.0, 0.1 * patience)


def _read_patience(run: RunData, e: Ending) -> None:
    """A short epoch run whose early-stopping patience explains the stop: the held-out metric last
    improved at least 90% of ``patience`` evaluations before the end, or improved by less than
    ``min_delta`` for ``patience`` evaluations."""
    pat = _param(run, _PATIENCE)
    if e.short and not e.early_stopped and pat is None and e.unit == "epoch" and not e.interrupt:
        _infer_patience(run, e)
        return
    if not (e.short and not e.early_stopped and pat is not None and e.unit == "epoch"):
        return
    role, s = _val_series(run)
    if s is None:
        return
    from ..roles import is_higher_better

    hib = role is Role.VAL_ACCURACY or is_higher_better(s.key)
    watched = _watched(run)
    if watched is not None:
        s, hib = watched
    ib = int(np.argmax(s.values) if hib else np.argmin(s.values))
    since = len(s) - 1 - ib
    delta = _param(run, _MIN_DELTA)
    waited = _patience_counter(s.values, hib, delta[1] if delta else 0.0)
    if _outwaited(s.values, hib, waited, pat[1]):
        return  # the run went on well past the patience after its last best: patience did not stop it
    if since >= pat[1] * 0.9:
        e.early_stopped = (
            f"{s.key} last improved {since} evaluations before the end, which the "
            f"run's {pat[0]}={pat[1]:g} explains (early stopping)"
        )
    elif delta is not None and waited >= pat[1]:
        e.early_stopped = (
            f"{s.key} improved by less than {delta[0]}={delta[1]:g} in its last {waited} "
            f"evaluations, which the run's {pat[0]}={pat[1]:g} explains (early stopping)"
        )


def _read_booster_stop(run: RunData, e: Ending) -> None:
    """A gradient-boosting run short of its planned rounds whose last printed round is off the grid
    of its print period: the booster's own final print after its training ended (early stopping),
    not a crash. XGBoost's ``EvaluationMonitor`` (xgboost/callback.py) prints every ``period``-th
    round (``verbose_eval``, the scikit-learn ``verbose``) and, in ``after_training``, the last round
    when it was not printed; ``EarlyStopping`` ends the booster ``rounds`` rounds after its best with no
    stop line in the scikit-learn API. A process killed from outside leaves its last print on the grid
    (tests/data/newuser13 xgb_sigterm_round_850_of_2000.log: 0, 10 ... 850 of 2000). LightGBM's early
    stop prints its own line (:func:`_read_early_stop`). Own corpus f26b2-17 (the plan/progress
    reading of a boosting log); an XGBoost fit with early_stopping_rounds=20 made here printed rounds
    0, 25, 50 and 66 of 500."""
    if not e.short or e.early_stopped or e.interrupt:
        return
    from ..model_family import tree_ensemble

    if tree_ensemble(run) is None:
        return
    _, s = _val_series(run)
    if s is None or len(s) < 3:
        return
    gaps = np.diff(np.asarray(s.steps, dtype=float))
    period = float(gaps[0])
    if period <= 1 or not np.all(gaps[:-1] == period) or not 0 < gaps[-1] < period:
        return
    e.early_stopped = (
        f"the booster printed every {period:g} rounds and then its last round, {s.steps[-1]:g}, off that "
        "period: the final print a booster makes when its training ends by itself (early stopping), "
        "where a process killed from outside stops on the period"
    )


def _read_missing_end_line(run: RunData, e: Ending, text: list[str]) -> None:
    """A framework whose training banner opens the log but whose end line is nowhere: evidence of a
    stop, read only in a log that shows training records (the banner alone is printed by other
    code too: a TF1 Estimator, diffusers / ColossalAI example scripts, which never print the HF
    Trainer's 'train_runtime'; own corpus f6b1-04, f6b3-05) and without an interrupt line."""
    if not (text and not e.interrupt and len(run.metrics.keys) > 0):
        return
    joined_tail = "\n".join(text[-300:])
    for fw, (end_re, start_re) in _END_LINES.items():
        if any(start_re.search(t) for t in text[:5000]) and not end_re.search(joined_tail):
            # another framework's end line (a TF1 Estimator prints the same 'Running training'
            # banner as the HF Trainer, then 'Loss for final step') is an end line too
            if not any(end_re.search(t) or NORMAL_END.search(t) for t in text):
                e.missing_end_line = fw
            break


# --- precision and learning-rate evidence ---------------------------------------------------------

_PRECISION_PARAM = re.compile(
    r"(^|[/_.])(fp16|bf16|amp|half|mixed_precision|precision|autocast|"
    r"loss_scale|use_amp|apex|opt_level)($|[/_.])",
    re.I,
)
#: A precision setting's value that turns reduced precision on; a command-line flag (``--fp16``, as a
#: launch command or a report states the setting) counts as its value.
_PRECISION_TRUE = re.compile(
    r"^(?:--?)?(true|1|yes|o[123]|16|16-mixed|bf16|bf16-mixed|fp16|16-true|bf16-true|"
    r"half|mixed|amp|dynamic)$",
    re.I,
)
_PRECISION_LINE = re.compile(
    r"\b(fp16|bf16|float16|bfloat16|mixed[- ]precision|GradScaler|loss scal|"
    r"apex\.amp|autocast|Using 16bit|16-mixed|half precision)\b",
    re.I,
)


_WARNING_OR_CODE = re.compile(r"\w*Warning\b:|^\s*[\w.\[\]]+\s*=\s*[\w.]+\(")


def precision_evidence(run: RunData, findings: list[Finding]) -> list[str]:
    """Evidence that reduced precision is in use: params/config, a loss-scale series or finding,
    console lines. Empty when there is none (then no precision cause may be named)."""
    out: list[str] = []
    for k, v in run.params.items():
        if _PRECISION_PARAM.search(normalise_key(k)) and _PRECISION_TRUE.match(str(v).strip()):
            out.append(f"param {k}={v}")
        elif (said := stated_precision(str(v))) is not None:
            out.append(f"stated in {k}: {said}")
    if run.has(Role.LOSS_SCALE):
        out.append(f"a loss-scale series ({run.key_for(Role.LOSS_SCALE)})")
    out += [f"{f.code} {f.name}" for f in findings if detector_for(f.code).shows_reduced_precision]
    for c in run.console[:5000]:
        # a Python warning, or the source line it echoes, names the API, not the setting: nanoGPT prints
        # "FutureWarning: `torch.cuda.amp.GradScaler(args...)` is deprecated" and
        # "scaler = torch.cuda.amp.GradScaler(enabled=(dtype == 'float16'))" on every run, float32 on a
        # CPU included (own corpus log09)
        if _PRECISION_LINE.search(c.text) and not _WARNING_OR_CODE.search(c.text):
            out.append(f"console {c.source}:{c.lineno}: {c.text.strip()[:120]}")
            break
    return out


#: Typical peak learning rates per optimiser family: Adam/AdamW 1e-3 (Kingma & Ba 2015's default;
#: PyTorch/Keras defaults), Adagrad/RMSprop 1e-2 / 1e-3 (PyTorch defaults), SGD 0.1 (He et al. 2016,
#: Goyal et al. 2017: 0.1 per 256 images), Lion 1e-4 (Chen et al. 2023: 3-10x below AdamW).
TYPICAL_LR = {
    "adam": 1e-3,
    "adamw": 1e-3,
    "lion": 1e-4,
    "rmsprop": 1e-3,
    "adagrad": 1e-2,
    "sgd": 0.1,
    "adafactor": 1e-3,
    "lamb": 1e-2,
}
#: Without a known optimiser, the upper of the typical values (SGD's) is used.
TYPICAL_LR_UNKNOWN = 0.1
#: A learning rate this many times the typical value is "far too high" (a NaN from the first
#: steps is then read as a learning-rate divergence, not numerics).
FAR_ABOVE = 10.0
#: A peak learning rate below this is "far too low" for any optimiser: one tenth of the lowest typical
#: peak value above (Lion's 1e-4), and below the 2e-5-5e-5 of fine-tuning (Devlin et al. 2019, BERT).
FAR_BELOW_LR = 1e-5


@dataclass
class LrAssessment:
    lr: float | None
    key: str | None
    optimiser: str | None
    typical: float

    @property
    def at_or_above_typical(self) -> bool:
        return self.lr is not None and self.lr >= self.typical

    @property
    def far_above(self) -> bool:
        return self.lr is not None and self.lr >= FAR_ABOVE * self.typical

    @property
    def far_below(self) -> bool:
        """The peak learning rate is below :data:`FAR_BELOW_LR` (whatever the optimiser)."""
        return self.lr is not None and 0 < self.lr < FAR_BELOW_LR

    def describe(self) -> str:
        if self.lr is None:
            return "learning rate unknown"
        opt = self.optimiser or "unknown optimiser"
        return f"learning rate {self.lr:g} ({self.key}) vs typical {self.typical:g} for {opt}"


def _lr_param(run: RunData) -> tuple[str, float] | None:
    """The learning-rate param (:func:`mlaudit_core.roles.lr_param_name`: ``learning_rate``, ``lr``,
    MLflow Keras' ``optimizer_learning_rate`` ...), in the order of ``LR_PARAM_NAMES``, as a number."""
    return _positive_param(run, lr_param_name, LR_PARAM_NAMES)


def lr_assessment(run: RunData) -> LrAssessment:
    """The run's peak learning rate (params or the LR series) against the optimiser's typical value."""
    opt = None
    for k, v in run.params.items():
        leaf = normalise_key(k).split("/")[-1]
        if leaf in (
            "optimizer",
            "optim",
            "optimiser",
            "opt",
            "optimizer_name",
            "optimizer_type",
            "name",
        ) and isinstance(v, str):
            low = v.lower()
            for name in sorted(TYPICAL_LR, key=len, reverse=True):
                if name in low:
                    opt = name
                    break
            if opt:
                break
    lr, key = None, None
    p = _lr_param(run)
    if p is not None:
        key, lr = p
    lr_key = run.key_for(Role.LEARNING_RATE)
    if lr is None and lr_key:
        s = run.metrics.series(lr_key).finite()
        if len(s):
            key, lr = lr_key, float(s.values.max())
    return LrAssessment(lr, key, opt, TYPICAL_LR.get(opt or "", TYPICAL_LR_UNKNOWN))


# --- confidence -----------------------------------------------------------------------------------

#: Outcomes read as the same symptom for agreement (a plateau agrees with an underfit; a held-out
#: metric that ended below its best agrees with a divergence, an instability, an overfit, a regression).
SAME = {
    "underfit": {"underfit", "plateaued"},
    "plateaued": {"underfit", "plateaued"},
    "diverged": {"diverged", "unstable", "degraded"},
    "unstable": {"unstable", "diverged", "degraded"},
    "overfit": {"overfit", "degraded"},
    "regressed": {"regressed", "degraded"},
}
#: The layer an implied outcome belongs to. A finding competes with a verdict only within its layer:
#: a slow input pipeline or an idle GPU says nothing against an overfit, and a learning curve says
#: nothing against an OOM (the policy's "first broken layer" ordering already chose between layers).
LAYER = {"slow": "systems", "crashed": "runtime"}
#: Constants of the curve terms (see :func:`confidence`).
FAILURE_PRIOR, FAILURE_SPAN = 0.3, 0.5
HEALTHY_PRIOR, HEALTHY_SPAN = 0.3, 0.4
#: The calibration map per evidence class (see :func:`calibrated`): ``(a, b)`` of
#: ``p = 1 / (1 + exp(-(a - b * ln(1/s - 1))))`` for an evidence score ``s``. Fitted by
#: ``benchmarks/confidence_calibration.py`` on the 551 uncapped judged first-run verdicts of
#: ``benchmarks/confidence_first_runs.csv`` (rounds f9-f16 / b12-b28 and f18-f26 / b31-b48, each
#: batch scored once on the code of its scoring commit before any rule was changed for it; round 17
#: ran on code that printed no evidence class): ``observed`` 186 rows 69% right, ``no_failure`` 221
#: rows 82% right, ``curve`` 144 rows 46% right. Checked on rounds not fitted: leave-one-round-out
#: (all 609 judged rows) ECE 0.136 -> 0.022, Brier 0.237 -> 0.202; fitted on rounds 9-20, checked on
#: 21-26 (278 rows) ECE 0.098 -> 0.091, Brier 0.248 -> 0.229 (docs/corpus.md, "Session 18: the
#: calibration refit").
CALIBRATION: dict[str, tuple[float, float]] = {
    "observed": (0.09, 0.6),
    "no_failure": (1.09, 1.06),
    "curve": (-0.16, 0.0),
}


def points_strength(n: int) -> float:
    """How well a curve of ``n`` finite points determines a trend: 0 at <= 2 points, rising with
    log10(n) to 1 at 100 points (a smoothed trend's noise falls roughly as 1/sqrt(window); beyond
    ~100 points more points no longer change the reading of a loss curve)."""
    if n < MIN_TREND_POINTS:
        return 0.0
    return min(1.0, math.log10(n) / 2.0)


def primary_points(run: RunData, primary: Finding | None, basis: Basis) -> int:
    """Finite points of the series the main finding cites (its first series evidence), else of the
    richest learning series examined."""
    if primary is not None:
        for ev in primary.evidence:
            key = getattr(ev, "metric", None)
            if getattr(ev, "kind", "") == "series" and isinstance(key, str) and key in run.metrics:
                return int(np.isfinite(run.metrics.series(key).values).sum())
    return basis.points


def confidence(
    *,
    outcome: str,
    cause: str,
    primary: Finding | None,
    basis: Basis,
    findings: list[Finding],
    has_validation: bool,
    has_step_time: bool,
    warnings: int,
    inconclusive: bool,
    n_primary: int | None = None,
    partial: bool = False,
    errored: list[str] | None = None,
) -> tuple[float, str]:
    """Confidence in [0, 1] from the evidence examined, and the terms it came from (one line): the
    probability that the outcome and the cause are both right. An evidence score is built from
    the terms below, then mapped to that probability per evidence class by :func:`calibrated`
    (fitted on verdicts of runs the rules had not seen, :data:`CALIBRATION`); the caps of partial
    input and of a running run apply after the map. ``unknown`` is 0.

    ``p0`` of the evidence score (what the main conclusion rests on):

    * a runtime signature (a traceback, an OOM message, a hardware error; the primary finding is in
      the ``runtime`` family), the tracker's own failed status, or a non-finite training loss (LI001
      on the training loss, or on the validation loss non-finite to the end: the NaN is observed, not
      inferred from a trend): 0.8 (a signature names
      what happened; it can still be a symptom of something earlier);
    * a curve (any other primary finding): ``0.3 + 0.5 * points_strength(n)`` with ``n`` the finite
      points of the series the finding cites (else the richest learning series examined): 0.42 for a
      3-point curve, 0.55 at 10 points, 0.8 at 100+;
    * ``succeeded``/``healthy``, the absence of every failure finding (weaker evidence than a
      finding: a detector can miss a failure it was not built for): ``0.3 + 0.4 * points_strength(n)``.

    On the corpora the rules were developed on, verdicts are right more often than on unseen runs
    (90-97% against 70-82% on first runs): that gap is the rules' fit to those corpora, so the map
    is fitted on first runs only and the development corpora look under-confident with it.
    docs/corpus.md has the tables.

    Independent agreement combines by noisy-OR (Pearl 1988, *Probabilistic Reasoning in
    Intelligent Systems*, 4.3.2): every other detector at warning or above implying the same
    outcome (``Detector.implies``, ``SAME``) adds ``1 - (1 - c) * (1 - 0.3)``, at most three; for
    ``succeeded`` each further learning series examined counts with weight
    ``0.15 * points_strength(its points)``, at most two. A finding implying a different failure *in the
    same layer* (``LAYER``: learning, systems, runtime) multiplies by 0.85 (a competing explanation),
    at most three; findings of another layer, and the held-out reflection of a failure (GE003), do not
    compete. A healthy verdict whose own signals contradict it (``Detector.contradicts_healthy``: recurring
    grad-norm spikes, a growing grad norm) multiplies by 0.85 per such finding, the weight of a
    competing explanation. A learning verdict without a validation metric, or a slow verdict without step times,
    multiplies by 0.85 (the signal that could have overturned it was not there); load warnings by
    0.9; every learning detector that errored (``errored``, at most two) by 0.7 (a check that did not
    run is evidence not examined). After the map, partial input and an interim verdict of a run
    still running cap at 0.5. An ``inconclusive`` cause does not lower the confidence: it claims no cause, and the outcome it comes with rests on its own evidence (a
    run stopped at epoch 13 of 20 is crashed whatever the reason).
    The reliability table, ECE and Brier score of ``benchmarks/diagnosis_eval.py`` check the
    result per real corpus; ``benchmarks/confidence_calibration.py`` refits the map and checks it
    on rounds it was not fitted on (docs/corpus.md).
    """
    n = basis.points if n_primary is None else n_primary
    signature = primary is not None and primary.family == "runtime"
    # a NaN/inf in the logged training loss is observed, not read from a trend: as strong as a signature
    # whatever the number of finite points before it (NOTES 18:35: lr=20 NaN from the 3rd point got 0.51)
    # a validation loss non-finite to the end (the nonfinite-validation rule) is as observed as a training one
    nonfinite = primary is not None and detector_for(primary.code).nonfinite_observed(primary)
    terms: list[str] = []
    if outcome == "unknown":
        return 0.0, "no judgeable evidence"
    healthy = outcome == "succeeded" and cause == "healthy"
    c = _base_confidence(outcome, primary, basis, n, healthy, signature, nonfinite, terms)
    c = _agreeing(c, outcome, primary, basis, findings, healthy, terms)
    c = _competing(c, outcome, findings, terms)
    c = _contradicting(c, findings, healthy, terms)
    c = _not_examined(c, outcome, has_validation, has_step_time, warnings, errored, terms)
    kind = evidence_class(outcome, primary, healthy, signature, nonfinite)
    c = calibrated(max(min(c, 0.99), 0.05), kind)
    terms.append(f"calibrated ({kind}) {c:.2f}")
    c = _capped(c, outcome, partial, terms)
    return round(max(min(c, 0.99), 0.05), 2), ", ".join(terms)


def evidence_class(
    outcome: str, primary: Finding | None, healthy: bool, signature: bool, nonfinite: bool
) -> str:
    """What the conclusion rests on, the key of :data:`CALIBRATION`: ``observed`` (a runtime
    signature, the tracker's failed status or an observed non-finite loss), ``no_failure`` (a
    healthy verdict: no failure finding on the curves examined), ``curve`` (a failure, or an interim
    reading, read from a curve). The same branches as :func:`_base_confidence`."""
    if (
        (nonfinite and primary is not None)
        or signature
        or (primary is None and outcome == "crashed")
    ):
        return "observed"
    return "no_failure" if healthy else "curve"


def calibrated(
    score: float, kind: str, params: dict[str, tuple[float, float]] | None = None
) -> float:
    """The probability that a verdict of evidence class ``kind`` (:func:`evidence_class`) with
    evidence score ``score`` in (0, 1) is right (outcome and cause), in (0, 1): Platt scaling
    (Platt 1999) per class, ``1 / (1 + exp(-(a + b * logit(score))))`` with ``(a, b) =
    params[kind]`` (default :data:`CALIBRATION`). ``b >= 0``, so the map never reverses the order
    of two scores of one class; a class of slope 0 (``curve``) maps every score to one value, the
    fraction right of that class on unseen runs. Raises ``KeyError`` for an unknown ``kind``.

    Where the constants come from: :data:`CALIBRATION`. On runs nobody had seen, the evidence
    score alone did not rank verdicts (AUC 0.48 over the 328 first-run verdicts; 0.62 after the
    map): a failure read from a curve was right about half the time whatever its points or
    agreeing findings (47% at scores below 0.55, 43% at 0.8 and above), a healthy verdict 85%
    (74% below 0.55, 92% at 0.7-0.8), an observed signature 71% (the crash is observed, the cause
    named from the exception is inferred: 75% at 0.7-0.8, 66% at 0.8 and above)."""
    a, b = (CALIBRATION if params is None else params)[kind]
    s = min(max(score, 1e-3), 1 - 1e-3)
    return 1.0 / (1.0 + math.exp(-(a + b * math.log(s / (1 - s)))))


def _base_confidence(
    outcome: str,
    primary: Finding | None,
    basis: Basis,
    n: int,
    healthy: bool,
    signature: bool,
    nonfinite: bool,
    terms: list[str],
) -> float:
    """``p0``, what the main conclusion rests on (see :func:`confidence`): an observed non-finite
    loss, a signature or a failed status 0.8; a healthy curve or a failure curve by its points."""
    if nonfinite and primary is not None:
        terms.append(
            f"non-finite {'training' if primary.facts.get('role') == 'train_loss' else 'validation'} "
            "loss observed 0.8"
        )
        return 0.8
    if signature or (primary is None and outcome == "crashed"):
        terms.append("signature/status 0.8")
        return 0.8
    if healthy:
        c = HEALTHY_PRIOR + HEALTHY_SPAN * points_strength(basis.points)
        terms.append(f"no failure in a curve of {basis.points} points {c:.2f}")
        return c
    c = FAILURE_PRIOR + FAILURE_SPAN * points_strength(n)
    terms.append(f"curve of {n} points {c:.2f}")
    return c


def _implies(f: Finding) -> str | None:
    """The outcome ``f`` implies (``Detector.implies``), None when it implies none."""
    return detector_for(f.code).implies


def _agreeing(
    c: float,
    outcome: str,
    primary: Finding | None,
    basis: Basis,
    findings: list[Finding],
    healthy: bool,
    terms: list[str],
) -> float:
    """Independent agreement by noisy-OR: up to three other detectors implying the same outcome
    (0.3 each); for a healthy verdict up to two further learning series, by their points."""
    same = SAME.get(outcome, {outcome})
    agree = [
        f
        for f in findings
        if f is not primary and f.severity.rank >= Severity.WARNING.rank and _implies(f) in same
    ]
    agree_codes = sorted({f.code for f in agree} - ({primary.code} if primary else set()))[:3]
    weights = [0.3] * len(agree_codes)
    if healthy:
        # each further learning series examined agrees, weighted by how much its points can show
        extra = sorted(basis.signals.values(), key=lambda kn: -kn[1])[1:3]
        agree_codes = [k for k, _ in extra]
        weights = [0.15 * points_strength(n) for _, n in extra]
    for w in weights:
        c = 1 - (1 - c) * (1 - w)
    if agree_codes:
        terms.append(f"+{len(agree_codes)} agreeing")
    return c


def _competing(c: float, outcome: str, findings: list[Finding], terms: list[str]) -> float:
    """x0.85 for each of up to three findings implying a different failure in the same layer (none
    for a succeeded or running verdict; a crash signature does not compete with a crash)."""
    same = SAME.get(outcome, {outcome})
    layer = LAYER.get(outcome, "learning")
    other = sorted(
        {
            f.code
            for f in findings
            if f.severity.rank >= Severity.WARNING.rank
            and _implies(f) not in (None, "degraded", *same)
            and LAYER.get(_implies(f) or "", "learning") == layer
            and not (outcome == "crashed" and _implies(f) == "crashed")
        }
    )[:3]
    if outcome in ("succeeded", "running"):
        other = other[:0]
    for _ in other:
        c *= 0.85
    if other:
        terms.append(f"-{len(other)} competing ({','.join(other)})")
    return c


def _contradicting(c: float, findings: list[Finding], healthy: bool, terms: list[str]) -> float:
    """x0.85 per finding whose facts contradict a healthy verdict
    (``Detector.contradicts_healthy``)."""
    doubt = sorted(
        {
            f.code
            for f in findings
            if f.severity.rank >= Severity.WARNING.rank
            and detector_for(f.code).contradicts_healthy(f)
        }
    )
    if healthy and doubt:
        # the run's own signals contradict the healthy reading (a competing explanation, as above)
        c *= 0.85 ** len(doubt)
        terms.append(f"-{len(doubt)} contradicting ({','.join(doubt)})")
    return c


def _not_examined(
    c: float,
    outcome: str,
    has_validation: bool,
    has_step_time: bool,
    warnings: int,
    errored: list[str] | None,
    terms: list[str],
) -> float:
    """Evidence that could have overturned the verdict and was not there: no validation metric or
    no step times x0.85, load warnings x0.9, each errored detector x0.7 (at most two)."""
    if outcome in ("succeeded", "overfit", "underfit", "plateaued") and not has_validation:
        c *= 0.85
        terms.append("no validation x0.85")
    if outcome == "slow" and not has_step_time:
        c *= 0.85
        terms.append("no step time x0.85")
    if warnings:
        c *= 0.9
        terms.append("load warnings x0.9")
    for errored_code in (errored or [])[:2]:
        c *= 0.7
        terms.append(f"{errored_code} errored x0.7")
    return c


def _capped(c: float, outcome: str, partial: bool, terms: list[str]) -> float:
    """After the calibration: partial input and an interim verdict of a running run cap at 0.5."""
    if partial:
        c = min(c, 0.5)
        terms.append("partial input cap 0.5")
    if outcome == "running":
        # an interim verdict: what the points so far show cannot say how the run will end, so it
        # is never more sure than a coin (the same cap as partial input, for the same reason)
        c = min(c, 0.5)
        terms.append("interim (still running) cap 0.5")
    return c
