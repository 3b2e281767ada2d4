"""Golden-value and actual-value files: JSON (Megatron-LM and plain shapes) and CSV.

JSON shapes read (``"nan"`` strings and ``null`` become NaN):

* Megatron-LM ``{"lm loss": {"start_step": 1, "end_step": 50, "step_interval": 5,
  "values": {"1": 10.8, "5": 10.6}}}`` (``values`` may also be a list, then placed at
  ``start_step`` + i x ``step_interval``);
* ``{"loss": [2.3, 2.1, ...]}`` (steps 1..n), ``{"loss": 2.1}`` (one value at step 1),
  optionally nested under ``"metrics"``.

CSV: a ``step``/``iteration``/``iter``/``epoch``/``global_step`` column (else rows
are steps 1..n) and one column per metric. A column whose name carries a side
marker is split into metric and side: ``lm_loss_golden_before`` is the golden
``lm_loss``; ``lm_loss_after_26.04`` is the actual ``lm_loss`` labelled
``after_26.04``. Golden markers: golden, expected, reference, ref, baseline,
before, old; actual markers: actual, new, after, observed, current, candidate,
measured. Unmarked columns take the side of the option the file came with
(``--golden`` -> golden, ``--logs`` -> actual).
"""

from __future__ import annotations

import csv
import json
import math
import re
from pathlib import Path

from ..errors import InputError
from .model import ValueSet

#: Largest value file read (bytes); a golden/metrics file of a CI test is kilobytes to megabytes.
MAX_VALUE_BYTES = 64 * 2**20
#: Deepest JSON nesting read. Golden shapes nest 3 levels (metric -> values -> step); Python's
#: own parser raises RecursionError near 1,000, which would end the audit with exit 3.
MAX_JSON_DEPTH = 64
#: top-level keys of a golden file that hold the test's tolerances, not metric values
TOLERANCE_KEYS = {"rtol", "atol", "rel", "abs", "tol", "tolerance", "rel_tol", "abs_tol"}


#: ``loss_tol``, ``val_rtol``, ``accuracy_threshold``: a tolerance setting, not a metric value
_TOL_KEY = re.compile(r"(^|_)(rtol|atol|tol|tolerance|rel_tol|abs_tol|threshold|margin)$", re.I)


class TooDeep(InputError):
    """A JSON document nested deeper than :data:`MAX_JSON_DEPTH` (skipped: too deep)."""


class TooBig(InputError):
    """A value file larger than :data:`MAX_VALUE_BYTES` (skipped: too big)."""


_JSON_STR = re.compile(r'"(?:[^"\\]|\\.)*"')


def json_depth_exceeds(text: str, limit: int = MAX_JSON_DEPTH) -> bool:
    """True when the brackets of ``text`` nest deeper than ``limit`` (strings skipped; no recursion).

    Vectorised: strings are removed with one regex, then the running depth is a cumulative sum
    over the remaining bracket characters (a character loop took 1.1 s on a 2 MB golden file).
    """
    import numpy as np

    if text.count("[") + text.count("{") <= limit:
        return False
    b = np.frombuffer(_JSON_STR.sub("", text).encode("utf-8", "replace"), dtype=np.uint8)
    step = np.zeros(b.shape, dtype=np.int32)
    step[(b == ord("[")) | (b == ord("{"))] = 1
    step[(b == ord("]")) | (b == ord("}"))] = -1
    return bool(step.size) and int(np.cumsum(step).max()) > limit


def read_json_capped(path: Path, source: str):
    """``json.loads`` of a file after the size and depth checks.

    Raises:
        TooBig, TooDeep: the file is over :data:`MAX_VALUE_BYTES` / nested over
            :data:`MAX_JSON_DEPTH` (message ``"<source>: skipped: too deep (...)"``).
        InputError: not valid JSON / not UTF-8 / unreadable.
    """
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise InputError(f"{source}: cannot be read ({exc.strerror or exc})") from None
    if size > MAX_VALUE_BYTES:
        raise TooBig(f"{source}: skipped: too big ({size:,} bytes > {MAX_VALUE_BYTES:,})")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{source}: not valid JSON: {exc}") from None
    except OSError as exc:
        raise InputError(f"{source}: cannot be read ({exc.strerror or exc})") from None
    if json_depth_exceeds(text):
        raise TooDeep(f"{source}: skipped: too deep (JSON nested over {MAX_JSON_DEPTH} levels)")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{source}: not valid JSON: {exc}") from None
    except RecursionError:
        raise TooDeep(f"{source}: skipped: too deep") from None


