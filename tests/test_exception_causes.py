"""mlaudit_core.exception_causes against the messages the installed packages raise.

Each message is produced here by the package itself (Pillow opening bytes that are not an image,
torch's loss and embedding kernels given an index outside their range, torch's CUDA start-up on
a CPU build, pickle reading a truncated stream, pandas/pyarrow/h5py/gzip reading broken files, the
operating system's errno texts, transformers loading with no hub) and the row must explain it; a
real Python traceback from a dataset's ``__getitem__`` is read back with the console scanner.
Rows whose package is not a test dependency (Hugging Face datasets, TensorFlow, the CUDA kernels a
CPU wheel lacks) are checked through their example line.
"""

from __future__ import annotations

import datetime
import gzip
import io
import multiprocessing
import os
import pickle
import socket
import traceback
from pathlib import Path

import pytest

from mlaudit_core.audit import audit
from mlaudit_core.exception_causes import CAUSES, classify, get, in_data_code
from mlaudit_core.formats import load_path
from mlaudit_core.report import Cause, Outcome
from mlaudit_core.rundata import ConsoleLine
from mlaudit_core.signatures import BARE_TAIL_LINES, scan


def _raised(fn) -> BaseException:
    try:
        fn()
    except BaseException as e:  # noqa: BLE001 - the exception is the test's subject
        return e
    raise AssertionError("nothing raised")


def _why(e: BaseException, frames=(), nearby=()):
    t = type(e)
    got = classify(f"{t.__module__}.{t.__qualname__}", str(e), frames, nearby)
    return got.id if got else None


@pytest.mark.parametrize("row", CAUSES, ids=lambda r: r.id)
def test_every_row_explains_its_own_example(row):
    typ, _, msg = row.example.partition(": ")
    frames = ()
    if row.frames == "data":
        frames = (("/home/u/project/datasets/coco.py", 42, "__getitem__"),)
    if row.frames == "loss":
        frames = (("/home/u/project/utils/loss.py", 87, "forward"),)
    if row.frames == "mp-start":
        frames = ((str(Path(multiprocessing.__file__).parent / "spawn.py"), 126, "_main"),)
    if row.frames == "installed":
        frames = (
            (
                "/opt/conda/lib/python3.11/site-packages/keras/src/tree/optree_impl.py",
                5,
                "<module>",
            ),
        )
    if row.frames == "library":
        frames = (("/opt/conda/lib/python3.11/site-packages/torch/optim/adam.py", 58, "__init__"),)
    got = classify(typ, msg, frames)
    assert got is not None and got.id == row.id, (row.example, got)
    # a row names a cause other than a plain code error, or the code error it is (a wrapper's keys)
    assert row.cause in {"data_config", "infra_runtime"} or row.frames == "wrapper-keys"


def test_pillow_undecodable_and_truncated_images():
    PIL = pytest.importorskip("PIL.Image")
    e = _raised(lambda: PIL.open(io.BytesIO(b"not an image")))
    assert isinstance(e, OSError) and _why(e) == "undecodable-image"
    buf = io.BytesIO()
    PIL.new("RGB", (64, 64)).save(buf, "JPEG")
    e = _raised(lambda: PIL.open(io.BytesIO(buf.getvalue()[:300])).load())
    assert _why(e) == "undecodable-image", e


def test_torch_label_and_token_index_out_of_range_and_a_cpu_build_asked_for_cuda():
    torch = pytest.importorskip("torch")
    import torch.nn.functional as F

    e = _raised(lambda: F.cross_entropy(torch.zeros(2, 3), torch.tensor([0, 5])))
    assert _why(e) == "label-out-of-range", e
    e = _raised(lambda: torch.nn.Embedding(3, 2)(torch.tensor([5])))
    assert _why(e) == "label-out-of-range", e
    if not torch.cuda.is_available():
        e = _raised(lambda: torch.zeros(1, device="cuda"))
        assert _why(e) == "environment", e


def test_cuda_kernel_assertion_is_read_from_the_line_beside_the_error():
    nearby = [
        "/pytorch/aten/src/THCUNN/SpatialClassNLLCriterion.cu:106: cunn_SpatialClassNLLCriterion_updateOutput"
        "_kernel: block: [0,0,0], thread: [725,0,0] Assertion `t >= 0 && t < n_classes` failed"
    ]
    got = classify("RuntimeError", "CUDA error: device-side assert triggered", (), nearby)
    assert got is get("label-out-of-range")
    indexing = [
        "../aten/src/ATen/native/cuda/IndexKernel.cu:92: operator(): block: [96,0,0], thread: [96,0,0] "
        'Assertion `index >= -sizes[i] && index < sizes[i] && "index out of bounds"` failed.'
    ]
    got = classify("RuntimeError", "CUDA error: device-side assert triggered", (), indexing)
    assert got is get("label-out-of-range")
    # an assertion on a probability's value (a missing sigmoid before binary cross-entropy) is no index
    bce = [
        "/pytorch/aten/src/ATen/native/cuda/Loss.cu:102: operator(): block: [0,0,0], thread: [0,0,0] "
        "Assertion `input_val >= zero && input_val <= one` failed."
    ]
    assert classify("RuntimeError", "CUDA error: device-side assert triggered", (), bce) is None


def test_broken_data_files_as_pandas_pyarrow_h5py_and_gzip_report_them(tmp_path):
    pd = pytest.importorskip("pandas")
    pa = pytest.importorskip("pyarrow")
    import pyarrow.json as pj
    import pyarrow.parquet as pq

    h5py = pytest.importorskip("h5py")
    assert (
        _why(_raised(lambda: pd.read_csv(io.StringIO("a,b\n1,2\n1,2,3\n")))) == "corrupt-data-file"
    )
    assert _why(_raised(lambda: pd.read_csv(io.StringIO("")))) == "corrupt-data-file"
    assert (
        _why(_raised(lambda: pq.read_table(pa.BufferReader(b"garbage" * 4)))) == "corrupt-data-file"
    )
    assert (
        _why(_raised(lambda: pj.read_json(pa.BufferReader(b'{"a": 1}\n{"a": \n'))))
        == "corrupt-data-file"
    )
    bad = tmp_path / "x.h5"
    bad.write_bytes(b"x" * 100)
    assert _why(_raised(lambda: h5py.File(bad, "r"))) == "corrupt-data-file"
    assert (
        _why(_raised(lambda: gzip.decompress(gzip.compress(b"x" * 1000)[:20])))
        == "corrupt-data-file"
    )


def test_a_worker_that_fails_while_multiprocessing_unpickles_it_is_the_environment():
    e = _raised(lambda: pickle.loads(pickle.dumps(list(range(100)))[:20]))
    spawn = str(Path(multiprocessing.__file__).parent / "spawn.py")
    assert Path(spawn).is_file()
    frames = (("<string>", 1, "<module>"), (spawn, 116, "spawn_main"), (spawn, 126, "_main"))
    assert _why(e, frames) == "worker-start-failed"
    assert _why(e) is None  # a truncated pickle in the user's own code is not the start-up


@pytest.mark.parametrize("errno", [5, 12, 24, 30, 116, 122])
def test_operating_system_resource_errors_as_python_formats_them(errno):
    e = OSError(errno, os.strerror(errno))
    assert classify("OSError", str(e)).cause == "infra_runtime", str(e)


def test_transformers_model_loading_messages():
    transformers = pytest.importorskip("transformers")
    site = Path(transformers.__file__).parent
    hub = (site / "utils" / "hub.py").read_text()
    for literal in (
        "does not appear to have a file named",
        "is not a local folder and is not a valid model identifier",
        "We couldn't connect to",
    ):
        assert literal in hub, literal
    assert "Can't load tokenizer for" in (site / "tokenization_utils_base.py").read_text()
    assert "Can't load the configuration of" in (site / "configuration_utils.py").read_text()
    assert get("model-id-or-path").message.search(
        "Can't load the configuration of 'x'. If you were trying"
    )
    assert get("model-id-or-path").message.search(
        "bert-bse is not a local folder and is not a valid model identifier"
    )


def test_transformers_offline_load_names_the_network(monkeypatch, tmp_path):
    pytest.importorskip("transformers")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    from transformers import AutoConfig

    e = _raised(lambda: AutoConfig.from_pretrained("no-such-org/no-such-model"))
    assert _why(e) == "network-message", e


class _Rows:
    def __init__(self, rows, bug=False):
        self.rows, self.bug = rows, bug

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        if self.bug:
            return self.rows[i] + None  # a TypeError in the dataset's code
        return self.rows[i]["segmentation"]


