"""``WandbOfflineLiveSource``: a W&B run being written offline, followed live
(``mlaudit watch wandb/offline-run-... --live``).

An offline run (``WANDB_MODE=offline``, or a cluster without network) writes its transaction
log ``run-<id>.wandb`` as it trains (wandb-core flushes it every few seconds) and its console
to ``files/output.log``. Each poll reads only what was appended since the last one:

* the ``.wandb`` from the byte offset where the last complete record ended (the file's
  LevelDB-log framing, :mod:`.records`, decoded from that offset: 32 KiB blocks are aligned
  on the file's start, so the absolute offset is kept); ``history`` records give the points
  (``_step``, ``_timestamp`` and every numeric item), ``stats`` records the heartbeat (system
  metrics), ``output_raw``/``output`` records the console lines; an ``exit`` record ends
  the run (the status a stall needs: an offline run that stopped writing without an exit
  record is still running or was killed);
* a record cut by the end of the file waits for the next poll.

The live finding is written to ``<run dir>/mlaudit/live.json`` (``wandb sync`` uploads the
run's ``files/`` and leaves it out); an offline run cannot be stopped remotely: use
``mlaudit.hooks`` ``stop_on=`` in the script.

Tested with the real wandb SDK logging offline in a subprocess (tests/test_live_trackers.py).
"""

from __future__ import annotations

import logging
import math
import os
from pathlib import Path

from mlaudit_core.live.sources import RunInfo, Tail, write_live_json

log = logging.getLogger("mlaudit.live")

#: Most bytes of the ``.wandb`` read per run per poll (the rest at the next poll).
MAX_BYTES = 64 * 1024 * 1024
_NUMBER_START = frozenset("-0123456789NI")


def run_dirs(paths: list[Path]) -> list[Path]:
    """The W&B run folders among ``paths`` (a folder holding a ``run-<id>.wandb``)."""
    return [Path(p) for p in paths if Path(p).is_dir() and any(Path(p).glob("run-*.wandb"))]


def _payloads(data: bytes, base: int) -> tuple[list[bytes], int]:
    """The complete records in ``data`` (the file's bytes from absolute offset ``base``, a
    record boundary) and the absolute offset after the last one (where the next read
    starts). Framing: :mod:`.records` (7-byte chunk headers, 32 KiB blocks)."""
    from .records import BLOCK_LEN, FIRST, FULL, HEADER_LEN, LAST, MIDDLE, read_header

    pos = base
    if base == 0:
        if len(data) < HEADER_LEN:
            return [], 0
        read_header(data, Path("run.wandb"))
        pos = HEADER_LEN
    end_abs = base + len(data)
    out: list[bytes] = []
    parts: list[bytes] | None = None
    done = pos  # after the last complete record
    import struct
    import zlib

    chunk_hdr = struct.Struct("<IHB")
    while pos < end_abs:
        left = BLOCK_LEN - pos % BLOCK_LEN
        if left < HEADER_LEN:
            pos += left
            if parts is None:
                done = pos
            continue
        if pos + HEADER_LEN > end_abs:
            break
        checksum, length, kind = chunk_hdr.unpack_from(data, pos - base)
        if kind == 0 and length == 0 and checksum == 0:
            pos += left
            if parts is None:
                done = pos
            continue
        end = pos + HEADER_LEN + length
        if end > end_abs:
            break
        chunk = data[pos - base + HEADER_LEN : end - base]
        if kind > LAST or zlib.crc32(chunk, zlib.crc32(bytes([kind]))) != checksum:
            break  # being written (or corrupt): read again from `done` at the next poll
        pos = end
        if kind == FULL:
            out.append(chunk)
            done = pos
        elif kind == FIRST:
            parts = [chunk]
        elif parts is not None and kind == MIDDLE:
            parts.append(chunk)
        elif parts is not None and kind == LAST:
            parts.append(chunk)
            out.append(b"".join(parts))
            parts = None
            done = pos
        else:
            break
    return out, done


