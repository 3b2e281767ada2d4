"""The cause of a crash from its exception: the class, the message and the frames it is raised in.

A traceback (or a single pasted exception line) is judged without metrics: what an analyst reads
first is the exception class, its message and the frame that raised it. Each :class:`ExceptionCause`
row is one rule an analyst applies to any report:

* data errors (an image that does not decode, a label index outside the configured classes, a
  corrupt or unparsable data file, a missing key or file inside the dataset's own code, a Hugging
  Face ``datasets`` build error) -> ``data_config``;
* the environment the job runs in (a worker process that dies while multiprocessing starts or
  unpickles it, a network error reaching a hub, a distributed rendezvous whose port is taken, a
  driver or binary library that does not fit the install, an I/O error from the operating system)
  -> ``infra_runtime``;
* a model id or path that does not name a model (transformers' ``Can't load ...``), a checkpoint that does
  not fit the configured model (``load_state_dict``'s missing, unexpected or mis-shaped keys) -> ``data_config``.

Anything else (a plain Python error in the user's code) stays with the caller's default,
``correctness_bug``. Rows are tried in order; the first that matches wins.

Lookup order with :data:`mlaudit_core.signatures.CATALOG`: the signature catalogue decides first. A
line that matches a crash signature (out of memory, a collective timeout, a worker killed, a full
disk, a kill signal, a hardware error) decides the verdict through rules V01/V02, a non-finite
signature through V03-V07, before the exception's class is read; these rows are consulted by RT005
for a traceback's exception, and the verdict uses them (V08) only when no signature rule decided.
A message both match (``OSError: [Errno 28] No space left on device``) is the signature's.

Each row names where its messages come from (package, version read, file, function) and one
message as the package formats it; ``tests/test_exception_causes.py`` produces the messages with
the installed packages where they are test dependencies (PIL, torch, pandas, pyarrow, h5py, the
standard library, transformers) and checks each row against them, as
``tests/test_signature_sources.py`` does for the signature catalogue.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

#: Frames of a dataset's own code: ``__getitem__``/``__iter__``/collate functions, loaders of annotations,
#: images and data files, and files named after datasets or data loading. torch's own DataLoader frames
#: (``torch/utils/data/...``) are library frames and are not counted.
_DATA_FUNC = re.compile(
    r"^(?:__getitem__|__iter__|__next__|collate\w*|\w*_collate\w*|load_(?:data|dataset|annotations?|"
    r"images?|labels?|samples?|json|csv)\w*|read_(?:image|data|annotations?|labels?)\w*|"
    r"parse_(?:annotations?|labels?)\w*|get_item|getitem|get_sample|preprocess\w*)$"
)
_DATA_FILE = re.compile(
    r"(?:^|[/\\_])(?:datasets?|data_?loaders?|data_?utils?|data_?pipeline|dataset_\w+|\w+_dataset)"
    r"\.py$|[/\\](?:datasets?|data)[/\\][^/\\]+\.py$",
    re.I,
)
#: Frames that write (a save, a dump, an export): a file missing there is a folder the code did not create.
_WRITE_FUNC = re.compile(r"save|dump|write|export|checkpoint", re.I)
#: A frame named for reading (``load_checkpoint``, ``restore_ckpt``, ``resume_from_checkpoint``): not a write
#: although the name holds ``checkpoint``.
_READ_FUNC = re.compile(r"load|restore|resume|read", re.I)


def _writes(func: str) -> bool:
    """Whether a frame's function saves or writes (:data:`_WRITE_FUNC`, not named for reading)."""
    return bool(_WRITE_FUNC.search(func)) and not _READ_FUNC.search(func)


_LIBRARY = re.compile(
    r"site-packages|dist-packages|/lib/python\d|<frozen |\\lib\\|/torch/|/tensorflow/"
)
#: CPython's multiprocessing start-up, as the raising frame: a child unpickling what its parent sent
#: (spawn, forkserver) and the pipes that carry it (connection.py: the other end of the pipe died while
#: it was read or written). torch.multiprocessing.spawn (which runs the user's
#: training function in each process) is not start-up.
_MP_START = re.compile(
    r"(?<!torch)[/\\]multiprocessing[/\\](?:spawn|reduction|popen_spawn_\w+|popen_forkserver|"
    r"forkserver|connection)\.py$"
)


#: Another exception's line quoted inside a message (``got 'OSError: [Errno 5] ...' in the note``): the
#: quoted text is data this exception carries, not its own message. Bounded to 500 characters without a
#: quote inside, so a 1 MB line of unclosed quotes is read in linear time.
_QUOTED_EXCEPTION = re.compile(
    r"""(['"])[\w.]*(?:Error|Exception|Exit|Interrupt)\b:[^'"\n]{0,500}?\1"""
)


#: A file of an installed package (not the standard library, not a frozen module).
_INSTALLED = re.compile(r"[/\\](?:site|dist)-packages[/\\]")


def is_library_file(path: str) -> bool:
    """Whether a traceback frame's file belongs to an installed package or the standard library
    (site-packages, dist-packages, lib/pythonX, frozen modules, torch/tensorflow sources)."""
    return bool(_LIBRARY.search(path))


@dataclass(frozen=True)
class ExceptionCause:
    """One rule: exceptions whose class, message and frames match have this cause."""

    id: str
    cause: str  # a :class:`mlaudit_core.report.Cause` value
    meaning: str  # what the analyst reads from it (one line, quoted in the verdict)
    types: tuple[str, ...]  # exception class names (the last dotted part); empty: any class
    message: re.Pattern | None  # searched in the message and the lines printed next to it
    frames: str  # "" (any), "data" (raised in a dataset's own code), "mp-start" (multiprocessing start-up),
    # "reads" (no frame of the traceback saves or writes), "loss" (a frame of the loss computation),
    # "index-assert" (no assertion printed beside the error checks a value rather than an index),
    # "wrapper-keys" (a state_dict's missing and unexpected keys differ by a wrapper's prefix only),
    # "installed" (the innermost frame is an installed package's module body, run at import time: a file
    # under site-packages or dist-packages, function ``<module>``), "library" (the innermost frame is an
    # installed package's file: the value reached a library's own check), "library-module" (the module
    # that lacks an attribute is an installed package's: :func:`_names_installed_module`)
    source: str  # package version, file and function that write the message or define the class
    example: str  # an exception line as the package prints it
    #: whether the lines printed beside the exception line are read too (a CUDA kernel's assertion is
    #: printed next to ``device-side assert triggered``); other rows read the exception's own message, so a
    #: retry warning logged near a code error does not name its cause
    beside: bool = False


def _rx(p: str) -> re.Pattern:
    return re.compile(p, re.I)