def _traceback_lines(e: BaseException, name: str) -> list[ConsoleLine]:
    text = "".join(traceback.format_exception(e))
    return [ConsoleLine(name, i, t) for i, t in enumerate(text.splitlines(), 1)]


def test_a_key_missing_in_a_datasets_getitem_is_data_and_a_type_error_there_is_code():
    torch = pytest.importorskip("torch")
    from torch.utils.data import DataLoader

    e = _raised(lambda: next(iter(DataLoader(_Rows([{"bbox": 1}]), batch_size=None))))
    _, tbs = scan(_traceback_lines(e, "train.log"))
    tb = tbs[-1]
    assert tb.exception_type == "KeyError" and in_data_code(tb.frames)
    assert classify(tb.exception_type, tb.message, tb.frames).cause == "data_config"
    e = _raised(lambda: next(iter(DataLoader(_Rows([1], bug=True), batch_size=None))))
    _, tbs = scan(_traceback_lines(e, "train.log"))
    assert tbs[-1].exception_type == "TypeError"
    assert classify(tbs[-1].exception_type, tbs[-1].message, tbs[-1].frames) is None
    del torch


def test_scan_reads_a_pasted_exception_line_the_text_ends_on():
    lines = [
        "epoch 3 loss 0.41",
        "IOError: cannot identify image file u'/data/n01688243_9115.JPEG'",
    ]
    _, tbs = scan([ConsoleLine("a.log", i, t) for i, t in enumerate(lines, 1)])
    assert len(tbs) == 1 and tbs[0].exception_type == "IOError" and tbs[0].frames == []
    assert classify(tbs[0].exception_type, tbs[0].message).cause == "data_config"
    later = lines + [f"epoch {k} loss 0.3" for k in range(4, 5 + BARE_TAIL_LINES)]
    assert scan([ConsoleLine("a.log", i, t) for i, t in enumerate(later, 1)])[1] == []
    went_on = [
        "CommandNotFoundError: Your shell has not been properly configured to use 'conda activate'.",
        "  2%|##        | 1/50 [09:43<7:56:45, 583.78s/it]",
    ]
    assert scan([ConsoleLine("a.log", i, t) for i, t in enumerate(went_on, 1)])[1] == []
    warned = ["UserWarning: this is only a warning", "epoch 1 loss 0.4"]
    assert scan([ConsoleLine("a.log", i, t) for i, t in enumerate(warned, 1)])[1] == []


def test_an_error_in_the_training_function_torch_multiprocessing_spawned_is_not_start_up():
    frames = (
        ("/usr/lib/python3.10/site-packages/torch/multiprocessing/spawn.py", 69, "_wrap"),
        ("/home/u/STTN/model/gaitset.py", 230, "infer"),
    )
    assert classify("RuntimeError", "permute(sparse_coo): number of dimensions ...", frames) is None
    frames = (
        (r"D:\Python\python39\lib\multiprocessing\spawn.py", 116, "spawn_main"),
        (r"D:\Python\python39\lib\multiprocessing\spawn.py", 126, "_main"),
    )
    assert (
        classify("_pickle.UnpicklingError", "pickle data was truncated", frames).id
        == "worker-start-failed"
    )


@pytest.mark.parametrize("state", ["shape", "missing", "unexpected"])
def test_a_checkpoint_that_does_not_fit_the_model_is_configuration(state):
    torch = pytest.importorskip("torch")
    m = torch.nn.Linear(3, 2)
    sd = {"weight": torch.zeros(2, 3), "bias": torch.zeros(2)}
    if state == "shape":
        sd["weight"] = torch.zeros(4, 3)
    elif state == "missing":
        del sd["bias"]
    else:
        sd["extra"] = torch.zeros(1)
    e = _raised(lambda: m.load_state_dict(sd))
    first, *rest = f"RuntimeError: {e}".splitlines()
    _, tbs = scan(
        [
            ConsoleLine("a.log", 1, first),
            *(ConsoleLine("a.log", i, t) for i, t in enumerate(rest, 2)),
        ]
    )
    assert (
        classify(tbs[0].exception_type, tbs[0].message, (), rest).id == "checkpoint-model-mismatch"
    )


def test_host_memory_as_torch_and_numpy_report_it():
    torch = pytest.importorskip("torch")
    np = pytest.importorskip("numpy")
    assert _why(_raised(lambda: torch.empty(2**45, dtype=torch.uint8))) == "host-memory"
    assert _why(_raised(lambda: np.empty((2**40, 2**10)))) == "host-memory"


def test_an_empty_dataset_given_to_a_shuffling_loader():
    pytest.importorskip("torch")
    from torch.utils.data import DataLoader

    assert _why(_raised(lambda: DataLoader([], shuffle=True))) == "empty-dataset"


def test_a_batch_of_one_sample_in_a_batch_norm_layer_is_the_data_loaders_last_batch():
    torch = pytest.importorskip("torch")

    bn = torch.nn.BatchNorm1d(512).train()
    assert _why(_raised(lambda: bn(torch.zeros(1, 512)))) == "batch-of-one-in-batchnorm"


def test_a_missing_data_file_is_data_and_a_missing_folder_to_save_into_is_not(tmp_path):
    e = _raised(lambda: open(tmp_path / "images" / "000123.jpg", "rb"))
    assert _why(e) == "missing-data-file"
    # a list file of the data set (darknet's train.txt, a vocabulary) and a data folder are read the same way
    e = _raised(lambda: open(tmp_path / "images" / "train.txt", "rb"))
    assert _why(e) == "missing-data-file"
    e = _raised(lambda: os.listdir(tmp_path / "data" / "train"))
    assert _why(e) == "missing-data-file"
    frames = (("/home/u/train.py", 88, "save_results"),)
    e = _raised(lambda: open(tmp_path / "out" / "preds.json", "w"))
    assert _why(e, frames) is None


def test_a_folder_without_a_model_config(tmp_path):
    pytest.importorskip("transformers")
    from transformers import AutoConfig

    (tmp_path / "config.json").write_text("{}")
    e = _raised(lambda: AutoConfig.from_pretrained(str(tmp_path)))
    assert _why(e) == "model-id-or-path", e


def test_samples_of_different_sizes_in_one_batch():
    torch = pytest.importorskip("torch")
    from torch.utils.data import default_collate

    e = _raised(lambda: default_collate([torch.zeros(3, 224, 224), torch.zeros(3, 224, 300)]))
    assert _why(e) == "unequal-samples", e


def test_fp16_weights_under_a_grad_scaler_and_bf16_on_hardware_without_it():
    torch = pytest.importorskip("torch")
    m = torch.nn.Linear(2, 2).half()
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu")
    scaler.scale(m(torch.zeros(1, 2, dtype=torch.half)).float().sum()).backward()
    assert _why(_raised(lambda: scaler.unscale_(opt))) == "precision-config"
    transformers = pytest.importorskip("transformers")
    args = (Path(transformers.__file__).parent / "training_args.py").read_text()
    assert "Your setup doesn't support bf16/gpu." in args
    assert (
        classify("ValueError", "Your setup doesn't support bf16/gpu. You need to assign use_cpu").id
        == "precision-config"
    )


def test_a_pipe_to_a_worker_that_died_is_the_environment():
    conn = str(Path(multiprocessing.__file__).parent / "connection.py")
    assert Path(conn).is_file()
    frames = (("/home/u/train.py", 40, "main"), (conn, 430, "_recv_bytes"))
    assert classify("EOFError", "", frames).id == "worker-start-failed"


def test_a_retry_warning_printed_near_a_code_error_does_not_name_its_cause():
    nearby = [
        "wandb: Network error (ConnectionError), entering retry loop.",
        "urllib3.exceptions.ProtocolError: ('Connection aborted.', ConnectionResetError(104, "
        "'Connection reset by peer'))",
    ]
    assert (
        classify("TypeError", "unsupported operand type(s) for +: 'int' and 'NoneType'", (), nearby)
        is None
    )


def test_classify_reads_the_exception_not_another_exception_it_quotes():
    """A code error whose message quotes another exception's line (a note field, a config echo
    carried into the message) is the code error: the quoted line's cause is not this one's."""
    assert (
        classify(
            "ValueError",
            "expected 3 channels, got 'OSError: [Errno 5] Input/output error' in the note field",
        )
        is None
    )
    assert (
        classify(
            "RuntimeError", 'bad retry_on="ConnectionError: Max retries exceeded with url: /x"'
        )
        is None
    )
    # the exception's own text, outside any quote, still names its cause
    assert classify("OSError", "[Errno 5] Input/output error: 'ckpt.pt'").id == "os-resource"
    assert (
        classify(
            "RuntimeError",
            "Caught OSError in DataLoader worker process 0: [Errno 5] Input/output error",
        ).id
        == "os-resource"
    )


