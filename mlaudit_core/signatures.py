"""Failure signatures in console text: a declarative catalog plus a traceback reader.

Each :class:`Signature` is one entry: an id, a category, a regular expression
whose named groups are the figures it captures, and a unit conversion for
memory figures. Adding a signature is adding one entry here and one fixture
line in ``tests/data/signatures/``.

The traceback reader recovers Python tracebacks (with or without their
``Traceback (most recent call last):`` header, as users often paste only the
frames), the raising frame, the exception line, and whether the failing code
path is training, evaluation or checkpointing, from the frames' function and
file names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable

from .rundata import ConsoleLine


@dataclass(frozen=True)
class Signature:
    id: str
    category: str
    pattern: re.Pattern
    description: str


def _sig(id: str, category: str, pattern: str, description: str) -> Signature:
    return Signature(id, category, re.compile(pattern, re.IGNORECASE), description)


_MEM = r"(?P<{name}>[\d.]+)\s*(?P<{name}_unit>[KMGT]i?B)"

#: The catalog. Order matters only for display.
CATALOG: list[Signature] = [
    _sig("cuda-oom", "oom",
         r"CUDA out of memory\.?(?: Tried to allocate " + _MEM.format(name="requested") + r")?"
         r"(?:.*?GPU (?P<device>\d+))?"
         r"(?:.*?" + _MEM.format(name="total") + r" total capacity)?"
         r"(?:.*?" + _MEM.format(name="allocated") + r" already allocated)?"
         r"(?:.*?" + _MEM.format(name="free") + r" free)?"
         r"(?:.*?" + _MEM.format(name="reserved") + r" reserved in total)?",
         "PyTorch CUDA caching allocator failed to allocate"),
    _sig("torch-oom-error", "oom", r"torch\.(?:cuda\.)?OutOfMemoryError", "torch OutOfMemoryError raised"),
    _sig("xla-oom", "oom", r"RESOURCE_EXHAUSTED|Resource exhausted: OOM", "XLA/TF out of memory"),
    _sig("host-oom-killer", "oom", r"Out of memory: Killed process (?P<pid>\d+)|oom-kill", "kernel OOM killer"),
    _sig("nccl-watchdog-timeout", "collective_timeout",
         r"Watchdog caught collective operation timeout"
         r"(?:.*?OpType=(?P<op>\w+))?(?:.*?Timeout\(ms\)=(?P<timeout_ms>\d+))?",
         "NCCL/collective watchdog timed out"),
    _sig("nccl-error", "collective_timeout", r"NCCL (?:error|WARN).*?(?:unhandled system error|timeout)",
         "NCCL communicator error"),
    _sig("dataloader-worker-killed", "worker_killed",
         r"DataLoader worker \(pid(?:\(s\))? (?P<pid>[\d, ]+)\) (?:is killed by signal|exited unexpectedly)"
         r"(?::\s*(?P<signal>[\w ]+))?",
         "a data-loader worker process died"),
    _sig("sigterm", "preemption",
         r"(?:received|got|caught)\s+(?:signal\s+)?(?:SIGTERM|signal 15)|SIGTERM received|"
         r"Signal 15 \(SIGTERM\)",
         "the process was asked to terminate (often preemption)"),
    _sig("preempted", "preemption", r"\bpreempt(?:ed|ion)\b|spot instance.*(?:interrupt|terminat)",
         "the scheduler preempted the job"),
    _sig("requeue", "requeue", r"\brequeu\w*", "the job was requeued"),
    _sig("ecc-xid", "hardware",
         r"\bXid\b.*?(?P<xid>\d+)|uncorrectable ECC|ECC error|CUDA error: an illegal memory access|"
         r"GPU has fallen off the bus",
         "accelerator hardware/driver error"),
    _sig("disk-full", "disk_full", r"No space left on device|Disk quota exceeded", "the disk filled up"),
    _sig("min-loss-scale", "min_loss_scale",
         r"Current loss scale already at minimum|minimum loss scale reached|loss scale.*below.*minimum",
         "fp16 dynamic loss scaling hit its minimum"),
    _sig("overflow-skip", "overflow_skip",
         r"Gradient overflow\.\s+Skipping step(?:,\s*(?:loss scaler \d+ )?reducing loss scale to "
         r"(?P<loss_scale>[\d.e+]+))?",
         "fp16 overflow: the step is skipped and the loss scale reduced"),
    _sig("nan-message", "nan",
         r"\b(?:loss|grad(?:ient)?s?)\b[^\n]{0,40}\b(?:is|are|became|contains?)\s+(?:nan|inf)\b|"
         r"NaN or Inf found|non-finite loss|Detected (?:NaN|inf)",
         "a NaN/inf message printed by the framework"),
    _sig("shape-mismatch", "shape_mismatch",
         r"size mismatch|shape mismatch|mat1 and mat2 shapes cannot be multiplied|"
         r"The size of tensor a \(\d+\) must match",
         "tensor shape mismatch"),
]

_PREFILTER = re.compile("|".join(f"(?:{re.sub(r'[(][?]P<[a-z_]+>', '(?:', s.pattern.pattern)})"
                                 for s in CATALOG), re.IGNORECASE)
_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>\S+)')
_EXC = re.compile(r"^(?P<type>[A-Za-z_][\w.]*(?:Error|Exception|Interrupt|Exit|Warning|OutOfMemoryError))"
                  r"(?::\s*(?P<msg>.*))?$")

_PATH_WORDS = {
    "evaluation": re.compile(r"eval|valid|test|predict|score|inference|metric", re.I),
    "checkpoint": re.compile(r"save|checkpoint|ckpt|serializ", re.I),
    "training": re.compile(r"train|fit|forward|backward|step|optimi", re.I),
}


@dataclass
class SignatureHit:
    signature: Signature
    line: ConsoleLine
    figures: dict[str, str] = field(default_factory=dict)


@dataclass
class Traceback:
    frames: list[tuple[str, int, str]]  # (file, line, function), outermost first
    exception_type: str
    message: str
    line: ConsoleLine  # the exception line
    code_path: str  # training / evaluation / checkpoint / unknown

    @property
    def raising_frame(self) -> tuple[str, int, str] | None:
        return self.frames[-1] if self.frames else None


def to_gib(value: str | None, unit: str | None) -> float | None:
    """Convert a captured memory figure to GiB (``MiB`` -> /1024 etc.)."""
    if value is None:
        return None
    scale = {"K": 1 / 1024 ** 2, "M": 1 / 1024, "G": 1.0, "T": 1024.0}[(unit or "G")[0].upper()]
    return float(value) * scale


def classify_path(frames: list[tuple[str, int, str]]) -> str:
    """Training / evaluation / checkpoint / unknown from the innermost frame names that say so.

    The innermost frame whose function or file name matches a path wins: an OOM
    raised in ``evaluate_predictions`` called from ``main`` is an evaluation OOM.
    """
    for file, _line, func in reversed(frames):
        name = f"{func} {file.rsplit('/', 1)[-1]}"
        for path in ("evaluation", "checkpoint", "training"):
            if _PATH_WORDS[path].search(func):
                return path
        for path in ("evaluation", "checkpoint"):
            if _PATH_WORDS[path].search(name):
                return path
    return "unknown"


def scan_run(run) -> tuple[list[SignatureHit], list[Traceback]]:
    """:func:`scan` over ``run.console``, computed once per run and cached."""
    if "signatures" not in run.cache:
        run.cache["signatures"] = scan(run.console)
    return run.cache["signatures"]


def scan(lines: Iterable[ConsoleLine]) -> tuple[list[SignatureHit], list[Traceback]]:
    """Match every catalog signature and recover tracebacks in ``lines``.

    Returns (hits in line order, tracebacks in line order). Cost is linear in
    the text: one combined pre-filter regex skips lines that match nothing.
    """
    hits: list[SignatureHit] = []
    tbs: list[Traceback] = []
    frames: list[tuple[str, int, str]] = []
    for cl in lines:
        text = cl.text
        fm = _FRAME.match(text)
        if fm:
            frames.append((fm["file"], int(fm["line"]), fm["func"]))
            continue
        if frames:
            stripped = text.strip()
            em = _EXC.match(stripped)
            if em:
                tbs.append(Traceback(list(frames), em["type"], (em["msg"] or "").strip(), cl,
                                     classify_path(frames)))
                frames = []
            elif not stripped or text[:1] in (" ", "\t"):
                pass  # source lines under a frame, or blank lines
            elif not stripped.startswith(("Traceback", "During handling", "The above")):
                frames = []
        if _PREFILTER.search(text):
            for sig in CATALOG:
                m = sig.pattern.search(text)
                if m:
                    figs = {k: v for k, v in m.groupdict().items() if v is not None}
                    hits.append(SignatureHit(sig, cl, figs))
    return hits, tbs