CAUSES: tuple[ExceptionCause, ...] = (
    ExceptionCause(
        "undecodable-image",
        "data_config",
        "an image file of the data set does not decode (corrupt, truncated or not an image)",
        (),
        _rx(
            r"cannot identify image file|image file is truncated|broken data stream when reading image file|"
            r"Truncated File Read|could be decompression bomb DOS attack"
        ),
        "",
        "Pillow 13.0.0 PIL/Image.py open() (UnidentifiedImageError, an OSError), PIL/ImageFile.py "
        "ImageFile.load() ('image file is truncated', 'broken data stream ...'), PIL/Image.py "
        "_decompression_bomb_check (DecompressionBombError)",
        "PIL.UnidentifiedImageError: cannot identify image file '/data/train/n01688243_9115.JPEG'",
    ),
    ExceptionCause(
        "label-out-of-range",
        "data_config",
        "a target label or token index is outside the range the model was configured for (labels vs "
        "num_classes, token ids vs vocabulary size)",
        (),
        _rx(
            r"Target -?\d+ is out of bounds|\bt >= 0 && t < n_classes|cur_target >= 0 && cur_target < n_classes|"
            r"index out of range in self|srcIndex < srcSelectDimSize|Received a label value of -?\d+ which is "
            r"outside the valid range|&& \"index out of bounds\"|indexValue >= 0 && indexValue < "
        ),
        "",
        "torch 2.13.0 aten/src/ATen/native/LossNLL.cpp nll_loss_out_frame ('Target {} is out of bounds.'), "
        "aten/src/ATen/native/cuda/Loss.cu (CUDA_KERNEL_ASSERT cur_target >= 0 && cur_target < n_classes; "
        "THCUNN ClassNLLCriterion.cu in torch < 1.5: t >= 0 && t < n_classes), aten/src/ATen/native/Embedding.cpp "
        "via index_select ('index out of range in self'), aten/src/ATen/native/cuda/Indexing.cu "
        "(srcIndex < srcSelectDimSize), aten/src/ATen/native/cuda/IndexKernel.cu index_kernel_impl "
        '(CUDA_KERNEL_ASSERT(-sizes[i] <= index && index < sizes[i] && "index out of bounds"); '
        "'index >= -sizes[i] && ...' in torch < 2.1) and ScatterGatherKernel.cu (CUDA_KERNEL_ASSERT(idx_dim >= 0 && "
        'idx_dim < index_size && "index out of bounds")), THC\'s THCTensorScatterGather.cu in torch < 1.5 '
        "(indexValue >= 0 && indexValue < tensor.sizes[dim]); TensorFlow sparse_xent_op.cc ('Received a label value of {} which is "
        "outside the valid range of [0, {})')",
        "IndexError: Target 5 is out of bounds.",
        True,
    ),
    ExceptionCause(
        "device-side-assert",
        "data_config",
        "a CUDA device-side assertion stopped the run: torch's CUDA kernels assert that an index lies inside "
        "the tensor it indexes (a target inside [0, n_classes) in the loss kernels, a class or box index in "
        "an indexing, gather or scatter kernel, a token id inside an embedding), so a label or index the data "
        "holds beyond what the model was configured for (a colour or 255-valued label map, 1-based labels, "
        "more classes in the data than in the model) is what stops it; the frame the error is reported in "
        "is where CUDA noticed it, not where the index was made",
        (),
        _rx(r"device-side assert(?:ion)? triggered"),
        "index-assert",
        "torch 2.13.0 c10/cuda/CUDAException.cpp c10_cuda_check_implementation ('CUDA error: device-side assert "
        "triggered', followed by 'CUDA kernel errors might be asynchronously reported at some other API call, so "
        "the stacktrace below might be incorrect.'; 'cuda runtime error (59) : device-side assert triggered' in "
        "torch < 1.0), raised by the index checks CUDA_KERNEL_ASSERT of aten/src/ATen/native/cuda/Loss.cu and "
        "NLLLoss2d.cu (cur_target >= 0 && cur_target < n_classes), IndexKernel.cu and ScatterGatherKernel.cu "
        '("index out of bounds"), Indexing.cu (srcIndex < srcSelectDimSize); the assertion\'s own line goes '
        "to the device's stderr, which a paste often lacks (then row label-out-of-range cannot read it). A "
        "printed assertion on a value, not an index (Loss.cu binary_cross_entropy 'input_val >= zero && "
        "input_val <= one': probabilities outside [0, 1]; Distributions.cu multinomial '0 <= p4 && p4 <= 1'), "
        "is not this row",
        "RuntimeError: CUDA error: device-side assert triggered",
    ),
    ExceptionCause(
        "class-count-mismatch",
        "data_config",
        "the number of classes the model or its head is configured with differs from the classes the data set "
        "(or another part of the configuration) has: a class count left at a template's value, a layer sized "
        "for another count of classes, a label beyond the configured count",
        (),
        _rx(
            r"doesn't correspond to classes= or mask=|"
            r"`?num_classes`? \(\d+\)[^\n]{0,120}? does not match(?:es)? the length of `?CLASSES|"
            r"Label class \d+ exceeds (?:nc=\d+|dataset class count \d+)"
        ),
        "",
        "AlexeyAB/darknet src/parser.c parse_yolo (error('Error: l.outputs == params.inputs, filters= in the "
        "[convolutional]-layer doesn't correspond to classes= or mask= in [yolo]-layer'), printed by src/utils.c "
        "error(): 'Darknet error location: ...' then the message); mmdetection 2.x mmdet/datasets/utils.py "
        "NumClassCheckHook._check_head ('The `num_classes` ({}) in {} of {} does not matches the length of "
        "`CLASSES` ({}) in {}'); YOLOv5 train.py ('Label class {} exceeds nc={} in {}. Possible class labels are "
        "0-{}'), ultralytics 8.x ultralytics/data/utils.py verify_image_label ('Label class {} exceeds dataset "
        "class count {}. Possible class labels are 0-{}'); none is a test dependency",
        "DarknetError: Error: l.outputs == params.inputs, filters= in the [convolutional]-layer doesn't "
        "correspond to classes= or mask= in [yolo]-layer",
    ),
    ExceptionCause(
        "loss-input-rejected",
        "data_config",
        "the loss op rejected the values it was given (TensorFlow checks each op's inputs and raises "
        "InvalidArgumentError): the targets the data and the configuration provide do not fit the model's "
        "output (an empty or too long label sequence for a CTC loss, a class count that differs between the "
        "model and the targets)",
        ("InvalidArgumentError",),
        None,
        "loss",
        "TensorFlow tensorflow/python/framework/errors_impl.py (InvalidArgumentError, 'Raised when an operation "
        "receives an invalid argument'), raised by the OP_REQUIRES checks of the op's kernel: "
        "tensorflow/core/kernels/ctc_loss_op.cc ('Labels length is zero in batch {}'), the broadcast check of "
        "the element-wise ops a loss is built from (tensorflow/core/util/bcast.h, cwise_ops_common.cc: "
        "'Incompatible shapes: {} vs. {}'); the op is the graph node printed after the message "
        "(``[[Node: CTCLoss = ...]]``)",
        "tensorflow.python.framework.errors_impl.InvalidArgumentError: Labels length is zero in batch 27",
    ),
    ExceptionCause(
        "ml-library-data-check",
        "data_config",
        "the learning library's own check rejected the data: labels outside the classes the objective was set "
        "up for, a training or evaluation set with one class only (a ranking metric such as AUC is undefined "
        "on it), missing or infinite values the estimator does not accept, a continuous target given to a "
        "classifier",
        (),
        _rx(
            r"only contains pos or neg samples|contains only positive or negative samples|"
            r"label must be (?:discrete values )?in (?:the range of )?\[0, ?num_class\)|"
            r"label must be in [\[(]0, ?1[\])] for logistic|Label contains NaN, infinity|"
            r"label must be (?:non-negative|positive|greater than -1) for|"
            r"Label must be in \[0, ?\d+\), but found|\bContains only one class\b|"
            r"Number of classes should be specified and greater than 1|"
            r"needs samples of at least 2 classes in the data|Only one class (?:is )?present in y_true|"
            r"Input (?:X |y )?contains (?:NaN|infinity)|Unknown label type"
        ),
        "",
        "xgboost 3.2.0 libxgboost.so (message strings of the compiled library; the file as its messages name "
        "it): src/metric/auc.cc ('Dataset is empty, or contains only positive or negative samples.'; 'AUC: the "
        "dataset only contains pos or neg samples' in xgboost < 1.4), src/objective/multiclass_obj.cu "
        "('SoftmaxMultiClassObj: label must be discrete values in the range of [0, num_class).'), "
        "'MultiClassEvaluation: label must be in [0, num_class)', 'label must be in (0, 1) for logistic "
        "regression', 'label must be non-negative for Poisson/Tweedie regression.', 'Label contains NaN, "
        "infinity or a value too large.'; lightgbm 4.7.0 lib_lightgbm.so (strings, printed by Log::Fatal as "
        "'[LightGBM] [Fatal] ...' and raised as LightGBMError): 'Label must be in [0, %d), but found %d in "
        "label', 'Contains only one class', 'Number of classes should be specified and greater than 1 for "
        "multiclass training'; scikit-learn 1.9.1 sklearn/linear_model/_logistic.py and sklearn/svm/_base.py "
        "('This solver needs samples of at least 2 classes in the data'), sklearn/metrics/_ranking.py ('Only one "
        "class is present in y_true'), sklearn/utils/validation.py _assert_all_finite_element_wise ('Input "
        "{}contains {}.'), sklearn/utils/multiclass.py check_classification_targets ('Unknown label type: {}')",
        "xgboost.core.XGBoostError: [20:13:15] /__w/xgboost/xgboost/src/objective/multiclass_obj.cu:64: Check "
        "failed: valid: SoftmaxMultiClassObj: label must be discrete values in the range of [0, num_class).",
    ),
    ExceptionCause(
        "model-name-not-found",
        "data_config",
        "the run's configuration names a model that is neither a local folder nor a repository id (a typo in "
        "the model name or path): the setting is wrong, not the network or the machine",
        (),
        _rx(
            r"Repo id must be in the form 'repo_name' or 'namespace/repo_name'|"
            r"is not a local folder and is not a valid model identifier"
        ),
        "",
        "huggingface_hub 2.4.0 huggingface_hub/utils/_validators.py validate_repo_id (HFValidationError 'Repo id "
        "must be in the form 'repo_name' or 'namespace/repo_name': '{}'', re-raised as OSError by transformers "
        "5.25.0 transformers/utils/hub.py cached_files); transformers 5.25.0 transformers/utils/hub.py "
        "cached_files ('{} is not a local folder and is not a valid model identifier listed on "
        "'https://huggingface.co/models'', from a RepositoryNotFoundError)",
        "OSError: Repo id must be in the form 'repo_name' or 'namespace/repo_name': '/tmp/nu10/tinybrt'. Use "
        "`repo_type` argument if needed.",
    ),
    ExceptionCause(
        "corrupt-data-file",
        "data_config",
        "a data file does not parse (truncated HDF5, not a Parquet/Arrow file, malformed CSV/JSON rows, a "
        "truncated compressed file)",
        (),
        _rx(
            r"Unable to (?:synchronously )?open file \((?:truncated file|file signature not found|bad object header)|"
            r"Parquet magic bytes not found|Not an Arrow file|JSON parse error|Error tokenizing data|"
            r"No columns to parse from file|Compressed file ended before the end-of-stream marker"
        ),
        "",
        "h5py 3.16.0 h5py/_objects.pyx (HDF5 H5F open error text), pyarrow 25.0.1 (parquet, ipc, json readers), "
        "pandas 3.1.1 pandas/_libs/parsers.pyx (ParserError, EmptyDataError), CPython Lib/_compression.py "
        "DecompressReader.read (EOFError)",
        "pandas.errors.ParserError: Error tokenizing data. C error: Expected 2 fields in line 3, saw 3",
    ),
    ExceptionCause(
        "hf-datasets-error",
        "data_config",
        "Hugging Face datasets could not build, cast or find the data (files, splits or features do not match)",
        (
            "DatasetGenerationError",
            "DatasetGenerationCastError",
            "DataFilesNotFoundError",
            "DatasetNotFoundError",
            "NonMatchingSplitsSizesError",
            "ExpectedMoreSplitsError",
            "UnexpectedSplitsError",
            "ExpectedMoreSplits",
            "UnexpectedSplits",
            "NonMatchingChecksumError",
            "CastError",
            "EmptyDatasetError",
            "FileFormatError",
        ),
        None,
        "",
        "datasets (huggingface/datasets main, read 2026-12-06; not a test dependency) src/datasets/exceptions.py "
        "(DatasetGenerationError, DatasetGenerationCastError 'An error occurred while generating the dataset', "
        "FileFormatError, DataFilesNotFoundError, DatasetNotFoundError, NonMatchingSplitsSizesError, "
        "ExpectedMoreSplitsError, UnexpectedSplitsError, NonMatchingChecksumError; the *Splits names without "
        "'Error' are the datasets 2.x names), src/datasets/table.py (CastError), src/datasets/data_files.py "
        "(EmptyDatasetError, a FileNotFoundError)",
        "datasets.exceptions.DatasetGenerationError: An error occurred while generating the dataset",
    ),
    ExceptionCause(
        "unknown-split",
        "data_config",
        "the configuration asks the dataset library for a split the data set does not have (a 'val' or "
        "'validation' split of a data set built with 'train' only, a misspelt split name)",
        (),
        _rx(r"""Unknown split ['"][^'"\n]{0,200}['"]\. Should be one of"""),
        "",
        "tensorflow_datasets tensorflow_datasets/core/splits.py _rel_to_abs_instr ('Unknown split {!r}. Should "
        "be one of {}.'), Hugging Face datasets src/datasets/arrow_reader.py _rel_to_abs_instr ('Unknown split "
        '"{}". Should be one of {}.\'); neither is a test dependency',
        "ValueError: Unknown split 'val'. Should be one of ['train'].",
    ),
    ExceptionCause(
        "dataset-code-data-error",
        "data_config",
        "the dataset's own code did not find a key, file or record it expected in the data (annotations, paths "
        "or fields that do not match the code's configuration)",
        (
            "KeyError",
            "FileNotFoundError",
            "UnicodeDecodeError",
            "JSONDecodeError",
            "ParserError",
            "ArrowInvalid",
            "EOFError",
        ),
        None,
        "data",
        "CPython builtins (KeyError, FileNotFoundError, UnicodeDecodeError), json.decoder.JSONDecodeError, "
        "raised in a dataset's __getitem__/loader frame; torch 2.13.0 torch/_utils.py ExceptionWrapper.reraise "
        "re-raises a worker's error as 'Caught {} in DataLoader worker process {}'",
        "KeyError: 'segmentation'",
    ),
    ExceptionCause(
        "record-does-not-parse",
        "data_config",
        "a record of the data does not convert to the number the dataset's code reads it as (a placeholder "
        "such as 'n/a' or an empty field where a number belongs)",
        ("ValueError",),
        _rx(
            r"could not convert string (?:'[^']*' )?to (?:float|int|complex)|"
            r"invalid literal for int\(\) with base \d+: "
        ),
        "data",
        "CPython 3.11 Objects/floatobject.c PyFloat_FromString ('could not convert string to float: {!r}'), "
        "Objects/longobject.c PyLong_FromString ('invalid literal for int() with base {}: {!r}'); numpy 2.4.6 "
        "numpy/lib/_npyio_impl.py loadtxt ('could not convert string {!r} to float64 at row {}, column {}'); "
        "raised in a dataset's __getitem__/loader frame (torch's DataLoader re-raises a worker's error as "
        "'Caught ValueError in DataLoader worker process {}' and prints the worker's traceback after it)",
        "ValueError: could not convert string to float: 'n/a'",
    ),
    ExceptionCause(
        "path-setting-unset",
        "data_config",
        "a path the run opens is None: the configuration or the command line leaves a path setting unset "
        "(null, or an argument with no default that was not given), and the code hands it to open() or a path "
        "function",
        ("TypeError",),
        _rx(
            r"(?:expected str, bytes or os\.PathLike object|path should be string, bytes, os\.PathLike or "
            r"integer|argument must be str, bytes, or os\.PathLike object), not '?NoneType\b"
        ),
        "",
        "CPython 3.11 Modules/posixmodule.c path_converter / PyOS_FSPath ('expected str, bytes or os.PathLike "
        "object, not {}', raised by open(), os.fspath, pathlib.Path; '{}: path should be string, bytes, "
        "os.PathLike or integer, not {}' from os.stat), Lib/genericpath.py _check_arg_types ('{}() argument must "
        "be str, bytes, or os.PathLike object, not {!r}' from os.path.join) given None",
        "TypeError: expected str, bytes or os.PathLike object, not NoneType",
    ),
    ExceptionCause(
        "constructor-argument-not-taken",
        "data_config",
        "the configuration passes a class an argument its constructor, as installed, does not take (an "
        "option a library version renamed or removed, or a configuration key the target class has no "
        "parameter for): the script or configuration must follow the installed API",
        ("TypeError", "InstantiationException"),
        _rx(r"(?:^|[\s.(\"'])__init__\(\) got an unexpected keyword argument '"),
        "",
        "CPython 3.11 Python/ceval.c positional_only_passed_as_keyword / Objects/call.c ('{}() got an unexpected "
        "keyword argument {!r}', the callee's qualified name, '__init__' for a constructor: "
        "'TrainingArguments.__init__()' from Python 3.10 on, '__init__()' before); hydra 1.3 "
        "hydra/_internal/instantiate/_instantiate2.py _call_target wraps it as InstantiationException('Error "
        "in call to target ...: TypeError(...)')",
        "TypeError: TrainingArguments.__init__() got an unexpected keyword argument 'evaluation_strategy'",
    ),
    ExceptionCause(
        "setting-value-rejected",
        "data_config",
        "a library's own check of its arguments rejected a value the configuration passes: a name it does not "
        "know (an optimizer, loss, activation or objective misspelt, an option outside its choices) or a value out of its "
        "range (a negative learning rate)",
        (),
        _rx(
            r"Could not interpret [\w ]{1,40} identifier|"
            r"The '\w+' parameter of \w+ must be .{1,500}\bGot .{1,200} instead|"
            r"is not a valid \w+, please select one of|"
            r"\bUnknown (?:objective function|metric function|gbm type|objective type name|boosting type)\b|"
            r"^Invalid (?:learning rate|epsilon value|beta parameter at index \d|weight_decay value|"
            r"momentum value|dampening value|rho value|lr_decay value)\b"
        ),
        "",
        "keras 3.15.1 keras/src/optimizers/__init__.py get, keras/src/losses/__init__.py get, "
        "keras/src/activations/__init__.py get ('Could not interpret {kind} identifier: {identifier}'); "
        "scikit-learn 1.9.1 sklearn/utils/_param_validation.py validate_parameter_constraints (InvalidParameterError "
        "'The {name!r} parameter of {caller} must be {constraints}. Got {value!r} instead.'); transformers 5.25 "
        "transformers/utils/generic.py ExplicitEnum._missing_ ('{value} is not a valid {cls}, please select one "
        "of [...]', TrainingArguments' strategies); torch 2.13 torch/optim/adam.py, sgd.py, ... __init__ "
        "('Invalid learning rate: {lr}'); xgboost 3.2.0 src/objective/objective.cc ObjFunction::Create "
        "('Unknown objective function: `{name}`'), src/metric/metric.cc ('Unknown metric function {name}'), "
        "src/gbm/gbm.cc ('Unknown gbm type {name}'); lightgbm 4.7.0 src/objective/objective_function.cpp, "
        "src/boosting/boosting.cpp ('Unknown objective type name: {name}', 'Unknown boosting type {name}')",
        "ValueError: Could not interpret optimizer identifier: adamm",
    ),
    ExceptionCause(
        "setting-value-type",
        "data_config",
        "a library compared or computed with a value the configuration passes as text where a number belongs "
        "(YAML 1.1 reads '1e-3' without a dot as a string; a command-line value never converted)",
        ("TypeError",),
        _rx(
            r"not supported between instances of '(?:float|int)' and 'str'|"
            r"not supported between instances of 'str' and '(?:float|int)'|"
            r"unsupported operand type\(s\) for [^:]{1,3}: '(?:float|int)' and 'str'|"
            r"unsupported operand type\(s\) for [^:]{1,3}: 'str' and '(?:float|int)'|"
            r"must be real number, not str"
        ),
        "library",
        "CPython 3.11 Objects/object.c do_richcompare (\"'{op}' not supported between instances of {!r} and "
        "{!r}\"), Objects/abstract.c binop_type_error ('unsupported operand type(s) for {op}: {!r} and {!r}'), "
        "raised in an installed package's frame (torch 2.13 torch/optim/adam.py Adam.__init__ 'if not 0.0 <= "
        "lr'); PyYAML 6.0.4 resolves '1e-3' as a string (its float pattern needs a dot)",
        "TypeError: '<=' not supported between instances of 'float' and 'str'",
    ),
    ExceptionCause(
        "empty-dataset",
        "data_config",
        "the data set the loader or the estimator was given is empty, or too small for the split or batches "
        "the configuration asks of it (a wrong data path, a filter that kept nothing, a split with no samples, "
        "a held-out size larger than the data)",
        (),
        _rx(
            r"num_samples should be a positive integer value, but got num_samples=0|"
            r"Found array with 0 (?:sample|feature)\(s\)|the resulting train set will be empty|"
            r"should be either positive and smaller than the number of samples|"
            r"Unexpected result of `\w+_function` \(Empty logs\)|"
            r"\bNo (?:images|labels|samples|data files|valid images|valid labels) (?:were )?found\b|"
            r"Can ?not train without labels"
        ),
        "",
        "torch 2.13.0 torch/utils/data/sampler.py RandomSampler.__init__ ('num_samples should be a positive "
        "integer value, but got num_samples={}'); scikit-learn 1.9.1 sklearn/utils/validation.py check_array "
        "('Found array with {} sample(s) (shape={}) while a minimum of {} is required{}.'), "
        "sklearn/model_selection/_split.py _validate_shuffle_split ('With n_samples={}, test_size={} and "
        "train_size={}, the resulting train set will be empty. ...', 'test_size={} should be either positive and "
        "smaller than the number of samples {} or a float in the (0, 1) range'); tf.keras 2.x "
        "keras/engine/training.py Model.fit ('Unexpected result of `train_function` (Empty logs). ...': the "
        "dataset yielded no batch; not a test dependency); YOLOv5 utils/dataloaders.py LoadImagesAndLabels "
        "('{}No images found', '{}No labels found in {}. Can not train without labels.'), ultralytics 8.x "
        "ultralytics/data/base.py get_img_files ('{}No images found in {}'); neither is a test dependency",
        "ValueError: num_samples should be a positive integer value, but got num_samples=0",
    ),
    ExceptionCause(
        "batch-of-one-in-batchnorm",
        "data_config",
        "a batch of one sample reached a batch-norm layer in training (the loader's last, incomplete batch: "
        "the data set's size modulo the batch size is 1; drop_last or another batch size avoids it)",
        (),
        _rx(r"Expected more than 1 value per channel when training, got input size"),
        "",
        "torch 2.13.0 torch/nn/functional.py _verify_batch_size, called by batch_norm in training mode "
        "('Expected more than 1 value per channel when training, got input size {}')",
        "ValueError: Expected more than 1 value per channel when training, got input size torch.Size([1, 512])",
    ),
    ExceptionCause(
        "missing-data-file",
        "data_config",
        "a file or folder the run reads (an image, an annotation, an array or table, audio, video, a data "
        "folder, the configuration, or the checkpoint or pretrained weights it loads) is not where the "
        "configuration says",
        ("FileNotFoundError", "IOError", "OSError"),
        _rx(
            # a quoted path that is a file name or a path (a dot or a separator in it), neither code
            # nor a program: a bare name ('conda', 'nvidia-smi') or a file under a bin/, /usr/, /proc/ ...
            # folder is a program the environment lacks; a .py/.so/.dll is the code or the install
            r"(?:No such file or directory|The system cannot find the (?:path|file) specified):? "
            r"(['\"])(?=[^'\"\n]*[/\\.])(?![^'\"\n]*\.(?:py|pyc|pyx|pyd|so|dll|dylib|exe|sh|bat|cmd)\1)"
            r"(?!(?:/usr|/bin|/sbin|/proc|/dev|/sys|/etc)[/\\]|[^'\"\n]*[/\\]bin[/\\])[^'\"\n]+\1\s*$|"
            r"No such file or directory:? [^'\"\s]*\.(?:jpe?g|png|bmp|tiff?|webp|gif|json|jsonl|csv|tsv|txt|npy|"
            r"npz|h5|hdf5|parquet|arrow|tfrecords?|wav|flac|mp3|mp4|avi|nii|nii\.gz|mat|xml|pth?|ckpt|bin|"
            r"safetensors|pth\.tar|caffemodel|onnx|pkl|pickle|joblib|feather|lmdb|mdb|ya?ml)\s*$"
        ),
        "reads",
        "CPython builtins open() / os.stat / os.listdir ('[Errno 2] No such file or directory: {!r}', glibc ENOENT "
        "text; Windows ERROR_PATH_NOT_FOUND / ERROR_FILE_NOT_FOUND '[WinError 3] The system cannot find the path "
        "specified: {!r}'), raised outside a save or write frame (torch 2.13.0 torch/serialization.py load -> "
        "_open_file_like raises it for a checkpoint path that names no file); subprocess.Popen raises the same "
        "text with a program's name (a bare name or a file under a bin/ folder), which is not a data path",
        "FileNotFoundError: [Errno 2] No such file or directory: 'data/coco/annotations/instances_train2017.json'",
    ),
    ExceptionCause(
        "tf-path-not-found",
        "data_config",
        "a file the configuration names (a data file, a checkpoint to restore) is not where it says: TensorFlow's "
        "file system did not find it",
        ("NotFoundError",),
        _rx(r"; No such file or directory|Failed to find any matching files for"),
        "reads",
        "TensorFlow tensorflow/core/platform/errors.cc IOError (errno ENOENT raised as NotFoundError '{}; No such "
        "file or directory', from the POSIX file system's open/stat in "
        "tensorflow/core/platform/default/posix_file_system.cc), tensorflow/core/util/tensor_slice_reader.cc "
        "TensorSliceReader ('Unsuccessful TensorSliceReader constructor: Failed to find any matching files for "
        "{}', a checkpoint prefix that names no file); not a test dependency",
        "tensorflow.python.framework.errors_impl.NotFoundError: data/train-00000-of-00032.tfrecord; No such "
        "file or directory",
    ),
    ExceptionCause(
        "data-path-does-not-exist",
        "data_config",
        "a data file the run reads (an image, an annotation, an array or table, audio, video) is not where the "
        "configuration or the label list says",
        (),
        _rx(
            r"\S+\.(?:jpe?g|png|bmp|tiff?|webp|gif|json|jsonl|csv|tsv|txt|npy|npz|h5|hdf5|parquet|arrow|tfrecords?|"
            r"wav|flac|mp3|mp4|avi|nii|nii\.gz|mat|xml|pkl|pickle)['\"]? (?:does not exist|doesn't exist|not exists?|"
            r"(?:is |was )?not found|(?:could|can)not be found)\b|"
            r"\b(?:file|path|folder|directory) (?:not found|does not exist|doesn't exist)\W{1,3}['\"]?\S+\.(?:jpe?g|"
            r"png|bmp|tiff?|webp|gif|json|jsonl|csv|tsv|txt|npy|npz|h5|hdf5|parquet|arrow|tfrecords?|wav|flac|mp3|"
            r"mp4|avi|nii|nii\.gz|mat|xml|pkl|pickle)\b|^Couldn't open file: \S"
        ),
        "reads",
        "PaddleOCR ppocr/data/simple_dataset.py SimpleDataSet.__getitem__ and pubtab_dataset.py, PaddleClas-style "
        'dataset readers: raise Exception("{} does not exist!".format(img_path)) before opening the file; a '
        "project's own check before it reads a data file ('CSV file not found: {path}', '{path} not found'); "
        'AlexeyAB/darknet src/utils.c file_error ("Couldn\'t open file: {}", then exit: the data list, the '
        "names file or the weights the .data file and the command line name)",
        "Exception: ./train_data/crop_img/test5_crop_153.jpg does not exist!",
    ),
    ExceptionCause(
        "dataset-not-found",
        "data_config",
        "the detection framework's dataset check found no data where the dataset configuration (data.yaml) "
        "points: a wrong or relative path, a split folder that does not exist",
        (),
        _rx(
            r"\bDataset not found\b|images not found, missing path|Dataset '[^'\n]*' for task=\w+ not found"
        ),
        "",
        "YOLOv5/YOLOv7 utils/general.py check_dataset (prints 'WARNING: Dataset not found, nonexistent paths: "
        "{}' and raises Exception('Dataset not found.')); ultralytics 8.x ultralytics/data/utils.py "
        "check_det_dataset (FileNotFoundError \"Dataset '{}' images not found, missing path '{}'\", re-raised by "
        "the trainer as RuntimeError \"Dataset '{}' error\") and check_cls_dataset (\"Dataset '{}' for "
        'task=classify not found")',
        "Exception: Dataset not found.",
    ),
    ExceptionCause(
        "host-memory",
        "infra_runtime",
        "the host (CPU) memory could not hold an allocation",
        (),
        _rx(
            r"DefaultCPUAllocator: (?:can't allocate memory|not enough memory)|Unable to allocate [\d.]+ [KMGTPE]i?B "
            r"for an array"
        ),
        "",
        "torch 2.13.0 c10/core/impl/alloc_cpu.cpp alloc_cpu ('DefaultCPUAllocator: can't allocate memory: you "
        "tried to allocate {} bytes'; 'not enough memory' in torch < 1.10), numpy 2.4.6 "
        "numpy/_core/src/multiarray (_ArrayMemoryError 'Unable to allocate {} for an array with shape {}')",
        "RuntimeError: [enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate memory: "
        "you tried to allocate 35184372088832 bytes. Error code 12 (Cannot allocate memory)",
    ),
    ExceptionCause(
        "python-memory-error",
        "infra_runtime",
        "Python could not allocate memory from the host (MemoryError): the host's RAM, with its swap or page "
        "file, ran out",
        ("MemoryError",),
        None,
        "",
        "CPython 3.13 Objects/exceptions.c (MemoryError) raised by PyErr_NoMemory in Python/errors.c when an "
        "allocation of the interpreter or of a C extension fails; printed with no message",
        "MemoryError",
    ),
    ExceptionCause(
        "unequal-samples",
        "data_config",
        "the samples of a batch have different shapes (images of different sizes, sequences without padding): "
        "the data pipeline does not resize, crop or pad them to one shape",
        (),
        _rx(
            r"stack expects each tensor to be equal size|expected sequence of length \d+ at dim \d+ \(got \d+\)"
        ),
        "",
        "torch 2.13.0 aten/src/ATen/native/TensorShape.cpp stack ('stack expects each tensor to be equal size, "
        "but got {} at entry {} and {} at entry {}'), raised in torch/utils/data/_utils/collate.py default_collate; "
        "torch/csrc/utils/tensor_new.cpp ('expected sequence of length {} at dim {} (got {})': torch.tensor of "
        "rows of different lengths, as transformers' default_data_collator builds a batch of unpadded sequences)",
        "RuntimeError: stack expects each tensor to be equal size, but got [3, 224, 224] at entry 0 and "
        "[3, 224, 300] at entry 1",
    ),
    ExceptionCause(
        "precision-config",
        "data_config",
        "the precision setting does not fit the model or the hardware (fp16 weights under fp16 mixed precision, "
        "bf16 on a GPU without it)",
        (),
        _rx(
            r"Attempting to unscale FP16 gradients|Your setup doesn't support bf16|"
            r"[Bb]float16 is only supported on GPUs with compute capability"
        ),
        "",
        "torch 2.13.0 torch/amp/grad_scaler.py GradScaler._unscale_grads_ ('Attempting to unscale FP16 "
        "gradients.'), transformers 5.25.0 transformers/training_args.py TrainingArguments.__post_init__ ('Your "
        "setup doesn't support bf16/gpu.')",
        "ValueError: Attempting to unscale FP16 gradients.",
    ),
    ExceptionCause(
        "checkpoint-wrapper-prefix",
        "correctness_bug",
        "the checkpoint holds this model's own parameters, under names that differ from the model's by a "
        "wrapper's prefix only ('module.' of nn.DataParallel / DistributedDataParallel, '_orig_mod.' of "
        "torch.compile): the code saves or loads the wrapped model where it means the model inside it (load "
        "before wrapping, or save and load model.module), not a wrong checkpoint",
        (),
        _rx(r"Missing key\(s\) in state_dict|Unexpected key\(s\) in state_dict"),
        "wrapper-keys",
        "torch 2.13.0 torch/nn/modules/module.py Module.load_state_dict ('Missing key(s) in state_dict: {}. ', "
        "'Unexpected key(s) in state_dict: {}. ', each key quoted), torch/nn/parallel/data_parallel.py and "
        "distributed.py (the wrapped model is the attribute ``module``: its parameters are named "
        "``module.<name>``), torch/_dynamo/eval_frame.py OptimizedModule (``_orig_mod``)",
        "RuntimeError: Error(s) in loading state_dict for DataParallel: Missing key(s) in state_dict: "
        '"module.weight", "module.bias". Unexpected key(s) in state_dict: "weight", "bias". ',
        True,
    ),
    ExceptionCause(
        "checkpoint-model-mismatch",
        "data_config",
        "the checkpoint does not fit the model built from the configuration (missing, unexpected or differently "
        "shaped parameters): the wrong checkpoint or a model setting that differs from the one it was trained with",
        (),
        _rx(
            r"Error\(s\) in loading state_dict for|Missing key\(s\) in state_dict|Unexpected key\(s\) in state_dict|"
            r"size mismatch for [\w.]+: copying a param with shape|\bKey \S+ not found in checkpoint\b|"
            r"A total of \d+ objects could not be loaded"
        ),
        "",
        "torch 2.13.0 torch/nn/modules/module.py Module.load_state_dict ('Error(s) in loading state_dict for {}', "
        "'Missing key(s) in state_dict', 'Unexpected key(s) in state_dict', 'size mismatch for {}: copying a param "
        "with shape {} from checkpoint, the shape in current model is {}.'); keras 3.15.1 "
        "keras/src/saving/saving_lib.py (load_weights of a file whose variables do not fit the model: 'A total of "
        "{} objects could not be loaded. Example error message for object {}: ...'); TensorFlow "
        "tensorflow/core/util/tensor_bundle/tensor_bundle.cc BundleReader::GetBundleEntryProto (NotFoundError "
        "'Key {} not found in checkpoint', raised by tf.train.Saver / tf.train.Checkpoint restore; not a test "
        "dependency)",
        "RuntimeError: Error(s) in loading state_dict for Linear:",
    ),
    ExceptionCause(
        "worker-start-failed",
        "infra_runtime",
        "a worker process died while multiprocessing started it (the parent's state could not be sent: memory, "
        "page file or pipe) or while the pipe to it was read: an environment failure, not the training code",
        (),
        None,
        "mp-start",
        "CPython Lib/multiprocessing/spawn.py _main (reduction.pickle.load(from_parent)), Modules/_pickle.c "
        "('pickle data was truncated', 'Ran out of input')",
        "_pickle.UnpicklingError: pickle data was truncated",
    ),
    ExceptionCause(
        "worker-start-paging",
        "infra_runtime",
        "Windows could not commit memory for a new process (page file too small): host memory",
        (),
        _rx(r"The paging file is too small for this operation to complete|WinError 1455"),
        "",
        "Windows system error 1455 (ERROR_COMMITMENT_LIMIT) text, as CPython's OSError prints it",
        "OSError: [WinError 1455] The paging file is too small for this operation to complete. Error loading "
        '"C:\\Python\\lib\\site-packages\\torch\\lib\\cudnn_cnn_infer64_8.dll" or one of its dependencies.',
    ),
    ExceptionCause(
        "os-resource",
        "infra_runtime",
        "the operating system refused a resource (I/O error, too many open files, no memory, stale or read-only "
        "file system)",
        (),
        _rx(
            r"\[Errno (?:5|12|24|30|116|122)\]|Input/output error|Too many open files|Cannot allocate memory|"
            r"Stale file handle|Read-only file system|Disk quota exceeded|received 0 items of ancdata"
        ),
        "",
        "glibc strerror texts for EIO (5), ENOMEM (12), EMFILE (24), EROFS (30), ESTALE (116), EDQUOT (122), as "
        "CPython's OSError formats them ('[Errno N] text'); CPython Lib/multiprocessing/reduction.py recvfds "
        "('received %d items of ancdata': no file descriptor arrived, the open-file limit torch's file_descriptor "
        "sharing of DataLoader batches reaches)",
        "OSError: [Errno 24] Too many open files",
    ),
    ExceptionCause(
        "killed-by-signal",
        "infra_runtime",
        "a process of the run (a data-loader worker) was ended by a termination signal sent from outside the "
        "training code (a scheduler's SIGTERM, a SIGKILL from the OOM killer or the user, a hang-up): an "
        "interrupt or an infrastructure event, not a code bug",
        (),
        _rx(r"is killed by signal: (?:Terminated|Killed|Hangup|Interrupt)\b"),
        "",
        "torch 2.13.0 torch/csrc/DataLoader.cpp (SIGCHLD handler: 'DataLoader worker (pid {}) is killed by "
        "signal: ' + strsignal(si_status), raised as a RuntimeError in the main process by "
        "torch/utils/data/_utils/signal_handling.py); strsignal() texts of SIGTERM, SIGKILL, SIGHUP, SIGINT "
        "(glibc)",
        "RuntimeError: DataLoader worker (pid 4020404) is killed by signal: Terminated.",
    ),
    ExceptionCause(
        "rendezvous-socket",
        "infra_runtime",
        "the distributed rendezvous could not open or reach its socket (the master port is already taken by "
        "another job or a stale process, or the store's socket failed): the launch environment, not the training "
        "code",
        (),
        _rx(
            r"server socket has failed to (?:listen|bind)|\bEADDRINUSE\b|\[Errno (?:48|98)\] Address already in "
            r"use|\bDistNetworkError\b|The client socket has failed to connect"
        ),
        "",
        "torch 2.13.0 torch/csrc/distributed/c10d/socket.cpp (SocketListenOp: 'The server socket has failed to "
        "listen on any local network address. ... name: EADDRINUSE', SocketConnectOp: 'The client socket has "
        "failed to connect'), raised as torch.distributed.DistNetworkError (a RuntimeError) by TCPStore; glibc "
        "strerror(EADDRINUSE) on Linux (98) and macOS (48) as CPython's OSError formats it",
        "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. "
        "port: 29500, useIpv6: false, code: -98, name: EADDRINUSE, message: address already in use",
    ),
    ExceptionCause(
        "network",
        "infra_runtime",
        "a network call failed (connection refused or reset, name resolution, timeout, no route to the hub or "
        "to the object store a checkpoint or data file is read from or written to)",
        (
            "ConnectionError",
            "ConnectionResetError",
            "ConnectionRefusedError",
            "ConnectionAbortedError",
            "ReadTimeout",
            "ConnectTimeout",
            "ReadTimeoutError",
            "ConnectTimeoutError",
            "MaxRetryError",
            "NewConnectionError",
            "ProtocolError",
            "LocalEntryNotFoundError",
            "gaierror",
            "ClientConnectorError",
            "ServerDisconnectedError",
            "EndpointConnectionError",
            "UnavailableError",
            "DeadlineExceededError",
            "NetworkError",
            "ConnectError",
            "RemoteProtocolError",
            "TimeoutException",
            "RemoteDisconnected",
        ),
        None,
        "",
        "requests 2.x requests/exceptions.py, urllib3 2.x urllib3/exceptions.py, huggingface_hub "
        "huggingface_hub/errors.py (LocalEntryNotFoundError), CPython socket.gaierror and the ConnectionError "
        "subclasses; aiohttp 3.14.5 aiohttp/client_exceptions.py (ClientConnectorError 'Cannot connect to host "
        "{}', ServerDisconnectedError), the HTTP client of fsspec 2026.9.0's http filesystem and of the s3fs / "
        "gcsfs object-store filesystems; botocore botocore/exceptions.py (EndpointConnectionError 'Could not "
        "connect to the endpoint URL: {endpoint_url}'; not a test dependency); TensorFlow "
        "tensorflow/python/framework/errors_impl.py (UnavailableError: the service, a remote file system or "
        "a gRPC peer, could not be reached; DeadlineExceededError: a remote call did not answer in its deadline; "
        "not a test dependency); httpx 0.28 / httpx2 (huggingface_hub 2.4.0's client) httpx/_exceptions.py "
        "(NetworkError, ConnectError, RemoteProtocolError, TimeoutException: the errors huggingface_hub's "
        "http_backoff retries on and prints as \"'{err}' thrown while requesting {method} {url}\"); CPython "
        "Lib/http/client.py RemoteDisconnected ('Remote end closed connection without response')",
        "requests.exceptions.ConnectionError: HTTPSConnectionPool(host='huggingface.co', port=443): Max retries "
        "exceeded with url: /bert-base-uncased/resolve/main/config.json",
    ),
    ExceptionCause(
        "network-message",
        "infra_runtime",
        "a network call failed (the hub, a server or the object store a checkpoint or data file is read from or "
        "written to could not be reached): the network or the remote store, not the training code",
        (),
        _rx(
            r"We couldn't connect to '?https?://|Max retries exceeded with url|Temporary failure in name "
            r"resolution|Name or service not known|Network is unreachable|Connection reset by peer|"
            r"Unable to connect to endpoint|Could not connect to the endpoint URL|Cannot connect to host|"
            r"Failed to establish a new connection|CERTIFICATE_VERIFY_FAILED"
        ),
        "",
        "transformers 5.25.0 transformers/utils/hub.py cached_files ('We couldn't connect to ...'), urllib3 "
        "connectionpool.py ('Max retries exceeded with url'), urllib3 2.8.0 urllib3/connection.py "
        "HTTPConnection._new_conn (NewConnectionError 'Failed to establish a new connection: {}'), aiohttp "
        "3.14.5 aiohttp/client_exceptions.py ClientConnectorError ('Cannot connect to host {}'), glibc "
        "gai_strerror / strerror texts; a remote store's client wrapped in another class: aws-sdk-cpp "
        "aws-cpp-sdk-core AWSClient (CoreErrors::NETWORK_CONNECTION 'Unable to connect to endpoint', which "
        "TensorFlow's S3 file system, tensorflow/core/platform/s3/s3_file_system.cc, raises as "
        "InternalError(': Unable to connect to endpoint') when a checkpoint is written to or read from S3 or "
        "an S3-compatible store), botocore botocore/exceptions.py EndpointConnectionError ('Could not connect "
        "to the endpoint URL: {}'); CPython Modules/_ssl.c ('[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify "
        "failed: ...': the machine's certificate store or a proxy that intercepts TLS)",
        "OSError: We couldn't connect to 'https://huggingface.co' to load the files, and couldn't find them in the "
        "cached files.",
    ),
    ExceptionCause(
        "server-refused",
        "infra_runtime",
        "the server the run downloads from or reports to refused the request: a rate limit (429), a server "
        "error (5xx), or access to a gated or private repository denied to the job's token (401, 403): the "
        "service or the job's credentials, not the training code",
        (),
        _rx(
            r"\b429 (?:Client Error|Too Many Requests)\b|'429 Too Many Requests'|\b5\d\d Server Error\b|"
            r"Server error '5\d\d\b|\b40[13] Client Error\b|Client error '40[13] |Cannot access gated repo|"
            r"HTTP Error (?:429|5\d\d) thrown while requesting"
        ),
        "",
        "requests 2.34.2 requests/models.py Response.raise_for_status ('{} Client Error: {} for url: {}', '{} "
        "Server Error: {} for url: {}'), httpx2 (huggingface_hub 2.4.0's client) Response.raise_for_status "
        "(\"Client error '429 Too Many Requests' for url ...\", \"Server error '503 Service Unavailable' ...\"), "
        "huggingface_hub 2.4.0 huggingface_hub/utils/_http.py hf_raise_for_status (HfHubHTTPError '429 Too Many "
        "Requests for url: {}', GatedRepoError '401 Client Error. ... Cannot access gated repo for url {}'), "
        "huggingface_hub/utils/_http.py _http_backoff_base ('HTTP Error {} thrown while requesting {} {}', "
        "the status it retries on: 429 and 5xx)",
        "requests.exceptions.HTTPError: 503 Server Error: Service Unavailable for url: "
        "https://huggingface.co/api/datasets/glue",
    ),
    ExceptionCause(
        "tracker-credentials",
        "infra_runtime",
        "the experiment tracker refused the job's credentials (a missing, expired or wrong API key): the "
        "environment the job runs in, not the training code",
        ("AuthenticationError",),
        None,
        "",
        "wandb 0.31.0 wandb/errors/errors.py (class AuthenticationError(CommError)), raised by "
        "wandb/sdk/wandb_login.py _verify_login ('An error occurred while verifying credentials with ...') and "
        "wandb/sdk/lib/wbauth (an invalid API key)",
        "wandb.errors.errors.AuthenticationError: An error occurred while verifying credentials with "
        "https://api.wandb.ai: connection refused",
    ),
    ExceptionCause(
        "ray-process-lost",
        "infra_runtime",
        "a Ray actor, worker or raylet process of the run died or became unreachable while it held work (killed "
        "by the OOM killer or a signal, its node lost or preempted, its socket closed): the cluster runtime lost "
        "the process, the training code did not raise; an actor that failed in its own constructor is not this "
        "(Ray says 'died because of an error raised in its creation task' and prints the user's exception)",
        (),
        _rx(
            r"The actor died unexpectedly before finishing this task|The actor (?:[0-9a-f]+|None) is unavailable: |"
            r"The worker died unexpectedly while executing this task|The task's local raylet died"
        ),
        "",
        "ray 2.60.0 ray/exceptions.py: ActorDiedError.BASE_ERROR_MSG ('The actor died unexpectedly before finishing "
        "this task.', system-level deaths from an ActorDiedErrorContext; a death in __init__ reads 'The actor died "
        "because of an error raised in its creation task'), ActorUnavailableError ('The actor {} is unavailable: {}. "
        "The task may or may not have been executed on the actor.'), WorkerCrashedError.__str__ ('The worker died "
        "unexpectedly while executing this task.'), LocalRayletDiedError.__str__ ('The task's local raylet died.')",
        "ray.exceptions.ActorUnavailableError: The actor d5a12869ca846683c2e9884001000000 is unavailable: The actor "
        "is temporarily unavailable: RpcError: RPC error: Socket closed rpc_code: 14. The task may or may not have "
        "been executed on the actor.",
    ),
    ExceptionCause(
        "environment",
        "infra_runtime",
        "the installed driver, CUDA build or a binary library does not fit the machine or the other packages",
        (),
        _rx(
            r"CUDA driver version is insufficient|no kernel image is available for execution on the device|"
            r"Found no NVIDIA driver|Torch not compiled with CUDA enabled|cannot open shared object file|"
            r"undefined symbol: |version `GLIBC\w*_[\d.]+' not found|CUDA driver initialization failed|"
            r"NVIDIA driver on your system is too old|is not compatible with the current PyTorch installation|"
            r"CUDNN_STATUS_NOT_INITIALIZED|CUBLAS_STATUS_NOT_INITIALIZED|"
            r"numpy\.(?:_?core)\.multiarray failed to import|module compiled against ABI version|"
            r"module was compiled against NumPy C-API version|compiled using NumPy 1\.x cannot be run in|"
            r"is required for a normal functioning of this module, but found|"
            r"The detected CUDA version \([\d.]+\) mismatches the version that was used to compile|"
            r"is not implemented for CUDA below version|"
            r"the provided PTX was compiled with an unsupported toolchain|no CUDA-capable device is detected|"
            r"CUDA-capable device\(s\) is/are busy or unavailable|CUDA error: invalid device function|"
            # the CUDA runtime's and driver's texts of an install, driver or device that does not fit
            r"system has unsupported display driver / cuda driver combination|"
            r"forward compatibility was attempted on non supported HW|CUDA driver is a stub library|"
            r"PTX JIT compiler library not found|device kernel image is invalid|"
            r"CUDA error: (?:unknown error|invalid device ordinal|system not yet initialized|the launch timed out "
            r"and was terminated|peer access is not supported between these two devices)|"
            r"Unexpected error from cudaGetDeviceCount|Failed to initialize NVML|"
            r"couldn't communicate with the NVIDIA driver|"
            r"Attempting to deserialize object on (?:a )?CUDA device|"
            # cuDNN's and cuBLAS's statuses of a library that cannot run on this install or device
            r"CUDNN_STATUS_(?:ARCH_MISMATCH|VERSION_MISMATCH|RUNTIME_PREREQUISITE_MISSING|LICENSE_ERROR|"
            r"MAPPING_ERROR|EXECUTION_FAILED|INTERNAL_ERROR)|"
            r"CUBLAS_STATUS_(?:ARCH_MISMATCH|INTERNAL_ERROR|NOT_SUPPORTED|LICENSE_ERROR)|"
            # a binary package built against another version of what it links to
            r"size changed, may indicate binary incompatibility|module compiled against API version|"
            r"DLL load failed while importing|Error loading \"[^\"\n]+\.dll\" or one of its dependencies"
        ),
        "",
        "torch 2.13.0 torch/cuda/__init__.py _lazy_init ('Torch not compiled with CUDA enabled', 'Found no NVIDIA "
        "driver', 'The NVIDIA driver on your system is too old'), c10/cuda/CUDAException (cudaGetErrorString: 'no "
        "kernel image ...', 'CUDA driver version is insufficient ...'; the CUDA runtime's cudaGetErrorString texts "
        "of cudaErrorUnsupportedPtxVersion 'the provided PTX was compiled with an unsupported toolchain.', "
        "cudaErrorNoDevice 'no CUDA-capable device is detected', cudaErrorDevicesUnavailable 'CUDA-capable "
        "device(s) is/are busy or unavailable', cudaErrorInvalidDeviceFunction 'invalid device function'), "
        "the CUDA runtime API's cudaGetErrorString texts (driver_types.h cudaError: cudaErrorSystemDriverMismatch "
        "'system has unsupported display driver / cuda driver combination', cudaErrorCompatNotSupportedOnDevice "
        "'forward compatibility was attempted on non supported HW', cudaErrorStubLibrary 'CUDA driver is a stub "
        "library', cudaErrorJitCompilerNotFound 'PTX JIT compiler library not found', cudaErrorInvalidKernelImage "
        "'device kernel image is invalid', cudaErrorUnknown 'unknown error', cudaErrorInvalidDevice 'invalid "
        "device ordinal', cudaErrorSystemNotReady 'system not yet initialized', cudaErrorLaunchTimeout 'the launch "
        "timed out and was terminated', cudaErrorPeerAccessUnsupported 'peer access is not supported between "
        "these two devices') as torch prints them ('CUDA error: {}'); torch 2.13.0 torch/cuda/__init__.py "
        "('Unexpected error from cudaGetDeviceCount(). ...'), torch/serialization.py validate_cuda_device "
        "('Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. If you are "
        "running on a CPU-only machine, ...'); NVML's 'Failed to initialize NVML: Driver/library version "
        "mismatch' and nvidia-smi's 'NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA "
        "driver'; cuDNN's cudnnStatus_t names (cudnnGetErrorString) of a library that does not fit the install "
        "or the device (ARCH_MISMATCH, VERSION_MISMATCH, RUNTIME_PREREQUISITE_MISSING, LICENSE_ERROR, "
        "MAPPING_ERROR, EXECUTION_FAILED, INTERNAL_ERROR; BAD_PARAM and NOT_SUPPORTED name the call's own "
        "arguments and are not read) and cuBLAS's cublasStatus_t (ARCH_MISMATCH, INTERNAL_ERROR, NOT_SUPPORTED, "
        "LICENSE_ERROR; INVALID_VALUE and EXECUTION_FAILED are not read: an index or shape of the call), as "
        "torch prints them ('cuDNN error: CUDNN_STATUS_...', 'CUDA error: CUBLAS_STATUS_... when calling ...'); "
        "Cython's generated __Pyx_ImportType ('{}.{} size changed, may indicate binary incompatibility. Expected "
        "{} from C header, got {} from PyObject': a compiled package built against another numpy); numpy 1.x "
        "'module compiled against API version {} but this version of numpy is {}'; CPython 3.11 "
        "Python/dynload_win.c ('DLL load failed while importing {}: {}'), torch 2.13.0 torch/__init__.py "
        "_load_dll_libraries on Windows ('Error loading \"{}\" or one of its dependencies.'); "
        "glibc ld.so dlerror texts; a package "
        "built against another version: numpy 2.4.6 numpy/_core/include/numpy/__multiarray_api.h _import_array / "
        "import_array ('module compiled against ABI version {} but this version of numpy is {}', 'module was "
        "compiled against NumPy C-API version', 'numpy._core.multiarray failed to import'; numpy 1.x: "
        "'numpy.core.multiarray'), numpy/core/_multiarray_umath.py ('A module that was compiled using NumPy 1.x "
        "cannot be run in NumPy {}'), transformers 5.25.0 transformers/utils/versions.py _compare_versions ('{} is "
        "required for a normal functioning of this module, but found {}=={}.'), torch 2.13.0 "
        "torch/utils/cpp_extension.py CUDA_MISMATCH_MESSAGE ('The detected CUDA version ({}) mismatches the "
        "version that was used to compile PyTorch ({}).'); XLA (jaxlib's GPU backend) "
        "xla/stream_executor/cuda/cuda_command_buffer.cc CudaCommandBuffer::Trace (UnimplementedError "
        "'StreamBeginCaptureToGraph is not implemented for CUDA below version 12.3. Therefore tracing is not "
        "supported.': a driver older than the feature needs)",
        "AssertionError: Torch not compiled with CUDA enabled",
    ),
    ExceptionCause(
        "installed-package-mismatch",
        "infra_runtime",
        "an installed package is not the version the code was written for (the name the code imports is not in "
        "the installed package) or a dependency the code needs is not installed: the environment, not the "
        "training code; pin the versions the project was run with",
        ("ImportError", "ModuleNotFoundError"),
        _rx(
            r"cannot import name '[^'\n]+' from '[\w.]+' \([^)\n]*[/\\](?:site|dist)-packages[/\\][^)\n]*\)|"
            r"requires the [\w.-]+(?: and [\w.-]+)? librar(?:y|ies) but (?:it was|they were) not found in your "
            r"environment|Missing optional dependency '[^'\n]+'|`Import [\w.]+` failed\b|"
            r"Requirement '[^'\n]+' not met\. HINT: Try running `pip install"
        ),
        "",
        "CPython 3.11 Python/ceval.c import_from ('cannot import name {!r} from {!r} ({})', the module's file: an "
        "installed package's under site-packages or dist-packages, a project's own module elsewhere), "
        "transformers 5.25.0 transformers/utils/import_utils.py requires_backends ('{0} requires the {1} library "
        "but it was not found in your environment.'), pandas 3.1.1 pandas/compat/_optional.py "
        "import_optional_dependency ('`Import {}` failed. ...'; 'Missing optional dependency {!r}.' in pandas "
        "< 3), lightning_utilities 0.15.3 lightning_utilities/core/imports.py RequirementCache (raised by "
        "Lightning's loggers and strategies: 'Requirement {!r} not met. HINT: Try running `pip install -U {!r}`')",
        "ImportError: cannot import name 'cached_download' from 'huggingface_hub' "
        "(/opt/conda/lib/python3.10/site-packages/huggingface_hub/__init__.py)",
    ),
    ExceptionCause(
        "library-attribute-missing",
        "infra_runtime",
        "an installed package lacks a name the code uses (an alias removed in a later release, a function added "
        "in a later one): the code was written for another version of that package; pin the version the "
        "project was run with",
        ("AttributeError", "ImportError"),
        _rx(
            r"module '?[\w.]+'? has no attribute '?\w+|was removed in the [\w-]+ [\d.]+ release|"
            r"`np\.\w+` was a deprecated alias"
        ),
        "library-module",
        'CPython 3.11 Objects/moduleobject.c module_getattro ("module {!r} has no attribute {!r}"), read when '
        "the module is an installed package's (a frame of the traceback is a file of that package under "
        "site-packages or dist-packages) or the package's own text says the name went away in a release: numpy "
        "2.4.6 numpy/__init__.py __getattr__ ('`np.{}` was removed in the NumPy 2.0 release. {}', and for the "
        "builtin aliases \"module 'numpy' has no attribute 'float'.\\n`np.float` was a deprecated alias for the "
        'builtin `float`. ..."), torch 2.13.0 torch/__init__.py __getattr__ (the same text), transformers 5.25.0 '
        "transformers/utils/import_utils.py _LazyModule.__getattr__ ('module {} has no attribute {}'): these "
        "packages raise it from their own file. A module of the project (no installed frame of it) is not this row: its missing "
        "name is the project's own code",
        "AttributeError: module 'numpy' has no attribute 'float'.\n`np.float` was a deprecated alias for the "
        "builtin `float`.",
    ),
    ExceptionCause(
        "library-version-or-dependency",
        "infra_runtime",
        "the installed library says what the environment lacks: a release too old for the checkpoint's model "
        "or tokenizer, or a package it needs that is not installed (its message names the install as the fix)",
        (),
        _rx(
            r"Transformers does not recognize this architecture|"
            r"Tokenizer class \w+ (?:does not exist or )?is not currently imported|"
            r"You need to have [\w.-]+(?: or [\w.-]+)? installed\b|"
            r"(?:^|[\s(:;`'\"])(?:pip|conda) install\b|\b(?:is|are) not installed\b"
        ),
        "",
        "transformers 5.25.0 transformers/models/auto/configuration_auto.py AutoConfig.from_pretrained ('The "
        "checkpoint you are trying to load has model type `{}` but Transformers does not recognize this "
        "architecture. ... your version of Transformers is out of date.'), "
        "transformers/models/auto/tokenization_auto.py ('Tokenizer class {} is not currently imported.'; 'does "
        "not exist or is not currently imported' in transformers 4.x), "
        "transformers/tokenization_utils_fast.py ('... You need to have sentencepiece or tiktoken installed to "
        "convert a slow tokenizer to a fast one.'); a library's message that names `pip install` / `conda "
        "install` or says a package is not installed (transformers' and accelerate's backend checks, "
        "bitsandbytes, flash-attn)",
        "ValueError: The checkpoint you are trying to load has model type `qwen3` but Transformers does not "
        "recognize this architecture.",
    ),
    ExceptionCause(
        "distribution-not-installed",
        "infra_runtime",
        "the code (or a library's version check) asked for the installed metadata of a package that is not "
        "installed: the environment lacks a package the configuration needs, not the training code",
        ("PackageNotFoundError",),
        None,
        "",
        "CPython 3.11 Lib/importlib/metadata/__init__.py (importlib.metadata.version / distribution / metadata "
        "of a distribution that is not installed: PackageNotFoundError, whose __str__ is 'No package metadata "
        "was found for {name}'; the backport importlib_metadata raises the same)",
        "importlib.metadata.PackageNotFoundError: No package metadata was found for bitsandbytes",
    ),
    ExceptionCause(
        "dependency-not-installed",
        "infra_runtime",
        "an installed package imports a module that is not installed (a backend or an optional dependency it "
        "needs): the environment lacks a package, not the training code",
        ("ModuleNotFoundError",),
        None,
        "installed",
        "CPython 3.11 Lib/importlib/_bootstrap.py _find_and_load_unlocked (ModuleNotFoundError 'No module named "
        "{!r}'), raised at an import statement of an installed package's module body (the innermost frame is "
        "'<module>' of a file under site-packages or dist-packages; keras 3.15.1 importing its TensorFlow backend "
        "without TensorFlow; or a function of such a file whose printed source line imports the missing module: "
        "keras 3.15.1 keras/src/callbacks/tensorboard.py summary, 'import tensorflow.summary as summary'; a name a configuration gives importlib or hydra's _locate is not this: its innermost "
        "frame is importlib's or the locator's function); "
        "lightning_utilities 0.15.3 lightning_utilities/core/imports.py RequirementCache ('Requirement {!r} "
        "not met. HINT: Try running `pip install -U {!r}`', row installed-package-mismatch). An import in the "
        "project's own file (a module of the project not on the path) is not this row",
        "ModuleNotFoundError: No module named 'tensorflow'",
    ),
    ExceptionCause(
        "model-id-or-path",
        "data_config",
        "the configured model name or path does not hold a model (a wrong id, a local folder missing files)",
        (),
        _rx(
            r"Can't load (?:tokenizer|config|the configuration|the model|feature extractor|image processor|"
            r"processor) (?:for|of)|"
            r"does not appear to have (?:a )?files? named|is not a local folder and is not a valid model "
            r"identifier|Incorrect path_or_model_id|Unrecognized model in .*Should have a .model_type. key"
        ),
        "",
        "transformers 5.25.0 transformers/utils/hub.py cached_files ('does not appear to have a file named', 'is "
        "not a local folder and is not a valid model identifier'), transformers/configuration_utils.py "
        "_get_config_dict ('Can't load the configuration of'), transformers/tokenization_utils_base.py "
        "from_pretrained ('Can't load tokenizer for')",
        "OSError: Can't load tokenizer for 'bert-bse-uncased'. If you were trying to load it from "
        "'https://huggingface.co/models', make sure you don't have a local directory with the same name.",
    ),
)