def test_classify_a_missing_key_is_a_key_whatever_text_it_holds():
    """``KeyError``'s message is the missing key's repr: a key spelled like a system message
    ('No such file or directory: cannot identify image file') is a key, not that message."""
    assert classify("KeyError", "'cannot identify image file'") is None
    assert classify("KeyError", "'[Errno 5] Input/output error'") is None
    # inside a dataset's own code a missing key stays a data error (its row names KeyError)
    frames = [("/home/u/train.py", 3, "main"), ("/home/u/data/coco.py", 9, "__getitem__")]
    assert (
        classify("KeyError", "'cannot identify image file'", frames).id == "dataset-code-data-error"
    )


RUNS = Path(__file__).parent / "data" / "realworld" / "runs"


def _run(path: Path):
    runs = list(load_path(path).runs)
    assert runs, f"nothing read from {path}"
    return runs[-1][1]


@pytest.mark.e2e
def test_rendezvous_on_a_taken_port_as_torch_and_python_raise_it():
    dist = pytest.importorskip("torch.distributed")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        try:
            dist.TCPStore("127.0.0.1", port, 1, True, timeout=datetime.timedelta(seconds=5))
        except RuntimeError as e:
            t = type(e)
            got = classify(f"{t.__module__}.{t.__qualname__}", str(e))
            assert got is not None and got.id == "rendezvous-socket", e
        else:
            raise AssertionError("TCPStore listened on a taken port")
        with socket.socket() as second:
            try:
                second.bind(("127.0.0.1", port))
            except OSError as e:
                got = classify("OSError", str(e))
                assert got is not None and got.id == "rendezvous-socket", e
            else:
                raise AssertionError("bound a taken port")


def test_torchrun_ranks_that_could_not_listen_on_the_master_port_are_the_environment():
    rep = audit(_run(RUNS / "JVrabel--LLM_KD/logs/training.log"))  # f6b3-07
    assert rep.verdict.outcome is Outcome.CRASHED, rep.verdict.summary
    assert rep.verdict.cause is Cause.INFRA_RUNTIME, rep.verdict.summary


def test_a_data_loader_worker_ended_by_sigterm_is_an_interrupt_not_a_code_bug(tmp_path):
    """A real DataLoader whose worker receives SIGTERM (what a scheduler sends every process of a job):
    the main process raises torch's 'DataLoader worker (pid N) is killed by signal: Terminated.'; a kill
    signal is an interrupt or an infrastructure event, never a code bug (own corpus f7b2-03, a Lightning
    DDP job terminated from outside).

    The samples are plain ints batched as lists (``collate_fn=list``): a tensor batch crosses to the
    main process as a file descriptor fetched from the worker (torch's ``file_descriptor`` sharing,
    multiprocessing's resource sharer), and a worker that dies while the main process fetches an
    earlier batch's descriptor makes it raise ``ConnectionResetError`` instead (3 of 12 runs at
    load 12, and the 'no worker line' failure of a fresh-clone CI). A list crosses the queue's pipe
    in one write, so the worker ends after its earlier batches were sent (24 of 24 at load 24)."""
    torch = pytest.importorskip("torch")
    script = tmp_path / "train.py"
    script.write_text(
        "import os, signal, torch\n"
        "class D(torch.utils.data.Dataset):\n"
        "    def __len__(self): return 64\n"
        "    def __getitem__(self, i):\n"
        "        if i == 5: os.kill(os.getpid(), signal.SIGTERM)\n"
        "        return i\n"
        "loader = torch.utils.data.DataLoader(D(), batch_size=2, num_workers=1, collate_fn=list)\n"
        "for b in loader: pass\n"
    )
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    assert torch.__version__ and out.returncode != 0
    line = next((ln for ln in out.stderr.splitlines() if "DataLoader worker (pid" in ln), None)
    assert line is not None, out.stderr[-3000:]
    if "exited unexpectedly" in line:
        # torch's other path: the main process polled the dead worker before its SIGCHLD handler
        # ran (seen under load); the message names no signal, the catalogue's worker-death
        # signature reads it (a killed worker, never a code bug)
        from mlaudit_core.signatures import CATALOG, MEANINGS

        sig = next(s for s in CATALOG if s.id == "dataloader-worker-killed")
        assert sig.pattern.search(line) and MEANINGS[sig.category].cause == "infra_runtime", line
        return
    exc, _, msg = line.partition(": ")
    got = classify(exc, msg)
    assert got is not None and got.id == "killed-by-signal" and got.cause == "infra_runtime", line


def test_a_package_built_against_another_version_is_the_environment():
    """Version mismatches as the installed packages word them: transformers' version check run for a
    requirement the venv cannot meet, torch's CUDA-mismatch message of its extension builder, numpy's
    C-API import checks read from the installed header (a module built for another numpy)."""
    import numpy as np
    from torch.utils import cpp_extension
    from transformers.utils.versions import require_version

    e = _raised(lambda: require_version("numpy>=999.0"))
    assert "is required for a normal functioning of this module, but found" in str(e)
    assert get("environment") is classify(type(e).__name__, str(e))
    cuda = cpp_extension.CUDA_MISMATCH_MESSAGE % ("12.4", "11.8")
    assert classify("RuntimeError", cuda) is get("environment")
    header = (Path(np.get_include()) / "numpy" / "__multiarray_api.h").read_text()
    assert '"numpy._core.multiarray failed to import"' in header
    assert "ABI version 0x%x but this version of numpy is 0x%x" in header
    assert classify("ImportError", "numpy._core.multiarray failed to import") is get("environment")
    abi = "module compiled against ABI version 0x1000009 but this version of numpy is 0x2000000"
    assert classify("RuntimeError", abi) is get("environment")
    # a missing module is not a version mismatch: the row does not read it
    assert classify("ModuleNotFoundError", "No module named 'numpyy'") is None


@pytest.mark.parametrize("prefix", ["b11-10", "b31-08", "b41-02"])
def test_a_device_side_assert_is_an_index_beyond_the_configured_classes(prefix):
    """Real reports whose paste ends in ``device-side assert triggered``: b11-10 (DABNet, Cityscapes colour
    label maps 0-255 for 19 classes, raised in ``utils/loss.py``), b31-08 (DRN, Cityscapes labels not
    converted to the 19 train ids, raised in ``segment.py train``, torch 0.2's ``cuda runtime error (59)``),
    b41-02 (YOLO-NAS, IndexKernel.cu's ``index out of bounds`` assertions, labels beyond the model's
    classes, no frame). Each is data_config wherever CUDA reported it: torch says the stack trace of an
    asynchronous kernel error may be wrong."""
    v, _ = _report_verdict(prefix + "-")
    assert (v.outcome, v.cause) == (Outcome.CRASHED, Cause.DATA_CONFIG), v.summary
    msg = "merge_sort: failed to synchronize: device-side assert triggered"
    model = (("train.py", 81, "train"), ("/home/u/models/dabnet.py", 40, "forward"))
    assert classify("RuntimeError", msg, model) is get("device-side-assert")


def test_gradient_boosting_and_sklearn_data_checks_as_the_installed_packages_raise_them():
    """XGBoost, LightGBM and scikit-learn reject labels outside the objective's classes, a one-class
    set and NaN inputs with their own messages: each is data (row ml-library-data-check); a plain
    Python error from the same packages is not."""
    np = pytest.importorskip("numpy")
    xgb = pytest.importorskip("xgboost")
    lgb = pytest.importorskip("lightgbm")
    pytest.importorskip("sklearn")
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(0)
    X = rng.random((60, 3))
    y = (X[:, 0] > 0.5).astype(int)
    multi = {"objective": "multi:softmax", "num_class": 2}
    e = _raised(lambda: xgb.train(multi, xgb.DMatrix(X, label=y * 5), 1))
    assert type(e).__name__ == "XGBoostError" and _why(e) == "ml-library-data-check", e
    e = _raised(
        lambda: lgb.train(
            {"objective": "multiclass", "num_class": 2, "verbose": -1},
            lgb.Dataset(X, label=y * 5),
            1,
        )
    )
    assert type(e).__name__ == "LightGBMError" and _why(e) == "ml-library-data-check", e
    e = _raised(lambda: LogisticRegression().fit(X, np.zeros(60)))
    assert _why(e) == "ml-library-data-check", e
    e = _raised(lambda: LogisticRegression().fit(np.where(X > 0.9, np.nan, X), y))
    assert _why(e) == "ml-library-data-check", e
    e = _raised(lambda: LogisticRegression().fit(X, X[:, 0]))
    assert _why(e) == "ml-library-data-check", e
    assert classify("ValueError", "Expected 2D array, got 1D array instead") is None


