"""Local runs followed as they grow: CSV logs and console logs (``mlaudit watch PATH --live``).

:class:`LocalLiveSource`: each PATH is a run, a file or a directory; a directory whose files
are all in sub-folders holds one run per top-level sub-folder (:meth:`LocalLiveSource.runs_of`).
Files and folders created after the watcher started are found at the next poll
(:class:`~mlaudit_core.live.scan.TreeScan`: only directories that changed are listed again).

* CSV (``*.csv``: Keras ``CSVLogger``, Lightning ``CSVLogger``, Ultralytics ``results.csv``,
  timm ``summary.csv``, any ``step,loss,...`` table): the header is read once, then only the
  rows appended since the last poll (whole lines from the saved byte offset). The step is
  the first column named ``step``/``global_step``/``iteration``/``iter``/``epoch`` (else the
  row number); every other numeric column is a series. A file that shrank was rewritten:
  it is read again from its start. A file whose header line changed was rewritten with new
  columns (Lightning's ``CSVLogger`` rewrites the whole file, header sorted, when a new key
  is logged): it is read again under the new header, the rows already read skipped. A file
  replaced under the same name (another inode: ``os.replace``, log rotation) or rewritten in
  place (the bytes before the saved offset changed) is read again from its start, even when
  it is already longer than the offset (see :meth:`LocalLiveSource._replaced`).
* Console logs (``*.log``, ``*.out``, ``*.txt``, or a file given as PATH): appended whole
  lines go through the same console-log engine as ``mlaudit logs``
  (:class:`mlaudit_core.formats.consolelog.parser.LogParser`: HF Trainer dicts, Lightning
  and Keras progress lines, ``key=value`` lines...), kept per file for the watcher's life, so
  formats that print the step on another line keep it; the metric points it emits become
  the tail, and the lines themselves feed LV007 (NCCL/OOM) and the stall evidence. A
  console that keeps growing while no training point arrives is the heartbeat (LV005).
  After a watcher restart the parser resumes at the saved byte offset with a fresh state.
* A directory: its CSV and console files (not under ``mlaudit/``), at most ``MAX_FILES``.
  A directory holding TensorBoard event files is followed by the TensorBoard plugin's
  source instead (:class:`CompositeSource` routes each PATH to the source that reads it, and
  offers a folder to the plugins again when something was created in it).

No run status exists for a local file: a path that has not grown for ``ended_after_s``
(24 h) is taken as ended, and a stall is reported only with a heartbeat (see
:meth:`~mlaudit_core.live.detectors.LiveRun.conditions`, ``status_known=False``). Alerts are
written to ``<dir>/mlaudit/live.json`` (a directory) or ``<parent>/mlaudit/live-<name>.json``
(a file). Nothing can be stopped remotely: use ``mlaudit.hooks`` ``stop_on=`` in the script.
"""

from __future__ import annotations

import csv
import hashlib
import io
import logging
import math
import os
import time
from pathlib import Path
from typing import Any

from .scan import TreeScan
from .sources import RunInfo, Tail, write_live_json

log = logging.getLogger("mlaudit.live")

CONSOLE_SUFFIXES = (".log", ".out", ".txt")
#: Step columns, in order of preference (lower-case header names).
STEP_COLUMNS = ("step", "global_step", "iteration", "iter", "epoch")
#: Files followed per directory (the newest first); a directory of thousands of logs is not one run.
MAX_FILES = 64
#: Most bytes read per file per poll: a runaway log cannot stall the poll.
#: The most bytes read from one file at one poll; a line longer than this (no newline in a
#: whole read: a binary blob, NUL padding of a preallocated log) is skipped to its newline and
#: said in the run's notes (break-it pass 3: the reader waited for its end forever)
MAX_BYTES = 8 * 1024 * 1024
#: More than this appended to one file since the last poll (a 1 GiB dump) is skipped to the
#: newest MAX_BYTES, so an alert on the newest lines is not 128 polls late (break-it pass 3:
#: over 10 minutes after a 1 GiB append); the skip is said in the run's notes
BACKLOG_BYTES = 64 * 1024 * 1024
#: Bytes before the saved offset compared at each poll (a file rewritten in place).
MARK_BYTES = 64
#: First bytes whose hash tells a replaced file that holds the same history from one that does not.
HEAD_BYTES = 4096


