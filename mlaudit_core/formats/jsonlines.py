"""JSON-lines training logs: one JSON object per line.

Dialects, told apart by their keys (the first readable lines):

``detectron2``     ``output/metrics.json``: ``iteration``, ``total_loss``, ``lr``...;
                   evaluation lines (``bbox/AP``, ``segm/AP``...) at their iteration.
``mmdetection``    ``work_dirs/*/<time>.log.json`` (mmdet 2.x): ``mode`` train/val,
                   ``epoch``, ``iter`` within the epoch; validation keys get ``val/``.
                   The step is (epoch - 1) x iterations per epoch + iter. mmengine's
                   ``vis_data/scalars.json`` has a ``step`` and is read as it is.
``detr``           DETR / Deformable-DETR / DINO ``log.txt``: one object per epoch
                   (``train_loss``, ``test_loss``, ``test_coco_eval_bbox`` list whose
                   first two entries become ``test_coco_eval_bbox/AP`` and ``/AP50``);
                   the epoch is the step axis.
``llamafactory``   LLaMA-Factory ``trainer_log.jsonl``: ``current_steps``,
                   ``total_steps`` (to params as ``max_steps``), ``loss``, ``lr``, ``epoch``,
                   ``eval_loss``.
``generic``        any other objects with a ``step``/``iteration``/``iter``/``epoch`` key.

Values that are not numbers (strings, lists) are left out, except the ones above;
``NaN``/``Infinity`` (Python's JSON) are kept as points. Lines that are not JSON are
counted in a warning (a cut last line is named as such); lines over
:data:`MAX_LINE` (1 MiB) and lines nested too deeply for the decoder are skipped and
counted in the report's warnings, which name the first line numbers. Parsing is ``json.loads`` per line (the stdlib C scanner;
``benchmarks/ingest.py`` compares it with ``pandas.read_json(lines=True)``).
"""

from __future__ import annotations

import itertools
import json
from array import array
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError
from ._common import check_text, head, wide_run

NAME = "jsonlines"
DETECTS = "JSON-lines training log (one JSON object per line)"
#: Longest line read, in bytes; a longer line is read past in pieces of this size (never
#: held whole) and counted in a warning. The console reader's and the CSV reader's cap:
#: the longest real line we know, mmdetection's ``env_info``/``config`` first line, is tens of KiB.
MAX_LINE = 1 << 20
_FILES = ("metrics.json", "trainer_log.jsonl", "log.txt", "scalars.json")


def _first_objects(p: Path, n: int = 5) -> list[dict]:
    """The first ``n`` JSON objects among the first lines of ``p`` (for sniffing).

    Reads the first 64 KiB; when a line there is cut (one line longer than that, e.g. a
    deeply nested or huge first record), reads on past it, up to :data:`MAX_LINE` more bytes
    in all, so that one enormous line does not hide the log behind it. Lines that are not
    JSON objects (cut, nested too deeply, arrays) are passed over.
    """
    data = head(p, 65536)
    if not data or b"\x00" in data or not data.lstrip().startswith((b"{", b"[")):
        return []
    if len(data) == 65536 and data.count(b"\n") < n + 1:
        try:
            with open(p, "rb") as fh:
                data = fh.read(65536 + MAX_LINE)
        except OSError:
            return []
        if b"\x00" in data:
            return []
    out = []
    for line in data.split(b"\n")[: n + 8]:
        line = line.strip()
        if not line or len(line) > MAX_LINE:
            continue
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError):  # a cut line, or nesting deeper than Python's stack
            continue
        if isinstance(obj, dict):
            out.append(obj)
        if len(out) >= n:
            break
    return out


def dialect(objs: list[dict]) -> str | None:
    keys = set().union(*(o.keys() for o in objs)) if objs else set()
    if not keys:
        return None
    if "iteration" in keys and any("loss" in k for k in keys):
        return "detectron2"
    if "env_info" in keys or ("mode" in keys and "iter" in keys):
        return "mmdetection"
    if "current_steps" in keys:
        return "llamafactory"
    if "epoch" in keys and ({"train_loss", "test_loss"} & keys or "n_parameters" in keys):
        return "detr"
    if keys & {"step", "iteration", "iter", "global_step", "epoch", "_step"}:
        return "generic"
    return None


def _file_conf(p: Path) -> float:
    if p.suffix.lower() not in (".json", ".jsonl", ".txt", ".log", ".ndjson"):
        return 0.0
    objs = _first_objects(p)
    d = dialect(objs)
    if d is None:
        return 0.0
    if len(objs) < 2 and p.suffix.lower() == ".json":
        # a single JSON document (a config, trainer_state.json) is not a log
        text = head(p, 65536)
        if text.count(b"\n{") == 0 and len(text) < 65536:
            return 0.0
    return 0.6 if d == "generic" else 0.9


def sniff(path: Path) -> float:
    if path.is_dir():
        return max((_file_conf(path / f) for f in _FILES if (path / f).is_file()), default=0.0)
    return _file_conf(path)