def test_a_native_library_fatal_check_pasted_alone_is_read_as_the_exception(capfd):
    """A dmlc ``Check failed:`` line and LightGBM's ``[LightGBM] [Fatal]`` line (what the C++ library
    prints to the console, here produced by the installed LightGBM) are the run's exception when the
    paste ends on them, and a job that went on after one is not."""
    np = pytest.importorskip("numpy")
    lgb = pytest.importorskip("lightgbm")
    X = np.random.default_rng(1).random((40, 2))
    _raised(
        lambda: lgb.train(
            {"objective": "multiclass", "num_class": 3, "verbose": 0},
            lgb.Dataset(X, label=np.full(40, 7.0)),
            1,
        )
    )
    printed = capfd.readouterr()
    fatal = [ln for ln in (printed.out + printed.err).splitlines() if "[Fatal]" in ln]
    assert fatal, "LightGBM printed no [Fatal] line"
    for lines in (
        ["[0]\tvalid-auc:0.5", fatal[-1]],
        [
            "[10:21:07] ../src/metric/auc.cc:82: Check failed: !auc_error: AUC: the dataset only contains pos "
            "or neg samples"
        ],
    ):
        _, tbs = scan([ConsoleLine("a.log", i, t) for i, t in enumerate(lines, 1)])
        assert len(tbs) == 1 and tbs[0].frames == [], lines
        assert classify(tbs[0].exception_type, tbs[0].message) is get("ml-library-data-check")
    went_on = ["[LightGBM] [Fatal] Check failed: (num_data) > (0)", "iteration 2, loss 0.61"]
    assert scan([ConsoleLine("a.log", i, t) for i, t in enumerate(went_on, 1)])[1] == []


def test_xgboost_auc_on_a_one_class_validation_set_is_data():
    """Real report b11-05 (SQLFlow, XGBoost with validation on titanic.test whose label column is all
    0): the paste is XGBoost's own check line, which names the cause; before, no metric and no
    exception were read and the verdict abstained."""
    import json

    from typer.testing import CliRunner

    from mlaudit.cli import app

    (case,) = (Path(__file__).resolve().parent / "data" / "reports").glob("b11-05-*")
    args = ["logs", *map(str, sorted(case.glob("*.log"))), "--config", str(case / "context.txt")]
    v = json.loads(CliRunner().invoke(app, [*args, "--format", "json"]).stdout)["verdict"]
    assert (v["outcome"], v["cause"]) == ("crashed", "data_config"), v["summary"]


def test_a_tracker_that_refuses_the_credentials_is_the_environment():
    """wandb's AuthenticationError (wandb 0.31.0 wandb/errors/errors.py), as its login raises it when the
    API key cannot be verified (own corpus f9b1-14: raised during a checkpoint upload at epoch 17; was
    correctness_bug from the exception class)."""
    errors = pytest.importorskip("wandb.errors.errors")
    e = errors.AuthenticationError(
        "An error occurred while verifying credentials with https://api.wandb.ai: timed out"
    )
    assert _why(e) == "tracker-credentials"
    assert get("tracker-credentials").cause == "infra_runtime"


def test_a_ray_process_the_cluster_lost_is_the_environment_and_an_actor_constructor_error_is_not():
    """Ray's own exceptions (ray 2.60.0 ray/exceptions.py) as ``str()`` formats them: an actor that is
    unavailable (own corpus f7b1-11, verl GRPO: 'RpcError: Socket closed' at step 21; was correctness_bug
    from the exception class), an actor or worker that died unexpectedly, a raylet that died. An actor that
    failed in its own ``__init__`` carries the user's exception and is not this row."""
    rex = pytest.importorskip("ray.exceptions")
    for e in (
        rex.ActorUnavailableError("RpcError: RPC error: Socket closed rpc_code: 14", None),
        rex.ActorDiedError(),
        rex.WorkerCrashedError(),
        rex.LocalRayletDiedError(),
    ):
        assert _why(e) == "ray-process-lost", str(e)
    assert get("ray-process-lost").cause == "infra_runtime"
    init = rex.ActorDiedError(
        rex.RayTaskError("Actor.__init__", "Traceback", ValueError("bad config"))
    )
    assert _why(init) != "ray-process-lost"


def test_an_xla_feature_the_cuda_driver_is_too_old_for_is_the_environment():
    """XLA's command-buffer tracing on a driver below CUDA 12.3 (xla/stream_executor/cuda/cuda_command_buffer.cc,
    as jaxlib raises it; own corpus f7b1-10, openpi LoRA at step 0: was correctness_bug)."""
    got = classify(
        "jaxlib.xla_extension.XlaRuntimeError",
        "UNIMPLEMENTED: StreamBeginCaptureToGraph is not implemented for CUDA below version 12.3. Therefore "
        "tracing is not supported.",
    )
    assert got is not None and got.id == "environment"


def test_a_dataset_check_that_raises_the_base_exception_is_read_and_is_data():
    """YOLOv5/YOLOv7's check_dataset raises Python's base ``Exception('Dataset not found.')``: the traceback
    Python prints ends on ``Exception: Dataset not found.``, which the scanner reads as the run's exception
    (own corpus f8b2-02: was crashed/inconclusive, no exception read); Ultralytics' own wording too."""

    def check_dataset():
        raise Exception("Dataset not found.")  # noqa: TRY002 - the base class, as YOLOv7 raises it

    e = _raised(check_dataset)
    text = "".join(traceback.format_exception(e)).splitlines()
    text.append("WARNING: Dataset not found, nonexistent paths: ['/data/val']")
    _, tbs = scan([ConsoleLine("out.log", i, t) for i, t in enumerate(text, 1)])
    assert [t.exception_type for t in tbs] == ["Exception"]
    assert tbs[0].frames and tbs[0].frames[-1][2] == "check_dataset"
    assert classify(tbs[0].exception_type, tbs[0].message, tbs[0].frames).id == "dataset-not-found"
    got = classify(
        "RuntimeError",
        "Dataset 'data.yaml' error ❌ Dataset 'data.yaml' images not found, missing path '/k/images/val'",
    )
    assert got is not None and got.cause == "data_config"


def test_a_model_name_that_is_no_folder_and_no_repo_id_as_huggingface_hub_raises_it():
    """huggingface_hub's repo-id check (what transformers' from_pretrained re-raises as OSError on a typo in
    the model name or path, newuser10 hf_model_name_typo.log): the configuration, not the network."""
    hub = pytest.importorskip("huggingface_hub.utils")
    e = _raised(lambda: hub.validate_repo_id("/tmp/nu10/tinybrt"))
    assert _why(e) == "model-name-not-found", e
    assert get("model-name-not-found").cause == "data_config"


def test_row_data_path_does_not_exist_on_a_paddleocr_train_log():
    """Own corpus f11b2-18: a PaddleOCR train.log whose every label line points at an image path with
    the folder doubled ('Exception: ./text/typed_text/crop_img/crop_img/<file>.jpg does not exist!', from
    ppocr/data/simple_dataset.py __getitem__): the data configuration, not a code bug (was correctness_bug)."""
    own = Path(__file__).resolve().parent / "data" / "realworld" / "runs"
    ((_, run),) = load_path(own / "reyquazar--image-to-text" / "output" / "train.log").runs
    v = audit(run).verdict
    assert (v.outcome, v.cause) == (Outcome.CRASHED, Cause.DATA_CONFIG), v.summary
    assert "data file the run reads" in v.summary


def _report_verdict(prefix: str):
    (case,) = (Path(__file__).resolve().parent / "data" / "reports").glob(prefix + "*")
    runs = [r for p in sorted(case.glob("*.log")) for _, r in load_path(p).runs]
    return audit(runs[-1]).verdict, runs[-1]