_BY_ID = {c.id: c for c in CAUSES}

#: A key list of torch's load_state_dict message: ``Missing key(s) in state_dict: "a.b", "c". `` (the colon
#: is sometimes lost in a paste).
_KEY_LIST = re.compile(
    r"(Missing|Unexpected) key\(s\) in state_dict:?\s*((?:\"[^\"\n]{1,300}\"(?:,\s*)?)+)"
)
_QUOTED_KEY = re.compile(r'"([^"\n]{1,300})"')


def state_dict_keys(text: str) -> tuple[list[str], list[str]]:
    """``(missing, unexpected)``: the parameter names torch's ``load_state_dict`` error lists in ``text``
    (its message and the lines printed with it), in order."""
    got: dict[str, list[str]] = {"Missing": [], "Unexpected": []}
    for m in _KEY_LIST.finditer(text):
        got[m.group(1)].extend(_QUOTED_KEY.findall(m.group(2)))
    return got["Missing"], got["Unexpected"]


def wrapper_prefix(missing: Sequence[str], unexpected: Sequence[str]) -> str | None:
    """The prefix by which the two key sets of a failed ``load_state_dict`` differ, or ``None``.

    Both sets are non-empty, every key of one side starts with one and the same dotted prefix, and with
    that prefix taken off, one side's keys are all keys of the other (``module.encoders.0.conv.weight``
    missing, ``encoders.0.conv.weight`` unexpected: the prefix ``module.``). That is the same model's
    parameters saved or loaded through a wrapper (nn.DataParallel and DistributedDataParallel name theirs
    ``module.<name>``, torch.compile ``_orig_mod.<name>``); a checkpoint of another model or configuration
    has other names or other shapes. A batch-norm's ``num_batches_tracked`` is left out of the comparison:
    torch fills it in when the state dict lacks it (torch 2.13.0 torch/nn/modules/batchnorm.py
    _NormBase._load_from_state_dict), so it is listed as unexpected but never as missing. Only the keys
    the message lists are compared (torch lists every missing and every unexpected key)."""

    def kept(keys: Sequence[str]) -> set[str]:
        return {k for k in keys if not k.endswith("num_batches_tracked")}

    miss, unexp = kept(missing), kept(unexpected)
    if not miss or not unexp:
        return None
    for prefixed, plain in ((miss, unexp), (unexp, miss)):
        first = min(prefixed)
        for t in plain:
            if not first.endswith("." + t):
                continue
            head = first[: -len(t)]
            if {head + k for k in plain} == prefixed:
                return head
    return None


