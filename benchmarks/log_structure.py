"""How much of what a person reads in a console log the reader recovers (issue 26).

For every hand-made key in ``benchmarks/log_structure_key/*.json`` (one console log each), the
log is read with :func:`mlaudit_core.formats.consolelog.load_logs` and its metric points are compared with the
key's ``(step, name, value)`` triples, which were written by reading the log (never from the
reader's output). Prints precision and recall per log, per framework and over all keys; then
**leave-one-framework-out**: for each framework, the same figures with the catalogue entries
that read its logs removed (``mlaudit_core/formats/consolelog/formats.py``).

Usage::

    python benchmarks/log_structure.py [--only FRAMEWORK,...] [--limit N] [--no-lofo] [--json OUT]
                                       [--code DIR]

``--code DIR`` measures the ``mlaudit_core`` found in DIR instead of this tree's (a ``git archive``
of another commit: the "before" figure of a change).

Matching rule (what counts as the same triple)
----------------------------------------------
- **Scope.** Both sides hold the figures of training and evaluation: losses, accuracies and other
  quality metrics, learning rate, gradient norm, loss scale, perplexity and the like. Timings,
  rates, memory and counters (``time``, ``eta``, ``it/s``, ``wps``, ``mem``, ``epoch``,
  ``num_updates`` ...) are out of scope on both sides (:func:`out_of_scope`): the key does not
  list them and a reader point with such a name is neither a hit nor a false positive.
- **Names.** A printed name and a reader name are the same when they normalise to the same
  ``section/base`` (:func:`normalise`): lower case, camelCase and separators split into tokens,
  a leading ``train``/``training`` -> ``train``, ``val``/``valid``/``validation``/``eval``/``dev``
  -> ``val``, and ``test`` -> ``val`` too (a held-out set either way; no section: ``train``), ``validation_0``-style numbered sets
  kept apart (``val0``; also ``val set 0``), a trailing ``step`` dropped (Lightning's ``train_loss_step`` is the
  per-step loss), and the synonyms of :data:`SYNONYMS` (``acc`` = ``accuracy``, ``learning_rate`` =
  ``lr``, ``Acc@1`` = ``top1``, ``gnorm`` = ``grad_norm`` ...). Where a log prints one name for
  two figures, or a name only the context explains, the key's ``names`` map gives the
  ``section/base`` a person would write (nanoGPT's eval-time ``train loss`` is
  ``train/loss_estimate`` beside the per-iteration ``train/loss``; NeMo's ``reduced_train_loss``
  is ``train/loss``).
- **Values.** Equal to 1e-6 relative, after one of the unit factors 1, 100, 1/100, 1000, 1/1000
  (a reader may turn ``98.2 %`` into 0.982 and ``30.1ms`` into 0.0301 s). NaN equals NaN.
- **Steps.** Within one series, key points are paired in order with reader points of equal
  value; then the step map ``reader_step = a * key_step + b`` that the most pairs agree with is
  chosen (``a`` from consecutive pairs, ``b`` from each pair) and only pairs on it are hits. A
  reader may so count optimizer steps where the log prints epochs, or number dicts 1, 2, 3 where
  the key has the bar position, as long as it keeps one consistent axis per series. A key step
  ``null`` (a message printed with no step, such as DeepSpeed's overflow lines before the first
  step line) is matched by value and order alone.
- A value repeated on consecutive points of one series is one figure, on either side: a progress
  bar redraws unchanged (stale) figures at new positions, Lightning's checkpoint message repeats the
  bar's ``val_loss``, and a metric stuck at 1.0 or NaN is read as one run of repeats (a reader that
  prints it once and one that prints it every round score alike; one that misses it still misses).
- Precision = hits / reader points in scope; recall = hits / key triples.

Leave-one-framework-out
-----------------------
The catalogue entries removed for a framework are those that fired on its keyed logs with the
whole catalogue (``ParseResult.formats``; the engine's generic fallback is not an entry). They
are removed through the reader's own switch when it has one (``disabled_formats``, see
:func:`_read`), else by filtering the parser module's compiled catalogue for the duration of the
read (the code allowed nothing else when this benchmark was written).

Figures are recorded in docs/logs.md ("How well the reader reads": before / after).
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import json
import math
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KEY_DIR = Path(__file__).resolve().parent / "log_structure_key"

#: ``test`` is the held-out section as ``val`` is: most loops evaluate a "test" set every epoch as
#: others do a validation set (PyTorch's MNIST example), and a person takes either as held-out.
SECTIONS = {
    "train": "train",
    "training": "train",
    "val": "val",
    "valid": "val",
    "validation": "val",
    "eval": "val",
    "evaluation": "val",
    "dev": "val",
    "test": "val",
}
#: base (tokens joined by ``_``) -> the base a person takes as the same figure
SYNONYMS = {
    "acc": "accuracy",
    "categorical_accuracy": "accuracy",
    "sparse_categorical_accuracy": "accuracy",
    "binary_accuracy": "accuracy",
    "learning_rate": "lr",
    "lr": "lr",
    "gnorm": "grad_norm",
    "grad": "grad_norm",
    "gradient_norm": "grad_norm",
    "grad_norm": "grad_norm",
    "acc@1": "top1",
    "acc1": "top1",
    "prec@1": "top1",
    "top1": "top1",
    "top_1": "top1",
    "acc@5": "top5",
    "acc5": "top5",
    "prec@5": "top5",
    "top5": "top5",
    "top_5": "top5",
    "perplexity": "ppl",
    "ppl": "ppl",
    "loss_scaler": "loss_scale",
    "scaler_scale": "loss_scale",
}
#: tokens that make a name a timing, rate, memory or counter figure (out of scope on both sides)
_OUT_TOKENS = frozenset(
    {
        "time",
        "timing",
        "runtime",
        "eta",
        "wall",
        "data",
        "mem",
        "memory",
        "memallocated",
        "maxmemallocated",
        "throughput",
        "wps",
        "ups",
        "wpb",
        "bsz",
        "mfu",
        "flos",
        "tflops",
        "samplespersec",
        "per",
        "gb",
        "mb",
        "free",
        "peak",
        "reserved",
        "alloc",
        "active",
        "consumed",
        "skipped",
        "size",
        "it",
        "s",
        "ms",
        "samples",
        "tokens",
        "rate",
        "iterations",
    }
)
_COUNTERS = frozenset(
    {
        "epoch",
        "epochs",
        "step",
        "steps",
        "iter",
        "iteration",
        "num_updates",
        "global_step",
        "update",
        "updates",
        "batch",
        "v_num",
        "n",
        "lr_changes",
        "overflow_skips",
        "optimizer",
        "global",
        "micro",
    }
)  # optimizer_step, global_step, micro_step
_FACTORS = (1.0, 100.0, 0.01, 1000.0, 0.001)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SPLIT = re.compile(r"[^a-z0-9@%]+")


def normalise(name: str) -> str:
    """``section/base`` of a printed or a reader metric name (see the module docstring)."""
    text = _CAMEL.sub("_", name.replace("'s ", " ")).lower()
    toks = [t for t in _SPLIT.split(text) if t]
    section = None
    while toks and (toks[0] in SECTIONS or toks[0] == "perf"):
        head = toks.pop(0)
        if head == "perf":
            section = "perf"
            continue
        sec = SECTIONS[head]
        if toks[:1] == ["set"] and toks[1:2] and toks[1].isdigit():  # "eval set 0"
            toks.pop(0)
        if toks and toks[0].isdigit():  # validation_0, validation_1: numbered evaluation sets
            sec = f"{sec}{toks.pop(0)}"
        section = sec if section in (None, "train") or sec != "train" else section
    if len(toks) > 1 and toks[-1] == "step":
        toks = toks[:-1]
    base = "_".join(toks)
    base = SYNONYMS.get(base, base)
    return f"{section or 'train'}/{base}"


def out_of_scope(norm: str) -> bool:
    """A timing, rate, memory or counter figure (not compared; see the module docstring)."""
    section, _, base = norm.partition("/")
    if section == "perf" or base in _COUNTERS or not base:
        return True
    return bool(set(base.split("_")) & _OUT_TOKENS)


def same_value(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    for f in _FACTORS:
        x = b * f
        if abs(a - x) <= 1e-6 * max(abs(a), abs(x)) or (a == 0.0 and x == 0.0):
            return True
    return False


# --- keys ------------------------------------------------------------------------------------------
@dataclass
class Key:
    """One hand-made key: the log, its framework and the triples a person reads in it."""

    path: Path
    log: Path
    framework: str
    triples: list[tuple[float, str, float]]
    names: dict[str, str] = field(default_factory=dict)
    source: str = ""

    @property
    def id(self) -> str:
        return self.path.stem

    def series(self) -> dict[str, list[tuple[float, float]]]:
        out: dict[str, list[tuple[float, float]]] = defaultdict(list)
        for step, name, value in self.triples:
            norm = self.names.get(name) or normalise(name)
            if not out_of_scope(norm):
                out[norm].append((math.nan if step is None else float(step), _float(value)))
        return {k: _dedup(v) for k, v in out.items()}


def _dedup(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Points sorted by step (stable; a key point with no step first), a value repeated on the
    point before it in the series dropped (see the module docstring: repeats are one figure)."""
    out: list[tuple[float, float]] = []
    for step, value in sorted(points, key=lambda p: -math.inf if math.isnan(p[0]) else p[0]):
        if out and (out[-1][1] == value or (math.isnan(out[-1][1]) and math.isnan(value))):
            continue
        out.append((step, value))
    return out