def load(path: Path):
    if path.is_dir():
        best = max(
            (f for f in _FILES if (path / f).is_file()),
            key=lambda f: _file_conf(path / f),
            default=None,
        )
        if best is None:
            raise InputError(f"{path}: no JSON-lines log ({', '.join(_FILES)}) in this folder")
        path = path / best
    check_text(path, "JSON-lines log")
    warnings: list[str] = []
    stats = {"bad": 0, "long": 0, "deep": 0, "last_bad": False, "where": {}}
    objs = _objects(path, stats)
    first = list(itertools.islice(objs, 50))
    if not first:
        _report(path, stats, warnings)
        raise InputError(f"{path}: no JSON object lines could be read (not a JSON-lines log)")
    b = _Builder(dialect(first) or "generic", first)
    for r in itertools.chain(first, objs):
        b.add(r)
    _report(path, stats, warnings)
    return b.finish(path, warnings)


def _objects(path: Path, stats: dict):
    """Yield the JSON objects of the file, one per line; count what is skipped in ``stats``.

    A line is skipped (never the whole file) when it is longer than :data:`MAX_LINE`
    (``long``), nested deeper than the JSON decoder's recursion limit (``deep``: 200,000
    ``[`` on one line, which ``json.loads`` refuses with RecursionError), not JSON or not an
    object (``bad``). ``stats["where"]`` keeps the first :data:`_WHERE` line numbers of each
    kind so the warning can name them.
    """
    loads = json.loads
    where = stats.setdefault("where", {})

    def note(kind: str, lineno: int) -> None:
        stats[kind] = stats.get(kind, 0) + 1
        seen = where.setdefault(kind, [])
        if len(seen) < _WHERE:
            seen.append(lineno)

    lineno = 0
    with open(path, "rb") as fh:
        readline = fh.readline
        while True:
            line = readline(MAX_LINE)
            if not line:
                break
            lineno += 1
            if len(line) >= MAX_LINE and not line.endswith(b"\n"):
                note("long", lineno)
                while True:  # skip the rest of the enormous line
                    rest = readline(MAX_LINE)
                    if not rest or rest.endswith(b"\n"):
                        break
                continue
            try:
                obj = loads(line)
            except RecursionError:
                note("deep", lineno)
                stats["last_bad"] = False
                continue
            except ValueError:
                if line.strip():
                    note("bad", lineno)
                    stats["last_bad"] = True
                continue
            stats["last_bad"] = False
            if type(obj) is dict:
                yield obj
            else:
                note("bad", lineno)


#: Line numbers named per kind of skipped line in a warning.
_WHERE = 5


def _lines(stats: dict, kind: str) -> str:
    seen = stats.get("where", {}).get(kind, [])
    if not seen:
        return ""
    more = ", ..." if stats.get(kind, 0) > len(seen) else ""
    return f" (line{'s' if len(seen) > 1 or more else ''} {', '.join(map(str, seen))}{more})"


def _report(path: Path, stats: dict, warnings: list[str]) -> None:
    if stats["long"]:
        warnings.append(
            f"{path.name}: {stats['long']} line(s) longer than {MAX_LINE >> 20} MiB were skipped"
            f"{_lines(stats, 'long')}"
        )
    if stats.get("deep"):
        warnings.append(
            f"{path.name}: {stats['deep']} line(s) nested too deeply to decode were skipped"
            f"{_lines(stats, 'deep')}"
        )
    if stats["bad"]:
        tail = (
            " (the last line is truncated: the file was cut while being written)"
            if stats["last_bad"]
            else ""
        )
        warnings.append(
            f"{path.name}: {stats['bad']} line(s) are not JSON objects and were skipped"
            f"{_lines(stats, 'bad')}{tail}"
        )