def _short(exc_type: str) -> str:
    return exc_type.rsplit(".", 1)[-1]


#: Frames Python opens for an expression inside a function (a comprehension, a generator expression, a
#: lambda): they belong to the function that holds them.
_INNER_FRAME = re.compile(r"^<(?:listcomp|dictcomp|setcomp|genexpr|lambda)>$")


def in_data_code(frames: Sequence[tuple[str, int, str]]) -> bool:
    """Whether the innermost frame outside installed libraries is a dataset's own code (a
    comprehension or lambda frame is read as the function that holds it)."""
    for file, _line, func in reversed(frames):
        if _LIBRARY.search(file) or _INNER_FRAME.match(func):
            continue
        return bool(_DATA_FUNC.match(func) or _DATA_FILE.search(file.replace("\\", "/")))
    return False


#: A CUDA kernel assertion on a value, not an index (torch 2.13.0 aten/src/ATen/native/cuda/Loss.cu
#: binary_cross_entropy: ``input_val >= zero && input_val <= one``; Distributions.cu multinomial:
#: ``0 <= p4 && p4 <= 1``): a probability outside [0, 1] (a missing sigmoid, a NaN output) is not an index.
_VALUE_ASSERTION = re.compile(r"input_val >= zero && input_val <= one|0 <= p4 && p4 <= 1")