def _float(v) -> float:
    return float("nan") if v is None or (isinstance(v, str) and v.lower() == "nan") else float(v)


def load_keys(key_dir: Path = KEY_DIR, only: Iterable[str] = ()) -> list[Key]:
    """Every key file, sorted by name; ``only`` keeps the given frameworks."""
    want = set(only)
    keys = []
    for p in sorted(key_dir.glob("*.json")):
        d = json.loads(p.read_text())
        if want and d["framework"] not in want:
            continue
        keys.append(
            Key(
                path=p,
                log=(ROOT / d["log"]).resolve(),
                framework=d["framework"],
                triples=[(t[0], t[1], t[2]) for t in d["triples"]],
                names=d.get("names", {}),
                source=d.get("source", ""),
            )
        )
    return keys


# --- the reader -------------------------------------------------------------------------------------
@contextlib.contextmanager
def _catalogue_without(ids: set[str]) -> Iterator[None]:
    """The parser's compiled catalogue without the entries ``ids``, for the duration of the block."""
    from mlaudit_core.formats.consolelog import parser

    saved = {
        name: getattr(parser, name)
        for name in ("_COMPILED", "_PROGRESS", "_OTHERS", "_DISPATCH")
        if hasattr(parser, name)
    }
    try:
        if "_COMPILED" in saved:
            parser._COMPILED = [c for c in saved["_COMPILED"] if c.fmt.id not in ids]
        if "_PROGRESS" in saved:
            parser._PROGRESS = [c for c in saved["_PROGRESS"] if c.fmt.id not in ids]
        if "_OTHERS" in saved:
            parser._OTHERS = [c for c in saved["_OTHERS"] if c.fmt.id not in ids]
        if "_DISPATCH" in saved:
            parser._DISPATCH = [d for d in saved["_DISPATCH"] if d[5] not in ids]
        yield
    finally:
        for name, value in saved.items():
            setattr(parser, name, value)


