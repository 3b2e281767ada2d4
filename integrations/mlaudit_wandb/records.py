"""Reader for the W&B transaction log (``run-<id>.wandb``), the file an offline run writes.

The file is a LevelDB-log-style record file, the format of wandb's own
``datastore`` (``wandb/sdk/internal/datastore.py`` up to wandb 0.2x; wandb-core,
the Go service that writes it since 0.18, keeps the format). wandb 0.31 no
longer ships a Python reader, so the framing is decoded here; the records
themselves are decoded with wandb's own protobuf definitions
(``wandb.proto.wandb_internal_pb2.Record``).

Layout::

    file   := header block*
    header := ident ":W&B" (4 bytes) | magic 0xBEE1 (uint16 LE) | version 0 (uint8)
    block  := chunk* padding        (32 KiB blocks; fewer than 7 bytes left -> zero padding)
    chunk  := crc (uint32 LE) | length (uint16 LE) | type (uint8) | data[length]
    type   := 1 FULL | 2 FIRST | 3 MIDDLE | 4 LAST

``crc`` is zlib's CRC-32 of the type byte followed by the data (the checksum
wandb's Python datastore wrote and wandb-core's ``CRCAlgoIEEE`` writes for
format version 0). A chunk is checked before its record is decoded.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from mlaudit_core.errors import InputError

IDENT = b":W&B"
MAGIC = 0xBEE1
VERSION = 0
HEADER_LEN = 7
BLOCK_LEN = 32768
FULL, FIRST, MIDDLE, LAST = 1, 2, 3, 4
_CHUNK = struct.Struct("<IHB")
_CRC_SEED = [zlib.crc32(bytes([t])) for t in range(LAST + 1)]


@dataclass
class ScanResult:
    """What a scan met besides the records: the problems, one line each, for RunData.warnings."""

    path: Path
    records: int = 0
    bytes_read: int = 0
    warnings: list[str] = field(default_factory=list)


def read_header(data: bytes | memoryview, path: Path) -> None:
    """Check the 7-byte file header.

    Raises:
        InputError: if the file is not a W&B transaction log or has an unknown version.
    """
    if len(data) < HEADER_LEN:
        raise InputError(f"{path}: not a W&B run file (only {len(data)} bytes)")
    ident, magic, version = struct.unpack_from("<4sHB", data, 0)
    if ident != IDENT or magic != MAGIC:
        raise InputError(f"{path}: not a W&B run file (bad header {bytes(data[:HEADER_LEN])!r})")
    if version != VERSION:
        raise InputError(
            f"{path}: unsupported W&B run file format version {version} (mlaudit reads "
            f"version {VERSION})"
        )


def iter_payloads(data: bytes, path: Path, result: ScanResult) -> Iterator[bytes]:
    """Yield each record's serialized protobuf, in file order.

    A torn tail (the file ends inside a chunk, or a record's FIRST chunk has no
    LAST) or a chunk whose checksum does not match stops the scan: every record
    before it is kept, and one warning line is added to ``result.warnings``.
    """
    read_header(data, path)
    n = len(data)
    pos = HEADER_LEN
    parts: list[bytes] | None = None
    unpack = _CHUNK.unpack_from
    crc32 = zlib.crc32
    while pos < n:
        left = BLOCK_LEN - pos % BLOCK_LEN
        if left < HEADER_LEN:  # block trailer
            pos += left
            continue
        if pos + HEADER_LEN > n:
            result.warnings.append(_torn(path, pos, n, "inside a chunk header"))
            break
        checksum, length, kind = unpack(data, pos)
        if kind == 0 and length == 0 and checksum == 0:  # zero padding to the block end
            pos += left
            continue
        end = pos + HEADER_LEN + length
        if end > n:
            result.warnings.append(_torn(path, pos, n, "inside a record"))
            break
        if kind > LAST:
            result.warnings.append(
                f"{path}: corrupt chunk at byte {pos} (type {kind}); "
                f"kept the {result.records} records before it"
            )
            break
        chunk = data[pos + HEADER_LEN : end]
        if crc32(chunk, _CRC_SEED[kind]) != checksum:
            result.warnings.append(
                f"{path}: checksum mismatch at byte {pos}; "
                f"kept the {result.records} records before it"
            )
            break
        pos = end
        if kind == FULL:
            result.records += 1
            yield chunk
        elif kind == FIRST:
            parts = [chunk]
        elif parts is not None and kind == MIDDLE:
            parts.append(chunk)
        elif parts is not None and kind == LAST:
            parts.append(chunk)
            result.records += 1
            yield b"".join(parts)
            parts = None
        else:
            result.warnings.append(
                f"{path}: chunk sequence broken at byte {pos}; "
                f"kept the {result.records} records before it"
            )
            break
    else:
        if parts is not None:
            result.warnings.append(_torn(path, pos, n, "inside a multi-chunk record"))
    result.bytes_read = pos


def _torn(path: Path, pos: int, n: int, where: str) -> str:
    return (
        f"{path}: file ends {where} at byte {n} (truncated: the run was killed or is still "
        f"writing); read every complete record before byte {pos}"
    )


#: The most bytes of one ``.wandb`` file read (a regular file only): 1 GiB, over any run
#: file of the corpora (the largest, tests/data, is under 100 MiB)
RUN_FILE_LIMIT = 1 << 30


def iter_records(path: str | Path, result: ScanResult | None = None):
    """Yield the decoded ``wandb_internal_pb2.Record`` messages of a ``.wandb`` file.

    Args:
        path: the ``run-<id>.wandb`` file.
        result: filled with the record count and any warnings (truncation, bad checksum).

    Raises:
        InputError: the file is missing, unreadable or not a W&B run file.
        MissingDependency: wandb is not installed (its protobufs decode the records).
    """
    from mlaudit_core.plugins import require

    pb = require("wandb.proto.wandb_internal_pb2", "wandb", "wandb")
    path = Path(path)
    from mlaudit_core.boundedio import NotRegularFile, read_regular

    try:
        data = read_regular(path, RUN_FILE_LIMIT)
    except NotRegularFile:
        raise InputError(
            f"{path}: not a regular file (a FIFO, a device or a socket); a W&B "
            "run file is a regular file"
        ) from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read W&B run file: {exc.strerror or exc}") from None
    result = result if result is not None else ScanResult(path)
    if len(data) == RUN_FILE_LIMIT:
        result.warnings.append(
            f"{path}: read its first {RUN_FILE_LIMIT >> 20} MiB only; "
            "later records are not in this audit"
        )
    Record = pb.Record
    for payload in iter_payloads(data, path, result):
        rec = Record()
        try:
            rec.ParseFromString(payload)
        except Exception:  # protobuf's DecodeError; the framing checksum passed, so a newer schema
            result.warnings.append(
                f"{path}: record {result.records} does not decode with wandb "
                f"{_wandb_version()}'s protobufs; skipped"
            )
            continue
        yield rec


def _wandb_version() -> str:
    try:
        import wandb

        return wandb.__version__
    except Exception:  # pragma: no cover
        return "?"
