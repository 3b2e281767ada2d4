"""CSV tables for the CSV readers: pandas' C parser, then a per-column repair pass.

``pandas.read_csv`` (C engine) parses the file; numeric columns come back as float64
at once. Columns holding anything else (a ``nan`` or ``inf`` written by the framework,
a stray string) are converted with ``pandas.to_numeric(errors="coerce")``: ``nan``,
``inf`` and ``-inf`` become those values (a logged NaN is a point, an empty cell is
not), other strings are counted in a warning. Ultralytics pads its header and cells
with spaces: names are stripped; the C parser reads a padded number, padded text cells
are stripped. The file is parsed strictly first (``on_bad_lines="warn"`` and
``skipinitialspace`` cost about 30% on a clean 1 M-row file), and again skipping
malformed lines only when the strict parse fails. ``benchmarks/ingest.py`` compares the
speed with plain ``pandas.read_csv``.

Lines are capped at :data:`MAX_LINE` (1 MiB, the cap of the console reader): a cheap
first pass (1 MiB blocks, ``bytes.find``: about 3% of a 100 MB parse) looks for longer
lines; when there is one, the file is parsed through a filter that skips such lines
without holding them, and the report's warnings say how many were skipped. Without the
cap a 200 MB data line took 1.1 GB (pandas holds the line, then its Python string);
``benchmarks/ingest.py --only long`` measures both readers on one.

Without pandas (an optional extra, ``mlaudit[pandas]``), the standard library's ``csv``
module reads the same table (:func:`_read_rows`): blank lines skipped, short rows padded
with empty cells, rows with more cells than the header skipped and counted, every column
converted by the same pass as pandas' text columns (a logged ``nan`` is a point, ``inf`` a
value, an empty cell none). Verdicts on the corpora are the same with and without pandas
(``tests/test_no_pandas.py``); pandas' C parser is several times faster on million-row files.
"""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

import numpy as np

from ..errors import InputError
from ._common import check_text, head, head_lines
from ._text import encoding

#: The first line must end within this many bytes (a 200 MB single line is not a CSV log).
MAX_HEADER = 1 << 20
#: Longest data line read, in bytes (without its line end); longer lines are skipped and
#: counted in a warning. The console reader's cap (``consolelog.reader.MAX_LINE_BYTES``):
#: no framework writes a CSV row this long (a 200-column row of 20-digit floats is 4 KiB).
MAX_LINE = 1 << 20
_BLOCK = 1 << 20
BOM = "\ufeff"
STEP_NAMES = (
    "step",
    "global_step",
    "iteration",
    "iter",
    "it",
    "trainer/global_step",
    "_step",
    "current_steps",
    "steps",
)
EPOCH_NAMES = ("epoch", "epochs", "Epoch")


def delimiter(path: Path) -> str | None:
    """The field separator of a metrics table: ``,`` (CSV), a tab (TSV: ``step<TAB>loss``
    written by hand-rolled loops, also with a ``.log``/``.txt`` name), or runs of spaces
    (``epoch train_loss val_loss``) when the rows below the header are numbers in as many
    columns. None when the first line is no table header (binary, over 64 KiB, prose)."""
    lines = head_lines(path, 65536)
    if len(lines) < 2 and len(head(path, 65536)) == 65536:
        return None  # no line end in the first 64 KiB
    text = lines[0].lstrip("\ufeff") if lines else ""
    if not text:
        return None
    if text.lstrip().startswith(("{", "[", "<")):
        return None
    if text.count(",") >= 1:
        return ","
    if text.count("\t") >= 1:
        return "\t"
    names = text.split()
    if (
        len(names) >= 2
        and all(n[:1].isalpha() or n[:1] == "_" for n in names)
        and _numeric_head(path, len(names), sep=None)
    ):
        return " "
    return None


def header(path: Path) -> list[str] | None:
    """The stripped column names of a metrics table's first line (comma, tab or space
    separated: :func:`delimiter`), or None when the first line is not a plausible header."""
    sep = delimiter(path)
    if sep is None:
        return None
    text = head_lines(path, 65536)[0].lstrip("\ufeff")
    if sep == " ":
        return text.split()
    try:
        names = next(csv.reader(io.StringIO(text), delimiter=sep))
    except (csv.Error, StopIteration):
        return None
    return [n.strip() for n in names]