@pytest.mark.parametrize(
    ("prefix", "op", "message"),
    [
        ("b19-04-", "CTCLoss", "Labels length is zero in batch 27"),
        (
            "b19-07-",
            "focal_loss/logistic_loss/GreaterEqual",
            "Incompatible shapes: [32,810,128,128]",
        ),
    ],
)
def test_row_loss_input_rejected_on_tensorflow_errors_pasted_in_reports(prefix, op, message):
    """Reports b19-04 (TF 1.x: ``InvalidArgumentError (see above for traceback): Labels length is zero
    in batch 27`` then ``[[Node: CTCLoss = ...]]``; an empty label in the data set) and b19-07 (TF 2.x
    root errors: ``(0) Invalid argument: Incompatible shapes: [32,810,128,128] vs. [32,9,128,128]`` at
    ``[[node focal_loss/... (defined at det_model_fn.py:190) ]]``; num_classes differs between training
    and evaluation): the exception line is read with its class and the op that raised it, and an
    InvalidArgumentError raised by a loss op is the data or configuration (both were unknown: no
    exception line was read)."""
    v, run = _report_verdict(prefix)
    _, tbs = scan(run.console)
    assert tbs[0].exception_type == "InvalidArgumentError" and tbs[0].message.startswith(message)
    assert tbs[0].frames[-1][2] == op
    assert (v.outcome, v.cause) == (Outcome.CRASHED, Cause.DATA_CONFIG), v.summary
    assert "the loss op rejected the values it was given" in v.summary


def test_a_tensorflow_error_outside_a_loss_op_is_not_the_data():
    """Report b13-06 (TF 1.x ``ResourceExhaustedError (see above for traceback): OOM when allocating
    tensor`` at a convolution op) stays an out-of-memory, and its op is quoted as the raising frame; an
    InvalidArgumentError at an op that is no loss keeps the caller's default."""
    v, _ = _report_verdict("b13-06-")
    assert (v.outcome, v.cause) == (Outcome.CRASHED, Cause.INFRA_RUNTIME), v.summary
    assert "raised at the graph op fc1_voc12_c3/convolution/SpaceToBatchND" in v.summary
    conv = (("<graph>", 0, "resnet/conv1/Conv2D"),)
    assert classify("InvalidArgumentError", "Incompatible shapes: [2,3] vs. [2,4]", conv) is None


class _CsvRows:
    """A dataset whose ``__getitem__`` parses a CSV line into floats inside a list comprehension."""

    def __init__(self, lines):
        self.lines = lines

    def __len__(self):
        return len(self.lines)

    def __getitem__(self, i):
        return [float(v) for v in self.lines[i].split(",")]


def test_row_record_does_not_parse_on_a_placeholder_in_a_data_loader_worker():
    torch = pytest.importorskip("torch")
    from torch.utils.data import DataLoader

    e = _raised(lambda: list(DataLoader(_CsvRows(["1.0,2.0", "n/a,3.0"]), batch_size=None)))
    _, tbs = scan(_traceback_lines(e, "train.log"))
    tb = tbs[-1]
    assert tb.exception_type == "ValueError" and tb.frames[-1][2] == "<listcomp>"
    assert in_data_code(tb.frames)
    assert classify(tb.exception_type, tb.message, tb.frames).id == "record-does-not-parse"
    assert _why(_raised(lambda: int("12a")), tb.frames) == "record-does-not-parse"
    # the same conversion in the training code (not the dataset's) is not read as the data's
    assert classify("ValueError", "could not convert string to float: 'n/a'", tb.frames[:1]) is None
    del torch


def test_row_constructor_argument_not_taken_on_a_removed_trainingarguments_option(tmp_path):
    pytest.importorskip("transformers")
    from transformers import TrainingArguments

    e = _raised(lambda: TrainingArguments(output_dir=str(tmp_path), evaluation_strategy="epoch"))
    assert isinstance(e, TypeError)
    assert _why(e) == "constructor-argument-not-taken"

    def step(batch):
        return batch

    # a plain function called with a wrong keyword is the code's, not a constructor's option
    assert _why(_raised(lambda: step(batch=1, lr=2))) is None


def test_audit_of_newuser12_consoles_that_crashed_on_a_record_and_on_a_constructor_option():
    """A DataLoader worker's re-raised error (torch prints the worker's traceback after 'Caught
    ValueError in DataLoader worker process 0') and transformers 5.25's TrainingArguments refusing a
    removed option, as the real runs printed them."""
    data = Path(__file__).parent / "data" / "newuser12"
    for name in ("pt_loader_worker_bad_record.log", "hf_evaluation_strategy_kwarg.log"):
        rep = audit(_run(data / name))
        assert (rep.verdict.outcome, rep.verdict.cause) == (Outcome.CRASHED, Cause.DATA_CONFIG), (
            name
        )


def test_row_network_on_an_object_store_client_that_cannot_reach_its_endpoint():
    """fsspec's http filesystem (the aiohttp client the s3fs / gcsfs object stores use too) asked for a
    checkpoint on an endpoint nothing listens on raises aiohttp's ClientConnectorError ('Cannot connect to
    host ...'): the network or the store, not the code (was the caller's default, correctness_bug).
    Nothing is started: the port is one no process listens on."""
    fsspec = pytest.importorskip("fsspec")
    pytest.importorskip("aiohttp")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again before the request: nothing listens on it
    e = _raised(lambda: fsspec.filesystem("http").cat(f"http://127.0.0.1:{port}/ckpt/last.ckpt"))
    assert type(e).__name__ == "ClientConnectorError", repr(e)
    assert _why(e) == "network"
    assert classify("ValueError", str(e)).id == "network-message"  # the message alone names it too


def test_row_network_message_on_a_tensorflow_checkpoint_save_to_an_object_store():
    """Report b23-06: a TensorFlow 1.x job on Huawei Cloud writes its checkpoints to the OBS object store
    through TensorFlow's S3 file system; after several epochs the SaveV2 op fails with ``InternalError (see
    above for traceback): : Unable to connect to endpoint`` (aws-sdk-cpp's NETWORK_CONNECTION error, as
    TensorFlow's s3_file_system.cc raises it). The store's connection, not the code (was correctness_bug)."""
    v, _ = _report_verdict("b23-06-")
    assert (v.outcome, v.cause) == (Outcome.CRASHED, Cause.INFRA_RUNTIME), v.summary
    assert "object store" in v.summary


def _load_error(model, state) -> str:
    torch = pytest.importorskip("torch")
    try:
        model.load_state_dict(state)
    except RuntimeError as e:
        return f"RuntimeError: {e}"
    raise AssertionError(f"{torch.__version__}: the state dict loaded")


def _classify_pasted(text: str):
    first, *rest = text.splitlines()
    _, tbs = scan(
        [
            ConsoleLine("a.log", 1, first),
            *(ConsoleLine("a.log", i, t) for i, t in enumerate(rest, 2)),
        ]
    )
    return classify(tbs[0].exception_type, tbs[0].message, (), rest)


def test_row_checkpoint_wrapper_prefix_on_data_parallel_and_compiled_models():
    """torch's own messages: a plain model's state dict loaded into nn.DataParallel (missing 'module.weight',
    unexpected 'weight'), and a torch.compile'd model's state dict ('_orig_mod.weight') loaded into the plain
    model: the same parameters under a wrapper's prefix, the loading code's fault (was data_config, a wrong
    checkpoint). A checkpoint with other names or shapes stays the configuration's."""
    torch = pytest.importorskip("torch")
    from mlaudit_core.exception_causes import state_dict_keys, wrapper_prefix

    plain = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.BatchNorm1d(2))
    msg = _load_error(torch.nn.DataParallel(plain), plain.state_dict())
    assert wrapper_prefix(*state_dict_keys(msg)) == "module."
    got = _classify_pasted(msg)
    assert got.id == "checkpoint-wrapper-prefix" and got.cause == "correctness_bug", msg
    msg = _load_error(plain, torch.compile(plain).state_dict())
    assert wrapper_prefix(*state_dict_keys(msg)) == "_orig_mod."
    assert _classify_pasted(msg).id == "checkpoint-wrapper-prefix", msg
    other = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Linear(2, 2))
    msg = _load_error(torch.nn.DataParallel(other), plain.state_dict())
    assert wrapper_prefix(*state_dict_keys(msg)) is None
    assert _classify_pasted(msg).id == "checkpoint-model-mismatch", msg


def test_row_checkpoint_wrapper_prefix_on_a_resume_that_wraps_before_loading():
    """Report b24-06 (pytorch-3dunet PR #134): ``Missing key(s) in state_dict "module.encoders.0..."`` and
    ``Unexpected key(s) in state_dict "encoders.0..."`` printed on two lines: the code wraps the model in
    DataParallel before loading a checkpoint saved from the plain model (was data_config)."""
    v, _ = _report_verdict("b24-06-")
    assert (v.outcome, v.cause) == (Outcome.CRASHED, Cause.CORRECTNESS_BUG), v.summary
    assert "wrapper's prefix" in v.summary