#: A frame of the loss computation: a file named after a loss or criterion, or a function that is one.
_LOSS_FRAME = re.compile(r"loss|criterion", re.I)


def in_loss_code(frames: Sequence[tuple[str, int, str]]) -> bool:
    """Whether a traceback frame is the loss computation: a file whose name holds ``loss`` or
    ``criterion`` (``utils/loss.py``, ``criterion.py``), or a function named so (``compute_loss``)."""
    return any(
        _LOSS_FRAME.search(file.replace("\\", "/").rsplit("/", 1)[-1]) or _LOSS_FRAME.search(func)
        for file, _line, func in frames
    )


def classify(
    exc_type: str,
    message: str,
    frames: Sequence[tuple[str, int, str]] = (),
    nearby: Iterable[str] = (),
) -> ExceptionCause | None:
    """The first :data:`CAUSES` row that explains this exception, or ``None`` (a plain code error).

    ``exc_type`` is the class as printed (``PIL.UnidentifiedImageError``), ``message`` the text after
    the colon, ``frames`` the traceback's ``(file, line, function)`` outermost first, ``nearby`` the
    lines printed around the exception line (a CUDA kernel's assertion is printed beside the
    ``device-side assert triggered`` error, not in it). Another exception's line quoted inside the
    message, and the text of a ``KeyError`` (the missing key's repr), are not read for a message
    pattern: they are data the exception carries."""
    short = _short(exc_type)
    own = _QUOTED_EXCEPTION.sub(r"\1\1", message)
    beside = "\n".join([own, *nearby])
    for c in CAUSES:
        if c.types and short not in c.types:
            continue
        if c.message is not None and not c.types and short == "KeyError":
            continue  # a KeyError's message is the missing key's repr, whatever text the key holds
        if c.message is not None and not c.message.search(beside if c.beside else own):
            continue
        if not _frames_agree(c, frames, beside):
            continue
        return c
    return None