class WandbOfflineLiveSource:
    """Offline W&B run folders being written (see the module docstring)."""

    tracker = "wandb"
    can_stop = False

    def __init__(self, paths: list[Path]) -> None:
        self.paths = [Path(p).resolve() for p in paths]
        self.requests = 0
        self._ended: set[str] = set()

    def _log(self, root: Path) -> Path | None:
        found = sorted(root.glob("run-*.wandb"))
        return found[-1] if found else None

    def list_running(self) -> dict[str, RunInfo]:
        out = {}
        for root in self.paths:
            if str(root) in self._ended or self._log(root) is None:
                continue
            out[str(root)] = RunInfo(ref=str(root), name=root.name, project=str(root.parent))
        return out

    def status(self, ref: str) -> str:
        if not Path(ref).exists():
            return "gone"
        return "ended" if ref in self._ended else "running"

    def read(
        self,
        infos: list[RunInfo],
        cursors: dict[str, dict],
        keys: dict[str, set[str]] | None = None,
    ) -> dict[str, Tail]:
        from mlaudit_core.plugins import require

        pb = require("wandb.proto.wandb_internal_pb2", "wandb", "wandb")
        tails: dict[str, Tail] = {}
        for info in infos:
            tail = tails[info.ref] = Tail()
            cur = cursors.setdefault(info.ref, {})
            f = self._log(Path(info.ref))
            if f is None:
                continue
            off = int(cur.get("off", 0))
            try:
                size = os.path.getsize(f)
                if size < off:  # another run file in its place: from its start
                    off, cur["rows"] = 0, 0
                if size == off:
                    continue
                with open(f, "rb") as fh:
                    fh.seek(off)
                    data = fh.read(min(size - off, MAX_BYTES))
                payloads, done = _payloads(data, off)
            except Exception as exc:  # noqa: BLE001 - InputError (not a run file) or I/O: next poll
                log.warning("reading %s failed (%s); retried at the next poll", f, exc)
                continue
            self.requests += 1
            rows = int(cur.get("rows", 0))
            partial = cur.get("partial", "")
            n_line = int(cur.get("lines", 0))
            for payload in payloads:
                rec = pb.Record()
                try:
                    rec.ParseFromString(payload)
                except Exception:  # noqa: BLE001 - a newer schema: skip the record
                    continue
                kind = rec.WhichOneof("record_type")
                if kind == "history":
                    rows = self._history(rec.history, rows, tail)
                elif kind == "stats":
                    ts = rec.stats.timestamp
                    tail.system_wall = max(tail.system_wall or 0.0, ts.seconds + ts.nanos / 1e9)
                elif kind in ("output_raw", "output"):
                    line = getattr(rec, kind).line
                    if kind == "output" and not line.endswith("\n"):
                        line += "\n"  # an ``output`` record is one whole line
                    text = partial + line
                    *lines, partial = text.split("\n")
                    for line in lines:
                        n_line += 1
                        tail.console.append(("output.log", n_line, line.rstrip("\r")))
                elif kind == "exit":
                    self._ended.add(info.ref)
            cur.update(off=done, rows=rows, partial=partial[-4096:], lines=n_line)
        for t in tails.values():
            for k, (s, w, v) in list(t.points.items()):
                order = sorted(range(len(s)), key=lambda i: s[i])
                walls = None if any(w[i] is None for i in order) else [w[i] for i in order]
                t.points[k] = ([s[i] for i in order], walls, [v[i] for i in order])
        return tails

    @staticmethod
    def _history(h, rows: int, tail: Tail) -> int:
        from .mapping import RESERVED

        step, wall, vals = None, None, []
        for it in h.item:
            key = it.nested_key[0] if len(it.nested_key) == 1 else it.key
            if not key:
                continue  # nested dicts: not read live
            vj = it.value_json
            if key in RESERVED:
                try:
                    if key == "_step":
                        step = int(float(vj))
                    elif key == "_timestamp":
                        wall = float(vj)
                except ValueError:
                    pass
                continue
            x = None
            if vj and vj[0] in _NUMBER_START:
                try:
                    x = float(vj)
                except ValueError:
                    x = None
            elif not vj:
                which = it.WhichOneof("value") if "value" in it.DESCRIPTOR.oneofs_by_name else None
                x = float(getattr(it, which)) if which in ("number", "integer") else None
            if x is not None:
                vals.append((key, x))
        if step is None:
            step = h.step.num if h.HasField("step") and h.step.num else rows
        for key, x in vals:
            acc = tail.points.setdefault(key, ([], [], []))
            acc[0].append(step)
            acc[1].append(wall if wall is not None and math.isfinite(wall) else None)
            acc[2].append(x)
        return rows + 1

    def write_live(self, ref: str, tag: str, doc: dict) -> None:
        write_live_json(Path(ref) / "mlaudit" / "live.json", tag, doc)

    def end_live(self, ref: str) -> None:
        pass

    def request_stop(self, ref: str, message: str) -> str:
        return (
            "an offline W&B run has no remote stop (use mlaudit.hooks stop_on= in the "
            "training script)"
        )