def test_row_unknown_split_on_a_tensorflow_datasets_build_without_the_split():
    """Own corpus f12b1-09 (OpenVLA-OFT on a custom RLDS data set): tensorflow_datasets raises ``ValueError:
    Unknown split 'val'. Should be one of ['train'].``: the configuration asks for a split the data set does
    not have (was a code error)."""
    ((_, run),) = load_path(RUNS / "HEISENYAN--openvla-oft" / "slurm.out").runs
    _, tbs = scan(run.console)
    tb = next(t for t in tbs if "Unknown split" in t.message)
    got = classify(tb.exception_type, tb.message, tb.frames)
    assert got is not None and got.id == "unknown-split" and got.cause == "data_config"


def test_rt005_stopped_from_outside_on_an_interrupt_a_c_extension_reraised():
    """Own corpus f14b2-12: a launch interrupted while ``from torch._C import *`` ran in torch/__init__.py
    ends on ``RuntimeError: KeyboardInterrupt:``: an interrupt under another class is never a code bug
    (was crashed/correctness_bug)."""
    v = audit(_run(RUNS / "Xavier-wa--FRNet" / "nohup.out")).verdict
    assert (v.outcome, v.cause) == (Outcome.CRASHED, Cause.INCONCLUSIVE), v.summary


def test_row_checkpoint_model_mismatch_on_keras_weights_of_another_layer_width(
    tmp_path, monkeypatch
):
    """keras 3's load_weights of a weights file saved from a model with another layer width raises
    ``ValueError: A total of 2 objects could not be loaded. ...``: the file does not fit the model built
    from the configuration (was a plain ValueError: correctness_bug)."""
    monkeypatch.setenv("KERAS_BACKEND", os.environ.get("KERAS_BACKEND", "torch"))
    keras = pytest.importorskip("keras")
    saved = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4), keras.layers.Dense(2)])
    saved.save_weights(tmp_path / "model.weights.h5")
    other = keras.Sequential([keras.Input((3,)), keras.layers.Dense(5), keras.layers.Dense(2)])
    e = _raised(lambda: other.load_weights(tmp_path / "model.weights.h5"))
    assert isinstance(e, ValueError) and "could not be loaded" in str(e), repr(e)
    got = classify("ValueError", str(e))
    assert got is not None and got.id == "checkpoint-model-mismatch" and got.cause == "data_config"


def _frames_of(e: BaseException) -> tuple[tuple[str, int, str], ...]:
    return tuple((f.filename, f.lineno or 0, f.name) for f in traceback.extract_tb(e.__traceback__))


def test_row_missing_data_file_on_a_checkpoint_path_torch_load_does_not_find(tmp_path):
    """torch.load of a checkpoint path that names no file (a resume or pretrained path in the
    configuration), called from a ``load_checkpoint`` function: the configuration's path, data_config
    (was a code error: checkpoint extensions were not read, and a frame named ``load_checkpoint`` counted
    as a write). torch.save into a folder that does not exist, from ``save_checkpoint``, stays the code's."""
    torch = pytest.importorskip("torch")

    def load_checkpoint(path):
        return torch.load(path)

    def save_checkpoint(path):
        torch.save({"epoch": 1}, path)

    e = _raised(lambda: load_checkpoint(tmp_path / "runs" / "exp1" / "last.pth"))
    assert isinstance(e, FileNotFoundError), repr(e)
    assert _why(e, _frames_of(e)) == "missing-data-file"
    e = _raised(lambda: save_checkpoint(tmp_path / "runs" / "exp1" / "last.pth"))
    assert _why(e, _frames_of(e)) is None, repr(e)


def test_row_installed_package_mismatch_as_python_transformers_and_pandas_raise_it():
    """A name the code imports that the installed package no longer has (huggingface_hub's removed
    ``cached_download``: CPython names the package's file under site-packages), a backend transformers
    requires that is not installed, pandas' optional dependency: the environment's versions, infra_runtime
    (was correctness_bug). A name missing from the project's own module stays the code's (own f5b5-11)."""
    pytest.importorskip("huggingface_hub")
    transformers = pytest.importorskip("transformers")
    pd = pytest.importorskip("pandas")

    def removed_name():
        from huggingface_hub import cached_download  # noqa: F401 - removed from the installed version

    e = _raised(removed_name)
    assert isinstance(e, ImportError) and "-packages" in str(e), str(e)
    assert _why(e) == "installed-package-mismatch"
    from transformers.utils.import_utils import is_sentencepiece_available, requires_backends

    if not is_sentencepiece_available():
        e = _raised(
            lambda: requires_backends(transformers.PreTrainedTokenizerBase, ["sentencepiece"])
        )
        assert _why(e) == "installed-package-mismatch", str(e)
    try:
        import tabulate  # noqa: F401
    except ImportError:
        e = _raised(lambda: pd.DataFrame({"a": [1]}).to_markdown())
        assert _why(e) == "installed-package-mismatch", str(e)
    own = "cannot import name 'step_decay' from 'utils.train_utils' (/user/c/ctesi/utils/train_utils.py)"
    assert classify("ImportError", own) is None


def test_row_dependency_not_installed_on_an_installed_package_importing_a_missing_backend(
    monkeypatch,
):
    """keras 3 importing its TensorFlow backend where TensorFlow is not installed raises ``ModuleNotFoundError:
    No module named 'tensorflow'`` at an import inside keras (site-packages); Lightning's CometLogger without
    comet-ml raises ``Requirement 'comet-ml>=...' not met``: a package missing from the environment,
    infra_runtime (was correctness_bug). A module the project itself imports and does not find (the innermost
    frame is not an installed package's) stays the code's."""
    import importlib

    monkeypatch.setenv("KERAS_BACKEND", os.environ.get("KERAS_BACKEND", "torch"))
    pytest.importorskip("keras")
    if importlib.util.find_spec("tensorflow") is None:
        e = _raised(lambda: importlib.import_module("keras.src.backend.tensorflow"))
        assert isinstance(e, ModuleNotFoundError) and "tensorflow" in str(e), repr(e)
        assert "-packages" in _frames_of(e)[-1][0]
        assert _why(e, _frames_of(e)) == "dependency-not-installed"
    loggers = pytest.importorskip("lightning.pytorch.loggers")
    if importlib.util.find_spec("comet_ml") is None:
        e = _raised(lambda: loggers.CometLogger())
        assert _why(e, _frames_of(e)) == "installed-package-mismatch", str(e)
    e = _raised(lambda: importlib.import_module("no_such_project_module"))
    assert isinstance(e, ModuleNotFoundError)
    assert _why(e, _frames_of(e)) is None


def test_row_dependency_not_installed_on_a_lazy_import_inside_an_installed_packages_function(
    monkeypatch,
):
    """keras 3's TensorBoard callback imports TensorFlow inside its ``summary`` property
    (keras/src/callbacks/tensorboard.py: ``import tensorflow.summary as summary``): without TensorFlow the
    innermost frame is that function, not a module body, and the source line the traceback prints under
    it imports the missing module: the environment (was correctness_bug). The same frames with a
    line that hands the name to importlib (a configured class path) stay unclassified."""
    import importlib
    import traceback

    monkeypatch.setenv("KERAS_BACKEND", os.environ.get("KERAS_BACKEND", "torch"))
    keras = pytest.importorskip("keras")
    if importlib.util.find_spec("tensorflow") is not None:
        pytest.skip("tensorflow is installed: the callback's import succeeds")
    cb = keras.callbacks.TensorBoard(log_dir="unused")
    e = _raised(lambda: cb.summary)
    assert isinstance(e, ModuleNotFoundError) and "tensorflow" in str(e), repr(e)
    frames = _frames_of(e)
    assert frames[-1][2] == "summary" and "-packages" in frames[-1][0], frames[-1]
    # the source line the traceback prints under its innermost frame
    printed = traceback.format_exception(e)[-2].splitlines()[-1]
    assert printed.strip().startswith("import tensorflow"), printed
    assert _why(e, frames, (printed,)) == "dependency-not-installed"
    assert _why(e, frames, ("    return importlib.import_module(name)",)) is None


def test_row_server_refused_as_requests_and_huggingface_hub_raise_it():
    """A hub or server that refuses the request (rate limit 429, server error 503, a gated repository
    without access 401), as requests' raise_for_status and huggingface_hub's hf_raise_for_status word it
    for a response with that status: the service or the job's credentials (was correctness_bug). A 404 is
    not this row (a name that does not exist is the configuration's)."""
    requests = pytest.importorskip("requests")
    pytest.importorskip("huggingface_hub")
    httpx2 = pytest.importorskip("httpx2")
    from huggingface_hub.utils import hf_raise_for_status

    url = "https://huggingface.co/meta-llama/Llama-2-7b-hf/resolve/main/config.json"
    for code, reason in ((503, "Service Unavailable"), (429, "Too Many Requests")):
        r = requests.Response()
        r.status_code, r.reason, r.url = code, reason, url
        e = _raised(r.raise_for_status)
        assert _why(e) == "server-refused", str(e)
    gated = {"X-Error-Code": "GatedRepo", "X-Error-Message": "Access to model is restricted."}
    for code, headers in ((429, {}), (503, {}), (401, gated)):
        resp = httpx2.Response(code, request=httpx2.Request("GET", url), headers=headers)
        e = _raised(lambda resp=resp: hf_raise_for_status(resp))
        assert _why(e) == "server-refused", (code, str(e))
    resp = httpx2.Response(404, request=httpx2.Request("GET", url))
    e = _raised(lambda: hf_raise_for_status(resp))
    assert _why(e) != "server-refused", str(e)