class _Builder:
    """Collects ``key -> (row numbers, values)`` in compact arrays while the lines stream by."""

    def __init__(self, kind: str, first: list[dict]) -> None:
        self.kind = kind
        self.params: dict[str, str] = {}
        self.axis, self.axis_why = "step", ""
        self.step_key = {
            "detectron2": "iteration",
            "llamafactory": "current_steps",
            "detr": "epoch",
        }.get(kind)
        keys = set().union(*(r.keys() for r in first))
        if kind == "generic":
            self.step_key = next(
                (
                    k
                    for k in ("step", "global_step", "iteration", "iter", "_step", "epoch")
                    if k in keys
                ),
                None,
            )
            if self.step_key == "epoch":
                self.axis, self.axis_why = "epoch", "the log has no step key"
        if kind == "detr":
            self.axis, self.axis_why = "epoch", "DETR-style log.txt holds one line per epoch"
        if kind == "mmdetection" and "step" in keys:
            self.step_key = "step"
        self.skip = {
            self.step_key,
            "mode",
            "env_info",
            "config",
            "exp_name",
            "eta",
            "eta_seconds",
            "time_stamp",
            "total_steps",
            "percentage",
        }
        self.rows = array("q")
        self.steps = array("d")
        self.mm = (array("d"), array("d"), array("b"))  # epoch, iter, is_train
        self.cols: dict[str, tuple[array, array]] = {}
        self.n = 0
        self.last_eta: tuple[Any, Any, Any] | None = None

    def add(self, r: dict) -> None:
        """One record: its step (:meth:`_add_step`), the dialect's run-level keys (LLaMA-Factory's
        total_steps, detectron2's ETA), and every numeric value as a column point (mmdetection's
        validation records under ``val/``; DETR's COCO AP and AP50 from its list)."""
        kind = self.kind
        i = self.n
        if not self._add_step(r):
            return
        self.n += 1
        if kind == "llamafactory" and "max_steps" not in self.params and "total_steps" in r:
            self.params["max_steps"] = str(r["total_steps"])
        if kind == "detectron2" and "eta_seconds" in r:
            self.last_eta = (r.get("iteration"), r.get("eta_seconds"), r.get("time"))
        val = kind == "mmdetection" and r.get("mode") == "val"
        cols = self.cols
        skip = self.skip
        for k, v in r.items():
            t = type(v)
            if t is float or t is int:
                if k in skip:
                    continue
                if val:
                    k = "val/" + k
                c = cols.get(k)
                if c is None:
                    c = cols[k] = (array("q"), array("d"))
                c[0].append(i)
                c[1].append(v)
            elif t is list and kind == "detr" and k.endswith("coco_eval_bbox") and len(v) >= 2:
                self._add_coco_ap(i, k, v)

    def _add_step(self, r: dict) -> bool:
        """The record's step: mmdetection's (epoch, iter, mode) kept to place it later (its
        ``env_info`` record gives the seed and is no row: False), the step key's value, else the
        line number."""
        if self.kind == "mmdetection" and self.step_key is None:
            if "env_info" in r:
                if "seed" in r:
                    self.params["seed"] = str(r["seed"])
                return False
            ep, it = _num(r.get("epoch")), _num(r.get("iter"))
            self.mm[0].append(ep if ep is not None else np.nan)
            self.mm[1].append(it if it is not None else np.nan)
            self.mm[2].append(r.get("mode") == "train")
            self.steps.append(np.nan)
        elif self.step_key is not None:
            s = r.get(self.step_key)
            self.steps.append(
                float(s) if isinstance(s, (int, float)) and not isinstance(s, bool) else np.nan
            )
        else:
            self.steps.append(float(self.n))
        return True

    def _add_coco_ap(self, i: int, k: str, v: list) -> None:
        """DETR's ``test_coco_eval_bbox`` list: its first two entries, AP and AP50, as columns."""
        for j, sub in ((0, "AP"), (1, "AP50")):
            if _num(v[j]) is not None:
                c = self.cols.setdefault(f"{k}/{sub}", (array("q"), array("d")))
                c[0].append(i)
                c[1].append(float(v[j]))

    def finish(self, path: Path, warnings: list[str]):
        n = self.n
        steps = np.frombuffer(self.steps, dtype=np.float64).copy() if n else np.zeros(0)
        if self.kind == "mmdetection" and self.step_key is None:
            ep = np.frombuffer(self.mm[0], dtype=np.float64)
            it = np.frombuffer(self.mm[1], dtype=np.float64)
            train = np.frombuffer(self.mm[2], dtype=np.int8).astype(bool)
            per = (
                float(np.nanmax(it[train])) if train.any() and np.isfinite(it[train]).any() else 0.0
            )
            if per:
                self.params["log.steps_per_epoch"] = f"{per:g}"
            steps = np.where(train, (ep - 1) * per + it, ep * per)
        if self.step_key is None and self.kind != "mmdetection":
            warnings.append(f"{path.name}: no step key in the lines; the line number is the step")
        notes = [f"JSON-lines dialect: {self.kind}"]
        if self.last_eta is not None:
            it, eta, per = self.last_eta
            if all(type(x) in (int, float) for x in (it, eta, per)) and per > 0 and eta >= 0:
                # detectron2's ETA is (max_iter - iteration - 1) x the median iteration time
                total = int(round(it + 1 + eta / per))
                self.params.setdefault("max_iter", str(total))
                notes.append(
                    f"max_iter {total} estimated from the last record (iteration {it}, eta_seconds "
                    f"{eta:.0f} at {per:.3g} s per iteration); detectron2 does not log max_iter"
                )
        if self.kind == "detr" and "n_parameters" in self.cols:
            self.params["n_parameters"] = f"{self.cols.pop('n_parameters')[1][0]:g}"
        arrays = {}
        for k, (idx, vals) in self.cols.items():
            v = np.full(n, np.nan)
            present = np.zeros(n, dtype=bool)
            ii = np.frombuffer(idx, dtype=np.int64)
            v[ii] = np.frombuffer(vals, dtype=np.float64)
            present[ii] = True
            arrays[k] = (v, present)
        return wide_run(
            path,
            arrays,
            steps,
            tracker=self.kind if self.kind != "generic" else "jsonlines",
            axis=self.axis,
            params=self.params,
            notes=notes,
            warnings=warnings,
            what="JSON-lines log",
            axis_why=self.axis_why,
            split=self.kind != "mmdetection",
        )


def _num(v):
    t = type(v)
    if t is float or t is int:
        return float(v)
    return None