_MISSING_MODULE = re.compile(r"No module named '([\w.]+)'")
_IMPORT_STATEMENT = re.compile(r"^\s*(?:import\s+([\w.]+)|from\s+([\w.]+)\s+import\b)", re.M)


def _imports_missing_module(beside: str) -> bool:
    """Whether the text ``beside`` a ``ModuleNotFoundError`` holds an ``import``/``from ... import``
    statement (the source line a traceback prints under its innermost frame) of the module the error
    names, or of a submodule of it: an installed package importing a backend lazily inside a function
    (keras 3.15.1 keras/src/callbacks/tensorboard.py ``summary``: ``import tensorflow.summary as
    summary``), as its module body would. A name handed to ``importlib.import_module`` or hydra's
    ``_locate`` prints a call, not an import statement."""
    m = _MISSING_MODULE.search(beside)
    if m is None:
        return False
    missing = m.group(1)
    for im in _IMPORT_STATEMENT.finditer(beside):
        name = im.group(1) or im.group(2)
        if name == missing or name.startswith(missing + "."):
            return True
    return False


_MODULE_LACKS = re.compile(r"module '?([\w.]+)'? has no attribute")
#: A package's own text that a name went away in a release (numpy 2.4.6 numpy/__init__.py __getattr__).
_REMOVED_IN_RELEASE = re.compile(
    r"was removed in the [\w-]+ [\d.]+ release|`np\.\w+` was a deprecated alias"
)


