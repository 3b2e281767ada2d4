"""Helpers every table-shaped reader shares: safe file checks, wide tables to RunData,
appended runs, the epoch axis.

Bad input is one :class:`~mlaudit_core.errors.InputError` naming the file (empty,
binary, a Git LFS pointer) or a warning on the run (rows cut, strings in number columns,
steps out of order, a header without rows: a run that logged nothing yet), never a traceback.
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..rundata import (
    CHECKPOINT_SUFFIXES,
    Artifact,
    MetricTable,
    RunData,
    RunIdentity,
    RunStatus,
)

HEAD = 4096
LFS_MAGIC = b"version https://git-lfs.github.com/spec/"


def head(path: Path, n: int = HEAD) -> bytes:
    """The first ``n`` bytes of ``path`` (b"" when unreadable or not a regular file: a FIFO's
    open would block until a writer comes, :mod:`mlaudit_core.boundedio`)."""
    from ..boundedio import read_regular

    try:
        return read_regular(path, n)
    except OSError:
        return b""


def unpadded(data: bytes) -> bytes:
    """``data`` without the NUL bytes that end it: a log file preallocated or cut by a crash
    ends in NUL padding, which is not binary content (``mlaudit logs`` reads such a log)."""
    return data.rstrip(b"\x00")


def head_text(path: Path, n: int = HEAD) -> str:
    """The text of the first ``n`` bytes of ``path`` (:func:`._text.decode`: UTF-8 or UTF-16,
    NUL holes left out), "" when they are binary or unreadable."""
    from ._text import decode

    return decode(head(path, n)) or ""


def head_lines(path: Path, n: int = 65536) -> list[str]:
    """The lines of the first ``n`` bytes of ``path`` (:func:`._text.split_lines`: LF, CRLF or
    CR line ends); [] when they are binary. The last line may be cut by the read."""
    from ._text import split_lines

    return split_lines(head_text(path, n))


def placeholder_problem(path: Path) -> str | None:
    """Why ``path`` is a stand-in for the real file, or None.

    Git LFS pointers (``version https://git-lfs.github.com/spec/v1``), git-annex pointers
    (a path into ``.git/annex/objects``), and HTML pages saved in place of a raw file are
    named; the message tells the user how to get the real content.
    """
    data = head(path, 512)
    if data.startswith(LFS_MAGIC):
        return "this is a Git LFS pointer, not the file: run `git lfs pull` in its repository"
    if b"/annex/objects/" in data[:300] and len(data) < 300:
        return "this is a git-annex pointer, not the file: run `git annex get` on it"
    low = data[:200].lstrip().lower()
    if low.startswith((b"<!doctype html", b"<html")):
        return "this is an HTML page saved in place of the file (download the raw file)"
    return None


def check_text(path: Path, what: str) -> None:
    """Refuse a file that cannot be a text log: missing, a folder, empty, binary or a pointer.

    Raises:
        InputError: one line naming ``path`` and the problem.
    """
    if not path.exists():
        raise InputError(f"{path}: no such file")
    if path.is_dir():
        raise InputError(f"{path}: is a folder, not a {what}")
    problem = placeholder_problem(path)
    if problem:
        raise InputError(f"{path}: {problem}")
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise InputError(f"{path}: cannot be read ({exc.strerror})") from None
    if size == 0:
        raise InputError(f"{path}: empty file (0 bytes), nothing to audit")
    from ._text import decode

    if decode(head(path, 8192)) is None:
        raise InputError(f"{path}: binary content (control bytes in the first 8 KiB), not a {what}")


def split_restarts(steps: np.ndarray) -> list[int]:
    """Row indices where a counter restarts: the value drops back to (or below) where the
    current segment began, e.g. a Keras CSVLogger with ``append=True`` run twice.

    A drop that does not reach the segment's first value (a row logged out of order) is
    not a restart. NaN steps are ignored. Returns the start row of each later segment.
    """
    out: list[int] = []
    if steps.size < 2:
        return out
    finite = np.isfinite(steps)
    idx = np.flatnonzero(finite)
    if idx.size < 2:
        return out
    s = steps[idx]
    drops = np.flatnonzero(s[1:] < s[:-1]) + 1
    if drops.size == 0:
        return out
    seg_first = s[0]
    for d in drops.tolist():
        if s[d] <= seg_first:
            out.append(int(idx[d]))
            seg_first = s[d]
    return out


def run_id(path: Path) -> str:
    return str(path.resolve())


def _name(path: Path) -> str:
    """A readable run name: the folder when the file has a fixed framework name."""
    p = path.resolve()
    if p.is_dir():
        return p.name
    generic = {
        "metrics.csv",
        "results.csv",
        "summary.csv",
        "trainer_state.json",
        "metrics.json",
        "log.txt",
        "trainer_log.jsonl",
        "training.log",
        "train.log",
        "output.log",
    }
    if p.name in generic:
        return f"{p.parent.name}/{p.name}"
    return p.name


def _last_appended_run(
    path: Path, steps: np.ndarray, keep: np.ndarray, axis: str, notes: list[str]
) -> int:
    """The first row of the last run when several are appended one after another (the counter
    restarts, :func:`split_restarts`), with a note naming the earlier ones; 0 for one run."""
    n = int(steps.shape[0])
    restarts = split_restarts(np.where(keep, steps, np.nan))
    if not restarts:
        return 0
    bounds = [0, *restarts, n]
    segs = [(bounds[i], bounds[i + 1]) for i in range(len(bounds) - 1)]
    earlier = "; ".join(
        f"run {i + 1}: rows {a + 1}-{b}, {axis}s {_rng(steps[a:b])}"
        for i, (a, b) in enumerate(segs[:-1])
    )
    start_row = segs[-1][0]
    notes.append(
        f"{path.name} holds {len(segs)} runs appended one after another (the {axis} "
        f"counter restarts); audited the last (rows {start_row + 1}-{n}, {axis}s "
        f"{_rng(steps[start_row:])}); earlier: {earlier}"
    )
    return start_row


def _gather_columns(columns, rows, st_i: np.ndarray, w_rows: np.ndarray, has_walls: bool):
    """Each metric column's logged cells as (steps, values, walls) arrays, with its name and
    count; a column that logs every kept row needs no gather, an empty one is left out. A
    ``(values, present)`` column keeps a logged NaN; a plain one takes NaN as an empty cell."""
    all_rows = rows is None
    ks, vs, ws, names, counts = [], [], [], [], []
    for key, col in columns.items():
        if isinstance(col, tuple):  # (values, present): a logged NaN is kept, an empty cell is not
            v, m = (col[0], col[1]) if all_rows else (col[0][rows], col[1][rows])
        else:
            v = col if all_rows else col[rows]
            m = ~np.isnan(v)
        cnt = int(np.count_nonzero(m))
        if not cnt:
            continue
        names.append(key)
        counts.append(cnt)
        if cnt == m.size:  # every row logs this metric: no gather needed
            ks.append(st_i)
            vs.append(v)
            if has_walls:
                ws.append(w_rows)
        else:
            ks.append(st_i[m])
            vs.append(v[m])
            if has_walls:
                ws.append(w_rows[m])
    return ks, vs, ws, names, counts


def wide_run(
    path: Path,
    columns: dict[str, np.ndarray] | dict[str, tuple[np.ndarray, np.ndarray]],
    steps: np.ndarray,
    *,
    tracker: str,
    axis: str,
    params: dict[str, str] | None = None,
    walls: np.ndarray | None = None,
    notes: list[str] | None = None,
    warnings: list[str] | None = None,
    what: str = "file",
    split: bool = True,
    axis_why: str = "",
) -> RunData:
    """A RunData from a wide table: one row per logging event, one column per metric.

    Args:
        columns: metric name -> float64 values, one per row (NaN where a row does not
            log that metric), or ``(values, present)`` with a bool mask of the cells that
            hold a value, so a logged ``nan`` is kept as a NaN point.
        steps: float64 step (or epoch) per row; NaN rows are dropped with a warning.
        axis: ``"step"`` or ``"epoch"``: what the step axis counts (stated in the notes).
        split: look for appended runs (the counter restarting) and keep the last.

    A table without any value (header only, every cell empty) is a run with no series and a
    warning saying so.
    """
    notes = list(notes or [])
    warnings = list(warnings or [])
    n = int(steps.shape[0])
    walls = _no_walls(n) if walls is None else walls
    keep = np.isfinite(steps)
    if not keep.all():
        bad = int((~keep).sum())
        warnings.append(f"{path.name}: {bad} row(s) without a readable {axis} were left out")
    if split:
        keep[: _last_appended_run(path, steps, keep, axis, notes)] = False
    all_rows = bool(keep.all())
    rows = None if all_rows else np.flatnonzero(keep)
    st = steps if all_rows else steps[rows]
    if st.size > 1:
        back = int((np.diff(st) < 0).sum())
        if back:
            warnings.append(
                f"{path.name}: {back} row(s) go back in {axis} (logged out of order); "
                f"the latest value of a repeated {axis} is used"
            )
    st_i = st.astype(np.int64)
    w_rows = walls if all_rows else walls[rows]
    has_walls = bool(np.isfinite(w_rows).any())
    ks, vs, ws, names, counts = _gather_columns(columns, rows, st_i, w_rows, has_walls)
    if not names:
        # partial data, not bad input: a run that has logged nothing yet (the logger wrote its
        # header, then the run stopped or the file was copied before the first row)
        if not any("nothing was logged yet" in w for w in warnings):  # the CSV reader's own
            warnings.append(
                f"{path.name}: no metric value in this {what} (header only or every cell "
                "empty): nothing was logged yet"
            )
        names, counts, ks, vs, ws = [], [], [], [], []
    total = sum(counts)
    table = grouped_table(
        names, counts, concat(ks), concat(vs), concat(ws) if has_walls else _no_walls(total)
    )
    if axis == "epoch":
        notes.insert(
            0,
            f"the step axis is the epoch{' (' + axis_why + ')' if axis_why else ''}: "
            "every series is one point per epoch",
        )
    start = end = None
    if has_walls:
        start = datetime.fromtimestamp(float(np.nanmin(w_rows)), tz=timezone.utc)
        end = datetime.fromtimestamp(float(np.nanmax(w_rows)), tz=timezone.utc)
    p = dict(params or {})
    p.setdefault("log.step_axis", axis)
    return RunData(
        identity=RunIdentity(tracker=tracker, id=run_id(path), name=_name(path)),
        status=RunStatus.UNKNOWN,
        start_time=start,
        end_time=end,
        params=p,
        metrics=table,
        notes=notes,
        warnings=warnings,
    )


def concat(arrays: list[np.ndarray]) -> np.ndarray:
    """``np.concatenate(arrays)``, or a view when the arrays already lie back to back in one
    buffer (the CSV reader's float columns, :func:`._csv._float_columns`), or a tiled view
    when every array is the same array (each full column's steps): both save a copy of the
    whole table. The result is read only when it is a view of another array's memory."""
    if not arrays:
        return np.zeros(0)
    first = arrays[0]
    if len(arrays) == 1:
        return first
    if all(a is first for a in arrays):
        return np.tile(first, len(arrays))  # one pass, no intermediate list of copies
    root = first
    while isinstance(root.base, np.ndarray):
        root = root.base
    if (
        first.ndim == 1
        and root.flags.c_contiguous
        and all(a.ndim == 1 and a.dtype == first.dtype and a.flags.c_contiguous for a in arrays)
    ):
        ptr = first.__array_interface__["data"][0]
        start = ptr - root.__array_interface__["data"][0]
        ok = 0 <= start and start % first.itemsize == 0
        for a in arrays:
            ok = ok and a.__array_interface__["data"][0] == ptr
            ptr += a.nbytes
        end = start + sum(a.nbytes for a in arrays)
        if ok and end <= root.nbytes:
            flat = root.reshape(-1).view(first.dtype)
            return flat[start // first.itemsize : end // first.itemsize]
    return np.concatenate(arrays)


def _no_walls(n: int) -> np.ndarray:
    """``n`` NaN wall times as a read-only broadcast view (no memory: 72 MB saved per 9 M points of
    a file without timestamps)."""
    return np.broadcast_to(np.float64(np.nan), (n,))


def grouped_table(
    names: list[str], counts: list[int], steps: np.ndarray, values: np.ndarray, walls: np.ndarray
) -> MetricTable:
    """A MetricTable from columns already grouped by key (``counts[i]`` points of ``names[i]``,
    contiguous, in logging order).

    ``MetricTable(...)`` sorts its input by key and gathers every column again; on grouped
    input that is pure overhead: 2.6 s of a 5.4 s load of a 9 M-point CSV (1 M rows), which
    put the CSV reader at 0.3x pandas' speed (benchmarks/ingest.py). This builds the same
    object without the sort (``MetricTable.from_grouped`` when the class has it; else the
    attributes ``__init__`` sets, which tests/test_formats.py checks against the constructor).
    """
    fast = getattr(MetricTable, "from_grouped", None)
    if fast is not None:
        return fast(names, counts, steps, values, walls)
    n = int(steps.shape[0])
    t = MetricTable.__new__(MetricTable)
    t._codes = np.empty(n, dtype=np.int32)
    pos = 0
    for i, c in enumerate(counts):
        t._codes[pos : pos + c] = i
        pos += c
    t._steps = np.ascontiguousarray(steps, dtype=np.int64)
    t._values = np.ascontiguousarray(values, dtype=np.float64)
    t._wall = walls if walls.dtype == np.float64 else walls.astype(np.float64)
    if not (t._values.shape[0] == n == t._wall.shape[0] == t._codes.shape[0]):
        raise ValueError("grouped columns differ in length")
    bounds = np.concatenate([[0], np.cumsum(counts)]).astype(int)
    t._slices = {
        names[i]: (int(bounds[i]), int(bounds[i + 1]))
        for i in range(len(names))
        if bounds[i + 1] > bounds[i]
    }
    return t


def _rng(a: np.ndarray) -> str:
    f = a[np.isfinite(a)]
    if f.size == 0:
        return "none"
    lo, hi = float(f.min()), float(f.max())
    return f"{lo:g}-{hi:g}"


def flat_params(
    d, prefix: str = "", out: dict[str, str] | None = None, limit: int = 2000
) -> dict[str, str]:
    """Nested dict -> ``a.b.c`` string params (lists as their JSON text), at most ``limit``."""
    import json

    out = {} if out is None else out
    if not isinstance(d, dict):
        return out
    for k, v in d.items():
        if len(out) >= limit:
            break
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            flat_params(v, key + ".", out, limit)
        elif isinstance(v, (list, tuple)):
            out[key] = json.dumps(v, default=str)[:500]
        else:
            out[key] = str(v)[:500]
    return out


#: Run config files a run folder may hold beside its metrics, read as params (the planned length,
#: learning rate, label count...): Lightning's ``hparams.yaml`` (TensorBoardLogger/CSVLogger) and
#: LightningCLI's ``config.yaml`` (SaveConfigCallback writes it into the log dir), YOLOv8/timm
#: ``args.yaml``, YOLOv5 ``opt.yaml``. Earlier files win on a shared key.
RUN_CONFIG_FILES = ("hparams.yaml", "config.yaml", "args.yaml", "opt.yaml")


#: Folders beside a run's metrics where its framework writes checkpoints by default: Lightning's
#: ``ModelCheckpoint`` (``<log_dir>/checkpoints/epoch=9-step=430.ckpt``), Ultralytics (``weights/``).
CHECKPOINT_DIRS = ("checkpoints", "weights")


def checkpoint_artifacts(folder: Path, limit: int = 50) -> list[Artifact]:
    """The saved-weights files in the default checkpoint folders under ``folder``
    (:data:`CHECKPOINT_DIRS`, suffixes :data:`CHECKPOINT_SUFFIXES`), as artifacts with paths relative to
    ``folder``; listed by name and size only, never opened. At most ``limit``."""
    out: list[Artifact] = []
    for name in CHECKPOINT_DIRS:
        d = folder / name
        if not d.is_dir():
            continue
        for f in sorted(d.iterdir()):
            if f.is_file() and f.suffix.lower() in CHECKPOINT_SUFFIXES and len(out) < limit:
                out.append(Artifact(f.relative_to(folder).as_posix(), f.stat().st_size))
    return out


def config_sidecar_params(
    folder: Path,
    params: dict[str, str],
    notes: list[str],
    warnings: list[str],
    names: tuple[str, ...] = RUN_CONFIG_FILES,
) -> None:
    """Add the values of the run config files in ``folder`` (:data:`RUN_CONFIG_FILES`) to
    ``params`` (flattened ``a.b.c`` keys; a key already there is kept), naming each file read in
    ``notes``. Safe YAML, size-capped (:func:`read_yaml`)."""
    for name in names:
        side = folder / name
        if side.is_file():
            for k, v in flat_params(_maps_for_lists(read_yaml(side, warnings))).items():
                params.setdefault(k, v)
            notes.append(f"params from {name}")


#: The keys of a Hugging Face model ``config.json`` that say what the task is: the head
#: (``architectures``), ``problem_type`` and the label map. Nothing else of the model config is read
#: (its ``dtype``, vocabulary and sizes describe the network, not the run) ...
_HF_TASK_KEYS = ("architectures", "problem_type", "id2label", "num_labels")
#: ... except ``vocab_size`` under a language-model head (:data:`_HF_LM_HEAD`): next-token prediction
#: classifies over the vocabulary, so the vocabulary is that task's class count (the uniform guess's loss
#: is ln V; newuser11 hf_lm_lr_0.5: GPT2LMHeadModel, vocab_size 48, loss at ln 48 = 3.87).
_HF_LM_HEAD = re.compile(
    r"For(?:Causal|Masked)LM|LMHeadModel|ForConditionalGeneration|ForSeq2SeqLM"
)


def hf_model_config_params(
    folder: Path, params: dict[str, str], notes: list[str], warnings: list[str]
) -> None:
    """Add the task keys (:data:`_HF_TASK_KEYS`) of the model ``config.json`` that
    ``Trainer.save_model`` writes beside ``trainer_state.json`` in each ``checkpoint-N`` folder
    to ``params`` (a key already there is kept; ``id2label`` flattened to ``id2label.<i>``).

    A classifier config (``problem_type`` ``single_label_classification`` or a
    ``*ForSequenceClassification`` head) without a label map has 2 labels: transformers does not
    save ``id2label`` when it is the two-label default and loads such a config with
    ``num_labels=2`` (transformers 5.25 ``configuration_utils.PreTrainedConfig.__init__``); that
    count is added as ``num_labels`` with a note saying where it comes from. Safe YAML (a JSON
    file is YAML), size-capped (:func:`read_yaml`); an unreadable file adds nothing.
    """
    side = folder / "config.json"
    if not side.is_file():
        return
    cfg = read_yaml(side, warnings)
    if not isinstance(cfg, dict):
        return
    task = {k: cfg[k] for k in _HF_TASK_KEYS if k in cfg}
    if not task:
        return
    got = flat_params(task)
    arch = " ".join(str(a) for a in cfg.get("architectures") or [])
    classifier = cfg.get("problem_type") == "single_label_classification" or (
        "ForSequenceClassification" in arch
    )
    if classifier and "id2label" not in cfg and "num_labels" not in cfg:
        got["num_labels"] = "2"
        notes.append(
            "num_labels 2: config.json names a sequence classifier without a label map, which "
            "transformers saves only for the two-label default"
        )
    if _HF_LM_HEAD.search(arch) and isinstance(cfg.get("vocab_size"), int):
        got["vocab_size"] = str(cfg["vocab_size"])
    for k, v in got.items():
        params.setdefault(k, v)
    notes.append("params from config.json (task keys)")


def _maps_for_lists(obj, depth: int = 0):
    """A list of object specs (jsonargparse's ``class_path``/``init_args`` mappings, as LightningCLI
    saves ``trainer.callbacks``) as a mapping by index, so each callback's settings are params one
    value each (``trainer.callbacks.0.init_args.patience``); every other list stays as it is."""
    if depth > 50:
        return obj
    if isinstance(obj, dict):
        return {k: _maps_for_lists(v, depth + 1) for k, v in obj.items()}
    if (
        isinstance(obj, list)
        and obj
        and all(isinstance(x, dict) and "class_path" in x for x in obj)
    ):
        return {str(i): _maps_for_lists(x, depth + 1) for i, x in enumerate(obj)}
    return obj


def read_json(path: Path, what: str, max_bytes: int, file_kind: str | None = None) -> object:
    """The JSON value of ``path``, a text file of at most ``max_bytes`` holding a ``what``
    (``file_kind``: the file's name in the text-file check's errors, ``what`` by default).

    Raises:
        InputError: not a text file, larger than ``max_bytes``, not valid JSON (with where it
            stops), or not readable as JSON (a 200 MB number, nesting too deep).
    """
    check_text(path, file_kind or what)
    if path.stat().st_size > max_bytes:
        raise InputError(f"{path}: larger than {max_bytes >> 20} MiB; not a {what}")
    try:
        return json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{path}: not valid JSON ({exc.msg} at line {exc.lineno}); the file may be cut short"
        ) from None
    except (ValueError, RecursionError) as exc:
        raise InputError(f"{path}: not a readable {what} ({str(exc)[:120]})") from None


def read_yaml(path: Path, warnings: list[str], max_bytes: int = 1 << 20) -> dict:
    """A small YAML mapping read safely (``yaml.safe_load``, size-capped); {} with a warning
    when unreadable. Objects tagged with Python types (Lightning's hparams.yaml may hold
    ``!!python/object``) are read as plain mappings, never constructed."""
    import yaml

    try:
        if path.stat().st_size > max_bytes:
            warnings.append(f"{path.name}: larger than {max_bytes >> 20} MiB, not read")
            return {}
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}

    from mlaudit_core.safeparse import MAX_YAML_VALUES, TooComplex, _BoundedLoader, _expanded_size

    class _Loader(_BoundedLoader):  # SafeLoader with the depth limit of mlaudit_core.safeparse
        pass

    def _any(loader, suffix, node):
        if isinstance(node, yaml.MappingNode):
            return loader.construct_mapping(node, deep=True)
        if isinstance(node, yaml.SequenceNode):
            return loader.construct_sequence(node, deep=True)
        return loader.construct_scalar(node)

    _Loader.add_multi_constructor("tag:yaml.org,2002:python/", _any)
    _Loader.add_multi_constructor("!", _any)
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        # an alias bomb constructs in no time (aliases are shared) but expands when the values
        # are flattened into params: refuse it before constructing, like safeparse.load_yaml
        if node is not None and _expanded_size(node, {}, MAX_YAML_VALUES) > MAX_YAML_VALUES:
            raise TooComplex(
                f"its aliases expand to over {MAX_YAML_VALUES:,} values (an alias bomb?)"
            )
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        warnings.append(
            f"{path.name}: not valid YAML ({str(exc).splitlines()[0]}); its values were not read"
        )
        return {}
    except (TooComplex, RecursionError) as exc:
        why = exc if isinstance(exc, TooComplex) else "too deep"
        warnings.append(f"{path.name}: {why}; its values were not read")
        return {}
    finally:
        loader.dispose()
    return data if isinstance(data, dict) else {}


def digest(path: Path) -> str:
    return hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:12]
