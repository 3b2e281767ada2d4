"""Fast, full-fidelity reader for TensorBoard event files.

TensorBoard's ``EventAccumulator`` reservoir-samples scalars (1,000 per tag by
default) and, like tbparse, spends most of its time in a pure-Python CRC and
per-event wrapper objects. This reader walks the TFRecord framing itself
(``uint64 length | uint32 crc | payload | uint32 crc``) and decodes in two tiers:

1. **Vectorised tier** for the record shape that scalar writers emit millions of
   times (tensorboardX and PyTorch ``SummaryWriter.add_scalar``): an ``Event`` with
   ``wall_time``, an optional ``step`` and one ``Summary.Value`` holding only a tag
   and a ``simple_value``. Every field of every record is located with numpy over
   the whole file, and a record is accepted only when the protobuf tags *and* all
   nested length prefixes add up exactly to the record's framed length.
2. **Protobuf tier** for every other record (tensor scalars of TF2 writers, text
   summaries, the file-version event, anything unusual): TensorBoard's own compiled
   ``Event`` message (upb backend).

CRCs are not verified (the framing length is checked against the file size); a
truncated or undecodable record ends that file's reading with a warning, and every
record before it is kept. ``tests/test_tensorboard.py`` checks that both tiers give
exactly what TensorBoard's ``EventAccumulator`` reads. Figures: ``benchmarks/ingest.py``.
"""

from __future__ import annotations

import os
import re
import struct
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from mlaudit_core.errors import InputError
from mlaudit_core.plugins import require
from mlaudit_core.rundata import MetricTable, RunData, RunIdentity, RunStatus

#: Our own event files carry this suffix; the reader skips them, the writer replaces them.
MLAUDIT_SUFFIX = ".mlaudit"
_LEN = struct.Struct("<Q")



@dataclass
class _FilePoints:
    """Scalar points of one file: tag codes into ``names``, in record order."""

    names: list[str]
    codes: np.ndarray
    steps: np.ndarray
    walls: np.ndarray
    values: np.ndarray


_CHUNKS = re.compile(r"(\d+)")


def event_file_order(p: Path) -> tuple:
    """Sort key: directory, then the name with its numbers compared as numbers.

    Writers name files ``events.out.tfevents.<unix seconds>.<host>[.<pid>.<uid>][<suffix>]``
    with unpadded numbers: two files opened in one second differ only in a counter
    (``...host.9`` and ``...host.10``), and plain name order read the later file first (a false
    "step reset"). Numeric chunks order them as they were created.
    """
    parts = _CHUNKS.split(p.name)
    return (str(p.parent), [(int(x), "") if i % 2 else (-1, x) for i, x in enumerate(parts)])


def event_files(logdir: Path) -> list[Path]:
    """Every event file under ``logdir`` (recursively), sorted by directory then creation
    (:func:`event_file_order`), minus mlaudit's own."""
    out = []
    for root, _dirs, files in os.walk(logdir):
        for f in files:
            p = Path(root) / f
            # regular files only: a FIFO or device named like an event file would block the read
            if "tfevents" in f and not f.endswith(MLAUDIT_SUFFIX) and p.is_file():
                out.append(p)
    return sorted(out, key=event_file_order)


def _tensor_scalar(t) -> float | None:
    """A scalar float from a TensorProto (``float_val``/``double_val``/``tensor_content``)."""
    if t.float_val:
        return float(t.float_val[0])
    if t.double_val:
        return float(t.double_val[0])
    if t.int64_val:
        return float(t.int64_val[0])
    if t.int_val:
        return float(t.int_val[0])
    if t.tensor_content:
        dt = {1: "<f4", 2: "<f8", 3: "<i4", 9: "<i8", 19: "<f2"}.get(t.dtype)
        if dt:
            arr = np.frombuffer(t.tensor_content, dtype=dt)
            if arr.size == 1:
                return float(arr[0])
    return None