def _names_installed_module(text: str, frames: Sequence[tuple[str, int, str]]) -> bool:
    """Whether the module ``text`` says lacks an attribute (``module 'numpy' has no attribute 'float'``)
    is an installed package's: a traceback frame is a file of that package's folder under site-packages or
    dist-packages, or the text is the package's own note that the name was removed in a release."""
    if _REMOVED_IN_RELEASE.search(text):
        return True
    m = _MODULE_LACKS.search(text)
    if m is None:
        return False
    top = re.escape(m.group(1).split(".", 1)[0])
    folder = re.compile(rf"[/\\](?:site|dist)-packages[/\\]{top}(?:[/\\]|\.py$)")
    return any(folder.search(f[0]) for f in frames)


def _frames_agree(c: ExceptionCause, frames: Sequence[tuple[str, int, str]], beside: str) -> bool:
    """Whether the traceback's ``frames`` (outermost first) and the text ``beside`` the exception meet
    the :attr:`ExceptionCause.frames` condition of row ``c`` (always, with no condition)."""
    if c.frames == "data" and not in_data_code(frames):
        return False
    if c.frames == "reads" and any(_writes(f[2]) for f in frames):
        return False
    if c.frames == "loss" and not in_loss_code(frames):
        return False
    if c.frames == "index-assert" and _VALUE_ASSERTION.search(beside):
        return False
    if c.frames == "wrapper-keys" and wrapper_prefix(*state_dict_keys(beside)) is None:
        return False
    if c.frames == "installed" and not (
        frames
        and _INSTALLED.search(frames[-1][0])
        and (frames[-1][2] == "<module>" or _imports_missing_module(beside))
    ):
        return False
    if c.frames == "library" and not (frames and _INSTALLED.search(frames[-1][0])):
        return False
    if c.frames == "library-module" and not _names_installed_module(beside, frames):
        return False
    return not (
        c.frames == "mp-start"
        and not (frames and _MP_START.search(frames[-1][0].replace("\\", "/")))
    )


def get(id: str) -> ExceptionCause:
    return _BY_ID[id]
