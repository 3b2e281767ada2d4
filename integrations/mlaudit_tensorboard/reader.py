"""Fast, full-fidelity reader for TensorBoard event files.

TensorBoard's ``EventAccumulator`` reservoir-samples scalars (1,000 per tag by
default) and, like tbparse, spends most of its time in a pure-Python CRC and
per-event wrapper objects. This reader walks the TFRecord framing itself
(``uint64 length | uint32 crc | payload | uint32 crc``) and parses each payload
with TensorBoard's own compiled ``Event`` protobuf (upb backend), keeping every
point. CRCs are not verified (the framing length is checked against the file
size instead); a truncated or undecodable record ends that file's reading with a
warning, and every record before it is kept.

Measured on this kind of machine (2 cores; ``benchmarks/ingest.py``): about
0.4-0.5 million points/s, against 37 s per million for EventAccumulator and 42 s
for tbparse.
"""

from __future__ import annotations

import os
import struct
from operator import itemgetter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from mlaudit_core.errors import InputError
from mlaudit_core.plugins import require
from mlaudit_core.rundata import MetricTable, RunData, RunIdentity, RunStatus

#: Our own event files carry this suffix; the reader skips them, the writer replaces them.
MLAUDIT_SUFFIX = ".mlaudit"
_HEADER = struct.Struct("<QI")


@dataclass
class _Columns:
    """Scalar points as (tag, step, wall time, value) tuples: one append per point is the
    cheapest way to collect them in CPython; they are transposed once at the end."""

    rows: list = field(default_factory=list)


def event_files(logdir: Path) -> list[Path]:
    """Every event file under ``logdir`` (recursively), sorted by directory then name, minus mlaudit's own."""
    out = []
    for root, _dirs, files in os.walk(logdir):
        for f in files:
            if "tfevents" in f and not f.endswith(MLAUDIT_SUFFIX):
                out.append(Path(root) / f)
    return sorted(out, key=lambda p: (str(p.parent), p.name))


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


def read_event_file(path: Path, prefix: str, cols: _Columns, notes: list[str], warnings: list[str],
                    scalar_tags: set[str], text_tags: set[str]) -> int:
    """Append every scalar point of one event file to ``cols``. Returns the number of records read."""
    event_pb2 = require("tensorboard.compat.proto.event_pb2", "tensorboard", "tensorboard")
    from_string = event_pb2.Event.FromString
    try:
        data = path.read_bytes()
    except OSError as exc:
        warnings.append(f"{path}: cannot read ({exc.strerror})")
        return 0
    mv = memoryview(data)
    size = len(data)
    off = 0
    n = 0
    app = cols.rows.append
    unpack = _HEADER.unpack_from
    while off < size:
        if off + 12 > size:
            warnings.append(f"{path.name}: truncated record header at byte {off} of {size}; kept {n} records")
            break
        length, _crc = unpack(data, off)
        start = off + 12
        end = start + length
        if end + 4 > size:
            warnings.append(f"{path.name}: truncated record at byte {off} (needs {length} bytes, "
                            f"{size - start} left); kept {n} records")
            break
        try:
            ev = from_string(mv[start:end])
        except Exception:
            warnings.append(f"{path.name}: corrupt record at byte {off}; kept the {n} records before it")
            break
        off = end + 4
        n += 1
        for v in ev.summary.value:
            if v.HasField("simple_value"):  # the common case first: tensorboardX / torch writers
                app((prefix + v.tag, ev.step, ev.wall_time, v.simple_value))
            elif v.HasField("tensor"):
                tag = v.tag
                plugin = v.metadata.plugin_data.plugin_name if v.HasField("metadata") else ""
                if plugin == "scalars":
                    scalar_tags.add(tag)
                elif plugin == "text":
                    text_tags.add(tag)
                if tag in text_tags:
                    txt = b" ".join(v.tensor.string_val).decode("utf-8", "replace")
                    notes.append(f"{prefix}{tag} (step {ev.step}): {txt}")
                elif tag in scalar_tags or (not plugin and not v.tensor.tensor_shape.dim):
                    val = _tensor_scalar(v.tensor)
                    if val is not None:
                        app((prefix + tag, ev.step, ev.wall_time, val))
    return n


def load_logdir(logdir: str | os.PathLike) -> RunData:
    """Read every event file under ``logdir`` into one RunData.

    Scalars from a sub-directory ``sub/`` are keyed ``sub/<tag>`` (the TensorBoard
    "run" name), so Keras' ``train/epoch_loss`` and ``validation/epoch_loss``
    stay apart; scalars in ``logdir`` itself keep their tag.

    Raises:
        InputError: ``logdir`` does not exist, is not a directory, or holds no event file.
    """
    root = Path(logdir)
    if not root.exists():
        raise InputError(f"{root}: no such log directory")
    if not root.is_dir():
        raise InputError(f"{root}: not a directory (give the TensorBoard log directory)")
    files = event_files(root)
    if not files:
        raise InputError(f"{root}: no TensorBoard event files (events.out.tfevents.*) found")
    cols = _Columns()
    notes: list[str] = []
    warnings: list[str] = []
    for f in files:
        rel = f.parent.relative_to(root).as_posix()
        prefix = "" if rel == "." else rel + "/"
        read_event_file(f, prefix, cols, notes, warnings, set(), set())
    rows = cols.rows
    # column by column with itemgetter: far cheaper than zip(*rows) on a million tuples
    tags = list(map(itemgetter(0), rows))
    steps = np.fromiter(map(itemgetter(1), rows), np.int64, len(rows))
    walls = np.fromiter(map(itemgetter(2), rows), np.float64, len(rows))
    values = np.fromiter(map(itemgetter(3), rows), np.float64, len(rows))
    cols.rows = rows = []  # free the tuples before grouping
    table = MetricTable(tags, steps, values, walls)
    start = end = None
    if walls.size:
        start = datetime.fromtimestamp(float(np.nanmin(walls)), tz=timezone.utc)
        end = datetime.fromtimestamp(float(np.nanmax(walls)), tz=timezone.utc)
    return RunData(identity=RunIdentity(tracker="tensorboard", id=str(root.resolve()),
                                        name=root.resolve().name),
                   status=RunStatus.UNKNOWN, start_time=start, end_time=end, metrics=table,
                   notes=notes, warnings=warnings)