_GOLDEN = {"golden", "expected", "reference", "ref", "baseline", "before", "old"}
_ACTUAL = {"actual", "new", "after", "observed", "current", "candidate", "measured"}
#: column markers of the old code rerun beside the new one (``loss_main``, ``loss_previous``)
_REFERENCE = {"main", "master", "base", "previous", "prev", "parent", "rerun", "reverted", "revert"}
_STEP_COLS = ("step", "steps", "iteration", "iter", "epoch", "global_step", "it")


def _f(v) -> float:
    if v is None:
        return math.nan
    if isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            return math.nan
    return float(v)


def _from_json(data, source: str, side: str) -> list[ValueSet]:
    if isinstance(data, dict) and isinstance(data.get("metrics"), dict):
        data = data["metrics"]
    if not isinstance(data, dict):
        raise InputError(f"{source}: expected a JSON object of metric -> values")
    vs = ValueSet(source, side, "")
    for name, v in data.items():
        if str(name).lower() in TOLERANCE_KEYS or _TOL_KEY.search(str(name)):
            continue
        if isinstance(v, dict) and "values" in v:
            vals = v["values"]
            if isinstance(vals, dict):
                pairs = sorted((int(k), _f(x)) for k, x in vals.items())
                vs.metrics[name] = ([p[0] for p in pairs], [p[1] for p in pairs])
            elif isinstance(vals, list):
                start, every = int(v.get("start_step", 1)), int(v.get("step_interval", 1)) or 1
                vs.metrics[name] = (
                    [start + i * every for i in range(len(vals))],
                    [_f(x) for x in vals],
                )
        elif isinstance(v, list) and all(isinstance(x, (int, float, str)) or x is None for x in v):
            vs.metrics[name] = (list(range(1, len(v) + 1)), [_f(x) for x in v])
            vs.indexed.append(name)
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            vs.metrics[name] = ([1], [float(v)])
    if not vs.metrics:
        raise InputError(
            f"{source}: no metric values found (expected metric -> list of values, or the "
            "Megatron-LM golden-values shape)"
        )
    return [vs]


def _split_column(col: str) -> tuple[str, str | None, str]:
    """(metric, side or None, label) of a CSV column name."""
    toks = re.split(r"[_\s]+", col.strip())
    for i, t in enumerate(toks):
        low = t.lower()
        if i > 0 and (low in _GOLDEN or low in _ACTUAL or low in _REFERENCE):
            side = "golden" if low in _GOLDEN else "actual" if low in _ACTUAL else "reference"
            return "_".join(toks[:i]), side, "_".join(toks[i:])
    return col.strip(), None, ""


def _csv_number(text: str) -> float:
    """A CSV cell as a float; NaN for an empty cell or text (``pandas.to_numeric(errors="coerce")``)."""
    try:
        return float(text)
    except ValueError:
        return math.nan


def _csv_columns(path: Path, source: str) -> dict[str, list[float]]:
    """A golden/metrics CSV as column name -> float values (the standard library's reader, no
    pandas): blank lines skipped, short rows padded, a row longer than the header refused.

    Raises:
        InputError: empty, undecodable, or a row with more cells than the header.
    """
    try:
        with open(path, encoding="utf-8", newline="") as fh:
            rows = [r for r in csv.reader(fh) if r]
    except (csv.Error, UnicodeDecodeError) as exc:
        raise InputError(f"{source}: not a readable CSV: {exc}") from None
    if not rows:
        raise InputError(f"{source}: not a readable CSV: no columns to parse from the file")
    names, body = rows[0], rows[1:]
    for i, r in enumerate(body):
        if len(r) > len(names):
            raise InputError(
                f"{source}: not a readable CSV: expected {len(names)} fields in data row {i + 1}, "
                f"saw {len(r)}"
            )
    return {
        name: [_csv_number(r[j].strip()) if j < len(r) else math.nan for r in body]
        for j, name in enumerate(names)
    }