def looks_numeric_header(names: list[str]) -> bool:
    """True when the "header" is itself a row of numbers (a CSV without a header)."""

    def num(x: str) -> bool:
        try:
            float(x)
            return True
        except ValueError:
            return False

    return bool(names) and all(num(n) for n in names if n)


def read(
    path: Path, what: str = "CSV log"
) -> tuple[dict[str, tuple[np.ndarray, np.ndarray]], list[str]]:
    """Every column of a CSV file as ``name -> (float64 values, present mask)``.

    Raises:
        InputError: empty, binary, a pointer file, a first line over 1 MiB, no header,
            or not parseable as CSV (one line, naming the file). A header without rows gives
            empty columns and a warning.
    """
    from .._optional import pandas

    pd = pandas()
    check_text(path, what)
    first = head(path, MAX_HEADER + 1)
    if b"\n" not in first and len(first) > MAX_HEADER:
        raise InputError(
            f"{path}: the first line is longer than {MAX_HEADER >> 20} MiB; not a {what}"
        )
    warnings: list[str] = []
    names = header(path)
    if names is None or looks_numeric_header(names):
        raise InputError(f"{path}: no CSV header line (comma-separated column names) at the top")

    sep = delimiter(path) or ","
    enc = encoding(head(path, 64))[0]  # UTF-8, or UTF-16 (a PowerShell export)
    kw = dict(
        engine="c",
        keep_default_na=False,
        na_values=[""],
        index_col=False,  # a separator ending every data row is not an index column
        encoding=enc,
        encoding_errors="replace",
        sep=r"\s+" if sep == " " else sep,
    )
    n_long, longest, last_long = long_lines(path)
    if n_long:
        warnings.append(
            f"{path.name}: {n_long} line(s) longer than {MAX_LINE >> 20} MiB (the longest "
            f"{longest / (1 << 20):.3g} MiB) were skipped; no CSV log writes rows that long"
        )

    def source():
        return io.BufferedReader(_ShortLines(path, MAX_LINE)) if n_long else path

    if pd is None:
        return _read_rows(path, source, sep, what, warnings, check_tail=not last_long, enc=enc)
    df = None
    if _numeric_head(path, len(names), sep=sep):
        # every column parsed as float64 lands in one pandas block, which the metric table can
        # use without copying (_float_columns); any cell that is not a number fails this parse
        try:
            df = pd.read_csv(source(), on_bad_lines="error", dtype=np.float64, **kw)
        except (ValueError, pd.errors.ParserError):
            df = None  # text cells, a ragged line, no rows: the general parse below says what
    try:
        if df is None:
            df = _parse_general(pd, source, kw, path, warnings)
    except pd.errors.EmptyDataError:
        raise InputError(f"{path}: empty {what}") from None
    except (pd.errors.ParserError, ValueError, UnicodeError, MemoryError) as exc:
        raise InputError(
            f"{path}: not a readable {what} ({str(exc).splitlines()[0][:160]})"
        ) from None
    tail = None if last_long else head_tail_problem(path)
    if tail and len(df):
        df = df.iloc[:-1]  # a row cut mid-value would be read as a wrong number
        warnings.append(tail)
    if len(df) == 0:
        return _header_only(path, [str(c) for c in df.columns], warnings)
    df.columns = [str(c).strip() for c in df.columns]
    cols: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    bad_cells: dict[str, int] = {}
    floats = _float_columns(df)
    for name in df.columns:
        if not name or name.startswith("Unnamed:"):
            continue
        if name in floats:
            v = floats[name]
            cols[name] = (v, ~np.isnan(v))
            continue
        s = df[name]
        if s.dtype.kind in "fiub":
            v = s.to_numpy(dtype=np.float64, na_value=np.nan)
            cols[name] = (v, ~np.isnan(v))
            continue
        text = s.astype("string").str.strip()
        present = text.notna().to_numpy() & (text.fillna("") != "").to_numpy()
        v = pd.to_numeric(text, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
        low = text.str.lower()
        logged_nan = low.isin(["nan", "-nan", "+nan"]).fillna(False).to_numpy(dtype=bool)
        _keep_column(cols, bad_cells, name, v, present, logged_nan)
    _warn_bad_cells(path, bad_cells, warnings)
    return cols, warnings


def _keep_column(
    cols: dict,
    bad_cells: dict[str, int],
    name: str,
    v: np.ndarray,
    present: np.ndarray,
    logged_nan: np.ndarray,
) -> None:
    """Add a text-typed column to ``cols`` as ``(values, mask)``: a number or a logged NaN is a
    point, an empty cell none; other cells are counted in ``bad_cells``, and a column with no
    number at all (a checkpoint path, a timestamp string) is no metric and left out."""
    ok = ~np.isnan(v) | logged_nan
    n_bad = int((present & ~ok).sum())
    if n_bad and n_bad == int(present.sum()):
        return
    if n_bad:
        bad_cells[name] = n_bad
    cols[name] = (v, present & ok)


def _warn_bad_cells(path: Path, bad_cells: dict[str, int], warnings: list[str]) -> None:
    if bad_cells:
        listed = ", ".join(f"{k} ({n})" for k, n in list(bad_cells.items())[:5])
        warnings.append(f"{path.name}: cells that are not numbers were left out: {listed}")


_LOGGED_NAN = frozenset(("nan", "-nan", "+nan"))


def _number(text: str) -> float:
    """``text`` as pandas' C parser reads it: ``float`` also takes ``1_000`` and non-ASCII
    digits, which pandas leaves as text."""
    if "_" in text or not text.isascii():
        return math.nan
    try:
        return float(text)
    except ValueError:
        return math.nan


def _read_rows(
    path: Path,
    source,
    sep: str,
    what: str,
    warnings: list[str],
    *,
    check_tail: bool = True,
    enc: str = "utf-8",
):
    """The table of :func:`read` with the standard library's ``csv`` module (no pandas): the
    same columns, values, masks and warnings as the pandas path (module docstring). Each cell
    is converted as its row is read, into one float array and two flag arrays per column
    (10 bytes a cell: holding the rows' strings took 950 MB for an 88 MB, 1 M-row file).
    Raises InputError as :func:`read` does."""
    from array import array

    src = source()
    raw = open(src, "rb") if isinstance(src, Path) else src  # noqa: SIM115 - closed below
    names: list[str] | None = None
    vals: list[array] = []
    present: list[bytearray] = []
    ok: list[bytearray] = []
    n = skipped = 0
    try:
        fh = io.TextIOWrapper(raw, encoding=enc, errors="replace", newline="")
        records = (line.split() for line in fh) if sep == " " else csv.reader(fh, delimiter=sep)
        try:
            for rec in records:
                if not rec:
                    continue  # a blank line
                if names is None:
                    names = rec
                    vals = [array("d") for _ in names]
                    present = [bytearray() for _ in names]
                    ok = [bytearray() for _ in names]
                    continue
                k = len(names)
                if len(rec) > k:
                    if any(rec[k:]):
                        skipped += 1
                        continue
                    rec = rec[:k]  # empty cells after a trailing separator
                for j in range(k):
                    t = rec[j].strip() if j < len(rec) else ""
                    if t:
                        x = _number(t)
                        vals[j].append(x)
                        present[j].append(1)
                        ok[j].append(x == x or t.lower() in _LOGGED_NAN)
                    else:
                        vals[j].append(math.nan)
                        present[j].append(0)
                        ok[j].append(0)
                n += 1
        except csv.Error as exc:
            raise InputError(
                f"{path}: not a readable {what} ({str(exc).splitlines()[0][:160]})"
            ) from None
    finally:
        raw.close()
    if names is None:
        raise InputError(f"{path}: empty {what}")
    if skipped:
        warnings.append(
            f"{path.name}: {skipped} malformed line(s) (a different number of fields) were skipped"
        )
    tail = head_tail_problem(path) if check_tail else None
    if tail and n:
        for col in (*vals, *present, *ok):
            col.pop()  # a row cut mid-value would be read as a wrong number
        n -= 1
        warnings.append(tail)
    if not n:
        return _header_only(path, names, warnings)
    names[0] = names[0].lstrip(BOM)
    cols = _columns(path, names, vals, present, ok, warnings)
    return cols, warnings


def _header_only(path: Path, names: list[str], warnings: list[str]):
    """The columns of a table holding its header and no row (every column empty), and a warning:
    the logger created the file and no row came (the run stopped before its first logged epoch,
    or the file was copied before)."""
    names = [n.strip().lstrip(BOM) for n in names]
    warnings.append(
        f"{path.name}: header only ({', '.join(names)}), no row of values: nothing was logged yet"
    )
    empty = np.zeros(0)
    return {n: (empty, np.zeros(0, dtype=bool)) for n in names if n}, warnings


def _columns(path: Path, names: list[str], vals, present, ok, warnings: list[str]):
    """``{name: (values, mask)}`` from the cells read per column (``vals`` floats, ``present``
    and ``ok`` flags): repeated names numbered as pandas does (a, a.1, a.2), unnamed columns and
    text columns (no cell a number) left out, a column's unreadable cells masked and counted in
    ``warnings``."""
    seen: dict[str, int] = {}
    cols: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    bad_cells: dict[str, int] = {}
    for j, raw_name in enumerate(names):
        name = raw_name
        if raw_name in seen:  # pandas' names for repeated columns: a, a.1, a.2
            seen[raw_name] += 1
            name = f"{raw_name}.{seen[raw_name]}"
        else:
            seen[raw_name] = 0
        name = name.strip()
        if not name:
            continue  # pandas names it "Unnamed: <j>": no metric
        v = np.frombuffer(vals[j], dtype=np.float64)
        has = np.frombuffer(present[j], dtype=np.uint8).view(bool)
        good = np.frombuffer(ok[j], dtype=np.uint8).view(bool)
        n_bad = int((has & ~good).sum())
        if n_bad and n_bad == int(has.sum()):
            continue  # a text column (a checkpoint path, a timestamp string): not a metric
        if n_bad:
            bad_cells[name] = n_bad
        cols[name] = (v, has & good)
    _warn_bad_cells(path, bad_cells, warnings)
    return cols


def _parse_general(pd, source, kw: dict, path: Path, warnings: list[str]):
    """``pandas.read_csv`` with per-column dtypes: strict first (``on_bad_lines="warn"`` costs
    ~30% on a clean 1 M-row file), then skipping malformed lines, counted in ``warnings``."""
    import warnings as _w

    try:
        return pd.read_csv(source(), on_bad_lines="error", **kw)
    except pd.errors.ParserError:
        with _w.catch_warnings(record=True) as caught:
            _w.simplefilter("always")
            df = pd.read_csv(source(), on_bad_lines="warn", **kw)
        bad = sum(
            str(c.message).count("Skipping line") or 1
            for c in caught
            if issubclass(c.category, pd.errors.ParserWarning)
        )
        warnings.append(
            f"{path.name}: {bad} malformed line(s) (a different number of fields) were skipped"
        )
        return df


def _numeric_head(path: Path, n_cols: int, rows: int = 50, sep: str | None = ",") -> bool:
    """Whether the first rows after the header are all numbers or empty cells, with ``n_cols``
    cells each (then the all-float64 parse is tried first). ``sep`` None or ``" "``: runs of
    white space separate the cells."""
    lines = head_lines(path, 65536)[1 : rows + 1]
    if len(head(path, 65536)) == 65536:
        lines = lines[:-1]  # the last one may be cut by the read
    seen = 0
    for line in lines:
        if not line.strip():
            continue
        cells = line.split() if sep in (None, " ") else line.split(sep)
        if len(cells) != n_cols:
            return False
        for c in cells:
            c = c.strip()
            if c:
                try:
                    if not math.isfinite(float(c)):
                        return False  # a logged nan/inf: the general parse keeps it as a point
                except ValueError:
                    return False
        seen += 1
    return seen > 0


def _float_columns(df) -> dict[str, np.ndarray]:
    """The float64 columns of ``df`` as back-to-back slices of one buffer, without a copy.

    pandas keeps same-dtype columns in one block (columns x rows, C order): its transpose
    is every column one after the other, so :func:`._common.concat` can hand the metric
    table a view instead of copying each column twice (``to_numpy(na_value=...)`` copies,
    ``np.concatenate`` copies again). On this 2-core VM a first write to fresh memory costs
    ~9 ms per MB (page faults): the two copies of a 1 M-row, 9-column CSV cost ~1.2 s of a
    ~4.5 s load (benchmarks/ingest.py). Columns with repeated names are left to the caller.
    """
    names = [
        n for n in df.columns if n and not n.startswith("Unnamed:") and df[n].dtype == np.float64
    ]
    if not names or len(set(names)) != len(names) or len(set(df.columns)) != len(df.columns):
        return {}
    block = df[names].to_numpy(
        dtype=np.float64
    )  # (rows, columns); a view when pandas holds one block
    flat = block.T
    if not flat.flags.c_contiguous:
        flat = np.ascontiguousarray(flat)
    flat = flat.reshape(-1)
    n = len(df)
    return {name: flat[i * n : (i + 1) * n] for i, name in enumerate(names)}


def long_lines(path: Path, limit: int = MAX_LINE) -> tuple[int, int, bool]:
    """Lines of ``path`` longer than ``limit`` bytes: ``(count, longest, the last line is one)``.

    Reads 1 MiB blocks and looks only at the first and last line end of each: a line
    that lies inside one block is shorter than the block, so only lines that span block
    boundaries are measured (``limit`` must be at least the block size). Memory: one block.
    """
    n = longest = run = 0
    try:
        with open(path, "rb") as fh:
            read = fh.read
            while True:
                block = read(_BLOCK)
                if not block:
                    break
                first = block.find(b"\n")
                if first < 0:
                    run += len(block)
                    continue
                run += first
                if run > limit:
                    n += 1
                    longest = max(longest, run)
                run = len(block) - block.rfind(b"\n") - 1
    except OSError:
        return 0, 0, False
    if run > limit:
        return n + 1, max(longest, run), True
    return n, longest, False


class _ShortLines(io.RawIOBase):
    """``path`` as a binary stream without its lines longer than ``limit`` bytes.

    A long line is read past in ``limit``-sized pieces, never held whole; pandas' C
    parser reads the stream as it would the file (used only when :func:`long_lines`
    found such a line: the per-line loop costs about 2x on a clean file).
    """

    def __init__(self, path: Path, limit: int) -> None:
        self._fh = open(path, "rb")  # noqa: SIM115 - closed by close()
        self._limit = limit
        self._buf = b""

    def readable(self) -> bool:
        return True

    def _more(self, want: int) -> None:
        readline, limit = self._fh.readline, self._limit
        parts, size = [], 0
        while size < want:
            line = readline(limit + 1)
            if not line:
                break
            if len(line) > limit and not line.endswith(b"\n"):
                while True:  # skip the rest of the long line
                    rest = readline(limit)
                    if not rest or rest.endswith(b"\n"):
                        break
                continue
            parts.append(line)
            size += len(line)
        self._buf += b"".join(parts)

    def readinto(self, b) -> int:
        if len(self._buf) < len(b):
            self._more(max(len(b), 1 << 16))
        n = min(len(b), len(self._buf))
        b[:n] = self._buf[:n]
        self._buf = self._buf[n:]
        return n

    def close(self) -> None:
        self._fh.close()
        super().close()


def head_tail_problem(path: Path) -> str | None:
    """A warning when the file does not end with a newline (the last row may be cut short)."""
    try:
        with open(path, "rb") as fh:
            enc = encoding(fh.read(64))[0]
            width = 2 if enc.startswith("utf-16") else 4 if enc.startswith("utf-32") else 1
            fh.seek(-width, 2)
            last = fh.read(width).decode(enc, "replace")
    except OSError:
        return None
    if last not in ("\n", "\r"):
        return (
            f"{path.name}: the last line is truncated (no line end: the file was cut while being "
            "written); that row was left out"
        )
    return None


def pick(cols: dict, names: tuple[str, ...]) -> str | None:
    low = {k.lower(): k for k in cols}
    for n in names:
        if n.lower() in low:
            return low[n.lower()]
    return None
