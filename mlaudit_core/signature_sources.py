"""Where each failure signature's messages come from: the frameworks' own source.

Every :data:`SOURCES` row is one message a framework, launcher, scheduler or driver prints, with
the :data:`mlaudit_core.signatures.CATALOG` entry that must recognise it, where the text is written
(package, version read, file, function and line), the format as the source writes it (``{}`` or
``%s`` stand for the filled values) and one message filled as the package prints it.
``check`` says how ``tests/test_signature_sources.py`` holds the row to the real package:

* ``produced``: the test runs the package (a torchrun job whose worker gets SIGKILL, a DataLoader
  whose worker dies, Keras' TerminateOnNaN, Lightning's handlers, ``torch.save`` to a full disk,
  anomaly mode) and matches what it printed or raised;
* ``installed``: the test reads the file of the installed package (a test dependency: torch,
  lightning, transformers, accelerate, keras) and checks that the format's literal text is there;
* ``source``: the package is not a test dependency (DeepSpeed builds from an sdist, fairseq,
  fairseq2, Megatron-core, mmengine, Ultralytics pull their own stacks, TensorFlow is a 270 MB wheel);
  the format was read from the released package named by ``version`` and :func:`format_in_file`
  checks it against an unpacked copy (``python -m mlaudit_core.signature_sources DIR ...`` prints
  the check per row; compiled libraries are searched as bytes);
* ``upstream``: compiled code that the CPU wheel does not ship (the CUDA caching allocator, NCCL
  process group), scheduler and kernel messages, and NVIDIA driver messages: the file named in the
  project's repository or the vendor's documentation.

Every row, whatever its check, is also tested the plain way: the filled message is an instance of
its format and the signature matches it, capturing ``figures``. ``docs/signatures.md`` is generated
from this table (``mlaudit rules --signatures --format markdown``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class MessageSource:
    signature: str  # CATALOG id
    package: str  # distribution, or the project (slurm, linux, nvidia-driver)
    version: str  # the version whose text was read
    file: str  # path inside the installed package or the project's repository
    where: str  # function / class, and the line in that version
    template: str  # the format as the source writes it
    example: str  # a message filled as the package prints it
    check: str  # produced | installed | source | upstream
    figures: dict[str, str] = field(default_factory=dict)


_T = "2.13.0"  # torch
_L = "2.6.6"  # lightning

SOURCES: tuple[MessageSource, ...] = (
    # --- out of memory ---------------------------------------------------------------------------------
    MessageSource(
        "cuda-oom-v2",
        "torch",
        ">= 2.4",
        "c10/cuda/CUDACachingAllocator.cpp",
        "DeviceCachingAllocator::malloc, TORCH_CHECK_WITH(OutOfMemoryError, ...)",
        "CUDA out of memory. Tried to allocate {}. GPU {} has a total capacity of {} of which {} is free. {}"
        "Of the allocated memory {} is allocated by PyTorch, and {} is reserved by PyTorch but unallocated.",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.95 GiB. GPU 0 has a total capacity of "
        "14.57 GiB of which 1.58 GiB is free. Process 2493055 has 12.02 GiB memory in use. Of the allocated memory "
        "734.07 MiB is allocated by PyTorch, and 33.93 MiB is reserved by PyTorch but unallocated.",
        "upstream",
        {
            "requested": "1.95",
            "device": "0",
            "total": "14.57",
            "free": "1.58",
            "allocated": "734.07",
            "allocated_unit": "MiB",
            "reserved": "33.93",
        },
    ),
    MessageSource(
        "cuda-oom-v2",
        "torch",
        "2.1-2.3",
        "c10/cuda/CUDACachingAllocator.cpp",
        "DeviceCachingAllocator::malloc (the 'capacty' spelling of 2.1-2.3)",
        "CUDA out of memory. Tried to allocate {}. GPU {} has a total capacty of {} of which {} is free. {}",
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 448.00 MiB. GPU 1 has a total capacty "
        "of 79.10 GiB of which 364.31 MiB is free. Process 175080 has 1.46 GiB memory in use.",
        "upstream",
        {"requested": "448.00", "device": "1", "total": "79.10", "free": "364.31"},
    ),
    MessageSource(
        "cuda-oom-v2",
        "torch (ROCm)",
        ">= 2.4",
        "c10/cuda/CUDACachingAllocator.cpp (hipified)",
        "DeviceCachingAllocator::malloc, HIP build",
        "HIP out of memory. Tried to allocate {}. GPU {} has a total capacity of {} of which {} is free.",
        "OutOfMemoryError: HIP out of memory. Tried to allocate 704.00 GiB. GPU 0 has a total capacity of "
        "191.69 GiB of which 186.02 GiB is free.",
        "upstream",
        {"requested": "704.00", "total": "191.69"},
    ),
    MessageSource(
        "cuda-oom",
        "torch",
        "< 2.1",
        "c10/cuda/CUDACachingAllocator.cpp",
        "THCCachingAllocator malloc (1.x wording)",
        "CUDA out of memory. Tried to allocate {} (GPU {}; {} total capacity; {} already allocated; {} free; "
        "{} reserved in total by PyTorch)",
        "RuntimeError: CUDA out of memory. Tried to allocate 4.18 GiB (GPU 0; 10.92 GiB total capacity; 4.68 GiB "
        "already allocated; 2.44 GiB free; 7.85 GiB reserved in total by PyTorch)",
        "upstream",
        {"requested": "4.18", "total": "10.92", "allocated": "4.68", "free": "2.44"},
    ),
    MessageSource(
        "torch-oom-error",
        "torch",
        _T,
        "torch/cuda/__init__.py",
        "OutOfMemoryError (torch._C._OutOfMemoryError)",
        "OutOfMemoryError",
        "torch.OutOfMemoryError",
        "produced",
    ),
    MessageSource(
        "batch-size-search-exhausted",
        "accelerate",
        "1.16.0",
        "accelerate/utils/memory.py",
        "find_executable_batch_size.decorator, line 157",
        "No executable batch size found, reached zero.",
        "RuntimeError: No executable batch size found, reached zero.",
        "produced",
    ),
    MessageSource(
        "cuda-error-oom",
        "torch",
        _T,
        "c10/cuda/CUDAException.h",
        "C10_CUDA_CHECK -> cudaGetErrorString",
        "CUDA error: {}",
        "RuntimeError: CUDA error: out of memory",
        "upstream",
    ),
    MessageSource(
        "cuda-error-oom",
        "caffe",
        "1.0",
        "include/caffe/util/device_alternate.hpp",
        'CUDA_CHECK(condition): CHECK_EQ(error, cudaSuccess) << " " << cudaGetErrorString(error), printed by '
        "glog's LOG(FATAL) (syncedmem.cpp SyncedMemory::to_gpu); 2 = cudaErrorMemoryAllocation in the CUDA "
        "runtime's cudaError enum",
        "Check failed: error == cudaSuccess ({} vs. 0)  {}",
        "F1025 17:11:54.660645  1436 syncedmem.cpp:58] Check failed: error == cudaSuccess (2 vs. 0)  out of memory",
        "upstream",
    ),
    MessageSource(
        "cuda-error-oom",
        "dlib",
        "19.0",
        "dlib/dnn/cuda_utils.h (dlib/cuda/cuda_utils.h from 19.5)",
        'CHECK_CUDA(call): sout << "Error while calling " << #call << " in file " << __FILE__ << ":" << __LINE__ '
        '<< ". code: " << error << ", reason: " << cudaGetErrorString(error), thrown as dlib::cuda_error; '
        "cudaGetErrorString(cudaErrorMemoryAllocation) is 'out of memory'",
        "Error while calling {} in file {}:{}. code: {}, reason: {}",
        "Error while calling cudaMalloc(&data, new_size*sizeof(float)) in file /home/u/dlib/dlib/dnn/gpu_data.cpp:191. "
        "code: 2, reason: out of memory",
        "upstream",
    ),
    MessageSource(
        "oom-retry",
        "ultralytics",
        "8.4.190",
        "ultralytics/engine/trainer.py",
        "BaseTrainer._do_train, line 582",
        "{} with batch={}. Reducing to batch={} and retrying ({}/3).",
        "WARNING CUDA out of memory with batch=16. Reducing to batch=8 and retrying (1/3).",
        "source",
        {"device": "CUDA", "old_batch": "16", "new_batch": "8"},
    ),
    MessageSource(
        "oom-recovery",
        "fairseq",
        "0.12.2",
        "fairseq/trainer.py",
        "Trainer.train_step, line 848 (after _log_oom, line 1361: 'OOM: Ran out of memory with exception: {}')",
        "attempting to recover from OOM in forward/backward pass",
        "2021-03-01 12:00:20 | WARNING | fairseq.trainer | attempting to recover from OOM in forward/backward pass",
        "source",
    ),
    MessageSource(
        "oom-recovery",
        "fairseq",
        "0.12.2",
        "fairseq/trainer.py",
        "Trainer.valid_step, line 1129",
        "ran out of memory in validation step, retrying batch",
        "2021-03-01 12:10:00 | WARNING | fairseq.trainer | ran out of memory in validation step, retrying batch",
        "source",
    ),
    MessageSource(
        "xla-oom",
        "tensorflow-cpu",
        "2.21.0",
        "tensorflow/libtensorflow_framework.so.2 (compiled from tensorflow/core/framework/op_kernel.cc)",
        "OpKernelContext::allocate_tensor (ResourceExhaustedError); strings of the released wheel's library",
        "OOM when allocating tensor with shape{} and type {} on {} by allocator {}",
        "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with "
        "shape[256,1024,1024] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc",
        "source",
    ),
    MessageSource(
        "host-oom-killer",
        "linux",
        "6.x",
        "mm/oom_kill.c",
        "__oom_kill_process, pr_err",
        "{}: Killed process {} ({}) total-vm:{}kB, anon-rss:{}kB, file-rss:{}kB, shmem-rss:{}kB",
        "Memory cgroup out of memory: Killed process 4242 (python) total-vm:98765432kB, anon-rss:81234567kB, "
        "file-rss:0kB, shmem-rss:0kB",
        "upstream",
        {"pid": "4242"},
    ),
    MessageSource(
        "host-oom-killer",
        "slurm",
        "23.x",
        "src/plugins/task/cgroup/task_cgroup_memory.c",
        "task_cgroup_memory_check_oom",
        "Detected {} oom_kill event in StepId={}. Some of the step tasks have been OOM Killed.",
        "slurmstepd: error: Detected 1 oom_kill event in StepId=4242.batch. Some of the step tasks "
        "have been OOM Killed.",
        "upstream",
        {"events": "1"},
    ),
    MessageSource(
        "host-oom-killer",
        "kubernetes",
        "1.2x-1.3x",
        "pkg/kubelet/eviction/helpers.go",
        "nodeLowMessageFmt (the evicted pod's status message, shown by kubectl get events / describe pod)",
        "The node was low on resource: {}. ",
        "The node was low on resource: memory. ",
        "upstream",
    ),
    # --- distributed: NCCL, store, torchrun ------------------------------------------------------------------
    MessageSource(
        "nccl-watchdog-timeout",
        "torch",
        ">= 2.2",
        "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp",
        "ProcessGroupNCCL::WorkNCCL::checkTimeout",
        "{} Watchdog caught collective operation timeout: {} ran for {} milliseconds before timing out.",
        "[rank1]:[E1218 20:27:21.433063423 ProcessGroupNCCL.cpp:629] [Rank 1] Watchdog caught collective operation "
        "timeout: WorkNCCL(SeqNum=1, OpType=BROADCAST, NumelIn=131072000, NumelOut=131072000, Timeout(ms)=600000) "
        "ran for 600081 milliseconds before timing out.",
        "upstream",
        {"rank": "1", "seq": "1", "op": "BROADCAST", "timeout_ms": "600000", "ran_ms": "600081"},
    ),
    MessageSource(
        "nccl-watchdog-timeout",
        "torch",
        ">= 2.4",
        "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp",
        "logPrefix() of the process group (PG ID, GUID, rank)",
        "[PG ID {} PG GUID {} Rank {}] Watchdog caught collective operation timeout: {}",
        "[rank3]:[E506 10:00:00.000 ProcessGroupNCCL.cpp:632] [PG ID 0 PG GUID 0(default_pg) Rank 3] Watchdog "
        "caught collective operation timeout: WorkNCCL(SeqNum=64214, OpType=ALLGATHER, NumelIn=1, NumelOut=32, "
        "Timeout(ms)=600000) ran for 600012 milliseconds before timing out.",
        "upstream",
        {"rank": "3", "op": "ALLGATHER", "timeout_ms": "600000"},
    ),
    MessageSource(
        "nccl-error",
        "torch",
        ">= 2.2",
        "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp",
        "ProcessGroupNCCL::WorkNCCL::handleException",
        "Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, "
        "subsequent GPU operations might run on corrupted/incomplete data.",
        "[rank0]:[E ProcessGroupNCCL.cpp:1537] [PG 0 Rank 0] Some NCCL operations have failed or timed out. Due to "
        "the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.",
        "upstream",
    ),
    MessageSource(
        "nccl-error",
        "torch",
        ">= 2.3",
        "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp",
        "ProcessGroupNCCL::HeartbeatMonitor::runLoop",
        "Heartbeat monitor timed out! Process will be terminated after dumping debug info.",
        "[rank2]:[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank 2] Heartbeat monitor timed out! Process will be "
        "terminated after dumping debug info. workMetaList_.size()=1",
        "upstream",
    ),
    MessageSource(
        "nccl-error",
        "torch",
        ">= 2.0",
        "torch/csrc/distributed/c10d/NCCLUtils.cpp",
        "getNcclErrorDetailStr",
        "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, remote "
        "process exited or there was a network error, NCCL version 2.21.5 ncclRemoteError: A call failed possibly due "
        "to a network error or a remote process exiting prematurely.",
        "upstream",
    ),
    MessageSource(
        "store-timeout",
        "torch",
        _T,
        "torch/csrc/distributed/c10d/TCPStore.cpp (libtorch_cpu.so)",
        "TCPStore::waitForWorkers",
        "Timed out after {} seconds waiting for clients. {}/{} clients joined.",
        "torch.distributed.DistStoreError: Timed out after 901 seconds waiting for clients. 1/2 clients joined.",
        "installed",
    ),
    MessageSource(
        "sigkill",
        "torch",
        _T,
        "torch/distributed/elastic/multiprocessing/api.py",
        "SubprocessContext._poll, line 1002",
        "failed (exitcode: %s) local_rank: %s (pid: %s) of binary: %s",
        "E1206 07:40:27.173000 8623 torch/distributed/elastic/multiprocessing/api.py:1002] failed (exitcode: -9) "
        "local_rank: 1 (pid: 8746) of binary: /usr/bin/python3",
        "produced",
    ),
    MessageSource(
        "sigkill",
        "torch",
        _T,
        "torch/distributed/elastic/multiprocessing/errors/__init__.py",
        "ProcessFailure.__post_init__, line 142 (the root cause of a ChildFailedError report)",
        "Signal {} ({}) received by PID {}",
        "  traceback : Signal 9 (SIGKILL) received by PID 8746",
        "produced",
    ),
    MessageSource(
        "sigbus",
        "torch",
        _T,
        "torch/distributed/elastic/multiprocessing/errors/__init__.py",
        "ProcessFailure.__post_init__, line 142 (a worker ended by signal 7)",
        "Signal {} ({}) received by PID {}",
        "  traceback : Signal 7 (SIGBUS) received by PID 54",
        "installed",
        {"pid": "54"},
    ),
    MessageSource(
        "sigterm",
        "torch",
        _T,
        "torch/distributed/elastic/agent/server/api.py",
        "SimpleElasticAgent.run, line 753 (the agent got SIGTERM/SIGHUP/SIGQUIT)",
        "Received %s death signal, shutting down workers",
        "W1206 08:00:00.000000 1234 torch/distributed/elastic/agent/server/api.py:753] Received 15 death signal, "
        "shutting down workers",
        "produced",
    ),
    MessageSource(
        "sigterm",
        "torch",
        _T,
        "torch/distributed/elastic/multiprocessing/api.py",
        "_terminate_process_handler, line 86 (SignalException)",
        "Process {} got signal: {}",
        "torch.distributed.elastic.multiprocessing.api.SignalException: Process 1234 got signal: 15",
        "produced",
    ),
    MessageSource(
        "sigkill",
        "torch",
        _T,
        "torch/multiprocessing/spawn.py",
        "ProcessContext.join, line 193 (ProcessExitedException: a spawned worker died of a signal)",
        "process {error_index:d} terminated with signal {name}",
        "Exception: process 1 terminated with signal SIGKILL",
        "installed",
    ),
    MessageSource(
        "sigint",
        "torch",
        _T,
        "torch/distributed/elastic/agent/server/api.py",
        "SimpleElasticAgent.run, line 753 (the agent got SIGINT)",
        "Received %s death signal, shutting down workers",
        "W1206 08:00:00.000000 1234 torch/distributed/elastic/agent/server/api.py:753] Received 2 death signal, "
        "shutting down workers",
        "installed",
    ),
    MessageSource(
        "elastic-teardown",
        "torch",
        _T,
        "torch/distributed/elastic/multiprocessing/api.py",
        "SubprocessContext._close, line 1029",
        "Sending process %s closing signal %s",
        "W1206 07:40:27.094000 8623 torch/distributed/elastic/multiprocessing/api.py:1028] Sending process 8745 "
        "closing signal SIGTERM",
        "produced",
        {"pid": "8745", "signal": "SIGTERM"},
    ),
    MessageSource(
        "sigkill",
        "cpython",
        "3.11",
        "Lib/subprocess.py",
        "CalledProcessError.__str__, line 142 (raised by accelerate launch, commands/launch.py:1049)",
        "Command '%s' died with %r.",
        "subprocess.CalledProcessError: Command '['/usr/bin/python3', 'train.py']' died with <Signals.SIGKILL: 9>.",
        "produced",
    ),
    MessageSource(
        "sigkill",
        "bash",
        "5.x",
        "doc/bash.1 (EXIT STATUS)",
        "a command ended by fatal signal N exits with 128+N; a run console prints the status (PyCharm's run window "
        "adds the signal)",
        "Process finished with exit code {} (interrupted by signal {}: {})",
        "Process finished with exit code 137 (interrupted by signal 9: SIGKILL)",
        "upstream",
    ),
    MessageSource(
        "sigkill",
        "cpython",
        "3.11",
        "Lib/subprocess.py",
        "Popen.returncode: a negative value -N is a child terminated by signal N (a launcher that prints it: "
        "NVIDIA DIGITS' job log)",
        "ERROR: error code {}",
        "ERROR: error code -9",
        "upstream",
    ),
    MessageSource(
        "dataloader-worker-killed",
        "torch",
        _T,
        "torch/utils/data/dataloader.py",
        "_MultiProcessingDataLoaderIter._try_get_data, line 1305",
        "DataLoader worker (pid(s) {}) exited unexpectedly",
        "RuntimeError: DataLoader worker (pid(s) 2816) exited unexpectedly",
        "produced",
        {"pid": "2816"},
    ),
    MessageSource(
        "dataloader-worker-killed",
        "torch",
        _T,
        "torch/csrc/DataLoader.cpp (libtorch_python.so)",
        "handler_SIGCHLD / _error_if_any_worker_fails",
        "DataLoader worker (pid {}) is killed by signal: {}. ",
        "RuntimeError: DataLoader worker (pid 2816) is killed by signal: Killed. ",
        "produced",
        {"pid": "2816", "signal": "Killed"},
    ),
    MessageSource(
        "dataloader-worker-killed",
        "torch",
        _T,
        "torch/csrc/DataLoader.cpp (libtorch_python.so)",
        "_error_if_any_worker_fails",
        "DataLoader worker (pid {}) exited unexpectedly with exit code {}. Details are lost due to multiprocessing.",
        "RuntimeError: DataLoader worker (pid 77) exited unexpectedly with exit code 1. Details are lost due to "
        "multiprocessing. Rerunning with num_workers=0 may give better error trace.",
        "installed",
        {"pid": "77"},
    ),
    MessageSource(
        "dataloader-timeout",
        "torch",
        _T,
        "torch/utils/data/dataloader.py",
        "_MultiProcessingDataLoaderIter._try_get_data, line 1450",
        "DataLoader timed out after {} seconds",
        "RuntimeError: DataLoader timed out after 0.2 seconds",
        "produced",
        {"timeout": "0.2"},
    ),
    MessageSource(
        "dataloader-shm",
        "torch",
        _T,
        "torch/csrc/DataLoader.cpp (libtorch_python.so)",
        "handler_SIGBUS",
        "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).",
        "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).",
        "installed",
    ),
    # --- signals from shells, schedulers, frameworks ------------------------------------------------------------
    MessageSource(
        "sigkill",
        "glibc",
        "2.3x",
        'po/zh_CN.po (msgid "Killed", strsignal(SIGKILL); bash.mo and libc.mo of every locale give '
        "signatures.KILLED_LOCALISED)",
        "the shell's job report of a foreground child killed by SIGKILL, in a Chinese locale",
        "已杀死",
        "已杀死",
        "upstream",
    ),
    MessageSource(
        "slurm-cancelled",
        "slurm",
        "23.x",
        "src/slurmd/slurmstepd/req.c",
        "_handle_signal_container (scancel, no reason attached)",
        "*** %s ON %s CANCELLED AT %s ***",
        "slurmstepd: error: *** JOB 41995 ON clr1247 CANCELLED AT 2022-04-14T14:08:25 ***",
        "upstream",
        {"at": "2022-04-14T14:08:25"},
    ),
    MessageSource(
        "sigbus",
        "bash",
        "5.x",
        "jobs.c",
        "notify_of_job_status (a foreground child ended by SIGBUS; the text is glibc's strsignal(SIGBUS))",
        "{}: line {}: {} Bus error {}",
        "bash: line 1: 31337 Bus error               (core dumped) python train.py",
        "produced",
    ),
    MessageSource(
        "sigsegv",
        "bash",
        "5.x",
        "jobs.c",
        "notify_of_job_status (a foreground child ended by SIGSEGV; the text is glibc's strsignal(SIGSEGV))",
        "{}: line {}: {} Segmentation fault {}",
        "bash: line 1: 31337 Segmentation fault      (core dumped) python train.py",
        "produced",
    ),
    MessageSource(
        "sigsegv",
        "cpython",
        "3.12",
        "Python/faulthandler.c",
        "faulthandler_fatal_error (the SIGSEGV handler faulthandler.enable() installs)",
        "Fatal Python error: {}",
        "Fatal Python error: Segmentation fault",
        "produced",
    ),
    MessageSource(
        "sigsegv",
        "torch",
        _T,
        "torch/distributed/elastic/multiprocessing/errors/__init__.py",
        "ProcessFailure.__post_init__, line 142 (a worker ended by signal 11)",
        "Signal {} ({}) received by PID {}",
        "  traceback : Signal 11 (SIGSEGV) received by PID 54",
        "installed",
        {"pid": "54"},
    ),
    MessageSource(
        "sigkill",
        "bash",
        "5.x",
        "jobs.c",
        "notify_of_job_status (a foreground child killed by SIGKILL)",
        "{}: line {}: {} Killed {}",
        "bash: line 1: 31337 Killed                  python train.py",
        "produced",
    ),
    MessageSource(
        "time-limit",
        "slurm",
        "23.x",
        "src/slurmd/slurmstepd/req.c",
        "_handle_signal_container",
        "*** %s ON %s CANCELLED AT %s DUE TO TIME LIMIT ***",
        "slurmstepd: error: *** JOB 4242 ON gpu-node-7 CANCELLED AT 2024-03-01T12:00:00 DUE TO TIME LIMIT ***",
        "upstream",
        {"at": "2024-03-01T12:00:00"},
    ),
    MessageSource(
        "preempted",
        "slurm",
        "23.x",
        "src/slurmd/slurmstepd/req.c",
        "_handle_signal_container",
        "*** %s ON %s CANCELLED AT %s DUE TO PREEMPTION ***",
        "slurmstepd: error: *** STEP 4242.0 ON gpu-node-7 CANCELLED AT 2024-03-01T12:00:00 DUE TO PREEMPTION ***",
        "upstream",
    ),
    MessageSource(
        "node-fail",
        "slurm",
        "23.x",
        "src/slurmd/slurmstepd/req.c",
        "_handle_signal_container",
        "*** %s CANCELLED AT %s DUE TO NODE FAILURE ***",
        "slurmstepd: error: *** JOB 4242 CANCELLED AT 2024-03-01T12:00:00 DUE TO NODE FAILURE ***",
        "upstream",
        {"at": "2024-03-01T12:00:00"},
    ),
    MessageSource(
        "sigterm",
        "lightning",
        _L,
        "lightning/pytorch/trainer/connectors/signal_connector.py",
        "_SignalConnector._sigterm_notifier_fn, line 109",
        "Received SIGTERM: {}",
        "[rank: 0] Received SIGTERM: 15",
        "produced",
    ),
    MessageSource(
        "sigint",
        "lightning",
        _L,
        "lightning/pytorch/trainer/call.py",
        "_call_and_handle_interrupt, line 58",
        "Detected KeyboardInterrupt, attempting graceful shutdown ...",
        "Detected KeyboardInterrupt, attempting graceful shutdown ...",
        "produced",
    ),
    MessageSource(
        "requeue",
        "lightning",
        _L,
        "lightning/pytorch/trainer/connectors/signal_connector.py",
        "_SignalConnector._slurm_sigusr_handler_fn, line 104",
        "Requeued SLURM job: {}",
        "Requeued SLURM job: 4242",
        "installed",
    ),
    # --- hardware -----------------------------------------------------------------------------------------------
    MessageSource(
        "xid",
        "nvidia-driver",
        "docs 2025",
        "docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html",
        "NVRM kernel log (Xid catalog; 79 = GPU has fallen off the bus)",
        "NVRM: Xid ({}): {}, {}",
        "[Mon Jan  8 10:00:01 2024] NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, GPU has fallen off the bus.",
        "upstream",
        {"xid": "79"},
    ),
    MessageSource(
        "xid",
        "nvidia-driver",
        "docs 2025",
        "docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html",
        "NVRM kernel log (63 = row remapping)",
        "NVRM: Xid ({}): {}, {}",
        "NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, Row Remapper: New row marked for remapping, reset gpu to "
        "activate.",
        "upstream",
        {"xid": "63"},
    ),
    MessageSource(
        "gpu-lost",
        "nvidia-driver",
        "docs 2025",
        "nvidia-smi (NVML_ERROR_GPU_IS_LOST)",
        "nvidia-smi device query",
        "Unable to determine the device handle for GPU {}: GPU is lost.  Reboot the system to recover this GPU",
        "Unable to determine the device handle for GPU 0000:3B:00.0: GPU is lost.  Reboot the system to recover "
        "this GPU",
        "upstream",
    ),
    MessageSource(
        "cuda-illegal-access",
        "cuda-runtime",
        "12.x",
        "docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html",
        "cudaErrorIllegalAddress, as cudaGetErrorString words it (torch: C10_CUDA_CHECK)",
        "CUDA error: an illegal memory access was encountered",
        "RuntimeError: CUDA error: an illegal memory access was encountered",
        "upstream",
    ),
    MessageSource(
        "device-assert",
        "cuda-runtime",
        "12.x",
        "docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html",
        "cudaErrorAssert, as cudaGetErrorString words it",
        "CUDA error: device-side assert triggered",
        "RuntimeError: CUDA error: device-side assert triggered",
        "upstream",
    ),
    MessageSource(
        "ecc",
        "cuda-runtime",
        "12.x",
        "docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html",
        "cudaErrorECCUncorrectable, as cudaGetErrorString words it",
        "CUDA error: uncorrectable ECC error encountered",
        "RuntimeError: CUDA error: uncorrectable ECC error encountered",
        "upstream",
    ),
    # --- storage and checkpoints ---------------------------------------------------------------------------------
    MessageSource(
        "disk-full",
        "cpython",
        "3.11",
        "Objects/exceptions.c (OSError str: [Errno N] strerror: 'filename')",
        "OSError_str",
        "[Errno {}] {}: '{}'",
        "OSError: [Errno 28] No space left on device: '/dev/full'",
        "produced",
        {"path": "/dev/full"},
    ),
    MessageSource(
        "checkpoint-write-failed",
        "torch",
        _T,
        "caffe2/serialize/inline_container.cc (libtorch_cpu.so)",
        "PyTorchStreamWriter::writeRecord / valid()",
        "PytorchStreamWriter failed {}: file write failed",
        "RuntimeError: [enforce fail at inline_container.cc:778] . PytorchStreamWriter failed writing file "
        "data/0: file write failed",
        "produced",
    ),
    MessageSource(
        "checkpoint-write-failed",
        "torch",
        _T,
        "caffe2/serialize/inline_container.cc (libtorch_cpu.so)",
        "PyTorchStreamWriter::setup (the file for torch.save cannot be created: full disk, read-only or "
        "missing directory)",
        "File {} cannot be opened.",
        "RuntimeError: File my_out/checkpoints/checkpoint_0.pt cannot be opened.",
        "installed",
        {"path": "my_out/checkpoints/checkpoint_0.pt"},
    ),
    MessageSource(
        "checkpoint-write-failed",
        "torch",
        _T,
        "torch/csrc/serialization.cpp (libtorch_python.so)",
        "doWrite (a storage written by torch.save; the legacy non-zip format in torch < 1.6)",
        "write(): fd {} failed with {}",
        "RuntimeError: write(): fd 29 failed with Input/output error",
        "installed",
        {"error": "Input/output error"},
    ),
    MessageSource(
        "checkpoint-read-failed",
        "torch",
        _T,
        "caffe2/serialize/inline_container.cc (libtorch_cpu.so)",
        "PyTorchStreamReader::init",
        "PytorchStreamReader failed {}: failed finding central directory",
        "RuntimeError: PytorchStreamReader failed reading zip archive: failed finding central directory",
        "produced",
    ),
    MessageSource(
        "checkpoint-read-failed",
        "safetensors",
        "0.8.0",
        "safetensors/_safetensors_rust (compiled from bindings/python/src/lib.rs)",
        "safe_open / load_file -> SafetensorError('Error while deserializing header: {}')",
        "Error while deserializing header: {}",
        "safetensors_rust.SafetensorError: Error while deserializing header: incomplete metadata, file not fully "
        "covered",
        "produced",
    ),
    # --- fp16 loss scaling ----------------------------------------------------------------------------------------
    MessageSource(
        "min-loss-scale",
        "deepspeed",
        "0.19.8",
        "deepspeed/runtime/fp16/loss_scaler.py",
        "DynamicLossScaler.update_scale, line 259",
        "Current loss scale already at minimum - cannot decrease scale anymore. Exiting run.",
        "Exception: Current loss scale already at minimum - cannot decrease scale anymore. Exiting run.",
        "source",
    ),
    MessageSource(
        "overflow-skip-deepspeed",
        "deepspeed",
        "0.19.8",
        "deepspeed/runtime/fp16/loss_scaler.py",
        "DynamicLossScaler.update_scale, lines 263-265",
        "[deepspeed] OVERFLOW! Rank {} Skipping step.{} Attempted loss scale: {}, reducing to {}",
        "[2025-05-01 10:00:01,100] [INFO] [loss_scaler.py:190:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping "
        "step. Attempted loss scale: 65536, reducing to 32768",
        "source",
        {"rank": "0", "attempted": "65536", "loss_scale": "32768"},
    ),
    MessageSource(
        "overflow-skip-deepspeed",
        "deepspeed",
        "0.19.8",
        "deepspeed/runtime/fp16/loss_scaler.py",
        "LossScaler.update_scale (static scale), line 153",
        "[deepspeed] OVERFLOW! Skipping step. Gradients are non-finite, weights were not updated.",
        "[deepspeed] OVERFLOW! Skipping step. Gradients are non-finite, weights were not updated.",
        "source",
    ),
    MessageSource(
        "overflow-skip-deepspeed",
        "deepspeed",
        "0.19.8",
        "deepspeed/runtime/fp16/fused_optimizer.py",
        "FP16_Optimizer._update_scale, line 413 (verbose)",
        "Grad overflow on iteration {}",
        "[2025-05-01 10:00:01,100] [INFO] [fused_optimizer.py:413:_update_scale] Grad overflow on iteration 1200",
        "source",
        {"iteration": "1200"},
    ),
    MessageSource(
        "overflow-skip-deepspeed",
        "deepspeed",
        "0.19.8",
        "deepspeed/runtime/fp16/unfused_optimizer.py",
        "FP16_UnfusedOptimizer._update_scale, line 299 (static scale)",
        "Grad overflow on iteration %s",
        "[INFO] [unfused_optimizer.py:299:_update_scale] Grad overflow on iteration 77",
        "source",
        {"iteration": "77"},
    ),
    MessageSource(
        "sigkill",
        "deepspeed",
        "0.19.8",
        "deepspeed/launcher/launch.py",
        "main.sigkill_handler, line 259 (a worker's return code)",
        "{} exits with return code = {}",
        "[ERROR] [launch.py:259:sigkill_handler] ['/usr/bin/python3', '-u', 'train.py', '--local_rank=1'] exits with "
        "return code = -9",
        "source",
    ),
    MessageSource(
        "sigint",
        "deepspeed",
        "0.19.8",
        "deepspeed/launcher/launch.py",
        "main.sigkill_handler, line 262",
        "Main process received {}, exiting",
        "[INFO] [launch.py:262:sigkill_handler] Main process received SIGINT, exiting",
        "source",
    ),
    MessageSource(
        "sigterm",
        "deepspeed",
        "0.19.8",
        "deepspeed/launcher/launch.py",
        "main.sigkill_handler, line 262",
        "Main process received {}, exiting",
        "[INFO] [launch.py:262:sigkill_handler] Main process received SIGTERM, exiting",
        "source",
    ),
    MessageSource(
        "elastic-teardown",
        "deepspeed",
        "0.19.8",
        "deepspeed/launcher/launch.py",
        "main.sigkill_handler, line 253",
        "Killing subprocess {}",
        "[INFO] [launch.py:253:sigkill_handler] Killing subprocess 4242",
        "source",
        {"pid": "4242"},
    ),
    MessageSource(
        "min-loss-scale",
        "fairseq",
        "0.12.2",
        "fairseq/optim/dynamic_loss_scaler.py",
        "DynamicLossScaler.check_overflow, line 63",
        "Minimum loss scale reached ({}). Your loss is probably exploding. ",
        "FloatingPointError: Minimum loss scale reached (0.0001). Your loss is probably exploding. Try lowering the "
        "learning rate, using gradient clipping or increasing the batch size.",
        "source",
        {"min_scale": "0.0001"},
    ),
    MessageSource(
        "overflow-skip-fairseq",
        "fairseq",
        "0.12.2",
        "fairseq/trainer.py",
        "Trainer.train_step, line 990",
        "NOTE: gradient overflow detected, ignoring gradient, {}",
        "2021-03-01 12:00:20 | INFO | fairseq.trainer | NOTE: gradient overflow detected, ignoring gradient, "
        "setting loss scale to: 64.0",
        "source",
        {"loss_scale": "64.0"},
    ),
    MessageSource(
        "overflow-skip-fairseq",
        "fairseq",
        "0.12.2",
        "fairseq/optim/amp_optimizer.py",
        "AMPOptimizer.clip_grad_norm, line 67 (the source's 'to to')",
        "AMP: overflow detected, setting scale to to {}",
        "2021-03-01 12:00:20 | INFO | fairseq.trainer | NOTE: gradient overflow detected, ignoring gradient, "
        "AMP: overflow detected, setting scale to to 32768.0",
        "source",
        {"loss_scale": "32768.0"},
    ),
    MessageSource(
        "overflow-skip-fairseq",
        "fairseq2",
        "0.8.1",
        "fairseq2/trainer.py",
        "Trainer._check_loss_scale, line 667",
        "Overflow detected at step {}, ignoring gradient, decreasing loss scale from {:g} to {:g}.",
        "[05/01/25 10:00:00] INFO     fairseq2 - Overflow detected at step 120, ignoring gradient, decreasing loss "
        "scale from 128 to 64.",
        "source",
        {"loss_scale": "64"},
    ),
    MessageSource(
        "min-loss-scale",
        "fairseq2",
        "0.8.1",
        "fairseq2/trainer.py",
        "Trainer._check_loss_scale, line 660",
        "Overflow detected at step {}, ignoring gradient, loss scale is already at minimum ({:g}). Your loss is "
        "probably exploding.",
        "[05/01/25 10:00:00] ERROR    fairseq2 - Overflow detected at step 977, ignoring gradient, loss scale is "
        "already at minimum (0.0001). Your loss is probably exploding. Try lowering the learning rate, using gradient "
        "clipping, or increasing the batch size.",
        "source",
        {"min_scale": "0.0001"},
    ),
    MessageSource(
        "min-loss-scale",
        "fairseq2",
        "0.8.1",
        "fairseq2/recipe/error.py",
        "MinimumLossScaleReachedError, line 108",
        "Loss is scaled down to minimum at step {}.",
        "fairseq2.recipe.error.MinimumLossScaleReachedError: Loss is scaled down to minimum at step 977.",
        "source",
    ),
    # --- non-finite values -----------------------------------------------------------------------------------------
    MessageSource(
        "nan-message",
        "torch",
        _T,
        "torch/csrc/autograd/engine.cpp (libtorch_cpu.so)",
        "validate_outputs under anomaly mode (detect_anomaly)",
        "Function '{}' returned nan values in its {}th output.",
        "RuntimeError: Function 'SqrtBackward0' returned nan values in its 0th output.",
        "produced",
    ),
    MessageSource(
        "nan-message",
        "lightning",
        _L,
        "lightning/pytorch/callbacks/early_stopping.py",
        "EarlyStopping._evaluate_stopping_criteria, line 253 (check_finite)",
        "Monitored metric {} = {} is not finite. Previous best value was {}. Signaling Trainer to stop.",
        "Monitored metric val_loss = nan is not finite. Previous best value was 0.693. Signaling Trainer to stop.",
        "produced",
    ),
    MessageSource(
        "nan-message",
        "keras",
        "3.15.1",
        "keras/src/callbacks/terminate_on_nan.py",
        "TerminateOnNaN.on_batch_end, line 67",
        "Batch {}: Invalid loss, terminating training",
        "Batch 0: Invalid loss, terminating training",
        "produced",
        {"batch": "0"},
    ),
    MessageSource(
        "nan-message",
        "mmengine",
        "0.10.7",
        "mmengine/hooks/early_stopping_hook.py",
        "EarlyStoppingHook._check_stop_condition, line 96 (check_finite)",
        "Monitored metric {} = {} is infinite. Previous best value was {}.",
        "Monitored metric loss = inf is infinite. Previous best value was 0.512.",
        "source",
    ),
    MessageSource(
        "nan-message",
        "ultralytics",
        "8.4.190",
        "ultralytics/engine/trainer.py",
        "BaseTrainer._handle_nan_recovery, line 1108",
        "{} detected (attempt {}/3), recovering from last.pt...",
        "WARNING Loss NaN/Inf detected (attempt 1/3), recovering from last.pt...",
        "source",
    ),
    MessageSource(
        "nan-message",
        "ultralytics",
        "8.4.190",
        "ultralytics/engine/trainer.py",
        "BaseTrainer._handle_nan_recovery, line 1107",
        "Training failed: NaN persisted for {} epochs",
        "RuntimeError: Training failed: NaN persisted for 4 epochs",
        "source",
    ),
    MessageSource(
        "nan-message",
        "megatron-core",
        "0.16.1",
        "megatron/core/rerun_state_machine.py",
        "RerunStateMachine.validate_result, line 529",
        "Rank {}, node {}, device {}, iteration {}: Unexpected result {} (message='{}')",
        "RuntimeError: Rank 3, node gpu-node-7, device 3, iteration 1200: Unexpected result nan (message='found NaN "
        "in local grad norm for bucket #0 in backward pass before data-parallel communication collective')",
        "source",
    ),
    MessageSource(
        "nan-message",
        "megatron-core",
        "0.16.1",
        "megatron/core/distributed/param_and_grad_buffer.py",
        "_ParamAndGradBuffer.check_grads, line 225 (the message validate_result reports)",
        "found NaN in local grad norm for bucket #{} in backward pass before data-parallel communication collective",
        "found NaN in local grad norm for bucket #0 in backward pass before data-parallel communication collective",
        "source",
    ),
    MessageSource(
        "nan-message",
        "tensorflow",
        "1.x-2.x",
        "tensorflow/core/kernels/summary_op.cc",
        "SummaryHistoOp::Compute, errors::InvalidArgument",
        "Nan in summary histogram for: {}",
        "InvalidArgumentError (see above for traceback): Nan in summary histogram for: param-summary/res2.2/conv1/W",
        "upstream",
    ),
    MessageSource(
        "nan-message",
        "tensorflow",
        "1.x-2.x",
        "tensorflow/core/kernels/check_numerics_op.cc",
        "CheckNumericsOp::Compute (tf.debugging.check_numerics), status 'NaN' | 'Inf' | 'Inf and NaN'",
        "{} : Tensor had {} values",
        "tensorflow.python.framework.errors_impl.InvalidArgumentError: LossTensor is inf or nan : Tensor had NaN "
        "values",
        "upstream",
    ),
    MessageSource(
        "nan-message",
        "darknet (AlexeyAB)",
        "master",
        "src/detector.c",
        "train_detector, printf of each iteration (pjreddie/darknet examples/detector.c: the same line without "
        "'hours left'); C's %f prints a NaN as nan or -nan",
        " {}: {}, {} avg loss, {} rate, {} seconds, {} images",
        " 28: -nan, -nan avg loss, 0.000000 rate, 0.797576 seconds, 1792 images",
        "upstream",
    ),
    # --- benign warnings: a library's routine notice, read as healthy --------------------------------------------
    MessageSource(
        "lightgbm-no-positive-gain",
        "lightgbm",
        "4.7.0",
        "src/treelearner/serial_tree_learner.cpp (lib_lightgbm.so)",
        "SerialTreeLearner::Train, Log::Warning when the best split of every leaf gains nothing",
        "No further splits with positive gain, best gain: %f",
        "[LightGBM] [Warning] No further splits with positive gain, best gain: -inf",
        "produced",
        {"best_gain": "-inf"},
    ),
    MessageSource(
        "sklearn-convergence-warning",
        "scikit-learn",
        "1.9.1",
        "sklearn/utils/optimize.py",
        "_check_optimize_result, line 438 (lbfgs of LogisticRegression, MLP, GLMs)",
        "{} failed to converge after {} iteration(s) (status={}):",
        "/usr/lib/python3/site-packages/sklearn/linear_model/_logistic.py:599: ConvergenceWarning: lbfgs failed "
        "to converge after 2 iteration(s) (status=1):",
        "produced",
        {"what": "lbfgs failed to converge after 2 iteration(s) (status=1):"},
    ),
    MessageSource(
        "sklearn-convergence-warning",
        "scikit-learn",
        "1.9.1",
        "sklearn/neural_network/_multilayer_perceptron.py",
        "BaseMultilayerPerceptron._fit_stochastic, line 786",
        "Stochastic Optimizer: Maximum iterations (%d) reached and the optimization hasn't converged yet.",
        "/usr/lib/python3/site-packages/sklearn/neural_network/_multilayer_perceptron.py:785: ConvergenceWarning: "
        "Stochastic Optimizer: Maximum iterations (2) reached and the optimization hasn't converged yet.",
        "produced",
    ),
    MessageSource(
        "sklearn-convergence-warning",
        "scikit-learn",
        "1.9.1",
        "sklearn/svm/_base.py",
        "_fit_liblinear, line 1296 (LinearSVC, LogisticRegression(solver='liblinear'))",
        "Liblinear failed to converge, increase the number of iterations.",
        "sklearn/svm/_base.py:1296: ConvergenceWarning: Liblinear failed to converge, increase the number of "
        "iterations.",
        "installed",
    ),
    MessageSource(
        "sklearn-convergence-warning",
        "scikit-learn",
        "1.9.1",
        "sklearn/linear_model/_stochastic_gradient.py",
        "BaseSGD._fit (SGDClassifier/SGDRegressor), line 743",
        "Maximum number of iteration reached before convergence. Consider increasing max_iter to improve the fit.",
        "sklearn/linear_model/_stochastic_gradient.py:743: ConvergenceWarning: Maximum number of iteration "
        "reached before convergence. Consider increasing max_iter to improve the fit.",
        "installed",
    ),
    MessageSource(
        "sklearn-convergence-warning",
        "scikit-learn",
        "1.9.1",
        "sklearn/linear_model/_cd_fast.pyx",
        "coordinate descent (Lasso, ElasticNet), line 124",
        "Objective did not converge. You might want to increase the number of iterations, check the scale of "
        "the features or consider increasing regularisation.",
        "sklearn/linear_model/_coordinate_descent.py:695: ConvergenceWarning: Objective did not converge. You "
        "might want to increase the number of iterations, check the scale of the features or consider "
        "increasing regularisation.",
        "installed",
    ),
    # --- context: what happened, not what went wrong ---------------------------------------------------------------
    MessageSource(
        "checkpoint-saved",
        "transformers",
        "5.25.0",
        "transformers/trainer.py",
        "Trainer._save_checkpoint, line 4193",
        "Saving model checkpoint to {}",
        "Saving model checkpoint to out/checkpoint-500",
        "installed",
        {"path": "out/checkpoint-500"},
    ),
    MessageSource(
        "checkpoint-saved",
        "mmengine",
        "0.10.7",
        "mmengine/hooks/checkpoint_hook.py",
        "CheckpointHook.after_train_epoch, line 344 (the path is not printed)",
        "Saving checkpoint at {} epochs",
        "12/06 08:00:00 - mmengine - INFO - Saving checkpoint at 12 epochs",
        "source",
        {"at": "12 epochs"},
    ),
    # --- a launch that failed before training --------------------------------------------------------------------
    MessageSource(
        "shell-unbound-variable",
        "bash",
        "5.x",
        "error.c",
        "err_unboundvar (a variable expanded under 'set -u' that is not set)",
        "{}: line {}: {}: unbound variable",
        "run_deepspeed.sh: line 9: PYTHONPATH: unbound variable",
        "produced",
        {"name": "PYTHONPATH"},
    ),
    MessageSource(
        "shell-command-not-found",
        "bash",
        "5.x",
        "execute_cmd.c",
        "execute_disk_command (no such command on PATH)",
        "{}: line {}: {}: command not found",
        "train.sh: line 4: deepspeed: command not found",
        "produced",
        {"command": "deepspeed"},
    ),
    MessageSource(
        "launch-file-not-found",
        "bash",
        "5.x",
        "shell.c",
        "open_shell_script -> file_error (the script to run does not exist)",
        "{}: {}: No such file or directory",
        "bash: scripts/train.sh: No such file or directory",
        "produced",
        {"path": "scripts/train.sh"},
    ),
    MessageSource(
        "launch-file-not-found",
        "cpython",
        "3.11",
        "Modules/main.c",
        "pymain_run_file_obj (the script given to the interpreter does not exist)",
        "{}: can't open file {}: [Errno {}] {}",
        "python: can't open file '/work/train.py': [Errno 2] No such file or directory",
        "produced",
        {"path": "/work/train.py"},
    ),
    MessageSource(
        "argparse-error",
        "cpython",
        "3.11",
        "Lib/argparse.py",
        "ArgumentParser.error via parse_args ('unrecognized arguments: %s'), exit status 2",
        "{}: error: unrecognized arguments: {}",
        "train.py: error: unrecognized arguments: --max_training_steps 2",
        "produced",
        {"prog": "train.py", "message": "unrecognized arguments: --max_training_steps 2"},
    ),
)


#: Packages read for failure messages that print none of their own (what they print comes from
#: the libraries below them, catalogued there), with what was read.
NO_OWN_MESSAGE: dict[str, str] = {
    "torch GradScaler (2.13.0)": "torch/amp/grad_scaler.py: an overflowing step is skipped and the scale halved "
    "without a message (tests/test_signature_sources.py pins it); only a logged loss-scale series shows it "
    "(RT006, OP007)",
    "accelerate (1.16.0)": "no NaN, overflow, OOM or signal message found in the installed package; `accelerate launch` runs torchrun's elastic agent "
    "(multi-process) or a subprocess whose end it re-raises as CalledProcessError (the cpython row of `sigkill`)",
    "transformers Trainer (5.25.0)": "trainer.py logs checkpoints (`checkpoint-saved`); no NaN, OOM or signal message "
    "was found in it; failures surface as torch's messages",
    "timm (1.0.31)": "the installed package prints no failure message; its train.py is a repository script, "
    "not part of the wheel",
    "mmengine (0.10.7)": "besides the rows listed (early-stopping `is infinite`, `Saving checkpoint at`), OOM and "
    "NaN surface as torch's messages",
}


def template_regex(template: str) -> re.Pattern:
    """A regular expression matching the messages ``template`` produces: its literal text, with each
    placeholder (``{...}``, ``%s``/``%d``/``%u``, ``${name}``) standing for any text."""
    parts = re.split(r"\{[^{}]*\}|%[-\d.]*[sdulfxr]|\$\{\w+\}", template)
    return re.compile(".*?".join(re.escape(p) for p in parts), re.S)


def literal_fragments(template: str, min_len: int = 6) -> list[str]:
    """The template's literal pieces between placeholders (at least ``min_len`` characters)."""
    parts = re.split(r"\{[^{}]*\}|%[-\d.]*[sdulfxr]|\$\{\w+\}", template)
    parts = [p.strip(" :;,.") for p in parts]
    return [p for p in parts if len(p) >= min_len]


