"""Failure signatures in console text: a declarative catalog plus a traceback reader.

Each :class:`Signature` is one entry: an id, a category, a regular expression
whose named groups are the figures it captures (memory figures come with a
``<name>_unit`` group and are converted by :func:`to_gib`), a one-line
description, and ``needles``: lower-case substrings of which every matching line
contains at least one. The needles keep the scan linear and cheap (a few
substring tests per line; the regular expressions run only on the rare lines
that contain a needle). Adding a signature is adding one entry to
:data:`CATALOG` and one fixture line in ``tests/data/signatures/cases.yaml``.

Within one line, only the first matching entry of each category is kept, so a
more specific entry placed earlier (the PyTorch >= 2.1 OOM wording) wins over
a generic one (any ``CUDA out of memory``).

The traceback reader recovers Python tracebacks (a single pasted exception line with no frames
too, when the text ends on it and holds no framed traceback; with or without their
``Traceback (most recent call last):`` header, as users often paste only the
frames, and with the ``[rank0]:`` prefixes torchrun adds), the raising frame,
the exception line, and whether the failing code path is training, evaluation
or checkpointing, from the names of the frames in the user's own code.

Lookup order with :data:`mlaudit_core.exception_causes.CAUSES` (the cause read from an exception's
class, message and frames): this catalogue decides first; a crash signature on any line decides the
verdict (rules V01-V07) before a traceback's exception is looked up in ``CAUSES`` (RT005, rule V08).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from .rundata import ConsoleLine


@dataclass(frozen=True)
class Signature:
    id: str
    category: str
    pattern: re.Pattern
    description: str
    needles: tuple[str, ...]


def _sig(
    id: str, category: str, pattern: str, description: str, needles: tuple[str, ...]
) -> Signature:
    return Signature(id, category, re.compile(pattern, re.IGNORECASE), description, needles)


_NUM = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_MEM = r"(?P<{name}>[\d.]+)\s*(?P<{name}_unit>[KMGT]i?B)"
_M = _MEM.format

#: Xid codes that NVIDIA documents as hardware, driver-memory or interconnect
#: faults (NVIDIA "Xid Errors" reference, docs.nvidia.com/deploy/xid-errors):
#: 48 double-bit ECC, 61/62 internal micro-controller, 63/64 ECC page
#: retirement / row remapping, 74 NVLink, 79 fallen off the bus, 92 high
#: single-bit ECC rate, 94/95 contained/uncontained ECC, 119/120 GSP, 140
#: unrecovered ECC. Other Xids (13, 31, 43, 45 ...) are usually raised by the
#: application itself (bad kernel, killed process) and are reported as such.
HARDWARE_XIDS = {48, 61, 62, 63, 64, 74, 79, 92, 94, 95, 119, 120, 140}

#: The shell's report of a job killed by SIGKILL in the locales bash and glibc ship: the msgstr of
#: "Killed" in /usr/share/locale/*/LC_MESSAGES/bash.mo (bash 5.x) and libc.mo (glibc 2.3x), read with
#: :mod:`gettext` (``zh_CN``: 已杀死). Matched only as a whole line, as the shell prints it.
KILLED_LOCALISED: tuple[str, ...] = (
    "已杀死",
    "強制結束",
    "強制終了",
    "죽었음",
    "Убит",
    "Убито",
    "Убијен",
    "Вбитий",
    "Вбито",
    "Забіты",
    "Безусловно прекъснат",
    "Σκοτώθηκε",
    "Getötet",
    "Abgebrochen (Killed)",
    "Processus arrêté",
    "Tué",
    "Matado",
    "Terminado (killed)",
    "Morto",
    "Morto (Killed)",
    "Ucciso",
    "Matat",
    "Zabit",
    "Zabit (SIGKILL)",
    "Zabitý",
    "Slået ihjel",
    "Dræbt",
    "Dödad",
    "Drept",
    "Tapettu",
    "Kilőve",
    "Ubijen",
    "Uničen",
    "Pobit",
    "Unicestwiony",
    "Geëlimineerd",
    "Omorât",
    "Öldürüldü",
    "Süreç durduruldu",
    "Dibunuh",
    "Terbunuh",
    "Bị giết",
    "Bị buộc kết thúc",
    "Nutraukta (killed)",
    "Murdu",
    "Buĉita",
    "Maraithe",
)

#: The catalog. Order matters within a category: the first match on a line wins.
CATALOG: list[Signature] = [
    # --- out of memory -----------------------------------------------------------------------
    _sig(
        "cuda-oom-v2",
        "oom",
        r"(?:CUDA|HIP) out of memory\. Tried to allocate "
        + _M(name="requested")
        + r"\. GPU (?P<device>\d+) has a total capaci?ty of "
        + _M(name="total")
        + r" of which "
        + _M(name="free")
        + r" is free\."
        r"(?:.*?Of the allocated memory " + _M(name="allocated") + r" is allocated by PyTorch)?"
        r"(?:.*?and " + _M(name="reserved") + r" is reserved by PyTorch but unallocated)?",
        "PyTorch (>= 2.1 wording; 2.1-2.3 print 'capacty', ROCm builds 'HIP') caching allocator failed to "
        "allocate",
        ("out of memory",),
    ),
    _sig(
        "cuda-oom",
        "oom",
        r"(?:CUDA|HIP) out of memory(?! with batch=)\.?(?: Tried to allocate "
        + _M(name="requested")
        + r")?"
        r"(?:.*?GPU (?P<device>\d+))?"
        r"(?:.*?" + _M(name="total") + r" total capacity)?"
        r"(?:.*?" + _M(name="allocated") + r" already allocated)?"
        r"(?:.*?" + _M(name="free") + r" free)?"
        r"(?:.*?" + _M(name="reserved") + r" reserved in total)?",
        "PyTorch CUDA caching allocator failed to allocate",
        ("out of memory",),
    ),
    _sig(
        "cuda-error-oom",
        "oom",
        r"CUDA error: out of memory|cudaErrorMemoryAllocation|error == cudaSuccess \(2 vs\. 0\)"
        r"|\bcuda[A-Z]\w*\(.{0,300}?\bout of memory\b",
        "a CUDA call outside the caching allocator could not allocate device memory (Caffe's CUDA_CHECK "
        "prints the error's number: 2 is cudaErrorMemoryAllocation; a library's own check that names the "
        "CUDA runtime call, as dlib's CHECK_CUDA, prints the runtime's error string 'out of memory' after it)",
        ("out of memory", "cudaerrormemoryallocation", "cudasuccess (2 vs. 0)"),
    ),
    _sig(
        "mps-oom",
        "oom",
        r"MPS backend out of memory \(MPS allocated: "
        + _M(name="allocated")
        + r".*?max allowed: "
        + _M(name="total")
        + r"\)\. Tried to allocate "
        + _M(name="requested"),
        "PyTorch MPS (Apple) backend out of memory",
        ("out of memory",),
    ),
    _sig(
        "torch-oom-error",
        "oom",
        r"torch\.(?:cuda\.)?OutOfMemoryError",
        "torch OutOfMemoryError raised",
        ("outofmemoryerror",),
    ),
    _sig(
        "batch-size-search-exhausted",
        "oom",
        r"No executable batch size found, reached zero",
        "accelerate's find_executable_batch_size (the HF Trainer's auto_find_batch_size) halved the batch on "
        "every out-of-memory error down to zero: not even the smallest batch fits in memory",
        ("no executable batch size",),
    ),
    _sig(
        "cublas-alloc-failed",
        "oom",
        r"CUBLAS_STATUS_ALLOC_FAILED|CUDNN_STATUS_ALLOC_FAILED",
        "cuBLAS/cuDNN could not allocate its workspace (device memory exhausted)",
        ("alloc_failed",),
    ),
    _sig(
        "xla-oom",
        "oom",
        r"RESOURCE_EXHAUSTED|Resource exhausted: OOM|OOM when allocating tensor",
        "XLA / TensorFlow / JAX out of memory",
        ("resource_exhausted", "resource exhausted", "oom when allocating"),
    ),
    _sig(
        "host-oom-killer",
        "oom",
        r"Out of memory: Killed process (?P<pid>\d+)|Detected (?P<events>\d+) oom[-_]kill event|oom[-_]kill\b|"
        r"step tasks have been OOM Killed|The node was low on resource: memory\b",
        "the kernel OOM killer stopped a process (host memory), or the kubelet evicted the pod for it",
        (
            "out of memory: killed",
            "oom-kill",
            "oom_kill",
            "oom killed",
            "low on resource: memory",
        ),
    ),
    _sig(
        "oom-recovery",
        "oom_recovered",
        r"attempting to recover from OOM in forward/backward pass|ran out of memory in validation step, retrying batch",
        "fairseq caught an out-of-memory error, skipped the batch (training) or retried it (validation)",
        ("recover from oom", "retrying batch"),
    ),
    _sig(
        "oom-retry",
        "oom_recovered",
        r"(?P<device>CUDA|MPS|CPU) out of memory with batch=(?P<old_batch>\d+)\. Reducing to batch=(?P<new_batch>\d+)",
        "Ultralytics caught an out-of-memory error in its first epoch, halved the batch and retried (recovered)",
        ("out of memory with batch",),
    ),
    # --- distributed ---------------------------------------------------------------------------
    _sig(
        "nccl-watchdog-timeout",
        "collective_timeout",
        r"(?:\[(?:PG [^\]]*?)?Rank (?P<rank>\d+)\]\s*)?Watchdog caught collective operation timeout"
        r"(?:.*?SeqNum=(?P<seq>\d+))?(?:.*?OpType=(?P<op>\w+))?(?:.*?Timeout\(ms\)=(?P<timeout_ms>\d+))?"
        r"(?:.*?ran for (?P<ran_ms>\d+) milliseconds)?",
        "NCCL/collective watchdog timed out",
        ("watchdog caught",),
    ),
    _sig(
        "nccl-error",
        "collective_timeout",
        r"NCCL (?:error|WARN).*?(?:unhandled system error|unhandled cuda error|remote process exited|"
        r"timeout|internal error)|ncclSystemError|ncclUnhandledCudaError|ncclRemoteError|ncclInternalError|"
        r"NCCL communicator was aborted|Some NCCL operations have failed or timed out|"
        r"Heartbeat monitor timed out|watchdog got stuck for \d+ seconds|"
        r"Exception raised from ncclCommWatchdog|WorkNCCL::checkTimeout",
        "NCCL communicator error, an aborted communicator, or a stuck NCCL watchdog; the C++ stack of the "
        "watchdog's own exception (torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp: 'Exception raised from "
        "ncclCommWatchdog', a WorkNCCL::checkTimeout frame) when its message line was not kept",
        ("nccl", "heartbeat monitor", "watchdog got stuck"),
    ),
    _sig(
        "store-timeout",
        "collective_timeout",
        r"DistStoreError|Timed out (?:after \d+ seconds )?waiting for (?:clients|the store|rendezvous)|"
        r"RendezvousTimeoutError",
        "the rendezvous / key-value store timed out (a rank never joined)",
        ("diststoreerror", "timed out", "rendezvoustimeout"),
    ),
    # --- processes -----------------------------------------------------------------------------
    _sig(
        "dataloader-worker-killed",
        "worker_killed",
        r"DataLoader worker \(pid(?:\(s\))? (?P<pid>[\w, ]+)\) (?:is killed by signal|exited unexpectedly)"
        r"(?::\s*(?P<signal>[\w ]+))?",
        "a data-loader worker process died",
        ("dataloader worker",),
    ),
    _sig(
        "dataloader-timeout",
        "worker_killed",
        r"DataLoader timed out after (?P<timeout>" + _NUM + r") seconds",
        "a data-loader worker delivered no batch within the DataLoader's timeout (a hung, starved or dead "
        "worker: slow storage, a deadlock, a worker stuck on one sample)",
        ("dataloader timed out",),
    ),
    _sig(
        "dataloader-shm",
        "worker_killed",
        r"insufficient shared memory \(shm\)|unable to (?:write to|open) (?:shared memory|file </torch_)",
        "a data-loader worker ran out of shared memory (/dev/shm)",
        ("shared memory", "/torch_"),
    ),
    _sig(
        "sigkill",
        "killed",
        r"Signal 9 \(SIGKILL\) received by PID (?P<pid>\d+)|exitcode\s*:\s*-9\b|"
        r"^\s*(?:Killed|" + "|".join(map(re.escape, KILLED_LOCALISED)) + r")\s*$|"
        r"\b\d+\s+Killed\s+\S|task \d+: Killed|killed by signal 9\b|got signal: 9\b|"
        r"died with <Signals\.SIGKILL: 9>|exits with return code = -9\b|"
        # torch.multiprocessing.spawn ProcessExitedException: "process {i} terminated with signal {name}"
        r"process \d+ terminated with signal SIGKILL\b|"
        # a return code of -9 (Python's returncode of a child ended by signal 9) or an exit status of 137
        # (128 + 9, the shell's and an IDE's report of a child killed by SIGKILL)
        r"\b(?:error|exit|return) code:?\s*-9\b|\bexit(?:ed with)? (?:code|status):?\s*137\b|"
        r"interrupted by signal 9\b",
        "the process was killed with SIGKILL (often the host OOM killer or the scheduler); a bare line is the "
        "shell's job report, in any of its locales (KILLED_LOCALISED)",
        (
            "killed",
            "sigkill",
            "exitcode",
            "return code = -9",
            "code -9",
            "code: -9",
            "code 137",
            "status 137",
            "code: 137",
            "signal 9",
            *(w.lower() for w in KILLED_LOCALISED),
        ),
    ),
    _sig(
        "sigbus",
        "killed",
        r"Signal 7 \(SIGBUS\) received by PID (?P<pid>\d+)|exitcode\s*[:=]\s*-7\b|got signal: 7\b|"
        r"process \d+ terminated with signal SIGBUS\b|exits with return code = -7\b|"
        # the shell's job report of a child ended by SIGBUS (bash jobs.c, strsignal(SIGBUS) of glibc):
        # 'Bus error (core dumped)' on its own line or after bash's 'line N: PID'
        r"^\s*(?:\S+: line \d+:\s+\d+\s+)?Bus error(?: \(core dumped\))?(?:\s+\S.*)?$",
        "the process died of SIGBUS (signal 7, exit code -7): a memory-mapped file or shared memory (/dev/shm, a "
        "container's 64 MB default) ran out or went away under it: a host resource, not the code",
        ("sigbus", "exitcode", "signal: 7", "code = -7", "bus error"),
    ),
    _sig(
        "sigsegv",
        "killed",
        r"Signal 11 \(SIGSEGV\) received by PID (?P<pid>\d+)|exitcode\s*[:=]\s*-11\b|"
        r"process \d+ terminated with signal SIGSEGV\b|exits with return code = -11\b|"
        r"\bexit(?:ed with)? (?:code|status):?\s*139\b|"
        # CPython's faulthandler (Python/faulthandler.c: 'Fatal Python error: Segmentation fault')
        r"^\s*Fatal Python error: Segmentation fault\b|"
        # the shell's job report of a child ended by SIGSEGV (bash jobs.c, strsignal(SIGSEGV) of glibc):
        # 'Segmentation fault (core dumped)' on its own line or after bash's 'line N: PID'
        r"^\s*(?:\S+: line \d+:\s+\d+\s+)?Segmentation fault(?: \(core dumped\))?(?:\s+\S.*)?$",
        "the process died of a segmentation fault (SIGSEGV, signal 11: exit code -11 or 139): a crash inside "
        "native code (a compiled library, a driver, a C++/CUDA extension), with no Python error of its own",
        (
            "sigsegv",
            "exitcode",
            "code = -11",
            "code 139",
            "status 139",
            "code: 139",
            "segmentation fault",
        ),
    ),
    _sig(
        "time-limit",
        "time_limit",
        r"CANCELLED AT (?P<at>\S+) DUE TO TIME LIMIT|DUE TO TIME LIMIT|DUE TO JOB REQUEUE|"
        r"exceeded (?:its |the )?(?:wall ?time|time limit)|walltime exceeded|job killed: walltime",
        "the scheduler stopped the job at its wall-time limit",
        ("time limit", "wall time", "walltime"),
    ),
    _sig(
        "cloud-preemption-notice",
        "preemption",
        # the cloud's notice that a spot / preemptible VM is being reclaimed, as a worker or an agent logs
        # it: GCP's metadata server ("preempted", "termination is imminent"), AWS's spot interruption notice
        r"(?i)termination is imminent|instance (?:is being |was |has been )?preempted|"
        r"spot (?:instance )?interruption (?:notice|warning)|preemption notice received",
        "the cloud provider is reclaiming a spot / preemptible machine (a preemption, not the job's fault)",
        ("imminent", "preempted", "interruption", "preemption notice"),
    ),
    _sig(
        "slurm-cancelled",
        "preemption",
        r"\*\*\* (?:JOB|STEP) [\d.]+ (?:ON \S+ )?CANCELLED AT (?P<at>\S+) \*\*\*",
        "Slurm cancelled the job with no reason given (scancel by the user or an administrator): slurmstepd "
        "sends SIGTERM, then SIGKILL; the reasons it does name (time limit, preemption, node failure) are "
        "the entries beside this one",
        ("cancelled at",),
    ),
    _sig(
        "sigterm",
        "preemption",
        r"(?:received|got|caught)\s+(?:signal\s+)?(?:SIGTERM|signal 15)|SIGTERM received|"
        r"Signal 15 \(SIGTERM\)|Received SIGTERM|SIGTERM:\s*15|Received (?:15|1|3) death signal|"
        r"got signal: (?:15|1|3)\b|exitcode\s*:\s*-15\b|died with <Signals\.SIG(?:TERM|HUP|QUIT): \d+>|"
        r"exits with return code = -15\b",
        "the process was asked to terminate (SIGTERM/SIGHUP/SIGQUIT: a scheduler, a preemption, an operator)",
        (
            "sigterm",
            "signal 15",
            "death signal",
            "got signal",
            "exitcode",
            "died with <signals",
            "return code = -15",
        ),
    ),
    _sig(
        "sigint",
        "interrupt",
        r"Detected KeyboardInterrupt, attempting graceful shutdown|Received 2 death signal|got signal: 2\b|"
        r"exitcode\s*:\s*-2\b|died with <Signals\.SIGINT: 2>|Main process received SIGINT|"
        r"exits with return code = -2\b",
        "the process was interrupted (SIGINT: Ctrl-C, or a launcher passing it on)",
        (
            "keyboardinterrupt",
            "death signal",
            "got signal",
            "exitcode",
            "died with <signals",
            "received sigint",
            "return code = -2",
        ),
    ),
    _sig(
        "elastic-teardown",
        "teardown",
        r"Sending process (?P<pid>\d+) closing signal (?P<signal>SIG\w+)|Killing subprocess (?P<pid2>\d+)",
        "a launcher (torchrun, the DeepSpeed launcher) stopping the other workers (a consequence, not a cause)",
        ("closing signal", "killing subprocess"),
    ),
    _sig(
        "preempted",
        "preemption",
        r"\bpreempt(?:ed|ion)\b|spot instance.*(?:interrupt|terminat)|instance is being preempted",
        "the scheduler preempted the job",
        ("preempt", "spot instance"),
    ),
    _sig(
        "requeue",
        "requeue",
        r"^(?!.*failed with error code).*?(?:\brequeu(?:e|ed|es|eing|ing)\b|\brequeing\b)",
        "the job was requeued (not Lightning's 'Requeuing SLURM job N failed with error code')",
        ("requeu", "requeing"),
    ),
    # --- hardware ------------------------------------------------------------------------------
    _sig(
        "xid",
        "hardware",
        r"\bXid\b(?:\s*\([^)]*\))?\s*[:=]?\s*(?:error\s*)?(?P<xid>\d+)",
        "an NVIDIA driver Xid event (see HARDWARE_XIDS)",
        ("xid",),
    ),
    _sig(
        "ecc",
        "hardware",
        r"uncorrectable ECC|double[- ]bit ECC|ECC error|cudaErrorECCUncorrectable|ECC page retirement",
        "a GPU memory ECC error",
        ("uncorrectable ecc", "bit ecc", "ecc error", "eccuncorrectable", "ecc page"),
    ),
    _sig(
        "gpu-lost",
        "hardware",
        r"GPU has fallen off the bus|GPU is lost|NVML_ERROR_GPU_IS_LOST|"
        r"Unable to determine the device handle for GPU",
        "the GPU disappeared from the bus",
        ("fallen off the bus", "gpu is lost", "gpu_is_lost", "device handle for gpu"),
    ),
    _sig(
        "node-fail",
        "hardware",
        r"CANCELLED AT (?P<at>\S+) DUE TO NODE FAIL(?:URE)?|DUE TO NODE FAIL",
        "the scheduler cancelled the job because its node failed",
        ("node fail",),
    ),
    _sig(
        "cuda-illegal-access",
        "cuda_error",
        r"an illegal memory access was encountered|unspecified launch failure",
        "a CUDA kernel faulted (often a software bug; a hardware fault when an Xid precedes it)",
        ("illegal memory access", "unspecified launch failure"),
    ),
    _sig(
        "device-assert",
        "device_assert",
        r"device-side assert triggered",
        "a CUDA kernel assertion (typically an index/label out of range)",
        ("device-side assert",),
    ),
    # --- storage -------------------------------------------------------------------------------
    _sig(
        "disk-full",
        "disk_full",
        r"(?:\[Errno 28\] )?No space left on device(?::\s*'(?P<path>[^']+)')?|Disk quota exceeded|"
        r"\bENOSPC\b|StorageFull",
        "the disk (or quota) filled up",
        ("no space left", "quota exceeded", "enospc", "storagefull"),
    ),
    _sig(
        "checkpoint-write-failed",
        "checkpoint_failed",
        r"PytorchStreamWriter failed writing (?:file|central directory)|unexpected pos \d+ vs \d+|"
        r"Error while serializing: IoError|"
        r"\bFile (?P<path>.+?) cannot be opened\.|\bwrite\(\): fd \d+ failed with (?P<error>.+)",
        "writing a checkpoint failed (torch.save / safetensors): the file could not be created or written "
        "(a full or failing disk, a missing or read-only directory), or is truncated",
        (
            "pytorchstreamwriter",
            "unexpected pos",
            "error while serializing",
            "cannot be opened",
            "write(): fd",
        ),
    ),
    _sig(
        "checkpoint-read-failed",
        "checkpoint_failed",
        r"PytorchStreamReader failed reading zip archive|failed finding central directory|"
        r"Error while deserializing header|invalid load key",
        "reading a checkpoint failed: the file is truncated or not a checkpoint",
        ("pytorchstreamreader", "central directory", "deserializing header", "invalid load key"),
    ),
    # --- fp16 loss scaling ---------------------------------------------------------------------
    _sig(
        "min-loss-scale",
        "min_loss_scale",
        r"Current loss scale already at minimum|Minimum loss scale reached(?: \((?P<min_scale>"
        + _NUM
        + r")\))?|"
        r"loss scale is already at minimum(?: \((?P<min_scale2>" + _NUM + r")\))?|"
        r"Loss is scaled down to minimum|loss scale.*below.*minimum",
        "fp16 dynamic loss scaling hit its minimum",
        ("minimum",),
    ),
    _sig(
        "overflow-skip",
        "overflow_skip",
        r"Gradient overflow\.\s+Skipping step(?:,\s*(?:loss scaler \d+ )?reducing loss scale to "
        r"(?P<loss_scale>" + _NUM + r"))?",
        "fp16 overflow (apex/Megatron): the step is skipped and the loss scale reduced",
        ("gradient overflow",),
    ),
    _sig(
        "overflow-skip-deepspeed",
        "overflow_skip",
        r"(?:OVERFLOW!|loss scale overflow!|Overflow detected\.)\s*(?:Rank (?P<rank>\d+) )?Skipping step\.?"
        r"(?:\s*Attempted loss scale: (?P<attempted>"
        + _NUM
        + r"), reducing to (?P<loss_scale>"
        + _NUM
        + r"))?|"
        r"\bGrad overflow on iteration:? (?P<iteration>\d+)",
        "fp16 overflow (DeepSpeed): the step is skipped and the loss scale reduced",
        ("overflow!", "overflow detected", "grad overflow on iteration"),
    ),
    _sig(
        "overflow-skip-fairseq",
        "overflow_skip",
        r"(?:gradient overflow detected, ignoring gradient|AMP: overflow detected), setting (?:loss )?scale to:?"
        r"\s*(?:to\s+)?(?P<loss_scale>" + _NUM + r")|"
        r"Overflow detected at step \d+, ignoring gradient, decreasing loss scale from "
        + _NUM
        + r" to (?P<loss_scale2>\d+(?:\.\d+)?(?:e[-+]?\d+)?)",
        "fp16 overflow (fairseq, fairseq2): the update is skipped and the loss scale reduced",
        ("overflow detected",),
    ),
    # --- benign warnings: the library's routine notice, not a failure -----------------------------
    _sig(
        "lightgbm-no-positive-gain",
        "benign_warning",
        r"\[LightGBM\] \[Warning\] No further splits with positive gain, best gain: (?P<best_gain>-?inf|"
        + _NUM
        + r")",
        "LightGBM: a leaf has no split that lowers the loss (small leaves, few distinct values); the tree "
        "stops growing there and boosting goes on",
        ("no further splits with positive gain",),
    ),
    _sig(
        "sklearn-convergence-warning",
        "benign_warning",
        # the max_iter family of sklearn 1.9.1's ConvergenceWarning texts (docs/signatures.md rows); other
        # ConvergenceWarnings (a clustering that labels every sample -1) are not routine
        r"\bConvergenceWarning: (?P<what>(?:[\w-]+ failed to converge|Stochastic Optimizer: Maximum iterations|"
        r"Maximum number of iteration reached|Objective did not converge|The max_iter was reached|"
        r"Solver terminated early \(max_iter)[^\n]*)",
        "scikit-learn: the solver stopped at max_iter before its tolerance; the fitted model is returned and "
        "usable (raise max_iter or scale the features if the score matters)",
        ("convergencewarning",),
    ),
    # --- numerics and shapes -------------------------------------------------------------------
    _sig(
        "nan-message",
        "nan",
        r"\b(?:loss(?:es)?|grad(?:ient)?s?(?: norm)?)\b[^\n]{0,40}?\b(?:is|are|became|becomes?|contains?|was|"
        r"were|turn(?:s|ed)? (?:into|to))\s+(?:nan|inf|infinite|non-?finite)\b|NaN or Inf found|non-finite (?:loss|gradient|norm)|"
        r"Detected (?:NaN|inf)|returned nan values|nan loss detected|"
        r"is (?:not finite|infinite)\. Previous best|encountered (?:NaN|inf)\b|(?:Batch (?P<batch>\d+): )?Invalid loss, terminating training|"
        r"(?:Loss|Fitness) NaN/Inf detected|NaN persisted for \d+ epochs|found (?:NaN|Inf) in local grad norm|"
        r"Unexpected result (?:nan|inf)\b|(?:Nan|Infinity) in summary histogram for|"
        r"Tensor had (?:Inf and NaN|NaN|Inf) values|"
        # darknet's per-iteration line (``%d: %f, %f avg loss, ...``) with the loss and its average NaN
        r"^\s*\d+: -?(?:nan|inf), -?(?:nan|inf) avg loss|"
        # a script's bare ``print(step, loss)`` record with the value NaN (``76980 nan``): nothing else on it
        r"^\s*\d+[ \t,:]+-?(?:nan|inf)\s*$|"
        # a reporter's sentence (``I got a [nan.0] value at each step``, ``it gives nan loss``)
        r"\b(?:got|get|getting|gets|gives?|giving|produces?)\s+(?:an?\s+)?\W?nan(?:\.0)?\W?\s+(?:values?|loss(?:es)?)\b",
        "a NaN/inf message printed by the framework",
        (
            "nan",
            "finite",
            "is inf",
            "are inf",
            "or inf",
            "detected inf",
            "encountered inf",
            "became inf",
            "becomes inf",
            "contains inf",
            "contain inf",
            "was inf",
            "invalid loss",
            "found inf",
            "result inf",
            "infinity in summary",
            "had inf",
        ),
    ),
    _sig(
        "loss-printed-nan",
        "nan",
        # a line with no figure before it that names a loss as NaN (``discrim_loss nan``, ``cls:nan, loss:
        # nan``, ``the training cost goes up to nan``, ``loss变为nan``), or torch's printed loss tensor
        # ``'loss_cls': tensor(nan, ...)``: what a report pastes instead of a curve. A record with figures
        # (``iter 8: loss nan, iter time: 1957.89ms``) is the series reader's, not a message's; a running
        # average's ``(nan)`` after a finite loss (Swin's ``loss 3.25 (3.33) grad_norm 1.03 (nan)``) neither
        r"^[^\d\n]*?(?<![a-z])(?:[a-z_/.-]*loss(?:es)?|cost)(?![_ ]?scal)[^\d\n]{0,40}?(?<![a-z])nan"
        r"(?![a-z])|(?<![a-z])[a-z_/.-]*loss[a-z_/.-]*['\"]?\s*[:=]\s*tensor\(nan\b",
        "a loss printed or reported as NaN",
        ("nan",),
    ),
    _sig(
        "shape-mismatch",
        "shape_mismatch",
        r"size mismatch for (?P<param>[\w.]+): copying a param with shape (?P<checkpoint_shape>torch\.Size\(\[[\d, ]*\]\))"
        r" from checkpoint, the shape in current model is (?P<model_shape>torch\.Size\(\[[\d, ]*\]\))|"
        r"mat1 and mat2 shapes cannot be multiplied \((?P<mat1>\d+x\d+) and (?P<mat2>\d+x\d+)\)|"
        r"The size of tensor a \((?P<size_a>\d+)\) must match the size of tensor b \((?P<size_b>\d+)\)"
        r"(?: at non-singleton dimension (?P<dim>\d+))?|"
        r"Expected input batch_size \((?P<input_batch>\d+)\) to match target batch_size \((?P<target_batch>\d+)\)|"
        r"size mismatch|shape mismatch|Incompatible shapes",
        "tensor shape mismatch",
        (
            "mismatch",
            "shapes cannot",
            "size of tensor",
            "incompatible shapes",
            "expected input batch_size",
        ),
    ),
    # --- a launch that failed before training (the shell, the interpreter, the argument parser) ---
    _sig(
        "shell-unbound-variable",
        "launch_failed",
        r"^(?:\S+: )?(?:line \d+: )?(?P<name>[A-Za-z_]\w*): unbound variable\s*$",
        "bash under 'set -u' stopped the launch script at a variable that is not set",
        ("unbound variable",),
    ),
    _sig(
        "shell-command-not-found",
        "launch_failed",
        r"^(?:\S+: )?(?:line \d+: )?(?P<command>[^\s:]+): command not found\s*$",
        "the shell could not find the command the launch script runs (not installed, not on PATH)",
        ("command not found",),
    ),
    _sig(
        "launch-file-not-found",
        "launch_failed",
        r"^(?:\S+: )?(?:line \d+: )?(?P<path>[^\s:]+): (?:No such file or directory|Permission denied)\s*$|"
        r"can't open file '(?P<path2>[^']+)': \[Errno \d+\] No such file or directory\s*$",
        "the shell or the Python interpreter could not open the script it was asked to run (a wrong path, "
        "a missing execute bit)",
        ("no such file or directory", "permission denied"),
    ),
    _sig(
        "argparse-error",
        "launch_failed",
        r"^(?P<prog>[\w.\-/]+): error: (?P<message>(?:unrecognized arguments|the following arguments are "
        r"required|argument [-\w/]+|one of the arguments|ambiguous option|expected one argument)(?::|\b).*)$",
        "the script's argument parser (argparse, HfArgumentParser) rejected the command line and exited "
        "with status 2 before anything ran",
        (": error: ",),
    ),
    # --- checkpoints (context for resume and disk findings) ---------------------------------------
    _sig(
        "checkpoint-saved",
        "checkpoint",
        r"\bSaving checkpoint at (?P<at>\d+ (?:epochs?|iterations?))\b|"
        r"\b(?:model|checkpoint|weights|state)s? (?:saved|written|stored) (?:to|at|in|as)\s*:?\s*"
        r"(?:\.{2,}\s+)?(?P<path>[^\s'\"]+)|\bSaving (?:model )?(?:checkpoint|model|weights) (?:to|at|in)\s*:?\s*"
        r"(?:\.{2,}\s+)?(?P<path2>[^\s'\"]+)",
        "a checkpoint was written",
        ("saved", "written", "stored", "saving"),
    ),
    _sig(
        "checkpoint-restored",
        "resume",
        r"\b(?:Restoring|Restored|Resuming|Resumed|Loading|Loaded) (?:\w+ )?(?:states? |training )?"
        r"from (?:the )?(?:checkpoint|ckpt)\b|\bresum(?:e|ing|ed) (?:training )?from (?:checkpoint|step|iteration)|"
        r"\bloaded checkpoint\b|\bcheckpoint (?:restored|loaded)\b",
        "a checkpoint was restored (a resumed run)",
        ("checkpoint", "ckpt", "resum"),
    ),
]

_NEEDLES = tuple(sorted({n for s in CATALOG for n in s.needles}))
#: Categories that describe what happened, not what went wrong: a checkpoint written or restored,
#: torchrun stopping the sibling workers of a failed one, an out-of-memory the framework recovered from.
#: A library's routine warning (``benign_warning``) is not among them: its line is a message, never metrics
#: (``best gain: -inf`` is no series).
CONTEXT_CATEGORIES = frozenset({"checkpoint", "resume", "teardown", "oom_recovered"})


@dataclass(frozen=True)
class Meaning:
    """What a category of signatures means for the verdict (docs/signatures.md)."""

    meaning: str
    cause: str  # the report's cause class (:class:`mlaudit_core.report.Cause` value)
    outcome: str  # the outcome the verdict gives when this is the first broken layer
    detector: str  # the detector that reports it


#: Category -> meaning, cause class and outcome. A kill, termination or interrupt signal is an
#: infrastructure event or an interrupt, never a code bug: its cause is infra_runtime,
#: or inconclusive for an interrupt whose sender the log does not name.
MEANINGS: dict[str, Meaning] = {
    "oom": Meaning("out of memory (device or host)", "infra_runtime", "crashed", "RT001"),
    "oom_recovered": Meaning(
        "out of memory caught and retried with a smaller batch", "-", "-", "context"
    ),
    "collective_timeout": Meaning(
        "collective/NCCL timeout or communicator error", "infra_runtime", "crashed", "RT002"
    ),
    "preemption": Meaning(
        "termination signal (SIGTERM/SIGHUP/SIGQUIT) or preemption",
        "infra_runtime",
        "crashed (running when requeued)",
        "RT003",
    ),
    "requeue": Meaning("the scheduler requeued the job", "infra_runtime", "running", "RT003"),
    "interrupt": Meaning(
        "interrupt (SIGINT, Ctrl-C)", "inconclusive", "crashed", "ending (V17), RT005 (V08)"
    ),
    "teardown": Meaning(
        "torchrun stopping the other workers after one failed", "-", "-", "context"
    ),
    "worker_killed": Meaning("data-loader worker death", "infra_runtime", "crashed", "RT004"),
    "killed": Meaning(
        "kill signal (SIGKILL, exit code -9, the OOM killer)", "infra_runtime", "crashed", "RT010"
    ),
    "time_limit": Meaning("scheduler wall-time limit", "infra_runtime", "crashed", "RT010"),
    "hardware": Meaning(
        "GPU hardware or node fault (Xid, ECC, lost GPU, node failure)",
        "infra_runtime",
        "crashed",
        "RT007",
    ),
    "cuda_error": Meaning(
        "CUDA kernel fault",
        "infra_runtime when a hardware fault precedes it",
        "crashed",
        "RT007 context",
    ),
    "device_assert": Meaning(
        "device-side assertion (an index or label out of range)",
        "data_config",
        "crashed",
        "RT005 context",
    ),
    "disk_full": Meaning("disk full or quota exceeded", "infra_runtime", "crashed", "RT008"),
    "checkpoint_failed": Meaning(
        "checkpoint write or read failed (truncated file)", "infra_runtime", "crashed", "RT008"
    ),
    "min_loss_scale": Meaning(
        "fp16 loss-scale floor",
        "data_config (model_convergence with a divergence)",
        "crashed",
        "RT006",
    ),
    "overflow_skip": Meaning(
        "fp16 overflow: step skipped, loss scale reduced",
        "benign unless they persist",
        "- (diverged when failing)",
        "RT006",
    ),
    "benign_warning": Meaning(
        "a library's routine warning: a solver stopped at max_iter (scikit-learn ConvergenceWarning), a "
        "leaf with no gainful split (LightGBM); fp16 overflow skips are their own category (overflow_skip)",
        "healthy",
        "- (unknown when nothing else is judged)",
        "V20",
    ),
    "nan": Meaning(
        "non-finite loss or gradients reported by the framework",
        "from the onset (LI001/OP004)",
        "diverged",
        "RT009",
    ),
    "shape_mismatch": Meaning(
        "tensor shape mismatch", "correctness_bug", "crashed", "RT005 context"
    ),
    "launch_failed": Meaning(
        "the launch failed before training: the shell stopped the launch script (an unbound variable "
        "under set -u, a command or file not found, permission denied), the interpreter could not open "
        "the script, or the argument parser rejected the command line",
        "data_config",
        "crashed",
        "RT011",
    ),
    "checkpoint": Meaning("a checkpoint was written", "-", "-", "context"),
    "resume": Meaning("a checkpoint was restored (a resumed run)", "-", "-", "LI003"),
}
_RANK_PREFIX = re.compile(r"^(?:\[(?:rank|default)\d+\]:\s?|rank\d+:\s|\d{1,4}:\s)")
#: A line that is only a reporter's elision mark (``[...]``, ``[snip]``, ``...``, ``......``, ``…``): the
#: paste was cut there. Kept in the console (no metric is read from it), so the verdict knows the
#: text is an excerpt (:func:`mlaudit_core.verdict.evidence.excerpt`).
ELISION_LINE = re.compile(
    r"^\s*(?:[\[(]\s*(?:\.{3,}|…+|snip(?:ped)?|truncated|omitted|cut)\s*[\])]|\.{3,}|…+)\s*$", re.I
)
_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>\S+)')
#: The exception line that ends a traceback: a class named ...Error, ...Exception, ...Interrupt, ...Exit,
#: ...Warning, or Python's base ``Exception`` itself (``raise Exception('Dataset not found.')`` in YOLOv5/v7's
#: utils/general.py check_dataset prints ``Exception: Dataset not found.``).
_EXC = re.compile(
    r"^(?P<type>Exception|[A-Za-z_][\w.]*(?:Error|Exception|Interrupt|Exit|Warning|OutOfMemoryError))"
    r"(?: \(see above for traceback\))?(?::\s*(?P<msg>.*))?$"
)
#: A pasted exception line with no frames above it (``IOError: cannot identify image file ...``): the
#: class ends in Error or Exception and a message follows. It is read as the run's exception only when no
#: traceback with frames is in the text, it is among the last :data:`BARE_TAIL_LINES` lines of its
#: file and no line after it shows the job going on (:data:`_GOES_ON`): the paste ends on the error, as
#: a crash does; an error line a job logged and survived is followed by more of its output.
#: TensorFlow 1.x ends a graph error's output with the class, ``(see above for traceback)`` and the
#: message (tensorflow/python/framework/errors_impl.py ``OpError.__str__`` after the op's definition
#: frames: ``InvalidArgumentError (see above for traceback): Labels length is zero in batch 27``).
_BARE_EXC = re.compile(
    r"^(?P<type>[A-Za-z_][\w.]*(?:Error|Exception))(?: \(see above for traceback\))?:\s*(?P<msg>\S.*)$"
)
BARE_TAIL_LINES = 30
#: A frame line cut inside its file name (``File "C:\\venv\\Lib\\site-pa[...]``, the elision mark removed by
#: the reader): Python writes a frame line whole, so the paste was cut there.
_CUT_FRAME = re.compile(r'^\s*File "[^"\n]*$')
#: A line that is only an exception's class (``MemoryError``: Python prints it alone when the exception has
#: no message). Read only to name the class of a traceback the paste cut before its exception line.
_CLASS_LINE = re.compile(r"^(?P<type>[A-Z][\w.]*(?:Error|Exception))$")
#: TensorFlow's error codes (the gRPC canonical codes of tensorflow/core/protobuf/error_codes.proto,
#: ``OK`` aside). Each is raised in Python as the class named by the code in CamelCase plus ``Error``
#: (tensorflow/python/framework/errors_impl.py: INVALID_ARGUMENT -> InvalidArgumentError).
TF_ERROR_CODES = (
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
)


def tf_error_class(code: str) -> str:
    """The Python class TensorFlow raises for an error code as a status line prints it
    (``Invalid argument`` before TF 2.10's absl status, ``INVALID_ARGUMENT`` after):
    ``InvalidArgumentError``."""
    return "".join(w.capitalize() for w in re.split(r"[ _]", code.strip())) + "Error"


#: One root error of a TensorFlow status that aggregates several (``2 root error(s) found.`` then
#: ``  (0) Invalid argument: Incompatible shapes: ...``, one per device or replica;
#: tensorflow/core/common_runtime and tsl/platform/errors.cc): the code names the class, the text
#: after it is the message. Read as a bare exception line of that class.
_TF_ROOT_ERROR = re.compile(
    r"^\s*\(\d+\)\s+(?P<code>"
    + "|".join(
        alt
        for c in TF_ERROR_CODES
        for alt in (c, re.escape(c.replace("_", " ").lower().capitalize()))
    )
    + r"):\s*(?P<msg>\S.*)$"
)
#: The graph node a TensorFlow op error names on the line after its message (``[[Node: CTCLoss =
#: CTCLoss[...]]]`` in TF 1.x, ``[[{{node CTCLoss}}]]``, ``[[node focal_loss/... (defined at
#: det_model_fn.py:190) ]]`` in TF 2.x): the op that raised, kept as the exception's frame (file and
#: line where the op was defined when printed, the node's name as the function).
_TF_NODE = re.compile(
    r"^\s*\[\[\s*(?:Node:\s*(?P<name>[^\s=\]]+)|\{\{\s*node\s+(?P<name2>[^\s}]+)\s*\}\}|"
    r"node\s+(?P<name3>[^\s\]]+)(?:\s+\(defined at\s+(?P<file>[^\s:]+(?::[^\s:]+)*?):(?P<line>\d+)\s*\))?)"
)
#: libstdc++'s verbose terminate handler (gcc libstdc++-v3/libsupc++/vterminate.cc,
#: ``__gnu_cxx::__verbose_terminate_handler``): a C++ exception nothing caught ended the process
#: (``terminate called after throwing an instance of 'c10::Error'`` then ``  what():  CUDA error: ...``),
#: then ``Aborted (core dumped)``. Read as the run's exception, class and message, like a bare line.
_CXX_TERMINATE = re.compile(r"terminate called after throwing an instance of '(?P<type>[^']+)'")
_CXX_WHAT = re.compile(r"^\s*what\(\):\s*(?P<msg>.*)$")
#: The fatal check of a C++ ML library, pasted without the Python exception around it: dmlc-core's
#: ``CHECK`` failure (dmlc/logging.h ``LogMessageFatal``: ``[hh:mm:ss] file:line: Check failed: cond:
#: message``; XGBoost, MXNet) and LightGBM's ``Log::Fatal`` (include/LightGBM/utils/log.h: ``[LightGBM]
#: [Fatal] message``). Read as a bare exception line (``dmlc::Error``, ``LightGBMError``), with the
#: same tail rule: the process raises it and stops.
_NATIVE_FATAL = re.compile(
    r"^(?:\[[\d:]+\]\s+)?(?:\S+:\d+:\s+)?(?P<dmlc>Check failed:\s*\S.*)$|^\[LightGBM\] \[Fatal\]\s*(?P<lgbm>\S.*)$"
)
#: Darknet's fatal error (AlexeyAB/darknet src/utils.c ``error()``: ``Darknet error location: {file},
#: {func}(), line #{line}`` on stderr, then ``perror(msg)`` prints the message and the errno text on the
#: next line, then a ``backtrace (N entries)`` and ``exit(EXIT_FAILURE)``; the hank-ai fork appends
#: `` - {strerror}`` to the location line). Read as a bare exception of class ``DarknetError`` raised
#: in that C function, its message the next line (without perror's ``: Success`` errno text).
_DARKNET_LOCATION = re.compile(
    r"^Darknet error location: (?P<file>[^,\n]+), (?P<func>\w+)\(\), line #(?P<line>\d+)"
)
_PERROR_SUCCESS = re.compile(r": Success\s*$")
#: An exception printed as its repr at the start of a line (``ConnectionError("Couldn't reach 'x' on the
#: Hub (ConnectionError)")``: hydra 1.3 hydra/_internal/instantiate/_instantiate2.py _call_target prints
#: ``Error in call to target '{}':`` then ``{exc!r}``; loggers that format ``%r``). Read as a bare exception
#: line of that class, its message the first argument.
_REPR_EXC = re.compile(
    r"""^(?P<type>[A-Za-z_][\w.]*(?:Error|Exception))\((?P<q>['"])(?P<msg>.*?)(?P=q)(?:,.*)?\)\s*$"""
)
#: A Python ``logging`` record at level ERROR, CRITICAL or FATAL (the level name as ``logging`` prints it,
#: upper case, as a word of the record's prefix: ``... - ERROR - ...``, ``ERROR:root:...``, ``[ERROR]``):
#: a handler that caught the exception and logged its text (``logger.error(f"Training failed with error:
#: {e}")``). ``str(e)`` drops the class; :data:`_MESSAGE_CLASS` reads it back from the message where the
#: raising package's own wording names it.
_LOG_LEVEL_ERROR = re.compile(r"(?:^|[\s\-|\[:])(?:ERROR|CRITICAL|FATAL)(?=[\s\-|\]:])")
#: Exception messages whose wording names their class, each after the colon that ends the logged text
#: before it, as the package formats ``str(e)``: CPython 3.11 Lib/importlib/metadata/__init__.py
#: ``PackageNotFoundError.__str__`` ('No package metadata was found for {name}': a library's version
#: check of a distribution that is not installed), Python/import.c ('No module named {!r}',
#: ModuleNotFoundError), Lib/pickle.py and Modules/_pickle.c save_global ("Can't pickle local object
#: {!r}", AttributeError; 3.12-3.13 "Can't get local object {!r}"), torch 2.x
#: torch/utils/data/_utils/collate.py ``default_collate_err_msg_format`` (TypeError 'default_collate:
#: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}').
_MESSAGE_CLASS: tuple[tuple[re.Pattern, str], ...] = tuple(
    (re.compile(r"(?:^|:\s)(" + p + r".*)$"), cls)
    for p, cls in (
        (r"No package metadata was found for \S", "PackageNotFoundError"),
        (r"No module named '[\w.]+'", "ModuleNotFoundError"),
        (r"Can't (?:pickle|get) local object '", "AttributeError"),
        (r"default_collate: batch must contain ", "TypeError"),
    )
)


def logged_exception(text: str) -> tuple[str, str] | None:
    """``(class, message)`` of an exception a ``logging`` record at level ERROR or above carries as its
    text (:data:`_LOG_LEVEL_ERROR`, :data:`_MESSAGE_CLASS`), or None."""
    lv = _LOG_LEVEL_ERROR.search(text)
    if lv is None:
        return None
    rest = text[lv.end() :].rstrip()
    for pattern, cls in _MESSAGE_CLASS:
        if m := pattern.search(rest):
            return cls, m.group(1)
    return None


#: huggingface_hub's retry warning (huggingface_hub 2.4.0 huggingface_hub/utils/_http.py
#: _http_backoff_base: ``'{err}' thrown while requesting {method} {url}`` for the network errors it retries
#: on, httpx2's TimeoutException and NetworkError by default; ``HTTP Error {status} thrown while requesting
#: {method} {url}`` for a status it retries on). The last one a paste ends on is the request that failed
#: for good. Its class is the first exception class its text names (requests' ``(ProtocolError('Connection
#: aborted.', ...))``), else ``NetworkError``.
_HUB_RETRY = re.compile(r"\bthrown while requesting (?:GET|HEAD|POST|PUT|PATCH|DELETE) \S+")
_INNER_CLASS = re.compile(r"\b([A-Za-z_]\w*(?:Error|Exception))\(")
#: Darknet's message that a file it reads is not there (src/utils.c ``file_error``: ``Couldn't open file:
#: {path}`` on stderr, then ``exit(EXIT_FAILURE)``): a bare exception of class ``DarknetError``.
_DARKNET_FILE = re.compile(r"^Couldn't open file: (?P<path>\S.*)$")
#: CPython's report of an exception it swallowed (``PyErr_WriteUnraisable`` in Python/errors.c: a
#: ``__del__``, a weakref callback or an atexit hook raised, typically at interpreter shutdown): the
#: traceback that follows did not stop the run.
_UNRAISABLE = "Exception ignored in"
#: The detail lines of torch's ``load_state_dict`` error (torch/nn/modules/module.py: the message of the
#: RuntimeError 'Error(s) in loading state_dict for ...'), pasted without the error line above them: they
#: are that exception's message, printed by nothing else.
_STATE_DICT_DETAIL = re.compile(
    r"^\s*(?:size mismatch for [\w.]+: copying a param with shape|Missing key\(s\) in state_dict|"
    r"Unexpected key\(s\) in state_dict)"
)
#: A line that says the job went on after an error line: a progress bar, a rate, a step/epoch/loss figure.
_GOES_ON = re.compile(
    r"\d+%\||\d(?:it/s|s/it)\b|\b(?:epoch|step|iter(?:ation)?|loss|acc(?:uracy)?)\b\W{0,3}\d", re.I
)
_LIBRARY = re.compile(
    r"site-packages|dist-packages|/lib/python\d|<frozen |\\lib\\|/torch/|/tensorflow/|"
    r"/keras/|/jax/|/transformers/|/lightning/|/pytorch_lightning/|/deepspeed/|/accelerate/"
)


def is_library_frame(path: str) -> bool:
    """Whether a traceback frame's file is inside an installed library or the interpreter
    (site-packages, dist-packages, lib/pythonX, frozen modules, the torch/tensorflow/keras/jax/
    transformers/lightning/deepspeed/accelerate sources), not the user's own code."""
    return bool(_LIBRARY.search(path))


_PATH_WORDS = {
    "evaluation": re.compile(r"eval|valid|test|predict|score|inference|metric", re.IGNORECASE),
    "checkpoint": re.compile(r"save|checkpoint|ckpt|serializ|state_dict", re.IGNORECASE),
    # ``forward`` and ``backward`` are left out on purpose: evaluation calls forward too.
    "training": re.compile(
        r"train|fit|optimi|(?:^|_)step(?:$|_)|backward|run_epoch|one_epoch", re.IGNORECASE
    ),
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

    def __post_init__(self) -> None:
        # the message is quoted cut to a length in findings and summaries: redacted whole
        # first, as a cut credential no longer matches its shape (mlaudit_core/redact.py)
        from .redact import redact_text

        self.message = redact_text(self.message)

    @property
    def raising_frame(self) -> tuple[str, int, str] | None:
        return self.frames[-1] if self.frames else None

    @property
    def user_frame(self) -> tuple[str, int, str] | None:
        """The innermost frame outside installed libraries (where the user's code called in)."""
        for f in reversed(self.frames):
            if not _LIBRARY.search(f[0]):
                return f
        return self.raising_frame


#: The file of a frame that is a TensorFlow graph op printed without where it was defined.
GRAPH_OP = "<graph>"


def frame_text(frame: tuple[str, int, str]) -> str:
    """A traceback frame as a finding quotes it: ``file:line in function``, or ``the graph op NAME``
    for a TensorFlow op whose definition site the error did not print."""
    if frame[0] == GRAPH_OP:
        return f"the graph op {frame[2]}"
    return f"{frame[0]}:{frame[1]} in {frame[2]}"


def to_gib(value: str | None, unit: str | None) -> float | None:
    """Convert a captured memory figure to GiB (``MiB`` -> /1024 etc.)."""
    if value is None:
        return None
    scale = {"K": 1 / 1024**2, "M": 1 / 1024, "G": 1.0, "T": 1024.0}[(unit or "G")[0].upper()]
    return float(value) * scale


def xid_is_hardware(xid: str | int | None) -> bool | None:
    """Whether an Xid code is a documented hardware fault (:data:`HARDWARE_XIDS`); ``None`` if unknown."""
    if xid is None:
        return None
    try:
        return int(xid) in HARDWARE_XIDS
    except ValueError:
        return None


def classify_path(frames: list[tuple[str, int, str]]) -> str:
    """Training / evaluation / checkpoint / unknown from the innermost user frame names that say so.

    Frames inside installed libraries (site-packages, torch, transformers ...) are
    skipped: their names (``forward``, ``_call_impl``) say nothing about the phase.
    The innermost user frame whose function name matches a path wins, then file
    names are tried: an OOM raised in ``score_fast_model`` called from
    ``evaluate_predictions`` called from ``main`` is an evaluation OOM.
    """
    user = [f for f in frames if not _LIBRARY.search(f[0])] or frames
    for _file, _line, func in reversed(user):
        for path in ("evaluation", "checkpoint", "training"):
            if _PATH_WORDS[path].search(func):
                return path
    for file, _line, _func in reversed(user):
        name = file.replace("\\", "/").rsplit("/", 1)[-1]
        for path in ("evaluation", "checkpoint", "training"):
            if _PATH_WORDS[path].search(name):
                return path
    return "unknown"


def could_match(text: str) -> bool:
    """Whether some signature's needle is in the line (a cheap pre-filter; no regex runs)."""
    low = text.lower()
    return any(n in low for n in _NEEDLES)


def is_relevant(text: str) -> bool:
    """Whether a console line can matter to a signature or a traceback (used to thin huge logs)."""
    return (
        'File "' in text
        or "Error" in text
        or "ERROR" in text
        or "CRITICAL" in text
        or "FATAL" in text
        or "Traceback" in text
        or "Exception" in text
        or "Check failed" in text
        or "[Fatal]" in text
        or text.startswith(("Darknet error location", "Couldn't open file: "))
        or "thrown while requesting" in text
        or "[[" in text
        or (text.lstrip().startswith("(") and _TF_ROOT_ERROR.match(text) is not None)
        or could_match(text)
    )


def scan_run(run) -> tuple[list[SignatureHit], list[Traceback]]:
    """:func:`scan` over ``run.console``, computed once per run and cached."""
    if "signatures" not in run.cache:
        run.cache["signatures"] = scan(run.console)
    return run.cache["signatures"]


def match_line(text: str) -> list[tuple[Signature, dict[str, str]]]:
    """Catalog entries matching one line (first per category) with their figures."""
    low = text.lower()
    if not any(n in low for n in _NEEDLES):
        return []
    out: list[tuple[Signature, dict[str, str]]] = []
    seen: set[str] = set()
    for sig in CATALOG:
        if sig.category in seen or not any(n in low for n in sig.needles):
            continue
        m = sig.pattern.search(text)
        if m:
            seen.add(sig.category)
            figs = {k: v.strip() for k, v in m.groupdict().items() if v is not None}
            for k in [k for k in figs if k.endswith("2") and k[:-1] not in figs]:
                figs[k[:-1]] = figs.pop(
                    k
                )  # an alternative's group (path2, loss_scale2) names the same figure
            if "path" in figs:
                figs["path"] = figs["path"].rstrip(".,;:")
            out.append((sig, figs))
    return out


#: torchrun's failure report (``ChildFailedError``, torch.distributed.elastic.multiprocessing.errors,
#: ``_FAILURE_FORMAT_TEMPLATE``): a ``Failures:`` section listing the other workers, then ``Root Cause
#: (first observed failure):``. The signals in the ``Failures:`` section are torchrun's own teardown of
#: the siblings after the root cause (SIGTERM, exit code -15), not something done to the job.
_ELASTIC_FAILURES = re.compile(r"^\s*Failures:\s*$")
_ELASTIC_ROOT = re.compile(r"^\s*Root Cause \(first observed failure\):")
_ELASTIC_END = re.compile(r"^\s*={20,}\s*$")
_SIBLING = _sig(
    "elastic-sibling-stopped",
    "teardown",
    r".",
    "a signal torchrun's failure report lists for "
    "a worker other than the root cause (the launcher stopped it)",
    (),
)
_SIGNAL_CATEGORIES = frozenset({"killed", "preemption", "interrupt"})


def scan(lines: Iterable[ConsoleLine]) -> tuple[list[SignatureHit], list[Traceback]]:
    """Match every catalog signature and recover tracebacks in ``lines``.

    Returns (hits in line order, tracebacks in line order). Cost is linear in
    the text: a line without any signature's needle costs a few substring tests.
    A traceback after Python's ``Exception ignored in: ...`` line (an exception in a ``__del__`` or
    an atexit hook, which Python printed and swallowed) is not the run's exception.
    Inside torchrun's failure report, a signal listed under ``Failures:`` (before the root
    cause) is the launcher's teardown of the other workers: it is reported as
    ``elastic-sibling-stopped`` (a context category), not as a kill or a termination.
    """
    sc = _Scan()
    for cl in lines:
        sc.line(cl)
    return sc.result()


def _elastic_section(section: str | None, text: str) -> str | None:
    """Where a line is in torchrun's failure report: ``failures`` from its ``Failures:`` line,
    ``root`` from its ``Root Cause`` line to the report's end, None outside it."""
    if _ELASTIC_FAILURES.match(text):
        return "failures"
    if section and _ELASTIC_ROOT.match(text):
        return "root"
    if section == "root" and _ELASTIC_END.match(text):
        return None
    return section


class _Scan:
    """One pass of :func:`scan`: the hits, the tracebacks, the bare exception lines (read as
    tracebacks when a log holds none), the frames of the traceback being read, and whether the
    traceback that follows was swallowed by Python (``Exception ignored in``)."""

    def __init__(self) -> None:
        self.hits: list[SignatureHit] = []
        self.tbs: list[Traceback] = []
        self.bare: list[Traceback] = []
        self.last: dict[str, int] = {}
        self.frames: list[tuple[str, int, str]] = []
        self.unraisable = False
        self.cut: ConsoleLine | None = None  # the elision mark that cut the traceback being read
        self.classes: list[tuple[str, ConsoleLine]] = []  # lines that are only an exception's class
        self.end: ConsoleLine | None = None  # the last line read
        self.prev: ConsoleLine | None = None  # the line read before the last
        self.section: str | None = (
            None  # None, "failures" or "root" inside a torchrun failure report
        )

    def line(self, cl: ConsoleLine) -> None:
        """Read one line: a frame, a traceback's exception line or a bare exception line, then
        the signatures it matches (a signal listed under torchrun's ``Failures:`` is the
        launcher's teardown of a sibling worker)."""
        text = cl.text
        self.last[cl.source] = cl.lineno
        self.prev, self.end = self.end, cl
        if text[:1] in "[r0123456789":
            text = _RANK_PREFIX.sub("", text, count=1)
        self.section = _elastic_section(self.section, text)
        if text.startswith(_UNRAISABLE):
            self.unraisable = True  # the traceback that follows was printed and swallowed by Python
            return
        fm = _FRAME.match(text)
        if fm:
            self.frames.append((fm["file"], int(fm["line"]), fm["func"]))
            return
        if self.frames:
            self._traceback_line(text, cl)
        else:
            self._bare_line(text, cl)
        for sig, figs in match_line(text):
            if self.section == "failures" and sig.category in _SIGNAL_CATEGORIES:
                figs = {**figs, "listed_as": sig.id}
                sig = _SIBLING
            self.hits.append(SignatureHit(sig, cl, figs))

    def _traceback_line(self, text: str, cl: ConsoleLine) -> None:
        """A line after a traceback's frames: its exception line ends it (kept unless swallowed),
        source lines, carets and blank lines belong to it, any other line drops it."""
        stripped = text.strip()
        em = _EXC.match(stripped)
        if em:
            if not self.unraisable:
                self.tbs.append(
                    Traceback(
                        list(self.frames),
                        em["type"],
                        (em["msg"] or "").strip(),
                        cl,
                        classify_path(self.frames),
                    )
                )
            self.frames = []
            self.unraisable = False
            self.cut = None
        elif not stripped or text[:1] in (" ", "\t"):
            pass  # source lines under a frame, carets, or blank lines
        elif ELISION_LINE.match(stripped):
            self.cut = (
                cl  # the reporter cut the paste here: the frames after it, if any, continue it
            )
        elif not stripped.startswith(("Traceback", "During handling", "The above")):
            self._cut_traceback()
            self.frames = []

    def _named(self, t: Traceback) -> Traceback:
        """A cut traceback (no class) with the class of the only class-only line of its file, else ``t``."""
        if t.exception_type:
            return t
        names = {name for name, cl in self.classes if cl.source == t.line.source}
        if len(names) != 1:
            return t
        return Traceback(t.frames, names.pop(), "", t.line, t.code_path)

    def _cut_traceback(self) -> None:
        """Keep the traceback being read when the paste was cut inside it (an elision mark after its
        frames, no exception line after the mark): the run raised, the class and message are not in
        the text (an empty ``exception_type``)."""
        if self.cut is not None and self.frames and not self.unraisable:
            self.tbs.append(
                Traceback(list(self.frames), "", "", self.cut, classify_path(self.frames))
            )
        self.cut = None

    def _bare_line(self, text: str, cl: ConsoleLine) -> None:
        """A line outside a traceback: a bare exception line, a native library's fatal check, a
        state-dict mismatch detail, a C++ ``terminate called`` with its ``what():`` line on the
        next line; a line that says the run goes on drops the bare exceptions of its source."""
        if (
            self._python_or_tf_line(text, cl)
            or self._native_line(text, cl)
            or self._printed_error_line(text, cl)
        ):
            return
        if cm := _CLASS_LINE.match(text.strip()):
            self.classes.append((cm["type"], cl))
        if self.bare and _GOES_ON.search(text):
            self.bare = [t for t in self.bare if t.line.source != cl.source]

    def _python_or_tf_line(self, text: str, cl: ConsoleLine) -> bool:
        """A bare Python exception line, a TensorFlow root error, or the graph node printed after
        one (its raising frame); True when ``text`` was one of them."""
        bare = self.bare
        if text[:1] not in (" ", "\t") and (bm := _BARE_EXC.match(text.rstrip())):
            if not self.unraisable:
                bare.append(Traceback([], bm["type"], bm["msg"].strip(), cl, "unknown"))
            self.unraisable = False
        elif tf := _TF_ROOT_ERROR.match(text.rstrip()):
            bare.append(Traceback([], tf_error_class(tf["code"]), tf["msg"].strip(), cl, "unknown"))
        elif (
            bare
            and not bare[-1].frames
            and bare[-1].line.source == cl.source
            and 0 < cl.lineno - bare[-1].line.lineno <= 2
            and (node := _TF_NODE.match(text))
        ):
            t = bare[-1]
            name = node["name"] or node["name2"] or node["name3"]
            frame = (node["file"] or GRAPH_OP, int(node["line"] or 0), name)
            bare[-1] = Traceback(
                [frame], t.exception_type, t.message, t.line, classify_path([frame])
            )
        else:
            return False
        return True

    def _native_line(self, text: str, cl: ConsoleLine) -> bool:
        """A native library's fatal check, a state-dict mismatch detail, a C++ ``terminate
        called`` or the ``what():`` line after it; True when ``text`` was one of them."""
        bare = self.bare
        if nf := _NATIVE_FATAL.match(text.rstrip()):
            if not self.unraisable:
                kind = "dmlc::Error" if nf["dmlc"] else "LightGBMError"
                bare.append(Traceback([], kind, (nf["dmlc"] or nf["lgbm"]).strip(), cl, "unknown"))
            self.unraisable = False
        elif _STATE_DICT_DETAIL.match(text):
            bare.append(Traceback([], "RuntimeError", text.strip(), cl, "checkpoint"))
        elif cxx := _CXX_TERMINATE.search(text):
            bare.append(Traceback([], cxx["type"], "", cl, "unknown"))
        elif (
            bare
            and not bare[-1].message
            and bare[-1].line.source == cl.source
            and bare[-1].line.lineno == cl.lineno - 1
            and (what := _CXX_WHAT.match(text))
        ):
            t = bare[-1]
            bare[-1] = Traceback([], t.exception_type, what["msg"].strip(), t.line, t.code_path)
        else:
            return False
        return True

    def _printed_error_line(self, text: str, cl: ConsoleLine) -> bool:
        """An exception printed as its repr, huggingface_hub's retry warning of a request, Darknet's
        fatal error (its location line, then its message on the next line) or its missing file; True
        when ``text`` was one of them."""
        bare = self.bare
        if rp := _REPR_EXC.match(text.rstrip()):
            bare.append(Traceback([], rp["type"], rp["msg"].strip(), cl, "unknown"))
        elif lg := logged_exception(text):
            bare.append(Traceback([], lg[0], lg[1].strip(), cl, "unknown"))
        elif _HUB_RETRY.search(text):
            bare.append(self._hub_retry(text, cl))
        elif _DARKNET_FILE.match(text.rstrip()):
            bare.append(Traceback([], "DarknetError", text.strip(), cl, "unknown"))
        elif dn := _DARKNET_LOCATION.match(text):
            frame = (dn["file"].strip(), int(dn["line"]), dn["func"])
            bare.append(Traceback([frame], "DarknetError", "", cl, "unknown"))
        elif (
            bare
            and bare[-1].exception_type == "DarknetError"
            and not bare[-1].message
            and bare[-1].line.source == cl.source
            and bare[-1].line.lineno == cl.lineno - 1
            and text.strip()
        ):
            t = bare[-1]
            msg = _PERROR_SUCCESS.sub("", text.strip())
            bare[-1] = Traceback(t.frames, t.exception_type, msg, t.line, t.code_path)
        else:
            return False
        return True

    def _hub_retry(self, text: str, cl: ConsoleLine) -> Traceback:
        """huggingface_hub's retry warning (:data:`_HUB_RETRY`) as a bare exception: the first class its
        text names (with the line before when the warning wrapped onto a second line), else
        ``NetworkError``."""
        whole = text.strip()
        prev = self.prev
        if (
            prev is not None
            and prev.source == cl.source
            and prev.lineno == cl.lineno - 1
            and not _INNER_CLASS.search(whole)
            and _INNER_CLASS.search(prev.text)
        ):
            whole = prev.text.strip() + whole  # the warning wrapped onto a second line
        inner = _INNER_CLASS.search(whole)
        return Traceback([], inner[1] if inner else "NetworkError", whole, cl, "unknown")

    def result(self) -> tuple[list[SignatureHit], list[Traceback]]:
        """(hits, tracebacks); without a traceback, the bare exception lines within the last
        :data:`BARE_TAIL_LINES` lines of their source. A text that ends inside a traceback's frames on a
        frame line cut inside its file name (:data:`_CUT_FRAME`: ``File "...site-pa[...]``, a paste the
        reporter cut) keeps that traceback as cut; a log that merely ends after whole frames may have been
        cut by the process dying while it printed them, and says nothing of the exception. A cut
        traceback takes its class from a line of the same file that is only an exception's class
        (:data:`_CLASS_LINE`: the reporter pasted the exception line apart from the frames)."""
        if (
            self.frames
            and self.cut is None
            and self.end is not None
            and _CUT_FRAME.match(self.end.text)
        ):
            self.cut = self.end
        self._cut_traceback()
        self.tbs = [self._named(t) for t in self.tbs]
        tbs = self.tbs
        if not tbs:
            tbs = [
                t for t in self.bare if t.line.lineno > self.last[t.line.source] - BARE_TAIL_LINES
            ]
        return self.hits, tbs