def _read(log: Path, disabled: set[str]) -> tuple[dict[str, list[tuple[float, float]]], Counter]:
    """The reader's in-scope points of ``log`` by normalised name, and the catalogue entries that fired."""
    from mlaudit_core.formats.consolelog import load_logs

    kwargs = {}
    switch = "disabled_formats" in inspect.signature(load_logs).parameters
    if disabled and switch:
        kwargs["disabled_formats"] = frozenset(disabled)
    ctx = _catalogue_without(disabled) if disabled and not switch else contextlib.nullcontext()
    with ctx:
        run = load_logs([log], **kwargs)
    fired = Counter()
    for part in run.params.get("log.formats", "").split(", "):
        m = re.match(r"(?P<id>.+) \((?P<n>\d+)\)$", part)
        if m:
            fired[m["id"]] = int(m["n"])
    out: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for k in run.metrics.keys:
        norm = normalise(k)
        if out_of_scope(norm):
            continue
        s = run.metrics.series(k)
        out[norm].extend(
            zip(s.steps.astype(float).tolist(), s.values.astype(float).tolist(), strict=True)
        )
    return {k: _dedup(v) for k, v in out.items()}, fired


# --- matching ---------------------------------------------------------------------------------------
@dataclass
class Score:
    hits: int = 0
    key: int = 0
    read: int = 0

    def add(self, other: Score) -> None:
        self.hits += other.hits
        self.key += other.key
        self.read += other.read

    @property
    def precision(self) -> float:
        return self.hits / self.read if self.read else (1.0 if not self.key else 0.0)

    @property
    def recall(self) -> float:
        return self.hits / self.key if self.key else 1.0