def test_row_os_resource_on_a_file_descriptor_that_did_not_arrive():
    """CPython's multiprocessing.reduction.recvfds when a message arrives without the file descriptor it
    should carry (what torch's file_descriptor sharing of DataLoader batches meets at the open-file limit):
    'received 0 items of ancdata', the operating system's limit (was correctness_bug)."""
    from multiprocessing import reduction

    a, b = socket.socketpair()
    with a, b:
        b.sendmsg([b"A"])
        e = _raised(lambda: reduction.recvfds(a, 1))
    assert _why(e) == "os-resource", str(e)


def _frames(e: BaseException) -> tuple[tuple[str, int, str], ...]:
    return tuple((f.filename, f.lineno or 0, f.name) for f in traceback.extract_tb(e.__traceback__))


def test_row_setting_value_rejected_as_keras_sklearn_transformers_and_torch_check_their_arguments(
    tmp_path, monkeypatch
):
    """A misspelt optimizer/loss/activation name (Keras), a solver outside its choices
    (scikit-learn's InvalidParameterError), an evaluation strategy outside its enum (transformers),
    a negative learning rate (torch.optim): the library's own argument check names the value."""
    torch = pytest.importorskip("torch")
    monkeypatch.setenv("KERAS_BACKEND", "torch")
    keras = pytest.importorskip("keras")
    np = pytest.importorskip("numpy")
    from sklearn.linear_model import LogisticRegression
    from transformers import TrainingArguments

    x, y = np.zeros((4, 2)), [0, 1, 0, 1]
    for fn in (
        lambda: keras.optimizers.get("adamm"),
        lambda: keras.losses.get("msee"),
        lambda: keras.activations.get("relux"),
        lambda: LogisticRegression(solver="lbgfs").fit(x, y),
        lambda: LogisticRegression(C="1.0").fit(x, y),
        lambda: TrainingArguments(output_dir=str(tmp_path), eval_strategy="epochh"),
        lambda: torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=-1),
    ):
        e = _raised(fn)
        assert _why(e, _frames(e)) == "setting-value-rejected", e
    # a plain ValueError of the user's own code is not a setting the library rejected
    assert _why(_raised(lambda: int("1e-3"))) is None


def test_row_setting_value_rejected_as_xgboost_and_lightgbm_check_their_parameter_names():
    """A misspelt objective, metric or booster name reaches XGBoost's and LightGBM's C++ registries
    (``Unknown objective function: `binary:logisitic```, ``Unknown objective type name``): the
    library rejected a configuration value, as Keras does a misspelt optimizer name."""
    np = pytest.importorskip("numpy")
    xgb = pytest.importorskip("xgboost")
    lgb = pytest.importorskip("lightgbm")
    x = np.random.default_rng(0).random((40, 3))
    y = (x[:, 0] > 0.5).astype(int)
    for fn in (
        lambda: xgb.train({"objective": "binary:logisitic"}, xgb.DMatrix(x, y), 2),
        lambda: xgb.train({"eval_metric": "rmsee"}, xgb.DMatrix(x, y), 2),
        lambda: xgb.train({"booster": "gbtreee"}, xgb.DMatrix(x, y), 2),
        lambda: lgb.train({"objective": "binary_logistic", "verbose": -1}, lgb.Dataset(x, y), 2),
        lambda: lgb.train({"boosting": "gbdtt", "verbose": -1}, lgb.Dataset(x, y), 2),
    ):
        e = _raised(fn)
        assert _why(e, _frames(e)) == "setting-value-rejected", e


def test_row_setting_value_type_on_a_yaml_string_learning_rate_reaching_adam():
    """PyYAML reads `lr: 1e-3` (no dot) as the string '1e-3'; torch.optim.Adam's check `0.0 <= lr`
    raises TypeError in torch's own frame: a configuration value of the wrong type. The same
    comparison in the user's own frame is the code's."""
    torch = pytest.importorskip("torch")
    yaml = pytest.importorskip("yaml")
    lr = yaml.safe_load("lr: 1e-3")["lr"]
    assert isinstance(lr, str)
    e = _raised(lambda: torch.optim.Adam([torch.zeros(1, requires_grad=True)], lr=lr))
    assert _why(e, _frames(e)) == "setting-value-type", e
    own = _raised(lambda: 0.0 <= lr)
    assert _why(own, _frames(own)) is None


def test_row_unequal_samples_on_torch_tensor_of_unpadded_sequences():
    """transformers' default_data_collator builds `torch.tensor([f["input_ids"] for f in features])`:
    rows of different lengths raise 'expected sequence of length 3 at dim 1 (got 2)'."""
    pytest.importorskip("torch")
    from transformers import default_data_collator

    e = _raised(lambda: default_data_collator([{"input_ids": [1, 2, 3]}, {"input_ids": [1, 2]}]))
    assert _why(e) == "unequal-samples", e


_OWN_RUNS = Path(__file__).parent / "data" / "realworld" / "runs"


@pytest.mark.parametrize(
    ("rel", "cause", "word"),
    [
        # own f23b2-04: a W&B run whose train.py opens 'encoded_sequences_and_file_names.pkl' (a pickled data
        # file) and dies 2 s in; was correctness_bug ("training code path")
        ("zy-cmd--BindRNAgen/wandb/latest-run", Cause.DATA_CONFIG, "FileNotFoundError"),
        # own f23b2-17: CenterFormer's console, torch's module.cuda() raising the CUDA runtime's
        # cudaErrorUnsupportedPtxVersion text; was correctness_bug
        ("YoonKyonghwan--EfficientCenterFormer/train.out", Cause.INFRA_RUNTIME, "PTX"),
    ],
    ids=["pickled-data-file-missing", "ptx-unsupported-toolchain"],
)
def test_row_missing_data_file_and_environment_on_real_crashes(rel, cause, word):
    runs = list(load_path(_OWN_RUNS / rel).runs)
    assert runs, rel
    v = audit(runs[-1][1]).verdict
    assert (v.outcome, v.cause) == (Outcome.CRASHED, cause), v.summary
    assert word in v.summary


def test_row_missing_data_file_is_not_a_program_or_a_code_file_the_environment_lacks(tmp_path):
    """subprocess raises ENOENT with the program's name (a bare name, a file under a bin/ folder): the
    environment lacks a program, not a data path; a missing ``.py`` is the project's code."""
    import subprocess

    e = _raised(lambda: subprocess.run(["no-such-program-mlaudit"], check=False))
    assert isinstance(e, FileNotFoundError) and _why(e) is None, repr(e)
    e = _raised(lambda: subprocess.run([str(tmp_path / "bin" / "nvcc")], check=False))
    assert isinstance(e, FileNotFoundError) and _why(e) is None, repr(e)
    e = _raised(lambda: open(tmp_path / "models" / "yolo.py", "rb"))
    assert _why(e) is None


def test_row_library_attribute_missing_as_numpy_torch_and_transformers_raise_it():
    """A name an installed package no longer (or not yet) has: numpy's removed aliases say so in their own
    text; numpy, torch and transformers raise a missing attribute from their own module-level __getattr__,
    so the traceback's innermost frame is the package's file. A project's module lacking a name is its
    own code."""
    np = pytest.importorskip("numpy")
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")

    for get_missing in (
        lambda: np.float,  # removed alias (numpy 2.x text names the deprecation)
        lambda: np.NaN,  # 'was removed in the NumPy 2.0 release'
        lambda: np.no_such_name_mlaudit,
        lambda: torch.no_such_name_mlaudit,
        lambda: transformers.no_such_name_mlaudit,
    ):
        e = _raised(get_missing)
        assert isinstance(e, AttributeError)
        assert _why(e, _frames_of(e)) == "library-attribute-missing", str(e)
    project = (("/home/u/project/train.py", 12, "main"),)
    assert (
        classify("AttributeError", "module 'utils' has no attribute 'step_decay'", project) is None
    )