#: Adjacent Python string literals joined across a line break or a space (``"a" "b"``, ``"a"\n  f"b"``).
_JOIN = re.compile(r"""(["'])\s*\n?\s*[rfbuRFBU]{0,2}\1""")


def format_in_file(src: MessageSource, path: Path) -> list[str]:
    """The template fragments of ``src`` missing from ``path`` (empty: the file writes this format).

    Python and Cython sources are read with adjacent string literals joined (an f-string split over
    lines is one message); compiled libraries are searched as bytes."""
    if path.suffix in (".py", ".pyx"):
        text = _JOIN.sub("", path.read_text(encoding="utf-8", errors="replace"))
        return [f for f in literal_fragments(src.template) if f not in text]
    data = path.read_bytes()
    return [f for f in literal_fragments(src.template) if f.encode() not in data]


def source_file(src: MessageSource, site: Path) -> Path:
    """The file of ``src`` in an installed package under ``site`` (a site-packages folder): the
    Python file itself, or for compiled code the library named in brackets, in ``<package>/lib``."""
    m = re.search(r"\((lib[\w.]+\.so)\)", src.file)
    if m:
        return site / src.package / "lib" / m.group(1)
    return site / src.file.split(" (")[0]


def main(argv: list[str] | None = None) -> int:
    """``python -m mlaudit_core.signature_sources DIR [DIR ...]``: check the ``source`` rows against
    unpacked releases (each DIR holds the packages' top-level folders) and print one line per row."""
    import sys

    roots = [Path(a) for a in (sys.argv[1:] if argv is None else argv)]
    bad = 0
    for src in SOURCES:
        if src.check != "source":
            continue
        rel = src.file.split(" (")[0]
        found = [r / rel for r in roots if (r / rel).is_file()]
        if not found:
            print(f"MISSING  {src.package} {src.version} {src.file}")
            bad += 1
            continue
        miss = format_in_file(src, found[0])
        print(
            ("OK       " if not miss else "DIFFERS  ")
            + f"{src.package} {src.version} {src.file}: {src.where}"
            + (f" (not found: {miss})" if miss else "")
        )
        bad += bool(miss)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