def _pairs(key: list[tuple[float, float]], got: list[tuple[float, float]], window: int = 400):
    """Key points paired in order with reader points of the same value (greedy, order-preserving)."""
    pairs = []
    j = 0
    for ks, kv in key:
        for jj in range(j, min(len(got), j + window)):
            if same_value(got[jj][1], kv):
                pairs.append((ks, got[jj][0]))
                j = jj + 1
                break
    return pairs


def _on_map(pairs: list[tuple[float, float]]) -> int:
    """How many pairs lie on the step map ``r = a*k + b`` most of them agree with (a key point
    with no step, a message printed between two steps, is on any map)."""
    free = sum(1 for ks, _ in pairs if math.isnan(ks))
    pairs = [p for p in pairs if not math.isnan(p[0])]
    if len(pairs) <= 1:
        return len(pairs) + free
    cands = {(1.0, 0.0)}
    for ks, rs in pairs:
        cands.add((1.0, rs - ks))
    for (k1, r1), (k2, r2) in zip(pairs, pairs[1:], strict=False):
        if k2 != k1 and (r2 - r1) / (k2 - k1) > 0:
            a = (r2 - r1) / (k2 - k1)
            cands.add((round(a, 9), round(r1 - a * k1, 6)))
    best = 0
    for a, b in cands:
        n = sum(1 for ks, rs in pairs if abs(rs - (a * ks + b)) <= 1e-6 * max(1.0, abs(rs)))
        best = max(best, n)
    return best + free


def score(
    key: dict[str, list[tuple[float, float]]], got: dict[str, list[tuple[float, float]]]
) -> tuple[Score, dict]:
    """Hits, key triples and reader points of one log, and the per-series detail (for --verbose)."""
    total = Score()
    detail = {}
    for name in sorted(set(key) | set(got)):
        k, g = key.get(name, []), got.get(name, [])
        hits = _on_map(_pairs(k, g)) if k and g else 0
        total.add(Score(hits, len(k), len(g)))
        detail[name] = (hits, len(k), len(g))
    return total, detail


