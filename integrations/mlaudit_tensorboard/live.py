"""``TensorBoardLiveSource``: what ``mlaudit watch tensorboard --live`` follows (the shapes
it returns are in ``mlaudit_core/live/sources.py``).

One log directory per run, or one run per run folder inside a followed directory
(``lightning_logs/version_N``: :meth:`TensorBoardLiveSource._runs`); event files and run folders
created after the watcher started are found at the next poll. Every event file is read from the
byte offset where the last poll stopped (whole records only), and console files (``*.log``,
``*.out``, ``*.txt``) in the directory from theirs.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

from mlaudit_core.live.sources import RunInfo, Tail, write_live_json

log = logging.getLogger("mlaudit.live")


class TensorBoardLiveSource:
    """Local TensorBoard log directories, one run each (see the module docstring).

    TensorBoard records no run status: a directory whose files have not grown for
    ``ended_after_s`` (default 24 h) is taken as ended and no longer polled.
    """

    tracker = "tensorboard"
    can_stop = False
    #: no run status: a stall is reported only with a heartbeat (the console still growing)
    has_status = False
    CONSOLE_SUFFIXES = (".log", ".out", ".txt")
    #: Most console bytes read per file per poll (a runaway log cannot stall the poll).
    CONSOLE_MAX_BYTES = 4 * 1024 * 1024

    def __init__(self, logdirs: list[Path], ended_after_s: float = 86400.0) -> None:
        self.logdirs = [Path(p).resolve() for p in logdirs]
        self.ended_after_s = ended_after_s
        self.requests = 0
        self._scans: dict = {}
        self._listed: dict[str, tuple[list[Path], list[Path]]] = {}

    @property
    def watching(self) -> str:
        """What is followed, for the log (``live: following ...``)."""
        n = len(self.logdirs)
        names = ", ".join(str(p) for p in self.logdirs[:3]) + (", ..." if n > 3 else "")
        return f"{n} TensorBoard log director{'y' if n == 1 else 'ies'}: {names}"

    def _files(self, root: Path) -> tuple[list[Path], list[Path]]:
        """Event files (in :func:`~mlaudit_tensorboard.reader.event_file_order`, mlaudit's own
        excluded) and console files under ``root``. The tree is kept between polls
        (:class:`~mlaudit_core.live.scan.TreeScan`): event files and ``version_N`` folders
        created after the watcher started are found at the next poll, and a poll of an
        unchanged tree costs one ``stat`` per directory (``mlaudit/`` not entered, as
        before for console files; the post-hoc reader's own event files in it are skipped
        by name anyway)."""
        from mlaudit_core.live.scan import TreeScan
        from mlaudit_tensorboard.reader import MLAUDIT_SUFFIX, event_file_order

        sc = self._scans.get(str(root))
        if sc is None:
            sc = self._scans[str(root)] = TreeScan(root)
        events, console = [], []
        for p in sc.scan():
            f = p.name
            if "tfevents" in f and not f.endswith(MLAUDIT_SUFFIX):
                events.append(p)
            elif f.endswith(self.CONSOLE_SUFFIXES):
                console.append(p)
        return sorted(events, key=event_file_order), console

    def _runs(self, root: Path) -> dict[Path, tuple[list[Path], list[Path]]]:
        """The runs under one followed log directory, as the post-hoc reader tells them apart
        (:func:`~mlaudit_tensorboard.reader.run_dirs`: a directory of event files is a run, its
        split sub-folders ``train``/``validation`` and ``add_hparams`` folder belong to it):
        ``{run directory: (event files, console files)}``. A log directory written by one
        ``SummaryWriter(LOGDIR)`` is one run, ``LOGDIR`` itself; ``lightning_logs/`` with
        ``version_0/`` and ``version_1/`` is two, and a ``version_2/`` created after the watcher
        started is a third, followed from its first poll, with its own alerts (its loss is not
        the ``version_0`` run's). A console file belongs to the run folder that holds it, or,
        above every run folder, to the run written last."""
        from mlaudit_tensorboard.reader import run_dirs

        events, console = self._files(root)
        if not events:
            return {}
        rds = run_dirs(root, events)
        rset = set(rds)
        out: dict[Path, tuple[list[Path], list[Path]]] = {rd: ([], []) for rd in rds}
        for f in events:  # run_dir_of: the event file's folder or its parent
            out[f.parent if f.parent in rset else f.parent.parent][0].append(f)

        def newest(fs: list[Path]) -> float:
            return max((_mtime(p) for p in fs), default=0.0)

        last = max(rds, key=lambda rd: newest(out[rd][0]))
        for c in console:
            owner = next((a for a in c.parents if a in rset), None)
            out[owner or last][1].append(c)
        return out

    def list_running(self) -> dict[str, RunInfo]:
        out = {}
        now = time.time()
        self._listed = {}
        for root in self.logdirs:
            if not root.is_dir():
                continue
            for rd, (events, console) in self._runs(root).items():
                newest = max(_mtime(p) for p in events + console)
                if now - newest > self.ended_after_s:
                    continue
                name = root.name if rd == root else rd.relative_to(root.parent).as_posix()
                out[str(rd)] = RunInfo(ref=str(rd), name=name, project=str(rd.parent))
                self._listed[str(rd)] = (events, console)
        return out

    def status(self, ref: str) -> str:
        root = Path(ref)
        if not root.is_dir():
            return "gone"
        return "running" if str(root) in self.list_running() else "ended"

    def read(
        self,
        infos: list[RunInfo],
        cursors: dict[str, dict],
        keys: dict[str, set[str]] | None = None,
    ) -> dict[str, Tail]:
        """New records of every event file (all tags: a file is read once either way) and new
        whole lines of the console files, from their byte offsets in ``cursors``."""
        from mlaudit_tensorboard.reader import read_event_file

        tails = {}
        for info in infos:
            root = Path(info.ref)
            cur = cursors.setdefault(info.ref, {})
            offsets = cur.setdefault("offsets", {})
            lines = cur.setdefault("lines", {})
            # a folder first followed as local files (mlaudit_core.live.files, before its first
            # event file was written): its console files go on from where that source stopped
            for name, fc in (cur.pop("files", None) or {}).items():
                if name.endswith(self.CONSOLE_SUFFIXES) and "offset" in fc:
                    offsets.setdefault(name, int(fc["offset"]))
                    lines.setdefault(name, int(fc.get("lines", 0)))
            tail = tails[info.ref] = Tail()
            # the files of this run as the listing just split them (a run folder inside a
            # followed log directory), else the folder's own
            events, console = self._listed.get(info.ref) or self._files(root)
            for f in events:
                name = str(f.relative_to(root))
                off = int(offsets.get(name, 0))
                size = f.stat().st_size
                if size <= off:
                    continue
                with open(f, "rb") as fh:
                    fh.seek(off)
                    data = fh.read(size - off)
                whole = _whole_records(data)
                if not whole:
                    continue
                self.requests += 1
                rel = f.parent.relative_to(root).as_posix()
                prefix = "" if rel == "." else rel + "/"
                pts = _decode_records(data[:whole], name, prefix, read_event_file)
                for key, (s, w, v) in pts.items():
                    acc = tail.points.setdefault(key, ([], [], []))
                    acc[0].extend(s)
                    acc[1].extend(w)
                    acc[2].extend(v)
                offsets[name] = off + whole
            for key, (s, w, v) in list(tail.points.items()):
                import numpy as np

                order = np.lexsort((np.asarray(w), np.asarray(s)))  # by step, then wall time
                tail.points[key] = (
                    np.asarray(s)[order].tolist(),
                    np.asarray(w)[order].tolist(),
                    np.asarray(v)[order].tolist(),
                )
            for f in console:
                name = str(f.relative_to(root))
                off = int(offsets.get(name, 0))
                size = f.stat().st_size
                if size < off:  # truncated or replaced: start again
                    off, lines[name] = 0, 0
                if size == off:
                    continue
                with open(f, "rb") as fh:
                    fh.seek(off)
                    data = fh.read(min(size - off, self.CONSOLE_MAX_BYTES))
                end = data.rfind(b"\n") + 1  # whole lines only
                if end == 0:
                    continue
                n0 = int(lines.get(name, 0))
                for i, line in enumerate(data[:end].decode("utf-8", "replace").splitlines()):
                    tail.console.append((name, n0 + i + 1, line))
                lines[name] = n0 + data[:end].count(b"\n")
                offsets[name] = off + end
                mtime = f.stat().st_mtime  # the console grew: the process is alive (heartbeat)
                tail.system_wall = max(tail.system_wall or 0.0, mtime)
        return tails

    def write_live(self, ref: str, tag: str, doc: dict) -> None:
        write_live_json(Path(ref) / "mlaudit" / "live.json", tag, doc)

    def end_live(self, ref: str) -> None:
        pass

    def request_stop(self, ref: str, message: str) -> str:
        return "TensorBoard has no remote stop (use mlaudit.hooks stop_on= in the training script)"


def _mtime(p: Path) -> float:
    try:
        return p.stat().st_mtime
    except OSError:  # removed since the listing
        return 0.0


def _whole_records(data: bytes) -> int:
    """Bytes of ``data`` made of whole TFRecord frames (``u64 len | u32 crc | data | u32 crc``)."""
    import struct

    off, n = 0, len(data)
    while off + 12 <= n:
        length = struct.unpack_from("<Q", data, off)[0]
        end = off + 16 + length
        if end > n:
            break
        off = end
    return off


def _decode_records(data: bytes, name: str, prefix: str, read_event_file) -> dict:
    """Scalars of whole records, through the post-hoc reader (vectorised tier + TensorBoard's
    protobuf for the rest): the bytes go to a temporary file it reads."""
    import tempfile

    with tempfile.NamedTemporaryFile(suffix=".tfevents.live", delete=True) as tmp:
        tmp.write(data)
        tmp.flush()
        notes: list[str] = []
        warnings: list[str] = []
        fp = read_event_file(Path(tmp.name), prefix, notes, warnings)
    out: dict[str, tuple[list, list, list]] = {}
    for c, name in enumerate(fp.names):  # one vectorised selection per tag
        m = fp.codes == c
        if m.any():
            out[name] = (fp.steps[m].tolist(), fp.walls[m].tolist(), fp.values[m].tolist())
    return out