def _from_csv(path: Path, source: str, side: str) -> list[ValueSet]:
    table = _csv_columns(path, source)
    cols = {c.lower().strip(): c for c in table}
    step_col = next((cols[c] for c in _STEP_COLS if c in cols), None)
    n = len(next(iter(table.values()), []))
    steps = (
        [int(x) if math.isfinite(x) else -1 for x in table[step_col]]
        if step_col
        else list(range(1, n + 1))
    )
    sets: dict[tuple[str, str], ValueSet] = {}
    for c, vals in table.items():
        if c == step_col:
            continue
        metric, s, label = _split_column(str(c))
        s = s or side
        if all(math.isnan(x) for x in vals):
            continue
        key = (s, label)
        vs = sets.setdefault(key, ValueSet(source, s, label))
        vs.metrics[metric] = (list(steps), vals)
    if not sets:
        raise InputError(f"{source}: no numeric metric columns")
    # golden, new and "old" columns side by side: "old" / "before" is then the old code's rerun
    # (the golden values have their own column), not a second golden set
    explicit = any(
        s_ == "golden" and lab.split("_")[0].lower() in _GOLDEN - {"old", "before"}
        for s_, lab in sets
    )
    if explicit:
        for (s_, lab), vs in sets.items():
            if s_ == "golden" and lab.split("_")[0].lower() in ("old", "before"):
                vs.role = "reference"
    return list(sets.values())


def load_values(path: Path, side: str, display: str | None = None) -> list[ValueSet]:
    """Value sets in one golden/actual file (a CSV with both sides gives two sets).

    Args:
        path: a ``.json`` or ``.csv`` file.
        side: ``"golden"`` or ``"actual"``: the side of unmarked metrics.
        display: the name used in evidence (default: the path as given).

    Raises:
        InputError: the file is missing, unreadable, or holds no metric values.
    """
    source = display or str(path)
    if not path.is_file():
        raise InputError(f"{source}: file not found")
    suffix = path.suffix.lower()
    if suffix in (".csv", ".tsv"):
        if path.stat().st_size > MAX_VALUE_BYTES:
            raise TooBig(f"{source}: skipped: too big ({path.stat().st_size:,} bytes)")
        return _from_csv(path, source, side)
    if suffix in (".npy", ".npz"):
        return _from_numpy(path, source, side)
    return _from_json(read_json_capped(path, source), source, side)


def _from_numpy(path: Path, source: str, side: str) -> list[ValueSet]:
    """A ``.npy`` array (one metric named after the file) or ``.npz`` archive (one per array).

    Read with ``allow_pickle=False``: object arrays are refused, never unpickled.
    """
    import numpy as np

    if path.stat().st_size > MAX_VALUE_BYTES:
        raise TooBig(f"{source}: skipped: too big ({path.stat().st_size:,} bytes)")
    try:
        obj = np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise InputError(f"{source}: not a readable numpy file: {exc}") from None
    from .gates import _AFFIX

    stem = path.stem
    for _ in range(2):  # golden_loss.npy holds the golden "loss"
        stem = _AFFIX.sub("", stem) or stem
    arrays = {stem: obj} if isinstance(obj, np.ndarray) else {k: obj[k] for k in obj.files}
    vs = ValueSet(source, side, "")
    for name, a in arrays.items():
        a = np.asarray(a)
        if a.dtype.kind not in "fiu" or a.ndim > 1:
            continue
        vals = [float(x) for x in a.reshape(-1)]
        vs.metrics[name] = (list(range(1, len(vals) + 1)), vals)
        vs.indexed.append(name)
    if not vs.metrics:
        raise InputError(f"{source}: no 1-D numeric arrays")
    return [vs]