# --- the run ----------------------------------------------------------------------------------------
def evaluate(keys: list[Key], lofo: bool = True, verbose: bool = False, out=print) -> dict:
    """Score every key with the whole catalogue, then per framework without its entries; returns the figures."""
    per_log: dict[str, dict] = {}
    from mlaudit_core.formats.consolelog import CATALOG

    catalogue = {
        f.id for f in CATALOG
    }  # what fired that is not an entry (the generic readers) stays
    per_fw: dict[str, Score] = defaultdict(Score)
    fired_by_fw: dict[str, set[str]] = defaultdict(set)
    overall = Score()
    out(
        f"{'log':44s} {'framework':16s} {'key':>5s} {'read':>5s} {'hits':>5s} {'prec':>6s} {'recall':>6s}"
    )
    for key in keys:
        got, fired = _read(key.log, set())
        s, detail = score(key.series(), got)
        per_log[key.id] = {
            "framework": key.framework,
            "key": s.key,
            "read": s.read,
            "hits": s.hits,
            "precision": s.precision,
            "recall": s.recall,
            "formats": sorted(fired),
        }
        per_fw[key.framework].add(s)
        overall.add(s)
        fired_by_fw[key.framework] |= {f for f in fired if f in catalogue}
        out(
            f"{key.id:44s} {key.framework:16s} {s.key:5d} {s.read:5d} {s.hits:5d} {s.precision:6.3f} {s.recall:6.3f}"
        )
        if verbose:
            for name, (h, nk, ng) in detail.items():
                if h != nk or h != ng:
                    out(f"    {name:40s} hits {h:4d}  key {nk:4d}  read {ng:4d}")
    out("")
    out(
        f"{'framework':16s} {'logs':>4s} {'key':>6s} {'read':>6s} {'prec':>6s} {'recall':>6s}   "
        f"{'LOFO prec':>9s} {'LOFO recall':>11s}  entries removed"
    )
    per_fw_out = {}
    lofo_all = Score()
    for fw in sorted(per_fw):
        s = per_fw[fw]
        n = sum(1 for k in keys if k.framework == fw)
        row = {
            "logs": n,
            "key": s.key,
            "read": s.read,
            "hits": s.hits,
            "precision": s.precision,
            "recall": s.recall,
        }
        lofo_txt = ""
        if lofo:
            removed = fired_by_fw[fw]
            ls = Score()
            for key in keys:
                if key.framework != fw:
                    continue
                got, _ = _read(key.log, removed)
                ls.add(score(key.series(), got)[0])
            lofo_all.add(ls)
            row.update(
                {
                    "lofo_precision": ls.precision,
                    "lofo_recall": ls.recall,
                    "removed": sorted(removed),
                }
            )
            lofo_txt = f"{ls.precision:9.3f} {ls.recall:11.3f}  {', '.join(sorted(removed)) or '-'}"
        per_fw_out[fw] = row
        out(
            f"{fw:16s} {n:4d} {s.key:6d} {s.read:6d} {s.precision:6.3f} {s.recall:6.3f}   {lofo_txt}"
        )
    out("")
    out(
        f"all {len(keys)} logs, {len(per_fw)} frameworks: precision {overall.precision:.3f}, recall "
        f"{overall.recall:.3f} ({overall.hits} of {overall.key} key triples; {overall.read} points read)"
        "  [target: recall >= 0.9, precision >= 0.97]"
    )
    fw_recalls = [r["recall"] for r in per_fw_out.values()]
    out(
        f"frameworks at recall >= 0.9: {sum(r >= 0.9 for r in fw_recalls)} of {len(fw_recalls)}; "
        f"at precision >= 0.97: {sum(r['precision'] >= 0.97 for r in per_fw_out.values())} of {len(fw_recalls)}"
    )
    result = {
        "logs": per_log,
        "frameworks": per_fw_out,
        "overall": {
            "precision": overall.precision,
            "recall": overall.recall,
            "hits": overall.hits,
            "key": overall.key,
            "read": overall.read,
        },
    }
    if lofo:
        lofo_recalls = [r["lofo_recall"] for r in per_fw_out.values()]
        out(
            f"leave-one-framework-out: recall {lofo_all.recall:.3f}, precision {lofo_all.precision:.3f} over all "
            f"logs; frameworks at recall >= 0.8 with their entries removed: "
            f"{sum(r >= 0.8 for r in lofo_recalls)} of {len(lofo_recalls)}  [target: >= 0.8 each]"
        )
        result["lofo"] = {
            "precision": lofo_all.precision,
            "recall": lofo_all.recall,
            "at_target": sum(r >= 0.8 for r in lofo_recalls),
            "frameworks": len(lofo_recalls),
        }
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--only", default="", help="comma-separated frameworks to score (default: all keys)"
    )
    ap.add_argument("--limit", type=int, default=0, help="score the first N keys only (toy size)")
    ap.add_argument("--no-lofo", action="store_true", help="skip leave-one-framework-out")
    ap.add_argument(
        "--verbose", action="store_true", help="name each series with misses or extra points"
    )
    ap.add_argument("--keys", type=Path, default=KEY_DIR, help="folder of key files")
    ap.add_argument("--json", type=Path, help="also write the figures as JSON here")
    ap.add_argument(
        "--code", type=Path, help="import mlaudit_core from this folder (another commit's tree)"
    )
    args = ap.parse_args(argv)
    sys.path.insert(0, str((args.code or ROOT).resolve()))
    import mlaudit_core

    print(f"reader: {Path(mlaudit_core.__file__).parent}")
    keys = load_keys(args.keys, [f for f in args.only.split(",") if f])
    if args.limit:
        keys = keys[: args.limit]
    if not keys:
        print(f"no key in {args.keys}", file=sys.stderr)
        return 2
    missing = [str(k.log) for k in keys if not k.log.is_file()]
    if missing:
        print(f"log files of keys not found: {', '.join(missing)}", file=sys.stderr)
        return 2
    result = evaluate(keys, lofo=not args.no_lofo, verbose=args.verbose)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