def _num(text: str) -> float | None:
    t = text.strip()
    if not t:
        return None
    try:
        return float(t)
    except ValueError:
        low = t.lower()
        if low in ("nan", "inf", "-inf", "+inf", "infinity", "-infinity"):
            return float(low.replace("infinity", "inf"))
        return None


def _mtime(p: Path) -> float:
    try:
        return p.stat().st_mtime
    except OSError:  # removed since the listing
        return 0.0


def is_csv(p: Path) -> bool:
    """A ``*.csv`` file, or a ``*.log``/``*.txt`` file whose header is a Keras ``CSVLogger``'s
    (Keras' own example writes ``CSVLogger('training.log')``; read as a console log it gave no
    point at all). Decided on the header line at read time, so a file still empty is not
    classified until its header is written."""
    suffix = p.suffix.lower()
    if suffix == ".csv":
        return True
    if suffix in (".log", ".txt") and p.is_file():
        from ..formats import keras_csv

        return keras_csv.sniff(p) > 0
    return False


#: Live locks this process holds, by run path (shared by every source object: a folder
#: re-offered to a tracker plugin and back is the same watcher)
_HELD: dict[str, int] = {}


class LocalLiveSource:
    """CSV and console-log runs (see the module docstring)."""

    tracker = "local"
    can_stop = False
    has_status = False

    def __init__(
        self, paths: list[Path], ended_after_s: float = 86400.0, exclusive: bool = False
    ) -> None:
        self.paths = [Path(p).resolve() for p in paths]
        #: follow only the runs whose live lock this process holds (``mlaudit watch --live``)
        self.exclusive = exclusive
        self.ended_after_s = ended_after_s
        self.requests = 0
        self._parsers: dict[str, Any] = {}  # _TailParser objects (a class built on first use)
        self._scans: dict[str, TreeScan] = {}
        self._listed: dict[str, list[Path]] = {}
        self._locks: dict[str, int | None] = {}  # run -> the descriptor of its held lock
        self._others: set[str] = set()  # runs another watcher follows (said once)

    def _own(self, run: Path) -> bool:
        """Whether this watcher follows ``run``: it holds the run's live lock (``flock`` on
        ``$XDG_CACHE_HOME/mlaudit/live-locks/<sha1 of the run path>.lock``, released by the
        kernel when the process ends, SIGKILL included; nothing is created in the run's
        folder). Two watchers started on one path would otherwise both alert every episode.
        A run whose lock cannot be created is followed without one."""
        ref = str(run)
        if ref in self._locks or ref in _HELD:  # this process holds it (any source object)
            return True
        cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
        lock = cache / "mlaudit" / "live-locks" / (hashlib.sha1(ref.encode()).hexdigest() + ".lock")
        try:
            import fcntl

            lock.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
        except (OSError, ImportError):
            self._locks[ref] = None
            return True
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            if ref not in self._others:
                self._others.add(ref)
                log.warning(
                    "run %s: followed by another live watcher (it holds the run's lock "
                    "%s); not alerted here",
                    ref,
                    lock,
                )
            return False
        self._locks[ref] = _HELD[ref] = fd
        self._others.discard(ref)
        return True

    @property
    def watching(self) -> str:
        """What is followed, for the log (``live: following ...``)."""
        return _paths_text(self.paths, "local path")

    def scan_of(self, root: Path) -> TreeScan:
        """The :class:`~mlaudit_core.live.scan.TreeScan` of one followed directory."""
        sc = self._scans.get(str(root))
        if sc is None:
            sc = self._scans[str(root)] = TreeScan(root)
        return sc

    def files(self, root: Path) -> list[Path]:
        """The CSV and console files of one run (``root`` itself when it is a file), at most
        :data:`MAX_FILES` (the newest). The directory's tree is kept between calls
        (:class:`~mlaudit_core.live.scan.TreeScan`): files created since the last poll are
        found without walking the whole tree again."""
        if root.is_file():
            return [root]
        out = []
        for p in self.scan_of(root).scan():
            if p.suffix.lower() in CONSOLE_SUFFIXES or is_csv(p):
                out.append(p)
        out.sort(key=_mtime, reverse=True)
        return sorted(out[:MAX_FILES])

    @staticmethod
    def runs_of(root: Path, files: list[Path]) -> dict[Path, list[Path]]:
        """The runs of one followed PATH: ``{run path: its files}``. A file, or a folder with
        followed files directly in it, is one run (everything below included). A folder whose
        files are all in sub-folders (``lightning_logs/version_N/metrics.csv``,
        ``runs/train/exp*/results.csv``) holds one run per top-level sub-folder: a
        ``version_2/`` created after the watcher started is a run of its own from its first
        poll, and its ``train_loss`` column is not merged with the earlier versions'."""
        if root.is_file() or any(f.parent == root for f in files):
            return {root: files} if files else {}
        out: dict[Path, list[Path]] = {}
        for f in files:
            out.setdefault(root / f.relative_to(root).parts[0], []).append(f)
        return out

    def list_running(self) -> dict[str, RunInfo]:
        now = time.time()
        out = {}
        self._listed = {}
        for root in self.paths:
            if not root.exists():
                continue
            for run, fs in self.runs_of(root, self.files(root)).items():
                if now - max(_mtime(p) for p in fs) > self.ended_after_s:
                    continue
                if self.exclusive and not self._own(run):
                    continue
                name = root.name if run == root else run.relative_to(root.parent).as_posix()
                out[str(run)] = RunInfo(ref=str(run), name=name, project=str(run.parent))
                self._listed[str(run)] = fs
        return out

    def status(self, ref: str) -> str:
        if not Path(ref).exists():
            return "gone"
        return "running" if ref in self.list_running() else "ended"

    # -- reading ---------------------------------------------------------------------------
    def read(
        self,
        infos: list[RunInfo],
        cursors: dict[str, dict],
        keys: dict[str, set[str]] | None = None,
    ) -> dict[str, Tail]:
        tails = {}
        for info in infos:
            root = Path(info.ref)
            cur = cursors.setdefault(info.ref, {})
            files = cur.setdefault("files", {})
            tail = tails[info.ref] = Tail()
            # the run's files as the listing just split them (a run folder inside a followed
            # folder), else its own
            for f in self._listed.get(info.ref) or self.files(root):
                name = f.name if root.is_file() else str(f.relative_to(root))
                fc = files.setdefault(name, {"offset": 0, "lines": 0})
                if self._replaced(f, fc):
                    tail.notes.append(
                        f"{name}: the file was replaced or rewritten since the last "
                        "poll; read again from its start"
                        + (
                            f" (its first {fc['skip']} line(s) already read)"
                            if fc.get("skip")
                            else ""
                        )
                    )
                if is_csv(f):
                    self._check_header(f, fc)
                data = self._new_bytes(f, fc)
                if fc.get("note"):
                    tail.notes.append(f"{name}: {fc.pop('note')}")
                if data is None:
                    continue
                self.requests += 1
                if is_csv(f):
                    self._csv(data, fc, tail, name)
                else:
                    self._console(info.ref, name, data, fc, tail)
                    tail.system_wall = max(tail.system_wall or 0.0, f.stat().st_mtime)
            self._normalize(tail)
        return tails

    @staticmethod
    def _check_header(f: Path, fc: dict) -> None:
        """A CSV whose first line is no longer the header read: rewritten with new columns,
        so read it again from the start, skipping the data rows already read."""
        head = fc.get("head")
        if head is None or not fc.get("offset") or f.stat().st_size < int(fc["offset"]):
            return  # nothing read yet, or shrunk: read again from the start (_new_bytes)
        with open(f, "rb") as fh:
            first = fh.readline(MAX_BYTES).decode("utf-8", "replace").rstrip("\r\n")
        if first != head:
            skip = int(fc.get("lines", 0))
            fc.clear()
            fc.update(offset=0, lines=0, skip=skip)

    @staticmethod
    def _replaced(f: Path, fc: dict) -> bool:
        """Whether the file under this name is no longer the one the cursor read: another
        file (device and inode changed: ``os.replace`` of an atomic save, a rotated log) or
        the same file rewritten in place (the bytes just before the saved offset changed). A
        size check alone misses a replacement that is already larger than the offset (the
        tail then read on from mid-file). The file is then read again from its start; when
        its first bytes are those already read (the same history rewritten with more rows)
        or a CSV's header changed (new columns: Lightning's rewrite, see
        :meth:`_check_header`), the lines already read are skipped, else (another run in its
        place) all are read."""
        st = f.stat()
        ident = [st.st_dev, st.st_ino]
        off = int(fc.get("offset", 0))
        if fc.get("ino") is None or not off:
            fc["ino"] = ident
            return False
        same = fc["ino"] == ident
        if same and fc.get("mark") and st.st_size >= off:
            mark = bytes.fromhex(fc["mark"])
            with open(f, "rb") as fh:
                fh.seek(off - len(mark))
                same = fh.read(len(mark)) == mark
        if same:
            return False
        skip = 0
        n = int(fc.get("h0n") or 0)
        with open(f, "rb") as fh:
            if n and st.st_size >= n and hashlib.sha1(fh.read(n)).hexdigest() == fc.get("h0"):
                skip = int(fc.get("lines", 0))
            elif fc.get("head") is not None:  # a CSV: its header line changed?
                fh.seek(0)
                first = fh.readline(MAX_BYTES).decode("utf-8", "replace").rstrip("\r\n")
                if first and first != fc["head"]:  # new columns: as _check_header
                    skip = int(fc.get("lines", 0))
        fc.clear()
        fc.update(offset=0, lines=0, ino=ident)
        if skip:
            fc["skip"] = skip
        return True

    @staticmethod
    def _new_bytes(f: Path, fc: dict) -> bytes | None:
        size = f.stat().st_size
        off = int(fc.get("offset", 0))
        if size < off:  # truncated or rewritten: from the start again
            fc.clear()
            fc.update(offset=0, lines=0)
            off = 0
        if size == off:
            return None
        if size - off > BACKLOG_BYTES and off > 0:
            off = LocalLiveSource._skip_backlog(f, fc, off, size)
        with open(f, "rb") as fh:
            fh.seek(off)
            data = fh.read(min(size - off, MAX_BYTES))
        if fc.get("overlong"):  # inside a line longer than MAX_BYTES: dropped to its end
            nl = data.find(b"\n")
            drop = data if nl == -1 else data[: nl + 1]
            fc["offset"] = off = off + len(drop)
            fc["mark"] = (bytes.fromhex(fc.get("mark") or "") + drop)[-MARK_BYTES:].hex()
            if nl == -1:
                return None
            fc["lines"] = int(fc.get("lines", 0)) + 1
            fc["note"] = (
                f"line {fc['lines']} is longer than {MAX_BYTES >> 20} MiB (no newline "
                "in it): skipped; reading goes on after it"
            )
            del fc["overlong"]
            data = data[nl + 1 :]
        end = data.rfind(b"\n") + 1  # whole lines only: a line being written waits
        if end == 0:
            if len(data) >= MAX_BYTES:  # a whole read without a newline: an over-long line
                fc["offset"] = off + len(data)
                fc["mark"] = (bytes.fromhex(fc.get("mark") or "") + data)[-MARK_BYTES:].hex()
                fc["overlong"] = True
            return None
        fc["offset"] = off + end
        # identity marks (:meth:`_replaced`): the last bytes before the offset, and a hash of
        # the file's first bytes (up to HEAD_BYTES)
        fc["mark"] = (bytes.fromhex(fc.get("mark") or "") + data[:end])[-MARK_BYTES:].hex()
        if int(fc.get("h0n") or 0) < HEAD_BYTES and off < HEAD_BYTES:
            n = min(HEAD_BYTES, off + end)
            with open(f, "rb") as fh:
                fc["h0"], fc["h0n"] = hashlib.sha1(fh.read(n)).hexdigest(), n
        return data[:end]

    @staticmethod
    def _skip_backlog(f: Path, fc: dict, off: int, size: int) -> int:
        """Move the cursor over a backlog (more than :data:`BACKLOG_BYTES` appended since the
        last poll) to the start of the line that holds the last :data:`MAX_BYTES`; the lines
        skipped are counted (line numbers stay right) and said in the run's notes. Returns
        the new offset."""
        target = size - MAX_BYTES
        lines = 0
        with open(f, "rb") as fh:
            fh.seek(off)
            pos = off
            while pos < target:
                chunk = fh.read(min(MAX_BYTES, target - pos))
                if not chunk:
                    break
                lines += chunk.count(b"\n")
                pos += len(chunk)
            rest = fh.read(1 << 20)  # on to the end of the line the target falls in
            nl = rest.find(b"\n")
            if nl == -1:
                return off  # no line end near: read on as usual
            lines += 1
            new = pos + nl + 1
            fh.seek(max(0, new - MARK_BYTES))
            fc["mark"] = fh.read(new - max(0, new - MARK_BYTES)).hex()
        first = int(fc.get("lines", 0)) + 1
        fc["lines"] = int(fc.get("lines", 0)) + lines
        fc["offset"] = new
        fc.pop("overlong", None)
        fc["note"] = (
            f"{(new - off) / (1 << 20):.0f} MiB appended since the last poll: lines "
            f"{first}-{fc['lines']} skipped, the newest {MAX_BYTES >> 20} MiB read (a "
            "live watcher follows the newest lines; the post-hoc audit reads all)"
        )
        return new

    @staticmethod
    def _csv(data: bytes, fc: dict, tail: Tail, name: str) -> None:
        text = data.decode("utf-8", "replace")
        rows = list(csv.reader(io.StringIO(text)))
        if fc.get("header") is None:
            if not rows:
                return
            fc["header"] = [h.strip() for h in rows[0]]
            fc["head"] = text.split("\n", 1)[0].rstrip("\r")
            rows = rows[1:]
        header = fc["header"]
        low = [h.lower() for h in header]
        step_col = next((low.index(c) for c in STEP_COLUMNS if c in low), None)
        n0 = int(fc.get("lines", 0))
        skip = int(fc.pop("skip", 0))  # rows read before the file was rewritten
        if skip > len(rows):
            fc["skip"] = skip - len(rows)
        for i, row in enumerate(rows):
            if not row or row == header or i < skip:  # a header repeated by a restarted logger
                continue
            step = None
            if step_col is not None and step_col < len(row):
                x = _num(row[step_col])
                step = int(x) if x is not None and math.isfinite(x) else None
            if step is None:
                step = n0 + i
            for j, cell in enumerate(row[: len(header)]):
                if j == step_col:
                    continue
                x = _num(cell)
                if x is None:
                    continue
                acc = tail.points.setdefault(header[j], ([], [], []))
                acc[0].append(step)
                acc[1].append(None)
                acc[2].append(x)
        fc["lines"] = n0 + len(rows)

    def _console(self, ref: str, name: str, data: bytes, fc: dict, tail: Tail) -> None:
        parser = self._parsers.get(f"{ref}::{name}")
        if parser is None:
            parser = self._parsers[f"{ref}::{name}"] = _TailParser()
        n0 = int(fc.get("lines", 0))
        lines = data.decode("utf-8", "replace").splitlines()
        skip = int(fc.pop("skip", 0))  # lines read before the file was replaced by a longer copy
        if skip > len(lines):
            fc["skip"] = skip - len(lines)
        for i, line in enumerate(lines):
            if i < skip:
                continue
            tail.console.append((name, n0 + i + 1, line))
            parser.feed(n0 + i + 1, line, name)
        fc["lines"] = n0 + len(lines)
        for key, step, value, wall in parser.take():
            acc = tail.points.setdefault(key, ([], [], []))
            acc[0].append(step)
            acc[1].append(wall)
            acc[2].append(value)

    @staticmethod
    def _normalize(tail: Tail) -> None:
        """Each key's points in step order; walls None (the monitor's clock) unless all known."""
        for k, (s, w, v) in list(tail.points.items()):
            order = sorted(range(len(s)), key=lambda i: s[i])
            walls = None if any(w[i] is None for i in order) else [w[i] for i in order]
            tail.points[k] = ([s[i] for i in order], walls, [v[i] for i in order])

    # -- writing ---------------------------------------------------------------------------
    def write_live(self, ref: str, tag: str, doc: dict) -> None:
        p = Path(ref)
        write_live_json(
            (p / "mlaudit" / "live.json")
            if p.is_dir()
            else (p.parent / "mlaudit" / f"live-{p.name}.json"),
            tag,
            doc,
        )

    def end_live(self, ref: str) -> None:
        pass

    def request_stop(self, ref: str, message: str) -> str:
        return "a local log has no remote stop (use mlaudit.hooks stop_on= in the training script)"