@pytest.mark.parametrize(
    "message",
    [
        "CUDA error: system has unsupported display driver / cuda driver combination",
        "CUDA error: forward compatibility was attempted on non supported HW",
        "CUDA error: invalid device ordinal",
        "cuDNN error: CUDNN_STATUS_INTERNAL_ERROR",
        "cuDNN error: CUDNN_STATUS_EXECUTION_FAILED",
        "CUDA error: CUBLAS_STATUS_NOT_SUPPORTED when calling `cublasGemmEx( handle, opa, opb, m, n, k, ...)`",
        "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. If you are "
        "running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu') to map your "
        "storages to the CPU.",
        "numpy.dtype size changed, may indicate binary incompatibility. Expected 96 from C header, got 88 from "
        "PyObject",
    ],
)
def test_row_environment_on_the_cuda_runtime_and_libraries_statuses_of_the_install(message):
    """The CUDA runtime's, cuDNN's and cuBLAS's statuses of an install, driver or device that does not fit
    are the environment, whichever frame reported them; the statuses of a call's own arguments (cuDNN
    BAD_PARAM, cuBLAS INVALID_VALUE / EXECUTION_FAILED: an index or a shape) are not read."""
    assert classify("RuntimeError", message, (("/home/u/train.py", 9, "train"),)) is get(
        "environment"
    )
    for own in (
        "cuDNN error: CUDNN_STATUS_BAD_PARAM",
        "CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm( handle, opa, opb, m, n, k, ...)`",
        "CUDA error: CUBLAS_STATUS_INVALID_VALUE when calling `cublasSgemm( handle, opa, opb, m, n, k, ...)`",
    ):
        assert classify("RuntimeError", own) is None


def test_row_environment_on_a_checkpoint_mapped_to_cuda_on_a_cpu_only_torch():
    """torch.load of a checkpoint onto a GPU on a machine without CUDA (the CPU wheel of the test venv):
    torch's own serialization.py validate_cuda_device text, read as the environment."""
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("needs a torch without CUDA")
    buf = io.BytesIO()
    torch.save(torch.zeros(2), buf)
    buf.seek(0)
    e = _raised(lambda: torch.load(buf, map_location="cuda:0"))
    assert _why(e, _frames_of(e)) == "environment", repr(e)


def test_darknet_fatal_error_is_read_as_the_exception_and_its_class_count_mismatch_is_data():
    """Own f20b1-14: a Darknet (AlexeyAB) YOLOv3 console that prints the network up to layer 106 and stops
    on ``Darknet error location: ./src/parser.c, parse_yolo(), line #458`` with the message on the next
    line (filters before the yolo layer do not fit classes=): no Python traceback, so it was unjudged
    (no metric at all); darknet's error() is the run's exception, raised in parse_yolo, and the class count
    of the configuration is data_config. Darknet's ``Couldn't open file: {path}`` is a data file that is
    not there."""
    runs = list(load_path(_OWN_RUNS / "Aayushjshah--maskDetectionYolov3" / "train_log.txt").runs)
    v = audit(runs[-1][1]).verdict
    assert (v.outcome, v.cause) == (Outcome.CRASHED, Cause.DATA_CONFIG), v.summary
    assert "parse_yolo" in v.summary
    lines = ["   0 conv     32       3 x 3/ 1", "Couldn't open file: data/obj/train.txt"]
    _, tbs = scan([ConsoleLine("a.log", i, t) for i, t in enumerate(lines, 1)])
    assert [t.exception_type for t in tbs] == ["DarknetError"]
    got = classify(tbs[0].exception_type, tbs[0].message, tbs[0].frames)
    assert got is not None and got.cause == "data_config"


def test_row_empty_dataset_as_scikit_learn_rejects_an_empty_set_and_a_split_larger_than_the_data():
    """scikit-learn's own checks of a data set with no rows and of a held-out size larger than the data
    (report b28-03 pastes the second: 'test_size=640 should be either positive and smaller than the number
    of samples 191 ...', 10 eval batches of 64 asked of 191 utterances) are the data's size, data_config."""
    np = pytest.importorskip("numpy")
    pytest.importorskip("sklearn")
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split

    for fail in (
        lambda: train_test_split(np.zeros((191, 2)), test_size=640),
        lambda: train_test_split(np.zeros((0, 2)), test_size=0.2),
        lambda: LogisticRegression().fit(np.zeros((0, 3)), np.zeros(0)),
    ):
        assert _why(_raised(fail)) == "empty-dataset"
    assert classify("ValueError", "Found array with dim 3. Estimator expected <= 2.") is None


@pytest.mark.parametrize("prefix", ["b44-08", "b44-09"])
def test_network_errors_printed_as_a_repr_or_as_huggingface_hubs_retry_warning_are_the_environment(
    prefix,
):
    """Reports b44-08 (the paste is huggingface_hub's retry warning ``'(ProtocolError('Connection aborted.',
    RemoteDisconnected(...)), ...)' thrown while requesting GET https://huggingface.co/...`` while a dataset
    streamed) and b44-09 (``ReadTimeoutError("HTTPSConnectionPool(...)...")`` then hydra's ``Error in call to
    target 'datasets.load.load_dataset':`` and ``ConnectionError("Couldn't reach 'tanganke/sun397' on the Hub
    (ConnectionError)")``): no ``Class: message`` line, so no exception was read (crashed/inconclusive and
    unknown); the repr and the retry warning are the run's last exception, a network failure."""
    v, _ = _report_verdict(prefix + "-")
    assert (v.outcome, v.cause) == (Outcome.CRASHED, Cause.INFRA_RUNTIME), v.summary


def test_huggingface_hub_retry_warning_of_a_request_that_then_succeeded_is_not_the_exception():
    """huggingface_hub logs the retry warning and retries: a job whose output goes on after it (steps,
    a loss) did not stop there."""
    lines = [
        "'(ReadTimeoutError(\"HTTPSConnectionPool(host='huggingface.co', port=443): Read timed out. (read "
        "timeout=10)\"), '(Request ID: 1)')' thrown while requesting HEAD https://huggingface.co/gpt2/config.json",
        "Retrying in 1s [Retry 1/5].",
        "step 10, loss 3.21",
    ]
    _, tbs = scan([ConsoleLine("a.log", i, t) for i, t in enumerate(lines, 1)])
    assert tbs == []
    _, tbs = scan([ConsoleLine("a.log", i, t) for i, t in enumerate(lines[:2], 1)])
    assert [t.exception_type for t in tbs] == ["ReadTimeoutError"]
    assert classify(tbs[0].exception_type, tbs[0].message) is get("network")


def test_row_path_setting_unset_as_cpython_rejects_none_for_a_path():
    """open(), pathlib and os.path given None for a path (a configuration's ``density_parameters_path:
    null``, an argparse option with no default): CPython's own texts; own f24b1-11 (ZOD-MC, W&B run
    folder, yaml.safe_load(open(config.density_parameters_path)) with the path null) was correctness_bug."""
    import pathlib

    for fail in (lambda: open(None), lambda: pathlib.Path(None), lambda: os.path.join("a", None)):  # type: ignore[call-overload,arg-type]
        assert _why(_raised(fail)) == "path-setting-unset"
    runs = list(load_path(_OWN_RUNS / "kasjfksj--improved-zod-mc" / "wandb" / "latest-run").runs)
    v = audit(runs[-1][1]).verdict
    assert (v.outcome, v.cause) == (Outcome.CRASHED, Cause.DATA_CONFIG), v.summary


def test_row_library_version_or_dependency_as_transformers_raises_it(tmp_path):
    """transformers given a checkpoint whose model type or tokenizer the installed release does not know,
    or whose tokenizer needs a package that is not installed: its own texts name the environment (an out of
    date release, a missing package), infra_runtime. A message that names no install is not read."""
    import json

    pytest.importorskip("transformers")
    from transformers import AutoConfig, AutoTokenizer

    arch = tmp_path / "arch"
    arch.mkdir()
    (arch / "config.json").write_text(json.dumps({"model_type": "mlaudit_unknown"}))
    e = _raised(lambda: AutoConfig.from_pretrained(str(arch)))
    assert _why(e) == "library-version-or-dependency", str(e)
    tok = tmp_path / "tok"
    tok.mkdir()
    (tok / "tokenizer_config.json").write_text(json.dumps({"tokenizer_class": "MlauditTokenizer"}))
    e = _raised(lambda: AutoTokenizer.from_pretrained(str(tok)))
    assert _why(e) == "library-version-or-dependency", str(e)
    assert classify("ValueError", "too many values to unpack (expected 2)") is None