def _frame(data: bytes, name: str, warnings: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Record payload offsets and lengths (int64 arrays); a truncated tail adds a warning.

    The loop only follows the length fields (one unpack and one append per record);
    bounds are checked once, vectorised, afterwards.
    """
    offsets: list[int] = []
    app = offsets.append
    unpack = _LEN.unpack_from
    off = 0
    try:
        while True:
            app(off)
            off += unpack(data, off)[0] + 16
    except (struct.error, OverflowError):  # < 8 bytes left at ``off``, or ``off`` past the end
        pass
    size = len(data)
    if offsets[-1] > size:  # a corrupt length can exceed int64; only "past the end" matters
        offsets[-1] = size + 1
    o = np.asarray(offsets, dtype=np.int64)
    # o[-1] is where reading stopped: the file's end when every record was whole
    if o[-1] > size:  # the last record's declared length runs past the end of the file
        warnings.append(f"{name}: truncated or corrupt record at byte {int(o[-2])} (its length "
                        f"field runs past the end of the file); kept {o.size - 2} records")
        o = o[:-1]
    elif o[-1] < size:
        warnings.append(f"{name}: truncated record header at byte {int(o[-1])} of {size}; "
                        f"kept {o.size - 1} records")
    return o[:-1] + 12, np.diff(o) - 16


def _fast_simple_values(data: bytes, starts: np.ndarray, lengths: np.ndarray):
    """Decode records of the plain scalar shape with numpy; returns (mask, steps, walls, values,
    tag_starts, tag_lengths) where ``mask`` marks the records that were decoded.

    Shape accepted (protobuf wire format)::

        09 <f64 wall_time> [10 <varint step>] 2a <len> 0a <len> 0a <len> <tag> 15 <f32 value>

    with all three lengths < 128 (one varint byte) and consistent with the framed length.
    """
    buf = np.frombuffer(data, dtype=np.uint8)
    last = buf.size - 1
    n = starts.size

    def at(idx):
        return buf[np.minimum(idx, last)]

    ok = (lengths >= 20) & (at(starts) == 0x09)
    i = starts + 9
    has_step = at(i) == 0x10
    step = np.zeros(n, dtype=np.uint64)
    steplen = np.zeros(n, dtype=np.int64)
    cont = has_step.copy()
    for k in range(10):
        b = at(i + 1 + k).astype(np.uint64)
        step += np.where(cont, (b & np.uint64(0x7F)) << np.uint64(7 * k), np.uint64(0))
        steplen += cont
        cont &= b >= 0x80
    ok &= ~cont
    s = i + np.where(has_step, 1 + steplen, 0)
    sumlen = at(s + 1).astype(np.int64)
    vallen = at(s + 3).astype(np.int64)
    taglen = at(s + 5).astype(np.int64)
    f = s + 6 + taglen
    ok &= (at(s) == 0x2A) & (at(s + 2) == 0x0A) & (at(s + 4) == 0x0A) & (at(f) == 0x15)
    ok &= (sumlen < 0x80) & (vallen < 0x80) & (taglen < 0x80)
    ok &= (vallen == taglen + 7) & (sumlen == vallen + 2) & (s + 2 + sumlen == starts + lengths)
    idx = np.flatnonzero(ok)
    walls = buf[starts[idx, None] + 1 + np.arange(8)].copy().view("<f8").ravel()
    values = buf[f[idx, None] + 1 + np.arange(4)].copy().view("<f4").ravel().astype(np.float64)
    # steps are int64 in the proto: reinterpret the varint's 64 bits as signed
    return ok, step[idx].view(np.int64), walls, values, s[idx] + 6, taglen[idx]


def _factorize_tags(data: bytes, starts: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, list[bytes]]:
    """Codes and distinct values of the tag byte strings ``data[start:start+length]``.

    Vectorised: tags are gathered into a zero-padded (n, max_len) byte matrix and grouped
    with ``np.unique`` over its rows (viewed as one fixed-width void value each), so no
    Python object is made per record. Returns (codes in first-seen order, distinct tags).
    """
    if starts.size == 0:
        return np.zeros(0, dtype=np.int64), []
    buf = np.frombuffer(data, dtype=np.uint8)
    width = int(lengths.max())
    cols = np.arange(width)
    idx = np.minimum(starts[:, None] + cols, buf.size - 1)
    rows = np.where(cols < lengths[:, None], buf[idx], 0).astype(np.uint8)
    # the length is part of the key, so "a" and "a\0" never merge
    keyed = np.concatenate([rows, lengths[:, None].astype(np.uint8)], axis=1)
    keyed = np.ascontiguousarray(keyed).view(np.dtype((np.void, width + 1))).ravel()
    uniq, first, inverse = np.unique(keyed, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")  # first-seen order, as tag names appear in the file
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    tags = [data[int(starts[first[i]]):int(starts[first[i]] + lengths[first[i]])] for i in order]
    return rank[inverse.ravel()], tags


def _text_params(tag: str, txt: str, params: dict[str, str] | None) -> bool:
    """Flatten a JSON text summary (HF Trainer's ``args/text_summary``,
    ``model_config/text_summary``) into ``params`` as ``args.<key>`` / ``model_config.<key>``;
    True when it was one."""
    if params is None or not tag.endswith("text_summary") or not txt.lstrip().startswith("{"):
        return False
    import json

    try:
        data = json.loads(txt)
    except ValueError:
        return False
    if not isinstance(data, dict):
        return False
    from mlaudit_core.formats._common import flat_params

    flat_params(data, tag.split("/", 1)[0] + ".", params)
    return True


def read_event_file(path: Path, prefix: str, notes: list[str], warnings: list[str],
                    params: dict[str, str] | None = None) -> _FilePoints:
    """Every scalar point of one event file, tagged ``prefix + tag``, in record order.

    JSON text summaries (HF Trainer's ``args/text_summary``) go to ``params`` when given,
    other text summaries to ``notes``."""
    event_pb2 = require("tensorboard.compat.proto.event_pb2", "tensorboard", "tensorboard")
    try:
        data = path.read_bytes()
    except OSError as exc:
        warnings.append(f"{path}: cannot read ({exc.strerror})")
        data = b""
    if not data:
        warnings.append(f"{path.name}: empty event file")
        return _FilePoints([], np.zeros(0, np.int32), np.zeros(0, np.int64), np.zeros(0), np.zeros(0))
    starts, lengths = _frame(data, path.name, warnings)
    if starts.size:
        ok, f_steps, f_walls, f_values, t_start, t_len = _fast_simple_values(data, starts, lengths)
    else:
        ok = np.zeros(0, dtype=bool)
        f_steps = f_walls = f_values = t_start = t_len = np.zeros(0)
    f_codes, uniq = _factorize_tags(data, t_start, t_len)
    names = [prefix + u.decode("utf-8", "replace") for u in uniq]
    code_of = {nm: i for i, nm in enumerate(names)}
    f_order = np.flatnonzero(ok)

    slow_rows: list[tuple[int, int, int, float, float]] = []  # (record, code, step, wall, value)
    scalar_tags: set[str] = set()
    text_tags: set[str] = set()
    from_string = event_pb2.Event.FromString
    mv = memoryview(data)
    for r in np.flatnonzero(~ok).tolist():
        a = int(starts[r])
        try:
            ev = from_string(mv[a:a + int(lengths[r])])
        except Exception:
            warnings.append(f"{path.name}: corrupt record at byte {a - 12}; kept the records before it")
            keep = f_order < r
            f_order, f_codes = f_order[keep], np.asarray(f_codes)[keep]
            f_steps, f_walls, f_values = f_steps[keep], f_walls[keep], f_values[keep]
            break
        for v in ev.summary.value:
            kind = v.WhichOneof("value")
            tag = v.tag
            val = None
            if kind == "simple_value":
                val = v.simple_value
            elif kind == "tensor":
                plugin = v.metadata.plugin_data.plugin_name if v.HasField("metadata") else ""
                if plugin == "scalars":
                    scalar_tags.add(tag)
                elif plugin == "text":
                    text_tags.add(tag)
                if tag in text_tags:
                    txt = b" ".join(v.tensor.string_val).decode("utf-8", "replace")
                    if not _text_params(tag, txt, params):
                        notes.append(f"{prefix}{tag} (step {ev.step}): {txt[:2000]}")
                elif tag in scalar_tags or (not plugin and not v.tensor.tensor_shape.dim):
                    val = _tensor_scalar(v.tensor)
            if val is not None:
                key = prefix + tag
                code = code_of.setdefault(key, len(code_of))
                if code == len(names):
                    names.append(key)
                slow_rows.append((r, code, ev.step, ev.wall_time, val))
    codes = np.asarray(f_codes, dtype=np.int32)
    steps, walls, values = f_steps, f_walls, f_values
    if slow_rows:
        rec = np.concatenate([f_order, np.fromiter((x[0] for x in slow_rows), np.int64, len(slow_rows))])
        codes = np.concatenate([codes, np.fromiter((x[1] for x in slow_rows), np.int32, len(slow_rows))])
        steps = np.concatenate([steps, np.fromiter((x[2] for x in slow_rows), np.int64, len(slow_rows))])
        walls = np.concatenate([walls, np.fromiter((x[3] for x in slow_rows), np.float64, len(slow_rows))])
        values = np.concatenate([values, np.fromiter((x[4] for x in slow_rows), np.float64, len(slow_rows))])
        order = np.argsort(rec, kind="stable")
        codes, steps, walls, values = codes[order], steps[order], walls[order], values[order]
    return _FilePoints(names, codes, steps, walls, values)


#: Sub-directory names that hold one split of a run (Keras ``train``/``validation``, Lightning
#: and HF ``eval``...): their event files belong to the parent directory's run.
SPLIT_DIRS = frozenset({"train", "training", "validation", "valid", "val", "eval", "evaluation", "test",
                        "testing"})
_SPLIT_DIRS = SPLIT_DIRS


_SPLIT_PREFIX = re.compile(r"^(train|training|validation|valid|val|eval|evaluation|test|testing)(\W.*|_.*|)$",
                           re.IGNORECASE)


def _paired_splits(dirs: set[Path]) -> dict[Path, str]:
    """Sibling event directories named like splits with one shared suffix (``train with SGD`` and
    ``val with SGD``, ``train_adam`` and ``test_adam``): the splits of their parent's run.
    Returns ``{directory: split word}``."""
    by_parent: dict[Path, list[tuple[Path, str, str]]] = {}
    for d in dirs:
        m = _SPLIT_PREFIX.match(d.name)
        if m and d.name.lower() not in SPLIT_DIRS:
            by_parent.setdefault(d.parent, []).append((d, m.group(1).lower(), m.group(2)))
    out: dict[Path, str] = {}
    for items in by_parent.values():
        by_rest: dict[str, list[tuple[Path, str]]] = {}
        for d, word, rest in items:
            by_rest.setdefault(rest, []).append((d, word))
        for group in by_rest.values():
            if len({w for _, w in group}) >= 2:
                out.update(dict(group))
    return out


def run_dir_of(event_dir: Path, root: Path, paired: dict[Path, str] | None = None) -> Path:
    """The run an event file's directory belongs to: a split sub-directory belongs to its parent."""
    if event_dir != root and (event_dir.name.lower() in SPLIT_DIRS or event_dir in (paired or {})):
        return event_dir.parent
    return event_dir


def run_dirs(root: Path, files: list[Path]) -> list[Path]:
    """The distinct run directories of ``files`` (event files under ``root``), sorted.

    Runs are told apart by directory only: tag prefixes (``Loss/train``) never split a run.
    """
    paired = _paired_splits({f.parent for f in files})
    return sorted({run_dir_of(f.parent, root, paired) for f in files}, key=str)


def _placeholder(f: Path) -> str | None:
    try:
        with open(f, "rb") as fh:
            head = fh.read(200)
    except OSError:
        return None
    if head.startswith(b"version https://git-lfs.github.com/spec/"):
        return "this is a Git LFS pointer, not the event file: run `git lfs pull` in its repository"
    if head and all(32 <= c < 127 or c in (9, 10, 13) for c in head):
        # an event file starts with a little-endian uint64 record length (zero high bytes):
        # all-printable first bytes are a text stand-in
        return "a text file in place of the event file (a placeholder, not TensorBoard data)"
    return None


def load_logdir(logdir: str | os.PathLike) -> RunData:
    """Read the event files of ONE run into a RunData.

    ``logdir`` is a run directory (event files in it, and/or in its split sub-directories
    ``train/``, ``validation/``, ``eval/``...), a parent holding exactly one such run, or a
    single event file. Scalars from a split sub-directory are keyed ``<split>/<tag>``
    (Keras: ``train/epoch_loss``, ``validation/epoch_loss``); scalars in the run directory
    keep their tag (PyTorch docs: ``Loss/train``, ``Accuracy/test``: one run).

    Raises:
        InputError: ``logdir`` does not exist, holds no event file, its event files are Git
            LFS pointers or other text placeholders, or it holds several runs (event files in
            several run directories, e.g. ``lightning_logs/version_0``, ``version_1``).
    """
    root = Path(logdir)
    if not root.exists():
        raise InputError(f"{root}: no such log directory")
    if root.is_file():
        if "tfevents" not in root.name:
            raise InputError(f"{root}: not a directory and not a TensorBoard event file (give the log directory)")
        files, base = [root], root.parent
    else:
        files = event_files(root)
        base = None
    if not files:
        raise InputError(f"{root}: no TensorBoard event files (events.out.tfevents.*) found")
    warnings: list[str] = []
    real = []
    for f in files:
        problem = _placeholder(f)
        if problem:
            warnings.append(f"{f}: {problem}; skipped")
        else:
            real.append(f)
    if not real:
        first = next(w for w in warnings)
        raise InputError(first.removesuffix("; skipped") if len(files) == 1 else
                         f"{files[0]}: {_placeholder(files[0])} (and {len(files) - 1} more event file(s) like it)")
    files = real
    if base is None:
        runs = run_dirs(root, files)
        if len(runs) > 1:  # one verdict over several runs' curves would be wrong, and written back wrongly
            names = [r.relative_to(root).as_posix() if r != root else "." for r in runs]
            raise InputError(f"{root}: holds {len(runs)} separate runs ({', '.join(names[:3])}"
                             f"{', ...' if len(runs) > 3 else ''}); audit one run directory at a time, "
                             f"e.g. {runs[0]} (or `mlaudit {root}` audits each)")
        base = runs[0]
    notes: list[str] = []
    params: dict[str, str] = {}
    names: list[str] = []
    index: dict[str, int] = {}
    parts = []
    paired = _paired_splits({f.parent for f in files})
    if paired:
        notes.append("sub-directories " + ", ".join(repr(d.name) for d in sorted(paired)) + " are the splits "
                     "of one run; their keys are prefixed with the split (" + ", ".join(
                         sorted({w + "/" for w in paired.values()})) + ")")
    for f in files:
        rel = paired[f.parent] if f.parent in paired else f.parent.relative_to(base).as_posix()
        fp = read_event_file(f, "" if rel == "." else rel + "/", notes, warnings, params)
        remap = np.array([index.setdefault(nm, len(index)) for nm in fp.names] or [0], dtype=np.int32)
        names = list(index)
        parts.append((remap[fp.codes] if fp.codes.size else fp.codes, fp.steps, fp.walls, fp.values))
    codes, steps, walls, values = (np.concatenate([p[i] for p in parts]) for i in range(4))
    if codes.size == 0 and not notes and not params:
        detail = "; ".join(warnings[:2]) or "the files hold no summaries"
        raise InputError(f"{root}: no scalar could be read from its {len(files)} event file(s) ({detail})")
    table = MetricTable(codes, steps, values, walls, names=names)
    start = end = None
    if walls.size:
        start = datetime.fromtimestamp(float(np.nanmin(walls)), tz=timezone.utc)
        end = datetime.fromtimestamp(float(np.nanmax(walls)), tz=timezone.utc)
    ident = base if root.is_file() else root
    return RunData(identity=RunIdentity(tracker="tensorboard", id=str(ident.resolve()),
                                        name=ident.resolve().name),
                   status=RunStatus.UNKNOWN, start_time=start, end_time=end, metrics=table,
                   params=params, notes=notes, warnings=warnings)