def _tail_parser_class():
    from ..formats.consolelog.parser import LogParser

    class TailParser(LogParser):
        """The console engine, keeping each emitted point until :meth:`take` (no console
        retention: the live source keeps its own lines)."""

        def __init__(self) -> None:
            super().__init__(keep_console=False)
            self._fresh: list[tuple[str, int, float, float | None]] = []

        def _emit_all(self, rec, step, epoch, events=()):
            super()._emit_all(rec, step, epoch, events)
            wall = None if math.isnan(self.wall) else float(self.wall)
            for k, v in rec.items():
                self._fresh.append((k, int(step), float(v), wall))

        def take(self):
            out, self._fresh = self._fresh, []
            return out

    return TailParser


_TAIL_PARSER = None


def _TailParser():  # noqa: N802 - a lazily built class
    global _TAIL_PARSER
    if _TAIL_PARSER is None:
        _TAIL_PARSER = _tail_parser_class()
    return _TAIL_PARSER()


def _paths_text(paths: list[Path], what: str) -> str:
    """``following 2 local paths: /a, /b`` (the first 3 named)."""
    names = ", ".join(str(p) for p in paths[:3]) + (
        f", ... ({len(paths) - 3} more)" if len(paths) > 3 else ""
    )
    return (
        f"{len(paths)} {what}{'s' if len(paths) != 1 else ''}: {names}" if paths else f"no {what}s"
    )


class CompositeSource:
    """Several live sources as one: each run belongs to the source that listed it.

    ``claim(paths) -> (sources, unclaimed)`` (:func:`mlaudit_core.plugins.local_live_sources`)
    re-offers the directories of ``local`` (the :class:`LocalLiveSource` of the paths no
    plugin claimed at start) whenever their tree changed: a folder given before its training
    wrote the first TensorBoard event file (or W&B offline record) is handed to the plugin's
    source at the first poll that sees the file. The cost is one cached tree scan per folder
    and poll (:class:`~mlaudit_core.live.scan.TreeScan`), and a plugin check only for a folder
    in which something was created. A claimed folder's cursor moves with it (the plugin's
    source reads the console files on from where the local source stopped)."""

    tracker = "local"
    can_stop = False
    has_status = False

    def __init__(self, sources: list, claim=None) -> None:
        self.sources = sources
        self.claim = claim
        self._owner: dict[str, object] = {}
        self._offered: dict[str, int] = {}  # root -> its scan generation last offered

    @property
    def watching(self) -> str:
        parts = [getattr(s, "watching", None) or s.tracker for s in self.sources]
        return "; ".join(parts)

    @property
    def requests(self) -> int:
        return sum(getattr(s, "requests", 0) for s in self.sources)

    def _reoffer(self) -> None:
        local = next((s for s in self.sources if isinstance(s, LocalLiveSource)), None)
        if self.claim is None or local is None:
            return
        offer = []
        for root in local.paths:
            if root.is_dir():
                local.files(root)  # scans the tree (cached): was anything created in it?
                gen = local.scan_of(root).generation
                if self._offered.get(str(root)) != gen:
                    self._offered[str(root)] = gen
                    offer.append(root)
        if not offer:
            return
        try:
            got, rest = self.claim(offer)
        except Exception as exc:  # noqa: BLE001 - a broken plugin never breaks the watcher
            log.warning("live: could not offer %s to the tracker plugins: %s", offer, exc)
            return
        claimed = [p for p in offer if p not in rest]
        if not claimed:
            return
        local.paths = [p for p in local.paths if p not in claimed]
        for p in claimed:
            log.info("live: %s now holds a run a tracker plugin reads; followed by it", p)
        self.sources.extend(got)

    def list_running(self) -> dict[str, RunInfo]:
        self._reoffer()
        out = {}
        for s in self.sources:
            got = s.list_running()
            for ref in got:
                self._owner[ref] = s
            out.update(got)
        return out

    def _of(self, ref: str):
        return self._owner.get(ref) or self.sources[0]

    def tracker_of(self, ref: str) -> str:
        """The tracker name of the source that follows ``ref`` (``tensorboard``, ``local``...)."""
        return self._of(ref).tracker

    def status(self, ref: str) -> str:
        return self._of(ref).status(ref)

    def read(self, infos, cursors, keys=None):
        out = {}
        for s in self.sources:
            mine = [i for i in infos if self._of(i.ref) is s]
            if mine:
                out.update(s.read(mine, cursors, keys))
        return out

    def write_live(self, ref, tag, doc):
        return self._of(ref).write_live(ref, tag, doc)

    def end_live(self, ref):
        return self._of(ref).end_live(ref)

    def request_stop(self, ref, message):
        return self._of(ref).request_stop(ref, message)
